//! Connection slots per token (issue 37, item 6): the server's connections are shared fairly by
//! the tokens of its token file, so one agent holding connections open (long waits, or kept-
//! alive connections) cannot take them all. With `--http-max-connections 8` and two tokens each
//! token may hold 4; a fifth connection of one token gets 503 while the other token is still
//! served, and a closed connection gives its slot back.

#![allow(clippy::unwrap_used)]

mod http_support;

use std::net::SocketAddr;

use http_support::{Reply, Sender, connect, send_on, start, token_file};
use serde_json::json;

const BUSY: &str = "busy-0123456789abcdef0123456789ab";
const OTHER: &str = "other-fedcba9876543210fedcba9876";

/// `tools/list` on the stateless wire, on `sender`'s connection.
async fn list(sender: &mut Sender, addr: SocketAddr, token: &str) -> Reply {
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let body =
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}});
    let auth = format!("Bearer {token}");
    let headers = [
        ("authorization", auth.as_str()),
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/list"),
    ];
    send_on(
        sender,
        addr,
        "POST",
        "/mcp",
        &headers,
        serde_json::to_vec(&body).unwrap(),
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn one_token_holds_at_most_its_share_of_the_connections() {
    let dir = tempfile::tempdir().unwrap();
    let file = token_file(dir.path(), &[(BUSY, "busy-agent"), (OTHER, "other-agent")]);
    let server = start(
        dir.path(),
        &[
            "--demo=fake",
            "--http",
            "127.0.0.1:0",
            "--token-file",
            file.to_str().unwrap(),
            "--http-max-connections",
            "8",
        ],
        &[],
    )
    .await;
    let addr = server.addr;

    // Four kept-alive connections of one token: its share.
    let mut held = Vec::new();
    for _ in 0..4 {
        let mut sender = connect(addr).await.unwrap();
        assert_eq!(list(&mut sender, addr, BUSY).await.status, 200);
        held.push(sender);
    }
    // A fifth is refused, and told when to come back; a request on a held one still goes.
    let mut fifth = connect(addr).await.unwrap();
    let refused = list(&mut fifth, addr, BUSY).await;
    assert_eq!(refused.status, 503, "{refused:?}");
    assert_eq!(refused.header("retry-after"), Some("5"));
    assert_eq!(list(&mut held[0], addr, BUSY).await.status, 200);

    // The other token is served meanwhile.
    let mut other = connect(addr).await.unwrap();
    assert_eq!(list(&mut other, addr, OTHER).await.status, 200);

    // A closed connection gives its slot back (once the server has seen it close).
    drop(held.pop());
    let mut back = None;
    for _ in 0..200 {
        let mut sender = connect(addr).await.unwrap();
        if list(&mut sender, addr, BUSY).await.status == 200 {
            back = Some(sender);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(
        back.is_some(),
        "the closed connection's slot never came back"
    );
}

/// The review's F5: a connection whose request names no token of the file is answered 401 and
/// closed, so connections that fail to authenticate, as many as the server has slots, hold none
/// of them past their answers: a token's agent is served after them.
#[tokio::test]
async fn a_connection_refused_for_its_token_is_closed_and_holds_no_slot() {
    let dir = tempfile::tempdir().unwrap();
    let file = token_file(dir.path(), &[(BUSY, "busy-agent")]);
    let server = start(
        dir.path(),
        &[
            "--demo=fake",
            "--http",
            "127.0.0.1:0",
            "--token-file",
            file.to_str().unwrap(),
            "--http-max-connections",
            "8",
        ],
        &[],
    )
    .await;
    let addr = server.addr;
    let mut refused = Vec::new();
    for _ in 0..8 {
        let mut sender = connect(addr).await.unwrap();
        let reply = list(&mut sender, addr, "wrong-0123456789abcdef0123456789").await;
        assert_eq!(reply.status, 401, "{reply:?}");
        assert_eq!(reply.header("connection"), Some("close"), "{reply:?}");
        // Kept by the client: only the server's close frees the slot.
        refused.push(sender);
    }
    let mut served = None;
    for _ in 0..200 {
        let Ok(mut sender) = connect(addr).await else {
            continue;
        };
        if list(&mut sender, addr, BUSY).await.status == 200 {
            served = Some(sender);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(served.is_some(), "the refused connections kept their slots");
}

/// The review's F5, the rest: connections that never send a byte, more than the server has
/// slots, do not keep a client with a token out until the header read timeout (here ten
/// minutes, past the client's one-minute wait): a full pool closes the oldest connection that has
/// named no token yet, and the new client is served.
#[tokio::test]
async fn silent_connections_filling_the_pool_make_room_for_a_client_with_a_token() {
    use tokio::io::AsyncReadExt;

    let dir = tempfile::tempdir().unwrap();
    let file = token_file(dir.path(), &[(BUSY, "busy-agent")]);
    let server = start(
        dir.path(),
        &[
            "--demo=fake",
            "--http",
            "127.0.0.1:0",
            "--token-file",
            file.to_str().unwrap(),
            "--http-max-connections",
            "8",
            "--http-read-timeout",
            "600",
        ],
        &[],
    )
    .await;
    let addr = server.addr;
    // Twelve silent connections: eight fill the pool, four more wait to be accepted.
    let mut silent = Vec::new();
    for _ in 0..12 {
        silent.push(tokio::net::TcpStream::connect(addr).await.unwrap());
    }
    let mut sender = connect(addr).await.unwrap();
    let served = list(&mut sender, addr, BUSY).await;
    assert_eq!(served.status, 200, "{served:?}");
    // The oldest silent connection was the one closed (end of stream, not a reply).
    let mut byte = [0u8; 1];
    let read = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        silent[0].read(&mut byte),
    )
    .await
    .expect("the oldest silent connection was never closed");
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
    // The client keeps its slot: the next silent connection does not take it.
    let _late = tokio::net::TcpStream::connect(addr).await.unwrap();
    assert_eq!(list(&mut sender, addr, BUSY).await.status, 200);
}
