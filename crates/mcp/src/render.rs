//! Turns the tools' outputs into MCP results that stay under the 64 KB result cap.
//!
//! A `phone_logs` result carries the same lines twice: as text (the message, then the log text
//! exactly as the gateway rendered it) and as `structuredContent`. Clients cap what they pass on
//! to the model, so the whole serialized result must fit in [`RESULT_BUDGET`]. When it would not,
//! the newest material is kept: the oldest lines go first (the agent is usually after the end of
//! the story), and for crash reports, which come newest first, the tail of the text goes.

use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;

use crate::output::{DebugEnvelope, DevicesOutput, PhoneLogsOutput};

/// The most bytes one tool result may take once serialized as JSON, with room left for the
/// JSON-RPC envelope around it.
pub const RESULT_BUDGET: usize = 64 * 1024 - 1024;

/// What the MCP layer adds in front of a shortened log text.
const SHORTENED_LINES_NOTE: &str = "[older lines left out to stay under the 64 KB result cap]\n";
/// What the MCP layer adds after a shortened crash report text.
const SHORTENED_REPORTS_NOTE: &str = "\n[the rest left out to stay under the 64 KB result cap]";

/// How many bytes `text` takes inside a JSON string, without the quotes. This is what
/// `serde_json` writes: short escapes for quote, backslash and the common controls, `\u00XX` for
/// the other controls, and everything else as UTF-8.
pub fn json_escaped_len(text: &str) -> usize {
    text.chars()
        .map(|c| match c {
            '"' | '\\' | '\n' | '\r' | '\t' | '\u{08}' | '\u{0c}' => 2,
            c if (c as u32) < 0x20 => 6,
            c => c.len_utf8(),
        })
        .sum()
}

fn serialized_len<T: Serialize>(value: &T) -> usize {
    // Serializing our own plain structs cannot fail; a failure would only make the budget
    // check conservative, so it counts as "too big".
    serde_json::to_string(value).map_or(usize::MAX, |s| s.len())
}

/// Keeps the newest lines of a log text (oldest first) that fit in `allowed` escaped bytes.
fn keep_tail_lines(text: &str, allowed: usize) -> String {
    let allowed = allowed.saturating_sub(json_escaped_len(SHORTENED_LINES_NOTE));
    let mut used = 0;
    let mut start = text.len();
    for line in text.split_inclusive('\n').rev() {
        let cost = json_escaped_len(line);
        if used + cost > allowed {
            break;
        }
        used += cost;
        start -= line.len();
    }
    format!("{SHORTENED_LINES_NOTE}{}", &text[start..])
}

/// Keeps the start of a text (newest report first) that fits in `allowed` escaped bytes, cut at
/// a character boundary.
fn keep_head(text: &str, allowed: usize) -> String {
    let allowed = allowed.saturating_sub(json_escaped_len(SHORTENED_REPORTS_NOTE));
    let mut used = 0;
    let mut end = 0;
    for (index, c) in text.char_indices() {
        let cost = json_escaped_len(c.encode_utf8(&mut [0; 4]));
        if used + cost > allowed {
            break;
        }
        used += cost;
        end = index + c.len_utf8();
    }
    format!("{}{SHORTENED_REPORTS_NOTE}", &text[..end])
}

/// Builds the `phone_logs` result: text content = the message, then the gateway's log text;
/// `structuredContent` = `output`. Shortens both, newest kept, when together they would pass
/// [`RESULT_BUDGET`].
pub fn phone_logs_result(mut output: PhoneLogsOutput, log: &str) -> CallToolResult {
    let (output_fit, text) = fit_phone_logs(&mut output, log);
    debug_assert!(output_fit);
    let is_error = output.status == crate::output::LogsStatus::Error;
    let structured = serde_json::to_value(&output).unwrap_or(serde_json::Value::Null);
    let mut result = if is_error {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    };
    result.structured_content = Some(structured);
    result
}

/// Shortens `output` and the log text in place until both fit; returns whether they do and the
/// text content.
fn fit_phone_logs(output: &mut PhoneLogsOutput, log: &str) -> (bool, String) {
    let compose = |message: &str, log: &str| {
        if log.is_empty() {
            message.to_owned()
        } else {
            format!("{message}\n\n{log}")
        }
    };
    // The JSON around the two payloads: the result object's keys, the content block, isError.
    const FRAME: usize = 256;
    let text = compose(&output.message, log);
    if serialized_len(output) + json_escaped_len(&text) + FRAME <= RESULT_BUDGET {
        return (true, text);
    }

    output.truncated = true;
    let crashes = !output.reports.is_empty();
    let lines = std::mem::take(&mut output.lines);
    let mut reports = std::mem::take(&mut output.reports);
    let report_texts: Vec<String> = reports
        .iter_mut()
        .map(|r| std::mem::take(&mut r.text))
        .collect();
    output.reports = reports;
    // What stays whatever happens: the status, message, ids and the report headings.
    let base = serialized_len(output) + json_escaped_len(&output.message) + FRAME + 16;
    let available = RESULT_BUDGET.saturating_sub(base);
    let structured_total: usize = lines.iter().map(|l| serialized_len(l) + 1).sum::<usize>()
        + report_texts
            .iter()
            .map(|t| json_escaped_len(t))
            .sum::<usize>();
    let log_len = json_escaped_len(log);

    // The text gets at least half of what is left, more when the structured copy is small.
    let text_allowed = (available / 2).max(available.saturating_sub(structured_total));
    let log = if log_len > text_allowed {
        if crashes {
            keep_head(log, text_allowed)
        } else {
            keep_tail_lines(log, text_allowed)
        }
    } else {
        log.to_owned()
    };
    let mut structured_allowed = available.saturating_sub(json_escaped_len(&log));

    // Newest lines first, until the structured share is used up.
    let mut kept = Vec::new();
    for line in lines.into_iter().rev() {
        let cost = serialized_len(&line) + 1;
        if cost > structured_allowed {
            output.omitted += 1;
            continue;
        }
        structured_allowed -= cost;
        kept.push(line);
    }
    kept.reverse();
    output.lines = kept;

    // Report texts, newest (first) first; one that does not fit whole is cut.
    for (report, text) in output.reports.iter_mut().zip(report_texts) {
        let cost = json_escaped_len(&text);
        if cost <= structured_allowed {
            structured_allowed -= cost;
            report.text = text;
        } else if structured_allowed > 64 {
            report.text = keep_head(&text, structured_allowed);
            structured_allowed = structured_allowed.saturating_sub(json_escaped_len(&report.text));
        }
    }
    let text = compose(&output.message, &log);
    let fits = serialized_len(output) + json_escaped_len(&text) + FRAME <= RESULT_BUDGET;
    (fits, text)
}

/// Builds the `list_devices` result: one line per device as text, the list as structured
/// content.
pub fn devices_result(output: &DevicesOutput) -> CallToolResult {
    let mut text = output.message.clone();
    for device in &output.devices {
        text.push_str(&format!(
            "\n{}  {}  {}  {}",
            device.id,
            device.platform,
            device.model.as_deref().unwrap_or("-"),
            device.state
        ));
    }
    let structured = serde_json::to_value(output).unwrap_or(serde_json::Value::Null);
    let mut result = if output.status == "ok" {
        CallToolResult::success(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::error(vec![ContentBlock::text(text)])
    };
    result.structured_content = Some(structured);
    result
}

/// Builds a debugging tool's result: the `{status, message, data, error}` envelope as JSON text
/// (as the source server returns it) and as structured content. A `data.text` too long for the
/// budget (a huge backtrace) is cut at its end.
pub fn debug_result(envelope: DebugEnvelope) -> CallToolResult {
    let build = |envelope: &DebugEnvelope| {
        let text =
            serde_json::to_string_pretty(envelope).unwrap_or_else(|_| envelope.message.clone());
        let structured = serde_json::to_value(envelope).unwrap_or(serde_json::Value::Null);
        let mut result = if envelope.status == "error" {
            CallToolResult::error(vec![ContentBlock::text(text)])
        } else {
            CallToolResult::success(vec![ContentBlock::text(text)])
        };
        result.structured_content = Some(structured);
        result
    };
    let mut result = build(&envelope);
    let full_text = match envelope
        .data
        .as_ref()
        .and_then(|d| d.get("text"))
        .and_then(|t| t.as_str())
    {
        Some(text) => text.to_owned(),
        None => return result,
    };
    // The text appears twice, and inside the text copy it is escaped twice, so the share it may
    // take is found by measuring: each round scales it down by how far over the budget it was.
    let mut allowed = full_text.len();
    for _ in 0..8 {
        let size = serialized_len(&result);
        if size <= RESULT_BUDGET {
            break;
        }
        let over = size - RESULT_BUDGET;
        allowed = allowed.saturating_sub(over / 2 + over / 8 + 64);
        let mut shortened = envelope.clone();
        if let Some(serde_json::Value::Object(data)) = shortened.data.as_mut() {
            data.insert(
                "text".into(),
                serde_json::Value::String(keep_head(&full_text, allowed)),
            );
        }
        result = build(&shortened);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::{LineOut, LogsStatus, ReportOut};

    fn output(lines: Vec<LineOut>, reports: Vec<ReportOut>) -> PhoneLogsOutput {
        PhoneLogsOutput {
            status: LogsStatus::Ok,
            message: "Read lines of Example.".into(),
            approval_id: None,
            rule: None,
            lines,
            reports,
            omitted: 0,
            truncated: false,
        }
    }

    fn line(i: usize, text_len: usize) -> LineOut {
        LineOut {
            time: "10:00:00.000".into(),
            level: "info".into(),
            tag: "Example".into(),
            text: format!("{i:05} {}", "\"x\n".repeat(text_len / 3)),
            pid: Some(42),
        }
    }

    fn render_log(lines: &[LineOut]) -> String {
        lines
            .iter()
            .map(|l| format!("{} {}: {}\n", l.time, l.tag, l.text.replace('\n', " ")))
            .collect()
    }

    fn result_len(result: &CallToolResult) -> usize {
        serde_json::to_string(result)
            .map(|s| s.len())
            .unwrap_or(usize::MAX)
    }

    #[test]
    fn escaped_length_matches_serde_json() {
        for text in [
            "",
            "plain",
            "quote \" and \\ back",
            "tab\tnew\nline\r",
            "\u{1}\u{1f}",
            "é ü 漢字 🦀",
            "\u{7f}",
        ] {
            let written = serde_json::to_string(text).unwrap_or_default();
            assert_eq!(json_escaped_len(text), written.len() - 2, "{text:?}");
        }
    }

    #[test]
    fn a_small_result_is_left_whole() {
        let lines: Vec<LineOut> = (0..10).map(|i| line(i, 30)).collect();
        let log = render_log(&lines);
        let result = phone_logs_result(output(lines.clone(), vec![]), &log);
        let structured: PhoneLogsOutput =
            serde_json::from_value(result.structured_content.clone().unwrap_or_default()).unwrap();
        assert_eq!(structured.lines, lines);
        assert!(!structured.truncated);
        let text = result.content[0]
            .as_text()
            .map(|t| t.text.clone())
            .unwrap_or_default();
        assert_eq!(text, format!("Read lines of Example.\n\n{log}"));
    }

    #[test]
    fn a_big_result_keeps_the_newest_lines_under_the_budget() {
        // 500 lines of about 600 escaped bytes each: far more than 64 KB twice over.
        let lines: Vec<LineOut> = (0..500).map(|i| line(i, 300)).collect();
        let log = render_log(&lines);
        let result = phone_logs_result(output(lines.clone(), vec![]), &log);
        assert!(
            result_len(&result) <= RESULT_BUDGET,
            "{} bytes",
            result_len(&result)
        );
        let structured: PhoneLogsOutput =
            serde_json::from_value(result.structured_content.clone().unwrap_or_default()).unwrap();
        assert!(structured.truncated);
        assert!(!structured.lines.is_empty());
        assert_eq!(
            structured.lines.last(),
            lines.last(),
            "the newest line is kept"
        );
        assert_eq!(structured.omitted + structured.lines.len(), 500);
        let text = result.content[0]
            .as_text()
            .map(|t| t.text.clone())
            .unwrap_or_default();
        assert!(text.contains(SHORTENED_LINES_NOTE));
        assert!(
            text.ends_with(&render_log(&lines[499..])),
            "the text keeps the newest line"
        );
        assert!(
            !text.contains("00000 "),
            "the oldest line is gone from the text"
        );
    }

    #[test]
    fn big_crash_reports_keep_their_headings_and_the_newest_text() {
        let reports: Vec<ReportOut> = (0..10)
            .map(|i| ReportOut {
                kind: "java_crash".into(),
                time: "2026-11-30T10:00:00Z".into(),
                pid: Some(4242),
                process: "com.example".into(),
                summary: format!("crash {i}"),
                text: format!("report {i}\n{}", "\tat frame\n".repeat(1500)),
            })
            .collect();
        let log: String = reports
            .iter()
            .map(|r| format!("{}\n{}\n", r.summary, r.text))
            .collect();
        let result = phone_logs_result(output(vec![], reports), &log);
        assert!(
            result_len(&result) <= RESULT_BUDGET,
            "{} bytes",
            result_len(&result)
        );
        let structured: PhoneLogsOutput =
            serde_json::from_value(result.structured_content.clone().unwrap_or_default()).unwrap();
        assert_eq!(structured.reports.len(), 10, "every heading stays");
        assert!(structured.reports[0].text.starts_with("report 0"));
        let text = result.content[0]
            .as_text()
            .map(|t| t.text.clone())
            .unwrap_or_default();
        assert!(text.contains("crash 0"));
    }

    #[test]
    fn a_huge_backtrace_is_cut_under_the_budget() {
        let envelope = DebugEnvelope {
            status: "success".into(),
            message: "capture_native_backtrace completed successfully.".into(),
            data: Some(
                serde_json::json!({"serial": "emulator-5554", "pid": 1224, "text": "#00 pc 0000 libc.so\n".repeat(20_000)}),
            ),
            error: None,
        };
        let result = debug_result(envelope);
        assert!(
            result_len(&result) <= RESULT_BUDGET,
            "{} bytes",
            result_len(&result)
        );
        let data = &result.structured_content.as_ref().unwrap()["data"];
        assert!(
            data["text"]
                .as_str()
                .unwrap_or_default()
                .ends_with(SHORTENED_REPORTS_NOTE)
        );
        assert_eq!(data["pid"], 1224);
    }
}
