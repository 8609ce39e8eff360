//! The permission steps every action goes through, always in the same order, each decided once:
//!
//! 1. **The agent's mode** ([`Session::check_mode`]): watch-only agents do none of this, read-only
//!    agents do no writes (set the debug app, save a tombstone). Nothing is asked of a phone.
//! 2. **The app's id** ([`Session::check_app`]): the agent's scope, the task's apps, the curated
//!    refused lists, the configuration's and the person's block rules. Still nothing is asked of a
//!    phone, so an out-of-scope or blocked app gets the same answer whether it is installed or not.
//!    A store that cannot be read refuses (fails closed).
//! 3. **The phone's word and the person** ([`Session::permit`]): a system app is one of the
//!    phone's own; a development build is the app under test and asks nothing; otherwise a grant
//!    for this action (this task's "Allow for this task", a standing "Always allow") or the
//!    person's answer to this action's own question. An answer covers only the action it was
//!    asked for: a logs answer never covers a backtrace or a tombstone.
//!
//!    A warm `phone_logs` takes this step on the facts its driver holds from its last round
//!    trip ([`Session::permits_held`]), when the driver's read confirms them in its own round
//!    trip ([`phonelogs_driver::ConfirmingReader`]), and only when they allow the call: a
//!    refusal, a question or an answer to pick up is decided here on facts read fresh. A read
//!    that finds them changed returns nothing and the call decides again on fresh facts.
//!
//! Each refusal is a [`Refusal`] value, turned into a history step and a response at one edge
//! ([`Session::refuse`]).

use phonelogs_driver::{AppId, DeviceId};
use phonelogs_policy::{Action, Decision, ScopeReason};

use crate::catalog::{self, Subject};
use crate::session::{Session, Target};
use crate::store::{Asked, NewApproval, QuestionCap};
use crate::types::{Answer, ApprovalState, LogsResponse, Status, StepArgs};

/// The outcome of the permission steps: go ahead, or answer with this response.
pub(crate) enum Gate {
    Go,
    Stop(Box<LogsResponse>),
}

impl Gate {
    /// Stop with the response of a question still waiting for the person.
    fn waiting(approval_id: &str, question: &str) -> Gate {
        Gate::Stop(Box::new(pending(approval_id, question)))
    }
}

/// Where step 3 stands before its effects: refused by the phone's word, allowed at once, an
/// answer to pick up, or a grant to look for (else a question to ask).
enum Verdict<'a> {
    Refused(Refusal),
    Go,
    PickUp(&'a str),
    GrantOrAsk,
}

/// What a call asks permission for: the action, and what exactly beyond the app (the pid, the
/// file), so that an "Allow once" is picked up only by the call it was given for.
#[derive(Debug, Clone)]
pub(crate) struct Ask<'a> {
    pub(crate) action: Action,
    /// "pid 1224", "pid 1224 to run1/x.txt"; empty for logs.
    pub(crate) detail: String,
    pub(crate) subject: Subject<'a>,
}

impl<'a> Ask<'a> {
    /// An ask for `action` with nothing more to name.
    pub(crate) fn plain(action: Action) -> Ask<'a> {
        Ask {
            action,
            detail: String::new(),
            subject: Subject::default(),
        }
    }
}

/// Why an action may not go ahead, before it is rendered for the agent and the history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub(crate) status: Status,
    /// The rule the result names, when one refused.
    pub(crate) rule: Option<String>,
    /// For the agent.
    pub(crate) message: String,
    /// For the history: what was refused, never anything read.
    pub(crate) step: String,
}

impl Refusal {
    /// The refusal a policy decision stands for, if it is one.
    fn from_decision(decision: Decision, action: Action, label: &str) -> Option<Refusal> {
        match decision {
            Decision::Allowed => None,
            Decision::ScopeDenied(reason) => Some(Refusal {
                status: Status::ScopeDenied,
                rule: None,
                message: catalog::scope_message(reason, label),
                step: catalog::step_outside_scope(label),
            }),
            Decision::Blocked(rule) => {
                let name = catalog::rule_name(&rule);
                let message = if action == Action::Logs {
                    catalog::blocked_message(&name, label)
                } else {
                    format!(
                        "Blocked by \u{201c}{name}\u{201d}: phonelogs does not {}.",
                        catalog::action_phrase(action, label)
                    )
                };
                Some(Refusal {
                    status: Status::BlockedByPolicy,
                    step: catalog::step_blocked(&name, label),
                    message,
                    rule: Some(name),
                })
            }
        }
    }

    /// The refusal the phone's word about the target's app stands for, if any: a system app is
    /// one of the phone's own; an app that shares its uid with other packages (`sharedUserId`)
    /// cannot be told apart from them, so it is `unsupported` before anyone is asked.
    pub(crate) fn device(session: &Session, target: &Target, action: Action) -> Option<Refusal> {
        let decision = session.gateway().inner.policy.device_decision(&target.info);
        if let Some(refusal) = Refusal::from_decision(decision, action, &target.label) {
            return Some(refusal);
        }
        target.info.shared_uid.then(|| Refusal {
            status: Status::Unsupported,
            rule: None,
            message: catalog::shared_uid_message(&target.label),
            step: catalog::step_failed(&target.label),
        })
    }

    fn error(message: String, label: &str) -> Refusal {
        Refusal {
            status: Status::Error,
            rule: None,
            message,
            step: catalog::step_failed(label),
        }
    }
}

impl Session {
    /// Writes the refusal's history step and returns the response for it.
    pub(crate) fn refuse(
        &self,
        args: &StepArgs,
        device: Option<&DeviceId>,
        refusal: Refusal,
    ) -> LogsResponse {
        self.record(args, device, refusal.status, refusal.step);
        let mut response = LogsResponse::bare(refusal.status, refusal.message);
        response.rule = refusal.rule;
        response
    }

    /// Step 1: whether the agent's mode allows `action` at all, before any app is known.
    pub(crate) fn mode_refusal(&self, action: Action, label: &str) -> Option<Refusal> {
        let agent = &self.spec().agent;
        let reason = if agent.mode == phonelogs_policy::Mode::WatchOnly {
            ScopeReason::WatchOnly
        } else if action.writes() && !agent.may_change_phone() {
            ScopeReason::ReadOnly
        } else {
            return None;
        };
        Refusal::from_decision(Decision::ScopeDenied(reason), action, label)
    }

    /// Step 1 as a response: [`Session::mode_refusal`], recorded; `None` when the mode allows it.
    pub(crate) fn check_mode(
        &self,
        action: Action,
        label: &str,
        args: &StepArgs,
    ) -> Option<LogsResponse> {
        self.mode_refusal(action, label)
            .map(|refusal| self.refuse(args, None, refusal))
    }

    /// Step 2: the decision from the app's id alone (mode, scope, task, blocks, the person's
    /// blocks), before any device call.
    pub(crate) fn app_refusal(&self, action: Action, app: &AppId) -> Option<Refusal> {
        let gateway = self.gateway();
        let label = app.as_str();
        let decision = gateway.inner.policy.decide(
            &self.spec().agent,
            self.spec().apps.as_deref(),
            action,
            app,
        );
        if let Some(refusal) = Refusal::from_decision(decision, action, label) {
            return Some(refusal);
        }
        match gateway.inner.store.is_blocked(app) {
            Ok(false) => None,
            Ok(true) => Refusal::from_decision(
                Decision::Blocked(phonelogs_policy::Rule::BlockedApps),
                action,
                label,
            ),
            // The person's blocks cannot be read: refuse rather than guess they allow it.
            Err(error) => Some(Refusal::error(catalog::state_unreadable(&error), label)),
        }
    }

    /// Step 2 as a response: [`Session::app_refusal`], recorded; `None` when nothing refuses.
    pub(crate) fn check_app(
        &self,
        action: Action,
        app: &AppId,
        args: &StepArgs,
    ) -> Option<LogsResponse> {
        self.app_refusal(action, app)
            .map(|refusal| self.refuse(args, None, refusal))
    }

    /// Step 3: the phone's word about the app, then the person: development builds, grants for
    /// this action, the answer `approval_id` picks up, or a new question.
    pub(crate) async fn permit(
        &self,
        target: &Target,
        ask: &Ask<'_>,
        approval_id: Option<&str>,
        args: &StepArgs,
    ) -> Gate {
        let device = Some(&target.device);
        let result = match self.verdict(target, ask.action, approval_id) {
            Verdict::Refused(refusal) => Err(refusal),
            Verdict::Go => Ok(Gate::Go),
            Verdict::PickUp(approval_id) => self.pick_up(target, ask, approval_id, args),
            Verdict::GrantOrAsk => self.grant_or_ask(target, ask, args),
        };
        match result {
            Ok(gate) => gate,
            Err(refusal) => Gate::Stop(Box::new(self.refuse(args, device, refusal))),
        }
    }

    /// Step 3 on facts the driver holds from its last round trip ([`Target::held`]), which the
    /// read then confirms in its own: whether it lets the call go as it stands, with nothing
    /// recorded, asked or used up (a development build, the person, a grant for this action).
    /// Anything else, a refusal (a system app, a shared uid), a question or an answer to pick
    /// up, is decided by [`Session::permit`] on facts read fresh, never on held ones.
    pub(crate) fn permits_held(
        &self,
        target: &Target,
        ask: &Ask<'_>,
        approval_id: Option<&str>,
    ) -> bool {
        match self.verdict(target, ask.action, approval_id) {
            Verdict::Go => true,
            Verdict::GrantOrAsk => matches!(self.covered(target, ask.action), Ok(true)),
            Verdict::Refused(_) | Verdict::PickUp(_) => false,
        }
    }

    /// How far back a development build's pass reaches: when the installed build was installed
    /// (the phone said so, [`phonelogs_driver::AppInfo::installed_at`]), else when the gateway
    /// first saw it after another build ([`crate::builds::Builds`]: the iPhone does not say),
    /// if that is after `since`. The app's lines, reports and exit records from before it were
    /// written by another build (a release build it replaced, reinstalled during the task, of
    /// the same version or not), which the pass does not cover: they are left out, unless a
    /// grant for `action` covers the app (as it would a release build's), or the person reads.
    /// `None`: nothing to leave out. The one place that decides this for every action.
    pub(crate) fn build_floor(
        &self,
        target: &Target,
        action: Action,
        since: time::OffsetDateTime,
    ) -> Option<BuildFloor> {
        let builds = &self.gateway().inner.builds;
        let now = self.gateway().now();
        let seen = builds.seen(target.driver_index, &target.device, &target.info, now);
        let floor = match (target.info.installed_at, seen) {
            (Some(at), _) => BuildFloor { at, seen: false },
            (None, Some(at)) => BuildFloor { at, seen: true },
            (None, None) => return None,
        };
        (floor.at > since && self.pass_leaves_out(target, action)).then_some(floor)
    }

    /// Whether `target` is read on a development build's pass that leaves out what another
    /// build of the app wrote: a development build, the agent reading, no grant for `action`
    /// covering the app (a store that cannot be read grants nothing). Decides for the floor
    /// and for the reports of another build ([`Session::drop_other_builds`]).
    fn pass_leaves_out(&self, target: &Target, action: Action) -> bool {
        let covered = matches!(self.covered(target, action), Ok(true));
        target.info.dev_build && !self.is_person() && !covered
    }

    /// Leaves out of `reports` those another build wrote (their
    /// [`phonelogs_driver::CrashReport::build`] is not the installed
    /// [`phonelogs_driver::AppInfo::version`]: a store build's `.ips` whose install the gateway
    /// never saw) when [`Session::pass_leaves_out`]; the sentence that says how many.
    pub(crate) fn drop_other_builds(
        &self,
        target: &Target,
        reports: &mut Vec<phonelogs_driver::CrashReport>,
    ) -> Option<String> {
        let build = self.kept_build(target)?;
        let left_out = phonelogs_view::builds::drop_other_builds(reports, build);
        (left_out > 0)
            .then(|| catalog::other_build_reports_left_out(&target.label, build, left_out))
    }

    /// The build a pass that leaves out another's shows ([`Session::pass_leaves_out`]).
    pub(crate) fn kept_build<'t>(&self, target: &'t Target) -> Option<&'t str> {
        let build = target.info.version.as_deref()?;
        self.pass_leaves_out(target, Action::Logs).then_some(build)
    }

    /// Notes the build `target` describes ([`crate::builds::Builds::seen`]), so that one seen
    /// after it on the same phone is known to be another.
    pub(crate) fn note_build(&self, target: &Target) {
        let builds = &self.gateway().inner.builds;
        let now = self.gateway().now();
        builds.seen(target.driver_index, &target.device, &target.info, now);
    }

    /// The window of a read from `since`, after [`Session::build_floor`]: its start, and the
    /// sentence that says what was left out (`what`: "Lines", "Reports") when anything was.
    /// The floor is moved up to `resolution`, the precision of the times it is compared with
    /// (whole seconds for reports, milliseconds for lines): a report of the earlier build
    /// printed at 21 s, from 21.4 s, must not pass a floor at 21.9 s compared at the second.
    pub(crate) fn build_window(
        &self,
        target: &Target,
        action: Action,
        since: time::OffsetDateTime,
        (what, resolution): (&str, time::Duration),
    ) -> (time::OffsetDateTime, Option<String>) {
        match self.build_floor(target, action, since) {
            Some(floor) => {
                let floor = BuildFloor {
                    at: phonelogs_view::builds::round_up(floor.at, resolution),
                    ..floor
                };
                (
                    since.max(floor.at),
                    Some(self.build_said(target, floor, what)),
                )
            }
            None => (since, None),
        }
    }

    /// The sentence that says `what` (from before `floor`) was left out.
    pub(crate) fn build_said(&self, target: &Target, floor: BuildFloor, what: &str) -> String {
        let clock = phonelogs_view::render::clock(floor.at, self.gateway().local_offset());
        if floor.seen {
            catalog::earlier_build_left_out_seen(&target.label, &clock, what)
        } else {
            catalog::earlier_build_left_out(&target.label, &clock, what)
        }
    }

    /// What step 3 comes to for `target`, before anything is recorded, asked or used up.
    fn verdict<'a>(
        &self,
        target: &Target,
        action: Action,
        approval_id: Option<&'a str>,
    ) -> Verdict<'a> {
        if let Some(refusal) = Refusal::device(self, target, action) {
            return Verdict::Refused(refusal);
        }
        // A development build is the app the agent is testing: no question. The person reading
        // with `phonelogs logs` is not asked either: they are the one who would answer.
        if target.info.dev_build || self.is_person() {
            return Verdict::Go;
        }
        match approval_id.map(str::trim).filter(|a| !a.is_empty()) {
            Some(approval_id) => Verdict::PickUp(approval_id),
            None => Verdict::GrantOrAsk,
        }
    }

    /// The answer an `approval_id` carries, for exactly this call. An id of another question of
    /// this task and action (the oldest waiting one, which a call past the cap was given) holds
    /// this call while it waits; once it is answered, this call asks its own question.
    fn pick_up(
        &self,
        target: &Target,
        ask: &Ask<'_>,
        approval_id: &str,
        args: &StepArgs,
    ) -> Result<Gate, Refusal> {
        let store = &self.gateway().inner.store;
        let label = target.label.as_str();
        let action = ask.action;
        let approval = match store.approval(approval_id) {
            Ok(Some(approval)) => approval,
            Ok(None) => {
                return Err(Refusal::error(
                    catalog::approval_unknown(approval_id),
                    label,
                ));
            }
            Err(error) => return Err(Refusal::error(catalog::state_unreadable(&error), label)),
        };
        let mismatch = || Refusal::error(catalog::approval_mismatch(approval_id), label);
        // A call the cap stopped was given the agent's oldest waiting question, which may be
        // another of its tasks': while it waits, that is what this call is told again.
        if approval.task_id != self.task_id()
            && approval.agent == self.spec().agent.name
            && approval.action == Some(action)
            && approval.state == ApprovalState::Pending
        {
            return Ok(Gate::waiting(&approval.id, &approval.question));
        }
        if approval.task_id != self.task_id()
            || approval.agent != self.spec().agent.name
            || approval.action != Some(action)
        {
            return Err(mismatch());
        }
        let broad = matches!(approval.answer, Some(Answer::Task | Answer::Always));
        let this_call = approval.device == target.device.as_str()
            && approval.app == target.info.app.as_str()
            && (approval.detail == ask.detail || broad);
        if !this_call {
            return match approval.state {
                ApprovalState::Pending => Ok(Gate::waiting(&approval.id, &approval.question)),
                _ => self.grant_or_ask(target, ask, args),
            };
        }
        match (approval.state, approval.answer) {
            (ApprovalState::Pending, _) => Ok(Gate::waiting(&approval.id, &approval.question)),
            (ApprovalState::Expired, _) => Err(Refusal::error(
                catalog::approval_expired(approval_id),
                label,
            )),
            (_, Some(Answer::Deny)) => {
                let rule = catalog::names::APP_LOGS;
                Err(Refusal {
                    status: Status::Denied,
                    rule: Some(rule.to_owned()),
                    message: catalog::denied_action_message(action, rule, label),
                    step: catalog::step_denied(label),
                })
            }
            (ApprovalState::Answered, Some(Answer::Once)) => match store.use_once(approval_id) {
                Ok(true) => Ok(Gate::Go),
                Ok(false) => Err(Refusal::error(catalog::approval_used(approval_id), label)),
                Err(error) => Err(Refusal::error(catalog::state_unreadable(&error), label)),
            },
            (ApprovalState::Answered, Some(Answer::Task | Answer::Always)) => Ok(Gate::Go),
            // A used "Allow once", or an answer the grants no longer back (a revoked rule).
            _ => match self.covered(target, action) {
                Ok(true) => Ok(Gate::Go),
                _ => Err(Refusal::error(catalog::approval_used(approval_id), label)),
            },
        }
    }

    fn covered(&self, target: &Target, action: Action) -> Result<bool, crate::Error> {
        self.gateway().inner.store.covered(
            self.task_id(),
            &self.spec().agent.name,
            &target.device,
            &target.info.app,
            action,
        )
    }

    /// A grant for this action, or this action's question, asked once per task however many
    /// calls wait for it.
    fn grant_or_ask(
        &self,
        target: &Target,
        ask: &Ask<'_>,
        args: &StepArgs,
    ) -> Result<Gate, Refusal> {
        let label = target.label.as_str();
        let action = ask.action;
        match self.covered(target, action) {
            Ok(true) => return Ok(Gate::Go),
            Ok(false) => {}
            Err(error) => return Err(Refusal::error(catalog::state_unreadable(&error), label)),
        }
        let question = catalog::action_question(action, label, ask.subject);
        let asked = self.gateway().inner.store.pending_or_create(
            &NewApproval {
                task_id: self.task_id(),
                agent: &self.spec().agent.name,
                device: &target.device,
                app: &target.info.app,
                app_label: label,
                action,
                detail: &ask.detail,
                question: &question,
                rule: catalog::names::APP_LOGS,
            },
            self.gateway().now(),
        );
        match asked {
            Ok(Asked::New(approval)) => {
                self.record(
                    args,
                    Some(&target.device),
                    Status::ApprovalPending,
                    catalog::step_waiting_for(&approval.question),
                );
                Ok(Gate::waiting(&approval.id, &approval.question))
            }
            Ok(Asked::Shared(approval)) => Ok(Gate::waiting(&approval.id, &approval.question)),
            Ok(Asked::Capped(oldest, cap)) => {
                let mut response = pending(&oldest.id, &oldest.question);
                response.message = catalog::pending_capped(
                    &question,
                    cap.limit(),
                    cap == QuestionCap::Action,
                    &oldest.question,
                    &oldest.id,
                );
                Ok(Gate::Stop(Box::new(response)))
            }
            Ok(Asked::Resting(until, cap)) => Err(Refusal::error(
                catalog::questions_resting(
                    &question,
                    cap.limit(),
                    cap == QuestionCap::Action,
                    &crate::store::rfc3339(until),
                ),
                label,
            )),
            Err(error) => Err(Refusal::error(catalog::state_unreadable(&error), label)),
        }
    }
}

/// The response of a question still waiting for the person.
pub(crate) fn pending(approval_id: &str, question: &str) -> LogsResponse {
    let mut response = LogsResponse::bare(
        Status::ApprovalPending,
        catalog::pending_message(question, approval_id),
    );
    response.approval_id = Some(approval_id.to_owned());
    response.rule = Some(catalog::names::APP_LOGS.to_owned());
    response
}

/// Where a development build's pass begins ([`Session::build_floor`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BuildFloor {
    /// The app's lines, reports and exit records from before this were another build's.
    pub(crate) at: time::OffsetDateTime,
    /// `at` is when the gateway first saw the build, the phone not saying when it was installed.
    pub(crate) seen: bool,
}
