//! Issue 37, item 9, through Debian's real adb server and the simulated phone: the driver reads
//! when the installed build was installed (`lastUpdateTime` in `dumpsys package`, the phone's
//! local time, with `date +%z`), so a development build's pass shows none of the lines an
//! earlier build logged before it was installed (a release build replaced with `adb install
//! -r`), and a reinstall of the same version between two calls is a change of the facts the
//! next call is decided on.

// Tests may unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;

use common::{ThroughAdb, config};
use phonelogs_adbsim::{Package, Priority, Profile, SimPhone};
use phonelogs_android::AdbPhone;
use phonelogs_driver::{AppId, AppLogger};
use phonelogs_gateway::{Agent, Gateway, LogsRequest, Mode, Status, TaskSpec};

const CRASH_TEST: &str = "dev.phonelogs.crashtest";

fn read(sim: &ThroughAdb) -> LogsRequest {
    LogsRequest {
        device: Some(sim.device.to_string()),
        since: Some("1h".into()),
        filter: Some("Swap".into()),
        fold: Some(false),
        ..LogsRequest::new(CRASH_TEST)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_earlier_builds_lines_are_not_shown_on_a_development_builds_pass() {
    let phone = SimPhone::with_profile(Profile::default());
    let Some(sim) = ThroughAdb::start(phone, |_| {}).await else {
        return;
    };
    let phone = sim.phone.clone();
    let app_id = phone.uid_of(CRASH_TEST, 0).unwrap() % 100_000;
    let mut release = Package::new(CRASH_TEST, app_id);
    release.version_code = 7;
    phone.install(release.clone());
    phone.advance_clock(5.0);
    phone
        .log(CRASH_TEST, Priority::Info, "Swap", "RELEASE-BUILD-LINE")
        .unwrap();
    phone.advance_clock(5.0);
    // The development build of the same version over it, as `adb install -r` does.
    let development = Package {
        debuggable: true,
        ..release
    };
    phone.install(development.clone());
    phone.advance_clock(5.0);
    phone
        .log(CRASH_TEST, Priority::Info, "Swap", "DEV-BUILD-LINE one")
        .unwrap();

    let driver = Arc::new(AdbPhone::new(config(sim.server.port)));
    let info = driver
        .app_info(&sim.device, &AppId::new(CRASH_TEST))
        .await
        .unwrap();
    assert!(info.dev_build && info.installed_at.is_some(), "{info:?}");
    let gateway = Gateway::builder()
        .driver(driver as Arc<dyn AppLogger>)
        .build()
        .unwrap();
    let session = gateway.start_task(TaskSpec::new(Agent::new("agent", Mode::ReadOnly)));
    let first = session.logs(read(&sim)).await;
    assert_eq!(first.status, Status::Ok, "{}", first.message);
    assert!(first.log.contains("DEV-BUILD-LINE one"), "{}", first.log);
    assert!(!first.log.contains("RELEASE-BUILD-LINE"), "{}", first.log);
    assert!(
        first.message.contains(
            "when this development build of dev.phonelogs.crashtest was installed, are left out"
        ),
        "{}",
        first.message
    );

    // The same build, same version, installed again: only `lastUpdateTime` changes. The next
    // call (warm: the driver holds the facts of its last round trip) finds it, is decided
    // again, and leaves out what the build before this install logged.
    phone.advance_clock(5.0);
    phone.install(development);
    phone.advance_clock(5.0);
    phone
        .log(CRASH_TEST, Priority::Info, "Swap", "DEV-BUILD-LINE two")
        .unwrap();
    let second = session.logs(read(&sim)).await;
    assert_eq!(second.status, Status::Ok, "{}", second.message);
    assert!(second.log.contains("DEV-BUILD-LINE two"), "{}", second.log);
    assert!(!second.log.contains("DEV-BUILD-LINE one"), "{}", second.log);
    assert!(!second.log.contains("RELEASE-BUILD-LINE"), "{}", second.log);
}
