//! pymobiledevice3 against the simulated iPhone on iOS 26.1: the process list through
//! lockdown's os_trace `PidList`; RSD on its loopback port (`remote rsd-info --rsd`); the whole
//! CoreDevice chain with no root (`developer core-device stream-processes --userspace`, and
//! `list-apps`, which takes the streamed `streamapplist` that 26.1 advertises:
//! CoreDeviceProxy over lockdown, the CDTunnel, pymobiledevice3's userspace TCP stack against the
//! phone's, RSD, the appservice), with the developer disk image mounted and without it; and
//! `syslog live` through RSD's os_trace shim, also while lockdown's stream stays silent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::*;
use phonelogs_iossim::{Fault, IosSim, IosVersion, Level};

const CRASH_TEST: &str = "dev.phonelogs.crashtest";

/// Runs pymobiledevice3 with the phone chosen by udid (`PYMOBILEDEVICE3_UDID`, as `--userspace`
/// requires).
async fn pmd3(tool: &std::path::PathBuf, args: &[&str], sim: &IosSim) -> (bool, String, String) {
    let home = tempfile::tempdir().unwrap();
    let child = tokio::process::Command::new(tool)
        .args(args)
        .env("USBMUXD_SOCKET_ADDRESS", sim.addr())
        .env("PYMOBILEDEVICE3_UDID", sim.phone().profile().udid)
        .env("HOME", home.path())
        .env("NO_COLOR", "1")
        .env("TERM", "dumb")
        .kill_on_drop(true)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start pymobiledevice3");
    let output = tokio::time::timeout(Duration::from_secs(90), child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("pymobiledevice3 {args:?} did not finish"))
        .expect("wait for pymobiledevice3");
    let (out, err) = text(&output);
    (output.status.success(), out, err)
}

fn rsd_args(sim: &IosSim) -> (String, String) {
    let rsd = sim.rsd_addr().expect("RSD on loopback");
    (rsd.ip().to_string(), rsd.port().to_string())
}

fn json(out: &str) -> serde_json::Value {
    let start = out
        .find(['{', '['])
        .unwrap_or_else(|| panic!("no JSON in {out}"));
    serde_json::from_str(&out[start..]).unwrap_or_else(|e| panic!("{e}: {out}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn processes_ps_reads_pidlist_over_lockdown() {
    let Some(tool) = tool("pymobiledevice3") else {
        return;
    };
    let sim = sim_on(IosVersion::V26_1).await;
    let pid = sim.phone().launch(CRASH_TEST).unwrap();
    let (ok, out, err) = pmd3(&tool, &["processes", "ps"], &sim).await;
    assert!(ok, "stdout {out}\nstderr {err}");
    let list = json(&out);
    assert_eq!(list[pid.to_string()]["ProcessName"], "CrashTest", "{list}");
    assert_eq!(list["1"]["ProcessName"], "launchd", "{list}");
    // No tunnel, no RSD: lockdown's os_trace_relay alone.
    let opened: Vec<String> = sim
        .phone()
        .opened()
        .into_iter()
        .map(|o| o.service)
        .collect();
    assert!(
        opened.iter().any(|s| s == "com.apple.os_trace_relay"),
        "{opened:?}"
    );
    assert!(
        !opened.iter().any(|s| s.contains("CoreDeviceProxy")),
        "{opened:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rsd_info_lists_the_shims_and_the_disk_images_services_while_mounted() {
    let Some(tool) = tool("pymobiledevice3") else {
        return;
    };
    let sim = sim_on(IosVersion::V26_1).await;
    let (host, port) = rsd_args(&sim);
    let args = ["remote", "rsd-info", "--rsd", host.as_str(), port.as_str()];
    let (ok, out, err) = pmd3(&tool, &args, &sim).await;
    assert!(ok, "stdout {out}\nstderr {err}");
    let info = json(&out);
    assert_eq!(info["Properties"]["OSVersion"], "26.1", "{info}");
    assert_eq!(info["Properties"]["BuildVersion"], "23B85", "{info}");
    assert_eq!(
        info["Properties"]["UniqueDeviceID"],
        sim.phone().profile().udid
    );
    let services = info["Services"].as_object().unwrap();
    for shim in [
        "com.apple.os_trace_relay.shim.remote",
        "com.apple.syslog_relay.shim.remote",
        "com.apple.crashreportmover.shim.remote",
        "com.apple.crashreportcopymobile.shim.remote",
        "com.apple.mobile.installation_proxy.shim.remote",
    ] {
        assert!(services.contains_key(shim), "{shim}: {info}");
    }
    let appservice = &services["com.apple.coredevice.appservice"];
    assert_eq!(appservice["Properties"]["UsesRemoteXPC"], true, "{info}");
    assert!(services.contains_key("com.apple.instruments.dtservicehub"));

    sim.phone().unmount_ddi();
    let (ok, out, err) = pmd3(&tool, &args, &sim).await;
    assert!(ok, "stdout {out}\nstderr {err}");
    let info = json(&out);
    let services = info["Services"].as_object().unwrap();
    assert!(
        !services.contains_key("com.apple.coredevice.appservice"),
        "{info}"
    );
    assert!(
        !services.contains_key("com.apple.instruments.dtservicehub"),
        "{info}"
    );
    assert!(services.contains_key("com.apple.os_trace_relay.shim.remote"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_processes_through_the_userspace_tunnel_needs_the_disk_image() {
    let Some(tool) = tool("pymobiledevice3") else {
        return;
    };
    let sim = sim_on(IosVersion::V26_1).await;
    let phone = sim.phone().clone();
    let pid = phone.launch(CRASH_TEST).unwrap();
    let widget = phone
        .launch_extension(CRASH_TEST, "dev.phonelogs.crashtest.widget")
        .unwrap();
    let app = phone.app(CRASH_TEST).unwrap();
    // iOS 26 advertises the streamed list and never answers the plain one (issue 38):
    // pymobiledevice3's client of the streamed form reads it.
    let args = [
        "developer",
        "core-device",
        "stream-processes",
        "--userspace",
    ];
    let (ok, out, err) = pmd3(&tool, &args, &sim).await;
    assert!(ok, "stdout {out}\nstderr {err}");
    let tokens = json(&out);
    let url_of = |pid: u32| {
        tokens
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["processIdentifier"] == pid)
            .map(|t| t["executableURL"]["relative"].as_str().unwrap().to_owned())
    };
    assert_eq!(
        url_of(pid),
        Some(format!("file://{}", app.executable_path())),
        "{tokens}"
    );
    assert_eq!(
        url_of(widget),
        Some(format!("file://{}", app.extension_path(&app.extensions[0]))),
        "{tokens}"
    );
    // It went through the tunnel: CoreDeviceProxy over lockdown, then the appservice.
    let opened: Vec<String> = phone.opened().into_iter().map(|o| o.service).collect();
    assert!(
        opened
            .iter()
            .any(|s| s == phonelogs_iossim::CORE_DEVICE_PROXY),
        "{opened:?}"
    );
    assert!(
        opened
            .iter()
            .any(|s| s == "com.apple.coredevice.appservice/streamprocesslist"),
        "{opened:?}"
    );
    assert!(
        !opened
            .iter()
            .any(|s| s == "com.apple.coredevice.appservice/listprocesses"),
        "{opened:?}"
    );

    // Without the disk image RSD does not list the appservice, and pymobiledevice3 fails as
    // with a phone after a restart (pymobiledevice3#862): its InvalidServiceError, printed as
    // "Failed to start service" with the mount command among the reasons.
    phone.unmount_ddi();
    let (ok, out, err) = pmd3(&tool, &args, &sim).await;
    assert!(!ok, "stdout {out}\nstderr {err}");
    assert!(
        err.contains("Failed to start service") && err.contains("mounter auto-mount"),
        "stdout {out}\nstderr {err}"
    );
    assert!(!out.contains("processIdentifier"), "{out}");
    // Mounted again mid-run: the next tunnel lists it.
    phone.mount_ddi().unwrap();
    let (ok, out, err) = pmd3(&tool, &args, &sim).await;
    assert!(ok, "stdout {out}\nstderr {err}");
}

/// pymobiledevice3's `list-apps` takes `streamapplist` when the appservice advertises it (its
/// `app_service.py` `list_apps`), as 26.1 does, and the plain `listapps` is never asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_apps_on_26_1_goes_through_the_streamed_form() {
    let Some(tool) = tool("pymobiledevice3") else {
        return;
    };
    let sim = sim_on(IosVersion::V26_1).await;
    let args = ["developer", "core-device", "list-apps", "--userspace"];
    let (ok, out, err) = pmd3(&tool, &args, &sim).await;
    assert!(ok, "stdout {out}\nstderr {err}");
    let apps = json(&out);
    let app = sim.phone().app(CRASH_TEST).unwrap();
    let found = apps
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["bundleIdentifier"] == CRASH_TEST)
        .unwrap_or_else(|| panic!("{apps}"));
    assert_eq!(found["path"], app.path.as_str(), "{found}");
    assert_eq!(found["isDeveloperApp"], true, "{found}");
    let opened: Vec<String> = sim
        .phone()
        .opened()
        .into_iter()
        .map(|o| o.service)
        .collect();
    assert!(
        opened
            .iter()
            .any(|s| s == "com.apple.coredevice.appservice/streamapplist"),
        "{opened:?}"
    );
    assert!(
        !opened
            .iter()
            .any(|s| s == "com.apple.coredevice.appservice/listapps"),
        "{opened:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn syslog_live_streams_through_the_os_trace_shim_while_lockdown_is_silent() {
    let Some(tool) = tool("pymobiledevice3") else {
        return;
    };
    let sim = sim_on(IosVersion::V26_1).await;
    let phone = sim.phone().clone();
    let pid = phone.launch(CRASH_TEST).unwrap();
    phone.inject_fault(Fault::SilentLockdownOsTrace);
    let (host, port) = rsd_args(&sim);
    let home = tempfile::tempdir().unwrap();
    let log_while_streaming = |label: &'static str| {
        let phone = phone.clone();
        async move {
            for _ in 0..100 {
                if phone.streamed_pids().contains(&-1)
                    || phone.streamed_pids().contains(&i64::from(pid))
                {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            for i in 0..10 {
                phone.log(
                    pid,
                    Level::Error,
                    Some((CRASH_TEST, "net")),
                    &format!("{label} line {i}"),
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    };
    // Lockdown's stream opens and stays silent.
    let (out, err) = run_for(
        &tool,
        &["syslog", "live"],
        &sim,
        home.path(),
        Duration::from_millis(800),
        log_while_streaming("lockdown"),
    )
    .await;
    assert!(!out.contains("lockdown line"), "stdout {out}\nstderr {err}");
    assert!(
        !phone.streamed_pids().is_empty(),
        "the lockdown stream was opened"
    );
    // The shim, reached through RSD, streams.
    let before = phone.streamed_pids().len();
    let args = ["syslog", "live", "--rsd", host.as_str(), port.as_str()];
    let shim = async {
        for _ in 0..100 {
            if phone.streamed_pids().len() > before {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        log_while_streaming("shim").await;
    };
    let (out, err) = run_for(
        &tool,
        &args,
        &sim,
        home.path(),
        Duration::from_millis(800),
        shim,
    )
    .await;
    assert!(out.contains("shim line 9"), "stdout {out}\nstderr {err}");
    let opened: Vec<String> = phone.opened().into_iter().map(|o| o.service).collect();
    assert!(
        opened
            .iter()
            .any(|s| s == "com.apple.os_trace_relay.shim.remote"),
        "{opened:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn installation_proxy_and_crash_reports_through_the_tunnels_shims() {
    let Some(tool) = tool("pymobiledevice3") else {
        return;
    };
    let sim = sim_on(IosVersion::V26_1).await;
    let phone = sim.phone().clone();
    // A report big enough to need many TCP segments through the phone's stack.
    phone.add_report_file(
        "Big-2026-12-01-120000.ips",
        vec![b'x'; 300_000],
        std::time::SystemTime::now(),
    );
    let (ok, out, err) = pmd3(&tool, &["apps", "list", "--userspace"], &sim).await;
    assert!(ok, "stdout {out}\nstderr {err}");
    let apps = json(&out);
    assert_eq!(
        apps[CRASH_TEST]["Entitlements"]["get-task-allow"], true,
        "{apps}"
    );
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().display().to_string();
    let args = ["crash", "pull", target.as_str(), "--userspace"];
    let (ok, out, err) = pmd3(&tool, &args, &sim).await;
    assert!(ok, "stdout {out}\nstderr {err}");
    let pulled = std::fs::read(dir.path().join("Big-2026-12-01-120000.ips")).unwrap();
    assert_eq!(pulled.len(), 300_000);
    let opened: Vec<String> = phone.opened().into_iter().map(|o| o.service).collect();
    for shim in [
        "com.apple.mobile.installation_proxy.shim.remote",
        "com.apple.crashreportcopymobile.shim.remote",
    ] {
        assert!(opened.iter().any(|s| s == shim), "{shim}: {opened:?}");
    }
}
