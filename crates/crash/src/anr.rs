//! ANR traces, cut down to the subject and the app's own process sections.
//!
//! A trace (a drop box `data_app_anr` body, `/data/anr/*`, an exit-info trace) holds a subject,
//! often the CPU usage of every process, and one `----- pid N at … -----` … `----- end N -----`
//! section per dumped process. Only the app's own sections are kept: other processes' threads
//! are other apps' data.

/// Which process sections of a trace belong to the app.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AnrTarget<'a> {
    /// The app's pid: a section `----- pid <pid> at … -----` is the app's.
    pub pid: Option<u32>,
    /// The app's process name: a section whose `Cmd line:` is this name is the app's, but only
    /// when `pid` is unknown (a name does not tell the app from another process of that name).
    pub process: Option<&'a str>,
}

/// The result of [`cut_anr`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AnrCut {
    /// The `Subject: …` line's text, when the trace has one.
    pub subject: Option<String>,
    /// The pid of the first kept section.
    pub pid: Option<u32>,
    /// The `Cmd line:` of the first kept section.
    pub process: Option<String>,
    /// The time printed in the first kept section's `----- pid N at <time> -----` line.
    pub section_time: Option<String>,
    /// The subject line followed by the kept sections.
    pub text: String,
    /// Sections that were dropped and other oddities.
    pub warnings: Vec<String>,
}

struct Section<'a> {
    pid: Option<u32>,
    time: Option<&'a str>,
    cmd_line: Option<&'a str>,
    lines: Vec<&'a str>,
}

/// Reads `----- pid N at TIME -----` into the pid and time.
fn read_section_start(line: &str) -> Option<(Option<u32>, Option<&str>)> {
    let line = line.trim();
    let rest = line
        .strip_prefix("----- pid ")
        .or_else(|| line.strip_prefix("----- Waiting Channels: pid "))?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let pid = rest[..digits].parse().ok();
    let time = rest[digits..]
        .trim_start()
        .strip_prefix("at ")
        .map(|tail| tail.trim_end().trim_end_matches('-').trim_end());
    Some((pid, time))
}

/// Cuts an ANR trace down to its subject and the target's own process sections.
///
/// With neither a pid nor a process name in `target`, the first section is taken as the app's
/// (the ANR'd process is dumped first).
///
/// ```
/// use phonelogs_crash::anr::{cut_anr, AnrTarget};
/// let trace = "\
/// Subject: Input dispatching timed out
/// CPU usage from 0ms to 5000ms later:
///   50% 1234/system_server: 30% user
///
/// ----- pid 4321 at 2026-11-30 10:00:00.123456789+0100 -----
/// Cmd line: com.example.app
/// \"main\" prio=5 tid=1 Sleeping
/// ----- end 4321 -----
///
/// ----- pid 1234 at 2026-11-30 10:00:00.223456789+0100 -----
/// Cmd line: system_server
/// ----- end 1234 -----
/// ";
/// let cut = cut_anr(trace, AnrTarget { pid: Some(4321), process: None });
/// assert!(cut.text.contains("\"main\" prio=5"));
/// assert!(!cut.text.contains("system_server"));
/// assert_eq!(cut.subject.as_deref(), Some("Input dispatching timed out"));
/// ```
pub fn cut_anr(trace: &str, target: AnrTarget<'_>) -> AnrCut {
    let mut subject: Option<&str> = None;
    let mut sections: Vec<Section<'_>> = Vec::new();
    let mut open = false;
    for line in trace.lines() {
        let trimmed = line.trim();
        if let Some((pid, time)) = read_section_start(trimmed) {
            sections.push(Section {
                pid,
                time,
                cmd_line: None,
                lines: vec![line],
            });
            open = true;
            continue;
        }
        if open {
            if let Some(section) = sections.last_mut() {
                section.lines.push(line);
                if section.cmd_line.is_none()
                    && let Some(cmd) = trimmed.strip_prefix("Cmd line:")
                {
                    section.cmd_line = Some(cmd.trim());
                }
            }
            if trimmed.starts_with("----- end ") {
                open = false;
            }
            continue;
        }
        if subject.is_none()
            && let Some(text) = trimmed.strip_prefix("Subject:")
        {
            subject = Some(text.trim());
        }
    }

    let mut cut = AnrCut {
        subject: subject.map(str::to_owned),
        ..AnrCut::default()
    };
    let mut dropped = 0usize;
    if let Some(subject) = subject {
        cut.text.push_str("Subject: ");
        cut.text.push_str(subject);
        cut.text.push_str("\n\n");
    }
    for (index, section) in sections.iter().enumerate() {
        // A known pid decides alone: a command line is only a name, which another process
        // (the app's clone in another user, or any process that calls itself so) can carry
        // too. The name is the fallback for traces whose report gives no pid.
        let is_target = match (target.pid, target.process) {
            (None, None) => index == 0,
            (Some(pid), _) => section.pid == Some(pid),
            (None, Some(process)) => section.cmd_line == Some(process),
        };
        if !is_target {
            dropped += 1;
            continue;
        }
        if cut.pid.is_none() {
            cut.pid = section.pid;
            cut.process = section.cmd_line.map(str::to_owned);
            cut.section_time = section.time.map(str::to_owned);
        }
        for line in &section.lines {
            cut.text.push_str(line);
            cut.text.push('\n');
        }
        cut.text.push('\n');
    }
    if cut.pid.is_none() {
        cut.warnings
            .push("no process section of the app in the trace".to_owned());
    }
    if dropped > 0 {
        cut.warnings
            .push(format!("left out {dropped} section(s) of other processes"));
    }
    cut
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn matches_by_process_name_and_keeps_waiting_channels() {
        let trace = "\
----- pid 10 at 2018-09-14 13:46:56 -----
Cmd line: other
----- end 10 -----
----- Waiting Channels: pid 20 at 2022-10-03 16:52:23.938520831+0200 -----
Cmd line: com.example.app
sysTid=20         do_freezer_trap
----- end 20 -----
";
        let cut = cut_anr(
            trace,
            AnrTarget {
                pid: None,
                process: Some("com.example.app"),
            },
        );
        // A frozen app's trace has only a waiting-channels section; it is the app's.
        assert!(!cut.text.contains("other"));
        assert!(cut.text.contains("do_freezer_trap"));
        assert_eq!(cut.pid, Some(20));
        assert_eq!(cut.warnings.len(), 1, "{:?}", cut.warnings);
    }

    #[test]
    fn a_known_pid_decides_and_the_command_line_does_not() {
        // Another process whose command line names the app (the app's clone in another user,
        // or any process that calls itself that) is not the app's when the report's pid is
        // known: only the section of that pid is kept.
        let trace = "\
----- pid 4321 at 2026-11-30 10:00:00.123456789+0100 -----
Cmd line: com.example.app
\"main\" prio=5 tid=1 Sleeping
----- end 4321 -----

----- pid 9876 at 2026-11-30 10:00:00.223456789+0100 -----
Cmd line: com.example.app
\"main\" prio=5 tid=1 Native CLONE-SECRET
----- end 9876 -----
";
        let cut = cut_anr(
            trace,
            AnrTarget {
                pid: Some(4321),
                process: Some("com.example.app"),
            },
        );
        assert!(cut.text.contains("Sleeping"));
        assert!(!cut.text.contains("CLONE-SECRET"), "{}", cut.text);
        assert_eq!(cut.pid, Some(4321));
        assert!(cut.warnings.iter().any(|w| w.contains("left out 1")));

        // A pid that has no section keeps nothing, even when a command line matches.
        let cut = cut_anr(
            trace,
            AnrTarget {
                pid: Some(1111),
                process: Some("com.example.app"),
            },
        );
        assert!(!cut.text.contains("Cmd line"), "{}", cut.text);
        assert_eq!(cut.pid, None);
    }

    #[test]
    fn no_target_keeps_first_section() {
        let trace = "----- pid 1 at x -----\nCmd line: a\n----- end 1 -----\n----- pid 2 at y -----\nCmd line: b\n----- end 2 -----\n";
        let cut = cut_anr(trace, AnrTarget::default());
        assert_eq!(cut.pid, Some(1));
        assert_eq!(cut.process.as_deref(), Some("a"));
        assert_eq!(cut.section_time.as_deref(), Some("x"));
        assert!(!cut.text.contains("Cmd line: b"));
    }
}
