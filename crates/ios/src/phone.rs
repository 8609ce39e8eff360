//! [`LockdownPhone`]: the iPhone driver, implementing `AppLogger` and `LogListener` over a
//! [`DeviceBackend`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use phonelogs_driver::{
    AppId, AppInfo, AppLogger, Capabilities, CrashReport, DeviceId, DeviceInfo, Error, LogListener,
    LogQuery, LogResult, Platform, Result,
};
use time::OffsetDateTime;

use crate::crashes::{read_crashes, report_name, within};
use crate::follower::{Follower, FollowerConfig, FollowerStatus, is_xctrunner};
use crate::services::{AppRecord, DeviceBackend, DeviceServices, PhoneFacts, list_within};
use crate::sources::{ListingFailed, ProcessList};

/// The driver's timings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhoneConfig {
    /// The follower's timings and limits.
    pub follower: FollowerConfig,
    /// How long one device call (connecting, a lookup, a listing, reading a report) may take.
    pub call_timeout: Duration,
}

impl Default for PhoneConfig {
    fn default() -> Self {
        PhoneConfig {
            follower: FollowerConfig::default(),
            call_timeout: Duration::from_secs(10),
        }
    }
}

type FollowerKey = (DeviceId, AppId);

/// One iPhone as `phonelogs doctor` sees it ([`LockdownPhone::check_phone`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhoneCheck {
    /// What the phone says about itself.
    pub facts: PhoneFacts,
    /// One listing of its processes.
    pub listing: std::result::Result<ProcessList, ListingFailed>,
}

/// The iPhone driver. Lines come from per-process os_trace streams that a follower keeps from
/// the first `app_logs` call until `stop_app_logs`; crash reports come from the crash report
/// services; development builds from installation_proxy's `Lookup`.
///
/// ```
/// use std::sync::Arc;
/// use phonelogs_driver::{AppLogger, Platform};
/// use phonelogs_ios::{LockdownPhone, UsbmuxdBackend};
///
/// // Nothing is contacted until a call needs a device.
/// let phone = LockdownPhone::new(Arc::new(UsbmuxdBackend::from_env()));
/// let caps = phone.capabilities();
/// assert_eq!(caps.platform, Platform::Ios);
/// assert!(caps.listener && !caps.log_history && !caps.debugger);
/// assert!(phone.listener().is_some());
/// ```
pub struct LockdownPhone {
    backend: Arc<dyn DeviceBackend>,
    config: PhoneConfig,
    followers: Mutex<HashMap<FollowerKey, Follower>>,
}

impl std::fmt::Debug for LockdownPhone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LockdownPhone")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl LockdownPhone {
    /// A driver over `backend` with the spec's timings.
    pub fn new(backend: Arc<dyn DeviceBackend>) -> Self {
        Self::with_config(backend, PhoneConfig::default())
    }

    /// A driver over `backend` with the given timings.
    pub fn with_config(backend: Arc<dyn DeviceBackend>, config: PhoneConfig) -> Self {
        LockdownPhone {
            backend,
            config,
            followers: Mutex::new(HashMap::new()),
        }
    }

    /// The UDID `device` names on this usbmuxd: the id itself, or the part after this
    /// usbmuxd's address and `/` when the gateway named it with its source.
    fn bare(&self, device: &DeviceId) -> DeviceId {
        match self.backend.address() {
            Some(source) => DeviceId::new(device.within(&source)),
            None => device.clone(),
        }
    }

    fn followers(&self) -> std::sync::MutexGuard<'_, HashMap<FollowerKey, Follower>> {
        self.followers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    async fn connect(&self, device: &DeviceId) -> Result<DeviceServices> {
        within(
            &format!("connecting to {device}"),
            self.config.call_timeout,
            self.backend.connect(device),
        )
        .await
    }

    async fn lookup(&self, services: &DeviceServices, app: &AppId) -> Result<AppRecord> {
        within(
            &format!("looking up {app}"),
            self.config.call_timeout,
            services.apps.lookup(app),
        )
        .await?
        .ok_or_else(|| Error::NotFound(format!("{app} is not installed on the iPhone")))
    }

    /// Starts the follower of `app` on `device` if it is not running. A new follower's first
    /// listing of the phone's processes is awaited (within the call's time limit), so the
    /// first read already says whether the app runs and whether its processes could be
    /// listed: never a silent empty answer.
    async fn ensure_follower(&self, device: &DeviceId, app: &AppId) -> Result<()> {
        let key = (device.clone(), app.clone());
        if self.followers().contains_key(&key) {
            return Ok(());
        }
        let services = self.connect(device).await?;
        let record = self.lookup(&services, app).await?;
        let listed = {
            let mut followers = self.followers();
            // Another call may have started it while this one looked the app up.
            let follower = followers
                .entry(key)
                .or_insert_with(|| Follower::start(record, services, self.config.follower.clone()));
            follower.listed()
        };
        if tokio::time::timeout(self.config.call_timeout, listed)
            .await
            .is_err()
        {
            tracing::warn!(%app, "the follower's first listing took longer than the call's limit");
        }
        Ok(())
    }

    /// Tells the follower of `app` that the app was just launched as `pid` (CoreDevice's
    /// `processToken`), starting the follower if needed: the stream of `pid` opens at once.
    pub async fn app_launched(&self, device: &DeviceId, app: &AppId, pid: u32) -> Result<()> {
        refuse_xctrunner(app)?;
        let device = &self.bare(device);
        self.ensure_follower(device, app).await?;
        if let Some(follower) = self.followers().get(&(device.clone(), app.clone())) {
            follower.launched(pid);
        }
        Ok(())
    }

    /// What `phonelogs doctor` reports of one iPhone: what it says about itself (version,
    /// Developer Mode, the developer disk image) and one listing of its processes (which
    /// source answered, which were passed over and why, or why none answered).
    pub async fn check_phone(&self, device: &DeviceId) -> Result<PhoneCheck> {
        let services = self.connect(&self.bare(device)).await?;
        let facts = within(
            "reading what the iPhone says about itself",
            self.config.call_timeout,
            async { Ok(services.facts.facts().await) },
        )
        .await?;
        let listing = list_within(services.processes.as_ref(), self.config.call_timeout).await;
        Ok(PhoneCheck { facts, listing })
    }

    /// What the follower of `app` on `device` is doing, when one runs.
    pub fn follower_status(&self, device: &DeviceId, app: &AppId) -> Option<FollowerStatus> {
        self.followers()
            .get(&(self.bare(device), app.clone()))
            .map(Follower::status)
    }

    /// An estimate of the memory the follower of `app` holds for its lines, in bytes.
    pub fn follower_memory(&self, device: &DeviceId, app: &AppId) -> Option<usize> {
        self.followers()
            .get(&(self.bare(device), app.clone()))
            .map(Follower::memory_bytes)
    }
}

fn refuse_xctrunner(app: &AppId) -> Result<()> {
    if is_xctrunner(app) {
        return Err(Error::PermissionDenied(format!(
            "{app} is the WebDriverAgent runner; its logs and crash reports are never read"
        )));
    }
    Ok(())
}

#[async_trait]
impl AppLogger for LockdownPhone {
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            platform: Platform::Ios,
            logs: true,
            crashes: true,
            listener: true,
            debugger: false,
            log_history: false,
            // os_trace lines carry a pid, not a uid: the follower picks processes by pid.
            line_uids: false,
            reports_name_package: false,
        }
    }

    fn source(&self) -> Option<String> {
        self.backend.address()
    }

    fn source_is_default(&self) -> bool {
        self.backend.is_default_address()
    }

    async fn devices(&self) -> Result<Vec<DeviceInfo>> {
        within(
            "listing iPhones",
            self.config.call_timeout,
            self.backend.devices(),
        )
        .await
    }

    async fn app_info(&self, device: &DeviceId, app: &AppId) -> Result<AppInfo> {
        let device = &self.bare(device);
        let services = self.connect(device).await?;
        let record = self.lookup(&services, app).await?;
        Ok(AppInfo {
            app: record.bundle_id,
            label: record.label,
            system: record.system,
            dev_build: record.dev_build,
            uid: None,
            shared_uid: false,
            version: record.version,
            // The phone does not say when the app was installed; its bundle's container moves
            // with every install, so the path tells one install from another.
            installed_at: None,
            install_id: Some(record.path),
        })
    }

    async fn app_logs(
        &self,
        device: &DeviceId,
        app: &AppId,
        query: &LogQuery,
    ) -> Result<LogResult> {
        refuse_xctrunner(app)?;
        let device = &self.bare(device);
        self.ensure_follower(device, app).await?;
        Ok(self
            .followers()
            .get(&(device.clone(), app.clone()))
            .map(|follower| follower.lines(query))
            .unwrap_or_default())
    }

    async fn follow_app_logs(
        &self,
        device: &DeviceId,
        app: &AppId,
        query: &LogQuery,
    ) -> Result<Box<dyn phonelogs_driver::LineStream>> {
        refuse_xctrunner(app)?;
        let device = &self.bare(device);
        self.ensure_follower(device, app).await?;
        // The follower already collects the app's lines: the wait is on it, no extra stream.
        self.followers()
            .get(&(device.clone(), app.clone()))
            .map(|follower| {
                Box::new(follower.follow(query)) as Box<dyn phonelogs_driver::LineStream>
            })
            .ok_or_else(|| phonelogs_driver::Error::backend(format!("no follower for {app}")))
    }

    async fn app_crashes(
        &self,
        device: &DeviceId,
        app: &AppId,
        since: OffsetDateTime,
        limit: usize,
    ) -> Result<Vec<CrashReport>> {
        refuse_xctrunner(app)?;
        let device = &self.bare(device);
        let services = self.connect(device).await?;
        // The executable's name picks the report files before any is read, so the app is
        // looked up first; without a name no file can be told to be the app's.
        let record = self.lookup(&services, app).await?;
        let Some(executable) = report_name(&record) else {
            tracing::warn!(%app, path = %record.path, "no executable name for the app; its crash reports cannot be told apart");
            return Ok(Vec::new());
        };
        read_crashes(
            services.crashes.as_ref(),
            app,
            &executable,
            since,
            limit,
            self.config.call_timeout,
        )
        .await
    }

    async fn dev_build(&self, device: &DeviceId, app: &AppId) -> Result<bool> {
        let device = &self.bare(device);
        let services = self.connect(device).await?;
        Ok(self.lookup(&services, app).await?.dev_build)
    }

    fn listener(&self) -> Option<&dyn LogListener> {
        Some(self)
    }
}

#[async_trait]
impl LogListener for LockdownPhone {
    async fn stop_app_logs(&self, device: &DeviceId, app: &AppId) -> Result<()> {
        let follower = self.followers().remove(&(self.bare(device), app.clone()));
        if let Some(follower) = follower {
            follower.stop();
        }
        Ok(())
    }
}
