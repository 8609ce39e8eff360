//! The whole `phone_logs` call over stdio against a bare `adb -s <serial> shell 'logcat -d …'`,
//! side by side in one run. A real MCP client (rmcp) drives this package's `phonelogs-mcp`
//! (built with the bench profile, i.e. release), which reaches the simulated phone holding 2 MiB
//! of the app's lines through a private real adb server. The call is warm (the server has
//! looked the app up once) and asks for what an agent gets by default: the newest 200 lines.
//! Prints the medians and the ratio.
//!
//! Run: `cargo bench -p phonelogs-mcp --bench mcp_call_vs_adb` (needs `/usr/bin/adb`).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use phonelogs_adbsim::{Buffer, SimPhone, Simulator};
use rmcp::ClientHandler;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_phonelogs-mcp");
const ROUNDS: usize = 15;
const DUMP_BYTES: usize = 2 * 1024 * 1024;
const APP: &str = "dev.phonelogs.crashtest";

/// The agent's client: it answers nothing (the app is a development build: no question).
#[derive(Clone, Default)]
struct Agent;

impl ClientHandler for Agent {}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let adb = Path::new("/usr/bin/adb");
    if !adb.is_file() {
        eprintln!("skipped: /usr/bin/adb is not installed");
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(run(adb));
}

async fn run(adb: &Path) {
    let home = tempfile::tempdir().expect("a temporary HOME");
    let state = tempfile::tempdir().expect("a state directory");
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
        listener.local_addr().expect("its address").port()
    };
    let adb_cmd = |args: &[&str]| {
        Command::new(adb)
            .arg("-P")
            .arg(port.to_string())
            .args(args)
            .env("HOME", home.path())
            .env("ANDROID_USER_HOME", home.path().join(".android"))
            .output()
            .expect("adb runs")
    };
    assert!(adb_cmd(&["start-server"]).status.success());

    let phone = SimPhone::default_phone();
    phone.set_noise_rate(0.0);
    phone
        .fill_log(APP, Buffer::Main, DUMP_BYTES)
        .expect("the app runs");
    let (address, _handle) = Simulator::bind_loopback(None, phone.clone())
        .await
        .expect("the simulator listens");
    let serial = format!("127.0.0.1:{}", address.port());
    assert!(String::from_utf8_lossy(&adb_cmd(&["connect", &serial]).stdout).contains("connected"));
    for _ in 0..100 {
        let listing = String::from_utf8_lossy(&adb_cmd(&["devices"]).stdout).into_owned();
        if listing
            .lines()
            .any(|line| line.split_whitespace().collect::<Vec<_>>() == [serial.as_str(), "device"])
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let mut command = tokio::process::Command::new(BIN);
    command
        .arg("--state-dir")
        .arg(state.path())
        .env("ANDROID_ADB_SERVER_PORT", port.to_string())
        .env_remove("ADB_SERVER_SOCKET")
        // No usbmuxd here: the iPhone driver finds none and stays out of the way.
        .env("USBMUXD_SOCKET_ADDRESS", "127.0.0.1:1")
        .stderr(Stdio::null());
    let client = Agent
        .serve_with_lifecycle(
            TokioChildProcess::new(command).expect("phonelogs-mcp starts"),
            ClientLifecycleMode::Initialize,
        )
        .await
        .expect("the MCP session opens");
    let arguments = json!({ "app": APP, "device": serial, "since": "1h" });
    let call = || async {
        let result: CallToolResult = client
            .call_tool(
                CallToolRequestParams::new("phone_logs")
                    .with_arguments(arguments.as_object().cloned().unwrap_or_default()),
            )
            .await
            .expect("phone_logs answers");
        result.structured_content.unwrap_or(Value::Null)
    };
    let first = call().await;
    assert_eq!(first["status"], "ok", "{first}");
    assert_eq!(first["shown"], 200, "{}", first["message"]);

    let uid = phone.uid_of(APP, 0).expect("installed");
    let bare_command =
        format!("logcat -d -b main,system,crash -v epoch -v uid --uid={uid} -t 1000000 '*:V'");
    let dump_bytes = adb_cmd(&["-s", &serial, "shell", &bare_command])
        .stdout
        .len();

    let mut warm = Vec::new();
    let mut cli = Vec::new();
    for _ in 0..ROUNDS {
        let start = Instant::now();
        let result = call().await;
        warm.push(start.elapsed());
        assert_eq!(result["shown"], first["shown"]);

        let start = Instant::now();
        let output = adb_cmd(&["-s", &serial, "shell", &bare_command]);
        cli.push(start.elapsed());
        assert!(output.status.success());
    }
    let (warm, cli) = (median(warm), median(cli));
    println!(
        "dump: {dump_bytes} bytes; the call shows {} lines, {} left out",
        first["shown"], first["left_out"]
    );
    println!("median of {ROUNDS}: warm `phone_logs` over stdio (phonelogs-mcp, release) {warm:?}");
    println!("median of {ROUNDS}: bare `adb -s SERIAL shell 'logcat -d …'` {cli:?}");
    println!(
        "ratio phone_logs / adb shell = {:.2}x (goal: 1.2x or less)",
        warm.as_secs_f64() / cli.as_secs_f64()
    );
    let _ = client.cancel().await;
    let _ = adb_cmd(&["kill-server"]);
}
