//! The place after the last line a task was shown of one app on one phone ([`Position`]), so
//! the next read (`since: "cursor:<value>"` or `since: "last"`, the gateway's cursors) returns
//! only what came after it.
//!
//! The place is the phone's time of the last line shown and the fingerprints of every line at
//! that same instant up to it, in order, so lines sharing a millisecond are neither repeated
//! nor skipped. It also keeps what the read learned of the phone ([`PhoneMark`]: boot id,
//! clock, oldest line still held), so a restart, a clock change or a wrapped buffer is said.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::time::Instant;

use phonelogs_driver::{LogLevel, LogLine, PhoneMark};
use time::OffsetDateTime;

use crate::masked::{Piece, ShownLine};

/// A clock that moved by more than this between two reads (beyond the time that passed on the
/// computer) is said to have changed.
const CLOCK_TOLERANCE_SECONDS: i64 = 2;

/// Where a task's reading of one app stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position {
    /// The phone's time of the last line shown, or the read's `since` when none was.
    pub time: OffsetDateTime,
    /// Fingerprints of the lines at exactly `time` up to and including the last shown, in
    /// the phone's order.
    pub seen: Vec<u64>,
    /// The filter and level of the read, so a read with others does not claim lost lines.
    pub query: (String, Option<LogLevel>),
    /// What the read learned of the phone.
    pub mark: Option<PhoneMark>,
    /// When the read was made, on the computer's monotonic clock.
    pub read_at: Instant,
}

/// A line's fingerprint: everything the phone said of it.
pub fn fingerprint(line: &LogLine) -> u64 {
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
pub trait Placed {
    /// The phone's time of the line.
    fn time(&self) -> OffsetDateTime;
    /// The line's fingerprint ([`fingerprint`]).
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
    pub fn after<L: Placed>(
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
    pub fn advanced<L: Placed>(&self, more: &[L]) -> Position {
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
    pub fn skip_seen<L: Placed>(
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
    pub fn marked(mut self, mark: Option<PhoneMark>, read_at: Instant) -> Position {
        if mark.is_some() {
            self.mark = mark;
        }
        self.read_at = read_at;
        self
    }

    /// What changed on the phone since this place, as `new` (a later read's mark) shows it.
    pub fn changes(&self, new: Option<&PhoneMark>) -> PhoneChange {
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
pub struct PhoneChange {
    /// The boot id differs: the phone restarted.
    pub rebooted: bool,
    /// The phone's clock moved by this many seconds beyond the time that passed.
    pub clock_moved: Option<i64>,
    /// The buffer's oldest line is newer than the place: lines before it may be lost.
    pub wrapped_after: Option<OffsetDateTime>,
}

/// Lines read after a place, one by one, skipping those at or before it: the stream replays
/// the lines of the place's instant, in the phone's order.
pub struct After {
    time: OffsetDateTime,
    seen: Vec<u64>,
    matched: usize,
}

impl After {
    /// Lines after `place`.
    pub fn new(place: &Position) -> After {
        After {
            time: place.time,
            seen: place.seen.clone(),
            matched: 0,
        }
    }

    /// Whether `line`, the next one read, is after the place.
    pub fn is_new(&mut self, line: &impl Placed) -> bool {
        if line.time() < self.time {
            return false;
        }
        if line.time() > self.time {
            return true;
        }
        if self.matched < self.seen.len() {
            if line.fingerprint() == self.seen[self.matched] {
                self.matched += 1;
                return false;
            }
            // Not the next line the cursor saw at its instant: those lines are no longer on
            // the phone, and this one and every later one at the instant are new.
            self.matched = self.seen.len();
        }
        true
    }
}

/// `time` down to its whole millisecond.
pub fn whole_ms(time: OffsetDateTime) -> OffsetDateTime {
    let nanos = time.nanosecond();
    time.replace_nanosecond(nanos - nanos % 1_000_000)
        .unwrap_or(time)
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
