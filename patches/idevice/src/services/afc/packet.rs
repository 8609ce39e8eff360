// Jackson Coxson

use tracing::debug;

use super::errors::AfcError;
use crate::{Idevice, IdeviceError};

use super::opcode::AfcOpcode;

/// The largest AFC packet read: a data read asks for at most 1 MiB, and a directory listing of
/// tens of thousands of names stays far below this.
const MAX_PACKET_LEN: u64 = 64 * 1024 * 1024;

#[derive(Clone, Copy, Debug)]
pub struct AfcPacketHeader {
    pub magic: u64,
    pub entire_len: u64,
    pub header_payload_len: u64,
    pub packet_num: u64,
    pub operation: AfcOpcode,
}

#[derive(Clone, Debug)]
pub struct AfcPacket {
    pub header: AfcPacketHeader,
    pub header_payload: Vec<u8>,
    pub payload: Vec<u8>,
}

impl AfcPacketHeader {
    pub const LEN: u64 = 40;

    pub fn serialize(&self) -> Vec<u8> {
        let mut res = Vec::with_capacity(Self::LEN as usize);

        res.extend_from_slice(&self.magic.to_le_bytes());
        res.extend_from_slice(&self.entire_len.to_le_bytes());
        res.extend_from_slice(&self.header_payload_len.to_le_bytes());
        res.extend_from_slice(&self.packet_num.to_le_bytes());
        res.extend_from_slice(&(self.operation as u64).to_le_bytes());

        res
    }

    pub async fn read(reader: &mut Idevice) -> Result<Self, IdeviceError> {
        let header_bytes = reader.read_raw(Self::LEN as usize).await?;
        let (chunks, _) = header_bytes.as_chunks::<8>();
        let res = Self {
            magic: u64::from_le_bytes(chunks[0]),
            entire_len: u64::from_le_bytes(chunks[1]),
            header_payload_len: u64::from_le_bytes(chunks[2]),
            packet_num: u64::from_le_bytes(chunks[3]),
            operation: match AfcOpcode::try_from(u64::from_le_bytes(chunks[4])) {
                Ok(o) => o,
                Err(_) => {
                    return Err(AfcError::UnknownOpcode.into());
                }
            },
        };
        if res.magic != super::MAGIC {
            return Err(AfcError::InvalidMagic.into());
        }
        Ok(res)
    }
}

impl AfcPacket {
    pub fn serialize(&self) -> Vec<u8> {
        let mut res = Vec::new();

        res.extend_from_slice(&self.header.serialize());
        res.extend_from_slice(&self.header_payload);
        res.extend_from_slice(&self.payload);

        res
    }

    pub async fn read(reader: &mut Idevice) -> Result<Self, IdeviceError> {
        let header = AfcPacketHeader::read(reader).await?;
        debug!("afc header: {header:?}");
        // Both lengths come from the peer: the header payload cannot be shorter than the
        // header, nor the packet than its header payload, nor the packet larger than any
        // answer to a request (a read asks for at most `MAX_TRANSFER`).
        let header_payload_len = header
            .header_payload_len
            .checked_sub(AfcPacketHeader::LEN)
            .ok_or(AfcError::OpHeaderInvalid)?;
        let payload_len = header
            .entire_len
            .checked_sub(header.header_payload_len)
            .ok_or(AfcError::OpHeaderInvalid)?;
        if header.entire_len > MAX_PACKET_LEN {
            return Err(AfcError::OpHeaderInvalid.into());
        }
        let header_payload = reader.read_raw(header_payload_len as usize).await?;

        let payload = if payload_len == 0 {
            Vec::new() // no payload
        } else {
            reader.read_raw(payload_len as usize).await?
        };

        let res = Self {
            header,
            header_payload,
            payload,
        };
        debug!("Recv afc: {res:?}");
        Ok(res)
    }
}
