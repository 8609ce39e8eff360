//! A warm crash report read (`app_crash_result`, what `phone_logs` with `kind: "crashes"` calls)
//! against a bare `adb -s <serial> shell dumpsys dropbox --print`, side by side in one run,
//! through a private real adb server and the simulated phone. The drop box holds 200 entries
//! (about 4 MiB: Java crashes, ANRs with their traces, native crashes with their tombstones) of
//! several apps over two days; the app's last few are in the hour the call asks about. Prints
//! the medians and the ratio.
//!
//! Every round checks that the warm call repeats the first one's reports and count of
//! unconfirmed ones. The warm call's script is taken from what the phone received, so the
//! script-only figure never drifts from what the driver sends.
//!
//! Run: `cargo bench -p phonelogs-android --bench crashes_vs_adb` (needs `/usr/bin/adb`).
//! `cargo test -p phonelogs-android --benches` runs one round and judges no figure (CI).

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use phonelogs_adbsim::{DropBoxEntry, SimPhone, Simulator};
use phonelogs_android::{AdbConfig, AdbPhone};
use phonelogs_driver::{AppId, AppLogger, DeviceId};

const ROUNDS: usize = 15;
const ENTRIES: usize = 200;
const DROPBOX_BYTES: usize = 4 * 1024 * 1024;
/// The reports a call asks for: the MCP tool's default `limit` for crashes.
const LIMIT: usize = 3;
const APP: &str = "dev.phonelogs.crashtest";
/// Apps whose reports share the drop box with the app's.
const OTHERS: [&str; 3] = [
    "com.spotify.music",
    "com.whatsapp",
    "dev.phonelogs.suite.mail",
];

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

/// Milliseconds since 1970 on this computer's clock (the simulated phone's too).
fn now_ms() -> i64 {
    (time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000) as i64
}

/// One crash of `package` at the phone's current time: a Java crash, an ANR or a native crash.
fn crash(phone: &SimPhone, package: &str, kind: usize) {
    let done = match kind % 3 {
        0 => phone
            .crash(package, "java.lang.IllegalStateException", "bench crash")
            .map(drop),
        1 => phone.hang(package).map(drop),
        _ => phone.native_crash(package, 11).map(drop),
    };
    done.expect("the simulated app crashes");
}

/// Fills the drop box: two days of every app's reports, then the app's last three in the hour
/// before now. Entries too small to reach [`DROPBOX_BYTES`] are padded with other apps' ANRs
/// whose traces hold many threads, as a busy app's do.
async fn fill(phone: &SimPhone) {
    let recent = 3;
    let start = now_ms() - 2 * 24 * 3600 * 1000;
    let natural = ENTRIES * 2 / 5;
    for index in 0..natural {
        phone.set_clock_ms(start + index as i64 * 10 * 60 * 1000);
        let package = if index % 4 == 0 {
            APP
        } else {
            OTHERS[index % OTHERS.len()]
        };
        crash(phone, package, index);
    }
    let sample = phonelogs_adbsim::run_shell(phone, "dumpsys dropbox --print data_app_anr").await;
    let text = String::from_utf8_lossy(&sample.stdout).into_owned();
    let listing = phonelogs_adbsim::run_shell(phone, "dumpsys dropbox --print").await;
    let so_far = listing.stdout.len();
    let count = String::from_utf8_lossy(&listing.stdout)
        .lines()
        .next()
        .and_then(|line| line.strip_prefix("Drop box contents: "))
        .and_then(|rest| rest.split(' ').next())
        .and_then(|count| count.parse::<usize>().ok())
        .expect("the entry count");
    // One ANR entry's text (after its `====` and header line), its trace grown to the size that
    // brings the drop box to its target.
    let entry = text
        .split("========================================\n")
        .nth(1)
        .and_then(|entry| entry.split_once('\n'))
        .map(|(_, text)| text.to_owned())
        .expect("an ANR entry");
    // The app's last three reports add four entries (a native crash adds its tombstone's).
    let padded = ENTRIES - 4 - count;
    let each = (DROPBOX_BYTES.saturating_sub(so_far) / padded).max(entry.len());
    let thread = "\n\"pool-3-thread-7\" prio=5 tid=21 Waiting\n  | group=\"main\" sCount=1 ucsCount=0 flags=1 obj=0x12c40000 self=0xb400007a\n  | sysTid=5120 nice=0 cgrp=top-app sched=0/0 handle=0x7a1c2f0cb0\n  at java.lang.Object.wait(Native method)\n  - waiting on <0x0a1b2c3d> (a java.util.concurrent.LinkedBlockingQueue)\n  at java.util.concurrent.ThreadPoolExecutor.getTask(ThreadPoolExecutor.java:1086)\n  at java.lang.Thread.run(Thread.java:1012)\n";
    let mut body = entry.clone();
    while body.len() < each {
        body.push_str(thread);
    }
    for index in 0..padded {
        let at = start + (natural + index) as i64 * 5 * 60 * 1000;
        phone.add_dropbox_entry(DropBoxEntry {
            tag: "data_app_anr".to_owned(),
            time_ms: at,
            text: body.replace(APP, OTHERS[index % OTHERS.len()]),
        });
    }
    let recent_start = now_ms() - 30 * 60 * 1000;
    for index in 0..recent {
        phone.set_clock_ms(recent_start + index as i64 * 60 * 1000);
        crash(phone, APP, index);
    }
    phone.set_clock_ms(now_ms());
}

async fn run(adb: &Path) {
    let server = common::PrivateAdb::start(adb);
    let port = server.port;
    let adb_cmd = |args: &[&str]| server.cmd(args);

    let phone = SimPhone::default_phone();
    phone.set_noise_rate(0.0);
    fill(&phone).await;
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
    let since = time::OffsetDateTime::now_utc() - time::Duration::hours(1);

    let first = driver
        .app_crash_result(&device, &app, since, LIMIT)
        .await
        .expect("the first call");
    assert_eq!(first.reports.len(), LIMIT, "{first:#?}");

    let bare_command = "dumpsys dropbox --print";
    let bare = adb_cmd(&["-s", &serial, "shell", bare_command]);
    let entries = String::from_utf8_lossy(&bare.stdout)
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned();
    // The script a warm call sends, as the phone received it: what the phone and the wire cost,
    // apart from the reading, sent again below through our client and not parsed.
    phone.clear_requests();
    let again = driver
        .app_crash_result(&device, &app, since, LIMIT)
        .await
        .expect("a repeated call");
    assert_eq!(again, first);
    let script = phone
        .commands_run()
        .pop()
        .expect("the warm call ran its script");

    let mut warm = Vec::new();
    let mut cli = Vec::new();
    let mut client_only = Vec::new();
    let mut script_only = Vec::new();
    let rounds = common::rounds(ROUNDS);
    let host = common::HostCpu::now();
    for _ in 0..rounds {
        let start = Instant::now();
        let result = driver
            .app_crash_result(&device, &app, since, LIMIT)
            .await
            .expect("app_crash_result");
        warm.push(start.elapsed());
        // A crash result holds no clock reading: the whole of it repeats.
        assert_eq!(result, first);

        let start = Instant::now();
        let output = adb_cmd(&["-s", &serial, "shell", bare_command]);
        cli.push(start.elapsed());
        assert!(output.status.success());

        let start = Instant::now();
        let output = driver
            .server()
            .shell(&serial, bare_command)
            .await
            .expect("shell");
        client_only.push(start.elapsed());
        assert_eq!(output.stdout.len(), bare.stdout.len());

        let start = Instant::now();
        let output = driver
            .server()
            .shell(&serial, &script)
            .await
            .expect("shell");
        script_only.push(start.elapsed());
        assert!(!output.stdout.is_empty());
    }
    let (warm, cli, client_only, script_only) = (
        median(warm),
        median(cli),
        median(client_only),
        median(script_only),
    );
    println!("{}", common::HostCpu::since(host));
    println!(
        "drop box: {entries}, {} bytes; {} of the app's reports returned",
        bare.stdout.len(),
        first.reports.len()
    );
    println!("median of {rounds}: warm app_crash_result {warm:?}");
    println!("median of {rounds}: bare `adb -s SERIAL shell dumpsys dropbox --print` {cli:?}");
    println!("median of {rounds}: the same dumpsys through our client, no parsing {client_only:?}");
    println!(
        "median of {rounds}: a warm call's whole script through our client, no parsing {script_only:?}"
    );
    println!(
        "ratio app_crash_result / adb shell = {:.2}x (goal: 1.0x or less)",
        warm.as_secs_f64() / cli.as_secs_f64()
    );
}
