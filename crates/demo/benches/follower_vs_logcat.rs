//! The iPhone follower's figures beside the Android side's, in one run:
//!
//! - os_trace entries per second from the simulated iPhone (`phonelogs-iossim`, over loopback
//!   usbmuxd and the os_trace_relay service, as over USB) through the iOS driver's follower,
//!   counted until the follower holds all of them, and the follower's memory at 20,000 lines
//!   (its cap): on iOS 16.7 (lockdown's stream), and on iOS 26.1 twice: lockdown's stream with
//!   the process list from CoreDevice, and the stream itself through the CoreDevice tunnel
//!   (RSD's `com.apple.os_trace_relay.shim.remote` over the userspace IPv6/TCP stack), which
//!   the driver takes when lockdown's stream stays silent (the fault is injected for it);
//! - for comparison, lines per second of a `logcat -d` dump of the same number of the app's
//!   lines from the simulated Android phone (`phonelogs-adbsim`, its adb host-protocol front)
//!   through the Android driver's `app_logs`.
//!
//! Run: `cargo bench -p phonelogs-demo --bench follower_vs_logcat` (release; needs no adb and
//! no iPhone tools). Prints each run and the medians; `docs/iossim.md` and `docs/ios.md` keep the
//! figures. `cargo test --benches` (CI) makes one run of each.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use phonelogs_driver::{AppId, AppLogger, DeviceId, LogQuery};
use phonelogs_ios::{LockdownPhone, UsbmuxdBackend};
use phonelogs_iossim::{Fault, IosSim, IosVersion, Level, SimPhone};

const RUNS: usize = 5;
const LINES: usize = 20_000;
const APP: &str = "dev.phonelogs.crashtest";
/// About ninety bytes, as a typical os_log message is.
const TEXT: &str = "with some text to make it about ninety bytes long, as an app's line is";

/// CI's quick mode: `cargo test --benches` runs a bench without `--bench` (criterion decides the
/// same way), and then it only shows that it still builds and runs, judging no figure.
fn quick() -> bool {
    !std::env::args().any(|arg| arg == "--bench") || std::env::args().any(|arg| arg == "--test")
}

/// The runs of each side.
fn runs() -> usize {
    if quick() { 1 } else { RUNS }
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// Where the follower's stream goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Path {
    /// os_trace_relay over lockdown.
    Lockdown,
    /// os_trace_relay's RemoteXPC shim through the CoreDevice tunnel.
    Tunnel,
}

/// One run: a fresh phone of release `ios` and driver, the follower started (its stream through
/// `path`), 20,000 entries logged as fast as the phone takes them; returns entries per second
/// and the follower's bytes at the end.
async fn ios_run(ios: IosVersion, path: Path) -> (f64, usize) {
    let phone = SimPhone::default_phone_on(ios);
    if path == Path::Tunnel {
        phone.inject_fault(Fault::SilentLockdownOsTrace);
    }
    let sim = IosSim::bind_loopback(None, phone.clone()).await.unwrap();
    let addr = sim.tcp_addr().unwrap();
    let driver = LockdownPhone::new(Arc::new(UsbmuxdBackend::with_addr(
        idevice::usbmuxd::UsbmuxdAddr::TcpSocket(addr),
    )));
    let device = DeviceId::new(phone.profile().udid);
    let app = AppId::new(APP);
    let pid = phone.launch(APP).unwrap();
    let since = time::OffsetDateTime::now_utc() - time::Duration::minutes(1);
    driver
        .app_logs(&device, &app, &LogQuery::since(since, 1))
        .await
        .unwrap();
    // Through the tunnel: lockdown's stream stays silent for 5 s, then the follower opens
    // the shim's, the second stream of the pid.
    let streams = if path == Path::Tunnel { 2 } else { 1 };
    let opened = Instant::now();
    while phone
        .streamed_pids()
        .iter()
        .filter(|p| **p == i64::from(pid))
        .count()
        < streams
    {
        assert!(
            opened.elapsed() < Duration::from_secs(30),
            "no stream through {path:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let before = driver.follower_status(&device, &app).unwrap().kept;
    let start = Instant::now();
    for i in 0..LINES {
        phone.log(
            pid,
            Level::Info,
            Some((APP, "bench")),
            &format!("entry {i:05} {TEXT}"),
        );
        if i % 1_000 == 999 {
            // Let the relay write what is queued, as an app's logging is spread over time.
            tokio::task::yield_now().await;
        }
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let kept = driver.follower_status(&device, &app).unwrap().kept;
        if kept >= (before + LINES).min(20_000) || Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let seconds = start.elapsed().as_secs_f64();
    let memory = driver.follower_memory(&device, &app).unwrap_or(0);
    let kept = driver.follower_status(&device, &app).unwrap().kept;
    assert!(kept >= 19_000, "only {kept} of {LINES} entries arrived");
    sim.shutdown().await;
    (LINES as f64 / seconds, memory)
}

/// One Android run: the app's 20,000 newest lines of a phone holding them, through the driver.
async fn android_run(front: &phonelogs_demo::AndroidDemo) -> (f64, f64) {
    let driver = front.driver();
    let device = DeviceId::new(front.serial());
    let app = AppId::new(APP);
    let query = LogQuery::since(time::OffsetDateTime::UNIX_EPOCH, LINES);
    let start = Instant::now();
    let result = driver.app_logs(&device, &app, &query).await.unwrap();
    let seconds = start.elapsed().as_secs_f64();
    let bytes: usize = result
        .lines
        .iter()
        .map(|l| l.text.len() + l.tag.len())
        .sum();
    assert!(
        result.lines.len() >= LINES / 2,
        "{} lines",
        result.lines.len()
    );
    (
        result.lines.len() as f64 / seconds,
        bytes as f64 / (1024.0 * 1024.0) / seconds,
    )
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let mut iphones = Vec::new();
        for (ios, path) in [
            (IosVersion::V16_7_10, Path::Lockdown),
            (IosVersion::V26_1, Path::Lockdown),
            (IosVersion::V26_1, Path::Tunnel),
        ] {
            let mut rates = Vec::new();
            let mut memories = Vec::new();
            for run in 0..runs() {
                let (rate, memory) = ios_run(ios, path).await;
                println!(
                    "iPhone {} {path:?} run {run}: {rate:.0} os_trace entries/s through the follower; follower memory at {LINES} lines: {:.2} MiB",
                    ios.product_version(),
                    memory as f64 / (1024.0 * 1024.0)
                );
                rates.push(rate);
                memories.push(memory as f64);
            }
            iphones.push(format!(
                "iPhone {} {path:?} {:.0} os_trace entries/s through the follower, follower memory at {LINES} lines {:.2} MiB",
                ios.product_version(),
                median(rates),
                median(memories) / (1024.0 * 1024.0)
            ));
        }

        let phone = phonelogs_adbsim::SimPhone::default_phone();
        phone.set_noise_rate(0.0);
        // Lines of about the same size as the iPhone's entries.
        phone
            .fill_log(APP, phonelogs_adbsim::Buffer::Main, LINES * 150)
            .expect("fill the log");
        let android = phonelogs_demo::AndroidDemo::start(phone).await.unwrap();
        let mut line_rates = Vec::new();
        let mut byte_rates = Vec::new();
        for run in 0..runs() {
            let (lines, mib) = android_run(&android).await;
            println!("Android run {run}: {lines:.0} lines/s ({mib:.1} MiB/s of text) of a logcat -d dump through app_logs");
            line_rates.push(lines);
            byte_rates.push(mib);
        }
        println!(
            "median: {}; Android {:.0} lines/s ({:.1} MiB/s) of a logcat dump through app_logs",
            iphones.join("; "),
            median(line_rates),
            median(byte_rates),
        );
    });
}
