//! Two `phonelogs-mcp --http` servers on one PostgreSQL store (issue 41, item 6): an agent on
//! server A asks, the person answers "Allow for this task" with `phonelogs approvals answer`
//! pointed at the same store, and the agent's next call on A reads; an "Always allow" given the
//! same way covers a later task of that agent on server B, which never asks; `phonelogs history`
//! on the store shows both servers' steps in order. Skips (saying why) where PostgreSQL is not
//! installed, unless PHONELOGS_REQUIRE_POSTGRES=1.

#![allow(clippy::unwrap_used)]

mod http_support;

use std::path::Path;

use http_support::{Mcp, Server, start, token_file};
use phonelogs_store_pg::testing::TempPostgres;
use serde_json::json;

const AGENT: &str = "agent-0123456789abcdef0123456789";
const STORE_APP: &str = "com.example.store";

fn phonelogs(args: &[&str]) -> String {
    let bin = Path::new(http_support::BIN).with_file_name("phonelogs");
    assert!(
        bin.exists(),
        "phonelogs is built beside phonelogs-mcp (cargo test --workspace)"
    );
    let output = std::process::Command::new(bin).args(args).output().unwrap();
    assert!(output.status.success(), "phonelogs {args:?}: {output:?}");
    String::from_utf8(output.stdout).unwrap()
}

async fn serve(state: &Path, url: &str) -> Server {
    let file = token_file(state, &[(AGENT, "ci-agent")]);
    let args = [
        "--demo=fake",
        "--http",
        "127.0.0.1:0",
        "--token-file",
        file.to_str().unwrap(),
        "--store",
        url,
    ];
    start(state, &args, &[]).await
}

async fn pending_id(agent: &mut Mcp, app: &str) -> String {
    let out = agent
        .call("phone_logs", json!({ "app": app }))
        .await
        .unwrap();
    assert_eq!(out["status"], "approval_pending", "{out}");
    out["approval_id"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_share_questions_rules_and_history() {
    let Some(pg) = TempPostgres::start() else {
        return;
    };
    pg.create_database("lab");
    let url = pg.url("lab", "sslmode=disable");
    phonelogs(&["store", "migrate", "--store", &url]);
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = serve(dir_a.path(), &url).await;
    let b = serve(dir_b.path(), &url).await;

    // Asked on A, answered "Always allow" by the person on the store, read on A.
    let mut on_a = Mcp::new(a.addr, AGENT);
    on_a.initialize().await.unwrap();
    let id = pending_id(&mut on_a, STORE_APP).await;
    let listed = phonelogs(&["approvals", "list", "--store", &url]);
    assert!(listed.contains(&id), "{listed}");
    phonelogs(&["approvals", "answer", "--store", &url, &id, "always"]);
    let read = on_a
        .call("phone_logs", json!({ "app": STORE_APP, "approval_id": id }))
        .await
        .unwrap();
    assert_eq!(read["status"], "ok", "{read}");
    // A second answer, on any side, is refused: the question was answered once.
    let bin = Path::new(http_support::BIN).with_file_name("phonelogs");
    let twice = std::process::Command::new(bin)
        .args(["approvals", "answer", "--store", &url, &id, "deny"])
        .output()
        .unwrap();
    assert!(!twice.status.success(), "{twice:?}");

    // A later task of the agent on B reads without asking: the rule made on A's question.
    let mut on_b = Mcp::new(b.addr, AGENT);
    on_b.initialize().await.unwrap();
    let read = on_b
        .call("phone_logs", json!({ "app": STORE_APP }))
        .await
        .unwrap();
    assert_eq!(
        read["status"], "ok",
        "the rule made through A's question did not cover B: {read}"
    );

    // One history, both servers' steps, in order.
    let history = phonelogs(&["history", "--store", &url, "--json"]);
    let steps: Vec<serde_json::Value> = serde_json::from_str(&history).unwrap();
    let tasks: std::collections::BTreeSet<&str> = steps
        .iter()
        .filter_map(|s| s["task_id"].as_str())
        .filter(|t| !t.is_empty())
        .collect();
    assert!(tasks.len() >= 2, "one task per server: {history}");
    let ids: Vec<i64> = steps.iter().filter_map(|s| s["id"].as_i64()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "out of order: {ids:?}");
    let words: Vec<&str> = steps.iter().filter_map(|s| s["step"].as_str()).collect();
    let answered = words.iter().position(|s| s.contains("Always allow"));
    assert!(
        answered.is_some_and(|at| at > 0 && at + 1 < words.len()),
        "asked, answered, read: {words:#?}"
    );
    drop((a, b));
}
