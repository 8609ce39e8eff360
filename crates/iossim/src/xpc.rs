//! RemoteXPC's message format, with no I/O: the 24-byte wrapper (magic `0x29B00B92`, flags,
//! body length, message id, all little-endian) and the XPC object inside it (magic
//! `0x42133742`, version 5, then a type word and its payload; strings, data and dictionary
//! keys padded to 4 bytes). Read from the two clients that must accept it: pymobiledevice3
//! `remote/xpc_message.py` and idevice `src/xpc/format.rs` (they agree on every type used
//! here).
//!
//! Written by hand: no maintained Rust crate encodes XPC (idevice's codec is private to it, and
//! this crate must not lean on the driver's library). Decoding never panics: every length is
//! checked against what is left, nesting is bounded, and unknown types are errors.

/// The wrapper's magic.
const WRAPPER_MAGIC: u32 = 0x29B0_0B92;
/// The object payload's magic.
const PAYLOAD_MAGIC: u32 = 0x4213_3742;
/// The object payload's version.
const PAYLOAD_VERSION: u32 = 5;
/// The wrapper's fixed length.
pub(crate) const WRAPPER_LEN: usize = 24;
/// The largest message body accepted from a client.
const MAX_BODY: u64 = 4 * 1024 * 1024;
/// How deep arrays and dictionaries may nest.
const MAX_DEPTH: usize = 32;

/// Wrapper flags (pymobiledevice3 `XpcFlags`).
pub(crate) mod flags {
    /// Set on every message.
    pub const ALWAYS_SET: u32 = 0x0000_0001;
    /// The message carries an object.
    pub const DATA_PRESENT: u32 = 0x0000_0100;
    /// The sender waits for a reply.
    pub const WANTING_REPLY: u32 = 0x0001_0000;
    /// This is a reply.
    pub const REPLY: u32 = 0x0002_0000;
}

const NULL: u32 = 0x1000;
const BOOL: u32 = 0x2000;
const INT64: u32 = 0x3000;
const UINT64: u32 = 0x4000;
const DOUBLE: u32 = 0x5000;
const DATE: u32 = 0x7000;
const DATA: u32 = 0x8000;
const STRING: u32 = 0x9000;
const UUID: u32 = 0xA000;
const ARRAY: u32 = 0xE000;
const DICTIONARY: u32 = 0xF000;

/// One XPC object.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Xpc {
    Null,
    Bool(bool),
    Int64(i64),
    UInt64(u64),
    Double(f64),
    /// Nanoseconds since 1970.
    Date(i64),
    Data(Vec<u8>),
    String(String),
    Uuid([u8; 16]),
    Array(Vec<Xpc>),
    /// Keys in wire order.
    Dictionary(Vec<(String, Xpc)>),
}

impl Xpc {
    /// A dictionary from `(key, value)` pairs.
    pub(crate) fn dict<const N: usize>(pairs: [(&str, Xpc); N]) -> Xpc {
        Xpc::Dictionary(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
    }

    /// A string.
    pub(crate) fn string(text: impl Into<String>) -> Xpc {
        Xpc::String(text.into())
    }

    /// The value under `key` of a dictionary.
    pub(crate) fn get(&self, key: &str) -> Option<&Xpc> {
        match self {
            Xpc::Dictionary(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The text of a string.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Xpc::String(s) => Some(s),
            _ => None,
        }
    }

    fn encode_into(&self, out: &mut Vec<u8>) {
        match self {
            Xpc::Null => put32(out, NULL),
            Xpc::Bool(b) => {
                put32(out, BOOL);
                put32(out, u32::from(*b));
            }
            Xpc::Int64(n) => {
                put32(out, INT64);
                out.extend_from_slice(&n.to_le_bytes());
            }
            Xpc::UInt64(n) => {
                put32(out, UINT64);
                out.extend_from_slice(&n.to_le_bytes());
            }
            Xpc::Double(f) => {
                put32(out, DOUBLE);
                out.extend_from_slice(&f.to_le_bytes());
            }
            Xpc::Date(ns) => {
                put32(out, DATE);
                out.extend_from_slice(&ns.to_le_bytes());
            }
            Xpc::Data(bytes) => {
                put32(out, DATA);
                put32(out, len32(bytes.len()));
                out.extend_from_slice(bytes);
                pad(out, bytes.len());
            }
            Xpc::String(text) => {
                put32(out, STRING);
                put32(out, len32(text.len() + 1));
                cstring(out, text);
            }
            Xpc::Uuid(bytes) => {
                put32(out, UUID);
                out.extend_from_slice(bytes);
            }
            Xpc::Array(items) => {
                put32(out, ARRAY);
                let mut body = Vec::new();
                put32(&mut body, len32(items.len()));
                for item in items {
                    item.encode_into(&mut body);
                }
                put32(out, len32(body.len()));
                out.extend_from_slice(&body);
            }
            Xpc::Dictionary(entries) => {
                put32(out, DICTIONARY);
                let mut body = Vec::new();
                put32(&mut body, len32(entries.len()));
                for (key, value) in entries {
                    cstring(&mut body, key);
                    value.encode_into(&mut body);
                }
                put32(out, len32(body.len()));
                out.extend_from_slice(&body);
            }
        }
    }
}

/// One message: the wrapper's flags and id, and its object when it carries one.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Message {
    pub flags: u32,
    pub id: u64,
    pub body: Option<Xpc>,
}

impl Message {
    /// A reply to message `id` carrying `body`.
    pub(crate) fn reply(id: u64, body: Xpc) -> Message {
        Message {
            flags: flags::ALWAYS_SET | flags::DATA_PRESENT | flags::REPLY,
            id,
            body: Some(body),
        }
    }

    /// A message that is not a reply, carrying `body`.
    pub(crate) fn new(id: u64, body: Xpc) -> Message {
        Message {
            flags: flags::ALWAYS_SET | flags::DATA_PRESENT,
            id,
            body: Some(body),
        }
    }

    /// The wire bytes.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut body = Vec::new();
        if let Some(object) = &self.body {
            put32(&mut body, PAYLOAD_MAGIC);
            put32(&mut body, PAYLOAD_VERSION);
            object.encode_into(&mut body);
        }
        let mut out = Vec::with_capacity(WRAPPER_LEN + body.len());
        put32(&mut out, WRAPPER_MAGIC);
        put32(&mut out, self.flags);
        out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        out.extend_from_slice(&self.id.to_le_bytes());
        out.extend_from_slice(&body);
        out
    }

    /// A message whose body is arrays nested `depth` deep around a null: what a hostile phone
    /// could send to make a recursive decoder overflow its stack (issue 38).
    pub(crate) fn nested_arrays(depth: u32) -> Vec<u8> {
        let mut body = Vec::with_capacity(12 * depth as usize + 12);
        put32(&mut body, PAYLOAD_MAGIC);
        put32(&mut body, PAYLOAD_VERSION);
        let inner = |level: u32| 4 + 12 * u64::from(depth - level);
        for level in 0..depth {
            put32(&mut body, ARRAY);
            put32(&mut body, len32(inner(level + 1) as usize));
            put32(&mut body, 1);
        }
        put32(&mut body, NULL);
        Self::wrapper(body.len() as u64, &body)
    }

    /// A wrapper that claims a body of `len` bytes and carries none (a lying length).
    pub(crate) fn claiming(len: u64) -> Vec<u8> {
        Self::wrapper(len, &[])
    }

    fn wrapper(len: u64, body: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(WRAPPER_LEN + body.len());
        put32(&mut out, WRAPPER_MAGIC);
        put32(&mut out, flags::ALWAYS_SET | flags::DATA_PRESENT);
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&0u64.to_le_bytes());
        out.extend_from_slice(body);
        out
    }

    /// Decodes one message from the start of `buf`: `Ok(None)` when `buf` holds only part of
    /// one, otherwise the message and how many bytes it took. A body that is not a well-formed
    /// object leaves `body` empty, as both clients treat it.
    pub(crate) fn decode(buf: &[u8]) -> Result<Option<(Message, usize)>, DecodeError> {
        if buf.len() < WRAPPER_LEN {
            return Ok(None);
        }
        let mut reader = Reader { buf, at: 0 };
        if reader.u32()? != WRAPPER_MAGIC {
            return Err(DecodeError("a RemoteXPC message without its magic"));
        }
        let flags = reader.u32()?;
        let size = reader.u64()?;
        let id = reader.u64()?;
        if size > MAX_BODY {
            return Err(DecodeError("a RemoteXPC message over 4 MiB"));
        }
        let total = WRAPPER_LEN + size as usize;
        if buf.len() < total {
            return Ok(None);
        }
        let body = decode_body(&buf[WRAPPER_LEN..total]);
        Ok(Some((Message { flags, id, body }, total)))
    }
}

/// Why bytes are not a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DecodeError(pub &'static str);

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

fn decode_body(body: &[u8]) -> Option<Xpc> {
    let mut reader = Reader { buf: body, at: 0 };
    if reader.u32().ok()? != PAYLOAD_MAGIC || reader.u32().ok()? != PAYLOAD_VERSION {
        return None;
    }
    reader.object(0).ok()
}

struct Reader<'a> {
    buf: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], DecodeError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&end| end <= self.buf.len())
            .ok_or(DecodeError("an XPC object cut short"))?;
        let bytes = &self.buf[self.at..end];
        self.at = end;
        Ok(bytes)
    }

    fn u32(&mut self) -> Result<u32, DecodeError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64, DecodeError> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(a))
    }

    fn skip_pad(&mut self, len: usize) -> Result<(), DecodeError> {
        self.take(padding(len)).map(|_| ())
    }

    /// A NUL-terminated string and its padding.
    fn cstring(&mut self) -> Result<String, DecodeError> {
        let rest = &self.buf[self.at.min(self.buf.len())..];
        let end = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or(DecodeError("an XPC string without its NUL"))?;
        let text = String::from_utf8_lossy(&rest[..end]).into_owned();
        self.take(end + 1)?;
        self.skip_pad(end + 1)?;
        Ok(text)
    }

    fn object(&mut self, depth: usize) -> Result<Xpc, DecodeError> {
        if depth > MAX_DEPTH {
            return Err(DecodeError("XPC objects nested too deeply"));
        }
        Ok(match self.u32()? {
            NULL => Xpc::Null,
            BOOL => Xpc::Bool(self.u32()? & 0xff != 0),
            INT64 => Xpc::Int64(self.u64()? as i64),
            UINT64 => Xpc::UInt64(self.u64()?),
            DOUBLE => Xpc::Double(f64::from_bits(self.u64()?)),
            DATE => Xpc::Date(self.u64()? as i64),
            DATA => {
                let len = self.u32()? as usize;
                let bytes = self.take(len)?.to_vec();
                self.skip_pad(len)?;
                Xpc::Data(bytes)
            }
            STRING => {
                let len = self.u32()? as usize;
                let bytes = self.take(len)?;
                let text = bytes.strip_suffix(&[0]).unwrap_or(bytes);
                let text = String::from_utf8_lossy(text).into_owned();
                self.skip_pad(len)?;
                Xpc::String(text)
            }
            UUID => {
                let mut a = [0u8; 16];
                a.copy_from_slice(self.take(16)?);
                Xpc::Uuid(a)
            }
            ARRAY => {
                let _len = self.u32()?;
                let count = self.u32()? as usize;
                let mut items = Vec::with_capacity(count.min(1024));
                for _ in 0..count {
                    items.push(self.object(depth + 1)?);
                }
                Xpc::Array(items)
            }
            DICTIONARY => {
                let _len = self.u32()?;
                let count = self.u32()? as usize;
                let mut entries = Vec::with_capacity(count.min(1024));
                for _ in 0..count {
                    let key = self.cstring()?;
                    entries.push((key, self.object(depth + 1)?));
                }
                Xpc::Dictionary(entries)
            }
            _ => return Err(DecodeError("an XPC type this phone does not send")),
        })
    }
}

fn put32(out: &mut Vec<u8>, value: u32) {
    out.extend_from_slice(&value.to_le_bytes());
}

/// A length as the wire's `u32` (what the phone sends never nears 4 GiB).
fn len32(len: usize) -> u32 {
    u32::try_from(len).unwrap_or(u32::MAX)
}

fn padding(len: usize) -> usize {
    (4 - len % 4) % 4
}

fn pad(out: &mut Vec<u8>, len: usize) {
    out.extend(std::iter::repeat_n(0, padding(len)));
}

fn cstring(out: &mut Vec<u8>, text: &str) {
    out.extend_from_slice(text.as_bytes());
    out.push(0);
    pad(out, text.len() + 1);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn sample() -> Xpc {
        Xpc::dict([
            ("MessageType", Xpc::string("Handshake")),
            ("MessagingProtocolVersion", Xpc::UInt64(7)),
            ("UUID", Xpc::Uuid([7; 16])),
            (
                "Properties",
                Xpc::dict([
                    ("SensitivePropertiesVisible", Xpc::Bool(true)),
                    ("n", Xpc::Int64(-3)),
                    ("d", Xpc::Data(vec![1, 2, 3, 4, 5])),
                    ("f", Xpc::Double(1.5)),
                    ("t", Xpc::Date(1_700_000_000_000_000_000)),
                    ("none", Xpc::Null),
                ]),
            ),
            (
                "Services",
                Xpc::Array(vec![Xpc::string("a"), Xpc::dict([])]),
            ),
        ])
    }

    #[test]
    fn a_message_goes_through_the_wire_unchanged() {
        let message = Message::new(1, sample());
        let bytes = message.encode();
        assert_eq!(bytes.len() % 4, 0);
        let (back, used) = Message::decode(&bytes).unwrap().unwrap();
        assert_eq!(used, bytes.len());
        assert_eq!(back, message);
        // Half a message is not one yet.
        assert_eq!(Message::decode(&bytes[..bytes.len() - 1]).unwrap(), None);
    }

    #[test]
    fn the_layout_is_the_clients_one() {
        // pymobiledevice3's `create_xpc_wrapper({"a": "bc"}, message_id=1, wanting_reply=True)`:
        // wrapper, payload header, dictionary (length, count, key "a" padded, string "bc").
        let message = Message {
            flags: flags::ALWAYS_SET | flags::DATA_PRESENT | flags::WANTING_REPLY,
            id: 1,
            body: Some(Xpc::dict([("a", Xpc::string("bc"))])),
        };
        let expected: Vec<u8> = [
            &0x29B0_0B92u32.to_le_bytes()[..],
            &0x0001_0101u32.to_le_bytes(),
            &36u64.to_le_bytes(),
            &1u64.to_le_bytes(),
            &0x4213_3742u32.to_le_bytes(),
            &5u32.to_le_bytes(),
            &0xF000u32.to_le_bytes(),
            &20u32.to_le_bytes(),
            &1u32.to_le_bytes(),
            b"a\0\0\0",
            &0x9000u32.to_le_bytes(),
            &3u32.to_le_bytes(),
            b"bc\0\0",
        ]
        .concat();
        assert_eq!(message.encode(), expected);
    }

    #[test]
    fn garbage_is_an_error_or_a_message_without_a_body_never_a_panic() {
        let good = Message::new(9, sample()).encode();
        // Every prefix and every single-byte corruption of a good message.
        for cut in 0..good.len() {
            let _ = Message::decode(&good[..cut]);
            for flip in [0x00u8, 0xff, 0x80] {
                let mut bad = good.clone();
                bad[cut] ^= flip | 1;
                let _ = Message::decode(&bad);
            }
        }
        // A huge declared size and deep nesting are refused.
        let mut huge = good.clone();
        huge[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(Message::decode(&huge).is_err());
        let mut deep = Xpc::Null;
        for _ in 0..100 {
            deep = Xpc::Array(vec![deep]);
        }
        let nested = Message::new(1, deep).encode();
        let (message, _) = Message::decode(&nested).unwrap().unwrap();
        assert_eq!(message.body, None);
    }
}
