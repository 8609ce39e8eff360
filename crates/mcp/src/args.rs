//! The arguments of every tool, as the agent sends them. Their doc comments become the
//! descriptions in each tool's `inputSchema`, so they are written for an agent to read.

use schemars::JsonSchema;
use serde::Deserialize;

/// What `phone_logs` reads: the app's log lines or its crash reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// The app's own log lines (the default).
    #[default]
    Logs,
    /// The app's crash reports: Java and native crashes and ANRs on Android, `.ips` reports on
    /// an iPhone.
    Crashes,
}

/// The arguments of `phone_logs`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
pub struct PhoneLogsArgs {
    /// The app: an Android package name (`com.example.app`) or an iOS bundle id.
    pub app: String,
    /// The device's serial (Android) or UDID (iPhone). Optional when exactly one device is
    /// connected; `list_devices` names them.
    #[serde(default)]
    pub device: Option<String>,
    /// `logs` (the default) for log lines, `crashes` for crash reports.
    #[serde(default)]
    pub kind: Option<Kind>,
    /// Only what came after this: `last` (after the last line this task was shown of this app
    /// on this phone: the way to read only what is new), `cursor:<value>` (after the last line
    /// of the result that returned `cursor`), an RFC 3339 time, a date and time or a time of day
    /// on the computer's clock, or a duration back such as `10m`, `2h`, `1d`. Default: the start
    /// of this task. `last` and cursors are for kind logs.
    #[serde(default)]
    pub since: Option<String>,
    /// Only lines whose tag or text contains this text, or, written `/…/`, matches this
    /// regular expression (Rust regex syntax, e.g. `/HTTP [45]\d\d/`). Lines only.
    #[serde(default)]
    pub filter: Option<String>,
    /// Leave out the lines this matches: text or `/regex/`, as `filter` (e.g. a noisy tag's
    /// `/^Choreographer$/`). Lines only.
    #[serde(default)]
    pub exclude: Option<String>,
    /// Only lines with one of these tags, exactly (e.g. `["OkHttp", "MyApp"]`). Lines only.
    #[serde(default)]
    pub tag: Option<Vec<String>>,
    /// Fold consecutive repeated lines (same process, level, tag and text) into one row that
    /// says how many and until when: on by default; false shows every line.
    #[serde(default)]
    pub fold: Option<bool>,
    /// Only lines of this level or more severe: verbose, debug, info, warn, error, fatal.
    #[serde(default)]
    pub level: Option<String>,
    /// At most this many lines (default 200, at most 500) or reports (default 3, at most 10).
    #[serde(default)]
    pub limit: Option<u32>,
    /// The `approval_id` an earlier call returned with `approval_pending`, once the person has
    /// answered it.
    #[serde(default)]
    pub approval_id: Option<String>,
    /// Wait until one of the app's lines after `since` contains this text (in its tag or text,
    /// as `filter` matches), and return the lines up to and including it; with kind crashes,
    /// `crash` waits for the app's next crash report. Ends at `timeout` with `matched: false`.
    #[serde(default)]
    pub wait_for: Option<String>,
    /// How long `wait_for` waits, in seconds: 10 by default, 1 to 60.
    #[serde(default)]
    pub timeout: Option<u32>,
    /// Kind crashes only: add under each report the app's own log lines of the same process in
    /// this many seconds before it (1 to 30), within the same size cap.
    #[serde(default)]
    pub context: Option<u32>,
}

/// The arguments of `list_devices` (none).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
pub struct ListDevicesArgs {}

/// The arguments of `get_process_exit_history`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
pub struct ExitHistoryArgs {
    /// The target device's adb serial (see list_devices).
    pub serial: String,
    /// The package to look up, e.g. "com.example.app".
    pub package: String,
    /// The `approval_id` an earlier call returned with `approval_pending`, once answered.
    #[serde(default)]
    pub approval_id: Option<String>,
}

/// The arguments of `set_debug_app`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
pub struct SetDebugAppArgs {
    /// The target device's adb serial (see list_devices).
    pub serial: String,
    /// The package to mark, e.g. "com.example.app".
    pub package: String,
    /// Block the app's next launch until a debugger attaches (`-w`).
    #[serde(default)]
    pub wait_for_debugger: bool,
    /// Keep the setting across reboots (`--persistent`).
    #[serde(default)]
    pub persistent: bool,
    /// The `approval_id` an earlier call returned with `approval_pending`, once answered.
    #[serde(default)]
    pub approval_id: Option<String>,
}

/// The arguments of `clear_debug_app` and `list_jdwp_processes`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
pub struct SerialArgs {
    /// The target device's adb serial (see list_devices).
    pub serial: String,
}

/// The arguments of `capture_native_backtrace`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
pub struct BacktraceArgs {
    /// The target device's adb serial (see list_devices).
    pub serial: String,
    /// The process id to backtrace (a positive integer).
    pub pid: i64,
    /// The `approval_id` an earlier call returned with `approval_pending`, once answered.
    #[serde(default)]
    pub approval_id: Option<String>,
}

/// The arguments of `capture_native_tombstone`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
pub struct TombstoneArgs {
    /// The target device's adb serial (see list_devices).
    pub serial: String,
    /// The process id to dump (a positive integer).
    pub pid: i64,
    /// Destination path relative to the server's local_root `tombstones/` directory, e.g.
    /// "sysui.txt" or "run1/sysui.txt". Must resolve inside local_root.
    pub local_path: String,
    /// The `approval_id` an earlier call returned with `approval_pending`, once answered.
    #[serde(default)]
    pub approval_id: Option<String>,
}

/// One call of a debugging aid, as the agent made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DebugCall {
    /// `get_process_exit_history`.
    ExitHistory(ExitHistoryArgs),
    /// `set_debug_app`.
    SetDebugApp(SetDebugAppArgs),
    /// `clear_debug_app`.
    ClearDebugApp(SerialArgs),
    /// `list_jdwp_processes`.
    JdwpProcesses(SerialArgs),
    /// `capture_native_backtrace`.
    Backtrace(BacktraceArgs),
    /// `capture_native_tombstone`.
    Tombstone(TombstoneArgs),
}
