//! The adbd transport's message framing: a 24-byte header of six little-endian words, then a payload.
//!
//! See `shared/notes/adb-wire.md`: the checksum is the plain byte sum of the payload, and the
//! magic word is the command inverted.

use tokio::io::{AsyncRead, AsyncReadExt};

use crate::Error;

/// `CNXN`: connect, sent by both sides once.
pub const A_CNXN: u32 = 0x4e58_4e43;
/// `AUTH`: token, signature or public key.
pub const A_AUTH: u32 = 0x4854_5541;
/// `OPEN`: the host opens a stream to a service.
pub const A_OPEN: u32 = 0x4e45_504f;
/// `OKAY`: a stream is ready, or a write was taken.
pub const A_OKAY: u32 = 0x5941_4b4f;
/// `WRTE`: data on a stream.
pub const A_WRTE: u32 = 0x4554_5257;
/// `CLSE`: a stream is closed.
pub const A_CLSE: u32 = 0x4553_4c43;
/// The protocol version that allows a peer to skip checksums; we always send correct sums anyway.
pub const A_VERSION: u32 = 0x0100_0001;
/// The largest payload this device accepts, as modern adbd announces.
pub const MAX_PAYLOAD: u32 = 1024 * 1024;

/// AUTH type: the device's random token.
pub const AUTH_TOKEN: u32 = 1;
/// AUTH type: the host's signature of the token.
pub const AUTH_SIGNATURE: u32 = 2;
/// AUTH type: the host's public key, which a phone shows in its "Allow USB debugging" dialog.
pub const AUTH_RSAPUBLICKEY: u32 = 3;

/// One transport message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// The command word (`A_CNXN`, `A_OPEN`, ...).
    pub command: u32,
    /// The first argument (for streams: the sender's local id).
    pub arg0: u32,
    /// The second argument (for streams: the receiver's id).
    pub arg1: u32,
    /// The payload.
    pub data: Vec<u8>,
}

impl Message {
    /// Builds a message from its parts.
    pub fn new(command: u32, arg0: u32, arg1: u32, data: Vec<u8>) -> Self {
        Self {
            command,
            arg0,
            arg1,
            data,
        }
    }

    /// Encodes header and payload into one buffer, with a correct checksum and magic.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(24 + self.data.len());
        // Payloads are bounded by MAX_PAYLOAD, so the length always fits in a u32.
        let length = u32::try_from(self.data.len()).unwrap_or(u32::MAX);
        for word in [
            self.command,
            self.arg0,
            self.arg1,
            length,
            checksum(&self.data),
            self.command ^ 0xffff_ffff,
        ] {
            out.extend_from_slice(&word.to_le_bytes());
        }
        out.extend_from_slice(&self.data);
        out
    }

    /// A short human name of the command, for traces.
    pub fn command_name(&self) -> &'static str {
        command_name(self.command)
    }
}

/// The four-letter name of a command word.
pub fn command_name(command: u32) -> &'static str {
    match command {
        A_CNXN => "CNXN",
        A_AUTH => "AUTH",
        A_OPEN => "OPEN",
        A_OKAY => "OKAY",
        A_WRTE => "WRTE",
        A_CLSE => "CLSE",
        _ => "????",
    }
}

/// The payload checksum adb uses: the wrapping sum of all bytes.
pub fn checksum(data: &[u8]) -> u32 {
    data.iter()
        .fold(0u32, |sum, byte| sum.wrapping_add(u32::from(*byte)))
}

/// Reads one message, refusing payloads above `max_payload` and a wrong magic word.
///
/// Returns `Ok(None)` on a clean end of stream before a header.
pub async fn read_message<R: AsyncRead + Unpin>(
    reader: &mut R,
    max_payload: u32,
) -> Result<Option<Message>, Error> {
    let mut header = [0u8; 24];
    match reader.read_exact(&mut header).await {
        Ok(_) => {}
        Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(error) => return Err(Error::Io(error)),
    }
    let word = |index: usize| {
        let mut bytes = [0u8; 4];
        bytes.copy_from_slice(&header[index * 4..index * 4 + 4]);
        u32::from_le_bytes(bytes)
    };
    let (command, arg0, arg1, length, _check, magic) =
        (word(0), word(1), word(2), word(3), word(4), word(5));
    if magic != command ^ 0xffff_ffff {
        return Err(Error::Protocol(format!(
            "bad magic {magic:#010x} for command {command:#010x}"
        )));
    }
    if length > max_payload {
        return Err(Error::Protocol(format!(
            "payload of {length} bytes exceeds {max_payload}"
        )));
    }
    let mut data = vec![0u8; length as usize];
    reader.read_exact(&mut data).await?;
    // The host may send version 0x01000001 and skip checksums, so they are not verified here.
    Ok(Some(Message {
        command,
        arg0,
        arg1,
        data,
    }))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn encode_then_read_round_trips() {
        let message = Message::new(A_WRTE, 7, 9, b"hello".to_vec());
        let bytes = message.encode();
        assert_eq!(bytes.len(), 29);
        assert_eq!(&bytes[16..20], &checksum(b"hello").to_le_bytes());
        let mut reader = &bytes[..];
        let back = read_message(&mut reader, MAX_PAYLOAD)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(back, message);
    }

    #[tokio::test]
    async fn bad_magic_is_refused() {
        let mut bytes = Message::new(A_OKAY, 1, 2, vec![]).encode();
        bytes[20] ^= 1;
        let mut reader = &bytes[..];
        assert!(read_message(&mut reader, MAX_PAYLOAD).await.is_err());
    }

    #[test]
    fn checksum_is_a_byte_sum() {
        assert_eq!(checksum(&[1, 2, 255]), 258);
    }
}
