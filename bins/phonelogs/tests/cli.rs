//! The `phonelogs` binary as a person uses it: state shared with a running gateway, answers,
//! errors, the terminal prompt of `approvals watch`, offline reports, and the demo.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use phonelogs_driver::{AppId, DeviceId, LogLevel, LogLine};
use phonelogs_fake::{FakeApp, FakePhone};
use phonelogs_gateway::{Agent, Gateway, LogsRequest, Mode, Status, TaskSpec};
use time::OffsetDateTime;

fn phonelogs(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_phonelogs"))
        .args(args)
        .env_remove("PHONELOGS_STATE_DIR")
        .output()
        .expect("the phonelogs binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A gateway on `dir` with one release-built app whose logs hold a canary; returns the pending
/// approval's id after the agent's first call.
async fn pending_approval(dir: &Path) -> (Gateway, phonelogs_gateway::Session, String) {
    let phone = FakePhone::new();
    let device = DeviceId::new("emulator-5554");
    phone.add_device(&device, "Pixel");
    let app = AppId::new("com.example.store");
    phone.add_app(&device, FakeApp::new(app.clone()).label("Store").uid(10200));
    phone.add_logs(
        &device,
        &app,
        [LogLine {
            time: OffsetDateTime::now_utc() + time::Duration::seconds(30),
            level: LogLevel::Info,
            tag: "Store".into(),
            text: "CANARY-CLI-7731 secret".into(),
            pid: Some(1),
            tid: Some(1),
            uid: Some(10200),
        }],
    );
    let gateway = Gateway::builder()
        .driver(Arc::new(phone))
        .state_dir(dir)
        .build()
        .expect("gateway");
    let session = gateway.start_task(TaskSpec::new(Agent::new("cli-test-agent", Mode::Full)));
    let response = session.logs(LogsRequest::new("com.example.store")).await;
    assert_eq!(response.status, Status::ApprovalPending, "{response:?}");
    let id = response.approval_id.clone().expect("an approval id");
    (gateway, session, id)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_person_answers_what_an_agent_asked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let state = dir.path().to_str().expect("utf-8 path");
    let (_gateway, session, id) = pending_approval(dir.path()).await;

    let listed = phonelogs(&["approvals", "list", "--state-dir", state, "--json"]);
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    let json: serde_json::Value = serde_json::from_slice(&listed.stdout).expect("json");
    assert_eq!(json[0]["id"], id.as_str());
    assert_eq!(json[0]["agent"], "cli-test-agent");
    assert_eq!(json[0]["app"], "com.example.store");

    let answered = phonelogs(&["approvals", "answer", "--state-dir", state, &id, "task"]);
    assert!(answered.status.success(), "{}", text(&answered.stderr));
    assert!(text(&answered.stdout).contains("Allow for this task"));

    // The agent's retry picks up the person's answer.
    let mut retry = LogsRequest::new("com.example.store");
    retry.approval_id = Some(id.clone());
    let response = session.logs(retry).await;
    assert_eq!(response.status, Status::Ok, "{response:?}");
    assert!(response.log.contains("CANARY-CLI-7731"));

    // Answering twice is one clear line and a non-zero exit.
    let again = phonelogs(&["approvals", "answer", "--state-dir", state, &id, "deny"]);
    assert!(!again.status.success());
    assert_eq!(
        text(&again.stderr).trim().lines().count(),
        1,
        "{}",
        text(&again.stderr)
    );

    let unknown = phonelogs(&[
        "approvals",
        "answer",
        "--state-dir",
        state,
        "ap-nope",
        "once",
    ]);
    assert!(!unknown.status.success());
    assert!(text(&unknown.stderr).contains("ap-nope"));

    let bad = phonelogs(&["approvals", "answer", "--state-dir", state, &id, "maybe"]);
    assert!(!bad.status.success());
    assert!(text(&bad.stderr).contains("once, task, always or deny"));

    // The history names what was read, never the text.
    let history = phonelogs(&[
        "history",
        "--state-dir",
        state,
        "--app",
        "com.example.store",
    ]);
    assert!(history.status.success(), "{}", text(&history.stderr));
    let shown = text(&history.stdout);
    assert!(
        shown.contains("Waiting for you: Read the logs of Store"),
        "{shown}"
    );
    assert!(shown.contains("Read 1 log line of Store"), "{shown}");
    assert!(!shown.contains("CANARY-CLI-7731"));
    let json = phonelogs(&["history", "--state-dir", state, "--json", "--since", "1h"]);
    assert!(json.status.success(), "{}", text(&json.stderr));
    assert!(!text(&json.stdout).contains("CANARY-CLI-7731"));
    let bad_since = phonelogs(&["history", "--state-dir", state, "--since", "yesterday-ish"]);
    assert!(!bad_since.status.success());
}

#[tokio::test(flavor = "multi_thread")]
async fn always_allow_rules_are_listed_and_revoked_and_apps_blocked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let state = dir.path().to_str().expect("utf-8 path");
    let (_gateway, _session, id) = pending_approval(dir.path()).await;
    let answered = phonelogs(&["approvals", "answer", "--state-dir", state, &id, "always"]);
    assert!(answered.status.success(), "{}", text(&answered.stderr));

    let listed = phonelogs(&["rules", "list", "--state-dir", state, "--json"]);
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    let json: serde_json::Value = serde_json::from_slice(&listed.stdout).expect("json");
    let rule = &json["always_allow"][0];
    assert_eq!(rule["agent"], "cli-test-agent");
    assert_eq!(rule["device"], "emulator-5554");
    assert_eq!(rule["app"], "com.example.store");
    let rule_id = rule["id"].as_str().expect("rule id").to_owned();

    let revoked = phonelogs(&["rules", "revoke", "--state-dir", state, &rule_id]);
    assert!(revoked.status.success(), "{}", text(&revoked.stderr));
    let listed = phonelogs(&["rules", "list", "--state-dir", state, "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&listed.stdout).expect("json");
    assert_eq!(json["always_allow"].as_array().map(Vec::len), Some(0));
    let twice = phonelogs(&["rules", "revoke", "--state-dir", state, &rule_id]);
    assert!(!twice.status.success());

    let blocked = phonelogs(&["rules", "block", "--state-dir", state, "com.example.store"]);
    assert!(blocked.status.success(), "{}", text(&blocked.stderr));
    let listed = phonelogs(&["rules", "list", "--state-dir", state]);
    assert!(text(&listed.stdout).contains("com.example.store"));
    let hostile = phonelogs(&["rules", "block", "--state-dir", state, "x; rm -rf /"]);
    assert!(!hostile.status.success());
    let unblocked = phonelogs(&[
        "rules",
        "unblock",
        "--state-dir",
        state,
        "com.example.store",
    ]);
    assert!(unblocked.status.success(), "{}", text(&unblocked.stderr));
}

/// Only the person unmasks an app's secrets, per app, with `phonelogs rules unmask`; it is
/// listed, recorded in the history, and revoked with `phonelogs rules mask`. A running agent's
/// next read follows each change.
#[tokio::test(flavor = "multi_thread")]
async fn the_person_unmasks_an_apps_secrets_and_masks_them_again() {
    const TOKEN: &str = "ghp_a1B2c3D4e5a1B2c3D4e5a1B2c3D4e5a1B2c3";
    let dir = tempfile::tempdir().expect("tempdir");
    let state = dir.path().to_str().expect("utf-8 path");
    let phone = FakePhone::new();
    let device = DeviceId::new("emulator-5554");
    phone.add_device(&device, "Pixel");
    let app = AppId::new("dev.example.debug");
    phone.add_app(
        &device,
        FakeApp::new(app.clone())
            .label("Debug")
            .uid(10300)
            .dev_build(true),
    );
    phone.add_logs(
        &device,
        &app,
        [LogLine {
            time: OffsetDateTime::now_utc() - time::Duration::seconds(5),
            level: LogLevel::Info,
            tag: "Net".into(),
            text: format!("using {TOKEN}"),
            pid: Some(1),
            tid: Some(1),
            uid: Some(10300),
        }],
    );
    let gateway = Gateway::builder()
        .driver(Arc::new(phone))
        .state_dir(dir.path())
        .build()
        .expect("gateway");
    let session = gateway.start_task(TaskSpec::new(Agent::new("cli-test-agent", Mode::Full)));
    let read = async || {
        let mut request = LogsRequest::new(app.as_str());
        request.since = Some("1m".into());
        session.logs(request).await
    };
    let masked = read().await;
    assert_eq!(masked.status, Status::Ok, "{}", masked.message);
    assert!(
        masked.log.contains("using [redacted:github-pat]"),
        "{}",
        masked.log
    );
    assert_eq!(masked.masked, 1);

    let unmasked = phonelogs(&["rules", "unmask", "--state-dir", state, app.as_str()]);
    assert!(unmasked.status.success(), "{}", text(&unmasked.stderr));
    let listed = phonelogs(&["rules", "list", "--state-dir", state, "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&listed.stdout).expect("json");
    assert_eq!(json["unmasked"][0]["app"], app.as_str(), "{json}");
    let shown = read().await;
    assert!(shown.log.contains(TOKEN), "{}", shown.log);
    assert!(
        shown.message.contains("the person turned masking off"),
        "{}",
        shown.message
    );

    let masked_again = phonelogs(&["rules", "mask", "--state-dir", state, app.as_str()]);
    assert!(
        masked_again.status.success(),
        "{}",
        text(&masked_again.stderr)
    );
    assert!(!read().await.log.contains(TOKEN));
    // Masking what is masked is an error; an app id with shell syntax is refused.
    assert!(
        !phonelogs(&["rules", "mask", "--state-dir", state, app.as_str()])
            .status
            .success()
    );
    assert!(
        !phonelogs(&["rules", "unmask", "--state-dir", state, "x; rm -rf /"])
            .status
            .success()
    );

    let history = phonelogs(&["history", "--state-dir", state, "--json"]);
    let steps = text(&history.stdout);
    assert!(steps.contains("You turned off the masking of secrets in the logs of dev.example.debug (on the command line)"), "{steps}");
    assert!(
        steps.contains("You turned the masking of secrets back on for dev.example.debug"),
        "{steps}"
    );
    assert!(!steps.contains(TOKEN), "the history holds no log text");
}

#[test]
fn a_corrupt_state_database_is_a_clear_error_and_left_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join(phonelogs_gateway::DB_FILE);
    std::fs::write(&db, b"this is not a database, but the person's file").expect("write");
    let state = dir.path().to_str().expect("utf-8 path");
    let out = phonelogs(&["approvals", "list", "--state-dir", state]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("corrupt"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        std::fs::read(&db).expect("read"),
        b"this is not a database, but the person's file"
    );
}

/// `approvals watch` in a pseudo-terminal (through `script`), answered by typing.
#[tokio::test(flavor = "multi_thread")]
async fn approvals_watch_asks_in_the_terminal() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: `script` (util-linux) is not installed, so no pseudo-terminal");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let state = dir.path().to_str().expect("utf-8 path").to_owned();
    let (gateway, _session, id) = pending_approval(dir.path()).await;
    let command = format!(
        "{} approvals watch --state-dir {}",
        env!("CARGO_BIN_EXE_phonelogs"),
        state
    );
    let mut child = Command::new("script")
        .args(["-qfec", &command, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("script runs");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut seen = Vec::new();
        let mut buffer = [0u8; 4096];
        while let Ok(n) = stdout.read(&mut buffer) {
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buffer[..n]);
        }
        String::from_utf8_lossy(&seen).into_owned()
    });
    // Wait until the person answered in the terminal, or give up after a generous bound.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut answered = false;
    let mut typed = false;
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(300));
        if !typed {
            // "x" is not an answer and is asked again; "t" answers for this task.
            stdin.write_all(b"x\nt\n").expect("type");
            stdin.flush().expect("flush");
            typed = true;
        }
        let approval = gateway
            .store()
            .approval(&id)
            .expect("store")
            .expect("approval");
        if approval.answer.is_some() {
            assert_eq!(approval.answer, Some(phonelogs_gateway::Answer::Task));
            answered = true;
            break;
        }
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    let screen = reader.join().expect("reader");
    assert!(
        answered,
        "the terminal answer never reached the store; screen:\n{screen}"
    );
    assert!(screen.contains("Read the logs of Store?"), "{screen}");
    assert!(
        screen.contains("[o]nce, for this [t]ask, [a]lways, [d]eny"),
        "{screen}"
    );
    assert!(screen.contains("is not an answer"), "{screen}");
}

#[test]
fn the_demo_reads_both_simulated_phones() {
    let out = phonelogs(&["demo"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(shown.contains("PLSIM0001"), "{shown}");
    assert!(shown.contains("Crash button tapped"), "{shown}");
    assert!(shown.contains("approval_pending"), "{shown}");
    assert!(shown.contains("Blocked by “Finance apps”"), "{shown}");
    assert!(shown.contains("Read 1 crash report of"), "{shown}");
    // The iPhone part: the app's and its widget's lines through the follower, its `.ips`
    // report, a store app that asks and the WebDriverAgent runner refused.
    let iphone = shown
        .split_once("now the iPhone (00008101-000A1234567890AB)")
        .map(|(_, rest)| rest)
        .unwrap_or_else(|| panic!("no iPhone part: {shown}"));
    for expected in [
        "CrashTest: Crash Test started",
        "Widget: timeline reloaded",
        "Exception Reason:    Crash button tapped",
        "approval_pending",
        "Blocked by “UI automation helpers”",
    ] {
        assert!(iphone.contains(expected), "{expected}: {iphone}");
    }
}

#[test]
fn report_reads_files_and_fails_clearly_on_missing_ones() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("crash.txt");
    // A crash buffer excerpt in `-v threadtime` form, as `adb logcat -b crash -d` prints it.
    std::fs::write(
        &file,
        "11-30 10:00:06.100  4242  4242 E AndroidRuntime: FATAL EXCEPTION: main\n\
         11-30 10:00:06.100  4242  4242 E AndroidRuntime: Process: dev.phonelogs.crashtest, PID: 4242\n\
         11-30 10:00:06.100  4242  4242 E AndroidRuntime: java.lang.IllegalStateException: Crash button tapped\n",
    )
    .expect("write");
    let path = file.to_str().expect("utf-8 path");
    let out = phonelogs(&["report", "--json", path]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let first = text(&out.stdout);
    let json: serde_json::Value =
        serde_json::from_str(first.lines().next().unwrap_or("")).expect("one JSON object per line");
    assert_eq!(json["kind"], "java_crash");
    assert_eq!(json["pid"], 4242);
    let missing = phonelogs(&["report", path, "/no/such/file"]);
    assert!(!missing.status.success());
    assert!(text(&missing.stderr).contains("/no/such/file"));
    let format = phonelogs(&["report", "--format", "nonsense", path]);
    assert!(!format.status.success());
}

#[test]
fn a_state_directory_a_newer_version_wrote_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let state = dir.path().to_str().expect("utf-8 path");
    let created = phonelogs(&["rules", "list", "--state-dir", state]);
    assert!(created.status.success(), "{}", text(&created.stderr));
    let db = dir.path().join(phonelogs_gateway::DB_FILE);
    {
        let connection = rusqlite::Connection::open(&db).expect("open");
        connection
            .execute_batch("PRAGMA user_version = 999")
            .expect("set version");
    }
    let before = std::fs::read(&db).expect("read");
    let out = phonelogs(&["approvals", "list", "--state-dir", state]);
    assert!(!out.status.success());
    let message = text(&out.stderr);
    assert_eq!(message.trim().lines().count(), 1, "{message}");
    assert!(
        message.contains("999") && message.contains("newer"),
        "{message}"
    );
    assert_eq!(std::fs::read(&db).expect("read"), before);
}

#[test]
fn a_locked_database_waits_then_says_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let state = dir.path().to_str().expect("utf-8 path");
    let created = phonelogs(&["rules", "list", "--state-dir", state]);
    assert!(created.status.success(), "{}", text(&created.stderr));
    // Another process holds a write lock for longer than the command waits.
    let connection =
        rusqlite::Connection::open(dir.path().join(phonelogs_gateway::DB_FILE)).expect("open");
    connection
        .execute_batch("BEGIN EXCLUSIVE")
        .expect("take the lock");
    let out = phonelogs(&["rules", "block", "--state-dir", state, "com.example.app"]);
    connection.execute_batch("ROLLBACK").expect("release");
    assert!(!out.status.success());
    let message = text(&out.stderr);
    assert!(message.contains("locked by another process"), "{message}");
    assert_eq!(message.trim().lines().count(), 1, "{message}");
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

#[test]
fn doctor_says_what_is_missing_and_how_to_fix_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let empty_path = tempfile::tempdir().expect("tempdir");
    let out = Command::new(env!("CARGO_BIN_EXE_phonelogs"))
        .args(["doctor", "--json", "--state-dir"])
        .arg(dir.path())
        // No adb on PATH, no server on its port, no usbmuxd: everything is missing but the state.
        .env("PATH", empty_path.path())
        .env("ANDROID_ADB_SERVER_PORT", free_port().to_string())
        .env_remove("ADB_SERVER_SOCKET")
        .env(
            "USBMUXD_SOCKET_ADDRESS",
            format!("127.0.0.1:{}", free_port()),
        )
        .output()
        .expect("runs");
    assert!(
        !out.status.success(),
        "doctor must fail when things are missing"
    );
    let findings: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let find = |check: &str| {
        findings
            .as_array()
            .and_then(|all| all.iter().find(|f| f["check"] == check))
            .cloned()
            .unwrap_or_else(|| panic!("no {check} finding in {findings}"))
    };
    let adb = find("adb binary");
    assert_eq!(adb["ok"], false);
    assert!(
        adb["fix"]
            .as_str()
            .is_some_and(|fix| fix.contains("apt-get install adb"))
    );
    assert_eq!(find("adb server")["ok"], false);
    assert_eq!(find("usbmuxd")["ok"], false);
    let state = find("state directory");
    assert_eq!(state["ok"], true, "{state}");
}

/// `phonelogs sim --ios`: its first stdout line is `USBMUXD_SOCKET_ADDRESS=127.0.0.1:PORT`;
/// through that address and through its Unix socket, our driver (`phonelogs devices`) and, when
/// installed, libimobiledevice's `idevice_id` see the phone; `--control` plays the phone from
/// standard input; the end of the input stops it and removes the socket file.
#[test]
fn sim_ios_serves_the_simulated_iphone() {
    use std::io::BufRead;
    const UDID: &str = "00008101-000A1234567890AB";
    let dir = tempfile::tempdir().expect("tempdir");
    let socket = dir.path().join("usbmuxd");
    let mut child = Command::new(env!("CARGO_BIN_EXE_phonelogs"))
        .args([
            "sim",
            "--ios",
            "--port",
            "0",
            "--control",
            "--usbmuxd-socket",
        ])
        .arg(&socket)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("phonelogs sim --ios starts");
    let (lines_tx, lines) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().expect("stdout");
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if lines_tx.send(line).is_err() {
                break;
            }
        }
    });
    let next = || {
        lines
            .recv_timeout(Duration::from_secs(20))
            .expect("a line from phonelogs sim --ios")
    };
    let first = next();
    let address = first
        .strip_prefix("USBMUXD_SOCKET_ADDRESS=")
        .unwrap_or_else(|| panic!("the first line is {first:?}"))
        .to_owned();
    let (host, port) = address.rsplit_once(':').expect("host:port");
    assert_eq!(host, "127.0.0.1");
    assert!(port.parse::<u16>().is_ok_and(|p| p > 0), "{address}");
    assert!(socket.exists());

    let empty_path = tempfile::tempdir().expect("tempdir");
    for usbmuxd in [address.clone(), socket.display().to_string()] {
        let out = Command::new(env!("CARGO_BIN_EXE_phonelogs"))
            .args(["devices", "--json"])
            .env("USBMUXD_SOCKET_ADDRESS", &usbmuxd)
            // No adb to start, no server on its port: only the iPhone is listed.
            .env("PATH", empty_path.path())
            .env("ANDROID_ADB_SERVER_PORT", free_port().to_string())
            .env_remove("ADB_SERVER_SOCKET")
            .output()
            .expect("phonelogs devices runs");
        let listed: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        let ios: Vec<&serde_json::Value> = listed["devices"]
            .as_array()
            .map(|all| all.iter().filter(|d| d["platform"] == "ios").collect())
            .unwrap_or_default();
        assert_eq!(ios.len(), 1, "{usbmuxd}: {listed}");
        // A usbmuxd named by USBMUXD_SOCKET_ADDRESS on a loopback port is not the platform's
        // own socket, so its phone is named with it (docs/farms.md).
        assert_eq!(ios[0]["serial"], UDID, "{listed}");
        let source = ios[0]["source"].as_str().unwrap_or_default();
        assert!(
            source.contains(usbmuxd.trim_start_matches("UNIX:")),
            "{listed}"
        );
        assert_eq!(ios[0]["id"], format!("{source}/{UDID}"), "{listed}");
        assert_eq!(ios[0]["state"], "online", "{listed}");
    }
    if let Some(idevice_id) = ios_tool("idevice_id") {
        for usbmuxd in [address.clone(), format!("UNIX:{}", socket.display())] {
            let out = Command::new(&idevice_id)
                .arg("-l")
                .env("USBMUXD_SOCKET_ADDRESS", &usbmuxd)
                .env("HOME", dir.path())
                .output()
                .expect("idevice_id runs");
            assert_eq!(
                text(&out.stdout).trim(),
                UDID,
                "{usbmuxd}: {}",
                text(&out.stderr)
            );
        }
    }

    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(stdin, "launch dev.phonelogs.crashtest").expect("write");
    let answer = next();
    assert!(answer.starts_with("pid "), "{answer}");
    writeln!(stdin, "crash 1 nonsense").expect("write");
    assert!(next().starts_with("error: "));
    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("phonelogs sim --ios --control did not stop at the end of its input");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status}");
    assert!(!socket.exists(), "the socket file outlived the simulator");
}

/// A libimobiledevice tool on PATH; `None`, saying why, when it is missing, unless CI requires
/// the tools (`PHONELOGS_REQUIRE_IOS_TOOLS=1`).
/// `phonelogs sim --ios --ios-version V` plays that release (`version` over the control
/// protocol; the disk image and Developer Mode commands answer), and a release it does not play
/// is refused with the list of those it does.
#[test]
fn sim_ios_plays_the_ios_release_it_is_given() {
    use std::io::BufRead;
    let mut child = Command::new(env!("CARGO_BIN_EXE_phonelogs"))
        .args(["sim", "--ios", "--ios-version", "18.6", "--control"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("phonelogs sim --ios starts");
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(stdin, "version").expect("write");
    writeln!(stdin, "ddi unmount").expect("write");
    writeln!(stdin, "developer-mode off").expect("write");
    writeln!(stdin, "ddi mount").expect("write");
    drop(stdin);
    let out = child.wait_with_output().expect("the simulator stops");
    assert!(out.status.success(), "{}", out.status);
    let lines: Vec<String> = out.stdout.lines().map_while(Result::ok).collect();
    assert!(lines[0].starts_with("USBMUXD_SOCKET_ADDRESS="), "{lines:?}");
    let answers: Vec<&str> = lines
        .iter()
        .map(String::as_str)
        .filter(|l| !l.starts_with("USBMUXD_SOCKET_ADDRESS=") && !l.starts_with("RSD_ADDRESS="))
        .collect();
    assert_eq!(
        answers[..3],
        ["version 18.6 (22G86)", "ok", "ok"],
        "{lines:?}"
    );
    assert!(
        answers[3].starts_with("error: Developer Mode is off"),
        "{lines:?}"
    );

    let out = Command::new(env!("CARGO_BIN_EXE_phonelogs"))
        .args(["sim", "--ios", "--ios-version", "15.0"])
        .output()
        .expect("phonelogs runs");
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains("16.7.10, 17.2, 17.4, 18.6, 26.1"), "{err}");
}

fn ios_tool(name: &str) -> Option<std::path::PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(name))
            .find(|path| path.is_file())
    });
    if found.is_none() {
        let why = format!("skipping the {name} part: apt-get install libimobiledevice-utils");
        if std::env::var("PHONELOGS_REQUIRE_IOS_TOOLS").is_ok_and(|v| v == "1") {
            panic!("PHONELOGS_REQUIRE_IOS_TOOLS=1 but {why}");
        }
        eprintln!("{why}");
    }
    found
}

/// `phonelogs devices --usbmuxd A --usbmuxd B`: two `phonelogs sim --ios` (the same simulated
/// iPhone, so one UDID, behind two usbmuxd addresses) are listed as `A/UDID` and `B/UDID`, each
/// with its source; once A's simulator stops, only B's phone is listed and A is a problem that
/// names its address (docs/farms.md).
#[test]
fn devices_lists_the_iphones_of_two_usbmuxd_by_address() {
    use std::io::BufRead;
    const UDID: &str = "00008101-000A1234567890AB";
    /// A simulator process, killed if the test ends before it stops.
    struct Sim(std::process::Child);
    impl Drop for Sim {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let start = || {
        let mut child = Command::new(env!("CARGO_BIN_EXE_phonelogs"))
            .args(["sim", "--ios", "--port", "0", "--control"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("phonelogs sim --ios starts");
        let mut first = String::new();
        std::io::BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut first)
            .expect("the address line");
        let address = first
            .trim()
            .strip_prefix("USBMUXD_SOCKET_ADDRESS=")
            .unwrap_or_else(|| panic!("the first line is {first:?}"))
            .to_owned();
        (Sim(child), address)
    };
    let (mut sim_a, a) = start();
    let (mut sim_b, b) = start();
    let empty_path = tempfile::tempdir().expect("tempdir");
    let devices = || {
        let out = Command::new(env!("CARGO_BIN_EXE_phonelogs"))
            .args(["devices", "--json", "--usbmuxd", &a, "--usbmuxd", &b])
            // No adb to start, no server on its port: only iPhones are listed.
            .env("PATH", empty_path.path())
            .env("ANDROID_ADB_SERVER_PORT", free_port().to_string())
            .env_remove("ADB_SERVER_SOCKET")
            .env_remove("USBMUXD_SOCKET_ADDRESS")
            .output()
            .expect("phonelogs devices runs");
        let listed: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        let ios: Vec<(String, String, String)> = listed["devices"]
            .as_array()
            .map(|all| {
                all.iter()
                    .filter(|d| d["platform"] == "ios")
                    .map(|d| {
                        let field = |k: &str| d[k].as_str().unwrap_or_default().to_owned();
                        (field("id"), field("source"), field("serial"))
                    })
                    .collect()
            })
            .unwrap_or_default();
        (ios, listed)
    };

    let (mut ios, listed) = devices();
    ios.sort();
    let mut expected = vec![
        (format!("{a}/{UDID}"), a.clone(), UDID.to_owned()),
        (format!("{b}/{UDID}"), b.clone(), UDID.to_owned()),
    ];
    expected.sort();
    assert_eq!(ios, expected, "{listed}");

    // A's usbmuxd goes away (the end of its control input stops it): B's phone alone, and A
    // named as the problem.
    drop(sim_a.0.stdin.take());
    let deadline = Instant::now() + Duration::from_secs(10);
    while sim_a.0.try_wait().expect("wait").is_none() {
        assert!(
            Instant::now() < deadline,
            "phonelogs sim --ios did not stop"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let (ios, listed) = devices();
    assert_eq!(
        ios,
        [(format!("{b}/{UDID}"), b.clone(), UDID.to_owned())],
        "{listed}"
    );
    let problems: Vec<&str> = listed["problems"]
        .as_array()
        .map(|all| all.iter().filter_map(|p| p.as_str()).collect())
        .unwrap_or_default();
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with(&format!("iPhone ({a}):"))),
        "{listed}"
    );
    assert!(
        !problems.iter().any(|p| p.contains(&format!("({b})"))),
        "{listed}"
    );
    drop(sim_b.0.stdin.take());
}

/// `phonelogs doctor` with no phone tools reachable, on `state` and the shared store `url`:
/// its findings (JSON, or text) and everything it printed.
fn doctor_on(state: &Path, url: &str, json: bool) -> (serde_json::Value, String) {
    let empty_path = tempfile::tempdir().expect("tempdir");
    let mut command = Command::new(env!("CARGO_BIN_EXE_phonelogs"));
    command.arg("doctor");
    if json {
        command.arg("--json");
    }
    let out = command
        .arg("--state-dir")
        .arg(state)
        .args(["--store", url])
        .env("PATH", empty_path.path())
        .env("ANDROID_ADB_SERVER_PORT", free_port().to_string())
        .env_remove("ADB_SERVER_SOCKET")
        .env_remove("PHONELOGS_STORE")
        .env(
            "USBMUXD_SOCKET_ADDRESS",
            format!("127.0.0.1:{}", free_port()),
        )
        .output()
        .expect("runs");
    let printed = format!("{}{}", text(&out.stdout), text(&out.stderr));
    let findings = if json {
        serde_json::from_slice(&out.stdout).expect("json")
    } else {
        serde_json::Value::Null
    };
    (findings, printed)
}

#[test]
fn doctor_shows_the_shared_store_and_never_its_password() {
    let Some(pg) = phonelogs_store_pg::testing::TempPostgres::start() else {
        return;
    };
    pg.create_database("lab");
    let url = format!(
        "postgres://postgres:hunter2@127.0.0.1:{}/lab?sslmode=disable",
        pg.port
    );
    let name = format!("PostgreSQL 127.0.0.1:{}/lab", pg.port);
    let state = tempfile::tempdir().expect("tempdir");
    let store_finding = |findings: &serde_json::Value| {
        findings
            .as_array()
            .and_then(|all| all.iter().find(|f| f["check"] == "shared store"))
            .cloned()
            .unwrap_or_else(|| panic!("no shared store finding in {findings}"))
    };

    // Reached, without this build's schema: the command that migrates it.
    let (findings, printed) = doctor_on(state.path(), &url, true);
    assert!(!printed.contains("hunter2"), "{printed}");
    let store = store_finding(&findings);
    assert_eq!(store["ok"], false, "{store}");
    assert_eq!(
        store["detail"],
        format!("{name} has schema version 0; this build needs 1")
    );
    assert!(
        store["fix"]
            .as_str()
            .is_some_and(|fix| fix.contains("phonelogs store migrate")),
        "{store}"
    );

    // Migrated: host, port, database and schema version.
    let migrated = phonelogs(&["store", "migrate", "--store", &url]);
    assert!(migrated.status.success(), "{migrated:?}");
    let (findings, printed) = doctor_on(state.path(), &url, true);
    assert!(!printed.contains("hunter2"), "{printed}");
    let store = store_finding(&findings);
    assert_eq!(store["ok"], true, "{store}");
    assert_eq!(store["detail"], format!("{name} (schema version 1)"));
    let (_, printed) = doctor_on(state.path(), &url, false);
    assert!(
        printed.contains(&format!("ok  shared store: {name} (schema version 1)")),
        "{printed}"
    );
    assert!(!printed.contains("hunter2"), "{printed}");

    // Down: the error names the store, and says what to do.
    pg.stop();
    let (findings, printed) = doctor_on(state.path(), &url, true);
    assert!(!printed.contains("hunter2"), "{printed}");
    let store = store_finding(&findings);
    assert_eq!(store["ok"], false, "{store}");
    assert!(
        store["detail"].as_str().is_some_and(|d| d.contains(&name)),
        "{store}"
    );
    assert!(
        store["fix"]
            .as_str()
            .is_some_and(|fix| fix.contains("start the database")),
        "{store}"
    );
}

/// A password given with `--store` is on the command line, which every user of the machine
/// can read: the person is told, without the password, and pointed to `--store-file` or
/// `PHONELOGS_STORE`; given through `PHONELOGS_STORE`, nothing is said.
#[test]
fn a_password_on_the_command_line_is_warned_about_without_showing_it() {
    let url = format!(
        "postgres://lab:hunter2@127.0.0.1:{}/lab?sslmode=disable",
        free_port()
    );
    let state = tempfile::tempdir().expect("tempdir");
    let run = |flag: bool| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_phonelogs"));
        command
            .args(["approvals", "list", "--state-dir"])
            .arg(state.path())
            .env_remove("PHONELOGS_STORE");
        if flag {
            command.args(["--store", &url]);
        } else {
            command.env("PHONELOGS_STORE", &url);
        }
        let out = command.output().expect("runs");
        format!("{}{}", text(&out.stdout), text(&out.stderr))
    };
    let flagged = run(true);
    assert!(!flagged.contains("hunter2"), "{flagged}");
    assert!(
        flagged.contains("on the command line") && flagged.contains("--store-file"),
        "{flagged}"
    );
    let from_env = run(false);
    assert!(!from_env.contains("hunter2"), "{from_env}");
    assert!(!from_env.contains("on the command line"), "{from_env}");
    // Both name the store they could not reach.
    for printed in [&flagged, &from_env] {
        assert!(printed.contains("PostgreSQL 127.0.0.1:"), "{printed}");
    }
}
