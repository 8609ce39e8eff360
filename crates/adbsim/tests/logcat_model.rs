//! The logcat, drop box and package models checked byte for byte in-process (no transport):
//! exact line layouts, where `--uid`, `-t` and the priority filter apply, dividers, errors.

#![allow(clippy::unwrap_used)]

use phonelogs_adbsim::{AndroidVersion, Package, Priority, Profile, SimPhone, run_shell};

/// An empty phone at a fixed clock (2026-07-05 09:15:14.320 UTC, 10:15 local) with two apps.
fn quiet_phone(android: AndroidVersion) -> SimPhone {
    let phone = SimPhone::empty(Profile::for_android(android));
    phone.set_clock_ms(1_783_242_914_320);
    let mut app = Package::new("dev.example.app", 10234);
    app.debuggable = true;
    phone.install(app);
    phone.install(Package::new("dev.example.other", 10111));
    phone.launch("dev.example.app").unwrap();
    phone.launch("dev.example.other").unwrap();
    phone
}

async fn stdout(phone: &SimPhone, command: &str) -> String {
    let output = run_shell(phone, command).await;
    assert_eq!(
        output.exit_code,
        0,
        "{command}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[tokio::test]
async fn epoch_uid_and_threadtime_layouts_are_exact() {
    let phone = quiet_phone(AndroidVersion::Android14);
    let pid = phone.pid_of("dev.example.app").unwrap();
    phone
        .log("dev.example.app", Priority::Info, "Tag", "two\nlines")
        .unwrap();
    let out = stdout(&phone, "logcat -d -b main -v epoch -v uid").await;
    let seconds = phone.now_ns() / 1_000_000_000;
    // The clock moves with real time, so read the printed millis back rather than guess them.
    let line = out.lines().nth(1).unwrap();
    let millis = &line[20..23];
    let prefix = format!("{seconds:>19}.{millis} 10234 {pid:5} {pid:5} I Tag     : ");
    assert_eq!(
        out,
        format!("--------- beginning of main\n{prefix}two\n{prefix}lines\n")
    );

    let out = stdout(&phone, "logcat -d -b main").await;
    let line = out.lines().nth(1).unwrap();
    assert!(
        line.starts_with("07-05 10:15:"),
        "local time at +0100: {line}"
    );
    assert_eq!(&line[18..], format!(" {pid:5} {pid:5} I Tag     : two"));

    let out = stdout(&phone, "logcat -d -b main -v uid -v year").await;
    assert!(out.lines().nth(1).unwrap().starts_with("2026-07-05 10:15:"));
}

#[tokio::test]
async fn short_uid_names_replace_numbers() {
    let phone = quiet_phone(AndroidVersion::Android14);
    phone.native_crash("dev.example.app", 6).unwrap();
    let out = stdout(&phone, "logcat -d -b crash,system -v uid").await;
    let after_time = |needle: &str| -> String {
        out.lines()
            .find(|line| line.contains(needle))
            .map(|line| line[18..].to_string())
            .unwrap()
    };
    // uid 0 has a short passwd name; 1000 ("system") and app uids print as numbers.
    assert!(
        after_time("F DEBUG   : *** ***").starts_with("  root "),
        "{out}"
    );
    assert!(
        after_time("F libc    : Fatal signal 6 (SIGABRT)").starts_with(" 10234 "),
        "{out}"
    );
    assert!(
        after_time("ActivityManager: Start proc").starts_with("  1000 "),
        "{out}"
    );
}

#[tokio::test]
async fn tail_counts_everyone_before_the_uid_and_priority_filters() {
    let phone = quiet_phone(AndroidVersion::Android14);
    phone
        .log("dev.example.app", Priority::Error, "App", "mine")
        .unwrap();
    for index in 0..5 {
        phone
            .log(
                "dev.example.other",
                Priority::Info,
                "Other",
                &format!("theirs {index}"),
            )
            .unwrap();
    }
    let out = stdout(&phone, "logcat -d -b main --uid=10234 -t 5").await;
    assert_eq!(out, "", "the last five lines are someone else's");
    let out = stdout(&phone, "logcat -d -b main --uid=10234 -t 6").await;
    assert!(out.ends_with("E App     : mine\n"), "{out}");
    let out = stdout(&phone, "logcat -d -b main -t 6 '*:E'").await;
    assert_eq!(out.lines().count(), 2, "divider and the one error: {out}");
    let out = stdout(&phone, "logcat -d -b main -s Other:I").await;
    assert_eq!(out.lines().filter(|line| line.contains("Other")).count(), 5);
    assert!(!out.contains("App"));
}

#[tokio::test]
async fn logcat_ignoring_uid_returns_everyone() {
    let phone = quiet_phone(AndroidVersion::Android16);
    phone
        .log("dev.example.other", Priority::Info, "Other", "leak")
        .unwrap();
    assert!(
        !stdout(&phone, "logcat -d --uid=10234")
            .await
            .contains("leak")
    );
    phone.set_logcat_ignores_uid(true);
    assert!(
        stdout(&phone, "logcat -d --uid=10234")
            .await
            .contains("leak")
    );
}

#[tokio::test]
async fn dividers_come_only_with_printed_lines() {
    let phone = quiet_phone(AndroidVersion::Android14);
    phone
        .log("dev.example.app", Priority::Debug, "App", "quiet")
        .unwrap();
    let out = stdout(&phone, "logcat -d -b main,system '*:W'").await;
    assert_eq!(out, "", "nothing printed, no divider");
    phone
        .crash("dev.example.app", "java.lang.Error", "x")
        .unwrap();
    let out = stdout(&phone, "logcat -d -D -b main,system,crash '*:W'").await;
    assert!(out.starts_with("--------- beginning of crash\n"), "{out}");
    assert!(out.contains("--------- beginning of system\n"));
}

#[tokio::test]
async fn a_max_count_prints_the_oldest_lines_its_filter_allows() {
    let phone = quiet_phone(AndroidVersion::Android14);
    for (priority, text) in [
        (Priority::Debug, "first"),
        (Priority::Warn, "second"),
        (Priority::Debug, "third"),
        (Priority::Error, "fourth"),
        (Priority::Warn, "fifth"),
    ] {
        phone.log("dev.example.app", priority, "App", text).unwrap();
    }
    let lines = |out: String| -> Vec<String> {
        out.lines()
            .filter(|line| !line.starts_with("---------"))
            .map(|line| line.rsplit(": ").next().unwrap_or_default().to_owned())
            .collect()
    };
    assert_eq!(
        lines(stdout(&phone, "logcat -d -b main -m 1").await),
        ["first"]
    );
    assert_eq!(
        lines(stdout(&phone, "logcat -d -b main -m 2 '*:W'").await),
        ["second", "fourth"]
    );
    assert_eq!(
        lines(stdout(&phone, "logcat -d -b main -m 9 '*:E'").await),
        ["fourth"]
    );
}

#[tokio::test]
async fn option_errors_read_as_logcat_prints_them() {
    let phone = quiet_phone(AndroidVersion::Android14);
    for (command, message) in [
        ("logcat -d -v bogus", "logcat: Invalid -v 'bogus'.\n"),
        ("logcat -d -b nope", "logcat: Unknown -b buffer 'nope'.\n"),
        ("logcat -d --uid=abc", "logcat: Unable to parse UID 'abc'\n"),
        (
            "logcat -d --frobnicate",
            "logcat: Unknown option '--frobnicate'.\n",
        ),
        (
            "logcat -t 5 -m 3",
            "logcat: Cannot use -m (--max-count) and -t together.\n",
        ),
        ("logcat -d -b", "logcat: Option '-b' needs an argument.\n"),
    ] {
        let output = run_shell(&phone, command).await;
        assert_eq!(
            (
                String::from_utf8(output.stderr).unwrap().as_str(),
                output.exit_code
            ),
            (message, 1),
            "{command}"
        );
    }
    let old = quiet_phone(AndroidVersion::Android10);
    let output = run_shell(&old, "logcat -d --uid=10234").await;
    assert_eq!(output.exit_code, 1);
    assert!(output.stderr.starts_with(b"Unrecognized Option \0\n"));
}

#[tokio::test]
async fn wrapped_buffers_lose_their_oldest_lines() {
    let phone = quiet_phone(AndroidVersion::Android14);
    phone
        .log("dev.example.app", Priority::Info, "App", "early")
        .unwrap();
    phone.wrap_buffer(phonelogs_adbsim::Buffer::Main);
    assert!(!stdout(&phone, "logcat -d -b main").await.contains("early"));
    let sizes = stdout(&phone, "logcat -g -b main").await;
    assert!(
        sizes.starts_with("main: ring buffer is 256 KiB ("),
        "{sizes}"
    );
}

#[tokio::test]
async fn dropbox_search_terms_are_anded_and_dates_match() {
    let phone = quiet_phone(AndroidVersion::Android14);
    phone
        .crash("dev.example.app", "java.lang.Error", "x")
        .unwrap();
    let both = stdout(&phone, "dumpsys dropbox --print data_app_crash 2026-07-05").await;
    assert!(both.contains("Searching for: data_app_crash 2026-07-05\n"));
    assert!(both.contains("\n2026-07-05 10:15:"), "local time: {both}");
    assert!(both.contains("Package: dev.example.app v1 (1.0)\n"));
    let none = stdout(&phone, "dumpsys dropbox --print data_app_crash 2026-07-06").await;
    assert!(none.ends_with("\n(No entries found.)\n"), "{none}");
    let unknown = stdout(&phone, "dumpsys dropbox -x").await;
    assert!(
        unknown.starts_with("Unknown argument: -x\nDrop box contents: 1 entries\n"),
        "{unknown}"
    );
}

#[tokio::test]
async fn date_and_pm_answer_from_the_model() {
    let phone = quiet_phone(AndroidVersion::Android14);
    assert_eq!(stdout(&phone, "date +%z").await, "+0100\n");
    assert!(
        stdout(&phone, "date")
            .await
            .starts_with("Sun Jul  5 10:15:")
    );
    assert_eq!(
        stdout(&phone, "pm list packages -U example").await,
        "package:dev.example.app uid:10234\npackage:dev.example.other uid:10111\n"
    );
    assert_eq!(
        stdout(&phone, "pm list packages --uid 10111").await,
        "package:dev.example.other\n"
    );
    let flags = stdout(&phone, "dumpsys package dev.example.app").await;
    assert!(
        flags.contains("    pkgFlags=[ DEBUGGABLE HAS_CODE ALLOW_CLEAR_USER_DATA ALLOW_BACKUP ]\n")
    );
    let output = run_shell(&phone, "am set-debug-app").await;
    assert_eq!(output.exit_code, 255);
    assert!(
        output
            .stderr
            .starts_with(b"Exception occurred while executing 'set-debug-app':\n")
    );
}

#[tokio::test]
async fn odd_input_never_panics() {
    let phone = quiet_phone(AndroidVersion::Android14);
    for command in [
        "logcat -é",
        "logcat -tééé",
        "logcat -d -t 1.ééééééééé",
        "logcat -d -t '13-45 99:99:99.999'",
        "date +%",
        "dumpsys",
        "pm",
        "am",
        "debuggerd",
        "debuggerd -b 0",
        "echo 'unterminated",
        "a | b",
        "logcat -d :",
        "logcat -d '*:Q'",
    ] {
        // A panic would end the stream with no exit status (255 here) and no output.
        let output = run_shell(&phone, command).await;
        let said_something = !output.stdout.is_empty() || !output.stderr.is_empty();
        assert!(said_something || output.exit_code != 255, "{command}");
    }
}

#[tokio::test]
async fn a_package_in_two_users_lists_every_uid_on_android_16() {
    for android in [
        AndroidVersion::Android10,
        AndroidVersion::Android14,
        AndroidVersion::Android16,
    ] {
        let phone = SimPhone::empty(Profile::for_android(android));
        let mut cloned = Package::new("com.whatsapp", 10145);
        cloned.users = vec![0, 10];
        phone.install(cloned);
        phone.install(Package::new("dev.example.other", 10111));
        let list = stdout(&phone, "pm list packages -U").await;
        // Android 16 prints one comma list (a public tool's capture of an Android 16 phone:
        // `uid:10220,99910220`; testdata/adbsim/README.md); older releases, user 0's uid.
        let expected = if android == AndroidVersion::Android16 {
            "package:com.whatsapp uid:10145,1010145\npackage:dev.example.other uid:10111\n"
        } else {
            "package:com.whatsapp uid:10145\npackage:dev.example.other uid:10111\n"
        };
        assert_eq!(list, expected, "{android:?}");
        // One user asked for: that user's uid alone.
        assert_eq!(
            stdout(&phone, "pm list packages -U --user 10 com.whatsapp").await,
            "package:com.whatsapp uid:1010145\n"
        );
        // dumpsys package names both users.
        let dump = stdout(&phone, "dumpsys package com.whatsapp").await;
        assert!(
            dump.contains("    User 0: ") && dump.contains("    User 10: "),
            "{dump}"
        );
        assert_eq!(stdout(&phone, "am get-current-user").await, "0\n");
    }
}
