//! The host's usbmuxd: its devices, and the services of one ([`crate::idevice_phone`]).

use async_trait::async_trait;
use idevice::IdeviceService;
use idevice::usbmuxd::{Connection, UsbmuxdAddr};
use phonelogs_driver::{DeviceId, DeviceInfo, DeviceState, Error, Platform, Result};

use crate::error::{NOT_PAIRED_ADVICE, device_error};
use crate::idevice_phone::{IdevicePhone, LABEL};
use crate::services::{DeviceBackend, DeviceServices};

/// usbmuxd's message tag for our requests.
const TAG: u32 = 0x706c;

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
    /// The tunnelds asked first for a phone's RSD tunnel (`127.0.0.1:49151`, then any named
    /// with [`UsbmuxdBackend::with_tunnelds`]).
    tunnelds: std::sync::Arc<[std::net::SocketAddr]>,
}

/// Where pymobiledevice3's `remote tunneld` listens unless told otherwise (its
/// `tunneld/api.py` `TUNNELD_DEFAULT_ADDRESS`; idevice's `tunneld::DEFAULT_PORT`).
pub const TUNNELD_DEFAULT: std::net::SocketAddr = std::net::SocketAddr::new(
    std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
    idevice::tunneld::DEFAULT_PORT,
);

fn default_tunnelds() -> std::sync::Arc<[std::net::SocketAddr]> {
    std::sync::Arc::from([TUNNELD_DEFAULT])
}

/// A tunneld's address as `--tunneld` and the `tunneld` key take it: `HOST:PORT` (an IPv6
/// host in brackets), a host name resolved here, once.
///
/// ```
/// use phonelogs_ios::parse_tunneld;
/// assert_eq!(parse_tunneld("10.0.0.7:49151")?.to_string(), "10.0.0.7:49151");
/// assert!(parse_tunneld("10.0.0.7").is_err());
/// # Ok::<(), phonelogs_driver::Error>(())
/// ```
pub fn parse_tunneld(text: &str) -> Result<std::net::SocketAddr> {
    use std::net::ToSocketAddrs;
    let text = text.trim();
    let bad = |why: String| {
        Error::InvalidArgument(format!(
            "{text:?} is not a tunneld address (HOST:PORT): {why}"
        ))
    };
    if let Ok(socket) = text.parse::<std::net::SocketAddr>() {
        return Ok(socket);
    }
    match text.to_socket_addrs().map(|mut all| all.next()) {
        Ok(Some(socket)) => Ok(socket),
        Ok(None) => Err(bad("the host has no address".into())),
        Err(error) => Err(bad(error.to_string())),
    }
}

impl UsbmuxdBackend {
    /// Also asks these tunnelds (a lab's, or a federated one that lists other hosts' phones)
    /// for a phone's RSD tunnel, after the local default `127.0.0.1:49151`.
    pub fn with_tunnelds(mut self, tunnelds: &[std::net::SocketAddr]) -> Self {
        let mut all: Vec<std::net::SocketAddr> = self.tunnelds.to_vec();
        for tunneld in tunnelds {
            if !all.contains(tunneld) {
                all.push(*tunneld);
            }
        }
        self.tunnelds = all.into();
        self
    }

    /// The tunnelds asked for a phone's tunnel, in order.
    pub fn tunnelds(&self) -> &[std::net::SocketAddr] {
        &self.tunnelds
    }

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
            tunnelds: default_tunnelds(),
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
            tunnelds: default_tunnelds(),
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
        Ok(IdevicePhone::new(provider, self.tunnelds.clone()).services())
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
