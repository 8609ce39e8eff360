//! Nothing device-wide, ever: whatever the driver is asked, the simulated phone records no
//! command or service that acts on the whole phone or the whole adb server (`logcat -c`,
//! `adb root`, `reboot`, `kill-server`, `setprop`, …), through the simulator's host front
//! and through a real adb server; and the driver starts no adb server unless it is the local
//! default one.
//!
//! The simulated phone records every service opened and every command line run
//! (`SimPhone::requests`); the conformance suite and the six debugging aids run against it,
//! then a property holds over everything it recorded.

// Tests may unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

mod common;

use common::{Front, ThroughAdb, config, standard_phone};
use phonelogs_adbsim::{AndroidVersion, Request, SimPhone};
use phonelogs_android::{AdbConfig, AdbPhone};
use phonelogs_driver::conformance::run_all;
use phonelogs_driver::{AppId, AppLogger, DeviceId, LogLevel, LogQuery};
use proptest::prelude::*;

/// Programs that act on the whole phone whatever their arguments.
const WHOLE_PHONE_PROGRAMS: &[&str] = &[
    "reboot",
    "setprop",
    "su",
    "start",
    "stop",
    "svc",
    "kill",
    "killall",
    "pkill",
    "rm",
    "root",
    "unroot",
    "remount",
    "wipe",
    "adbd",
    "kill-server",
    "start-server",
    "disable-verity",
    "enable-verity",
];

/// Services that act on the whole phone or the whole server (adb's `SERVICES.TXT` names).
const WHOLE_PHONE_SERVICES: &[&str] = &[
    "host:kill",
    "host:connect",
    "host:disconnect",
    "host:reconnect",
    "reconnect",
    "root:",
    "unroot:",
    "remount:",
    "reboot:",
    "disable-verity:",
    "enable-verity:",
    "tcpip:",
    "usb:",
    "sync:",
];

/// Why one simple command (its words) is device-wide, if it is.
fn device_wide_words(words: &[&str]) -> Option<String> {
    let words: Vec<&str> = words
        .iter()
        .copied()
        .skip_while(|w| w.contains('=') && !w.starts_with('-'))
        .collect();
    let (program, args) = words.split_first()?;
    let program = program.rsplit('/').next().unwrap_or(program);
    if WHOLE_PHONE_PROGRAMS.contains(&program) {
        return Some(format!("runs {program}"));
    }
    let has = |list: &[&str]| args.iter().find(|a| list.iter().any(|l| a.starts_with(l)));
    match program {
        "logcat" => has(&["-c", "--clear", "-G", "--buffer-size", "-P", "--prune"])
            .map(|flag| format!("logcat {flag} changes the buffers of every app")),
        "pm" => has(&[
            "clear",
            "uninstall",
            "install",
            "disable",
            "enable",
            "grant",
            "revoke",
            "reset-permissions",
            "trim-caches",
        ])
        .filter(|_| !args.is_empty())
        .map(|verb| format!("pm {verb}")),
        "settings" => has(&["put", "delete", "reset"]).map(|verb| format!("settings {verb}")),
        "am" => has(&["kill-all", "force-stop", "broadcast"]).map(|verb| format!("am {verb}")),
        "dumpsys" => has(&["--reset"]).map(|_| "dumpsys --reset".to_owned()),
        _ => None,
    }
}

/// Why a command line is device-wide, if any of its simple commands is.
fn device_wide_command(line: &str) -> Option<String> {
    line.split([';', '&', '|', '\n', '(', ')', '`'])
        .map(|simple| {
            simple
                .split_whitespace()
                .map(|w| w.trim_matches(['\'', '"']))
                .collect::<Vec<_>>()
        })
        .find_map(|words| device_wide_words(&words))
}

/// Why a recorded request is device-wide, if it is.
fn device_wide(request: &Request) -> Option<String> {
    match request {
        Request::Command(line) => device_wide_command(line),
        Request::Service(service) => {
            if let Some(hit) = WHOLE_PHONE_SERVICES
                .iter()
                .find(|s| service.starts_with(*s))
            {
                return Some(format!("opens {hit}"));
            }
            ["shell,v2,raw:", "shell,v2,pty:", "shell:", "exec:"]
                .iter()
                .find_map(|prefix| service.strip_prefix(prefix))
                .and_then(device_wide_command)
        }
        // A kind of record added later: judged by its words.
        other => device_wide_command(&format!("{other:?}")),
    }
}

fn assert_nothing_device_wide(phone: &SimPhone, what: &str) {
    let requests = phone.requests();
    assert!(!requests.is_empty(), "{what}: nothing was recorded");
    let wide: Vec<(String, &Request)> = requests
        .iter()
        .filter_map(|r| device_wide(r).map(|why| (why, r)))
        .collect();
    assert!(wide.is_empty(), "{what}: device-wide requests {wide:#?}");
}

#[test]
fn the_predicate_catches_what_it_must() {
    for line in [
        "logcat -c",
        "logcat -b all -c",
        "echo x; logcat --clear",
        "logcat -G 16M",
        "reboot",
        "/system/bin/setprop persist.x 1",
        "su 0 id",
        "pm clear dev.phonelogs.crashtest",
        "X=1 stop",
    ] {
        assert!(device_wide_command(line).is_some(), "{line}");
    }
    for line in [
        "logcat -d -b main,system,crash -v epoch -v uid --uid=10234 -t '2026-11-30 10:00:00.000' '*:V'",
        "pm list packages -U dev.phonelogs.crashtest",
        "dumpsys package dev.phonelogs.crashtest",
        "debuggerd -b 4242",
    ] {
        assert!(device_wide_command(line).is_none(), "{line}");
    }
    for service in ["host:kill", "root:", "reboot:", "shell,v2,raw:logcat -c"] {
        assert!(device_wide(&Request::Service(service.into())).is_some());
    }
}

/// Every debugging aid, with what the phone has, on the device.
async fn every_aid(driver: &AdbPhone, device: &DeviceId, phone: &SimPhone) {
    let debugger = driver.debugger().unwrap();
    let app = AppId::new("dev.phonelogs.crashtest");
    let pid = phone.pid_of(app.as_str()).map_or(4242, i64::from);
    let _ = debugger.process_exit_history(device, &app).await;
    let _ = debugger.set_debug_app(device, &app, true, false).await;
    let _ = debugger.clear_debug_app(device).await;
    let _ = debugger.jdwp_processes(device).await;
    let _ = debugger.process_owner(device, pid).await;
    let _ = debugger.native_backtrace(device, pid).await;
    let _ = debugger.native_tombstone(device, pid).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_conformance_suite_and_the_aids_send_nothing_device_wide() {
    for android in [AndroidVersion::Android10, AndroidVersion::Android16] {
        let serial = DeviceId::new(phonelogs_adbsim::Profile::for_android(android).serial);
        let (phone, scenario) = standard_phone(android, false, &serial);
        let front = Front::start(phone.clone(), |_| {}).await;
        let failures = run_all(&front.driver, &scenario).await;
        assert!(failures.is_empty(), "{failures:#?}");
        every_aid(&front.driver, &front.device, &phone).await;
        assert_nothing_device_wide(&phone, "the host front");

        let placeholder = DeviceId::new("pending");
        let (phone, mut scenario) = standard_phone(android, false, &placeholder);
        let Some(setup) = ThroughAdb::start(phone.clone(), |_| {}).await else {
            continue;
        };
        scenario.device = setup.device.clone();
        let failures = run_all(&setup.driver, &scenario).await;
        assert!(failures.is_empty(), "{failures:#?}");
        every_aid(&setup.driver, &setup.device, &phone).await;
        assert_nothing_device_wide(&phone, "a real adb server");
    }
}

/// A script standing in for `adb` that records that it ran.
fn recording_adb(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let marker = dir.join("adb-ran");
    let script = dir.join("adb");
    std::fs::write(
        &script,
        format!("#!/bin/sh\necho \"$@\" >> '{}'\nexit 1\n", marker.display()),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (script, marker)
}

/// No server is started for an address given with `--adb-server`, nor for one on another
/// host, even when asked to; the local default one is (the check can fail).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_server_is_started_unless_it_is_the_local_default() {
    let dir = tempfile::tempdir().unwrap();
    let (script, marker) = recording_adb(dir.path());
    let port = common::free_port();

    let mut named = AdbConfig::from_address(&format!("127.0.0.1:{port}")).unwrap();
    named.adb_program = Some(script.clone());
    assert!(AdbPhone::new(named).devices().await.is_err());
    assert!(
        !marker.exists(),
        "a server named with --adb-server was started"
    );

    // 127.0.0.2 answers on Linux's loopback, but it is not this computer's default server.
    let mut remote = config(port);
    remote.host = "127.0.0.2".into();
    remote.start_server = true;
    remote.adb_program = Some(script.clone());
    let error = AdbPhone::new(remote).devices().await.unwrap_err();
    assert!(!marker.exists(), "a server on another address was started");
    assert!(error.to_string().contains("127.0.0.2"), "{error}");

    let mut local = AdbConfig::local(port);
    local.adb_program = Some(script);
    let _ = AdbPhone::new(local).devices().await;
    let ran = std::fs::read_to_string(&marker).unwrap_or_default();
    assert!(ran.contains("start-server"), "{ran:?}");
}

fn query() -> impl Strategy<Value = LogQuery> {
    (proptest::option::of(0usize..6), 1usize..600, 0i64..86_400).prop_map(|(level, count, back)| {
        let mut query = LogQuery::since(
            time::OffsetDateTime::now_utc() - time::Duration::seconds(back),
            count,
        );
        query.level = level.map(|l| LogLevel::ALL[l]);
        query
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Whatever the agent asks (any filter text, level, count, time, app id, pid), nothing
    /// device-wide reaches the phone.
    #[test]
    fn no_request_is_device_wide(
        query in query(),
        app in "(dev\\.phonelogs\\.crashtest|com\\.spotify\\.music|[a-z.]{1,12}|[ -~]{1,12})",
        pid in -5i64..40_000,
    ) {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let phone = SimPhone::default_phone();
            let front = Front::start(phone.clone(), |_| {}).await;
            let device = front.device.clone();
            let app = AppId::new(app);
            let _ = front.driver.app_info(&device, &app).await;
            let _ = front.driver.app_logs(&device, &app, &query).await;
            let _ = front.driver.app_crashes(&device, &app, query.since, 3).await;
            let debugger = front.driver.debugger().unwrap();
            let _ = debugger.process_exit_history(&device, &app).await;
            let _ = debugger.set_debug_app(&device, &app, false, false).await;
            let _ = debugger.clear_debug_app(&device).await;
            let _ = debugger.native_backtrace(&device, pid).await;
            let _ = debugger.native_tombstone(&device, pid).await;
            let _ = debugger.process_owner(&device, pid).await;
            let _ = front.driver.devices().await;
            for request in phone.requests() {
                prop_assert!(device_wide(&request).is_none(), "{request:?}: {:?}", device_wide(&request));
            }
            Ok(())
        })?;
    }
}
