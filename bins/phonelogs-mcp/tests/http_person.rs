//! Over Streamable HTTP the agent's own client never answers the person's question (issue 28,
//! item 1): a real HTTP client session that answers every `elicitation/create` with "Always
//! allow" is never asked, no rule is written, and the call stays `approval_pending` until the
//! person answers with `phonelogs approvals answer`. A token the token file marks `person` (a
//! person sits at that client) is asked in its client's dialog, without "Always allow", and an
//! "always" its client sends anyway is not taken.

#![allow(clippy::unwrap_used)]

mod http_support;

use std::path::Path;

use http_support::{Mcp, Server, start_with_tokens};
use phonelogs_gateway::{Answer, Store};
use serde_json::{Value, json};

const AGENT: &str = "agent-0123456789abcdef0123456789";
const PERSON: &str = "person-fedcba9876543210fedcba987";
const STORE_APP: &str = "com.example.store";

async fn serve(state: &Path, lines: &[(&str, &str)]) -> Server {
    start_with_tokens(state, lines, &[]).await
}

/// A client whose every dialog is answered `decision`, as a script answering for the agent
/// would answer it.
fn answering(decision: &'static str) -> impl Fn(&Value) -> Value {
    move |_| json!({ "action": "accept", "content": { "decision": decision } })
}

/// The person answers on their side: `phonelogs approvals answer ID ANSWER` when the
/// `phonelogs` binary is built beside this one (it is under `cargo test --workspace`), else the
/// store call that command makes.
fn person_answers(state: &Path, id: &str, answer: Answer) {
    let phonelogs = Path::new(http_support::BIN).with_file_name("phonelogs");
    if phonelogs.exists() {
        let output = std::process::Command::new(&phonelogs)
            .args(["approvals", "answer", "--state-dir"])
            .arg(state)
            .args([id, answer.as_str()])
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
    } else {
        eprintln!("phonelogs is not built beside phonelogs-mcp: answering through the store");
        Store::open(state).unwrap().answer(id, answer).unwrap();
    }
}

fn history_steps(state: &Path) -> Vec<String> {
    let store = Store::open(state).unwrap();
    let steps = store.history(Default::default()).unwrap();
    steps.into_iter().map(|s| s.step).collect()
}

#[tokio::test]
async fn the_agents_own_client_is_never_asked_and_its_always_is_never_taken() {
    let state = tempfile::tempdir().unwrap();
    let server = serve(state.path(), &[(AGENT, "ci-agent")]).await;
    let mut agent = Mcp::new(server.addr, AGENT).with_elicitation();
    agent.initialize().await.unwrap();
    let always = answering("always");

    let (out, asked) = agent
        .call_answering("phone_logs", json!({ "app": STORE_APP }), &always)
        .await
        .unwrap();
    assert_eq!(out["status"], "approval_pending", "{out}");
    assert!(asked.is_empty(), "the agent's client was asked: {asked:?}");
    let id = out["approval_id"].as_str().unwrap().to_owned();
    let store = Store::open(state.path()).unwrap();
    assert!(store.rules().unwrap().is_empty(), "{:?}", store.rules());
    // Retried with the id, it stays pending, whatever the client would say.
    let retry = json!({ "app": STORE_APP, "approval_id": id });
    let (again, asked) = agent
        .call_answering("phone_logs", retry.clone(), &always)
        .await
        .unwrap();
    assert_eq!(again["status"], "approval_pending", "{again}");
    assert!(asked.is_empty(), "{asked:?}");
    // A debugging aid's question goes the same way.
    let (aid, asked) = agent
        .call_answering(
            "get_process_exit_history",
            json!({ "serial": "emulator-5554", "package": STORE_APP }),
            &always,
        )
        .await
        .unwrap();
    assert_eq!(aid["status"], "approval_pending", "{aid}");
    assert!(asked.is_empty(), "{asked:?}");
    assert_eq!(store.pending_approvals().unwrap().len(), 2);

    // The person answers on their side; the retry then reads, and no rule was ever written.
    person_answers(state.path(), &id, Answer::Once);
    let (done, asked) = agent
        .call_answering("phone_logs", retry, &always)
        .await
        .unwrap();
    assert_eq!(done["status"], "ok", "{done}");
    assert!(asked.is_empty(), "{asked:?}");
    assert!(store.rules().unwrap().is_empty());
    let steps = history_steps(state.path());
    assert!(
        steps
            .iter()
            .any(|s| s.starts_with("Answered \u{201c}Allow once\u{201d} on the person's side")),
        "{steps:#?}"
    );
    assert!(
        !steps.iter().any(|s| s.contains("in the agent's client")),
        "{steps:#?}"
    );
}

#[tokio::test]
async fn a_client_marked_as_the_persons_is_asked_without_always_allow() {
    let state = tempfile::tempdir().unwrap();
    let server = serve(state.path(), &[(PERSON, "alice person"), (AGENT, "alice")]).await;
    let mut person = Mcp::new(server.addr, PERSON).with_elicitation();
    person.initialize().await.unwrap();

    // Its dialog is shown, with three answers; an "always" sent anyway is not taken.
    let (out, asked) = person
        .call_answering(
            "phone_logs",
            json!({ "app": STORE_APP }),
            answering("always"),
        )
        .await
        .unwrap();
    assert_eq!(out["status"], "approval_pending", "{out}");
    assert_eq!(asked.len(), 1, "{asked:?}");
    let options = asked[0]["params"]["requestedSchema"]["properties"]["decision"]["oneOf"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let values: Vec<&str> = options.iter().filter_map(|o| o["const"].as_str()).collect();
    assert_eq!(values, ["once", "task", "deny"], "{}", asked[0]);
    let store = Store::open(state.path()).unwrap();
    assert!(store.rules().unwrap().is_empty());
    assert_eq!(store.pending_approvals().unwrap().len(), 1);

    // "Allow for this task" in that dialog is the person's answer.
    let (out, asked) = person
        .call_answering("phone_logs", json!({ "app": STORE_APP }), answering("task"))
        .await
        .unwrap();
    assert_eq!(out["status"], "ok", "{out}");
    assert_eq!(asked.len(), 1);
    assert!(store.rules().unwrap().is_empty());
    assert!(history_steps(state.path()).iter().any(|s| {
        s.starts_with("Answered \u{201c}Allow for this task\u{201d} in the agent's client")
    }),);

    // The same agent's unmarked token is the agent's own client: never asked, and the
    // marked token's session is not its own.
    let mut agent = Mcp::new(server.addr, AGENT).with_elicitation();
    agent.session = person.session.clone();
    let err = agent
        .call_answering(
            "phone_logs",
            json!({ "app": "com.example.other" }),
            answering("always"),
        )
        .await
        .unwrap_err();
    assert!(err.contains("404"), "{err}");
}
