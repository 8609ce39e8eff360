//! The gateway's memory does not grow with its history: thousands of `phone_logs` calls, each a
//! history row in the on-disk store, leave the process's resident memory flat once the store's
//! bounded caches are warm. The driver here keeps nothing per call, so any growth is the
//! gateway's own.

// Tests may unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use async_trait::async_trait;
use phonelogs_driver::{
    AppId, AppInfo, AppLogger, Capabilities, CrashReport, DeviceId, DeviceInfo, DeviceState,
    LogLevel, LogLine, LogQuery, LogResult, Platform, Result,
};
use phonelogs_gateway::{Gateway, LogsKind, LogsRequest, TaskSpec};
use phonelogs_policy::{Agent, Mode};
use time::OffsetDateTime;
use time::macros::datetime;

const START: OffsetDateTime = datetime!(2026-11-30 10:00 UTC);

/// A phone with one development build that logs one line, remembering nothing.
struct Forgetful;

#[async_trait]
impl AppLogger for Forgetful {
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            platform: Platform::Android,
            logs: true,
            crashes: true,
            listener: false,
            debugger: false,
            log_history: true,
            line_uids: true,
            reports_name_package: true,
        }
    }

    async fn devices(&self) -> Result<Vec<DeviceInfo>> {
        Ok(vec![DeviceInfo {
            id: DeviceId::new("emulator-5554"),
            platform: Platform::Android,
            model: Some("Pixel 8".into()),
            state: DeviceState::Online,
        }])
    }

    async fn app_info(&self, _device: &DeviceId, app: &AppId) -> Result<AppInfo> {
        Ok(AppInfo {
            app: app.clone(),
            label: Some("Crash Test".into()),
            system: false,
            dev_build: true,
            uid: Some(10123),
            shared_uid: false,
            version: None,
            installed_at: None,
            install_id: None,
        })
    }

    async fn app_logs(
        &self,
        _device: &DeviceId,
        _app: &AppId,
        _query: &LogQuery,
    ) -> Result<LogResult> {
        Ok(LogResult {
            lines: vec![LogLine {
                time: START,
                level: LogLevel::Info,
                tag: "CrashTest".into(),
                text: "started".into(),
                pid: Some(4242),
                tid: Some(4242),
                uid: Some(10123),
            }],
            omitted: 0,
            mark: None,
            processes: Vec::new(),
            notices: Vec::new(),
        })
    }

    async fn app_crashes(
        &self,
        _device: &DeviceId,
        _app: &AppId,
        _since: OffsetDateTime,
        _limit: usize,
    ) -> Result<Vec<CrashReport>> {
        Ok(Vec::new())
    }

    async fn dev_build(&self, _device: &DeviceId, _app: &AppId) -> Result<bool> {
        Ok(true)
    }
}

/// The process's resident memory in KiB (Linux), or `None` elsewhere.
fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

#[tokio::test(flavor = "current_thread")]
async fn memory_stays_flat_as_the_history_grows() {
    let Some(_) = rss_kib() else {
        eprintln!("skipped: no /proc/self/status on this system");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let gateway = Gateway::builder()
        .driver(Arc::new(Forgetful))
        .state_dir(dir.path())
        .clock(|| START)
        .build()
        .unwrap();
    let session = gateway.start_task(TaskSpec::new(Agent::new("agent", Mode::Full)));
    let request = LogsRequest {
        app: "dev.phonelogs.crashtest".into(),
        kind: LogsKind::Logs,
        since: None,
        filter: None,
        exclude: None,
        tag: None,
        fold: None,
        level: None,
        limit: None,
        device: None,
        approval_id: None,
        wait_for: None,
        timeout: None,
        context: None,
    };
    let run = async |calls: usize| {
        for _ in 0..calls {
            let response = session.logs(request.clone()).await;
            assert_eq!(response.lines.len(), 1, "{}", response.message);
        }
    };
    // Warm up: the store's caches fill to their bound.
    run(3_000).await;
    let warm = rss_kib().unwrap();
    run(12_000).await;
    let after = rss_kib().unwrap();
    let steps = gateway
        .store()
        .history(phonelogs_gateway::HistoryFilter::default())
        .unwrap()
        .len();
    eprintln!(
        "resident memory: {warm} KiB warm, {after} KiB after 12,000 more calls ({steps} steps listed)"
    );
    assert!(
        after.saturating_sub(warm) < 1024,
        "resident memory grew by {} KiB over 12,000 calls ({warm} -> {after} KiB)",
        after.saturating_sub(warm)
    );
}
