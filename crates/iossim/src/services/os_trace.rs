//! `com.apple.os_trace_relay`: `PidList`, and `StartActivity` with a pid (or `-1` for all),
//! then the record frames (`0x02`, `u32` little-endian length, the record), framed as
//! `shared/notes/ios-formats.md` §6 describes and each record laid out as Apple's own client
//! reads it (`shared/notes/ios-ostrace-apple.md`).

use plist::Value;
use tokio::io::AsyncWriteExt;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

use super::{BoxStream, Via, binary, dict, read_plist};
use crate::model::{Fault, LogEntry, SimPhone, unix_parts};

/// The fixed part of a record, also the header size each record states.
pub const HEADER_LEN: usize = 129;
/// The record version Apple's client reads.
const VERSION: u8 = 2;
/// The record type of an os_log message.
const TYPE_LOG: u32 = 8;
/// Entries written per socket write at most.
const BATCH: usize = 512;

/// A string's bytes with its NUL, cut to fit a `u16` length; empty (length 0, absent) when
/// the string is.
fn with_nul(text: &str) -> Vec<u8> {
    if text.is_empty() {
        return Vec::new();
    }
    let mut end = text.len().min(usize::from(u16::MAX) - 1);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut bytes = text.as_bytes()[..end].to_vec();
    bytes.push(0);
    bytes
}

/// One log record in Apple's layout (`shared/notes/ios-ostrace-apple.md`): version 2, type 8,
/// header size 129, every string by its length with its NUL (0 = absent), no words (N = 0),
/// the mach time at 75. Its length is exactly `129 + 8N + every string length`.
pub fn encode_entry(entry: &LogEntry) -> Vec<u8> {
    let (seconds, micros) = unix_parts(entry.time);
    let path = with_nul(&entry.executable);
    let image = with_nul(&entry.image);
    let mut message = entry.message.as_bytes().to_vec();
    message.push(0);
    let (subsystem, category) = match &entry.label {
        Some((s, c)) => (with_nul(s), with_nul(c)),
        None => (Vec::new(), Vec::new()),
    };
    let mut out = vec![0u8; HEADER_LEN];
    out[0] = VERSION;
    out[1..5].copy_from_slice(&TYPE_LOG.to_le_bytes());
    out[5..9].copy_from_slice(&(HEADER_LEN as u32).to_le_bytes());
    out[9..13].copy_from_slice(&entry.pid.to_le_bytes());
    out[13..21].copy_from_slice(&u64::from(entry.pid).to_le_bytes());
    out[21..37].copy_from_slice(&uuid_bytes(&entry.executable));
    out[37..39].copy_from_slice(&(path.len() as u16).to_le_bytes());
    out[55..63].copy_from_slice(&seconds.to_le_bytes());
    out[63..67].copy_from_slice(&micros.to_le_bytes());
    // The trace id: 0x04 (a log message) in its first byte, the os_log type in its second.
    out[67] = 0x04;
    out[68] = entry.level.byte();
    let mach = seconds.wrapping_mul(24_000_000) + u64::from(micros) * 24;
    out[75..83].copy_from_slice(&mach.to_le_bytes());
    out[83..91].copy_from_slice(&entry.thread.to_le_bytes());
    out[91..107].copy_from_slice(&uuid_bytes(&entry.image));
    out[107..109].copy_from_slice(&(image.len() as u16).to_le_bytes());
    out[109..113].copy_from_slice(&(message.len() as u32).to_le_bytes());
    out[113..117].copy_from_slice(&0x4_2c4u32.to_le_bytes());
    out[117..121].copy_from_slice(&(subsystem.len() as u32).to_le_bytes());
    out[121..125].copy_from_slice(&(category.len() as u32).to_le_bytes());
    // N = 0: the bytes 125..129 stay zero.
    for part in [path, image, message, subsystem, category] {
        out.extend_from_slice(&part);
    }
    out
}

/// A stable 16-byte id for a path (the entry's image UUIDs).
fn uuid_bytes(path: &str) -> [u8; 16] {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in path.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&h.to_le_bytes());
    out[8..].copy_from_slice(&h.rotate_left(31).to_le_bytes());
    out
}

fn frame(out: &mut Vec<u8>, entry: &[u8]) {
    out.push(0x02);
    out.extend_from_slice(&(entry.len() as u32).to_le_bytes());
    out.extend_from_slice(entry);
}

/// The answer to a request: marker `0x01`, `u32` big-endian length, a binary plist (short, so
/// pymobiledevice3's different reading of the same bytes agrees, see the notes §6.2).
async fn reply(stream: &mut BoxStream, value: &plist::Dictionary) -> std::io::Result<()> {
    let body = binary(value);
    let mut out = vec![0x01];
    out.extend_from_slice(&(body.len() as u32).to_be_bytes());
    out.extend_from_slice(&body);
    stream.write_all(&out).await?;
    stream.flush().await
}

pub(crate) async fn serve(
    phone: &SimPhone,
    mut stream: BoxStream,
    via: Via,
) -> std::io::Result<()> {
    let Some(request) = read_plist(&mut stream).await? else {
        return Ok(());
    };
    match request.get("Request").and_then(Value::as_string) {
        Some("PidList") => {
            let mut payload = plist::Dictionary::new();
            for process in phone.processes() {
                payload.insert(
                    process.pid.to_string(),
                    Value::Dictionary(dict([("ProcessName", Value::from(process.name()))])),
                );
            }
            reply(
                &mut stream,
                &dict([("Payload", Value::Dictionary(payload))]),
            )
            .await
        }
        Some("StartActivity") => {
            let pid = request
                .get("Pid")
                .and_then(|v| v.as_signed_integer())
                .unwrap_or(-1);
            phone.record_open("com.apple.os_trace_relay/StartActivity", Some(pid));
            // Subscribe before answering, so nothing logged after the answer is missed.
            let logs = phone.subscribe();
            reply(
                &mut stream,
                &dict([("Status", Value::from("RequestSuccessful"))]),
            )
            .await?;
            if via == Via::Lockdown && phone.has_fault(&Fault::SilentLockdownOsTrace) {
                // Opened, then nothing: hold the connection until the client leaves.
                drop(logs);
                return hold_silent(stream).await;
            }
            stream_entries(phone, stream, logs, pid).await
        }
        other => {
            tracing::debug!(request = ?other, "os_trace_relay: unsupported request");
            reply(
                &mut stream,
                &dict([("Status", Value::from("RequestFailed"))]),
            )
            .await
        }
    }
}

/// Reads and drops whatever the client sends until it closes the connection.
async fn hold_silent(mut stream: BoxStream) -> std::io::Result<()> {
    use tokio::io::AsyncReadExt;
    let mut sink = [0u8; 256];
    while stream.read(&mut sink).await? > 0 {}
    Ok(())
}

async fn stream_entries(
    phone: &SimPhone,
    mut stream: BoxStream,
    mut logs: tokio::sync::broadcast::Receiver<std::sync::Arc<LogEntry>>,
    pid: i64,
) -> std::io::Result<()> {
    let wanted = |e: &LogEntry| pid < 0 || i64::from(e.pid) == pid;
    let mut out = Vec::with_capacity(64 * 1024);
    loop {
        let first = match logs.recv().await {
            Ok(entry) => entry,
            Err(RecvError::Lagged(missed)) => {
                tracing::debug!(missed, "os_trace_relay client fell behind; entries dropped");
                continue;
            }
            Err(RecvError::Closed) => return Ok(()),
        };
        out.clear();
        let mut count = 0u64;
        let mut next = Some(first);
        while let Some(entry) = next.take() {
            if wanted(&entry) {
                let bytes = encode_entry(&entry);
                if phone.take_fault(&Fault::DropStreamMidEntry) {
                    frame(&mut out, &bytes);
                    let cut = out.len() - bytes.len() / 2;
                    out.truncate(cut);
                    stream.write_all(&out).await?;
                    stream.flush().await?;
                    return Ok(());
                }
                frame(&mut out, &bytes);
                count += 1;
            }
            if count as usize >= BATCH {
                break;
            }
            next = match logs.try_recv() {
                Ok(entry) => Some(entry),
                Err(TryRecvError::Lagged(_)) => logs.try_recv().ok(),
                Err(_) => None,
            };
        }
        if !out.is_empty() {
            stream.write_all(&out).await?;
            stream.flush().await?;
            phone.count_sent(count);
        }
    }
}
