//! Turning lines and reports into what the agent reads: `15:04:05.123 Tag: text` on the
//! computer's clock, lines cut at 2,000 bytes, and the 64 KB caps with their layouts.

use phonelogs_driver::{AppInfo, CrashReport, LogLine};
use serde::Serialize;
use time::UtcOffset;
use time::format_description::well_known::Rfc3339;
use time::macros::format_description;

/// The most a result's text may hold.
pub const MAX_RESULT_BYTES: usize = 64 * 1024;
/// The most one rendered line may hold.
pub const MAX_LINE_BYTES: usize = 2_000;
/// Tags longer than this are cut, so the text always has room.
const MAX_TAG_BYTES: usize = 256;
/// A report heading's summary and a first line are cut to this.
const MAX_HEADING_PART_BYTES: usize = 300;
/// What marks a cut.
const CUT_MARK: &str = "…";

/// One line as the agent sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct LineView {
    /// The time on the computer's clock, `15:04:05.123`.
    pub time: String,
    /// The level's name (`verbose` … `fatal`).
    pub level: String,
    /// The tag (cut to 256 bytes).
    pub tag: String,
    /// The text, cut so that the whole line stays within 2,000 bytes.
    pub text: String,
    /// The process that logged it, when known.
    pub pid: Option<u32>,
}

/// One crash report as the agent sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ReportView {
    /// `java_crash`, `native_crash`, `anr`, `crash` or `watchdog`.
    pub kind: String,
    /// When it happened (RFC 3339, with the phone's offset).
    pub time: String,
    /// The process id, when the report names one.
    pub pid: Option<u32>,
    /// The process name.
    pub process: String,
    /// A one-line summary.
    pub summary: String,
    /// The text as shown: whole, cut short, or only its first line.
    pub text: String,
    /// Whether the text was cut to stay within 64 KB.
    pub cut: bool,
}

/// The largest prefix of `text` of at most `max` bytes that ends on a UTF-8 boundary.
pub fn cut_utf8(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while end > 0 && !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// `text` cut to at most `max` bytes, with a mark when it was cut.
fn cut_marked(text: &str, max: usize) -> (String, bool) {
    if text.len() <= max {
        return (text.to_owned(), false);
    }
    let mut out = cut_utf8(text, max.saturating_sub(CUT_MARK.len())).to_owned();
    out.push_str(CUT_MARK);
    (out, true)
}

fn one_line(text: &str) -> String {
    text.replace(['\r', '\n'], " ")
}

/// Keeps only the lines that are `info`'s own: when the driver told the app's uid, every line
/// must carry that uid (a line with another uid, or none, is dropped). Returns the lines kept and
/// how many were dropped.
pub fn own_lines(lines: Vec<LogLine>, info: &AppInfo) -> (Vec<LogLine>, usize) {
    let Some(uid) = info.uid else {
        return (lines, 0);
    };
    let before = lines.len();
    let kept: Vec<LogLine> = lines
        .into_iter()
        .filter(|line| line.uid == Some(uid))
        .collect();
    let dropped = before - kept.len();
    (kept, dropped)
}

/// Renders one line: `15:04:05.123 Tag: text`, at most 2,000 bytes.
pub fn render_line(line: &LogLine, local: UtcOffset) -> (String, LineView) {
    let time = line
        .time
        .to_offset(local)
        .format(format_description!(
            "[hour]:[minute]:[second].[subsecond digits:3]"
        ))
        .unwrap_or_else(|_| "??:??:??.???".to_owned());
    let (tag, _) = cut_marked(&one_line(&line.tag), MAX_TAG_BYTES);
    let prefix_len = time.len() + 1 + tag.len() + 2;
    let (text, _) = cut_marked(&line.text, MAX_LINE_BYTES - prefix_len);
    let rendered = format!("{time} {tag}: {text}");
    let view = LineView {
        time,
        level: line.level.name().to_owned(),
        tag,
        text,
        pid: line.pid,
    };
    (rendered, view)
}

/// Renders lines (oldest first) within 64 KB: the newest are kept, shown oldest first. Returns
/// the text, the views, and how many lines were left out for size.
pub fn render_lines(lines: &[LogLine], local: UtcOffset) -> (String, Vec<LineView>, usize) {
    let rendered: Vec<(String, LineView)> = lines.iter().map(|l| render_line(l, local)).collect();
    let mut total = 0usize;
    let mut keep_from = rendered.len();
    for (index, (text, _)) in rendered.iter().enumerate().rev() {
        let cost = text.len() + 1;
        if total + cost > MAX_RESULT_BYTES {
            break;
        }
        total += cost;
        keep_from = index;
    }
    let left_out = keep_from;
    let mut log = String::with_capacity(total);
    let mut views = Vec::with_capacity(rendered.len() - keep_from);
    for (text, view) in rendered.into_iter().skip(keep_from) {
        log.push_str(&text);
        log.push('\n');
        views.push(view);
    }
    (log, views, left_out)
}

/// The heading of a report: kind, time, pid, process and summary on one line.
fn heading(report: &CrashReport) -> (String, String, String) {
    let time = report
        .time
        .format(&Rfc3339)
        .unwrap_or_else(|_| report.time.to_string());
    let (process, _) = cut_marked(&one_line(&report.process), MAX_HEADING_PART_BYTES);
    let (summary, _) = cut_marked(&one_line(&report.summary), MAX_HEADING_PART_BYTES);
    let pid = report.pid.map(|p| format!(", pid {p}")).unwrap_or_default();
    (
        format!(
            "{} at {time}{pid}, {process}: {summary}",
            report.kind.name()
        ),
        time,
        summary,
    )
}

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    cut_marked(line, MAX_HEADING_PART_BYTES).0
}

/// Lays out reports (newest first) within 64 KB: every report's heading, the texts whole while
/// they fit, then the newest of the rest cut short and the others' first lines. Returns the
/// text, the views and how many texts were cut.
pub fn render_reports(reports: &[CrashReport]) -> (String, Vec<ReportView>, usize) {
    let headings: Vec<(String, String, String)> = reports.iter().map(heading).collect();
    // Each section is "heading\nbody\n\n"; the headings and separators always fit (at most 10
    // reports of about 700 bytes of heading each).
    let fixed: usize = headings.iter().map(|(h, _, _)| h.len() + 3).sum();
    let mut budget = MAX_RESULT_BYTES.saturating_sub(fixed);
    let firsts: Vec<String> = reports.iter().map(|r| first_line(&r.text)).collect();
    let mut bodies: Vec<(String, bool)> = Vec::with_capacity(reports.len());
    let mut overflowing = false;
    for (index, report) in reports.iter().enumerate() {
        let reserve: usize = firsts[index + 1..].iter().map(String::len).sum();
        if overflowing {
            let body = firsts[index].clone();
            let cut = body.len() < report.text.trim_end().len();
            budget = budget.saturating_sub(body.len());
            bodies.push((body, cut));
            continue;
        }
        let room = budget.saturating_sub(reserve);
        if report.text.len() <= room {
            budget -= report.text.len();
            bodies.push((report.text.clone(), false));
        } else {
            overflowing = true;
            let (body, _) = cut_marked(&report.text, room);
            budget = budget.saturating_sub(body.len());
            bodies.push((body, true));
        }
    }
    let mut log = String::new();
    let mut views = Vec::with_capacity(reports.len());
    let mut cut_count = 0;
    for ((report, (head, time, summary)), (body, cut)) in reports.iter().zip(headings).zip(bodies) {
        log.push_str(&head);
        log.push('\n');
        log.push_str(body.trim_end_matches('\n'));
        log.push_str("\n\n");
        cut_count += usize::from(cut);
        views.push(ReportView {
            kind: report.kind.name().to_owned(),
            time,
            pid: report.pid,
            process: report.process.clone(),
            summary,
            text: body,
            cut,
        });
    }
    (log, views, cut_count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use phonelogs_driver::{AppId, CrashKind, LogLevel};
    use time::macros::{datetime, offset};

    fn line(text: &str) -> LogLine {
        LogLine {
            time: datetime!(2026-11-30 14:04:05.123456 UTC),
            level: LogLevel::Info,
            tag: "Tag".into(),
            text: text.into(),
            pid: Some(1),
            tid: Some(1),
            uid: Some(10123),
        }
    }

    #[test]
    fn a_line_reads_time_tag_text_on_the_computers_clock() {
        let (text, view) = render_line(&line("hello"), offset!(+1));
        assert_eq!(text, "15:04:05.123 Tag: hello");
        assert_eq!(view.time, "15:04:05.123");
    }

    #[test]
    fn a_long_line_is_cut_on_a_utf8_boundary() {
        let long = "é".repeat(3_000);
        let (text, view) = render_line(&line(&long), offset!(UTC));
        assert!(text.len() <= MAX_LINE_BYTES, "{}", text.len());
        assert!(text.len() > MAX_LINE_BYTES - 8);
        assert!(text.ends_with(CUT_MARK));
        assert!(view.text.ends_with(CUT_MARK));
        let short = line("short");
        assert_eq!(render_line(&short, offset!(UTC)).1.text, "short");
    }

    #[test]
    fn lines_keep_the_newest_within_64_kb() {
        let lines: Vec<LogLine> = (0..200)
            .map(|i| line(&format!("{i:04} {}", "x".repeat(1_000))))
            .collect();
        let (log, views, left_out) = render_lines(&lines, offset!(UTC));
        assert!(log.len() <= MAX_RESULT_BYTES);
        assert_eq!(views.len() + left_out, 200);
        assert!(left_out > 0);
        assert!(views.last().unwrap().text.starts_with("0199"));
        assert!(views.first().unwrap().text < views.last().unwrap().text);
    }

    #[test]
    fn only_the_apps_uid_passes() {
        let info = AppInfo {
            app: AppId::new("a.b"),
            label: None,
            system: false,
            dev_build: false,
            uid: Some(10123),
        };
        let mut other = line("other");
        other.uid = Some(10200);
        let mut unknown = line("unknown");
        unknown.uid = None;
        let (kept, dropped) = own_lines(vec![line("mine"), other, unknown], &info);
        assert_eq!(kept.len(), 1);
        assert_eq!(dropped, 2);
    }

    fn report(seconds: i64, text: String) -> CrashReport {
        CrashReport {
            kind: CrashKind::JavaCrash,
            time: datetime!(2026-11-30 10:00 UTC) + time::Duration::seconds(seconds),
            pid: Some(42),
            process: "com.example.app".into(),
            summary: format!("summary {seconds}"),
            text,
        }
    }

    #[test]
    fn reports_fit_whole_when_small() {
        let reports = vec![
            report(2, "first\nsecond\n".into()),
            report(1, "older\n".into()),
        ];
        let (log, views, cut) = render_reports(&reports);
        assert_eq!(cut, 0);
        assert!(log.starts_with("java_crash at 2026-11-30T10:00:02Z, pid 42, com.example.app: summary 2\nfirst\nsecond\n\n"));
        assert!(views.iter().all(|v| !v.cut));
    }

    #[test]
    fn big_reports_keep_headings_cut_the_newest_that_overflows_and_show_first_lines() {
        let big = |tag: &str| format!("{tag} first line\n{}", "y".repeat(40_000));
        let reports = vec![
            report(3, big("A")),
            report(2, big("B")),
            report(1, big("C")),
        ];
        let (log, views, cut) = render_reports(&reports);
        assert!(log.len() <= MAX_RESULT_BYTES, "{}", log.len());
        assert!(!views[0].cut);
        assert!(views[1].cut && views[1].text.ends_with(CUT_MARK) && views[1].text.len() > 1_000);
        assert_eq!(views[2].text, "C first line");
        assert!(views[2].cut);
        assert_eq!(cut, 2);
        for summary in ["summary 3", "summary 2", "summary 1"] {
            assert!(log.contains(summary));
        }
    }
}
