//! The small traits the follower and the crash reader run over, so that tests drive the real
//! logic with fake services and the idevice-backed implementations stay thin.
//!
//! A [`DeviceBackend`] lists devices and hands out the [`DeviceServices`] of one of them: a
//! [`ProcessLister`], a [`StreamOpener`] for per-process os_trace streams, an [`AppLookup`] for
//! installation_proxy's `Lookup`, and a [`CrashFileSource`] for the crash report services.

use std::sync::Arc;

use async_trait::async_trait;
use phonelogs_crash::ostrace::OsTraceEntry;
use phonelogs_driver::{AppId, DeviceId, DeviceInfo, Result};

use crate::sources::{ListingFailed, ProcessList};
// The process values live with the process lists; they are part of this module's traits too.
pub use crate::sources::{ProcessEntry, ProcessImage};

/// Lists the phone's processes, from the best source the phone offers now ([`crate::sources`]:
/// CoreDevice's app service, instruments, or os_trace_relay's `PidList`).
#[async_trait]
pub trait ProcessLister: Send + Sync {
    /// Every running process, which source answered, and why better ones did not; or why no
    /// source answered.
    async fn processes(&self) -> std::result::Result<ProcessList, ListingFailed>;
}

/// One listing of `lister`'s processes under a time limit: one that takes longer is a failure
/// that says so ([`ListingFailed::timed_out`]).
pub async fn list_within(
    lister: &dyn ProcessLister,
    after: std::time::Duration,
) -> std::result::Result<ProcessList, ListingFailed> {
    tokio::time::timeout(after, lister.processes())
        .await
        .unwrap_or_else(|_| Err(ListingFailed::timed_out(after)))
}

/// One open os_trace stream of one process.
#[async_trait]
pub trait LogStream: Send {
    /// The next entry, or `None` once the phone closed the stream.
    async fn next_entry(&mut self) -> Result<Option<OsTraceEntry>>;

    /// Counts in `refused`, from now on, each record the stream skips because Apple's client
    /// would refuse it (another version, header size or size), so the follower can tell the
    /// agent why lines may be missing. A stream that parses no records counts nothing.
    fn count_refused_in(&mut self, refused: std::sync::Arc<std::sync::atomic::AtomicU64>) {
        let _ = refused;
    }
}

/// Opens os_trace streams (`StartActivity` with a pid). There is deliberately no way to open a
/// stream for all processes: the pid is not optional.
#[async_trait]
pub trait StreamOpener: Send + Sync {
    /// Opens the stream of the process `pid`.
    async fn open(&self, pid: u32) -> Result<Box<dyn LogStream>>;

    /// Opens the stream of `pid` another way than [`StreamOpener::open`] did, for a stream
    /// that opened and then stayed silent while its process ran (reported of lockdown's
    /// os_trace_relay on iOS 27 betas): the RemoteXPC shim through the CoreDevice tunnel.
    /// `Unsupported` when the phone has no other way (no tunnel), the default. Opening it
    /// changes nothing else: a quiet app's stream is silent too.
    async fn open_other(&self, pid: u32) -> Result<Box<dyn LogStream>> {
        let _ = pid;
        Err(phonelogs_driver::Error::Unsupported(
            "no other way to the phone's os_trace_relay".into(),
        ))
    }

    /// The other way delivered an entry while the usual way, opened again beside it, had not:
    /// the usual way is what is silent on this phone, so its later streams may open the other
    /// way first. Nothing by default.
    fn other_way_worked(&self) {}
}

/// What installation_proxy's `Lookup` says about an installed app.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppRecord {
    /// The bundle id.
    pub bundle_id: AppId,
    /// The bundle's absolute path on the phone (`Path`); it moves when the app is reinstalled.
    pub path: String,
    /// The main executable's name (`CFBundleExecutable`), when known.
    pub executable: Option<String>,
    /// The display name (`CFBundleDisplayName`, else `CFBundleName`), when known.
    pub label: Option<String>,
    /// One of the phone's own apps (`ApplicationType` `System`, or a `com.apple.` bundle id).
    pub system: bool,
    /// Signed with `get-task-allow` (a development profile).
    pub dev_build: bool,
    /// The build (`CFBundleVersion`), under which the person files its `.dSYM`s.
    pub version: Option<String>,
}

/// Looks apps up (installation_proxy `Lookup`).
#[async_trait]
pub trait AppLookup: Send + Sync {
    /// The app's record, or `None` when it is not installed.
    async fn lookup(&self, app: &AppId) -> Result<Option<AppRecord>>;
}

/// A directory listing and file reader over `com.apple.crashreportcopymobile` (AFC), opened
/// once per `app_crashes` call. It only reads: it never moves or deletes a report.
#[async_trait]
pub trait CrashDir: Send {
    /// The names in a directory (`""` is the root, `"Retired"` the retired reports), without
    /// `.` and `..`.
    async fn list(&mut self, dir: &str) -> Result<Vec<String>>;
    /// A file's bytes, by its path relative to the root (`"Retired/x.ips"`).
    async fn read(&mut self, path: &str) -> Result<Vec<u8>>;
}

/// The crash report services of a phone.
#[async_trait]
pub trait CrashFileSource: Send + Sync {
    /// Asks `com.apple.crashreportmover` to move new reports where the copy service shows them,
    /// and waits for its `ping`.
    async fn flush(&self) -> Result<()>;
    /// Opens `com.apple.crashreportcopymobile`.
    async fn open(&self) -> Result<Box<dyn CrashDir>>;
}

/// What the phone says about itself that decides which process source can answer: its iOS
/// version, Developer Mode, the developer disk image (for `phonelogs doctor`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhoneFacts {
    /// lockdown's `ProductVersion`, when it said.
    pub product_version: Option<String>,
    /// lockdown's `DeveloperModeStatus` (iOS 16 and later), when it said.
    pub developer_mode: Option<bool>,
    /// Whether the developer disk image is mounted, as the image mounter says; why it could not
    /// tell otherwise.
    pub disk_image: std::result::Result<bool, String>,
}

/// Reads [`PhoneFacts`].
#[async_trait]
pub trait FactReader: Send + Sync {
    /// The phone's facts; each one it would not give is absent.
    async fn facts(&self) -> PhoneFacts;
}

/// The services of one device.
#[derive(Clone)]
pub struct DeviceServices {
    /// Its process list.
    pub processes: Arc<dyn ProcessLister>,
    /// Its os_trace streams.
    pub streams: Arc<dyn StreamOpener>,
    /// Its installed apps.
    pub apps: Arc<dyn AppLookup>,
    /// Its crash reports.
    pub crashes: Arc<dyn CrashFileSource>,
    /// What it says about itself.
    pub facts: Arc<dyn FactReader>,
}

impl std::fmt::Debug for DeviceServices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DeviceServices { .. }")
    }
}

/// Where devices come from: usbmuxd for real phones, a table of fakes in tests.
#[async_trait]
pub trait DeviceBackend: Send + Sync {
    /// Every device the backend sees, in any state.
    async fn devices(&self) -> Result<Vec<DeviceInfo>>;
    /// The services of one device: [`phonelogs_driver::Error::DeviceNotFound`] when it is not
    /// there, [`phonelogs_driver::Error::DeviceUnavailable`] when it is not paired or locked,
    /// [`phonelogs_driver::Error::Unsupported`] for a Simulator.
    async fn connect(&self, device: &DeviceId) -> Result<DeviceServices>;
    /// The usbmuxd address this backend reaches, when it is one of several (the driver's
    /// [`phonelogs_driver::AppLogger::source`]); `None` by default.
    fn address(&self) -> Option<String> {
        None
    }
    /// Whether [`DeviceBackend::address`] is the platform's own usbmuxd (the driver's
    /// [`phonelogs_driver::AppLogger::source_is_default`]); `false` by default.
    fn is_default_address(&self) -> bool {
        false
    }
}
