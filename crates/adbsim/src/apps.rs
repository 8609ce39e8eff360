//! The commands of installed apps: `adb install` (adb 29's streamed install,
//! `exec:cmd package install -S <size>` followed by the APK's bytes), `pm uninstall`,
//! `am start -W`, `uiautomator dump` (the file it writes is read by `cat` in `procfs.rs`), and
//! `input tap` on the app's buttons. Part of the commands layer: `commands::run`'s table names
//! them; they change the model (`phone.rs`: the apps' screen and files) and nothing above.
//!
//! An APK's manifest and string resources are read with [`crate::apk`]; its code is not run. The
//! phone knows one app's behaviour, Crash Test's (`crashtest/` in the workspace): its screen has
//! the buttons `:id/crash` and `:id/hang`; launching it logs its `start_line` under its `log_tag`;
//! Crash throws `IllegalStateException(crash_message)` (the crash scenario action); Hang logs its
//! `hang_line` and blocks the main thread, and the next input event becomes an ANR 5 s later (the
//! hang scenario action). Every text comes from the installed APK's `strings` resources, so the
//! phone says what the app would say.

use std::fmt::Write as _;
use std::time::Duration;

use crate::apk::{self, ApkInfo};
use crate::model::{AndroidVersion, Package, Priority};
use crate::phone::{Request, SimPhone};
use crate::sink::{Closed, Sink};

/// The largest APK the simulated phone accepts.
pub(crate) const MAX_APK_BYTES: u64 = 256 * 1024 * 1024;
/// How long Android waits for an input event before it calls the app not responding.
const INPUT_DISPATCH_TIMEOUT: Duration = Duration::from_secs(5);
/// Where `uiautomator dump` writes when it is given no file.
const DEFAULT_DUMP: &str = "/sdcard/window_dump.xml";

/// Words of a command line as adb quotes them (`'word'`, `'\''` for a quote).
fn words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quoted = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                quoted = !quoted;
                in_word = true;
            }
            '\\' if !quoted => {
                if let Some(next) = chars.next() {
                    word.push(next);
                }
                in_word = true;
            }
            ' ' | '\t' | '\n' if !quoted => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            other => {
                word.push(other);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// `exec:cmd package install … -S <size>` (or the same through `shell:`): a streamed install,
/// as its command line and the APK's size.
pub(crate) fn streamed_install(service: &str) -> Option<(String, u64)> {
    let command = service.strip_prefix("exec:").or_else(|| {
        service
            .strip_prefix("shell")
            .map(|rest| rest.split_once(':').map_or("", |(_, c)| c))
    })?;
    let args = words(command);
    let rest = match args.as_slice() {
        [cmd, package, install, rest @ ..]
            if cmd == "cmd" && package == "package" && install == "install" =>
        {
            rest
        }
        [pm, install, rest @ ..] if pm == "pm" && install == "install" => rest,
        _ => return None,
    };
    let size = rest
        .iter()
        .position(|arg| arg == "-S")
        .and_then(|at| rest.get(at + 1))
        .and_then(|size| size.parse::<u64>().ok())?;
    Some((command.to_string(), size))
}

/// The package manager's answer to a streamed install, after the APK's bytes arrived.
pub(crate) async fn install(
    phone: &SimPhone,
    command: &str,
    apk_bytes: &[u8],
    size: u64,
    sink: &Sink,
) -> u8 {
    phone.record(Request::Command(command.to_string()));
    let answer = install_answer(phone, command, apk_bytes, size);
    let code = u8::from(!answer.starts_with("Success"));
    match sink.out(answer).await {
        Ok(()) => code,
        Err(Closed) => 1,
    }
}

fn install_answer(phone: &SimPhone, command: &str, apk_bytes: &[u8], size: u64) -> String {
    if size > MAX_APK_BYTES {
        return "Failure [INSTALL_FAILED_INSUFFICIENT_STORAGE]\n".to_string();
    }
    if apk_bytes.len() as u64 != size {
        return format!(
            "Failure [INSTALL_FAILED_INVALID_APK: expected {size} bytes, got {}]\n",
            apk_bytes.len()
        );
    }
    let replace = words(command).iter().any(|arg| arg == "-r");
    let info = match apk::parse_apk(apk_bytes) {
        Ok(info) => info,
        Err(crate::Error::Apk { code, reason }) => {
            return format!("Failure [{code}: Failed to parse base.apk: {reason}]\n");
        }
        Err(error) => return format!("Failure [INSTALL_FAILED_INTERNAL_ERROR: {error}]\n"),
    };
    let name = info.package.clone();
    let existing = phone.lock().package(&name).cloned();
    if existing.is_some() && !replace {
        return format!(
            "Failure [INSTALL_FAILED_ALREADY_EXISTS: Attempt to re-install {name} without first uninstalling.]\n"
        );
    }
    // A replaced package keeps its uid; a new one gets the next free app id.
    let app_id = existing.as_ref().map(|old| old.app_id).unwrap_or_else(|| {
        let state = phone.lock();
        state
            .packages
            .iter()
            .map(|package| package.app_id)
            .filter(|id| (10_000..20_000).contains(id))
            .max()
            .map_or(10_001, |id| id + 1)
    });
    let mut package = Package::new(&name, app_id);
    // `install -r` replaces the APK, and with it the flags (a release build over a debug build
    // is no longer DEBUGGABLE), but keeps the uid and the users it is installed for.
    if let Some(old) = &existing {
        package.users.clone_from(&old.users);
    }
    package.debuggable = info.debuggable;
    package.version_code = info.version_code;
    if let Some(version) = &info.version_name {
        package.version_name = version.clone();
    }
    package.target_sdk = info.target_sdk.unwrap_or(1);
    if let Some(activity) = &info.launcher_activity {
        package.main_activity = match activity.strip_prefix(&name) {
            Some(short) if short.starts_with('.') => short.to_string(),
            _ => activity.clone(),
        };
    }
    // Replacing a package stops its process, as the package manager does.
    phone.stop_package(&name);
    phone.install(package);
    phone.lock().apps.models.insert(name, info);
    "Success\n".to_string()
}

pub(crate) async fn uninstall(
    phone: &SimPhone,
    args: &[String],
    sink: &Sink,
) -> Result<u8, Closed> {
    let mut package = None;
    let mut skip_value = false;
    for arg in args {
        if skip_value {
            skip_value = false;
        } else if arg == "--user" || arg == "--versionCode" {
            skip_value = true;
        } else if !arg.starts_with('-') {
            package = Some(arg.clone());
        }
    }
    let Some(package) = package else {
        sink.err("Error: package name not specified\n").await?;
        return Ok(1);
    };
    let removed = {
        let mut state = phone.lock();
        let before = state.packages.len();
        state.packages.retain(|installed| installed.name != package);
        state.apps.models.remove(&package);
        state.packages.len() != before
    };
    if !removed {
        sink.out("Failure [DELETE_FAILED_INTERNAL_ERROR]\n").await?;
        return Ok(1);
    }
    phone.stop_package(&package);
    sink.out("Success\n").await?;
    Ok(0)
}

/// The package's model (what its APK said), if it was installed from an APK.
fn model(phone: &SimPhone, package: &str) -> Option<ApkInfo> {
    phone.lock().apps.models.get(package).cloned()
}

fn text(info: &ApkInfo, name: &str) -> Option<String> {
    info.strings.get(name).cloned()
}

pub(crate) async fn am_start(phone: &SimPhone, args: &[String], sink: &Sink) -> Result<u8, Closed> {
    let mut wait = false;
    let mut component = None;
    let mut index = 0;
    while index < args.len() {
        match args[index].as_str() {
            "-W" => wait = true,
            "-S" | "-D" | "-N" | "--activity-clear-task" | "--activity-new-task" => {}
            "-n" => {
                index += 1;
                component = args.get(index).cloned();
            }
            // Options with a value the simulator does not use.
            option if option.starts_with('-') => index += 1,
            _ => {}
        }
        index += 1;
    }
    let Some(component) = component else {
        sink.err("Error: Intent does not match any activities\n")
            .await?;
        return Ok(1);
    };
    let (package, class) = component
        .split_once('/')
        .unwrap_or((component.as_str(), ""));
    let class = match class.strip_prefix(package) {
        Some(short) if short.starts_with('.') => short,
        _ => class,
    };
    let known = phone
        .lock()
        .package(package)
        .is_some_and(|installed| installed.main_activity == class || class.is_empty());
    sink.out(format!("Starting: Intent {{ cmp={component} }}\n"))
        .await?;
    if !known {
        sink.err(format!(
            "Error type 3\nError: Activity class {{{component}}} does not exist.\n"
        ))
        .await?;
        return Ok(1);
    }
    let cold = phone.pid_of(package).is_none();
    phone.forget_screen(package);
    if phone.launch(package).is_err() {
        sink.err(format!(
            "Error: Activity class {{{component}}} does not exist.\n"
        ))
        .await?;
        return Ok(1);
    }
    if let Some(info) = model(phone, package) {
        let tag = text(&info, "log_tag").unwrap_or_else(|| package.to_string());
        if let Some(line) = text(&info, "start_line") {
            let _ = phone.log(package, Priority::Info, &tag, &line);
        }
    }
    phone.lock().apps.foreground = Some(package.to_string());
    if wait {
        let mut out = String::from("Status: ok\n");
        let android10 = phone.profile().android == AndroidVersion::Android10;
        if !android10 {
            let _ = writeln!(out, "LaunchState: {}", if cold { "COLD" } else { "WARM" });
        }
        let _ = writeln!(out, "Activity: {component}");
        if android10 {
            out.push_str("ThisTime: 412\n");
        }
        out.push_str("TotalTime: 412\nWaitTime: 418\nComplete\n");
        sink.out(out).await?;
    }
    Ok(0)
}

/// A node of a simulated screen: `(text, resource-id, class, clickable, bounds)`.
type Node = (String, String, &'static str, bool, [i32; 4]);

/// What is on screen: the foreground app's activity, else the home screen.
fn screen(phone: &SimPhone) -> (String, Vec<Node>) {
    let foreground = phone.lock().apps.foreground.clone();
    let Some(package) = foreground else {
        return ("com.android.launcher3".to_string(), Vec::new());
    };
    let info = model(phone, &package);
    let get = |name: &str| {
        info.as_ref()
            .and_then(|info| text(info, name))
            .unwrap_or_default()
    };
    let mut nodes = vec![(
        get("app_name"),
        String::new(),
        "android.widget.TextView",
        false,
        [42, 105, 319, 168],
    )];
    // Crash Test's layout (`crashtest/res/layout/main.xml`) on a 1080x1920 screen.
    if info
        .as_ref()
        .is_some_and(|info| info.strings.contains_key("crash_button"))
    {
        nodes.push((
            get("explanation"),
            format!("{package}:id/explanation"),
            "android.widget.TextView",
            false,
            [63, 273, 1017, 390],
        ));
        nodes.push((
            get("crash_button"),
            format!("{package}:id/crash"),
            "android.widget.Button",
            true,
            [63, 453, 1017, 579],
        ));
        nodes.push((
            get("hang_button"),
            format!("{package}:id/hang"),
            "android.widget.Button",
            true,
            [63, 642, 1017, 768],
        ));
    }
    (package, nodes)
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
        .replace('\n', "&#10;")
}

fn node_xml(
    out: &mut String,
    index: usize,
    (text, id, class, clickable, b): &Node,
    package: &str,
    open: bool,
) {
    let _ = write!(
        out,
        "<node index=\"{index}\" text=\"{}\" resource-id=\"{id}\" class=\"{class}\" package=\"{package}\" content-desc=\"\" checkable=\"false\" checked=\"false\" clickable=\"{clickable}\" enabled=\"true\" focusable=\"{clickable}\" focused=\"false\" scrollable=\"false\" long-clickable=\"false\" password=\"false\" selected=\"false\" bounds=\"[{},{}][{},{}]\"{}",
        escape(text),
        b[0],
        b[1],
        b[2],
        b[3],
        if open { ">" } else { " />" }
    );
}

/// The screen as `uiautomator dump` writes it (AOSP `AccessibilityNodeInfoDumper`).
fn dump_xml(package: &str, nodes: &[Node]) -> String {
    let frame = |bounds: [i32; 4]| {
        (
            String::new(),
            String::new(),
            "android.widget.FrameLayout",
            false,
            bounds,
        )
    };
    let mut out = String::from(
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">",
    );
    node_xml(&mut out, 0, &frame([0, 0, 1080, 1920]), package, true);
    if let Some((title, content)) = nodes.split_first() {
        node_xml(
            &mut out,
            0,
            &(
                String::new(),
                String::new(),
                "android.widget.LinearLayout",
                false,
                [0, 63, 1080, 1794],
            ),
            package,
            true,
        );
        node_xml(
            &mut out,
            0,
            &(
                String::new(),
                "android:id/action_bar_container".into(),
                "android.widget.FrameLayout",
                false,
                [0, 63, 1080, 210],
            ),
            package,
            true,
        );
        node_xml(
            &mut out,
            0,
            &(
                String::new(),
                "android:id/action_bar".into(),
                "android.view.ViewGroup",
                false,
                [0, 63, 1080, 210],
            ),
            package,
            true,
        );
        node_xml(&mut out, 0, title, package, false);
        out.push_str("</node></node>");
        node_xml(
            &mut out,
            1,
            &(
                String::new(),
                "android:id/content".into(),
                "android.widget.FrameLayout",
                false,
                [0, 210, 1080, 1794],
            ),
            package,
            true,
        );
        node_xml(
            &mut out,
            0,
            &(
                String::new(),
                String::new(),
                "android.widget.LinearLayout",
                false,
                [0, 210, 1080, 1794],
            ),
            package,
            true,
        );
        for (index, node) in content.iter().enumerate() {
            node_xml(&mut out, index, node, package, false);
        }
        out.push_str("</node></node></node>");
    }
    out.push_str("</node></hierarchy>");
    out
}

pub(crate) async fn uiautomator(
    phone: &SimPhone,
    args: &[String],
    sink: &Sink,
) -> Result<u8, Closed> {
    if args.first().map(String::as_str) != Some("dump") {
        sink.err("Usage: uiautomator <subcommand> [options]\n\nAvailable subcommands:\n\nhelp: displays help message\n\nruntest: executes UI automation tests\n\ndump: creates an XML dump of current UI hierarchy\n\nevents: prints out accessibility events until terminated\n")
            .await?;
        return Ok(1);
    }
    let hung = phone.lock().apps.hung.is_some();
    if hung {
        // The blocked app never becomes idle, so uiautomator gives up, as it does on a phone.
        sink.err("ERROR: could not get idle state.\n").await?;
        return Ok(1);
    }
    let path = args[1..]
        .iter()
        .find(|arg| !arg.starts_with('-'))
        .cloned()
        .unwrap_or_else(|| DEFAULT_DUMP.to_string());
    let (package, nodes) = screen(phone);
    let xml = dump_xml(&package, &nodes);
    phone
        .lock()
        .apps
        .files
        .insert(path.clone(), xml.into_bytes());
    sink.out(format!("UI hierchary dumped to: {path}\n"))
        .await?;
    Ok(0)
}

pub(crate) async fn input(phone: &SimPhone, args: &[String], sink: &Sink) -> Result<u8, Closed> {
    // `input [touchscreen] tap X Y`; other events (keyevent, text, swipe) only count as input.
    let args: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .skip_while(|arg| *arg == "touchscreen")
        .collect();
    let point = match args.as_slice() {
        ["tap", x, y] => match (x.parse::<f64>(), y.parse::<f64>()) {
            (Ok(x), Ok(y)) => Some((x as i32, y as i32)),
            _ => {
                sink.err("Error: Invalid arguments for command: tap\n")
                    .await?;
                return Ok(1);
            }
        },
        [] => {
            sink.err("Usage: input [<source>] <command> [<arg>...]\n")
                .await?;
            return Ok(1);
        }
        _ => None,
    };
    let hung = phone.lock().apps.hung.clone();
    if let Some((package, pid, anr_coming)) = hung {
        // The blocked main thread cannot take the event: an ANR once the dispatch times out.
        if !anr_coming {
            if let Some(hung) = phone.lock().apps.hung.as_mut() {
                hung.2 = true;
            }
            let phone = phone.clone();
            tokio::spawn(async move {
                tokio::time::sleep(INPUT_DISPATCH_TIMEOUT).await;
                let still = phone
                    .lock()
                    .apps
                    .hung
                    .as_ref()
                    .is_some_and(|(hung, hung_pid, _)| *hung == package && *hung_pid == pid);
                if still && phone.pid_of(&package) == Some(pid) {
                    let _ = phone.hang(&package);
                    phone.forget_screen(&package);
                }
            });
        }
        return Ok(0);
    }
    let Some((x, y)) = point else { return Ok(0) };
    let (package, nodes) = screen(phone);
    let hit = nodes.iter().find(|(_, _, _, clickable, b)| {
        *clickable && x >= b[0] && x < b[2] && y >= b[1] && y < b[3]
    });
    let Some((_, id, _, _, _)) = hit else {
        return Ok(0);
    };
    let Some(info) = model(phone, &package) else {
        return Ok(0);
    };
    let tag = text(&info, "log_tag").unwrap_or_else(|| package.clone());
    if id.ends_with(":id/crash") {
        let message = text(&info, "crash_message").unwrap_or_default();
        let _ = phone.crash(&package, "java.lang.IllegalStateException", &message);
        phone.forget_screen(&package);
    } else if id.ends_with(":id/hang") {
        if let Some(line) = text(&info, "hang_line") {
            let _ = phone.log(&package, Priority::Info, &tag, &line);
        }
        if let Some(pid) = phone.pid_of(&package) {
            phone.lock().apps.hung = Some((package, pid, false));
        }
    }
    Ok(0)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn reads_adb_quoted_words() {
        assert_eq!(
            words("cmd package 'install' '-r' -S 12756"),
            vec!["cmd", "package", "install", "-r", "-S", "12756"]
        );
        assert_eq!(words("echo 'it'\\''s'"), vec!["echo", "it's"]);
    }

    #[test]
    fn recognises_adb_29_streamed_install() {
        let (_, size) = streamed_install("exec:cmd package 'install' '-r' -S 12756").unwrap();
        assert_eq!(size, 12756);
        assert!(streamed_install("shell,v2,raw:pm install -S 10").is_some());
        assert!(streamed_install("exec:cmd package install -r /data/local/tmp/a.apk").is_none());
        assert!(streamed_install("exec:cat x").is_none());
        assert!(streamed_install("exec:cmd package install -S x").is_none());
    }

    #[test]
    fn the_dump_is_uiautomator_xml_with_the_buttons() {
        let nodes = vec![
            (
                "Crash Test".to_string(),
                String::new(),
                "android.widget.TextView",
                false,
                [42, 105, 319, 168],
            ),
            (
                "A & B".to_string(),
                "p:id/explanation".to_string(),
                "android.widget.TextView",
                false,
                [63, 273, 1017, 390],
            ),
            (
                "Crash".to_string(),
                "p:id/crash".to_string(),
                "android.widget.Button",
                true,
                [63, 453, 1017, 579],
            ),
        ];
        let xml = dump_xml("p", &nodes);
        assert!(xml.starts_with(
            "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
        ));
        assert!(xml.contains("text=\"A &amp; B\""));
        assert!(
            xml.contains(
                "resource-id=\"p:id/crash\" class=\"android.widget.Button\" package=\"p\""
            )
        );
        assert!(xml.contains("bounds=\"[63,453][1017,579]\" />"));
        assert_eq!(
            xml.matches("<node ").count(),
            xml.matches("</node>").count() + xml.matches(" />").count()
        );
    }
}
