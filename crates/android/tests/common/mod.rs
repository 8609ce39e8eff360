//! Test helpers: a simulated phone loaded with the conformance scenario, reached through the
//! simulator's host-protocol front or through a private real adb server.

#![allow(dead_code, clippy::unwrap_used)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use phonelogs_adbsim::{
    AndroidVersion, DropBoxEntry, HostFront, Package, Priority, Profile, SimHandle, SimPhone,
    Simulator,
};
use phonelogs_android::{AdbConfig, AdbPhone};
use phonelogs_driver::conformance::{APP_MARKER, OTHER_MARKER, SYSTEM_MARKER, Scenario};
use phonelogs_driver::{AppLogger, CrashKind, DeviceId, DeviceState, LogLine};
use time::OffsetDateTime;

/// A driver configuration for a server at `port` that never starts one and gives up quickly.
pub fn config(port: u16) -> AdbConfig {
    let mut config = AdbConfig::local(port);
    config.start_server = false;
    config.read_timeout = Duration::from_secs(10);
    config.call_timeout = Duration::from_secs(30);
    config
}

/// A port nobody listens on (bound, then released).
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// The profile of a scenario phone.
pub fn profile(android: AndroidVersion, ignores_uid: bool) -> Profile {
    let mut profile = Profile::for_android(android);
    profile.logcat_ignores_uid = ignores_uid;
    profile
}

fn priority(line: &LogLine) -> Priority {
    Priority::from_letter(line.level.android_char()).unwrap()
}

fn millis(time: OffsetDateTime) -> i64 {
    (time.unix_timestamp_nanos() / 1_000_000) as i64
}

/// The `Key: value` headers of a `data_app_*` drop box entry as the profile's release prints
/// them (shared/notes/android-formats.md §2: `PID:`/`UID:` from Android 11 or so, `Timestamp:`
/// on the newest).
fn headers(
    profile: &Profile,
    process: &str,
    pid: u32,
    uid: u32,
    version: &str,
    subject: Option<&str>,
    time: OffsetDateTime,
) -> String {
    let mut out = format!("Process: {process}\n");
    if profile.android != AndroidVersion::Android10 {
        out.push_str(&format!("PID: {pid}\nUID: {uid}\nFrozen: false\n"));
    }
    out.push_str(&format!(
        "Flags: 0x38c83ec6\nPackage: {process} v1 ({version})\nForeground: Yes\n"
    ));
    if let Some(subject) = subject {
        out.push_str(&format!("Subject: {subject}\n"));
    }
    out.push_str(&format!("Build: {}\n", profile.fingerprint()));
    if profile.android == AndroidVersion::Android16 {
        let offset = time::UtcOffset::from_whole_seconds(profile.utc_offset_minutes * 60).unwrap();
        let local = time.to_offset(offset);
        let zone = format!(
            "{}{:02}{:02}",
            if profile.utc_offset_minutes < 0 {
                '-'
            } else {
                '+'
            },
            profile.utc_offset_minutes.abs() / 60,
            profile.utc_offset_minutes.abs() % 60
        );
        out.push_str(&format!(
            "Timestamp: {:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:03}{zone}\n",
            local.year(),
            u8::from(local.month()),
            local.day(),
            local.hour(),
            local.minute(),
            local.second(),
            local.millisecond()
        ));
    }
    out.push('\n');
    out
}

/// An ANR trace body: the CPU use of several processes, then the app's section and
/// system_server's (which the driver must cut away).
fn anr_body(pid: u32, process: &str, time: &str) -> String {
    format!(
        "CPU usage from 0ms to 5012ms later:\n  48% 600/system_server: 30% user + 18% kernel\n  12% {pid}/{process}: 10% user\n\n\
----- pid {pid} at {time} -----\nCmd line: {process}\n\nDALVIK THREADS (2):\n\
\"main\" prio=5 tid=1 Blocked\n  | group=\"main\" sCount=1 ucsCount=0 flags=1 obj=0x72f0a5b8 self=0xb400007a\n\
  at dev.phonelogs.crashtest.MainActivity.onHang(MainActivity.java:57)\n  - waiting to lock <0x0a1b2c3d> (a java.lang.Object) held by thread 2\n  {APP_MARKER}\n\n\
----- end {pid} -----\n\n\
----- pid 600 at {time} -----\nCmd line: system_server\n\n\"main\" prio=5 tid=1 Native\n  {SYSTEM_MARKER} other processes' threads\n\n----- end 600 -----\n"
    )
}

/// Builds a simulated phone holding the standard conformance scenario, and the scenario as this
/// phone tells it (its serial; on Android 10 no pid for the Java crash, whose drop box entry
/// prints none).
pub fn standard_phone(
    android: AndroidVersion,
    ignores_uid: bool,
    device: &DeviceId,
) -> (SimPhone, Scenario) {
    let profile = profile(android, ignores_uid);
    let phone = SimPhone::empty(profile.clone());
    phone.set_noise_rate(0.0);
    let start = OffsetDateTime::now_utc() - time::Duration::hours(2);
    let mut scenario = Scenario::standard(device.clone(), start);
    for app in [&scenario.app, &scenario.other_app, &scenario.system_app] {
        let mut package = Package::new(app.app.as_str(), app.uid);
        package.debuggable = app.dev_build;
        package.system = app.system;
        if app.uid == 1000 {
            package.shared_user = Some("android.uid.system".into());
        }
        phone.install(package);
    }
    // Every line in time order, each at its own time on the phone's clock.
    let mut lines: Vec<(&str, &LogLine)> = Vec::new();
    lines.extend(
        scenario
            .app
            .lines
            .iter()
            .map(|l| (scenario.app.app.as_str(), l)),
    );
    lines.extend(
        scenario
            .other_app
            .lines
            .iter()
            .map(|l| (scenario.other_app.app.as_str(), l)),
    );
    // The system's lines come from system_server, whose package is "android".
    lines.extend(scenario.system_lines.iter().map(|l| ("android", l)));
    lines.sort_by_key(|(_, l)| l.time);
    for (package, line) in lines {
        phone.set_clock_ms(millis(line.time));
        phone
            .log(package, priority(line), &line.tag, &line.text)
            .unwrap();
    }
    // Crash reports, as the drop box keeps them.
    let mut entries: Vec<DropBoxEntry> = Vec::new();
    for (app, version) in [(&scenario.app, "1.0"), (&scenario.other_app, "8.9")] {
        for crash in &app.crashes {
            let pid = crash.pid.unwrap_or(app.pid);
            let (tag, text) = match crash.kind {
                CrashKind::Anr => {
                    let offset =
                        time::UtcOffset::from_whole_seconds(profile.utc_offset_minutes * 60)
                            .unwrap();
                    let local = (crash.time - time::Duration::seconds(1)).to_offset(offset);
                    let section_time = format!(
                        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
                        local.year(),
                        u8::from(local.month()),
                        local.day(),
                        local.hour(),
                        local.minute(),
                        local.second()
                    );
                    (
                        "data_app_anr",
                        format!(
                            "{}{}",
                            headers(
                                &profile,
                                &app.app.to_string(),
                                pid,
                                app.uid,
                                version,
                                Some(&crash.summary),
                                crash.time
                            ),
                            anr_body(pid, app.app.as_str(), &section_time)
                        ),
                    )
                }
                _ => (
                    "data_app_crash",
                    format!(
                        "{}{}",
                        headers(
                            &profile,
                            &app.app.to_string(),
                            pid,
                            app.uid,
                            version,
                            None,
                            crash.time
                        ),
                        crash.text
                    ),
                ),
            };
            entries.push(DropBoxEntry {
                tag: tag.into(),
                time_ms: millis(crash.time),
                text,
            });
        }
    }
    entries.sort_by_key(|e| e.time_ms);
    for entry in entries {
        phone.add_dropbox_entry(entry);
    }
    phone.set_clock_ms(millis(start + time::Duration::minutes(5)));
    if android == AndroidVersion::Android10 {
        // Android 10's data_app_crash entries print no PID: line, and nothing else in the entry
        // names the pid (the ANR's trace section does, so the ANR keeps its pid).
        scenario.app.crashes[0].pid = None;
    }
    assert!(
        scenario
            .other_app
            .lines
            .iter()
            .all(|l| l.text.contains(OTHER_MARKER))
    );
    (phone, scenario)
}

/// A simulated phone behind the simulator's host-protocol front.
pub struct Front {
    /// The phone.
    pub phone: SimPhone,
    /// The driver, pointed at the front.
    pub driver: AdbPhone,
    /// The device id.
    pub device: DeviceId,
    /// The front's address.
    pub address: SocketAddr,
    _handle: SimHandle,
}

impl Front {
    /// Starts a front for `phone`, with a driver configured by `adjust`.
    pub async fn start(phone: SimPhone, adjust: impl FnOnce(&mut AdbConfig)) -> Front {
        let (address, handle) = HostFront::bind(None, phone.clone()).await.unwrap();
        let mut config = config(address.port());
        adjust(&mut config);
        let device = DeviceId::new(phone.profile().serial);
        Front {
            phone,
            driver: AdbPhone::new(config),
            device,
            address,
            _handle: handle,
        }
    }
}

/// The real adb, when installed.
pub fn real_adb() -> Option<PathBuf> {
    let path = Path::new("/usr/bin/adb");
    path.is_file().then(|| path.to_path_buf())
}

/// A private real adb server (its own port and HOME), killed when dropped.
pub struct RealAdb {
    /// The server's port.
    pub port: u16,
    adb: PathBuf,
    home: tempfile::TempDir,
}

impl RealAdb {
    /// Starts a private server, or `None` (with the reason printed) when adb is not installed.
    pub fn start() -> Option<RealAdb> {
        let Some(adb) = real_adb() else {
            eprintln!("skipped: /usr/bin/adb is not installed");
            return None;
        };
        let server = RealAdb {
            port: free_port(),
            adb,
            home: tempfile::tempdir().unwrap(),
        };
        let output = server.run(&["start-server"]);
        assert!(output.status.success(), "adb start-server: {output:?}");
        Some(server)
    }

    /// Runs `adb -P <port> ARGS…` with the private HOME.
    pub fn run(&self, args: &[&str]) -> Output {
        Command::new(&self.adb)
            .arg("-P")
            .arg(self.port.to_string())
            .args(args)
            .env("HOME", self.home.path())
            .env("ANDROID_USER_HOME", self.home.path().join(".android"))
            .output()
            .unwrap()
    }

    /// Connects the server to a simulated device and waits until the server lists it online.
    pub async fn connect(&self, address: SocketAddr, driver: &AdbPhone) -> DeviceId {
        let target = format!("127.0.0.1:{}", address.port());
        let output = self.run(&["connect", &target]);
        assert!(
            String::from_utf8_lossy(&output.stdout).contains("connected"),
            "adb connect: {output:?}"
        );
        // Ready when the server itself says so (`adb devices`) and the driver lists it too:
        // the driver's list follows the server's pushes (`host:track-devices-l`), which may
        // still show the phone online for a moment after its connection dropped.
        for _ in 0..100 {
            let listing = String::from_utf8_lossy(&self.run(&["devices"]).stdout).into_owned();
            let ready = listing.lines().any(|line| {
                line.split_whitespace().collect::<Vec<_>>() == [target.as_str(), "device"]
            });
            let devices = driver.devices().await.unwrap();
            if ready
                && devices
                    .iter()
                    .any(|d| d.id.as_str() == target && d.state == DeviceState::Online)
            {
                return DeviceId::new(target);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the adb server never listed {target} as a device");
    }
}

impl Drop for RealAdb {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

/// A simulated phone reached through a private real adb server.
pub struct ThroughAdb {
    /// The phone.
    pub phone: SimPhone,
    /// The driver, pointed at the private server.
    pub driver: AdbPhone,
    /// The device id (`127.0.0.1:<port>`).
    pub device: DeviceId,
    /// The server (dropped last: it kills the server).
    pub server: RealAdb,
    _handle: SimHandle,
}

impl ThroughAdb {
    /// Starts a device for `phone` and connects a private server to it; `None` without adb.
    pub async fn start(phone: SimPhone, adjust: impl FnOnce(&mut AdbConfig)) -> Option<ThroughAdb> {
        let server = RealAdb::start()?;
        let (address, handle) = Simulator::bind_loopback(None, phone.clone()).await.unwrap();
        let mut config = config(server.port);
        adjust(&mut config);
        let driver = AdbPhone::new(config);
        let device = server.connect(address, &driver).await;
        Some(ThroughAdb {
            phone,
            driver,
            device,
            server,
            _handle: handle,
        })
    }
}
