//! Live reads on the simulated iPhone keep the rules a read keeps (issue 28, items 4 and 5),
//! through the gateway over `phonelogs-iossim` (the real usbmuxd and lockdown wire, os_trace
//! per pid, installation_proxy):
//!
//! - a release build reinstalled over the development build while a wait runs (the follower
//!   looks the bundle up again and follows it) streams nothing to the agent unasked: the wait
//!   ends with the decision a read gets, the person's question;
//! - two tasks (two HTTP sessions) waiting on the same app share its follower, and one task's
//!   end leaves the other's wait running.
//!
//! And the iPhone's `<private>` (issue 27 item 7): a line shown that holds it is counted in the
//! message, with why and what the app's developer can change.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use phonelogs_driver::AppLogger;
use phonelogs_gateway::{
    Agent, Gateway, LiveHooks, LogsRequest, LogsResponse, Mode, Session, Status, TaskSpec,
};
use phonelogs_ios::{LockdownPhone, UsbmuxdBackend};
use phonelogs_iossim::{App, IosSim, Level, Signing, SimPhone};

/// Crash Test, a development build on the simulated phone: its reads need no approval.
const CRASH_TEST: &str = "dev.phonelogs.crashtest";

struct Rig {
    phone: SimPhone,
    _sim: IosSim,
    gateway: Gateway,
    device: String,
}

async fn rig() -> Rig {
    let phone = SimPhone::default_phone();
    phone.launch(CRASH_TEST).unwrap();
    let sim = IosSim::bind_loopback(None, phone.clone()).await.unwrap();
    let address = sim.addr();
    let mux = UsbmuxdBackend::parse(&address).unwrap();
    let gateway = Gateway::builder()
        .driver(Arc::new(LockdownPhone::new(Arc::new(mux))) as Arc<dyn AppLogger>)
        .build()
        .unwrap();
    let device = format!("{address}/{}", phone.profile().udid);
    Rig {
        phone,
        _sim: sim,
        gateway,
        device,
    }
}

fn task(rig: &Rig, agent: &str) -> Session {
    rig.gateway
        .start_task(TaskSpec::new(Agent::new(agent, Mode::ReadOnly)))
}

fn request(rig: &Rig) -> LogsRequest {
    LogsRequest {
        device: Some(rig.device.clone()),
        since: Some("1h".into()),
        ..LogsRequest::new(CRASH_TEST)
    }
}

fn waiting(rig: &Rig, text: &str, seconds: u32) -> LogsRequest {
    LogsRequest {
        since: Some("last".into()),
        wait_for: Some(text.into()),
        timeout: Some(seconds),
        ..request(rig)
    }
}

/// The app logs `text` from its running process.
fn log(rig: &Rig, text: &str) {
    let pid = rig.phone.pid_of(CRASH_TEST).unwrap();
    rig.phone
        .log(pid, Level::Default, Some((CRASH_TEST, "Live")), text);
}

/// Reads until a line the app logs shows (the first read starts the follower; its stream of
/// the app's pid opens at its next poll).
async fn read_until_following(rig: &Rig, session: &Session, canary: &str) -> LogsResponse {
    for n in 0..200 {
        log(rig, &format!("{canary} {n}"));
        let got = session.logs(request(rig)).await;
        assert_eq!(got.status, Status::Ok, "{}", got.message);
        if got.log.contains(canary) {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{canary} never came");
}

/// Hooks whose progress (about once a second into a wait) sets a flag.
fn progress_flag() -> (LiveHooks, Arc<AtomicBool>) {
    let waiting = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&waiting);
    let hooks = LiveHooks {
        progress: Some(Arc::new(move |_| flag.store(true, Ordering::SeqCst))),
        cancel: None,
    };
    (hooks, waiting)
}

async fn until(flag: &AtomicBool) {
    for _ in 0..400 {
        if flag.load(Ordering::SeqCst) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the wait never reported progress");
}

/// Item 4: the App Store build reinstalled over the development build during a wait (a new
/// bundle path, no `get-task-allow`) and started again; the follower follows it, and its
/// awaited line is not shown: the person is asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_build_reinstalled_during_a_wait_is_asked_about_not_streamed() {
    let rig = rig().await;
    let session = task(&rig, "agent");
    read_until_following(&rig, &session, "debug-build").await;
    let (hooks, waiting_now) = progress_flag();
    let wait = waiting(&rig, "ready", 40);
    let swap = async {
        until(&waiting_now).await;
        rig.phone.uninstall(CRASH_TEST);
        rig.phone.install(App::third_party(
            CRASH_TEST,
            "Crash Test",
            "CrashTest",
            "5E5E5E5E-0000-4000-8000-0000000000F1",
            "CrashTest.app",
            Signing::Store,
        ));
        rig.phone.launch(CRASH_TEST).unwrap();
        // The release build logs the awaited line until the wait is over (the follower finds
        // the moved bundle within seconds).
        for n in 0..400 {
            log(&rig, &format!("ready RELEASE-BUILD {n}"));
            tokio::time::sleep(Duration::from_millis(100)).await;
            if !waiting_now.load(Ordering::SeqCst) {
                break;
            }
        }
    };
    let call = async {
        let result = session.logs_live(wait, &hooks).await;
        waiting_now.store(false, Ordering::SeqCst);
        result
    };
    let (result, ()) = tokio::join!(call, swap);
    assert_eq!(result.status, Status::ApprovalPending, "{}", result.message);
    assert!(
        !format!("{result:?}").contains("RELEASE-BUILD"),
        "{result:?}"
    );
    session.end().await;
}

/// Item 5: two tasks read the app through one follower; while the second waits, the first
/// ends, and the line the second waits for still comes to it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_task_ending_leaves_another_tasks_wait_on_the_shared_follower() {
    let rig = rig().await;
    let first = task(&rig, "agent-a");
    let second = task(&rig, "agent-b");
    read_until_following(&rig, &first, "first-task").await;
    read_until_following(&rig, &second, "second-task").await;
    let (hooks, waiting_now) = progress_flag();
    let wait = waiting(&rig, "MARKER", 30);
    let other_ends = async {
        until(&waiting_now).await;
        first.end().await;
        // The follower's task ends at once when it is stopped; give it the time to.
        tokio::time::sleep(Duration::from_millis(300)).await;
        log(&rig, "MARKER after the first task ended");
    };
    let (result, ()) = tokio::join!(second.logs_live(wait, &hooks), other_ends);
    assert_eq!(result.status, Status::Ok, "{}", result.message);
    assert_eq!(result.matched, Some(true), "{}", result.message);
    assert!(result.log.contains("MARKER after"), "{}", result.log);
    second.end().await;
}

/// Issue 27 item 7: a value the phone hid shows as `<private>`; the message counts the lines
/// shown that hold it and says why and what to change in the app; a read without one says
/// nothing of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_values_on_the_iphone_are_counted_and_explained() {
    let rig = rig().await;
    let session = task(&rig, "agent");
    let plain = read_until_following(&rig, &session, "plain").await;
    assert!(!plain.message.contains("<private>"), "{}", plain.message);
    log(&rig, "signed in as <private> with token <private>");
    let mut got = session.logs(request(&rig)).await;
    for _ in 0..100 {
        if got.log.contains("signed in as") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        got = session.logs(request(&rig)).await;
    }
    assert_eq!(got.status, Status::Ok, "{}", got.message);
    assert!(got.log.contains("signed in as <private>"), "{}", got.log);
    assert!(
        got.message.contains("1 of the lines shown holds <private>")
            && got.message.contains("Xcode 26")
            && got.message.contains("privacy: .public"),
        "{}",
        got.message
    );
}

/// Issue 37 (review F6), end to end: the iPhone gives no install time. A store build's crash
/// report sits on the phone; the agent's read of it asks the person (the gateway sees the store
/// build). A development build is then installed over it (a new container, `get-task-allow`):
/// its pass shows its own report, never the store build's, and says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_development_build_over_a_store_build_does_not_show_the_store_builds_reports() {
    const HELPER: &str = "dev.phonelogs.crashtesthelper";
    let rig = rig().await;
    rig.phone
        .set_report_delays(Duration::ZERO, Duration::from_millis(20));
    let crashes = || LogsRequest {
        kind: phonelogs_gateway::LogsKind::Crashes,
        device: Some(rig.device.clone()),
        since: Some("1h".into()),
        ..LogsRequest::new(HELPER)
    };
    let pid = rig.phone.launch(HELPER).unwrap();
    let store = rig.phone.crash(
        pid,
        phonelogs_iossim::CrashKind::Exception("STORE-BUILD-REASON".into()),
    );
    assert!(store.is_some());
    let session = task(&rig, "agent");
    let asked = session.logs(crashes()).await;
    assert_eq!(asked.status, Status::ApprovalPending, "{}", asked.message);

    rig.phone.reinstall(HELPER, Signing::Development).unwrap();
    // The development build's first read: the store build's report is left out, said so.
    let first = session.logs(crashes()).await;
    assert_eq!(first.status, Status::Ok, "{}", first.message);
    assert!(!format!("{first:?}").contains("STORE-BUILD"), "{first:?}");
    assert!(
        first
            .message
            .contains("when phonelogs first saw this development build"),
        "{}",
        first.message
    );
    // Its own report, written after, shows.
    let pid = rig.phone.launch(HELPER).unwrap();
    let later = std::time::SystemTime::now() + Duration::from_secs(2);
    let dev = phonelogs_iossim::CrashKind::Exception("DEV-BUILD-REASON".into());
    rig.phone.crash_at(pid, dev, later, false).unwrap();
    for _ in 0..200 {
        let read = session.logs(crashes()).await;
        assert_eq!(read.status, Status::Ok, "{}", read.message);
        assert!(!format!("{read:?}").contains("STORE-BUILD"), "{read:?}");
        if format!("{read:?}").contains("DEV-BUILD-REASON") {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the development build's report never showed");
}

/// Issue 37 (item 9), the case the floor cannot cover: the gateway never saw the store build
/// (it was installed, and crashed, before phonelogs first looked). The development build's
/// pass cannot tell when it was installed, but the store build's `.ips` names its build
/// (`build_version`, `bundleInfo.CFBundleVersion`, as a real phone writes them), which is not
/// the installed one's: that report is left out and counted; the development build's own shows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_builds_report_the_gateway_never_saw_is_not_shown_on_a_development_pass() {
    const HELPER: &str = "dev.phonelogs.crashtesthelper";
    let rig = rig().await;
    rig.phone
        .set_report_delays(Duration::ZERO, Duration::from_millis(20));
    let store_build = rig.phone.app(HELPER).unwrap().build;
    let pid = rig.phone.launch(HELPER).unwrap();
    let store = phonelogs_iossim::CrashKind::Exception("STORE-BUILD-REASON".into());
    assert!(rig.phone.crash(pid, store).is_some());
    // The development build, another CFBundleVersion, goes on before the gateway reads.
    rig.phone
        .install_build(HELPER, Signing::Development, "408")
        .unwrap();
    assert_ne!(store_build, "408");
    let crashes = || LogsRequest {
        kind: phonelogs_gateway::LogsKind::Crashes,
        device: Some(rig.device.clone()),
        since: Some("1h".into()),
        ..LogsRequest::new(HELPER)
    };
    let session = task(&rig, "agent");
    let first = session.logs(crashes()).await;
    assert_eq!(first.status, Status::Ok, "{}", first.message);
    assert!(!format!("{first:?}").contains("STORE-BUILD"), "{first:?}");
    let said = "1 crash report was of another build of Crash Test Helper than this development build (408) left out";
    assert!(first.message.contains(said), "{}", first.message);
    // Its own report shows.
    let pid = rig.phone.launch(HELPER).unwrap();
    let later = std::time::SystemTime::now() + Duration::from_secs(2);
    let dev = phonelogs_iossim::CrashKind::Exception("DEV-BUILD-REASON".into());
    rig.phone.crash_at(pid, dev, later, false).unwrap();
    for _ in 0..200 {
        let read = session.logs(crashes()).await;
        assert_eq!(read.status, Status::Ok, "{}", read.message);
        assert!(!format!("{read:?}").contains("STORE-BUILD"), "{read:?}");
        if format!("{read:?}").contains("DEV-BUILD-REASON") {
            assert!(read.message.contains(said), "{}", read.message);
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the development build's report never showed");
}
