//! The gateway itself: its drivers (each behind a [`GuardedLogger`]), the policy, the state
//! store, the clock, and the builder that puts them together. Tasks start from it
//! ([`Gateway::start_task`], in `session.rs`, where a task lives).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use phonelogs_driver::{AppId, AppLogger, DeviceId};
use phonelogs_policy::{Agent, Policy};
use time::{OffsetDateTime, UtcOffset};

use crate::error::Error;
use crate::guard::{DEFAULT_CALL_TIMEOUT, GuardedLogger};
use crate::store::Store;
use phonelogs_view::render::{MAX_RESULT_BYTES, MIN_RESULT_CAP};

/// Where the gateway reads the time: the computer's clock, or a fixed one in tests.
pub type Clock = Arc<dyn Fn() -> OffsetDateTime + Send + Sync>;

/// A task: the agent, the phones and apps it may use, as the person started it. Its start time
/// is when [`Gateway::start_task`] is called.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskSpec {
    /// The agent doing the task.
    pub agent: Agent,
    /// The task's apps; `None` means any app in the agent's scope.
    pub apps: Option<Vec<AppId>>,
    /// The task's phones; `None` means any connected phone.
    pub devices: Option<Vec<DeviceId>>,
}

impl TaskSpec {
    /// A task for `agent` with no app or phone list.
    pub fn new(agent: Agent) -> Self {
        TaskSpec {
            agent,
            apps: None,
            devices: None,
        }
    }
}

pub(crate) struct Inner {
    pub(crate) drivers: Vec<GuardedLogger>,
    pub(crate) policy: Policy,
    pub(crate) store: Store,
    pub(crate) local_root: Option<PathBuf>,
    pub(crate) clock: Clock,
    pub(crate) local_offset: UtcOffset,
    pub(crate) result_cap: usize,
    /// The person's symbols directory (`--symbols DIR`), opened once.
    pub(crate) symbols: Option<phonelogs_symbols::SymbolsDir>,
    /// How many live tasks read each app on each phone through each driver, so a listener
    /// (the iPhone's follower) that several tasks read through stops only when the last of them
    /// ends (`Session::end`).
    pub(crate) readers: Readers,
    /// The private key blocks seen in each app's lines, so a read that starts inside one
    /// masks it (`phonelogs_view::masked`).
    pub(crate) key_blocks: phonelogs_view::masked::KeyBlocks,
    /// The build of each app last seen, for a build floor where the phone gives no install
    /// time (`crate::builds`).
    pub(crate) builds: crate::builds::Builds,
}

/// A driver's index, a phone and an app: what a listener listens to.
pub(crate) type ReadKey = (usize, phonelogs_driver::DeviceId, phonelogs_driver::AppId);

/// The live tasks' count for each [`ReadKey`], each behind its own lock, which is held across
/// that listener's stop: a task that starts reading it while it stops waits and gets a new one,
/// and nothing else waits (another app's, another phone's reads, a slow stop of a farm's
/// usbmuxd).
#[derive(Default)]
pub(crate) struct Readers {
    counts: std::sync::Mutex<std::collections::HashMap<ReadKey, Arc<tokio::sync::Mutex<usize>>>>,
}

impl Readers {
    /// The count of `key` (made at zero), to lock.
    pub(crate) fn of(&self, key: &ReadKey) -> Arc<tokio::sync::Mutex<usize>> {
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        counts.entry(key.clone()).or_default().clone()
    }

    /// Forgets `key`'s count (given back unlocked) when it is zero and nobody else holds it, so
    /// the map holds only the listeners live tasks read.
    pub(crate) fn forget_if_unused(&self, key: &ReadKey, count: Arc<tokio::sync::Mutex<usize>>) {
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        // Under the map's lock nobody can take another handle, so two (the map's and this one)
        // means nobody else has it.
        if Arc::strong_count(&count) == 2 && count.try_lock().is_ok_and(|count| *count == 0) {
            counts.remove(key);
        }
    }
}

/// The gateway: drivers, policy and state. Cloning shares it.
#[derive(Clone)]
pub struct Gateway {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("drivers", &self.inner.drivers)
            .field("store", &self.inner.store)
            .field("local_offset", &self.inner.local_offset)
            .finish_non_exhaustive()
    }
}

/// Builds a [`Gateway`].
pub struct GatewayBuilder {
    drivers: Vec<Arc<dyn AppLogger>>,
    policy: Policy,
    state_dir: Option<PathBuf>,
    store: Option<Store>,
    local_root: Option<PathBuf>,
    clock: Option<Clock>,
    local_offset: Option<UtcOffset>,
    call_timeout: Duration,
    result_cap: usize,
    symbols_dir: Option<PathBuf>,
}

impl std::fmt::Debug for GatewayBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatewayBuilder")
            .field("drivers", &self.drivers.len())
            .field("state_dir", &self.state_dir)
            .field("store", &self.store.as_ref().map(|s| s.describe()))
            .field("local_root", &self.local_root)
            .finish_non_exhaustive()
    }
}

impl Gateway {
    /// A builder with no drivers, the default policy and an in-memory store.
    pub fn builder() -> GatewayBuilder {
        GatewayBuilder {
            drivers: Vec::new(),
            policy: Policy::default(),
            state_dir: None,
            store: None,
            local_root: None,
            clock: None,
            local_offset: None,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            result_cap: MAX_RESULT_BYTES,
            symbols_dir: None,
        }
    }

    /// The state store (approvals, rules, blocks, history).
    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    /// The policy.
    pub fn policy(&self) -> &Policy {
        &self.inner.policy
    }

    /// The drivers, each behind its guard.
    pub fn drivers(&self) -> &[GuardedLogger] {
        &self.inner.drivers
    }

    /// The computer's clock offset the gateway renders times in.
    pub fn local_offset(&self) -> UtcOffset {
        self.inner.local_offset
    }

    /// The most a result's log may hold, as JSON-escaped bytes (see
    /// [`GatewayBuilder::result_cap`]).
    pub fn result_cap(&self) -> usize {
        self.inner.result_cap
    }

    /// The symbols directory, when one was given ([`GatewayBuilder::symbols_dir`]).
    pub fn symbols(&self) -> Option<&phonelogs_symbols::SymbolsDir> {
        self.inner.symbols.as_ref()
    }

    pub(crate) fn now(&self) -> OffsetDateTime {
        (self.inner.clock)()
    }
}

impl GatewayBuilder {
    /// Adds a driver; call it once per backend (Android, iPhone, fake).
    pub fn driver(mut self, driver: Arc<dyn AppLogger>) -> Self {
        self.drivers.push(driver);
        self
    }

    /// Sets the policy (default: [`Policy::default`]).
    pub fn policy(mut self, policy: Policy) -> Self {
        self.policy = policy;
        self
    }

    /// Keeps state in SQLite in `dir` (default: an in-memory store).
    pub fn state_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.state_dir = Some(dir.into());
        self
    }

    /// Keeps state in `store`, already open (a PostgreSQL store shared by many servers); it
    /// takes the place of [`GatewayBuilder::state_dir`].
    pub fn store(mut self, store: Store) -> Self {
        self.store = Some(store);
        self
    }

    /// The directory `capture_native_tombstone` writes under (`<root>/tombstones/`); none means
    /// the tool is refused.
    pub fn local_root(mut self, dir: Option<PathBuf>) -> Self {
        self.local_root = dir;
        self
    }

    /// Reads the time from `clock` instead of the computer's clock (tests).
    pub fn clock(mut self, clock: impl Fn() -> OffsetDateTime + Send + Sync + 'static) -> Self {
        self.clock = Some(Arc::new(clock));
        self
    }

    /// The computer's UTC offset, for rendering times and reading `since`. By default it is read
    /// from the system when [`GatewayBuilder::build`] runs; binaries should pass the offset they
    /// read at start-up, before any thread exists, because the system cannot be asked safely
    /// once several threads run (UTC is used then, with a warning).
    pub fn local_offset(mut self, offset: UtcOffset) -> Self {
        self.local_offset = Some(offset);
        self
    }

    /// How long any one driver call may take (default [`DEFAULT_CALL_TIMEOUT`]).
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// The most a result's log may hold (default [`MAX_RESULT_BYTES`], the spec's 64 KB; at
    /// least [`MIN_RESULT_CAP`], else [`GatewayBuilder::build`] fails), for clients that pass
    /// less to their model. It is measured as JSON-escaped bytes, which is never less than the
    /// raw text, and for crash reports it includes the headings' structured copies: so a result
    /// is within the cap (plus its message and JSON keys) both as text content and as
    /// `structuredContent`. The gateway lays the log out within it and counts what it leaves
    /// out, so every count in the message stays true; a backtrace's text is cut to it too.
    pub fn result_cap(mut self, bytes: usize) -> Self {
        self.result_cap = bytes;
        self
    }

    /// Applies the symbols in `dir` (laid out as `DIR/<app>/<version>/`, see `docs/symbols.md`)
    /// to crash reports and to stack lines in logs, before the result is cut. It must exist
    /// when [`GatewayBuilder::build`] runs. Nothing of it goes into the history.
    pub fn symbols_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.symbols_dir = Some(dir.into());
        self
    }

    /// Opens the store and builds the gateway.
    pub fn build(self) -> Result<Gateway, Error> {
        if self.result_cap < MIN_RESULT_CAP {
            return Err(Error::InvalidArgument(format!(
                "the result cap of {} bytes is too small: use at least {MIN_RESULT_CAP}",
                self.result_cap
            )));
        }
        // The secret rules' keywords are gathered here (a few milliseconds); each rule's
        // pattern is compiled only when a line first holds one of its keywords
        // (`mask::Masker`), so a gateway starts and idles without the whole set compiled.
        let _ = phonelogs_view::mask::masker();
        let symbols = match &self.symbols_dir {
            Some(dir) => Some(phonelogs_symbols::SymbolsDir::open(dir).map_err(|error| {
                Error::InvalidArgument(format!("the symbols directory cannot be used: {error}"))
            })?),
            None => None,
        };
        let store = match (self.store, &self.state_dir) {
            (Some(store), _) => store,
            (None, Some(dir)) => Store::open(dir)?,
            (None, None) => Store::in_memory()?,
        };
        let local_offset = match self.local_offset {
            Some(offset) => offset,
            None => UtcOffset::current_local_offset().unwrap_or_else(|error| {
                tracing::warn!(%error, "the computer's UTC offset is unknown; showing times in UTC");
                UtcOffset::UTC
            }),
        };
        let clock = self
            .clock
            .unwrap_or_else(|| Arc::new(OffsetDateTime::now_utc));
        let drivers = self
            .drivers
            .into_iter()
            .map(|driver| GuardedLogger::new(driver, self.call_timeout))
            .collect();
        Ok(Gateway {
            inner: Arc::new(Inner {
                drivers,
                policy: self.policy,
                store,
                local_root: self.local_root,
                clock,
                local_offset,
                result_cap: self.result_cap,
                symbols,
                key_blocks: phonelogs_view::masked::KeyBlocks::default(),
                builds: crate::builds::Builds::default(),
                readers: Readers::default(),
            }),
        })
    }
}
