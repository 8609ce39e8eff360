//! # phonelogs-view
//!
//! What an agent reads of a phone app's logs, from what a driver (`phonelogs-driver`) read: pure
//! text work, no device, no state, no permission. The gateway calls it once per result.
//!
//! - [`lines`]: one line of text per line (line ends, terminal controls).
//! - [`mask`] and [`masked`]: secrets masked once, as soon as lines are read, so everything after
//!   sees only masked text ([`masked::Piece`]).
//! - [`select`]: `filter`, `exclude` and `tag` ([`select::Selection`]), judged on masked text.
//! - [`rows`]: repeats folded, process markers (a crash, a restart, an ended stream).
//! - [`render`]: lines and crash reports laid out within the result's cap, counted in
//!   JSON-escaped bytes, with the size of a report's heading.
//! - [`since`] and [`place`]: the `since` argument read as a time, or as the place after the
//!   lines already shown; [`held`]: the lines a waiting call holds.
//! - [`aids`] and [`context`]: the debugging aids' captures masked; a crash report's context
//!   lines. [`builds`]: what another build wrote, which a development build's pass leaves out.
//! - [`types`] and [`debug_types`]: the one request and answer shape of a `phone_logs` call and
//!   of the debugging aids, which the gateway fills and the MCP front end carries.
//!
//! What it refuses is a typed [`ViewError`]; the gateway words it for the agent.
//!
//! ```
//! use phonelogs_driver::{LogLevel, LogLine};
//! use phonelogs_view::{MAX_RESULT_BYTES, present_lines};
//! use time::macros::{datetime, offset};
//!
//! let line = LogLine {
//!     time: datetime!(2026-11-30 10:00:01.5 UTC),
//!     level: LogLevel::Info,
//!     tag: "Feed".into(),
//!     text: "GET /feed?access_token=abc123".into(),
//!     pid: Some(4242),
//!     tid: Some(4242),
//!     uid: Some(10123),
//! };
//! // Masked, not folded, on a computer one hour east of UTC.
//! let shown = present_lines(vec![line], offset!(+1), MAX_RESULT_BYTES, (true, false));
//! assert_eq!(shown.log, "11:00:01.500 Feed: GET /feed?access_token=[redacted:token]\n");
//! assert_eq!((shown.shown, shown.masked), (1, 1));
//! ```

pub mod aids;
pub mod builds;
pub mod context;
pub mod cost;
pub mod debug_types;
mod error;
pub mod held;
pub mod lines;
pub mod mask;
pub mod masked;
pub mod place;
pub mod render;
pub mod rows;
pub mod select;
pub mod since;
pub mod types;

pub use cost::{heading_cost, json_escaped_len};
pub use error::ViewError;
pub use render::{
    MAX_LINE_BYTES, MAX_MESSAGE_BYTES, MAX_RESULT_BYTES, MIN_RESULT_CAP, ProcessEvent,
    ProcessMarker, RenderedLines, present_lines,
};
pub use select::{MAX_PATTERN_BYTES, MAX_TAGS};
pub use types::{LineView, Occurrences, ReportView, TextShown};
