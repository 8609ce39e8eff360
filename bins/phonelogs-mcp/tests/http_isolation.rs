//! Isolation under concurrency over HTTP: 16 MCP sessions at once, each its own agent (token)
//! and app, across four simulated phones split two and two between two private real adb
//! servers (`--adb-server A --adb-server B`), each phone called by the name `list_devices`
//! gave it (`server/serial`). No result holds a line of another session's app (canary strings,
//! checked on every result), every call reaches its phone on either server, an approval does
//! not cross sessions on either server, and every call is in the history. The figures are the
//! bench's (`benches/http_load.rs`); this asserts only what must hold.

#![allow(clippy::unwrap_used)]

mod http_support;

use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};

use http_support::load;

const AGENTS: usize = 16;
const CALLS: usize = 160;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixteen_sessions_see_only_their_own_app() {
    let Some(lab) = load::lab(AGENTS, 4, 30).await else {
        return;
    };
    let lab = Arc::new(lab);
    let tally = Arc::new(Mutex::new(load::Tally::default()));
    assert_eq!(lab.servers.len(), 2);
    for s in 0..lab.servers.len() {
        assert_eq!(lab.phones_of(s).len(), 2, "two phones on server {s}");
    }
    load::run(&lab, CALLS, None, &tally, &Arc::new(AtomicUsize::new(0))).await;
    let tally = std::mem::take(&mut *tally.lock().unwrap());
    assert!(tally.leaks.is_empty(), "{:?}", tally.leaks);
    assert_eq!(tally.outcomes.len(), CALLS);
    for outcome in &tally.outcomes {
        assert_eq!(outcome.status.as_deref(), Ok("ok"), "{outcome:?}");
    }
    for s in 0..lab.servers.len() {
        let on_s = tally
            .outcomes
            .iter()
            .filter(|o| lab.server_of[o.phone] == s)
            .count();
        assert_eq!(on_s, CALLS / 2, "calls on server {s}'s phones");
    }
    for i in 0..AGENTS {
        let calls = tally.outcomes.iter().filter(|o| o.agent == i).count();
        assert_eq!(load::history_of(&lab, i), calls, "agent {i}'s history");
    }

    let seen = load::approval_stays_in_its_session(&lab, 0, 1).await;
    assert_eq!(seen.len(), 2, "one phone of each server");
    for (phone, stolen, own) in seen {
        assert_ne!(stolen["status"], "ok", "{phone}: {stolen}");
        assert!(
            stolen["log"].as_str().unwrap_or_default().is_empty(),
            "{phone}: {stolen}"
        );
        assert_eq!(own["status"], "ok", "{phone}: {own}");
    }
}
