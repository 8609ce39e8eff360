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

/// Review F7: `get_process_exit_history` on the development build's pass leaves out the exit
/// records from before it was installed (the release build's), counts them and says so; the
/// decision is the one logs and crashes get.
#[tokio::test]
async fn exit_records_from_before_a_reinstall_are_left_out_and_counted() {
    use phonelogs_driver::ExitRecord;
    use phonelogs_gateway::{DebugData, DebugRequest};
    let phone = reinstalled_phone();
    let app = AppId::new(APP);
    // The dump prints the phone's local time; the fake phone's offset is UTC, as START is.
    for (at, reason) in [
        ("2026-11-30 10:00:05.000", "RELEASE-BUILD-EXIT"),
        ("2026-11-30 10:00:12.500", "DEV-BUILD-EXIT"),
    ] {
        phone.add_exit_record(
            &device(),
            &app,
            ExitRecord {
                timestamp: Some(at.into()),
                pid: Some(4242),
                reason: Some(reason.into()),
                ..ExitRecord::default()
            },
        );
    }
    let gateway = gateway(&phone);
    let response = task(&gateway, "agent")
        .debug(DebugRequest::GetProcessExitHistory {
            serial: DEVICE.into(),
            package: APP.into(),
            approval_id: None,
        })
        .await;
    let shown = format!("{response:?}");
    assert!(!shown.contains("RELEASE-BUILD-EXIT"), "{shown}");
    let Some(DebugData::ExitHistory(history)) = response.data.as_deref() else {
        panic!("{shown}");
    };
    assert_eq!(history.count, 1, "{shown}");
    assert!(
        response.message.contains(
            "Exit records (1) from before 11:00:10.000, when this development build of Reinstalled was installed, are left out"
        ),
        "{}",
        response.message
    );
    assert!(gateway.store().pending_approvals().unwrap().is_empty());
}

mod seen {
    //! The iPhone's case: the phone gives no install time, only an install id (the bundle's
    //! path, which moves with every install). The floor is when the gateway first saw the
    //! development build after another build.
    use std::sync::Arc;
    use std::sync::atomic::{AtomicI64, Ordering};

    use proptest::prelude::*;

    use super::*;

    fn store_build() -> FakeApp {
        FakeApp::new(AppId::new(APP))
            .label("Reinstalled")
            .uid(UID)
            .version("7")
            .install_id("/private/var/containers/Bundle/Application/AAAA/Reinstalled.app")
    }

    fn development_build() -> FakeApp {
        store_build()
            .dev_build(true)
            .install_id("/private/var/containers/Bundle/Application/BBBB/Reinstalled.app")
    }

    #[derive(Debug)]
    struct Story {
        /// The store build's lines and report, seconds after START, all before `switch`.
        store: Vec<i64>,
        /// When the gateway read first (the store build), before `switch`.
        first_read: i64,
        /// When the development build was installed.
        switch: i64,
        /// The development build's lines and report, seconds after `switch`.
        dev: Vec<i64>,
        /// How long after `switch` the gateway read again.
        later: i64,
    }

    fn story() -> impl Strategy<Value = Story> {
        (2i64..60, prop::collection::vec(0.0f64..1.0, 1..4))
            .prop_flat_map(|(switch, store)| {
                let store: Vec<i64> = store
                    .iter()
                    .map(|f| 1 + (f * (switch - 1) as f64) as i64)
                    .collect();
                (
                    Just(store),
                    1..switch,
                    Just(switch),
                    prop::collection::vec(0i64..40, 1..4),
                    0i64..30,
                )
            })
            .prop_map(|(store, first_read, switch, dev, later)| Story {
                store,
                first_read,
                switch,
                dev,
                later,
            })
    }

    fn play(story: &Story) -> (Vec<String>, i64) {
        let phone = phone_with(FakePhone::new());
        let app = AppId::new(APP);
        phone.add_app(&device(), store_build());
        for (n, at) in story.store.iter().enumerate() {
            let text = format!("STORE-LINE-{n}");
            phone.add_logs(
                &device(),
                &app,
                [line(*at as f64, LogLevel::Info, "S", &text, UID)],
            );
            phone.add_crash(
                &device(),
                &app,
                report(*at, APP, "STORE-CRASH", "STORE-CRASH"),
            );
        }
        let now = Arc::new(AtomicI64::new(0));
        let clock = now.clone();
        let gateway = builder(&phone)
            .clock(move || START + Duration::seconds(clock.load(Ordering::SeqCst)))
            .build()
            .unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let session = task(&gateway, "agent");
        now.store(story.first_read, Ordering::SeqCst);
        // The store build asks: the question waits, unanswered.
        let asked = rt.block_on(session.logs(early(logs(APP))));
        assert_eq!(asked.status, Status::ApprovalPending, "{}", asked.message);
        phone.add_app(&device(), development_build());
        for (n, after) in story.dev.iter().enumerate() {
            let at = story.switch + after;
            let text = format!("DEV-LINE-{n}-at-{at}");
            phone.add_logs(
                &device(),
                &app,
                [line(at as f64, LogLevel::Info, "D", &text, UID)],
            );
            phone.add_crash(&device(), &app, report(at, APP, "DEV-CRASH", &text));
        }
        let seen = story.switch + story.later;
        now.store(seen, Ordering::SeqCst);
        let mut shown = Vec::new();
        for request in [early(logs(APP)), early(crashes(APP)), logs(APP)] {
            let read = rt.block_on(session.logs(request));
            assert_eq!(read.status, Status::Ok, "{}", read.message);
            shown.push(format!("{read:?}"));
        }
        (shown, seen)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        /// No line or report from before the floor (when the development build was first seen)
        /// is shown without asking, and the message says that an earlier build's were left out.
        #[test]
        fn nothing_from_before_the_floor_is_shown_without_asking(story in story()) {
            let (shown, seen) = play(&story);
            for read in &shown {
                prop_assert!(!read.contains("STORE-"), "{read}");
                for (n, after) in story.dev.iter().enumerate() {
                    let at = story.switch + after;
                    let text = format!("DEV-LINE-{n}-at-{at}");
                    if at < seen {
                        prop_assert!(!read.contains(&text), "{text} before the floor: {read}");
                    }
                }
                prop_assert!(
                    read.contains("when phonelogs first saw this development build of Reinstalled after another build"),
                    "{read}"
                );
            }
            // What came after the floor is shown.
            if let Some((n, after)) = story.dev.iter().enumerate().find(|(_, a)| story.switch + **a >= seen) {
                let text = format!("DEV-LINE-{n}-at-{}", story.switch + after);
                prop_assert!(shown[0].contains(&text), "{text}: {}", shown[0]);
            }
        }
    }
}

/// A release build's report printed to the second, written in the second the development build
/// was installed but before it (at 10 s; installed at 10.5 s), is not shown: the floor is moved
/// up to the reports' precision, not down (the iPhone test caught it comparing at the second).
#[tokio::test]
async fn a_report_of_the_earlier_build_in_the_installs_own_second_is_left_out() {
    let phone = phone_with(FakePhone::new());
    phone.add_app(&device(), release());
    let app = AppId::new(APP);
    let crash = "java.lang.Error: RELEASE-BUILD-CRASH";
    phone.add_crash(
        &device(),
        &app,
        report(10, APP, "RELEASE-BUILD-CRASH", crash),
    );
    let installed = START + Duration::milliseconds(10_500);
    phone.add_app(&device(), development(0).installed_at(installed));
    let gateway = gateway(&phone);
    let read = task(&gateway, "agent").logs(early(crashes(APP))).await;
    assert_eq!(read.status, Status::Ok, "{}", read.message);
    assert!(!format!("{read:?}").contains("RELEASE-BUILD"), "{read:?}");
    assert!(
        read.message.contains("Reports from before 11:00:11.000"),
        "{}",
        read.message
    );
}

mod never_seen {
    //! The iPhone's case the floor cannot cover: the gateway never saw the store build (it
    //! started after the development build was installed), so nothing says when the
    //! development build came. The store build's `.ips` reports still name their build
    //! (`CFBundleVersion`), which is not the installed one's: the pass leaves them out.
    use proptest::prelude::*;

    use super::*;
    use phonelogs_driver::CrashReport;

    const STORE: &str = "55";
    const DEV: &str = "408";

    fn development_build() -> FakeApp {
        FakeApp::new(AppId::new(APP))
            .label("Reinstalled")
            .uid(UID)
            .version(DEV)
            .dev_build(true)
            .install_id("/private/var/containers/Bundle/Application/BBBB/Reinstalled.app")
    }

    fn built(seconds: i64, summary: &str, build: Option<&str>) -> CrashReport {
        CrashReport {
            build: build.map(str::to_owned),
            ..report(seconds, APP, summary, &format!("Error: {summary}"))
        }
    }

    /// Which build wrote a report: the store build, the development build, or one that does
    /// not say (a report whose file names no build).
    fn writer() -> impl Strategy<Value = Option<&'static str>> {
        prop_oneof![Just(Some(STORE)), Just(Some(DEV)), Just(None)]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        /// No report of another build passes a development build's pass, whatever the order
        /// and times; every report of its own build (or naming none) is shown, and the message
        /// counts the ones left out.
        #[test]
        fn no_report_of_another_build_passes_a_development_pass(
            reports in prop::collection::vec((0i64..50, writer()), 1..8),
        ) {
            let phone = phone_with(FakePhone::new());
            phone.add_app(&device(), development_build());
            for (n, (at, build)) in reports.iter().enumerate() {
                let summary = format!("{}-CRASH-{n}", build.unwrap_or("NONE"));
                phone.add_crash(&device(), &AppId::new(APP), built(*at, &summary, *build));
            }
            let gateway = builder(&phone)
                .clock(|| START + Duration::seconds(60))
                .build()
                .unwrap();
            let session = task(&gateway, "agent");
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            let mut request = early(crashes(APP));
            request.limit = Some(10);
            let read = rt.block_on(session.logs(request));
            prop_assert_eq!(read.status, Status::Ok, "{}", read.message);
            let shown = format!("{read:?}");
            let others = reports.iter().filter(|(_, b)| *b == Some(STORE)).count();
            for (n, (_, build)) in reports.iter().enumerate() {
                let summary = format!("{}-CRASH-{n}", build.unwrap_or("NONE"));
                prop_assert_eq!(shown.contains(&summary), *build != Some(STORE), "{}: {}", summary, shown);
            }
            prop_assert_eq!(read.shown, reports.len() - others);
            let said = match others {
                0 => None,
                1 => Some("1 crash report was of another build of Reinstalled than this development build (408) left out".to_owned()),
                n => Some(format!("{n} crash reports were of another build of Reinstalled than this development build (408) left out")),
            };
            match said {
                Some(said) => prop_assert!(read.message.contains(&said), "{}", read.message),
                None => prop_assert!(!read.message.contains("another build"), "{}", read.message),
            }
            // Nothing was asked: the pass stands for its own reports.
            prop_assert!(gateway.store().pending_approvals().unwrap().is_empty());
        }
    }

    /// A grant for the task, given while the store build was installed, covers its reports on
    /// the development build's pass too, as it would the store build's.
    #[tokio::test]
    async fn a_grant_for_the_task_covers_another_builds_reports() {
        let phone = phone_with(FakePhone::new());
        phone.add_app(
            &device(),
            FakeApp::new(AppId::new(APP))
                .label("Reinstalled")
                .uid(UID)
                .version(STORE),
        );
        phone.add_crash(
            &device(),
            &AppId::new(APP),
            built(2, "STORE-CRASH", Some(STORE)),
        );
        let gateway = gateway(&phone);
        let session = task(&gateway, "agent");
        let asked = session.logs(early(crashes(APP))).await;
        assert_eq!(asked.status, Status::ApprovalPending, "{}", asked.message);
        gateway
            .store()
            .answer(asked.approval_id.as_deref().unwrap(), Answer::Task)
            .unwrap();
        phone.add_app(&device(), development_build());
        let read = session.logs(early(crashes(APP))).await;
        assert_eq!(read.status, Status::Ok, "{}", read.message);
        assert!(format!("{read:?}").contains("STORE-CRASH"), "{read:?}");
        assert!(!read.message.contains("another build"), "{}", read.message);
    }

    /// A store build's report written during a `wait_for: crash` (its `.ips` written late) does
    /// not end the wait: the wait goes on to the development build's own report, and shows it.
    #[tokio::test(start_paused = true)]
    async fn another_builds_report_written_during_a_wait_does_not_end_it() {
        let phone = phone_with(FakePhone::new());
        phone.add_app(&device(), development_build());
        let gateway = gateway(&phone);
        let session = task(&gateway, "agent");
        let writer = phone.clone();
        tokio::spawn(async move {
            let app = AppId::new(APP);
            tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
            writer.add_crash(&device(), &app, built(3, "STORE-CRASH", Some(STORE)));
            tokio::time::sleep(std::time::Duration::from_millis(3000)).await;
            writer.add_crash(&device(), &app, built(4, "DEV-CRASH", Some(DEV)));
        });
        let request = LogsRequest {
            wait_for: Some("crash".into()),
            timeout: Some(20),
            ..early(crashes(APP))
        };
        let read = session.logs(request).await;
        assert_eq!(read.status, Status::Ok, "{}", read.message);
        assert_eq!(read.matched, Some(true), "{}", read.message);
        let shown = format!("{read:?}");
        assert!(shown.contains("DEV-CRASH"), "the wait ended early: {shown}");
        assert!(!shown.contains("STORE-CRASH"), "{shown}");
        assert_eq!(read.shown, 1);
    }
}
