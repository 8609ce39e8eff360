//! Whose process a pid is, decided before `debuggerd` touches it, and whether the dump that
//! came back is of that same process (a pid can be reused in between).

use phonelogs_driver::{AppDebugger, AppLogger, DeviceId, ErrorKind, ProcessOwner};

use crate::catalog;
use crate::permission::{Ask, Gate, Refusal};
use crate::session::{Session, Target};
use crate::types::{Status, StepArgs};
use phonelogs_view::debug_types::{DebugResponse, ErrorCode};

impl Session {
    /// What a backtrace and a tombstone both need before debuggerd may touch the process: the
    /// device, its debugger, and the pid's app with the policy decided and the person asked.
    pub(crate) async fn debug_pid(
        &self,
        serial: &str,
        pid: i64,
        ask: &Ask<'_>,
        approval_id: Option<&str>,
        args: &mut StepArgs,
    ) -> Result<(&dyn AppDebugger, Target, ProcessOwner), DebugResponse> {
        let (index, device) = self.debug_device(serial).await?;
        let debugger = self.debugger_of(index, args.kind.as_str())?;
        let owner = match debugger.process_owner(&device, pid).await {
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
        let target = self.pid_target(index, &device, &owner, ask, args).await?;
        match self.permit(&target, ask, approval_id, args).await {
            Gate::Go => Ok((debugger, target, owner)),
            Gate::Stop(response) => Err(DebugResponse::from_gate(*response)),
        }
    }

    /// The app a pid's process belongs to, put through the policy before anything pauses it.
    /// A pid of a system uid, of a uid several packages share, of no installed app, or of an
    /// app this agent may not debug is refused with one message that names neither the process
    /// nor its uid; the person's history says why.
    async fn pid_target(
        &self,
        driver_index: usize,
        device: &DeviceId,
        owner: &ProcessOwner,
        ask: &Ask<'_>,
        args: &mut StepArgs,
    ) -> Result<Target, DebugResponse> {
        let pid = owner.pid;
        let refused = |args: &StepArgs, step: String| {
            self.record(args, Some(device), Status::BlockedByPolicy, step);
            DebugResponse::error(ErrorCode::PolicyDenied, catalog::pid_refused(pid))
        };
        let phone_own =
            || catalog::step_blocked(catalog::names::PHONE_OWN_APPS, &format!("pid {pid}"));
        let app = match self.gateway().inner.policy.process_app(owner) {
            Ok(app) => app.clone(),
            Err(_) => return Err(refused(args, phone_own())),
        };
        args.app = app.to_string();
        // The policy from the app's id before the phone is asked anything more.
        if let Some(refusal) = self.app_refusal(ask.action, &app) {
            return Err(refused(args, refusal.step));
        }
        let info = match self.driver(driver_index).app_info(device, &app).await {
            Ok(info) => info,
            Err(error) if error.kind() == ErrorKind::NotFound => {
                return Err(refused(args, phone_own()));
            }
            Err(error) if error.kind() == ErrorKind::Unsupported => {
                return Err(refused(args, catalog::step_failed(app.as_str())));
            }
            Err(error) => {
                return Err(DebugResponse::error(
                    ErrorCode::from_driver(&error),
                    error.to_string(),
                ));
            }
        };
        let target = Target::new(driver_index, device.clone(), info);
        // The package names every user's copy of the app; only the copy whose uid is the app's
        // (in the user it runs in) is the app's own. A clone's process, or a driver that cannot
        // say the app's uid, is refused.
        if target.info.uid != Some(owner.uid) {
            return Err(refused(args, catalog::step_other_copy(pid, &target.label)));
        }
        match Refusal::device(self, &target, ask.action) {
            Some(refusal) => Err(refused(args, refusal.step)),
            None => Ok(target),
        }
    }

    /// The refusal when the dump names another process than the one the policy judged (the pid
    /// was reused in between), so nothing of it is returned or written.
    pub(crate) fn pid_reused(
        &self,
        args: &StepArgs,
        target: &Target,
        owner: &ProcessOwner,
        dumped: &Dumped<'_>,
    ) -> Option<DebugResponse> {
        (!same_process(owner, dumped)).then(|| {
            self.debug_failed(
                args,
                target,
                phonelogs_driver::Error::backend(catalog::pid_changed(owner.pid)),
            )
        })
    }
}

/// What a dump says of the process it dumped: the pid of its header line, the uid the process
/// ran as (a tombstone's `uid:`; for a backtrace, read by the driver right after the dump) and
/// its process name.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Dumped<'a> {
    pid: Option<i64>,
    uid: Option<u32>,
    name: Option<&'a str>,
}

impl<'a> Dumped<'a> {
    pub(crate) fn of_backtrace(backtrace: &'a phonelogs_driver::NativeBacktrace) -> Self {
        Dumped {
            pid: backtrace.dumped_pid,
            uid: backtrace.dumped_uid,
            name: backtrace.process_name.as_deref(),
        }
    }

    pub(crate) fn of_tombstone(capture: &'a phonelogs_driver::TombstoneCapture) -> Self {
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
