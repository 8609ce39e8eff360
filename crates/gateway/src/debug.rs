//! The six Android debugging aids of `debugging_tools.txt`, under the same permission path as
//! `phone_logs` ([`crate::permission`]), answered in the tools' envelope
//! ([`phonelogs_view::debug_types`]).
//!
//! Each aid is an [`Action`]: the agent's mode first (watch-only agents use none; read-only
//! agents do no writes: `set_debug_app`, `clear_debug_app`, `capture_native_tombstone`), then the
//! app's id, then the phone and the person, each asking its own question. A pid is resolved to
//! its app before anything pauses it ([`crate::owner`]). A tombstone is written under
//! `<local_root>/tombstones/<local_path>` by [`crate::tombstone_file`] (no symlink followed, no
//! file replaced, mode 0600), and a path that could lead out of it is refused before anything
//! runs. A dump whose own pid line, uid or name is not the owner's resolved before the call (a
//! reused pid) is dropped, never returned or written.

use std::path::PathBuf;

use phonelogs_driver::{AppDebugger, AppId, AppInfo, AppLogger, DeviceId, ErrorKind, check_pid};
use phonelogs_policy::Action;

use crate::catalog::{self, Subject};
use phonelogs_view::aids::{drop_exits_before, mask_backtrace, mask_exit_history, mask_tombstone};

use crate::devices::NoDevice;
use crate::owner::Dumped;
use crate::permission::{Ask, Gate, Refusal};
use crate::session::{Session, Target};
use crate::tombstone_file::{check_destination, check_local_path, write_tombstone};
use crate::types::{Status, StepArgs, agent_text};
use phonelogs_view::debug_types::{
    BacktraceData, DebugData, DebugRequest, DebugResponse, DebugStatus, ErrorCode, JdwpListing,
    JdwpPackage, TombstoneData,
};

/// The most pids of a JDWP listing resolved to their packages.
const MAX_JDWP_NAMED: usize = 64;

impl Session {
    /// One call of a debugging aid, policy-checked, recorded in the history without content.
    pub async fn debug(&self, request: DebugRequest) -> DebugResponse {
        // An ended task's grants end with it; its clones may still call.
        if self.ended() {
            return DebugResponse::error(ErrorCode::PolicyDenied, catalog::task_ended());
        }
        let tool = request.tool();
        // What the call was aimed at, as the agent wrote it: into the history only bounded.
        let subject = match &request {
            DebugRequest::GetProcessExitHistory { package, .. }
            | DebugRequest::SetDebugApp { package, .. } => agent_text(package.trim()),
            DebugRequest::CaptureNativeBacktrace { pid, .. }
            | DebugRequest::CaptureNativeTombstone { pid, .. } => format!("pid {pid}"),
            DebugRequest::ClearDebugApp { serial } | DebugRequest::ListJdwpProcesses { serial } => {
                agent_text(serial.trim())
            }
        };
        let before = self.steps_recorded();
        let mut response = self.debug_call(request).await;
        // Within their bound whatever they quote, as `phone_logs`' message is.
        response.message = phonelogs_view::render::bounded_message(response.message);
        if let Some(error) = response.error.as_mut() {
            error.message =
                phonelogs_view::render::bounded_message(std::mem::take(&mut error.message));
        }
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

    /// Checks what every aid needs and hands the call to its own function.
    async fn debug_call(&self, request: DebugRequest) -> DebugResponse {
        let mut args = StepArgs {
            kind: request.tool().to_owned(),
            ..StepArgs::default()
        };
        let serial = request.serial().trim().to_owned();
        if serial.is_empty() {
            return DebugResponse::error(ErrorCode::InvalidArgument, "serial must not be blank");
        }
        let outcome = match request {
            DebugRequest::GetProcessExitHistory {
                package,
                approval_id,
                ..
            } => {
                self.exit_history(&serial, &package, approval_id, &mut args)
                    .await
            }
            DebugRequest::SetDebugApp {
                package,
                wait_for_debugger,
                persistent,
                approval_id,
                ..
            } => {
                let flags = (wait_for_debugger, persistent);
                self.set_debug_app(&serial, &package, flags, approval_id, &mut args)
                    .await
            }
            DebugRequest::ClearDebugApp { .. } => self.clear_debug_app(&serial, &args).await,
            DebugRequest::ListJdwpProcesses { .. } => self.jdwp_processes(&serial, &args).await,
            DebugRequest::CaptureNativeBacktrace {
                pid, approval_id, ..
            } => self.backtrace(&serial, pid, approval_id, &mut args).await,
            DebugRequest::CaptureNativeTombstone {
                pid,
                local_path,
                approval_id,
                ..
            } => {
                self.tombstone(&serial, pid, &local_path, approval_id, &mut args)
                    .await
            }
        };
        outcome.unwrap_or_else(|response| response)
    }

    async fn exit_history(
        &self,
        serial: &str,
        package: &str,
        approval_id: Option<String>,
        args: &mut StepArgs,
    ) -> Result<DebugResponse, DebugResponse> {
        let app = parse_package(package)?;
        args.app = app.to_string();
        let ask = Ask::plain(Action::ExitHistory);
        let (debugger, target) = self
            .package_target(serial, &app, &ask, approval_id.as_deref(), args)
            .await?;
        let mut history = debugger
            .process_exit_history(&target.device, &app)
            .await
            .map_err(|error| self.debug_failed(args, &target, error))?;
        // `data.serial` is the serial the caller passed, as the spec's examples show it.
        history.serial = serial.to_owned();
        // The records' texts are the app's (a process name, a description it may set):
        // masked before anything is made of them.
        let masked = mask_exit_history(&mut history, self.masker(&app));
        // A development build's pass covers its own exits, not an earlier build's.
        let earlier = self
            .build_floor(
                &target,
                Action::ExitHistory,
                time::OffsetDateTime::UNIX_EPOCH,
            )
            .and_then(|floor| {
                // The records print the phone's local time: in the install time's offset (the
                // phone's), else (the offset unknown) in UTC+14, which makes each earliest.
                let offset = match floor.seen {
                    true => time::UtcOffset::from_hms(14, 0, 0).unwrap_or(time::UtcOffset::UTC),
                    false => floor.at.offset(),
                };
                let left_out = drop_exits_before(&mut history, floor.at, offset);
                let what = format!("Exit records ({left_out})");
                (left_out > 0).then(|| self.build_said(&target, floor, &what))
            });
        self.record_used(args, &target);
        let newest = history
            .records
            .first()
            .and_then(|r| Some((r.reason.as_deref()?, r.timestamp.as_deref()?)));
        let message = catalog::exit_history_message(
            history.count,
            &history.package,
            &history.serial,
            newest,
            history.left_out_other_users,
        );
        let message = match earlier {
            Some(said) => format!("{message} {said}"),
            None => message,
        };
        let message = with_masked(message, masked);
        Ok(DebugResponse::success(
            message,
            DebugData::ExitHistory(history),
        ))
    }

    async fn set_debug_app(
        &self,
        serial: &str,
        package: &str,
        (wait_for_debugger, persistent): (bool, bool),
        approval_id: Option<String>,
        args: &mut StepArgs,
    ) -> Result<DebugResponse, DebugResponse> {
        let app = parse_package(package)?;
        args.app = app.to_string();
        let ask = Ask {
            subject: Subject {
                device: Some(serial),
                ..Subject::default()
            },
            ..Ask::plain(Action::SetDebugApp)
        };
        let (debugger, target) = self
            .package_target(serial, &app, &ask, approval_id.as_deref(), args)
            .await?;
        let mut result = debugger
            .set_debug_app(&target.device, &app, wait_for_debugger, persistent)
            .await
            .map_err(|error| self.debug_failed(args, &target, error))?;
        result.serial = serial.to_owned();
        self.record_used(args, &target);
        let message = catalog::set_debug_app_message(
            &result.package,
            &result.serial,
            result.wait_for_debugger,
            result.persistent,
        );
        Ok(DebugResponse::success(
            message,
            DebugData::SetDebugApp(result),
        ))
    }

    async fn clear_debug_app(
        &self,
        serial: &str,
        args: &StepArgs,
    ) -> Result<DebugResponse, DebugResponse> {
        // It names no app: the agent's mode is all there is to decide.
        if let Some(response) = self.check_mode(Action::SetDebugApp, &agent_text(serial), args) {
            return Err(DebugResponse::from_gate(response));
        }
        let (index, device) = self.debug_device(serial).await?;
        let debugger = self.debugger_of(index, &args.kind)?;
        let mut result = debugger.clear_debug_app(&device).await.map_err(|error| {
            DebugResponse::error(ErrorCode::from_driver(&error), error.to_string())
        })?;
        result.serial = serial.to_owned();
        self.record(
            args,
            Some(&device),
            Status::Ok,
            catalog::step_debug(&args.kind, device.as_str()),
        );
        Ok(DebugResponse::success(
            catalog::clear_debug_app_message(&result.serial),
            DebugData::ClearDebugApp(result),
        ))
    }

    async fn jdwp_processes(
        &self,
        serial: &str,
        args: &StepArgs,
    ) -> Result<DebugResponse, DebugResponse> {
        // Listing pids reads no app's data; naming one's package is decided per pid below.
        if let Some(response) = self.check_mode(Action::Logs, "any app", args) {
            return Err(DebugResponse::from_gate(response));
        }
        let (index, device) = self.debug_device(serial).await?;
        let debugger = self.debugger_of(index, &args.kind)?;
        let result = debugger.jdwp_processes(&device).await.map_err(|error| {
            DebugResponse::error(ErrorCode::from_driver(&error), error.to_string())
        })?;
        let packages = self.visible_packages(index, &device, &result.pids).await;
        self.record(
            args,
            Some(&device),
            Status::Ok,
            catalog::step_debug(&args.kind, device.as_str()),
        );
        let listing = JdwpListing {
            serial: serial.to_owned(),
            count: result.count,
            pids: result.pids,
            packages,
        };
        Ok(DebugResponse::success(
            catalog::jdwp_message(&listing.pids, &listing.serial),
            DebugData::Jdwp(listing),
        ))
    }

    async fn backtrace(
        &self,
        serial: &str,
        pid: i64,
        approval_id: Option<String>,
        args: &mut StepArgs,
    ) -> Result<DebugResponse, DebugResponse> {
        check_pid(pid)
            .map_err(|error| DebugResponse::error(ErrorCode::InvalidArgument, error.to_string()))?;
        // The mode first, then the pid is resolved to its app and the policy asked, all before
        // debuggerd runs.
        let subject = format!("pid {pid}");
        if let Some(response) = self.check_mode(Action::Backtrace, &subject, args) {
            return Err(DebugResponse::from_gate(response));
        }
        let ask = Ask {
            detail: subject,
            subject: Subject {
                pid: Some(pid),
                ..Subject::default()
            },
            ..Ask::plain(Action::Backtrace)
        };
        let (debugger, target, owner) = self
            .debug_pid(serial, pid, &ask, approval_id.as_deref(), args)
            .await?;
        let mut backtrace = debugger
            .native_backtrace(&target.device, pid)
            .await
            .map_err(|error| self.debug_failed(args, &target, error))?;
        if let Some(refused) =
            self.pid_reused(args, &target, &owner, &Dumped::of_backtrace(&backtrace))
        {
            return Err(refused);
        }
        self.record_used(args, &target);
        backtrace.serial = serial.to_owned();
        // Symbols, then masking, before the cut, which measures the text they wrote.
        let symbols = self.symbolicate_dump(&target, &mut backtrace.text);
        let masked = mask_backtrace(&mut backtrace, self.masker(&target.info.app));
        // The one cut of this result: the text to the gateway's cap (less the `symbols` field,
        // JSON-escaped), said in the message and in `text_cut`, so nothing after the gateway
        // shortens it again.
        let room = self.gateway().result_cap().saturating_sub(
            symbols
                .heading
                .as_deref()
                .map_or(0, phonelogs_view::cost::symbols_field_cost),
        );
        let cut = phonelogs_view::render::cap_backtrace_text(&mut backtrace, room);
        let mut message = with_masked(catalog::backtrace_message(cut), masked);
        symbols.add_to(&mut message);
        let data = BacktraceData {
            backtrace,
            text_cut: cut.is_some(),
            symbols: symbols.heading,
        };
        Ok(DebugResponse::success(message, DebugData::Backtrace(data)))
    }

    async fn tombstone(
        &self,
        serial: &str,
        pid: i64,
        local_path: &str,
        approval_id: Option<String>,
        args: &mut StepArgs,
    ) -> Result<DebugResponse, DebugResponse> {
        check_pid(pid)
            .map_err(|error| DebugResponse::error(ErrorCode::InvalidArgument, error.to_string()))?;
        // A tombstone is a write (the spec's "Categorized write"): refused to read-only and
        // watch-only agents before anything else is looked at.
        if let Some(response) = self.check_mode(Action::Tombstone, &format!("pid {pid}"), args) {
            return Err(DebugResponse::from_gate(response));
        }
        let (root, relative) = self.tombstone_destination(local_path)?;
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
        let (debugger, target, owner) = self
            .debug_pid(serial, pid, &ask, approval_id.as_deref(), args)
            .await?;
        let mut capture = debugger
            .native_tombstone(&target.device, pid)
            .await
            .map_err(|error| self.debug_failed(args, &target, error))?;
        if let Some(refused) =
            self.pid_reused(args, &target, &owner, &Dumped::of_tombstone(&capture))
        {
            return Err(refused);
        }
        // The file holds the phone's lines, each frame of a filed library followed by its
        // function and file:line.
        let (bytes, symbols) = self.symbolicate_tombstone(&target, capture.bytes);
        // An agent may read the file: a text tombstone is written masked (issue 37).
        let masker = self.masker(&target.info.app);
        let (bytes, masked) = mask_tombstone(bytes, &mut capture.process_name, masker);
        let written = write_tombstone(&root, &relative, &bytes).map_err(|(code, why)| {
            self.record(
                args,
                Some(&target.device),
                Status::Error,
                catalog::step_failed(&target.label),
            );
            DebugResponse::error(code, catalog::bad_local_path(local_path, &why))
        })?;
        self.record_used(args, &target);
        let path = written.display().to_string();
        let tombstone = phonelogs_driver::NativeTombstone {
            serial: serial.to_owned(),
            pid: capture.pid,
            process_name: capture.process_name,
            abi: capture.abi,
            signal: capture.signal,
            frame_count: capture.frame_count,
            device_tombstone_ref: capture.device_tombstone_ref,
            local_path: path.clone(),
            size_bytes: bytes.len() as u64,
            success: true,
        };
        let mut message = with_masked(
            catalog::tombstone_message(pid, &tombstone.serial, &path),
            masked,
        );
        symbols.add_to(&mut message);
        let data = TombstoneData {
            tombstone,
            symbols: symbols.heading,
        };
        Ok(DebugResponse::success(message, DebugData::Tombstone(data)))
    }

    /// Where a tombstone goes: the local root, and `local_path` checked as a plain relative
    /// path whose directories on disk are no symlinks and whose file does not exist yet, so a
    /// refused path never pauses the process.
    fn tombstone_destination(&self, local_path: &str) -> Result<(PathBuf, PathBuf), DebugResponse> {
        let Some(root) = self.gateway().inner.local_root.clone() else {
            return Err(DebugResponse::error(
                ErrorCode::PolicyDenied,
                catalog::no_local_root(),
            ));
        };
        let relative = check_local_path(local_path).map_err(|why| {
            DebugResponse::error(
                ErrorCode::PolicyDenied,
                catalog::bad_local_path(local_path, &why),
            )
        })?;
        check_destination(&root, &relative).map_err(|(code, why)| {
            DebugResponse::error(code, catalog::bad_local_path(local_path, &why))
        })?;
        Ok((root, relative))
    }

    /// The app a package-based aid acts on, through the same permission steps as `phone_logs`:
    /// the policy from the package's id first (before the device is looked up), then the phone's
    /// word and the person. A package that is not installed asks nothing: there is nothing of it
    /// to read.
    async fn package_target(
        &self,
        serial: &str,
        app: &AppId,
        ask: &Ask<'_>,
        approval_id: Option<&str>,
        args: &StepArgs,
    ) -> Result<(&dyn AppDebugger, Target), DebugResponse> {
        if let Some(response) = self.check_app(ask.action, app, args) {
            return Err(DebugResponse::from_gate(response));
        }
        let (index, device) = self.debug_device(serial).await?;
        let debugger = self.debugger_of(index, &args.kind)?;
        let info = match self.driver(index).app_info(&device, app).await {
            Ok(info) => info,
            Err(error) if error.kind() == ErrorKind::NotFound => AppInfo {
                app: app.clone(),
                label: None,
                system: false,
                // Nothing is installed, so there is nothing to ask about.
                dev_build: true,
                uid: None,
                shared_uid: false,
                version: None,
                installed_at: None,
                install_id: None,
            },
            Err(error) => {
                return Err(DebugResponse::error(
                    ErrorCode::from_driver(&error),
                    error.to_string(),
                ));
            }
        };
        let target = Target::new(index, device, info);
        self.note_build(&target);
        match self.permit(&target, ask, approval_id, args).await {
            Gate::Go => Ok((debugger, target)),
            Gate::Stop(response) => Err(DebugResponse::from_gate(*response)),
        }
    }

    /// The debugger of a driver, or the answer that this phone's driver has none.
    pub(crate) fn debugger_of(
        &self,
        index: usize,
        tool: &str,
    ) -> Result<&dyn AppDebugger, DebugResponse> {
        self.driver(index).debugger().ok_or_else(|| {
            DebugResponse::error(
                ErrorCode::BackendError,
                format!("{tool} is not available for this phone's driver"),
            )
        })
    }

    fn record_used(&self, args: &StepArgs, target: &Target) {
        self.record(
            args,
            Some(&target.device),
            Status::Ok,
            catalog::step_debug(&args.kind, &target.label),
        );
    }

    pub(crate) fn debug_failed(
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
    pub(crate) async fn debug_device(
        &self,
        serial: &str,
    ) -> Result<(usize, DeviceId), DebugResponse> {
        self.find_device(Some(serial), true)
            .await
            .map_err(|none| match none {
                NoDevice::OutsideTask(wanted) => DebugResponse::error(
                    ErrorCode::PolicyDenied,
                    catalog::device_outside_task(&wanted),
                ),
                NoDevice::NotFound { errors, .. }
                    if errors
                        .iter()
                        .any(|e| e.kind() == ErrorKind::DeviceUnavailable) =>
                {
                    let unavailable: Vec<String> = errors
                        .iter()
                        .filter(|e| e.kind() == ErrorKind::DeviceUnavailable)
                        .map(ToString::to_string)
                        .collect();
                    DebugResponse::error(ErrorCode::AdbUnavailable, unavailable.join("; "))
                }
                NoDevice::Ambiguous(names) => DebugResponse::error(
                    ErrorCode::DeviceNotFound,
                    catalog::ambiguous_device(&names),
                ),
                _ => {
                    DebugResponse::error(ErrorCode::DeviceNotFound, catalog::no_such_device(serial))
                }
            })
    }

    /// The package each pid of a JDWP listing belongs to, for the pids whose app the agent may
    /// see: decided by the same steps as a read of its logs (its mode and scope, the task, the
    /// refused lists and blocks, the phone's own apps), but nothing is asked of the person
    /// (naming an app reads nothing of it). A pid that cannot be resolved, or whose uid several
    /// packages share, is left unnamed.
    async fn visible_packages(
        &self,
        driver_index: usize,
        device: &DeviceId,
        pids: &[i64],
    ) -> Vec<JdwpPackage> {
        let Ok(debugger) = self.debugger_of(driver_index, "list_jdwp_processes") else {
            return Vec::new();
        };
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
            let Ok(app) = self.gateway().inner.policy.process_app(&owner) else {
                continue;
            };
            if self.app_refusal(Action::Logs, app).is_some() {
                continue;
            }
            let Ok(info) = self.driver(driver_index).app_info(device, app).await else {
                continue;
            };
            // Another user's copy of the app is not the app.
            if info.uid != Some(owner.uid) {
                continue;
            }
            let target = Target::new(driver_index, device.clone(), info);
            if Refusal::device(self, &target, Action::Logs).is_none() {
                named.push(JdwpPackage {
                    pid: owner.pid,
                    package: app.to_string(),
                });
            }
        }
        named
    }
}

/// `message` and, when secrets were masked in what it comes with, the sentence that says so.
fn with_masked(mut message: String, masked: usize) -> String {
    if let Some(sentence) = catalog::masked_sentence(masked) {
        message.push(' ');
        message.push_str(&sentence);
    }
    message
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
