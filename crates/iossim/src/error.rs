//! What can go wrong starting the simulator.

/// What can go wrong starting the simulator.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A socket could not be bound.
    #[error("binding {what}: {source}")]
    Bind {
        /// What was bound.
        what: String,
        /// Why not.
        #[source]
        source: std::io::Error,
    },
    /// The pair record's certificates or the TLS server could not be made.
    #[error("making the pair record: {0}")]
    Tls(String),
}
