//! The gateway's decisions over this driver on the simulated phone: what the person is asked
//! depends on what the phone says of the app now, not on what the driver saw earlier.

// Tests may unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;

use common::config;
use phonelogs_adbsim::{BuildType, HostFront, Package, Priority, Profile, SimPhone};
use phonelogs_android::AdbPhone;
use phonelogs_driver::AppLogger;
use phonelogs_gateway::{
    Agent, Answer, DebugRequest, DebugStatus, Gateway, LogsKind, LogsRequest, LogsResponse, Mode,
    Status, TaskSpec,
};

const CRASH_TEST: &str = "dev.phonelogs.crashtest";

/// `adb install -r` of a release build over the development build keeps the uid, so a driver
/// that kept `DEBUGGABLE` from the first call would let `debuggerd` pause the release build
/// without asking anyone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_build_installed_over_a_debug_build_is_asked_about_before_debuggerd() {
    let profile = Profile {
        build_type: BuildType::Userdebug,
        ..Profile::default()
    };
    let phone = SimPhone::with_profile(profile);
    let (address, _handle) = HostFront::bind(None, phone.clone()).await.unwrap();
    let driver = Arc::new(AdbPhone::new(config(address.port())));
    let serial = phone.profile().serial;
    let gateway = Gateway::builder()
        .driver(driver.clone() as Arc<dyn AppLogger>)
        .build()
        .unwrap();
    let session = gateway.start_task(TaskSpec::new(Agent::new("agent", Mode::Full)));
    let backtrace = |pid: u32| DebugRequest::CaptureNativeBacktrace {
        serial: serial.clone(),
        pid: i64::from(pid),
        approval_id: None,
    };

    // The development build: nobody is asked, and the driver keeps what it read.
    let pid = phone.pid_of(CRASH_TEST).unwrap();
    let first = session.debug(backtrace(pid)).await;
    assert_eq!(first.status, DebugStatus::Success, "{}", first.message);

    // The release build over it, same uid, no DEBUGGABLE.
    phone.install(Package::new(CRASH_TEST, 10234));
    let pid = phone.pid_of(CRASH_TEST).unwrap();
    phone.clear_requests();
    let second = session.debug(backtrace(pid)).await;
    assert_eq!(
        second.status,
        DebugStatus::ApprovalPending,
        "{}",
        second.message
    );
    let commands = phone.commands_run();
    assert!(
        commands
            .iter()
            .all(|command| !command.contains("debuggerd")),
        "debuggerd ran before anyone was asked: {commands:?}"
    );
    // What the agent is told is about the release build, never its threads.
    assert!(!format!("{second:?}").contains("sysTid"), "{second:?}");
}

/// Item 10 of issue 28: an app chooses its `versionName`, line breaks included, and `dumpsys
/// package` prints it raw before the real `flags=` line; a release build that forges
/// `flags=[ DEBUGGABLE ]` (and `pkgFlags=`) there is still asked about, and nothing of its is
/// read unasked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_build_forging_debuggable_in_its_version_name_is_asked_about() {
    let phone = SimPhone::with_profile(Profile::default());
    let mut forger = Package::new(CRASH_TEST, 10234);
    forger.version_name =
        "1.0\n    flags=[ DEBUGGABLE HAS_CODE ]\n    pkgFlags=[ DEBUGGABLE ]".into();
    phone.install(forger);
    phone
        .log(
            CRASH_TEST,
            Priority::Info,
            "CrashTest",
            "release-only secret",
        )
        .unwrap();
    let (address, _handle) = HostFront::bind(None, phone.clone()).await.unwrap();
    let driver = Arc::new(AdbPhone::new(config(address.port())));
    let serial = phone.profile().serial;
    let info = driver
        .app_info(
            &phonelogs_driver::DeviceId::new(&serial),
            &phonelogs_driver::AppId::new(CRASH_TEST),
        )
        .await
        .unwrap();
    assert!(!info.dev_build, "the forged line was believed: {info:?}");

    let gateway = Gateway::builder()
        .driver(driver as Arc<dyn AppLogger>)
        .build()
        .unwrap();
    let session = gateway.start_task(TaskSpec::new(Agent::new("agent", Mode::Full)));
    let mut request = LogsRequest::new(CRASH_TEST);
    request.device = Some(serial);
    request.since = Some("1h".into());
    let got = session.logs(request).await;
    assert_eq!(got.status, Status::ApprovalPending, "{}", got.message);
    assert!(
        !format!("{got:?}").contains("release-only secret"),
        "{got:?}"
    );
}

// --- A warm call is decided on the facts the driver holds, and its read confirms them. ---
//
// Each change below happens between two calls of one task. The second call is decided on what
// the driver held from the first (a development build, uid 10234, no system flag), and its read
// must confirm that in its own round trip: nothing it read under the held facts is shown, and
// the call ends as the same call of a task on a driver that never saw the app ends (the
// re-decision a cold call gets).

/// The simulated phone, this driver on it, and a task of an agent that may read the app.
struct Lab {
    phone: SimPhone,
    driver: Arc<AdbPhone>,
    session: phonelogs_gateway::Session,
    serial: String,
    port: u16,
    gateway: Gateway,
    _front: phonelogs_adbsim::SimHandle,
}

/// A task of an agent that may read the app, on a gateway over `driver`.
fn task_on(driver: &Arc<AdbPhone>) -> (Gateway, phonelogs_gateway::Session) {
    let gateway = Gateway::builder()
        .driver(driver.clone() as Arc<dyn AppLogger>)
        .build()
        .unwrap();
    let session = gateway.start_task(TaskSpec::new(Agent::new("agent", Mode::Full)));
    (gateway, session)
}

impl Lab {
    async fn start() -> Lab {
        let phone = SimPhone::with_profile(Profile::default());
        let (address, front) = HostFront::bind(None, phone.clone()).await.unwrap();
        let driver = Arc::new(AdbPhone::new(config(address.port())));
        let (gateway, session) = task_on(&driver);
        Lab {
            serial: phone.profile().serial,
            phone,
            driver,
            session,
            port: address.port(),
            gateway,
            _front: front,
        }
    }

    /// What the agent asks for: the app's lines, or its crash reports, of the last hour.
    fn request(&self, kind: LogsKind) -> LogsRequest {
        let mut request = LogsRequest::new(CRASH_TEST);
        request.device = Some(self.serial.clone());
        request.since = Some("1h".into());
        request.kind = kind;
        request
    }

    /// The app's lines of the last hour, as the agent asks for them.
    async fn read(&self) -> LogsResponse {
        self.session.logs(self.request(LogsKind::Logs)).await
    }

    /// The same call by a task on a driver of its own, which holds nothing: a cold call.
    async fn cold(&self, kind: LogsKind) -> LogsResponse {
        let driver = Arc::new(AdbPhone::new(config(self.port)));
        let (_gateway, session) = task_on(&driver);
        session.logs(self.request(kind)).await
    }

    /// Checks that no command that reads lines or reports ran since the phone's requests were
    /// last cleared.
    fn nothing_read(&self) {
        let commands = self.phone.commands_run();
        assert!(
            commands
                .iter()
                .all(|command| !command.contains("logcat") && !command.contains("dropbox")),
            "{commands:?}"
        );
    }

    fn log(&self, package: &str, text: &str) {
        self.phone
            .log(package, Priority::Info, "CrashTest", text)
            .unwrap();
    }

    /// The Crash Test app as it is installed on the default phone, changed by `change`, put
    /// over it with the same uid (`adb install -r`).
    fn reinstall(&self, change: impl FnOnce(&mut Package)) {
        let mut package = Package::new(CRASH_TEST, 10234);
        package.debuggable = true;
        package.target_sdk = 29;
        change(&mut package);
        self.phone.install(package);
    }

    /// The app uninstalled (through adb, as a person would), another app installed with its
    /// old uid, and the app installed again with a new one.
    async fn reinstall_with_a_new_uid(&self) {
        let old = self.phone.uid_of(CRASH_TEST, 0).unwrap();
        let uninstalled = self
            .driver
            .server()
            .shell(&self.serial, &format!("pm uninstall {CRASH_TEST}"))
            .await
            .unwrap();
        assert!(uninstalled.stdout_text().contains("Success"));
        let mut foreign = Package::new(FOREIGN, old);
        foreign.debuggable = true;
        self.phone.install(foreign);
        let mut again = Package::new(CRASH_TEST, 10300);
        again.debuggable = true;
        self.phone.install(again);
        assert_eq!(self.phone.uid_of(CRASH_TEST, 0), Some(10300));
        assert_eq!(self.phone.uid_of(FOREIGN, 0), Some(old));
    }

    /// A first call of `kind`, allowed and read; `change` on the phone; then the same call
    /// again, decided on the facts the driver held from the first. Returns the second call's
    /// response and the round trips it made, after checking that it shows none of `secrets`
    /// (what the phone holds that it must not show) and that it ends as a cold call does.
    async fn changed_between_two_calls(
        &self,
        kind: LogsKind,
        change: impl AsyncFnOnce(&Lab),
        secrets: &[&str],
    ) -> (LogsResponse, u64) {
        let first = self.session.logs(self.request(kind)).await;
        assert_eq!(first.status, Status::Ok, "{}", first.message);
        change(self).await;
        let trips = self.driver.round_trips();
        let warm = self.session.logs(self.request(kind)).await;
        let trips = self.driver.round_trips() - trips;
        for secret in secrets {
            assert!(!shown(&warm).contains(secret), "{secret:?} shown: {warm:?}");
        }
        let cold = self.cold(kind).await;
        assert_eq!(decision(&warm), decision(&cold), "{warm:?}\n{cold:?}");
        (warm, trips)
    }
}

/// An app that is not the one under test.
const FOREIGN: &str = "com.example.foreign";

/// Everything a response carries, to look for a line in.
fn shown(response: &LogsResponse) -> String {
    format!("{response:?}")
}

/// What a call came to, as a cold call's is compared with it: the status, the rule, the
/// message (an approval's id aside, which each task gets its own of) and what it shows.
fn decision(response: &LogsResponse) -> (Status, Option<String>, String, String, usize, usize) {
    let mut message = response.message.clone();
    if let Some(id) = &response.approval_id {
        message = message.replace(id.as_str(), "<approval id>");
    }
    (
        response.status,
        response.rule.clone(),
        message,
        response.log.clone(),
        response.shown,
        response.left_out,
    )
}

/// A release build installed over the development build between two calls keeps the uid: the
/// second call, decided on the held "development build", is read with the round trip's own
/// `dumpsys package`, which says otherwise, so nothing read is shown and the person is asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_build_installed_between_two_calls_is_asked_about_and_none_of_its_lines_shown() {
    let lab = Lab::start().await;
    lab.log(CRASH_TEST, "debug build line");
    let (second, trips) = lab
        .changed_between_two_calls(
            LogsKind::Logs,
            async |lab| {
                lab.reinstall(|package| package.debuggable = false);
                lab.log(CRASH_TEST, "release-only secret");
            },
            &["release-only secret", "debug build line"],
        )
        .await;
    assert_eq!(second.status, Status::ApprovalPending, "{}", second.message);
    assert!(
        second.lines.is_empty() && second.log.is_empty(),
        "{second:?}"
    );
    // The held facts' read, which saw the release build, then `app_info` read fresh for the
    // question.
    assert_eq!(trips, 2);
}

/// The same for crash reports: a release build's crash is not shown unasked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_build_installed_between_two_crash_reads_is_asked_about() {
    let lab = Lab::start().await;
    let (second, trips) = lab
        .changed_between_two_calls(
            LogsKind::Crashes,
            async |lab| {
                lab.reinstall(|package| package.debuggable = false);
                lab.phone
                    .crash(
                        CRASH_TEST,
                        "java.lang.IllegalStateException",
                        "release-only crash",
                    )
                    .unwrap();
            },
            &["release-only crash"],
        )
        .await;
    assert_eq!(second.status, Status::ApprovalPending, "{}", second.message);
    assert!(second.reports.is_empty(), "{second:?}");
    assert_eq!(trips, 2);
}

/// The app uninstalled and installed again with a new uid between two calls, and its old uid
/// taken by another app: the held uid is never read with. The read's own `pm list packages -U`
/// sees the new uid, nothing it read is shown, and the call reads again with the new one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reinstall_with_a_new_uid_between_two_calls_reads_nothing_of_the_old_or_a_foreign_uid() {
    let lab = Lab::start().await;
    lab.log(CRASH_TEST, "old install line");
    let (second, _) = lab
        .changed_between_two_calls(
            LogsKind::Logs,
            async |lab| {
                lab.reinstall_with_a_new_uid().await;
                lab.log(FOREIGN, "foreign secret");
                lab.log(CRASH_TEST, "new install line");
            },
            &["foreign secret", "old install line"],
        )
        .await;
    assert_eq!(second.status, Status::Ok, "{}", second.message);
    assert!(second.log.contains("new install line"), "{}", second.log);
}

/// The same for crash reports: the other app now holding the old uid crashes, and so does the
/// app under its new uid; only the app's own crash is shown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reinstall_with_a_new_uid_between_two_crash_reads_shows_none_of_the_old_uids_crashes() {
    let lab = Lab::start().await;
    let (second, _) = lab
        .changed_between_two_calls(
            LogsKind::Crashes,
            async |lab| {
                lab.reinstall_with_a_new_uid().await;
                lab.phone
                    .crash(
                        FOREIGN,
                        "java.lang.IllegalStateException",
                        "foreign crash secret",
                    )
                    .unwrap();
                lab.phone
                    .crash(
                        CRASH_TEST,
                        "java.lang.IllegalStateException",
                        "new install crash",
                    )
                    .unwrap();
            },
            &["foreign crash secret"],
        )
        .await;
    assert_eq!(second.status, Status::Ok, "{}", second.message);
    assert!(second.log.contains("new install crash"), "{}", second.log);
}

/// The app turning into one of the phone's own (a system flag appearing) between two calls is
/// refused, and nothing read under the held facts is shown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_system_flag_appearing_between_two_calls_is_refused() {
    let lab = Lab::start().await;
    let (second, _) = lab
        .changed_between_two_calls(
            LogsKind::Logs,
            async |lab| {
                lab.reinstall(|package| package.system = true);
                lab.log(CRASH_TEST, "system app secret");
            },
            &["system app secret"],
        )
        .await;
    assert_eq!(second.status, Status::BlockedByPolicy, "{}", second.message);
}

/// The same for crash reports.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_system_flag_appearing_between_two_crash_reads_is_refused() {
    let lab = Lab::start().await;
    let (second, _) = lab
        .changed_between_two_calls(
            LogsKind::Crashes,
            async |lab| {
                lab.reinstall(|package| package.system = true);
                lab.phone
                    .crash(
                        CRASH_TEST,
                        "java.lang.IllegalStateException",
                        "system app crash",
                    )
                    .unwrap();
            },
            &["system app crash"],
        )
        .await;
    assert_eq!(second.status, Status::BlockedByPolicy, "{}", second.message);
}

/// A warm call that would be refused (one of the phone's own apps) is refused on facts read
/// fresh, and nothing is read: held facts only ever let a call go.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_app_is_refused_again_on_a_warm_call_and_nothing_read() {
    let lab = Lab::start().await;
    lab.reinstall(|package| package.system = true);
    lab.log(CRASH_TEST, "system app secret");
    for kind in [LogsKind::Logs, LogsKind::Crashes] {
        let first = lab.session.logs(lab.request(kind)).await;
        assert_eq!(first.status, Status::BlockedByPolicy, "{}", first.message);
        lab.phone.clear_requests();
        let second = lab.session.logs(lab.request(kind)).await;
        assert_eq!(second.status, Status::BlockedByPolicy, "{}", second.message);
        assert!(!shown(&second).contains("system app secret"), "{second:?}");
        lab.nothing_read();
    }
}

/// A release build the person has not answered about yet: a warm call asks the same question
/// again (decided on facts read fresh) and reads nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_still_open_is_asked_again_on_a_warm_call_and_nothing_read() {
    let lab = Lab::start().await;
    lab.reinstall(|package| package.debuggable = false);
    lab.log(CRASH_TEST, "release-only secret");
    let first = lab.read().await;
    assert_eq!(first.status, Status::ApprovalPending, "{}", first.message);
    lab.phone.clear_requests();
    let second = lab.read().await;
    assert_eq!(second.status, Status::ApprovalPending, "{}", second.message);
    assert_eq!(second.approval_id, first.approval_id);
    assert!(
        !shown(&second).contains("release-only secret"),
        "{second:?}"
    );
    lab.nothing_read();
}

/// An answer picked up by a warm call is the person's, read from the store, never held facts:
/// a denial is a denial and reads nothing; an "Allow once" lets that one call read, and the
/// next warm call is asked about again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_picked_up_on_a_warm_call_is_the_persons() {
    let lab = Lab::start().await;
    lab.reinstall(|package| package.debuggable = false);
    lab.log(CRASH_TEST, "release line");
    let with = |id: &Option<String>| {
        let mut request = lab.request(LogsKind::Logs);
        request.approval_id.clone_from(id);
        request
    };

    let asked = lab.read().await;
    assert_eq!(asked.status, Status::ApprovalPending, "{}", asked.message);
    lab.gateway
        .store()
        .answer(asked.approval_id.as_deref().unwrap(), Answer::Deny)
        .unwrap();
    lab.phone.clear_requests();
    let denied = lab.session.logs(with(&asked.approval_id)).await;
    assert_eq!(denied.status, Status::Denied, "{}", denied.message);
    assert!(!shown(&denied).contains("release line"), "{denied:?}");
    lab.nothing_read();

    // Another task, on a gateway of its own over the same driver (which holds the facts).
    let (gateway, session) = task_on(&lab.driver);
    let asked = session.logs(lab.request(LogsKind::Logs)).await;
    assert_eq!(asked.status, Status::ApprovalPending, "{}", asked.message);
    gateway
        .store()
        .answer(asked.approval_id.as_deref().unwrap(), Answer::Once)
        .unwrap();
    let once = session.logs(with(&asked.approval_id)).await;
    assert_eq!(once.status, Status::Ok, "{}", once.message);
    assert!(once.log.contains("release line"), "{}", once.log);
    lab.phone.clear_requests();
    let again = session.logs(lab.request(LogsKind::Logs)).await;
    assert_eq!(again.status, Status::ApprovalPending, "{}", again.message);
    lab.nothing_read();
}

/// Held facts never ask: a release build asked about on the first call and replaced by a
/// development build is read fresh before a question would be put, and nobody is asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_on_held_facts_is_decided_on_fresh_ones() {
    decided_on_fresh_facts(
        |package| package.debuggable = false,
        Status::ApprovalPending,
    )
    .await;
}

/// Held facts never refuse: one of the phone's own apps, refused on the first call, that is an
/// ordinary development build by the second, is read fresh before a refusal, and read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_on_held_facts_is_decided_on_fresh_ones() {
    decided_on_fresh_facts(|package| package.system = true, Status::BlockedByPolicy).await;
}

/// The app installed as `first` makes the first call end as `status`; reinstalled as an
/// ordinary development build, its new line is read on the second call.
async fn decided_on_fresh_facts(first: impl FnOnce(&mut Package), status: Status) {
    let lab = Lab::start().await;
    lab.reinstall(first);
    let got = lab.read().await;
    assert_eq!(got.status, status, "{}", got.message);

    lab.reinstall(|_| {});
    lab.log(CRASH_TEST, "debug build line");
    let second = lab.read().await;
    assert_eq!(second.status, Status::Ok, "{}", second.message);
    assert!(second.log.contains("debug build line"), "{}", second.log);
}

/// A release build the person allowed for the task: a warm call goes on the held facts and the
/// grant (an allowing decision, which the read confirms), in one round trip.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grant_lets_a_warm_call_go_on_held_facts_in_one_round_trip() {
    let lab = Lab::start().await;
    lab.reinstall(|package| package.debuggable = false);
    let asked = lab.read().await;
    assert_eq!(asked.status, Status::ApprovalPending, "{}", asked.message);
    let id = asked.approval_id.unwrap();
    lab.gateway.store().answer(&id, Answer::Task).unwrap();
    let mut request = lab.request(LogsKind::Logs);
    request.approval_id = Some(id);
    let picked = lab.session.logs(request).await;
    assert_eq!(picked.status, Status::Ok, "{}", picked.message);

    lab.log(CRASH_TEST, "release line");
    let trips = lab.driver.round_trips();
    let warm = lab.read().await;
    assert_eq!(warm.status, Status::Ok, "{}", warm.message);
    assert!(warm.log.contains("release line"), "{}", warm.log);
    assert_eq!(lab.driver.round_trips(), trips + 1);
}
