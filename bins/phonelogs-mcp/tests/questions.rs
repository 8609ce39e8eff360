//! Who is asked, and in which mode, on stdio, through a real MCP client (rmcp's client side)
//! that starts `phonelogs-mcp --demo=fake`:
//!
//! - `--questions person` (issue 37, item 7): a client that declares form elicitation is never
//!   asked, on the 2025-11-25 wire (no `elicitation/create`) nor on 2026-07-28 (no
//!   `input_required`); the call says `approval_pending`, and the person's answer on their side
//!   lets the call through.
//! - The modes a client declares (issue 39, item 3), on both wires: `elicitation: {}` and
//!   `{form: {}}` get the form; `{url: {}}` alone, or no elicitation, never gets a form it
//!   cannot show: `approval_pending`, answered on the person's side.

// Test helpers unwrap: a failure there is a failing test, which is what it should be.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use phonelogs_gateway::{Answer, Store};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability,
    FormElicitationCapability, Implementation, ProtocolVersion, UrlElicitationCapability,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RequestContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::{Value, json};
use tokio::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_phonelogs-mcp");
const STORE_APP: &str = "com.example.store";

/// What the client declares under `elicitation`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Declares {
    Nothing,
    /// `elicitation: {}`: form only.
    Empty,
    Form,
    Url,
}

/// A client that answers every form with "Allow once" and remembers it was asked.
#[derive(Clone)]
struct Client {
    declares: Declares,
    asked: Arc<Mutex<Vec<Value>>>,
}

impl Client {
    fn new(declares: Declares) -> Self {
        Client {
            declares,
            asked: Arc::default(),
        }
    }

    fn times_asked(&self) -> usize {
        self.asked.lock().map(|a| a.len()).unwrap_or_default()
    }
}

impl ClientHandler for Client {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let Ok(mut asked) = self.asked.lock() {
            asked.push(serde_json::to_value(&request).unwrap_or_default());
        }
        let mut result = ElicitResult::new(ElicitationAction::Accept);
        result.content = Some(json!({ "decision": "once" }));
        Ok(result)
    }

    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = match self.declares {
            Declares::Nothing => None,
            Declares::Empty => Some(ElicitationCapability::new()),
            Declares::Form => {
                Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()))
            }
            Declares::Url => {
                Some(ElicitationCapability::new().with_url(UrlElicitationCapability::new()))
            }
        };
        ClientConfig::new(
            capabilities,
            Implementation::new("phonelogs-questions", "1.0"),
        )
    }
}

#[derive(Debug, Clone, Copy)]
enum Wire {
    /// 2025-11-25: `initialize`, then `elicitation/create` requests.
    Session,
    /// 2026-07-28: `server/discover`, then `input_required` results.
    Stateless,
}

async fn start(
    client: Client,
    wire: Wire,
    state_dir: &Path,
    extra: &[&str],
) -> RunningService<RoleClient, Client> {
    let mut command = Command::new(BIN);
    command
        .arg("--demo=fake")
        .arg("--state-dir")
        .arg(state_dir)
        .args(extra)
        .stderr(Stdio::null());
    let transport = TokioChildProcess::new(command).unwrap();
    let lifecycle = match wire {
        Wire::Session => ClientLifecycleMode::Initialize,
        Wire::Stateless => ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    };
    client
        .serve_with_lifecycle(transport, lifecycle)
        .await
        .unwrap()
}

fn params(arguments: Value) -> CallToolRequestParams {
    let arguments = arguments.as_object().cloned().unwrap_or_default();
    CallToolRequestParams::new("phone_logs").with_arguments(arguments)
}

fn structured(result: &CallToolResult) -> Value {
    result.structured_content.clone().unwrap_or(Value::Null)
}

/// One call, one round: on 2026-07-28 an `input_required` comes back as it is, unanswered.
async fn call_once(client: &RunningService<RoleClient, Client>, arguments: Value) -> Round {
    match client.call_tool_once(params(arguments)).await.unwrap() {
        CallToolResponse::Complete(result) => Round::Done(structured(&result)),
        CallToolResponse::InputRequired(_) => Round::InputRequired,
        other => panic!("unexpected response {other:?}"),
    }
}

#[derive(Debug)]
enum Round {
    Done(Value),
    InputRequired,
}

/// Reads the Store app (not a development build: the person is asked), expects
/// `approval_pending` with nobody asked at the client, answers on the person's side, and reads.
async fn waits_for_the_person(client: Client, wire: Wire, extra: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let running = start(client.clone(), wire, dir.path(), extra).await;
    let round = call_once(&running, json!({ "app": STORE_APP })).await;
    let Round::Done(out) = round else {
        panic!(
            "{wire:?} {:?}: the client was asked: {round:?}",
            client.declares
        );
    };
    assert_eq!(out["status"], "approval_pending", "{wire:?}: {out}");
    assert!(
        out["message"]
            .as_str()
            .unwrap_or_default()
            .contains("on their own side"),
        "the message names the person's side: {out}"
    );
    assert_eq!(
        client.times_asked(),
        0,
        "{wire:?}: elicitation/create was sent"
    );
    let id = out["approval_id"].as_str().unwrap().to_owned();
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(store.pending_approvals().unwrap().len(), 1);
    store.answer(&id, Answer::Task).unwrap();
    let round = call_once(&running, json!({ "app": STORE_APP, "approval_id": id })).await;
    let Round::Done(out) = round else {
        panic!("{wire:?}: asked after the person answered: {round:?}");
    };
    assert_eq!(out["status"], "ok", "{wire:?}: {out}");
    assert_eq!(client.times_asked(), 0);
    running.cancel().await.unwrap();
}

/// The client is shown the form (on 2025-11-25 through `elicitation/create`, on 2026-07-28 as
/// `input_required`, which rmcp's client answers and retries) and the read goes through.
async fn is_shown_the_form(client: Client, wire: Wire) {
    let dir = tempfile::tempdir().unwrap();
    let running = start(client.clone(), wire, dir.path(), &[]).await;
    let result = running.call_tool(params(json!({ "app": STORE_APP }))).await;
    let out = structured(&result.unwrap());
    assert_eq!(out["status"], "ok", "{wire:?} {:?}: {out}", client.declares);
    assert_eq!(client.times_asked(), 1, "{wire:?} {:?}", client.declares);
    let asked = client.asked.lock().unwrap()[0].clone();
    assert_eq!(asked["mode"], "form", "{asked}");
    running.cancel().await.unwrap();
}

#[tokio::test]
async fn questions_person_never_asks_a_client_that_declares_form_on_either_wire() {
    for wire in [Wire::Session, Wire::Stateless] {
        waits_for_the_person(
            Client::new(Declares::Form),
            wire,
            &["--questions", "person"],
        )
        .await;
    }
}

#[tokio::test]
async fn questions_person_from_the_config_file_never_asks_the_client() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("phonelogs.toml");
    std::fs::write(&config, "questions = \"person\"\n").unwrap();
    let config = config.to_string_lossy().into_owned();
    waits_for_the_person(
        Client::new(Declares::Empty),
        Wire::Session,
        &["--config", &config],
    )
    .await;
}

#[tokio::test]
async fn a_client_that_declares_url_only_or_nothing_gets_approval_pending_on_either_wire() {
    for wire in [Wire::Session, Wire::Stateless] {
        for declares in [Declares::Url, Declares::Nothing] {
            waits_for_the_person(Client::new(declares), wire, &[]).await;
        }
    }
}

#[tokio::test]
async fn a_client_that_declares_form_or_an_empty_elicitation_is_shown_the_form_on_either_wire() {
    for wire in [Wire::Session, Wire::Stateless] {
        for declares in [Declares::Form, Declares::Empty] {
            is_shown_the_form(Client::new(declares), wire).await;
        }
    }
}
