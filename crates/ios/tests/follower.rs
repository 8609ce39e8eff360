//! The follower over fake services, on tokio's paused clock: which processes get streams,
//! lingering, restarts, a moved bundle, stalled and closed streams, launches, the line cap.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::*;
use phonelogs_driver::{AppId, LogLevel, LogNotice, LogQuery};
use phonelogs_ios::{Follower, FollowerConfig};
use time::OffsetDateTime;
use tokio::time::sleep;

const APP: &str = "dev.phonelogs.crashtest";
const T0: u32 = 1_764_496_800;

fn exe() -> String {
    format!("{BUNDLE}/CrashTest")
}

fn extension() -> String {
    format!("{BUNDLE}/PlugIns/Widget.appex/Widget")
}

fn setup() -> FakePhone {
    let phone = FakePhone::new();
    phone.install(record(APP, BUNDLE, true));
    phone
}

fn start(phone: &FakePhone) -> Follower {
    Follower::start(
        record(APP, BUNDLE, true),
        phone.services(),
        FollowerConfig::default(),
    )
}

fn all() -> LogQuery {
    LogQuery::since(OffsetDateTime::UNIX_EPOCH, 100_000)
}

fn texts(follower: &Follower) -> Vec<String> {
    follower
        .lines(&all())
        .lines
        .into_iter()
        .map(|l| l.text)
        .collect()
}

async fn settle() {
    // Lets the follower's tasks run; on the paused clock this costs no wall time.
    sleep(Duration::from_millis(10)).await;
}

#[tokio::test(start_paused = true)]
async fn streams_open_per_pid_for_the_app_and_its_extensions_only() {
    let phone = setup();
    phone.spawn_process(100, &exe());
    phone.spawn_process(101, &extension());
    phone.spawn_process(
        200,
        "/private/var/containers/Bundle/Application/FFFF/Store.app/Store",
    );
    phone.spawn_process(300, "/usr/libexec/backboardd");
    phone.add_backlog(raw(100, T0, INFO, &exe(), "app started"));
    phone.add_backlog(raw(101, T0 + 1, DEBUG, &extension(), "widget timeline"));
    phone.add_backlog(raw(200, T0, ERROR, "/x/Store", "OTHER-APP-SECRET"));
    let follower = start(&phone);
    settle().await;

    let mut opened = phone.opened();
    opened.sort_unstable();
    assert_eq!(opened, [100, 101]);
    let requests = phone.state.lock().unwrap().requests.clone();
    for request in &requests {
        assert_eq!(
            request.get("Request").and_then(|v| v.as_string()),
            Some("StartActivity")
        );
        let pid = request
            .get("Pid")
            .and_then(|v| v.as_signed_integer())
            .unwrap();
        assert!(pid == 100 || pid == 101, "a stream was asked for pid {pid}");
        assert_eq!(
            request
                .get("MessageFilter")
                .and_then(|v| v.as_signed_integer()),
            Some(0xFFFF)
        );
        assert_eq!(
            request
                .get("StreamFlags")
                .and_then(|v| v.as_signed_integer()),
            Some(0x3C)
        );
    }
    assert_eq!(texts(&follower), ["app started", "widget timeline"]);

    // A line of another pid on the app's stream is dropped: the pid is checked again.
    phone.log_on(
        100,
        &raw(
            300,
            T0 + 2,
            ERROR,
            "/usr/libexec/backboardd",
            "SYSTEM-LINE-SECRET",
        ),
    );
    phone.log(&raw(100, T0 + 3, FAULT, &exe(), "fatal: out of range"));
    settle().await;
    let lines = follower.lines(&all()).lines;
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[2].level, LogLevel::Fatal);
    assert_eq!(lines[2].tag, "CrashTest");
    assert!(lines.iter().all(|l| !l.text.contains("SECRET")));
}

#[tokio::test(start_paused = true)]
async fn a_stream_lingers_three_seconds_after_its_process_is_gone() {
    let phone = setup();
    phone.spawn_process(100, &exe());
    let follower = start(&phone);
    settle().await;
    assert_eq!(follower.status().open_streams, [100]);

    phone.kill(100);
    // The next poll (at 1 s) sees it gone; lines still arrive for 3 s after that.
    sleep(Duration::from_millis(1_100)).await;
    phone.log(&raw(100, T0, ERROR, &exe(), "last words"));
    sleep(Duration::from_millis(1_800)).await;
    assert_eq!(follower.status().open_streams, [100], "closed before 3 s");
    assert_eq!(texts(&follower), ["last words"]);
    let span = |follower: &Follower| follower.lines(&all()).processes;
    assert_eq!(
        span(&follower),
        [phonelogs_driver::ProcessSpan {
            pid: 100,
            name: Some("CrashTest".into()),
            ended: false
        }]
    );
    sleep(Duration::from_millis(1_300)).await;
    assert!(
        follower.status().open_streams.is_empty(),
        "still open after 3 s"
    );
    // The stream ended with its process: a result's process marker says so.
    assert!(span(&follower)[0].ended);
    phone.log(&raw(100, T0 + 9, ERROR, &exe(), "after the linger"));
    settle().await;
    assert_eq!(texts(&follower), ["last words"]);
}

#[tokio::test(start_paused = true)]
async fn a_restarted_process_gets_a_new_stream() {
    let phone = setup();
    phone.spawn_process(100, &exe());
    let follower = start(&phone);
    settle().await;
    phone.kill(100);
    phone.spawn_process(150, &exe());
    phone.add_backlog(raw(150, T0 + 5, INFO, &exe(), "second run"));
    sleep(Duration::from_millis(1_000)).await;
    assert_eq!(phone.opened(), [100, 150]);
    assert_eq!(follower.status().open_streams, [100, 150]);
    assert_eq!(texts(&follower), ["second run"]);
    sleep(Duration::from_secs(4)).await;
    assert_eq!(follower.status().open_streams, [150]);
}

#[tokio::test(start_paused = true)]
async fn a_moved_bundle_is_looked_up_again_at_most_every_five_seconds() {
    let phone = setup();
    let follower = start(&phone);
    // No process matches: look-ups happen, but not more often than every 5 s.
    sleep(Duration::from_millis(12_500)).await;
    let relookups = follower.status().relookups;
    assert!(
        (2..=3).contains(&relookups),
        "{relookups} look-ups in 12.5 s"
    );

    // A reinstall moves the bundle; the follower finds the new path on its next look-up.
    let moved = "/private/var/containers/Bundle/Application/99999999-0000-4000-8000-000000000002/CrashTest.app";
    phone.install(record(APP, moved, true));
    phone.spawn_process(400, &format!("{moved}/CrashTest"));
    phone.add_backlog(raw(
        400,
        T0,
        INFO,
        &format!("{moved}/CrashTest"),
        "after reinstall",
    ));
    sleep(Duration::from_secs(6)).await;
    assert_eq!(follower.status().bundle_path, moved);
    assert_eq!(phone.opened(), [400]);
    assert_eq!(texts(&follower), ["after reinstall"]);
    // Once a process matches, no more look-ups are made.
    let settled = follower.status().relookups;
    sleep(Duration::from_secs(20)).await;
    assert_eq!(follower.status().relookups, settled);
}

#[tokio::test(start_paused = true)]
async fn a_stalled_stream_does_not_hold_up_the_others() {
    let phone = setup();
    phone.set_mode(100, StreamMode::Stall);
    phone.spawn_process(100, &exe());
    phone.spawn_process(101, &extension());
    let follower = start(&phone);
    settle().await;
    phone.log(&raw(101, T0, INFO, &extension(), "widget still talks"));
    sleep(Duration::from_secs(5)).await;
    assert_eq!(texts(&follower), ["widget still talks"]);
    assert_eq!(follower.status().open_streams, [100, 101]);
    // Its process ending closes even a stalled stream.
    phone.kill(100);
    sleep(Duration::from_secs(5)).await;
    assert_eq!(follower.status().open_streams, [101]);
}

#[tokio::test(start_paused = true)]
async fn a_closed_stream_is_opened_again_while_its_process_runs() {
    let phone = setup();
    phone.set_mode(100, StreamMode::Close);
    phone.spawn_process(100, &exe());
    let _follower = start(&phone);
    sleep(Duration::from_millis(2_500)).await;
    let opened = phone.opened();
    assert!(
        opened.len() >= 2 && opened.iter().all(|&p| p == 100),
        "{opened:?}"
    );
    // No tight loop: about one reopen per poll.
    assert!(opened.len() <= 4, "{} opens in 2.5 s", opened.len());
}

#[tokio::test(start_paused = true)]
async fn a_refused_stream_or_a_failing_process_list_is_reported_not_fatal() {
    let phone = setup();
    phone.set_mode(100, StreamMode::Refuse);
    phone.spawn_process(100, &exe());
    let follower = start(&phone);
    settle().await;
    assert!(
        follower
            .status()
            .last_error
            .unwrap_or_default()
            .contains("pid 100")
    );
    phone.state.lock().unwrap().fail_processes = true;
    sleep(Duration::from_secs(2)).await;
    assert!(
        follower
            .status()
            .last_error
            .unwrap_or_default()
            .contains("listing processes")
    );
    phone.state.lock().unwrap().fail_processes = false;
    phone.set_mode(100, StreamMode::Live);
    phone.add_backlog(raw(100, T0, INFO, &exe(), "back"));
    sleep(Duration::from_secs(2)).await;
    assert_eq!(texts(&follower), ["back"]);
}

#[tokio::test(start_paused = true)]
async fn a_launch_opens_its_pid_at_once_and_polls_fast_for_three_seconds() {
    let phone = setup();
    let follower = start(&phone);
    settle().await;
    let before = follower.status().polls;
    // The launched process is checked against the process list at once, not trusted by its
    // pid alone; listed in the bundle, its stream opens without waiting for the next poll.
    phone.spawn_process(500, &exe());
    phone.add_backlog(raw(500, T0, INFO, &exe(), "first line"));
    follower.launched(500);
    settle().await;
    assert_eq!(phone.opened(), [500]);
    assert_eq!(texts(&follower), ["first line"]);
    sleep(Duration::from_millis(2_990)).await;
    let fast = follower.status().polls - before;
    assert!(
        (18..=22).contains(&fast),
        "{fast} polls in the 3 s after a launch"
    );
    sleep(Duration::from_millis(3_000)).await;
    let slow = follower.status().polls - before - fast;
    assert!(
        (2..=4).contains(&slow),
        "{slow} polls in the 3 s after that"
    );
}

#[tokio::test(start_paused = true)]
async fn a_launched_pid_the_list_does_not_show_yet_opens_once_it_does() {
    let phone = setup();
    let follower = start(&phone);
    settle().await;
    // The list lags behind the launch: nothing opens on the pid alone.
    follower.launched(500);
    settle().await;
    assert!(phone.opened().is_empty());
    // One fast poll after the list shows it in the bundle, its stream opens.
    phone.spawn_process(500, &exe());
    sleep(Duration::from_millis(160)).await;
    assert_eq!(phone.opened(), [500]);
}

#[tokio::test(start_paused = true)]
async fn a_launch_after_a_reinstall_looks_the_moved_bundle_up_at_once() {
    let phone = setup();
    let follower = start(&phone);
    settle().await;
    let moved = "/private/var/containers/Bundle/Application/99999999-0000-4000-8000-000000000002/CrashTest.app";
    phone.install(record(APP, moved, true));
    phone.spawn_process(600, &format!("{moved}/CrashTest"));
    follower.launched(600);
    settle().await;
    assert_eq!(follower.status().bundle_path, moved);
    assert_eq!(phone.opened(), [600]);
}

#[tokio::test(start_paused = true)]
async fn twenty_thousand_lines_at_most_and_under_eight_mib() {
    let phone = setup();
    phone.spawn_process(100, &exe());
    let follower = start(&phone);
    settle().await;
    let total = 20_050u32;
    for i in 0..total {
        let mut entry = raw(
            100,
            T0 + i / 1000,
            INFO,
            &exe(),
            &format!(
                "line {i:05}: request GET /api/v1/items?page={i} finished with status 200 in 42 ms"
            ),
        );
        entry.subsystem = Some(APP.into());
        entry.category = Some("Network".into());
        phone.log(&entry);
        if i % 1000 == 999 {
            settle().await;
        }
    }
    settle().await;
    let status = follower.status();
    assert_eq!(status.kept, 20_000);
    assert_eq!(status.dropped, 50);
    let result = follower.lines(&LogQuery::since(OffsetDateTime::UNIX_EPOCH, 500));
    assert_eq!(result.lines.len(), 500);
    assert_eq!(result.omitted, 19_500);
    assert!(result.lines[499].text.starts_with("line 20049"));
    assert!(
        follower.lines(&all()).lines[0]
            .text
            .starts_with("line 00050")
    );
    let bytes = follower.memory_bytes();
    eprintln!(
        "MEASURE follower memory for 20,000 lines of ~90 bytes: {bytes} bytes ({:.2} MiB)",
        bytes as f64 / 1_048_576.0
    );
    assert!(bytes < 8 * 1024 * 1024, "{bytes} bytes");
}

#[tokio::test(start_paused = true)]
async fn long_lines_cannot_push_the_follower_past_its_byte_budget() {
    let phone = setup();
    phone.spawn_process(100, &exe());
    let follower = start(&phone);
    settle().await;
    let long = "x".repeat(60_000);
    for i in 0..2_000u32 {
        phone.log(&raw(100, T0 + i, INFO, &exe(), &long));
        if i % 100 == 99 {
            settle().await;
        }
    }
    settle().await;
    let bytes = follower.memory_bytes();
    assert!(bytes < 8 * 1024 * 1024, "{bytes} bytes");
    assert!(
        follower
            .lines(&all())
            .lines
            .iter()
            .all(|l| l.text.len() <= 4096)
    );
}

#[tokio::test(start_paused = true)]
async fn dropping_the_follower_closes_every_stream() {
    let phone = setup();
    phone.spawn_process(100, &exe());
    let follower = start(&phone);
    settle().await;
    let lists = phone.state.lock().unwrap().process_lists;
    follower.stop();
    sleep(Duration::from_secs(5)).await;
    assert_eq!(phone.state.lock().unwrap().process_lists, lists);
    // Every stream's sender is gone once its task ended.
    // The fake's server notices the closed connection on its next write; a second line then
    // finds no listener at all.
    phone.log(&raw(100, T0, INFO, &exe(), "nobody listens"));
    settle().await;
    phone.log(&raw(100, T0, INFO, &exe(), "still nobody"));
    settle().await;
    assert!(
        phone
            .state
            .lock()
            .unwrap()
            .senders
            .get(&100)
            .is_none_or(|s| s.is_empty())
    );
    let _ = AppId::new(APP);
}

#[tokio::test(start_paused = true)]
async fn a_wait_on_the_follower_wakes_when_the_apps_line_arrives_and_opens_nothing() {
    use phonelogs_driver::LineStream;
    let phone = setup();
    phone.spawn_process(100, &exe());
    phone.spawn_process(
        200,
        "/private/var/containers/Bundle/Application/FFFF/Store.app/Store",
    );
    phone.add_backlog(raw(100, T0, INFO, &exe(), "app started"));
    let follower = start(&phone);
    settle().await;
    let opened = phone.opened().len();
    let mut lines = follower.follow(&all());
    // What is there first, then what comes.
    assert_eq!(
        lines.next_line().await.unwrap().unwrap().text,
        "app started"
    );
    let phone_later = phone.clone();
    tokio::spawn(async move {
        sleep(Duration::from_secs(2)).await;
        phone_later.log(&raw(200, T0 + 1, ERROR, "/x/Store", "OTHER-APP-SECRET"));
        phone_later.log(&raw(100, T0 + 2, INFO, &exe(), "ready"));
    });
    let next = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .expect("the wait was woken")
        .unwrap()
        .unwrap();
    assert_eq!(next.text, "ready");
    assert_eq!(
        phone.opened().len(),
        opened,
        "the wait opened no stream of its own"
    );
}

// --- Issue 27: process names only, look-alikes, silent streams, notices. ---

fn notices(follower: &Follower) -> Vec<phonelogs_driver::LogNotice> {
    follower.lines(&all()).notices
}

fn has_not_running(follower: &Follower) -> bool {
    notices(follower).contains(&phonelogs_driver::LogNotice::NotRunning)
}

/// `PidList` names processes only: the app's executable name is a candidate, and another app's
/// process of the same name (every Flutter app is `Runner`) gets a stream that is closed at its
/// first entry, whose executable lies outside the bundle, with nothing of it kept; that pid is
/// not opened again while it runs. Extensions cannot be found by name, and the notice says so.
#[tokio::test(start_paused = true)]
async fn with_names_only_a_same_named_process_is_closed_unread_at_its_first_entry() {
    let phone = setup();
    phone.state.lock().unwrap().names_only = true;
    let twin = "/private/var/containers/Bundle/Application/FFFF/Other.app/CrashTest";
    phone.spawn_process(100, &exe());
    phone.spawn_process(101, &extension());
    phone.spawn_process(200, twin);
    phone.add_backlog(raw(100, T0, INFO, &exe(), "app started"));
    phone.add_backlog(raw(200, T0, ERROR, twin, "OTHER-APP-SECRET first"));
    phone.add_backlog(raw(200, T0 + 1, ERROR, twin, "OTHER-APP-SECRET second"));
    let follower = start(&phone);
    settle().await;
    assert_eq!(texts(&follower), ["app started"]);
    let status = follower.status();
    assert_eq!(status.rejected, [200]);
    assert_eq!(status.open_streams, [100]);
    sleep(Duration::from_secs(5)).await;
    // Polled five more times; the twin was not opened again, the extension never.
    let mut opened = phone.opened();
    opened.sort_unstable();
    assert_eq!(opened, [100, 200]);
    assert!(texts(&follower).iter().all(|t| !t.contains("SECRET")));
    let said = notices(&follower);
    assert!(
        said.iter().any(|n| matches!(
            n,
            phonelogs_driver::LogNotice::PartlyUnreadable { part, fix, .. }
                if part.contains("extensions") && fix.contains("pymobiledevice3 mounter auto-mount")
        )),
        "{said:?}"
    );

    // When the twin's pid leaves the list and comes back (a new process), it is judged again.
    phone.kill(200);
    sleep(Duration::from_secs(1)).await;
    assert!(follower.status().rejected.is_empty());
}

/// Issue 38: a record without a process path (length 0 in Apple's layout) cannot be checked:
/// it is left out, and neither closes the stream nor shows; the app's entries around it do.
#[tokio::test(start_paused = true)]
async fn an_entry_without_a_process_path_is_left_out_and_the_stream_read_on() {
    let phone = setup();
    phone.spawn_process(100, &exe());
    phone.add_backlog(raw(100, T0, INFO, &exe(), "before"));
    phone.add_backlog(raw(100, T0 + 1, INFO, "", "NO-PATH"));
    phone.add_backlog(raw(100, T0 + 2, INFO, &exe(), "after"));
    let follower = start(&phone);
    settle().await;
    assert_eq!(texts(&follower), ["before", "after"]);
    let status = follower.status();
    assert!(status.rejected.is_empty());
    assert_eq!(status.open_streams, [100]);
}

/// Issue 38, never a silent empty answer: records Apple's client would refuse (here, version 3)
/// are skipped without ending the stream, and a read then says that lines may be missing and
/// why, so a phone whose records all break the layout is not an empty answer without reason.
#[tokio::test(start_paused = true)]
async fn records_apples_client_would_refuse_are_told_with_the_read() {
    let phone = setup();
    phone.spawn_process(100, &exe());
    let follower = start(&phone);
    settle().await;
    assert!(
        follower.lines(&all()).notices.iter().all(
            |n| !matches!(n, LogNotice::PartlyUnreadable { part, .. } if part == "skipped records")
        ),
        "nothing refused yet"
    );
    let mut record = encode_entry(&raw(100, T0, INFO, &exe(), "A-LATER-VERSION"));
    record[0] = 3;
    for _ in 0..2 {
        phone.log_bytes(100, frame(&record));
    }
    phone.log(&raw(100, T0 + 1, INFO, &exe(), "read on"));
    settle().await;
    let result = follower.lines(&all());
    let texts: Vec<&str> = result.lines.iter().map(|l| l.text.as_str()).collect();
    assert_eq!(texts, ["read on"]);
    let told = result.notices.iter().find_map(|n| match n {
        LogNotice::PartlyUnreadable { part, cause, .. } if part == "skipped records" => Some(cause),
        _ => None,
    });
    assert!(
        told.is_some_and(|cause| cause.contains("sent 2 of its records")),
        "{:?}",
        result.notices
    );
}

/// An entry that shows another executable closes even a stream that began with the app's
/// (a pid reused): what came before stays, nothing from then on.
#[tokio::test(start_paused = true)]
async fn an_entry_from_outside_the_bundle_ends_the_stream_and_nothing_after_it_is_kept() {
    let phone = setup();
    phone.state.lock().unwrap().names_only = true;
    phone.spawn_process(100, &exe());
    let follower = start(&phone);
    settle().await;
    phone.log(&raw(100, T0, INFO, &exe(), "mine"));
    phone.log(&raw(
        100,
        T0 + 1,
        INFO,
        "/usr/libexec/CrashTest",
        "NOT-MINE",
    ));
    phone.log(&raw(100, T0 + 2, INFO, &exe(), "AFTER-THE-SWITCH"));
    settle().await;
    assert_eq!(texts(&follower), ["mine"]);
    assert_eq!(follower.status().rejected, [100]);
}

/// A stream that opens and then sends nothing while its process runs (lockdown's
/// os_trace_relay on iOS 27 betas) is opened again the other way (the RemoteXPC shim), once.
#[tokio::test(start_paused = true)]
async fn a_silent_stream_is_opened_again_the_other_way_once() {
    let phone = setup();
    phone.set_mode(100, StreamMode::Stall);
    phone.state.lock().unwrap().other_mode = Some(StreamMode::Live);
    phone.spawn_process(100, &exe());
    let follower = start(&phone);
    sleep(Duration::from_secs(4)).await;
    assert!(phone.state.lock().unwrap().opened_other.is_empty());
    sleep(Duration::from_secs(3)).await;
    assert_eq!(phone.state.lock().unwrap().opened_other, [100]);
    phone.log(&raw(100, T0, INFO, &exe(), "through the shim"));
    // The usual way is given 2 s (the paused clock's) to show it works too; it does not.
    sleep(Duration::from_secs(3)).await;
    settle().await;
    assert_eq!(texts(&follower), ["through the shim"]);
    sleep(Duration::from_secs(20)).await;
    assert_eq!(phone.state.lock().unwrap().opened_other, [100]);
    // The usual way was opened again beside the other; the other delivered first.
    assert_eq!(phone.opened(), [100, 100]);
    assert_eq!(phone.state.lock().unwrap().other_worked, 1);
}

/// A quiet app (its process logs nothing for a while, on a phone whose usual way works) is not
/// taken for a silent stream: the other way is tried beside the usual one, the usual one
/// delivers the app's next line, and the phone is not told to prefer the other way (issue 38:
/// a quiet app triggered the iOS 27 fallback after 5 s on 17.4 to 26).
#[tokio::test(start_paused = true)]
async fn a_quiet_app_does_not_switch_the_phone_to_the_other_way() {
    let phone = setup();
    phone.state.lock().unwrap().other_mode = Some(StreamMode::Stall);
    phone.spawn_process(100, &exe());
    let follower = start(&phone);
    sleep(Duration::from_secs(7)).await;
    assert_eq!(phone.state.lock().unwrap().opened_other, [100]);
    phone.log(&raw(100, T0, INFO, &exe(), "after a quiet while"));
    settle().await;
    assert_eq!(texts(&follower), ["after a quiet while"]);
    phone.log(&raw(100, T0 + 1, INFO, &exe(), "and on"));
    settle().await;
    assert_eq!(texts(&follower), ["after a quiet while", "and on"]);
    assert_eq!(phone.state.lock().unwrap().other_worked, 0);
    sleep(Duration::from_secs(20)).await;
    assert_eq!(phone.state.lock().unwrap().opened_other, [100]);
}

/// Without another way (no tunnel) the silent stream is opened again as before, and the
/// follower does not try again for that process.
#[tokio::test(start_paused = true)]
async fn a_silent_stream_without_another_way_is_opened_as_before() {
    let phone = setup();
    phone.set_mode(100, StreamMode::Stall);
    phone.spawn_process(100, &exe());
    let _follower = start(&phone);
    sleep(Duration::from_secs(30)).await;
    assert_eq!(phone.opened(), [100, 100]);
    assert!(phone.state.lock().unwrap().opened_other.is_empty());
}

/// The first read knows whether the app runs: no process of it is a true 0 with the notice
/// that says so; a listing that fails is said with its cause and fix, and the lines read
/// before stay.
#[tokio::test(start_paused = true)]
async fn the_notices_say_not_running_and_why_the_list_failed() {
    let phone = setup();
    let follower = start(&phone);
    follower.listed().await;
    assert!(has_not_running(&follower));
    assert!(!notices(&follower).iter().any(|n| n.lines_may_be_missing()));

    phone.spawn_process(100, &exe());
    phone.add_backlog(raw(100, T0, INFO, &exe(), "read before"));
    sleep(Duration::from_millis(1_500)).await;
    assert!(!has_not_running(&follower));

    phone.state.lock().unwrap().fail_processes = true;
    sleep(Duration::from_millis(1_500)).await;
    let result = follower.lines(&all());
    assert_eq!(
        result
            .lines
            .iter()
            .map(|l| l.text.as_str())
            .collect::<Vec<_>>(),
        ["read before"]
    );
    let unreadable = result
        .notices
        .iter()
        .find_map(|n| match n {
            phonelogs_driver::LogNotice::Unreadable { cause, fix } => Some((cause, fix)),
            _ => None,
        })
        .expect("an unreadable notice");
    assert!(
        unreadable.0.contains("the iPhone is locked"),
        "{unreadable:?}"
    );
    assert!(
        unreadable.1.starts_with("unlock the iPhone"),
        "{unreadable:?}"
    );
    // Whether the app runs is not known while nothing can be listed.
    assert!(!has_not_running(&follower));
    phone.state.lock().unwrap().fail_processes = false;
    sleep(Duration::from_millis(1_500)).await;
    assert!(!notices(&follower).iter().any(|n| n.lines_may_be_missing()));
}

/// A stream the phone closes is opened again at the next poll; a phone that sends the newest
/// entries again on the new stream does not make the app's lines appear twice (issue 38), and
/// an entry of the same instant that was not delivered still is.
#[tokio::test(start_paused = true)]
async fn a_reopened_stream_does_not_replay_lines_already_delivered() {
    let phone = setup();
    phone.spawn_process(100, &exe());
    let follower = start(&phone);
    settle().await;
    phone.log(&raw(100, T0, INFO, &exe(), "first"));
    phone.log(&raw(100, T0 + 1, INFO, &exe(), "second"));
    settle().await;
    assert_eq!(texts(&follower), ["first", "second"]);
    phone.close_streams(100);
    // What the reopened stream sends first: the two again, one of the same instant that was
    // never delivered, then a new one.
    phone.add_backlog(raw(100, T0, INFO, &exe(), "first"));
    phone.add_backlog(raw(100, T0 + 1, INFO, &exe(), "second"));
    phone.add_backlog(raw(100, T0 + 1, INFO, &exe(), "second's twin"));
    phone.add_backlog(raw(100, T0 + 2, INFO, &exe(), "third"));
    sleep(Duration::from_secs(2)).await;
    settle().await;
    assert_eq!(phone.opened(), [100, 100]);
    assert_eq!(
        texts(&follower),
        ["first", "second", "second's twin", "third"]
    );
}
