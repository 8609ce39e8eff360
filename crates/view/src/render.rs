//! Turning lines and reports into what the agent reads: `15:04:05.123 Tag: text` on the
//! computer's clock, lines cut at 2,000 bytes, and the result cap with its layouts.
//!
//! This is the only place a `phone_logs` result is cut. The MCP frontend passes the log on
//! unaltered, once as text content and once inside `structuredContent`, and clients pass only
//! one of the two to the model (Claude Code only `JSON.stringify(structuredContent)`, most
//! others only the text). So every line and report is measured by its JSON-escaped length
//! ([`json_escaped_len`]), which is never less than its raw length: a log within the cap by
//! that measure is within it in both forms. For crash reports the headings are also listed in
//! `structuredContent`, so their structured copies ([`heading_cost`]) are taken from the same
//! budget. What the cap leaves out is counted, so the message's counts are true.

use phonelogs_driver::{AppInfo, Capabilities, CrashReport, LogLine, NativeBacktrace};
use time::format_description::well_known::Rfc3339;
use time::macros::format_description;
use time::{OffsetDateTime, UtcOffset};

use crate::cost::{backtrace_cost_without_text, json_escaped_len};
pub use crate::cost::{heading_cost, symbols_field_cost};
use crate::lines::{is_line_end, one_line, shown};
use crate::mask::Masker;
use crate::rows::Row;
pub use crate::rows::{ProcessEvent, ProcessMarker};
pub use crate::types::{LineView, Occurrences, ReportView, TextShown};

/// The default result cap, the spec's 64 KB: the most a result's log may hold, measured as
/// JSON-escaped bytes (see the module's docs).
pub const MAX_RESULT_BYTES: usize = 64 * 1024;
/// The smallest result cap a gateway accepts: below it a single long line or a few report
/// headings would no longer fit.
pub const MIN_RESULT_CAP: usize = 4 * 1024;
/// The most a result's message may hold, as JSON-escaped bytes: a longer one (it can quote an
/// agent's own argument back, or name many symbol files) is cut with a mark, so a result's size
/// is bounded by the cap plus this and its keys (what `_meta["anthropic/maxResultSizeChars"]`
/// declares), and an error's text stays well under 10,000 characters.
pub const MAX_MESSAGE_BYTES: usize = 4_000;
/// The most one rendered line may hold.
pub const MAX_LINE_BYTES: usize = 2_000;
/// Tags longer than this are cut, so the text always has room.
const MAX_TAG_BYTES: usize = 256;
/// A report heading's summary and a first line are cut to this.
const MAX_HEADING_PART_BYTES: usize = 300;
/// What marks a cut.
const CUT_MARK: &str = "…";

/// The longest prefix of `text` whose JSON-escaped length is at most `max`, ending on a UTF-8
/// boundary.
fn escaped_prefix(text: &str, max: usize) -> &str {
    let mut used = 0;
    for (index, c) in text.char_indices() {
        used += json_escaped_len(c.encode_utf8(&mut [0; 4]));
        if used > max {
            return whole_marks(&text[..index]);
        }
    }
    text
}

/// `cut` (a prefix of a longer text) without a `[redacted:KIND]` it ends inside: a mark is
/// never cut in half (issue 37, item 3).
fn whole_marks(cut: &str) -> &str {
    match cut.rfind(crate::mask::MARK_START) {
        Some(at) if !cut[at..].contains(']') => &cut[..at],
        _ => cut,
    }
}

/// What the gateway's symbols step adds to a report's heading: the structured
/// fields and the line the log shows under the heading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeadingExtras {
    /// The report's fingerprint ([`ReportView::fingerprint`]).
    pub fingerprint: String,
    /// The frame blamed ([`ReportView::blamed_frame`]).
    pub blamed_frame: Option<String>,
    /// The reports grouped under this one ([`ReportView::occurrences`]).
    pub occurrences: Occurrences,
    /// `None` without a symbols directory.
    pub symbols: Option<String>,
    /// `Java crash ×3 (first 10:02:11, last 10:04:40) IllegalStateException at … · …`.
    pub detail: String,
}

/// One part of a heading (a blamed frame, a symbols account), on one line and cut to what a
/// heading holds: the same bound wherever such a part is shown.
pub fn heading_part(text: &str) -> String {
    cut_marked(&one_line(text), MAX_HEADING_PART_BYTES).0
}

impl HeadingExtras {
    /// The extras with every part cut to what a heading holds.
    pub fn cut_to_heading(mut self) -> HeadingExtras {
        self.blamed_frame = self.blamed_frame.as_deref().map(heading_part);
        self.symbols = self.symbols.as_deref().map(heading_part);
        self.detail = cut_marked(&one_line(&self.detail), MAX_DETAIL_BYTES).0;
        self
    }
}

/// The most the line under a heading (group, fingerprint, symbols) may hold.
const MAX_DETAIL_BYTES: usize = 1_000;

/// A message within [`MAX_MESSAGE_BYTES`] JSON-escaped bytes: itself, or its start with a mark.
pub fn bounded_message(message: String) -> String {
    if json_escaped_len(&message) <= MAX_MESSAGE_BYTES {
        return message;
    }
    let piece = escaped_prefix(&message, MAX_MESSAGE_BYTES - CUT_MARK.len());
    format!("{piece}{CUT_MARK}")
}

/// The largest prefix of `text` of at most `max` bytes that ends on a UTF-8 boundary and
/// not inside a `[redacted:KIND]` mark (a mark is never cut in half: issue 37, item 3).
pub fn cut_utf8(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while end > 0 && !text.is_char_boundary(end) {
        end -= 1;
    }
    whole_marks(&text[..end])
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

/// Whether a report is the app's own: where reports name the app's process by its package
/// (Android), the package itself or one of its `package:name` processes; otherwise (an iPhone
/// report names the executable) the driver's own match by the bundle id in the header stands.
pub fn report_is_the_apps(
    report: &CrashReport,
    info: &AppInfo,
    capabilities: Capabilities,
) -> bool {
    if !capabilities.reports_name_package {
        return true;
    }
    let app = info.app.as_str();
    report.process == app
        || report
            .process
            .strip_prefix(app)
            .is_some_and(|rest| rest.starts_with(':'))
}

/// Keeps only the lines that are `info`'s own, and returns them with how many lines of other
/// uids were dropped.
///
/// `line_uids` is the driver's [`phonelogs_driver::Capabilities::line_uids`]. On such a driver
/// the uid is the only proof a line is the app's, so an app without a uid, or a line without
/// one, is an error: nothing is passed on unchecked. On a driver whose lines carry no uid (the
/// iPhone's, which reads per pid), a line that does carry one must carry the app's.
pub fn own_lines(
    lines: Vec<LogLine>,
    info: &AppInfo,
    line_uids: bool,
) -> phonelogs_driver::Result<(Vec<LogLine>, usize)> {
    let uid = match info.uid {
        Some(uid) => uid,
        None if line_uids => {
            return Err(phonelogs_driver::Error::backend(format!(
                "the driver named no uid for {}, so its lines cannot be checked",
                info.app
            )));
        }
        None => return Ok((lines, 0)),
    };
    if line_uids && lines.iter().any(|line| line.uid.is_none()) {
        return Err(phonelogs_driver::Error::backend(format!(
            "the driver returned a line of {} without a uid, so it cannot be checked",
            info.app
        )));
    }
    let before = lines.len();
    let kept: Vec<LogLine> = lines
        .into_iter()
        .filter(|line| line.uid.is_none_or(|line_uid| line_uid == uid))
        .collect();
    let dropped = before - kept.len();
    Ok((kept, dropped))
}

/// A phone's time as the lines show it, `15:04:05.123` on the computer's clock (`local`).
///
/// Checked: a phone's clock or a damaged dump can give a time at the `time` crate's limit, where
/// `to_offset` panics when the local date leaves the range (the end of year 9999 east of UTC);
/// such a time is shown in the phone's own offset.
pub fn clock(time: OffsetDateTime, local: UtcOffset) -> String {
    time.checked_to_offset(local)
        .unwrap_or(time)
        .format(format_description!(
            "[hour]:[minute]:[second].[subsecond digits:3]"
        ))
        .unwrap_or_else(|_| "??:??:??.???".to_owned())
}

/// Renders one line: `15:04:05.123 Tag: text`, at most 2,000 bytes.
pub fn render_line(line: &LogLine, local: UtcOffset) -> (String, LineView) {
    let (prefix, text, suffix, view) = line_parts(line, local, "");
    (format!("{prefix}{text}{suffix}"), view)
}

/// A line's rendered parts: `15:04:05.123 Tag: `, the text cut so that the whole row stays
/// within 2,000 bytes with `suffix` (a fold's `(×37 until …)`), and the suffix.
fn line_parts(
    line: &LogLine,
    local: UtcOffset,
    suffix: &str,
) -> (String, String, String, LineView) {
    let time = clock(line.time, local);
    let (tag, _) = cut_marked(&shown(&line.tag), MAX_TAG_BYTES);
    let prefix = format!("{time} {tag}: ");
    // The split made every line one line already; a caller that did not split still gets one.
    let (text, cut) = cut_marked(
        &shown(&line.text),
        MAX_LINE_BYTES - prefix.len() - suffix.len(),
    );
    let view = LineView {
        time,
        level: line.level.name().to_owned(),
        tag,
        text: text.clone(),
        pid: line.pid,
        cut,
        lines: 1,
        until: None,
        masked: 0,
        marker: None,
    };
    (prefix, text, suffix.to_owned(), view)
}

/// A row's rendered parts (see [`line_parts`]): a line with its fold, or a marker
/// (`15:04:05.123 ── process 4711 started`).
fn row_parts(row: &Row, local: UtcOffset) -> (String, String, String, LineView) {
    if let Some(marker) = &row.marker {
        let time = clock(row.line.time, local);
        let prefix = format!("{time} ");
        // A name the phone gave (an executable, a process) is cut as a heading's parts are.
        let marker = ProcessMarker {
            process: marker.process.as_deref().map(heading_part),
            ..marker.clone()
        };
        let text = marker.text();
        let view = LineView {
            time,
            level: row.line.level.name().to_owned(),
            tag: String::new(),
            text: text.clone(),
            pid: row.line.pid,
            cut: false,
            lines: 0,
            until: None,
            masked: 0,
            marker: Some(marker),
        };
        return (prefix, text, String::new(), view);
    }
    let until = row.until.map(|t| clock(t, local));
    let suffix = match (&until, row.count) {
        (Some(until), count) if count > 1 => format!(" (\u{d7}{count} until {until})"),
        _ => String::new(),
    };
    let (prefix, text, suffix, mut view) = line_parts(&row.line, local, &suffix);
    view.lines = row.count;
    view.until = until.filter(|_| row.count > 1);
    view.masked = row.masked;
    (prefix, text, suffix, view)
}

/// Rows laid out within the cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedLines {
    /// The log: one rendered row each, oldest first, each ending in `\n`.
    pub log: String,
    /// The rows shown, oldest first.
    pub views: Vec<LineView>,
    /// How many of the log lines shown held characters that hide or turn text around
    /// (bidirectional controls, zero-width characters), shown written out as `\u{202e}`.
    pub hidden: usize,
    /// How many log lines the rows shown stand for.
    pub shown: usize,
    /// How many older log lines the cap left out.
    pub left_out: usize,
    /// How many of the log lines shown were cut at 2,000 bytes.
    pub cut: usize,
    /// How many of the lines shown are repeats folded into the row before.
    pub folded: usize,
    /// How many secrets were masked in the lines shown.
    pub masked: usize,
}

/// Renders lines (oldest first) within `cap` JSON-escaped bytes, each its own row.
#[cfg(test)]
pub fn render_lines(lines: &[LogLine], local: UtcOffset, cap: usize) -> RenderedLines {
    let rows: Vec<Row> = lines
        .iter()
        .map(|line| Row {
            line: line.clone(),
            count: 1,
            until: None,
            masked: 0,
            marker: None,
        })
        .collect();
    render_rows(&rows, local, cap)
}

/// What a logs result shows of `lines` (the app's own, oldest first, each one line of text):
/// masked (unless `mask` is false: the person unmasked the app), with process markers, repeats
/// folded when `fold`, laid out within `cap` JSON-escaped bytes on the computer's clock
/// (`local`). The steps of `Session::logs` after the read, for embedders and benchmarks.
pub fn present_lines(
    lines: Vec<LogLine>,
    local: time::UtcOffset,
    cap: usize,
    (mask, fold): (bool, bool),
) -> RenderedLines {
    let lines = crate::masked::shown_lines(&lines, mask.then(crate::mask::masker));
    let options = crate::rows::RowOptions {
        fold,
        processes: &[],
        masker: None,
    };
    lay_out_lines(lines, options, local, cap)
}

/// The one call a logs result makes of the view after its read: the rows of `lines` (masked
/// already, oldest first; process markers, repeats folded as `options` say) rendered within
/// `cap` JSON-escaped bytes on the computer's clock (`local`).
pub fn lay_out_lines(
    lines: Vec<crate::masked::ShownLine>,
    options: crate::rows::RowOptions<'_>,
    local: UtcOffset,
    cap: usize,
) -> RenderedLines {
    render_rows(&crate::rows::rows(lines, options), local, cap)
}

/// Renders rows (oldest first) within `cap` JSON-escaped bytes: the newest are kept, shown
/// oldest first, and the log lines of the older rows that did not fit are counted.
pub fn render_rows(rows: &[Row], local: UtcOffset, cap: usize) -> RenderedLines {
    let mut rendered: Vec<(String, String, String, LineView)> =
        rows.iter().map(|row| row_parts(row, local)).collect();
    let cost = |(prefix, text, suffix, _): &(String, String, String, LineView)| {
        // The row and its newline, which JSON writes as `\n`.
        json_escaped_len(prefix) + json_escaped_len(text) + json_escaped_len(suffix) + 2
    };
    let mut total = 0usize;
    let mut keep_from = rendered.len();
    for (index, parts) in rendered.iter().enumerate().rev() {
        let cost = cost(parts);
        if total + cost > cap {
            break;
        }
        total += cost;
        keep_from = index;
    }
    // A cap so small that not even the newest row fits whole (a 2,000-byte line of control
    // characters escapes to six times that) still shows the newest row, cut to fit.
    if keep_from == rendered.len()
        && let Some((prefix, text, suffix, view)) = rendered.last_mut()
    {
        let fixed = 2 + json_escaped_len(prefix) + json_escaped_len(suffix) + CUT_MARK.len();
        let piece = escaped_prefix(text, cap.saturating_sub(fixed)).to_owned();
        if !piece.is_empty() {
            *text = format!("{piece}{CUT_MARK}");
            view.text = text.clone();
            view.cut = true;
            keep_from -= 1;
        }
    }
    let left_out = rows[..keep_from].iter().map(|r| r.count).sum();
    let hidden = rows[keep_from..]
        .iter()
        .filter(|r| {
            r.line.tag.contains(crate::lines::hides) || r.line.text.contains(crate::lines::hides)
        })
        .map(|r| r.count)
        .sum();
    let mut log = String::with_capacity(total);
    let mut views = Vec::with_capacity(rendered.len() - keep_from);
    for (prefix, text, suffix, view) in rendered.into_iter().skip(keep_from) {
        log.push_str(&prefix);
        log.push_str(&text);
        log.push_str(&suffix);
        log.push('\n');
        views.push(view);
    }
    let shown: usize = views.iter().map(|v| v.lines).sum();
    let line_rows = views.iter().filter(|v| v.marker.is_none()).count();
    RenderedLines {
        log,
        shown,
        left_out,
        cut: views.iter().filter(|v| v.cut).map(|v| v.lines).sum(),
        folded: shown - line_rows,
        masked: views.iter().map(|v| v.masked).sum(),
        hidden,
        views,
    }
}

/// A report's heading, as the log shows it and as its structured copy lists it.
struct Heading {
    line: String,
    time: String,
    process: String,
    summary: String,
}

/// The heading of a report: kind, time, pid, process and summary on one line.
fn heading(report: &CrashReport) -> Heading {
    let time = report
        .time
        .format(&Rfc3339)
        .unwrap_or_else(|_| report.time.to_string());
    let (process, _) = cut_marked(&one_line(&report.process), MAX_HEADING_PART_BYTES);
    let (summary, _) = cut_marked(&one_line(&report.summary), MAX_HEADING_PART_BYTES);
    let pid = report.pid.map(|p| format!(", pid {p}")).unwrap_or_default();
    Heading {
        line: format!(
            "{} at {time}{pid}, {process}: {summary}",
            report.kind.name()
        ),
        time,
        process,
        summary,
    }
}

fn first_line(text: &str) -> String {
    let line = text.split(is_line_end).next().unwrap_or("");
    cut_marked(line, MAX_HEADING_PART_BYTES).0
}

/// Reports laid out within the cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedReports {
    /// The log: each report's heading line, its text as shown, and a blank line.
    pub log: String,
    /// The reports shown, newest first.
    pub views: Vec<ReportView>,
    /// How many older reports the cap left out (only when not even their headings fit).
    pub left_out: usize,
    /// How many of the reports shown have their text cut short or only their first line.
    pub cut: usize,
}

/// Lays out reports (newest first) within `cap` JSON-escaped bytes, the headings' structured
/// copies included: every report's heading, the texts whole while they fit, then the newest of
/// the rest cut short and the others' first lines. Only when a cap is so small that not even
/// every heading and first line fits are the oldest reports left out, and counted.
#[cfg(test)]
pub fn render_reports(reports: &[CrashReport], cap: usize) -> RenderedReports {
    render_reports_with(reports, &[], cap, None)
}

/// A report and its heading's extras with their secrets masked, and how many there were: the
/// process, the summary, the text, and the blamed frame and line under the heading.
fn mask_report(
    report: &CrashReport,
    extras: Option<&HeadingExtras>,
    masker: Option<&Masker>,
) -> (CrashReport, Option<HeadingExtras>, usize) {
    let (mut report, mut extras) = (report.clone(), extras.cloned());
    let Some(masker) = masker else {
        return (report, extras, 0);
    };
    let mut count = 0;
    let mut mask = |text: &mut String| {
        let masked = masker.text(text);
        count += masked.count;
        if let std::borrow::Cow::Owned(new) = masked.text {
            *text = new;
        }
    };
    mask(&mut report.process);
    mask(&mut report.summary);
    mask(&mut report.text);
    if let Some(extras) = extras.as_mut() {
        mask(&mut extras.detail);
        if let Some(frame) = extras.blamed_frame.as_mut() {
            mask(frame);
        }
    }
    (report, extras, count)
}

/// A report's heading line (and the line under it, with extras), its view with its first line
/// as text, and what the heading costs in all.
fn prepare_report(
    report: &CrashReport,
    extras: Option<&HeadingExtras>,
) -> (String, ReportView, usize) {
    // A section of the log is "heading\nbody\n\n"; in JSON each newline is two bytes.
    const SECTION_NEWLINES: usize = 3 * 2;
    let head = heading(report);
    let mut line = head.line;
    if let Some(extras) = extras {
        line.push('\n');
        line.push_str(&extras.detail);
    }
    let mut view = ReportView {
        kind: report.kind.name().to_owned(),
        time: head.time,
        pid: report.pid,
        process: head.process,
        summary: head.summary,
        text: String::new(),
        text_shown: TextShown::Whole,
        cut: false,
        fingerprint: extras.map(|e| e.fingerprint.clone()),
        blamed_frame: extras.and_then(|e| e.blamed_frame.clone()),
        occurrences: extras.map(|e| e.occurrences.clone()),
        symbols: extras.and_then(|e| e.symbols.clone()),
        masked: 0,
    };
    let fixed = json_escaped_len(&line) + SECTION_NEWLINES + heading_cost(&view);
    view.text = first_line(&report.text);
    (line, view, fixed)
}

/// [`render_reports`] with what the symbols step adds to each heading (`extras[i]` for
/// `reports[i]`; none past its end): the line under the heading is charged with the heading.
pub fn render_reports_with(
    reports: &[CrashReport],
    extras: &[HeadingExtras],
    cap: usize,
    masker: Option<&Masker>,
) -> RenderedReports {
    let masked: Vec<(CrashReport, Option<HeadingExtras>, usize)> = reports
        .iter()
        .enumerate()
        .map(|(index, report)| mask_report(report, extras.get(index), masker))
        .collect();
    let mut prepared = Vec::with_capacity(reports.len());
    for (report, extras, count) in &masked {
        let (line, mut view, fixed) = prepare_report(report, extras.as_ref());
        view.masked = *count;
        prepared.push((report, line, view, fixed));
    }
    // Newest first, the reports whose heading and first line fit; the rest are left out.
    let mut budget = cap;
    let mut kept = 0;
    for (_, _, view, fixed) in &prepared {
        let least = fixed + json_escaped_len(&view.text);
        if least > budget {
            break;
        }
        budget -= least;
        kept += 1;
    }
    let left_out = prepared.len() - kept;
    prepared.truncate(kept);
    // `budget` now holds what is left once every kept heading and first line is paid for; a
    // text shown beyond its first line spends from it.
    let mut overflowing = false;
    let mut log = String::new();
    let mut views = Vec::with_capacity(kept);
    for (report, head, mut view, _) in prepared {
        let whole = report.text.trim_end();
        let first = std::mem::take(&mut view.text);
        let (body, shown) = if overflowing {
            (first, TextShown::FirstLine)
        } else {
            let laid = lay_out_text(whole, first, &mut budget);
            overflowing = laid.1 != TextShown::Whole;
            laid
        };
        // A text of one line shown as its first line is shown whole.
        let shown = if shown == TextShown::FirstLine && body == whole {
            TextShown::Whole
        } else {
            shown
        };
        log.push_str(&head);
        log.push('\n');
        log.push_str(&body);
        log.push_str("\n\n");
        view.text = body;
        view.text_shown = shown;
        view.cut = shown != TextShown::Whole;
        views.push(view);
    }
    let cut = views.iter().filter(|v| v.cut).count();
    RenderedReports {
        log,
        views,
        left_out,
        cut,
    }
}

/// One report's text within what is left of the budget (which its first line is already paid
/// from): whole when it fits, else cut short when more than its first line fits, else its first
/// line. Spends from `budget` what it shows beyond the first line.
fn lay_out_text(whole: &str, first: String, budget: &mut usize) -> (String, TextShown) {
    let room = *budget + json_escaped_len(&first);
    let whole_cost = json_escaped_len(whole);
    if whole_cost <= room {
        *budget = room - whole_cost;
        return (whole.to_owned(), TextShown::Whole);
    }
    let piece = escaped_prefix(whole, room.saturating_sub(CUT_MARK.len()));
    if piece.len() > first.len() {
        let body = format!("{piece}{CUT_MARK}");
        *budget = room.saturating_sub(json_escaped_len(&body));
        (body, TextShown::Cut)
    } else {
        (first, TextShown::FirstLine)
    }
}

/// Cuts a native backtrace's text so that the whole backtrace, as JSON, stays within `cap`
/// bytes: its other fields (the thread summaries) are kept, and the text's end goes, with a mark.
/// Returns `(shown, total)` bytes of the text when it was cut, so the message can say so.
pub fn cap_backtrace_text(backtrace: &mut NativeBacktrace, cap: usize) -> Option<(usize, usize)> {
    let text = std::mem::take(&mut backtrace.text);
    let room = cap.saturating_sub(backtrace_cost_without_text(backtrace));
    if json_escaped_len(&text) <= room {
        backtrace.text = text;
        return None;
    }
    let total = text.len();
    let piece = escaped_prefix(&text, room.saturating_sub(CUT_MARK.len()));
    let shown = piece.len();
    backtrace.text = format!("{piece}{CUT_MARK}");
    Some((shown, total))
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

    /// Issue 37, item 3: every cut (a line's 2,000 bytes, the cap's) leaves a
    /// `[redacted:KIND]` whole or out, never half of it.
    #[test]
    fn a_cut_never_splits_a_mark() {
        let text = format!("{}[redacted:stripe-access-token] tail", "x".repeat(1_990));
        for max in 1_990..=2_025 {
            let cut = cut_utf8(&text, max);
            assert!(
                !cut.contains("[redacted:") || cut.contains("[redacted:stripe-access-token]"),
                "{max}: {}",
                &cut[1_980..]
            );
            let escaped = escaped_prefix(&text, max);
            assert!(
                !escaped.contains("[redacted:") || escaped.contains("token]"),
                "{max}"
            );
        }
        let (rendered, _) = render_line(&line(&text), offset!(UTC));
        assert!(rendered.len() <= MAX_LINE_BYTES);
        assert!(!rendered.contains("[redacted:s"), "{}", &rendered[1_990..]);
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
        let RenderedLines {
            log,
            views,
            left_out,
            cut,
            ..
        } = render_lines(&lines, offset!(UTC), MAX_RESULT_BYTES);
        assert!(json_escaped_len(&log) <= MAX_RESULT_BYTES);
        assert_eq!(views.len() + left_out, 200);
        assert!(left_out > 0);
        assert_eq!(cut, 0);
        assert!(views.last().unwrap().text.starts_with("0199"));
        assert!(views.first().unwrap().text < views.last().unwrap().text);
    }

    #[test]
    fn the_cap_counts_json_escapes_so_it_holds_for_the_text_and_the_structured_copy() {
        // Quotes and newlines in the text take two bytes each once escaped.
        let lines: Vec<LogLine> = (0..300)
            .map(|i| line(&format!("{i:04} {}", "\"q\" \\ ".repeat(60))))
            .collect();
        let rendered = render_lines(&lines, offset!(UTC), 8 * 1024);
        assert!(json_escaped_len(&rendered.log) <= 8 * 1024);
        assert!(rendered.log.len() < json_escaped_len(&rendered.log));
        assert_eq!(rendered.views.len() + rendered.left_out, 300);
        assert_eq!(rendered.log.lines().count(), rendered.views.len());
    }

    #[test]
    fn the_newest_line_is_shown_cut_when_not_even_it_fits_whole() {
        // Controls are shown as `\xNN`, so the widest JSON escape left is a quote's two bytes:
        // a 2,000-byte line of quotes fits the smallest client cap, and does not fit 3 KB.
        let cap = 3 * 1024;
        let lines = vec![line("older"), line(&"\"".repeat(1_900))];
        let rendered = render_lines(&lines, offset!(UTC), cap);
        assert!(json_escaped_len(&rendered.log) <= cap);
        assert_eq!(
            (rendered.views.len(), rendered.left_out, rendered.cut),
            (1, 1, 1)
        );
        assert!(rendered.log.ends_with("…\n"), "{:?}", rendered.log);
    }

    #[test]
    fn only_the_apps_uid_passes() {
        let mut info = AppInfo {
            app: AppId::new("a.b"),
            label: None,
            system: false,
            dev_build: false,
            uid: Some(10123),
            shared_uid: false,
            version: None,
            installed_at: None,
            install_id: None,
        };
        let mut other = line("other");
        other.uid = Some(10200);
        let mut unknown = line("unknown");
        unknown.uid = None;
        let (kept, dropped) = own_lines(vec![line("mine"), other.clone()], &info, true).unwrap();
        assert_eq!(kept.len(), 1);
        assert_eq!(dropped, 1);
        // A driver whose lines carry uids: a line without one is an error, never a pass.
        assert!(own_lines(vec![line("mine"), unknown.clone()], &info, true).is_err());
        // Nor may such a driver leave the app's uid out.
        info.uid = None;
        assert!(own_lines(vec![line("mine")], &info, true).is_err());
        // A driver whose lines carry no uid (the iPhone's) passes them; one that carries
        // another uid is still dropped.
        let mut ios_line = line("ios");
        ios_line.uid = None;
        assert_eq!(
            own_lines(vec![ios_line.clone()], &info, false).unwrap().0,
            vec![ios_line.clone()]
        );
        info.uid = Some(10123);
        let (kept, dropped) = own_lines(vec![ios_line, other], &info, false).unwrap();
        assert_eq!((kept.len(), dropped), (1, 1));
    }

    fn report(seconds: i64, text: String) -> CrashReport {
        CrashReport {
            kind: CrashKind::JavaCrash,
            time: datetime!(2026-11-30 10:00 UTC) + time::Duration::seconds(seconds),
            pid: Some(42),
            process: "com.example.app".into(),
            summary: format!("summary {seconds}"),
            text,
            build: None,
        }
    }

    #[test]
    fn reports_fit_whole_when_small() {
        let reports = vec![
            report(2, "first\nsecond\n".into()),
            report(1, "older\n".into()),
        ];
        let RenderedReports {
            log,
            views,
            left_out,
            cut,
        } = render_reports(&reports, MAX_RESULT_BYTES);
        assert_eq!((cut, left_out), (0, 0));
        assert!(log.starts_with("java_crash at 2026-11-30T10:00:02Z, pid 42, com.example.app: summary 2\nfirst\nsecond\n\n"));
        assert!(
            views
                .iter()
                .all(|v| !v.cut && v.text_shown == TextShown::Whole)
        );
    }

    #[test]
    fn big_reports_keep_headings_cut_the_newest_that_overflows_and_show_first_lines() {
        let big = |tag: &str| format!("{tag} first line\n{}", "y".repeat(40_000));
        let reports = vec![
            report(3, big("A")),
            report(2, big("B")),
            report(1, big("C")),
        ];
        let RenderedReports {
            log,
            views,
            left_out,
            cut,
        } = render_reports(&reports, MAX_RESULT_BYTES);
        let headings: usize = views.iter().map(heading_cost).sum();
        assert!(
            json_escaped_len(&log) + headings <= MAX_RESULT_BYTES,
            "{}",
            log.len()
        );
        assert_eq!(views[0].text_shown, TextShown::Whole);
        assert!(views[1].cut && views[1].text.ends_with(CUT_MARK) && views[1].text.len() > 1_000);
        assert_eq!(views[1].text_shown, TextShown::Cut);
        assert_eq!(views[2].text, "C first line");
        assert_eq!(views[2].text_shown, TextShown::FirstLine);
        assert_eq!((cut, left_out), (2, 0));
        for summary in ["summary 3", "summary 2", "summary 1"] {
            assert!(log.contains(summary));
        }
    }

    #[test]
    fn a_huge_backtrace_text_is_cut_to_the_cap_with_its_threads_kept() {
        // Read from JSON, so the fields a driver may add later keep their defaults here.
        let mut backtrace: NativeBacktrace = serde_json::from_value(serde_json::json!({
            "serial": "emulator-5554",
            "pid": 1224,
            "process_name": "com.example",
            "abi": "x86_64",
            "thread_count": 1,
            "threads": [{"name": "main", "sys_tid": 1224, "frame_count": 3}],
            "text": "#00 pc 0000 \"libc.so\"\n".repeat(20_000),
        }))
        .unwrap();
        let cut = cap_backtrace_text(&mut backtrace, MAX_RESULT_BYTES);
        let written = serde_json::to_string(&backtrace).unwrap_or_default();
        assert!(written.len() <= MAX_RESULT_BYTES, "{}", written.len());
        // The room for the other fields is an upper bound (keys and the widest numbers), so the
        // text uses all but a few hundred bytes of the cap.
        assert!(written.len() > MAX_RESULT_BYTES - 256, "{}", written.len());
        let (shown, total) = cut.unwrap();
        assert_eq!(total, 20_000 * 22);
        assert_eq!(backtrace.text.len(), shown + CUT_MARK.len());
        assert_eq!(backtrace.threads.len(), 1);
        let mut small = backtrace.clone();
        small.text = "#00 pc 0000 libc.so\n".into();
        assert_eq!(cap_backtrace_text(&mut small, MAX_RESULT_BYTES), None);
    }

    #[test]
    fn a_tiny_cap_leaves_out_the_oldest_reports_and_counts_them() {
        // Headings of about 350 bytes, listed twice (in the log and structured): 10 are too many
        // for 4 KB.
        let reports: Vec<CrashReport> = (0..10)
            .rev()
            .map(|i| {
                let mut report = report(i, format!("first {i}\n{}", "w".repeat(5_000)));
                report.summary = format!("summary {i} {}", "s".repeat(250));
                report
            })
            .collect();
        let rendered = render_reports(&reports, MIN_RESULT_CAP);
        let headings: usize = rendered.views.iter().map(heading_cost).sum();
        assert!(json_escaped_len(&rendered.log) + headings <= MIN_RESULT_CAP);
        assert!(rendered.left_out > 0);
        assert_eq!(rendered.views.len() + rendered.left_out, 10);
        assert!(
            rendered.views[0].summary.starts_with("summary 9 "),
            "the newest stays"
        );
        for view in &rendered.views {
            assert!(rendered.log.contains(&view.summary));
        }
    }
}
