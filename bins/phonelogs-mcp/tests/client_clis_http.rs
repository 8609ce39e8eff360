//! The MCP clients' own command lines over HTTP: the real Claude Code and Gemini CLI (npm,
//! offline, each with a HOME of its own) check `phonelogs-mcp --http` with their `mcp list`
//! health check, through a loopback recorder of every byte they send:
//! - Claude Code speaks the 2026-07-28 wire: `server/discover`, then `tools/list`, with no
//!   `initialize` and no session id;
//! - Gemini CLI the session wire: `initialize` (its SDK's protocol 2025-06-18), then the session
//!   id the server gave;
//! - with a token the server does not know, neither connects.
//!
//! The CLIs are found the shared way (`bins/phonelogs/tests/support/client_clis.rs`): skipped
//! with the reason printed where missing, a failure under `PHONELOGS_REQUIRE_CLIENT_CLIS=1` (CI).

// Test helpers unwrap: a failure there is a failing test, which is what it should be.
#![allow(clippy::unwrap_used)]

#[path = "../../phonelogs/tests/support/client_clis.rs"]
mod client_clis;
mod http_support;

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use client_clis::{client_cli, client_command, run_with_limit};
use http_support::start_with_tokens;

const TOKEN: &str = "cli-0123456789abcdef0123456789ab";
const WRONG: &str = "cli-wrong-0123456789abcdef012345";

/// A loopback proxy in front of `target` that keeps every byte the clients send.
fn recorder(target: SocketAddr) -> (SocketAddr, Arc<Mutex<Vec<u8>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let sent = Arc::new(Mutex::new(Vec::new()));
    let kept = sent.clone();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(server) = TcpStream::connect(target) else {
                continue;
            };
            let (client_in, server_out) =
                (client.try_clone().unwrap(), server.try_clone().unwrap());
            let kept = kept.clone();
            std::thread::spawn(move || copy(client_in, server_out, Some(kept)));
            std::thread::spawn(move || copy(server, client, None));
        }
    });
    (addr, sent)
}

fn copy(mut from: TcpStream, mut to: TcpStream, keep: Option<Arc<Mutex<Vec<u8>>>>) {
    let mut buf = [0u8; 16 * 1024];
    while let Ok(n) = from.read(&mut buf) {
        if n == 0 {
            break;
        }
        if let Some(keep) = &keep {
            keep.lock().unwrap().extend_from_slice(&buf[..n]);
        }
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

/// A HOME and a project folder for one client.
fn sides(work: &Path, client: &str) -> (PathBuf, PathBuf) {
    let (home, project) = (
        work.join(client).join("home"),
        work.join(client).join("project"),
    );
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    (home, project)
}

fn run(program: &Path, home: &Path, dir: &Path, args: &[&str]) -> String {
    let mut command = client_command(program, home, dir);
    command.args(args);
    let output = run_with_limit(command, Duration::from_secs(120));
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The line `mcp list` prints for our server.
fn our_line(listed: &str) -> String {
    listed
        .lines()
        .find(|l| l.contains("phonelogs:"))
        .unwrap_or_else(|| panic!("mcp list does not list phonelogs:\n{listed}"))
        .to_owned()
}

/// `claude mcp list` for an HTTP server at `url` with `token`.
fn claude_lists(claude: &Path, work: &Path, url: &str, token: &str) -> String {
    let (home, project) = sides(work, &format!("claude-{token}"));
    let header = format!("Authorization: Bearer {token}");
    let added = run(
        claude,
        &home,
        &project,
        &[
            "mcp",
            "add",
            "--transport",
            "http",
            "phonelogs",
            url,
            "--header",
            &header,
        ],
    );
    assert!(added.contains("phonelogs"), "claude mcp add: {added}");
    our_line(&run(claude, &home, &project, &["mcp", "list"]))
}

/// `gemini mcp list` for an HTTP server at `url` with `token` (its settings as its docs write
/// them: `httpUrl` and `headers`; it starts servers only in a folder the person trusts).
fn gemini_lists(gemini: &Path, work: &Path, url: &str, token: &str) -> String {
    let (home, project) = sides(work, &format!("gemini-{token}"));
    std::fs::create_dir_all(home.join(".gemini")).unwrap();
    let settings = serde_json::json!({ "mcpServers": { "phonelogs": {
        "httpUrl": url, "headers": { "Authorization": format!("Bearer {token}") } } } });
    std::fs::write(home.join(".gemini/settings.json"), settings.to_string()).unwrap();
    let trusted = serde_json::json!({ project.to_string_lossy(): "TRUST_FOLDER" });
    std::fs::write(
        home.join(".gemini/trustedFolders.json"),
        trusted.to_string(),
    )
    .unwrap();
    our_line(&run(gemini, &home, &project, &["mcp", "list"]))
}

#[tokio::test(flavor = "multi_thread")]
async fn claude_code_and_gemini_cli_connect_over_http_each_on_its_own_wire() {
    let (Some(claude), Some(gemini)) = (client_cli("claude"), client_cli("gemini")) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let state = work.path().join("state");
    std::fs::create_dir(&state).unwrap();
    let server = start_with_tokens(&state, &[(TOKEN, "cli-agent")], &[]).await;
    let (claude_at, claude_sent) = recorder(server.addr);
    let (gemini_at, gemini_sent) = recorder(server.addr);
    let root = work.path().to_owned();
    let text =
        |sent: &Arc<Mutex<Vec<u8>>>| String::from_utf8_lossy(&sent.lock().unwrap()).into_owned();

    let (claude_url, gemini_url) = (
        format!("http://{claude_at}/mcp"),
        format!("http://{gemini_at}/mcp"),
    );
    let (c, g, w) = (claude.clone(), gemini.clone(), root.clone());
    let (claude_line, gemini_line) = tokio::task::spawn_blocking(move || {
        (
            claude_lists(&c, &w, &claude_url, TOKEN),
            gemini_lists(&g, &w, &gemini_url, TOKEN),
        )
    })
    .await
    .unwrap();

    assert!(claude_line.contains("✔ Connected"), "{claude_line}");
    let sent = text(&claude_sent);
    assert!(sent.contains(r#""method":"server/discover""#), "{sent}");
    assert!(sent.contains(r#""method":"tools/list""#), "{sent}");
    assert!(sent.contains("2026-07-28"), "{sent}");
    assert!(!sent.contains(r#""method":"initialize""#), "{sent}");
    assert!(
        !sent.to_ascii_lowercase().contains("mcp-session-id"),
        "{sent}"
    );

    assert!(
        gemini_line.contains("Connected") && !gemini_line.contains("Disconnected"),
        "{gemini_line}"
    );
    let sent = text(&gemini_sent);
    assert!(sent.contains(r#""method":"initialize""#), "{sent}");
    assert!(
        sent.to_ascii_lowercase().contains("mcp-session-id"),
        "{sent}"
    );

    // A token the server does not hold: neither connects.
    let (claude_url, gemini_url) = (
        format!("http://{}/mcp", server.addr),
        format!("http://{}/mcp", server.addr),
    );
    let (claude_line, gemini_line) = tokio::task::spawn_blocking(move || {
        (
            claude_lists(&claude, &root, &claude_url, WRONG),
            gemini_lists(&gemini, &root, &gemini_url, WRONG),
        )
    })
    .await
    .unwrap();
    assert!(
        !claude_line.contains("✔ Connected") && claude_line.contains("401"),
        "{claude_line}"
    );
    assert!(gemini_line.contains("Disconnected"), "{gemini_line}");
}
