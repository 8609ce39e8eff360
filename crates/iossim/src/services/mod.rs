//! The phone's services over the model, each on its own connection as on a phone: lockdownd
//! (port 62078) and what its `StartService` starts. One dispatch table ([`serve`]) names them;
//! usbmuxd (the wire, above) hands every device connection here by port.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use plist::{Dictionary, Value};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::model::SimPhone;
use crate::pairing::Pairing;

pub(crate) mod afc;
pub(crate) mod instproxy;
pub(crate) mod instruments;
pub(crate) mod lockdown;
pub(crate) mod os_trace;
pub(crate) mod syslog;

/// lockdownd's port on every iPhone.
pub const LOCKDOWN_PORT: u16 = 62078;
/// The largest plist a service accepts from a client.
pub(crate) const MAX_PLIST: usize = 4 * 1024 * 1024;
/// How long a service waits for the client's next request before it hangs up.
pub(crate) const IDLE: Duration = Duration::from_secs(60);
/// How many requests one connection may make.
pub(crate) const MAX_REQUESTS: usize = 100_000;

/// A byte stream to a client: TCP or a Unix socket, maybe inside TLS.
pub(crate) trait Stream: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Stream for T {}
pub(crate) type BoxStream = Box<dyn Stream>;

/// The service names lockdown's `StartService` starts on some release (which of them a phone
/// starts now is [`lockdown_starts`]'s decision).
pub const SERVICES: [&str; 7] = [
    "com.apple.os_trace_relay",
    "com.apple.syslog_relay",
    "com.apple.crashreportmover",
    "com.apple.crashreportcopymobile",
    "com.apple.mobile.installation_proxy",
    INSTRUMENTS,
    INSTRUMENTS_SECURE,
];

/// Lockdown's instruments (DTX), iOS 16 and older, from the developer disk image.
pub(crate) const INSTRUMENTS: &str = "com.apple.instruments.remoteserver";
/// Its name for clients that start it with TLS (served the same here).
pub(crate) const INSTRUMENTS_SECURE: &str =
    "com.apple.instruments.remoteserver.DVTSecureSocketProxy";

/// Lockdown's name for the CoreDevice tunnel (iOS 17.4 and later), served by `coredevice`.
pub const CORE_DEVICE_PROXY: &str = "com.apple.internal.devicecompute.CoreDeviceProxy";

/// How a client reached a service: lockdown's `StartService` through usbmuxd, or RSD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Via {
    /// `StartService` over lockdown.
    Lockdown,
    /// An RSD shim (`….shim.remote`) after `RSDCheckin`.
    Rsd,
}

/// Whether lockdown's `StartService` starts `service` on this phone now: the plain services
/// on every release; instruments only before iOS 17 and only while the developer disk image is
/// mounted (it comes from the image; iOS 17 has none over lockdown, py-ios-device#134 shows
/// `InvalidService` on 17.3); CoreDeviceProxy from 17.4. Everything else is refused with
/// `InvalidService`.
pub(crate) fn lockdown_starts(phone: &SimPhone, service: &str) -> bool {
    match service {
        INSTRUMENTS | INSTRUMENTS_SECURE => {
            phone.profile().ios.has_lockdown_instruments() && phone.ddi_mounted()
        }
        CORE_DEVICE_PROXY => phone.profile().ios.has_core_device_proxy(),
        other => SERVICES.contains(&other),
    }
}

/// Everything the services share: the phone, its pairing, and the ports lockdown handed out.
#[derive(Clone)]
pub(crate) struct Device {
    pub phone: SimPhone,
    pub pairing: Arc<Pairing>,
    ports: Arc<Mutex<PortTable>>,
}

struct PortTable {
    next: u16,
    waiting: HashMap<u16, String>,
}

impl Device {
    pub fn new(phone: SimPhone, pairing: Arc<Pairing>) -> Device {
        Device {
            phone,
            pairing,
            ports: Arc::new(Mutex::new(PortTable {
                next: 49_152,
                waiting: HashMap::new(),
            })),
        }
    }

    /// A fresh port for one connection to `service`, as lockdown's `StartService` gives.
    pub fn start_service(&self, service: &str) -> u16 {
        let mut table = self.ports.lock().unwrap_or_else(|p| p.into_inner());
        let port = table.next;
        table.next = if table.next >= 65_000 {
            49_152
        } else {
            table.next + 1
        };
        table.waiting.insert(port, service.to_owned());
        port
    }

    /// What a connection to `port` reaches: lockdown, a started service (once), or nothing.
    pub fn claim(&self, port: u16) -> Option<String> {
        if port == LOCKDOWN_PORT {
            return Some("lockdownd".into());
        }
        let mut table = self.ports.lock().unwrap_or_else(|p| p.into_inner());
        table.waiting.remove(&port)
    }
}

/// Runs one service on one connection until the client leaves. The same code serves a client
/// that came through lockdown and one that came through an RSD shim.
pub(crate) async fn serve(device: Device, service: String, stream: BoxStream, via: Via) {
    if device.phone.stalls(&service) {
        // Accepted, never answered: hold the connection until the client gives up.
        tracing::debug!(%service, "stalling, as told");
        let _keep = stream;
        std::future::pending::<()>().await;
        return;
    }
    // A shim's connection is recorded under its RSD name by `rsd`.
    if service != "lockdownd" && via == Via::Lockdown {
        device.phone.record_open(&service, None);
    }
    let result = match service.as_str() {
        "lockdownd" => lockdown::serve(&device, stream).await,
        "com.apple.os_trace_relay" => os_trace::serve(&device.phone, stream, via).await,
        "com.apple.syslog_relay" => syslog::serve(&device.phone, stream).await,
        "com.apple.crashreportmover" => afc::serve_mover(&device.phone, stream).await,
        "com.apple.crashreportcopymobile" => afc::serve(&device.phone, stream).await,
        "com.apple.mobile.installation_proxy" => instproxy::serve(&device.phone, stream).await,
        INSTRUMENTS | INSTRUMENTS_SECURE => instruments::serve(&device.phone, stream).await,
        other => {
            tracing::debug!(service = other, "no such service");
            Ok(())
        }
    };
    if let Err(error) = result {
        tracing::debug!(%service, %error, "service connection ended");
    }
}

/// Reads one `u32 big-endian length + plist` message; `None` at a clean end of stream.
pub(crate) async fn read_plist<S: AsyncRead + Unpin + ?Sized>(
    stream: &mut S,
) -> std::io::Result<Option<Dictionary>> {
    let mut len = [0u8; 4];
    match tokio::time::timeout(IDLE, stream.read_exact(&mut len)).await {
        Err(_) => return Ok(None),
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Ok(Err(e)) => return Err(e),
        Ok(Ok(_)) => {}
    }
    let len = u32::from_be_bytes(len) as usize;
    if len > MAX_PLIST {
        return Err(invalid(format!("a {len}-byte plist")));
    }
    let mut body = vec![0; len];
    stream.read_exact(&mut body).await?;
    let value: Value = plist::from_bytes(&body).map_err(|e| invalid(e.to_string()))?;
    value
        .into_dictionary()
        .map(Some)
        .ok_or_else(|| invalid("a plist that is not a dictionary".into()))
}

/// Encodes an XML plist (what lockdownd and installd send).
pub(crate) fn xml(value: &Dictionary) -> Vec<u8> {
    let mut out = Vec::new();
    // Serializing an in-memory dictionary to memory does not fail.
    let _ = plist::to_writer_xml(&mut out, &Value::Dictionary(value.clone()));
    out
}

/// Encodes a binary plist.
pub(crate) fn binary(value: &Dictionary) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    let _ = plist::to_writer_binary(&mut out, &Value::Dictionary(value.clone()));
    out.into_inner()
}

/// Writes one `u32 big-endian length + XML plist` message.
pub(crate) async fn write_plist<S: AsyncWrite + Unpin + ?Sized>(
    stream: &mut S,
    value: &Dictionary,
) -> std::io::Result<()> {
    let body = xml(value);
    let len = u32::try_from(body.len()).map_err(|_| invalid("a plist over 4 GiB".into()))?;
    stream.write_all(&len.to_be_bytes()).await?;
    stream.write_all(&body).await?;
    stream.flush().await
}

pub(crate) fn invalid(message: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, message)
}

/// A dictionary from `(key, value)` pairs.
pub(crate) fn dict<const N: usize>(pairs: [(&str, Value); N]) -> Dictionary {
    let mut d = Dictionary::new();
    for (k, v) in pairs {
        d.insert(k.into(), v);
    }
    d
}
