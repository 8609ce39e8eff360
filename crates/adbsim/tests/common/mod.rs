//! Shared helpers: a private real adb server with a temporary HOME, and a simulator to connect.

#![allow(dead_code, clippy::unwrap_used)]

use std::net::TcpListener;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use phonelogs_adbsim::{SimHandle, SimPhone, Simulator};

/// Finds `adb` on PATH, or prints why the test is skipped.
pub fn adb_path(test: &str) -> Option<String> {
    let output = Command::new("sh")
        .arg("-c")
        .arg("command -v adb")
        .output()
        .ok()?;
    let path = String::from_utf8_lossy(&output.stdout).trim().to_string();
    if path.is_empty() {
        eprintln!(
            "SKIPPED {test}: `adb` is not installed (apt-get install -y adb); CI installs it"
        );
        None
    } else {
        Some(path)
    }
}

/// A free loopback port.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A private adb server, killed on drop.
pub struct AdbServer {
    pub adb: String,
    pub port: u16,
    pub home: tempfile::TempDir,
}

impl AdbServer {
    pub fn start(adb: String) -> Self {
        let home = tempfile::tempdir().unwrap();
        let port = free_port();
        let server = Self { adb, port, home };
        let output = server.run(&["start-server"]);
        assert!(output.status.success(), "start-server failed: {output:?}");
        server
    }

    pub fn command(&self) -> Command {
        let mut command = Command::new(&self.adb);
        command
            .env("HOME", self.home.path())
            .env_remove("ANDROID_ADB_SERVER_PORT")
            .env_remove("ADB_SERVER_SOCKET");
        command.arg("-P").arg(self.port.to_string());
        command
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command().args(args).output().unwrap()
    }

    /// `adb connect`s the simulator and waits until it is a `device`.
    pub fn connect(&self, serial: &str) {
        let output = self.run(&["connect", serial]);
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(
            text.contains("connected to"),
            "connect said: {text} {output:?}"
        );
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let state = self.run(&["-s", serial, "get-state"]);
            if String::from_utf8_lossy(&state.stdout).trim() == "device" {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "device never became ready: {state:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `adb -s serial shell <command>`: stdout, stderr, exit code.
    pub fn shell(&self, serial: &str, command: &str) -> (String, String, i32) {
        let output = self.run(&["-s", serial, "shell", command]);
        (
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
            output.status.code().unwrap_or(-1),
        )
    }
}

impl Drop for AdbServer {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

/// A runtime with the simulator listening for one phone.
pub struct RunningSim {
    pub runtime: tokio::runtime::Runtime,
    pub serial: String,
    pub handle: Option<SimHandle>,
}

impl RunningSim {
    pub fn start(phone: SimPhone) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let (address, handle) = runtime
            .block_on(Simulator::bind_loopback(None, phone))
            .unwrap();
        Self {
            runtime,
            serial: address.to_string(),
            handle: Some(handle),
        }
    }
}

impl Drop for RunningSim {
    fn drop(&mut self) {
        if let Some(handle) = self.handle.take() {
            self.runtime.block_on(handle.shutdown());
        }
    }
}
