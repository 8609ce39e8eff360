//! Issue 37, item 9: a build installed during the task, on the fake phone. A development
//! build asks nothing, but the app's lines and reports from before it was installed were
//! written by another build (a release build it replaced, of the same version or not): they
//! follow that build's rule, left out unless a grant for the app covers them, and the message
//! says so. A reinstall during a wait is a change of the facts the wait was decided on.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use phonelogs_driver::{AppId, LogLevel};
use phonelogs_fake::{FakeApp, FakePhone};
use phonelogs_gateway::{Answer, LogsRequest, Status};
use time::Duration;

const APP: &str = "com.example.reinstalled";
const UID: u32 = 10777;

/// The app as a release build installed before the task, version 7.
fn release() -> FakeApp {
    FakeApp::new(AppId::new(APP))
        .label("Reinstalled")
        .uid(UID)
        .version("7")
        .installed_at(START - Duration::days(3))
}

/// The same app and version, reinstalled as a development build at `START + seconds`.
fn development(seconds: i64) -> FakeApp {
    FakeApp::new(AppId::new(APP))
        .label("Reinstalled")
        .uid(UID)
        .version("7")
        .dev_build(true)
        .installed_at(START + Duration::seconds(seconds))
}

/// A phone whose release build logged a private line and crashed inside the task, then got a
/// development build of the same version installed over it (same uid: `adb install -r`), which
/// logged and crashed too.
fn reinstalled_phone() -> FakePhone {
    let phone = phone_with(FakePhone::new());
    phone.add_app(&device(), release());
    let app = AppId::new(APP);
    phone.add_logs(
        &device(),
        &app,
        [line(2.0, LogLevel::Info, "Bank", "RELEASE-BUILD-LINE", UID)],
    );
    phone.add_crash(
        &device(),
        &app,
        report(
            3,
            APP,
            "RELEASE-BUILD-CRASH",
            "java.lang.Error: RELEASE-BUILD-CRASH",
        ),
    );
    phone.add_app(&device(), development(10));
    phone.add_logs(
        &device(),
        &app,
        [line(12.0, LogLevel::Info, "Dev", "DEV-BUILD-LINE", UID)],
    );
    phone.add_crash(
        &device(),
        &app,
        report(
            13,
            APP,
            "DEV-BUILD-CRASH",
            "java.lang.Error: DEV-BUILD-CRASH",
        ),
    );
    phone
}

/// Reads from before the task: the agent names an early `since` (the same holds for the
/// task's own window, which began before the reinstall).
fn early(mut request: LogsRequest) -> LogsRequest {
    request.since = Some("1h".into());
    request
}

#[tokio::test]
async fn lines_and_reports_from_before_a_reinstall_are_not_shown_on_the_new_builds_pass() {
    let phone = reinstalled_phone();
    let gateway = gateway(&phone);
    let session = task(&gateway, "agent");
    for request in [logs(APP), early(logs(APP)), early(crashes(APP))] {
        let read = session.logs(request.clone()).await;
        assert_eq!(read.status, Status::Ok, "{request:?}: {}", read.message);
        let shown = format!("{read:?}");
        assert!(!shown.contains("RELEASE-BUILD"), "{request:?}: {shown}");
        assert!(shown.contains("DEV-BUILD"), "{request:?}: {shown}");
        let what = if request.kind == phonelogs_gateway::LogsKind::Crashes {
            "Reports"
        } else {
            "Lines"
        };
        assert!(
            read.message.contains(&format!(
                "{what} from before 11:00:10.000, when this development build of Reinstalled was installed, are left out"
            )),
            "{request:?}: {}",
            read.message
        );
    }
    // Nothing was asked: the development build's pass stands for its own lines.
    assert!(gateway.store().pending_approvals().unwrap().is_empty());
}

/// The person allowed the release build's logs for this task before the reinstall: the grant
/// covers the app's earlier lines as it covered them then.
#[tokio::test]
async fn a_grant_for_the_task_covers_the_earlier_builds_lines() {
    let phone = phone_with(FakePhone::new());
    phone.add_app(&device(), release());
    let app = AppId::new(APP);
    phone.add_logs(
        &device(),
        &app,
        [line(2.0, LogLevel::Info, "Bank", "RELEASE-BUILD-LINE", UID)],
    );
    let gateway = gateway(&phone);
    let session = task(&gateway, "agent");
    let asked = session.logs(early(logs(APP))).await;
    assert_eq!(asked.status, Status::ApprovalPending, "{}", asked.message);
    gateway
        .store()
        .answer(asked.approval_id.as_deref().unwrap(), Answer::Task)
        .unwrap();
    phone.add_app(&device(), development(10));
    phone.add_logs(
        &device(),
        &app,
        [line(12.0, LogLevel::Info, "Dev", "DEV-BUILD-LINE", UID)],
    );
    let read = session.logs(early(logs(APP))).await;
    assert_eq!(read.status, Status::Ok, "{}", read.message);
    assert!(
        read.log.contains("RELEASE-BUILD-LINE") && read.log.contains("DEV-BUILD-LINE"),
        "{}",
        read.log
    );
    assert!(
        !read.message.contains("left out: an earlier build"),
        "{}",
        read.message
    );
}

/// A development build installed before the window asked for leaves nothing out, and says
/// nothing of it.
#[tokio::test]
async fn a_build_installed_before_the_window_leaves_nothing_out() {
    let phone = phone_with(FakePhone::new());
    phone.add_app(&device(), development(-60));
    phone.add_logs(
        &device(),
        &AppId::new(APP),
        [line(2.0, LogLevel::Info, "Dev", "DEV-BUILD-LINE", UID)],
    );
    let gateway = gateway(&phone);
    let read = task(&gateway, "agent").logs(logs(APP)).await;
    assert_eq!(read.status, Status::Ok, "{}", read.message);
    assert!(read.log.contains("DEV-BUILD-LINE"), "{}", read.log);
    assert!(!read.message.contains("earlier build"), "{}", read.message);
}

/// A reinstall of the same build during a wait (a development build over itself, same version
/// and flags: only its install time tells them apart) is a change of the facts the wait was
/// decided on: it ends, the call is decided again on the new build, and the old build's line
/// from before the reinstall is left out, said so (virtual time).
#[tokio::test(start_paused = true)]
async fn a_reinstall_of_the_same_version_during_a_wait_is_decided_again() {
    let phone = phone_with(FakePhone::new());
    phone.add_app(&device(), development(-60));
    let gateway = gateway(&phone);
    let session = task(&gateway, "agent");
    let writer = phone.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let app = AppId::new(APP);
        writer.add_logs(
            &device(),
            &app,
            [line(0.5, LogLevel::Info, "Dev", "OLD-BUILD-LINE", UID)],
        );
        writer.add_app(&device(), development(1));
        writer.add_logs(
            &device(),
            &app,
            [line(
                2.0,
                LogLevel::Info,
                "Dev",
                "ready NEW-BUILD-LINE",
                UID,
            )],
        );
    });
    let request = LogsRequest {
        wait_for: Some("ready".into()),
        timeout: Some(60),
        ..logs(APP)
    };
    let result = session.logs(request).await;
    assert_eq!(result.status, Status::Ok, "{}", result.message);
    assert_eq!(result.matched, Some(true), "{}", result.message);
    assert!(result.log.contains("NEW-BUILD-LINE"), "{}", result.log);
    assert!(
        !format!("{result:?}").contains("OLD-BUILD-LINE"),
        "{}",
        result.log
    );
    assert!(
        result.message.contains("Lines from before 11:00:01.000"),
        "{}",
        result.message
    );
}
