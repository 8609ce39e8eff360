//! Scenario files: a JSON description of a phone and what happens on it, in order.
//!
//! Actions before the first `wait` are applied when the phone is built; `Scenario::play`
//! plays the rest on a running phone, sleeping for each `wait`.
//!
//! Scenarios sit over the model and the crashes: each action is a `SimPhone` call.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::Error;
use crate::model::{Buffer, Package, Priority, Profile};
use crate::phone::{Fault, SimPhone};

/// A scenario: the phone to build and the actions to play on it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Scenario {
    /// The profile; missing fields take the Android 14 defaults.
    pub profile: Option<Profile>,
    /// Start from an empty phone instead of the default phone's apps.
    pub empty: bool,
    /// Packages to install before anything else.
    pub packages: Vec<Package>,
    /// Background log lines a second (the default phone writes 5).
    pub noise_per_second: Option<f64>,
    /// The actions, in order.
    pub actions: Vec<Action>,
}

/// One scenario action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
#[non_exhaustive]
pub enum Action {
    /// Install a package.
    Install {
        /// The package.
        package: Package,
    },
    /// Launch an app (a new pid and ActivityManager's start line).
    Launch {
        /// The package.
        package: String,
        /// The user (10 for an app clone); 0 by default.
        #[serde(default)]
        user: u32,
    },
    /// The app writes a line to the main buffer.
    Log {
        /// The package.
        package: String,
        /// The priority letter (V D I W E F).
        priority: char,
        /// The tag.
        tag: String,
        /// The message.
        message: String,
    },
    /// The app throws an uncaught exception.
    Crash {
        /// The package.
        package: String,
        /// The exception class.
        #[serde(default = "default_exception")]
        exception: String,
        /// The exception message.
        #[serde(default = "default_crash_message")]
        message: String,
    },
    /// The app stops answering (an ANR).
    Hang {
        /// The package.
        package: String,
    },
    /// The app dies of a signal in native code.
    NativeCrash {
        /// The package.
        package: String,
        /// The signal (11 SIGSEGV, 6 SIGABRT, 4 SIGILL).
        #[serde(default = "default_signal")]
        signal: u32,
    },
    /// Set the rate of background lines from other apps and the system.
    Noise {
        /// Lines a second.
        lines_per_second: f64,
    },
    /// Write a burst of background lines now.
    NoiseBurst {
        /// How many lines.
        count: usize,
    },
    /// Move the phone's clock.
    AdvanceClock {
        /// Seconds (negative goes back).
        seconds: f64,
    },
    /// Fill a buffer until its oldest lines are gone.
    WrapBuffer {
        /// The buffer.
        buffer: Buffer,
    },
    /// Set a buffer's size.
    BufferSize {
        /// The buffer.
        buffer: Buffer,
        /// Its size in bytes.
        bytes: usize,
    },
    /// Close the connection after this many bytes of the next command's output.
    DropMidStream {
        /// Bytes sent before the cut.
        after_bytes: u64,
    },
    /// Send nothing on the next command's stream for a while.
    Stall {
        /// Milliseconds; missing means until the host gives up.
        millis: Option<u64>,
    },
    /// Go offline, or come back.
    Offline {
        /// True to go offline.
        offline: bool,
    },
    /// Wait before the next action (only when played on a running phone).
    Wait {
        /// Milliseconds.
        millis: u64,
    },
}

fn default_exception() -> String {
    "java.lang.IllegalStateException".to_string()
}
fn default_crash_message() -> String {
    "Crash Test button pressed".to_string()
}
fn default_signal() -> u32 {
    11
}

impl Scenario {
    /// Parses a scenario from JSON.
    pub fn from_json(text: &str) -> Result<Self, Error> {
        serde_json::from_str(text).map_err(|error| Error::Scenario(error.to_string()))
    }

    /// Reads and parses a scenario file.
    pub fn from_file(path: &std::path::Path) -> Result<Self, Error> {
        let text = std::fs::read_to_string(path)?;
        Self::from_json(&text)
    }

    /// Builds the phone and applies the actions before the first `wait`.
    pub fn build(&self) -> Result<SimPhone, Error> {
        let profile = self.profile.clone().unwrap_or_default();
        let phone = if self.empty {
            SimPhone::empty(profile)
        } else {
            SimPhone::with_profile(profile)
        };
        for package in &self.packages {
            phone.install(package.clone());
        }
        if let Some(rate) = self.noise_per_second {
            phone.set_noise_rate(rate);
        }
        for action in self
            .actions
            .iter()
            .take_while(|action| !matches!(action, Action::Wait { .. }))
        {
            apply(&phone, action)?;
        }
        Ok(phone)
    }

    /// Plays the actions from the first `wait` on, sleeping for each `wait`.
    pub async fn play_rest(&self, phone: &SimPhone) -> Result<(), Error> {
        let start = self
            .actions
            .iter()
            .position(|action| matches!(action, Action::Wait { .. }));
        let Some(start) = start else { return Ok(()) };
        for action in &self.actions[start..] {
            match action {
                Action::Wait { millis } => tokio::time::sleep(Duration::from_millis(*millis)).await,
                other => apply(phone, other)?,
            }
        }
        Ok(())
    }
}

/// Applies one action to a phone (a `wait` does nothing here).
pub fn apply(phone: &SimPhone, action: &Action) -> Result<(), Error> {
    match action {
        Action::Install { package } => phone.install(package.clone()),
        Action::Launch { package, user } => {
            phone.launch_as_user(package, *user)?;
        }
        Action::Log {
            package,
            priority,
            tag,
            message,
        } => {
            let priority = Priority::from_letter(*priority)
                .ok_or_else(|| Error::Scenario(format!("unknown priority {priority}")))?;
            phone.log(package, priority, tag, message)?;
        }
        Action::Crash {
            package,
            exception,
            message,
        } => {
            phone.crash(package, exception, message)?;
        }
        Action::Hang { package } => {
            phone.hang(package)?;
        }
        Action::NativeCrash { package, signal } => {
            phone.native_crash(package, *signal)?;
        }
        Action::Noise { lines_per_second } => phone.set_noise_rate(*lines_per_second),
        Action::NoiseBurst { count } => phone.noise_burst(*count),
        Action::AdvanceClock { seconds } => phone.advance_clock(*seconds),
        Action::WrapBuffer { buffer } => phone.wrap_buffer(*buffer),
        Action::BufferSize { buffer, bytes } => phone.set_buffer_size(*buffer, *bytes),
        Action::DropMidStream { after_bytes } => {
            phone.inject_fault(Fault::DropAfterBytes(*after_bytes))
        }
        Action::Stall { millis } => {
            phone.inject_fault(Fault::Stall(millis.map(Duration::from_millis)))
        }
        Action::Offline { offline } => phone.set_offline(*offline),
        Action::Wait { .. } => {}
    }
    Ok(())
}

impl SimPhone {
    /// Builds a phone from a scenario (actions before its first `wait` applied).
    pub fn from_scenario(scenario: &Scenario) -> Result<Self, Error> {
        scenario.build()
    }
}
