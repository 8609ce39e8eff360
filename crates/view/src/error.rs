//! What the view refuses, typed: the gateway words each for the agent (its catalog), so the
//! view holds no sentence an agent reads.

/// An argument the view cannot read: a `since`, or a `filter`, `exclude` or `tag` of a
/// selection ([`crate::select::Selection::parse`], [`crate::since::parse_since`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ViewError {
    /// `since` is neither a time, a date and time, a time of day nor a duration back.
    #[error("since {given:?} is not a time")]
    Since {
        /// The `since` as given (trimmed).
        given: String,
    },
    /// A `filter` or `exclude` pattern longer than [`crate::MAX_PATTERN_BYTES`].
    #[error("{argument} is longer than {max} bytes")]
    PatternTooLong {
        /// `"filter"` or `"exclude"`.
        argument: &'static str,
        /// The longest pattern accepted.
        max: usize,
    },
    /// A `/…/` pattern that is not a regular expression the view accepts.
    #[error("{argument} {given:?} is not a regular expression: {reason}")]
    Pattern {
        /// `"filter"` or `"exclude"`.
        argument: &'static str,
        /// The pattern as given, slashes included.
        given: String,
        /// Why the regular expression engine refused it.
        reason: String,
    },
    /// A `tag` list with more than [`crate::MAX_TAGS`] tags.
    #[error("tag lists {given} tags, more than {max}")]
    TooManyTags {
        /// How many (non-empty) tags the list names.
        given: usize,
        /// The most accepted.
        max: usize,
    },
    /// A tag in `tag` that is too long.
    #[error("a tag in tag is {given} bytes long, more than {max}")]
    TagTooLong {
        /// The tag's length in bytes.
        given: usize,
        /// The longest accepted.
        max: usize,
    },
}
