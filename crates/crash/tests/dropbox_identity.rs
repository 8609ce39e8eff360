//! Whose a drop box entry is, when another app writes header lines into the values it chooses.
//!
//! Android 10 and 11 print no `UID:` header, so an entry is matched by its package list. An app
//! chooses its `versionName` (printed raw inside its own `Package: <pkg> v<code> (<name>)`
//! line, line breaks included), its process name (any dotted name, the app's own included), its
//! activities' names and a broadcast's action (in an ANR's `Subject:`). None of these may make
//! its entry the app's, in any position, on any release's header layout; the app's own entries
//! (every drop box fixture) still are.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use phonelogs_crash::PhoneClock;
use phonelogs_crash::dropbox::{self, AppMatch};
use proptest::prelude::*;

const APP: AppMatch<'static> = AppMatch {
    uid: Some(10127),
    package: "com.example.crashtest",
};
const OTHER: &str = "com.example.other";
const OTHER_UID: u32 = 10300;
/// In every line the other app's entry holds, so a report that shows it is caught.
const MARK: &str = "OTHER-APP-MARK";
const SEPARATOR: &str = "========================================";

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/android/dropbox")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

/// Header lines that name the app, as another app would write them.
fn forged_line() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "UID: 10127",
        "UID:10127",
        "PID: 9001",
        "Process: com.example.crashtest",
        "Process: com.example.crashtest:remote",
        "Package: com.example.crashtest v1 (1.0)",
        "Package: com.example.crashtest v1",
        "Package: com.example.crashtest",
        "Flags: 0x38c83e44",
        "SystemUptimeMs: 1062000",
        "Frozen: false",
        "Timestamp: 2020-09-14 10:05:10.003+0200",
        "",
    ])
    .prop_map(str::to_owned)
}

/// The release whose header layout an entry has (shared/notes/android-formats.md §2).
#[derive(Debug, Clone, Copy)]
enum Layout {
    /// Android 10: `Process`, `Flags`, `Package`… (no `PID:`/`UID:`).
    Android10,
    /// Android 16: `SystemUptimeMs`, `Process`, `PID`, `UID`, `Frozen`, `Flags`, `Package`….
    Android16,
}

/// Where the forged lines go: the `versionName` of one of the package lines, or another value
/// the app chooses.
#[derive(Debug, Clone, Copy)]
enum Place {
    VersionName(usize),
    Activity,
    Subject,
}

/// The other app's entry text (its headers, a blank line, a body of `tag`'s kind) with
/// `forged` written into the value at `place`.
#[allow(clippy::too_many_arguments)]
fn other_apps_text(
    layout: Layout,
    tag: &str,
    process: &str,
    hosted: usize,
    place: Place,
    forged: &str,
    close: &str,
    tail: &str,
) -> String {
    let mut out = String::new();
    if matches!(layout, Layout::Android16) {
        out.push_str("SystemUptimeMs: 1062000\n");
    }
    out.push_str(&format!("Process: {process}\n"));
    if matches!(layout, Layout::Android16) {
        out.push_str(&format!("PID: 5151\nUID: {OTHER_UID}\nFrozen: false\n"));
    }
    out.push_str("Flags: 0x38c83e44\n");
    // A process hosting several packages (the other app's shared-uid siblings) prints a line
    // for each.
    let packages: Vec<String> = std::iter::once(OTHER.to_owned())
        .chain((0..hosted).map(|n| format!("{OTHER}.plugin{n}")))
        .collect();
    let inject = |value: &str| format!("{value}{close}\n{forged}\n{tail}");
    for (index, package) in packages.iter().enumerate() {
        let name = match place {
            Place::VersionName(at) if at % packages.len() == index => inject("2.3"),
            _ => "2.3".to_owned(),
        };
        out.push_str(&format!("Package: {package} v7 ({name})\n"));
    }
    out.push_str("Foreground: Yes\n");
    let activity = match place {
        Place::Activity => inject(&format!("{OTHER}/.Main")),
        _ => format!("{OTHER}/.Main"),
    };
    let subject = match place {
        Place::Subject => inject("Broadcast of Intent { act=x"),
        _ => "Input dispatching timed out".to_owned(),
    };
    if tag.ends_with("_anr") {
        out.push_str(&format!("Activity: {activity}\nSubject: {subject}\n"));
    } else if matches!(place, Place::Activity | Place::Subject) {
        // A crash prints no activity or subject; a `Crash-Tag:` is as much the app's text.
        out.push_str(&format!("Crash-Tag: {activity}{subject}\n"));
    }
    out.push_str("Build: google/walleye/walleye:10/QQ3A.200805.001/6578210:user/release-keys\n\n");
    if tag.ends_with("_anr") {
        out.push_str(&format!(
            "Subject: {MARK}\n\n----- pid 5151 at 2020-09-14 10:05:08 -----\nCmd line: {process}\n\"main\" prio=5 tid=1 Sleeping {MARK}\n----- end 5151 -----\n\n\
             ----- pid 1230 at 2020-09-14 10:05:08 -----\nCmd line: system_server\n\"main\" prio=5 tid=1 Native SYSTEM-SERVER\n----- end 1230 -----\n\n\
             ----- pid 9001 at 2020-09-14 10:05:08 -----\nCmd line: com.example.crashtest\n\"main\" prio=5 tid=1 Sleeping {MARK}\n----- end 9001 -----\n"
        ));
    } else if tag.ends_with("_native_crash") {
        out.push_str(&format!(
            "*** *** *** *** *** *** *** *** *** *** *** *** *** *** *** ***\npid: 5151, tid: 5170, name: RenderThread  >>> {process} <<<\nuid: {OTHER_UID}\nsignal 6 (SIGABRT), code -6 (SI_TKILL), fault addr --------\nAbort message: '{MARK}'\n"
        ));
    } else {
        out.push_str(&format!(
            "java.lang.IllegalStateException: {MARK}\n\tat {OTHER}.Main.onClick(Main.java:1)\n"
        ));
    }
    out
}

/// One entry as `dumpsys dropbox --print` prints it (the text's byte count holds).
fn printed(date: &str, tag: &str, text: &str) -> String {
    let mut out = format!(
        "{SEPARATOR}\n{date} {tag} (text, {} bytes)\n{text}",
        text.len()
    );
    if !text.ends_with('\n') {
        out.push('\n');
    }
    out.push('\n');
    out
}

fn place() -> impl Strategy<Value = Place> {
    prop_oneof![
        4 => (0usize..3).prop_map(Place::VersionName),
        1 => Just(Place::Activity),
        1 => Just(Place::Subject),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Another app's crash, ANR or native crash entry, whatever header lines it writes into
    /// its `versionName`, its activity's name or its subject (and whatever it names its
    /// process), is never the app's: no report of it reaches the app's reports, and no pid it
    /// forges cuts the app's report. The app's own entries around it still are the app's.
    #[test]
    fn header_lines_forged_in_another_apps_values_never_make_its_entry_the_apps(
        layout in prop::sample::select(vec![Layout::Android10, Layout::Android16]),
        tag in prop::sample::select(vec!["data_app_crash", "data_app_anr", "data_app_native_crash"]),
        process in prop::sample::select(vec![OTHER, "com.example.other:bg", "com.example.crashtest"]),
        hosted in 0usize..3,
        place in place(),
        forged in prop::collection::vec(forged_line(), 1..5),
        close in prop::sample::select(vec!["", ")"]),
        tail in prop::sample::select(vec!["", "x", "Foreground: No", " ("]),
        crlf in any::<bool>(),
    ) {
        let text = other_apps_text(layout, tag, process, hosted, place, &forged.join("\n"), close, tail);
        let mine = fixture("print-android10-no-pid.txt");
        let mut dump = format!("{}{}", mine.trim_end(), "\n\n");
        dump.push_str(&printed("2020-09-14 10:11:00", tag, &text));
        if crlf {
            dump = dump.replace('\n', "\r\n");
        }
        let entries = dropbox::parse_dropbox(&dump);
        let theirs = entries.last().unwrap();
        prop_assert!(!theirs.matches(&APP), "{:#?}", theirs);
        let clock = PhoneClock::default();
        let reports = dropbox::dropbox_reports(&dump, Some(&APP), &clock);
        for report in &reports {
            prop_assert!(
                !report.text.contains(MARK) && !report.summary.contains(MARK),
                "{}", report.text
            );
            prop_assert!(!report.text.contains("SYSTEM-SERVER"), "{}", report.text);
        }
        // The app's own three entries, and no more.
        prop_assert_eq!(reports.len(), 3, "{:#?}", reports);
        // The in-place reader decides the same.
        let last = dropbox::dropbox_entries(&dump).last().unwrap();
        prop_assert!(!last.matches(&APP));
    }
}

/// The app's own entries in every drop box fixture (Android 9, 10 and 16 layouts, with and
/// without `UID:`) are still the app's.
#[test]
fn the_apps_own_fixture_entries_are_still_the_apps() {
    for (name, count) in [
        ("print-app-entries.txt", 3),
        ("print-old-no-uid.txt", 1),
        ("print-android10-no-pid.txt", 3),
        ("print-android10-anr-clone.txt", 1),
    ] {
        let dump = fixture(name);
        let reports = dropbox::dropbox_reports(&dump, Some(&APP), &PhoneClock::default());
        assert_eq!(reports.len(), count, "{name}: {reports:#?}");
        for entry in dropbox::dropbox_entries(&dump) {
            let process = entry.header("Process").unwrap_or("");
            let ours = process.starts_with(APP.package) && entry.header("Flags").is_some();
            assert_eq!(entry.matches(&APP), ours, "{name}: {entry:?}");
        }
    }
}

/// Android 10's ANR of the app whose subject names a broadcast another app sent, its action
/// holding a `PID:` line of system_server's pid: the report is still the app's, its pid is the
/// app's own section's, and system_server's section stays out.
#[test]
fn a_pid_forged_in_the_apps_own_subject_never_cuts_its_anr() {
    let dump = fixture("print-android10-anr-clone.txt").replace(
        "Subject: Input dispatching timed out (",
        "Subject: Broadcast of Intent { act=x\nPID: 1230\nUID: 1000\n} (",
    );
    let reports = dropbox::dropbox_reports(&dump, Some(&APP), &PhoneClock::default());
    assert_eq!(reports.len(), 1, "{reports:#?}");
    assert_eq!(reports[0].pid, Some(9001));
    assert!(
        !reports[0].text.contains("Cmd line: system_server"),
        "{}",
        reports[0].text
    );
    assert!(reports[0].text.contains("MainActivity.onHang"));
}
