//! An ANR entry without a pid (Android 10's drop box prints no `PID:`): the app's report keeps
//! the first section whose `Cmd line:` is the app (the ANR'd process, which Android dumps first)
//! and only the sections of that pid, never the section of the app's copy in another user (an
//! app clone, a work profile) dumped in the same trace (`testdata/README.md` says where the
//! fixture's layout comes from).

#![allow(clippy::unwrap_used)]

use std::path::Path;

use phonelogs_crash::{CrashKind, PhoneClock, dropbox};

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/android/dropbox")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn an_android10_anr_keeps_the_apps_process_and_not_its_clones() {
    let text = fixture("print-android10-anr-clone.txt");
    let app = dropbox::AppMatch {
        uid: Some(10127),
        package: "com.example.crashtest",
    };
    let reports = dropbox::dropbox_reports(&text, Some(&app), &PhoneClock::default());
    assert_eq!(reports.len(), 1, "{reports:?}");
    let report = &reports[0];
    assert_eq!(report.kind, CrashKind::Anr);
    assert_eq!(report.pid, Some(9001));
    assert!(
        report.text.contains("MainActivity.onHang"),
        "{}",
        report.text
    );
    // The clone's section (pid 9301, the same command line) stays out, whole.
    for theirs in ["WorkProfileSync", "----- pid 9301", "sysTid=9301"] {
        assert!(!report.text.contains(theirs), "{theirs} in {}", report.text);
    }
    assert!(
        report
            .warnings
            .iter()
            .any(|w| w.contains("left out 2 section(s)")),
        "{:?}",
        report.warnings
    );
}
