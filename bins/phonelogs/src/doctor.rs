//! `phonelogs doctor`: what works and what does not, each with the fix.

use std::net::{TcpStream, ToSocketAddrs};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// One finding of the doctor.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    /// What was checked.
    pub check: String,
    /// Whether it works.
    pub ok: bool,
    /// What was found.
    pub detail: String,
    /// What to do when it does not work.
    pub fix: Option<String>,
}

impl Finding {
    fn ok(check: &str, detail: impl Into<String>) -> Self {
        Finding {
            check: check.into(),
            ok: true,
            detail: detail.into(),
            fix: None,
        }
    }

    fn bad(check: &str, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Finding {
            check: check.into(),
            ok: false,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }
}

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

/// Renders findings for a person: one line each, with the fix under a problem.
pub fn render(findings: &[Finding]) -> String {
    let mut out = String::new();
    for finding in findings {
        let mark = if finding.ok { "ok " } else { "NO " };
        out.push_str(&format!("{mark} {}: {}\n", finding.check, finding.detail));
        if let Some(fix) = &finding.fix {
            out.push_str(&format!("    fix: {fix}\n"));
        }
    }
    out
}
