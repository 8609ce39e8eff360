//! The MCP clients' own command lines (`claude` from `@anthropic-ai/claude-code`, `codex` from
//! `@openai/codex`, `gemini` from `@google/gemini-cli`), which run here offline and check our
//! work as a user's client would. Shared by every test that drives them: include it with
//! `#[path = "…/bins/phonelogs/tests/support/client_clis.rs"] mod client_clis;`.
//!
//! Where they are found: the folder `$PHONELOGS_CLIENT_CLIS` names (a `node_modules/.bin`),
//! else `target/client-clis/node_modules/.bin` (where `.ci/run` installs the pinned versions),
//! else PATH. A missing one skips the test with the reason printed; `.ci/run` sets
//! `PHONELOGS_REQUIRE_CLIENT_CLIS=1`, which turns that into a failure.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The client's program, or `None` (with the reason printed) when it is not installed.
pub fn client_cli(name: &str) -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut folders: Vec<PathBuf> = Vec::new();
    if let Some(dir) = std::env::var_os("PHONELOGS_CLIENT_CLIS") {
        folders.push(PathBuf::from(dir));
    }
    folders.push(root.join("target/client-clis/node_modules/.bin"));
    if let Some(path) = std::env::var_os("PATH") {
        folders.extend(std::env::split_paths(&path));
    }
    if let Some(found) = folders.iter().map(|d| d.join(name)).find(|p| p.is_file()) {
        return Some(found);
    }
    let why = format!(
        "skipping: `{name}` is not installed (`bash .ci/run` installs the pinned MCP clients into target/client-clis; or set PHONELOGS_CLIENT_CLIS to a node_modules/.bin holding claude, codex and gemini)"
    );
    if std::env::var("PHONELOGS_REQUIRE_CLIENT_CLIS").is_ok_and(|v| v == "1") {
        panic!("PHONELOGS_REQUIRE_CLIENT_CLIS=1 but {why}");
    }
    eprintln!("{why}");
    None
}

/// A command for a client with `home` as its home (so nothing of the real user's is read or
/// written), in `dir`, with the variables that would point it elsewhere removed and its
/// network chatter off.
pub fn client_command(program: &Path, home: &Path, dir: &Path) -> Command {
    let mut command = Command::new(program);
    command
        .current_dir(dir)
        .env("HOME", home)
        .env("USERPROFILE", home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .env_remove("XDG_DATA_HOME")
        .env_remove("CODEX_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("GEMINI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null());
    command
}

/// Runs a command to its end, or kills it after `limit` (a client that hangs fails the test
/// rather than the run).
pub fn run_with_limit(mut command: Command, limit: Duration) -> Output {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the client");
    let started = Instant::now();
    loop {
        if child.try_wait().expect("wait for the client").is_some() {
            return child.wait_with_output().expect("read the client's output");
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("read the client's output");
            panic!(
                "the client did not finish within {limit:?}: {:?}\n{}\n{}",
                command,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
