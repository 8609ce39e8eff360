//! A simulated iPhone on the real usbmuxd and lockdown wire.
//!
//! `phonelogs-iossim` plays an iPhone (iOS 16.7.10 by default; 17.2, 17.4, 18.6 or 26.1 on
//! request, [`IosVersion`]) well enough for clients nobody here wrote — libimobiledevice's
//! tools, pymobiledevice3, and the `idevice` crate the phonelogs driver uses — to list it,
//! pair-check it, start a TLS lockdown session and use its services, and from 17.4 to open the
//! CoreDevice tunnel and use RSD behind it. Point a client at it with
//! `USBMUXD_SOCKET_ADDRESS=127.0.0.1:PORT`.
//!
//! The files go one way: [`model`] is the phone (apps, processes, os_log, crash reports,
//! trust, the release, the developer disk image, Developer Mode, faults; no I/O), `ips` writes
//! its crash reports, [`pairing`] makes its pair record; `services` serves lockdownd and each
//! service over the model; `xpc` and `remotexpc` are RemoteXPC over HTTP/2; `rsd` is RSD and the
//! services behind it (the shims run `services`' code); `netstack` is the phone's IPv6/TCP stack
//! in the tunnel; `coredevice` is CoreDeviceProxy; `usbmuxd` is the wire on top; [`control`] is a
//! line protocol over the model for another process to play things on the phone (`phonelogs
//! sim --ios --control`). See `docs/iossim.md` for what each piece answers and where the formats
//! come from.
//!
//! ```no_run
//! # async fn demo() -> Result<(), phonelogs_iossim::Error> {
//! use phonelogs_iossim::{IosSim, Level, SimPhone};
//!
//! let phone = SimPhone::default_phone();
//! let sim = IosSim::bind_loopback(None, phone.clone()).await?;
//! println!("USBMUXD_SOCKET_ADDRESS={}", sim.addr());
//! let pid = phone.launch("dev.phonelogs.crashtest").expect("installed");
//! phone.log(pid, Level::Error, Some(("dev.phonelogs.crashtest", "network")), "request failed");
//! # Ok(()) }
//! ```
//!
//! Dependencies: rustls with ring (the TLS idevice already brings; no OpenSSL, no second
//! crypto backend), rcgen for the certificates, plist, ns-keyed-archive for instruments'
//! payloads (already in the graph through idevice), smoltcp for the tunnel's TCP, and h2's frame
//! codec for RSD's HTTP/2. No workspace crate, and not idevice.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::net::{TcpListener, UnixListener};
use tokio::task::JoinHandle;

pub mod control;
mod coredevice;
mod error;
mod ips;
pub mod life;
pub mod model;
mod netstack;
pub mod pairing;
mod remotexpc;
mod rsd;
mod services;
mod usbmuxd;
mod xpc;

pub use error::Error;
pub use life::Background;
pub use model::{
    App, CrashKind, DdiRefusal, Fault, Hostile, IosVersion, Level, Opened, Process, Profile,
    ReportFile, ReportForm, Signing, SimPhone, Trust,
};
pub use pairing::Pairing;
pub use services::os_trace::encode_entry;
pub use services::syslog::{syslog_line, vis_encode};
pub use services::{CORE_DEVICE_PROXY, LOCKDOWN_PORT, SERVICES};

/// A running simulator: usbmuxd listening, the phone behind it. Dropping it (or
/// [`IosSim::shutdown`]) stops the listeners and every connection.
#[derive(Debug)]
pub struct IosSim {
    addr: Option<SocketAddr>,
    rsd: Option<SocketAddr>,
    unix: Option<PathBuf>,
    phone: SimPhone,
    pairing: Arc<Pairing>,
    tasks: Vec<JoinHandle<()>>,
}

impl IosSim {
    /// usbmuxd on `127.0.0.1:port` (any free port when `None`), and on releases with RSD
    /// (iOS 17 and later) RSD on a free loopback port too ([`IosSim::rsd_addr`]).
    pub async fn bind_loopback(port: Option<u16>, phone: SimPhone) -> Result<IosSim, Error> {
        let mut sim = IosSim::new(phone)?;
        sim.listen_tcp(port).await?;
        if sim.phone.profile().ios.has_rsd() {
            sim.listen_rsd(None).await?;
        }
        Ok(sim)
    }

    /// A simulator with no listener yet.
    pub fn new(phone: SimPhone) -> Result<IosSim, Error> {
        Ok(IosSim {
            addr: None,
            rsd: None,
            unix: None,
            phone,
            pairing: Arc::new(Pairing::generate()?),
            tasks: Vec::new(),
        })
    }

    fn device(&self) -> services::Device {
        services::Device::new(self.phone.clone(), self.pairing.clone())
    }

    /// Also listens on `127.0.0.1:port`.
    pub async fn listen_tcp(&mut self, port: Option<u16>) -> Result<SocketAddr, Error> {
        let listener = bind(port).await?;
        let addr = local(&listener)?;
        let device = self.device();
        self.tasks
            .push(tokio::spawn(accept_each(listener, move |socket| {
                usbmuxd::serve_client(device.clone(), socket)
            })));
        self.addr = Some(addr);
        Ok(addr)
    }

    /// Also listens on a Unix socket at `path` (as `/var/run/usbmuxd` is); an old socket file
    /// there is replaced.
    pub async fn listen_unix(&mut self, path: &Path) -> Result<(), Error> {
        let _ = std::fs::remove_file(path);
        let listener = UnixListener::bind(path).map_err(|source| Error::Bind {
            what: path.display().to_string(),
            source,
        })?;
        let device = self.device();
        self.tasks.push(tokio::spawn(async move {
            let mut clients = tokio::task::JoinSet::new();
            loop {
                match listener.accept().await {
                    Ok((socket, _)) => {
                        clients.spawn(usbmuxd::serve_client(device.clone(), Box::new(socket)));
                    }
                    Err(error) => {
                        tracing::debug!(%error, "usbmuxd accept failed");
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    }
                }
                while clients.try_join_next().is_some() {}
            }
        }));
        self.unix = Some(path.to_owned());
        Ok(())
    }

    /// Also serves RSD on `127.0.0.1:port` (any free port when `None`) and every service it can
    /// list on a loopback port of its own: the same handshake and services as inside the
    /// CoreDevice tunnel, reachable without it (`pymobiledevice3 remote rsd-info --rsd 127.0.0.1
    /// PORT`), so each layer can be tested alone.
    pub async fn listen_rsd(&mut self, port: Option<u16>) -> Result<SocketAddr, Error> {
        let rsd_listener = bind(port).await?;
        let rsd_addr = local(&rsd_listener)?;
        let mut listeners = Vec::new();
        for name in rsd::names() {
            let listener = bind(None).await?;
            listeners.push((name, local(&listener)?.port(), listener));
        }
        let ports = rsd::Ports {
            rsd: rsd_addr.port(),
            services: listeners.iter().map(|(n, p, _)| (*n, *p)).collect(),
        };
        let device = self.device();
        let handshake_ports = ports.clone();
        self.tasks
            .push(tokio::spawn(accept_each(rsd_listener, move |socket| {
                let (device, ports) = (device.clone(), handshake_ports.clone());
                async move {
                    if let Err(error) = rsd::serve_handshake(device, socket, ports).await {
                        tracing::debug!(%error, "RSD handshake ended");
                    }
                }
            })));
        for (name, _, listener) in listeners {
            let device = self.device();
            self.tasks
                .push(tokio::spawn(accept_each(listener, move |socket| {
                    rsd::serve_service(device.clone(), name, socket)
                })));
        }
        self.rsd = Some(rsd_addr);
        Ok(rsd_addr)
    }

    /// RSD's loopback address, when served ([`IosSim::listen_rsd`]).
    pub fn rsd_addr(&self) -> Option<SocketAddr> {
        self.rsd
    }

    /// Runs the phone's background life (other apps logging and crashing) while served.
    pub fn start_background(&mut self, background: Background) {
        let phone = self.phone.clone();
        self.tasks.push(tokio::spawn(life::run(phone, background)));
    }

    /// The loopback address (`USBMUXD_SOCKET_ADDRESS`'s value); `None` with only a Unix socket.
    pub fn tcp_addr(&self) -> Option<SocketAddr> {
        self.addr
    }

    /// `127.0.0.1:PORT`, or the Unix socket's path.
    pub fn addr(&self) -> String {
        match (&self.addr, &self.unix) {
            (Some(addr), _) => addr.to_string(),
            (None, Some(path)) => path.display().to_string(),
            (None, None) => String::new(),
        }
    }

    /// The phone.
    pub fn phone(&self) -> &SimPhone {
        &self.phone
    }

    /// The pair record usbmuxd serves.
    pub fn pairing(&self) -> &Pairing {
        &self.pairing
    }

    /// Stops listening and drops every connection.
    pub async fn shutdown(mut self) {
        for task in self.tasks.drain(..) {
            task.abort();
            let _ = task.await;
        }
    }
}

async fn bind(port: Option<u16>) -> Result<TcpListener, Error> {
    TcpListener::bind(("127.0.0.1", port.unwrap_or(0)))
        .await
        .map_err(|source| Error::Bind {
            what: format!("127.0.0.1:{}", port.unwrap_or(0)),
            source,
        })
}

fn local(listener: &TcpListener) -> Result<SocketAddr, Error> {
    listener.local_addr().map_err(|source| Error::Bind {
        what: "127.0.0.1".into(),
        source,
    })
}

/// Accepts connections until dropped, serving each with `serve` on a task of its own.
async fn accept_each<F, Fut>(listener: TcpListener, serve: F)
where
    F: Fn(services::BoxStream) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let mut clients = tokio::task::JoinSet::new();
    loop {
        match listener.accept().await {
            Ok((socket, _)) => {
                let _ = socket.set_nodelay(true);
                clients.spawn(serve(Box::new(socket)));
            }
            Err(error) => {
                tracing::debug!(%error, "accept failed");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
        }
        while clients.try_join_next().is_some() {}
    }
}

impl Drop for IosSim {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
        if let Some(path) = &self.unix {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Options of [`run_sim`] (what `phonelogs sim --ios` passes).
#[derive(Debug, Clone, Default)]
pub struct SimOptions {
    /// The loopback port (any free one when `None`).
    pub port: Option<u16>,
    /// Also listen on this Unix socket.
    pub unix_socket: Option<PathBuf>,
    /// The background; `None` for the default.
    pub background: Option<Background>,
    /// The iOS release the phone plays (16.7.10 by default).
    pub ios: IosVersion,
}

/// Starts the default phone and serves it until the future is dropped; `ready` gets the
/// loopback address once usbmuxd listens.
pub async fn run_sim(options: SimOptions, ready: impl FnOnce(SocketAddr)) -> Result<(), Error> {
    let phone = SimPhone::default_phone_on(options.ios);
    let mut sim = IosSim::bind_loopback(options.port, phone).await?;
    if let Some(path) = &options.unix_socket {
        sim.listen_unix(path).await?;
    }
    sim.start_background(options.background.unwrap_or_default());
    if let Some(addr) = sim.tcp_addr() {
        ready(addr);
    }
    std::future::pending::<()>().await;
    Ok(())
}
