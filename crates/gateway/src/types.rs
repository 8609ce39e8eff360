//! The request and result types of the gateway's public API.

use serde::{Deserialize, Serialize};

pub use phonelogs_policy::Action;
pub use phonelogs_view::lines::{AGENT_TEXT_BYTES, AGENT_TEXT_CUT, agent_text};

pub use phonelogs_view::render::TextShown;
pub use phonelogs_view::types::{LogsErrorCode, LogsKind, LogsRequest, LogsResponse, Status};

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
        agent_text(&phonelogs_view::mask::masker().line(&one_line).text)
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

    /// An agent's name is shown to the person (in questions, the history, the page) as it is:
    /// every character the gateway's one rule says can make a text read as something else is
    /// refused in one, whatever the policy crate's own check is written as.
    #[test]
    fn no_agent_name_holds_a_character_that_misleads() {
        let refused: Vec<char> = (0..=u32::from(char::MAX))
            .filter_map(char::from_u32)
            .filter(|c| phonelogs_view::lines::misleads(*c))
            .filter(|c| phonelogs_policy::Agent::check_name(&format!("claude{c}x")).is_ok())
            .collect();
        assert!(
            refused.is_empty(),
            "accepted in an agent's name: {refused:?}"
        );
    }
}
