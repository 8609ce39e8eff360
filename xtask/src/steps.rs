//! What both device runs use (`emulator_test.rs` for Android, `sim_ios.rs` for the iPhone): the
//! step counter and its summary line, cargo run in the workspace, polling with a deadline, and the
//! workspace's root folder.

use std::ffi::OsString;
use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};

use crate::process;

/// How long a cargo build and test run may take on two cores.
const CARGO: Duration = Duration::from_secs(30 * 60);

/// Counts and prints steps.
#[derive(Debug, Default)]
pub(crate) struct Report {
    number: usize,
    passed: usize,
    failed: usize,
}

impl Report {
    /// Runs one step, printing its name first and its outcome after.
    pub(crate) fn step<T>(
        &mut self,
        name: impl Display,
        action: impl FnOnce() -> Result<T>,
    ) -> Option<T> {
        self.number += 1;
        println!("[{}] {name}", self.number);
        match action() {
            Ok(value) => {
                self.passed += 1;
                println!("    ok");
                Some(value)
            }
            Err(error) => {
                self.failed += 1;
                println!("    FAILED: {error:#}");
                None
            }
        }
    }

    pub(crate) fn note(&self, text: impl Display) {
        println!("    {text}");
    }

    pub(crate) fn close(&self) -> ExitCode {
        println!(
            "emulator-test: {} passed, {} failed",
            self.passed, self.failed
        );
        if self.failed == 0 && self.passed > 0 {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        }
    }
}

/// Builds `phonelogs` and `phonelogs-mcp` as `cargo test --workspace` builds them (for their
/// integration tests): dev-dependencies turn on more features of shared crates (tokio, rmcp), so
/// a plain `cargo build -p …` would rebuild most of the workspace after the tests, as in CI.
pub(crate) fn build_programs(workspace: &Path) -> Result<()> {
    cargo(workspace, &["test", "--workspace", "--no-run"], &[])
}

/// Runs cargo in the workspace, its output shown as it comes.
pub(crate) fn cargo(workspace: &Path, args: &[&str], vars: &[(&str, &str)]) -> Result<()> {
    let program = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    let mut command = Command::new(program);
    command.current_dir(workspace).args(args);
    for (key, value) in vars {
        command.env(key, value);
    }
    process::run_visible(&mut command, CARGO)
}

/// Polls `done` every half second until it says yes or `timeout` passes.
pub(crate) fn wait_for(
    timeout: Duration,
    what: &str,
    mut done: impl FnMut() -> Result<bool>,
) -> Result<()> {
    let deadline = Instant::now() + timeout;
    loop {
        if done()? {
            return Ok(());
        }
        if Instant::now() >= deadline {
            bail!("no {what} within {} s", timeout.as_secs());
        }
        thread::sleep(Duration::from_millis(500));
    }
}

/// The workspace's root folder: xtask lives one level below it.
pub(crate) fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}
