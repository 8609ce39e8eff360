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
    Agent, DebugRequest, DebugStatus, Gateway, LogsRequest, Mode, Status, TaskSpec,
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
