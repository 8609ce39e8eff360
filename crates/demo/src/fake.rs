//! The fake demo phone: the in-memory phone (`phonelogs-fake`) with the demo's own scenario.
//!
//! Crash Test is a development build that logged, crashed and hung; a store app is a release
//! build, so reading it asks first; Settings is one of the phone's own apps; PayPal is a finance
//! app, always refused; Chatty holds more than one result does. The debugging aids answer in the
//! formats `debuggerd` and `dumpsys activity exit-info` print (`testdata/android/tombstone`,
//! `testdata/android/exitinfo`).
//!
//! The scenario is the demo's own, not the conformance suite's: the suite's lines carry markers
//! that prove nothing leaks in tests, which a newcomer should not have to read around, and a
//! change to the suite must not change what the demo shows.

use phonelogs_driver::{
    AppId, CrashKind, CrashReport, DeviceId, ExitRecord, LogLevel, LogLine, NativeBacktrace,
    ThreadSummary, TombstoneCapture,
};
use phonelogs_fake::{FakeApp, FakePhone};
use time::{Duration, OffsetDateTime};

/// The fake demo phone's serial.
pub const FAKE_SERIAL: &str = "emulator-5554";
/// Crash Test's package name (on every demo phone).
pub const CRASH_TEST: &str = "dev.phonelogs.crashtest";
/// The fake phone's store app: a release build, so reading it asks the person first.
pub const STORE_APP: &str = "com.example.store";
/// The busy app's id: a development build with more lines and bigger crash reports than one
/// result holds, so the result cap shows (the benchmark's and the tests' capped calls).
pub const CHATTY: &str = "dev.phonelogs.chatty";

/// Crash Test's pid and uid on the fake phone.
const CRASH_TEST_PID: u32 = 4242;
const CRASH_TEST_UID: u32 = 10_123;
/// The store app's pid and uid.
const STORE_PID: u32 = 5151;
const STORE_UID: u32 = 10_200;

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

/// One line `millis` after `start`, by `pid` of `uid`.
fn line(
    start: OffsetDateTime,
    millis: i64,
    level: LogLevel,
    tag: &str,
    text: &str,
    (pid, uid): (u32, u32),
) -> LogLine {
    LogLine {
        time: start + Duration::milliseconds(millis),
        level,
        tag: tag.to_owned(),
        text: text.to_owned(),
        pid: Some(pid),
        tid: Some(pid),
        uid: Some(uid),
    }
}

/// Builds the fake demo phone, its lines stamped from `start` on.
pub fn fake_phone(start: OffsetDateTime) -> FakePhone {
    let phone = FakePhone::new();
    fill_fake_phone(&phone, start);
    phone
}

/// Puts the demo's phone, apps and lines into `phone` (a clone shares it), the lines stamped
/// from `start` on. The MCP server hands the gateway an empty phone and fills it with its
/// task's start: a task sees only what came after it began, and a machine slow to open the
/// state must not push the first lines before that.
pub fn fill_fake_phone(phone: &FakePhone, start: OffsetDateTime) {
    let start = start.replace_nanosecond(0).unwrap_or(start);
    let device = DeviceId::new(FAKE_SERIAL);
    phone.add_device(&device, "Fake Phone");
    add_crash_test(phone, &device, start);
    add_store_app(phone, &device, start);
    phone.add_app(
        &device,
        FakeApp::new(AppId::new("com.android.settings"))
            .label("Settings")
            .uid(1_000)
            .system(true),
    );
    phone.add_process(&device, 900, 1_000, "com.android.settings");
    // The system's own line about Crash Test: never part of Crash Test's lines.
    phone.add_system_lines(
        &device,
        [line(
            start,
            6_500,
            LogLevel::Info,
            "ActivityManager",
            "Process dev.phonelogs.crashtest (pid 4242) has died",
            (600, 1_000),
        )],
    );
    // A finance app: refused under "Finance apps" whatever the person would say.
    phone.add_app(
        &device,
        FakeApp::new(AppId::new("com.paypal.android.p2pmobile"))
            .label("PayPal")
            .uid(10_300),
    );
    add_debugging_answers(phone, &device);
    add_chatty(phone, &device);
}

/// Crash Test: five lines of rising severity, a Java crash, then an ANR of its relaunch.
fn add_crash_test(phone: &FakePhone, device: &DeviceId, start: OffsetDateTime) {
    let app = AppId::new(CRASH_TEST);
    phone.add_app(
        device,
        FakeApp::new(app.clone())
            .label("Crash Test")
            .uid(CRASH_TEST_UID)
            .dev_build(true),
    );
    let own = (CRASH_TEST_PID, CRASH_TEST_UID);
    phone.add_logs(
        device,
        &app,
        [
            line(start, 1_000, LogLevel::Info, "CrashTest", "started", own),
            line(
                start,
                2_100,
                LogLevel::Debug,
                "CrashTest",
                "loading config",
                own,
            ),
            line(start, 3_200, LogLevel::Warn, "Net", "slow response", own),
            line(
                start,
                4_300,
                LogLevel::Error,
                "CrashTest",
                "failed to save",
                own,
            ),
            line(
                start,
                5_400,
                LogLevel::Error,
                "AndroidRuntime",
                "FATAL EXCEPTION: main",
                own,
            ),
        ],
    );
    phone.add_crash(
        device,
        &app,
        CrashReport {
            kind: CrashKind::JavaCrash,
            time: start + Duration::seconds(6),
            pid: Some(CRASH_TEST_PID),
            process: CRASH_TEST.into(),
            summary: "java.lang.IllegalStateException: Crash button tapped".into(),
            text: "java.lang.IllegalStateException: Crash button tapped\n\tat dev.phonelogs.crashtest.MainActivity.onCrash(MainActivity.java:42)\n".into(),
            build: None,
        },
    );
    phone.add_crash(
        device,
        &app,
        CrashReport {
            kind: CrashKind::Anr,
            time: start + Duration::seconds(20),
            pid: Some(CRASH_TEST_PID + 1),
            process: CRASH_TEST.into(),
            summary: "Input dispatching timed out".into(),
            text: "Subject: Input dispatching timed out\n".into(),
            build: None,
        },
    );
    phone.add_process(
        device,
        i64::from(CRASH_TEST_PID),
        CRASH_TEST_UID,
        CRASH_TEST,
    );
}

/// The store app: a release build that logged twice (once under Crash Test's tag) and crashed.
fn add_store_app(phone: &FakePhone, device: &DeviceId, start: OffsetDateTime) {
    let app = AppId::new(STORE_APP);
    phone.add_app(
        device,
        FakeApp::new(app.clone()).label("Store App").uid(STORE_UID),
    );
    let own = (STORE_PID, STORE_UID);
    phone.add_logs(
        device,
        &app,
        [
            line(start, 1_500, LogLevel::Info, "Store", "signed in", own),
            line(
                start,
                3_700,
                LogLevel::Error,
                "CrashTest",
                "checkout failed: card declined",
                own,
            ),
        ],
    );
    phone.add_crash(
        device,
        &app,
        CrashReport {
            kind: CrashKind::JavaCrash,
            time: start + Duration::seconds(7),
            pid: Some(STORE_PID),
            process: STORE_APP.into(),
            summary: "java.lang.RuntimeException: cart is empty".into(),
            text: "java.lang.RuntimeException: cart is empty\n".into(),
            build: None,
        },
    );
    phone.add_process(device, i64::from(STORE_PID), STORE_UID, STORE_APP);
}

/// The debugging aids' answers about Crash Test: its exit record, its JDWP pid, a backtrace and
/// a tombstone (the emulator image is a userdebug build, so `debuggerd` runs).
fn add_debugging_answers(phone: &FakePhone, device: &DeviceId) {
    let crash_test = AppId::new(CRASH_TEST);
    phone.add_exit_record(
        device,
        &crash_test,
        ExitRecord {
            timestamp: Some("2026-11-30 10:11:39.266".into()),
            pid: Some(i64::from(CRASH_TEST_PID)),
            real_uid: Some(i64::from(CRASH_TEST_UID)),
            user: Some(0),
            process: Some(CRASH_TEST.to_owned()),
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
    let pid = i64::from(CRASH_TEST_PID);
    phone.set_jdwp_pids(device, vec![pid, 1224, pid]);
    phone.set_debuggerd_allowed(device, true);
    phone.set_backtrace(
        device,
        NativeBacktrace {
            serial: FAKE_SERIAL.into(),
            pid,
            process_name: Some(CRASH_TEST.to_owned()),
            abi: Some("x86_64".into()),
            thread_count: 2,
            threads: vec![
                ThreadSummary {
                    name: "s.crashtest".into(),
                    sys_tid: pid,
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
            dumped_pid: Some(pid),
            dumped_uid: Some(CRASH_TEST_UID),
        },
    );
    phone.set_tombstone(
        device,
        TombstoneCapture {
            serial: FAKE_SERIAL.into(),
            pid,
            process_name: Some(CRASH_TEST.to_owned()),
            abi: Some("x86_64".into()),
            signal: Some(
                "35 (<debuggerd signal>), code -1 (SI_QUEUE from pid 7338, uid 0), fault addr --------"
                    .into(),
            ),
            frame_count: Some(3),
            device_tombstone_ref: Some("tombstone_27.pb".into()),
            bytes: TOMBSTONE.as_bytes().to_vec(),
            // The header's `pid:` and `uid:` lines.
            dumped_pid: Some(pid),
            dumped_uid: Some(CRASH_TEST_UID),
        },
    );
}

/// Adds Chatty: 1,000 lines of 200 to 1,900 bytes with quotes, backslashes, tabs and non-ASCII
/// text (which JSON escapes or writes in several bytes), stamped from a second before now, and
/// ten crash reports, the newest an ANR of about 30 KB, the others 5 to 40 KB.
fn add_chatty(phone: &FakePhone, device: &DeviceId) {
    let app = AppId::new(CHATTY);
    phone.add_app(
        device,
        FakeApp::new(app.clone())
            .label("Chatty")
            .uid(10_500)
            .dev_build(true),
    );
    let start = OffsetDateTime::now_utc() - Duration::seconds(1);
    let chunk = "payload \"quoted\" \\ tab\tsé漢 ";
    phone.add_logs(
        device,
        &app,
        (0..1_000).map(|i: i64| {
            let size = 200 + (i as usize * 37) % 1_700;
            let text = format!("line {i:04} {}", chunk.repeat(size / chunk.len() + 1));
            LogLine {
                time: start + Duration::milliseconds(i),
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
                time: start + Duration::milliseconds(100 * i),
                pid: Some(5_000),
                process: CHATTY.into(),
                summary: summary.clone(),
                text: format!("{summary}\n{}", frame.repeat(size / frame.len())),
                build: None,
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
