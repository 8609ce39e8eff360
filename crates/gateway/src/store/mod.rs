//! The state that must survive: standing rules, approvals and their answers, blocked apps,
//! unmasked apps and history, behind one contract ([`StoreBackend`]) with two backends: the
//! embedded SQLite database ([`SqliteStore`], the default, in the state directory) and
//! PostgreSQL for many servers sharing one store (`phonelogs-store-pg`, see docs/farms.md).
//! [`Store`] is the handle the gateway, the MCP server and the `phonelogs` command hold.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::Error;

mod backend;
#[cfg(feature = "conformance")]
pub mod conformance;
mod sqlite;

pub use backend::{
    ANSWER_POLL, Asked, MAX_PENDING_PER_ACTION, MAX_PENDING_PER_AGENT, NewApproval, NewStep,
    QuestionCap, StoreBackend, UNANSWERED_REST, answered, cap_reached, person_only,
};
pub use sqlite::{BUSY_TIMEOUT, DB_FILE, SqliteStore};

/// The environment variable that names the state directory.
pub const STATE_DIR_ENV: &str = "PHONELOGS_STATE_DIR";

/// The state directory when none is given: `$PHONELOGS_STATE_DIR`, else
/// `$XDG_STATE_HOME/phonelogs`, else `~/.local/state/phonelogs` (`%LOCALAPPDATA%\\phonelogs` on
/// Windows). The MCP server and the `phonelogs` command both call this, so they find the same
/// store without flags. `env` looks a variable up (`std::env::var_os` outside tests); `None`
/// when no variable gives a place.
pub fn default_state_dir(env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    let set = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = set(STATE_DIR_ENV) {
        return Some(dir);
    }
    let base = set("XDG_STATE_HOME").or_else(|| {
        if cfg!(windows) {
            set("LOCALAPPDATA")
        } else {
            set("HOME").map(|home| home.join(".local").join("state"))
        }
    });
    base.map(|base| base.join("phonelogs"))
}

/// The state store: a shared handle to one backend, cloned freely. Every operation of the
/// contract is called on it directly (it dereferences to [`StoreBackend`]).
#[derive(Debug, Clone)]
pub struct Store(Arc<dyn StoreBackend>);

impl std::ops::Deref for Store {
    type Target = dyn StoreBackend;

    fn deref(&self) -> &Self::Target {
        &*self.0
    }
}

impl Store {
    /// Opens (creating when missing) the SQLite database in `dir`, migrating it to the newest
    /// schema ([`SqliteStore::open`]).
    pub fn open(dir: &Path) -> Result<Store, Error> {
        Ok(Store::new(SqliteStore::open(dir)?))
    }

    /// A store that lives in memory and dies with the process (tests, demos, embedding agents
    /// without a state directory).
    pub fn in_memory() -> Result<Store, Error> {
        Ok(Store::new(SqliteStore::in_memory()?))
    }

    /// A store on any backend (PostgreSQL: `phonelogs_store_pg::PgStore`).
    pub fn new(backend: impl StoreBackend + 'static) -> Store {
        Store(Arc::new(backend))
    }

    /// The SQLite schema version this build writes.
    pub fn schema_version() -> i64 {
        SqliteStore::schema_version()
    }
}

/// The time as the stores write it: RFC 3339 in UTC.
pub fn rfc3339(time: OffsetDateTime) -> String {
    time.format(&Rfc3339).unwrap_or_else(|_| time.to_string())
}

/// Now, as [`rfc3339`] writes it.
pub fn now_text() -> String {
    rfc3339(OffsetDateTime::now_utc())
}

/// Runs `f`, which waits on the disk (a commit's fsync) or on the lock another call holds
/// through one, without stalling the other tasks of a multi-threaded tokio runtime: there the
/// worker hands its tasks to another thread first (`block_in_place`). Measured under 16
/// concurrent HTTP sessions (`benches/http_load.rs`), a commit's fsync held a worker, and
/// every call waiting for the lock held the other. Elsewhere (no runtime, a current-thread
/// runtime, a blocking thread) `f` just runs.
pub fn blocking<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}
