//! Every sentence of the permission model and the `phone_logs` call, on the fake phone.

// Tests may unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use common::*;
use phonelogs_driver::{
    AppId, AppInfo, Capabilities, CrashReport, DeviceId, DeviceInfo, LineStream, LogLevel,
    LogListener, LogQuery, LogResult, Result,
};
use phonelogs_fake::{FakeApp, FakePhone};
use phonelogs_gateway::{
    Answer, ApprovalState, Error, Gateway, HistoryFilter, LogsRequest, Status, TaskSpec, TextShown,
    json_escaped_len,
};
use phonelogs_policy::{Agent, Mode, Policy};
use time::{Duration, OffsetDateTime};

fn steps(gateway: &Gateway) -> Vec<String> {
    gateway
        .store()
        .history(HistoryFilter::default())
        .unwrap()
        .into_iter()
        .map(|s| s.step)
        .collect()
}

// --- What the agent gets: logs. ---

#[tokio::test]
async fn a_development_build_is_read_without_asking_and_lines_read_time_tag_text_on_the_computers_clock()
 {
    let phone = phone();
    let gateway = gateway(&phone);
    let session = task(&gateway, "agent");
    let result = session.logs(logs(DEV_APP)).await;
    assert_eq!(result.status, Status::Ok, "{}", result.message);
    assert_eq!(
        result.log,
        "11:00:01.000 CrashTest: started\n11:00:02.250 Net: slow response\n11:00:03.500 CrashTest: failed to save\n"
    );
    assert_eq!(result.lines.len(), 3);
    assert_eq!(result.lines[1].time, "11:00:02.250");
    assert_eq!(result.lines[1].level, "warn");
    assert_eq!(result.rule.as_deref(), Some("App logs"));
    assert!(gateway.store().pending_approvals().unwrap().is_empty());
    assert_eq!(steps(&gateway), ["Read 3 log lines of Crash Test"]);
}

#[tokio::test]
async fn only_the_apps_own_lines_arrive_even_when_the_driver_returns_everyones() {
    let phone = phone();
    phone.set_ignore_uid_filter(true);
    let gateway = gateway(&phone);
    let result = task(&gateway, "agent").logs(logs(DEV_APP)).await;
    assert_eq!(result.status, Status::Ok);
    assert_eq!(result.lines.len(), 3, "{}", result.log);
    assert!(
        !result.log.contains("SECRET") && !result.log.contains("hello from example"),
        "{}",
        result.log
    );
}

#[tokio::test]
async fn filter_matches_tag_or_text_and_level_keeps_more_severe() {
    let gateway = gateway(&phone());
    let session = task(&gateway, "agent");
    let mut request = logs(DEV_APP);
    request.filter = Some("Net".into());
    assert_eq!(session.logs(request).await.lines.len(), 1);
    let mut request = logs(DEV_APP);
    request.filter = Some("save".into());
    assert_eq!(session.logs(request).await.lines[0].text, "failed to save");
    let mut request = logs(DEV_APP);
    request.level = Some("warn".into());
    let result = session.logs(request).await;
    assert_eq!(
        result
            .lines
            .iter()
            .map(|l| l.level.as_str())
            .collect::<Vec<_>>(),
        ["warn", "error"]
    );
    let mut request = logs(DEV_APP);
    request.level = Some("loud".into());
    let result = session.logs(request).await;
    assert_eq!(result.status, Status::Error);
    assert!(
        result
            .message
            .contains("verbose, debug, info, warn, error or fatal")
    );
}

#[tokio::test]
async fn since_takes_every_documented_form_and_defaults_to_the_task_start() {
    let phone = phone();
    let device = device();
    let app = AppId::new(DEV_APP);
    // A line from before the task started is not shown by default.
    phone.add_logs(
        &device,
        &app,
        [line(
            -60.0,
            LogLevel::Info,
            "CrashTest",
            "before the task",
            10123,
        )],
    );
    let gateway = gateway(&phone);
    let session = task(&gateway, "agent");
    assert_eq!(session.logs(logs(DEV_APP)).await.lines.len(), 3);
    for (since, count) in [
        ("10m", 4),
        ("2h", 4),
        ("1d", 4),
        ("2026-11-30T10:00:02Z", 2),
        ("2026-11-30 11:00:02", 2), // the computer's clock is UTC+1
        ("10:59:30", 3),            // a time of day on the computer's clock: today's
        ("11:30", 4),               // still to come today, so yesterday's
    ] {
        let mut request = logs(DEV_APP);
        request.since = Some(since.into());
        let result = session.logs(request).await;
        assert_eq!(result.status, Status::Ok, "{since}: {}", result.message);
        assert_eq!(result.lines.len(), count, "{since}: {}", result.log);
    }
    let mut request = logs(DEV_APP);
    request.since = Some("last tuesday".into());
    let result = session.logs(request).await;
    assert_eq!(result.status, Status::Error);
    for form in ["RFC 3339", "date and time", "time of day", "10m, 2h, 1d"] {
        assert!(result.message.contains(form), "{}", result.message);
    }
}

#[tokio::test]
async fn limits_default_to_200_cap_at_500_and_keep_the_newest_oldest_first() {
    let phone = phone();
    let app = AppId::new(DEV_APP);
    phone.add_logs(
        &device(),
        &app,
        (0..600).map(|i| {
            line(
                10.0 + i as f64,
                LogLevel::Info,
                "Bulk",
                &format!("line {i:03}"),
                10123,
            )
        }),
    );
    let gateway = gateway(&phone);
    let session = task(&gateway, "agent");
    let result = session.logs(logs(DEV_APP)).await;
    assert_eq!(result.lines.len(), 200);
    assert_eq!(result.lines.first().unwrap().text, "line 400");
    assert_eq!(result.lines.last().unwrap().text, "line 599");
    assert_eq!((result.shown, result.left_out, result.cut), (200, 403, 0));
    assert!(
        result.message.contains("403 older lines were left out"),
        "{}",
        result.message
    );
    let mut request = logs(DEV_APP);
    request.limit = Some(500);
    assert_eq!(session.logs(request).await.lines.len(), 500);
    for bad in [0, 501] {
        let mut request = logs(DEV_APP);
        request.limit = Some(bad);
        let result = session.logs(request).await;
        assert_eq!(result.status, Status::Error);
        assert!(result.message.contains("1 to 500"), "{}", result.message);
    }
}

#[tokio::test]
async fn a_result_holds_at_most_64_kb_and_long_lines_are_cut_on_a_utf8_boundary() {
    let phone = phone();
    let app = AppId::new(DEV_APP);
    let long = "é".repeat(1_500); // 3,000 bytes
    phone.add_logs(
        &device(),
        &app,
        (0..100).map(|i| {
            line(
                10.0 + i as f64,
                LogLevel::Info,
                "Big",
                &format!("{i:03}{long}"),
                10123,
            )
        }),
    );
    let gateway = gateway(&phone);
    let session = task(&gateway, "agent");
    let mut request = logs(DEV_APP);
    request.limit = Some(500);
    let result = session.logs(request).await;
    assert!(
        json_escaped_len(&result.log) <= 64 * 1024,
        "{}",
        result.log.len()
    );
    for rendered in result.log.lines() {
        assert!(rendered.len() <= 2_000, "{}", rendered.len());
    }
    assert!(result.lines.len() < 103);
    assert_eq!(result.shown, result.lines.len());
    assert_eq!(result.shown, result.log.lines().count());
    assert_eq!(result.lines.len() + result.left_out, 103);
    assert!(result.lines.last().unwrap().text.starts_with("099"));
    assert_eq!(
        result.cut, result.shown,
        "every line was longer than 2,000 bytes"
    );
    assert!(
        result.message.contains(&format!(
            "{} log lines of Crash Test, oldest first. {} older lines were left out",
            result.shown, result.left_out
        )),
        "{}",
        result.message
    );
    assert!(
        result.message.contains(&format!(
            "{} lines longer than 2,000 bytes were cut",
            result.cut
        )),
        "{}",
        result.message
    );
}

/// The cases of issue 14, in the gateway: 200 lines of 300 bytes are shown whole; of 500 the
/// newest that fit 64 KB, with a true count of the others; four reports with a 30 KB ANR keep
/// four headings.
#[tokio::test]
async fn the_cap_counts_only_what_it_leaves_out_and_the_message_says_so() {
    let phone = phone();
    let app = AppId::new(DEV_APP);
    let text = |i: usize| format!("{i:04} {}", "p".repeat(295));
    phone.add_logs(
        &device(),
        &app,
        (0..500).map(|i| line(10.0 + i as f64, LogLevel::Info, "Busy", &text(i), 10123)),
    );
    let gateway = gateway(&phone);
    let session = task(&gateway, "agent");
    let result = session.logs(logs(DEV_APP)).await;
    // The fixture's three lines and these 500.
    assert_eq!((result.shown, result.left_out), (200, 303));
    assert_eq!(result.log.lines().count(), 200);
    assert!(
        result
            .message
            .starts_with("200 log lines of Crash Test, oldest first. 303 older lines"),
        "{}",
        result.message
    );

    let mut request = logs(DEV_APP);
    request.limit = Some(500);
    let result = session.logs(request).await;
    // Each rendered line is "11:00:10.000 Busy: " and 300 bytes, and its newline.
    let per_line = "11:00:10.000 Busy: ".len() + 300 + 2;
    assert_eq!(result.shown, 64 * 1024 / per_line);
    assert_eq!(result.left_out, 503 - result.shown);
    assert_eq!(result.log.lines().count(), result.shown);
    assert!(result.log.ends_with(&format!("{}\n", text(499))));
    assert!(
        result
            .message
            .contains(&format!("{} older lines were left out", result.left_out)),
        "{}",
        result.message
    );
}

#[tokio::test]
async fn four_reports_with_a_30_kb_anr_keep_four_headings() {
    let phone = FakePhone::new();
    phone.add_device(&device(), "Pixel");
    let app = AppId::new(DEV_APP);
    phone.add_app(
        &device(),
        FakeApp::new(app.clone())
            .label("Crash Test")
            .uid(10123)
            .dev_build(true),
    );
    let anr = format!(
        "Subject: Input dispatching timed out\n{}",
        "  at dev.phonelogs.crashtest.Main.hang(Main.java:7)\n".repeat(600)
    );
    let mut reports = vec![
        report(4, DEV_APP, "ANR: Input dispatching timed out", &anr),
        report(
            3,
            DEV_APP,
            "java.lang.IllegalStateException: buffer",
            "FATAL EXCEPTION: main\n",
        ),
        report(
            2,
            DEV_APP,
            "signal 11 (SIGSEGV)",
            "*** *** ***\nsignal 11\n",
        ),
        report(
            1,
            DEV_APP,
            "java.lang.IllegalStateException: dropbox",
            "Process: x\n",
        ),
    ];
    reports[0].kind = phonelogs_driver::CrashKind::Anr;
    reports[2].kind = phonelogs_driver::CrashKind::NativeCrash;
    for report in reports {
        phone.add_crash(&device(), &app, report);
    }
    let gateway = gateway(&phone);
    let mut request = crashes(DEV_APP);
    request.limit = Some(10);
    let result = task(&gateway, "agent").logs(request).await;
    assert_eq!((result.shown, result.left_out, result.cut), (4, 0, 0));
    assert!(
        result.message.starts_with("4 crash reports of Crash Test"),
        "{}",
        result.message
    );
    for report in &result.reports {
        assert!(result.log.contains(&report.summary), "{}", report.summary);
        assert_eq!(report.text_shown, TextShown::Whole);
    }
}

#[tokio::test]
async fn a_smaller_result_cap_keeps_every_count_true_and_a_too_small_one_is_refused() {
    let phone = phone();
    let app = AppId::new(DEV_APP);
    phone.add_logs(
        &device(),
        &app,
        (0..300).map(|i| {
            line(
                10.0 + i as f64,
                LogLevel::Info,
                "Busy",
                &format!("{i:04} {}", "q".repeat(200)),
                10123,
            )
        }),
    );
    let gateway = builder(&phone).result_cap(8 * 1024).build().unwrap();
    assert_eq!(gateway.result_cap(), 8 * 1024);
    let result = task(&gateway, "agent").logs(logs(DEV_APP)).await;
    assert!(json_escaped_len(&result.log) <= 8 * 1024);
    assert_eq!(result.log.lines().count(), result.shown);
    assert_eq!(result.shown + result.left_out, 303);
    assert!(
        result.message.contains(&format!(
            "{} log lines of Crash Test, oldest first. {} older lines were left out",
            result.shown, result.left_out
        )),
        "{}",
        result.message
    );
    match builder(&phone).result_cap(4_095).build() {
        Err(Error::InvalidArgument(message)) => assert!(message.contains("4096"), "{message}"),
        other => panic!("a 4,095-byte cap was accepted: {:?}", other.map(|_| ())),
    }
}

// --- Crash reports. ---

#[tokio::test]
async fn crash_reports_come_newest_first_within_the_limit() {
    let phone = phone();
    for i in 0..12 {
        phone.add_crash(
            &device(),
            &AppId::new(DEV_APP),
            report(
                20 + i,
                DEV_APP,
                &format!("crash {i}"),
                &format!("crash {i}\n"),
            ),
        );
    }
    let gateway = gateway(&phone);
    let session = task(&gateway, "agent");
    let result = session.logs(crashes(DEV_APP)).await;
    assert_eq!(result.status, Status::Ok, "{}", result.message);
    assert_eq!(result.reports.len(), 3);
    assert_eq!(result.reports[0].summary, "crash 11");
    // The heading, the line under it (group, fingerprint), then the text. Without a symbols
    // directory and with no frame that symbols would help, symbols are not mentioned at all.
    assert!(result.log.starts_with("java_crash at 2026-11-30T10:00:31Z, pid 4242, dev.phonelogs.crashtest: crash 11\nJava crash ×1 (10:00:31) crash 11 · fingerprint "), "{}", result.log);
    assert!(!result.log.contains("symbols"), "{}", result.log);
    assert!(!result.message.contains("symbols"), "{}", result.message);
    assert!(result.reports.iter().all(|r| r.symbols.is_none()));
    let mut request = crashes(DEV_APP);
    request.limit = Some(10);
    assert_eq!(session.logs(request).await.reports.len(), 10);
    request = crashes(DEV_APP);
    request.limit = Some(11);
    let result = session.logs(request).await;
    assert_eq!(result.status, Status::Error);
    assert!(result.message.contains("1 to 10"));
    assert_eq!(steps(&gateway)[0], "Read 3 crash reports of Crash Test");
}

#[tokio::test]
async fn big_crash_reports_keep_every_heading_whole_texts_then_one_cut_then_first_lines() {
    let phone = FakePhone::new();
    phone.add_device(&device(), "Pixel");
    let app = AppId::new(DEV_APP);
    phone.add_app(
        &device(),
        FakeApp::new(app.clone())
            .label("Crash Test")
            .uid(10123)
            .dev_build(true),
    );
    for (i, size) in [(1, 40_000), (2, 40_000), (3, 40_000)] {
        let text = format!("head {i}\n{}", "z".repeat(size));
        phone.add_crash(
            &device(),
            &app,
            report(i, DEV_APP, &format!("summary {i}"), &text),
        );
    }
    let gateway = gateway(&phone);
    let mut request = crashes(DEV_APP);
    request.limit = Some(3);
    let result = task(&gateway, "agent").logs(request).await;
    assert!(result.log.len() <= 64 * 1024);
    assert_eq!(
        result
            .reports
            .iter()
            .map(|r| r.summary.as_str())
            .collect::<Vec<_>>(),
        ["summary 3", "summary 2", "summary 1"]
    );
    assert!(!result.reports[0].cut);
    assert!(result.reports[1].cut && result.reports[1].text.len() > 10_000);
    assert_eq!(result.reports[2].text, "head 1");
    assert_eq!(result.reports[2].text_shown, TextShown::FirstLine);
    assert_eq!((result.shown, result.left_out, result.cut), (3, 0, 2));
    assert!(
        result
            .message
            .contains("1 text was cut short, 1 shows only its first line to stay within 64 KB"),
        "{}",
        result.message
    );
}

// --- Asking. ---

#[tokio::test]
async fn the_first_read_of_a_release_build_asks_and_allow_for_this_task_covers_logs_and_crashes() {
    let gateway = gateway(&phone());
    let session = task(&gateway, "agent");
    let first = session.logs(logs(RELEASE_APP)).await;
    assert_eq!(first.status, Status::ApprovalPending);
    assert_eq!(first.rule.as_deref(), Some("App logs"));
    assert!(first.log.is_empty() && first.lines.is_empty());
    let id = first.approval_id.clone().unwrap();
    let pending = gateway.store().pending_approvals().unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].question, "Read the logs of Example?");
    assert_eq!(pending[0].rule, "App logs");
    assert_eq!(
        (
            pending[0].agent.as_str(),
            pending[0].device.as_str(),
            pending[0].app.as_str()
        ),
        ("agent", DEVICE, RELEASE_APP)
    );
    // Asking again before the answer shares the same approval.
    assert_eq!(
        session.logs(logs(RELEASE_APP)).await.approval_id.as_deref(),
        Some(id.as_str())
    );
    assert_eq!(
        session.logs(with_id(logs(RELEASE_APP), &id)).await.status,
        Status::ApprovalPending
    );

    gateway.store().answer(&id, Answer::Task).unwrap();
    let read = session.logs(with_id(logs(RELEASE_APP), &id)).await;
    assert_eq!(read.status, Status::Ok, "{}", read.message);
    assert_eq!(read.lines[0].text, "hello from example");
    assert_eq!(session.logs(logs(RELEASE_APP)).await.status, Status::Ok);
    assert_eq!(session.logs(crashes(RELEASE_APP)).await.status, Status::Ok);
    assert_eq!(
        steps(&gateway),
        [
            "Waiting for you: Read the logs of Example",
            "Answered \u{201c}Allow for this task\u{201d} on the person's side (phonelogs): Read the logs of Example?",
            "Read 1 log line of Example",
            "Read 1 log line of Example",
            "Read 1 crash report of Example"
        ]
    );
    // Without Always allow, the next task asks again.
    session.end().await;
    assert_eq!(
        task(&gateway, "agent").logs(logs(RELEASE_APP)).await.status,
        Status::ApprovalPending
    );
}

#[tokio::test]
async fn allow_once_covers_one_call() {
    let gateway = gateway(&phone());
    let session = task(&gateway, "agent");
    let id = session.logs(logs(RELEASE_APP)).await.approval_id.unwrap();
    gateway.store().answer(&id, Answer::Once).unwrap();
    assert_eq!(
        session.logs(with_id(logs(RELEASE_APP), &id)).await.status,
        Status::Ok
    );
    let again = session.logs(with_id(logs(RELEASE_APP), &id)).await;
    assert_eq!(again.status, Status::Error);
    assert!(again.message.contains("used"), "{}", again.message);
    let fresh = session.logs(logs(RELEASE_APP)).await;
    assert_eq!(fresh.status, Status::ApprovalPending);
    assert_ne!(fresh.approval_id.as_deref(), Some(id.as_str()));
}

#[tokio::test]
async fn always_allow_covers_that_app_agent_and_phone_in_later_tasks_until_revoked() {
    let phone = phone();
    phone.add_device(&DeviceId::new("emulator-5556"), "Pixel 9");
    phone.add_app(
        &DeviceId::new("emulator-5556"),
        FakeApp::new(AppId::new(RELEASE_APP))
            .label("Example")
            .uid(10200),
    );
    let gateway = gateway(&phone);
    let session = task(&gateway, "agent");
    let mut request = logs(RELEASE_APP);
    request.device = Some(DEVICE.into());
    let id = session.logs(request.clone()).await.approval_id.unwrap();
    gateway.store().answer(&id, Answer::Always).unwrap();
    assert_eq!(
        session.logs(with_id(request.clone(), &id)).await.status,
        Status::Ok
    );
    session.end().await;

    let later = task(&gateway, "agent");
    assert_eq!(later.logs(request.clone()).await.status, Status::Ok);
    assert_eq!(
        task(&gateway, "someone-else")
            .logs(request.clone())
            .await
            .status,
        Status::ApprovalPending
    );
    let mut other_phone = request.clone();
    other_phone.device = Some("emulator-5556".into());
    assert_eq!(
        later.logs(other_phone).await.status,
        Status::ApprovalPending
    );
    assert_eq!(
        later
            .logs({
                let mut r = logs(OTHER_APP);
                r.device = Some(DEVICE.into());
                r
            })
            .await
            .status,
        Status::ApprovalPending
    );

    let rules = gateway.store().rules().unwrap();
    assert_eq!(rules.len(), 1);
    assert_eq!(
        (
            rules[0].agent.as_str(),
            rules[0].device.as_str(),
            rules[0].app.as_str()
        ),
        ("agent", DEVICE, RELEASE_APP)
    );
    gateway.store().revoke_rule(&rules[0].id).unwrap();
    assert!(matches!(
        gateway.store().revoke_rule(&rules[0].id),
        Err(Error::UnknownRule(_))
    ));
    assert_eq!(
        task(&gateway, "agent").logs(request).await.status,
        Status::ApprovalPending
    );
}

#[tokio::test]
async fn a_denied_approval_returns_denied_naming_the_rule() {
    let gateway = gateway(&phone());
    let session = task(&gateway, "agent");
    let id = session.logs(logs(RELEASE_APP)).await.approval_id.unwrap();
    gateway.store().answer(&id, Answer::Deny).unwrap();
    let result = session.logs(with_id(logs(RELEASE_APP), &id)).await;
    assert_eq!(result.status, Status::Denied);
    assert_eq!(result.rule.as_deref(), Some("App logs"));
    assert!(result.log.is_empty());
}

#[tokio::test]
async fn two_concurrent_calls_for_the_same_app_make_one_pending_approval() {
    let gateway = gateway(&phone());
    let session = task(&gateway, "agent");
    let clone = session.clone();
    let (a, b, c) = tokio::join!(
        session.logs(logs(RELEASE_APP)),
        clone.logs(logs(RELEASE_APP)),
        session.logs(crashes(RELEASE_APP)),
    );
    assert_eq!(a.status, Status::ApprovalPending);
    assert_eq!(a.approval_id, b.approval_id);
    assert_eq!(a.approval_id, c.approval_id);
    assert_eq!(gateway.store().pending_approvals().unwrap().len(), 1);
    // Across threads too.
    let session2 = task(&gateway, "agent");
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let s = session2.clone();
            tokio::spawn(async move { s.logs(logs(RELEASE_APP)).await.approval_id })
        })
        .collect();
    let mut ids = Vec::new();
    for handle in handles {
        ids.push(handle.await.unwrap());
    }
    ids.dedup();
    assert_eq!(ids.len(), 1, "{ids:?}");
}

#[tokio::test]
async fn an_approval_is_bound_to_its_task_agent_device_and_app() {
    let phone = phone();
    phone.add_device(&DeviceId::new("emulator-5556"), "Pixel 9");
    phone.add_app(
        &DeviceId::new("emulator-5556"),
        FakeApp::new(AppId::new(RELEASE_APP))
            .label("Example")
            .uid(10200),
    );
    let gateway = gateway(&phone);
    let session = task(&gateway, "agent");
    let mut request = logs(RELEASE_APP);
    request.device = Some(DEVICE.into());
    let id = session.logs(request.clone()).await.approval_id.unwrap();
    gateway.store().answer(&id, Answer::Task).unwrap();

    let mut other_app = with_id(logs(OTHER_APP), &id);
    other_app.device = Some(DEVICE.into());
    let mut other_device = with_id(logs(RELEASE_APP), &id);
    other_device.device = Some("emulator-5556".into());
    // In its own task, the answered id of another question covers nothing: the call asks its
    // own question (as one without an id would).
    for request in [other_app, other_device] {
        let result = session.logs(request).await;
        assert_eq!(result.status, Status::ApprovalPending, "{}", result.message);
        assert_ne!(result.approval_id.as_deref(), Some(id.as_str()));
        assert!(result.log.is_empty());
    }
    for (session, request) in [
        (task(&gateway, "agent"), with_id(request.clone(), &id)),
        (task(&gateway, "intruder"), with_id(request.clone(), &id)),
    ] {
        let result = session.logs(request).await;
        assert_eq!(result.status, Status::Error, "{}", result.message);
        assert!(
            result.message.contains("cannot be used for this call"),
            "{}",
            result.message
        );
        assert!(result.log.is_empty());
    }
    let unknown = session.logs(with_id(request, "ap-nope")).await;
    assert_eq!(unknown.status, Status::Error);
    assert!(unknown.message.contains("does not exist"));
}

#[tokio::test]
async fn a_pending_approval_expires_when_its_task_ends() {
    let gateway = gateway(&phone());
    let session = task(&gateway, "agent");
    let id = session.logs(logs(RELEASE_APP)).await.approval_id.unwrap();
    session.end().await;
    let approval = gateway.store().approval(&id).unwrap().unwrap();
    assert_eq!(approval.state, ApprovalState::Expired);
    assert!(gateway.store().pending_approvals().unwrap().is_empty());
    assert!(matches!(
        gateway.store().answer(&id, Answer::Task),
        Err(Error::ApprovalExpired(_))
    ));
    assert_eq!(session.logs(logs(RELEASE_APP)).await.status, Status::Error);
    assert_eq!(
        session
            .wait_for_answer(&id, std::time::Duration::from_millis(10))
            .await,
        None
    );
}

#[tokio::test]
async fn answers_are_the_persons_once_and_unknown_ids_are_clear_errors() {
    let gateway = gateway(&phone());
    let session = task(&gateway, "agent");
    let id = session.logs(logs(RELEASE_APP)).await.approval_id.unwrap();
    gateway.store().answer(&id, Answer::Once).unwrap();
    assert!(matches!(
        gateway.store().answer(&id, Answer::Always),
        Err(Error::AlreadyAnswered(_))
    ));
    assert!(matches!(
        gateway.store().answer("ap-unknown", Answer::Once),
        Err(Error::UnknownApproval(_))
    ));
    assert_eq!(
        session
            .wait_for_answer(&id, std::time::Duration::from_secs(5))
            .await,
        Some(Answer::Once)
    );
    for (text, answer) in [
        ("once", Answer::Once),
        ("task", Answer::Task),
        ("always", Answer::Always),
        ("deny", Answer::Deny),
    ] {
        assert_eq!(Answer::parse(text), Some(answer));
        assert_eq!(
            serde_json::to_value(answer).unwrap(),
            serde_json::json!(text)
        );
    }
}

#[tokio::test]
async fn wait_for_answer_sees_an_answer_given_elsewhere() {
    let gateway = gateway(&phone());
    let session = task(&gateway, "agent");
    let id = session.logs(logs(RELEASE_APP)).await.approval_id.unwrap();
    let store = gateway.store().clone();
    let answer_id = id.clone();
    let answering = tokio::spawn(async move {
        tokio::task::yield_now().await;
        store.answer(&answer_id, Answer::Task).unwrap();
    });
    let got = session
        .wait_for_answer(&id, std::time::Duration::from_secs(30))
        .await;
    answering.await.unwrap();
    assert_eq!(got, Some(Answer::Task));
}

#[tokio::test]
async fn a_release_build_asks_even_when_installed_from_this_computer_and_a_dev_build_never_does() {
    let phone = phone();
    let gateway = gateway(&phone);
    // The fake knows nothing of where an app came from: only the dev_build flag counts.
    phone.set_dev_build(&device(), &AppId::new(DEV_APP), false);
    assert_eq!(
        task(&gateway, "agent").logs(logs(DEV_APP)).await.status,
        Status::ApprovalPending
    );
    phone.set_dev_build(&device(), &AppId::new(RELEASE_APP), true);
    assert_eq!(
        task(&gateway, "agent").logs(logs(RELEASE_APP)).await.status,
        Status::Ok
    );
}

// --- Scope. ---

#[tokio::test]
async fn scope_and_task_lists_and_watch_only_agents_are_scope_denied_while_read_only_may_read() {
    let gateway = gateway(&phone());
    let watch = gateway.start_task(TaskSpec::new(Agent::new("watcher", Mode::WatchOnly)));
    let result = watch.logs(logs(DEV_APP)).await;
    assert_eq!(result.status, Status::ScopeDenied);
    assert!(result.log.is_empty());
    let read_only = gateway.start_task(TaskSpec::new(Agent::new("reader", Mode::ReadOnly)));
    assert_eq!(read_only.logs(logs(DEV_APP)).await.status, Status::Ok);
    let scoped = gateway.start_task(TaskSpec::new(
        Agent::new("scoped", Mode::Full).with_scope([AppId::new(RELEASE_APP)]),
    ));
    assert_eq!(scoped.logs(logs(DEV_APP)).await.status, Status::ScopeDenied);
    let listed = gateway.start_task(TaskSpec {
        apps: Some(vec![AppId::new(RELEASE_APP)]),
        ..TaskSpec::new(agent("lister"))
    });
    assert_eq!(listed.logs(logs(DEV_APP)).await.status, Status::ScopeDenied);
    let devices = gateway.start_task(TaskSpec {
        devices: Some(vec![DeviceId::new("emulator-9999")]),
        ..TaskSpec::new(agent("d"))
    });
    let mut request = logs(DEV_APP);
    request.device = Some(DEVICE.into());
    assert_eq!(devices.logs(request).await.status, Status::ScopeDenied);
    // Decided from the app's id before the phone is asked anything, so the step names the id
    // (the label would come from the phone).
    assert!(
        steps(&gateway).contains(&format!("Outside the scope: read the logs of {DEV_APP}")),
        "{:?}",
        steps(&gateway)
    );
}

// --- Some apps never. ---

#[tokio::test]
async fn refused_and_helper_and_phone_apps_are_blocked_naming_their_rule() {
    let gateway = gateway(&phone());
    let session = gateway.start_task(TaskSpec {
        apps: Some([BANK, SETTINGS, WDA, APPIUM].map(AppId::new).to_vec()),
        ..TaskSpec::new(agent("agent").with_scope([BANK, SETTINGS, WDA, APPIUM].map(AppId::new)))
    });
    for (app, rule) in [
        (BANK, "Finance apps"),
        (SETTINGS, "The phone's own apps"),
        (WDA, "UI automation helpers"),
        (APPIUM, "UI automation helpers"),
    ] {
        for request in [logs(app), crashes(app)] {
            let result = session.logs(request).await;
            assert_eq!(result.status, Status::BlockedByPolicy, "{app}");
            assert_eq!(result.rule.as_deref(), Some(rule), "{app}");
            assert!(result.log.is_empty());
        }
    }
    assert!(steps(&gateway).contains(&format!(
        "Blocked by \u{201c}Finance apps\u{201d}: read the logs of {BANK}"
    )));
    assert!(gateway.store().pending_approvals().unwrap().is_empty());
}

#[tokio::test]
async fn a_block_rule_wins_even_over_an_app_allowed_for_this_task_and_config_extends_the_lists() {
    let phone = phone();
    let policy = Policy::from_json(r#"{ "block": [{ "name": "Other's apps", "apps": ["com.example.other"] }], "helpers": ["com.example.app"] }"#).unwrap();
    let gateway = builder(&phone).policy(policy).build().unwrap();
    let session = task(&gateway, "agent");
    let result = session.logs(logs(OTHER_APP)).await;
    assert_eq!(
        (result.status, result.rule.as_deref()),
        (Status::BlockedByPolicy, Some("Other's apps"))
    );
    let result = session.logs(logs(RELEASE_APP)).await;
    assert_eq!(
        (result.status, result.rule.as_deref()),
        (Status::BlockedByPolicy, Some("UI automation helpers"))
    );

    // The person blocks an app after allowing it for this task: the block wins.
    let plain = gateway_with_default_policy(&phone);
    let session = task(&plain, "agent");
    let id = session.logs(logs(OTHER_APP)).await.approval_id.unwrap();
    plain.store().answer(&id, Answer::Task).unwrap();
    assert_eq!(session.logs(logs(OTHER_APP)).await.status, Status::Ok);
    plain.store().block_app(&AppId::new(OTHER_APP)).unwrap();
    let result = session.logs(logs(OTHER_APP)).await;
    assert_eq!(
        (result.status, result.rule.as_deref()),
        (Status::BlockedByPolicy, Some("Blocked apps"))
    );
    assert_eq!(
        plain.store().blocked_apps().unwrap(),
        [AppId::new(OTHER_APP)]
    );
    plain.store().unblock_app(&AppId::new(OTHER_APP)).unwrap();
    assert_eq!(session.logs(logs(OTHER_APP)).await.status, Status::Ok);
    assert!(matches!(
        plain.store().unblock_app(&AppId::new(OTHER_APP)),
        Err(Error::NotBlocked(_))
    ));
}

fn gateway_with_default_policy(phone: &FakePhone) -> Gateway {
    builder(phone).build().unwrap()
}

// --- History. ---

#[tokio::test]
async fn history_keeps_the_arguments_and_never_the_text() {
    let gateway = gateway(&phone());
    let session = task(&gateway, "agent");
    let request = LogsRequest {
        since: Some("10m".into()),
        filter: Some("save".into()),
        level: Some("error".into()),
        limit: Some(50),
        ..logs(DEV_APP)
    };
    assert_eq!(session.logs(request).await.status, Status::Ok);
    let history = gateway
        .store()
        .history(HistoryFilter {
            task_id: Some(session.task_id().to_owned()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(history.len(), 1);
    let step = &history[0];
    assert_eq!(step.step, "Read 1 log line of Crash Test");
    assert_eq!(step.status, Status::Ok);
    assert_eq!(
        (step.agent.as_str(), step.device.as_deref()),
        ("agent", Some(DEVICE))
    );
    assert_eq!(step.args.app, DEV_APP);
    assert_eq!(step.args.kind, "logs");
    // `since` as the call read it (issue 28 item 13): ten minutes before the gateway's clock.
    assert_eq!(step.args.since.as_deref(), Some("2026-11-30T09:50:00Z"));
    assert_eq!(step.args.filter.as_deref(), Some("save"));
    assert_eq!(step.args.level.as_deref(), Some("error"));
    assert_eq!(step.args.limit, Some(50));
    let json = serde_json::to_string(&history).unwrap();
    assert!(!json.contains("failed to save"), "{json}");
    let limited = gateway
        .store()
        .history(HistoryFilter {
            limit: Some(0),
            ..Default::default()
        })
        .unwrap();
    assert!(limited.is_empty());
}

// --- Listeners, errors. ---

/// Item 5 of issue 28: two tasks (two HTTP sessions) read the same app on one phone through
/// one listener (the iPhone's follower); the first task's end leaves it to the second, and
/// only the last task's end stops it.
#[tokio::test]
async fn a_listener_read_by_two_tasks_stops_when_the_last_of_them_ends() {
    let phone = phone_with(FakePhone::new_listener());
    let gateway = gateway(&phone);
    let app = AppId::new(DEV_APP);
    let first = task(&gateway, "agent-a");
    let second = task(&gateway, "agent-b");
    assert_eq!(first.logs(logs(DEV_APP)).await.status, Status::Ok);
    // Read twice by one task: still one user.
    assert_eq!(second.logs(logs(DEV_APP)).await.status, Status::Ok);
    assert_eq!(second.logs(logs(DEV_APP)).await.status, Status::Ok);
    first.end().await;
    assert!(
        phone.is_listening(&device(), &app),
        "one task's end stopped the listener another task reads through"
    );
    let stops = |phone: &FakePhone| {
        phone
            .calls()
            .iter()
            .filter(|c| c.starts_with("stop_app_logs"))
            .count()
    };
    assert_eq!(stops(&phone), 0);
    second.end().await;
    assert!(!phone.is_listening(&device(), &app));
    assert_eq!(stops(&phone), 1);
    // A task that reads after the listener stopped starts it again, and stops it alone.
    let third = task(&gateway, "agent-c");
    assert_eq!(third.logs(logs(DEV_APP)).await.status, Status::Ok);
    assert!(phone.is_listening(&device(), &app));
    third.end().await;
    assert!(!phone.is_listening(&device(), &app));
}

/// The fake listener, with `app_info` held for a while when `slow` is set (a phone that takes
/// its time to answer the lookup of the call).
struct Slow {
    phone: FakePhone,
    slow: Arc<AtomicBool>,
    /// The same for the read itself (`app_logs`), which starts the listener once it answers.
    slow_read: Arc<AtomicBool>,
}

#[async_trait]
impl phonelogs_driver::AppLogger for Slow {
    fn capabilities(&self) -> Capabilities {
        self.phone.capabilities()
    }
    async fn devices(&self) -> Result<Vec<DeviceInfo>> {
        self.phone.devices().await
    }
    async fn app_info(&self, device: &DeviceId, app: &AppId) -> Result<AppInfo> {
        if self.slow.swap(false, Ordering::SeqCst) {
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        }
        self.phone.app_info(device, app).await
    }
    async fn app_logs(
        &self,
        device: &DeviceId,
        app: &AppId,
        query: &LogQuery,
    ) -> Result<LogResult> {
        if self.slow_read.swap(false, Ordering::SeqCst) {
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        }
        self.phone.app_logs(device, app, query).await
    }
    async fn app_crashes(
        &self,
        device: &DeviceId,
        app: &AppId,
        since: OffsetDateTime,
        limit: usize,
    ) -> Result<Vec<CrashReport>> {
        self.phone.app_crashes(device, app, since, limit).await
    }
    async fn dev_build(&self, device: &DeviceId, app: &AppId) -> Result<bool> {
        self.phone.dev_build(device, app).await
    }
    async fn follow_app_logs(
        &self,
        device: &DeviceId,
        app: &AppId,
        query: &LogQuery,
    ) -> Result<Box<dyn LineStream>> {
        self.phone.follow_app_logs(device, app, query).await
    }
    fn listener(&self) -> Option<&dyn LogListener> {
        self.phone.listener()
    }
}

/// Issue 28 item 5, as a fresh review found it: a call already past `prepare` when its task ends (an HTTP session dropped while a
/// call is in flight, its lookup still on the wire) reaches `mark_read` after `end`: it is not
/// counted, and must not start the listener (which no task's end would stop): it ends with the
/// task, or stops what its read started.
#[tokio::test(start_paused = true)]
async fn a_call_in_flight_when_its_task_ends_leaves_no_listener_running() {
    // Held in the lookup (the call is not yet counted when the task ends), then in the read
    // itself (counted, and the task's end stops the listener before the read starts it).
    for in_the_read in [false, true] {
        let phone = phone_with(FakePhone::new_listener());
        let slow = Arc::new(AtomicBool::new(!in_the_read));
        let slow_read = Arc::new(AtomicBool::new(in_the_read));
        let gateway: Gateway = Gateway::builder()
            .driver(Arc::new(Slow {
                phone: phone.clone(),
                slow,
                slow_read,
            }))
            .local_offset(time::macros::offset!(+1))
            .clock(|| START)
            .build()
            .unwrap();
        let session = task(&gateway, "agent");
        let call = {
            let session = session.clone();
            tokio::spawn(async move { session.logs(logs(DEV_APP)).await })
        };
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        session.end().await;
        let result = call.await.unwrap();
        let app = AppId::new(DEV_APP);
        assert!(
            !phone.is_listening(&device(), &app),
            "the listener runs on after the task's end (held in the read: {in_the_read}; the call returned {:?}: {} lines: {:?})",
            result.status,
            result.shown,
            result.log
        );
    }
}

/// Issue 28 item 5, as a fresh review found it: one listener's slow stop (a farm's usbmuxd that
/// does not answer) at a task's end holds no other task's read of another app: only that
/// listener's count is locked across its stop (virtual time).
#[tokio::test(start_paused = true)]
async fn a_slow_stop_of_one_task_does_not_hold_other_tasks_reads() {
    let phone = phone_with(FakePhone::new_listener());
    phone.add_app(
        &device(),
        phonelogs_fake::FakeApp::new(AppId::new("dev.phonelogs.second"))
            .label("Second")
            .uid(10990)
            .dev_build(true),
    );
    let gateway = gateway(&phone);
    let first = task(&gateway, "agent-a");
    assert_eq!(first.logs(logs(DEV_APP)).await.status, Status::Ok);
    phone.fail_next(
        phonelogs_fake::Operation::StopAppLogs,
        phonelogs_fake::Fault::Hang(std::time::Duration::from_secs(600)),
    );
    let ending = tokio::spawn(async move { first.end().await });
    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    let second = task(&gateway, "agent-b");
    let started = tokio::time::Instant::now();
    // Another app: nothing to do with the listener being stopped.
    let got = second.logs(logs("dev.phonelogs.second")).await;
    let took = started.elapsed();
    assert!(
        took < std::time::Duration::from_secs(1),
        "another task's read waited {took:?} ({:?})",
        got.status
    );
    ending.await.unwrap();
}

#[tokio::test]
async fn a_listening_driver_stops_when_the_task_that_read_logs_ends() {
    let phone = phone_with(FakePhone::new_listener());
    let gateway = gateway(&phone);
    let session = task(&gateway, "agent");
    assert_eq!(session.logs(logs(DEV_APP)).await.status, Status::Ok);
    assert!(phone.is_listening(&device(), &AppId::new(DEV_APP)));
    session.end().await;
    assert!(!phone.is_listening(&device(), &AppId::new(DEV_APP)));
    assert!(
        phone
            .calls()
            .iter()
            .any(|c| c == &format!("stop_app_logs {DEVICE} {DEV_APP}"))
    );
}

#[tokio::test]
async fn devices_apps_and_drivers_that_fail_are_clear_results() {
    let phone = phone();
    let gateway = gateway(&phone);
    let session = task(&gateway, "agent");
    let result = session.logs(logs("com.example.notinstalled")).await;
    assert_eq!(result.status, Status::Error);
    assert!(
        result.message.contains("not installed"),
        "{}",
        result.message
    );
    let result = session.logs(logs(SHARED)).await;
    assert_eq!(result.status, Status::Unsupported, "{}", result.message);
    let result = session.logs(logs("bad id; reboot")).await;
    assert_eq!(result.status, Status::Error);
    let mut request = logs(DEV_APP);
    request.device = Some("nowhere".into());
    assert_eq!(session.logs(request).await.status, Status::Error);
    phone.add_device(&DeviceId::new("emulator-5556"), "Pixel 9");
    let result = session.logs(logs(DEV_APP)).await;
    assert_eq!(result.status, Status::Error);
    assert!(
        result.message.contains("name one with device"),
        "{}",
        result.message
    );
    let mut request = crashes(DEV_APP);
    request.device = Some(DEVICE.into());
    phone.fail_next(
        phonelogs_fake::Operation::AppCrashes,
        phonelogs_fake::Fault::Hang(std::time::Duration::from_secs(3600)),
    );
    let quick = builder(&phone)
        .call_timeout(std::time::Duration::from_millis(50))
        .build()
        .unwrap();
    let result = task(&quick, "agent").logs(request).await;
    assert_eq!(result.status, Status::Error);
    assert!(result.message.contains("timed out"), "{}", result.message);
    let _ = Duration::ZERO;
}

#[tokio::test]
async fn the_devices_of_every_driver_are_listed() {
    let a = phone();
    let b = FakePhone::new();
    b.add_device(&DeviceId::new("iphone-1"), "iPhone");
    let gateway = builder(&a).driver(std::sync::Arc::new(b)).build().unwrap();
    let ids: Vec<String> = gateway
        .devices()
        .await
        .unwrap()
        .into_iter()
        .map(|d| d.id.to_string())
        .collect();
    assert_eq!(ids, [DEVICE, "iphone-1"]);
}

/// A drop box entry carries whole seconds; a task starts at any instant. A crash in the task's
/// first second (reported at that second's start) is still the task's.
#[tokio::test]
async fn a_crash_in_the_tasks_first_second_is_not_lost() {
    let phone = phone();
    phone.add_crash(
        &device(),
        &AppId::new(DEV_APP),
        report(0, DEV_APP, "crash at once", "crash at once\n"),
    );
    phone.add_crash(
        &device(),
        &AppId::new(DEV_APP),
        report(-1, DEV_APP, "the second before", "the second before\n"),
    );
    let gateway = builder(&phone)
        .clock(|| START + time::Duration::milliseconds(700))
        .build()
        .unwrap();
    let session = task(&gateway, "agent");
    let result = session.logs(crashes(DEV_APP)).await;
    assert_eq!(result.status, Status::Ok, "{}", result.message);
    let summaries: Vec<&str> = result.reports.iter().map(|r| r.summary.as_str()).collect();
    assert!(summaries.contains(&"crash at once"), "{summaries:?}");
    assert!(!summaries.contains(&"the second before"), "{summaries:?}");
}

// --- Never a silent empty answer: the driver's notices are said in the message. ---

#[tokio::test]
async fn a_read_that_could_not_see_the_apps_processes_says_why_and_the_fix_with_what_it_read() {
    use phonelogs_driver::LogNotice;
    let phone = phone();
    phone.set_log_notices(
        &device(),
        &AppId::new(DEV_APP),
        vec![LogNotice::Unreadable {
            cause: "the phone is locked".into(),
            fix: "unlock it".into(),
        }],
    );
    let gateway = gateway(&phone);
    let result = task(&gateway, "agent").logs(logs(DEV_APP)).await;
    // Still `ok`, with the lines that could be read, and the message says what failed.
    assert_eq!(result.status, Status::Ok, "{}", result.message);
    assert_eq!(result.lines.len(), 3);
    assert_eq!(
        result.message,
        "3 log lines of Crash Test, oldest first. New lines of Crash Test cannot be read now: the phone is locked. To fix it: unlock it."
    );

    // An app that runs no process is a true 0, and says so.
    phone.set_log_notices(&device(), &AppId::new(DEV_APP), vec![LogNotice::NotRunning]);
    let mut request = logs(DEV_APP);
    request.filter = Some("nothing logs this".into());
    let result = task(&gateway, "agent").logs(request).await;
    assert_eq!(result.lines.len(), 0);
    assert_eq!(
        result.message,
        "0 log lines of Crash Test, oldest first. Crash Test is not running on the phone now, so no new line of it can come: launch it, then read again."
    );
}

#[tokio::test]
async fn private_values_are_explained_only_when_a_line_shown_holds_them_and_counted_over_those() {
    use phonelogs_driver::{LogLine, LogNotice};
    let phone = phone();
    let app = AppId::new(DEV_APP);
    let redacted = LogNotice::Redacted {
        marker: "<private>".into(),
        why: "the phone hides them".into(),
        fix: "mark them public".into(),
    };
    phone.set_log_notices(&device(), &app, vec![redacted]);
    let gateway = gateway(&phone);
    let plain = task(&gateway, "agent").logs(logs(DEV_APP)).await;
    assert!(!plain.message.contains("private"), "{}", plain.message);

    let line = |second: i64, text: &str| LogLine {
        time: START + Duration::seconds(second),
        level: LogLevel::Info,
        tag: "Net".into(),
        text: text.into(),
        pid: Some(4242),
        tid: Some(4242),
        uid: Some(10123),
    };
    phone.add_logs(
        &device(),
        &app,
        [
            line(10, "user <private> signed in"),
            line(11, "token <private> refreshed"),
            line(12, "feed loaded"),
        ],
    );
    let all = task(&gateway, "agent").logs(logs(DEV_APP)).await;
    assert!(
        all.message
            .contains("2 of the lines shown hold <private>: the phone hides them. To show those values: mark them public."),
        "{}",
        all.message
    );
    // Only the newest line shown: none of those shown holds it, so nothing is said.
    let mut newest = logs(DEV_APP);
    newest.limit = Some(1);
    let one = task(&gateway, "agent").logs(newest).await;
    assert_eq!(one.lines.len(), 1);
    assert!(!one.message.contains("private"), "{}", one.message);
    let mut two = logs(DEV_APP);
    two.limit = Some(2);
    let result = task(&gateway, "agent").logs(two).await;
    assert!(
        result
            .message
            .contains("1 of the lines shown holds <private>"),
        "{}",
        result.message
    );
}

#[tokio::test]
async fn private_values_are_counted_over_the_log_lines_folded_rows_stand_for() {
    use phonelogs_driver::{LogLine, LogNotice};
    let phone = phone();
    let app = AppId::new(DEV_APP);
    phone.set_log_notices(
        &device(),
        &app,
        vec![LogNotice::Redacted {
            marker: "<private>".into(),
            why: "the phone hides them".into(),
            fix: "mark them public".into(),
        }],
    );
    let line = |second: i64, pid: u32, text: &str| LogLine {
        time: START + Duration::seconds(second),
        level: LogLevel::Info,
        tag: "Net".into(),
        text: text.into(),
        pid: Some(pid),
        tid: Some(pid),
        uid: Some(10123),
    };
    phone.add_logs(
        &device(),
        &app,
        [
            line(10, 4242, "retry <private>"),
            line(11, 4242, "retry <private>"),
            line(12, 4242, "retry <private>"),
            line(13, 4242, "feed loaded"),
            // A new process of the app: a marker row before its line, standing for no line.
            line(14, 4343, "user <private> signed in"),
        ],
    );
    let gateway = gateway(&phone);
    let mut request = logs(DEV_APP);
    request.filter = Some("<private>".into());
    let folded = task(&gateway, "agent").logs(request.clone()).await;
    assert_eq!(folded.status, Status::Ok, "{}", folded.message);
    // Three repeats in one row, a marker, the other process's line: 4 log lines shown.
    assert_eq!(folded.shown, 4, "{:?}", folded.lines);
    assert_eq!(folded.folded, 2, "{:?}", folded.lines);
    assert!(
        folded.lines.iter().any(|row| row.marker.is_some()),
        "{:?}",
        folded.lines
    );
    assert!(
        folded.message.starts_with(
            "4 log lines of Crash Test, oldest first. 4 of the lines shown hold <private>"
        ),
        "{}",
        folded.message
    );
    // Each repeat on its own row: the same count.
    request.fold = Some(false);
    let each = task(&gateway, "agent").logs(request).await;
    assert_eq!(each.shown, 4, "{:?}", each.lines);
    assert!(
        each.message
            .contains(" 4 of the lines shown hold <private>"),
        "{}",
        each.message
    );
}

/// Issue 28, item 13: what the agent writes into a call (a filter, a since, a level, a phone's
/// serial, a package name) reaches the history bounded, cut at a character boundary and marked,
/// so no agent can store log text it read in the state; nothing else it sends (`wait_for`) is
/// stored at all.
#[tokio::test]
async fn the_history_keeps_the_agents_text_bounded_and_nothing_else_it_sends() {
    use phonelogs_gateway::DebugRequest;
    let gateway = gateway(&phone());
    let session = task(&gateway, "agent");
    let canary = "LOG-TEXT-THE-AGENT-READ-\u{e9}\u{1f600}-";
    let long = |first: &str| format!("{first}{}", canary.repeat(300));
    // A filter within the longest pattern a call takes (1,000 bytes), longer than the history
    // keeps; a longer one is refused, and bounded in the history all the same.
    let mut read = logs(DEV_APP);
    read.filter = Some(format!("f{}", canary.repeat(20)));
    assert_eq!(session.logs(read).await.status, Status::Ok);
    let mut refused = logs(DEV_APP);
    refused.filter = Some(long("f"));
    assert_eq!(session.logs(refused).await.status, Status::Error);
    for change in [
        (|r: &mut LogsRequest, t: String| r.since = Some(t)) as fn(&mut LogsRequest, String),
        |r, t| r.level = Some(t),
        |r, t| r.since = Some(format!("cursor:{t}")),
    ] {
        let mut request = logs(DEV_APP);
        change(&mut request, long("x"));
        assert_eq!(session.logs(request).await.status, Status::Error);
    }
    let mut wait = logs(DEV_APP);
    wait.wait_for = Some("WAITED-FOR-TEXT".into());
    wait.timeout = Some(1);
    session.logs(wait).await;
    session
        .debug(DebugRequest::ClearDebugApp { serial: long("s") })
        .await;
    session
        .debug(DebugRequest::GetProcessExitHistory {
            serial: DEVICE.into(),
            package: long("p"),
            approval_id: None,
        })
        .await;
    let history = gateway.store().history(HistoryFilter::default()).unwrap();
    assert!(history.len() >= 6, "{history:#?}");
    let mut cut = 0;
    for step in &history {
        let args = &step.args;
        for text in [&args.since, &args.filter, &args.level, &step.device]
            .into_iter()
            .flatten()
            .chain([&args.app, &args.kind])
        {
            assert!(
                text.len() <= 256,
                "{} bytes stored: {:.80}",
                text.len(),
                text
            );
            cut += usize::from(text.ends_with('\u{2026}'));
        }
        assert!(
            step.step.len() <= 512,
            "{} bytes: {:.80}",
            step.step.len(),
            step.step
        );
        assert!(!step.step.contains(&canary.repeat(12)), "{:.80}", step.step);
        assert!(!format!("{step:?}").contains("WAITED-FOR-TEXT"), "{step:?}");
    }
    assert!(cut >= 2, "the cuts are marked: {history:#?}");
}

/// Issue 28 item 13, found by the review of h28a: `level` and `since` are kept as the call
/// read them (a level's name, a time in RFC 3339, `last`, `cursor`), and a value that is not
/// one as a fixed mark: only the filter is the agent's own text in the history, so an agent
/// cannot copy log text into the state through them.
#[tokio::test]
async fn the_history_keeps_the_parsed_level_and_since_never_the_agents_words() {
    let gateway = gateway(&phone());
    let session = task(&gateway, "agent");
    let canary = "LOG-TEXT-THE-AGENT-READ";
    // (level given, since given, level kept, since kept; "Z": a time in UTC)
    type Call<'a> = (
        Option<&'a str>,
        Option<&'a str>,
        Option<&'a str>,
        Option<&'a str>,
    );
    let calls: [Call<'_>; 7] = [
        (
            Some(" WARNING "),
            Some("2026-01-02T03:04:05+01:00"),
            Some("warn"),
            Some("2026-01-02T02:04:05Z"),
        ),
        (Some("info"), Some("last"), Some("info"), Some("last")),
        (
            None,
            Some("cursor:LOG-TEXT-THE-AGENT-READ"),
            None,
            Some("cursor"),
        ),
        (
            Some("LOG-TEXT-THE-AGENT-READ"),
            None,
            Some("(invalid)"),
            None,
        ),
        (
            None,
            Some("LOG-TEXT-THE-AGENT-READ"),
            None,
            Some("(invalid)"),
        ),
        (Some(""), Some(" "), None, None),
        (None, Some("10m"), None, Some("Z")),
    ];
    for (level, since, _, _) in calls {
        let mut request = logs(DEV_APP);
        request.level = level.map(str::to_owned);
        request.since = since.map(str::to_owned);
        session.logs(request).await;
    }
    let mut history = gateway.store().history(HistoryFilter::default()).unwrap();
    history.sort_by_key(|step| step.id);
    let steps: Vec<_> = history.iter().filter(|s| s.args.kind == "logs").collect();
    assert_eq!(steps.len(), calls.len(), "{history:#?}");
    for (step, (_, _, level, since)) in steps.iter().zip(calls) {
        assert!(!format!("{step:?}").contains(canary), "{step:?}");
        assert_eq!(step.args.level.as_deref(), level, "{step:?}");
        match since {
            Some("Z") => {
                let kept = step.args.since.as_deref().unwrap();
                assert!(
                    time::OffsetDateTime::parse(
                        kept,
                        &time::format_description::well_known::Rfc3339
                    )
                    .is_ok()
                        && kept.ends_with('Z'),
                    "{kept}"
                );
            }
            since => assert_eq!(step.args.since.as_deref(), since, "{step:?}"),
        }
    }
}
