//! # phonelogs-crash
//!
//! Pure parsers for what phones print: logcat lines, drop box entries, ANR traces, tombstones,
//! `debuggerd -b` backtraces, exit-info records and iOS `.ips` crash reports. Both drivers use
//! it to turn device output into typed values, and `phonelogs report` uses it to read files.
//!
//! Invariants: no I/O, no dependency on another phonelogs crate but `phonelogs-driver` (the
//! contract, whose `ExitRecord` and `CrashKind` it reads into), and no panic on any input.
//! Parsers return what they could read plus warnings; a half-readable report still yields a
//! heading.
//!
//! ```
//! use phonelogs_crash::{detect_format, parse_any, render_heading, Format};
//! let dump = b"\
//! 05-20 08:02:10.572 10127 23031 23031 E AndroidRuntime: FATAL EXCEPTION: main
//! 05-20 08:02:10.572 10127 23031 23031 E AndroidRuntime: Process: com.example.app, PID: 23031
//! 05-20 08:02:10.572 10127 23031 23031 E AndroidRuntime: java.lang.IllegalStateException: Crash button tapped
//! ";
//! assert_eq!(detect_format(dump), Format::Logcat);
//! let parsed = parse_any(dump, None).unwrap();
//! assert_eq!(
//!     render_heading(&parsed.reports[0]),
//!     "java_crash, time unknown, pid 23031, com.example.app: java.lang.IllegalStateException: Crash button tapped"
//! );
//! ```

pub mod android;
pub mod anr;
pub mod crashbuf;
pub mod dropbox;
mod error;
pub mod exitinfo;
pub mod ips;
pub mod logcat;
pub mod ostrace;
mod report;
pub mod tombstone;
pub mod vis;

pub use error::Error;
pub use exitinfo::ExitRecord;
pub use logcat::{LogTime, LogcatLine, UidField};
pub use phonelogs_driver::CrashKind;
pub use report::{PhoneClock, Report, cut_text, render_heading};
pub use tombstone::{NativeBacktrace, TombstoneHeader};

use serde::{Deserialize, Serialize};

/// The file formats [`parse_any`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// A logcat dump (any layout); its crash reports come from the crash buffer rules.
    Logcat,
    /// `dumpsys dropbox --print`.
    Dropbox,
    /// An ANR trace (`----- pid N at … -----` sections with Java threads).
    Anr,
    /// A native tombstone (`*** *** ***` …).
    Tombstone,
    /// A `debuggerd -b` dump.
    Backtrace,
    /// `dumpsys activity exit-info`.
    ExitInfo,
    /// An iPhone `.ips` crash report (or a `.crash` with a JSON header).
    Ips,
    /// Nothing this crate reads.
    Unknown,
}

impl Format {
    /// The name used on the command line (`--format`) and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Logcat => "logcat",
            Format::Dropbox => "dropbox",
            Format::Anr => "anr",
            Format::Tombstone => "tombstone",
            Format::Backtrace => "backtrace",
            Format::ExitInfo => "exit_info",
            Format::Ips => "ips",
            Format::Unknown => "unknown",
        }
    }

    /// Every format a caller can ask for, for help texts.
    pub const ALL: [Format; 7] = [
        Format::Logcat,
        Format::Dropbox,
        Format::Anr,
        Format::Tombstone,
        Format::Backtrace,
        Format::ExitInfo,
        Format::Ips,
    ];
}

impl std::str::FromStr for Format {
    type Err = Error;

    /// Reads a format name (`logcat`, `dropbox`, `anr`, `tombstone`, `backtrace`, `exit_info` or
    /// `exit-info`, `ips`).
    fn from_str(name: &str) -> Result<Self, Error> {
        let name = name.trim().to_ascii_lowercase().replace('-', "_");
        Format::ALL
            .into_iter()
            .find(|format| format.as_str() == name)
            .ok_or_else(|| {
                let known: Vec<&str> = Format::ALL.iter().map(|f| f.as_str()).collect();
                Error::UnknownFormat(format!("{name:?}; known formats: {}", known.join(", ")))
            })
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Decides a file's format from its content.
pub fn detect_format(bytes: &[u8]) -> Format {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(256 * 1024)]);
    let text = text.trim_start_matches('\u{feff}');
    let first = text.lines().next().unwrap_or("").trim();
    if first.starts_with('{') && first.contains("\"bug_type\"") {
        return Format::Ips;
    }
    if text.contains("ApplicationExitInfo #") || text.contains("PROCESS EXIT INFO") {
        return Format::ExitInfo;
    }
    if text.contains("Drop box contents:") || has_dropbox_entry(text) {
        return Format::Dropbox;
    }
    let mut pid_sections = false;
    let mut java_threads = false;
    let mut native_threads = false;
    let mut log_lines = 0usize;
    for line in text.lines().take(20_000) {
        let trimmed = line.trim();
        if trimmed.starts_with("*** *** *** ***") {
            return Format::Tombstone;
        }
        if trimmed.starts_with("----- pid ") {
            pid_sections = true;
        } else if trimmed.starts_with('"')
            && trimmed.contains(" sysTid=")
            && !trimmed.contains(" prio=")
        {
            native_threads = true;
        } else if trimmed.starts_with('"') && trimmed.contains(" prio=")
            || trimmed.starts_with("DALVIK THREADS")
        {
            java_threads = true;
        } else if log_lines < 3 && matches!(logcat::parse_line(line), logcat::LogcatItem::Line(_)) {
            log_lines += 1;
        }
    }
    if log_lines > 0 && !pid_sections {
        return Format::Logcat;
    }
    if pid_sections {
        return if native_threads && !java_threads {
            Format::Backtrace
        } else {
            Format::Anr
        };
    }
    if first.starts_with('{') {
        return Format::Ips;
    }
    Format::Unknown
}

fn has_dropbox_entry(text: &str) -> bool {
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim() == dropbox::ENTRY_SEPARATOR {
            return lines.next().is_some_and(|next| {
                android::parse_local_date_time(next.get(..19).unwrap_or("")).is_some()
            });
        }
    }
    false
}

/// Everything [`parse_any`] read from one file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParsedFile {
    /// The format the file was read as.
    pub format: Option<Format>,
    /// Its crash reports (logcat, drop box, ANR, tombstone, `.ips`).
    pub reports: Vec<Report>,
    /// Its exit records (exit-info).
    pub exit_records: Vec<ExitRecord>,
    /// Its backtrace (`debuggerd -b`).
    pub backtrace: Option<NativeBacktrace>,
    /// What could not be read at the level of the file.
    pub warnings: Vec<String>,
}

impl ParsedFile {
    /// One JSON object per item, for `phonelogs report --json`: a report per report, a record
    /// per exit record, the backtrace for a `debuggerd -b` dump.
    pub fn json_lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for report in &self.reports {
            lines.extend(serde_json::to_string(report).ok());
        }
        for record in &self.exit_records {
            lines.extend(serde_json::to_string(record).ok());
        }
        if let Some(backtrace) = &self.backtrace {
            lines.extend(serde_json::to_string(backtrace).ok());
        }
        lines
    }

    /// The human-readable form, for `phonelogs report`: every report's heading and cut text,
    /// every exit record on one line, the backtrace's threads.
    pub fn render_text(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        for report in &self.reports {
            let _ = writeln!(out, "{}", render_heading(report));
            for warning in &report.warnings {
                let _ = writeln!(out, "warning: {warning}");
            }
            out.push_str(&report.text);
            if !report.text.ends_with('\n') {
                out.push('\n');
            }
            out.push('\n');
        }
        for record in &self.exit_records {
            let _ = writeln!(
                out,
                "{} pid {} {}: {} ({}) subreason {} status {} importance {} description {}",
                record.timestamp.as_deref().unwrap_or("?"),
                record.pid.map_or_else(|| "?".to_owned(), |p| p.to_string()),
                record.process.as_deref().unwrap_or("?"),
                record.reason.as_deref().unwrap_or("?"),
                record
                    .reason_code
                    .map_or_else(|| "?".to_owned(), |c| c.to_string()),
                record.subreason.as_deref().unwrap_or("?"),
                record
                    .status
                    .map_or_else(|| "?".to_owned(), |c| c.to_string()),
                record
                    .importance
                    .map_or_else(|| "?".to_owned(), |c| c.to_string()),
                record.description.as_deref().unwrap_or("?"),
            );
        }
        if let Some(trace) = &self.backtrace {
            let _ = writeln!(
                out,
                "backtrace of pid {} ({}), abi {}, {} threads",
                trace.pid.map_or_else(|| "?".to_owned(), |p| p.to_string()),
                trace.process_name.as_deref().unwrap_or("?"),
                trace.abi.as_deref().unwrap_or("?"),
                trace.thread_count
            );
            for thread in &trace.threads {
                let _ = writeln!(
                    out,
                    "  \"{}\" sysTid={} frames={}",
                    thread.name, thread.sys_tid, thread.frame_count
                );
            }
        }
        for warning in &self.warnings {
            let _ = writeln!(out, "warning: {warning}");
        }
        out
    }
}

/// Reads a file of any supported format (detected from its content unless `format` is given).
///
/// Logcat times without a year, and drop box times without a zone, are read as UTC with no
/// year; use the per-format functions with a [`PhoneClock`] for the phone's own clock.
pub fn parse_any(bytes: &[u8], format: Option<Format>) -> Result<ParsedFile, Error> {
    let format = format.unwrap_or_else(|| detect_format(bytes));
    let clock = PhoneClock::default();
    let mut parsed = ParsedFile {
        format: Some(format),
        ..ParsedFile::default()
    };
    let text = || String::from_utf8_lossy(bytes);
    match format {
        Format::Logcat => parsed.reports = crashbuf::parse_crash_buffer(&text(), &clock),
        Format::Dropbox => parsed.reports = dropbox::dropbox_reports(&text(), None, &clock),
        Format::Anr => {
            let text = text();
            let cut = anr::cut_anr(&text, anr::AnrTarget::default());
            let time = cut.section_time.as_deref().and_then(anr_section_time);
            parsed.reports.push(Report {
                kind: CrashKind::Anr,
                time,
                pid: cut.pid,
                process: cut.process.clone().unwrap_or_default(),
                summary: cut.subject.clone().unwrap_or_else(|| "ANR".to_owned()),
                text: cut.text,
                warnings: cut.warnings,
            });
        }
        Format::Tombstone => parsed
            .reports
            .push(tombstone::tombstone_report(&text(), &clock)),
        Format::Backtrace => parsed.backtrace = Some(tombstone::parse_backtrace(&text())),
        Format::ExitInfo => parsed.exit_records = exitinfo::parse_exit_info(&text()),
        Format::Ips => match ips::ips_report(bytes)? {
            Some(report) => parsed.reports.push(report),
            None => parsed
                .warnings
                .push("an .ips file of a bug type that is not a crash report".to_owned()),
        },
        Format::Unknown => {
            return Err(Error::UnknownFormat(
                "the content matches none of the formats phonelogs reads".to_owned(),
            ));
        }
    }
    if parsed.reports.is_empty()
        && parsed.exit_records.is_empty()
        && parsed.backtrace.is_none()
        && parsed.warnings.is_empty()
    {
        parsed
            .warnings
            .push(format!("no reports found in this {format} file"));
    }
    Ok(parsed)
}

/// Reads an ANR section time: `2018-09-14 13:46:56` (no zone: `None`) or
/// `2022-10-03 16:52:23.938520831+0200`.
fn anr_section_time(value: &str) -> Option<time::OffsetDateTime> {
    tombstone::parse_tombstone_time(value)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn format_names_round_trip() {
        for format in Format::ALL {
            assert_eq!(format.as_str().parse::<Format>().unwrap(), format);
        }
        assert_eq!("exit-info".parse::<Format>().unwrap(), Format::ExitInfo);
        assert!("pdf".parse::<Format>().is_err());
    }

    #[test]
    fn unknown_content_is_an_error_not_a_panic() {
        assert_eq!(detect_format(b"hello world\n"), Format::Unknown);
        assert!(matches!(
            parse_any(b"hello world\n", None),
            Err(Error::UnknownFormat(_))
        ));
        assert!(parse_any(b"", None).is_err());
    }

    #[test]
    fn json_lines_carry_the_report_keys() {
        let dump = b"05-20 08:02:10.572 23031 23031 E AndroidRuntime: FATAL EXCEPTION: main\n\
05-20 08:02:10.572 23031 23031 E AndroidRuntime: Process: a.b, PID: 23031\n\
05-20 08:02:10.572 23031 23031 E AndroidRuntime: java.lang.Error: x\n";
        let parsed = parse_any(dump, None).unwrap();
        let lines = parsed.json_lines();
        assert_eq!(lines.len(), 1);
        let value: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
        for key in ["kind", "time", "pid", "process", "summary", "text"] {
            assert!(value.get(key).is_some(), "missing {key} in {value}");
        }
        assert_eq!(value["kind"], "java_crash");
        assert!(value["time"].is_null());
        let back: Report = serde_json::from_str(&lines[0]).unwrap();
        assert_eq!(back, parsed.reports[0]);
    }

    #[test]
    fn forced_format_overrides_detection() {
        let trace = b"----- pid 7 at 2026-11-30 10:00:00 -----\nCmd line: a\n\"main\" sysTid=7\n  #00 pc 0  /x\n----- end 7 -----\n";
        assert_eq!(detect_format(trace), Format::Backtrace);
        let parsed = parse_any(trace, Some(Format::Anr)).unwrap();
        assert_eq!(parsed.reports[0].kind, CrashKind::Anr);
        assert_eq!(parsed.reports[0].pid, Some(7));
    }
}
