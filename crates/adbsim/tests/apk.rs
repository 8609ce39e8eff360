//! The APK reader on the two APKs `crashtest/build.sh` builds, on garbage, and the streamed
//! install of both through Debian's real adb server.

#![allow(clippy::unwrap_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{AdbServer, RunningSim, adb_path};
use phonelogs_adbsim::{ApkInfo, SimPhone, parse_apk};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/apk")
        .join(name)
}

fn read(name: &str) -> ApkInfo {
    parse_apk(&std::fs::read(fixture(name)).unwrap()).unwrap()
}

fn check_crash_test(info: &ApkInfo, debuggable: bool) {
    assert_eq!(info.package, "dev.phonelogs.crashtest");
    assert_eq!(info.debuggable, debuggable);
    assert_eq!(info.version_code, 1);
    assert_eq!(info.version_name.as_deref(), Some("1.0"));
    assert_eq!(info.target_sdk, Some(29));
    let launcher = info.launcher_activity.as_deref().unwrap();
    assert!(
        launcher == ".MainActivity" || launcher == "dev.phonelogs.crashtest.MainActivity",
        "{launcher}"
    );
    let get = |name: &str| info.strings.get(name).map(String::as_str);
    assert_eq!(get("log_tag"), Some("CrashTest"));
    assert_eq!(get("start_line"), Some("Crash Test started"));
    assert_eq!(get("crash_message"), Some("Crash button tapped"));
    assert_eq!(get("crash_button"), Some("Crash"));
    assert_eq!(get("hang_button"), Some("Hang"));
    assert_eq!(get("app_name"), Some("Crash Test"));
}

#[test]
fn reads_both_crash_test_builds() {
    check_crash_test(&read("crashtest-debug.apk"), true);
    check_crash_test(&read("crashtest-release.apk"), false);
}

#[test]
fn the_strings_match_the_apps_source_of_truth() {
    let strings =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../crashtest/res/values/strings.xml");
    let Ok(xml) = std::fs::read_to_string(&strings) else {
        eprintln!(
            "SKIPPED: {} is not here (a packaged crate)",
            strings.display()
        );
        return;
    };
    let info = read("crashtest-debug.apk");
    for (name, value) in &info.strings {
        assert!(
            xml.contains(&format!("<string name=\"{name}\">{value}</string>")),
            "{name}={value:?} is not in strings.xml: rebuild the fixtures (testdata/apk/README.md)"
        );
    }
    assert_eq!(info.strings.len(), xml.matches("<string name=").count());
}

#[test]
fn every_cut_and_flipped_byte_fails_cleanly() {
    let bytes = std::fs::read(fixture("crashtest-debug.apk")).unwrap();
    for end in (0..bytes.len()).step_by(61) {
        // A cut archive has no end record; it must be refused, never panic.
        assert!(parse_apk(&bytes[..end]).is_err(), "cut at {end}");
    }
    for at in (0..bytes.len()).step_by(7) {
        let mut flipped = bytes.clone();
        flipped[at] ^= 0xa5;
        // Either refused or read; what matters is that it returns.
        let _ = parse_apk(&flipped);
    }
    let error = parse_apk(b"\x7fELF garbage garbage garbage").unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("INSTALL_PARSE_FAILED_NOT_APK"),
        "{error}"
    );
}

#[test]
fn freshly_built_apks_read_the_same() {
    let has_aapt = Command::new("sh")
        .args([
            "-c",
            "command -v aapt && command -v apksigner && command -v smali",
        ])
        .output()
        .is_ok_and(|output| output.status.success());
    if !has_aapt {
        eprintln!(
            "SKIPPED freshly_built_apks_read_the_same: no aapt/apksigner/smali (crashtest/apt-packages.txt)"
        );
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../crashtest/build.sh");
    if !script.exists() {
        eprintln!("SKIPPED freshly_built_apks_read_the_same: no crashtest/build.sh here");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (debuggable, name) in [
        ("true", "crashtest-debug.apk"),
        ("false", "crashtest-release.apk"),
    ] {
        let apk = dir.path().join(name);
        let status = Command::new("bash")
            .arg(&script)
            .arg(debuggable)
            .arg(&apk)
            .output()
            .unwrap();
        assert!(status.status.success(), "{status:?}");
        let fresh = parse_apk(&std::fs::read(&apk).unwrap()).unwrap();
        assert_eq!(fresh, read(name), "{name}: rebuild the fixtures");
    }
}

#[test]
fn adb_install_streams_the_apk_and_registers_a_new_uid() {
    let Some(adb) = adb_path("adb_install_streams_the_apk_and_registers_a_new_uid") else {
        return;
    };
    let server = AdbServer::start(adb);
    let phone = SimPhone::default_phone();
    let sim = RunningSim::start(phone.clone());
    server.connect(&sim.serial);
    let serial = sim.serial.as_str();
    let old_uid = phone.uid_of("dev.phonelogs.crashtest", 0).unwrap();

    // adb 29 streams: `exec:cmd package 'install' '-r' -S <size>`.
    let output = server.run(&["-s", serial, "uninstall", "dev.phonelogs.crashtest"]);
    assert_eq!(String::from_utf8_lossy(&output.stdout), "Success\n");
    assert_eq!(phone.uid_of("dev.phonelogs.crashtest", 0), None);
    let output = server.run(&["-s", serial, "uninstall", "dev.phonelogs.crashtest"]);
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("Failure [DELETE_FAILED_INTERNAL_ERROR]")
    );

    let release = fixture("crashtest-release.apk");
    let output = server.run(&["-s", serial, "install", "-r", release.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && text.contains("Success"),
        "{output:?}"
    );
    let new_uid = phone.uid_of("dev.phonelogs.crashtest", 0).unwrap();
    assert_ne!(new_uid, old_uid);
    assert!(
        phone
            .services_opened()
            .iter()
            .any(|service| service.starts_with("exec:cmd package 'install' '-r' -S ")),
        "{:?}",
        phone.services_opened()
    );
    let (out, _, _) = server.shell(serial, "dumpsys package dev.phonelogs.crashtest");
    assert!(!out.contains("DEBUGGABLE"), "{out}");

    // Replacing keeps the uid and takes the new flags.
    let debug = fixture("crashtest-debug.apk");
    let output = server.run(&["-s", serial, "install", "-r", debug.to_str().unwrap()]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(phone.uid_of("dev.phonelogs.crashtest", 0), Some(new_uid));
    let (out, _, _) = server.shell(serial, "dumpsys package dev.phonelogs.crashtest");
    assert!(out.contains("DEBUGGABLE"), "{out}");
    let (out, _, _) = server.shell(serial, "pm list packages -U dev.phonelogs.crashtest");
    assert_eq!(
        out,
        format!("package:dev.phonelogs.crashtest uid:{new_uid}\n")
    );
    // And back: a release build over the debug build keeps the uid and loses DEBUGGABLE.
    let output = server.run(&["-s", serial, "install", "-r", release.to_str().unwrap()]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(phone.uid_of("dev.phonelogs.crashtest", 0), Some(new_uid));
    let (out, _, _) = server.shell(serial, "dumpsys package dev.phonelogs.crashtest");
    assert!(!out.contains("DEBUGGABLE"), "{out}");
    let output = server.run(&["-s", serial, "install", "-r", debug.to_str().unwrap()]);
    assert!(output.status.success(), "{output:?}");

    // Without -r an installed package is refused; garbage is not an APK.
    let output = server.run(&["-s", serial, "install", debug.to_str().unwrap()]);
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("INSTALL_FAILED_ALREADY_EXISTS"),
        "{output:?}"
    );
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("garbage.apk");
    std::fs::write(&garbage, vec![0x5a; 5000]).unwrap();
    let output = server.run(&["-s", serial, "install", "-r", garbage.to_str().unwrap()]);
    assert!(!output.status.success());
    let text = String::from_utf8_lossy(&output.stderr);
    assert!(
        text.contains("Failure [INSTALL_PARSE_FAILED_NOT_APK"),
        "{text}"
    );
}
