//! Issue 29's "done when", end to end: a real MCP client (rmcp over stdio) drives
//! `phonelogs-mcp` (not `--demo`), which reads the simulated phone through a private REAL adb
//! server. The app logs a JWT, a bearer token, 40 repeats, lines of several tags, crashes and
//! starts again; the agent sees neither secret in the result nor does the state database hold
//! one, sees the repeats as one row with true counts, selects with a regular expression, an
//! exclusion and a tag list, sees the crash's process markers, and finds the `_meta` key on
//! `tools/list` with the value the one-cut property test bounds.
//!
//! Skipped, with the reason printed, when `/usr/bin/adb` is not installed (CI installs it).

// Test helpers unwrap: a failure there is a failing test, which is what it should be.
#![allow(clippy::unwrap_used)]

#[path = "../benches/common/mod.rs"]
mod common;

use common::PrivateAdb;
use phonelogs_adbsim::{Priority, SimPhone};
use phonelogs_gateway::{HistoryFilter, MAX_RESULT_BYTES, Store};
use phonelogs_mcp_frontend::render::{MAX_RESULT_SIZE_KEY, max_result_chars};
use serde_json::json;

const CRASH_TEST: &str = "dev.phonelogs.crashtest";
/// Tokens made for this test, not real ones: a JWT (`{"alg":"HS256","typ":"JWT"}`,
/// `{"sub":"1234567890"}`) and an opaque bearer token.
const JWT: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const BEARER: &str = "tok3n-9f8e7d6c5b4a39281706f5e4d3c2b1a0";

/// What Crash Test logs in this test, oldest first.
fn log_the_story(phone: &SimPhone) {
    let log = |tag: &str, text: &str| phone.log(CRASH_TEST, Priority::Info, tag, text).unwrap();
    log("Auth", &format!("session refreshed, id_token {JWT}"));
    log(
        "Net",
        &format!("GET /v1/feed Authorization: Bearer {BEARER}"),
    );
    log("Net", "GET /v1/feed 200 in 84 ms");
    log("Net", "GET /v1/cart 503 in 41 ms");
    for _ in 0..40 {
        log("Sync", "retrying");
    }
    log(
        "Choreographer",
        "Skipped 31 frames!  The application may be doing too much work",
    );
    log("Sync", "gave up");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_folds_filters_and_markers_through_a_real_client_on_the_simulated_phone() {
    let Some(server) = PrivateAdb::start_if_installed() else {
        return;
    };
    let phone = SimPhone::default_phone();
    phone.set_noise_rate(0.0);
    let (_serial, _handle) = server.connect(phone.clone()).await;
    let state = tempfile::tempdir().unwrap();
    let client = server.mcp(state.path()).await;

    // tools/list: the large-result tools declare the size Claude Code passes whole.
    let tools = client.list_all_tools().await.unwrap();
    let declared = max_result_chars(MAX_RESULT_BYTES);
    for tool in &tools {
        let meta = tool
            .meta
            .as_ref()
            .and_then(|m| m.0.get(MAX_RESULT_SIZE_KEY).cloned());
        match tool.name.as_ref() {
            "phone_logs" | "capture_native_backtrace" => {
                assert_eq!(meta, Some(json!(declared)), "{}", tool.name);
            }
            _ => assert_eq!(meta, None, "{}", tool.name),
        }
    }

    // The task starts before the app logs: these are its lines.
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    log_the_story(&phone);
    let (all, text) =
        common::phone_logs(&client, json!({ "app": CRASH_TEST, "since": "1m" })).await;
    assert_eq!(all["status"], "ok", "{all}");
    let log = all["log"].as_str().unwrap();
    for secret in [JWT, BEARER, "eyJhbGciOiJIUzI1NiIs", "tok3n-9f8e"] {
        assert!(
            !text.contains(secret) && !all.to_string().contains(secret),
            "{secret} leaked: {text}"
        );
    }
    assert!(
        log.contains("Auth: session refreshed, id_token [redacted:jwt]"),
        "{log}"
    );
    assert!(
        log.contains("Authorization: Bearer [redacted:authorization]"),
        "{log}"
    );
    assert_eq!(all["masked"], 2, "{all}");
    // 40 repeats: one row, counted as 40 lines.
    let retrying: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("Sync: retrying"))
        .collect();
    assert_eq!(retrying.len(), 1, "{log}");
    assert!(retrying[0].contains("(×40 until "), "{}", retrying[0]);
    assert_eq!(all["folded"], 39);
    // Crash Test said hello when the phone was built; the story's 46 lines come after.
    let shown = all["shown"].as_u64().unwrap();
    assert!(shown >= 46, "{all}");
    assert_eq!(
        log.lines().count() as u64,
        shown - 39,
        "one row per line but the folded"
    );
    let message = all["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!("{shown} log lines of ")),
        "{message}"
    );
    assert!(message.contains("39 repeats were folded"), "{message}");
    assert!(
        message.contains("2 secrets in what is shown were masked"),
        "{message}"
    );

    // A regular expression, an exclusion and a tag list each select their lines.
    let (regex, _) = common::phone_logs(
        &client,
        json!({ "app": CRASH_TEST, "since": "1m", "filter": "/GET \\S+ 5\\d\\d /" }),
    )
    .await;
    assert_eq!(regex["log"].as_str().unwrap().lines().count(), 1, "{regex}");
    assert!(regex["log"].as_str().unwrap().contains("GET /v1/cart 503"));
    let (excluded, _) = common::phone_logs(
        &client,
        json!({ "app": CRASH_TEST, "since": "1m", "exclude": "/^(Sync|Choreographer)$/" }),
    )
    .await;
    let excluded_log = excluded["log"].as_str().unwrap();
    assert!(
        !excluded_log.contains("Sync:") && !excluded_log.contains("Choreographer:"),
        "{excluded_log}"
    );
    assert!(excluded_log.contains("GET /v1/cart 503"), "{excluded_log}");
    let (tagged, _) = common::phone_logs(
        &client,
        json!({ "app": CRASH_TEST, "since": "1m", "tag": ["Net", "Auth"] }),
    )
    .await;
    let tagged_log = tagged["log"].as_str().unwrap();
    assert_eq!(tagged["shown"], 4, "{tagged}");
    assert!(
        tagged_log
            .lines()
            .all(|l| l.contains(" Net: ") || l.contains(" Auth: ")),
        "{tagged_log}"
    );
    // A pattern cannot probe a secret, and a bad one is an invalid argument naming the error.
    let (probe, _) = common::phone_logs(
        &client,
        json!({ "app": CRASH_TEST, "since": "1m", "filter": "/eyJhbGci/" }),
    )
    .await;
    assert_eq!(probe["shown"], 0, "{probe}");
    let (bad, bad_text) = common::phone_logs(
        &client,
        json!({ "app": CRASH_TEST, "filter": "/(unclosed/" }),
    )
    .await;
    assert_eq!(bad["status"], "error");
    assert_eq!(bad["error_code"], "invalid_argument", "{bad}");
    assert!(bad_text.contains("unclosed"), "{bad_text}");
    // fold: false shows each line.
    let (unfolded, _) = common::phone_logs(
        &client,
        json!({ "app": CRASH_TEST, "since": "1m", "tag": ["Sync"], "fold": false }),
    )
    .await;
    assert_eq!(
        unfolded["log"].as_str().unwrap().lines().count(),
        41,
        "{unfolded}"
    );

    // A crash and a restart: markers where the process died and where the new one started.
    let first_pid = phone.pid_of(CRASH_TEST).unwrap();
    phone
        .crash(
            CRASH_TEST,
            "java.lang.IllegalStateException",
            "Crash button tapped",
        )
        .unwrap();
    // The person opens the app again a moment later.
    phone.advance_clock(1.0);
    let second_pid = phone.launch(CRASH_TEST).unwrap();
    phone
        .log(
            CRASH_TEST,
            Priority::Info,
            "CrashTest",
            "Crash Test started",
        )
        .unwrap();
    let (after, _) = common::phone_logs(
        &client,
        json!({ "app": CRASH_TEST, "since": "1m", "exclude": "/^(Sync|Net|Auth|Choreographer)$/" }),
    )
    .await;
    let after_log = after["log"].as_str().unwrap();
    let died = format!(
        "── process {first_pid} ({CRASH_TEST}) died: FATAL EXCEPTION (its report: kind \"crashes\")"
    );
    let started = format!("── process {second_pid} started");
    let died_at = after_log
        .find(&died)
        .unwrap_or_else(|| panic!("{after_log}"));
    let started_at = after_log
        .find(&started)
        .unwrap_or_else(|| panic!("{after_log}"));
    assert!(died_at < started_at, "{after_log}");
    assert!(
        after_log[..died_at].contains("AndroidRuntime: FATAL EXCEPTION: main"),
        "{after_log}"
    );
    assert!(
        after_log[started_at..].contains("CrashTest: Crash Test started"),
        "{after_log}"
    );
    // The app's own last line as it died stays as the phone wrote it (a signal is no secret).
    assert!(after_log[..died_at].contains("SIG: 9"), "{after_log}");

    // An agent that passes a secret it knows writes it into nothing either.
    let _ = common::phone_logs(
        &client,
        json!({ "app": CRASH_TEST, "filter": format!("Bearer {BEARER} {JWT}") }),
    )
    .await;
    client.cancel().await.unwrap();

    // The history never holds a line, nor a secret an agent passed.
    let store = Store::open(state.path()).unwrap();
    let history = serde_json::to_string(&store.history(HistoryFilter::default()).unwrap()).unwrap();
    for secret in [
        JWT,
        BEARER,
        "eyJhbGciOiJIUzI1NiIs",
        "Skipped 31 frames",
        "retrying",
    ] {
        assert!(
            !history.contains(secret),
            "the history holds {secret:?}: {history}"
        );
    }
    assert!(
        history.contains("/GET \\\\S+ 5\\\\d\\\\d /"),
        "the filter is kept: {history}"
    );
    assert!(
        history.contains("Net, Auth"),
        "the tags are kept: {history}"
    );
}
