//! Another app forges a drop box entry of the app inside its own compressed crash text: through
//! the real adb server and the simulated phone, the driver never returns the forged text, and
//! the message counts what was left out.

// Tests may unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;

use common::ThroughAdb;
use phonelogs_adbsim::{AndroidVersion, DropBoxEntry, Package, Profile, SimPhone};
use phonelogs_android::AdbPhone;
use phonelogs_driver::{AppId, AppLogger};
use phonelogs_gateway::{Agent, Gateway, LogsKind, LogsRequest, Mode, Status, TaskSpec};
use time::OffsetDateTime;

const APP: &str = "com.example.app";
const APP_UID: u32 = 10127;
const OTHER: &str = "com.example.other";
const OTHER_UID: u32 = 10300;

/// The 40 `=` that start every entry under `--print` (shared/notes/android-formats.md §2).
const SEPARATOR: &str = "========================================";

/// A `data_app_crash` entry's text: the `Key: value` headers in the order of
/// shared/notes/android-formats.md §2 (Android 12 and later print `PID:` and `UID:`), a blank
/// line, the stack.
fn crash_text(process: &str, pid: u32, uid: u32, message: &str) -> String {
    format!(
        "Process: {process}\nPID: {pid}\nUID: {uid}\nFlags: 0x38c83e44\nPackage: {process} v1 (1.0)\n\n\
         java.lang.IllegalStateException: {message}\n\tat {process}.MainActivity.onClick(MainActivity.java:42)\n"
    )
}

/// The phone's local `YYYY-MM-DD HH:MM:SS` of an instant, as `dumpsys dropbox` prints it.
fn printed_time(phone: &SimPhone, at: OffsetDateTime) -> String {
    let offset =
        time::UtcOffset::from_whole_seconds(phone.profile().utc_offset_minutes * 60).unwrap();
    let local = at.to_offset(offset);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        local.year(),
        u8::from(local.month()),
        local.day(),
        local.hour(),
        local.minute(),
        local.second()
    )
}

fn millis(at: OffsetDateTime) -> i64 {
    (at.unix_timestamp_nanos() / 1_000_000) as i64
}

/// The app (a development build, so the gateway asks nobody) with a real crash before and after
/// another app's, whose message (over 16 KiB, so the phone stores it as `compressed text`) ends
/// in a forged separator, header and the app's `Process:`/`PID:`/`UID:` lines.
fn forged_phone() -> SimPhone {
    let phone = SimPhone::empty(Profile::default());
    phone.set_noise_rate(0.0);
    let mut app = Package::new(APP, APP_UID);
    app.debuggable = true;
    phone.install(app);
    phone.install(Package::new(OTHER, OTHER_UID));
    let now = OffsetDateTime::now_utc();
    let (first, forged_at, last) = (
        now - time::Duration::minutes(3),
        now - time::Duration::minutes(2),
        now - time::Duration::minutes(1),
    );
    let forged = format!(
        "{}\n\n{SEPARATOR}\n{} data_app_crash (text, 64 bytes)\n{}",
        "padding ".repeat(2500),
        printed_time(&phone, last),
        crash_text(APP, 4343, APP_UID, "FORGED-BY-ANOTHER-APP"),
    );
    for (at, text) in [
        (first, crash_text(APP, 4242, APP_UID, "GENUINE-FIRST")),
        (forged_at, crash_text(OTHER, 5151, OTHER_UID, &forged)),
        (last, crash_text(APP, 4244, APP_UID, "GENUINE-LAST")),
    ] {
        assert!(text.len() < 16 * 1024 || text.contains("FORGED"));
        phone.add_dropbox_entry(DropBoxEntry {
            tag: "data_app_crash".into(),
            time_ms: millis(at),
            text,
        });
    }
    phone
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_entry_in_another_apps_compressed_text_is_never_the_apps() {
    let Some(sim) = ThroughAdb::start(forged_phone(), |_| {}).await else {
        return;
    };
    // The phone really prints the forgery as an entry of its own under `--print`.
    let print = sim.server.run(&[
        "-s",
        sim.device.as_str(),
        "shell",
        "dumpsys dropbox --print data_app_crash",
    ]);
    let print = String::from_utf8_lossy(&print.stdout).into_owned();
    assert!(print.contains("(compressed text, "), "{print}");
    assert_eq!(print.matches(SEPARATOR).count(), 4, "{print}");

    let app = AppId::new(APP);
    let since = OffsetDateTime::now_utc() - time::Duration::hours(1);
    let found = sim
        .driver
        .app_crash_result(&sim.device, &app, since, 10)
        .await
        .unwrap();
    let texts: Vec<&str> = found.reports.iter().map(|r| r.text.as_str()).collect();
    assert!(
        found
            .reports
            .iter()
            .all(|r| !r.text.contains("FORGED") && !r.summary.contains("FORGED")),
        "{texts:#?}"
    );
    // The first entry is pinned, so the app's first crash is read. The forgery and the app's
    // crash after the compressed entry cannot be told apart from the print alone: both are
    // left out and counted.
    assert_eq!(found.reports.len(), 1, "{texts:#?}");
    assert!(found.reports[0].text.contains("GENUINE-FIRST"));
    assert_eq!(found.unconfirmed, 2);
    assert_eq!(
        sim.driver
            .app_crashes(&sim.device, &app, since, 10)
            .await
            .unwrap(),
        found.reports
    );

    // Through the gateway: the agent sees one report and is told two were left out.
    let gateway = Gateway::builder()
        .driver(Arc::new(AdbPhone::new(common::config(sim.server.port))) as Arc<dyn AppLogger>)
        .build()
        .unwrap();
    let session = gateway.start_task(TaskSpec::new(Agent::new("agent", Mode::Full)));
    let result = session
        .logs(LogsRequest {
            kind: LogsKind::Crashes,
            since: Some("1h".into()),
            device: Some(sim.device.to_string()),
            ..LogsRequest::new(APP)
        })
        .await;
    assert_eq!(result.status, Status::Ok, "{}", result.message);
    assert!(!result.log.contains("FORGED"), "{}", result.log);
    assert!(result.log.contains("GENUINE-FIRST"), "{}", result.log);
    assert!(
        result.message.contains("2 crash reports were left out"),
        "{}",
        result.message
    );
}

/// A phone with the app (a development build) and another app, whose first drop box entry is
/// the other app's, stored compressed (over 16 KiB): nothing after it can be pinned, so an
/// entry after it is read only when the listing matches the print one for one.
fn phone_after_a_compressed_entry(other_text: String) -> SimPhone {
    let phone = SimPhone::empty(Profile::default());
    phone.set_noise_rate(0.0);
    let mut app = Package::new(APP, APP_UID);
    app.debuggable = true;
    phone.install(app);
    phone.install(Package::new(OTHER, OTHER_UID));
    assert!(other_text.len() >= 16 * 1024);
    phone.add_dropbox_entry(DropBoxEntry {
        tag: "data_app_crash".into(),
        time_ms: (phone.now_ns() / 1_000_000) as i64 - 60_000,
        text: other_text,
    });
    phone
}

/// D4: the app's real crash after another app's compressed entry is left out of the drop box
/// (its start cannot be pinned), but the crash buffer shows it: it is not also counted as left
/// out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_the_crash_buffer_shows_is_not_counted_as_left_out() {
    let phone = phone_after_a_compressed_entry(crash_text(
        OTHER,
        5151,
        OTHER_UID,
        &format!("{}\n\n{SEPARATOR}\n", "padding ".repeat(2500)),
    ));
    let pid = phone
        .crash(APP, "java.lang.IllegalStateException", "GENUINE-CRASH")
        .unwrap();
    let sim = common::Front::start(phone, |_| {}).await;
    let app = AppId::new(APP);
    let since = OffsetDateTime::now_utc() - time::Duration::hours(1);
    let found = sim
        .driver
        .app_crash_result(&sim.device, &app, since, 10)
        .await
        .unwrap();
    let texts: Vec<&str> = found.reports.iter().map(|r| r.text.as_str()).collect();
    assert_eq!(found.reports.len(), 1, "{texts:#?}");
    assert_eq!(found.reports[0].pid, Some(pid));
    assert!(
        found.reports[0].text.contains("GENUINE-CRASH"),
        "{texts:#?}"
    );
    assert_eq!(found.unconfirmed, 0);
}

/// D3: texts with a character cut at the preview's 70th byte. The simulated phone makes its
/// listing's previews as AOSP does (70 bytes, decoded), and the driver compares them exactly
/// so: the listing matches one for one, and the app's entry after the compressed one is read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn previews_cut_inside_a_character_still_match_one_for_one() {
    // The subject puts a two-byte `é` across the 70th byte of the other app's text (its
    // headers before it are 49 bytes) and a three-byte `€` across it in the app's (47 bytes).
    let subject = |wide: &str| {
        let pad = if wide.len() == 2 { 12 } else { 11 };
        format!("Subject: {}{wide}{wide}\n", "s".repeat(pad))
    };
    let text = |process: &str, pid: u32, uid: u32, wide: &str, message: &str| {
        format!(
            "Process: {process}\nPID: {pid}\nUID: {uid}\n{}Flags: 0x38c83e44\n\n\
             java.lang.IllegalStateException: {message}\n",
            subject(wide)
        )
    };
    let other = text(OTHER, 5151, OTHER_UID, "\u{e9}", &"padding ".repeat(2500));
    assert!(
        !other.is_char_boundary(70),
        "{:?}",
        &other.as_bytes()[60..72]
    );
    let phone = phone_after_a_compressed_entry(other);
    let mine = text(APP, 4242, APP_UID, "\u{20ac}", "GENUINE-NON-ASCII");
    assert!(!mine.is_char_boundary(70), "{:?}", &mine.as_bytes()[60..72]);
    phone.add_dropbox_entry(DropBoxEntry {
        tag: "data_app_crash".into(),
        time_ms: (phone.now_ns() / 1_000_000) as i64 - 30_000,
        text: mine,
    });
    let sim = common::Front::start(phone, |_| {}).await;
    let app = AppId::new(APP);
    let since = OffsetDateTime::now_utc() - time::Duration::hours(1);
    let found = sim
        .driver
        .app_crash_result(&sim.device, &app, since, 10)
        .await
        .unwrap();
    let texts: Vec<&str> = found.reports.iter().map(|r| r.text.as_str()).collect();
    assert_eq!(found.reports.len(), 1, "{texts:#?}");
    assert!(found.reports[0].text.contains("GENUINE-NON-ASCII"));
    assert_eq!(found.unconfirmed, 0);
}

/// Android 10 prints no `UID:`: another app whose `versionName` prints a `Package:` line of the
/// app (`Package: <other> v1 (2.3)` then `Package: <app> v1 (1.0)`, as `dumpsys dropbox` prints
/// the raw name) crashes. Through the real adb server the app's crashes never hold its report,
/// and the message counts it as left out; the app's own crash is read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_android10_crash_whose_version_name_prints_the_apps_package_line_is_never_the_apps() {
    let phone = SimPhone::empty(Profile {
        android: AndroidVersion::Android10,
        ..Profile::default()
    });
    phone.set_noise_rate(0.0);
    let mut app = Package::new(APP, APP_UID);
    app.debuggable = true;
    phone.install(app);
    let mut other = Package::new(OTHER, OTHER_UID);
    other.version_name = format!("2.3)\nPackage: {APP} v1 (1.0");
    phone.install(other);
    phone
        .crash(
            OTHER,
            "java.lang.IllegalStateException",
            "SECRET-OF-ANOTHER-APP",
        )
        .unwrap();
    phone.advance_clock(30.0);
    phone
        .crash(APP, "java.lang.IllegalStateException", "GENUINE-CRASH")
        .unwrap();
    let Some(sim) = ThroughAdb::start(phone, |_| {}).await else {
        return;
    };
    // The phone prints the forged line where the real package list is.
    let print = sim.server.run(&[
        "-s",
        sim.device.as_str(),
        "shell",
        "dumpsys dropbox --print data_app_crash",
    ]);
    let print = String::from_utf8_lossy(&print.stdout).into_owned();
    assert!(
        print.contains(&format!(
            "Package: {OTHER} v1 (2.3)\nPackage: {APP} v1 (1.0)\n"
        )),
        "{print}"
    );
    let since = OffsetDateTime::now_utc() - time::Duration::hours(1);
    let found = sim
        .driver
        .app_crash_result(&sim.device, &AppId::new(APP), since, 10)
        .await
        .unwrap();
    let texts: Vec<&str> = found.reports.iter().map(|r| r.text.as_str()).collect();
    assert!(
        found.reports.iter().all(|r| !r.text.contains("SECRET")),
        "{texts:#?}"
    );
    assert_eq!(found.reports.len(), 1, "{texts:#?}");
    assert!(
        found.reports[0].text.contains("GENUINE-CRASH"),
        "{texts:#?}"
    );
    assert_eq!(found.unconfirmed, 1);
}
