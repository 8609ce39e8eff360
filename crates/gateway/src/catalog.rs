//! Every text a person or an agent reads from the gateway: questions, answers, rule names,
//! history steps and result messages. Keeping them in one place makes them ready for
//! translation, and keeps the history's words exactly the spec's.
//!
//! Rule names come from [`phonelogs_policy::names`], so a decision and its text agree.

use phonelogs_driver::LogNotice;
use phonelogs_policy::{Action, Rule, ScopeReason};

pub use phonelogs_policy::names;

/// The question asked on the first read of an app in a task: "Read the logs of Example?".
pub fn question(label: &str) -> String {
    format!("Read the logs of {label}?")
}

/// What exactly a question is about, beyond the app: the pid of a backtrace or tombstone, the
/// file a tombstone goes to, the phone whose debug app is set.
#[derive(Debug, Clone, Copy, Default)]
pub struct Subject<'a> {
    /// The process, for a backtrace or a tombstone.
    pub pid: Option<i64>,
    /// Where a tombstone is saved, as the person will find it.
    pub path: Option<&'a str>,
    /// The phone.
    pub device: Option<&'a str>,
}

/// The question each action asks the person: its own words, so an answer is given knowing what
/// it allows ("Capture a native tombstone of Example (pid 1224)? It pauses the app briefly and
/// saves its memory map to /tmp/t/run1.txt.").
pub fn action_question(action: Action, label: &str, subject: Subject<'_>) -> String {
    let pid = subject
        .pid
        .map(|p| format!(" (pid {p})"))
        .unwrap_or_default();
    match action {
        Action::Logs => question(label),
        Action::ExitHistory => format!("Read the process exit history of {label}?"),
        Action::SetDebugApp => match subject.device {
            Some(device) => format!(
                "Make {label} the debug app on {device}? The app waits for or accepts a debugger when it starts."
            ),
            None => format!(
                "Make {label} the debug app? The app waits for or accepts a debugger when it starts."
            ),
        },
        Action::Backtrace => format!(
            "Capture a native backtrace of {label}{pid}? It shows the native call stack of every thread of the app."
        ),
        Action::Tombstone => match subject.path {
            Some(path) => format!(
                "Capture a native tombstone of {label}{pid}? It pauses the app briefly and saves its memory map to {path}."
            ),
            None => format!(
                "Capture a native tombstone of {label}{pid}? It pauses the app briefly and saves its memory map."
            ),
        },
    }
}

/// What an action does, for refusals and denials: "read the logs of Example", "capture a
/// native tombstone of Example".
pub fn action_phrase(action: Action, label: &str) -> String {
    match action {
        Action::Logs => format!("read the logs of {label}"),
        Action::ExitHistory => format!("read the process exit history of {label}"),
        Action::SetDebugApp => format!("make {label} the debug app"),
        Action::Backtrace => format!("capture a native backtrace of {label}"),
        Action::Tombstone => format!("capture a native tombstone of {label}"),
    }
}

/// The history step of an answer: "Answered “Allow for this task” in the agent's client:
/// Read the logs of Example?".
pub fn step_answered(answer: crate::Answer, via: crate::AnsweredVia, question: &str) -> String {
    let place = match via {
        crate::AnsweredVia::ClientDialog => "in the agent's client",
        crate::AnsweredVia::CommandLine => "on the person's side (phonelogs)",
        crate::AnsweredVia::Page => "on the person's page (phonelogs ui)",
    };
    format!(
        "Answered \u{201c}{}\u{201d} {place}: {question}",
        answer_label(answer)
    )
}

/// "Waiting for you: Read the logs of Example" (the question without its question mark and
/// without what follows it).
pub fn step_waiting_for(question: &str) -> String {
    let asked = question.split('?').next().unwrap_or(question);
    format!("Waiting for you: {asked}")
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
        ScopeReason::ReadOnly => format!(
            "Outside the scope: this agent may only read, and this changes the phone or writes a file, so it may not be done to {label}."
        ),
    }
}

/// The message of a blocked read.
pub fn blocked_message(rule: &str, label: &str) -> String {
    format!("Blocked by \u{201c}{rule}\u{201d}: the logs of {label} are never read.")
}

/// The message of a pending approval. It says that a person must answer and where they may
/// (the client's dialog, or their own side), never how: an agent is not told a command that
/// would answer its own question.
pub fn pending_message(question: &str, approval_id: &str) -> String {
    format!(
        "Waiting for a person to answer \u{201c}{question}\u{201d}. Only a person can answer it, in your client's dialog or on their own side; tell them it is waiting. Then call again with the same arguments and approval_id \"{approval_id}\" to pick up the answer."
    )
}

/// The message of a call whose question is not asked yet: as many questions as an agent may
/// have (`waiting`) wait for the person already, in any of its tasks; of its kind (its action
/// and app) when `of_kind`, else of any kind (the agent's whole allowance).
pub fn pending_capped(
    question: &str,
    waiting: usize,
    of_kind: bool,
    oldest: &str,
    approval_id: &str,
) -> String {
    let kind = question_kind(of_kind);
    format!(
        "Not asked yet: \u{201c}{question}\u{201d}. {waiting} questions {kind} already wait for a person (in this session or another of yours), the first \u{201c}{oldest}\u{201d} (approval_id \"{approval_id}\"). Only a person can answer them, in your client's dialog or on their own side; tell them they are waiting. Once they have answered, call again with the same arguments and no approval_id to ask this one."
    )
}

/// The message of a call a question cap stopped when the questions counting toward it were
/// left unanswered when their sessions ended (`until`: when the first stops counting);
/// `of_kind` as in [`pending_capped`].
pub fn questions_resting(question: &str, count: usize, of_kind: bool, until: &str) -> String {
    let kind = question_kind(of_kind);
    format!(
        "Not asked: \u{201c}{question}\u{201d}. {count} questions {kind} were left unanswered when its sessions ended, and count as waiting for a while so that reconnecting does not ask the person again and again. Call again after {until}."
    )
}

/// Which questions a cap counts, as the two messages above say it.
fn question_kind(of_kind: bool) -> &'static str {
    if of_kind {
        "of this kind from this agent"
    } else {
        "from this agent (as many as one agent may have at once)"
    }
}

/// The sentence of a read whose window reached before the installed development build was
/// installed (`at`, on the computer's clock): what is older is another build's, left out.
pub fn earlier_build_left_out(label: &str, at: &str, what: &str) -> String {
    format!(
        "{what} from before {at}, when this development build of {label} was installed, are left out: an earlier build wrote them (it may have been a release build, which asks the person). A person's \u{201c}Allow for this task\u{201d} or \u{201c}Always allow\u{201d} for this app shows them."
    )
}

/// As [`earlier_build_left_out`] on a phone that does not say when an app was installed (the
/// iPhone): `at` is when phonelogs first saw this build after another one.
pub fn earlier_build_left_out_seen(label: &str, at: &str, what: &str) -> String {
    format!(
        "{what} from before {at}, when phonelogs first saw this development build of {label} after another build (the phone does not say when it was installed), are left out: an earlier build may have written them (it may have been a release build, which asks the person). A person's \u{201c}Allow for this task\u{201d} or \u{201c}Always allow\u{201d} for this app shows them."
    )
}

/// On a development build's pass: `count` crash reports written by another build than the
/// installed one (`build`, its `CFBundleVersion`) were left out.
pub fn other_build_reports_left_out(label: &str, build: &str, count: usize) -> String {
    format!(
        "{} of another build of {label} than this development build ({build}) left out: it may have been a release build, which asks the person. A person's \u{201c}Allow for this task\u{201d} or \u{201c}Always allow\u{201d} for this app shows them.",
        plural(count, "crash report was", "crash reports were")
    )
}

/// The message of a denied read.
pub fn denied_message(rule: &str, label: &str) -> String {
    denied_action_message(Action::Logs, rule, label)
}

/// The message of a denied action.
pub fn denied_action_message(action: Action, rule: &str, label: &str) -> String {
    format!(
        "Denied: the person did not allow this agent to {} (rule \u{201c}{rule}\u{201d}).",
        action_phrase(action, label)
    )
}

/// A result cap as people say it: "64 KB" for whole kibibytes, else "5000 bytes".
pub fn cap_size(cap: usize) -> String {
    if cap.is_multiple_of(1024) {
        format!("{} KB", cap / 1024)
    } else {
        format!("{cap} bytes")
    }
}

/// The message of a read of log lines: how many are shown, how many older ones were left out,
/// and how many long lines were cut. Every count is of what the agent is shown.
pub fn lines_message(shown: usize, label: &str, left_out: usize, cut: usize) -> String {
    let mut message = if shown == 1 {
        format!("1 log line of {label}, oldest first.")
    } else {
        format!("{shown} log lines of {label}, oldest first.")
    };
    if left_out == 1 {
        message.push_str(" 1 older line was left out; narrow with since, filter or level.");
    } else if left_out > 1 {
        message.push_str(&format!(
            " {left_out} older lines were left out; narrow with since, filter or level."
        ));
    }
    if cut == 1 {
        message.push_str(" 1 line longer than 2,000 bytes was cut.");
    } else if cut > 1 {
        message.push_str(&format!(" {cut} lines longer than 2,000 bytes were cut."));
    }
    message
}

/// A driver's notice about a read of `label`'s lines ([`phonelogs_driver::LogNotice`]), as a
/// sentence of the message: why lines may be missing and what fixes it, that the app is not
/// running, or why values show as `<private>`. `marked` is how many of the lines shown hold a
/// [`LogNotice::Redacted`] marker; that notice says nothing when none does, so its count is
/// always of what is shown.
pub fn log_notice(notice: &LogNotice, label: &str, marked: usize) -> Option<String> {
    match notice {
        LogNotice::Unreadable { cause, fix } => Some(format!(
            "New lines of {label} cannot be read now: {cause}. To fix it: {fix}."
        )),
        LogNotice::PartlyUnreadable { part, cause, fix } => Some(format!(
            "Lines of the {part} of {label} cannot be read: {cause}. To read them: {fix}."
        )),
        LogNotice::NotRunning => Some(format!(
            "{label} is not running on the phone now, so no new line of it can come: launch it, then read again."
        )),
        LogNotice::Redacted { marker, why, fix } => match marked {
            0 => None,
            1 => Some(format!(
                "1 of the lines shown holds {marker}: {why}. To show those values: {fix}."
            )),
            n => Some(format!(
                "{n} of the lines shown hold {marker}: {why}. To show those values: {fix}."
            )),
        },
        _ => None,
    }
}

/// The message of a read of crash reports: how many are shown (each with its heading), how
/// many texts were cut short or show only their first line, and how many older reports did not
/// fit at all, within the result cap `cap`.
pub fn reports_message(
    shown: usize,
    label: &str,
    cut_short: usize,
    first_lines: usize,
    left_out: usize,
    cap: usize,
) -> String {
    let mut message = match shown {
        0 if left_out == 0 => format!("No crash reports of {label} since then."),
        0 => format!("No crash report of {label} fits."),
        1 => format!("1 crash report of {label}."),
        n => format!("{n} crash reports of {label}, newest first."),
    };
    let mut parts = Vec::new();
    match cut_short {
        0 => {}
        1 => parts.push("1 text was cut short".to_owned()),
        n => parts.push(format!("{n} texts were cut short")),
    }
    match first_lines {
        0 => {}
        1 => parts.push("1 shows only its first line".to_owned()),
        n => parts.push(format!("{n} show only their first line")),
    }
    match left_out {
        0 => {}
        1 => parts.push("1 older report was left out".to_owned()),
        n => parts.push(format!("{n} older reports were left out")),
    }
    if !parts.is_empty() {
        message.push_str(&format!(
            " {} to stay within {}; ask with a smaller limit or a later since.",
            upper_first(&parts.join(", ")),
            cap_size(cap)
        ));
    }
    message
}

fn upper_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The error for a `since` that is none of the accepted forms.
pub fn since_error(given: &str) -> String {
    format!(
        "since {given:?} is not a time phonelogs understands. Use an RFC 3339 time (2026-11-30T10:00:00Z), a date and time on this computer's clock (2026-11-30 10:00 or 2026-11-30 10:00:05), a time of day on this computer's clock (10:00 or 10:00:05), or a duration back (10m, 2h, 1d); or \"last\" or \"cursor:<value>\" (a result's cursor) for only what came after the last line shown."
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

/// The error for a `filter` or `exclude` longer than `max` bytes.
pub fn pattern_too_long(argument: &str, max: usize) -> String {
    format!("invalid argument: {argument} is longer than {max} bytes; use a shorter pattern.")
}

/// The error for a `/…/` pattern that is not a regular expression phonelogs accepts.
pub fn pattern_error(argument: &str, given: &str, error: &str) -> String {
    let error = error.replace('\n', " ");
    let error = error.split_whitespace().collect::<Vec<_>>().join(" ");
    format!(
        "invalid argument: {argument} {given:?} is not a regular expression phonelogs accepts (Rust regex syntax, no look-around or backreferences, within its size limits): {error}"
    )
}

/// The view's refusal of an argument (`since`, `filter`, `exclude`, `tag`) in the agent's words.
pub fn view_error(error: &phonelogs_view::ViewError) -> String {
    use phonelogs_view::ViewError;
    match error {
        ViewError::Since { given } => since_error(given),
        ViewError::PatternTooLong { argument, max } => pattern_too_long(argument, *max),
        ViewError::Pattern {
            argument,
            given,
            reason,
        } => pattern_error(argument, given, reason),
        ViewError::TooManyTags { given, max } => too_many_tags(*given, *max),
        ViewError::TagTooLong { given, max } => tag_too_long(*given, *max),
    }
}

/// The error for a `tag` list that names more than `max` tags.
pub fn too_many_tags(given: usize, max: usize) -> String {
    format!("invalid argument: tag lists {given} tags; list at most {max}.")
}

/// The error for a tag in `tag` longer than `max` bytes.
pub fn tag_too_long(given: usize, max: usize) -> String {
    format!("invalid argument: a tag in tag is {given} bytes long; tags are at most {max}.")
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

/// The error for a bare serial that several sources (adb servers, usbmuxd addresses) show:
/// `names` are the phones it could mean, each named with its source.
pub fn ambiguous_device(names: &[String]) -> String {
    format!(
        "several phones have that id ({}); name one of them, with its server, in device.",
        names.join(", ")
    )
}

/// The error for a device outside the task's devices.
pub fn device_outside_task(device: &str) -> String {
    format!("Outside the scope: the phone {device} is not among this task's devices.")
}

/// `get_process_exit_history`'s message; `left_out` records of another user's copy of the app
/// (or of no owner the phone named) were not returned, and the agent is told how many.
pub fn exit_history_message(
    count: usize,
    package: &str,
    serial: &str,
    newest: Option<(&str, &str)>,
    left_out: usize,
) -> String {
    let found = match (count, newest) {
        (0, _) => format!("No exit records for {package} on {serial}."),
        (n, Some((reason, at))) => {
            format!("{n} exit records for {package} on {serial} (newest: {reason} at {at}).")
        }
        (n, None) => format!("{n} exit records for {package} on {serial}."),
    };
    match left_out {
        0 => found,
        1 => format!(
            "{found} 1 record was left out: it belongs to another user's copy of the app, or the phone did not say whose it is."
        ),
        n => format!(
            "{found} {n} records were left out: they belong to another user's copy of the app, or the phone did not say whose they are."
        ),
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

/// `capture_native_backtrace`'s message; `cut` is `(shown, total)` bytes of its text when the
/// result cap cut it.
pub fn backtrace_message(cut: Option<(usize, usize)>) -> String {
    match cut {
        None => "capture_native_backtrace completed successfully.".to_owned(),
        Some((shown, total)) => format!(
            "capture_native_backtrace completed successfully. Its text was cut to its first {shown} of {total} bytes to stay within the result cap."
        ),
    }
}

/// `list_devices`' message.
pub fn devices_message(count: usize) -> String {
    match count {
        0 => "No device is connected.".to_owned(),
        1 => "1 device.".to_owned(),
        n => format!("{n} devices."),
    }
}

/// `list_devices`' message when the devices could not be listed.
pub fn devices_error(error: &str) -> String {
    format!("Could not list devices: {error}")
}

/// `capture_native_tombstone`'s message.
pub fn tombstone_message(pid: i64, serial: &str, path: &str) -> String {
    format!("Saved native tombstone for pid {pid} on {serial} to {path}.")
}

/// A debugging aid refused because the agent may not change the phone.
pub fn may_not_change_phone(tool: &str) -> String {
    format!("{tool} changes the phone, and this agent may only read or watch.")
}

/// A debugging aid refused because the pid is not a process of an app this agent may debug:
/// one of the phone's own, one whose uid several packages share, another app outside the scope
/// or blocked. One message for all of them, naming neither the process nor its uid, so a refusal
/// tells the agent nothing of another app.
pub fn pid_refused(pid: i64) -> String {
    format!(
        "pid {pid} is not a process of an app this agent may debug in this task, so phonelogs does not touch it. Give the pid of the app under test."
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

/// An app that shares its uid with other packages: its lines cannot be told apart from theirs.
pub fn shared_uid_message(label: &str) -> String {
    format!(
        "{label} shares its uid with other packages (sharedUserId), so its own lines and reports cannot be told apart from theirs; phonelogs does not read it."
    )
}

/// The history step of a pid that is another user's copy of the app (a clone, a work profile):
/// never debugged as the app.
pub fn step_other_copy(pid: i64, label: &str) -> String {
    format!("Not debugged: pid {pid} is another user's copy of {label}")
}

/// The state store could not be read or written: the call is refused rather than guessed.
pub fn state_unreadable(error: &dyn std::fmt::Display) -> String {
    format!("phonelogs could not read or write its state, so nothing was done: {error}")
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

/// What a crashes message adds when the driver left reports out because it could not confirm
/// they are this copy's of the app: an Android 10 phone where another user has the app too, a
/// drop box entry that names the app only in a header another app can write (its
/// `versionName`, its process name), or one that cannot be told apart from text inside another
/// app's compressed report.
/// Nothing when none was left out.
pub fn unconfirmed_reports(unconfirmed: usize, label: &str) -> Option<String> {
    match unconfirmed {
        0 => None,
        1 => Some(format!(
            "1 crash report was left out: the phone could not confirm it is {label}'s own (it may be the app's copy in another user's profile, another app's report naming it where that app chose the text, or text shaped like a report inside another app's)."
        )),
        n => Some(format!(
            "{n} crash reports were left out: the phone could not confirm they are {label}'s own (they may be the app's copy in another user's profile, another app's report naming it where that app chose the text, or text shaped like a report inside another app's)."
        )),
    }
}

// --- Live reads: cursors and waits. ---

/// The agent name the history records for the person's own reads (`phonelogs logs`).
/// No agent may take it (`phonelogs_policy::Agent::check_name`).
pub const PERSON_READER: &str = phonelogs_policy::names::PERSON;

/// The error for a cursor this task was never given (another task's, or altered).
pub fn cursor_unknown() -> String {
    "That cursor was not given to this task (it is another task's or agent's, or it was altered). Use since: \"last\", a time, or a cursor this task's results returned.".to_owned()
}

/// The error for a cursor given for another app or phone.
pub fn cursor_elsewhere(app: &str, device: &str) -> String {
    format!(
        "That cursor is for {app} on {device}, not for this app and phone. Use since: \"last\" or a cursor of this app's results."
    )
}

/// The error for `since: "last"` or a cursor with kind crashes.
pub fn place_for_crashes() -> String {
    "since \"last\" and cursors are for kind logs; for crash reports use a time, or wait_for: \"crash\" for the next one.".to_owned()
}

/// The error for a `timeout` out of range.
pub fn timeout_error(given: u32, max: u32) -> String {
    format!("timeout {given} is out of range: use 1 to {max} seconds (10 by default).")
}

/// The error for a `timeout` without `wait_for`.
pub fn timeout_without_wait() -> String {
    "timeout applies only with wait_for; add wait_for or leave timeout out.".to_owned()
}

/// The error for `wait_for` with kind crashes and another text than `crash`.
pub fn crash_wait_error(given: &str) -> String {
    format!(
        "wait_for {given:?} cannot be waited for with kind crashes: use wait_for: \"crash\" (the app's next crash report)."
    )
}

/// The sentence added when the awaited text came, or did not.
pub fn wait_outcome(matched: bool, wait_for: &str, seconds: u32, cancelled: bool) -> String {
    if matched {
        format!("The awaited {wait_for:?} came; the lines end with it.")
    } else if cancelled {
        format!("The wait for {wait_for:?} was cancelled; this is what came before.")
    } else {
        format!(
            "No line with {wait_for:?} came within {seconds} s (matched: false); this is what came."
        )
    }
}

/// The sentence added when the awaited crash report came, or did not.
pub fn crash_wait_outcome(matched: bool, seconds: u32, cancelled: bool) -> String {
    if matched {
        "A new crash report came.".to_owned()
    } else if cancelled {
        "The wait for a crash report was cancelled.".to_owned()
    } else {
        format!("No new crash report came within {seconds} s (matched: false).")
    }
}

/// A progress notification's message while waiting.
pub fn wait_progress(seconds: u64, count: usize) -> String {
    format!(
        "Waiting: {seconds} s, {} so far.",
        plural(count, "new line", "new lines")
    )
}

/// The sentence for a phone that restarted since the cursor's read.
pub fn rebooted(label: &str) -> String {
    format!(
        "The phone restarted since the last read: lines {label} logged between that read and the restart are gone; what follows is from after the restart."
    )
}

/// The sentence for a phone whose clock moved since the cursor's read.
pub fn clock_moved(seconds: i64) -> String {
    let way = if seconds < 0 { "back" } else { "forward" };
    format!(
        "The phone's clock moved {way} by about {} s since the last read, so lines are read from the cursor's place moved by as much; some lines around the change may repeat or be missing.",
        seconds.unsigned_abs()
    )
}

/// The sentence for a buffer that wrapped past the cursor: lines may be lost, how many is
/// not known. It never names the time of the buffer's oldest line, which may be another app's.
pub fn buffer_wrapped(since: &str) -> String {
    format!(
        "The phone's log buffer no longer holds lines from {since}: some lines logged after it may be lost (how many is not known)."
    )
}

/// The sentence for a cursor whose last lines are no longer where they were.
pub fn cursor_lines_gone() -> String {
    "The lines at the cursor's place are no longer on the phone (its buffer wrapped): some lines after it may be lost; how many is not known.".to_owned()
}

/// The history step of the person's own read.
pub fn step_person_read(count: usize, label: &str) -> String {
    format!(
        "You read {} of {label}",
        plural(count, "log line", "log lines")
    )
}

// --- What a result shows besides the lines: folds, masks, process markers. ---

/// The sentence for repeats folded into rows: `lines` log lines shown as `rows` rows.
pub fn folded_sentence(repeats: usize) -> Option<String> {
    (repeats > 0).then(|| {
        format!(
            "{} folded into the line before (shown as \u{201c}(\u{d7}N until \u{2026})\u{201d}; fold: false shows each).",
            plural(repeats, "repeat was", "repeats were")
        )
    })
}

/// The sentence for lines shown with characters that hide or turn text around written out.
pub fn hidden_sentence(lines: usize) -> Option<String> {
    (lines > 0).then(|| {
        format!(
            "{} bidirectional or zero-width characters, written out as \\u{{…}} (as they would mislead a reader).",
            plural(lines, "line held", "lines held")
        )
    })
}

/// The sentence for the secrets masked in what is shown.
pub fn masked_sentence(count: usize) -> Option<String> {
    (count > 0).then(|| {
        format!(
            "{} in what is shown {} masked as [redacted:KIND] (only the person can turn masking off).",
            plural(count, "secret", "secrets"),
            if count == 1 { "was" } else { "were" }
        )
    })
}

/// The sentence for an app whose secrets the person chose to show.
pub fn unmasked_sentence(label: &str) -> String {
    format!("Secrets are not masked: the person turned masking off for {label}.")
}

/// The sentence, once per result, for reports whose frames look obfuscated or unsymbolicated
/// while no symbols directory is set.
pub fn no_symbols_sentence(reports: usize) -> Option<String> {
    (reports > 0).then(|| {
        format!(
            "No symbols directory: {} obfuscated or unsymbolicated frames of the app; the person can file the build's mapping or libraries (phonelogs symbols add) and start the server with --symbols DIR.",
            plural(reports, "report shows", "reports show")
        )
    })
}

/// The history step of the person turning masking off for an app.
pub fn step_unmasked(app: &str, via: crate::AnsweredVia) -> String {
    format!(
        "You turned off the masking of secrets in the logs of {app}{}",
        via_words(via)
    )
}

/// The history step of the person turning masking back on for an app.
pub fn step_masked(app: &str, via: crate::AnsweredVia) -> String {
    format!(
        "You turned the masking of secrets back on for {app}{}",
        via_words(via)
    )
}

fn via_words(via: crate::AnsweredVia) -> &'static str {
    match via {
        crate::AnsweredVia::CommandLine => " (on the command line)",
        crate::AnsweredVia::Page => " (on your page)",
        crate::AnsweredVia::ClientDialog => " (in a client's dialog)",
    }
}

/// The agent the history names for the person's own settings (masking).
pub const PERSON_SETTINGS: &str = "you";

fn plural(count: usize, one: &str, many: &str) -> String {
    if count == 1 {
        format!("1 {one}")
    } else {
        format!("{count} {many}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unconfirmed_reports_are_counted_in_words() {
        assert_eq!(unconfirmed_reports(0, "Example"), None);
        assert_eq!(
            unconfirmed_reports(1, "Example").as_deref(),
            Some(
                "1 crash report was left out: the phone could not confirm it is Example's own (it may be the app's copy in another user's profile, another app's report naming it where that app chose the text, or text shaped like a report inside another app's)."
            )
        );
        assert!(
            unconfirmed_reports(3, "Example")
                .is_some_and(|m| m.starts_with("3 crash reports were left out"))
        );
    }

    #[test]
    fn exit_records_left_out_are_counted_in_words() {
        let plain = exit_history_message(2, "a.b", "emulator-5554", None, 0);
        assert_eq!(plain, "2 exit records for a.b on emulator-5554.");
        let one = exit_history_message(2, "a.b", "emulator-5554", None, 1);
        assert!(
            one.starts_with(&plain) && one.contains("1 record was left out"),
            "{one}"
        );
        let none_left = exit_history_message(0, "a.b", "emulator-5554", None, 3);
        assert!(none_left.contains("3 records were left out"), "{none_left}");
    }

    #[test]
    fn a_since_error_names_the_forms() {
        let error = view_error(&phonelogs_view::ViewError::Since {
            given: "yesterday".to_owned(),
        });
        for form in ["RFC 3339", "10m, 2h, 1d", "time of day", "date and time"] {
            assert!(error.contains(form), "{error}");
        }
    }

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
