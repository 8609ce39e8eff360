//! The question cap per agent as a well-behaved user meets it (the final review of issue 28,
//! finding 2): the same question asked again after a client restart reaches the person, and
//! the cap counts per app and phone, so another app's question is still asked.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use phonelogs_driver::AppId;
use phonelogs_fake::{FakeApp, FakePhone};
use phonelogs_gateway::Status;

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

/// The cap counts questions about one app on one phone: an agent testing a fourth release
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
