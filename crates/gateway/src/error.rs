//! The gateway's one error type.

use std::path::PathBuf;

/// What went wrong in the gateway or its state store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The state database exists but is not a readable phonelogs database. It is left as it is:
    /// phonelogs never replaces it, so nothing the person allowed or blocked is lost silently.
    #[error(
        "the state database {path} is corrupt or not a phonelogs database, and was left untouched; move it away to start afresh"
    )]
    Corrupt {
        /// The database file.
        path: PathBuf,
        /// What SQLite said.
        #[source]
        source: rusqlite::Error,
    },
    /// The database file exists but cannot be opened or read (a directory in its place, no
    /// permission). It is left as it is.
    #[error("the state database {path} cannot be opened or read, and was left untouched: {source}")]
    Unreadable {
        /// The database file.
        path: PathBuf,
        /// What SQLite said.
        #[source]
        source: rusqlite::Error,
    },
    /// The file is an SQLite database of something else: phonelogs does not write into it.
    #[error(
        "{path} is an SQLite database that phonelogs did not make, and was left untouched; point the state directory elsewhere"
    )]
    NotPhonelogs {
        /// The database file.
        path: PathBuf,
    },
    /// The database was written by a newer phonelogs.
    #[error(
        "the state database {path} has schema version {found}, newer than this phonelogs knows ({known}); update phonelogs"
    )]
    NewerSchema {
        /// The database file.
        path: PathBuf,
        /// The version found.
        found: i64,
        /// The newest version this build knows.
        known: i64,
    },
    /// The state directory cannot be created or read.
    #[error("the state directory {path} cannot be used: {source}")]
    StateDir {
        /// The directory.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The state directory is open to other users (others may write to it, or another user
    /// owns it): whoever can write there can answer questions for the person, so it is not
    /// used, and left as it is. The message says how to fix it.
    #[error("the state directory {path} {why}; phonelogs will not use it")]
    StateDirOpen {
        /// The directory.
        path: PathBuf,
        /// What is wrong, and the command that fixes it.
        why: String,
    },
    /// A database operation failed.
    #[error("the state database failed: {0}")]
    Database(#[from] rusqlite::Error),
    /// A store other than the embedded SQLite one (PostgreSQL) failed or cannot be reached. It
    /// names the store (host, port and database; never a user or a password), so the person
    /// knows which one to look at. A read that needs a decision fails closed on it.
    #[error("the state store {store} failed: {message}")]
    Store {
        /// The store, as [`crate::StoreBackend::describe`] names it.
        store: String,
        /// What went wrong, and what fixes it when that is known.
        message: String,
    },
    /// No approval has this id.
    #[error("no approval has the id {0:?}")]
    UnknownApproval(String),
    /// The approval was answered already.
    #[error("approval {0:?} was answered already")]
    AlreadyAnswered(String),
    /// The approval's task has ended.
    #[error("approval {0:?} expired when its task ended")]
    ApprovalExpired(String),
    /// No standing rule has this id.
    #[error("no Always-allow rule has the id {0:?}")]
    UnknownRule(String),
    /// The app was not blocked.
    #[error("{0} is not blocked")]
    NotBlocked(String),
    /// The app's secrets were masked already (masking was not turned off for it).
    #[error("secrets are masked for {0} already")]
    NotUnmasked(String),
    /// An argument that cannot be right.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A driver call failed.
    #[error(transparent)]
    Driver(#[from] phonelogs_driver::Error),
}
