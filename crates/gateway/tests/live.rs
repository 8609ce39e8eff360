//! Live reads at the gateway, on the fake phone: cursors (`since: "last"`, `"cursor:…"`), waits
//! (`wait_for`, `timeout`), cancellation and progress, and the person's own reads.

// Tests may unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::{
    BANK, DEV_APP, OTHER_APP, RELEASE_APP, crashes, device, gateway, line, logs, report, task,
};
use phonelogs_driver::{AppId, LogLevel, LogLine};
use phonelogs_fake::{FakeApp, FakePhone};
use phonelogs_gateway::{HistoryFilter, LiveHooks, LogsRequest, Status, catalog};
use proptest::prelude::*;
use tokio_util::sync::CancellationToken;

fn since_last(app: &str) -> LogsRequest {
    LogsRequest {
        since: Some("last".into()),
        ..logs(app)
    }
}

fn waiting(app: &str, text: &str, seconds: u32) -> LogsRequest {
    LogsRequest {
        since: Some("last".into()),
        wait_for: Some(text.into()),
        timeout: Some(seconds),
        ..logs(app)
    }
}

/// A wait of `seconds` for the development build's next crash report.
fn crash_waiting(seconds: u32) -> LogsRequest {
    LogsRequest {
        wait_for: Some("crash".into()),
        timeout: Some(seconds),
        ..crashes(DEV_APP)
    }
}

fn dev_line(ms: i64, text: &str) -> LogLine {
    line(ms as f64 / 1000.0, LogLevel::Info, "CrashTest", text, 10123)
}

fn other_line(ms: i64, text: &str) -> LogLine {
    line(ms as f64 / 1000.0, LogLevel::Info, "Other", text, 10300)
}

/// A phone with the apps and none of their lines: the development build, another app (also a
/// development build, so nothing is asked), a release build and a bank.
fn phone() -> FakePhone {
    let phone = FakePhone::new();
    phone.add_device(&device(), "Pixel 8");
    let app = |id: &str, uid: u32| FakeApp::new(AppId::new(id)).label(id).uid(uid);
    phone.add_app(&device(), app(DEV_APP, 10123).dev_build(true));
    phone.add_app(&device(), app(OTHER_APP, 10300).dev_build(true));
    phone.add_app(&device(), app(RELEASE_APP, 10200));
    phone.add_app(&device(), app(BANK, 10400));
    phone
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// However lines arrive between calls (several in one millisecond, other apps' between),
    /// the results of `since: "last"` put together are the app's lines, in order, each once.
    #[test]
    fn cursor_reads_add_up_to_the_apps_lines(
        batches in prop::collection::vec(
            prop::collection::vec((0i64..3, any::<bool>(), 0u8..4), 0..8),
            1..8,
        ),
        use_cursor in any::<bool>(),
    ) {
        let rt = runtime();
        let phone = phone();
        let gateway = gateway(&phone);
        let session = task(&gateway, "agent");
        let app = AppId::new(DEV_APP);
        let other = AppId::new(OTHER_APP);
        let mut expected = Vec::new();
        let mut got = String::new();
        let mut ms = 0i64;
        let mut cursor: Option<String> = None;
        for (b, batch) in batches.iter().enumerate() {
            for (i, (step, ours, text)) in batch.iter().enumerate() {
                ms += step;
                // Identical texts in one millisecond on purpose: a fingerprint alone cannot
                // tell them apart, their order does.
                let text = format!("t{text}");
                if *ours {
                    phone.add_logs(&device(), &app, [dev_line(ms, &text)]);
                    expected.push(text);
                } else {
                    phone.add_logs(&device(), &other, [other_line(ms, &format!("{b}.{i}"))]);
                }
            }
            let mut request = since_last(DEV_APP);
            // Every line its own row: identical texts in a row would fold.
            request.fold = Some(false);
            if use_cursor && let Some(value) = &cursor {
                request.since = Some(format!("cursor:{value}"));
            }
            let result = rt.block_on(session.logs(request));
            prop_assert_eq!(result.status, Status::Ok, "{}", result.message);
            prop_assert!(result.cursor.is_some());
            cursor = result.cursor.clone();
            got.push_str(&result.log);
        }
        let got: Vec<String> = got
            .lines()
            .map(|l| l.rsplit_once(": ").map(|(_, t)| t.to_owned()).unwrap_or_default())
            .collect();
        prop_assert_eq!(got, expected);
    }
}

#[tokio::test(start_paused = true)]
async fn a_wait_is_satisfied_by_a_line_written_later_and_never_shows_other_apps() {
    let phone = phone();
    let gateway = gateway(&phone);
    let session = task(&gateway, "agent");
    phone.add_logs(&device(), &AppId::new(DEV_APP), [dev_line(10, "before")]);
    let first = session.logs(since_last(DEV_APP)).await;
    assert_eq!(first.status, Status::Ok);
    let writer = phone.clone();
    // Before the writer starts its two seconds, so the wait cannot seem to end early.
    let started = tokio::time::Instant::now();
    tokio::spawn(async move {
        writer.add_logs(
            &device(),
            &AppId::new(OTHER_APP),
            [other_line(1000, "ready too")],
        );
        tokio::time::sleep(Duration::from_secs(2)).await;
        writer.add_logs(&device(), &AppId::new(DEV_APP), [dev_line(2000, "working")]);
        // The match and the line after it arrive together: the wait shows up to the match, and
        // the line after it is neither shown nor skipped.
        writer.add_logs(
            &device(),
            &AppId::new(DEV_APP),
            [dev_line(2001, "ready now"), dev_line(2002, "after")],
        );
    });
    let result = session.logs(waiting(DEV_APP, "ready", 10)).await;
    assert!(started.elapsed() >= Duration::from_secs(2));
    assert_eq!(result.status, Status::Ok, "{}", result.message);
    assert_eq!(result.matched, Some(true));
    assert!(result.log.contains("working") && result.log.ends_with("ready now\n"));
    assert!(
        !result.log.contains("before"),
        "no line twice: {}",
        result.log
    );
    assert!(
        !result.log.contains("ready too"),
        "another app's line: {}",
        result.log
    );
    assert_eq!(phone.open_streams(&device()), 0);
    // The line after the match comes with the next call.
    let next = session.logs(since_last(DEV_APP)).await;
    assert_eq!(next.log.lines().count(), 1, "{}", next.log);
    assert!(next.log.ends_with("after\n"));
}

#[tokio::test(start_paused = true)]
async fn a_wait_that_times_out_returns_what_came() {
    let phone = phone();
    let gateway = gateway(&phone);
    let session = task(&gateway, "agent");
    let writer = phone.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        writer.add_logs(&device(), &AppId::new(DEV_APP), [dev_line(500, "busy")]);
    });
    let result = session.logs(waiting(DEV_APP, "never", 1)).await;
    assert_eq!(result.status, Status::Ok);
    assert_eq!(result.matched, Some(false));
    assert!(result.log.ends_with("busy\n"), "{}", result.log);
    assert!(
        result.message.contains("matched: false"),
        "{}",
        result.message
    );
    assert!(result.cursor.is_some());
    assert_eq!(phone.open_streams(&device()), 0);
}

#[tokio::test(start_paused = true)]
async fn a_cancel_ends_the_wait_at_once_and_leaves_no_stream() {
    let phone = phone();
    let gateway = gateway(&phone);
    let session = task(&gateway, "agent");
    let before = phone.open_streams(&device());
    let cancel = CancellationToken::new();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    let hooks = LiveHooks {
        progress: Some(Arc::new(move |_| {
            seen.fetch_add(1, Ordering::SeqCst);
        })),
        cancel: Some(cancel.clone()),
    };
    let canceller = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(1300)).await;
        canceller.cancel();
    });
    let started = tokio::time::Instant::now();
    let wait = session.logs_live(waiting(DEV_APP, "never", 30), &hooks);
    let during = async {
        tokio::time::sleep(Duration::from_millis(600)).await;
        phone.open_streams(&device())
    };
    let (result, open_during) = tokio::join!(wait, during);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(open_during, before + 1, "the wait reads one stream");
    assert_eq!(result.status, Status::Ok);
    assert_eq!(result.matched, Some(false));
    assert!(result.message.contains("cancelled"), "{}", result.message);
    assert_eq!(phone.open_streams(&device()), before);
    assert!(count.load(Ordering::SeqCst) >= 1, "progress was reported");
}

#[tokio::test(start_paused = true)]
async fn a_wait_ends_when_the_person_blocks_the_app_or_the_task_ends() {
    for by_block in [true, false] {
        let phone = phone();
        let gateway = gateway(&phone);
        let session = task(&gateway, "agent");
        let before = phone.open_streams(&device());
        let hooks = LiveHooks::default();
        let started = tokio::time::Instant::now();
        let wait = session.logs_live(waiting(DEV_APP, "never", 30), &hooks);
        let meanwhile = async {
            tokio::time::sleep(Duration::from_millis(500)).await;
            if by_block {
                gateway.store().block_app(&AppId::new(DEV_APP)).unwrap();
            } else {
                session.end().await;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
            // Written after the block or the end: never shown.
            phone.add_logs(
                &device(),
                &AppId::new(DEV_APP),
                [dev_line(3000, "after the person said no")],
            );
        };
        let (result, ()) = tokio::join!(wait, meanwhile);
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the wait went on after {}",
            if by_block {
                "the block"
            } else {
                "the task ended"
            }
        );
        assert!(
            !result.log.contains("after the person said no"),
            "{}",
            result.log
        );
        assert_eq!(phone.open_streams(&device()), before);
    }
}

#[tokio::test]
async fn timeouts_out_of_range_and_without_a_wait_are_refused() {
    let phone = phone();
    let gateway = gateway(&phone);
    let session = task(&gateway, "agent");
    for seconds in [0, 61] {
        let result = session.logs(waiting(DEV_APP, "x", seconds)).await;
        assert_eq!(result.status, Status::Error);
        assert!(result.message.contains("timeout"), "{}", result.message);
    }
    let alone = LogsRequest {
        timeout: Some(5),
        ..logs(DEV_APP)
    };
    assert_eq!(session.logs(alone).await.status, Status::Error);
    let crash = LogsRequest {
        wait_for: Some("boom".into()),
        ..crashes(DEV_APP)
    };
    assert_eq!(session.logs(crash).await.status, Status::Error);
}

#[tokio::test]
async fn cursors_of_another_app_task_or_altered_are_refused() {
    let phone = phone();
    let gateway = gateway(&phone);
    let session = task(&gateway, "agent");
    let result = session.logs(logs(DEV_APP)).await;
    let cursor = result.cursor.unwrap();
    let for_other = LogsRequest {
        since: Some(format!("cursor:{cursor}")),
        ..logs(OTHER_APP)
    };
    let refused = session.logs(for_other).await;
    assert_eq!(refused.status, Status::Error);
    assert!(refused.message.contains(DEV_APP), "{}", refused.message);
    let elsewhere = task(&gateway, "another agent");
    let refused = elsewhere
        .logs(LogsRequest {
            since: Some(format!("cursor:{cursor}")),
            ..logs(DEV_APP)
        })
        .await;
    assert_eq!(refused.status, Status::Error);
    assert_eq!(refused.message, catalog::cursor_unknown());
    let altered = session
        .logs(LogsRequest {
            since: Some(format!("cursor:{cursor}0")),
            ..logs(DEV_APP)
        })
        .await;
    assert_eq!(altered.message, catalog::cursor_unknown());
}

#[tokio::test]
async fn a_restart_and_a_wrapped_buffer_are_said() {
    let phone = phone();
    let gateway = gateway(&phone);
    let session = task(&gateway, "agent");
    let app = AppId::new(DEV_APP);
    phone.add_logs(&device(), &app, [dev_line(10, "one")]);
    assert_eq!(session.logs(since_last(DEV_APP)).await.shown, 1);
    phone.reboot(&device());
    phone.add_logs(&device(), &app, [dev_line(5000, "after the restart")]);
    let result = session.logs(since_last(DEV_APP)).await;
    assert!(result.message.contains("restarted"), "{}", result.message);
    assert!(result.log.ends_with("after the restart\n"));

    phone.set_buffer_limit(&device(), 3);
    let other = AppId::new(OTHER_APP);
    phone.add_logs(&device(), &app, [dev_line(6000, "kept?")]);
    phone.add_logs(
        &device(),
        &other,
        (0..5).map(|i| other_line(7000 + i, "noise")),
    );
    let result = session.logs(since_last(DEV_APP)).await;
    assert!(result.message.contains("may be lost"), "{}", result.message);
}

#[tokio::test]
async fn a_clock_change_is_said() {
    let phone = phone();
    let gateway = gateway(&phone);
    let session = task(&gateway, "agent");
    session.logs(since_last(DEV_APP)).await;
    phone.set_clock_offset(&device(), time::Duration::hours(-1));
    let result = session.logs(since_last(DEV_APP)).await;
    assert!(
        result.message.contains("clock moved back"),
        "{}",
        result.message
    );
}

#[tokio::test]
async fn the_persons_own_read_asks_nobody_and_is_recorded_as_theirs() {
    let phone = phone();
    let app = AppId::new(RELEASE_APP);
    phone.add_logs(
        &device(),
        &app,
        [line(1.0, LogLevel::Info, "Example", "hello", 10200)],
    );
    let gateway = gateway(&phone);
    let person = gateway.start_person_read();
    let result = person.logs(logs(RELEASE_APP)).await;
    assert_eq!(result.status, Status::Ok, "{}", result.message);
    assert!(result.log.contains("hello"));
    assert!(gateway.store().pending_approvals().unwrap().is_empty());
    // The refused lists apply to the person's view as to any agent's.
    assert_eq!(
        person.logs(logs(BANK)).await.status,
        Status::BlockedByPolicy
    );
    let steps = gateway.store().history(HistoryFilter::default()).unwrap();
    let read = steps.iter().find(|s| s.status == Status::Ok).unwrap();
    assert_eq!(read.agent, catalog::PERSON_READER);
    assert!(
        read.step.starts_with("You read 1 log line"),
        "{}",
        read.step
    );
    assert!(!read.step.contains("hello"));
}

#[tokio::test(start_paused = true)]
async fn a_crash_wait_returns_the_next_report() {
    let phone = phone();
    let gateway = gateway(&phone);
    let session = task(&gateway, "agent");
    let writer = phone.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        writer.add_crash(
            &device(),
            &AppId::new(DEV_APP),
            report(
                3,
                DEV_APP,
                "IllegalStateException: Crash button tapped",
                "FATAL",
            ),
        );
    });
    let result = session.logs(crash_waiting(10)).await;
    assert_eq!(result.status, Status::Ok, "{}", result.message);
    assert_eq!(result.matched, Some(true));
    assert_eq!(result.shown, 1);
}

/// A line of the development build's app from process `pid`.
fn line_of_pid(ms: i64, pid: u32, text: &str) -> LogLine {
    LogLine {
        pid: Some(pid),
        tid: Some(pid),
        ..dev_line(ms, text)
    }
}

/// Item 4 of issue 28: a release build installed over the development build while a wait
/// streams (same uid, same pid: the phone did not even restart the app) logs the awaited
/// line; the wait ends with the decision a read would get (the person is asked), and not a
/// line of it reaches the agent.
#[tokio::test(start_paused = true)]
async fn a_release_build_installed_during_a_wait_is_asked_about_not_streamed() {
    let phone = phone();
    let gateway = gateway(&phone);
    let session = task(&gateway, "agent");
    let writer = phone.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        writer.add_logs(
            &device(),
            &AppId::new(DEV_APP),
            [dev_line(100, "debug line")],
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
        writer.set_dev_build(&device(), &AppId::new(DEV_APP), false);
        writer.add_logs(
            &device(),
            &AppId::new(DEV_APP),
            [dev_line(500, "ready RELEASE-LINE")],
        );
    });
    let result = session.logs(waiting(DEV_APP, "ready", 20)).await;
    assert_eq!(result.status, Status::ApprovalPending, "{}", result.message);
    assert!(result.approval_id.is_some());
    let shown = format!("{result:?}");
    assert!(!shown.contains("RELEASE-LINE"), "{shown}");
    assert!(
        !shown.contains("debug line"),
        "nothing read in the call is shown: {shown}"
    );
    assert_eq!(phone.open_streams(&device()), 0);
}

/// Item 4: the phone's word is read again as soon as a process the wait has not seen logs (a
/// reinstall restarts the app), before its first line is taken: the wait ends then, long
/// before its timeout and before the periodic reading (virtual time).
#[tokio::test(start_paused = true)]
async fn a_new_process_of_a_release_build_ends_the_wait_at_its_first_line() {
    let phone = phone();
    let gateway = gateway(&phone);
    let session = task(&gateway, "agent");
    let writer = phone.clone();
    let started = tokio::time::Instant::now();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        writer.set_dev_build(&device(), &AppId::new(DEV_APP), false);
        writer.add_logs(
            &device(),
            &AppId::new(DEV_APP),
            [line_of_pid(400, 5151, "NEW-PROCESS-LINE")],
        );
    });
    let result = session.logs(waiting(DEV_APP, "never", 30)).await;
    assert_eq!(result.status, Status::ApprovalPending, "{}", result.message);
    assert!(!format!("{result:?}").contains("NEW-PROCESS-LINE"));
    let took = started.elapsed();
    assert!(took < Duration::from_secs(2), "ended after {took:?}");
}

/// Item 4: with no line at all, the phone's word is read again every few seconds, so a
/// release build installed during a long wait ends it as `Changed` (virtual time).
#[tokio::test(start_paused = true)]
async fn a_release_build_installed_during_a_quiet_wait_ends_it_within_seconds() {
    let phone = phone();
    let gateway = gateway(&phone);
    let session = task(&gateway, "agent");
    let writer = phone.clone();
    let started = tokio::time::Instant::now();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        writer.set_dev_build(&device(), &AppId::new(DEV_APP), false);
    });
    let result = session.logs(waiting(DEV_APP, "never", 60)).await;
    assert_eq!(result.status, Status::ApprovalPending, "{}", result.message);
    let took = started.elapsed();
    assert!(took < Duration::from_secs(10), "ended after {took:?}");
}

/// Item 4 (a fresh review found it untested): the wait reads again every word the call was
/// decided on, not only the development build: an app that becomes a system app, starts
/// sharing its uid, or gets another uid during a wait ends it within seconds as `Changed`, and
/// the call is decided again as a read would be: refused, unsupported, or read with the new uid
/// (whose lines alone are shown). Nothing the wait read under the old word is shown (virtual
/// time).
#[tokio::test(start_paused = true)]
async fn a_change_of_system_flag_shared_uid_or_uid_during_a_wait_is_decided_again() {
    for change in ["system", "shared uid", "uid"] {
        let phone = phone();
        let gateway = gateway(&phone);
        let session = task(&gateway, "agent");
        let writer = phone.clone();
        let started = tokio::time::Instant::now();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            let app = AppId::new(DEV_APP);
            writer.add_logs(&device(), &app, [dev_line(300, "OLD-WORD-LINE")]);
            tokio::time::sleep(Duration::from_millis(300)).await;
            let changed = FakeApp::new(app.clone()).label(DEV_APP).dev_build(true);
            let changed = match change {
                "system" => changed.uid(10123).system(true),
                "shared uid" => changed.uid(10123).shared_uid(true),
                _ => changed.uid(10999),
            };
            writer.add_app(&device(), changed);
            writer.add_logs(
                &device(),
                &app,
                [line(
                    0.9,
                    LogLevel::Info,
                    "CrashTest",
                    "ready NEW-UID-LINE",
                    10999,
                )],
            );
        });
        let result = session.logs(waiting(DEV_APP, "ready", 60)).await;
        let took = started.elapsed();
        let shown = format!("{result:?}");
        assert!(
            took < Duration::from_secs(10),
            "{change}: ended after {took:?}: {shown}"
        );
        assert!(!shown.contains("OLD-WORD-LINE"), "{change}: {shown}");
        match change {
            "uid" => {
                assert_eq!(result.status, Status::Ok, "{change}: {}", result.message);
                assert!(shown.contains("NEW-UID-LINE"), "{change}: {shown}");
            }
            _ => assert_ne!(result.status, Status::Ok, "{change}: {}", result.message),
        }
    }
}

/// Item 4: the same for a crash wait: a new report of a release build installed during the
/// wait is asked about, not shown.
#[tokio::test(start_paused = true)]
async fn a_crash_of_a_release_build_installed_during_a_crash_wait_is_asked_about() {
    let phone = phone();
    let gateway = gateway(&phone);
    let session = task(&gateway, "agent");
    let writer = phone.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        writer.set_dev_build(&device(), &AppId::new(DEV_APP), false);
        writer.add_crash(
            &device(),
            &AppId::new(DEV_APP),
            report(
                50,
                DEV_APP,
                "RELEASE-CRASH crash",
                "java.lang.Error: RELEASE-CRASH",
            ),
        );
    });
    let result = session.logs(crash_waiting(20)).await;
    assert_eq!(result.status, Status::ApprovalPending, "{}", result.message);
    assert!(!format!("{result:?}").contains("RELEASE-CRASH"));
}
