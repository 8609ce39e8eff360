//! The real Claude Code CLI (`@anthropic-ai/claude-code` from npm, offline, with a HOME of its
//! own) adds `phonelogs-mcp` and checks it (`claude mcp add`, `claude mcp list`): it connects,
//! and the `tools/list` it reads gives `phone_logs` and `capture_native_backtrace`
//! `_meta["anthropic/maxResultSizeChars"]`, the size the one-cut property test bounds
//! (`crates/mcp/tests/one_cut.rs`), so Claude Code passes their results whole instead of saving
//! them to a file. The traffic is recorded by a wrapper between the CLI and the server.
//!
//! The CLI is found the shared way (`bins/phonelogs/tests/support/client_clis.rs`): skipped
//! with the reason printed where it is missing, a failure under
//! `PHONELOGS_REQUIRE_CLIENT_CLIS=1` (CI).

// Test helpers unwrap: a failure there is a failing test, which is what it should be.
#![allow(clippy::unwrap_used)]

#[path = "../../phonelogs/tests/support/client_clis.rs"]
mod client_clis;

use std::path::Path;
use std::time::Duration;

use client_clis::{client_cli, client_command, run_with_limit};
use phonelogs_gateway::MAX_RESULT_BYTES;
use phonelogs_mcp_frontend::render::{MAX_RESULT_SIZE_KEY, max_result_chars};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_phonelogs-mcp");

/// Runs the CLI with its own HOME, in `dir`, offline.
fn run(claude: &Path, home: &Path, dir: &Path, args: &[&str]) -> (bool, String) {
    let mut command = client_command(claude, home, dir);
    command.args(args);
    let output = run_with_limit(command, Duration::from_secs(120));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

#[test]
fn claude_code_connects_and_reads_the_result_size_each_tool_declares() {
    let Some(claude) = client_cli("claude") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let (home, project) = (work.path().join("home"), work.path().join("project"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    // The server behind a recorder of what it answers.
    let answers = work.path().join("answers.jsonl");
    let wrapper = work.path().join("phonelogs-mcp.sh");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\n'{BIN}' --demo=fake --state-dir '{}' 2>/dev/null | tee -a '{}'\n",
            work.path().join("state").display(),
            answers.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();

    let wrapper = wrapper.to_str().unwrap();
    let (added, text) = run(
        &claude,
        &home,
        &project,
        &["mcp", "add", "phonelogs", "--", wrapper],
    );
    assert!(added, "claude mcp add: {text}");
    let (listed, text) = run(&claude, &home, &project, &["mcp", "list"]);
    assert!(listed, "claude mcp list: {text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("phonelogs:") && l.contains("Connected")),
        "claude mcp list: {text}"
    );

    // What the server answered Claude Code's `tools/list`.
    let recorded = std::fs::read_to_string(&answers).unwrap();
    let tools: Vec<Value> = recorded
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find_map(|message| message["result"]["tools"].as_array().cloned())
        .unwrap_or_else(|| panic!("Claude Code asked for no tools: {recorded}"));
    let declared = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| t["_meta"][MAX_RESULT_SIZE_KEY].clone())
    };
    let size = Value::from(max_result_chars(MAX_RESULT_BYTES));
    assert_eq!(declared("phone_logs"), Some(size.clone()));
    assert_eq!(declared("capture_native_backtrace"), Some(size));
    assert_eq!(declared("list_devices"), Some(Value::Null));
    assert!(max_result_chars(MAX_RESULT_BYTES) > 50_000);
}
