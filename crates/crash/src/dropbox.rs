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
        if let Some(uid) = self
            .header("UID")
            .and_then(|v| v.trim().parse::<u32>().ok())
        {
            return app.uid == Some(uid);
        }
        if app.package.is_empty() {
            return false;
        }
        let process_matches = self.header("Process").is_some_and(|process| {
            let process = process.trim();
            process == app.package
                || process
                    .strip_prefix(app.package)
                    .is_some_and(|rest| rest.starts_with(':'))
        });
        // `Package: <pkg> v<code> (<name>)`; several packages give several lines.
        let package_matches = self.headers.iter().any(|(name, value)| {
            name == "Package" && value.split_whitespace().next() == Some(app.package)
        });
        process_matches || package_matches
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
        let time = self
            .header("Timestamp")
            .and_then(crate::tombstone::parse_tombstone_time)
            .or_else(|| {
                crate::android::parse_local_date_time(&self.time)
                    .map(|local| local.assume_offset(clock.offset))
            });
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

fn first_body_line(body: &str) -> &str {
    body.lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .map_or("", |line| first_line(line))
}

/// Reads `YYYY-MM-DD HH:MM:SS <tag> (<flags>, <N> bytes)` and its variants.
fn read_entry_header(line: &str) -> Option<(String, String, EntryContents)> {
    let line = line.trim();
    let bytes = line.as_bytes();
    if bytes.len() < 21 || bytes[4] != b'-' || bytes[10] != b' ' || bytes[19] != b' ' {
        return None;
    }
    crate::android::parse_local_date_time(line.get(..19)?)?;
    let time = line[..19].to_owned();
    let rest = &line[20..];
    let (tag, contents) = match rest.find(" (") {
        Some(at) => {
            let inner = rest[at + 2..].trim_end().trim_end_matches(')');
            (&rest[..at], read_contents(inner))
        }
        None => (rest, EntryContents::Unknown),
    };
    Some((time, tag.trim().to_owned(), contents))
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
