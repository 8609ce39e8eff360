//! The phone itself, with no wire: apps, processes, the os_log stream, crash reports, the trust
//! state and the faults. Everything above (the services, then usbmuxd) reads and changes this;
//! nothing here knows a socket.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use plist::{Dictionary, Value};
use tokio::sync::{broadcast, watch};

/// Where iOS puts third-party apps: one container per install.
pub const CONTAINERS: &str = "/private/var/containers/Bundle/Application";

/// An os_log level, as the byte os_trace_relay puts at offset 68 of an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// "Default" in Console (0x00).
    Default,
    /// 0x01.
    Info,
    /// 0x02.
    Debug,
    /// 0x03, Console's user action.
    UserAction,
    /// 0x10.
    Error,
    /// 0x11.
    Fault,
}

impl Level {
    /// The wire byte.
    pub fn byte(self) -> u8 {
        match self {
            Level::Default => 0x00,
            Level::Info => 0x01,
            Level::Debug => 0x02,
            Level::UserAction => 0x03,
            Level::Error => 0x10,
            Level::Fault => 0x11,
        }
    }

    /// The name syslog_relay prints in angle brackets.
    pub fn syslog_name(self) -> &'static str {
        match self {
            Level::Default | Level::UserAction => "Notice",
            Level::Info => "Info",
            Level::Debug => "Debug",
            Level::Error => "Error",
            Level::Fault => "Fault",
        }
    }
}

/// How an app was signed: what decides `get-task-allow`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signing {
    /// Built and installed by Xcode with a development profile: `get-task-allow` true.
    Development,
    /// From the App Store: `get-task-allow` absent, `beta-reports-active` absent.
    Store,
    /// One of the phone's own apps.
    System,
}

/// An app extension inside an app's `PlugIns/`.
#[derive(Debug, Clone)]
pub struct Extension {
    /// Its bundle id (`<app>.<name>`).
    pub bundle_id: String,
    /// Its directory name, `X.appex`.
    pub directory: String,
    /// Its executable's name.
    pub executable: String,
}

/// An installed app.
#[derive(Debug, Clone)]
pub struct App {
    /// `CFBundleIdentifier`.
    pub bundle_id: String,
    /// `CFBundleName`.
    pub name: String,
    /// `CFBundleDisplayName`.
    pub display_name: String,
    /// `CFBundleExecutable`.
    pub executable: String,
    /// The bundle directory, `…/Name.app`.
    pub path: String,
    /// `CFBundleShortVersionString`.
    pub version: String,
    /// `CFBundleVersion`.
    pub build: String,
    /// How it was signed.
    pub signing: Signing,
    /// Its app extensions.
    pub extensions: Vec<Extension>,
    /// The team id in its entitlements.
    pub team: String,
}

impl App {
    /// A third-party app in its own container (`uuid`), bundle directory `dir` (with `.app`).
    pub fn third_party(
        bundle_id: &str,
        name: &str,
        executable: &str,
        container: &str,
        dir: &str,
        signing: Signing,
    ) -> App {
        App {
            bundle_id: bundle_id.into(),
            name: name.into(),
            display_name: name.into(),
            executable: executable.into(),
            path: format!("{CONTAINERS}/{container}/{dir}"),
            version: "1.0".into(),
            build: "1".into(),
            signing,
            extensions: Vec::new(),
            team: "AB12CD34EF".into(),
        }
    }

    /// One of the phone's own apps at `path`.
    pub fn system(bundle_id: &str, name: &str, executable: &str, path: &str) -> App {
        App {
            bundle_id: bundle_id.into(),
            name: name.into(),
            display_name: name.into(),
            executable: executable.into(),
            path: path.into(),
            version: "16.7".into(),
            build: "1".into(),
            signing: Signing::System,
            extensions: Vec::new(),
            team: String::new(),
        }
    }

    /// Adds an extension `PlugIns/<directory>` with its own executable.
    pub fn with_extension(mut self, suffix: &str, directory: &str, executable: &str) -> App {
        self.extensions.push(Extension {
            bundle_id: format!("{}.{suffix}", self.bundle_id),
            directory: directory.into(),
            executable: executable.into(),
        });
        self
    }

    /// The main executable's path.
    pub fn executable_path(&self) -> String {
        format!("{}/{}", self.path, self.executable)
    }

    /// An extension's executable path.
    pub fn extension_path(&self, extension: &Extension) -> String {
        format!(
            "{}/PlugIns/{}/{}",
            self.path, extension.directory, extension.executable
        )
    }

    /// installation_proxy's `ApplicationType`.
    pub fn application_type(&self) -> &'static str {
        match self.signing {
            Signing::System => "System",
            _ => "User",
        }
    }

    /// The entitlements installd reports: what the signing profile granted.
    pub fn entitlements(&self) -> Dictionary {
        let mut e = Dictionary::new();
        if self.signing == Signing::System {
            e.insert("platform-application".into(), Value::Boolean(true));
            e.insert(
                "com.apple.private.security.container-required".into(),
                Value::Boolean(false),
            );
            return e;
        }
        e.insert(
            "application-identifier".into(),
            Value::from(format!("{}.{}", self.team, self.bundle_id)),
        );
        e.insert(
            "com.apple.developer.team-identifier".into(),
            Value::from(self.team.clone()),
        );
        e.insert(
            "keychain-access-groups".into(),
            Value::Array(vec![Value::from(format!(
                "{}.{}",
                self.team, self.bundle_id
            ))]),
        );
        match self.signing {
            Signing::Development => {
                e.insert("get-task-allow".into(), Value::Boolean(true));
                e.insert("aps-environment".into(), Value::from("development"));
            }
            _ => {
                e.insert("aps-environment".into(), Value::from("production"));
            }
        }
        e
    }

    /// The attributes installation_proxy knows for this app (`Lookup`/`Browse` without
    /// `ReturnAttributes` return all of them).
    pub fn attributes(&self) -> Dictionary {
        let mut d = Dictionary::new();
        d.insert(
            "CFBundleIdentifier".into(),
            Value::from(self.bundle_id.clone()),
        );
        d.insert("CFBundleName".into(), Value::from(self.name.clone()));
        d.insert(
            "CFBundleDisplayName".into(),
            Value::from(self.display_name.clone()),
        );
        d.insert(
            "CFBundleExecutable".into(),
            Value::from(self.executable.clone()),
        );
        d.insert(
            "CFBundleShortVersionString".into(),
            Value::from(self.version.clone()),
        );
        d.insert("CFBundleVersion".into(), Value::from(self.build.clone()));
        d.insert("CFBundlePackageType".into(), Value::from("APPL"));
        d.insert("Path".into(), Value::from(self.path.clone()));
        d.insert(
            "ApplicationType".into(),
            Value::from(self.application_type()),
        );
        d.insert(
            "Entitlements".into(),
            Value::Dictionary(self.entitlements()),
        );
        d.insert(
            "SignerIdentity".into(),
            Value::from(match self.signing {
                Signing::Development => "Apple Development: Sim Developer (AB12CD34EF)",
                Signing::Store => "Apple iPhone OS Application Signing",
                Signing::System => "Apple iPhone OS Application Signing",
            }),
        );
        if self.signing != Signing::System {
            let container = self
                .path
                .rsplit_once('/')
                .map(|(dir, _)| dir.to_owned())
                .unwrap_or_default();
            d.insert("Container".into(), Value::from(container));
            d.insert("IsAppClip".into(), Value::Boolean(false));
        }
        d
    }
}

/// A process the phone runs.
#[derive(Debug, Clone)]
pub struct Process {
    /// Its pid.
    pub pid: u32,
    /// The executable's full path.
    pub executable: String,
    /// The app it belongs to, if any.
    pub bundle_id: Option<String>,
    /// Whether it is an app's main process (instruments' `isApplication`).
    pub is_application: bool,
    /// When it started (wall clock).
    pub started: SystemTime,
}

impl Process {
    /// The executable's file name.
    pub fn name(&self) -> &str {
        self.executable
            .rsplit('/')
            .next()
            .unwrap_or(&self.executable)
    }
}

/// One os_log entry.
#[derive(Debug, Clone)]
pub struct LogEntry {
    /// The process that logged it.
    pub pid: u32,
    /// When (wall clock of the phone).
    pub time: SystemTime,
    /// Its level.
    pub level: Level,
    /// The process's executable path (the entry's `filename`).
    pub executable: String,
    /// The image that called os_log (the entry's `image_name`).
    pub image: String,
    /// The formatted message.
    pub message: String,
    /// The os_log subsystem and category, when the logger has one.
    pub label: Option<(String, String)>,
    /// The calling thread.
    pub thread: u64,
}

/// How a process ends in a crash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CrashKind {
    /// An uncaught NSException: `EXC_CRASH (SIGABRT)` with this reason.
    Exception(String),
    /// A bad memory access: `EXC_BAD_ACCESS (SIGSEGV)` at this address.
    BadAccess(u64),
    /// A Swift runtime trap: `EXC_BREAKPOINT (SIGTRAP)` with this message.
    SwiftTrap(String),
    /// The watchdog: `EXC_CRASH (SIGKILL)`, FRONTBOARD `0x8badf00d`, with this explanation.
    Watchdog(String),
}

/// Which form ReportCrash writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportForm {
    /// iOS 15 and later: the JSON 309 form.
    Json309,
    /// iOS 14 and earlier: the text 109 form under a JSON header.
    Text109,
}

/// A file in the CrashReports directory (`path` relative to it, `Retired/x.ips` for old ones).
#[derive(Debug, Clone)]
pub struct ReportFile {
    /// The path under CrashReports.
    pub path: String,
    /// The bytes.
    pub bytes: Arc<Vec<u8>>,
    /// When it was written (birth time).
    pub written: SystemTime,
    /// Whether the mover has put it where crashreportcopymobile sees it.
    pub visible: bool,
    /// When ReportCrash finishes writing it (the mover cannot move it before).
    pub ready_at: Instant,
}

/// A crashed process and what its report needs ([`SimPhone::take_crashed`]).
#[derive(Debug, Clone)]
pub(crate) struct Crashed {
    pub(crate) process: Process,
    pub(crate) app: Option<App>,
    pub(crate) profile: Profile,
    pub(crate) serial: u64,
    pub(crate) write_delay: Duration,
}

/// The iOS releases the simulator can play, each with the `ProductVersion` and `BuildVersion`
/// a real phone on it reports (sources in `testdata/iossim/README.md`), and the decisions that
/// follow from the release: which services lockdown starts, whether CoreDeviceProxy and RSD
/// exist. Every such decision is made here, once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[non_exhaustive]
pub enum IosVersion {
    /// 16.7.10 (20H350): lockdown's instruments with the developer disk image, no CoreDevice.
    #[default]
    V16_7_10,
    /// 17.2 (21C62): no lockdown instruments and no CoreDeviceProxy over lockdown.
    V17_2,
    /// 17.4 (21E219): the first release with CoreDeviceProxy over lockdown.
    V17_4,
    /// 18.6 (22G86).
    V18_6,
    /// 26.1 (23B85).
    V26_1,
}

impl IosVersion {
    /// Every release, oldest first.
    pub const ALL: [IosVersion; 5] = [
        IosVersion::V16_7_10,
        IosVersion::V17_2,
        IosVersion::V17_4,
        IosVersion::V18_6,
        IosVersion::V26_1,
    ];

    /// The release named `text` (`"17.2"`, `"26.1"`, …); `None` for one the simulator does not
    /// play.
    pub fn parse(text: &str) -> Option<IosVersion> {
        let text = text.trim();
        IosVersion::ALL
            .into_iter()
            .find(|v| v.product_version() == text)
    }

    /// `ProductVersion`.
    pub fn product_version(self) -> &'static str {
        match self {
            IosVersion::V16_7_10 => "16.7.10",
            IosVersion::V17_2 => "17.2",
            IosVersion::V17_4 => "17.4",
            IosVersion::V18_6 => "18.6",
            IosVersion::V26_1 => "26.1",
        }
    }

    /// `BuildVersion`.
    pub fn build_version(self) -> &'static str {
        match self {
            IosVersion::V16_7_10 => "20H350",
            IosVersion::V17_2 => "21C62",
            IosVersion::V17_4 => "21E219",
            IosVersion::V18_6 => "22G86",
            IosVersion::V26_1 => "23B85",
        }
    }

    /// Lockdown's `com.apple.instruments.remoteserver` (with the developer disk image): iOS 16
    /// and older only. iOS 17 serves instruments as `com.apple.instruments.dtservicehub`
    /// through RSD instead.
    pub fn has_lockdown_instruments(self) -> bool {
        self < IosVersion::V17_2
    }

    /// RemoteXPC and RSD (iOS 17 and later).
    pub fn has_rsd(self) -> bool {
        self >= IosVersion::V17_2
    }

    /// `com.apple.internal.devicecompute.CoreDeviceProxy` over lockdown: iOS 17.4 and later
    /// (17.0 to 17.3 answer `InvalidService`, jkcoxson/idevice#3).
    pub fn has_core_device_proxy(self) -> bool {
        self >= IosVersion::V17_4
    }

    /// CoreDevice's streamed lists (`com.apple.coredevice.feature.streamprocesslist`,
    /// `streamapplist`), advertised in the appservice's RSD `Features` from iOS 26, where the
    /// plain `listprocesses`/`listapps` never answer (pymobiledevice3 `app_service.py`
    /// `list_apps`: "DDIs new enough to offer streamapplist … never reply to a well-formed
    /// non-streaming listapps request").
    pub fn has_streamed_lists(self) -> bool {
        self >= IosVersion::V26_1
    }
}

impl std::fmt::Display for IosVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.product_version(), self.build_version())
    }
}

/// Why the phone would not mount the developer disk image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DdiRefusal {
    /// Developer Mode is off (iOS 16 and later refuse to mount the image then).
    DeveloperModeOff,
}

impl std::fmt::Display for DdiRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DdiRefusal::DeveloperModeOff => f.write_str(
                "Developer Mode is off: the phone does not mount the developer disk image",
            ),
        }
    }
}

/// A lockdown trust state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    /// This computer was never trusted: usbmuxd has no pair record, lockdown knows no host id.
    NotPaired,
    /// Trusted, but the phone has not been unlocked since it started: services refuse
    /// (`PasswordProtected`).
    Locked,
    /// Trusted and unlocked.
    Trusted,
}

/// Faults the phone can be told to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// The next os_trace stream that sends an entry sends half of it, then drops.
    DropStreamMidEntry,
    /// Every new connection to this service is accepted and never answered.
    StallService(String),
    /// AFC's file info claims every file is this many bytes long (a phone whose word about a
    /// size is not what it sends); reads still give the file's real bytes.
    ClaimedFileSize(u64),
    /// os_trace_relay streams started through lockdown open (`RequestSuccessful`) and then send
    /// nothing, while the same service through RSD (`com.apple.os_trace_relay.shim.remote`)
    /// streams: what iOS 27 betas were reported doing (Hacker-Valley-Media/Interceptor#145).
    /// Lasts until cleared.
    SilentLockdownOsTrace,
    /// The next answer of one kind carries bytes a broken or hostile phone could send (issue
    /// 38): taken once.
    Hostile(Hostile),
    /// RemoteXPC answers (RSD, the appservice) go out in HTTP/2 DATA frames of at most this
    /// many bytes (at least 1), so a large answer is split over many frames. Lasts until
    /// cleared.
    SplitFrames(usize),
    /// The appservice's next answer to this feature (`"listprocesses"`, `"streamprocesslist"`)
    /// is held: it goes out, stale, just before the answer to the connection's next request,
    /// as a phone's late reply does after the client gave up waiting. One-shot.
    HoldReply(String),
    /// Lockdown refuses to start this service with this error (`StartService` answered with
    /// `Error`), e.g. `ServiceProhibited` or `ServiceLimit` (libimobiledevice's lockdown error
    /// names). Lasts until cleared.
    RefuseService {
        /// The lockdown service's name.
        service: String,
        /// The `Error` lockdown answers.
        error: String,
    },
}

/// Bytes a broken or hostile phone (or a farm's usbmuxd) could send, each in place of one
/// answer, to show that the computer's side turns them into an error and keeps serving.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hostile {
    /// The RSD handshake's answer is a RemoteXPC message whose body is arrays nested this
    /// deep (12 bytes a level).
    XpcNesting(u32),
    /// The RSD handshake's answer is a RemoteXPC wrapper claiming this body length, and no body.
    XpcBodyLength(u64),
    /// lockdown's next `GetValue` answer is this big-endian length prefix, then the connection
    /// closes.
    PlistLength(u32),
    /// usbmuxd's next `ListDevices` answer is a header whose length (which counts the 16-byte
    /// header) is this, then nothing.
    UsbmuxdLength(u32),
    /// AFC's next `ReadDir` answer is a packet whose whole length is smaller than its header.
    AfcLength,
    /// The next instruments connection opens with a DTX message whose payload says its aux
    /// part (100 bytes) is longer than the whole payload (10 bytes).
    DtxLength,
}

/// What the phone says about itself (lockdown values).
#[derive(Debug, Clone)]
pub struct Profile {
    /// `UniqueDeviceID` and usbmuxd's `SerialNumber`.
    pub udid: String,
    /// `DeviceName`.
    pub device_name: String,
    /// `ProductType`.
    pub product_type: String,
    /// The iOS release: `ProductVersion`, `BuildVersion` and what the phone offers.
    pub ios: IosVersion,
    /// `HardwareModel`.
    pub hardware_model: String,
    /// The phone's offset from UTC in minutes (crash file names use local time).
    pub utc_offset_minutes: i32,
    /// Which crash report form it writes.
    pub report_form: ReportForm,
}

impl Default for Profile {
    fn default() -> Self {
        Profile {
            udid: "00008101-000A1234567890AB".into(),
            device_name: "Sim iPhone".into(),
            product_type: "iPhone14,2".into(),
            ios: IosVersion::default(),
            hardware_model: "D63AP".into(),
            utc_offset_minutes: 60,
            report_form: ReportForm::Json309,
        }
    }
}

impl Profile {
    /// The default profile on another iOS release.
    pub fn for_ios(ios: IosVersion) -> Profile {
        Profile {
            ios,
            ..Profile::default()
        }
    }

    /// `ProductVersion`, as lockdown reports it.
    pub fn product_version(&self) -> &'static str {
        self.ios.product_version()
    }

    /// `BuildVersion`, as lockdown reports it.
    pub fn build_version(&self) -> &'static str {
        self.ios.build_version()
    }
}

/// What one request to a service was, for tests to inspect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opened {
    /// The service name.
    pub service: String,
    /// For os_trace_relay's `StartActivity`, the pid asked for (`-1`: all).
    pub pid: Option<i64>,
}

struct State {
    profile: Profile,
    trust: Trust,
    apps: BTreeMap<String, App>,
    processes: BTreeMap<u32, Process>,
    next_pid: u32,
    /// Installs made since the phone started, for each new container's id.
    installs: u64,
    reports: Vec<ReportFile>,
    faults: Vec<Fault>,
    opened: Vec<Opened>,
    mover_delay: Duration,
    write_delay: Duration,
    crash_count: u64,
    ddi_mounted: bool,
    developer_mode: bool,
}

struct Inner {
    state: Mutex<State>,
    logs: broadcast::Sender<Arc<LogEntry>>,
    plug: watch::Sender<bool>,
    entries_sent: AtomicU64,
}

/// The simulated iPhone. Cheap to clone; every clone is the same phone.
#[derive(Clone)]
pub struct SimPhone {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for SimPhone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimPhone")
            .field("udid", &self.lock().profile.udid)
            .finish_non_exhaustive()
    }
}

/// How many entries a slow reader may fall behind before it misses some, as a phone drops
/// entries for a client that does not keep up.
const LOG_BACKLOG: usize = 1 << 16;

impl SimPhone {
    /// A phone with nothing installed and nothing running but the system.
    pub fn empty(profile: Profile) -> SimPhone {
        let (logs, _) = broadcast::channel(LOG_BACKLOG);
        let phone = SimPhone {
            inner: Arc::new(Inner {
                state: Mutex::new(State {
                    profile,
                    trust: Trust::Trusted,
                    apps: BTreeMap::new(),
                    processes: BTreeMap::new(),
                    next_pid: 400,
                    installs: 0,
                    reports: Vec::new(),
                    faults: Vec::new(),
                    opened: Vec::new(),
                    mover_delay: Duration::from_millis(300),
                    write_delay: Duration::from_millis(200),
                    crash_count: 0,
                    // A developer's phone: Developer Mode on and the image mounted, as after a
                    // session with Xcode. `unmount_ddi` is the phone after a restart.
                    ddi_mounted: true,
                    developer_mode: true,
                }),
                logs,
                plug: watch::Sender::new(true),
                entries_sent: AtomicU64::new(0),
            }),
        };
        phone.spawn_system("/sbin/launchd", 1);
        phone.spawn_system("/usr/libexec/lockdownd", 61);
        phone.spawn_system("/usr/libexec/logd", 62);
        phone.spawn_system("/System/Library/CoreServices/ReportCrash", 90);
        phone
    }

    /// The default phone: a development build, its extension, store apps, look-alikes, the
    /// WebDriverAgent runner and the system, with some processes running and old reports.
    pub fn default_phone() -> SimPhone {
        SimPhone::default_phone_on(IosVersion::default())
    }

    /// The default phone on another iOS release.
    pub fn default_phone_on(ios: IosVersion) -> SimPhone {
        let phone = SimPhone::empty(Profile::for_ios(ios));
        for app in default_apps() {
            phone.install(app);
        }
        phone.spawn_system(
            "/System/Library/CoreServices/SpringBoard.app/SpringBoard",
            58,
        );
        phone.spawn_system("/usr/libexec/backboardd", 59);
        for bundle in [
            "com.spotify.client",
            "com.example.appx",
            "com.facebook.WebDriverAgentRunner.xctrunner",
        ] {
            phone.launch(bundle);
        }
        // An old report of another app, already retired, and one of a look-alike name.
        let day = Duration::from_secs(86_400);
        if let Some(pid) = phone.launch("com.spotify.client") {
            phone.crash_at(
                pid,
                CrashKind::BadAccess(0x10),
                SystemTime::now() - day,
                true,
            );
            phone.launch("com.spotify.client");
        }
        phone
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves plain data; go on with it.
        self.inner
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The lockdown values.
    pub fn profile(&self) -> Profile {
        self.lock().profile.clone()
    }

    /// The trust state.
    pub fn trust(&self) -> Trust {
        self.lock().trust
    }

    /// Sets the trust state (tap "Trust", unpair, lock after a restart).
    pub fn set_trust(&self, trust: Trust) {
        self.lock().trust = trust;
    }

    /// Whether the developer disk image is mounted.
    pub fn ddi_mounted(&self) -> bool {
        self.lock().ddi_mounted
    }

    /// Mounts the developer disk image (what Xcode or `pymobiledevice3 mounter auto-mount`
    /// do); refused while Developer Mode is off, as a phone refuses.
    pub fn mount_ddi(&self) -> Result<(), DdiRefusal> {
        let mut state = self.lock();
        if !state.developer_mode {
            return Err(DdiRefusal::DeveloperModeOff);
        }
        state.ddi_mounted = true;
        Ok(())
    }

    /// Unmounts the developer disk image (what a restart does).
    pub fn unmount_ddi(&self) {
        self.lock().ddi_mounted = false;
    }

    /// Whether Developer Mode is on (lockdown's `DeveloperModeStatus`).
    pub fn developer_mode(&self) -> bool {
        self.lock().developer_mode
    }

    /// Turns Developer Mode on or off. A phone restarts to change it, so the developer disk
    /// image is unmounted either way.
    pub fn set_developer_mode(&self, on: bool) {
        let mut state = self.lock();
        if state.developer_mode != on {
            state.developer_mode = on;
            state.ddi_mounted = false;
        }
    }

    /// Installs (or reinstalls) an app.
    pub fn install(&self, app: App) {
        self.lock().apps.insert(app.bundle_id.clone(), app);
    }

    /// Installs a new build of an installed app over it, signed `signing`, as a phone does:
    /// its processes end and its bundle moves to a new container
    /// (`/private/var/containers/Bundle/Application/<UUID>/Name.app`, a new UUID with every
    /// install, of the same build too), so installation_proxy's `Path` changes. The new app, or
    /// `None` when it is not installed.
    pub fn reinstall(&self, bundle_id: &str, signing: Signing) -> Option<App> {
        let mut app = self.app(bundle_id)?;
        let installs = {
            let mut state = self.lock();
            state.installs += 1;
            state.installs
        };
        let dir = app.path.rsplit('/').next().unwrap_or_default().to_owned();
        let seed = bundle_id
            .bytes()
            .fold(0u64, |h, b| h.rotate_left(5) ^ u64::from(b));
        let container = format!(
            "{:08X}-{:04X}-4000-8000-{:012X}",
            seed as u32,
            installs as u16,
            (seed >> 16) & 0xFFFF_FFFF_FFFF
        );
        app.path = format!("{CONTAINERS}/{container}/{dir}");
        app.signing = signing;
        self.uninstall(bundle_id);
        self.install(app.clone());
        Some(app)
    }

    /// As [`SimPhone::reinstall`], of another build: `CFBundleVersion` `build`, which
    /// installation_proxy lists from then on and the new build's crash reports carry (the
    /// `.ips` header's `build_version` and the body's `bundleInfo.CFBundleVersion`, as a real
    /// phone writes them: `testdata/iossim/README.md`).
    pub fn install_build(&self, bundle_id: &str, signing: Signing, build: &str) -> Option<App> {
        let mut app = self.reinstall(bundle_id, signing)?;
        app.build = build.to_owned();
        self.install(app.clone());
        Some(app)
    }

    /// Removes an app, ending its processes.
    pub fn uninstall(&self, bundle_id: &str) {
        let mut state = self.lock();
        state.apps.remove(bundle_id);
        state
            .processes
            .retain(|_, p| p.bundle_id.as_deref() != Some(bundle_id));
    }

    /// The installed apps, by bundle id.
    pub fn apps(&self) -> Vec<App> {
        self.lock().apps.values().cloned().collect()
    }

    /// One installed app.
    pub fn app(&self, bundle_id: &str) -> Option<App> {
        self.lock().apps.get(bundle_id).cloned()
    }

    fn spawn_system(&self, executable: &str, pid: u32) {
        self.lock().processes.insert(
            pid,
            Process {
                pid,
                executable: executable.into(),
                bundle_id: None,
                is_application: false,
                started: SystemTime::now(),
            },
        );
    }

    fn spawn(&self, executable: String, bundle_id: Option<String>, is_application: bool) -> u32 {
        let mut state = self.lock();
        state.next_pid += 1 + (state.next_pid % 7);
        let pid = state.next_pid;
        state.processes.insert(
            pid,
            Process {
                pid,
                executable,
                bundle_id,
                is_application,
                started: SystemTime::now(),
            },
        );
        pid
    }

    /// Launches an app (FrontBoard starting its main executable); the new pid, or `None` when it
    /// is not installed. An app already running keeps its pid.
    pub fn launch(&self, bundle_id: &str) -> Option<u32> {
        let app = self.app(bundle_id)?;
        if let Some(pid) = self.pid_of(bundle_id) {
            return Some(pid);
        }
        let pid = self.spawn(app.executable_path(), Some(app.bundle_id.clone()), true);
        self.log(
            pid,
            Level::Default,
            Some(("com.apple.UIKit", "Lifecycle")),
            &format!("{} did finish launching", app.name),
        );
        Some(pid)
    }

    /// Launches an app as pid `pid` (a test that needs a known pid); `None` when it is not
    /// installed or the pid is taken.
    pub fn launch_as(&self, bundle_id: &str, pid: u32) -> Option<u32> {
        let app = self.app(bundle_id)?;
        let mut state = self.lock();
        if state.processes.contains_key(&pid) {
            return None;
        }
        state.processes.insert(
            pid,
            Process {
                pid,
                executable: app.executable_path(),
                bundle_id: Some(app.bundle_id.clone()),
                is_application: true,
                started: SystemTime::now(),
            },
        );
        Some(pid)
    }

    /// Starts one of an app's extensions (its own process); the new pid.
    pub fn launch_extension(&self, bundle_id: &str, extension_bundle_id: &str) -> Option<u32> {
        let app = self.app(bundle_id)?;
        let extension = app
            .extensions
            .iter()
            .find(|e| e.bundle_id == extension_bundle_id)?;
        Some(self.spawn(
            app.extension_path(extension),
            Some(extension.bundle_id.clone()),
            false,
        ))
    }

    /// Starts a process from any executable path (a daemon, or a look-alike).
    pub fn spawn_executable(&self, executable: &str) -> u32 {
        self.spawn(executable.into(), None, false)
    }

    /// The main process of a running app.
    pub fn pid_of(&self, bundle_id: &str) -> Option<u32> {
        self.lock()
            .processes
            .values()
            .find(|p| p.is_application && p.bundle_id.as_deref() == Some(bundle_id))
            .map(|p| p.pid)
    }

    /// The running processes, by pid.
    pub fn processes(&self) -> Vec<Process> {
        self.lock().processes.values().cloned().collect()
    }

    /// Ends a process normally (the user swiped it away).
    pub fn exit(&self, pid: u32) {
        self.lock().processes.remove(&pid);
    }

    /// The process logs one entry now. Unknown pids log nothing.
    pub fn log(&self, pid: u32, level: Level, label: Option<(&str, &str)>, message: &str) {
        self.log_at(pid, SystemTime::now(), level, label, message);
    }

    /// The process logs one entry stamped `time` (a test's fixed clock).
    pub fn log_at(
        &self,
        pid: u32,
        time: SystemTime,
        level: Level,
        label: Option<(&str, &str)>,
        message: &str,
    ) {
        let Some(executable) = self
            .lock()
            .processes
            .get(&pid)
            .map(|p| p.executable.clone())
        else {
            return;
        };
        let entry = LogEntry {
            pid,
            time,
            level,
            image: executable.clone(),
            executable,
            message: message.into(),
            label: label.map(|(s, c)| (s.to_owned(), c.to_owned())),
            thread: 0x1000 + u64::from(pid),
        };
        // No receiver is fine: nobody is listening.
        let _ = self.inner.logs.send(Arc::new(entry));
    }

    /// A subscription to every entry logged from now on.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Arc<LogEntry>> {
        self.inner.logs.subscribe()
    }

    pub(crate) fn count_sent(&self, n: u64) {
        self.inner.entries_sent.fetch_add(n, Ordering::Relaxed);
    }

    /// How many os_trace entries the services have written to clients.
    pub fn entries_sent(&self) -> u64 {
        self.inner.entries_sent.load(Ordering::Relaxed)
    }

    /// Takes a crashed process out of the process list, with what its report needs: its app
    /// (or the app whose extension it is), the phone's profile, the report's serial number and
    /// how long ReportCrash takes to write it. `None` when no such process runs.
    pub(crate) fn take_crashed(&self, pid: u32) -> Option<Crashed> {
        let process = self.lock().processes.remove(&pid)?;
        let app = process
            .bundle_id
            .as_deref()
            .and_then(|b| self.app(b).or_else(|| self.app_of_extension(b)));
        let mut state = self.lock();
        state.crash_count += 1;
        Some(Crashed {
            process,
            app,
            profile: state.profile.clone(),
            serial: state.crash_count,
            write_delay: state.write_delay,
        })
    }

    /// Files a report ReportCrash wrote, and SpringBoard's line about the crash.
    /// Files `report` under a name no other report has, as ReportCrash does: a second report of
    /// one process in the same second is `….0001.ips`, a third `….0002.ips` (real names such as
    /// `xraytun-desktop-2026-09-25-155028.0002.ips` beside `…155028.ips`). Returns its path.
    pub(crate) fn file_report(&self, mut report: ReportFile, springboard_line: &str) -> String {
        self.log_system(
            "/System/Library/CoreServices/SpringBoard.app/SpringBoard",
            Level::Default,
            springboard_line,
        );
        let mut state = self.lock();
        report.path = unique_report_path(&report.path, |path| {
            state.reports.iter().any(|r| r.path == path)
        });
        let path = report.path.clone();
        state.reports.push(report);
        path
    }

    fn app_of_extension(&self, bundle_id: &str) -> Option<App> {
        self.lock()
            .apps
            .values()
            .find(|a| a.extensions.iter().any(|e| e.bundle_id == bundle_id))
            .cloned()
    }

    fn log_system(&self, executable: &str, level: Level, message: &str) {
        let pid = self
            .lock()
            .processes
            .values()
            .find(|p| p.executable == executable)
            .map(|p| p.pid);
        if let Some(pid) = pid {
            self.log(
                pid,
                level,
                Some(("com.apple.FrontBoard", "Common")),
                message,
            );
        }
    }

    /// Puts a ready-made file in the CrashReports directory, visible at once.
    pub fn add_report_file(&self, path: &str, bytes: Vec<u8>, written: SystemTime) {
        self.lock().reports.push(ReportFile {
            path: path.into(),
            bytes: Arc::new(bytes),
            written,
            visible: true,
            ready_at: Instant::now(),
        });
    }

    /// What crashreportmover does: moves every finished report where copymobile sees it.
    /// Returns how many it moved.
    pub(crate) fn move_reports(&self) -> usize {
        let now = Instant::now();
        let mut state = self.lock();
        let mut moved = 0;
        for report in state.reports.iter_mut() {
            if !report.visible && report.ready_at <= now {
                report.visible = true;
                moved += 1;
            }
        }
        moved
    }

    /// How long the mover takes before it answers.
    pub(crate) fn mover_delay(&self) -> Duration {
        self.lock().mover_delay
    }

    /// Sets how long ReportCrash takes to write a report and the mover to answer.
    pub fn set_report_delays(&self, write: Duration, mover: Duration) {
        let mut state = self.lock();
        state.write_delay = write;
        state.mover_delay = mover;
    }

    /// The visible report files.
    pub fn report_files(&self) -> Vec<ReportFile> {
        self.lock()
            .reports
            .iter()
            .filter(|r| r.visible)
            .cloned()
            .collect()
    }

    /// Removes a visible report (AFC `RemovePath`); whether it existed.
    pub(crate) fn remove_report(&self, path: &str) -> bool {
        let mut state = self.lock();
        let before = state.reports.len();
        state.reports.retain(|r| !(r.visible && r.path == path));
        before != state.reports.len()
    }

    /// Adds a fault.
    pub fn inject_fault(&self, fault: Fault) {
        self.lock().faults.push(fault);
    }

    /// Removes every fault.
    pub fn clear_faults(&self) {
        self.lock().faults.clear();
    }

    /// Takes a one-shot fault if present.
    /// The size [`Fault::ClaimedFileSize`] makes AFC claim for every file, while set.
    pub(crate) fn claimed_file_size(&self) -> Option<u64> {
        self.lock().faults.iter().find_map(|f| match f {
            Fault::ClaimedFileSize(size) => Some(*size),
            _ => None,
        })
    }

    /// Takes the first [`Fault::Hostile`] that `pick` chooses, if one is set.
    pub(crate) fn take_hostile<T>(&self, pick: impl Fn(&Hostile) -> Option<T>) -> Option<T> {
        let mut state = self.lock();
        let (i, value) = state.faults.iter().enumerate().find_map(|(i, f)| match f {
            Fault::Hostile(h) => pick(h).map(|v| (i, v)),
            _ => None,
        })?;
        state.faults.remove(i);
        Some(value)
    }

    pub(crate) fn take_fault(&self, fault: &Fault) -> bool {
        let mut state = self.lock();
        match state.faults.iter().position(|f| f == fault) {
            Some(i) => {
                state.faults.remove(i);
                true
            }
            None => false,
        }
    }

    /// Whether a lasting fault is present.
    pub(crate) fn has_fault(&self, fault: &Fault) -> bool {
        self.lock().faults.contains(fault)
    }

    /// The largest RemoteXPC DATA frame while [`Fault::SplitFrames`] is set.
    pub(crate) fn split_frames(&self) -> Option<usize> {
        self.lock().faults.iter().find_map(|f| match f {
            Fault::SplitFrames(size) => Some((*size).max(1)),
            _ => None,
        })
    }

    /// The error lockdown refuses `service` with, while [`Fault::RefuseService`] names it.
    pub(crate) fn refusal(&self, service: &str) -> Option<String> {
        self.lock().faults.iter().find_map(|f| match f {
            Fault::RefuseService { service: s, error } if s == service => Some(error.clone()),
            _ => None,
        })
    }

    /// Whether a service stalls.
    pub(crate) fn stalls(&self, service: &str) -> bool {
        self.lock()
            .faults
            .iter()
            .any(|f| matches!(f, Fault::StallService(s) if s == service))
    }

    /// Unplugs the cable (`false`) or plugs it back in (`true`): usbmuxd lists it or not,
    /// `Listen` clients get `Detached`/`Attached`, and every open connection to it drops.
    pub fn set_attached(&self, attached: bool) {
        self.inner.plug.send_replace(attached);
    }

    /// Whether the cable is in.
    pub fn attached(&self) -> bool {
        *self.inner.plug.borrow()
    }

    /// Watches the cable.
    pub(crate) fn plug(&self) -> watch::Receiver<bool> {
        self.inner.plug.subscribe()
    }

    pub(crate) fn record_open(&self, service: &str, pid: Option<i64>) {
        self.lock().opened.push(Opened {
            service: service.into(),
            pid,
        });
    }

    /// Every service connection opened so far, in order.
    pub fn opened(&self) -> Vec<Opened> {
        self.lock().opened.clone()
    }

    /// The pids os_trace_relay streams were started for.
    pub fn streamed_pids(&self) -> Vec<i64> {
        self.lock().opened.iter().filter_map(|o| o.pid).collect()
    }
}

/// A fixed, readable container id for a default app.
fn container(n: u8) -> String {
    format!("5E5E5E5E-0000-4000-8000-0000000000{n:02X}")
}

/// The default phone's apps.
pub fn default_apps() -> Vec<App> {
    let crashtest = App::third_party(
        "dev.phonelogs.crashtest",
        "Crash Test",
        "CrashTest",
        &container(1),
        "CrashTest.app",
        Signing::Development,
    )
    .with_extension("widget", "CrashTestWidget.appex", "CrashTestWidget");
    let helper = App::third_party(
        "dev.phonelogs.crashtesthelper",
        "Crash Test Helper",
        "CrashTestHelper",
        &container(2),
        "CrashTestHelper.app",
        Signing::Store,
    );
    let spotify = App::third_party(
        "com.spotify.client",
        "Spotify",
        "Spotify",
        &container(3),
        "Spotify.app",
        Signing::Store,
    )
    .with_extension("widget", "SpotifyWidget.appex", "SpotifyWidget");
    // Two bundles whose paths differ only after a prefix: `Example.app` and `Example.appx`,
    // with the same executable name, in the same container.
    let example = App::third_party(
        "com.example.app",
        "Example",
        "Example",
        &container(4),
        "Example.app",
        Signing::Development,
    );
    let examplex = App::third_party(
        "com.example.appx",
        "Examplex",
        "Example",
        &container(4),
        "Example.appx",
        Signing::Store,
    );
    let wda = App::third_party(
        "com.facebook.WebDriverAgentRunner.xctrunner",
        "WebDriverAgentRunner-Runner",
        "WebDriverAgentRunner-Runner",
        &container(5),
        "WebDriverAgentRunner-Runner.app",
        Signing::Development,
    );
    vec![
        crashtest,
        helper,
        spotify,
        example,
        examplex,
        wda,
        App::system(
            "com.apple.Preferences",
            "Settings",
            "Preferences",
            "/Applications/Preferences.app",
        ),
        App::system(
            "com.apple.mobilesafari",
            "Safari",
            "MobileSafari",
            "/Applications/MobileSafari.app",
        ),
    ]
}

/// Seconds and microseconds since 1970 of a wall-clock time (0 before 1970).
pub fn unix_parts(time: SystemTime) -> (u64, u32) {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    (since.as_secs(), since.subsec_micros())
}

/// `path` if `taken` says no report has it, else the first free `<stem>.NNNN.ips`.
fn unique_report_path(path: &str, taken: impl Fn(&str) -> bool) -> String {
    if !taken(path) {
        return path.to_owned();
    }
    let stem = path.strip_suffix(".ips").unwrap_or(path);
    (1u32..)
        .map(|n| format!("{stem}.{n:04}.ips"))
        .find(|candidate| !taken(candidate))
        .unwrap_or_else(|| path.to_owned())
}
