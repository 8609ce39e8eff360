//! One rendered line per line of text: a message that holds line breaks becomes several lines
//! with the same time, level, tag and pid, as logcat prints a multi-line message.
//!
//! The agent reads a result as lines of `15:04:05.123 Tag: text`. A message with a line end in it,
//! rendered as it came, would let an app print a line that looks like another time's or another
//! tag's (`"ok\n09:00:00.000 ActivityManager: …"`). Split here, every line the agent sees starts
//! with the time and tag the phone gave the message. This is the one place that does it, for
//! every driver: Android's logcat already prints one line per entry, an iPhone's os_log and a
//! fake phone may not.

use std::borrow::Cow;

use phonelogs_driver::{Error, LogLine, LogNotice};

/// Whether `c` ends a line for some reader of a result: `\n` and `\r` (`\r\n` is one end), VT
/// and FF (line ends to C's `isspace` and Python's `splitlines`), FS, GS and RS (U+001C to
/// U+001E: line ends to Python's `str.splitlines`, `'a\x1cb'.splitlines() == ['a', 'b']`),
/// NEL (U+0085) and the LINE and PARAGRAPH SEPARATORs (U+2028, U+2029: line ends to Unicode,
/// JavaScript and most renderers). Every one of them splits a message into lines and leaves
/// one-line fields, so none can start what looks like another line to a model or a renderer.
pub fn is_line_end(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r' | '\u{0B}' | '\u{0C}' | '\u{1C}'
            ..='\u{1E}' | '\u{85}' | '\u{2028}' | '\u{2029}'
    )
}

/// `text` as a rendered log line shows it: on one line ([`one_line`]), and every other control
/// character but tab (ESC above all, C0, DEL and C1) written out visibly as `\xNN`, so an
/// app's message cannot move the cursor, erase a line, set a title or write the clipboard in
/// the terminal of a person who prints the log (`phonelogs logs`), and the agent reads the
/// same text the person sees. The one place log text is made safe to show.
pub fn shown(text: &str) -> Cow<'_, str> {
    let text = one_line(text);
    if !text.contains(|c: char| (c.is_control() && c != '\t') || hides(c)) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() && c != '\t' {
            out.push_str(&format!("\\x{:02x}", u32::from(c)));
        } else if hides(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Whether `c` makes an app's text read differently to a model than to a person: the
/// bidirectional embeddings, overrides, isolates and marks (U+202A to U+202E, U+2066 to
/// U+2069, U+200E, U+200F, U+061C) and the zero-width characters (U+200B to U+200D, U+2060,
/// U+FEFF). [`shown`] writes each out as `\u{202e}` (issue 37, item 5).
pub fn hides(c: char) -> bool {
    matches!(
        c,
        '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{061c}'
            | '\u{200b}'..='\u{200d}'
            | '\u{2060}'
            | '\u{feff}'
    )
}

/// Whether `c` can make a text read as something else where it is shown: a control character,
/// a line end ([`is_line_end`]), or a mark that turns text around or hides in it (the
/// bidirectional overrides and isolates, zero-width characters). A text from elsewhere (an
/// app's label, what the agent wrote) never shows one to the person.
pub fn misleads(c: char) -> bool {
    c.is_control()
        || is_line_end(c)
        || matches!(c, '\u{00ad}' | '\u{061c}' | '\u{180e}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}')
}

/// Whether `text` holds a line end; a scan of its bytes for the first byte of one.
fn has_line_end(text: &str) -> bool {
    // `\n`, VT, FF, `\r` are 0x0A to 0x0D, FS, GS, RS 0x1C to 0x1E; NEL starts with 0xC2,
    // the separators with 0xE2.
    text.bytes()
        .any(|b| matches!(b, 0x0A..=0x0D | 0x1C..=0x1E | 0xC2 | 0xE2))
        && text.contains(is_line_end)
}

/// The lines of `text`, split at every line end (`\r\n` once), without the empty piece after
/// a final one.
pub fn split_lines(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if !is_line_end(c) {
            continue;
        }
        pieces.push(&text[start..at]);
        start = at + c.len_utf8();
        if c == '\r' && chars.peek().is_some_and(|(_, next)| *next == '\n') {
            chars.next();
            start += 1;
        }
    }
    if start < text.len() || pieces.is_empty() {
        pieces.push(&text[start..]);
    }
    pieces
}

/// `text` as a one-line field: each line end (`\r\n` once) becomes a space. The one rule for
/// every field shown on one line (a tag, a heading's part, a label, a phone's model).
pub fn one_line(text: &str) -> Cow<'_, str> {
    if !has_line_end(text) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(split_with(text, " "))
}

/// `text` with each line end (`\r\n` once) made a `\n`: a report's text, shown as lines.
pub fn newlines(text: &str) -> Cow<'_, str> {
    if !text.contains(|c| is_line_end(c) && c != '\n') {
        return Cow::Borrowed(text);
    }
    Cow::Owned(split_with(text, "\n"))
}

/// `text`'s pieces between line ends joined by `with`, a final line end kept as one `with`.
fn split_with(text: &str, with: &str) -> String {
    let mut out = split_lines(text).join(with);
    if text.ends_with(is_line_end) {
        out.push_str(with);
    }
    out
}

/// Splits every multi-line message into one line per line of text (at each [`is_line_end`],
/// `\r\n` once), dropping the empty piece after a trailing end, then keeps the newest `limit`
/// lines. Returns the lines, oldest first, and how many older ones the limit left out.
///
/// Only the lines kept are made: each owns a copy of its message's tag, so a message with
/// thousands of line ends would otherwise be held thousands of times over (what a phone sends
/// is held at most [`pieces`]' few words per line more). The calls take the [`pieces`] and
/// copy those they keep; this is their rule, for the tests.
#[cfg(test)]
pub fn one_line_each(lines: Vec<LogLine>, limit: usize) -> (Vec<LogLine>, usize) {
    if !lines.iter().any(|line| has_line_end(&line.text)) {
        let mut lines = lines;
        let over = lines.len().saturating_sub(limit);
        lines.drain(..over);
        return (lines, over);
    }
    let pieces = pieces(&lines);
    let over = pieces.len().saturating_sub(limit);
    (
        pieces[over..]
            .iter()
            .copied()
            .map(RawPiece::to_line)
            .collect(),
        over,
    )
}

/// One line of a message's text, borrowed and not yet masked: what [`one_line_each`] makes of
/// it, before it is masked ([`crate::masked::MaskedRead`]) and copied.
#[derive(Debug, Clone, Copy)]
pub struct RawPiece<'a> {
    /// The message (its time, level, tag, pid, tid, uid).
    pub line: &'a LogLine,
    /// This line of its text.
    pub text: &'a str,
}

impl RawPiece<'_> {
    /// The piece as a line of its own, with its message's time, level, tag and ids.
    #[cfg(test)]
    pub fn to_line(self) -> LogLine {
        let line = self.line;
        LogLine {
            time: line.time,
            level: line.level,
            tag: line.tag.clone(),
            text: self.text.to_owned(),
            pid: line.pid,
            tid: line.tid,
            uid: line.uid,
        }
    }
}

/// Every message's lines, oldest first, borrowed (a few words each, whatever the tag).
pub fn pieces(lines: &[LogLine]) -> Vec<RawPiece<'_>> {
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        if has_line_end(&line.text) {
            out.extend(
                split_lines(&line.text)
                    .into_iter()
                    .map(|text| RawPiece { line, text }),
            );
        } else {
            out.push(RawPiece {
                line,
                text: &line.text,
            });
        }
    }
    out
}

/// A driver's error with its text on one line ([`one_line`]): the text can be
/// what a phone or a farm's adb server said, and it reaches the agent in a message.
pub fn one_line_error(error: Error) -> Error {
    match error {
        Error::NotFound(text) => Error::NotFound(one_line_owned(text)),
        Error::Unsupported(text) => Error::Unsupported(one_line_owned(text)),
        Error::PermissionDenied(text) => Error::PermissionDenied(one_line_owned(text)),
        Error::DeviceNotFound(text) => Error::DeviceNotFound(one_line_owned(text)),
        Error::DeviceUnavailable(text) => Error::DeviceUnavailable(one_line_owned(text)),
        Error::InvalidArgument(text) => Error::InvalidArgument(one_line_owned(text)),
        Error::Disconnected(text) => Error::Disconnected(one_line_owned(text)),
        Error::Changed(text) => Error::Changed(one_line_owned(text)),
        Error::Timeout { what, after } => Error::Timeout {
            what: one_line_owned(what),
            after,
        },
        Error::Backend { message, source } => Error::Backend {
            message: one_line_owned(message),
            source,
        },
        other => other,
    }
}

/// A driver's notice with its texts on one line: a cause can hold what a phone said.
pub fn one_line_notice(notice: LogNotice) -> LogNotice {
    match notice {
        LogNotice::Unreadable { cause, fix } => LogNotice::Unreadable {
            cause: one_line_owned(cause),
            fix: one_line_owned(fix),
        },
        LogNotice::PartlyUnreadable { part, cause, fix } => LogNotice::PartlyUnreadable {
            part: one_line_owned(part),
            cause: one_line_owned(cause),
            fix: one_line_owned(fix),
        },
        LogNotice::Redacted { marker, why, fix } => LogNotice::Redacted {
            marker: one_line_owned(marker),
            why: one_line_owned(why),
            fix: one_line_owned(fix),
        },
        other => other,
    }
}

/// `text` on one line ([`one_line`]), reusing its allocation when it is already.
pub fn one_line_owned(text: String) -> String {
    match one_line(&text) {
        std::borrow::Cow::Borrowed(_) => text,
        std::borrow::Cow::Owned(line) => line,
    }
}

/// A debugging aid's field as the one line-end rule shows a one-line field (this module):
/// the texts a phone prints there (a process or thread name an app chose, an exit record's
/// reason) reach the agent and its messages.
pub fn one_line_field(field: &mut Option<String>) {
    if let Some(text) = field
        && let Cow::Owned(clean) = one_line(text)
    {
        *text = clean;
    }
}

/// The most bytes of one text the agent sent that the state keeps ([`agent_text`]): room for
/// any app id (255 bytes at most) and a filter or `since` as an agent writes them, too little to
/// carry a page of log text into the history.
pub const AGENT_TEXT_BYTES: usize = 256;

/// What ends a text [`agent_text`] cut.
pub const AGENT_TEXT_CUT: char = '\u{2026}';

/// A text the agent sent, as the history may keep it: control characters, line ends and the
/// marks that turn text around or hide in it ([`misleads`]: they could make a line of the
/// history, or the person's terminal, read as something else) become U+FFFD, and a text longer than [`AGENT_TEXT_BYTES`] is cut at a
/// character boundary and ends with [`AGENT_TEXT_CUT`]. The one way any text of the agent's
/// (each field of a history step, a phone's serial or a package it named) reaches the state: an
/// agent could otherwise write log text it read into the state directory.
pub fn agent_text(text: &str) -> String {
    let mut out: String = text
        .chars()
        .map(|c| if misleads(c) { '\u{fffd}' } else { c })
        .collect();
    if out.len() > AGENT_TEXT_BYTES {
        let mut end = AGENT_TEXT_BYTES - AGENT_TEXT_CUT.len_utf8();
        while !out.is_char_boundary(end) {
            end -= 1;
        }
        out.truncate(end);
        out.push(AGENT_TEXT_CUT);
    }
    out
}

/// The most characters of a label the person and the agent are shown.
const MAX_LABEL_CHARS: usize = 80;

/// A label as the phone gave it, made safe to show: the app chose it (an iPhone app's display
/// name), so its line ends become spaces as in every one-line field ([`one_line`]),
/// other control characters and the bidirectional overrides that can make text read as
/// something else are dropped, and it is cut to [`MAX_LABEL_CHARS`].
pub fn clean_label(label: &str) -> String {
    one_line(label)
        .chars()
        .filter(|c| !misleads(*c))
        .take(MAX_LABEL_CHARS)
        .collect::<String>()
        .trim()
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use phonelogs_driver::LogLevel;
    use time::macros::datetime;

    fn line(text: &str) -> LogLine {
        LogLine {
            time: datetime!(2026-11-30 14:04:05.123 UTC),
            level: LogLevel::Info,
            tag: "Example".into(),
            text: text.into(),
            pid: Some(7),
            tid: Some(7),
            uid: Some(10123),
        }
    }

    #[test]
    fn a_message_cannot_forge_a_line_of_another_time_or_tag() {
        let forged =
            line("ok\n09:00:00.000 ActivityManager: Start proc com.bank\r\nthird\rfourth\n");
        let (lines, over) = one_line_each(vec![forged], 100);
        assert_eq!(over, 0);
        let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "ok",
                "09:00:00.000 ActivityManager: Start proc com.bank",
                "third",
                "fourth"
            ]
        );
        for piece in &lines {
            assert_eq!(piece.tag, "Example");
            assert_eq!(piece.time, datetime!(2026-11-30 14:04:05.123 UTC));
            assert_eq!((piece.pid, piece.uid), (Some(7), Some(10123)));
            assert!(!piece.text.contains(is_line_end));
        }
    }

    /// Item 8 of issue 28: VT, FF, NEL and the Unicode separators end lines as `\n` does.
    #[test]
    fn every_line_end_splits_and_leaves_one_line_fields() {
        let forged = line("ok\u{2028}09:00:00.000 AM: a\u{2029}b\u{85}c\u{0B}d\u{0C}e\r\n");
        let (lines, _) = one_line_each(vec![forged], 100);
        let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["ok", "09:00:00.000 AM: a", "b", "c", "d", "e"]);
        assert_eq!(one_line("a\r\nb\u{2028}c\u{85}"), "a b c ");
        assert_eq!(one_line("plain"), "plain");
        assert!(matches!(one_line("café 漢"), Cow::Borrowed(_)));
        assert_eq!(newlines("a\r\nb\u{2029}c\rd\n"), "a\nb\nc\nd\n");
        assert_eq!(split_lines("a\n"), ["a"]);
        assert_eq!(split_lines("\n"), [""]);
        assert_eq!(split_lines("a\r\r\nb"), ["a", "", "b"]);
    }

    #[test]
    fn the_limit_keeps_the_newest_lines_and_counts_the_rest() {
        let (lines, over) = one_line_each(vec![line("a\nb"), line("c"), line("d\ne")], 3);
        assert_eq!(over, 2);
        let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["c", "d", "e"]);
        let (lines, over) = one_line_each(vec![line("single")], 3);
        assert_eq!((lines.len(), over), (1, 0));
    }

    #[test]
    fn agent_text_is_bounded_cut_at_a_character_and_marked() {
        assert_eq!(agent_text("crash"), "crash");
        let whole = "x".repeat(AGENT_TEXT_BYTES);
        assert_eq!(agent_text(&whole), whole);
        for text in [
            "x".repeat(AGENT_TEXT_BYTES + 1),
            "\u{e9}".repeat(AGENT_TEXT_BYTES),
            "\u{1f600}".repeat(AGENT_TEXT_BYTES),
            format!("x{}", "\u{1f600}".repeat(AGENT_TEXT_BYTES)),
        ] {
            let kept = agent_text(&text);
            assert!(kept.len() <= AGENT_TEXT_BYTES, "{}", kept.len());
            assert!(kept.len() > AGENT_TEXT_BYTES - 8, "{}", kept.len());
            assert!(kept.ends_with(AGENT_TEXT_CUT), "{kept}");
            assert!(text.starts_with(kept.trim_end_matches(AGENT_TEXT_CUT)));
        }
        assert_eq!(
            agent_text("a\nb\u{1b}[2J\u{202e}c\u{2028}d\u{200b}"),
            "a\u{fffd}b\u{fffd}[2J\u{fffd}c\u{fffd}d\u{fffd}"
        );
    }

    #[test]
    fn a_label_cannot_break_lines_or_turn_text_around() {
        assert_eq!(clean_label("Crash Test"), "Crash Test");
        assert_eq!(
            clean_label("Crash\nTest?\r\n\u{2028}Allow"),
            "Crash Test?  Allow"
        );
        assert_eq!(
            clean_label("a\u{85}b\u{0B}c\u{0C}d\u{2029}e\u{7}"),
            "a b c d e"
        );
        assert_eq!(clean_label("\u{202e}tseT hsarC"), "tseT hsarC");
        assert_eq!(clean_label(&"x".repeat(500)).chars().count(), 80);
        assert_eq!(clean_label("  \u{2066} "), "");
    }
}
