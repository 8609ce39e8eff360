//! Every text a person or an agent reads from the gateway: questions, answers, rule names,
//! history steps and result messages. Keeping them in one place makes them ready for
//! translation, and keeps the history's words exactly the spec's.
//!
//! Rule names come from [`phonelogs_policy::names`], so a decision and its text agree.

use phonelogs_policy::{Rule, ScopeReason};

pub use phonelogs_policy::names;

/// The question asked on the first read of an app in a task: "Read the logs of Example?".
pub fn question(label: &str) -> String {
    format!("Read the logs of {label}?")
}

/// The label of an answer button.
pub fn answer_label(answer: crate::Answer) -> &'static str {
    match answer {
        crate::Answer::Once => "Allow once",
        crate::Answer::Task => "Allow for this task",
        crate::Answer::Always => "Always allow",
        crate::Answer::Deny => "Deny",
    }
}

/// The name of a rule, as results and history show it.
pub fn rule_name(rule: &Rule) -> String {
    rule.name().to_owned()
}

/// "Read 120 log lines of Example" (and "Read 1 log line of Example").
pub fn step_read_lines(count: usize, label: &str) -> String {
    if count == 1 {
        format!("Read 1 log line of {label}")
    } else {
        format!("Read {count} log lines of {label}")
    }
}

/// "Read 1 crash report of Example" (and "Read 3 crash reports of Example").
pub fn step_read_reports(count: usize, label: &str) -> String {
    if count == 1 {
        format!("Read 1 crash report of {label}")
    } else {
        format!("Read {count} crash reports of {label}")
    }
}

/// "Waiting for you: Read the logs of Example".
pub fn step_waiting(label: &str) -> String {
    format!("Waiting for you: Read the logs of {label}")
}

/// "Blocked by “Finance apps”: read the logs of My Bank".
pub fn step_blocked(rule: &str, label: &str) -> String {
    format!("Blocked by \u{201c}{rule}\u{201d}: read the logs of {label}")
}

/// "Outside the scope: read the logs of Example".
pub fn step_outside_scope(label: &str) -> String {
    format!("Outside the scope: read the logs of {label}")
}

/// "Denied: read the logs of Example" (the person answered Deny).
pub fn step_denied(label: &str) -> String {
    format!("Denied: read the logs of {label}")
}

/// "Could not read the logs of Example" (a device or argument error).
pub fn step_failed(label: &str) -> String {
    format!("Could not read the logs of {label}")
}

/// A debugging aid's step: "Used get_process_exit_history on Example".
pub fn step_debug(tool: &str, label: &str) -> String {
    format!("Used {tool} on {label}")
}

/// A debugging aid's failed step: "Could not use capture_native_backtrace on pid 1224".
pub fn step_debug_failed(tool: &str, subject: &str) -> String {
    format!("Could not use {tool} on {subject}")
}

/// Why a read is outside the scope, for the result's message.
pub fn scope_message(reason: ScopeReason, label: &str) -> String {
    match reason {
        ScopeReason::WatchOnly => format!(
            "Outside the scope: this agent may only watch the screen, and logs show more than the screen, so it cannot read the logs of {label}."
        ),
        ScopeReason::OutsideAgentScope => {
            format!("Outside the scope: {label} is not among the apps this agent may use.")
        }
        ScopeReason::OutsideTask => {
            format!("Outside the scope: {label} is not among this task's apps.")
        }
    }
}

/// The message of a blocked read.
pub fn blocked_message(rule: &str, label: &str) -> String {
    format!("Blocked by \u{201c}{rule}\u{201d}: the logs of {label} are never read.")
}

/// The message of a pending approval.
pub fn pending_message(label: &str, approval_id: &str) -> String {
    format!(
        "Waiting for the person to answer \u{201c}Read the logs of {label}?\u{201d}. Call again with approval_id \"{approval_id}\" to pick up the answer."
    )
}

/// The message of a denied read.
pub fn denied_message(rule: &str, label: &str) -> String {
    format!(
        "Denied: the person did not allow reading the logs of {label} (rule \u{201c}{rule}\u{201d})."
    )
}

/// The message of a read of log lines: how many, since when, and how many older ones were left
/// out.
pub fn lines_message(count: usize, label: &str, omitted: usize) -> String {
    let mut message = if count == 1 {
        format!("1 log line of {label}, oldest first.")
    } else {
        format!("{count} log lines of {label}, oldest first.")
    };
    if omitted == 1 {
        message.push_str(" 1 older line was left out; narrow with since, filter or level.");
    } else if omitted > 1 {
        message.push_str(&format!(
            " {omitted} older lines were left out; narrow with since, filter or level."
        ));
    }
    message
}

/// The message of a read of crash reports.
pub fn reports_message(count: usize, label: &str, cut: usize) -> String {
    let mut message = match count {
        0 => format!("No crash reports of {label} since then."),
        1 => format!("1 crash report of {label}."),
        n => format!("{n} crash reports of {label}, newest first."),
    };
    if cut > 0 {
        message.push_str(&format!(
            " {cut} of them were cut short to stay within 64 KB; ask with a smaller limit or a later since."
        ));
    }
    message
}

/// The error for a `since` that is none of the accepted forms.
pub fn since_error(given: &str) -> String {
    format!(
        "since {given:?} is not a time phonelogs understands. Use an RFC 3339 time (2026-11-30T10:00:00Z), a date and time on this computer's clock (2026-11-30 10:00 or 2026-11-30 10:00:05), a time of day on this computer's clock (10:00 or 10:00:05), or a duration back (10m, 2h, 1d)."
    )
}

/// The error for a limit out of range.
pub fn limit_error(kind: &str, given: u32, max: u32) -> String {
    format!("limit {given} is out of range for {kind}: use 1 to {max}.")
}

/// The error for an unknown level.
pub fn level_error(given: &str) -> String {
    format!("level {given:?} is not a level: use verbose, debug, info, warn, error or fatal.")
}

/// The error for an unknown kind.
pub fn kind_error(given: &str) -> String {
    format!("kind {given:?} is not a kind: use logs or crashes.")
}

/// The error for an approval used outside the call it was made for.
pub fn approval_mismatch(approval_id: &str) -> String {
    format!(
        "approval {approval_id:?} was asked for another task, agent, phone or app; it cannot be used for this call."
    )
}

/// The error for an approval id nobody made.
pub fn approval_unknown(approval_id: &str) -> String {
    format!("approval {approval_id:?} does not exist.")
}

/// The error for an approval whose task ended before the person answered.
pub fn approval_expired(approval_id: &str) -> String {
    format!("approval {approval_id:?} expired when its task ended; call again to ask anew.")
}

/// The error for an approval already used ("Allow once" covers one call).
pub fn approval_used(approval_id: &str) -> String {
    format!(
        "approval {approval_id:?} was for one call and has been used; call again without it to ask anew."
    )
}

/// The error for a task that has ended.
pub fn task_ended() -> String {
    "this task has ended; start a new one.".to_owned()
}

/// The error for an app that is not installed.
pub fn not_installed(app: &str, device: &str) -> String {
    format!("{app} is not installed on {device}.")
}

/// The error for a device nobody can reach.
pub fn no_such_device(device: &str) -> String {
    format!("no connected phone is called {device:?}; list the devices to see their ids.")
}

/// The error when no phone is connected.
pub fn no_device() -> String {
    "no phone is connected.".to_owned()
}

/// The error when several phones are connected and the call named none.
pub fn several_devices(ids: &[String]) -> String {
    format!(
        "several phones are connected ({}); name one with device.",
        ids.join(", ")
    )
}

/// The error for a device outside the task's devices.
pub fn device_outside_task(device: &str) -> String {
    format!("Outside the scope: the phone {device} is not among this task's devices.")
}

/// `get_process_exit_history`'s message.
pub fn exit_history_message(
    count: usize,
    package: &str,
    serial: &str,
    newest: Option<(&str, &str)>,
) -> String {
    match (count, newest) {
        (0, _) => format!("No exit records for {package} on {serial}."),
        (n, Some((reason, at))) => {
            format!("{n} exit records for {package} on {serial} (newest: {reason} at {at}).")
        }
        (n, None) => format!("{n} exit records for {package} on {serial}."),
    }
}

/// `set_debug_app`'s message.
pub fn set_debug_app_message(
    package: &str,
    serial: &str,
    wait_for_debugger: bool,
    persistent: bool,
) -> String {
    let mut notes = Vec::new();
    if wait_for_debugger {
        notes.push("waits for debugger on next launch");
    }
    if persistent {
        notes.push("persists across reboots");
    }
    if notes.is_empty() {
        format!("Set {package} as the debug app on {serial}.")
    } else {
        format!(
            "Set {package} as the debug app on {serial} ({}).",
            notes.join(", ")
        )
    }
}

/// `clear_debug_app`'s message.
pub fn clear_debug_app_message(serial: &str) -> String {
    format!("Cleared the debug app on {serial}.")
}

/// `list_jdwp_processes`'s message.
pub fn jdwp_message(pids: &[i64], serial: &str) -> String {
    let list: Vec<String> = pids.iter().map(i64::to_string).collect();
    format!(
        "{} JDWP-debuggable process(es) on {serial}: [{}].",
        pids.len(),
        list.join(", ")
    )
}

/// `capture_native_backtrace`'s message.
pub fn backtrace_message() -> String {
    "capture_native_backtrace completed successfully.".to_owned()
}

/// `capture_native_tombstone`'s message.
pub fn tombstone_message(pid: i64, serial: &str, path: &str) -> String {
    format!("Saved native tombstone for pid {pid} on {serial} to {path}.")
}

/// A debugging aid refused because the agent may not change the phone.
pub fn may_not_change_phone(tool: &str) -> String {
    format!("{tool} changes the phone, and this agent may only read or watch.")
}

/// A debugging aid refused because the process is not an app the agent may see.
pub fn unknown_process(pid: i64) -> String {
    format!(
        "pid {pid} is not a process of an app phonelogs can tell; it is treated as one of the phone's own."
    )
}

/// A debugging aid refused because the pid runs as one of the system's own uids.
pub fn system_process(pid: i64, uid: u32) -> String {
    format!(
        "pid {pid} runs as the system uid {uid}: it is one of the phone's own processes, whose dumps show other apps' data, so phonelogs does not debug it."
    )
}

/// A debugging aid refused because several packages share the pid's uid.
pub fn shared_uid_process(pid: i64, count: usize) -> String {
    format!(
        "pid {pid} runs as a uid that {count} packages share, so phonelogs cannot tell whose process it is; it is not debugged."
    )
}

/// A debugging aid refused because the driver cannot tell whose process a pid is.
pub fn owner_unknown(pid: i64) -> String {
    format!(
        "phonelogs cannot tell which app pid {pid} belongs to on this phone, so it is not debugged."
    )
}

/// The pid was reused between the policy check and the dump.
pub fn pid_changed(pid: i64) -> String {
    format!(
        "pid {pid} changed hands while it was being dumped, so the dump was dropped; look the pid up again."
    )
}

/// No local root configured for tombstones.
pub fn no_local_root() -> String {
    "no local_root is configured (--local-root, the config file or ADB_AUTOMATION_LOCAL_ROOT), so tombstones cannot be saved.".to_owned()
}

/// A `local_path` that escapes the local root or names a directory.
pub fn bad_local_path(local_path: &str, why: &str) -> String {
    format!(
        "local_path {local_path:?} is refused: {why}. Give a relative file path inside local_root/tombstones/, e.g. \"run1/sysui.txt\"."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_steps_are_the_specs_words() {
        assert_eq!(
            step_read_lines(120, "Example"),
            "Read 120 log lines of Example"
        );
        assert_eq!(
            step_read_reports(1, "Example"),
            "Read 1 crash report of Example"
        );
        assert_eq!(
            step_waiting("Example"),
            "Waiting for you: Read the logs of Example"
        );
        assert_eq!(
            step_blocked("Finance apps", "My Bank"),
            "Blocked by \u{201c}Finance apps\u{201d}: read the logs of My Bank"
        );
        assert_eq!(
            step_outside_scope("Example"),
            "Outside the scope: read the logs of Example"
        );
        assert_eq!(question("Example"), "Read the logs of Example?");
    }
}
