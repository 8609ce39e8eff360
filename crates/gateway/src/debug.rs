//! The six Android debugging aids of `debugging_tools.txt`, under the same permission model as
//! `phone_logs`, answered in the tools' envelope `{status, message, data, error}`.
//!
//! Reading aids (exit history, backtrace, tombstone) act on one app: the app is checked like a
//! `phone_logs` read (scope, blocks, the phone's own apps) and a release build asks the person.
//! `set_debug_app` and `clear_debug_app` change the phone, so only full agents may use them.
//! A tombstone is written under `<local_root>/tombstones/<local_path>` by
//! [`crate::tombstone_file`] (no symlink followed, no file replaced, mode 0600), and a path that
//! could lead out of it is refused before anything runs. A dump whose own pid line, uid or name
//! is not the owner's resolved before the call (a reused pid) is dropped, never returned or
//! written.

use phonelogs_driver::{AppDebugger, AppId, AppInfo, DeviceId, ErrorKind, ProcessOwner, check_pid};
use serde::{Deserialize, Serialize};

use crate::catalog;
use crate::catalog::Subject;
use crate::permission::{Ask, Refusal};
use crate::session::{Gate, Session, Target};
use crate::tombstone_file::{check_destination, check_local_path, write_tombstone};
use crate::types::{LogsResponse, Status, StepArgs};
use phonelogs_policy::Action;

/// One call of a debugging aid, with the spec's parameter names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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

    fn serial(&self) -> &str {
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
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

    fn from_driver(error: &phonelogs_driver::Error) -> ErrorCode {
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DebugError {
    /// The code.
    pub code: ErrorCode,
    /// What went wrong, for the agent.
    pub message: String,
}

/// A debugging aid's answer: `{status, message, data, error}`.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct DebugResponse {
    /// How it ended.
    pub status: DebugStatus,
    /// One sentence for the agent.
    pub message: String,
    /// The result (or `{"approval_id": …}` while pending).
    pub data: Option<serde_json::Value>,
    /// The error, when it failed.
    pub error: Option<DebugError>,
}

impl DebugResponse {
    fn success(message: String, data: impl Serialize) -> Self {
        match serde_json::to_value(data) {
            Ok(data) => DebugResponse {
                status: DebugStatus::Success,
                message,
                data: Some(data),
                error: None,
            },
            Err(error) => DebugResponse::error(
                ErrorCode::BackendError,
                format!("the result could not be encoded: {error}"),
            ),
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

    fn from_gate(response: LogsResponse) -> Self {
        match response.status {
            Status::ApprovalPending => DebugResponse {
                status: DebugStatus::ApprovalPending,
                message: response.message,
                data: Some(serde_json::json!({ "approval_id": response.approval_id })),
                error: None,
            },
            _ => DebugResponse::error(ErrorCode::PolicyDenied, response.message),
        }
    }
}

impl Session {
    /// One call of a debugging aid, policy-checked, recorded in the history without content.
    pub async fn debug(&self, request: DebugRequest) -> DebugResponse {
        let tool = request.tool();
        let subject = match &request {
            DebugRequest::GetProcessExitHistory { package, .. }
            | DebugRequest::SetDebugApp { package, .. } => package.trim().to_owned(),
            DebugRequest::CaptureNativeBacktrace { pid, .. }
            | DebugRequest::CaptureNativeTombstone { pid, .. } => format!("pid {pid}"),
            DebugRequest::ClearDebugApp { serial } | DebugRequest::ListJdwpProcesses { serial } => {
                serial.trim().to_owned()
            }
        };
        let before = self.steps_recorded();
        let response = self.debug_call(request).await;
        // Every call is a history step: a call that failed before any step was written gets one
        // now, naming the tool and what it was aimed at, never what it read.
        if self.steps_recorded() == before {
            let args = StepArgs {
                app: subject.clone(),
                kind: tool.to_owned(),
                ..StepArgs::default()
            };
            let status = match response.status {
                DebugStatus::Success => Status::Ok,
                DebugStatus::ApprovalPending => Status::ApprovalPending,
                DebugStatus::Error => match response.error.as_ref().map(|e| e.code) {
                    Some(ErrorCode::PolicyDenied) => Status::ScopeDenied,
                    _ => Status::Error,
                },
            };
            let step = match status {
                Status::Ok => catalog::step_debug(tool, &subject),
                _ => catalog::step_debug_failed(tool, &subject),
            };
            self.record(&args, None, status, step);
        }
        response
    }

    async fn debug_call(&self, request: DebugRequest) -> DebugResponse {
        let tool = request.tool();
        let mut args = StepArgs {
            kind: tool.to_owned(),
            ..StepArgs::default()
        };
        let serial = request.serial().trim().to_owned();
        if serial.is_empty() {
            return DebugResponse::error(ErrorCode::InvalidArgument, "serial must not be blank");
        }
        match request {
            DebugRequest::GetProcessExitHistory {
                package,
                approval_id,
                ..
            } => {
                let app = match parse_package(&package) {
                    Ok(app) => app,
                    Err(response) => return response,
                };
                args.app = app.to_string();
                let ask = Ask::plain(Action::ExitHistory);
                let target = match self
                    .debug_target(&serial, &app, &ask, approval_id.as_deref(), &args)
                    .await
                {
                    Ok(target) => target,
                    Err(response) => return response,
                };
                let Some(debugger) = self.debugger(target.driver_index) else {
                    return unsupported(tool);
                };
                match debugger.process_exit_history(&target.device, &app).await {
                    Ok(history) => {
                        self.record(
                            &args,
                            Some(&target.device),
                            Status::Ok,
                            catalog::step_debug(tool, &target.label),
                        );
                        let newest = history
                            .records
                            .first()
                            .and_then(|r| Some((r.reason.as_deref()?, r.timestamp.as_deref()?)));
                        let message = catalog::exit_history_message(
                            history.count,
                            &history.package,
                            &history.serial,
                            newest,
                        );
                        DebugResponse::success(message, &history)
                    }
                    Err(error) => self.debug_failed(&args, &target, error),
                }
            }
            DebugRequest::SetDebugApp {
                package,
                wait_for_debugger,
                persistent,
                approval_id,
                ..
            } => {
                let app = match parse_package(&package) {
                    Ok(app) => app,
                    Err(response) => return response,
                };
                args.app = app.to_string();
                let ask = Ask {
                    subject: Subject {
                        device: Some(&serial),
                        ..Subject::default()
                    },
                    ..Ask::plain(Action::SetDebugApp)
                };
                let target = match self
                    .debug_target(&serial, &app, &ask, approval_id.as_deref(), &args)
                    .await
                {
                    Ok(target) => target,
                    Err(response) => return response,
                };
                let Some(debugger) = self.debugger(target.driver_index) else {
                    return unsupported(tool);
                };
                match debugger
                    .set_debug_app(&target.device, &app, wait_for_debugger, persistent)
                    .await
                {
                    Ok(result) => {
                        self.record(
                            &args,
                            Some(&target.device),
                            Status::Ok,
                            catalog::step_debug(tool, &target.label),
                        );
                        let message = catalog::set_debug_app_message(
                            &result.package,
                            &result.serial,
                            result.wait_for_debugger,
                            result.persistent,
                        );
                        DebugResponse::success(message, &result)
                    }
                    Err(error) => self.debug_failed(&args, &target, error),
                }
            }
            DebugRequest::ClearDebugApp { .. } => {
                if !self.spec().agent.may_change_phone() {
                    return DebugResponse::error(
                        ErrorCode::PolicyDenied,
                        catalog::may_not_change_phone(tool),
                    );
                }
                let (index, device) = match self.debug_device(&serial).await {
                    Ok(found) => found,
                    Err(response) => return response,
                };
                let Some(debugger) = self.debugger(index) else {
                    return unsupported(tool);
                };
                match debugger.clear_debug_app(&device).await {
                    Ok(result) => {
                        self.record(
                            &args,
                            Some(&device),
                            Status::Ok,
                            catalog::step_debug(tool, device.as_str()),
                        );
                        DebugResponse::success(
                            catalog::clear_debug_app_message(&result.serial),
                            &result,
                        )
                    }
                    Err(error) => {
                        DebugResponse::error(ErrorCode::from_driver(&error), error.to_string())
                    }
                }
            }
            DebugRequest::ListJdwpProcesses { .. } => {
                if self.spec().agent.mode == phonelogs_policy::Mode::WatchOnly {
                    return DebugResponse::error(
                        ErrorCode::PolicyDenied,
                        catalog::scope_message(phonelogs_policy::ScopeReason::WatchOnly, "any app"),
                    );
                }
                let (index, device) = match self.debug_device(&serial).await {
                    Ok(found) => found,
                    Err(response) => return response,
                };
                let Some(debugger) = self.debugger(index) else {
                    return unsupported(tool);
                };
                match debugger.jdwp_processes(&device).await {
                    Ok(result) => {
                        let packages = self.visible_packages(index, &device, &result.pids).await;
                        self.record(
                            &args,
                            Some(&device),
                            Status::Ok,
                            catalog::step_debug(tool, device.as_str()),
                        );
                        let listing = JdwpListing {
                            serial: result.serial,
                            count: result.count,
                            pids: result.pids,
                            packages,
                        };
                        DebugResponse::success(
                            catalog::jdwp_message(&listing.pids, &listing.serial),
                            &listing,
                        )
                    }
                    Err(error) => {
                        DebugResponse::error(ErrorCode::from_driver(&error), error.to_string())
                    }
                }
            }
            DebugRequest::CaptureNativeBacktrace {
                pid, approval_id, ..
            } => {
                if let Err(error) = check_pid(pid) {
                    return DebugResponse::error(ErrorCode::InvalidArgument, error.to_string());
                }
                // The mode first, then the pid is resolved to its app and the policy asked, all
                // before debuggerd runs.
                let subject = format!("pid {pid}");
                if let Some(response) = self.check_mode(Action::Backtrace, &subject, &args) {
                    return DebugResponse::from_gate(response);
                }
                let ask = Ask {
                    detail: subject,
                    subject: Subject {
                        pid: Some(pid),
                        ..Subject::default()
                    },
                    ..Ask::plain(Action::Backtrace)
                };
                let (debugger, device, target, owner) = match self
                    .debug_pid(&serial, pid, &ask, approval_id.as_deref(), &mut args)
                    .await
                {
                    Ok(found) => found,
                    Err(response) => return response,
                };
                let mut backtrace = match debugger.native_backtrace(&device, pid).await {
                    Ok(backtrace) => backtrace,
                    Err(error) => return self.debug_failed(&args, &target, error),
                };
                if let Some(refused) = self.pid_reused(
                    &args,
                    &target,
                    &owner,
                    pid,
                    &Dumped::of_backtrace(&backtrace),
                ) {
                    return refused;
                }
                self.record(
                    &args,
                    Some(&target.device),
                    Status::Ok,
                    catalog::step_debug(tool, &target.label),
                );
                // The one cut of this result: the text to the gateway's cap, said in the message
                // and in `text_cut`, so nothing after the gateway shortens it again.
                let cut =
                    crate::render::cap_backtrace_text(&mut backtrace, self.gateway().result_cap());
                let mut response =
                    DebugResponse::success(catalog::backtrace_message(cut), &backtrace);
                if let Some(serde_json::Value::Object(data)) = response.data.as_mut() {
                    data.insert("text_cut".into(), cut.is_some().into());
                }
                response
            }
            DebugRequest::CaptureNativeTombstone {
                pid,
                local_path,
                approval_id,
                ..
            } => {
                if let Err(error) = check_pid(pid) {
                    return DebugResponse::error(ErrorCode::InvalidArgument, error.to_string());
                }
                // A tombstone is a write (the spec's "Categorized write"): refused to read-only
                // and watch-only agents before anything else is looked at.
                if let Some(response) =
                    self.check_mode(Action::Tombstone, &format!("pid {pid}"), &args)
                {
                    return DebugResponse::from_gate(response);
                }
                let Some(root) = self.gateway().inner.local_root.clone() else {
                    return DebugResponse::error(ErrorCode::PolicyDenied, catalog::no_local_root());
                };
                let relative = match check_local_path(&local_path) {
                    Ok(relative) => relative,
                    Err(why) => {
                        return DebugResponse::error(
                            ErrorCode::PolicyDenied,
                            catalog::bad_local_path(&local_path, &why),
                        );
                    }
                };
                // What is already on disk is checked too (a symlink leading out, a directory
                // under the name), without creating anything, so a refused path never pauses
                // the process.
                if let Err((code, why)) = check_destination(&root, &relative) {
                    return DebugResponse::error(code, catalog::bad_local_path(&local_path, &why));
                }
                let shown_path = root.join("tombstones").join(&relative);
                let shown_path = shown_path.display().to_string();
                let ask = Ask {
                    detail: format!("pid {pid} to {}", relative.display()),
                    subject: Subject {
                        pid: Some(pid),
                        path: Some(&shown_path),
                        ..Subject::default()
                    },
                    ..Ask::plain(Action::Tombstone)
                };
                let (debugger, device, target, owner) = match self
                    .debug_pid(&serial, pid, &ask, approval_id.as_deref(), &mut args)
                    .await
                {
                    Ok(found) => found,
                    Err(response) => return response,
                };
                let capture = match debugger.native_tombstone(&device, pid).await {
                    Ok(capture) => capture,
                    Err(error) => return self.debug_failed(&args, &target, error),
                };
                if let Some(refused) =
                    self.pid_reused(&args, &target, &owner, pid, &Dumped::of_tombstone(&capture))
                {
                    return refused;
                }
                let written = match write_tombstone(&root, &relative, &capture.bytes) {
                    Ok(path) => path,
                    Err((code, why)) => {
                        self.record(
                            &args,
                            Some(&target.device),
                            Status::Error,
                            catalog::step_failed(&target.label),
                        );
                        return DebugResponse::error(
                            code,
                            catalog::bad_local_path(&local_path, &why),
                        );
                    }
                };
                self.record(
                    &args,
                    Some(&target.device),
                    Status::Ok,
                    catalog::step_debug(tool, &target.label),
                );
                let path = written.display().to_string();
                let result = phonelogs_driver::NativeTombstone {
                    serial: capture.serial,
                    pid: capture.pid,
                    process_name: capture.process_name,
                    abi: capture.abi,
                    signal: capture.signal,
                    frame_count: capture.frame_count,
                    device_tombstone_ref: capture.device_tombstone_ref,
                    local_path: path.clone(),
                    size_bytes: capture.bytes.len() as u64,
                    success: true,
                };
                DebugResponse::success(
                    catalog::tombstone_message(pid, &result.serial, &path),
                    &result,
                )
            }
        }
    }

    /// What a backtrace and a tombstone both need before debuggerd may touch the process: the
    /// device, its debugger, and the pid's app with the policy decided and the person asked.
    async fn debug_pid(
        &self,
        serial: &str,
        pid: i64,
        ask: &Ask<'_>,
        approval_id: Option<&str>,
        args: &mut StepArgs,
    ) -> Result<(&dyn AppDebugger, DeviceId, Target, ProcessOwner), DebugResponse> {
        let (index, device) = self.debug_device(serial).await?;
        let Some(debugger) = self.debugger(index) else {
            return Err(unsupported(args.kind.as_str()));
        };
        let (target, owner) = self
            .pid_target(index, &device, pid, ask, approval_id, args)
            .await?;
        Ok((debugger, device, target, owner))
    }

    /// The refusal when the dump names another process than the one the policy judged (the pid
    /// was reused in between), so nothing of it is returned or written.
    fn pid_reused(
        &self,
        args: &StepArgs,
        target: &Target,
        owner: &ProcessOwner,
        pid: i64,
        dumped: &Dumped<'_>,
    ) -> Option<DebugResponse> {
        (!same_process(owner, dumped)).then(|| {
            self.debug_failed(
                args,
                target,
                phonelogs_driver::Error::backend(catalog::pid_changed(pid)),
            )
        })
    }

    fn debugger(&self, index: usize) -> Option<&dyn AppDebugger> {
        phonelogs_driver::AppLogger::debugger(self.driver(index))
    }

    fn debug_failed(
        &self,
        args: &StepArgs,
        target: &Target,
        error: phonelogs_driver::Error,
    ) -> DebugResponse {
        self.record(
            args,
            Some(&target.device),
            Status::Error,
            catalog::step_failed(&target.label),
        );
        DebugResponse::error(ErrorCode::from_driver(&error), error.to_string())
    }

    /// The serial's driver, or DEVICE_NOT_FOUND / ADB_UNAVAILABLE / POLICY_DENIED.
    async fn debug_device(&self, serial: &str) -> Result<(usize, DeviceId), DebugResponse> {
        if let Some(allowed) = &self.spec().devices
            && !allowed.iter().any(|d| d.as_str() == serial)
        {
            return Err(DebugResponse::error(
                ErrorCode::PolicyDenied,
                catalog::device_outside_task(serial),
            ));
        }
        let mut unavailable = None;
        for (index, driver) in self.gateway().inner.drivers.iter().enumerate() {
            match phonelogs_driver::AppLogger::devices(driver).await {
                Ok(devices) => {
                    if let Some(device) = devices.into_iter().find(|d| d.id.as_str() == serial) {
                        return Ok((index, device.id));
                    }
                }
                // Only a driver that serves the debugging aids can be the one that is missing:
                // an iPhone service that is down says nothing about an adb serial.
                Err(error) if phonelogs_driver::AppLogger::capabilities(driver).debugger => {
                    unavailable.get_or_insert(error);
                }
                Err(error) => {
                    tracing::debug!(%error, "a driver without the debugging aids could not list its devices");
                }
            }
        }
        Err(match unavailable {
            Some(error) if error.kind() == ErrorKind::DeviceUnavailable => {
                DebugResponse::error(ErrorCode::AdbUnavailable, error.to_string())
            }
            _ => DebugResponse::error(ErrorCode::DeviceNotFound, catalog::no_such_device(serial)),
        })
    }

    /// The app a package-based aid acts on, through the same permission steps as `phone_logs`:
    /// the policy from the package's id first (before the device is looked up), then the phone's
    /// word and the person. A package that is not installed asks nothing: there is nothing of it
    /// to read.
    async fn debug_target(
        &self,
        serial: &str,
        app: &AppId,
        ask: &Ask<'_>,
        approval_id: Option<&str>,
        args: &StepArgs,
    ) -> Result<Target, DebugResponse> {
        if let Some(response) = self.check_app(ask.action, app, args) {
            return Err(DebugResponse::from_gate(response));
        }
        let (driver_index, device) = self.debug_device(serial).await?;
        let info =
            match phonelogs_driver::AppLogger::app_info(self.driver(driver_index), &device, app)
                .await
            {
                Ok(info) => info,
                Err(error) if error.kind() == ErrorKind::NotFound => AppInfo {
                    app: app.clone(),
                    label: None,
                    system: false,
                    // Nothing is installed, so there is nothing to ask about.
                    dev_build: true,
                    uid: None,
                    shared_uid: false,
                },
                Err(error) => {
                    return Err(DebugResponse::error(
                        ErrorCode::from_driver(&error),
                        error.to_string(),
                    ));
                }
            };
        let label = info
            .label
            .clone()
            .filter(|l| !l.trim().is_empty())
            .unwrap_or_else(|| app.to_string());
        let target = Target {
            driver_index,
            device,
            info,
            label,
        };
        match self.permit(&target, ask, approval_id, args).await {
            Gate::Go => Ok(target),
            Gate::Stop(response) => Err(DebugResponse::from_gate(response)),
        }
    }

    /// The app a pid belongs to, asked of the driver before anything pauses the process, and
    /// put through the permission steps. A pid of a system uid, of a uid several packages share,
    /// of no installed app, or of an app this agent may not debug is refused with one message
    /// that names neither the process nor its uid; so is a pid the driver cannot resolve.
    async fn pid_target(
        &self,
        driver_index: usize,
        device: &DeviceId,
        pid: i64,
        ask: &Ask<'_>,
        approval_id: Option<&str>,
        args: &mut StepArgs,
    ) -> Result<(Target, ProcessOwner), DebugResponse> {
        let Some(debugger) = self.debugger(driver_index) else {
            return Err(unsupported(args.kind.as_str()));
        };
        let owner = match debugger.process_owner(device, pid).await {
            Ok(owner) => owner,
            Err(error) if error.kind() == ErrorKind::Unsupported => {
                return Err(DebugResponse::error(
                    ErrorCode::PolicyDenied,
                    catalog::owner_unknown(pid),
                ));
            }
            Err(error) => {
                return Err(DebugResponse::error(
                    ErrorCode::from_driver(&error),
                    error.to_string(),
                ));
            }
        };
        let refused = |session: &Session, args: &StepArgs, step: String| {
            session.record(args, Some(device), Status::BlockedByPolicy, step);
            DebugResponse::error(ErrorCode::PolicyDenied, catalog::pid_refused(pid))
        };
        let phone_own =
            || catalog::step_blocked(catalog::names::PHONE_OWN_APPS, &format!("pid {pid}"));
        if owner.is_system_uid() {
            return Err(refused(self, args, phone_own()));
        }
        let app = match owner.packages.as_slice() {
            [app] => app.clone(),
            _ => return Err(refused(self, args, phone_own())),
        };
        args.app = app.to_string();
        // The policy from the app's id before the phone is asked anything more. The history (the
        // person's) says why; the agent only learns that this pid is not one it may debug.
        if let Some(refusal) = self.app_refusal(ask.action, &app) {
            return Err(refused(self, args, refusal.step));
        }
        let info =
            match phonelogs_driver::AppLogger::app_info(self.driver(driver_index), device, &app)
                .await
            {
                Ok(info) => info,
                Err(error) if error.kind() == ErrorKind::NotFound => {
                    return Err(refused(self, args, phone_own()));
                }
                Err(error) if error.kind() == ErrorKind::Unsupported => {
                    return Err(refused(self, args, catalog::step_failed(app.as_str())));
                }
                Err(error) => {
                    return Err(DebugResponse::error(
                        ErrorCode::from_driver(&error),
                        error.to_string(),
                    ));
                }
            };
        let label = info
            .label
            .clone()
            .filter(|l| !l.trim().is_empty())
            .unwrap_or_else(|| app.to_string());
        let target = Target {
            driver_index,
            device: device.clone(),
            info,
            label,
        };
        if let Some(refusal) = Refusal::device(self, &target, ask.action) {
            return Err(refused(self, args, refusal.step));
        }
        match self.permit(&target, ask, approval_id, args).await {
            Gate::Go => Ok((target, owner)),
            Gate::Stop(response) => Err(DebugResponse::from_gate(response)),
        }
    }

    /// The package each pid of a JDWP listing belongs to, for the pids whose app the agent may
    /// see: within its scope and the task, not blocked, refused or one of the phone's own.
    /// Nothing is asked of the person (naming an app reads nothing of it), and a pid that
    /// cannot be resolved, or whose uid several packages share, is left unnamed.
    async fn visible_packages(
        &self,
        driver_index: usize,
        device: &DeviceId,
        pids: &[i64],
    ) -> Vec<JdwpPackage> {
        let Some(debugger) = self.debugger(driver_index) else {
            return Vec::new();
        };
        let policy = &self.gateway().inner.policy;
        let store = &self.gateway().inner.store;
        let agent = &self.spec().agent;
        let task_apps = self.spec().apps.as_deref();
        let wanted: Vec<i64> = pids.iter().copied().take(MAX_JDWP_NAMED).collect();
        let owners = match debugger.process_owners(device, &wanted).await {
            Ok(owners) => owners,
            Err(error) => {
                tracing::debug!(%error, "the JDWP pids could not be resolved; none is named");
                return Vec::new();
            }
        };
        let mut named = Vec::new();
        for owner in owners {
            let pid = owner.pid;
            let [app] = owner.packages.as_slice() else {
                continue;
            };
            if owner.is_system_uid()
                || policy.scope(agent, task_apps, app).is_err()
                || policy.blocking_rule(app).is_some()
                || store.is_blocked(app).unwrap_or(true)
            {
                continue;
            }
            let Ok(info) =
                phonelogs_driver::AppLogger::app_info(self.driver(driver_index), device, app).await
            else {
                continue;
            };
            if policy.logs_decision(agent, task_apps, &info) == phonelogs_policy::Decision::Allowed
            {
                named.push(JdwpPackage {
                    pid,
                    package: app.to_string(),
                });
            }
        }
        named
    }
}

/// The most pids of a JDWP listing resolved to their packages.
const MAX_JDWP_NAMED: usize = 64;

/// One pid of a JDWP listing named by its package.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct JdwpPackage {
    /// The pid.
    pub pid: i64,
    /// The package it belongs to.
    pub package: String,
}

/// `list_jdwp_processes`' data: the spec's `serial`, `count` and `pids`, and `packages`, which
/// names only the pids whose app the agent may see.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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

/// What a dump says of the process it dumped: the pid of its header line, the uid the process
/// ran as (a tombstone's `uid:`; for a backtrace, read by the driver right after the dump) and
/// its process name.
#[derive(Debug, Clone, Copy, Default)]
struct Dumped<'a> {
    pid: Option<i64>,
    uid: Option<u32>,
    name: Option<&'a str>,
}

impl<'a> Dumped<'a> {
    fn of_backtrace(backtrace: &'a phonelogs_driver::NativeBacktrace) -> Self {
        Dumped {
            pid: backtrace.dumped_pid,
            uid: backtrace.dumped_uid,
            name: backtrace.process_name.as_deref(),
        }
    }

    fn of_tombstone(capture: &'a phonelogs_driver::TombstoneCapture) -> Self {
        Dumped {
            pid: capture.dumped_pid,
            uid: capture.dumped_uid,
            name: capture.process_name.as_deref(),
        }
    }
}

/// Whether a dump is of the process the policy was asked about: its pid line names the pid
/// whose owner was resolved before the call, it ran as that owner's uid (which tells the app
/// from its clone in another user: same package, same name, another uid), and its name is the
/// one `/proc/<pid>/cmdline` gave (or, when that was unreadable, a process of the owner's
/// package). Whatever the dump does not say counts against it: a header the parser could not
/// read is no evidence that the process is the app's, so it is dropped.
fn same_process(owner: &ProcessOwner, dumped: &Dumped<'_>) -> bool {
    if dumped.pid != Some(owner.pid) || dumped.uid != Some(owner.uid) {
        return false;
    }
    let Some(name) = dumped.name.map(str::trim).filter(|d| !d.is_empty()) else {
        return false;
    };
    match owner.process_name.as_deref().map(str::trim) {
        Some(known) => known == name,
        None => {
            let package = name.split(':').next().unwrap_or(name);
            owner.packages.iter().any(|app| app.as_str() == package)
        }
    }
}

fn parse_package(package: &str) -> Result<AppId, DebugResponse> {
    if package.trim().is_empty() {
        return Err(DebugResponse::error(
            ErrorCode::InvalidArgument,
            "package must not be blank",
        ));
    }
    AppId::parse(package)
        .map_err(|error| DebugResponse::error(ErrorCode::InvalidArgument, error.to_string()))
}

fn unsupported(tool: &str) -> DebugResponse {
    DebugResponse::error(
        ErrorCode::BackendError,
        format!("{tool} is not available for this phone's driver"),
    )
}
