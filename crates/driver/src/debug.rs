//! The result types of the six Android debugging aids, with exactly the fields of
//! `debugging_tools.txt`.

use serde::{Deserialize, Serialize};

/// One record of ActivityManager's ApplicationExitInfo ring (`dumpsys activity exit-info`, read by
/// `phonelogs_crash::exitinfo`), with exactly the fields of `get_process_exit_history`. Fields
/// the record does not carry are `None` (JSON `null`). Numbers are Android's `int`s (a uid or a
/// pid unsigned), widened to `i64`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExitRecord {
    /// `timestamp=`, as printed: the phone's local time, `yyyy-MM-dd HH:mm:ss.SSS`.
    pub timestamp: Option<String>,
    /// `pid=`.
    pub pid: Option<i64>,
    /// `realUid=`.
    pub real_uid: Option<i64>,
    /// `user=`.
    pub user: Option<i64>,
    /// `process=`.
    pub process: Option<String>,
    /// The number of `reason=N (LABEL)`.
    pub reason_code: Option<i64>,
    /// The label of `reason=N (LABEL)`, e.g. `APP CRASH(EXCEPTION)`.
    pub reason: Option<String>,
    /// The number of `subreason=N (LABEL)`.
    pub subreason_code: Option<i64>,
    /// The label of `subreason=N (LABEL)`, e.g. `FORCE STOP`.
    pub subreason: Option<String>,
    /// `status=` (the exit status, or the signal for a native crash).
    pub status: Option<i64>,
    /// `importance=`.
    pub importance: Option<i64>,
    /// `pss=`, the raw string (`0.00`, `221MB`, locale-formatted such as `0,00`).
    pub pss: Option<String>,
    /// `rss=`, the raw string.
    pub rss: Option<String>,
    /// `state=` (`empty` or `N bytes`).
    pub state: Option<String>,
    /// `description=`, free text that may hold spaces.
    pub description: Option<String>,
    /// Whether `trace=` names a file (it is `null` when no trace was kept).
    pub trace_available: bool,
    /// Whether the record is an ANR (`reason=6`) with a trace: the ANR's traces can be read.
    pub has_anr_info: bool,
}

/// The result of `get_process_exit_history`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessExitHistory {
    /// The device's serial.
    pub serial: String,
    /// The package looked up.
    pub package: String,
    /// How many records.
    pub count: usize,
    /// The records, newest first.
    pub records: Vec<ExitRecord>,
    /// Records of the package the phone printed but that were left out because they are not
    /// the app's own uid: another user's copy (an app clone, a work profile), or a record whose
    /// owner the dump does not say. Only the count is kept, never what they held.
    #[serde(default)]
    pub left_out_other_users: usize,
}

/// The result of `set_debug_app`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetDebugAppResult {
    /// The device's serial.
    pub serial: String,
    /// The package marked.
    pub package: String,
    /// Whether `-w` was applied.
    pub wait_for_debugger: bool,
    /// Whether `--persistent` was applied.
    pub persistent: bool,
}

/// The result of `clear_debug_app`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClearDebugAppResult {
    /// The device's serial.
    pub serial: String,
    /// Always true on success (it does not imply that a debug app had been set).
    pub cleared: bool,
}

/// The result of `list_jdwp_processes`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JdwpProcessList {
    /// The device's serial.
    pub serial: String,
    /// How many pids.
    pub count: usize,
    /// The pids, deduplicated, in first-seen order.
    pub pids: Vec<i64>,
}

/// One thread of a native backtrace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadSummary {
    /// The thread's name.
    pub name: String,
    /// Its kernel thread id.
    pub sys_tid: i64,
    /// How many frames its backtrace has.
    pub frame_count: usize,
}

/// The result of `capture_native_backtrace`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NativeBacktrace {
    /// The device's serial.
    pub serial: String,
    /// The process backtraced.
    pub pid: i64,
    /// The process name from the dump header.
    pub process_name: Option<String>,
    /// The ABI from the dump header.
    pub abi: Option<String>,
    /// How many threads.
    pub thread_count: usize,
    /// Each thread's name, tid and frame count.
    pub threads: Vec<ThreadSummary>,
    /// The full dump, truncated if very large.
    pub text: String,
    /// The pid the dump's own `----- pid N at … -----` line names. Not one of the spec's
    /// fields (never serialized): the gateway compares it with the pid whose owner it judged,
    /// so a pid reused in between is caught.
    #[serde(skip)]
    pub dumped_pid: Option<i64>,
    /// The uid the dumped process ran as, read by the driver in the same round trip right
    /// after the dump (a backtrace does not print it). Never serialized, compared like
    /// `dumped_pid`: it tells the app from its clone in another user, which has the same name.
    #[serde(skip)]
    pub dumped_uid: Option<u32>,
}

/// What a driver returns for `capture_native_tombstone`: the parsed header and the tombstone's
/// bytes. The gateway writes the bytes under the local root and answers with a
/// [`NativeTombstone`], which never carries them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TombstoneCapture {
    /// The device's serial.
    pub serial: String,
    /// The process dumped.
    pub pid: i64,
    /// The process name from the header.
    pub process_name: Option<String>,
    /// The ABI from the header.
    pub abi: Option<String>,
    /// The signal line from the header.
    pub signal: Option<String>,
    /// The "N total frames" value.
    pub frame_count: Option<usize>,
    /// The `tombstone_NN.pb` file the dump names on the device, if any.
    pub device_tombstone_ref: Option<String>,
    /// The tombstone's text, as the device printed it.
    pub bytes: Vec<u8>,
    /// The pid of the header's `pid: N, tid: N, name: …` line: the gateway compares it with
    /// the pid whose owner it judged.
    pub dumped_pid: Option<i64>,
    /// The header's `uid: N`: the gateway compares it with the owner's uid, which tells the
    /// app from its clone in another user.
    pub dumped_uid: Option<u32>,
}

/// The result of `capture_native_tombstone`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NativeTombstone {
    /// The device's serial.
    pub serial: String,
    /// The process dumped.
    pub pid: i64,
    /// The process name from the header.
    pub process_name: Option<String>,
    /// The ABI from the header.
    pub abi: Option<String>,
    /// The signal line from the header.
    pub signal: Option<String>,
    /// The "N total frames" value.
    pub frame_count: Option<usize>,
    /// The `tombstone_NN.pb` file the dump names on the device, if any.
    pub device_tombstone_ref: Option<String>,
    /// The absolute host path written.
    pub local_path: String,
    /// How many bytes were written.
    pub size_bytes: u64,
    /// Always true on success.
    pub success: bool,
}

/// Who a process belongs to, read before anything pauses it: the uid it runs as, the packages
/// that share that uid, and its process name (`/proc/<pid>/cmdline`).
///
/// This is not one of the spec's results: the gateway uses it to check the policy for a pid
/// before `debuggerd` runs, and never returns it to the agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessOwner {
    /// The pid looked up.
    pub pid: i64,
    /// The uid the process runs as (for Android: `user * 100000 + app id`).
    pub uid: u32,
    /// The installed packages with that uid: none for the system's own uids and isolated
    /// processes, several for packages that share a uid.
    pub packages: Vec<crate::AppId>,
    /// The process name, when the device told it (`package` or `package:process`).
    pub process_name: Option<String>,
}

impl ProcessOwner {
    /// The app id part of the uid (`uid % 100000`): below 10000 is one of the system's own uids.
    pub fn app_id(&self) -> u32 {
        self.uid % 100_000
    }

    /// Whether the process runs as one of the system's own uids (root, system, phone, …).
    pub fn is_system_uid(&self) -> bool {
        self.app_id() < 10_000
    }
}
