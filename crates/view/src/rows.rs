//! The rows of a `kind: "logs"` result, built from the lines it shows, before the one cut
//! measures them: lines already masked ([`crate::masked`], unless the person turned masking
//! off for the app), process markers where a new process of the app starts
//! logging and where the app's own lines show one dying, and consecutive repeats (same pid,
//! level, tag and masked text) folded into one row that says how many and until when.
//!
//! A row stands for the log lines it folds (one, or more), a marker for none, so the result's
//! counts stay counts of log lines. Markers come only from the app's own lines (a Java
//! `FATAL EXCEPTION`, a native `Fatal signal`) and what the driver knows of the app's own
//! processes ([`ProcessSpan`]: an iPhone follower's streams), never from another process's
//! lines.

use phonelogs_driver::{LogLevel, LogLine, ProcessSpan};
use serde::Serialize;
use time::OffsetDateTime;

use crate::masked::ShownLine;

/// What a process marker marks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "event")]
pub enum ProcessEvent {
    /// A new process of the app started logging.
    Started,
    /// The app's own lines show the process dying: `how` is what they say (`FATAL EXCEPTION`,
    /// `Fatal signal 11 (SIGSEGV)`).
    Died {
        /// What the lines say.
        how: String,
    },
    /// The phone ended the process's log stream with the process (iPhone).
    Ended,
}

/// A process marker row: where a process of the app started logging or died.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProcessMarker {
    /// The process.
    pub pid: u32,
    /// Its name, when the driver or the app's own lines tell it.
    pub process: Option<String>,
    /// What happened.
    #[serde(flatten)]
    pub event: ProcessEvent,
}

impl ProcessMarker {
    /// The marker's text: `── process 4711 (org.example:sync) started`.
    pub fn text(&self) -> String {
        // Written here rather than in the catalog: the catalog's texts name the gateway's
        // types, which list these rows, and files depend on each other one way.
        let name = self
            .process
            .as_deref()
            .map(|p| format!(" ({p})"))
            .unwrap_or_default();
        let pid = self.pid;
        match &self.event {
            ProcessEvent::Started => format!("\u{2500}\u{2500} process {pid}{name} started"),
            ProcessEvent::Died { how } => format!(
                "\u{2500}\u{2500} process {pid}{name} died: {how} (its report: kind \"crashes\")"
            ),
            ProcessEvent::Ended => format!(
                "\u{2500}\u{2500} process {pid}{name} ended (if it crashed, its report: kind \"crashes\")"
            ),
        }
    }
}

/// One row: a line (its text masked) standing for itself and any repeats folded into it, or a
/// process marker placed at a line's time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The line; for a marker, the time and pid it is placed at (its text is the marker's).
    pub line: LogLine,
    /// How many log lines the row stands for: 1, more with folded repeats, 0 for a marker.
    pub count: usize,
    /// With folded repeats: the time of the last one.
    pub until: Option<OffsetDateTime>,
    /// How many secrets were masked in the lines the row stands for.
    pub masked: usize,
    /// The marker, for a marker row.
    pub marker: Option<ProcessMarker>,
}

/// How rows are built.
#[derive(Debug, Clone, Copy)]
pub struct RowOptions<'a> {
    /// Whether repeats are folded (`fold`, on by default).
    pub fold: bool,
    /// What the driver knows of the app's processes.
    pub processes: &'a [ProcessSpan],
    /// The masker for the processes' names the driver gives (the lines' own are masked
    /// already); `None` when the person unmasked the app.
    pub masker: Option<&'a crate::mask::Masker>,
}

/// The rows of `lines` (oldest first, each one line of text).
pub fn rows(lines: Vec<ShownLine>, options: RowOptions<'_>) -> Vec<Row> {
    let counts: Vec<usize> = lines.iter().map(ShownLine::masked).collect();
    let lines: Vec<LogLine> = lines.into_iter().map(ShownLine::into_line).collect();
    let deaths = deaths(&lines, options.processes);
    // Each dying process's marker goes after its last line here.
    let last_lines: Vec<(usize, &Death)> = deaths
        .iter()
        .filter_map(|death| {
            let last = lines.iter().rposition(|l| l.pid == Some(death.pid))?;
            Some((last, death))
        })
        .collect();
    let mut seen: Vec<u32> = Vec::new();
    let mut out: Vec<Row> = Vec::with_capacity(lines.len());
    for (index, (line, masked)) in lines.iter().zip(counts).enumerate() {
        if let Some(pid) = line.pid
            && !seen.contains(&pid)
        {
            seen.push(pid);
            // The first line's process was running already, as far as these lines tell.
            if index > 0 {
                let name = name_of(pid, options.processes, &deaths);
                out.push(marker_row(
                    line,
                    ProcessEvent::Started,
                    name,
                    options.masker,
                ));
            }
        }
        push_line(&mut out, line, masked, options.fold);
        for (_, death) in last_lines.iter().filter(|(last, _)| *last == index) {
            let (event, name) = (death.event.clone(), death.name.clone());
            out.push(marker_row(line, event, name, options.masker));
        }
    }
    out
}

/// A process the lines or the driver show ending.
struct Death {
    pid: u32,
    name: Option<String>,
    event: ProcessEvent,
}

/// The processes that die in `lines`: a Java crash (`AndroidRuntime: FATAL EXCEPTION`, named
/// by the `Process: …, PID: …` line after it), a native crash (`libc: Fatal signal …`), or a
/// stream the phone ended with its process.
fn deaths(lines: &[LogLine], processes: &[ProcessSpan]) -> Vec<Death> {
    let mut found: Vec<Death> = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let Some(pid) = line.pid else { continue };
        if found.iter().any(|d| d.pid == pid) {
            continue;
        }
        let how = if line.tag == "AndroidRuntime" && line.text.starts_with("FATAL EXCEPTION") {
            "FATAL EXCEPTION".to_owned()
        } else if line.tag == "libc" && line.text.starts_with("Fatal signal") {
            // `Fatal signal 11 (SIGSEGV), code 1 (SEGV_MAPERR), fault addr …`: up to the comma.
            line.text
                .split(',')
                .next()
                .unwrap_or("Fatal signal")
                .trim()
                .to_owned()
        } else {
            continue;
        };
        let name = lines[index..]
            .iter()
            .take(4)
            .filter(|l| l.pid == Some(pid))
            .find_map(|l| java_process_name(&l.text, pid));
        found.push(Death {
            pid,
            name,
            event: ProcessEvent::Died { how },
        });
    }
    for span in processes.iter().filter(|s| s.ended) {
        if !found.iter().any(|d| d.pid == span.pid) {
            found.push(Death {
                pid: span.pid,
                name: span.name.clone(),
                event: ProcessEvent::Ended,
            });
        }
    }
    found
}

/// The process name in AndroidRuntime's `Process: org.example:sync, PID: 4711`, when the pid is
/// the line's own.
fn java_process_name(text: &str, pid: u32) -> Option<String> {
    let rest = text.strip_prefix("Process: ")?;
    let (name, named_pid) = rest.rsplit_once(", PID: ")?;
    (named_pid.trim().parse::<u32>().ok() == Some(pid) && !name.is_empty()).then(|| name.to_owned())
}

/// A process's name: the driver's, else what its crash lines said.
fn name_of(pid: u32, processes: &[ProcessSpan], deaths: &[Death]) -> Option<String> {
    processes
        .iter()
        .find(|s| s.pid == pid)
        .and_then(|s| s.name.clone())
        .or_else(|| {
            deaths
                .iter()
                .find(|d| d.pid == pid)
                .and_then(|d| d.name.clone())
        })
}

/// A marker row; the process's name masked (a name the driver gives is the phone's word, not
/// a line already masked), its secrets counted in the row.
fn marker_row(
    line: &LogLine,
    event: ProcessEvent,
    process: Option<String>,
    masker: Option<&crate::mask::Masker>,
) -> Row {
    let (process, masked) = match (process, masker) {
        (Some(name), Some(masker)) => {
            let shown = masker.line(&name);
            let count = shown.count;
            (Some(shown.text.into_owned()), count)
        }
        (process, _) => (process, 0),
    };
    let marker = ProcessMarker {
        pid: line.pid.unwrap_or_default(),
        process,
        event,
    };
    let level = match marker.event {
        ProcessEvent::Started | ProcessEvent::Ended => LogLevel::Info,
        ProcessEvent::Died { .. } => LogLevel::Fatal,
    };
    Row {
        line: LogLine {
            level,
            tag: String::new(),
            text: marker.text(),
            ..line.clone()
        },
        count: 0,
        until: None,
        masked,
        marker: Some(marker),
    }
}

/// Adds a line: folded into the row before when that is a line of the same pid, level, tag
/// and text.
fn push_line(out: &mut Vec<Row>, line: &LogLine, masked: usize, fold: bool) {
    if fold
        && let Some(last) = out.last_mut()
        && last.marker.is_none()
        && last.line.pid == line.pid
        && last.line.level == line.level
        && last.line.tag == line.tag
        && last.line.text == line.text
    {
        last.count += 1;
        last.until = Some(line.time);
        last.masked += masked;
        return;
    }
    out.push(Row {
        line: line.clone(),
        count: 1,
        until: None,
        masked,
        marker: None,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::Duration;
    use time::macros::datetime;

    fn line(ms: i64, pid: u32, tag: &str, text: &str) -> LogLine {
        LogLine {
            time: datetime!(2026-11-30 14:04:05 UTC) + Duration::milliseconds(ms),
            level: LogLevel::Info,
            tag: tag.into(),
            text: text.into(),
            pid: Some(pid),
            tid: Some(pid),
            uid: Some(10_123),
        }
    }

    /// The rows of `lines`, masked as a read masks them.
    fn masked_rows(lines: Vec<LogLine>, options: RowOptions<'_>) -> Vec<Row> {
        let shown = crate::masked::shown_lines(&lines, Some(crate::mask::masker()));
        super::rows(shown, options)
    }

    fn options(processes: &[ProcessSpan]) -> RowOptions<'_> {
        RowOptions {
            fold: true,
            processes,
            masker: Some(crate::mask::masker()),
        }
    }

    #[test]
    fn forty_repeats_become_one_row_that_counts_them() {
        let mut lines = vec![line(0, 7, "Sync", "starting")];
        lines.extend((1..=40).map(|i| line(i * 100, 7, "Sync", "retrying")));
        lines.push(line(5_000, 7, "Sync", "done"));
        let rows = masked_rows(lines.clone(), options(&[]));
        let counts: Vec<usize> = rows.iter().map(|r| r.count).collect();
        assert_eq!(counts, [1, 40, 1]);
        assert_eq!(rows[1].until, Some(lines[40].time));
        assert_eq!(rows.iter().map(|r| r.count).sum::<usize>(), lines.len());
        // Off, every line is its own row.
        let plain = masked_rows(
            lines.clone(),
            RowOptions {
                fold: false,
                ..options(&[])
            },
        );
        assert_eq!(plain.len(), lines.len());
    }

    #[test]
    fn lines_that_differ_only_in_a_masked_secret_fold_and_their_secrets_are_counted() {
        let jwt = |n: u32| format!("refreshing eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI{n:04}fQ.sig{n}");
        let lines: Vec<LogLine> = (0..3).map(|i| line(i, 7, "Auth", &jwt(i as u32))).collect();
        let rows = masked_rows(lines, options(&[]));
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].count, rows[0].masked), (3, 3));
        assert_eq!(rows[0].line.text, "refreshing [redacted:jwt]");
        // Unmasked (the person's choice), they stay apart.
        let lines: Vec<LogLine> = (0..3).map(|i| line(i, 7, "Auth", &jwt(i as u32))).collect();
        let rows = super::rows(crate::masked::shown_lines(&lines, None), options(&[]));
        assert_eq!(rows.len(), 3);
    }

    #[test]
    fn a_java_crash_and_a_restart_are_marked() {
        let lines = vec![
            line(0, 4711, "Sync", "working"),
            line(1, 4711, "AndroidRuntime", "FATAL EXCEPTION: main"),
            line(
                2,
                4711,
                "AndroidRuntime",
                "Process: org.example:sync, PID: 4711",
            ),
            line(
                3,
                4711,
                "AndroidRuntime",
                "java.lang.IllegalStateException: boom",
            ),
            line(900, 4790, "Sync", "working"),
        ];
        let rows = masked_rows(lines, options(&[]));
        let texts: Vec<String> = rows
            .iter()
            .map(|r| format!("{} {}", r.count, r.line.text))
            .collect();
        assert_eq!(
            texts,
            [
                "1 working",
                "1 FATAL EXCEPTION: main",
                "1 Process: org.example:sync, PID: 4711",
                "1 java.lang.IllegalStateException: boom",
                "0 \u{2500}\u{2500} process 4711 (org.example:sync) died: FATAL EXCEPTION (its report: kind \"crashes\")",
                "0 \u{2500}\u{2500} process 4790 started",
                "1 working",
            ]
        );
    }

    #[test]
    fn a_native_crash_and_an_ended_stream_are_marked_and_a_marker_stops_a_fold() {
        let lines = vec![
            line(0, 10, "Native", "tick"),
            line(
                1,
                10,
                "libc",
                "Fatal signal 11 (SIGSEGV), code 1 (SEGV_MAPERR), fault addr 0x0 in tid 10 (x), pid 10 (x)",
            ),
            line(2, 11, "Native", "tick"),
            line(3, 11, "Native", "tick"),
        ];
        let spans = [ProcessSpan {
            pid: 11,
            name: Some("Example".into()),
            ended: true,
        }];
        let rows = masked_rows(lines, options(&spans));
        let markers: Vec<String> = rows
            .iter()
            .filter_map(|r| r.marker.as_ref().map(ProcessMarker::text))
            .collect();
        assert_eq!(
            markers,
            [
                "\u{2500}\u{2500} process 10 died: Fatal signal 11 (SIGSEGV) (its report: kind \"crashes\")",
                "\u{2500}\u{2500} process 11 (Example) started",
                "\u{2500}\u{2500} process 11 (Example) ended (if it crashed, its report: kind \"crashes\")",
            ]
        );
        // The two ticks of pid 11 fold; the tick of pid 10 does not join them.
        let ticks: Vec<usize> = rows
            .iter()
            .filter(|r| r.line.text == "tick")
            .map(|r| r.count)
            .collect();
        assert_eq!(ticks, [1, 2]);
    }

    /// The review's F2: a process name the driver gives (not a line of the app's, masked
    /// already) is masked in its markers, and the secrets counted in the marker rows.
    #[test]
    fn a_drivers_process_name_is_masked_in_its_markers_and_counted() {
        let key = "sk_live_4eC39HqLyjWDarjtT1zdp7dc";
        let lines = vec![line(0, 10, "Native", "tick"), line(1, 11, "Native", "tick")];
        let spans = [ProcessSpan {
            pid: 11,
            name: Some(format!("worker token={key}")),
            ended: true,
        }];
        let rows = masked_rows(lines, options(&spans));
        let markers: Vec<&Row> = rows.iter().filter(|r| r.marker.is_some()).collect();
        assert_eq!(markers.len(), 2);
        for row in markers {
            let text = row
                .marker
                .as_ref()
                .map(ProcessMarker::text)
                .unwrap_or_default();
            assert!(!text.contains(key) && text.contains("[redacted:"), "{text}");
            assert_eq!(row.masked, 1, "{text}");
        }
    }

    #[test]
    fn another_process_line_cannot_claim_a_death() {
        // A "Process:" line of another pid names nothing.
        assert_eq!(java_process_name("Process: com.bank, PID: 99", 4711), None);
        assert_eq!(
            java_process_name("Process: org.example, PID: 4711", 4711).as_deref(),
            Some("org.example")
        );
    }
}
