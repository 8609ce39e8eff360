//! `SimPhone`: the simulated phone's state behind a lock, and the actions a scenario plays on it.
//!
//! The phone is a model, not a table of canned strings: apps have uids and pids, logs go into
//! bounded buffers that wrap, crashes leave a crash-buffer block, a drop box entry and an exit
//! record, and the clock can be moved. Background traffic ("noise") is generated lazily, when a
//! command looks at the logs, so a phone needs no task of its own and stays deterministic.
//!
//! This is the bottom of the crate, with `model.rs`: no I/O, no wire, no text formats (the
//! crashes, which write formatted texts, are in `crashes.rs`, above `format.rs`). Appending a
//! log entry signals a `watch` channel, so logcat followers wake at once.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::sync::watch;

use crate::Error;
use crate::apk::ApkInfo;
use crate::model::{
    AndroidVersion, Buffer, DropBoxEntry, ExitRecord, LogEntry, Package, Priority, Process, Profile,
};

/// A fault the phone plays on the next stream that sends output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fault {
    /// Close the whole connection after this many bytes of the next stream's output.
    DropAfterBytes(u64),
    /// Send nothing more on the next stream for this long (`None`: until the stream is closed).
    Stall(Option<Duration>),
}

/// What `am set-debug-app` recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DebugApp {
    /// The package.
    pub package: String,
    /// `-w`: wait for a debugger at the next launch.
    pub wait_for_debugger: bool,
    /// `--persistent`.
    pub persistent: bool,
}

/// One entry of the phone's record of what the host asked.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Request {
    /// A service was opened (`shell,v2,raw:…`, `jdwp`, `host:devices-l`, …).
    Service(String),
    /// A shell command line was run (the whole line, before splitting at `;`).
    Command(String),
}

/// The default capacity of each log buffer, as logd's default `ro.logd.size`.
pub const DEFAULT_BUFFER_BYTES: usize = 256 * 1024;

/// A process template that produces background log lines.
struct NoiseSource {
    process: &'static str,
    buffer: Buffer,
    priority: Priority,
    tag: &'static str,
    messages: &'static [&'static str],
}

const NOISE: &[NoiseSource] = &[
    NoiseSource {
        process: "system_server",
        buffer: Buffer::System,
        priority: Priority::Info,
        tag: "ActivityManager",
        messages: &[
            "Killing 21877:com.google.android.apps.photos/u0a178 (adj 985): empty #17",
            "Background started FGS: Allowed [callingPackage: com.google.android.gms; callingUid: 10130]",
            "Changes in 10187 13 to 5, 0 to 0",
        ],
    },
    NoiseSource {
        process: "system_server",
        buffer: Buffer::System,
        priority: Priority::Debug,
        tag: "ConnectivityService",
        messages: &[
            "NetReassign [no changes]",
            "requestNetwork for uid/pid:10201/0 activeRequest: null",
        ],
    },
    NoiseSource {
        process: "system_server",
        buffer: Buffer::Events,
        priority: Priority::Info,
        tag: "am_pss",
        messages: &["[2468,10187,com.spotify.music,98234368,85327872,0,152145920,0,19,5]"],
    },
    NoiseSource {
        process: "com.android.phone",
        buffer: Buffer::Radio,
        priority: Priority::Debug,
        tag: "RILJ",
        messages: &[
            "[UNSL]< UNSOL_SIGNAL_STRENGTH {rssi=-71} [PHONE0]",
            "[3201]> GET_CELL_INFO_LIST [PHONE0]",
        ],
    },
    NoiseSource {
        process: "com.android.systemui",
        buffer: Buffer::Main,
        priority: Priority::Debug,
        tag: "NotifCollection",
        messages: &[
            "notifyCollectionListeners: 2 entries",
            "onNotificationPosted 0|com.whatsapp|1|null|10145",
        ],
    },
    NoiseSource {
        process: "com.spotify.music",
        buffer: Buffer::Main,
        priority: Priority::Info,
        tag: "Spotify",
        messages: &[
            "Playback position 184233 ms",
            "Prefetching next track",
            "Connection state: CONNECTED",
        ],
    },
    NoiseSource {
        process: "com.chase.sig.android",
        buffer: Buffer::Main,
        priority: Priority::Debug,
        tag: "OkHttp",
        messages: &[
            "--> GET https://api.chase.example/accounts/summary",
            "<-- 200 OK (184ms)",
        ],
    },
    NoiseSource {
        process: "com.x8bit.bitwarden",
        buffer: Buffer::Main,
        priority: Priority::Warn,
        tag: "AutofillService",
        messages: &[
            "onFillRequest: no dataset for com.android.chrome",
            "Vault is locked, skipping fill",
        ],
    },
    NoiseSource {
        process: "io.appium.uiautomator2.server",
        buffer: Buffer::Main,
        priority: Priority::Info,
        tag: "appium",
        messages: &[
            "AppiumServlet: channel read: GET /status",
            "Got response with status 200: {\"sessionId\":\"None\"}",
        ],
    },
    NoiseSource {
        process: "com.whatsapp",
        buffer: Buffer::Main,
        priority: Priority::Info,
        tag: "WhatsApp",
        messages: &["xmpp/reader/read/iq", "MessageService/onStartCommand"],
    },
    NoiseSource {
        process: "dev.phonelogs.suite.mail",
        buffer: Buffer::Main,
        priority: Priority::Info,
        tag: "SuiteSync",
        messages: &[
            "mail sync finished: 3 new",
            "calendar sync finished: 0 changes",
        ],
    },
    NoiseSource {
        process: "logd",
        buffer: Buffer::Main,
        priority: Priority::Info,
        tag: "logd",
        messages: &[
            "logdr: UID=2000 GID=2000 PID=4242 n tail=0 logMask=1b pid=0 start=0ns deadline=0ns",
        ],
    },
];

/// The apps' part of the phone's state.
#[derive(Debug, Default)]
pub(crate) struct AppsState {
    /// What each APK-installed package's APK said.
    pub(crate) models: HashMap<String, ApkInfo>,
    /// Files written on the phone (by `uiautomator dump`).
    pub(crate) files: BTreeMap<String, Vec<u8>>,
    /// The package whose activity is on screen; `None` is the home screen.
    pub(crate) foreground: Option<String>,
    /// A package whose main thread is blocked: its pid, and whether an ANR is on its way.
    pub(crate) hung: Option<(String, u32, bool)>,
}

/// The mutable state of a phone.
pub(crate) struct PhoneState {
    pub(crate) profile: Profile,
    pub(crate) packages: Vec<Package>,
    pub(crate) processes: Vec<Process>,
    pub(crate) buffers: [VecDeque<LogEntry>; 5],
    buffer_bytes: [usize; 5],
    pub(crate) buffer_capacity: [usize; 5],
    seq: u64,
    pub(crate) dropbox: Vec<DropBoxEntry>,
    pub(crate) exits: Vec<ExitRecord>,
    pub(crate) debug_app: Option<DebugApp>,
    clock_offset_ns: i128,
    pub(crate) boot_ns: i128,
    next_pid: u32,
    rng: u64,
    noise_per_second: f64,
    noise_last_ns: i128,
    pub(crate) requests: Vec<Request>,
    pub(crate) pending_fault: Option<Fault>,
    pub(crate) installed_ns: i128,
    pub(crate) apps: AppsState,
    /// `/proc/sys/kernel/random/boot_id`: a new UUID at every boot.
    boot_id: String,
    /// The sequence number of the newest log entry, for followers to wait on.
    log_written: watch::Sender<u64>,
}

/// A random (version 4) UUID as Linux prints its boot id: lowercase, `8-4-4-4-12`. Drawn from
/// the clock and a counter, not the noise generator, so the phone's noise stays deterministic;
/// a boot id needs to differ between boots, not to be unguessable.
fn fresh_boot_id() -> String {
    static BOOTS: AtomicU64 = AtomicU64::new(0);
    let mut x = (real_now_ns() as u64)
        ^ BOOTS
            .fetch_add(1, Ordering::Relaxed)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        | 1;
    let mut next = || {
        // xorshift64*, as the noise generator.
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    let (high, low) = (next(), next());
    let high = (high & !0xf000) | 0x4000; // version 4
    let low = (low & !(0xc << 60)) | (0x8 << 60); // variant 10xx
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        high >> 32,
        (high >> 16) & 0xffff,
        high & 0xffff,
        low >> 48,
        low & 0xffff_ffff_ffff
    )
}

fn real_now_ns() -> i128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as i128)
        .unwrap_or(0)
}

impl PhoneState {
    fn new(profile: Profile) -> Self {
        let now = real_now_ns();
        Self {
            profile,
            packages: Vec::new(),
            processes: Vec::new(),
            buffers: Default::default(),
            buffer_bytes: [0; 5],
            buffer_capacity: [DEFAULT_BUFFER_BYTES; 5],
            seq: 0,
            dropbox: Vec::new(),
            exits: Vec::new(),
            debug_app: None,
            clock_offset_ns: 0,
            boot_ns: now - 3 * 3600 * 1_000_000_000,
            next_pid: 1800,
            rng: 0x9e37_79b9_7f4a_7c15,
            noise_per_second: 0.0,
            noise_last_ns: now,
            requests: Vec::new(),
            pending_fault: None,
            installed_ns: now - 24 * 3600 * 1_000_000_000,
            apps: Default::default(),
            boot_id: fresh_boot_id(),
            log_written: watch::channel(0).0,
        }
    }

    /// The phone's clock: the real clock plus every advance a scenario made.
    pub(crate) fn now_ns(&self) -> i128 {
        real_now_ns() + self.clock_offset_ns
    }

    pub(crate) fn uptime_ms(&self) -> i64 {
        ((self.now_ns() - self.boot_ns) / 1_000_000) as i64
    }

    fn random(&mut self) -> u64 {
        // xorshift64*: deterministic, dependency-free noise.
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub(crate) fn allocate_pid(&mut self) -> u32 {
        let step = 1 + (self.random() % 37) as u32;
        self.next_pid = self.next_pid.wrapping_add(step);
        if self.next_pid > 32_000 {
            self.next_pid = 2000;
        }
        self.next_pid
    }

    pub(crate) fn package(&self, name: &str) -> Option<&Package> {
        self.packages.iter().find(|package| package.name == name)
    }

    pub(crate) fn process(&self, pid: u32) -> Option<&Process> {
        self.processes.iter().find(|process| process.pid == pid)
    }

    fn process_of(&self, package: &str, user: u32) -> Option<&Process> {
        self.processes.iter().find(|process| {
            process.package.as_deref() == Some(package) && process.uid / 100_000 == user
        })
    }

    /// Appends one log record to its buffer, dropping the oldest records when it is full.
    pub(crate) fn push_log(
        &mut self,
        buffer: Buffer,
        time_ns: i128,
        (uid, pid, tid): (u32, u32, u32),
        priority: Priority,
        tag: &str,
        message: &str,
    ) {
        self.seq += 1;
        let entry = LogEntry {
            seq: self.seq,
            buffer,
            time_ns,
            uid,
            pid,
            tid,
            priority,
            tag: tag.to_string(),
            message: message.to_string(),
        };
        let index = buffer.index();
        self.buffer_bytes[index] += entry.cost();
        self.buffers[index].push_back(entry);
        while self.buffer_bytes[index] > self.buffer_capacity[index] {
            match self.buffers[index].pop_front() {
                Some(old) => self.buffer_bytes[index] -= old.cost(),
                None => break,
            }
        }
        // Wakes every follower at once (they wait on the receiver, never on the phone's lock).
        self.log_written.send_replace(self.seq);
    }

    pub(crate) fn clear_buffer(&mut self, buffer: Buffer) {
        self.buffers[buffer.index()].clear();
        self.buffer_bytes[buffer.index()] = 0;
    }

    pub(crate) fn buffer_used(&self, buffer: Buffer) -> usize {
        self.buffer_bytes[buffer.index()]
    }

    pub(crate) fn set_capacity(&mut self, buffer: Buffer, bytes: usize) {
        self.buffer_capacity[buffer.index()] = bytes.max(64 * 1024);
        let time = self.now_ns();
        // Re-push nothing; shrinking is applied by trimming the oldest records now.
        let index = buffer.index();
        while self.buffer_bytes[index] > self.buffer_capacity[index] {
            match self.buffers[index].pop_front() {
                Some(old) => self.buffer_bytes[index] -= old.cost(),
                None => break,
            }
        }
        let _ = time;
    }

    pub(crate) fn system_server(&self) -> (u32, u32) {
        self.processes
            .iter()
            .find(|process| process.name == "system_server")
            .map(|process| (process.pid, process.uid))
            .unwrap_or((1234, 1000))
    }

    /// Generates the background lines due since the last call, at the configured rate.
    pub(crate) fn catch_up_noise(&mut self) {
        let now = self.now_ns();
        if self.noise_per_second <= 0.0 {
            self.noise_last_ns = now;
            return;
        }
        let elapsed_ns = (now - self.noise_last_ns).max(0);
        let due = (elapsed_ns as f64 / 1e9 * self.noise_per_second).floor() as u64;
        if due == 0 {
            return;
        }
        // A long gap (a clock jump) would flood the buffers; real buffers would have wrapped anyway.
        let count = due.min(20_000);
        let start = now - (count as f64 / self.noise_per_second * 1e9) as i128;
        let step = ((now - start) / i128::from(count.max(1) as u32)).max(1);
        for index in 0..count {
            let time = start + step * i128::from(index as u32 + 1);
            self.noise_line(time);
        }
        self.noise_last_ns = now;
    }

    fn noise_line(&mut self, time: i128) {
        let pick = (self.random() % NOISE.len() as u64) as usize;
        let source = &NOISE[pick];
        let candidates: Vec<(u32, u32, u32)> = self
            .processes
            .iter()
            .filter(|process| process.name == source.process)
            .map(|process| {
                let tid = process
                    .threads
                    .get(1)
                    .map(|(tid, _)| *tid)
                    .unwrap_or(process.pid);
                (process.uid, process.pid, tid)
            })
            .collect();
        if candidates.is_empty() {
            return;
        }
        let ids = candidates[(self.random() % candidates.len() as u64) as usize];
        let message = source.messages[(self.random() % source.messages.len() as u64) as usize];
        self.push_log(
            source.buffer,
            time,
            ids,
            source.priority,
            source.tag,
            message,
        );
    }

    pub(crate) fn start_process(
        &mut self,
        name: &str,
        uid: u32,
        package: Option<&str>,
        jdwp: bool,
    ) -> u32 {
        let pid = self.allocate_pid();
        let mut threads = vec![(
            pid,
            if package.is_some() {
                "main".to_string()
            } else {
                name.to_string()
            },
        )];
        for thread in ["Signal Catcher", "HeapTaskDaemon", "RenderThread"] {
            threads.push((pid + threads.len() as u32 + 5, thread.to_string()));
        }
        self.processes.push(Process {
            pid,
            uid,
            name: name.to_string(),
            package: package.map(str::to_string),
            threads,
            jdwp,
            started_ns: self.now_ns(),
        });
        pid
    }
}

fn app_uid_name(uid: u32) -> String {
    let user = uid / 100_000;
    let app = uid % 100_000;
    if app >= 10_000 {
        format!("u{user}a{}", app - 10_000)
    } else {
        format!("{uid}")
    }
}

struct Shared {
    state: Mutex<PhoneState>,
    /// Bumped whenever the set of processes changes, for `track-jdwp`.
    processes_changed: watch::Sender<u64>,
    /// True while the phone is offline.
    offline: watch::Sender<bool>,
    /// True once the person allowed USB debugging in `AuthMode::AskUser`.
    usb_debugging_allowed: watch::Sender<bool>,
    /// How many `logcat` commands are running (see [`SimPhone::open_logcat_streams`]).
    logcat_streams: AtomicUsize,
}

/// Counts one running `logcat` while it lives; dropped on every way out of the command.
pub(crate) struct LogcatStream {
    phone: SimPhone,
}

impl Drop for LogcatStream {
    fn drop(&mut self) {
        self.phone
            .shared
            .logcat_streams
            .fetch_sub(1, Ordering::SeqCst);
    }
}

/// A simulated phone. Cloning it gives another handle to the same phone.
#[derive(Clone)]
pub struct SimPhone {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for SimPhone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimPhone").finish_non_exhaustive()
    }
}

impl Default for SimPhone {
    fn default() -> Self {
        Self::default_phone()
    }
}

impl SimPhone {
    /// An empty phone (only the system's own processes) with the given profile.
    pub fn empty(profile: Profile) -> Self {
        let mut state = PhoneState::new(profile);
        state.start_process("init", 0, None, false);
        if let Some(process) = state.processes.last_mut() {
            process.pid = 1;
        }
        state.start_process("logd", 1036, None, false);
        state.start_process(
            "system_server",
            1000,
            Some("android"),
            state.profile.build_type == crate::model::BuildType::Userdebug,
        );
        Self {
            shared: Arc::new(Shared {
                state: Mutex::new(state),
                processes_changed: watch::channel(0).0,
                offline: watch::channel(false).0,
                usb_debugging_allowed: watch::channel(false).0,
                logcat_streams: AtomicUsize::new(0),
            }),
        }
    }

    /// The default phone on Android 14 (see `with_profile`).
    pub fn default_phone() -> Self {
        Self::with_profile(Profile::default())
    }

    /// The default phone for one Android release.
    pub fn for_android(android: AndroidVersion) -> Self {
        Self::with_profile(Profile::for_android(android))
    }

    /// The packages of the standard phone: the system's own, Crash Test (debuggable), store
    /// apps (one installed for two users), two apps sharing a uid, and Appium's server.
    fn standard_packages() -> Vec<Package> {
        let system = |name: &str, app_id: u32, shared: Option<&str>| {
            let mut package = Package::new(name, app_id);
            package.system = true;
            package.shared_user = shared.map(str::to_string);
            package.version_code = 34;
            package.version_name = "14".to_string();
            package
        };
        let mut packages = vec![
            system("android", 1000, Some("android.uid.system")),
            system("com.android.settings", 1000, Some("android.uid.system")),
            system("com.android.phone", 1001, Some("android.uid.phone")),
            system("com.android.systemui", 10098, None),
            system(
                "com.google.android.gms",
                10130,
                Some("com.google.uid.shared"),
            ),
            system("com.android.vending", 10120, None),
        ];
        let mut crashtest = Package::new("dev.phonelogs.crashtest", 10234);
        crashtest.debuggable = true;
        crashtest.target_sdk = 29;
        let mut store = Package::new("com.spotify.music", 10187);
        store.installer = Some("com.android.vending".to_string());
        store.version_code = 124_700_633;
        store.version_name = "8.9.86.551".to_string();
        let mut bank = Package::new("com.chase.sig.android", 10201);
        bank.installer = Some("com.android.vending".to_string());
        bank.version_code = 5_103_120;
        bank.version_name = "5.10.3".to_string();
        let mut vault = Package::new("com.x8bit.bitwarden", 10212);
        vault.installer = Some("com.android.vending".to_string());
        vault.version_code = 19_450;
        vault.version_name = "2024.12.0".to_string();
        let mut messenger = Package::new("com.whatsapp", 10145);
        messenger.users = vec![0, 10];
        messenger.installer = Some("com.android.vending".to_string());
        messenger.version_code = 242_512_006;
        messenger.version_name = "2.24.25.6".to_string();
        let mut mail = Package::new("dev.phonelogs.suite.mail", 10150);
        mail.shared_user = Some("dev.phonelogs.suite".to_string());
        let mut calendar = Package::new("dev.phonelogs.suite.calendar", 10150);
        calendar.shared_user = Some("dev.phonelogs.suite".to_string());
        let appium = Package::new("io.appium.uiautomator2.server", 10260);
        let appium_test = Package::new("io.appium.uiautomator2.server.test", 10261);
        packages.extend([
            crashtest,
            store,
            bank,
            vault,
            messenger,
            mail,
            calendar,
            appium,
            appium_test,
        ]);
        packages
    }

    /// The default phone: the Crash Test app (debuggable, running), a store app, a bank, a
    /// password manager, system apps, two packages sharing a uid, an app cloned into user 10,
    /// Appium's server, and a few minutes of log traffic from several uids and the system.
    pub fn with_profile(profile: Profile) -> Self {
        let phone = Self::empty(profile);
        let packages = Self::standard_packages();
        {
            let mut state = phone.lock();
            state.packages = packages;
            for (name, uid, package) in [
                ("com.android.phone", 1001, Some("com.android.phone")),
                ("com.android.systemui", 10098, Some("com.android.systemui")),
                (
                    "com.google.android.gms.persistent",
                    10130,
                    Some("com.google.android.gms"),
                ),
                ("com.spotify.music", 10187, Some("com.spotify.music")),
                (
                    "com.chase.sig.android",
                    10201,
                    Some("com.chase.sig.android"),
                ),
                ("com.x8bit.bitwarden", 10212, Some("com.x8bit.bitwarden")),
                ("com.whatsapp", 10145, Some("com.whatsapp")),
                ("com.whatsapp", 1_010_145, Some("com.whatsapp")),
                (
                    "dev.phonelogs.suite.mail",
                    10150,
                    Some("dev.phonelogs.suite.mail"),
                ),
                (
                    "io.appium.uiautomator2.server",
                    10260,
                    Some("io.appium.uiautomator2.server"),
                ),
            ] {
                let jdwp = state.profile.build_type == crate::model::BuildType::Userdebug;
                state.start_process(name, uid, package, jdwp);
            }
            // Three minutes of history before "now", at five lines a second.
            state.noise_per_second = 5.0;
            state.noise_last_ns = state.now_ns() - 180 * 1_000_000_000;
            state.catch_up_noise();
        }
        // The Crash Test app is running and has said hello.
        let _ = phone.launch("dev.phonelogs.crashtest");
        let _ = phone.log(
            "dev.phonelogs.crashtest",
            Priority::Info,
            "CrashTest",
            "Crash Test ready: tap a button to crash, hang or die natively",
        );
        let _ = phone.log(
            "dev.phonelogs.crashtest",
            Priority::Debug,
            "CrashTest",
            "debuggable=true sdk=29",
        );
        phone
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, PhoneState> {
        // A panic while holding the lock cannot leave the model half-written in a way that matters
        // more than stopping the simulator, so a poisoned lock is simply taken over.
        self.shared
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The phone's profile.
    pub fn profile(&self) -> Profile {
        self.lock().profile.clone()
    }

    /// Replaces the profile (release, build type, `--uid` behaviour, zone, ...).
    pub fn set_profile(&self, profile: Profile) {
        self.lock().profile = profile;
    }

    /// Makes logcat accept `--uid` but return every uid's lines.
    pub fn set_logcat_ignores_uid(&self, ignore: bool) {
        self.lock().profile.logcat_ignores_uid = ignore;
    }

    /// The phone's current time, ns since the epoch.
    pub fn now_ns(&self) -> i128 {
        self.lock().now_ns()
    }

    /// Moves the phone's clock forward (or back, with a negative amount) by `seconds`.
    pub fn advance_clock(&self, seconds: f64) {
        let mut state = self.lock();
        // Noise due before the jump is written first, so the jump leaves a gap as on a real phone.
        state.catch_up_noise();
        state.clock_offset_ns += (seconds * 1e9) as i128;
        state.noise_last_ns = state.now_ns();
    }

    /// Sets the phone's wall clock `offset_ns` ahead of the host's (behind when negative), as a
    /// person changing the time in Settings or a network time update would: log lines written
    /// from now on carry the new time, `date` prints it, and the uptime goes on undisturbed.
    pub fn set_clock_offset_ns(&self, offset_ns: i128) {
        let mut state = self.lock();
        state.catch_up_noise();
        let delta = offset_ns - state.clock_offset_ns;
        state.clock_offset_ns = offset_ns;
        // The boot time is a wall time here; moving it with the clock keeps the uptime steady.
        state.boot_ns += delta;
        state.noise_last_ns = state.now_ns();
    }

    /// How far the phone's wall clock is ahead of the host's, ns (negative: behind).
    pub fn clock_offset_ns(&self) -> i128 {
        self.lock().clock_offset_ns
    }

    /// The phone's boot id, as `cat /proc/sys/kernel/random/boot_id` prints it (without the
    /// line break).
    pub fn boot_id(&self) -> String {
        self.lock().boot_id.clone()
    }

    /// The phone reboots: a new boot id, every log buffer empty, every app process gone (the
    /// system's own processes — init, logd, system_server and the running system apps — start
    /// again with new pids), the uptime from zero, nothing on screen, a non-persistent
    /// `am set-debug-app` forgotten. The clock goes on; the drop box, the exit records, the
    /// installed packages and the files stay, as they live on `/data`. Open streams stay open
    /// (the simulator keeps its connections); a logcat follower sees the new boot's lines.
    pub fn reboot(&self) {
        {
            let mut state = self.lock();
            state.catch_up_noise();
            state.boot_id = fresh_boot_id();
            for buffer in Buffer::ALL {
                state.clear_buffer(buffer);
            }
            let system: Vec<Process> = state
                .processes
                .iter()
                .filter(|process| {
                    process.package.is_none()
                        || process
                            .package
                            .as_deref()
                            .and_then(|name| state.package(name))
                            .is_some_and(|package| package.system)
                })
                .cloned()
                .collect();
            state.processes.clear();
            let now = state.now_ns();
            state.boot_ns = now;
            for old in system {
                state.start_process(&old.name, old.uid, old.package.as_deref(), old.jdwp);
                // init is pid 1 again, as `SimPhone::empty` makes it.
                if old.pid == 1
                    && let Some(process) = state.processes.last_mut()
                {
                    process.pid = 1;
                }
            }
            state.apps.foreground = None;
            state.apps.hung = None;
            if state
                .debug_app
                .as_ref()
                .is_some_and(|debug| !debug.persistent)
            {
                state.debug_app = None;
            }
            state.noise_last_ns = now;
        }
        self.bump_processes();
    }

    /// How many `logcat` commands are running now, followers included: one is counted from
    /// the moment its options are read until it ends by any way (its dump is done, `-m` lines
    /// were printed, or the host closed the stream).
    pub fn open_logcat_streams(&self) -> usize {
        self.shared.logcat_streams.load(Ordering::SeqCst)
    }

    pub(crate) fn logcat_stream(&self) -> LogcatStream {
        self.shared.logcat_streams.fetch_add(1, Ordering::SeqCst);
        LogcatStream {
            phone: self.clone(),
        }
    }

    /// A receiver that changes whenever a log entry is appended (its value: the newest entry's
    /// sequence number).
    pub(crate) fn watch_log(&self) -> watch::Receiver<u64> {
        self.lock().log_written.subscribe()
    }

    /// Sets the phone's clock to an absolute time, ms since the epoch.
    pub fn set_clock_ms(&self, epoch_ms: i64) {
        let mut state = self.lock();
        state.clock_offset_ns = i128::from(epoch_ms) * 1_000_000 - real_now_ns();
        state.noise_last_ns = state.now_ns();
    }

    /// Sets how many background lines a second other apps and the system write (0 stops them).
    pub fn set_noise_rate(&self, lines_per_second: f64) {
        let mut state = self.lock();
        state.catch_up_noise();
        state.noise_per_second = lines_per_second.max(0.0);
        state.noise_last_ns = state.now_ns();
    }

    /// Writes `count` background lines right now (a burst of noise).
    pub fn noise_burst(&self, count: usize) {
        let mut state = self.lock();
        let now = state.now_ns();
        for index in 0..count {
            state.noise_line(now - (count - index) as i128 * 1000);
        }
    }

    /// Sets a buffer's capacity (as `logcat -G`); the oldest lines go first when it is full.
    pub fn set_buffer_size(&self, buffer: Buffer, bytes: usize) {
        self.lock().set_capacity(buffer, bytes);
    }

    /// Writes lines into `buffer` until it has wrapped at least once (its oldest lines are gone).
    pub fn wrap_buffer(&self, buffer: Buffer) {
        let mut state = self.lock();
        let (pid, uid) = state.system_server();
        let capacity = state.buffer_capacity[buffer.index()];
        let mut written = 0usize;
        let now = state.now_ns();
        let mut index = 0i128;
        while written < capacity + capacity / 4 {
            let message = format!("buffer wrap filler line {index}");
            written += 28 + 3 + 8 + message.len();
            state.push_log(
                buffer,
                now - 1_000_000 + index,
                (uid, pid, pid),
                Priority::Verbose,
                "Filler",
                &message,
            );
            index += 1;
        }
    }

    /// Fills `buffer` with about `bytes` of lines from the given package's running process
    /// (growing the buffer if needed); used by throughput benchmarks.
    pub fn fill_log(&self, package: &str, buffer: Buffer, bytes: usize) -> Result<(), Error> {
        self.fill_log_with(package, buffer, bytes, |index| {
            format!(
                "fill line {index:08}: the quick brown fox jumps over the lazy dog while logcat keeps up"
            )
        })
    }

    /// [`SimPhone::fill_log`] with the message of line `index` (from 0) given by `message`:
    /// benchmarks that need secrets or repeats among the lines.
    pub fn fill_log_with(
        &self,
        package: &str,
        buffer: Buffer,
        bytes: usize,
        message: impl Fn(i128) -> String,
    ) -> Result<(), Error> {
        let pid = self.ensure_running(package)?;
        let mut state = self.lock();
        let (uid, pid, tid) = {
            let process = state
                .process(pid)
                .ok_or_else(|| Error::NotRunning(package.to_string()))?;
            (process.uid, process.pid, process.pid)
        };
        if state.buffer_capacity[buffer.index()] < bytes + 64 * 1024 {
            state.set_capacity(buffer, bytes + 64 * 1024);
        }
        let now = state.now_ns();
        let mut written = 0usize;
        let mut index: i128 = 0;
        let count_guess = (bytes / 120).max(1) as i128;
        while written < bytes {
            let message = message(index);
            // A threadtime line without uid is 44 bytes plus the message: the smallest layout.
            written += 44 + message.len();
            let time = now - (count_guess - index).max(0) * 100_000;
            state.push_log(
                buffer,
                time,
                (uid, pid, tid),
                Priority::Info,
                "FillTest",
                &message,
            );
            index += 1;
        }
        Ok(())
    }

    /// Installs (or replaces) a package.
    pub fn install(&self, mut package: Package) {
        let mut state = self.lock();
        let now = state.now_ns();
        let (pid, uid) = state.system_server();
        let name = package.name.clone();
        let replaced = state.packages.iter().position(|old| old.name == name);
        // Installed over itself (`adb install -r`): `lastUpdateTime` is now, of the same
        // version too. A package new to the phone keeps the time its scenario gave it (none:
        // the phone's first packages', installed before the scenario began).
        if replaced.is_some() {
            package.installed_ns = Some(now);
        }
        match replaced {
            Some(index) => state.packages[index] = package,
            None => state.packages.push(package),
        }
        state.push_log(
            Buffer::System,
            now,
            (uid, pid, pid + 20),
            Priority::Info,
            "PackageManager",
            &format!("Package {name} installed"),
        );
    }

    /// The uid of `package` in `user`, if it is installed there.
    pub fn uid_of(&self, package: &str, user: u32) -> Option<u32> {
        let state = self.lock();
        state
            .package(package)
            .filter(|package| package.users.contains(&user))
            .map(|package| package.uid_for_user(user))
    }

    /// The pid of `package`'s process in user 0, if it runs.
    pub fn pid_of(&self, package: &str) -> Option<u32> {
        self.lock()
            .process_of(package, 0)
            .map(|process| process.pid)
    }

    /// Every running process.
    pub fn processes(&self) -> Vec<Process> {
        self.lock().processes.clone()
    }

    pub(crate) fn ensure_running(&self, package: &str) -> Result<u32, Error> {
        self.ensure_running_as(package, 0)
    }

    pub(crate) fn ensure_running_as(&self, package: &str, user: u32) -> Result<u32, Error> {
        let running = self
            .lock()
            .process_of(package, user)
            .map(|process| process.pid);
        match running {
            Some(pid) => Ok(pid),
            None => self.launch_as_user(package, user),
        }
    }

    /// Launches `package` in user 0: a new pid, ActivityManager's start line, the app's JDWP
    /// agent when it is debuggable. An app already running is killed and started again.
    pub fn launch(&self, package: &str) -> Result<u32, Error> {
        self.launch_as_user(package, 0)
    }

    /// Launches `package` in `user` (10 for the app clone).
    pub fn launch_as_user(&self, package: &str, user: u32) -> Result<u32, Error> {
        let pid = {
            let mut state = self.lock();
            state.catch_up_noise();
            let info = state
                .package(package)
                .filter(|info| info.users.contains(&user))
                .cloned()
                .ok_or_else(|| Error::UnknownPackage(package.to_string()))?;
            state.processes.retain(|process| {
                !(process.package.as_deref() == Some(package) && process.uid / 100_000 == user)
            });
            let uid = info.uid_for_user(user);
            let jdwp =
                info.debuggable || state.profile.build_type == crate::model::BuildType::Userdebug;
            let pid = state.start_process(package, uid, Some(package), jdwp);
            let now = state.now_ns();
            let (system_pid, system_uid) = state.system_server();
            let activity = if info.main_activity.starts_with('.') {
                format!("{package}{}", info.main_activity)
            } else {
                info.main_activity.clone()
            };
            state.push_log(
                Buffer::System,
                now,
                (system_uid, system_pid, system_pid + 31),
                Priority::Info,
                "ActivityManager",
                &format!(
                    "Start proc {pid}:{package}/{} for pre-top-activity {{{package}/{activity}}}",
                    app_uid_name(uid)
                ),
            );
            let wait = state
                .debug_app
                .as_ref()
                .is_some_and(|debug| debug.package == package && debug.wait_for_debugger);
            if wait {
                state.push_log(
                    Buffer::Main,
                    now + 1_000_000,
                    (uid, pid, pid),
                    Priority::Warn,
                    "ActivityThread",
                    &format!("Application {package} is waiting for the debugger on port 8100..."),
                );
            }
            if let Some(debug) = &state.debug_app
                && debug.package == package
                && !debug.persistent
            {
                state.debug_app = None;
            }
            pid
        };
        self.bump_processes();
        Ok(pid)
    }

    /// The app writes one line (launching it first if it does not run).
    pub fn log(
        &self,
        package: &str,
        priority: Priority,
        tag: &str,
        message: &str,
    ) -> Result<(), Error> {
        self.log_as_user(package, 0, priority, tag, message)
    }

    /// [`SimPhone::log`] by the app's copy in `user` (10 for the app clone).
    pub fn log_as_user(
        &self,
        package: &str,
        user: u32,
        priority: Priority,
        tag: &str,
        message: &str,
    ) -> Result<(), Error> {
        let pid = self.ensure_running_as(package, user)?;
        let mut state = self.lock();
        state.catch_up_noise();
        let uid = state.process(pid).map(|process| process.uid).unwrap_or(0);
        let now = state.now_ns();
        state.push_log(Buffer::Main, now, (uid, pid, pid), priority, tag, message);
        Ok(())
    }

    /// The process `pid` writes one line to the main buffer now, as `android.util.Log` would;
    /// returns the entry's time (ns since the epoch, the phone's clock), which is what logcat
    /// prints for it. Every logcat follower is woken at once. For tests and benchmarks that
    /// time a line from the phone to a reader.
    pub fn log_pid(
        &self,
        pid: u32,
        priority: Priority,
        tag: &str,
        message: &str,
    ) -> Result<i128, Error> {
        let mut state = self.lock();
        let uid = state
            .process(pid)
            .map(|process| process.uid)
            .ok_or_else(|| Error::NotRunning(format!("pid {pid}")))?;
        state.catch_up_noise();
        let now = state.now_ns();
        state.push_log(Buffer::Main, now, (uid, pid, pid), priority, tag, message);
        Ok(now)
    }

    /// Stops every process of `package` and forgets it is on screen or hung.
    pub(crate) fn stop_package(&self, package: &str) {
        let pids: Vec<u32> = self
            .processes()
            .iter()
            .filter(|process| process.package.as_deref() == Some(package))
            .map(|process| process.pid)
            .collect();
        for pid in pids {
            self.remove_process(pid);
        }
        self.forget_screen(package);
    }

    /// Forgets that `package` is on screen or hung.
    pub(crate) fn forget_screen(&self, package: &str) {
        let mut state = self.lock();
        if state.apps.foreground.as_deref() == Some(package) {
            state.apps.foreground = None;
        }
        if state
            .apps
            .hung
            .as_ref()
            .is_some_and(|(hung, _, _)| hung == package)
        {
            state.apps.hung = None;
        }
    }

    pub(crate) fn remove_process(&self, pid: u32) {
        self.lock().processes.retain(|process| process.pid != pid);
        self.bump_processes();
    }

    fn bump_processes(&self) {
        self.shared
            .processes_changed
            .send_modify(|count| *count += 1);
    }

    /// Adds a drop box entry as it is.
    pub fn add_dropbox_entry(&self, entry: DropBoxEntry) {
        self.lock().dropbox.push(entry);
    }

    /// What `am set-debug-app` recorded, if anything.
    pub fn debug_app(&self) -> Option<DebugApp> {
        self.lock().debug_app.clone()
    }

    /// Plays `fault` on the next stream that sends output.
    pub fn inject_fault(&self, fault: Fault) {
        self.lock().pending_fault = Some(fault);
    }

    pub(crate) fn take_fault(&self) -> Option<Fault> {
        self.lock().pending_fault.take()
    }

    /// Takes the phone offline (every connection drops, new ones are closed at once) or back.
    pub fn set_offline(&self, offline: bool) {
        self.shared.offline.send_replace(offline);
    }

    /// Whether the phone is offline.
    pub fn is_offline(&self) -> bool {
        *self.shared.offline.borrow()
    }

    pub(crate) fn watch_offline(&self) -> watch::Receiver<bool> {
        self.shared.offline.subscribe()
    }

    pub(crate) fn watch_processes(&self) -> watch::Receiver<u64> {
        self.shared.processes_changed.subscribe()
    }

    /// The person taps "Allow" in the "Allow USB debugging?" dialog (`AuthMode::AskUser`).
    pub fn allow_usb_debugging(&self) {
        self.shared.usb_debugging_allowed.send_replace(true);
    }

    pub(crate) fn watch_usb_debugging(&self) -> watch::Receiver<bool> {
        self.shared.usb_debugging_allowed.subscribe()
    }

    pub(crate) fn record(&self, request: Request) {
        tracing::debug!(?request, "adbsim request");
        let mut state = self.lock();
        // Bounded, so a phone serving a long session does not grow without end.
        if state.requests.len() >= 8_192 {
            state.requests.drain(..1_024);
        }
        state.requests.push(request);
    }

    /// Every request recorded so far: services opened and command lines run, in order.
    pub fn requests(&self) -> Vec<Request> {
        self.lock().requests.clone()
    }

    /// Every shell command line run so far, in order.
    pub fn commands_run(&self) -> Vec<String> {
        self.lock()
            .requests
            .iter()
            .filter_map(|request| match request {
                Request::Command(command) => Some(command.clone()),
                Request::Service(_) => None,
            })
            .collect()
    }

    /// Every service opened so far, in order.
    pub fn services_opened(&self) -> Vec<String> {
        self.lock()
            .requests
            .iter()
            .filter_map(|request| match request {
                Request::Service(service) => Some(service.clone()),
                Request::Command(_) => None,
            })
            .collect()
    }

    /// Forgets the record of requests.
    pub fn clear_requests(&self) {
        self.lock().requests.clear();
    }

    /// The pids `adb jdwp` lists, in start order.
    pub fn jdwp_pids(&self) -> Vec<u32> {
        self.lock()
            .processes
            .iter()
            .filter(|process| process.jdwp)
            .map(|process| process.pid)
            .collect()
    }
}
