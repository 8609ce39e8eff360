//! A `--print` dump read in place: where each entry starts and ends ([`DropBoxEntryRef`], the
//! declared length of a text entry, separators an entry's own text holds), and the dump's
//! entries and reports.

use crate::report::{PhoneClock, Report};

use super::entry::DropBoxEntry;
use super::headers::{
    AppMatch, Attribution, ENTRY_SEPARATOR, EntryContents, EntryIdentity, attribution,
    read_entry_header_ref, read_header_line, read_identity, report_time,
};

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
    pub(super) header_lines: &'a str,
    /// The lines after the headers, whole lines of the dump.
    pub(super) body_lines: &'a str,
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
pub(super) fn line_at(text: &str, at: usize) -> (&str, usize) {
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
pub(super) fn next_separator(
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
pub(super) enum Scan<'a> {
    /// An entry, with where it lies in the dump.
    Entry(Scanned<'a>),
    /// A separator line not followed by a readable header line: no entry starts there.
    Skipped,
}

/// One entry as the in-place reader found it, and where it lies in the dump.
#[derive(Debug, Clone, Copy)]
pub(super) struct Scanned<'a> {
    pub(super) entry: DropBoxEntryRef<'a>,
    /// Where its separator line starts.
    pub(super) start: usize,
    /// Whether the separator line is exactly the 40 `=` AOSP prints (a pty's `\r` aside).
    pub(super) exact_separator: bool,
    /// The header line as printed, without its line ending.
    pub(super) header_line: &'a str,
    /// Where the text after the header line starts.
    pub(super) text_start: usize,
    /// Where the entry ends: where the next separator line starts, or the dump's end.
    pub(super) end: usize,
    /// Whether `end` follows from the entry itself (see [`end_is_known`]), not from the next
    /// separator line found, which the entry's own text may have written.
    pub(super) end_known: bool,
    /// Whether its header line ended in `\r\n` (a pty).
    pub(super) crlf: bool,
}

/// The entries of `dumpsys dropbox --print` output in place, and the separators that start none.
pub(super) fn scan(text: &str) -> impl Iterator<Item = Scan<'_>> {
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
pub(super) fn declared_end(
    text: &str,
    start: usize,
    contents: EntryContents,
    crlf: bool,
) -> Option<usize> {
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
