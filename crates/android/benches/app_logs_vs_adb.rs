//! A warm `app_logs` call against a bare `adb -s <serial> shell 'logcat -d …'` of the same data,
//! side by side in one run, through a private real adb server and the simulated phone, twice:
//! a phone holding 2 MiB of the app's lines, and a phone whose logcat ignores `--uid` holding
//! the same plus 2 MiB of other apps' lines (so both commands carry 4 MiB and the driver drops
//! half). The call asks for the newest 200 lines, the MCP tool's default, and what it read is
//! laid out as a `phone_logs` result (`phonelogs_gateway::present_lines`: secrets masked,
//! repeats folded, process markers, the one cut); a line in 20 holds a JWT and one in 10
//! repeats the line before, so masking and folding have work to do. Prints the medians, the
//! ratio, and how many adb round trips the first and a repeated call make.
//!
//! Every round checks that the warm call repeats what the first one returned (its lines, the
//! count of older ones, the phone's boot id and oldest line), not values that move with the
//! clock (the phone's time in its mark).
//!
//! Run: `cargo bench -p phonelogs-android --bench app_logs_vs_adb` (needs `/usr/bin/adb`).
//! `cargo test -p phonelogs-android --benches` runs one round and judges no figure (CI).

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use phonelogs_adbsim::{Buffer, SimPhone, Simulator};
use phonelogs_android::{AdbConfig, AdbPhone};
use phonelogs_driver::{AppId, AppLogger, DeviceId, LogLine, LogQuery, LogResult};

const ROUNDS: usize = 15;
const DUMP_BYTES: usize = 2 * 1024 * 1024;
/// The lines a call asks for: the MCP tool's default `limit`.
const COUNT: usize = 200;
const APP: &str = "dev.phonelogs.crashtest";
/// A JWT made for this bench, not a real token.
const JWT: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk";

/// Line `index` of the app: one in 10 repeats the line before, one in 20 holds a JWT.
fn app_line(index: i128) -> String {
    let index = if index % 10 == 1 { index - 1 } else { index };
    if index % 20 == 0 {
        format!("session {:08} refreshed, id_token {JWT}", index / 20)
    } else {
        format!(
            "fill line {index:08}: the quick brown fox jumps over the lazy dog while logcat keeps up"
        )
    }
}
const OTHER_APP: &str = "com.spotify.music";

/// What a warm call must repeat: the lines, how many older ones were left out, and the phone's
/// facts that stay put (its boot id and oldest line; its clock moves).
fn repeatable(
    result: &LogResult,
) -> (
    &[LogLine],
    usize,
    Option<&str>,
    Option<time::OffsetDateTime>,
) {
    let mark = result.mark.as_ref();
    (
        &result.lines,
        result.omitted,
        mark.and_then(|mark| mark.boot_id.as_deref()),
        mark.and_then(|mark| mark.oldest_kept),
    )
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let adb = Path::new("/usr/bin/adb");
    if !adb.is_file() {
        eprintln!("skipped: /usr/bin/adb is not installed");
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(run(adb));
}

async fn run(adb: &Path) {
    let server = common::PrivateAdb::start(adb);
    let port = server.port;
    let adb_cmd = |args: &[&str]| server.cmd(args);

    let own = SimPhone::default_phone();
    own.set_noise_rate(0.0);
    own.fill_log_with(APP, Buffer::Main, DUMP_BYTES, app_line)
        .expect("the app runs");
    scenario("2 MiB of the app's lines", &own, port, &adb_cmd).await;

    let mixed = SimPhone::default_phone();
    mixed.set_noise_rate(0.0);
    mixed.set_logcat_ignores_uid(true);
    // Room for both apps' lines: each fill only grows the buffer to its own size.
    mixed.set_buffer_size(Buffer::Main, 2 * DUMP_BYTES + 256 * 1024);
    mixed
        .fill_log_with(APP, Buffer::Main, DUMP_BYTES, app_line)
        .expect("the app runs");
    mixed
        .fill_log(OTHER_APP, Buffer::Main, DUMP_BYTES)
        .expect("the other app runs");
    scenario(
        "the same plus 2 MiB of another app's lines, logcat ignoring --uid",
        &mixed,
        port,
        &adb_cmd,
    )
    .await;
}

/// What a `phone_logs` result shows of the lines read, at the default cap.
fn present(lines: Vec<phonelogs_driver::LogLine>) -> phonelogs_gateway::RenderedLines {
    phonelogs_gateway::present_lines(
        lines,
        time::UtcOffset::UTC,
        phonelogs_gateway::MAX_RESULT_BYTES,
        (true, true),
    )
}

/// Serves `phone`, connects it to the adb server on `port`, and measures one scenario.
async fn scenario(
    name: &str,
    phone: &SimPhone,
    port: u16,
    adb_cmd: &dyn Fn(&[&str]) -> std::process::Output,
) {
    let (address, _handle) = Simulator::bind_loopback(None, phone.clone())
        .await
        .expect("the simulator listens");
    let serial = format!("127.0.0.1:{}", address.port());
    assert!(String::from_utf8_lossy(&adb_cmd(&["connect", &serial]).stdout).contains("connected"));

    let mut config = AdbConfig::local(port);
    config.start_server = false;
    let driver = AdbPhone::new(config);
    let device = DeviceId::new(serial.clone());
    for _ in 0..100 {
        if driver.devices().await.is_ok_and(|d| {
            d.iter()
                .any(|d| d.id == device && d.state == phonelogs_driver::DeviceState::Online)
        }) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let app = AppId::new(APP);
    let uid = phone.uid_of(APP, 0).expect("installed");
    let query = LogQuery::since(time::OffsetDateTime::UNIX_EPOCH, COUNT);

    let before = driver.round_trips();
    let first = driver
        .app_logs(&device, &app, &query)
        .await
        .expect("the first call");
    let first_trips = driver.round_trips() - before;
    let before = driver.round_trips();
    phone.clear_requests();
    driver
        .app_logs(&device, &app, &query)
        .await
        .expect("a repeated call");
    let repeated_trips = driver.round_trips() - before;
    assert_eq!(first.lines.len(), COUNT);
    assert!(first.lines.iter().all(|line| line.uid == Some(uid)));
    let mark = first
        .mark
        .as_ref()
        .expect("a read carries the phone's mark");
    assert!(mark.boot_id.is_some() && mark.phone_now.is_some() && mark.oldest_kept.is_some());
    // The script a warm call sends, as the phone received it: what the phone and the wire cost,
    // apart from the reading, sent again below through our client and not parsed.
    let script = phone
        .commands_run()
        .pop()
        .expect("the warm call ran its script");

    let bare_command =
        format!("logcat -d -b main,system,crash -v epoch -v uid --uid={uid} -t 1000000 '*:V'");
    let bare = adb_cmd(&["-s", &serial, "shell", &bare_command]);
    let dump_bytes = bare.stdout.len();

    let mut warm = Vec::new();
    let mut cli = Vec::new();
    let mut client_only = Vec::new();
    let mut script_only = Vec::new();
    let rounds = common::rounds(ROUNDS);
    let host = common::HostCpu::now();
    for _ in 0..rounds {
        let start = Instant::now();
        let result = driver
            .app_logs(&device, &app, &query)
            .await
            .expect("app_logs");
        let shown = present(result.lines.clone());
        warm.push(start.elapsed());
        assert_eq!(repeatable(&result), repeatable(&first));
        assert_eq!(shown.shown, COUNT);
        assert!(shown.masked > 0 && shown.folded > 0);

        let start = Instant::now();
        let output = adb_cmd(&["-s", &serial, "shell", &bare_command]);
        cli.push(start.elapsed());
        assert!(output.status.success());

        let start = Instant::now();
        let output = driver
            .server()
            .shell(&serial, &bare_command)
            .await
            .expect("shell");
        client_only.push(start.elapsed());
        assert_eq!(output.stdout.len(), dump_bytes);

        let start = Instant::now();
        let output = driver
            .server()
            .shell(&serial, &script)
            .await
            .expect("shell");
        script_only.push(start.elapsed());
        assert!(output.stdout.len() >= dump_bytes);
    }
    let (warm, cli, client_only, script_only) = (
        median(warm),
        median(cli),
        median(client_only),
        median(script_only),
    );
    let host = common::HostCpu::since(host);
    println!("== {name}");
    println!("{host}");
    println!(
        "dump: {dump_bytes} bytes; kept {} lines of the app, {} older ones counted",
        first.lines.len(),
        first.omitted
    );
    println!("round trips: first app_logs call {first_trips}, repeated call {repeated_trips}");
    let shown = present(first.lines.clone());
    println!(
        "laid out: {} lines in {} rows, {} repeats folded, {} secrets masked",
        shown.shown,
        shown.views.len(),
        shown.folded,
        shown.masked
    );
    println!("median of {rounds}: warm app_logs, masked, folded and cut {warm:?}");
    println!("median of {rounds}: bare `adb -s SERIAL shell 'logcat -d …'` {cli:?}");
    println!("median of {rounds}: the same logcat through our client, no parsing {client_only:?}");
    println!(
        "median of {rounds}: a warm call's whole script through our client, no parsing {script_only:?}"
    );
    println!(
        "ratio (app_logs, masked, folded and cut) / adb shell = {:.2}x (goal: 1.0x or less)",
        warm.as_secs_f64() / cli.as_secs_f64()
    );
    let _ = adb_cmd(&["disconnect", &serial]);
}
