//! Live reads: a stream of an app's new lines ([`LineStream`], from
//! [`crate::AppLogger::follow_app_logs`]). What a read knew of the phone's boot and clock is a
//! value type ([`crate::PhoneMark`], in `types.rs`).

use crate::{LogLine, Result};
use async_trait::async_trait;

/// A stream of one app's lines as the phone logs them, oldest first. Dropping it ends it: the
/// backend closes what it opened (an adb shell stream), and nothing is left running.
#[async_trait]
pub trait LineStream: Send {
    /// The next line, `None` when the stream ended (the phone went away), or an error.
    async fn next_line(&mut self) -> Option<Result<LogLine>>;
}
