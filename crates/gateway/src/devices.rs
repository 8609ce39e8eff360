//! Finding the phone a call is about, and what its driver says of the app: one lookup for
//! `phone_logs` and the debugging aids, whose callers only word the failure their own way.

use phonelogs_driver::{AppId, AppLogger, DeviceId, DeviceState, Error};

use crate::catalog;
use crate::session::{Session, Target, driver_error_status};
use crate::types::{LogsResponse, Status, StepArgs};

/// Why no phone could be chosen.
#[derive(Debug)]
pub(crate) enum NoDevice {
    /// The phone named is not among the task's phones.
    OutsideTask(String),
    /// The phone named is not connected; `error` is a driver's failure to list its phones, when
    /// one failed.
    NotFound {
        /// The id asked for.
        wanted: String,
        /// The first listing failure of a driver that could have had it.
        error: Option<Error>,
    },
    /// No phone was named and none is online (`error` as above).
    None(Option<Error>),
    /// No phone was named and several are online.
    Several(Vec<String>),
}

impl NoDevice {
    /// The `phone_logs` status and message.
    pub(crate) fn for_logs(&self) -> (Status, String) {
        let with = |text: String, error: &Option<Error>| match error {
            Some(error) => format!("{text} ({error})"),
            None => text,
        };
        match self {
            NoDevice::OutsideTask(wanted) => {
                (Status::ScopeDenied, catalog::device_outside_task(wanted))
            }
            NoDevice::NotFound { wanted, error } => {
                (Status::Error, with(catalog::no_such_device(wanted), error))
            }
            NoDevice::None(error) => (Status::Error, with(catalog::no_device(), error)),
            NoDevice::Several(ids) => (Status::Error, catalog::several_devices(ids)),
        }
    }
}

impl Session {
    /// The phone named (`wanted`), or the only online phone among the task's, and the index of
    /// its driver. With `debugging`, only drivers that serve the debugging aids count when they
    /// fail to list their phones: an iPhone service that is down says nothing about an adb
    /// serial.
    pub(crate) async fn find_device(
        &self,
        wanted: Option<&str>,
        debugging: bool,
    ) -> Result<(usize, DeviceId), NoDevice> {
        let allowed = self.spec().devices.as_deref();
        let wanted = wanted.map(str::trim).filter(|w| !w.is_empty());
        if let (Some(wanted), Some(allowed)) = (wanted, allowed)
            && !allowed.iter().any(|d| d.as_str() == wanted)
        {
            return Err(NoDevice::OutsideTask(wanted.to_owned()));
        }
        let mut online = Vec::new();
        let mut first_error = None;
        for (index, driver) in self.gateway().inner.drivers.iter().enumerate() {
            let devices = match driver.devices().await {
                Ok(devices) => devices,
                Err(error) => {
                    tracing::warn!(%error, "a driver could not list its devices");
                    if !debugging || driver.capabilities().debugger {
                        first_error.get_or_insert(error);
                    }
                    continue;
                }
            };
            for device in devices {
                match wanted {
                    Some(wanted) if device.id.as_str() == wanted => return Ok((index, device.id)),
                    Some(_) => {}
                    None if device.state == DeviceState::Online
                        && allowed.is_none_or(|allowed| allowed.contains(&device.id)) =>
                    {
                        online.push((index, device.id));
                    }
                    None => {}
                }
            }
        }
        if let Some(wanted) = wanted {
            return Err(NoDevice::NotFound {
                wanted: wanted.to_owned(),
                error: first_error,
            });
        }
        match online.len() {
            1 => Ok(online.remove(0)),
            0 => Err(NoDevice::None(first_error)),
            _ => Err(NoDevice::Several(
                online.iter().map(|(_, d)| d.to_string()).collect(),
            )),
        }
    }

    /// Finds the phone (the one named, or the only one connected within the task's phones), its
    /// driver, and what the driver knows of the app.
    pub(crate) async fn resolve(
        &self,
        device: Option<&str>,
        app: &AppId,
        args: &StepArgs,
    ) -> Result<Target, Box<LogsResponse>> {
        let (driver_index, device) = self.find_device(device, false).await.map_err(|none| {
            let (status, message) = none.for_logs();
            Box::new(self.failed(args, None, app.as_str(), status, message))
        })?;
        match self.driver(driver_index).app_info(&device, app).await {
            Ok(info) => Ok(Target::new(driver_index, device, info)),
            Err(error) => {
                let (status, message) = driver_error_status(&error, app, &device);
                Err(Box::new(self.failed(
                    args,
                    Some(&device),
                    app.as_str(),
                    status,
                    message,
                )))
            }
        }
    }
}
