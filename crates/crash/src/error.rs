//! The errors of this crate.

/// The errors of this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input is none of the formats this crate reads (or not the one asked for).
    #[error("not a recognised format: {0}")]
    UnknownFormat(String),
    /// The input is of a known format but too damaged to yield anything.
    #[error("damaged input: {0}")]
    Damaged(String),
}
