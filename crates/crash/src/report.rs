//! The common shape of every crash report: its kind, time, pid, process, one-line summary and
//! cut text, plus the heading line a person or an agent reads first.

use phonelogs_driver::{CrashKind, CrashReport};
use serde::{Deserialize, Serialize};

/// One crash report, cut down to what concerns the app, as a parser reads it: the driver
/// contract's [`CrashReport`] before it is known to have a time, with what could not be read.
/// [`Report::dated`] is the one conversion to the contract's type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// What kind of failure this is.
    pub kind: CrashKind,
    /// When it happened, with the phone's zone when known; `None` when the source gives no
    /// usable time (serialized as RFC 3339 or `null`).
    #[serde(with = "time::serde::rfc3339::option")]
    pub time: Option<time::OffsetDateTime>,
    /// The process id of the app that failed, when known.
    pub pid: Option<u32>,
    /// The process name (Android) or executable name (iPhone); empty when unknown.
    pub process: String,
    /// A one-line summary: the exception, signal, ANR subject or iPhone exception reason.
    pub summary: String,
    /// The report's text, already cut down to the app's own parts.
    pub text: String,
    /// What could not be read, for a damaged or unusual source. Empty for a clean one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl Report {
    /// The driver contract's report, for a report with a time; `None` without one (a report an
    /// agent could not place among the app's is left out by the drivers, which say so).
    pub fn dated(self) -> Option<CrashReport> {
        Some(CrashReport {
            kind: self.kind,
            time: self.time?,
            pid: self.pid,
            process: self.process,
            summary: self.summary,
            text: self.text,
            build: None,
        })
    }
}

/// What the parsers need to know about the phone's clock to turn its local times into instants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhoneClock {
    /// The phone's UTC offset, as `date +%z` prints it (see [`crate::android::parse_date_offset`]).
    pub offset: time::UtcOffset,
    /// The year, for logcat `-v threadtime` lines that print none. Without it such lines have no
    /// time.
    pub year: Option<i32>,
}

impl Default for PhoneClock {
    /// UTC and no year: epoch times and times with a zone still convert, others give `None`.
    fn default() -> Self {
        PhoneClock {
            offset: time::UtcOffset::UTC,
            year: None,
        }
    }
}

/// The one-line heading of a report: kind, time, pid, process and summary.
///
/// ```
/// use phonelogs_crash::{Report, CrashKind, render_heading};
/// let report = Report {
///     kind: CrashKind::JavaCrash,
///     time: None,
///     pid: Some(4321),
///     process: "com.example.app".into(),
///     summary: "java.lang.IllegalStateException: Crash button tapped".into(),
///     text: String::new(),
///     warnings: vec![],
/// };
/// assert_eq!(
///     render_heading(&report),
///     "java_crash, time unknown, pid 4321, com.example.app: java.lang.IllegalStateException: Crash button tapped"
/// );
/// ```
pub fn render_heading(report: &Report) -> String {
    let when = report
        .time
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_else(|| "time unknown".to_owned());
    let pid = match report.pid {
        Some(pid) => format!("pid {pid}"),
        None => "pid unknown".to_owned(),
    };
    let process = if report.process.is_empty() {
        "unknown process"
    } else {
        report.process.as_str()
    };
    let summary = first_line(&report.summary);
    format!(
        "{}, {when}, {pid}, {process}: {summary}",
        report.kind.name()
    )
}

/// The first line of `text`, without its line ending.
pub(crate) fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

/// Cuts `text` to at most `max_bytes` bytes at a line end (or a character boundary when one line
/// is longer than the limit), appending `marker` when it cut. The result, marker included, is at
/// most `max_bytes` long as long as the marker fits.
pub fn cut_text(text: &str, max_bytes: usize, marker: &str) -> String {
    if text.len() <= max_bytes {
        return text.to_owned();
    }
    let room = max_bytes.saturating_sub(marker.len());
    let mut end = room.min(text.len());
    while end > 0 && !text.is_char_boundary(end) {
        end -= 1;
    }
    let head = &text[..end];
    let head = match head.rfind('\n') {
        Some(at) if at > 0 => &head[..=at],
        _ => head,
    };
    let mut out = String::with_capacity(head.len() + marker.len());
    out.push_str(head);
    if marker.len() <= max_bytes {
        out.push_str(marker);
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn kind_names_match_serde() {
        for kind in [
            CrashKind::JavaCrash,
            CrashKind::NativeCrash,
            CrashKind::Anr,
            CrashKind::Crash,
            CrashKind::Watchdog,
        ] {
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.name()));
        }
    }

    #[test]
    fn cut_text_stays_within_limit_and_at_line_ends() {
        let text = "aaaa\nbbbb\ncccc\n";
        let cut = cut_text(text, 12, "…\n");
        assert!(cut.len() <= 12, "{cut:?}");
        assert!(cut.starts_with("aaaa\n"));
        assert_eq!(cut_text(text, 100, "x"), text);
        let wide = "ééééé";
        let cut = cut_text(wide, 5, "");
        assert_eq!(cut, "éé");
    }
}
