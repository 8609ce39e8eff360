//! The store contract's conformance suite: what every [`StoreBackend`] must do, checked the same
//! way on each (SQLite in this crate's tests, PostgreSQL in `phonelogs-store-pg`'s). For tests
//! only (the `conformance` feature, in dev-dependencies).
//!
//! [`run`] takes two handles on one store (two servers on one database, or two opens of one
//! SQLite file): a question asked through one is answered through the other, as a person
//! answers on another server's page. Every name it writes is fresh, so it can run against a
//! store that holds other data, and again.

use std::time::Duration;

use phonelogs_driver::{AppId, DeviceId};
use phonelogs_policy::Action;
use time::OffsetDateTime;

use super::{Asked, MAX_PENDING_PER_ACTION, NewApproval, NewStep, QuestionCap, Store};
use crate::types::{
    AGENT_TEXT_BYTES, Answer, AnsweredVia, ApprovalState, HistoryFilter, Status, StepArgs,
};
use crate::{Error, new_id};

/// Every check of the contract, in turn; `a` and `b` are two handles on one store. Each check
/// panics with what the backend got wrong.
pub async fn run(a: &Store, b: &Store) {
    questions_are_shared_and_listed(a, b);
    exactly_one_answer(a, b);
    grants_cover_what_they_say(a, b);
    the_caps_hold_across_servers(a, b);
    blocks_and_masking(a, b);
    the_history_keeps_order_and_cuts_agent_text(a, b);
    an_ended_task_expires_its_questions(a, b);
    a_waiting_call_is_woken_by_an_answer_elsewhere(a, b).await;
}

/// The names of one check: a fresh agent, task, phone and app.
struct Names {
    agent: String,
    task: String,
    device: DeviceId,
    app: AppId,
}

fn names() -> Names {
    let id = new_id("conf");
    Names {
        agent: format!("agent-{id}"),
        task: format!("task-{id}"),
        device: DeviceId::new(format!("phone-{id}")),
        app: AppId::new(format!("com.example.{}", id.replace('-', "_"))),
    }
}

fn ok<T>(result: Result<T, Error>, what: &str) -> T {
    match result {
        Ok(value) => value,
        Err(error) => panic!("{what} failed: {error}"),
    }
}

fn ask<'a>(n: &'a Names, task: &'a str, action: Action, detail: &'a str) -> NewApproval<'a> {
    NewApproval {
        task_id: task,
        agent: &n.agent,
        device: &n.device,
        app: &n.app,
        app_label: "Example",
        action,
        detail,
        question: "Read the logs of Example?",
        rule: "ask",
    }
}

fn new_question(store: &Store, ask: &NewApproval<'_>) -> String {
    match ok(
        store.pending_or_create(ask, OffsetDateTime::now_utc()),
        "asking",
    ) {
        Asked::New(approval) => approval.id,
        other => panic!("a first question was not made: {other:?}"),
    }
}

fn begin(store: &Store, n: &Names, task: &str) {
    let started = OffsetDateTime::now_utc();
    ok(
        store.begin_task(task, &n.agent, started),
        "beginning a task",
    );
    ok(
        store.begin_task(task, &n.agent, started),
        "beginning a task again",
    );
}

fn questions_are_shared_and_listed(a: &Store, b: &Store) {
    let n = names();
    begin(a, &n, &n.task);
    let id = new_question(a, &ask(&n, &n.task, Action::Logs, ""));
    let again = ok(
        b.pending_or_create(
            &ask(&n, &n.task, Action::Logs, ""),
            OffsetDateTime::now_utc(),
        ),
        "asking again",
    );
    assert!(
        matches!(&again, Asked::Shared(approval) if approval.id == id),
        "the same question on another server made a second one: {again:?}"
    );
    let pending = ok(b.pending_approvals(), "listing");
    assert!(
        pending.iter().any(|p| p.id == id),
        "not listed on the other server"
    );
    let read = ok(b.approval(&id), "reading").expect("the question is there");
    assert_eq!(read.state, ApprovalState::Pending);
    assert_eq!(read.action, Some(Action::Logs));
    assert_eq!(read.app, n.app.as_str());
    assert!(ok(a.approval("ap-none"), "reading none").is_none());
}

fn exactly_one_answer(a: &Store, b: &Store) {
    let n = names();
    begin(a, &n, &n.task);
    let id = new_question(a, &ask(&n, &n.task, Action::Logs, ""));
    let (first, second) = std::thread::scope(|scope| {
        let one = scope.spawn(|| a.answer_via(&id, Answer::Once, AnsweredVia::Page));
        let two = scope.spawn(|| b.answer_via(&id, Answer::Deny, AnsweredVia::CommandLine));
        (one.join(), two.join())
    });
    let results = [
        first.expect("no panic answering"),
        second.expect("no panic answering"),
    ];
    let applied = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(applied, 1, "two answers raced: {results:?}");
    assert!(
        results
            .iter()
            .any(|r| matches!(r, Err(Error::AlreadyAnswered(_)))),
        "the second answer was not refused as answered: {results:?}"
    );
    let answered = ok(a.approval(&id), "reading").expect("there");
    assert_eq!(answered.state, ApprovalState::Answered);
    let steps = ok(
        b.history(HistoryFilter {
            task_id: Some(n.task.clone()),
            ..HistoryFilter::default()
        }),
        "history",
    );
    assert_eq!(steps.len(), 1, "one answer, one history step: {steps:?}");
    assert!(matches!(
        a.answer("ap-none", Answer::Once),
        Err(Error::UnknownApproval(_))
    ));
    if answered.answer == Some(Answer::Once) {
        assert!(ok(b.use_once(&id), "using once"), "the once was not usable");
        assert!(!ok(a.use_once(&id), "using twice"), "used twice");
    }
}

fn grants_cover_what_they_say(a: &Store, b: &Store) {
    let n = names();
    let other_task = format!("{}-2", n.task);
    begin(a, &n, &n.task);
    begin(b, &n, &other_task);
    let covered = |store: &Store, task: &str, action| {
        ok(
            store.covered(task, &n.agent, &n.device, &n.app, action),
            "checking a grant",
        )
    };
    assert!(
        !covered(b, &n.task, Action::Logs),
        "covered before any answer"
    );
    let id = new_question(a, &ask(&n, &n.task, Action::Logs, ""));
    ok(b.answer(&id, Answer::Task), "answering task");
    assert!(covered(a, &n.task, Action::Logs), "task grant missing");
    assert!(!covered(a, &other_task, Action::Logs), "task grant leaked");
    assert!(
        !covered(a, &n.task, Action::ExitHistory),
        "grant covers another action"
    );
    let id = new_question(b, &ask(&n, &other_task, Action::ExitHistory, ""));
    ok(a.answer(&id, Answer::Always), "answering always");
    let third = format!("{}-3", n.task);
    assert!(
        covered(b, &third, Action::ExitHistory),
        "a rule must cover a later task"
    );
    let rules = ok(b.rules(), "listing rules");
    let rule = rules
        .iter()
        .find(|r| r.agent == n.agent)
        .expect("the rule is listed");
    assert_eq!(rule.action, Action::ExitHistory);
    ok(a.revoke_rule(&rule.id), "revoking");
    assert!(
        !covered(b, &third, Action::ExitHistory),
        "a revoked rule still covers"
    );
    assert!(matches!(
        b.revoke_rule(&rule.id),
        Err(Error::UnknownRule(_))
    ));
    ok(a.end_task(&n.task), "ending");
    assert!(
        !covered(b, &n.task, Action::Logs),
        "a task grant outlived its task"
    );
}

fn the_caps_hold_across_servers(a: &Store, b: &Store) {
    let n = names();
    begin(a, &n, &n.task);
    let details: Vec<String> = (0..=MAX_PENDING_PER_ACTION)
        .map(|pid| format!("pid {pid}"))
        .collect();
    let stores = [a, b];
    for (i, detail) in details.iter().take(MAX_PENDING_PER_ACTION).enumerate() {
        new_question(stores[i % 2], &ask(&n, &n.task, Action::Backtrace, detail));
    }
    let last = &details[MAX_PENDING_PER_ACTION];
    let capped = ok(
        b.pending_or_create(
            &ask(&n, &n.task, Action::Backtrace, last),
            OffsetDateTime::now_utc(),
        ),
        "asking past the cap",
    );
    assert!(
        matches!(capped, Asked::Capped(_, QuestionCap::Action)),
        "the cap did not hold: {capped:?}"
    );
}

fn blocks_and_masking(a: &Store, b: &Store) {
    let n = names();
    assert!(!ok(b.is_blocked(&n.app), "reading a block"));
    ok(a.block_app(&n.app), "blocking");
    ok(a.block_app(&n.app), "blocking again");
    assert!(ok(b.is_blocked(&n.app), "reading a block"));
    assert!(ok(b.blocked_apps(), "listing").contains(&n.app));
    ok(b.unblock_app(&n.app), "unblocking");
    assert!(matches!(a.unblock_app(&n.app), Err(Error::NotBlocked(_))));
    assert!(
        matches!(
            a.unmask_app(&n.app, AnsweredVia::ClientDialog),
            Err(Error::InvalidArgument(_))
        ),
        "an agent's client turned masking off"
    );
    assert!(!ok(b.is_unmasked(&n.app), "reading masking"));
    ok(a.unmask_app(&n.app, AnsweredVia::Page), "unmasking");
    assert!(ok(b.is_unmasked(&n.app), "reading masking"));
    assert!(
        ok(b.unmasked_apps(), "listing")
            .iter()
            .any(|(app, _)| *app == n.app)
    );
    ok(b.mask_app(&n.app, AnsweredVia::CommandLine), "masking");
    assert!(matches!(
        a.mask_app(&n.app, AnsweredVia::CommandLine),
        Err(Error::NotUnmasked(_))
    ));
}

fn the_history_keeps_order_and_cuts_agent_text(a: &Store, b: &Store) {
    let n = names();
    begin(a, &n, &n.task);
    let long = "x".repeat(AGENT_TEXT_BYTES * 4);
    for (i, store) in [a, b, a].into_iter().enumerate() {
        let step = NewStep {
            task_id: &n.task,
            agent: &n.agent,
            device: Some(n.device.as_str()),
            status: if i == 1 { Status::Denied } else { Status::Ok },
            step: format!("step {i}"),
            args: StepArgs {
                app: n.app.to_string(),
                kind: "logs".into(),
                filter: Some(long.clone()),
                limit: Some(10),
                ..StepArgs::default()
            },
        };
        ok(store.record_step(&step), "recording");
    }
    let by_task = HistoryFilter {
        task_id: Some(n.task.clone()),
        ..HistoryFilter::default()
    };
    let steps = ok(b.history(by_task.clone()), "history");
    let order: Vec<&str> = steps.iter().map(|s| s.step.as_str()).collect();
    assert_eq!(order, ["step 0", "step 1", "step 2"], "out of order");
    let filter = steps[0].args.filter.as_deref().unwrap_or_default();
    assert!(
        filter.len() < long.len(),
        "an agent's text was stored whole"
    );
    let newest = ok(
        a.history(HistoryFilter {
            limit: Some(1),
            ..by_task.clone()
        }),
        "history with a limit",
    );
    assert_eq!(newest.len(), 1);
    assert_eq!(newest[0].step, "step 2", "a limit keeps the newest");
    let denied = ok(
        a.history(HistoryFilter {
            status: Some(Status::Denied),
            device: Some(n.device.to_string()),
            ..by_task
        }),
        "history by status",
    );
    assert_eq!(denied.len(), 1);
}

fn an_ended_task_expires_its_questions(a: &Store, b: &Store) {
    let n = names();
    begin(a, &n, &n.task);
    let id = new_question(a, &ask(&n, &n.task, Action::Logs, ""));
    assert!(!ok(b.task_ended(&n.task), "reading a task"));
    ok(b.end_task(&n.task), "ending");
    assert!(ok(a.task_ended(&n.task), "reading a task"));
    let expired = ok(a.approval(&id), "reading").expect("there");
    assert_eq!(expired.state, ApprovalState::Expired);
    assert!(matches!(
        b.answer(&id, Answer::Once),
        Err(Error::ApprovalExpired(_))
    ));
}

async fn a_waiting_call_is_woken_by_an_answer_elsewhere(a: &Store, b: &Store) {
    let n = names();
    begin(a, &n, &n.task);
    let id = new_question(a, &ask(&n, &n.task, Action::Logs, ""));
    let soon = tokio::time::Instant::now() + Duration::from_millis(50);
    assert_eq!(a.wait_answer(&id, soon).await, None, "an unanswered wait");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let waiter = a.clone();
    let waited = id.clone();
    let waiting = tokio::spawn(async move { waiter.wait_answer(&waited, deadline).await });
    tokio::task::yield_now().await;
    ok(
        b.answer_via(&id, Answer::Task, AnsweredVia::Page),
        "answering",
    );
    let got = waiting.await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        got,
        Some(Answer::Task),
        "the waiting call missed the answer"
    );
    assert!(
        tokio::time::Instant::now() < deadline,
        "woken only by the deadline"
    );
    assert_eq!(
        a.wait_answer("ap-none", deadline).await,
        None,
        "no such question"
    );
}
