//! End-to-end checks through Debian's real adb server: `adb connect` the simulator, then
//! `adb -s … shell …` every command the driver uses, per Android profile, exit codes included.

#![allow(clippy::unwrap_used)]

mod common;

use common::{AdbServer, RunningSim, adb_path};
use phonelogs_adbsim::{AndroidVersion, Buffer, BuildType, Fault, Profile, SimPhone};

fn crashtest_uid(phone: &SimPhone) -> u32 {
    phone.uid_of("dev.phonelogs.crashtest", 0).unwrap()
}

fn check_profile(server: &AdbServer, android: AndroidVersion) {
    let phone = SimPhone::for_android(android);
    let sim = RunningSim::start(phone.clone());
    server.connect(&sim.serial);
    let serial = sim.serial.as_str();
    let uid = crashtest_uid(&phone);

    // Exit codes travel through shell v2.
    assert_eq!(
        server.shell(serial, "echo hello"),
        ("hello\n".to_string(), String::new(), 0)
    );
    assert_eq!(server.shell(serial, "false").2, 1);
    assert_eq!(server.shell(serial, "exit 3").2, 3);
    let (_, stderr, code) = server.shell(serial, "nosuchcommand");
    assert_eq!(code, 127);
    assert_eq!(
        stderr,
        "/system/bin/sh: nosuchcommand: inaccessible or not found\n"
    );

    // getprop and date.
    assert_eq!(
        server.shell(serial, "getprop ro.build.version.release").0,
        format!("{}\n", android.release())
    );
    assert_eq!(server.shell(serial, "date +%z").0, "+0100\n");

    // pm list packages -U, with a shared uid and a clone in user 10.
    let (out, _, code) = server.shell(serial, "pm list packages -U");
    assert_eq!(code, 0);
    assert!(
        out.contains(&format!("package:dev.phonelogs.crashtest uid:{uid}\n")),
        "{out}"
    );
    assert!(out.contains("package:dev.phonelogs.suite.mail uid:10150\n"));
    assert!(out.contains("package:dev.phonelogs.suite.calendar uid:10150\n"));
    assert!(out.contains("package:io.appium.uiautomator2.server uid:10260\n"));
    let (clone, _, _) = server.shell(serial, "pm list packages -U --user 10");
    assert_eq!(clone, "package:com.whatsapp uid:1010145\n");

    // dumpsys package: DEBUGGABLE only for the debug build.
    let (out, _, _) = server.shell(serial, "dumpsys package dev.phonelogs.crashtest");
    assert!(out.contains(&format!("    userId={uid}\n")));
    let pkg_flags = out
        .lines()
        .find(|line| line.starts_with("    pkgFlags=[ "))
        .unwrap();
    assert!(pkg_flags.contains(" DEBUGGABLE "), "{pkg_flags}");
    let (out, _, _) = server.shell(serial, "dumpsys package com.x8bit.bitwarden");
    assert!(!out.contains("DEBUGGABLE"));
    let (out, _, _) = server.shell(serial, "dumpsys package com.android.settings");
    assert!(
        out.lines()
            .any(|line| line.starts_with("    pkgFlags=[ SYSTEM ")),
        "{out}"
    );

    // logcat with the driver's options.
    let command =
        format!("logcat -d -b main,system,crash -v epoch -v uid --uid={uid} -t 500 '*:V'");
    let (out, err, code) = server.shell(serial, &command);
    if android == AndroidVersion::Android10 {
        assert_eq!(code, 1, "Android 10's logcat rejects --uid");
        assert!(
            err.starts_with("Unrecognized Option \0\nUsage: logcat"),
            "{err:?}"
        );
        assert!(out.is_empty());
        let (all, _, code) = server.shell(
            serial,
            "logcat -d -b main,system,crash -v epoch -v uid -t 500",
        );
        assert_eq!(code, 0);
        assert!(
            all.lines()
                .filter(|line| !line.starts_with("---------"))
                .any(|line| !line.contains(&format!(" {uid} ")))
        );
    } else {
        assert_eq!(code, 0, "{err}");
        let lines: Vec<&str> = out
            .lines()
            .filter(|line| !line.starts_with("---------"))
            .collect();
        assert!(
            lines
                .iter()
                .any(|line| line.contains("CrashTest: Crash Test ready")),
            "{out}"
        );
        for line in &lines {
            // `%19lld.%03ld`, a space, the uid `%5d`, pid, tid.
            assert_eq!(&line[19..20], ".", "{line}");
            let fields: Vec<&str> = line[24..].split_whitespace().collect();
            assert_eq!(fields[0], uid.to_string(), "{line}");
        }
        // The profile flag makes logcat ignore --uid: every uid's lines come back.
        phone.set_logcat_ignores_uid(true);
        let (leaky, _, _) = server.shell(serial, &command);
        assert!(
            leaky
                .lines()
                .filter(|line| !line.starts_with("---------"))
                .any(|line| {
                    line[24..].split_whitespace().next() != Some(uid.to_string().as_str())
                })
        );
        phone.set_logcat_ignores_uid(false);
    }
    // Priority filters and threadtime layout.
    let (out, _, _) = server.shell(serial, "logcat -d -b system '*:W'");
    assert!(
        out.lines()
            .filter(|line| !line.starts_with("---------"))
            .all(|line| {
                let letter = line.as_bytes()[31] as char;
                matches!(letter, 'W' | 'E' | 'F')
            }),
        "{out}"
    );

    // A Java crash: the crash buffer, the drop box, exit-info.
    let pid = phone
        .crash(
            "dev.phonelogs.crashtest",
            "java.lang.IllegalStateException",
            "boom",
        )
        .unwrap();
    let (out, _, _) = server.shell(serial, "logcat -d -b crash");
    assert!(out.starts_with("--------- beginning of crash\n"), "{out}");
    assert!(out.contains("E AndroidRuntime: FATAL EXCEPTION: main\n"));
    assert!(out.contains(&format!(
        "E AndroidRuntime: Process: dev.phonelogs.crashtest, PID: {pid}\n"
    )));
    assert!(out.contains("E AndroidRuntime: \tat dev.phonelogs.crashtest.MainActivity"));
    let (out, _, code) = server.shell(serial, "date +%z; dumpsys dropbox --print data_app_crash");
    assert_eq!(code, 0);
    assert!(
        out.starts_with("+0100\nDrop box contents: 1 entries\n"),
        "{out}"
    );
    assert!(out.contains("Searching for: data_app_crash\n"));
    assert!(out.contains("========================================\n"));
    assert!(out.contains(" data_app_crash (text, "));
    assert!(out.contains("Process: dev.phonelogs.crashtest\n"));
    assert_eq!(
        out.contains(&format!("UID: {uid}\n")),
        android != AndroidVersion::Android10
    );
    let (none, _, _) = server.shell(
        serial,
        "dumpsys dropbox --print data_app_crash data_app_anr",
    );
    assert!(
        none.contains("(No entries found.)\n"),
        "search terms are ANDed: {none}"
    );
    let (out, _, _) = server.shell(serial, "dumpsys activity exit-info dev.phonelogs.crashtest");
    if android == AndroidVersion::Android10 {
        assert_eq!(
            out,
            "Bad activity command, or no activities match: exit-info\nUse -h for help.\n"
        );
    } else {
        assert!(
            out.starts_with("ACTIVITY MANAGER PROCESS EXIT INFO (dumpsys activity exit-info)\n")
        );
        assert!(out.contains("  package: dev.phonelogs.crashtest\n"));
        assert!(out.contains(&format!(" pid={pid} realUid={uid} packageUid={uid} ")));
        assert!(out.contains("reason=4 (APP CRASH(EXCEPTION))"));
    }

    // An ANR and a native crash.
    phone.hang("dev.phonelogs.crashtest").unwrap();
    let (out, _, _) = server.shell(serial, "dumpsys dropbox --print data_app_anr");
    assert!(out.contains("Subject: Input dispatching timed out"));
    assert!(
        out.matches("\n----- pid ").count() >= 2,
        "an ANR trace holds several processes"
    );
    phone.native_crash("dev.phonelogs.crashtest", 11).unwrap();
    let (out, _, _) = server.shell(serial, "dumpsys dropbox --print data_app_native_crash");
    assert!(out.contains("*** *** *** *** *** *** *** *** *** *** *** *** *** *** *** ***\n"));
    assert!(out.contains("signal 11 (SIGSEGV), code 1 (SEGV_MAPERR)"));
    let (out, _, _) = server.shell(serial, "logcat -d -b crash");
    assert!(out.contains("F libc    : Fatal signal 11 (SIGSEGV)"));
    assert!(out.contains("F DEBUG   : *** *** ***"));

    // am set-debug-app / clear-debug-app.
    assert_eq!(
        server.shell(
            serial,
            "am set-debug-app -w --persistent dev.phonelogs.crashtest"
        ),
        (String::new(), String::new(), 0)
    );
    assert_eq!(
        phone.debug_app().unwrap().package,
        "dev.phonelogs.crashtest"
    );
    let (_, err, code) = server.shell(serial, "am set-debug-app --bogus dev.phonelogs.crashtest");
    assert_eq!(
        (err.as_str(), code),
        ("Error: Unknown option: --bogus\n", 255)
    );
    assert_eq!(server.shell(serial, "am clear-debug-app").2, 0);
    assert!(phone.debug_app().is_none());

    // debuggerd: a user build refuses the shell user with what real phones print, before it
    // looks the pid up, so a dead pid is refused the same way.
    let pid = phone.launch("dev.phonelogs.crashtest").unwrap();
    let refusal = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/refusals/debuggerd-root-required.stderr.txt"
    ))
    .unwrap();
    for command in [
        format!("debuggerd -b {pid}"),
        format!("debuggerd {pid}"),
        "debuggerd -b 99999".to_owned(),
    ] {
        let (out, err, code) = server.shell(serial, &command);
        assert_eq!(
            (out.as_str(), err.as_str(), code),
            ("", refusal.as_str(), 1),
            "{command}"
        );
    }

    // Legacy services: exec-out merges stderr and loses the exit code.
    let output = server.run(&["-s", serial, "exec-out", "nosuchcommand"]);
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "/system/bin/sh: nosuchcommand: inaccessible or not found\n"
    );

    // The record of what was asked.
    let commands = phone.commands_run();
    assert!(commands.contains(&"date +%z; dumpsys dropbox --print data_app_crash".to_string()));
    assert!(
        phone
            .services_opened()
            .iter()
            .any(|service| service.starts_with("shell,v2,"))
    );

    let _ = server.run(&["disconnect", serial]);
}

#[test]
fn every_profile_answers_through_the_real_adb_server() {
    let Some(adb) = adb_path("every_profile_answers_through_the_real_adb_server") else {
        return;
    };
    let server = AdbServer::start(adb);
    for android in [
        AndroidVersion::Android10,
        AndroidVersion::Android14,
        AndroidVersion::Android16,
    ] {
        check_profile(&server, android);
    }
}

#[test]
fn userdebug_build_allows_debuggerd_and_lists_every_app_in_jdwp() {
    let Some(adb) = adb_path("userdebug_build_allows_debuggerd") else {
        return;
    };
    let server = AdbServer::start(adb);
    let mut profile = Profile::for_android(AndroidVersion::Android14);
    profile.build_type = BuildType::Userdebug;
    let phone = SimPhone::with_profile(profile);
    let sim = RunningSim::start(phone.clone());
    server.connect(&sim.serial);
    let pid = phone.pid_of("dev.phonelogs.crashtest").unwrap();
    let (out, _, code) = server.shell(&sim.serial, &format!("debuggerd -b {pid}"));
    assert_eq!(code, 0);
    assert!(out.contains(&format!("----- pid {pid} at ")));
    // The main thread carries the kernel name: the process name's last 15 characters.
    assert!(
        out.contains(&format!("\"elogs.crashtest\" sysTid={pid}\n")),
        "{out}"
    );
    assert!(out.contains(&format!("----- end {pid} -----\n")));
    let (out, _, code) = server.shell(&sim.serial, &format!("debuggerd {pid}"));
    assert_eq!(code, 0);
    assert!(out.contains("signal 35 (<debuggerd signal>)"));
    let jdwp = server.run(&["-s", &sim.serial, "jdwp"]);
    let pids = String::from_utf8_lossy(&jdwp.stdout).lines().count();
    assert!(pids > 5, "a userdebug build lists every app: {pids}");
}

#[test]
fn jdwp_lists_the_debuggable_app_on_a_user_build() {
    let Some(adb) = adb_path("jdwp_lists_the_debuggable_app") else {
        return;
    };
    let server = AdbServer::start(adb);
    let phone = SimPhone::default_phone();
    let sim = RunningSim::start(phone.clone());
    server.connect(&sim.serial);
    let pid = phone.pid_of("dev.phonelogs.crashtest").unwrap();
    let output = server.run(&["-s", &sim.serial, "jdwp"]);
    assert_eq!(String::from_utf8_lossy(&output.stdout), format!("{pid}\n"));
}

#[test]
fn survives_a_thousand_commands() {
    let Some(adb) = adb_path("survives_a_thousand_commands") else {
        return;
    };
    let server = AdbServer::start(adb);
    let phone = SimPhone::default_phone();
    let sim = RunningSim::start(phone.clone());
    server.connect(&sim.serial);
    for index in 0..1000 {
        let (out, _, code) = server.shell(&sim.serial, &format!("echo {index}"));
        assert_eq!((out, code), (format!("{index}\n"), 0), "command {index}");
    }
    assert_eq!(phone.commands_run().len(), 1000);
}

#[test]
fn a_sixteen_mib_logcat_dump_arrives_whole() {
    let Some(adb) = adb_path("a_sixteen_mib_logcat_dump_arrives_whole") else {
        return;
    };
    let server = AdbServer::start(adb);
    let phone = SimPhone::default_phone();
    phone.set_noise_rate(0.0);
    phone
        .fill_log("dev.phonelogs.crashtest", Buffer::Main, 16 * 1024 * 1024)
        .unwrap();
    let sim = RunningSim::start(phone.clone());
    server.connect(&sim.serial);
    let output = server.run(&[
        "-s",
        &sim.serial,
        "shell",
        "logcat -d -b main -v epoch -v uid",
    ]);
    assert!(output.status.success());
    assert!(
        output.stdout.len() >= 16 * 1024 * 1024,
        "got {} bytes",
        output.stdout.len()
    );
    let text = String::from_utf8_lossy(&output.stdout);
    let fill_lines = text
        .lines()
        .filter(|line| line.contains("FillTest: fill line "))
        .count();
    let stored = phone.processes().len(); // keeps the phone alive until here
    assert!(stored > 0);
    assert!(fill_lines > 100_000, "{fill_lines} lines");
    assert!(text.ends_with('\n'));
}

#[test]
fn faults_drop_the_connection_and_offline_shows() {
    let Some(adb) = adb_path("faults_drop_the_connection_and_offline_shows") else {
        return;
    };
    let server = AdbServer::start(adb);
    let phone = SimPhone::default_phone();
    let sim = RunningSim::start(phone.clone());
    server.connect(&sim.serial);
    phone.inject_fault(Fault::DropAfterBytes(1000));
    let output = server.run(&["-s", &sim.serial, "shell", "logcat -d -b main,system"]);
    assert!(
        output.stdout.len() <= 1000,
        "got {} bytes",
        output.stdout.len()
    );
    phone.set_offline(true);
    std::thread::sleep(std::time::Duration::from_millis(300));
    let devices = server.run(&["devices"]);
    let text = String::from_utf8_lossy(&devices.stdout);
    assert!(text.contains(&format!("{}\toffline", sim.serial)), "{text}");
    let (_, err, code) = server.shell(&sim.serial, "echo hi");
    assert_ne!(code, 0);
    assert!(err.contains("offline"), "{err}");
}

#[test]
fn auth_shows_unauthorized_until_the_user_allows() {
    let Some(adb) = adb_path("auth_shows_unauthorized_until_the_user_allows") else {
        return;
    };
    let server = AdbServer::start(adb);
    let profile = Profile {
        auth: phonelogs_adbsim::AuthMode::AskUser,
        ..Profile::default()
    };
    let phone = SimPhone::with_profile(profile);
    let sim = RunningSim::start(phone.clone());
    let _ = server.run(&["connect", &sim.serial]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let text = String::from_utf8_lossy(&server.run(&["devices"]).stdout).into_owned();
        if text.contains(&format!("{}\tunauthorized", sim.serial)) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never unauthorized: {text}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    phone.allow_usb_debugging();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let text = String::from_utf8_lossy(&server.run(&["devices"]).stdout).into_owned();
        if text.contains(&format!("{}\tdevice", sim.serial)) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never authorized: {text}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(server.shell(&sim.serial, "echo ok").0, "ok\n");
}

#[test]
fn following_logcat_streams_new_lines_until_cancelled() {
    use std::io::{BufRead, BufReader};
    let Some(adb) = adb_path("following_logcat_streams_new_lines_until_cancelled") else {
        return;
    };
    let server = AdbServer::start(adb);
    let phone = SimPhone::default_phone();
    let sim = RunningSim::start(phone.clone());
    server.connect(&sim.serial);
    let uid = crashtest_uid(&phone);
    let mut child = server
        .command()
        .args([
            "-s",
            &sim.serial,
            "shell",
            &format!("logcat -v uid --uid={uid} -T 1"),
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    phone
        .log(
            "dev.phonelogs.crashtest",
            phonelogs_adbsim::Priority::Warn,
            "CrashTest",
            "live line",
        )
        .unwrap();
    let mut seen = false;
    for line in lines.by_ref().take(20) {
        if line.unwrap().ends_with("W CrashTest: live line") {
            seen = true;
            break;
        }
    }
    assert!(seen, "the followed line arrived");
    child.kill().unwrap();
    let _ = child.wait();
    // The connection still works after the cancelled stream.
    assert_eq!(server.shell(&sim.serial, "echo after").0, "after\n");
}
