//! The driver end to end against the simulated iPhone (`phonelogs-iossim`): idevice's real
//! usbmuxd client, lockdown with TLS from the simulator's pair record, os_trace_relay per pid,
//! installation_proxy, instruments' process list over DTX, the crash mover and AFC. Nothing
//! here is a fake written beside the driver: the bytes are the simulator's, which real
//! libimobiledevice and pymobiledevice3 tools accept (see `crates/iossim/tests`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use idevice::usbmuxd::UsbmuxdAddr;
use phonelogs_driver::conformance::{Scenario, run_all};
use phonelogs_driver::{
    AppId, AppLogger, CrashKind, DeviceId, ErrorKind, LogLevel, LogLine, LogQuery,
};
use phonelogs_ios::{LockdownPhone, UsbmuxdBackend};
use phonelogs_iossim::{App, IosSim, Level, Profile, Signing, SimPhone, Trust};
use time::macros::datetime;

const UDID: &str = "00008101-000A1234567890AB";

fn level(level: LogLevel) -> Option<Level> {
    // os_log has no verbose or warning level; such lines cannot come from an iPhone.
    match level {
        LogLevel::Debug => Some(Level::Debug),
        LogLevel::Info => Some(Level::Info),
        LogLevel::Error => Some(Level::Error),
        LogLevel::Fatal => Some(Level::Fault),
        LogLevel::Verbose | LogLevel::Warn => None,
    }
}

fn scenario() -> Scenario {
    let mut scenario = Scenario::standard(DeviceId::new(UDID), datetime!(2026-11-30 10:00 UTC));
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

fn driver(sim: &IosSim) -> LockdownPhone {
    let addr = sim.tcp_addr().expect("a loopback simulator");
    LockdownPhone::new(Arc::new(UsbmuxdBackend::with_addr(UsbmuxdAddr::TcpSocket(
        addr,
    ))))
}

async fn until(what: &str, mut done: impl FnMut() -> bool) {
    for _ in 0..200 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for {what}");
}

/// The app's lines, read again every 50 ms (5 s at most) until `enough` holds of them: the
/// follower delivers what the phone logs asynchronously.
async fn lines_until(
    driver: &LockdownPhone,
    device: &DeviceId,
    app: &AppId,
    query: &LogQuery,
    enough: impl Fn(&[LogLine]) -> bool,
) -> Vec<LogLine> {
    let mut lines = Vec::new();
    for _ in 0..100 {
        lines = driver.app_logs(device, app, query).await.unwrap().lines;
        if enough(&lines) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    lines
}

/// The scenario's apps on a phone: Crash Test (development build), a store app, Settings.
fn phone_for(scenario: &Scenario) -> SimPhone {
    let phone = SimPhone::empty(Profile {
        udid: UDID.into(),
        ..Profile::default()
    });
    phone.set_report_delays(Duration::ZERO, Duration::from_millis(20));
    let mut app = App::third_party(
        scenario.app.app.as_str(),
        &scenario.app.label,
        "CrashTest",
        "0A1B2C3D-0000-4000-8000-000000000001",
        "CrashTest.app",
        Signing::Development,
    );
    app.display_name = scenario.app.label.clone();
    let mut other = App::third_party(
        scenario.other_app.app.as_str(),
        &scenario.other_app.label,
        "Store",
        "0A1B2C3D-0000-4000-8000-000000000002",
        "Store.app",
        Signing::Store,
    );
    other.display_name = scenario.other_app.label.clone();
    let mut system = App::system(
        scenario.system_app.app.as_str(),
        &scenario.system_app.label,
        "Preferences",
        "/Applications/Preferences.app",
    );
    system.display_name = scenario.system_app.label.clone();
    phone.install(app);
    phone.install(other);
    phone.install(system);
    phone
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lockdown_phone_conforms_against_the_simulator() {
    let scenario = scenario();
    let phone = phone_for(&scenario);
    let sim = IosSim::bind_loopback(None, phone.clone()).await.unwrap();
    let app_pid = phone
        .launch_as(scenario.app.app.as_str(), scenario.app.pid)
        .unwrap();
    let other_pid = phone
        .launch_as(scenario.other_app.app.as_str(), scenario.other_app.pid)
        .unwrap();
    let springboard =
        phone.spawn_executable("/System/Library/CoreServices/SpringBoard.app/SpringBoard");
    let driver = driver(&sim);

    // The first call starts the follower; an iPhone has no history to read back.
    let first = driver
        .app_logs(
            &scenario.device,
            &scenario.app.app,
            &LogQuery::since(scenario.start, 500),
        )
        .await
        .unwrap();
    assert!(first.lines.is_empty());
    until("the app's stream", || {
        phone.streamed_pids().contains(&i64::from(app_pid))
    })
    .await;

    // Everyone logs; the app's lines carry the scenario's times, levels and tags.
    let label = |tag: &str, app: &AppId| (app.as_str().to_owned(), tag.to_owned());
    for (pid, lines, app) in [
        (app_pid, &scenario.app.lines, &scenario.app.app),
        (
            other_pid,
            &scenario.other_app.lines,
            &scenario.other_app.app,
        ),
        (
            springboard,
            &scenario.system_lines,
            &scenario.system_app.app,
        ),
    ] {
        for line in lines {
            let Some(level) = level(line.level) else {
                continue;
            };
            let (subsystem, category) = label(&line.tag, app);
            phone.log_at(
                pid,
                SystemTime::from(line.time),
                level,
                Some((&subsystem, &category)),
                &line.text,
            );
        }
    }
    let expected = scenario
        .app
        .lines
        .iter()
        .filter(|l| level(l.level).is_some())
        .count();
    lines_until(
        &driver,
        &scenario.device,
        &scenario.app.app,
        &LogQuery::since(scenario.start, 500),
        |lines| lines.len() >= expected,
    )
    .await;

    // The crashes, with their pids and times (the second one a relaunch's).
    for crash in &scenario.app.crashes {
        let pid = crash.pid.unwrap_or(app_pid);
        if pid != app_pid {
            phone.launch_as(scenario.app.app.as_str(), pid).unwrap();
        }
        phone.crash_at(pid, sim_kind(crash), SystemTime::from(crash.time), false);
    }
    for crash in &scenario.other_app.crashes {
        phone.crash_at(
            other_pid,
            sim_kind(crash),
            SystemTime::from(crash.time),
            false,
        );
    }

    let failures = run_all(&driver, &scenario).await;
    assert!(failures.is_empty(), "conformance failures: {failures:#?}");

    // Never a stream for the other app, the system, or all processes.
    assert!(
        phone
            .streamed_pids()
            .iter()
            .all(|pid| *pid == i64::from(app_pid)),
        "streams: {:?}",
        phone.streamed_pids()
    );
    // The other app's reports were never opened; the process list came from instruments.
    let opened: Vec<String> = phone.opened().into_iter().map(|o| o.service).collect();
    assert!(
        opened
            .iter()
            .any(|o| o == "com.apple.instruments.remoteserver"),
        "{opened:?}"
    );
    assert!(
        !opened
            .iter()
            .any(|o| o.starts_with("afc:open:") && o.contains("Store-")),
        "{opened:?}"
    );
}

fn sim_kind(crash: &phonelogs_driver::CrashReport) -> phonelogs_iossim::CrashKind {
    match crash.kind {
        CrashKind::Watchdog | CrashKind::Anr => {
            phonelogs_iossim::CrashKind::Watchdog(crash.summary.clone())
        }
        _ => phonelogs_iossim::CrashKind::Exception(crash.summary.clone()),
    }
}

/// The default simulated phone: Crash Test with its widget, `Example.app` beside
/// `Example.appx` (same executable name), Spotify with its own widget, the helper app whose
/// reports are named `CrashTestHelper-…`, and the WebDriverAgent runner.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_apps_own_processes_and_reports_are_read() {
    let phone = SimPhone::default_phone();
    phone.set_report_delays(Duration::ZERO, Duration::from_millis(20));
    let sim = IosSim::bind_loopback(None, phone.clone()).await.unwrap();
    let driver = driver(&sim);
    let device = DeviceId::new(phone.profile().udid);
    let since = time::OffsetDateTime::now_utc() - time::Duration::minutes(1);

    let app = AppId::new("dev.phonelogs.crashtest");
    let pid = phone.launch(app.as_str()).unwrap();
    let widget = phone
        .launch_extension(app.as_str(), "dev.phonelogs.crashtest.widget")
        .unwrap();
    let spotify_widget = phone
        .launch_extension("com.spotify.client", "com.spotify.client.widget")
        .unwrap();
    let example = AppId::new("com.example.app");
    let example_pid = phone.launch(example.as_str()).unwrap();
    let lookalike = phone.pid_of("com.example.appx").unwrap();

    for (app_id, wanted) in [(&app, vec![pid, widget]), (&example, vec![example_pid])] {
        driver
            .app_logs(&device, app_id, &LogQuery::since(since, 100))
            .await
            .unwrap();
        for p in &wanted {
            until("a stream", || {
                phone.streamed_pids().contains(&i64::from(*p))
            })
            .await;
        }
    }
    for (p, text) in [
        (pid, "app line"),
        (widget, "widget line"),
        (spotify_widget, "SPOTIFY-WIDGET-SECRET"),
        (example_pid, "example line"),
        (lookalike, "LOOKALIKE-SECRET"),
    ] {
        phone.log(p, Level::Error, Some(("test", "privacy")), text);
    }
    let query = LogQuery::since(since, 100);
    let lines = lines_until(&driver, &device, &app, &query, |lines| lines.len() >= 2).await;
    let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
    assert!(
        texts.contains(&"app line") && texts.contains(&"widget line"),
        "{texts:?}"
    );
    let example_lines = lines_until(&driver, &device, &example, &query, |lines| {
        lines.iter().any(|l| l.text == "example line")
    })
    .await;
    assert!(
        example_lines.iter().any(|l| l.text == "example line"),
        "{example_lines:?}"
    );
    for line in lines.iter().chain(&example_lines) {
        assert!(!line.text.contains("SECRET"), "{line:?}");
    }
    let streamed = phone.streamed_pids();
    for never in [spotify_widget, lookalike] {
        assert!(!streamed.contains(&i64::from(never)), "{streamed:?}");
    }
    assert!(
        !streamed.contains(&-1),
        "a stream for all processes: {streamed:?}"
    );

    // A crash of the app and one of the helper (a similar name) at the same time.
    phone.crash(
        pid,
        phonelogs_iossim::CrashKind::Exception("own crash".into()),
    );
    let helper = phone.launch("dev.phonelogs.crashtesthelper").unwrap();
    phone.crash(
        helper,
        phonelogs_iossim::CrashKind::Exception("HELPER-SECRET".into()),
    );
    let reports = driver.app_crashes(&device, &app, since, 10).await.unwrap();
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert!(reports[0].summary.contains("own crash"));
    let opened: Vec<String> = phone.opened().into_iter().map(|o| o.service).collect();
    assert!(
        !opened.iter().any(|o| o.contains("CrashTestHelper-")),
        "another app's report was read: {opened:?}"
    );

    // The WebDriverAgent runner is refused before anything is opened for it.
    let runner = AppId::new("com.facebook.WebDriverAgentRunner.xctrunner");
    let runner_pid = phone.pid_of(runner.as_str()).unwrap();
    let refused = driver
        .app_logs(&device, &runner, &LogQuery::since(since, 10))
        .await
        .unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::PermissionDenied);
    assert!(!phone.streamed_pids().contains(&i64::from(runner_pid)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trust_states_and_unplugging_are_what_a_phone_shows() {
    let phone = SimPhone::default_phone();
    let sim = IosSim::bind_loopback(None, phone.clone()).await.unwrap();
    let driver = driver(&sim);
    let device = DeviceId::new(phone.profile().udid);
    let app = AppId::new("dev.phonelogs.crashtest");
    let since = time::OffsetDateTime::now_utc();

    phone.set_trust(Trust::NotPaired);
    let listed = driver.devices().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].state, phonelogs_driver::DeviceState::NotPaired);
    let error = driver
        .app_crashes(&device, &app, since, 3)
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::DeviceUnavailable, "{error}");

    phone.set_trust(Trust::Locked);
    let error = driver
        .app_crashes(&device, &app, since, 3)
        .await
        .unwrap_err();
    assert!(
        error.to_string().to_lowercase().contains("unlock")
            || error.to_string().contains("PasswordProtected"),
        "{error}"
    );

    phone.set_trust(Trust::Trusted);
    driver.app_crashes(&device, &app, since, 3).await.unwrap();

    phone.set_attached(false);
    assert!(driver.devices().await.unwrap().is_empty());
    let error = driver
        .app_crashes(&device, &app, since, 3)
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::DeviceNotFound, "{error}");
}

/// 20,000 entries reach the follower whole (its cap); how fast, and its memory then, are
/// measured by the release bench `cargo bench -p phonelogs-demo --bench follower_vs_logcat`
/// (`docs/iossim.md`), not here: a debug test's timing would say nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_thousand_entries_through_the_follower() {
    let phone = SimPhone::default_phone();
    let sim = IosSim::bind_loopback(None, phone.clone()).await.unwrap();
    let driver = driver(&sim);
    let device = DeviceId::new(phone.profile().udid);
    let app = AppId::new("dev.phonelogs.crashtest");
    let pid = phone.launch(app.as_str()).unwrap();
    let since = time::OffsetDateTime::now_utc() - time::Duration::minutes(1);
    driver
        .app_logs(&device, &app, &LogQuery::since(since, 1))
        .await
        .unwrap();
    until("the stream", || {
        phone.streamed_pids().contains(&i64::from(pid))
    })
    .await;
    let total = 20_000u64;
    for i in 0..total {
        phone.log(
            pid,
            Level::Info,
            Some(("dev.phonelogs.crashtest", "bench")),
            &format!(
                "entry {i:05} with some text to make it about ninety bytes long, as a line is"
            ),
        );
        if i % 2_000 == 1_999 {
            // Let the stream drain, as a real app does not log 20,000 lines in one instant.
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    let mut held = 0;
    for _ in 0..400 {
        let status = driver.follower_status(&device, &app).unwrap();
        held = status.kept;
        if held >= total as usize {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(held >= 19_000, "only {held} of {total} arrived");
    assert!(
        held <= 20_000,
        "the follower keeps at most 20,000 lines, not {held}"
    );
    assert!(phone.entries_sent() >= total);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_mid_entry_is_reopened() {
    let phone = SimPhone::default_phone();
    phone.set_report_delays(Duration::ZERO, Duration::from_millis(20));
    let sim = IosSim::bind_loopback(None, phone.clone()).await.unwrap();
    let driver = driver(&sim);
    let device = DeviceId::new(phone.profile().udid);
    let app = AppId::new("dev.phonelogs.crashtest");
    let pid = phone.launch(app.as_str()).unwrap();
    let since = time::OffsetDateTime::now_utc() - time::Duration::minutes(1);
    driver
        .app_logs(&device, &app, &LogQuery::since(since, 10))
        .await
        .unwrap();
    until("the stream", || {
        phone.streamed_pids().contains(&i64::from(pid))
    })
    .await;
    phone.inject_fault(phonelogs_iossim::Fault::DropStreamMidEntry);
    phone.log(pid, Level::Error, None, "cut in half");
    until("a second stream", || {
        phone
            .streamed_pids()
            .iter()
            .filter(|p| **p == i64::from(pid))
            .count()
            >= 2
    })
    .await;
    phone.log(pid, Level::Error, None, "after the cut");
    let texts: Vec<String> = lines_until(
        &driver,
        &device,
        &app,
        &LogQuery::since(since, 10),
        |lines| lines.iter().any(|l| l.text == "after the cut"),
    )
    .await
    .into_iter()
    .map(|l| l.text)
    .collect();
    assert!(texts.iter().any(|t| t == "after the cut"), "{texts:?}");
    assert!(
        !texts.iter().any(|t| t.contains("cut in half")),
        "{texts:?}"
    );
}

/// The simulator's Unix socket listener (as `/var/run/usbmuxd` is): idevice reaches the phone
/// through a socket path, the same phone as over loopback, and the file is gone once the
/// simulator stops.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_unix_socket_serves_the_same_phone() {
    let dir = std::env::temp_dir().join(format!("phonelogs-iossim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let socket = dir.join("usbmuxd");
    let phone = SimPhone::default_phone();
    phone.set_report_delays(Duration::ZERO, Duration::from_millis(20));
    let mut sim = IosSim::new(phone.clone()).unwrap();
    sim.listen_unix(&socket).await.unwrap();
    assert_eq!(sim.addr(), socket.display().to_string());
    assert!(sim.tcp_addr().is_none());
    let driver = LockdownPhone::new(Arc::new(UsbmuxdBackend::with_addr(
        UsbmuxdAddr::UnixSocket(socket.display().to_string()),
    )));
    let listed = driver.devices().await.unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0].id, DeviceId::new(UDID));

    // A whole read through lockdown, TLS and AFC over the socket: the app's own report.
    let app = AppId::new("dev.phonelogs.crashtest");
    let since = time::OffsetDateTime::now_utc() - time::Duration::minutes(1);
    let pid = phone.launch(app.as_str()).unwrap();
    phone.crash(
        pid,
        phonelogs_iossim::CrashKind::Exception("over the socket".into()),
    );
    let mut reports = Vec::new();
    for _ in 0..100 {
        reports = driver
            .app_crashes(&listed[0].id, &app, since, 3)
            .await
            .unwrap();
        if !reports.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert!(
        reports[0].summary.contains("over the socket"),
        "{reports:?}"
    );
    assert!(driver.dev_build(&listed[0].id, &app).await.unwrap());

    sim.shutdown().await;
    assert!(!socket.exists(), "the socket file outlived the simulator");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A service that accepts its connection and never answers (`Fault::StallService`): every
/// device call has a timeout, so a read that needs the service fails with a timeout that names
/// what it waited for, within the call's time limit; a stalled crash mover only delays the
/// read by its limit (it is asked so that the newest reports show; what is there is still
/// read); and the driver works again once the service answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_service_is_a_clear_timeout_not_a_hang() {
    let phone = SimPhone::default_phone();
    phone.set_report_delays(Duration::ZERO, Duration::from_millis(20));
    let sim = IosSim::bind_loopback(None, phone.clone()).await.unwrap();
    let addr = sim.tcp_addr().unwrap();
    let call_timeout = Duration::from_millis(800);
    let driver = LockdownPhone::with_config(
        Arc::new(UsbmuxdBackend::with_addr(UsbmuxdAddr::TcpSocket(addr))),
        phonelogs_ios::PhoneConfig {
            call_timeout,
            ..phonelogs_ios::PhoneConfig::default()
        },
    );
    let device = DeviceId::new(UDID);
    let app = AppId::new("dev.phonelogs.crashtest");
    let since = time::OffsetDateTime::now_utc() - time::Duration::minutes(1);
    // A call makes several steps (connect, look up, list, read), each under the limit.
    let bound = call_timeout * 4 + Duration::from_secs(2);
    let stalled = |service: &str| {
        phone.clear_faults();
        phone.inject_fault(phonelogs_iossim::Fault::StallService(service.into()));
    };

    for service in [
        "com.apple.mobile.installation_proxy",
        "com.apple.crashreportcopymobile",
    ] {
        stalled(service);
        let error = tokio::time::timeout(bound, async {
            if service.contains("installation_proxy") {
                driver.dev_build(&device, &app).await.map(drop)
            } else {
                driver.app_crashes(&device, &app, since, 3).await.map(drop)
            }
        })
        .await
        .unwrap_or_else(|_| panic!("a call with {service} stalled hung past {bound:?}"))
        .expect_err("a stalled service cannot answer");
        assert_eq!(error.kind(), ErrorKind::Timeout, "{service}: {error}");
        assert!(
            error.to_string().contains("timed out after"),
            "{service}: {error}"
        );
    }

    stalled("com.apple.crashreportmover");
    let started = std::time::Instant::now();
    tokio::time::timeout(bound, driver.app_crashes(&device, &app, since, 3))
        .await
        .unwrap_or_else(|_| panic!("a read with the mover stalled hung past {bound:?}"))
        .expect("reports are read without the mover");
    assert!(started.elapsed() >= call_timeout, "{:?}", started.elapsed());

    phone.clear_faults();
    assert!(driver.dev_build(&device, &app).await.unwrap());
    driver.app_crashes(&device, &app, since, 3).await.unwrap();
}

/// Issue 28's review (idevice allocates what the wire claims): a phone that claims a crash
/// report is 2^60 bytes long (AFC's file info) while sending its real bytes. idevice's
/// `pull` reserved the claimed size before reading, which aborts the process; the driver reads
/// in chunks up to its own cap instead, and the report is read whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claimed_file_size_is_not_reserved_before_a_report_is_read() {
    let phone = SimPhone::default_phone();
    let sim = IosSim::bind_loopback(None, phone.clone()).await.unwrap();
    let driver = driver(&sim);
    let device = DeviceId::new(phone.profile().udid);
    let app = AppId::new("dev.phonelogs.crashtest");
    let since = time::OffsetDateTime::now_utc() - time::Duration::minutes(1);
    let pid = phone.launch(app.as_str()).unwrap();
    phone.crash(
        pid,
        phonelogs_iossim::CrashKind::Exception("claimed size".into()),
    );
    phone.inject_fault(phonelogs_iossim::Fault::ClaimedFileSize(1 << 60));
    let reports = driver.app_crashes(&device, &app, since, 3).await.unwrap();
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert!(reports[0].summary.contains("claimed size"), "{reports:?}");
}
