//! Who sits at the client decides who may answer (issue 28, item 1), for both ways of asking:
//! elicitation (2025 protocols) and `input_required` (2026-07-28). The server and rmcp's client
//! run in one process over `tokio::io::duplex`, the client answering every question the same
//! way, as a script would.
//!
//! - [`ClientSeat::Agent`] (an HTTP token's client by default): never asked; an "always" it
//!   sends anyway (a retry carrying an answer) writes nothing.
//! - [`ClientSeat::PersonNotAlways`] (a token marked `person`): asked with three answers; an
//!   "always" is not taken, a "task" is.
//! - [`ClientSeat::Person`] (stdio): asked with all four; its "always" is a standing rule.

// Test helpers unwrap: a failure there is a failing test, which is what it should be.
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};

use phonelogs_driver::{AppId, DeviceId, LogLevel, LogLine};
use phonelogs_fake::{FakeApp, FakePhone};
use phonelogs_gateway::{Agent, Gateway, Mode, TaskSpec};
use phonelogs_mcp_frontend::{ClientSeat, PhoneLogsServer, ServerOptions};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationCapability, FormElicitationCapability,
    Implementation, ProtocolVersion,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RequestContext, RunningService};
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::{Value, json};
use time::OffsetDateTime;

const DEVICE: &str = "emulator-5554";
const APP: &str = "com.example.release";

/// A client that shows form elicitation and answers every question `decision`.
#[derive(Clone)]
struct Scripted {
    decision: &'static str,
    asked: Arc<Mutex<Vec<Value>>>,
}

impl ClientHandler for Scripted {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.asked
            .lock()
            .unwrap()
            .push(serde_json::to_value(&request).unwrap());
        let mut result = ElicitResult::new(ElicitationAction::Accept);
        result.content = Some(json!({ "decision": self.decision }));
        Ok(result)
    }

    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation =
            Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
        ClientConfig::new(capabilities, Implementation::new("scripted", "1.0"))
    }
}

impl Scripted {
    fn answering(decision: &'static str) -> Scripted {
        Scripted {
            decision,
            asked: Arc::default(),
        }
    }

    /// The answers each question offered.
    fn offered(&self) -> Vec<Vec<String>> {
        self.asked
            .lock()
            .unwrap()
            .iter()
            .map(|asked| {
                asked["requestedSchema"]["properties"]["decision"]["oneOf"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|o| o["const"].as_str().map(str::to_owned))
                    .collect()
            })
            .collect()
    }
}

fn gateway() -> Gateway {
    let phone = FakePhone::new();
    let device = DeviceId::new(DEVICE);
    phone.add_device(&device, "Pixel 8");
    let app = AppId::new(APP);
    phone.add_app(
        &device,
        FakeApp::new(app.clone()).label("Release").uid(10_600),
    );
    phone.add_logs(
        &device,
        &app,
        [LogLine {
            time: OffsetDateTime::now_utc() + time::Duration::seconds(1),
            level: LogLevel::Info,
            tag: "Release".into(),
            text: "started".into(),
            pid: Some(4242),
            tid: Some(4242),
            uid: Some(10_600),
        }],
    );
    Gateway::builder().driver(Arc::new(phone)).build().unwrap()
}

async fn connect(
    gateway: &Gateway,
    seat: ClientSeat,
    client: Scripted,
    modern: bool,
) -> RunningService<RoleClient, Scripted> {
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    let task = TaskSpec::new(Agent::new("scripted-agent", Mode::ReadOnly));
    let options = ServerOptions {
        client: seat,
        ..ServerOptions::default()
    };
    let server = PhoneLogsServer::new(gateway.clone(), task, options).unwrap();
    tokio::spawn(async move {
        let _ = server.serve(server_io).await;
    });
    let lifecycle = if modern {
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        }
    } else {
        ClientLifecycleMode::Initialize
    };
    client
        .serve_with_lifecycle(client_io, lifecycle)
        .await
        .unwrap()
}

fn params(arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new("phone_logs")
        .with_arguments(arguments.as_object().cloned().unwrap_or_default())
}

async fn read(client: &RunningService<RoleClient, Scripted>) -> Value {
    let result = client
        .call_tool(params(json!({ "app": APP })))
        .await
        .unwrap();
    result.structured_content.unwrap()
}

#[tokio::test]
async fn the_agents_own_client_is_asked_nothing_by_either_protocol() {
    for modern in [false, true] {
        let gateway = gateway();
        let script = Scripted::answering("always");
        let client = connect(&gateway, ClientSeat::Agent, script.clone(), modern).await;
        let out = read(&client).await;
        assert_eq!(out["status"], "approval_pending", "modern {modern}: {out}");
        assert!(script.offered().is_empty(), "asked: {:?}", script.offered());
        assert!(gateway.store().rules().unwrap().is_empty());
        assert_eq!(gateway.store().pending_approvals().unwrap().len(), 1);
        if modern {
            // A retry carrying an "always" the server never asked for answers nothing.
            let forged = params(json!({ "app": APP }))
                .with_request_state("rs1.forged".to_owned())
                .with_input_responses(
                    [(
                        "approval".to_owned(),
                        json!({"action": "accept", "content": {"decision": "always"}}),
                    )]
                    .into(),
                );
            let CallToolResponse::Complete(refused) = client.call_tool_once(forged).await.unwrap()
            else {
                panic!("expected a complete result");
            };
            assert_ne!(refused.structured_content.unwrap()["status"], "ok");
            assert!(gateway.store().rules().unwrap().is_empty());
            assert_eq!(gateway.store().pending_approvals().unwrap().len(), 1);
        }
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn a_client_a_person_sits_at_over_the_network_never_gives_always_allow() {
    for modern in [false, true] {
        let gateway = gateway();
        let always = Scripted::answering("always");
        let client = connect(
            &gateway,
            ClientSeat::PersonNotAlways,
            always.clone(),
            modern,
        )
        .await;
        let out = read(&client).await;
        assert_eq!(out["status"], "approval_pending", "modern {modern}: {out}");
        assert_eq!(
            always.offered(),
            [["once", "task", "deny"]],
            "modern {modern}"
        );
        assert!(gateway.store().rules().unwrap().is_empty());
        client.cancel().await.unwrap();

        let task = Scripted::answering("task");
        let client = connect(&gateway, ClientSeat::PersonNotAlways, task.clone(), modern).await;
        let out = read(&client).await;
        assert_eq!(out["status"], "ok", "modern {modern}: {out}");
        assert_eq!(task.offered().len(), 1);
        assert!(gateway.store().rules().unwrap().is_empty());
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn the_persons_own_client_on_stdio_keeps_all_four_answers() {
    for modern in [false, true] {
        let gateway = gateway();
        let script = Scripted::answering("always");
        let client = connect(&gateway, ClientSeat::Person, script.clone(), modern).await;
        let out = read(&client).await;
        assert_eq!(out["status"], "ok", "modern {modern}: {out}");
        assert_eq!(script.offered(), [["once", "task", "always", "deny"]]);
        assert_eq!(gateway.store().rules().unwrap().len(), 1);
        client.cancel().await.unwrap();
    }
}
