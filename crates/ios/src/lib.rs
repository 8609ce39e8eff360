//! # phonelogs-ios
//!
//! The phonelogs iPhone driver: one app's own log lines and crash reports over usbmux and
//! lockdown. [`LockdownPhone`] implements the driver contract's `AppLogger` and `LogListener`.
//!
//! - **Lines** come from a [`Follower`]: per-process os_trace streams (`StartActivity` with a
//!   pid) for the processes whose executable lies inside the app's bundle, never a stream of
//!   the whole system, kept (20,000 lines at most) until `stop_app_logs`.
//! - **Crash reports** come from `com.apple.crashreportmover` then
//!   `com.apple.crashreportcopymobile` (AFC), parsed and cut by `phonelogs-crash`
//!   ([`crashes`]).
//! - **Development builds** are apps with `get-task-allow`, from installation_proxy's `Lookup`.
//!
//! The logic runs over the small traits of [`services`]; [`UsbmuxdBackend`] implements them
//! with `idevice` for real phones, and tests implement them with fakes.
//!
//! ```
//! use phonelogs_crash::ostrace::{OsLogLevel, OsTraceEntry};
//! use phonelogs_driver::LogLevel;
//! use phonelogs_ios::follower::entry_to_lines;
//!
//! // An os_log fault of the app becomes a fatal line on the phone's clock.
//! let entry = OsTraceEntry {
//!     pid: 4242,
//!     seconds: 1_764_496_800,
//!     microseconds: 250_000,
//!     level: OsLogLevel::Fault,
//!     filename: "/private/var/containers/Bundle/Application/A/Example.app/Example".into(),
//!     image_name: "/usr/lib/swift/libswiftCore.dylib".into(),
//!     message: "Fatal error: index out of range".into(),
//!     subsystem: Some("com.example.app".into()),
//!     category: Some("Store".into()),
//! };
//! let lines = entry_to_lines(&entry, 4096);
//! assert_eq!(lines.len(), 1);
//! let line = &lines[0];
//! assert_eq!(line.level, LogLevel::Fatal);
//! assert_eq!(line.tag, "Store");
//! assert_eq!(line.time.millisecond(), 250);
//! ```

pub mod coredevice;
pub mod crashes;
mod device;
mod error;
pub mod follower;
mod idevice_phone;
mod phone;
pub mod protocol;
pub mod services;
pub mod sources;

pub use device::{TUNNELD_DEFAULT, UsbmuxdBackend, looks_like_simulator, parse_tunneld};
pub use error::{Error, LOCKED_ADVICE, NOT_PAIRED_ADVICE, device_error};
pub use follower::{Follower, FollowerConfig, FollowerLines, FollowerStatus};
pub use phone::{LockdownPhone, PhoneCheck, PhoneConfig};
