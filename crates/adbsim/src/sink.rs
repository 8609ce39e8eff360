//! Where a command's output goes: the [`Chunk`]s of a stream and the [`Sink`] a command writes
//! them to, after its redirections.
//!
//! A command writes through a `Sink` into its stream's channel, so a long `logcat` streams with
//! back-pressure instead of being built whole in memory first, and notices at once when the
//! host closes the stream ([`Sink::closed`]). Nothing here knows a command, the shell or the wire.

use tokio::sync::mpsc;

/// One piece of a service's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Chunk {
    /// Bytes on standard output.
    Stdout(Vec<u8>),
    /// Bytes on standard error.
    Stderr(Vec<u8>),
    /// The exit status; the last chunk of a shell service.
    Exit(u8),
}

/// Where a command's output stream goes after redirections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    Stdout,
    Stderr,
    Null,
}

/// A command's output channel, after its redirections.
#[derive(Debug, Clone)]
pub(crate) struct Sink {
    sender: mpsc::Sender<Chunk>,
    pub(crate) stdout_to: Target,
    pub(crate) stderr_to: Target,
}

/// The stream was closed by the host; the command should stop.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Closed;

impl Sink {
    pub(crate) fn new(sender: mpsc::Sender<Chunk>) -> Self {
        Self {
            sender,
            stdout_to: Target::Stdout,
            stderr_to: Target::Stderr,
        }
    }

    async fn send(&self, target: Target, bytes: Vec<u8>) -> Result<(), Closed> {
        if bytes.is_empty() {
            return Ok(());
        }
        let chunk = match target {
            Target::Stdout => Chunk::Stdout(bytes),
            Target::Stderr => Chunk::Stderr(bytes),
            Target::Null => return Ok(()),
        };
        self.sender.send(chunk).await.map_err(|_| Closed)
    }

    /// Writes to standard output.
    pub(crate) async fn out(&self, bytes: impl Into<Vec<u8>>) -> Result<(), Closed> {
        self.send(self.stdout_to, bytes.into()).await
    }

    /// Writes to standard error.
    pub(crate) async fn err(&self, bytes: impl Into<Vec<u8>>) -> Result<(), Closed> {
        self.send(self.stderr_to, bytes.into()).await
    }

    pub(crate) async fn exit(&self, code: u8) -> Result<(), Closed> {
        self.sender
            .send(Chunk::Exit(code))
            .await
            .map_err(|_| Closed)
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.sender.is_closed()
    }

    /// Resolves once the host has closed the stream (the receiving end is gone).
    pub(crate) async fn closed(&self) {
        self.sender.closed().await;
    }
}
