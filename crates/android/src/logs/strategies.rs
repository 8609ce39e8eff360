//! Random dumps for the property tests of [`super::lines`] and [`super::crashes`]: logcat
//! lines of mixed uids (the app's, its clone's, other apps', named system uids), multi-line
//! messages, every buffer, crashes of every kind and damaged lines; drop box entries with and
//! without `UID:` and `PID:`.

use phonelogs_driver::{LogLevel, LogQuery};
use proptest::prelude::*;
use time::OffsetDateTime;

pub(super) const APP: &str = "dev.phonelogs.crashtest";
pub(super) const UID: u32 = 10123;
/// 2025-11-30 10:00:00 UTC.
pub(super) const BASE: i64 = 1_764_496_800;

/// Who logs: the app, its clone in user 10, other apps, and system uids printed by name.
pub(super) fn uid_field() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => Just(UID.to_string()),
        2 => Just("1010123".to_owned()),
        2 => Just("10200".to_owned()),
        1 => Just("1000".to_owned()),
        1 => Just("root".to_owned()),
        1 => Just("shell".to_owned()),
        1 => Just("101230".to_owned()),
    ]
}

/// One event of a dump, as the lines logcat prints for it (a multi-line message repeats
/// its prefix on every line).
pub(super) fn event() -> impl Strategy<Value = (i64, Vec<Vec<u8>>)> {
    let message = prop_oneof![
        3 => prop::collection::vec("[ -~]{0,24}", 1..4),
        1 => Just(vec![
            "FATAL EXCEPTION: main".to_owned(),
            format!("Process: {APP}, PID: 4242"),
            "java.lang.IllegalStateException: boom".to_owned(),
            "\tat dev.phonelogs.crashtest.MainActivity.onCrash(MainActivity.java:42)".to_owned(),
        ]),
        1 => Just(vec![
            format!("Fatal signal 11 (SIGSEGV), code 1 (SEGV_MAPERR), fault addr 0x0 in tid 4243 (RenderThread), pid 4242 (phonelogs.crashtest)"),
        ]),
        1 => Just(vec![
            "*** *** *** *** *** *** *** *** *** *** *** *** *** *** *** ***".to_owned(),
            format!("pid: 4242, tid: 4243, name: RenderThread  >>> {APP} <<<"),
            "signal 11 (SIGSEGV), code 1 (SEGV_MAPERR), fault addr 0x0".to_owned(),
            "Abort message: 'bad'".to_owned(),
        ]),
    ];
    let tag = prop_oneof![
        Just("CrashTest"),
        Just("AndroidRuntime"),
        Just("libc"),
        Just("DEBUG"),
        Just("VRR [Game]"),
        Just("Net"),
    ];
    let shape = prop_oneof![
        12 => Just(0u8), // a log line
        1 => Just(1),    // a buffer separator
        1 => Just(2),    // garbage
        1 => Just(3),    // a threadtime line (no epoch)
        1 => Just(4),    // invalid UTF-8 in the text
        1 => Just(5),    // a cut-off prefix
        1 => Just(6),    // a `\r\n` line end
        1 => Just(7),    // a head with no `: ` after the tag
        1 => Just(8),    // a tag ending in `:` and no text
        1 => Just(9),    // `\r\r` at the end, a `\r` inside
        1 => Just(10),   // invalid UTF-8 in the head
    ];
    (
        -3000i64..4000,
        uid_field(),
        prop_oneof![Just(4242u32), Just(4300), Just(5151), 1u32..99999],
        prop::sample::select(vec!['V', 'D', 'I', 'W', 'E', 'F', 'A', 'S']),
        tag,
        message,
        shape,
    )
        .prop_map(|(step, uid, pid, level, tag, message, shape)| {
            let lines = match shape {
                1 => vec![b"--------- beginning of crash".to_vec()],
                2 => vec![b"garbage: not a line".to_vec()],
                3 => vec![
                    format!("11-30 10:00:01.000 {uid} {pid} {pid} I {tag}: threadtime")
                        .into_bytes(),
                ],
                5 => vec![format!("         {BASE}.0 {uid} {pid}").into_bytes()],
                7 => vec![
                    format!("{{time}} {uid:>5} {pid:>5} {pid:>5} {level} {tag} no colon")
                        .into_bytes(),
                ],
                8 => {
                    vec![format!("{{time}} {uid:>5} {pid:>5} {pid:>5} {level} {tag}:").into_bytes()]
                }
                9 => vec![
                    format!("{{time}} {uid:>5} {pid:>5} {pid:>5} {level} {tag}:\r {tag}: x\r\r")
                        .into_bytes(),
                ],
                10 => vec![
                    [
                        format!("{{time}} {uid:>5} {pid:>5}").as_bytes(),
                        b"\xff",
                        format!(" {pid:>5} {level} {tag}: x").as_bytes(),
                    ]
                    .concat(),
                ],
                _ => message
                    .iter()
                    .map(|text| {
                        let mut line =
                            format!("{{time}} {uid:>5} {pid:>5} {pid:>5} {level} {tag:<8}: {text}")
                                .into_bytes();
                        if shape == 4 {
                            line.extend_from_slice(b" \xff\xfe");
                        }
                        if shape == 6 {
                            line.push(b'\r');
                        }
                        line
                    })
                    .collect(),
            };
            (step, lines)
        })
}

/// A dump: events at times that mostly move forward (and now and then back: the lazy path
/// must then read the eager way), each line's `{time}` filled in.
pub(super) fn dump() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(event(), 0..60).prop_map(|events| {
        let mut out = Vec::new();
        let mut millis: i64 = 0;
        for (step, lines) in events {
            millis = (millis + step).max(0);
            let time = format!("{:>19}.{:03}", BASE + millis / 1000, millis % 1000);
            for line in lines {
                let text = String::from_utf8_lossy(&line).into_owned();
                let filled = if text.contains("{time}") {
                    let mut bytes = line.clone();
                    let at = text.find("{time}").unwrap();
                    bytes.splice(at..at + 6, time.bytes());
                    bytes
                } else {
                    line
                };
                out.extend_from_slice(&filled);
                out.push(b'\n');
            }
        }
        out
    })
}

pub(super) fn query() -> impl Strategy<Value = LogQuery> {
    (
        -2i64..200,
        0usize..40,
        prop::option::of(prop::sample::select(vec![
            LogLevel::Verbose,
            LogLevel::Debug,
            LogLevel::Info,
            LogLevel::Warn,
            LogLevel::Error,
            LogLevel::Fatal,
        ])),
    )
        .prop_map(|(since, count, level)| LogQuery {
            since: OffsetDateTime::from_unix_timestamp(BASE + since).unwrap(),
            level,
            count,
        })
}

/// A drop box entry of `dumpsys dropbox --print <tag>`: the app's, its clone's or another
/// app's, with or without `UID:` and `PID:` (Android 10 prints neither), at a time around
/// the query's `since`. An uncompressed text's header gives its true byte count, as AOSP's
/// `DropBoxManagerService` stores it (so its end is known, and a separator inside it starts no
/// entry); a compressed text's count is the file's, which says nothing of where the print ends.
pub(super) fn dropbox_entry() -> impl Strategy<Value = String> {
    entry_of(
        prop::option::of(prop::sample::select(vec![UID, 1_010_123, 10200])),
        true,
    )
}

/// A [`dropbox_entry`] whose end is known (an uncompressed text with no separator line in it),
/// with a `UID:` line drawn from `uids` (`None`: none, as Android 10 prints).
pub(super) fn whole_entry_of(uids: Vec<Option<u32>>) -> impl Strategy<Value = String> {
    entry_of(prop::sample::select(uids), false)
}

/// A drop box entry with a `UID:` line from `uid`, which may be damaged (a separator line in
/// its text) or compressed only when `odd`.
fn entry_of(uid: impl Strategy<Value = Option<u32>>, odd: bool) -> impl Strategy<Value = String> {
    let flags = if odd {
        any::<(bool, bool)>().boxed()
    } else {
        Just((false, false)).boxed()
    };
    (
        prop::sample::select(vec![
            "data_app_crash",
            "data_app_anr",
            "data_app_native_crash",
            "system_app_crash",
        ]),
        -200i64..200,
        prop::sample::select(vec![APP, "dev.phonelogs.crashtest:remote", "com.example.store"]),
        prop::option::of(prop::sample::select(vec![4242u32, 4300, 5151])),
        uid,
        any::<bool>(),
        flags,
    )
        .prop_map(|(tag, at, process, pid, uid, timestamp, (damaged, compressed))| {
            // Local times of a phone at +01:00.
            let local = OffsetDateTime::from_unix_timestamp(BASE + at).unwrap()
                .to_offset(time::UtcOffset::from_hms(1, 0, 0).unwrap());
            let date = format!(
                "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
                local.year(), local.month() as u8, local.day(), local.hour(), local.minute(), local.second()
            );
            let mut text = format!("Process: {process}\n");
            if let Some(pid) = pid {
                text.push_str(&format!("PID: {pid}\n"));
            }
            if let Some(uid) = uid {
                text.push_str(&format!("UID: {uid}\n"));
            }
            text.push_str(&format!("Package: {} v1 (1.0)\n", process.split(':').next().unwrap()));
            if timestamp {
                text.push_str(&format!("Timestamp: {date}.250+0100\n"));
            }
            text.push('\n');
            let section_pid = pid.unwrap_or(4300);
            match tag {
                "data_app_anr" => text.push_str(&format!(
                    "Subject: Input dispatching timed out\n\n----- pid {section_pid} at {date}.123456789+0100 -----\nCmd line: {process}\n\"main\" prio=5 tid=1 Sleeping\n----- end {section_pid} -----\n\n----- pid 600 at {date} -----\nCmd line: system_server\n----- end 600 -----\n"
                )),
                "data_app_native_crash" => text.push_str(&format!(
                    "*** *** *** *** *** *** *** *** *** *** *** *** *** *** *** ***\npid: {section_pid}, tid: {section_pid}, name: main  >>> {process} <<<\nsignal 6 (SIGABRT), code -6 (SI_TKILL), fault addr --------\n"
                )),
                _ => text.push_str("java.lang.IllegalStateException: Crash button tapped\n\tat dev.phonelogs.crashtest.MainActivity.onCrash(MainActivity.java:42)\n"),
            }
            if damaged {
                text.push_str("========================================\nnot a header line\nProcess: dev.phonelogs.crashtest\n");
            }
            let contents = if compressed {
                "compressed text, 300".to_owned()
            } else {
                format!("text, {}", text.len())
            };
            format!("========================================\n{date} {tag} ({contents} bytes)\n{text}")
        })
}
