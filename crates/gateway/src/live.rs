//! Waiting for a line or a crash report: `wait_for` with `timeout`. On a driver that streams
//! ([`phonelogs_driver::AppLogger::follow_app_logs`]: Android's streaming logcat, the iPhone's
//! follower, the fake phone) one stream is read, every line checked by the guard, and dropped
//! when the wait ends (which closes it on the phone); otherwise the app's lines are read again
//! at a short interval. Crash reports are read again at a modest interval, since a phone files
//! them some seconds after the crash. Progress is reported about once a second, and a
//! cancellation ends the wait at once with what came.
//!
//! A wait keeps the rule a read keeps: what it shows was read while the phone's word about the
//! app (a development build, its uid, a system app, a shared uid) was what the call was decided
//! on. That word is read again ([`Recheck`]) when a process the wait has not seen logs (a
//! reinstall restarts the app), every few seconds, and once more before the wait ends with lines
//! no reading confirmed; when it changed (a release build installed over the development
//! build), the wait ends with [`phonelogs_driver::Error::Changed`], nothing it read is shown,
//! and the call decides again as a read does (`Session::logs_live`): a release build asks the
//! person.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use phonelogs_driver::{
    AppInfo, AppLogger, CrashReport, CrashResult, DeviceId, ErrorKind, LogLine, LogQuery,
};
use time::OffsetDateTime;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::guard::GuardedLogger;
use phonelogs_view::held::Held;
use phonelogs_view::lines::pieces;
use phonelogs_view::masked::{MaskedRead, Piece, ShownLine};
use phonelogs_view::place::{After, Position};

/// The default and longest `timeout` of a wait, in seconds.
pub const WAIT_TIMEOUTS: (u32, u32) = (10, 60);

/// How often lines are read again on a driver that cannot stream them.
const LINE_POLL: Duration = Duration::from_millis(200);

/// How often crash reports are read again while waiting for one.
const REPORT_POLL: Duration = Duration::from_secs(1);

/// How often progress is reported.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// How often a wait reads the phone's word about the app again while no new process logs.
const RECHECK_EVERY: Duration = Duration::from_secs(3);

/// Where a wait stands, for a progress notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitProgress {
    /// How long it has waited.
    pub elapsed: Duration,
    /// How long it will wait at most.
    pub timeout: Duration,
    /// How many of the app's new lines (or reports) came so far.
    pub count: usize,
}

/// What a caller can do to a wait while it runs: hear how it goes, and end it.
#[derive(Clone, Default)]
pub struct LiveHooks {
    /// Called about once a second while waiting.
    pub progress: Option<Arc<dyn Fn(WaitProgress) + Send + Sync>>,
    /// Ends the wait at once when cancelled (an MCP `notifications/cancelled`, Ctrl-C).
    pub cancel: Option<CancellationToken>,
}

impl std::fmt::Debug for LiveHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveHooks")
            .field("progress", &self.progress.is_some())
            .field("cancel", &self.cancel.is_some())
            .finish()
    }
}

impl LiveHooks {
    fn report(&self, started: Instant, timeout: Duration, count: usize) {
        if let Some(progress) = &self.progress {
            progress(WaitProgress {
                elapsed: started.elapsed(),
                timeout,
                count,
            });
        }
    }

    async fn cancelled(&self) {
        match &self.cancel {
            Some(token) => token.cancelled().await,
            None => std::future::pending().await,
        }
    }

    /// Whether the wait was cancelled already.
    pub fn is_cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(CancellationToken::is_cancelled)
    }
}

/// A wait's text and time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Wait {
    pub(crate) text: String,
    pub(crate) seconds: u32,
}

impl Wait {
    fn timeout(&self) -> Duration {
        Duration::from_secs(u64::from(self.seconds))
    }
}

/// How a wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    Matched,
    TimedOut,
    Cancelled,
}

/// The phone's word about the app, read again during a wait: which processes' lines it has
/// confirmed, and how many of the wait's lines were read before the last reading.
struct Recheck {
    pids: HashSet<Option<u32>>,
    confirmed: usize,
}

impl Recheck {
    /// A recheck for a wait whose call already read `lines` (decided on, with their
    /// processes).
    fn new(lines: &[ShownLine]) -> Recheck {
        Recheck {
            pids: lines.iter().map(|line| line.line().pid).collect(),
            confirmed: lines.len(),
        }
    }

    /// Reads the app's facts again: `Changed` when they are no longer what the call was
    /// decided on ([`AppInfo::same_facts`], the rule a confirming read keeps too).
    async fn confirm(on: &On<'_>) -> phonelogs_driver::Result<()> {
        let now = on.driver.app_info(on.device, &on.info.app).await?;
        if on.info.same_facts(&now) {
            return Ok(());
        }
        Err(phonelogs_driver::Error::Changed(format!(
            "{} changed on the phone during the wait (a development build: {} then {})",
            on.info.app, on.info.dev_build, now.dev_build
        )))
    }

    /// Before `fresh` lines are taken: a reading when one comes from a process not seen yet.
    /// `read` is how many lines the call has read with them.
    async fn before_taking(
        &mut self,
        on: &On<'_>,
        fresh: &[Piece<'_>],
        read: usize,
    ) -> phonelogs_driver::Result<()> {
        let mut new = false;
        for piece in fresh {
            new |= self.pids.insert(piece.message().pid);
        }
        if new {
            Recheck::confirm(on).await?;
            self.confirmed = read;
        }
        Ok(())
    }

    /// A reading now (every few seconds, and at the end when lines came after the last one):
    /// the `read` lines held are confirmed.
    async fn now(&mut self, on: &On<'_>, read: usize) -> phonelogs_driver::Result<()> {
        Recheck::confirm(on).await?;
        self.confirmed = read;
        Ok(())
    }
}

/// Waits for a line holding `wait.text` after `place`, adding the app's new lines to `held`
/// (split one per line of text) until one holds it, the time runs out or the wait is
/// cancelled. An error of the driver ends the wait with it, and so does a change of the
/// phone's word about the app ([`Recheck`]): every line added was read while the app was
/// what the call was decided on.
pub(crate) async fn wait_for_line(
    on: &On<'_>,
    query: &LogQuery,
    place: &Position,
    held: &mut Held,
) -> phonelogs_driver::Result<Ending> {
    let mut recheck = Recheck::new(held.lines());
    recheck.confirmed = held.read();
    let ending = follow_lines(on, query, place, held, &mut recheck).await?;
    if held.read() > recheck.confirmed {
        recheck.now(on, held.read()).await?;
    }
    Ok(ending)
}

/// [`wait_for_line`]'s loop over the stream (or the re-reads).
async fn follow_lines(
    on: &On<'_>,
    query: &LogQuery,
    place: &Position,
    held: &mut Held,
    recheck: &mut Recheck,
) -> phonelogs_driver::Result<Ending> {
    let On {
        driver,
        device,
        info,
        wait,
        hooks,
        ..
    } = *on;
    let started = Instant::now();
    let deadline = started + wait.timeout();
    if hooks.is_cancelled() {
        return Ok(Ending::Cancelled);
    }
    let mut query = query.clone();
    query.since = place.time;
    let mut stream = match driver.follow_own_logs(device, info, &query).await {
        Ok(stream) => Some(stream),
        Err(error) if error.kind() == ErrorKind::Unsupported => None,
        Err(error) => return Err(error),
    };
    let mut after = After::new(place);
    let mut progress = tokio::time::interval_at(started + PROGRESS_EVERY, PROGRESS_EVERY);
    let mut again = tokio::time::interval_at(started + RECHECK_EVERY, RECHECK_EVERY);
    // A slow reading is not made up for with readings back to back.
    again.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut polled = place.clone();
    loop {
        let next = async {
            match stream.as_mut() {
                Some(stream) => Next::Line(stream.next_line().await),
                None => {
                    tokio::time::sleep(LINE_POLL).await;
                    Next::Poll
                }
            }
        };
        let next = tokio::select! {
            next = next => next,
            _ = tokio::time::sleep_until(deadline) => return Ok(Ending::TimedOut),
            _ = hooks.cancelled() => return Ok(Ending::Cancelled),
            _ = progress.tick() => {
                if !(on.allowed)() {
                    return Ok(Ending::Cancelled);
                }
                hooks.report(started, wait.timeout(), held.taken());
                continue;
            }
            _ = again.tick() => {
                recheck.now(on, held.read()).await?;
                continue;
            }
        };
        let streamed = matches!(next, Next::Line(_));
        let messages = next_messages(on, next, &query, polled.time).await?;
        // Masked as they come, private key blocks followed across lines and calls.
        let memory = (on.key_blocks, on.device, &on.info.app);
        let read = MaskedRead::new(pieces(&messages), on.masker, Some(memory));
        let fresh = match streamed {
            true => fresh_pieces(on, read.pieces(), &mut after),
            false => fresh_polled(on, read.pieces(), &query, &mut polled),
        };
        // A line that comes after the task ended or the person blocked the app is not shown.
        if !fresh.is_empty() && !(on.allowed)() {
            return Ok(Ending::Cancelled);
        }
        recheck
            .before_taking(on, &fresh, held.read() + fresh.len())
            .await?;
        if held.take(&fresh, &wait.text) {
            return Ok(Ending::Matched);
        }
    }
}

/// The new lines of a streamed message, split one per line of text first (the cursor's lines
/// are the split ones), borrowed: only those held are copied.
fn fresh_pieces<'m>(on: &On<'_>, read: Vec<Piece<'m>>, after: &mut After) -> Vec<Piece<'m>> {
    on.selection
        .sift(read)
        .into_iter()
        .filter(|piece| after.is_new(piece))
        .collect()
}

/// The lines a re-read found after `polled` (split as [`fresh_pieces`] splits), and `polled`
/// moved after them.
fn fresh_polled<'m>(
    on: &On<'_>,
    read: Vec<Piece<'m>>,
    query: &LogQuery,
    polled: &mut Position,
) -> Vec<Piece<'m>> {
    let key = (on.selection.key().to_owned(), query.level);
    let (fresh, _) = polled.skip_seen(on.selection.sift(read), &key);
    *polled = polled.advanced(&fresh);
    fresh
}

/// The messages `next` brings: the stream's line, or the app's lines read again after `since`
/// (a driver that cannot stream).
async fn next_messages(
    on: &On<'_>,
    next: Next,
    query: &LogQuery,
    since: OffsetDateTime,
) -> phonelogs_driver::Result<Vec<LogLine>> {
    match next {
        Next::Line(None) => Err(phonelogs_driver::Error::Disconnected(
            "the phone's log stream ended while waiting".into(),
        )),
        Next::Line(Some(line)) => Ok(vec![line?]),
        Next::Poll => {
            let mut again = query.clone();
            again.since = since;
            again.count = usize::MAX;
            Ok(on.driver.own_logs(on.device, on.info, &again).await?.lines)
        }
    }
}

/// What a wait is about: the driver, the phone, the app, the wait and the caller's hooks.
#[derive(Clone, Copy)]
pub(crate) struct On<'a> {
    pub(crate) driver: &'a GuardedLogger,
    pub(crate) device: &'a DeviceId,
    pub(crate) info: &'a AppInfo,
    pub(crate) wait: &'a Wait,
    pub(crate) hooks: &'a LiveHooks,
    /// Whether the read is still allowed: checked every second, so a wait ends when its task
    /// ends or the person blocks the app while it waits.
    pub(crate) allowed: &'a (dyn Fn() -> bool + Send + Sync),
    /// The lines a wait keeps (`filter`, `exclude`, `tag`), judged on their masked text.
    pub(crate) selection: &'a phonelogs_view::select::Selection,
    /// The masker, `None` when the person turned masking off for the app.
    pub(crate) masker: Option<&'a phonelogs_view::mask::Masker>,
    /// The private key blocks seen in the app's lines, followed across the wait's lines.
    pub(crate) key_blocks: &'a phonelogs_view::masked::KeyBlocks,
}

enum Next {
    Line(Option<phonelogs_driver::Result<LogLine>>),
    Poll,
}

/// A report's identity, to tell a new report from one already there.
fn report_key(report: &CrashReport) -> (OffsetDateTime, Option<u32>, String, String) {
    (
        report.time,
        report.pid,
        report.kind.name().to_owned(),
        report.summary.clone(),
    )
}

/// Waits for a crash report of the app that `first` (the reports there at the start) does not
/// hold and `of_build` keeps, reading them again every second. Returns the last read and how.
pub(crate) async fn wait_for_report(
    on: &On<'_>,
    since: OffsetDateTime,
    (limit, of_build): (usize, &(dyn Fn(&CrashReport) -> bool + Sync)),
    first: CrashResult,
) -> phonelogs_driver::Result<(CrashResult, Ending)> {
    let On {
        driver,
        device,
        info,
        wait,
        hooks,
        ..
    } = *on;
    let started = Instant::now();
    let deadline = started + wait.timeout();
    let known: Vec<_> = first.reports.iter().map(report_key).collect();
    let mut last = first;
    let mut progress = tokio::time::interval_at(started + PROGRESS_EVERY, PROGRESS_EVERY);
    let mut poll = tokio::time::interval_at(started + REPORT_POLL, REPORT_POLL);
    loop {
        tokio::select! {
            _ = tokio::time::sleep_until(deadline) => return Ok((last, Ending::TimedOut)),
            _ = hooks.cancelled() => return Ok((last, Ending::Cancelled)),
            _ = progress.tick() => hooks.report(started, wait.timeout(), 0),
            _ = poll.tick() => {
                if !(on.allowed)() {
                    return Ok((last, Ending::Cancelled));
                }
                last = driver.own_crash_result(device, info, since, limit).await?;
                if last.reports.iter().any(|r| !known.contains(&report_key(r)) && of_build(r)) {
                    // A new report is shown only if the app is still what the call was
                    // decided on (a release build installed during the wait is asked about).
                    Recheck::confirm(on).await?;
                    return Ok((last, Ending::Matched));
                }
            }
        }
    }
}
