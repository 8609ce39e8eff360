//! The device services a stream can open (`shell,v2,…:`, `shell:`, `exec:`, `jdwp`, `track-jdwp`)
//! and how their output is framed on the stream.
//!
//! The services sit over the shell and the commands (a streamed install goes to the package
//! manager in `apps.rs`); the adb transport and the host front, above, open them by name.

use tokio::sync::mpsc;

use crate::phone::SimPhone;
use crate::shell;
use crate::sink::{Chunk, Sink};

/// How a shell stream frames its output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// Shell protocol v2 packets: `id u8, length u32 LE, bytes`, with the exit code at the end.
    ShellV2 { pty: bool },
    /// Raw bytes, stderr merged into stdout, no exit code (`shell:` and `exec:`).
    Raw,
}

/// A parsed service request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Service {
    /// A shell command (empty: an interactive shell, which the simulator closes at once).
    Shell { framing: Framing, command: String },
    /// `jdwp`: the debuggable pids once, then close.
    Jdwp,
    /// `track-jdwp`: length-prefixed pid lists on every change.
    TrackJdwp,
    /// A streamed install (`exec:cmd package install -S <size>`): `size` bytes of APK on the
    /// stream, gathered into `apk` before the package manager answers.
    Install {
        command: String,
        size: u64,
        apk: Vec<u8>,
    },
}

/// Parses a service name as adbd does; `None` for services the simulator does not offer.
pub(crate) fn parse(service: &str) -> Option<Service> {
    let service = service.trim_end_matches('\0');
    if let Some((command, size)) = crate::apps::streamed_install(service) {
        return Some(Service::Install {
            command,
            size,
            apk: Vec::new(),
        });
    }
    if let Some(command) = service.strip_prefix("exec:") {
        return Some(Service::Shell {
            framing: Framing::Raw,
            command: command.to_string(),
        });
    }
    if let Some(rest) = service.strip_prefix("shell") {
        let (args, command) = rest.split_once(':')?;
        let mut v2 = false;
        let mut pty = None;
        for arg in args.split(',').filter(|arg| !arg.is_empty()) {
            match arg {
                "v2" => v2 = true,
                "raw" => pty = Some(false),
                "pty" => pty = Some(true),
                _ => {}
            }
        }
        // adbd's default: a pty for an interactive shell, raw for a command.
        let pty = pty.unwrap_or(command.is_empty());
        let framing = if v2 {
            Framing::ShellV2 { pty }
        } else {
            Framing::Raw
        };
        return Some(Service::Shell {
            framing,
            command: command.to_string(),
        });
    }
    match service {
        "jdwp" => Some(Service::Jdwp),
        "track-jdwp" => Some(Service::TrackJdwp),
        _ => None,
    }
}

/// Starts a service; its output arrives on the returned channel, which ends when it is done.
pub(crate) fn start(phone: &SimPhone, service: &Service) -> mpsc::Receiver<Chunk> {
    let (sender, receiver) = mpsc::channel(8);
    let phone = phone.clone();
    let service = service.clone();
    tokio::spawn(async move {
        match service {
            Service::Shell { command, .. } => {
                let sink = Sink::new(sender);
                let status = if command.trim().is_empty() {
                    0
                } else {
                    shell::run_line(&phone, &command, &sink).await
                };
                let _ = sink.exit(status).await;
            }
            Service::Install { command, size, apk } => {
                let sink = Sink::new(sender);
                let status = crate::apps::install(&phone, &command, &apk, size, &sink).await;
                let _ = sink.exit(status).await;
            }
            Service::Jdwp => {
                let list: String = phone
                    .jdwp_pids()
                    .iter()
                    .map(|pid| format!("{pid}\n"))
                    .collect();
                let _ = sender.send(Chunk::Stdout(list.into_bytes())).await;
            }
            Service::TrackJdwp => {
                let mut changes = phone.watch_processes();
                loop {
                    let list: String = phone
                        .jdwp_pids()
                        .iter()
                        .map(|pid| format!("{pid}\n"))
                        .collect();
                    let framed = format!("{:04x}{list}", list.len());
                    if sender
                        .send(Chunk::Stdout(framed.into_bytes()))
                        .await
                        .is_err()
                    {
                        break;
                    }
                    tokio::select! {
                        changed = changes.changed() => if changed.is_err() { break },
                        () = sender.closed() => break,
                    }
                }
            }
        }
    });
    receiver
}

/// Frames one output chunk for the stream; `max_packet` bounds one v2 packet's payload.
pub(crate) fn frame(framing: Framing, chunk: Chunk, max_packet: usize, out: &mut Vec<Vec<u8>>) {
    match framing {
        Framing::Raw => match chunk {
            Chunk::Stdout(bytes) | Chunk::Stderr(bytes) => {
                for piece in bytes.chunks(max_packet.max(1)) {
                    out.push(piece.to_vec());
                }
            }
            Chunk::Exit(_) => {}
        },
        Framing::ShellV2 { pty } => {
            let (id, bytes) = match chunk {
                Chunk::Stdout(bytes) => (1u8, bytes),
                // A pty has one output: stderr arrives as stdout.
                Chunk::Stderr(bytes) => (if pty { 1 } else { 2 }, bytes),
                Chunk::Exit(code) => (3u8, vec![code]),
            };
            let bytes = if pty && id == 1 { crlf(&bytes) } else { bytes };
            for piece in bytes.chunks(max_packet.saturating_sub(5).max(1)) {
                let mut packet = Vec::with_capacity(piece.len() + 5);
                packet.push(id);
                packet.extend_from_slice(&(piece.len() as u32).to_le_bytes());
                packet.extend_from_slice(piece);
                out.push(packet);
            }
        }
    }
}

fn crlf(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + bytes.len() / 20);
    for byte in bytes {
        if *byte == b'\n' {
            out.push(b'\r');
        }
        out.push(*byte);
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn parses_shell_forms() {
        assert_eq!(
            parse("shell,v2,TERM=xterm-256color,raw:echo hi\0"),
            Some(Service::Shell {
                framing: Framing::ShellV2 { pty: false },
                command: "echo hi".into()
            })
        );
        assert_eq!(
            parse("shell:ls"),
            Some(Service::Shell {
                framing: Framing::Raw,
                command: "ls".into()
            })
        );
        assert_eq!(
            parse("exec:cat x"),
            Some(Service::Shell {
                framing: Framing::Raw,
                command: "cat x".into()
            })
        );
        assert_eq!(parse("track-jdwp"), Some(Service::TrackJdwp));
        assert_eq!(parse("sync:"), None);
    }

    #[test]
    fn v2_frames_have_ids_and_lengths() {
        let mut out = Vec::new();
        frame(
            Framing::ShellV2 { pty: false },
            Chunk::Stderr(b"no".to_vec()),
            4096,
            &mut out,
        );
        frame(
            Framing::ShellV2 { pty: false },
            Chunk::Exit(3),
            4096,
            &mut out,
        );
        assert_eq!(
            out,
            vec![vec![2, 2, 0, 0, 0, b'n', b'o'], vec![3, 1, 0, 0, 0, 3]]
        );
    }
}
