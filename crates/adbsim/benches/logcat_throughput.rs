//! Throughput of a 16 MiB `logcat -d` dump through Debian's real adb server.
//!
//! Run with `cargo bench -p phonelogs-adbsim --bench logcat_throughput`; it prints MiB/s for
//! a few runs and their median. Without `adb` on PATH it says so and exits. Under `cargo test
//! --benches` (CI) one run of 1 MiB.

use std::process::Command;
use std::time::Instant;

use phonelogs_adbsim::{Buffer, SimPhone, Simulator};

/// CI's quick mode: `cargo test --benches` runs a bench without `--bench` (criterion decides the
/// same way), and then it only shows that it still builds and runs, judging no figure.
fn quick() -> bool {
    !std::env::args().any(|arg| arg == "--bench") || std::env::args().any(|arg| arg == "--test")
}

fn main() {
    let found = Command::new("sh")
        .arg("-c")
        .arg("command -v adb")
        .output()
        .map(|o| !o.stdout.is_empty())
        .unwrap_or(false);
    if !found {
        println!("skipped: `adb` is not installed (apt-get install -y adb)");
        return;
    }
    let home = tempfile::tempdir().expect("temporary HOME");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("free port")
        .local_addr()
        .expect("address")
        .port()
        .to_string();
    let adb = |args: &[&str]| {
        Command::new("adb")
            .env("HOME", home.path())
            .arg("-P")
            .arg(&port)
            .args(args)
            .output()
            .expect("adb runs")
    };
    adb(&["start-server"]);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let (mib, runs) = if quick() { (1, 1) } else { (16, 5) };
    let phone = SimPhone::default_phone();
    phone.set_noise_rate(0.0);
    phone
        .fill_log("dev.phonelogs.crashtest", Buffer::Main, mib << 20)
        .expect("fill");
    let (address, handle) = runtime
        .block_on(Simulator::bind_loopback(None, phone))
        .expect("bind");
    let serial = address.to_string();
    adb(&["connect", &serial]);
    adb(&["-s", &serial, "wait-for-device"]);
    let mut rates = Vec::new();
    for run in 0..runs {
        let start = Instant::now();
        let output = adb(&["-s", &serial, "shell", "logcat -d -b main -v epoch -v uid"]);
        let seconds = start.elapsed().as_secs_f64();
        let mib = output.stdout.len() as f64 / (1024.0 * 1024.0);
        println!(
            "run {run}: {mib:.1} MiB in {seconds:.3} s = {:.1} MiB/s",
            mib / seconds
        );
        rates.push(mib / seconds);
    }
    rates.sort_by(|a, b| a.total_cmp(b));
    println!(
        "median: {:.1} MiB/s through the real adb server",
        rates[rates.len() / 2]
    );
    adb(&["kill-server"]);
    runtime.block_on(handle.shutdown());
}
