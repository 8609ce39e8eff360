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
use phonelogs_ios::sources::ProcessSource;
use phonelogs_ios::{LockdownPhone, UsbmuxdBackend};
use phonelogs_iossim::{App, IosSim, IosVersion, Level, Profile, Signing, SimPhone, Trust};
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

/// The app's lines, read again every 50 ms (10 s at most) until `enough` holds of them: the
/// follower delivers what the phone logs asynchronously.
async fn lines_until(
    driver: &LockdownPhone,
    device: &DeviceId,
    app: &AppId,
    query: &LogQuery,
    enough: impl Fn(&[LogLine]) -> bool,
) -> Vec<LogLine> {
    result_until(driver, device, app, query, |result| enough(&result.lines))
        .await
        .lines
}

/// The app's result, read again every 50 ms (10 s at most) until `done` holds of it; the last.
async fn result_until(
    driver: &LockdownPhone,
    device: &DeviceId,
    app: &AppId,
    query: &LogQuery,
    mut done: impl FnMut(&phonelogs_driver::LogResult) -> bool,
) -> phonelogs_driver::LogResult {
    let mut last = phonelogs_driver::LogResult::default();
    for _ in 0..200 {
        last = driver.app_logs(device, app, query).await.unwrap();
        if done(&last) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    last
}

/// The scenario's apps on a phone: Crash Test (development build), a store app, Settings.
fn phone_on(scenario: &Scenario, ios: IosVersion) -> SimPhone {
    let phone = SimPhone::empty(Profile {
        udid: UDID.into(),
        ..Profile::for_ios(ios)
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
    let (opened, _) = conform_on(IosVersion::V16_7_10, true).await;
    // The process list came from instruments (16.7 with the disk image): paths.
    assert!(
        opened
            .iter()
            .any(|o| o == "com.apple.instruments.remoteserver"),
        "{opened:?}"
    );
}

/// Issue 27: the conformance suite on every release the simulator plays, with and without the
/// developer disk image. With it the process list comes from instruments (16.7) or CoreDevice
/// through the tunnel (18.6, 26.1); without it (and on 17.2, where no tunnel exists) from
/// os_trace_relay's `PidList`, names only; lockdown's instruments is never asked on 17 and
/// later.
async fn conforms_with_and_without_the_disk_image(ios: IosVersion) {
    for ddi in [true, false] {
        let (opened, source) = conform_on(ios, ddi).await;
        let asked = |service: &str| opened.iter().any(|o| o == service);
        assert!(
            !(ios != IosVersion::V16_7_10 && asked("com.apple.instruments.remoteserver")),
            "{ios} asked lockdown's instruments: {opened:?}"
        );
        // With the image: instruments on 16.7, CoreDevice through the tunnel from 17.4 (paths,
        // extensions too); without it, and on 17.2 always, PidList.
        let want = match (ios, ddi) {
            (IosVersion::V16_7_10, true) => ProcessSource::Instruments,
            (IosVersion::V17_2, _) | (_, false) => ProcessSource::PidList,
            (_, true) => ProcessSource::CoreDevice,
        };
        assert_eq!(source, Some(want), "{ios}, disk image {ddi}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_driver_conforms_on_16_7_with_and_without_the_disk_image() {
    conforms_with_and_without_the_disk_image(IosVersion::V16_7_10).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_driver_conforms_on_17_2_with_and_without_the_disk_image() {
    conforms_with_and_without_the_disk_image(IosVersion::V17_2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_driver_conforms_on_18_6_with_and_without_the_disk_image() {
    conforms_with_and_without_the_disk_image(IosVersion::V18_6).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_driver_conforms_on_26_1_with_and_without_the_disk_image() {
    conforms_with_and_without_the_disk_image(IosVersion::V26_1).await;
}

/// Reads `app`'s lines of the last minutes until `done` holds of them (or 10 s pass).
async fn read_until(
    driver: &LockdownPhone,
    app: &AppId,
    since: time::OffsetDateTime,
    done: impl FnMut(&phonelogs_driver::LogResult) -> bool,
) -> phonelogs_driver::LogResult {
    let query = LogQuery::since(since, 500);
    result_until(driver, &DeviceId::new(UDID), app, &query, done).await
}

fn texts(result: &phonelogs_driver::LogResult) -> Vec<&str> {
    result.lines.iter().map(|l| l.text.as_str()).collect()
}

fn partly(result: &phonelogs_driver::LogResult) -> Option<(String, String)> {
    result.notices.iter().find_map(|n| match n {
        phonelogs_driver::LogNotice::PartlyUnreadable { cause, fix, .. } => {
            Some((cause.clone(), fix.clone()))
        }
        _ => None,
    })
}

/// 17.2 (no tunnel, no lockdown instruments): Crash Test's own lines arrive through `PidList`;
/// its widget's cannot, and the result says why and that 17.4 is what helps. `Example` and its
/// look-alike `Example.appx` share an executable name: the look-alike's stream is closed at its
/// first entry and none of its lines is passed on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_17_2_names_only_read_the_app_and_say_what_is_missing() {
    let phone = SimPhone::default_phone_on(IosVersion::V17_2);
    let sim = IosSim::bind_loopback(None, phone.clone()).await.unwrap();
    let driver = driver(&sim);
    let since = time::OffsetDateTime::now_utc() - time::Duration::minutes(1);
    let app = AppId::new("dev.phonelogs.crashtest");
    let pid = phone.launch(app.as_str()).unwrap();
    let widget = phone
        .launch_extension(app.as_str(), "dev.phonelogs.crashtest.widget")
        .unwrap();
    let example = AppId::new("com.example.app");
    let example_pid = phone.launch(example.as_str()).unwrap();
    let lookalike = phone.pid_of("com.example.appx").unwrap();
    for read in [&app, &example] {
        read_until(&driver, read, since, |_| true).await;
    }
    until("the streams", || {
        let streamed = phone.streamed_pids();
        [pid, example_pid, lookalike]
            .iter()
            .all(|p| streamed.contains(&i64::from(*p)))
    })
    .await;
    phone.log(pid, Level::Error, Some(("t", "p")), "app line");
    phone.log(widget, Level::Error, Some(("t", "p")), "widget line");
    phone.log(example_pid, Level::Error, Some(("t", "p")), "example line");
    phone.log(
        lookalike,
        Level::Error,
        Some(("t", "p")),
        "LOOKALIKE-SECRET",
    );
    let got = read_until(&driver, &app, since, |r| texts(r).contains(&"app line")).await;
    assert!(texts(&got).contains(&"app line"), "{:?}", texts(&got));
    assert!(!texts(&got).contains(&"widget line"));
    let (cause, fix) = partly(&got).expect("the widget's lines are said missing");
    assert!(cause.contains("17.2"), "{cause}");
    assert_eq!(fix, phonelogs_ios::sources::TUNNELD);
    let got = read_until(&driver, &example, since, |r| {
        texts(r).contains(&"example line")
    })
    .await;
    assert!(
        texts(&got).contains(&"example line") && !texts(&got).iter().any(|t| t.contains("SECRET")),
        "{:?}",
        texts(&got)
    );
    let status = driver
        .follower_status(&DeviceId::new(UDID), &example)
        .unwrap();
    assert_eq!(status.rejected, [lookalike]);
    assert!(!phone.streamed_pids().contains(&i64::from(widget)));
}

/// 16.7 after a restart with Developer Mode off: no developer disk image, so instruments is
/// refused; the app's lines come through `PidList` and the result names Developer Mode and
/// the mount. Once Developer Mode is on and the image mounted, the better source is asked
/// again within seconds and the widget's lines arrive too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn developer_mode_off_is_named_and_a_disk_image_mounted_mid_task_is_used() {
    let phone = SimPhone::default_phone_on(IosVersion::V16_7_10);
    phone.set_developer_mode(false);
    let sim = IosSim::bind_loopback(None, phone.clone()).await.unwrap();
    let driver = driver(&sim);
    let since = time::OffsetDateTime::now_utc() - time::Duration::minutes(1);
    let app = AppId::new("dev.phonelogs.crashtest");
    let pid = phone.launch(app.as_str()).unwrap();
    let widget = phone
        .launch_extension(app.as_str(), "dev.phonelogs.crashtest.widget")
        .unwrap();
    let first = read_until(&driver, &app, since, |_| true).await;
    let (cause, fix) = partly(&first).expect("the missing extensions are said");
    assert!(cause.contains("Developer Mode is off"), "{cause}");
    assert!(
        fix.starts_with("turn on Developer Mode") && fix.contains("mounter auto-mount"),
        "{fix}"
    );
    until("the app's stream", || {
        phone.streamed_pids().contains(&i64::from(pid))
    })
    .await;

    phone.set_developer_mode(true);
    phone.mount_ddi().unwrap();
    until("the widget's stream", || {
        phone.streamed_pids().contains(&i64::from(widget))
    })
    .await;
    phone.log(widget, Level::Error, Some(("t", "p")), "widget line");
    let got = read_until(&driver, &app, since, |r| texts(r).contains(&"widget line")).await;
    assert!(texts(&got).contains(&"widget line"), "{:?}", texts(&got));
    assert!(partly(&got).is_none(), "{:?}", got.notices);
}

/// The conformance suite against the simulator on release `ios`, with the developer disk image
/// mounted or not; the services the phone opened, by name, and the process source that answered.
async fn conform_on(ios: IosVersion, ddi: bool) -> (Vec<String>, Option<ProcessSource>) {
    let scenario = scenario();
    let phone = phone_on(&scenario, ios);
    if !ddi {
        phone.unmount_ddi();
    }
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
    // The first read knows the app runs and could be listed.
    assert!(
        !first.notices.iter().any(|n| n.lines_may_be_missing())
            || !ddi
            || ios != IosVersion::V16_7_10,
        "{:?}",
        first.notices
    );
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

    // The suite ends by stopping the follower: its source is read first.
    let source = driver
        .follower_status(&scenario.device, &scenario.app.app)
        .and_then(|status| status.source);
    let failures = run_all(&driver, &scenario).await;
    assert!(
        failures.is_empty(),
        "{ios}, disk image {ddi}: conformance failures: {failures:#?}"
    );

    // Never a stream for the other app, the system, or all processes.
    assert!(
        phone
            .streamed_pids()
            .iter()
            .all(|pid| *pid == i64::from(app_pid)),
        "streams: {:?}",
        phone.streamed_pids()
    );
    // The other app's reports were never opened.
    let opened: Vec<String> = phone.opened().into_iter().map(|o| o.service).collect();
    assert!(
        !opened
            .iter()
            .any(|o| o.starts_with("afc:open:") && o.contains("Store-")),
        "{opened:?}"
    );
    (opened, source)
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

    // The model is lockdown's `ProductType`, read before any session, so even a phone not
    // paired yet is listed with it (as `ideviceinfo --simple` shows it).
    let listed = driver.devices().await.unwrap();
    assert_eq!(
        listed[0].model.as_deref(),
        Some(phone.profile().product_type.as_str())
    );
    phone.set_trust(Trust::NotPaired);
    let listed = driver.devices().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].state, phonelogs_driver::DeviceState::NotPaired);
    assert_eq!(listed[0].model.as_deref(), Some("iPhone14,2"));
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

/// 26.1 after a restart (no disk image): the tunnel comes up but RSD lists no app service, so
/// the app's own lines come through `PidList` and the result names the mount. Once the image is
/// mounted the RSD handshake is made again (a `ServiceNotFound` does not stick), CoreDevice's
/// process list answers within seconds, and the widget's lines arrive too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_26_1_a_disk_image_mounted_mid_task_is_used_within_seconds() {
    let phone = SimPhone::default_phone_on(IosVersion::V26_1);
    phone.unmount_ddi();
    let sim = IosSim::bind_loopback(None, phone.clone()).await.unwrap();
    let driver = driver(&sim);
    let since = time::OffsetDateTime::now_utc() - time::Duration::minutes(1);
    let app = AppId::new("dev.phonelogs.crashtest");
    let pid = phone.launch(app.as_str()).unwrap();
    let widget = phone
        .launch_extension(app.as_str(), "dev.phonelogs.crashtest.widget")
        .unwrap();
    let first = read_until(&driver, &app, since, |_| true).await;
    let (cause, fix) = partly(&first).expect("the missing extensions are said");
    assert!(
        cause.contains("the developer disk image is not mounted"),
        "{cause}"
    );
    assert_eq!(fix, phonelogs_ios::sources::MOUNT);
    until("the app's stream", || {
        phone.streamed_pids().contains(&i64::from(pid))
    })
    .await;
    phone.log(pid, Level::Error, Some(("t", "p")), "app line");
    let got = read_until(&driver, &app, since, |r| texts(r).contains(&"app line")).await;
    assert!(texts(&got).contains(&"app line"));

    phone.mount_ddi().unwrap();
    until("the widget's stream", || {
        phone.streamed_pids().contains(&i64::from(widget))
    })
    .await;
    phone.log(widget, Level::Error, Some(("t", "p")), "widget line");
    let got = read_until(&driver, &app, since, |r| texts(r).contains(&"widget line")).await;
    assert!(texts(&got).contains(&"widget line"), "{:?}", texts(&got));
    assert!(partly(&got).is_none(), "{:?}", got.notices);
    let status = driver.follower_status(&DeviceId::new(UDID), &app).unwrap();
    assert_eq!(status.source, Some(ProcessSource::CoreDevice));
}

/// 26.1 with Developer Mode off: RSD lists no app service, and the result says Developer Mode
/// is off and where to turn it on, before the mount.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_26_1_developer_mode_off_is_named_with_its_fix() {
    let phone = SimPhone::default_phone_on(IosVersion::V26_1);
    phone.set_developer_mode(false);
    let sim = IosSim::bind_loopback(None, phone.clone()).await.unwrap();
    let driver = driver(&sim);
    let since = time::OffsetDateTime::now_utc() - time::Duration::minutes(1);
    let app = AppId::new("dev.phonelogs.crashtest");
    phone.launch(app.as_str()).unwrap();
    let first = read_until(&driver, &app, since, |_| true).await;
    let (cause, fix) = partly(&first).expect("the missing extensions are said");
    assert!(cause.contains("Developer Mode is off"), "{cause}");
    assert!(
        fix.starts_with("turn on Developer Mode (Settings › Privacy & Security › Developer Mode")
            && fix.contains("pymobiledevice3 mounter auto-mount"),
        "{fix}"
    );
}

/// A lockdown os_trace stream that opens and then stays silent (iOS 27 betas): the follower
/// opens the process's stream again through RSD's shim (`com.apple.os_trace_relay.shim.remote`)
/// and the app's lines arrive; later streams of that phone open through the shim first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_lockdown_stream_is_read_through_the_shim() {
    let phone = SimPhone::default_phone_on(IosVersion::V26_1);
    phone.inject_fault(phonelogs_iossim::Fault::SilentLockdownOsTrace);
    let sim = IosSim::bind_loopback(None, phone.clone()).await.unwrap();
    let driver = driver(&sim);
    let since = time::OffsetDateTime::now_utc() - time::Duration::minutes(1);
    let app = AppId::new("dev.phonelogs.crashtest");
    let pid = phone.launch(app.as_str()).unwrap();
    read_until(&driver, &app, since, |_| true).await;
    // Silent for 5 s, then opened through the shim: logged until a line comes through.
    let mut got = phonelogs_driver::LogResult::default();
    for round in 0..40 {
        phone.log(
            pid,
            Level::Error,
            Some(("t", "p")),
            &format!("line {round}"),
        );
        got = driver
            .app_logs(&DeviceId::new(UDID), &app, &LogQuery::since(since, 500))
            .await
            .unwrap();
        if !got.lines.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert!(!got.lines.is_empty(), "no line came through the shim");
    let opened: Vec<String> = phone.opened().into_iter().map(|o| o.service).collect();
    assert!(
        opened
            .iter()
            .any(|o| o.contains("com.apple.os_trace_relay.shim.remote")),
        "{opened:?}"
    );
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

/// Issue 37 (review F6): the iPhone gives no install time, so the driver says which install it
/// read (`AppInfo::install_id`, the bundle's path): a reinstall moves the bundle to a new
/// container, of the same build too, so the facts differ, and a store build re-signed for
/// development is another build by its path as well as its flag.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reinstall_moves_the_bundle_and_changes_the_apps_facts() {
    let phone = SimPhone::default_phone();
    let sim = IosSim::bind_loopback(None, phone.clone()).await.unwrap();
    let driver = driver(&sim);
    let device = DeviceId::new(UDID);
    let app = AppId::new("dev.phonelogs.crashtesthelper");
    let store = driver.app_info(&device, &app).await.unwrap();
    let path = store.install_id.clone().expect("the bundle's path");
    assert!(
        path.starts_with("/private/var/containers/Bundle/Application/")
            && path.ends_with("/CrashTestHelper.app"),
        "{path}"
    );
    assert!(!store.dev_build);
    assert!(store.same_facts(&driver.app_info(&device, &app).await.unwrap()));

    // The same build again: only the path tells it apart.
    let answer = phonelogs_iossim::control::run(&phone, "reinstall dev.phonelogs.crashtesthelper");
    let again = driver.app_info(&device, &app).await.unwrap();
    assert_eq!(
        answer,
        format!("path {}", again.install_id.clone().unwrap())
    );
    assert_ne!(again.install_id, store.install_id);
    assert!(!store.same_facts(&again));

    // Signed for development: another build by its flag and its path.
    let signed =
        phonelogs_iossim::control::run(&phone, "sign dev.phonelogs.crashtesthelper development");
    assert_eq!(signed, "ok");
    let dev = driver.app_info(&device, &app).await.unwrap();
    assert!(dev.dev_build);
    assert_ne!(dev.install_id, again.install_id);
    sim.shutdown().await;
}
