//! Faults with a real PostgreSQL (issue 41, item 4): the server restarted while a call waits for
//! an answer (the answer still reaches it, before its deadline); the server down (a read that
//! needs a decision fails closed, naming the store, within the operation's deadline); the
//! network between one server and the database cut for a while (through the loopback proxy of
//! `tests/proxy`: calls fail naming the store, the waiting call gets the answer given meanwhile
//! on another server, nothing applied twice); a server killed mid-answer (its connections
//! closed while its answer's transaction waits, before or at its commit: the answer is applied
//! once or not at all, and the waiting call on another server is released by the answer that
//! counts); and TLS (`sslmode=verify-full` with the CA file connects; without it the
//! certificate is refused).
//!
//! The tests wait on events (a call's result, a warning the waiting call logs, a backend seen
//! waiting on a lock in `pg_stat_activity`), never on timing; the one check on time is that a
//! waiting call ends before its deadline.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use phonelogs_driver::{AppId, DeviceId};
use phonelogs_gateway::store::{Asked, NewApproval};
use phonelogs_gateway::{Action, Answer, ApprovalState, Error, Store};
use phonelogs_store_pg::testing::{TempPostgres, make_certificates};
use phonelogs_store_pg::{PgOptions, PgStore};

mod proxy;
mod warnings;

use proxy::Proxy;

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

/// How long a waiting call of the tests below may wait: the deadline guard.
const WAIT: Duration = Duration::from_secs(30);

/// One database and three servers on it: `waiter` waits for answers, `behind` reaches the
/// database through the proxy (its network is cut, or it is killed), `other` answers too.
struct Farm {
    waiter: Store,
    behind: Store,
    other: Store,
    /// `behind`'s store as its errors name it.
    behind_name: String,
    proxy: Proxy,
    database: &'static str,
    // Last: stopped after the stores and the proxy.
    pg: TempPostgres,
}

fn farm(database: &'static str) -> Option<Farm> {
    let pg = TempPostgres::start()?;
    pg.create_database(database);
    let direct = pg.url(database, "sslmode=disable");
    PgStore::migrate(&direct).unwrap();
    let proxy = Proxy::start(pg.port);
    let proxied = format!(
        "postgres://postgres@127.0.0.1:{}/{database}?sslmode=disable",
        proxy.port
    );
    let behind = Store::new(PgStore::connect(&proxied, options()).unwrap());
    let behind_name = format!("PostgreSQL 127.0.0.1:{}/{database}", proxy.port);
    assert_eq!(behind.describe(), behind_name);
    Some(Farm {
        waiter: Store::new(PgStore::connect(&direct, options()).unwrap()),
        other: Store::new(PgStore::connect(&direct, options()).unwrap()),
        behind,
        behind_name,
        proxy,
        database,
        pg,
    })
}

impl Farm {
    /// A plain connection of the test's own (locks, counts, `pg_stat_activity`).
    async fn client(&self) -> tokio_postgres::Client {
        let config = format!(
            "host=127.0.0.1 port={} user=postgres dbname={}",
            self.pg.port, self.database
        );
        let (client, connection) = tokio_postgres::connect(&config, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        client
    }

    /// `waiter` waits for the answer to `id` (within [`WAIT`]).
    fn wait(&self, id: &str) -> tokio::task::JoinHandle<Option<Answer>> {
        wait(&self.waiter, id)
    }

    /// `behind` answers `id` on a thread of its own (its call blocks).
    fn answer_behind(
        &self,
        id: &str,
        answer: Answer,
    ) -> tokio::task::JoinHandle<Result<(), Error>> {
        let (behind, id) = (self.behind.clone(), id.to_owned());
        tokio::task::spawn_blocking(move || behind.answer(&id, answer))
    }

    /// Asserts that `result` is an error naming `behind`'s store.
    fn names_the_store(&self, result: Result<impl std::fmt::Debug, Error>, what: &str) {
        match result {
            Err(Error::Store { store, message }) => {
                assert_eq!(store, self.behind_name, "{what}: {message}");
                assert!(!message.is_empty(), "{what}");
            }
            other => panic!("{what}: not an error naming the store: {other:?}"),
        }
    }
}

/// `store` waits for the answer to `id`; the call must end before its deadline ([`WAIT`]).
fn wait(store: &Store, id: &str) -> tokio::task::JoinHandle<Option<Answer>> {
    let (store, id) = (store.clone(), id.to_owned());
    let deadline = tokio::time::Instant::now() + WAIT;
    tokio::spawn(async move {
        let got = store.wait_answer(&id, deadline).await;
        assert!(
            tokio::time::Instant::now() < deadline,
            "the waiting call ran to its deadline"
        );
        got
    })
}

/// (answer steps in the history, task grants, standing rules) over the whole database.
async fn applied(client: &tokio_postgres::Client) -> (i64, i64, i64) {
    let count = async |sql: &str| -> i64 { client.query_one(sql, &[]).await.unwrap().get(0) };
    (
        count("SELECT count(*) FROM history WHERE kind = 'answer'").await,
        count("SELECT count(*) FROM task_grants").await,
        count("SELECT count(*) FROM standing_rules").await,
    )
}

/// Waits until a backend waits for a lock the test holds (`pg_locks`: not granted, and
/// `lock` holds, e.g. `relation = 'history'::regclass`); its process id.
async fn waiting_on_a_lock(client: &tokio_postgres::Client, lock: &str) -> i32 {
    let sql = format!("SELECT pid FROM pg_locks WHERE NOT granted AND {lock} LIMIT 1");
    let guard = std::time::Instant::now() + WAIT;
    loop {
        if let Some(row) = client.query_opt(&sql, &[]).await.unwrap() {
            return row.get(0);
        }
        assert!(
            std::time::Instant::now() < guard,
            "no backend waited for a lock with {lock}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until the backend `pid` has ended (its transaction, if any, ended with it).
async fn ended(client: &tokio_postgres::Client, pid: i32) {
    let sql = "SELECT 1 FROM pg_stat_activity WHERE pid = $1";
    let guard = std::time::Instant::now() + WAIT;
    while client.query_opt(sql, &[&pid]).await.unwrap().is_some() {
        assert!(
            std::time::Instant::now() < guard,
            "backend {pid} did not end"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_network_cut_fails_calls_naming_the_store_and_loses_no_answer() {
    let Some(farm) = farm("netcut") else {
        return;
    };
    // The question is asked, and waits, on the server behind the proxy, whose network is then
    // cut; the person answers on another.
    let id = ask(&farm.behind);
    let mut warnings = warnings::watch();
    let mut waiting = wait(&farm.behind, &id);
    farm.proxy.cut();

    // A read that needs a decision fails closed, naming the store, within its deadline.
    let blocked = farm.behind.is_blocked(&AppId::new("com.example.store"));
    farm.names_the_store(blocked, "is_blocked during the cut");
    // The person's answer on the cut server fails, naming the store, and is not applied.
    let on_behind = farm.answer_behind(&id, Answer::Task).await.unwrap();
    // It never reached its COMMIT: it says nothing of an answer that may have been applied.
    let said = format!("{on_behind:?}");
    assert!(!said.contains("may have been applied"), "{said}");
    farm.names_the_store(on_behind, "an answer during the cut");
    // On a server the cut does not reach, the person's answer is applied.
    farm.other.answer(&id, Answer::Deny).unwrap();

    // The waiting call has met the cut (a read of its failed), unless it ended already.
    let failed_read = ["could not read an approval", farm.behind_name.as_str()];
    let early = tokio::select! {
        _ = warnings::logged(&mut warnings, &failed_read) => None,
        got = &mut waiting => Some(got.unwrap()),
    };
    farm.proxy.restore();
    let got = match early {
        Some(got) => got,
        None => waiting.await.unwrap(),
    };
    assert_eq!(
        got,
        Some(Answer::Deny),
        "the answer given during the cut was lost"
    );

    // Applied once: the answer during the cut left nothing, and a second one is refused.
    let again = farm.behind.answer(&id, Answer::Task);
    assert!(matches!(again, Err(Error::AlreadyAnswered(_))), "{again:?}");
    let approval = farm.waiter.approval(&id).unwrap().unwrap();
    assert_eq!(approval.answer, Some(Answer::Deny));
    let client = farm.client().await;
    assert_eq!(
        applied(&client).await,
        (1, 0, 0),
        "(answer steps, grants, rules)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_before_its_answer_commits_applies_nothing() {
    let Some(farm) = farm("killed_before") else {
        return;
    };
    let id = ask(&farm.waiter);
    let waiting = farm.wait(&id);
    // The answer's transaction is held after its UPDATE (and its grant and rule): its history
    // step waits for a lock the test holds.
    let client = farm.client().await;
    client
        .batch_execute("BEGIN; LOCK TABLE history IN SHARE MODE")
        .await
        .unwrap();
    let answering = farm.answer_behind(&id, Answer::Always);
    let backend = waiting_on_a_lock(&client, "relation = 'history'::regclass").await;
    let updated = "SELECT count(*) FROM approvals WHERE state = 'answered'";
    let row = client.query_one(updated, &[]).await.unwrap();
    assert_eq!(row.get::<_, i64>(0), 0, "the UPDATE is not committed yet");

    // The server is killed: its connections close mid-transaction.
    farm.proxy.kill();
    let answered = answering.await.unwrap();
    // Killed before its COMMIT: it applied nothing, and does not say it may have.
    let said = format!("{answered:?}");
    assert!(!said.contains("may have been applied"), "{said}");
    farm.names_the_store(answered, "the killed server's answer");
    client.batch_execute("ROLLBACK").await.unwrap();
    ended(&client, backend).await;

    // Nothing of it was applied: the question still waits, and so does the call.
    let approval = farm.waiter.approval(&id).unwrap().unwrap();
    assert_eq!(approval.state, ApprovalState::Pending, "{approval:?}");
    assert_eq!(approval.answer, None);
    assert_eq!(
        applied(&client).await,
        (0, 0, 0),
        "(answer steps, grants, rules)"
    );
    assert!(
        !waiting.is_finished(),
        "the call was released by an answer never made"
    );

    // The person answers on another server: applied once, and the call is released.
    farm.other.answer(&id, Answer::Always).unwrap();
    assert_eq!(waiting.await.unwrap(), Some(Answer::Always));
    assert_eq!(
        applied(&client).await,
        (1, 1, 1),
        "(answer steps, grants, rules)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_while_its_answer_commits_applies_it_once_and_releases_the_wait() {
    let Some(farm) = farm("killed_at_commit") else {
        return;
    };
    let id = ask(&farm.waiter);
    let waiting = farm.wait(&id);
    // The answer's COMMIT is held: a deferred trigger, run at commit, takes an advisory lock
    // the test holds.
    let client = farm.client().await;
    client
        .batch_execute(
            "CREATE FUNCTION hold_commit() RETURNS trigger LANGUAGE plpgsql AS
               $$ BEGIN PERFORM pg_advisory_xact_lock(41); RETURN NULL; END $$;
             CREATE CONSTRAINT TRIGGER hold_commit AFTER UPDATE ON approvals
               DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION hold_commit();",
        )
        .await
        .unwrap();
    client.batch_execute("BEGIN").await.unwrap();
    client
        .execute("SELECT pg_advisory_xact_lock(41)", &[])
        .await
        .unwrap();
    let mut answering = farm.answer_behind(&id, Answer::Always);
    tokio::select! {
        _ = waiting_on_a_lock(&client, "locktype = 'advisory'") => {}
        ended = &mut answering => panic!("the answer did not wait at its COMMIT: {ended:?}"),
    }

    // The server is killed while its COMMIT runs: it never learns that its answer counts.
    farm.proxy.kill();
    let answered = answering.await.unwrap();
    // It says the outcome is unknown to it and that answering again is safe.
    let said = format!("{answered:?}");
    assert!(
        said.contains("may have been applied") && said.contains("answering again is safe"),
        "{said}"
    );
    farm.names_the_store(answered, "the killed server's answer");
    client.batch_execute("ROLLBACK").await.unwrap();

    // The commit went through: the call on the other server is released by it...
    assert_eq!(waiting.await.unwrap(), Some(Answer::Always));
    // ...and it counts once: the person's second answer, on another server, is refused.
    let again = farm.other.answer(&id, Answer::Task);
    assert!(matches!(again, Err(Error::AlreadyAnswered(_))), "{again:?}");
    assert_eq!(
        applied(&client).await,
        (1, 1, 1),
        "(answer steps, grants, rules)"
    );
}
