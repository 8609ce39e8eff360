//! Native tombstones (`debuggerd <pid>`, `/data/tombstones`, a drop box `data_app_native_crash`
//! body) and `debuggerd -b <pid>` backtraces, read into the header fields the
//! `capture_native_tombstone` and `capture_native_backtrace` tools return.

use serde::{Deserialize, Serialize};

use crate::report::{PhoneClock, Report};
use phonelogs_driver::CrashKind;

/// The header of a native tombstone: the fields of `capture_native_tombstone` that come from the
/// dump itself, plus a few more a crash report heading needs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TombstoneHeader {
    /// The process name from `pid: P, tid: T, name: X  >>> process <<<` (or `Cmdline:`).
    pub process_name: Option<String>,
    /// The ABI from `ABI: 'arm64'`.
    pub abi: Option<String>,
    /// The signal line after `signal `, e.g. `11 (SIGSEGV), code 1 (SEGV_MAPERR), fault addr 0x0`.
    pub signal: Option<String>,
    /// The fault address from the signal line (`0x…` or `--------`).
    pub fault_addr: Option<String>,
    /// The `Abort message: '…'`, without its quotes.
    pub abort_message: Option<String>,
    /// The `Cause: …` line, when the dump has one.
    pub cause: Option<String>,
    /// The crashed process's pid.
    pub pid: Option<u32>,
    /// The crashed thread's tid.
    pub tid: Option<u32>,
    /// The crashed thread's name.
    pub thread_name: Option<String>,
    /// The `uid: N` line.
    pub uid: Option<u32>,
    /// The `Timestamp:` line as printed (it carries its own zone).
    pub timestamp: Option<String>,
    /// The value of `N total frames`, or the number of frames of the first `backtrace:` block
    /// when the dump does not print a total.
    pub frame_count: Option<u32>,
    /// The `tombstone_NN.pb` (or `tombstone_NN`) file name the dump names on the device.
    pub device_tombstone_ref: Option<String>,
}

/// One thread of a `debuggerd -b` dump.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BacktraceThread {
    /// The thread name from `"name" sysTid=N`.
    pub name: String,
    /// The thread's system tid.
    pub sys_tid: u32,
    /// How many `#NN pc` frames the thread has.
    pub frame_count: u32,
}

/// A parsed `debuggerd -b <pid>` dump: the fields of `capture_native_backtrace` that come from
/// the dump itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NativeBacktrace {
    /// The pid from `----- pid N at … -----`.
    pub pid: Option<u32>,
    /// The process name from `Cmd line:`.
    pub process_name: Option<String>,
    /// The ABI from `ABI: '…'`.
    pub abi: Option<String>,
    /// How many threads the dump lists.
    pub thread_count: u32,
    /// The threads, in the dump's order.
    pub threads: Vec<BacktraceThread>,
    /// What could not be read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// The parts of a `pid: P, tid: T, name: X  >>> process <<<` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PidLine {
    pub pid: u32,
    pub tid: Option<u32>,
    pub thread_name: String,
    pub process: String,
}

/// Reads a tombstone's `pid: P, tid: T, name: X  >>> process <<<` line.
pub(crate) fn read_pid_line(line: &str) -> Option<PidLine> {
    let rest = line.trim().strip_prefix("pid: ")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let pid = rest[..digits].parse().ok()?;
    let rest = &rest[digits..];
    let tid = rest.strip_prefix(", tid: ").and_then(|tail| {
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        tail[..digits].parse().ok()
    });
    let (thread_name, process) = match (rest.find(", name: "), rest.find(">>> ")) {
        (Some(name_at), Some(process_at)) if name_at < process_at => {
            let thread = rest[name_at + 8..process_at].trim_end();
            let process = rest[process_at + 4..].trim_end();
            let process = process.strip_suffix("<<<").unwrap_or(process).trim_end();
            (thread.to_owned(), process.to_owned())
        }
        (_, Some(process_at)) => {
            let process = rest[process_at + 4..].trim_end();
            let process = process.strip_suffix("<<<").unwrap_or(process).trim_end();
            (String::new(), process.to_owned())
        }
        _ => (String::new(), String::new()),
    };
    Some(PidLine {
        pid,
        tid,
        thread_name,
        process,
    })
}

/// A quoted value such as `'arm64'` without its quotes and the padding inside them.
fn quoted(value: &str) -> String {
    value.trim().trim_matches('\'').trim().to_owned()
}

/// Whether a line is a frame line, `#00 pc …` in any indentation (including `#00  pc`).
fn is_frame_line(line: &str) -> bool {
    let line = line.trim_start();
    let Some(rest) = line.strip_prefix('#') else {
        return false;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && rest[digits..].trim_start().starts_with("pc ")
}

/// Reads a tombstone's header. Lines may carry a logcat prefix (`F DEBUG   : `); it is removed.
///
/// ```
/// use phonelogs_crash::tombstone::parse_tombstone_header;
/// let header = parse_tombstone_header("\
/// *** *** *** *** *** *** *** *** *** *** *** *** *** *** *** ***
/// ABI: 'x86_64'
/// pid: 1224, tid: 1224, name: ndroid.systemui  >>> com.android.systemui <<<
/// signal 35 (<debuggerd signal>), code -1 (SI_QUEUE from pid 7338, uid 0), fault addr --------
/// 24 total frames
/// ");
/// assert_eq!(header.process_name.as_deref(), Some("com.android.systemui"));
/// assert_eq!(header.frame_count, Some(24));
/// assert_eq!(header.fault_addr.as_deref(), Some("--------"));
/// ```
pub fn parse_tombstone_header(text: &str) -> TombstoneHeader {
    let mut header = TombstoneHeader::default();
    let mut counted_frames: Option<u32> = None;
    let mut in_first_backtrace = false;
    let mut first_backtrace_done = false;
    for raw in text.lines() {
        let line = strip_logcat_prefix(raw);
        let trimmed = line.trim();
        if header.device_tombstone_ref.is_none() {
            header.device_tombstone_ref = find_tombstone_ref(trimmed);
        }
        if in_first_backtrace {
            if is_frame_line(trimmed) {
                counted_frames = Some(counted_frames.unwrap_or(0) + 1);
                continue;
            }
            if trimmed.is_empty() && counted_frames.is_none() {
                continue;
            }
            in_first_backtrace = false;
            first_backtrace_done = true;
        }
        if let Some(value) = trimmed.strip_prefix("ABI: ") {
            header.abi.get_or_insert_with(|| quoted(value));
        } else if let Some(value) = trimmed.strip_prefix("Timestamp: ") {
            header
                .timestamp
                .get_or_insert_with(|| value.trim().to_owned());
        } else if let Some(value) = trimmed.strip_prefix("Cmdline: ") {
            header
                .process_name
                .get_or_insert_with(|| value.trim().to_owned());
        } else if let Some(value) = trimmed.strip_prefix("uid: ") {
            if header.uid.is_none() {
                header.uid = value.trim().parse().ok();
            }
        } else if let Some(value) = trimmed.strip_prefix("Abort message: ") {
            header.abort_message.get_or_insert_with(|| quoted(value));
        } else if let Some(value) = trimmed.strip_prefix("Cause: ") {
            header.cause.get_or_insert_with(|| value.trim().to_owned());
        } else if let Some(value) = trimmed.strip_prefix("signal ") {
            if header.signal.is_none() {
                header.signal = Some(value.trim().to_owned());
                header.fault_addr = value.find("fault addr ").map(|at| {
                    let rest = &value[at + 11..];
                    rest.split_whitespace().next().unwrap_or("").to_owned()
                });
            }
        } else if trimmed.starts_with("pid: ") {
            if header.pid.is_none()
                && let Some(pid_line) = read_pid_line(trimmed)
            {
                header.pid = Some(pid_line.pid);
                header.tid = pid_line.tid;
                if !pid_line.thread_name.is_empty() {
                    header.thread_name = Some(pid_line.thread_name);
                }
                if !pid_line.process.is_empty() {
                    header.process_name = Some(pid_line.process);
                }
            }
        } else if let Some(count) = trimmed.strip_suffix(" total frames") {
            if header.frame_count.is_none() {
                header.frame_count = count.trim().parse().ok();
            }
        } else if trimmed == "backtrace:" && !first_backtrace_done && counted_frames.is_none() {
            in_first_backtrace = true;
        }
    }
    if header.frame_count.is_none() {
        header.frame_count = counted_frames;
    }
    header
}

/// Removes a logcat prefix up to `DEBUG   : ` when a tombstone was copied out of logcat.
fn strip_logcat_prefix(line: &str) -> &str {
    for marker in [" DEBUG   : ", "/DEBUG   : ", " DEBUG: ", "/DEBUG: "] {
        if let Some(at) = line.find(marker) {
            return &line[at + marker.len()..];
        }
    }
    line
}

/// Finds `tombstone_NN.pb` or `tombstone_NN` in a line and returns that file name.
fn find_tombstone_ref(line: &str) -> Option<String> {
    let at = line.find("tombstone_")?;
    let rest = &line[at + 10..];
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let mut name = format!("tombstone_{}", &rest[..digits]);
    if rest[digits..].starts_with(".pb") {
        name.push_str(".pb");
    }
    Some(name)
}

/// Turns a tombstone into a native crash report (pid, process and signal from its header).
pub fn tombstone_report(text: &str, clock: &PhoneClock) -> Report {
    let header = parse_tombstone_header(text);
    let mut warnings = Vec::new();
    if header.signal.is_none() {
        warnings.push("no `signal` line in the tombstone".to_owned());
    }
    let time = header.timestamp.as_deref().and_then(parse_tombstone_time);
    let signal = header
        .signal
        .as_deref()
        .map(|signal| format!("signal {signal}"))
        .unwrap_or_default();
    let summary = match &header.abort_message {
        Some(message) if !signal.is_empty() => format!("{signal}: {message}"),
        Some(message) => message.clone(),
        None => signal,
    };
    let _ = clock;
    Report {
        kind: CrashKind::NativeCrash,
        time,
        pid: header.pid,
        process: header.process_name.unwrap_or_default(),
        summary,
        text: text.to_owned(),
        warnings,
    }
}

/// Reads `2020-11-06 10:53:54+0000` or `2024-03-01 10:53:54.123456789+0100`.
pub(crate) fn parse_tombstone_time(value: &str) -> Option<time::OffsetDateTime> {
    let value = value.trim();
    let zone_at = value.rfind(['+', '-'])?;
    if zone_at < 19 {
        return None;
    }
    let (clock, zone) = value.split_at(zone_at);
    let offset = crate::android::parse_date_offset(zone)?;
    let date = crate::android::parse_local_date_time(clock)?;
    Some(date.assume_offset(offset))
}

/// Reads a `debuggerd -b <pid>` dump.
///
/// ```
/// use phonelogs_crash::tombstone::parse_backtrace;
/// let dump = "\
/// ----- pid 1224 at 2026-09-06 22:39:39.266 -----
/// Cmd line: com.android.systemui
/// ABI: 'x86_64'
///
/// \"ndroid.systemui\" sysTid=1224
///     #00 pc 000000000005b4c8  /apex/com.android.runtime/lib64/bionic/libc.so (syscall+24)
///     #01 pc 0000000000112233  /system/lib64/libart.so
///
/// ----- end 1224 -----
/// ";
/// let trace = parse_backtrace(dump);
/// assert_eq!(trace.process_name.as_deref(), Some("com.android.systemui"));
/// assert_eq!(trace.thread_count, 1);
/// assert_eq!(trace.threads[0].frame_count, 2);
/// ```
pub fn parse_backtrace(text: &str) -> NativeBacktrace {
    let mut trace = NativeBacktrace::default();
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix("----- pid ") {
            if trace.pid.is_none() {
                let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
                trace.pid = rest[..digits].parse().ok();
            }
        } else if let Some(value) = trimmed.strip_prefix("Cmd line: ") {
            trace
                .process_name
                .get_or_insert_with(|| value.trim().to_owned());
        } else if let Some(value) = trimmed.strip_prefix("ABI: ") {
            trace.abi.get_or_insert_with(|| quoted(value));
        } else if trimmed.starts_with('"') {
            if let Some(thread) = read_thread_line(trimmed) {
                trace.threads.push(thread);
            } else {
                trace
                    .warnings
                    .push(format!("unreadable thread line: {trimmed}"));
            }
        } else if is_frame_line(trimmed)
            && let Some(thread) = trace.threads.last_mut()
        {
            thread.frame_count += 1;
        }
    }
    trace.thread_count = u32::try_from(trace.threads.len()).unwrap_or(u32::MAX);
    if trace.pid.is_none() {
        trace
            .warnings
            .push("no `----- pid N at … -----` line".to_owned());
    }
    trace
}

/// Reads `"name" sysTid=N` (the name may hold spaces and quotes, so the last `" sysTid=` ends it).
fn read_thread_line(line: &str) -> Option<BacktraceThread> {
    let rest = line.strip_prefix('"')?;
    let at = rest.rfind("\" sysTid=")?;
    let name = &rest[..at];
    let tail = &rest[at + 9..];
    let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
    Some(BacktraceThread {
        name: name.to_owned(),
        sys_tid: tail[..digits].parse().ok()?,
        frame_count: 0,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn pid_line_with_two_spaces() {
        let line = read_pid_line("pid: 1778, tid: 2176, name: BG Thread #0  >>> a.b:search <<<");
        let line = line.unwrap();
        assert_eq!(line.pid, 1778);
        assert_eq!(line.tid, Some(2176));
        assert_eq!(line.thread_name, "BG Thread #0");
        assert_eq!(line.process, "a.b:search");
    }

    #[test]
    fn counts_first_backtrace_when_no_total() {
        let text = "\
signal 11 (SIGSEGV), code 1 (SEGV_MAPERR), fault addr 0x0 (read)
backtrace:
      #00 pc 0000000000001000  /data/app/lib.so (crash+8)
      #01 pc 0000000000002000  /data/app/lib.so

stack:
backtrace:
#00  pc 00020418  /system/lib/libc.so
";
        let header = parse_tombstone_header(text);
        assert_eq!(header.frame_count, Some(2));
        assert_eq!(header.fault_addr.as_deref(), Some("0x0"));
    }

    #[test]
    fn tombstone_time_with_nanos_and_zone() {
        let t = parse_tombstone_time("2024-03-01 10:53:54.123456789+0100").unwrap();
        assert_eq!(t.offset().whole_hours(), 1);
        assert_eq!(t.nanosecond(), 123_456_789);
        assert!(parse_tombstone_time("2020-11-06 10:53:54+0000").is_some());
    }
}
