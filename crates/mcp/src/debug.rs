//! The six debugging aids: turning each tool's arguments into the gateway's request, and its
//! answer into the `{status, message, data, error}` envelope.

use phonelogs_gateway::{DebugRequest, Session};

pub use crate::args::DebugCall;
use crate::output::{DebugEnvelope, DebugErrorOut, DebugStatusOut, ErrorCodeOut};

impl DebugCall {
    /// The gateway's request for this call.
    /// The gateway's request for this call ([`crate::convert::debug_request`]).
    pub fn request(&self) -> DebugRequest {
        crate::convert::debug_request(self)
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
    crate::convert::envelope(session.debug(call.request()).await)
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
