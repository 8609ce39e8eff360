//! A task's session: the whole `phone_logs` call, the approvals, the end of the task.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use phonelogs_driver::{
    AppId, AppInfo, AppLogger, DeviceId, DeviceState, ErrorKind, LogLevel, LogQuery,
};
use phonelogs_policy::{Decision, Rule};
use time::OffsetDateTime;

use crate::render::{render_lines, render_reports};
use crate::since::parse_since;
use crate::store::NewStep;
use crate::types::{Answer, ApprovalState, LogsKind, LogsRequest, LogsResponse, Status, StepArgs};
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
    pub async fn logs(&self, request: LogsRequest) -> LogsResponse {
        let args = StepArgs {
            app: request.app.trim().to_owned(),
            kind: request.kind.as_str().to_owned(),
            since: request.since.clone(),
            filter: request.filter.clone(),
            level: request.level.clone(),
            limit: request.limit,
        };
        if self.ended() {
            return LogsResponse::bare(Status::Error, catalog::task_ended());
        }
        let app = match AppId::parse(&request.app) {
            Ok(app) => app,
            Err(error) => return LogsResponse::bare(Status::Error, error.to_string()),
        };
        // Arguments first: a wrong call is answered before anything touches a phone.
        let level = match request
            .level
            .as_deref()
            .map(str::trim)
            .filter(|l| !l.is_empty())
        {
            None => None,
            Some(text) => match LogLevel::from_name(text) {
                Some(level) => Some(level),
                None => {
                    return self.failed(
                        &args,
                        None,
                        app.as_str(),
                        Status::Error,
                        catalog::level_error(text),
                    );
                }
            },
        };
        let (default_limit, max_limit) = match request.kind {
            LogsKind::Logs => LOG_LIMITS,
            LogsKind::Crashes => CRASH_LIMITS,
        };
        let limit = request.limit.unwrap_or(default_limit);
        if limit == 0 || limit > max_limit {
            return self.failed(
                &args,
                None,
                app.as_str(),
                Status::Error,
                catalog::limit_error(request.kind.as_str(), limit, max_limit),
            );
        }
        let now = self.gateway().now();
        let since = match parse_since(
            request.since.as_deref(),
            now,
            self.gateway().local_offset(),
            self.inner.started_at,
        ) {
            Ok(since) => since,
            Err(message) => return self.failed(&args, None, app.as_str(), Status::Error, message),
        };

        let target = match self.resolve(request.device.as_deref(), &app, &args).await {
            Ok(target) => target,
            Err(response) => return *response,
        };
        let capabilities = self.driver(target.driver_index).capabilities();
        let able = match request.kind {
            LogsKind::Logs => capabilities.logs,
            LogsKind::Crashes => capabilities.crashes,
        };
        if !able {
            let message = format!("this phone's driver cannot read {}.", request.kind.as_str());
            return self.failed(
                &args,
                Some(&target.device),
                &target.label,
                Status::Unsupported,
                message,
            );
        }
        match self
            .permit(&target, request.approval_id.as_deref(), &args)
            .await
        {
            Gate::Go => {}
            Gate::Stop(response) => return response,
        }

        let driver = self.driver(target.driver_index).clone();
        self.inner
            .read
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert((target.driver_index, target.device.clone(), app.clone()));
        let local = self.gateway().local_offset();
        match request.kind {
            LogsKind::Logs => {
                let mut query = LogQuery::since(since, limit as usize);
                query.level = level;
                query.filter = request.filter.clone().filter(|f| !f.is_empty());
                match driver.own_logs(&target.device, &target.info, &query).await {
                    Ok(result) => {
                        let (log, lines, size_left_out) = render_lines(&result.lines, local);
                        let omitted = result.omitted + size_left_out;
                        self.record(
                            &args,
                            Some(&target.device),
                            Status::Ok,
                            catalog::step_read_lines(lines.len(), &target.label),
                        );
                        LogsResponse {
                            status: Status::Ok,
                            message: catalog::lines_message(lines.len(), &target.label, omitted),
                            approval_id: None,
                            rule: Some(catalog::names::APP_LOGS.to_owned()),
                            log,
                            lines,
                            reports: Vec::new(),
                            omitted,
                        }
                    }
                    Err(error) => self.driver_failed(&args, &target, error),
                }
            }
            LogsKind::Crashes => match driver
                .own_crashes(&target.device, &target.info, since, limit as usize)
                .await
            {
                Ok(reports) => {
                    let (log, views, cut) = render_reports(&reports);
                    self.record(
                        &args,
                        Some(&target.device),
                        Status::Ok,
                        catalog::step_read_reports(views.len(), &target.label),
                    );
                    LogsResponse {
                        status: Status::Ok,
                        message: catalog::reports_message(views.len(), &target.label, cut),
                        approval_id: None,
                        rule: Some(catalog::names::APP_LOGS.to_owned()),
                        log,
                        lines: Vec::new(),
                        reports: views,
                        omitted: 0,
                    }
                }
                Err(error) => self.driver_failed(&args, &target, error),
            },
        }
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

    /// The policy and the person: scope, blocks, development builds, grants, approvals.
    pub(crate) async fn permit(
        &self,
        target: &Target,
        approval_id: Option<&str>,
        args: &StepArgs,
    ) -> Gate {
        let gateway = self.gateway();
        let store = &gateway.inner.store;
        let agent = &self.inner.spec.agent;
        let device = Some(&target.device);
        let label = target.label.as_str();
        let mut decision = gateway.inner.policy.logs_decision(
            agent,
            self.inner.spec.apps.as_deref(),
            &target.info,
        );
        if !matches!(decision, Decision::ScopeDenied(_)) {
            match store.is_blocked(&target.info.app) {
                // A person's block names its own rule, unless the curated lists refuse the app
                // anyway (their names say more).
                Ok(true)
                    if gateway
                        .inner
                        .policy
                        .logs_refused(&target.info.app)
                        .is_none() =>
                {
                    decision = Decision::Blocked(Rule::BlockedApps);
                }
                Ok(_) => {}
                Err(error) => {
                    return Gate::Stop(self.failed(
                        args,
                        device,
                        label,
                        Status::Error,
                        error.to_string(),
                    ));
                }
            }
        }
        match decision {
            Decision::ScopeDenied(reason) => {
                self.record(
                    args,
                    device,
                    Status::ScopeDenied,
                    catalog::step_outside_scope(label),
                );
                return Gate::Stop(LogsResponse::bare(
                    Status::ScopeDenied,
                    catalog::scope_message(reason, label),
                ));
            }
            Decision::Blocked(rule) => {
                let name = catalog::rule_name(&rule);
                self.record(
                    args,
                    device,
                    Status::BlockedByPolicy,
                    catalog::step_blocked(&name, label),
                );
                let mut response = LogsResponse::bare(
                    Status::BlockedByPolicy,
                    catalog::blocked_message(&name, label),
                );
                response.rule = Some(name);
                return Gate::Stop(response);
            }
            Decision::Allowed => {}
        }
        // A development build is the app the agent is testing: no question.
        if target.info.dev_build {
            return Gate::Go;
        }
        let rule = catalog::names::APP_LOGS;
        let task_id = self.inner.task_id.as_str();
        if let Some(approval_id) = approval_id.map(str::trim).filter(|a| !a.is_empty()) {
            let approval = match store.approval(approval_id) {
                Ok(Some(approval)) => approval,
                Ok(None) => {
                    return Gate::Stop(self.failed(
                        args,
                        device,
                        label,
                        Status::Error,
                        catalog::approval_unknown(approval_id),
                    ));
                }
                Err(error) => {
                    return Gate::Stop(self.failed(
                        args,
                        device,
                        label,
                        Status::Error,
                        error.to_string(),
                    ));
                }
            };
            if approval.task_id != task_id
                || approval.agent != agent.name
                || approval.device != target.device.as_str()
                || approval.app != target.info.app.as_str()
            {
                return Gate::Stop(self.failed(
                    args,
                    device,
                    label,
                    Status::Error,
                    catalog::approval_mismatch(approval_id),
                ));
            }
            return match (approval.state, approval.answer) {
                (ApprovalState::Pending, _) => Gate::Stop(pending(&approval.id, label)),
                (ApprovalState::Expired, _) => Gate::Stop(self.failed(
                    args,
                    device,
                    label,
                    Status::Error,
                    catalog::approval_expired(approval_id),
                )),
                (_, Some(Answer::Deny)) => {
                    self.record(args, device, Status::Denied, catalog::step_denied(label));
                    let mut response =
                        LogsResponse::bare(Status::Denied, catalog::denied_message(rule, label));
                    response.rule = Some(rule.to_owned());
                    Gate::Stop(response)
                }
                (ApprovalState::Answered, Some(Answer::Once)) => {
                    match store.use_once(approval_id) {
                        Ok(true) => Gate::Go,
                        Ok(false) => Gate::Stop(self.failed(
                            args,
                            device,
                            label,
                            Status::Error,
                            catalog::approval_used(approval_id),
                        )),
                        Err(error) => Gate::Stop(self.failed(
                            args,
                            device,
                            label,
                            Status::Error,
                            error.to_string(),
                        )),
                    }
                }
                (ApprovalState::Answered, Some(Answer::Task | Answer::Always)) => Gate::Go,
                _ => match store.covered(task_id, &agent.name, &target.device, &target.info.app) {
                    Ok(true) => Gate::Go,
                    _ => Gate::Stop(self.failed(
                        args,
                        device,
                        label,
                        Status::Error,
                        catalog::approval_used(approval_id),
                    )),
                },
            };
        }
        match store.covered(task_id, &agent.name, &target.device, &target.info.app) {
            Ok(true) => return Gate::Go,
            Ok(false) => {}
            Err(error) => {
                return Gate::Stop(self.failed(
                    args,
                    device,
                    label,
                    Status::Error,
                    error.to_string(),
                ));
            }
        }
        let question = catalog::question(label);
        match store.pending_or_create(
            task_id,
            &agent.name,
            &target.device,
            &target.info.app,
            label,
            &question,
            rule,
            gateway.now(),
        ) {
            Ok((approval, created)) => {
                if created {
                    self.record(
                        args,
                        device,
                        Status::ApprovalPending,
                        catalog::step_waiting(label),
                    );
                }
                Gate::Stop(pending(&approval.id, label))
            }
            Err(error) => {
                Gate::Stop(self.failed(args, device, label, Status::Error, error.to_string()))
            }
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

fn pending(approval_id: &str, label: &str) -> LogsResponse {
    let mut response = LogsResponse::bare(
        Status::ApprovalPending,
        catalog::pending_message(label, approval_id),
    );
    response.approval_id = Some(approval_id.to_owned());
    response.rule = Some(catalog::names::APP_LOGS.to_owned());
    response
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
