//! `com.apple.syslog_relay`: every process's entries as text lines
//! (`Mon DD HH:MM:SS DeviceName process(image)[pid] <Level>: message`), each ended by `\n`
//! and a NUL byte, the delimiter idevice's and pymobiledevice3's syslog clients split on.

use std::sync::Arc;

use tokio::io::AsyncWriteExt;
use tokio::sync::broadcast::error::RecvError;

use super::BoxStream;
use crate::model::{LogEntry, SimPhone};

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// `text` as syslog_relay writes it, with BSD `vis(3)`: printable ASCII, tab and line break as
/// they are; the backslash as `\134` and a meta space as `\240` (Apple libc's octal forms, as
/// Flutter's and go-ios's decoders describe them); any other byte `\M-c`, `\M^c` or `\^c`.
/// Which control characters a phone leaves as they are is not attested; tab and line break
/// are kept so a multi-line message still reads as lines. `phonelogs_crash::vis` decodes it.
pub fn vis_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for &b in text.as_bytes() {
        match b {
            b'\\' => out.push_str("\\134"),
            b'\t' | b'\n' | 0x20..=0x7E => out.push(char::from(b)),
            0xA0 => out.push_str("\\240"),
            _ => {
                out.push('\\');
                let low = b & 0x7F;
                if b & 0x80 != 0 {
                    out.push('M');
                }
                if low < 0x20 || low == 0x7F {
                    out.push('^');
                    out.push(if low == 0x7F {
                        '?'
                    } else {
                        char::from(low + 0x40)
                    });
                } else {
                    out.push('-');
                    out.push(char::from(low));
                }
            }
        }
    }
    out
}

/// One entry as syslog_relay prints it (without the delimiter), the message escaped with
/// [`vis_encode`].
pub fn syslog_line(entry: &LogEntry, device_name: &str, utc_offset_minutes: i32) -> String {
    let offset = time::UtcOffset::from_whole_seconds(utc_offset_minutes * 60)
        .unwrap_or(time::UtcOffset::UTC);
    let t = time::OffsetDateTime::from(entry.time).to_offset(offset);
    let process = entry.executable.rsplit('/').next().unwrap_or("");
    let image = entry.image.rsplit('/').next().unwrap_or("");
    let who = if image == process || image.is_empty() {
        format!("{process}[{}]", entry.pid)
    } else {
        format!("{process}({image})[{}]", entry.pid)
    };
    format!(
        "{} {:>2} {:02}:{:02}:{:02} {device_name} {who} <{}>: {}",
        MONTHS[usize::from(u8::from(t.month())) - 1],
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        entry.level.syslog_name(),
        vis_encode(&entry.message)
    )
}

pub(crate) async fn serve(phone: &SimPhone, mut stream: BoxStream) -> std::io::Result<()> {
    let profile = phone.profile();
    let mut logs = phone.subscribe();
    loop {
        let entry: Arc<LogEntry> = match logs.recv().await {
            Ok(entry) => entry,
            Err(RecvError::Lagged(_)) => continue,
            Err(RecvError::Closed) => return Ok(()),
        };
        let mut line =
            syslog_line(&entry, &profile.device_name, profile.utc_offset_minutes).into_bytes();
        line.extend_from_slice(b"\n\0");
        stream.write_all(&line).await?;
        stream.flush().await?;
    }
}
