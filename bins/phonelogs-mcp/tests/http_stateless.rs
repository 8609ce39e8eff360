//! MCP 2026-07-28 over HTTP (issue 39, items 1 and 2): requests carrying the revision's `_meta`
//! are served without a session, on the same endpoint as the 2025-11-25 sessions, behind the
//! same bearer tokens and `Origin` checks. The wire is checked raw: no `initialize` is sent, and
//! no `Mcp-Session-Id` comes back. A task on this wire is the token's: an approval answered
//! "Allow for this task" covers the token's later requests, while another token's requests
//! are another task that asks again and cannot pick up the first token's approval.

#![allow(clippy::unwrap_used)]

mod http_support;

use std::net::SocketAddr;
use std::path::Path;

use http_support::{Mcp, Reply, Server, send, start_with_tokens};
use phonelogs_gateway::{Answer, Store};
use serde_json::{Value, json};

const FIRST: &str = "first-0123456789abcdef0123456789";
const SECOND: &str = "second-fedcba9876543210fedcba98";
const STORE_APP: &str = "com.example.store";
const REVISION: &str = "2026-07-28";

async fn serve(state: &Path) -> Server {
    start_with_tokens(state, &[(FIRST, "ci-agent"), (SECOND, "ci-agent")], &[]).await
}

/// The `_meta` every 2026-07-28 request carries.
fn meta(version: &str) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "phonelogs-test", "version": "1.0"},
    })
}

/// One stateless request: `Mcp-Method` (and `Mcp-Name` for a tool call) as the body says, unless
/// `headers` names them otherwise.
async fn post(
    addr: SocketAddr,
    token: &str,
    method: &str,
    mut params: Value,
    headers: &[(&str, &str)],
) -> Reply {
    params["_meta"] = meta(REVISION);
    let name = params["name"].as_str().map(str::to_owned);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let auth = format!("Bearer {token}");
    let mut all = vec![
        ("authorization", auth.as_str()),
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", REVISION),
        ("mcp-method", method),
    ];
    if let Some(name) = &name {
        all.push(("mcp-name", name.as_str()));
    }
    for (header, value) in headers {
        all.retain(|(h, _)| !h.eq_ignore_ascii_case(header));
        all.push((header, value));
    }
    let reply = send(
        addr,
        "POST",
        "/mcp",
        &all,
        serde_json::to_vec(&body).unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(
        reply.header("mcp-session-id"),
        None,
        "a session id came back"
    );
    reply
}

fn only(reply: &Reply) -> Value {
    let messages = reply.messages();
    assert_eq!(messages.len(), 1, "{reply:?}");
    messages[0].clone()
}

async fn read(addr: SocketAddr, token: &str, arguments: Value) -> Value {
    let params = json!({"name": "phone_logs", "arguments": arguments});
    let reply = post(addr, token, "tools/call", params, &[]).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    only(&reply)["result"]["structuredContent"].clone()
}

#[tokio::test]
async fn discover_list_and_call_are_served_without_initialize_or_a_session() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve(dir.path()).await;
    let addr = server.addr;

    let discover = only(&post(addr, FIRST, "server/discover", json!({}), &[]).await);
    let versions = discover["result"]["supportedVersions"].to_string();
    assert!(versions.contains(REVISION), "{discover}");
    assert!(versions.contains("2025-11-25"), "{discover}");
    assert!(
        discover["result"]["capabilities"]["tools"].is_object(),
        "{discover}"
    );

    let list = only(&post(addr, FIRST, "tools/list", json!({}), &[]).await);
    let tools = list["result"]["tools"].as_array().unwrap();
    assert!(tools.iter().any(|t| t["name"] == "phone_logs"), "{list}");
    assert!(list["result"]["ttlMs"].is_u64(), "caching hints: {list}");
    assert!(
        list["result"]["cacheScope"].is_string(),
        "caching hints: {list}"
    );

    let out = read(addr, FIRST, json!({"app": "dev.phonelogs.crashtest"})).await;
    assert_eq!(out["status"], "ok", "{out}");

    // The wire's own errors, as JSON-RPC errors with HTTP 400: a header that contradicts the
    // body (-32020), and a revision the server does not speak (-32022).
    let params = json!({"name": "phone_logs", "arguments": {"app": STORE_APP}});
    let mismatch = post(
        addr,
        FIRST,
        "tools/call",
        params,
        &[("mcp-name", "list_devices")],
    )
    .await;
    assert_eq!(mismatch.status, 400, "{mismatch:?}");
    assert_eq!(only(&mismatch)["error"]["code"], -32020, "{mismatch:?}");
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {"_meta": meta("2099-01-01")}});
    let auth = format!("Bearer {FIRST}");
    let reply = send(
        addr,
        "POST",
        "/mcp",
        &[
            ("authorization", auth.as_str()),
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("mcp-protocol-version", "2099-01-01"),
            ("mcp-method", "tools/list"),
        ],
        serde_json::to_vec(&body).unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(reply.status, 400, "{reply:?}");
    assert_eq!(only(&reply)["error"]["code"], -32022, "{reply:?}");

    // A method the revision removed: method not found.
    let ping = post(addr, FIRST, "ping", json!({}), &[]).await;
    assert_eq!(only(&ping)["error"]["code"], -32601, "{ping:?}");

    // The same front door as the sessions: a wrong token, a foreign Origin.
    let wrong = post(
        addr,
        "wrong-0123456789abcdef01234",
        "tools/list",
        json!({}),
        &[],
    )
    .await;
    assert_eq!(wrong.status, 401);
    let foreign = post(
        addr,
        FIRST,
        "tools/list",
        json!({}),
        &[("origin", "http://evil.example")],
    )
    .await;
    assert_eq!(foreign.status, 403, "{foreign:?}");

    // And the 2025-11-25 session on the same endpoint is as it was.
    let mut session = Mcp::new(addr, SECOND);
    session.initialize().await.unwrap();
    assert!(session.session.is_some());
    let out = session
        .call("phone_logs", json!({"app": "dev.phonelogs.crashtest"}))
        .await
        .unwrap();
    assert_eq!(out["status"], "ok", "{out}");
}

#[tokio::test]
async fn a_task_is_the_tokens_and_another_token_cannot_use_it() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve(dir.path()).await;
    let addr = server.addr;

    let first = read(addr, FIRST, json!({"app": STORE_APP})).await;
    assert_eq!(first["status"], "approval_pending", "{first}");
    let id = first["approval_id"].as_str().unwrap().to_owned();

    // Another token (of the same agent) is another task: its approval id is refused there.
    let stolen = read(addr, SECOND, json!({"app": STORE_APP, "approval_id": id})).await;
    assert_ne!(stolen["status"], "ok", "{stolen}");

    Store::open(dir.path())
        .unwrap()
        .answer(&id, Answer::Task)
        .unwrap();
    let picked = read(addr, FIRST, json!({"app": STORE_APP, "approval_id": id})).await;
    assert_eq!(picked["status"], "ok", "{picked}");

    // Allow for this task: the token's later requests read without asking, the other
    // token's task asks again.
    let again = read(addr, FIRST, json!({"app": STORE_APP, "kind": "crashes"})).await;
    assert_eq!(again["status"], "ok", "{again}");
    let other = read(addr, SECOND, json!({"app": STORE_APP})).await;
    assert_eq!(other["status"], "approval_pending", "{other}");

    // `since: "last"` follows the token's task from one request to the next.
    let all = read(addr, FIRST, json!({"app": "dev.phonelogs.crashtest"})).await;
    assert_eq!(all["status"], "ok", "{all}");
    let after = read(
        addr,
        FIRST,
        json!({"app": "dev.phonelogs.crashtest", "since": "last"}),
    )
    .await;
    assert_eq!(after["status"], "ok", "{after}");
    assert_eq!(
        after["shown"], 0,
        "nothing new since the last read: {after}"
    );
}
