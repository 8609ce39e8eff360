//! The host-protocol front, checked with a raw client (no adb needed): version, devices,
//! transport selection, shell v2 packets with exit codes, and the record of requests.

#![allow(clippy::unwrap_used)]

use phonelogs_adbsim::{HostFront, SimPhone};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn request(stream: &mut TcpStream, text: &str) {
    stream
        .write_all(format!("{:04x}{text}", text.len()).as_bytes())
        .await
        .unwrap();
}

async fn status(stream: &mut TcpStream) -> String {
    let mut status = [0u8; 4];
    stream.read_exact(&mut status).await.unwrap();
    String::from_utf8_lossy(&status).into_owned()
}

async fn payload(stream: &mut TcpStream) -> String {
    let mut length = [0u8; 4];
    stream.read_exact(&mut length).await.unwrap();
    let length = usize::from_str_radix(std::str::from_utf8(&length).unwrap(), 16).unwrap();
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).await.unwrap();
    String::from_utf8(body).unwrap()
}

/// Runs one shell v2 command through the front; returns stdout, stderr, exit code.
async fn shell_v2(
    address: std::net::SocketAddr,
    serial: &str,
    command: &str,
) -> (String, String, u8) {
    let mut stream = TcpStream::connect(address).await.unwrap();
    request(&mut stream, &format!("host:transport:{serial}")).await;
    assert_eq!(status(&mut stream).await, "OKAY");
    request(&mut stream, &format!("shell,v2,raw:{command}")).await;
    assert_eq!(status(&mut stream).await, "OKAY");
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).await.unwrap();
    let (mut out, mut err, mut code) = (Vec::new(), Vec::new(), 255u8);
    let mut rest = &bytes[..];
    while rest.len() >= 5 {
        let id = rest[0];
        let length = u32::from_le_bytes([rest[1], rest[2], rest[3], rest[4]]) as usize;
        let data = &rest[5..5 + length];
        match id {
            1 => out.extend_from_slice(data),
            2 => err.extend_from_slice(data),
            3 => code = data[0],
            _ => {}
        }
        rest = &rest[5 + length..];
    }
    assert!(rest.is_empty(), "trailing partial packet");
    (
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
        code,
    )
}

#[tokio::test]
async fn host_front_serves_a_client_without_adb() {
    let phone = SimPhone::default_phone();
    let serial = phone.profile().serial;
    let (address, handle) = HostFront::bind(None, phone.clone()).await.unwrap();

    let mut stream = TcpStream::connect(address).await.unwrap();
    request(&mut stream, "host:version").await;
    assert_eq!(status(&mut stream).await, "OKAY");
    assert_eq!(payload(&mut stream).await, "0029");

    let mut stream = TcpStream::connect(address).await.unwrap();
    request(&mut stream, "host:devices-l").await;
    assert_eq!(status(&mut stream).await, "OKAY");
    let devices = payload(&mut stream).await;
    assert_eq!(
        devices,
        format!(
            "{serial:<22} device product:panther model:Pixel_7 device:panther transport_id:1\n"
        )
    );

    let mut stream = TcpStream::connect(address).await.unwrap();
    request(&mut stream, &format!("host-serial:{serial}:features")).await;
    assert_eq!(status(&mut stream).await, "OKAY");
    assert!(payload(&mut stream).await.contains("shell_v2"));

    let mut stream = TcpStream::connect(address).await.unwrap();
    request(&mut stream, "host:transport:nope").await;
    assert_eq!(status(&mut stream).await, "FAIL");
    assert_eq!(payload(&mut stream).await, "device 'nope' not found");

    let uid = phone.uid_of("dev.phonelogs.crashtest", 0).unwrap();
    let (out, err, code) =
        shell_v2(address, &serial, "date +%z; pm list packages -U crashtest").await;
    assert_eq!(
        (out.as_str(), err.as_str(), code),
        (
            format!("+0100\npackage:dev.phonelogs.crashtest uid:{uid}\n").as_str(),
            "",
            0
        )
    );
    let (_, err, code) = shell_v2(address, &serial, "am set-debug-app --nope x").await;
    assert_eq!(
        (err.as_str(), code),
        ("Error: Unknown option: --nope\n", 255)
    );

    assert!(
        phone
            .services_opened()
            .contains(&"shell,v2,raw:date +%z; pm list packages -U crashtest".to_string())
    );
    assert_eq!(
        phone.commands_run(),
        vec![
            "date +%z; pm list packages -U crashtest",
            "am set-debug-app --nope x"
        ]
    );
    handle.shutdown().await;
}
