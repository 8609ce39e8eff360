//! # phonelogs-fake
//!
//! [`FakePhone`] is an in-memory phone that implements the whole driver contract
//! ([`AppLogger`], [`LogListener`], [`AppDebugger`]). It is what the gateway's and the MCP
//! server's tests run on, and the spec's `fake` driver: `add_app`, `add_logs`, `add_crash`,
//! `set_dev_build`. Scripted faults ([`Fault`]) let the layers above test their failure paths: an
//! operation that errors, hangs past a timeout, or disconnects after N lines.
//!
//! It keeps the contract as a real driver does: it returns only the asked app's lines, unless
//! [`FakePhone::set_ignore_uid_filter`] makes it behave like a logcat that ignores `--uid`
//! (every line of the device, tagged with its own uid), which is how the gateway proves it checks
//! every line again.
//!
//! ```
//! use phonelogs_driver::{AppId, AppLogger, DeviceId, LogLevel, LogLine, LogQuery};
//! use phonelogs_fake::{FakeApp, FakePhone};
//! use time::macros::datetime;
//!
//! # tokio_test();
//! # fn tokio_test() {
//! # let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
//! # rt.block_on(async {
//! let phone = FakePhone::new();
//! let device = DeviceId::new("emulator-5554");
//! phone.add_device(&device, "Pixel 8");
//! let app = AppId::new("com.example.app");
//! phone.add_app(&device, FakeApp::new(app.clone()).label("Example").uid(10123));
//! phone.add_logs(&device, &app, [LogLine {
//!     time: datetime!(2026-11-30 10:00:01 UTC),
//!     level: LogLevel::Info,
//!     tag: "Example".into(),
//!     text: "started".into(),
//!     pid: Some(4242),
//!     tid: Some(4242),
//!     uid: Some(10123),
//! }]);
//!
//! let query = LogQuery::since(datetime!(2026-11-30 10:00 UTC), 200);
//! let result = phone.app_logs(&device, &app, &query).await?;
//! assert_eq!(result.lines.len(), 1);
//! assert!(!phone.dev_build(&device, &app).await?);
//! # Ok::<(), phonelogs_driver::Error>(())
//! # }).unwrap();
//! # }
//! ```

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use async_trait::async_trait;
#[cfg(feature = "conformance")]
use phonelogs_driver::conformance::{Scenario, ScenarioApp};
use phonelogs_driver::{
    AppDebugger, AppId, AppInfo, AppLogger, Capabilities, ClearDebugAppResult, CrashReport,
    DeviceId, DeviceInfo, DeviceState, Error, ExitRecord, JdwpProcessList, LogLine, LogListener,
    LogNotice, LogQuery, LogResult, NativeBacktrace, Platform, ProcessExitHistory, ProcessOwner,
    Result, SetDebugAppResult, TombstoneCapture, check_pid,
};
use time::OffsetDateTime;

mod live;

/// An app installed on a fake device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeApp {
    /// Its id.
    pub app: AppId,
    /// The name people know it by.
    pub label: Option<String>,
    /// Its uid, stamped on lines added without one.
    pub uid: Option<u32>,
    /// One of the phone's own apps.
    pub system: bool,
    /// A development build.
    pub dev_build: bool,
    /// Shares its uid with other packages, so its lines cannot be told apart.
    pub shared_uid: bool,
    /// The installed version (`versionCode` or `CFBundleVersion`), when set.
    pub version: Option<String>,
    /// When the installed build was installed, when set (a reinstall: `add_app` again with a
    /// later time).
    pub installed_at: Option<OffsetDateTime>,
    /// What tells this install from another where no install time is given (an iPhone's bundle
    /// path), when set.
    pub install_id: Option<String>,
}

impl FakeApp {
    /// A release-built, non-system app with no label.
    pub fn new(app: AppId) -> Self {
        FakeApp {
            app,
            label: None,
            uid: None,
            system: false,
            dev_build: false,
            shared_uid: false,
            version: None,
            installed_at: None,
            install_id: None,
        }
    }

    /// Sets the label.
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    /// Sets the uid.
    pub fn uid(mut self, uid: u32) -> Self {
        self.uid = Some(uid);
        self
    }

    /// Marks it as one of the phone's own apps.
    pub fn system(mut self, system: bool) -> Self {
        self.system = system;
        self
    }

    /// Marks it as a development build.
    pub fn dev_build(mut self, dev_build: bool) -> Self {
        self.dev_build = dev_build;
        self
    }

    /// Sets the installed version (`versionCode` or `CFBundleVersion`).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = Some(version.into());
        self
    }

    /// Sets when the installed build was installed (the phone's clock).
    pub fn installed_at(mut self, at: OffsetDateTime) -> Self {
        self.installed_at = Some(at);
        self
    }

    /// Sets what tells this install from another, as an iPhone's bundle path does (a
    /// reinstall with no install time: `add_app` again with another id).
    pub fn install_id(mut self, id: impl Into<String>) -> Self {
        self.install_id = Some(id.into());
        self
    }

    /// Marks it as sharing its uid with other packages.
    pub fn shared_uid(mut self, shared: bool) -> Self {
        self.shared_uid = shared;
        self
    }
}

/// An operation of the driver contract, to aim a [`Fault`] at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Operation {
    /// `devices`.
    Devices,
    /// `app_info`.
    AppInfo,
    /// `app_logs`.
    AppLogs,
    /// `app_crashes`.
    AppCrashes,
    /// `dev_build`.
    DevBuild,
    /// `stop_app_logs`.
    StopAppLogs,
    /// Any of the six debugging aids.
    Debugger,
}

/// A scripted failure.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fault {
    /// The call fails with a backend error carrying this message.
    Backend(String),
    /// The device refuses (`PermissionDenied`).
    PermissionDenied,
    /// The device (or adb server) is unavailable.
    Unavailable,
    /// The call never answers until this much time has passed, then fails with `Timeout`. Callers
    /// that put their own timeout around the call see theirs first.
    Hang(Duration),
    /// The device goes away: `Disconnected`.
    Disconnect,
    /// `app_logs` delivers this many lines, then the device goes away (`Disconnected`).
    DisconnectAfterLines(usize),
}

#[derive(Debug, Default)]
struct FakeDevice {
    model: String,
    state: Option<DeviceState>,
    apps: BTreeMap<AppId, FakeApp>,
    lines: Vec<(Option<AppId>, LogLine)>,
    crashes: Vec<(AppId, CrashReport)>,
    exit_records: HashMap<AppId, Vec<ExitRecord>>,
    debug_app: Option<AppId>,
    jdwp_pids: Vec<i64>,
    backtraces: HashMap<i64, NativeBacktrace>,
    tombstones: HashMap<i64, TombstoneCapture>,
    debuggerd_allowed: bool,
    /// The running processes: pid to (uid, process name).
    processes: BTreeMap<i64, (u32, String)>,
    /// What the live reads need: every line in the order it was added, the boot, the clock.
    live: live::LiveDevice,
    /// What `app_logs` tells with an app's lines ([`FakePhone::set_log_notices`]).
    notices: HashMap<AppId, Vec<LogNotice>>,
}

/// How many calls [`FakePhone::calls`] remembers; older ones are forgotten.
pub const MAX_CALLS_KEPT: usize = 4096;

#[derive(Debug, Default)]
struct State {
    devices: BTreeMap<DeviceId, FakeDevice>,
    one_shot: HashMap<Operation, Vec<Fault>>,
    always: HashMap<Operation, Fault>,
    ignore_uid_filter: bool,
    listening: HashSet<(DeviceId, AppId)>,
    calls: VecDeque<String>,
    /// Woken whenever lines are added, for the streams ([`AppLogger::follow_app_logs`]).
    added: Arc<tokio::sync::Notify>,
}

/// An in-memory phone (or several) for tests and demos. Cloning shares the same phone.
#[derive(Debug, Clone, Default)]
pub struct FakePhone {
    state: Arc<Mutex<State>>,
    listener: bool,
}

impl FakePhone {
    /// An empty fake with no devices. It keeps log history (like Android's logcat buffers).
    pub fn new() -> Self {
        FakePhone::default()
    }

    /// A fake that behaves as a listening driver (like the iPhone's follower): it reports
    /// `listener` in its capabilities and must be told when a task ends.
    pub fn new_listener() -> Self {
        FakePhone {
            state: Arc::default(),
            listener: true,
        }
    }

    /// A fake holding the conformance [`Scenario`]: its device with the app under test, the other
    /// app, a system app and the system's lines about the app. Only with the `conformance`
    /// feature, which tests turn on.
    #[cfg(feature = "conformance")]
    pub fn with_scenario(scenario: &Scenario) -> Self {
        let phone = FakePhone::new();
        phone.add_device(&scenario.device, "Fake Phone");
        let add = |app: &ScenarioApp| {
            phone.add_app(
                &scenario.device,
                FakeApp::new(app.app.clone())
                    .label(app.label.clone())
                    .uid(app.uid)
                    .system(app.system)
                    .dev_build(app.dev_build),
            );
            phone.add_logs(&scenario.device, &app.app, app.lines.clone());
            for crash in &app.crashes {
                phone.add_crash(&scenario.device, &app.app, crash.clone());
            }
            phone.add_process(
                &scenario.device,
                i64::from(app.pid),
                app.uid,
                app.app.as_str(),
            );
        };
        add(&scenario.app);
        add(&scenario.other_app);
        add(&scenario.system_app);
        phone.add_system_lines(&scenario.device, scenario.system_lines.clone());
        phone
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock only happens in a failing test; the state is still
        // usable for the assertions that follow, so a poisoned lock is taken over.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Adds an online device.
    pub fn add_device(&self, device: &DeviceId, model: &str) {
        let mut state = self.lock();
        let entry = state.devices.entry(device.clone()).or_default();
        entry.model = model.to_owned();
        entry.state = Some(DeviceState::Online);
    }

    /// Sets a device's state (offline, unauthorized, …): reads of a device that is not online are
    /// `DeviceUnavailable`.
    pub fn set_device_state(&self, device: &DeviceId, device_state: DeviceState) {
        let mut state = self.lock();
        if let Some(entry) = state.devices.get_mut(device) {
            entry.state = Some(device_state);
        }
    }

    /// Removes a device, as if it were unplugged.
    pub fn remove_device(&self, device: &DeviceId) {
        self.lock().devices.remove(device);
    }

    /// Installs an app (the spec's `AddApp`). Adding it again replaces its flags, not its lines.
    pub fn add_app(&self, device: &DeviceId, app: FakeApp) {
        let mut state = self.lock();
        let entry = state.devices.entry(device.clone()).or_default();
        entry.apps.insert(app.app.clone(), app);
    }

    /// Adds lines logged by an app (the spec's `AddLogs`). Lines without a uid get the app's.
    pub fn add_logs(
        &self,
        device: &DeviceId,
        app: &AppId,
        lines: impl IntoIterator<Item = LogLine>,
    ) {
        let mut state = self.lock();
        let entry = state.devices.entry(device.clone()).or_default();
        let uid = entry.apps.get(app).and_then(|a| a.uid);
        for mut line in lines {
            if line.uid.is_none() {
                line.uid = uid;
            }
            entry.live.journal(Some(app.clone()), line.clone());
            entry.lines.push((Some(app.clone()), line));
        }
        entry.lines.sort_by_key(|(_, line)| line.time);
        entry.live.wrap(&mut entry.lines);
        state.added.notify_waiters();
    }

    /// Adds lines that belong to no app (the system's, the kernel's): a real driver never returns
    /// them for an app, even when they mention it.
    pub fn add_system_lines(&self, device: &DeviceId, lines: impl IntoIterator<Item = LogLine>) {
        let mut state = self.lock();
        let entry = state.devices.entry(device.clone()).or_default();
        for line in lines {
            entry.live.journal(None, line.clone());
            entry.lines.push((None, line));
        }
        entry.lines.sort_by_key(|(_, line)| line.time);
        entry.live.wrap(&mut entry.lines);
        state.added.notify_waiters();
    }

    /// Adds a crash report of an app (the spec's `AddCrash`).
    pub fn add_crash(&self, device: &DeviceId, app: &AppId, report: CrashReport) {
        let mut state = self.lock();
        let entry = state.devices.entry(device.clone()).or_default();
        entry.crashes.push((app.clone(), report));
    }

    /// Marks an app as a development build or not (the spec's `SetDevBuild`).
    pub fn set_dev_build(&self, device: &DeviceId, app: &AppId, dev_build: bool) {
        let mut state = self.lock();
        if let Some(entry) = state
            .devices
            .get_mut(device)
            .and_then(|d| d.apps.get_mut(app))
        {
            entry.dev_build = dev_build;
        }
    }

    /// Sets an installed app's version, as an update would (`None`: the phone does not say).
    pub fn set_version(&self, device: &DeviceId, app: &AppId, version: Option<&str>) {
        let mut state = self.lock();
        if let Some(entry) = state
            .devices
            .get_mut(device)
            .and_then(|d| d.apps.get_mut(app))
        {
            entry.version = version.map(str::to_owned);
        }
    }

    /// Makes `app_logs` tell `notices` with the app's lines (an iPhone whose processes cannot be
    /// listed, an app that is not running), as a real driver does; empty to stop.
    pub fn set_log_notices(&self, device: &DeviceId, app: &AppId, notices: Vec<LogNotice>) {
        let mut state = self.lock();
        let entry = state.devices.entry(device.clone()).or_default();
        entry.notices.insert(app.clone(), notices);
    }

    /// Makes `app_logs` return every line of the device, like a logcat that ignores `--uid`.
    pub fn set_ignore_uid_filter(&self, ignore: bool) {
        self.lock().ignore_uid_filter = ignore;
    }

    /// Adds an ApplicationExitInfo record for `get_process_exit_history` (newest last).
    pub fn add_exit_record(&self, device: &DeviceId, app: &AppId, record: ExitRecord) {
        let mut state = self.lock();
        let entry = state.devices.entry(device.clone()).or_default();
        entry
            .exit_records
            .entry(app.clone())
            .or_default()
            .push(record);
    }

    /// Sets the pids `adb jdwp` lists (as the device prints them, duplicates included).
    pub fn set_jdwp_pids(&self, device: &DeviceId, pids: Vec<i64>) {
        let mut state = self.lock();
        state.devices.entry(device.clone()).or_default().jdwp_pids = pids;
    }

    /// Lets `debuggerd` run (a rooted or userdebug device) or refuses it (a user build, the
    /// default).
    pub fn set_debuggerd_allowed(&self, device: &DeviceId, allowed: bool) {
        let mut state = self.lock();
        state
            .devices
            .entry(device.clone())
            .or_default()
            .debuggerd_allowed = allowed;
    }

    /// Adds a running process: its pid, the uid it runs as and its name (as
    /// `/proc/<pid>/cmdline` tells it). `process_owner` answers from this table and maps the uid
    /// to the apps added with it; a pid not in it has no process.
    pub fn add_process(&self, device: &DeviceId, pid: i64, uid: u32, name: &str) {
        let mut state = self.lock();
        let entry = state.devices.entry(device.clone()).or_default();
        entry.processes.insert(pid, (uid, name.to_owned()));
    }

    /// Ends a process added with [`FakePhone::add_process`].
    pub fn end_process(&self, device: &DeviceId, pid: i64) {
        let mut state = self.lock();
        if let Some(entry) = state.devices.get_mut(device) {
            entry.processes.remove(&pid);
        }
    }

    /// Sets what `debuggerd -b <pid>` answers for a live pid.
    pub fn set_backtrace(&self, device: &DeviceId, backtrace: NativeBacktrace) {
        let mut state = self.lock();
        let entry = state.devices.entry(device.clone()).or_default();
        entry.backtraces.insert(backtrace.pid, backtrace);
    }

    /// Sets what `debuggerd <pid>` answers for a live pid.
    pub fn set_tombstone(&self, device: &DeviceId, tombstone: TombstoneCapture) {
        let mut state = self.lock();
        let entry = state.devices.entry(device.clone()).or_default();
        entry.tombstones.insert(tombstone.pid, tombstone);
    }

    /// The debug app `set_debug_app` left, if any.
    pub fn debug_app(&self, device: &DeviceId) -> Option<AppId> {
        self.lock()
            .devices
            .get(device)
            .and_then(|d| d.debug_app.clone())
    }

    /// Makes the next call of `operation` fail with `fault` (faults queue up, one per call).
    pub fn fail_next(&self, operation: Operation, fault: Fault) {
        self.lock()
            .one_shot
            .entry(operation)
            .or_default()
            .push(fault);
    }

    /// Makes every call of `operation` fail with `fault` until [`FakePhone::clear_faults`].
    pub fn fail_always(&self, operation: Operation, fault: Fault) {
        self.lock().always.insert(operation, fault);
    }

    /// Removes every scripted fault.
    pub fn clear_faults(&self) {
        let mut state = self.lock();
        state.one_shot.clear();
        state.always.clear();
    }

    /// Whether the fake is listening for `app` on `device` (a listener fake starts on the first
    /// `app_logs` call and stops on `stop_app_logs`).
    pub fn is_listening(&self, device: &DeviceId, app: &AppId) -> bool {
        self.lock()
            .listening
            .contains(&(device.clone(), app.clone()))
    }

    /// The calls made so far (the newest [`MAX_CALLS_KEPT`]), as `operation device app`, for
    /// tests that assert what was asked.
    pub fn calls(&self) -> Vec<String> {
        self.lock().calls.iter().cloned().collect()
    }

    fn take_fault(&self, operation: Operation, call: String) -> Option<Fault> {
        let mut state = self.lock();
        // Only the newest calls are kept, so a long-running demo server stays flat in memory.
        if state.calls.len() >= MAX_CALLS_KEPT {
            state.calls.pop_front();
        }
        state.calls.push_back(call);
        if let Some(queue) = state.one_shot.get_mut(&operation)
            && !queue.is_empty()
        {
            return Some(queue.remove(0));
        }
        state.always.get(&operation).cloned()
    }

    /// Applies a fault that is not about partial delivery; returns the number of lines to deliver
    /// before disconnecting for [`Fault::DisconnectAfterLines`].
    async fn apply(&self, operation: Operation, call: String) -> Result<Option<usize>> {
        match self.take_fault(operation, call) {
            None => Ok(None),
            Some(Fault::Backend(message)) => Err(Error::backend(message)),
            Some(Fault::PermissionDenied) => Err(Error::PermissionDenied(
                "the device refused the command".into(),
            )),
            Some(Fault::Unavailable) => Err(Error::DeviceUnavailable(
                "the fake device is unavailable".into(),
            )),
            Some(Fault::Hang(after)) => {
                tokio::time::sleep(after).await;
                Err(Error::Timeout {
                    what: format!("{operation:?}"),
                    after,
                })
            }
            Some(Fault::Disconnect) => Err(Error::Disconnected("the fake device went away".into())),
            Some(Fault::DisconnectAfterLines(n)) => Ok(Some(n)),
        }
    }

    fn with_device<T>(
        &self,
        device: &DeviceId,
        f: impl FnOnce(&FakeDevice, &State) -> Result<T>,
    ) -> Result<T> {
        let state = self.lock();
        let Some(entry) = state.devices.get(device) else {
            return Err(Error::DeviceNotFound(format!(
                "no device {device} is connected"
            )));
        };
        match &entry.state {
            Some(DeviceState::Online) => f(entry, &state),
            other => Err(Error::DeviceUnavailable(format!(
                "device {device} is {}",
                match other {
                    Some(DeviceState::Offline) => "offline".to_owned(),
                    Some(DeviceState::Unauthorized) => "unauthorized".to_owned(),
                    Some(state) => format!("{state:?}").to_lowercase(),
                    None => "not ready".to_owned(),
                }
            ))),
        }
    }

    fn with_device_mut<T>(
        &self,
        device: &DeviceId,
        f: impl FnOnce(&mut FakeDevice) -> Result<T>,
    ) -> Result<T> {
        let mut state = self.lock();
        match state.devices.get_mut(device) {
            None => Err(Error::DeviceNotFound(format!(
                "no device {device} is connected"
            ))),
            Some(entry) if entry.state != Some(DeviceState::Online) => Err(
                Error::DeviceUnavailable(format!("device {device} is not online")),
            ),
            Some(entry) => f(entry),
        }
    }
}

fn installed<'a>(entry: &'a FakeDevice, app: &AppId) -> Result<&'a FakeApp> {
    entry
        .apps
        .get(app)
        .ok_or_else(|| Error::NotFound(format!("{app} is not installed")))
}

fn blank_package(package: &AppId) -> Result<()> {
    if package.as_str().trim().is_empty() {
        return Err(Error::InvalidArgument("package must not be blank".into()));
    }
    Ok(())
}

#[async_trait]
impl AppLogger for FakePhone {
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            platform: Platform::Android,
            logs: true,
            crashes: true,
            listener: self.listener,
            debugger: true,
            log_history: true,
            // The fake plays an Android phone: its lines carry the app's uid.
            line_uids: true,
            reports_name_package: true,
        }
    }

    async fn devices(&self) -> Result<Vec<DeviceInfo>> {
        self.apply(Operation::Devices, "devices".into()).await?;
        let state = self.lock();
        Ok(state
            .devices
            .iter()
            .map(|(id, device)| DeviceInfo {
                id: id.clone(),
                platform: Platform::Android,
                model: Some(device.model.clone()),
                state: device.state.clone().unwrap_or(DeviceState::Offline),
            })
            .collect())
    }

    async fn app_info(&self, device: &DeviceId, app: &AppId) -> Result<AppInfo> {
        self.apply(Operation::AppInfo, format!("app_info {device} {app}"))
            .await?;
        self.with_device(device, |entry, _| {
            let found = installed(entry, app)?;
            Ok(AppInfo {
                app: app.clone(),
                label: found.label.clone(),
                system: found.system,
                dev_build: found.dev_build,
                uid: found.uid,
                shared_uid: found.shared_uid,
                version: found.version.clone(),
                installed_at: found.installed_at,
                install_id: found.install_id.clone(),
            })
        })
    }

    async fn app_logs(
        &self,
        device: &DeviceId,
        app: &AppId,
        query: &LogQuery,
    ) -> Result<LogResult> {
        let cut = self
            .apply(Operation::AppLogs, format!("app_logs {device} {app}"))
            .await?;
        let result = self.with_device(device, |entry, state| {
            let found = installed(entry, app)?;
            if found.shared_uid {
                return Err(Error::Unsupported(format!(
                    "{app} shares its uid with other packages, so its lines cannot be told apart"
                )));
            }
            let matching: Vec<LogLine> = entry
                .lines
                .iter()
                .filter(|(owner, _)| state.ignore_uid_filter || owner.as_ref() == Some(app))
                .map(|(_, line)| line)
                .filter(|line| query.matches(line))
                .cloned()
                .collect();
            let omitted = matching.len().saturating_sub(query.count);
            Ok(LogResult {
                lines: matching[omitted..].to_vec(),
                omitted,
                mark: Some(entry.live.mark(&entry.lines)),
                processes: Vec::new(),
                notices: entry.notices.get(app).cloned().unwrap_or_default(),
            })
        })?;
        if self.listener {
            self.lock().listening.insert((device.clone(), app.clone()));
        }
        if let Some(n) = cut {
            // The device delivered `n` lines and went away: a real driver loses the call, and so
            // does the fake, so callers learn that partial reads are errors, not short results.
            let _delivered = result.lines.len().min(n);
            return Err(Error::Disconnected(format!(
                "the fake device went away after {_delivered} lines"
            )));
        }
        Ok(result)
    }

    async fn app_crashes(
        &self,
        device: &DeviceId,
        app: &AppId,
        since: OffsetDateTime,
        limit: usize,
    ) -> Result<Vec<CrashReport>> {
        self.apply(Operation::AppCrashes, format!("app_crashes {device} {app}"))
            .await?;
        self.with_device(device, |entry, _| {
            installed(entry, app)?;
            let mut reports: Vec<CrashReport> = entry
                .crashes
                .iter()
                .filter(|(owner, report)| owner == app && report.time >= since)
                .map(|(_, report)| report.clone())
                .collect();
            reports.sort_by_key(|report| std::cmp::Reverse(report.time));
            reports.truncate(limit);
            Ok(reports)
        })
    }

    async fn dev_build(&self, device: &DeviceId, app: &AppId) -> Result<bool> {
        self.apply(Operation::DevBuild, format!("dev_build {device} {app}"))
            .await?;
        self.with_device(device, |entry, _| Ok(installed(entry, app)?.dev_build))
    }

    async fn follow_app_logs(
        &self,
        device: &DeviceId,
        app: &AppId,
        query: &LogQuery,
    ) -> Result<Box<dyn phonelogs_driver::LineStream>> {
        self.apply(
            Operation::AppLogs,
            format!("follow_app_logs {device} {app}"),
        )
        .await?;
        let stream = self.with_device(device, |entry, state| {
            installed(entry, app)?;
            Ok(live::FakeStream::open(
                self.clone(),
                device.clone(),
                app.clone(),
                query.clone(),
                entry,
                state,
            ))
        })?;
        if let Some(entry) = self.lock().devices.get_mut(device) {
            entry.live.streams += 1;
        }
        Ok(Box::new(stream))
    }

    fn listener(&self) -> Option<&dyn LogListener> {
        if self.listener { Some(self) } else { None }
    }

    fn debugger(&self) -> Option<&dyn AppDebugger> {
        Some(self)
    }
}

#[async_trait]
impl LogListener for FakePhone {
    async fn stop_app_logs(&self, device: &DeviceId, app: &AppId) -> Result<()> {
        self.apply(
            Operation::StopAppLogs,
            format!("stop_app_logs {device} {app}"),
        )
        .await?;
        self.lock().listening.remove(&(device.clone(), app.clone()));
        Ok(())
    }
}

#[async_trait]
impl AppDebugger for FakePhone {
    async fn process_exit_history(
        &self,
        device: &DeviceId,
        package: &AppId,
    ) -> Result<ProcessExitHistory> {
        blank_package(package)?;
        self.apply(Operation::Debugger, format!("exit-info {device} {package}"))
            .await?;
        self.with_device(device, |entry, _| {
            let mut records = entry.exit_records.get(package).cloned().unwrap_or_default();
            records.reverse();
            Ok(ProcessExitHistory {
                serial: device.to_string(),
                package: package.to_string(),
                count: records.len(),
                records,
                // The fake phone keeps one copy of each app, so nothing is another user's.
                left_out_other_users: 0,
            })
        })
    }

    async fn set_debug_app(
        &self,
        device: &DeviceId,
        package: &AppId,
        wait_for_debugger: bool,
        persistent: bool,
    ) -> Result<SetDebugAppResult> {
        blank_package(package)?;
        self.apply(
            Operation::Debugger,
            format!("set-debug-app {device} {package}"),
        )
        .await?;
        self.with_device_mut(device, |entry| {
            entry.debug_app = Some(package.clone());
            Ok(SetDebugAppResult {
                serial: device.to_string(),
                package: package.to_string(),
                wait_for_debugger,
                persistent,
            })
        })
    }

    async fn clear_debug_app(&self, device: &DeviceId) -> Result<ClearDebugAppResult> {
        self.apply(Operation::Debugger, format!("clear-debug-app {device}"))
            .await?;
        self.with_device_mut(device, |entry| {
            entry.debug_app = None;
            Ok(ClearDebugAppResult {
                serial: device.to_string(),
                cleared: true,
            })
        })
    }

    async fn jdwp_processes(&self, device: &DeviceId) -> Result<JdwpProcessList> {
        self.apply(Operation::Debugger, format!("jdwp {device}"))
            .await?;
        self.with_device(device, |entry, _| {
            let mut seen = HashSet::new();
            let pids: Vec<i64> = entry
                .jdwp_pids
                .iter()
                .copied()
                .filter(|pid| seen.insert(*pid))
                .collect();
            Ok(JdwpProcessList {
                serial: device.to_string(),
                count: pids.len(),
                pids,
            })
        })
    }

    async fn process_owner(&self, device: &DeviceId, pid: i64) -> Result<ProcessOwner> {
        check_pid(pid)?;
        self.apply(Operation::Debugger, format!("process-owner {device} {pid}"))
            .await?;
        self.with_device(device, |entry, _| {
            let Some((uid, name)) = entry.processes.get(&pid) else {
                return Err(Error::backend(format!("no such process: pid {pid}")));
            };
            // As Android resolves a uid to packages (`pm list packages -U` lists app ids): by the
            // app id, so a process of the app's copy in another user (user × 100000 + app id)
            // names the same package, and the layers above must tell the copies apart by uid.
            let packages = entry
                .apps
                .values()
                .filter(|app| app.uid.is_some_and(|own| own % 100_000 == *uid % 100_000))
                .map(|app| app.app.clone())
                .collect();
            Ok(ProcessOwner {
                pid,
                uid: *uid,
                packages,
                process_name: Some(name.clone()),
            })
        })
    }

    async fn native_backtrace(&self, device: &DeviceId, pid: i64) -> Result<NativeBacktrace> {
        check_pid(pid)?;
        self.apply(Operation::Debugger, format!("debuggerd -b {device} {pid}"))
            .await?;
        self.with_device(device, |entry, _| {
            if !entry.debuggerd_allowed {
                return Err(Error::PermissionDenied(
                    "debuggerd needs a rooted or userdebug device".into(),
                ));
            }
            entry.backtraces.get(&pid).cloned().ok_or_else(|| {
                Error::backend(format!("debuggerd produced no backtrace for pid {pid}"))
            })
        })
    }

    async fn native_tombstone(&self, device: &DeviceId, pid: i64) -> Result<TombstoneCapture> {
        check_pid(pid)?;
        self.apply(Operation::Debugger, format!("debuggerd {device} {pid}"))
            .await?;
        self.with_device(device, |entry, _| {
            if !entry.debuggerd_allowed {
                return Err(Error::PermissionDenied(
                    "debuggerd needs a rooted or userdebug device".into(),
                ));
            }
            entry.tombstones.get(&pid).cloned().ok_or_else(|| {
                Error::backend(format!("debuggerd produced no tombstone for pid {pid}"))
            })
        })
    }
}
