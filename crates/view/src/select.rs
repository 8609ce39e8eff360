//! Which of the app's lines a `phone_logs` call keeps: `filter` (the tag or the text contains
//! it, or, written `/…/`, a regular expression matches one of them), `exclude` (the same
//! syntax; a line it matches goes) and `tag` (a list of exact tags). Matched against the
//! masked text ([`crate::mask`]), so a pattern cannot probe a secret.
//!
//! Patterns use Rust's `regex` (linear time, no backtracking), with limits on the pattern's
//! length and on the compiled program, so no pattern can take the gateway's time or memory.

use regex::{Regex, RegexBuilder};

use crate::ViewError;
use crate::masked::Piece;

/// The longest `filter` or `exclude` pattern.
pub const MAX_PATTERN_BYTES: usize = 1_000;
/// The most tags `tag` may list.
pub const MAX_TAGS: usize = 32;
/// The longest tag `tag` may list.
const MAX_TAG_BYTES: usize = 256;
/// The most memory one compiled pattern may take (its program, and each lazy DFA's cache).
const PATTERN_MEMORY: usize = 1 << 20;
/// How deeply a pattern may nest groups and repetitions.
const PATTERN_NESTING: u32 = 32;

/// A `filter` or `exclude`: text the tag or the text contains, or a regular expression.
#[derive(Debug, Clone)]
enum Pattern {
    Text(String),
    Regex(Regex),
}

impl Pattern {
    /// Reads `given`: `/…/` is a regular expression, anything else plain text. `Err` names the
    /// argument and why it is refused.
    fn parse(argument: &'static str, given: &str) -> Result<Pattern, ViewError> {
        if given.len() > MAX_PATTERN_BYTES {
            return Err(ViewError::PatternTooLong {
                argument,
                max: MAX_PATTERN_BYTES,
            });
        }
        let Some(inner) = given
            .strip_prefix('/')
            .and_then(|rest| rest.strip_suffix('/'))
            .filter(|_| given.len() >= 2)
        else {
            return Ok(Pattern::Text(given.to_owned()));
        };
        RegexBuilder::new(inner)
            .size_limit(PATTERN_MEMORY)
            .dfa_size_limit(PATTERN_MEMORY)
            .nest_limit(PATTERN_NESTING)
            .build()
            .map(Pattern::Regex)
            .map_err(|error| ViewError::Pattern {
                argument,
                given: given.to_owned(),
                reason: error.to_string(),
            })
    }

    fn matches(&self, tag: &str, text: &str) -> bool {
        match self {
            Pattern::Text(part) => holds(tag, text, part),
            Pattern::Regex(regex) => regex.is_match(tag) || regex.is_match(text),
        }
    }
}

/// What a call keeps of the app's lines, besides time and level (which the driver applies).
#[derive(Debug, Clone, Default)]
pub struct Selection {
    filter: Option<Pattern>,
    exclude: Option<Pattern>,
    tags: Vec<String>,
    /// The arguments as given, for cursors: a read with another selection does not claim lost
    /// lines (the gateway's cursors).
    key: String,
}

impl Selection {
    /// The selection a request asks for; empty strings and lists select nothing out.
    pub fn parse(
        filter: Option<&str>,
        exclude: Option<&str>,
        tags: Option<&[String]>,
    ) -> Result<Selection, ViewError> {
        fn present(value: Option<&str>) -> Option<&str> {
            value.filter(|v| !v.is_empty())
        }
        let filter = present(filter)
            .map(|f| Pattern::parse("filter", f))
            .transpose()?;
        let exclude = present(exclude)
            .map(|e| Pattern::parse("exclude", e))
            .transpose()?;
        let tags: Vec<String> = tags
            .unwrap_or_default()
            .iter()
            .filter(|t| !t.is_empty())
            .cloned()
            .collect();
        if tags.len() > MAX_TAGS {
            return Err(ViewError::TooManyTags {
                given: tags.len(),
                max: MAX_TAGS,
            });
        }
        if let Some(long) = tags.iter().find(|t| t.len() > MAX_TAG_BYTES) {
            return Err(ViewError::TagTooLong {
                given: long.len(),
                max: MAX_TAG_BYTES,
            });
        }
        let key = if filter.is_none() && exclude.is_none() && tags.is_empty() {
            String::new()
        } else {
            format!(
                "{:?}\u{0}{:?}\u{0}{:?}",
                filter_text(&filter),
                filter_text(&exclude),
                tags
            )
        };
        Ok(Selection {
            filter,
            exclude,
            tags,
            key,
        })
    }

    /// Whether it keeps every line.
    pub fn keeps_all(&self) -> bool {
        self.filter.is_none() && self.exclude.is_none() && self.tags.is_empty()
    }

    /// What tells this selection from another, for cursors.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Whether a line with this (masked) tag and text is kept.
    pub fn keeps(&self, tag: &str, text: &str) -> bool {
        (self.tags.is_empty() || self.tags.iter().any(|t| t == tag))
            && self.filter.as_ref().is_none_or(|f| f.matches(tag, text))
            && self.exclude.as_ref().is_none_or(|e| !e.matches(tag, text))
    }

    /// The lines (oldest first, each one line of text) this selection keeps, judged on their
    /// masked tag and text: a [`Piece`] holds nothing else.
    pub fn sift<'a>(&self, lines: Vec<Piece<'a>>) -> Vec<Piece<'a>> {
        if self.keeps_all() {
            return lines;
        }
        lines
            .into_iter()
            .filter(|piece| self.keeps(piece.tag(), piece.text()))
            .collect()
    }
}

fn filter_text(pattern: &Option<Pattern>) -> Option<&str> {
    match pattern {
        Some(Pattern::Text(text)) => Some(text),
        Some(Pattern::Regex(regex)) => Some(regex.as_str()),
        None => None,
    }
}

/// Whether a line with this tag and (masked) text holds `part`: in its tag or its text. The one
/// text match, of a plain `filter` or `exclude` and of `wait_for`.
fn holds(tag: &str, text: &str, part: &str) -> bool {
    tag.contains(part) || text.contains(part)
}

/// The first of `pieces` that holds the awaited text, matched as the agent sees the line
/// (masked: a wait cannot probe a secret either).
pub fn first_holding(pieces: &[Piece<'_>], text: &str) -> Option<usize> {
    pieces
        .iter()
        .position(|piece| holds(piece.tag(), piece.text(), text))
}

/// Which of the lines read is the awaited one: the first holding the text as the agent would
/// see it (masked, as a filter matches), or, waiting for any line (an empty text), the last.
pub fn awaited_at(pieces: &[Piece<'_>], text: &str) -> Option<usize> {
    match text.is_empty() {
        true => pieces.len().checked_sub(1),
        false => first_holding(pieces, text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::masked::MaskedRead;
    use phonelogs_driver::{LogLevel, LogLine};
    use time::macros::datetime;

    fn line(tag: &str, text: &str) -> LogLine {
        LogLine {
            time: datetime!(2026-11-30 10:00 UTC),
            level: LogLevel::Info,
            tag: tag.into(),
            text: text.into(),
            pid: Some(1),
            tid: Some(1),
            uid: Some(10_123),
        }
    }

    fn kept(selection: &Selection, lines: &[LogLine]) -> Vec<String> {
        let read = MaskedRead::new(
            crate::lines::pieces(lines),
            Some(crate::mask::masker()),
            None,
        );
        selection
            .sift(read.pieces())
            .into_iter()
            .map(|l| format!("{}: {}", l.tag(), l.text()))
            .collect()
    }

    fn lines() -> Vec<LogLine> {
        vec![
            line("Sync", "retrying in 5 s"),
            line("Net", "GET /feed 200 in 120 ms"),
            line("Net", "GET /feed 503 in 40 ms"),
            line("Choreographer", "Skipped 31 frames!"),
            line("Auth", "token=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.abc"),
        ]
    }

    #[test]
    fn a_filter_is_text_or_a_regular_expression() {
        let text = Selection::parse(Some("feed"), None, None).unwrap();
        assert_eq!(kept(&text, &lines()).len(), 2);
        let regex = Selection::parse(Some(r"/ 5\d\d /"), None, None).unwrap();
        assert_eq!(kept(&regex, &lines()), ["Net: GET /feed 503 in 40 ms"]);
        // A regular expression matches the tag too.
        let by_tag = Selection::parse(Some("/^Cho/"), None, None).unwrap();
        assert_eq!(
            kept(&by_tag, &lines()),
            ["Choreographer: Skipped 31 frames!"]
        );
        // A lone slash is text.
        assert_eq!(
            kept(&Selection::parse(Some("/"), None, None).unwrap(), &lines()).len(),
            2
        );
    }

    #[test]
    fn exclude_drops_and_tag_keeps_exact_tags() {
        let selection = Selection::parse(None, Some("/Choreographer|Sync/"), None).unwrap();
        assert_eq!(kept(&selection, &lines()).len(), 3);
        let tags = vec!["Net".to_owned(), "Sync".to_owned()];
        let selection = Selection::parse(Some("GET"), Some("200"), Some(&tags)).unwrap();
        assert_eq!(kept(&selection, &lines()), ["Net: GET /feed 503 in 40 ms"]);
        // Exact: a tag that only contains one listed is not kept.
        let selection = Selection::parse(None, None, Some(&["Ne".to_owned()])).unwrap();
        assert!(kept(&selection, &lines()).is_empty());
    }

    #[test]
    fn a_pattern_cannot_probe_a_masked_secret() {
        for probe in ["eyJhbGci", "/token=ey/", "/eyJ[a-z]/"] {
            let selection = Selection::parse(Some(probe), None, None).unwrap();
            assert!(kept(&selection, &lines()).is_empty(), "{probe}");
        }
        // It matches what the agent would see.
        let selection = Selection::parse(Some("[redacted:jwt]"), None, None).unwrap();
        assert_eq!(kept(&selection, &lines()).len(), 1);
        // The line kept is the line masked.
        assert_eq!(kept(&selection, &lines()), ["Auth: token=[redacted:jwt]"]);
        // An exclusion cannot tell a secret's shape either.
        let selection = Selection::parse(None, Some("eyJhbGci"), None).unwrap();
        assert_eq!(kept(&selection, &lines()).len(), 5);
    }

    /// Issue 37, item 4: a tag is masked like the text, and a filter or a `tag` on a piece of
    /// a masked key in it matches nothing.
    #[test]
    fn a_tag_is_masked_and_cannot_be_probed() {
        let secret_tag = vec![line("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "paid")];
        for probe in ["sk_live", "/4eC39/", "T1zdp7dc"] {
            let selection = Selection::parse(Some(probe), None, None).unwrap();
            assert!(kept(&selection, &secret_tag).is_empty(), "{probe}");
        }
        let all = Selection::parse(Some("paid"), None, None).unwrap();
        assert_eq!(
            kept(&all, &secret_tag),
            ["[redacted:stripe-access-token]: paid"]
        );
        let exact = ["sk_live_4eC39HqLyjWDarjtT1zdp7dc".to_owned()];
        let selection = Selection::parse(None, None, Some(&exact)).unwrap();
        assert!(kept(&selection, &secret_tag).is_empty());
    }

    #[test]
    fn bad_and_oversized_patterns_are_refused_with_the_reason() {
        let error = Selection::parse(Some("/(unclosed/"), None, None)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("filter") && error.contains("(unclosed"),
            "{error}"
        );
        let error = Selection::parse(None, Some("/a{1000}{1000}/"), None)
            .unwrap_err()
            .to_string();
        assert!(error.contains("exclude"), "{error}");
        let long = format!("/{}/", "a".repeat(MAX_PATTERN_BYTES));
        assert!(Selection::parse(Some(&long), None, None).is_err());
        let many: Vec<String> = (0..=MAX_TAGS).map(|i| format!("T{i}")).collect();
        assert!(Selection::parse(None, None, Some(&many)).is_err());
        assert!(Selection::parse(None, None, Some(&["x".repeat(300)])).is_err());
    }

    #[test]
    fn empty_arguments_select_everything_and_keys_tell_selections_apart() {
        let all = Selection::parse(Some(""), Some(""), Some(&[String::new()])).unwrap();
        assert!(all.keeps_all());
        let a = Selection::parse(Some("x"), None, None).unwrap();
        let b = Selection::parse(None, Some("x"), None).unwrap();
        assert_ne!(a.key(), b.key());
        assert_eq!(all.key(), Selection::default().key());
    }
}
