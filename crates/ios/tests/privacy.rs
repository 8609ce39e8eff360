//! Privacy tests of the iPhone driver: nothing of another app is read, pulled or streamed,
//! whatever its bundle, file or message looks like. Issue 15, items 15 (the iPhone half), 16
//! and 17. The formats follow `testdata/ios-driver/README.md`, which cites the real captures.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use phonelogs_driver::{AppId, AppLogger, DeviceId, LogLine, LogQuery};
use phonelogs_ios::LockdownPhone;
use phonelogs_ios::services::AppRecord;
use time::OffsetDateTime;
use time::macros::datetime;
use tokio::time::sleep;

const APP: &str = "dev.phonelogs.crashtest";
const STORE_ID: &str = "com.example.store";
const T0: u32 = 1_764_496_800;

/// The app's bundle, named as installation_proxy's `Path` gives it: plain, with its space.
const SPACED: &str =
    "/private/var/containers/Bundle/Application/1B2C3D4E-0000-4000-8000-000000000001/My App.app";
/// Another app's bundle.
const OTHER: &str =
    "/private/var/containers/Bundle/Application/5E5E5E5E-0000-4000-8000-000000000003/Store.app";

fn device() -> DeviceId {
    DeviceId::new("00008101-000A1234567890AB")
}

fn driver(phone: &FakePhone) -> LockdownPhone {
    LockdownPhone::new(Arc::new(FakeBackend {
        device: device(),
        phone: phone.clone(),
    }))
}

fn all() -> LogQuery {
    LogQuery::since(OffsetDateTime::UNIX_EPOCH, 100_000)
}

fn app_record(path: &str, executable: &str) -> AppRecord {
    AppRecord {
        bundle_id: AppId::new(APP),
        path: path.into(),
        executable: Some(executable.into()),
        label: None,
        system: false,
        dev_build: true,
        version: None,
    }
}

/// The gateway's rendering of a line: `15:04:05.123 Tag: text`.
fn render(line: &LogLine) -> String {
    format!(
        "{:02}:{:02}:{:02}.{:03} {}: {}",
        line.time.hour(),
        line.time.minute(),
        line.time.second(),
        line.time.millisecond(),
        line.tag,
        line.text
    )
}

fn crash_of(bundle: &str, name: &str, timestamp: &str, pid: u32, reason: &str) -> Vec<u8> {
    ips_309(
        bundle,
        name,
        timestamp,
        pid,
        ("EXC_CRASH", "SIGABRT"),
        Some(reason),
        None,
    )
}

// Item 16: crash report candidates are chosen by the file name's process name.

#[tokio::test]
async fn another_apps_report_with_a_similar_file_name_is_never_read() {
    let phone = FakePhone::new();
    phone.install(app_record(common::BUNDLE, "CrashTest"));
    phone.add_file(
        "CrashTest-2026-11-30-110005.ips",
        crash_of(APP, "CrashTest", "2026-11-30 11:00:05.00 +0100", 41, "mine"),
    );
    phone.add_file(
        "Retired/CrashTest-2026-11-30-110006.ips.synced",
        crash_of(
            APP,
            "CrashTest",
            "2026-11-30 11:00:06.00 +0100",
            42,
            "mine too",
        ),
    );
    // Look-alikes: a longer executable name, one with a dot after it, one differing in case,
    // a name that only ends like the app's, and another app's report.
    for (file, bundle, name) in [
        (
            "CrashTestHelper-2026-11-30-110100.ips",
            "com.example.helper",
            "CrashTestHelper",
        ),
        (
            "CrashTest.appx-2026-11-30-110101.ips",
            "com.example.appx",
            "CrashTest.appx",
        ),
        (
            "crashtest-2026-11-30-110102.ips",
            "com.example.lower",
            "crashtest",
        ),
        (
            "MyCrashTest-2026-11-30-110103.ips",
            "com.example.my",
            "MyCrashTest",
        ),
        ("Retired/Store-2026-11-30-110104.ips", STORE_ID, "Store"),
    ] {
        phone.add_file(
            file,
            crash_of(
                bundle,
                name,
                "2026-11-30 11:01:00.00 +0100",
                50,
                "OTHER-APP-SECRET",
            ),
        );
    }
    let reports = driver(&phone)
        .app_crashes(
            &device(),
            &AppId::new(APP),
            datetime!(2026-11-30 09:00 UTC),
            10,
        )
        .await
        .unwrap();
    assert_eq!(
        reports.iter().map(|r| r.pid).collect::<Vec<_>>(),
        [Some(42), Some(41)]
    );
    let mut reads = phone.state.lock().unwrap().reads.clone();
    reads.sort();
    assert_eq!(
        reads,
        [
            "CrashTest-2026-11-30-110005.ips",
            "Retired/CrashTest-2026-11-30-110006.ips.synced"
        ],
        "another app's report was pulled to the computer"
    );
}

#[tokio::test]
async fn the_apps_reports_are_found_on_a_busy_phone() {
    let phone = FakePhone::new();
    phone.install(app_record(common::BUNDLE, "CrashTest"));
    phone.add_file(
        "CrashTest-2026-11-30-100000.ips",
        crash_of(APP, "CrashTest", "2026-11-30 10:00:00.00 +0100", 41, "mine"),
    );
    // Seventy newer reports of the system's analytics topics and other apps, as on a busy phone.
    for i in 0..70u32 {
        let (m, s) = (i / 60, i % 60);
        let name = ["NetworkingTopic", "wpsoffice", "KeySyncTopic"][i as usize % 3];
        phone.add_file(
            &format!("{name}-2026-11-30-11{m:02}{s:02}.ips"),
            crash_of(
                "com.example.other",
                name,
                &format!("2026-11-30 11:{m:02}:{s:02}.00 +0100"),
                1000 + i,
                "OTHER-APP-SECRET",
            ),
        );
    }
    let reports = driver(&phone)
        .app_crashes(
            &device(),
            &AppId::new(APP),
            datetime!(2026-11-30 08:00 UTC),
            3,
        )
        .await
        .unwrap();
    assert_eq!(reports.len(), 1, "the app's report was not found");
    assert_eq!(reports[0].pid, Some(41));
    let reads = phone.state.lock().unwrap().reads.clone();
    assert_eq!(reads, ["CrashTest-2026-11-30-100000.ips"]);
}

#[tokio::test]
async fn an_executable_name_with_a_space_finds_its_reports() {
    let phone = FakePhone::new();
    phone.install(app_record(SPACED, "My App"));
    phone.add_file(
        "My App-2026-11-30-110005.ips",
        crash_of(APP, "My App", "2026-11-30 11:00:05.00 +0100", 41, "mine"),
    );
    phone.add_file(
        "My-2026-11-30-110006.ips",
        crash_of(
            "com.example.my",
            "My",
            "2026-11-30 11:00:06.00 +0100",
            42,
            "OTHER",
        ),
    );
    let reports = driver(&phone)
        .app_crashes(
            &device(),
            &AppId::new(APP),
            datetime!(2026-11-30 09:00 UTC),
            3,
        )
        .await
        .unwrap();
    assert_eq!(reports.len(), 1);
    assert_eq!(
        phone.state.lock().unwrap().reads,
        ["My App-2026-11-30-110005.ips"]
    );
}

#[tokio::test]
async fn the_captured_listing_yields_only_the_named_apps_report() {
    // A real crashreportcopymobile root (testdata/ios-driver/README.md): a third-party app among
    // system analytics topics. Only `wpsoffice`'s file is read for an app of that executable.
    let listing = include_str!("../../../testdata/ios-driver/crashreportcopymobile-listing.txt");
    let phone = FakePhone::new();
    phone.install(AppRecord {
        bundle_id: AppId::new("com.kingsoft.wpsoffice"),
        ..app_record(common::BUNDLE, "wpsoffice")
    });
    for name in listing.lines().filter(|l| !l.is_empty()) {
        let process = name.split("-2023").next().unwrap();
        let bundle = if process == "wpsoffice" {
            "com.kingsoft.wpsoffice"
        } else {
            "com.apple.analyticsd"
        };
        phone.add_file(
            name,
            crash_of(bundle, process, "2023-02-13 17:32:08.00 +0800", 7, "x"),
        );
    }
    let reports = driver(&phone)
        .app_crashes(
            &device(),
            &AppId::new("com.kingsoft.wpsoffice"),
            datetime!(2023-02-13 08:00 UTC),
            10,
        )
        .await
        .unwrap();
    assert_eq!(reports.len(), 1);
    assert_eq!(
        phone.state.lock().unwrap().reads,
        ["wpsoffice-2023-02-13-173208.ips"]
    );
}

// Item 17: percent-encoded executable URLs, look-alike bundles, and launches.

#[test]
fn the_captured_executable_url_matches_its_bundle_only() {
    // A real CoreDevice executable URL (testdata/ios-driver/README.md).
    let captured = include_str!("../../../testdata/ios-driver/coredevice-executables.txt");
    let url = captured.lines().next().unwrap();
    let container =
        "/private/var/containers/Bundle/Application/5045C7CE-DFB9-4C17-BBA9-94D8BCD8F565";
    assert!(phonelogs_ios::follower::in_bundle(
        url,
        &format!("{container}/Mastodon.app")
    ));
    assert!(!phonelogs_ios::follower::in_bundle(
        url,
        &format!("{container}/Mastodon.appx")
    ));
    assert!(!phonelogs_ios::follower::in_bundle(
        url,
        "/private/var/containers/Bundle/Application/5045C7CE-DFB9-4C17-BBA9-94D8BCD8F566/Mastodon.app"
    ));
}

#[tokio::test(start_paused = true)]
async fn a_percent_encoded_executable_url_matches_its_bundle() {
    let phone = FakePhone::new();
    phone.install(app_record(SPACED, "My App"));
    phone.spawn_process(
        100,
        "file:///private/var/containers/Bundle/Application/1B2C3D4E-0000-4000-8000-000000000001/My%20App.app/My%20App",
    );
    phone.add_backlog(raw(
        100,
        T0,
        INFO,
        &format!("{SPACED}/My App"),
        "spaced app started",
    ));
    let driver = driver(&phone);
    driver
        .app_logs(&device(), &AppId::new(APP), &all())
        .await
        .unwrap();
    sleep(Duration::from_secs(2)).await;
    let lines = driver
        .app_logs(&device(), &AppId::new(APP), &all())
        .await
        .unwrap()
        .lines;
    assert_eq!(phone.opened(), [100]);
    assert_eq!(lines.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn look_alike_bundles_and_another_apps_extension_get_no_stream() {
    let phone = FakePhone::new();
    let bundle = "/private/var/containers/Bundle/Application/1B2C3D4E-0000-4000-8000-000000000001/Example.app";
    phone.install(app_record(bundle, "Example"));
    let uuid_dir =
        "/private/var/containers/Bundle/Application/1B2C3D4E-0000-4000-8000-000000000001";
    for (pid, executable) in [
        (100, format!("file://{uuid_dir}/Example.app/Example")),
        (
            101,
            format!("file://{uuid_dir}/Example.app/PlugIns/Widget.appex/Widget"),
        ),
        // A sibling whose name starts with the bundle's.
        (200, format!("file://{uuid_dir}/Example.appx/Example")),
        (201, format!("{uuid_dir}/Example.appx/Example")),
        // The same, with the dot percent-encoded.
        (202, format!("file://{uuid_dir}/Example%2Eappx/Example")),
        // An encoded slash or dot segments cannot walk into the bundle.
        (203, format!("file://{uuid_dir}/Example.app%2FExample")),
        (
            204,
            format!("file://{OTHER}/../1B2C3D4E-0000-4000-8000-000000000001/Example.app/Example"),
        ),
        // Another app's extension, named like the app.
        (205, format!("file://{OTHER}/PlugIns/Example.appex/Example")),
        (206, format!("{OTHER}/PlugIns/Example.app/Example")),
        // A bundle of the same name in another container.
        (
            207,
            "file:///private/var/containers/Bundle/Application/FFFF/Example.app/Example".into(),
        ),
    ] {
        phone.spawn_process(pid, &executable);
    }
    let driver = driver(&phone);
    driver
        .app_logs(&device(), &AppId::new(APP), &all())
        .await
        .unwrap();
    sleep(Duration::from_secs(2)).await;
    let mut opened = phone.opened();
    opened.sort_unstable();
    opened.dedup();
    assert_eq!(opened, [100, 101]);
}

#[tokio::test(start_paused = true)]
async fn a_launch_hook_never_opens_another_apps_pid() {
    let phone = FakePhone::new();
    phone.install(record(APP, common::BUNDLE, true));
    phone.install(record(STORE_ID, OTHER, false));
    phone.spawn_process(200, &format!("{OTHER}/Store"));
    phone.add_backlog(raw(
        200,
        T0,
        ERROR,
        &format!("{OTHER}/Store"),
        "OTHER-APP-SECRET",
    ));
    let driver = driver(&phone);
    // A pid that is another app's, and one that no process has.
    driver
        .app_launched(&device(), &AppId::new(APP), 200)
        .await
        .unwrap();
    driver
        .app_launched(&device(), &AppId::new(APP), 9_999)
        .await
        .unwrap();
    sleep(Duration::from_secs(5)).await;
    assert!(phone.opened().is_empty(), "opened {:?}", phone.opened());
    let lines = driver
        .app_logs(&device(), &AppId::new(APP), &all())
        .await
        .unwrap()
        .lines;
    assert!(lines.is_empty());
}

// Item 15 (the iPhone half): a message with newlines becomes several lines.

#[tokio::test(start_paused = true)]
async fn a_multi_line_message_cannot_forge_a_line_of_another_time_or_tag() {
    let phone = FakePhone::new();
    phone.install(record(APP, common::BUNDLE, true));
    let exe = format!("{}/CrashTest", common::BUNDLE);
    phone.spawn_process(100, &exe);
    let mut entry = raw(
        100,
        T0,
        ERROR,
        &exe,
        "request failed\n09:00:00.000 Auth: token=forged\r\n\nretrying",
    );
    entry.micros = 250_000;
    entry.subsystem = Some(APP.into());
    entry.category = Some("Net".into());
    phone.add_backlog(entry);
    let driver = driver(&phone);
    driver
        .app_logs(&device(), &AppId::new(APP), &all())
        .await
        .unwrap();
    sleep(Duration::from_secs(2)).await;
    let lines = driver
        .app_logs(&device(), &AppId::new(APP), &all())
        .await
        .unwrap()
        .lines;
    let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "request failed",
            "09:00:00.000 Auth: token=forged",
            "",
            "retrying"
        ]
    );
    let first = &lines[0];
    for line in &lines {
        assert_eq!(
            (line.time, line.level, &line.tag, line.pid),
            (first.time, first.level, &first.tag, first.pid)
        );
    }
    // Every rendered line starts with the entry's own time and tag.
    let rendered: String = lines.iter().map(render).collect::<Vec<_>>().join("\n");
    let prefix = render(&LogLine {
        text: String::new(),
        ..first.clone()
    });
    for out in rendered.split('\n') {
        assert!(
            out.starts_with(&prefix),
            "{out:?} does not start with {prefix:?}"
        );
    }
}

// Property tests: the same rules over generated names and messages.

mod properties {
    use super::*;
    use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
    use phonelogs_crash::ostrace::{OsLogLevel, OsTraceEntry};
    use phonelogs_ios::crashes::read_crashes;
    use phonelogs_ios::follower::{entry_to_lines, in_bundle};
    use proptest::prelude::*;

    /// What Foundation escapes in a file URL's path component (RFC 3986 path characters stay):
    /// spaces, `%`, `?`, `#` and the other characters a URL path cannot hold as they are.
    const COMPONENT: &AsciiSet = &CONTROLS
        .add(b' ')
        .add(b'"')
        .add(b'#')
        .add(b'%')
        .add(b'<')
        .add(b'>')
        .add(b'?')
        .add(b'[')
        .add(b']')
        .add(b'^')
        .add(b'`')
        .add(b'{')
        .add(b'|')
        .add(b'}')
        .add(b'/');

    const CONTAINER: &str =
        "/private/var/containers/Bundle/Application/1B2C3D4E-0000-4000-8000-000000000001";
    const ELSEWHERE: &str =
        "/private/var/containers/Bundle/Application/5E5E5E5E-0000-4000-8000-000000000003";

    /// A `file://` URL of a plain path, each component percent-encoded as CoreDevice sends it.
    fn url_of(path: &str) -> String {
        let encoded: Vec<String> = path
            .split('/')
            .map(|part| utf8_percent_encode(part, COMPONENT).to_string())
            .collect();
        format!("file://{}", encoded.join("/"))
    }

    /// A name as a developer could give an app or its executable: any of these characters,
    /// with no space at either end (paths and file names are read trimmed).
    fn app_name() -> impl Strategy<Value = String> {
        "[A-Za-z0-9é][A-Za-z0-9 %._é-]{0,10}[A-Za-z0-9é]|[A-Za-z0-9é]"
            .prop_filter("not a dot segment", |n| n != "." && n != "..")
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn only_the_bundles_own_executables_match(
            name in app_name(),
            suffix in "[A-Za-z0-9 x.]{1,4}",
            other in "[A-Za-z]{1,8}",
        ) {
            let bundle = format!("{CONTAINER}/{name}.app");
            let own = format!("{bundle}/{name}");
            let extension = format!("{bundle}/PlugIns/Widget.appex/Widget");
            prop_assert!(in_bundle(&own, &bundle));
            prop_assert!(in_bundle(&url_of(&own), &bundle));
            prop_assert!(in_bundle(&url_of(&own.replacen("/private", "", 1)), &bundle));
            prop_assert!(in_bundle(&url_of(&extension), &bundle));
            for look_alike in [
                format!("{CONTAINER}/{name}{suffix}.app/{name}"),
                format!("{CONTAINER}/{name}.app{suffix}/{name}"),
                format!("{CONTAINER}/{name}.appx/{name}"),
                format!("{ELSEWHERE}/{name}.app/{name}"),
                format!("{ELSEWHERE}/{other}.app/PlugIns/{name}.appex/{name}"),
                format!("{ELSEWHERE}/{other}.app/PlugIns/{name}.app/{name}"),
                bundle.clone(),
            ] {
                prop_assert!(!in_bundle(&look_alike, &bundle), "{look_alike}");
                prop_assert!(!in_bundle(&url_of(&look_alike), &bundle), "{look_alike}");
            }
        }

        #[test]
        fn only_reports_named_after_the_executable_are_read(
            name in app_name(),
            affix in "[A-Za-z0-9 ._-]{1,4}",
        ) {
            let phone = FakePhone::new();
            let own = format!("{name}-2026-11-30-110005.ips");
            let retired = format!("Retired/{name}-2026-11-30-110006.ips.synced");
            phone.add_file(&own, crash_of(APP, &name, "2026-11-30 11:00:05.00 +0100", 41, "mine"));
            phone.add_file(&retired, crash_of(APP, &name, "2026-11-30 11:00:06.00 +0100", 42, "mine"));
            let mut others = vec![
                format!("{name}{affix}-2026-11-30-110100.ips"),
                format!("{affix}{name}-2026-11-30-110101.ips"),
                format!("Retired/{name}{affix}-2026-11-30-110102.ips"),
            ];
            if name.to_lowercase() != name {
                others.push(format!("{}-2026-11-30-110103.ips", name.to_lowercase()));
            }
            for file in &others {
                phone.add_file(file, crash_of(STORE_ID, "Store", "2026-11-30 11:01:00.00 +0100", 50, "OTHER"));
            }
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .build()
                .unwrap();
            let reports = runtime
                .block_on(read_crashes(
                    &phone,
                    &AppId::new(APP),
                    &name,
                    datetime!(2026-11-30 09:00 UTC),
                    10,
                    Duration::from_secs(10),
                ))
                .unwrap();
            prop_assert_eq!(reports.len(), 2);
            let mut reads = phone.state.lock().unwrap().reads.clone();
            reads.sort();
            let mut expected = vec![own, retired];
            expected.sort();
            prop_assert_eq!(reads, expected);
        }

        /// Issue 27, item 2: with a process list of names only (`PidList`), a process named
        /// like the app's executable in another bundle (another app's, a sibling `.appx`,
        /// another app's extension, a different container), each logging secrets, never has
        /// a line passed on; the app's own lines are. Every same-named process is closed at
        /// its first entry and not opened again; a process whose name differs is never
        /// opened.
        #[test]
        fn with_names_only_no_look_alike_process_passes_a_line_on(
            name in app_name(),
            affix in "[A-Za-z0-9]{1,3}",
            other in "[A-Za-z]{1,8}",
        ) {
            let bundle = format!("{CONTAINER}/{name}.app");
            let own = format!("{bundle}/{name}");
            let look_alikes = [
                format!("{CONTAINER}/{name}.appx/{name}"),
                format!("{CONTAINER}/{name}{affix}.app/{name}"),
                format!("{ELSEWHERE}/{name}.app/{name}"),
                format!("{ELSEWHERE}/{other}.app/PlugIns/{name}.appex/{name}"),
                format!("{ELSEWHERE}/{other}.app/{name}"),
                format!("/usr/libexec/{name}"),
            ];
            // Names that differ from the app's executable: never a candidate.
            let strangers = [
                format!("{ELSEWHERE}/{other}.app/{name}{affix}"),
                format!("{ELSEWHERE}/{other}.app/{affix}{name}"),
            ];
            let phone = FakePhone::new();
            phone.state.lock().unwrap().names_only = true;
            phone.install(app_record(&bundle, &name));
            phone.spawn_process(100, &own);
            phone.add_backlog(raw(100, T0, INFO, &own, "OWN-LINE"));
            for (pid, path) in (200u32..).zip(look_alikes.iter().chain(&strangers)) {
                phone.spawn_process(pid, path);
                for second in 0..3 {
                    phone.add_backlog(raw(pid, T0 + second, ERROR, path, "OTHER-APP-SECRET"));
                }
            }
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .start_paused(true)
                .build()
                .unwrap();
            let driver = driver(&phone);
            let (lines, status) = runtime.block_on(async {
                let app = AppId::new(APP);
                driver.app_logs(&device(), &app, &all()).await.unwrap();
                sleep(Duration::from_secs(4)).await;
                let lines = driver.app_logs(&device(), &app, &all()).await.unwrap().lines;
                (lines, driver.follower_status(&device(), &app).unwrap())
            });
            let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
            prop_assert_eq!(texts, ["OWN-LINE"]);
            let look_alike_pids: Vec<u32> = (200u32..).take(look_alikes.len()).collect();
            prop_assert_eq!(&status.rejected, &look_alike_pids);
            let mut opened = phone.opened();
            opened.sort_unstable();
            let mut expected = vec![100];
            expected.extend(&look_alike_pids);
            prop_assert_eq!(opened, expected, "each look-alike opened once, strangers never");
        }

        #[test]
        fn no_message_forges_a_line_of_another_time_or_tag(
            pieces in proptest::collection::vec(("[a-zA-Z0-9 :.]{0,12}", "(\n|\r\n|\r|\n\n)?"), 0..8),
            micros in 0u32..1_000_000,
            category in "[A-Za-z]{1,8}",
        ) {
            let message: String = pieces.iter().map(|(text, end)| format!("{text}{end}")).collect();
            let entry = OsTraceEntry {
                pid: 4242,
                seconds: T0,
                microseconds: micros,
                level: OsLogLevel::Error,
                filename: format!("{CONTAINER}/Example.app/Example"),
                image_name: "/usr/lib/libobjc.A.dylib".into(),
                message: message.clone(),
                subsystem: Some(APP.into()),
                category: Some(category.clone()),
            };
            let lines = entry_to_lines(&entry, 4096);
            prop_assert!(!lines.is_empty());
            let first = lines[0].clone();
            let prefix = render(&LogLine { text: String::new(), ..first.clone() });
            for line in &lines {
                prop_assert!(!line.text.contains(['\n', '\r']));
                prop_assert_eq!(
                    (line.time, line.level, &line.tag, line.pid),
                    (first.time, first.level, &category, Some(4242))
                );
            }
            let rendered = lines.iter().map(render).collect::<Vec<_>>().join("\n");
            for out in rendered.split('\n') {
                prop_assert!(out.starts_with(&prefix), "{:?}", out);
            }
            // Nothing is lost but the line breaks themselves (and one at the very end).
            let normalized = message.replace("\r\n", "\n").replace('\r', "\n");
            let normalized = if normalized.len() > 1 || lines.len() > 1 {
                normalized.strip_suffix('\n').unwrap_or(&normalized).to_owned()
            } else {
                normalized.trim_end_matches('\n').to_owned()
            };
            let joined = lines.iter().map(|l| l.text.as_str()).collect::<Vec<_>>().join("\n");
            prop_assert_eq!(joined, normalized);
        }
    }
}
