//! The iPhone device test (`cargo xtask emulator-test --sim-ios`, see `docs/crashtest.md`):
//! after Crash Test ran on the phone, crashed on Crash and was killed by the watchdog on Hang,
//! the driver reads its reports, and only its own: the exception and the `0x8badf00d`
//! watchdog, none of the look-alike `CrashTestHelper`'s; it tells the development build from
//! the store build by `get-task-allow`; it refuses the WebDriverAgent runner before opening
//! anything for it. The lines of the app and its widget are checked by the run's MCP test:
//! an iPhone keeps no history a later process could read back.
//!
//! Without `PHONELOGS_IOS_UDID` and `PHONELOGS_CRASHTEST_BUILD` it says why it skipped and
//! passes. The phone is reached through `USBMUXD_SOCKET_ADDRESS` (or the host's usbmuxd).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use phonelogs_driver::{AppId, AppLogger, CrashKind, DeviceId, ErrorKind, LogQuery};
use phonelogs_ios::{LockdownPhone, UsbmuxdBackend};

const BUNDLE: &str = "dev.phonelogs.crashtest";
const CRASH_MESSAGE: &str = "Crash button tapped";
const RUNNER: &str = "com.facebook.WebDriverAgentRunner.xctrunner";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn device_app_logs() {
    let (Ok(udid), Ok(build)) = (
        std::env::var("PHONELOGS_IOS_UDID"),
        std::env::var("PHONELOGS_CRASHTEST_BUILD"),
    ) else {
        eprintln!(
            "SKIPPED device_app_logs (iPhone): set PHONELOGS_IOS_UDID and PHONELOGS_CRASHTEST_BUILD (cargo xtask emulator-test --sim-ios does)"
        );
        return;
    };
    let since = std::env::var("PHONELOGS_CRASHTEST_SINCE")
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .and_then(|s| time::OffsetDateTime::from_unix_timestamp(s).ok())
        .unwrap_or_else(|| time::OffsetDateTime::now_utc() - time::Duration::hours(1));
    let device = DeviceId::new(udid);
    let app = AppId::new(BUNDLE);
    let phone = LockdownPhone::new(Arc::new(UsbmuxdBackend::from_env()));

    assert_eq!(
        phone.dev_build(&device, &app).await.unwrap(),
        build == "development",
        "the {build} build's get-task-allow"
    );

    let reports = phone.app_crashes(&device, &app, since, 10).await.unwrap();
    let kinds: Vec<CrashKind> = reports.iter().map(|r| r.kind).collect();
    eprintln!("{} reports since {since}: {kinds:?}", reports.len());
    let watchdog = reports
        .iter()
        .find(|r| r.kind == CrashKind::Watchdog)
        .unwrap_or_else(|| panic!("no watchdog report: {kinds:?}"));
    assert!(
        watchdog.text.to_ascii_lowercase().contains("0x8badf00d"),
        "{}",
        watchdog.text
    );
    let crash = reports
        .iter()
        .find(|r| r.kind == CrashKind::Crash)
        .unwrap_or_else(|| panic!("no exception report: {kinds:?}"));
    assert!(crash.summary.contains(CRASH_MESSAGE), "{}", crash.summary);
    for report in &reports {
        assert!(
            !report.text.contains("CrashTestHelper"),
            "another app's report: {}",
            report.summary
        );
    }

    let refused = phone
        .app_logs(&device, &AppId::new(RUNNER), &LogQuery::since(since, 10))
        .await
        .unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::PermissionDenied, "{refused}");
}
