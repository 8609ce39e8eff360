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

mod builds;
pub mod catalog;
mod cursor;
mod debug;
mod devices;
mod error;
mod gateway;
mod guard;
mod id;
mod live;
mod logs;
mod owner;
mod permission;
mod session;
pub mod store;
mod symbols;
mod tombstone_file;
mod types;

pub use devices::{DeviceList, NamedDevice, SourceFailure};
pub use error::Error;
pub use gateway::{Clock, Gateway, GatewayBuilder, TaskSpec};
pub use guard::{DEFAULT_CALL_TIMEOUT, GuardedLogger};
pub use live::{LiveHooks, WAIT_TIMEOUTS, WaitProgress};
pub use logs::{CRASH_LIMITS, LOG_LIMITS};
pub use phonelogs_policy::{Agent, Mode, Policy, StandingRule};
pub use phonelogs_view::debug_types::{
    BacktraceData, DebugData, DebugError, DebugRequest, DebugResponse, DebugStatus, ErrorCode,
    JdwpListing, JdwpPackage, PendingData, TombstoneData,
};
pub use phonelogs_view::{
    LineView, MAX_LINE_BYTES, MAX_MESSAGE_BYTES, MAX_PATTERN_BYTES, MAX_RESULT_BYTES, MAX_TAGS,
    MIN_RESULT_CAP, Occurrences, ProcessEvent, ProcessMarker, RenderedLines, ReportView, TextShown,
    ViewError, heading_cost, json_escaped_len, mask, present_lines, since,
};
pub use session::Session;
pub use store::{
    BUSY_TIMEOUT, DB_FILE, MAX_PENDING_PER_ACTION, MAX_PENDING_PER_AGENT, STATE_DIR_ENV,
    SqliteStore, Store, StoreBackend, UNANSWERED_REST, default_state_dir,
};
/// The token that ends a wait ([`LiveHooks::cancel`]), re-exported so callers need not name
/// `tokio-util`.
pub use tokio_util::sync::CancellationToken;
pub use types::{
    AGENT_TEXT_BYTES, AGENT_TEXT_CUT, Action, Answer, AnsweredVia, Approval, ApprovalState,
    HistoryFilter, HistoryStep, LogsErrorCode, LogsKind, LogsRequest, LogsResponse, Status,
    StepArgs, agent_text,
};

pub use id::new_id;
