//! # phonelogs-driver
//!
//! The contract between phonelogs and a phone: the traits every backend implements
//! ([`AppLogger`], [`LogListener`], [`AppDebugger`], [`ConfirmingReader`]), the values they exchange, and the one
//! [`Error`] whose kinds the layers above act on. Backends (`phonelogs-android`, `phonelogs-ios`,
//! `phonelogs-fake`) implement it; the gateway holds them as `Arc<dyn AppLogger>` and never asks
//! which platform it is talking to: it reads [`Capabilities`] instead.
//!
//! With the `conformance` feature, [`conformance`] holds one suite of checks that every driver runs
//! against itself, so a new check reaches all of them.
//!
//! ```
//! use phonelogs_driver::{AppId, LogLevel, LogLine, LogQuery};
//! use time::macros::datetime;
//!
//! // A query for the newest 200 warnings or worse since a moment.
//! let mut query = LogQuery::since(datetime!(2026-11-30 10:00 UTC), 200);
//! query.level = Some(LogLevel::Warn);
//!
//! let line = LogLine {
//!     time: datetime!(2026-11-30 10:00:01 UTC),
//!     level: LogLevel::Error,
//!     tag: "NetClient".into(),
//!     text: "connect failed".into(),
//!     pid: Some(4242),
//!     tid: Some(4242),
//!     uid: Some(10123),
//! };
//! assert!(query.matches(&line));
//! assert_eq!(AppId::parse("dev.phonelogs.crashtest")?.as_str(), "dev.phonelogs.crashtest");
//! assert!(AppId::parse("x; reboot").is_err());
//! # Ok::<(), phonelogs_driver::Error>(())
//! ```

mod debug;
mod error;
mod live;
mod types;

#[cfg(feature = "conformance")]
pub mod conformance;

pub use debug::{
    ClearDebugAppResult, ExitRecord, JdwpProcessList, NativeBacktrace, NativeTombstone,
    ProcessExitHistory, ProcessOwner, SetDebugAppResult, ThreadSummary, TombstoneCapture,
};
pub use error::{BoxError, Error, ErrorKind, Result};
pub use live::LineStream;
pub use types::{
    AppId, AppInfo, Capabilities, CrashKind, CrashReport, CrashResult, DeviceId, DeviceInfo,
    DeviceState, LogLevel, LogLine, LogNotice, LogQuery, LogResult, PhoneMark, Platform,
    ProcessSpan,
};

use async_trait::async_trait;
use time::OffsetDateTime;

/// Reads one app's own log lines and crash reports from the devices a backend reaches.
///
/// Every method reads only what belongs to `app`: a backend never returns a line or report of
/// another process, and the gateway checks again.
#[async_trait]
pub trait AppLogger: Send + Sync {
    /// What this driver can do.
    fn capabilities(&self) -> Capabilities;

    /// Every device this driver reaches, in any state.
    async fn devices(&self) -> Result<Vec<DeviceInfo>>;

    /// Where this driver's devices come from: an adb server's `host:port`, a usbmuxd address.
    /// The gateway names the devices of a source that is not the local default
    /// ([`AppLogger::source_is_default`]) with it ([`DeviceId::qualified`]), so a driver with a
    /// source accepts a device id qualified by it as well as the bare one (see
    /// [`DeviceId::within`]). `None` (the default): a driver whose ids are its own.
    fn source(&self) -> Option<String> {
        None
    }

    /// Whether [`AppLogger::source`] is the one this machine's tools use when nothing names
    /// another (adb's server on this machine's port 5037, the platform's usbmuxd socket): its
    /// devices keep their bare ids as names, as with no source. `false` by default.
    fn source_is_default(&self) -> bool {
        false
    }

    /// What the policy needs to know about `app` on `device`. An app that is not installed is
    /// [`Error::NotFound`].
    async fn app_info(&self, device: &DeviceId, app: &AppId) -> Result<AppInfo>;

    /// The app's lines matching `query`, oldest first, at most `query.count` (the newest).
    async fn app_logs(&self, device: &DeviceId, app: &AppId, query: &LogQuery)
    -> Result<LogResult>;

    /// The app's crash reports since `since`, newest first, at most `limit`.
    async fn app_crashes(
        &self,
        device: &DeviceId,
        app: &AppId,
        since: OffsetDateTime,
        limit: usize,
    ) -> Result<Vec<CrashReport>>;

    /// The app's crash reports as [`AppLogger::app_crashes`] finds them, with how many were left
    /// out because their owner could not be confirmed. The default confirms every report it
    /// returns; a backend that can be unsure (Android 10's drop box) overrides it, and its
    /// `app_crashes` returns the same reports.
    async fn app_crash_result(
        &self,
        device: &DeviceId,
        app: &AppId,
        since: OffsetDateTime,
        limit: usize,
    ) -> Result<CrashResult> {
        Ok(CrashResult {
            reports: self.app_crashes(device, app, since, limit).await?,
            unconfirmed: 0,
        })
    }

    /// Whether the app is a development build (Android `DEBUGGABLE`, iOS `get-task-allow`).
    async fn dev_build(&self, device: &DeviceId, app: &AppId) -> Result<bool>;

    /// A stream of the app's lines matching `query` (its count aside) from `query.since` on:
    /// what is there, then each new line as the phone logs it, until the stream is dropped.
    /// The default is [`Error::Unsupported`]; the layers above then read again at an interval.
    async fn follow_app_logs(
        &self,
        device: &DeviceId,
        app: &AppId,
        query: &LogQuery,
    ) -> Result<Box<dyn LineStream>> {
        let _ = (device, app, query);
        Err(Error::Unsupported("following an app's lines".into()))
    }

    /// This driver as a [`LogListener`], when it listens for lines and must be told to stop.
    fn listener(&self) -> Option<&dyn LogListener> {
        None
    }

    /// This driver as an [`AppDebugger`], when it serves the debugging aids.
    fn debugger(&self) -> Option<&dyn AppDebugger> {
        None
    }

    /// This driver as a [`ConfirmingReader`], when its reads confirm, in their own round trip,
    /// the facts a call was decided on. `None` by default: the caller then decides on a fresh
    /// [`AppLogger::app_info`] and reads after it, two steps.
    fn confirming_reader(&self) -> Option<&dyn ConfirmingReader> {
        None
    }
}

/// A driver whose reads confirm the app's facts in the same round trip as what they read
/// (Android: `pm list packages -U` and `dumpsys package` in the shell of the logcat dump), so a
/// caller may decide on the facts the driver holds from its last round trip and read in one.
///
/// The contract: [`ConfirmingReader::held_app_info`] costs no device call, and both reads fail
/// with [`Error::Changed`], returning nothing they read, when their round trip finds the app
/// not as `expected` describes it ([`AppInfo::same_facts`]: another uid, a development build
/// flag, system flag, shared uid or version that differs, or no package at all). The caller
/// then looks the app up again and decides again. A driver that cannot see the facts in the
/// round trip of its read (the iPhone's follower reads from memory; the fake phone) does not
/// implement it, and is read in two steps.
#[async_trait]
pub trait ConfirmingReader: Send + Sync {
    /// What the driver's last round trip with `device` said about `app`, without asking the
    /// phone; `None` when it holds nothing (never looked up, or forgotten). It may be stale:
    /// decide on it only what a read confirming it may then show, and read fresh before a
    /// refusal or a question.
    fn held_app_info(&self, device: &DeviceId, app: &AppId) -> Option<AppInfo>;

    /// [`AppLogger::app_logs`] of `expected.app`, confirming `expected` in the same round trip:
    /// [`Error::Changed`] when the phone says otherwise.
    async fn confirmed_app_logs(
        &self,
        device: &DeviceId,
        expected: &AppInfo,
        query: &LogQuery,
    ) -> Result<LogResult>;

    /// [`AppLogger::app_crash_result`] of `expected.app`, confirming `expected` in the same round
    /// trip: [`Error::Changed`] when the phone says otherwise.
    async fn confirmed_app_crash_result(
        &self,
        device: &DeviceId,
        expected: &AppInfo,
        since: OffsetDateTime,
        limit: usize,
    ) -> Result<CrashResult>;
}

/// A driver that listens for an app's lines (the iPhone's follower) until told to stop.
#[async_trait]
pub trait LogListener: Send + Sync {
    /// Stops listening for `app` on `device` and drops the lines kept for it. Stopping an app that
    /// is not being listened to is not an error.
    async fn stop_app_logs(&self, device: &DeviceId, app: &AppId) -> Result<()>;
}

/// The six Android debugging aids of `debugging_tools.txt`. Each defaults to
/// [`Error::Unsupported`], so a backend implements what its platform has.
#[async_trait]
pub trait AppDebugger: Send + Sync {
    /// `dumpsys activity exit-info <package>`, newest first. An unknown package or one with no
    /// history is an empty list.
    async fn process_exit_history(
        &self,
        device: &DeviceId,
        package: &AppId,
    ) -> Result<ProcessExitHistory> {
        let _ = (device, package);
        Err(Error::Unsupported("process exit history".into()))
    }

    /// `am set-debug-app [-w] [--persistent] <package>`.
    async fn set_debug_app(
        &self,
        device: &DeviceId,
        package: &AppId,
        wait_for_debugger: bool,
        persistent: bool,
    ) -> Result<SetDebugAppResult> {
        let _ = (device, package, wait_for_debugger, persistent);
        Err(Error::Unsupported("set debug app".into()))
    }

    /// `am clear-debug-app`; idempotent.
    async fn clear_debug_app(&self, device: &DeviceId) -> Result<ClearDebugAppResult> {
        let _ = device;
        Err(Error::Unsupported("clear debug app".into()))
    }

    /// A snapshot of `adb jdwp`: the pids with a JDWP transport open.
    async fn jdwp_processes(&self, device: &DeviceId) -> Result<JdwpProcessList> {
        let _ = device;
        Err(Error::Unsupported("list JDWP processes".into()))
    }

    /// Who `pid` belongs to: its uid, the packages with that uid and its process name, read
    /// without pausing or signalling it, so the policy is checked before `debuggerd` runs.
    /// A non-positive pid is [`Error::InvalidArgument`]; a pid with no process is an error
    /// (a backend error saying "no such process").
    async fn process_owner(&self, device: &DeviceId, pid: i64) -> Result<ProcessOwner> {
        let _ = (device, pid);
        Err(Error::Unsupported("process owner".into()))
    }

    /// The owners of several pids at once (for naming a JDWP listing): the pids that resolve,
    /// in the order given; a pid with no process (or a non-positive one) is left out. The
    /// default asks [`AppDebugger::process_owner`] for each; a backend may do it in one round
    /// trip.
    async fn process_owners(&self, device: &DeviceId, pids: &[i64]) -> Result<Vec<ProcessOwner>> {
        let mut owners = Vec::new();
        for &pid in pids {
            match self.process_owner(device, pid).await {
                Ok(owner) => owners.push(owner),
                Err(error)
                    if matches!(
                        error.kind(),
                        ErrorKind::Backend | ErrorKind::InvalidArgument | ErrorKind::NotFound
                    ) => {}
                Err(error) => return Err(error),
            }
        }
        Ok(owners)
    }

    /// `debuggerd -b <pid>`, parsed. A non-positive pid is [`Error::InvalidArgument`].
    async fn native_backtrace(&self, device: &DeviceId, pid: i64) -> Result<NativeBacktrace> {
        let _ = (device, pid);
        Err(Error::Unsupported("native backtrace".into()))
    }

    /// `debuggerd <pid>`: the tombstone's header and bytes, for the gateway to write.
    async fn native_tombstone(&self, device: &DeviceId, pid: i64) -> Result<TombstoneCapture> {
        let _ = (device, pid);
        Err(Error::Unsupported("native tombstone".into()))
    }
}

/// Checks a pid argument as the debugging aids require: positive, or [`Error::InvalidArgument`]
/// before anything runs.
pub fn check_pid(pid: i64) -> Result<u32> {
    if pid <= 0 {
        return Err(Error::InvalidArgument(format!(
            "pid must be a positive integer, got {pid}"
        )));
    }
    u32::try_from(pid)
        .map_err(|_| Error::InvalidArgument(format!("pid {pid} is larger than any process id")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_ordered_by_severity() {
        for pair in LogLevel::ALL.windows(2) {
            assert!(pair[0] < pair[1]);
        }
        assert_eq!(LogLevel::from_android_char(b'A'), Some(LogLevel::Fatal));
        assert_eq!(LogLevel::from_android_char(b'x'), None);
        for level in LogLevel::ALL {
            assert_eq!(LogLevel::from_name(level.name()), Some(level));
            assert_eq!(
                LogLevel::from_android_char(level.android_char() as u8),
                Some(level)
            );
        }
    }

    #[test]
    fn ios_levels_map_as_the_spec_says() {
        assert_eq!(LogLevel::from_os_log_type(0x00), LogLevel::Info);
        assert_eq!(LogLevel::from_os_log_type(0x01), LogLevel::Info);
        assert_eq!(LogLevel::from_os_log_type(0x02), LogLevel::Debug);
        assert_eq!(LogLevel::from_os_log_type(0x10), LogLevel::Error);
        assert_eq!(LogLevel::from_os_log_type(0x11), LogLevel::Fatal);
    }

    #[test]
    fn app_ids_reject_what_cannot_be_a_package() {
        for bad in ["", " ", "a b", "a;b", "a'b", "$(x)", "a\nb", "a/b", "a\0b"] {
            assert!(AppId::parse(bad).is_err(), "{bad:?} should be refused");
        }
        assert!(AppId::parse(&"a".repeat(256)).is_err());
        assert!(AppId::parse("com.example.app").is_ok());
        assert!(AppId::parse("com.apple.WebDriverAgentRunner.xctrunner").is_ok());
    }

    #[test]
    fn pids_must_be_positive() {
        assert!(check_pid(0).is_err());
        assert!(check_pid(-5).is_err());
        assert!(check_pid(i64::MAX).is_err());
        assert_eq!(check_pid(1224).ok(), Some(1224));
    }

    #[test]
    fn crash_kinds_serialize_with_the_spec_names() {
        for (kind, name) in [
            (CrashKind::JavaCrash, "java_crash"),
            (CrashKind::NativeCrash, "native_crash"),
            (CrashKind::Anr, "anr"),
            (CrashKind::Crash, "crash"),
            (CrashKind::Watchdog, "watchdog"),
        ] {
            assert_eq!(kind.name(), name);
        }
    }
}
