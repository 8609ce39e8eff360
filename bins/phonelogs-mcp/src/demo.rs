//! The `--demo` phone: the in-memory fake phone holding the conformance scenario (Crash Test, a
//! debuggable app that logged, crashed and hung; a store app, a release build that asks first;
//! one of the phone's own apps) plus a finance app that is always refused and the answers of the
//! debugging aids, in the formats `debuggerd` and `dumpsys activity exit-info` print
//! (`testdata/android/tombstone`, `testdata/android/exitinfo`).
//!
//! The scenario's lines are stamped just after the server starts, so the task (which starts with
//! the MCP session) sees them without a `since`. Chatty, a busy development build, holds more
//! than a result does; its lines start a second before, so read them with a `since` (`1h`).

use phonelogs_driver::conformance::{APP_MARKER, OTHER_MARKER, SYSTEM_MARKER, Scenario};
use phonelogs_driver::{
    AppId, DeviceId, ExitRecord, NativeBacktrace, ThreadSummary, TombstoneCapture,
};
use phonelogs_fake::{FakeApp, FakePhone};
use time::OffsetDateTime;

/// The demo phone's serial.
pub const SERIAL: &str = "emulator-5554";
/// Crash Test's pid in the scenario.
const CRASH_TEST_PID: i64 = 4242;

const BACKTRACE: &str = "\n\n----- pid 4242 at 2026-11-30 10:12:00.123456789+0000 -----
Cmd line: dev.phonelogs.crashtest
ABI: 'x86_64'

\"s.crashtest\" sysTid=4242
    #00 pc 00000000000c9b2a  /apex/com.android.runtime/lib64/bionic/libc.so (__epoll_pwait+10)
    #01 pc 00000000000194f4  /system/lib64/libutils.so (android::Looper::pollInner(int)+260)
    #02 pc 00000000000193d2  /system/lib64/libutils.so (android::Looper::pollOnce(int, int*, int*, void**)+114)

\"Signal Catcher\" sysTid=4250
    #00 pc 00000000000c8a1a  /apex/com.android.runtime/lib64/bionic/libc.so (__rt_sigtimedwait+10)

----- end 4242 -----
";

const TOMBSTONE: &str = "*** *** *** *** *** *** *** *** *** *** *** *** *** *** *** ***
Build fingerprint: 'google/sdk_gphone64_x86_64/emu64xa:16/BP22.250325.006/13344233:userdebug/dev-keys'
Revision: '0'
ABI: 'x86_64'
Timestamp: 2026-11-30 10:12:05.345678901+0000
Process uptime: 31s
Cmdline: dev.phonelogs.crashtest
pid: 4242, tid: 4242, name: s.crashtest  >>> dev.phonelogs.crashtest <<<
uid: 10123
signal 35 (<debuggerd signal>), code -1 (SI_QUEUE from pid 7338, uid 0), fault addr --------
3 total frames
backtrace:
      #00 pc 00000000000c9b2a  /apex/com.android.runtime/lib64/bionic/libc.so (__epoll_pwait+10)
      #01 pc 00000000000194f4  /system/lib64/libutils.so (android::Looper::pollInner(int)+260)
      #02 pc 00000000000193d2  /system/lib64/libutils.so (android::Looper::pollOnce(int, int*, int*, void**)+114)
";

fn unmark(text: &str) -> String {
    let mut text = text.to_owned();
    for marker in [APP_MARKER, OTHER_MARKER, SYSTEM_MARKER] {
        text = text
            .replace(&format!("{marker} "), "")
            .replace(&format!("{marker}\n"), "")
            .replace(marker, "");
    }
    text
}

/// Builds the demo phone, its lines stamped from now on.
pub fn phone() -> FakePhone {
    let device = DeviceId::new(SERIAL);
    let mut scenario = Scenario::standard(device.clone(), OffsetDateTime::now_utc());
    // The conformance markers prove that nothing leaks in tests; a newcomer reading the demo
    // should see plain lines.
    for app in [
        &mut scenario.app,
        &mut scenario.other_app,
        &mut scenario.system_app,
    ] {
        for line in &mut app.lines {
            line.text = unmark(&line.text);
        }
        for crash in &mut app.crashes {
            crash.summary = unmark(&crash.summary);
            crash.text = unmark(&crash.text);
        }
    }
    for line in &mut scenario.system_lines {
        line.text = unmark(&line.text);
    }
    let phone = FakePhone::with_scenario(&scenario);

    // A finance app: refused under "Finance apps" whatever the person would say.
    phone.add_app(
        &device,
        FakeApp::new(AppId::new("com.paypal.android.p2pmobile"))
            .label("PayPal")
            .uid(10_300),
    );

    let crash_test = scenario.app.app.clone();
    phone.add_exit_record(
        &device,
        &crash_test,
        ExitRecord {
            timestamp: Some("2026-11-30 10:11:39.266".into()),
            pid: Some(CRASH_TEST_PID),
            real_uid: Some(10_123),
            user: Some(0),
            process: Some(crash_test.as_str().to_owned()),
            reason_code: Some(4),
            reason: Some("APP CRASH(EXCEPTION)".into()),
            subreason_code: Some(0),
            subreason: Some("UNKNOWN".into()),
            status: Some(0),
            importance: Some(100),
            pss: Some("0.00".into()),
            rss: Some("167MB".into()),
            state: Some("empty".into()),
            description: Some("crash".into()),
            trace_available: false,
            has_anr_info: false,
        },
    );
    phone.set_jdwp_pids(&device, vec![CRASH_TEST_PID, 1224, CRASH_TEST_PID]);
    // The emulator image is a userdebug build, so debuggerd runs.
    phone.set_debuggerd_allowed(&device, true);
    phone.set_backtrace(
        &device,
        NativeBacktrace {
            serial: SERIAL.into(),
            pid: CRASH_TEST_PID,
            process_name: Some(crash_test.as_str().to_owned()),
            abi: Some("x86_64".into()),
            thread_count: 2,
            threads: vec![
                ThreadSummary {
                    name: "s.crashtest".into(),
                    sys_tid: CRASH_TEST_PID,
                    frame_count: 3,
                },
                ThreadSummary {
                    name: "Signal Catcher".into(),
                    sys_tid: 4250,
                    frame_count: 1,
                },
            ],
            text: BACKTRACE.into(),
            // What a real driver reads of the dump: its pid line and the uid right after it.
            dumped_pid: Some(CRASH_TEST_PID),
            dumped_uid: Some(10_123),
        },
    );
    phone.set_tombstone(
        &device,
        TombstoneCapture {
            serial: SERIAL.into(),
            pid: CRASH_TEST_PID,
            process_name: Some(crash_test.as_str().to_owned()),
            abi: Some("x86_64".into()),
            signal: Some(
                "35 (<debuggerd signal>), code -1 (SI_QUEUE from pid 7338, uid 0), fault addr --------"
                    .into(),
            ),
            frame_count: Some(3),
            device_tombstone_ref: Some("tombstone_27.pb".into()),
            bytes: TOMBSTONE.as_bytes().to_vec(),
            // The header's `pid:` and `uid:` lines.
            dumped_pid: Some(CRASH_TEST_PID),
            dumped_uid: Some(10_123),
        },
    );
    add_chatty(&phone, &device);
    phone
}

/// The busy app's id: a development build with more lines and bigger crash reports than one
/// result holds, so the result cap shows (the benchmark's and the tests' capped calls).
pub const CHATTY: &str = "dev.phonelogs.chatty";

/// Adds Chatty: 1,000 lines of 200 to 1,900 bytes with quotes, backslashes, tabs and non-ASCII
/// text (which JSON escapes or writes in several bytes), stamped from a second before now, and
/// ten crash reports, the newest an ANR of about 30 KB, the others 5 to 40 KB.
fn add_chatty(phone: &FakePhone, device: &DeviceId) {
    use phonelogs_driver::{CrashKind, CrashReport, LogLevel, LogLine};
    let app = AppId::new(CHATTY);
    phone.add_app(
        device,
        FakeApp::new(app.clone())
            .label("Chatty")
            .uid(10_500)
            .dev_build(true),
    );
    let start = OffsetDateTime::now_utc() - time::Duration::seconds(1);
    let chunk = "payload \"quoted\" \\ tab\tsé漢 ";
    phone.add_logs(
        device,
        &app,
        (0..1_000).map(|i: i64| {
            let size = 200 + (i as usize * 37) % 1_700;
            let text = format!("line {i:04} {}", chunk.repeat(size / chunk.len() + 1));
            LogLine {
                time: start + time::Duration::milliseconds(i),
                level: LogLevel::Info,
                tag: "Chatty".into(),
                text: cut_at_char(&text, size).to_owned(),
                pid: Some(5_000),
                tid: Some(5_000),
                uid: Some(10_500),
            }
        }),
    );
    let frame = "    at dev.phonelogs.chatty.Worker.run(Worker.java:42)\n";
    for i in 0..10_i64 {
        let (kind, summary, size) = match i {
            9 => (
                CrashKind::Anr,
                "Input dispatching timed out".to_owned(),
                30_000,
            ),
            n if n % 3 == 0 => (
                CrashKind::NativeCrash,
                format!("signal 11 (SIGSEGV) #{n}"),
                5_000,
            ),
            n => (
                CrashKind::JavaCrash,
                format!("java.lang.IllegalStateException: \"busy\" #{n}"),
                8_000 + 4_000 * n as usize,
            ),
        };
        phone.add_crash(
            device,
            &app,
            CrashReport {
                kind,
                time: start + time::Duration::milliseconds(100 * i),
                pid: Some(5_000),
                process: CHATTY.into(),
                summary: summary.clone(),
                text: format!("{summary}\n{}", frame.repeat(size / frame.len())),
            },
        );
    }
}

fn cut_at_char(text: &str, max: usize) -> &str {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// A running simulated Android phone's adb host-protocol front: it listens until dropped.
pub struct Simulator {
    _handle: phonelogs_adbsim::SimHandle,
}

/// Starts the simulated Android phone (`phonelogs-adbsim`'s default phone: Crash Test, a store
/// app, a bank, a password manager, system apps, …) behind an adb host-protocol front on a free
/// loopback port, and the real Android driver pointed at it. Right after the session starts,
/// Crash Test logs its start and crashes when "Crash" is tapped, as in the spec's emulator runs.
pub async fn adbsim() -> anyhow::Result<(phonelogs_android::AdbPhone, Simulator)> {
    use anyhow::Context;
    let phone = phonelogs_adbsim::SimPhone::default_phone();
    let (address, handle) = phonelogs_adbsim::HostFront::bind(None, phone.clone())
        .await
        .context("starting the simulated adb server")?;
    let config = phonelogs_android::AdbConfig {
        // This is our own simulated server: never start a real one instead.
        start_server: false,
        ..phonelogs_android::AdbConfig::local(address.port())
    };
    let script = phone.clone();
    tokio::spawn(async move {
        // After the task has started, so that its default `since` shows these.
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        let crash_test = "dev.phonelogs.crashtest";
        let priority = phonelogs_adbsim::Priority::Info;
        let _ = script.log(crash_test, priority, "CrashTest", "Crash Test started");
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        let _ = script.crash(
            crash_test,
            "java.lang.IllegalStateException",
            "Crash button tapped",
        );
    });
    Ok((
        phonelogs_android::AdbPhone::new(config),
        Simulator { _handle: handle },
    ))
}
