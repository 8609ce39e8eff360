//! A crash report's context: the app's own lines of its process in the seconds before it,
//! added under the report's text (`context: N` in a crashes call).

use phonelogs_driver::CrashReport;

use crate::masked::Piece;
use crate::render::render_line;

/// Adds under `report` the (masked) `lines` of its pid in the `seconds` (`window`) before it,
/// the newest that fit in the cap, rendered on the computer's clock; returns how many secrets
/// were masked in the lines added.
pub fn with_context(
    report: &mut CrashReport,
    lines: &[Piece<'_>],
    (seconds, window): (u32, time::Duration),
    (local, cap): (time::UtcOffset, usize),
) -> usize {
    let Some(pid) = report.pid else {
        return 0;
    };
    let from = report.time.checked_sub(window);
    let to = report.time.checked_add(time::Duration::SECOND);
    let before: Vec<&Piece<'_>> = lines
        .iter()
        .filter(|l| {
            let l = l.message();
            l.pid == Some(pid)
                && from.is_none_or(|from| l.time >= from)
                && to.is_none_or(|to| l.time < to)
        })
        .collect();
    // The newest lines that fit in the result cap: more could never be shown, and a phone's
    // lines (a message of thousands of line ends) must not be held in full.
    let mut rendered: Vec<String> = Vec::new();
    let mut bytes = 0usize;
    let mut masked = 0;
    for piece in before.iter().rev() {
        let shown = piece.to_line();
        let line = render_line(shown.line(), local).0;
        bytes += line.len() + 1;
        if bytes > cap {
            break;
        }
        masked += shown.masked();
        rendered.push(line);
    }
    let text = report.text.trim_end().to_owned();
    let count = if rendered.len() < before.len() {
        format!("the newest {} of {}", rendered.len(), before.len())
    } else {
        before.len().to_string()
    };
    let mut out = format!(
        "{text}\n--- {count} line{} of pid {pid} in the {seconds} s before ---\n",
        if before.len() == 1 { "" } else { "s" },
    );
    for line in rendered.iter().rev() {
        out.push_str(line);
        out.push('\n');
    }
    report.text = out;
    masked
}
