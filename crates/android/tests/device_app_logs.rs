//! The spec's device test (`TestDeviceAppLogs`): after `cargo xtask emulator-test` has installed,
//! launched, crashed and hung Crash Test on a device, the driver reads the start line and the
//! crash's lines and no other process's, the crash report, and the ANR report cut to the app's
//! own threads.
//!
//! It runs only when the emulator test sets its environment (`docs/crashtest.md`):
//! `PHONELOGS_ANDROID_SERIAL` (else it prints why it skips and passes), `ANDROID_ADB_SERVER_PORT`
//! for a private server, `PHONELOGS_CRASHTEST_BUILD` (`debug` or `release`),
//! `PHONELOGS_CRASHTEST_SINCE` (the phone's clock, Unix seconds, before the first launch) and
//! `PHONELOGS_CRASHTEST_SIMULATED` (`true` on the simulated phone). The texts it looks for are
//! read from `crashtest/res/values/strings.xml`, the file the app reads them from.
//!
//! Refusing a helper app (Appium's UiAutomator2 server) is the policy's work, above the driver;
//! the emulator test's MCP step checks that refusal. Here the driver's part is checked: the
//! helper's lines, if it is installed, hold nothing of Crash Test's.

// Tests may unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use phonelogs_android::{AdbConfig, AdbPhone};
use phonelogs_driver::{AppId, AppLogger, CrashKind, DeviceId, LogQuery};
use time::OffsetDateTime;

/// Appium's UiAutomator2 server: a helper app, never Crash Test.
const HELPER_APP: &str = "io.appium.uiautomator2.server";

/// What the emulator test told this run.
struct Run {
    device: DeviceId,
    debug_build: bool,
    since: OffsetDateTime,
    simulated: bool,
}

impl Run {
    /// The run's environment, or `None` (with the reason printed) when there is no device.
    fn from_env() -> Option<Self> {
        let Ok(serial) = std::env::var("PHONELOGS_ANDROID_SERIAL") else {
            eprintln!(
                "SKIPPED device_app_logs: PHONELOGS_ANDROID_SERIAL is not set; \
                 `cargo xtask emulator-test` (or `--sim`) runs this test against a device"
            );
            return None;
        };
        let build = std::env::var("PHONELOGS_CRASHTEST_BUILD").unwrap_or_default();
        assert!(
            build == "debug" || build == "release",
            "PHONELOGS_CRASHTEST_BUILD must be debug or release, not {build:?}"
        );
        let since: i64 = std::env::var("PHONELOGS_CRASHTEST_SINCE")
            .ok()
            .and_then(|since| since.trim().parse().ok())
            .expect("PHONELOGS_CRASHTEST_SINCE must be the phone's clock in Unix seconds");
        Some(Self {
            device: DeviceId::new(serial),
            debug_build: build == "debug",
            since: OffsetDateTime::from_unix_timestamp(since).unwrap(),
            simulated: std::env::var("PHONELOGS_CRASHTEST_SIMULATED").as_deref() == Ok("true"),
        })
    }
}

/// A `<string name="NAME">` of Crash Test's resources.
fn app_text(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../crashtest/res/values/strings.xml");
    let xml = std::fs::read_to_string(&path).unwrap();
    let open = format!("<string name=\"{name}\">");
    let start = xml.find(&open).unwrap() + open.len();
    let end = xml[start..].find("</string>").unwrap();
    xml[start..start + end].to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_driver_reads_crash_tests_lines_and_reports() {
    let Some(run) = Run::from_env() else { return };
    let phone = AdbPhone::new(AdbConfig::from_env());
    let app = AppId::new("dev.phonelogs.crashtest");
    println!(
        "device {} ({}), {} build",
        run.device,
        if run.simulated { "simulated" } else { "real" },
        if run.debug_build { "debug" } else { "release" }
    );

    // The package: installed, with its own uid, a development build only when built as one.
    let info = phone.app_info(&run.device, &app).await.unwrap();
    let uid = info.uid.expect("the driver knows Crash Test's uid");
    assert_eq!(info.dev_build, run.debug_build, "{info:?}");
    assert_eq!(
        phone.dev_build(&run.device, &app).await.unwrap(),
        run.debug_build
    );
    assert!(!info.system);

    // The lines: the two starts, the Hang line and the crash, every one of them Crash Test's.
    let lines = phone
        .app_logs(&run.device, &app, &LogQuery::since(run.since, 5000))
        .await
        .unwrap()
        .lines;
    assert!(!lines.is_empty(), "no lines since {}", run.since);
    for line in &lines {
        if let Some(line_uid) = line.uid {
            assert_eq!(line_uid, uid, "a line of another uid: {line:?}");
        }
        assert!(
            line.time >= run.since - time::Duration::seconds(1),
            "{line:?}"
        );
    }
    let start_line = app_text("start_line");
    let tag = app_text("log_tag");
    let starts = lines
        .iter()
        .filter(|line| line.tag == tag && line.text.contains(&start_line))
        .count();
    assert!(
        starts >= 2,
        "Crash Test started twice, the lines show {starts}: {lines:#?}"
    );
    let hang_line = app_text("hang_line");
    assert!(
        lines.iter().any(|line| line.text.contains(&hang_line)),
        "no {hang_line:?} line"
    );
    let exception = format!("IllegalStateException: {}", app_text("crash_message"));
    assert!(
        lines.iter().any(|line| line.text.contains(&exception)),
        "no {exception:?} line"
    );
    assert!(
        lines
            .iter()
            .any(|line| line.text.contains("FATAL EXCEPTION")),
        "no FATAL EXCEPTION line"
    );
    println!(
        "{} lines, all of uid {uid}: two starts, the Hang line, the crash",
        lines.len()
    );

    // The reports: the Java crash with the exception, and the ANR cut to the app's threads.
    let reports = phone
        .app_crashes(&run.device, &app, run.since, 20)
        .await
        .unwrap();
    let crash = reports
        .iter()
        .find(|report| report.kind == CrashKind::JavaCrash)
        .unwrap_or_else(|| panic!("no java_crash since {}: {reports:#?}", run.since));
    assert!(crash.text.contains(&exception), "{}", crash.text);
    let anr = reports
        .iter()
        .find(|report| report.kind == CrashKind::Anr)
        .unwrap_or_else(|| panic!("no anr since {}: {reports:#?}", run.since));
    assert!(
        anr.text.contains("Cmd line: dev.phonelogs.crashtest"),
        "the ANR lacks the app's own threads:\n{}",
        anr.text
    );
    for line in anr
        .text
        .lines()
        .filter(|line| line.starts_with("Cmd line: "))
    {
        assert_eq!(
            line, "Cmd line: dev.phonelogs.crashtest",
            "the ANR holds another process's threads"
        );
    }
    println!(
        "{} reports: the java_crash and the anr (app threads only)",
        reports.len()
    );

    // A helper app's lines hold nothing of Crash Test's (the policy refuses it above the driver).
    let helper = AppId::new(HELPER_APP);
    match phone
        .app_logs(&run.device, &helper, &LogQuery::since(run.since, 5000))
        .await
    {
        Ok(result) => {
            for line in &result.lines {
                assert_ne!(
                    line.uid,
                    Some(uid),
                    "{HELPER_APP} got a line of Crash Test: {line:?}"
                );
                assert!(!line.text.contains(&start_line), "{line:?}");
            }
            println!(
                "{HELPER_APP}: {} lines, none of Crash Test's",
                result.lines.len()
            );
        }
        Err(error) => println!("{HELPER_APP}: {error}"),
    }
}
