//! The conformance suite: checks that every driver runs against itself.
//!
//! Like object_store's integration suite, each check takes only the trait object and a
//! [`Fixture`] that says what the device holds. A backend's test harness loads
//! [`Scenario::standard`] into its device (the fake phone directly, the simulated Android phone
//! through its scenario, the fake iOS services through their streams), builds the [`Fixture`], and
//! calls [`run_all`]. A new check added here reaches every driver.

use std::fmt;

use time::{Duration, OffsetDateTime};

use crate::{
    AppDebugger, AppId, AppInfo, AppLogger, CrashKind, CrashReport, DeviceId, DeviceState,
    ErrorKind, LogLevel, LogLine, LogQuery,
};

/// A string in every line and crash report of the app under test.
pub const APP_MARKER: &str = "CONFORMANCE-APP";
/// A string in every line and report of the other app: it must never reach a result.
pub const OTHER_MARKER: &str = "OTHER-APP-SECRET";
/// A string in the system's lines about the app: they must never reach a result either.
pub const SYSTEM_MARKER: &str = "SYSTEM-LINE-SECRET";

/// One app of a scenario, with what it logged and how it crashed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioApp {
    /// The app's id.
    pub app: AppId,
    /// The name people know it by.
    pub label: String,
    /// The Linux uid (Android); backends without uids ignore it.
    pub uid: u32,
    /// The process id its lines carry.
    pub pid: u32,
    /// One of the phone's own apps.
    pub system: bool,
    /// A development build.
    pub dev_build: bool,
    /// Its lines, oldest first.
    pub lines: Vec<LogLine>,
    /// Its crash reports, oldest first.
    pub crashes: Vec<CrashReport>,
}

/// What a device holds for the conformance checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scenario {
    /// The device's id.
    pub device: DeviceId,
    /// Every line and report is after this instant.
    pub start: OffsetDateTime,
    /// The app under test (a development build that logged and crashed).
    pub app: ScenarioApp,
    /// Another installed app, a release build, whose lines and reports must never show.
    pub other_app: ScenarioApp,
    /// One of the phone's own apps.
    pub system_app: ScenarioApp,
    /// Lines the system logged about the app (uid 1000): never part of the app's lines.
    pub system_lines: Vec<LogLine>,
    /// An app id that is not installed.
    pub missing_app: AppId,
}

fn line(
    start: OffsetDateTime,
    millis: i64,
    level: LogLevel,
    tag: &str,
    text: &str,
    pid: u32,
    uid: u32,
) -> LogLine {
    LogLine {
        time: start + Duration::milliseconds(millis),
        level,
        tag: tag.to_owned(),
        text: text.to_owned(),
        pid: Some(pid),
        tid: Some(pid),
        uid: Some(uid),
    }
}

impl Scenario {
    /// The standard scenario: Crash Test (debuggable) logs five lines of rising severity and
    /// crashes twice (a Java crash, then an ANR), a store app logs in between and crashes once,
    /// and the system logs about Crash Test. Times are whole milliseconds after `start`, so
    /// every backend's format can carry them.
    pub fn standard(device: DeviceId, start: OffsetDateTime) -> Scenario {
        let start = start.replace_nanosecond(0).unwrap_or(start);
        let (app_uid, app_pid) = (10_123, 4_242);
        let (other_uid, other_pid) = (10_200, 5_151);
        let app = crash_test_app(start, app_uid, app_pid);
        let other_app = store_app(start, other_uid, other_pid);
        let system_app = ScenarioApp {
            app: AppId::new("com.android.settings"),
            label: "Settings".into(),
            uid: 1_000,
            pid: 900,
            system: true,
            dev_build: false,
            lines: Vec::new(),
            crashes: Vec::new(),
        };
        let system_lines = vec![line(
            start,
            6_500,
            LogLevel::Info,
            "ActivityManager",
            &format!("{SYSTEM_MARKER} Process dev.phonelogs.crashtest (pid {app_pid}) has died"),
            600,
            1_000,
        )];
        Scenario {
            device,
            start,
            app,
            other_app,
            system_app,
            system_lines,
            missing_app: AppId::new("com.example.notinstalled"),
        }
    }
}

/// Crash Test of the standard scenario: a debuggable build that logs five lines of rising
/// severity and crashes twice (a Java crash, then an ANR).
fn crash_test_app(start: OffsetDateTime, app_uid: u32, app_pid: u32) -> ScenarioApp {
    let app_text = |s: &str| format!("{APP_MARKER} {s}");
    ScenarioApp {
        app: AppId::new("dev.phonelogs.crashtest"),
        label: "Crash Test".into(),
        uid: app_uid,
        pid: app_pid,
        system: false,
        dev_build: true,
        lines: vec![
            line(
                start,
                1_000,
                LogLevel::Info,
                "CrashTest",
                &app_text("started"),
                app_pid,
                app_uid,
            ),
            line(
                start,
                2_100,
                LogLevel::Debug,
                "CrashTest",
                &app_text("loading config"),
                app_pid,
                app_uid,
            ),
            line(
                start,
                3_200,
                LogLevel::Warn,
                "Net",
                &app_text("slow response"),
                app_pid,
                app_uid,
            ),
            line(
                start,
                4_300,
                LogLevel::Error,
                "CrashTest",
                &app_text("failed to save"),
                app_pid,
                app_uid,
            ),
            line(
                start,
                5_400,
                LogLevel::Error,
                "AndroidRuntime",
                &app_text("FATAL EXCEPTION: main"),
                app_pid,
                app_uid,
            ),
        ],
        crashes: vec![
            CrashReport {
                kind: CrashKind::JavaCrash,
                time: start + Duration::seconds(6),
                pid: Some(app_pid),
                process: "dev.phonelogs.crashtest".into(),
                summary: "java.lang.IllegalStateException: Crash button tapped".into(),
                text: format!(
                    "java.lang.IllegalStateException: Crash button tapped\n\tat dev.phonelogs.crashtest.MainActivity.onCrash(MainActivity.java:42)\n{APP_MARKER}\n"
                ),
                build: None,
            },
            CrashReport {
                kind: CrashKind::Anr,
                time: start + Duration::seconds(20),
                pid: Some(app_pid + 1),
                process: "dev.phonelogs.crashtest".into(),
                summary: "Input dispatching timed out".into(),
                text: format!("Subject: Input dispatching timed out\n{APP_MARKER}\n"),
                build: None,
            },
        ],
    }
}

/// The store app of the standard scenario: it logs in between Crash Test's lines (once under
/// Crash Test's tag) and crashes once.
fn store_app(start: OffsetDateTime, other_uid: u32, other_pid: u32) -> ScenarioApp {
    ScenarioApp {
        app: AppId::new("com.example.store"),
        label: "Store App".into(),
        uid: other_uid,
        pid: other_pid,
        system: false,
        dev_build: false,
        lines: vec![
            line(
                start,
                1_500,
                LogLevel::Info,
                "Store",
                &format!("{OTHER_MARKER} user=alice"),
                other_pid,
                other_uid,
            ),
            line(
                start,
                3_700,
                LogLevel::Error,
                "CrashTest",
                &format!("{OTHER_MARKER} token=abc"),
                other_pid,
                other_uid,
            ),
        ],
        crashes: vec![CrashReport {
            kind: CrashKind::JavaCrash,
            time: start + Duration::seconds(7),
            pid: Some(other_pid),
            process: "com.example.store".into(),
            summary: format!("java.lang.RuntimeException: {OTHER_MARKER}"),
            text: format!("java.lang.RuntimeException: {OTHER_MARKER}\n"),
            build: None,
        }],
    }
}

/// A check that did not hold: which, and what was seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The check's name.
    pub check: &'static str,
    /// What went wrong.
    pub message: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.check, self.message)
    }
}

/// The outcome of one check.
pub type CheckResult = Result<(), Failure>;

macro_rules! ensure {
    ($check:expr, $cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(Failure { check: $check, message: format!($($msg)+) });
        }
    };
}

fn driver_error(check: &'static str, what: &str, error: crate::Error) -> Failure {
    Failure {
        check,
        message: format!("{what} failed: {error}"),
    }
}

fn own_texts(lines: &[LogLine]) -> Vec<&str> {
    lines.iter().map(|l| l.text.as_str()).collect()
}

fn leaks(lines: &[LogLine]) -> Option<&LogLine> {
    lines.iter().find(|l| {
        !l.text.contains(APP_MARKER)
            || l.text.contains(OTHER_MARKER)
            || l.text.contains(SYSTEM_MARKER)
            || l.tag.contains(OTHER_MARKER)
    })
}

/// The device is listed, online, on the driver's platform.
pub async fn check_devices(logger: &dyn AppLogger, scenario: &Scenario) -> CheckResult {
    const CHECK: &str = "devices";
    let devices = logger
        .devices()
        .await
        .map_err(|e| driver_error(CHECK, "devices()", e))?;
    let platform = logger.capabilities().platform;
    let found = devices.iter().find(|d| d.id == scenario.device);
    ensure!(
        CHECK,
        found.is_some(),
        "{} is not among {devices:?}",
        scenario.device
    );
    if let Some(device) = found {
        ensure!(
            CHECK,
            device.state == DeviceState::Online,
            "state is {:?}",
            device.state
        );
        ensure!(
            CHECK,
            device.platform == platform,
            "platform {:?} != {platform:?}",
            device.platform
        );
    }
    Ok(())
}

/// All of the app's lines since the start, oldest first, and nothing of anyone else.
pub async fn check_logs_are_the_apps_own(
    logger: &dyn AppLogger,
    scenario: &Scenario,
) -> CheckResult {
    const CHECK: &str = "logs_are_the_apps_own";
    let query = LogQuery::since(scenario.start, 500);
    let result = logger
        .app_logs(&scenario.device, &scenario.app.app, &query)
        .await
        .map_err(|e| driver_error(CHECK, "app_logs", e))?;
    if let Some(bad) = leaks(&result.lines) {
        return Err(Failure {
            check: CHECK,
            message: format!("a line that is not the app's own: {bad:?}"),
        });
    }
    ensure!(
        CHECK,
        result.lines.windows(2).all(|w| w[0].time <= w[1].time),
        "lines are not oldest first"
    );
    let want = own_texts(&scenario.app.lines);
    let got = own_texts(&result.lines);
    if logger.capabilities().log_history {
        ensure!(CHECK, got == want, "lines {got:?}, expected {want:?}");
    } else {
        ensure!(
            CHECK,
            got.iter().all(|t| want.contains(t)),
            "unexpected lines {got:?}"
        );
    }
    for (got, want) in result.lines.iter().zip(&scenario.app.lines) {
        if got.text == want.text {
            ensure!(
                CHECK,
                got.time == want.time,
                "time {} != {} for {:?}",
                got.time,
                want.time,
                got.text
            );
            ensure!(
                CHECK,
                got.level == want.level,
                "level {:?} != {:?}",
                got.level,
                want.level
            );
            ensure!(
                CHECK,
                got.tag == want.tag,
                "tag {:?} != {:?}",
                got.tag,
                want.tag
            );
        }
    }
    Ok(())
}

/// Never a silent empty answer: a read that returns no line of an app that logged lines since
/// the start carries a notice that says why (lines could not be read, or the app is not
/// running); and no notice repeats a line of another app or of the system.
pub async fn check_no_silent_empty_answer(
    logger: &dyn AppLogger,
    scenario: &Scenario,
) -> CheckResult {
    const CHECK: &str = "no_silent_empty_answer";
    let query = LogQuery::since(scenario.start, 500);
    let result = logger
        .app_logs(&scenario.device, &scenario.app.app, &query)
        .await
        .map_err(|e| driver_error(CHECK, "app_logs", e))?;
    let explained = result
        .notices
        .iter()
        .any(|n| n.lines_may_be_missing() || *n == crate::LogNotice::NotRunning);
    ensure!(
        CHECK,
        !result.lines.is_empty() || scenario.app.lines.is_empty() || explained,
        "no line of an app that logged {} lines, and no notice saying why",
        scenario.app.lines.len()
    );
    let said = format!("{:?}", result.notices);
    ensure!(
        CHECK,
        !said.contains(OTHER_MARKER) && !said.contains(SYSTEM_MARKER),
        "a notice holds another app's or the system's text: {said}"
    );
    Ok(())
}

/// A count keeps the newest lines, shown oldest first, and says how many were left out.
pub async fn check_count_keeps_newest(logger: &dyn AppLogger, scenario: &Scenario) -> CheckResult {
    const CHECK: &str = "count_keeps_newest";
    if !logger.capabilities().log_history {
        return Ok(());
    }
    let query = LogQuery::since(scenario.start, 2);
    let result = logger
        .app_logs(&scenario.device, &scenario.app.app, &query)
        .await
        .map_err(|e| driver_error(CHECK, "app_logs", e))?;
    let all = &scenario.app.lines;
    let want = own_texts(&all[all.len().saturating_sub(2)..]);
    ensure!(
        CHECK,
        own_texts(&result.lines) == want,
        "got {:?}, expected {want:?}",
        own_texts(&result.lines)
    );
    Ok(())
}

/// A level keeps that level and more severe ones.
pub async fn check_level(logger: &dyn AppLogger, scenario: &Scenario) -> CheckResult {
    const CHECK: &str = "level";
    if !logger.capabilities().log_history {
        return Ok(());
    }
    let mut query = LogQuery::since(scenario.start, 500);
    query.level = Some(LogLevel::Warn);
    let result = logger
        .app_logs(&scenario.device, &scenario.app.app, &query)
        .await
        .map_err(|e| driver_error(CHECK, "app_logs with a level", e))?;
    let want: Vec<&str> = scenario
        .app
        .lines
        .iter()
        .filter(|l| l.level >= LogLevel::Warn)
        .map(|l| l.text.as_str())
        .collect();
    ensure!(
        CHECK,
        own_texts(&result.lines) == want,
        "level warn gave {:?}, expected {want:?}",
        own_texts(&result.lines)
    );

    Ok(())
}

/// `since` leaves out older lines.
pub async fn check_since(logger: &dyn AppLogger, scenario: &Scenario) -> CheckResult {
    const CHECK: &str = "since";
    if !logger.capabilities().log_history {
        return Ok(());
    }
    let cut = scenario.app.lines[2].time;
    let result = logger
        .app_logs(
            &scenario.device,
            &scenario.app.app,
            &LogQuery::since(cut, 500),
        )
        .await
        .map_err(|e| driver_error(CHECK, "app_logs", e))?;
    ensure!(
        CHECK,
        result.lines.iter().all(|l| l.time >= cut),
        "a line before since: {:?}",
        result.lines
    );
    ensure!(
        CHECK,
        result.lines.len() == 3,
        "expected 3 lines since {cut}, got {}",
        result.lines.len()
    );
    let later = scenario.start + Duration::hours(1);
    let result = logger
        .app_logs(
            &scenario.device,
            &scenario.app.app,
            &LogQuery::since(later, 500),
        )
        .await
        .map_err(|e| driver_error(CHECK, "app_logs", e))?;
    ensure!(
        CHECK,
        result.lines.is_empty(),
        "lines after the last one: {:?}",
        result.lines
    );
    Ok(())
}

/// An app that is not installed is `NotFound`; a device that is not there is `DeviceNotFound`.
pub async fn check_unknowns(logger: &dyn AppLogger, scenario: &Scenario) -> CheckResult {
    const CHECK: &str = "unknowns";
    let query = LogQuery::since(scenario.start, 10);
    match logger
        .app_logs(&scenario.device, &scenario.missing_app, &query)
        .await
    {
        Err(e) => ensure!(
            CHECK,
            e.kind() == ErrorKind::NotFound,
            "a missing app gave {e}"
        ),
        Ok(r) => ensure!(CHECK, false, "a missing app gave {} lines", r.lines.len()),
    }
    match logger
        .app_info(&scenario.device, &scenario.missing_app)
        .await
    {
        Err(e) => ensure!(
            CHECK,
            e.kind() == ErrorKind::NotFound,
            "app_info of a missing app gave {e}"
        ),
        Ok(info) => ensure!(CHECK, false, "app_info of a missing app gave {info:?}"),
    }
    let nowhere = DeviceId::new("no-such-device-0000");
    match logger.app_logs(&nowhere, &scenario.app.app, &query).await {
        Err(e) => ensure!(
            CHECK,
            e.kind() == ErrorKind::DeviceNotFound,
            "a missing device gave {e}"
        ),
        Ok(_) => ensure!(CHECK, false, "a missing device answered"),
    }
    match logger
        .app_crashes(&nowhere, &scenario.app.app, scenario.start, 3)
        .await
    {
        Err(e) => ensure!(
            CHECK,
            e.kind() == ErrorKind::DeviceNotFound,
            "crashes on a missing device gave {e}"
        ),
        Ok(_) => ensure!(CHECK, false, "crashes on a missing device answered"),
    }
    Ok(())
}

/// The app's crash reports, newest first, within the limit and since, and none of another app.
pub async fn check_crashes(logger: &dyn AppLogger, scenario: &Scenario) -> CheckResult {
    const CHECK: &str = "crashes";
    if !logger.capabilities().crashes {
        return Ok(());
    }
    let reports = logger
        .app_crashes(&scenario.device, &scenario.app.app, scenario.start, 10)
        .await
        .map_err(|e| driver_error(CHECK, "app_crashes", e))?;
    ensure!(
        CHECK,
        reports.len() == scenario.app.crashes.len(),
        "{} reports, expected {}",
        reports.len(),
        scenario.app.crashes.len()
    );
    ensure!(
        CHECK,
        reports.windows(2).all(|w| w[0].time >= w[1].time),
        "reports are not newest first"
    );
    for report in &reports {
        ensure!(
            CHECK,
            !report.text.contains(OTHER_MARKER) && !report.summary.contains(OTHER_MARKER),
            "another app's report: {report:?}"
        );
    }
    for (got, want) in reports.iter().zip(scenario.app.crashes.iter().rev()) {
        ensure!(
            CHECK,
            got.kind == want.kind,
            "kind {:?} != {:?}",
            got.kind,
            want.kind
        );
        ensure!(
            CHECK,
            got.time == want.time,
            "time {} != {}",
            got.time,
            want.time
        );
        ensure!(
            CHECK,
            got.pid == want.pid,
            "pid {:?} != {:?}",
            got.pid,
            want.pid
        );
        ensure!(
            CHECK,
            got.summary.contains(&want.summary),
            "summary {:?} lacks {:?}",
            got.summary,
            want.summary
        );
    }
    let newest = logger
        .app_crashes(&scenario.device, &scenario.app.app, scenario.start, 1)
        .await
        .map_err(|e| driver_error(CHECK, "app_crashes with limit 1", e))?;
    ensure!(
        CHECK,
        newest.len() == 1 && Some(&newest[0]) == reports.first(),
        "limit 1 gave {newest:?}"
    );
    let later = scenario.start + Duration::hours(1);
    let none = logger
        .app_crashes(&scenario.device, &scenario.app.app, later, 10)
        .await
        .map_err(|e| driver_error(CHECK, "app_crashes since later", e))?;
    ensure!(CHECK, none.is_empty(), "reports after since: {none:?}");
    // The counted form finds the same reports, and the scenario's are all confirmed.
    let counted = logger
        .app_crash_result(&scenario.device, &scenario.app.app, scenario.start, 10)
        .await
        .map_err(|e| driver_error(CHECK, "app_crash_result", e))?;
    ensure!(
        CHECK,
        counted.reports == reports,
        "app_crash_result gave {:?}, app_crashes {reports:?}",
        counted.reports
    );
    ensure!(
        CHECK,
        counted.unconfirmed == 0,
        "{} of the scenario's reports unconfirmed",
        counted.unconfirmed
    );
    Ok(())
}

/// A driver that says its lines carry uids names the app's uid, and every line it returns
/// carries that uid: the gateway's own check of every line depends on it.
pub async fn check_line_uids(logger: &dyn AppLogger, scenario: &Scenario) -> CheckResult {
    const CHECK: &str = "line_uids";
    if !logger.capabilities().line_uids {
        return Ok(());
    }
    let info = logger
        .app_info(&scenario.device, &scenario.app.app)
        .await
        .map_err(|e| driver_error(CHECK, "app_info", e))?;
    ensure!(
        CHECK,
        info.uid == Some(scenario.app.uid),
        "app_info.uid = {:?}, expected {}",
        info.uid,
        scenario.app.uid
    );
    let result = logger
        .app_logs(
            &scenario.device,
            &scenario.app.app,
            &LogQuery::since(scenario.start, 500),
        )
        .await
        .map_err(|e| driver_error(CHECK, "app_logs", e))?;
    if let Some(bad) = result.lines.iter().find(|line| line.uid != info.uid) {
        return Err(Failure {
            check: CHECK,
            message: format!("a line without the app's uid {:?}: {bad:?}", info.uid),
        });
    }
    Ok(())
}

/// Development builds, system apps and labels as the device has them.
pub async fn check_app_info(logger: &dyn AppLogger, scenario: &Scenario) -> CheckResult {
    const CHECK: &str = "app_info";
    for expected in [&scenario.app, &scenario.other_app, &scenario.system_app] {
        let dev = logger
            .dev_build(&scenario.device, &expected.app)
            .await
            .map_err(|e| driver_error(CHECK, "dev_build", e))?;
        ensure!(
            CHECK,
            dev == expected.dev_build,
            "dev_build({}) = {dev}",
            expected.app
        );
        let info = logger
            .app_info(&scenario.device, &expected.app)
            .await
            .map_err(|e| driver_error(CHECK, "app_info", e))?;
        ensure!(
            CHECK,
            info.app == expected.app,
            "app_info names {}",
            info.app
        );
        ensure!(
            CHECK,
            info.dev_build == expected.dev_build,
            "app_info({}).dev_build = {}",
            expected.app,
            info.dev_build
        );
        ensure!(
            CHECK,
            info.system == expected.system,
            "app_info({}).system = {}",
            expected.app,
            info.system
        );
        // The phone's own apps often share a uid (`android.uid.system`); the others do not.
        ensure!(
            CHECK,
            expected.system || !info.shared_uid,
            "app_info({}) says it shares its uid",
            expected.app
        );
        ensure!(
            CHECK,
            info.uid.is_none_or(|uid| uid == expected.uid),
            "app_info({}).uid = {:?}, expected {}",
            expected.app,
            info.uid,
            expected.uid
        );
    }
    Ok(())
}

/// A listener can be stopped, twice, and says so in its capabilities.
pub async fn check_listener(logger: &dyn AppLogger, scenario: &Scenario) -> CheckResult {
    const CHECK: &str = "listener";
    let caps = logger.capabilities();
    ensure!(
        CHECK,
        caps.listener == logger.listener().is_some(),
        "capabilities.listener is {} but listener() disagrees",
        caps.listener
    );
    if let Some(listener) = logger.listener() {
        for _ in 0..2 {
            listener
                .stop_app_logs(&scenario.device, &scenario.app.app)
                .await
                .map_err(|e| driver_error(CHECK, "stop_app_logs", e))?;
        }
    }
    Ok(())
}

/// The debugging aids: arguments checked first, idempotent clears, empty histories, and a
/// process owner that is never named for a pid with no process.
pub async fn check_debugger(logger: &dyn AppLogger, scenario: &Scenario) -> CheckResult {
    const CHECK: &str = "debugger";
    let caps = logger.capabilities();
    ensure!(
        CHECK,
        caps.debugger == logger.debugger().is_some(),
        "capabilities.debugger is {} but debugger() disagrees",
        caps.debugger
    );
    let Some(debugger) = logger.debugger() else {
        return Ok(());
    };
    check_debugger_on(debugger, scenario).await
}

/// The aids that take a pid: 0 and -1 are refused as arguments, and a pid no process has
/// never names an owner.
async fn check_pids(debugger: &dyn AppDebugger, device: &DeviceId) -> CheckResult {
    const CHECK: &str = "debugger";
    for pid in [0, -1] {
        match debugger.native_backtrace(device, pid).await {
            Err(e) => ensure!(
                CHECK,
                e.kind() == ErrorKind::InvalidArgument,
                "backtrace of pid {pid} gave {e}"
            ),
            Ok(_) => ensure!(CHECK, false, "backtrace of pid {pid} answered"),
        }
        match debugger.native_tombstone(device, pid).await {
            Err(e) => ensure!(
                CHECK,
                e.kind() == ErrorKind::InvalidArgument,
                "tombstone of pid {pid} gave {e}"
            ),
            Ok(_) => ensure!(CHECK, false, "tombstone of pid {pid} answered"),
        }
    }
    for pid in [0, -1] {
        match debugger.process_owner(device, pid).await {
            Err(e) => ensure!(
                CHECK,
                e.kind() == ErrorKind::InvalidArgument,
                "the owner of pid {pid} gave {e}"
            ),
            Ok(owner) => ensure!(CHECK, false, "the owner of pid {pid} answered {owner:?}"),
        }
    }
    // Above any pid_max a kernel allows (2^22), so no process has it: resolving it must fail,
    // never name an owner.
    let dead = 2_147_483_000;
    match debugger.process_owner(device, dead).await {
        Err(e) => ensure!(
            CHECK,
            e.kind() != ErrorKind::InvalidArgument,
            "the owner of a dead pid was refused as an argument: {e}"
        ),
        Ok(owner) => ensure!(CHECK, false, "a dead pid has the owner {owner:?}"),
    }
    let owners = debugger
        .process_owners(device, &[0, dead])
        .await
        .map_err(|e| driver_error(CHECK, "process_owners of no live pid", e))?;
    ensure!(
        CHECK,
        owners.is_empty(),
        "owners of pids with no process: {owners:?}"
    );
    Ok(())
}

async fn check_debugger_on(debugger: &dyn AppDebugger, scenario: &Scenario) -> CheckResult {
    const CHECK: &str = "debugger";
    let device = &scenario.device;
    check_pids(debugger, device).await?;
    match debugger
        .process_exit_history(device, &AppId::new(" "))
        .await
    {
        Err(e) => ensure!(
            CHECK,
            e.kind() == ErrorKind::InvalidArgument,
            "a blank package gave {e}"
        ),
        Ok(_) => ensure!(CHECK, false, "a blank package answered"),
    }
    let history = debugger
        .process_exit_history(device, &scenario.missing_app)
        .await
        .map_err(|e| driver_error(CHECK, "exit history of a missing app", e))?;
    ensure!(
        CHECK,
        history.records.is_empty() && history.count == 0,
        "a missing app has history {history:?}"
    );
    let set = debugger
        .set_debug_app(device, &scenario.app.app, true, false)
        .await
        .map_err(|e| driver_error(CHECK, "set_debug_app", e))?;
    ensure!(
        CHECK,
        set.wait_for_debugger && !set.persistent && set.package == scenario.app.app.as_str(),
        "set_debug_app gave {set:?}"
    );
    for _ in 0..2 {
        let cleared = debugger
            .clear_debug_app(device)
            .await
            .map_err(|e| driver_error(CHECK, "clear_debug_app", e))?;
        ensure!(CHECK, cleared.cleared, "clear_debug_app gave {cleared:?}");
    }
    let jdwp = debugger
        .jdwp_processes(device)
        .await
        .map_err(|e| driver_error(CHECK, "jdwp_processes", e))?;
    let mut seen = std::collections::HashSet::new();
    ensure!(
        CHECK,
        jdwp.pids.iter().all(|p| seen.insert(*p)),
        "duplicate jdwp pids {:?}",
        jdwp.pids
    );
    ensure!(
        CHECK,
        jdwp.count == jdwp.pids.len(),
        "jdwp count {} for {:?}",
        jdwp.count,
        jdwp.pids
    );
    let nowhere = DeviceId::new("no-such-device-0000");
    match debugger.clear_debug_app(&nowhere).await {
        Err(e) => ensure!(
            CHECK,
            e.kind() == ErrorKind::DeviceNotFound,
            "a missing device gave {e}"
        ),
        Ok(_) => ensure!(CHECK, false, "a missing device answered"),
    }
    Ok(())
}

/// A driver whose reads confirm the facts a call was decided on
/// ([`crate::ConfirmingReader`]): after a look-up it holds the app's facts as the phone gave
/// them, a read expecting them returns the app's own lines, and a read expecting anything else
/// (each fact changed in turn) fails with `Changed` (or, for an app said to share its uid,
/// `Unsupported`) and returns nothing.
pub async fn check_confirming_reader(logger: &dyn AppLogger, scenario: &Scenario) -> CheckResult {
    const CHECK: &str = "confirming_reader";
    let Some(reader) = logger.confirming_reader() else {
        return Ok(());
    };
    let (device, app) = (&scenario.device, &scenario.app.app);
    let info = logger
        .app_info(device, app)
        .await
        .map_err(|e| driver_error(CHECK, "app_info", e))?;
    let held = reader.held_app_info(device, app);
    ensure!(
        CHECK,
        held.as_ref().is_some_and(|held| held.same_facts(&info)),
        "after app_info it holds {held:?}, not {info:?}"
    );
    let query = LogQuery::since(scenario.start, 500);
    let read = reader
        .confirmed_app_logs(device, &info, &query)
        .await
        .map_err(|e| driver_error(CHECK, "confirmed_app_logs of the facts it holds", e))?;
    ensure!(
        CHECK,
        !read.lines.is_empty() && leaks(&read.lines).is_none(),
        "a confirmed read gave {:?}",
        own_texts(&read.lines)
    );
    let version = Some(format!("{}1", info.version.as_deref().unwrap_or("")));
    let others = [
        AppInfo {
            dev_build: !info.dev_build,
            ..info.clone()
        },
        AppInfo {
            system: !info.system,
            ..info.clone()
        },
        AppInfo {
            shared_uid: !info.shared_uid,
            ..info.clone()
        },
        AppInfo {
            uid: Some(info.uid.map_or(1, |uid| uid.wrapping_add(1))),
            ..info.clone()
        },
        AppInfo {
            version,
            ..info.clone()
        },
    ];
    for other in &others {
        // An app said to share its uid may be refused before anything is read.
        let refused = |kind: ErrorKind| {
            kind == ErrorKind::Changed || (other.shared_uid && kind == ErrorKind::Unsupported)
        };
        match reader.confirmed_app_logs(device, other, &query).await {
            Err(e) => ensure!(
                CHECK,
                refused(e.kind()),
                "a read expecting {other:?} gave {e}"
            ),
            Ok(read) => ensure!(
                CHECK,
                false,
                "a read expecting {other:?} answered {} lines",
                read.lines.len()
            ),
        }
        if logger.capabilities().crashes {
            match reader
                .confirmed_app_crash_result(device, other, scenario.start, 10)
                .await
            {
                Err(e) => ensure!(
                    CHECK,
                    refused(e.kind()),
                    "a crash read expecting {other:?} gave {e}"
                ),
                Ok(read) => ensure!(
                    CHECK,
                    false,
                    "a crash read expecting {other:?} answered {} reports",
                    read.reports.len()
                ),
            }
        }
    }
    Ok(())
}

/// Runs every check and returns the failures (empty when the driver conforms).
pub async fn run_all(logger: &dyn AppLogger, scenario: &Scenario) -> Vec<Failure> {
    let mut failures = Vec::new();
    let results = [
        check_devices(logger, scenario).await,
        check_logs_are_the_apps_own(logger, scenario).await,
        check_no_silent_empty_answer(logger, scenario).await,
        check_count_keeps_newest(logger, scenario).await,
        check_level(logger, scenario).await,
        check_since(logger, scenario).await,
        check_unknowns(logger, scenario).await,
        check_crashes(logger, scenario).await,
        check_line_uids(logger, scenario).await,
        check_app_info(logger, scenario).await,
        check_listener(logger, scenario).await,
        check_debugger(logger, scenario).await,
        check_confirming_reader(logger, scenario).await,
    ];
    for result in results {
        if let Err(failure) = result {
            failures.push(failure);
        }
    }
    failures
}
