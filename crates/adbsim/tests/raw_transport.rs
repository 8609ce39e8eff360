//! The transport checked with an independent raw client written here (no adb needed): the
//! handshake, checksums, flow control, unknown services, AUTH, `track-jdwp`, and faults.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use phonelogs_adbsim::wire::{
    A_AUTH, A_CLSE, A_CNXN, A_OKAY, A_OPEN, A_WRTE, AUTH_RSAPUBLICKEY, AUTH_SIGNATURE, AUTH_TOKEN,
    Message, checksum,
};
use phonelogs_adbsim::{AuthMode, Buffer, Fault, Profile, SimPhone, Simulator};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

struct Client {
    stream: TcpStream,
}

impl Client {
    async fn connect(address: std::net::SocketAddr) -> Self {
        Self {
            stream: TcpStream::connect(address).await.unwrap(),
        }
    }

    async fn send(&mut self, message: Message) {
        self.stream.write_all(&message.encode()).await.unwrap();
    }

    /// Reads one message and checks its checksum and magic word.
    async fn recv(&mut self) -> Message {
        let mut header = [0u8; 24];
        timeout(Duration::from_secs(5), self.stream.read_exact(&mut header))
            .await
            .unwrap()
            .unwrap();
        let word = |i: usize| u32::from_le_bytes(header[i * 4..i * 4 + 4].try_into().unwrap());
        let mut data = vec![0u8; word(3) as usize];
        self.stream.read_exact(&mut data).await.unwrap();
        assert_eq!(word(4), checksum(&data), "device sums are correct");
        assert_eq!(word(5), word(0) ^ 0xffff_ffff);
        Message::new(word(0), word(1), word(2), data)
    }

    /// Whether a message arrives within `wait`.
    async fn quiet_for(&mut self, wait: Duration) -> bool {
        let mut byte = [0u8; 1];
        timeout(wait, self.stream.peek(&mut byte)).await.is_err()
    }

    async fn handshake(&mut self, max_payload: u32) -> Message {
        self.send(Message::new(
            A_CNXN,
            0x0100_0001,
            max_payload,
            b"host::features=shell_v2\0".to_vec(),
        ))
        .await;
        self.recv().await
    }

    /// Opens a service and returns the device's stream id.
    async fn open(&mut self, local: u32, service: &str) -> u32 {
        self.send(Message::new(
            A_OPEN,
            local,
            0,
            format!("{service}\0").into_bytes(),
        ))
        .await;
        let okay = self.recv().await;
        assert_eq!((okay.command, okay.arg1), (A_OKAY, local));
        okay.arg0
    }

    /// Reads a whole stream, OKAYing each write; returns the payload bytes.
    async fn drain(&mut self, local: u32, remote: u32) -> Vec<u8> {
        let mut bytes = Vec::new();
        loop {
            let message = self.recv().await;
            match message.command {
                A_WRTE => {
                    bytes.extend_from_slice(&message.data);
                    self.send(Message::new(A_OKAY, local, remote, Vec::new()))
                        .await;
                }
                A_CLSE => {
                    self.send(Message::new(A_CLSE, local, remote, Vec::new()))
                        .await;
                    return bytes;
                }
                other => panic!("unexpected {other:#x}"),
            }
        }
    }
}

fn parse_v2(bytes: &[u8]) -> (Vec<u8>, Vec<u8>, Option<u8>) {
    let (mut out, mut err, mut code) = (Vec::new(), Vec::new(), None);
    let mut rest = bytes;
    while rest.len() >= 5 {
        let length = u32::from_le_bytes(rest[1..5].try_into().unwrap()) as usize;
        let data = &rest[5..5 + length];
        match rest[0] {
            1 => out.extend_from_slice(data),
            2 => err.extend_from_slice(data),
            3 => code = Some(data[0]),
            _ => {}
        }
        rest = &rest[5 + length..];
    }
    assert!(rest.is_empty());
    (out, err, code)
}

#[tokio::test]
async fn handshake_streams_and_flow_control() {
    let phone = SimPhone::default_phone();
    let (address, handle) = Simulator::bind_loopback(None, phone.clone()).await.unwrap();
    let mut client = Client::connect(address).await;
    let cnxn = client.handshake(4096).await;
    assert_eq!(
        (cnxn.command, cnxn.arg0, cnxn.arg1),
        (A_CNXN, 0x0100_0001, 4096)
    );
    let banner = String::from_utf8(cnxn.data).unwrap();
    assert!(banner.starts_with("device::ro.product.name=panther;ro.product.model=Pixel 7;ro.product.device=panther;features="));
    assert!(banner.contains("shell_v2"));

    // Unknown services are refused with CLSE(0, id).
    client
        .send(Message::new(A_OPEN, 7, 0, b"sync:\0".to_vec()))
        .await;
    let refused = client.recv().await;
    assert_eq!(
        (refused.command, refused.arg0, refused.arg1),
        (A_CLSE, 0, 7)
    );

    // Flow control: with a 4 KiB payload the dump needs many WRTEs, one at a time.
    let remote = client
        .open(1, "shell,v2,raw:logcat -d -b main,system")
        .await;
    let first = client.recv().await;
    assert_eq!(first.command, A_WRTE);
    assert!(first.data.len() <= 4096);
    assert!(
        client.quiet_for(Duration::from_millis(200)).await,
        "no second WRTE before our OKAY"
    );
    client
        .send(Message::new(A_OKAY, 1, remote, Vec::new()))
        .await;
    let mut bytes = first.data;
    bytes.extend(client.drain(1, remote).await);
    let (out, err, code) = parse_v2(&bytes);
    assert_eq!(code, Some(0));
    assert!(err.is_empty());
    assert!(
        String::from_utf8(out)
            .unwrap()
            .starts_with("--------- beginning of ")
    );

    // A late CLSE for a forgotten stream is ignored, and the connection goes on.
    client
        .send(Message::new(A_CLSE, 1, remote, Vec::new()))
        .await;
    let remote = client.open(2, "shell,v2,raw:exit 42").await;
    let (_, _, code) = parse_v2(&client.drain(2, remote).await);
    assert_eq!(code, Some(42));
    handle.shutdown().await;
}

#[tokio::test]
async fn track_jdwp_reports_every_change() {
    let phone = SimPhone::default_phone();
    let (address, handle) = Simulator::bind_loopback(None, phone.clone()).await.unwrap();
    let mut client = Client::connect(address).await;
    client.handshake(1024 * 1024).await;
    let remote = client.open(3, "track-jdwp").await;
    let pid = phone.pid_of("dev.phonelogs.crashtest").unwrap();
    let first = client.recv().await;
    assert_eq!(
        String::from_utf8(first.data).unwrap(),
        format!("{:04x}{pid}\n", format!("{pid}\n").len())
    );
    client
        .send(Message::new(A_OKAY, 3, remote, Vec::new()))
        .await;
    phone
        .crash("dev.phonelogs.crashtest", "java.lang.RuntimeException", "x")
        .unwrap();
    let second = client.recv().await;
    assert_eq!(String::from_utf8(second.data).unwrap(), "0000");
    handle.shutdown().await;
}

#[tokio::test]
async fn auth_asks_the_user_for_an_unknown_key() {
    let profile = Profile {
        auth: AuthMode::AskUser,
        ..Profile::default()
    };
    let phone = SimPhone::with_profile(profile);
    let (address, handle) = Simulator::bind_loopback(None, phone.clone()).await.unwrap();
    let mut client = Client::connect(address).await;
    let token = client.handshake(4096).await;
    assert_eq!(
        (token.command, token.arg0, token.data.len()),
        (A_AUTH, AUTH_TOKEN, 20)
    );
    client
        .send(Message::new(A_AUTH, AUTH_SIGNATURE, 0, vec![1; 256]))
        .await;
    let again = client.recv().await;
    assert_eq!((again.command, again.arg0), (A_AUTH, AUTH_TOKEN));
    client
        .send(Message::new(
            A_AUTH,
            AUTH_RSAPUBLICKEY,
            0,
            b"QAAAAFakeKey user@host\0".to_vec(),
        ))
        .await;
    assert!(
        client.quiet_for(Duration::from_millis(200)).await,
        "waits for Allow USB debugging"
    );
    phone.allow_usb_debugging();
    let cnxn = client.recv().await;
    assert_eq!(cnxn.command, A_CNXN);
    handle.shutdown().await;
}

#[tokio::test]
async fn faults_cut_and_stall_streams() {
    let phone = SimPhone::default_phone();
    phone
        .fill_log("dev.phonelogs.crashtest", Buffer::Main, 200_000)
        .unwrap();
    let (address, handle) = Simulator::bind_loopback(None, phone.clone()).await.unwrap();

    phone.inject_fault(Fault::DropAfterBytes(10_000));
    let mut client = Client::connect(address).await;
    client.handshake(4096).await;
    let remote = client.open(1, "shell,v2,raw:logcat -d").await;
    let mut received = 0usize;
    let mut closed = false;
    for _ in 0..100 {
        let mut header = [0u8; 24];
        match timeout(
            Duration::from_secs(5),
            client.stream.read_exact(&mut header),
        )
        .await
        .unwrap()
        {
            Ok(_) => {
                let length = u32::from_le_bytes(header[12..16].try_into().unwrap()) as usize;
                let mut data = vec![0u8; length];
                client.stream.read_exact(&mut data).await.unwrap();
                received += length;
                client
                    .send(Message::new(A_OKAY, 1, remote, Vec::new()))
                    .await;
            }
            Err(_) => {
                closed = true;
                break;
            }
        }
    }
    assert!(closed, "the connection was dropped mid-stream");
    assert!(received <= 10_000 && received > 0, "{received}");

    phone.inject_fault(Fault::Stall(Some(Duration::from_millis(300))));
    let mut client = Client::connect(address).await;
    client.handshake(4096).await;
    let remote = client.open(2, "shell,v2,raw:echo late").await;
    assert!(
        client.quiet_for(Duration::from_millis(150)).await,
        "stalled"
    );
    let (out, _, code) = parse_v2(&client.drain(2, remote).await);
    assert_eq!((out, code), (b"late\n".to_vec(), Some(0)));

    phone.set_offline(true);
    let mut client = Client::connect(address).await;
    client
        .send(Message::new(
            A_CNXN,
            0x0100_0001,
            4096,
            b"host::\0".to_vec(),
        ))
        .await;
    let mut byte = [0u8; 1];
    let read = timeout(Duration::from_secs(2), client.stream.read(&mut byte))
        .await
        .unwrap();
    assert!(
        matches!(read, Ok(0) | Err(_)),
        "an offline phone closes at once"
    );
    handle.shutdown().await;
}

#[tokio::test]
async fn run_sim_serves_the_chosen_profile_on_the_chosen_port() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let options = phonelogs_adbsim::SimOptions {
        port: Some(port),
        android: Some(phonelogs_adbsim::AndroidVersion::Android10),
        ..Default::default()
    };
    let (said, heard) = std::sync::mpsc::channel();
    let server = tokio::spawn(phonelogs_adbsim::run_sim(options, move |line| {
        let _ = said.send(line.to_owned());
    }));
    let address: std::net::SocketAddr = ([127, 0, 0, 1], port).into();
    let mut client = None;
    for _ in 0..100 {
        if let Ok(stream) = TcpStream::connect(address).await {
            client = Some(Client { stream });
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut client = client.expect("run_sim listens");
    assert_eq!(
        heard.recv_timeout(Duration::from_secs(5)).ok(),
        Some(format!("listening on {address}")),
        "run_sim says where it listens"
    );
    let cnxn = client.handshake(4096).await;
    assert!(
        String::from_utf8(cnxn.data)
            .unwrap()
            .contains("ro.product.name=sargo;")
    );
    let remote = client
        .open(1, "shell,v2,raw:getprop ro.build.version.sdk")
        .await;
    let (out, _, code) = parse_v2(&client.drain(1, remote).await);
    assert_eq!((out, code), (b"29\n".to_vec(), Some(0)));
    server.abort();
}
