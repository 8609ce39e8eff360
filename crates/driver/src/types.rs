//! The value types of the contract: ids, levels, queries, lines, reports, devices, capabilities.

use std::fmt;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

/// An app's id: an Android package name or an iOS bundle id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct AppId(String);

impl AppId {
    /// Wraps an app id as given; validation is the caller's (see [`AppId::parse`]).
    pub fn new(id: impl Into<String>) -> Self {
        AppId(id.into())
    }

    /// Checks that `id` looks like a package name or bundle id: non-empty, at most 255 bytes,
    /// only ASCII letters, digits, `.`, `_` and `-`. Anything else can never name an app, and
    /// refusing it here keeps it out of every shell command below.
    pub fn parse(id: &str) -> crate::Result<Self> {
        let id = id.trim();
        if id.is_empty() {
            return Err(crate::Error::InvalidArgument("the app id is empty".into()));
        }
        if id.len() > 255 {
            return Err(crate::Error::InvalidArgument(
                "the app id is longer than 255 bytes".into(),
            ));
        }
        if let Some(bad) = id
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
        {
            return Err(crate::Error::InvalidArgument(format!(
                "the app id {id:?} contains {bad:?}; a package name or bundle id has only letters, digits, '.', '_' and '-'"
            )));
        }
        Ok(AppId(id.to_owned()))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for AppId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A device's id: an adb serial or an iPhone's UDID.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct DeviceId(String);

impl DeviceId {
    /// Wraps a device id.
    pub fn new(id: impl Into<String>) -> Self {
        DeviceId(id.into())
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `source/id`: a device named with where it comes from (an adb server's `host:port`, a
    /// usbmuxd address), for a device id that two sources show. A serial or UDID never holds a
    /// `/`, so the id is what follows the last one.
    pub fn qualified(source: &str, id: &str) -> DeviceId {
        DeviceId(format!("{source}/{id}"))
    }

    /// The bare id this names on `source`: the part after `source/` when the id is qualified
    /// by it, else the id as it is.
    ///
    /// ```
    /// use phonelogs_driver::DeviceId;
    /// let id = DeviceId::qualified("10.0.0.5:5037", "emulator-5554");
    /// assert_eq!(id.as_str(), "10.0.0.5:5037/emulator-5554");
    /// assert_eq!(id.within("10.0.0.5:5037"), "emulator-5554");
    /// assert_eq!(id.within("10.0.0.6:5037"), "10.0.0.5:5037/emulator-5554");
    /// assert_eq!(DeviceId::new("emulator-5554").within("10.0.0.5:5037"), "emulator-5554");
    /// ```
    pub fn within(&self, source: &str) -> &str {
        self.0
            .strip_prefix(source)
            .and_then(|rest| rest.strip_prefix('/'))
            .unwrap_or(&self.0)
    }
}

impl fmt::Display for DeviceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A log line's severity, from least to most severe.
///
/// Android's levels map one to one (`V D I W E F`, and `A` for assert is fatal). iOS's os_log
/// levels map as the spec says: debug is debug, default and info are info, error is error, and a
/// fault is fatal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Verbose (`V`).
    Verbose,
    /// Debug (`D`; os_log debug).
    Debug,
    /// Info (`I`; os_log default and info).
    Info,
    /// Warning (`W`).
    Warn,
    /// Error (`E`; os_log error).
    Error,
    /// Fatal (`F` and `A`; os_log fault).
    Fatal,
}

impl LogLevel {
    /// Every level, least severe first.
    pub const ALL: [LogLevel; 6] = [
        LogLevel::Verbose,
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Warn,
        LogLevel::Error,
        LogLevel::Fatal,
    ];

    /// The level's name as the tools take it: `verbose`, `debug`, `info`, `warn`, `error`, `fatal`.
    pub fn name(self) -> &'static str {
        match self {
            LogLevel::Verbose => "verbose",
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Warn => "warn",
            LogLevel::Error => "error",
            LogLevel::Fatal => "fatal",
        }
    }

    /// Parses a level name (case-insensitive; `warning` is accepted for `warn`).
    pub fn from_name(name: &str) -> Option<LogLevel> {
        match name.trim().to_ascii_lowercase().as_str() {
            "verbose" => Some(LogLevel::Verbose),
            "debug" => Some(LogLevel::Debug),
            "info" => Some(LogLevel::Info),
            "warn" | "warning" => Some(LogLevel::Warn),
            "error" => Some(LogLevel::Error),
            "fatal" => Some(LogLevel::Fatal),
            _ => None,
        }
    }

    /// Android's one-letter priority (`V D I W E F`, with `A` for assert read as fatal).
    pub fn from_android_char(c: u8) -> Option<LogLevel> {
        match c {
            b'V' => Some(LogLevel::Verbose),
            b'D' => Some(LogLevel::Debug),
            b'I' => Some(LogLevel::Info),
            b'W' => Some(LogLevel::Warn),
            b'E' => Some(LogLevel::Error),
            b'F' | b'A' => Some(LogLevel::Fatal),
            _ => None,
        }
    }

    /// The letter logcat takes in a `*:<level>` filter spec.
    pub fn android_char(self) -> char {
        match self {
            LogLevel::Verbose => 'V',
            LogLevel::Debug => 'D',
            LogLevel::Info => 'I',
            LogLevel::Warn => 'W',
            LogLevel::Error => 'E',
            LogLevel::Fatal => 'F',
        }
    }

    /// The mapping of iOS os_log levels: `0x00` default and `0x01` info are info, `0x02` debug is
    /// debug, `0x10` error is error, `0x11` fault is fatal. An unknown byte reads as info.
    pub fn from_os_log_type(kind: u8) -> LogLevel {
        match kind {
            0x02 => LogLevel::Debug,
            0x10 => LogLevel::Error,
            0x11 => LogLevel::Fatal,
            _ => LogLevel::Info,
        }
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What an `app_logs` call asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogQuery {
    /// Lines before this instant are not wanted.
    pub since: OffsetDateTime,
    /// Only lines of this level or more severe, if set.
    pub level: Option<LogLevel>,
    /// At most this many lines: the newest are kept.
    pub count: usize,
}

impl LogQuery {
    /// A query for the newest `count` lines since `since`, of any level. Which texts are kept
    /// (`filter`, `exclude`, `tag`) is the gateway's, decided on masked text (`phonelogs-view`):
    /// a driver reads every line of the app.
    pub fn since(since: OffsetDateTime, count: usize) -> Self {
        LogQuery {
            since,
            level: None,
            count,
        }
    }

    /// Whether a line passes this query's time and level (not its count).
    pub fn matches(&self, line: &LogLine) -> bool {
        line.time >= self.since && self.level.is_none_or(|level| line.level >= level)
    }
}

/// One log line of an app.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogLine {
    /// When the phone logged it, on the phone's clock, as an instant.
    #[serde(with = "time::serde::rfc3339")]
    pub time: OffsetDateTime,
    /// Its severity.
    pub level: LogLevel,
    /// Its tag (Android) or subsystem/category or process (iOS).
    pub tag: String,
    /// Its text. Multi-line messages keep their newlines.
    pub text: String,
    /// The process that logged it, when known.
    pub pid: Option<u32>,
    /// The thread that logged it, when known.
    pub tid: Option<u32>,
    /// The Linux uid that logged it (Android), when known.
    pub uid: Option<u32>,
}

/// The lines an `app_logs` call returns, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogResult {
    /// The lines, oldest first, at most the query's count (the newest of those that matched).
    pub lines: Vec<LogLine>,
    /// How many older matching lines were left out to respect the count, when the driver knows.
    pub omitted: usize,
    /// What the read learned about the phone's boot and clock, when the driver can tell.
    #[serde(default)]
    pub mark: Option<PhoneMark>,
    /// What the driver knows of the app's processes that logged these lines, beyond the lines
    /// themselves (an iPhone follower knows each one's executable, and when the phone ended
    /// its stream with the process); empty when it knows nothing more.
    #[serde(default)]
    pub processes: Vec<ProcessSpan>,
    /// What the agent must be told with these lines so that a short or empty result is never
    /// read as "the app logged nothing" when that is not so: lines that could not be read and
    /// why, an app that runs no process now, values the phone hid. Empty when there is nothing
    /// to say. The gateway renders them into the result's message.
    #[serde(default)]
    pub notices: Vec<LogNotice>,
}

/// One of the app's processes as the driver knows it: for the result's process markers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessSpan {
    /// Its pid.
    pub pid: u32,
    /// Its name (the executable, or the process name), when the driver knows it.
    pub name: Option<String>,
    /// Whether it ended: the phone closed its log stream because the process was gone.
    pub ended: bool,
}

/// Something a driver learned while reading an app's lines that the agent must be told with
/// them ([`LogResult::notices`]). Drivers fill in the platform's cause and fix; the gateway
/// decides the wording around them, once, in its catalog.
///
/// ```
/// use phonelogs_driver::LogNotice;
///
/// let notice = LogNotice::Unreadable {
///     cause: "the phone is locked".into(),
///     fix: "unlock it and keep it unlocked while its logs are read".into(),
/// };
/// assert!(notice.lines_may_be_missing());
/// assert!(!LogNotice::NotRunning.lines_may_be_missing());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum LogNotice {
    /// The driver cannot find the app's processes now, so none of its new lines can be read:
    /// the lines returned (if any) are those read before. `cause` says why, `fix` what a
    /// person can do about it; both are plain sentence fragments, without a final stop.
    Unreadable {
        /// Why the app's lines cannot be read, e.g. "the iPhone's processes could not be
        /// listed (the phone is locked)".
        cause: String,
        /// What a person can do, e.g. "unlock the iPhone".
        fix: String,
    },
    /// The lines of some of the app's processes cannot be read (`part`, e.g. "its extensions
    /// (widgets, share extensions)"), while the others' are.
    PartlyUnreadable {
        /// Which of the app's processes, as people name them.
        part: String,
        /// Why.
        cause: String,
        /// What a person can do.
        fix: String,
    },
    /// The app runs no process on the phone now, so no new line of it can come until it is
    /// launched: an empty result is then the truth, not a failure.
    NotRunning,
    /// The phone shows some values in the app's lines as `marker` (an iPhone's `<private>`):
    /// the app's code or build hides them. The gateway says so only when a line shown holds
    /// the marker, and counts those lines.
    Redacted {
        /// The text standing for a hidden value, e.g. `<private>`.
        marker: String,
        /// Why the phone hides them.
        why: String,
        /// What the app's developer can change so that they show.
        fix: String,
    },
}

impl LogNotice {
    /// Whether the notice means some of the app's lines could not be read.
    pub fn lines_may_be_missing(&self) -> bool {
        matches!(
            self,
            LogNotice::Unreadable { .. } | LogNotice::PartlyUnreadable { .. }
        )
    }
}

/// The kind of a crash report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CrashKind {
    /// An uncaught Java/Kotlin exception (Android).
    JavaCrash,
    /// A native crash: a signal and a tombstone summary (Android).
    NativeCrash,
    /// An app that did not respond (Android).
    Anr,
    /// An iPhone crash report (`.ips`).
    Crash,
    /// iOS ended an app that did not answer in time (`0x8badf00d`).
    Watchdog,
}

impl CrashKind {
    /// The kind's name: `java_crash`, `native_crash`, `anr`, `crash`, `watchdog`.
    pub fn name(self) -> &'static str {
        match self {
            CrashKind::JavaCrash => "java_crash",
            CrashKind::NativeCrash => "native_crash",
            CrashKind::Anr => "anr",
            CrashKind::Crash => "crash",
            CrashKind::Watchdog => "watchdog",
        }
    }
}

impl fmt::Display for CrashKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One crash report of an app, already cut down to what is the app's own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrashReport {
    /// What kind of failure.
    pub kind: CrashKind,
    /// When it happened, with the phone's offset.
    #[serde(with = "time::serde::rfc3339")]
    pub time: OffsetDateTime,
    /// The process id, when the report names one.
    pub pid: Option<u32>,
    /// The process name.
    pub process: String,
    /// A one-line summary (the exception, the signal, the ANR's subject).
    pub summary: String,
    /// The report's text, cut to the app's own parts.
    pub text: String,
    /// The build of the app that wrote it, as [`AppInfo::version`] names builds, when the report
    /// says (an iPhone `.ips`: `bundleInfo.CFBundleVersion`, else the header's
    /// `build_version`); `None` when it does not. A development build's pass leaves out the
    /// reports of another build.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
}

/// The platform of a device or driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    /// Android, through adb.
    Android,
    /// iPhone, through usbmux and lockdown.
    Ios,
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Platform::Android => "android",
            Platform::Ios => "ios",
        })
    }
}

/// Whether a device can be read now.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviceState {
    /// Connected and usable.
    Online,
    /// Known but not answering.
    Offline,
    /// Waiting for the person to allow this computer (adb's "unauthorized").
    Unauthorized,
    /// An iPhone that is not paired with this computer.
    NotPaired,
    /// An iPhone that is locked.
    Locked,
    /// Any other state, as the platform names it.
    Other(String),
}

/// A device a driver can see.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// Its id (serial or UDID).
    pub id: DeviceId,
    /// Its platform.
    pub platform: Platform,
    /// Its model, when known.
    pub model: Option<String>,
    /// Whether it can be read now.
    pub state: DeviceState,
}

/// What the person and the policy need to know about an app before its logs are read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppInfo {
    /// The app's id.
    pub app: AppId,
    /// The name people know it by, when the driver can tell.
    pub label: Option<String>,
    /// One of the phone's own apps (Android `SYSTEM` flag; iOS `com.apple.*` or a system app).
    pub system: bool,
    /// Built to be debugged: Android `DEBUGGABLE`, iOS `get-task-allow`.
    pub dev_build: bool,
    /// The Linux uid its lines carry (Android), so the layers above can check every line again.
    /// One uid: the app's in the Android user it runs in, never a copy's in another user (an
    /// app clone, a work profile), so lines, reports and counts are all of the same copy.
    pub uid: Option<u32>,
    /// The app shares its uid with other packages (Android `sharedUserId`): its lines cannot be
    /// told apart from theirs, so reading them is unsupported. The layers above answer that
    /// before asking anyone; the driver still refuses to read such an app.
    pub shared_uid: bool,
    /// The installed version, as symbols are filed under it: Android `versionCode` (from the
    /// `dumpsys package` the driver reads anyway), iOS `CFBundleVersion`. `None` when the phone
    /// did not say.
    #[serde(default)]
    pub version: Option<String>,
    /// When the installed build was installed, on the phone's clock, as an instant, when the
    /// phone said: a reinstall changes it, of the same version too. The app's lines and
    /// reports from before it were written by another build, which a development build's
    /// pass (no question) does not cover.
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub installed_at: Option<OffsetDateTime>,
    /// What tells one install of the app from another where the phone gives no install time:
    /// on the iPhone, the bundle's path (installation_proxy's `Path`), whose container moves
    /// with every install, of the same build too. `None` where the phone does not say (Android
    /// says [`AppInfo::installed_at`] instead).
    #[serde(default)]
    pub install_id: Option<String>,
}

impl AppInfo {
    /// Whether `other` describes the app as this does in everything a decision to read it rests
    /// on: the app, its uid (the one every line is checked against), the development-build,
    /// system and shared-uid flags, the version (symbols are filed under it), the install
    /// time and the install id (a reinstall of the same version is another build). The label is not among them:
    /// it names the app, it decides nothing.
    ///
    /// ```
    /// use phonelogs_driver::{AppId, AppInfo};
    /// let debug = AppInfo {
    ///     app: AppId::new("dev.phonelogs.crashtest"),
    ///     label: None,
    ///     system: false,
    ///     dev_build: true,
    ///     uid: Some(10234),
    ///     shared_uid: false,
    ///     version: Some("7".into()),
    ///     installed_at: None,
    ///     install_id: None,
    /// };
    /// let labelled = AppInfo { label: Some("Crash Test".into()), ..debug.clone() };
    /// let release = AppInfo { dev_build: false, ..debug.clone() };
    /// assert!(debug.same_facts(&labelled));
    /// assert!(!debug.same_facts(&release));
    /// ```
    pub fn same_facts(&self, other: &AppInfo) -> bool {
        self.app == other.app
            && self.uid == other.uid
            && self.dev_build == other.dev_build
            && self.system == other.system
            && self.shared_uid == other.shared_uid
            && self.version == other.version
            && self.installed_at == other.installed_at
            && self.install_id == other.install_id
    }
}

/// What a driver can do, so the layers above never ask "is this Android?".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capabilities {
    /// The platform the driver serves.
    pub platform: Platform,
    /// `app_logs` works.
    pub logs: bool,
    /// `app_crashes` works.
    pub crashes: bool,
    /// The driver listens for lines (iPhone) and must be told when a task ends.
    pub listener: bool,
    /// The six debugging aids work.
    pub debugger: bool,
    /// The driver keeps log history, so lines logged before the first call can be read.
    pub log_history: bool,
    /// Every line `app_logs` returns carries the uid that logged it, and `app_info` names the
    /// app's uid (Android). The gateway then checks every line's uid again and treats a line
    /// without one as an error, never as a line to pass on.
    pub line_uids: bool,
    /// A crash report names the app's process by its package (`package` or `package:name`,
    /// Android), so the gateway checks every report's process again. An iPhone report names the
    /// executable, which the driver matched by the bundle id in the report's header.
    pub reports_name_package: bool,
}

/// What an `app_crashes` call found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrashResult {
    /// The app's reports, newest first, at most the limit.
    pub reports: Vec<CrashReport>,
    /// How many reports were left out because the driver could not confirm they are this
    /// app's copy's (an Android 10 drop box entry names no uid, and its process no longer
    /// shows which user's copy it was), so the message can say so.
    pub unconfirmed: usize,
}

/// What a read learned about the phone itself, in the same round trip as the lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhoneMark {
    /// The phone's boot id (Android `/proc/sys/kernel/random/boot_id`), when it could be read:
    /// a different one means the phone restarted in between.
    pub boot_id: Option<String>,
    /// The phone's own clock at the read, when it could be read.
    #[serde(with = "time::serde::rfc3339::option")]
    pub phone_now: Option<OffsetDateTime>,
    /// The time of the oldest line the phone's log buffer (the one the app's lines go to) still
    /// holds, when known: lines older than it are gone (the buffer wrapped).
    #[serde(with = "time::serde::rfc3339::option")]
    pub oldest_kept: Option<OffsetDateTime>,
}
