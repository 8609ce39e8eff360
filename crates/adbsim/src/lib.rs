//! # phonelogs-adbsim
//!
//! A simulated Android phone that speaks the adbd wire protocol, so the real adb server (and our
//! own client, through the host-protocol front) can drive it with no phone or emulator attached.
//!
//! - [`Simulator::bind_loopback`] listens as a device: `adb connect 127.0.0.1:PORT` makes it a
//!   device like any other (CNXN/AUTH/OPEN/OKAY/WRTE/CLSE, flow control, shell v2 with exit codes,
//!   legacy `shell:`/`exec:`, `jdwp`, `track-jdwp`).
//! - [`HostFront::bind`] listens as an adb server with this one device attached
//!   (`host:version`, `host:devices-l`, `host:transport:<serial>`, then `shell,v2,raw:…`).
//! - [`SimPhone`] is the phone: packages with uids, users and flags, processes, logcat buffers
//!   that wrap, the drop box, exit records, `am set-debug-app`, a clock; scenario actions
//!   (launch, log, crash, hang, native crash, noise, clock, buffer wrap) and faults (drop
//!   mid-stream, stall, offline). It records every service opened and every command run.
//! - Apps installed with `adb install` (adb 29's streamed install, read by [`parse_apk`]) are
//!   played as Crash Test: `am start -W`, `uiautomator dump`, `input tap` on Crash and Hang.
//! - [`run_sim`] is the `phonelogs sim` command.
//!
//! Output layouts follow `shared/notes/android-formats.md`; see `docs/adbsim.md`.
//!
//! ## Layers
//!
//! The files go one way, bottom to top; a file uses only files below it (a tidy test checks
//! that they form no cycle), so a reader knows where a behaviour lives:
//!
//! 1. **The model** — `model` (plain values: profiles, packages, processes, log entries, drop
//!    box entries, exit records), `apk` (what an APK says), `phone` ([`SimPhone`]: the state
//!    behind one lock — apps, processes, log buffers, the drop box, files, the clock, the boot
//!    id — and the actions that need no text: install, launch, log, noise, clock, reboot). No
//!    I/O, no wire.
//! 2. **The formats over the model** — `format` (what the phone prints, byte for byte), and
//!    `crashes` (a crash, an ANR, a native crash, written through the formats into the
//!    model); `scenario` plays actions on the phone.
//! 3. **The commands over the model** — `commands` is the one dispatch table (`logcat` in
//!    `logcat`, `pm`, `dumpsys`, `am`, `debuggerd`, `date`, `getprop`; the installed apps'
//!    commands in `apps`; `cat`, `stat`, `rm` in `procfs`), each writing to a `sink`.
//! 4. **The shell and the services over the commands** — `shell` (quoting, `;`, `&&`,
//!    redirections), `service` (`shell,v2,…:`, `exec:`, `jdwp`, `track-jdwp`, streamed
//!    install, and how each frames its output).
//! 5. **The wire on top** — `wire` (adb packets), `transport` (adbd: [`Simulator`]), `host`
//!    (the adb server's host protocol: [`HostFront`]).
//!
//! ```
//! use phonelogs_adbsim::{SimPhone, run_shell};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let phone = SimPhone::default_phone();
//! let uid = phone.uid_of("dev.phonelogs.crashtest", 0).unwrap();
//! let output = run_shell(&phone, "pm list packages -U dev.phonelogs.crashtest").await;
//! assert_eq!(output.stdout, format!("package:dev.phonelogs.crashtest uid:{uid}\n").into_bytes());
//! assert_eq!(output.exit_code, 0);
//! assert_eq!(phone.commands_run(), vec!["pm list packages -U dev.phonelogs.crashtest"]);
//! # });
//! ```

// The model, at the bottom: plain values, the APK reader, the phone's state.
mod apk;
mod model;
mod phone;
// What the phone prints, and the crashes it writes through those formats.
mod crashes;
mod format;
mod scenario;
// The commands, in one dispatch table, writing to a sink.
mod apps;
mod commands;
mod logcat;
mod procfs;
mod sink;
// The shell and the device services over the commands.
mod service;
mod shell;
// The wire on top: adbd's transport and the adb server's host protocol.
mod host;
mod transport;
pub mod wire;

use std::path::PathBuf;

pub use apk::{ApkInfo, parse_apk};
pub use host::{HOST_VERSION, HostFront};
pub use model::{
    AndroidVersion, AuthMode, Buffer, BuildType, DropBoxEntry, ExitRecord, LogEntry, Package,
    Priority, Process, Profile,
};
pub use phone::{DEFAULT_BUFFER_BYTES, DebugApp, Fault, Request, SimPhone};
pub use scenario::{Action, Scenario, apply};
pub use transport::{SimHandle, Simulator};

/// Everything that can go wrong in the simulator.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A socket or file operation failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// The peer broke the adb protocol.
    #[error("adb protocol error: {0}")]
    Protocol(String),
    /// A scenario file is not valid.
    #[error("invalid scenario: {0}")]
    Scenario(String),
    /// An action named a package the phone does not have.
    #[error("no such package on the simulated phone: {0}")]
    UnknownPackage(String),
    /// An action needed a running process.
    #[error("package is not running: {0}")]
    NotRunning(String),
    /// An APK the package manager cannot read, with the `INSTALL_…` code a phone gives.
    #[error("{code}: {reason}")]
    Apk {
        /// The failure code, e.g. `INSTALL_PARSE_FAILED_NOT_APK`.
        code: &'static str,
        /// What was wrong.
        reason: String,
    },
}

/// The output of one shell command line run in-process (no transport).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellOutput {
    /// Standard output.
    pub stdout: Vec<u8>,
    /// Standard error.
    pub stderr: Vec<u8>,
    /// The exit status.
    pub exit_code: u8,
}

/// Runs one shell command line on the phone in-process, as `adb shell` would, and collects it.
///
/// A command that ends without an exit status (it cannot, short of a bug) reports 255.
pub async fn run_shell(phone: &SimPhone, command: &str) -> ShellOutput {
    let service = service::Service::Shell {
        framing: service::Framing::ShellV2 { pty: false },
        command: command.to_string(),
    };
    let mut receiver = service::start(phone, &service);
    let mut output = ShellOutput {
        stdout: Vec::new(),
        stderr: Vec::new(),
        exit_code: 0,
    };
    while let Some(chunk) = receiver.recv().await {
        match chunk {
            sink::Chunk::Stdout(bytes) => output.stdout.extend(bytes),
            sink::Chunk::Stderr(bytes) => output.stderr.extend(bytes),
            sink::Chunk::Exit(code) => output.exit_code = code,
        }
    }
    output
}

/// Options of `phonelogs sim`.
#[derive(Debug, Clone, Default)]
pub struct SimOptions {
    /// The transport port (`None`: any free port).
    pub port: Option<u16>,
    /// A scenario file to play.
    pub scenario: Option<PathBuf>,
    /// The Android release; overrides the scenario's.
    pub android: Option<AndroidVersion>,
    /// Also serve the host-protocol front on this port (`Some(0)`: any free port).
    pub host_front_port: Option<u16>,
}

/// Runs the simulator until Ctrl-C: tells `announce` where it listens
/// (`listening on 127.0.0.1:PORT`, and `host front on 127.0.0.1:PORT` when asked for; the
/// `phonelogs sim` command prints them), plays the scenario, serves. The library itself never
/// writes to stdout, which belongs to the MCP transport wherever a library runs.
pub async fn run_sim(
    options: SimOptions,
    mut announce: impl FnMut(&str) + Send + 'static,
) -> Result<(), Error> {
    let scenario = match &options.scenario {
        Some(path) => Scenario::from_file(path)?,
        None => Scenario::default(),
    };
    let mut scenario = scenario;
    if let Some(android) = options.android {
        let mut profile = scenario
            .profile
            .clone()
            .unwrap_or_else(|| Profile::for_android(android));
        profile.android = android;
        scenario.profile = Some(profile);
    }
    let phone = scenario.build()?;
    let (address, handle) = Simulator::bind_loopback(options.port, phone.clone()).await?;
    announce(&format!("listening on {address}"));
    let host_handle = match options.host_front_port {
        Some(port) => {
            let (host_address, host_handle) =
                HostFront::bind(if port == 0 { None } else { Some(port) }, phone.clone()).await?;
            announce(&format!("host front on {host_address}"));
            Some(host_handle)
        }
        None => None,
    };
    let player = {
        let phone = phone.clone();
        tokio::spawn(async move {
            if let Err(error) = scenario.play_rest(&phone).await {
                tracing::warn!(%error, "scenario stopped");
            }
        })
    };
    handle.wait().await;
    player.abort();
    drop(host_handle);
    Ok(())
}
