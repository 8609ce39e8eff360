//! Issue 14's property: the gateway is the only place that cuts. Over any sizes of lines and
//! reports and any result cap, the MCP result's text after the message is the gateway's log, the
//! structured `log` is the same, every report shown has its heading in both, the counts are of
//! what is shown, and each form a client may pass to its model is within the cap plus 2 KB.
//!
//! Issue 29's: with repeats folded and secrets masked, the counts stay counts of log lines, and
//! either form is within what the server declares as `_meta["anthropic/maxResultSizeChars"]`
//! (`max_result_bytes`), errors included (and an error's text under 10,000 characters).

// Test helpers unwrap: a failure there is a failing test, which is what it should be.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use phonelogs_driver::{AppId, CrashKind, CrashReport, DeviceId, LogLevel, LogLine};
use phonelogs_fake::{FakeApp, FakePhone};
use phonelogs_gateway::{
    Agent, Gateway, LogsKind, LogsRequest, LogsResponse, MAX_RESULT_BYTES, MIN_RESULT_CAP, Mode,
    TaskSpec,
};
use phonelogs_mcp_frontend::logs_result;
use phonelogs_mcp_frontend::render::{max_result_bytes, max_result_chars};
use proptest::prelude::*;
use rmcp::model::CallToolResult;
use serde_json::Value;
use time::{Duration, OffsetDateTime};

const DEVICE: &str = "emulator-5554";
const APP: &str = "dev.example.chatty";
/// What a result may hold besides its log: the message and the JSON keys.
const SLACK: usize = 2 * 1024;

/// Text of `len` bytes (on a character boundary) from pieces JSON escapes, writes in several
/// bytes, or both; `newlines` lets report texts hold line breaks.
fn text(seed: u64, len: usize, newlines: bool) -> String {
    const PIECES: [&str; 8] = [
        "plain words ",
        "\"quoted\" ",
        "back\\slash ",
        "tab\there ",
        "ctl\u{1}\u{1f} ",
        "é ü 漢字 ",
        "🦀 ",
        "\n",
    ];
    let usable = if newlines {
        PIECES.len()
    } else {
        PIECES.len() - 1
    };
    let mut out = String::with_capacity(len + 16);
    let mut state = seed | 1;
    while out.len() < len {
        // A small xorshift: the pieces vary with the seed, reproducibly.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        out.push_str(PIECES[(state % usable as u64) as usize]);
    }
    let mut end = len;
    while !out.is_char_boundary(end) {
        end -= 1;
    }
    out.truncate(end);
    out
}

fn phone() -> (FakePhone, DeviceId, AppId) {
    let phone = FakePhone::new();
    let device = DeviceId::new(DEVICE);
    phone.add_device(&device, "Pixel 8");
    let app = AppId::new(APP);
    phone.add_app(
        &device,
        FakeApp::new(app.clone())
            .label("Chatty")
            .uid(10_500)
            .dev_build(true),
    );
    (phone, device, app)
}

fn read(phone: FakePhone, cap: usize, kind: LogsKind, limit: u32) -> LogsResponse {
    read_with(phone, cap, kind, limit, None)
}

fn read_with(
    phone: FakePhone,
    cap: usize,
    kind: LogsKind,
    limit: u32,
    symbols: Option<&std::path::Path>,
) -> LogsResponse {
    let mut builder = Gateway::builder().driver(Arc::new(phone)).result_cap(cap);
    if let Some(dir) = symbols {
        builder = builder.symbols_dir(dir);
    }
    let gateway = builder.build().unwrap();
    let session = gateway.start_task(TaskSpec::new(Agent::new("agent", Mode::ReadOnly)));
    let request = LogsRequest {
        kind,
        since: Some("1h".into()),
        limit: Some(limit),
        ..LogsRequest::new(APP)
    };
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(session.logs(request))
}

fn text_content(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .map(|t| t.text.clone())
        .collect()
}

/// The checks both kinds share; returns the structured content.
fn one_log_in_both_forms(response: &LogsResponse, cap: usize) -> Result<Value, TestCaseError> {
    let result = logs_result(response.clone());
    let text = text_content(&result);
    let structured = result.structured_content.clone().unwrap();
    let message = structured["message"].as_str().unwrap();
    prop_assert_eq!(message, response.message.as_str());
    let after = text
        .strip_prefix(message)
        .and_then(|rest| rest.strip_prefix("\n\n"))
        .unwrap_or("");
    prop_assert!(
        after == response.log,
        "the text after the message is the gateway's log"
    );
    prop_assert!(
        structured["log"] == response.log.as_str(),
        "the structured log is the same"
    );
    prop_assert_eq!(&structured["shown"], &Value::from(response.shown));
    prop_assert_eq!(&structured["left_out"], &Value::from(response.left_out));
    prop_assert_eq!(&structured["cut"], &Value::from(response.cut));
    prop_assert!(structured.get("lines").is_none());
    // Either form, on its own, is what a model receives from some client.
    let structured_text = serde_json::to_string(&structured).unwrap();
    let structured_bytes = structured_text.len();
    prop_assert!(
        text.len() <= cap + SLACK,
        "text: {} bytes, cap {cap}",
        text.len()
    );
    prop_assert!(
        structured_bytes <= cap + SLACK,
        "structured: {structured_bytes} bytes, cap {cap}"
    );
    within_declared(&text, &structured_text, cap)?;
    Ok(structured)
}

/// Either form within what the server declares in `tools/list`, in bytes and in the UTF-16
/// units a JavaScript client counts.
fn within_declared(text: &str, structured: &str, cap: usize) -> Result<(), TestCaseError> {
    let declared = max_result_chars(cap);
    prop_assert_eq!(declared, max_result_bytes(cap), "below the ceiling here");
    for form in [text, structured] {
        prop_assert!(
            form.len() <= declared,
            "{} bytes, declared {declared}",
            form.len()
        );
        prop_assert!(form.encode_utf16().count() <= declared);
    }
    Ok(())
}

fn cap() -> impl Strategy<Value = usize> {
    prop_oneof![Just(MAX_RESULT_BYTES), MIN_RESULT_CAP..MAX_RESULT_BYTES]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn lines_reach_the_agent_as_the_gateway_cut_them(
        count in 1usize..=2_000,
        seed in any::<u64>(),
        cap in cap(),
    ) {
        let (phone, device, app) = phone();
        let start = OffsetDateTime::now_utc() - Duration::minutes(10);
        let sizes: Vec<usize> = (0..count)
            .map(|i| 50 + ((seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)) % 4_951) as usize)
            .collect();
        // Some lines repeat the one before (they fold into its row), and some hold a secret
        // (masked, and the masked text may be longer or shorter than the secret).
        let texts: Vec<String> = sizes
            .iter()
            .enumerate()
            .scan(String::new(), |last, (i, &size)| {
                let pick = (seed >> (i % 61)) % 7;
                let line = match pick {
                    0 if !last.is_empty() => last.clone(),
                    1 => format!("auth=Bearer {JWT} {}", text(seed ^ i as u64, size / 4, false)),
                    _ => text(seed.wrapping_add(i as u64), size, false),
                };
                *last = line.clone();
                Some(line)
            })
            .collect();
        phone.add_logs(&device, &app, texts.iter().enumerate().map(|(i, text)| LogLine {
            time: start + Duration::milliseconds(i as i64),
            level: LogLevel::Info,
            tag: "Chatty".into(),
            text: text.clone(),
            pid: Some(4242),
            tid: Some(4242),
            uid: Some(10_500),
        }));
        let response = read(phone, cap, LogsKind::Logs, 500);
        one_log_in_both_forms(&response, cap)?;
        // The counts are of what is shown: log lines, a folded row counting each of its lines.
        let rows = &response.lines;
        prop_assert_eq!(response.shown, rows.iter().map(|r| r.lines).sum::<usize>());
        prop_assert_eq!(response.log.lines().count(), rows.len());
        prop_assert_eq!(response.shown + response.left_out, count);
        prop_assert_eq!(response.folded, rows.iter().map(|r| r.lines.saturating_sub(1)).sum::<usize>());
        prop_assert_eq!(response.masked, rows.iter().map(|r| r.masked).sum::<usize>());
        prop_assert!(!response.log.contains(JWT), "a secret reached the agent");
        // A cut row ends with the mark, before a fold's `(×N until …)`.
        for (line, row) in response.log.lines().zip(rows) {
            let body = line.rsplit_once(" (×").filter(|_| row.lines > 1).map_or(line, |(b, _)| b);
            prop_assert_eq!(body.ends_with('…'), row.cut, "{}", line);
        }
        let cut: usize = rows.iter().filter(|r| r.cut).map(|r| r.lines).sum();
        prop_assert_eq!(response.cut, cut);
        prop_assert!(response.shown > 0, "the newest line always fits");
        let shown = format!("{} log line", response.shown);
        prop_assert!(response.message.starts_with(&shown), "{}", response.message);
        if response.left_out > 0 {
            let left_out = format!(" {} older line", response.left_out);
            prop_assert!(response.message.contains(&left_out), "{}", response.message);
        }
    }

    #[test]
    fn an_error_result_is_short_and_within_the_declared_size(
        garbage in "(?s).{0,3000}",
        which in 0usize..4,
        cap in cap(),
    ) {
        let (phone, _, _) = phone();
        let mut request = LogsRequest::new(APP);
        // Every argument an agent's text can be quoted back from, made bad.
        match which {
            0 => request.filter = Some(format!("/({garbage}/")),
            1 => request.level = Some(format!("{garbage}x")),
            2 => request.since = Some(format!("{garbage}x!")),
            _ => request.wait_for = Some(format!("{garbage}x")),
        }
        if which == 3 {
            request.kind = LogsKind::Crashes;
        }
        let gateway = Gateway::builder().driver(Arc::new(phone)).result_cap(cap).build().unwrap();
        let session = gateway.start_task(TaskSpec::new(Agent::new("agent", Mode::ReadOnly)));
        let response = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(session.logs(request));
        prop_assert_eq!(response.status, phonelogs_gateway::Status::Error);
        let result = logs_result(response);
        prop_assert_eq!(result.is_error, Some(true));
        let text = text_content(&result);
        prop_assert!(text.encode_utf16().count() < 10_000, "{} characters", text.len());
        let structured = serde_json::to_string(&result.structured_content.unwrap()).unwrap();
        within_declared(&text, &structured, cap)?;
    }

    #[test]
    fn reports_reach_the_agent_with_every_heading(
        sizes in prop::collection::vec(100usize..=200_000, 1..=10),
        seed in any::<u64>(),
        cap in cap(),
    ) {
        let (phone, device, app) = phone();
        let start = OffsetDateTime::now_utc() - Duration::minutes(10);
        let kinds = [CrashKind::JavaCrash, CrashKind::NativeCrash, CrashKind::Anr];
        for (i, &size) in sizes.iter().enumerate() {
            phone.add_crash(&device, &app, CrashReport {
                kind: kinds[i % kinds.len()],
                time: start + Duration::seconds(i as i64),
                pid: Some(4242 + i as u32),
                process: APP.into(),
                summary: format!("crash {i}: {}", text(seed ^ i as u64, 60, false)),
                text: text(seed.wrapping_add(i as u64), size, true),
                build: None,
            });
        }
        let response = read(phone, cap, LogsKind::Crashes, 10);
        let structured = one_log_in_both_forms(&response, cap)?;
        let headings = structured["reports"].as_array().unwrap();
        // Reports of one fingerprint (here the ANRs, which have no frames) share a heading,
        // which counts each of them.
        let represented: u64 = headings.iter().map(|h| h["occurrences"]["count"].as_u64().unwrap()).sum();
        prop_assert_eq!(represented as usize, response.shown);
        prop_assert_eq!(response.shown + response.left_out, sizes.len());
        let text = text_content(&logs_result(response.clone()));
        let mut not_whole = 0;
        for heading in headings {
            let line = format!(
                "{} at {}, pid {}, {}: {}\n",
                heading["kind"].as_str().unwrap(),
                heading["time"].as_str().unwrap(),
                heading["pid"],
                heading["process"].as_str().unwrap(),
                heading["summary"].as_str().unwrap(),
            );
            prop_assert!(text.contains(&line), "the text lacks {line:?}");
            prop_assert!(response.log.contains(&line), "the log lacks {line:?}");
            if heading["text_shown"] != "whole" {
                not_whole += 1;
            }
        }
        prop_assert_eq!(response.cut, not_whole);
        // With the default cap every report keeps its heading.
        if cap == MAX_RESULT_BYTES {
            prop_assert_eq!(response.left_out, 0);
        }
        let shown = match response.shown {
            1 => "1 crash report of Chatty.".to_owned(),
            n => format!("{n} crash reports of Chatty"),
        };
        prop_assert!(response.message.starts_with(&shown), "{}", response.message);
    }

    #[test]
    fn symbolicated_and_grouped_reports_keep_the_one_cut(
        groups in prop::collection::vec((1usize..=3, 100usize..=60_000), 1..=4),
        seed in any::<u64>(),
        cap in cap(),
    ) {
        // The mapping is filed for the installed version, so every text grows when the cut
        // has to measure it: the cut must come after symbols.
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join(APP).join("7");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("mapping.txt"), MAPPING).unwrap();
        let phone = FakePhone::new();
        let device = DeviceId::new(DEVICE);
        phone.add_device(&device, "Pixel 8");
        let app = AppId::new(APP);
        phone.add_app(
            &device,
            FakeApp::new(app.clone()).label("Chatty").uid(10_500).dev_build(true).version("7"),
        );
        let start = OffsetDateTime::now_utc() - Duration::minutes(10);
        let mut total = 0;
        for (g, &(times, size)) in groups.iter().enumerate() {
            for t in 0..times {
                // One throw site per group; the padding differs per report, as a message would.
                let text = format!(
                    "{}\n\tat {APP}.Screen{g}.run(SourceFile:{t})\n{}",
                    TRACE.trim_end(),
                    text(seed.wrapping_add((g * 10 + t) as u64), size, true),
                );
                phone.add_crash(&device, &app, CrashReport {
                    kind: CrashKind::JavaCrash,
                    time: start + Duration::seconds((g * 10 + t) as i64),
                    pid: Some(4242 + total as u32),
                    process: APP.into(),
                    summary: SUMMARY.into(),
                    text,
                    build: None,
                });
                total += 1;
            }
        }
        let response = read_with(phone, cap, LogsKind::Crashes, 10, Some(dir.path()));
        let structured = one_log_in_both_forms(&response, cap)?;
        let headings = structured["reports"].as_array().unwrap();
        let represented: u64 = headings.iter().map(|h| h["occurrences"]["count"].as_u64().unwrap()).sum();
        prop_assert_eq!(represented as usize, response.shown);
        // The driver gives at most the limit's newest reports; the cut counts what it left out.
        prop_assert_eq!(response.shown + response.left_out, total.min(10));
        prop_assert!(headings.len() <= groups.len());
        let mut not_whole = 0;
        for heading in headings {
            let symbols = heading["symbols"].as_str().unwrap();
            prop_assert!(symbols.contains(&format!("mapping {APP}/7/mapping.txt")), "{}", symbols);
            prop_assert_eq!(heading["fingerprint"].as_str().unwrap().len(), 16);
            let pids = heading["occurrences"]["pids"].as_array().unwrap();
            prop_assert_eq!(pids.len() as u64, heading["occurrences"]["count"].as_u64().unwrap());
            if heading["text_shown"] != "whole" {
                not_whole += 1;
            }
        }
        prop_assert_eq!(response.cut, not_whole);
        if headings.first().is_some_and(|h| h["text_shown"] == "whole") {
            prop_assert!(response.log.contains("Cart.tapped(Cart.java:47)"));
        }
        prop_assert!(!response.log.contains("jvm.a.a(SourceFile:1047)") || response.cut > 0);
        if cap == MAX_RESULT_BYTES {
            prop_assert_eq!(response.left_out, 0);
            prop_assert_eq!(headings.len(), groups.len(), "{}", response.log);
        }
    }
}

/// A JWT made for this test (`{"alg":"HS256"}`, `{"sub":"1"}`), not a real token.
const JWT: &str = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLW9mLWEtdGVzdA";

const MAPPING: &str = include_str!("../../../testdata/symbols/proguard-6.2.2/mapping.txt");
const TRACE: &str = include_str!("../../../testdata/symbols/proguard-6.2.2/trace-button.txt");
const SUMMARY: &str = "java.lang.IllegalStateException: Crash button tapped";
