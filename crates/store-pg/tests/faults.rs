//! Faults with a real PostgreSQL (issue 41, item 4): the server restarted while a call waits for
//! an answer (the answer still reaches it, before its deadline); the server down (a read that
//! needs a decision fails closed, naming the store, within the operation's deadline); and TLS
//! (`sslmode=verify-full` with the CA file connects; without it the certificate is refused).

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use phonelogs_driver::{AppId, DeviceId};
use phonelogs_gateway::store::{Asked, NewApproval};
use phonelogs_gateway::{Action, Answer, Error, Store};
use phonelogs_store_pg::testing::{TempPostgres, make_certificates};
use phonelogs_store_pg::{PgOptions, PgStore};

fn options() -> PgOptions {
    PgOptions {
        poll: Duration::from_millis(200),
        op_timeout: Duration::from_secs(3),
        ..PgOptions::default()
    }
}

fn ask(store: &Store) -> String {
    let (device, app) = (
        DeviceId::new("emulator-5554"),
        AppId::new("com.example.store"),
    );
    let asked = store
        .pending_or_create(
            &NewApproval {
                task_id: "task-1",
                agent: "agent",
                device: &device,
                app: &app,
                app_label: "Store",
                action: Action::Logs,
                detail: "",
                question: "Read the logs of Store?",
                rule: "ask",
            },
            time::OffsetDateTime::now_utc(),
        )
        .unwrap();
    match asked {
        Asked::New(approval) => approval.id,
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_mid_wait_loses_no_answer_and_a_store_down_fails_closed() {
    let Some(pg) = TempPostgres::start() else {
        return;
    };
    pg.create_database("faults");
    let url = pg.url("faults", "sslmode=disable");
    PgStore::migrate(&url).unwrap();
    let waiter = Store::new(PgStore::connect(&url, options()).unwrap());
    let id = ask(&waiter);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let waiting = {
        let (waiter, id) = (waiter.clone(), id.clone());
        tokio::spawn(async move { waiter.wait_answer(&id, deadline).await })
    };
    let pg = tokio::task::spawn_blocking({
        let url = url.clone();
        move || {
            pg.restart();
            let answerer = PgStore::connect(&url, options()).unwrap();
            Store::new(answerer).answer(&id, Answer::Task).unwrap();
            pg
        }
    })
    .await
    .unwrap();
    let got = waiting.await.unwrap();
    assert_eq!(
        got,
        Some(Answer::Task),
        "the answer after the restart was lost"
    );
    assert!(tokio::time::Instant::now() < deadline);

    // Down: a read that needs a decision is an error naming the store, in time.
    pg.stop();
    let started = std::time::Instant::now();
    let blocked = waiter.is_blocked(&AppId::new("com.example.store"));
    let took = started.elapsed();
    match blocked {
        Err(Error::Store { store, message }) => {
            assert!(store.starts_with("PostgreSQL 127.0.0.1:"), "{store}");
            assert!(!message.is_empty());
        }
        other => panic!("a store that is down did not fail closed: {other:?}"),
    }
    assert!(took < Duration::from_secs(10), "took {took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_verifies_the_server_against_the_ca_file() {
    let certs = tempfile::tempdir().unwrap();
    let Some((ca, cert, key)) = make_certificates(certs.path()) else {
        return;
    };
    let Some(pg) = TempPostgres::start_tls(&cert, &key) else {
        return;
    };
    pg.create_database("tls");
    let ca = ca.to_str().unwrap().to_owned();
    let verified = pg.url("tls", &format!("sslmode=verify-full&sslrootcert={ca}"));
    PgStore::migrate(&verified).unwrap();
    let store = Store::new(PgStore::connect(&verified, options()).unwrap());
    store.block_app(&AppId::new("com.example.tls")).unwrap();
    let in_tls = pg.psql("tls", "SELECT count(*) FROM pg_stat_ssl WHERE ssl");
    assert_ne!(in_tls.trim(), "0", "no connection used TLS");
    // The system's CAs do not know the test CA: refused, naming the store.
    let unknown = PgStore::connect(&pg.url("tls", "sslmode=require"), options());
    match unknown {
        Err(Error::Store { store, message }) => {
            assert!(store.starts_with("PostgreSQL"), "{store}");
            assert!(message.to_lowercase().contains("certificate"), "{message}");
        }
        other => panic!("an unknown certificate was accepted: {other:?}"),
    }
}
