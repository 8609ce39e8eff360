//! The crash reader over a fake crash report directory: the mover first, the app's reports
//! only, the 50-read cap, the 14-hour window of file-name times, bug types and watchdogs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::serde_like::Termination;
use common::*;
use phonelogs_driver::{AppId, CrashKind};
use phonelogs_ios::crashes::{MAX_READS, read_crashes};
use time::macros::datetime;

const APP: &str = "dev.phonelogs.crashtest";
const TIMEOUT: Duration = Duration::from_secs(10);
/// The app's executable (`CFBundleExecutable`), which its report files are named after.
const EXE: &str = "CrashTest";

fn crash(timestamp: &str, pid: u32, reason: &str) -> Vec<u8> {
    ips_309(
        APP,
        "CrashTest",
        timestamp,
        pid,
        ("EXC_CRASH", "SIGABRT"),
        Some(reason),
        None,
    )
}

#[tokio::test]
async fn reads_the_apps_reports_newest_first_and_nothing_else() {
    let phone = FakePhone::new();
    phone.add_file(
        "CrashTest-2026-11-30-110005.ips",
        crash("2026-11-30 11:00:05.00 +0100", 41, "first"),
    );
    phone.add_file(
        "Retired/CrashTest-2026-11-30-110105.ips.synced",
        crash("2026-11-30 11:01:05.00 +0100", 42, "second"),
    );
    phone.add_file(
        "CrashTest-2026-11-30-110200.ips",
        ips_309(
            APP,
            "CrashTest",
            "2026-11-30 11:02:00.00 +0100",
            43,
            ("EXC_CRASH", "SIGKILL"),
            None,
            Some(Termination {
                namespace: "FRONTBOARD",
                code: 2_343_432_205,
                reason: &watchdog_reason("scene-update watchdog transgression"),
            }),
        ),
    );
    // Another app, an extension of this one, the WebDriverAgent runner, a jetsam report of the
    // app, a damaged file and a name that is no report.
    phone.add_file(
        "Store-2026-11-30-110300.ips",
        ips_309(
            "com.example.store",
            "Store",
            "2026-11-30 11:03:00.00 +0100",
            50,
            ("EXC_CRASH", "SIGABRT"),
            Some("OTHER-APP-SECRET"),
            None,
        ),
    );
    phone.add_file(
        "Widget-2026-11-30-110301.ips",
        ips_309(
            "dev.phonelogs.crashtest.widget",
            "Widget",
            "2026-11-30 11:03:01.00 +0100",
            51,
            ("EXC_CRASH", "SIGABRT"),
            Some("extension"),
            None,
        ),
    );
    phone.add_file(
        "WebDriverAgentRunner-Runner-2026-11-30-110302.ips",
        ips_309(
            "com.facebook.WebDriverAgentRunner.xctrunner",
            "WebDriverAgentRunner-Runner",
            "2026-11-30 11:03:02.00 +0100",
            52,
            ("EXC_CRASH", "SIGABRT"),
            Some("runner"),
            None,
        ),
    );
    phone.add_file("JetsamEvent-2026-11-30-110303.ips", format!("{{\"bug_type\":\"298\",\"bundleID\":\"{APP}\",\"timestamp\":\"2026-11-30 11:03:03.00 +0100\"}}\n{{\"largestProcess\":\"CrashTest\"}}").into_bytes());
    phone.add_file(
        "CrashTest-2026-11-30-110304.ips",
        b"{\"bug_type\":\"309\",\"bundleID\"".to_vec(),
    );
    phone.add_file("DiagnosticLogs/sysdiagnose/x.tar.gz", b"\x1f\x8b".to_vec());

    let since = datetime!(2026-11-30 10:00:00 UTC);
    let reports = read_crashes(&phone, &AppId::new(APP), EXE, since, 10, TIMEOUT)
        .await
        .unwrap();
    let pids: Vec<Option<u32>> = reports.iter().map(|r| r.pid).collect();
    assert_eq!(pids, [Some(43), Some(42), Some(41)]);
    assert_eq!(reports[0].kind, CrashKind::Watchdog);
    assert_eq!(reports[0].summary, "scene-update watchdog transgression");
    assert_eq!(reports[1].kind, CrashKind::Crash);
    assert_eq!(reports[1].summary, "second");
    assert_eq!(reports[2].time, datetime!(2026-11-30 10:00:05 UTC));
    for report in &reports {
        assert!(!report.text.contains("OTHER-APP-SECRET") && !report.text.contains("runner"));
        assert!(report.text.len() <= 48 * 1024);
    }
    let state = phone.state.lock().unwrap();
    assert_eq!(state.flushes, 1, "the mover is asked first");
    assert!(state.files.len() == 9, "nothing was moved or deleted");
    assert!(!state.reads.iter().any(|r| r.contains("sysdiagnose")));
    // Only files named after the app's executable were opened at all.
    assert!(
        state
            .reads
            .iter()
            .all(|r| r.trim_start_matches("Retired/").starts_with("CrashTest-")),
        "{:?}",
        state.reads
    );
}

#[tokio::test]
async fn limit_and_since_apply_to_header_times() {
    let phone = FakePhone::new();
    // The name says 09:30 local (within 14 h of since), the header says 08:30 UTC: too old.
    phone.add_file(
        "CrashTest-2026-11-30-093000.ips",
        crash("2026-11-30 09:30:00.00 +0100", 1, "old"),
    );
    phone.add_file(
        "CrashTest-2026-11-30-113000.ips",
        crash("2026-11-30 11:30:00.00 +0100", 2, "new"),
    );
    phone.add_file(
        "CrashTest-2026-11-30-114000.ips",
        crash("2026-11-30 11:40:00.00 +0100", 3, "newest"),
    );
    let app = AppId::new(APP);
    let since = datetime!(2026-11-30 09:00:00 UTC);
    let all = read_crashes(&phone, &app, EXE, since, 10, TIMEOUT)
        .await
        .unwrap();
    assert_eq!(
        all.iter().map(|r| r.pid).collect::<Vec<_>>(),
        [Some(3), Some(2)]
    );
    let one = read_crashes(&phone, &app, EXE, since, 1, TIMEOUT)
        .await
        .unwrap();
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].pid, Some(3));
    assert!(
        read_crashes(&phone, &app, EXE, since, 0, TIMEOUT)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn file_names_near_the_fourteen_hour_edge() {
    let phone = FakePhone::new();
    // A phone at UTC-12: the name's local time is 12 h behind the header's instant. A file
    // named 13h59m before since is read; one named 14h01m before is not even opened.
    phone.add_file(
        "CrashTest-2026-11-30-003000.ips",
        crash("2026-11-30 00:30:00.00 -1200", 7, "west"),
    );
    // Named 13h59m before since, so it is opened, but its header puts it before since.
    phone.add_file(
        "CrashTest-2026-11-29-220100.ips",
        crash("2026-11-29 22:01:00.00 -1200", 6, "edge"),
    );
    phone.add_file(
        "CrashTest-2026-11-29-215900.ips",
        crash("2026-11-29 21:59:00.00 -1200", 8, "too old"),
    );
    // A phone at UTC+14: the name is 14 h ahead; it is read and judged by its header.
    phone.add_file(
        "CrashTest-2026-12-01-020000.ips",
        crash("2026-12-01 02:00:00.00 +1400", 9, "east"),
    );
    let since = datetime!(2026-11-30 12:00:00 UTC);
    let reports = read_crashes(&phone, &AppId::new(APP), EXE, since, 10, TIMEOUT)
        .await
        .unwrap();
    let state = phone.state.lock().unwrap();
    assert!(
        state
            .reads
            .contains(&"CrashTest-2026-11-29-220100.ips".to_owned())
    );
    assert!(
        !state
            .reads
            .contains(&"CrashTest-2026-11-29-215900.ips".to_owned())
    );
    // Judged by header times: 12:30 UTC (west) is newer than 12:00 UTC (east), whatever the names say.
    assert_eq!(
        reports.iter().map(|r| r.pid).collect::<Vec<_>>(),
        [Some(7), Some(9)]
    );
}

#[tokio::test]
async fn at_most_fifty_reports_are_read_per_call() {
    let phone = FakePhone::new();
    for i in 0..70u32 {
        let (m, s) = (i / 60, i % 60);
        let name = format!("CrashTest-2026-11-30-11{m:02}{s:02}.ips");
        phone.add_file(
            &name,
            crash(
                &format!("2026-11-30 11:{m:02}:{s:02}.00 +0100"),
                1000 + i,
                "boom",
            ),
        );
    }
    let since = datetime!(2026-11-30 09:00:00 UTC);
    // A limit above the cap: the 50 newest are read, no more (a smaller limit reads fewer:
    // `reading_stops_once_the_limit_is_met`).
    let reports = read_crashes(&phone, &AppId::new(APP), EXE, since, 100, TIMEOUT)
        .await
        .unwrap();
    assert_eq!(reports.len(), MAX_READS);
    assert_eq!(reports[0].pid, Some(1069));
    let state = phone.state.lock().unwrap();
    assert_eq!(state.reads.len(), MAX_READS);
    assert!(
        state
            .reads
            .iter()
            .all(|r| r.as_str() >= "CrashTest-2026-11-30-110020.ips")
    );
}

#[tokio::test]
async fn a_mover_that_answers_badly_does_not_stop_the_copy() {
    let phone = FakePhone::new();
    phone.state.lock().unwrap().mover_bytes = b"pong".to_vec();
    phone.add_file(
        "CrashTest-2026-11-30-110005.ips",
        crash("2026-11-30 11:00:05.00 +0100", 41, "first"),
    );
    let reports = read_crashes(
        &phone,
        &AppId::new(APP),
        EXE,
        datetime!(2026-11-30 09:00 UTC),
        3,
        TIMEOUT,
    )
    .await
    .unwrap();
    assert_eq!(reports.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_mover_that_never_answers_times_out() {
    let phone = FakePhone::new();
    phone.state.lock().unwrap().mover_bytes = b"pi".to_vec();
    phone.add_file(
        "CrashTest-2026-11-30-110005.ips",
        crash("2026-11-30 11:00:05.00 +0100", 41, "first"),
    );
    let reports = read_crashes(
        &phone,
        &AppId::new(APP),
        EXE,
        datetime!(2026-11-30 09:00 UTC),
        3,
        TIMEOUT,
    )
    .await
    .unwrap();
    assert_eq!(reports.len(), 1);
}

/// Issue 38, item 5: reports are read newest first and no further than the call's limit: 80
/// reports of the app and a limit of 3 open 3 files, not 50.
#[tokio::test]
async fn reading_stops_once_the_limit_is_met() {
    let phone = FakePhone::new();
    for i in 0..80u32 {
        let (minute, second) = (i / 60, i % 60);
        phone.add_file(
            &format!("CrashTest-2026-11-30-11{minute:02}{second:02}.ips"),
            crash(
                &format!("2026-11-30 11:{minute:02}:{second:02}.00 +0100"),
                100 + i,
                "crash",
            ),
        );
    }
    let since = datetime!(2026-11-30 09:00:00 UTC);
    let reports = read_crashes(&phone, &AppId::new(APP), EXE, since, 3, TIMEOUT)
        .await
        .unwrap();
    assert_eq!(
        reports.iter().map(|r| r.pid).collect::<Vec<_>>(),
        [Some(179), Some(178), Some(177)]
    );
    assert_eq!(phone.state.lock().unwrap().reads.len(), 3);
}

/// Issue 38, item 6: an iOS 26 crash folder holds entries that are no report (go-ios's e2e
/// test `TestCrashLs`: `BioLog/`, `Retired/<name>.ips.ca.synced`); none is opened, even one
/// named after the app's executable.
#[tokio::test]
async fn what_is_not_a_report_is_never_read() {
    let phone = FakePhone::new();
    phone.add_file("BioLog/CrashTest-2026-11-30-110000.ips", b"bio".to_vec());
    phone.add_file(
        "Retired/CrashTest-2026-11-30-110001.ips.ca.synced",
        b"{\"bug_type\":\"211\"}\n{}".to_vec(),
    );
    phone.add_file(
        "Analytics-2026-11-30-110002.ips.ca.synced",
        b"{\"bug_type\":\"211\"}\n{}".to_vec(),
    );
    phone.add_file(
        "CrashTest-2026-11-30-110003.ips",
        crash("2026-11-30 11:00:03.00 +0100", 7, "the one report"),
    );
    let since = datetime!(2026-11-30 09:00:00 UTC);
    let reports = read_crashes(&phone, &AppId::new(APP), EXE, since, 10, TIMEOUT)
        .await
        .unwrap();
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0].pid, Some(7));
    assert_eq!(
        phone.state.lock().unwrap().reads,
        ["CrashTest-2026-11-30-110003.ips"]
    );
}
