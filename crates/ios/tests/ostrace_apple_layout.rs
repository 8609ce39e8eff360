//! Issue 38, item 1: the simulated phones' os_trace records, read off the wire (idevice's
//! usbmuxd client, lockdown with TLS, `StartActivity`), decoded by a small decoder written here
//! from libimobiledevice's `ostrace_packet_header_t` alone (`include/libimobiledevice/ostrace.h`,
//! cited in `testdata/README.md`), not by `phonelogs_crash::ostrace`, and held to Apple's size
//! rule (`size == 129 + 8N + every string length`, `shared/notes/ios-ostrace-apple.md`) on
//! every record, on 16.7, 17.2, 18.6 and 26.1.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use idevice::usbmuxd::UsbmuxdAddr;
use idevice::{Idevice, IdeviceError, IdeviceService, ReadWrite};
use phonelogs_ios::protocol;
use phonelogs_iossim::{IosSim, IosVersion, Level, SimPhone};

const APP: &str = "dev.phonelogs.crashtest";

/// libimobiledevice's packed header, field by field in its order (`uint8_t marker; uint32_t
/// type; uint32_t header_size; uint32_t pid; uint64_t procid; unsigned char procuuid[16];
/// uint16_t procpath_len; uint64_t aid; uint64_t paid; uint64_t time_sec; uint32_t time_usec;
/// uint8_t unk06; uint8_t level; uint8_t unk07..unk12; uint64_t timestamp; uint32_t
/// thread_id; uint32_t unk13; unsigned char imageuuid[16]; uint16_t imagepath_len; uint32_t
/// message_len; uint32_t offset; uint16_t subsystem_len; uint16_t unk14; uint16_t
/// category_len; uint16_t unk15; uint32_t unk16;`), the offsets summed here, not copied.
#[derive(Debug)]
struct Header {
    marker: u8,
    kind: u32,
    header_size: u32,
    pid: u32,
    procpath_len: u16,
    time_sec: u64,
    level: u8,
    timestamp: u64,
    imagepath_len: u16,
    message_len: u32,
    subsystem_len: u16,
    category_len: u16,
    /// `unk16`, which Apple's client reads as N, the 8-byte words before the strings.
    words: u32,
}

/// Reads the packed fields in declaration order.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> &[u8] {
        let part = &self.bytes[self.at..self.at + n];
        self.at += n;
        part
    }
    fn u8(&mut self) -> u8 {
        self.take(1)[0]
    }
    fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.take(2).try_into().unwrap())
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take(4).try_into().unwrap())
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take(8).try_into().unwrap())
    }
}

fn decode_header(record: &[u8]) -> (Header, usize) {
    let mut c = Cursor {
        bytes: record,
        at: 0,
    };
    let marker = c.u8();
    let kind = c.u32();
    let header_size = c.u32();
    let pid = c.u32();
    let _procid = c.u64();
    let _procuuid = c.take(16);
    let procpath_len = c.u16();
    let _aid = c.u64();
    let _paid = c.u64();
    let time_sec = c.u64();
    let _time_usec = c.u32();
    let _unk06 = c.u8();
    let level = c.u8();
    let _unk07_12 = c.take(6);
    let timestamp = c.u64();
    let _thread_id = c.u32();
    let _unk13 = c.u32();
    let _imageuuid = c.take(16);
    let imagepath_len = c.u16();
    let message_len = c.u32();
    let _offset = c.u32();
    let subsystem_len = c.u16();
    let _unk14 = c.u16();
    let category_len = c.u16();
    let _unk15 = c.u16();
    let words = c.u32();
    let header = Header {
        marker,
        kind,
        header_size,
        pid,
        procpath_len,
        time_sec,
        level,
        timestamp,
        imagepath_len,
        message_len,
        subsystem_len,
        category_len,
        words,
    };
    (header, c.at)
}

/// The strings after the header and the words, each by its length, NUL checked.
fn strings(record: &[u8], header: &Header, start: usize) -> Vec<String> {
    let mut at = start + 8 * header.words as usize;
    let mut out = Vec::new();
    for len in [
        usize::from(header.procpath_len),
        usize::from(header.imagepath_len),
        header.message_len as usize,
        usize::from(header.subsystem_len),
        usize::from(header.category_len),
    ] {
        let raw = &record[at..at + len];
        at += len;
        if len > 0 {
            assert_eq!(raw.last(), Some(&0), "a string without its NUL: {raw:?}");
        }
        out.push(String::from_utf8(raw[..len.saturating_sub(1)].to_vec()).unwrap());
    }
    out
}

#[derive(Debug)]
struct OsTrace(Idevice);

impl IdeviceService for OsTrace {
    fn service_name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed(protocol::OS_TRACE_RELAY)
    }

    async fn from_stream(idevice: Idevice) -> Result<Self, IdeviceError> {
        Ok(OsTrace(idevice))
    }
}

async fn open_stream(sim: &IosSim, pid: u32) -> Box<dyn ReadWrite> {
    let addr = UsbmuxdAddr::TcpSocket(sim.tcp_addr().unwrap());
    let mut mux = addr.connect(1).await.unwrap();
    let device = mux.get_devices().await.unwrap().remove(0);
    let provider = device.to_provider(addr, "ostrace-apple-layout");
    let mut socket = OsTrace::connect(&provider)
        .await
        .unwrap()
        .0
        .get_socket()
        .unwrap();
    protocol::start_activity(&mut socket, pid).await.unwrap();
    socket
}

async fn records_follow_apples_layout(ios: IosVersion) {
    let phone = SimPhone::default_phone_on(ios);
    let sim = IosSim::bind_loopback(None, phone.clone()).await.unwrap();
    let pid = phone.launch(APP).unwrap();
    let mut stream = open_stream(&sim, pid).await;
    let long = "ü".repeat(40_000); // 80,000 bytes: a length past 16 bits
    let sent: Vec<(Option<(&str, &str)>, String)> = vec![
        (None, "plain".into()),
        (Some(("dev.phonelogs.crashtest", "net")), "labelled".into()),
        (
            Some(("dev.phonelogs.crashtest", "")),
            "subsystem only".into(),
        ),
        (Some(("", "ui")), "category only".into()),
        (None, String::new()),
        (None, long),
    ];
    // Logged until the stream carries them: the subscription starts with StartActivity.
    for (label, message) in &sent {
        phone.log(pid, Level::Error, *label, message);
    }
    for (label, message) in &sent {
        let frame = tokio::time::timeout(
            Duration::from_secs(10),
            protocol::read_entry_frame(&mut stream),
        )
        .await
        .expect("a record within 10 s")
        .unwrap()
        .expect("the stream stays open");
        let (header, start) = decode_header(&frame);
        assert_eq!(start, 129, "libimobiledevice's header is 129 bytes");
        assert_eq!(header.marker, 2, "{ios:?}: version");
        assert_eq!(header.kind, 8, "{ios:?}: type");
        assert_eq!(header.header_size, 129, "{ios:?}: header size");
        assert_eq!(header.pid, pid);
        assert_eq!(header.level, 0x10);
        assert!(header.time_sec > 1_600_000_000, "{header:?}");
        assert!(header.timestamp > 0, "the mach time at 75");
        let rule = 129
            + 8 * header.words as usize
            + usize::from(header.procpath_len)
            + usize::from(header.imagepath_len)
            + header.message_len as usize
            + usize::from(header.subsystem_len)
            + usize::from(header.category_len);
        assert_eq!(frame.len(), rule, "{ios:?}: Apple's size rule, {header:?}");
        let texts = strings(&frame, &header, start);
        let path = phone
            .processes()
            .into_iter()
            .find(|p| p.pid == pid)
            .unwrap();
        assert_eq!(texts[0], path.executable, "{ios:?}: the process path");
        assert_eq!(&texts[2], message);
        let (subsystem, category) = label.unwrap_or(("", ""));
        assert_eq!(
            (texts[3].as_str(), texts[4].as_str()),
            (subsystem, category)
        );
        assert_eq!(
            usize::from(header.subsystem_len),
            if subsystem.is_empty() {
                0
            } else {
                subsystem.len() + 1
            }
        );
        // And the driver's parser reads the same record the same way.
        let ours = phonelogs_crash::ostrace::parse_entry(&frame).unwrap();
        assert_eq!((&ours.filename, &ours.message), (&texts[0], message));
        assert_eq!(ours.subsystem.unwrap_or_default(), subsystem);
        assert_eq!(ours.category.unwrap_or_default(), category);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_follow_apples_layout_on_16_7() {
    records_follow_apples_layout(IosVersion::V16_7_10).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_follow_apples_layout_on_17_2() {
    records_follow_apples_layout(IosVersion::V17_2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_follow_apples_layout_on_18_6() {
    records_follow_apples_layout(IosVersion::V18_6).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_follow_apples_layout_on_26_1() {
    records_follow_apples_layout(IosVersion::V26_1).await;
}
