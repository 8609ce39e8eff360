//! The debugging aids' requests and answers as plain Rust values: the spec's parameters, its
//! `{status, message, data, error}` envelope with typed `data`, and its error codes. The MCP
//! frontend turns them into JSON; the gateway fills them and knows no wire format.

use phonelogs_driver::{
    ClearDebugAppResult, ErrorKind, NativeBacktrace, NativeTombstone, ProcessExitHistory,
    SetDebugAppResult,
};
use serde::{Deserialize, Serialize};

use crate::types::{LogsResponse, Status};

/// One call of a debugging aid, with the spec's parameter names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "tool", rename_all = "snake_case")]
pub enum DebugRequest {
    /// `get_process_exit_history`.
    GetProcessExitHistory {
        /// The device's adb serial.
        serial: String,
        /// The package.
        package: String,
        /// The approval this call picks up.
        #[serde(default)]
        approval_id: Option<String>,
    },
    /// `set_debug_app`.
    SetDebugApp {
        /// The device's adb serial.
        serial: String,
        /// The package.
        package: String,
        /// `-w`.
        #[serde(default)]
        wait_for_debugger: bool,
        /// `--persistent`.
        #[serde(default)]
        persistent: bool,
        /// The approval this call picks up.
        #[serde(default)]
        approval_id: Option<String>,
    },
    /// `clear_debug_app`.
    ClearDebugApp {
        /// The device's adb serial.
        serial: String,
    },
    /// `list_jdwp_processes`.
    ListJdwpProcesses {
        /// The device's adb serial.
        serial: String,
    },
    /// `capture_native_backtrace`.
    CaptureNativeBacktrace {
        /// The device's adb serial.
        serial: String,
        /// The process id.
        pid: i64,
        /// The approval this call picks up.
        #[serde(default)]
        approval_id: Option<String>,
    },
    /// `capture_native_tombstone`.
    CaptureNativeTombstone {
        /// The device's adb serial.
        serial: String,
        /// The process id.
        pid: i64,
        /// Where to save it, relative to `<local_root>/tombstones/`.
        local_path: String,
        /// The approval this call picks up.
        #[serde(default)]
        approval_id: Option<String>,
    },
}

impl DebugRequest {
    /// The tool's name, as the spec spells it.
    pub fn tool(&self) -> &'static str {
        match self {
            DebugRequest::GetProcessExitHistory { .. } => "get_process_exit_history",
            DebugRequest::SetDebugApp { .. } => "set_debug_app",
            DebugRequest::ClearDebugApp { .. } => "clear_debug_app",
            DebugRequest::ListJdwpProcesses { .. } => "list_jdwp_processes",
            DebugRequest::CaptureNativeBacktrace { .. } => "capture_native_backtrace",
            DebugRequest::CaptureNativeTombstone { .. } => "capture_native_tombstone",
        }
    }

    /// The phone the request names.
    pub fn serial(&self) -> &str {
        match self {
            DebugRequest::GetProcessExitHistory { serial, .. }
            | DebugRequest::SetDebugApp { serial, .. }
            | DebugRequest::ClearDebugApp { serial }
            | DebugRequest::ListJdwpProcesses { serial }
            | DebugRequest::CaptureNativeBacktrace { serial, .. }
            | DebugRequest::CaptureNativeTombstone { serial, .. } => serial,
        }
    }
}

/// The envelope's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DebugStatus {
    /// The aid ran; `data` holds its result.
    Success,
    /// The person has not answered yet; `data.approval_id` is the approval to pick up.
    ApprovalPending,
    /// It failed; `error` says why.
    Error,
}

/// The spec's error codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// A bad argument, refused before anything ran.
    InvalidArgument,
    /// No such device.
    DeviceNotFound,
    /// adb (or the device's service) cannot be reached.
    AdbUnavailable,
    /// The device refused.
    PermissionDenied,
    /// phonelogs' policy refused (scope, blocks, local_root).
    PolicyDenied,
    /// Anything else.
    BackendError,
}

impl ErrorCode {
    /// The code as the spec spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidArgument => "INVALID_ARGUMENT",
            ErrorCode::DeviceNotFound => "DEVICE_NOT_FOUND",
            ErrorCode::AdbUnavailable => "ADB_UNAVAILABLE",
            ErrorCode::PermissionDenied => "PERMISSION_DENIED",
            ErrorCode::PolicyDenied => "POLICY_DENIED",
            ErrorCode::BackendError => "BACKEND_ERROR",
        }
    }

    /// The code of a driver error: the one place driver errors become the spec's codes.
    pub fn from_driver(error: &phonelogs_driver::Error) -> ErrorCode {
        match error.kind() {
            ErrorKind::InvalidArgument => ErrorCode::InvalidArgument,
            ErrorKind::DeviceNotFound => ErrorCode::DeviceNotFound,
            ErrorKind::DeviceUnavailable => ErrorCode::AdbUnavailable,
            ErrorKind::PermissionDenied => ErrorCode::PermissionDenied,
            _ => ErrorCode::BackendError,
        }
    }
}

/// The envelope's error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DebugError {
    /// The code.
    pub code: ErrorCode,
    /// What went wrong, for the agent.
    pub message: String,
}

/// A debugging aid's answer: `{status, message, data, error}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DebugResponse {
    /// How it ended.
    pub status: DebugStatus,
    /// One sentence for the agent.
    pub message: String,
    /// The result, or the approval to pick up while pending (boxed: a backtrace is large, and
    /// a failed call carries none).
    pub data: Option<Box<DebugData>>,
    /// The error, when it failed.
    pub error: Option<DebugError>,
}

/// What a debugging aid's answer carries, by tool.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum DebugData {
    /// `get_process_exit_history`.
    ExitHistory(ProcessExitHistory),
    /// `set_debug_app`.
    SetDebugApp(SetDebugAppResult),
    /// `clear_debug_app`.
    ClearDebugApp(ClearDebugAppResult),
    /// `list_jdwp_processes`.
    Jdwp(JdwpListing),
    /// `capture_native_backtrace`.
    Backtrace(BacktraceData),
    /// `capture_native_tombstone`.
    Tombstone(TombstoneData),
    /// A question waiting for the person.
    Pending(PendingData),
}

/// `capture_native_backtrace`'s data: the spec's fields, and whether the text was cut to the
/// result cap.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BacktraceData {
    /// The backtrace, its text within the result cap.
    #[serde(flatten)]
    pub backtrace: NativeBacktrace,
    /// Whether the text was cut (the message says by how much).
    pub text_cut: bool,
    /// What symbols did for the text's frames, in the words of a crash report's heading: the
    /// files used (`library com.example.app/7/native/<build id>/libfoo.so (2 frames)`) or why
    /// none matched; without a symbols directory, `no symbols directory` only where the dump's
    /// frames of the app look unsymbolicated, else left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbols: Option<String>,
}

/// `capture_native_tombstone`'s data: the spec's fields, and what symbols did for the frames of
/// the file written (which holds the phone's lines, each frame followed by its function and
/// `file:line` when a filed library matched).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TombstoneData {
    /// The tombstone's header and where it was written.
    #[serde(flatten)]
    pub tombstone: NativeTombstone,
    /// As [`BacktraceData::symbols`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbols: Option<String>,
}

/// The data of an `approval_pending` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PendingData {
    /// The approval to pass back as `approval_id` once the person has answered.
    pub approval_id: Option<String>,
}

impl DebugResponse {
    /// A success with its message and data.
    pub fn success(message: String, data: DebugData) -> Self {
        DebugResponse {
            status: DebugStatus::Success,
            message,
            data: Some(Box::new(data)),
            error: None,
        }
    }

    /// A failed call.
    pub fn error(code: ErrorCode, message: impl Into<String>) -> Self {
        let message = message.into();
        DebugResponse {
            status: DebugStatus::Error,
            message: message.clone(),
            data: None,
            error: Some(DebugError { code, message }),
        }
    }

    /// The answer for a permission step that stopped the call: the question waiting, or
    /// `POLICY_DENIED` with the refusal's message.
    pub fn from_gate(response: LogsResponse) -> Self {
        match response.status {
            Status::ApprovalPending => DebugResponse {
                status: DebugStatus::ApprovalPending,
                message: response.message,
                data: Some(Box::new(DebugData::Pending(PendingData {
                    approval_id: response.approval_id,
                }))),
                error: None,
            },
            _ => DebugResponse::error(ErrorCode::PolicyDenied, response.message),
        }
    }
}

/// One pid of a JDWP listing named by its package.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JdwpPackage {
    /// The pid.
    pub pid: i64,
    /// The package it belongs to.
    pub package: String,
}

/// `list_jdwp_processes`' data: the spec's `serial`, `count` and `pids`, and `packages`, which
/// names only the pids whose app the agent may see.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JdwpListing {
    /// The device's serial.
    pub serial: String,
    /// How many pids.
    pub count: usize,
    /// The pids, deduplicated, in first-seen order.
    pub pids: Vec<i64>,
    /// The pids whose package the agent may see, with that package.
    pub packages: Vec<JdwpPackage>,
}
