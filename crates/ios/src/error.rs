//! This crate's error, for the protocol pieces, and how it and idevice's errors become the
//! driver contract's [`phonelogs_driver::Error`] with a message that says what to do.

use phonelogs_driver::Error as DriverError;

/// What went wrong while speaking to an iPhone service.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The service sent something its documented format does not allow.
    #[error("{service} sent something unexpected: {detail}")]
    Protocol {
        /// The service's name.
        service: &'static str,
        /// What was wrong.
        detail: String,
    },
    /// Reading or writing the connection failed.
    #[error("{service}: {source}")]
    Io {
        /// The service's name.
        service: &'static str,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A plist could not be written or read.
    #[error("{service}: bad plist: {source}")]
    Plist {
        /// The service's name.
        service: &'static str,
        /// The plist error.
        #[source]
        source: plist::Error,
    },
    /// idevice reported an error.
    #[error("{context}: {source}")]
    Device {
        /// What was being done.
        context: String,
        /// idevice's error.
        #[source]
        source: idevice::IdeviceError,
    },
}

impl Error {
    pub(crate) fn protocol(service: &'static str, detail: impl Into<String>) -> Self {
        Error::Protocol {
            service,
            detail: detail.into(),
        }
    }
}

impl From<Error> for DriverError {
    fn from(error: Error) -> Self {
        match error {
            Error::Device { context, source } => device_error(&context, source),
            Error::Io { ref source, .. }
                if matches!(
                    source.kind(),
                    std::io::ErrorKind::UnexpectedEof
                        | std::io::ErrorKind::ConnectionReset
                        | std::io::ErrorKind::BrokenPipe
                ) =>
            {
                DriverError::Disconnected(error.to_string())
            }
            other => DriverError::backend_with(other.to_string(), other),
        }
    }
}

/// The advice for a phone that is not paired with this computer.
pub const NOT_PAIRED_ADVICE: &str = "the iPhone is not paired with this computer: unlock it, connect it by cable, tap Trust on the phone and enter its passcode (or run `idevicepair pair`), then try again";

/// The advice for a locked phone.
pub const LOCKED_ADVICE: &str = "the iPhone is locked: unlock it (and keep it unlocked while its logs are read), then try again";

/// Maps idevice's error to the contract's, with what the person should do.
pub fn device_error(context: &str, error: idevice::IdeviceError) -> DriverError {
    use idevice::IdeviceError as E;
    match error {
        E::InvalidHostID => {
            DriverError::DeviceUnavailable(format!("{context}: {NOT_PAIRED_ADVICE}"))
        }
        E::DeviceLocked => DriverError::DeviceUnavailable(format!("{context}: {LOCKED_ADVICE}")),
        E::DeviceNotFound => DriverError::DeviceNotFound(context.to_owned()),
        E::DeveloperModeNotEnabled => DriverError::Unsupported(format!(
            "{context}: Developer Mode is off on the iPhone (Settings › Privacy & Security › Developer Mode)"
        )),
        E::Socket(io) => match io.kind() {
            std::io::ErrorKind::UnexpectedEof
            | std::io::ErrorKind::ConnectionReset
            | std::io::ErrorKind::BrokenPipe => {
                DriverError::Disconnected(format!("{context}: {io}"))
            }
            _ => DriverError::backend_with(format!("{context}: {io}"), io),
        },
        other => DriverError::backend_with(format!("{context}: {other}"), other),
    }
}
