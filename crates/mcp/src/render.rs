//! Turns the tools' outputs into MCP results, without cutting anything: the gateway is the only
//! place a result is cut.
//!
//! Clients pass the model one of the two forms of a result, never both: Claude Code only
//! `JSON.stringify(structuredContent)`, most other clients only the text content. So each form
//! carries the whole result once: the `phone_logs` text content is the message, a blank line and
//! the gateway's log; its `structuredContent` is the status, message, ids, counts and headings
//! with the same log as `log`, byte for byte. The gateway laid that log out within its result
//! cap as JSON-escaped bytes (report headings' structured copies included), so either form is
//! within the cap plus the message and the JSON keys.

use std::borrow::Cow;
use std::collections::HashMap;

use phonelogs_gateway::MAX_MESSAGE_BYTES;
use rmcp::handler::server::router::tool::ToolRoute;
use rmcp::model::{CallToolResult, ContentBlock, MetaObject};

use crate::output::{
    DebugEnvelope, DebugStatusOut, DevicesOutput, DevicesStatus, LogsStatus, PhoneLogsOutput,
};

/// The key of a tool's `_meta` in `tools/list` with which Claude Code raises, for that tool,
/// the size above which it saves a result to a file and shows the model a preview (50,000
/// characters otherwise; see docs/mcp.md).
pub const MAX_RESULT_SIZE_KEY: &str = "anthropic/maxResultSizeChars";
/// The most Claude Code takes for [`MAX_RESULT_SIZE_KEY`].
pub const MAX_RESULT_SIZE_CEILING: usize = 500_000;
/// What a result holds besides its log (within the cap) and its message (within
/// [`MAX_MESSAGE_BYTES`]), as JSON at its widest: every key, the status, the approval id, the
/// rule (at most 300 bytes, each escaped to at most six), the cursor, five counts of 20 digits,
/// `matched`, `error_code`; for a debugging aid, the envelope around its data.
pub const ENVELOPE_BYTES: usize = 4_096;
/// The tools whose results can be large: `phone_logs` and `capture_native_backtrace` are cut
/// to the result cap; the others' are small, or (`get_process_exit_history`, whose length is
/// the phone's) not bounded by the cap, so they declare nothing.
pub const LARGE_RESULT_TOOLS: [&str; 2] = ["phone_logs", "capture_native_backtrace"];

/// The most characters either form of a result can hold at result cap `cap` (the text content,
/// or `structuredContent` as JSON): the cap, the message and the envelope. Characters as a
/// JavaScript client counts them (UTF-16 units) are never more than these UTF-8 bytes. Held by
/// a property test over the one cut (`tests/one_cut.rs`).
pub fn max_result_bytes(cap: usize) -> usize {
    cap + MAX_MESSAGE_BYTES + ENVELOPE_BYTES
}

/// What the large-result tools declare as [`MAX_RESULT_SIZE_KEY`]: [`max_result_bytes`], at
/// most Claude Code's ceiling.
pub fn max_result_chars(cap: usize) -> usize {
    max_result_bytes(cap).min(MAX_RESULT_SIZE_CEILING)
}

/// Puts [`MAX_RESULT_SIZE_KEY`] into the `_meta` of each of [`LARGE_RESULT_TOOLS`], computed
/// from the gateway's result cap, so Claude Code passes their results whole. A cap so large
/// that a result may pass the ceiling is warned about: such a result is saved to a file there.
pub fn declare_result_sizes<S>(routes: &mut HashMap<Cow<'static, str>, ToolRoute<S>>, cap: usize) {
    if max_result_bytes(cap) > MAX_RESULT_SIZE_CEILING {
        tracing::warn!(
            cap,
            "with this result cap a result may pass the 500,000 characters Claude Code passes whole; it saves a larger one to a file"
        );
    }
    for tool in LARGE_RESULT_TOOLS {
        if let Some(route) = routes.get_mut(tool) {
            let meta = route
                .attr
                .meta
                .get_or_insert_with(|| MetaObject(Default::default()));
            meta.0.insert(
                MAX_RESULT_SIZE_KEY.to_owned(),
                serde_json::Value::from(max_result_chars(cap)),
            );
        }
    }
}

/// The text content of a `phone_logs` result: the message, then a blank line and the log when
/// there is one.
pub fn phone_logs_text(message: &str, log: &str) -> String {
    if log.is_empty() {
        message.to_owned()
    } else {
        format!("{message}\n\n{log}")
    }
}

/// Builds the `phone_logs` result: text content = the message, a blank line, then the log;
/// `structuredContent` = `output`, whose `log` is the same text.
pub fn phone_logs_result(output: PhoneLogsOutput) -> CallToolResult {
    let text = phone_logs_text(&output.message, &output.log);
    let is_error = output.status == LogsStatus::Error;
    // Serializing our own plain struct cannot fail; null would fail the client's schema check
    // loudly rather than pass a wrong result quietly.
    let structured = serde_json::to_value(&output).unwrap_or(serde_json::Value::Null);
    let mut result = if is_error {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    };
    result.structured_content = Some(structured);
    result
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
    let mut result = if output.status == DevicesStatus::Ok {
        CallToolResult::success(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::error(vec![ContentBlock::text(text)])
    };
    result.structured_content = Some(structured);
    result
}

/// Builds a debugging tool's result: the `{status, message, data, error}` envelope as JSON text
/// and as structured content. The text is compact JSON, the same bytes as the structured copy,
/// so the gateway's cap on the envelope's data (a backtrace's text) holds for both forms; nothing
/// is cut here.
pub fn debug_result(envelope: DebugEnvelope) -> CallToolResult {
    let text = serde_json::to_string(&envelope).unwrap_or_else(|_| envelope.message.clone());
    let structured = serde_json::to_value(&envelope).unwrap_or(serde_json::Value::Null);
    let mut result = if envelope.status == DebugStatusOut::Error {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    };
    result.structured_content = Some(structured);
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::{ReportHeading, TextShownOut};

    fn output(log: &str, reports: Vec<ReportHeading>) -> PhoneLogsOutput {
        PhoneLogsOutput {
            status: LogsStatus::Ok,
            message: "Read lines of Example.".into(),
            approval_id: None,
            rule: None,
            log: log.into(),
            shown: 1,
            left_out: 0,
            cut: 0,
            folded: 0,
            masked: 0,
            error_code: None,
            reports,
            cursor: None,
            matched: None,
        }
    }

    fn text(result: &CallToolResult) -> String {
        result.content[0]
            .as_text()
            .map(|t| t.text.clone())
            .unwrap_or_default()
    }

    #[test]
    fn the_log_is_passed_on_whole_in_both_forms() {
        // Far more than 64 KB: cutting is the gateway's job, never this layer's.
        let log = "10:00:00.000 Tag: \"quoted\" \\ text\n".repeat(5_000);
        let result = phone_logs_result(output(&log, vec![]));
        assert_eq!(text(&result), format!("Read lines of Example.\n\n{log}"));
        let structured: PhoneLogsOutput =
            serde_json::from_value(result.structured_content.clone().unwrap_or_default()).unwrap();
        assert_eq!(structured.log, log);
        assert!(structured.reports.is_empty());
    }

    #[test]
    fn a_heading_serializes_within_the_gateways_estimate() {
        let heading = ReportHeading {
            kind: "native_crash".into(),
            time: "2026-11-30T10:00:00+01:00".into(),
            pid: Some(u32::MAX),
            process: "com.example \"app\"".into(),
            summary: "SIGSEGV\tat 0x0".into(),
            text_shown: TextShownOut::FirstLine,
            fingerprint: None,
            blamed_frame: None,
            occurrences: None,
            symbols: None,
        };
        let view = phonelogs_gateway::ReportView {
            kind: heading.kind.clone(),
            time: heading.time.clone(),
            pid: heading.pid,
            process: heading.process.clone(),
            summary: heading.summary.clone(),
            text: String::new(),
            text_shown: phonelogs_gateway::TextShown::FirstLine,
            cut: true,
            fingerprint: None,
            blamed_frame: None,
            occurrences: None,
            symbols: None,
            masked: 0,
        };
        let written = serde_json::to_string(&heading).unwrap();
        assert_eq!(written.len() + 1, phonelogs_gateway::heading_cost(&view));
    }

    #[test]
    fn a_grouped_symbolicated_heading_serializes_within_the_gateways_estimate() {
        let occurrences = crate::output::OccurrencesOut {
            count: usize::MAX,
            first: "2026-11-30T10:00:00+01:00".into(),
            last: "2026-11-30T10:04:40+01:00".into(),
            pids: vec![u32::MAX; 10],
        };
        let heading = ReportHeading {
            kind: "java_crash".into(),
            time: "2026-11-30T10:04:40+01:00".into(),
            pid: Some(u32::MAX),
            process: "com.example".into(),
            summary: "java.lang.IllegalStateException: \"x\"".into(),
            text_shown: TextShownOut::Whole,
            fingerprint: Some("0123456789abcdef".into()),
            blamed_frame: Some("Checkout.onResume(Checkout.kt:142)".into()),
            occurrences: Some(occurrences.clone()),
            symbols: Some("mapping com.example/12/mapping.txt (3 frames)\t".into()),
        };
        let view = phonelogs_gateway::ReportView {
            kind: heading.kind.clone(),
            time: heading.time.clone(),
            pid: heading.pid,
            process: heading.process.clone(),
            summary: heading.summary.clone(),
            text: String::new(),
            text_shown: phonelogs_gateway::TextShown::Whole,
            cut: false,
            fingerprint: heading.fingerprint.clone(),
            blamed_frame: heading.blamed_frame.clone(),
            occurrences: Some(phonelogs_gateway::Occurrences {
                count: occurrences.count,
                first: occurrences.first.clone(),
                last: occurrences.last.clone(),
                pids: occurrences.pids.clone(),
            }),
            symbols: heading.symbols.clone(),
            masked: 0,
        };
        let written = serde_json::to_string(&heading).unwrap();
        let cost = phonelogs_gateway::heading_cost(&view);
        // The estimate holds (the comma between entries included), and at the widest values
        // it is over only by the last pid's comma and `whole` being shorter than `first_line`.
        assert!(written.len() < cost, "{written}");
        assert!(cost - (written.len() + 1) <= 1 + "first_line".len() - "whole".len());
    }

    #[test]
    fn a_result_without_a_log_is_the_message_alone() {
        let mut out = output("", vec![]);
        out.status = LogsStatus::Error;
        let result = phone_logs_result(out);
        assert_eq!(text(&result), "Read lines of Example.");
        assert_eq!(result.is_error, Some(true));
    }

    #[test]
    fn a_debug_envelope_is_the_same_json_in_both_forms() {
        let envelope = DebugEnvelope {
            status: DebugStatusOut::Success,
            message: "capture_native_backtrace completed successfully.".into(),
            data: Some(
                serde_json::json!({"serial": "emulator-5554", "pid": 1224, "text": "#00 pc 0000 libc.so\n"}),
            ),
            error: None,
        };
        let result = debug_result(envelope);
        let structured = result.structured_content.clone().unwrap();
        let parsed: serde_json::Value = serde_json::from_str(&text(&result)).unwrap();
        assert_eq!(parsed, structured);
        assert_eq!(
            text(&result).len(),
            serde_json::to_string(&structured).unwrap().len()
        );
    }
}
