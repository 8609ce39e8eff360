//! What this package's benches and its real-adb tests (`tests/debug_real_adb.rs`,
//! `tests/symbols_real_adb.rs`, `tests/results_real_adb.rs` and the HTTP load's `tests/http_support`, which include this
//! file) share: a private real adb server, the
//! simulated phone behind it, and a real MCP client (rmcp) driving this package's
//! `phonelogs-mcp` over stdio.

#![allow(dead_code)]

/// How many rounds to run and how loaded the machine was: the Android benches' own, not a copy.
#[path = "../../../../crates/android/benches/common/measure.rs"]
mod measure;

#[allow(unused_imports)]
pub use measure::{HostCpu, quick, rounds};

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use phonelogs_adbsim::{SimHandle, SimPhone, Simulator};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient};

pub const BIN: &str = env!("CARGO_BIN_EXE_phonelogs-mcp");

/// The agent's client: it answers nothing (the app is a development build: no question).
#[derive(Clone, Default)]
pub struct Agent;

impl ClientHandler for Agent {}

/// A `phone_logs` call through `client`: the structured result and the text content.
pub async fn phone_logs<H: ClientHandler>(
    client: &RunningService<RoleClient, H>,
    arguments: serde_json::Value,
) -> (serde_json::Value, String) {
    let arguments = arguments.as_object().cloned().unwrap_or_default();
    let result = client
        .call_tool(rmcp::model::CallToolRequestParams::new("phone_logs").with_arguments(arguments))
        .await
        .expect("phone_logs call");
    let text = result
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .map(|t| t.text.clone())
        .collect();
    (
        result.structured_content.unwrap_or(serde_json::Value::Null),
        text,
    )
}

pub fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// Runs `bench` on a two-thread runtime, or says it is skipped where adb is not installed.
pub fn run_with_adb<F: Future<Output = ()>>(bench: impl FnOnce(PathBuf) -> F) {
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
    runtime.block_on(bench(adb.to_owned()));
}

/// A real adb server of its own, on a free loopback port, with its own HOME; killed on drop.
pub struct PrivateAdb {
    pub adb: PathBuf,
    pub home: tempfile::TempDir,
    pub port: u16,
}

impl PrivateAdb {
    /// A private server of Debian's `/usr/bin/adb`, or `None` (the test says it is skipped)
    /// where adb is not installed.
    pub fn start_if_installed() -> Option<PrivateAdb> {
        let adb = Path::new("/usr/bin/adb");
        if !adb.is_file() {
            eprintln!(
                "skipped: {} is not installed (CI installs the adb package)",
                adb.display()
            );
            return None;
        }
        Some(PrivateAdb::start(adb.to_owned()))
    }

    pub fn start(adb: PathBuf) -> PrivateAdb {
        let home = tempfile::tempdir().expect("a temporary HOME");
        let port = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
            listener.local_addr().expect("its address").port()
        };
        let server = PrivateAdb { adb, home, port };
        assert!(server.cmd(&["start-server"]).status.success());
        server
    }

    /// `host:port`, as `--adb-server` takes it and as its phones' names start.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// `adb -P PORT …` with this server's HOME, not yet run.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.adb);
        command
            .arg("-P")
            .arg(self.port.to_string())
            .args(args)
            .env("HOME", self.home.path())
            .env("ANDROID_USER_HOME", self.home.path().join(".android"));
        command
    }

    pub fn cmd(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("adb runs")
    }

    /// Serves `phone` on a loopback port and connects this server to it: its serial, and the
    /// handle that keeps it served.
    pub async fn connect(&self, phone: SimPhone) -> (String, SimHandle) {
        let (address, handle) = Simulator::bind_loopback(None, phone)
            .await
            .expect("the simulator listens");
        let serial = format!("127.0.0.1:{}", address.port());
        // On a loaded machine the first handshake may time out: try a few times.
        let mut output = self.cmd(&["connect", &serial]);
        for _ in 0..4 {
            if String::from_utf8_lossy(&output.stdout).contains("connected to") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
            output = self.cmd(&["connect", &serial]);
        }
        assert!(
            String::from_utf8_lossy(&output.stdout).contains("connected"),
            "adb connect: {output:?}"
        );
        for _ in 0..100 {
            let listing = String::from_utf8_lossy(&self.cmd(&["devices"]).stdout).into_owned();
            if listing.lines().any(|line| {
                line.split_whitespace().collect::<Vec<_>>() == [serial.as_str(), "device"]
            }) {
                return (serial, handle);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the adb server never listed {serial} as a device");
    }

    /// `phonelogs-mcp` with its state in `state`, reaching phones through this server, and an
    /// MCP session open with it.
    pub async fn mcp(&self, state: &Path) -> RunningService<RoleClient, Agent> {
        let mut command = tokio::process::Command::new(BIN);
        command
            .arg("--state-dir")
            .arg(state)
            .env("ANDROID_ADB_SERVER_PORT", self.port.to_string())
            .env_remove("ADB_SERVER_SOCKET")
            // No usbmuxd here: the iPhone driver finds none and stays out of the way.
            .env("USBMUXD_SOCKET_ADDRESS", "127.0.0.1:1")
            .stderr(Stdio::null());
        Agent
            .serve_with_lifecycle(
                TokioChildProcess::new(command).expect("phonelogs-mcp starts"),
                ClientLifecycleMode::Initialize,
            )
            .await
            .expect("the MCP session opens")
    }
}

impl Drop for PrivateAdb {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
    }
}
