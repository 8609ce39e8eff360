//! One adb round trip for several commands: the shell script that runs them with a marker
//! after each, and the split of its output into each command's output and exit code.

/// A fresh marker for the line that ends each command's output in a multi-command script,
/// followed by that command's exit code. Several commands share one shell, and so one adb round
/// trip. The marker changes every call, so an app that puts a marker-like line in its crash
/// message cannot move the boundaries between sections.
pub(crate) fn new_marker() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mixed = nanos ^ count.rotate_left(32) ^ u64::from(std::process::id()).rotate_left(16);
    format!("__PHONELOGS_{mixed:016x}__")
}

/// Joins already-quoted commands into one script whose output [`split_sections`] takes apart.
///
/// After each command the script prints the marker and its exit code (`cmd && echo M 0 || echo
/// M $?`): the exact code on a real shell, and still success or failure on the smallest shells
/// (the simulated phone's) that do not expand `$?`. The marker need not start a line: it is
/// unique per call.
pub(crate) fn script<S: AsRef<str>>(commands: &[S], marker: &str) -> String {
    let mut out = String::new();
    for command in commands {
        if !out.is_empty() {
            out.push_str("; ");
        }
        out.push_str(command.as_ref());
        out.push_str(&format!(" && echo {marker} 0 || echo {marker} $?"));
    }
    out
}

/// One command's output within a script, and whether it succeeded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Section<'a> {
    /// What the command printed.
    pub output: &'a [u8],
    /// 0 when it succeeded, 1 when it failed, `None` when the marker line was unreadable.
    pub exit_code: Option<i32>,
}

/// Splits the stdout of a script of `commands` commands into their outputs. A section whose
/// marker is missing (the device went away mid-script) is absent, so callers count what they
/// got.
///
/// The markers are found from the end, and no more than `commands` of them: a script's first
/// command is its big one (a whole dump) and the rest print a few lines, so the search stops
/// before the dump instead of reading it through (a forward search read all of it, about 0.5 ms
/// of a warm `phone_logs` on 2 MiB). The marker is unique per call and no output holds it, so
/// this is the forward split (a property test holds the two equal).
pub(crate) fn split_sections<'a>(
    stdout: &'a [u8],
    marker: &str,
    commands: usize,
) -> Vec<Section<'a>> {
    let marker = format!("{marker} ");
    let finder = memchr::memmem::FinderRev::new(marker.as_bytes());
    let mut found = Vec::with_capacity(commands);
    let mut end = stdout.len();
    while found.len() < commands {
        let Some(at) = finder.rfind(&stdout[..end]) else {
            break;
        };
        found.push(at);
        end = at;
    }
    let mut sections = Vec::with_capacity(found.len());
    let mut start = 0;
    for &at in found.iter().rev() {
        let (line_end, exit_code) = marker_line(&stdout[at + marker.len()..]);
        sections.push(Section {
            output: stdout.get(start..at).unwrap_or_default(),
            exit_code,
        });
        start = at + marker.len() + line_end + 1;
    }
    sections
}

/// The rest of a marker's line (after `marker `): its length before the `\n` (or the end) and
/// the exit code it prints.
fn marker_line(after: &[u8]) -> (usize, Option<i32>) {
    let line_end = memchr::memchr(b'\n', after).unwrap_or(after.len());
    let exit_code = std::str::from_utf8(&after[..line_end])
        .ok()
        .map(|code| exit_code_text(code.trim()));
    (line_end, exit_code)
}

/// An exit code as a marker line prints it: a number, or (from the failure branch of a shell
/// that did not expand `$?`) anything else, which is a failure.
pub(crate) fn exit_code_text(code: &str) -> i32 {
    code.parse().unwrap_or(1)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The forward split [`split_sections`] stands for: each marker searched after the last.
    fn split_sections_forward<'a>(stdout: &'a [u8], marker: &str) -> Vec<Section<'a>> {
        let marker = format!("{marker} ");
        let mut sections = Vec::new();
        let mut rest = stdout;
        while let Some(at) = memchr::memmem::find(rest, marker.as_bytes()) {
            let output = &rest[..at];
            let after = &rest[at + marker.len()..];
            let (line_end, exit_code) = marker_line(after);
            sections.push(Section { output, exit_code });
            rest = after.get(line_end + 1..).unwrap_or(&[]);
        }
        sections
    }

    proptest::proptest! {
        /// Any script's output (outputs of any bytes but the marker, each ended by a marker
        /// line with any code, cut off anywhere) splits the same from the end as from the start.
        #[test]
        fn sections_found_from_the_end_are_the_forward_ones(
            sections in proptest::collection::vec(
                (proptest::collection::vec(proptest::prop_oneof![
                    proptest::prelude::any::<u8>(), proptest::strategy::Just(b'\n'), proptest::strategy::Just(b'_'),
                ], 0..40), "[0-9$?x ]{0,4}"),
                0..6,
            ),
            cut in proptest::prelude::any::<proptest::sample::Index>(),
        ) {
            let m = "__PHONELOGS_SECTION__";
            let mut stdout = Vec::new();
            for (output, code) in &sections {
                stdout.extend_from_slice(output);
                stdout.extend_from_slice(format!("{m} {code}\n").as_bytes());
            }
            let stdout = &stdout[..cut.index(stdout.len() + 1)];
            proptest::prop_assert_eq!(
                split_sections(stdout, m, sections.len()),
                split_sections_forward(stdout, m)
            );
        }
    }

    #[test]
    fn sections_carry_their_exit_codes() {
        let m = "__PHONELOGS_SECTION__";
        let stdout = b"+0100\n__PHONELOGS_SECTION__ 0\npackage:a uid:1\n__PHONELOGS_SECTION__ 0\n__PHONELOGS_SECTION__ 1\n";
        let sections = split_sections(stdout, m, 3);
        assert_eq!(sections.len(), 3);
        assert_eq!(sections[0].output, b"+0100\n");
        assert_eq!(sections[1].output, b"package:a uid:1\n");
        assert_eq!(sections[2].output, b"");
        assert_eq!(sections[2].exit_code, Some(1));
        assert_eq!(
            split_sections(b"__PHONELOGS_SECTION__ $?\n", m, 1)[0].exit_code,
            Some(1)
        );
        // Output without a final newline.
        let sections = split_sections(b"x__PHONELOGS_SECTION__ 0\n", m, 1);
        assert_eq!(sections[0].output, b"x");
        // A cut-off script gives fewer sections.
        assert_eq!(
            split_sections(b"+0100\n__PHONELOGS_SECTION__ 0\npartial", m, 2).len(),
            1
        );
        let built = script(&["date +%z", "true"], m);
        assert_eq!(
            built,
            "date +%z && echo __PHONELOGS_SECTION__ 0 || echo __PHONELOGS_SECTION__ $?; true && echo __PHONELOGS_SECTION__ 0 || echo __PHONELOGS_SECTION__ $?"
        );
        assert_ne!(new_marker(), new_marker());
    }
}
