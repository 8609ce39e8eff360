//! The pure half of the driver: the commands it sends, and what it makes of their output (no
//! I/O here, so every rule is unit-tested on captured text), by what is read:
//!
//! - [`script`]: several commands in one adb round trip, and their outputs taken apart;
//! - [`facts`]: what the driver learns about an app once (its uid, other users, flags, version);
//! - [`lines`]: the app's log lines, every line's uid checked here;
//! - [`crashes`]: the app's crash reports, and whose a drop box entry is (`app_crashes`).

mod crashes;
mod facts;
mod lines;
mod script;
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod strategies;

pub(crate) use crashes::{
    DROPBOX_TAGS, DropBoxRead, EVIDENCE_WINDOW, FoundCrashes, Owner, app_crashes,
    crash_buffer_command, dropbox_commands,
};
pub(crate) use facts::{AppFacts, app_facts, current_user, uids_of};
pub(crate) use lines::{
    app_lines_and_foreign, line_text, logcat_command, logcat_lacks_uid_option, to_log_line,
};
pub(crate) use script::{Section, exit_code_text, new_marker, script, split_sections};
