//! Issue 17 end to end: a real MCP client (rmcp over stdio) drives `phonelogs-mcp --symbols DIR`
//! (not `--demo`), which reaches the simulated Android phone through a private REAL adb server
//! (`adb -P <port> start-server`, `adb connect`). Crash Test's crash, whose frames are
//! obfuscated as ProGuard 6.2.2 obfuscated Crash Test's JVM build (`testdata/symbols/`), comes
//! back deobfuscated, frame for frame what ProGuard's own retrace printed, with the heading's
//! `symbols` naming the mapping filed for the installed `versionCode`.
//!
//! Skipped, with the reason printed, when `/usr/bin/adb` is not installed (CI installs it).

// Test helpers unwrap: a failure there is a failing test, which is what it should be.
#![allow(clippy::unwrap_used)]

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::Duration;

use phonelogs_adbsim::{DropBoxEntry, SimPhone, Simulator};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient};
use serde_json::{Value, json};
use tokio::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_phonelogs-mcp");
const ADB: &str = "/usr/bin/adb";
const CRASH_TEST: &str = "dev.phonelogs.crashtest";
const MAPPING: &str = include_str!("../../../testdata/symbols/proguard-6.2.2/mapping.txt");
const TRACE: &str = include_str!("../../../testdata/symbols/proguard-6.2.2/trace-button.txt");
const RETRACED: &str =
    include_str!("../../../testdata/symbols/proguard-6.2.2/trace-button.retrace.txt");

#[derive(Clone, Default)]
struct AgentClient;

impl ClientHandler for AgentClient {}

type Client = RunningService<RoleClient, AgentClient>;

/// A private real adb server (its own port and HOME), killed when dropped.
struct RealAdb {
    port: u16,
    home: tempfile::TempDir,
}

impl RealAdb {
    fn start() -> Option<RealAdb> {
        if !Path::new(ADB).is_file() {
            eprintln!("skipped: {ADB} is not installed (CI installs the adb package)");
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let server = RealAdb {
            port,
            home: tempfile::tempdir().unwrap(),
        };
        let output = server.run(&["start-server"]);
        assert!(output.status.success(), "adb start-server: {output:?}");
        Some(server)
    }

    fn run(&self, args: &[&str]) -> Output {
        std::process::Command::new(ADB)
            .arg("-P")
            .arg(self.port.to_string())
            .args(args)
            .env("HOME", self.home.path())
            .env("ANDROID_USER_HOME", self.home.path().join(".android"))
            .output()
            .unwrap()
    }

    async fn connect(&self, address: SocketAddr) -> String {
        let serial = format!("127.0.0.1:{}", address.port());
        // On a loaded machine the first handshake may time out: try a few times.
        let mut output = self.run(&["connect", &serial]);
        for _ in 0..4 {
            if String::from_utf8_lossy(&output.stdout).contains("connected to") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
            output = self.run(&["connect", &serial]);
        }
        assert!(
            String::from_utf8_lossy(&output.stdout).contains("connected"),
            "adb connect: {output:?}"
        );
        for _ in 0..100 {
            let listing = String::from_utf8_lossy(&self.run(&["devices"]).stdout).into_owned();
            if listing
                .lines()
                .any(|line| line.split_whitespace().collect::<Vec<_>>() == [&serial, "device"])
            {
                return serial;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the adb server never listed {serial} as a device");
    }
}

impl Drop for RealAdb {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

async fn call(client: &Client, arguments: Value) -> (Value, String) {
    let arguments = arguments.as_object().cloned().unwrap_or_default();
    let result: CallToolResult = client
        .call_tool(CallToolRequestParams::new("phone_logs").with_arguments(arguments))
        .await
        .unwrap();
    let text = result
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .map(|t| t.text.clone())
        .collect();
    (result.structured_content.unwrap_or(Value::Null), text)
}

/// The drop box entry Android writes for an uncaught exception (headers as in
/// `testdata/android/dropbox/print-app-entries.txt`), with the release build's obfuscated
/// frames.
fn obfuscated_crash(phone: &SimPhone, pid: u32) -> DropBoxEntry {
    let uid = phone.uid_of(CRASH_TEST, 0).unwrap();
    let frames: String = TRACE.lines().skip(1).map(|l| format!("{l}\n")).collect();
    DropBoxEntry {
        tag: "data_app_crash".into(),
        time_ms: (phone.now_ns() / 1_000_000) as i64,
        text: format!(
            "Process: {CRASH_TEST}\nPID: {pid}\nUID: {uid}\nFrozen: false\nFlags: 0x38c83e46\n\
             Package: {CRASH_TEST} v1 (1.0)\nForeground: Yes\n\n\
             java.lang.IllegalStateException: Crash button tapped\n{frames}"
        ),
    }
}

#[tokio::test]
async fn an_obfuscated_crash_comes_back_deobfuscated_with_the_mapping_named() {
    let Some(server) = RealAdb::start() else {
        return;
    };
    let phone = SimPhone::default_phone();
    let (address, _handle) = Simulator::bind_loopback(None, phone.clone()).await.unwrap();
    let serial = server.connect(address).await;

    // The person files ProGuard's mapping under Crash Test's installed versionCode (1).
    let symbols = tempfile::tempdir().unwrap();
    let folder = symbols.path().join(CRASH_TEST).join("1");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("mapping.txt"), MAPPING).unwrap();
    let state = tempfile::tempdir().unwrap();
    let mut command = Command::new(BIN);
    command
        .arg("--state-dir")
        .arg(state.path())
        .arg("--symbols")
        .arg(symbols.path())
        .env("ANDROID_ADB_SERVER_PORT", server.port.to_string())
        .env_remove("ADB_SERVER_SOCKET")
        .stderr(Stdio::null());
    let client = AgentClient
        .serve_with_lifecycle(
            TokioChildProcess::new(command).unwrap(),
            ClientLifecycleMode::Initialize,
        )
        .await
        .unwrap();
    // The task starts with the session; the crash comes after it.
    let (first, _) = call(&client, json!({ "app": CRASH_TEST, "device": serial })).await;
    assert_eq!(first["status"], "ok", "{first}");
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let pid = phone.pid_of(CRASH_TEST).unwrap();
    phone.add_dropbox_entry(obfuscated_crash(&phone, pid));

    let (out, text) = call(
        &client,
        json!({ "app": CRASH_TEST, "device": serial, "kind": "crashes" }),
    )
    .await;
    assert_eq!(out["status"], "ok", "{out}");
    let heading = &out["reports"][0];
    assert_eq!(heading["kind"], "java_crash", "{out}");
    let symbols_used = heading["symbols"].as_str().unwrap();
    assert!(
        symbols_used.contains(&format!("mapping {CRASH_TEST}/1/mapping.txt")),
        "{symbols_used}"
    );
    assert_eq!(heading["blamed_frame"], "Cart.tapped(Cart.java:47)");
    assert_eq!(heading["occurrences"]["count"], 1);
    assert_eq!(heading["occurrences"]["pids"], json!([pid]));
    for frame in RETRACED.lines().skip(1) {
        assert!(text.contains(frame), "{frame:?} not in {text}");
        assert!(out["log"].as_str().unwrap().contains(frame));
    }
    assert!(!text.contains("jvm.a.a(SourceFile:1047)"), "{text}");
    let message = out["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("Symbols used: mapping {CRASH_TEST}/1/mapping.txt")),
        "{message}"
    );
    client.cancel().await.unwrap();
}
