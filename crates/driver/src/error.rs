//! The one error type of the driver contract, with the kinds callers act on.

use std::time::Duration;

/// A boxed error from a backend, kept as the source of [`Error::Backend`].
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// What went wrong in a driver call.
///
/// Backends map their private errors into these kinds, so the layers above (the gateway, the MCP
/// frontend) can decide what to tell the agent without knowing adb or usbmux.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The app (or another named thing) is not on the device.
    #[error("not found: {0}")]
    NotFound(String),
    /// The driver cannot do this, with the reason (e.g. an app that shares its uid).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The device refused (e.g. `debuggerd` on a user build).
    #[error("permission denied: {0}")]
    PermissionDenied(String),
    /// No device with this id is connected.
    #[error("device not found: {0}")]
    DeviceNotFound(String),
    /// The device or the service that reaches it is not usable right now (offline, unauthorized,
    /// the adb server or usbmuxd not running).
    #[error("device unavailable: {0}")]
    DeviceUnavailable(String),
    /// A bad argument, rejected before anything ran on the device.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The device did not answer within the time allowed.
    #[error("timed out after {after:?}: {what}")]
    Timeout {
        /// What was being waited for.
        what: String,
        /// How long the call waited.
        after: Duration,
    },
    /// The device went away in the middle of the call.
    #[error("disconnected: {0}")]
    Disconnected(String),
    /// The app changed on the device since [`crate::AppLogger::app_info`] described it (e.g. a
    /// release build installed over a development build with the same uid), so nothing was
    /// returned: look the app up again and decide again before reading.
    #[error("the app changed: {0}")]
    Changed(String),
    /// Anything else the backend reports, with its source.
    #[error("{message}")]
    Backend {
        /// A one-line description for people.
        message: String,
        /// The underlying error, when there is one.
        #[source]
        source: Option<BoxError>,
    },
}

impl Error {
    /// A backend error with a message and no source.
    pub fn backend(message: impl Into<String>) -> Self {
        Error::Backend {
            message: message.into(),
            source: None,
        }
    }

    /// A backend error wrapping a source error.
    pub fn backend_with(message: impl Into<String>, source: impl Into<BoxError>) -> Self {
        Error::Backend {
            message: message.into(),
            source: Some(source.into()),
        }
    }

    /// The kind of this error, for matching without the payload.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::NotFound(_) => ErrorKind::NotFound,
            Error::Unsupported(_) => ErrorKind::Unsupported,
            Error::PermissionDenied(_) => ErrorKind::PermissionDenied,
            Error::DeviceNotFound(_) => ErrorKind::DeviceNotFound,
            Error::DeviceUnavailable(_) => ErrorKind::DeviceUnavailable,
            Error::InvalidArgument(_) => ErrorKind::InvalidArgument,
            Error::Timeout { .. } => ErrorKind::Timeout,
            Error::Disconnected(_) => ErrorKind::Disconnected,
            Error::Changed(_) => ErrorKind::Changed,
            Error::Backend { .. } => ErrorKind::Backend,
        }
    }
}

/// The kind of an [`Error`], without its payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// See [`Error::NotFound`].
    NotFound,
    /// See [`Error::Unsupported`].
    Unsupported,
    /// See [`Error::PermissionDenied`].
    PermissionDenied,
    /// See [`Error::DeviceNotFound`].
    DeviceNotFound,
    /// See [`Error::DeviceUnavailable`].
    DeviceUnavailable,
    /// See [`Error::InvalidArgument`].
    InvalidArgument,
    /// See [`Error::Timeout`].
    Timeout,
    /// See [`Error::Disconnected`].
    Disconnected,
    /// See [`Error::Changed`].
    Changed,
    /// See [`Error::Backend`].
    Backend,
}

/// The result type of every driver call.
pub type Result<T, E = Error> = std::result::Result<T, E>;
