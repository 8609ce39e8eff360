//! `dumpsys dropbox --print`: entries, their `Key: value` headers and bodies, matching an entry
//! to an app, and turning `data_app_crash`, `data_app_native_crash` and `data_app_anr` entries
//! into reports.

use serde::{Deserialize, Serialize};

use crate::anr::{AnrCut, AnrTarget, cut_anr};
use crate::report::{PhoneClock, Report, ReportKind, first_line};

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

/// How to recognise an app's entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppMatch<'a> {
    /// The app's uid. An entry with a `UID:` header matches by it alone.
    pub uid: Option<u32>,
    /// The package name. Without a `UID:` header an entry matches when its `Process:` is the
    /// package (or one of its `package:name` processes) or its `Package:` names it.
    pub package: &'a str,
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
    pub fn report_kind(&self) -> Option<ReportKind> {
        let tag = self.tag.as_str();
        if tag.ends_with("_native_crash") {
            Some(ReportKind::NativeCrash)
        } else if tag.ends_with("_app_crash") {
            Some(ReportKind::JavaCrash)
        } else if tag.ends_with("_app_anr") {
            Some(ReportKind::Anr)
        } else {
            None
        }
    }

    /// Whether the entry is the app's: by `UID:` when the entry has one (a phone before
    /// Android ~12 prints none), else by `Process:` or `Package:`.
    pub fn matches(&self, app: &AppMatch<'_>) -> bool {
        matches_app(
            || {
                self.headers
                    .iter()
                    .map(|(name, value)| (name.as_str(), value.as_str()))
            },
            app,
        )
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
            ReportKind::Anr => self.anr_cut(None).pid,
            ReportKind::NativeCrash => crate::tombstone::parse_tombstone_header(&self.body).pid,
            _ => None,
        }
    }

    /// The `PID:` header's value, when the entry has a readable one.
    fn header_pid(&self) -> Option<u32> {
        self.header("PID").and_then(|v| v.trim().parse().ok())
    }

    /// The ANR body cut to the app's own sections: by `pid` when known, else by the entry's
    /// `Process:` (the first section when there is none).
    fn anr_cut(&self, pid: Option<u32>) -> AnrCut {
        let process = self.header("Process").map(str::trim).unwrap_or("");
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
        let mut pid = self.header_pid();
        let process = self.header("Process").unwrap_or("").trim().to_owned();
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
            ReportKind::Anr => {
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
            ReportKind::NativeCrash => {
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

/// Whether headers (`(key, value)` pairs, in order) are the app's; see [`DropBoxEntry::matches`].
/// It takes a function that gives the headers again, so owned and in-place entries share it.
fn matches_app<'h, I>(headers: impl Fn() -> I, app: &AppMatch<'_>) -> bool
where
    I: Iterator<Item = (&'h str, &'h str)>,
{
    let first = |key: &str| headers().find(|(name, _)| *name == key).map(|(_, v)| v);
    if let Some(uid) = first("UID").and_then(|v| v.trim().parse::<u32>().ok()) {
        return app.uid == Some(uid);
    }
    if app.package.is_empty() {
        return false;
    }
    let process_matches = first("Process").is_some_and(|process| {
        let process = process.trim();
        process == app.package
            || process
                .strip_prefix(app.package)
                .is_some_and(|rest| rest.starts_with(':'))
    });
    // `Package: <pkg> v<code> (<name>)`; several packages give several lines.
    let package_matches = headers().any(|(name, value)| {
        name == "Package" && value.split_whitespace().next() == Some(app.package)
    });
    process_matches || package_matches
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
        matches_app(|| self.headers(), app)
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
    let finder = memchr::memmem::Finder::new(ENTRY_SEPARATOR.as_bytes());
    // Where the next unread line starts.
    let mut at = 0usize;
    std::iter::from_fn(move || {
        loop {
            let (_, after_separator) = next_separator(text, at, &finder)?;
            at = after_separator;
            if at >= text.len() {
                return None;
            }
            let (header_line, next) = line_at(text, at);
            at = next;
            let Some((time, tag, contents)) = read_entry_header_ref(header_line) else {
                continue;
            };
            // Where the entry ends by its own byte count, when it gives one that holds: then no
            // separator inside it starts an entry (another app's text could forge one).
            let crlf = next >= 2 && text.as_bytes().get(next - 2..next) == Some(b"\r\n".as_slice());
            let declared_end = declared_end(text, at, contents, crlf);
            let limit = declared_end.unwrap_or(text.len());
            // The headers run to the first blank line (which belongs to neither part), to the
            // first line that is not `Key: value` (which starts the body) or to the next entry.
            let headers_start = at;
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
            let header_lines = &text[headers_start..at];
            let body_lines = match body_start {
                Some((_, body_from)) => {
                    let end = declared_end.unwrap_or_else(|| {
                        next_separator(text, body_from, &finder)
                            .map_or(text.len(), |(start, _)| start)
                    });
                    at = end;
                    &text[body_from..end]
                }
                None => "",
            };
            if let Some(end) = declared_end {
                at = end;
            }
            return Some(DropBoxEntryRef {
                time,
                tag,
                contents,
                header_lines,
                body_lines,
            });
        }
    })
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
/// use phonelogs_crash::{PhoneClock, ReportKind};
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
/// assert_eq!(report.kind, ReportKind::JavaCrash);
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
    fn match_without_uid_by_process_or_package() {
        let entry = DropBoxEntry {
            time: "2026-11-30 10:00:00".into(),
            tag: "data_app_crash".into(),
            contents: EntryContents::Text {
                compressed: false,
                bytes: 1,
            },
            headers: vec![
                ("Process".into(), "com.example.app:remote".into()),
                ("Package".into(), "com.example.app v3 (1.2)".into()),
            ],
            body: String::new(),
        };
        assert!(entry.matches(&AppMatch {
            uid: None,
            package: "com.example.app"
        }));
        assert!(!entry.matches(&AppMatch {
            uid: None,
            package: "com.example"
        }));
        let mut with_uid = entry.clone();
        with_uid.headers.push(("UID".into(), "10200".into()));
        assert!(!with_uid.matches(&AppMatch {
            uid: Some(10127),
            package: "com.example.app"
        }));
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
