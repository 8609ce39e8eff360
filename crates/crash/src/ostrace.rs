//! Records of the iPhone's `com.apple.os_trace_relay` log stream, read as Apple's own client
//! reads them, bounds-checked.
//!
//! A record (the bytes after the stream's `0x02` marker and length) is a packed little-endian
//! header of 129 bytes, then `N` 8-byte words, then the strings, each by its length (NUL
//! included; 0 = absent): the process path, the sender image path, the message, the subsystem,
//! the category. The layout is `shared/notes/ios-ostrace-apple.md`, from Apple's LoggingSupport
//! as decompiled in public sources, libimobiledevice's `ostrace_packet_header_t` and go-ios
//! (the sources are cited in `testdata/README.md`). Apple's client drops the whole stream on a
//! record that breaks its rules; this reader refuses that one record with an error saying why
//! ([`Error::Damaged`]), so a caller can skip it, count it, and read on.
//!
//! Only type 8 records (os_log messages) become entries; activity, trace, user-action and
//! transition records are recognised and returned as [`OsTraceRecord::Other`] for the caller
//! to skip and count.

use serde::{Deserialize, Serialize};

use crate::Error;

/// The size of a record's fixed header, which is also the header size a record states.
pub const HEADER_LEN: usize = 129;

/// The only record version Apple's client reads ("Received unknown message version").
pub const RECORD_VERSION: u8 = 2;

/// The record type of an os_log message, the only type that becomes a line.
pub const TYPE_LOG: u32 = 8;
/// The record type of an activity creation (skipped).
pub const TYPE_ACTIVITY: u32 = 2;
/// The record type of a trace message (skipped).
pub const TYPE_TRACE: u32 = 4;
/// The record type of a user action (skipped).
pub const TYPE_USER_ACTION: u32 = 16;
/// The record type of an activity transition (skipped).
pub const TYPE_TRANSITION: u32 = 32;

/// Where each fixed field of the header stands (`shared/notes/ios-ostrace-apple.md`).
pub mod offset {
    /// `u8` record version.
    pub const VERSION: usize = 0;
    /// `u32` record type.
    pub const TYPE: usize = 1;
    /// `u32` header size.
    pub const HEADER_SIZE: usize = 5;
    /// `u32` pid.
    pub const PID: usize = 9;
    /// `u64` procid (the pid on iOS).
    pub const PROCID: usize = 13;
    /// 16 bytes: the process's main image UUID.
    pub const PROCESS_UUID: usize = 21;
    /// `u16` process path length, NUL included.
    pub const PROCESS_PATH_LEN: usize = 37;
    /// `u64` seconds since 1970.
    pub const SECONDS: usize = 55;
    /// `u32` microseconds.
    pub const MICROS: usize = 63;
    /// `u64` trace id; its second byte (68) is the os_log type.
    pub const TRACE_ID: usize = 67;
    /// `u8` the os_log type (the level).
    pub const LEVEL: usize = 68;
    /// `u64` mach continuous time.
    pub const MACH_TIME: usize = 75;
    /// `u64` thread id.
    pub const THREAD: usize = 83;
    /// 16 bytes: the sender image's UUID.
    pub const IMAGE_UUID: usize = 91;
    /// `u16` sender image path length, NUL included.
    pub const IMAGE_PATH_LEN: usize = 107;
    /// `u32` message length, NUL included (type 8).
    pub const MESSAGE_LEN: usize = 109;
    /// `u32` offset of the call in the sender image (type 8).
    pub const IMAGE_OFFSET: usize = 113;
    /// `u32` subsystem length, NUL included; 0 = none.
    pub const SUBSYSTEM_LEN: usize = 117;
    /// `u32` category length, NUL included; 0 = none.
    pub const CATEGORY_LEN: usize = 121;
    /// `u32` N, the 8-byte words between the header and the strings.
    pub const WORDS: usize = 125;
}

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
    /// Seconds since 1970 (the phone's clock; the record's `u64`, saturated past 2106).
    pub seconds: u32,
    /// Microseconds within the second.
    pub microseconds: u32,
    /// The level.
    pub level: OsLogLevel,
    /// The process's executable path (empty when the record has none).
    pub filename: String,
    /// The sending image's path (empty when the record has none).
    pub image_name: String,
    /// The formatted message.
    pub message: String,
    /// The subsystem, when the record has one (independent of the category).
    pub subsystem: Option<String>,
    /// The category, when the record has one (independent of the subsystem).
    pub category: Option<String>,
}

/// What one record is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OsTraceRecord {
    /// An os_log message (type 8).
    Log(OsTraceEntry),
    /// Any other record type (2 activity, 4 trace, 16 user action, 32 transition, or one not
    /// known here): never a line, to be skipped and counted.
    Other {
        /// The record's type.
        kind: u32,
    },
}

fn field<const N: usize>(bytes: &[u8], at: usize) -> Result<[u8; N], Error> {
    bytes
        .get(at..at + N)
        .and_then(|part| <[u8; N]>::try_from(part).ok())
        .ok_or_else(|| Error::Damaged(format!("the os_trace header ends before offset {at}")))
}

fn u16_at(bytes: &[u8], at: usize) -> Result<u64, Error> {
    Ok(u64::from(u16::from_le_bytes(field(bytes, at)?)))
}

fn u32_at(bytes: &[u8], at: usize) -> Result<u32, Error> {
    Ok(u32::from_le_bytes(field(bytes, at)?))
}

fn u64_at(bytes: &[u8], at: usize) -> Result<u64, Error> {
    Ok(u64::from_le_bytes(field(bytes, at)?))
}

/// The string lengths of a type 8 record, in the order the strings follow the words.
struct Lengths {
    path: u64,
    image: u64,
    message: u64,
    subsystem: u64,
    category: u64,
}

/// Checks the record's length, version and header size, and returns its type.
fn record_type(record: &[u8]) -> Result<u32, Error> {
    if record.len() < HEADER_LEN {
        return Err(Error::Damaged(format!(
            "an os_trace record of {} bytes is shorter than its {HEADER_LEN}-byte header",
            record.len()
        )));
    }
    let version = field::<1>(record, offset::VERSION)?[0];
    if version != RECORD_VERSION {
        return Err(Error::Damaged(format!(
            "an os_trace record of version {version}, not {RECORD_VERSION}"
        )));
    }
    let header = u32_at(record, offset::HEADER_SIZE)?;
    if header as usize != HEADER_LEN {
        return Err(Error::Damaged(format!(
            "an os_trace record states a {header}-byte header, not {HEADER_LEN}"
        )));
    }
    u32_at(record, offset::TYPE)
}

/// Apple's size rule for a type 8 record: `len == 129 + 8N + every string length`. Sums in
/// `u64`, where no record's fields can overflow.
fn check_size(record: &[u8], words: u64, lengths: &Lengths) -> Result<(), Error> {
    let expected = HEADER_LEN as u64
        + 8 * words
        + lengths.path
        + lengths.image
        + lengths.message
        + lengths.subsystem
        + lengths.category;
    if expected != record.len() as u64 {
        return Err(Error::Damaged(format!(
            "an os_trace record of {} bytes whose fields add up to {expected} (Apple's size rule)",
            record.len()
        )));
    }
    Ok(())
}

/// Takes the next `len` bytes as a NUL-terminated string (the final NUL dropped); `None` for
/// a length of 0. The size rule already held, so the bytes are there.
fn take_string(record: &[u8], at: &mut usize, len: u64) -> Option<String> {
    let start = *at;
    let end = start.saturating_add(usize::try_from(len).unwrap_or(usize::MAX));
    *at = end;
    let raw = record.get(start..end).filter(|raw| !raw.is_empty())?;
    let raw = raw.strip_suffix(&[0]).unwrap_or(raw);
    Some(String::from_utf8_lossy(raw).into_owned())
}

/// Decodes one record (the bytes after the `0x02` marker and the length): a log message, or
/// another type to skip. An error for a record Apple's client would refuse: another version,
/// a header size other than 129, or a size that breaks the size rule.
pub fn parse_record(record: &[u8]) -> Result<OsTraceRecord, Error> {
    let kind = record_type(record)?;
    if kind != TYPE_LOG {
        return Ok(OsTraceRecord::Other { kind });
    }
    let lengths = Lengths {
        path: u16_at(record, offset::PROCESS_PATH_LEN)?,
        image: u16_at(record, offset::IMAGE_PATH_LEN)?,
        message: u64::from(u32_at(record, offset::MESSAGE_LEN)?),
        subsystem: u64::from(u32_at(record, offset::SUBSYSTEM_LEN)?),
        category: u64::from(u32_at(record, offset::CATEGORY_LEN)?),
    };
    let words = u64::from(u32_at(record, offset::WORDS)?);
    check_size(record, words, &lengths)?;
    // In range: the size rule held, so 129 + 8N is at most the record's length.
    let mut at = HEADER_LEN + 8 * (words as usize);
    let filename = take_string(record, &mut at, lengths.path).unwrap_or_default();
    let image_name = take_string(record, &mut at, lengths.image).unwrap_or_default();
    let message = take_string(record, &mut at, lengths.message).unwrap_or_default();
    let subsystem = take_string(record, &mut at, lengths.subsystem);
    let category = take_string(record, &mut at, lengths.category);
    Ok(OsTraceRecord::Log(OsTraceEntry {
        pid: u32_at(record, offset::PID)?,
        seconds: u32::try_from(u64_at(record, offset::SECONDS)?).unwrap_or(u32::MAX),
        microseconds: u32_at(record, offset::MICROS)?,
        level: OsLogLevel::from_byte(field::<1>(record, offset::LEVEL)?[0]),
        filename,
        image_name,
        message,
        subsystem,
        category,
    }))
}

/// Decodes one record that must be a log message: [`parse_record`], with any other type an
/// error.
pub fn parse_entry(record: &[u8]) -> Result<OsTraceEntry, Error> {
    match parse_record(record)? {
        OsTraceRecord::Log(entry) => Ok(entry),
        OsTraceRecord::Other { kind } => Err(Error::UnknownFormat(format!(
            "an os_trace record of type {kind}, not an os_log message ({TYPE_LOG})"
        ))),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The strings of a record, each written with its NUL; `None` is a length of 0.
    struct Strings<'a> {
        path: Option<&'a str>,
        image: Option<&'a str>,
        message: &'a str,
        subsystem: Option<&'a str>,
        category: Option<&'a str>,
        words: u32,
    }

    const APP: Strings<'static> = Strings {
        path: Some("/var/containers/Bundle/Application/X/App.app/App"),
        image: Some("/usr/lib/libobjc.dylib"),
        message: "hello",
        subsystem: Some("com.example"),
        category: Some("net"),
        words: 0,
    };

    /// A type 8 record in Apple's layout (`shared/notes/ios-ostrace-apple.md`).
    fn record(s: &Strings<'_>) -> Vec<u8> {
        let z = |v: Option<&str>| {
            v.map(|t| {
                let mut b = t.as_bytes().to_vec();
                b.push(0);
                b
            })
            .unwrap_or_default()
        };
        let (path, image, message) = (z(s.path), z(s.image), z(Some(s.message)));
        let (subsystem, category) = (z(s.subsystem), z(s.category));
        let mut b = vec![0u8; HEADER_LEN];
        b[0] = RECORD_VERSION;
        b[1..5].copy_from_slice(&TYPE_LOG.to_le_bytes());
        b[5..9].copy_from_slice(&129u32.to_le_bytes());
        b[9..13].copy_from_slice(&42u32.to_le_bytes());
        b[37..39].copy_from_slice(&(path.len() as u16).to_le_bytes());
        b[55..63].copy_from_slice(&1_700_000_000u64.to_le_bytes());
        b[63..67].copy_from_slice(&250_000u32.to_le_bytes());
        b[67] = 0x04;
        b[68] = 0x11;
        b[107..109].copy_from_slice(&(image.len() as u16).to_le_bytes());
        b[109..113].copy_from_slice(&(message.len() as u32).to_le_bytes());
        b[117..121].copy_from_slice(&(subsystem.len() as u32).to_le_bytes());
        b[121..125].copy_from_slice(&(category.len() as u32).to_le_bytes());
        b[125..129].copy_from_slice(&s.words.to_le_bytes());
        b.extend(std::iter::repeat_n(0xAB, 8 * s.words as usize));
        for part in [path, image, message, subsystem, category] {
            b.extend(part);
        }
        b
    }

    #[test]
    fn reads_every_field_from_its_length() {
        let parsed = parse_entry(&record(&APP)).unwrap();
        assert_eq!(parsed.pid, 42);
        assert_eq!(parsed.seconds, 1_700_000_000);
        assert_eq!(parsed.microseconds, 250_000);
        assert_eq!(parsed.level, OsLogLevel::Fault);
        assert_eq!(
            parsed.filename,
            "/var/containers/Bundle/Application/X/App.app/App"
        );
        assert_eq!(parsed.image_name, "/usr/lib/libobjc.dylib");
        assert_eq!(parsed.message, "hello");
        assert_eq!(parsed.subsystem.as_deref(), Some("com.example"));
        assert_eq!(parsed.category.as_deref(), Some("net"));
    }

    #[test]
    fn the_words_between_header_and_strings_are_passed_over() {
        let parsed = parse_entry(&record(&Strings { words: 3, ..APP })).unwrap();
        assert_eq!(
            parsed.filename,
            "/var/containers/Bundle/Application/X/App.app/App"
        );
        assert_eq!(parsed.message, "hello");
    }

    /// A 0-length path shifts nothing: the image path is read where its length says, not
    /// taken for the process path.
    #[test]
    fn absent_strings_are_absent_and_shift_nothing() {
        let parsed = parse_entry(&record(&Strings {
            path: None,
            image: None,
            ..APP
        }))
        .unwrap();
        assert_eq!(parsed.filename, "");
        assert_eq!(parsed.image_name, "");
        assert_eq!(parsed.message, "hello");
        let only_subsystem = Strings {
            category: None,
            ..APP
        };
        let parsed = parse_entry(&record(&only_subsystem)).unwrap();
        assert_eq!(parsed.subsystem.as_deref(), Some("com.example"));
        assert_eq!(parsed.category, None);
        let only_category = Strings {
            subsystem: None,
            ..APP
        };
        let parsed = parse_entry(&record(&only_category)).unwrap();
        assert_eq!(parsed.subsystem, None);
        assert_eq!(parsed.category.as_deref(), Some("net"));
    }

    #[test]
    fn a_message_longer_than_sixteen_bits_is_read_whole() {
        let long = "m".repeat(70_000);
        let parsed = parse_entry(&record(&Strings {
            message: &long,
            ..APP
        }))
        .unwrap();
        assert_eq!(parsed.message.len(), 70_000);
    }

    #[test]
    fn other_record_types_are_recognised_not_read_as_lines() {
        for kind in [
            TYPE_ACTIVITY,
            TYPE_TRACE,
            TYPE_USER_ACTION,
            TYPE_TRANSITION,
            99,
        ] {
            let mut bytes = record(&APP);
            bytes[1..5].copy_from_slice(&kind.to_le_bytes());
            assert_eq!(parse_record(&bytes).unwrap(), OsTraceRecord::Other { kind });
            assert!(parse_entry(&bytes).is_err());
        }
    }

    #[test]
    fn records_apple_refuses_are_errors() {
        let good = record(&APP);
        let mut version = good.clone();
        version[0] = 0;
        assert!(parse_record(&version).is_err());
        let mut header = good.clone();
        header[5..9].copy_from_slice(&0u32.to_le_bytes());
        assert!(parse_record(&header).is_err());
        let mut longer = good.clone();
        longer.push(0);
        assert!(parse_record(&longer).is_err());
        assert!(parse_record(&good[..good.len() - 1]).is_err());
        let mut lying = good.clone();
        lying[109..113].copy_from_slice(&u32::MAX.to_le_bytes());
        lying[125..129].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(parse_record(&lying).is_err());
        assert!(parse_record(&good[..HEADER_LEN - 1]).is_err());
        assert!(parse_record(&[]).is_err());
    }
}
