//! A small MCP client over stdio, as an agent's client speaks it: newline-delimited JSON-RPC 2.0
//! to a server process it starts, with the `initialize` handshake of MCP 2025-06-18.
//!
//! It declares no client capabilities, so the server cannot ask through elicitation and must
//! answer a question with `approval_pending`, which the emulator test then answers the way a
//! person would, with the `phonelogs approvals answer` command. Every request has a deadline.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

/// The MCP revision this client speaks.
const PROTOCOL_VERSION: &str = "2025-06-18";
/// How long one request may take.
const REQUEST: Duration = Duration::from_secs(60);

/// A running MCP server and the session with it.
#[derive(Debug)]
pub struct McpClient {
    child: Child,
    stdin: Option<ChildStdin>,
    messages: Receiver<String>,
    next_id: u64,
}

impl McpClient {
    /// Starts the server (its stdin and stdout become the transport; set its stderr before) and
    /// runs the `initialize` handshake.
    pub fn start(command: &mut Command) -> Result<Self> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot start `{}`", crate::process::describe(command)))?;
        let stdin = child.stdin.take();
        let stdout = child
            .stdout
            .take()
            .context("the MCP server has no stdout")?;
        let (sender, messages) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut client = Self {
            child,
            stdin,
            messages,
            next_id: 1,
        };
        let result = client.request(
            "initialize",
            json!({
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "phonelogs-emulator-test", "version": "0.0.0"},
            }),
        )?;
        if result.get("serverInfo").is_none() {
            bail!("the initialize result has no serverInfo: {result}");
        }
        client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(client)
    }

    /// Calls a tool and returns its result (`content`, `structuredContent`, `isError`).
    pub fn call_tool(&mut self, name: &str, arguments: Value) -> Result<Value> {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
    }

    /// Ends the session the way a client does: closes the server's stdin and waits for it.
    pub fn close(mut self) -> Result<()> {
        self.stdin = None;
        let deadline = Instant::now() + Duration::from_secs(10);
        match crate::process::wait_until(&mut self.child, deadline)? {
            Some(_) => Ok(()),
            None => bail!("the MCP server did not exit within 10 s of its stdin closing"),
        }
    }

    fn send(&mut self, message: &Value) -> Result<()> {
        let stdin = self.stdin.as_mut().context("the session is closed")?;
        let mut line = message.to_string();
        line.push('\n');
        stdin
            .write_all(line.as_bytes())
            .and_then(|()| stdin.flush())
            .context("cannot write to the MCP server (did it exit?)")
    }

    fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        let deadline = Instant::now() + REQUEST;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.messages.recv_timeout(left) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => {
                    bail!("no answer to `{method}` within {} s", REQUEST.as_secs())
                }
                Err(RecvTimeoutError::Disconnected) => {
                    bail!("the MCP server closed its stdout while `{method}` was pending")
                }
            };
            let message: Value = serde_json::from_str(&line)
                .with_context(|| format!("the MCP server wrote a line that is not JSON: {line}"))?;
            match classify(&message, id) {
                Incoming::Answer => {
                    if let Some(error) = message.get("error") {
                        bail!("`{method}` failed: {error}");
                    }
                    return message.get("result").cloned().with_context(|| {
                        format!("the answer to `{method}` has no result: {message}")
                    });
                }
                Incoming::Request(request_id, request_method) => {
                    // A ping gets its empty answer; this client offers nothing else.
                    let answer = if request_method == "ping" {
                        json!({"jsonrpc": "2.0", "id": request_id, "result": {}})
                    } else {
                        json!({"jsonrpc": "2.0", "id": request_id,
                               "error": {"code": -32601, "message": "not supported by this client"}})
                    };
                    self.send(&answer)?;
                }
                Incoming::Other => {}
            }
        }
    }
}

impl Drop for McpClient {
    fn drop(&mut self) {
        self.stdin = None;
        if let Ok(None) = self.child.try_wait() {
            let deadline = Instant::now() + Duration::from_secs(5);
            if let Ok(None) = crate::process::wait_until(&mut self.child, deadline) {
                let _ = self.child.kill();
                let _ = self.child.wait();
            }
        }
    }
}

/// What a message from the server is, seen from a client waiting for answer `id`.
#[derive(Debug, PartialEq)]
enum Incoming {
    /// The answer to the pending request.
    Answer,
    /// A request from the server, with its id and method.
    Request(Value, String),
    /// A notification, or an answer to something else.
    Other,
}

fn classify(message: &Value, id: u64) -> Incoming {
    match (
        message.get("id"),
        message.get("method").and_then(Value::as_str),
    ) {
        (Some(request_id), Some(method)) => {
            Incoming::Request(request_id.clone(), method.to_owned())
        }
        (Some(answer_id), None) if answer_id.as_u64() == Some(id) => Incoming::Answer,
        _ => Incoming::Other,
    }
}

/// The text of a tool result: its `text` content blocks, joined.
pub fn result_text(result: &Value) -> String {
    result
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|block| block.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// A field of a tool result's `structuredContent`, as a string.
pub fn structured_str<'a>(result: &'a Value, field: &str) -> Option<&'a str> {
    result.get("structuredContent")?.get(field)?.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tells_answers_from_requests_and_notifications() {
        assert_eq!(
            classify(&json!({"jsonrpc": "2.0", "id": 3, "result": {}}), 3),
            Incoming::Answer
        );
        assert_eq!(
            classify(&json!({"jsonrpc": "2.0", "id": 2, "result": {}}), 3),
            Incoming::Other
        );
        assert_eq!(
            classify(&json!({"jsonrpc": "2.0", "id": "s1", "method": "ping"}), 3),
            Incoming::Request(json!("s1"), "ping".to_owned())
        );
        assert_eq!(
            classify(
                &json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {}}),
                3
            ),
            Incoming::Other
        );
    }

    #[test]
    fn reads_text_and_structured_fields() {
        let result = json!({
            "content": [{"type": "text", "text": "Read 2 log lines."}, {"type": "text", "text": "10:00:00.000 CrashTest: Crash Test started"}],
            "structuredContent": {"status": "ok", "lines": []},
        });
        assert_eq!(
            result_text(&result),
            "Read 2 log lines.\n10:00:00.000 CrashTest: Crash Test started"
        );
        assert_eq!(structured_str(&result, "status"), Some("ok"));
        assert_eq!(structured_str(&result, "approval_id"), None);
    }

    #[test]
    fn talks_to_a_server_over_stdio() {
        // A stand-in server in shell: it answers initialize, pings the client once, then answers
        // one tools/call. It checks that the client sent `initialized` and answered the ping.
        let script = r#"
            read -r init
            echo '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"stand-in","version":"1"}}}'
            read -r initialized
            case "$initialized" in *notifications/initialized*) ;; *) exit 3 ;; esac
            read -r call
            echo '{"jsonrpc":"2.0","id":"p","method":"ping"}'
            read -r pong
            case "$pong" in *'"id":"p"'*) ;; *) exit 4 ;; esac
            case "$call" in *phone_logs*) ;; *) exit 5 ;; esac
            echo '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hello"}],"structuredContent":{"status":"ok"}}}'
            read -r end || exit 0
        "#;
        let mut command = Command::new("sh");
        command.args(["-c", script]);
        let mut client = McpClient::start(&mut command).unwrap();
        let result = client.call_tool("phone_logs", json!({"app": "x"})).unwrap();
        assert_eq!(result_text(&result), "hello");
        client.close().unwrap();
    }
}
