//! Helpers shared by the tests that need outside tools (javac, proguard, cc, binutils).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether `tool` can be run; when it cannot, prints why the test skips, or fails the test
/// when `PHONELOGS_REQUIRE_SYMBOL_TOOLS=1` (CI sets it).
pub fn have(tool: &str) -> bool {
    let found = Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {tool}"))
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        if std::env::var("PHONELOGS_REQUIRE_SYMBOL_TOOLS").as_deref() == Ok("1") {
            panic!("{tool} is missing and PHONELOGS_REQUIRE_SYMBOL_TOOLS=1");
        }
        eprintln!(
            "skipped: {tool} is not installed (apt-get install default-jdk-headless proguard-cli binutils gcc)"
        );
    }
    found
}

/// Runs a command, failing the test with its output when it fails; returns stdout.
pub fn run(command: &mut Command) -> String {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The repository's root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}
