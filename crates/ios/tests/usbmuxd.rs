//! `UsbmuxdBackend` against a fake usbmuxd on loopback TCP (as `USBMUXD_SOCKET_ADDRESS` =
//! `host:port` would name it), speaking usbmuxd's plist protocol: a 16-byte little-endian header
//! (length, version 1, message type 8, tag) and an XML plist. The phone it lists has no pairing
//! record, so every path that needs the phone must say how to pair it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use idevice::usbmuxd::UsbmuxdAddr;
use phonelogs_driver::{AppId, AppLogger, DeviceId, DeviceState, ErrorKind, LogQuery, Platform};
use phonelogs_ios::{LockdownPhone, UsbmuxdBackend};
use plist::{Dictionary, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const UDID: &str = "00008101-000A1234567890AB";

async fn answer(stream: &mut TcpStream) -> Option<()> {
    loop {
        let mut header = [0u8; 16];
        stream.read_exact(&mut header).await.ok()?;
        let len = u32::from_le_bytes(header[..4].try_into().ok()?) as usize;
        let tag = u32::from_le_bytes(header[12..16].try_into().ok()?);
        let mut body = vec![0; len.checked_sub(16)?];
        stream.read_exact(&mut body).await.ok()?;
        let request: Dictionary = plist::from_bytes(&body).ok()?;
        let mut reply = Dictionary::new();
        match request.get("MessageType").and_then(Value::as_string)? {
            "ListDevices" => {
                let mut props = Dictionary::new();
                props.insert("ConnectionType".into(), "USB".into());
                props.insert("SerialNumber".into(), UDID.into());
                props.insert("DeviceID".into(), 7.into());
                props.insert("ProductID".into(), 4776.into());
                let mut device = Dictionary::new();
                device.insert("DeviceID".into(), 7.into());
                device.insert("MessageType".into(), "Attached".into());
                device.insert("Properties".into(), Value::Dictionary(props));
                reply.insert(
                    "DeviceList".into(),
                    Value::Array(vec![Value::Dictionary(device)]),
                );
            }
            // usbmuxd's answer when it holds no pairing record for the device.
            _ => {
                reply.insert("MessageType".into(), "Result".into());
                reply.insert("Number".into(), 2.into());
            }
        }
        let mut xml = Vec::new();
        plist::to_writer_xml(&mut xml, &Value::Dictionary(reply)).ok()?;
        let mut packet = Vec::new();
        packet.extend(((xml.len() + 16) as u32).to_le_bytes());
        packet.extend(1u32.to_le_bytes());
        packet.extend(8u32.to_le_bytes());
        packet.extend(tag.to_le_bytes());
        packet.extend(xml);
        stream.write_all(&packet).await.ok()?;
    }
}

async fn fake_usbmuxd() -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move { answer(&mut stream).await });
        }
    });
    addr
}

#[tokio::test]
async fn an_unpaired_phone_is_listed_and_its_calls_say_how_to_pair() {
    let addr = fake_usbmuxd().await;
    let phone = LockdownPhone::new(Arc::new(UsbmuxdBackend::with_addr(UsbmuxdAddr::TcpSocket(
        addr,
    ))));
    let devices = phone.devices().await.unwrap();
    assert_eq!(devices.len(), 1);
    assert_eq!(devices[0].id.as_str(), UDID);
    assert_eq!(devices[0].platform, Platform::Ios);
    assert_eq!(devices[0].state, DeviceState::NotPaired);

    let app = AppId::new("dev.phonelogs.crashtest");
    let query = LogQuery::since(time::OffsetDateTime::UNIX_EPOCH, 10);
    let error = phone
        .app_logs(&DeviceId::new(UDID), &app, &query)
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::DeviceUnavailable);
    assert!(error.to_string().contains("tap Trust"), "{error}");

    let error = phone
        .app_logs(&DeviceId::new("00008030-0000000000000000"), &app, &query)
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::DeviceNotFound);

    let simulator = DeviceId::new("F2A5C1D0-1234-4ABC-9DEF-0123456789AB");
    let error = phone.dev_build(&simulator, &app).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unsupported);
    assert!(error.to_string().contains("simctl"), "{error}");
}
