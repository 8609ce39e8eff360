//! instruments' remote server (`com.apple.instruments.remoteserver`, the developer disk
//! image's DTX service on iOS 16 and earlier), with one channel service:
//! `com.apple.instruments.server.services.deviceinfo` and its `runningProcesses`, the process
//! list the iOS driver reads. DTX framing as idevice's `dvt/message.rs` reads it: a 32-byte
//! message header (magic `0x1F3D5B79`), a 16-byte payload header, the auxiliary values, then
//! an NSKeyedArchiver payload.

use plist::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{BoxStream, IDLE, MAX_REQUESTS};
use crate::model::{Hostile, SimPhone};

const DTX_MAGIC: u32 = 0x1F3D_5B79;
const DEVICE_INFO: &str = "com.apple.instruments.server.services.deviceinfo";
/// Message types of the payload header.
const TYPE_OK: u8 = 0;
const TYPE_INVOKE: u8 = 2;
const TYPE_OBJECT: u8 = 3;
const TYPE_ERROR: u8 = 4;

/// An auxiliary value as a client sends it.
#[derive(Debug, Clone, PartialEq)]
enum Aux {
    Null,
    String(String),
    Bytes(Vec<u8>),
    U32(u32),
    I64(i64),
    Double(f64),
}

struct Message {
    identifier: u32,
    conversation: u32,
    channel: i32,
    expects_reply: bool,
    aux: Vec<Aux>,
    data: Option<Value>,
}

fn le32(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at + 4)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

fn le64(b: &[u8], at: usize) -> Option<u64> {
    let s = b.get(at..at + 8)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(s);
    Some(u64::from_le_bytes(a))
}

/// The auxiliary section: a 16-byte header, then `type u32` + value pairs (`0x0a` separators).
fn parse_aux(bytes: &[u8]) -> Option<Vec<Aux>> {
    let mut values = Vec::new();
    let mut at = 16;
    while at + 4 <= bytes.len() {
        let kind = le32(bytes, at)?;
        at += 4;
        match kind & 0xFF {
            0x0a => {}
            0x01 | 0x02 => {
                let len = le32(bytes, at)? as usize;
                at += 4;
                let raw = bytes.get(at..at + len)?.to_vec();
                at += len;
                values.push(if kind & 0xFF == 0x01 {
                    Aux::String(String::from_utf8_lossy(&raw).into_owned())
                } else {
                    Aux::Bytes(raw)
                });
            }
            0x03 => {
                values.push(Aux::U32(le32(bytes, at)?));
                at += 4;
            }
            0x06 => {
                values.push(Aux::I64(le64(bytes, at)? as i64));
                at += 8;
            }
            0x09 => {
                values.push(Aux::Double(f64::from_bits(le64(bytes, at)?)));
                at += 8;
            }
            _ => return None,
        }
    }
    let _ = Aux::Null;
    Some(values)
}

fn serialize_aux(values: &[Aux]) -> Vec<u8> {
    let mut body = Vec::new();
    for value in values {
        body.extend_from_slice(&0x0a_u32.to_le_bytes());
        match value {
            Aux::Null => {}
            Aux::String(s) => {
                body.extend_from_slice(&1u32.to_le_bytes());
                body.extend_from_slice(&(s.len() as u32).to_le_bytes());
                body.extend_from_slice(s.as_bytes());
            }
            Aux::Bytes(b) => {
                body.extend_from_slice(&2u32.to_le_bytes());
                body.extend_from_slice(&(b.len() as u32).to_le_bytes());
                body.extend_from_slice(b);
            }
            Aux::U32(v) => {
                body.extend_from_slice(&3u32.to_le_bytes());
                body.extend_from_slice(&v.to_le_bytes());
            }
            Aux::I64(v) => {
                body.extend_from_slice(&6u32.to_le_bytes());
                body.extend_from_slice(&v.to_le_bytes());
            }
            Aux::Double(v) => {
                body.extend_from_slice(&9u32.to_le_bytes());
                body.extend_from_slice(&v.to_bits().to_le_bytes());
            }
        }
    }
    let mut out = Vec::with_capacity(body.len() + 16);
    out.extend_from_slice(&496u32.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&body);
    out
}

fn archive(value: Value) -> Vec<u8> {
    ns_keyed_archive::encode::encode_to_bytes(value).unwrap_or_default()
}

async fn read_message(stream: &mut BoxStream) -> std::io::Result<Option<Message>> {
    let mut payload = Vec::new();
    let header = loop {
        let mut head = [0u8; 32];
        match tokio::time::timeout(IDLE, stream.read_exact(&mut head)).await {
            Err(_) => return Ok(None),
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
            Ok(Err(e)) => return Err(e),
            Ok(Ok(_)) => {}
        }
        if le32(&head, 0) != Some(DTX_MAGIC) {
            return Err(super::invalid("a DTX message without its magic".into()));
        }
        let fragment = u16::from_le_bytes([head[8], head[9]]);
        let fragments = u16::from_le_bytes([head[10], head[11]]);
        let length = le32(&head, 12).unwrap_or(0) as usize;
        if length > 16 * 1024 * 1024 {
            return Err(super::invalid(format!("a {length}-byte DTX message")));
        }
        if fragments > 1 && fragment == 0 {
            // The first of several fragments carries only the header.
            continue;
        }
        let mut part = vec![0; length];
        stream.read_exact(&mut part).await?;
        payload.extend_from_slice(&part);
        if fragment + 1 >= fragments {
            break head;
        }
    };
    let identifier = le32(&header, 16).unwrap_or(0);
    let conversation = le32(&header, 20).unwrap_or(0);
    let channel = le32(&header, 24).unwrap_or(0) as i32;
    let expects_reply = le32(&header, 28) == Some(1);
    let aux_len = le32(&payload, 4).unwrap_or(0) as usize;
    let total = le32(&payload, 8).unwrap_or(0) as usize;
    let aux = match payload.get(16..16 + aux_len) {
        Some(bytes) if aux_len > 0 => parse_aux(bytes).unwrap_or_default(),
        _ => Vec::new(),
    };
    let data = payload
        .get(16 + aux_len..16 + total.max(aux_len))
        .filter(|d| !d.is_empty())
        .and_then(|d| ns_keyed_archive::decode::from_bytes(d).ok());
    Ok(Some(Message {
        identifier,
        conversation,
        channel,
        expects_reply,
        aux,
        data,
    }))
}

#[allow(clippy::too_many_arguments)]
async fn write_message(
    stream: &mut BoxStream,
    identifier: u32,
    conversation: u32,
    channel: i32,
    expects_reply: bool,
    kind: u8,
    aux: &[Aux],
    data: Option<Value>,
) -> std::io::Result<()> {
    let aux = if aux.is_empty() {
        Vec::new()
    } else {
        serialize_aux(aux)
    };
    let data = data.map(archive).unwrap_or_default();
    let mut payload = vec![kind, 0, 0, 0];
    payload.extend_from_slice(&(aux.len() as u32).to_le_bytes());
    payload.extend_from_slice(&((aux.len() + data.len()) as u32).to_le_bytes());
    payload.extend_from_slice(&0u32.to_le_bytes());
    let mut out = Vec::with_capacity(32 + payload.len() + aux.len() + data.len());
    out.extend_from_slice(&DTX_MAGIC.to_le_bytes());
    out.extend_from_slice(&32u32.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&((payload.len() + aux.len() + data.len()) as u32).to_le_bytes());
    out.extend_from_slice(&identifier.to_le_bytes());
    out.extend_from_slice(&conversation.to_le_bytes());
    out.extend_from_slice(&channel.to_le_bytes());
    out.extend_from_slice(&u32::from(expects_reply).to_le_bytes());
    out.extend_from_slice(&payload);
    out.extend_from_slice(&aux);
    out.extend_from_slice(&data);
    stream.write_all(&out).await?;
    stream.flush().await
}

fn running_processes(phone: &SimPhone) -> Value {
    Value::Array(
        phone
            .processes()
            .iter()
            .map(|p| {
                let mut d = plist::Dictionary::new();
                d.insert("pid".into(), Value::from(u64::from(p.pid)));
                d.insert("name".into(), Value::from(p.name()));
                d.insert("realAppName".into(), Value::from(p.executable.clone()));
                d.insert("isApplication".into(), Value::Boolean(p.is_application));
                if let Some(bundle) = &p.bundle_id {
                    d.insert("bundleIdentifier".into(), Value::from(bundle.clone()));
                }
                d.insert("startDate".into(), Value::Date(p.started.into()));
                Value::Dictionary(d)
            })
            .collect(),
    )
}

fn archived_string(aux: Option<&Aux>) -> Option<String> {
    match aux? {
        Aux::Bytes(b) => ns_keyed_archive::decode::from_bytes(b).ok()?.into_string(),
        Aux::String(s) => Some(s.clone()),
        _ => None,
    }
}

/// A DTX message whose payload header's aux length (100) exceeds its total length (10).
fn lying_message() -> Vec<u8> {
    let mut payload = vec![TYPE_INVOKE, 0, 0, 0];
    for word in [100u32, 10, 0] {
        payload.extend_from_slice(&word.to_le_bytes());
    }
    let mut out = Vec::new();
    out.extend_from_slice(&DTX_MAGIC.to_le_bytes());
    out.extend_from_slice(&32u32.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    for word in [payload.len() as u32, 1, 0, 0, 0] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    out.extend_from_slice(&payload);
    out
}

pub(crate) async fn serve(phone: &SimPhone, mut stream: BoxStream) -> std::io::Result<()> {
    if phone
        .take_hostile(|h| (*h == Hostile::DtxLength).then_some(()))
        .is_some()
    {
        stream.write_all(&lying_message()).await?;
        stream.flush().await?;
    }
    // The server announces its capabilities first, as the phone does.
    announce_capabilities(&mut stream).await?;
    let mut channels: std::collections::HashMap<i32, String> = std::collections::HashMap::new();
    for _ in 0..MAX_REQUESTS {
        let Some(message) = read_message(&mut stream).await? else {
            return Ok(());
        };
        let selector = message
            .data
            .as_ref()
            .and_then(Value::as_string)
            .unwrap_or("")
            .to_owned();
        let reply_channel = message.channel;
        let (kind, data) = match (message.channel, selector.as_str()) {
            (0, "_notifyOfPublishedCapabilities:") | (0, "_channelCanceled:") => continue,
            (0, "_requestChannelWithCode:identifier:") => {
                let code = match message.aux.first() {
                    Some(Aux::U32(code)) => *code as i32,
                    Some(Aux::I64(code)) => *code as i32,
                    _ => 0,
                };
                match archived_string(message.aux.get(1)) {
                    Some(identifier) if identifier == DEVICE_INFO => {
                        // Counted, so a test can tell a channel kept from one opened per use.
                        phone.record_open(DEVICE_INFO, None);
                        channels.insert(code, identifier);
                        (TYPE_OK, None)
                    }
                    other => (
                        TYPE_ERROR,
                        Some(Value::from(format!(
                            "Unable to find a service named {}",
                            other.unwrap_or_default()
                        ))),
                    ),
                }
            }
            (channel, "runningProcesses") if channels.contains_key(&channel) => {
                (TYPE_OBJECT, Some(running_processes(phone)))
            }
            (channel, "execnameForPid:") if channels.contains_key(&channel) => {
                let pid = match message.aux.first() {
                    Some(Aux::Bytes(b)) => ns_keyed_archive::decode::from_bytes(b)
                        .ok()
                        .and_then(|v| v.as_unsigned_integer()),
                    Some(Aux::U32(v)) => Some(u64::from(*v)),
                    Some(Aux::I64(v)) => u64::try_from(*v).ok(),
                    _ => None,
                };
                let name = phone
                    .processes()
                    .into_iter()
                    .find(|p| Some(u64::from(p.pid)) == pid)
                    .map(|p| p.executable)
                    .unwrap_or_default();
                (TYPE_OBJECT, Some(Value::from(name)))
            }
            _ => (
                TYPE_ERROR,
                Some(Value::from(format!("unknown selector {selector:?}"))),
            ),
        };
        if message.expects_reply {
            write_message(
                &mut stream,
                message.identifier,
                message.conversation + 1,
                reply_channel,
                false,
                kind,
                &[],
                data,
            )
            .await?;
        }
    }
    Ok(())
}

/// `_notifyOfPublishedCapabilities:`, the first message a DTX server sends (its own message 1):
/// the device-info channel, uncompressed.
async fn announce_capabilities(stream: &mut BoxStream) -> std::io::Result<()> {
    let mut capabilities = plist::Dictionary::new();
    capabilities.insert(DEVICE_INFO.into(), Value::from(1u64));
    capabilities.insert(
        "com.apple.private.DTXBlockCompression".into(),
        Value::from(0u64),
    );
    capabilities.insert("com.apple.private.DTXConnection".into(), Value::from(1u64));
    write_message(
        stream,
        1,
        0,
        0,
        false,
        TYPE_INVOKE,
        &[Aux::Bytes(archive(Value::Dictionary(capabilities)))],
        Some(Value::from("_notifyOfPublishedCapabilities:")),
    )
    .await?;
    Ok(())
}
