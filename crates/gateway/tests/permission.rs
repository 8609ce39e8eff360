//! The permission path as issue 15 left it: the policy decided from the app's id before any
//! device call, each action its own question and its own answers, tombstones a write, apps that
//! share a uid refused before asking, multi-line messages split, and the history saying how each
//! question was answered.

// Tests may unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use phonelogs_driver::{AppId, LogLevel, NativeBacktrace, ThreadSummary, TombstoneCapture};
use phonelogs_fake::{FakeApp, FakePhone};
use phonelogs_gateway::{
    Action, Answer, AnsweredVia, DebugRequest, DebugStatus, ErrorCode, Gateway, HistoryFilter,
    Session, Status, Store, TaskSpec,
};
use phonelogs_policy::{Agent, Mode};

const RELEASE_PID: i64 = 5151;

/// The standard fake phone, plus a process of the release build that debuggerd can dump.
fn debug_phone() -> FakePhone {
    let phone = phone();
    let device = device();
    phone.set_debuggerd_allowed(&device, true);
    phone.add_process(&device, RELEASE_PID, 10200, RELEASE_APP);
    phone.set_backtrace(
        &device,
        NativeBacktrace {
            serial: DEVICE.into(),
            pid: RELEASE_PID,
            process_name: Some(RELEASE_APP.into()),
            abi: Some("x86_64".into()),
            thread_count: 1,
            threads: vec![ThreadSummary {
                name: "main".into(),
                sys_tid: RELEASE_PID,
                frame_count: 3,
            }],
            text: format!(
                "----- pid {RELEASE_PID} at 2026-11-30 10:00:00 -----\nCmd line: {RELEASE_APP}\n"
            ),
            dumped_pid: Some(RELEASE_PID),
            dumped_uid: Some(10200),
        },
    );
    phone.set_tombstone(
        &device,
        TombstoneCapture {
            serial: DEVICE.into(),
            pid: RELEASE_PID,
            process_name: Some(RELEASE_APP.into()),
            abi: Some("x86_64".into()),
            signal: None,
            frame_count: Some(3),
            device_tombstone_ref: None,
            bytes: format!("pid: {RELEASE_PID}, tid: {RELEASE_PID}, name: main  >>> {RELEASE_APP} <<<\nuid: 10200\n").into_bytes(),
            dumped_pid: Some(RELEASE_PID),
            dumped_uid: Some(10200),
        },
    );
    phone
}

fn session(gateway: &Gateway, mode: Mode) -> Session {
    gateway.start_task(TaskSpec::new(Agent::new("agent", mode)))
}

fn backtrace(pid: i64, approval_id: Option<&str>) -> DebugRequest {
    DebugRequest::CaptureNativeBacktrace {
        serial: DEVICE.into(),
        pid,
        approval_id: approval_id.map(str::to_owned),
    }
}

fn tombstone(pid: i64, local_path: &str, approval_id: Option<&str>) -> DebugRequest {
    DebugRequest::CaptureNativeTombstone {
        serial: DEVICE.into(),
        pid,
        local_path: local_path.into(),
        approval_id: approval_id.map(str::to_owned),
    }
}

fn debuggerd_ran(phone: &FakePhone) -> bool {
    phone.calls().iter().any(|c| c.starts_with("debuggerd"))
}

// --- Item 6: each action asks its own question; a logs answer covers logs and crashes only. ---

#[tokio::test]
async fn a_logs_answer_never_covers_a_backtrace_or_a_tombstone() {
    let phone = debug_phone();
    let root = tempfile::tempdir().unwrap();
    let gateway = builder(&phone)
        .local_root(Some(root.path().to_owned()))
        .build()
        .unwrap();
    let session = session(&gateway, Mode::Full);
    let asked = session.logs(logs(RELEASE_APP)).await;
    let logs_id = asked.approval_id.clone().unwrap();
    gateway.store().answer(&logs_id, Answer::Task).unwrap();
    assert_eq!(session.logs(logs(RELEASE_APP)).await.status, Status::Ok);
    assert_eq!(session.logs(crashes(RELEASE_APP)).await.status, Status::Ok);

    // The backtrace asks its own question, naming the app and the pid.
    let response = session.debug(backtrace(RELEASE_PID, None)).await;
    let backtrace_id = pending_id(&response);
    assert_ne!(backtrace_id, logs_id);
    let approval = gateway.store().approval(&backtrace_id).unwrap().unwrap();
    assert_eq!(approval.action, Some(Action::Backtrace));
    assert_eq!(
        approval.question,
        "Capture a native backtrace of Example (pid 5151)? It shows the native call stack of every thread of the app."
    );
    // The tombstone asks its own, naming where its memory map goes.
    let response = session
        .debug(tombstone(RELEASE_PID, "run1/x.txt", None))
        .await;
    let tombstone_id = pending_id(&response);
    let approval = gateway.store().approval(&tombstone_id).unwrap().unwrap();
    let path = root.path().join("tombstones").join("run1/x.txt");
    assert_eq!(
        approval.question,
        format!(
            "Capture a native tombstone of Example (pid 5151)? It pauses the app briefly and saves its memory map to {}.",
            path.display()
        )
    );
    assert!(
        response.message.contains(&approval.question),
        "{}",
        response.message
    );
    // The logs approval cannot be passed off as the tombstone's.
    let response = session
        .debug(tombstone(RELEASE_PID, "run1/x.txt", Some(&logs_id)))
        .await;
    assert_eq!(
        response.error.as_ref().map(|e| e.code),
        Some(ErrorCode::PolicyDenied),
        "{response:?}"
    );
    assert!(!debuggerd_ran(&phone), "{:?}", phone.calls());

    // An "Allow once" for one tombstone is for that pid and path only.
    gateway.store().answer(&tombstone_id, Answer::Once).unwrap();
    // Another path with that id asks its own question, and uses nothing of the answer.
    let other_path = session
        .debug(tombstone(RELEASE_PID, "run2/y.txt", Some(&tombstone_id)))
        .await;
    assert_eq!(
        other_path.status,
        DebugStatus::ApprovalPending,
        "{other_path:?}"
    );
    assert_ne!(pending_id(&other_path), tombstone_id);
    assert!(!debuggerd_ran(&phone));
    let done = session
        .debug(tombstone(RELEASE_PID, "run1/x.txt", Some(&tombstone_id)))
        .await;
    assert_eq!(done.status, DebugStatus::Success, "{done:?}");
    assert!(path.exists());
    // Once used, it is gone; the backtrace still waits for its own answer.
    let again = session
        .debug(tombstone(RELEASE_PID, "run1/x.txt", Some(&tombstone_id)))
        .await;
    assert_eq!(again.status, DebugStatus::Error, "{again:?}");
    assert_eq!(
        session
            .debug(backtrace(RELEASE_PID, Some(&backtrace_id)))
            .await
            .status,
        DebugStatus::ApprovalPending
    );
}

#[tokio::test]
async fn always_allow_for_logs_leaves_the_debugging_aids_asking_in_later_tasks() {
    let phone = debug_phone();
    let gateway = gateway(&phone);
    let first = session(&gateway, Mode::Full);
    let id = first.logs(logs(RELEASE_APP)).await.approval_id.unwrap();
    gateway.store().answer(&id, Answer::Always).unwrap();
    first.end().await;
    let rules = gateway.store().rules().unwrap();
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0].action, Action::Logs);

    let later = session(&gateway, Mode::Full);
    assert_eq!(later.logs(logs(RELEASE_APP)).await.status, Status::Ok);
    let response = later.debug(backtrace(RELEASE_PID, None)).await;
    pending_id(&response);
    assert!(!debuggerd_ran(&phone));
    // An "Always allow" for backtraces covers backtraces of that app in later tasks.
    let id = pending_id(&response);
    gateway.store().answer(&id, Answer::Always).unwrap();
    later.end().await;
    let third = session(&gateway, Mode::Full);
    assert_eq!(
        third.debug(backtrace(RELEASE_PID, None)).await.status,
        DebugStatus::Success
    );
    let root = tempfile::tempdir().unwrap();
    let with_root = builder(&phone)
        .local_root(Some(root.path().to_owned()))
        .build()
        .unwrap();
    pending_id(
        &session(&with_root, Mode::Full)
            .debug(tombstone(RELEASE_PID, "t.txt", None))
            .await,
    );
}

// --- Item 7: a tombstone is a write. ---

#[tokio::test]
async fn a_tombstone_is_refused_to_read_only_and_watch_only_agents_before_any_device_call() {
    let phone = debug_phone();
    let root = tempfile::tempdir().unwrap();
    let gateway = builder(&phone)
        .local_root(Some(root.path().to_owned()))
        .build()
        .unwrap();
    for mode in [Mode::ReadOnly, Mode::WatchOnly] {
        let response = session(&gateway, mode)
            .debug(tombstone(RELEASE_PID, "x.txt", None))
            .await;
        assert_eq!(
            response.error.as_ref().map(|e| e.code),
            Some(ErrorCode::PolicyDenied),
            "{mode:?}: {response:?}"
        );
    }
    // A read-only agent may still take a backtrace (a read); a watch-only one may not.
    let read_only = session(&gateway, Mode::ReadOnly)
        .debug(backtrace(RELEASE_PID, None))
        .await;
    assert_eq!(
        read_only.status,
        DebugStatus::ApprovalPending,
        "{read_only:?}"
    );
    let calls_before = phone.calls().len();
    let watch_only = session(&gateway, Mode::WatchOnly)
        .debug(backtrace(RELEASE_PID, None))
        .await;
    assert_eq!(
        watch_only.error.as_ref().map(|e| e.code),
        Some(ErrorCode::PolicyDenied)
    );
    assert_eq!(phone.calls().len(), calls_before, "{:?}", phone.calls());
    assert!(!debuggerd_ran(&phone));
    assert!(!root.path().join("tombstones").join("x.txt").exists());
}

// --- Item 10: policy before probing. ---

#[tokio::test]
async fn a_refused_agent_gets_the_same_answer_for_an_installed_and_a_missing_app() {
    let phone = debug_phone();
    let gateway = gateway(&phone);
    let watch_only = session(&gateway, Mode::WatchOnly);
    let scoped = gateway.start_task(TaskSpec::new(
        Agent::new("scoped", Mode::Full).with_scope([AppId::new(DEV_APP)]),
    ));
    for session in [&watch_only, &scoped] {
        for kind in [logs, crashes] {
            let before = phone.calls().len();
            let installed = session.logs(kind(RELEASE_APP)).await;
            let missing = session.logs(kind("com.example.notinstalled")).await;
            assert_eq!(installed.status, Status::ScopeDenied, "{installed:?}");
            assert_eq!(missing.status, installed.status);
            assert_eq!(
                missing.message.replace("com.example.notinstalled", "APP"),
                installed.message.replace(RELEASE_APP, "APP")
            );
            assert_eq!(
                phone.calls().len(),
                before,
                "the phone was asked: {:?}",
                phone.calls()
            );
        }
        let before = phone.calls().len();
        for package in [RELEASE_APP, "com.example.notinstalled"] {
            let response = session
                .debug(DebugRequest::GetProcessExitHistory {
                    serial: DEVICE.into(),
                    package: package.into(),
                    approval_id: None,
                })
                .await;
            assert_eq!(
                response.error.as_ref().map(|e| e.code),
                Some(ErrorCode::PolicyDenied),
                "{response:?}"
            );
        }
        assert_eq!(phone.calls().len(), before, "{:?}", phone.calls());
    }
    // A blocked app too, installed (the bank) or not (Revolut): the answer needs nothing from
    // the phone.
    let full = session(&gateway, Mode::Full);
    let before = phone.calls().len();
    assert_eq!(full.logs(logs(BANK)).await.status, Status::BlockedByPolicy);
    assert_eq!(
        full.logs(logs("com.revolut.revolut")).await.status,
        Status::BlockedByPolicy
    );
    assert_eq!(phone.calls().len(), before);
}

// --- Item 5: an app that shares its uid is unsupported before anyone is asked. ---

#[tokio::test]
async fn an_app_sharing_its_uid_is_unsupported_and_nothing_is_asked() {
    let phone = debug_phone();
    phone.add_app(
        &device(),
        FakeApp::new(AppId::new("com.example.sharedrelease"))
            .label("Shared release")
            .uid(10710)
            .shared_uid(true),
    );
    let gateway = gateway(&phone);
    let session = session(&gateway, Mode::Full);
    for request in [
        logs("com.example.sharedrelease"),
        crashes("com.example.sharedrelease"),
    ] {
        let result = session.logs(request).await;
        assert_eq!(result.status, Status::Unsupported, "{result:?}");
        assert!(result.approval_id.is_none());
        assert!(
            result.message.contains("shares its uid"),
            "{}",
            result.message
        );
    }
    assert!(gateway.store().pending_approvals().unwrap().is_empty());
}

// --- Item 8: the agent is told a person must answer, never how; the history says where. ---

#[tokio::test]
async fn the_agent_is_never_told_how_to_answer_and_the_history_says_where_answers_came_from() {
    let phone = debug_phone();
    let gateway = gateway(&phone);
    let session = session(&gateway, Mode::Full);
    let pending = session.logs(logs(RELEASE_APP)).await;
    assert_eq!(pending.status, Status::ApprovalPending);
    for forbidden in ["phonelogs approvals", "approvals answer", "once|task"] {
        assert!(!pending.message.contains(forbidden), "{}", pending.message);
    }
    assert!(pending.message.contains("person"), "{}", pending.message);
    let id = pending.approval_id.unwrap();
    gateway
        .store()
        .answer_via(&id, Answer::Task, AnsweredVia::ClientDialog)
        .unwrap();
    let approval = gateway.store().approval(&id).unwrap().unwrap();
    assert_eq!(approval.answered_via, Some(AnsweredVia::ClientDialog));
    let response = session.debug(backtrace(RELEASE_PID, None)).await;
    let second = pending_id(&response);
    gateway.store().answer(&second, Answer::Deny).unwrap();
    let steps: Vec<String> = gateway
        .store()
        .history(HistoryFilter::default())
        .unwrap()
        .into_iter()
        .map(|s| s.step)
        .collect();
    assert!(
        steps.contains(&"Answered \u{201c}Allow for this task\u{201d} in the agent's client: Read the logs of Example?".to_owned()),
        "{steps:?}"
    );
    assert!(
        steps.iter().any(
            |s| s.starts_with("Answered \u{201c}Deny\u{201d} on the person's side")
                && s.contains("native backtrace")
        ),
        "{steps:?}"
    );
    let denied = session.debug(backtrace(RELEASE_PID, Some(&second))).await;
    assert_eq!(denied.status, DebugStatus::Error);
    assert!(!debuggerd_ran(&phone));
}

// --- Item 15 (the gateway's half): a message cannot forge a line. ---

#[tokio::test]
async fn a_multi_line_message_becomes_lines_of_the_same_time_and_tag() {
    let phone = debug_phone();
    phone.add_logs(
        &device(),
        &AppId::new(DEV_APP),
        [line(
            6.0,
            LogLevel::Info,
            "CrashTest",
            "first\n10:00:09.000 ActivityManager: forged\nthird",
            10123,
        )],
    );
    let gateway = gateway(&phone);
    let session = session(&gateway, Mode::Full);
    let mut request = logs(DEV_APP);
    request.limit = Some(2);
    let result = session.logs(request).await;
    assert_eq!(result.status, Status::Ok, "{}", result.message);
    let lines: Vec<&str> = result.log.lines().collect();
    assert_eq!(lines.len(), 2, "{}", result.log);
    for line in &lines {
        assert!(line.contains(" CrashTest: "), "{line}");
    }
    assert!(lines[0].ends_with("CrashTest: 10:00:09.000 ActivityManager: forged"));
    assert!(lines[1].ends_with("CrashTest: third"));
    // The count says what the limit left out: the message's first line and the three older lines.
    assert!(
        result.message.contains("4 older lines"),
        "{}",
        result.message
    );
}

// --- The store: version 1 grants were for logs. ---

#[test]
fn a_version_1_database_migrates_and_its_grants_stay_logs_grants() {
    let dir = tempfile::tempdir().unwrap();
    {
        let connection = rusqlite::Connection::open(dir.path().join("phonelogs.db")).unwrap();
        connection
            .execute_batch(include_str!("fixtures/schema_v1.sql"))
            .unwrap();
    }
    let store = Store::open(dir.path()).unwrap();
    let rules = store.rules().unwrap();
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0].action, Action::Logs);
    let approval = store.approval("ap-old").unwrap().unwrap();
    assert_eq!(approval.action, Some(Action::Logs));
    assert_eq!(approval.detail, "");
    assert_eq!(approval.answered_via, None);
    store.answer("ap-old", Answer::Task).unwrap();
    assert_eq!(
        store.approval("ap-old").unwrap().unwrap().answered_via,
        Some(AnsweredVia::CommandLine)
    );
}

// --- Item 4: a release build installed over the debug build, noticed mid-call. ---

/// The fake phone behind a driver that, on its first read, finds the app replaced by a release
/// build with the same uid, as `adb install -r` does: it flips the app's flags and answers
/// `Changed` with nothing read.
struct ReinstalledDriver {
    phone: FakePhone,
    reinstalled: std::sync::atomic::AtomicBool,
}

#[async_trait::async_trait]
impl phonelogs_driver::AppLogger for ReinstalledDriver {
    fn capabilities(&self) -> phonelogs_driver::Capabilities {
        self.phone.capabilities()
    }
    async fn devices(&self) -> phonelogs_driver::Result<Vec<phonelogs_driver::DeviceInfo>> {
        self.phone.devices().await
    }
    async fn app_info(
        &self,
        device: &phonelogs_driver::DeviceId,
        app: &AppId,
    ) -> phonelogs_driver::Result<phonelogs_driver::AppInfo> {
        self.phone.app_info(device, app).await
    }
    async fn app_logs(
        &self,
        device: &phonelogs_driver::DeviceId,
        app: &AppId,
        query: &phonelogs_driver::LogQuery,
    ) -> phonelogs_driver::Result<phonelogs_driver::LogResult> {
        if !self
            .reinstalled
            .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            self.phone.set_dev_build(device, app, false);
            return Err(phonelogs_driver::Error::Changed(
                "a release build was installed over the development build".into(),
            ));
        }
        self.phone.app_logs(device, app, query).await
    }
    async fn app_crashes(
        &self,
        device: &phonelogs_driver::DeviceId,
        app: &AppId,
        since: time::OffsetDateTime,
        limit: usize,
    ) -> phonelogs_driver::Result<Vec<phonelogs_driver::CrashReport>> {
        self.phone.app_crashes(device, app, since, limit).await
    }
    async fn dev_build(
        &self,
        device: &phonelogs_driver::DeviceId,
        app: &AppId,
    ) -> phonelogs_driver::Result<bool> {
        self.phone.dev_build(device, app).await
    }
}

#[tokio::test]
async fn a_release_build_installed_over_the_debug_build_asks_in_the_same_call() {
    let phone = debug_phone();
    let driver = ReinstalledDriver {
        phone: phone.clone(),
        reinstalled: std::sync::atomic::AtomicBool::new(false),
    };
    let gateway = Gateway::builder()
        .driver(std::sync::Arc::new(driver))
        .local_offset(time::UtcOffset::UTC)
        .clock(|| START)
        .build()
        .unwrap();
    let session = session(&gateway, Mode::Full);
    let result = session.logs(logs(DEV_APP)).await;
    assert_eq!(result.status, Status::ApprovalPending, "{result:?}");
    assert!(result.log.is_empty());
    let id = result.approval_id.unwrap();
    gateway.store().answer(&id, Answer::Once).unwrap();
    let mut request = logs(DEV_APP);
    request.approval_id = Some(id);
    let read = session.logs(request).await;
    assert_eq!(read.status, Status::Ok, "{}", read.message);
    assert!(read.log.contains("started"), "{}", read.log);
}

// --- Review findings: a clone's process, and what a task leaves behind. ---

#[tokio::test]
async fn a_process_of_the_apps_copy_in_another_user_is_never_debugged() {
    let phone = debug_phone();
    let device = device();
    // The development build's clone in user 10: the same package, uid 10 × 100000 + 10123.
    const CLONE_PID: i64 = 6161;
    phone.add_process(&device, CLONE_PID, 1_010_123, DEV_APP);
    phone.set_jdwp_pids(&device, vec![CLONE_PID]);
    let root = tempfile::tempdir().unwrap();
    let gateway = builder(&phone)
        .local_root(Some(root.path().to_owned()))
        .build()
        .unwrap();
    let session = session(&gateway, Mode::Full);
    for request in [
        backtrace(CLONE_PID, None),
        tombstone(CLONE_PID, "clone.txt", None),
    ] {
        let response = session.debug(request).await;
        assert_eq!(
            response.error.as_ref().map(|e| e.code),
            Some(ErrorCode::PolicyDenied),
            "{response:?}"
        );
        assert!(!response.message.contains(DEV_APP), "{}", response.message);
    }
    assert!(!debuggerd_ran(&phone), "{:?}", phone.calls());
    assert!(!root.path().join("tombstones").join("clone.txt").exists());
    // Nor is it named in a JDWP listing as the app's.
    let listing = session
        .debug(DebugRequest::ListJdwpProcesses {
            serial: DEVICE.into(),
        })
        .await;
    let data = serde_json::to_value(listing.data.unwrap()).unwrap();
    assert_eq!(data["pids"], serde_json::json!([CLONE_PID]));
    assert_eq!(data["packages"], serde_json::json!([]), "{data}");
    let steps = gateway.store().history(HistoryFilter::default()).unwrap();
    assert!(
        steps.iter().any(|s| s.step.contains("another user's copy")),
        "{steps:?}"
    );
}

#[tokio::test]
async fn an_ended_task_can_use_nothing_it_was_allowed() {
    let phone = debug_phone();
    let gateway = gateway(&phone);
    let session = session(&gateway, Mode::Full);
    let task_id = pending_id(&session.debug(backtrace(RELEASE_PID, None)).await);
    gateway.store().answer(&task_id, Answer::Task).unwrap();
    let once_id = session.logs(logs(RELEASE_APP)).await.approval_id.unwrap();
    gateway.store().answer(&once_id, Answer::Once).unwrap();
    let clone = session.clone();
    session.end().await;
    let response = clone.debug(backtrace(RELEASE_PID, None)).await;
    assert_eq!(response.status, DebugStatus::Error, "{response:?}");
    assert!(!debuggerd_ran(&phone));
    let read = clone.logs(logs(RELEASE_APP)).await;
    assert_eq!(read.status, Status::Error);
    // The unused "Allow once" expired with the task.
    let once = gateway.store().approval(&once_id).unwrap().unwrap();
    assert_eq!(once.state, phonelogs_gateway::ApprovalState::Expired);
}
