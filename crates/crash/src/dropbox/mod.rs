//! `dumpsys dropbox --print`: entries, their `Key: value` headers and bodies, matching an entry
//! to an app, and turning `data_app_crash`, `data_app_native_crash` and `data_app_anr` entries
//! into reports.

use serde::{Deserialize, Serialize};

use crate::anr::{AnrCut, AnrTarget, cut_anr};
use crate::report::{PhoneClock, Report, first_line};
use phonelogs_driver::CrashKind;

/// The line of 40 `=` that starts every entry under `--print`.
pub const ENTRY_SEPARATOR: &str = "========================================";

/// What the entry's header line says about its contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum EntryContents {
    /// `(text, N bytes)` or `(compressed text, N bytes)`.
    Text {
        /// Whether the phone stored it compressed.
        compressed: bool,
        /// The stored size.
        bytes: u64,
    },
    /// `(data, N bytes)` or `(compressed data, N bytes)`: binary, printed as a path.
    Data {
        /// Whether the phone stored it compressed.
        compressed: bool,
        /// The stored size.
        bytes: u64,
    },
    /// `(contents lost)`: the entry was dropped, only its header remains.
    ContentsLost,
    /// `(no file)`.
    NoFile,
    /// A header line whose parenthesis this parser does not know.
    Unknown,
}

/// One drop box entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DropBoxEntry {
    /// The entry's time as printed, `YYYY-MM-DD HH:MM:SS`, the phone's local time.
    pub time: String,
    /// The tag, e.g. `data_app_crash`.
    pub tag: String,
    /// What the header line says about the contents.
    pub contents: EntryContents,
    /// The `Key: value` lines before the first blank line, in order.
    pub headers: Vec<(String, String)>,
    /// The text after the headers.
    pub body: String,
}

/// How to recognise an app's entries; see [`Attribution`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppMatch<'a> {
    /// The app's uid. An entry with a `UID:` header (where the system prints it) matches by it
    /// alone.
    pub uid: Option<u32>,
    /// The package name. Without a `UID:` header an entry matches when the first line of the
    /// package list names it.
    pub package: &'a str,
}

/// The keys AOSP `ActivityManagerService.appendDropBoxProcessHeaders` prints at the top of a
/// `data_app_*` entry, before the package list: `SystemUptimeMs:` (~15), `Process:`, `PID:`
/// and `UID:` (~12+), `Frozen:` (~14), `Timestamp:`, then `Flags: 0x…`, and right after it one
/// `Package: <pkg>[ v<code>[ (<versionName>)]]` line per package of the process
/// (shared/notes/android-formats.md §2; testdata/README.md cites the source). No app chooses
/// their values (a process name is letters, digits, `_`, `.` and `:`), so none can hold a line
/// break; a `versionName`, an activity's name or a subject (a broadcast's action) can, and they
/// are all printed after the first `Package:` line.
const PROCESS_KEYS: [&str; 7] = [
    "SystemUptimeMs",
    "Process",
    "PID",
    "UID",
    "Frozen",
    "Timestamp",
    "Flags",
];

/// Who an entry says it is, read only where the system itself prints it: the leading run of
/// [`PROCESS_KEYS`] lines (the first of each key), and the package list's first line when it
/// follows that run's `Flags:` line. Any later `Package:` line may have been written by the
/// `versionName` of the line before it, and any other line by an app.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EntryIdentity<'h> {
    /// The `Process:` value.
    pub process: Option<&'h str>,
    /// The `PID:` value, when it is a number.
    pub pid: Option<u32>,
    /// The `UID:` value, when it is a number.
    pub uid: Option<u32>,
    /// The package the package list's first line names.
    pub first_package: Option<&'h str>,
}

/// Whether an entry is an app's: [`DropBoxEntry::attribution`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attribution {
    /// Its `UID:` (printed before the package list) is the app's uid.
    Uid,
    /// It has no such `UID:` (Android 11 and older) and the package list's first line names
    /// the app.
    Package,
    /// Its headers do not name the app.
    Other,
    /// Only a header another app can write names the app: a later `Package:` line (the line
    /// before may have printed it from its `versionName`; a process hosting several packages
    /// prints several lines too, so the two cannot be told apart), a `Process:` of the app's
    /// name (any app may name its process so), or a `UID:`, `Process:` or `Package:` line
    /// after the process headers. Never the app's; a reader counts it as left out.
    Ambiguous,
}

impl Attribution {
    /// Whether the entry is the app's.
    pub fn is_apps(self) -> bool {
        matches!(self, Attribution::Uid | Attribution::Package)
    }
}

impl DropBoxEntry {
    /// The value of the first header named `key` (case-sensitive, as printed).
    pub fn header(&self, key: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value.as_str())
    }

    /// The report kind of the entry's tag, for the tags that are app crash reports.
    pub fn report_kind(&self) -> Option<CrashKind> {
        let tag = self.tag.as_str();
        if tag.ends_with("_native_crash") {
            Some(CrashKind::NativeCrash)
        } else if tag.ends_with("_app_crash") {
            Some(CrashKind::JavaCrash)
        } else if tag.ends_with("_app_anr") {
            Some(CrashKind::Anr)
        } else {
            None
        }
    }

    /// Whether the entry is the app's: [`Attribution::is_apps`] of [`DropBoxEntry::attribution`].
    pub fn matches(&self, app: &AppMatch<'_>) -> bool {
        self.attribution(app).is_apps()
    }

    /// Whose the entry is: by the `UID:` the system printed when the entry has one (a phone
    /// before Android ~12 prints none), else by the first line of its package list; see
    /// [`Attribution`].
    ///
    /// ```
    /// use phonelogs_crash::dropbox::{parse_dropbox, AppMatch, Attribution};
    /// // Android 10 prints no `UID:`; another app's `versionName` printed a second line.
    /// let dump = "\
    /// ========================================
    /// 2020-09-14 10:02:41 data_app_crash (text, 130 bytes)
    /// Process: com.example.other
    /// Flags: 0x38c83e44
    /// Package: com.example.other v7 (2.3)
    /// Package: com.example.app v1 (1.0)
    /// UID: 10127
    ///
    /// java.lang.IllegalStateException: boom
    /// ";
    /// let app = AppMatch { uid: Some(10127), package: "com.example.app" };
    /// assert_eq!(parse_dropbox(dump)[0].attribution(&app), Attribution::Ambiguous);
    /// ```
    pub fn attribution(&self, app: &AppMatch<'_>) -> Attribution {
        attribution(self.header_pairs(), app)
    }

    /// Who the entry says it is, from the headers the system prints: [`EntryIdentity`].
    pub fn identity(&self) -> EntryIdentity<'_> {
        read_identity(self.header_pairs()).0
    }

    fn header_pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.headers
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_str()))
    }

    /// When the entry's report happened: its `Timestamp:` header (Android ~15), else the entry
    /// time read in the phone's zone. This is the time [`DropBoxEntry::to_report`] gives.
    pub fn report_time(&self, clock: &PhoneClock) -> Option<time::OffsetDateTime> {
        report_time(self.header("Timestamp"), &self.time, clock)
    }

    /// The pid of the process the entry is about.
    ///
    /// From the `PID:` header when the entry has one. A phone that prints no `PID:` header
    /// (Android 10) still names the pid in the body: an ANR's in the app's own trace section
    /// (`----- pid N at … -----`, the one whose `Cmd line:` is the entry's `Process:`, or the
    /// first section when the entry names no process), a native crash's in the tombstone's
    /// `pid: N, tid: …` line. Java crashes print no pid in their body, so they have none then.
    ///
    /// ```
    /// use phonelogs_crash::dropbox::parse_dropbox;
    /// let dump = "\
    /// ========================================
    /// 2019-03-02 14:25:00 data_app_anr (text, 300 bytes)
    /// Process: com.example.app
    /// Flags: 0x38c83e44
    ///
    /// ----- pid 9001 at 2019-03-02 14:24:58 -----
    /// Cmd line: com.example.app
    /// ----- end 9001 -----
    /// ";
    /// assert_eq!(parse_dropbox(dump)[0].pid(), Some(9001));
    /// ```
    pub fn pid(&self) -> Option<u32> {
        if let Some(pid) = self.header_pid() {
            return Some(pid);
        }
        match self.report_kind()? {
            CrashKind::Anr => self.anr_cut(None).pid,
            CrashKind::NativeCrash => crate::tombstone::parse_tombstone_header(&self.body).pid,
            _ => None,
        }
    }

    /// The `PID:` header's value, when the system printed a readable one.
    fn header_pid(&self) -> Option<u32> {
        self.identity().pid
    }

    /// The ANR body cut to the app's own sections: by `pid` when known, else by the entry's
    /// `Process:` (the first section when there is none).
    fn anr_cut(&self, pid: Option<u32>) -> AnrCut {
        let process = self.identity().process.unwrap_or("");
        cut_anr(
            &self.body,
            AnrTarget {
                pid,
                process: (!process.is_empty()).then_some(process),
            },
        )
    }

    /// Turns an app crash entry into a report, or `None` for other tags.
    ///
    /// The report's pid is [`DropBoxEntry::pid`]'s: the `PID:` header, else (Android 10) the
    /// pid the ANR trace or the tombstone names.
    pub fn to_report(&self, clock: &PhoneClock) -> Option<Report> {
        let kind = self.report_kind()?;
        let mut warnings = Vec::new();
        let time = self.report_time(clock);
        if time.is_none() {
            warnings.push(format!("unreadable entry time {:?}", self.time));
        }
        let identity = self.identity();
        let mut pid = identity.pid;
        let process = identity.process.unwrap_or("").to_owned();
        match self.contents {
            EntryContents::ContentsLost => {
                warnings.push("the phone lost the entry's contents".into())
            }
            EntryContents::NoFile => warnings.push("the entry has no file".into()),
            EntryContents::Data { .. } => warnings.push("the entry is binary data".into()),
            _ => {}
        }
        let mut text = String::new();
        for (name, value) in &self.headers {
            text.push_str(name);
            text.push_str(": ");
            text.push_str(value);
            text.push('\n');
        }
        text.push('\n');
        let summary = match kind {
            CrashKind::Anr => {
                let cut = self.anr_cut(pid);
                // Without a `PID:` header the app's own trace section names the pid.
                pid = pid.or(cut.pid);
                text.push_str(&cut.text);
                warnings.extend(cut.warnings);
                self.header("Subject")
                    .map(str::to_owned)
                    .or(cut.subject)
                    .unwrap_or_else(|| "ANR".to_owned())
            }
            CrashKind::NativeCrash => {
                text.push_str(&self.body);
                let header = crate::tombstone::parse_tombstone_header(&self.body);
                // Without a `PID:` header the tombstone's `pid: N, tid: …` line names it.
                pid = pid.or(header.pid);
                let signal = header.signal.map(|s| format!("signal {s}"));
                match (signal, header.abort_message) {
                    (Some(signal), Some(message)) => format!("{signal}: {message}"),
                    (Some(signal), None) => signal,
                    (None, Some(message)) => message,
                    (None, None) => first_body_line(&self.body).to_owned(),
                }
            }
            _ => {
                text.push_str(&self.body);
                first_body_line(&self.body).to_owned()
            }
        };
        // An entry without contents still gets a heading that says why it is empty.
        let summary = match (
            summary.is_empty() || self.body.trim().is_empty(),
            self.contents,
        ) {
            (true, EntryContents::ContentsLost) => "(contents lost)".to_owned(),
            (true, EntryContents::NoFile) => "(no file)".to_owned(),
            _ => summary,
        };
        Some(Report {
            kind,
            time,
            pid,
            process,
            summary,
            text,
            warnings,
        })
    }
}

/// The identity of headers (`(key, value)` pairs, in order), and the headers after the part
/// it is read from (which any app may have written); see [`EntryIdentity`].
fn read_identity<'h, I>(headers: I) -> (EntryIdentity<'h>, std::iter::Peekable<I>)
where
    I: Iterator<Item = (&'h str, &'h str)>,
{
    let mut identity = EntryIdentity::default();
    let mut headers = headers.peekable();
    let (mut process, mut pid, mut uid) = (None, None, None);
    let mut last = None;
    while let Some(&(key, value)) = headers.peek() {
        if !PROCESS_KEYS.contains(&key) {
            break;
        }
        match key {
            "Process" => {
                process.get_or_insert(value);
            }
            "PID" => {
                pid.get_or_insert(value);
            }
            "UID" => {
                uid.get_or_insert(value);
            }
            _ => {}
        }
        last = Some(key);
        headers.next();
    }
    identity.process = process.map(str::trim).filter(|name| !name.is_empty());
    identity.pid = pid.and_then(|value| value.trim().parse().ok());
    identity.uid = uid.and_then(|value| value.trim().parse().ok());
    if last == Some("Flags")
        && let Some(&("Package", value)) = headers.peek()
    {
        identity.first_package = value.split_whitespace().next();
        headers.next();
    }
    (identity, headers)
}

/// Whose headers (`(key, value)` pairs, in order) are; see [`DropBoxEntry::attribution`].
fn attribution<'h>(
    headers: impl Iterator<Item = (&'h str, &'h str)>,
    app: &AppMatch<'_>,
) -> Attribution {
    let (identity, rest) = read_identity(headers);
    if let Some(uid) = identity.uid {
        return if app.uid == Some(uid) {
            Attribution::Uid
        } else {
            Attribution::Other
        };
    }
    if app.package.is_empty() {
        return Attribution::Other;
    }
    if identity.first_package == Some(app.package) {
        return Attribution::Package;
    }
    let is_apps_process = |process: &str| {
        let process = process.trim();
        process == app.package
            || process
                .strip_prefix(app.package)
                .is_some_and(|rest| rest.starts_with(':'))
    };
    // Any other header naming the app is a claim no reader can check.
    let claims = identity.process.is_some_and(is_apps_process)
        || rest.into_iter().any(|(key, value)| match key {
            "Package" => value.split_whitespace().next() == Some(app.package),
            "Process" => is_apps_process(value),
            "UID" => app.uid.is_some() && value.trim().parse::<u32>().ok() == app.uid,
            _ => false,
        });
    if claims {
        Attribution::Ambiguous
    } else {
        Attribution::Other
    }
}

/// A report's time from an entry's `Timestamp:` header, else its printed local time.
fn report_time(
    timestamp: Option<&str>,
    entry_time: &str,
    clock: &PhoneClock,
) -> Option<time::OffsetDateTime> {
    timestamp
        .and_then(crate::tombstone::parse_tombstone_time)
        .or_else(|| {
            crate::android::parse_local_date_time(entry_time)
                .map(|local| local.assume_offset(clock.offset))
        })
}

/// One drop box entry read in place: its header line's fields and its headers and body as
/// slices of the dump, so a reader can decide from the headers whether it wants the entry
/// before copying anything (a drop box holds every app's reports, megabytes of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DropBoxEntryRef<'a> {
    /// The entry's time as printed, `YYYY-MM-DD HH:MM:SS`, the phone's local time.
    pub time: &'a str,
    /// The tag, e.g. `data_app_crash`.
    pub tag: &'a str,
    /// What the header line says about the contents.
    pub contents: EntryContents,
    /// The `Key: value` lines, whole lines of the dump.
    header_lines: &'a str,
    /// The lines after the headers, whole lines of the dump.
    body_lines: &'a str,
}

impl<'a> DropBoxEntryRef<'a> {
    /// The `Key: value` headers, in order.
    pub fn headers(&self) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        self.header_lines.lines().filter_map(read_header_line)
    }

    /// The value of the first header named `key`, as [`DropBoxEntry::header`] gives it.
    pub fn header(&self, key: &str) -> Option<&'a str> {
        self.headers()
            .find(|(name, _)| *name == key)
            .map(|(_, value)| value)
    }

    /// Whether the entry is the app's, as [`DropBoxEntry::matches`] decides.
    pub fn matches(&self, app: &AppMatch<'_>) -> bool {
        self.attribution(app).is_apps()
    }

    /// Whose the entry is, as [`DropBoxEntry::attribution`] decides.
    pub fn attribution(&self, app: &AppMatch<'_>) -> Attribution {
        attribution(self.headers(), app)
    }

    /// Who the entry says it is, as [`DropBoxEntry::identity`] reads it.
    pub fn identity(&self) -> EntryIdentity<'a> {
        read_identity(self.headers()).0
    }

    /// The time its report has, as [`DropBoxEntry::report_time`] gives it.
    pub fn report_time(&self, clock: &PhoneClock) -> Option<time::OffsetDateTime> {
        report_time(self.header("Timestamp"), self.time, clock)
    }

    /// The owned entry, as [`parse_dropbox`] gives it.
    pub fn to_entry(&self) -> DropBoxEntry {
        let mut body = String::with_capacity(self.body_lines.len() + 1);
        for line in self.body_lines.lines() {
            body.push_str(line);
            body.push('\n');
        }
        DropBoxEntry {
            time: self.time.to_owned(),
            tag: self.tag.to_owned(),
            contents: self.contents,
            headers: self
                .headers()
                .map(|(key, value)| (key.to_owned(), value.to_owned()))
                .collect(),
            body,
        }
    }
}

/// The line that starts at `at` (which is below `text.len()`), without its line ending as
/// `str::lines` drops it, and where the next line starts.
fn line_at(text: &str, at: usize) -> (&str, usize) {
    match memchr::memchr(b'\n', &text.as_bytes()[at..]) {
        Some(length) => {
            let line = &text[at..at + length];
            (line.strip_suffix('\r').unwrap_or(line), at + length + 1)
        }
        None => (&text[at..], text.len()),
    }
}

/// The first line at or after the line start `from` that is an entry separator: where it starts
/// and where the line after it starts.
///
/// Such a line holds the 40 `=`, so `memchr::memmem` finds the candidates at memory speed and
/// only their lines are looked at: the lines in between are entry text.
fn next_separator(
    text: &str,
    from: usize,
    finder: &memchr::memmem::Finder<'_>,
) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut from = from;
    while from < text.len() {
        let hit = from + finder.find(&bytes[from..])?;
        let start = memchr::memrchr(b'\n', &bytes[from..hit]).map_or(from, |at| from + at + 1);
        let (line, next) = line_at(text, start);
        if line.trim() == ENTRY_SEPARATOR {
            return Some((start, next));
        }
        from = next;
    }
    None
}

/// The entries of `dumpsys dropbox --print` output, read in place and one at a time: the same
/// entries, in the same order, as [`parse_dropbox`], which is built on it.
///
/// ```
/// use phonelogs_crash::dropbox::dropbox_entries;
/// let dump = "\
/// ========================================
/// 2026-11-30 10:00:00 data_app_crash (text, 120 bytes)
/// Process: com.example.app
/// UID: 10127
///
/// java.lang.IllegalStateException: Crash button tapped
/// ";
/// let entry = dropbox_entries(dump).next().unwrap();
/// assert_eq!((entry.tag, entry.header("UID")), ("data_app_crash", Some("10127")));
/// ```
pub fn dropbox_entries(text: &str) -> impl Iterator<Item = DropBoxEntryRef<'_>> {
    scan(text).filter_map(|found| match found {
        Scan::Entry(scanned) => Some(scanned.entry),
        Scan::Skipped => None,
    })
}

/// What [`scan`] finds at each separator line outside the bodies whose end is known.
#[derive(Debug, Clone, Copy)]
enum Scan<'a> {
    /// An entry, with where it lies in the dump.
    Entry(Scanned<'a>),
    /// A separator line not followed by a readable header line: no entry starts there.
    Skipped,
}

/// One entry as the in-place reader found it, and where it lies in the dump.
#[derive(Debug, Clone, Copy)]
struct Scanned<'a> {
    entry: DropBoxEntryRef<'a>,
    /// Where its separator line starts.
    start: usize,
    /// Whether the separator line is exactly the 40 `=` AOSP prints (a pty's `\r` aside).
    exact_separator: bool,
    /// The header line as printed, without its line ending.
    header_line: &'a str,
    /// Where the text after the header line starts.
    text_start: usize,
    /// Where the entry ends: where the next separator line starts, or the dump's end.
    end: usize,
    /// Whether `end` follows from the entry itself (see [`end_is_known`]), not from the next
    /// separator line found, which the entry's own text may have written.
    end_known: bool,
    /// Whether its header line ended in `\r\n` (a pty).
    crlf: bool,
}

/// The entries of `dumpsys dropbox --print` output in place, and the separators that start none.
fn scan(text: &str) -> impl Iterator<Item = Scan<'_>> {
    let finder = memchr::memmem::Finder::new(ENTRY_SEPARATOR.as_bytes());
    // Where the next unread line starts.
    let mut at = 0usize;
    std::iter::from_fn(move || {
        let (start, after_separator) = next_separator(text, at, &finder)?;
        let exact_separator = line_at(text, start).0 == ENTRY_SEPARATOR;
        at = after_separator;
        if at >= text.len() {
            return Some(Scan::Skipped);
        }
        let (header_line, next) = line_at(text, at);
        at = next;
        let Some((time, tag, contents)) = read_entry_header_ref(header_line) else {
            return Some(Scan::Skipped);
        };
        // Where the entry ends by its own byte count, when it gives one that holds: then no
        // separator inside it starts an entry (another app's text could forge one).
        let crlf = next >= 2 && text.as_bytes().get(next - 2..next) == Some(b"\r\n".as_slice());
        let declared_end = declared_end(text, at, contents, crlf);
        let limit = declared_end.unwrap_or(text.len());
        // The headers run to the first blank line (which belongs to neither part), to the
        // first line that is not `Key: value` (which starts the body) or to the next entry.
        let text_start = at;
        let mut body_start = None;
        while at < limit {
            let (line, next) = line_at(text, at);
            let trimmed = line.trim();
            if trimmed == ENTRY_SEPARATOR && declared_end.is_none() {
                break;
            }
            if trimmed.is_empty() {
                body_start = Some((at, next));
                break;
            }
            if read_header_line(line).is_none() {
                body_start = Some((at, at));
                break;
            }
            at = next;
        }
        let header_lines = &text[text_start..at];
        let body_lines = match body_start {
            Some((_, body_from)) => {
                let end = declared_end.unwrap_or_else(|| {
                    next_separator(text, body_from, &finder).map_or(text.len(), |(start, _)| start)
                });
                at = end;
                &text[body_from..end]
            }
            None => "",
        };
        if let Some(end) = declared_end {
            at = end;
        }
        let entry = DropBoxEntryRef {
            time,
            tag,
            contents,
            header_lines,
            body_lines,
        };
        Some(Scan::Entry(Scanned {
            entry,
            start,
            exact_separator,
            header_line,
            text_start,
            end: at,
            end_known: declared_end.is_some() || end_is_known(&entry, text_start == at),
            crlf,
        }))
    })
}

/// Whether an entry without a byte count that holds still shows where it ends: AOSP
/// `DropBoxManagerService.dump` prints a `data` entry under `--print` as its one file path line
/// (then the blank line), and an entry `(contents lost)` or `(no file)` as its header line alone
/// (testdata/README.md cites the source). Neither holds text another app wrote, so the next
/// separator line is the next entry's.
fn end_is_known(entry: &DropBoxEntryRef<'_>, empty: bool) -> bool {
    match entry.contents {
        EntryContents::Data { .. } => {
            let mut lines = entry.body_lines.lines();
            entry.header_lines.is_empty()
                && lines.next().is_some_and(|path| path.starts_with('/'))
                && lines.all(|line| line.trim().is_empty())
        }
        EntryContents::ContentsLost | EntryContents::NoFile => empty,
        _ => false,
    }
}

/// Where the entry whose text starts at `start` ends, by the `(text, N bytes)` of its header:
/// the start of the separator line after it (or the dump's end), or `None` when the header
/// gives no count that describes what was printed, and the entry runs to the next separator.
///
/// AOSP `DropBoxManagerService.dump` prints `N` as the stored file's length, then with
/// `--print` the text itself, a line break when the text does not end with one, a blank line,
/// and the next entry's separator (shared/notes/android-formats.md §2; the source is cited in
/// testdata/README.md). The entries phonelogs reads are written from Java strings, so the file
/// is UTF-8 and its length is exactly the printed bytes. Only uncompressed text has such a
/// count: for `compressed text` it is the gzip file's length, and `data` prints a path.
/// Through a pty (the legacy `shell:` service of old phones) every line break comes out as
/// `\r\n` (`crlf`), so each counts as the one byte it was.
fn declared_end(text: &str, start: usize, contents: EntryContents, crlf: bool) -> Option<usize> {
    let EntryContents::Text {
        compressed: false,
        bytes,
    } = contents
    else {
        return None;
    };
    let count = usize::try_from(bytes).ok()?;
    let end = if crlf {
        advance_collapsing_crlf(text.as_bytes(), start, count)?
    } else {
        start.checked_add(count)?
    };
    // The text must end on a character boundary inside the dump, followed by at most the two
    // line breaks `dump` adds, then the next separator or the end.
    let mut after = end;
    for _ in 0..2 {
        let rest = text.get(after..)?;
        if rest.starts_with("\r\n") {
            after += 2;
        } else if rest.starts_with('\n') {
            after += 1;
        } else {
            break;
        }
    }
    if after == text.len() || line_at(text, after).0.trim() == ENTRY_SEPARATOR {
        Some(after)
    } else {
        None
    }
}

/// The offset `count` bytes after `start`, where each `\r\n` is one byte (a pty's `\n`).
fn advance_collapsing_crlf(bytes: &[u8], start: usize, count: usize) -> Option<usize> {
    let mut at = start;
    for _ in 0..count {
        let step = if bytes.get(at..at.checked_add(2)?) == Some(b"\r\n".as_slice()) {
            2
        } else {
            1
        };
        at = at.checked_add(step)?;
        if at > bytes.len() {
            return None;
        }
    }
    Some(at)
}

fn first_body_line(body: &str) -> &str {
    body.lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .map_or("", |line| first_line(line))
}

/// Reads `YYYY-MM-DD HH:MM:SS <tag> (<flags>, <N> bytes)` and its variants.
#[cfg(test)]
fn read_entry_header(line: &str) -> Option<(String, String, EntryContents)> {
    read_entry_header_ref(line)
        .map(|(time, tag, contents)| (time.to_owned(), tag.to_owned(), contents))
}

/// [`read_entry_header`] in place: the time and tag as slices of `line`.
fn read_entry_header_ref(line: &str) -> Option<(&str, &str, EntryContents)> {
    let line = line.trim();
    let bytes = line.as_bytes();
    if bytes.len() < 21 || bytes[4] != b'-' || bytes[10] != b' ' || bytes[19] != b' ' {
        return None;
    }
    crate::android::parse_local_date_time(line.get(..19)?)?;
    let time = &line[..19];
    let rest = &line[20..];
    let (tag, contents) = match rest.find(" (") {
        Some(at) => {
            let inner = rest[at + 2..].trim_end().trim_end_matches(')');
            (&rest[..at], read_contents(inner))
        }
        None => (rest, EntryContents::Unknown),
    };
    Some((time, tag.trim(), contents))
}

fn read_contents(inner: &str) -> EntryContents {
    match inner {
        "contents lost" => return EntryContents::ContentsLost,
        "no file" => return EntryContents::NoFile,
        _ => {}
    }
    let Some((kind, size)) = inner.split_once(", ") else {
        return EntryContents::Unknown;
    };
    let Some(bytes) = size
        .strip_suffix(" bytes")
        .and_then(|n| n.trim().parse::<u64>().ok())
    else {
        return EntryContents::Unknown;
    };
    let (compressed, kind) = match kind.strip_prefix("compressed ") {
        Some(kind) => (true, kind),
        None => (false, kind),
    };
    match kind {
        "text" => EntryContents::Text { compressed, bytes },
        "data" => EntryContents::Data { compressed, bytes },
        _ => EntryContents::Unknown,
    }
}

/// Whether a line is a `Key: value` header line (a key of letters, digits and `-`).
fn read_header_line(line: &str) -> Option<(&str, &str)> {
    let (key, value) = line.split_once(':')?;
    if key.is_empty()
        || key.len() > 40
        || !key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return None;
    }
    Some((key, value.trim()))
}

/// Reads every entry of `dumpsys dropbox --print` output.
///
/// ```
/// use phonelogs_crash::dropbox::{parse_dropbox, AppMatch};
/// use phonelogs_crash::{PhoneClock, CrashKind};
/// let dump = "\
/// Drop box contents: 1 entries
///
/// ========================================
/// 2026-11-30 10:00:00 data_app_crash (text, 120 bytes)
/// Process: com.example.app
/// PID: 4321
/// UID: 10127
///
/// java.lang.IllegalStateException: Crash button tapped
/// \tat com.example.app.Main.onClick(Main.java:10)
/// ";
/// let entries = parse_dropbox(dump);
/// assert_eq!(entries.len(), 1);
/// assert!(entries[0].matches(&AppMatch { uid: Some(10127), package: "com.example.app" }));
/// let report = entries[0].to_report(&PhoneClock::default()).unwrap();
/// assert_eq!(report.kind, CrashKind::JavaCrash);
/// assert_eq!(report.summary, "java.lang.IllegalStateException: Crash button tapped");
/// ```
pub fn parse_dropbox(text: &str) -> Vec<DropBoxEntry> {
    dropbox_entries(text)
        .map(|entry| entry.to_entry())
        .collect()
}

/// The reports of every app crash entry of a dump, in the dump's order (oldest first).
pub fn dropbox_reports(text: &str, app: Option<&AppMatch<'_>>, clock: &PhoneClock) -> Vec<Report> {
    parse_dropbox(text)
        .iter()
        .filter(|entry| app.is_none_or(|app| entry.matches(app)))
        .filter_map(|entry| entry.to_report(clock))
        .collect()
}

/// One entry of the listing `dumpsys dropbox <tag>` prints without `--print`.
///
/// AOSP `DropBoxManagerService.dump` prints each entry there as its header line and, for text,
/// one line of four spaces and a preview ([`dropbox_preview`]: the first 70 bytes of the text,
/// decoded, trimmed, each `\n` turned into `/`, and ` ...` when they were 70 UTF-16 units;
/// testdata/README.md cites the source). An entry's text therefore never starts a line of the listing, so no app can forge
/// an entry of it, as it can in `--print` output inside a `compressed text` entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListedEntry<'a> {
    /// The header line, `YYYY-MM-DD HH:MM:SS <tag> (<flags>, <N> bytes)`, as printed.
    pub header_line: &'a str,
    /// The preview line without its four spaces, when the entry has one.
    pub preview: Option<&'a str>,
}

/// The entries of a `dumpsys dropbox <tag>` listing, in its order (oldest first).
///
/// A header line starts at the line's first byte; a preview line starts with four spaces, so
/// text that looks like a header inside a preview is never read as one.
///
/// ```
/// use phonelogs_crash::dropbox::dropbox_listing;
/// let listing = "\
/// Drop box contents: 2 entries
/// Searching for: data_app_crash
///
/// 2026-11-30 10:00:00 data_app_crash (text, 98 bytes)
///     Process: com.example.app/PID: 4242/UID: 10127//2026-11-30 10:00:01 dat ...
/// 2026-11-30 10:00:09 data_app_crash (compressed text, 5120 bytes)
///     Process: com.example.other/PID: 5151/UID: 10300/Flags: 0x38c83e44/Package ...
/// ";
/// let entries = dropbox_listing(listing);
/// assert_eq!(entries.len(), 2);
/// assert_eq!(entries[1].header_line, "2026-11-30 10:00:09 data_app_crash (compressed text, 5120 bytes)");
/// ```
pub fn dropbox_listing(listing: &str) -> Vec<ListedEntry<'_>> {
    let mut entries: Vec<ListedEntry<'_>> = Vec::new();
    // Whether the line before was a header line, so this one may be its preview.
    let mut after_header = false;
    for line in listing.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.as_bytes().first().is_some_and(u8::is_ascii_digit)
            && read_entry_header_ref(line).is_some()
        {
            entries.push(ListedEntry {
                header_line: line,
                preview: None,
            });
            after_header = true;
            continue;
        }
        if after_header
            && let Some(preview) = line.strip_prefix("    ")
            && let Some(last) = entries.last_mut()
        {
            last.preview = Some(preview);
        }
        after_header = false;
    }
    entries
}

/// The entries of a tag's `--print` output that the listing of the same shell confirms, and
/// how many were left out; see [`checked_dropbox_entries`].
///
/// Only the trusted entries are kept: the others are counted as they are read, so another
/// app's compressed text full of forged separators costs no memory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckedEntries<'a> {
    /// The entries whose start is confirmed, in the dump's order (at most one per listed
    /// entry).
    pub trusted: Vec<DropBoxEntryRef<'a>>,
    /// How many entries were left out: they may have been written by another entry's text, so
    /// their headers and text are untrusted.
    pub untrusted: usize,
    /// How many of the left out the caller's test counted as claims (e.g. those that claim to
    /// be an app's): to be counted, never shown.
    pub claims: usize,
    /// Whether the listing or the print says dumpsys cut it short ([`DUMP_TIMEOUT`]).
    pub cut: bool,
}

impl CheckedEntries<'_> {
    /// How many entries were left out.
    pub fn untrusted_count(&self) -> usize {
        self.untrusted
    }
}

/// What `dumpsys` prints on its own line, after what it had read, when a service's dump runs
/// past its timeout (10 s unless `-t`/`-T` says otherwise): `*** SERVICE '<name>' DUMP TIMEOUT
/// (<n>ms) EXPIRED ***`, between line breaks. The rest of the dump is never printed, and
/// `dumpsys` still exits 0 (AOSP `frameworks/native/cmds/dumpsys/dumpsys.cpp`, `writeDump` and
/// `main`; testdata/README.md cites it).
pub const DUMP_TIMEOUT: &str = " DUMP TIMEOUT (";

/// Whether `text` holds the line `dumpsys` prints when a dump timed out ([`DUMP_TIMEOUT`]).
///
/// Any text may hold it (another app can write it into its own crash text): it only makes a
/// print not one for one, which costs the entries that cannot be pinned, never shows one.
pub fn dump_timed_out(text: &str) -> bool {
    let finder = memchr::memmem::Finder::new(DUMP_TIMEOUT.as_bytes());
    finder.find_iter(text.as_bytes()).any(|hit| {
        let start = memchr::memrchr(b'\n', &text.as_bytes()[..hit]).map_or(0, |at| at + 1);
        let (line, _) = line_at(text, start);
        is_timeout_line(line)
    })
}

/// `*** SERVICE '<name>' DUMP TIMEOUT (<digits>ms) EXPIRED ***`.
fn is_timeout_line(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("*** SERVICE '") else {
        return false;
    };
    let Some((_, rest)) = rest.rsplit_once('\'') else {
        return false;
    };
    rest.strip_prefix(DUMP_TIMEOUT)
        .and_then(|rest| rest.strip_suffix("ms) EXPIRED ***"))
        .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
}

/// The entries of `dumpsys dropbox --print <tag>` output (`print`) that can be trusted, checked
/// against the listing `dumpsys dropbox <tag>` (`listing`) printed just before it; `is_claim`
/// is asked about each entry left out, and those it says yes to are counted in
/// [`CheckedEntries::claims`].
///
/// In `--print` output an entry's end is known only from an uncompressed text's byte count (or
/// a `data` entry's one path line); a `compressed text` entry runs to the next separator line,
/// which its own text may have written, with a header and `Process:`/`UID:` lines of another
/// app. The listing cannot be forged that way (see [`ListedEntry`]). So:
///
/// - when the print output's entries match the listing one for one (the same header lines in
///   the same order, each text agreeing with its preview as AOSP makes it, every separator
///   line exact and starting an entry), every entry is trusted: then no entry can have been
///   forged. This holds only when no two listed header lines are the same (else an entry
///   deleted between the two commands could be stood for by a forgery inside its twin's
///   text), and when neither output says `dumpsys` cut it short ([`dump_timed_out`]: a cut
///   print can end right after a forgery, where the real entry it stands for was not printed);
/// - otherwise (more entries than listed: a forgery, or an entry written between the two
///   commands) an entry is trusted only when its start is pinned, and it is listed: the first
///   entry is pinned, and so is the one right after a pinned entry whose end is known. Every
///   other entry is left out, and an entry that is not in the listing is never trusted.
///
/// ```
/// use phonelogs_crash::dropbox::checked_dropbox_entries;
/// let listing = "\
/// 2026-11-30 10:00:00 data_app_crash (text, 28 bytes)
///     Process: com.example.app//x
/// ";
/// let print = "\
/// ========================================
/// 2026-11-30 10:00:00 data_app_crash (text, 28 bytes)
/// Process: com.example.app
///
/// x
///
/// ";
/// let checked = checked_dropbox_entries(listing, print, |_| true);
/// assert_eq!((checked.trusted.len(), checked.untrusted_count()), (1, 0));
/// // An entry the listing does not have is never trusted.
/// let checked = checked_dropbox_entries("", print, |entry| entry.tag == "data_app_crash");
/// assert_eq!((checked.trusted.len(), checked.untrusted_count(), checked.claims), (0, 1, 1));
/// ```
pub fn checked_dropbox_entries<'a>(
    listing: &str,
    print: &'a str,
    mut is_claim: impl FnMut(&DropBoxEntryRef<'a>) -> bool,
) -> CheckedEntries<'a> {
    let listed = dropbox_listing(listing);
    let print_cut = dump_timed_out(print);
    let cut = print_cut || dump_timed_out(listing);
    let distinct = {
        let mut seen = std::collections::HashSet::with_capacity(listed.len());
        listed.iter().all(|entry| seen.insert(entry.header_line))
    };
    let mut checked = CheckedEntries {
        cut,
        ..CheckedEntries::default()
    };
    let mut pins = Pins {
        at: next_separator(print, 0, &memchr::memmem::Finder::new(ENTRY_SEPARATOR))
            .map(|(start, _)| start),
        listed: &listed,
        next: 0,
        cut_in: print_cut.then_some(print),
    };
    // The entries read while they still match the listing one for one: fewer than listed.
    let mut held: Vec<Scanned<'a>> = Vec::new();
    let mut one_for_one = !cut && distinct;
    for found in scan(print) {
        if one_for_one {
            let agrees = match &found {
                Scan::Entry(entry) => listed.get(held.len()).is_some_and(|listed| {
                    entry.exact_separator
                        && entry.header_line == listed.header_line
                        && preview_agrees(print, entry, listed.preview)
                }),
                Scan::Skipped => false,
            };
            if agrees && let Scan::Entry(entry) = found {
                held.push(entry);
                continue;
            }
            // Not one for one after all: the entries held are judged as every later one.
            one_for_one = false;
            for entry in held.drain(..) {
                pins.judge(entry, &mut checked, &mut is_claim);
            }
        }
        if let Scan::Entry(entry) = found {
            pins.judge(entry, &mut checked, &mut is_claim);
        }
    }
    if one_for_one && held.len() == listed.len() {
        checked.trusted = held.into_iter().map(|found| found.entry).collect();
    } else {
        for entry in held {
            pins.judge(entry, &mut checked, &mut is_claim);
        }
    }
    checked
}

/// The pinning of [`checked_dropbox_entries`], one entry at a time in the dump's order.
struct Pins<'l, 'a> {
    /// Where the next pinned entry starts: the first separator line, then the end of each
    /// pinned entry whose end is known. `None` once an end is not known.
    at: Option<usize>,
    /// The listing's entries, and the first one not matched yet: a trusted entry is matched
    /// in order.
    listed: &'l [ListedEntry<'a>],
    next: usize,
    /// The print, when dumpsys cut it: the entry the cut fell in runs on into dumpsys' line,
    /// and its headers may have been cut (a `UID:` line to another uid's prefix, a `Process:`
    /// to another package's), so an entry holding that line is never trusted.
    cut_in: Option<&'l str>,
}

impl Pins<'_, '_> {
    fn judge<'p>(
        &mut self,
        found: Scanned<'p>,
        checked: &mut CheckedEntries<'p>,
        is_claim: &mut impl FnMut(&DropBoxEntryRef<'p>) -> bool,
    ) {
        let pinned = self.at == Some(found.start);
        self.at = (pinned && found.end_known).then_some(found.end);
        let whole = self.cut_in.is_none_or(|print| {
            print
                .get(found.text_start..found.end)
                .is_some_and(|text| !dump_timed_out(text))
        });
        let listed = pinned
            && whole
            && self.listed[self.next.min(self.listed.len())..]
                .iter()
                .position(|listed| listed.header_line == found.header_line)
                .map(|index| self.next += index + 1)
                .is_some();
        if listed {
            checked.trusted.push(found.entry);
        } else {
            checked.untrusted += 1;
            if is_claim(&found.entry) {
                checked.claims += 1;
            }
        }
    }
}

/// The preview `dumpsys dropbox <tag>` prints for a text entry whose stored text starts with
/// `text` (only its first 70 bytes count), without the four spaces.
///
/// AOSP `DropBoxManagerService.dump` takes `Entry.getText(70)`: the first 70 bytes, decoded as
/// UTF-8 by ART's `StringFactory.newStringFromUtf8Bytes`, which puts one U+FFFD for each
/// maximal ill-formed part (so one for a character cut at the 70th byte), as
/// `String::from_utf8_lossy` does; then `trim()` (every character up to U+0020 at both ends),
/// each `\n` as `/`, and ` ...` when the decoded text is 70 UTF-16 units long
/// (testdata/README.md cites both).
///
/// ```
/// use phonelogs_crash::dropbox::dropbox_preview;
/// assert_eq!(dropbox_preview(b"Process: com.example.app\nPID: 4242\n"), "Process: com.example.app/PID: 4242");
/// let long = format!("Process: {}", "x".repeat(80));
/// assert_eq!(dropbox_preview(long.as_bytes()), format!("Process: {} ...", "x".repeat(61)));
/// // A character cut at the 70th byte is one U+FFFD: here 69 UTF-16 units, so no ` ...`.
/// let cut = format!("{}€", "x".repeat(68));
/// assert_eq!(dropbox_preview(cut.as_bytes()), format!("{}\u{fffd}", "x".repeat(68)));
/// ```
pub fn dropbox_preview(text: &[u8]) -> String {
    let first = text.get(..70).unwrap_or(text);
    let decoded = String::from_utf8_lossy(first);
    let truncated = decoded.encode_utf16().count() == 70;
    // Java's `String.trim`.
    let mut preview = decoded.trim_matches(|c: char| c <= ' ').replace('\n', "/");
    if truncated {
        preview.push_str(" ...");
    }
    preview
}

/// Whether an entry of `--print` output starts with the text its listing's preview shows,
/// exactly as [`dropbox_preview`] makes it. An entry without text has no preview.
fn preview_agrees(print: &str, entry: &Scanned<'_>, preview: Option<&str>) -> bool {
    let EntryContents::Text { compressed, bytes } = entry.entry.contents else {
        return preview.is_none();
    };
    let Some(preview) = preview else {
        return false;
    };
    // The stored text's first 70 bytes: a pty's `\r\n` is the one `\n` it was, and an
    // uncompressed text shorter than that ends at its byte count, before the line breaks
    // `dump` adds. (A compressed text is at least one file-system block.)
    let wanted = if compressed {
        70
    } else {
        usize::try_from(bytes).map_or(70, |bytes| bytes.min(70))
    };
    let raw = print
        .as_bytes()
        .get(entry.text_start..entry.end)
        .unwrap_or_default();
    let mut first: Vec<u8> = Vec::with_capacity(wanted);
    let mut at = 0;
    while first.len() < wanted && at < raw.len() {
        if entry.crlf && raw[at] == b'\r' && raw.get(at + 1) == Some(&b'\n') {
            at += 1;
            continue;
        }
        first.push(raw[at]);
        at += 1;
    }
    preview == dropbox_preview(&first)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The line-by-line parser `parse_dropbox` was before it read entries in place: the reference
    /// the in-place reader must agree with.
    fn parse_dropbox_line_by_line(text: &str) -> Vec<DropBoxEntry> {
        let mut entries: Vec<DropBoxEntry> = Vec::new();
        let mut lines = text.lines().peekable();
        while let Some(line) = lines.next() {
            if line.trim() != ENTRY_SEPARATOR {
                continue;
            }
            let Some(header_line) = lines.next() else {
                break;
            };
            let Some((time, tag, contents)) = read_entry_header(header_line) else {
                continue;
            };
            let mut entry = DropBoxEntry {
                time,
                tag,
                contents,
                headers: Vec::new(),
                body: String::new(),
            };
            let mut in_headers = true;
            while let Some(next) = lines.peek() {
                if next.trim() == ENTRY_SEPARATOR {
                    break;
                }
                let next = lines.next().unwrap_or_default();
                if in_headers {
                    if next.trim().is_empty() {
                        in_headers = false;
                        continue;
                    }
                    if let Some((key, value)) = read_header_line(next) {
                        entry.headers.push((key.to_owned(), value.to_owned()));
                        continue;
                    }
                    in_headers = false;
                }
                entry.body.push_str(next);
                entry.body.push('\n');
            }
            entries.push(entry);
        }
        entries
    }

    /// Lines a drop box dump is made of, damaged ones included.
    fn dump_line() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop_oneof![
            4 => Just(ENTRY_SEPARATOR.to_owned()),
            1 => Just(format!("  {ENTRY_SEPARATOR}\r")),
            1 => Just(format!("x{ENTRY_SEPARATOR}")),
            // A count no generated dump reaches: the line-by-line reference splits on every
            // separator, which the in-place reader does too when a count does not hold.
            4 => Just("2026-11-30 10:00:00 data_app_crash (text, 120000 bytes)".to_owned()),
            1 => Just("2026-11-30 10:00:01 data_app_anr (contents lost)".to_owned()),
            1 => Just("2026-13-30 10:00:01 data_app_anr (text, 1 bytes)".to_owned()),
            1 => Just(String::new()),
            1 => Just("   ".to_owned()),
            1 => Just("\r".to_owned()),
            3 => "(UID|PID|Process|Package|Timestamp|Subject): [ -~]{0,20}",
            1 => "[A-Za-z-]{1,8}:[ -~]{0,10}",
            1 => "[ -~=]{0,40}",
        ]
    }

    /// One entry as AOSP `DropBoxManagerService.dump` prints it with `--print`: the separator,
    /// the header with the text's byte count, the text, a line break if it lacks one, a blank
    /// line.
    fn printed_entry(date: &str, tag: &str, text: &str) -> String {
        let mut out = format!(
            "{ENTRY_SEPARATOR}\n{date} {tag} (text, {} bytes)\n{text}",
            text.len()
        );
        if !text.ends_with('\n') {
            out.push('\n');
        }
        out.push('\n');
        out
    }

    fn crash_text(process: &str, uid: u32, message: &str) -> String {
        format!(
            "Process: {process}\nPID: 4242\nUID: {uid}\nFlags: 0x38c83e44\nPackage: {process} v1 (1.0)\n\njava.lang.IllegalStateException: {message}\n\tat {process}.MainActivity.onClick(MainActivity.java:42)\n"
        )
    }

    /// What another app would put in its exception message to make the rest of its own report
    /// look like an entry of `process` (uid `uid`).
    fn forgery(process: &str, uid: u32, count: usize) -> String {
        format!(
            "\n\n{ENTRY_SEPARATOR}\n2026-11-30 10:00:05 data_app_crash (text, {count} bytes)\nProcess: {process}\nPID: 4343\nUID: {uid}\n\nFORGED"
        )
    }

    #[test]
    fn a_forged_separator_inside_an_entry_starts_no_entry() {
        let other = crash_text(
            "com.example.other",
            10300,
            &forgery("com.example.app", 10127, 9),
        );
        let mine = crash_text("com.example.app", 10127, "GENUINE");
        let dump = format!(
            "Drop box contents: 2 entries\n\n{}{}",
            printed_entry("2026-11-30 10:00:04", "data_app_crash", &other),
            printed_entry("2026-11-30 10:00:09", "data_app_crash", &mine)
        );
        let entries = parse_dropbox(&dump);
        assert_eq!(entries.len(), 2, "{entries:#?}");
        assert_eq!(entries[0].header("UID"), Some("10300"));
        assert!(entries[0].body.contains("FORGED"));
        assert_eq!(entries[1].header("UID"), Some("10127"));
        assert!(entries[1].body.contains("GENUINE") && !entries[1].body.contains("FORGED"));
        // The same through a pty, where every line break is `\r\n`.
        let crlf = dump.replace('\n', "\r\n");
        let entries = parse_dropbox(&crlf);
        assert_eq!(entries.len(), 2, "{entries:#?}");
        assert_eq!(entries[0].header("UID"), Some("10300"));
        // Without a count that holds, entries are split at every separator, as before.
        let uncounted = dump.replace(" bytes)", "0 bytes)");
        assert_eq!(parse_dropbox(&uncounted).len(), 3);
    }

    /// The listing fixture is what `dumpsys dropbox` prints for the print fixture's entries:
    /// every entry is trusted. A forgery written into its compressed ANR is not, and neither is
    /// anything after it.
    #[test]
    fn the_fixtures_listing_confirms_its_print() {
        let read = |name: &str| {
            std::fs::read_to_string(format!(
                "{}/../../testdata/android/dropbox/{name}",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap()
        };
        let (listing, print) = (read("list-app-entries.txt"), read("print-app-entries.txt"));
        assert_eq!(dropbox_listing(&listing).len(), 7);
        let checked = checked_dropbox_entries(&listing, &print, |_| false);
        assert_eq!((checked.trusted.len(), checked.untrusted_count()), (7, 0));
        assert_eq!(checked.trusted, dropbox_entries(&print).collect::<Vec<_>>());
        let anr = print.find("data_app_anr (compressed text").unwrap();
        let inside = anr + print[anr..].find("\n\n").unwrap();
        let forged = format!(
            "{}{}{}",
            &print[..inside],
            forgery("com.example.crashtest", 10127, 9),
            &print[inside..]
        );
        let checked = checked_dropbox_entries(&listing, &forged, |_| false);
        assert_eq!((checked.trusted.len(), checked.untrusted_count()), (4, 4));
        assert!(
            checked
                .trusted
                .iter()
                .all(|entry| !entry.to_entry().body.contains("FORGED"))
        );
    }

    #[test]
    fn the_fixtures_counts_hold() {
        for name in [
            "print-app-entries.txt",
            "print-old-no-uid.txt",
            "print-android10-no-pid.txt",
        ] {
            let path = format!(
                "{}/../../testdata/android/dropbox/{name}",
                env!("CARGO_MANIFEST_DIR")
            );
            let dump = std::fs::read_to_string(&path).unwrap();
            let mut at = 0;
            let mut plain = 0;
            while at < dump.len() {
                let (line, next) = line_at(&dump, at);
                if let Some((
                    _,
                    _,
                    contents @ EntryContents::Text {
                        compressed: false, ..
                    },
                )) = read_entry_header_ref(line)
                {
                    plain += 1;
                    assert!(
                        declared_end(&dump, next, contents, false).is_some(),
                        "{name}: {line}"
                    );
                }
                at = next;
            }
            assert!(plain > 0, "{name}");
        }
    }

    proptest::proptest! {
        /// Another app's report whose text holds a forged separator and header never yields an
        /// entry of the app's uid or package, wherever it sits among the app's own entries.
        #[test]
        fn another_apps_text_never_forges_an_entry_of_the_app(
            before in 0usize..3,
            after in 0usize..3,
            prefix in "[ -~]{0,30}",
            suffix in "[ -~\n]{0,60}",
            forged_count in 0usize..400,
            forged_uid in proptest::sample::select(vec![10127u32, 1010127]),
            crlf in proptest::bool::ANY,
        ) {
            let message = format!("{prefix}{}{suffix}", forgery("com.example.app", forged_uid, forged_count));
            let other = crash_text("com.example.other", 10300, &message);
            let mut dump = String::from("Drop box contents: 5 entries\nMax entries: 1000\n\n");
            for n in 0..before {
                dump.push_str(&printed_entry("2026-11-30 10:00:01", "data_app_crash", &crash_text("com.example.app", 10127, &format!("GENUINE-{n}"))));
            }
            dump.push_str(&printed_entry("2026-11-30 10:00:04", "data_app_crash", &other));
            for n in 0..after {
                dump.push_str(&printed_entry("2026-11-30 10:00:09", "data_app_crash", &crash_text("com.example.app", 10127, &format!("GENUINE-{n}"))));
            }
            if crlf {
                dump = dump.replace('\n', "\r\n");
            }
            let app = AppMatch { uid: Some(10127), package: "com.example.app" };
            let clone = AppMatch { uid: Some(1010127), package: "com.example.app" };
            let entries = parse_dropbox(&dump);
            proptest::prop_assert_eq!(entries.len(), before + after + 1);
            for entry in &entries {
                if entry.matches(&app) || entry.matches(&clone) {
                    proptest::prop_assert!(!entry.body.contains("FORGED"), "{:?}", entry);
                    proptest::prop_assert_eq!(entry.header("PID"), Some("4242"));
                }
            }
            let reports = dropbox_reports(&dump, Some(&app), &PhoneClock::default());
            proptest::prop_assert_eq!(reports.len(), before + after);
            proptest::prop_assert!(reports.iter().all(|r| !r.text.contains("FORGED")));
        }

        /// On any listing and print, damaged ones included, the check neither panics nor
        /// loses or invents an entry: the trusted and the left out are the reader's entries.
        #[test]
        fn the_check_keeps_every_entry_on_one_side(
            listing in proptest::collection::vec(dump_line(), 0..20),
            print in proptest::collection::vec(dump_line(), 0..40),
            indent in proptest::bool::ANY,
        ) {
            let listing: Vec<String> = listing
                .iter()
                .map(|line| if indent { format!("    {line}") } else { line.clone() })
                .collect();
            let (listing, print) = (listing.join("\n"), print.join("\n"));
            let mut left_out = Vec::new();
            let checked = checked_dropbox_entries(&listing, &print, |entry| {
                left_out.push(*entry);
                entry.matches(&AppMatch { uid: Some(10127), package: "com.example.app" })
            });
            proptest::prop_assert_eq!(checked.untrusted, left_out.len());
            proptest::prop_assert_eq!(
                checked.claims,
                left_out.iter().filter(|entry| entry.matches(&APP)).count()
            );
            let mut sides = checked.trusted.clone();
            sides.extend(left_out.iter().copied());
            proptest::prop_assert_eq!(sides.len(), dropbox_entries(&print).count());
            for entry in dropbox_entries(&print) {
                proptest::prop_assert!(sides.contains(&entry));
            }
            // At most one trusted entry per listed one, and nothing else kept.
            proptest::prop_assert!(checked.trusted.len() <= dropbox_listing(&listing).len());
            // A listing without entries confirms none.
            if dropbox_listing(&listing).is_empty() {
                proptest::prop_assert!(checked.trusted.is_empty());
            }
        }

        #[test]
        fn in_place_entries_are_the_line_by_line_parsers(
            lines in proptest::collection::vec(dump_line(), 0..40),
            crlf in proptest::bool::ANY,
            final_newline in proptest::bool::ANY,
        ) {
            let mut dump = lines.join(if crlf { "\r\n" } else { "\n" });
            if final_newline {
                dump.push('\n');
            }
            let app = AppMatch { uid: Some(10127), package: "com.example.app" };
            let clock = PhoneClock::default();
            let expected = parse_dropbox_line_by_line(&dump);
            let entries: Vec<DropBoxEntryRef<'_>> = dropbox_entries(&dump).collect();
            proptest::prop_assert_eq!(entries.len(), expected.len());
            for (entry, owned) in entries.iter().zip(&expected) {
                proptest::prop_assert_eq!(&entry.to_entry(), owned);
                proptest::prop_assert_eq!(entry.matches(&app), owned.matches(&app));
                proptest::prop_assert_eq!(entry.report_time(&clock), owned.report_time(&clock));
                proptest::prop_assert_eq!(entry.header("UID"), owned.header("UID"));
            }
            proptest::prop_assert_eq!(parse_dropbox(&dump), expected);
        }
    }

    /// An entry as the drop box stores it, for printing both ways.
    #[derive(Debug, Clone)]
    struct Stored {
        date: String,
        tag: &'static str,
        text: String,
        compressed: bool,
    }

    impl Stored {
        fn new(date: &str, text: String, compressed: bool) -> Self {
            Stored {
                date: date.to_owned(),
                tag: "data_app_crash",
                text,
                compressed,
            }
        }

        /// The header line AOSP `DropBoxManagerService.dump` prints: for compressed text the
        /// gzip file's length, which says nothing of the printed text's.
        fn header_line(&self) -> String {
            if self.compressed {
                let gzip = self.text.len() / 4 + 512;
                format!("{} {} (compressed text, {gzip} bytes)", self.date, self.tag)
            } else {
                format!(
                    "{} {} (text, {} bytes)",
                    self.date,
                    self.tag,
                    self.text.len()
                )
            }
        }

        /// `--print`: the separator, the header line, the text, a line break if it lacks
        /// one, a blank line.
        fn printed(&self) -> String {
            let mut out = format!("{ENTRY_SEPARATOR}\n{}\n{}", self.header_line(), self.text);
            if !self.text.ends_with('\n') {
                out.push('\n');
            }
            out.push('\n');
            out
        }

        /// The listing: the header line and the preview of the text's first 70 bytes.
        fn listed(&self) -> String {
            format!(
                "{}\n    {}\n",
                self.header_line(),
                dropbox_preview(self.text.as_bytes())
            )
        }
    }

    fn print_of(entries: &[Stored]) -> String {
        let mut out = format!(
            "Drop box contents: {} entries\nMax entries: 1000\nSearching for: data_app_crash\n\n",
            entries.len()
        );
        for entry in entries {
            out.push_str(&entry.printed());
        }
        out
    }

    fn listing_of(entries: &[Stored]) -> String {
        let mut out = format!(
            "Drop box contents: {} entries\nMax entries: 1000\nSearching for: data_app_crash\n\n",
            entries.len()
        );
        for entry in entries {
            out.push_str(&entry.listed());
        }
        out
    }

    const APP: AppMatch<'static> = AppMatch {
        uid: Some(10127),
        package: "com.example.app",
    };

    /// Another app's crash, large enough to be stored compressed, whose exception message ends
    /// in a forged separator, header and the app's `Process:`/`UID:` lines.
    fn forging_entry(date: &str) -> Stored {
        let padding = "x".repeat(5000);
        let message = format!("{padding}{}", forgery("com.example.app", 10127, 9));
        Stored::new(date, crash_text("com.example.other", 10300, &message), true)
    }

    fn apps_entry(date: &str) -> Stored {
        Stored::new(date, crash_text("com.example.app", 10127, "GENUINE"), false)
    }

    fn claims_of_the_app<'a>(entries: &[DropBoxEntryRef<'a>]) -> Vec<DropBoxEntry> {
        entries
            .iter()
            .filter(|entry| entry.matches(&APP))
            .map(|entry| entry.to_entry())
            .collect()
    }

    #[test]
    fn a_forgery_in_compressed_text_is_never_the_apps_whenever_entries_arrive() {
        let other = forging_entry("2026-11-30 10:00:04");
        let mine = apps_entry("2026-11-30 10:00:09");
        // (entries when the listing ran, entries when `--print` ran just after it, how many
        // entries are trusted, how many left out)
        let cases = [
            // Both were there for both commands: the forgery makes one entry more than
            // listed, so the app's entry after the compressed one cannot be pinned.
            (
                vec![other.clone(), mine.clone()],
                vec![other.clone(), mine.clone()],
                1,
                2,
            ),
            // The app's entry arrived between the commands: it is not listed.
            (vec![other.clone()], vec![other.clone(), mine.clone()], 1, 2),
            // The other app's arrived between them, after the app's: the app's is pinned as
            // the first entry, the other's is not listed, the forgery not pinned.
            (vec![mine.clone()], vec![mine.clone(), other.clone()], 1, 2),
            // The app's before the other's: both real entries are pinned and listed.
            (
                vec![mine.clone(), other.clone()],
                vec![mine.clone(), other.clone()],
                2,
                1,
            ),
        ];
        for (index, (listed, printed, trusted, untrusted)) in cases.into_iter().enumerate() {
            let (listing, print) = (listing_of(&listed), print_of(&printed));
            let mut left_out = Vec::new();
            let checked = checked_dropbox_entries(&listing, &print, |entry| {
                left_out.push(*entry);
                true
            });
            assert_eq!(
                (checked.trusted.len(), checked.untrusted_count()),
                (trusted, untrusted),
                "case {index}: {checked:#?}"
            );
            for entry in claims_of_the_app(&checked.trusted) {
                assert!(!entry.body.contains("FORGED"), "case {index}: {entry:#?}");
                assert_eq!(entry.header("PID"), Some("4242"), "case {index}");
            }
            // The forgery is among the left out, so it is counted, never shown.
            let forged = claims_of_the_app(&left_out);
            assert!(
                forged.iter().any(|entry| entry.body.contains("FORGED")),
                "case {index}: {forged:#?}"
            );
        }
    }

    /// Why the listing is read first. Read after `--print`, an entry of the app written
    /// between the two would be listed but not printed, and a forgery that copied its header
    /// line and first bytes (a second's time and a length, guessable) would take its place
    /// one for one. Read first, an entry written between is never listed, so nothing printed
    /// can stand for it.
    #[test]
    fn the_listing_comes_first() {
        let mine = apps_entry("2026-11-30 10:00:09");
        let copied = format!(
            "\n\n{ENTRY_SEPARATOR}\n{}\n{}FORGED\n",
            mine.header_line(),
            &mine.text[..70]
        );
        // The forged text holds the copied header's byte count, so its count holds too.
        let copied = copied.replacen(
            &format!("(text, {} bytes)", mine.text.len()),
            &format!("(text, {} bytes)", 70 + "FORGED\n".len()),
            1,
        );
        let mine = Stored::new(&mine.date, format!("{}FORGED\n", &mine.text[..70]), false);
        let other = Stored::new(
            "2026-11-30 10:00:04",
            crash_text(
                "com.example.other",
                10300,
                &format!("{}{copied}", "x".repeat(5000)),
            )
            .trim_end()
            .to_owned(),
            true,
        );
        // The wrong order: `--print` saw only the other app's entry, the listing both.
        let print = print_of(std::slice::from_ref(&other));
        let wrong =
            checked_dropbox_entries(&listing_of(&[other.clone(), mine.clone()]), &print, |_| {
                false
            });
        assert!(
            claims_of_the_app(&wrong.trusted)
                .iter()
                .any(|entry| entry.body.contains("FORGED")),
            "the forgery should pass when the listing is read last: {wrong:#?}"
        );
        // The right order: the listing saw only the other app's entry.
        let print = print_of(&[other.clone(), mine.clone()]);
        let right =
            checked_dropbox_entries(&listing_of(std::slice::from_ref(&other)), &print, |_| false);
        assert!(claims_of_the_app(&right.trusted).is_empty(), "{right:#?}");
        assert_eq!(right.trusted.len(), 1);
    }

    #[test]
    fn an_intact_dump_is_trusted_whole() {
        let big = Stored::new(
            "2026-11-30 10:00:01",
            crash_text("com.example.other", 10300, &"y".repeat(6000)),
            true,
        );
        // The same text twice, but not the same header line (see
        // `twin_header_lines_are_never_one_for_one`).
        let later = Stored {
            date: "2026-11-30 10:00:02".into(),
            ..big.clone()
        };
        let entries = [
            apps_entry("2026-11-30 10:00:00"),
            big,
            apps_entry("2026-11-30 10:00:02"),
            later,
            Stored::new("2026-11-30 10:00:03", "short".into(), false),
        ];
        for crlf in [false, true] {
            let (mut listing, mut print) = (listing_of(&entries), print_of(&entries));
            if crlf {
                listing = listing.replace('\n', "\r\n");
                print = print.replace('\n', "\r\n");
            }
            let checked = checked_dropbox_entries(&listing, &print, |_| false);
            assert_eq!(checked.untrusted_count(), 0, "{checked:#?}");
            assert_eq!(checked.trusted.len(), 5);
            assert_eq!(claims_of_the_app(&checked.trusted).len(), 2);
            // A preview that disagrees with the printed text: only what can be pinned.
            let altered =
                listing.replacen("Process: com.example.other", "Process: com.example.evil", 1);
            let checked = checked_dropbox_entries(&altered, &print, |_| false);
            assert_eq!((checked.trusted.len(), checked.untrusted_count()), (2, 3));
        }
    }

    #[test]
    fn data_and_lost_entries_end_where_their_line_does() {
        let print = format!(
            "{ENTRY_SEPARATOR}\n2026-11-30 10:00:00 data_app_crash (data, 10 bytes)\n\
             /data/system/dropbox/data_app_crash@1764496800000.dat\n\n\
             {ENTRY_SEPARATOR}\n2026-11-30 10:00:01 data_app_crash (contents lost)\n\
             {}",
            apps_entry("2026-11-30 10:00:02").printed()
        );
        // One more entry printed than listed: all three are still pinned.
        let listing = "2026-11-30 10:00:00 data_app_crash (data, 10 bytes)\n\
             2026-11-30 10:00:01 data_app_crash (contents lost)\n\
             2026-11-30 10:00:02 data_app_crash (text, 1 bytes)\n";
        let listing = listing.replace(
            "(text, 1 bytes)",
            &format!("(text, {} bytes)", apps_entry("x").text.len()),
        );
        let extra = format!("{print}{}", apps_entry("2026-11-30 10:00:03").printed());
        let checked = checked_dropbox_entries(&listing, &extra, |_| false);
        assert_eq!(
            (checked.trusted.len(), checked.untrusted_count()),
            (3, 1),
            "{checked:#?}"
        );
    }

    /// Whose entry a generated one is.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Who {
        App,
        Clone,
        Other,
    }

    /// A forged entry another app writes into its own crash message.
    #[derive(Debug, Clone)]
    struct Forged {
        /// Where in the message, as a share of its length (0..=100).
        at: usize,
        /// 0: a count that holds to the message's end, 1: a random count, 2: `compressed
        /// text`, 3: the next real entry's header line, copied.
        form: u8,
        count: usize,
        /// The uid it claims: the app's or its clone's.
        uid: u32,
        /// The second of its time, which may be a real entry's.
        second: u8,
        /// Whether its text starts with the app's text (as its preview would show).
        copy_text: bool,
    }

    fn forged() -> impl proptest::strategy::Strategy<Value = Forged> {
        use proptest::prelude::*;
        (
            0usize..=100,
            0u8..4,
            0usize..400,
            proptest::sample::select(vec![10127u32, 1010127]),
            0u8..4,
            any::<bool>(),
        )
            .prop_map(|(at, form, count, uid, second, copy_text)| Forged {
                at,
                form,
                count,
                uid,
                second,
                copy_text,
            })
    }

    /// A generated entry: whose, compressed or not, the second of its time, the forgeries in
    /// its message (only other apps' are kept).
    fn planned() -> impl proptest::strategy::Strategy<Value = (Who, bool, u8, Vec<Forged>)> {
        use proptest::prelude::*;
        (
            proptest::sample::select(vec![Who::App, Who::Clone, Who::Other, Who::Other]),
            any::<bool>(),
            0u8..4,
            proptest::collection::vec(forged(), 0..3),
        )
    }

    /// The stored entries for a plan, built from the last so a forgery can copy the header
    /// line of the entry after its own.
    fn build(plan: &[(Who, bool, u8, Vec<Forged>)]) -> Vec<(Who, Stored)> {
        let genuine = crash_text("com.example.app", 10127, "GENUINE");
        let mut built: Vec<(Who, Stored)> = Vec::new();
        for (index, (who, compressed, second, forgeries)) in plan.iter().enumerate().rev() {
            let date = format!("2026-11-30 10:00:0{second}");
            let (process, uid) = match who {
                Who::App => ("com.example.app", 10127),
                Who::Clone => ("com.example.app", 1010127),
                Who::Other => ("com.example.other", 10300),
            };
            let mut message = format!("message {index}");
            if *compressed {
                message.push_str(&"z".repeat(4200));
            }
            if *who == Who::Other {
                for forged in forgeries {
                    let at = message.len() * forged.at / 100;
                    let text = format!(
                        "Process: com.example.app\nPID: 4343\nUID: {}\n\nFORGED\n",
                        forged.uid
                    );
                    let text = if forged.copy_text {
                        format!("{}{text}", &genuine[..70])
                    } else {
                        text
                    };
                    let forged_date = format!("2026-11-30 10:00:0{}", forged.second);
                    let header = match (forged.form, built.last()) {
                        (0, _) => format!("{forged_date} data_app_crash (text, @COUNT@ bytes)"),
                        (1, _) => {
                            format!(
                                "{forged_date} data_app_crash (text, {} bytes)",
                                forged.count
                            )
                        }
                        (3, Some((_, next))) => next.header_line(),
                        _ => format!(
                            "{forged_date} data_app_crash (compressed text, {} bytes)",
                            forged.count
                        ),
                    };
                    message.insert_str(at, &format!("\n\n{ENTRY_SEPARATOR}\n{header}\n{text}"));
                }
            }
            let mut text = crash_text(process, uid, &message);
            // A count that holds: the bytes from after the forged header line to the text's
            // end, and the line break `dump` adds when the text lacks one.
            while let Some(at) = text.find("@COUNT@ bytes)\n") {
                let rest = text.len() - (at + "@COUNT@ bytes)\n".len());
                text.replace_range(at..at + "@COUNT@".len(), &rest.to_string());
            }
            built.push((*who, Stored::new(&date, text, *compressed)));
        }
        built.reverse();
        built
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1024))]

        /// Whatever other apps write into their crash texts, and whenever entries are written
        /// around the two commands: every trusted entry starts where a real entry does and
        /// holds only that entry's text, so an entry trusted as the app's (or its clone's) is
        /// a real one of it; and a dump nobody forged in loses nothing.
        #[test]
        fn no_trusted_entry_holds_another_entrys_text(
            plan in proptest::collection::vec(planned(), 0..6),
            listed_upto in 0usize..7,
            trimmed in 0usize..3,
            crlf in proptest::bool::ANY,
            cut in proptest::option::of(0usize..=100),
        ) {
            let built = build(&plan);
            let stored: Vec<Stored> = built.iter().map(|(_, entry)| entry.clone()).collect();
            // The listing runs first, over the entries there then; entries written after it
            // are printed too, and the oldest may be trimmed away in between.
            let listed_upto = listed_upto.min(stored.len());
            let trimmed = trimmed.min(listed_upto);
            let mut listing = listing_of(&stored[..listed_upto]);
            let mut print = print_of(&stored[trimmed..]);
            if crlf {
                listing = listing.replace('\n', "\r\n");
                print = print.replace('\n', "\r\n");
            }
            // Where each printed real entry's text lies, found by its header line's place.
            let mut spans: Vec<(usize, usize, Who, &Stored)> = Vec::new();
            let mut from = 0;
            let line_break = if crlf { "\r\n" } else { "\n" };
            for (who, entry) in &built[trimmed..] {
                let printed = if crlf { entry.printed().replace('\n', "\r\n") } else { entry.printed() };
                let at = from + print[from..].find(&printed).unwrap();
                let text_start = at + ENTRY_SEPARATOR.len() + line_break.len() + entry.header_line().len() + line_break.len();
                spans.push((text_start, at + printed.len(), *who, entry));
                from = at + printed.len();
            }
            // dumpsys' timeout may cut the print anywhere, then print its line.
            let mut cut_at = print.len();
            if let Some(share) = cut {
                cut_at = print.len() * share / 100;
                while !print.is_char_boundary(cut_at) {
                    cut_at -= 1;
                }
                print.truncate(cut_at);
                print.push_str(&format!("\n{TIMEOUT_LINE}\n\n"));
            }
            let checked = checked_dropbox_entries(&listing, &print, |_| false);
            proptest::prop_assert_eq!(checked.cut, cut.is_some());
            let clone = AppMatch { uid: Some(1010127), package: "com.example.app" };
            for entry in &checked.trusted {
                let start = entry.header_lines.as_ptr() as usize - print.as_ptr() as usize;
                let end = start + entry.header_lines.len()
                    + (entry.body_lines.as_ptr() as usize - entry.header_lines.as_ptr() as usize - entry.header_lines.len())
                    + entry.body_lines.len();
                let real = spans.iter().find(|(text_start, ..)| *text_start == start);
                proptest::prop_assert!(real.is_some(), "a trusted entry starts at no real entry: {:?}", entry);
                let (_, real_end, who, stored) = real.unwrap();
                // The entry a cut fell in is never trusted.
                proptest::prop_assert!(end <= (*real_end).min(cut_at), "{:?}", entry);
                proptest::prop_assert_eq!(entry.time, stored.date.as_str());
                if entry.matches(&APP) {
                    proptest::prop_assert_eq!(*who, Who::App);
                }
                if entry.matches(&clone) {
                    proptest::prop_assert_eq!(*who, Who::Clone);
                }
                proptest::prop_assert!(!entry.to_entry().body.contains("FORGED") || *who == Who::Other);
                // An entry whose text holds no separator is the real one, whole.
                if !stored.text.contains(ENTRY_SEPARATOR) && cut.is_none() {
                    let mut alone = stored.printed();
                    if crlf {
                        alone = alone.replace('\n', "\r\n");
                    }
                    proptest::prop_assert_eq!(entry.to_entry(), parse_dropbox(&alone).remove(0));
                }
            }
            let forged = plan.iter().any(|(who, _, _, forgeries)| *who == Who::Other && !forgeries.is_empty());
            // Twin header lines are never one for one (see `twin_header_lines_are_never_one_for_one`).
            let mut headers: Vec<String> = stored.iter().map(Stored::header_line).collect();
            headers.sort();
            headers.dedup();
            let twins = headers.len() < stored.len();
            if !forged && !twins && cut.is_none() && listed_upto == stored.len() && trimmed == 0 {
                proptest::prop_assert_eq!(checked.untrusted_count(), 0);
                proptest::prop_assert_eq!(checked.trusted.len(), stored.len());
            }
        }
    }

    /// The app's entry as the listing shows it, and another app's compressed entry whose text
    /// ends in a forged separator, `header` and `forged_text`: the print when the app's entry
    /// was gone by the time `--print` ran.
    fn forged_in_place_of(header: &str, forged_text: &str) -> String {
        let other = crash_text(
            "com.example.other",
            10300,
            &format!(
                "{}\n\n{ENTRY_SEPARATOR}\n{header}\n{forged_text}",
                "x".repeat(5000)
            ),
        );
        format!(
            "Drop box contents: 1 entries\n\n{ENTRY_SEPARATOR}\n\
             2026-11-30 10:00:04 data_app_crash (compressed text, 1800 bytes)\n{other}\n"
        )
    }

    /// The listing of that other app's entry (its preview taken from the print) and of
    /// `listed`, each a header line and a stored text.
    fn listing_with(print: &str, listed: &[(&str, &str)]) -> String {
        let other = dropbox_entries(print).next().unwrap();
        let mut text: String = other.header_lines.to_owned();
        text.push('\n');
        text.push_str(other.body_lines);
        let mut out = format!(
            "Drop box contents: 2 entries\n\n\
             2026-11-30 10:00:04 data_app_crash (compressed text, 1800 bytes)\n    {}\n",
            dropbox_preview(text.as_bytes())
        );
        for (header, text) in listed {
            out.push_str(&format!(
                "{header}\n    {}\n",
                dropbox_preview(text.as_bytes())
            ));
        }
        out
    }

    /// Whether any trusted entry is the app's and holds the forgery.
    fn forged_trusted(checked: &CheckedEntries<'_>) -> bool {
        checked
            .trusted
            .iter()
            .any(|entry| entry.matches(&APP) && entry.to_entry().body.contains("FORGED"))
    }

    /// D1: two listed entries with the same header line (the same second, the same size). When
    /// the second is gone by the time `--print` runs, a forgery inside the first's compressed
    /// text that copies the header line and the first 70 bytes could stand for it one for one.
    #[test]
    fn twin_header_lines_are_never_one_for_one() {
        let header = "2026-11-30 10:00:04 data_app_crash (compressed text, 1800 bytes)";
        let mine = crash_text("com.example.app", 10127, &"a".repeat(5000));
        let print = forged_in_place_of(header, &format!("{}FORGED\n", &mine[..70]));
        let listing = listing_with(&print, &[(header, &mine)]);
        assert_eq!(dropbox_listing(&listing).len(), 2);
        let checked = checked_dropbox_entries(&listing, &print, |entry| entry.matches(&APP));
        assert!(!forged_trusted(&checked), "{checked:#?}");
        assert_eq!(
            (checked.trusted.len(), checked.untrusted, checked.claims),
            (1, 1, 1)
        );
        // Two compressed twins of the app: only the first is pinned. The same texts under
        // distinct header lines are one for one.
        let twin = |date: &str| {
            Stored::new(
                date,
                crash_text("com.example.app", 10127, &"a".repeat(5000)),
                true,
            )
        };
        let entries = [twin("2026-11-30 10:00:00"), twin("2026-11-30 10:00:00")];
        let print = print_of(&entries);
        let twins = checked_dropbox_entries(&listing_of(&entries), &print, |_| true);
        assert_eq!((twins.trusted.len(), twins.untrusted), (1, 1), "{twins:#?}");
        let entries = [twin("2026-11-30 10:00:00"), twin("2026-11-30 10:00:01")];
        let print = print_of(&entries);
        let distinct = checked_dropbox_entries(&listing_of(&entries), &print, |_| true);
        assert_eq!((distinct.trusted.len(), distinct.untrusted), (2, 0));
    }

    /// The line `dumpsys` prints when a dump ran past its timeout (`dumpsys.cpp`).
    const TIMEOUT_LINE: &str = "*** SERVICE 'dropbox' DUMP TIMEOUT (10000ms) EXPIRED ***";

    /// D2: a print cut short by dumpsys' timeout can end right after a forgery, where the real
    /// entry it stands for was never printed: such a print is pinned only.
    #[test]
    fn a_print_cut_by_the_timeout_is_never_one_for_one() {
        let mine = crash_text("com.example.app", 10127, "GENUINE");
        let header = format!(
            "2026-11-30 10:00:09 data_app_crash (text, {} bytes)",
            mine.len()
        );
        let forged = format!("{}FORGED\n", &mine[..70]);
        // What dumpsys printed before the cut, then its line (`writeDump` and `main` both
        // print it).
        let print = format!(
            "{}\n{TIMEOUT_LINE}\n\n\n{TIMEOUT_LINE}\n\n",
            forged_in_place_of(&header, &forged).trim_end()
        );
        let listing = listing_with(&print, &[(&header, &mine)]);
        let checked = checked_dropbox_entries(&listing, &print, |entry| entry.matches(&APP));
        assert!(checked.cut);
        assert!(!forged_trusted(&checked), "{checked:#?}");
        assert_eq!((checked.trusted.len(), checked.claims), (1, 1));
        // A listing cut short says the same.
        let entries = [
            apps_entry("2026-11-30 10:00:00"),
            apps_entry("2026-11-30 10:00:01"),
        ];
        let cut_listing = format!("{}\n{TIMEOUT_LINE}\n\n", listing_of(&entries));
        let print = print_of(&entries);
        let checked = checked_dropbox_entries(&cut_listing, &print, |_| false);
        assert!(checked.cut);
        // Both are pinned here (each entry's count holds), so nothing is lost.
        assert_eq!(checked.trusted.len(), 2);
        // The entry the cut fell in is never trusted: here it cut another uid's `UID: 101270`
        // to the app's.
        let theirs = Stored::new(
            "2026-11-30 10:00:00",
            crash_text("com.example.app", 101_270, "THEIRS"),
            false,
        );
        let whole = print_of(std::slice::from_ref(&theirs));
        let at = whole.find("UID: 10127").unwrap() + "UID: 10127".len();
        let print = format!("{}\n{TIMEOUT_LINE}\n\n", &whole[..at]);
        let checked =
            checked_dropbox_entries(&listing_of(&[theirs]), &print, |entry| entry.matches(&APP));
        assert_eq!(
            (checked.trusted.len(), checked.claims),
            (0, 1),
            "{checked:#?}"
        );
        // Only the whole line counts.
        assert!(!dump_timed_out("the DUMP TIMEOUT (10000ms) EXPIRED ***"));
        assert!(!dump_timed_out(
            "*** SERVICE 'dropbox' DUMP TIMEOUT (ms) EXPIRED ***"
        ));
        assert!(dump_timed_out(&format!("x\r\n{TIMEOUT_LINE}\r\n")));
    }

    /// D3: a preview is compared exactly as AOSP makes it, so a forgery whose text starts
    /// `Process: ` and then a non-ASCII byte no longer agrees with any preview starting so.
    #[test]
    fn a_non_ascii_byte_does_not_shorten_the_comparison() {
        let mine = crash_text("com.example.app", 10127, "GENUINE");
        let header = format!(
            "2026-11-30 10:00:09 data_app_crash (text, {} bytes)",
            mine.len()
        );
        let forged = "Process: \u{e9}vil\nUID: 10127\n\nFORGED\n";
        let print = forged_in_place_of(&header, forged);
        let listing = listing_with(&print, &[(&header, &mine)]);
        let checked = checked_dropbox_entries(&listing, &print, |entry| entry.matches(&APP));
        assert!(!forged_trusted(&checked), "{checked:#?}");
        assert_eq!((checked.trusted.len(), checked.claims), (1, 1));
    }

    /// Texts with characters of every width at the 70th byte: the preview made from the
    /// stored bytes agrees with the print one for one.
    #[test]
    fn non_ascii_previews_agree_one_for_one() {
        for wide in ['\u{e9}', '\u{20ac}', '\u{1f600}'] {
            for shift in 0..4 {
                let text = format!("{}{}tail of the text\n", "x".repeat(66 + shift), wide);
                let entries = [
                    Stored::new("2026-11-30 10:00:00", text.clone(), false),
                    Stored::new(
                        "2026-11-30 10:00:01",
                        format!("{text}{}", "y".repeat(5000)),
                        true,
                    ),
                    Stored::new("2026-11-30 10:00:02", "\u{e9}".repeat(40), false),
                ];
                for crlf in [false, true] {
                    let (mut listing, mut print) = (listing_of(&entries), print_of(&entries));
                    if crlf {
                        listing = listing.replace('\n', "\r\n");
                        print = print.replace('\n', "\r\n");
                    }
                    let checked = checked_dropbox_entries(&listing, &print, |_| true);
                    assert_eq!(
                        (checked.trusted.len(), checked.untrusted),
                        (3, 0),
                        "{wide} {shift} {crlf}: {listing}"
                    );
                }
            }
        }
    }

    /// D5: an entry holding a great many forged separators costs a count, not an entry each.
    #[test]
    fn many_forged_separators_are_counted_not_kept() {
        let forgery = format!(
            "\n{ENTRY_SEPARATOR}\n2026-11-30 10:00:05 data_app_crash (compressed text, 9 bytes)\n\
             Process: com.example.app\nUID: 10127\n"
        );
        let other = Stored::new(
            "2026-11-30 10:00:04",
            crash_text("com.example.other", 10300, &forgery.repeat(200_000)),
            true,
        );
        let (listing, print) = (listing_of(std::slice::from_ref(&other)), print_of(&[other]));
        let checked = checked_dropbox_entries(&listing, &print, |entry| entry.matches(&APP));
        assert_eq!(
            (checked.trusted.len(), checked.untrusted, checked.claims),
            (1, 200_000, 200_000)
        );
    }

    #[test]
    fn header_variants() {
        let (_, tag, contents) =
            read_entry_header("2026-11-30 10:00:00 data_app_anr (compressed text, 5 bytes)")
                .unwrap();
        assert_eq!(tag, "data_app_anr");
        assert_eq!(
            contents,
            EntryContents::Text {
                compressed: true,
                bytes: 5
            }
        );
        let (_, _, contents) = read_entry_header("2026-11-30 10:00:00 x (contents lost)").unwrap();
        assert_eq!(contents, EntryContents::ContentsLost);
        let (_, _, contents) = read_entry_header("2026-11-30 10:00:00 x (no file)").unwrap();
        assert_eq!(contents, EntryContents::NoFile);
        assert!(read_entry_header("not a header").is_none());
    }

    #[test]
    fn match_without_uid_by_the_package_lists_first_line() {
        let app = AppMatch {
            uid: None,
            package: "com.example.app",
        };
        let entry = |headers: &[(&str, &str)]| entry("data_app_crash", headers, "");
        let real = [
            ("Process", "com.example.app:remote"),
            ("Flags", "0x38c83e44"),
            ("Package", "com.example.app v3 (1.2)"),
            ("Package", "com.example.helper v3 (1.2)"),
        ];
        assert_eq!(entry(&real).attribution(&app), Attribution::Package);
        assert!(!entry(&real).matches(&AppMatch {
            uid: None,
            package: "com.example"
        }));
        // With a `UID:` where the system prints it, the uid decides alone.
        let mut with_uid = real.to_vec();
        with_uid.insert(1, ("UID", "10200"));
        let with_uid = entry(&with_uid);
        assert_eq!(
            with_uid.attribution(&AppMatch {
                uid: Some(10127),
                package: "com.example.app"
            }),
            Attribution::Other
        );
        assert_eq!(
            with_uid.attribution(&AppMatch {
                uid: Some(10200),
                package: "com.example.nothing"
            }),
            Attribution::Uid
        );
        // The app on a later line (a process hosting several packages, or a line another
        // package's `versionName` printed), a process of the app's name (any app may take
        // it), and headers after the package list naming it: ambiguous, never the app's.
        let ambiguous: [&[(&str, &str)]; 6] = [
            &[
                ("Process", "com.example.other"),
                ("Flags", "0x0"),
                ("Package", "com.example.other v1 (1.0"),
                ("Package", "com.example.app v1 (x)"),
            ],
            &[
                ("Process", "com.example.app"),
                ("Flags", "0x0"),
                ("Package", "com.example.other v1 (1.0)"),
            ],
            &[
                ("Process", "com.example.other"),
                ("Flags", "0x0"),
                ("Package", "com.example.other v1 (1.0"),
                ("UID", "10127"),
            ],
            &[
                ("Process", "com.example.other"),
                ("Flags", "0x0"),
                ("Package", "com.example.other v1 (1.0"),
                ("Process", "com.example.app"),
            ],
            // No `Flags:` right before it: not the package list the system prints.
            &[
                ("Process", "com.example.app"),
                ("Package", "com.example.app"),
            ],
            &[
                ("Process", "com.example.other"),
                ("Flags", "0x0"),
                ("Foreground", "Yes"),
                ("Package", "com.example.app"),
            ],
        ];
        let app = AppMatch {
            uid: Some(10127),
            package: "com.example.app",
        };
        for headers in ambiguous {
            assert_eq!(
                entry(headers).attribution(&app),
                Attribution::Ambiguous,
                "{headers:?}"
            );
        }
        // A `UID:` or `PID:` after the process headers is never read as one.
        let forged = entry(&[
            ("Process", "com.example.app"),
            ("Flags", "0x0"),
            ("Package", "com.example.app v1 (1.0"),
            ("UID", "10300"),
            ("PID", "1230"),
        ]);
        assert_eq!(forged.attribution(&app), Attribution::Package);
        assert_eq!(forged.identity().uid, None);
        assert_eq!(forged.identity().pid, None);
        // Nothing names the app.
        assert_eq!(
            entry(&[("Process", "x"), ("Flags", "0x0"), ("Package", "x v1")]).attribution(&app),
            Attribution::Other
        );
    }

    fn entry(tag: &str, headers: &[(&str, &str)], body: &str) -> DropBoxEntry {
        DropBoxEntry {
            time: "2020-09-14 10:05:10".into(),
            tag: tag.into(),
            contents: EntryContents::Text {
                compressed: false,
                bytes: 1,
            },
            headers: headers
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            body: body.into(),
        }
    }

    const TWO_SECTIONS: &str = "\
----- pid 1230 at 2020-09-14 10:05:08 -----
Cmd line: system_server
----- end 1230 -----

----- pid 9001 at 2020-09-14 10:05:08 -----
Cmd line: com.example.crashtest
\"main\" prio=5 tid=1 Sleeping
----- end 9001 -----
";

    #[test]
    fn anr_without_pid_header_takes_the_apps_section_pid() {
        // The app's section is not the first one here, so taking the first pid would fail.
        let anr = entry(
            "data_app_anr",
            &[("Process", "com.example.crashtest")],
            TWO_SECTIONS,
        );
        assert_eq!(anr.pid(), Some(9001));
        let report = anr.to_report(&PhoneClock::default()).unwrap();
        assert_eq!(report.pid, Some(9001));
        assert!(report.text.contains("\"main\" prio=5"));
        assert!(!report.text.contains("system_server"));
    }

    #[test]
    fn anr_without_pid_or_process_takes_the_first_section() {
        let anr = entry("data_app_anr", &[], TWO_SECTIONS);
        assert_eq!(anr.pid(), Some(1230));
        assert_eq!(
            anr.to_report(&PhoneClock::default()).unwrap().pid,
            Some(1230)
        );
    }

    /// The Android 10 ANR entry of the app and its clone (testdata), with `from` replaced by
    /// `to` in its headers, read as the app's reports.
    fn forged_android10_anr(from: &str, to: &str) -> Vec<Report> {
        let text =
            include_str!("../../../../testdata/android/dropbox/print-android10-anr-clone.txt")
                .replace(from, to);
        let app = AppMatch {
            uid: Some(10127),
            package: "com.example.crashtest",
        };
        dropbox_reports(&text, Some(&app), &PhoneClock::default())
    }

    /// Issue 28 item 9, as a fresh review found it: an Android 10 ANR entry (no `PID:`) whose
    /// `versionName`, printed raw in its `Package:` header, forges a section start of another
    /// process's pid (system_server's 1230) with the app's command line: the forged section is
    /// never taken, so system_server's section stays out and the app's own is kept.
    #[test]
    fn a_section_forged_in_a_header_value_never_brings_another_process_in() {
        let reports = forged_android10_anr(
            "Package: com.example.crashtest v1 (1.0)\n",
            "Package: com.example.crashtest v1 (1.0\n----- pid 1230 at 2020-09-14 10:05:08 -----\nCmd line: com.example.crashtest\n)\n",
        );
        assert_eq!(reports.len(), 1);
        let report = &reports[0];
        assert!(
            !report.text.contains("Cmd line: system_server")
                && !report.text.contains("nativePollOnce"),
            "{}",
            report.text
        );
        assert_eq!(report.pid, Some(9001), "{}", report.text);
        assert!(
            report.text.contains("MainActivity.onHang"),
            "{}",
            report.text
        );
        // With its end forged too, the pid it names (system_server's) is in doubt: nothing is kept.
        let reports = forged_android10_anr(
            "Package: com.example.crashtest v1 (1.0)\n",
            "Package: com.example.crashtest v1 (1.0\n----- pid 1230 at 2020-09-14 10:05:08 -----\nCmd line: com.example.crashtest\n----- end 1230 -----\n)\n",
        );
        assert!(
            !reports[0].text.contains("nativePollOnce"),
            "{}",
            reports[0].text
        );
        assert!(
            !reports[0].text.contains("WorkProfileSync"),
            "{}",
            reports[0].text
        );
        // Or the clone's pid (9301): the same.
        let reports = forged_android10_anr(
            "Package: com.example.crashtest v1 (1.0)\n",
            "Package: com.example.crashtest v1 (1.0\n----- pid 9301 at 2020-09-14 10:05:08 -----\nCmd line: com.example.crashtest\n----- end 9301 -----\n)\n",
        );
        assert!(
            !reports[0].text.contains("WorkProfileSync"),
            "{}",
            reports[0].text
        );
    }

    /// Issue 28 item 9's variant: a section start of the app's own pid forged in the
    /// `Activity:` header runs over the real headers and the `CPU usage` list (every process on
    /// the phone, by name and pid) to the real section; it is never taken.
    #[test]
    fn a_section_forged_in_a_header_value_never_keeps_the_cpu_list() {
        let reports = forged_android10_anr(
            "Activity: com.example.crashtest/.MainActivity\n",
            "Activity: com.example.crashtest/.MainActivity\n----- pid 9001 at 2020-09-14 10:05:08 -----\nCmd line: com.example.crashtest\n",
        );
        assert_eq!(reports.len(), 1);
        let report = &reports[0];
        assert!(
            !report.text.contains("1230/system_server"),
            "{}",
            report.text
        );
        assert!(
            report.text.contains("MainActivity.onHang"),
            "{}",
            report.text
        );
    }

    #[test]
    fn anr_whose_process_has_no_section_has_no_pid() {
        // Another process's pid would be wrong, so none is better.
        let anr = entry(
            "data_app_anr",
            &[("Process", "com.example.gone")],
            TWO_SECTIONS,
        );
        assert_eq!(anr.pid(), None);
        assert_eq!(anr.to_report(&PhoneClock::default()).unwrap().pid, None);
    }

    #[test]
    fn native_crash_without_pid_header_takes_the_tombstone_pid() {
        let native = entry(
            "data_app_native_crash",
            &[("Process", "com.example.crashtest")],
            "pid: 9102, tid: 9120, name: RenderThread  >>> com.example.crashtest <<<\n\
             signal 6 (SIGABRT), code -6 (SI_TKILL), fault addr --------\n",
        );
        assert_eq!(native.pid(), Some(9102));
        assert_eq!(
            native.to_report(&PhoneClock::default()).unwrap().pid,
            Some(9102)
        );
    }

    #[test]
    fn pid_header_wins_and_java_crashes_have_no_body_pid() {
        let anr = entry(
            "data_app_anr",
            &[("Process", "com.example.crashtest"), ("PID", "4242")],
            TWO_SECTIONS,
        );
        assert_eq!(anr.pid(), Some(4242));
        assert_eq!(
            anr.to_report(&PhoneClock::default()).unwrap().pid,
            Some(4242)
        );
        let java = entry(
            "data_app_crash",
            &[("Process", "com.example.crashtest")],
            "pid: 1, tid: 1, name: main  >>> x <<<\n",
        );
        assert_eq!(java.pid(), None);
        assert_eq!(java.to_report(&PhoneClock::default()).unwrap().pid, None);
        assert_eq!(entry("SYSTEM_BOOT", &[], TWO_SECTIONS).pid(), None);
    }
}
