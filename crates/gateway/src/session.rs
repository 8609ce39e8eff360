//! A task's session: the whole `phone_logs` call, the approvals, the end of the task.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use phonelogs_driver::{
    AppId, AppInfo, AppLogger, DeviceId, DeviceState, ErrorKind, LogLevel, LogQuery,
};
use phonelogs_policy::Action;
use time::OffsetDateTime;

use crate::permission::Ask;
use crate::render::{render_lines, render_reports};
use crate::since::parse_since;
use crate::store::NewStep;
use crate::types::{
    Answer, ApprovalState, LogsKind, LogsRequest, LogsResponse, Status, StepArgs, TextShown,
};
use crate::{Gateway, GuardedLogger, TaskSpec, catalog, new_id};

/// The default and largest `limit` for lines.
pub const LOG_LIMITS: (u32, u32) = (200, 500);
/// The default and largest `limit` for crash reports.
pub const CRASH_LIMITS: (u32, u32) = (3, 10);
/// How often [`Session::wait_for_answer`] looks at the store.
const ANSWER_POLL: Duration = Duration::from_millis(200);

/// One task of one agent. Cloning shares it; [`Session::end`] ends it for every clone.
#[derive(Clone)]
pub struct Session {
    inner: Arc<SessionInner>,
}

struct SessionInner {
    gateway: Gateway,
    task_id: String,
    spec: TaskSpec,
    started_at: OffsetDateTime,
    /// The (driver, phone, app) triples this task read, so listeners stop when it ends.
    read: Mutex<HashSet<(usize, DeviceId, AppId)>>,
    ended: AtomicBool,
    /// How many history steps this session wrote, so a caller can tell whether a call wrote one.
    steps: AtomicU64,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("task_id", &self.inner.task_id)
            .field("agent", &self.inner.spec.agent.name)
            .field("started_at", &self.inner.started_at)
            .finish_non_exhaustive()
    }
}

/// The outcome of the permission steps: go ahead, or answer with this response.
pub(crate) enum Gate {
    Go,
    Stop(LogsResponse),
}

/// A `phone_logs` call with its arguments checked.
struct LogsCall {
    args: StepArgs,
    app: AppId,
    kind: LogsKind,
    level: Option<LogLevel>,
    limit: usize,
    since: OffsetDateTime,
    filter: Option<String>,
    approval_id: Option<String>,
}

/// The phone and app a call is about, once resolved.
pub(crate) struct Target {
    pub(crate) driver_index: usize,
    pub(crate) device: DeviceId,
    pub(crate) info: AppInfo,
    pub(crate) label: String,
}

impl Session {
    pub(crate) fn start(gateway: Gateway, spec: TaskSpec) -> Session {
        let task_id = new_id("task");
        let started_at = gateway.now();
        if let Err(error) = gateway
            .inner
            .store
            .begin_task(&task_id, &spec.agent.name, started_at)
        {
            tracing::warn!(%error, "could not record the task's start");
        }
        Session {
            inner: Arc::new(SessionInner {
                gateway,
                task_id,
                spec,
                started_at,
                read: Mutex::new(HashSet::new()),
                ended: AtomicBool::new(false),
                steps: AtomicU64::new(0),
            }),
        }
    }

    /// The task's id.
    pub fn task_id(&self) -> &str {
        &self.inner.task_id
    }

    /// The task as started.
    pub fn spec(&self) -> &TaskSpec {
        &self.inner.spec
    }

    /// When the task started.
    pub fn started_at(&self) -> OffsetDateTime {
        self.inner.started_at
    }

    pub(crate) fn gateway(&self) -> &Gateway {
        &self.inner.gateway
    }

    pub(crate) fn driver(&self, index: usize) -> &GuardedLogger {
        &self.inner.gateway.inner.drivers[index]
    }

    fn ended(&self) -> bool {
        self.inner.ended.load(Ordering::SeqCst)
    }

    /// The whole `phone_logs` call. It never fails: every outcome is a status and a message.
    ///
    /// The arguments are checked first, then the policy from the app's id, then the phone and
    /// the person ([`crate::permission`]), then the read. When the driver finds the app changed
    /// under the call (a release build installed over the debug build it had seen), the phone
    /// and the person are asked again, once, in the same call.
    pub async fn logs(&self, request: LogsRequest) -> LogsResponse {
        let call = match self.prepare(&request) {
            Ok(call) => call,
            Err(response) => return *response,
        };
        let mut again = true;
        loop {
            let target = match self.admit(&call, request.device.as_deref()).await {
                Ok(target) => target,
                Err(response) => return *response,
            };
            let read = match call.kind {
                LogsKind::Logs => self.read_lines(&target, &call).await,
                LogsKind::Crashes => self.read_reports(&target, &call).await,
            };
            match read {
                Ok(response) => return response,
                Err(error) if error.kind() == ErrorKind::Changed && again => {
                    tracing::info!(%error, "the app changed under the call; deciding again");
                    again = false;
                }
                Err(error) => return self.driver_failed(&call.args, &target, error),
            }
        }
    }

    /// Checks the call's arguments and the policy from the app's id, before anything touches a
    /// phone.
    fn prepare(&self, request: &LogsRequest) -> Result<LogsCall, Box<LogsResponse>> {
        let args = StepArgs {
            app: request.app.trim().to_owned(),
            kind: request.kind.as_str().to_owned(),
            since: request.since.clone(),
            filter: request.filter.clone(),
            level: request.level.clone(),
            limit: request.limit,
        };
        if self.ended() {
            return Err(Box::new(LogsResponse::bare(
                Status::Error,
                catalog::task_ended(),
            )));
        }
        let app = AppId::parse(&request.app)
            .map_err(|error| Box::new(LogsResponse::bare(Status::Error, error.to_string())))?;
        let fail = |message: String| {
            Box::new(self.failed(&args, None, app.as_str(), Status::Error, message))
        };
        let level = match request.level.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(text) => {
                Some(LogLevel::from_name(text).ok_or_else(|| fail(catalog::level_error(text)))?)
            }
        };
        let (default_limit, max_limit) = match request.kind {
            LogsKind::Logs => LOG_LIMITS,
            LogsKind::Crashes => CRASH_LIMITS,
        };
        let limit = request.limit.unwrap_or(default_limit);
        if limit == 0 || limit > max_limit {
            return Err(fail(catalog::limit_error(
                request.kind.as_str(),
                limit,
                max_limit,
            )));
        }
        let since = parse_since(
            request.since.as_deref(),
            self.gateway().now(),
            self.gateway().local_offset(),
            self.inner.started_at,
        )
        .map_err(fail)?;
        // The policy first, from the app's id alone: an agent that may not read this app gets
        // the same answer whether it is installed or not, and no phone is asked anything.
        if let Some(response) = self.check_app(Action::Logs, &app, &args) {
            return Err(Box::new(response));
        }
        Ok(LogsCall {
            args,
            app,
            kind: request.kind,
            level,
            limit: limit as usize,
            since,
            filter: request.filter.clone().filter(|f| !f.is_empty()),
            approval_id: request.approval_id.clone(),
        })
    }

    /// The phone, the app as the phone describes it now, and the person's permission.
    async fn admit(
        &self,
        call: &LogsCall,
        device: Option<&str>,
    ) -> Result<Target, Box<LogsResponse>> {
        let target = self.resolve(device, &call.app, &call.args).await?;
        let capabilities = self.driver(target.driver_index).capabilities();
        let able = match call.kind {
            LogsKind::Logs => capabilities.logs,
            LogsKind::Crashes => capabilities.crashes,
        };
        if !able {
            let message = format!("this phone's driver cannot read {}.", call.kind.as_str());
            return Err(Box::new(self.failed(
                &call.args,
                Some(&target.device),
                &target.label,
                Status::Unsupported,
                message,
            )));
        }
        let ask = Ask::plain(Action::Logs);
        match self
            .permit(&target, &ask, call.approval_id.as_deref(), &call.args)
            .await
        {
            Gate::Go => {}
            Gate::Stop(response) => return Err(Box::new(response)),
        }
        self.inner
            .read
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert((target.driver_index, target.device.clone(), call.app.clone()));
        Ok(target)
    }

    /// Reads and lays out the app's lines.
    async fn read_lines(
        &self,
        target: &Target,
        call: &LogsCall,
    ) -> Result<LogsResponse, phonelogs_driver::Error> {
        let mut query = LogQuery::since(call.since, call.limit);
        query.level = call.level;
        query.filter = call.filter.clone();
        let driver = self.driver(target.driver_index);
        let result = driver
            .own_logs(&target.device, &target.info, &query)
            .await?;
        // One line per line of text, so no message forges another line; the limit then counts
        // the lines the agent sees.
        let (lines, over_limit) = crate::lines::one_line_each(result.lines, call.limit);
        let rendered = render_lines(
            &lines,
            self.gateway().local_offset(),
            self.gateway().result_cap(),
        );
        // The driver's count (the limit), the split's and the cap's, so the message's count is
        // of every older line the agent does not see.
        let left_out = result.omitted + over_limit + rendered.left_out;
        let shown = rendered.views.len();
        self.record(
            &call.args,
            Some(&target.device),
            Status::Ok,
            catalog::step_read_lines(shown, &target.label),
        );
        Ok(LogsResponse {
            status: Status::Ok,
            message: catalog::lines_message(shown, &target.label, left_out, rendered.cut),
            approval_id: None,
            rule: Some(catalog::names::APP_LOGS.to_owned()),
            log: rendered.log,
            lines: rendered.views,
            reports: Vec::new(),
            shown,
            left_out,
            cut: rendered.cut,
        })
    }

    /// Reads and lays out the app's crash reports.
    async fn read_reports(
        &self,
        target: &Target,
        call: &LogsCall,
    ) -> Result<LogsResponse, phonelogs_driver::Error> {
        let driver = self.driver(target.driver_index);
        let result = driver
            .own_crash_result(&target.device, &target.info, call.since, call.limit)
            .await?;
        let cap = self.gateway().result_cap();
        let rendered = render_reports(&result.reports, cap);
        let shown = rendered.views.len();
        let count = |wanted: TextShown| {
            rendered
                .views
                .iter()
                .filter(|v| v.text_shown == wanted)
                .count()
        };
        let mut message = catalog::reports_message(
            shown,
            &target.label,
            count(TextShown::Cut),
            count(TextShown::FirstLine),
            rendered.left_out,
            cap,
        );
        // Reports the driver could not confirm as the app's own (not its copy in another user)
        // are left out, and the message says how many.
        if let Some(unconfirmed) = catalog::unconfirmed_reports(result.unconfirmed, &target.label) {
            message.push(' ');
            message.push_str(&unconfirmed);
        }
        self.record(
            &call.args,
            Some(&target.device),
            Status::Ok,
            catalog::step_read_reports(shown, &target.label),
        );
        Ok(LogsResponse {
            status: Status::Ok,
            message,
            approval_id: None,
            rule: Some(catalog::names::APP_LOGS.to_owned()),
            log: rendered.log,
            lines: Vec::new(),
            reports: rendered.views,
            shown,
            left_out: rendered.left_out,
            cut: rendered.cut,
        })
    }

    /// Finds the phone (the one named, or the only one connected within the task's phones), its
    /// driver, and what the driver knows of the app.
    pub(crate) async fn resolve(
        &self,
        device: Option<&str>,
        app: &AppId,
        args: &StepArgs,
    ) -> Result<Target, Box<LogsResponse>> {
        let (driver_index, device) =
            self.resolve_device(device)
                .await
                .map_err(|(status, message)| {
                    Box::new(self.failed(args, None, app.as_str(), status, message))
                })?;
        let info = match self.driver(driver_index).app_info(&device, app).await {
            Ok(info) => info,
            Err(error) => {
                let (status, message) = driver_error_status(&error, app, &device);
                return Err(Box::new(self.failed(
                    args,
                    Some(&device),
                    app.as_str(),
                    status,
                    message,
                )));
            }
        };
        let label = info
            .label
            .clone()
            .filter(|l| !l.trim().is_empty())
            .unwrap_or_else(|| app.to_string());
        Ok(Target {
            driver_index,
            device,
            info,
            label,
        })
    }

    pub(crate) async fn resolve_device(
        &self,
        wanted: Option<&str>,
    ) -> Result<(usize, DeviceId), (Status, String)> {
        let allowed = self.inner.spec.devices.as_deref();
        let wanted = wanted.map(str::trim).filter(|w| !w.is_empty());
        if let (Some(wanted), Some(allowed)) = (wanted, allowed)
            && !allowed.iter().any(|d| d.as_str() == wanted)
        {
            return Err((Status::ScopeDenied, catalog::device_outside_task(wanted)));
        }
        let mut online = Vec::new();
        let mut first_error = None;
        for (index, driver) in self.gateway().inner.drivers.iter().enumerate() {
            match driver.devices().await {
                Ok(devices) => {
                    for device in devices {
                        if let Some(wanted) = wanted {
                            if device.id.as_str() == wanted {
                                return Ok((index, device.id));
                            }
                        } else if device.state == DeviceState::Online
                            && allowed.is_none_or(|allowed| allowed.contains(&device.id))
                        {
                            online.push((index, device.id));
                        }
                    }
                }
                Err(error) => {
                    tracing::warn!(%error, "a driver could not list its devices");
                    first_error.get_or_insert(error);
                }
            }
        }
        if let Some(wanted) = wanted {
            return Err((
                Status::Error,
                match first_error {
                    Some(error) => format!("{} ({error})", catalog::no_such_device(wanted)),
                    None => catalog::no_such_device(wanted),
                },
            ));
        }
        match online.len() {
            1 => Ok(online.remove(0)),
            0 => Err((
                Status::Error,
                match first_error {
                    Some(error) => format!("{} ({error})", catalog::no_device()),
                    None => catalog::no_device(),
                },
            )),
            _ => Err((
                Status::Error,
                catalog::several_devices(
                    &online
                        .iter()
                        .map(|(_, d)| d.to_string())
                        .collect::<Vec<_>>(),
                ),
            )),
        }
    }

    fn driver_failed(
        &self,
        args: &StepArgs,
        target: &Target,
        error: phonelogs_driver::Error,
    ) -> LogsResponse {
        let (status, message) = driver_error_status(&error, &target.info.app, &target.device);
        self.failed(args, Some(&target.device), &target.label, status, message)
    }

    /// Records a failed step and returns the response for it.
    pub(crate) fn failed(
        &self,
        args: &StepArgs,
        device: Option<&DeviceId>,
        label: &str,
        status: Status,
        message: String,
    ) -> LogsResponse {
        self.record(args, device, status, catalog::step_failed(label));
        LogsResponse::bare(status, message)
    }

    /// Writes a history step. A store that cannot be written to is logged, not fatal: the read
    /// itself already happened or was refused.
    pub(crate) fn record(
        &self,
        args: &StepArgs,
        device: Option<&DeviceId>,
        status: Status,
        step: String,
    ) {
        self.inner.steps.fetch_add(1, Ordering::SeqCst);
        let device = device.map(DeviceId::to_string);
        let result = self.gateway().inner.store.record_step(&NewStep {
            task_id: &self.inner.task_id,
            agent: &self.inner.spec.agent.name,
            device: device.as_deref(),
            status,
            step,
            args: args.clone(),
        });
        if let Err(error) = result {
            tracing::error!(%error, "could not write a history step");
        }
    }

    pub(crate) fn steps_recorded(&self) -> u64 {
        self.inner.steps.load(Ordering::SeqCst)
    }

    /// Waits until the person answers `approval_id` (in this process or another: the store is
    /// polled), up to `timeout`. `None` when the time ran out, the approval expired, or there is
    /// no such approval.
    pub async fn wait_for_answer(&self, approval_id: &str, timeout: Duration) -> Option<Answer> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            match self.gateway().inner.store.approval(approval_id) {
                Ok(Some(approval)) => {
                    if let Some(answer) = approval.answer {
                        return Some(answer);
                    }
                    if approval.state == ApprovalState::Expired {
                        return None;
                    }
                }
                Ok(None) => return None,
                Err(error) => {
                    tracing::warn!(%error, "could not read an approval while waiting");
                }
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return None;
            }
            tokio::time::sleep(ANSWER_POLL.min(deadline - now)).await;
        }
    }

    /// Ends the task: its pending approvals expire and every listening driver stops listening
    /// for the apps it read. Ending twice does nothing more.
    pub async fn end(&self) {
        if self.inner.ended.swap(true, Ordering::SeqCst) {
            return;
        }
        if let Err(error) = self.gateway().inner.store.end_task(&self.inner.task_id) {
            tracing::error!(%error, "could not record the end of the task");
        }
        let read: Vec<(usize, DeviceId, AppId)> = self
            .inner
            .read
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain()
            .collect();
        for (index, device, app) in read {
            let driver = self.driver(index);
            if let Some(listener) = driver.listener()
                && let Err(error) = listener.stop_app_logs(&device, &app).await
            {
                tracing::warn!(%error, %device, %app, "could not stop listening");
            }
        }
    }
}

pub(crate) fn driver_error_status(
    error: &phonelogs_driver::Error,
    app: &AppId,
    device: &DeviceId,
) -> (Status, String) {
    match error.kind() {
        ErrorKind::Unsupported => (Status::Unsupported, error.to_string()),
        ErrorKind::NotFound => (
            Status::Error,
            catalog::not_installed(app.as_str(), device.as_str()),
        ),
        _ => (Status::Error, error.to_string()),
    }
}
