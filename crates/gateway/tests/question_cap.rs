//! The question caps per agent as a well-behaved user meets them (the final review of issue 28,
//! finding 2): the same question asked again after a client restart reaches the person, and
//! the cap counts per app, so another app's question is still asked; and as an agent that
//! would flood the person meets them (issue 37, item 6): the per-app cap counts whatever the
//! phone is called, and one agent's questions of every kind have an overall cap of their own.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use phonelogs_driver::{AppId, DeviceId};
use phonelogs_fake::{FakeApp, FakePhone};
use phonelogs_gateway::{LogsRequest, MAX_PENDING_PER_ACTION, MAX_PENDING_PER_AGENT, Status};

/// A person away from the desk leaves an agent's question to read a release build's logs
/// unanswered over three short stdio sessions (each client start is one task; each asks the
/// same one question). When they come back and start the client again, the new session's call
/// should put that question before them: it is one question, the same every time, not a flood.
/// Before this fix the three expired copies "rest" for 5 minutes and the call is refused without
/// a question, so the person has nothing to answer.
#[tokio::test]
async fn the_same_unanswered_question_asked_again_after_a_restart_reaches_the_person() {
    let phone = phone();
    let gateway = gateway(&phone);
    for _ in 0..3 {
        let session = task(&gateway, "claude-code");
        let asked = session.logs(logs(RELEASE_APP)).await;
        assert_eq!(asked.status, Status::ApprovalPending, "{}", asked.message);
        session.end().await;
    }
    let back = task(&gateway, "claude-code");
    let got = back.logs(logs(RELEASE_APP)).await;
    assert_eq!(
        got.status,
        Status::ApprovalPending,
        "the person is back, and no question reaches them: {:?}: {}",
        got.status,
        got.message
    );
}

/// The cap counts questions about one app: an agent testing a fourth release
/// build while three others' questions wait still has the fourth app's question put to the
/// person (before, it was told the first app's approval id and nothing was asked).
#[tokio::test]
async fn a_question_about_a_fourth_app_is_still_asked() {
    let phone = phone_with(FakePhone::new());
    let apps = [
        "com.example.one",
        "com.example.two",
        "com.example.three",
        "com.example.four",
    ];
    for (at, app) in apps.iter().enumerate() {
        let uid = 10800 + u32::try_from(at).unwrap();
        phone.add_app(
            &device(),
            FakeApp::new(AppId::new(*app)).label(*app).uid(uid),
        );
    }
    let gateway = gateway(&phone);
    let session = task(&gateway, "claude-code");
    for app in apps {
        let asked = session.logs(logs(app)).await;
        assert_eq!(asked.status, Status::ApprovalPending, "{}", asked.message);
    }
    let waiting = gateway.store().pending_approvals().unwrap();
    let asked: Vec<&str> = waiting.iter().map(|a| a.app.as_str()).collect();
    assert!(
        asked.contains(&"com.example.four"),
        "asked about: {asked:?}"
    );
    assert_eq!(waiting.len(), apps.len());
}

/// A phone with `apps` release builds (uids from 10800) on each of `serials`.
fn phones_with_apps(serials: &[&str], apps: &[String]) -> FakePhone {
    let phone = phone_with(FakePhone::new());
    for serial in serials {
        let device = DeviceId::new(*serial);
        if *serial != DEVICE {
            phone.add_device(&device, "Pixel 9");
        }
        for (at, app) in apps.iter().enumerate() {
            let uid = 10800 + u32::try_from(at).unwrap();
            phone.add_app(&device, FakeApp::new(AppId::new(app)).label(app).uid(uid));
        }
    }
    phone
}

fn logs_on(app: &str, serial: &str) -> LogsRequest {
    LogsRequest {
        device: Some(serial.to_owned()),
        ..logs(app)
    }
}

fn app_names(count: usize) -> Vec<String> {
    (0..count)
        .map(|at| format!("com.example.app{at}"))
        .collect()
}

/// Issue 37, item 6: the per-app cap was keyed by the phone's name as well, so the same app
/// reached by several names (one phone behind two adb servers, `A/serial` and `B/serial`, or
/// the same build on several phones) raised three questions per name. Five names of one app,
/// and no more than the cap's questions wait; the call past it is told the first one's id.
#[tokio::test]
async fn the_per_app_cap_counts_whatever_the_phone_is_called() {
    let serials = [
        DEVICE,
        "emulator-5556",
        "emulator-5558",
        "emulator-5560",
        "emulator-5562",
    ];
    let apps = app_names(1);
    let phone = phones_with_apps(&serials, &apps);
    let gateway = gateway(&phone);
    let session = task(&gateway, "claude-code");
    let mut answers = Vec::new();
    for serial in serials {
        answers.push(session.logs(logs_on(&apps[0], serial)).await);
    }
    for answer in &answers {
        assert_eq!(answer.status, Status::ApprovalPending, "{}", answer.message);
    }
    let waiting = gateway.store().pending_approvals().unwrap();
    assert_eq!(waiting.len(), MAX_PENDING_PER_ACTION, "{waiting:#?}");
    let past = answers.last().unwrap();
    assert!(
        past.message.starts_with("Not asked yet")
            && past.message.contains(&format!(
                "{MAX_PENDING_PER_ACTION} questions of this kind from this agent"
            )),
        "{}",
        past.message
    );
    assert_eq!(past.approval_id.as_deref(), Some(waiting[0].id.as_str()));
}

/// Issue 37, item 6: counted per app, an agent could raise three questions for every app it
/// may name, a page of notices the person cannot get through. Its questions of every kind wait
/// at most `MAX_PENDING_PER_AGENT` at once; the call past that is told the first one's id and
/// says why; another agent's question is still asked, and once the person answers one, the next
/// call asks its own.
#[tokio::test]
async fn one_agent_has_a_fair_share_of_the_persons_questions() {
    let apps = app_names(MAX_PENDING_PER_AGENT + 3);
    let phone = phones_with_apps(&[DEVICE], &apps);
    let gateway = gateway(&phone);
    let session = task(&gateway, "claude-code");
    let mut answers = Vec::new();
    for app in &apps {
        answers.push(session.logs(logs(app)).await);
    }
    let waiting = gateway.store().pending_approvals().unwrap();
    assert_eq!(waiting.len(), MAX_PENDING_PER_AGENT, "{waiting:#?}");
    let past = answers.last().unwrap();
    assert_eq!(past.status, Status::ApprovalPending, "{}", past.message);
    assert!(
        past.message.contains(&format!(
            "{MAX_PENDING_PER_AGENT} questions from this agent (as many as one agent may have at once)"
        )),
        "{}",
        past.message
    );
    assert_eq!(past.approval_id.as_deref(), Some(waiting[0].id.as_str()));
    // Another task of the same agent is held by the same share.
    let second = task(&gateway, "claude-code");
    let again = second.logs(logs(apps.last().unwrap())).await;
    assert_eq!(again.status, Status::ApprovalPending, "{}", again.message);
    assert_eq!(
        gateway.store().pending_approvals().unwrap().len(),
        MAX_PENDING_PER_AGENT
    );
    // Another agent has a share of its own.
    let other = task(&gateway, "codex")
        .logs(logs(apps.last().unwrap()))
        .await;
    assert_eq!(other.status, Status::ApprovalPending, "{}", other.message);
    assert_eq!(
        gateway.store().pending_approvals().unwrap().len(),
        MAX_PENDING_PER_AGENT + 1
    );
    // The person answers one: the next call asks its own.
    gateway
        .store()
        .answer(&waiting[0].id, phonelogs_gateway::Answer::Deny)
        .unwrap();
    session.logs(logs(apps.last().unwrap())).await;
    let asked: Vec<String> = gateway
        .store()
        .pending_approvals()
        .unwrap()
        .into_iter()
        .filter(|a| a.agent == "claude-code")
        .map(|a| a.app)
        .collect();
    assert!(asked.contains(apps.last().unwrap()), "{asked:?}");
}

/// Issue 37, item 6: the overall share counts questions left unanswered when their sessions
/// ended, as the per-app cap does, so reconnecting does not raise a fresh page of them; the
/// same question asked again still reaches the person.
#[tokio::test]
async fn reconnecting_does_not_renew_an_agents_share() {
    let apps = app_names(MAX_PENDING_PER_AGENT + 1);
    let phone = phones_with_apps(&[DEVICE], &apps);
    let gateway = gateway(&phone);
    let first = task(&gateway, "claude-code");
    for app in &apps[..MAX_PENDING_PER_AGENT] {
        let asked = first.logs(logs(app)).await;
        assert_eq!(asked.status, Status::ApprovalPending, "{}", asked.message);
    }
    first.end().await;
    let back = task(&gateway, "claude-code");
    let fresh = back.logs(logs(apps.last().unwrap())).await;
    assert_eq!(fresh.status, Status::Error, "{}", fresh.message);
    assert!(
        fresh.message.contains("Call again after")
            && fresh.message.contains("questions from this agent"),
        "{}",
        fresh.message
    );
    let same = back.logs(logs(&apps[0])).await;
    assert_eq!(same.status, Status::ApprovalPending, "{}", same.message);
}
