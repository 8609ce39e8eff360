//! [`AdbPhone`]: the driver contract over the adb server.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use phonelogs_crash::PhoneClock;
use phonelogs_crash::android::parse_date_offset;
use phonelogs_driver::{
    AppDebugger, AppId, AppInfo, AppLogger, Capabilities, ClearDebugAppResult, ConfirmingReader,
    CrashReport, CrashResult, DeviceId, DeviceInfo, DeviceState, Error, JdwpProcessList, LogQuery,
    LogResult, NativeBacktrace, Platform, ProcessExitHistory, ProcessOwner, Result,
    SetDebugAppResult, ThreadSummary, TombstoneCapture, check_pid,
};
use time::OffsetDateTime;

use crate::client::{AdbConfig, AdbServer, ShellOutput};
use crate::logs::{
    AppFacts, DROPBOX_TAGS, FoundCrashes, Owner, Section, app_facts, crash_buffer_command,
    current_user, logcat_command, logcat_lacks_uid_option, new_marker, script, split_sections,
    uids_of,
};
use crate::quote::{command_line, quote};

/// The most text of a native backtrace returned whole; the rest is cut.
const MAX_BACKTRACE_TEXT: usize = 256 * 1024;

/// What the driver keeps about a device: whether its logcat knows `--uid`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct DeviceFacts {
    uid_option: bool,
}

/// An Android phone (or several) reached through the adb server: one app's lines, crash reports
/// and development-build flag, plus the six debugging aids.
///
/// What cannot change while an app stays installed (its uids) is kept per device and app, so a
/// repeated `app_logs` call is one shell command: the logcat dump and, in the same shell,
/// `pm list packages -U` to notice a reinstalled app (a new uid) and `dumpsys package` for its
/// flags, which `adb install -r` can change under the same uid; `app_info` reads the flags again
/// on every call for the same reason. The facts each round trip saw are kept, and as a
/// [`ConfirmingReader`] the driver hands them out without a device call and confirms them in
/// the next read's own round trip, so a warm `phone_logs` is that one round trip. Call
/// [`AdbPhone::forget_device`] when a task ends to start the next one fresh.
#[derive(Debug)]
pub struct AdbPhone {
    server: AdbServer,
    /// The server's `host:port`: the source a device id may be qualified with.
    source: String,
    apps: Mutex<HashMap<(String, String), AppFacts>>,
    devices: Mutex<HashMap<String, DeviceFacts>>,
    round_trips: AtomicU64,
}

impl AdbPhone {
    /// A driver talking to the adb server `config` names.
    pub fn new(config: AdbConfig) -> Self {
        AdbPhone {
            source: config.address(),
            server: AdbServer::new(config),
            apps: Mutex::new(HashMap::new()),
            devices: Mutex::new(HashMap::new()),
            round_trips: AtomicU64::new(0),
        }
    }

    /// A driver for the server adb's own tools would use (see [`AdbConfig::from_env`]).
    pub fn from_env() -> Self {
        Self::new(AdbConfig::from_env())
    }

    /// The adb client underneath.
    pub fn server(&self) -> &AdbServer {
        &self.server
    }

    /// How many device commands (adb round trips to a device) this driver has made.
    pub fn round_trips(&self) -> u64 {
        self.round_trips.load(Ordering::Relaxed)
    }

    /// Forgets everything kept about `device` (app uids and flags, the device's features).
    pub fn forget_device(&self, device: &DeviceId) {
        let serial = self.key(device);
        if let Ok(mut apps) = self.apps.lock() {
            apps.retain(|(kept, _), _| *kept != serial);
        }
        if let Ok(mut devices) = self.devices.lock() {
            devices.remove(&serial);
        }
        self.server.forget(&serial);
    }

    /// The serial `device` names on this server: the id itself, or the part after this
    /// server's `host:port/` when the gateway named it with its server.
    fn serial<'a>(&self, device: &'a DeviceId) -> Result<&'a str> {
        let serial = device.within(&self.source);
        if serial.trim().is_empty() || serial.contains(['\0', '\n', '/']) {
            return Err(Error::InvalidArgument(format!(
                "{serial:?} is not a device serial of the adb server at {}",
                self.source
            )));
        }
        Ok(serial)
    }

    /// What the caches are keyed by: the bare serial, whichever way the device was named.
    fn key(&self, device: &DeviceId) -> String {
        device.within(&self.source).to_owned()
    }

    async fn shell(&self, device: &DeviceId, command: &str) -> Result<ShellOutput> {
        let serial = self.serial(device)?;
        self.round_trips.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(%serial, %command, "adb shell");
        Ok(self.server.shell(serial, command).await?)
    }

    fn cached(&self, device: &DeviceId, app: &AppId) -> Option<(DeviceFacts, AppFacts)> {
        let apps = self.apps.lock().ok()?;
        let devices = self.devices.lock().ok()?;
        let facts = apps.get(&(self.key(device), app.to_string()))?.clone();
        let device = *devices.get(&self.key(device))?;
        Some((device, facts))
    }

    fn forget_app(&self, device: &DeviceId, app: &AppId) {
        if let Ok(mut apps) = self.apps.lock() {
            apps.remove(&(self.key(device), app.to_string()));
        }
    }

    fn set_uid_option(&self, device: &DeviceId, uid_option: bool) {
        if let Ok(mut devices) = self.devices.lock() {
            devices.insert(self.key(device), DeviceFacts { uid_option });
        }
    }

    /// The app's facts: kept ones, or read with one shell command (`getprop`,
    /// `pm list packages -U`, `dumpsys package`, `am get-current-user`).
    async fn facts(&self, device: &DeviceId, app: &AppId) -> Result<(DeviceFacts, AppFacts)> {
        if let Some(known) = self.cached(device, app) {
            return Ok(known);
        }
        let marker = new_marker();
        let package = quote(app.as_str());
        let commands = [
            "getprop ro.build.version.sdk".to_owned(),
            format!("pm list packages -U {package}"),
            format!("dumpsys package {package}"),
            // The user the person uses: the app is its copy in that user (an app clone or a
            // work profile has another uid). A release without the command fails it alone.
            "am get-current-user".to_owned(),
            // The phone's offset from UTC, for `lastUpdateTime` (printed in local time).
            "date +%z".to_owned(),
        ];
        let output = self.shell(device, &script(&commands, &marker)).await?;
        let sections = expect_sections(&output, &marker, commands.len())?;
        let sdk: Option<u32> = text(&sections[0]).trim().parse().ok();
        // Android 10 (API 29) and older have no `logcat --uid`.
        let uid_option = sdk.is_none_or(|sdk| sdk >= 30);
        let Some(uids) = uids_of(&text(&sections[1]), app.as_str()) else {
            return Err(Error::NotFound(format!(
                "{app} is not installed on {device}"
            )));
        };
        let user = if sections[3].exit_code == Some(0) {
            current_user(&text(&sections[3]))
        } else {
            None
        };
        let mut facts = app_facts(uids, &text(&sections[2]), app.as_str(), user);
        facts.utc_offset = parse_date_offset(&text(&sections[4]));
        let device_facts = {
            let mut devices = self
                .devices
                .lock()
                .map_err(|_| Error::backend("a lock was poisoned"))?;
            *devices
                .entry(self.key(device))
                .or_insert(DeviceFacts { uid_option })
        };
        if let Ok(mut apps) = self.apps.lock() {
            apps.insert((self.key(device), app.to_string()), facts.clone());
        }
        Ok((device_facts, facts))
    }

    /// The facts a read starts from: with `expected` (a [`ConfirmingReader`] read), the kept
    /// ones whatever they say, since the read's own round trip decides ([`AdbPhone::confirm`]);
    /// else those of an app whose lines may be read.
    async fn facts_to_read(
        &self,
        device: &DeviceId,
        app: &AppId,
        expected: Option<&AppInfo>,
    ) -> Result<(DeviceFacts, AppFacts)> {
        match expected {
            Some(expected) if expected.shared_uid => Err(Error::Unsupported(format!(
                "{app} shares its uid with other packages, so its lines cannot be told apart from theirs"
            ))),
            Some(_) => self.facts(device, app).await,
            None => self.readable_facts(device, app).await,
        }
    }

    /// The facts of an app whose lines may be read: not one that shares its uid.
    async fn readable_facts(
        &self,
        device: &DeviceId,
        app: &AppId,
    ) -> Result<(DeviceFacts, AppFacts)> {
        let (device_facts, facts) = self.facts(device, app).await?;
        if let Some(shared) = &facts.shared_user {
            return Err(Error::Unsupported(format!(
                "{app} shares its uid with other packages ({shared}), so its lines cannot be told apart from theirs"
            )));
        }
        Ok((device_facts, facts))
    }

    /// Checks the `pm list packages -U` section of a call against the kept uids. `Ok(true)`: the
    /// same; `Ok(false)`: the app was reinstalled and the facts are forgotten.
    fn same_install(
        &self,
        device: &DeviceId,
        app: &AppId,
        pm: &Section<'_>,
        facts: &AppFacts,
    ) -> Result<bool> {
        match uids_of(&text(pm), app.as_str()) {
            None => {
                self.forget_app(device, app);
                Err(Error::NotFound(format!(
                    "{app} is not installed on {device}"
                )))
            }
            Some(uids) if uids != facts.listed_uids => {
                tracing::info!(%app, old = ?facts.listed_uids, new = ?uids, "the app was reinstalled with a new uid");
                self.forget_app(device, app);
                Ok(false)
            }
            Some(_) => Ok(true),
        }
    }

    /// The app's facts as a call's `dumpsys package` section says them (its flags and version;
    /// the uids stay `kept`'s, which the same call's `pm list packages -U` confirmed), kept for
    /// the next call.
    fn seen_facts(
        &self,
        device: &DeviceId,
        app: &AppId,
        dumpsys: &Section<'_>,
        kept: &AppFacts,
    ) -> Result<AppFacts> {
        if dumpsys.exit_code != Some(0) {
            return Err(Error::backend(format!(
                "dumpsys package {app} failed, so its flags are unknown"
            )));
        }
        let fresh = app_facts(kept.listed_uids.clone(), &text(dumpsys), app.as_str(), None);
        let seen = AppFacts {
            system: fresh.system,
            debuggable: fresh.debuggable,
            shared_user: fresh.shared_user,
            version: fresh.version,
            installed: fresh.installed,
            ..kept.clone()
        };
        if seen != *kept {
            tracing::info!(%app, debuggable = seen.debuggable, system = seen.system, version = ?seen.version, "the app's flags changed (reinstalled over itself)");
            self.keep_flags(device, app, &seen);
        }
        Ok(seen)
    }

    /// The app's facts with its flags (`DEBUGGABLE`, `SYSTEM`, `sharedUser`) read on this call.
    ///
    /// Why not the kept ones: the gateway decides from [`AppLogger::app_info`] whether to ask
    /// the person, and a release build installed over a development build with `adb install -r`
    /// keeps the uid, so kept flags would let a debugging aid run on it unasked. A first call
    /// reads everything anyway; a later one is one round trip (`pm list packages -U`, to notice
    /// a reinstall with a new uid, and `dumpsys package`).
    async fn fresh_facts(&self, device: &DeviceId, app: &AppId) -> Result<AppFacts> {
        let Some((_, kept)) = self.cached(device, app) else {
            return Ok(self.facts(device, app).await?.1);
        };
        let marker = new_marker();
        let commands = [
            format!("pm list packages -U {}", quote(app.as_str())),
            format!("dumpsys package {}", quote(app.as_str())),
        ];
        let output = self.shell(device, &script(&commands, &marker)).await?;
        let sections = expect_sections(&output, &marker, commands.len())?;
        if !self.same_install(device, app, &sections[0], &kept)? {
            return Ok(self.facts(device, app).await?.1);
        }
        self.seen_facts(device, app, &sections[1], &kept)
    }

    /// Replaces the kept flags and version of an app with ones just read (its uids stay).
    fn keep_flags(&self, device: &DeviceId, app: &AppId, fresh: &AppFacts) {
        if let Ok(mut apps) = self.apps.lock()
            && let Some(kept) = apps.get_mut(&(self.key(device), app.to_string()))
        {
            kept.debuggable = fresh.debuggable;
            kept.system = fresh.system;
            kept.shared_user.clone_from(&fresh.shared_user);
            kept.version.clone_from(&fresh.version);
        }
    }

    /// What a read's own round trip says of the app (its `pm list packages -U` and `dumpsys
    /// package` sections, run after the dump), checked before anything it read is returned.
    /// `Again` when the app was reinstalled with a new uid and the read must be made again.
    ///
    /// With `expected` (the facts the caller decided on, [`ConfirmingReader`]), any difference
    /// is [`Error::Changed`]: a new uid, no package, another development build, system or
    /// shared-uid flag, another version. Without (plain [`AppLogger::app_logs`], whose caller
    /// looked the app up right before), a development build replaced by a release build is
    /// `Changed` (the caller may have skipped asking the person because it was a development
    /// build: `adb install -r` keeps the uid), and an app that now shares its uid is
    /// `Unsupported`.
    fn confirm(
        &self,
        device: &DeviceId,
        app: &AppId,
        [pm, dumpsys]: [&Section<'_>; 2],
        kept: &AppFacts,
        expected: Option<&AppInfo>,
    ) -> Result<Attempt<()>> {
        let same = match self.same_install(device, app, pm, kept) {
            Ok(same) => same,
            Err(Error::NotFound(said)) if expected.is_some() => return Err(Error::Changed(said)),
            Err(error) => return Err(error),
        };
        if !same {
            return match expected {
                Some(_) => Err(Error::Changed(format!(
                    "{app} was reinstalled with a new uid since it was looked up"
                ))),
                None => Ok(Attempt::Again),
            };
        }
        let seen = self.seen_facts(device, app, dumpsys, kept)?;
        match expected {
            Some(expected) if !expected.same_facts(&info_of(app, &seen)) => {
                return Err(Error::Changed(format!(
                    "{app} is not what it was when it was looked up (a development build: {} then {}; a system app: {} then {})",
                    expected.dev_build, seen.debuggable, expected.system, seen.system
                )));
            }
            Some(_) => {}
            None if kept.debuggable && !seen.debuggable => {
                return Err(Error::Changed(format!(
                    "{app} was reinstalled as a release build since it was looked up; look it up again"
                )));
            }
            None => {}
        }
        if seen.shared_user.is_some() {
            return Err(Error::Unsupported(format!(
                "{app} shares its uid with other packages, so its lines cannot be told apart from theirs"
            )));
        }
        Ok(Attempt::Done(()))
    }
}

/// When the installed build was installed, from `lastUpdateTime` (whole seconds, the phone's
/// local time) and the phone's offset: the start of the second it names. The package manager
/// stops the app's processes when it replaces the package, so the build it replaced logged
/// before the install; only its lines of the install's own second (less than a second) cannot be
/// told from the new build's, and are counted as the new build's, whose first lines (the app
/// started right after `adb install -r`) would otherwise be lost. `None` when either is
/// unknown.
pub(crate) fn installed_at_of(facts: &AppFacts) -> Option<time::OffsetDateTime> {
    let format = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second]");
    let local = time::PrimitiveDateTime::parse(facts.installed.as_deref()?, &format).ok()?;
    Some(local.assume_offset(facts.utc_offset?))
}

/// What the driver tells the layers above of an app, from its facts.
fn info_of(app: &AppId, facts: &AppFacts) -> AppInfo {
    AppInfo {
        app: app.clone(),
        label: None,
        system: facts.system,
        dev_build: facts.debuggable,
        uid: Some(facts.uid),
        shared_uid: facts.shared_user.is_some(),
        version: facts.version.clone(),
        installed_at: installed_at_of(facts),
        install_id: None,
    }
}

fn text(section: &Section<'_>) -> String {
    String::from_utf8_lossy(section.output).into_owned()
}

fn checked_app(app: &AppId) -> Result<AppId> {
    AppId::parse(app.as_str())
}

/// Splits the output of a script of `count` commands and insists on all `count` sections:
/// fewer means the device went away before the script ended.
fn expect_sections<'a>(
    output: &'a ShellOutput,
    marker: &str,
    count: usize,
) -> Result<Vec<Section<'a>>> {
    let sections = split_sections(&output.stdout, marker, count);
    if sections.len() < count {
        let stderr: String = output.stderr_text().trim().chars().take(400).collect();
        return Err(Error::Disconnected(format!(
            "the device's answer ended after {} of {count} commands: {stderr}",
            sections.len()
        )));
    }
    Ok(sections)
}

/// Turns a failed command into the contract's kinds: a refusal is `PermissionDenied`,
/// anything else a backend error with what the device said.
///
/// Only stderr and the first line of `stdout_hint` go into the message, cut short: the stdout of
/// a log dump can hold other apps' lines, and an error message must never carry them.
fn command_failure(what: &str, output: &ShellOutput, stdout_hint: &str) -> Error {
    let stderr = output.stderr_text();
    let first_stdout = stdout_hint
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let said: String = format!("{} {first_stdout}", stderr.trim())
        .trim()
        .chars()
        .take(400)
        .collect();
    if is_refusal(&said) {
        Error::PermissionDenied(format!("{what}: {said}"))
    } else {
        Error::backend(format!(
            "{what} failed (exit code {}): {said}",
            output
                .exit_code
                .map_or_else(|| "unknown".to_owned(), |c| c.to_string())
        ))
    }
}

/// Whether a command's answer is a refusal: said on stderr (`debuggerd`, `am`), or on the first
/// line of stdout (`dumpsys` prints `Permission Denial: can't dump …` there and exits 0).
fn refused(output: &ShellOutput) -> bool {
    let stdout = output.stdout_text();
    let first_stdout = stdout
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    is_refusal(&output.stderr_text()) || is_refusal(first_stdout)
}

fn is_refusal(said: &str) -> bool {
    let lower = said.to_ascii_lowercase();
    [
        "permission denied",
        "permission denial",
        "securityexception",
        "security exception",
        "not permitted",
        "must be root",
        "requires root",
        // `debuggerd` as the shell user: `debuggerd: root is required` (testdata/refusals).
        "root is required",
        "not allowed",
    ]
    .iter()
    .any(|word| lower.contains(word))
}

/// What one try of a read found: the result, or that the read must be made again (the app was
/// reinstalled, or logcat turned out to lack `--uid`).
enum Attempt<T> {
    Done(T),
    Again,
}

impl AdbPhone {
    /// Runs a read's round trip until it is done, at most three times: a reinstall noticed, a
    /// logcat without `--uid` noticed, then the real read. The one loop both reads share.
    async fn retrying<T, F, Fut>(&self, app: &AppId, what: &str, mut attempt: F) -> Result<T>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<Attempt<T>>>,
    {
        for _ in 0..3 {
            if let Attempt::Done(found) = attempt().await? {
                return Ok(found);
            }
        }
        Err(Error::backend(format!(
            "the facts of {app} kept changing while reading its {what}"
        )))
    }

    /// One try of `app_logs`: the logcat dump with the package's uid and flags in the same
    /// round trip. `Again` when the round trip found the app reinstalled or logcat without
    /// `--uid`.
    async fn logs_once(
        &self,
        device: &DeviceId,
        app: &AppId,
        query: &LogQuery,
        expected: Option<&AppInfo>,
    ) -> Result<Attempt<LogResult>> {
        let (device_facts, facts) = self.facts_to_read(device, app, expected).await?;
        let marker = new_marker();
        let [boot, clock, oldest] = crate::live::MARK_COMMANDS;
        let commands = [
            logcat_command(&[facts.uid], query, device_facts.uid_option),
            format!("pm list packages -U {}", quote(app.as_str())),
            // The flags again, in the same round trip: a release build installed over a
            // development build keeps the uid, and must not be read as one.
            format!("dumpsys package {}", quote(app.as_str())),
            // The phone's boot id, clock and oldest line, for the gateway's cursors.
            boot.to_owned(),
            clock.to_owned(),
            oldest.to_owned(),
        ];
        let output = self.shell(device, &script(&commands, &marker)).await?;
        let sections = expect_sections(&output, &marker, commands.len())?;
        if let Attempt::Again =
            self.confirm(device, app, [&sections[1], &sections[2]], &facts, expected)?
        {
            return Ok(Attempt::Again);
        }
        let logs = &sections[0];
        if logs.exit_code != Some(0) {
            if device_facts.uid_option
                && logcat_lacks_uid_option(&output.stderr_text(), &text(logs))
            {
                tracing::info!(%device, "logcat has no --uid; reading every line and keeping the app's");
                self.set_uid_option(device, false);
                return Ok(Attempt::Again);
            }
            return Err(command_failure("logcat", &output, ""));
        }
        let (mut result, foreign) =
            crate::logs::app_lines_and_foreign(logs.output, &[facts.uid], query);
        result.mark = Some(crate::live::mark_of(
            &sections[3],
            &sections[4],
            &sections[5],
        ));
        if device_facts.uid_option && foreign {
            // Nothing of theirs is passed on (app_lines checks every uid); say so for
            // whoever debugs a phone whose logcat ignores `--uid`.
            tracing::warn!(%device, "logcat returned other uids' lines despite --uid; they are dropped");
        }
        Ok(Attempt::Done(result))
    }

    /// One try of `app_crash_result`: the phone's offset, the drop box, the crash buffer and the
    /// package's uid and flags in one round trip. `Again` as for [`AdbPhone::logs_once`].
    async fn crashes_once(
        &self,
        device: &DeviceId,
        app: &AppId,
        since: OffsetDateTime,
        limit: usize,
        expected: Option<&AppInfo>,
    ) -> Result<Attempt<CrashResult>> {
        let (device_facts, facts) = self.facts_to_read(device, app, expected).await?;
        let marker = new_marker();
        let commands = crashes_commands(app, &facts, device_facts.uid_option, since);
        let output = self.shell(device, &script(&commands, &marker)).await?;
        let sections = expect_sections(&output, &marker, commands.len())?;
        // Sections: 0 date, 1 pm, 2..8 each tag's drop box listing then its entries, 8 the
        // crash buffer, 9 the package, 10 the evidence lines.
        if let Attempt::Again =
            self.confirm(device, app, [&sections[1], &sections[9]], &facts, expected)?
        {
            return Ok(Attempt::Again);
        }
        let crash_buffer = &sections[8];
        if crash_buffer.exit_code != Some(0) {
            if device_facts.uid_option
                && logcat_lacks_uid_option(&output.stderr_text(), &text(crash_buffer))
            {
                self.set_uid_option(device, false);
                return Ok(Attempt::Again);
            }
            return Err(command_failure("logcat -b crash", &output, ""));
        }
        for section in &sections[2..8] {
            if section.exit_code != Some(0) {
                return Err(command_failure("dumpsys dropbox", &output, ""));
            }
        }
        let mut evidence: Vec<&[u8]> = vec![crash_buffer.output];
        if let Some(lines) = sections.get(10).filter(|_| facts.other_users) {
            if lines.exit_code != Some(0) {
                return Err(command_failure("logcat", &output, ""));
            }
            evidence.push(lines.output);
        }
        let offset = parse_date_offset(&text(&sections[0])).unwrap_or_else(|| {
            tracing::warn!(said = %text(&sections[0]).trim(), "unreadable `date +%z`; reading local times as UTC");
            time::UtcOffset::UTC
        });
        let clock = PhoneClock { offset, year: None };
        // Borrowed, not copied, when valid UTF-8: the drop box dumps can be megabytes.
        let dumps: Vec<std::borrow::Cow<'_, str>> = sections[2..2 + 2 * DROPBOX_TAGS.len()]
            .iter()
            .map(|section| crate::logs::line_text(section.output))
            .collect();
        let dumps: Vec<crate::logs::DropBoxRead<'_>> = dumps
            .chunks_exact(2)
            .map(|read| crate::logs::DropBoxRead {
                listing: read[0].as_ref(),
                print: read[1].as_ref(),
            })
            .collect();
        let FoundCrashes {
            reports,
            unconfirmed,
        } = crate::logs::app_crashes(
            &dumps,
            crash_buffer.output,
            &evidence,
            Owner {
                package: app.as_str(),
                uid: facts.uid,
                other_users: facts.other_users,
            },
            &clock,
            since,
            limit,
        );
        if unconfirmed > 0 {
            tracing::info!(%app, unconfirmed, "crash reports left out: their owner could not be confirmed");
        }
        Ok(Attempt::Done(CrashResult {
            reports,
            unconfirmed,
        }))
    }
}

#[async_trait]
impl AppLogger for AdbPhone {
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            platform: Platform::Android,
            logs: true,
            crashes: true,
            listener: false,
            debugger: true,
            log_history: true,
            line_uids: true,
            reports_name_package: true,
        }
    }

    fn source(&self) -> Option<String> {
        Some(self.source.clone())
    }

    fn source_is_default(&self) -> bool {
        self.server.config().is_local_default()
    }

    async fn devices(&self) -> Result<Vec<DeviceInfo>> {
        let devices = self.server.devices().await?;
        Ok(devices
            .into_iter()
            .map(|device| DeviceInfo {
                id: DeviceId::new(device.serial),
                platform: Platform::Android,
                model: device.model.map(|m| m.replace('_', " ")),
                state: match device.state.as_str() {
                    "device" => DeviceState::Online,
                    "offline" => DeviceState::Offline,
                    "unauthorized" | "authorizing" => DeviceState::Unauthorized,
                    other => DeviceState::Other(other.to_owned()),
                },
            })
            .collect())
    }

    async fn app_info(&self, device: &DeviceId, app: &AppId) -> Result<AppInfo> {
        let app = checked_app(app)?;
        // Read now, not kept: the gateway asks the person or not from these flags.
        let facts = self.fresh_facts(device, &app).await?;
        Ok(info_of(&app, &facts))
    }

    async fn app_logs(
        &self,
        device: &DeviceId,
        app: &AppId,
        query: &LogQuery,
    ) -> Result<LogResult> {
        let app = checked_app(app)?;
        self.retrying(&app, "logs", || self.logs_once(device, &app, query, None))
            .await
    }

    async fn follow_app_logs(
        &self,
        device: &DeviceId,
        app: &AppId,
        query: &LogQuery,
    ) -> Result<Box<dyn phonelogs_driver::LineStream>> {
        let app = checked_app(app)?;
        let (device_facts, facts) = self.readable_facts(device, &app).await?;
        let command = crate::live::follow_command(facts.uid, query, device_facts.uid_option);
        let (stream, v2) = self
            .server()
            .shell_stream(self.serial(device)?, &command)
            .await?;
        Ok(Box::new(crate::live::LogcatStream::start(
            stream,
            v2,
            facts.uid,
            query.clone(),
        )))
    }

    async fn app_crashes(
        &self,
        device: &DeviceId,
        app: &AppId,
        since: OffsetDateTime,
        limit: usize,
    ) -> Result<Vec<CrashReport>> {
        Ok(self
            .app_crash_result(device, app, since, limit)
            .await?
            .reports)
    }

    async fn app_crash_result(
        &self,
        device: &DeviceId,
        app: &AppId,
        since: OffsetDateTime,
        limit: usize,
    ) -> Result<CrashResult> {
        let app = checked_app(app)?;
        self.retrying(&app, "crashes", || {
            self.crashes_once(device, &app, since, limit, None)
        })
        .await
    }

    async fn dev_build(&self, device: &DeviceId, app: &AppId) -> Result<bool> {
        let app = checked_app(app)?;
        Ok(self.fresh_facts(device, &app).await?.debuggable)
    }

    fn debugger(&self) -> Option<&dyn AppDebugger> {
        Some(self)
    }

    fn confirming_reader(&self) -> Option<&dyn ConfirmingReader> {
        Some(self)
    }
}

/// The reads confirm the facts in the round trip they read in: the `pm list packages -U` and
/// `dumpsys package` every read runs after its dump ([`AdbPhone::confirm`]).
#[async_trait]
impl ConfirmingReader for AdbPhone {
    fn held_app_info(&self, device: &DeviceId, app: &AppId) -> Option<AppInfo> {
        let (_, facts) = self.cached(device, app)?;
        Some(info_of(app, &facts))
    }

    async fn confirmed_app_logs(
        &self,
        device: &DeviceId,
        expected: &AppInfo,
        query: &LogQuery,
    ) -> Result<LogResult> {
        let app = checked_app(&expected.app)?;
        self.retrying(&app, "logs", || {
            self.logs_once(device, &app, query, Some(expected))
        })
        .await
    }

    async fn confirmed_app_crash_result(
        &self,
        device: &DeviceId,
        expected: &AppInfo,
        since: OffsetDateTime,
        limit: usize,
    ) -> Result<CrashResult> {
        let app = checked_app(&expected.app)?;
        self.retrying(&app, "crashes", || {
            self.crashes_once(device, &app, since, limit, Some(expected))
        })
        .await
    }
}

#[async_trait]
impl AppDebugger for AdbPhone {
    async fn process_exit_history(
        &self,
        device: &DeviceId,
        package: &AppId,
    ) -> Result<ProcessExitHistory> {
        let package = checked_app(package)?;
        // The app's own uid (in the user it runs in): the dump holds every user's copy.
        // A package that is not installed has no uid, so nothing of its dump is shown.
        let uid = match self.facts(device, &package).await {
            Ok((_, facts)) => Some(facts.uid),
            Err(Error::NotFound(_)) => None,
            Err(error) => return Err(error),
        };
        let command = command_line(&["dumpsys", "activity", "exit-info", package.as_str()])?;
        let output = self.shell(device, &command).await?;
        if !output.success() || refused(&output) {
            return Err(command_failure(
                "dumpsys activity exit-info",
                &output,
                &output.stdout_text(),
            ));
        }
        let (records, left_out_other_users) =
            own_exit_records(&output.stdout_text(), package.as_str(), uid);
        if left_out_other_users > 0 {
            tracing::info!(%package, left_out_other_users, "exit records left out: not the app's own uid");
        }
        Ok(ProcessExitHistory {
            serial: device.to_string(),
            package: package.to_string(),
            count: records.len(),
            records,
            left_out_other_users,
        })
    }

    async fn set_debug_app(
        &self,
        device: &DeviceId,
        package: &AppId,
        wait_for_debugger: bool,
        persistent: bool,
    ) -> Result<SetDebugAppResult> {
        let package = checked_app(package)?;
        let mut words = vec!["am", "set-debug-app"];
        if wait_for_debugger {
            words.push("-w");
        }
        if persistent {
            words.push("--persistent");
        }
        words.push(package.as_str());
        let output = self.shell(device, &command_line(&words)?).await?;
        if !output.success() || said_error(&output) {
            return Err(command_failure(
                "am set-debug-app",
                &output,
                &output.stdout_text(),
            ));
        }
        Ok(SetDebugAppResult {
            serial: device.to_string(),
            package: package.to_string(),
            wait_for_debugger,
            persistent,
        })
    }

    async fn clear_debug_app(&self, device: &DeviceId) -> Result<ClearDebugAppResult> {
        let output = self.shell(device, "am clear-debug-app").await?;
        if !output.success() || said_error(&output) {
            return Err(command_failure(
                "am clear-debug-app",
                &output,
                &output.stdout_text(),
            ));
        }
        Ok(ClearDebugAppResult {
            serial: device.to_string(),
            cleared: true,
        })
    }

    async fn jdwp_processes(&self, device: &DeviceId) -> Result<JdwpProcessList> {
        let serial = self.serial(device)?;
        self.round_trips.fetch_add(1, Ordering::Relaxed);
        let listing = self.server.jdwp(serial).await?;
        let pids: Vec<i64> = phonelogs_crash::android::parse_jdwp(&listing)
            .into_iter()
            .map(i64::from)
            .collect();
        Ok(JdwpProcessList {
            serial: device.to_string(),
            count: pids.len(),
            pids,
        })
    }

    async fn process_owner(&self, device: &DeviceId, pid: i64) -> Result<ProcessOwner> {
        let pid = check_pid(pid)?;
        // One round trip: the uid that owns `/proc/<pid>`, the process name, and every package
        // with its uid. Nothing here signals or pauses the process.
        let marker = new_marker();
        let commands = [
            format!("stat -c %u /proc/{pid}"),
            format!("cat /proc/{pid}/cmdline"),
            "pm list packages -U".to_owned(),
        ];
        let output = self.shell(device, &script(&commands, &marker)).await?;
        let sections = expect_sections(&output, &marker, commands.len())?;
        if sections[0].exit_code != Some(0) {
            let said = output.stderr_text();
            if is_refusal(&said) {
                return Err(command_failure(&format!("stat /proc/{pid}"), &output, ""));
            }
            return Err(Error::backend(format!(
                "no such process: pid {pid} ({})",
                said.lines()
                    .map(str::trim)
                    .find(|l| !l.is_empty())
                    .unwrap_or("no /proc entry")
                    .chars()
                    .take(200)
                    .collect::<String>()
            )));
        }
        let uid: u32 = text(&sections[0]).trim().parse().map_err(|_| {
            Error::backend(format!(
                "the owner of pid {pid} is unreadable: {:?}",
                text(&sections[0])
                    .trim()
                    .chars()
                    .take(80)
                    .collect::<String>()
            ))
        })?;
        let process_name = if sections[1].exit_code == Some(0) {
            cmdline_name(sections[1].output)
        } else {
            None
        };
        if sections[2].exit_code != Some(0) {
            return Err(command_failure("pm list packages -U", &output, ""));
        }
        let packages = packages_of_uid(&text(&sections[2]), uid);
        Ok(ProcessOwner {
            pid: i64::from(pid),
            uid,
            packages,
            process_name,
        })
    }

    async fn process_owners(&self, device: &DeviceId, pids: &[i64]) -> Result<Vec<ProcessOwner>> {
        let pids: Vec<u32> = pids.iter().filter_map(|&pid| check_pid(pid).ok()).collect();
        if pids.is_empty() {
            return Ok(Vec::new());
        }
        // One round trip for them all: `stat` prints `/proc/<pid> <uid>` for each pid that has a
        // process (and complains on stderr about the others), then the package list.
        let marker = new_marker();
        let paths: Vec<String> = pids.iter().map(|pid| format!("/proc/{pid}")).collect();
        let commands = [
            format!("stat -c '%n %u' {}", paths.join(" ")),
            "pm list packages -U".to_owned(),
        ];
        let output = self.shell(device, &script(&commands, &marker)).await?;
        let sections = expect_sections(&output, &marker, commands.len())?;
        if sections[1].exit_code != Some(0) {
            return Err(command_failure("pm list packages -U", &output, ""));
        }
        let listing = text(&sections[1]);
        let mut owners = Vec::new();
        for line in text(&sections[0]).lines() {
            let mut words = line.split_whitespace();
            let (Some(path), Some(uid), None) = (words.next(), words.next(), words.next()) else {
                continue;
            };
            let (Some(pid), Ok(uid)) = (
                path.strip_prefix("/proc/")
                    .and_then(|pid| pid.parse::<u32>().ok())
                    .filter(|pid| pids.contains(pid)),
                uid.parse::<u32>(),
            ) else {
                continue;
            };
            owners.push(ProcessOwner {
                pid: i64::from(pid),
                uid,
                packages: packages_of_uid(&listing, uid),
                process_name: None,
            });
        }
        Ok(owners)
    }

    async fn native_backtrace(&self, device: &DeviceId, pid: i64) -> Result<NativeBacktrace> {
        let pid = check_pid(pid)?;
        // The uid the process runs as is read right after the dump in the same round trip: a
        // backtrace does not print it, and the gateway needs it to tell the app's process from
        // a clone's (same name, another user) that took the pid in between.
        let marker = new_marker();
        let commands = [
            format!("debuggerd -b {pid}"),
            format!("stat -c %u /proc/{pid}"),
        ];
        let output = self.shell(device, &script(&commands, &marker)).await?;
        let sections = expect_sections(&output, &marker, commands.len())?;
        let dump = text(&sections[0]);
        let dumped = sections[0].exit_code == Some(0);
        let parsed = phonelogs_crash::tombstone::parse_backtrace(&dump);
        if is_refusal(&output.stderr_text()) || (!dumped && is_refusal(&dump)) {
            return Err(command_failure(
                &format!("debuggerd -b {pid}"),
                &output,
                &dump,
            ));
        }
        let dumped_uid = if sections[1].exit_code == Some(0) {
            text(&sections[1]).trim().parse::<u32>().ok()
        } else {
            None
        };
        if !dumped || parsed.threads.is_empty() {
            return Err(Error::backend(format!(
                "debuggerd produced no backtrace for pid {pid}: {}",
                first_words(&output)
            )));
        }
        Ok(NativeBacktrace {
            serial: device.to_string(),
            pid: i64::from(pid),
            process_name: parsed.process_name,
            abi: parsed.abi,
            thread_count: parsed.threads.len(),
            threads: parsed
                .threads
                .iter()
                .map(|thread| ThreadSummary {
                    name: thread.name.clone(),
                    sys_tid: i64::from(thread.sys_tid),
                    frame_count: thread.frame_count as usize,
                })
                .collect(),
            text: phonelogs_crash::cut_text(
                &dump,
                MAX_BACKTRACE_TEXT,
                "\n[… cut: the backtrace is longer]\n",
            ),
            dumped_pid: parsed.pid.map(i64::from),
            dumped_uid,
        })
    }

    async fn native_tombstone(&self, device: &DeviceId, pid: i64) -> Result<TombstoneCapture> {
        let pid = check_pid(pid)?;
        let output = self.shell(device, &format!("debuggerd {pid}")).await?;
        let dump = output.stdout_text();
        if is_refusal(&output.stderr_text()) || (!output.success() && is_refusal(&dump)) {
            return Err(command_failure(&format!("debuggerd {pid}"), &output, &dump));
        }
        let header = phonelogs_crash::tombstone::parse_tombstone_header(&dump);
        if !output.success() || (header.pid.is_none() && header.signal.is_none()) {
            return Err(Error::backend(format!(
                "debuggerd produced no tombstone for pid {pid}: {}",
                first_words(&output)
            )));
        }
        Ok(TombstoneCapture {
            serial: device.to_string(),
            pid: i64::from(pid),
            process_name: header.process_name,
            abi: header.abi,
            signal: header.signal,
            frame_count: header.frame_count.map(|n| n as usize),
            device_tombstone_ref: header.device_tombstone_ref,
            dumped_pid: header.pid.map(i64::from),
            dumped_uid: header.uid,
            bytes: output.stdout,
        })
    }
}

/// The records of `dumpsys activity exit-info <package>` that are the app's own, and how many
/// were left out.
///
/// The dump has one `Historical Process Exit for uid=…` section per user's copy of the package
/// (an app clone, a work profile), so only records whose owner is `uid` (the app's uid in its
/// user; see `phonelogs_crash::exitinfo::ExitEntry::owner_uid`) under the package's own
/// `package:` line are kept. A record whose owner the dump does not say, or says two ways, is
/// left out and counted: it could be another copy's. With no `uid` (the package is not
/// installed) every record is left out.
fn own_exit_records(
    dump: &str,
    package: &str,
    uid: Option<u32>,
) -> (Vec<phonelogs_driver::ExitRecord>, usize) {
    let mut left_out = 0;
    let mut records = Vec::new();
    for entry in phonelogs_crash::exitinfo::parse_exit_entries(dump) {
        let owned = uid.is_some() && entry.owner_uid() == uid;
        if !owned || entry.package.as_deref().is_some_and(|name| name != package) {
            left_out += 1;
            continue;
        }
        records.push(entry.record);
    }
    (records, left_out)
}

/// The commands of one `app_crashes` read, in one script (see `crashes_once` for the sections
/// they print).
fn crashes_commands(
    app: &AppId,
    facts: &AppFacts,
    uid_option: bool,
    since: OffsetDateTime,
) -> Vec<String> {
    let mut commands = vec![
        // The phone's offset, read in the same shell as the dumps whose local times it
        // turns into instants.
        "date +%z".to_owned(),
        format!("pm list packages -U {}", quote(app.as_str())),
    ];
    // For each tag, its drop box listing, then its entries (see `dropbox_commands`).
    commands.extend(crate::logs::dropbox_commands());
    commands.push(crash_buffer_command(&[facts.uid], uid_option));
    // The flags again, in the same round trip (see `app_logs`).
    commands.push(format!("dumpsys package {}", quote(app.as_str())));
    if facts.other_users {
        // Another user has the app too: a drop box entry without `UID:` could be that
        // copy's, and the lines its pid logged around its time tell whose it is.
        // Checked: a `since` at the `time` crate's limit must not panic.
        let from = since
            .checked_sub(crate::logs::EVIDENCE_WINDOW)
            .unwrap_or(since);
        commands.push(logcat_command(
            &[facts.uid],
            &LogQuery::since(from, 1),
            uid_option,
        ));
    }
    commands
}

/// The process name in `/proc/<pid>/cmdline`: the first NUL-separated word, when it is text.
fn cmdline_name(bytes: &[u8]) -> Option<String> {
    let first = bytes.split(|&b| b == 0).next()?;
    let name = std::str::from_utf8(first).ok()?.trim();
    if name.is_empty() || name.len() > 256 || name.chars().any(char::is_control) {
        return None;
    }
    Some(name.to_owned())
}

/// The packages whose uid has the same app id as `uid` (a package keeps its app id in every
/// Android user), from `pm list packages -U`.
fn packages_of_uid(listing: &str, uid: u32) -> Vec<AppId> {
    let app_id = uid % 100_000;
    phonelogs_crash::android::parse_pm_list_packages(listing)
        .into_iter()
        .filter(|package| package.uids.iter().any(|u| u % 100_000 == app_id))
        .filter_map(|package| AppId::parse(&package.package).ok())
        .collect()
}

/// Whether `am` said it failed while exiting 0 (it prints `Error: …` and exits 255 on most
/// releases, but not all).
fn said_error(output: &ShellOutput) -> bool {
    let said = format!("{}\n{}", output.stderr_text(), output.stdout_text());
    said.lines().any(|line| {
        let line = line.trim_start();
        line.starts_with("Error")
            || line.starts_with("Exception")
            || line.contains("SecurityException")
    })
}

/// The first line the device printed on stderr, for error messages.
///
/// Never stdout: it is the dump of a process whose owner the dump itself was to confirm (a pid
/// can be reused between the owner check and `debuggerd`), so its first line can be another
/// app's (see [`command_failure`]).
fn first_words(output: &ShellOutput) -> String {
    let stderr = output.stderr_text();
    let line = stderr
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or("nothing on stderr");
    line.chars().take(300).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(stdout: &str, stderr: &str, exit_code: i32) -> ShellOutput {
        ShellOutput {
            stdout: stdout.as_bytes().to_vec(),
            stderr: stderr.as_bytes().to_vec(),
            exit_code: Some(exit_code),
        }
    }

    #[test]
    fn errors_never_carry_a_dump() {
        let failed = output(
            "         1764496801.500 10200  5151  5151 I Store   : OTHER-APP-SECRET user=alice\n",
            "logcat: bad option\n",
            1,
        );
        let error = command_failure("logcat", &failed, "");
        assert!(!error.to_string().contains("OTHER-APP-SECRET"), "{error}");
        assert!(error.to_string().contains("bad option"));
        // debuggerd's answer for a pid nobody checked yet: its stdout stays out too.
        let dumped = output(
            "----- pid 4242 at 2026-11-30 -----\nCmd line: OTHER-APP-SECRET\n",
            "",
            0,
        );
        assert!(!first_words(&dumped).contains("OTHER-APP-SECRET"));
        assert_eq!(
            first_words(&output("x", "debuggerd: timed out\n", 1)),
            "debuggerd: timed out"
        );
    }

    #[test]
    fn exit_history_keeps_only_the_apps_own_uid() {
        let path = format!(
            "{}/../../testdata/android/exitinfo/two-users.txt",
            env!("CARGO_MANIFEST_DIR")
        );
        let dump = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let pids = |records: &[phonelogs_driver::ExitRecord]| {
            records.iter().map(|r| r.pid).collect::<Vec<_>>()
        };
        let package = "com.example.crashtest";
        // The app in user 0: its two exits; the clone's (user 10) is left out.
        let (mine, left_out) = own_exit_records(&dump, package, Some(10127));
        assert_eq!(pids(&mine), [Some(31500), Some(20111)]);
        assert_eq!(left_out, 1);
        // The app as the clone's user runs it: the other way round.
        let (clone, left_out) = own_exit_records(&dump, package, Some(1_010_127));
        assert_eq!(pids(&clone), [Some(32011)]);
        assert_eq!(left_out, 2);
        // Not installed: nothing is anybody's.
        assert_eq!(own_exit_records(&dump, package, None), (Vec::new(), 3));
        // A record that says no owner, or another package's section, is left out.
        let bare = "    ApplicationExitInfo #0:\n      pid=12\n      reason=6 (ANR)\n";
        assert_eq!(own_exit_records(bare, package, Some(10127)).1, 1);
        let other = dump.replace(
            "package: com.example.crashtest",
            "package: com.example.other",
        );
        assert_eq!(own_exit_records(&other, package, Some(10127)).1, 3);
    }

    #[test]
    fn owners_are_read_from_the_uid_and_cmdline() {
        let listing = "package:com.android.settings uid:1000\npackage:android uid:1000\npackage:com.whatsapp uid:10145,1010145\npackage:dev.phonelogs.crashtest uid:10234\n";
        let names = |uid| {
            packages_of_uid(listing, uid)
                .into_iter()
                .map(|a| a.to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(10234), ["dev.phonelogs.crashtest"]);
        assert_eq!(names(1_010_145), ["com.whatsapp"]);
        assert_eq!(names(1000), ["com.android.settings", "android"]);
        assert!(names(99_000).is_empty());
        assert_eq!(
            cmdline_name(b"com.android.systemui\0").as_deref(),
            Some("com.android.systemui")
        );
        assert_eq!(
            cmdline_name(b"/system/bin/surfaceflinger\0--flag\0").as_deref(),
            Some("/system/bin/surfaceflinger")
        );
        assert_eq!(cmdline_name(b""), None);
        assert_eq!(cmdline_name(b"\xff\xfe\0"), None);
    }

    #[test]
    fn refusals_are_permission_denied() {
        // As debuggerd on a user build answers for another uid's process.
        let refused = output(
            "",
            "libdebuggerd_client: failed to send signal to pid 4242: Permission denied\ndebuggerd: failed to dump process 4242\n",
            1,
        );
        assert_eq!(
            command_failure("debuggerd -b 4242", &refused, "").kind(),
            phonelogs_driver::ErrorKind::PermissionDenied
        );
        let dead = output(
            "",
            "debuggerd: failed to fetch info for process 99999: No such file or directory\n",
            1,
        );
        assert_eq!(
            command_failure("debuggerd", &dead, "").kind(),
            phonelogs_driver::ErrorKind::Backend
        );
        assert!(said_error(&output("", "Error: Unknown option: -x\n", 0)));
        assert!(!said_error(&output("", "", 0)));
    }

    /// A refusal a real phone printed, from `testdata/refusals/` (see the README there for
    /// where each was captured).
    fn real_refusal(name: &str) -> String {
        let path = format!(
            "{}/../../testdata/refusals/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{path}: {error}"))
    }

    #[test]
    fn real_refusals_are_permission_denied() {
        use phonelogs_driver::ErrorKind;
        // What a user build prints for `debuggerd` as the shell user, on stderr with exit 1.
        let root = output("", &real_refusal("debuggerd-root-required.stderr.txt"), 1);
        assert!(refused(&root));
        assert_eq!(
            command_failure("debuggerd -b 4242", &root, "").kind(),
            ErrorKind::PermissionDenied
        );
        // `dumpsys` says it on stdout and exits 0: still a refusal, never an empty dump.
        let dump = output(&real_refusal("dumpsys-permission-denial.stdout.txt"), "", 0);
        assert!(refused(&dump));
        assert_eq!(
            command_failure("dumpsys activity exit-info", &dump, &dump.stdout_text()).kind(),
            ErrorKind::PermissionDenied
        );
        // `am` refusals, on stderr with exit 255.
        for name in [
            "am-security-exception.stderr.txt",
            "shell-command-security-exception.stderr.txt",
        ] {
            let am = output("", &real_refusal(name), 255);
            assert!(refused(&am), "{name}");
            assert_eq!(
                command_failure("am set-debug-app", &am, "").kind(),
                ErrorKind::PermissionDenied,
                "{name}"
            );
        }
        // A dump whose text merely mentions a denial further down is not a refusal.
        let quoted = output(
            "ACTIVITY MANAGER PROCESS EXIT INFO (dumpsys activity exit-info)\n  description=Permission Denial: x\n",
            "",
            0,
        );
        assert!(!refused(&quoted));
    }
}
