//! # phonelogs-gateway
//!
//! The heart of phonelogs: a [`Gateway`] holds the drivers (`Arc<dyn AppLogger>`), the
//! [`Policy`] and the state [`Store`]; a task ([`Gateway::start_task`]) gives a [`Session`],
//! and [`Session::logs`] does a whole `phone_logs` call: it resolves the phone and the app, asks
//! the policy, asks the person when needed ("Read the logs of Example?"), reads the app's own
//! lines or crash reports, checks every line's uid again, applies `since`, the limits and the
//! 64 KB caps, renders the text, and writes a history step that never holds log text.
//!
//! Embedding agents use it directly; the MCP server and the `phonelogs` command line are built
//! on it. All user-facing texts come from [`catalog`].
//!
//! ## Notes on the agreed API (`gateway-api.md`)
//!
//! Everything the contract names exists with its meaning. Where it left a shape open or grew:
//! - [`DebugRequest`] is an enum with one variant per tool and the spec's parameter names
//!   (`serial: String` is required; `approval_id: Option<String>` on the aids that read an app);
//!   serde tags it by `"tool"`. [`DebugResponse`] is `{status, message, data, error}` with
//!   [`DebugStatus`] `success | approval_pending | error` and [`DebugError`] `{code, message}`
//!   ([`ErrorCode`] serializes as `INVALID_ARGUMENT` …). While pending, `data` is
//!   `{"approval_id": …}`.
//! - [`Approval`] also carries `state` ([`ApprovalState`]); [`ReportView`] also carries `cut`
//!   and `text_shown` ([`TextShown`]); [`LogsResponse`] carries the counts of what its `log`
//!   shows (`shown`, `left_out`, `cut`), always true of that log.
//! - [`Store::history`] lists oldest first ([`HistoryFilter`] `{task_id, agent, app, limit}`,
//!   `limit` keeping the newest).
//! - Additions: [`Store::in_memory`], [`Store::approval`], [`Store::blocked_apps`],
//!   [`Store::task_ended`], [`GatewayBuilder::clock`], [`GatewayBuilder::local_offset`],
//!   [`GatewayBuilder::call_timeout`], [`GatewayBuilder::result_cap`], [`TaskSpec::new`],
//!   [`LogsRequest::new`],
//!   [`GuardedLogger`] (the timeout and uid-checking wrapper every driver is read through).
//! - Binaries should read the computer's UTC offset at start-up, before any thread exists, and
//!   pass it to [`GatewayBuilder::local_offset`]: the system cannot be asked safely later.
//! - Call [`Session::end`] when a task ends; dropping a session does not end its task.
//!
//! ```
//! use std::sync::Arc;
//! use phonelogs_driver::{AppId, DeviceId, LogLevel, LogLine};
//! use phonelogs_fake::{FakeApp, FakePhone};
//! use phonelogs_gateway::{Gateway, LogsRequest, Status, TaskSpec};
//! use phonelogs_policy::{Agent, Mode};
//! use time::macros::{datetime, offset};
//!
//! # let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
//! # rt.block_on(async {
//! // A fake phone with a development build that logged one line.
//! let phone = FakePhone::new();
//! let device = DeviceId::new("emulator-5554");
//! phone.add_device(&device, "Pixel 8");
//! let app = AppId::new("dev.phonelogs.crashtest");
//! phone.add_app(&device, FakeApp::new(app.clone()).label("Crash Test").uid(10123).dev_build(true));
//! phone.add_logs(&device, &app, [LogLine {
//!     time: datetime!(2026-11-30 10:00:01.5 UTC),
//!     level: LogLevel::Info,
//!     tag: "CrashTest".into(),
//!     text: "started".into(),
//!     pid: Some(4242),
//!     tid: Some(4242),
//!     uid: Some(10123),
//! }]);
//!
//! let gateway = Gateway::builder()
//!     .driver(Arc::new(phone))
//!     .local_offset(offset!(+1))
//!     .clock(|| datetime!(2026-11-30 10:05 UTC))
//!     .build()?;
//! let session = gateway.start_task(TaskSpec::new(Agent::new("my-agent", Mode::ReadOnly)));
//!
//! // A development build does not ask the person.
//! let mut request = LogsRequest::new("dev.phonelogs.crashtest");
//! request.since = Some("10m".into());
//! let result = session.logs(request).await;
//! assert_eq!(result.status, Status::Ok);
//! assert_eq!(result.log, "11:00:01.500 CrashTest: started\n");
//! session.end().await;
//! # Ok::<(), phonelogs_gateway::Error>(())
//! # }).unwrap();
//! ```

pub mod catalog;
mod debug;
mod error;
mod guard;
mod lines;
mod permission;
mod render;
mod session;
pub mod since;
mod store;
mod tombstone_file;
mod types;

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use phonelogs_driver::{AppId, AppLogger, DeviceId, DeviceInfo};
use time::{OffsetDateTime, UtcOffset};

pub use debug::{
    DebugError, DebugRequest, DebugResponse, DebugStatus, ErrorCode, JdwpListing, JdwpPackage,
};
pub use error::Error;
pub use guard::{DEFAULT_CALL_TIMEOUT, GuardedLogger};
pub use phonelogs_policy::{Agent, Mode, Policy, StandingRule};
pub use render::{
    LineView, MAX_LINE_BYTES, MAX_RESULT_BYTES, MIN_RESULT_CAP, ReportView, TextShown,
    heading_cost, json_escaped_len,
};
pub use session::{CRASH_LIMITS, LOG_LIMITS, Session};
pub use store::{BUSY_TIMEOUT, DB_FILE, STATE_DIR_ENV, Store, default_state_dir};
pub use types::{
    Action, Answer, AnsweredVia, Approval, ApprovalState, HistoryFilter, HistoryStep, LogsKind,
    LogsRequest, LogsResponse, Status, StepArgs,
};

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
    local_root: Option<PathBuf>,
    clock: Option<Clock>,
    local_offset: Option<UtcOffset>,
    call_timeout: Duration,
    result_cap: usize,
}

impl std::fmt::Debug for GatewayBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatewayBuilder")
            .field("drivers", &self.drivers.len())
            .field("state_dir", &self.state_dir)
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
            local_root: None,
            clock: None,
            local_offset: None,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            result_cap: MAX_RESULT_BYTES,
        }
    }

    /// Every driver's devices. A driver that fails is left out (with a warning) unless every
    /// driver fails, when the first error is returned.
    pub async fn devices(&self) -> Result<Vec<DeviceInfo>, Error> {
        let mut all = Vec::new();
        let mut first_error = None;
        let mut any_ok = false;
        for driver in &self.inner.drivers {
            match driver.devices().await {
                Ok(devices) => {
                    any_ok = true;
                    all.extend(devices);
                }
                Err(error) => {
                    tracing::warn!(%error, "a driver could not list its devices");
                    first_error.get_or_insert(error);
                }
            }
        }
        match first_error {
            Some(error) if !any_ok => Err(Error::Driver(error)),
            _ => Ok(all),
        }
    }

    /// Starts a task now and returns its session.
    pub fn start_task(&self, task: TaskSpec) -> Session {
        Session::start(self.clone(), task)
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

    /// Opens the store and builds the gateway.
    pub fn build(self) -> Result<Gateway, Error> {
        if self.result_cap < MIN_RESULT_CAP {
            return Err(Error::InvalidArgument(format!(
                "the result cap of {} bytes is too small: use at least {MIN_RESULT_CAP}",
                self.result_cap
            )));
        }
        let store = match &self.state_dir {
            Some(dir) => Store::open(dir)?,
            None => Store::in_memory()?,
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
            }),
        })
    }
}

/// A fresh id that nobody can guess from the ids seen before: `prefix-` and 24 hex digits from
/// the standard library's randomly keyed hasher.
pub(crate) fn new_id(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = OffsetDateTime::now_utc().unix_timestamp_nanos();
    let mut parts = [0u64; 2];
    for (salt, part) in parts.iter_mut().enumerate() {
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u64(count);
        hasher.write_i128(nanos);
        hasher.write_u32(std::process::id());
        hasher.write_usize(salt);
        *part = hasher.finish();
    }
    format!("{prefix}-{:016x}{:08x}", parts[0], parts[1] >> 32)
}
