//! The person's page (`phonelogs ui`) on a PostgreSQL store shared by two `phonelogs-mcp --http`
//! servers (issue 41): a call on server A waits for the person (a client marked as the person's,
//! whose dialog is left unanswered); its question shows on the page run beside server B, with a
//! question asked on B; "Allow for this task" there releases A's waiting call with the logs, and
//! B's question stays. The Phones view shows the store as `phonelogs doctor` does (host, port,
//! database and schema version; when the database is down, the error naming it and the fix), and
//! no response of the page holds the connection string's user or password. Skips (saying why)
//! where PostgreSQL is not installed, unless PHONELOGS_REQUIRE_POSTGRES=1. Needs the `phonelogs`
//! binary built beside phonelogs-mcp (`cargo build -p phonelogs`, or `cargo test --workspace`).

#![allow(clippy::unwrap_used)]

mod http_support;

use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use http_support::{Mcp, Reply, Server, send, start, token_file};
use hyper::body::{Bytes, Incoming};
use phonelogs_store_pg::testing::TempPostgres;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

const PERSON: &str = "person-fedcba9876543210fedcba987";
const AGENT: &str = "agent-0123456789abcdef0123456789";
const STORE_APP: &str = "com.example.store";
/// The connection string's user and password: neither may reach the page.
const USER: &str = "labkeeper";
const PASSWORD: &str = "hunter2-page";
/// How long the page and the servers have for what each step waits on.
const WAIT: Duration = Duration::from_secs(30);

fn phonelogs_bin() -> std::path::PathBuf {
    let bin = Path::new(http_support::BIN).with_file_name("phonelogs");
    assert!(
        bin.exists(),
        "phonelogs is built beside phonelogs-mcp (cargo build -p phonelogs, or cargo test --workspace)"
    );
    bin
}

async fn serve(state: &Path, url: &str, token: (&str, &str)) -> Server {
    let file = token_file(state, &[token]);
    let args = [
        "--demo=fake",
        "--http",
        "127.0.0.1:0",
        "--token-file",
        file.to_str().unwrap(),
    ];
    start(state, &args, &[("PHONELOGS_STORE", url)]).await
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// `phonelogs ui` on the shared store, given as a store file (a secret file, 0600), with no adb
/// and no usbmuxd reachable; every response it gives is checked for the user and password.
struct Page {
    _child: tokio::process::Child,
    addr: SocketAddr,
    token: String,
}

async fn start_page(state: &Path, url: &str) -> Page {
    use std::os::unix::fs::PermissionsExt as _;
    let file = state.join("store-url");
    std::fs::write(&file, url).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let empty_path = state.join("empty-path");
    std::fs::create_dir(&empty_path).unwrap();
    let mut child = tokio::process::Command::new(phonelogs_bin())
        .args(["ui", "--port", "0", "--state-dir"])
        .arg(state)
        .arg("--store-file")
        .arg(&file)
        .env("PATH", &empty_path)
        .env("ANDROID_ADB_SERVER_PORT", free_port().to_string())
        .env(
            "USBMUXD_SOCKET_ADDRESS",
            format!("127.0.0.1:{}", free_port()),
        )
        .env_remove("ADB_SERVER_SOCKET")
        .env_remove("PHONELOGS_STORE")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut first = String::new();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    tokio::time::timeout(WAIT, stdout.read_line(&mut first))
        .await
        .expect("the page prints its address")
        .unwrap();
    let rest = first
        .trim()
        .strip_prefix("http://")
        .unwrap_or_else(|| panic!("the first line is not the page's address: {first:?}"));
    let (addr, token) = rest.trim_end_matches('/').split_once('/').unwrap();
    Page {
        _child: child,
        addr: addr.parse().unwrap(),
        token: token.to_owned(),
    }
}

impl Page {
    fn checked(reply: Reply) -> Reply {
        let mut all = String::from_utf8_lossy(&reply.body).into_owned();
        for (name, value) in &reply.headers {
            all.push_str(&format!("\n{name}: {}", value.to_str().unwrap_or("")));
        }
        for secret in [PASSWORD, USER] {
            assert!(!all.contains(secret), "the page shows {secret:?}: {all}");
        }
        reply
    }

    /// GET of one of the page's views; its HTML.
    async fn get(&self, view: &str) -> String {
        let path = format!("/{}/{view}", self.token);
        let reply = Page::checked(
            send(self.addr, "GET", &path, &[], Vec::new())
                .await
                .unwrap(),
        );
        let body = String::from_utf8_lossy(&reply.body).into_owned();
        assert_eq!(reply.status, 200, "GET {view}: {body}");
        body
    }

    /// The page's own form post: `answer` to question `id`, as its button sends it.
    async fn answer(&self, id: &str, answer: &str) -> Reply {
        let csrf = hidden_values(&self.get("").await, "csrf")
            .into_iter()
            .next()
            .expect("the page's form carries its CSRF token");
        let origin = format!("http://{}", self.addr);
        let headers = [
            ("origin", origin.as_str()),
            ("content-type", "application/x-www-form-urlencoded"),
        ];
        let body = format!("csrf={csrf}&id={id}&answer={answer}");
        let path = format!("/{}/answer", self.token);
        Page::checked(
            send(self.addr, "POST", &path, &headers, body.into_bytes())
                .await
                .unwrap(),
        )
    }

    /// The questions the page lists, once it lists `count` of them.
    async fn questions(&self, count: usize) -> Vec<String> {
        let deadline = Instant::now() + WAIT;
        loop {
            let page = self.get("").await;
            let ids = hidden_values(&page, "id");
            if ids.len() == count {
                return ids;
            }
            assert!(
                Instant::now() < deadline,
                "the page never listed {count} questions: {page}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// The values of the page's hidden inputs named `name`, in order.
fn hidden_values(html: &str, name: &str) -> Vec<String> {
    let marker = format!("<input type=\"hidden\" name=\"{name}\" value=\"");
    html.split(&marker)
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .map(str::to_owned)
        .collect()
}

/// A tool call whose answer streams back: the messages as the server sends them, none answered.
struct Streamed {
    body: Incoming,
    buffer: String,
}

async fn call_streamed(mcp: &Mcp, id: u64, tool: &str, arguments: Value) -> Streamed {
    let call = json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                       "params": { "name": tool, "arguments": arguments } });
    let request = hyper::Request::builder()
        .method("POST")
        .uri("/mcp")
        .header("host", mcp.addr.to_string())
        .header("authorization", format!("Bearer {}", mcp.token))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", http_support::PROTOCOL)
        .header("mcp-session-id", mcp.session.clone().unwrap())
        .body(Full::new(Bytes::from(serde_json::to_vec(&call).unwrap())))
        .unwrap();
    let mut sender = http_support::connect(mcp.addr).await.unwrap();
    let response = sender.send_request(request).await.unwrap();
    assert_eq!(response.status(), 200);
    Streamed {
        body: response.into_body(),
        buffer: String::new(),
    }
}

impl Streamed {
    /// The next JSON-RPC message on the stream, within `WAIT` (keep-alive comments do not
    /// extend it).
    async fn next(&mut self) -> Value {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let event: String = self.buffer.drain(..end + 2).collect();
                let message = event
                    .lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .find_map(|data| serde_json::from_str::<Value>(data.trim()).ok());
                if let Some(message) = message {
                    return message;
                }
                continue;
            }
            let frame = tokio::time::timeout_at(deadline, self.body.frame())
                .await
                .expect("the call's stream said nothing within its wait")
                .expect("the call's stream ended")
                .unwrap();
            if let Ok(data) = frame.into_data() {
                let text = String::from_utf8_lossy(&data).replace("\r\n", "\n");
                self.buffer.push_str(&text);
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_beside_one_server_answers_a_question_asked_on_another() {
    let Some(pg) = TempPostgres::start() else {
        return;
    };
    pg.psql(
        "postgres",
        &format!("CREATE ROLE {USER} LOGIN SUPERUSER PASSWORD '{PASSWORD}'"),
    );
    pg.create_database("lab");
    let url = format!(
        "postgres://{USER}:{PASSWORD}@127.0.0.1:{}/lab?sslmode=disable",
        pg.port
    );
    let name = format!("PostgreSQL 127.0.0.1:{}/lab", pg.port);
    let migrated = std::process::Command::new(phonelogs_bin())
        .args(["store", "migrate"])
        .env("PHONELOGS_STORE", &url)
        .output()
        .unwrap();
    assert!(migrated.status.success(), "{migrated:?}");
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = serve(dir_a.path(), &url, (PERSON, "alice person")).await;
    let b = serve(dir_b.path(), &url, (AGENT, "ci-agent")).await;
    let page = start_page(dir_b.path(), &url).await;

    // On A, a call that waits: the person's client is asked, and its dialog stays unanswered.
    let mut on_a = Mcp::new(a.addr, PERSON).with_elicitation();
    on_a.initialize().await.unwrap();
    let mut waiting = call_streamed(&on_a, 7, "phone_logs", json!({ "app": STORE_APP })).await;
    loop {
        let message = waiting.next().await;
        assert_ne!(
            message["id"], 7,
            "the call ended without waiting: {message}"
        );
        if message["method"] == "elicitation/create" {
            break;
        }
    }
    // On B, a question left pending.
    let mut on_b = Mcp::new(b.addr, AGENT);
    on_b.initialize().await.unwrap();
    let pending = on_b
        .call("phone_logs", json!({ "app": STORE_APP }))
        .await
        .unwrap();
    assert_eq!(pending["status"], "approval_pending", "{pending}");
    let b_question = pending["approval_id"].as_str().unwrap().to_owned();

    // B's page lists both servers' questions; A's is answered there.
    let listed = page.questions(2).await;
    assert!(listed.contains(&b_question), "{listed:?}");
    let a_question = listed.iter().find(|id| **id != b_question).unwrap().clone();
    let answered = page.answer(&a_question, "task").await;
    assert_eq!(answered.status, 303, "{answered:?}");
    assert_eq!(answered.header("location"), Some("./?note=answered"));

    // A's waiting call is released with the logs; B's question still waits.
    let done = loop {
        let message = waiting.next().await;
        if message["id"] == 7 {
            break message;
        }
        assert!(message["method"].is_string(), "{message}");
    };
    let result = &done["result"]["structuredContent"];
    assert_eq!(result["status"], "ok", "A's call was not released: {done}");
    assert_eq!(page.questions(1).await, [b_question]);
    let history = page.get("history").await;
    assert!(
        history.contains("on the person&#39;s page (phonelogs ui)"),
        "{history}"
    );

    // The Phones view: the store as `phonelogs doctor` shows it.
    let phones = page.get("phones").await;
    let version = phonelogs_store_pg::SCHEMA_VERSION;
    assert!(
        phones.contains(&format!(
            "<td>shared store</td><td>{name} (schema version {version})</td>"
        )),
        "{phones}"
    );
    // The database down: the error names the store, with the fix.
    pg.stop();
    let phones = page.get("phones").await;
    let row = phones
        .split("<tr class=\"bad\">")
        .find(|row| row.contains("<td>shared store</td>"))
        .unwrap_or_else(|| panic!("no failing shared store line: {phones}"));
    assert!(
        row.contains(&name) && row.contains("start the database"),
        "{row}"
    );
    drop((a, b, page));
}
