//! Mask once, early: the lines a read brought become [`Piece`]s here, and only here, with
//! their tag and text masked ([`crate::mask`]) over the whole read in time order, before
//! anything is selected. Everything after (the cursor, `since`, `filter`/`exclude`/`tag`,
//! `wait_for`, `limit`, folding, rows, `context`, the one cut) takes `Piece`s or the
//! [`ShownLine`]s made of them, so no path can show or match a line's text that did not go
//! through the masker: a `Piece` cannot be built anywhere else (issue 37, item 1).
//!
//! A private key that an app logs one line at a time is a block across lines: the masker
//! follows it within a read, and [`KeyBlocks`] remembers, per phone and app, when each writer's
//! blocks began and ended, so a read that starts inside one (`since: "last"` after a
//! `wait_for` of `[redacted:private-key]`, a streaming wait's next line, a `limit` that keeps
//! only the block's last lines) masks its body lines too. It holds times and a writer's hash,
//! never text.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Mutex;

use phonelogs_driver::{AppId, DeviceId, LogLine};
use time::OffsetDateTime;

use crate::lines::RawPiece;
use crate::mask::{Masker, writer};

/// One line of a message's text as the agent may see it: its tag and text masked (unless the
/// person unmasked the app), borrowed. Built only by [`MaskedRead::pieces`].
#[derive(Debug, Clone, Copy)]
pub struct Piece<'a> {
    line: &'a LogLine,
    tag: &'a str,
    text: &'a str,
    masked: usize,
}

impl<'a> Piece<'a> {
    /// The message it is a line of (its time, level, pid, tid, uid; its raw tag and text are
    /// not to be shown: [`Piece::tag`] and [`Piece::text`] are).
    pub fn message(&self) -> &'a LogLine {
        self.line
    }

    /// Its masked tag.
    pub fn tag(&self) -> &'a str {
        self.tag
    }

    /// Its masked line of text.
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The piece as a line of its own, with its message's time, level and ids.
    pub fn to_line(self) -> ShownLine {
        let line = self.line;
        ShownLine {
            line: LogLine {
                time: line.time,
                level: line.level,
                tag: self.tag.to_owned(),
                text: self.text.to_owned(),
                pid: line.pid,
                tid: line.tid,
                uid: line.uid,
            },
            masked: self.masked,
        }
    }
}

/// A line as the agent may see it (its tag and text masked), and how many secrets were masked
/// in it. Made only of a [`Piece`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShownLine {
    line: LogLine,
    masked: usize,
}

impl ShownLine {
    /// The line, masked.
    pub fn line(&self) -> &LogLine {
        &self.line
    }

    /// How many secrets were masked in it.
    pub fn masked(&self) -> usize {
        self.masked
    }

    /// The line, masked.
    pub fn into_line(self) -> LogLine {
        self.line
    }

    /// The line with its text made from its masked text (a symbolicated frame: symbol names
    /// added to it), holding `masked` of its secrets.
    pub fn with_text(&self, text: String, masked: usize) -> ShownLine {
        ShownLine {
            line: LogLine {
                text,
                ..self.line.clone()
            },
            masked,
        }
    }
}

/// The lines of one read masked as one: the masked tags and texts the [`Piece`]s borrow.
pub struct MaskedRead<'a> {
    raw: Vec<RawPiece<'a>>,
    tags: Vec<Cow<'a, str>>,
    texts: Vec<Cow<'a, str>>,
    counts: Vec<usize>,
}

/// Which blocks to follow: the memory and the phone and app the lines are of.
pub type Memory<'m> = (&'m KeyBlocks, &'m DeviceId, &'m AppId);

impl<'a> MaskedRead<'a> {
    /// `raw` (oldest first) masked by `masker` (`None`: the person unmasked the app), private
    /// key blocks followed from what `memory` knows of them, and what these lines tell of
    /// blocks remembered there.
    pub fn new(
        raw: Vec<RawPiece<'a>>,
        masker: Option<&Masker>,
        memory: Option<Memory<'_>>,
    ) -> MaskedRead<'a> {
        let Some(masker) = masker else {
            let tags = raw
                .iter()
                .map(|p| Cow::Borrowed(p.line.tag.as_str()))
                .collect();
            let texts = raw.iter().map(|p| Cow::Borrowed(p.text)).collect();
            let counts = vec![0; raw.len()];
            return MaskedRead {
                raw,
                tags,
                texts,
                counts,
            };
        };
        let items: Vec<(u64, &'a str)> = raw.iter().map(|p| (writer(p.line), p.text)).collect();
        let open = match memory {
            Some((blocks, device, app)) => blocks.open_at(device, app, &raw),
            None => Vec::new(),
        };
        let masked = masker.lines_after(&items, &open);
        if let Some((blocks, device, app)) = memory {
            blocks.learn(device, app, &raw);
        }
        let mut tag_cache: HashMap<&'a str, (Cow<'a, str>, usize)> = HashMap::new();
        let mut tags = Vec::with_capacity(raw.len());
        let mut texts = Vec::with_capacity(raw.len());
        let mut counts = Vec::with_capacity(raw.len());
        for (piece, text) in raw.iter().zip(masked) {
            let tag = tag_cache.entry(piece.line.tag.as_str()).or_insert_with(|| {
                let tag = masker.line(piece.line.tag.as_str());
                (tag.text, tag.count)
            });
            tags.push(tag.0.clone());
            counts.push(text.count + tag.1);
            texts.push(text.text);
        }
        MaskedRead {
            raw,
            tags,
            texts,
            counts,
        }
    }

    /// The read's lines, masked, oldest first.
    pub fn pieces(&self) -> Vec<Piece<'_>> {
        self.raw
            .iter()
            .zip(&self.tags)
            .zip(&self.texts)
            .zip(&self.counts)
            .map(|(((raw, tag), text), &masked)| Piece {
                line: raw.line,
                tag,
                text,
                masked,
            })
            .collect()
    }
}

/// `lines` (oldest first) split one per line of text and masked as one read, private key
/// blocks followed within them: a result made of lines at hand ([`crate::present_lines`]).
pub fn shown_lines(lines: &[LogLine], masker: Option<&Masker>) -> Vec<ShownLine> {
    MaskedRead::new(crate::lines::pieces(lines), masker, None)
        .pieces()
        .into_iter()
        .map(Piece::to_line)
        .collect()
}

/// At most this many blocks are remembered per phone and app (the oldest go first).
const MOST_BLOCKS: usize = 64;

/// One private key block a writer logged: when it began and, once seen, ended.
#[derive(Debug, Clone, Copy)]
struct Block {
    writer: u64,
    began: OffsetDateTime,
    ended: Option<OffsetDateTime>,
}

/// The private key blocks seen in an app's lines, per phone and app: times and writers only.
#[derive(Debug, Default)]
pub struct KeyBlocks {
    blocks: Mutex<HashMap<(DeviceId, AppId), Vec<Block>>>,
}

impl KeyBlocks {
    /// The writers of `raw` inside a block remembered at the time of their first line here.
    fn open_at(&self, device: &DeviceId, app: &AppId, raw: &[RawPiece<'_>]) -> Vec<u64> {
        let Ok(blocks) = self.blocks.lock() else {
            return Vec::new();
        };
        let Some(known) = blocks.get(&(device.clone(), app.clone())) else {
            return Vec::new();
        };
        let mut first: Vec<(u64, OffsetDateTime)> = Vec::new();
        for piece in raw {
            let who = writer(piece.line);
            if !first.iter().any(|(w, _)| *w == who) {
                first.push((who, piece.line.time));
            }
        }
        first
            .into_iter()
            .filter(|(who, at)| {
                known.iter().any(|b| {
                    b.writer == *who && b.began <= *at && b.ended.is_none_or(|end| *at <= end)
                })
            })
            .map(|(who, _)| who)
            .collect()
    }

    /// Remembers the blocks `raw` shows beginning and ending.
    fn learn(&self, device: &DeviceId, app: &AppId, raw: &[RawPiece<'_>]) {
        let Ok(mut blocks) = self.blocks.lock() else {
            return;
        };
        let known = blocks.entry((device.clone(), app.clone())).or_default();
        for piece in raw {
            let (begins, ends) = crate::mask::pem_marks(piece.text);
            if !begins && !ends {
                continue;
            }
            let who = writer(piece.line);
            let at = piece.line.time;
            if begins && !ends && !known.iter().any(|b| b.writer == who && b.began == at) {
                known.push(Block {
                    writer: who,
                    began: at,
                    ended: None,
                });
            }
            if ends
                && let Some(open) = known
                    .iter_mut()
                    .rfind(|b| b.writer == who && b.began <= at && b.ended.is_none())
            {
                open.ended = Some(at);
            }
        }
        let over = known.len().saturating_sub(MOST_BLOCKS);
        known.drain(..over);
    }
}
