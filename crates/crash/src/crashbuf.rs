//! Reports from logcat's crash buffer (`logcat -b crash`): Java crashes (`FATAL EXCEPTION` and
//! the same process's lines after it, one report per pid, as a stack trace: AndroidRuntime's
//! messages alone, other tags' lines as `Tag: text`) and native crashes (`F libc` and the
//! tombstone that crash_dump echoes as `F DEBUG` lines under its own pid).

use crate::logcat::{LogcatLineRef, parse_log_line};
use crate::report::{PhoneClock, Report};
use phonelogs_driver::CrashKind;

/// The most text kept for one report, so a process that keeps logging after its crash cannot
/// grow a report without bound.
const MAX_REPORT_TEXT: usize = 64 * 1024;

struct JavaDraft {
    report: Report,
    summary_pending: bool,
    open: bool,
}

struct NativeDraft {
    report: Report,
    crash_dump_pid: Option<u32>,
    signal: String,
    abort_message: Option<String>,
    open: bool,
}

/// Finds the crash reports in a logcat dump (any layout this crate reads), oldest first.
///
/// ```
/// use phonelogs_crash::{crashbuf::parse_crash_buffer, PhoneClock, CrashKind};
/// let dump = "\
/// 05-20 08:02:10.572 10127 23031 23031 E AndroidRuntime: FATAL EXCEPTION: main
/// 05-20 08:02:10.572 10127 23031 23031 E AndroidRuntime: Process: com.example.app, PID: 23031
/// 05-20 08:02:10.572 10127 23031 23031 E AndroidRuntime: java.lang.IllegalStateException: boom
/// 05-20 08:02:10.572 10127 23031 23031 E AndroidRuntime: \tat com.example.A.b(A.java:1)
/// ";
/// let reports = parse_crash_buffer(dump, &PhoneClock::default());
/// assert_eq!(reports.len(), 1);
/// assert_eq!(reports[0].kind, CrashKind::JavaCrash);
/// assert_eq!(reports[0].pid, Some(23031));
/// assert_eq!(reports[0].summary, "java.lang.IllegalStateException: boom");
/// // A stack trace, not logcat's lines.
/// assert_eq!(
///     reports[0].text,
///     "FATAL EXCEPTION: main\nProcess: com.example.app, PID: 23031\n\
///      java.lang.IllegalStateException: boom\n\tat com.example.A.b(A.java:1)\n"
/// );
/// ```
pub fn parse_crash_buffer(text: &str, clock: &PhoneClock) -> Vec<Report> {
    let mut java: Vec<JavaDraft> = Vec::new();
    // Where each pid's report is in `java`, so a long dump costs one lookup per line.
    let mut java_by_pid: std::collections::HashMap<u32, usize> = std::collections::HashMap::new();
    let mut native: Vec<NativeDraft> = Vec::new();
    // The order reports were started in, as (is_java, index).
    let mut order: Vec<(bool, usize)> = Vec::new();

    for raw in text.lines() {
        // Read in place: most lines of a crash buffer belong to no report, and the tag and
        // text of those need not be copied.
        let Some(line) = parse_log_line(raw) else {
            continue;
        };
        let raw = raw.trim_end_matches('\r');
        if line.tag == "AndroidRuntime" && line.text.starts_with("FATAL EXCEPTION") {
            // One report per pid: a second FATAL EXCEPTION of a pid closes its report.
            if let Some(&index) = java_by_pid.get(&line.pid) {
                if let Some(draft) = java.get_mut(index) {
                    draft.open = false;
                }
                continue;
            }
            java_by_pid.insert(line.pid, java.len());
            order.push((true, java.len()));
            java.push(JavaDraft {
                report: Report {
                    kind: CrashKind::JavaCrash,
                    time: line.time.to_offset_date_time(clock.year, clock.offset),
                    pid: Some(line.pid),
                    process: String::new(),
                    summary: String::new(),
                    // A stack trace, as the drop box and Android Studio show it, not logcat's
                    // `-v epoch -v uid` lines: the messages alone.
                    text: format!("{}\n", line.text.trim_end_matches('\r')),
                    warnings: Vec::new(),
                },
                summary_pending: true,
                open: true,
            });
            continue;
        }
        if let Some(draft) = java_by_pid
            .get(&line.pid)
            .and_then(|&index| java.get_mut(index))
            .filter(|draft| draft.open)
        {
            if line.tag == "AndroidRuntime" {
                push_line(&mut draft.report, line.text.trim_end_matches('\r'));
                read_java_line(draft, &line);
            } else {
                // The same process's other lines after the crash keep their tag.
                let text = line.text.trim_end_matches('\r');
                push_line(&mut draft.report, &format!("{}: {text}", line.tag));
            }
        }
        if line.tag == "libc" && line.text.starts_with("Fatal signal") {
            let (signal, pid, process) = read_fatal_signal(line.text);
            order.push((false, native.len()));
            native.push(NativeDraft {
                report: Report {
                    kind: CrashKind::NativeCrash,
                    time: line.time.to_offset_date_time(clock.year, clock.offset),
                    pid: pid.or(Some(line.pid)),
                    process: process.unwrap_or_default(),
                    summary: String::new(),
                    text: format!("{raw}\n"),
                    warnings: Vec::new(),
                },
                crash_dump_pid: None,
                signal,
                abort_message: None,
                open: true,
            });
            continue;
        }
        if line.tag == "DEBUG" {
            read_debug_line(&mut native, &mut order, &line, raw, clock);
        }
    }

    finish(order, java, native)
}

/// The reports in the order they were started (`order`: is it a Java one, its index), each
/// with its summary: a Java crash without an exception line is warned about, a native crash's
/// is its signal and abort message.
fn finish(
    order: Vec<(bool, usize)>,
    java: Vec<JavaDraft>,
    native: Vec<NativeDraft>,
) -> Vec<Report> {
    let mut reports = Vec::with_capacity(order.len());
    let mut java = java.into_iter().map(Some).collect::<Vec<_>>();
    let mut native = native.into_iter().map(Some).collect::<Vec<_>>();
    for (is_java, index) in order {
        if is_java {
            if let Some(draft) = java.get_mut(index).and_then(Option::take) {
                let mut report = draft.report;
                if report.summary.is_empty() {
                    report
                        .warnings
                        .push("no exception line after FATAL EXCEPTION".into());
                }
                reports.push(report);
            }
        } else if let Some(draft) = native.get_mut(index).and_then(Option::take) {
            let mut report = draft.report;
            report.summary = match draft.abort_message {
                Some(message) if !draft.signal.is_empty() => format!("{}: {message}", draft.signal),
                Some(message) => message,
                None => draft.signal,
            };
            reports.push(report);
        }
    }
    reports
}

fn push_line(report: &mut Report, raw: &str) {
    if report.text.len() + raw.len() < MAX_REPORT_TEXT {
        report.text.push_str(raw);
        report.text.push('\n');
    }
}

fn read_java_line(draft: &mut JavaDraft, line: &LogcatLineRef<'_>) {
    if let Some(rest) = line.text.strip_prefix("Process: ") {
        // `Process: <proc>, PID: <pid>`
        let (process, pid) = match rest.rfind(", PID: ") {
            Some(at) => (&rest[..at], rest[at + 7..].trim().parse().ok()),
            None => (rest, None),
        };
        draft.report.process = process.trim().to_owned();
        if let Some(pid) = pid {
            draft.report.pid = Some(pid);
        }
        return;
    }
    let text = line.text.trim();
    if draft.summary_pending
        && !draft.report.process.is_empty()
        && !text.is_empty()
        && !text.starts_with("at ")
    {
        draft.report.summary = text.to_owned();
        draft.summary_pending = false;
    }
}

/// Reads `Fatal signal 4 (SIGILL), code 2 (ILL_ILLOPN), fault addr 0x… in tid 2176 (BG Thread #0),
/// pid 1778 (earchbox:search)` into the signal part, the pid and the (truncated) process name.
fn read_fatal_signal(text: &str) -> (String, Option<u32>, Option<String>) {
    let signal = match text.find(" in tid ") {
        Some(at) => &text[..at],
        None => text,
    };
    let (pid, process) = match text.rfind(", pid ") {
        Some(at) => {
            let rest = &text[at + 6..];
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            let pid = rest[..digits].parse().ok();
            let process = rest[digits..]
                .trim()
                .strip_prefix('(')
                .and_then(|name| name.strip_suffix(')'))
                .map(str::to_owned);
            (pid, process)
        }
        None => (None, None),
    };
    (signal.to_owned(), pid, process)
}

fn read_debug_line(
    native: &mut Vec<NativeDraft>,
    order: &mut Vec<(bool, usize)>,
    line: &LogcatLineRef<'_>,
    raw: &str,
    clock: &PhoneClock,
) {
    let starts_tombstone = line.text.starts_with("*** *** ***");
    let current = native.iter().rposition(|d| d.open);
    let belongs = current.and_then(|index| {
        let draft = &native[index];
        match draft.crash_dump_pid {
            None => Some(index),
            Some(pid) if pid == line.pid && !starts_tombstone => Some(index),
            Some(_) => None,
        }
    });
    let index = match belongs {
        Some(index) => index,
        None if starts_tombstone => {
            for draft in native.iter_mut() {
                draft.open = false;
            }
            order.push((false, native.len()));
            native.push(NativeDraft {
                report: Report {
                    kind: CrashKind::NativeCrash,
                    time: line.time.to_offset_date_time(clock.year, clock.offset),
                    pid: None,
                    process: String::new(),
                    summary: String::new(),
                    text: String::new(),
                    warnings: vec!["tombstone without a `Fatal signal` line".into()],
                },
                crash_dump_pid: None,
                signal: String::new(),
                abort_message: None,
                open: true,
            });
            native.len() - 1
        }
        None => return,
    };
    let draft = &mut native[index];
    draft.crash_dump_pid = Some(line.pid);
    push_line(&mut draft.report, raw);
    let text = line.text.trim();
    if let Some(header) = crate::tombstone::read_pid_line(text) {
        if draft.report.pid.is_none() || draft.report.pid == Some(header.pid) {
            draft.report.pid = Some(header.pid);
            if !header.process.is_empty() {
                draft.report.process = header.process;
            }
        }
    } else if let Some(rest) = text.strip_prefix("signal ")
        && draft.signal.is_empty()
    {
        draft.signal = format!("signal {rest}");
    } else if let Some(message) = text.strip_prefix("Abort message: ") {
        draft.abort_message = Some(message.trim_matches('\'').trim().to_owned());
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn native_crash_takes_pid_from_libc_and_name_from_debug() {
        let dump = "\
06-01 10:00:00.100  1778  2176 F libc    : Fatal signal 4 (SIGILL), code 2 (ILL_ILLOPN), fault addr 0x7a in tid 2176 (BG Thread #0), pid 1778 (earchbox:search)
06-01 10:00:00.200  2300  2300 F DEBUG   : *** *** *** *** *** *** *** *** *** *** *** *** *** *** *** ***
06-01 10:00:00.200  2300  2300 F DEBUG   : pid: 1778, tid: 2176, name: BG Thread #0  >>> com.google.android.googlequicksearchbox:search <<<
06-01 10:00:00.200  2300  2300 F DEBUG   : Abort message: 'bad thing'
06-01 10:00:00.200  4444  4444 I other   : unrelated
";
        let reports = parse_crash_buffer(dump, &PhoneClock::default());
        assert_eq!(reports.len(), 1);
        let report = &reports[0];
        assert_eq!(report.pid, Some(1778));
        assert_eq!(
            report.process,
            "com.google.android.googlequicksearchbox:search"
        );
        assert_eq!(
            report.summary,
            "Fatal signal 4 (SIGILL), code 2 (ILL_ILLOPN), fault addr 0x7a: bad thing"
        );
        assert!(!report.text.contains("unrelated"));
    }

    #[test]
    fn one_java_report_per_pid() {
        let dump = "\
05-20 08:02:10.572 23031 23031 E AndroidRuntime: FATAL EXCEPTION: main
05-20 08:02:10.572 23031 23031 E AndroidRuntime: Process: a, PID: 23031
05-20 08:02:10.572 23031 23031 E AndroidRuntime: java.lang.Error: one
05-20 08:02:10.573 99 99 E AndroidRuntime: FATAL EXCEPTION: main
05-20 08:02:10.573 99 99 E AndroidRuntime: Process: b, PID: 99
05-20 08:02:10.573 99 99 E AndroidRuntime: java.lang.Error: two
05-20 08:02:10.574 23031 23032 E AndroidRuntime: FATAL EXCEPTION: worker
";
        let reports = parse_crash_buffer(dump, &PhoneClock::default());
        let pids: Vec<_> = reports.iter().map(|r| r.pid).collect();
        assert_eq!(pids, vec![Some(23031), Some(99)]);
        assert_eq!(reports[1].process, "b");
        assert!(!reports[0].text.contains("two"));
    }
}
