//! A front that speaks the adb server's host protocol, so a client can reach the simulated
//! phone with no adb installed (`--demo` on a fresh machine).
//!
//! Requests are `%04x` + text; answers are `OKAY` or `FAIL` + `%04x` + message. After
//! `host:transport:<serial>` the next request on the same socket is a device service, whose
//! output then flows raw until the socket closes.
//!
//! The top of the crate with `transport.rs`, over the services (`service.rs`). As the adb
//! server does, a client closing its socket (end of file) ends the device service: a logcat
//! follower stops at once.

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use crate::Error;
use crate::phone::{Request, SimPhone};
use crate::service::{self, Framing, Service};
use crate::transport::SimHandle;

/// The adb server version this front reports (`host:version`), that of adb 1.0.41.
pub const HOST_VERSION: u32 = 41;

/// The host-protocol front.
#[derive(Debug)]
pub struct HostFront;

impl HostFront {
    /// Listens on `127.0.0.1:port` (any free port for `None`) as if it were an adb server with
    /// one device attached: `phone`, whose serial is its profile's serial.
    pub async fn bind(
        port: Option<u16>,
        phone: SimPhone,
    ) -> Result<(SocketAddr, SimHandle), Error> {
        let listener = TcpListener::bind(("127.0.0.1", port.unwrap_or(0))).await?;
        let address = listener.local_addr()?;
        let (stop, mut stop_watch) = watch::channel(false);
        let task = tokio::spawn(async move {
            loop {
                tokio::select! {
                    accepted = listener.accept() => {
                        let Ok((socket, _)) = accepted else { continue };
                        let _ = socket.set_nodelay(true);
                        let phone = phone.clone();
                        let stop = stop_watch.clone();
                        tokio::spawn(async move {
                            if let Err(error) = serve(socket, phone, stop).await {
                                tracing::debug!(%error, "adbsim host front connection ended");
                            }
                        });
                    }
                    _ = stop_watch.changed() => {
                        if *stop_watch.borrow() { return; }
                    }
                }
            }
        });
        tracing::info!(%address, "adbsim host front listening");
        Ok((address, SimHandle::new(stop, task)))
    }
}

async fn read_request(socket: &mut TcpStream) -> Result<Option<String>, Error> {
    let mut length = [0u8; 4];
    match socket.read_exact(&mut length).await {
        Ok(_) => {}
        Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(error) => return Err(error.into()),
    }
    let length = std::str::from_utf8(&length)
        .ok()
        .and_then(|text| usize::from_str_radix(text, 16).ok())
        .ok_or_else(|| Error::Protocol("bad request length".to_string()))?;
    let mut body = vec![0u8; length];
    socket.read_exact(&mut body).await?;
    Ok(Some(String::from_utf8_lossy(&body).into_owned()))
}

async fn okay_with(socket: &mut TcpStream, payload: &str) -> Result<(), Error> {
    let mut reply = format!("OKAY{:04x}", payload.len()).into_bytes();
    reply.extend_from_slice(payload.as_bytes());
    socket.write_all(&reply).await?;
    Ok(())
}

async fn fail(socket: &mut TcpStream, message: &str) -> Result<(), Error> {
    let mut reply = format!("FAIL{:04x}", message.len()).into_bytes();
    reply.extend_from_slice(message.as_bytes());
    socket.write_all(&reply).await?;
    Ok(())
}

const FEATURES: &str = "shell_v2,cmd";

fn device_line(phone: &SimPhone, long: bool) -> String {
    let profile = phone.profile();
    let state = if phone.is_offline() {
        "offline"
    } else {
        "device"
    };
    if long {
        format!(
            "{:<22} {state} product:{} model:{} device:{} transport_id:1\n",
            profile.serial,
            profile.product,
            profile.model.replace(' ', "_"),
            profile.device
        )
    } else {
        format!("{}\t{state}\n", profile.serial)
    }
}

/// A host request without its device prefix: `host-serial:<serial>:<rest>` (the serial named)
/// and `host-transport-id:<id>:<rest>` name the device first, `host:<rest>` none.
fn host_request(request: &str) -> (Option<&str>, &str) {
    let mut request = request;
    let mut named_serial: Option<&str> = None;
    if let Some(rest) = request.strip_prefix("host-serial:") {
        // A serial may itself contain ':' (`127.0.0.1:5555`), so split at the last one.
        if let Some((wanted, tail)) = rest.rsplit_once(':') {
            named_serial = Some(wanted);
            request = tail;
        }
    } else if let Some(rest) = request.strip_prefix("host-transport-id:") {
        if let Some((_, tail)) = rest.split_once(':') {
            request = tail;
        }
    } else if let Some(rest) = request.strip_prefix("host:") {
        request = rest;
    }
    (named_serial, request)
}

/// A request to switch to the device's transport: the serial it names (or none for any device),
/// and whether the answer carries a transport id (`tport:`).
fn transport_request(other: &str) -> Option<(Option<&str>, bool)> {
    other
        .strip_prefix("transport:")
        .map(|wanted| (Some(wanted), false))
        .or_else(|| {
            other
                .strip_prefix("tport:serial:")
                .map(|wanted| (Some(wanted), true))
        })
        .or(match other {
            "transport-any" | "transport-usb" | "transport-local" => Some((None, false)),
            "tport:any" | "tport:usb" | "tport:local" => Some((None, true)),
            _ => None,
        })
        .or_else(|| other.strip_prefix("transport-id:").map(|_| (None, false)))
        .or_else(|| other.strip_prefix("tport:id:").map(|_| (None, true)))
}

async fn serve(
    mut socket: TcpStream,
    phone: SimPhone,
    mut stop: watch::Receiver<bool>,
) -> Result<(), Error> {
    let serial = phone.profile().serial;
    let mut transport_selected = false;
    while let Some(request) = read_request(&mut socket).await? {
        phone.record(Request::Service(request.clone()));
        if transport_selected {
            return serve_device_service(socket, &phone, &request, &mut stop).await;
        }
        let (named_serial, request) = host_request(&request);
        if let Some(wanted) = named_serial
            && wanted != serial
        {
            fail(&mut socket, &format!("device '{wanted}' not found")).await?;
            return Ok(());
        }
        match request {
            "version" => okay_with(&mut socket, &format!("{HOST_VERSION:04x}")).await?,
            "devices" => okay_with(&mut socket, &device_line(&phone, false)).await?,
            "devices-l" => okay_with(&mut socket, &device_line(&phone, true)).await?,
            "features" | "host-features" => okay_with(&mut socket, FEATURES).await?,
            "get-state" => {
                if phone.is_offline() {
                    fail(&mut socket, "device offline").await?;
                } else {
                    okay_with(&mut socket, "device").await?;
                }
            }
            "get-serialno" => okay_with(&mut socket, &serial).await?,
            "get-devpath" => okay_with(&mut socket, "unknown").await?,
            "kill" => {
                socket.write_all(b"OKAY").await?;
                return Ok(());
            }
            "track-devices" | "track-devices-l" => {
                socket.write_all(b"OKAY").await?;
                let long = request.ends_with("-l");
                let mut offline = phone.watch_offline();
                let mut scratch = [0u8; 64];
                loop {
                    let list = device_line(&phone, long);
                    socket
                        .write_all(format!("{:04x}{list}", list.len()).as_bytes())
                        .await?;
                    tokio::select! {
                        changed = offline.changed() => if changed.is_err() { return Ok(()) },
                        read = socket.read(&mut scratch) => if matches!(read, Ok(0) | Err(_)) { return Ok(()) },
                        _ = stop.changed() => return Ok(()),
                    }
                }
            }
            other => {
                let transport = transport_request(other);
                match transport {
                    Some((wanted, with_id)) => {
                        if wanted.is_some_and(|wanted| wanted != serial) {
                            fail(
                                &mut socket,
                                &format!("device '{}' not found", wanted.unwrap_or_default()),
                            )
                            .await?;
                            return Ok(());
                        }
                        if phone.is_offline() {
                            fail(&mut socket, "device offline").await?;
                            return Ok(());
                        }
                        socket.write_all(b"OKAY").await?;
                        if with_id {
                            socket.write_all(&1u64.to_le_bytes()).await?;
                        }
                        transport_selected = true;
                    }
                    None if named_serial.is_some() => {
                        // `host-serial:S:shell,v2,…` style: a device service on the named device.
                        return serve_device_service(socket, &phone, other, &mut stop).await;
                    }
                    None => {
                        fail(&mut socket, &format!("unknown host service '{other}'")).await?;
                        return Ok(());
                    }
                }
            }
        }
    }
    Ok(())
}

async fn serve_device_service(
    mut socket: TcpStream,
    phone: &SimPhone,
    request: &str,
    stop: &mut watch::Receiver<bool>,
) -> Result<(), Error> {
    let Some(service) = service::parse(request) else {
        fail(&mut socket, "closed").await?;
        return Ok(());
    };
    if phone.is_offline() {
        fail(&mut socket, "device offline").await?;
        return Ok(());
    }
    socket.write_all(b"OKAY").await?;
    let framing = match &service {
        Service::Shell { framing, .. } => *framing,
        _ => Framing::Raw,
    };
    let (mut reader, mut writer) = socket.into_split();
    let mut output = service::start(phone, &service);
    let mut offline = phone.watch_offline();
    let mut scratch = vec![0u8; 4096];
    let mut packets = Vec::new();
    loop {
        tokio::select! {
            chunk = output.recv() => {
                let Some(chunk) = chunk else { break };
                service::frame(framing, chunk, 1024 * 1024, &mut packets);
                for packet in packets.drain(..) {
                    writer.write_all(&packet).await?;
                }
            }
            // Stdin is read and dropped; EOF or an error means the client went away, and the
            // service ends with it (returning drops its output channel), as the adb server
            // closes a device stream when its client's socket reaches end of file.
            read = reader.read(&mut scratch) => {
                match read {
                    Ok(0) | Err(_) => return Ok(()),
                    Ok(_) => {}
                }
            }
            _ = offline.changed() => if *offline.borrow() { return Ok(()) },
            _ = stop.changed() => return Ok(()),
        }
    }
    writer.shutdown().await?;
    Ok(())
}
