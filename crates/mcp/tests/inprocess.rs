//! The server and rmcp's client in one process over `tokio::io::duplex`, on the fake phone: the
//! 64 KB cap on big results, approval ids bound to their task, elicitation when the client cannot
//! ask, and the task ending with the MCP session.

// Test helpers unwrap: a failure there is a failing test, which is what it should be.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use phonelogs_driver::{AppId, CrashKind, CrashReport, DeviceId, LogLevel, LogLine};
use phonelogs_fake::{FakeApp, FakePhone};
use phonelogs_gateway::{Agent, Answer, ApprovalState, Gateway, Mode, TaskSpec};
use phonelogs_mcp_frontend::render::RESULT_BUDGET;
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
                    "\tat dev.example.chatty.Main.run(Main.java:42)\n".repeat(900)
                ),
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

fn size(result: &CallToolResult) -> usize {
    serde_json::to_string(result).unwrap().len()
}

#[tokio::test]
async fn the_biggest_results_stay_under_64_kb_and_keep_the_newest() {
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
    assert!(size(&logs) <= RESULT_BUDGET, "{} bytes", size(&logs));
    let lines = out["lines"].as_array().cloned().unwrap();
    assert!(!lines.is_empty());
    assert!(
        lines.last().unwrap()["text"]
            .as_str()
            .unwrap()
            .starts_with("line 0499"),
        "the newest line is kept"
    );
    let text: String = logs
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .map(|t| t.text.clone())
        .collect();
    assert!(text.contains("line 0499"));
    assert!(!text.contains("line 0000"), "the oldest line is left out");

    let crashes = call(
        &client,
        "phone_logs",
        json!({ "app": BIG_APP, "kind": "crashes", "limit": 10, "since": "1h" }),
    )
    .await;
    let out = crashes.structured_content.clone().unwrap();
    assert_eq!(out["status"], "ok", "{}", out["message"]);
    assert!(size(&crashes) <= RESULT_BUDGET, "{} bytes", size(&crashes));
    assert!(
        out["reports"][0]["summary"]
            .as_str()
            .unwrap()
            .ends_with("crash 9"),
        "newest first: {}",
        out["reports"][0]
    );
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
