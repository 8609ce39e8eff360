//! The shared store's bench (issue 41, item 7): questions asked and answered per second, and
//! answer-to-release latency (from the answer's commit to the waiting call's return, p50 and
//! p99), with 1, 2 and 4 servers (stores) on one PostgreSQL, with and without `LISTEN/NOTIFY`,
//! beside the SQLite store on one server, in one run. `cargo bench -p phonelogs-store-pg
//! --bench answers`; under `cargo test` (no `--bench`) one quick round, nothing judged.

#![allow(clippy::unwrap_used, missing_docs)]

use std::time::{Duration, Instant};

use phonelogs_driver::{AppId, DeviceId};
use phonelogs_gateway::store::{Asked, NewApproval};
use phonelogs_gateway::{Action, Answer, AnsweredVia, Store};
use phonelogs_store_pg::testing::TempPostgres;
use phonelogs_store_pg::{PgOptions, PgStore};

fn ask(store: &Store, n: usize) -> String {
    let (device, app) = (
        DeviceId::new("emulator-5554"),
        AppId::new(format!("com.example.a{n}")),
    );
    let task = format!("bench-task-{n}");
    store
        .begin_task(&task, "bench", time::OffsetDateTime::now_utc())
        .unwrap();
    let ask = NewApproval {
        task_id: &task,
        agent: "bench",
        device: &device,
        app: &app,
        app_label: "App",
        action: Action::Logs,
        detail: "",
        question: "Read the logs of App?",
        rule: "ask",
    };
    match store
        .pending_or_create(&ask, time::OffsetDateTime::now_utc())
        .unwrap()
    {
        Asked::New(approval) => approval.id,
        other => panic!("{other:?}"),
    }
}

/// `questions` questions, each asked on one server and waited for there, answered on the next
/// server (round robin): questions per second and the release latencies.
async fn run(stores: &[Store], questions: usize, offset: usize) -> (f64, Vec<Duration>) {
    let mut released = Vec::with_capacity(questions);
    let started = Instant::now();
    for q in 0..questions {
        let asker = &stores[q % stores.len()];
        let answerer = stores[(q + 1) % stores.len()].clone();
        let id = ask(asker, offset + q);
        let waiter = asker.clone();
        let waited = id.clone();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        let waiting = tokio::spawn(async move {
            let got = waiter.wait_answer(&waited, deadline).await;
            (got, Instant::now())
        });
        // The waiting call reads once, then waits: answer after that.
        tokio::time::sleep(Duration::from_millis(3)).await;
        let answered = tokio::task::spawn_blocking(move || {
            answerer
                .answer_via(&id, Answer::Once, AnsweredVia::Page)
                .unwrap();
            Instant::now()
        })
        .await
        .unwrap();
        let (got, at) = waiting.await.unwrap();
        assert_eq!(got, Some(Answer::Once));
        released.push(at.saturating_duration_since(answered));
    }
    let rate = questions as f64 / started.elapsed().as_secs_f64();
    released.sort();
    (rate, released)
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at].as_secs_f64() * 1000.0
}

fn main() {
    let quick = !std::env::args().any(|a| a == "--bench");
    let questions = if quick { 5 } else { 300 };
    let Some(pg) = TempPostgres::start() else {
        return;
    };
    pg.create_database("bench");
    let url = pg.url("bench", "sslmode=disable");
    PgStore::migrate(&url).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    println!("| store | servers | NOTIFY | questions/s | release p50 | release p99 |");
    println!("| --- | --- | --- | --- | --- | --- |");
    let sqlite = Store::open(dir.path()).unwrap();
    let (rate, lat) = rt.block_on(run(&[sqlite], questions, 0));
    println!(
        "| SQLite | 1 | (polls every 200 ms) | {rate:.0} | {:.2} ms | {:.2} ms |",
        pct(&lat, 0.5),
        pct(&lat, 0.99)
    );
    let mut offset = questions;
    for notify in [true, false] {
        for servers in [1, 2, 4] {
            let options = PgOptions {
                notify,
                ..PgOptions::default()
            };
            let stores: Vec<Store> = (0..servers)
                .map(|_| Store::new(PgStore::connect(&url, options.clone()).unwrap()))
                .collect();
            // Without NOTIFY each answer waits out a poll (1 s): fewer questions.
            let count = if notify { questions } else { questions.min(40) };
            let (rate, lat) = rt.block_on(run(&stores, count, offset));
            offset += count;
            let how = if notify {
                "yes"
            } else {
                "no (polls every 1 s)"
            };
            println!(
                "| PostgreSQL | {servers} | {how} | {rate:.0} | {:.2} ms | {:.2} ms |",
                pct(&lat, 0.5),
                pct(&lat, 0.99)
            );
        }
    }
}
