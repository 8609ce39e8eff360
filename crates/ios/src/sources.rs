//! Where the phone's process list comes from, chosen per phone from its `ProductVersion`, and
//! why a source did not answer, in words a person can act on.
//!
//! Three sources, best first:
//!
//! 1. **CoreDevice's app service** (`com.apple.coredevice.appservice`, through the CoreDevice
//!    tunnel and RSD): iOS 17.4 and later, and only while the developer disk image (DDI) is
//!    mounted (pymobiledevice3 #862 and #1744). Paths, so the app's extensions are found too.
//! 2. **instruments' process list** over lockdown (`com.apple.instruments.remoteserver`): iOS 16
//!    and earlier with the DDI; iOS 17 removed it, so it is never tried there. Paths too.
//! 3. **os_trace_relay's `PidList`** over lockdown: every version, no DDI, no tunnel
//!    (pymobiledevice3's `processes ps` uses it for that reason), but process names only.
//!
//! The issue that asked for this (27) lists `PidList` before instruments; here the two sources
//! that give paths come first on every version, because a path is judged before anything of a
//! process is read, while a name shared by two apps (every Flutter app is `Runner`) costs a
//! stream of the other app's process that is opened and then closed unread, and because only
//! a path finds the app's extensions. [`SourcePlan`] keeps the order and the retries: a source
//! that failed is tried again at most every few seconds (so a DDI mounted mid-task is used
//! within seconds), and meanwhile the one that answered is tried first.

use std::fmt;
use std::time::Duration;

use tokio::time::Instant;

/// One process on the phone, as a process list names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessEntry {
    /// The process id.
    pub pid: u32,
    /// Its executable, by path (CoreDevice, instruments) or by name only (os_trace_relay's
    /// `PidList`).
    pub image: ProcessImage,
}

impl ProcessEntry {
    /// A process whose executable's path is known: an absolute path on the phone, e.g.
    /// `/private/var/containers/Bundle/Application/<UUID>/Example.app/Example`, or the
    /// percent-encoded `file://` URL CoreDevice gives (`…/My%20App.app/My%20App`); see
    /// [`crate::follower::path_components`].
    pub fn at(pid: u32, path: impl Into<String>) -> Self {
        ProcessEntry {
            pid,
            image: ProcessImage::Path(path.into()),
        }
    }

    /// A process known by its name only (`PidList`'s `ProcessName`).
    pub fn named(pid: u32, name: impl Into<String>) -> Self {
        ProcessEntry {
            pid,
            image: ProcessImage::Name(name.into()),
        }
    }
}

/// How a process list names a process's executable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcessImage {
    /// The executable's full path or `file://` URL: whether it lies in an app's bundle can be
    /// judged before anything of the process is read.
    Path(String),
    /// The process's name only: two apps' executables may share it (every Flutter app's is
    /// `Runner`), so a stream of such a process passes nothing on until its entries show the
    /// executable's path inside the app's bundle (see [`crate::follower`]).
    Name(String),
}

/// One of the phone's process lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProcessSource {
    /// CoreDevice's app service through the tunnel (17.4 and later, with the DDI).
    CoreDevice,
    /// instruments' `deviceinfo` `runningProcesses` over lockdown (16 and earlier, with the
    /// DDI).
    Instruments,
    /// os_trace_relay's `PidList` over lockdown (every version; names only).
    PidList,
}

impl ProcessSource {
    /// Every source, best first.
    pub const ALL: [ProcessSource; 3] = [
        ProcessSource::CoreDevice,
        ProcessSource::Instruments,
        ProcessSource::PidList,
    ];

    /// The source as people name it.
    pub fn describe(self) -> &'static str {
        match self {
            ProcessSource::CoreDevice => "CoreDevice's process list (through the tunnel)",
            ProcessSource::Instruments => "instruments' process list",
            ProcessSource::PidList => "os_trace_relay's PidList (process names only)",
        }
    }

    /// Whether the source gives each executable's path (else its name only).
    pub fn knows_paths(self) -> bool {
        !matches!(self, ProcessSource::PidList)
    }

    fn index(self) -> usize {
        match self {
            ProcessSource::CoreDevice => 0,
            ProcessSource::Instruments => 1,
            ProcessSource::PidList => 2,
        }
    }
}

impl fmt::Display for ProcessSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// Why a process source did not answer, as a person can act on it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Blocker {
    /// The phone is locked (lockdown's `PasswordProtected`, idevice's `DeviceLocked`).
    Locked,
    /// The phone does not trust this computer (`InvalidHostID`).
    NotTrusted,
    /// Developer Mode is off, so no developer disk image can be mounted.
    DeveloperModeOff,
    /// The developer disk image is not mounted (it provides CoreDevice's app service on 17.4
    /// and later, and instruments before 17).
    DiskImageNotMounted,
    /// iOS 17.0 to 17.3: no CoreDevice tunnel over lockdown (jkcoxson/idevice #3).
    NoTunnel {
        /// The phone's `ProductVersion`.
        version: String,
    },
    /// Anything else, with what was seen.
    Failed(String),
}

impl Blocker {
    /// Why, as a sentence fragment.
    pub fn cause(&self) -> String {
        match self {
            Blocker::Locked => "the iPhone is locked".into(),
            Blocker::NotTrusted => "the iPhone does not trust this computer".into(),
            Blocker::DeveloperModeOff => {
                "Developer Mode is off on the iPhone, so the developer disk image cannot be mounted"
                    .into()
            }
            Blocker::DiskImageNotMounted => {
                "the developer disk image is not mounted (a restart unmounts it)".into()
            }
            Blocker::NoTunnel { version } => format!(
                "iOS {version} has no CoreDevice tunnel over USB (it came with iOS 17.4), and no running tunneld lists this iPhone"
            ),
            Blocker::Failed(what) => what.clone(),
        }
    }

    /// What a person can do, as a sentence fragment.
    pub fn fix(&self) -> String {
        match self {
            Blocker::Locked => {
                "unlock the iPhone and keep it unlocked while its logs are read".into()
            }
            Blocker::NotTrusted => "unlock the iPhone, connect it by cable, tap Trust and enter its passcode (or run `idevicepair pair`)".into(),
            Blocker::DeveloperModeOff => format!(
                "turn on Developer Mode (Settings › Privacy & Security › Developer Mode; the iPhone restarts), then {MOUNT}"
            ),
            Blocker::DiskImageNotMounted => MOUNT.into(),
            Blocker::NoTunnel { .. } => TUNNELD.into(),
            Blocker::Failed(_) => RECONNECT.into(),
        }
    }

    /// How fundamental the blocker is: a locked or untrusted phone blocks everything, so its
    /// fix comes first.
    fn rank(&self) -> u8 {
        match self {
            Blocker::Locked => 0,
            Blocker::NotTrusted => 1,
            Blocker::Failed(_) => 2,
            Blocker::DeveloperModeOff => 3,
            Blocker::DiskImageNotMounted => 4,
            Blocker::NoTunnel { .. } => 5,
        }
    }
}

/// What to do about a failure with no better-known cause.
pub const RECONNECT: &str =
    "reconnect the iPhone (unplug the cable and plug it in again) and read again";

/// What iOS 17.0 to 17.3 need for CoreDevice: a tunnel pymobiledevice3's tunneld makes over
/// RemotePairing (root for its TUN on Linux and Windows), found at `127.0.0.1:49151` or a
/// `--tunneld` address.
pub const TUNNELD: &str = "run pymobiledevice3's tunneld (`sudo pymobiledevice3 remote tunneld`; on 17.0–17.3 it is the only way to the iPhone's CoreDevice services) or update the iPhone to iOS 17.4 or later";

/// How to mount the developer disk image, as the fix of several blockers.
pub const MOUNT: &str = "mount the developer disk image: open Xcode with the iPhone attached (Window › Devices and Simulators), or run `pymobiledevice3 mounter auto-mount`";

/// A source that did not answer, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceMiss {
    /// The source.
    pub source: ProcessSource,
    /// Why.
    pub blocker: Blocker,
}

/// The phone's processes from one source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessList {
    /// Every running process.
    pub processes: Vec<ProcessEntry>,
    /// The source that answered.
    pub source: ProcessSource,
    /// The better sources that did not answer (tried now, or failed a moment ago), and why.
    pub passed_over: Vec<SourceMiss>,
}

impl ProcessList {
    /// A list from `source` with nothing passed over.
    pub fn from(source: ProcessSource, processes: Vec<ProcessEntry>) -> Self {
        ProcessList {
            processes,
            source,
            passed_over: Vec::new(),
        }
    }
}

/// No source answered: each one's reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListingFailed {
    /// Every source tried or passed over, and why.
    pub misses: Vec<SourceMiss>,
}

impl ListingFailed {
    /// One source's failure.
    pub fn one(source: ProcessSource, blocker: Blocker) -> Self {
        ListingFailed {
            misses: vec![SourceMiss { source, blocker }],
        }
    }

    /// A listing that gave no answer within `after` (each source has its own, shorter limit, so
    /// this is the listing as a whole; it is put on `PidList`, the source every listing ends with).
    pub fn timed_out(after: Duration) -> Self {
        ListingFailed::one(
            ProcessSource::PidList,
            Blocker::Failed(format!(
                "no process list answered within {} s",
                after.as_secs_f32()
            )),
        )
    }

    /// What a person can do: the distinct fixes, the most fundamental first.
    pub fn fix(&self) -> String {
        fixes(&self.misses)
    }
}

impl fmt::Display for ListingFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&causes(&self.misses))
    }
}

impl std::error::Error for ListingFailed {}

/// The misses' causes, each after its source: `PidList (…): the iPhone is locked; …`.
pub fn causes(misses: &[SourceMiss]) -> String {
    let parts: Vec<String> = misses
        .iter()
        .map(|miss| format!("{}: {}", miss.source, miss.blocker.cause()))
        .collect();
    if parts.is_empty() {
        "no process list was tried".into()
    } else {
        parts.join("; ")
    }
}

/// The misses' distinct fixes, the most fundamental first, joined with "; then ".
pub fn fixes(misses: &[SourceMiss]) -> String {
    let mut blockers: Vec<&Blocker> = misses.iter().map(|miss| &miss.blocker).collect();
    blockers.sort_by_key(|blocker| blocker.rank());
    let mut out: Vec<String> = Vec::new();
    for blocker in blockers {
        let fix = blocker.fix();
        if !out.contains(&fix) {
            out.push(fix);
        }
    }
    out.join("; then ")
}

/// An iOS version, from lockdown's `ProductVersion` (`17.2`, `18.6.1`, `26.1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct IosVersion {
    /// The major version.
    pub major: u32,
    /// The minor version (0 when absent).
    pub minor: u32,
}

impl IosVersion {
    /// Reads `ProductVersion`; `None` for anything that does not start with a number.
    ///
    /// ```
    /// use phonelogs_ios::sources::IosVersion;
    /// assert_eq!(IosVersion::parse("17.4.1"), Some(IosVersion { major: 17, minor: 4 }));
    /// assert_eq!(IosVersion::parse("26"), Some(IosVersion { major: 26, minor: 0 }));
    /// assert_eq!(IosVersion::parse("beta"), None);
    /// ```
    pub fn parse(text: &str) -> Option<Self> {
        let mut parts = text.trim().split('.');
        let major = parts.next()?.parse().ok()?;
        let minor = match parts.next() {
            Some(minor) => minor.parse().ok()?,
            None => 0,
        };
        Some(IosVersion { major, minor })
    }

    fn at_least(self, major: u32, minor: u32) -> bool {
        (self.major, self.minor) >= (major, minor)
    }
}

/// One step of a listing: try a source, or pass over one with its reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Ask this source now.
    Try(ProcessSource),
    /// This source cannot answer now (its version has none of it, or it failed a moment ago).
    PassOver(SourceMiss),
}

/// The order in which one phone's sources are asked, and when a failed one is asked again.
#[derive(Debug, Clone)]
pub struct SourcePlan {
    version: Option<IosVersion>,
    version_text: String,
    retry_after: Duration,
    failed: [Option<(Instant, Blocker)>; 3],
    answered: Option<ProcessSource>,
}

impl SourcePlan {
    /// The plan for a phone of `product_version` (`None` when lockdown did not say: every
    /// source is then tried, best first); a failed source is asked again after `retry_after`.
    pub fn new(product_version: Option<&str>, retry_after: Duration) -> Self {
        SourcePlan {
            version: product_version.and_then(IosVersion::parse),
            version_text: product_version.unwrap_or_default().to_owned(),
            retry_after,
            failed: [None, None, None],
            answered: None,
        }
    }

    /// The phone's version, when known.
    pub fn version(&self) -> Option<IosVersion> {
        self.version
    }

    /// The phone's `ProductVersion` as lockdown gave it (empty when it did not).
    pub fn version_text(&self) -> &str {
        &self.version_text
    }

    /// The source that answered last.
    pub fn answered(&self) -> Option<ProcessSource> {
        self.answered
    }

    /// The steps of a listing at `now`: the sources this version has, best first; one that
    /// failed less than `retry_after` ago is passed over with its last reason, so the one that
    /// answered is asked first meanwhile.
    pub fn steps(&self, now: Instant) -> Vec<Step> {
        let mut steps = Vec::new();
        for source in ProcessSource::ALL {
            if !self.applies(source) {
                continue;
            }
            match &self.failed[source.index()] {
                Some((at, blocker)) if now.duration_since(*at) < self.retry_after => {
                    steps.push(Step::PassOver(SourceMiss {
                        source,
                        blocker: blocker.clone(),
                    }));
                }
                _ => steps.push(Step::Try(source)),
            }
        }
        steps
    }

    /// Notes that `source` answered.
    pub fn succeeded(&mut self, source: ProcessSource) {
        self.failed[source.index()] = None;
        self.answered = Some(source);
    }

    /// Notes that `source` failed at `now` for `blocker`.
    pub fn failed(&mut self, source: ProcessSource, blocker: Blocker, now: Instant) {
        self.failed[source.index()] = Some((now, blocker));
        if self.answered == Some(source) {
            self.answered = None;
        }
    }

    /// Whether this version has `source` at all.
    fn applies(&self, source: ProcessSource) -> bool {
        let Some(version) = self.version else {
            return true;
        };
        match source {
            // 17.0 to 17.3 have no CoreDeviceProxy, but a running tunneld may list them (their
            // miss then says so); iOS 16 and earlier have no CoreDevice, and their
            // instruments' miss says what to do.
            ProcessSource::CoreDevice => version.at_least(17, 0),
            ProcessSource::Instruments => !version.at_least(17, 0),
            ProcessSource::PidList => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tried(steps: &[Step]) -> Vec<ProcessSource> {
        steps
            .iter()
            .filter_map(|step| match step {
                Step::Try(source) => Some(*source),
                Step::PassOver(_) => None,
            })
            .collect()
    }

    #[test]
    fn each_version_asks_the_sources_it_has_paths_first() {
        use ProcessSource::*;
        let now = Instant::now();
        let retry = Duration::from_secs(5);
        for (version, want) in [
            (Some("16.7.10"), vec![Instruments, PidList]),
            (Some("17.0"), vec![CoreDevice, PidList]),
            (Some("17.3.1"), vec![CoreDevice, PidList]),
            (Some("17.4"), vec![CoreDevice, PidList]),
            (Some("18.6"), vec![CoreDevice, PidList]),
            (Some("26.1"), vec![CoreDevice, PidList]),
            (Some("27.0"), vec![CoreDevice, PidList]),
            (None, vec![CoreDevice, Instruments, PidList]),
            (Some("garbage"), vec![CoreDevice, Instruments, PidList]),
        ] {
            let plan = SourcePlan::new(version, retry);
            assert_eq!(tried(&plan.steps(now)), want, "{version:?}");
        }
    }

    #[test]
    fn a_failed_source_waits_and_the_one_that_answered_goes_first() {
        use ProcessSource::*;
        let start = Instant::now();
        let retry = Duration::from_secs(5);
        let mut plan = SourcePlan::new(Some("26.1"), retry);
        plan.failed(CoreDevice, Blocker::DiskImageNotMounted, start);
        plan.succeeded(PidList);
        let soon = plan.steps(start + Duration::from_secs(1));
        assert_eq!(tried(&soon), [PidList]);
        assert!(matches!(
            &soon[0],
            Step::PassOver(SourceMiss {
                source: CoreDevice,
                blocker: Blocker::DiskImageNotMounted
            })
        ));
        // After the wait, the better source is asked again first (a DDI mounted meanwhile).
        assert_eq!(tried(&plan.steps(start + retry)), [CoreDevice, PidList]);
        plan.succeeded(CoreDevice);
        assert_eq!(plan.answered(), Some(CoreDevice));
        assert_eq!(tried(&plan.steps(start + retry)), [CoreDevice, PidList]);
    }

    #[test]
    fn fixes_come_most_fundamental_first_and_once() {
        let misses = [
            SourceMiss {
                source: ProcessSource::CoreDevice,
                blocker: Blocker::DiskImageNotMounted,
            },
            SourceMiss {
                source: ProcessSource::PidList,
                blocker: Blocker::Locked,
            },
            SourceMiss {
                source: ProcessSource::Instruments,
                blocker: Blocker::DiskImageNotMounted,
            },
        ];
        let fix = fixes(&misses);
        assert!(fix.starts_with("unlock the iPhone"), "{fix}");
        assert_eq!(
            fix.matches("pymobiledevice3 mounter auto-mount").count(),
            1,
            "{fix}"
        );
        let failed = ListingFailed {
            misses: misses.to_vec(),
        };
        let text = failed.to_string();
        assert!(
            text.contains("PidList (process names only): the iPhone is locked"),
            "{text}"
        );
    }
}
