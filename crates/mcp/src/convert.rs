//! The one conversion between the MCP tools' shapes (`args`, `output`: the schemas an agent
//! reads) and the gateway's request and answer (`phonelogs_view`'s types, re-exported by the
//! gateway): each field is copied here and nowhere else.

use phonelogs_gateway::{
    Answer, DebugRequest, DebugResponse, DebugStatus, ErrorCode, LogsKind, LogsRequest,
    LogsResponse, Status, TextShown,
};

use crate::args::{DebugCall, Kind, PhoneLogsArgs};
use crate::ask::Decision;
use crate::output::{
    DebugEnvelope, DebugErrorOut, DebugStatusOut, ErrorCodeOut, LogsErrorCode, LogsStatus,
    OccurrencesOut, PhoneLogsOutput, ReportHeading, TextShownOut,
};

/// A `phone_logs` call's arguments as the gateway's request.
pub fn logs_request(args: &PhoneLogsArgs) -> LogsRequest {
    LogsRequest {
        app: args.app.clone(),
        device: args.device.clone(),
        kind: match args.kind.unwrap_or_default() {
            Kind::Logs => LogsKind::Logs,
            Kind::Crashes => LogsKind::Crashes,
        },
        since: args.since.clone(),
        filter: args.filter.clone(),
        exclude: args.exclude.clone(),
        tag: args.tag.clone(),
        fold: args.fold,
        level: args.level.clone(),
        limit: args.limit,
        approval_id: args.approval_id.clone(),
        wait_for: args.wait_for.clone(),
        timeout: args.timeout,
        context: args.context,
    }
}

/// The arguments a sealed state of a `phone_logs` call is bound to: the request as the gateway
/// reads it, without `approval_id`.
pub fn logs_arguments(args: &PhoneLogsArgs) -> serde_json::Value {
    let mut value = serde_json::to_value(logs_request(args)).unwrap_or(serde_json::Value::Null);
    if let Some(object) = value.as_object_mut() {
        object.remove("approval_id");
    }
    value
}

/// The gateway's answer as the tool's structured result. The gateway's log, message and counts
/// pass through as they are: the headings are the only thing taken from the typed reports, and
/// the typed lines and report texts are not repeated (they are in the log).
pub fn logs_output(response: LogsResponse) -> PhoneLogsOutput {
    PhoneLogsOutput {
        status: logs_status(response.status),
        message: response.message,
        approval_id: response.approval_id,
        rule: response.rule,
        log: response.log,
        shown: response.shown,
        left_out: response.left_out,
        cut: response.cut,
        folded: response.folded,
        masked: response.masked,
        error_code: response.error_code.map(|code| match code {
            phonelogs_gateway::LogsErrorCode::InvalidArgument => LogsErrorCode::InvalidArgument,
        }),
        cursor: response.cursor,
        matched: response.matched,
        reports: response
            .reports
            .into_iter()
            .map(|r| ReportHeading {
                kind: r.kind,
                time: r.time,
                pid: r.pid,
                process: r.process,
                summary: r.summary,
                text_shown: match r.text_shown {
                    TextShown::Whole => TextShownOut::Whole,
                    TextShown::Cut => TextShownOut::Cut,
                    TextShown::FirstLine => TextShownOut::FirstLine,
                },
                fingerprint: r.fingerprint,
                blamed_frame: r.blamed_frame,
                occurrences: r.occurrences.map(|o| OccurrencesOut {
                    count: o.count,
                    first: o.first,
                    last: o.last,
                    pids: o.pids,
                }),
                symbols: r.symbols,
            })
            .collect(),
    }
}

fn logs_status(status: Status) -> LogsStatus {
    match status {
        Status::Ok => LogsStatus::Ok,
        Status::ApprovalPending => LogsStatus::ApprovalPending,
        Status::Denied => LogsStatus::Denied,
        Status::ScopeDenied => LogsStatus::ScopeDenied,
        Status::BlockedByPolicy => LogsStatus::BlockedByPolicy,
        Status::Unsupported => LogsStatus::Unsupported,
        Status::Error => LogsStatus::Error,
    }
}

/// The person's decision in the client's dialog as the gateway's answer.
pub fn answer(decision: Decision) -> Answer {
    match decision {
        Decision::Once => Answer::Once,
        Decision::Task => Answer::Task,
        Decision::Always => Answer::Always,
        Decision::Deny => Answer::Deny,
    }
}

/// A phone's state as `list_devices` words it.
pub fn device_state(state: &phonelogs_driver::DeviceState) -> String {
    use phonelogs_driver::DeviceState;
    match state {
        DeviceState::Online => "online".into(),
        DeviceState::Offline => "offline".into(),
        DeviceState::Unauthorized => "unauthorized".into(),
        DeviceState::NotPaired => "not_paired".into(),
        DeviceState::Locked => "locked".into(),
        DeviceState::Other(other) => other.clone(),
    }
}

/// A debugging aid's arguments as the gateway's request.
pub fn debug_request(call: &DebugCall) -> DebugRequest {
    match call.clone() {
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
