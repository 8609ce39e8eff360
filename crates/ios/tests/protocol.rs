//! The wire pieces over `tokio::io::duplex`, with byte sequences built from the documented
//! formats (iOS notes §1 and §6): StartActivity, entry frames, installation_proxy `Lookup`, and
//! the crash report mover's `ping`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use phonelogs_crash::ostrace::OsLogLevel;
use phonelogs_driver::AppId;
use phonelogs_ios::protocol;
use plist::{Dictionary, Value};
use tokio::io::AsyncWriteExt;

fn status(value: &str) -> Vec<u8> {
    let mut dict = Dictionary::new();
    dict.insert("Status".into(), value.into());
    let mut bytes = vec![0x01];
    bytes.extend(plist_message(&Value::Dictionary(dict)));
    bytes
}

#[tokio::test]
async fn start_activity_then_entries_of_every_level_including_user_action() {
    let (mut client, mut server) = tokio::io::duplex(1 << 16);
    let server_task = tokio::spawn(async move {
        let request = read_request(&mut server).await.unwrap();
        server
            .write_all(&status("RequestSuccessful"))
            .await
            .unwrap();
        for (i, level) in [NOTICE, INFO, DEBUG, USER_ACTION, ERROR, FAULT, 0x42]
            .into_iter()
            .enumerate()
        {
            let mut entry = raw(
                321,
                1_764_496_800,
                level,
                "/var/containers/Bundle/Application/A/X.app/X",
                &format!("m{i}"),
            );
            entry.micros = 999_999;
            server
                .write_all(&frame(&encode_entry(&entry)))
                .await
                .unwrap();
        }
        // A damaged entry (shorter than its header) is skipped, not fatal.
        server.write_all(&frame(&[0u8; 40])).await.unwrap();
        let mut last = raw(321, 1_764_496_801, INFO, "/x", "after damage");
        last.subsystem = Some("com.example".into());
        last.category = Some("Net".into());
        server
            .write_all(&frame(&encode_entry(&last)))
            .await
            .unwrap();
        request
    });
    protocol::start_activity(&mut client, 321).await.unwrap();
    let mut skipped = protocol::Skipped::default();
    let mut levels = Vec::new();
    while let Some(entry) = protocol::next_entry(&mut client, &mut skipped)
        .await
        .unwrap()
    {
        assert_eq!(entry.pid, 321);
        levels.push(entry.level);
        if entry.message == "after damage" {
            assert_eq!(entry.category.as_deref(), Some("Net"));
            break;
        }
        assert_eq!(entry.microseconds, 999_999);
    }
    assert_eq!(
        levels,
        [
            OsLogLevel::Notice,
            OsLogLevel::Info,
            OsLogLevel::Debug,
            OsLogLevel::UserAction,
            OsLogLevel::Error,
            OsLogLevel::Fault,
            OsLogLevel::Unknown(0x42),
            OsLogLevel::Info
        ]
    );
    let request = server_task.await.unwrap();
    assert_eq!(
        request.get("Pid").and_then(Value::as_signed_integer),
        Some(321)
    );
    // The stream ends cleanly when the phone closes it.
    assert!(
        protocol::next_entry(&mut client, &mut skipped)
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn a_refused_start_and_a_bad_frame_marker_are_errors() {
    let (mut client, mut server) = tokio::io::duplex(4096);
    tokio::spawn(async move {
        let _ = read_request(&mut server).await;
        server.write_all(&status("RequestFailed")).await.unwrap();
    });
    assert!(protocol::start_activity(&mut client, 1).await.is_err());

    let mut skipped = protocol::Skipped::default();
    let (mut client, mut server) = tokio::io::duplex(4096);
    server.write_all(&[0x03, 1, 0, 0, 0, 0]).await.unwrap();
    assert!(
        protocol::next_entry(&mut client, &mut skipped)
            .await
            .is_err()
    );

    // A length far beyond any entry is refused before anything is allocated.
    let (mut client, mut server) = tokio::io::duplex(4096);
    server
        .write_all(&[0x02, 0xff, 0xff, 0xff, 0x7f])
        .await
        .unwrap();
    assert!(
        protocol::next_entry(&mut client, &mut skipped)
            .await
            .is_err()
    );
}

/// Issue 38: activity, trace and user-action records, and records Apple's client refuses
/// (version 0, a header size of 0, a length that breaks the size rule, a 16-bit reading of
/// the message length), are skipped and counted; the log records around them are read.
#[tokio::test]
async fn other_record_types_and_broken_records_are_skipped_and_counted() {
    let (mut client, mut server) = tokio::io::duplex(1 << 16);
    let good = |text: &str| encode_entry(&raw(7, 1_764_496_800, INFO, "/a/X.app/X", text));
    let mut odd = Vec::new();
    for kind in [2u32, 4, 16] {
        let mut record = good("not a line");
        record[1..5].copy_from_slice(&kind.to_le_bytes());
        odd.push(record);
    }
    let mut version = good("version 0");
    version[0] = 0;
    let mut header = good("header 0");
    header[5..9].copy_from_slice(&0u32.to_le_bytes());
    let mut longer = good("one byte more");
    longer.push(b'!');
    let mut message_high = good("message length past 16 bits");
    message_high[111] = 1;
    let broken = [version, header, longer, message_high];
    tokio::spawn(async move {
        server.write_all(&frame(&good("first"))).await.unwrap();
        for record in odd.iter().chain(&broken) {
            server.write_all(&frame(record)).await.unwrap();
        }
        server.write_all(&frame(&good("second"))).await.unwrap();
    });
    let mut skipped = protocol::Skipped::default();
    let mut read = Vec::new();
    while let Some(entry) = protocol::next_entry(&mut client, &mut skipped)
        .await
        .unwrap()
    {
        read.push(entry.message);
    }
    assert_eq!(read, ["first", "second"]);
    assert_eq!(
        skipped,
        protocol::Skipped {
            other_types: 3,
            broken: 4
        }
    );
}

fn lookup_answer(app: &str, get_task_allow: Option<bool>, app_type: &str) -> Vec<u8> {
    let mut attrs = Dictionary::new();
    attrs.insert("CFBundleIdentifier".into(), app.into());
    attrs.insert("CFBundleExecutable".into(), "CrashTest".into());
    attrs.insert("CFBundleDisplayName".into(), "Crash Test".into());
    // The build, under which the person files the app's dSYMs.
    attrs.insert("CFBundleVersion".into(), "412".into());
    attrs.insert("ApplicationType".into(), app_type.into());
    attrs.insert("Path".into(), BUNDLE.into());
    if let Some(allow) = get_task_allow {
        let mut ent = Dictionary::new();
        ent.insert("get-task-allow".into(), allow.into());
        ent.insert(
            "application-identifier".into(),
            format!("TEAMID.{app}").into(),
        );
        attrs.insert("Entitlements".into(), Value::Dictionary(ent));
    }
    let mut result = Dictionary::new();
    result.insert(app.into(), Value::Dictionary(attrs));
    let mut answer = Dictionary::new();
    answer.insert("LookupResult".into(), Value::Dictionary(result));
    answer.insert("Status".into(), "Complete".into());
    plist_message(&Value::Dictionary(answer))
}

#[tokio::test]
async fn lookup_asks_for_the_entitlements_and_reads_get_task_allow() {
    let app = AppId::new("dev.phonelogs.crashtest");
    for (allow, app_type, dev, system) in [
        (Some(true), "User", true, false),
        (Some(false), "User", false, false),
        (None, "User", false, false),
        (None, "System", false, true),
    ] {
        let (mut client, mut server) = tokio::io::duplex(1 << 16);
        let answer = lookup_answer(app.as_str(), allow, app_type);
        let task = tokio::spawn(async move {
            let request = read_request(&mut server).await.unwrap();
            server.write_all(&answer).await.unwrap();
            request
        });
        let record = protocol::lookup(&mut client, &app).await.unwrap().unwrap();
        assert_eq!((record.dev_build, record.system), (dev, system));
        assert_eq!(record.path, BUNDLE);
        assert_eq!(record.label.as_deref(), Some("Crash Test"));
        assert_eq!(record.version.as_deref(), Some("412"));
        let request = task.await.unwrap();
        assert_eq!(
            request.get("Command").and_then(Value::as_string),
            Some("Lookup")
        );
        let options = request
            .get("ClientOptions")
            .and_then(Value::as_dictionary)
            .unwrap();
        let attrs: Vec<&str> = options
            .get("ReturnAttributes")
            .and_then(Value::as_array)
            .unwrap()
            .iter()
            .filter_map(Value::as_string)
            .collect();
        assert!(attrs.contains(&"Entitlements") && attrs.contains(&"Path"));
        assert!(attrs.contains(&"CFBundleVersion"));
        let ids = options.get("BundleIDs").and_then(Value::as_array).unwrap();
        assert_eq!(ids[0].as_string(), Some(app.as_str()));
    }
}

#[tokio::test]
async fn lookup_of_an_app_that_is_not_installed_is_none() {
    let (mut client, mut server) = tokio::io::duplex(4096);
    tokio::spawn(async move {
        let _ = read_request(&mut server).await;
        let mut progress = Dictionary::new();
        progress.insert("Status".into(), "BrowsingApplications".into());
        server
            .write_all(&plist_message(&Value::Dictionary(progress)))
            .await
            .unwrap();
        let mut answer = Dictionary::new();
        answer.insert("LookupResult".into(), Value::Dictionary(Dictionary::new()));
        answer.insert("Status".into(), "Complete".into());
        server
            .write_all(&plist_message(&Value::Dictionary(answer)))
            .await
            .unwrap();
    });
    assert!(
        protocol::lookup(&mut client, &AppId::new("com.example.gone"))
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn the_mover_ping_is_accepted_with_or_without_a_nul() {
    for bytes in [&b"ping"[..], b"ping\0"] {
        let (mut client, mut server) = tokio::io::duplex(64);
        server.write_all(bytes).await.unwrap();
        protocol::await_ping(&mut client).await.unwrap();
    }
    let (mut client, mut server) = tokio::io::duplex(64);
    server.write_all(b"pong").await.unwrap();
    assert!(protocol::await_ping(&mut client).await.is_err());
    let (mut client, server) = tokio::io::duplex(64);
    drop(server);
    assert!(protocol::await_ping(&mut client).await.is_err());
}

/// `PidList` (pymobiledevice3 `services/os_trace.py` `get_pid_list`; idevice
/// `services/os_trace_relay.rs`): the request, then a marker byte and a length-prefixed plist
/// whose `Payload` maps each pid (a decimal string) to its `ProcessName`. Entries that are not a
/// pid with a name are skipped; an answer without a `Payload` is a clear error.
#[tokio::test]
async fn pid_list_reads_names_by_pid_and_skips_odd_entries() {
    let answer = |payload: Option<Dictionary>| {
        let mut dict = Dictionary::new();
        if let Some(payload) = payload {
            dict.insert("Payload".into(), Value::Dictionary(payload));
        }
        let mut bytes = vec![0x01];
        bytes.extend(plist_message(&Value::Dictionary(dict)));
        bytes
    };
    let named = |name: &str| {
        let mut d = Dictionary::new();
        d.insert("ProcessName".into(), name.into());
        Value::Dictionary(d)
    };
    let mut payload = Dictionary::new();
    payload.insert("1".into(), named("launchd"));
    payload.insert("4242".into(), named("CrashTest"));
    payload.insert("notapid".into(), named("Odd"));
    payload.insert("77".into(), Value::Dictionary(Dictionary::new()));
    payload.insert("0".into(), named("kernel_task"));
    let (mut client, mut server) = tokio::io::duplex(1 << 16);
    let bytes = answer(Some(payload));
    let server_task = tokio::spawn(async move {
        let request = read_request(&mut server).await.unwrap();
        server.write_all(&bytes).await.unwrap();
        request
    });
    let mut listed = protocol::pid_list(&mut client).await.unwrap();
    listed.sort();
    assert_eq!(
        listed,
        [(1, "launchd".to_owned()), (4242, "CrashTest".to_owned())]
    );
    let request = server_task.await.unwrap();
    assert_eq!(
        request.get("Request").and_then(Value::as_string),
        Some("PidList")
    );

    let (mut client, mut server) = tokio::io::duplex(1 << 16);
    let bytes = answer(None);
    tokio::spawn(async move {
        read_request(&mut server).await.unwrap();
        server.write_all(&bytes).await.unwrap();
    });
    let error = protocol::pid_list(&mut client).await.unwrap_err();
    assert!(error.to_string().contains("without a Payload"), "{error}");
}
