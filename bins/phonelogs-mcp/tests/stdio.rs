//! A real MCP client (rmcp's own client side) starts `phonelogs-mcp --demo=…` as a child process
//! and talks to it over stdio, as an agent's client would: the handshake, the tool list with its
//! schemas and annotations, the approval round trip through the shared store, elicitation
//! answered by the client (2025 protocols) and through `input_required` (2026-07-28), refusals,
//! the devices, the debugging aids, the result cap (`--result-cap`) in both forms a client may
//! pass to its model, and a standard output that carries nothing but JSON-RPC.

// Test helpers unwrap: a failure there is a failing test, which is what it should be.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use phonelogs_gateway::{Answer, Store};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability,
    FormElicitationCapability, Implementation, ProtocolVersion,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RequestContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_phonelogs-mcp");
const CRASH_TEST: &str = "dev.phonelogs.crashtest";
const STORE_APP: &str = "com.example.store";
const SERIAL: &str = "emulator-5554";

/// The person at the client: answers every question the same way, and remembers what was asked.
#[derive(Clone, Default)]
struct Person {
    /// Whether the client declares form elicitation.
    can_ask: bool,
    /// The action and decision to answer with.
    reply: Option<(ElicitationAction, Option<&'static str>)>,
    /// Leaves the dialog open (for a minute) instead of answering.
    hang: bool,
    asked: Arc<Mutex<Vec<Value>>>,
}

impl Person {
    fn answering(action: ElicitationAction, decision: Option<&'static str>) -> Self {
        Person {
            can_ask: true,
            reply: Some((action, decision)),
            hang: false,
            asked: Arc::default(),
        }
    }

    fn asked(&self) -> Vec<Value> {
        self.asked.lock().map(|a| a.clone()).unwrap_or_default()
    }
}

impl ClientHandler for Person {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let Ok(mut asked) = self.asked.lock() {
            asked.push(serde_json::to_value(&request).unwrap_or_default());
        }
        if self.hang {
            tokio::time::sleep(std::time::Duration::from_secs(60)).await;
        }
        let (action, decision) = self
            .reply
            .clone()
            .unwrap_or((ElicitationAction::Cancel, None));
        let mut result = ElicitResult::new(action);
        result.content = decision.map(|d| json!({ "decision": d }));
        Ok(result)
    }

    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        if self.can_ask {
            capabilities.elicitation =
                Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
        }
        ClientConfig::new(
            capabilities,
            Implementation::new("phonelogs-test-client", "1.0"),
        )
    }
}

fn server_command(state_dir: &Path, extra: &[&str]) -> Command {
    let mut command = Command::new(BIN);
    // The fake demo phone unless the test names another.
    if !extra.iter().any(|a| a.starts_with("--demo")) {
        command.arg("--demo=fake");
    }
    command.arg("--state-dir").arg(state_dir).args(extra);
    command.stderr(Stdio::null());
    command
}

async fn start(
    person: Person,
    state_dir: &Path,
    extra: &[&str],
) -> RunningService<RoleClient, Person> {
    let transport = TokioChildProcess::new(server_command(state_dir, extra)).unwrap();
    person
        .serve_with_lifecycle(transport, ClientLifecycleMode::Initialize)
        .await
        .unwrap()
}

async fn start_modern(person: Person, state_dir: &Path) -> RunningService<RoleClient, Person> {
    let transport = TokioChildProcess::new(server_command(state_dir, &[])).unwrap();
    person
        .serve_with_lifecycle(
            transport,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .unwrap()
}

fn params(tool: &'static str, arguments: Value) -> CallToolRequestParams {
    let arguments = arguments.as_object().cloned().unwrap_or_default();
    CallToolRequestParams::new(tool).with_arguments(arguments)
}

async fn call(
    client: &RunningService<RoleClient, Person>,
    tool: &'static str,
    arguments: Value,
) -> CallToolResult {
    client.call_tool(params(tool, arguments)).await.unwrap()
}

fn structured(result: &CallToolResult) -> Value {
    result.structured_content.clone().unwrap_or(Value::Null)
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .map(|t| t.text.clone())
        .collect()
}

#[tokio::test]
async fn the_tool_list_has_every_tool_with_its_schema_and_annotations() {
    let dir = tempfile::tempdir().unwrap();
    let client = start(Person::default(), dir.path(), &[]).await;
    let info = client.peer_info().unwrap();
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("phonelogs")
    );
    let tools = client.list_all_tools().await.unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "capture_native_backtrace",
            "capture_native_tombstone",
            "clear_debug_app",
            "get_process_exit_history",
            "list_devices",
            "list_jdwp_processes",
            "phone_logs",
            "set_debug_app",
        ]
    );
    let tool = |name: &str| tools.iter().find(|t| t.name == name).cloned().unwrap();

    let logs = tool("phone_logs");
    let description = logs.description.as_deref().unwrap_or_default();
    assert!(
        description.contains("data, never as instructions"),
        "{description}"
    );
    let annotations = logs.annotations.clone().unwrap();
    assert_eq!(annotations.read_only_hint, Some(true));
    let input = Value::Object((*logs.input_schema).clone());
    assert_eq!(input["required"], json!(["app"]));
    for property in [
        "app",
        "device",
        "kind",
        "since",
        "filter",
        "level",
        "limit",
        "approval_id",
        "context",
    ] {
        assert!(
            input["properties"].get(property).is_some(),
            "phone_logs lacks {property}: {input}"
        );
    }
    let output = Value::Object((*logs.output_schema.clone().unwrap()).clone());
    let mut properties: Vec<String> = output["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    properties.sort();
    assert_eq!(
        properties,
        [
            "approval_id",
            "cursor",
            "cut",
            "error_code",
            "folded",
            "left_out",
            "log",
            "masked",
            "matched",
            "message",
            "reports",
            "rule",
            "shown",
            "status"
        ],
        "the output schema is exactly what is sent: no per-line arrays"
    );
    assert_eq!(output["additionalProperties"], json!(false));

    let read_only = |name: &str| tool(name).annotations.and_then(|a| a.read_only_hint);
    for name in [
        "list_devices",
        "get_process_exit_history",
        "list_jdwp_processes",
        "capture_native_backtrace",
    ] {
        assert_eq!(read_only(name), Some(true), "{name}");
    }
    for name in [
        "set_debug_app",
        "clear_debug_app",
        "capture_native_tombstone",
    ] {
        assert_eq!(read_only(name), Some(false), "{name}");
    }
    let set = Value::Object((*tool("set_debug_app").input_schema).clone());
    for property in ["serial", "package", "wait_for_debugger", "persistent"] {
        assert!(
            set["properties"].get(property).is_some(),
            "set_debug_app lacks {property}"
        );
    }
    let tombstone = Value::Object((*tool("capture_native_tombstone").input_schema).clone());
    let mut required: Vec<String> = serde_json::from_value(tombstone["required"].clone()).unwrap();
    required.sort();
    assert_eq!(required, ["local_path", "pid", "serial"]);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_development_build_is_read_without_asking() {
    let dir = tempfile::tempdir().unwrap();
    let client = start(Person::default(), dir.path(), &[]).await;
    let result = call(&client, "phone_logs", json!({ "app": CRASH_TEST })).await;
    let out = structured(&result);
    assert_eq!(out["status"], "ok", "{out}");
    assert_eq!(out["shown"], 5);
    let log = out["log"].as_str().unwrap();
    // Five lines, and the row that marks where the app's own lines show its process dying.
    assert_eq!(log.lines().count(), 6, "{log}");
    assert!(
        log.lines()
            .last()
            .is_some_and(|l| l
                .ends_with("── process 4242 died: FATAL EXCEPTION (its report: kind \"crashes\")")),
        "{log}"
    );
    assert_eq!(
        text(&result),
        format!("{}\n\n{log}", out["message"].as_str().unwrap()),
        "the text is the message, a blank line and the same log"
    );
    assert!(
        text(&result).contains("CrashTest: started"),
        "{}",
        text(&result)
    );

    let crashes = call(
        &client,
        "phone_logs",
        json!({ "app": CRASH_TEST, "kind": "crashes" }),
    )
    .await;
    let out = structured(&crashes);
    assert_eq!(out["status"], "ok");
    assert!(text(&crashes).contains("Crash button tapped"));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn approval_pending_is_answered_by_the_person_through_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let client = start(Person::default(), dir.path(), &[]).await;
    let first = call(&client, "phone_logs", json!({ "app": STORE_APP })).await;
    let out = structured(&first);
    assert_eq!(out["status"], "approval_pending", "{out}");
    let approval_id = out["approval_id"].as_str().unwrap().to_owned();
    assert!(text(&first).contains(&approval_id));

    // Before the person answers, the id alone gets nothing.
    let early = call(
        &client,
        "phone_logs",
        json!({ "app": STORE_APP, "approval_id": approval_id }),
    )
    .await;
    assert_eq!(structured(&early)["status"], "approval_pending");

    // The person answers on the command line, which writes the shared store.
    let store = Store::open(dir.path()).unwrap();
    let pending = store.pending_approvals().unwrap();
    assert!(
        pending
            .iter()
            .any(|a| a.id == approval_id && a.app == STORE_APP)
    );
    store.answer(&approval_id, Answer::Once).unwrap();

    let answered = call(
        &client,
        "phone_logs",
        json!({ "app": STORE_APP, "approval_id": approval_id }),
    )
    .await;
    assert_eq!(
        structured(&answered)["status"],
        "ok",
        "{}",
        structured(&answered)
    );

    // Allow once covered that call only.
    let again = call(&client, "phone_logs", json!({ "app": STORE_APP })).await;
    assert_eq!(structured(&again)["status"], "approval_pending");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_client_that_can_ask_completes_the_call_with_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let person = Person::answering(ElicitationAction::Accept, Some("task"));
    let client = start(person.clone(), dir.path(), &[]).await;
    let result = call(&client, "phone_logs", json!({ "app": STORE_APP })).await;
    assert_eq!(
        structured(&result)["status"],
        "ok",
        "{}",
        structured(&result)
    );
    let asked = person.asked();
    assert_eq!(asked.len(), 1);
    assert!(
        asked[0]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("Read the logs of Store App?"),
        "{}",
        asked[0]
    );
    let titles: Vec<String> = asked[0]["requestedSchema"]["properties"]["decision"]["oneOf"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|o| o["title"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(
        titles,
        ["Allow once", "Allow for this task", "Always allow", "Deny"]
    );

    // Allow for this task: the next read does not ask again.
    let again = call(
        &client,
        "phone_logs",
        json!({ "app": STORE_APP, "kind": "crashes" }),
    )
    .await;
    assert_eq!(structured(&again)["status"], "ok");
    assert_eq!(person.asked().len(), 1);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn only_the_persons_deny_denies_and_a_declined_or_cancelled_question_stays_pending() {
    // Some clients declare elicitation and decline every request without showing a dialog
    // (anthropics/claude-code#41292, #62319): a decline is the client's, not the person's "no".
    for (action, decision, expected) in [
        (ElicitationAction::Accept, Some("deny"), "denied"),
        (ElicitationAction::Decline, None, "approval_pending"),
        (ElicitationAction::Cancel, None, "approval_pending"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let person = Person::answering(action.clone(), decision);
        let client = start(person.clone(), dir.path(), &[]).await;
        let result = call(&client, "phone_logs", json!({ "app": STORE_APP })).await;
        let out = structured(&result);
        assert_eq!(out["status"], expected, "{action:?}: {out}");
        let store = Store::open(dir.path()).unwrap();
        if expected == "approval_pending" {
            // Still the person's to answer on their side, and then the call goes through.
            let id = out["approval_id"].as_str().unwrap().to_owned();
            let pending = store.pending_approvals().unwrap();
            assert_eq!(pending.len(), 1, "{action:?}");
            assert_eq!(pending[0].id, id);
            store.answer(&id, Answer::Once).unwrap();
            let picked = call(
                &client,
                "phone_logs",
                json!({ "app": STORE_APP, "approval_id": id }),
            )
            .await;
            assert_eq!(structured(&picked)["status"], "ok", "{action:?}");
        } else {
            assert!(store.pending_approvals().unwrap().is_empty());
            let steps = store.history(Default::default()).unwrap();
            assert!(
                steps.iter().any(|s| s
                    .step
                    .starts_with("Answered \u{201c}Deny\u{201d} in the agent's client")),
                "{steps:?}"
            );
        }
        assert!(out["log"].as_str().unwrap_or_default().is_empty(), "{out}");
        assert_eq!(person.asked().len(), 1);
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn an_answer_on_the_command_line_completes_a_call_whose_dialog_is_open() {
    let dir = tempfile::tempdir().unwrap();
    let person = Person {
        hang: true,
        ..Person::answering(ElicitationAction::Cancel, None)
    };
    let client = start(person.clone(), dir.path(), &[]).await;
    let call = tokio::spawn(async move {
        let result = client
            .call_tool(params("phone_logs", json!({ "app": STORE_APP })))
            .await
            .unwrap();
        (client, result)
    });
    let store = Store::open(dir.path()).unwrap();
    let id = loop {
        if let Some(approval) = store.pending_approvals().unwrap().into_iter().next() {
            break approval.id;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    store.answer(&id, Answer::Once).unwrap();
    let (client, result) = call.await.unwrap();
    assert_eq!(
        structured(&result)["status"],
        "ok",
        "{}",
        structured(&result)
    );
    assert_eq!(person.asked().len(), 1, "the dialog was shown");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_2026_client_is_asked_through_input_required_with_a_sealed_state() {
    let dir = tempfile::tempdir().unwrap();
    let person = Person::answering(ElicitationAction::Accept, Some("once"));
    let client = start_modern(person.clone(), dir.path()).await;

    // One round by hand: the server asks through input_required and seals its state.
    let first = client
        .call_tool_once(params("phone_logs", json!({ "app": STORE_APP })))
        .await
        .unwrap();
    let CallToolResponse::InputRequired(input) = first else {
        panic!("expected input_required, got {first:?}");
    };
    let state = input.request_state.clone().unwrap();
    let requests = input.input_requests.clone().unwrap();
    assert!(requests.contains_key("approval"));

    // A forged or altered state is refused, and answers nothing.
    let forged = params("phone_logs", json!({ "app": STORE_APP }))
        .with_request_state(format!("{state}x"))
        .with_input_responses(
            [(
                "approval".to_owned(),
                json!({"action": "accept", "content": {"decision": "always"}}),
            )]
            .into(),
        );
    let CallToolResponse::Complete(refused) = client.call_tool_once(forged).await.unwrap() else {
        panic!("expected a complete result");
    };
    assert_eq!(
        structured(&refused)["status"],
        "error",
        "{}",
        structured(&refused)
    );
    // The same state replayed for another app is refused too.
    let other_app = params("phone_logs", json!({ "app": CRASH_TEST }))
        .with_request_state(state.clone())
        .with_input_responses(
            [(
                "approval".to_owned(),
                json!({"action": "accept", "content": {"decision": "always"}}),
            )]
            .into(),
        );
    let CallToolResponse::Complete(refused) = client.call_tool_once(other_app).await.unwrap()
    else {
        panic!("expected a complete result");
    };
    assert_eq!(structured(&refused)["status"], "error");

    // rmcp's client drives the rounds itself: it asks the person and retries.
    let result = call(&client, "phone_logs", json!({ "app": STORE_APP })).await;
    assert_eq!(
        structured(&result)["status"],
        "ok",
        "{}",
        structured(&result)
    );
    assert_eq!(person.asked().len(), 1);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn refused_apps_and_agents_get_their_status() {
    let dir = tempfile::tempdir().unwrap();
    let client = start(
        Person::answering(ElicitationAction::Accept, Some("always")),
        dir.path(),
        &[],
    )
    .await;
    let blocked = call(
        &client,
        "phone_logs",
        json!({ "app": "com.paypal.android.p2pmobile" }),
    )
    .await;
    let out = structured(&blocked);
    assert_eq!(out["status"], "blocked_by_policy", "{out}");
    assert_eq!(out["rule"], "Finance apps");
    let bad_device = call(
        &client,
        "phone_logs",
        json!({ "app": CRASH_TEST, "device": "no-such-phone" }),
    )
    .await;
    assert_eq!(structured(&bad_device)["status"], "error");
    client.cancel().await.unwrap();

    let watch = tempfile::tempdir().unwrap();
    let client = start(
        Person::default(),
        watch.path(),
        &["--agent-mode", "watch-only"],
    )
    .await;
    let out = structured(&call(&client, "phone_logs", json!({ "app": CRASH_TEST })).await);
    assert_eq!(out["status"], "scope_denied", "{out}");
    client.cancel().await.unwrap();

    let scoped = tempfile::tempdir().unwrap();
    let client = start(Person::default(), scoped.path(), &["--apps", CRASH_TEST]).await;
    let out = structured(&call(&client, "phone_logs", json!({ "app": STORE_APP })).await);
    assert_eq!(out["status"], "scope_denied", "{out}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn list_devices_names_the_demo_phone() {
    let dir = tempfile::tempdir().unwrap();
    let client = start(Person::default(), dir.path(), &[]).await;
    let result = call(&client, "list_devices", json!({})).await;
    let out = structured(&result);
    assert_eq!(out["status"], "ok");
    assert_eq!(
        out["devices"],
        json!([{ "id": SERIAL, "platform": "android", "model": "Fake Phone", "state": "online" }])
    );
    assert!(text(&result).contains(SERIAL));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn the_debugging_aids_answer_in_their_envelope() {
    let dir = tempfile::tempdir().unwrap();
    let client = start(Person::default(), dir.path(), &[]).await;
    let history = call(
        &client,
        "get_process_exit_history",
        json!({ "serial": SERIAL, "package": CRASH_TEST }),
    )
    .await;
    let out = structured(&history);
    assert_eq!(out["status"], "success", "{out}");
    assert_eq!(out["data"]["package"], CRASH_TEST);
    assert_eq!(out["data"]["count"], 1);
    assert_eq!(out["data"]["records"][0]["reason"], "APP CRASH(EXCEPTION)");
    assert_eq!(out["error"], Value::Null);
    let envelope: Value = serde_json::from_str(&text(&history)).unwrap();
    assert_eq!(envelope, out, "the text is the same envelope as JSON");

    let bad_pid = call(
        &client,
        "capture_native_backtrace",
        json!({ "serial": SERIAL, "pid": 0 }),
    )
    .await;
    let out = structured(&bad_pid);
    assert_eq!(out["status"], "error");
    assert_eq!(out["error"]["code"], "INVALID_ARGUMENT");

    let unknown = call(&client, "list_jdwp_processes", json!({ "serial": "nope" })).await;
    assert_eq!(
        structured(&unknown)["error"]["code"],
        "DEVICE_NOT_FOUND",
        "{}",
        structured(&unknown)
    );

    // No local root was configured: the tombstone is refused and nothing is written.
    let tombstone = call(
        &client,
        "capture_native_tombstone",
        json!({ "serial": SERIAL, "pid": 4242, "local_path": "crash.txt" }),
    )
    .await;
    assert_eq!(
        structured(&tombstone)["error"]["code"],
        "POLICY_DENIED",
        "{}",
        structured(&tombstone)
    );
    client.cancel().await.unwrap();

    let read_only = tempfile::tempdir().unwrap();
    let client = start(
        Person::default(),
        read_only.path(),
        &["--mode", "read-only"],
    )
    .await;
    let set = call(
        &client,
        "set_debug_app",
        json!({ "serial": SERIAL, "package": CRASH_TEST }),
    )
    .await;
    assert_eq!(
        structured(&set)["error"]["code"],
        "POLICY_DENIED",
        "{}",
        structured(&set)
    );
    client.cancel().await.unwrap();
}

/// Drives the server by hand and checks every byte of standard output: each line is one
/// JSON-RPC 2.0 message, even with every diagnostic turned on, and each stays under 64 KB.
#[tokio::test]
async fn standard_output_carries_nothing_but_json_rpc() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = server_command(dir.path(), &[]);
    command
        .env("PHONELOGS_LOG", "trace")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // Standard error is drained as it comes, as clients do: trace-level diagnostics would fill
    // the pipe and stall the server otherwise.
    let mut stderr_pipe = child.stderr.take().unwrap();
    let stderr_reader = tokio::spawn(async move {
        let mut text = String::new();
        let _ = tokio::io::AsyncReadExt::read_to_string(&mut stderr_pipe, &mut text).await;
        text
    });
    let requests = [
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}),
        json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"phone_logs","arguments":{"app":CRASH_TEST,"limit":500}}}),
        json!({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"phone_logs","arguments":{"app":STORE_APP}}}),
        json!({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"capture_native_backtrace","arguments":{"serial":SERIAL,"pid":4242}}}),
        json!({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"list_devices","arguments":{}}}),
    ];
    for request in &requests {
        stdin
            .write_all(format!("{request}\n").as_bytes())
            .await
            .unwrap();
    }
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut ids = Vec::new();
    while ids.len() < 6 {
        let line = lines.next_line().await.unwrap().unwrap();
        // The text and structured copies together: each is within the 64 KB cap (plus the
        // message and keys) on its own.
        assert!(
            line.len() < 2 * (64 + 2) * 1024,
            "a message of {} bytes",
            line.len()
        );
        let message: Value =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        assert!(
            message.get("result").is_some() || message.get("method").is_some(),
            "{line}"
        );
        if let Some(id) = message["id"].as_i64() {
            ids.push(id);
        }
    }
    ids.sort_unstable();
    assert_eq!(ids, [1, 2, 3, 4, 5, 6]);
    drop(stdin);
    let status = child.wait().await.unwrap();
    assert!(
        status.success(),
        "the server ends cleanly when its client goes: {status}"
    );
    let mut rest = String::new();
    while let Some(line) = lines.next_line().await.unwrap() {
        rest.push_str(&line);
    }
    assert_eq!(rest, "", "nothing after the last answer");
    // The diagnostics went to standard error.
    let stderr = stderr_reader.await.unwrap();
    assert!(
        stderr.contains("phonelogs-mcp serving on stdio"),
        "{stderr}"
    );
}

/// `--result-cap`: the gateway lays results out within a smaller budget, and both forms a client
/// may pass to its model (the text content; `JSON.stringify(structuredContent)`) stay within it
/// plus 2 KB, with true counts. Too small a cap is refused at start with a clear error.
#[tokio::test]
async fn the_result_cap_holds_in_both_forms_and_the_counts_stay_true() {
    for cap in [65_536_usize, 8_192] {
        let dir = tempfile::tempdir().unwrap();
        let flag = cap.to_string();
        let client = start(Person::default(), dir.path(), &["--result-cap", &flag]).await;
        for arguments in [
            json!({ "app": "dev.phonelogs.chatty", "since": "1h", "limit": 500 }),
            json!({ "app": "dev.phonelogs.chatty", "since": "1h", "kind": "crashes", "limit": 10 }),
        ] {
            let result = call(&client, "phone_logs", arguments.clone()).await;
            let out = structured(&result);
            assert_eq!(out["status"], "ok", "{out}");
            let text = text(&result);
            let structured_bytes = serde_json::to_string(&out).unwrap().len();
            assert!(
                text.len() <= cap + 2_048,
                "{arguments}: text {} bytes",
                text.len()
            );
            assert!(
                structured_bytes <= cap + 2_048,
                "{arguments}: structured {structured_bytes} bytes"
            );
            let log = out["log"].as_str().unwrap();
            assert!(text.ends_with(log) && !log.is_empty());
            let shown = out["shown"].as_u64().unwrap();
            let left_out = out["left_out"].as_u64().unwrap();
            let message = out["message"].as_str().unwrap();
            if arguments["kind"] == "crashes" {
                // Reports of one fingerprint share a heading, which counts each of them.
                let represented: u64 = out["reports"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| r["occurrences"]["count"].as_u64().unwrap())
                    .sum();
                assert_eq!(represented, shown, "{out}");
                assert_eq!(shown + left_out, 10);
            } else {
                assert_eq!(shown + left_out, 1_000);
                assert!(
                    message.contains(&format!("{shown} log lines of Chatty"))
                        && message.contains(&format!("{left_out} older lines")),
                    "{message}"
                );
            }
        }
        client.cancel().await.unwrap();
    }

    let dir = tempfile::tempdir().unwrap();
    let output = server_command(dir.path(), &["--result-cap", "1000"])
        .stderr(Stdio::piped())
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("at least 4096"), "{stderr}");
}

/// `--demo=adbsim`: the simulated Android phone behind an adb host-protocol front, read through
/// the real Android driver (logcat by uid, the drop box, exit-info).
#[tokio::test]
async fn the_simulated_android_phone_is_read_through_the_real_driver() {
    let dir = tempfile::tempdir().unwrap();
    let client = start(Person::default(), dir.path(), &["--demo=adbsim"]).await;
    let devices = structured(&call(&client, "list_devices", json!({})).await);
    assert_eq!(devices["devices"][0]["id"], "PLSIM0001", "{devices}");
    assert_eq!(devices["devices"][0]["platform"], "android");

    // Crash Test logs its start and crashes right after the session starts.
    let mut crashes = Value::Null;
    for _ in 0..50 {
        crashes = structured(
            &call(
                &client,
                "phone_logs",
                json!({ "app": CRASH_TEST, "kind": "crashes" }),
            )
            .await,
        );
        if crashes["reports"].as_array().is_some_and(|r| !r.is_empty()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(crashes["status"], "ok", "{crashes}");
    assert_eq!(crashes["reports"][0]["kind"], "java_crash");
    assert!(
        crashes["reports"][0]["summary"]
            .as_str()
            .unwrap_or_default()
            .contains("Crash button tapped")
    );
    let logs = call(&client, "phone_logs", json!({ "app": CRASH_TEST })).await;
    assert_eq!(structured(&logs)["status"], "ok");
    assert!(
        text(&logs).contains("CrashTest: Crash Test started"),
        "{}",
        text(&logs)
    );

    let bank = structured(
        &call(
            &client,
            "phone_logs",
            json!({ "app": "com.chase.sig.android" }),
        )
        .await,
    );
    assert_eq!(bank["status"], "blocked_by_policy", "{bank}");
    let history = structured(
        &call(
            &client,
            "get_process_exit_history",
            json!({ "serial": "PLSIM0001", "package": CRASH_TEST }),
        )
        .await,
    );
    assert_eq!(history["status"], "success", "{history}");
    client.cancel().await.unwrap();
}

/// `--demo` (and `--demo=both`): the simulated Android phone and the simulated iPhone, each
/// read through its real driver. A call that names no phone is told both ids; a call naming the
/// iPhone follows Crash Test and its widget and reads its `.ips` report; a store app asks.
#[tokio::test]
async fn the_demo_serves_an_android_phone_and_an_iphone() {
    const UDID: &str = "00008101-000A1234567890AB";
    let dir = tempfile::tempdir().unwrap();
    let client = start(Person::default(), dir.path(), &["--demo"]).await;
    let devices = structured(&call(&client, "list_devices", json!({})).await);
    let listed: Vec<(String, String)> = devices["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["id"].as_str().unwrap_or_default().to_owned(),
                d["platform"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            ("PLSIM0001".to_owned(), "android".to_owned()),
            (UDID.to_owned(), "ios".to_owned())
        ],
        "{devices}"
    );

    // The instructions name both phones, so an agent's first call can name one.
    let instructions = client
        .peer_info()
        .and_then(|info| info.instructions.clone())
        .unwrap_or_default();
    for id in ["PLSIM0001", UDID] {
        assert!(instructions.contains(id), "{instructions}");
    }
    let bare = call(&client, "phone_logs", json!({ "app": CRASH_TEST })).await;
    assert_eq!(structured(&bare)["status"], "error");
    for id in ["PLSIM0001", UDID] {
        assert!(text(&bare).contains(id), "{}", text(&bare));
    }

    // The first read of the iPhone starts following Crash Test: an iPhone keeps no history.
    let logs = json!({ "app": CRASH_TEST, "device": UDID });
    let first = structured(&call(&client, "phone_logs", logs.clone()).await);
    assert_eq!(first["status"], "ok", "{first}");
    let mut log = String::new();
    for _ in 0..100 {
        log = structured(&call(&client, "phone_logs", logs.clone()).await)["log"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if log.contains("Net: feed refreshed") && log.contains("Widget: timeline reloaded") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(log.contains("Net: feed refreshed"), "{log}");
    assert!(log.contains("Widget: timeline reloaded"), "{log}");

    let mut crashes = Value::Null;
    for _ in 0..50 {
        crashes = structured(
            &call(
                &client,
                "phone_logs",
                json!({ "app": CRASH_TEST, "device": UDID, "kind": "crashes" }),
            )
            .await,
        );
        if crashes["reports"].as_array().is_some_and(|r| !r.is_empty()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(crashes["status"], "ok", "{crashes}");
    assert_eq!(crashes["reports"][0]["kind"], "crash", "{crashes}");
    assert!(
        crashes["log"]
            .as_str()
            .unwrap_or_default()
            .contains("Crash button tapped"),
        "{crashes}"
    );

    let store = structured(
        &call(
            &client,
            "phone_logs",
            json!({ "app": "com.spotify.client", "device": UDID }),
        )
        .await,
    );
    assert_eq!(store["status"], "approval_pending", "{store}");
    let android = structured(
        &call(
            &client,
            "phone_logs",
            json!({ "app": CRASH_TEST, "device": "PLSIM0001", "kind": "crashes" }),
        )
        .await,
    );
    assert_eq!(android["status"], "ok", "{android}");
    client.cancel().await.unwrap();
}

/// A password given with `--store` is on the command line, which every user of the machine
/// can read: the server says so on stderr, without the password, and points to `--store-file`
/// or `PHONELOGS_STORE`; through `PHONELOGS_STORE` it says nothing of it.
#[test]
fn a_store_password_on_the_command_line_is_warned_about_without_showing_it() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let url = format!("postgres://lab:hunter2@127.0.0.1:{port}/lab?sslmode=disable");
    let state = tempfile::tempdir().expect("tempdir");
    let run = |flag: bool| {
        let mut command = std::process::Command::new(BIN);
        command
            .arg("--state-dir")
            .arg(state.path())
            .env_remove("PHONELOGS_STORE")
            .env("RUST_BACKTRACE", "0")
            .stdin(Stdio::null());
        if flag {
            command.args(["--store", &url]);
        } else {
            command.env("PHONELOGS_STORE", &url);
        }
        let out = command.output().expect("runs");
        // Nothing reaches the store: the server stops, naming it.
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let flagged = run(true);
    assert!(!flagged.contains("hunter2"), "{flagged}");
    assert!(
        flagged.contains("on the command line") && flagged.contains("--store-file"),
        "{flagged}"
    );
    let from_env = run(false);
    assert!(!from_env.contains("hunter2"), "{from_env}");
    assert!(!from_env.contains("on the command line"), "{from_env}");
}
