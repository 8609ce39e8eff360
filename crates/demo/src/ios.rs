//! The simulated iPhone wired to the real iOS driver, in one place for both binaries.

use std::sync::Arc;
use std::time::Duration;

use idevice::usbmuxd::UsbmuxdAddr;
use phonelogs_ios::{LockdownPhone, UsbmuxdBackend};
use phonelogs_iossim::{Background, CrashKind, IosSim, Level, SimPhone};

use crate::Error;

/// Crash Test's widget extension on the simulated iPhone.
pub const CRASH_TEST_WIDGET: &str = "dev.phonelogs.crashtest.widget";
/// The os_log subsystem Crash Test logs under; its categories become the lines' tags.
const SUBSYSTEM: &str = "dev.phonelogs.crashtest";

/// A running simulated iPhone on a loopback usbmuxd, with its background life (other apps
/// logging, a look-alike app crashing now and then), and the way to reach it with the real
/// driver. It listens until this is dropped.
#[derive(Debug)]
pub struct IosDemo {
    sim: IosSim,
}

impl IosDemo {
    /// Serves `phone` (usually `SimPhone::default_phone()`) on a free loopback port.
    pub async fn start(phone: SimPhone) -> Result<IosDemo, Error> {
        let mut sim = IosSim::bind_loopback(None, phone)
            .await
            .map_err(Error::Ios)?;
        sim.start_background(Background::default());
        Ok(IosDemo { sim })
    }

    /// The real iOS driver, pointed at this phone's usbmuxd.
    pub fn driver(&self) -> Result<LockdownPhone, Error> {
        let addr = self.sim.tcp_addr().ok_or(Error::NoLoopback)?;
        // The demo's one iPhone is named by its bare UDID, as a phone on this machine's own
        // usbmuxd is, though its usbmuxd listens on a loopback port.
        Ok(LockdownPhone::new(Arc::new(
            UsbmuxdBackend::with_addr(UsbmuxdAddr::TcpSocket(addr)).standing_for_default(),
        )))
    }

    /// The simulated phone, to play things on it.
    pub fn phone(&self) -> &SimPhone {
        self.sim.phone()
    }

    /// `USBMUXD_SOCKET_ADDRESS`'s value for other clients.
    pub fn address(&self) -> String {
        self.sim.addr()
    }

    /// The phone's UDID, as `list_devices` shows it.
    pub fn udid(&self) -> String {
        self.sim.phone().profile().udid
    }
}

/// What Crash Test does on the simulated iPhone once an agent's task has started. An iPhone
/// keeps no history a computer can read back: the driver sees only what the app logs after
/// its first read started following it. So the app keeps logging: it launches with its widget,
/// logs its start line, the person's test taps Crash (an uncaught NSException, whose `.ips`
/// report the crash mover makes visible a moment later), it relaunches, and from then on the
/// app and its widget log every two seconds, as an app under test does.
pub fn play_ios_story(phone: SimPhone) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let Some(pid) = phone.launch(crate::CRASH_TEST) else {
            tracing::warn!("the demo iPhone has no Crash Test");
            return;
        };
        phone.log(
            pid,
            Level::Default,
            Some((SUBSYSTEM, "CrashTest")),
            crate::START_LINE,
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
        phone.crash(pid, CrashKind::Exception(crate::CRASH_MESSAGE.into()));
        let Some(pid) = phone.launch(crate::CRASH_TEST) else {
            return;
        };
        phone.log(
            pid,
            Level::Default,
            Some((SUBSYSTEM, "CrashTest")),
            crate::START_LINE,
        );
        let widget = phone.launch_extension(crate::CRASH_TEST, CRASH_TEST_WIDGET);
        for round in 1u64.. {
            phone.log(
                pid,
                Level::Info,
                Some((SUBSYSTEM, "Net")),
                &format!("feed refreshed ({round})"),
            );
            if let Some(widget) = widget {
                phone.log(
                    widget,
                    Level::Default,
                    Some((SUBSYSTEM, "Widget")),
                    &format!("timeline reloaded ({round})"),
                );
            }
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
    })
}
