//! `phonelogs doctor` per iPhone, against `phonelogs sim --ios --control`: the iOS version,
//! Developer Mode, the developer disk image and which process list answered, each finding with
//! its fix, as the phone's state changes under it.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

const UDID: &str = "00008101-000A1234567890AB";

/// A running `phonelogs sim --ios --control` and its usbmuxd address.
struct Sim {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    address: String,
}

impl Sim {
    fn start(version: &str) -> Sim {
        let mut child = Command::new(env!("CARGO_BIN_EXE_phonelogs"))
            .args([
                "sim",
                "--ios",
                "--port",
                "0",
                "--control",
                "--ios-version",
                version,
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("phonelogs sim --ios starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut sim = Sim {
            child,
            stdin,
            lines,
            address: String::new(),
        };
        loop {
            let line = sim.next();
            if let Some(address) = line.strip_prefix("USBMUXD_SOCKET_ADDRESS=") {
                sim.address = address.to_owned();
                return sim;
            }
        }
    }

    fn next(&self) -> String {
        self.lines
            .recv_timeout(Duration::from_secs(20))
            .expect("a line from phonelogs sim --ios")
    }

    /// Sends one control command and returns its answer.
    fn command(&mut self, command: &str) -> String {
        writeln!(self.stdin, "{command}").expect("write");
        loop {
            let line = self.next();
            if !line.contains("_ADDRESS=") {
                return line;
            }
        }
    }

    /// `phonelogs doctor --json` on this simulator's usbmuxd: the findings of its iPhone's
    /// services (`iPhone UDID: …`).
    fn doctor(&self) -> Vec<Value> {
        let prefix = format!("iPhone {UDID}:");
        self.doctor_all()
            .into_iter()
            .filter(|f| f["check"].as_str().is_some_and(|c| c.starts_with(&prefix)))
            .collect()
    }

    /// Every finding of `phonelogs doctor --json` about this simulator's iPhone.
    fn doctor_all(&self) -> Vec<Value> {
        let state = tempfile::tempdir().expect("tempdir");
        let empty_path = tempfile::tempdir().expect("tempdir");
        let out = Command::new(env!("CARGO_BIN_EXE_phonelogs"))
            .args([
                "doctor",
                "--json",
                "--usbmuxd",
                &self.address,
                "--state-dir",
            ])
            .arg(state.path())
            // No adb: only the iPhone's findings matter here.
            .env("PATH", empty_path.path())
            .env_remove("PHONELOGS_STATE_DIR")
            .output()
            .expect("phonelogs doctor runs");
        let all: Vec<Value> = serde_json::from_slice(&out.stdout).expect("json findings");
        all.into_iter()
            .filter(|f| {
                f["check"]
                    .as_str()
                    .is_some_and(|c| c.starts_with(&format!("iPhone {UDID}")))
            })
            .collect()
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn finding<'a>(findings: &'a [Value], what: &str) -> &'a Value {
    findings
        .iter()
        .find(|f| f["check"].as_str().is_some_and(|c| c.ends_with(what)))
        .unwrap_or_else(|| panic!("no {what} finding in {findings:#?}"))
}

#[test]
fn on_16_7_the_doctor_names_developer_mode_the_disk_image_and_the_process_list() {
    doctor_on("16.7.10", "instruments' process list answered");
}

#[test]
fn on_26_1_the_doctor_names_developer_mode_the_disk_image_and_the_process_list() {
    doctor_on(
        "26.1",
        "CoreDevice's process list (through the tunnel) answered",
    );
}

#[test]
fn on_17_2_the_doctor_says_names_only_and_the_update_that_finds_extensions() {
    let mut sim = Sim::start("17.2");
    let findings = sim.doctor();
    assert_eq!(finding(&findings, "iOS")["detail"], "iOS 17.2");
    // The image is mounted, but 17.2 has no CoreDevice over USB: PidList answers, names only.
    let list = finding(&findings, "process list");
    assert_eq!(list["ok"], false, "{list}");
    let detail = list["detail"].as_str().unwrap_or_default();
    assert!(
        detail.starts_with("os_trace_relay's PidList") && detail.contains("17.4"),
        "{list}"
    );
    assert!(
        list["fix"]
            .as_str()
            .unwrap_or_default()
            .contains("update the iPhone to iOS 17.4 or later"),
        "{list}"
    );
    // Developer Mode off is still named first.
    assert_eq!(sim.command("developer-mode off"), "ok");
    let mode = finding(&sim.doctor(), "Developer Mode").clone();
    assert_eq!(mode["ok"], false, "{mode}");
}

#[test]
fn the_doctor_names_a_locked_or_untrusted_iphone_with_its_fix() {
    let mut sim = Sim::start("26.1");
    let state = |sim: &Sim| {
        sim.doctor_all()
            .into_iter()
            .find(|f| f["check"] == format!("iPhone {UDID}"))
            .unwrap_or_else(|| panic!("no trust finding"))
    };
    let trusted = state(&sim);
    assert_eq!(trusted["ok"], true, "{trusted}");
    // Locked since it started: usbmuxd lists it, lockdown's services refuse; the findings of
    // its services say so, each with the unlock first.
    assert_eq!(sim.command("trust locked"), "ok");
    let services = sim.doctor();
    let unlock = "unlock the iPhone";
    let image = finding(&services, "developer disk image");
    assert_eq!(image["ok"], false, "{image}");
    assert!(
        image["fix"]
            .as_str()
            .unwrap_or_default()
            .starts_with(unlock),
        "{image}"
    );
    let list = finding(&services, "process list");
    assert_eq!(list["ok"], false, "{list}");
    assert!(
        list["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("the iPhone is locked"),
        "{list}"
    );
    assert!(
        list["fix"].as_str().unwrap_or_default().starts_with(unlock),
        "{list}"
    );
    // Never trusted: listed with the pairing advice, and nothing more is asked of it.
    assert_eq!(sim.command("trust not-paired"), "ok");
    let finding = state(&sim);
    assert_eq!(finding["ok"], false, "{finding}");
    assert_eq!(
        finding["fix"],
        phonelogs_ios::NOT_PAIRED_ADVICE,
        "{finding}"
    );
    let services = sim.doctor();
    assert!(services.is_empty(), "{services:#?}");
}

/// A developer's phone on iOS `version` (the process list from `source` with the image), then
/// after a restart (no image), then with Developer Mode off.
fn doctor_on(version: &str, source: &str) {
    let mut sim = Sim::start(version);
    // A developer's phone: everything works, the app's extensions included.
    let findings = sim.doctor();
    assert_eq!(
        finding(&findings, "iOS")["detail"],
        format!("iOS {version}")
    );
    assert_eq!(finding(&findings, "Developer Mode")["ok"], true);
    assert_eq!(finding(&findings, "developer disk image")["ok"], true);
    let list = finding(&findings, "process list");
    assert_eq!(list["ok"], true, "{list}");
    assert!(
        list["detail"]
            .as_str()
            .unwrap_or_default()
            .starts_with(source),
        "{list}"
    );

    // After a restart: no disk image. The app's own lines still come (PidList); the doctor
    // says the extensions' do not, and how to mount the image.
    assert_eq!(sim.command("ddi unmount"), "ok");
    let findings = sim.doctor();
    let image = finding(&findings, "developer disk image");
    assert_eq!(image["ok"], false, "{image}");
    assert!(
        image["fix"]
            .as_str()
            .unwrap_or_default()
            .contains("pymobiledevice3 mounter auto-mount"),
        "{image}"
    );
    let list = finding(&findings, "process list");
    assert_eq!(list["ok"], false, "{list}");
    assert!(
        list["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("PidList"),
        "{list}"
    );

    // Developer Mode off: named first, with where to turn it on.
    assert_eq!(sim.command("developer-mode off"), "ok");
    let findings = sim.doctor();
    let mode = finding(&findings, "Developer Mode");
    assert_eq!(mode["ok"], false, "{mode}");
    assert!(
        mode["fix"]
            .as_str()
            .unwrap_or_default()
            .contains("Settings › Privacy & Security › Developer Mode"),
        "{mode}"
    );
    let list = finding(&findings, "process list");
    assert!(
        list["fix"]
            .as_str()
            .unwrap_or_default()
            .starts_with("turn on Developer Mode"),
        "{list}"
    );
}
