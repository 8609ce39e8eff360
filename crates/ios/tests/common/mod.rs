//! Fake iPhone services for the tests: a process table, os_trace streams that speak the
//! documented wire format over `tokio::io::duplex`, an installation_proxy table, and a crash
//! report directory. The driver's real follower and crash reader run over them.

#![allow(dead_code)]

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use phonelogs_crash::ostrace::OsTraceEntry;
use phonelogs_driver::{AppId, DeviceId, DeviceInfo, DeviceState, Error, Platform, Result};
use phonelogs_ios::protocol;
use phonelogs_ios::services::{
    AppLookup, AppRecord, CrashDir, CrashFileSource, DeviceBackend, DeviceServices, FactReader,
    LogStream, PhoneFacts, ProcessEntry, ProcessImage, ProcessLister, StreamOpener,
};
use phonelogs_ios::sources::{Blocker, ListingFailed, ProcessList, ProcessSource, SourceMiss};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::sync::mpsc;

/// The level bytes of os_log, as the stream carries them (iOS notes §6.5).
pub const NOTICE: u8 = 0x00;
pub const INFO: u8 = 0x01;
pub const DEBUG: u8 = 0x02;
pub const USER_ACTION: u8 = 0x03;
pub const ERROR: u8 = 0x10;
pub const FAULT: u8 = 0x11;

/// One entry to send, before encoding.
#[derive(Debug, Clone)]
pub struct Raw {
    pub pid: u32,
    pub seconds: u32,
    pub micros: u32,
    pub level: u8,
    pub filename: String,
    pub message: String,
    pub subsystem: Option<String>,
    pub category: Option<String>,
}

/// Encodes a log record as Apple's client reads it (`shared/notes/ios-ostrace-apple.md`):
/// version 2, type 8, header size 129, then the process path, image path, message,
/// subsystem and category, each with its length (NUL included, 0 = absent) in the header.
pub fn encode_entry(raw: &Raw) -> Vec<u8> {
    let mut bytes = vec![0u8; 129];
    bytes[0] = 2;
    bytes[1..5].copy_from_slice(&8u32.to_le_bytes());
    bytes[5..9].copy_from_slice(&129u32.to_le_bytes());
    bytes[9..13].copy_from_slice(&raw.pid.to_le_bytes());
    bytes[13..21].copy_from_slice(&u64::from(raw.pid).to_le_bytes());
    bytes[55..63].copy_from_slice(&u64::from(raw.seconds).to_le_bytes());
    bytes[63..67].copy_from_slice(&raw.micros.to_le_bytes());
    bytes[67] = 0x04;
    bytes[68] = raw.level;
    let z = |s: &str| {
        let mut v = s.as_bytes().to_vec();
        v.push(0);
        v
    };
    let path = z(&raw.filename);
    let image = z("/usr/lib/system/libsystem_trace.dylib");
    let message = z(&raw.message);
    let subsystem = raw.subsystem.as_deref().map(z).unwrap_or_default();
    let category = raw.category.as_deref().map(z).unwrap_or_default();
    bytes[37..39].copy_from_slice(&(path.len() as u16).to_le_bytes());
    bytes[107..109].copy_from_slice(&(image.len() as u16).to_le_bytes());
    bytes[109..113].copy_from_slice(&(message.len() as u32).to_le_bytes());
    bytes[117..121].copy_from_slice(&(subsystem.len() as u32).to_le_bytes());
    bytes[121..125].copy_from_slice(&(category.len() as u32).to_le_bytes());
    bytes.extend(path);
    bytes.extend(image);
    bytes.extend(message);
    bytes.extend(subsystem);
    bytes.extend(category);
    bytes
}

/// A stream frame: `0x02`, the entry's length (little-endian), the entry.
pub fn frame(entry: &[u8]) -> Vec<u8> {
    let mut out = vec![0x02];
    out.extend((entry.len() as u32).to_le_bytes());
    out.extend(entry);
    out
}

/// A plist message as the services frame it: a big-endian length, then the plist.
pub fn plist_message(value: &plist::Value) -> Vec<u8> {
    let mut body = Vec::new();
    plist::to_writer_xml(&mut body, value).unwrap();
    let mut out = (body.len() as u32).to_be_bytes().to_vec();
    out.extend(body);
    out
}

/// Reads one big-endian-length-prefixed plist from the client side.
pub async fn read_request(server: &mut DuplexStream) -> Option<plist::Dictionary> {
    let len = server.read_u32().await.ok()? as usize;
    let mut body = vec![0; len];
    server.read_exact(&mut body).await.ok()?;
    plist::from_bytes::<plist::Value>(&body)
        .ok()?
        .into_dictionary()
}

/// How a fake stream behaves once opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamMode {
    /// Delivers what is logged.
    Live,
    /// Accepts `StartActivity` and then never sends a byte.
    Stall,
    /// Accepts `StartActivity` and closes at once.
    Close,
    /// Refuses `StartActivity`.
    Refuse,
}

#[derive(Default)]
pub struct FakeState {
    pub processes: Vec<ProcessEntry>,
    pub apps: HashMap<AppId, AppRecord>,
    /// Entries each pid logs as soon as its stream opens (the phone sends nothing for a pid
    /// whose stream is not open, so these stand for lines logged just after).
    pub backlog: HashMap<u32, Vec<Raw>>,
    pub senders: HashMap<u32, Vec<mpsc::UnboundedSender<Vec<u8>>>>,
    pub modes: HashMap<u32, StreamMode>,
    pub opened: Vec<u32>,
    pub requests: Vec<plist::Dictionary>,
    pub process_lists: u64,
    pub lookups: u64,
    pub fail_processes: bool,
    /// The process list names processes only, as os_trace_relay's `PidList` does without the
    /// developer disk image: each executable's file name, the source `PidList`, CoreDevice
    /// passed over.
    pub names_only: bool,
    /// What `open_other` (the RemoteXPC shim) does: `None`, no other way.
    pub other_mode: Option<StreamMode>,
    /// Every pid a stream was opened for the other way.
    pub opened_other: Vec<u32>,
    /// How often the follower said the other way delivered first.
    pub other_worked: usize,
    pub files: HashMap<String, Vec<u8>>,
    pub reads: Vec<String>,
    pub flushes: u64,
    pub mover_bytes: Vec<u8>,
}

/// A fake phone: every service trait, sharing one state.
#[derive(Clone, Default)]
pub struct FakePhone {
    pub state: Arc<Mutex<FakeState>>,
}

impl FakePhone {
    pub fn new() -> Self {
        let phone = FakePhone::default();
        phone.state.lock().unwrap().mover_bytes = b"ping\0".to_vec();
        phone
    }

    pub fn services(&self) -> DeviceServices {
        DeviceServices {
            processes: Arc::new(self.clone()),
            streams: Arc::new(self.clone()),
            apps: Arc::new(self.clone()),
            crashes: Arc::new(self.clone()),
            facts: Arc::new(self.clone()),
        }
    }

    pub fn install(&self, record: AppRecord) {
        self.state
            .lock()
            .unwrap()
            .apps
            .insert(record.bundle_id.clone(), record);
    }

    pub fn spawn_process(&self, pid: u32, executable: &str) {
        let mut s = self.state.lock().unwrap();
        s.processes.retain(|p| p.pid != pid);
        s.processes.push(ProcessEntry::at(pid, executable));
    }

    pub fn kill(&self, pid: u32) {
        self.state
            .lock()
            .unwrap()
            .processes
            .retain(|p| p.pid != pid);
    }

    pub fn set_mode(&self, pid: u32, mode: StreamMode) {
        self.state.lock().unwrap().modes.insert(pid, mode);
    }

    /// Ends every open stream of `pid`, as the phone closing it (the follower opens it again
    /// at its next poll while the process runs).
    pub fn close_streams(&self, pid: u32) {
        self.state.lock().unwrap().senders.remove(&pid);
    }

    pub fn add_backlog(&self, raw: Raw) {
        self.state
            .lock()
            .unwrap()
            .backlog
            .entry(raw.pid)
            .or_default()
            .push(raw);
    }

    /// Logs an entry on every open stream of `stream_pid` (the entry's own pid may differ, to
    /// test that the follower checks it).
    pub fn log_on(&self, stream_pid: u32, raw: &Raw) {
        let bytes = frame(&encode_entry(raw));
        let mut s = self.state.lock().unwrap();
        if let Some(senders) = s.senders.get_mut(&stream_pid) {
            senders.retain(|tx| tx.send(bytes.clone()).is_ok());
        }
    }

    pub fn log(&self, raw: &Raw) {
        self.log_on(raw.pid, raw);
    }

    /// Sends these bytes as they are on every open stream of `stream_pid` (a record that
    /// breaks the layout, say).
    pub fn log_bytes(&self, stream_pid: u32, bytes: Vec<u8>) {
        let mut s = self.state.lock().unwrap();
        if let Some(senders) = s.senders.get_mut(&stream_pid) {
            senders.retain(|tx| tx.send(bytes.clone()).is_ok());
        }
    }

    pub fn opened(&self) -> Vec<u32> {
        self.state.lock().unwrap().opened.clone()
    }

    pub fn add_file(&self, path: &str, bytes: Vec<u8>) {
        self.state.lock().unwrap().files.insert(path.into(), bytes);
    }
}

#[async_trait]
impl ProcessLister for FakePhone {
    async fn processes(&self) -> std::result::Result<ProcessList, ListingFailed> {
        let mut s = self.state.lock().unwrap();
        s.process_lists += 1;
        if s.fail_processes {
            return Err(ListingFailed {
                misses: vec![
                    SourceMiss {
                        source: ProcessSource::CoreDevice,
                        blocker: Blocker::DiskImageNotMounted,
                    },
                    SourceMiss {
                        source: ProcessSource::PidList,
                        blocker: Blocker::Locked,
                    },
                ],
            });
        }
        if s.names_only {
            let processes = s
                .processes
                .iter()
                .map(|p| match &p.image {
                    ProcessImage::Path(path) => {
                        ProcessEntry::named(p.pid, path.rsplit('/').next().unwrap_or(path))
                    }
                    ProcessImage::Name(name) => ProcessEntry::named(p.pid, name.clone()),
                })
                .collect();
            return Ok(ProcessList {
                processes,
                source: ProcessSource::PidList,
                passed_over: vec![SourceMiss {
                    source: ProcessSource::CoreDevice,
                    blocker: Blocker::DiskImageNotMounted,
                }],
            });
        }
        Ok(ProcessList::from(
            ProcessSource::CoreDevice,
            s.processes.clone(),
        ))
    }
}

#[async_trait]
impl FactReader for FakePhone {
    async fn facts(&self) -> PhoneFacts {
        PhoneFacts {
            product_version: Some("26.1".into()),
            developer_mode: Some(true),
            disk_image: Ok(!self.state.lock().unwrap().names_only),
        }
    }
}

/// The client end of a fake os_trace stream, read with the crate's own wire code.
struct DuplexLogStream {
    client: DuplexStream,
    skipped: protocol::Skipped,
    refused: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
}

#[async_trait]
impl LogStream for DuplexLogStream {
    async fn next_entry(&mut self) -> Result<Option<OsTraceEntry>> {
        Ok(protocol::next_entry_counted(
            &mut self.client,
            &mut self.skipped,
            self.refused.as_deref(),
        )
        .await?)
    }

    fn count_refused_in(&mut self, refused: std::sync::Arc<std::sync::atomic::AtomicU64>) {
        self.refused = Some(refused);
    }
}

#[async_trait]
impl StreamOpener for FakePhone {
    async fn open(&self, pid: u32) -> Result<Box<dyn LogStream>> {
        let mode = {
            let mut s = self.state.lock().unwrap();
            s.opened.push(pid);
            s.modes.get(&pid).copied().unwrap_or(StreamMode::Live)
        };
        self.stream(pid, mode).await
    }

    async fn open_other(&self, pid: u32) -> Result<Box<dyn LogStream>> {
        let mode = {
            let mut s = self.state.lock().unwrap();
            let Some(mode) = s.other_mode else {
                return Err(Error::Unsupported("no other way".into()));
            };
            s.opened_other.push(pid);
            mode
        };
        self.stream(pid, mode).await
    }

    fn other_way_worked(&self) {
        self.state.lock().unwrap().other_worked += 1;
    }
}

impl FakePhone {
    /// A fake os_trace stream of `pid` that behaves as `mode` says.
    async fn stream(&self, pid: u32, mode: StreamMode) -> Result<Box<dyn LogStream>> {
        let (mut client, mut server) = tokio::io::duplex(64 * 1024);
        let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let backlog = {
            let mut s = self.state.lock().unwrap();
            s.senders.entry(pid).or_default().push(tx);
            s.backlog.remove(&pid).unwrap_or_default()
        };
        let state = Arc::clone(&self.state);
        tokio::spawn(async move {
            let Some(request) = read_request(&mut server).await else {
                return;
            };
            state.lock().unwrap().requests.push(request.clone());
            let status = if mode == StreamMode::Refuse {
                "RequestFailed"
            } else {
                "RequestSuccessful"
            };
            let mut answer = plist::Dictionary::new();
            answer.insert("Status".into(), status.into());
            let mut bytes = vec![0x01];
            bytes.extend(plist_message(&plist::Value::Dictionary(answer)));
            if server.write_all(&bytes).await.is_err() {
                return;
            }
            match mode {
                StreamMode::Close | StreamMode::Refuse => return,
                StreamMode::Stall => {
                    // Hold the connection open and silent until the client drops it.
                    let mut sink = [0u8; 1];
                    let _ = server.read(&mut sink).await;
                    return;
                }
                StreamMode::Live => {}
            }
            for raw in backlog {
                if server.write_all(&frame(&encode_entry(&raw))).await.is_err() {
                    return;
                }
            }
            while let Some(bytes) = rx.recv().await {
                if server.write_all(&bytes).await.is_err() {
                    return;
                }
            }
        });
        protocol::start_activity(&mut client, pid).await?;
        Ok(Box::new(DuplexLogStream {
            client,
            skipped: protocol::Skipped::default(),
            refused: None,
        }))
    }
}

#[async_trait]
impl AppLookup for FakePhone {
    async fn lookup(&self, app: &AppId) -> Result<Option<AppRecord>> {
        let mut s = self.state.lock().unwrap();
        s.lookups += 1;
        Ok(s.apps.get(app).cloned())
    }
}

struct FakeDir {
    state: Arc<Mutex<FakeState>>,
}

#[async_trait]
impl CrashDir for FakeDir {
    async fn list(&mut self, dir: &str) -> Result<Vec<String>> {
        let s = self.state.lock().unwrap();
        let dir = dir.trim_matches('/');
        let mut names = HashSet::new();
        for path in s.files.keys() {
            let (parent, name) = match path.rsplit_once('/') {
                Some((p, n)) => (p, n),
                None => ("", path.as_str()),
            };
            if parent == dir {
                names.insert(name.to_owned());
            } else if dir.is_empty() {
                names.insert(path.split('/').next().unwrap_or_default().to_owned());
            }
        }
        if names.is_empty() && !dir.is_empty() {
            return Err(Error::NotFound(format!("/{dir}")));
        }
        let mut names: Vec<String> = names.into_iter().collect();
        names.sort();
        Ok(names)
    }

    async fn read(&mut self, path: &str) -> Result<Vec<u8>> {
        let mut s = self.state.lock().unwrap();
        s.reads.push(path.to_owned());
        s.files
            .get(path)
            .cloned()
            .ok_or_else(|| Error::NotFound(path.to_owned()))
    }
}

#[async_trait]
impl CrashFileSource for FakePhone {
    async fn flush(&self) -> Result<()> {
        // The mover speaks over a duplex too: it sends `ping` (with a NUL, as pymobiledevice3
        // expects) and the crate's own reader must accept it.
        let (mut client, mut server) = tokio::io::duplex(64);
        let bytes = {
            let mut s = self.state.lock().unwrap();
            s.flushes += 1;
            s.mover_bytes.clone()
        };
        tokio::spawn(async move {
            let _ = server.write_all(&bytes).await;
        });
        Ok(protocol::await_ping(&mut client).await?)
    }

    async fn open(&self) -> Result<Box<dyn CrashDir>> {
        Ok(Box::new(FakeDir {
            state: Arc::clone(&self.state),
        }))
    }
}

/// A backend with one fake phone.
pub struct FakeBackend {
    pub device: DeviceId,
    pub phone: FakePhone,
}

#[async_trait]
impl DeviceBackend for FakeBackend {
    async fn devices(&self) -> Result<Vec<DeviceInfo>> {
        Ok(vec![DeviceInfo {
            id: self.device.clone(),
            platform: Platform::Ios,
            model: Some("iPhone14,2".into()),
            state: DeviceState::Online,
        }])
    }

    async fn connect(&self, device: &DeviceId) -> Result<DeviceServices> {
        if *device != self.device {
            return Err(Error::DeviceNotFound(device.to_string()));
        }
        Ok(self.phone.services())
    }
}

pub const BUNDLE: &str =
    "/private/var/containers/Bundle/Application/1B2C3D4E-0000-4000-8000-000000000001/CrashTest.app";

pub fn record(app: &str, path: &str, dev_build: bool) -> AppRecord {
    AppRecord {
        bundle_id: AppId::new(app),
        path: path.into(),
        executable: path
            .rsplit('/')
            .next()
            .map(|n| n.trim_end_matches(".app").to_owned()),
        label: None,
        system: app.starts_with("com.apple."),
        dev_build,
        version: None,
    }
}

pub fn raw(pid: u32, seconds: u32, level: u8, filename: &str, message: &str) -> Raw {
    Raw {
        pid,
        seconds,
        micros: 0,
        level,
        filename: filename.into(),
        message: message.into(),
        subsystem: None,
        category: None,
    }
}

/// A `bug_type` 309 report in the documented layout: a one-line header, then a pretty-printed
/// JSON body (iOS notes §3 and §4).
pub fn ips_309(
    bundle: &str,
    name: &str,
    timestamp: &str,
    pid: u32,
    exception: (&str, &str),
    reason: Option<&str>,
    termination: Option<serde_like::Termination<'_>>,
) -> Vec<u8> {
    let header = format!(
        r#"{{"app_name":"{name}","timestamp":"{timestamp}","app_version":"1.0","slice_uuid":"82d13d98-219e-3040-b62a-07a297007a7c","build_version":"1","platform":2,"bundleID":"{bundle}","share_with_app_devs":1,"is_first_party":0,"bug_type":"309","os_version":"iPhone OS 17.5 (21F79)","roots_installed":0,"name":"{name}","incident_id":"356753AC-2172-45DC-977A-11F2328980D0"}}"#
    );
    let capture = timestamp.replace(".00 ", ".0000 ");
    let reason = reason
        .map(|r| format!(",\n  \"exceptionReason\" : {{\n    \"composed_message\" : \"{r}\"\n  }}"))
        .unwrap_or_default();
    let termination = termination
        .map(|t| {
            format!(
                ",\n  \"termination\" : {{\n    \"namespace\" : \"{}\",\n    \"code\" : {},\n    \"flags\" : 6,\n    \"reasons\" : [\"{}\",\"WatchdogEvent: process-exit\"]\n  }}",
                t.namespace, t.code, t.reason
            )
        })
        .unwrap_or_default();
    // Only an abort leaves application-specific information; a watchdog kill does not.
    let asi = if exception.1 == "SIGABRT" {
        "  \"asi\" : {\"libsystem_c.dylib\":[\"abort() called\"]},"
    } else {
        ""
    };
    let body = format!(
        r#"{{
  "uptime" : 1200,
  "procRole" : "Foreground",
  "version" : 2,
  "userID" : 501,
  "modelCode" : "iPhone14,2",
  "captureTime" : "{capture}",
  "incident" : "356753AC-2172-45DC-977A-11F2328980D0",
  "pid" : {pid},
  "cpuType" : "ARM-64",
  "bug_type" : "309",
  "procName" : "{name}",
  "procPath" : "\/private\/var\/containers\/Bundle\/Application\/1B2C3D4E\/{name}.app\/{name}",
  "bundleInfo" : {{"CFBundleShortVersionString":"1.0","CFBundleVersion":"1","CFBundleIdentifier":"{bundle}"}},
  "exception" : {{"codes":"0x0000000000000000, 0x0000000000000000","rawCodes":[0,0],"type":"{}","signal":"{}"}}{reason}{termination},
{asi}
  "faultingThread" : 0,
  "threads" : [{{"triggered":true,"id":1001,"queue":"com.apple.main-thread","frames":[{{"imageOffset":4242,"symbol":"main","symbolLocation":12,"imageIndex":0}}]}}],
  "usedImages" : [{{"source":"P","arch":"arm64","base":4294967296,"size":65536,"uuid":"82d13d98-219e-3040-b62a-07a297007a7c","path":"\/private\/var\/containers\/Bundle\/Application\/1B2C3D4E\/{name}.app\/{name}","name":"{name}"}}]
}}"#,
        exception.0, exception.1
    );
    format!("{header}\n{body}").into_bytes()
}

pub mod serde_like {
    /// A termination, for [`super::ips_309`].
    #[derive(Debug, Clone, Copy)]
    pub struct Termination<'a> {
        pub namespace: &'a str,
        pub code: u64,
        pub reason: &'a str,
    }
}

/// A watchdog termination (FRONTBOARD `0x8BADF00D`) whose explanation is `explanation`.
pub fn watchdog_reason(explanation: &str) -> String {
    format!("RBSTerminateContext| domain:10 code:0x8BADF00D explanation:{explanation}")
}
