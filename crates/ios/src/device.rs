//! The real phone: devices from the host's usbmuxd, and the [`crate::services`] traits
//! implemented with idevice (lockdown, TLS, AFC, the CoreDevice tunnel, instruments).
//!
//! Every call here is made under a timeout by its caller (the follower, the crash reader, the
//! driver); this module adds none of its own policy. Nothing here has run against a real
//! iPhone yet: see `docs/ios.md`.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use idevice::IdeviceService;
use idevice::crashreportcopymobile::CrashReportCopyMobileClient;
use idevice::provider::UsbmuxdProvider;
use idevice::usbmuxd::{Connection, UsbmuxdAddr};
use idevice::{Idevice, IdeviceError, ReadWrite};
use phonelogs_crash::ostrace::OsTraceEntry;
use phonelogs_driver::{AppId, DeviceId, DeviceInfo, DeviceState, Error, Platform, Result};
use tokio::sync::Mutex;

use crate::error::{NOT_PAIRED_ADVICE, device_error};
use crate::protocol;
use crate::services::{
    AppLookup, AppRecord, CrashDir, CrashFileSource, DeviceBackend, DeviceServices, LogStream,
    ProcessEntry, ProcessLister, StreamOpener,
};

/// The label idevice gives our connections (it shows in the phone's logs).
const LABEL: &str = "phonelogs";
/// CoreDevice's app service, as the RSD handshake names it.
const APP_SERVICE: &str = "com.apple.coredevice.appservice";
/// os_trace_relay's RemoteXPC shim, as the RSD handshake names it.
const OS_TRACE_SHIM: &str = "com.apple.os_trace_relay.shim.remote";
/// usbmuxd's message tag for our requests.
const TAG: u32 = 0x706c;

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
            async fn open(provider: &UsbmuxdProvider) -> Result<Box<dyn ReadWrite>> {
                let service = $name::connect(provider)
                    .await
                    .map_err(|e| device_error(&format!("starting {}", $service), e))?;
                service
                    .0
                    .get_socket()
                    .ok_or_else(|| Error::Disconnected(format!("{} closed at once", $service)))
            }
        }
    };
}

raw_service!(OsTraceService, protocol::OS_TRACE_RELAY);
raw_service!(InstallationProxyService, protocol::INSTALLATION_PROXY);
raw_service!(MoverService, protocol::CRASH_REPORT_MOVER);

/// Whether a device id looks like a Simulator's (a UUID, 8-4-4-4-12), which usbmuxd never
/// lists: its logs are on the Mac.
pub fn looks_like_simulator(id: &str) -> bool {
    let groups: Vec<&str> = id.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8usize, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The devices of the host's usbmuxd (`USBMUXD_SOCKET_ADDRESS` honoured: a socket path or
/// `host:port`; `/var/run/usbmuxd` otherwise), cable and Wi-Fi.
#[derive(Debug, Clone)]
pub struct UsbmuxdBackend {
    addr: std::result::Result<UsbmuxdAddr, String>,
    /// This usbmuxd stands for the platform's own wherever it listens (a demo's simulated
    /// iPhone): its phones keep their bare UDIDs ([`UsbmuxdBackend::is_default`]).
    stands_for_default: bool,
}

impl UsbmuxdBackend {
    /// The usbmuxd that `USBMUXD_SOCKET_ADDRESS` names, or the default socket.
    pub fn from_env() -> Self {
        let addr = match std::env::var("USBMUXD_SOCKET_ADDRESS") {
            Ok(_) => UsbmuxdAddr::from_env_var().map_err(|e| {
                format!("USBMUXD_SOCKET_ADDRESS is not a socket path or host:port: {e}")
            }),
            Err(_) => Ok(UsbmuxdAddr::UnixSocket(UsbmuxdAddr::SOCKET_FILE.to_owned())),
        };
        UsbmuxdBackend {
            addr,
            stands_for_default: false,
        }
    }

    /// The same usbmuxd, standing for the platform's own: its phones keep their bare UDIDs
    /// wherever it listens (a demo's simulated iPhone on a loopback port).
    pub fn standing_for_default(mut self) -> Self {
        self.stands_for_default = true;
        self
    }

    /// The usbmuxd at `addr`.
    pub fn with_addr(addr: UsbmuxdAddr) -> Self {
        UsbmuxdBackend {
            addr: Ok(addr),
            stands_for_default: false,
        }
    }

    /// The usbmuxd that `text` names, as `--usbmuxd` and the `usbmuxd` key take it and with
    /// `USBMUXD_SOCKET_ADDRESS`'s rule (idevice's `UsbmuxdAddr::from_env_var`): with a `:` a
    /// TCP `host:port` (a shared usbmuxd: socat, netmuxd), else a Unix socket path; a leading
    /// `UNIX:` or `tcp:` is accepted. A host name is resolved here, once.
    ///
    /// ```
    /// use phonelogs_ios::UsbmuxdBackend;
    /// assert_eq!(UsbmuxdBackend::parse("127.0.0.1:27015")?.address(), "127.0.0.1:27015");
    /// assert_eq!(UsbmuxdBackend::parse("/var/run/usbmuxd")?.address(), "/var/run/usbmuxd");
    /// assert_eq!(UsbmuxdBackend::parse("[::1]:27015")?.address(), "[::1]:27015");
    /// assert!(UsbmuxdBackend::parse("").is_err());
    /// assert!(UsbmuxdBackend::parse("::1:27015").is_err());
    /// # Ok::<(), phonelogs_driver::Error>(())
    /// ```
    pub fn parse(text: &str) -> Result<Self> {
        let text = text.trim();
        let bad = |why: String| {
            Error::InvalidArgument(format!("{text:?} is not a usbmuxd address: {why}"))
        };
        if text.is_empty() {
            return Err(bad("it is empty".into()));
        }
        if let Some(path) = text.strip_prefix("UNIX:") {
            return unix_addr(path).ok_or_else(|| bad("Unix sockets need a Unix system".into()));
        }
        let tcp = text.strip_prefix("tcp:").unwrap_or(text);
        if !tcp.contains(':') {
            return unix_addr(tcp).ok_or_else(|| bad("Unix sockets need a Unix system".into()));
        }
        // An IPv6 host only in brackets: `fe80::1:27015` would otherwise be read (by the host
        // and port split below) as host `fe80::1` on port 27015, and `::1` as host `:`.
        if !tcp.starts_with('[')
            && tcp
                .rsplit_once(':')
                .is_some_and(|(host, _)| host.contains(':'))
        {
            return Err(bad("an IPv6 host needs brackets (write [v6]:port)".into()));
        }
        if let Ok(socket) = tcp.parse::<std::net::SocketAddr>() {
            return Ok(Self::with_addr(UsbmuxdAddr::TcpSocket(socket)));
        }
        use std::net::ToSocketAddrs;
        match tcp.to_socket_addrs().map(|mut all| all.next()) {
            Ok(Some(socket)) => Ok(Self::with_addr(UsbmuxdAddr::TcpSocket(socket))),
            Ok(None) => Err(bad("the host has no address".into())),
            Err(error) => Err(bad(error.to_string())),
        }
    }

    /// The address as people write it: `host:port` or the socket's path (or why it is
    /// unusable, for a bad `USBMUXD_SOCKET_ADDRESS`).
    pub fn address(&self) -> String {
        match &self.addr {
            Ok(UsbmuxdAddr::TcpSocket(socket)) => socket.to_string(),
            #[cfg(unix)]
            Ok(UsbmuxdAddr::UnixSocket(path)) => path.clone(),
            Err(error) => error.clone(),
        }
    }

    /// Whether this is the platform's own usbmuxd, the one every tool reaches when nothing names
    /// another (idevice's `UsbmuxdAddr::default()`: the socket `/var/run/usbmuxd` on Unix,
    /// `127.0.0.1:27015` elsewhere). Its iPhones keep their bare UDIDs as names; any other
    /// usbmuxd's are named `address/UDID`.
    ///
    /// ```
    /// use phonelogs_ios::UsbmuxdBackend;
    /// # #[cfg(unix)]
    /// assert!(UsbmuxdBackend::parse("/var/run/usbmuxd")?.is_default());
    /// assert!(!UsbmuxdBackend::parse("10.1.0.9:27015")?.is_default());
    /// # Ok::<(), phonelogs_driver::Error>(())
    /// ```
    pub fn is_default(&self) -> bool {
        if self.stands_for_default {
            return true;
        }
        match (&self.addr, UsbmuxdAddr::default()) {
            #[cfg(unix)]
            (Ok(UsbmuxdAddr::UnixSocket(path)), UsbmuxdAddr::UnixSocket(default)) => {
                *path == default
            }
            (Ok(UsbmuxdAddr::TcpSocket(socket)), UsbmuxdAddr::TcpSocket(default)) => {
                *socket == default
            }
            _ => false,
        }
    }

    fn addr(&self) -> Result<&UsbmuxdAddr> {
        self.addr
            .as_ref()
            .map_err(|e| Error::InvalidArgument(e.clone()))
    }

    async fn usbmuxd(&self) -> Result<idevice::usbmuxd::UsbmuxdConnection> {
        let addr = self.addr()?;
        addr.connect(TAG).await.map_err(|e| {
            Error::DeviceUnavailable(format!(
                "usbmuxd is not reachable at {} ({e}): {}",
                self.address(),
                self.unreachable_fix()
            ))
        })
    }

    /// What to do when this usbmuxd does not answer: a local one is installed and started (or
    /// another is named); a shared one on another address is the farm's to serve.
    fn unreachable_fix(&self) -> &'static str {
        match &self.addr {
            Ok(UsbmuxdAddr::TcpSocket(_)) if !self.is_default() => {
                "check that a usbmuxd, or the relay sharing one (socat, netmuxd), listens there and that this address is right (--usbmuxd, the `usbmuxd` key, USBMUXD_SOCKET_ADDRESS)"
            }
            _ => {
                "install and start usbmuxd (Debian: `apt install usbmuxd`), or name another with --usbmuxd or USBMUXD_SOCKET_ADDRESS"
            }
        }
    }

    async fn listed(&self) -> Result<Vec<idevice::usbmuxd::UsbmuxdDevice>> {
        let mut mux = self.usbmuxd().await?;
        let mut devices = mux
            .get_devices()
            .await
            .map_err(|e| device_error("listing usbmuxd's devices", e))?;
        // A phone on cable and Wi-Fi is listed twice; the cable is preferred.
        devices.sort_by_key(|d| !matches!(d.connection_type, Connection::Usb));
        let mut seen = std::collections::HashSet::new();
        devices.retain(|d| seen.insert(d.udid.clone()));
        Ok(devices)
    }
}

#[cfg(unix)]
fn unix_addr(path: &str) -> Option<UsbmuxdBackend> {
    Some(UsbmuxdBackend::with_addr(UsbmuxdAddr::UnixSocket(
        path.to_owned(),
    )))
}

#[cfg(not(unix))]
fn unix_addr(_path: &str) -> Option<UsbmuxdBackend> {
    None
}

impl UsbmuxdBackend {
    /// The phone's model as lockdown names it (`ProductType`, e.g. `iPhone14,2`), read before
    /// any session as `ideviceinfo --simple` reads it; `None` when the phone does not answer in
    /// time (the list still names the phone).
    async fn product_type(&self, device: &idevice::usbmuxd::UsbmuxdDevice) -> Option<String> {
        let provider = device.to_provider(self.addr().ok()?.clone(), LABEL);
        let read = async {
            let mut lockdown = idevice::lockdown::LockdownClient::connect(&provider)
                .await
                .ok()?;
            let value = lockdown.get_value(Some("ProductType"), None).await.ok()?;
            value.as_string().map(str::to_owned)
        };
        tokio::time::timeout(PRODUCT_TYPE_TIMEOUT, read)
            .await
            .ok()
            .flatten()
    }
}

/// How long listing waits for one phone's `ProductType`.
const PRODUCT_TYPE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

#[async_trait]
impl DeviceBackend for UsbmuxdBackend {
    fn address(&self) -> Option<String> {
        Some(UsbmuxdBackend::address(self))
    }

    fn is_default_address(&self) -> bool {
        self.is_default()
    }

    async fn devices(&self) -> Result<Vec<DeviceInfo>> {
        let mut infos = Vec::new();
        for device in self.listed().await? {
            let paired = match self.usbmuxd().await {
                Ok(mut mux) => mux.get_pair_record(&device.udid).await.is_ok(),
                Err(_) => false,
            };
            let model = self.product_type(&device).await;
            infos.push(DeviceInfo {
                id: DeviceId::new(device.udid.clone()),
                platform: Platform::Ios,
                model,
                state: if paired {
                    DeviceState::Online
                } else {
                    DeviceState::NotPaired
                },
            });
        }
        Ok(infos)
    }

    async fn connect(&self, id: &DeviceId) -> Result<DeviceServices> {
        let listed = self.listed().await?;
        let Some(device) = listed.into_iter().find(|d| d.udid == id.as_str()) else {
            if looks_like_simulator(id.as_str()) {
                return Err(Error::Unsupported(format!(
                    "{id} looks like a Simulator: its logs live on the Mac (`xcrun simctl spawn booted log stream`)"
                )));
            }
            return Err(Error::DeviceNotFound(format!(
                "no iPhone {id} through usbmuxd"
            )));
        };
        let mut mux = self.usbmuxd().await?;
        if let Err(error) = mux.get_pair_record(&device.udid).await {
            return Err(Error::DeviceUnavailable(format!(
                "{id}: {NOT_PAIRED_ADVICE} ({error})"
            )));
        }
        let provider = device.to_provider(self.addr()?.clone(), LABEL);
        let phone = Arc::new(IdevicePhone {
            provider,
            tunnel: Mutex::new(None),
            instruments: Mutex::new(None),
        });
        Ok(DeviceServices {
            processes: phone.clone(),
            streams: phone.clone(),
            apps: phone.clone(),
            crashes: phone,
        })
    }
}

/// A CoreDevice tunnel (iOS 17 and later) with its RSD services, kept between polls: setting up
/// the tunnel and the RSD handshake every second would be wasteful.
struct Tunnel {
    // Every stream opened through the tunnel goes through this handle.
    handle: idevice::tcp::handle::AdapterHandle,
    ports: HashMap<String, u16>,
    app_service: Option<idevice::core_device::AppServiceClient<idevice::tcp::handle::StreamHandle>>,
}

type Instruments = idevice::dvt::remote_server::RemoteServerClient<Box<dyn ReadWrite>>;

/// One phone reached through usbmuxd, implementing every service trait with idevice.
struct IdevicePhone {
    provider: UsbmuxdProvider,
    tunnel: Mutex<Option<Tunnel>>,
    instruments: Mutex<Option<Instruments>>,
}

impl IdevicePhone {
    async fn open_tunnel(&self) -> std::result::Result<Tunnel, IdeviceError> {
        let proxy = idevice::core_device_proxy::CoreDeviceProxy::connect(&self.provider).await?;
        let port = proxy.tunnel_info().server_rsd_port;
        let mut handle = proxy.create_software_tunnel()?.to_async_handle();
        let stream = handle.connect(port).await?;
        let handshake = idevice::rsd::RsdHandshake::new(stream).await?;
        let ports = handshake
            .services
            .iter()
            .map(|(name, service)| (name.clone(), service.port))
            .collect();
        Ok(Tunnel {
            handle,
            ports,
            app_service: None,
        })
    }

    async fn tunnel_port(
        &self,
        slot: &mut Option<Tunnel>,
        service: &str,
    ) -> std::result::Result<u16, IdeviceError> {
        if slot.is_none() {
            *slot = Some(self.open_tunnel().await?);
        }
        slot.as_ref()
            .and_then(|t| t.ports.get(service).copied())
            .ok_or(IdeviceError::ServiceNotFound)
    }

    async fn coredevice_processes(&self) -> std::result::Result<Vec<ProcessEntry>, IdeviceError> {
        let mut slot = self.tunnel.lock().await;
        let port = self.tunnel_port(&mut slot, APP_SERVICE).await?;
        let Some(tunnel) = slot.as_mut() else {
            return Err(IdeviceError::UnexpectedResponse(
                "no CoreDevice tunnel".into(),
            ));
        };
        if tunnel.app_service.is_none() {
            // The client is built on the concrete stream type rather than through
            // `RsdService`, whose boxed-stream impl trips the compiler's `Send` inference
            // inside async traits.
            let stream = tunnel.handle.connect(port).await?;
            tunnel.app_service = Some(idevice::core_device::AppServiceClient::new(stream).await?);
        }
        let Some(client) = tunnel.app_service.as_mut() else {
            return Err(IdeviceError::UnexpectedResponse(
                "no CoreDevice app service".into(),
            ));
        };
        match client.list_processes().await {
            Ok(tokens) => Ok(tokens
                .into_iter()
                .filter_map(|t| {
                    Some(ProcessEntry {
                        pid: t.pid,
                        executable: t.executable_url?.relative,
                    })
                })
                .collect()),
            Err(error) => {
                // A broken tunnel is set up again on the next poll.
                *slot = None;
                Err(error)
            }
        }
    }

    /// Opens os_trace_relay's RemoteXPC shim through the CoreDevice tunnel: the RSD check-in,
    /// then the same protocol as over lockdown.
    async fn shim_stream(&self) -> std::result::Result<Box<dyn ReadWrite>, IdeviceError> {
        let mut slot = self.tunnel.lock().await;
        let port = self.tunnel_port(&mut slot, OS_TRACE_SHIM).await?;
        let Some(tunnel) = slot.as_mut() else {
            return Err(IdeviceError::UnexpectedResponse(
                "no CoreDevice tunnel".into(),
            ));
        };
        let stream = match tunnel.handle.connect(port).await {
            Ok(stream) => stream,
            Err(error) => {
                *slot = None;
                return Err(error.into());
            }
        };
        let mut idevice = Idevice::new(Box::new(stream), LABEL);
        idevice.rsd_checkin().await?;
        idevice
            .get_socket()
            .ok_or_else(|| IdeviceError::UnexpectedResponse("the shim closed at once".into()))
    }

    async fn instruments_processes(&self) -> std::result::Result<Vec<ProcessEntry>, IdeviceError> {
        let mut slot = self.instruments.lock().await;
        if slot.is_none() {
            *slot = Some(Instruments::connect(&self.provider).await?);
        }
        let Some(client) = slot.as_mut() else {
            return Err(IdeviceError::UnexpectedResponse(
                "no instruments session".into(),
            ));
        };
        let listed = match idevice::dvt::device_info::DeviceInfoClient::new(client).await {
            Ok(mut info) => info.running_processes().await,
            Err(error) => Err(error),
        };
        match listed {
            Ok(processes) => Ok(processes
                .into_iter()
                .map(|p| ProcessEntry {
                    pid: p.pid,
                    executable: p.real_app_name,
                })
                .collect()),
            Err(error) => {
                *slot = None;
                Err(error)
            }
        }
    }
}

#[async_trait]
impl ProcessLister for IdevicePhone {
    async fn processes(&self) -> Result<Vec<ProcessEntry>> {
        // CoreDevice (iOS 17 and later) first; instruments' deviceinfo (developer disk image)
        // otherwise.
        match self.coredevice_processes().await {
            Ok(list) => Ok(list),
            Err(core_error) => {
                tracing::debug!(%core_error, "CoreDevice's process list failed; trying instruments");
                self.instruments_processes()
                    .await
                    .map_err(|e| device_error("listing the iPhone's processes", e))
            }
        }
    }
}

struct SocketStream {
    socket: Box<dyn ReadWrite>,
}

#[async_trait]
impl LogStream for SocketStream {
    async fn next_entry(&mut self) -> Result<Option<OsTraceEntry>> {
        Ok(protocol::next_entry(&mut self.socket).await?)
    }
}

#[async_trait]
impl StreamOpener for IdevicePhone {
    async fn open(&self, pid: u32) -> Result<Box<dyn LogStream>> {
        // Over lockdown first; through the RemoteXPC tunnel's shim when that fails.
        let mut socket = match OsTraceService::open(&self.provider).await {
            Ok(socket) => socket,
            Err(lockdown_error) => {
                tracing::debug!(%lockdown_error, "os_trace_relay over lockdown failed; trying the RemoteXPC shim");
                self.shim_stream().await.map_err(|shim_error| {
                    Error::backend(format!(
                        "opening os_trace_relay failed over lockdown ({lockdown_error}) and through the RemoteXPC shim ({shim_error})"
                    ))
                })?
            }
        };
        protocol::start_activity(&mut socket, pid).await?;
        Ok(Box::new(SocketStream { socket }))
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
        // `pull` opens the file read-only and closes it again; nothing is moved or deleted.
        self.client
            .pull(path.trim_start_matches('/'))
            .await
            .map_err(|e| device_error(&format!("reading {path}"), e))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_unreachable_usbmuxd_is_named_as_written_with_the_fix_that_fits_it() {
        // Port 1 on loopback: nothing listens there.
        let shared = UsbmuxdBackend::parse("127.0.0.1:1").unwrap();
        let error = shared.usbmuxd().await.err().unwrap().to_string();
        assert!(
            error.contains("not reachable at 127.0.0.1:1 (")
                && error.contains("relay")
                && !error.contains("apt install"),
            "{error}"
        );
        let local = UsbmuxdBackend::parse("/nonexistent/phonelogs-usbmuxd").unwrap();
        let error = local.usbmuxd().await.err().unwrap().to_string();
        assert!(
            error.contains("not reachable at /nonexistent/phonelogs-usbmuxd (")
                && error.contains("apt install usbmuxd"),
            "{error}"
        );
    }

    #[test]
    fn usbmuxd_addresses_as_people_write_them() {
        for (text, address) in [
            ("127.0.0.1:27015", "127.0.0.1:27015"),
            ("tcp:[::1]:27015", "[::1]:27015"),
            ("[fe80::1]:27015", "[fe80::1]:27015"),
        ] {
            assert_eq!(UsbmuxdBackend::parse(text).unwrap().address(), address);
        }
        // Without brackets an IPv6 address cannot be told from its port.
        for text in ["::1", "fe80::1:27015", "::1:27015", "tcp:fe80::1:27015"] {
            assert!(UsbmuxdBackend::parse(text).is_err(), "{text} was taken");
        }
    }

    #[test]
    fn only_the_platform_socket_is_the_default_usbmuxd() {
        #[cfg(unix)]
        {
            assert!(
                UsbmuxdBackend::parse("/var/run/usbmuxd")
                    .unwrap()
                    .is_default()
            );
            assert!(
                UsbmuxdBackend::parse("UNIX:/var/run/usbmuxd")
                    .unwrap()
                    .is_default()
            );
            assert!(
                !UsbmuxdBackend::parse("/tmp/other.sock")
                    .unwrap()
                    .is_default()
            );
            assert!(
                !UsbmuxdBackend::parse("127.0.0.1:27015")
                    .unwrap()
                    .is_default()
            );
        }
        assert!(
            !UsbmuxdBackend::parse("10.1.0.9:27015")
                .unwrap()
                .is_default()
        );
        assert!(UsbmuxdBackend::with_addr(UsbmuxdAddr::default()).is_default());
    }
}
