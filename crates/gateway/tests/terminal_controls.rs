//! Controls in an app's log text never reach a reader as controls (the final review of issue
//! 28, findings 3 and 4): Python's other line boundaries (FS, GS, RS) split a message like any
//! line end, and ESC and the other controls are shown as `\xNN`, so `phonelogs logs` never
//! hands the person's terminal an escape sequence.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use phonelogs_gateway::{LogsResponse, Status};

/// The development app logs one line holding `message`; the agent reads its logs (`ok`).
async fn read_message(message: &str) -> LogsResponse {
    use phonelogs_driver::{AppId, LogLevel};
    let phone = phone();
    phone.add_logs(
        &device(),
        &AppId::new(DEV_APP),
        vec![line(30.0, LogLevel::Info, "T", message, 10123)],
    );
    let gateway = gateway(&phone);
    let got = task(&gateway, "agent").logs(logs(DEV_APP)).await;
    assert_eq!(got.status, Status::Ok, "{}", got.message);
    got
}

/// `lines::is_line_end` says it covers Python's `str.splitlines`, which also ends a line at
/// FS, GS and RS (U+001C..U+001E: `'a\x1cb'.splitlines() == ['a', 'b']`). An app's message
/// with one passes into the rendered log, and a Python client (the `mcp` SDK's agents) that
/// splits the result's `log` into lines reads a forged line of another time and tag.
#[tokio::test]
async fn a_python_line_boundary_in_a_message_does_not_forge_a_line() {
    let got =
        read_message("ok\u{1c}09:00:00.000 ActivityManager: Start proc com.chase.sig.android")
            .await;
    for ch in ['\u{1c}', '\u{1d}', '\u{1e}'] {
        assert!(
            !got.log.contains(ch),
            "the log holds {ch:?}, a line end to Python's splitlines: {:?}",
            got.log
        );
    }
}

/// A terminal is one of the readers item 8 names (tests/line_ends.rs: "a model, a terminal, a
/// browser"), and `phonelogs logs` prints the result's `log` as it is to the person's terminal
/// (crates/console/src/logs_cmd.rs, `read` and `show`). An app's message with ESC sequences (cursor
/// up, erase line) rewrites the line above it there: a forged line of another time and tag.
#[tokio::test]
async fn an_escape_sequence_in_a_message_does_not_reach_the_log() {
    let got = read_message("ok\u{1b}[1A\u{1b}[2K11:00:03.500 CrashTest: saved").await;
    assert!(
        !got.log.contains('\u{1b}'),
        "the log holds ESC, which the person's terminal obeys: {:?}",
        got.log
    );
    // Shown, not dropped: the agent and the person read what the app wrote.
    assert!(
        got.log.contains("ok\\x1b[1A\\x1b[2K11:00:03.500"),
        "{:?}",
        got.log
    );
}
