//! libimobiledevice's own tools (Debian's `libimobiledevice-utils` and `ideviceinstaller`)
//! against the simulator: usbmuxd, lockdown with TLS, syslog_relay, the crash mover and AFC,
//! installation_proxy; on iOS 16.7.10 and 26.1.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::*;
use phonelogs_iossim::{CrashKind, IosVersion, Level};

async fn idevice_id_lists_the_phone(ios: IosVersion) {
    let Some(tool) = tool("idevice_id") else {
        return;
    };
    let sim = sim_on(ios).await;
    let home = tempfile::tempdir().unwrap();
    let output = run(&tool, &["-l"], &sim, home.path(), Duration::from_secs(20)).await;
    let (out, err) = text(&output);
    assert!(output.status.success(), "stdout {out}\nstderr {err}");
    assert_eq!(out.trim(), sim.phone().profile().udid);
}

async fn ideviceinfo_answers_through_lockdown_and_tls(ios: IosVersion) {
    let Some(tool) = tool("ideviceinfo") else {
        return;
    };
    let sim = sim_on(ios).await;
    let home = tempfile::tempdir().unwrap();
    let output = run(
        &tool,
        &["-k", "ProductVersion"],
        &sim,
        home.path(),
        Duration::from_secs(20),
    )
    .await;
    let (out, err) = text(&output);
    assert!(output.status.success(), "stdout {out}\nstderr {err}");
    assert_eq!(out.trim(), ios.product_version());
}

async fn idevicesyslog_prints_the_phones_lines(ios: IosVersion) {
    let Some(tool) = tool("idevicesyslog") else {
        return;
    };
    let sim = sim_on(ios).await;
    let home = tempfile::tempdir().unwrap();
    let phone = sim.phone().clone();
    let pid = phone.launch("dev.phonelogs.crashtest").unwrap();
    let (out, err) = run_for(
        &tool,
        &[],
        &sim,
        home.path(),
        Duration::from_millis(200),
        async {
            for i in 0..40 {
                tokio::time::sleep(Duration::from_millis(50)).await;
                phone.log(
                    pid,
                    Level::Error,
                    Some(("dev.phonelogs.crashtest", "net")),
                    &format!("request {i} failed"),
                );
            }
        },
    )
    .await;
    assert!(
        out.contains("CrashTest[") && out.contains("<Error>: request 39 failed"),
        "stdout {out}\nstderr {err}"
    );
}

async fn idevicecrashreport_copies_reports_that_parse(ios: IosVersion) {
    let Some(tool) = tool("idevicecrashreport") else {
        return;
    };
    let sim = sim_on(ios).await;
    let phone = sim.phone().clone();
    let pid = phone.launch("dev.phonelogs.crashtest").unwrap();
    let name = phone
        .crash(
            pid,
            CrashKind::Watchdog("scene-update watchdog transgression:".into()),
        )
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().to_str().unwrap().to_owned();
    let output = run(
        &tool,
        &["-k", "-e", &dest],
        &sim,
        home.path(),
        Duration::from_secs(30),
    )
    .await;
    let (out, err) = text(&output);
    assert!(output.status.success(), "stdout {out}\nstderr {err}");
    let copied = std::fs::read(dir.path().join(&name))
        .unwrap_or_else(|e| panic!("{name}: {e}; stdout {out}"));
    let (header, body) = copied.split_at(copied.iter().position(|b| *b == b'\n').unwrap());
    let header: serde_json::Value = serde_json::from_slice(header).unwrap();
    assert_eq!(header["bug_type"], "309");
    assert_eq!(header["bundleID"], "dev.phonelogs.crashtest");
    let body: serde_json::Value = serde_json::from_slice(body).unwrap();
    assert_eq!(body["termination"]["code"], 2_343_432_205u64);
    // The retired report of another app came along too, in its directory.
    assert!(dir.path().join("Retired").is_dir(), "stdout {out}");
    // `-k`: nothing was removed from the phone.
    assert!(phone.report_files().iter().any(|f| f.path == name));
}

async fn ideviceinstaller_lists_the_apps(ios: IosVersion) {
    let Some(tool) = tool("ideviceinstaller") else {
        return;
    };
    let sim = sim_on(ios).await;
    let home = tempfile::tempdir().unwrap();
    let output = run(&tool, &["-l"], &sim, home.path(), Duration::from_secs(20)).await;
    let (out, err) = text(&output);
    assert!(output.status.success(), "stdout {out}\nstderr {err}");
    for app in [
        "dev.phonelogs.crashtest",
        "com.spotify.client",
        "com.example.appx",
    ] {
        assert!(out.contains(app), "{app} missing from\n{out}");
    }
    // `-l` lists user apps only.
    assert!(!out.contains("com.apple.Preferences"), "{out}");
}

/// Each check on the default release (16.7.10) and on 26.1, where lockdown still serves
/// everything they use.
mod releases {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn idevice_id_lists_the_phone_on_16_7() {
        super::idevice_id_lists_the_phone(IosVersion::V16_7_10).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn idevice_id_lists_the_phone_on_26_1() {
        super::idevice_id_lists_the_phone(IosVersion::V26_1).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn ideviceinfo_answers_through_lockdown_and_tls_on_16_7() {
        super::ideviceinfo_answers_through_lockdown_and_tls(IosVersion::V16_7_10).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn ideviceinfo_answers_through_lockdown_and_tls_on_26_1() {
        super::ideviceinfo_answers_through_lockdown_and_tls(IosVersion::V26_1).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn idevicesyslog_prints_the_phones_lines_on_16_7() {
        super::idevicesyslog_prints_the_phones_lines(IosVersion::V16_7_10).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn idevicesyslog_prints_the_phones_lines_on_26_1() {
        super::idevicesyslog_prints_the_phones_lines(IosVersion::V26_1).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn idevicecrashreport_copies_reports_that_parse_on_16_7() {
        super::idevicecrashreport_copies_reports_that_parse(IosVersion::V16_7_10).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn idevicecrashreport_copies_reports_that_parse_on_26_1() {
        super::idevicecrashreport_copies_reports_that_parse(IosVersion::V26_1).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn ideviceinstaller_lists_the_apps_on_16_7() {
        super::ideviceinstaller_lists_the_apps(IosVersion::V16_7_10).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn ideviceinstaller_lists_the_apps_on_26_1() {
        super::ideviceinstaller_lists_the_apps(IosVersion::V26_1).await;
    }
}
