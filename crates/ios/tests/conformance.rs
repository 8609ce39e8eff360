//! The driver conformance suite against `LockdownPhone` over the fake services, loaded with
//! `Scenario::standard`: its lines become os_trace entries on per-pid streams, its crashes
//! become `.ips` reports (a 309 crash for the Java crash, a `0x8badf00d` watchdog for the ANR).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::serde_like::Termination;
use common::*;
use phonelogs_driver::conformance::{Scenario, run_all};
use phonelogs_driver::{
    AppId, AppLogger, CrashKind, DeviceId, ErrorKind, LogLevel, LogLine, LogQuery,
};
use phonelogs_ios::services::AppRecord;
use phonelogs_ios::{LockdownPhone, looks_like_simulator};
use time::macros::{datetime, format_description, offset};

const STORE: &str =
    "/private/var/containers/Bundle/Application/5E5E5E5E-0000-4000-8000-000000000003/Store.app";

fn os_log_level(level: LogLevel) -> Option<u8> {
    // os_log has no verbose or warning level; such lines cannot come from an iPhone.
    match level {
        LogLevel::Debug => Some(DEBUG),
        LogLevel::Info => Some(INFO),
        LogLevel::Error => Some(ERROR),
        LogLevel::Fatal => Some(FAULT),
        LogLevel::Verbose | LogLevel::Warn => None,
    }
}

fn entry_of(line: &LogLine, pid: u32, executable: &str, subsystem: &str) -> Option<Raw> {
    Some(Raw {
        pid,
        seconds: u32::try_from(line.time.unix_timestamp()).ok()?,
        micros: line.time.microsecond(),
        level: os_log_level(line.level)?,
        filename: executable.into(),
        message: line.text.clone(),
        subsystem: Some(subsystem.into()),
        category: Some(line.tag.clone()),
    })
}

/// The report file of a scenario crash: named by the phone's local time (UTC+1 here), with a
/// header timestamp that carries the zone.
fn report_file(
    bundle: &str,
    name: &str,
    crash: &phonelogs_driver::CrashReport,
) -> (String, Vec<u8>) {
    let local = crash.time.to_offset(offset!(+1));
    let stamp = local
        .format(format_description!(
            "[year]-[month]-[day] [hour]:[minute]:[second].00 +0100"
        ))
        .unwrap();
    let file = local
        .format(format_description!(
            "[year]-[month]-[day]-[hour][minute][second]"
        ))
        .unwrap();
    let pid = crash.pid.unwrap_or(1);
    let bytes = match crash.kind {
        CrashKind::Anr | CrashKind::Watchdog => ips_309(
            bundle,
            name,
            &stamp,
            pid,
            ("EXC_CRASH", "SIGKILL"),
            None,
            Some(Termination {
                namespace: "FRONTBOARD",
                code: 0x8bad_f00d,
                reason: &watchdog_reason(&crash.summary),
            }),
        ),
        _ => ips_309(
            bundle,
            name,
            &stamp,
            pid,
            ("EXC_CRASH", "SIGABRT"),
            Some(&crash.summary),
            None,
        ),
    };
    (format!("{name}-{file}.ips"), bytes)
}

fn load(scenario: &Scenario) -> FakePhone {
    let phone = FakePhone::new();
    let app_exe = format!("{BUNDLE}/CrashTest");
    let store_exe = format!("{STORE}/Store");
    for (expected, path) in [
        (&scenario.app, BUNDLE),
        (&scenario.other_app, STORE),
        (&scenario.system_app, "/Applications/Preferences.app"),
    ] {
        phone.install(AppRecord {
            bundle_id: expected.app.clone(),
            path: path.into(),
            executable: None,
            label: Some(expected.label.clone()),
            system: expected.system,
            dev_build: expected.dev_build,
            version: None,
        });
    }
    phone.spawn_process(scenario.app.pid, &app_exe);
    phone.spawn_process(scenario.other_app.pid, &store_exe);
    phone.spawn_process(
        600,
        "/System/Library/CoreServices/SpringBoard.app/SpringBoard",
    );
    for line in &scenario.app.lines {
        if let Some(raw) = entry_of(line, scenario.app.pid, &app_exe, scenario.app.app.as_str()) {
            phone.add_backlog(raw);
        }
    }
    for line in &scenario.other_app.lines {
        if let Some(raw) = entry_of(
            line,
            scenario.other_app.pid,
            &store_exe,
            "com.example.store",
        ) {
            phone.add_backlog(raw);
        }
    }
    for line in &scenario.system_lines {
        if let Some(raw) = entry_of(
            line,
            600,
            "/System/Library/CoreServices/SpringBoard.app/SpringBoard",
            "com.apple.SpringBoard",
        ) {
            phone.add_backlog(raw);
        }
    }
    for crash in &scenario.app.crashes {
        let (name, bytes) = report_file(scenario.app.app.as_str(), "CrashTest", crash);
        phone.add_file(&name, bytes);
    }
    for crash in &scenario.other_app.crashes {
        let (name, bytes) = report_file(scenario.other_app.app.as_str(), "Store", crash);
        phone.add_file(&format!("Retired/{name}"), bytes);
    }
    phone
}

fn ios_scenario() -> Scenario {
    let mut scenario = Scenario::standard(
        DeviceId::new("00008101-000A1234567890AB"),
        datetime!(2026-11-30 10:00 UTC),
    );
    // An iPhone's kinds: a crash report, or a watchdog for an app that did not answer.
    for crash in scenario
        .app
        .crashes
        .iter_mut()
        .chain(scenario.other_app.crashes.iter_mut())
    {
        crash.kind = match crash.kind {
            CrashKind::Anr => CrashKind::Watchdog,
            _ => CrashKind::Crash,
        };
    }
    scenario
}

#[tokio::test(start_paused = true)]
async fn lockdown_phone_conforms_over_the_fake_services() {
    let scenario = ios_scenario();
    let phone = load(&scenario);
    let driver = LockdownPhone::new(Arc::new(FakeBackend {
        device: scenario.device.clone(),
        phone: phone.clone(),
    }));

    // The first call starts the follower; the lines arrive over its streams.
    let first = driver
        .app_logs(
            &scenario.device,
            &scenario.app.app,
            &LogQuery::since(scenario.start, 500),
        )
        .await
        .unwrap();
    // The first call waits for the follower's first listing, so it already knows the app runs;
    // lines logged once its stream opened may be there, and nothing else.
    assert!(
        first
            .lines
            .iter()
            .all(|l| scenario.app.lines.iter().any(|w| w.text == l.text)),
        "{:?}",
        first.lines
    );
    assert!(
        !first
            .notices
            .iter()
            .any(|n| n.lines_may_be_missing() || *n == phonelogs_driver::LogNotice::NotRunning),
        "{:?}",
        first.notices
    );
    tokio::time::sleep(Duration::from_secs(2)).await;

    // Every line an iPhone can carry arrived, with its time, level and tag.
    let result = driver
        .app_logs(
            &scenario.device,
            &scenario.app.app,
            &LogQuery::since(scenario.start, 500),
        )
        .await
        .unwrap();
    let expected: Vec<&LogLine> = scenario
        .app
        .lines
        .iter()
        .filter(|l| os_log_level(l.level).is_some())
        .collect();
    assert_eq!(result.lines.len(), expected.len());
    for (got, want) in result.lines.iter().zip(expected) {
        assert_eq!(
            (got.time, got.level, &got.tag, &got.text),
            (want.time, want.level, &want.tag, &want.text)
        );
        assert_eq!(got.pid, Some(scenario.app.pid));
    }
    let status = driver
        .follower_status(&scenario.device, &scenario.app.app)
        .unwrap();
    assert_eq!(status.open_streams, [scenario.app.pid]);

    let failures = run_all(&driver, &scenario).await;
    assert!(failures.is_empty(), "conformance failures: {failures:#?}");

    // Never a stream for the other app, the system, or all processes.
    assert_eq!(phone.opened(), [scenario.app.pid]);
    // The suite's listener check stopped the follower.
    assert!(
        driver
            .follower_status(&scenario.device, &scenario.app.app)
            .is_none()
    );
}

#[tokio::test(start_paused = true)]
async fn the_webdriveragent_runner_is_never_read() {
    let scenario = ios_scenario();
    let phone = load(&scenario);
    let runner = AppId::new("com.facebook.WebDriverAgentRunner.xctrunner");
    phone.install(record(
        runner.as_str(),
        "/private/var/containers/Bundle/Application/W/WebDriverAgentRunner-Runner.app",
        true,
    ));
    let driver = LockdownPhone::new(Arc::new(FakeBackend {
        device: scenario.device.clone(),
        phone: phone.clone(),
    }));
    let logs = driver
        .app_logs(
            &scenario.device,
            &runner,
            &LogQuery::since(scenario.start, 10),
        )
        .await;
    assert_eq!(logs.unwrap_err().kind(), ErrorKind::PermissionDenied);
    let crashes = driver
        .app_crashes(&scenario.device, &runner, scenario.start, 3)
        .await;
    assert_eq!(crashes.unwrap_err().kind(), ErrorKind::PermissionDenied);
    assert_eq!(
        driver
            .app_launched(&scenario.device, &runner, 77)
            .await
            .unwrap_err()
            .kind(),
        ErrorKind::PermissionDenied
    );
    assert!(phone.opened().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_launch_handed_to_the_driver_opens_its_stream_at_once() {
    let scenario = ios_scenario();
    let phone = load(&scenario);
    let driver = LockdownPhone::new(Arc::new(FakeBackend {
        device: scenario.device.clone(),
        phone: phone.clone(),
    }));
    // CoreDevice's launch returns the new pid, which its process list already shows.
    phone.spawn_process(9_999, &format!("{BUNDLE}/CrashTest"));
    driver
        .app_launched(&scenario.device, &scenario.app.app, 9_999)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(phone.opened().contains(&9_999));
}

#[test]
fn simulator_ids_are_told_apart_from_iphone_udids() {
    assert!(looks_like_simulator("F2A5C1D0-1234-4ABC-9DEF-0123456789AB"));
    assert!(!looks_like_simulator("00008101-000A1234567890AB"));
    assert!(!looks_like_simulator(
        "0123456789abcdef0123456789abcdef01234567"
    ));
}

/// A backend whose phone never answers.
struct Silent;

#[async_trait::async_trait]
impl phonelogs_ios::services::DeviceBackend for Silent {
    async fn devices(&self) -> phonelogs_driver::Result<Vec<phonelogs_driver::DeviceInfo>> {
        std::future::pending().await
    }
    async fn connect(
        &self,
        _: &DeviceId,
    ) -> phonelogs_driver::Result<phonelogs_ios::services::DeviceServices> {
        std::future::pending().await
    }
}

#[tokio::test(start_paused = true)]
async fn a_phone_that_never_answers_times_out() {
    let driver = LockdownPhone::new(Arc::new(Silent));
    let device = DeviceId::new("00008101-000A1234567890AB");
    assert_eq!(
        driver.devices().await.unwrap_err().kind(),
        ErrorKind::Timeout
    );
    let app = AppId::new("dev.phonelogs.crashtest");
    let error = driver
        .app_logs(
            &device,
            &app,
            &LogQuery::since(datetime!(2026-11-30 10:00 UTC), 5),
        )
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Timeout);
    let error = driver
        .app_crashes(&device, &app, datetime!(2026-11-30 10:00 UTC), 3)
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Timeout);
}
