//! pymobiledevice3 against the simulator: os_trace_relay for one pid, the crash report list
//! over AFC, and installation_proxy with entitlements; over plain lockdown on 16.7.10 and 26.1.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::*;
use phonelogs_iossim::{CrashKind, IosVersion, Level};

async fn syslog_live_with_a_pid_prints_only_that_process(ios: IosVersion) {
    let Some(tool) = tool("pymobiledevice3") else {
        return;
    };
    let sim = sim_on(ios).await;
    let phone = sim.phone().clone();
    let pid = phone.launch("dev.phonelogs.crashtest").unwrap();
    let other = phone.pid_of("com.spotify.client").unwrap();
    let home = tempfile::tempdir().unwrap();
    let pid_arg = pid.to_string();
    let args = ["syslog", "live", "--pid", pid_arg.as_str()];
    let (out, err) = run_for(
        &tool,
        &args,
        &sim,
        home.path(),
        Duration::from_millis(500),
        async {
            // Python needs a moment to start and open the stream.
            for _ in 0..100 {
                if phone.streamed_pids().contains(&i64::from(pid)) {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            for i in 0..10 {
                phone.log(
                    pid,
                    Level::Error,
                    Some(("dev.phonelogs.crashtest", "net")),
                    &format!("own line {i}"),
                );
                phone.log(
                    other,
                    Level::Error,
                    Some(("com.spotify.client", "net")),
                    &format!("other line {i}"),
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        },
    )
    .await;
    assert!(out.contains("own line 9"), "stdout {out}\nstderr {err}");
    assert!(!out.contains("other line"), "{out}");
    // The phone filtered by pid: the stream asked for this pid only.
    assert_eq!(phone.streamed_pids(), [i64::from(pid)]);
}

async fn crash_ls_lists_the_reports(ios: IosVersion) {
    let Some(tool) = tool("pymobiledevice3") else {
        return;
    };
    let sim = sim_on(ios).await;
    let phone = sim.phone().clone();
    let pid = phone.launch("dev.phonelogs.crashtest").unwrap();
    let name = phone
        .crash(pid, CrashKind::Exception("boom".into()))
        .unwrap();
    // The mover has not run: the new report is not listed yet.
    let home = tempfile::tempdir().unwrap();
    let output = run(
        &tool,
        &["crash", "ls"],
        &sim,
        home.path(),
        Duration::from_secs(60),
    )
    .await;
    let (out, err) = text(&output);
    assert!(output.status.success(), "stdout {out}\nstderr {err}");
    assert!(out.contains("Retired"), "{out}");
    assert!(!out.contains(&name), "{out}");
    // `crash flush` runs the mover; then it is there.
    let output = run(
        &tool,
        &["crash", "flush"],
        &sim,
        home.path(),
        Duration::from_secs(60),
    )
    .await;
    assert!(output.status.success(), "{:?}", text(&output));
    let output = run(
        &tool,
        &["crash", "ls"],
        &sim,
        home.path(),
        Duration::from_secs(60),
    )
    .await;
    let (out, err) = text(&output);
    assert!(out.contains(&name), "stdout {out}\nstderr {err}");
}

async fn apps_list_shows_the_entitlements(ios: IosVersion) {
    let Some(tool) = tool("pymobiledevice3") else {
        return;
    };
    let sim = sim_on(ios).await;
    let home = tempfile::tempdir().unwrap();
    let output = run(
        &tool,
        &["apps", "list"],
        &sim,
        home.path(),
        Duration::from_secs(60),
    )
    .await;
    let (out, err) = text(&output);
    assert!(output.status.success(), "stdout {out}\nstderr {err}");
    let start = out.find('{').unwrap_or_else(|| panic!("no JSON in {out}"));
    let apps: serde_json::Value = serde_json::from_str(&out[start..]).unwrap();
    let dev = &apps["dev.phonelogs.crashtest"]["Entitlements"];
    assert_eq!(dev["get-task-allow"], true, "{dev}");
    let store = &apps["com.spotify.client"]["Entitlements"];
    assert!(store.get("get-task-allow").is_none(), "{store}");
    assert_eq!(apps["com.apple.Preferences"]["ApplicationType"], "System");
}

/// Each check on the default release (16.7.10) and on 26.1, where lockdown still serves
/// everything they use.
mod releases {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn syslog_live_with_a_pid_prints_only_that_process_on_16_7() {
        super::syslog_live_with_a_pid_prints_only_that_process(IosVersion::V16_7_10).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn syslog_live_with_a_pid_prints_only_that_process_on_26_1() {
        super::syslog_live_with_a_pid_prints_only_that_process(IosVersion::V26_1).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn crash_ls_lists_the_reports_on_16_7() {
        super::crash_ls_lists_the_reports(IosVersion::V16_7_10).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn crash_ls_lists_the_reports_on_26_1() {
        super::crash_ls_lists_the_reports(IosVersion::V26_1).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn apps_list_shows_the_entitlements_on_16_7() {
        super::apps_list_shows_the_entitlements(IosVersion::V16_7_10).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn apps_list_shows_the_entitlements_on_26_1() {
        super::apps_list_shows_the_entitlements(IosVersion::V26_1).await;
    }
}
