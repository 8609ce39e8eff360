//! How long a line takes from the simulated phone's model to a logcat follower: `log_pid`
//! appends it, the follower (woken by the model) prints it, and the reader sees it. Two paths:
//! the host front over loopback (no adb), and `adb shell logcat` through the real adb server
//! (`adb -P <free port>`, skipped without adb). 300 lines each, one at a time, 5 ms apart.
//!
//! `cargo bench -p phonelogs-adbsim --bench live_logcat`; `cargo test --benches` (CI) sends five
//! lines each way.

#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use phonelogs_adbsim::{HostFront, Priority, SimPhone, Simulator};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};

const LINES: usize = 300;

/// CI's quick mode: `cargo test --benches` runs a bench without `--bench` (criterion decides the
/// same way), and then it only shows that it still builds and runs, judging no figure.
fn quick() -> bool {
    !std::env::args().any(|arg| arg == "--bench") || std::env::args().any(|arg| arg == "--test")
}

/// The lines sent each way.
fn line_count() -> usize {
    if quick() { 5 } else { LINES }
}

fn report(path: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q) as usize];
    eprintln!(
        "{path}: {} lines, median {:?}, p95 {:?}, max {:?}",
        samples.len(),
        at(0.5),
        at(0.95),
        at(1.0)
    );
}

async fn host_front() {
    let phone = SimPhone::default_phone();
    let serial = phone.profile().serial;
    let pid = phone.pid_of("dev.phonelogs.crashtest").unwrap();
    let (address, _handle) = HostFront::bind(None, phone.clone()).await.unwrap();
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    stream.set_nodelay(true).unwrap();
    // Legacy `shell:` is raw bytes, so lines can be read as they come.
    for request in [
        format!("host:transport:{serial}"),
        "shell:logcat -v threadtime -T 1 CrashTest:V '*:S'".to_string(),
    ] {
        let framed = format!("{:04x}{request}", request.len());
        stream.write_all(framed.as_bytes()).await.unwrap();
        let mut status = [0u8; 4];
        stream.read_exact(&mut status).await.unwrap();
        assert_eq!(&status, b"OKAY");
    }
    let mut lines = tokio::io::BufReader::new(stream).lines();
    let mut samples = Vec::with_capacity(line_count());
    for index in 0..line_count() {
        let text = format!("bench line {index}");
        let start = Instant::now();
        phone
            .log_pid(pid, Priority::Info, "CrashTest", &text)
            .unwrap();
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.ends_with(&text) {
                break;
            }
        }
        samples.push(start.elapsed());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    report("host front", samples);
}

fn real_adb(runtime: &tokio::runtime::Runtime) {
    let adb = "adb";
    if Command::new(adb).arg("version").output().is_err() {
        eprintln!("real adb server: SKIPPED (adb is not installed)");
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
        .to_string();
    let adb_command = || {
        let mut command = Command::new(adb);
        command.env("HOME", home.path()).args(["-P", &port]);
        command
    };
    let phone = SimPhone::default_phone();
    let pid = phone.pid_of("dev.phonelogs.crashtest").unwrap();
    let (address, handle) = runtime
        .block_on(Simulator::bind_loopback(None, phone.clone()))
        .unwrap();
    let serial = address.to_string();
    adb_command().arg("start-server").output().unwrap();
    adb_command().args(["connect", &serial]).output().unwrap();
    adb_command()
        .args(["-s", &serial, "wait-for-device"])
        .output()
        .unwrap();
    let mut child = adb_command()
        .args([
            "-s",
            &serial,
            "shell",
            "logcat -v threadtime -T 1 CrashTest:V '*:S'",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut samples = Vec::with_capacity(line_count());
    for index in 0..line_count() {
        let text = format!("bench line {index}");
        let start = Instant::now();
        phone
            .log_pid(pid, Priority::Info, "CrashTest", &text)
            .unwrap();
        for line in lines.by_ref() {
            if line.unwrap().ends_with(&text) {
                break;
            }
        }
        samples.push(start.elapsed());
        std::thread::sleep(Duration::from_millis(5));
    }
    report("real adb server", samples);
    let _ = child.kill();
    let _ = child.wait();
    adb_command().arg("kill-server").output().unwrap();
    runtime.block_on(handle.shutdown());
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(host_front());
    real_adb(&runtime);
}
