//! The lines a call holds to show while it waits for a line: the newest of them up to its
//! limit, and a count of those let go.

use crate::masked::{Piece, ShownLine};
use crate::select::first_holding;

/// The lines a call holds to show: the newest `keep` (the call's limit) of those it read and
/// its wait took, and how many older ones it let go, so a wait on a chatty app holds no more
/// than it can show and the result's count of lines left out stays true.
pub struct Held {
    lines: Vec<ShownLine>,
    keep: usize,
    /// How many lines the call read before the wait.
    before: usize,
    /// How many lines the wait took (those let go included).
    taken: usize,
    /// How many lines were let go (older than the newest `keep`).
    dropped: usize,
}

impl Held {
    /// The lines a call read (at most `keep` of them are held), to wait after.
    pub fn new(lines: Vec<ShownLine>, keep: usize) -> Held {
        let mut held = Held {
            before: lines.len(),
            lines,
            keep: keep.max(1),
            taken: 0,
            dropped: 0,
        };
        held.trim();
        held
    }

    /// Takes `fresh` lines up to the first that holds `text` as the agent sees it (masked),
    /// `true` when one does; only the newest `keep` of them are made into lines.
    pub fn take(&mut self, fresh: &[Piece<'_>], text: &str) -> bool {
        let matched = first_holding(fresh, text);
        let upto = matched.map_or(fresh.len(), |at| at + 1);
        let from = upto.saturating_sub(self.keep);
        self.taken += upto;
        self.dropped += from;
        self.lines
            .extend(fresh[from..upto].iter().copied().map(Piece::to_line));
        // Trimmed in batches: at most twice `keep` lines are ever held.
        if self.lines.len() >= 2 * self.keep {
            self.trim();
        }
        matched.is_some()
    }

    fn trim(&mut self) {
        let over = self.lines.len().saturating_sub(self.keep);
        self.lines.drain(..over);
        self.dropped += over;
    }

    /// The lines held, oldest first.
    pub fn lines(&self) -> &[ShownLine] {
        &self.lines
    }

    /// How many lines the wait took (those let go included).
    pub fn taken(&self) -> usize {
        self.taken
    }

    /// How many lines the call has read.
    pub fn read(&self) -> usize {
        self.before + self.taken
    }

    /// The newest `keep` lines, how many older ones were let go, and the lines the wait took
    /// that are among them.
    pub fn finish(mut self) -> (Vec<ShownLine>, usize, usize) {
        self.trim();
        let taken = self.taken.min(self.lines.len());
        (self.lines, self.dropped, taken)
    }
}
