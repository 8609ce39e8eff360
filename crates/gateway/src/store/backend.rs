//! The store contract: every operation the permission path, the person's side and the
//! history need, as one trait ([`StoreBackend`]) that each backend implements (the embedded
//! SQLite store in this crate, PostgreSQL in `phonelogs-store-pg`), and the types its
//! operations take and give. What a backend must do is checked by one suite
//! (`store::conformance`, behind the `conformance` feature) that every backend runs.
//!
//! Every operation is one transaction: a decision (an answer, a rule, a block) is durable when
//! the call returns, "Exactly one answer" holds whoever answers on whichever server, and no
//! table has a column for log text. A store that cannot be reached is an error naming it
//! ([`Error::Store`]), never an empty answer: a read that needs a decision fails closed.

use std::path::Path;

use async_trait::async_trait;
use phonelogs_driver::{AppId, DeviceId};
use phonelogs_policy::{Action, StandingRule};
use time::OffsetDateTime;

use crate::Error;
use crate::types::{
    Answer, AnsweredVia, Approval, ApprovalState, HistoryFilter, HistoryStep, Status, StepArgs,
};

/// The most questions one agent may have waiting for the person for one action (a read of
/// logs, a backtrace, a tombstone, …) about one app, over all its tasks and whatever the
/// phone is called (one phone reached by two names, or the same app on two phones, counts
/// once): a backtrace or tombstone question names its pid and path, so without a cap an agent
/// could raise one per pid. Three is an app's main process and two more (a `:remote` service,
/// a crash handler) at once; once the person answers one, the next call asks its own.
pub const MAX_PENDING_PER_ACTION: usize = 3;

/// The most questions one agent may have waiting for the person at all, over all its tasks,
/// apps, phones and actions: its fair share of the person's attention. Without it an agent
/// could raise [`MAX_PENDING_PER_ACTION`] questions for each action about each app it may
/// name. Six is a logs question for each of six apps, or one app's logs, exit history and a few
/// backtraces at once; every other agent has six of its own.
pub const MAX_PENDING_PER_AGENT: usize = 6;

/// How long a question left unanswered when its task ended still counts toward its agent's
/// [`MAX_PENDING_PER_ACTION`] and [`MAX_PENDING_PER_AGENT`]: an agent that ends its session and
/// opens another (an HTTP client reconnecting in a loop) would otherwise raise fresh
/// questions, each a new notice on the person's page, as fast as it reconnects.
pub const UNANSWERED_REST: std::time::Duration = std::time::Duration::from_secs(5 * 60);

/// Which of the two question caps stopped a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuestionCap {
    /// [`MAX_PENDING_PER_ACTION`]: this agent's questions of this action about this app.
    Action,
    /// [`MAX_PENDING_PER_AGENT`]: all this agent's questions.
    Agent,
}

impl QuestionCap {
    /// How many questions the cap lets wait.
    pub fn limit(self) -> usize {
        match self {
            Self::Action => MAX_PENDING_PER_ACTION,
            Self::Agent => MAX_PENDING_PER_AGENT,
        }
    }
}

/// What [`StoreBackend::pending_or_create`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asked {
    /// Made this call's question.
    New(Approval),
    /// Found this call's question waiting already (another call asked it).
    Shared(Approval),
    /// Made nothing: the cap's count of questions of this agent count, and this is the oldest
    /// of them still waiting (this task's when it has one).
    Capped(Approval, QuestionCap),
    /// Made nothing: the cap's count of questions of this agent count, none waits (they were
    /// left unanswered when their tasks ended), and the first of them stops counting at this
    /// time.
    Resting(OffsetDateTime, QuestionCap),
}

/// What a cap says once a backend has counted the agent's questions for it: `None` when
/// `waiting` (the agent's questions waiting, oldest first) and `resting` (the distinct ones left
/// unanswered when their task ended less than [`UNANSWERED_REST`] ago, the first of those tasks
/// ending at `first_end`, RFC 3339) are fewer than the cap allows; else the question this call
/// is shown (its own task's when one waits, else the oldest) or when the cap lets it ask.
pub fn cap_reached(
    mut waiting: Vec<Approval>,
    resting: usize,
    first_end: Option<&str>,
    ask: &NewApproval<'_>,
    cap: QuestionCap,
) -> Option<Asked> {
    if waiting.len().saturating_add(resting) < cap.limit() {
        return None;
    }
    let shown = match waiting.iter().position(|a| a.task_id == ask.task_id) {
        Some(at) => Some(waiting.swap_remove(at)),
        None => waiting.into_iter().next(),
    };
    if let Some(oldest) = shown {
        return Some(Asked::Capped(oldest, cap));
    }
    let rest = time::Duration::try_from(UNANSWERED_REST).unwrap_or(time::Duration::ZERO);
    let first_end = first_end
        .and_then(|at| {
            OffsetDateTime::parse(at, &time::format_description::well_known::Rfc3339).ok()
        })
        .unwrap_or_else(OffsetDateTime::now_utc);
    Some(Asked::Resting(first_end + rest, cap))
}

/// A question to ask, as [`StoreBackend::pending_or_create`] stores it.
#[derive(Debug, Clone)]
pub struct NewApproval<'a> {
    /// The asking call's task.
    pub task_id: &'a str,
    /// The asking agent's name.
    pub agent: &'a str,
    /// The phone, as the call named it.
    pub device: &'a DeviceId,
    /// The app.
    pub app: &'a AppId,
    /// The app's label, for the person.
    pub app_label: &'a str,
    /// What the call would do.
    pub action: Action,
    /// What exactly it would read (a pid, a path), or empty.
    pub detail: &'a str,
    /// The question, in the gateway's own words.
    pub question: &'a str,
    /// The policy rule that asks.
    pub rule: &'a str,
}

/// A history step to record. Every text of the agent's in `args` goes through
/// [`crate::agent_text`] in the backend, so no caller can store one whole.
#[derive(Debug, Clone)]
pub struct NewStep<'a> {
    /// The task.
    pub task_id: &'a str,
    /// The agent's name.
    pub agent: &'a str,
    /// The phone, when the step named one.
    pub device: Option<&'a str>,
    /// How the step ended.
    pub status: Status,
    /// The step, in the gateway's own words (never anything read from a phone).
    pub step: String,
    /// The call's arguments.
    pub args: StepArgs,
}

/// How often [`StoreBackend::wait_answer`] reads the approval again when the backend has no
/// faster way to learn of an answer (and, with one, as the backstop for a wake-up lost).
pub const ANSWER_POLL: std::time::Duration = std::time::Duration::from_millis(200);

/// Refuses `via` for a masking change: masking is the person's to turn off (`phonelogs rules
/// unmask`, the person's page), never through an agent's client. Every backend's
/// [`StoreBackend::unmask_app`] and [`StoreBackend::mask_app`] call it first.
pub fn person_only(via: AnsweredVia) -> Result<(), Error> {
    if via == AnsweredVia::ClientDialog {
        return Err(Error::InvalidArgument(
            "masking is the person's to turn off, never through an agent's client".into(),
        ));
    }
    Ok(())
}

/// The state that must survive, wherever it is kept. Every method is one transaction; a method
/// that blocks on the disk or the network does so through [`crate::store::blocking`], so it
/// never stalls a multi-threaded runtime's other tasks. `describe` names the store in errors
/// and in `phonelogs doctor` (never a password).
#[async_trait]
pub trait StoreBackend: std::fmt::Debug + Send + Sync {
    /// The store as people may see it: an SQLite file's path, or a PostgreSQL server's host,
    /// port and database (no user, no password).
    fn describe(&self) -> String;

    /// The database file, when the store is one on this computer's disk.
    fn path(&self) -> Option<&Path> {
        None
    }

    // --- For the person: approvals, rules, blocks, history. ---

    /// The approvals waiting for the person, oldest first.
    fn pending_approvals(&self) -> Result<Vec<Approval>, Error>;

    /// One approval, in any state.
    fn approval(&self, approval_id: &str) -> Result<Option<Approval>, Error>;

    /// Answers an approval on the person's side (the `phonelogs` command line, or the program
    /// that embeds the gateway): [`StoreBackend::answer_via`] with [`AnsweredVia::CommandLine`].
    fn answer(&self, approval_id: &str, answer: Answer) -> Result<(), Error> {
        self.answer_via(approval_id, answer, AnsweredVia::CommandLine)
    }

    /// Answers an approval, exactly once whoever answers where. "Allow for this task" covers
    /// the app's action for the rest of the task and "Always allow" adds a standing rule for
    /// it, in the same transaction, so any later call sees them. The history records the
    /// answer and where it was given (never anything read). Answering twice, an unknown id or
    /// an expired approval is an error.
    fn answer_via(&self, approval_id: &str, answer: Answer, via: AnsweredVia) -> Result<(), Error>;

    /// The history, oldest first (the newest `limit` when a limit is set).
    fn history(&self, filter: HistoryFilter) -> Result<Vec<HistoryStep>, Error>;

    /// The "Always allow" entries, oldest first; a rule whose action this build does not know
    /// is left out (it covers nothing).
    fn rules(&self) -> Result<Vec<StandingRule>, Error>;

    /// Revokes an "Always allow" entry: the next task asks again.
    fn revoke_rule(&self, id: &str) -> Result<(), Error>;

    /// Blocks an app's logs for every agent ("Blocked apps"), even where the person allowed it.
    fn block_app(&self, app: &AppId) -> Result<(), Error>;

    /// Lifts a block; an error when the app was not blocked.
    fn unblock_app(&self, app: &AppId) -> Result<(), Error>;

    /// The blocked apps, by name.
    fn blocked_apps(&self) -> Result<Vec<AppId>, Error>;

    /// Turns off the masking of secrets in `app`'s lines and reports, for every agent, until
    /// [`StoreBackend::mask_app`]. Only the person does this: [`person_only`] refuses an
    /// agent's client. The history records it, with where it was done.
    fn unmask_app(&self, app: &AppId, via: AnsweredVia) -> Result<(), Error>;

    /// Turns the masking of `app`'s secrets back on; an error when it was not off.
    fn mask_app(&self, app: &AppId, via: AnsweredVia) -> Result<(), Error>;

    /// The apps whose secrets are shown unmasked, with when the person chose it.
    fn unmasked_apps(&self) -> Result<Vec<(AppId, String)>, Error>;

    // --- For the gateway's calls. ---

    /// Whether the person turned masking off for `app`.
    fn is_unmasked(&self, app: &AppId) -> Result<bool, Error>;

    /// Whether `app` is blocked.
    fn is_blocked(&self, app: &AppId) -> Result<bool, Error>;

    /// Records a task's start (again: nothing).
    fn begin_task(
        &self,
        task_id: &str,
        agent: &str,
        started_at: OffsetDateTime,
    ) -> Result<(), Error>;

    /// Ends a task: its unanswered questions and unused "Allow once" answers expire, and its
    /// "Allow for this task" grants go.
    fn end_task(&self, task_id: &str) -> Result<(), Error>;

    /// Whether the task has ended (its session called `end`).
    fn task_ended(&self, task_id: &str) -> Result<bool, Error>;

    /// Whether a grant covers `action` without asking: this task's "Allow for this task" for
    /// it, or a standing rule for this agent, phone, app and action.
    fn covered(
        &self,
        task_id: &str,
        agent: &str,
        device: &DeviceId,
        app: &AppId,
        action: Action,
    ) -> Result<bool, Error>;

    /// The pending approval for this call's task, agent, phone, app, action and detail, made
    /// now when there is none; one transaction, so concurrent calls (on any server) share one
    /// approval. When [`MAX_PENDING_PER_ACTION`] questions of this agent and action about this
    /// app (on any phone, by any name) count already, or [`MAX_PENDING_PER_AGENT`] of this
    /// agent's at all, none is made ([`Asked::Capped`], [`Asked::Resting`]): the ones waiting in
    /// any of its tasks, and the distinct ones left unanswered when their task ended less than
    /// [`UNANSWERED_REST`] ago. A question equal to one left unanswered so is asked again.
    fn pending_or_create(&self, ask: &NewApproval<'_>, now: OffsetDateTime)
    -> Result<Asked, Error>;

    /// Marks an "Allow once" as used by its call; false when another call used it first.
    fn use_once(&self, approval_id: &str) -> Result<bool, Error>;

    /// Writes a history step, every text of the agent's cut by [`crate::agent_text`].
    fn record_step(&self, step: &NewStep<'_>) -> Result<(), Error>;

    /// Waits until the person answers `approval_id` (on this server or another), up to
    /// `deadline`. `None` when the time ran out, the approval expired, or there is no such
    /// approval; a store that cannot be read is retried until the deadline (and then `None`:
    /// nothing is allowed because the store did not answer). This one reads the approval every
    /// [`ANSWER_POLL`]; a backend that can be woken overrides it, keeping the poll as backstop.
    async fn wait_answer(
        &self,
        approval_id: &str,
        deadline: tokio::time::Instant,
    ) -> Option<Answer> {
        loop {
            if let Some(done) = answered(self.approval(approval_id)) {
                return done;
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return None;
            }
            tokio::time::sleep(ANSWER_POLL.min(deadline - now)).await;
        }
    }
}

/// What a read of an approval means to a waiting call: `Some(Some(answer))` answered,
/// `Some(None)` never will be (expired, or no such approval), `None` still waiting (or the
/// store could not be read: logged, and read again).
pub fn answered(read: Result<Option<Approval>, Error>) -> Option<Option<Answer>> {
    match read {
        Ok(Some(approval)) => {
            if let Some(answer) = approval.answer {
                return Some(Some(answer));
            }
            if approval.state == ApprovalState::Expired {
                return Some(None);
            }
            None
        }
        Ok(None) => Some(None),
        Err(error) => {
            tracing::warn!(%error, "could not read an approval while waiting");
            None
        }
    }
}
