//! Cursors: the place after the last line a task was shown of one app on one phone, so the
//! next read (`since: "cursor:<value>"` or `since: "last"`) returns only what came after it.
//!
//! A cursor's value is an opaque random id; what it stands for stays in the task's session
//! (like an approval, which is a row bound to its task, agent, phone and app): a value from
//! another task or agent is not in this session's book, an altered value is not either, and a
//! value for another app or phone names them. Nothing of it is written to the state directory.
//!
//! The place is the phone's time of the last line shown and the fingerprints of every line at
//! that same instant up to it, in order, so lines sharing a millisecond are neither repeated
//! nor skipped. It also keeps what the read learned of the phone ([`PhoneMark`]: boot id,
//! clock, oldest line still held), so a restart, a clock change or a wrapped buffer is said.

use std::collections::{HashMap, VecDeque};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::time::Instant;

use phonelogs_driver::{AppId, DeviceId, LogLevel, LogLine, PhoneMark};
use time::{OffsetDateTime, UtcOffset};

use crate::masked::{Piece, ShownLine};
use crate::{catalog, new_id};

/// How many cursors a task keeps; older ones are forgotten (then `since: "last"` still works).
const MAX_CURSORS: usize = 512;

/// A clock that moved by more than this between two reads (beyond the time that passed on the
/// computer) is said to have changed.
const CLOCK_TOLERANCE_SECONDS: i64 = 2;

/// Where a task's reading of one app stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Position {
    /// The phone's time of the last line shown, or the read's `since` when none was.
    pub(crate) time: OffsetDateTime,
    /// Fingerprints of the lines at exactly `time` up to and including the last shown, in
    /// the phone's order.
    pub(crate) seen: Vec<u64>,
    /// The filter and level of the read, so a read with others does not claim lost lines.
    pub(crate) query: (String, Option<LogLevel>),
    /// What the read learned of the phone.
    pub(crate) mark: Option<PhoneMark>,
    /// When the read was made, on the computer's monotonic clock.
    pub(crate) read_at: Instant,
}

/// A line's fingerprint: everything the phone said of it.
pub(crate) fn fingerprint(line: &LogLine) -> u64 {
    fingerprint_of(line, &line.tag, &line.text)
}

/// The fingerprint `line` would have with `tag` and `text` (one line of its text, as split,
/// both masked as shown).
fn fingerprint_of(line: &LogLine, tag: &str, text: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    (
        line.time, line.level, tag, text, line.pid, line.tid, line.uid,
    )
        .hash(&mut hasher);
    hasher.finish()
}

/// A line as a place sees it: its time and fingerprint. A line, or one line of a message's
/// text not yet copied ([`Piece`]), which has the fingerprint the line made of it will have.
pub(crate) trait Placed {
    fn time(&self) -> OffsetDateTime;
    fn fingerprint(&self) -> u64;
}

impl Placed for LogLine {
    fn time(&self) -> OffsetDateTime {
        self.time
    }
    fn fingerprint(&self) -> u64 {
        fingerprint(self)
    }
}

impl Placed for Piece<'_> {
    fn time(&self) -> OffsetDateTime {
        self.message().time
    }
    fn fingerprint(&self) -> u64 {
        fingerprint_of(self.message(), self.tag(), self.text())
    }
}

impl Placed for ShownLine {
    fn time(&self) -> OffsetDateTime {
        self.line().time
    }
    fn fingerprint(&self) -> u64 {
        fingerprint(self.line())
    }
}

impl Position {
    /// The place after `lines` (oldest first, what the read returned, the last one shown), or
    /// `since` with nothing seen when there were none.
    pub(crate) fn after<L: Placed>(
        lines: &[L],
        since: OffsetDateTime,
        query: (String, Option<LogLevel>),
        mark: Option<PhoneMark>,
    ) -> Position {
        let (time, seen) = match lines.last() {
            Some(last) => (
                last.time(),
                lines
                    .iter()
                    .filter(|l| l.time() == last.time())
                    .map(Placed::fingerprint)
                    .collect(),
            ),
            None => (since, Vec::new()),
        };
        Position {
            time,
            seen,
            query,
            mark,
            read_at: Instant::now(),
        }
    }

    /// The place after `more` lines that followed this one (oldest first).
    pub(crate) fn advanced<L: Placed>(&self, more: &[L]) -> Position {
        let Some(last) = more.last() else {
            return self.clone();
        };
        let mut seen: Vec<u64> = if last.time() == self.time {
            self.seen.clone()
        } else {
            Vec::new()
        };
        seen.extend(
            more.iter()
                .filter(|l| l.time() == last.time())
                .map(Placed::fingerprint),
        );
        Position {
            time: last.time(),
            seen,
            query: self.query.clone(),
            mark: self.mark.clone(),
            read_at: self.read_at,
        }
    }

    /// Drops from `lines` (oldest first, read from `self.time` on) those at or before this
    /// place. Returns the lines after it, and whether lines at the place itself were gone (the
    /// buffer wrapped within that instant, so some may be lost).
    pub(crate) fn skip_seen<L: Placed>(
        &self,
        lines: Vec<L>,
        query_key: &(String, Option<LogLevel>),
    ) -> (Vec<L>, bool) {
        let same_query = *query_key == self.query;
        let at_place: Vec<usize> = lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.time() == self.time)
            .map(|(i, _)| i)
            .collect();
        let mut drop = vec![false; lines.len()];
        let mut gone = false;
        if same_query {
            // The seen lines appear in the same order among the lines at that instant, perhaps
            // after older ones the limit had left out: everything up to the last of them is
            // before the place.
            let mut matched = 0usize;
            let mut cut_at: Option<usize> = None;
            for &index in &at_place {
                if matched < self.seen.len() && lines[index].fingerprint() == self.seen[matched] {
                    matched += 1;
                    cut_at = Some(index);
                }
            }
            if let Some(cut_at) = cut_at {
                for &index in at_place.iter().filter(|&&i| i <= cut_at) {
                    drop[index] = true;
                }
            }
            gone = matched < self.seen.len();
        } else {
            // Another filter or level: the lines already seen at that instant are dropped by
            // their fingerprints, each once.
            let mut left = self.seen.clone();
            for &index in &at_place {
                let print = lines[index].fingerprint();
                if let Some(found) = left.iter().position(|p| *p == print) {
                    left.remove(found);
                    drop[index] = true;
                }
            }
        }
        let kept = lines
            .into_iter()
            .zip(drop)
            .filter(|(line, dropped)| !dropped && line.time() >= self.time)
            .map(|(line, _)| line)
            .collect();
        (kept, gone)
    }

    /// This place with what the read learned of the phone, and when it was made.
    pub(crate) fn marked(mut self, mark: Option<PhoneMark>, read_at: Instant) -> Position {
        if mark.is_some() {
            self.mark = mark;
        }
        self.read_at = read_at;
        self
    }

    /// What changed on the phone since this place, as `new` (a later read's mark) shows it.
    pub(crate) fn changes(&self, new: Option<&PhoneMark>) -> PhoneChange {
        let (Some(old), Some(new)) = (self.mark.as_ref(), new) else {
            return PhoneChange::default();
        };
        let rebooted = matches!((&old.boot_id, &new.boot_id), (Some(a), Some(b)) if a != b);
        let clock_moved = match (old.phone_now, new.phone_now) {
            (Some(before), Some(now)) if !rebooted => {
                let passed = i64::try_from(self.read_at.elapsed().as_secs()).unwrap_or(i64::MAX);
                let moved = (now - before).whole_seconds().saturating_sub(passed);
                (moved.abs() > CLOCK_TOLERANCE_SECONDS).then_some(moved)
            }
            _ => None,
        };
        // Only a place that was shown lines can tell: the buffer held them then, and its oldest
        // line is now newer. (An empty buffer that filled later is no loss.)
        let wrapped_after = new
            .oldest_kept
            .filter(|oldest| *oldest > self.time && !rebooted && !self.seen.is_empty());
        PhoneChange {
            rebooted,
            clock_moved,
            wrapped_after,
        }
    }
}

/// What a later read found changed on the phone since a place.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct PhoneChange {
    /// The boot id differs: the phone restarted.
    pub(crate) rebooted: bool,
    /// The phone's clock moved by this many seconds beyond the time that passed.
    pub(crate) clock_moved: Option<i64>,
    /// The buffer's oldest line is newer than the place: lines before it may be lost.
    pub(crate) wrapped_after: Option<OffsetDateTime>,
}

impl PhoneChange {
    /// The sentences the message gains for these changes, and for lines at the place itself
    /// that were gone (`gone`).
    pub(crate) fn sentences(
        &self,
        place: OffsetDateTime,
        gone: bool,
        label: &str,
        local: UtcOffset,
    ) -> Vec<String> {
        let mut out = Vec::new();
        if self.rebooted {
            out.push(catalog::rebooted(label));
        }
        if let Some(seconds) = self.clock_moved {
            out.push(catalog::clock_moved(seconds));
        }
        if self.wrapped_after.is_some() {
            out.push(catalog::buffer_wrapped(&crate::render::clock(place, local)));
        } else if gone && !self.rebooted {
            out.push(catalog::cursor_lines_gone());
        }
        out
    }
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
    fn lines_sharing_a_millisecond_are_neither_repeated_nor_skipped() {
        let first = vec![line(0, "a"), line(5, "b"), line(5, "b")];
        let place = Position::after(&first, first[0].time, Q, None);
        let next = vec![line(5, "b"), line(5, "b"), line(5, "b"), line(6, "c")];
        let (kept, gone) = place.skip_seen(next, &Q);
        assert_eq!(kept, vec![line(5, "b"), line(6, "c")]);
        assert!(!gone);
    }

    #[test]
    fn lines_the_limit_left_out_at_the_place_stay_before_it() {
        // The read showed only the last of three lines at 5 ms.
        let place = Position::after(&[line(5, "z")], line(0, "").time, Q, None);
        let next = vec![line(5, "x"), line(5, "y"), line(5, "z"), line(5, "new")];
        let (kept, _) = place.skip_seen(next, &Q);
        assert_eq!(kept, vec![line(5, "new")]);
    }

    #[test]
    fn seen_lines_that_vanished_are_said() {
        let place = Position::after(&[line(5, "z")], line(0, "").time, Q, None);
        let (kept, gone) = place.skip_seen(vec![line(9, "later")], &Q);
        assert_eq!(kept, vec![line(9, "later")]);
        assert!(gone);
    }

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
            let _ = change.sentences(place_time, true, "Example", local);
        }
    }

    #[test]
    fn a_new_boot_id_and_a_moved_clock_are_noticed() {
        let mark = |boot: &str, now: OffsetDateTime| PhoneMark {
            boot_id: Some(boot.into()),
            phone_now: Some(now),
            oldest_kept: None,
        };
        let t = datetime!(2026-11-30 10:00 UTC);
        let mut place = Position::after::<LogLine>(&[], t, Q, Some(mark("one", t)));
        place.seen = vec![1];
        assert!(place.changes(Some(&mark("two", t))).rebooted);
        let same = place.changes(Some(&mark("one", t)));
        assert_eq!(same, PhoneChange::default());
        let moved = place.changes(Some(&mark("one", t - time::Duration::hours(1))));
        assert_eq!(moved.clock_moved, Some(-3600));
        let wrapped = place.changes(Some(&PhoneMark {
            oldest_kept: Some(t + time::Duration::seconds(5)),
            ..mark("one", t)
        }));
        assert_eq!(wrapped.wrapped_after, Some(t + time::Duration::seconds(5)));
    }
}
