//! # phonelogs-demo
//!
//! The phones `phonelogs demo` and `phonelogs-mcp --demo` serve, so that someone with no phone
//! sees real results, built once for both binaries:
//!
//! - [`fake_phone`] and [`fill_fake_phone`]: the in-memory fake phone with the demo's own
//!   scenario (not the conformance suite's, whose lines carry test markers).
//! - [`AndroidDemo`]: the simulated Android phone (`phonelogs-adbsim`) behind an adb
//!   host-protocol front, and the real Android driver pointed at it.
//! - [`IosDemo`]: the simulated iPhone (`phonelogs-iossim`) on a loopback usbmuxd, and the real
//!   iOS driver pointed at it.
//! - [`play_android_story`] and [`play_ios_story`]: what Crash Test does on each once a task
//!   has started.
//!
//! Nothing here is canned: the simulators speak the real adb and usbmux/lockdown wire, and the
//! drivers read them as they read phones. This crate sits above the backends (it knows them
//! all, as the binaries do); nothing but the binaries depends on it.
//!
//! ```no_run
//! # async fn demo() -> Result<(), phonelogs_demo::Error> {
//! use phonelogs_demo::{AndroidDemo, IosDemo};
//!
//! let android = AndroidDemo::start(phonelogs_adbsim::SimPhone::default_phone()).await?;
//! let iphone = IosDemo::start(phonelogs_iossim::SimPhone::default_phone()).await?;
//! let drivers = (android.driver(), iphone.driver()?);
//! phonelogs_demo::play_android_story(android.phone().clone());
//! phonelogs_demo::play_ios_story(iphone.phone().clone());
//! # drop(drivers);
//! # Ok(()) }
//! ```

mod android;
mod fake;
mod ios;

pub use android::{AndroidDemo, play_android_story};
pub use fake::{CHATTY, CRASH_TEST, FAKE_SERIAL, STORE_APP, fake_phone, fill_fake_phone};
pub use ios::{CRASH_TEST_WIDGET, IosDemo, play_ios_story};
/// The fake phone's type, for a caller that fills an empty one with [`fill_fake_phone`].
pub use phonelogs_fake::FakePhone;

/// The line Crash Test logs when it starts (`crashtest/res/values/strings.xml`, `start_line`).
pub const START_LINE: &str = "Crash Test started";
/// The message of the exception Crash Test throws on Crash (`strings.xml`, `crash_message`).
pub const CRASH_MESSAGE: &str = "Crash button tapped";

/// What can go wrong starting a demo phone.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The simulated Android phone could not listen.
    #[error("starting the simulated Android phone: {0}")]
    Android(#[source] phonelogs_adbsim::Error),
    /// The simulated iPhone could not listen or make its pair record.
    #[error("starting the simulated iPhone: {0}")]
    Ios(#[source] phonelogs_iossim::Error),
    /// The simulated iPhone listens on no loopback port, so the driver cannot reach it.
    #[error("the simulated iPhone has no loopback address")]
    NoLoopback,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_texts_are_crash_tests_own() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../crashtest/res/values/strings.xml"
        );
        let strings = std::fs::read_to_string(path).unwrap_or_default();
        for text in [START_LINE, CRASH_MESSAGE] {
            assert!(strings.contains(&format!(">{text}</string>")), "{text}");
        }
    }
}
