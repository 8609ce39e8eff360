//! One iPhone reached through usbmuxd: the [`crate::services`] traits implemented with idevice
//! (lockdown, TLS, AFC, the CoreDevice tunnel and RSD, instruments) and this crate's own wire
//! pieces ([`crate::protocol`]: `StartActivity`, `PidList`, `Lookup`, the mover, the image
//! mounter's `LookupImage`).
//!
//! The process list comes from the best source the phone offers now ([`crate::sources`]); each
//! source is asked under its own timeout, so one that hangs (a tunnel that never comes up)
//! leaves time for the next. Every other call is made under a timeout by its caller (the
//! follower, the crash reader, the driver). Nothing here has run against a real iPhone yet:
//! see `docs/ios.md`.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use idevice::IdeviceService;
use idevice::crashreportcopymobile::CrashReportCopyMobileClient;
use idevice::lockdown::LockdownClient;
use idevice::provider::{IdeviceProvider, UsbmuxdProvider};
use idevice::{Idevice, IdeviceError, ReadWrite};
use phonelogs_crash::ostrace::OsTraceEntry;
use phonelogs_driver::{AppId, Error, Result};
use tokio::sync::Mutex;
use tokio::time::{Instant, timeout};

use crate::coredevice::{AppService, ListForm};
use crate::error::device_error;
use crate::protocol;
use crate::services::{
    AppLookup, AppRecord, CrashDir, CrashFileSource, DeviceServices, FactReader, LogStream,
    PhoneFacts, ProcessEntry, ProcessLister, StreamOpener,
};
use crate::sources::{
    Blocker, ListingFailed, ProcessList, ProcessSource, SourceMiss, SourcePlan, Step,
};

/// The label idevice gives our connections (it shows in the phone's logs).
pub(crate) const LABEL: &str = "phonelogs";
/// CoreDevice's app service, as the RSD handshake names it.
const APP_SERVICE: &str = "com.apple.coredevice.appservice";
/// os_trace_relay's RemoteXPC shim, as the RSD handshake names it.
const OS_TRACE_SHIM: &str = "com.apple.os_trace_relay.shim.remote";
/// How much of a crash report one AFC read asks for (what idevice and libimobiledevice's
/// `afcclient` ask for at most).
const READ_CHUNK: usize = 1024 * 1024;
/// How long one process source may take before the next is asked.
const SOURCE_TIMEOUT: Duration = Duration::from_secs(4);
/// How long a process source that failed waits before it is asked again.
const SOURCE_RETRY: Duration = Duration::from_secs(5);
/// The least time between two RSD handshakes made to look for a service the last one lacked
/// (the developer disk image mounted meanwhile).
const RSD_AGAIN: Duration = Duration::from_secs(3);
/// How long a tunneld may take to list its tunnels, and then the RSD handshake through one.
const TUNNELD_TIMEOUT: Duration = Duration::from_secs(1);
/// The lockdown domain of Developer Mode's state (pymobiledevice3
/// `lockdown_service_provider.py` `get_developer_mode_status`).
const AMFI_DOMAIN: &str = "com.apple.security.mac.amfi";

/// Declares a lockdown service by name, so idevice's `connect` starts it (lockdown session,
/// StartService, TLS) and hands back the raw connection for [`crate::protocol`].
macro_rules! raw_service {
    ($name:ident, $service:expr) => {
        #[derive(Debug)]
        struct $name(Idevice);

        impl IdeviceService for $name {
            fn service_name() -> std::borrow::Cow<'static, str> {
                std::borrow::Cow::Borrowed($service)
            }

            async fn from_stream(idevice: Idevice) -> std::result::Result<Self, IdeviceError> {
                Ok($name(idevice))
            }
        }

        impl $name {
            /// The raw connection, with idevice's own error (for [`Blocker`]s).
            async fn socket(
                provider: &UsbmuxdProvider,
            ) -> std::result::Result<Box<dyn ReadWrite>, IdeviceError> {
                $name::connect(provider)
                    .await?
                    .0
                    .get_socket()
                    .ok_or_else(|| {
                        IdeviceError::UnexpectedResponse(format!("{} closed at once", $service))
                    })
            }

            // Not every service is opened with the driver's error (the image mounter is not).
            #[allow(dead_code)]
            async fn open(provider: &UsbmuxdProvider) -> Result<Box<dyn ReadWrite>> {
                $name::socket(provider)
                    .await
                    .map_err(|e| device_error(&format!("starting {}", $service), e))
            }
        }
    };
}

raw_service!(OsTraceService, protocol::OS_TRACE_RELAY);
raw_service!(InstallationProxyService, protocol::INSTALLATION_PROXY);
raw_service!(MoverService, protocol::CRASH_REPORT_MOVER);
raw_service!(ImageMounterService, protocol::IMAGE_MOUNTER);

/// How streams reach the phone's RSD services: through our own CoreDevice tunnel (idevice's
/// userspace TCP stack over CoreDeviceProxy, iOS 17.4 and later), or through a tunnel another
/// program runs (pymobiledevice3's `remote tunneld`), whose address the system routes.
enum Transport {
    Own(idevice::tcp::handle::AdapterHandle),
    Tunneld(std::net::IpAddr),
}

impl Transport {
    async fn connect(
        &mut self,
        port: u16,
    ) -> std::result::Result<Box<dyn ReadWrite>, IdeviceError> {
        match self {
            Transport::Own(handle) => Ok(Box::new(handle.connect(port).await?)),
            Transport::Tunneld(address) => {
                let stream = tokio::net::TcpStream::connect((*address, port)).await?;
                Ok(Box::new(stream))
            }
        }
    }
}

/// A CoreDevice tunnel with its RSD services, kept between polls: setting up the tunnel and
/// the RSD handshake every second would be wasteful.
struct Tunnel {
    // Every stream opened through the tunnel goes through this.
    transport: Transport,
    /// RSD's port inside the tunnel, for a new handshake.
    rsd_port: u16,
    /// The services of the last handshake, with their ports and `Features`.
    services: HashMap<String, idevice::rsd::RsdService>,
    /// When the last handshake was made.
    handshake_at: Instant,
    /// The app service's connection, kept between polls; taken out for each call and put back
    /// only when the call finished (see [`AppService::processes`]).
    app_service: Option<AppService>,
}

impl Tunnel {
    async fn new(
        mut transport: Transport,
        rsd_port: u16,
    ) -> std::result::Result<Tunnel, IdeviceError> {
        let services = rsd_services(&mut transport, rsd_port).await?;
        Ok(Tunnel {
            transport,
            rsd_port,
            services,
            handshake_at: Instant::now(),
            app_service: None,
        })
    }

    /// Does the RSD handshake again over the same tunnel, at most every [`RSD_AGAIN`]: a
    /// service the last one lacked may be there now (`ServiceNotFound` never clears itself
    /// otherwise, so a DDI mounted during a follow would never be seen).
    async fn handshake_again(&mut self) -> std::result::Result<bool, IdeviceError> {
        if self.handshake_at.elapsed() < RSD_AGAIN {
            return Ok(false);
        }
        self.handshake_at = Instant::now();
        self.services = rsd_services(&mut self.transport, self.rsd_port).await?;
        self.app_service = None;
        Ok(true)
    }

    /// The app service's `Features` in the last handshake (`None`: it listed none).
    fn features(&self, service: &str) -> Option<&[String]> {
        self.services.get(service)?.features.as_deref()
    }
}

async fn rsd_services(
    transport: &mut Transport,
    port: u16,
) -> std::result::Result<HashMap<String, idevice::rsd::RsdService>, IdeviceError> {
    let stream = transport.connect(port).await?;
    let handshake = idevice::rsd::RsdHandshake::new(stream).await?;
    Ok(handshake.services)
}

type Instruments = idevice::dvt::remote_server::RemoteServerClient<Box<dyn ReadWrite>>;
type Running = Vec<idevice::dvt::device_info::RunningProcess>;
type RunningReply = tokio::sync::oneshot::Sender<std::result::Result<Running, IdeviceError>>;

/// instruments' `deviceinfo` channel (iOS 16 and earlier), opened once on its own connection
/// and asked for `runningProcesses` at every poll. A task owns the connection and the channel
/// (idevice's channel borrows its client, so the two cannot be kept side by side in a struct);
/// it ends, closing both, when this handle is dropped, when a call fails, or when a caller
/// gives up waiting (so a late answer is never read as the next poll's).
struct InstrumentsLister {
    requests: tokio::sync::mpsc::Sender<RunningReply>,
}

impl InstrumentsLister {
    fn start(client: Instruments) -> Self {
        let (requests, asked) = tokio::sync::mpsc::channel(1);
        tokio::spawn(serve_instruments(client, asked));
        InstrumentsLister { requests }
    }

    async fn processes(&mut self) -> std::result::Result<Running, IdeviceError> {
        let (reply, answer) = tokio::sync::oneshot::channel();
        let ended = || IdeviceError::UnexpectedResponse("the instruments session ended".into());
        self.requests.send(reply).await.map_err(|_| ended())?;
        answer.await.map_err(|_| ended())?
    }
}

async fn serve_instruments(
    mut client: Instruments,
    mut asked: tokio::sync::mpsc::Receiver<RunningReply>,
) {
    let Some(mut reply) = asked.recv().await else {
        return;
    };
    let mut info = match idevice::dvt::device_info::DeviceInfoClient::new(&mut client).await {
        Ok(info) => info,
        Err(error) => {
            let _ = reply.send(Err(error));
            return;
        }
    };
    loop {
        let listed = tokio::select! {
            listed = info.running_processes() => listed,
            () = reply.closed() => return,
        };
        let failed = listed.is_err();
        if reply.send(listed).is_err() || failed {
            return;
        }
        match asked.recv().await {
            Some(next) => reply = next,
            None => return,
        }
    }
}

/// One phone reached through usbmuxd, implementing every service trait with idevice.
pub(crate) struct IdevicePhone {
    provider: UsbmuxdProvider,
    /// The tunnelds asked first for this phone's RSD tunnel.
    tunnelds: Arc<[std::net::SocketAddr]>,
    tunnel: Mutex<Option<Tunnel>>,
    instruments: Mutex<Option<InstrumentsLister>>,
    /// Which process source to ask, built once the phone's version is known.
    sources: Mutex<Option<SourcePlan>>,
    /// Set once a lockdown stream stayed silent while its process ran: this phone's streams
    /// then open through the RemoteXPC shim first.
    shim_first: AtomicBool,
}

impl IdevicePhone {
    pub(crate) fn new(
        provider: UsbmuxdProvider,
        tunnelds: Arc<[std::net::SocketAddr]>,
    ) -> Arc<Self> {
        Arc::new(IdevicePhone {
            provider,
            tunnelds,
            tunnel: Mutex::new(None),
            instruments: Mutex::new(None),
            sources: Mutex::new(None),
            shim_first: AtomicBool::new(false),
        })
    }

    pub(crate) fn services(self: Arc<Self>) -> DeviceServices {
        DeviceServices {
            processes: self.clone(),
            streams: self.clone(),
            apps: self.clone(),
            crashes: self.clone(),
            facts: self,
        }
    }

    /// One lockdown value, in a session (as pymobiledevice3 reads them).
    async fn lockdown_value(
        &self,
        key: &str,
        domain: Option<&str>,
    ) -> std::result::Result<plist::Value, IdeviceError> {
        let mut lockdown = LockdownClient::connect(&self.provider).await?;
        let pairing = self.provider.get_pairing_file().await?;
        lockdown.start_session(&pairing).await?;
        lockdown.get_value(Some(key), domain).await
    }

    /// `ProductVersion`, when lockdown says.
    async fn product_version(&self) -> Option<String> {
        match self.lockdown_value("ProductVersion", None).await {
            Ok(value) => value.as_string().map(str::to_owned),
            Err(error) => {
                tracing::debug!(%error, "reading the iPhone's ProductVersion failed");
                None
            }
        }
    }

    /// Developer Mode's state (`DeveloperModeStatus`), when lockdown says (iOS 16 and later).
    async fn developer_mode(&self) -> Option<bool> {
        match self
            .lockdown_value("DeveloperModeStatus", Some(AMFI_DOMAIN))
            .await
        {
            Ok(value) => value.as_boolean(),
            Err(error) => {
                tracing::debug!(%error, "reading Developer Mode's state failed");
                None
            }
        }
    }

    /// Whether the developer disk image is mounted, as the image mounter says: `LookupImage`
    /// of the image type this version mounts, then `CopyDevices` (see
    /// [`protocol::image_mounted`]).
    async fn disk_image_mounted(&self, version: Option<&str>) -> std::result::Result<bool, String> {
        let personalized = version
            .and_then(crate::sources::IosVersion::parse)
            .is_none_or(|v| v.major >= 17);
        let image_type = if personalized {
            "Personalized"
        } else {
            "Developer"
        };
        let mut socket = ImageMounterService::socket(&self.provider)
            .await
            .map_err(|e| format!("starting {}: {e}", protocol::IMAGE_MOUNTER))?;
        protocol::image_mounted(&mut socket, image_type)
            .await
            .map_err(|e| e.to_string())
    }

    /// The phone's RSD tunnel: one a running tunneld lists for it (pymobiledevice3's `remote
    /// tunneld`, the only way iOS 17.0 to 17.3 reach RSD), else our own through
    /// CoreDeviceProxy (17.4 and later; 17.0 to 17.3 refuse it with `InvalidService`).
    async fn open_tunnel(&self) -> std::result::Result<Tunnel, TunnelFailure> {
        for tunneld in self.tunnelds.iter() {
            match self.tunneld_tunnel(*tunneld).await {
                Ok(Some(tunnel)) => return Ok(tunnel),
                Ok(None) => {}
                Err(error) => {
                    tracing::debug!(%tunneld, %error, "no tunnel from this tunneld");
                }
            }
        }
        let proxy = idevice::core_device_proxy::CoreDeviceProxy::connect(&self.provider)
            .await
            .map_err(TunnelFailure::starting_proxy)?;
        Ok(self.own_tunnel(proxy).await?)
    }

    /// The tunnel `tunneld` lists for this phone (idevice's tunneld client: `GET /` answers
    /// `{udid: [{"tunnel-address", "tunnel-port", "interface"}]}`, its first entry taken),
    /// with its RSD handshake made; `None` when it lists none for this phone.
    async fn tunneld_tunnel(
        &self,
        tunneld: std::net::SocketAddr,
    ) -> std::result::Result<Option<Tunnel>, IdeviceError> {
        let listed = timeout(
            TUNNELD_TIMEOUT,
            idevice::tunneld::get_tunneld_devices(tunneld),
        )
        .await
        .map_err(|_| IdeviceError::Timeout)??;
        let Some(entry) = listed.get(&self.provider.udid) else {
            return Ok(None);
        };
        // A link-local address may carry its interface (`fe80::1%utun4`); the tunnels
        // tunneld makes are unique-local, reached without one.
        let host = entry.tunnel_address.split('%').next().unwrap_or_default();
        let address: std::net::IpAddr = host.parse().map_err(|_| {
            IdeviceError::UnexpectedResponse(format!(
                "tunneld listed the tunnel address {:?}",
                entry.tunnel_address
            ))
        })?;
        let tunnel = timeout(
            TUNNELD_TIMEOUT,
            Tunnel::new(Transport::Tunneld(address), entry.tunnel_port),
        )
        .await
        .map_err(|_| IdeviceError::Timeout)??;
        tracing::info!(%tunneld, tunnel = %address, port = entry.tunnel_port, "reading the iPhone through a running tunneld's tunnel");
        Ok(Some(tunnel))
    }

    async fn own_tunnel(
        &self,
        proxy: idevice::core_device_proxy::CoreDeviceProxy,
    ) -> std::result::Result<Tunnel, IdeviceError> {
        let rsd_port = proxy.tunnel_info().server_rsd_port;
        let handle = proxy.create_software_tunnel()?.to_async_handle();
        Tunnel::new(Transport::Own(handle), rsd_port).await
    }

    /// The port of an RSD service, setting up the tunnel if needed, and doing the RSD handshake
    /// again (rate-limited) when the last one did not list the service.
    async fn tunnel_port(
        &self,
        slot: &mut Option<Tunnel>,
        service: &str,
    ) -> std::result::Result<u16, TunnelFailure> {
        if slot.is_none() {
            *slot = Some(self.open_tunnel().await?);
        }
        let Some(tunnel) = slot.as_mut() else {
            return Err(no_tunnel().into());
        };
        if let Some(found) = tunnel.services.get(service) {
            return Ok(found.port);
        }
        match tunnel.handshake_again().await {
            Ok(_) => tunnel
                .services
                .get(service)
                .map(|found| found.port)
                .ok_or(IdeviceError::ServiceNotFound.into()),
            Err(error) => {
                // A tunnel whose RSD no longer answers is set up again next time.
                *slot = None;
                Err(error.into())
            }
        }
    }

    async fn coredevice_processes(
        &self,
        version: &str,
    ) -> std::result::Result<Vec<ProcessEntry>, TunnelFailure> {
        let mut slot = self.tunnel.lock().await;
        let port = self.tunnel_port(&mut slot, APP_SERVICE).await?;
        let Some(tunnel) = slot.as_mut() else {
            return Err(no_tunnel().into());
        };
        // Taken out for the call: a call cut short by the caller's timeout drops it with its
        // unanswered request, so the next poll opens a new one (see `AppService::processes`).
        let mut client = match tunnel.app_service.take() {
            Some(client) => client,
            None => {
                let version = crate::sources::IosVersion::parse(version);
                let form = ListForm::choose(tunnel.features(APP_SERVICE), version)
                    .map_err(IdeviceError::UnexpectedResponse)?;
                let stream = tunnel.transport.connect(port).await?;
                AppService::new(stream, form).await?
            }
        };
        match client.processes().await {
            Ok(list) => {
                tunnel.app_service = Some(client);
                Ok(list)
            }
            Err(error) => {
                // A broken tunnel is set up again on the next poll.
                *slot = None;
                Err(error.into())
            }
        }
    }

    /// Opens os_trace_relay's RemoteXPC shim through the CoreDevice tunnel: the RSD check-in,
    /// then the same protocol as over lockdown.
    async fn shim_stream(&self) -> std::result::Result<Box<dyn ReadWrite>, IdeviceError> {
        let mut slot = self.tunnel.lock().await;
        let port = self
            .tunnel_port(&mut slot, OS_TRACE_SHIM)
            .await
            .map_err(TunnelFailure::into_inner)?;
        let Some(tunnel) = slot.as_mut() else {
            return Err(no_tunnel());
        };
        let stream = match tunnel.transport.connect(port).await {
            Ok(stream) => stream,
            Err(error) => {
                *slot = None;
                return Err(error);
            }
        };
        let mut idevice = Idevice::new(stream, LABEL);
        idevice.rsd_checkin().await?;
        idevice
            .get_socket()
            .ok_or_else(|| IdeviceError::UnexpectedResponse("the shim closed at once".into()))
    }

    async fn instruments_processes(&self) -> std::result::Result<Vec<ProcessEntry>, IdeviceError> {
        let mut slot = self.instruments.lock().await;
        if slot.is_none() {
            *slot = Some(InstrumentsLister::start(
                Instruments::connect(&self.provider).await?,
            ));
        }
        let Some(lister) = slot.as_mut() else {
            return Err(IdeviceError::UnexpectedResponse(
                "no instruments session".into(),
            ));
        };
        match lister.processes().await {
            Ok(processes) => Ok(processes
                .into_iter()
                .map(|p| ProcessEntry::at(p.pid, p.real_app_name))
                .collect()),
            Err(error) => {
                *slot = None;
                Err(error)
            }
        }
    }

    async fn pid_list(&self) -> std::result::Result<Vec<ProcessEntry>, Blocker> {
        let mut socket = OsTraceService::socket(&self.provider)
            .await
            .map_err(|e| blocker_of(&e).unwrap_or_else(|| failed("starting os_trace_relay", &e)))?;
        let listed = protocol::pid_list(&mut socket)
            .await
            .map_err(|e| Blocker::Failed(format!("PidList: {e}")))?;
        Ok(listed
            .into_iter()
            .map(|(pid, name)| ProcessEntry::named(pid, name))
            .collect())
    }

    /// Asks one source, under [`SOURCE_TIMEOUT`], and says why it did not answer.
    async fn list_from(
        &self,
        source: ProcessSource,
        version: &str,
    ) -> std::result::Result<Vec<ProcessEntry>, Blocker> {
        let asked = async {
            match source {
                ProcessSource::CoreDevice => match self.coredevice_processes(version).await {
                    Ok(list) => Ok(list),
                    Err(error) => Err(self.coredevice_blocker(&error, version).await),
                },
                ProcessSource::Instruments => match self.instruments_processes().await {
                    Ok(list) => Ok(list),
                    Err(error) => Err(self.instruments_blocker(&error).await),
                },
                ProcessSource::PidList => self.pid_list().await,
            }
        };
        match timeout(SOURCE_TIMEOUT, asked).await {
            Ok(result) => result,
            Err(_) => Err(Blocker::Failed(format!(
                "no answer within {} s",
                SOURCE_TIMEOUT.as_secs()
            ))),
        }
    }

    /// Why CoreDevice's process list failed, by the failure's kind: the phone refused
    /// CoreDeviceProxy (on 17.0 to 17.3, or a phone of unknown version, that is the missing
    /// tunnel, whatever the error's name; on 17.4 and later a refusal with its words), no app
    /// service in RSD (the DDI, or Developer Mode that it needs), or anything else.
    async fn coredevice_blocker(&self, failure: &TunnelFailure, version: &str) -> Blocker {
        let error = failure.inner();
        if let Some(blocker) = blocker_of(error) {
            return blocker;
        }
        let parsed = crate::sources::IosVersion::parse(version);
        match failure {
            TunnelFailure::ProxyRefused(error) => match parsed {
                Some(v) if (v.major, v.minor) >= (17, 4) => {
                    failed("the iPhone refused CoreDeviceProxy", error)
                }
                _ => Blocker::NoTunnel {
                    version: if version.is_empty() {
                        "on this iPhone".into()
                    } else {
                        version.into()
                    },
                },
            },
            TunnelFailure::Other(IdeviceError::ServiceNotFound) => self.disk_image_blocker().await,
            TunnelFailure::Other(other) => failed("the CoreDevice tunnel", other),
        }
    }

    /// Why instruments' process list failed: on iOS 16 its service comes from the DDI.
    async fn instruments_blocker(&self, error: &IdeviceError) -> Blocker {
        if let Some(blocker) = blocker_of(error) {
            return blocker;
        }
        match error {
            IdeviceError::ServiceNotFound => self.disk_image_blocker().await,
            IdeviceError::UnknownErrorType(kind) if kind == "InvalidService" => {
                self.disk_image_blocker().await
            }
            other => failed("instruments", other),
        }
    }

    /// A missing developer service: Developer Mode off, or the DDI not mounted.
    async fn disk_image_blocker(&self) -> Blocker {
        match self.developer_mode().await {
            Some(false) => Blocker::DeveloperModeOff,
            _ => Blocker::DiskImageNotMounted,
        }
    }

    /// The plan of this phone's sources, built once its version is known.
    async fn listing(&self) -> std::result::Result<ProcessList, ListingFailed> {
        let mut plan = self.sources.lock().await;
        if plan.is_none() {
            // Without a version every source is tried; the plan is kept only once the phone
            // said which version it runs (a locked phone may not say).
            let version = self.product_version().await;
            let mut built = SourcePlan::new(version.as_deref(), SOURCE_RETRY);
            if version.is_none() {
                return self.list_with(&mut built, "").await;
            }
            *plan = Some(built);
        }
        let Some(plan) = plan.as_mut() else {
            return Err(ListingFailed::one(
                ProcessSource::PidList,
                Blocker::Failed("no source plan".into()),
            ));
        };
        let version = plan.version_text().to_owned();
        self.list_with(plan, &version).await
    }

    async fn list_with(
        &self,
        plan: &mut SourcePlan,
        version: &str,
    ) -> std::result::Result<ProcessList, ListingFailed> {
        let mut misses = Vec::new();
        for step in plan.steps(Instant::now()) {
            let source = match step {
                Step::PassOver(miss) => {
                    misses.push(miss);
                    continue;
                }
                Step::Try(source) => source,
            };
            match self.list_from(source, version).await {
                Ok(processes) => {
                    plan.succeeded(source);
                    return Ok(ProcessList {
                        processes,
                        source,
                        passed_over: misses,
                    });
                }
                Err(blocker) => {
                    tracing::debug!(%source, cause = %blocker.cause(), "a process source did not answer");
                    plan.failed(source, blocker.clone(), Instant::now());
                    misses.push(SourceMiss { source, blocker });
                }
            }
        }
        Err(ListingFailed { misses })
    }
}

/// The blockers any service's failure can show: a locked or untrusted phone, Developer Mode.
fn blocker_of(error: &IdeviceError) -> Option<Blocker> {
    match error {
        IdeviceError::DeviceLocked => Some(Blocker::Locked),
        // Without idevice's `pair` feature lockdown's `PasswordProtected` stays untyped.
        IdeviceError::UnknownErrorType(kind) if kind == "PasswordProtected" => {
            Some(Blocker::Locked)
        }
        IdeviceError::InvalidHostID => Some(Blocker::NotTrusted),
        IdeviceError::DeveloperModeNotEnabled => Some(Blocker::DeveloperModeOff),
        _ => None,
    }
}

/// Why the CoreDevice tunnel, or a call through it, failed: the phone refused to start
/// CoreDeviceProxy (lockdown answered `StartService` with an error), or anything else.
#[derive(Debug)]
enum TunnelFailure {
    ProxyRefused(IdeviceError),
    Other(IdeviceError),
}

impl From<IdeviceError> for TunnelFailure {
    fn from(error: IdeviceError) -> Self {
        TunnelFailure::Other(error)
    }
}

impl TunnelFailure {
    /// A failure of starting CoreDeviceProxy over lockdown: a transport failure stays one
    /// (the phone said nothing); any answer of lockdown's is a refusal.
    fn starting_proxy(error: IdeviceError) -> Self {
        match error {
            IdeviceError::Socket(_) | IdeviceError::Timeout => TunnelFailure::Other(error),
            refused => TunnelFailure::ProxyRefused(refused),
        }
    }

    fn inner(&self) -> &IdeviceError {
        match self {
            TunnelFailure::ProxyRefused(error) | TunnelFailure::Other(error) => error,
        }
    }

    fn into_inner(self) -> IdeviceError {
        match self {
            TunnelFailure::ProxyRefused(error) | TunnelFailure::Other(error) => error,
        }
    }
}

fn no_tunnel() -> IdeviceError {
    IdeviceError::UnexpectedResponse("no CoreDevice tunnel".into())
}

fn failed(what: &str, error: &IdeviceError) -> Blocker {
    Blocker::Failed(format!("{what}: {error}"))
}

#[async_trait]
impl ProcessLister for IdevicePhone {
    async fn processes(&self) -> std::result::Result<ProcessList, ListingFailed> {
        self.listing().await
    }
}

#[async_trait]
impl FactReader for IdevicePhone {
    async fn facts(&self) -> PhoneFacts {
        let product_version = self.product_version().await;
        let developer_mode = self.developer_mode().await;
        let disk_image = self.disk_image_mounted(product_version.as_deref()).await;
        PhoneFacts {
            product_version,
            developer_mode,
            disk_image,
        }
    }
}

struct SocketStream {
    socket: Box<dyn ReadWrite>,
    skipped: protocol::Skipped,
    /// Where refused records are counted for the follower's notice.
    refused: Option<Arc<std::sync::atomic::AtomicU64>>,
}

#[async_trait]
impl LogStream for SocketStream {
    async fn next_entry(&mut self) -> Result<Option<OsTraceEntry>> {
        Ok(protocol::next_entry_counted(
            &mut self.socket,
            &mut self.skipped,
            self.refused.as_deref(),
        )
        .await?)
    }

    fn count_refused_in(&mut self, refused: Arc<std::sync::atomic::AtomicU64>) {
        self.refused = Some(refused);
    }
}

impl IdevicePhone {
    async fn lockdown_stream(&self) -> Result<Box<dyn ReadWrite>> {
        OsTraceService::open(&self.provider).await
    }

    async fn shim(&self) -> Result<Box<dyn ReadWrite>> {
        self.shim_stream()
            .await
            .map_err(|e| device_error("opening os_trace_relay's RemoteXPC shim", e))
    }
}

#[async_trait]
impl StreamOpener for IdevicePhone {
    async fn open(&self, pid: u32) -> Result<Box<dyn LogStream>> {
        // Over lockdown first (the shim first on a phone whose lockdown streams stayed silent);
        // the other way when that fails.
        let shim_first = self.shim_first.load(Ordering::Relaxed);
        let first = if shim_first {
            self.shim().await
        } else {
            self.lockdown_stream().await
        };
        let mut socket = match first {
            Ok(socket) => socket,
            Err(first_error) => {
                tracing::debug!(%first_error, shim_first, "opening os_trace_relay failed; trying the other way");
                let second = if shim_first {
                    self.lockdown_stream().await
                } else {
                    self.shim().await
                };
                second.map_err(|second_error| {
                    Error::backend(format!(
                        "opening os_trace_relay failed both over lockdown and through the RemoteXPC shim ({first_error}; {second_error})"
                    ))
                })?
            }
        };
        protocol::start_activity(&mut socket, pid).await?;
        Ok(Box::new(SocketStream {
            socket,
            skipped: protocol::Skipped::default(),
            refused: None,
        }))
    }

    async fn open_other(&self, pid: u32) -> Result<Box<dyn LogStream>> {
        let mut socket = self.shim().await?;
        protocol::start_activity(&mut socket, pid).await?;
        Ok(Box::new(SocketStream {
            socket,
            skipped: protocol::Skipped::default(),
            refused: None,
        }))
    }

    fn other_way_worked(&self) {
        // The shim delivered while lockdown, opened beside it, stayed silent: from now on this
        // phone's streams open through the shim first. A quiet app (both silent) never gets
        // here.
        self.shim_first.store(true, Ordering::Relaxed);
    }
}

#[async_trait]
impl AppLookup for IdevicePhone {
    async fn lookup(&self, app: &AppId) -> Result<Option<AppRecord>> {
        let mut socket = InstallationProxyService::open(&self.provider).await?;
        Ok(protocol::lookup(&mut socket, app).await?)
    }
}

struct AfcDir {
    client: CrashReportCopyMobileClient,
}

#[async_trait]
impl CrashDir for AfcDir {
    async fn list(&mut self, dir: &str) -> Result<Vec<String>> {
        let path = format!("/{}", dir.trim_matches('/'));
        let mut names = self
            .client
            .afc_client
            .list_dir(path.as_str())
            .await
            .map_err(|e| device_error(&format!("listing {path}"), e))?;
        names.retain(|n| n != "." && n != "..");
        Ok(names)
    }

    async fn read(&mut self, path: &str) -> Result<Vec<u8>> {
        // Opened read-only and closed again; nothing is moved or deleted. Read in chunks up to
        // our cap rather than with `pull`, whose `read_entire` reserves the size the phone
        // claims for the file before a byte comes (a phone that claims 2^60 bytes would abort
        // the process).
        let name = format!("/{}", path.trim_start_matches('/'));
        let afc = &mut self.client.afc_client;
        let mut file = afc
            .open(name.as_str(), idevice::afc::opcode::AfcFopenMode::RdOnly)
            .await
            .map_err(|e| device_error(&format!("opening {path}"), e))?;
        let mut bytes = Vec::new();
        let read = loop {
            match file.read_n(READ_CHUNK).await {
                Ok(chunk) if chunk.is_empty() => break Ok(()),
                Ok(chunk) => {
                    bytes.extend_from_slice(&chunk);
                    if bytes.len() > crate::crashes::MAX_REPORT_BYTES {
                        break Err(Error::backend(format!(
                            "{path} is larger than {} MiB, more than a crash report holds; not read",
                            crate::crashes::MAX_REPORT_BYTES >> 20
                        )));
                    }
                }
                Err(e) => break Err(device_error(&format!("reading {path}"), e)),
            }
        };
        // Closed whatever the read did, or the phone's descriptor leaks.
        let closed = file.close().await;
        read?;
        closed.map_err(|e| device_error(&format!("closing {path}"), e))?;
        Ok(bytes)
    }
}

#[async_trait]
impl CrashFileSource for IdevicePhone {
    async fn flush(&self) -> Result<()> {
        let mut socket = MoverService::open(&self.provider).await?;
        Ok(protocol::await_ping(&mut socket).await?)
    }

    async fn open(&self) -> Result<Box<dyn CrashDir>> {
        let client = CrashReportCopyMobileClient::connect(&self.provider)
            .await
            .map_err(|e| device_error("starting com.apple.crashreportcopymobile", e))?;
        Ok(Box::new(AfcDir { client }))
    }
}
