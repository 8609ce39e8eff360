//! Which phones `devices` and `doctor` look at: the same `--adb-server`, `--usbmuxd` and
//! `--tunneld` flags and `adb_servers` / `usbmuxd` / `tunneld` config keys as `phonelogs-mcp`, one driver per server or
//! address, named by the gateway exactly as the MCP server names them.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use phonelogs_android::{AdbConfig, AdbPhone};
use phonelogs_driver::AppLogger;
use phonelogs_gateway::{DeviceList, Gateway, NamedDevice};
use phonelogs_ios::{LockdownPhone, UsbmuxdBackend};

/// The flags that say where phones are.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct PhoneArgs {
    /// An adb server, `HOST:PORT` (repeat for several). Never started from here. Default:
    /// adb's own rule ($ADB_SERVER_SOCKET, $ANDROID_ADB_SERVER_PORT, else 127.0.0.1:5037).
    #[arg(long = "adb-server", value_name = "HOST:PORT")]
    pub adb_server: Vec<String>,
    /// A usbmuxd, `HOST:PORT` or a socket path (repeat for several). Default:
    /// $USBMUXD_SOCKET_ADDRESS, else the platform's socket.
    #[arg(long = "usbmuxd", value_name = "ADDR")]
    pub usbmuxd: Vec<String>,
    /// A running tunneld (pymobiledevice3 `remote tunneld`), `HOST:PORT` (repeat for several),
    /// asked for an iPhone's tunnel after 127.0.0.1:49151.
    #[arg(long = "tunneld", value_name = "HOST:PORT")]
    pub tunneld: Vec<String>,
    /// phonelogs-mcp's config file: its `adb_servers`, `usbmuxd` and `tunneld` keys, and for `doctor` its
    /// `symbols_dir` (flags win).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// The keys of the config file read here; the others are `phonelogs-mcp`'s.
#[derive(Debug, Default, serde::Deserialize)]
struct FileKeys {
    adb_servers: Option<Vec<String>>,
    usbmuxd: Option<Vec<String>>,
    tunneld: Option<Vec<String>>,
    symbols_dir: Option<PathBuf>,
}

/// The keys of the config file read here.
const KEYS: [&str; 4] = ["adb_servers", "usbmuxd", "tunneld", "symbols_dir"];

/// One driver per adb server and per usbmuxd.
pub struct Phones {
    /// The Android drivers, in the order given.
    pub android: Vec<Arc<AdbPhone>>,
    /// The iPhone drivers, in the order given.
    pub ios: Vec<Arc<LockdownPhone>>,
}

impl PhoneArgs {
    /// The config file's `symbols_dir`, as phonelogs-mcp reads it; `None` without a file or
    /// the key.
    pub fn symbols_dir(&self) -> anyhow::Result<Option<PathBuf>> {
        match &self.config {
            Some(path) => Ok(read_keys(path)?.symbols_dir),
            None => Ok(None),
        }
    }

    /// The drivers these flags (and the config file) name; adb's and usbmuxd's own defaults
    /// when they name none.
    pub fn phones(&self) -> anyhow::Result<Phones> {
        let file = match &self.config {
            Some(path) => read_keys(path)?,
            None => FileKeys::default(),
        };
        let pick = |flags: &Vec<String>, file: Option<Vec<String>>| {
            if flags.is_empty() {
                file.unwrap_or_default()
            } else {
                flags.clone()
            }
        };
        let adb = pick(&self.adb_server, file.adb_servers);
        let mux = pick(&self.usbmuxd, file.usbmuxd);
        let tunnelds = pick(&self.tunneld, file.tunneld)
            .iter()
            .map(|address| {
                phonelogs_ios::parse_tunneld(address)
                    .with_context(|| format!("--tunneld {address}"))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let mut android = Vec::new();
        if adb.is_empty() {
            android.push(Arc::new(AdbPhone::from_env()));
        }
        for address in &adb {
            let config = AdbConfig::from_address(address)
                .with_context(|| format!("--adb-server {address}"))?;
            android.push(Arc::new(AdbPhone::new(config)));
        }
        let mut ios = Vec::new();
        if mux.is_empty() {
            ios.push(Arc::new(LockdownPhone::new(Arc::new(
                UsbmuxdBackend::from_env().with_tunnelds(&tunnelds),
            ))));
        }
        for address in &mux {
            let backend = UsbmuxdBackend::parse(address)
                .with_context(|| format!("--usbmuxd {address}"))?
                .with_tunnelds(&tunnelds);
            ios.push(Arc::new(LockdownPhone::new(Arc::new(backend))));
        }
        Ok(Phones { android, ios })
    }
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
    pub async fn list(&self) -> anyhow::Result<DeviceList> {
        let mut builder = Gateway::builder();
        for driver in self.drivers() {
            builder = builder.driver(driver);
        }
        // An in-memory store: listing reads and records nothing.
        let gateway = builder.build().context("listing the phones")?;
        Ok(gateway.device_list().await)
    }
}

fn read_keys(path: &Path) -> anyhow::Result<FileKeys> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the config file {}", path.display()))?;
    let table: toml::Table = toml::from_str(&text)
        .with_context(|| format!("reading the config file {}", path.display()))?;
    let keys = toml::Table::from_iter(
        table
            .into_iter()
            .filter(|(key, _)| KEYS.contains(&key.as_str())),
    );
    keys.try_into().with_context(|| {
        format!(
            "the adb_servers, usbmuxd or symbols_dir key of {}",
            path.display()
        )
    })
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
        let args = PhoneArgs {
            config: Some(path.clone()),
            ..PhoneArgs::default()
        };
        let phones = args.phones().unwrap();
        let sources: Vec<_> = phones.android.iter().map(|p| p.source()).collect();
        assert_eq!(
            sources,
            [Some("10.1.0.2:5037".into()), Some("10.1.0.3:5037".into())]
        );
        assert_eq!(phones.ios[0].source(), Some("10.1.0.9:27015".into()));
        let args = PhoneArgs {
            adb_server: vec!["127.0.0.1:6000".into()],
            config: Some(path),
            ..PhoneArgs::default()
        };
        assert_eq!(args.phones().unwrap().android.len(), 1);
        let bad = PhoneArgs {
            adb_server: vec!["no-port".into()],
            ..PhoneArgs::default()
        };
        assert!(bad.phones().is_err());
    }
}
