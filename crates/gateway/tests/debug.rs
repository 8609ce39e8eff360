//! The six debugging aids through the gateway: policy, envelope, error codes, tombstones.

// Tests may unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use phonelogs_driver::{AppId, ExitRecord, NativeBacktrace, ThreadSummary, TombstoneCapture};
use phonelogs_fake::{FakePhone, Fault, Operation};
use phonelogs_gateway::{
    Answer, DebugRequest, DebugResponse, DebugStatus, ErrorCode, Gateway, HistoryFilter, TaskSpec,
};
use phonelogs_policy::{Agent, Mode};

const SYSUI_PID: i64 = 1224;
const APP_PID: i64 = 4242;
const RELEASE_PID: i64 = 5151;

fn debug_phone() -> FakePhone {
    let phone = phone();
    let device = device();
    phone.add_app(
        &device,
        phonelogs_fake::FakeApp::new(AppId::new("com.android.systemui"))
            .label("System UI")
            .uid(10050)
            .system(true),
    );
    phone.set_debuggerd_allowed(&device, true);
    for (pid, uid, name) in [
        (SYSUI_PID, 10050, "com.android.systemui"),
        (APP_PID, 10123, DEV_APP),
        (RELEASE_PID, 10200, "com.example.app:remote"),
    ] {
        phone.set_backtrace(&device, NativeBacktrace {
            serial: DEVICE.into(),
            pid,
            process_name: Some(name.into()),
            abi: Some("x86_64".into()),
            thread_count: 1,
            threads: vec![ThreadSummary { name: "main".into(), sys_tid: pid, frame_count: 17 }],
            text: format!("----- pid {pid} at 2026-11-30 10:00:00 -----\nCmd line: {name}\nBACKTRACE-CONTENT\n"),
            dumped_pid: Some(pid),
            dumped_uid: Some(uid),
        });
        phone.set_tombstone(&device, TombstoneCapture {
            serial: DEVICE.into(),
            pid,
            process_name: Some(name.into()),
            abi: Some("x86_64".into()),
            signal: Some("35 (<debuggerd signal>), code -1 (SI_QUEUE from pid 7338, uid 0), fault addr --------".into()),
            frame_count: Some(24),
            device_tombstone_ref: Some("tombstone_27.pb".into()),
            bytes: format!("*** *** ***\npid: {pid}, name: {name}\nTOMBSTONE-CONTENT\n").into_bytes(),
            dumped_pid: Some(pid),
            dumped_uid: Some(uid),
        });
    }
    phone.add_exit_record(
        &device,
        &AppId::new(DEV_APP),
        ExitRecord {
            timestamp: Some("2026-09-06 22:39:39.266".into()),
            pid: Some(5486),
            reason: Some("APP CRASH(EXCEPTION)".into()),
            ..ExitRecord::default()
        },
    );
    phone.set_jdwp_pids(&device, vec![APP_PID, 1568, APP_PID, 2411]);
    // The processes the pids belong to, as `/proc` tells them.
    phone.add_process(&device, SYSUI_PID, 10050, "com.android.systemui");
    phone.add_process(&device, APP_PID, 10123, DEV_APP);
    phone.add_process(&device, RELEASE_PID, 10200, "com.example.app:remote");
    phone
}

fn full(gateway: &Gateway) -> phonelogs_gateway::Session {
    gateway.start_task(TaskSpec::new(Agent::new("agent", Mode::Full)))
}

fn code(response: &DebugResponse) -> Option<ErrorCode> {
    response.error.as_ref().map(|e| e.code)
}

fn exit_history(package: &str) -> DebugRequest {
    DebugRequest::GetProcessExitHistory {
        serial: DEVICE.into(),
        package: package.into(),
        approval_id: None,
    }
}

fn backtrace(pid: i64) -> DebugRequest {
    DebugRequest::CaptureNativeBacktrace {
        serial: DEVICE.into(),
        pid,
        approval_id: None,
    }
}

fn tombstone(pid: i64, local_path: &str) -> DebugRequest {
    DebugRequest::CaptureNativeTombstone {
        serial: DEVICE.into(),
        pid,
        local_path: local_path.into(),
        approval_id: None,
    }
}

#[tokio::test]
async fn exit_history_of_a_development_build_succeeds_in_the_envelope() {
    let gateway = gateway(&debug_phone());
    let response = full(&gateway).debug(exit_history(DEV_APP)).await;
    assert_eq!(
        response.status,
        DebugStatus::Success,
        "{}",
        response.message
    );
    assert_eq!(
        response.message,
        "1 exit records for dev.phonelogs.crashtest on emulator-5554 (newest: APP CRASH(EXCEPTION) at 2026-09-06 22:39:39.266)."
    );
    let json = serde_json::to_value(&response).unwrap();
    assert_eq!(json["status"], "success");
    assert_eq!(json["error"], serde_json::Value::Null);
    assert_eq!(json["data"]["count"], 1);
    assert_eq!(json["data"]["records"][0]["pid"], 5486);
    // An unknown package is an empty result, not an error.
    let empty = full(&gateway)
        .debug(exit_history("com.example.notinstalled"))
        .await;
    assert_eq!(empty.status, DebugStatus::Success, "{}", empty.message);
    assert_eq!(empty.data.as_ref().map(data_json).unwrap()["count"], 0);
}

#[tokio::test]
async fn arguments_and_devices_map_to_the_specs_error_codes() {
    let phone = debug_phone();
    let gateway = gateway(&phone);
    let session = full(&gateway);
    assert_eq!(
        code(&session.debug(exit_history("  ")).await),
        Some(ErrorCode::InvalidArgument)
    );
    assert_eq!(
        code(&session.debug(backtrace(0)).await),
        Some(ErrorCode::InvalidArgument)
    );
    assert_eq!(
        code(&session.debug(backtrace(-3)).await),
        Some(ErrorCode::InvalidArgument)
    );
    assert_eq!(
        code(&session.debug(tombstone(0, "x.txt")).await),
        Some(ErrorCode::InvalidArgument)
    );
    let nowhere = DebugRequest::ClearDebugApp {
        serial: "nowhere".into(),
    };
    assert_eq!(
        code(&session.debug(nowhere).await),
        Some(ErrorCode::DeviceNotFound)
    );
    assert_eq!(
        code(&session.debug(backtrace(999)).await),
        Some(ErrorCode::BackendError)
    );
    phone.set_debuggerd_allowed(&device(), false);
    assert_eq!(
        code(&session.debug(backtrace(APP_PID)).await),
        Some(ErrorCode::PermissionDenied)
    );
    phone.fail_always(Operation::Devices, Fault::Unavailable);
    let response = session
        .debug(DebugRequest::ListJdwpProcesses {
            serial: DEVICE.into(),
        })
        .await;
    assert_eq!(code(&response), Some(ErrorCode::AdbUnavailable));
    assert_eq!(
        serde_json::to_value(&response).unwrap()["error"]["code"],
        "ADB_UNAVAILABLE"
    );
}

#[tokio::test]
async fn a_release_build_asks_like_phone_logs_and_the_answer_is_picked_up() {
    let gateway = gateway(&debug_phone());
    let session = full(&gateway);
    let pending = session.debug(backtrace(RELEASE_PID)).await;
    let id = pending_id(&pending);
    assert!(
        !serde_json::to_string(&pending)
            .unwrap()
            .contains("BACKTRACE-CONTENT")
    );
    gateway.store().answer(&id, Answer::Task).unwrap();
    let response = session
        .debug(DebugRequest::CaptureNativeBacktrace {
            serial: DEVICE.into(),
            pid: RELEASE_PID,
            approval_id: Some(id),
        })
        .await;
    assert_eq!(
        response.status,
        DebugStatus::Success,
        "{}",
        response.message
    );
    assert_eq!(
        response.message,
        "capture_native_backtrace completed successfully."
    );
    assert_eq!(
        response.data.as_ref().map(data_json).unwrap()["threads"][0]["frame_count"],
        17
    );
}

#[tokio::test]
async fn system_blocked_and_out_of_scope_apps_are_policy_denied() {
    let gateway = gateway(&debug_phone());
    let session = full(&gateway);
    let response = session.debug(backtrace(SYSUI_PID)).await;
    assert_eq!(code(&response), Some(ErrorCode::PolicyDenied));
    assert!(
        !serde_json::to_string(&response)
            .unwrap()
            .contains("BACKTRACE-CONTENT")
    );
    assert_eq!(
        code(&session.debug(exit_history(BANK)).await),
        Some(ErrorCode::PolicyDenied)
    );
    let scoped = gateway.start_task(TaskSpec::new(
        Agent::new("scoped", Mode::Full).with_scope([AppId::new(RELEASE_APP)]),
    ));
    assert_eq!(
        code(&scoped.debug(exit_history(DEV_APP)).await),
        Some(ErrorCode::PolicyDenied)
    );
    assert_eq!(
        code(&scoped.debug(backtrace(APP_PID)).await),
        Some(ErrorCode::PolicyDenied)
    );
}

#[tokio::test]
async fn only_full_agents_change_the_phone() {
    let phone = debug_phone();
    let gateway = gateway(&phone);
    let set = DebugRequest::SetDebugApp {
        serial: DEVICE.into(),
        package: DEV_APP.into(),
        wait_for_debugger: true,
        persistent: false,
        approval_id: None,
    };
    let reader = gateway.start_task(TaskSpec::new(Agent::new("reader", Mode::ReadOnly)));
    assert_eq!(
        code(&reader.debug(set.clone()).await),
        Some(ErrorCode::PolicyDenied)
    );
    assert_eq!(
        code(
            &reader
                .debug(DebugRequest::ClearDebugApp {
                    serial: DEVICE.into()
                })
                .await
        ),
        Some(ErrorCode::PolicyDenied)
    );
    assert_eq!(phone.debug_app(&device()), None);
    let response = full(&gateway).debug(set).await;
    assert_eq!(
        response.status,
        DebugStatus::Success,
        "{}",
        response.message
    );
    assert_eq!(
        response.message,
        "Set dev.phonelogs.crashtest as the debug app on emulator-5554 (waits for debugger on next launch)."
    );
    assert_eq!(phone.debug_app(&device()), Some(AppId::new(DEV_APP)));
    let cleared = full(&gateway)
        .debug(DebugRequest::ClearDebugApp {
            serial: DEVICE.into(),
        })
        .await;
    assert_eq!(cleared.message, "Cleared the debug app on emulator-5554.");
    assert_eq!(phone.debug_app(&device()), None);
}

#[tokio::test]
async fn jdwp_lists_deduplicated_pids_and_watchers_are_refused() {
    let gateway = gateway(&debug_phone());
    let response = full(&gateway)
        .debug(DebugRequest::ListJdwpProcesses {
            serial: DEVICE.into(),
        })
        .await;
    assert_eq!(
        response.message,
        "3 JDWP-debuggable process(es) on emulator-5554: [4242, 1568, 2411]."
    );
    let watcher = gateway.start_task(TaskSpec::new(Agent::new("w", Mode::WatchOnly)));
    assert_eq!(
        code(
            &watcher
                .debug(DebugRequest::ListJdwpProcesses {
                    serial: DEVICE.into()
                })
                .await
        ),
        Some(ErrorCode::PolicyDenied)
    );
}

#[tokio::test]
async fn a_tombstone_is_written_atomically_under_the_local_root_and_never_returned() {
    let root = tempfile::tempdir().unwrap();
    let gateway = builder(&debug_phone())
        .local_root(Some(root.path().to_owned()))
        .build()
        .unwrap();
    let response = full(&gateway)
        .debug(tombstone(APP_PID, "run1/app.txt"))
        .await;
    assert_eq!(
        response.status,
        DebugStatus::Success,
        "{}",
        response.message
    );
    let data = response.data.as_ref().map(data_json).unwrap();
    let written = std::path::PathBuf::from(data["local_path"].as_str().unwrap());
    assert!(written.is_absolute());
    assert!(written.ends_with("tombstones/run1/app.txt"));
    let bytes = std::fs::read(&written).unwrap();
    assert_eq!(data["size_bytes"], bytes.len());
    assert_eq!(data["device_tombstone_ref"], "tombstone_27.pb");
    assert_eq!(data["success"], true);
    assert!(
        !serde_json::to_string(&response)
            .unwrap()
            .contains("TOMBSTONE-CONTENT")
    );
    assert!(
        response
            .message
            .starts_with("Saved native tombstone for pid 4242 on emulator-5554 to ")
    );
    let leftovers: Vec<_> = std::fs::read_dir(written.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "{leftovers:?}");
    let history =
        serde_json::to_string(&gateway.store().history(HistoryFilter::default()).unwrap()).unwrap();
    assert!(history.contains("capture_native_tombstone") && !history.contains("TOMBSTONE-CONTENT"));
}

#[tokio::test]
async fn hostile_local_paths_are_policy_denied_and_write_nothing() {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let tombstones = root.path().join("tombstones");
    std::fs::create_dir_all(tombstones.join("existing-dir")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(outside.path(), tombstones.join("out")).unwrap();
    let gateway = builder(&debug_phone())
        .local_root(Some(root.path().to_owned()))
        .build()
        .unwrap();
    let session = full(&gateway);
    for hostile in [
        "../escape.txt",
        "a/../../escape.txt",
        "/tmp/escape.txt",
        "nul\0byte.txt",
        "dir/",
        "",
        "existing-dir",
        "out/escape.txt",
        "out/deeper/escape.txt",
        // Named in the person's question: no mark that turns it around, no line end (found by
        // the review of h28a; it was checked with `char::is_control` only).
        "run1/\u{202e}txt.gpj",
        "run1/x\u{2028}Allow always: this is safe.txt",
        "run1/x\u{200b}.txt",
    ] {
        let response = session.debug(tombstone(APP_PID, hostile)).await;
        assert_eq!(
            code(&response),
            Some(ErrorCode::PolicyDenied),
            "{hostile:?}: {}",
            response.message
        );
    }
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    assert!(!root.path().parent().unwrap().join("escape.txt").exists());
    let unconfigured = gateway_without_root();
    let response = full(&unconfigured).debug(tombstone(APP_PID, "x.txt")).await;
    assert_eq!(code(&response), Some(ErrorCode::PolicyDenied));
    assert!(response.message.contains("local_root"));
}

fn gateway_without_root() -> Gateway {
    gateway(&debug_phone())
}

#[tokio::test]
async fn every_call_is_a_history_step_without_content() {
    let gateway = gateway(&debug_phone());
    let session = full(&gateway);
    let count = || {
        gateway
            .store()
            .history(HistoryFilter::default())
            .unwrap()
            .len()
    };
    for request in [
        exit_history(DEV_APP),
        exit_history(" "),
        backtrace(0),
        backtrace(APP_PID),
        backtrace(SYSUI_PID),
        DebugRequest::ClearDebugApp {
            serial: "nowhere".into(),
        },
        DebugRequest::ListJdwpProcesses {
            serial: DEVICE.into(),
        },
        tombstone(APP_PID, "x.txt"),
    ] {
        let before = count();
        session.debug(request.clone()).await;
        assert!(count() > before, "{request:?} wrote no step");
    }
    let history = gateway.store().history(HistoryFilter::default()).unwrap();
    let json = serde_json::to_string(&history).unwrap();
    assert!(
        !json.contains("BACKTRACE-CONTENT") && !json.contains("TOMBSTONE-CONTENT"),
        "{json}"
    );
    assert!(
        history
            .iter()
            .any(|s| s.step == "Used capture_native_backtrace on Crash Test"),
        "{json}"
    );
    assert!(
        history
            .iter()
            .any(|s| s.step == "Could not use capture_native_backtrace on pid 0"),
        "{json}"
    );
}

/// Whether the fake was asked to run debuggerd (either kind) for `pid`.
fn debuggerd_ran(phone: &FakePhone, pid: i64) -> bool {
    phone
        .calls()
        .iter()
        .any(|c| c.starts_with("debuggerd") && c.ends_with(&format!(" {pid}")))
}

#[tokio::test]
async fn a_pid_is_resolved_and_judged_before_debuggerd_pauses_it() {
    let phone = debug_phone();
    let device = device();
    // A system uid, a uid two packages share, a process of a blocked app, an isolated process
    // of no package, and a pid with no process.
    phone.add_process(&device, 600, 1000, "system_server");
    phone.add_process(&device, 700, 10700, "com.example.shared");
    phone.add_app(
        &device,
        phonelogs_fake::FakeApp::new(AppId::new("com.example.shared.too")).uid(10700),
    );
    phone.add_process(&device, 800, 10400, BANK);
    phone.add_process(&device, 900, 99_001, "com.example.app:isolated");
    let root = tempfile::tempdir().unwrap();
    let gateway = builder(&phone)
        .local_root(Some(root.path().to_owned()))
        .build()
        .unwrap();
    let session = full(&gateway);
    for (pid, why, secrets) in [
        (600, "The phone's own apps", &["1000", "system_server"][..]),
        (
            700,
            "The phone's own apps",
            &["10700", "com.example.shared"][..],
        ),
        (800, "Finance apps", &["10400", BANK][..]),
        (900, "The phone's own apps", &["99001", "isolated"][..]),
        (
            SYSUI_PID,
            "The phone's own apps",
            &["com.android.systemui"][..],
        ),
    ] {
        for request in [backtrace(pid), tombstone(pid, "x.txt")] {
            let response = session.debug(request).await;
            assert_eq!(
                code(&response),
                Some(ErrorCode::PolicyDenied),
                "{response:?}"
            );
            // The agent learns only that it may not debug this pid: never the process's name,
            // its app or its uid.
            assert!(
                response
                    .message
                    .contains("not a process of an app this agent may debug"),
                "pid {pid}: {}",
                response.message
            );
            for secret in secrets {
                assert!(
                    !response.message.contains(secret),
                    "pid {pid}'s refusal names {secret}: {}",
                    response.message
                );
            }
        }
        assert!(!debuggerd_ran(&phone, pid), "debuggerd ran for pid {pid}");
        // The person's history says why.
        let steps = gateway.store().history(HistoryFilter::default()).unwrap();
        assert!(
            steps.iter().any(|s| s.step.contains(why)),
            "pid {pid}: no step names {why}: {steps:?}"
        );
    }
    // A dead pid is BACKEND_ERROR, found without running debuggerd.
    let response = session.debug(backtrace(31_337)).await;
    assert_eq!(
        code(&response),
        Some(ErrorCode::BackendError),
        "{response:?}"
    );
    assert!(
        response.message.contains("no such process"),
        "{}",
        response.message
    );
    assert!(!debuggerd_ran(&phone, 31_337));
    // Outside the scope and outside the task: refused before debuggerd.
    let scoped = gateway.start_task(TaskSpec::new(
        Agent::new("scoped", Mode::Full).with_scope([AppId::new(RELEASE_APP)]),
    ));
    let response = scoped.debug(backtrace(APP_PID)).await;
    assert_eq!(code(&response), Some(ErrorCode::PolicyDenied));
    assert!(
        response
            .message
            .contains("not a process of an app this agent may debug")
            && !response.message.contains(DEV_APP),
        "{}",
        response.message
    );
    let mut spec = TaskSpec::new(Agent::new("tasked", Mode::Full));
    spec.apps = Some(vec![AppId::new(RELEASE_APP)]);
    let tasked = gateway.start_task(spec);
    assert_eq!(
        code(&tasked.debug(tombstone(APP_PID, "x.txt")).await),
        Some(ErrorCode::PolicyDenied)
    );
    // A release build asks the person before anything is paused.
    let response = session.debug(backtrace(RELEASE_PID)).await;
    assert_eq!(
        response.status,
        DebugStatus::ApprovalPending,
        "{response:?}"
    );
    assert!(!debuggerd_ran(&phone, APP_PID));
    assert!(!debuggerd_ran(&phone, RELEASE_PID));
    // The development build is dumped.
    assert_eq!(
        session.debug(backtrace(APP_PID)).await.status,
        DebugStatus::Success
    );
    assert!(debuggerd_ran(&phone, APP_PID));
    // Nothing refused left a file.
    let tombstones = root.path().join("tombstones");
    assert!(!tombstones.exists() || std::fs::read_dir(&tombstones).unwrap().next().is_none());
}

#[tokio::test]
async fn a_pid_that_changed_hands_during_the_dump_returns_nothing_of_it() {
    let phone = debug_phone();
    let device = device();
    // The policy is asked about Crash Test, but the dump names another process: the pid was
    // reused in between.
    phone.add_process(&device, 4343, 10123, DEV_APP);
    phone.set_backtrace(
        &device,
        NativeBacktrace {
            serial: DEVICE.into(),
            pid: 4343,
            process_name: Some("com.android.systemui".into()),
            abi: None,
            thread_count: 1,
            threads: vec![ThreadSummary {
                name: "main".into(),
                sys_tid: 4343,
                frame_count: 3,
            }],
            text: "Cmd line: com.android.systemui\nOTHER-PROCESS-CONTENT\n".into(),
            dumped_pid: Some(4343),
            dumped_uid: Some(10050),
        },
    );
    let session = full(&gateway(&phone));
    let response = session.debug(backtrace(4343)).await;
    assert_eq!(
        code(&response),
        Some(ErrorCode::BackendError),
        "{response:?}"
    );
    assert!(
        !serde_json::to_string(&response)
            .unwrap()
            .contains("OTHER-PROCESS-CONTENT")
    );
}

#[tokio::test]
async fn jdwp_names_only_the_packages_the_agent_may_see() {
    let phone = debug_phone();
    let device = device();
    phone.add_process(&device, 1568, 10400, BANK);
    phone.add_process(&device, 2411, 10200, RELEASE_APP);
    phone.set_jdwp_pids(&device, vec![APP_PID, 1568, SYSUI_PID, 2411, 9999]);
    let gateway = gateway(&phone);
    let jdwp = DebugRequest::ListJdwpProcesses {
        serial: DEVICE.into(),
    };
    let response = full(&gateway).debug(jdwp.clone()).await;
    let data = response.data.as_ref().map(data_json).unwrap();
    assert_eq!(
        data["pids"],
        serde_json::json!([APP_PID, 1568, SYSUI_PID, 2411, 9999])
    );
    assert_eq!(data["count"], 5);
    assert_eq!(
        data["packages"],
        serde_json::json!([
            { "pid": APP_PID, "package": DEV_APP },
            { "pid": 2411, "package": RELEASE_APP },
        ])
    );
    let text = serde_json::to_string(&response).unwrap();
    for hidden in [BANK, "com.android.systemui"] {
        assert!(!text.contains(hidden), "{hidden} leaked: {text}");
    }
    // A scoped agent sees only its own app named.
    let scoped = gateway.start_task(TaskSpec::new(
        Agent::new("scoped", Mode::ReadOnly).with_scope([AppId::new(RELEASE_APP)]),
    ));
    let data = scoped
        .debug(jdwp)
        .await
        .data
        .as_ref()
        .map(data_json)
        .unwrap();
    assert_eq!(
        data["packages"],
        serde_json::json!([{ "pid": 2411, "package": RELEASE_APP }])
    );
    assert_eq!(data["count"], 5);
}

#[tokio::test]
async fn set_debug_app_applies_the_app_policy() {
    let phone = debug_phone();
    let gateway = gateway(&phone);
    let session = full(&gateway);
    let set = |package: &str| DebugRequest::SetDebugApp {
        serial: DEVICE.into(),
        package: package.into(),
        wait_for_debugger: true,
        persistent: false,
        approval_id: None,
    };
    for refused in [BANK, SETTINGS, APPIUM, "com.android.systemui"] {
        let response = session.debug(set(refused)).await;
        assert_eq!(
            code(&response),
            Some(ErrorCode::PolicyDenied),
            "{refused}: {response:?}"
        );
    }
    gateway.store().block_app(&AppId::new(OTHER_APP)).unwrap();
    assert_eq!(
        code(&session.debug(set(OTHER_APP)).await),
        Some(ErrorCode::PolicyDenied)
    );
    let scoped = gateway.start_task(TaskSpec::new(
        Agent::new("scoped", Mode::Full).with_scope([AppId::new(DEV_APP)]),
    ));
    assert_eq!(
        code(&scoped.debug(set(RELEASE_APP)).await),
        Some(ErrorCode::PolicyDenied)
    );
    assert_eq!(phone.debug_app(&device()), None, "nothing was set");
    // A release build asks; a development build is set at once.
    assert_eq!(
        session.debug(set(RELEASE_APP)).await.status,
        DebugStatus::ApprovalPending
    );
    assert_eq!(
        session.debug(set(DEV_APP)).await.status,
        DebugStatus::Success
    );
    assert_eq!(phone.debug_app(&device()), Some(AppId::new(DEV_APP)));
}

/// A dump's header as the parsers read it, for the reused-pid tests: the pid its header line
/// names, the uid the process ran as, and the process name.
fn dump_of(
    pid: i64,
    dumped_pid: Option<i64>,
    dumped_uid: Option<u32>,
    name: Option<&str>,
) -> (NativeBacktrace, TombstoneCapture) {
    let backtrace = NativeBacktrace {
        serial: DEVICE.into(),
        pid,
        process_name: name.map(str::to_owned),
        abi: None,
        thread_count: 1,
        threads: vec![ThreadSummary {
            name: "main".into(),
            sys_tid: pid,
            frame_count: 3,
        }],
        text: format!("----- pid {dumped_pid:?} -----\nREUSED-PID-CONTENT\n"),
        dumped_pid,
        dumped_uid,
    };
    let tombstone = TombstoneCapture {
        serial: DEVICE.into(),
        pid,
        process_name: name.map(str::to_owned),
        abi: None,
        signal: Some("35".into()),
        frame_count: Some(3),
        device_tombstone_ref: None,
        bytes: b"REUSED-PID-CONTENT\n".to_vec(),
        dumped_pid,
        dumped_uid,
    };
    (backtrace, tombstone)
}

/// Calls both dumps of `pid` and checks that neither returned nor wrote anything of it.
async fn assert_dropped(phone: &FakePhone, pid: i64, why: &str) {
    let root = tempfile::tempdir().unwrap();
    let gateway = builder(phone)
        .local_root(Some(root.path().to_owned()))
        .build()
        .unwrap();
    let session = full(&gateway);
    for request in [backtrace(pid), tombstone(pid, "reused.txt")] {
        let response = session.debug(request.clone()).await;
        assert_eq!(
            code(&response),
            Some(ErrorCode::BackendError),
            "{why}: {request:?}: {response:?}"
        );
        assert!(
            !serde_json::to_string(&response)
                .unwrap()
                .contains("REUSED-PID-CONTENT"),
            "{why}"
        );
    }
    let tombstones = root.path().join("tombstones");
    assert!(
        !tombstones.exists() || std::fs::read_dir(&tombstones).unwrap().next().is_none(),
        "{why}: a file was written"
    );
}

#[tokio::test]
async fn a_dump_without_a_name_is_not_taken_for_the_app() {
    let phone = debug_phone();
    let device = device();
    phone.add_process(&device, 4344, 10123, DEV_APP);
    let (dump, capture) = dump_of(4344, Some(4344), Some(10123), None);
    phone.set_backtrace(&device, dump);
    phone.set_tombstone(&device, capture);
    assert_dropped(&phone, 4344, "a header with no process name").await;
}

#[tokio::test]
async fn a_reused_pid_is_caught_by_the_dumps_pid_and_uid() {
    let phone = debug_phone();
    let device = device();
    // The pid's owner was resolved as Crash Test in user 0 (uid 10123) before the call.
    phone.add_process(&device, 4345, 10123, DEV_APP);
    for (dumped_pid, dumped_uid, why) in [
        // The app's clone in user 10 took the pid: same package, same name, another uid.
        (Some(4345), Some(1_010_123), "a clone's process"),
        // Another app of the same name pattern in user 0, under another uid.
        (Some(4345), Some(10200), "another uid"),
        // The dump's own pid line names another pid.
        (Some(4999), Some(10123), "another pid line"),
        // The header could not be read.
        (None, Some(10123), "no pid line"),
        (Some(4345), None, "no uid"),
    ] {
        let (dump, capture) = dump_of(4345, dumped_pid, dumped_uid, Some(DEV_APP));
        phone.set_backtrace(&device, dump);
        phone.set_tombstone(&device, capture);
        assert_dropped(&phone, 4345, why).await;
    }
    // The same dump with the owner's pid and uid is the app's.
    let (dump, capture) = dump_of(4345, Some(4345), Some(10123), Some(DEV_APP));
    phone.set_backtrace(&device, dump);
    phone.set_tombstone(&device, capture);
    let response = full(&gateway(&phone)).debug(backtrace(4345)).await;
    assert_eq!(response.status, DebugStatus::Success, "{response:?}");
}

#[cfg(unix)]
#[tokio::test]
async fn a_tombstone_never_replaces_a_file_nor_follows_a_symlink_and_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    let tombstones = root.path().join("tombstones");
    std::fs::create_dir_all(tombstones.join("real")).unwrap();
    // A symlink that stays inside the tree is still a symlink: not followed.
    std::os::unix::fs::symlink(tombstones.join("real"), tombstones.join("alias")).unwrap();
    let gateway = builder(&debug_phone())
        .local_root(Some(root.path().to_owned()))
        .build()
        .unwrap();
    let session = full(&gateway);
    let first = session.debug(tombstone(APP_PID, "app.txt")).await;
    assert_eq!(first.status, DebugStatus::Success, "{first:?}");
    let written = tombstones.join("app.txt");
    let mode = std::fs::metadata(&written).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    // The person's earlier tombstone is kept, and the agent is told why.
    std::fs::write(&written, "THE PERSON'S FILE").unwrap();
    let again = session.debug(tombstone(APP_PID, "app.txt")).await;
    assert_eq!(code(&again), Some(ErrorCode::PolicyDenied), "{again:?}");
    assert!(again.message.contains("exists"), "{}", again.message);
    assert_eq!(
        std::fs::read_to_string(&written).unwrap(),
        "THE PERSON'S FILE"
    );
    let through_link = session.debug(tombstone(APP_PID, "alias/app.txt")).await;
    assert_eq!(
        code(&through_link),
        Some(ErrorCode::PolicyDenied),
        "{through_link:?}"
    );
    assert_eq!(
        std::fs::read_dir(tombstones.join("real")).unwrap().count(),
        0
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(40))]

    /// Whatever a dump's header says, its text is returned and written only when its pid line,
    /// its uid and its name are those of the owner resolved before the call (a reused pid: a
    /// clone's process, another uid, another pid, an unreadable header).
    #[test]
    fn a_dump_of_any_other_process_is_never_returned_or_written(
        dumped_pid in proptest::option::of(proptest::prop_oneof![
            proptest::strategy::Just(4346i64),
            1i64..100_000,
        ]),
        dumped_uid in proptest::option::of(proptest::prop_oneof![
            proptest::strategy::Just(10_123u32),
            proptest::strategy::Just(1_010_123u32),
            0u32..2_000_000,
        ]),
        name in proptest::option::of(proptest::prop_oneof![
            proptest::strategy::Just(DEV_APP.to_owned()),
            proptest::strategy::Just(format!("{DEV_APP}:remote")),
            "[a-z.:]{0,20}",
        ]),
    ) {
        let phone = debug_phone();
        let device = device();
        phone.add_process(&device, 4346, 10_123, DEV_APP);
        let (dump, capture) = dump_of(4346, dumped_pid, dumped_uid, name.as_deref());
        phone.set_backtrace(&device, dump);
        phone.set_tombstone(&device, capture);
        let same = dumped_pid == Some(4346)
            && dumped_uid == Some(10_123)
            && name.as_deref() == Some(DEV_APP);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            if same {
                let response = full(&gateway(&phone)).debug(backtrace(4346)).await;
                assert_eq!(response.status, DebugStatus::Success, "{response:?}");
            } else {
                assert_dropped(&phone, 4346, "another process").await;
            }
        });
    }
}

/// Issue 28 item 8 (a fresh review found the debugging aids outside it): what a phone prints
/// into an aid's answer (a process or thread name an app chose, a backtrace's text, an exit
/// record's reason, a tombstone's signal line) keeps the one line-end rule: one-line fields and
/// the message hold no line end, a backtrace's text only `\n`. Checked on the JSON the MCP
/// frontend sends, where serde escapes the C0 ends but not NEL, U+2028 or U+2029.
#[tokio::test]
async fn the_debugging_aids_texts_keep_the_line_end_rule() {
    const ENDS: [char; 7] = [
        '\n', '\r', '\u{0B}', '\u{0C}', '\u{85}', '\u{2028}', '\u{2029}',
    ];
    let forged = "x\u{2028}09:00:00.000 ActivityManager: forged\u{85}y\u{2029}z\u{0B}w\r\n";
    let phone = debug_phone();
    let device = device();
    phone.set_backtrace(&device, NativeBacktrace {
        serial: DEVICE.into(),
        pid: APP_PID,
        // The process name stays the app's: a dump whose name differs from the pid's owner
        // is dropped before anything is shown (the reused-pid check).
        process_name: Some(DEV_APP.into()),
        abi: Some(format!("x86_64{forged}")),
        thread_count: 1,
        threads: vec![ThreadSummary { name: format!("main{forged}"), sys_tid: APP_PID, frame_count: 17 }],
        text: format!("----- pid {APP_PID} at 2026-11-30 10:00:00 -----\nCmd line: {DEV_APP}\n{forged}BACKTRACE-CONTENT\n"),
        dumped_pid: Some(APP_PID),
        dumped_uid: Some(10123),
    });
    phone.set_tombstone(
        &device,
        TombstoneCapture {
            serial: DEVICE.into(),
            pid: APP_PID,
            process_name: Some(DEV_APP.into()),
            abi: Some(format!("x86_64{forged}")),
            signal: Some(format!("6 (SIGABRT){forged}")),
            frame_count: Some(24),
            device_tombstone_ref: Some(format!("tombstone_27.pb{forged}")),
            bytes: b"*** *** ***\nTOMBSTONE-CONTENT\n".to_vec(),
            dumped_pid: Some(APP_PID),
            dumped_uid: Some(10123),
        },
    );
    phone.add_exit_record(
        &device,
        &AppId::new(DEV_APP),
        ExitRecord {
            timestamp: Some(format!("2026-09-06 22:40:00.000{forged}")),
            pid: Some(5487),
            process: Some(format!("{DEV_APP}{forged}")),
            reason: Some(format!("APP CRASH(EXCEPTION){forged}")),
            subreason: Some(format!("UNKNOWN{forged}")),
            ..ExitRecord::default()
        },
    );
    let root = tempfile::tempdir().unwrap();
    let gateway = builder(&phone)
        .local_root(Some(root.path().to_owned()))
        .build()
        .unwrap();
    let session = full(&gateway);
    for request in [
        exit_history(DEV_APP),
        backtrace(APP_PID),
        tombstone(APP_PID, "t.txt"),
    ] {
        let response = session.debug(request.clone()).await;
        assert_eq!(
            response.status,
            DebugStatus::Success,
            "{}",
            response.message
        );
        assert!(!response.message.contains(ENDS), "{:?}", response.message);
        let json = serde_json::to_string(&data_json(response.data.as_ref().unwrap())).unwrap();
        assert!(!json.contains(ENDS), "{request:?}: {json}");
        let data = data_json(response.data.as_ref().unwrap());
        if let Some(text) = data["text"].as_str() {
            assert!(text.contains("BACKTRACE-CONTENT"));
            assert!(
                !text.contains(|c| ENDS.contains(&c) && c != '\n'),
                "{text:?}"
            );
        }
        for thread in data["threads"].as_array().into_iter().flatten() {
            assert!(!thread["name"].as_str().unwrap().contains(ENDS), "{thread}");
        }
        for record in data["records"].as_array().into_iter().flatten() {
            for field in ["timestamp", "process", "reason", "subreason"] {
                let value = record[field].as_str().unwrap_or("");
                assert!(!value.contains(ENDS), "{field}: {value:?}");
            }
        }
    }
}

/// Issue 28, item 2: backtrace questions are keyed by their pid, so an agent could raise one
/// per pid to wear the person down. At most a few wait per agent and action; a further call gets
/// the oldest waiting question's id, and asks its own once the person has answered.
#[tokio::test]
async fn a_flood_of_questions_is_capped_per_agent_and_action() {
    let phone = debug_phone();
    let pids: Vec<i64> = (6001..6011).collect();
    for pid in &pids {
        phone.add_process(&device(), *pid, 10200, "com.example.app:remote");
    }
    let gateway = gateway(&phone);
    let session = full(&gateway);
    let mut ids = Vec::new();
    for pid in &pids {
        ids.push(pending_id(&session.debug(backtrace(*pid)).await));
    }
    let waiting = gateway.store().pending_approvals().unwrap();
    assert!(
        (1..=3).contains(&waiting.len()),
        "{} questions wait for the person",
        waiting.len()
    );
    let waiting_ids: Vec<&str> = waiting.iter().map(|a| a.id.as_str()).collect();
    assert!(
        ids.iter().all(|id| waiting_ids.contains(&id.as_str())),
        "every call got a waiting question's id: {ids:?} {waiting_ids:?}"
    );
    // The capped call, retried with the id it was given, is still waiting.
    let capped = session
        .debug(DebugRequest::CaptureNativeBacktrace {
            serial: DEVICE.into(),
            pid: pids[9],
            approval_id: Some(ids[9].clone()),
        })
        .await;
    assert_eq!(
        capped.status,
        DebugStatus::ApprovalPending,
        "{}",
        capped.message
    );
    // Another task of the same agent is capped too, and is given the waiting question's id,
    // which, sent back, says it still waits.
    let second = full(&gateway);
    let again = second.debug(backtrace(pids[8])).await;
    let given = pending_id(&again);
    assert!(waiting_ids.contains(&given.as_str()), "{}", again.message);
    let retried = second
        .debug(DebugRequest::CaptureNativeBacktrace {
            serial: DEVICE.into(),
            pid: pids[8],
            approval_id: Some(given),
        })
        .await;
    assert_eq!(
        retried.status,
        DebugStatus::ApprovalPending,
        "{}",
        retried.message
    );
    // Another action has its own allowance, and so has another agent.
    let exit_question = session.debug(exit_history("com.example.app")).await;
    assert_eq!(exit_question.status, DebugStatus::ApprovalPending);
    let other = gateway
        .start_task(TaskSpec::new(Agent::new("other-agent", Mode::Full)))
        .debug(backtrace(pids[9]))
        .await;
    assert_eq!(other.status, DebugStatus::ApprovalPending);
    assert_eq!(
        gateway.store().pending_approvals().unwrap().len(),
        waiting.len() + 2
    );
    // Once the person answers one, the next call asks its own.
    gateway
        .store()
        .answer(&waiting[0].id, Answer::Deny)
        .unwrap();
    let own_id = pending_id(&session.debug(backtrace(pids[9])).await);
    let asked = gateway.store().approval(&own_id).unwrap().unwrap();
    assert_eq!(asked.detail, format!("pid {}", pids[9]));
}

/// Found by the review of h28a: counted per task, one agent kept 3 questions waiting in each
/// of its tasks (an HTTP agent has up to 16 sessions).
#[tokio::test]
async fn one_agent_cannot_keep_more_than_a_few_questions_of_one_action_waiting() {
    let phone = debug_phone();
    for pid in 6001..6011 {
        phone.add_process(&device(), pid, 10200, "com.example.app:remote");
    }
    let gateway = gateway(&phone);
    let mut sessions = Vec::new();
    for _ in 0..4 {
        let session = full(&gateway);
        for pid in 6001..6011 {
            let _ = session.debug(backtrace(pid)).await;
        }
        sessions.push(session);
    }
    let waiting = gateway.store().pending_approvals().unwrap();
    assert!(
        waiting.len() <= phonelogs_gateway::MAX_PENDING_PER_ACTION,
        "{} backtrace questions of one agent wait for the person",
        waiting.len()
    );
}

/// Found by the review of h28a: a question expires when its task ends, so an agent that ends
/// its session and opens another, in a loop, raised fresh questions without limit. The ones
/// left unanswered count for a while after their task ended (`UNANSWERED_REST`); the call
/// is told when to call again; another agent is not held back.
#[tokio::test]
async fn ending_and_reopening_sessions_raises_no_fresh_questions() {
    let phone = debug_phone();
    for pid in 6001..6031 {
        phone.add_process(&device(), pid, 10200, "com.example.app:remote");
    }
    let gateway = gateway(&phone);
    for round in 0..10 {
        let session = full(&gateway);
        for pid in 0..3 {
            let _ = session.debug(backtrace(6001 + round * 3 + pid)).await;
        }
        session.end().await;
    }
    let asked: Vec<_> = gateway
        .store()
        .history(HistoryFilter::default())
        .unwrap()
        .into_iter()
        .filter(|step| step.status == phonelogs_gateway::Status::ApprovalPending)
        .collect();
    assert_eq!(
        asked.len(),
        phonelogs_gateway::MAX_PENDING_PER_ACTION,
        "questions asked over 10 reconnects: {asked:#?}"
    );
    let last = full(&gateway).debug(backtrace(6030)).await;
    assert_ne!(
        last.status,
        DebugStatus::ApprovalPending,
        "{}",
        last.message
    );
    assert!(
        last.message.contains("Call again after"),
        "{}",
        last.message
    );
    let other = gateway
        .start_task(TaskSpec::new(Agent::new("other-agent", Mode::Full)))
        .debug(backtrace(6030))
        .await;
    assert_eq!(
        other.status,
        DebugStatus::ApprovalPending,
        "{}",
        other.message
    );
}

/// Issue 37: a native backtrace's text and thread names and an exit record's texts are the
/// app's, masked like its lines, and the message counts what was masked.
#[tokio::test]
async fn backtraces_and_exit_history_are_masked() {
    let phone = debug_phone();
    let device = device();
    let key = "sk_live_4eC39HqLyjWDarjtT1zdp7dc";
    phone.set_backtrace(
        &device,
        NativeBacktrace {
            serial: DEVICE.into(),
            pid: APP_PID,
            process_name: Some(DEV_APP.into()),
            abi: Some("x86_64".into()),
            thread_count: 1,
            threads: vec![ThreadSummary {
                name: format!("pay({key})"),
                sys_tid: APP_PID,
                frame_count: 3,
            }],
            text: format!(
                "----- pid {APP_PID} -----\n  #00 pc 0001 libpay.so (charge(key={key}))\n"
            ),
            dumped_pid: Some(APP_PID),
            dumped_uid: Some(10123),
        },
    );
    phone.add_exit_record(
        &device,
        &AppId::new(DEV_APP),
        ExitRecord {
            timestamp: Some("2026-09-06 22:40:00.000".into()),
            pid: Some(5490),
            reason: Some("APP CRASH(EXCEPTION)".into()),
            description: Some(format!("init(key={key}) failed")),
            ..ExitRecord::default()
        },
    );
    let gateway = gateway(&phone);
    let session = full(&gateway);
    for request in [backtrace(APP_PID), exit_history(DEV_APP)] {
        let response = session.debug(request).await;
        assert_eq!(
            response.status,
            DebugStatus::Success,
            "{}",
            response.message
        );
        let json = serde_json::to_string(&response).unwrap();
        assert!(
            !json.contains(key) && json.contains("[redacted:stripe-access-token]"),
            "{json}"
        );
        assert!(
            response.message.contains("masked as [redacted:KIND]"),
            "{}",
            response.message
        );
    }
}

/// The tombstone `bytes` of a process named `process_name` as written to the local root, and
/// the response.
async fn written_tombstone(bytes: Vec<u8>, process_name: &str) -> (Vec<u8>, DebugResponse) {
    let phone = debug_phone();
    phone.set_tombstone(
        &device(),
        TombstoneCapture {
            serial: DEVICE.into(),
            pid: APP_PID,
            process_name: Some(process_name.into()),
            abi: Some("x86_64".into()),
            signal: None,
            frame_count: Some(1),
            device_tombstone_ref: None,
            bytes,
            dumped_pid: Some(APP_PID),
            dumped_uid: Some(10123),
        },
    );
    let root = tempfile::tempdir().unwrap();
    let gateway = builder(&phone)
        .local_root(Some(root.path().to_owned()))
        .build()
        .unwrap();
    let response = full(&gateway).debug(tombstone(APP_PID, "keyed.txt")).await;
    assert_eq!(
        response.status,
        DebugStatus::Success,
        "{}",
        response.message
    );
    let data = response.data.as_ref().map(data_json).unwrap();
    let written = std::fs::read(data["local_path"].as_str().unwrap()).unwrap();
    (written, response)
}

const TOMBSTONE_KEY: &str = "sk_live_4eC39HqLyjWDarjtT1zdp7dc";

/// Issue 37: a tombstone an agent can read from the local root is written with its secrets
/// masked.
#[tokio::test]
async fn a_text_tombstone_is_written_masked() {
    let key = TOMBSTONE_KEY;
    let bytes =
        format!("*** *** ***\npid: {APP_PID}, name: {DEV_APP}\nAbort message: 'init(key={key})'\n");
    let (written, response) = written_tombstone(bytes.into_bytes(), DEV_APP).await;
    let written = String::from_utf8(written).unwrap();
    assert!(!written.contains(key), "{written}");
    assert!(
        written.contains("init(key=[redacted:stripe-access-token])"),
        "{written}"
    );
    assert!(
        response.message.contains("masked as [redacted:KIND]"),
        "{}",
        response.message
    );
}

/// Issue 37, the review's F1: one byte that is not UTF-8 (a thread name of another encoding)
/// no longer leaves the whole tombstone unmasked. (The process name it returns is masked too,
/// but a name that is not the app's never gets that far: the dump is dropped as a reused pid's.)
#[tokio::test]
async fn a_tombstone_with_a_byte_that_is_not_utf8_is_masked() {
    let key = TOMBSTONE_KEY;
    let mut bytes = format!("pid: {APP_PID}, tid: 4712, name: ").into_bytes();
    bytes.push(0xff);
    bytes.extend_from_slice(
        format!("  >>> {DEV_APP} <<<\nAbort message: 'init(key={key})'\n").as_bytes(),
    );
    let (written, response) = written_tombstone(bytes, DEV_APP).await;
    let text = String::from_utf8_lossy(&written);
    assert!(!text.contains(key), "{text}");
    assert!(text.contains("[redacted:stripe-access-token]"), "{text}");
    assert!(
        response.message.contains("masked as [redacted:KIND]"),
        "{}",
        response.message
    );
    // A dump that held no secret is written as the phone printed it, byte for byte.
    let mut plain = b"pid: 1, name: ".to_vec();
    plain.push(0xff);
    let (written, _) = written_tombstone(plain.clone(), DEV_APP).await;
    assert_eq!(written, plain);
}
