//! The `--demo` phones, from `phonelogs-demo`: which phones each kind serves, and the drivers
//! the gateway reads them through.
//!
//! - `both` (plain `--demo`): the simulated Android phone and the simulated iPhone, each behind
//!   its real wire (adb host protocol, usbmuxd and lockdown) and read by the real driver.
//! - `adbsim` / `iossim`: one of the two.
//! - `fake`: the in-memory fake phone with the demo's own scenario.
//!
//! The simulated phones play Crash Test's story once the session has started (see
//! `phonelogs_demo::play_android_story` and `play_ios_story`).

use std::sync::Arc;

use phonelogs_demo::{AndroidDemo, IosDemo};
use phonelogs_driver::AppLogger;

use crate::Error;

/// Which simulated phones `--demo` serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DemoKind {
    /// The simulated Android phone and the simulated iPhone, so both platforms show.
    Both,
    /// The in-memory fake phone (`phonelogs-fake`) with the demo's scenario.
    Fake,
    /// The simulated Android phone (`phonelogs-adbsim`) through the real Android driver.
    Adbsim,
    /// The simulated iPhone (`phonelogs-iossim`) through the real iOS driver.
    Iossim,
}

/// The running demo phones: the simulators listen as long as this lives.
pub struct Demo {
    /// The drivers to hand the gateway, one per phone.
    pub drivers: Vec<Arc<dyn AppLogger>>,
    /// The phones' ids, as `list_devices` shows them, for the log line at start.
    pub devices: Vec<String>,
    /// Fills the fake phone once the task has started (`--demo=fake`).
    fill_fake: Option<Box<dyn FnOnce(time::OffsetDateTime) + Send>>,
    /// The simulated phones' stories, played once the task has started.
    stories: Vec<Box<dyn FnOnce() + Send>>,
    _android: Option<AndroidDemo>,
    _iphone: Option<IosDemo>,
}

impl Demo {
    /// Stamps the fake phone's lines from `task_start` on, and starts the simulated phones'
    /// stories (in real time from now), so that the task sees them without a `since` however
    /// long opening the state and building the gateway took.
    pub fn task_started(&mut self, task_start: time::OffsetDateTime) {
        if let Some(fill) = self.fill_fake.take() {
            fill(task_start);
        }
        for story in self.stories.drain(..) {
            story();
        }
    }
}

/// Starts the phones `kind` names and their stories.
pub async fn start(kind: DemoKind) -> Result<Demo, Error> {
    let mut demo = Demo {
        drivers: Vec::new(),
        devices: Vec::new(),
        fill_fake: None,
        stories: Vec::new(),
        _android: None,
        _iphone: None,
    };
    if kind == DemoKind::Fake {
        // Empty until the task starts (`Demo::task_started`); a clone shares the phone.
        let phone = phonelogs_demo::FakePhone::new();
        let filled = phone.clone();
        demo.fill_fake = Some(Box::new(move |start| {
            phonelogs_demo::fill_fake_phone(&filled, start);
        }));
        demo.drivers.push(Arc::new(phone));
        demo.devices.push(phonelogs_demo::FAKE_SERIAL.to_owned());
        return Ok(demo);
    }
    if matches!(kind, DemoKind::Both | DemoKind::Adbsim) {
        let android = AndroidDemo::start(phonelogs_adbsim::SimPhone::default_phone())
            .await
            .map_err(|source| Error::Demo {
                phone: "Android phone",
                source,
            })?;
        let phone = android.phone().clone();
        demo.stories.push(Box::new(move || {
            phonelogs_demo::play_android_story(phone);
        }));
        demo.drivers.push(Arc::new(android.driver()));
        demo.devices.push(android.serial());
        demo._android = Some(android);
    }
    if matches!(kind, DemoKind::Both | DemoKind::Iossim) {
        let iphone = IosDemo::start(phonelogs_iossim::SimPhone::default_phone())
            .await
            .map_err(|source| Error::Demo {
                phone: "iPhone",
                source,
            })?;
        let phone = iphone.phone().clone();
        demo.stories.push(Box::new(move || {
            phonelogs_demo::play_ios_story(phone);
        }));
        demo.drivers
            .push(Arc::new(iphone.driver().map_err(Error::DemoDriver)?));
        demo.devices.push(iphone.udid());
        demo._iphone = Some(iphone);
    }
    Ok(demo)
}
