//! The wire on top: usbmuxd's plist protocol on loopback TCP or a Unix socket. Each packet is a
//! 16-byte little-endian header (`length` including the header, `version` 1, `message` 8 =
//! plist, `tag`) and an XML plist; answers echo the tag. `ListDevices`, `Listen` (then
//! `Attached`/`Detached` with tag 0), `ReadPairRecord`, `ReadBUID`, `SavePairRecord`,
//! `DeletePairRecord` and `Connect`, after whose `Result` 0 the socket is a pipe to a port on
//! the phone, handed to [`crate::services::serve`].

use plist::{Dictionary, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::coredevice;
use crate::model::{Hostile, Trust};
use crate::services::{self, BoxStream, CORE_DEVICE_PROXY, Device, Via, dict};

/// The device id usbmuxd gives the simulated phone.
pub const DEVICE_ID: u64 = 1;
const PLIST_MESSAGE: u32 = 8;
const PLIST_VERSION: u32 = 1;

/// usbmuxd's result codes (as pymobiledevice3's `UsbmuxdResult` and idevice list them).
mod result {
    pub const OK: u64 = 0;
    pub const BAD_COMMAND: u64 = 1;
    pub const BAD_DEV: u64 = 2;
    pub const CONNREFUSED: u64 = 3;
    pub const BAD_VERSION: u64 = 6;
}

struct Packet {
    version: u32,
    tag: u32,
    body: Option<Dictionary>,
}

async fn read_packet(stream: &mut BoxStream) -> std::io::Result<Option<Packet>> {
    let mut head = [0u8; 16];
    match stream.read_exact(&mut head).await {
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
        Ok(_) => {}
    }
    let word = |i: usize| u32::from_le_bytes([head[i], head[i + 1], head[i + 2], head[i + 3]]);
    let (length, version, message, tag) = (word(0), word(4), word(8), word(12));
    if !(16..=1024 * 1024).contains(&length) {
        return Err(services::invalid(format!(
            "a usbmuxd packet of {length} bytes"
        )));
    }
    let mut body = vec![0; length as usize - 16];
    stream.read_exact(&mut body).await?;
    let body = if message == PLIST_MESSAGE {
        plist::from_bytes::<Value>(&body)
            .ok()
            .and_then(Value::into_dictionary)
    } else {
        None
    };
    Ok(Some(Packet { version, tag, body }))
}

async fn send(stream: &mut BoxStream, tag: u32, value: &Dictionary) -> std::io::Result<()> {
    let body = services::xml(value);
    let mut out = Vec::with_capacity(16 + body.len());
    out.extend_from_slice(&((16 + body.len()) as u32).to_le_bytes());
    out.extend_from_slice(&PLIST_VERSION.to_le_bytes());
    out.extend_from_slice(&PLIST_MESSAGE.to_le_bytes());
    out.extend_from_slice(&tag.to_le_bytes());
    out.extend_from_slice(&body);
    stream.write_all(&out).await?;
    stream.flush().await
}

async fn send_result(stream: &mut BoxStream, tag: u32, number: u64) -> std::io::Result<()> {
    let reply = dict([
        ("MessageType", Value::from("Result")),
        ("Number", Value::from(number)),
    ]);
    send(stream, tag, &reply).await
}

fn attached_record(device: &Device) -> Dictionary {
    let udid = device.phone.profile().udid;
    let properties = dict([
        ("ConnectionSpeed", Value::from(480_000_000u64)),
        ("ConnectionType", Value::from("USB")),
        ("DeviceID", Value::from(DEVICE_ID)),
        ("LocationID", Value::from(0x0141_0000u64)),
        ("ProductID", Value::from(0x12a8u64)),
        ("SerialNumber", Value::from(udid.clone())),
        ("USBSerialNumber", Value::from(udid.replace('-', ""))),
    ]);
    dict([
        ("DeviceID", Value::from(DEVICE_ID)),
        ("MessageType", Value::from("Attached")),
        ("Properties", Value::Dictionary(properties)),
    ])
}

fn detached_record() -> Dictionary {
    dict([
        ("DeviceID", Value::from(DEVICE_ID)),
        ("MessageType", Value::from("Detached")),
    ])
}

fn text<'a>(d: &'a Dictionary, key: &str) -> Option<&'a str> {
    d.get(key).and_then(Value::as_string)
}

/// One client of usbmuxd, until it leaves or becomes a device connection.
pub(crate) async fn serve_client(device: Device, stream: BoxStream) {
    match client_loop(&device, stream).await {
        Ok(Some((service, pipe))) => connect(device, service, pipe).await,
        Ok(None) => {}
        Err(error) => tracing::debug!(%error, "usbmuxd client ended"),
    }
}

/// Serves usbmuxd requests; a successful `Connect` returns the service and the socket.
async fn client_loop(
    device: &Device,
    mut owned: BoxStream,
) -> std::io::Result<Option<(String, BoxStream)>> {
    let stream = &mut owned;
    for _ in 0..services::MAX_REQUESTS {
        let Some(packet) = read_packet(stream).await? else {
            return Ok(None);
        };
        let tag = packet.tag;
        if packet.version != PLIST_VERSION {
            send_result(stream, tag, result::BAD_VERSION).await?;
            continue;
        }
        let Some(body) = packet.body else {
            send_result(stream, tag, result::BAD_COMMAND).await?;
            continue;
        };
        let phone = &device.phone;
        let attached = phone.attached();
        let ours = |udid: Option<&str>| attached && udid == Some(phone.profile().udid.as_str());
        match text(&body, "MessageType").unwrap_or("") {
            "ListDevices" => {
                if let Some(len) = phone.take_hostile(|h| match h {
                    Hostile::UsbmuxdLength(len) => Some(*len),
                    _ => None,
                }) {
                    let mut header = len.to_le_bytes().to_vec();
                    for word in [PLIST_VERSION, PLIST_MESSAGE, tag] {
                        header.extend_from_slice(&word.to_le_bytes());
                    }
                    stream.write_all(&header).await?;
                    stream.flush().await?;
                    continue;
                }
                let list = if attached {
                    vec![Value::Dictionary(attached_record(device))]
                } else {
                    Vec::new()
                };
                send(stream, tag, &dict([("DeviceList", Value::Array(list))])).await?;
            }
            "ReadBUID" => {
                let buid = device.pairing.system_buid.clone();
                send(stream, tag, &dict([("BUID", Value::from(buid))])).await?;
            }
            "ReadPairRecord" => {
                if ours(text(&body, "PairRecordID")) && phone.trust() != Trust::NotPaired {
                    let data = Value::Data(device.pairing.record_bytes());
                    send(stream, tag, &dict([("PairRecordData", data)])).await?;
                } else {
                    send_result(stream, tag, result::BAD_DEV).await?;
                }
            }
            "SavePairRecord" | "DeletePairRecord" => {
                // This usbmuxd's one record belongs to the phone's own pairing; it is kept.
                send_result(stream, tag, result::OK).await?;
            }
            "Listen" => {
                send_result(stream, tag, result::OK).await?;
                listen(device, stream).await?;
                return Ok(None);
            }
            "Connect" => {
                let id = body.get("DeviceID").and_then(Value::as_unsigned_integer);
                let port = body
                    .get("PortNumber")
                    .and_then(Value::as_unsigned_integer)
                    .and_then(|p| u16::try_from(p).ok())
                    .map(u16::from_be);
                if id != Some(DEVICE_ID) || !attached {
                    send_result(stream, tag, result::BAD_DEV).await?;
                    continue;
                }
                let Some(service) = port.and_then(|p| device.claim(p)) else {
                    send_result(stream, tag, result::CONNREFUSED).await?;
                    continue;
                };
                send_result(stream, tag, result::OK).await?;
                return Ok(Some((service, owned)));
            }
            other => {
                tracing::debug!(message = other, "usbmuxd: unknown message");
                send_result(stream, tag, result::BAD_COMMAND).await?;
            }
        }
    }
    Ok(None)
}

/// Runs a device connection until it ends or the phone is unplugged.
async fn connect(device: Device, service: String, pipe: BoxStream) {
    let mut plug = device.phone.plug();
    let unplugged = async move {
        loop {
            if !*plug.borrow_and_update() {
                return;
            }
            if plug.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    };
    let served = async move {
        if service == CORE_DEVICE_PROXY {
            if let Err(error) = coredevice::serve(device, pipe).await {
                tracing::debug!(%error, "CoreDeviceProxy connection ended");
            }
        } else {
            services::serve(device, service, pipe, Via::Lockdown).await;
        }
    };
    tokio::select! {
        () = served => {}
        () = unplugged => tracing::debug!("the phone was unplugged; connection dropped"),
    }
}

/// `Listen`: the current devices, then every plug and unplug, until the client leaves.
async fn listen(device: &Device, stream: &mut BoxStream) -> std::io::Result<()> {
    let mut plug = device.phone.plug();
    let mut shown = *plug.borrow_and_update();
    if shown {
        send(stream, 0, &attached_record(device)).await?;
    }
    let mut sink = [0u8; 64];
    loop {
        tokio::select! {
            read = stream.read(&mut sink) => {
                if read? == 0 {
                    return Ok(());
                }
            }
            changed = plug.changed() => {
                if changed.is_err() {
                    return Ok(());
                }
                let now = *plug.borrow_and_update();
                if now != shown {
                    shown = now;
                    let record = if now { attached_record(device) } else { detached_record() };
                    send(stream, 0, &record).await?;
                }
            }
        }
    }
}
