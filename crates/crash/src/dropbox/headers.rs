//! What one drop box entry's header says: its header line (time, tag, contents), its `Key: value`
//! lines, whose it is ([`Attribution`]) and its time. The lowest layer: the owned entry, the
//! in-place reader and the listing check all read headers through it.

use serde::{Deserialize, Serialize};

use crate::report::PhoneClock;

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

/// The identity of headers (`(key, value)` pairs, in order), and the headers after the part
/// it is read from (which any app may have written); see [`EntryIdentity`].
pub(super) fn read_identity<'h, I>(headers: I) -> (EntryIdentity<'h>, std::iter::Peekable<I>)
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
pub(super) fn attribution<'h>(
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
pub(super) fn report_time(
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

/// Reads `YYYY-MM-DD HH:MM:SS <tag> (<flags>, <N> bytes)` and its variants.
#[cfg(test)]
pub(super) fn read_entry_header(line: &str) -> Option<(String, String, EntryContents)> {
    read_entry_header_ref(line)
        .map(|(time, tag, contents)| (time.to_owned(), tag.to_owned(), contents))
}

/// [`read_entry_header`] in place: the time and tag as slices of `line`.
pub(super) fn read_entry_header_ref(line: &str) -> Option<(&str, &str, EntryContents)> {
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
pub(super) fn read_header_line(line: &str) -> Option<(&str, &str)> {
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
