//! Crash Test played by the simulated phone through Debian's real adb server, as
//! `cargo xtask emulator-test --sim` drives it: install, `am start -W`, `uiautomator dump`,
//! `cat`, `rm -f`, `input tap` on Crash and on Hang (then a second input event: an ANR),
//! `dumpsys dropbox`, `pm uninstall`.

#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{AdbServer, RunningSim, adb_path};
use phonelogs_adbsim::{AndroidVersion, SimPhone};

const PACKAGE: &str = "dev.phonelogs.crashtest";
const DUMP: &str = "/data/local/tmp/ui.xml";

/// The centre of the node whose resource id is `id` in a uiautomator dump.
fn centre(dump: &str, id: &str) -> (i32, i32) {
    let at = dump.find(&format!("resource-id=\"{id}\"")).unwrap();
    let bounds = &dump[at..];
    let start = bounds.find("bounds=\"[").unwrap() + "bounds=\"[".len();
    let text = &bounds[start..start + bounds[start..].find("]\"").unwrap()];
    let numbers: Vec<i32> = text
        .split([',', ']', '['])
        .filter(|part| !part.is_empty())
        .map(|part| part.parse().unwrap())
        .collect();
    ((numbers[0] + numbers[2]) / 2, (numbers[1] + numbers[3]) / 2)
}

fn entries(server: &AdbServer, serial: &str, tag: &str) -> usize {
    let (out, _, code) = server.shell(serial, &format!("dumpsys dropbox --print {tag}"));
    assert_eq!(code, 0);
    out.lines()
        .filter(|line| line.trim() == format!("Process: {PACKAGE}"))
        .count()
}

fn play(android: AndroidVersion) {
    let Some(adb) = adb_path("crash_test_is_played_through_the_real_adb_server") else {
        return;
    };
    let server = AdbServer::start(adb);
    let phone = SimPhone::for_android(android);
    let sim = RunningSim::start(phone.clone());
    server.connect(&sim.serial);
    let serial = sim.serial.as_str();
    let apk = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/apk/crashtest-release.apk");
    server.run(&["-s", serial, "uninstall", PACKAGE]);
    let output = server.run(&["-s", serial, "install", "-r", apk.to_str().unwrap()]);
    assert!(output.status.success(), "{output:?}");
    let uid = phone.uid_of(PACKAGE, 0).unwrap();

    // The start: -W waits and says so; the app logs its start line under its tag.
    let (out, _, code) = server.shell(serial, &format!("am start -W -n {PACKAGE}/.MainActivity"));
    assert_eq!(code, 0, "{out}");
    assert!(
        out.starts_with(&format!(
            "Starting: Intent {{ cmp={PACKAGE}/.MainActivity }}\nStatus: ok\n"
        )),
        "{out}"
    );
    assert!(out.ends_with("Complete\n"), "{out}");
    let (log, _, _) = server.shell(serial, "logcat -d -v uid -s CrashTest");
    assert!(log.contains("Crash Test started"), "{log}");
    let (_, err, code) = server.shell(serial, "am start -W -n com.example.none/.Main");
    assert_ne!(code, 0);
    assert!(err.contains("Error"), "{err}");

    // The screen, through a file, as uiautomator writes it.
    assert_eq!(server.shell(serial, &format!("rm -f {DUMP}")).2, 0);
    assert_eq!(server.shell(serial, &format!("rm {DUMP}")).2, 1);
    let (out, _, code) = server.shell(serial, &format!("uiautomator dump {DUMP}"));
    assert_eq!(
        (out.as_str(), code),
        (&*format!("UI hierchary dumped to: {DUMP}\n"), 0)
    );
    let (dump, _, code) = server.shell(serial, &format!("cat {DUMP}"));
    assert_eq!(code, 0);
    assert!(dump.starts_with(
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
    ));
    assert!(
        dump.contains("text=\"Crash\" resource-id=\"dev.phonelogs.crashtest:id/crash\""),
        "{dump}"
    );
    assert_eq!(server.shell(serial, &format!("rm -f {DUMP}")).2, 0);
    assert_eq!(server.shell(serial, &format!("cat {DUMP}")).2, 1);

    // A tap beside the buttons does nothing; a tap on Crash is the crash.
    assert_eq!(server.shell(serial, "input tap 5 1900").2, 0);
    assert_eq!(entries(&server, serial, "data_app_crash"), 0);
    let (x, y) = centre(&dump, "dev.phonelogs.crashtest:id/crash");
    assert_eq!(server.shell(serial, &format!("input tap {x} {y}")).2, 0);
    assert_eq!(entries(&server, serial, "data_app_crash"), 1);
    let (out, _, _) = server.shell(serial, "dumpsys dropbox --print data_app_crash");
    assert!(
        out.contains("java.lang.IllegalStateException: Crash button tapped"),
        "{out}"
    );
    assert_eq!(phone.pid_of(PACKAGE), None, "the crash killed the app");

    // Hang: the line, a blocked main thread, then an ANR once a second input event waits 5 s.
    server.shell(serial, &format!("am start -W -n {PACKAGE}/.MainActivity"));
    let (x, y) = centre(&dump, "dev.phonelogs.crashtest:id/hang");
    assert_eq!(server.shell(serial, &format!("input tap {x} {y}")).2, 0);
    let (_, err, code) = server.shell(serial, &format!("uiautomator dump {DUMP}"));
    assert_eq!(
        (err.as_str(), code),
        ("ERROR: could not get idle state.\n", 1)
    );
    assert_eq!(
        entries(&server, serial, "data_app_anr"),
        0,
        "no ANR without a waiting event"
    );
    assert_eq!(server.shell(serial, &format!("input tap {x} {y}")).2, 0);
    let deadline = Instant::now() + Duration::from_secs(60);
    while entries(&server, serial, "data_app_anr") == 0 {
        assert!(Instant::now() < deadline, "no ANR entry");
        std::thread::sleep(Duration::from_millis(250));
    }
    let (log, _, _) = server.shell(serial, "logcat -d -v uid -s CrashTest");
    assert!(
        log.contains("Hang button tapped, blocking the main thread"),
        "{log}"
    );
    // The installed app's lines carry its new uid (the preinstalled build's older lines, another).
    let ours: Vec<&str> = log
        .lines()
        .filter(|line| line.contains("Crash Test started") || line.contains("Hang button"))
        .collect();
    assert_eq!(ours.len(), 3, "{log}");
    assert!(
        ours.iter().all(|line| line.contains(&format!(" {uid} "))),
        "{log}"
    );

    // Uninstalled: gone, and launching it fails.
    let output = server.run(&["-s", serial, "uninstall", PACKAGE]);
    assert_eq!(String::from_utf8_lossy(&output.stdout), "Success\n");
    assert_eq!(phone.uid_of(PACKAGE, 0), None);
    assert_ne!(
        server
            .shell(serial, &format!("am start -W -n {PACKAGE}/.MainActivity"))
            .2,
        0
    );
}

#[test]
fn crash_test_is_played_through_the_real_adb_server_on_android_16() {
    play(AndroidVersion::Android16);
}

#[test]
fn crash_test_is_played_through_the_real_adb_server_on_android_10() {
    play(AndroidVersion::Android10);
}
