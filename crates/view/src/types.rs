//! The request and the answer of a `phone_logs` call: what the agent asks and what it reads,
//! one shape for the gateway that fills it and the MCP front end that carries it.

use serde::{Deserialize, Serialize};

use crate::rows::ProcessMarker;

/// What a `phone_logs` call reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogsKind {
    /// The app's log lines (the default).
    #[default]
    Logs,
    /// The app's crash reports.
    Crashes,
}

impl LogsKind {
    /// `logs` or `crashes`.
    pub fn as_str(self) -> &'static str {
        match self {
            LogsKind::Logs => "logs",
            LogsKind::Crashes => "crashes",
        }
    }

    /// Reads `logs` or `crashes` (case-insensitive; empty is `logs`); `None` for anything else
    /// ([`crate::catalog::kind_error`] words the refusal).
    pub fn parse(text: &str) -> Option<LogsKind> {
        match text.trim().to_ascii_lowercase().as_str() {
            "" | "logs" => Some(LogsKind::Logs),
            "crashes" => Some(LogsKind::Crashes),
            _ => None,
        }
    }
}

/// One `phone_logs` call, as the agent made it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogsRequest {
    /// The app's package name or bundle id.
    pub app: String,
    /// The phone (serial or UDID); may be left out when one phone is connected.
    #[serde(default)]
    pub device: Option<String>,
    /// Logs (the default) or crashes.
    #[serde(default)]
    pub kind: LogsKind,
    /// An RFC 3339 time, a date and time or time of day on the computer's clock, or a duration
    /// back (`10m`, `2h`, `1d`); the task's start when left out.
    #[serde(default)]
    pub since: Option<String>,
    /// Only lines whose tag or text contains this, or, written `/…/`, matches this regular
    /// expression (Rust `regex` syntax). Matched against the masked text.
    #[serde(default)]
    pub filter: Option<String>,
    /// Leave out the lines this matches (the same syntax as `filter`).
    #[serde(default)]
    pub exclude: Option<String>,
    /// Only lines with one of these tags, exactly.
    #[serde(default)]
    pub tag: Option<Vec<String>>,
    /// Fold consecutive repeats (same process, level, tag and text) into one row that says how
    /// many and until when; on unless `false`.
    #[serde(default)]
    pub fold: Option<bool>,
    /// Only lines of this level or more severe.
    #[serde(default)]
    pub level: Option<String>,
    /// At most this many lines (200 by default, 500 at most) or reports (3, 10 at most).
    #[serde(default)]
    pub limit: Option<u32>,
    /// The approval this call picks up.
    #[serde(default)]
    pub approval_id: Option<String>,
    /// Wait until one of the app's lines after `since` contains this (tag or text, as `filter`
    /// matches), or, with kind crashes and `crash`, for the app's next crash report.
    #[serde(default)]
    pub wait_for: Option<String>,
    /// How long to wait, in seconds (10 by default, 60 at most); only with `wait_for`.
    #[serde(default)]
    pub timeout: Option<u32>,
    /// Kind crashes: add under each report the app's own lines of the same pid in this many
    /// seconds before it (1 to 30).
    #[serde(default)]
    pub context: Option<u32>,
}

impl LogsRequest {
    /// A request for `app`'s logs with every option left out.
    pub fn new(app: impl Into<String>) -> Self {
        LogsRequest {
            app: app.into(),
            ..LogsRequest::default()
        }
    }
}

/// Why a `phone_logs` call with status `error` failed, when the caller can act on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogsErrorCode {
    /// An argument was refused (a level, a limit, a `since`, a pattern): fix the call.
    InvalidArgument,
}

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The text is there.
    Ok,
    /// The person has not answered yet: call again with the approval id.
    ApprovalPending,
    /// The person denied it.
    Denied,
    /// Outside the agent's scope or the task's apps.
    ScopeDenied,
    /// A rule blocks the app.
    BlockedByPolicy,
    /// The driver cannot do this (an app sharing its uid, a Simulator, …).
    Unsupported,
    /// Anything else: a bad argument, a device that is not there.
    Error,
}

impl Status {
    /// The status's name, as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::ApprovalPending => "approval_pending",
            Status::Denied => "denied",
            Status::ScopeDenied => "scope_denied",
            Status::BlockedByPolicy => "blocked_by_policy",
            Status::Unsupported => "unsupported",
            Status::Error => "error",
        }
    }

    /// Reads a status's name.
    pub fn parse(text: &str) -> Option<Status> {
        [
            Status::Ok,
            Status::ApprovalPending,
            Status::Denied,
            Status::ScopeDenied,
            Status::BlockedByPolicy,
            Status::Unsupported,
            Status::Error,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
    }
}

/// The whole answer to a `phone_logs` call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LogsResponse {
    /// How it ended.
    pub status: Status,
    /// One or two sentences for the agent.
    pub message: String,
    /// The approval to pick up later, when pending.
    pub approval_id: Option<String>,
    /// The rule the result falls under ("App logs", or the blocking rule).
    pub rule: Option<String>,
    /// The spec's `Result.Log`: the lines or reports as text, printed after the message. It is
    /// within the gateway's result cap as JSON-escaped bytes (the headings' structured copies
    /// included, for reports), and nothing after the gateway cuts it again.
    pub log: String,
    /// The rows shown, as typed values (oldest first): exactly the rows of `log` (a line with
    /// the repeats folded into it, or a process marker).
    pub lines: Vec<LineView>,
    /// The reports shown, as typed values (newest first): exactly the reports of `log`.
    pub reports: Vec<ReportView>,
    /// How many log lines or reports `log` shows: a row of folded repeats counts each line it
    /// stands for, a process marker none; a report heading that groups several reports of one
    /// fingerprint counts each of them.
    pub shown: usize,
    /// How many older lines or reports were left out, by `limit` or by the result cap.
    pub left_out: usize,
    /// How many of those shown were cut: lines past 2,000 bytes; reports whose text is cut
    /// short or only its first line.
    pub cut: usize,
    /// Kind logs: how many of the lines shown are repeats folded into the row before them.
    pub folded: usize,
    /// How many secrets were masked in what `log` shows.
    pub masked: usize,
    /// For an argument the call refused: `invalid_argument`, so a caller can tell a call to fix
    /// from a phone that failed.
    pub error_code: Option<LogsErrorCode>,
    /// With `ok` and kind logs: the position after the last line shown, to pass back as
    /// `since: "cursor:<value>"` (or use `since: "last"`). Bound to this task, phone and app.
    pub cursor: Option<String>,
    /// With `wait_for`: whether the awaited line or report came before the timeout.
    pub matched: Option<bool>,
}

impl LogsResponse {
    /// A result with a status and message and nothing read.
    pub fn bare(status: Status, message: impl Into<String>) -> Self {
        LogsResponse {
            status,
            message: message.into(),
            approval_id: None,
            rule: None,
            log: String::new(),
            lines: Vec::new(),
            reports: Vec::new(),
            shown: 0,
            left_out: 0,
            cut: 0,
            folded: 0,
            masked: 0,
            error_code: None,
            cursor: None,
            matched: None,
        }
    }
}

/// One row as the agent sees it: a line (standing for any repeats folded into it), or a
/// process marker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineView {
    /// The time on the computer's clock, `15:04:05.123`.
    pub time: String,
    /// The level's name (`verbose` … `fatal`).
    pub level: String,
    /// The tag (cut to 256 bytes); empty for a marker.
    pub tag: String,
    /// The text (its secrets masked), cut so that the whole row stays within 2,000 bytes; for
    /// a marker, the marker's text.
    pub text: String,
    /// The process that logged it, when known.
    pub pid: Option<u32>,
    /// Whether the text was cut to keep the row within 2,000 bytes.
    pub cut: bool,
    /// How many log lines the row stands for: 1, more when consecutive repeats were folded
    /// into it, 0 for a process marker.
    pub lines: usize,
    /// With folded repeats: when the last one was logged, `15:04:09.871`.
    pub until: Option<String>,
    /// How many secrets were masked in the lines the row stands for.
    pub masked: usize,
    /// For a process marker: what it marks.
    pub marker: Option<ProcessMarker>,
}

/// How much of a report's text a result shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TextShown {
    /// All of it.
    Whole,
    /// Its start, cut short to stay within the result cap.
    Cut,
    /// Only its first line, for lack of room.
    FirstLine,
}

impl TextShown {
    /// `whole`, `cut` or `first_line`.
    pub fn as_str(self) -> &'static str {
        match self {
            TextShown::Whole => "whole",
            TextShown::Cut => "cut",
            TextShown::FirstLine => "first_line",
        }
    }
}

/// One crash report as the agent sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReportView {
    /// `java_crash`, `native_crash`, `anr`, `crash` or `watchdog`.
    pub kind: String,
    /// When it happened (RFC 3339, with the phone's offset).
    pub time: String,
    /// The process id, when the report names one.
    pub pid: Option<u32>,
    /// The process name, on one line and cut to 300 bytes as the heading shows it.
    pub process: String,
    /// A one-line summary, cut to 300 bytes.
    pub summary: String,
    /// The text as shown: whole, cut short, or only its first line.
    pub text: String,
    /// How much of the text is shown.
    pub text_shown: TextShown,
    /// Whether the text was cut (cut short or only its first line) to stay within the cap.
    pub cut: bool,
    /// The crash's fingerprint (16 hex digits): the same crash has the same one on every phone
    /// and after every restart. `None` only where no symbols step ran.
    pub fingerprint: Option<String>,
    /// The first frame in the app's own code, as a heading shows it
    /// (`CheckoutActivity.onResume(CheckoutActivity.kt:142)`), cut to 300 bytes.
    pub blamed_frame: Option<String>,
    /// The reports of this fingerprint in the result, this one (the newest, whose text is
    /// shown) included.
    pub occurrences: Option<Occurrences>,
    /// Which symbol files were used, or why none matched, cut to 300 bytes; `None` without a
    /// symbols directory (the message says so once, where frames look obfuscated or
    /// unsymbolicated).
    pub symbols: Option<String>,
    /// How many secrets were masked in its process, summary and text.
    pub masked: usize,
}

/// The reports one heading stands for: those of one fingerprint in the result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Occurrences {
    /// How many.
    pub count: usize,
    /// When the oldest happened (RFC 3339).
    pub first: String,
    /// When the newest happened (RFC 3339).
    pub last: String,
    /// Their process ids, oldest first (those the reports name).
    pub pids: Vec<u32>,
}
