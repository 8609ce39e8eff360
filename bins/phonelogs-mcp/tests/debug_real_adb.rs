//! The six debugging aids end to end: a real MCP client (rmcp over stdio) drives `phonelogs-mcp`
//! (not `--demo`), which reaches the simulated phone through a private REAL adb server
//! (`adb -P <port> start-server`, `adb connect`). Every tool is called, with every error code
//! the spec names: INVALID_ARGUMENT, DEVICE_NOT_FOUND, ADB_UNAVAILABLE (a port where nothing
//! listens, and no `adb` on the server's PATH), PERMISSION_DENIED (a user build refuses
//! debuggerd), POLICY_DENIED (the app policy, the agent's mode, local_root) and BACKEND_ERROR (a
//! dead pid). The hostile `local_path` cases write nothing anywhere: the whole temporary tree is
//! compared before and after.
//!
//! Skipped, with the reason printed, when `/usr/bin/adb` is not installed (CI installs it).

// Test helpers unwrap: a failure there is a failing test, which is what it should be.
#![allow(clippy::unwrap_used)]

#[path = "../benches/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use common::PrivateAdb;
use phonelogs_adbsim::{BuildType, Profile, SimHandle, SimPhone};
use phonelogs_gateway::{Answer, Store};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient};
use serde_json::{Value, json};
use tokio::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_phonelogs-mcp");
const ADB: &str = "/usr/bin/adb";
const CRASH_TEST: &str = "dev.phonelogs.crashtest";
const STORE_APP: &str = "com.spotify.music";
const BANK: &str = "com.chase.sig.android";
const SYSTEM_UI: &str = "com.android.systemui";

/// The agent's client: no elicitation, so a question is left `approval_pending`.
#[derive(Clone, Default)]
struct AgentClient;

impl ClientHandler for AgentClient {}

type Client = RunningService<RoleClient, AgentClient>;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A simulated phone with `build_type`, served as a device and connected to `server`.
async fn phone(server: &PrivateAdb, build_type: BuildType) -> (SimPhone, SimHandle, String) {
    let phone = SimPhone::with_profile(Profile {
        build_type,
        ..Profile::default()
    });
    let (serial, handle) = server.connect(phone.clone()).await;
    (phone, handle, serial)
}

/// Starts `phonelogs-mcp` against the adb server on `adb_port`, with `extra` flags.
async fn start(adb_port: u16, state_dir: &Path, extra: &[&str], path: Option<&Path>) -> Client {
    let mut command = Command::new(BIN);
    command
        .arg("--state-dir")
        .arg(state_dir)
        .args(extra)
        .env("ANDROID_ADB_SERVER_PORT", adb_port.to_string())
        .env_remove("ADB_SERVER_SOCKET")
        .env_remove("ADB_AUTOMATION_LOCAL_ROOT")
        .stderr(Stdio::null());
    if let Some(path) = path {
        command.env("PATH", path);
    }
    let transport = TokioChildProcess::new(command).unwrap();
    AgentClient
        .serve_with_lifecycle(transport, ClientLifecycleMode::Initialize)
        .await
        .unwrap()
}

async fn call(client: &Client, tool: &'static str, arguments: Value) -> Value {
    let arguments = arguments.as_object().cloned().unwrap_or_default();
    let result: CallToolResult = client
        .call_tool(CallToolRequestParams::new(tool).with_arguments(arguments))
        .await
        .unwrap();
    let envelope = result.structured_content.clone().unwrap_or(Value::Null);
    // The text is the same envelope, as JSON.
    let text: String = result
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .map(|t| t.text.clone())
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap(),
        envelope,
        "{tool}: the text and the structured content differ"
    );
    envelope
}

fn code(envelope: &Value) -> &str {
    envelope["error"]["code"].as_str().unwrap_or("")
}

fn assert_code(envelope: &Value, expected: &str, what: &str) {
    assert_eq!(envelope["status"], "error", "{what}: {envelope}");
    assert_eq!(code(envelope), expected, "{what}: {envelope}");
    assert_eq!(envelope["data"], Value::Null, "{what}: {envelope}");
}

fn assert_success(envelope: &Value, what: &str) {
    assert_eq!(envelope["status"], "success", "{what}: {envelope}");
    assert_eq!(envelope["error"], Value::Null, "{what}: {envelope}");
}

/// Every tool once, with valid arguments, aimed at `serial`.
fn every_tool(serial: &str, pid: u32) -> Vec<(&'static str, Value)> {
    vec![
        (
            "get_process_exit_history",
            json!({ "serial": serial, "package": CRASH_TEST }),
        ),
        (
            "set_debug_app",
            json!({ "serial": serial, "package": CRASH_TEST }),
        ),
        ("clear_debug_app", json!({ "serial": serial })),
        ("list_jdwp_processes", json!({ "serial": serial })),
        (
            "capture_native_backtrace",
            json!({ "serial": serial, "pid": pid }),
        ),
        (
            "capture_native_tombstone",
            json!({ "serial": serial, "pid": pid, "local_path": "every.txt" }),
        ),
    ]
}

/// Every file, directory and symlink under `root`, with its content (or link target).
fn snapshot(root: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let what = if meta.file_type().is_symlink() {
                format!("-> {}", std::fs::read_link(&path).unwrap().display())
            } else if meta.is_dir() {
                stack.push(path.clone());
                "dir".to_owned()
            } else {
                String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned()
            };
            out.insert(path, what);
        }
    }
    out
}

fn debuggerd_runs(phone: &SimPhone) -> usize {
    phone
        .commands_run()
        .iter()
        .filter(|c| c.contains("debuggerd"))
        .count()
}

fn pid_of_process(phone: &SimPhone, name: &str) -> u32 {
    phone
        .processes()
        .iter()
        .find(|p| p.name == name)
        .map(|p| p.pid)
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_debugging_aid_through_the_mcp_server_and_a_real_adb_server() {
    let Some(server) = PrivateAdb::start_if_installed() else {
        return;
    };
    let (debug_phone, _debug_handle, serial) = phone(&server, BuildType::Userdebug).await;
    let (user_phone, _user_handle, user_serial) = phone(&server, BuildType::User).await;
    let crash_pid = debug_phone.pid_of(CRASH_TEST).unwrap();
    let store_pid = debug_phone.pid_of(STORE_APP).unwrap();
    let sysui_pid = debug_phone.pid_of(SYSTEM_UI).unwrap();
    let bank_pid = debug_phone.pid_of(BANK).unwrap();
    let system_server_pid = pid_of_process(&debug_phone, "system_server");

    // The tree the server may write in (local_root) and a sibling it must never touch.
    let tree = tempfile::tempdir().unwrap();
    let root = tree.path().join("root");
    let outside = tree.path().join("outside");
    std::fs::create_dir_all(root.join("tombstones/run0")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("keep.txt"), "untouched").unwrap();
    std::os::unix::fs::symlink(&outside, root.join("tombstones/link")).unwrap();
    let state = tempfile::tempdir().unwrap();
    let client = start(
        server.port,
        state.path(),
        &["--local-root", root.to_str().unwrap()],
        None,
    )
    .await;

    // get_process_exit_history.
    let history = call(
        &client,
        "get_process_exit_history",
        json!({ "serial": serial, "package": CRASH_TEST }),
    )
    .await;
    assert_success(&history, "exit history");
    assert_eq!(history["data"]["package"], CRASH_TEST);
    assert_eq!(
        history["data"]["count"].as_u64().unwrap() as usize,
        history["data"]["records"].as_array().unwrap().len()
    );
    let unknown = call(
        &client,
        "get_process_exit_history",
        json!({ "serial": serial, "package": "com.example.notinstalled" }),
    )
    .await;
    assert_success(&unknown, "an unknown package is an empty history");
    assert_eq!(unknown["data"]["count"], 0);
    assert_code(
        &call(
            &client,
            "get_process_exit_history",
            json!({ "serial": serial, "package": "  " }),
        )
        .await,
        "INVALID_ARGUMENT",
        "a blank package",
    );
    assert_code(
        &call(
            &client,
            "get_process_exit_history",
            json!({ "serial": serial, "package": BANK }),
        )
        .await,
        "POLICY_DENIED",
        "a finance app's history",
    );

    // set_debug_app and clear_debug_app change the phone.
    let set = call(
        &client,
        "set_debug_app",
        json!({ "serial": serial, "package": CRASH_TEST, "wait_for_debugger": true }),
    )
    .await;
    assert_success(&set, "set_debug_app");
    assert_eq!(set["data"]["wait_for_debugger"], true);
    assert_eq!(set["data"]["persistent"], false);
    let marked = debug_phone.debug_app().unwrap();
    assert_eq!(marked.package, CRASH_TEST);
    assert!(marked.wait_for_debugger && !marked.persistent);
    for package in [BANK, SYSTEM_UI, "io.appium.uiautomator2.server"] {
        assert_code(
            &call(
                &client,
                "set_debug_app",
                json!({ "serial": serial, "package": package }),
            )
            .await,
            "POLICY_DENIED",
            package,
        );
    }
    assert_eq!(debug_phone.debug_app().unwrap().package, CRASH_TEST);
    assert_code(
        &call(
            &client,
            "set_debug_app",
            json!({ "serial": serial, "package": "" }),
        )
        .await,
        "INVALID_ARGUMENT",
        "set_debug_app with a blank package",
    );
    for _ in 0..2 {
        let cleared = call(&client, "clear_debug_app", json!({ "serial": serial })).await;
        assert_success(&cleared, "clear_debug_app");
        assert_eq!(cleared["data"]["cleared"], true);
    }
    assert!(debug_phone.debug_app().is_none());

    // list_jdwp_processes: the pids, and only the packages the agent may see.
    let jdwp = call(&client, "list_jdwp_processes", json!({ "serial": serial })).await;
    assert_success(&jdwp, "list_jdwp_processes");
    let expected: Vec<Value> = debug_phone
        .jdwp_pids()
        .into_iter()
        .map(Value::from)
        .collect();
    assert_eq!(jdwp["data"]["pids"], Value::Array(expected.clone()));
    assert_eq!(jdwp["data"]["count"], expected.len());
    let named = jdwp["data"]["packages"].as_array().unwrap();
    assert!(
        named.contains(&json!({ "pid": crash_pid, "package": CRASH_TEST })),
        "{jdwp}"
    );
    let text = jdwp.to_string();
    for hidden in [
        BANK,
        SYSTEM_UI,
        "com.x8bit.bitwarden",
        "com.google.android.gms",
    ] {
        assert!(!text.contains(hidden), "{hidden} is named: {text}");
    }

    // capture_native_backtrace.
    let backtrace = call(
        &client,
        "capture_native_backtrace",
        json!({ "serial": serial, "pid": crash_pid }),
    )
    .await;
    assert_success(&backtrace, "backtrace");
    assert_eq!(backtrace["data"]["process_name"], CRASH_TEST);
    assert!(backtrace["data"]["thread_count"].as_u64().unwrap() > 0);
    assert_eq!(
        backtrace["message"],
        "capture_native_backtrace completed successfully."
    );
    // The phone's own processes and refused apps are judged before debuggerd runs.
    let before = debuggerd_runs(&debug_phone);
    for (pid, what) in [
        (sysui_pid, "System UI"),
        (system_server_pid, "system_server"),
        (bank_pid, "a finance app"),
    ] {
        for tool in ["capture_native_backtrace", "capture_native_tombstone"] {
            let refused = call(
                &client,
                tool,
                json!({ "serial": serial, "pid": pid, "local_path": "refused.txt" }),
            )
            .await;
            assert_code(&refused, "POLICY_DENIED", what);
        }
    }
    assert_eq!(debuggerd_runs(&debug_phone), before, "debuggerd ran");
    assert_code(
        &call(
            &client,
            "capture_native_backtrace",
            json!({ "serial": serial, "pid": 99_999 }),
        )
        .await,
        "BACKEND_ERROR",
        "a dead pid",
    );
    for pid in [0, -7] {
        assert_code(
            &call(
                &client,
                "capture_native_backtrace",
                json!({ "serial": serial, "pid": pid }),
            )
            .await,
            "INVALID_ARGUMENT",
            "a non-positive pid",
        );
    }

    // A release build asks the person first, and the answer is picked up with approval_id.
    let pending = call(
        &client,
        "capture_native_backtrace",
        json!({ "serial": serial, "pid": store_pid }),
    )
    .await;
    assert_eq!(pending["status"], "approval_pending", "{pending}");
    let approval_id = pending["data"]["approval_id"].as_str().unwrap().to_owned();
    assert_eq!(
        debuggerd_runs(&debug_phone),
        before,
        "debuggerd ran before the answer"
    );
    Store::open(state.path())
        .unwrap()
        .answer(&approval_id, Answer::Once)
        .unwrap();
    let answered = call(
        &client,
        "capture_native_backtrace",
        json!({ "serial": serial, "pid": store_pid, "approval_id": approval_id }),
    )
    .await;
    assert_success(&answered, "the answered backtrace");
    assert_eq!(answered["data"]["process_name"], STORE_APP);

    // capture_native_tombstone: written atomically under local_root, never returned.
    let tombstone = call(
        &client,
        "capture_native_tombstone",
        json!({ "serial": serial, "pid": crash_pid, "local_path": "run1/app.txt" }),
    )
    .await;
    assert_success(&tombstone, "tombstone");
    let written = root.join("tombstones/run1/app.txt").canonicalize().unwrap();
    assert_eq!(
        tombstone["data"]["local_path"],
        written.display().to_string()
    );
    let bytes = std::fs::read(&written).unwrap();
    assert_eq!(tombstone["data"]["size_bytes"], bytes.len());
    assert_eq!(tombstone["data"]["success"], true);
    assert_eq!(tombstone["data"]["process_name"], CRASH_TEST);
    assert!(!tombstone.to_string().contains("backtrace:"), "{tombstone}");
    let leftovers: Vec<_> = std::fs::read_dir(written.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers, ["app.txt"], "no partial file is left");

    // Hostile local paths: refused, nothing written anywhere, debuggerd never run.
    let before_tree = snapshot(tree.path());
    let before = debuggerd_runs(&debug_phone);
    let absolute = outside.join("abs.txt");
    for hostile in [
        "../escape.txt",
        "run1/../../escape.txt",
        "../../outside/escape.txt",
        absolute.to_str().unwrap(),
        "link/escape.txt",
        "link",
        "bad\u{0}name.txt",
        "run0",
        "run0/",
        "",
    ] {
        let refused = call(
            &client,
            "capture_native_tombstone",
            json!({ "serial": serial, "pid": crash_pid, "local_path": hostile }),
        )
        .await;
        assert_code(
            &refused,
            "POLICY_DENIED",
            &format!("local_path {hostile:?}"),
        );
    }
    assert_eq!(
        snapshot(tree.path()),
        before_tree,
        "a hostile path wrote something"
    );
    assert_eq!(
        debuggerd_runs(&debug_phone),
        before,
        "debuggerd ran for a refused path"
    );

    // DEVICE_NOT_FOUND for every tool.
    for (tool, arguments) in every_tool("no-such-serial", crash_pid) {
        assert_code(
            &call(&client, tool, arguments).await,
            "DEVICE_NOT_FOUND",
            tool,
        );
    }

    // PERMISSION_DENIED: the user build refuses debuggerd, and nothing is written.
    let user_pid = user_phone.pid_of(CRASH_TEST).unwrap();
    let before_tree = snapshot(tree.path());
    for tool in ["capture_native_backtrace", "capture_native_tombstone"] {
        assert_code(
            &call(
                &client,
                tool,
                json!({ "serial": user_serial, "pid": user_pid, "local_path": "user.txt" }),
            )
            .await,
            "PERMISSION_DENIED",
            tool,
        );
    }
    assert_eq!(snapshot(tree.path()), before_tree);
    client.cancel().await.unwrap();

    // A read-only agent may not change the phone; without a local root no tombstone is saved.
    let read_only_state = tempfile::tempdir().unwrap();
    let read_only = start(
        server.port,
        read_only_state.path(),
        &["--agent-mode", "read-only"],
        None,
    )
    .await;
    for (tool, arguments) in [
        (
            "set_debug_app",
            json!({ "serial": serial, "package": CRASH_TEST }),
        ),
        ("clear_debug_app", json!({ "serial": serial })),
        (
            "capture_native_tombstone",
            json!({ "serial": serial, "pid": crash_pid, "local_path": "x.txt" }),
        ),
    ] {
        assert_code(
            &call(&read_only, tool, arguments).await,
            "POLICY_DENIED",
            tool,
        );
    }
    assert_success(
        &call(
            &read_only,
            "capture_native_backtrace",
            json!({ "serial": serial, "pid": crash_pid }),
        )
        .await,
        "a read-only agent reads",
    );
    read_only.cancel().await.unwrap();

    // A watch-only agent reads nothing: every tool is refused.
    let watch_state = tempfile::tempdir().unwrap();
    let watch_only = start(
        server.port,
        watch_state.path(),
        &[
            "--agent-mode",
            "watch-only",
            "--local-root",
            root.to_str().unwrap(),
        ],
        None,
    )
    .await;
    for (tool, arguments) in every_tool(&serial, crash_pid) {
        assert_code(
            &call(&watch_only, tool, arguments).await,
            "POLICY_DENIED",
            tool,
        );
    }
    watch_only.cancel().await.unwrap();
    assert!(debug_phone.debug_app().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_adb_server_is_adb_unavailable_for_every_tool() {
    if !Path::new(ADB).is_file() {
        eprintln!("skipped: {ADB} is not installed (CI installs the adb package)");
        return;
    }
    // Nothing listens on the port, and no `adb` is on the server's PATH to start one.
    let empty_path = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let client = start(
        free_port(),
        state.path(),
        &["--local-root", root.path().to_str().unwrap()],
        Some(empty_path.path()),
    )
    .await;
    for (tool, arguments) in every_tool("emulator-5554", 1224) {
        let envelope = call(&client, tool, arguments).await;
        assert_code(&envelope, "ADB_UNAVAILABLE", tool);
    }
    assert!(snapshot(root.path()).is_empty(), "something was written");
    client.cancel().await.unwrap();
}
