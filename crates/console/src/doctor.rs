//! `phonelogs doctor`: what works and what does not, each with the fix: adb and its servers,
//! usbmuxd, every phone reached and whether its log can be read (an iPhone's own checks are
//! `doctor_ios`), the state directory, the shared store when one is given (its host, port,
//! database and schema version, never its password), the symbols directory and the MCP clients
//! that run phonelogs.

use std::net::{TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use phonelogs_phones::{PhoneSources, Phones};
use phonelogs_store_pg::ConnectionString;

use crate::Finding;

/// Checks the adb binary: present and its version.
pub fn check_adb_binary() -> Finding {
    match Command::new("adb").arg("version").output() {
        Ok(output) if output.status.success() => {
            let text = String::from_utf8_lossy(&output.stdout);
            let first = text.lines().next().unwrap_or("adb").trim().to_owned();
            let version = text
                .lines()
                .find(|l| l.starts_with("Version"))
                .map(|l| format!(", {}", l.trim()))
                .unwrap_or_default();
            Finding::ok("adb binary", format!("{first}{version}"))
        }
        Ok(output) => Finding::bad(
            "adb binary",
            format!(
                "`adb version` failed: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            ),
            "reinstall the Android platform tools (Debian: `apt-get install adb`)",
        ),
        Err(_) => Finding::bad(
            "adb binary",
            "`adb` is not on PATH",
            "install the Android platform tools (Debian: `apt-get install adb`; macOS: `brew install android-platform-tools`); phonelogs can still reach an adb server that is already running",
        ),
    }
}

/// Checks that the adb server `config` names answers on its port.
pub fn check_adb_server_at(config: &phonelogs_android::AdbConfig) -> Finding {
    let text = config.address();
    let Some(address) = text.to_socket_addrs().ok().and_then(|mut all| all.next()) else {
        return Finding::bad(
            "adb server",
            format!("cannot resolve the adb server address {text}"),
            "fix --adb-server, adb_servers, ADB_SERVER_SOCKET (tcp:host:port) or ANDROID_ADB_SERVER_PORT",
        );
    };
    let fix = if config.start_server {
        "run `adb start-server` (phonelogs also starts it when it needs it and `adb` is installed)"
    } else {
        "start that server (`adb -a -P PORT nodaemon server` on its host) or fix the address: phonelogs never starts a server it is pointed at"
    };
    match TcpStream::connect_timeout(&address, Duration::from_millis(500)) {
        Ok(_) => Finding::ok("adb server", format!("answering on {text}")),
        Err(error) => Finding::bad(
            "adb server",
            format!("nothing answers on {text} ({error})"),
            fix,
        ),
    }
}

/// Checks that a usbmuxd answers: at `address` (`host:port` or a socket path, as `--usbmuxd`
/// takes it), else at `USBMUXD_SOCKET_ADDRESS` or the platform's default path.
pub fn check_usbmuxd_at(address: Option<&str>) -> Finding {
    let given = address
        .map(str::to_owned)
        .or_else(|| std::env::var("USBMUXD_SOCKET_ADDRESS").ok());
    if let Some(address) = given {
        let target = address.strip_prefix("UNIX:").unwrap_or(&address);
        if let Ok(mut resolved) = target.to_socket_addrs()
            && let Some(socket) = resolved.next()
        {
            return match TcpStream::connect_timeout(&socket, Duration::from_millis(500)) {
                Ok(_) => Finding::ok("usbmuxd", format!("answering on {address}")),
                Err(error) => Finding::bad(
                    "usbmuxd",
                    format!("nothing answers on {address} ({error})"),
                    "start usbmuxd (or the socat/netmuxd that shares it), or fix --usbmuxd / USBMUXD_SOCKET_ADDRESS",
                ),
            };
        }
        return unix_socket("usbmuxd", Path::new(target));
    }
    unix_socket("usbmuxd", Path::new("/var/run/usbmuxd"))
}

#[cfg(unix)]
fn unix_socket(check: &str, path: &Path) -> Finding {
    match std::os::unix::net::UnixStream::connect(path) {
        Ok(_) => Finding::ok(check, format!("answering on {}", path.display())),
        Err(error) => Finding::bad(
            check,
            format!("cannot reach {} ({error})", path.display()),
            "for iPhones, install and start usbmuxd (Debian: `apt-get install usbmuxd`; it starts when an iPhone is plugged in) and trust this computer on the phone",
        ),
    }
}

#[cfg(not(unix))]
fn unix_socket(check: &str, path: &Path) -> Finding {
    Finding::bad(
        check,
        format!("cannot check {} on this platform", path.display()),
        "set USBMUXD_SOCKET_ADDRESS to host:port",
    )
}

/// `phonelogs doctor`: every finding for these phones, the state directory, the shared store
/// `store` chooses (when it does), the symbols directory when one is given and the MCP clients,
/// printed for a person (or as JSON); true when every one is ok.
pub async fn run(
    state_dir: Option<PathBuf>,
    store: SharedStore,
    symbols: Option<PathBuf>,
    json: bool,
    phones: &Phones,
) -> crate::Result<bool> {
    let mut findings = findings_with(state_dir, phones).await;
    findings.extend(store_finding(store));
    if let Some(dir) = &symbols {
        findings.extend(crate::symbols::doctor_findings(dir, phones).await);
    }
    findings.extend(crate::setup::doctor_findings());
    let all_ok = findings.iter().all(|f| f.ok);
    if json {
        println!("{}", serde_json::to_string_pretty(&findings)?);
    } else {
        print!("{}", crate::finding::render(&findings));
    }
    Ok(all_ok)
}

/// What `phonelogs doctor` finds with adb's and usbmuxd's default addresses, and the shared
/// store `store` chooses (when it does), for the page's Phones view.
pub async fn findings(state_dir: Option<PathBuf>, store: SharedStore) -> Vec<Finding> {
    let mut findings = match PhoneSources::default().phones() {
        Ok(phones) => findings_with(state_dir, &phones).await,
        Err(error) => vec![Finding {
            check: "phones".into(),
            ok: false,
            detail: crate::chain(&error),
            fix: Some("fix ADB_SERVER_SOCKET or USBMUXD_SOCKET_ADDRESS".into()),
        }],
    };
    findings.extend(store_finding(store));
    findings
}

/// What `phonelogs doctor` finds for these adb servers and usbmuxd addresses.
pub async fn findings_with(state_dir: Option<PathBuf>, phones: &Phones) -> Vec<Finding> {
    use phonelogs_driver::AppLogger;
    let mut findings = vec![check_adb_binary()];
    let several = phones.android.len() > 1;
    for android in &phones.android {
        findings.push(check_adb_server_at(android.server().config()));
    }
    for ios in &phones.ios {
        findings.push(check_usbmuxd_at(ios.source().as_deref()));
    }
    for android in &phones.android {
        findings.extend(android_findings(android, several).await);
    }
    for ios in &phones.ios {
        findings.extend(ios_findings(ios).await);
    }
    findings.push(state_finding(state_dir));
    findings
}

/// The phones of one adb server, each with whether its log can be read.
async fn android_findings(android: &phonelogs_android::AdbPhone, several: bool) -> Vec<Finding> {
    use phonelogs_driver::{AppLogger, DeviceState};
    let mut findings = Vec::new();
    let address = android.server().config().address();
    let check = |what: &str| {
        if several {
            format!("{what} ({address})")
        } else {
            what.to_owned()
        }
    };
    match android.devices().await {
        Ok(list) if list.is_empty() => findings.push(Finding {
            check: check("Android devices"),
            ok: false,
            detail: "none connected".into(),
            fix: Some("plug in a phone with USB debugging on, start an emulator, or `adb connect HOST:PORT` (try `phonelogs sim`)".into()),
        }),
        Ok(list) => {
            let server = android.server();
            for device in list {
                let online = device.state == DeviceState::Online;
                // Whether it can be read: one line of its log, the smallest real read.
                let readable = if online {
                    match server.shell(device.id.as_str(), "logcat -d -t 1").await {
                        Ok(output) if output.success() => "its logs can be read".to_owned(),
                        Ok(output) => format!("logcat failed: {}", output.stderr_text().trim()),
                        Err(error) => format!("logcat failed: {error}"),
                    }
                } else {
                    "cannot be read until it is online".to_owned()
                };
                let ok = online && readable == "its logs can be read";
                let name = if several {
                    phonelogs_driver::DeviceId::qualified(&address, device.id.as_str())
                } else {
                    device.id.clone()
                };
                findings.push(Finding {
                    check: format!("device {name}"),
                    ok,
                    detail: format!("{} {}, {:?}; {readable}", device.platform, device.model.as_deref().unwrap_or("?"), device.state),
                    fix: (!ok).then(|| match device.state {
                        DeviceState::Unauthorized => "unlock the phone and accept \"Allow USB debugging\"".to_owned(),
                        DeviceState::Online => "check that the phone allows logcat over adb (USB debugging on, not a restricted work profile)".to_owned(),
                        _ => "reconnect the device (`adb reconnect`)".to_owned(),
                    }),
                });
            }
        }
        Err(error) => findings.push(Finding {
            check: check("Android devices"),
            ok: false,
            detail: error.to_string(),
            fix: Some("see the adb lines above".into()),
        }),
    }
    findings
}

/// The iPhones of one usbmuxd: each one's trust state, then for a trusted one what decides
/// which of its lines can be read (`doctor_ios`).
async fn ios_findings(ios: &phonelogs_ios::LockdownPhone) -> Vec<Finding> {
    use phonelogs_driver::{AppLogger, DeviceState};
    let mut findings = Vec::new();
    // usbmuxd's own reachability is reported above; list iPhones only when it answers.
    if let Ok(list) = ios.devices().await {
        for device in list {
            let ok = device.state == DeviceState::Online;
            findings.push(Finding {
                check: format!("iPhone {}", device.id),
                ok,
                detail: format!(
                    "{}, {:?}",
                    device.model.as_deref().unwrap_or("iPhone"),
                    device.state
                ),
                fix: (!ok).then(|| match device.state {
                    DeviceState::NotPaired => phonelogs_ios::NOT_PAIRED_ADVICE.to_owned(),
                    DeviceState::Locked => phonelogs_ios::LOCKED_ADVICE.to_owned(),
                    _ => "reconnect the iPhone".to_owned(),
                }),
            });
            if ok {
                findings.extend(match ios.check_phone(&device.id).await {
                    Ok(check) => crate::doctor_ios::phone_findings(&device.id, &check),
                    Err(error) => vec![Finding {
                        check: format!("iPhone {}: services", device.id),
                        ok: false,
                        detail: error.to_string(),
                        fix: Some(
                            "unlock the iPhone, reconnect it, and run the doctor again".into(),
                        ),
                    }],
                });
            }
        }
    }
    findings
}

/// The shared store as `--store`, `--store-file` and `PHONELOGS_STORE` give it (both `None`:
/// the state directory's SQLite).
#[derive(Debug, Clone, Default)]
pub struct SharedStore {
    /// The connection string given.
    pub url: Option<ConnectionString>,
    /// The file holding it (a secret file).
    pub file: Option<PathBuf>,
}

/// Whether the shared store is reached and has this build's schema: its host, port, database
/// and schema version, never a user or a password. `None` without a shared store.
pub fn store_finding(store: SharedStore) -> Option<Finding> {
    const CHECK: &str = "shared store";
    let url = match phonelogs_store_pg::chosen(store.url, store.file.as_deref()) {
        Ok(url) => url?,
        Err(error) => {
            return Some(Finding::bad(
                CHECK,
                error.to_string(),
                "fix --store-file (store_file), as the refusal says (docs/farms.md)",
            ));
        }
    };
    let seen = phonelogs_store_pg::inspect(&url);
    let known = phonelogs_store_pg::SCHEMA_VERSION;
    let name = seen.store;
    Some(match seen.schema {
        Ok(version) if version == known => {
            Finding::ok(CHECK, format!("{name} (schema version {version})"))
        }
        Ok(version) if version < known => Finding::bad(
            CHECK,
            format!("{name} has schema version {version}; this build needs {known}"),
            "run `phonelogs store migrate --store URL` (or start phonelogs-mcp with --migrate)",
        ),
        Ok(version) => Finding::bad(
            CHECK,
            format!("{name} has schema version {version}, newer than this build's {known}"),
            "upgrade phonelogs on this host to the version the other servers run",
        ),
        Err(error) => Finding::bad(
            CHECK,
            error.to_string(),
            "start the database, or fix the connection string's host, port, database, user or sslmode (docs/farms.md)",
        ),
    })
}

/// Whether the state directory opens.
fn state_finding(state_dir: Option<PathBuf>) -> Finding {
    match crate::state::state_dir(state_dir) {
        Err(error) => Finding {
            check: "state directory".into(),
            ok: false,
            detail: error.to_string(),
            fix: Some("pass --state-dir DIR".into()),
        },
        Ok(dir) => match phonelogs_gateway::Store::open(&dir) {
            Ok(_) => Finding {
                check: "state directory".into(),
                ok: true,
                detail: format!(
                    "{} (schema {})",
                    dir.display(),
                    phonelogs_gateway::Store::schema_version()
                ),
                fix: None,
            },
            Err(error) => Finding {
                check: "state directory".into(),
                ok: false,
                detail: error.to_string(),
                fix: Some(
                    "fix the directory's permissions, or move a damaged database away".into(),
                ),
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without a shared store (SQLite in the state directory) neither the doctor nor the page's
    /// Phones view adds a "shared store" line: for SQLite they show the state directory's.
    #[test]
    fn without_a_shared_store_there_is_no_shared_store_line() {
        assert!(store_finding(SharedStore::default()).is_none());
    }
}
