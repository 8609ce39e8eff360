//! # phonelogs-console
//!
//! The person's side of phonelogs, behind the `phonelogs` command: the person who owns the phone
//! controls what agents read. They answer approvals, review and revoke Always-allow rules, block
//! apps and read the history of what was read, never the text ([`state`], and the page
//! [`ui`]); they connect MCP clients ([`setup`]), find what works and what to fix ([`doctor`]),
//! list phones ([`devices`]), read an app's lines themselves ([`logs_cmd`]), read report files
//! offline ([`report`], [`symbols`]) and see a demo ([`demo`]).
//!
//! This crate writes to standard output: that is the person's terminal here, never an MCP
//! transport (the MCP server, `phonelogs-mcp`, does not depend on it; only the `phonelogs`
//! binary may). Diagnostics still go through `tracing` to standard error. Errors are typed
//! ([`Error`]); the binary words them with their causes (`{:#}`).
//!
//! ```no_run
//! # fn run() -> Result<(), phonelogs_console::Error> {
//! let dir = phonelogs_console::state::state_dir(None)?;
//! let store = phonelogs_console::state::open(&dir)?;
//! phonelogs_console::state::approvals_list(&store, false)?;
//! # Ok(())
//! # }
//! ```

pub mod demo;
pub mod devices;
pub mod doctor;
mod doctor_ios;
pub mod finding;
pub mod logs_cmd;
pub mod report;
pub mod setup;
pub mod state;
pub mod symbols;
pub mod ui;

pub use finding::Finding;

/// What stops a command of the person's side; each says what failed and, where it can, what to
/// do instead.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// What was asked cannot be done as asked; the text says what to do instead.
    #[error("{0}")]
    Refused(String),
    /// A step failed: `doing` names it, `source` says why.
    #[error("{doing}")]
    Failed {
        /// The step, as the person reads it ("reading FILE").
        doing: String,
        /// Why it failed.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    /// The state (approvals, rules, history) or the gateway refused or failed.
    #[error(transparent)]
    Gateway(#[from] phonelogs_gateway::Error),
    /// An app or phone the person named is not a valid name, or a driver's call failed.
    #[error(transparent)]
    Driver(#[from] phonelogs_driver::Error),
    /// A simulated phone of the demo did not start or play.
    #[error(transparent)]
    Demo(#[from] phonelogs_demo::Error),
    /// A symbols directory that cannot be opened or filed into.
    #[error(transparent)]
    Symbols(#[from] phonelogs_symbols::Error),
    /// The phones' flags, config file or demo phones.
    #[error(transparent)]
    Phones(#[from] phonelogs_phones::Error),
    /// Writing to the person's terminal failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// A value could not be written as JSON.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

/// A result of the person's side.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Names the step an error or a missing value stopped, as the person reads it.
pub(crate) trait Doing<T> {
    /// The step `what` failed with this error as its cause.
    fn doing(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T, E> Doing<T> for std::result::Result<T, E>
where
    E: std::error::Error + Send + Sync + 'static,
{
    fn doing(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| Error::Failed {
            doing: what(),
            source: Box::new(source),
        })
    }
}

impl<T> Doing<T> for Option<T> {
    fn doing(self, what: impl FnOnce() -> String) -> Result<T> {
        self.ok_or_else(|| Error::Refused(what()))
    }
}

/// An error with its causes, `outer: inner: …`, as the binary words errors.
pub fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(next) = cause {
        text.push_str(": ");
        text.push_str(&next.to_string());
        cause = next.source();
    }
    text
}

/// Resolves on Ctrl-C or SIGTERM (what `kill` and process supervisors send).
pub async fn stop_signal() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = async {
            match term.as_mut() {
                Some(term) => { term.recv().await; }
                None => std::future::pending::<()>().await,
            }
        } => {}
    }
}
