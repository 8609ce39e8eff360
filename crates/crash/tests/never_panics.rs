//! Property tests: no parser panics on any input, whether arbitrary bytes or structured
//! mutations (cuts, deletions, duplicated and swapped lines, flipped bytes) of every fixture.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use phonelogs_crash::{
    PhoneClock, android, anr, crashbuf, detect_format, dropbox, exitinfo, ips, logcat, ostrace,
    parse_any, render_heading, tombstone, vis,
};
use proptest::prelude::*;

/// Runs every parser over `bytes`; any panic fails the property.
fn run_all(bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    let clock = PhoneClock::default();
    let _ = detect_format(bytes);
    if let Ok(parsed) = parse_any(bytes, None) {
        let _ = parsed.render_text();
        let _ = parsed.json_lines();
        for report in &parsed.reports {
            let _ = render_heading(report);
        }
    }
    for format in phonelogs_crash::Format::ALL {
        let _ = parse_any(bytes, Some(format));
    }
    for line in text.lines() {
        let item = logcat::parse_line(line);
        // The in-place reader accepts exactly the log lines, with the same fields.
        let in_place = logcat::parse_log_line(line).map(|parsed| parsed.to_line());
        match item {
            logcat::LogcatItem::Line(parsed) => assert_eq!(in_place, Some(parsed), "{line:?}"),
            _ => assert_eq!(in_place, None, "{line:?}"),
        }
    }
    for uid in [10127, 0] {
        let filter = logcat::UidFilter::new(uid);
        let mut backwards: Vec<&[u8]> = filter.filter_rev(bytes).collect();
        backwards.reverse();
        assert_eq!(backwards, filter.filter(bytes).collect::<Vec<_>>());
    }
    for line in logcat::split_lines(bytes) {
        let _ = logcat::epoch_uid_field(line);
        let _ = logcat::parse_log_head(line).map(|head| head.has_tag());
    }
    let _ = crashbuf::parse_crash_buffer(&text, &clock);
    // A phone east of UTC: an instant near the end of year 9999 must not panic in `to_offset`.
    let east = PhoneClock {
        offset: time::UtcOffset::from_hms(1, 0, 0).unwrap(),
        year: Some(2026),
    };
    let _ = crashbuf::parse_crash_buffer(&text, &east);
    let app = dropbox::AppMatch {
        uid: Some(10127),
        package: "com.example.crashtest",
    };
    let _ = dropbox::dropbox_reports(&text, Some(&app), &clock);
    for entry in dropbox::dropbox_entries(&text) {
        let _ = entry.matches(&app);
        let _ = entry.report_time(&clock);
        let _ = entry.to_entry().to_report(&clock);
    }
    let _ = anr::cut_anr(
        &text,
        anr::AnrTarget {
            pid: Some(31000),
            process: Some("com.example.crashtest"),
        },
    );
    let _ = anr::cut_anr(&text, anr::AnrTarget::default());
    let _ = tombstone::parse_tombstone_header(&text);
    let _ = tombstone::parse_backtrace(&text);
    let _ = exitinfo::parse_exit_info(&text);
    for entry in exitinfo::parse_exit_entries(&text) {
        let _ = entry.owner_uid();
    }
    let _ = android::parse_dumpsys_package(&text, "com.example.crashtest");
    let _ = android::parse_pm_list_packages(&text);
    let _ = android::parse_jdwp(&text);
    let _ = android::parse_date_offset(&text);
    let _ = android::parse_local_date_time(&text);
    let _ = ips::ips_report(bytes);
    let _ = ips::parse_crash_file_name(&text);
    let _ = ostrace::parse_entry(bytes);
    let _ = vis::decode(&text);
}

fn fixture_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let mut found = Vec::new();
    let mut stack = vec![root.join("android"), root.join("ios")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if !path.to_string_lossy().ends_with(".expect")
                && !path.to_string_lossy().ends_with(".md")
            {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

fn fixtures() -> Vec<Vec<u8>> {
    fixture_files()
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect()
}

/// A structured change to a fixture.
#[derive(Debug, Clone)]
enum Mutation {
    Truncate(usize),
    DeleteLine(usize),
    DuplicateLine(usize),
    SwapLines(usize, usize),
    FlipByte(usize, u8),
    InsertBytes(usize, Vec<u8>),
    ReplaceDigits(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Truncate),
        any::<usize>().prop_map(Mutation::DeleteLine),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(a, b)| Mutation::FlipByte(a, b)),
        (
            any::<usize>(),
            prop::collection::vec(
                prop_oneof![
                    Just(b'\n'),
                    Just(b' '),
                    Just(b':'),
                    Just(b'{'),
                    Just(b'"'),
                    Just(b'-'),
                    Just(b'9'),
                    Just(0xff),
                    Just(0xc3),
                    Just(b'#'),
                    Just(b'\t'),
                    any::<u8>()
                ],
                0..16
            )
        )
            .prop_map(|(a, b)| Mutation::InsertBytes(a, b)),
        any::<usize>().prop_map(Mutation::ReplaceDigits),
    ]
}

fn apply(bytes: &[u8], mutation: &Mutation) -> Vec<u8> {
    let mut lines: Vec<Vec<u8>> = bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    let n = lines.len().max(1);
    match mutation {
        Mutation::Truncate(at) => return bytes[..at % (bytes.len() + 1)].to_vec(),
        Mutation::DeleteLine(i) => {
            if !lines.is_empty() {
                lines.remove(i % n);
            }
        }
        Mutation::DuplicateLine(i) => {
            if !lines.is_empty() {
                let line = lines[i % n].clone();
                lines.insert(i % n, line);
            }
        }
        Mutation::SwapLines(a, b) => {
            if !lines.is_empty() {
                lines.swap(a % n, b % n);
            }
        }
        Mutation::FlipByte(at, value) => {
            let mut out = bytes.to_vec();
            if !out.is_empty() {
                let len = out.len();
                out[at % len] = *value;
            }
            return out;
        }
        Mutation::InsertBytes(at, inserted) => {
            let mut out = bytes.to_vec();
            let at = at % (out.len() + 1);
            out.splice(at..at, inserted.iter().copied());
            return out;
        }
        Mutation::ReplaceDigits(seed) => {
            // Turn every digit into a large or odd one, to reach number overflows.
            let mut out = bytes.to_vec();
            for (i, byte) in out.iter_mut().enumerate() {
                if byte.is_ascii_digit() && (i + seed) % 3 == 0 {
                    *byte = b'9';
                }
            }
            return out;
        }
    }
    lines.join(&b'\n')
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        run_all(&bytes);
    }

    #[test]
    fn arbitrary_text_lines_never_panic(lines in prop::collection::vec("[ -~\t]{0,120}", 0..40)) {
        run_all(lines.join("\n").as_bytes());
    }

    #[test]
    fn mutated_fixtures_never_panic(
        index in any::<usize>(),
        mutations in prop::collection::vec(mutation(), 1..6),
    ) {
        let all = fixtures();
        let mut bytes = all[index % all.len()].clone();
        for mutation in &mutations {
            bytes = apply(&bytes, mutation);
        }
        run_all(&bytes);
    }

    #[test]
    fn uid_fast_path_agrees_with_the_full_parser(
        seconds in 0i64..9_999_999_999,
        millis in 0u32..1000,
        uid in prop_oneof![Just("root".to_owned()), Just("shell".to_owned()), (0u32..2_000_000).prop_map(|u| u.to_string())],
        pid in 1u32..99999,
        tid in 1u32..99999,
        tag in "[A-Za-z][A-Za-z0-9 \\[\\]]{0,12}",
        text in "[ -~]{0,40}",
    ) {
        let line = format!("{seconds:>19}.{millis:03} {uid:>5} {pid:>5} {tid:>5} I {tag:<8}: {text}");
        let fast = logcat::epoch_uid_field(line.as_bytes()).map(|f| String::from_utf8_lossy(f).into_owned());
        prop_assert_eq!(fast.as_deref(), Some(uid.as_str()));
        match logcat::parse_line(&line) {
            logcat::LogcatItem::Line(parsed) => {
                let parsed_uid = match parsed.uid {
                    Some(logcat::UidField::Number(n)) => n.to_string(),
                    Some(logcat::UidField::Name(name)) => name,
                    None => String::new(),
                };
                prop_assert_eq!(parsed_uid, uid);
                prop_assert_eq!(parsed.pid, pid);
                prop_assert_eq!(parsed.tid, tid);
                prop_assert_eq!(parsed.tag, tag.trim_end());
            }
            other => prop_assert!(false, "{line:?} gave {other:?}"),
        }
    }

    #[test]
    fn fast_path_agrees_with_the_full_parser_on_any_line(line in prop_oneof![
        "[ 0-9.a-zA-Z:]{0,60}",
        "[ ]{0,20}[0-9]{1,19}\\.[0-9]{1,9} [ ]{0,3}0?[0-9]{1,7} [ ]{0,3}[0-9]{1,6} [ ]{0,3}[0-9]{1,6} [VDIWEF] [a-z .]{0,10}: [ -~]{0,20}",
    ]) {
        if let logcat::LogcatItem::Line(parsed) = logcat::parse_line(&line)
            && let (logcat::LogTime::Epoch { .. }, Some(logcat::UidField::Number(uid))) = (&parsed.time, &parsed.uid)
        {
            let fast = logcat::epoch_uid_field(line.as_bytes())
                .and_then(|field| std::str::from_utf8(field).ok())
                .and_then(|field| field.parse::<u32>().ok());
            prop_assert_eq!(fast, Some(*uid), "{:?}", line);
        }
    }

    #[test]
    fn searched_filter_equals_line_by_line_filter(
        lines in prop::collection::vec(
            prop_oneof![
                "[ ]{0,9}[0-9]{1,10}\\.[0-9]{3} [ ]{0,2}(10127|1012|101277|root|shell) [ 0-9]{1,12} I [a-z]{1,9}: [ -~]{0,30}",
                "[ -~]{0,50}",
            ],
            0..30,
        ),
        uid in prop_oneof![Just(10127u32), Just(1012), Just(0), Just(2000)],
    ) {
        let dump = lines.join("\n");
        let filter = logcat::UidFilter::new(uid);
        let searched: Vec<&[u8]> = filter.filter(dump.as_bytes()).collect();
        let simple: Vec<&[u8]> = logcat::split_lines(dump.as_bytes()).filter(|l| filter.matches(l)).collect();
        let mut backwards: Vec<&[u8]> = filter.filter_rev(dump.as_bytes()).collect();
        backwards.reverse();
        prop_assert_eq!(&searched, &simple);
        prop_assert_eq!(backwards, simple);
    }

    #[test]
    fn cut_reports_stay_under_48_kb(frames in 0usize..3000, reason_len in 0usize..200_000) {
        let frame = r#"{"imageOffset":1234,"symbol":"some_symbol_name_that_is_long","symbolLocation":12,"imageIndex":0}"#;
        let frames = vec![frame; frames].join(",");
        let reason = "x".repeat(reason_len);
        let file = format!(
            "{{\"bug_type\":\"309\"}}\n{{\"procName\":\"A\",\"exceptionReason\":{{\"composed_message\":\"{reason}\"}},\"lastExceptionBacktrace\":[{frames}],\"faultingThread\":0,\"threads\":[{{\"frames\":[{frames}]}}],\"usedImages\":[{{\"base\":1,\"size\":2,\"name\":\"A\"}}]}}"
        );
        let report = ips::ips_report(file.as_bytes()).unwrap().unwrap();
        prop_assert!(report.text.len() <= ips::MAX_CUT_BYTES, "{}", report.text.len());
    }
}

#[test]
fn the_last_instant_of_9999_east_of_utc_does_not_panic() {
    run_all(b"          253402300799.500 10127  1  1 E AndroidRuntime: FATAL EXCEPTION: main\n");
}

#[test]
fn every_fixture_parses_without_panicking() {
    let all = fixtures();
    assert!(all.len() >= 15);
    for bytes in all {
        run_all(&bytes);
    }
}
