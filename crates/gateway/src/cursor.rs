//! Cursors: a task's book of places ([`Position`], the view's), so the next read
//! (`since: "cursor:<value>"` or `since: "last"`) returns only what came after the last line
//! shown.
//!
//! A cursor's value is an opaque random id; what it stands for stays in the task's session
//! (like an approval, which is a row bound to its task, agent, phone and app): a value from
//! another task or agent is not in this session's book, an altered value is not either, and a
//! value for another app or phone names them. Nothing of it is written to the state directory.

use std::collections::{HashMap, VecDeque};

use phonelogs_driver::{AppId, DeviceId};
use phonelogs_view::place::{PhoneChange, Position};
use time::{OffsetDateTime, UtcOffset};

use crate::{catalog, new_id};

/// How many cursors a task keeps; older ones are forgotten (then `since: "last"` still works).
const MAX_CURSORS: usize = 512;

/// The sentences the message gains for `change`, and for lines at the place itself that
/// were gone (`gone`).
pub(crate) fn change_sentences(
    change: &PhoneChange,
    place: OffsetDateTime,
    gone: bool,
    label: &str,
    local: UtcOffset,
) -> Vec<String> {
    let mut out = Vec::new();
    if change.rebooted {
        out.push(catalog::rebooted(label));
    }
    if let Some(seconds) = change.clock_moved {
        out.push(catalog::clock_moved(seconds));
    }
    if change.wrapped_after.is_some() {
        out.push(catalog::buffer_wrapped(&phonelogs_view::render::clock(
            place, local,
        )));
    } else if gone && !change.rebooted {
        out.push(catalog::cursor_lines_gone());
    }
    out
}

/// What a cursor value stands for.
#[derive(Debug, Clone)]
struct Entry {
    device: DeviceId,
    app: AppId,
    position: Position,
}

/// Why a cursor value was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CursorRefusal {
    /// Not one this task gave out.
    Unknown,
    /// One for another app or phone.
    Elsewhere { app: AppId, device: DeviceId },
}

/// A task's cursors.
#[derive(Debug, Default)]
pub(crate) struct CursorBook {
    entries: HashMap<String, Entry>,
    order: VecDeque<String>,
    last: HashMap<(DeviceId, AppId), Position>,
}

impl CursorBook {
    /// Keeps `position` as the last of `app` on `device` and returns a new cursor value for it.
    pub(crate) fn issue(&mut self, device: &DeviceId, app: &AppId, position: Position) -> String {
        let value = new_id("c");
        self.last
            .insert((device.clone(), app.clone()), position.clone());
        self.entries.insert(
            value.clone(),
            Entry {
                device: device.clone(),
                app: app.clone(),
                position,
            },
        );
        self.order.push_back(value.clone());
        while self.order.len() > MAX_CURSORS {
            if let Some(old) = self.order.pop_front() {
                self.entries.remove(&old);
            }
        }
        value
    }

    /// The place a cursor value stands for, if it is this task's and for this app and phone.
    pub(crate) fn open(
        &self,
        value: &str,
        device: &DeviceId,
        app: &AppId,
    ) -> Result<Position, CursorRefusal> {
        let entry = self
            .entries
            .get(value.trim())
            .ok_or(CursorRefusal::Unknown)?;
        if entry.device != *device || entry.app != *app {
            return Err(CursorRefusal::Elsewhere {
                app: entry.app.clone(),
                device: entry.device.clone(),
            });
        }
        Ok(entry.position.clone())
    }

    /// The place after the last line this task was shown of `app` on `device`.
    pub(crate) fn last(&self, device: &DeviceId, app: &AppId) -> Option<Position> {
        self.last.get(&(device.clone(), app.clone())).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use phonelogs_driver::{LogLevel, LogLine, PhoneMark};
    use time::macros::datetime;

    fn line(ms: i64, text: &str) -> LogLine {
        LogLine {
            time: datetime!(2026-11-30 10:00 UTC) + time::Duration::milliseconds(ms),
            level: LogLevel::Info,
            tag: "T".into(),
            text: text.into(),
            pid: Some(1),
            tid: Some(1),
            uid: Some(10123),
        }
    }

    const Q: (String, Option<LogLevel>) = (String::new(), None);

    #[test]
    fn cursors_are_bound_to_their_app_and_phone() {
        let mut book = CursorBook::default();
        let device = DeviceId::new("d");
        let app = AppId::new("a.b");
        let place = Position::after(&[line(1, "x")], line(0, "").time, Q, None);
        let value = book.issue(&device, &app, place.clone());
        assert_eq!(book.open(&value, &device, &app), Ok(place));
        assert_eq!(
            book.open(&value, &device, &AppId::new("c.d")),
            Err(CursorRefusal::Elsewhere {
                app: app.clone(),
                device: device.clone()
            })
        );
        let mut altered = value.clone();
        altered.push('0');
        assert_eq!(
            book.open(&altered, &device, &app),
            Err(CursorRefusal::Unknown)
        );
        assert!(book.last(&device, &app).is_some());
    }

    proptest::proptest! {
        /// Item 7 of issue 28: a place and a phone's clock at the `time` crate's limits, in any
        /// offset, with the computer in any offset: what changed is told, never a panic.
        #[test]
        fn changes_at_the_limits_of_time_never_panic(
            place_at_end in proptest::bool::ANY,
            now_at_end in proptest::bool::ANY,
            offsets in proptest::collection::vec(-86_399i32..86_400, 3),
        ) {
            let at = |end: bool, seconds: i32| {
                let local = if end {
                    time::PrimitiveDateTime::MAX
                } else {
                    time::PrimitiveDateTime::MIN
                };
                local.assume_offset(UtcOffset::from_whole_seconds(seconds).unwrap())
            };
            let place_time = at(place_at_end, offsets[0]);
            let now = at(now_at_end, offsets[1]);
            let local = UtcOffset::from_whole_seconds(offsets[2]).unwrap();
            let mark = PhoneMark {
                boot_id: Some("one".into()),
                phone_now: Some(now),
                oldest_kept: Some(now),
            };
            let mut place = Position::after::<LogLine>(&[], place_time, Q, Some(mark.clone()));
            place.seen = vec![1];
            let change = place.changes(Some(&mark));
            let _ = change_sentences(&change, place_time, true, "Example", local);
        }
    }
}
