//! A warm `app_logs` call against a bare `adb -s <serial> shell 'logcat -d …'` of the same data,
//! side by side in one run, through a private real adb server and the simulated phone holding
//! 2 MiB of the app's lines. Prints the medians, the ratio, and how many adb round trips the
//! first and a repeated call make.
//!
//! Run: `cargo bench -p phonelogs-android --bench app_logs_vs_adb` (needs `/usr/bin/adb`).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use phonelogs_adbsim::{Buffer, SimPhone, Simulator};
use phonelogs_android::{AdbConfig, AdbPhone};
use phonelogs_driver::{AppId, AppLogger, DeviceId, LogQuery};

const ROUNDS: usize = 15;
const DUMP_BYTES: usize = 2 * 1024 * 1024;

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
    let home = tempfile::tempdir().expect("a temporary HOME");
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
        listener.local_addr().expect("its address").port()
    };
    let adb_cmd = |args: &[&str]| {
        Command::new(adb)
            .arg("-P")
            .arg(port.to_string())
            .args(args)
            .env("HOME", home.path())
            .env("ANDROID_USER_HOME", home.path().join(".android"))
            .output()
            .expect("adb runs")
    };
    assert!(adb_cmd(&["start-server"]).status.success());

    let phone = SimPhone::default_phone();
    phone.set_noise_rate(0.0);
    phone
        .fill_log("dev.phonelogs.crashtest", Buffer::Main, DUMP_BYTES)
        .expect("the app runs");
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
    let app = AppId::new("dev.phonelogs.crashtest");
    let uid = phone
        .uid_of("dev.phonelogs.crashtest", 0)
        .expect("installed");
    let query = LogQuery::since(time::OffsetDateTime::UNIX_EPOCH, 1_000_000);

    let before = driver.round_trips();
    let first = driver
        .app_logs(&device, &app, &query)
        .await
        .expect("the first call");
    let first_trips = driver.round_trips() - before;
    let before = driver.round_trips();
    driver
        .app_logs(&device, &app, &query)
        .await
        .expect("a repeated call");
    let repeated_trips = driver.round_trips() - before;

    let bare_command =
        format!("logcat -d -b main,system,crash -v epoch -v uid --uid={uid} -t 1000000 '*:V'");
    let bare = adb_cmd(&["-s", &serial, "shell", &bare_command]);
    let dump_bytes = bare.stdout.len();

    let mut warm = Vec::new();
    let mut cli = Vec::new();
    let mut client_only = Vec::new();
    for _ in 0..ROUNDS {
        let start = Instant::now();
        let result = driver
            .app_logs(&device, &app, &query)
            .await
            .expect("app_logs");
        warm.push(start.elapsed());
        assert_eq!(result.lines.len(), first.lines.len());

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
    }
    let (warm, cli, client_only) = (median(warm), median(cli), median(client_only));
    println!(
        "dump: {dump_bytes} bytes, {} lines of the app",
        first.lines.len()
    );
    println!("round trips: first app_logs call {first_trips}, repeated call {repeated_trips}");
    println!("median of {ROUNDS}: warm app_logs {warm:?}");
    println!("median of {ROUNDS}: bare `adb -s SERIAL shell 'logcat -d …'` {cli:?}");
    println!("median of {ROUNDS}: the same logcat through our client, no parsing {client_only:?}");
    println!(
        "ratio app_logs / adb shell = {:.2}x (goal: 1.1x or less)",
        warm.as_secs_f64() / cli.as_secs_f64()
    );
    let _ = adb_cmd(&["kill-server"]);
}
