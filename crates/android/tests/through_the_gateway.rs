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
    Agent, Answer, DebugRequest, DebugStatus, Gateway, LogsRequest, Mode, Status, TaskSpec,
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

/// The simulated phone, this driver on it, and a task of an agent that may read the app.
struct Lab {
    phone: SimPhone,
    driver: Arc<AdbPhone>,
    session: phonelogs_gateway::Session,
    serial: String,
    gateway: Gateway,
    _front: phonelogs_adbsim::SimHandle,
}

impl Lab {
    async fn start() -> Lab {
        let phone = SimPhone::with_profile(Profile::default());
        let (address, front) = HostFront::bind(None, phone.clone()).await.unwrap();
        let driver = Arc::new(AdbPhone::new(config(address.port())));
        let gateway = Gateway::builder()
            .driver(driver.clone() as Arc<dyn AppLogger>)
            .build()
            .unwrap();
        let session = gateway.start_task(TaskSpec::new(Agent::new("agent", Mode::Full)));
        Lab {
            serial: phone.profile().serial,
            phone,
            driver,
            session,
            gateway,
            _front: front,
        }
    }

    /// The app's lines of the last hour, as the agent asks for them.
    async fn read(&self) -> phonelogs_gateway::LogsResponse {
        let mut request = LogsRequest::new(CRASH_TEST);
        request.device = Some(self.serial.clone());
        request.since = Some("1h".into());
        self.session.logs(request).await
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
}

/// Everything a response carries, to look for a line in.
fn shown(response: &phonelogs_gateway::LogsResponse) -> String {
    format!("{response:?}")
}

/// A release build installed over the development build between two calls keeps the uid: the
/// second call, decided on the held "development build", is read with the round trip's own
/// `dumpsys package`, which says otherwise, so nothing read is shown and the person is asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_build_installed_between_two_calls_is_asked_about_and_none_of_its_lines_shown() {
    let lab = Lab::start().await;
    lab.log(CRASH_TEST, "debug build line");
    let first = lab.read().await;
    assert_eq!(first.status, Status::Ok, "{}", first.message);
    assert!(first.log.contains("debug build line"), "{}", first.log);

    lab.reinstall(|package| package.debuggable = false);
    lab.log(CRASH_TEST, "release-only secret");
    let trips = lab.driver.round_trips();
    let second = lab.read().await;
    assert_eq!(second.status, Status::ApprovalPending, "{}", second.message);
    assert!(
        second.lines.is_empty() && second.log.is_empty(),
        "{second:?}"
    );
    assert!(
        !shown(&second).contains("release-only secret"),
        "{second:?}"
    );
    assert!(!shown(&second).contains("debug build line"), "{second:?}");
    // The held facts' read, which saw the release build, then `app_info` read fresh for the
    // question.
    assert_eq!(lab.driver.round_trips(), trips + 2);
}

/// The app uninstalled and installed again with a new uid between two calls, and its old uid
/// taken by another app: the held uid is never read with. The read's own `pm list packages -U`
/// sees the new uid, nothing it read is shown, and the call reads again with the new one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reinstall_with_a_new_uid_between_two_calls_reads_nothing_of_the_old_or_a_foreign_uid() {
    let lab = Lab::start().await;
    lab.log(CRASH_TEST, "old install line");
    let first = lab.read().await;
    assert_eq!(first.status, Status::Ok, "{}", first.message);
    assert!(first.log.contains("old install line"), "{}", first.log);

    let uninstalled = lab
        .driver
        .server()
        .shell(&lab.serial, &format!("pm uninstall {CRASH_TEST}"))
        .await
        .unwrap();
    assert!(uninstalled.stdout_text().contains("Success"));
    let mut foreign = Package::new("com.example.foreign", 10234);
    foreign.debuggable = true;
    lab.phone.install(foreign);
    lab.log("com.example.foreign", "foreign secret");
    let mut again = Package::new(CRASH_TEST, 10300);
    again.debuggable = true;
    lab.phone.install(again);
    lab.log(CRASH_TEST, "new install line");
    assert_eq!(lab.phone.uid_of(CRASH_TEST, 0), Some(10300));

    let second = lab.read().await;
    assert!(!shown(&second).contains("foreign secret"), "{second:?}");
    assert!(!shown(&second).contains("old install line"), "{second:?}");
    assert_eq!(second.status, Status::Ok, "{}", second.message);
    assert!(second.log.contains("new install line"), "{}", second.log);
}

/// The app turning into one of the phone's own (a system flag appearing) between two calls is
/// refused, and nothing read under the held facts is shown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_system_flag_appearing_between_two_calls_is_refused() {
    let lab = Lab::start().await;
    let first = lab.read().await;
    assert_eq!(first.status, Status::Ok, "{}", first.message);

    lab.reinstall(|package| package.system = true);
    lab.log(CRASH_TEST, "system app secret");
    let second = lab.read().await;
    assert_eq!(second.status, Status::BlockedByPolicy, "{}", second.message);
    assert!(!shown(&second).contains("system app secret"), "{second:?}");
}

/// Held facts never ask: a release build asked about on the first call and replaced by a
/// development build is read fresh before a question would be put, and nobody is asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_on_held_facts_is_decided_on_fresh_ones() {
    let lab = Lab::start().await;
    lab.reinstall(|package| package.debuggable = false);
    let first = lab.read().await;
    assert_eq!(first.status, Status::ApprovalPending, "{}", first.message);

    lab.reinstall(|_| {});
    lab.log(CRASH_TEST, "debug build line");
    let second = lab.read().await;
    assert_eq!(second.status, Status::Ok, "{}", second.message);
    assert!(second.log.contains("debug build line"), "{}", second.log);
}

/// Held facts never refuse: one of the phone's own apps, refused on the first call, that is an
/// ordinary development build by the second, is read fresh before a refusal, and read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_on_held_facts_is_decided_on_fresh_ones() {
    let lab = Lab::start().await;
    lab.reinstall(|package| package.system = true);
    let first = lab.read().await;
    assert_eq!(first.status, Status::BlockedByPolicy, "{}", first.message);

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
    let mut request = LogsRequest::new(CRASH_TEST);
    request.device = Some(lab.serial.clone());
    request.since = Some("1h".into());
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

/// The same for crash reports: the crashes read confirms the held facts in its round trip too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_build_installed_between_two_crash_reads_is_asked_about() {
    let lab = Lab::start().await;
    let mut request = LogsRequest::new(CRASH_TEST);
    request.device = Some(lab.serial.clone());
    request.since = Some("1h".into());
    request.kind = phonelogs_gateway::LogsKind::Crashes;
    let first = lab.session.logs(request.clone()).await;
    assert_eq!(first.status, Status::Ok, "{}", first.message);

    lab.reinstall(|package| package.debuggable = false);
    let second = lab.session.logs(request).await;
    assert_eq!(second.status, Status::ApprovalPending, "{}", second.message);
    assert!(second.reports.is_empty(), "{second:?}");
}
