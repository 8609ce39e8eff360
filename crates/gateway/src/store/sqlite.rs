//! The embedded backend of the store contract ([`StoreBackend`]): standing rules, approvals and
//! their answers, blocked apps and history, in one SQLite database shared by the MCP server and
//! the `phonelogs` command line on one computer.
//!
//! The database runs in WAL mode, so readers never block the writer, and a commit that returned
//! survives a kill -9. What the person decided and what an agent was granted (rules, approvals,
//! answers, an "Allow once" used, blocks, masking) is committed with `synchronous=FULL`, so it
//! survives a power failure too. A history step is committed with `synchronous=NORMAL`: no
//! fsync on the call's path (it was about 1 ms of a 12 ms warm `phone_logs`); the next
//! durable commit or the checkpoint thread's (usually within a second) syncs it, so a power
//! failure can lose the history of the last moments, never a decision. Every write is one `BEGIN IMMEDIATE` transaction
//! and every connection waits up to [`BUSY_TIMEOUT`] for another process's write, so two
//! processes can work on it at once. Schema changes are numbered migrations recorded in
//! `PRAGMA user_version`. A file that is not a readable database is an error
//! ([`Error::Corrupt`]) and is never replaced. No table has a column for log text.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use phonelogs_driver::{AppId, DeviceId};
use phonelogs_policy::{Action, StandingRule};
use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension, TransactionBehavior, params};
use time::OffsetDateTime;

use crate::types::{
    Answer, AnsweredVia, Approval, ApprovalState, HistoryFilter, HistoryStep, Status, StepArgs,
    agent_text,
};
use crate::{Error, new_id};

use super::{
    Asked, NewApproval, NewStep, QuestionCap, STATE_DIR_ENV, StoreBackend, UNANSWERED_REST,
    blocking, cap_reached, now_text, person_only, rfc3339,
};

/// The database's file name inside the state directory.
pub const DB_FILE: &str = "phonelogs.db";
/// How long a call waits for another process's write before failing.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// The schema, one migration per version; version N is `MIGRATIONS[N - 1]`. Never edit a
/// migration that shipped: add a new one.
const MIGRATIONS: &[&str] = &[
    // Version 1.
    "CREATE TABLE tasks (
        id TEXT PRIMARY KEY,
        agent TEXT NOT NULL,
        started_at TEXT NOT NULL,
        ended_at TEXT
    );
    CREATE TABLE approvals (
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
        answered_at TEXT
    );
    CREATE INDEX approvals_by_call ON approvals (task_id, agent, device, app, state);
    CREATE TABLE task_grants (
        task_id TEXT NOT NULL,
        device TEXT NOT NULL,
        app TEXT NOT NULL,
        PRIMARY KEY (task_id, device, app)
    );
    CREATE TABLE standing_rules (
        id TEXT PRIMARY KEY,
        agent TEXT NOT NULL,
        device TEXT NOT NULL,
        app TEXT NOT NULL,
        created_at TEXT NOT NULL,
        UNIQUE (agent, device, app)
    );
    CREATE TABLE blocked_apps (
        app TEXT PRIMARY KEY,
        created_at TEXT NOT NULL
    );
    CREATE TABLE history (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
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
        lim INTEGER
    );",
    // Version 2: an approval, a task grant and a standing rule cover one action (a logs answer
    // never covers a tombstone), an approval names what exactly it asked about (the pid, the
    // path), and records where the person answered. What version 1 granted was for logs.
    "ALTER TABLE approvals ADD COLUMN action TEXT NOT NULL DEFAULT 'logs';
    ALTER TABLE approvals ADD COLUMN detail TEXT NOT NULL DEFAULT '';
    ALTER TABLE approvals ADD COLUMN answered_via TEXT;
    DROP INDEX approvals_by_call;
    CREATE INDEX approvals_by_call ON approvals (task_id, agent, device, app, action, state);
    CREATE TABLE task_grants_v2 (
        task_id TEXT NOT NULL,
        device TEXT NOT NULL,
        app TEXT NOT NULL,
        action TEXT NOT NULL,
        PRIMARY KEY (task_id, device, app, action)
    );
    INSERT INTO task_grants_v2 (task_id, device, app, action)
        SELECT task_id, device, app, 'logs' FROM task_grants;
    DROP TABLE task_grants;
    ALTER TABLE task_grants_v2 RENAME TO task_grants;
    CREATE TABLE standing_rules_v2 (
        id TEXT PRIMARY KEY,
        agent TEXT NOT NULL,
        device TEXT NOT NULL,
        app TEXT NOT NULL,
        action TEXT NOT NULL,
        created_at TEXT NOT NULL,
        UNIQUE (agent, device, app, action)
    );
    INSERT INTO standing_rules_v2 (id, agent, device, app, action, created_at)
        SELECT id, agent, device, app, 'logs', created_at FROM standing_rules;
    DROP TABLE standing_rules;
    ALTER TABLE standing_rules_v2 RENAME TO standing_rules;",
    // Version 3: the apps whose secrets the person chose to see unmasked, and the agent's
    // `exclude` and `tag` beside `filter` in the history (bounded, as `filter` is).
    "CREATE TABLE unmasked_apps (
        app TEXT PRIMARY KEY,
        created_at TEXT NOT NULL
    );
    ALTER TABLE history ADD COLUMN exclude TEXT;
    ALTER TABLE history ADD COLUMN tags TEXT;",
];

/// Set on every connection: durable commits, checked references, a bounded page cache (512 KiB;
/// SQLite's default of 2000 KiB filled page by page as the history grew, so the server's memory
/// grew with its history rows; the tables read per call are small and indexed, so a quarter of
/// that keeps every lookup cached), no memory-mapped reads, temporary tables on disk, and a WAL
/// file cut back to 4 MB when it starts over.
const CONNECTION_PRAGMAS: &str = "PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON; \
     PRAGMA cache_size=-512; PRAGMA mmap_size=0; PRAGMA temp_store=FILE; \
     PRAGMA journal_size_limit=4194304;";

/// The SQLite store. Cloning shares the same connections.
///
/// On disk it holds two: one that writes and one that reads, so a call's reads (is the app
/// blocked, does a grant cover it) never wait behind another call's commit and its fsync (WAL
/// readers do not block on the writer). The WAL is copied into the database by a thread of
/// its own ([`Checkpointer`]) as commits go by, so the checkpoint SQLite runs inside whichever
/// commit crosses its threshold (1,000 pages) finds little left to copy; with one connection
/// that checkpoint copied every page and fsynced the database while every call's reads waited.
/// In memory both are one connection.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    connection: Arc<Mutex<Connection>>,
    reader: Arc<Mutex<Connection>>,
    checkpointer: Option<Arc<Checkpointer>>,
    path: Option<PathBuf>,
    /// Whether the database is in WAL mode, where `synchronous=NORMAL` keeps it consistent.
    wal: bool,
}

/// How durably a write is committed (see the module's docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Durability {
    /// `synchronous=FULL`: an fsync before the commit returns.
    Full,
    /// `synchronous=NORMAL` in WAL mode (FULL otherwise): synced by the next durable commit or
    /// checkpoint.
    History,
}

/// How many commits go by between two checkpoints; the thread also checkpoints once a second
/// when any went by. Each history step is a few pages, so the WAL stays within a few MB.
const CHECKPOINT_EVERY: usize = 128;

/// The thread that checkpoints the WAL of one open store ([`checkpoint`]) on its own
/// connection. It ends when the last clone of the store is dropped.
#[derive(Debug)]
struct Checkpointer {
    commits: Arc<std::sync::atomic::AtomicUsize>,
    wake: std::sync::mpsc::SyncSender<()>,
}

impl Checkpointer {
    /// The thread started, or `None` when no thread could be (the writer's commits still
    /// checkpoint, as SQLite does by default).
    fn start(path: &Path) -> Result<Option<Checkpointer>, rusqlite::Error> {
        let connection = open_connection(path)?;
        let (wake, woken) = std::sync::mpsc::sync_channel::<()>(1);
        let commits = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = commits.clone();
        let spawned = std::thread::Builder::new()
            .name("phonelogs-checkpoint".into())
            .spawn(move || {
                use std::sync::mpsc::RecvTimeoutError;
                let mut done = 0;
                loop {
                    let last = match woken.recv_timeout(Duration::from_secs(1)) {
                        Ok(()) | Err(RecvTimeoutError::Timeout) => false,
                        Err(RecvTimeoutError::Disconnected) => true,
                    };
                    let now = counted.load(std::sync::atomic::Ordering::Relaxed);
                    if now != done {
                        match checkpoint(&connection) {
                            Ok(()) => done = now,
                            Err(error) => {
                                tracing::debug!(%error, "a WAL checkpoint failed; the next retries");
                            }
                        }
                    }
                    if last {
                        return;
                    }
                }
            });
        if let Err(error) = spawned {
            tracing::warn!(%error, "no checkpoint thread; commits checkpoint the WAL");
            return Ok(None);
        }
        Ok(Some(Checkpointer { commits, wake }))
    }

    /// Counts a commit, and wakes the thread every [`CHECKPOINT_EVERY`] of them.
    fn committed(&self) {
        let n = self
            .commits
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if (n + 1).is_multiple_of(CHECKPOINT_EVERY) {
            let _ = self.wake.try_send(());
        }
    }
}

/// One passive checkpoint: it copies what it can beside the writer and the readers, waiting
/// for neither. The WAL file starts over only when a writer finds every frame copied, which
/// it may never find while writes go on back to back; so the writer keeps SQLite's own
/// checkpoint (every 1,000 frames) as the bound, and finds nearly everything copied already.
fn checkpoint(connection: &Connection) -> Result<(), rusqlite::Error> {
    connection.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
}

/// Opens one more connection to a database `SqliteStore::open` has opened (and migrated), with the
/// connection pragmas.
fn open_connection(path: &Path) -> Result<Connection, rusqlite::Error> {
    let connection = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    connection.busy_timeout(BUSY_TIMEOUT)?;
    connection.execute_batch(CONNECTION_PRAGMAS)?;
    Ok(connection)
}

/// Makes the state directory when it is missing, readable by its owner only (0700, whatever
/// the umask), and refuses one that others can write to or another user owns, as ssh refuses
/// its own, leaving it as it is: whoever can write there can answer the agents' questions for
/// the person (see "Who can answer a question" in docs/permissions.md). One of the person's
/// own that others may only read (made under the umask by an older phonelogs) is made 0700.
fn private_dir(dir: &Path) -> Result<(), Error> {
    let unusable = |source| Error::StateDir {
        path: dir.to_owned(),
        source,
    };
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt as _;
        builder.mode(0o700);
    }
    builder.create(dir).map_err(unusable)?;
    let meta = std::fs::metadata(dir).map_err(unusable)?;
    if !meta.is_dir() {
        return Err(unusable(std::io::Error::new(
            std::io::ErrorKind::NotADirectory,
            "not a directory",
        )));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let shown = dir.display();
        let mode = meta.mode() & 0o7777;
        let me = rustix::process::geteuid().as_raw();
        let why = if meta.uid() != me && meta.uid() != 0 {
            Some(format!(
                "belongs to another user (uid {}): use a directory of your own (--state-dir, {STATE_DIR_ENV})",
                meta.uid()
            ))
        } else if mode & 0o022 != 0 {
            Some(format!(
                "can be written by other users (mode {mode:o}): run `chmod 700 {shown}`"
            ))
        } else {
            None
        };
        if let Some(why) = why.or_else(|| unsafe_parent(dir, me)) {
            return Err(Error::StateDirOpen {
                path: dir.to_owned(),
                why,
            });
        }
        // Others may list it (an older phonelogs made it under the umask): it is made the
        // owner's alone, as its files are.
        if mode & 0o077 != 0 && meta.uid() == me {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
                .map_err(unusable)?;
            tracing::debug!(dir = %shown, mode = format!("{mode:o}"), "the state directory is now 0700");
        }
    }
    Ok(())
}

/// Why a directory above the state directory lets another user put a directory of their own
/// in its place, or `None`: ssh's rule for the paths it trusts (StrictModes, `secure_path`),
/// each directory from the state directory's parent up to `/` (symbolic links resolved) is
/// owned by root or this user and writable by no one else, since whoever can write to a
/// directory can rename what is in it and put their own in its place between this check and
/// the database's open (both by path). One difference, written down in docs/permissions.md: a
/// directory others may write to with the sticky bit (as `/tmp` is) is accepted, since the
/// sticky bit keeps others from renaming or removing what they do not own, and the entry in it
/// on the way down (the state directory, or a directory above it) is checked to be this
/// user's or root's; ssh refuses it.
#[cfg(unix)]
fn unsafe_parent(dir: &Path, me: u32) -> Option<String> {
    use std::os::unix::fs::MetadataExt as _;
    let real = match std::fs::canonicalize(dir) {
        Ok(real) => real,
        Err(error) => return Some(format!("its path cannot be resolved: {error}")),
    };
    for parent in real.ancestors().skip(1) {
        let meta = match std::fs::metadata(parent) {
            Ok(meta) => meta,
            Err(error) => return Some(format!("{} cannot be read: {error}", parent.display())),
        };
        let shown = parent.display();
        let mode = meta.mode() & 0o7777;
        if meta.uid() != me && meta.uid() != 0 {
            return Some(format!(
                "it is inside {shown}, which belongs to another user (uid {}), who could put a directory of their own in its place: use a directory of your own (--state-dir, {STATE_DIR_ENV})",
                meta.uid()
            ));
        }
        // Under the sticky bit, others cannot rename what they do not own, and the entry below
        // (the state directory or a directory above it) is checked to be the user's or root's.
        if mode & 0o022 != 0 && mode & 0o1000 == 0 {
            return Some(format!(
                "it is inside {shown}, which other users can write to (mode {mode:o}) and so could put a directory of their own in its place: run `chmod go-w {shown}` or use another directory (--state-dir, {STATE_DIR_ENV})"
            ));
        }
    }
    None
}

/// The database file, made when missing with mode 0600 before SQLite opens it (SQLite gives its
/// WAL and shared-memory files the database file's mode); the three files, when another
/// phonelogs left them readable by others, made the owner's alone again.
fn private_files(db: &Path) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    match options.open(db) {
        Ok(_) => {}
        // A directory or anything else in its place: SQLite says what it is.
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(error) => return Err(error),
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mut names = db.as_os_str().to_owned();
        let mut wal = names.clone();
        wal.push("-wal");
        names.push("-shm");
        for path in [db.to_owned(), PathBuf::from(wal), PathBuf::from(names)] {
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            let mode = meta.permissions().mode();
            if meta.is_file() && mode & 0o077 != 0 {
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode & 0o700))?;
            }
        }
    }
    Ok(())
}
/// Whether the agent has as many questions counting as a cap allows (see
/// [`StoreBackend::pending_or_create`]), the narrower cap first, and what the call is told then.
fn capped(tx: &rusqlite::Transaction<'_>, ask: &NewApproval<'_>) -> Result<Option<Asked>, Error> {
    for cap in [QuestionCap::Action, QuestionCap::Agent] {
        if let Some(asked) = capped_by(tx, ask, cap)? {
            return Ok(Some(asked));
        }
    }
    Ok(None)
}

/// [`capped`] for one cap: its questions waiting in any of the agent's tasks, on any phone,
/// and the distinct ones left unanswered when their task ended less than [`UNANSWERED_REST`]
/// ago. The phone is in neither count: a phone's names are many (`source/serial`, a bare
/// serial), the person's attention one.
fn capped_by(
    tx: &rusqlite::Transaction<'_>,
    ask: &NewApproval<'_>,
    cap: QuestionCap,
) -> Result<Option<Asked>, Error> {
    // NULL for the agent-wide cap: `?2 IS NULL OR …` then matches every action and app.
    let (action, app) = match cap {
        QuestionCap::Action => (Some(ask.action.as_str()), Some(ask.app.as_str())),
        QuestionCap::Agent => (None, None),
    };
    let waiting = {
        let mut statement = tx.prepare_cached(&format!(
            "SELECT {APPROVAL_COLUMNS} FROM approvals
             WHERE agent = ?1 AND (?2 IS NULL OR (action = ?2 AND app = ?3))
               AND state = 'pending'
             ORDER BY rowid"
        ))?;
        let rows = statement.query_map(params![ask.agent, action, app], approval_from_row)?;
        rows.collect::<Result<Vec<Approval>, _>>()?
    };
    // The task's end time is written by the computer's clock (`end_task`); julianday reads
    // RFC 3339 whatever its fractional digits. Distinct questions only, and not this call's
    // own: the same question asked again (a client started again) is not new to the person,
    // so it is asked again rather than held back by its own earlier copies.
    let rest = time::Duration::try_from(UNANSWERED_REST).unwrap_or(time::Duration::ZERO);
    let cutoff = rfc3339(OffsetDateTime::now_utc() - rest);
    let (resting, first_end): (i64, Option<String>) = tx
        .prepare_cached(
            "SELECT COUNT(DISTINCT a.action || char(10) || a.app || char(10) || a.detail),
                    MIN(t.ended_at)
             FROM approvals a JOIN tasks t ON t.id = a.task_id
             WHERE a.agent = ?1 AND (?2 IS NULL OR (a.action = ?2 AND a.app = ?3))
               AND NOT (a.action = ?4 AND a.app = ?5 AND a.detail = ?6)
               AND a.state = 'expired' AND a.answer IS NULL
               AND julianday(t.ended_at) >= julianday(?7)",
        )?
        .query_row(
            params![
                ask.agent,
                action,
                app,
                ask.action.as_str(),
                ask.app.as_str(),
                ask.detail,
                cutoff
            ],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )?;
    Ok(cap_reached(
        waiting,
        usize::try_from(resting).unwrap_or(usize::MAX),
        first_end.as_deref(),
        ask,
        cap,
    ))
}

fn is_corruption(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt)
    )
}

impl SqliteStore {
    /// Opens (creating when missing) the database in `dir`, migrating it to the newest schema.
    pub fn open(dir: &Path) -> Result<SqliteStore, Error> {
        private_dir(dir)?;
        let path = dir.join(DB_FILE);
        private_files(&path).map_err(|source| Error::StateDir {
            path: dir.to_owned(),
            source,
        })?;
        let corrupt = |source: rusqlite::Error| {
            if is_corruption(&source) {
                Error::Corrupt {
                    path: path.clone(),
                    source,
                }
            } else {
                Error::Unreadable {
                    path: path.clone(),
                    source,
                }
            }
        };
        let connection = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(corrupt)?;
        connection.busy_timeout(BUSY_TIMEOUT).map_err(corrupt)?;
        // Reading the schema first finds a file that is not a database before anything writes.
        let tables: i64 = connection
            .query_row("SELECT count(*) FROM sqlite_master", [], |row| row.get(0))
            .map_err(corrupt)?;
        let version: i64 = connection
            .query_row("PRAGMA user_version", [], |row| row.get(0))
            .map_err(corrupt)?;
        if version == 0 && tables > 0 {
            return Err(Error::NotPhonelogs { path });
        }
        let mode: String = connection
            .query_row("PRAGMA journal_mode=WAL", [], |row| row.get(0))
            .map_err(corrupt)?;
        let wal = mode.eq_ignore_ascii_case("wal");
        if !wal {
            tracing::warn!(%mode, "the state database could not switch to WAL mode");
        }
        connection
            .execute_batch(CONNECTION_PRAGMAS)
            .map_err(corrupt)?;
        let connection = Arc::new(Mutex::new(connection));
        let mut store = SqliteStore {
            reader: connection.clone(),
            connection,
            checkpointer: None,
            path: Some(path.clone()),
            wal,
        };
        store.migrate().map_err(|error| match error {
            Error::Database(source) if is_corruption(&source) => Error::Corrupt {
                path: path.clone(),
                source,
            },
            other => other,
        })?;
        // The schema is there: the reader and the checkpoint thread may open theirs.
        store.reader = Arc::new(Mutex::new(open_connection(&path).map_err(corrupt)?));
        store.checkpointer = Checkpointer::start(&path).map_err(corrupt)?.map(Arc::new);
        store.path = Some(dir.join(DB_FILE));
        Ok(store)
    }

    /// A store that lives in memory and dies with the process (tests, demos, embedding agents
    /// without a state directory).
    pub fn in_memory() -> Result<SqliteStore, Error> {
        let connection = Arc::new(Mutex::new(Connection::open_in_memory()?));
        let store = SqliteStore {
            reader: connection.clone(),
            connection,
            checkpointer: None,
            path: None,
            wal: false,
        };
        store.migrate()?;
        Ok(store)
    }

    /// The schema version this build writes.
    pub fn schema_version() -> i64 {
        MIGRATIONS.len() as i64
    }

    fn lock_now(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock leaves the connection usable: SQLite rolls back an
        // unfinished transaction when the next one begins.
        self.connection
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The reading connection, for a read (on disk it waits for no commit; in memory it is
    /// the writer, and waiting for it may mean waiting out another call's commit): the wait is
    /// [`blocking`].
    fn lock(&self) -> MutexGuard<'_, Connection> {
        blocking(|| {
            self.reader
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
        })
    }

    /// One immediate transaction, committed durably (`synchronous=FULL`: an fsync), all of it
    /// [`blocking`].
    fn write<T>(
        &self,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.write_as(Durability::Full, f)
    }

    /// One immediate transaction committed as `durability` says: every write sets its own
    /// level, so a history step's never carries over to a decision's.
    fn write_as<T>(
        &self,
        durability: Durability,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<T, Error>,
    ) -> Result<T, Error> {
        blocking(|| {
            let mut connection = self.lock_now();
            connection.execute_batch(match durability {
                Durability::History if self.wal => "PRAGMA synchronous=NORMAL",
                _ => "PRAGMA synchronous=FULL",
            })?;
            let transaction =
                connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let value = f(&transaction)?;
            transaction.commit()?;
            if let Some(checkpointer) = &self.checkpointer {
                checkpointer.committed();
            }
            Ok(value)
        })
    }

    fn migrate(&self) -> Result<(), Error> {
        let known = SqliteStore::schema_version();
        let path = self.path.clone().unwrap_or_default();
        self.write(|tx| {
            let found: i64 = tx.query_row("PRAGMA user_version", [], |row| row.get(0))?;
            if found > known {
                return Err(Error::NewerSchema { path, found, known });
            }
            for (index, migration) in MIGRATIONS.iter().enumerate().skip(found.max(0) as usize) {
                tx.execute_batch(migration)?;
                tracing::info!(version = index + 1, "migrated the state database");
            }
            if found < known {
                tx.execute_batch(&format!("PRAGMA user_version = {known}"))?;
            }
            Ok(())
        })
    }

    fn person_setting(&self, app: &AppId, via: AnsweredVia, unmask: bool) -> Result<(), Error> {
        person_only(via)?;
        self.write(|tx| {
            let now = now_text();
            let step = if unmask {
                tx.execute(
                    "INSERT OR IGNORE INTO unmasked_apps (app, created_at) VALUES (?1, ?2)",
                    params![app.as_str(), now],
                )?;
                crate::catalog::step_unmasked(app.as_str(), via)
            } else {
                if tx.execute("DELETE FROM unmasked_apps WHERE app = ?1", [app.as_str()])? == 0 {
                    return Err(Error::NotUnmasked(app.to_string()));
                }
                crate::catalog::step_masked(app.as_str(), via)
            };
            tx.execute(
                "INSERT INTO history (at, task_id, agent, status, step, app, kind)
                 VALUES (?1, '', ?2, 'ok', ?3, ?4, ?5)",
                params![
                    now,
                    crate::catalog::PERSON_SETTINGS,
                    step,
                    app.as_str(),
                    if unmask { "unmask" } else { "mask" }
                ],
            )?;
            Ok(())
        })
    }
}

#[async_trait::async_trait]
impl StoreBackend for SqliteStore {
    fn describe(&self) -> String {
        match &self.path {
            Some(path) => format!("SQLite {}", path.display()),
            None => "SQLite in memory".to_owned(),
        }
    }

    /// The database file, when the store is on disk.
    fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    // --- For the person: approvals, rules, blocks, history. ---

    /// The approvals waiting for the person, oldest first.
    fn pending_approvals(&self) -> Result<Vec<Approval>, Error> {
        let connection = self.lock();
        let mut statement = connection.prepare(&format!(
            "SELECT {APPROVAL_COLUMNS} FROM approvals WHERE state = 'pending' ORDER BY created_at, rowid"
        ))?;
        let rows = statement.query_map([], approval_from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One approval, in any state.
    fn approval(&self, approval_id: &str) -> Result<Option<Approval>, Error> {
        let connection = self.lock();
        Ok(connection
            .query_row(
                &format!("SELECT {APPROVAL_COLUMNS} FROM approvals WHERE id = ?1"),
                [approval_id],
                approval_from_row,
            )
            .optional()?)
    }

    /// Answers an approval. "Allow for this task" covers the app's action for the rest of the
    /// task and "Always allow" adds a standing rule for it, at once, so any later call sees them.
    /// The history records the answer and where it was given (never anything read). Answering
    /// twice, an unknown id or an expired approval is an error.
    fn answer_via(&self, approval_id: &str, answer: Answer, via: AnsweredVia) -> Result<(), Error> {
        self.write(|tx| {
            let found = tx
                .query_row(
                    &format!("SELECT {APPROVAL_COLUMNS} FROM approvals WHERE id = ?1"),
                    [approval_id],
                    approval_from_row,
                )
                .optional()?;
            let Some(approval) = found else {
                return Err(Error::UnknownApproval(approval_id.to_owned()));
            };
            match approval.state {
                ApprovalState::Pending => {}
                ApprovalState::Expired => return Err(Error::ApprovalExpired(approval_id.to_owned())),
                ApprovalState::Answered | ApprovalState::Used => {
                    return Err(Error::AlreadyAnswered(approval_id.to_owned()));
                }
            }
            let now = now_text();
            // An approval of an action this build does not know grants nothing.
            let action = approval.action.map_or("", Action::as_str);
            tx.execute(
                "UPDATE approvals SET state = 'answered', answer = ?2, answered_at = ?3, answered_via = ?4 WHERE id = ?1",
                params![approval_id, answer.as_str(), now, via.as_str()],
            )?;
            if matches!(answer, Answer::Task | Answer::Always) {
                tx.execute(
                    "INSERT OR IGNORE INTO task_grants (task_id, device, app, action) VALUES (?1, ?2, ?3, ?4)",
                    params![approval.task_id, approval.device, approval.app, action],
                )?;
            }
            if answer == Answer::Always {
                tx.execute(
                    "INSERT OR IGNORE INTO standing_rules (id, agent, device, app, action, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![new_id("rule"), approval.agent, approval.device, approval.app, action, now],
                )?;
            }
            // The history says who answered what, and where; the question is the gateway's own
            // words (an app label and a pid or path), never anything read from the phone.
            let status = if answer == Answer::Deny {
                Status::Denied
            } else {
                Status::Ok
            };
            tx.execute(
                "INSERT INTO history (at, task_id, agent, device, status, step, app, kind)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    now,
                    approval.task_id,
                    approval.agent,
                    approval.device,
                    status.as_str(),
                    crate::catalog::step_answered(answer, via, &approval.question),
                    approval.app,
                    "answer"
                ],
            )?;
            Ok(())
        })
    }

    /// The history, oldest first (the newest `limit` when a limit is set).
    fn history(&self, filter: HistoryFilter) -> Result<Vec<HistoryStep>, Error> {
        let connection = self.lock();
        let mut statement = connection.prepare(
            "SELECT id, at, task_id, agent, device, status, step, app, kind, since, filter, level, lim,
                    exclude, tags
             FROM history
             WHERE (?1 IS NULL OR task_id = ?1) AND (?2 IS NULL OR agent = ?2) AND (?3 IS NULL OR app = ?3)
               AND (?5 IS NULL OR device = ?5) AND (?6 IS NULL OR status = ?6)
             ORDER BY id DESC LIMIT ?4",
        )?;
        let limit = filter
            .limit
            .map_or(-1, |l| i64::try_from(l).unwrap_or(i64::MAX));
        let status = filter.status.map(Status::as_str);
        let rows = statement.query_map(
            params![
                filter.task_id,
                filter.agent,
                filter.app,
                limit,
                filter.device,
                status
            ],
            |row| {
                let status: String = row.get(5)?;
                Ok(HistoryStep {
                    id: row.get(0)?,
                    at: row.get(1)?,
                    task_id: row.get(2)?,
                    agent: row.get(3)?,
                    device: row.get(4)?,
                    status: Status::parse(&status).unwrap_or(Status::Error),
                    step: row.get(6)?,
                    args: StepArgs {
                        app: row.get(7)?,
                        kind: row.get(8)?,
                        since: row.get(9)?,
                        filter: row.get(10)?,
                        exclude: row.get(13)?,
                        tags: row.get(14)?,
                        level: row.get(11)?,
                        limit: row.get(12)?,
                    },
                })
            },
        )?;
        let mut steps: Vec<HistoryStep> = rows.collect::<Result<_, _>>()?;
        steps.reverse();
        Ok(steps)
    }

    /// The "Always allow" entries.
    fn rules(&self) -> Result<Vec<StandingRule>, Error> {
        let connection = self.lock();
        let mut statement = connection.prepare(
            "SELECT id, agent, device, app, created_at, action FROM standing_rules ORDER BY created_at, rowid",
        )?;
        let rows = statement.query_map([], |row| {
            let action: String = row.get(5)?;
            Ok((
                StandingRule {
                    id: row.get(0)?,
                    agent: row.get(1)?,
                    device: DeviceId::new(row.get::<_, String>(2)?),
                    app: AppId::new(row.get::<_, String>(3)?),
                    action: Action::Logs,
                    created_at: row.get(4)?,
                },
                action,
            ))
        })?;
        let mut rules = Vec::new();
        for row in rows {
            let (mut rule, action) = row?;
            // A rule whose action this build does not know covers nothing: it is left out.
            let Some(action) = Action::parse(&action) else {
                continue;
            };
            rule.action = action;
            rules.push(rule);
        }
        Ok(rules)
    }

    /// Revokes an "Always allow" entry: the next task asks again.
    fn revoke_rule(&self, id: &str) -> Result<(), Error> {
        self.write(
            |tx| match tx.execute("DELETE FROM standing_rules WHERE id = ?1", [id])? {
                0 => Err(Error::UnknownRule(id.to_owned())),
                _ => Ok(()),
            },
        )
    }

    /// Blocks an app's logs for every agent ("Blocked apps"), even where the person allowed it.
    fn block_app(&self, app: &AppId) -> Result<(), Error> {
        self.write(|tx| {
            tx.execute(
                "INSERT OR IGNORE INTO blocked_apps (app, created_at) VALUES (?1, ?2)",
                params![app.as_str(), now_text()],
            )?;
            Ok(())
        })
    }

    /// Lifts a block.
    fn unblock_app(&self, app: &AppId) -> Result<(), Error> {
        self.write(|tx| {
            match tx.execute("DELETE FROM blocked_apps WHERE app = ?1", [app.as_str()])? {
                0 => Err(Error::NotBlocked(app.to_string())),
                _ => Ok(()),
            }
        })
    }

    /// The blocked apps.
    fn blocked_apps(&self) -> Result<Vec<AppId>, Error> {
        let connection = self.lock();
        let mut statement = connection.prepare("SELECT app FROM blocked_apps ORDER BY app")?;
        let rows = statement.query_map([], |row| Ok(AppId::new(row.get::<_, String>(0)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Turns off the masking of secrets in `app`'s lines and reports, for every agent, until
    /// [`StoreBackend::mask_app`]. Only the person does this (`phonelogs rules unmask`, the person's
    /// page), never an agent: nothing an agent reaches calls it. The history records it, with
    /// where it was done (`via`: the command line or the page).
    fn unmask_app(&self, app: &AppId, via: AnsweredVia) -> Result<(), Error> {
        self.person_setting(app, via, true)
    }

    /// Turns the masking of `app`'s secrets back on; an error when it was not off.
    fn mask_app(&self, app: &AppId, via: AnsweredVia) -> Result<(), Error> {
        self.person_setting(app, via, false)
    }

    /// The apps whose secrets are shown unmasked, with when the person chose it.
    fn unmasked_apps(&self) -> Result<Vec<(AppId, String)>, Error> {
        let connection = self.lock();
        let mut statement =
            connection.prepare("SELECT app, created_at FROM unmasked_apps ORDER BY app")?;
        let rows = statement.query_map([], |row| {
            Ok((
                AppId::new(row.get::<_, String>(0)?),
                row.get::<_, String>(1)?,
            ))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    // --- For the gateway. ---

    fn is_unmasked(&self, app: &AppId) -> Result<bool, Error> {
        let connection = self.lock();
        Ok(connection
            .prepare_cached("SELECT 1 FROM unmasked_apps WHERE app = ?1")?
            .query_row([app.as_str()], |_| Ok(()))
            .optional()?
            .is_some())
    }
    // The statements every call runs (the block list, the task's end, grants, the history
    // step) are prepared once per connection (`prepare_cached`), not parsed again per call.

    fn is_blocked(&self, app: &AppId) -> Result<bool, Error> {
        let connection = self.lock();
        Ok(connection
            .prepare_cached("SELECT 1 FROM blocked_apps WHERE app = ?1")?
            .query_row([app.as_str()], |_| Ok(()))
            .optional()?
            .is_some())
    }

    fn begin_task(
        &self,
        task_id: &str,
        agent: &str,
        started_at: OffsetDateTime,
    ) -> Result<(), Error> {
        self.write(|tx| {
            tx.execute(
                "INSERT OR IGNORE INTO tasks (id, agent, started_at) VALUES (?1, ?2, ?3)",
                params![task_id, agent, rfc3339(started_at)],
            )?;
            Ok(())
        })
    }

    /// Ends a task: its pending approvals expire.
    fn end_task(&self, task_id: &str) -> Result<(), Error> {
        self.write(|tx| {
            let now = now_text();
            tx.execute(
                "UPDATE tasks SET ended_at = ?2 WHERE id = ?1 AND ended_at IS NULL",
                params![task_id, now],
            )?;
            // Unanswered questions and unused "Allow once" answers expire, and "Allow for this
            // task" grants go, so nothing the task was allowed outlives it (its standing rules
            // are the person's own and stay).
            tx.execute(
                "UPDATE approvals SET state = 'expired' WHERE task_id = ?1
                   AND (state = 'pending' OR (state = 'answered' AND answer = 'once'))",
                [task_id],
            )?;
            tx.execute("DELETE FROM task_grants WHERE task_id = ?1", [task_id])?;
            Ok(())
        })
    }

    /// Whether the task has ended (its session called `end`).
    fn task_ended(&self, task_id: &str) -> Result<bool, Error> {
        let connection = self.lock();
        let ended: Option<Option<String>> = connection
            .prepare_cached("SELECT ended_at FROM tasks WHERE id = ?1")?
            .query_row([task_id], |row| row.get(0))
            .optional()?;
        Ok(matches!(ended, Some(Some(_))))
    }

    /// Whether a grant covers `action` without asking: this task's "Allow for this task" for
    /// it, or a standing rule for this agent, phone, app and action.
    fn covered(
        &self,
        task_id: &str,
        agent: &str,
        device: &DeviceId,
        app: &AppId,
        action: Action,
    ) -> Result<bool, Error> {
        let connection = self.lock();
        let task = connection
            .prepare_cached(
                "SELECT 1 FROM task_grants WHERE task_id = ?1 AND device = ?2 AND app = ?3 AND action = ?4",
            )?
            .query_row(
                params![task_id, device.as_str(), app.as_str(), action.as_str()],
                |_| Ok(()),
            )
            .optional()?
            .is_some();
        if task {
            return Ok(true);
        }
        Ok(connection
            .prepare_cached(
                "SELECT 1 FROM standing_rules WHERE agent = ?1 AND device = ?2 AND app = ?3 AND action = ?4",
            )?
            .query_row(
                params![agent, device.as_str(), app.as_str(), action.as_str()],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
    }

    /// The pending approval for this call's task, agent, phone, app, action and detail, made
    /// now when there is none; one transaction, so concurrent calls (in any process) share one
    /// approval. When [`MAX_PENDING_PER_ACTION`] questions of this agent and action about this
    /// app (on any phone, by any name) count already, or [`MAX_PENDING_PER_AGENT`] of this
    /// agent's at all, none is made ([`Asked::Capped`], [`Asked::Resting`]): the ones waiting in
    /// any of its tasks, and the distinct ones left unanswered when their task ended less than
    /// [`UNANSWERED_REST`] ago, so neither many sessions, nor a phone's other names, nor ending
    /// and opening one again raise more. A question equal to one left unanswered so is asked again
    /// (it is not new to the person, and a client started again must reach them).
    fn pending_or_create(
        &self,
        ask: &NewApproval<'_>,
        now: OffsetDateTime,
    ) -> Result<Asked, Error> {
        self.write(|tx| {
            let existing = tx
                .query_row(
                    &format!(
                        "SELECT {APPROVAL_COLUMNS} FROM approvals
                         WHERE task_id = ?1 AND agent = ?2 AND device = ?3 AND app = ?4
                           AND action = ?5 AND detail = ?6 AND state = 'pending'
                         ORDER BY rowid LIMIT 1"
                    ),
                    params![
                        ask.task_id,
                        ask.agent,
                        ask.device.as_str(),
                        ask.app.as_str(),
                        ask.action.as_str(),
                        ask.detail
                    ],
                    approval_from_row,
                )
                .optional()?;
            if let Some(approval) = existing {
                return Ok(Asked::Shared(approval));
            }
            if let Some(capped) = capped(tx, ask)? {
                return Ok(capped);
            }
            let approval = Approval {
                id: new_id("ap"),
                task_id: ask.task_id.to_owned(),
                agent: ask.agent.to_owned(),
                device: ask.device.to_string(),
                app: ask.app.to_string(),
                app_label: ask.app_label.to_owned(),
                action: Some(ask.action),
                detail: ask.detail.to_owned(),
                question: ask.question.to_owned(),
                rule: ask.rule.to_owned(),
                created_at: rfc3339(now),
                answer: None,
                answered_via: None,
                state: ApprovalState::Pending,
            };
            tx.execute(
                "INSERT INTO approvals (id, task_id, agent, device, app, app_label, question, rule, created_at, state, action, detail)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'pending', ?10, ?11)",
                params![
                    approval.id,
                    approval.task_id,
                    approval.agent,
                    approval.device,
                    approval.app,
                    approval.app_label,
                    approval.question,
                    approval.rule,
                    approval.created_at,
                    approval.action.map_or("", Action::as_str),
                    approval.detail
                ],
            )?;
            Ok(Asked::New(approval))
        })
    }

    /// Marks an "Allow once" as used by its call; false when another call used it first.
    fn use_once(&self, approval_id: &str) -> Result<bool, Error> {
        self.write(|tx| {
            Ok(tx.execute(
                "UPDATE approvals SET state = 'used' WHERE id = ?1 AND state = 'answered' AND answer = 'once'",
                [approval_id],
            )? == 1)
        })
    }

    /// Writes a history step. Every text of the agent's in its arguments goes through
    /// [`agent_text`] here, so no caller can store one whole.
    fn record_step(&self, step: &NewStep<'_>) -> Result<(), Error> {
        self.write_as(Durability::History, |tx| {
            tx.prepare_cached(
                "INSERT INTO history (at, task_id, agent, device, status, step, app, kind, since, filter, level, lim, exclude, tags)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            )?
            .execute(params![
                    now_text(),
                    step.task_id,
                    step.agent,
                    step.device,
                    step.status.as_str(),
                    step.step,
                    agent_text(&step.args.app),
                    agent_text(&step.args.kind),
                    step.args.since.as_deref().map(agent_text),
                    step.args.filter.as_deref().map(agent_text),
                    step.args.level.as_deref().map(agent_text),
                    step.args.limit,
                    step.args.exclude.as_deref().map(agent_text),
                    step.args.tags.as_deref().map(agent_text)
                ],
            )?;
            Ok(())
        })
    }
}

const APPROVAL_COLUMNS: &str = "id, task_id, agent, device, app, app_label, question, rule, created_at, answer, state, action, detail, answered_via";

fn approval_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Approval> {
    let answer: Option<String> = row.get(9)?;
    let state: String = row.get(10)?;
    let action: String = row.get(11)?;
    let via: Option<String> = row.get(13)?;
    Ok(Approval {
        // An action this build does not know is `None`: no call of this build can pick it up.
        action: Action::parse(&action),
        detail: row.get(12)?,
        answered_via: via.as_deref().and_then(AnsweredVia::parse),
        id: row.get(0)?,
        task_id: row.get(1)?,
        agent: row.get(2)?,
        device: row.get(3)?,
        app: row.get(4)?,
        app_label: row.get(5)?,
        question: row.get(6)?,
        rule: row.get(7)?,
        created_at: row.get(8)?,
        answer: answer.as_deref().and_then(Answer::parse),
        state: ApprovalState::parse(&state),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::time::Duration;

    use phonelogs_driver::AppId;

    use super::{SqliteStore as Store, StoreBackend as _};

    /// A read does not wait for a commit in progress (here, the writer held as its fsync
    /// holds it): it reads the last committed state from its own connection.
    #[test]
    fn a_read_does_not_wait_for_the_writer() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        store.block_app(&AppId::new("com.example.blocked")).unwrap();
        let writing = store.lock_now();
        let reader = store.clone();
        let (done, read) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = done.send(reader.is_blocked(&AppId::new("com.example.blocked")));
        });
        let answer = read.recv_timeout(Duration::from_secs(10));
        drop(writing);
        assert!(
            matches!(answer, Ok(Ok(true))),
            "the read waited for the writer: {answer:?}"
        );
    }

    /// A history step is committed without an fsync (`synchronous=NORMAL`, 1) and the next
    /// decision with one (`FULL`, 2): no write inherits the level of the one before it.
    #[test]
    fn a_history_step_waits_for_no_fsync_and_a_decision_after_it_does() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let level = |store: &Store| -> i64 {
            store
                .lock_now()
                .query_row("PRAGMA synchronous", [], |row| row.get(0))
                .unwrap()
        };
        let step = super::NewStep {
            task_id: "task",
            agent: "agent",
            device: None,
            status: crate::types::Status::Ok,
            step: "phone_logs".into(),
            args: crate::types::StepArgs::default(),
        };
        store.record_step(&step).unwrap();
        assert_eq!(level(&store), 1, "a history step waited for an fsync");
        store.block_app(&AppId::new("com.example.blocked")).unwrap();
        assert_eq!(
            level(&store),
            2,
            "a decision after a history step was not durable"
        );
        store.record_step(&step).unwrap();
        store
            .unblock_app(&AppId::new("com.example.blocked"))
            .unwrap();
        assert_eq!(level(&store), 2);
        let memory = Store::in_memory().unwrap();
        memory.record_step(&step).unwrap();
        assert_eq!(level(&memory), 2, "outside WAL mode every write is FULL");
    }
}
