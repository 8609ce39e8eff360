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
    /// The app's process name, used only when `pid` is unknown (a name does not tell the app
    /// from another process of that name): the first section whose `Cmd line:` is this name is
    /// the app's, and so are the other sections of that section's pid.
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
    /// A `----- Waiting Channels: pid N` section (a process's second section) rather than the
    /// process's own `----- pid N`.
    waiting: bool,
    /// Its lines, from its start line to its end line (`lines[first..=last]` of the trace).
    first: usize,
    last: usize,
    /// Whether its own end line (`----- end <its pid> -----`) came before another section's
    /// start, or it is the trace's last section and the drop box cut the trace there
    /// (see [`mark_cut_short`]).
    closed: bool,
    /// Whether it is that last section, cut short by the drop box's size limit.
    cut_short: bool,
}

/// The mark the drop box ends an entry with when it cut the entry's trace to its size limit:
/// ActivityManagerService's `addErrorToDropBox` appends the trace with
/// `FileUtils.readTextFile(file, maxDataFileSize, "\n\n[[TRUNCATED]]")` (see
/// `testdata/android/dropbox/README.md`).
const DROPBOX_TRUNCATED: &str = "[[TRUNCATED]]";

/// Takes the trace's last section as ending where the trace ends when the drop box cut the
/// trace there (its last line is [`DROPBOX_TRUNCATED`]): the drop box keeps a trace's first
/// bytes, and the ANR'd process is dumped first, so a large app's own section is the one cut.
/// Nothing can follow the last section, so it cannot run over another process's lines; a
/// start forged in a header is always followed by the real sections, so it is never last.
fn mark_cut_short(sections: &mut [Section<'_>], lines: &[&str]) {
    let cut = lines
        .iter()
        .rev()
        .find(|line| !line.trim().is_empty())
        .is_some_and(|line| line.trim() == DROPBOX_TRUNCATED);
    if let Some(last) = sections.last_mut()
        && cut
        && !last.closed
    {
        last.closed = true;
        last.cut_short = true;
    }
}

/// Reads `----- pid N at TIME -----` into the pid and time, and whether it is a
/// `----- Waiting Channels: pid N at TIME -----` line.
fn read_section_start(line: &str) -> Option<(Option<u32>, Option<&str>, bool)> {
    let line = line.trim();
    let (rest, waiting) = match line.strip_prefix("----- pid ") {
        Some(rest) => (rest, false),
        None => (line.strip_prefix("----- Waiting Channels: pid ")?, true),
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let pid = rest[..digits].parse().ok();
    let time = rest[digits..]
        .trim_start()
        .strip_prefix("at ")
        .map(|tail| tail.trim_end().trim_end_matches('-').trim_end());
    Some((pid, time, waiting))
}

/// Whether `line` (trimmed) is the end line of a section of `pid`: `----- end <pid> -----` as
/// ART and debuggerd print it (any `----- end ` line for a section whose pid was unreadable).
fn is_section_end(line: &str, pid: Option<u32>) -> bool {
    let Some(rest) = line.strip_prefix("----- end ") else {
        return false;
    };
    match pid {
        Some(pid) => {
            rest.strip_suffix(" -----")
                .and_then(|n| n.parse::<u32>().ok())
                == Some(pid)
        }
        None => true,
    }
}

/// Cuts an ANR trace down to its subject and the target's own process sections.
///
/// Without a pid in `target`, the app's process is the first section whose `Cmd line:` is
/// `target.process` (the first section when there is no name either: the ANR'd process is dumped
/// first), and only the sections of its pid are kept.
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
    let lines: Vec<&str> = trace.lines().collect();
    let mut sections = read_sections(&lines);
    mark_cut_short(&mut sections, &lines);
    // The subject: the first `Subject:` line outside the sections that end (a section that
    // never ends may be forged, and may have run over the real subject).
    let mut inside = sections.iter().filter(|section| section.closed).peekable();
    let subject = lines.iter().enumerate().find_map(|(at, line)| {
        while inside.peek().is_some_and(|section| section.last < at) {
            inside.next();
        }
        if inside.peek().is_some_and(|section| section.first <= at) {
            return None;
        }
        line.trim().strip_prefix("Subject:").map(str::trim)
    });
    let mut cut = AnrCut {
        subject: subject.map(str::to_owned),
        ..AnrCut::default()
    };
    if let Some(subject) = subject {
        cut.text.push_str("Subject: ");
        cut.text.push_str(subject);
        cut.text.push_str("\n\n");
    }
    let kept = kept_sections(&sections, target);
    let mut dropped = 0usize;
    for (section, keep) in sections.iter().zip(&kept) {
        if !keep {
            dropped += 1;
            continue;
        }
        if cut.pid.is_none() {
            cut.pid = section.pid;
            cut.process = section.cmd_line.map(str::to_owned);
            cut.section_time = section.time.map(str::to_owned);
        }
        for line in &lines[section.first..=section.last] {
            cut.text.push_str(line);
            cut.text.push('\n');
        }
        cut.text.push('\n');
    }
    if cut.pid.is_none() {
        cut.warnings
            .push("no process section of the app in the trace".to_owned());
    }
    if sections
        .iter()
        .zip(&kept)
        .any(|(s, keep)| *keep && s.cut_short)
    {
        cut.warnings.push(
            "the app's section was cut short by the drop box's size limit ([[TRUNCATED]])"
                .to_owned(),
        );
    }
    let unclosed = sections.iter().filter(|section| !section.closed).count();
    if unclosed > 0 {
        cut.warnings.push(format!(
            "left out {unclosed} section(s) with no end line (cut short, or text that only looks like a section)"
        ));
    }
    if dropped > unclosed {
        cut.warnings.push(format!(
            "left out {} section(s) of other processes",
            dropped - unclosed
        ));
    }
    cut
}

/// The trace's sections, in order: each from its start line to its own end line, or to the
/// line before the next start (or the trace's end) when its end never comes (then not
/// `closed`).
fn read_sections<'a>(lines: &[&'a str]) -> Vec<Section<'a>> {
    let mut sections: Vec<Section<'a>> = Vec::new();
    let mut open = false;
    for (at, line) in lines.iter().enumerate() {
        let trimmed = line.trim();
        if let Some((pid, time, waiting)) = read_section_start(trimmed) {
            sections.push(Section {
                pid,
                time,
                cmd_line: None,
                waiting,
                first: at,
                last: at,
                closed: false,
                cut_short: false,
            });
            open = true;
            continue;
        }
        if !open {
            continue;
        }
        let Some(section) = sections.last_mut() else {
            continue;
        };
        section.last = at;
        if section.cmd_line.is_none()
            && let Some(cmd) = trimmed.strip_prefix("Cmd line:")
        {
            section.cmd_line = Some(cmd.trim());
        }
        if is_section_end(trimmed, section.pid) {
            section.closed = true;
            open = false;
        }
    }
    sections
}

/// Which sections are the target's.
///
/// Only a section that ends with its own end line is ever kept: a line break in text an app
/// chose (a header of the drop box entry, a `versionName`, an activity or a broadcast's action
/// in the subject) can forge a section start before the real ones, and such a section would run
/// over what follows it (the headers, the `CPU usage` list of every process) to the next start.
///
/// A known pid decides alone: a command line is only a name, which another process (the
/// app's copy in another user, or any process that calls itself so) can carry too. Without
/// a pid (Android 10's drop box), the ANR'd process is the one Android dumps first: the first
/// section of the app's name (else the first section), and it decides by its pid, so a later
/// section of the same name (the clone's) stays out while the first one's own sections (its
/// waiting channels) stay in. A forged section (with its end) can come first and name another
/// process's pid; Android dumps each process once, so when that pid has a second section of
/// the same kind, or one of another name, the pid is in doubt and nothing is kept.
fn kept_sections(sections: &[Section<'_>], target: AnrTarget<'_>) -> Vec<bool> {
    let closed = || sections.iter().enumerate().filter(|(_, s)| s.closed);
    let first = match (target.pid, target.process) {
        (Some(_), _) => None,
        (None, None) => closed().next(),
        (None, Some(process)) => closed().find(|(_, section)| section.cmd_line == Some(process)),
    };
    let in_doubt = first.is_some_and(|(_, chosen)| {
        let same_pid = || closed().filter(|(_, s)| chosen.pid.is_some() && s.pid == chosen.pid);
        let twice = |waiting: bool| same_pid().filter(|(_, s)| s.waiting == waiting).count() > 1;
        twice(false) || twice(true) || same_pid().any(|(_, s)| s.cmd_line != chosen.cmd_line)
    });
    sections
        .iter()
        .enumerate()
        .map(|(index, section)| {
            section.closed
                && !in_doubt
                && match (target.pid, first) {
                    (Some(pid), _) => section.pid == Some(pid),
                    (None, Some((at, chosen))) => match chosen.pid {
                        Some(pid) => index >= at && section.pid == Some(pid),
                        None => index == at,
                    },
                    (None, None) => false,
                }
        })
        .collect()
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

    /// Item 9 of issue 28: without a pid, the first section whose command line is the app is
    /// the ANR'd process; a later section of the same name (the app's copy in another user) is
    /// another process and stays out, while the first one's own sections (its waiting
    /// channels) stay in.
    #[test]
    fn without_a_pid_the_first_matching_section_and_its_pid_alone() {
        let trace = "\
----- pid 10 at 2020-09-14 10:05:08 -----
Cmd line: system_server
----- end 10 -----
----- pid 20 at 2020-09-14 10:05:08 -----
Cmd line: com.example.app
\"main\" prio=5 tid=1 Sleeping
----- end 20 -----
----- pid 30 at 2020-09-14 10:05:09 -----
Cmd line: com.example.app
\"main\" prio=5 tid=1 Runnable CLONE-SECRET
----- end 30 -----
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
        assert_eq!(cut.pid, Some(20));
        assert!(cut.text.contains("Sleeping") && cut.text.contains("do_freezer_trap"));
        assert!(!cut.text.contains("CLONE-SECRET"), "{}", cut.text);
        assert!(!cut.text.contains("system_server"), "{}", cut.text);
        assert!(cut.warnings.iter().any(|w| w.contains("left out 2")));

        // With no name either, the first section is the app's, and so are its pid's others.
        let cut = cut_anr(
            trace.split_once("----- pid 10").unwrap().1,
            AnrTarget::default(),
        );
        assert!(!cut.text.contains("system_server"));
        let first_is_ours = &trace[trace.find("----- pid 20").unwrap()..];
        let cut = cut_anr(first_is_ours, AnrTarget::default());
        assert_eq!(cut.pid, Some(20));
        assert!(cut.text.contains("do_freezer_trap"), "{}", cut.text);
        assert!(!cut.text.contains("CLONE-SECRET"), "{}", cut.text);
    }

    proptest::proptest! {
        /// A trace as Android dumps it (each process once, with its waiting channels at the
        /// end) after sections forged in text an app chose (with or without their end, of any
        /// pid and name): without a pid, no real section of another process than the first of
        /// the app's name is kept, and with nothing forged that one is.
        #[test]
        fn without_a_pid_no_other_process_is_kept(
            processes in proptest::collection::vec(proptest::bool::ANY, 0..6),
            waiting in proptest::bool::ANY,
            forged in proptest::collection::vec((1u32..8, proptest::bool::ANY, proptest::bool::ANY), 0..3),
        ) {
            let name = |ours: bool| if ours { "com.example.app" } else { "other" };
            let mut trace = String::from("Subject: Input dispatching timed out\n");
            for (index, (pid, ours, closed)) in forged.iter().enumerate() {
                trace.push_str(&format!("----- pid {pid} at x -----\nCmd line: {}\nforged-{index}\n", name(*ours)));
                if *closed {
                    trace.push_str(&format!("----- end {pid} -----\n"));
                }
            }
            trace.push_str("Build: x\n\nCPU usage from 0ms to 1ms later:\n  1% 1/init: 1% user\n\n");
            for (index, ours) in processes.iter().enumerate() {
                let pid = index + 1;
                trace.push_str(&format!("----- pid {pid} at x -----\nCmd line: {}\nreal-{pid}\n----- end {pid} -----\n", name(*ours)));
            }
            if waiting {
                for (index, ours) in processes.iter().enumerate() {
                    let pid = index + 1;
                    trace.push_str(&format!("----- Waiting Channels: pid {pid} at x -----\nCmd line: {}\nwchan-{pid}\n----- end {pid} -----\n", name(*ours)));
                }
            }
            let cut = cut_anr(&trace, AnrTarget { pid: None, process: Some("com.example.app") });
            proptest::prop_assert!(!cut.text.contains("1/init"), "{}", cut.text);
            let app = processes.iter().position(|ours| *ours).map(|index| index + 1);
            for pid in 1..=processes.len() {
                if Some(pid) != app {
                    proptest::prop_assert!(!cut.text.contains(&format!("real-{pid}\n")), "{}\n{}", trace, cut.text);
                    proptest::prop_assert!(!cut.text.contains(&format!("wchan-{pid}\n")), "{}\n{}", trace, cut.text);
                }
            }
            if let (true, Some(pid)) = (forged.is_empty(), app) {
                proptest::prop_assert_eq!(cut.pid, u32::try_from(pid).ok());
                let mark = format!("real-{pid}\n");
                proptest::prop_assert!(cut.text.contains(&mark), "{}", cut.text);
                proptest::prop_assert_eq!(cut.text.contains(&format!("wchan-{pid}\n")), waiting);
            }
        }
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
