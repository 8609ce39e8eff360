//! [`GuardedLogger`]: a driver wrapped so that every call has a timeout, every line's uid is
//! checked again against the app's, and crash reports come newest first within the limit. The
//! gateway reads every driver through one, and other embedders can too.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use phonelogs_driver::{
    AppDebugger, AppId, AppInfo, AppLogger, Capabilities, ClearDebugAppResult, ConfirmingReader,
    CrashReport, CrashResult, DeviceId, DeviceInfo, Error, JdwpProcessList, LineStream,
    LogListener, LogQuery, LogResult, NativeBacktrace, ProcessExitHistory, ProcessOwner, Result,
    SetDebugAppResult, TombstoneCapture,
};
use time::OffsetDateTime;

use phonelogs_view::lines::{newlines, one_line, one_line_error, one_line_field, one_line_notice};
use phonelogs_view::render::{own_lines, report_is_the_apps};

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

    /// What the driver holds about `app` from its last round trip with `device`, when its reads
    /// confirm it ([`ConfirmingReader::held_app_info`]; no device call). `None` from a driver
    /// that is read in two steps.
    pub fn held_app_info(&self, device: &DeviceId, app: &AppId) -> Option<AppInfo> {
        self.inner.confirming_reader()?.held_app_info(device, app)
    }

    /// The app's lines, each checked again against `info`'s uid: a driver that returns mixed
    /// lines (a logcat that ignored `--uid`) leaks nothing. A [`ConfirmingReader`] confirms
    /// `info` in the read's own round trip ([`phonelogs_driver::Error::Changed`] when the phone
    /// says otherwise, with nothing returned).
    pub async fn own_logs(
        &self,
        device: &DeviceId,
        info: &AppInfo,
        query: &LogQuery,
    ) -> Result<LogResult> {
        refuse_shared_uid(info)?;
        let read = match self.inner.confirming_reader() {
            Some(reader) => reader.confirmed_app_logs(device, info, query),
            None => self.inner.app_logs(device, &info.app, query),
        };
        let result = self.timed("reading the app's log lines", read).await?;
        let (mut lines, dropped) =
            own_lines(result.lines, info, self.inner.capabilities().line_uids)?;
        if dropped > 0 {
            tracing::warn!(app = %info.app, dropped, "the driver returned lines of other processes; they were dropped");
        }
        // Lines come oldest first, at most the count: enforce both whatever the driver did.
        lines.sort_by_key(|line| line.time);
        let extra = lines.len().saturating_sub(query.count);
        lines.drain(..extra);
        // What the driver says of processes is used only for those whose lines passed.
        let mut processes = result.processes;
        processes.retain(|span| lines.iter().any(|line| line.pid == Some(span.pid)));
        Ok(LogResult {
            lines,
            omitted: result.omitted + extra,
            mark: result.mark,
            processes,
            notices: result.notices.into_iter().map(one_line_notice).collect(),
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
        let read = match self.inner.confirming_reader() {
            Some(reader) => reader.confirmed_app_crash_result(device, info, since, limit),
            None => self.inner.app_crash_result(device, &info.app, since, limit),
        };
        let CrashResult {
            mut reports,
            unconfirmed,
        } = self.timed("reading the app's crash reports", read).await?;
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
        // line for one reader and not for another (`phonelogs_view::lines`).
        for report in &mut reports {
            if let std::borrow::Cow::Owned(text) = phonelogs_view::lines::newlines(&report.text) {
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

    fn confirming_reader(&self) -> Option<&dyn ConfirmingReader> {
        self.inner
            .confirming_reader()
            .map(|_| self as &dyn ConfirmingReader)
    }
}

/// Reached only when the wrapped driver is a [`ConfirmingReader`]: its reads with the checks
/// of [`GuardedLogger::own_logs`] and [`GuardedLogger::own_crash_result`].
#[async_trait]
impl ConfirmingReader for GuardedLogger {
    fn held_app_info(&self, device: &DeviceId, app: &AppId) -> Option<AppInfo> {
        GuardedLogger::held_app_info(self, device, app)
    }

    async fn confirmed_app_logs(
        &self,
        device: &DeviceId,
        expected: &AppInfo,
        query: &LogQuery,
    ) -> Result<LogResult> {
        self.own_logs(device, expected, query).await
    }

    async fn confirmed_app_crash_result(
        &self,
        device: &DeviceId,
        expected: &AppInfo,
        since: OffsetDateTime,
        limit: usize,
    ) -> Result<CrashResult> {
        self.own_crash_result(device, expected, since, limit).await
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
        let mut history = self
            .timed(
                "dumpsys activity exit-info",
                debugger.process_exit_history(device, package),
            )
            .await?;
        for record in &mut history.records {
            for field in [
                &mut record.timestamp,
                &mut record.process,
                &mut record.reason,
                &mut record.subreason,
                &mut record.pss,
            ] {
                one_line_field(field);
            }
        }
        Ok(history)
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
        let mut backtrace = self
            .timed("debuggerd -b", debugger.native_backtrace(device, pid))
            .await?;
        one_line_field(&mut backtrace.process_name);
        one_line_field(&mut backtrace.abi);
        for thread in &mut backtrace.threads {
            if let Cow::Owned(name) = one_line(&thread.name) {
                thread.name = name;
            }
        }
        if let Cow::Owned(text) = newlines(&backtrace.text) {
            backtrace.text = text;
        }
        Ok(backtrace)
    }

    async fn native_tombstone(&self, device: &DeviceId, pid: i64) -> Result<TombstoneCapture> {
        let debugger = self.inner.debugger().ok_or_else(no_debugger)?;
        // The bytes are the file written, as the phone printed them; the fields reach the
        // agent.
        let mut capture = self
            .timed("debuggerd", debugger.native_tombstone(device, pid))
            .await?;
        for field in [
            &mut capture.process_name,
            &mut capture.abi,
            &mut capture.signal,
            &mut capture.device_tombstone_ref,
        ] {
            one_line_field(field);
        }
        Ok(capture)
    }
}
