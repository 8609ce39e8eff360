//! How soon a wait returns: the time from the simulated phone writing the awaited line to the
//! `phone_logs(since: "last", wait_for: …)` result reaching a real MCP client (rmcp) over stdio
//! from this package's `phonelogs-mcp` (built with the bench profile, i.e. release), beside a
//! bare streaming `adb -P PORT -s SERIAL logcat` process reading the same line, in the same run,
//! through the same private real adb server. Prints both medians. Goal: under 150 ms for the
//! call.
//!
//! Run: `cargo bench -p phonelogs-mcp --bench wait_latency` (needs `/usr/bin/adb`).
//! `cargo test -p phonelogs-mcp --benches` runs one round and judges no figure (CI).

mod common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{PrivateAdb, median, rounds, run_with_adb};
use phonelogs_adbsim::{Priority, SimPhone};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

const ROUNDS: usize = 25;
const APP: &str = "dev.phonelogs.crashtest";

fn main() {
    run_with_adb(run);
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

async fn run(adb: std::path::PathBuf) {
    let state = tempfile::tempdir_in(
        std::env::var_os("BENCH_STATE_PARENT")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(std::env::temp_dir),
    )
    .expect("a state directory");
    let server = PrivateAdb::start(adb);

    let phone = SimPhone::default_phone();
    phone.set_noise_rate(0.0);
    let pid = phone.launch(APP).expect("the app starts");
    let uid = phone.uid_of(APP, 0).expect("installed");
    let (serial, _handle) = server.connect(phone.clone()).await;
    let client = server.mcp(state.path()).await;
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
        let args = logcat_args(via_shell);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut child = tokio::process::Command::from(server.command(&args))
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
    let rounds = rounds(ROUNDS);
    for round in 0..rounds {
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
        "median of {rounds}: line written -> `phone_logs` wait result at the MCP client {mcp:?} (goal: under 150 ms)"
    );
    println!(
        "median of {rounds}: line written -> bare streaming `{bare_name}` prints it {adb_line:?}"
    );
    println!(
        "open logcat streams after the run: {} (the bare one: {baseline})",
        phone.open_logcat_streams()
    );
    let _ = bare.kill().await;
    let _ = client.cancel().await;
}
