//! Drop box entries, ANR cuts, tombstones, `debuggerd -b` and exit-info.
#![no_main]

use libfuzzer_sys::fuzz_target;
use phonelogs_crash::{PhoneClock, anr, dropbox, exitinfo, tombstone};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let clock = PhoneClock::default();
    let app = dropbox::AppMatch {
        uid: Some(10127),
        package: "com.example.app",
    };
    // The in-place reader gives the same entries as the owned parser.
    let in_place: Vec<dropbox::DropBoxEntry> = dropbox::dropbox_entries(&text)
        .inspect(|entry| {
            let _ = entry.matches(&app);
            let _ = entry.report_time(&clock);
        })
        .map(|entry| entry.to_entry())
        .collect();
    assert_eq!(in_place, dropbox::parse_dropbox(&text));
    for entry in dropbox::parse_dropbox(&text) {
        let _ = entry.matches(&dropbox::AppMatch {
            uid: Some(10127),
            package: "com.example.app",
        });
        let _ = entry.pid();
        let _ = entry.to_report(&clock);
    }
    let _ = anr::cut_anr(
        &text,
        anr::AnrTarget {
            pid: Some(1234),
            process: Some("com.example.app"),
        },
    );
    // Without a pid (Android 10's drop box): the first section of the name, and its pid alone.
    let by_name = anr::cut_anr(
        &text,
        anr::AnrTarget {
            pid: None,
            process: Some("com.example.app"),
        },
    );
    if let Some(pid) = by_name.pid {
        // Every section kept starts with that pid's header.
        for line in by_name.text.lines().filter(|l| l.trim().starts_with("----- pid ")) {
            let rest = &line.trim()["----- pid ".len()..];
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            assert_eq!(digits.parse::<u32>().ok(), Some(pid), "{line:?}");
        }
    }
    let _ = anr::cut_anr(&text, anr::AnrTarget::default());
    let _ = tombstone::parse_tombstone_header(&text);
    let _ = tombstone::tombstone_report(&text, &clock);
    let _ = tombstone::parse_backtrace(&text);
    let _ = exitinfo::parse_exit_info(&text);
});
