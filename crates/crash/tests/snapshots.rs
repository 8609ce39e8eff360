//! Snapshot tests over the fixture folders in `testdata/android` and `testdata/ios`.
//!
//! Each fixture `X` has a reviewed `X.expect` beside it holding what the parsers make of it.
//! A test fails when the output differs; `UPDATE_EXPECT=1 cargo test -p phonelogs-crash --test
//! snapshots` rewrites the `.expect` files, to be reviewed with `git diff` before committing.

#![allow(clippy::unwrap_used)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use phonelogs_crash::{
    PhoneClock, android, detect_format, dropbox, logcat, parse_any, render_heading,
};

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// Every fixture file under `dir`, sorted, skipping snapshots and READMEs.
fn fixtures(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                if !name.ends_with(".expect") && !name.ends_with(".md") {
                    found.push(path);
                }
            }
        }
    }
    found.sort();
    found
}

/// What the parsers make of one fixture, as reviewed text.
fn render(path: &Path, bytes: &[u8]) -> String {
    let folder = path
        .parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .unwrap_or("");
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::new();
    let _ = writeln!(out, "detected: {}", detect_format(bytes));
    match folder {
        "package" => {
            let _ = writeln!(
                out,
                "dumpsys package com.example.crashtest: {:?}",
                android::parse_dumpsys_package(&text, "com.example.crashtest")
            );
            let _ = writeln!(
                out,
                "pm list packages -U: {:?}",
                android::parse_pm_list_packages(&text)
            );
            return out;
        }
        "logcat" => {
            out.push_str("--- lines ---\n");
            for line in text.lines() {
                match logcat::parse_line(line) {
                    logcat::LogcatItem::Line(parsed) => {
                        let _ = writeln!(out, "{}", serde_json::to_string(&parsed).unwrap());
                    }
                    logcat::LogcatItem::Separator(name) => {
                        let _ = writeln!(out, "separator {name}");
                    }
                    logcat::LogcatItem::Other => {
                        let _ = writeln!(out, "other {line:?}");
                    }
                }
            }
            out.push_str("--- uid 10127 (fast path) ---\n");
            let filter = logcat::UidFilter::new(10127);
            for line in filter.filter(bytes) {
                let _ = writeln!(out, "{}", String::from_utf8_lossy(line));
            }
        }
        "dropbox" => {
            out.push_str("--- entries of com.example.crashtest (uid 10127) ---\n");
            let app = dropbox::AppMatch {
                uid: Some(10127),
                package: "com.example.crashtest",
            };
            for report in dropbox::dropbox_reports(&text, Some(&app), &PhoneClock::default()) {
                let _ = writeln!(out, "{}", render_heading(&report));
            }
        }
        _ => {}
    }
    out.push_str("--- report ---\n");
    match parse_any(bytes, None) {
        Ok(parsed) => {
            out.push_str(&parsed.render_text());
            out.push_str("--- json ---\n");
            for line in parsed.json_lines() {
                out.push_str(&line);
                out.push('\n');
            }
        }
        Err(error) => {
            let _ = writeln!(out, "error: {error}");
        }
    }
    out
}

#[test]
fn fixtures_match_their_snapshots() {
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut failures = Vec::new();
    let all: Vec<PathBuf> = ["android", "ios"]
        .iter()
        .flat_map(|dir| fixtures(&testdata().join(dir)))
        .collect();
    assert!(
        all.len() >= 15,
        "expected the fixture folders, found {}",
        all.len()
    );
    for path in all {
        let bytes = std::fs::read(&path).unwrap();
        let actual = render(&path, &bytes);
        let mut expect_path = path.clone().into_os_string();
        expect_path.push(".expect");
        let expect_path = PathBuf::from(expect_path);
        if update {
            std::fs::write(&expect_path, &actual).unwrap();
            continue;
        }
        match std::fs::read_to_string(&expect_path) {
            Ok(expected) if expected == actual => {}
            Ok(expected) => failures.push(format!(
                "{} differs from its snapshot:\n{}",
                path.display(),
                first_difference(&expected, &actual)
            )),
            Err(_) => failures.push(format!("{} has no .expect snapshot", path.display())),
        }
    }
    assert!(
        failures.is_empty(),
        "{}\n\nRun with UPDATE_EXPECT=1 to accept the new output, then review the diff.",
        failures.join("\n\n")
    );
}

fn first_difference(expected: &str, actual: &str) -> String {
    for (number, (e, a)) in expected.lines().zip(actual.lines()).enumerate() {
        if e != a {
            return format!("line {}:\n- {e}\n+ {a}", number + 1);
        }
    }
    format!(
        "lengths differ: {} expected lines, {} actual",
        expected.lines().count(),
        actual.lines().count()
    )
}
