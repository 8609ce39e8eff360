//! Text exactly as Android prints it: logcat lines, drop box dumps, crash, ANR and tombstone
//! texts, `dumpsys package`, `dumpsys activity exit-info`.
//!
//! Every layout follows `shared/notes/android-formats.md`; the section numbers below refer to it.
//!
//! The formats sit over the model (they read only `model.rs` values); the crashes and the
//! commands print through them.

use std::fmt::Write as _;

use time::{OffsetDateTime, UtcOffset};

use crate::model::{
    AndroidVersion, DropBoxEntry, ExitRecord, LogEntry, Package, Process, Profile,
    exit_reason_text, exit_subreason_text, short_uid_name,
};

/// Civil time at the phone's offset; out-of-range times clamp to the epoch rather than panic.
pub fn civil(time_ns: i128, utc_offset_minutes: i32) -> OffsetDateTime {
    let offset = UtcOffset::from_whole_seconds(utc_offset_minutes.saturating_mul(60))
        .unwrap_or(UtcOffset::UTC);
    OffsetDateTime::from_unix_timestamp_nanos(time_ns)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH)
        .to_offset(offset)
}

/// `+0100` style offset, as `date +%z` prints it.
pub fn zone_suffix(utc_offset_minutes: i32) -> String {
    let sign = if utc_offset_minutes < 0 { '-' } else { '+' };
    let minutes = utc_offset_minutes.unsigned_abs();
    format!("{sign}{:02}{:02}", minutes / 60, minutes % 60)
}

/// `YYYY-MM-DD HH:MM:SS` in the phone's local time.
pub fn date_time(time_ns: i128, utc_offset_minutes: i32) -> String {
    let t = civil(time_ns, utc_offset_minutes);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

/// `YYYY-MM-DD HH:MM:SS.mmm` in the phone's local time.
pub fn date_time_ms(time_ns: i128, utc_offset_minutes: i32) -> String {
    let t = civil(time_ns, utc_offset_minutes);
    format!(
        "{}.{:03}",
        date_time(time_ns, utc_offset_minutes),
        t.millisecond()
    )
}

/// How logcat prints the time and the identity fields of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LineFormat {
    /// `-v epoch`: seconds since the epoch, `%19lld`.
    pub epoch: bool,
    /// `-v uid`: the writer's uid after the time.
    pub uid: bool,
    /// `-v year`: the year before the month.
    pub year: bool,
    /// `-v zone`: the zone suffix after the time (not with epoch).
    pub zone: bool,
    /// `-v brief` instead of threadtime.
    pub brief: bool,
}

/// Appends one entry in threadtime layout (§1), one output line per message line.
pub fn push_log_line(
    out: &mut Vec<u8>,
    entry: &LogEntry,
    format: LineFormat,
    utc_offset_minutes: i32,
) {
    let mut prefix = String::with_capacity(64);
    if format.brief {
        let _ = write!(
            prefix,
            "{}/{:<8}({:5}): ",
            entry.priority.letter(),
            entry.tag,
            entry.pid
        );
    } else {
        let seconds = entry.time_ns.div_euclid(1_000_000_000);
        let millis = entry.time_ns.rem_euclid(1_000_000_000) / 1_000_000;
        if format.epoch {
            let _ = write!(prefix, "{seconds:19}.{millis:03}");
        } else {
            let t = civil(entry.time_ns, utc_offset_minutes);
            if format.year {
                let _ = write!(prefix, "{:04}-", t.year());
            }
            let _ = write!(
                prefix,
                "{:02}-{:02} {:02}:{:02}:{:02}.{millis:03}",
                u8::from(t.month()),
                t.day(),
                t.hour(),
                t.minute(),
                t.second()
            );
            if format.zone {
                let _ = write!(prefix, " {}", zone_suffix(utc_offset_minutes));
            }
        }
        prefix.push(' ');
        if format.uid {
            // The uid field ends in ':' in other layouts; threadtime replaces it with a space.
            match short_uid_name(entry.uid) {
                Some(name) => {
                    let _ = write!(prefix, "{name:>5} ");
                }
                None => {
                    let _ = write!(prefix, "{:5} ", entry.uid);
                }
            }
        }
        let _ = write!(
            prefix,
            "{:5} {:5} {} {:<8}: ",
            entry.pid,
            entry.tid,
            entry.priority.letter(),
            entry.tag
        );
    }
    // Each message line gets the full prefix; a trailing newline adds no empty line.
    let message = entry.message.strip_suffix('\n').unwrap_or(&entry.message);
    for line in message.split('\n') {
        out.extend_from_slice(prefix.as_bytes());
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
    }
}

/// The `dumpsys dropbox` output (§2), after AOSP `DropBoxManagerService.dump`.
pub fn dropbox_dump(
    entries: &[DropBoxEntry],
    args: &[String],
    profile: &Profile,
) -> (String, String) {
    let mut out = String::new();
    let mut print = false;
    let mut file = false;
    let mut search: Vec<&str> = Vec::new();
    for arg in args {
        match arg.as_str() {
            "-p" | "--print" => print = true,
            "-f" | "--file" => file = true,
            other if other.starts_with('-') => {
                let _ = writeln!(out, "Unknown argument: {other}");
            }
            other => search.push(other),
        }
    }
    let _ = writeln!(out, "Drop box contents: {} entries", entries.len());
    let _ = writeln!(out, "Max entries: 1000");
    if profile.android != AndroidVersion::Android10 {
        let _ = writeln!(out, "Low priority rate limit period: 2000 ms");
        let _ = writeln!(
            out,
            "Low priority tags: [data_app_wtf, data_app_strictmode, keymaster]"
        );
    }
    if !search.is_empty() {
        out.push_str("Searching for:");
        for term in &search {
            out.push(' ');
            out.push_str(term);
        }
        out.push('\n');
    }
    out.push('\n');
    let mut found = 0usize;
    for entry in entries {
        let time_ns = i128::from(entry.time_ms) * 1_000_000;
        let date = date_time(time_ns, profile.utc_offset_minutes);
        // Every search argument must equal the tag or be a substring of the date (AND).
        if !search
            .iter()
            .all(|term| *term == entry.tag || date.contains(term))
        {
            continue;
        }
        found += 1;
        if print {
            out.push_str("========================================\n");
        }
        // Large text entries are stored gzipped, as DropBoxManagerService does above 16 KiB.
        let compressed = entry.text.len() >= 16 * 1024;
        let stored_len = if compressed {
            entry.text.len() / 4 + 512
        } else {
            entry.text.len()
        };
        let _ = writeln!(
            out,
            "{date} {} ({}text, {stored_len} bytes)",
            entry.tag,
            if compressed { "compressed " } else { "" }
        );
        if file {
            let _ = writeln!(
                out,
                "    /data/system/dropbox/{}@{}.txt{}",
                entry.tag,
                entry.time_ms,
                if compressed { ".gz" } else { "" }
            );
        }
        if print {
            out.push_str(&entry.text);
            if !entry.text.ends_with('\n') {
                out.push('\n');
            }
            out.push('\n');
        } else {
            push_preview(&mut out, &entry.text);
        }
    }
    if found == 0 {
        out.push_str("(No entries found.)\n");
    }
    if args.is_empty() {
        out.push('\n');
        out.push_str("Usage: dumpsys dropbox [--print|--file] [YYYY-mm-dd] [HH:MM:SS] [tag]\n");
    }
    (out, String::new())
}

/// The preview `dumpsys dropbox` lists a text entry with, on its own line.
fn push_preview(out: &mut String, text: &str) {
    // `Entry.getText(70)`: the first 70 bytes, decoded by ART, which puts one U+FFFD
    // for each maximal ill-formed part as `from_utf8_lossy` does; ` ...` when that is
    // 70 UTF-16 units; Java's `trim` (testdata/README.md).
    let bytes = text.as_bytes();
    let preview = String::from_utf8_lossy(bytes.get(..70).unwrap_or(bytes));
    let truncated = preview.encode_utf16().count() == 70;
    out.push_str("    ");
    out.push_str(&preview.trim_matches(|c: char| c <= ' ').replace('\n', "/"));
    if truncated {
        out.push_str(" ...");
    }
    out.push('\n');
}

/// The `Key: value` header lines of a `data_app_*` drop box entry (§2), ending in a blank line.
pub fn app_error_headers(
    profile: &Profile,
    process: &Process,
    package: Option<&Package>,
    subject: Option<&str>,
    now_ns: i128,
    uptime_ms: i64,
) -> String {
    let mut out = String::new();
    let android = profile.android;
    if android == AndroidVersion::Android16 {
        let _ = writeln!(out, "SystemUptimeMs: {uptime_ms}");
    }
    let _ = writeln!(out, "Process: {}", process.name);
    if android != AndroidVersion::Android10 {
        let _ = writeln!(out, "PID: {}", process.pid);
        let _ = writeln!(out, "UID: {}", process.uid);
        let _ = writeln!(out, "Frozen: false");
    }
    // ApplicationInfo flags: SYSTEM is bit 0 and DEBUGGABLE bit 1, over a typical app's set.
    let flags: u32 = 0x38c8_3e44
        | package.map_or(0, |package| u32::from(package.system))
        | package.map_or(0, |package| u32::from(package.debuggable) << 1);
    let _ = writeln!(out, "Flags: 0x{flags:x}");
    if let Some(package) = package {
        let _ = writeln!(
            out,
            "Package: {} v{} ({})",
            package.name, package.version_code, package.version_name
        );
    }
    let _ = writeln!(out, "Foreground: Yes");
    if android != AndroidVersion::Android10 {
        let runtime_ms = (now_ns - process.started_ns).max(0) / 1_000_000;
        let _ = writeln!(out, "Process-Runtime: {runtime_ms}");
    }
    if let Some(subject) = subject {
        let _ = writeln!(out, "Subject: {subject}");
    }
    let _ = writeln!(out, "Build: {}", profile.fingerprint());
    if android != AndroidVersion::Android10 {
        let _ = writeln!(out, "Loading-Progress: 1.0");
        let _ = writeln!(out, "Dropped-Count: 0");
    }
    if android == AndroidVersion::Android16 {
        let t = civil(now_ns, profile.utc_offset_minutes);
        let _ = writeln!(
            out,
            "Timestamp: {}{}",
            date_time_ms(now_ns, profile.utc_offset_minutes),
            zone_suffix(i32::from(t.offset().whole_minutes()))
        );
    }
    out.push('\n');
    out
}

/// A Java stack trace as the app's uncaught exception handler reports it.
pub fn java_stack(package: &str, exception: &str, message: &str) -> String {
    format!(
        "{exception}: {message}\n\
         \tat {package}.MainActivity.onCrashClicked(MainActivity.java:42)\n\
         \tat {package}.MainActivity.access$000(MainActivity.java:12)\n\
         \tat {package}.MainActivity$1.onClick(MainActivity.java:30)\n\
         \tat android.view.View.performClick(View.java:7542)\n\
         \tat android.view.View$PerformClick.run(View.java:29311)\n\
         \tat android.os.Handler.handleCallback(Handler.java:942)\n\
         \tat android.os.Handler.dispatchMessage(Handler.java:99)\n\
         \tat android.os.Looper.loopOnce(Looper.java:201)\n\
         \tat android.os.Looper.loop(Looper.java:288)\n\
         \tat android.app.ActivityThread.main(ActivityThread.java:7918)\n\
         \tat java.lang.reflect.Method.invoke(Native Method)\n\
         \tat com.android.internal.os.RuntimeInit$MethodAndArgsCaller.run(RuntimeInit.java:548)\n\
         \tat com.android.internal.os.ZygoteInit.main(ZygoteInit.java:936)\n"
    )
}

/// The `----- pid N at <date> -----` section of one process in an ANR trace (§3).
pub fn anr_process_section(
    profile: &Profile,
    process: &Process,
    now_ns: i128,
    blocked: bool,
) -> String {
    let mut out = String::new();
    let date = match profile.android {
        AndroidVersion::Android10 => date_time(now_ns, profile.utc_offset_minutes),
        _ => {
            let t = civil(now_ns, profile.utc_offset_minutes);
            format!(
                "{}.{:09}{}",
                date_time(now_ns, profile.utc_offset_minutes),
                t.nanosecond(),
                zone_suffix(profile.utc_offset_minutes)
            )
        }
    };
    let _ = writeln!(out, "\n----- pid {} at {date} -----", process.pid);
    let _ = writeln!(out, "Cmd line: {}", process.name);
    let _ = writeln!(out, "Build fingerprint: '{}'", profile.fingerprint());
    let _ = writeln!(out, "ABI: 'arm64'");
    let _ = writeln!(out, "Build type: optimized");
    let _ = writeln!(
        out,
        "suspend all histogram:\tSum: 1.234ms 99% C.I. 2us-118us Avg: 12.5us Max: 318us"
    );
    let _ = writeln!(out, "DALVIK THREADS ({}):", process.threads.len());
    for (index, (tid, name)) in process.threads.iter().enumerate() {
        let main = index == 0;
        let state = if main && blocked {
            "Blocked"
        } else if main {
            "Native"
        } else {
            "Waiting"
        };
        let daemon = if main { "" } else { "daemon " };
        let _ = writeln!(out, "\"{name}\" {daemon}prio=5 tid={} {state}", index + 1);
        let _ = writeln!(
            out,
            "  | group=\"main\" sCount=1 ucsCount=0 flags=1 obj=0x72e1c8d8 self=0xb400007a5e07cc00"
        );
        let _ = writeln!(
            out,
            "  | sysTid={tid} nice=-10 cgrp=top-app sched=0/0 handle=0x7b8c4e54f8"
        );
        let _ = writeln!(
            out,
            "  | state=S schedstat=( 1066223906 47868377 1021 ) utm=88 stm=17 core=4 HZ=100"
        );
        if main && blocked {
            let package = process.package.as_deref().unwrap_or(&process.name);
            let _ = writeln!(
                out,
                "  at {package}.MainActivity.onHangClicked(MainActivity.java:57)"
            );
            let _ = writeln!(
                out,
                "  - waiting to lock <0x0b1c2d3e> (a java.lang.Object) held by thread 2"
            );
            let _ = writeln!(out, "  at android.view.View.performClick(View.java:7542)");
            let _ = writeln!(out, "  at android.os.Looper.loop(Looper.java:288)");
            let _ = writeln!(
                out,
                "  at android.app.ActivityThread.main(ActivityThread.java:7918)"
            );
        } else if main {
            let _ = writeln!(
                out,
                "  native: #00 pc 000000000009b6b8  /apex/com.android.runtime/lib64/bionic/libc.so (__epoll_pwait+8)"
            );
            let _ = writeln!(
                out,
                "  at android.os.MessageQueue.nativePollOnce(Native method)"
            );
            let _ = writeln!(
                out,
                "  at android.os.MessageQueue.next(MessageQueue.java:335)"
            );
            let _ = writeln!(out, "  at android.os.Looper.loop(Looper.java:288)");
        } else {
            let _ = writeln!(out, "  at java.lang.Object.wait(Native method)");
            let _ = writeln!(out, "  - waiting on <0x04f5a6b7> (a java.lang.Object)");
            let _ = writeln!(out, "  at java.lang.Daemons$Daemon.run(Daemons.java:140)");
        }
        out.push('\n');
    }
    let _ = writeln!(out, "----- end {} -----", process.pid);
    out
}

/// A tombstone (§4) for `process` dying of `signal`.
pub fn tombstone(profile: &Profile, process: &Process, signal: u32, now_ns: i128) -> String {
    let (name, code) = match signal {
        6 => ("SIGABRT", "code -1 (SI_QUEUE), fault addr --------"),
        4 => (
            "SIGILL",
            "code 2 (ILL_ILLOPN), fault addr 0x0000007b8c4e5500",
        ),
        _ => (
            "SIGSEGV",
            "code 1 (SEGV_MAPERR), fault addr 0x0000000000000000",
        ),
    };
    let android = profile.android;
    let mut out = String::new();
    out.push_str("*** *** *** *** *** *** *** *** *** *** *** *** *** *** *** ***\n");
    let _ = writeln!(out, "Build fingerprint: '{}'", profile.fingerprint());
    if android == AndroidVersion::Android16 {
        let _ = writeln!(out, "Kernel Release: '6.1.99-android14-11-g1c2d3e4f5a6b'");
    }
    let _ = writeln!(out, "Revision: 'MP1.0'");
    let _ = writeln!(out, "ABI: 'arm64'");
    let t = civil(now_ns, profile.utc_offset_minutes);
    // Android 10's debuggerd prints whole seconds; the protobuf tombstones of 12+ add nanoseconds.
    if android == AndroidVersion::Android10 {
        let _ = writeln!(
            out,
            "Timestamp: {}{}",
            date_time(now_ns, profile.utc_offset_minutes),
            zone_suffix(profile.utc_offset_minutes)
        );
    } else {
        let _ = writeln!(
            out,
            "Timestamp: {}.{:09}{}",
            date_time(now_ns, profile.utc_offset_minutes),
            t.nanosecond(),
            zone_suffix(profile.utc_offset_minutes)
        );
    }
    let uptime_s = ((now_ns - process.started_ns).max(0) / 1_000_000_000) as i64;
    if android != AndroidVersion::Android10 {
        let _ = writeln!(out, "Process uptime: {uptime_s}s");
    }
    if android == AndroidVersion::Android16 {
        let _ = writeln!(out, "Executable: /system/bin/app_process64");
    }
    if android != AndroidVersion::Android10 {
        let _ = writeln!(out, "Cmdline: {}", process.name);
    }
    let thread = process
        .threads
        .first()
        .map(|(_, name)| name.as_str())
        .unwrap_or("main");
    let _ = writeln!(
        out,
        "pid: {}, tid: {}, name: {thread}  >>> {} <<<",
        process.pid, process.pid, process.name
    );
    let _ = writeln!(out, "uid: {}", process.uid);
    if android != AndroidVersion::Android10 {
        let _ = writeln!(
            out,
            "tagged_addr_ctrl: 0000000000000001 (PR_TAGGED_ADDR_ENABLE)"
        );
        let _ = writeln!(
            out,
            "pac_enabled_keys: 000000000000000f (PR_PAC_APIAKEY, PR_PAC_APIBKEY, PR_PAC_APDAKEY, PR_PAC_APDBKEY)"
        );
    }
    let read = if android == AndroidVersion::Android16 && signal == 11 {
        " (read)"
    } else {
        ""
    };
    let _ = writeln!(out, "signal {signal} ({name}), {code}{read}");
    if signal == 11 {
        let _ = writeln!(out, "Cause: null pointer dereference");
    }
    if signal == 6 {
        let _ = writeln!(
            out,
            "Abort message: 'crashtest: deliberate abort from native code'"
        );
    }
    push_registers(&mut out);
    push_backtrace(&mut out, android, process);
    out
}

/// A tombstone's registers, as debuggerd prints them for arm64.
fn push_registers(out: &mut String) {
    for row in 0..7 {
        let mut line = String::from("   ");
        for column in 0..4 {
            let register = row * 4 + column;
            let _ = write!(
                line,
                " x{register:<2} {:016x}",
                0x7b8c_4e00_0000u64 + register as u64 * 0x1f8
            );
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    let _ = writeln!(out, "    x28 0000007fd3b1c3a0  x29 0000007fd3b1c2f0");
    let _ = writeln!(
        out,
        "    lr  0000007a1c2b3d48  sp  0000007fd3b1c2d0  pc  0000007a1c2b3d5c  pst 0000000060001000"
    );
}

/// A tombstone's backtrace: the app's native library, then the runtime's frames.
fn push_backtrace(out: &mut String, android: AndroidVersion, process: &Process) {
    let indent = if android == AndroidVersion::Android10 {
        "    "
    } else {
        "      "
    };
    let package = process.package.as_deref().unwrap_or(&process.name);
    if android != AndroidVersion::Android10 {
        let _ = writeln!(out, "\n4 total frames");
    } else {
        out.push('\n');
    }
    let _ = writeln!(out, "backtrace:");
    let frames = [
        format!("/data/app/~~Xq1w2e3r4t5y==/{package}-a1B2c3D4==/lib/arm64/libcrashtest.so (Java_dev_phonelogs_crashtest_Native_crash+20)"),
        "/apex/com.android.art/lib64/libart.so (art_quick_generic_jni_trampoline+148)".to_string(),
        "/apex/com.android.art/lib64/libart.so (art_quick_invoke_stub+612)".to_string(),
        "/system/lib64/libandroid_runtime.so (android::AndroidRuntime::start(char const*, android::Vector<android::String8> const&, bool)+880)".to_string(),
    ];
    for (index, frame) in frames.iter().enumerate() {
        let _ = writeln!(
            out,
            "{indent}#{index:02} pc {:016x}  {frame}",
            0x1d5c + index as u64 * 0x2a4f0
        );
    }
}

/// A thread's kernel name (`comm`): an app's main thread carries the process name's last 15
/// characters, other threads their own names cut to 15.
pub fn thread_comm(process: &Process, index: usize) -> String {
    let name = match (index, &process.package) {
        (0, Some(_)) => process.name.as_str(),
        _ => process
            .threads
            .get(index)
            .map(|(_, name)| name.as_str())
            .unwrap_or(&process.name),
    };
    let chars: Vec<char> = name.chars().collect();
    if index == 0 {
        chars[chars.len().saturating_sub(15)..].iter().collect()
    } else {
        chars.iter().take(15).collect()
    }
}

/// `debuggerd -b <pid>` output (§4): one section per thread.
pub fn native_backtrace(profile: &Profile, process: &Process, now_ns: i128) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n\n----- pid {} at {} -----",
        process.pid,
        date_time(now_ns, profile.utc_offset_minutes)
    );
    let _ = writeln!(out, "Cmd line: {}", process.name);
    let _ = writeln!(out, "ABI: 'arm64'");
    for (index, (tid, _)) in process.threads.iter().enumerate() {
        let name = thread_comm(process, index);
        let _ = writeln!(out, "\n\"{name}\" sysTid={tid}");
        let _ = writeln!(
            out,
            "  #00 pc 000000000009b6b8  /apex/com.android.runtime/lib64/bionic/libc.so (__epoll_pwait+8)"
        );
        let _ = writeln!(
            out,
            "  #01 pc 0000000000019acc  /system/lib64/libutils.so (android::Looper::pollInner(int)+184)"
        );
        let _ = writeln!(
            out,
            "  #02 pc 00000000000199ac  /system/lib64/libutils.so (android::Looper::pollOnce(int, int*, int*, void**)+112)"
        );
    }
    let _ = writeln!(out, "\n----- end {} -----", process.pid);
    out
}

/// `dumpsys activity exit-info <pkg>` (§5).
pub fn exit_info(
    profile: &Profile,
    records: &[ExitRecord],
    package_filter: Option<&str>,
    persisted_ns: i128,
) -> String {
    let mut out = String::new();
    out.push_str("ACTIVITY MANAGER PROCESS EXIT INFO (dumpsys activity exit-info)\n");
    let _ = writeln!(
        out,
        "Last Timestamp of Persistence Into Persistent Storage: {}",
        date_time_ms(persisted_ns, profile.utc_offset_minutes)
    );
    let mut packages: Vec<&str> = Vec::new();
    for record in records {
        if package_filter.is_some_and(|filter| filter != record.package) {
            continue;
        }
        if !packages.contains(&record.package.as_str()) {
            packages.push(&record.package);
        }
    }
    for package in packages {
        let _ = writeln!(out, "  package: {package}");
        let mut uids: Vec<u32> = records
            .iter()
            .filter(|record| record.package == package)
            .map(|record| record.uid)
            .collect();
        // One section per uid, i.e. per Android user's copy of the package, in ascending uid
        // order: AOSP `AppExitInfoTracker.dumpHistoryProcessExitInfoLocked` walks the package's
        // `SparseArray` of uids, whose keys are sorted (testdata/adbsim/README.md). Exits of the
        // two copies interleave in time, so sorting first keeps each uid to one section.
        uids.sort_unstable();
        uids.dedup();
        for uid in uids {
            let _ = writeln!(out, "    Historical Process Exit for uid={uid}");
            let mut mine: Vec<&ExitRecord> = records
                .iter()
                .rev()
                .filter(|record| record.package == package && record.uid == uid)
                .collect();
            mine.sort_by_key(|record| std::cmp::Reverse(record.time_ms));
            for (index, record) in mine.iter().enumerate() {
                let _ = writeln!(out, "        ApplicationExitInfo #{index}:");
                let time_ns = i128::from(record.time_ms) * 1_000_000;
                let _ = writeln!(
                    out,
                    "          timestamp={} pid={} realUid={} packageUid={} definingUid={} user={}",
                    date_time_ms(time_ns, profile.utc_offset_minutes),
                    record.pid,
                    record.uid,
                    record.uid,
                    record.uid,
                    record.uid / 100_000
                );
                let _ = writeln!(
                    out,
                    "          process={} reason={} ({}) subreason={} ({}) status={}",
                    record.process,
                    record.reason,
                    exit_reason_text(record.reason),
                    record.subreason,
                    exit_subreason_text(record.subreason),
                    record.status
                );
                let state = "empty";
                let trace = record.trace.as_deref().unwrap_or("null");
                if profile.android == AndroidVersion::Android16 {
                    let _ = writeln!(
                        out,
                        "          importance={} pss=0.00 rss=0.00 state={state} trace={trace}",
                        record.importance
                    );
                    let _ = writeln!(out, "          description={}", record.description);
                } else {
                    let _ = writeln!(
                        out,
                        "          importance={} pss=0.00 rss=0.00 description={} state={state} trace={trace}",
                        record.importance, record.description
                    );
                }
            }
        }
    }
    out
}

fn pseudo_hash(text: &str) -> u32 {
    // FNV-1a: stable object "addresses" so repeated dumps print the same hash codes.
    text.bytes().fold(0x811c_9dc5u32, |hash, byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    })
}

/// `dumpsys package <pkg>` (§6).
pub fn dumpsys_package(profile: &Profile, package: &Package, installed_ns: i128) -> String {
    let android = profile.android;
    let hash = pseudo_hash(&package.name);
    let name = &package.name;
    let flags = package.flag_names().join(" ");
    let private_flags = if package.system {
        "PRIVATE_FLAG_ACTIVITIES_RESIZE_MODE_RESIZEABLE_VIA_SDK_VERSION PRIVILEGED PRODUCT ALLOW_AUDIO_PLAYBACK_CAPTURE"
    } else {
        "PRIVATE_FLAG_ACTIVITIES_RESIZE_MODE_RESIZEABLE_VIA_SDK_VERSION ALLOW_AUDIO_PLAYBACK_CAPTURE PRIVATE_FLAG_ALLOW_NATIVE_HEAP_POINTER_TAGGING"
    };
    let code_path = code_path(android, package, hash);
    let installed = date_time(installed_ns, profile.utc_offset_minutes);
    let mut out = String::new();
    push_resolver_and_key_sets(&mut out, package, hash);
    out.push_str("Packages:\n");
    let _ = writeln!(
        out,
        "  Package [{name}] ({:07x}):",
        hash.rotate_left(5) & 0x0fff_ffff
    );
    let _ = writeln!(out, "    userId={}", package.app_id);
    if let Some(shared) = &package.shared_user {
        let _ = writeln!(
            out,
            "    sharedUser=SharedUserSetting{{{:07x} {shared}/{}}}",
            pseudo_hash(shared) & 0x0fff_ffff,
            package.app_id
        );
    }
    let _ = writeln!(
        out,
        "    pkg=Package{{{:07x} {name}}}",
        hash.rotate_left(9) & 0x0fff_ffff
    );
    let _ = writeln!(out, "    codePath={code_path}");
    let _ = writeln!(out, "    resourcePath={code_path}");
    let _ = writeln!(out, "    legacyNativeLibraryDir={code_path}/lib");
    let _ = writeln!(out, "    primaryCpuAbi=arm64-v8a");
    let _ = writeln!(out, "    secondaryCpuAbi=null");
    let _ = writeln!(
        out,
        "    versionCode={} minSdk=24 targetSdk={}",
        package.version_code, package.target_sdk
    );
    let _ = writeln!(out, "    versionName={}", package.version_name);
    let _ = writeln!(out, "    splits=[base]");
    let _ = writeln!(out, "    apkSigningVersion=2");
    let _ = writeln!(
        out,
        "    applicationInfo=PackageImpl{{{:07x} {name}}}",
        hash.rotate_left(11) & 0x0fff_ffff
    );
    let _ = writeln!(out, "    flags=[ {flags} ]");
    let _ = writeln!(out, "    privateFlags=[ {private_flags} ]");
    let _ = writeln!(out, "    forceQueryable=false");
    let _ = writeln!(out, "    dataDir=/data/user/0/{name}");
    let _ = writeln!(
        out,
        "    supportsScreens=[small, medium, large, xlarge, resizeable, anyDensity]"
    );
    let _ = writeln!(out, "    timeStamp={installed}");
    let _ = writeln!(out, "    lastUpdateTime={installed}");
    let _ = writeln!(
        out,
        "    installerPackageName={}",
        package.installer.as_deref().unwrap_or("null")
    );
    let _ = writeln!(
        out,
        "    signatures=PackageSignatures{{{:07x} version:2, signatures:[{:08x}], past signatures:[]}}",
        hash.rotate_left(13) & 0x0fff_ffff,
        hash.rotate_left(17)
    );
    let _ = writeln!(out, "    installPermissionsFixed=true");
    let _ = writeln!(out, "    pkgFlags=[ {flags} ]");
    if android != AndroidVersion::Android10 {
        let _ = writeln!(out, "    privatePkgFlags=[ {private_flags} ]");
    }
    out.push_str("    requested permissions:\n      android.permission.INTERNET\n");
    out.push_str("    install permissions:\n      android.permission.INTERNET: granted=true\n");
    for user in &package.users {
        let _ = writeln!(
            out,
            "    User {user}: ceDataInode=1{:06} installed=true hidden=false suspended=false distractionFlags=0 stopped=false notLaunched=false enabled=0 instant=false virtual=false",
            hash % 1_000_000
        );
        out.push_str("      gids=[3003]\n      runtime permissions:\n");
    }
    out
}

/// Where `dumpsys package` says the package's code is: `/system/priv-app/…` for a system app,
/// `/data/app/…` in the layout of the release.
fn code_path(android: AndroidVersion, package: &Package, hash: u32) -> String {
    if package.system {
        format!(
            "/system/priv-app/{}",
            package.name.rsplit('.').next().unwrap_or(&package.name)
        )
    } else if android == AndroidVersion::Android10 {
        format!("/data/app/{}-{:08x}==", package.name, hash)
    } else {
        format!(
            "/data/app/~~{:08x}Xq1w2e3r==/{}-{:08x}a1B2c3==",
            hash,
            package.name,
            hash.rotate_left(7)
        )
    }
}

/// The resolver table's launcher entry and the key set of a package's `dumpsys package`.
fn push_resolver_and_key_sets(out: &mut String, package: &Package, hash: u32) {
    let name = &package.name;
    out.push_str(
        "Activity Resolver Table:\n  Non-Data Actions:\n      android.intent.action.MAIN:\n",
    );
    let _ = writeln!(
        out,
        "        {:07x} {name}/{} filter {:07x}",
        hash & 0x0fff_ffff,
        package.main_activity,
        hash.rotate_left(3) & 0x0fff_ffff
    );
    out.push_str("          Action: \"android.intent.action.MAIN\"\n");
    out.push_str("          Category: \"android.intent.category.LAUNCHER\"\n\n");
    out.push_str("Key Set Manager:\n");
    let _ = writeln!(out, "  [{name}]");
    out.push_str("      Signing KeySets: 57\n\n");
}
