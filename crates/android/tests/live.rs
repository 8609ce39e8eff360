//! Live reads end to end: the gateway over this driver, on the simulated phone behind a
//! private real adb server (`/usr/bin/adb`; skipped, saying why, without it). Cursors add up
//! to the app's lines with lines arriving in between, a wait is satisfied by a line written
//! later through one streaming `logcat`, a wait times out, a cancel closes the stream on the
//! phone (its open-stream counter back where it was), other apps' lines never appear, and a
//! reboot between two calls is said.

// Tests may unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{ThroughAdb, config};
use phonelogs_adbsim::{Priority, Profile, SimPhone};
use phonelogs_android::AdbPhone;
use phonelogs_driver::AppLogger;
use phonelogs_gateway::{
    Agent, CancellationToken, Gateway, LiveHooks, LogsRequest, Mode, Session, Status, TaskSpec,
};
use proptest::prelude::*;

const CRASH_TEST: &str = "dev.phonelogs.crashtest";
const OTHER: &str = "com.spotify.music";

struct Rig {
    sim: ThroughAdb,
    gateway: Gateway,
}

async fn rig() -> Option<Rig> {
    let phone = SimPhone::with_profile(Profile::default());
    let sim = ThroughAdb::start(phone, |_| {}).await?;
    let driver = Arc::new(AdbPhone::new(config(sim.server.port)));
    let gateway = Gateway::builder()
        .driver(driver as Arc<dyn AppLogger>)
        .build()
        .unwrap();
    Some(Rig { sim, gateway })
}

fn session(rig: &Rig) -> Session {
    rig.gateway
        .start_task(TaskSpec::new(Agent::new("agent", Mode::ReadOnly)))
}

fn request(rig: &Rig, tag: &str) -> LogsRequest {
    LogsRequest {
        device: Some(rig.sim.device.to_string()),
        since: Some("last".into()),
        filter: Some(tag.into()),
        // Every line its own row: identical texts in a row would fold.
        fold: Some(false),
        ..LogsRequest::new(CRASH_TEST)
    }
}

fn waiting(rig: &Rig, tag: &str, text: &str, seconds: u32) -> LogsRequest {
    LogsRequest {
        wait_for: Some(text.into()),
        timeout: Some(seconds),
        ..request(rig, tag)
    }
}

/// Waits until `ready` holds, however long the machine takes (the harness ends a test that
/// hangs): polled, as the simulated phone's stream count has no event of its own.
async fn until(mut ready: impl FnMut() -> bool) {
    while !ready() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn texts(log: &str) -> Vec<String> {
    log.lines()
        .filter_map(|l| l.rsplit_once(": ").map(|(_, t)| t.to_owned()))
        .collect()
}

#[test]
fn cursor_reads_add_up_to_the_apps_lines_through_real_adb() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let Some(rig) = runtime.block_on(rig()) else {
        return;
    };
    let case = std::sync::atomic::AtomicUsize::new(0);
    let mut config = ProptestConfig::with_cases(6);
    config.failure_persistence = None;
    proptest!(config, |(batches in prop::collection::vec(
        prop::collection::vec((any::<bool>(), 0u8..3), 0..7),
        1..5,
    ))| {
        // Each case its own task and tag, on the one phone and server.
        let tag = format!("Live{}", case.fetch_add(1, std::sync::atomic::Ordering::SeqCst));
        let session = session(&rig);
        let mut expected = Vec::new();
        let mut got = Vec::new();
        for batch in &batches {
            // Written back to back, so several lines usually share a millisecond.
            for (ours, text) in batch {
                let text = format!("t{text}");
                let package = if *ours { CRASH_TEST } else { OTHER };
                rig.sim.phone.log(package, Priority::Info, &tag, &text).unwrap();
                if *ours {
                    expected.push(text);
                }
            }
            let result = runtime.block_on(session.logs(request(&rig, &tag)));
            prop_assert_eq!(result.status, Status::Ok, "{}", result.message);
            got.extend(texts(&result.log));
        }
        prop_assert_eq!(got, expected);
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_is_satisfied_by_a_line_written_two_seconds_later() {
    let Some(rig) = rig().await else { return };
    let session = session(&rig);
    let first = session.logs(request(&rig, "Wait")).await;
    assert_eq!(first.status, Status::Ok, "{}", first.message);
    let before = rig.sim.phone.open_logcat_streams();
    let phone = rig.sim.phone.clone();
    let writer = tokio::spawn(async move {
        phone
            .log(OTHER, Priority::Info, "Wait", "ready (another app)")
            .unwrap();
        tokio::time::sleep(Duration::from_secs(2)).await;
        phone
            .log(CRASH_TEST, Priority::Info, "Wait", "loading")
            .unwrap();
        phone
            .log(CRASH_TEST, Priority::Info, "Wait", "ready")
            .unwrap();
    });
    let started = Instant::now();
    let result = session.logs(waiting(&rig, "Wait", "ready", 20)).await;
    writer.await.unwrap();
    // The line came two seconds after the wait began; the match (not the 20 s timeout) ended
    // it, which `matched` says, however fast the machine.
    assert!(started.elapsed() >= Duration::from_secs(2));
    assert_eq!(result.status, Status::Ok, "{}", result.message);
    assert_eq!(result.matched, Some(true), "{}", result.message);
    assert_eq!(texts(&result.log), ["loading", "ready"]);
    // The stream is closed on the phone once the call is over.
    until(|| rig.sim.phone.open_logcat_streams() <= before).await;
    assert_eq!(rig.sim.phone.open_logcat_streams(), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_times_out_with_what_came_and_a_cancel_closes_the_stream() {
    let Some(rig) = rig().await else { return };
    let session = session(&rig);
    let before = rig.sim.phone.open_logcat_streams();
    let phone = rig.sim.phone.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        phone
            .log(CRASH_TEST, Priority::Info, "Quiet", "busy")
            .unwrap();
    });
    let result = session.logs(waiting(&rig, "Quiet", "never", 2)).await;
    assert_eq!(result.status, Status::Ok, "{}", result.message);
    assert_eq!(result.matched, Some(false));
    assert_eq!(texts(&result.log), ["busy"]);

    let cancel = CancellationToken::new();
    let hooks = LiveHooks {
        progress: None,
        cancel: Some(cancel.clone()),
    };
    let wait = session.logs_live(waiting(&rig, "Quiet", "never", 60), &hooks);
    let phone = rig.sim.phone.clone();
    let watch = async {
        until(|| phone.open_logcat_streams() != before).await;
        let during = phone.open_logcat_streams();
        cancel.cancel();
        during
    };
    let (result, during) = tokio::join!(wait, watch);
    assert_eq!(during, before + 1, "one streaming logcat while waiting");
    // Ended by the cancel, not the 60 s timeout.
    assert_eq!(result.matched, Some(false));
    assert!(result.message.contains("cancelled"), "{}", result.message);
    until(|| rig.sim.phone.open_logcat_streams() <= before).await;
    assert_eq!(
        rig.sim.phone.open_logcat_streams(),
        before,
        "the cancel closed it"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reboot_between_two_calls_is_said() {
    let Some(rig) = rig().await else { return };
    let session = session(&rig);
    rig.sim
        .phone
        .log(CRASH_TEST, Priority::Info, "Boot", "one")
        .unwrap();
    let first = session.logs(request(&rig, "Boot")).await;
    assert_eq!(texts(&first.log), ["one"], "{}", first.message);
    rig.sim.phone.reboot();
    rig.sim
        .phone
        .log(CRASH_TEST, Priority::Info, "Boot", "two")
        .unwrap();
    let second = session.logs(request(&rig, "Boot")).await;
    assert_eq!(second.status, Status::Ok, "{}", second.message);
    assert!(second.message.contains("restarted"), "{}", second.message);
    assert_eq!(texts(&second.log), ["two"]);
}

/// Item 4 of issue 28, end to end through the real adb server: a release build installed over
/// the development build while a wait streams (`adb install -r`: the same uid; the simulated
/// phone even keeps the app's process running) logs the awaited line, then starts again as a
/// new process. The wait ends with the decision a read gets: the person is asked, and not a
/// single line of the release build, nor one read before it in the call, reaches the agent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_build_installed_during_a_wait_streams_nothing_unasked() {
    let Some(rig) = rig().await else { return };
    let session = session(&rig);
    let before = rig.sim.phone.open_logcat_streams();
    let phone = rig.sim.phone.clone();
    let app_id = phone.uid_of(CRASH_TEST, 0).unwrap() % 100_000;
    let writer = tokio::spawn(async move {
        // Once the wait streams.
        until(|| phone.open_logcat_streams() != before).await;
        phone
            .log(CRASH_TEST, Priority::Info, "Swap", "debug build line")
            .unwrap();
        let mut release = phonelogs_adbsim::Package::new(CRASH_TEST, app_id);
        release.target_sdk = 29;
        phone.install(release);
        phone
            .log(
                CRASH_TEST,
                Priority::Info,
                "Swap",
                "ready RELEASE-SAME-PROCESS",
            )
            .unwrap();
        phone.launch(CRASH_TEST).unwrap();
        phone
            .log(
                CRASH_TEST,
                Priority::Info,
                "Swap",
                "ready RELEASE-NEW-PROCESS",
            )
            .unwrap();
    });
    let result = session.logs(waiting(&rig, "Swap", "ready", 30)).await;
    writer.await.unwrap();
    assert_eq!(result.status, Status::ApprovalPending, "{}", result.message);
    let shown = format!("{result:?}");
    for line in ["RELEASE", "debug build line"] {
        assert!(!shown.contains(line), "{line} reached the agent: {shown}");
    }
    until(|| rig.sim.phone.open_logcat_streams() <= before).await;
    assert_eq!(rig.sim.phone.open_logcat_streams(), before);
}
