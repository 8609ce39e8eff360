//! The one error type of the symbols engine.

use std::path::PathBuf;

/// What went wrong opening a symbols directory or filing a symbol file.
///
/// Looking symbols up never fails with this: a lookup that finds nothing says why in its
/// [`crate::SymbolsUsed`] instead.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file or directory could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The path concerned.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The symbols directory does not exist or is not a directory.
    #[error("{0}: not a symbols directory")]
    NotADirectory(PathBuf),
    /// An app id or version that cannot be a single, safe path component.
    #[error("refused {what} {value:?}: {reason}")]
    UnsafeName {
        /// `app` or `version` or `file name`.
        what: &'static str,
        /// The refused value.
        value: String,
        /// Why.
        reason: &'static str,
    },
    /// A file that is no mapping, no ELF with a GNU build id and no dSYM.
    #[error("{path}: {reason}")]
    UnknownSymbolFile {
        /// The file.
        path: PathBuf,
        /// What it is not.
        reason: String,
    },
    /// A different file is already filed at that place.
    #[error("{0}: a different file is already there")]
    AlreadyThere(PathBuf),
}

impl Error {
    /// What went wrong, without the path it concerns: for a text that leaves this computer
    /// (the agent's result), where the caller names the file its own way.
    pub fn without_path(&self) -> String {
        match self {
            Error::Io { source, .. } => source.to_string(),
            Error::NotADirectory(_) => "not a symbols directory".to_owned(),
            Error::UnsafeName { .. } => self.to_string(),
            Error::UnknownSymbolFile { reason, .. } => reason.clone(),
            Error::AlreadyThere(_) => "a different file is already there".to_owned(),
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}
