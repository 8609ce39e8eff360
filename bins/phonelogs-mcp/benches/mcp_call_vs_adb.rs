//! The whole `phone_logs` call over stdio against a bare `adb -s <serial> shell 'logcat -d …'`,
//! side by side in one run. A real MCP client (rmcp) drives this package's `phonelogs-mcp`
//! (built with the bench profile, i.e. release), which reaches the simulated phone holding 2 MiB
//! of the app's lines through a private real adb server. The call is warm (the server has
//! looked the app up once) and asks for what an agent gets by default: the newest 200 lines.
//! Prints the medians and the ratio. Every round checks that the call repeats the first one's
//! lines (its log text, and the shown and left-out counts), not the cursor or the time.
//!
//! Run: `cargo bench -p phonelogs-mcp --bench mcp_call_vs_adb` (needs `/usr/bin/adb`).
//! `cargo test -p phonelogs-mcp --benches` runs one round with the debug build and judges no
//! figure (CI).

mod common;

use std::time::Instant;

use common::{HostCpu, PrivateAdb, median, rounds, run_with_adb};
use phonelogs_adbsim::{Buffer, SimPhone};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use serde_json::{Value, json};

const ROUNDS: usize = 15;
const DUMP_BYTES: usize = 2 * 1024 * 1024;
const APP: &str = "dev.phonelogs.crashtest";

fn main() {
    run_with_adb(run);
}

async fn run(adb: std::path::PathBuf) {
    let state = tempfile::tempdir().expect("a state directory");
    let server = PrivateAdb::start(adb);
    let phone = SimPhone::default_phone();
    phone.set_noise_rate(0.0);
    phone
        .fill_log(APP, Buffer::Main, DUMP_BYTES)
        .expect("the app runs");
    let (serial, _handle) = server.connect(phone.clone()).await;
    let client = server.mcp(state.path()).await;
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
    let dump_bytes = server
        .cmd(&["-s", &serial, "shell", &bare_command])
        .stdout
        .len();

    let mut warm = Vec::new();
    let mut cli = Vec::new();
    let rounds = rounds(ROUNDS);
    let host = HostCpu::now();
    for _ in 0..rounds {
        let start = Instant::now();
        let result = call().await;
        warm.push(start.elapsed());
        for field in ["status", "log", "shown", "left_out"] {
            assert_eq!(result[field], first[field], "{field}");
        }

        let start = Instant::now();
        let output = server.cmd(&["-s", &serial, "shell", &bare_command]);
        cli.push(start.elapsed());
        assert!(output.status.success());
    }
    let (warm, cli) = (median(warm), median(cli));
    println!("{}", HostCpu::since(host));
    println!(
        "dump: {dump_bytes} bytes; the call shows {} lines, {} left out",
        first["shown"], first["left_out"]
    );
    println!("median of {rounds}: warm `phone_logs` over stdio (phonelogs-mcp) {warm:?}");
    println!("median of {rounds}: bare `adb -s SERIAL shell 'logcat -d …'` {cli:?}");
    println!(
        "ratio phone_logs / adb shell = {:.2}x (goal: 1.0x or less)",
        warm.as_secs_f64() / cli.as_secs_f64()
    );
    let _ = client.cancel().await;
}
