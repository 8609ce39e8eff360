//! # phonelogs-android
//!
//! The phonelogs Android driver: one app's own log lines, crash reports and development-build
//! flag, plus the six debugging aids, read through the adb server. [`AdbPhone`] implements the
//! driver contract's `AppLogger` and `AppDebugger` (not `LogListener`: logcat keeps history,
//! so there is nothing to stop).
//!
//! What it sends, to the letter of the spec's Android section:
//! - lines: `logcat -d -b main,system,crash -v epoch -v uid --uid=<uid> -t '<since>' *:<level>`,
//!   one dump per call (on Android 10, which has no `--uid`, every line is read); either way
//!   every line's uid is checked again here, so a logcat that ignores the option leaks nothing.
//!   The spec's `-t <count>` becomes a time: logd applies a count before logcat drops other
//!   uids' lines, so a count would count every app's lines; the count is applied here.
//!   The uid is `pm list packages -U`'s (each user's, so an app clone's lines count);
//!   a package with a `sharedUserId` is `unsupported`;
//! - crashes: `dumpsys dropbox --print` for `data_app_crash`, `data_app_native_crash` and
//!   `data_app_anr`, checked against each tag's listing (`dumpsys dropbox <tag>`, which an
//!   entry's text cannot forge) read first in the same shell, so text shaped like an entry
//!   inside another app's compressed report is never taken for one (such entries are left out
//!   and counted), matched by `UID:` (else the package list's first line; a header another app
//!   can write never makes an entry the app's), ANRs cut to the app's own
//!   threads, Java crashes the drop box dropped from the crash buffer (one per pid), local
//!   times read with `date +%z` in the same shell;
//! - development build: `DEBUGGABLE` in `dumpsys package <pkg>`; system app: `SYSTEM`.
//!
//! ## Why its own adb client
//! [`AdbServer`] is a small tokio client of the adb server's smart-socket host protocol rather
//! than the `adb_client` crate, because `adb_client` 3.2.3 (measured in
//! `shared/notes/adb-wire.md` and `deps.md` §2.1) is blocking, has no timeouts or cancel
//! handle on the server path, loses every shell command's exit code through the server, has no
//! `jdwp` service, runs `adb start-server` on every connect, and pulls in about 35 crates. Here
//! every read has a timeout and every call a deadline, dropping a call closes its socket (the
//! server then closes the stream on the device), shell v2 gives stdout, stderr and the exit
//! code apart, and commands go as one string quoted by [`quote`], so a package name or filter
//! can never inject a command.
//!
//! The server is found as adb's own tools find it: `ADB_SERVER_SOCKET=tcp:host:port`, else
//! `ANDROID_ADB_SERVER_PORT`, else `127.0.0.1:5037`; when no local server answers and `adb` is
//! on `PATH` it is started with `adb start-server`, else the error says adb is missing.
//!
//! ```
//! use phonelogs_android::{AdbConfig, AdbPhone, command_line};
//! use phonelogs_driver::{AppLogger, Platform};
//!
//! // Commands reach the device as one quoted string: the hostile word stays one word.
//! assert_eq!(
//!     command_line(&["pm", "list", "packages", "-U", "x; reboot"]).unwrap(),
//!     "pm list packages -U 'x; reboot'"
//! );
//!
//! // A driver for a server on a port of our choosing; nothing connects until a call.
//! let phone = AdbPhone::new(AdbConfig::local(5037));
//! let caps = phone.capabilities();
//! assert_eq!(caps.platform, Platform::Android);
//! assert!(caps.log_history && caps.debugger && !caps.listener);
//! ```

mod client;
mod error;
mod live;
mod logs;
mod phone;
mod quote;

pub use client::{AdbConfig, AdbDevice, AdbServer, DEFAULT_PORT, ShellOutput, parse_devices_long};
pub use error::{Error, Result};
pub use phone::AdbPhone;
pub use quote::{command_line, quote};
