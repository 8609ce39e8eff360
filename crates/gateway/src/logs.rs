//! The whole `phone_logs` call: the arguments, the policy from the app's id, the phone and the
//! person, the read, and the layout within the result cap.

use phonelogs_driver::{AppId, AppLogger, ErrorKind, LogLevel, LogQuery};
use phonelogs_policy::Action;
use time::OffsetDateTime;

use crate::catalog;
use crate::permission::{Ask, Gate};
use crate::render::{render_lines, render_reports};
use crate::session::{Session, Target, driver_error_status};
use crate::since::parse_since;
use crate::types::{LogsKind, LogsRequest, LogsResponse, Status, StepArgs, TextShown};

/// The default and largest `limit` for lines.
pub const LOG_LIMITS: (u32, u32) = (200, 500);
/// The default and largest `limit` for crash reports.
pub const CRASH_LIMITS: (u32, u32) = (3, 10);
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

impl Session {
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
            self.started_at(),
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
        self.mark_read(&target);
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

    fn driver_failed(
        &self,
        args: &StepArgs,
        target: &Target,
        error: phonelogs_driver::Error,
    ) -> LogsResponse {
        let (status, message) = driver_error_status(&error, &target.info.app, &target.device);
        self.failed(args, Some(&target.device), &target.label, status, message)
    }
}
