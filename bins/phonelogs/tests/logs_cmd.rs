//! `phonelogs logs`: the person's own view of one app's lines, on the simulated phone behind
//! its host-protocol front: the app's lines on stdout and no other app's, nobody asked, the
//! history recording the person's read, the refused lists applying.

#![allow(clippy::unwrap_used)]

use std::process::{Command, Output};

use phonelogs_adbsim::{HostFront, Priority, Profile, SimPhone};

fn phonelogs(args: Vec<String>) -> Output {
    Command::new(env!("CARGO_BIN_EXE_phonelogs"))
        .args(args)
        .env("PHONELOGS_LOG", "error")
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_person_reads_a_release_apps_lines_without_being_asked() {
    let phone = SimPhone::with_profile(Profile::default());
    let (address, _handle) = HostFront::bind(None, phone.clone()).await.unwrap();
    // A store app (a release build): an agent would be asked first; the person is not.
    phone
        .log(
            "com.spotify.music",
            Priority::Info,
            "Player",
            "PERSON-VIEW-LINE",
        )
        .unwrap();
    phone
        .log(
            "dev.phonelogs.crashtest",
            Priority::Info,
            "CrashTest",
            "OTHER-APP-LINE",
        )
        .unwrap();
    let state = tempfile::tempdir().unwrap();
    let serial = phone.profile().serial;
    let common = |app: &str| {
        vec![
            "logs".to_owned(),
            app.to_owned(),
            "--device".to_owned(),
            serial.clone(),
            "--adb-server".to_owned(),
            format!("127.0.0.1:{}", address.port()),
            "--usbmuxd".to_owned(),
            "/nonexistent/usbmuxd".to_owned(),
            "--state-dir".to_owned(),
            state.path().display().to_string(),
        ]
    };
    let args = common("com.spotify.music");
    let out = tokio::task::spawn_blocking(move || phonelogs(args))
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(stdout.contains("Player: PERSON-VIEW-LINE"), "{stdout}");
    assert!(!stdout.contains("OTHER-APP-LINE"), "{stdout}");

    // The refused lists apply to the person's view too.
    let args = common("com.chase.sig.android");
    let refused = tokio::task::spawn_blocking(move || phonelogs(args))
        .await
        .unwrap();
    assert!(!refused.status.success());

    let dir = state.path().display().to_string();
    let history = tokio::task::spawn_blocking(move || {
        phonelogs(vec!["history".into(), "--state-dir".into(), dir])
    })
    .await
    .unwrap();
    let history = String::from_utf8_lossy(&history.stdout);
    assert!(history.contains("agent you (phonelogs logs)"), "{history}");
    assert!(
        history.contains("log lines of com.spotify.music"),
        "{history}"
    );
    assert!(!history.contains("PERSON-VIEW-LINE"), "{history}");
}
