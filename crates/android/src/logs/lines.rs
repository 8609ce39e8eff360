//! The app's log lines: the logcat command of one `app_logs` call, and the app's lines read
//! from its `-v epoch -v uid` dump, every line's uid checked here whatever logcat was asked.

use crate::quote::quote;
use phonelogs_crash::logcat::{
    LogTime, LogcatHead, LogcatItem, UidFieldRef, UidFilter, epoch_uid_field, parse_line,
    parse_log_head, parse_log_line, split_lines, split_lines_rev,
};
use phonelogs_driver::{LogLevel, LogLine, LogQuery, LogResult};
use time::OffsetDateTime;

/// The logcat command of one `app_logs` call: the spec's
/// `logcat -d -b main,system,crash -v epoch -v uid --uid=<uid> … *:<level>`, one dump per call,
/// with `-t '<since>'` (epoch seconds) where the spec has `-t <count>`.
///
/// Why a time and not a count: logd applies `-t <count>` and logcat then drops the other uids'
/// lines (and the `*:<level>` filterspec) on its own side, so a count counts every app's lines
/// and a busy phone would return fewer of the app's lines than asked for, or none. A time cuts
/// the same way for every uid; the count and the level are applied here on the app's own
/// lines. Without `--uid` (Android 10) every uid's lines since then are read and the
/// app's kept.
pub(crate) fn logcat_command(uids: &[u32], query: &LogQuery, uid_option: bool) -> String {
    let mut words: Vec<String> = [
        "logcat",
        "-d",
        "-b",
        "main,system,crash",
        "-v",
        "epoch",
        "-v",
        "uid",
    ]
    .iter()
    .map(|w| (*w).to_owned())
    .collect();
    if uid_option {
        let list: Vec<String> = uids.iter().map(u32::to_string).collect();
        words.push(format!("--uid={}", list.join(",")));
    }
    let since = query.since.unix_timestamp_nanos().max(0);
    let (seconds, millis) = (since / 1_000_000_000, (since % 1_000_000_000) / 1_000_000);
    words.push("-t".into());
    words.push(format!("{seconds}.{millis:03}"));
    let level = query.level.unwrap_or(LogLevel::Verbose).android_char();
    words.push(format!("*:{level}"));
    words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
}

/// Whether a logcat's complaint says it does not know `--uid`.
pub(crate) fn logcat_lacks_uid_option(stderr: &str, stdout: &str) -> bool {
    let text = format!("{stderr}\n{stdout}").to_ascii_lowercase();
    (text.contains("uid")
        && (text.contains("unrecognized")
            || text.contains("unknown")
            || text.contains("invalid option")))
        || text.contains("unrecognized option")
}

/// The filters that decide whether a line is one of the app's uids.
pub(crate) fn uid_filters(uids: &[u32]) -> Vec<UidFilter> {
    uids.iter().map(|uid| UidFilter::new(*uid)).collect()
}

/// Whether a dump asked for with `--uid` holds lines of other uids: a logcat that ignored the
/// option, whose `-t` then counted everyone's lines.
pub(crate) fn has_foreign_lines(dump: &[u8], uids: &[u32]) -> bool {
    let filters = uid_filters(uids);
    split_lines(dump).any(|line| {
        phonelogs_crash::logcat::epoch_uid_field(line).is_some()
            && !filters.iter().any(|filter| filter.matches(line))
    })
}

/// The app's lines in a `-v epoch -v uid` dump that match `query`, the newest `query.count`,
/// oldest first, and how many older matching lines were left out. Every line's uid is checked
/// here whatever logcat was asked, so a logcat that ignored `--uid` (or had none) passes on
/// nothing of another uid.
///
/// It costs what it keeps, not what the phone sent: the dump is read from its end a line at a
/// time (`memrchr`) with the uid fast path (`epoch_uid_field`, a fixed place in the line, so
/// other uids' lines cost a comparison), only the `query.count` newest matching lines become
/// [`LogLine`]s, and the older ones are read in place and counted without allocating: by their
/// heads alone (`parse_log_head`: time, uid, level; times compared as integers), their tag and
/// text neither read nor checked as UTF-8. That equals
/// [`app_lines_eager`] (every line parsed, sorted by time, the newest kept) when no older line
/// is newer than the oldest kept one, which holds for logcat's output (its buffers merged in
/// time order); a dump that breaks it is read the eager way, so the result never depends on the
/// order.
#[cfg(test)]
pub(crate) fn app_lines(dump: &[u8], uids: &[u32], query: &LogQuery) -> LogResult {
    app_lines_and_foreign(dump, uids, query).0
}

/// [`app_lines`], and whether the dump held lines of other uids (see [`has_foreign_lines`]),
/// told in the same pass: what `app_logs` reads a dump with.
pub(crate) fn app_lines_and_foreign(
    dump: &[u8],
    uids: &[u32],
    query: &LogQuery,
) -> (LogResult, bool) {
    let eager = || {
        (
            app_lines_eager(dump, uids, query),
            has_foreign_lines(dump, uids),
        )
    };
    let [uid] = uids else {
        return eager();
    };
    let filter = UidFilter::new(*uid);
    let instants = EpochRange::new();
    let since = EpochRange::key(query.since);
    let mut lines: Vec<LogLine> = Vec::with_capacity(query.count.min(1024));
    let mut oldest_kept: Option<(i64, u32)> = None;
    let mut omitted = 0usize;
    let mut foreign = false;
    for raw in split_lines_rev(dump) {
        let Some(field) = epoch_uid_field(raw) else {
            continue;
        };
        if !filter.matches_field(field) {
            foreign = true;
            continue;
        }
        let key = if lines.len() >= query.count {
            // Only counted: its head decides (the same lines `parse_log_line` accepts), its tag
            // and text are neither read nor checked as UTF-8.
            let Some(head) = parse_log_head(raw).filter(LogcatHead::has_tag) else {
                continue;
            };
            let head = (head.time, head.uid, head.level);
            let Some((key, _, _)) = wanted(head, uids, query, since, &instants) else {
                continue;
            };
            key
        } else {
            let text = line_text(raw);
            let Some(line) = parse_log_line(&text) else {
                continue;
            };
            let head = (line.time, line.uid, line.level);
            let Some((key, level, uid)) = wanted(head, uids, query, since, &instants) else {
                continue;
            };
            if lines.len() < query.count {
                let Some(time) = line.time.to_offset_date_time(None, time::UtcOffset::UTC) else {
                    continue;
                };
                oldest_kept = Some(oldest_kept.map_or(key, |oldest| oldest.min(key)));
                lines.push(LogLine {
                    time,
                    level,
                    tag: line.tag.to_owned(),
                    text: line.text.to_owned(),
                    pid: Some(line.pid),
                    tid: Some(line.tid),
                    uid: Some(uid),
                });
                continue;
            }
            key
        };
        if oldest_kept.is_some_and(|oldest| key > oldest) {
            tracing::debug!("a logcat dump out of time order; reading every line");
            return eager();
        }
        omitted += 1;
    }
    lines.reverse();
    // Stable, as the eager path's sort, so lines of the same instant keep the dump's order.
    lines.sort_by_key(|line| line.time);
    (
        LogResult {
            lines,
            omitted,
            mark: None,
            processes: Vec::new(),
            notices: Vec::new(),
        },
        foreign,
    )
}

/// The epoch seconds `time` can turn into an instant, so lines are compared as integers
/// (`(seconds, nanoseconds)`, ordered as the instants are) and only the kept ones become
/// `OffsetDateTime`s.
struct EpochRange {
    first: i64,
    last: i64,
}

impl EpochRange {
    fn new() -> Self {
        EpochRange {
            first: time::PrimitiveDateTime::MIN.assume_utc().unix_timestamp(),
            last: time::PrimitiveDateTime::MAX.assume_utc().unix_timestamp(),
        }
    }

    /// An instant as `(seconds, nanoseconds)` since 1970.
    fn key(instant: OffsetDateTime) -> (i64, u32) {
        (instant.unix_timestamp(), instant.nanosecond())
    }

    /// A line's time as a key, when `LogTime::to_offset_date_time(None, UTC)` gives an instant:
    /// an epoch time whose seconds are in range (a month-day time has no year, so none).
    fn line_key(&self, time: &LogTime) -> Option<(i64, u32)> {
        match *time {
            LogTime::Epoch { seconds, nanos } if (self.first..=self.last).contains(&seconds) => {
                Some((seconds, nanos))
            }
            _ => None,
        }
    }
}

/// A line's (or a dump's) text: borrowed when it is valid UTF-8 (nearly always), else read with
/// replacements rather than dropped, as the eager path does. `str::from_utf8` first because it
/// checks ASCII a word at a time, where `String::from_utf8_lossy` walks its chunks and cost
/// several times more (milliseconds on a drop box dump).
pub(crate) fn line_text(raw: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(raw) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(raw),
    }
}

/// What [`to_log_line`] and [`LogQuery::matches`] decide about a line read in place from its
/// head (time, uid, level): its time (as an [`EpochRange`] key; `since` is the query's), level
/// and uid when it is one of `uids`' lines at or after `since` and at the query's level.
fn wanted(
    (time, uid, level): (LogTime, Option<UidFieldRef<'_>>, char),
    uids: &[u32],
    query: &LogQuery,
    since: (i64, u32),
    instants: &EpochRange,
) -> Option<((i64, u32), LogLevel, u32)> {
    let uid = uid.as_ref().and_then(UidFieldRef::as_number)?;
    if !uids.contains(&uid) {
        return None;
    }
    let time = instants.line_key(&time)?;
    let level = LogLevel::from_android_char(level as u8)?;
    let wanted = time >= since && query.level.is_none_or(|least| level >= least);
    wanted.then_some((time, level, uid))
}

/// [`app_lines`] the straightforward way: every line of the app's uid parsed into a
/// [`LogLine`], sorted by time, the newest `query.count` kept. The lazy path falls back to it
/// when a dump is out of time order, and the property test holds the lazy path to it.
pub(crate) fn app_lines_eager(dump: &[u8], uids: &[u32], query: &LogQuery) -> LogResult {
    let filters = uid_filters(uids);
    let mut lines: Vec<LogLine> = Vec::new();
    for raw in split_lines(dump) {
        if !filters.iter().any(|filter| filter.matches(raw)) {
            continue;
        }
        let Ok(text) = std::str::from_utf8(raw) else {
            // Invalid UTF-8 is rare in logs; read it with replacements rather than drop it.
            let lossy = String::from_utf8_lossy(raw);
            if let Some(line) = to_log_line(&lossy, uids) {
                push_if_matching(&mut lines, line, query);
            }
            continue;
        };
        if let Some(line) = to_log_line(text, uids) {
            push_if_matching(&mut lines, line, query);
        }
    }
    // logcat prints its buffers merged in time order; sort anyway (stable) so the contract's
    // "oldest first" holds for any device.
    lines.sort_by_key(|line| line.time);
    let omitted = lines.len().saturating_sub(query.count);
    if omitted > 0 {
        lines.drain(..omitted);
    }
    LogResult {
        lines,
        omitted,
        mark: None,
        processes: Vec::new(),
        notices: Vec::new(),
    }
}

fn push_if_matching(lines: &mut Vec<LogLine>, line: LogLine, query: &LogQuery) {
    if query.matches(&line) {
        lines.push(line);
    }
}

/// One `-v epoch -v uid` line as a [`LogLine`], when it parses and its uid is one of `uids`.
pub(crate) fn to_log_line(text: &str, uids: &[u32]) -> Option<LogLine> {
    let LogcatItem::Line(line) = parse_line(text) else {
        return None;
    };
    let uid = line.uid.as_ref().and_then(|uid| uid.as_number())?;
    if !uids.contains(&uid) {
        return None;
    }
    let time = line.time.to_offset_date_time(None, time::UtcOffset::UTC)?;
    let level = LogLevel::from_android_char(line.level as u8)?;
    Some(LogLine {
        time,
        level,
        tag: line.tag,
        text: line.text,
        pid: Some(line.pid),
        tid: Some(line.tid),
        uid: Some(uid),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::logs::strategies::{UID, dump, query};
    use proptest::prelude::*;
    use time::macros::datetime;

    #[test]
    fn the_logcat_command_is_the_specs() {
        let mut query = LogQuery::since(datetime!(2025-11-30 10:00:01.250 UTC), 200);
        assert_eq!(
            logcat_command(&[10123], &query, true),
            "logcat -d -b main,system,crash -v epoch -v uid --uid=10123 -t 1764496801.250 '*:V'"
        );
        query.level = Some(LogLevel::Warn);
        assert_eq!(
            logcat_command(&[10123, 1010123], &query, false),
            "logcat -d -b main,system,crash -v epoch -v uid -t 1764496801.250 '*:W'"
        );
        assert_eq!(
            logcat_command(&[10123, 1010123], &query, true),
            "logcat -d -b main,system,crash -v epoch -v uid --uid=10123,1010123 -t 1764496801.250 '*:W'"
        );
        let before_1970 = LogQuery::since(datetime!(1960-01-01 0:00 UTC), 1);
        assert!(logcat_command(&[1], &before_1970, true).contains(" -t 0.000 "));
    }

    // Lines as logcat -v epoch -v uid prints them (19-column seconds, uid %5s/%5d), per
    // shared/notes/android-formats.md §1.
    const DUMP: &str = "--------- beginning of main\n\
         1764496801.000 10123  4242  4242 I CrashTest: started\n\
         1764496801.500 10200  5151  5151 I Store   : OTHER user=alice\n\
         1764496802.100 10123  4242  4250 D CrashTest: loading config\n\
         1764496803.200 10123  4242  4242 W Net     : slow response\n\
         1764496803.700  1000   600   600 I ActivityManager: Process dev.phonelogs.crashtest (pid 4242) has died\n\
--------- beginning of crash\n\
         1764496805.400 10123  4242  4242 E AndroidRuntime: FATAL EXCEPTION: main\n\
garbage line\n";

    #[test]
    fn only_the_apps_uid_comes_out() {
        let query = LogQuery::since(datetime!(2025-01-01 0:00 UTC), 500);
        let result = app_lines(DUMP.as_bytes(), &[10123], &query);
        let texts: Vec<&str> = result.lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "started",
                "loading config",
                "slow response",
                "FATAL EXCEPTION: main"
            ]
        );
        assert!(result.lines.iter().all(|l| l.uid == Some(10123)));
        assert_eq!(result.lines[1].tid, Some(4250));
        assert_eq!(result.lines[0].time.unix_timestamp(), 1_764_496_801);
        assert_eq!(result.omitted, 0);
        assert!(has_foreign_lines(DUMP.as_bytes(), &[10123]));
        assert!(!has_foreign_lines(b"         1764496801.000 10123  4242  4242 I CrashTest: started\n--------- beginning of main\n", &[10123]));
        let none = app_lines(DUMP.as_bytes(), &[10999], &query);
        assert!(none.lines.is_empty());
    }

    #[test]
    fn count_level_and_since() {
        let since = datetime!(2025-01-01 0:00 UTC);
        let result = app_lines(DUMP.as_bytes(), &[10123], &LogQuery::since(since, 2));
        let texts: Vec<&str> = result.lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["slow response", "FATAL EXCEPTION: main"]);
        assert_eq!(result.omitted, 2);
        let mut query = LogQuery::since(since, 500);
        query.level = Some(LogLevel::Warn);
        assert_eq!(app_lines(DUMP.as_bytes(), &[10123], &query).lines.len(), 2);
        let cut = OffsetDateTime::from_unix_timestamp(1_764_496_803).unwrap();
        assert_eq!(
            app_lines(DUMP.as_bytes(), &[10123], &LogQuery::since(cut, 500))
                .lines
                .len(),
            2
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Any damage to a dump (bytes cut out, line ends and separators and bytes that are not
        /// UTF-8 put in anywhere) reads the same both ways: the lines only counted are read by
        /// their heads, and must be counted exactly when the eager reading keeps them.
        #[test]
        fn lazy_lines_are_the_eager_ones_on_damaged_dumps(
            dump in dump(),
            damage in prop::collection::vec((any::<prop::sample::Index>(), 0usize..4, prop::sample::select(vec![
                &b""[..], b"\r", b"\n", b"\r\n", b":", b": ", b" ", b"\xff", b"\xc3", b"\x80", b"7", b"I",
            ])), 0..8),
            query in query(),
        ) {
            let mut dump = dump;
            for (at, cut, bytes) in damage {
                let at = at.index(dump.len() + 1);
                let cut = cut.min(dump.len() - at);
                dump.splice(at..at + cut, bytes.iter().copied());
            }
            let lazy = app_lines_and_foreign(&dump, &[UID], &query);
            let eager = (app_lines_eager(&dump, &[UID], &query), has_foreign_lines(&dump, &[UID]));
            prop_assert_eq!(lazy, eager);
        }

        #[test]
        fn lazy_lines_are_the_eager_ones(dump in dump(), query in query()) {
            let lazy = app_lines_and_foreign(&dump, &[UID], &query);
            let eager = (app_lines_eager(&dump, &[UID], &query), has_foreign_lines(&dump, &[UID]));
            prop_assert_eq!(lazy, eager);
        }
    }
}
