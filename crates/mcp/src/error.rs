//! The one error type of the MCP frontend.

/// What can go wrong in the MCP frontend itself (the gateway's own failures become tool results,
/// not errors).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The operating system gave no randomness for the state-sealing secret.
    #[error("no randomness for the request-state secret: {0}")]
    Random(String),
    /// A `requestState` could not be sealed, or an echoed one failed verification.
    #[error("the request state is not valid: {0}")]
    Seal(String),
    /// The client's answer to the approval question could not be read.
    #[error("the answer to the approval question is not valid: {0}")]
    BadAnswer(String),
    /// The skill given to serve (`SKILL.md`) could not be read.
    #[error("the skill is not valid: {0}")]
    Skill(String),
    /// The MCP transport failed to start or ended with an error.
    #[error("the MCP session failed: {0}")]
    Serve(String),
}
