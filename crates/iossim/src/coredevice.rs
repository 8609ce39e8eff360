//! `com.apple.internal.devicecompute.CoreDeviceProxy` (iOS 17.4 and later, started through
//! lockdown): the CDTunnel handshake, then raw IPv6 packets both ways, carried to the phone's
//! userspace IPv6/TCP stack (`netstack`) whose listeners are RSD and the services it lists
//! (`rsd`).
//!
//! The handshake (pymobiledevice3 `remote/tunnel_service.py`, idevice `src/tunnel.rs`): the
//! client sends `CDTunnel`, a big-endian `u16` length and the JSON
//! `{"type":"clientHandshakeRequest","mtu":16000}`; the phone answers the same framing around
//! `{"clientParameters":{"address","mtu","netmask"},"serverAddress","serverRSDPort","type":
//! "serverHandshakeResponse"}` (the keys and their values' forms as pymobiledevice3's
//! `misc/RemoteXPC.md` shows a phone's answer). After it each side writes whole IPv6 packets,
//! back to back, and reads them by the payload length in their fixed 40-byte header.

use std::net::Ipv6Addr;
use std::sync::atomic::{AtomicU16, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

use crate::netstack::{Accept, Stack};
use crate::rsd::{self, Ports};
use crate::services::{BoxStream, Device, IDLE, invalid};

const MAGIC: &[u8; 8] = b"CDTunnel";
/// The MTU the phone grants when asked for more (what pymobiledevice3 asks and gets over USB).
const MAX_MTU: u64 = 16_000;
/// An IPv6 header.
const IPV6_HEADER: usize = 40;
/// Packets waiting for the stack.
const INBOUND: usize = 1024;

/// Each tunnel gets its own /64, as a phone hands out a new one per tunnel.
static NEXT_TUNNEL: AtomicU16 = AtomicU16::new(1);

/// Serves one CoreDeviceProxy connection until either side closes it.
pub(crate) async fn serve(device: Device, mut stream: BoxStream) -> std::io::Result<()> {
    device
        .phone
        .record_open(crate::services::CORE_DEVICE_PROXY, None);
    let request = read_frame(&mut stream).await?;
    let request: serde_json::Value =
        serde_json::from_slice(&request).map_err(|e| invalid(format!("CDTunnel JSON: {e}")))?;
    if request["type"] != "clientHandshakeRequest" {
        return Err(invalid(format!("not a CDTunnel handshake: {request}")));
    }
    let mtu = request["mtu"].as_u64().unwrap_or(1280).clamp(1280, MAX_MTU);
    let net = NEXT_TUNNEL.fetch_add(1, Ordering::Relaxed);
    let server = Ipv6Addr::new(0xfd35, 0xd15d, 0x9fba, net, 0, 0, 0, 1);
    let client = Ipv6Addr::new(0xfd35, 0xd15d, 0x9fba, net, 0, 0, 0, 2);
    let ports = Ports::tunnel();
    let answer = serde_json::json!({
        "clientParameters": {
            "address": client.to_string(),
            "mtu": mtu,
            "netmask": "ffff:ffff:ffff:ffff::",
        },
        "serverAddress": server.to_string(),
        "serverRSDPort": ports.rsd,
        "type": "serverHandshakeResponse",
    });
    write_frame(&mut stream, answer.to_string().as_bytes()).await?;

    let listening: Vec<u16> = std::iter::once(ports.rsd)
        .chain(ports.services.iter().map(|(_, p)| *p))
        .collect();
    let stack = Stack::new(server, mtu as usize, &listening);
    let (reader, mut writer) = tokio::io::split(stream);
    let (in_tx, in_rx) = mpsc::channel(INBOUND);
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let read_packets = read_packets(reader, in_tx);
    let write_packets = async move {
        while let Some(packet) = out_rx.recv().await {
            writer.write_all(&packet).await?;
            if out_rx.is_empty() {
                writer.flush().await?;
            }
        }
        Ok::<(), std::io::Error>(())
    };
    let accept: Accept = Box::new(move |port, connection| {
        let device = device.clone();
        let ports = ports.clone();
        tokio::spawn(async move {
            if port == ports.rsd {
                if let Err(error) = rsd::serve_handshake(device, connection, ports).await {
                    tracing::debug!(%error, "RSD handshake over the tunnel ended");
                }
            } else if let Some(name) = ports.service_at(port) {
                rsd::serve_service(device, name, connection).await;
            }
        });
    });
    tokio::select! {
        result = read_packets => result?,
        result = write_packets => result?,
        () = stack.run(in_rx, out_tx, accept) => {}
    }
    Ok(())
}

/// `CDTunnel`, a big-endian `u16` length, that many bytes.
async fn read_frame(stream: &mut BoxStream) -> std::io::Result<Vec<u8>> {
    let mut head = [0u8; 10];
    tokio::time::timeout(IDLE, stream.read_exact(&mut head))
        .await
        .map_err(|_| invalid("no CDTunnel handshake".into()))??;
    if &head[..8] != MAGIC {
        return Err(invalid("not a CDTunnel frame".into()));
    }
    let len = usize::from(u16::from_be_bytes([head[8], head[9]]));
    let mut body = vec![0; len];
    stream.read_exact(&mut body).await?;
    Ok(body)
}

async fn write_frame(stream: &mut BoxStream, body: &[u8]) -> std::io::Result<()> {
    let len =
        u16::try_from(body.len()).map_err(|_| invalid("a CDTunnel frame over 64 KiB".into()))?;
    let mut out = Vec::with_capacity(10 + body.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(body);
    stream.write_all(&out).await?;
    stream.flush().await
}

/// Whole IPv6 packets from the host, by their header's payload length; the end of the
/// connection ends them.
async fn read_packets(
    mut reader: tokio::io::ReadHalf<BoxStream>,
    packets: mpsc::Sender<Vec<u8>>,
) -> std::io::Result<()> {
    loop {
        let mut packet = vec![0u8; IPV6_HEADER];
        match reader.read_exact(&mut packet).await {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e),
        }
        if packet[0] >> 4 != 6 {
            return Err(invalid("a tunnel packet that is not IPv6".into()));
        }
        let payload = usize::from(u16::from_be_bytes([packet[4], packet[5]]));
        packet.resize(IPV6_HEADER + payload, 0);
        reader.read_exact(&mut packet[IPV6_HEADER..]).await?;
        if packets.send(packet).await.is_err() {
            return Ok(());
        }
    }
}
