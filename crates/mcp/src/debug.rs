//! The six debugging aids: turning each tool's arguments into the gateway's request, and its
//! answer into the `{status, message, data, error}` envelope.

use phonelogs_gateway::{DebugRequest, DebugResponse, DebugStatus, ErrorCode, Session};

use crate::args::{BacktraceArgs, ExitHistoryArgs, SerialArgs, SetDebugAppArgs, TombstoneArgs};
use crate::output::{DebugEnvelope, DebugErrorOut, DebugStatusOut, ErrorCodeOut};

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

impl DebugCall {
    /// The gateway's request for this call.
    pub fn request(&self) -> DebugRequest {
        match self.clone() {
            DebugCall::ExitHistory(a) => DebugRequest::GetProcessExitHistory {
                serial: a.serial,
                package: a.package,
                approval_id: a.approval_id,
            },
            DebugCall::SetDebugApp(a) => DebugRequest::SetDebugApp {
                serial: a.serial,
                package: a.package,
                wait_for_debugger: a.wait_for_debugger,
                persistent: a.persistent,
                approval_id: a.approval_id,
            },
            DebugCall::ClearDebugApp(a) => DebugRequest::ClearDebugApp { serial: a.serial },
            DebugCall::JdwpProcesses(a) => DebugRequest::ListJdwpProcesses { serial: a.serial },
            DebugCall::Backtrace(a) => DebugRequest::CaptureNativeBacktrace {
                serial: a.serial,
                pid: a.pid,
                approval_id: a.approval_id,
            },
            DebugCall::Tombstone(a) => DebugRequest::CaptureNativeTombstone {
                serial: a.serial,
                pid: a.pid,
                local_path: a.local_path,
                approval_id: a.approval_id,
            },
        }
    }

    /// The arguments a sealed state is bound to (everything but `approval_id`).
    pub fn arguments(&self) -> serde_json::Value {
        let mut value = serde_json::to_value(self.request()).unwrap_or(serde_json::Value::Null);
        if let Some(object) = value.as_object_mut() {
            object.remove("approval_id");
        }
        value
    }

    /// Picks up `approval_id` on the next run (the aids that never ask ignore it).
    pub fn set_approval_id(&mut self, approval_id: String) {
        match self {
            DebugCall::ExitHistory(a) => a.approval_id = Some(approval_id),
            DebugCall::SetDebugApp(a) => a.approval_id = Some(approval_id),
            DebugCall::Backtrace(a) => a.approval_id = Some(approval_id),
            DebugCall::Tombstone(a) => a.approval_id = Some(approval_id),
            DebugCall::ClearDebugApp(_) | DebugCall::JdwpProcesses(_) => {}
        }
    }

    /// What the call is about, for a fallback question.
    pub fn subject(&self) -> String {
        match self {
            DebugCall::ExitHistory(a) => a.package.clone(),
            DebugCall::SetDebugApp(a) => a.package.clone(),
            DebugCall::Backtrace(a) => format!("process {}", a.pid),
            DebugCall::Tombstone(a) => format!("process {}", a.pid),
            DebugCall::ClearDebugApp(a) | DebugCall::JdwpProcesses(a) => a.serial.clone(),
        }
    }
}

/// Runs the call through the gateway (which checks the policy) and wraps its answer.
pub async fn run(session: &Session, call: &DebugCall) -> DebugEnvelope {
    envelope(session.debug(call.request()).await)
}

/// The gateway's answer as the tool's envelope: the one place its typed values become JSON.
pub fn envelope(response: DebugResponse) -> DebugEnvelope {
    DebugEnvelope {
        status: match response.status {
            DebugStatus::Success => DebugStatusOut::Success,
            DebugStatus::ApprovalPending => DebugStatusOut::ApprovalPending,
            DebugStatus::Error => DebugStatusOut::Error,
        },
        message: response.message,
        // Our own plain values always serialize; a failure would show as a null `data`.
        data: response
            .data
            .map(|data| serde_json::to_value(data).unwrap_or(serde_json::Value::Null)),
        error: response.error.map(|e| DebugErrorOut {
            code: error_code(e.code),
            message: e.message,
        }),
    }
}

/// The gateway's error code as the envelope spells it.
pub fn error_code(code: ErrorCode) -> ErrorCodeOut {
    match code {
        ErrorCode::InvalidArgument => ErrorCodeOut::InvalidArgument,
        ErrorCode::DeviceNotFound => ErrorCodeOut::DeviceNotFound,
        ErrorCode::AdbUnavailable => ErrorCodeOut::AdbUnavailable,
        ErrorCode::PermissionDenied => ErrorCodeOut::PermissionDenied,
        ErrorCode::PolicyDenied => ErrorCodeOut::PolicyDenied,
        ErrorCode::BackendError => ErrorCodeOut::BackendError,
    }
}

/// The approval to ask about, when the envelope is `approval_pending`.
pub fn pending_approval_id(envelope: &DebugEnvelope) -> Option<String> {
    if envelope.status != DebugStatusOut::ApprovalPending {
        return None;
    }
    envelope
        .data
        .as_ref()
        .and_then(|d| d.get("approval_id"))
        .and_then(|v| v.as_str())
        .map(str::to_owned)
}

/// The envelope for an echoed state that failed verification.
pub fn refused_state(message: &str) -> DebugEnvelope {
    DebugEnvelope {
        status: DebugStatusOut::Error,
        message: format!(
            "The echoed request state was refused ({message}); call again without it."
        ),
        data: None,
        error: Some(DebugErrorOut {
            code: ErrorCodeOut::InvalidArgument,
            message: message.to_owned(),
        }),
    }
}
