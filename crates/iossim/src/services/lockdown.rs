//! lockdownd on port 62078: `QueryType`, `GetValue`, `StartSession` (then TLS with the pair
//! record's certificates), `StopSession` (then plain text again), `StartService`,
//! `ValidatePair`, `Pair`, `Goodbye`. Requests and answers are `u32 big-endian length + plist`;
//! answers echo `Request` and carry `Error` on failure (the names pymobiledevice3's
//! `lockdown.py` maps to exceptions: `InvalidHostID`, `PasswordProtected`, `InvalidService`,
//! `MissingValue`, `PairingDialogResponsePending`, `SessionActive`).

use plist::{Dictionary, Value};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

use super::{
    BoxStream, Device, MAX_REQUESTS, Stream, dict, lockdown_starts, read_plist, write_plist,
};
use crate::model::{Hostile, Trust};

enum Conn {
    Plain(BoxStream),
    Tls(Box<TlsStream<BoxStream>>),
}

impl Conn {
    fn io(&mut self) -> &mut dyn Stream {
        match self {
            Conn::Plain(s) => s,
            Conn::Tls(s) => s.as_mut(),
        }
    }
}

/// The values `GetValue` knows in the default domain.
fn values(device: &Device) -> Dictionary {
    let profile = device.phone.profile();
    let locked = device.phone.trust() == Trust::Locked;
    let mut d = dict([
        ("ActivationState", Value::from("Activated")),
        ("BasebandVersion", Value::from("5.02.04")),
        ("BluetoothAddress", Value::from("a4:c3:f0:12:34:57")),
        ("BuildVersion", Value::from(profile.build_version())),
        ("CPUArchitecture", Value::from("arm64e")),
        ("DeviceClass", Value::from("iPhone")),
        ("DeviceColor", Value::from("1")),
        ("DeviceName", Value::from(profile.device_name.clone())),
        (
            "DevicePublicKey",
            Value::Data(device.pairing.device_public_key()),
        ),
        ("HardwareModel", Value::from(profile.hardware_model.clone())),
        ("HostAttached", Value::Boolean(true)),
        ("ModelNumber", Value::from("MLPF3")),
        ("PasswordProtected", Value::Boolean(locked)),
        ("ProductName", Value::from("iPhone OS")),
        ("ProductType", Value::from(profile.product_type.clone())),
        ("ProductVersion", Value::from(profile.product_version())),
        ("RegionInfo", Value::from("LL/A")),
        ("SerialNumber", Value::from("F2LSIMPH0NE1")),
        (
            "TimeZoneOffsetFromUTC",
            Value::Real(f64::from(profile.utc_offset_minutes * 60)),
        ),
        ("TrustedHostAttached", Value::Boolean(true)),
        ("UniqueChipID", Value::from(0x000A_1234_5678_90ABu64)),
        ("UniqueDeviceID", Value::from(profile.udid.clone())),
        ("WiFiAddress", Value::from("a4:c3:f0:12:34:56")),
    ]);
    d.insert("TimeZone".into(), Value::from("Europe/Paris"));
    d
}

fn answer(request: &str) -> Dictionary {
    dict([("Request", Value::from(request))])
}

fn error(request: &str, error: &str) -> Dictionary {
    let mut d = answer(request);
    d.insert("Error".into(), Value::from(error));
    d
}

fn text<'a>(request: &'a Dictionary, key: &str) -> Option<&'a str> {
    request.get(key).and_then(Value::as_string)
}

pub(crate) async fn serve(device: &Device, stream: BoxStream) -> std::io::Result<()> {
    let mut conn = Conn::Plain(stream);
    let mut session: Option<String> = None;
    for _ in 0..MAX_REQUESTS {
        let Some(request) = read_plist(conn.io()).await? else {
            return Ok(());
        };
        let name = text(&request, "Request").unwrap_or("").to_owned();
        tracing::trace!(request = %name, "lockdown");
        match name.as_str() {
            "QueryType" => {
                let mut d = answer(&name);
                d.insert("Type".into(), Value::from("com.apple.mobile.lockdown"));
                write_plist(conn.io(), &d).await?;
            }
            "GetValue" => {
                if let Some(len) = device.phone.take_hostile(|h| match h {
                    Hostile::PlistLength(len) => Some(*len),
                    _ => None,
                }) {
                    // The length prefix alone, then the connection closes.
                    use tokio::io::AsyncWriteExt;
                    conn.io().write_all(&len.to_be_bytes()).await?;
                    conn.io().flush().await?;
                    return Ok(());
                }
                let reply = get_value(device, &request, &name);
                write_plist(conn.io(), &reply).await?;
            }
            "SetValue" => write_plist(conn.io(), &error(&name, "SetProhibited")).await?,
            "ValidatePair" | "Pair" => {
                let reply = pair_reply(device, &request, &name);
                write_plist(conn.io(), &reply).await?;
            }
            "StartSession" => {
                if session.is_some() {
                    write_plist(conn.io(), &error(&name, "SessionActive")).await?;
                    continue;
                }
                let known = device.phone.trust() != Trust::NotPaired
                    && text(&request, "HostID") == Some(device.pairing.host_id.as_str());
                if !known {
                    write_plist(conn.io(), &error(&name, "InvalidHostID")).await?;
                    continue;
                }
                let id = format!("{:08X}-SIM-SESSION", rand_u32());
                let mut d = answer(&name);
                d.insert("EnableSessionSSL".into(), Value::Boolean(true));
                d.insert("SessionID".into(), Value::from(id.clone()));
                write_plist(conn.io(), &d).await?;
                let Conn::Plain(plain) = conn else {
                    return Ok(());
                };
                let acceptor = TlsAcceptor::from(device.pairing.tls.clone());
                let tls = acceptor.accept(plain).await?;
                conn = Conn::Tls(Box::new(tls));
                session = Some(id);
            }
            "StopSession" => {
                let mut d = answer(&name);
                d.insert("Result".into(), Value::from("Success"));
                write_plist(conn.io(), &d).await?;
                session = None;
                conn = match conn {
                    Conn::Tls(tls) => match end_tls(*tls).await {
                        Some(plain) => Conn::Plain(plain),
                        None => return Ok(()),
                    },
                    plain => plain,
                };
            }
            "StartService" => {
                let reply = start_service_reply(device, &request, &name, session.is_some());
                write_plist(conn.io(), &reply).await?;
            }
            "Goodbye" => {
                let mut d = answer(&name);
                d.insert("Result".into(), Value::from("Success"));
                write_plist(conn.io(), &d).await?;
                return Ok(());
            }
            _ => write_plist(conn.io(), &error(&name, "InvalidRequest")).await?,
        }
    }
    Ok(())
}

/// The answer to `ValidatePair` and `Pair`: the pairing record's host must be the phone's
/// paired host; an unpaired phone asks the person first (`Pair`).
fn pair_reply(device: &Device, request: &Dictionary, name: &str) -> Dictionary {
    let host = request
        .get("PairRecord")
        .and_then(Value::as_dictionary)
        .and_then(|r| text(r, "HostID"));
    match device.phone.trust() {
        Trust::NotPaired if name == "Pair" => error(name, "PairingDialogResponsePending"),
        Trust::NotPaired => error(name, "InvalidHostID"),
        _ if host == Some(device.pairing.host_id.as_str()) => answer(name),
        _ => error(name, "InvalidHostID"),
    }
}

/// The answer to `StartService`: refused outside a session, on a locked phone, for a service
/// the phone refuses or lockdown does not start; else the service's port.
fn start_service_reply(
    device: &Device,
    request: &Dictionary,
    name: &str,
    in_session: bool,
) -> Dictionary {
    let service = text(request, "Service").unwrap_or("").to_owned();
    if !in_session {
        error(name, "InvalidConnection")
    } else if device.phone.trust() == Trust::Locked {
        error(name, "PasswordProtected")
    } else if let Some(refusal) = device.phone.refusal(&service) {
        let mut d = error(name, &refusal);
        d.insert("Service".into(), Value::from(service));
        d
    } else if !lockdown_starts(&device.phone, &service) {
        // As a phone refuses (jkcoxson/idevice#3): the request, the error and the
        // service's name.
        let mut d = error(name, "InvalidService");
        d.insert("Service".into(), Value::from(service));
        d
    } else {
        let port = device.start_service(&service);
        let mut d = answer(name);
        d.insert("Service".into(), Value::from(service));
        d.insert("Port".into(), Value::from(u64::from(port)));
        d
    }
}

fn get_value(device: &Device, request: &Dictionary, name: &str) -> Dictionary {
    let domain = text(request, "Domain");
    let key = text(request, "Key");
    let mut reply = answer(name);
    if let Some(domain) = domain {
        reply.insert("Domain".into(), Value::from(domain));
    }
    if let Some(key) = key {
        reply.insert("Key".into(), Value::from(key));
    }
    let values = match domain {
        None | Some("") => values(device),
        Some("com.apple.security.mac.amfi") => dict([(
            "DeveloperModeStatus",
            Value::Boolean(device.phone.developer_mode()),
        )]),
        Some("com.apple.mobile.battery") => dict([
            ("BatteryCurrentCapacity", Value::from(87u64)),
            ("BatteryIsCharging", Value::Boolean(true)),
        ]),
        Some(_) => Dictionary::new(),
    };
    match key {
        None => {
            reply.insert("Value".into(), Value::Dictionary(values));
        }
        Some(key) => match values.get(key) {
            Some(value) => {
                reply.insert("Value".into(), value.clone());
            }
            None => {
                reply.insert("Error".into(), Value::from("MissingValue"));
            }
        },
    }
    reply
}

/// After `StopSession` the client shuts TLS down and goes on in plain text on the same socket
/// (libimobiledevice's `lockdownd_stop_session`): wait for its close_notify, answer with ours,
/// and hand back the socket.
async fn end_tls(mut tls: TlsStream<BoxStream>) -> Option<BoxStream> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut sink = [0u8; 512];
    let closed = tokio::time::timeout(std::time::Duration::from_secs(5), async {
        loop {
            match tls.read(&mut sink).await {
                Ok(0) => return true,
                Ok(_) => continue,
                Err(_) => return false,
            }
        }
    })
    .await
    .unwrap_or(false);
    if !closed {
        return None;
    }
    tls.get_mut().1.send_close_notify();
    tls.flush().await.ok()?;
    let (plain, _) = tls.into_inner();
    Some(plain)
}

fn rand_u32() -> u32 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .subsec_nanos();
    nanos ^ std::process::id().rotate_left(16)
}
