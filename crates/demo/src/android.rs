//! The simulated Android phone wired to the real Android driver, in one place for both binaries.

use std::net::SocketAddr;
use std::time::Duration;

use phonelogs_adbsim::{HostFront, Priority, SimHandle, SimPhone};
use phonelogs_android::{AdbConfig, AdbPhone};

use crate::Error;

/// A running simulated Android phone behind its adb host-protocol front, and the way to reach it
/// with the real driver. The front listens until this is dropped.
#[derive(Debug)]
pub struct AndroidDemo {
    phone: SimPhone,
    address: SocketAddr,
    _front: SimHandle,
}

impl AndroidDemo {
    /// Serves `phone` (usually `SimPhone::default_phone()`) on a free loopback port.
    pub async fn start(phone: SimPhone) -> Result<AndroidDemo, Error> {
        let (address, front) = HostFront::bind(None, phone.clone())
            .await
            .map_err(Error::Android)?;
        Ok(AndroidDemo {
            phone,
            address,
            _front: front,
        })
    }

    /// The real Android driver, pointed at this phone's front.
    pub fn driver(&self) -> AdbPhone {
        AdbPhone::new(AdbConfig {
            // This is our own simulated server: a driver that found it gone must fail, never
            // start a real adb server on its port instead.
            start_server: false,
            // Its phone is named by its bare serial, as a phone on this machine's own adb
            // server is, though the simulated server listens on a loopback port.
            stands_for_default: true,
            ..AdbConfig::local(self.address.port())
        })
    }

    /// The simulated phone, to play things on it.
    pub fn phone(&self) -> &SimPhone {
        &self.phone
    }

    /// Where the front listens.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The phone's serial, as `list_devices` shows it.
    pub fn serial(&self) -> String {
        self.phone.profile().serial
    }
}

/// What Crash Test does on the simulated Android phone once an agent's task has started: after
/// half a second it logs its start line, half a second later the person's test taps Crash and it
/// throws, as the real Crash Test app does (`crashtest/res/values/strings.xml`). The task's
/// default `since` is its start, so the pause makes these its lines.
pub fn play_android_story(phone: SimPhone) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        if let Err(error) = phone.log(
            crate::CRASH_TEST,
            Priority::Info,
            "CrashTest",
            crate::START_LINE,
        ) {
            tracing::warn!(%error, "the demo's Crash Test could not log");
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        if let Err(error) = phone.crash(
            crate::CRASH_TEST,
            "java.lang.IllegalStateException",
            crate::CRASH_MESSAGE,
        ) {
            tracing::warn!(%error, "the demo's Crash Test could not crash");
        }
    })
}
