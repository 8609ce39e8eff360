//! `--sim`: the simulated phone (`phonelogs sim`) behind a private, real adb server.
//!
//! The server runs on a free port with its own `HOME`, so it never touches the user's adb server
//! or keys; `adb connect 127.0.0.1:PORT` makes the simulated phone one of its devices, exactly as
//! a phone on the network would be. Dropping [`Sim`] stops the phone and the server.

use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::adb::{Adb, QUICK};
use crate::process;

/// How long the simulated phone may take to say where it listens.
const START: Duration = Duration::from_secs(30);

/// A running simulated phone and the private adb server that sees it.
#[derive(Debug)]
pub struct Sim {
    adb: Adb,
    phone: Child,
    serial: String,
}

impl Sim {
    /// Starts a private adb server, then `phonelogs sim --port 0 --android ANDROID`, and connects
    /// the two. `work` holds the server's home folder.
    pub fn start(
        adb_program: OsString,
        phonelogs: &Path,
        android: &str,
        work: &Path,
    ) -> Result<Self> {
        let home = work.join("adb-home");
        std::fs::create_dir_all(&home)
            .with_context(|| format!("cannot create {}", home.display()))?;
        let port = free_port()?;
        let adb = Adb::private(adb_program, port, home);
        adb.run(&["start-server"], QUICK)
            .context("cannot start a private adb server (is adb installed? apt-get install adb)")?;

        let mut phone = start_phone(phonelogs, android).inspect_err(|_| stop_server(&adb))?;
        let sim_port = match wait_for_port(&mut phone) {
            Ok(port) => port,
            Err(error) => {
                let _ = phone.kill();
                let _ = phone.wait();
                stop_server(&adb);
                return Err(error);
            }
        };
        let sim = Self {
            adb,
            phone,
            serial: format!("127.0.0.1:{sim_port}"),
        };
        let connected = sim.adb.run(&["connect", &sim.serial], QUICK)?;
        if !connected.stdout.contains("connected to") {
            bail!("adb connect {} said: {}", sim.serial, connected.both());
        }
        sim.wait_until_online()?;
        Ok(sim)
    }

    /// The private adb server.
    pub fn adb(&self) -> &Adb {
        &self.adb
    }

    /// The simulated phone's serial on that server (`127.0.0.1:PORT`).
    pub fn serial(&self) -> &str {
        &self.serial
    }

    fn wait_until_online(&self) -> Result<()> {
        let device = self.adb.device(&self.serial);
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let state = device.state().unwrap_or_default();
            if state == "device" {
                return Ok(());
            }
            if Instant::now() >= deadline {
                bail!(
                    "the simulated phone {} is `{state}` to adb, not `device`",
                    self.serial
                );
            }
            thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.adb.run(&["disconnect", &self.serial], QUICK);
        let _ = self.phone.kill();
        let _ = self.phone.wait();
        stop_server(&self.adb);
    }
}

fn stop_server(adb: &Adb) {
    let _ = adb.run(&["kill-server"], QUICK);
}

/// A port nobody listens on right now. The simulated phone is asked for port 0 instead, so only
/// the adb server's port can race with another program, and it fails loudly if it does.
fn free_port() -> Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0").context("cannot find a free local port")?;
    Ok(listener.local_addr()?.port())
}

fn start_phone(phonelogs: &Path, android: &str) -> Result<Child> {
    Command::new(phonelogs)
        .args(["sim", "--port", "0", "--android", android])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start {} sim", phonelogs.display()))
}

/// Reads the phone's `listening on 127.0.0.1:PORT` line.
fn wait_for_port(phone: &mut Child) -> Result<u16> {
    let stdout = phone
        .stdout
        .take()
        .context("no stdout from phonelogs sim")?;
    let (lines_tx, lines_rx) = mpsc::channel();
    // The reader thread keeps draining stdout for as long as the phone runs, so the phone never
    // blocks on a full pipe.
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if lines_tx.send(line).is_err() {
                continue;
            }
        }
    });
    let deadline = Instant::now() + START;
    loop {
        match lines_rx.recv_timeout(Duration::from_millis(100)) {
            Ok(line) => {
                if let Some(port) = parse_listening(&line) {
                    return Ok(port);
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {}
        }
        if let Some(status) = process::wait_until(phone, Instant::now())? {
            let mut stderr = String::new();
            if let Some(mut pipe) = phone.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut pipe, &mut stderr);
            }
            bail!(
                "`phonelogs sim` exited ({status}) before it listened: {}\n\
                 The simulated phone is the `sim` subcommand of bins/phonelogs (issues 5 and 9); \
                 until it exists, --sim cannot run.",
                stderr.trim()
            );
        }
        if Instant::now() >= deadline {
            bail!(
                "`phonelogs sim` printed no `listening on 127.0.0.1:PORT` line within {} s",
                START.as_secs()
            );
        }
    }
}

/// The port of a `listening on 127.0.0.1:PORT` line.
pub fn parse_listening(line: &str) -> Option<u16> {
    let address = line.trim().strip_prefix("listening on ")?;
    let (host, port) = address.rsplit_once(':')?;
    (host == "127.0.0.1").then_some(())?;
    port.parse().ok()
}

/// Where cargo puts binaries of this workspace: `$CARGO_TARGET_DIR` or `target/`.
pub fn target_dir(workspace: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|dir| {
            if dir.is_absolute() {
                dir
            } else {
                workspace.join(dir)
            }
        })
        .unwrap_or_else(|| workspace.join("target"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_listening_line() {
        assert_eq!(
            parse_listening("listening on 127.0.0.1:40123\n"),
            Some(40123)
        );
        assert_eq!(parse_listening("listening on 0.0.0.0:40123"), None);
        assert_eq!(parse_listening("starting"), None);
        assert_eq!(parse_listening("listening on 127.0.0.1:x"), None);
    }
}
