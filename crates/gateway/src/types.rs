//! The request and result types of the gateway's public API.

use serde::{Deserialize, Serialize};

pub use phonelogs_policy::Action;

pub use crate::render::{LineView, ReportView, TextShown};

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

/// The person's answer to an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    /// Allow once: this call.
    Once,
    /// Allow for this task: the app's logs and crash reports until the task ends.
    Task,
    /// Always allow: this app, this agent, this phone, later tasks too.
    Always,
    /// Deny.
    Deny,
}

impl Answer {
    /// `once`, `task`, `always` or `deny`.
    pub fn as_str(self) -> &'static str {
        match self {
            Answer::Once => "once",
            Answer::Task => "task",
            Answer::Always => "always",
            Answer::Deny => "deny",
        }
    }

    /// Reads `once`, `task`, `always` or `deny` (case-insensitive).
    pub fn parse(text: &str) -> Option<Answer> {
        match text.trim().to_ascii_lowercase().as_str() {
            "once" => Some(Answer::Once),
            "task" => Some(Answer::Task),
            "always" => Some(Answer::Always),
            "deny" => Some(Answer::Deny),
            _ => None,
        }
    }
}

/// Where the person answered a question, as the history records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnsweredVia {
    /// The agent's client showed the person a dialog (MCP elicitation).
    ClientDialog,
    /// The person answered on their side: the `phonelogs` command line or an embedding program.
    CommandLine,
    /// The person answered on the page `phonelogs ui` serves on their computer.
    Page,
}

impl AnsweredVia {
    /// `client_dialog`, `command_line` or `page`.
    pub fn as_str(self) -> &'static str {
        match self {
            AnsweredVia::ClientDialog => "client_dialog",
            AnsweredVia::CommandLine => "command_line",
            AnsweredVia::Page => "page",
        }
    }

    /// The place [`AnsweredVia::as_str`] names; `None` for a name this build does not know.
    pub fn parse(text: &str) -> Option<AnsweredVia> {
        match text {
            "client_dialog" => Some(AnsweredVia::ClientDialog),
            "command_line" => Some(AnsweredVia::CommandLine),
            "page" => Some(AnsweredVia::Page),
            _ => None,
        }
    }
}

/// Where an approval stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalState {
    /// Waiting for the person.
    Pending,
    /// Answered, not yet picked up (or picked up, for task and always answers).
    Answered,
    /// An "Allow once" that its call used.
    Used,
    /// Its task ended before the person answered.
    Expired,
}

impl ApprovalState {
    /// `pending`, `answered`, `used` or `expired`.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalState::Pending => "pending",
            ApprovalState::Answered => "answered",
            ApprovalState::Used => "used",
            ApprovalState::Expired => "expired",
        }
    }

    /// The state [`ApprovalState::as_str`] names (any other name reads as pending).
    pub fn parse(text: &str) -> ApprovalState {
        match text {
            "answered" => ApprovalState::Answered,
            "used" => ApprovalState::Used,
            "expired" => ApprovalState::Expired,
            _ => ApprovalState::Pending,
        }
    }
}

/// A question for the person, bound to one task, agent, phone, app and action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Approval {
    /// Its id (what the agent passes back as `approval_id`).
    pub id: String,
    /// The task that asked.
    pub task_id: String,
    /// The agent that asked.
    pub agent: String,
    /// The phone.
    pub device: String,
    /// The app's id.
    pub app: String,
    /// The app's name as people know it.
    pub app_label: String,
    /// What it allows; `None` for an action this build does not know (it allows nothing here).
    pub action: Option<Action>,
    /// What exactly, beyond the app, the question named ("pid 1224", "pid 1224 to run1/x.txt";
    /// empty for logs): an answer is picked up only by a call that asks for the same.
    pub detail: String,
    /// "Read the logs of Example?".
    pub question: String,
    /// "App logs".
    pub rule: String,
    /// When it was asked (RFC 3339).
    pub created_at: String,
    /// The person's answer, once given.
    pub answer: Option<Answer>,
    /// Where the person answered, once they have.
    pub answered_via: Option<AnsweredVia>,
    /// Where it stands.
    pub state: ApprovalState,
}

/// Which history steps to list.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryFilter {
    /// Only this task's steps.
    pub task_id: Option<String>,
    /// Only this agent's steps.
    pub agent: Option<String>,
    /// Only steps about this app.
    pub app: Option<String>,
    /// Only steps on this phone (its id).
    pub device: Option<String>,
    /// Only steps that ended so.
    pub status: Option<Status>,
    /// At most this many steps (the newest); all when left out.
    pub limit: Option<usize>,
}

/// The most bytes of one text the agent sent that the state keeps ([`agent_text`]): room for
/// any app id (255 bytes at most) and a filter or `since` as an agent writes them, too little to
/// carry a page of log text into the history.
pub const AGENT_TEXT_BYTES: usize = 256;

/// What ends a text [`agent_text`] cut.
pub const AGENT_TEXT_CUT: char = '\u{2026}';

/// A text the agent sent, as the history may keep it: control characters, line ends and the
/// marks that turn text around or hide in it (`lines::misleads`: they could make a line of the
/// history, or the person's terminal, read as something else) become U+FFFD, and a text longer than [`AGENT_TEXT_BYTES`] is cut at a
/// character boundary and ends with [`AGENT_TEXT_CUT`]. The one way any text of the agent's
/// (each [`StepArgs`] field, a phone's serial or a package it named) reaches the state: an
/// agent could otherwise write log text it read into the state directory.
pub fn agent_text(text: &str) -> String {
    let mut out: String = text
        .chars()
        .map(|c| {
            if crate::lines::misleads(c) {
                '\u{fffd}'
            } else {
                c
            }
        })
        .collect();
    if out.len() > AGENT_TEXT_BYTES {
        let mut end = AGENT_TEXT_BYTES - AGENT_TEXT_CUT.len_utf8();
        while !out.is_char_boundary(end) {
            end -= 1;
        }
        out.truncate(end);
        out.push(AGENT_TEXT_CUT);
    }
    out
}

/// What a step was asked for: never the text it read. The store keeps each text field through
/// [`agent_text`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepArgs {
    /// The app's id.
    pub app: String,
    /// `logs`, `crashes`, or a debugging aid's name.
    pub kind: String,
    /// The `since` as the call read it: a time in RFC 3339 (UTC), `last`, `cursor`, or
    /// `(invalid)`; never the agent's words.
    pub since: Option<String>,
    /// The filter as given (bounded, see [`StepArgs::bounded`]).
    pub filter: Option<String>,
    /// The exclusion as given (bounded).
    #[serde(default)]
    pub exclude: Option<String>,
    /// The tags as given, joined by `, ` (bounded).
    #[serde(default)]
    pub tags: Option<String>,
    /// The level as the call read it (its name), or `(invalid)`; never the agent's words.
    pub level: Option<String>,
    /// The limit as given.
    pub limit: Option<u32>,
}

impl StepArgs {
    /// The most bytes of an agent's text (`filter`, `exclude`, `tag`) the history keeps.
    pub const MAX_ARGUMENT_BYTES: usize = AGENT_TEXT_BYTES;

    /// An agent's text as the history keeps it: on one line, its secrets masked (an agent that
    /// knows a token cannot write it into the history either), then bounded by [`agent_text`] (cut to [`StepArgs::MAX_ARGUMENT_BYTES`] with a mark).
    pub fn bounded(text: &str) -> String {
        let one_line: String = text
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        agent_text(&crate::mask::masker().line(&one_line).text)
    }
}

/// One step of the history: what was read, in the spec's words, never the text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HistoryStep {
    /// Its number, rising.
    pub id: i64,
    /// When (RFC 3339).
    pub at: String,
    /// The task.
    pub task_id: String,
    /// The agent.
    pub agent: String,
    /// The phone, when one was chosen.
    pub device: Option<String>,
    /// How the call ended.
    pub status: Status,
    /// "Read 120 log lines of Example", …
    pub step: String,
    /// The call's arguments.
    pub args: StepArgs,
}

#[cfg(test)]
mod tests {
    use super::{AGENT_TEXT_BYTES, AGENT_TEXT_CUT, agent_text};

    #[test]
    fn agent_text_is_bounded_cut_at_a_character_and_marked() {
        assert_eq!(agent_text("crash"), "crash");
        let whole = "x".repeat(AGENT_TEXT_BYTES);
        assert_eq!(agent_text(&whole), whole);
        for text in [
            "x".repeat(AGENT_TEXT_BYTES + 1),
            "\u{e9}".repeat(AGENT_TEXT_BYTES),
            "\u{1f600}".repeat(AGENT_TEXT_BYTES),
            format!("x{}", "\u{1f600}".repeat(AGENT_TEXT_BYTES)),
        ] {
            let kept = agent_text(&text);
            assert!(kept.len() <= AGENT_TEXT_BYTES, "{}", kept.len());
            assert!(kept.len() > AGENT_TEXT_BYTES - 8, "{}", kept.len());
            assert!(kept.ends_with(AGENT_TEXT_CUT), "{kept}");
            assert!(text.starts_with(kept.trim_end_matches(AGENT_TEXT_CUT)));
        }
        assert_eq!(
            agent_text("a\nb\u{1b}[2J\u{202e}c\u{2028}d\u{200b}"),
            "a\u{fffd}b\u{fffd}[2J\u{fffd}c\u{fffd}d\u{fffd}"
        );
    }

    /// An agent's name is shown to the person (in questions, the history, the page) as it is:
    /// every character the gateway's one rule says can make a text read as something else is
    /// refused in one, whatever the policy crate's own check is written as.
    #[test]
    fn no_agent_name_holds_a_character_that_misleads() {
        let refused: Vec<char> = (0..=u32::from(char::MAX))
            .filter_map(char::from_u32)
            .filter(|c| crate::lines::misleads(*c))
            .filter(|c| phonelogs_policy::Agent::check_name(&format!("claude{c}x")).is_ok())
            .collect();
        assert!(
            refused.is_empty(),
            "accepted in an agent's name: {refused:?}"
        );
    }
}
