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

#[path = "../benches/common/mod.rs"]
mod common;

use std::process::Stdio;
use std::time::Duration;

use common::PrivateAdb;
use phonelogs_adbsim::{DropBoxEntry, SimPhone};
use rmcp::ClientHandler;
use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use rmcp::transport::TokioChildProcess;
use serde_json::json;
use tokio::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_phonelogs-mcp");
const CRASH_TEST: &str = "dev.phonelogs.crashtest";
const MAPPING: &str = include_str!("../../../testdata/symbols/proguard-6.2.2/mapping.txt");
const TRACE: &str = include_str!("../../../testdata/symbols/proguard-6.2.2/trace-button.txt");
const RETRACED: &str =
    include_str!("../../../testdata/symbols/proguard-6.2.2/trace-button.retrace.txt");

#[derive(Clone, Default)]
struct AgentClient;

impl ClientHandler for AgentClient {}

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
    let Some(server) = PrivateAdb::start_if_installed() else {
        return;
    };
    let phone = SimPhone::default_phone();
    let (serial, _handle) = server.connect(phone.clone()).await;

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
    let (first, _) =
        common::phone_logs(&client, json!({ "app": CRASH_TEST, "device": serial })).await;
    assert_eq!(first["status"], "ok", "{first}");
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let pid = phone.pid_of(CRASH_TEST).unwrap();
    phone.add_dropbox_entry(obfuscated_crash(&phone, pid));

    let (out, text) = common::phone_logs(
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
