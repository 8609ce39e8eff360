//! The schema on PostgreSQL: numbered migrations recorded in `phonelogs_schema`, applied by
//! `phonelogs store migrate` (or on start when asked) under an advisory lock, so two servers
//! starting at once apply each migration once. A server refuses a schema newer than it knows,
//! and one older than it needs (it says which command brings it up to date). No table has a
//! column for log text.

use tokio_postgres::error::SqlState;
use tokio_postgres::{Client, GenericClient};

use crate::Failure;

/// The migrations, one per version; version N is `MIGRATIONS[N - 1]`. Never edit a migration
/// that shipped: add a new one.
const MIGRATIONS: &[&str] = &[
    // Version 1: the same tables as the SQLite store's version 3, with `seq` keeping the order
    // SQLite's rowid keeps.
    "CREATE TABLE tasks (
        id TEXT PRIMARY KEY,
        agent TEXT NOT NULL,
        started_at TEXT NOT NULL,
        ended_at TEXT
    );
    CREATE TABLE approvals (
        seq BIGSERIAL UNIQUE,
        id TEXT PRIMARY KEY,
        task_id TEXT NOT NULL,
        agent TEXT NOT NULL,
        device TEXT NOT NULL,
        app TEXT NOT NULL,
        app_label TEXT NOT NULL,
        question TEXT NOT NULL,
        rule TEXT NOT NULL,
        created_at TEXT NOT NULL,
        state TEXT NOT NULL,
        answer TEXT,
        answered_at TEXT,
        action TEXT NOT NULL,
        detail TEXT NOT NULL DEFAULT '',
        answered_via TEXT
    );
    CREATE INDEX approvals_by_call ON approvals (task_id, agent, device, app, action, state);
    CREATE INDEX approvals_by_agent ON approvals (agent, state);
    CREATE TABLE task_grants (
        task_id TEXT NOT NULL,
        device TEXT NOT NULL,
        app TEXT NOT NULL,
        action TEXT NOT NULL,
        PRIMARY KEY (task_id, device, app, action)
    );
    CREATE TABLE standing_rules (
        seq BIGSERIAL UNIQUE,
        id TEXT PRIMARY KEY,
        agent TEXT NOT NULL,
        device TEXT NOT NULL,
        app TEXT NOT NULL,
        action TEXT NOT NULL,
        created_at TEXT NOT NULL,
        UNIQUE (agent, device, app, action)
    );
    CREATE TABLE blocked_apps (
        app TEXT PRIMARY KEY,
        created_at TEXT NOT NULL
    );
    CREATE TABLE unmasked_apps (
        app TEXT PRIMARY KEY,
        created_at TEXT NOT NULL
    );
    CREATE TABLE history (
        id BIGSERIAL PRIMARY KEY,
        at TEXT NOT NULL,
        task_id TEXT NOT NULL,
        agent TEXT NOT NULL,
        device TEXT,
        status TEXT NOT NULL,
        step TEXT NOT NULL,
        app TEXT NOT NULL,
        kind TEXT NOT NULL,
        since TEXT,
        filter TEXT,
        level TEXT,
        lim BIGINT,
        exclude TEXT,
        tags TEXT
    );",
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// The advisory lock key migrations hold ("phonelogs" in ASCII, cut to 63 bits).
const MIGRATION_LOCK: i64 = 0x7068_6f6e_656c_6f67;

/// The command that brings a store's schema up to date, for messages.
const MIGRATE: &str =
    "run `phonelogs store migrate --store URL` (or start phonelogs-mcp with --migrate)";

/// The version the database has, `0` when it has no phonelogs schema.
pub(crate) async fn found(client: &impl GenericClient) -> Result<i64, Failure> {
    match client
        .query_one(
            "SELECT COALESCE(MAX(version), 0)::BIGINT FROM phonelogs_schema",
            &[],
        )
        .await
    {
        Ok(row) => Ok(row.try_get(0)?),
        Err(error) if error.code() == Some(&SqlState::UNDEFINED_TABLE) => Ok(0),
        Err(error) => Err(error.into()),
    }
}

/// Applies the migrations the database lacks; the version it has now.
pub(crate) async fn migrate(client: &mut Client) -> Result<i64, Failure> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS phonelogs_schema (version BIGINT NOT NULL)")
        .await?;
    let found = found(&tx).await?;
    if found > SCHEMA_VERSION {
        return Err(newer(found));
    }
    for (index, migration) in MIGRATIONS.iter().enumerate().skip(found.max(0) as usize) {
        tx.batch_execute(migration).await?;
        let version = index as i64 + 1;
        tx.execute(
            "INSERT INTO phonelogs_schema (version) VALUES ($1)",
            &[&version],
        )
        .await?;
        tracing::info!(version, "migrated the PostgreSQL store");
    }
    tx.commit().await?;
    Ok(SCHEMA_VERSION)
}

/// Checks that the database has the schema this build writes.
pub(crate) async fn check(client: &Client) -> Result<(), Failure> {
    let found = found(client).await?;
    if found > SCHEMA_VERSION {
        return Err(newer(found));
    }
    if found < SCHEMA_VERSION {
        return Err(Failure::Refused(format!(
            "it has schema version {found}, older than this phonelogs writes ({SCHEMA_VERSION}): {MIGRATE}"
        )));
    }
    Ok(())
}

fn newer(found: i64) -> Failure {
    Failure::Refused(format!(
        "it has schema version {found}, newer than this phonelogs knows ({SCHEMA_VERSION}); update phonelogs"
    ))
}
