//! The fake phone's live side: every line in the order it was added (so a stream returns new
//! lines as they come), the boot id, the clock, a buffer that wraps, and the open streams.

use std::collections::VecDeque;

use async_trait::async_trait;
use phonelogs_driver::{AppId, DeviceId, Error, LineStream, LogLine, LogQuery, PhoneMark, Result};
use time::{Duration, OffsetDateTime};

use crate::{FakeDevice, FakePhone, State};

/// A fake device's live state.
#[derive(Debug, Default)]
pub(crate) struct LiveDevice {
    /// The newest lines, in the order they were added (for streams), at most
    /// [`JOURNAL_LINES`].
    journal: VecDeque<(Option<AppId>, LogLine)>,
    /// How many lines the journal forgot from its front.
    journal_base: usize,
    /// How many times the device restarted.
    boot: u64,
    /// How far the device's clock is from the computer's.
    clock_offset: Duration,
    /// At most this many lines are kept (the oldest go), like a logcat buffer.
    buffer_limit: Option<usize>,
    /// Whether the buffer dropped lines.
    wrapped: bool,
    /// How many streams are open.
    pub(crate) streams: usize,
}

/// How many lines the journal keeps for streams.
const JOURNAL_LINES: usize = 100_000;

impl LiveDevice {
    /// Drops the oldest lines beyond the buffer's limit.
    pub(crate) fn wrap(&mut self, lines: &mut Vec<(Option<AppId>, LogLine)>) {
        if let Some(limit) = self.buffer_limit
            && lines.len() > limit
        {
            lines.drain(..lines.len() - limit);
            self.wrapped = true;
        }
    }

    /// Notes a line added, for the streams.
    pub(crate) fn journal(&mut self, owner: Option<AppId>, line: LogLine) {
        self.journal.push_back((owner, line));
        if self.journal.len() > JOURNAL_LINES {
            self.journal.pop_front();
            self.journal_base += 1;
        }
    }

    /// The index the next line added will have.
    fn journal_end(&self) -> usize {
        self.journal_base + self.journal.len()
    }

    fn journal_at(&self, index: usize) -> Option<&(Option<AppId>, LogLine)> {
        self.journal.get(index.checked_sub(self.journal_base)?)
    }

    /// What a read learns of the device: its boot id, its clock, the oldest line it holds once
    /// its buffer wrapped.
    pub(crate) fn mark(&self, lines: &[(Option<AppId>, LogLine)]) -> PhoneMark {
        PhoneMark {
            boot_id: Some(format!("fake-boot-{}", self.boot)),
            phone_now: Some(OffsetDateTime::now_utc() + self.clock_offset),
            oldest_kept: if self.wrapped {
                lines.first().map(|(_, line)| line.time)
            } else {
                None
            },
        }
    }
}

impl FakePhone {
    /// Restarts a device: its boot id changes, its lines are gone, open streams end.
    pub fn reboot(&self, device: &DeviceId) {
        let mut state = self.lock();
        if let Some(entry) = state.devices.get_mut(device) {
            entry.live.boot += 1;
            entry.live.wrapped = false;
            entry.lines.clear();
        }
        state.added.notify_waiters();
    }

    /// Sets how far the device's clock is from the computer's (a clock change).
    pub fn set_clock_offset(&self, device: &DeviceId, offset: Duration) {
        if let Some(entry) = self.lock().devices.get_mut(device) {
            entry.live.clock_offset = offset;
        }
    }

    /// Keeps at most `limit` lines on the device (the oldest go), like a logcat buffer.
    pub fn set_buffer_limit(&self, device: &DeviceId, limit: usize) {
        let mut state = self.lock();
        if let Some(entry) = state.devices.get_mut(device) {
            entry.live.buffer_limit = Some(limit);
            let FakeDevice { lines, live, .. } = entry;
            live.wrap(lines);
        }
    }

    /// How many streams ([`phonelogs_driver::AppLogger::follow_app_logs`]) are open on the
    /// device now.
    pub fn open_streams(&self, device: &DeviceId) -> usize {
        self.lock()
            .devices
            .get(device)
            .map_or(0, |entry| entry.live.streams)
    }
}

/// A stream of one app's lines on the fake phone.
pub(crate) struct FakeStream {
    phone: FakePhone,
    device: DeviceId,
    app: AppId,
    query: LogQuery,
    /// Lines there when it opened, not yet returned.
    queue: VecDeque<LogLine>,
    /// The next journal entry to look at.
    next: usize,
    boot: u64,
}

impl FakeStream {
    /// Opens a stream on `entry` (counted until it is dropped): what is there from
    /// `query.since` on, then each line added.
    pub(crate) fn open(
        phone: FakePhone,
        device: DeviceId,
        app: AppId,
        query: LogQuery,
        entry: &FakeDevice,
        state: &State,
    ) -> FakeStream {
        let queue = entry
            .lines
            .iter()
            .filter(|(owner, _)| state.ignore_uid_filter || owner.as_ref() == Some(&app))
            .map(|(_, line)| line)
            .filter(|line| query.matches(line))
            .cloned()
            .collect();
        FakeStream {
            next: entry.live.journal_end(),
            boot: entry.live.boot,
            phone,
            device,
            app,
            query,
            queue,
        }
    }

    /// The next new line of the app, if one was added; `Err` when the device restarted or
    /// went away.
    fn take(&mut self) -> std::result::Result<Option<LogLine>, Error> {
        let state = self.phone.lock();
        let Some(entry) = state.devices.get(&self.device) else {
            return Err(Error::Disconnected("the fake device went away".into()));
        };
        if entry.live.boot != self.boot {
            return Err(Error::Disconnected("the fake device restarted".into()));
        }
        self.next = self.next.max(entry.live.journal_base);
        while let Some((owner, line)) = entry.live.journal_at(self.next) {
            self.next += 1;
            let ours = state.ignore_uid_filter || owner.as_ref() == Some(&self.app);
            if ours && self.query.matches(line) {
                return Ok(Some(line.clone()));
            }
        }
        Ok(None)
    }
}

#[async_trait]
impl LineStream for FakeStream {
    async fn next_line(&mut self) -> Option<Result<LogLine>> {
        if let Some(line) = self.queue.pop_front() {
            return Some(Ok(line));
        }
        loop {
            let added = self.phone.lock().added.clone();
            let notified = added.notified();
            tokio::pin!(notified);
            // Registered before looking, so a line added in between still wakes it.
            notified.as_mut().enable();
            match self.take() {
                Ok(Some(line)) => return Some(Ok(line)),
                Ok(None) => {}
                Err(Error::Disconnected(_)) => return None,
                Err(error) => return Some(Err(error)),
            }
            notified.await;
        }
    }
}

impl Drop for FakeStream {
    fn drop(&mut self) {
        if let Some(entry) = self.phone.lock().devices.get_mut(&self.device) {
            entry.live.streams = entry.live.streams.saturating_sub(1);
        }
    }
}
