//! What a result costs in the JSON the MCP front end writes, measured without writing any: the
//! one place that knows the front end's keys (a report heading's, the `symbols` field's, a
//! native backtrace's) and how a string escapes. Every cap the view applies (lines, reports, a
//! backtrace's text) measures through here; the front end's tests hold its JSON to these figures.

use phonelogs_driver::NativeBacktrace;

use crate::types::ReportView;

/// What one heading's structured copy costs besides its escaped strings: the keys, quotes,
/// commas and braces of `{"kind":"","time":"","pid":N,"process":"","summary":"","text_shown":""}`
/// and the comma between entries, with the widest pid and `text_shown` value. The MCP frontend's
/// `ReportHeading` serializes to exactly these keys; its tests hold it to this figure.
const HEADING_FRAME_BYTES: usize =
    r#"{"kind":"","time":"","pid":4294967295,"process":"","summary":"","text_shown":"first_line"},"#
        .len();

/// How many bytes `text` takes inside a JSON string, without the quotes: what `serde_json` and
/// JavaScript's `JSON.stringify` write. Short escapes for quote, backslash and the common
/// controls, `\u00XX` for the other controls, and everything else as UTF-8. A pure function, so
/// the gateway measures the cap without serializing anything.
pub fn json_escaped_len(text: &str) -> usize {
    text.chars()
        .map(|c| match c {
            '"' | '\\' | '\n' | '\r' | '\t' | '\u{08}' | '\u{0c}' => 2,
            c if (c as u32) < 0x20 => 6,
            c => c.len_utf8(),
        })
        .sum()
}

/// What a `symbols` field holding `value` costs in JSON: its leading comma, key and quotes as
/// the frontend writes them, and the value escaped (a report's heading, a backtrace's data).
pub fn symbols_field_cost(value: &str) -> usize {
    r#","symbols":"""#.len() + json_escaped_len(value)
}

/// What a report's heading costs in the structured content, where the MCP frontend lists every
/// heading (kind, time, pid, process, summary, how much text is shown): at most this many bytes
/// of JSON, the comma between entries included.
pub fn heading_cost(view: &ReportView) -> usize {
    // The optional keys, each with its leading comma and quotes, as the frontend writes them.
    const FINGERPRINT: usize = r#","fingerprint":"""#.len();
    const BLAMED: usize = r#","blamed_frame":"""#.len();
    // `count` at its widest (20 digits), and each pid at its widest with its comma.
    const OCCURRENCES: usize =
        r#","occurrences":{"count":18446744073709551615,"first":"","last":"","pids":[]}"#.len();
    const PID: usize = "4294967295,".len();
    let text = |value: &Option<String>, keys: usize| {
        value.as_deref().map_or(0, |v| keys + json_escaped_len(v))
    };
    HEADING_FRAME_BYTES
        + json_escaped_len(&view.kind)
        + json_escaped_len(&view.time)
        + json_escaped_len(&view.process)
        + json_escaped_len(&view.summary)
        + text(&view.fingerprint, FINGERPRINT)
        + text(&view.blamed_frame, BLAMED)
        + view.symbols.as_deref().map_or(0, symbols_field_cost)
        + view.occurrences.as_ref().map_or(0, |o| {
            OCCURRENCES
                + json_escaped_len(&o.first)
                + json_escaped_len(&o.last)
                + PID * o.pids.len()
        })
}

/// An upper bound of the bytes a backtrace takes as JSON without its text, so the gateway can
/// cap the text without writing JSON: every string escaped, and a fixed allowance for the keys
/// and the widest numbers (the envelope's keys with 20-digit numbers take under 150 bytes, a
/// thread's under 80).
pub fn backtrace_cost_without_text(backtrace: &NativeBacktrace) -> usize {
    const KEYS: usize = 192;
    const PER_THREAD: usize = 80;
    let text = |value: &Option<String>| value.as_deref().map_or(0, json_escaped_len);
    KEYS + json_escaped_len(&backtrace.serial)
        + text(&backtrace.process_name)
        + text(&backtrace.abi)
        + backtrace
            .threads
            .iter()
            .map(|thread| PER_THREAD + json_escaped_len(&thread.name))
            .sum::<usize>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::TextShown;

    #[test]
    fn escaped_length_matches_serde_json() {
        for text in [
            "",
            "plain",
            "quote \" and \\ back",
            "tab\tnew\nline\r",
            "\u{1}\u{1f}\u{8}\u{c}",
            "é ü 漢字 🦀",
            "\u{7f}\u{2028}",
        ] {
            let written = serde_json::to_string(text).unwrap_or_default();
            assert_eq!(json_escaped_len(text), written.len() - 2, "{text:?}");
        }
    }

    #[test]
    fn a_headings_cost_covers_its_json() {
        let view = ReportView {
            kind: "native_crash".into(),
            time: "2026-11-30T10:00:00+01:00".into(),
            pid: Some(u32::MAX),
            process: "com.example\t\"app\"".into(),
            summary: "SIGSEGV \u{1}".into(),
            text: String::new(),
            text_shown: TextShown::FirstLine,
            cut: true,
            fingerprint: None,
            blamed_frame: None,
            occurrences: None,
            symbols: None,
            masked: 0,
        };
        let json = serde_json::json!({
            "kind": view.kind, "time": view.time, "pid": view.pid, "process": view.process,
            "summary": view.summary, "text_shown": view.text_shown,
        });
        let written = serde_json::to_string(&json).unwrap_or_default();
        assert_eq!(written.len() + 1, heading_cost(&view));
    }
}
