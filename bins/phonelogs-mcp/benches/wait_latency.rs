//! How soon a wait returns: the time from the simulated phone writing the awaited line to the
//! `phone_logs(since: "last", wait_for: …)` result reaching a real MCP client (rmcp) over stdio
//! from this package's `phonelogs-mcp` (built with the bench profile, i.e. release), beside a
//! bare streaming `adb -P PORT -s SERIAL logcat` process reading the same line, in the same run,
//! through the same private real adb server. Prints both medians. Goal: under 150 ms for the
//! call.
//!
//! Run: `cargo bench -p phonelogs-mcp --bench wait_latency` (needs `/usr/bin/adb`).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use phonelogs_adbsim::{Priority, SimPhone, Simulator};
use rmcp::ClientHandler;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

const BIN: &str = env!("CARGO_BIN_EXE_phonelogs-mcp");
const ROUNDS: usize = 25;
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

/// Waits until the phone has `count` logcat commands running.
async fn streams_reach(phone: &SimPhone, count: usize) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while phone.open_logcat_streams() < count {
        assert!(
            Instant::now() < deadline,
            "the logcat stream never opened: {} open, {count} wanted; commands run: {:?}",
            phone.open_logcat_streams(),
            phone
                .commands_run()
                .iter()
                .rev()
                .take(3)
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

async fn run(adb: &Path) {
    let home = tempfile::tempdir().expect("a temporary HOME");
    let state = tempfile::tempdir_in(
        std::env::var_os("BENCH_STATE_PARENT")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(std::env::temp_dir),
    )
    .expect("a state directory");
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
    let pid = phone.launch(APP).expect("the app starts");
    let uid = phone.uid_of(APP, 0).expect("installed");
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
    let peer = client.peer().clone();
    let call = move |arguments: Value| {
        let peer = peer.clone();
        async move {
            let result: CallToolResult = peer
                .call_tool(
                    CallToolRequestParams::new("phone_logs")
                        .with_arguments(arguments.as_object().cloned().unwrap_or_default()),
                )
                .await
                .expect("phone_logs answers");
            result.structured_content.unwrap_or(Value::Null)
        }
    };
    let first = call(json!({ "app": APP, "device": serial, "since": "last" })).await;
    assert_eq!(first["status"], "ok", "{first}");

    // The bare reader: one streaming logcat of the app's uid for the whole run, each line's
    // arrival noted. `adb logcat` first; the simulator's shell does not run the `export …;
    // exec logcat …` line adb wraps it in, so there the same logcat goes through `adb shell`.
    let logcat_args = |via_shell: bool| {
        let mut args: Vec<String> = vec!["-s".into(), serial.clone()];
        if via_shell {
            args.push("shell".into());
        }
        args.extend(["logcat", "-v", "epoch", "-v", "uid"].map(String::from));
        args.push(format!("--uid={uid}"));
        args.extend(["-T", "1"].map(String::from));
        args
    };
    let (seen_tx, mut seen_rx) = tokio::sync::mpsc::unbounded_channel::<(String, Instant)>();
    let mut bare = None;
    let mut bare_name = "";
    for (via_shell, name) in [
        (false, "adb -s SERIAL logcat"),
        (true, "adb -s SERIAL shell logcat"),
    ] {
        let mut child = tokio::process::Command::new(adb)
            .arg("-P")
            .arg(port.to_string())
            .args(logcat_args(via_shell))
            .env("HOME", home.path())
            .env("ANDROID_USER_HOME", home.path().join(".android"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("adb logcat starts");
        let deadline = Instant::now() + Duration::from_millis(1500);
        while phone.open_logcat_streams() == 0 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        if phone.open_logcat_streams() == 0 {
            let _ = child.kill().await;
            continue;
        }
        let stdout = child.stdout.take().expect("its stdout");
        let seen_tx = seen_tx.clone();
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(at) = line.find("MARK-") {
                    let _ = seen_tx.send((line[at..].trim().to_owned(), Instant::now()));
                }
            }
        });
        bare = Some(child);
        bare_name = name;
        break;
    }
    let mut bare = bare.expect("a bare streaming logcat runs");
    let baseline = phone.open_logcat_streams();

    let mut through_mcp = Vec::new();
    let mut through_adb = Vec::new();
    for round in 0..ROUNDS {
        let mark = format!("MARK-{round}");
        let waiting = tokio::spawn(call(json!({
            "app": APP, "device": serial, "since": "last", "wait_for": mark, "timeout": 10,
        })));
        // The wait's own streaming logcat is open on the phone: write the line now.
        streams_reach(&phone, baseline + 1).await;
        let written = Instant::now();
        phone
            .log_pid(pid, Priority::Info, "CrashTest", &mark)
            .expect("the app logs");
        let result = waiting.await.expect("the call task");
        through_mcp.push(written.elapsed());
        assert_eq!(result["matched"], true, "{result}");
        loop {
            let (seen, at) = seen_rx.recv().await.expect("adb logcat runs");
            if seen == mark {
                through_adb.push(at.duration_since(written));
                break;
            }
        }
        // The call's stream closes with the call.
        let deadline = Instant::now() + Duration::from_secs(5);
        while phone.open_logcat_streams() > baseline && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }
    let (mcp, adb_line) = (median(through_mcp), median(through_adb));
    println!(
        "median of {ROUNDS}: line written -> `phone_logs` wait result at the MCP client {mcp:?} (goal: under 150 ms)"
    );
    println!(
        "median of {ROUNDS}: line written -> bare streaming `{bare_name}` prints it {adb_line:?}"
    );
    println!(
        "open logcat streams after the run: {} (the bare one: {baseline})",
        phone.open_logcat_streams()
    );
    let _ = bare.kill().await;
    let _ = client.cancel().await;
    let _ = adb_cmd(&["kill-server"]);
}
