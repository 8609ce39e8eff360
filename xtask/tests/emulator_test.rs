//! `cargo xtask emulator-test` end to end against a stand-in adb (`tests/fake-adb.sh`) that plays
//! an emulator running Crash Test: device choice, the lock, install, launch, the screen dumps and
//! taps, waiting for the crash and the ANR, closing their dialogs, and the cleanup. What only a
//! real emulator can show (that the app really crashes and hangs) is the run itself, on one.

#![allow(clippy::unwrap_used)] // Tests may unwrap: a panic is the test failing.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

struct Fixture {
    dir: PathBuf,
}

impl Fixture {
    fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("xtask-emulator-test-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        for sub in ["state", "apks", "locks"] {
            fs::create_dir_all(dir.join(sub)).unwrap();
        }
        // The stand-in adb only needs the files to exist.
        for build in ["debug", "release"] {
            fs::write(
                dir.join("apks").join(format!("crashtest-{build}.apk")),
                b"PK",
            )
            .unwrap();
        }
        Self { dir }
    }

    fn run(&self, extra_env: &[(&str, &str)]) -> Output {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut command = Command::new(env!("CARGO_BIN_EXE_xtask"));
        command
            .args(["emulator-test", "--no-device-tests", "--adb"])
            .arg(manifest.join("tests/fake-adb.sh"))
            .arg("--apks")
            .arg(self.dir.join("apks"))
            .env("FAKE_ADB_STATE", self.dir.join("state"))
            .env("FAKE_ADB_TESTDATA", manifest.join("testdata"))
            .env("PHONELOGS_DEVLOCK_DIR", self.dir.join("locks"))
            .env("CARGO_TARGET_DIR", self.dir.join("target"));
        for (key, value) in extra_env {
            command.env(key, value);
        }
        command.output().unwrap()
    }

    fn calls(&self) -> String {
        fs::read_to_string(self.dir.join("state/calls")).unwrap_or_default()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn drives_crash_test_through_both_builds_and_cleans_up() {
    let fixture = Fixture::new("happy");
    let output = fixture.run(&[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(
        stdout.contains("emulator-test: device emulator-5554"),
        "{stdout}"
    );
    assert_eq!(
        stdout.lines().last(),
        Some("emulator-test: 12 passed, 0 failed"),
        "{stdout}"
    );

    let calls = fixture.calls();
    for build in ["debug", "release"] {
        assert!(
            calls.contains(&format!("crashtest-{build}.apk")),
            "no install of the {build} build:\n{calls}"
        );
    }
    // The taps land on the centres of the Crash and Hang buttons of the screen dump, the Hang
    // button twice (the second input is what Android finds unanswered), and the dialogs are closed.
    assert_eq!(
        calls.matches("shell input tap 540 516").count(),
        2,
        "{calls}"
    );
    assert_eq!(
        calls.matches("shell input tap 540 705").count(),
        4,
        "{calls}"
    );
    assert!(
        calls.contains("shell input tap 540 1093"),
        "the error dialog was not closed:\n{calls}"
    );
    // The cleanup runs last: stop, uninstall, clear the debug app.
    let tail: Vec<&str> = calls.lines().rev().take(4).collect();
    assert!(
        tail.contains(&"-s emulator-5554 shell am clear-debug-app"),
        "{calls}"
    );
    assert!(
        tail.contains(&"-s emulator-5554 uninstall dev.phonelogs.crashtest"),
        "{calls}"
    );
}

#[test]
fn a_failing_install_fails_the_run_and_still_cleans_up() {
    let fixture = Fixture::new("install-fails");
    let output = fixture.run(&[("FAKE_ADB_INSTALL_FAILS", "1")]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(!output.status.success(), "{stdout}");
    assert!(
        stdout.contains("INSTALL_FAILED_INSUFFICIENT_STORAGE"),
        "{stdout}"
    );
    assert_eq!(
        stdout.lines().last(),
        Some("emulator-test: 2 passed, 2 failed"),
        "{stdout}"
    );
    assert!(
        fixture.calls().contains("shell am clear-debug-app"),
        "{}",
        fixture.calls()
    );
}

#[test]
fn a_device_locked_by_another_run_is_left_alone() {
    let fixture = Fixture::new("locked");
    let lock = File::create(fixture.dir.join("locks/emulator-5554.lock")).unwrap();
    lock.try_lock().unwrap();
    let output = fixture.run(&[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("device emulator-5554 is in use by another run"),
        "{stderr}"
    );
    assert!(!fixture.calls().contains("install"), "{}", fixture.calls());
}
