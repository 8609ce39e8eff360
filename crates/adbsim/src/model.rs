//! The plain data of a simulated phone: profiles, packages, processes, log entries, drop box entries.
//!
//! These types hold no locks and do no I/O; `SimPhone` in `phone.rs` owns them behind a mutex.

use serde::{Deserialize, Serialize};

/// The Android release a simulated phone plays; it changes command behaviour and output layouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[non_exhaustive]
pub enum AndroidVersion {
    /// Android 10 (API 29): logcat has no `--uid`, no `dumpsys activity exit-info`, drop box
    /// entries carry no `UID:` line.
    #[serde(rename = "10")]
    Android10,
    /// Android 14 (API 34).
    #[default]
    #[serde(rename = "14")]
    Android14,
    /// Android 16 (API 36).
    #[serde(rename = "16")]
    Android16,
}

impl AndroidVersion {
    /// Parses `10`, `14` or `16`.
    pub fn from_release(release: &str) -> Option<Self> {
        match release.trim() {
            "10" => Some(Self::Android10),
            "14" => Some(Self::Android14),
            "16" => Some(Self::Android16),
            _ => None,
        }
    }

    /// The release string, as `ro.build.version.release` says it.
    pub fn release(self) -> &'static str {
        match self {
            Self::Android10 => "10",
            Self::Android14 => "14",
            Self::Android16 => "16",
        }
    }

    /// The API level.
    pub fn sdk(self) -> u32 {
        match self {
            Self::Android10 => 29,
            Self::Android14 => 34,
            Self::Android16 => 36,
        }
    }

    /// The build id that goes into the fingerprint.
    pub fn build_id(self) -> &'static str {
        match self {
            Self::Android10 => "QQ3A.200805.001",
            Self::Android14 => "UQ1A.240205.004",
            Self::Android16 => "BP2A.250605.031",
        }
    }
}

/// The build type: only a userdebug (or rooted) build lets the shell user run `debuggerd`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum BuildType {
    /// A production build, as sold.
    #[default]
    User,
    /// A userdebug build: `ro.debuggable=1`, `debuggerd` works for the shell user.
    Userdebug,
}

/// How the simulated phone answers the host's `CNXN`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum AuthMode {
    /// No AUTH: the phone answers CNXN at once, like an emulator or an already trusted computer.
    #[default]
    Off,
    /// AUTH TOKEN, and any signature is accepted (the host's key is "already trusted").
    TrustAnyKey,
    /// AUTH TOKEN, the signature is refused with a second TOKEN, and the host's public key waits
    /// for `SimPhone::allow_usb_debugging` (the "Allow USB debugging" dialog).
    AskUser,
}

/// The settings that make one simulated phone differ from another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Profile {
    /// The Android release.
    pub android: AndroidVersion,
    /// The build type.
    pub build_type: BuildType,
    /// When true, logcat accepts `--uid` but returns every uid's lines (a broken logd), so tests
    /// prove that the driver re-checks the uid of every line.
    pub logcat_ignores_uid: bool,
    /// The phone's offset from UTC in minutes (fixed, no daylight saving).
    pub utc_offset_minutes: i32,
    /// The zone's abbreviation, as `date` prints it.
    pub zone_name: String,
    /// The time zone id, as `persist.sys.timezone` says it.
    pub zone_id: String,
    /// The serial number (`ro.serialno`) and the host front's device serial.
    pub serial: String,
    /// `ro.product.manufacturer`.
    pub manufacturer: String,
    /// `ro.product.model`.
    pub model: String,
    /// `ro.product.name`.
    pub product: String,
    /// `ro.product.device`.
    pub device: String,
    /// How the phone answers the host's connect.
    pub auth: AuthMode,
}

impl Default for Profile {
    fn default() -> Self {
        Self {
            android: AndroidVersion::Android14,
            build_type: BuildType::User,
            logcat_ignores_uid: false,
            utc_offset_minutes: 60,
            zone_name: "CET".to_string(),
            zone_id: "Europe/Paris".to_string(),
            serial: "PLSIM0001".to_string(),
            manufacturer: "Google".to_string(),
            model: "Pixel 7".to_string(),
            product: "panther".to_string(),
            device: "panther".to_string(),
            auth: AuthMode::Off,
        }
    }
}

impl Profile {
    /// The default profile for one Android release.
    pub fn for_android(android: AndroidVersion) -> Self {
        let mut profile = Self {
            android,
            ..Self::default()
        };
        if android == AndroidVersion::Android10 {
            profile.model = "Pixel 3a".to_string();
            profile.product = "sargo".to_string();
            profile.device = "sargo".to_string();
        }
        profile
    }

    /// The build fingerprint.
    pub fn fingerprint(&self) -> String {
        let build_type = match self.build_type {
            BuildType::User => "user",
            BuildType::Userdebug => "userdebug",
        };
        let keys = match self.build_type {
            BuildType::User => "release-keys",
            BuildType::Userdebug => "dev-keys",
        };
        format!(
            "google/{}/{}:{}/{}/{}:{}/{}",
            self.product,
            self.device,
            self.android.release(),
            self.android.build_id(),
            match self.android {
                AndroidVersion::Android10 => "6528147",
                AndroidVersion::Android14 => "11364089",
                AndroidVersion::Android16 => "13570187",
            },
            build_type,
            keys
        )
    }

    /// Whether the shell user may run `debuggerd` on other processes.
    pub fn debuggerd_allowed(&self) -> bool {
        self.build_type == BuildType::Userdebug
    }
}

/// One installed package.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Package {
    /// The package name.
    pub name: String,
    /// The app id (the uid in user 0), e.g. 10234.
    pub app_id: u32,
    /// The users it is installed for; user 10 or above models an app clone or work profile.
    #[serde(default = "default_users")]
    pub users: Vec<u32>,
    /// `DEBUGGABLE` in its flags.
    #[serde(default)]
    pub debuggable: bool,
    /// `SYSTEM` in its flags.
    #[serde(default)]
    pub system: bool,
    /// `android:sharedUserId`, if any.
    #[serde(default)]
    pub shared_user: Option<String>,
    /// `versionCode`.
    #[serde(default = "default_version_code")]
    pub version_code: u64,
    /// `versionName`.
    #[serde(default = "default_version_name")]
    pub version_name: String,
    /// The installer package, `None` for a sideloaded or system package.
    #[serde(default)]
    pub installer: Option<String>,
    /// `targetSdk`.
    #[serde(default = "default_target_sdk")]
    pub target_sdk: u32,
    /// The launcher activity's class, relative to the package (`.MainActivity`).
    #[serde(default = "default_activity")]
    pub main_activity: String,
    /// When it was installed (nanoseconds on the phone's clock), which `dumpsys package`
    /// prints as `lastUpdateTime`: set by [`crate::SimPhone::install`] over an installed
    /// package; `None`, the phone's own install time of its first packages.
    #[serde(default)]
    pub installed_ns: Option<i128>,
}

fn default_users() -> Vec<u32> {
    vec![0]
}
fn default_version_code() -> u64 {
    1
}
fn default_version_name() -> String {
    "1.0".to_string()
}
fn default_target_sdk() -> u32 {
    34
}
fn default_activity() -> String {
    ".MainActivity".to_string()
}

impl Package {
    /// A third-party package in user 0 with default versions.
    pub fn new(name: &str, app_id: u32) -> Self {
        Self {
            name: name.to_string(),
            app_id,
            users: default_users(),
            debuggable: false,
            system: false,
            shared_user: None,
            version_code: 1,
            version_name: "1.0".to_string(),
            installer: None,
            target_sdk: 34,
            main_activity: default_activity(),
            installed_ns: None,
        }
    }

    /// The uid of this package in `user`.
    pub fn uid_for_user(&self, user: u32) -> u32 {
        user * 100_000 + self.app_id
    }

    /// The `flags=[ … ]` names, in the order Android prints them.
    pub fn flag_names(&self) -> Vec<&'static str> {
        let mut names = Vec::new();
        if self.system {
            names.push("SYSTEM");
        }
        if self.debuggable {
            names.push("DEBUGGABLE");
        }
        names.push("HAS_CODE");
        if self.system {
            names.push("PERSISTENT");
        }
        names.push("ALLOW_CLEAR_USER_DATA");
        names.push("ALLOW_BACKUP");
        names
    }
}

/// One running process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Process {
    /// Its pid.
    pub pid: u32,
    /// Its uid.
    pub uid: u32,
    /// Its process name (`/proc/pid/cmdline`).
    pub name: String,
    /// The package it runs, if it is an app.
    pub package: Option<String>,
    /// Its threads: tid and name; the first is the main thread (tid == pid).
    pub threads: Vec<(u32, String)>,
    /// Whether it runs a JDWP agent (listed by `adb jdwp`).
    pub jdwp: bool,
    /// Its start time, ns since the epoch.
    pub started_ns: i128,
}

/// A logcat buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Buffer {
    /// `main`: apps' own lines.
    Main,
    /// `radio`.
    Radio,
    /// `events`: binary events, printed as tags with bracketed payloads.
    Events,
    /// `system`: the framework's lines.
    System,
    /// `crash`: `FATAL EXCEPTION` blocks and the tombstone echo.
    Crash,
}

impl Buffer {
    /// Every buffer, in log id order.
    pub const ALL: [Buffer; 5] = [
        Buffer::Main,
        Buffer::Radio,
        Buffer::Events,
        Buffer::System,
        Buffer::Crash,
    ];

    /// Its name as logcat prints it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Main => "main",
            Self::Radio => "radio",
            Self::Events => "events",
            Self::System => "system",
            Self::Crash => "crash",
        }
    }

    /// Parses a buffer name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|buffer| buffer.name() == name)
    }

    pub(crate) fn index(self) -> usize {
        match self {
            Self::Main => 0,
            Self::Radio => 1,
            Self::Events => 2,
            Self::System => 3,
            Self::Crash => 4,
        }
    }
}

/// A log priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Priority {
    /// `V`.
    Verbose = 2,
    /// `D`.
    Debug = 3,
    /// `I`.
    Info = 4,
    /// `W`.
    Warn = 5,
    /// `E`.
    Error = 6,
    /// `F`.
    Fatal = 7,
}

impl Priority {
    /// The letter logcat prints.
    pub fn letter(self) -> char {
        match self {
            Self::Verbose => 'V',
            Self::Debug => 'D',
            Self::Info => 'I',
            Self::Warn => 'W',
            Self::Error => 'E',
            Self::Fatal => 'F',
        }
    }

    /// Parses a letter (case-insensitive); `S` (silent) is above every priority and maps to `None`.
    pub fn from_letter(letter: char) -> Option<Self> {
        match letter.to_ascii_uppercase() {
            'V' => Some(Self::Verbose),
            'D' => Some(Self::Debug),
            'I' => Some(Self::Info),
            'W' => Some(Self::Warn),
            'E' => Some(Self::Error),
            'F' | 'A' => Some(Self::Fatal),
            _ => None,
        }
    }
}

/// One log record as logd stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    /// Arrival order, for stable sorting and for following.
    pub seq: u64,
    /// The buffer.
    pub buffer: Buffer,
    /// The time, ns since the epoch.
    pub time_ns: i128,
    /// The writer's uid.
    pub uid: u32,
    /// The writer's pid.
    pub pid: u32,
    /// The writer's tid.
    pub tid: u32,
    /// The priority.
    pub priority: Priority,
    /// The tag.
    pub tag: String,
    /// The message; it may hold several lines.
    pub message: String,
}

impl LogEntry {
    /// The bytes logd charges for this entry against the buffer's size.
    pub fn cost(&self) -> usize {
        // logd counts its 28-byte header, the priority byte, the tag and message with their NULs.
        28 + 1 + self.tag.len() + 1 + self.message.len() + 1
    }
}

/// One drop box entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DropBoxEntry {
    /// Its tag, e.g. `data_app_crash`.
    pub tag: String,
    /// Its time, ms since the epoch.
    pub time_ms: i64,
    /// Its text.
    pub text: String,
}

/// One `ApplicationExitInfo` record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExitRecord {
    /// The package.
    pub package: String,
    /// The process's uid.
    pub uid: u32,
    /// The pid.
    pub pid: u32,
    /// The process name.
    pub process: String,
    /// The reason code (4 crash, 5 native crash, 6 ANR, 10 user requested, 16 package updated).
    pub reason: u32,
    /// The sub-reason code.
    pub subreason: u32,
    /// The status (the signal for a native crash).
    pub status: u32,
    /// The importance at death.
    pub importance: u32,
    /// The description, free text.
    pub description: String,
    /// The time, ms since the epoch.
    pub time_ms: i64,
    /// Whether a trace file is kept (ANR, native crash).
    pub trace: Option<String>,
}

/// The text of an `ApplicationExitInfo` reason code.
pub fn exit_reason_text(reason: u32) -> &'static str {
    match reason {
        1 => "EXIT SELF",
        2 => "SIGNALED",
        3 => "LOW MEMORY",
        4 => "APP CRASH(EXCEPTION)",
        5 => "APP CRASH(NATIVE)",
        6 => "ANR",
        7 => "INITIALIZATION FAILURE",
        8 => "PERMISSION CHANGE",
        9 => "EXCESSIVE RESOURCE USAGE",
        10 => "USER REQUESTED",
        11 => "USER STOPPED",
        12 => "DEPENDENCY DIED",
        13 => "OTHER KILLS BY SYSTEM",
        14 => "FREEZER",
        15 => "STATE CHANGE",
        16 => "PACKAGE UPDATED",
        _ => "UNKNOWN",
    }
}

/// The text of an `ApplicationExitInfo` sub-reason code.
pub fn exit_subreason_text(subreason: u32) -> &'static str {
    match subreason {
        21 => "FORCE STOP",
        22 => "REMOVE TASK",
        _ => "UNKNOWN",
    }
}

/// The name logcat's `-v uid` prints for a uid when its passwd name is at most five characters.
pub fn short_uid_name(uid: u32) -> Option<&'static str> {
    match uid {
        0 => Some("root"),
        1001 => Some("radio"),
        1010 => Some("wifi"),
        1013 => Some("media"),
        1019 => Some("drm"),
        1021 => Some("gps"),
        1027 => Some("nfc"),
        1036 => Some("logd"),
        1041 => Some("audio"),
        2000 => Some("shell"),
        _ => None,
    }
}
