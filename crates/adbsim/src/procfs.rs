//! The simulated phone's files as the shell user reaches them: `stat -c FORMAT /proc/<pid>`
//! (`%u`, `%U`, `%n`), `cat /proc/<pid>/cmdline` and `status`, answered from the process table,
//! `cat /proc/sys/kernel/random/boot_id` (the model's boot id), and `cat`/`rm` of the files
//! apps wrote (`uiautomator dump`). Part of the commands layer, over the model.
//!
//! Only the processes the phone models have a `/proc/<pid>`; any other path is missing, with the
//! messages toybox prints (`stat: '/proc/N': No such file or directory`, exit 1). A process's
//! `cmdline` is its name and one NUL, as `/proc/<pid>/cmdline` holds it for an app process.
//! `boot_id` is one lowercase UUID and a line break, as Linux's `proc_do_uuid` prints it.

use crate::model::Process;
use crate::phone::SimPhone;
use crate::sink::{Closed, Sink};

/// Linux's random boot id: a new UUID at every boot (`drivers/char/random.c`).
const BOOT_ID: &str = "/proc/sys/kernel/random/boot_id";

/// What a `/proc` path names: a process's directory, or one of its files.
enum ProcPath {
    Dir(Process),
    File(Process, String),
}

fn resolve(phone: &SimPhone, path: &str) -> Option<ProcPath> {
    let rest = path.strip_prefix("/proc/")?;
    let rest = rest.trim_end_matches('/');
    let (pid, file) = match rest.split_once('/') {
        Some((pid, file)) => (pid, Some(file)),
        None => (rest, None),
    };
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let pid: u32 = pid.parse().ok()?;
    let process = phone.processes().into_iter().find(|p| p.pid == pid)?;
    match file {
        None => Some(ProcPath::Dir(process)),
        Some(name @ ("cmdline" | "status" | "stat")) => Some(ProcPath::File(process, name.into())),
        Some(_) => None,
    }
}

/// The user name toybox prints for `%U`.
fn user_name(uid: u32) -> String {
    let app_id = uid % 100_000;
    let user = uid / 100_000;
    match app_id {
        0 => "root".into(),
        1000 => "system".into(),
        1001 => "radio".into(),
        1036 => "logd".into(),
        2000 => "shell".into(),
        id if id >= 10_000 => format!("u{user}_a{}", id - 10_000),
        id => id.to_string(),
    }
}

/// `stat [-c FORMAT] PATH...`.
pub(crate) async fn stat(phone: &SimPhone, args: &[String], sink: &Sink) -> Result<u8, Closed> {
    let mut format: Option<String> = None;
    let mut paths = Vec::new();
    let mut index = 0;
    while index < args.len() {
        let arg = &args[index];
        if arg == "-c" {
            index += 1;
            match args.get(index) {
                Some(value) => format = Some(value.clone()),
                None => {
                    sink.err("stat: Needs 1 argument\n").await?;
                    return Ok(1);
                }
            }
        } else if let Some(value) = arg.strip_prefix("-c") {
            format = Some(value.to_owned());
        } else {
            paths.push(arg.clone());
        }
        index += 1;
    }
    if paths.is_empty() {
        sink.err("stat: Needs 1 argument\n").await?;
        return Ok(1);
    }
    let mut code = 0;
    for path in paths {
        let (uid, name) = match resolve(phone, &path) {
            Some(ProcPath::Dir(process)) | Some(ProcPath::File(process, _)) => {
                (process.uid, path.clone())
            }
            None => {
                sink.err(format!("stat: '{path}': No such file or directory\n"))
                    .await?;
                code = 1;
                continue;
            }
        };
        let line = match &format {
            Some(format) => expand(format, uid, &name),
            None => format!(
                "  File: {name}\nAccess: (0555/dr-xr-xr-x)  Uid: ({uid:5}/{user})\n",
                user = user_name(uid)
            ),
        };
        sink.out(format!("{line}\n")).await?;
    }
    Ok(code)
}

fn expand(format: &str, uid: u32, name: &str) -> String {
    let mut out = String::new();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('u') => out.push_str(&uid.to_string()),
            Some('U') => out.push_str(&user_name(uid)),
            Some('n') => out.push_str(name),
            Some('%') => out.push('%'),
            Some(other) => {
                out.push('?');
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    out
}

/// `cat PATH...`, for the files apps wrote, the boot id and the process files the phone models.
pub(crate) async fn cat(phone: &SimPhone, args: &[String], sink: &Sink) -> Result<u8, Closed> {
    let mut code = 0;
    for path in args {
        let file = phone.lock().apps.files.get(path).cloned();
        if let Some(bytes) = file {
            sink.out(bytes).await?;
            continue;
        }
        if path == BOOT_ID {
            sink.out(format!("{}\n", phone.boot_id())).await?;
            continue;
        }
        match resolve(phone, path) {
            Some(ProcPath::File(process, file)) if file == "cmdline" => {
                let mut bytes = process.name.into_bytes();
                bytes.push(0);
                sink.out(bytes).await?;
            }
            Some(ProcPath::File(process, file)) if file == "status" => {
                sink.out(format!(
                    "Name:\t{}\nPid:\t{}\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\n",
                    process.name.chars().take(15).collect::<String>(),
                    process.pid,
                    uid = process.uid
                ))
                .await?;
            }
            Some(ProcPath::Dir(_)) => {
                sink.err(format!("cat: {path}: Is a directory\n")).await?;
                code = 1;
            }
            _ => {
                sink.err(format!("cat: {path}: No such file or directory\n"))
                    .await?;
                code = 1;
            }
        }
    }
    Ok(code)
}

/// `rm [-f] PATH...`, for the files apps wrote.
pub(crate) async fn rm(phone: &SimPhone, args: &[String], sink: &Sink) -> Result<u8, Closed> {
    let force = args
        .iter()
        .any(|arg| arg.starts_with('-') && arg.contains('f'));
    let mut status = 0;
    for path in args.iter().filter(|arg| !arg.starts_with('-')) {
        let removed = phone.lock().apps.files.remove(path).is_some();
        if !removed && !force {
            sink.err(format!("rm: {path}: No such file or directory\n"))
                .await?;
            status = 1;
        }
    }
    Ok(status)
}

#[cfg(test)]
mod tests {
    use crate::{SimPhone, run_shell};

    #[tokio::test]
    async fn stat_and_cmdline_answer_from_the_process_table() {
        let phone = SimPhone::default_phone();
        let pid = phone.pid_of("dev.phonelogs.crashtest").unwrap_or(0);
        let uid = phone.uid_of("dev.phonelogs.crashtest", 0).unwrap_or(0);
        let out = run_shell(&phone, &format!("stat -c %u /proc/{pid}")).await;
        assert_eq!(out.exit_code, 0);
        assert_eq!(String::from_utf8_lossy(&out.stdout), format!("{uid}\n"));
        let out = run_shell(&phone, &format!("cat /proc/{pid}/cmdline")).await;
        assert_eq!(out.stdout, b"dev.phonelogs.crashtest\0".to_vec());
    }

    #[tokio::test]
    async fn a_pid_with_no_process_is_missing() {
        let phone = SimPhone::default_phone();
        let out = run_shell(&phone, "stat -c %u /proc/99999").await;
        assert_eq!(out.exit_code, 1);
        assert!(out.stdout.is_empty());
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "stat: '/proc/99999': No such file or directory\n"
        );
        let out = run_shell(&phone, "cat /proc/99999/cmdline").await;
        assert_eq!(out.exit_code, 1);
        let out = run_shell(&phone, "stat -c %u /proc/self/../1").await;
        assert_eq!(out.exit_code, 1);
    }
}
