//! Live reads over MCP, in one process over `tokio::io::duplex` on the fake phone: a wait
//! sends progress notifications to a client that gave a progress token (rmcp's client gives one
//! with every request), a `notifications/cancelled` ends the wait at once and closes its stream,
//! and results carry `cursor` and `matched` in the output schema.

// Test helpers unwrap: a failure there is a failing test, which is what it should be.
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use phonelogs_driver::{AppId, DeviceId, LogLevel, LogLine};
use phonelogs_fake::{FakeApp, FakePhone};
use phonelogs_gateway::{Agent, Gateway, Mode, TaskSpec};
use phonelogs_mcp_frontend::{PhoneLogsServer, ServerOptions};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, ProgressNotificationParam, ServerResult,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RunningService, ServiceExt};
use rmcp::{ClientHandler, RoleClient};
use serde_json::{Value, json};
use time::OffsetDateTime;

const DEVICE: &str = "emulator-5554";
const APP: &str = "dev.phonelogs.crashtest";

/// A client that keeps every progress notification it gets.
#[derive(Clone, Default)]
struct Recorder {
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl ClientHandler for Recorder {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params);
    }
}

fn setup() -> (FakePhone, Gateway) {
    let phone = FakePhone::new();
    let device = DeviceId::new(DEVICE);
    phone.add_device(&device, "Pixel 8");
    phone.add_app(
        &device,
        FakeApp::new(AppId::new(APP))
            .label("Crash Test")
            .uid(10123)
            .dev_build(true),
    );
    let gateway = Gateway::builder()
        .driver(Arc::new(phone.clone()))
        .build()
        .unwrap();
    // The secret rules compile on their own thread from `build`; the first call that shows a
    // line waits for them (a second or more in a debug build on a busy machine). These tests
    // time a wait against lines written on a clock of their own, so the rules are ready first.
    let _ = phonelogs_gateway::mask::masker();
    (phone, gateway)
}

async fn connect(gateway: &Gateway, recorder: Recorder) -> RunningService<RoleClient, Recorder> {
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    let task = TaskSpec::new(Agent::new("test-agent", Mode::ReadOnly));
    let server = PhoneLogsServer::new(gateway.clone(), task, ServerOptions::default()).unwrap();
    tokio::spawn(async move {
        let _ = server.serve(server_io).await;
    });
    recorder.serve(client_io).await.unwrap()
}

fn request(arguments: Value) -> ClientRequest {
    let arguments = arguments.as_object().cloned().unwrap_or_default();
    ClientRequest::CallToolRequest(CallToolRequest::new(
        CallToolRequestParams::new("phone_logs").with_arguments(arguments),
    ))
}

/// Waits until `ready` holds, however long the machine takes: no assertion on time here (the
/// test harness ends a test that hangs). Polled, as the fake phone's stream count and the
/// recorder's notifications have no event of their own.
async fn until(mut ready: impl FnMut() -> bool) {
    while !ready() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn structured(result: ServerResult) -> Value {
    match result {
        ServerResult::CallToolResult(result) => result.structured_content.unwrap(),
        other => panic!("not a tool result: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_reports_progress_and_ends_with_the_awaited_line() {
    let (phone, gateway) = setup();
    let recorder = Recorder::default();
    let client = connect(&gateway, recorder.clone()).await;
    let writer = phone.clone();
    let seen = recorder.progress.clone();
    tokio::spawn(async move {
        // After two progress notifications, however slow the machine: the test is of what the
        // client is sent, not of the server's speed.
        until(|| seen.lock().unwrap().len() >= 2).await;
        writer.add_logs(
            &DeviceId::new(DEVICE),
            &AppId::new(APP),
            [LogLine {
                time: OffsetDateTime::now_utc(),
                level: LogLevel::Info,
                tag: "CrashTest".into(),
                text: "ready".into(),
                pid: Some(4242),
                tid: Some(4242),
                uid: Some(10123),
            }],
        );
    });
    let handle = client
        .peer()
        .send_request_with_option(
            request(json!({"app": APP, "since": "last", "wait_for": "ready", "timeout": 60})),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    let output = structured(handle.await_response().await.unwrap());
    assert_eq!(output["status"], "ok");
    assert_eq!(output["matched"], true);
    assert!(
        output["log"]
            .as_str()
            .unwrap()
            .ends_with("CrashTest: ready\n")
    );
    assert!(output["cursor"].as_str().is_some_and(|c| !c.is_empty()));
    let progress = recorder.progress.lock().unwrap().clone();
    assert!(progress.len() >= 2, "{progress:?}");
    assert!(progress.windows(2).all(|w| w[0].progress < w[1].progress));
    assert_eq!(progress[0].total, Some(60.0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_wait_ends_at_once_and_closes_its_stream() {
    let (phone, gateway) = setup();
    let client = connect(&gateway, Recorder::default()).await;
    let device = DeviceId::new(DEVICE);
    let handle = client
        .peer()
        .send_request_with_option(
            request(json!({"app": APP, "wait_for": "never", "timeout": 60})),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    until(|| phone.open_streams(&device) > 0).await;
    assert_eq!(phone.open_streams(&device), 1, "the wait reads one stream");
    handle
        .cancel(Some("the agent moved on".into()))
        .await
        .unwrap();
    until(|| phone.open_streams(&device) == 0).await;
    // The server is still there for the next call.
    let again = client
        .peer()
        .send_request_with_option(
            request(json!({"app": APP, "since": "last"})),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    assert_eq!(
        structured(again.await_response().await.unwrap())["status"],
        "ok"
    );
}

#[tokio::test]
async fn the_output_schema_names_cursor_and_matched_and_the_input_the_wait() {
    let (_phone, gateway) = setup();
    let client = connect(&gateway, Recorder::default()).await;
    let tools = client.peer().list_all_tools().await.unwrap();
    let tool = tools.iter().find(|t| t.name == "phone_logs").unwrap();
    let output = serde_json::to_value(tool.output_schema.as_ref().unwrap()).unwrap();
    assert!(output["properties"]["cursor"].is_object());
    assert!(output["properties"]["matched"].is_object());
    let input = serde_json::to_value(&*tool.input_schema).unwrap();
    assert!(input["properties"]["wait_for"].is_object());
    assert!(input["properties"]["timeout"].is_object());
    assert!(
        input["properties"]["since"]["description"]
            .as_str()
            .unwrap()
            .contains("last")
    );
}
