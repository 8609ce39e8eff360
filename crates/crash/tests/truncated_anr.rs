//! An ANR whose trace the drop box cut to its size limit still shows the app's own section
//! (the final review of issue 28, finding 1: "only a closed section is kept" lost it).
//!
//! The drop box keeps at most DROPBOX_MAX_SIZE (192 KB) of an ANR: ActivityManagerService's
//! addErrorToDropBox appends the trace with
//! `FileUtils.readTextFile(dataFile, maxDataFileSize, "\n\n[[TRUNCATED]]")`, which keeps the
//! trace's *first* bytes and ends them with that mark (seen in the decompiled
//! ActivityManagerService of several public ROM dumps: `const-string/jumbo v11,
//! "\n\n[[TRUNCATED]]"` before `FileUtils;->readTextFile`; see testdata/README.md). The ANR'd
//! process is dumped first, so a large app's own section is the one cut: it has no
//! `----- end N -----` line.
#![allow(clippy::unwrap_used)]

use phonelogs_crash::PhoneClock;
use phonelogs_crash::anr::{AnrTarget, cut_anr};
use phonelogs_crash::dropbox::{AppMatch, dropbox_reports};

/// The app's own section, cut by the drop box's size limit (Android 11+: the pid is known).
#[test]
fn a_truncated_anr_still_shows_the_apps_own_main_thread() {
    let trace = "\
Subject: Input dispatching timed out
CPU usage from 0ms to 5000ms later:
  99% 4321/com.example.app: 98% user
  14% 1230/system_server: 9.2% user

----- pid 4321 at 2026-11-30 10:00:00.123456789+0100 -----
Cmd line: com.example.app
DALVIK THREADS (180):
\"main\" prio=5 tid=1 Sleeping
  at com.example.app.MainActivity.onHang(MainActivity.java:57)
\"pool-3-thread-1\" prio=5 tid=2 Waiting
  at java.lang.Object.wait(Native method)


[[TRUNCATED]]
";
    let cut = cut_anr(
        trace,
        AnrTarget {
            pid: Some(4321),
            process: None,
        },
    );
    assert!(
        cut.text.contains("MainActivity.onHang"),
        "the app's own main thread is gone from its ANR: {:?}\n{}",
        cut.warnings,
        cut.text
    );
}

/// The same through the drop box, Android 10 (no `PID:` header): the fixture's entry, cut by
/// the drop box inside the app's section.
#[test]
fn a_truncated_android10_anr_still_shows_the_apps_own_main_thread() {
    let text = include_str!("../../../testdata/android/dropbox/print-android10-anr-clone.txt");
    let at = text.find("\n----- end 9001 -----").unwrap();
    let text = format!("{}\n\n[[TRUNCATED]]\n", &text[..at]);
    let app = AppMatch {
        uid: Some(10127),
        package: "com.example.crashtest",
    };
    let reports = dropbox_reports(&text, Some(&app), &PhoneClock::default());
    assert_eq!(reports.len(), 1);
    assert!(
        reports[0].text.contains("MainActivity.onHang"),
        "the app's own main thread is gone from its ANR: {:?}\n{}",
        reports[0].warnings,
        reports[0].text
    );
}
