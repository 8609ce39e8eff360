//! The one error type of this crate, and how it maps into the driver contract's kinds.

use std::time::Duration;

/// What went wrong talking to the adb server or a device through it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No adb server answered at the address, and none could be started.
    #[error("the adb server at {address} is not running: {reason}")]
    ServerUnavailable {
        /// The address tried.
        address: String,
        /// Why it could not be reached or started (e.g. adb is not installed).
        reason: String,
    },
    /// An adb server address that cannot be read (`--adb-server`, `adb_servers`).
    #[error("{address:?} is not an adb server address: {reason}")]
    BadAddress {
        /// The address as given.
        address: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The server knows no device with this serial.
    #[error("device not found: {0}")]
    DeviceNotFound(String),
    /// The device is known but cannot be used now (offline, unauthorized, still connecting).
    #[error("device {serial} is unavailable: {reason}")]
    DeviceUnavailable {
        /// The device's serial.
        serial: String,
        /// What the server said.
        reason: String,
    },
    /// The server refused a request with `FAIL` and this message.
    #[error("the adb server refused {service:?}: {message}")]
    Refused {
        /// The service asked for (without the command of a shell service).
        service: String,
        /// The server's message.
        message: String,
    },
    /// Nothing arrived within the time allowed.
    #[error("timed out after {after:?} waiting for {what}")]
    Timeout {
        /// What was being waited for.
        what: String,
        /// How long.
        after: Duration,
    },
    /// The connection closed in the middle of an answer (the device or the server went away).
    #[error("the connection closed early while {0}")]
    Disconnected(String),
    /// The server or device sent something this client cannot read.
    #[error("protocol error: {0}")]
    Protocol(String),
    /// A socket or process error.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// An I/O error with what was being done.
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }
}

impl From<Error> for phonelogs_driver::Error {
    fn from(error: Error) -> Self {
        use phonelogs_driver::Error as D;
        match error {
            Error::ServerUnavailable { .. } => D::DeviceUnavailable(error.to_string()),
            Error::DeviceNotFound(serial) => D::DeviceNotFound(serial),
            Error::DeviceUnavailable { .. } => D::DeviceUnavailable(error.to_string()),
            Error::Timeout { what, after } => D::Timeout { what, after },
            Error::Disconnected(_) => D::Disconnected(error.to_string()),
            Error::BadAddress { .. } => D::InvalidArgument(error.to_string()),
            other => D::backend_with(other.to_string(), other),
        }
    }
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
