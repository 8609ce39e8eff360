//! Issue 17 in the gateway: crash reports deobfuscated with the mapping of the installed
//! version, fingerprinted and grouped, with the app's own lines before them; stack lines in
//! logs deobfuscated; and nothing of it in the history.

// Test helpers unwrap: a failure there is a failing test, which is what it should be.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use phonelogs_driver::{AppId, LogLevel};
use phonelogs_fake::{FakeApp, FakePhone};
use phonelogs_gateway::{HistoryFilter, LogsRequest, Status};
use proptest::prelude::*;

const MAPPING: &str = include_str!("../../../testdata/symbols/proguard-6.2.2/mapping.txt");
const TRACE: &str = include_str!("../../../testdata/symbols/proguard-6.2.2/trace-button.txt");
const RETRACED: &str =
    include_str!("../../../testdata/symbols/proguard-6.2.2/trace-button.retrace.txt");
const SUMMARY: &str = "java.lang.IllegalStateException: Crash button tapped";

/// A symbols directory holding ProGuard's mapping for `DEV_APP` version `version`.
fn symbols_dir(version: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join(DEV_APP).join(version);
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("mapping.txt"), MAPPING).unwrap();
    dir
}

/// The phone with `DEV_APP` installed at `version` and its obfuscated crash at each of
/// `crashes` (seconds after the start, pid).
fn phone_with_crashes(version: &str, crashes: &[(i64, u32)]) -> FakePhone {
    // A phone of its own: the shared fixture's apps already have crashes and lines.
    let phone = FakePhone::new();
    phone.add_device(&device(), "Pixel 8");
    let app = AppId::new(DEV_APP);
    phone.add_app(
        &device(),
        FakeApp::new(app.clone())
            .label("Crash Test")
            .uid(10123)
            .dev_build(true)
            .version(version),
    );
    phone.add_app(
        &device(),
        FakeApp::new(AppId::new(OTHER_APP))
            .label("Other")
            .uid(10300),
    );
    for &(seconds, pid) in crashes {
        let mut crash = report(seconds, DEV_APP, SUMMARY, TRACE);
        crash.pid = Some(pid);
        // Each text says when it is, so the one shown is known; the fingerprint ignores it.
        crash.text = format!("{TRACE}\tcrashed at second {seconds}\n");
        phone.add_crash(&device(), &app, crash);
    }
    phone
}

fn read(
    phone: &FakePhone,
    dir: &tempfile::TempDir,
    request: LogsRequest,
) -> (phonelogs_gateway::Gateway, phonelogs_gateway::LogsResponse) {
    let gateway = builder(phone).symbols_dir(dir.path()).build().unwrap();
    let session = task(&gateway, "agent");
    let response = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(session.logs(request));
    (gateway, response)
}

#[test]
fn a_report_is_deobfuscated_with_the_mapping_of_the_installed_version() {
    let dir = symbols_dir("12");
    let phone = phone_with_crashes("12", &[(5, 4242)]);
    let (_, response) = read(&phone, &dir, crashes(DEV_APP));
    assert_eq!(response.status, Status::Ok, "{}", response.message);
    // Frame for frame what ProGuard's own retrace printed for this trace.
    for frame in RETRACED.lines().skip(1) {
        assert!(
            response.log.contains(frame),
            "{frame:?} not in {}",
            response.log
        );
    }
    assert!(
        !response.log.contains("jvm.a.a(SourceFile"),
        "{}",
        response.log
    );
    let heading = &response.reports[0];
    let mapping = format!("mapping {DEV_APP}/12/mapping.txt");
    assert!(
        heading.symbols.as_deref().unwrap().contains(&mapping),
        "{heading:?}"
    );
    assert_eq!(
        heading.blamed_frame.as_deref(),
        Some("Cart.tapped(Cart.java:47)")
    );
    assert_eq!(heading.fingerprint.as_ref().map(String::len), Some(16));
    assert!(
        response
            .message
            .contains(&format!("Symbols used: {mapping}")),
        "{}",
        response.message
    );
}

#[test]
fn another_version_filed_is_named_and_nothing_is_deobfuscated() {
    let dir = symbols_dir("12");
    let phone = phone_with_crashes("13", &[(5, 4242)]);
    let (_, response) = read(&phone, &dir, crashes(DEV_APP));
    assert_eq!(response.status, Status::Ok);
    assert!(
        response
            .message
            .contains("no mapping matched versionCode 13 of Crash Test (filed: 12)"),
        "{}",
        response.message
    );
    assert!(response.log.contains("jvm.a.a(SourceFile:1047)"));
    let symbols = response.reports[0].symbols.clone().unwrap();
    assert!(symbols.contains("version 13"), "{symbols}");
}

#[test]
fn without_a_symbols_directory_the_heading_says_so() {
    let phone = phone_with_crashes("12", &[(5, 4242)]);
    let gateway = gateway(&phone);
    let session = task(&gateway, "agent");
    let response = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(session.logs(crashes(DEV_APP)));
    assert_eq!(
        response.reports[0].symbols.as_deref(),
        Some("no symbols directory")
    );
    assert!(response.log.contains("jvm.a.a(SourceFile:1047)"));
}

#[test]
fn three_crashes_of_one_fingerprint_are_one_heading_with_the_newest_text() {
    let dir = symbols_dir("12");
    let phone = phone_with_crashes("12", &[(5, 4001), (65, 4002), (125, 4003)]);
    let request = LogsRequest {
        limit: Some(10),
        ..crashes(DEV_APP)
    };
    let (_, response) = read(&phone, &dir, request);
    assert_eq!(response.reports.len(), 1, "{:?}", response.reports);
    assert_eq!((response.shown, response.left_out), (3, 0));
    let occurrences = response.reports[0].occurrences.clone().unwrap();
    assert_eq!(occurrences.count, 3);
    assert_eq!(occurrences.pids, vec![4001, 4002, 4003]);
    assert_eq!(occurrences.first, "2026-11-30T10:00:05Z");
    assert_eq!(occurrences.last, "2026-11-30T10:02:05Z");
    assert_eq!(response.reports[0].pid, Some(4003));
    assert!(response.log.contains("crashed at second 125"));
    assert!(!response.log.contains("crashed at second 5\n"));
    assert_eq!(
        response.log.matches("Cart.tapped(Cart.java:47)").count(),
        2,
        "heading and text"
    );
    assert!(
        response.log.contains("Java crash ×3 (first 10:00:05, last 10:02:05) IllegalStateException at Cart.tapped(Cart.java:47)"),
        "{}",
        response.log
    );
    assert!(
        response
            .message
            .starts_with("3 crash reports of Crash Test"),
        "{}",
        response.message
    );
}

#[test]
fn different_throw_sites_stay_apart() {
    let dir = symbols_dir("12");
    let phone = phone_with_crashes("12", &[(5, 4001)]);
    let other = TRACE.replace("jvm.a.a(SourceFile:1047)", "jvm.a.a(SourceFile:1041)");
    let mut crash = report(7, DEV_APP, SUMMARY, &other);
    crash.pid = Some(4002);
    phone.add_crash(&device(), &AppId::new(DEV_APP), crash);
    let (_, response) = read(&phone, &dir, crashes(DEV_APP));
    assert_eq!(response.reports.len(), 2);
    assert_ne!(
        response.reports[0].fingerprint,
        response.reports[1].fingerprint
    );
    assert_eq!(response.shown, 2);
}

#[test]
fn context_adds_only_the_same_pids_own_lines_in_the_window() {
    let dir = symbols_dir("12");
    let phone = phone_with_crashes("12", &[(20, 4242)]);
    let app = AppId::new(DEV_APP);
    let mut other_pid = line(18.0, LogLevel::Info, "Cart", "of another process", 10123);
    other_pid.pid = Some(999);
    phone.add_logs(
        &device(),
        &app,
        vec![
            line(10.0, LogLevel::Info, "Cart", "too early", 10123),
            line(16.0, LogLevel::Info, "Cart", "opened the cart", 10123),
            other_pid,
            line(19.5, LogLevel::Warn, "Cart", "total is negative", 10123),
            line(22.0, LogLevel::Info, "Cart", "after the crash", 10123),
        ],
    );
    phone.add_logs(
        &device(),
        &AppId::new(OTHER_APP),
        vec![line(19.0, LogLevel::Info, "Other", "not the app's", 10300)],
    );
    let request = LogsRequest {
        context: Some(5),
        ..crashes(DEV_APP)
    };
    let (gateway, response) = read(&phone, &dir, request);
    assert_eq!(response.status, Status::Ok, "{}", response.message);
    let log = &response.log;
    assert!(
        log.contains("--- 2 lines of pid 4242 in the 5 s before ---"),
        "{log}"
    );
    assert!(log.contains("Cart: opened the cart") && log.contains("Cart: total is negative"));
    for absent in [
        "too early",
        "of another process",
        "after the crash",
        "not the app's",
    ] {
        assert!(!log.contains(absent), "{absent:?} in {log}");
    }
    let history = gateway.store().history(HistoryFilter::default()).unwrap();
    let json = format!("{history:?}");
    for text in [
        "opened the cart",
        "Cart.tapped",
        "mapping",
        "jvm.a.a",
        "4242",
    ] {
        assert!(!json.contains(text), "{text:?} in the history: {json}");
    }
}

#[test]
fn context_out_of_range_or_for_logs_is_an_invalid_argument() {
    let dir = symbols_dir("12");
    let phone = phone_with_crashes("12", &[(20, 4242)]);
    for (request, says) in [
        (
            LogsRequest {
                context: Some(31),
                ..crashes(DEV_APP)
            },
            "between 1 and 30 seconds, not 31",
        ),
        (
            LogsRequest {
                context: Some(0),
                ..crashes(DEV_APP)
            },
            "between 1 and 30 seconds, not 0",
        ),
        (
            LogsRequest {
                context: Some(5),
                ..logs(DEV_APP)
            },
            "use it with kind \"crashes\"",
        ),
    ] {
        let (_, response) = read(&phone, &dir, request);
        assert_eq!(response.status, Status::Error);
        assert!(response.message.contains(says), "{}", response.message);
        assert!(response.log.is_empty());
    }
}

#[test]
fn stack_lines_in_logs_are_deobfuscated() {
    let dir = symbols_dir("12");
    let phone = phone_with_crashes("12", &[]);
    let lines: Vec<_> = TRACE
        .lines()
        .enumerate()
        .map(|(i, text)| {
            line(
                1.0 + i as f64 / 100.0,
                LogLevel::Error,
                "AndroidRuntime",
                text,
                10123,
            )
        })
        .collect();
    phone.add_logs(&device(), &AppId::new(DEV_APP), lines);
    let (_, response) = read(&phone, &dir, logs(DEV_APP));
    assert_eq!(response.status, Status::Ok, "{}", response.message);
    // The inlined frame (validate, inlined into tapped's line) becomes a line of its own.
    for frame in RETRACED.lines().skip(1) {
        let shown = format!("AndroidRuntime: {frame}");
        assert!(
            response.log.contains(&shown),
            "{shown:?} not in {}",
            response.log
        );
    }
    assert_eq!(response.shown, 5);
    assert!(
        response.message.contains("Symbols used: mapping"),
        "{}",
        response.message
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Whatever a crash says and however many times it happens, the history records counts and
    /// arguments only: no text, no frame, no symbol file.
    #[test]
    fn the_history_holds_no_text_of_a_symbolicated_crash(
        message in "[A-Za-z]{12,20}",
        times in 1usize..=4,
    ) {
        let dir = symbols_dir("12");
        let phone = phone_with_crashes("12", &[]);
        for i in 0..times {
            let summary = format!("java.lang.IllegalStateException: {message}");
            let text = TRACE.replace("Crash button tapped", &message);
            let mut crash = report(5 + i as i64, DEV_APP, &summary, &text);
            crash.pid = Some(5000 + i as u32);
            phone.add_crash(&device(), &AppId::new(DEV_APP), crash);
        }
        let request = LogsRequest { context: Some(3), limit: Some(10), ..crashes(DEV_APP) };
        let (gateway, response) = read(&phone, &dir, request);
        prop_assert_eq!(response.status, Status::Ok);
        prop_assert_eq!(response.shown, times);
        prop_assert!(response.log.contains(&message));
        let history = gateway.store().history(HistoryFilter::default()).unwrap();
        let json = format!("{history:?}");
        for text in [message.as_str(), "Cart", "mapping", "SourceFile", "IllegalState"] {
            prop_assert!(!json.contains(text), "{:?} in the history: {}", text, json);
        }
    }
}
