//! One drop box entry read whole ([`DropBoxEntry`]): its headers, its pid, and its report
//! (`data_app_crash`, `data_app_native_crash`, `data_app_anr`), cut to the app's own part.

use crate::anr::{AnrCut, AnrTarget, cut_anr};
use crate::report::{PhoneClock, Report, first_line};
use serde::{Deserialize, Serialize};

use super::headers::{
    AppMatch, Attribution, EntryContents, EntryIdentity, attribution, read_identity, report_time,
};
use phonelogs_driver::CrashKind;

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

fn first_body_line(body: &str) -> &str {
    body.lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .map_or("", |line| first_line(line))
}
