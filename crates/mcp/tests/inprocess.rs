//! The server and rmcp's client in one process over `tokio::io::duplex`, on the fake phone: the
//! gateway's one cut reaching the agent whole in both forms (the cases of issue 14), approval ids
//! bound to their task, elicitation when the client cannot ask, and the task ending with the MCP
//! session.

// Test helpers unwrap: a failure there is a failing test, which is what it should be.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use phonelogs_driver::{AppId, CrashKind, CrashReport, DeviceId, LogLevel, LogLine};
use phonelogs_fake::{FakeApp, FakePhone};
use phonelogs_gateway::{Agent, Answer, ApprovalState, Gateway, MAX_RESULT_BYTES, Mode, TaskSpec};
use phonelogs_mcp_frontend::{PhoneLogsServer, ServerOptions};
use rmcp::RoleClient;
use rmcp::model::{CallToolRequestParams, CallToolResult, ClientConfig};
use rmcp::service::{RunningService, ServiceExt};
use serde_json::{Value, json};
use time::{Duration, OffsetDateTime};

const DEVICE: &str = "emulator-5554";
const BIG_APP: &str = "dev.example.chatty";
const RELEASE_APP: &str = "com.example.release";

fn line(time: OffsetDateTime, i: usize) -> LogLine {
    LogLine {
        time,
        level: LogLevel::Info,
        tag: "Chatty".into(),
        // About 1,900 bytes with quotes and backslashes, which JSON escapes.
        text: format!("line {i:04} {}", "payload \"quoted\" \\ ".repeat(95)),
        pid: Some(4242),
        tid: Some(4242),
        uid: Some(10_500),
    }
}

/// A phone with a debuggable app that logged 500 long lines and crashed ten times with long
/// reports, and a release build that asks first. Everything is stamped after `start`.
fn phone(start: OffsetDateTime) -> FakePhone {
    let phone = FakePhone::new();
    let device = DeviceId::new(DEVICE);
    phone.add_device(&device, "Pixel 8");
    let big = AppId::new(BIG_APP);
    phone.add_app(
        &device,
        FakeApp::new(big.clone())
            .label("Chatty")
            .uid(10_500)
            .dev_build(true),
    );
    phone.add_logs(
        &device,
        &big,
        (0..500).map(|i| line(start + Duration::milliseconds(i as i64 + 1), i)),
    );
    for i in 0..10 {
        phone.add_crash(
            &device,
            &big,
            CrashReport {
                kind: CrashKind::JavaCrash,
                time: start + Duration::seconds(i + 1),
                pid: Some(4242),
                process: BIG_APP.into(),
                summary: format!("java.lang.IllegalStateException: crash {i}"),
                text: format!(
                    "crash {i}\n{}",
                    // A throw site of its own each, so each is a heading of its own (reports of
                    // one fingerprint would be grouped under one).
                    format!("\tat dev.example.chatty.Main.run{i}(Main.java:42)\n").repeat(900)
                ),
                build: None,
            },
        );
    }
    let release = AppId::new(RELEASE_APP);
    phone.add_app(
        &device,
        FakeApp::new(release.clone()).label("Release").uid(10_600),
    );
    phone.add_logs(&device, &release, [line(start + Duration::seconds(1), 0)]);
    phone
}

fn gateway(start: OffsetDateTime) -> Gateway {
    Gateway::builder()
        .driver(Arc::new(phone(start)))
        .build()
        .unwrap()
}

/// Serves a new task of `gateway` to a client that cannot ask, over an in-memory pipe.
async fn connect(
    gateway: &Gateway,
) -> (
    RunningService<RoleClient, ClientConfig>,
    PhoneLogsServer,
    tokio::task::JoinHandle<()>,
) {
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    let task = TaskSpec::new(Agent::new("test-agent", Mode::ReadOnly));
    let server = PhoneLogsServer::new(gateway.clone(), task, ServerOptions::default()).unwrap();
    let serving = server.clone();
    let handle = tokio::spawn(async move {
        let _ = serving.serve(server_io).await;
    });
    let client = ClientConfig::default().serve(client_io).await.unwrap();
    (client, server, handle)
}

async fn call(
    client: &RunningService<RoleClient, ClientConfig>,
    tool: &'static str,
    arguments: Value,
) -> CallToolResult {
    let arguments = arguments.as_object().cloned().unwrap_or_default();
    client
        .call_tool(CallToolRequestParams::new(tool).with_arguments(arguments))
        .await
        .unwrap()
}

/// What a client that passes only the text content gives the model.
fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .map(|t| t.text.clone())
        .collect()
}

/// What Claude Code gives the model: `JSON.stringify(structuredContent)`.
fn structured_bytes(result: &CallToolResult) -> usize {
    serde_json::to_string(result.structured_content.as_ref().unwrap())
        .unwrap()
        .len()
}

/// The log after the message and its blank line, in the text content.
fn text_log(result: &CallToolResult) -> String {
    let text = text_of(result);
    let message = result.structured_content.as_ref().unwrap()["message"]
        .as_str()
        .unwrap()
        .to_owned();
    text.strip_prefix(&format!("{message}\n\n"))
        .map(str::to_owned)
        .unwrap_or_default()
}

#[tokio::test]
async fn the_biggest_results_fit_the_cap_in_either_form_and_keep_the_newest() {
    let start = OffsetDateTime::now_utc();
    let gateway = gateway(start);
    let (client, _server, _handle) = connect(&gateway).await;

    let logs = call(
        &client,
        "phone_logs",
        json!({ "app": BIG_APP, "limit": 500, "since": "1h" }),
    )
    .await;
    let out = logs.structured_content.clone().unwrap();
    assert_eq!(out["status"], "ok", "{}", out["message"]);
    for bytes in [text_of(&logs).len(), structured_bytes(&logs)] {
        assert!(bytes <= MAX_RESULT_BYTES + 2_048, "{bytes} bytes");
    }
    let log = out["log"].as_str().unwrap();
    assert_eq!(text_log(&logs), log, "one log, in both forms");
    assert!(out.get("lines").is_none(), "no array repeats the lines");
    let shown = out["shown"].as_u64().unwrap() as usize;
    assert_eq!(log.lines().count(), shown);
    assert_eq!(shown + out["left_out"].as_u64().unwrap() as usize, 500);
    assert!(
        log.lines().last().unwrap().contains("line 0499"),
        "the newest line is kept"
    );
    assert!(!log.contains("line 0000"), "the oldest line is left out");

    let crashes = call(
        &client,
        "phone_logs",
        json!({ "app": BIG_APP, "kind": "crashes", "limit": 10, "since": "1h" }),
    )
    .await;
    let out = crashes.structured_content.clone().unwrap();
    assert_eq!(out["status"], "ok", "{}", out["message"]);
    for bytes in [text_of(&crashes).len(), structured_bytes(&crashes)] {
        assert!(bytes <= MAX_RESULT_BYTES + 2_048, "{bytes} bytes");
    }
    assert_eq!(text_log(&crashes), out["log"].as_str().unwrap());
    let reports = out["reports"].as_array().unwrap();
    assert_eq!(reports.len(), 10, "every heading stays");
    assert!(reports.iter().all(|r| r.get("text").is_none()));
    assert!(
        reports[0]["summary"].as_str().unwrap().ends_with("crash 9"),
        "newest first: {}",
        reports[0]
    );
    for report in reports {
        assert!(
            text_of(&crashes).contains(report["summary"].as_str().unwrap()),
            "{report}"
        );
    }
    client.cancel().await.unwrap();
}

/// A phone with one debuggable app that logged `lines` lines of `bytes` bytes each and crashed
/// with `reports` (newest last).
fn busy_gateway(lines: usize, bytes: usize, reports: Vec<CrashReport>) -> Gateway {
    let start = OffsetDateTime::now_utc() - Duration::minutes(1);
    let phone = FakePhone::new();
    let device = DeviceId::new(DEVICE);
    phone.add_device(&device, "Pixel 8");
    let app = AppId::new(BIG_APP);
    phone.add_app(
        &device,
        FakeApp::new(app.clone())
            .label("Chatty")
            .uid(10_500)
            .dev_build(true),
    );
    phone.add_logs(
        &device,
        &app,
        (0..lines).map(|i| LogLine {
            time: start + Duration::milliseconds(i as i64),
            level: LogLevel::Info,
            tag: "Chatty".into(),
            text: format!("{i:04} {}", "b".repeat(bytes - 5)),
            pid: Some(4242),
            tid: Some(4242),
            uid: Some(10_500),
        }),
    );
    for report in reports {
        phone.add_crash(&device, &app, report);
    }
    Gateway::builder().driver(Arc::new(phone)).build().unwrap()
}

/// Issue 14: 200 lines of about 250 bytes came back as 146 under a message that said 200.
#[tokio::test]
async fn two_hundred_lines_of_300_bytes_give_two_hundred_lines() {
    let gateway = busy_gateway(200, 300, vec![]);
    let (client, _server, _handle) = connect(&gateway).await;
    let result = call(
        &client,
        "phone_logs",
        json!({ "app": BIG_APP, "since": "1h" }),
    )
    .await;
    let out = result.structured_content.clone().unwrap();
    assert_eq!(out["shown"], 200, "{}", out["message"]);
    assert_eq!(out["left_out"], 0);
    assert!(
        out["message"]
            .as_str()
            .unwrap()
            .starts_with("200 log lines of Chatty"),
        "{}",
        out["message"]
    );
    assert_eq!(text_log(&result).lines().count(), 200);
    assert_eq!(out["log"].as_str().unwrap().lines().count(), 200);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn five_hundred_lines_of_300_bytes_give_the_newest_that_fit_with_a_true_count() {
    let gateway = busy_gateway(500, 300, vec![]);
    let (client, _server, _handle) = connect(&gateway).await;
    let result = call(
        &client,
        "phone_logs",
        json!({ "app": BIG_APP, "since": "1h", "limit": 500 }),
    )
    .await;
    let out = result.structured_content.clone().unwrap();
    let log = out["log"].as_str().unwrap();
    // Each line is "hh:mm:ss.mmm Chatty: ", its 300 bytes, and a newline JSON writes as `\n`.
    let per_line = "hh:mm:ss.mmm Chatty: ".len() + 300 + 2;
    let fit = MAX_RESULT_BYTES / per_line;
    assert_eq!(out["shown"], fit as u64, "{}", out["message"]);
    assert_eq!(out["left_out"], (500 - fit) as u64);
    assert_eq!(log.lines().count(), fit);
    assert!(
        log.lines().last().unwrap().contains(" 0499 "),
        "the newest is kept"
    );
    assert_eq!(text_log(&result), log);
    let message = out["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!(
            "{fit} log lines of Chatty, oldest first. {} older lines were left out",
            500 - fit
        )),
        "{message}"
    );
    client.cancel().await.unwrap();
}

/// Issue 14: four reports with a 30 KB ANR showed three headings under "4 crash reports".
#[tokio::test]
async fn four_reports_with_a_30_kb_anr_give_four_headings() {
    let now = OffsetDateTime::now_utc() - Duration::seconds(30);
    let report = |seconds: i64, kind: CrashKind, summary: &str, text: String| CrashReport {
        kind,
        time: now + Duration::seconds(seconds),
        pid: Some(4242),
        process: BIG_APP.into(),
        summary: summary.into(),
        text,
        build: None,
    };
    let anr = format!(
        "Subject: Input dispatching timed out\n{}",
        "  at dev.example.chatty.Main.hang(Main.java:7)\n".repeat(660)
    );
    assert!(anr.len() > 30_000);
    let gateway = busy_gateway(
        1,
        100,
        vec![
            report(
                1,
                CrashKind::JavaCrash,
                "java.lang.IllegalStateException: drop box",
                "FATAL EXCEPTION: main\n".repeat(200),
            ),
            report(
                2,
                CrashKind::NativeCrash,
                "signal 11 (SIGSEGV)",
                "*** *** ***\nbacktrace:\n".repeat(400),
            ),
            report(
                3,
                CrashKind::JavaCrash,
                "java.lang.IllegalStateException: crash buffer",
                "\tat Main.run(Main.java:42)\n".repeat(300),
            ),
            report(4, CrashKind::Anr, "Input dispatching timed out", anr),
        ],
    );
    let (client, _server, _handle) = connect(&gateway).await;
    let result = call(
        &client,
        "phone_logs",
        json!({ "app": BIG_APP, "kind": "crashes", "limit": 10, "since": "1h" }),
    )
    .await;
    let out = result.structured_content.clone().unwrap();
    let message = out["message"].as_str().unwrap();
    assert!(
        message.starts_with("4 crash reports of Chatty"),
        "{message}"
    );
    let reports = out["reports"].as_array().unwrap();
    assert_eq!(reports.len(), 4);
    assert_eq!(out["shown"], 4);
    let text = text_of(&result);
    for report in reports {
        let summary = report["summary"].as_str().unwrap();
        assert!(text.contains(summary), "{summary} is not in the text");
        assert!(out["log"].as_str().unwrap().contains(summary));
        assert_eq!(report["text_shown"], "whole", "{report}");
    }
    assert_eq!(reports[0]["kind"], "anr");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_approval_id_works_only_in_the_task_that_asked() {
    let start = OffsetDateTime::now_utc();
    let gateway = gateway(start);
    let (first, _a, _ha) = connect(&gateway).await;
    let (second, _b, _hb) = connect(&gateway).await;

    let pending = call(&first, "phone_logs", json!({ "app": RELEASE_APP })).await;
    let out = pending.structured_content.clone().unwrap();
    assert_eq!(out["status"], "approval_pending");
    let id = out["approval_id"].as_str().unwrap().to_owned();
    gateway.store().answer(&id, Answer::Task).unwrap();

    // Another task cannot pick it up.
    let stolen = call(
        &second,
        "phone_logs",
        json!({ "app": RELEASE_APP, "approval_id": id }),
    )
    .await;
    assert_ne!(stolen.structured_content.clone().unwrap()["status"], "ok");

    // The task that asked can.
    let picked = call(
        &first,
        "phone_logs",
        json!({ "app": RELEASE_APP, "approval_id": id }),
    )
    .await;
    assert_eq!(picked.structured_content.clone().unwrap()["status"], "ok");
    first.cancel().await.unwrap();
    second.cancel().await.unwrap();
}

#[tokio::test]
async fn the_task_ends_with_the_session_and_its_open_questions_expire() {
    let start = OffsetDateTime::now_utc();
    let gateway = gateway(start);
    let (client, _server, handle) = connect(&gateway).await;
    let pending = call(&client, "phone_logs", json!({ "app": RELEASE_APP })).await;
    let id = pending.structured_content.clone().unwrap()["approval_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        gateway.store().approval(&id).unwrap().unwrap().state,
        ApprovalState::Pending
    );

    client.cancel().await.unwrap();
    handle.await.unwrap();
    assert_eq!(
        gateway.store().approval(&id).unwrap().unwrap().state,
        ApprovalState::Expired
    );
    assert!(
        gateway.store().answer(&id, Answer::Always).is_err(),
        "an expired question cannot be answered"
    );
}

/// A backtrace's text is cut once, in the gateway, to the result cap: the envelope says so
/// (`text_cut`, the message), and both forms stay within the cap plus 2 KB.
#[tokio::test]
async fn a_huge_backtrace_is_cut_in_the_gateway_and_says_so() {
    let phone = FakePhone::new();
    let device = DeviceId::new(DEVICE);
    phone.add_device(&device, "Pixel 8");
    phone.add_app(
        &device,
        FakeApp::new(AppId::new(BIG_APP))
            .label("Chatty")
            .uid(10_500)
            .dev_build(true),
    );
    phone.add_process(&device, 4242, 10_500, BIG_APP);
    phone.set_debuggerd_allowed(&device, true);
    // Read from JSON, so fields a driver adds later keep their defaults here.
    let mut backtrace: phonelogs_driver::NativeBacktrace = serde_json::from_value(json!({
        "serial": DEVICE,
        "pid": 4242,
        "process_name": BIG_APP,
        "abi": "x86_64",
        "thread_count": 1,
        "threads": [{ "name": "main", "sys_tid": 4242, "frame_count": 20000 }],
        "text": "    #00 pc 000000000004e2b8  /apex/com.android.runtime/lib64/bionic/libc.so (\"x\")\n"
            .repeat(20_000),
    }))
    .unwrap();
    // What the driver reads right after the dump: the same process the policy judged.
    backtrace.dumped_pid = Some(4242);
    backtrace.dumped_uid = Some(10_500);
    phone.set_backtrace(&device, backtrace);
    let gateway = Gateway::builder().driver(Arc::new(phone)).build().unwrap();
    let (client, _server, _handle) = connect(&gateway).await;
    let result = call(
        &client,
        "capture_native_backtrace",
        json!({ "serial": DEVICE, "pid": 4242 }),
    )
    .await;
    let out = result.structured_content.clone().unwrap();
    assert_eq!(out["status"], "success", "{out}");
    assert_eq!(out["data"]["text_cut"], true);
    // This gateway has no symbols directory, and the frames (the system's, with their
    // functions) need none: nothing is said of symbols.
    assert_eq!(out["data"].get("symbols"), None, "{out}");
    assert!(
        out["message"]
            .as_str()
            .unwrap()
            .contains("was cut to its first"),
        "{}",
        out["message"]
    );
    for bytes in [text_of(&result).len(), structured_bytes(&result)] {
        assert!(bytes <= MAX_RESULT_BYTES + 2_048, "{bytes} bytes");
        assert!(
            bytes > MAX_RESULT_BYTES - 2_048,
            "{bytes} bytes: cut far too much"
        );
    }
    client.cancel().await.unwrap();
}
