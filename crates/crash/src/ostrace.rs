//! Entries of the iPhone's `com.apple.os_trace_relay` log stream, bounds-checked.
//!
//! An entry is a fixed 129-byte little-endian header followed by NUL-terminated strings (see
//! the iOS notes, §6.4). Public clients index it without checks and one of them panics on a
//! zero-sized string; this reader checks every length against the entry's size.

use serde::{Deserialize, Serialize};

use crate::Error;

/// The size of an entry's fixed header.
pub const HEADER_LEN: usize = 129;

/// An os_log level, from the byte at offset 68. Unknown values are kept rather than refused,
/// so one unexpected byte does not end a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OsLogLevel {
    /// `0x00`, Console's "Default".
    Notice,
    /// `0x01`.
    Info,
    /// `0x02`.
    Debug,
    /// `0x03`, a user action.
    UserAction,
    /// `0x10`.
    Error,
    /// `0x11`.
    Fault,
    /// Any other byte.
    Unknown(u8),
}

impl OsLogLevel {
    /// The level of a level byte.
    pub fn from_byte(byte: u8) -> Self {
        match byte {
            0x00 => OsLogLevel::Notice,
            0x01 => OsLogLevel::Info,
            0x02 => OsLogLevel::Debug,
            0x03 => OsLogLevel::UserAction,
            0x10 => OsLogLevel::Error,
            0x11 => OsLogLevel::Fault,
            other => OsLogLevel::Unknown(other),
        }
    }
}

/// One decoded log entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OsTraceEntry {
    /// The sending process's pid.
    pub pid: u32,
    /// Seconds since 1970 (the phone's clock).
    pub seconds: u32,
    /// Microseconds within the second.
    pub microseconds: u32,
    /// The level.
    pub level: OsLogLevel,
    /// The process's executable path.
    pub filename: String,
    /// The sending image's path.
    pub image_name: String,
    /// The formatted message.
    pub message: String,
    /// The subsystem, when the entry has both a subsystem and a category.
    pub subsystem: Option<String>,
    /// The category, when the entry has both a subsystem and a category.
    pub category: Option<String>,
}

fn u16_at(bytes: &[u8], at: usize) -> Option<usize> {
    let part = bytes.get(at..at + 2)?;
    Some(usize::from(u16::from_le_bytes([part[0], part[1]])))
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    let part = bytes.get(at..at + 4)?;
    Some(u32::from_le_bytes([part[0], part[1], part[2], part[3]]))
}

/// Takes `size` bytes at `at` as a NUL-terminated string (the final NUL dropped).
fn sized_string(bytes: &[u8], at: usize, size: usize) -> Result<(String, usize), Error> {
    let end = at
        .checked_add(size)
        .filter(|&end| end <= bytes.len())
        .ok_or_else(|| {
            Error::Damaged(format!(
                "a string of {size} bytes at {at} runs past the entry"
            ))
        })?;
    let raw = &bytes[at..end];
    let raw = raw.strip_suffix(&[0]).unwrap_or(raw);
    Ok((String::from_utf8_lossy(raw).into_owned(), end))
}

/// Decodes one entry (the bytes after the `0x02` marker and the length).
pub fn parse_entry(entry: &[u8]) -> Result<OsTraceEntry, Error> {
    if entry.len() < HEADER_LEN {
        return Err(Error::Damaged(format!(
            "an os_trace entry of {} bytes is shorter than its {HEADER_LEN}-byte header",
            entry.len()
        )));
    }
    let short = || Error::Damaged("short os_trace header".to_owned());
    let pid = u32_at(entry, 9).ok_or_else(short)?;
    let seconds = u32_at(entry, 55).ok_or_else(short)?;
    let microseconds = u32_at(entry, 63).ok_or_else(short)?;
    let level = OsLogLevel::from_byte(entry[68]);
    let image_name_size = u16_at(entry, 107).ok_or_else(short)?;
    let message_size = u16_at(entry, 109).ok_or_else(short)?;
    let subsystem_size = u32_at(entry, 117).ok_or_else(short)? as usize;
    let category_size = u32_at(entry, 121).ok_or_else(short)? as usize;
    let rest = &entry[HEADER_LEN..];
    let filename_len = memchr::memchr(0, rest)
        .ok_or_else(|| Error::Damaged("the filename has no NUL".to_owned()))?;
    let filename = String::from_utf8_lossy(&rest[..filename_len]).into_owned();
    let at = HEADER_LEN + filename_len + 1;
    let (image_name, at) = sized_string(entry, at, image_name_size)?;
    let (message, at) = sized_string(entry, at, message_size)?;
    let (subsystem, category) = if subsystem_size > 0 && category_size > 0 {
        let (subsystem, at) = sized_string(entry, at, subsystem_size)?;
        let (category, _) = sized_string(entry, at, category_size)?;
        (Some(subsystem), Some(category))
    } else {
        (None, None)
    };
    Ok(OsTraceEntry {
        pid,
        seconds,
        microseconds,
        level,
        filename,
        image_name,
        message,
        subsystem,
        category,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn entry(message: &[u8], subsystem: &[u8], category: &[u8]) -> Vec<u8> {
        let mut bytes = vec![0u8; HEADER_LEN];
        bytes[9..13].copy_from_slice(&42u32.to_le_bytes());
        bytes[55..59].copy_from_slice(&1_700_000_000u32.to_le_bytes());
        bytes[63..67].copy_from_slice(&250_000u32.to_le_bytes());
        bytes[68] = 0x11;
        let image = b"/usr/lib/libobjc.dylib\0";
        bytes[107..109].copy_from_slice(&(image.len() as u16).to_le_bytes());
        bytes[109..111].copy_from_slice(&(message.len() as u16).to_le_bytes());
        bytes[117..121].copy_from_slice(&(subsystem.len() as u32).to_le_bytes());
        bytes[121..125].copy_from_slice(&(category.len() as u32).to_le_bytes());
        bytes.extend_from_slice(b"/var/containers/Bundle/Application/X/App.app/App\0");
        bytes.extend_from_slice(image);
        bytes.extend_from_slice(message);
        bytes.extend_from_slice(subsystem);
        bytes.extend_from_slice(category);
        bytes
    }

    #[test]
    fn reads_every_field() {
        let parsed = parse_entry(&entry(b"hello\0", b"com.example\0", b"net\0")).unwrap();
        assert_eq!(parsed.pid, 42);
        assert_eq!(parsed.level, OsLogLevel::Fault);
        assert_eq!(parsed.message, "hello");
        assert_eq!(parsed.subsystem.as_deref(), Some("com.example"));
        assert_eq!(parsed.category.as_deref(), Some("net"));
        assert!(parsed.filename.ends_with("App.app/App"));
    }

    #[test]
    fn zero_sizes_and_overruns_do_not_panic() {
        let parsed = parse_entry(&entry(b"", b"", b"")).unwrap();
        assert_eq!(parsed.message, "");
        assert_eq!(parsed.subsystem, None);
        let mut damaged = entry(b"hello\0", b"", b"");
        damaged[109] = 0xff;
        assert!(parse_entry(&damaged).is_err());
        assert!(parse_entry(&[0u8; 10]).is_err());
    }
}
