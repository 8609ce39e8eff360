//! # phonelogs-phones
//!
//! The one place that builds the phone drivers from flags, a config file and the environment,
//! for both binaries: one Android driver per adb server (`--adb-server`, `adb_servers`; else
//! adb's own rule: `ADB_SERVER_SOCKET`, `ANDROID_ADB_SERVER_PORT`, 127.0.0.1:5037) and one
//! iPhone driver per usbmuxd (`--usbmuxd`, `usbmuxd`; else `USBMUXD_SOCKET_ADDRESS` or the
//! platform's socket), each asking 127.0.0.1:49151 and the `--tunneld`s for an iPhone's tunnel:
//! one server going down fails only its own phones. A flag wins over the config file's key, the
//! key over the environment. With `--demo`, the built-in simulated phones instead ([`demo`]).
//!
//! ```no_run
//! # async fn run() -> Result<(), phonelogs_phones::Error> {
//! let sources = phonelogs_phones::PhoneSources {
//!     adb_servers: vec!["127.0.0.1:5037".to_owned()],
//!     ..phonelogs_phones::PhoneSources::default()
//! };
//! let phones = sources.phones()?;
//! for device in phones.list().await?.devices {
//!     eprintln!("{}", device.info.id);
//! }
//! # Ok(())
//! # }
//! ```

pub mod demo;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use phonelogs_android::{AdbConfig, AdbPhone};
use phonelogs_driver::AppLogger;
use phonelogs_gateway::{DeviceList, Gateway, NamedDevice};
use phonelogs_ios::{LockdownPhone, UsbmuxdBackend};

pub use demo::{Demo, DemoKind};

/// What stops the drivers from being built; each names the flag, key or file at fault.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An adb server's address is not `HOST:PORT`.
    #[error("--adb-server {address}")]
    AdbServer {
        /// The address given.
        address: String,
        /// Why it is refused.
        #[source]
        source: phonelogs_android::Error,
    },
    /// A usbmuxd's address is neither `HOST:PORT` nor a socket path.
    #[error("--usbmuxd {address}")]
    Usbmuxd {
        /// The address given.
        address: String,
        /// Why it is refused.
        #[source]
        source: phonelogs_driver::Error,
    },
    /// A tunneld's address is not `HOST:PORT`.
    #[error("--tunneld {address}")]
    Tunneld {
        /// The address given.
        address: String,
        /// Why it is refused.
        #[source]
        source: phonelogs_driver::Error,
    },
    /// The config file cannot be read.
    #[error("reading the config file {}", path.display())]
    ReadConfig {
        /// The config file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The config file is not TOML.
    #[error("reading the config file {}", path.display())]
    ParseConfig {
        /// The config file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: toml::de::Error,
    },
    /// One of the keys read here has the wrong type.
    #[error("the adb_servers, usbmuxd or symbols_dir key of {}", path.display())]
    ConfigKeys {
        /// The config file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: toml::de::Error,
    },
    /// The gateway that names the phones could not be built.
    #[error("listing the phones")]
    List(#[source] phonelogs_gateway::Error),
    /// A demo phone did not start.
    #[error("starting the demo's {phone}")]
    Demo {
        /// Which phone: "Android phone" or "iPhone".
        phone: &'static str,
        /// The cause.
        #[source]
        source: phonelogs_demo::Error,
    },
    /// The demo iPhone's driver could not be made.
    #[error(transparent)]
    DemoDriver(phonelogs_demo::Error),
}

/// The flags that say where phones are, as both binaries take them.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct PhoneFlags {
    /// An adb server to read Android phones through, `HOST:PORT` (repeat for several: a device
    /// lab, a farm's remote server). Never started from here. Default: adb's own rule
    /// ($ADB_SERVER_SOCKET, $ANDROID_ADB_SERVER_PORT, else 127.0.0.1:5037).
    #[arg(long = "adb-server", value_name = "HOST:PORT")]
    pub adb_server: Vec<String>,
    /// A usbmuxd to read iPhones through: `HOST:PORT` (a shared usbmuxd: socat, netmuxd) or a
    /// socket path (repeat for several). Default: $USBMUXD_SOCKET_ADDRESS, else the platform's
    /// socket.
    #[arg(long = "usbmuxd", value_name = "ADDR")]
    pub usbmuxd: Vec<String>,
    /// A running tunneld (pymobiledevice3 `remote tunneld`) to ask for an iPhone's tunnel,
    /// `HOST:PORT` (repeat for several: a lab's federated tunneld). 127.0.0.1:49151 is always
    /// asked first; an iPhone no tunneld lists gets our own tunnel (iOS 17.4 and later).
    #[arg(long = "tunneld", value_name = "HOST:PORT")]
    pub tunneld: Vec<String>,
}

/// The keys of phonelogs-mcp's config file read by `phonelogs` (`devices`, `doctor`); the
/// others are the server's own.
#[derive(Debug, Default, Clone, serde::Deserialize)]
pub struct ConfigKeys {
    /// As `--adb-server`, one entry per server.
    pub adb_servers: Option<Vec<String>>,
    /// As `--usbmuxd`, one entry per address.
    pub usbmuxd: Option<Vec<String>>,
    /// As `--tunneld`, one entry per address.
    pub tunneld: Option<Vec<String>>,
    /// The symbols directory (`--symbols`).
    pub symbols_dir: Option<PathBuf>,
}

/// The keys of the config file read here.
const KEYS: [&str; 4] = ["adb_servers", "usbmuxd", "tunneld", "symbols_dir"];

impl ConfigKeys {
    /// The keys read here of the config file at `path`, the others left alone.
    pub fn read(path: &Path) -> Result<ConfigKeys, Error> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::ReadConfig {
            path: path.to_owned(),
            source,
        })?;
        let table: toml::Table = toml::from_str(&text).map_err(|source| Error::ParseConfig {
            path: path.to_owned(),
            source,
        })?;
        let keys = toml::Table::from_iter(
            table
                .into_iter()
                .filter(|(key, _)| KEYS.contains(&key.as_str())),
        );
        keys.try_into().map_err(|source| Error::ConfigKeys {
            path: path.to_owned(),
            source,
        })
    }
}

/// Where phones are: each list's flag entries when given, else the config file's; an empty
/// list leaves the choice to the environment (adb's and usbmuxd's own rules).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PhoneSources {
    /// The adb servers (`host:port`); empty: adb's own rule.
    pub adb_servers: Vec<String>,
    /// The usbmuxd addresses; empty: `USBMUXD_SOCKET_ADDRESS`, else the platform's socket.
    pub usbmuxd: Vec<String>,
    /// The tunnelds asked after 127.0.0.1:49151 (`host:port`).
    pub tunneld: Vec<String>,
}

/// The flag's entries when it was given, else the file's.
fn flag_or_file(flags: &[String], file: Option<Vec<String>>) -> Vec<String> {
    if flags.is_empty() {
        file.unwrap_or_default()
    } else {
        flags.to_vec()
    }
}

impl PhoneSources {
    /// The sources the flags name, each list from the config file where its flag is not given.
    pub fn new(
        flags: &PhoneFlags,
        adb_servers: Option<Vec<String>>,
        usbmuxd: Option<Vec<String>>,
        tunneld: Option<Vec<String>>,
    ) -> PhoneSources {
        PhoneSources {
            adb_servers: flag_or_file(&flags.adb_server, adb_servers),
            usbmuxd: flag_or_file(&flags.usbmuxd, usbmuxd),
            tunneld: flag_or_file(&flags.tunneld, tunneld),
        }
    }

    /// The sources the flags name, with [`ConfigKeys`] read from `config` when one is given.
    pub fn from_flags_and_file(
        flags: &PhoneFlags,
        config: Option<&Path>,
    ) -> Result<PhoneSources, Error> {
        let file = match config {
            Some(path) => ConfigKeys::read(path)?,
            None => ConfigKeys::default(),
        };
        Ok(PhoneSources::new(
            flags,
            file.adb_servers,
            file.usbmuxd,
            file.tunneld,
        ))
    }

    /// One driver per adb server and per usbmuxd, adb's and usbmuxd's own defaults when none is
    /// named. Addresses are checked in the order adb servers, usbmuxd, tunnelds; the first bad
    /// one is the error.
    pub fn phones(&self) -> Result<Phones, Error> {
        let mut android = Vec::new();
        if self.adb_servers.is_empty() {
            android.push(Arc::new(AdbPhone::from_env()));
        }
        for address in &self.adb_servers {
            let config = AdbConfig::from_address(address).map_err(|source| Error::AdbServer {
                address: address.clone(),
                source,
            })?;
            android.push(Arc::new(AdbPhone::new(config)));
        }
        let mut muxes = Vec::new();
        if self.usbmuxd.is_empty() {
            muxes.push(UsbmuxdBackend::from_env());
        }
        for address in &self.usbmuxd {
            muxes.push(
                UsbmuxdBackend::parse(address).map_err(|source| Error::Usbmuxd {
                    address: address.clone(),
                    source,
                })?,
            );
        }
        let tunnelds = self
            .tunneld
            .iter()
            .map(|address| {
                phonelogs_ios::parse_tunneld(address).map_err(|source| Error::Tunneld {
                    address: address.clone(),
                    source,
                })
            })
            .collect::<Result<Vec<_>, Error>>()?;
        let ios = muxes
            .into_iter()
            .map(|mux| Arc::new(LockdownPhone::new(Arc::new(mux.with_tunnelds(&tunnelds)))))
            .collect();
        Ok(Phones { android, ios })
    }
}

/// One driver per adb server and per usbmuxd.
pub struct Phones {
    /// The Android drivers, in the order given.
    pub android: Vec<Arc<AdbPhone>>,
    /// The iPhone drivers, in the order given.
    pub ios: Vec<Arc<LockdownPhone>>,
}

impl Phones {
    /// Every driver: the Android ones, then the iPhone ones.
    pub fn drivers(&self) -> Vec<Arc<dyn AppLogger>> {
        let android = self.android.iter().map(|d| d.clone() as Arc<dyn AppLogger>);
        let ios = self.ios.iter().map(|d| d.clone() as Arc<dyn AppLogger>);
        android.chain(ios).collect()
    }

    /// The driver a phone of [`Phones::list`] comes from: the first of its platform with its
    /// source (the gateway reads a source configured twice once).
    pub fn driver_of(&self, device: &NamedDevice) -> Option<Arc<dyn AppLogger>> {
        self.drivers().into_iter().find(|driver| {
            driver.capabilities().platform == device.info.platform
                && driver.source() == device.source
        })
    }

    /// Every phone, named as the MCP server names them, with the sources that failed.
    pub async fn list(&self) -> Result<DeviceList, Error> {
        let mut builder = Gateway::builder();
        for driver in self.drivers() {
            builder = builder.driver(driver);
        }
        // An in-memory store: listing reads and records nothing.
        let gateway = builder.build().map_err(Error::List)?;
        Ok(gateway.device_list().await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_file_gives_the_servers_and_flags_win() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("phonelogs.toml");
        std::fs::write(
            &path,
            "agent = \"ci\"\nadb_servers = [\"10.1.0.2:5037\", \"10.1.0.3:5037\"]\nusbmuxd = [\"10.1.0.9:27015\"]\n",
        )
        .unwrap();
        let phones = |flags: PhoneFlags| {
            PhoneSources::from_flags_and_file(&flags, Some(&path))
                .unwrap()
                .phones()
        };
        let found = phones(PhoneFlags::default()).unwrap();
        let sources: Vec<_> = found.android.iter().map(|p| p.source()).collect();
        assert_eq!(
            sources,
            [Some("10.1.0.2:5037".into()), Some("10.1.0.3:5037".into())]
        );
        assert_eq!(found.ios[0].source(), Some("10.1.0.9:27015".into()));
        let flags = PhoneFlags {
            adb_server: vec!["127.0.0.1:6000".into()],
            ..PhoneFlags::default()
        };
        assert_eq!(phones(flags).unwrap().android.len(), 1);
        let bad = PhoneSources {
            adb_servers: vec!["no-port".into()],
            ..PhoneSources::default()
        };
        assert!(bad.phones().is_err());
    }
}
