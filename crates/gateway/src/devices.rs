//! Finding the phone a call is about, and what its driver says of the app: one lookup for
//! `phone_logs` and the debugging aids, whose callers only word the failure their own way.
//!
//! Naming is decided here, once: a driver may say where its phones come from
//! ([`AppLogger::source`]: an adb server's `host:port`, a usbmuxd address) and whether that is
//! the local default ([`AppLogger::source_is_default`]: the local adb server adb's own settings name,
//! `ANDROID_ADB_SERVER_PORT` / `ADB_SERVER_SOCKET` or this machine's port 5037; the platform's
//! usbmuxd socket). The local default's phones keep their bare serials, as `adb devices` shows
//! them, whatever other sources are configured; every other source's phone is named
//! `host:port/serial`, always, not only when two sources show the same serial. So a name means
//! one phone whichever servers are configured and whichever are up: an approval or an
//! Always-allow rule given for the local `emulator-5554` never covers a farm's
//! `farm:5037/emulator-5554`, nor one farm's phone its namesake on another while the first is
//! down. (Two sources that both claim to be the default are both named with their source.)
//!
//! A bare serial (in a call, or in a task's list of phones) is taken for a qualified phone
//! only when it is known to be unique: exactly one source shows it **and no source of that
//! platform failed to list its phones** (a server that is down might have it too); else it is
//! an error that lists each name it could mean. A listed id that holds a `/` (a hostile USB
//! device could choose one) is dropped, so no phone can take another's qualified name; two
//! configured sources that are one server (`localhost:5037` and `127.0.0.1:5037`) are read
//! once, with a warning.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use phonelogs_driver::{
    AppId, AppLogger, DeviceId, DeviceInfo, DeviceState, Error, Platform, Result as DriverResult,
};

use crate::Gateway;
use crate::catalog;
use crate::error::Error as GatewayError;
use crate::guard::GuardedLogger;
use crate::session::{Session, Target, driver_error_status};
use crate::types::{LogsResponse, Status, StepArgs};

/// A phone as the gateway names it: the name every call takes and the history, approvals and
/// rules record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedDevice {
    /// What its driver says of it, with `id` set to its name: the bare serial or UDID, or
    /// `source/serial` when its platform has several sources.
    pub info: DeviceInfo,
    /// Where it comes from (an adb server's `host:port`, a usbmuxd address), when its driver
    /// says.
    pub source: Option<String>,
    /// Its own id there: the serial or UDID.
    pub serial: DeviceId,
    /// The index of its driver.
    pub(crate) driver: usize,
}

/// A source that could not list its phones: only its own phones are missing from the list.
#[derive(Debug)]
pub struct SourceFailure {
    /// The driver's platform.
    pub platform: Platform,
    /// Where it reaches its phones, when it says.
    pub source: Option<String>,
    /// Why the listing failed (e.g. the adb server at that address is not running).
    pub error: Error,
    /// Whether the driver serves the debugging aids.
    pub(crate) debugger: bool,
    /// The source its phones' names start with, when they are qualified.
    pub(crate) prefix: Option<String>,
}

impl SourceFailure {
    /// The name a phone with `serial` would have on this source.
    fn name_for(&self, serial: &str) -> String {
        match &self.prefix {
            Some(prefix) => DeviceId::qualified(prefix, serial).to_string(),
            None => serial.to_owned(),
        }
    }
}

/// Every driver's phones, named, and the sources that failed.
#[derive(Debug, Default)]
pub struct DeviceList {
    /// The phones of every source that answered.
    pub devices: Vec<NamedDevice>,
    /// The sources that did not.
    pub failures: Vec<SourceFailure>,
    /// How many sources answered (with phones or none).
    pub answered: usize,
    /// The addresses of the sources that answered, for those that name one.
    pub answered_sources: Vec<String>,
}

impl DeviceList {
    /// The phone `wanted` names: its name; `source/serial` (even where names are bare); or a
    /// bare serial known to be unique ([`DeviceList::unique_serial`]). `Err` with the names of
    /// every phone a bare serial could mean (those listed, and what it would be called on each
    /// source of its platform that failed), when it is not known to be unique; `Ok(None)` when
    /// no listed phone has it.
    fn find(&self, wanted: &str) -> Result<Option<&NamedDevice>, Vec<String>> {
        let named: Vec<&NamedDevice> = self
            .devices
            .iter()
            .filter(|d| d.info.id.as_str() == wanted)
            .collect();
        match named.as_slice() {
            [] => {}
            [one] => return Ok(Some(one)),
            // Two platforms' phones under one bare id (a USB device can choose its serial).
            several => return Err(several.iter().map(|d| d.info.id.to_string()).collect()),
        }
        if let Some(device) = self.devices.iter().find(|d| qualified(d) == wanted) {
            return Ok(Some(device));
        }
        let same: Vec<&NamedDevice> = self
            .devices
            .iter()
            .filter(|d| d.serial.as_str() == wanted)
            .collect();
        match same.as_slice() {
            [] => Ok(None),
            [one] if self.unique_serial(one) => Ok(Some(one)),
            several => {
                let mut names: Vec<String> =
                    several.iter().map(|d| d.info.id.to_string()).collect();
                for failure in &self.failures {
                    let name = failure.name_for(wanted);
                    if several.iter().any(|d| d.info.platform == failure.platform)
                        && !names.contains(&name)
                    {
                        names.push(name);
                    }
                }
                Err(names)
            }
        }
    }

    /// Whether `device`'s bare serial names it alone: no other listed phone has it and no
    /// source of its platform failed to list its phones (one that is down might have it).
    fn unique_serial(&self, device: &NamedDevice) -> bool {
        let platform = device.info.platform;
        self.devices
            .iter()
            .filter(|d| d.serial == device.serial)
            .count()
            == 1
            && self.failures.iter().all(|f| f.platform != platform)
    }

    /// Of the phones `names` could mean, the one the task's list (`allowed`) names, when it
    /// names exactly one of them and that one is listed: a name of a phone whose source failed
    /// to list it counts too, so a server that is down cannot hand its task phone's reads to
    /// another server's namesake.
    fn only_one_in_task(&self, names: &[String], allowed: &[DeviceId]) -> Option<&NamedDevice> {
        let listed = |name: &String| self.devices.iter().find(|d| d.info.id.as_str() == name);
        let mut mine = names.iter().filter(|name| match listed(name) {
            Some(device) => allowed.iter().any(|e| self.entry_names(e, device)),
            None => allowed.iter().any(|e| e.as_str() == name.as_str()),
        });
        match (mine.next(), mine.next()) {
            (Some(one), None) => listed(one),
            _ => None,
        }
    }

    /// Whether the task's list entry `entry` names `device`: its name, its qualified name, or
    /// its bare serial when that is known to be unique ([`DeviceList::unique_serial`]).
    fn entry_names(&self, entry: &DeviceId, device: &NamedDevice) -> bool {
        let entry = entry.as_str();
        entry == device.info.id.as_str()
            || entry == qualified(device)
            || (entry == device.serial.as_str() && self.unique_serial(device))
    }

    /// The errors to show for a phone that was not found (`wanted`; empty when no phone was
    /// named and none of the task's, `allowed`, is online): the failure of the source its name
    /// points at; nothing when that source answered (another source's failure is not why it is
    /// missing); else the failure of every source that could have had it (a bare serial says
    /// nothing of its platform, so an adb server down and an unreachable usbmuxd are both
    /// named). With `debugging`, only sources with a debugger count.
    fn failures_for(
        &mut self,
        wanted: &str,
        debugging: bool,
        allowed: Option<&[DeviceId]>,
    ) -> Vec<Error> {
        let points_at = |source: &str, name: &str| source_of_name(name) == Some(source);
        let pointed = self.failures.iter().position(|f| {
            f.source
                .as_deref()
                .is_some_and(|source| points_at(source, wanted))
        });
        if let Some(index) = pointed {
            let failure = self.failures.swap_remove(index);
            // A debugging aid cannot reach that source's phones whether it is up or not.
            return if debugging && !failure.debugger {
                Vec::new()
            } else {
                vec![failure.error]
            };
        }
        if self.answered_sources.iter().any(|s| points_at(s, wanted)) {
            return Vec::new();
        }
        // No phone named: only the sources that could hold one of the task's phones.
        let could_hold = |failure: &SourceFailure| {
            !wanted.is_empty()
                || allowed.is_none_or(|entries| {
                    entries.iter().any(|entry| {
                        !entry.as_str().contains('/')
                            || failure
                                .source
                                .as_deref()
                                .is_some_and(|source| points_at(source, entry.as_str()))
                    })
                })
        };
        std::mem::take(&mut self.failures)
            .into_iter()
            .filter(|f| (!debugging || f.debugger) && could_hold(f))
            .map(|f| f.error)
            .collect()
    }
}

/// The phone `wanted` names in `list` (or the only online one among the task's, `allowed`), and
/// the index of its driver; see [`Session::find_device`].
fn choose(
    mut list: DeviceList,
    wanted: Option<&str>,
    allowed: Option<&[DeviceId]>,
    debugging: bool,
) -> Result<(usize, DeviceId), NoDevice> {
    let in_task = |list: &DeviceList, device: &NamedDevice| {
        allowed.is_none_or(|allowed| allowed.iter().any(|e| list.entry_names(e, device)))
    };
    if let Some(wanted) = wanted {
        return match list.find(wanted) {
            Ok(Some(device)) if in_task(&list, device) => {
                Ok((device.driver, device.info.id.clone()))
            }
            Ok(Some(_)) => Err(NoDevice::OutsideTask(wanted.to_owned())),
            Err(names) => {
                // A bare serial that several sources might show means the one the task has.
                match allowed.and_then(|allowed| list.only_one_in_task(&names, allowed)) {
                    Some(one) => Ok((one.driver, one.info.id.clone())),
                    None => Err(NoDevice::Ambiguous(names)),
                }
            }
            Ok(None) => Err(NoDevice::NotFound {
                wanted: wanted.to_owned(),
                errors: list.failures_for(wanted, debugging, allowed),
            }),
        };
    }
    let mut online: Vec<(usize, DeviceId)> = list
        .devices
        .iter()
        .filter(|d| d.info.state == DeviceState::Online && in_task(&list, d))
        .map(|d| (d.driver, d.info.id.clone()))
        .collect();
    match online.len() {
        1 => Ok(online.remove(0)),
        0 => Err(NoDevice::None(list.failures_for("", debugging, allowed))),
        _ => Err(NoDevice::Several(
            online.iter().map(|(_, d)| d.to_string()).collect(),
        )),
    }
}

/// The one source to ask for the phone `wanted` names: the source of a qualified name, when
/// the task has no list of phones or its list names the phone by that very name (see
/// [`Session::find_device`]).
fn pointed_source<'a>(wanted: &'a str, allowed: Option<&[DeviceId]>) -> Option<&'a str> {
    source_of_name(wanted)
        .filter(|_| allowed.is_none_or(|allowed| allowed.iter().any(|d| d.as_str() == wanted)))
}

/// `source/serial`, or the serial of a phone whose driver names no source.
fn qualified(device: &NamedDevice) -> String {
    match &device.source {
        Some(source) => DeviceId::qualified(source, device.serial.as_str()).to_string(),
        None => device.serial.to_string(),
    }
}

/// The last part of a name: the serial of `source/serial`, or the name itself.
fn bare(name: &str) -> &str {
    name.rsplit_once('/').map_or(name, |(_, serial)| serial)
}

/// The source a qualified name points at: all before its last `/` (a serial or UDID never
/// holds one; a usbmuxd socket path does, `/var/run/usbmuxd/UDID`); `None` for a bare name.
fn source_of_name(name: &str) -> Option<&str> {
    name.rsplit_once('/').map(|(source, _)| source)
}

/// How one driver's phones are named.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Naming {
    /// By their bare ids: the driver has no source, or it is its platform's only one and the
    /// local default.
    Bare,
    /// `source/serial`.
    Qualified(String),
    /// Not at all: the driver reaches the same server as an earlier one, and is not read.
    Duplicate,
}

/// What a driver says of where its phones come from.
#[derive(Debug, Clone)]
struct SourceOf {
    platform: Platform,
    source: Option<String>,
    default: bool,
    debugger: bool,
}

impl SourceOf {
    fn of(driver: &GuardedLogger) -> SourceOf {
        SourceOf {
            platform: driver.capabilities().platform,
            source: driver.inner().source(),
            default: driver.inner().source_is_default(),
            debugger: driver.capabilities().debugger,
        }
    }

    /// Whether `self` and `other` are one server: the same platform and address, or both the
    /// local default (`localhost:5037` and `127.0.0.1:5037`). A driver without a source is
    /// nobody's duplicate.
    fn same_server(&self, other: &SourceOf) -> bool {
        self.platform == other.platform
            && self.source.is_some()
            && other.source.is_some()
            && (self.source == other.source || (self.default && other.default))
    }
}

/// For each driver, how its phones are named (see the module docs): with its source unless it
/// is the local default and its platform's only source; a second driver for the same server is
/// left out.
fn namings(sources: &[SourceOf]) -> Vec<Naming> {
    let duplicate: Vec<bool> = sources
        .iter()
        .enumerate()
        .map(|(index, source)| sources[..index].iter().any(|s| s.same_server(source)))
        .collect();
    sources
        .iter()
        .zip(&duplicate)
        .map(|(this, repeats)| {
            let Some(source) = &this.source else {
                return Naming::Bare;
            };
            if *repeats {
                return Naming::Duplicate;
            }
            let several = sources
                .iter()
                .zip(&duplicate)
                .filter(|(s, dup)| s.platform == this.platform && s.source.is_some() && !**dup)
                .count()
                > 1;
            // The local default's phones keep the bare serials `adb devices` shows, beside any
            // other server's (always `source/serial`); several defaults (two usbmuxd sockets
            // that both claim it) are told apart by their sources.
            let several_defaults = several
                && sources
                    .iter()
                    .zip(&duplicate)
                    .filter(|(s, dup)| s.platform == this.platform && s.default && !**dup)
                    .count()
                    > 1;
            if this.default && !several_defaults {
                Naming::Bare
            } else {
                Naming::Qualified(source.clone())
            }
        })
        .collect()
}

/// Warns, once per process and address, that a configured source repeats an earlier one.
fn warn_duplicate(source: &SourceOf) {
    static WARNED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let address = source.source.clone().unwrap_or_default();
    let mut warned = WARNED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !warned.contains(&address) {
        tracing::warn!(
            source = %address,
            "two configured sources are the same server; its phones are read once"
        );
        warned.push(address);
    }
}

/// The longest serial a phone or farm may list (bytes). adb's are far shorter: a USB serial, an
/// emulator's `emulator-5554`, a network phone's `host:port`, a wireless-debugging mDNS name of
/// about 60; an iPhone's UDID is 40 or 25.
pub(crate) const MAX_SERIAL_BYTES: usize = 128;

/// Whether a serial a phone or farm lists may be used: it goes into the person's questions and
/// the history, so it is short and holds nothing that could make them read as something else
/// (`lines::misleads`), nor the `/` that qualifies a farm's phones.
fn plain_serial(serial: &str) -> bool {
    serial.len() <= MAX_SERIAL_BYTES
        && !serial.contains(|c| c == '/' || phonelogs_view::lines::misleads(c))
}

/// The phones one source listed, named by `naming`; an id [`plain_serial`] refuses is dropped
/// (with a warning): a serial or UDID never holds a `/` (such an id could pass for another
/// phone's qualified name) nor a line end or mark, nor is that long. A phone's model and state
/// are shown on one line ([`phonelogs_view::lines::one_line`]).
fn named(
    devices: Vec<DeviceInfo>,
    naming: &Naming,
    source: &Option<String>,
    driver: usize,
) -> Vec<NamedDevice> {
    devices
        .into_iter()
        .filter(|info| {
            let plain = plain_serial(info.id.as_str());
            if !plain {
                tracing::warn!(id = ?info.id, source = ?source, "a listed device id is longer than {MAX_SERIAL_BYTES} bytes or holds a '/', a control, a line end or an invisible or bidirectional mark; left out");
            }
            plain
        })
        .map(|mut info| {
            info.model = info.model.map(|m| phonelogs_view::lines::one_line(&m).into_owned());
            if let DeviceState::Other(state) = &mut info.state {
                *state = phonelogs_view::lines::one_line(state).into_owned();
            }
            let serial = info.id.clone();
            if let Naming::Qualified(prefix) = naming {
                info.id = DeviceId::qualified(prefix, serial.as_str());
            }
            NamedDevice {
                info,
                source: source.clone(),
                serial,
                driver,
            }
        })
        .collect()
}

/// The list that the drivers' listings (`results`, by driver index) make, named by `namings`.
fn list_from(
    sources: &[SourceOf],
    namings: &[Naming],
    results: impl Iterator<Item = (usize, DriverResult<Vec<DeviceInfo>>)>,
) -> DeviceList {
    let mut list = DeviceList::default();
    for (index, result) in results {
        let source = sources[index].source.clone();
        match result {
            Ok(devices) => {
                note_listing(&sources[index], None);
                list.answered += 1;
                list.answered_sources.extend(source.clone());
                let devices = named(devices, &namings[index], &source, index);
                list.devices.extend(devices);
            }
            Err(error) => {
                note_listing(&sources[index], Some(&error));
                list.failures.push(SourceFailure {
                    platform: sources[index].platform,
                    source,
                    error,
                    debugger: sources[index].debugger,
                    prefix: match &namings[index] {
                        Naming::Qualified(prefix) => Some(prefix.clone()),
                        _ => None,
                    },
                });
            }
        }
    }
    list
}

/// Says when a source stops listing its phones (a warning, once until it answers again) and
/// when it answers again, rather than a warning on every call while it is down (an iPhone
/// service that is not installed would otherwise warn on each of an Android phone's calls).
fn note_listing(source: &SourceOf, error: Option<&Error>) {
    static FAILING: std::sync::Mutex<Vec<(Platform, Option<String>)>> =
        std::sync::Mutex::new(Vec::new());
    let key = (source.platform, source.source.clone());
    let mut failing = FAILING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let known = failing.iter().position(|k| *k == key);
    match (error, known) {
        (Some(error), None) => {
            tracing::warn!(%error, source = ?key.1, "a driver could not list its devices");
            failing.push(key);
        }
        (Some(error), Some(_)) => {
            tracing::debug!(%error, source = ?key.1, "a driver still cannot list its devices");
        }
        (None, Some(at)) => {
            tracing::info!(source = ?key.1, "a driver lists its devices again");
            failing.swap_remove(at);
        }
        (None, None) => {}
    }
}

/// One driver's listing of its phones, in flight.
type Listing<'a> = Pin<Box<dyn Future<Output = DriverResult<Vec<DeviceInfo>>> + Send + 'a>>;

/// Awaits every listing at once, so a source that answers slowly (a remote server that is
/// down waits out its connect timeout) does not delay the others. Hand-written because the
/// gateway depends on no futures crate for this one join.
async fn join_all(mut calls: Vec<Listing<'_>>) -> Vec<DriverResult<Vec<DeviceInfo>>> {
    let mut results: Vec<Option<DriverResult<Vec<DeviceInfo>>>> =
        calls.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (call, slot) in calls.iter_mut().zip(results.iter_mut()) {
            if slot.is_none() {
                match call.as_mut().poll(cx) {
                    Poll::Ready(result) => *slot = Some(result),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    results.into_iter().flatten().collect()
}

impl Gateway {
    /// Every driver's phones, named (see the module docs), with the sources that could not
    /// list theirs.
    pub async fn device_list(&self) -> DeviceList {
        self.listing(None).await
    }

    /// The phones of the sources whose address is `only` (every source when `None`, or when
    /// no source has that address), named as in the whole list.
    async fn listing(&self, only: Option<&str>) -> DeviceList {
        let drivers = &self.inner.drivers;
        let sources: Vec<SourceOf> = drivers.iter().map(SourceOf::of).collect();
        let namings = namings(&sources);
        let read: Vec<(usize, &GuardedLogger)> = to_read(&sources, &namings, only)
            .into_iter()
            .map(|index| (index, &drivers[index]))
            .collect();
        let calls = read
            .iter()
            .map(|(_, driver)| Box::pin(driver.devices()) as Listing<'_>)
            .collect();
        let results = join_all(calls).await;
        let indices = read.iter().map(|(index, _)| *index);
        list_from(&sources, &namings, indices.zip(results))
    }

    /// Every driver's devices, named as calls take them. A driver that fails is left out (with
    /// a warning) unless every driver fails, when the first error is returned.
    pub async fn devices(&self) -> Result<Vec<DeviceInfo>, GatewayError> {
        devices_or_error(self.device_list().await, |_| true)
    }
}

/// The drivers to ask for their phones: every one but a repeat of an earlier server (warned
/// of), and of those only the ones whose address is `only`, when some is.
fn to_read(sources: &[SourceOf], namings: &[Naming], only: Option<&str>) -> Vec<usize> {
    let read: Vec<usize> = (0..sources.len())
        .filter(|index| {
            let duplicate = namings[*index] == Naming::Duplicate;
            if duplicate {
                warn_duplicate(&sources[*index]);
            }
            !duplicate
        })
        .collect();
    let only: Vec<usize> = read
        .iter()
        .copied()
        .filter(|index| only.is_some_and(|only| sources[*index].source.as_deref() == Some(only)))
        .collect();
    if only.is_empty() { read } else { only }
}

/// The devices of `list` that `keep` keeps, or the first failure when no source answered.
fn devices_or_error(
    mut list: DeviceList,
    keep: impl Fn(&NamedDevice) -> bool,
) -> Result<Vec<DeviceInfo>, GatewayError> {
    if list.answered == 0 && !list.failures.is_empty() {
        return Err(GatewayError::Driver(list.failures.swap_remove(0).error));
    }
    Ok(list
        .devices
        .into_iter()
        .filter(|d| keep(d))
        .map(|d| d.info)
        .collect())
}

/// Why no phone could be chosen.
#[derive(Debug)]
pub(crate) enum NoDevice {
    /// The phone named is not among the task's phones.
    OutsideTask(String),
    /// The phone named is not connected; `errors` are the failures of sources that could have
    /// listed it.
    NotFound {
        /// The id asked for.
        wanted: String,
        /// The failure of the source the name points at, else the listing failure of every
        /// driver that could have had it.
        errors: Vec<Error>,
    },
    /// A bare serial that several sources show: the names of each phone it could mean.
    Ambiguous(Vec<String>),
    /// No phone was named and none is online (`errors` as above).
    None(Vec<Error>),
    /// No phone was named and several are online.
    Several(Vec<String>),
}

impl NoDevice {
    /// The `phone_logs` status and message.
    pub(crate) fn for_logs(&self) -> (Status, String) {
        let with = |text: String, errors: &[Error]| {
            if errors.is_empty() {
                return text;
            }
            let errors: Vec<String> = errors.iter().map(Error::to_string).collect();
            format!("{text} ({})", errors.join("; "))
        };
        match self {
            NoDevice::OutsideTask(wanted) => {
                (Status::ScopeDenied, catalog::device_outside_task(wanted))
            }
            NoDevice::NotFound { wanted, errors } => {
                (Status::Error, with(catalog::no_such_device(wanted), errors))
            }
            NoDevice::None(errors) => (Status::Error, with(catalog::no_device(), errors)),
            NoDevice::Several(ids) => (Status::Error, catalog::several_devices(ids)),
            NoDevice::Ambiguous(names) => (Status::Error, catalog::ambiguous_device(names)),
        }
    }
}

impl Session {
    /// The task's phones, named as calls take them: every phone when the task names none. A
    /// source that fails is left out (with a warning) unless every source fails, when the
    /// first error is returned.
    pub async fn devices(&self) -> Result<Vec<DeviceInfo>, GatewayError> {
        let list = self.gateway().device_list().await;
        let allowed = self.spec().devices.clone();
        let names: Vec<(String, bool)> = list
            .devices
            .iter()
            .map(|device| {
                let kept = allowed
                    .as_deref()
                    .is_none_or(|allowed| allowed.iter().any(|e| list.entry_names(e, device)));
                (device.info.id.to_string(), kept)
            })
            .collect();
        devices_or_error(list, |device| {
            names
                .iter()
                .any(|(name, kept)| *kept && name == device.info.id.as_str())
        })
    }

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
        // Decided before any device call when it can be: no entry of the task's list names
        // this phone by any of its names.
        if let (Some(wanted), Some(allowed)) = (wanted, allowed)
            && !allowed
                .iter()
                .any(|d| d.as_str() == wanted || bare(d.as_str()) == bare(wanted))
        {
            return Err(NoDevice::OutsideTask(wanted.to_owned()));
        }
        // A qualified name points at one source: only that source is asked, so a call to one
        // farm's phone neither waits for another farm that is down (its connect timeout) nor
        // costs a listing on every other source. What the whole list would decide is decided
        // the same from that source's part of it (`find` matches a qualified name only on its
        // source; `failures_for` names only its failure), except a task list naming the phone
        // by anything but this very name, whose bare entries need every source: then all are
        // asked.
        let list = self
            .gateway()
            .listing(wanted.and_then(|wanted| pointed_source(wanted, allowed)))
            .await;
        choose(list, wanted, allowed, debugging)
    }

    /// Finds the phone (the one named, or the only one connected within the task's phones), its
    /// driver, and what the driver knows of the app: with `held`, what it holds from its last
    /// round trip when its reads confirm that ([`Target::held`], no device call), else (and
    /// when it holds nothing) its `app_info`, read now.
    pub(crate) async fn resolve(
        &self,
        device: Option<&str>,
        app: &AppId,
        args: &StepArgs,
        held: bool,
    ) -> Result<Target, Box<LogsResponse>> {
        let (driver_index, device) = self.find_device(device, false).await.map_err(|none| {
            let (status, message) = none.for_logs();
            Box::new(self.failed(args, None, app.as_str(), status, message))
        })?;
        let driver = self.driver(driver_index);
        if let Some(info) = driver.held_app_info(&device, app).filter(|_| held) {
            let mut target = Target::new(driver_index, device, info);
            target.held = true;
            self.note_build(&target);
            return Ok(target);
        }
        match driver.app_info(&device, app).await {
            Ok(info) => {
                let target = Target::new(driver_index, device, info);
                self.note_build(&target);
                Ok(target)
            }
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::time::Duration;

    use async_trait::async_trait;
    use phonelogs_driver::{
        AppId, AppInfo, AppLogger, Capabilities, CrashReport, DeviceId, DeviceInfo, DeviceState,
        Error, LogQuery, LogResult, Platform, Result,
    };
    use proptest::prelude::*;
    use time::OffsetDateTime;

    use super::{NoDevice, SourceOf, list_from, namings};
    use crate::{Agent, Gateway, Mode, TaskSpec};

    /// One adb server or usbmuxd, as a driver says it: its address, whether it is the local
    /// default, and its phones (`None`: it cannot list them, as a server that is down).
    struct Source {
        platform: Platform,
        source: Option<String>,
        default: bool,
        ids: Mutex<Option<Vec<String>>>,
        listings: AtomicUsize,
        /// Whether a listing hangs (a remote server that is down behind a firewall).
        stalls: AtomicBool,
    }

    impl Source {
        fn new(platform: Platform, source: &str, default: bool, ids: &[&str]) -> Arc<Source> {
            Arc::new(Source {
                platform,
                source: Some(source.to_owned()),
                default,
                ids: Mutex::new(Some(ids.iter().map(|s| (*s).to_owned()).collect())),
                listings: AtomicUsize::new(0),
                stalls: AtomicBool::new(false),
            })
        }

        fn adb(source: &str, ids: &[&str]) -> Arc<Source> {
            Source::new(Platform::Android, source, false, ids)
        }

        fn down(&self) {
            *self.ids.lock().unwrap() = None;
        }
    }

    #[async_trait]
    impl AppLogger for Source {
        fn capabilities(&self) -> Capabilities {
            Capabilities {
                platform: self.platform,
                logs: true,
                crashes: true,
                listener: false,
                debugger: self.platform == Platform::Android,
                log_history: true,
                line_uids: true,
                reports_name_package: true,
            }
        }

        fn source(&self) -> Option<String> {
            self.source.clone()
        }

        fn source_is_default(&self) -> bool {
            self.default
        }

        async fn devices(&self) -> Result<Vec<DeviceInfo>> {
            self.listings.fetch_add(1, Ordering::SeqCst);
            if self.stalls.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_secs(3600)).await;
            }
            let ids = self.ids.lock().unwrap().clone();
            let ids = ids.ok_or_else(|| {
                Error::DeviceUnavailable(format!("{:?} is not running", self.source))
            })?;
            Ok(ids
                .into_iter()
                .map(|id| DeviceInfo {
                    id: DeviceId::new(id),
                    platform: self.platform,
                    model: None,
                    state: DeviceState::Online,
                })
                .collect())
        }

        async fn app_info(&self, _: &DeviceId, app: &AppId) -> Result<AppInfo> {
            Err(Error::NotFound(app.to_string()))
        }

        async fn app_logs(&self, _: &DeviceId, _: &AppId, _: &LogQuery) -> Result<LogResult> {
            Err(Error::Unsupported("logs".into()))
        }

        async fn app_crashes(
            &self,
            _: &DeviceId,
            _: &AppId,
            _: OffsetDateTime,
            _: usize,
        ) -> Result<Vec<CrashReport>> {
            Err(Error::Unsupported("crashes".into()))
        }

        async fn dev_build(&self, _: &DeviceId, _: &AppId) -> Result<bool> {
            Ok(false)
        }
    }

    fn gateway(sources: &[&Arc<Source>]) -> Gateway {
        let mut builder = Gateway::builder();
        for source in sources {
            builder = builder.driver((*source).clone() as Arc<dyn AppLogger>);
        }
        builder.build().unwrap()
    }

    async fn names(gateway: &Gateway) -> Vec<String> {
        let mut names: Vec<String> = gateway
            .device_list()
            .await
            .devices
            .iter()
            .map(|d| d.info.id.to_string())
            .collect();
        names.sort();
        names
    }

    fn task(devices: Option<&[&str]>) -> TaskSpec {
        let mut spec = TaskSpec::new(Agent::new("agent", Mode::Full));
        spec.devices = devices.map(|d| d.iter().map(|id| DeviceId::new(*id)).collect());
        spec
    }

    #[tokio::test]
    async fn a_bare_serial_is_not_unique_while_a_source_of_its_platform_is_down() {
        let a = Source::adb("farm-a:5037", &["emulator-5554"]);
        let b = Source::adb("farm-b:5037", &["emulator-5554"]);
        let ios = Source::new(Platform::Ios, "10.0.0.9:27015", false, &["00008030-AAAA"]);
        let gateway = gateway(&[&a, &b, &ios]);
        a.down();

        // Named in a call: both servers might have it, so neither is picked.
        let session = gateway.start_task(task(None));
        match session.find_device(Some("emulator-5554"), false).await {
            Err(NoDevice::Ambiguous(names)) => assert_eq!(
                names,
                ["farm-b:5037/emulator-5554", "farm-a:5037/emulator-5554"]
            ),
            other => panic!("{other:?}"),
        }
        // In the task's list: B's phone does not become the task's phone.
        let session = gateway.start_task(task(Some(&["emulator-5554"])));
        assert!(matches!(
            session.find_device(None, false).await,
            Err(NoDevice::None(errors)) if !errors.is_empty()
        ));
        assert!(matches!(
            session.find_device(Some("emulator-5554"), false).await,
            Err(NoDevice::Ambiguous(_))
        ));
        assert_eq!(session.devices().await.unwrap(), []);
        // A task that named A's phone is not handed B's for the bare serial either.
        let session = gateway.start_task(task(Some(&[
            "farm-a:5037/emulator-5554",
            "farm-b:5037/emulator-5554",
        ])));
        assert!(matches!(
            session.find_device(Some("emulator-5554"), false).await,
            Err(NoDevice::Ambiguous(_))
        ));

        // Another platform's failure says nothing about an Android serial.
        *a.ids.lock().unwrap() = Some(vec![]);
        ios.down();
        let session = gateway.start_task(task(Some(&["emulator-5554"])));
        let (driver, name) = session.find_device(None, false).await.unwrap();
        assert_eq!((driver, name.as_str()), (1, "farm-b:5037/emulator-5554"));
    }

    #[tokio::test]
    async fn a_phone_not_found_names_every_source_that_could_have_had_it() {
        let adb = Source::adb("farm-a:5037", &["emulator-5554"]);
        let ios = Source::new(Platform::Ios, "10.0.0.9:27015", false, &["00008030-AAAA"]);
        let other = Source::adb("farm-b:5037", &["emulator-5556"]);
        let gateway = gateway(&[&adb, &ios, &other]);
        adb.down();
        ios.down();
        let session = gateway.start_task(task(None));
        // A bare serial says nothing of its platform: both failures are named, in order.
        // What `phone_logs` says of a phone that is not found.
        let not_found = async |name: &str| match session.find_device(Some(name), false).await {
            Err(none @ NoDevice::NotFound { .. }) => none.for_logs().1,
            other => panic!("{other:?}"),
        };
        let message = not_found("127.0.0.1:40001").await;
        let (at_adb, at_ios) = (
            message.find("\"farm-a:5037\") is not running"),
            message.find("\"10.0.0.9:27015\") is not running"),
        );
        assert!(
            at_adb.is_some() && at_ios.is_some() && at_adb < at_ios,
            "{message}"
        );
        // A name that points at its source names that source's failure alone.
        let message = not_found("10.0.0.9:27015/00008030-AAAA").await;
        assert!(
            message.contains("10.0.0.9:27015") && !message.contains("farm-a"),
            "{message}"
        );
        // A name whose source answered but does not list it borrows no other source's failure.
        let message = not_found("farm-b:5037/emulator-5558").await;
        assert_eq!(
            message,
            crate::catalog::no_such_device("farm-b:5037/emulator-5558"),
        );
        // A debugging aid on an iPhone's name: its usbmuxd being down is not the reason.
        let Err(NoDevice::NotFound { errors, .. }) = session
            .find_device(Some("10.0.0.9:27015/00008030-AAAA"), true)
            .await
        else {
            panic!("not found");
        };
        assert!(errors.is_empty(), "{errors:?}");
        // No phone named, none of the task's online: only the sources that could hold one of
        // the task's phones are named, not every farm that is down.
        let limited = gateway.start_task(task(Some(&["farm-a:5037/emulator-5554"])));
        let Err(NoDevice::None(errors)) = limited.find_device(None, false).await else {
            panic!("a phone was found");
        };
        let errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            errors,
            ["device unavailable: Some(\"farm-a:5037\") is not running"]
        );
        // A debugging aid reaches adb servers only: the iPhone's failure is not its concern.
        let Err(NoDevice::NotFound { errors, .. }) =
            session.find_device(Some("127.0.0.1:40001"), true).await
        else {
            panic!("not found");
        };
        let errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            errors,
            ["device unavailable: Some(\"farm-a:5037\") is not running"]
        );
    }

    #[tokio::test]
    async fn only_the_local_defaults_phones_keep_bare_names_even_beside_farms() {
        let local = Source::new(
            Platform::Android,
            "127.0.0.1:5037",
            true,
            &["emulator-5554"],
        );
        let usb = Source::new(Platform::Ios, "/var/run/usbmuxd", true, &["00008030-AAAA"]);
        assert_eq!(
            names(&gateway(&[&local, &usb])).await,
            ["00008030-AAAA", "emulator-5554"]
        );
        // One farm server alone: its phones carry its name, so a rule for the local
        // `emulator-5554` cannot cover them.
        let farm = Source::adb("farm:5037", &["emulator-5554"]);
        let remote = Source::new(Platform::Ios, "10.0.0.9:27015", false, &["00008030-AAAA"]);
        assert_eq!(
            names(&gateway(&[&farm, &remote])).await,
            ["10.0.0.9:27015/00008030-AAAA", "farm:5037/emulator-5554"]
        );
        // The local default beside a farm: its phones keep the bare serials `adb devices`
        // shows; the farm's carry the farm's name, so neither covers the other.
        let both = gateway(&[&local, &farm, &usb]);
        assert_eq!(
            names(&both).await,
            ["00008030-AAAA", "emulator-5554", "farm:5037/emulator-5554"]
        );
        let session = both.start_task(task(None));
        for wanted in ["emulator-5554", "127.0.0.1:5037/emulator-5554"] {
            let (_, name) = session.find_device(Some(wanted), false).await.unwrap();
            assert_eq!(name.as_str(), "emulator-5554", "{wanted}");
        }
        let (_, name) = session
            .find_device(Some("farm:5037/emulator-5554"), false)
            .await
            .unwrap();
        assert_eq!(name.as_str(), "farm:5037/emulator-5554");
        // A bare serial still finds the one farm phone, under its qualified name.
        let gateway = gateway(&[&farm]);
        let session = gateway.start_task(task(None));
        let (_, name) = session
            .find_device(Some("emulator-5554"), false)
            .await
            .unwrap();
        assert_eq!(name.as_str(), "farm:5037/emulator-5554");
    }

    #[tokio::test]
    async fn a_listed_id_holding_a_slash_is_dropped() {
        // A hostile USB device on the local server calls itself by the remote iPhone's name.
        let local = Source::new(
            Platform::Android,
            "127.0.0.1:5037",
            true,
            &["10.0.0.9:27015/00008030-AAAA", "emulator-5554"],
        );
        let remote = Source::new(Platform::Ios, "10.0.0.9:27015", false, &["00008030-AAAA"]);
        let gateway = gateway(&[&local, &remote]);
        assert_eq!(
            names(&gateway).await,
            ["10.0.0.9:27015/00008030-AAAA", "emulator-5554"]
        );
        let session = gateway.start_task(task(None));
        let (driver, _) = session
            .find_device(Some("10.0.0.9:27015/00008030-AAAA"), false)
            .await
            .unwrap();
        assert_eq!(driver, 1, "the hostile phone was taken for the iPhone");
    }

    /// A serial is named in the person's question ("… on {phone}?") and kept in the history:
    /// one a hostile phone or farm lists with a mark that turns text around, a line end, or
    /// any length is left out, so no call can reach it (found by the review of h28a).
    #[tokio::test]
    async fn a_listed_serial_that_is_too_long_or_holds_a_misleading_mark_is_dropped() {
        let long = "x".repeat(super::MAX_SERIAL_BYTES + 1);
        let fit = "y".repeat(super::MAX_SERIAL_BYTES);
        let local = Source::new(
            Platform::Android,
            "127.0.0.1:5037",
            true,
            &[
                "emulator-5554",
                "emu\u{202e}4555-rotalume",
                "emu\u{2028}Allow always",
                "emu\u{200b}5554",
                "emu\u{1b}[2J",
                &long,
                &fit,
            ],
        );
        let gateway = gateway(&[&local]);
        assert_eq!(names(&gateway).await, ["emulator-5554", fit.as_str()]);
        let session = gateway.start_task(task(None));
        for hidden in ["emu\u{202e}4555-rotalume", long.as_str()] {
            assert!(session.find_device(Some(hidden), false).await.is_err());
        }
    }

    #[tokio::test]
    async fn one_server_configured_twice_is_read_once() {
        let first = Source::new(
            Platform::Android,
            "localhost:5037",
            true,
            &["emulator-5554"],
        );
        let again = Source::new(
            Platform::Android,
            "127.0.0.1:5037",
            true,
            &["emulator-5554"],
        );
        let farm = Source::adb("farm:5037", &["R58M"]);
        let farm_again = Source::adb("farm:5037", &["R58M"]);
        let gateway = gateway(&[&first, &again]);
        assert_eq!(names(&gateway).await, ["emulator-5554"]);
        assert_eq!(again.listings.load(Ordering::SeqCst), 0);
        let gateway = self::gateway(&[&farm, &farm_again]);
        assert_eq!(names(&gateway).await, ["farm:5037/R58M"]);
        assert_eq!(farm_again.listings.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn a_qualified_name_asks_its_source_alone_and_waits_for_no_other() {
        let a = Source::adb("farm-a:5037", &["emulator-5554"]);
        let b = Source::adb("farm-b:5037", &["emulator-5554"]);
        let ios = Source::new(Platform::Ios, "10.0.0.9:27015", false, &["00008030-AAAA"]);
        let gateway = gateway(&[&a, &b, &ios]);
        b.stalls.store(true, Ordering::SeqCst);
        let session = gateway.start_task(task(None));
        let found = tokio::time::timeout(
            Duration::from_secs(5),
            session.find_device(Some("farm-a:5037/emulator-5554"), false),
        )
        .await
        .expect("a call to farm A's phone waited for farm B");
        assert_eq!(
            found.unwrap(),
            (0, DeviceId::new("farm-a:5037/emulator-5554"))
        );
        let asked = |s: &Source| s.listings.load(Ordering::SeqCst);
        assert_eq!((asked(&a), asked(&b), asked(&ios)), (1, 0, 0));
        // A task whose list names the phone by its bare serial needs every source to know it
        // is unique: all are asked (and B, hanging, is waited for up to the guard's timeout).
        b.stalls.store(false, Ordering::SeqCst);
        let by_serial = gateway.start_task(task(Some(&["emulator-5554"])));
        let _ = by_serial
            .find_device(Some("farm-a:5037/emulator-5554"), false)
            .await;
        assert_eq!((asked(&a), asked(&b), asked(&ios)), (2, 1, 1));
    }

    /// A configured source: platform, address (from a small set, so that some repeat), whether
    /// it is the local default, whether it is up, and its serials.
    fn sources() -> impl Strategy<Value = Vec<(bool, u8, bool, bool, Vec<u8>)>> {
        prop::collection::vec(
            (
                any::<bool>(),
                0u8..4,
                any::<bool>(),
                any::<bool>(),
                prop::collection::vec(0u8..4, 0..3),
            ),
            1..5,
        )
    }

    fn build(
        config: &[(bool, u8, bool, bool, Vec<u8>)],
        all_up: bool,
    ) -> (Vec<SourceOf>, super::DeviceList) {
        build_asking(config, all_up, None)
    }

    /// As [`build`], asking only the sources whose address is `only` (as a call naming a phone
    /// `only/serial` does).
    fn build_asking(
        config: &[(bool, u8, bool, bool, Vec<u8>)],
        all_up: bool,
        only: Option<&str>,
    ) -> (Vec<SourceOf>, super::DeviceList) {
        let sources: Vec<SourceOf> = config
            .iter()
            .map(|(ios, address, default, _, _)| SourceOf {
                platform: if *ios {
                    Platform::Ios
                } else {
                    Platform::Android
                },
                // Address 0 is the local default; the others are farm servers.
                source: Some(if *address == 0 {
                    "127.0.0.1:5037".to_owned()
                } else {
                    format!("farm-{address}:5037")
                }),
                default: *default && *address == 0,
                debugger: !*ios,
            })
            .collect();
        let namings = namings(&sources);
        let read = super::to_read(&sources, &namings, only);
        let results = config
            .iter()
            .enumerate()
            .filter(|(index, _)| read.contains(index))
            .map(|(index, (ios, address, _, up, serials))| {
                let result = if *up || all_up {
                    Ok(serials
                        .iter()
                        .map(|s| DeviceInfo {
                            id: DeviceId::new(format!("serial-{s}")),
                            platform: if *ios {
                                Platform::Ios
                            } else {
                                Platform::Android
                            },
                            model: None,
                            state: DeviceState::Online,
                        })
                        .collect())
                } else {
                    // Each source's failure says which it is, so a test comparing what two
                    // lists name sees whose failure is named, not only how many.
                    Err(Error::DeviceUnavailable(format!(
                        "source {index} at {address} down"
                    )))
                };
                (index, result)
            })
            .collect::<Vec<_>>();
        let list = list_from(&sources, &namings, results.into_iter());
        (sources, list)
    }

    proptest! {
        /// Whatever is configured and whatever is down: a phone's name does not depend on
        /// which sources are up; a name from a source that is not the local default carries
        /// it; each name finds its own phone; and a bare serial finds a phone only when exactly
        /// one phone has it and no source of its platform failed.
        #[test]
        fn names_mean_one_phone(config in sources()) {
            let (sources, list) = build(&config, false);
            let (_, everything) = build(&config, true);
            for device in &list.devices {
                prop_assert!(everything.devices.iter().any(|d| d.info.id == device.info.id
                    && d.driver == device.driver && d.serial == device.serial));
                let source = &sources[device.driver];
                if !source.default {
                    let prefix = format!("{}/", source.source.as_deref().unwrap_or_default());
                    prop_assert!(device.info.id.as_str().starts_with(&prefix), "{:?}", device.info.id);
                }
                let namesakes = list.devices.iter().filter(|d| d.info.id == device.info.id).count();
                match list.find(device.info.id.as_str()) {
                    Ok(Some(found)) => {
                        prop_assert_eq!(namesakes, 1);
                        prop_assert_eq!(found.driver, device.driver);
                    }
                    Err(_) => prop_assert!(namesakes > 1),
                    Ok(None) => prop_assert!(false, "{:?} not found", device.info.id),
                }
            }
            for serial in 0u8..4 {
                let serial = format!("serial-{serial}");
                let holders: Vec<_> = list.devices.iter().filter(|d| d.serial.as_str() == serial).collect();
                let found = list.find(&serial);
                if let Ok(Some(device)) = &found
                    && device.info.id.as_str() != serial
                {
                    prop_assert_eq!(holders.len(), 1);
                    prop_assert!(list.failures.iter().all(|f| f.platform != device.info.platform));
                }
                // Several phones have it and it is none's name (a bare-named phone's name wins
                // over another platform's qualified namesake): it finds none of them.
                if holders.len() > 1 && holders.iter().all(|d| d.info.id.as_str() != serial) {
                    prop_assert!(found.is_err());
                }
            }
        }

        /// A call naming a phone `source/serial` asks that source alone, and what it is told
        /// (the phone, or why not and which failure to name) is what asking every source
        /// would have told it: for any set-up, any sources down, a phone listed or not, a
        /// source configured or not, with or without a task list naming the phone.
        #[test]
        fn a_qualified_name_is_decided_by_its_source_alone(
            config in sources(),
            address in 0u8..5,
            serial in 0u8..5,
        ) {
            let source = if address == 0 {
                "127.0.0.1:5037".to_owned()
            } else {
                format!("farm-{address}:5037")
            };
            let wanted = format!("{source}/serial-{serial}");
            // Lists the rule asks one source for, and lists naming the phone otherwise (its
            // bare serial, another source's name for it), for which every source is asked.
            let lists = [
                None,
                Some(vec![DeviceId::new(&wanted)]),
                Some(vec![DeviceId::new(&wanted), DeviceId::new("serial-1")]),
                Some(vec![DeviceId::new(format!("serial-{serial}"))]),
                Some(vec![DeviceId::new(format!("farm-1:5037/serial-{serial}"))]),
            ];
            for allowed in &lists {
                let pointed = super::pointed_source(&wanted, allowed.as_deref());
                if allowed.as_ref().is_none_or(|a| a[0].as_str() == wanted) {
                    prop_assert_eq!(pointed, Some(source.as_str()));
                }
                for debugging in [false, true] {
                    let decide = |only: Option<&str>| {
                        let (_, list) = build_asking(&config, false, only);
                        format!("{:?}", super::choose(list, Some(&wanted), allowed.as_deref(), debugging))
                    };
                    prop_assert_eq!(decide(None), decide(pointed), "{:?}", allowed);
                }
            }
        }
    }
}
