//! The adb command line as xtask uses it: one server (the user's, or a private one on its own
//! port and home folder), one device, and a deadline on every call.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use anyhow::{Result, bail};

use crate::process::{self, Finished};

/// How long a quick adb call (a shell command, `get-state`) may take.
pub const QUICK: Duration = Duration::from_secs(30);
/// How long an install may take.
pub const INSTALL: Duration = Duration::from_secs(180);

/// One adb server, reached through the `adb` program.
#[derive(Debug, Clone)]
pub struct Adb {
    program: OsString,
    /// `-P port`: a private server; `None` is the user's (adb's own defaults and environment).
    port: Option<u16>,
    /// `HOME` for the adb client and the server it starts, so a private server's key pair and
    /// settings stay out of the user's home folder.
    home: Option<PathBuf>,
}

impl Adb {
    /// The user's adb server, through `program`.
    pub fn new(program: OsString) -> Self {
        Self {
            program,
            port: None,
            home: None,
        }
    }

    /// A private server on `port` whose `~/.android` lives under `home`.
    pub fn private(program: OsString, port: u16, home: PathBuf) -> Self {
        Self {
            program,
            port: Some(port),
            home: Some(home),
        }
    }

    /// The private server's port, if this is one.
    pub fn port(&self) -> Option<u16> {
        self.port
    }

    /// An `adb` command aimed at this server.
    pub fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        if let Some(port) = self.port {
            command.arg("-P").arg(port.to_string());
        }
        if let Some(home) = &self.home {
            command.env("HOME", home);
        }
        command
    }

    /// Runs `adb ARGS…`; a non-zero exit is an error.
    pub fn run(&self, args: &[&str], timeout: Duration) -> Result<Finished> {
        process::run_ok(self.command().args(args), timeout)
    }

    /// The devices the server lists, with their states (`device`, `offline`, `unauthorized`…).
    pub fn devices(&self) -> Result<Vec<(String, String)>> {
        let finished = self.run(&["devices"], QUICK)?;
        Ok(parse_devices(&finished.stdout))
    }

    /// One device of this server.
    pub fn device(&self, serial: &str) -> Device {
        Device {
            adb: self.clone(),
            serial: serial.to_owned(),
        }
    }
}

/// Parses `adb devices`: a heading, then `serial<TAB>state` lines.
pub fn parse_devices(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter(|line| !line.starts_with("List of devices") && !line.starts_with('*'))
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let serial = fields.next()?;
            let state = fields.next()?;
            Some((serial.to_owned(), state.to_owned()))
        })
        .collect()
}

/// One device, reached through its server.
#[derive(Debug, Clone)]
pub struct Device {
    adb: Adb,
    serial: String,
}

impl Device {
    /// The device's serial.
    pub fn serial(&self) -> &str {
        &self.serial
    }

    /// The server the device is reached through.
    pub fn adb(&self) -> &Adb {
        &self.adb
    }

    /// Runs `adb -s SERIAL ARGS…`; a non-zero exit is an error.
    pub fn run(&self, args: &[&str], timeout: Duration) -> Result<Finished> {
        let mut command = self.adb.command();
        command.arg("-s").arg(&self.serial).args(args);
        process::run_ok(&mut command, timeout)
    }

    /// Runs one already shell-quoted command line on the device and returns its standard output.
    /// adb 29 and later pass the command's exit status back (shell v2), so a failing command is
    /// an error here.
    pub fn shell(&self, command_line: &str) -> Result<String> {
        Ok(self.run(&["shell", command_line], QUICK)?.stdout)
    }

    /// The device's state as adb sees it (`device` when it can be used).
    pub fn state(&self) -> Result<String> {
        Ok(self.run(&["get-state"], QUICK)?.stdout.trim().to_owned())
    }

    /// Installs (or reinstalls) an APK with `adb install -r`.
    pub fn install(&self, apk: &std::path::Path) -> Result<String> {
        let apk = apk.to_string_lossy();
        let finished = self.run(&["install", "-r", &apk], INSTALL)?;
        let text = finished.both();
        if !text.contains("Success") {
            bail!("adb install did not report Success: {text}");
        }
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_adb_devices() {
        let text = "* daemon not running; starting now at tcp:5037\n* daemon started successfully\n\
                    List of devices attached\nemulator-5554\tdevice\n127.0.0.1:40001\toffline\n\n";
        assert_eq!(
            parse_devices(text),
            vec![
                ("emulator-5554".to_owned(), "device".to_owned()),
                ("127.0.0.1:40001".to_owned(), "offline".to_owned()),
            ]
        );
        assert!(parse_devices("List of devices attached\n\n").is_empty());
    }
}
