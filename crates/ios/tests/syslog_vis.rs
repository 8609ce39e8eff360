//! Issue 38, item 6: `com.apple.syslog_relay` escapes every byte it does not print as is with
//! BSD `vis(3)`; the simulated phone writes its lines so (`phonelogs_iossim::vis_encode`),
//! and `phonelogs_crash::vis` turns them back into the text the app logged. Read off the wire:
//! idevice's usbmuxd client, lockdown with TLS, the service's NUL-delimited lines.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use idevice::usbmuxd::UsbmuxdAddr;
use idevice::{Idevice, IdeviceError, IdeviceService, ReadWrite};
use phonelogs_crash::vis;
use phonelogs_iossim::{IosSim, IosVersion, Level, SimPhone};
use tokio::io::AsyncReadExt;

#[derive(Debug)]
struct Syslog(Idevice);

impl IdeviceService for Syslog {
    fn service_name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("com.apple.syslog_relay")
    }

    async fn from_stream(idevice: Idevice) -> Result<Self, IdeviceError> {
        Ok(Syslog(idevice))
    }
}

async fn open(sim: &IosSim) -> Box<dyn ReadWrite> {
    let addr = UsbmuxdAddr::TcpSocket(sim.tcp_addr().unwrap());
    let mut mux = addr.connect(1).await.unwrap();
    let device = mux.get_devices().await.unwrap().remove(0);
    let provider = device.to_provider(addr, "syslog-vis");
    Syslog::connect(&provider)
        .await
        .unwrap()
        .0
        .get_socket()
        .unwrap()
}

/// The next line up to its NUL, without the NUL and the line break before it.
async fn line(stream: &mut Box<dyn ReadWrite>) -> String {
    let mut bytes = Vec::new();
    loop {
        let byte = tokio::time::timeout(Duration::from_secs(10), stream.read_u8())
            .await
            .expect("a line within 10 s")
            .unwrap();
        if byte == 0 {
            break;
        }
        bytes.push(byte);
    }
    let text = String::from_utf8(bytes).expect("vis output is ASCII");
    text.strip_suffix('\n').unwrap_or(&text).to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn syslog_relay_lines_decode_to_what_the_app_logged() {
    let phone = SimPhone::default_phone_on(IosVersion::V16_7_10);
    let sim = IosSim::bind_loopback(None, phone.clone()).await.unwrap();
    let pid = phone.launch("dev.phonelogs.crashtest").unwrap();
    let mut stream = open(&sim).await;
    let message = "日本 café \\ back\u{a0}slash \u{1}ctl \u{7f}del";
    // The service subscribes once the connection is served: log until a line arrives (whole
    // lines are read, never cut by a timeout).
    let logger = {
        let phone = phone.clone();
        tokio::spawn(async move {
            loop {
                phone.log(pid, Level::Error, None, message);
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
    };
    let first = line(&mut stream).await;
    logger.abort();
    assert!(first.is_ascii());
    assert!(first.contains(r"\M-f\M^W\M-%"), "日 escaped: {first}");
    assert!(first.contains(r"\134"), "the backslash escaped: {first}");
    let (_, raw_message) = first.split_once("<Error>: ").unwrap();
    assert_ne!(raw_message, message);
    assert_eq!(vis::decode(raw_message), message);
}
