//! The driver's os_trace streams against the simulated iPhone (issue 38): a quiet app on 26.1
//! is not taken for iOS 27's silent lockdown stream (the shim is tried beside lockdown, but the
//! phone keeps opening its streams over lockdown).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use idevice::usbmuxd::UsbmuxdAddr;
use phonelogs_driver::{AppId, AppLogger, DeviceId, LogQuery, LogResult};
use phonelogs_ios::{FollowerConfig, LockdownPhone, PhoneConfig, UsbmuxdBackend};
use phonelogs_iossim::{IosSim, IosVersion, Level, SimPhone};

const UDID: &str = "00008101-000A1234567890AB";
const APP: &str = "dev.phonelogs.crashtest";
const SHIM: &str = "com.apple.os_trace_relay.shim.remote";

/// The driver with a silence of 1 s taken as a silent stream (5 s by default), so the test
/// waits less; nothing is timed.
fn driver(sim: &IosSim) -> LockdownPhone {
    let addr = sim.tcp_addr().expect("a loopback simulator");
    let config = PhoneConfig {
        follower: FollowerConfig {
            silent_after: Duration::from_secs(1),
            ..FollowerConfig::default()
        },
        ..PhoneConfig::default()
    };
    LockdownPhone::with_config(
        Arc::new(UsbmuxdBackend::with_addr(UsbmuxdAddr::TcpSocket(addr))),
        config,
    )
}

fn count(phone: &SimPhone, service: &str) -> usize {
    phone
        .opened()
        .iter()
        .filter(|o| o.service == service)
        .count()
}

async fn until(what: &str, done: impl Fn() -> bool) {
    for _ in 0..400 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for {what}");
}

async fn read_until(driver: &LockdownPhone, done: impl Fn(&LogResult) -> bool) -> LogResult {
    let since = time::OffsetDateTime::now_utc() - time::Duration::minutes(1);
    let query = LogQuery::since(since, 1000);
    let (device, app) = (DeviceId::new(UDID), AppId::new(APP));
    for _ in 0..400 {
        let result = driver.app_logs(&device, &app, &query).await.unwrap();
        if done(&result) {
            return result;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the lines never came");
}

fn has(result: &LogResult, text: &str) -> bool {
    result.lines.iter().any(|l| l.text == text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quiet_app_on_26_1_keeps_the_phone_on_lockdown_streams() {
    let phone = SimPhone::default_phone_on(IosVersion::V26_1);
    let sim = IosSim::bind_loopback(None, phone.clone()).await.unwrap();
    let driver = driver(&sim);
    let pid = phone.launch(APP).unwrap();
    read_until(&driver, |_| true).await;
    // Quiet: the silent-stream check tries the shim beside a new lockdown stream.
    until("the shim tried for the quiet stream", || {
        count(&phone, SHIM) == 1
            && phone
                .streamed_pids()
                .iter()
                .filter(|p| **p == i64::from(pid))
                .count()
                >= 3
    })
    .await;
    phone.log(pid, Level::Error, Some(("t", "p")), "after a quiet while");
    read_until(&driver, |r| has(r, "after a quiet while")).await;
    // A later process's stream opens over lockdown, not through the shim.
    let before = count(&phone, "com.apple.os_trace_relay");
    let widget = phone
        .launch_extension(APP, "dev.phonelogs.crashtest.widget")
        .unwrap();
    until("the widget's stream", || {
        phone.streamed_pids().contains(&i64::from(widget))
    })
    .await;
    phone.log(widget, Level::Error, Some(("t", "p")), "widget line");
    read_until(&driver, |r| has(r, "widget line")).await;
    assert!(count(&phone, "com.apple.os_trace_relay") > before);
    // The widget too was quiet for a while before its line: its check may have tried the shim
    // once more, but no stream opened through the shim first.
    assert!(count(&phone, SHIM) <= 2, "{:?}", phone.opened());
}
