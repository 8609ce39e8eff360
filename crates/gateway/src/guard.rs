//! [`GuardedLogger`]: a driver wrapped so that every call has a timeout, every line's uid is
//! checked again against the app's, and crash reports come newest first within the limit. The
//! gateway reads every driver through one, and other embedders can too.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use phonelogs_driver::{
    AppDebugger, AppId, AppInfo, AppLogger, Capabilities, ClearDebugAppResult, CrashReport,
    CrashResult, DeviceId, DeviceInfo, Error, JdwpProcessList, LineStream, LogListener, LogQuery,
    LogResult, NativeBacktrace, ProcessExitHistory, ProcessOwner, Result, SetDebugAppResult,
    TombstoneCapture,
};
use time::OffsetDateTime;

use crate::render::own_lines;

/// How long a driver call may take by default before it is abandoned.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// A driver with timeouts and the gateway's own checks around it.
#[derive(Clone)]
pub struct GuardedLogger {
    inner: Arc<dyn AppLogger>,
    timeout: Duration,
}

impl std::fmt::Debug for GuardedLogger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GuardedLogger")
            .field("platform", &self.inner.capabilities().platform)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl GuardedLogger {
    /// Wraps `inner`; every call gives up after `timeout`.
    pub fn new(inner: Arc<dyn AppLogger>, timeout: Duration) -> Self {
        GuardedLogger { inner, timeout }
    }

    /// The wrapped driver.
    pub fn inner(&self) -> &Arc<dyn AppLogger> {
        &self.inner
    }

    async fn timed<T>(&self, what: &str, call: impl Future<Output = Result<T>>) -> Result<T> {
        match tokio::time::timeout(self.timeout, call).await {
            Ok(result) => result.map_err(one_line_error),
            Err(_) => Err(Error::Timeout {
                what: what.to_owned(),
                after: self.timeout,
            }),
        }
    }

    /// The app's lines, each checked again against `info`'s uid: a driver that returns mixed
    /// lines (a logcat that ignored `--uid`) leaks nothing.
    pub async fn own_logs(
        &self,
        device: &DeviceId,
        info: &AppInfo,
        query: &LogQuery,
    ) -> Result<LogResult> {
        refuse_shared_uid(info)?;
        let result = self
            .timed(
                "reading the app's log lines",
                self.inner.app_logs(device, &info.app, query),
            )
            .await?;
        let (mut lines, dropped) =
            own_lines(result.lines, info, self.inner.capabilities().line_uids)?;
        if dropped > 0 {
            tracing::warn!(app = %info.app, dropped, "the driver returned lines of other processes; they were dropped");
        }
        // Lines come oldest first, at most the count: enforce both whatever the driver did.
        lines.sort_by_key(|line| line.time);
        let extra = lines.len().saturating_sub(query.count);
        lines.drain(..extra);
        Ok(LogResult {
            lines,
            omitted: result.omitted + extra,
            mark: result.mark,
        })
    }

    /// A stream of the app's new lines (see [`AppLogger::follow_app_logs`]), each checked
    /// again against `info`'s uid as [`GuardedLogger::own_logs`] checks a dump's: a line of
    /// another uid is dropped, a line without one where lines carry uids ends the stream with
    /// an error. Opening it has the call timeout; reading it waits as long as the caller does.
    pub async fn follow_own_logs(
        &self,
        device: &DeviceId,
        info: &AppInfo,
        query: &LogQuery,
    ) -> Result<Box<dyn LineStream>> {
        refuse_shared_uid(info)?;
        let inner = self
            .timed(
                "opening the app's log stream",
                self.inner.follow_app_logs(device, &info.app, query),
            )
            .await?;
        Ok(Box::new(CheckedStream {
            inner,
            info: info.clone(),
            line_uids: self.inner.capabilities().line_uids,
            query: query.clone(),
        }))
    }

    /// The app's reports, newest first, at most `limit`, each named after the app's process.
    /// The same as [`GuardedLogger::own_crash_result`] without the count of reports left out.
    pub async fn own_crashes(
        &self,
        device: &DeviceId,
        info: &AppInfo,
        since: OffsetDateTime,
        limit: usize,
    ) -> Result<Vec<CrashReport>> {
        Ok(self
            .own_crash_result(device, info, since, limit)
            .await?
            .reports)
    }

    /// The app's reports, newest first, at most `limit`, each named after the app's process,
    /// and how many reports the driver left out because it could not confirm they are this
    /// copy's of the app (for the message, [`crate::catalog::unconfirmed_reports`]).
    pub async fn own_crash_result(
        &self,
        device: &DeviceId,
        info: &AppInfo,
        since: OffsetDateTime,
        limit: usize,
    ) -> Result<CrashResult> {
        refuse_shared_uid(info)?;
        // Report times are whole seconds on most phones (the drop box prints no fraction), while
        // a task starts at any instant: a crash in the task's first second would otherwise fall
        // before `since` and be lost. Compare at the reports' resolution.
        let since = since.replace_nanosecond(0).unwrap_or(since);
        let CrashResult {
            mut reports,
            unconfirmed,
        } = self
            .timed(
                "reading the app's crash reports",
                self.inner.app_crash_result(device, &info.app, since, limit),
            )
            .await?;
        let before = reports.len();
        reports.retain(|report| {
            report.time >= since && report_is_the_apps(report, info, self.inner.capabilities())
        });
        if reports.len() < before {
            tracing::warn!(app = %info.app, dropped = before - reports.len(), "the driver returned reports of other processes; they were dropped");
        }
        reports.sort_by_key(|report| std::cmp::Reverse(report.time));
        reports.truncate(limit);
        // A report's text is shown as lines: each of its line ends is a `\n`, so none ends a
        // line for one reader and not for another (`crate::lines`).
        for report in &mut reports {
            if let std::borrow::Cow::Owned(text) = crate::lines::newlines(&report.text) {
                report.text = text;
            }
        }
        Ok(CrashResult {
            reports,
            unconfirmed,
        })
    }
}

/// A driver's stream with the gateway's checks on every line.
struct CheckedStream {
    inner: Box<dyn LineStream>,
    info: AppInfo,
    line_uids: bool,
    query: LogQuery,
}

#[async_trait]
impl LineStream for CheckedStream {
    async fn next_line(&mut self) -> Option<Result<phonelogs_driver::LogLine>> {
        loop {
            let line = match self.inner.next_line().await? {
                Ok(line) => line,
                Err(error) => return Some(Err(one_line_error(error))),
            };
            match own_lines(vec![line], &self.info, self.line_uids) {
                Ok((mut kept, _)) => match kept.pop() {
                    Some(line) if self.query.matches(&line) => return Some(Ok(line)),
                    Some(_) => {}
                    None => {
                        tracing::warn!(app = %self.info.app, "the driver's stream carried a line of another uid; it was dropped");
                    }
                },
                Err(error) => return Some(Err(error)),
            }
        }
    }
}

/// A driver's error with its text on one line ([`crate::lines::one_line`]): the text can be
/// what a phone or a farm's adb server said, and it reaches the agent in a message.
fn one_line_error(error: Error) -> Error {
    let line = |text: String| match crate::lines::one_line(&text) {
        std::borrow::Cow::Borrowed(_) => text,
        std::borrow::Cow::Owned(line) => line,
    };
    match error {
        Error::NotFound(text) => Error::NotFound(line(text)),
        Error::Unsupported(text) => Error::Unsupported(line(text)),
        Error::PermissionDenied(text) => Error::PermissionDenied(line(text)),
        Error::DeviceNotFound(text) => Error::DeviceNotFound(line(text)),
        Error::DeviceUnavailable(text) => Error::DeviceUnavailable(line(text)),
        Error::InvalidArgument(text) => Error::InvalidArgument(line(text)),
        Error::Disconnected(text) => Error::Disconnected(line(text)),
        Error::Changed(text) => Error::Changed(line(text)),
        Error::Timeout { what, after } => Error::Timeout {
            what: line(what),
            after,
        },
        Error::Backend { message, source } => Error::Backend {
            message: line(message),
            source,
        },
        other => other,
    }
}

/// An app that shares its uid is never read: its lines and reports cannot be told apart from
/// the other packages'. The driver refuses too; this holds whatever the driver does.
fn refuse_shared_uid(info: &AppInfo) -> Result<()> {
    if info.shared_uid {
        return Err(Error::Unsupported(format!(
            "{} shares its uid with other packages, so its lines cannot be told apart from theirs",
            info.app
        )));
    }
    Ok(())
}

/// Whether a report is the app's own: where reports name the app's process by its package
/// (Android), the package itself or one of its `package:name` processes; otherwise (an iPhone
/// report names the executable) the driver's own match by the bundle id in the header stands.
fn report_is_the_apps(report: &CrashReport, info: &AppInfo, capabilities: Capabilities) -> bool {
    if !capabilities.reports_name_package {
        return true;
    }
    let app = info.app.as_str();
    report.process == app
        || report
            .process
            .strip_prefix(app)
            .is_some_and(|rest| rest.starts_with(':'))
}

#[async_trait]
impl AppLogger for GuardedLogger {
    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }

    async fn devices(&self) -> Result<Vec<DeviceInfo>> {
        self.timed("listing devices", self.inner.devices()).await
    }

    async fn app_info(&self, device: &DeviceId, app: &AppId) -> Result<AppInfo> {
        self.timed("looking up the app", self.inner.app_info(device, app))
            .await
    }

    async fn app_logs(
        &self,
        device: &DeviceId,
        app: &AppId,
        query: &LogQuery,
    ) -> Result<LogResult> {
        let info = self.app_info(device, app).await?;
        self.own_logs(device, &info, query).await
    }

    async fn app_crashes(
        &self,
        device: &DeviceId,
        app: &AppId,
        since: OffsetDateTime,
        limit: usize,
    ) -> Result<Vec<CrashReport>> {
        let info = self.app_info(device, app).await?;
        self.own_crashes(device, &info, since, limit).await
    }

    async fn app_crash_result(
        &self,
        device: &DeviceId,
        app: &AppId,
        since: OffsetDateTime,
        limit: usize,
    ) -> Result<CrashResult> {
        let info = self.app_info(device, app).await?;
        self.own_crash_result(device, &info, since, limit).await
    }

    async fn dev_build(&self, device: &DeviceId, app: &AppId) -> Result<bool> {
        self.timed(
            "checking for a development build",
            self.inner.dev_build(device, app),
        )
        .await
    }

    fn listener(&self) -> Option<&dyn LogListener> {
        self.inner.listener().map(|_| self as &dyn LogListener)
    }

    fn debugger(&self) -> Option<&dyn AppDebugger> {
        self.inner.debugger().map(|_| self as &dyn AppDebugger)
    }
}

#[async_trait]
impl LogListener for GuardedLogger {
    async fn stop_app_logs(&self, device: &DeviceId, app: &AppId) -> Result<()> {
        match self.inner.listener() {
            Some(listener) => {
                self.timed("stopping the listener", listener.stop_app_logs(device, app))
                    .await
            }
            None => Ok(()),
        }
    }
}

fn no_debugger() -> Error {
    Error::Unsupported("this driver has no debugging aids".into())
}

#[async_trait]
impl AppDebugger for GuardedLogger {
    async fn process_exit_history(
        &self,
        device: &DeviceId,
        package: &AppId,
    ) -> Result<ProcessExitHistory> {
        let debugger = self.inner.debugger().ok_or_else(no_debugger)?;
        self.timed(
            "dumpsys activity exit-info",
            debugger.process_exit_history(device, package),
        )
        .await
    }

    async fn set_debug_app(
        &self,
        device: &DeviceId,
        package: &AppId,
        wait_for_debugger: bool,
        persistent: bool,
    ) -> Result<SetDebugAppResult> {
        let debugger = self.inner.debugger().ok_or_else(no_debugger)?;
        self.timed(
            "am set-debug-app",
            debugger.set_debug_app(device, package, wait_for_debugger, persistent),
        )
        .await
    }

    async fn clear_debug_app(&self, device: &DeviceId) -> Result<ClearDebugAppResult> {
        let debugger = self.inner.debugger().ok_or_else(no_debugger)?;
        self.timed("am clear-debug-app", debugger.clear_debug_app(device))
            .await
    }

    async fn jdwp_processes(&self, device: &DeviceId) -> Result<JdwpProcessList> {
        let debugger = self.inner.debugger().ok_or_else(no_debugger)?;
        self.timed("adb jdwp", debugger.jdwp_processes(device))
            .await
    }

    async fn process_owner(&self, device: &DeviceId, pid: i64) -> Result<ProcessOwner> {
        let debugger = self.inner.debugger().ok_or_else(no_debugger)?;
        self.timed(
            "reading the owner of a process",
            debugger.process_owner(device, pid),
        )
        .await
    }

    async fn process_owners(&self, device: &DeviceId, pids: &[i64]) -> Result<Vec<ProcessOwner>> {
        let debugger = self.inner.debugger().ok_or_else(no_debugger)?;
        self.timed(
            "reading the owners of processes",
            debugger.process_owners(device, pids),
        )
        .await
    }

    async fn native_backtrace(&self, device: &DeviceId, pid: i64) -> Result<NativeBacktrace> {
        let debugger = self.inner.debugger().ok_or_else(no_debugger)?;
        self.timed("debuggerd -b", debugger.native_backtrace(device, pid))
            .await
    }

    async fn native_tombstone(&self, device: &DeviceId, pid: i64) -> Result<TombstoneCapture> {
        let debugger = self.inner.debugger().ok_or_else(no_debugger)?;
        self.timed("debuggerd", debugger.native_tombstone(device, pid))
            .await
    }
}
