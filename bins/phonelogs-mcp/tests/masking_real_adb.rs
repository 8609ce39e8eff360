//! Issue 37's "done when", end to end: a real MCP client (rmcp over stdio) drives
//! `phonelogs-mcp`, which reads the simulated phone through a private REAL adb server. The app
//! logs a PEM private key one line at a time and keys of a dozen common shapes followed by
//! punctuation, and crashes with a key in its exception's message. No read of the agent's
//! (default, `limit`, `since`, `since: "last"`, `exclude`, `filter` on a piece of a key, `tag`,
//! `fold: false`, `context`, `wait_for` on a redaction, crashes grouped and single) shows any
//! of them raw, and a filter on a piece of a masked key matches nothing.
//!
//! Skipped, with the reason printed, when `/usr/bin/adb` is not installed (CI installs it).

// Test helpers unwrap: a failure there is a failing test, which is what it should be.
#![allow(clippy::unwrap_used)]

#[path = "../benches/common/mod.rs"]
mod common;

use common::PrivateAdb;
use phonelogs_adbsim::{Priority, SimPhone};
use serde_json::{Value, json};

const CRASH_TEST: &str = "dev.phonelogs.crashtest";

/// Keys of a dozen common shapes and the text around each, as apps write them. The gitleaks
/// ones are gitleaks' own true-positive samples (`testdata/secrets/gitleaks-samples.json`);
/// the rest are made for this test, not real.
const KEYS: [(&str, &str, &str); 12] = [
    (
        "Pay",
        "init(key=",
        "sk_test_51OuEMLAlTWGaDypq4P5cuDHbuKeG4tAGPYHJpEXQ7zE8mKK3jkhTFPvCxnSSK5zB5EQZrJsYdsatNmAHGgb0vSKD00GTMSWRHs",
    ),
    ("Aws", "creds [", "AKIALALEMEL33243OLIB"),
    (
        "Slack",
        "tokens: [\"",
        "xoxb-781236542736-2364535789652-GkwFDQoHqzXDVsC6GzqYUypD",
    ),
    (
        "Ai",
        "openai(",
        "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",
    ),
    (
        "Ai",
        "claude key ",
        "sk-ant-api03-abc123xyz-456def789ghij-klmnopqrstuvwx-3456yza789bcde-1234fghijklmnopby56aaaogaopaaaabc123xyzAA",
    ),
    (
        "Maps",
        "maps(key='",
        "AIzaSyNHxIf32IQ1a1yjl3ZJIqKZqzLAK1XhDk-",
    ),
    (
        "Hook",
        "posting to ",
        "https://hooks.slack.com/services/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",
    ),
    (
        "Sentry",
        "dsn token ",
        "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",
    ),
    (
        "Hf",
        "login --token ",
        "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",
    ),
    (
        "Auth",
        "session refreshed, id_token ",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk",
    ),
    (
        "Net",
        "GET /v1/feed Authorization: Bearer ",
        "tok3n-9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    ),
    ("Login", "login(user=ann, password=", "hunter2-Secret-991"),
];
/// What follows each key, in turn.
const AFTER: [&str; 6] = [")", ",", "].", "&next=1", "\u{2026}", "'"];

/// A PEM private key's lines, made for this test (not a real key); its last body line shorter.
const PEM: [&str; 5] = [
    "-----BEGIN PRIVATE KEY-----",
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj",
    "MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu",
    "NMoSfm76oqFvAp8Gy0iz5sxjZmSn==",
    "-----END PRIVATE KEY-----",
];

/// Every raw secret the app logs: the keys, and the key's body lines.
fn secrets() -> Vec<&'static str> {
    let mut all: Vec<&str> = KEYS.iter().map(|(_, _, key)| *key).collect();
    all.extend(&PEM[1..4]);
    all
}

/// Asserts that no secret, nor its first 16 characters, is anywhere in a result.
fn assert_masked(what: &str, structured: &Value, text: &str) {
    let whole = format!("{structured}\n{text}");
    for secret in secrets() {
        let piece = &secret[..16];
        assert!(!whole.contains(piece), "{what} showed {piece}: {whole}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_read_shows_a_key_or_a_key_blocks_line_through_a_real_client() {
    let Some(server) = PrivateAdb::start_if_installed() else {
        return;
    };
    let phone = SimPhone::default_phone();
    phone.set_noise_rate(0.0);
    let (_serial, _handle) = server.connect(phone.clone()).await;
    let state = tempfile::tempdir().unwrap();
    let client = server.mcp(state.path()).await;
    let _ = client.list_all_tools().await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let log = |tag: &str, text: &str| phone.log(CRASH_TEST, Priority::Info, tag, text).unwrap();
    for (i, (tag, before, key)) in KEYS.iter().enumerate() {
        log(tag, &format!("{before}{key}{}", AFTER[i % AFTER.len()]));
        log("Sync", "retrying");
    }
    // The key's first line: a wait for its redaction ends on it.
    log("Keys", PEM[0]);
    let (waited, text) = common::phone_logs(
        &client,
        json!({ "app": CRASH_TEST, "since": "1m", "wait_for": "[redacted:private-key]", "timeout": 10 }),
    )
    .await;
    assert_eq!(waited["matched"], true, "{waited}");
    assert_masked("wait_for", &waited, &text);
    // The rest comes one line at a time, each read with since: "last" as it comes.
    for line in &PEM[1..] {
        log("Keys", line);
        let (next, text) =
            common::phone_logs(&client, json!({ "app": CRASH_TEST, "since": "last" })).await;
        assert_eq!(next["shown"], 1, "{next}");
        assert!(
            next["log"]
                .as_str()
                .unwrap()
                .contains("Keys: [redacted:private-key]"),
            "{next}"
        );
        assert_masked("since: last", &next, &text);
    }
    log("Keys", "key stored");

    // Every other way to read.
    let piece_of_a_key = &KEYS[0].2[8..24];
    let piece_of_a_body_line = &PEM[2][10..30];
    let reads = [
        json!({ "app": CRASH_TEST }),
        json!({ "app": CRASH_TEST, "since": "1m" }),
        json!({ "app": CRASH_TEST, "since": "1m", "limit": 2 }),
        json!({ "app": CRASH_TEST, "since": "1m", "limit": 4 }),
        json!({ "app": CRASH_TEST, "since": "1m", "exclude": "-----BEGIN" }),
        json!({ "app": CRASH_TEST, "since": "1m", "exclude": "/Sync|END/" }),
        json!({ "app": CRASH_TEST, "since": "1m", "tag": ["Keys", "Pay", "Ai", "Login"] }),
        json!({ "app": CRASH_TEST, "since": "1m", "fold": false }),
        json!({ "app": CRASH_TEST, "since": "1m", "filter": "redacted" }),
    ];
    for read in reads {
        let (result, text) = common::phone_logs(&client, read.clone()).await;
        assert_eq!(result["status"], "ok", "{read}: {result}");
        assert_masked(&read.to_string(), &result, &text);
    }
    // A filter on a piece of a masked key or body line matches nothing.
    for probe in [
        piece_of_a_key,
        piece_of_a_body_line,
        "BEGIN PRIVATE KEY-----\nMII",
    ] {
        let (result, text) = common::phone_logs(
            &client,
            json!({ "app": CRASH_TEST, "since": "1m", "filter": probe }),
        )
        .await;
        assert_eq!(result["shown"], 0, "{probe} matched: {result}");
        assert_masked("a probe", &result, &text);
    }

    // Crashes with a key in the exception's message: twice the same (grouped), once another
    // (single), each shown with the lines before it (context).
    for (exception, times) in [
        ("java.lang.IllegalStateException", 2),
        ("java.io.IOException", 1),
    ] {
        for _ in 0..times {
            phone
                .crash(CRASH_TEST, exception, &format!("init(key={})", KEYS[0].2))
                .unwrap();
            phone.advance_clock(1.0);
            phone.launch(CRASH_TEST).unwrap();
            log("Keys", PEM[0]);
            log("Keys", PEM[1]);
        }
    }
    for read in [
        json!({ "app": CRASH_TEST, "kind": "crashes", "since": "1m" }),
        json!({ "app": CRASH_TEST, "kind": "crashes", "since": "1m", "context": 30 }),
        json!({ "app": CRASH_TEST, "kind": "crashes", "since": "1m", "limit": 1 }),
    ] {
        let (result, text) = common::phone_logs(&client, read.clone()).await;
        assert_eq!(result["status"], "ok", "{read}: {result}");
        assert!(text.contains("[redacted:"), "{read}: {text}");
        assert_masked(&read.to_string(), &result, &text);
    }
    client.cancel().await.unwrap();
}
