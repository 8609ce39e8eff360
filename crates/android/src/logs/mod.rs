//! The pure half of the driver: the commands it sends, and what it makes of their output (no
//! I/O here, so every rule is unit-tested on captured text).

use phonelogs_crash::android::{PackageInfo, parse_dumpsys_package, parse_pm_list_packages};
use phonelogs_crash::dropbox::{AppMatch, Attribution, DropBoxEntryRef, checked_dropbox_entries};
use phonelogs_crash::logcat::{
    LogTime, LogcatHead, LogcatItem, UidFieldRef, UidFilter, epoch_uid_field, parse_line,
    parse_log_head, parse_log_line, split_lines, split_lines_rev,
};
use phonelogs_crash::{PhoneClock, Report};
use phonelogs_driver::{CrashKind, CrashReport, LogLevel, LogLine, LogQuery, LogResult};
use time::OffsetDateTime;

use crate::quote::quote;

/// A fresh marker for the line that ends each command's output in a multi-command script,
/// followed by that command's exit code. Several commands share one shell, and so one adb round
/// trip. The marker changes every call, so an app that puts a marker-like line in its crash
/// message cannot move the boundaries between sections.
pub(crate) fn new_marker() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mixed = nanos ^ count.rotate_left(32) ^ u64::from(std::process::id()).rotate_left(16);
    format!("__PHONELOGS_{mixed:016x}__")
}

/// The three drop box tags of an app's crash reports.
pub(crate) const DROPBOX_TAGS: [&str; 3] =
    ["data_app_crash", "data_app_native_crash", "data_app_anr"];

/// The drop box commands of a crashes script: for each tag, its listing, then its entries.
///
/// The drop box ANDs its search words, so each tag is asked for on its own. The listing
/// (`dumpsys dropbox <tag>`, which no entry's text can forge) confirms where `--print`'s
/// entries start (`phonelogs_crash::dropbox::checked_dropbox_entries`). Each tag's listing runs
/// right before its own print, so as few entries as can be are written or deleted between
/// the two. It is read first: an
/// entry written between the two commands is then printed but never listed, so it is left out
/// (and counted) until the next call. Read the other way round, such an entry of the app would
/// be listed but not printed, and a forged entry inside another app's compressed text that
/// copied its header line (a second's time and a length, both guessable) and its first bytes
/// would match the listing one for one and be shown as the app's report.
pub(crate) fn dropbox_commands() -> Vec<String> {
    DROPBOX_TAGS
        .iter()
        .flat_map(|tag| {
            [
                format!("dumpsys dropbox {tag}"),
                format!("dumpsys dropbox --print {tag}"),
            ]
        })
        .collect()
}

/// One tag's drop box as one shell read it: its listing, then its entries with `--print`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DropBoxRead<'a> {
    pub listing: &'a str,
    pub print: &'a str,
}

/// Joins already-quoted commands into one script whose output [`split_sections`] takes apart.
///
/// After each command the script prints the marker and its exit code (`cmd && echo M 0 || echo
/// M $?`): the exact code on a real shell, and still success or failure on the smallest shells
/// (the simulated phone's) that do not expand `$?`. The marker need not start a line: it is
/// unique per call.
pub(crate) fn script<S: AsRef<str>>(commands: &[S], marker: &str) -> String {
    let mut out = String::new();
    for command in commands {
        if !out.is_empty() {
            out.push_str("; ");
        }
        out.push_str(command.as_ref());
        out.push_str(&format!(" && echo {marker} 0 || echo {marker} $?"));
    }
    out
}

/// One command's output within a script, and whether it succeeded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Section<'a> {
    /// What the command printed.
    pub output: &'a [u8],
    /// 0 when it succeeded, 1 when it failed, `None` when the marker line was unreadable.
    pub exit_code: Option<i32>,
}

/// Splits the stdout of a script of `commands` commands into their outputs. A section whose
/// marker is missing (the device went away mid-script) is absent, so callers count what they
/// got.
///
/// The markers are found from the end, and no more than `commands` of them: a script's first
/// command is its big one (a whole dump) and the rest print a few lines, so the search stops
/// before the dump instead of reading it through (a forward search read all of it, about 0.5 ms
/// of a warm `phone_logs` on 2 MiB). The marker is unique per call and no output holds it, so
/// this is the forward split (a property test holds the two equal).
pub(crate) fn split_sections<'a>(
    stdout: &'a [u8],
    marker: &str,
    commands: usize,
) -> Vec<Section<'a>> {
    let marker = format!("{marker} ");
    let finder = memchr::memmem::FinderRev::new(marker.as_bytes());
    let mut found = Vec::with_capacity(commands);
    let mut end = stdout.len();
    while found.len() < commands {
        let Some(at) = finder.rfind(&stdout[..end]) else {
            break;
        };
        found.push(at);
        end = at;
    }
    let mut sections = Vec::with_capacity(found.len());
    let mut start = 0;
    for &at in found.iter().rev() {
        let (line_end, exit_code) = marker_line(&stdout[at + marker.len()..]);
        sections.push(Section {
            output: stdout.get(start..at).unwrap_or_default(),
            exit_code,
        });
        start = at + marker.len() + line_end + 1;
    }
    sections
}

/// The rest of a marker's line (after `marker `): its length before the `\n` (or the end) and
/// the exit code it prints.
fn marker_line(after: &[u8]) -> (usize, Option<i32>) {
    let line_end = memchr::memchr(b'\n', after).unwrap_or(after.len());
    let exit_code = std::str::from_utf8(&after[..line_end])
        .ok()
        .map(|code| exit_code_text(code.trim()));
    (line_end, exit_code)
}

/// An exit code as a marker line prints it: a number, or (from the failure branch of a shell
/// that did not expand `$?`) anything else, which is a failure.
pub(crate) fn exit_code_text(code: &str) -> i32 {
    code.parse().unwrap_or(1)
}

/// What the driver learns about an app once and keeps for the device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AppFacts {
    /// The app's uid in the user it runs in: the one uid its lines, its reports, the count
    /// and the gateway's re-check all use. A copy in another user (an app clone, a work
    /// profile) has another uid and is never read.
    pub uid: u32,
    /// What `pm list packages -U` printed for it, to notice a reinstall (a new uid).
    pub listed_uids: Vec<u32>,
    /// It is installed for more than one user, so a report that names no uid (Android 10's
    /// drop box) must have its pid's uid confirmed before it is shown.
    pub other_users: bool,
    /// `SYSTEM` in its flags.
    pub system: bool,
    /// `DEBUGGABLE` in its flags.
    pub debuggable: bool,
    /// The shared user, when it has one.
    pub shared_user: Option<String>,
    /// `versionCode=N` of the package's block, when the dump has one
    /// ([`PackageInfo::version_code`]: the block `dumpsys` printed, not one the app forged).
    pub version: Option<String>,
    /// `lastUpdateTime=` of the package's block, as printed (the phone's local time): a
    /// reinstall changes it, of the same version too ([`PackageInfo::last_update_time`]).
    pub installed: Option<String>,
    /// The phone's offset from UTC (`date +%z`, read with the facts), which turns
    /// [`AppFacts::installed`] into an instant; `None` when the phone did not say.
    pub utc_offset: Option<time::UtcOffset>,
}

/// What `pm list packages -U <pkg>` says: the package's uids, or `None` when it is not
/// installed. The command matches substrings, so only the exact name counts.
pub(crate) fn uids_of(pm_output: &str, package: &str) -> Option<Vec<u32>> {
    parse_pm_list_packages(pm_output)
        .into_iter()
        .find(|entry| entry.package == package)
        .map(|entry| entry.uids)
        .filter(|uids| !uids.is_empty())
}

/// Builds an app's facts from `pm list packages -U` (`listed`: one uid, or a comma list of one
/// per user on newer phones), `dumpsys package` and the user the person uses
/// (`am get-current-user`, when the phone answered it).
///
/// The app's user is the current user when the app is installed there, else the lowest user
/// it is installed for (an app that only exists as a clone or in a work profile); its uid there
/// is `user × 100000 + app id`, as Android numbers uids, whatever `pm` listed.
pub(crate) fn app_facts(
    listed: Vec<u32>,
    dumpsys: &str,
    package: &str,
    current_user: Option<u32>,
) -> AppFacts {
    let info: PackageInfo = parse_dumpsys_package(dumpsys, package).unwrap_or_default();
    let mut users: Vec<u32> = listed.iter().map(|uid| uid / PER_USER_RANGE).collect();
    users.extend(info.installed_users.iter().copied());
    users.sort_unstable();
    users.dedup();
    let app_id = listed
        .first()
        .copied()
        .or(info.user_id)
        .map_or(0, |uid| uid % PER_USER_RANGE);
    let user = current_user
        .filter(|user| users.contains(user))
        .or_else(|| users.first().copied())
        .unwrap_or(0);
    AppFacts {
        uid: user.saturating_mul(PER_USER_RANGE).saturating_add(app_id),
        listed_uids: listed,
        other_users: users.len() > 1,
        system: info.is_system(),
        debuggable: info.is_debuggable(),
        shared_user: info.shared_user.clone(),
        version: info.version_code.clone(),
        installed: info.last_update_time.clone(),
        utc_offset: None,
    }
}

/// The uids of one Android user: user N's uids are `N × 100000 + app id`.
pub(crate) const PER_USER_RANGE: u32 = 100_000;

/// What `am get-current-user` printed: the user's number, or `None` when the phone did not
/// say (an old release, an error).
pub(crate) fn current_user(output: &str) -> Option<u32> {
    output.trim().parse().ok()
}

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

/// The crash buffer's lines of the app: `logcat -d -b crash -v epoch -v uid [--uid=…]`.
pub(crate) fn crash_buffer_command(uids: &[u32], uid_option: bool) -> String {
    let mut command = String::from("logcat -d -b crash -v epoch -v uid");
    if uid_option {
        let list: Vec<String> = uids.iter().map(u32::to_string).collect();
        command.push_str(&format!(" --uid={}", list.join(",")));
    }
    command
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

/// Who logged as a pid around a moment, as the `-v uid` lines of the same call show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PidOwner {
    /// Only the app's uid.
    App,
    /// Another uid (a copy of the app in another user, or the pid's next owner).
    Other,
    /// Nobody logged as it then, or both did: the owner cannot be told.
    Unknown,
}

/// How far from a report's time a line must be to say who owned its pid: the app logs before
/// it hangs or crashes, and the drop box writes the entry within seconds of the crash.
const EVIDENCE_BEFORE: time::Duration = time::Duration::minutes(10);
const EVIDENCE_AFTER: time::Duration = time::Duration::minutes(1);
/// How long before a call's `since` its evidence lines start, so a report just after `since`
/// has its whole window.
pub(crate) const EVIDENCE_WINDOW: time::Duration = EVIDENCE_BEFORE;

/// The uid behind `pid` around `when`, from `-v epoch -v uid` dumps. Lines outside the window
/// say nothing, so a pid that a process of another uid took later cannot vouch for a report.
fn pid_owner(evidence: &[&[u8]], pid: u32, when: OffsetDateTime, uid: u32) -> PidOwner {
    let (mut mine, mut theirs) = (false, false);
    for dump in evidence {
        for raw in split_lines(dump) {
            let text = line_text(raw);
            let Some(line) = parse_log_line(&text) else {
                continue;
            };
            if line.pid != pid {
                continue;
            }
            let Some(time) = line.time.to_offset_date_time(None, time::UtcOffset::UTC) else {
                continue;
            };
            // Checked: a time read from the phone can lie near the `time` crate's limits, where
            // plain arithmetic panics; a window past a limit just ends there.
            let from = when.checked_sub(EVIDENCE_BEFORE);
            let to = when.checked_add(EVIDENCE_AFTER);
            if from.is_some_and(|from| time < from) || to.is_some_and(|to| time > to) {
                continue;
            }
            match line.uid.as_ref().and_then(|field| field.as_number()) {
                Some(found) if found == uid => mine = true,
                Some(_) => theirs = true,
                None => {}
            }
        }
    }
    match (mine, theirs) {
        (true, false) => PidOwner::App,
        (false, true) => PidOwner::Other,
        _ => PidOwner::Unknown,
    }
}

/// Whether a process name is the package's: the package itself or one of its
/// `package:name` processes.
fn is_process_of(process: &str, package: &str) -> bool {
    process == package
        || process
            .strip_prefix(package)
            .is_some_and(|rest| rest.starts_with(':'))
}

/// How close a crash buffer crash and a drop box Java crash of the same pid must be to be the
/// same crash (the drop box writes its entry within seconds; a pid is rarely reused so soon).
/// It is wider than the window for entries without a pid, so it bounds both.
const SAME_CRASH: time::Duration = time::Duration::minutes(2);

/// What an `app_crashes` call found: the reports, and how many were left out because their
/// owner could not be confirmed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FoundCrashes {
    pub reports: Vec<CrashReport>,
    pub unconfirmed: usize,
}

/// The facts `app_crashes` matches reports by.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Owner<'a> {
    /// The package name.
    pub package: &'a str,
    /// The app's uid in its user (the only uid whose reports are the app's).
    pub uid: u32,
    /// The package is installed for another user too, so an entry without `UID:` may be that
    /// copy's.
    pub other_users: bool,
}

/// The app's crash reports from the drop box dumps and the crash buffer, newest first, since
/// `since`, at most `limit`.
///
/// A drop box entry is the app's when its `UID:` is the app's uid. An entry with no `UID:`
/// (Android 10) is matched by the first line of its package list
/// ([`phonelogs_crash::dropbox::Attribution`]; an entry only a header another app can write
/// names as the app's is left out and counted in `unconfirmed`), which a copy of the app in
/// another user shares: when the package is installed for several users, such an entry is kept only when
/// the `-v uid` lines of the same call (`evidence`: the crash buffer, and on such a phone the
/// main buffer) show its pid logging as the app's uid around its time, and dropped when they
/// show another uid; otherwise it is left out and counted in `unconfirmed`. Java crashes the
/// drop box left out (it drops entries that come too fast) come from the crash buffer, one per
/// pid; a crash buffer crash whose pid has a drop box Java crash close in time is the same crash
/// and is left out.
///
/// Only the drop box entries the listing confirms are read: an entry that may have been written
/// by another entry's text (see [`dropbox_commands`]) is left out, and counted in `unconfirmed`
/// when it claims to be one of the app's since `since`.
pub(crate) fn app_crashes(
    dropbox: &[DropBoxRead<'_>],
    crash_buffer: &[u8],
    evidence: &[&[u8]],
    owner: Owner<'_>,
    clock: &PhoneClock,
    since: OffsetDateTime,
    limit: usize,
) -> FoundCrashes {
    let Owner {
        package,
        uid,
        other_users,
    } = owner;
    // The crash buffer first: only the app's own lines reach the parser, and another uid's
    // crashes are kept apart to recognise the other copy's drop box entries. The app's lines
    // are all read, whatever `since`: a pid's second FATAL EXCEPTION closes its first report
    // instead of starting one, so a crash before `since` decides about one after it (and logd
    // keeps the crash buffer small).
    let filter = UidFilter::new(uid);
    let (mut own, mut foreign) = (String::new(), String::new());
    if other_users {
        for raw in split_lines(crash_buffer) {
            let into = if filter.matches(raw) {
                &mut own
            } else {
                &mut foreign
            };
            into.push_str(&line_text(raw));
            into.push('\n');
        }
    } else {
        // Other uids' crashes only serve to recognise another user's copy of the app: with one
        // user they are not read at all, and the app's lines are found at memory speed.
        for raw in filter.filter(crash_buffer) {
            own.push_str(&line_text(raw));
            own.push('\n');
        }
    }
    let buffer_crashes: Vec<Report> = phonelogs_crash::crashbuf::parse_crash_buffer(&own, clock)
        .into_iter()
        .filter(|report| report.kind == CrashKind::JavaCrash)
        .collect();
    let foreign_crashes: Vec<Report> = if other_users {
        phonelogs_crash::crashbuf::parse_crash_buffer(&foreign, clock)
            .into_iter()
            .filter(|report| {
                report.kind == CrashKind::JavaCrash && is_process_of(&report.process, package)
            })
            .collect()
    } else {
        Vec::new()
    };
    let near = |a: Option<OffsetDateTime>, b: Option<OffsetDateTime>, window: time::Duration| matches!((a, b), (Some(a), Some(b)) if (a - b).abs() <= window);
    let mut reports: Vec<Report> = Vec::new();
    let mut unconfirmed: Vec<Report> = Vec::new();
    let mut unpinned = 0usize;
    let mut ambiguous = 0usize;
    for read in dropbox {
        let checked = checked_dropbox_entries(read.listing, read.print, |entry| {
            claims_the_app(entry, owner, clock, since)
                && !shown_from_the_crash_buffer(entry, &buffer_crashes, clock, since)
        });
        if checked.cut {
            tracing::warn!(
                "dumpsys cut a drop box dump short (its timeout): only the entries whose start is pinned are read"
            );
        }
        unpinned += checked.claims;
        // Entries are read in place: only the app's entries whose time can matter are copied
        // and parsed (a drop box holds every app's reports, megabytes of them).
        for entry in checked.trusted {
            if !DROPBOX_TAGS.contains(&entry.tag) {
                continue;
            }
            // Only a `UID:` the system printed decides by itself (the package list decides
            // otherwise, which another user's copy shares).
            let attribution = entry.attribution(&AppMatch {
                uid: Some(uid),
                package,
            });
            let names_uid = attribution == Attribution::Uid;
            if attribution == Attribution::Ambiguous {
                // Another app may have written the header naming the app: left out, counted.
                if entry.report_time(clock).is_some_and(|time| time >= since) {
                    ambiguous += 1;
                }
                continue;
            }
            if !attribution.is_apps() {
                continue;
            }
            let Some(time) = entry.report_time(clock) else {
                tracing::warn!(
                    tag = entry.tag,
                    "a crash report without a readable time is left out"
                );
                continue;
            };
            // A report before `since` is never returned nor counted. A Java crash up to
            // `SAME_CRASH` before it can still be the drop box's copy of a crash buffer crash
            // after `since`, which it then hides (as the eager reading did), so it is read too.
            let earliest = if entry.tag == DROPBOX_TAGS[0] {
                // Checked, like every sum on a time: `since` may lie at the `time` crate's limit.
                since.checked_sub(SAME_CRASH).unwrap_or(since)
            } else {
                since
            };
            if time < earliest {
                continue;
            }
            // `to_report` fills the pid of Android 10 entries (no `PID:` header) from the
            // app's own trace section or the tombstone header.
            let Some(report) = entry.to_entry().to_report(clock) else {
                continue;
            };
            if names_uid || !other_users {
                reports.push(report);
                continue;
            }
            let owner = match report.pid {
                Some(pid) => match report.time {
                    Some(when) => pid_owner(evidence, pid, when, uid),
                    None => PidOwner::Unknown,
                },
                // A Java crash entry names no pid: the crash buffer's crash of that moment
                // says whose it was.
                None => {
                    let window = time::Duration::seconds(10);
                    let ours = buffer_crashes
                        .iter()
                        .any(|crash| near(crash.time, report.time, window));
                    let theirs = foreign_crashes
                        .iter()
                        .any(|crash| near(crash.time, report.time, window));
                    match (ours, theirs) {
                        (true, false) => PidOwner::App,
                        (false, true) => PidOwner::Other,
                        _ => PidOwner::Unknown,
                    }
                }
            };
            match owner {
                PidOwner::App => reports.push(report),
                PidOwner::Other => {
                    tracing::debug!(pid = ?report.pid, "a drop box entry of another user's copy of the app is left out");
                }
                PidOwner::Unknown => unconfirmed.push(report),
            }
        }
    }
    let dropbox_java: Vec<usize> = (0..reports.len())
        .filter(|&index| reports[index].kind == CrashKind::JavaCrash)
        .collect();
    for report in buffer_crashes {
        let same = dropbox_java.iter().copied().find(|&index| {
            let known = &reports[index];
            match known.pid {
                Some(pid) => Some(pid) == report.pid && near(known.time, report.time, SAME_CRASH),
                // Android 10's entries name no pid: the same crash is the one at the same time.
                None => near(known.time, report.time, time::Duration::seconds(10)),
            }
        });
        match same {
            Some(index) => {
                if reports[index].pid.is_none() {
                    reports[index].pid = report.pid;
                }
            }
            None => reports.push(report),
        }
    }
    let in_window = |report: &Report| report.time.is_some_and(|time| time >= since);
    let unconfirmed = unconfirmed
        .iter()
        .filter(|report| in_window(report))
        .count();
    if unpinned > 0 {
        tracing::info!(
            unpinned,
            "drop box entries claiming the app are left out: the listing does not confirm where they start"
        );
    }
    if ambiguous > 0 {
        tracing::info!(
            ambiguous,
            "drop box entries are left out: only a header another app can write names the app"
        );
    }
    let unconfirmed = unconfirmed + unpinned + ambiguous;
    let mut out: Vec<CrashReport> = reports
        .into_iter()
        .filter_map(|report| {
            let (kind, pid) = (report.kind, report.pid);
            let Some(report) = report.dated() else {
                // The summary is the app's own text (its exception message): never logged.
                tracing::warn!(
                    ?kind,
                    ?pid,
                    "a crash report without a readable time is left out"
                );
                return None;
            };
            (report.time >= since).then_some(report)
        })
        .collect();
    out.sort_by_key(|report| std::cmp::Reverse(report.time));
    out.truncate(limit);
    FoundCrashes {
        reports: out,
        unconfirmed,
    }
}

/// Whether a drop box entry the listing did not confirm claims to be one of the app's reports
/// since `since` (its text is never read past the headers: it may be another app's).
fn claims_the_app(
    entry: &DropBoxEntryRef<'_>,
    owner: Owner<'_>,
    clock: &PhoneClock,
    since: OffsetDateTime,
) -> bool {
    let app = AppMatch {
        uid: Some(owner.uid),
        package: owner.package,
    };
    DROPBOX_TAGS.contains(&entry.tag)
        && entry.attribution(&app) != Attribution::Other
        && entry.report_time(clock).is_some_and(|time| time >= since)
}

/// Whether an unconfirmed `data_app_crash` entry claims a crash the call shows anyway from the
/// crash buffer (the app's own uid's `FATAL EXCEPTION`, since `since`): the same pid within
/// [`SAME_CRASH`], or without a `PID:` header the same moment, as `app_crashes` tells a
/// trusted entry's copy in the buffer. Such a claim is not counted as left out.
fn shown_from_the_crash_buffer(
    entry: &DropBoxEntryRef<'_>,
    buffer_crashes: &[Report],
    clock: &PhoneClock,
    since: OffsetDateTime,
) -> bool {
    if entry.tag != DROPBOX_TAGS[0] {
        return false;
    }
    let time = entry.report_time(clock);
    let pid = entry.identity().pid;
    let near = |a: Option<OffsetDateTime>, window: time::Duration| matches!((a, time), (Some(a), Some(b)) if (a - b).abs() <= window);
    buffer_crashes.iter().any(|crash| {
        crash.time.is_some_and(|at| at >= since)
            && match pid {
                Some(pid) => crash.pid == Some(pid) && near(crash.time, SAME_CRASH),
                None => near(crash.time, time::Duration::seconds(10)),
            }
    })
}

/// The listing `dumpsys dropbox <tag>` prints for the entries of a `--print` dump (AOSP
/// `DropBoxManagerService.dump`: each header line, and for text the preview of its first 70
/// bytes, `phonelogs_crash::dropbox::dropbox_preview`), split at every separator: for tests
/// whose dumps hold no forgery.
#[cfg(test)]
pub(crate) fn listing_for(print: &str) -> String {
    const SEPARATOR: &str = phonelogs_crash::dropbox::ENTRY_SEPARATOR;
    let mut out = String::new();
    let mut lines = print.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim() != SEPARATOR {
            continue;
        }
        let Some(header) = lines.next_if(|next| next.trim() != SEPARATOR) else {
            continue;
        };
        out.push_str(header);
        out.push('\n');
        let mut text = String::new();
        while let Some(next) = lines.next_if(|next| next.trim() != SEPARATOR) {
            text.push_str(next);
            text.push('\n');
        }
        if header.contains("text, ") {
            // An uncompressed text is its byte count long (the line breaks `dump` adds after
            // it are not the text's).
            let stored = header
                .strip_suffix(" bytes)")
                .and_then(|rest| rest.rsplit_once("(text, "))
                .and_then(|(_, count)| count.parse::<usize>().ok())
                .map_or(text.as_bytes(), |count| {
                    text.as_bytes().get(..count).unwrap_or(text.as_bytes())
                });
            out.push_str("    ");
            out.push_str(&phonelogs_crash::dropbox::dropbox_preview(stored));
            out.push('\n');
        }
    }
    out
}

/// `app_crashes` on `--print` dumps, each with the listing [`listing_for`] gives it.
#[cfg(test)]
pub(crate) fn app_crashes_of_prints(
    prints: &[&str],
    crash_buffer: &[u8],
    evidence: &[&[u8]],
    owner: Owner<'_>,
    clock: &PhoneClock,
    since: OffsetDateTime,
    limit: usize,
) -> FoundCrashes {
    let listings: Vec<String> = prints.iter().map(|print| listing_for(print)).collect();
    let reads: Vec<DropBoxRead<'_>> = listings
        .iter()
        .zip(prints)
        .map(|(listing, print)| DropBoxRead { listing, print })
        .collect();
    app_crashes(&reads, crash_buffer, evidence, owner, clock, since, limit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    proptest::proptest! {
        /// A report's time and a line's time near the `time` crate's limits (a phone's clock or
        /// a damaged dump can say year 9999 or year 1) never make the evidence window panic.
        #[test]
        fn evidence_near_the_limits_of_time_never_panics(
            at_the_end in proptest::bool::ANY,
            report_margin in 0i64..200,
            line_margin in 0i64..200,
        ) {
            let (limit, sign) = if at_the_end {
                (time::PrimitiveDateTime::MAX.assume_utc(), -1)
            } else {
                (time::PrimitiveDateTime::MIN.assume_utc(), 1)
            };
            let when = limit + time::Duration::seconds(sign * report_margin);
            let line_time = limit.unix_timestamp() + sign * line_margin;
            let line = format!("{line_time:>19}.000  1010123  4242  4242 I CrashTest: x\n");
            let owner = pid_owner(&[line.as_bytes()], 4242, when, 10123);
            proptest::prop_assert!(owner != PidOwner::App);
        }
    }

    /// The forward split [`split_sections`] stands for: each marker searched after the last.
    fn split_sections_forward<'a>(stdout: &'a [u8], marker: &str) -> Vec<Section<'a>> {
        let marker = format!("{marker} ");
        let mut sections = Vec::new();
        let mut rest = stdout;
        while let Some(at) = memchr::memmem::find(rest, marker.as_bytes()) {
            let output = &rest[..at];
            let after = &rest[at + marker.len()..];
            let (line_end, exit_code) = marker_line(after);
            sections.push(Section { output, exit_code });
            rest = after.get(line_end + 1..).unwrap_or(&[]);
        }
        sections
    }

    proptest::proptest! {
        /// Any script's output (outputs of any bytes but the marker, each ended by a marker
        /// line with any code, cut off anywhere) splits the same from the end as from the start.
        #[test]
        fn sections_found_from_the_end_are_the_forward_ones(
            sections in proptest::collection::vec(
                (proptest::collection::vec(proptest::prop_oneof![
                    proptest::prelude::any::<u8>(), proptest::strategy::Just(b'\n'), proptest::strategy::Just(b'_'),
                ], 0..40), "[0-9$?x ]{0,4}"),
                0..6,
            ),
            cut in proptest::prelude::any::<proptest::sample::Index>(),
        ) {
            let m = "__PHONELOGS_SECTION__";
            let mut stdout = Vec::new();
            for (output, code) in &sections {
                stdout.extend_from_slice(output);
                stdout.extend_from_slice(format!("{m} {code}\n").as_bytes());
            }
            let stdout = &stdout[..cut.index(stdout.len() + 1)];
            proptest::prop_assert_eq!(
                split_sections(stdout, m, sections.len()),
                split_sections_forward(stdout, m)
            );
        }
    }

    #[test]
    fn sections_carry_their_exit_codes() {
        let m = "__PHONELOGS_SECTION__";
        let stdout = b"+0100\n__PHONELOGS_SECTION__ 0\npackage:a uid:1\n__PHONELOGS_SECTION__ 0\n__PHONELOGS_SECTION__ 1\n";
        let sections = split_sections(stdout, m, 3);
        assert_eq!(sections.len(), 3);
        assert_eq!(sections[0].output, b"+0100\n");
        assert_eq!(sections[1].output, b"package:a uid:1\n");
        assert_eq!(sections[2].output, b"");
        assert_eq!(sections[2].exit_code, Some(1));
        assert_eq!(
            split_sections(b"__PHONELOGS_SECTION__ $?\n", m, 1)[0].exit_code,
            Some(1)
        );
        // Output without a final newline.
        let sections = split_sections(b"x__PHONELOGS_SECTION__ 0\n", m, 1);
        assert_eq!(sections[0].output, b"x");
        // A cut-off script gives fewer sections.
        assert_eq!(
            split_sections(b"+0100\n__PHONELOGS_SECTION__ 0\npartial", m, 2).len(),
            1
        );
        let built = script(&["date +%z", "true"], m);
        assert_eq!(
            built,
            "date +%z && echo __PHONELOGS_SECTION__ 0 || echo __PHONELOGS_SECTION__ $?; true && echo __PHONELOGS_SECTION__ 0 || echo __PHONELOGS_SECTION__ $?"
        );
        assert_ne!(new_marker(), new_marker());
    }

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

    #[test]
    fn packages_and_flags() {
        assert_eq!(
            uids_of(
                "package:com.example.app uid:10127\npackage:com.example.app.pro uid:10128\n",
                "com.example.app"
            ),
            Some(vec![10127])
        );
        assert_eq!(
            uids_of("package:com.example.app.pro uid:10128\n", "com.example.app"),
            None
        );
        assert_eq!(
            uids_of(
                "package:com.example.app uid:10127\npackage:com.example.app uid:1010127\n",
                "com.example.app"
            ),
            Some(vec![10127, 1010127])
        );
        // dumpsys package layout per android-formats.md §6.
        let dumpsys = "Packages:\n  Package [com.example.app] (c0ffee):\n    userId=10127\n    pkg=Package{c0ffee com.example.app}\n    flags=[ DEBUGGABLE HAS_CODE ALLOW_CLEAR_USER_DATA ]\n    pkgFlags=[ DEBUGGABLE HAS_CODE ALLOW_CLEAR_USER_DATA ]\n";
        let facts = app_facts(vec![10127], dumpsys, "com.example.app", Some(0));
        assert!(facts.debuggable && !facts.system && facts.shared_user.is_none());
        let shared = "Packages:\n  Package [com.example.app] (c0ffee):\n    userId=1000\n    sharedUser=SharedUserSetting{1 android.uid.system/1000}\n    pkgFlags=[ SYSTEM HAS_CODE ]\n";
        let facts = app_facts(vec![1000], shared, "com.example.app", Some(0));
        assert!(facts.system && facts.shared_user.is_some());
        assert_eq!(facts.version, None, "no versionCode line");
    }

    #[test]
    fn the_version_code_is_read_from_the_packages_own_block() {
        let version = |dump: &str, package: &str| {
            parse_dumpsys_package(dump, package).and_then(|info| info.version_code)
        };
        let dump =
            include_str!("../../../../testdata/android/package/dumpsys-package-debuggable.txt");
        assert_eq!(version(dump, "com.example.crashtest").as_deref(), Some("1"));
        assert_eq!(version(dump, "com.other"), None);
        // Another package's block after it does not lend its version.
        let two = "Packages:\n  Package [a.b] (1):\n    userId=1\n  Package [c.d] (2):\n    versionCode=7 minSdk=21 targetSdk=34\n";
        assert_eq!(version(two, "a.b"), None);
        assert_eq!(version(two, "c.d").as_deref(), Some("7"));
        let bad = "Packages:\n  Package [c.d] (2):\n    versionCode=x1 minSdk=1\n";
        assert_eq!(version(bad, "c.d"), None);
        // A block forged before the `Packages:` section (an intent filter's action name with
        // line breaks, printed raw in the resolver table) does not lend its version.
        let forged = dump.replace(
            "      android.intent.action.MAIN:",
            "      x\nPackage [com.example.crashtest] (1):\n versionCode=99\n:",
        );
        assert_eq!(
            version(&forged, "com.example.crashtest").as_deref(),
            Some("1")
        );
    }

    /// Issue 37, item 9: when the installed build was installed, from the block's last
    /// `lastUpdateTime=` (the real one comes after `versionName`, whose text the app chose), in
    /// the phone's local time with `date +%z`.
    #[test]
    fn the_install_time_is_the_blocks_last_update_time_in_the_phones_offset() {
        let block = |version_name: &str| {
            format!(
                "Packages:\n  Package [c.d] (2):\n    userId=10123\n    versionCode=7 minSdk=21 targetSdk=34\n    versionName={version_name}\n    timeStamp=2026-10-09 14:59:13\n    lastUpdateTime=2026-10-09 14:59:14\n    flags=[ DEBUGGABLE HAS_CODE ]\n"
            )
        };
        let mut facts = app_facts(vec![10123], &block("1.0"), "c.d", Some(0));
        assert_eq!(facts.installed.as_deref(), Some("2026-10-09 14:59:14"));
        facts.utc_offset = phonelogs_crash::android::parse_date_offset("+0200\n");
        assert_eq!(
            crate::phone::installed_at_of(&facts),
            Some(time::macros::datetime!(2026-10-09 12:59:14 UTC))
        );
        let forged = app_facts(
            vec![10123],
            &block("1.0\n    lastUpdateTime=2020-01-01 00:00:00"),
            "c.d",
            Some(0),
        );
        assert_eq!(forged.installed.as_deref(), Some("2026-10-09 14:59:14"));
        let unknown = app_facts(
            vec![10123],
            &block("1.0").replace("14:59:14", "soon"),
            "c.d",
            None,
        );
        assert_eq!(unknown.installed, None);
        facts.utc_offset = None;
        assert_eq!(crate::phone::installed_at_of(&facts), None);
    }

    #[test]
    fn one_uid_the_apps_in_its_user() {
        // `pm list packages -U` on a phone with several users prints one comma list (a public
        // tool's capture of an Android 16 phone: `uid:10220,99910220`; testdata/README.md).
        let listed = uids_of(
            "package:com.example.app uid:10220,99910220\n",
            "com.example.app",
        )
        .unwrap();
        assert_eq!(listed, vec![10220, 99_910_220]);
        let facts = app_facts(listed.clone(), "", "com.example.app", Some(0));
        assert_eq!((facts.uid, facts.other_users), (10220, true));
        // The person uses user 999 (the clone's): the app is the copy there.
        assert_eq!(
            app_facts(listed.clone(), "", "com.example.app", Some(999)).uid,
            99_910_220
        );
        // Not installed for the current user: its lowest user.
        assert_eq!(
            app_facts(listed, "", "com.example.app", Some(10)).uid,
            10220
        );
        // Older phones list user 0's uid alone; `dumpsys package` names the other users.
        let dumpsys = "Packages:\n  Package [com.example.app] (c0ffee):\n    userId=10127\n    pkgFlags=[ HAS_CODE ]\n    User 0: ceDataInode=4001 installed=true hidden=false\n    User 10: ceDataInode=4002 installed=true hidden=false\n";
        let facts = app_facts(vec![10127], dumpsys, "com.example.app", None);
        assert_eq!((facts.uid, facts.other_users), (10127, true));
        let facts = app_facts(vec![10127], dumpsys, "com.example.app", Some(10));
        assert_eq!(facts.uid, 1_010_127);
        // One user: no confirmation needed.
        assert!(!app_facts(vec![10127], "", "com.example.app", Some(0)).other_users);
        assert_eq!(current_user("0\n"), Some(0));
        assert_eq!(current_user("Unknown command: get-current-user\n"), None);
    }

    /// Android 10 drop box entries (no `UID:`, no `PID:`, as in
    /// testdata/android/dropbox/print-android10-no-pid.txt) of the app and of its clone in user
    /// 10 (uid 1010123), with the crash buffer and main buffer lines of the same call.
    #[test]
    fn a_clones_reports_are_never_the_apps() {
        let java = "Drop box contents: 2 entries\nMax entries: 1000\n\n\
========================================\n\
2025-11-30 11:00:06 data_app_crash (text, 300 bytes)\n\
Process: dev.phonelogs.crashtest\nFlags: 0x38c83e46\nPackage: dev.phonelogs.crashtest v1 (1.0)\nForeground: Yes\n\n\
java.lang.IllegalStateException: CLONE-SECRET\n\tat dev.phonelogs.crashtest.MainActivity.onCrash(MainActivity.java:42)\n\n\
========================================\n\
2025-11-30 11:01:06 data_app_crash (text, 300 bytes)\n\
Process: dev.phonelogs.crashtest\nFlags: 0x38c83e46\nPackage: dev.phonelogs.crashtest v1 (1.0)\nForeground: Yes\n\n\
java.lang.IllegalStateException: Crash button tapped\n\tat dev.phonelogs.crashtest.MainActivity.onCrash(MainActivity.java:42)\n";
        let anr_entry = |time: &str, pid: u32| {
            format!(
                "========================================\n\
{time} data_app_anr (text, 400 bytes)\n\
Process: dev.phonelogs.crashtest\nFlags: 0x38c83e46\nPackage: dev.phonelogs.crashtest v1 (1.0)\nForeground: Yes\nSubject: Input dispatching timed out\n\n\
CPU usage from 0ms to 5000ms later:\n  50% 600/system_server: 30% user\n\n\
----- pid {pid} at {time} -----\nCmd line: dev.phonelogs.crashtest\n\n\"main\" prio=5 tid=1 Sleeping\n  at dev.phonelogs.crashtest.MainActivity.onHang(MainActivity.java:57)\n\n----- end {pid} -----\n\n"
            )
        };
        // The clone's ANR (pid 5000), the app's (pid 4300), one whose pid nobody logged as
        // (pid 4400), and a pid the clone held until it died and the app then reused (4500).
        let anr = format!(
            "Drop box contents: 4 entries\n\n{}{}{}{}",
            anr_entry("2025-11-30 11:02:00", 5000),
            anr_entry("2025-11-30 11:03:00", 4300),
            anr_entry("2025-11-30 11:04:00", 4400),
            anr_entry("2025-11-30 11:20:00", 4500),
        );
        // 11:00:06 +1 is 1764496806; the app's crash is 60 s later.
        let crash_buffer = "--------- beginning of crash\n\
         1764496805.400 1010123  4999  4999 E AndroidRuntime: FATAL EXCEPTION: main\n\
         1764496805.400 1010123  4999  4999 E AndroidRuntime: Process: dev.phonelogs.crashtest, PID: 4999\n\
         1764496805.400 1010123  4999  4999 E AndroidRuntime: java.lang.IllegalStateException: CLONE-SECRET\n\
         1764496865.400 10123  4242  4242 E AndroidRuntime: FATAL EXCEPTION: main\n\
         1764496865.400 10123  4242  4242 E AndroidRuntime: Process: dev.phonelogs.crashtest, PID: 4242\n\
         1764496865.400 10123  4242  4242 E AndroidRuntime: java.lang.IllegalStateException: Crash button tapped\n";
        let main = "--------- beginning of main\n\
         1764496910.000 1010123  5000  5000 I CrashTest: clone hangs\n\
         1764496970.000 10123  4300  4300 I CrashTest: Hang button tapped\n\
         1764497990.000 1010123  4500  4500 I CrashTest: clone hangs again\n\
         1764498000.000 10123  4500  4500 I CrashTest: the app, with the reused pid\n";
        let clock = PhoneClock {
            offset: time::UtcOffset::from_hms(1, 0, 0).unwrap(),
            year: None,
        };
        let owner = Owner {
            package: "dev.phonelogs.crashtest",
            uid: 10123,
            other_users: true,
        };
        let found = app_crashes_of_prints(
            &[java, "", &anr],
            crash_buffer.as_bytes(),
            &[crash_buffer.as_bytes(), main.as_bytes()],
            owner,
            &clock,
            datetime!(2025-11-30 9:00 UTC),
            10,
        );
        let seen: Vec<(CrashKind, Option<u32>)> =
            found.reports.iter().map(|r| (r.kind, r.pid)).collect();
        assert_eq!(
            seen,
            [
                (CrashKind::Anr, Some(4300)),
                (CrashKind::JavaCrash, Some(4242))
            ],
            "{:#?}",
            found.reports
        );
        assert!(found.reports.iter().all(|r| !r.text.contains("CLONE")));
        // Pid 4400 (nobody) and pid 4500 (both uids around its time) cannot be confirmed.
        assert_eq!(found.unconfirmed, 2);
        // A `UID:` that does not parse says nothing: the clone's ANR is still told by its pid.
        let malformed = anr.replace(
            "Process: dev.phonelogs.crashtest\n",
            "Process: dev.phonelogs.crashtest\nUID: u10_a123\n",
        );
        let with_malformed_uid = app_crashes_of_prints(
            &["", "", &malformed],
            b"",
            &[crash_buffer.as_bytes(), main.as_bytes()],
            owner,
            &clock,
            datetime!(2025-11-30 9:00 UTC),
            10,
        );
        let pids: Vec<Option<u32>> = with_malformed_uid.reports.iter().map(|r| r.pid).collect();
        assert_eq!(pids, [Some(4300)], "{:#?}", with_malformed_uid.reports);
        assert_eq!(with_malformed_uid.unconfirmed, 2);
        // On a phone with one user, the same entries are the app's by their process.
        let alone = app_crashes_of_prints(
            &[&anr],
            b"",
            &[],
            Owner {
                other_users: false,
                ..owner
            },
            &clock,
            datetime!(2025-11-30 9:00 UTC),
            10,
        );
        assert_eq!((alone.reports.len(), alone.unconfirmed), (4, 0));
        // An entry that names a uid is the app's only with the app's uid in its user.
        let named = "Drop box contents: 1 entries\n\n========================================\n\
2025-11-30 11:00:06 data_app_crash (text, 300 bytes)\n\
Process: dev.phonelogs.crashtest\nPID: 4999\nUID: 1010123\nPackage: dev.phonelogs.crashtest v1 (1.0)\n\n\
java.lang.IllegalStateException: CLONE-SECRET\n";
        let found = app_crashes_of_prints(
            &[named],
            b"",
            &[],
            owner,
            &clock,
            datetime!(2025-11-30 9:00 UTC),
            10,
        );
        assert_eq!((found.reports.len(), found.unconfirmed), (0, 0));
    }

    /// Entries the listing does not confirm are never read; of them, only those claiming to be
    /// the app's since `since` are counted as unconfirmed.
    #[test]
    fn unconfirmed_drop_box_entries_count_the_apps_claims_since_since() {
        let entry = |time: &str, process: &str, uid: u32| {
            format!(
                "========================================\n{time} data_app_crash (text, 9 bytes)\n\
                 Process: {process}\nUID: {uid}\n\nSECRET\n\n"
            )
        };
        // A compressed entry first: what follows it cannot be pinned, and only it is listed.
        let print = format!(
            "Drop box contents: 4 entries\n\n========================================\n\
             2025-11-30 11:00:00 data_app_crash (compressed text, 900 bytes)\n\
             Process: com.example.store\nUID: 10200\n\nbig\n\n{}{}{}",
            entry("2025-11-30 11:00:05", "dev.phonelogs.crashtest", 10123),
            entry("2025-11-30 09:00:05", "dev.phonelogs.crashtest", 10123),
            entry("2025-11-30 11:00:06", "com.example.store", 10200),
        );
        let listing = "2025-11-30 11:00:00 data_app_crash (compressed text, 900 bytes)\n    \
                       Process: com.example.store/UID: 10200//big\n";
        let found = app_crashes(
            &[DropBoxRead {
                listing,
                print: &print,
            }],
            b"",
            &[],
            Owner {
                package: "dev.phonelogs.crashtest",
                uid: 10123,
                other_users: false,
            },
            &PhoneClock {
                offset: time::UtcOffset::from_hms(1, 0, 0).unwrap(),
                year: None,
            },
            datetime!(2025-11-30 9:30 UTC),
            10,
        );
        assert!(found.reports.is_empty(), "{:#?}", found.reports);
        assert_eq!(found.unconfirmed, 1);
    }

    /// Android 10 prints no `UID:`: another app's entry whose `versionName` printed a second
    /// `Package:` line (and a `UID:`) naming the app, or whose process takes the app's name, is
    /// never the app's report; it is counted as left out. The app's own entry is read.
    #[test]
    fn an_android10_entry_named_the_apps_only_by_a_forgeable_header_is_left_out() {
        let entry = |time: &str, process: &str, packages: &str, text: &str| {
            let body = format!(
                "Process: {process}\nFlags: 0x38c83e44\n{packages}Foreground: Yes\n\n{text}\n"
            );
            format!(
                "========================================\n{time} data_app_crash (text, {} bytes)\n{body}\n",
                body.len()
            )
        };
        let print = format!(
            "Drop box contents: 3 entries\n\n{}{}{}",
            entry(
                "2020-09-14 10:00:01",
                "com.example.other",
                "Package: com.example.other v7 (2.3)\nPackage: dev.phonelogs.crashtest v1 (1.0)\nUID: 10123\n",
                "SECRET-VERSION-NAME",
            ),
            entry(
                "2020-09-14 10:00:02",
                "dev.phonelogs.crashtest",
                "Package: com.example.other v7 (2.3)\n",
                "SECRET-PROCESS-NAME",
            ),
            entry(
                "2020-09-14 10:00:03",
                "dev.phonelogs.crashtest",
                "Package: dev.phonelogs.crashtest v1 (1.0)\n",
                "GENUINE",
            ),
        );
        let listing = listing_for(&print);
        let found = app_crashes(
            &[DropBoxRead {
                listing: &listing,
                print: &print,
            }],
            b"",
            &[],
            Owner {
                package: "dev.phonelogs.crashtest",
                uid: 10123,
                other_users: false,
            },
            &PhoneClock::default(),
            datetime!(2020-09-14 9:00 UTC),
            10,
        );
        assert_eq!(found.reports.len(), 1, "{:#?}", found.reports);
        assert!(found.reports[0].text.contains("GENUINE"));
        assert_eq!(found.unconfirmed, 2);
    }

    /// An unconfirmed `data_app_crash` entry of a crash the crash buffer shows is not counted as
    /// left out: by its `PID:` within `SAME_CRASH`, or without one, by its time within 10 s.
    #[test]
    fn an_unconfirmed_claim_of_a_crash_the_buffer_shows_is_not_counted() {
        let entry = |time: &str, tag: &str, pid: Option<u32>| {
            let pid = pid.map(|pid| format!("PID: {pid}\n")).unwrap_or_default();
            format!(
                "========================================\n{time} {tag} (text, 9 bytes)\n\
                 Process: dev.phonelogs.crashtest\n{pid}UID: 10123\n\nSECRET\n\n"
            )
        };
        // A compressed entry first: nothing after it can be pinned.
        let print = |entries: &[String]| {
            format!(
                "Drop box contents: 9 entries\n\n========================================\n\
                 2025-11-30 11:00:00 data_app_crash (compressed text, 900 bytes)\n\
                 Process: com.example.store\nUID: 10200\n\nbig\n\n{}",
                entries.concat()
            )
        };
        let listing = "2025-11-30 11:00:00 data_app_crash (compressed text, 900 bytes)\n    \
                       Process: com.example.store/UID: 10200//big\n";
        // The app's crash at 11:00:05 (+1), pid 4242: 1764496805.
        let buffer = "--------- beginning of crash\n\
         1764496805.400 10123  4242  4242 E AndroidRuntime: FATAL EXCEPTION: main\n\
         1764496805.400 10123  4242  4242 E AndroidRuntime: Process: dev.phonelogs.crashtest, PID: 4242\n\
         1764496805.400 10123  4242  4242 E AndroidRuntime: java.lang.IllegalStateException: Crash button tapped\n";
        let found = |entries: &[String]| {
            let print = print(entries);
            app_crashes(
                &[DropBoxRead {
                    listing,
                    print: &print,
                }],
                buffer.as_bytes(),
                &[buffer.as_bytes()],
                Owner {
                    package: "dev.phonelogs.crashtest",
                    uid: 10123,
                    other_users: false,
                },
                &PhoneClock {
                    offset: time::UtcOffset::from_hms(1, 0, 0).unwrap(),
                    year: None,
                },
                datetime!(2025-11-30 9:30 UTC),
                10,
            )
        };
        let crash = "data_app_crash";
        // The same pid a second later, and (Android 10, no `PID:`) the same moment: shown.
        let same = found(&[
            entry("2025-11-30 11:00:06", crash, Some(4242)),
            entry("2025-11-30 11:00:08", crash, None),
        ]);
        assert_eq!(same.reports.len(), 1, "{:#?}", same.reports);
        assert!(same.reports[0].text.contains("Crash button tapped"));
        assert!(same.reports.iter().all(|r| !r.text.contains("SECRET")));
        assert_eq!(same.unconfirmed, 0);
        // Another pid, the same pid 3 minutes later, no pid 20 s later, or an ANR: counted.
        let other = found(&[
            entry("2025-11-30 11:00:06", crash, Some(4343)),
            entry("2025-11-30 11:03:06", crash, Some(4242)),
            entry("2025-11-30 11:00:25", crash, None),
            entry("2025-11-30 11:00:06", "data_app_anr", Some(4242)),
        ]);
        assert_eq!((other.reports.len(), other.unconfirmed), (1, 4));
    }

    /// Each tag's listing runs right before its own print, not all listings before all prints.
    #[test]
    fn each_listing_runs_right_before_its_print() {
        assert_eq!(
            dropbox_commands(),
            [
                "dumpsys dropbox data_app_crash",
                "dumpsys dropbox --print data_app_crash",
                "dumpsys dropbox data_app_native_crash",
                "dumpsys dropbox --print data_app_native_crash",
                "dumpsys dropbox data_app_anr",
                "dumpsys dropbox --print data_app_anr",
            ]
        );
    }

    #[test]
    fn crashes_from_the_drop_box_and_the_crash_buffer() {
        // Drop box entries as `dumpsys dropbox --print <tag>` prints them (§2), one per tag.
        let java = "Drop box contents: 2 entries\nMax entries: 1000\n\nSearching for: data_app_crash\n\n\
========================================\n\
2025-11-30 11:00:06 data_app_crash (text, 300 bytes)\n\
Process: dev.phonelogs.crashtest\nPID: 4242\nUID: 10123\nFlags: 0x38d83e46\nPackage: dev.phonelogs.crashtest v1 (1.0)\n\n\
java.lang.IllegalStateException: Crash button tapped\n\tat dev.phonelogs.crashtest.MainActivity.onCrash(MainActivity.java:42)\n\n\
========================================\n\
2025-11-30 11:00:07 data_app_crash (text, 200 bytes)\n\
Process: com.example.store\nPID: 5151\nUID: 10200\n\n\
java.lang.RuntimeException: OTHER-APP-SECRET\n";
        let anr = "Drop box contents: 1 entries\n\n========================================\n\
2025-11-30 11:00:20 data_app_anr (text, 400 bytes)\n\
Process: dev.phonelogs.crashtest\nPID: 4243\nUID: 10123\nSubject: Input dispatching timed out\n\n\
CPU usage from 0ms to 5000ms later:\n  50% 600/system_server: 30% user\n\n\
----- pid 4243 at 2025-11-30 11:00:19.123456789+0100 -----\nCmd line: dev.phonelogs.crashtest\n\"main\" prio=5 tid=1 Sleeping\n----- end 4243 -----\n\n\
----- pid 600 at 2025-11-30 11:00:19.223456789+0100 -----\nCmd line: system_server\n\"main\" prio=5 tid=1 Native\n----- end 600 -----\n";
        // The crash buffer: the same crash as the drop box's (pid 4242), one the drop box
        // dropped (pid 4300), and another app's.
        let buffer = "--------- beginning of crash\n\
         1764496805.400 10123  4242  4242 E AndroidRuntime: FATAL EXCEPTION: main\n\
         1764496805.400 10123  4242  4242 E AndroidRuntime: Process: dev.phonelogs.crashtest, PID: 4242\n\
         1764496805.400 10123  4242  4242 E AndroidRuntime: java.lang.IllegalStateException: Crash button tapped\n\
         1764496830.000 10123  4300  4300 E AndroidRuntime: FATAL EXCEPTION: main\n\
         1764496830.000 10123  4300  4300 E AndroidRuntime: Process: dev.phonelogs.crashtest, PID: 4300\n\
         1764496830.000 10123  4300  4300 E AndroidRuntime: java.lang.NullPointerException: second\n\
         1764496831.000 10200  5151  5151 E AndroidRuntime: FATAL EXCEPTION: main\n\
         1764496831.000 10200  5151  5151 E AndroidRuntime: java.lang.RuntimeException: OTHER-APP-SECRET\n";
        let clock = PhoneClock {
            offset: time::UtcOffset::from_hms(1, 0, 0).unwrap(),
            year: None,
        };
        let since = datetime!(2025-11-30 9:00 UTC);
        let owner = Owner {
            package: "dev.phonelogs.crashtest",
            uid: 10123,
            other_users: false,
        };
        let found = app_crashes_of_prints(
            &[java, "", anr],
            buffer.as_bytes(),
            &[buffer.as_bytes()],
            owner,
            &clock,
            since,
            10,
        );
        assert_eq!(found.unconfirmed, 0);
        let reports = found.reports;
        let kinds: Vec<CrashKind> = reports.iter().map(|r| r.kind).collect();
        assert_eq!(
            kinds,
            [CrashKind::JavaCrash, CrashKind::Anr, CrashKind::JavaCrash]
        );
        assert_eq!(reports[0].pid, Some(4300));
        assert_eq!(reports[1].summary, "Input dispatching timed out");
        assert!(
            !reports[1].text.contains("system_server"),
            "{}",
            reports[1].text
        );
        assert_eq!(reports[2].time, datetime!(2025-11-30 11:00:06 +1));
        assert!(
            reports
                .iter()
                .all(|r| !r.text.contains("OTHER-APP") && !r.summary.contains("OTHER-APP"))
        );
        let newest = app_crashes_of_prints(
            &[java, "", anr],
            buffer.as_bytes(),
            &[buffer.as_bytes()],
            owner,
            &clock,
            since,
            1,
        )
        .reports;
        assert_eq!(newest.len(), 1);
        let later = datetime!(2025-11-30 12:00 UTC);
        assert!(
            app_crashes_of_prints(
                &[java, "", anr],
                buffer.as_bytes(),
                &[buffer.as_bytes()],
                owner,
                &clock,
                later,
                10
            )
            .reports
            .is_empty()
        );
    }
}

/// The lazy readers held to the eager ones (`app_lines_eager`, and `app_crashes` and its
/// `pid_owner` as they were before the drop box was read in place) on random dumps: mixed uids
/// (the app's, its clone's, other apps', named system uids), multi-line messages, every buffer,
/// crashes of every kind, drop box entries with and without `UID:` and `PID:`, and damaged lines.
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod lazy_matches_eager {
    use super::*;
    use proptest::prelude::*;

    const APP: &str = "dev.phonelogs.crashtest";
    const UID: u32 = 10123;
    /// 2025-11-30 10:00:00 UTC.
    const BASE: i64 = 1_764_496_800;

    fn pid_owner_eager(evidence: &[&[u8]], pid: u32, when: OffsetDateTime, uid: u32) -> PidOwner {
        let (mut mine, mut theirs) = (false, false);
        for dump in evidence {
            for raw in split_lines(dump) {
                let text = String::from_utf8_lossy(raw);
                let LogcatItem::Line(line) = parse_line(&text) else {
                    continue;
                };
                if line.pid != pid {
                    continue;
                }
                let Some(time) = line.time.to_offset_date_time(None, time::UtcOffset::UTC) else {
                    continue;
                };
                if time < when - EVIDENCE_BEFORE || time > when + EVIDENCE_AFTER {
                    continue;
                }
                match line.uid.as_ref().and_then(|field| field.as_number()) {
                    Some(found) if found == uid => mine = true,
                    Some(_) => theirs = true,
                    None => {}
                }
            }
        }
        match (mine, theirs) {
            (true, false) => PidOwner::App,
            (false, true) => PidOwner::Other,
            _ => PidOwner::Unknown,
        }
    }

    fn app_crashes_eager(
        dropbox_dumps: &[&str],
        crash_buffer: &[u8],
        evidence: &[&[u8]],
        owner: Owner<'_>,
        clock: &PhoneClock,
        since: OffsetDateTime,
        limit: usize,
    ) -> FoundCrashes {
        let Owner {
            package,
            uid,
            other_users,
        } = owner;
        // The crash buffer first: only the app's own lines reach the parser, and another uid's
        // crashes are kept apart to recognise the other copy's drop box entries.
        let filters = uid_filters(&[uid]);
        let (mut own, mut foreign) = (String::new(), String::new());
        for raw in split_lines(crash_buffer) {
            let into = if filters.iter().any(|filter| filter.matches(raw)) {
                &mut own
            } else {
                &mut foreign
            };
            into.push_str(&String::from_utf8_lossy(raw));
            into.push('\n');
        }
        let buffer_crashes: Vec<Report> =
            phonelogs_crash::crashbuf::parse_crash_buffer(&own, clock)
                .into_iter()
                .filter(|report| report.kind == CrashKind::JavaCrash)
                .collect();
        let foreign_crashes: Vec<Report> = if other_users {
            phonelogs_crash::crashbuf::parse_crash_buffer(&foreign, clock)
                .into_iter()
                .filter(|report| {
                    report.kind == CrashKind::JavaCrash && is_process_of(&report.process, package)
                })
                .collect()
        } else {
            Vec::new()
        };
        let near = |a: Option<OffsetDateTime>,
                    b: Option<OffsetDateTime>,
                    window: time::Duration| matches!((a, b), (Some(a), Some(b)) if (a - b).abs() <= window);
        let mut reports: Vec<Report> = Vec::new();
        let mut unconfirmed: Vec<Report> = Vec::new();
        let mut unpinned = 0;
        for dump in dropbox_dumps {
            let listing = listing_for(dump);
            let checked = checked_dropbox_entries(&listing, dump, |entry| {
                claims_the_app(entry, owner, clock, since)
                    && !shown_from_the_crash_buffer(entry, &buffer_crashes, clock, since)
            });
            unpinned += checked.claims;
            for entry in checked.trusted.iter().map(|entry| entry.to_entry()) {
                if !DROPBOX_TAGS.contains(&entry.tag.as_str()) {
                    continue;
                }
                let attribution = entry.attribution(&AppMatch {
                    uid: Some(uid),
                    package,
                });
                let names_uid = attribution == Attribution::Uid;
                if attribution == Attribution::Ambiguous {
                    if entry.report_time(clock).is_some_and(|time| time >= since) {
                        unpinned += 1;
                    }
                    continue;
                }
                if !attribution.is_apps() {
                    continue;
                }
                // `to_report` fills the pid of Android 10 entries (no `PID:` header) from the
                // app's own trace section or the tombstone header.
                let Some(report) = entry.to_report(clock) else {
                    continue;
                };
                if names_uid || !other_users {
                    reports.push(report);
                    continue;
                }
                let owner = match report.pid {
                    Some(pid) => match report.time {
                        Some(when) => pid_owner_eager(evidence, pid, when, uid),
                        None => PidOwner::Unknown,
                    },
                    // A Java crash entry names no pid: the crash buffer's crash of that moment
                    // says whose it was.
                    None => {
                        let window = time::Duration::seconds(10);
                        let ours = buffer_crashes
                            .iter()
                            .any(|crash| near(crash.time, report.time, window));
                        let theirs = foreign_crashes
                            .iter()
                            .any(|crash| near(crash.time, report.time, window));
                        match (ours, theirs) {
                            (true, false) => PidOwner::App,
                            (false, true) => PidOwner::Other,
                            _ => PidOwner::Unknown,
                        }
                    }
                };
                match owner {
                    PidOwner::App => reports.push(report),
                    PidOwner::Other => {
                        tracing::debug!(pid = ?report.pid, "a drop box entry of another user's copy of the app is left out");
                    }
                    PidOwner::Unknown => unconfirmed.push(report),
                }
            }
        }
        let dropbox_java: Vec<usize> = (0..reports.len())
            .filter(|&index| reports[index].kind == CrashKind::JavaCrash)
            .collect();
        for report in buffer_crashes {
            let same = dropbox_java.iter().copied().find(|&index| {
                let known = &reports[index];
                match known.pid {
                    Some(pid) => {
                        Some(pid) == report.pid
                            && near(known.time, report.time, time::Duration::minutes(2))
                    }
                    // Android 10's entries name no pid: the same crash is the one at the same time.
                    None => near(known.time, report.time, time::Duration::seconds(10)),
                }
            });
            match same {
                Some(index) => {
                    if reports[index].pid.is_none() {
                        reports[index].pid = report.pid;
                    }
                }
                None => reports.push(report),
            }
        }
        let in_window = |report: &Report| report.time.is_some_and(|time| time >= since);
        let unconfirmed = unconfirmed
            .iter()
            .filter(|report| in_window(report))
            .count()
            + unpinned;
        let mut out: Vec<CrashReport> = reports
            .into_iter()
            .filter_map(|report| {
                let Some(report) = report.dated() else {
                    tracing::warn!("a crash report without a readable time is left out");
                    return None;
                };
                (report.time >= since).then_some(report)
            })
            .collect();
        out.sort_by_key(|report| std::cmp::Reverse(report.time));
        out.truncate(limit);
        FoundCrashes {
            reports: out,
            unconfirmed,
        }
    }

    /// Who logs: the app, its clone in user 10, other apps, and system uids printed by name.
    fn uid_field() -> impl Strategy<Value = String> {
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
    fn event() -> impl Strategy<Value = (i64, Vec<Vec<u8>>)> {
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
                    8 => vec![
                        format!("{{time}} {uid:>5} {pid:>5} {pid:>5} {level} {tag}:").into_bytes(),
                    ],
                    9 => vec![
                        format!(
                            "{{time}} {uid:>5} {pid:>5} {pid:>5} {level} {tag}:\r {tag}: x\r\r"
                        )
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
                            let mut line = format!(
                                "{{time}} {uid:>5} {pid:>5} {pid:>5} {level} {tag:<8}: {text}"
                            )
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
    fn dump() -> impl Strategy<Value = Vec<u8>> {
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

    fn query() -> impl Strategy<Value = LogQuery> {
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
    /// the query's `since`.
    fn dropbox_entry() -> impl Strategy<Value = String> {
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
            prop::option::of(prop::sample::select(vec![UID, 1_010_123, 10200])),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(|(tag, at, process, pid, uid, timestamp, damaged)| {
                // Local times of a phone at +01:00.
                let local = OffsetDateTime::from_unix_timestamp(BASE + at).unwrap()
                    .to_offset(time::UtcOffset::from_hms(1, 0, 0).unwrap());
                let date = format!(
                    "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
                    local.year(), local.month() as u8, local.day(), local.hour(), local.minute(), local.second()
                );
                let mut text = format!("========================================\n{date} {tag} (text, 300 bytes)\n");
                text.push_str(&format!("Process: {process}\n"));
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
                text
            })
    }

    /// A drop box Java crash a minute before `since` is the same crash as the crash buffer's
    /// just after it, so neither is returned: the lazy path must still read that entry.
    #[test]
    fn a_drop_box_copy_just_before_since_still_hides_its_crash() {
        let buffer = format!(
            "{BASE:>19}.500 {UID} 4242 4242 E AndroidRuntime: FATAL EXCEPTION: main\n\
             {BASE:>19}.500 {UID} 4242 4242 E AndroidRuntime: Process: {APP}, PID: 4242\n\
             {BASE:>19}.500 {UID} 4242 4242 E AndroidRuntime: java.lang.IllegalStateException: boom\n"
        );
        // 10:59:30 at +01:00 is BASE - 30 s.
        let dropbox = format!(
            "Drop box contents: 1 entries\n\n========================================\n\
             2025-11-30 10:59:30 data_app_crash (text, 300 bytes)\nProcess: {APP}\nPID: 4242\nUID: {UID}\n\n\
             java.lang.IllegalStateException: boom\n"
        );
        let owner = Owner {
            package: APP,
            uid: UID,
            other_users: false,
        };
        let clock = PhoneClock {
            offset: time::UtcOffset::from_hms(1, 0, 0).unwrap(),
            year: None,
        };
        let since = OffsetDateTime::from_unix_timestamp(BASE).unwrap();
        let args = (&[dropbox.as_str(), "", ""], buffer.as_bytes());
        let lazy = app_crashes_of_prints(args.0, args.1, &[args.1], owner, &clock, since, 10);
        let eager = app_crashes_eager(args.0, args.1, &[args.1], owner, &clock, since, 10);
        assert_eq!(lazy, eager);
        assert!(lazy.reports.is_empty(), "{lazy:#?}");
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

        #[test]
        fn lazy_crashes_are_the_eager_ones(
            crash_buffer in dump(),
            main in dump(),
            dumps in prop::collection::vec(prop::collection::vec(dropbox_entry(), 0..6), 3),
            other_users in any::<bool>(),
            since in -150i64..150,
            limit in 0usize..6,
        ) {
            let dumps: Vec<String> = dumps
                .iter()
                .map(|entries| format!("Drop box contents: {} entries\n\n{}", entries.len(), entries.concat()))
                .collect();
            let dumps: Vec<&str> = dumps.iter().map(String::as_str).collect();
            let evidence: Vec<&[u8]> = vec![&crash_buffer, &main];
            let owner = Owner { package: APP, uid: UID, other_users };
            let clock = PhoneClock { offset: time::UtcOffset::from_hms(1, 0, 0).unwrap(), year: None };
            let since = OffsetDateTime::from_unix_timestamp(BASE + since).unwrap();
            let lazy = app_crashes_of_prints(&dumps, &crash_buffer, &evidence, owner, &clock, since, limit);
            let eager = app_crashes_eager(&dumps, &crash_buffer, &evidence, owner, &clock, since, limit);
            prop_assert_eq!(lazy, eager);
        }
    }
}
