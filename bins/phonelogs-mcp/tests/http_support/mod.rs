//! What the HTTP tests and the load bench share: starting `phonelogs-mcp --http` and finding its
//! address on standard error, one HTTP/1 request with hyper's client, and a small MCP client
//! over Streamable HTTP (JSON-RPC POSTs whose answers come back as server-sent events).
//!
//! The MCP client is written out rather than taken from rmcp because rmcp's HTTP client side
//! needs reqwest, which nothing else here builds; hyper's client is already in the graph, and
//! the tests want to see the raw statuses anyway.

#![allow(dead_code, clippy::unwrap_used)]

use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

pub const BIN: &str = env!("CARGO_BIN_EXE_phonelogs-mcp");

/// A running `phonelogs-mcp --http`, killed when dropped.
pub struct Server {
    pub child: Child,
    pub addr: SocketAddr,
    /// What standard error said before the address (a made token's file, say).
    pub said: Vec<String>,
}

/// Starts the server with `args` (which should include `--http 127.0.0.1:0`) and waits for the
/// line naming its address.
pub async fn start(state_dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Server {
    let mut command = Command::new(BIN);
    command
        .arg("--state-dir")
        .arg(state_dir)
        .args(args)
        .env_remove("ADB_SERVER_SOCKET")
        .env("USBMUXD_SOCKET_ADDRESS", "127.0.0.1:1")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut said = Vec::new();
    let addr = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(rest) = line.strip_prefix("phonelogs-mcp: serving MCP on http://") {
                return rest.trim_end_matches("/mcp").parse::<SocketAddr>().unwrap();
            }
            said.push(line);
        }
        panic!("the server ended before serving: {said:?}");
    })
    .await
    .expect("the server names its address within a minute");
    // Keep draining standard error so the server never blocks on it.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Server { child, addr, said }
}

/// One HTTP answer.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: hyper::HeaderMap,
    pub body: Bytes,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The JSON-RPC messages of an event-stream body (or the one JSON body).
    pub fn messages(&self) -> Vec<Value> {
        let text = String::from_utf8_lossy(&self.body);
        if self
            .header("content-type")
            .is_some_and(|t| t.starts_with("application/json"))
        {
            return serde_json::from_str(&text).into_iter().collect();
        }
        text.lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str(data.trim()).ok())
            .collect()
    }
}

/// One HTTP/1 connection's sending half.
pub type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

/// Opens a connection to `addr`.
pub async fn connect(addr: SocketAddr) -> Result<Sender, String> {
    let stream = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| e.to_string())?;
    // As the SDKs' HTTP clients do (reqwest, undici): no wait for an ACK between the parts of
    // a request.
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(connection);
    Ok(sender)
}

/// Sends one request on a new connection: `headers` as given (no `Host` unless named there;
/// then `Host: <addr>` is added).
pub async fn send(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> Result<Reply, String> {
    let mut sender = connect(addr).await?;
    send_on(&mut sender, addr, method, path, headers, body).await
}

/// As [`send`], on `kept` when it holds a connection still open (as an HTTP client keeps its
/// connection alive between requests: the MCP SDKs' clients do), else on a new one kept there.
/// A request the kept connection could not take (the server closed it while idle) is sent
/// again on a new one: it was never sent.
async fn send_kept(
    kept: &tokio::sync::Mutex<Option<Sender>>,
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> Result<Reply, String> {
    let mut kept = kept.lock().await;
    if let Some(sender) = kept.as_mut().filter(|s| !s.is_closed())
        && sender.ready().await.is_ok()
    {
        let request = request(addr, method, path, headers, body.clone());
        let sent = tokio::time::timeout(Duration::from_secs(60), sender.try_send_request(request))
            .await
            .map_err(|_| "no answer within a minute".to_owned())?;
        match sent {
            Ok(response) => return read_reply(response).await,
            Err(mut error) => {
                if error.take_message().is_none() {
                    *kept = None;
                    return Err(error.into_error().to_string());
                }
            }
        }
    }
    let mut sender = connect(addr).await?;
    let reply = send_on(&mut sender, addr, method, path, headers, body).await;
    *kept = Some(sender);
    reply
}

fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> hyper::Request<Full<Bytes>> {
    let mut request = hyper::Request::builder().method(method).uri(path);
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        request = request.header("host", addr.to_string());
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.body(Full::new(Bytes::from(body))).unwrap()
}

/// Sends one request on `sender`'s connection (see [`send`]).
pub async fn send_on(
    sender: &mut Sender,
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> Result<Reply, String> {
    let request = request(addr, method, path, headers, body);
    let response = tokio::time::timeout(Duration::from_secs(60), sender.send_request(request))
        .await
        .map_err(|_| "no answer within a minute".to_owned())?
        .map_err(|e| e.to_string())?;
    read_reply(response).await
}

async fn read_reply(response: hyper::Response<hyper::body::Incoming>) -> Result<Reply, String> {
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = tokio::time::timeout(Duration::from_secs(60), response.into_body().collect())
        .await
        .map_err(|_| "no whole body within a minute".to_owned())?
        .map_err(|e| e.to_string())?
        .to_bytes();
    Ok(Reply {
        status,
        headers,
        body,
    })
}

/// The client's protocol revision: the last with `initialize` and sessions.
pub const PROTOCOL: &str = "2025-11-25";

/// An MCP session over Streamable HTTP.
pub struct Mcp {
    pub addr: SocketAddr,
    pub token: String,
    pub session: Option<String>,
    /// The client's capabilities in `initialize` (none unless set).
    pub capabilities: Value,
    next_id: u64,
    /// The connection kept alive between this session's requests.
    kept: tokio::sync::Mutex<Option<Sender>>,
}

impl Mcp {
    pub fn new(addr: SocketAddr, token: &str) -> Mcp {
        Mcp {
            addr,
            token: token.to_owned(),
            session: None,
            capabilities: json!({}),
            next_id: 1,
            kept: tokio::sync::Mutex::new(None),
        }
    }

    /// POSTs one JSON-RPC message with this session's token and id.
    pub async fn post(&self, message: &Value) -> Result<Reply, String> {
        let auth = format!("Bearer {}", self.token);
        let mut headers = vec![
            ("authorization", auth.as_str()),
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("mcp-protocol-version", PROTOCOL),
        ];
        if let Some(session) = &self.session {
            headers.push(("mcp-session-id", session.as_str()));
        }
        send_kept(
            &self.kept,
            self.addr,
            "POST",
            "/mcp",
            &headers,
            serde_json::to_vec(message).unwrap(),
        )
        .await
    }

    /// The handshake; returns the server's `initialize` result.
    pub async fn initialize(&mut self) -> Result<Value, String> {
        let reply = self
            .post(&json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {
                    "protocolVersion": PROTOCOL,
                    "capabilities": self.capabilities,
                    "clientInfo": { "name": "phonelogs-http-test", "version": "0" }
                }
            }))
            .await?;
        if reply.status != 200 {
            return Err(format!("initialize: HTTP {}", reply.status));
        }
        self.session = reply.header("mcp-session-id").map(str::to_owned);
        let result = reply
            .messages()
            .into_iter()
            .find(|m| m["id"] == 0)
            .ok_or("initialize: no answer")?;
        let done = self
            .post(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
            .await?;
        if done.status != 202 {
            return Err(format!("initialized: HTTP {}", done.status));
        }
        Ok(result["result"].clone())
    }

    /// One request; `Ok` holds its JSON-RPC `result`, `Err` a clear reason (an HTTP status or
    /// the JSON-RPC error).
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id;
        self.next_id += 1;
        let reply = self
            .post(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await?;
        if reply.status != 200 {
            return Err(format!(
                "HTTP {}: {}",
                reply.status,
                String::from_utf8_lossy(&reply.body)
            ));
        }
        let answer = reply
            .messages()
            .into_iter()
            .find(|m| m["id"] == id)
            .ok_or_else(|| format!("no answer to {method}"))?;
        match answer.get("error") {
            Some(error) => Err(format!("JSON-RPC error: {error}")),
            None => Ok(answer["result"].clone()),
        }
    }

    /// A tool call's `structuredContent`.
    pub async fn call(&mut self, tool: &str, arguments: Value) -> Result<Value, String> {
        let result = self
            .request(
                "tools/call",
                json!({ "name": tool, "arguments": arguments }),
            )
            .await?;
        Ok(result["structuredContent"].clone())
    }

    /// A client that shows form elicitation (`capabilities.elicitation.form`).
    pub fn with_elicitation(mut self) -> Mcp {
        self.capabilities = json!({ "elicitation": { "form": {} } });
        self
    }

    /// The headers of a POST in this session.
    fn post_headers(&self) -> Vec<(String, String)> {
        let mut headers = vec![
            ("authorization".to_owned(), format!("Bearer {}", self.token)),
            ("content-type".to_owned(), "application/json".to_owned()),
            (
                "accept".to_owned(),
                "application/json, text/event-stream".to_owned(),
            ),
            ("mcp-protocol-version".to_owned(), PROTOCOL.to_owned()),
        ];
        if let Some(session) = &self.session {
            headers.push(("mcp-session-id".to_owned(), session.clone()));
        }
        headers
    }

    /// A tool call read as the server streams it, as a client that shows dialogs reads it: a
    /// request the server makes on the call's stream (`elicitation/create`) is answered with
    /// `answer(request)` in a POST of its own while the stream stays open. Returns the call's
    /// `structuredContent` and the requests the server made.
    pub async fn call_answering(
        &mut self,
        tool: &str,
        arguments: Value,
        answer: impl Fn(&Value) -> Value,
    ) -> Result<(Value, Vec<Value>), String> {
        let id = self.next_id;
        self.next_id += 1;
        let call = json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                           "params": { "name": tool, "arguments": arguments } });
        let owned = self.post_headers();
        let headers: Vec<(&str, &str)> = owned
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        let mut sender = connect(self.addr).await?;
        let body = serde_json::to_vec(&call).unwrap();
        let response = sender
            .send_request(request(self.addr, "POST", "/mcp", &headers, body))
            .await
            .map_err(|e| e.to_string())?;
        if response.status() != 200 {
            return Err(format!("tools/call: HTTP {}", response.status()));
        }
        let mut body = response.into_body();
        let mut buffer = String::new();
        let mut asked = Vec::new();
        loop {
            let frame = tokio::time::timeout(Duration::from_secs(60), body.frame())
                .await
                .map_err(|_| "no event within a minute".to_owned())?
                .ok_or("the stream ended without the call's answer")?
                .map_err(|e| e.to_string())?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            buffer.push_str(&String::from_utf8_lossy(&data).replace("\r\n", "\n"));
            while let Some(end) = buffer.find("\n\n") {
                let event: String = buffer.drain(..end + 2).collect();
                for data in event.lines().filter_map(|l| l.strip_prefix("data:")) {
                    let Ok(message) = serde_json::from_str::<Value>(data.trim()) else {
                        continue;
                    };
                    if message["method"].is_string() && message.get("id").is_some() {
                        let reply = json!({ "jsonrpc": "2.0", "id": message["id"],
                                            "result": answer(&message) });
                        asked.push(message);
                        let sent = send(
                            self.addr,
                            "POST",
                            "/mcp",
                            &headers,
                            serde_json::to_vec(&reply).unwrap(),
                        )
                        .await?;
                        if sent.status != 202 {
                            return Err(format!("the answer: HTTP {}", sent.status));
                        }
                    } else if message["id"] == id {
                        if let Some(error) = message.get("error") {
                            return Err(format!("JSON-RPC error: {error}"));
                        }
                        return Ok((message["result"]["structuredContent"].clone(), asked));
                    }
                }
            }
        }
    }

    /// Ends the session (DELETE).
    pub async fn delete(&self) -> Result<u16, String> {
        let auth = format!("Bearer {}", self.token);
        let session = self.session.clone().unwrap_or_default();
        let headers = [
            ("authorization", auth.as_str()),
            ("mcp-session-id", session.as_str()),
            ("mcp-protocol-version", PROTOCOL),
        ];
        Ok(send_kept(
            &self.kept,
            self.addr,
            "DELETE",
            "/mcp",
            &headers,
            Vec::new(),
        )
        .await?
        .status)
    }
}

/// Writes a token file, readable by its owner only: `(token, agent)` a line (`agent` may end
/// with the `person` mark).
pub fn token_file(dir: &Path, tokens: &[(&str, &str)]) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("tokens");
    let text: String = tokens
        .iter()
        .map(|(token, agent)| format!("{token} {agent}\n"))
        .collect();
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path
}

/// `phonelogs-mcp --demo=fake --http 127.0.0.1:0` reading the token file of `tokens`
/// (`(TOKEN, AGENT)`, written in `state`), with `extra` flags.
pub async fn start_with_tokens(state: &Path, tokens: &[(&str, &str)], extra: &[&str]) -> Server {
    let file = token_file(state, tokens);
    let mut args = vec![
        "--demo=fake",
        "--http",
        "127.0.0.1:0",
        "--token-file",
        file.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    start(state, &args, &[]).await
}

/// The private adb servers, shared with the benches.
#[path = "../../benches/common/mod.rs"]
pub mod adb;
pub mod load;
