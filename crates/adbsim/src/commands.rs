//! The commands of the simulated phone's shell, in one dispatch table ([`run`]): `logcat`
//! (`logcat.rs`), `pm`, `dumpsys`, `am`, `debuggerd`, `date`, `getprop`, the installed apps'
//! commands (`apps.rs`: `am start`, `pm uninstall`, `uiautomator`, `input`), the files
//! (`procfs.rs`: `cat`, `stat`, `rm`), and a few small helpers (`echo`, `id`, `pidof`, `sleep`,
//! `true`, `false`, `exit`).
//!
//! Each takes its argument words and writes to a `Sink`, returning the exit status. The
//! commands sit over the model and the formats; the shell, above, calls [`run`].

use std::fmt::Write as _;
use std::time::Duration;

use crate::format;
use crate::model::{AndroidVersion, BuildType};
use crate::phone::{DebugApp, SimPhone};
use crate::sink::{Closed, Sink};
use crate::{apps, logcat, procfs};

/// Runs one command; unknown commands answer as mksh does. This table is the one place that
/// says which command is answered where.
pub(crate) async fn run(phone: &SimPhone, args: &[String], sink: &Sink) -> u8 {
    let Some(name) = args.first().map(String::as_str) else {
        return 0;
    };
    let rest = &args[1..];
    let sub = rest.first().map(String::as_str);
    let result = match (name, sub) {
        ("echo", _) => echo(rest, sink).await,
        ("true" | ":", _) => Ok(0),
        ("false", _) => Ok(1),
        ("exit", _) => Ok(rest.first().and_then(|code| code.parse::<i64>().ok()).map(|code| code as u8).unwrap_or(0)),
        ("sleep", _) => {
            let seconds = rest.first().and_then(|value| value.parse::<f64>().ok()).unwrap_or(0.0);
            tokio::time::sleep(Duration::from_secs_f64(seconds.clamp(0.0, 3600.0))).await;
            Ok(0)
        }
        ("id", _) => sink
            .out("uid=2000(shell) gid=2000(shell) groups=2000(shell),1004(input),1007(log),1011(adb),1015(sdcard_rw),1028(sdcard_r),3001(net_bt_admin),3002(net_bt),3003(inet),3006(net_bw_stats),3009(readproc),3011(uhid) context=u:r:shell:s0\n")
            .await
            .map(|_| 0),
        ("getprop", _) => getprop(phone, rest, sink).await,
        ("date", _) => date(phone, rest, sink).await,
        ("pidof", _) => pidof(phone, rest, sink).await,
        ("logcat", _) => logcat::logcat(phone, rest, sink).await,
        ("pm", Some("uninstall")) => apps::uninstall(phone, &rest[1..], sink).await,
        ("cmd", Some("package")) if rest.get(1).map(String::as_str) == Some("uninstall") => {
            apps::uninstall(phone, &rest[2..], sink).await
        }
        ("pm", _) => pm(phone, rest, sink).await,
        ("cmd", Some("package")) => pm(phone, &rest[1..], sink).await,
        ("dumpsys", _) => dumpsys(phone, rest, sink).await,
        ("am", Some("start" | "start-activity")) => apps::am_start(phone, &rest[1..], sink).await,
        ("am", _) => am(phone, rest, sink).await,
        ("uiautomator", _) => apps::uiautomator(phone, rest, sink).await,
        ("input", _) => apps::input(phone, rest, sink).await,
        ("debuggerd", _) => debuggerd(phone, rest, sink).await,
        ("stat", _) => procfs::stat(phone, rest, sink).await,
        ("cat", _) => procfs::cat(phone, rest, sink).await,
        ("rm", _) => procfs::rm(phone, rest, sink).await,
        _ => sink
            .err(format!("/system/bin/sh: {name}: inaccessible or not found\n"))
            .await
            .map(|_| 127),
    };
    result.unwrap_or(1)
}

async fn echo(args: &[String], sink: &Sink) -> Result<u8, Closed> {
    let (newline, words) = match args.first().map(String::as_str) {
        Some("-n") => (false, &args[1..]),
        _ => (true, args),
    };
    let mut text = words.join(" ");
    if newline {
        text.push('\n');
    }
    sink.out(text).await?;
    Ok(0)
}

fn properties(phone: &SimPhone) -> Vec<(String, String)> {
    let profile = phone.profile();
    let debuggable = profile.build_type == BuildType::Userdebug;
    let mut props = vec![
        (
            "ro.build.version.release",
            profile.android.release().to_string(),
        ),
        ("ro.build.version.sdk", profile.android.sdk().to_string()),
        ("ro.build.id", profile.android.build_id().to_string()),
        ("ro.build.fingerprint", profile.fingerprint()),
        (
            "ro.build.type",
            if debuggable { "userdebug" } else { "user" }.to_string(),
        ),
        (
            "ro.build.tags",
            if debuggable {
                "dev-keys"
            } else {
                "release-keys"
            }
            .to_string(),
        ),
        (
            "ro.debuggable",
            if debuggable { "1" } else { "0" }.to_string(),
        ),
        ("ro.secure", "1".to_string()),
        ("ro.serialno", profile.serial.clone()),
        ("ro.product.manufacturer", profile.manufacturer.clone()),
        ("ro.product.model", profile.model.clone()),
        ("ro.product.name", profile.product.clone()),
        ("ro.product.device", profile.device.clone()),
        ("ro.product.cpu.abi", "arm64-v8a".to_string()),
        ("persist.sys.timezone", profile.zone_id.clone()),
        ("sys.boot_completed", "1".to_string()),
        ("ro.logd.size", "262144".to_string()),
    ];
    props.sort();
    props
        .into_iter()
        .map(|(key, value)| (key.to_string(), value))
        .collect()
}

async fn getprop(phone: &SimPhone, args: &[String], sink: &Sink) -> Result<u8, Closed> {
    let props = properties(phone);
    match args.first() {
        None => {
            let mut out = String::new();
            for (key, value) in &props {
                let _ = writeln!(out, "[{key}]: [{value}]");
            }
            sink.out(out).await?;
        }
        Some(key) => {
            let value = props
                .iter()
                .find(|(name, _)| name == key)
                .map(|(_, value)| value.clone())
                .or_else(|| args.get(1).cloned())
                .unwrap_or_default();
            sink.out(format!("{value}\n")).await?;
        }
    }
    Ok(0)
}

async fn date(phone: &SimPhone, args: &[String], sink: &Sink) -> Result<u8, Closed> {
    let profile = phone.profile();
    let now = phone.now_ns();
    let pattern = match args.first() {
        None => "%a %b %e %H:%M:%S %Z %Y".to_string(),
        Some(arg) if arg.starts_with('+') => arg[1..].to_string(),
        Some(arg) => {
            sink.err(format!("date: bad date '{arg}'\n")).await?;
            return Ok(1);
        }
    };
    let t = format::civil(now, profile.utc_offset_minutes);
    let mut out = String::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('Y') => {
                let _ = write!(out, "{:04}", t.year());
            }
            Some('m') => {
                let _ = write!(out, "{:02}", u8::from(t.month()));
            }
            Some('d') => {
                let _ = write!(out, "{:02}", t.day());
            }
            Some('e') => {
                let _ = write!(out, "{:2}", t.day());
            }
            Some('H') => {
                let _ = write!(out, "{:02}", t.hour());
            }
            Some('M') => {
                let _ = write!(out, "{:02}", t.minute());
            }
            Some('S') => {
                let _ = write!(out, "{:02}", t.second());
            }
            Some('N') => {
                let _ = write!(out, "{:09}", t.nanosecond());
            }
            Some('s') => {
                let _ = write!(out, "{}", now.div_euclid(1_000_000_000));
            }
            Some('z') => out.push_str(&format::zone_suffix(profile.utc_offset_minutes)),
            Some('Z') => out.push_str(&profile.zone_name),
            Some('a') => out.push_str(&format!("{:?}", t.weekday())[..3]),
            Some('b') => out.push_str(&format!("{:?}", t.month())[..3]),
            Some('%') => out.push('%'),
            Some(other) => {
                out.push('%');
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    out.push('\n');
    sink.out(out).await?;
    Ok(0)
}

async fn pidof(phone: &SimPhone, args: &[String], sink: &Sink) -> Result<u8, Closed> {
    let pids: Vec<String> = phone
        .processes()
        .iter()
        .filter(|process| args.contains(&process.name))
        .map(|process| process.pid.to_string())
        .collect();
    if pids.is_empty() {
        return Ok(1);
    }
    sink.out(format!("{}\n", pids.join(" "))).await?;
    Ok(0)
}

async fn pm(phone: &SimPhone, args: &[String], sink: &Sink) -> Result<u8, Closed> {
    match (
        args.first().map(String::as_str),
        args.get(1).map(String::as_str),
    ) {
        (Some("list"), Some("packages")) => pm_list_packages(phone, &args[2..], sink).await,
        (Some("path"), Some(name)) => {
            let path = phone.lock().package(name).map(|package| {
                if package.system {
                    format!(
                        "package:/system/priv-app/{}/{}.apk\n",
                        package.name, package.name
                    )
                } else {
                    format!("package:/data/app/{}-1/base.apk\n", package.name)
                }
            });
            match path {
                Some(path) => {
                    sink.out(path).await?;
                    Ok(0)
                }
                None => Ok(1),
            }
        }
        _ => {
            sink.err("Error: unknown command or arguments for the simulated pm\n")
                .await?;
            Ok(255)
        }
    }
}

async fn pm_list_packages(phone: &SimPhone, args: &[String], sink: &Sink) -> Result<u8, Closed> {
    let mut show_uid = false;
    let mut show_path = false;
    let mut show_installer = false;
    let mut only_system = false;
    let mut only_third_party = false;
    let mut user: u32 = 0;
    let mut user_given = false;
    let mut uid_filter: Option<u32> = None;
    let mut filter: Option<&str> = None;
    let mut index = 0;
    while index < args.len() {
        match args[index].as_str() {
            "-U" => show_uid = true,
            "-f" => show_path = true,
            "-i" => show_installer = true,
            "-s" => only_system = true,
            "-3" => only_third_party = true,
            "-d" | "-e" | "-u" | "-a" | "--show-versioncode" | "--apex-only" => {}
            "--user" => {
                index += 1;
                user_given = true;
                let value = args.get(index).map(String::as_str).unwrap_or("");
                user = match value {
                    "current" | "cur" => 0,
                    other => match other.parse() {
                        Ok(user) => user,
                        Err(_) => {
                            sink.err(format!("Error: bad user id: {other}\n")).await?;
                            return Ok(255);
                        }
                    },
                };
            }
            "--uid" => {
                index += 1;
                uid_filter = args.get(index).and_then(|value| value.parse().ok());
            }
            option if option.starts_with('-') => {
                sink.err(format!("Error: Unknown option: {option}\n"))
                    .await?;
                return Ok(255);
            }
            word => filter = Some(word),
        }
        index += 1;
    }
    // Android 16 without `--user` prints one line per package with the uid of every user it is
    // installed for, comma-separated (`uid:10220,99910220`, a public tool's capture of an
    // Android 16 phone; testdata/adbsim/README.md). Older releases print the one user's uid.
    let every_user = !user_given && phone.profile().android == AndroidVersion::Android16;
    let mut out = String::new();
    {
        let state = phone.lock();
        for package in &state.packages {
            if !package.users.contains(&user) {
                continue;
            }
            if only_system && !package.system || only_third_party && package.system {
                continue;
            }
            if filter.is_some_and(|filter| !package.name.contains(filter)) {
                continue;
            }
            let uid = package.uid_for_user(user);
            if uid_filter.is_some_and(|wanted| wanted != uid) {
                continue;
            }
            out.push_str("package:");
            if show_path {
                let _ = write!(out, "/data/app/{}-1/base.apk=", package.name);
            }
            out.push_str(&package.name);
            if show_installer {
                let _ = write!(
                    out,
                    "  installer={}",
                    package.installer.as_deref().unwrap_or("null")
                );
            }
            if show_uid {
                if every_user {
                    let mut users = package.users.clone();
                    users.sort_unstable();
                    users.dedup();
                    let uids: Vec<String> = users
                        .iter()
                        .map(|user| package.uid_for_user(*user).to_string())
                        .collect();
                    let _ = write!(out, " uid:{}", uids.join(","));
                } else {
                    let _ = write!(out, " uid:{uid}");
                }
            }
            out.push('\n');
        }
    }
    sink.out(out).await?;
    Ok(0)
}

async fn dumpsys(phone: &SimPhone, args: &[String], sink: &Sink) -> Result<u8, Closed> {
    let profile = phone.profile();
    match args.first().map(String::as_str) {
        Some("package") => {
            let names: Vec<&String> = args[1..]
                .iter()
                .filter(|arg| !arg.starts_with('-'))
                .collect();
            let out = {
                let state = phone.lock();
                let mut out = String::new();
                match names.first() {
                    Some(name) => match state.package(name) {
                        Some(package) => out.push_str(&format::dumpsys_package(
                            &profile,
                            package,
                            package.installed_ns.unwrap_or(state.installed_ns),
                        )),
                        None => {
                            if profile.android != AndroidVersion::Android10 {
                                let _ = writeln!(
                                    out,
                                    "Dexopt state:\n  Unable to find package: {name}\n"
                                );
                                let _ = writeln!(
                                    out,
                                    "Compiler stats:\n  Unable to find package: {name}"
                                );
                            }
                        }
                    },
                    None => {
                        for package in &state.packages {
                            out.push_str(&format::dumpsys_package(
                                &profile,
                                package,
                                package.installed_ns.unwrap_or(state.installed_ns),
                            ));
                        }
                    }
                }
                out
            };
            sink.out(out).await?;
            Ok(0)
        }
        Some("dropbox") => {
            // Printed under the lock rather than from a copy: a copy of every entry's text for
            // each command made the simulated phone, not the reader, the cost of a crashes read.
            let (out, err) = format::dropbox_dump(&phone.lock().dropbox, &args[1..], &profile);
            sink.out(out).await?;
            sink.err(err).await?;
            Ok(0)
        }
        Some("activity") => match args.get(1).map(String::as_str) {
            Some("exit-info") if profile.android != AndroidVersion::Android10 => {
                let out = {
                    let state = phone.lock();
                    let package = args.get(2).map(String::as_str);
                    format::exit_info(&profile, &state.exits, package, state.boot_ns)
                };
                sink.out(out).await?;
                Ok(0)
            }
            Some(other) => {
                sink.out(format!(
                    "Bad activity command, or no activities match: {other}\nUse -h for help.\n"
                ))
                .await?;
                Ok(0)
            }
            None => {
                sink.out("ACTIVITY MANAGER RUNNING PROCESSES (dumpsys activity processes)\n")
                    .await?;
                Ok(0)
            }
        },
        Some(service) => {
            sink.err(format!("Can't find service: {service}\n")).await?;
            Ok(0)
        }
        None => {
            sink.out("Currently running services:\n  activity\n  dropbox\n  package\n")
                .await?;
            Ok(0)
        }
    }
}

async fn am(phone: &SimPhone, args: &[String], sink: &Sink) -> Result<u8, Closed> {
    match args.first().map(String::as_str) {
        Some("set-debug-app") => {
            let mut wait = false;
            let mut persistent = false;
            let mut package = None;
            for arg in &args[1..] {
                match arg.as_str() {
                    "-w" => wait = true,
                    "--persistent" => persistent = true,
                    option if option.starts_with('-') => {
                        sink.err(format!("Error: Unknown option: {option}\n"))
                            .await?;
                        return Ok(255);
                    }
                    name => package = Some(name.to_string()),
                }
            }
            let Some(package) = package else {
                sink.err(
                    "Exception occurred while executing 'set-debug-app':\njava.lang.IllegalArgumentException: Argument expected after \"set-debug-app\"\n\tat com.android.modules.utils.BasicShellCommandHandler.getNextArgRequired(BasicShellCommandHandler.java:295)\n\tat com.android.server.am.ActivityManagerShellCommand.runSetDebugApp(ActivityManagerShellCommand.java:1312)\n",
                )
                .await?;
                return Ok(255);
            };
            phone.lock().debug_app = Some(DebugApp {
                package,
                wait_for_debugger: wait,
                persistent,
            });
            Ok(0)
        }
        Some("clear-debug-app") => {
            phone.lock().debug_app = None;
            Ok(0)
        }
        // The person's user: the simulated phone's person always uses user 0. Real phones print
        // the number alone (`0`, in a capture quoted in cocool97/adb_client#99).
        Some("get-current-user") => {
            sink.out("0\n").await?;
            Ok(0)
        }
        Some("force-stop") => {
            if let Some(package) = args.get(1) {
                phone.forget_screen(package);
                let pid = phone.pid_of(package);
                if let Some(pid) = pid {
                    let mut state = phone.lock();
                    let process = state.process(pid).cloned();
                    state.processes.retain(|process| process.pid != pid);
                    if let Some(process) = process {
                        let now = state.now_ns();
                        state.exits.push(crate::model::ExitRecord {
                            package: package.clone(),
                            uid: process.uid,
                            pid,
                            process: process.name,
                            reason: 10,
                            subreason: 21,
                            status: 0,
                            importance: 100,
                            description: format!("stop {package} due to from pid 4242"),
                            time_ms: (now / 1_000_000) as i64,
                            trace: None,
                        });
                    }
                }
            }
            Ok(0)
        }
        Some(other) => {
            sink.err(format!("Error: unknown command '{other}'\n"))
                .await?;
            Ok(255)
        }
        None => {
            sink.out("Activity manager (activity) commands:\n").await?;
            Ok(0)
        }
    }
}

async fn debuggerd(phone: &SimPhone, args: &[String], sink: &Sink) -> Result<u8, Closed> {
    let usage = "usage: debuggerd [-bj] [-t TIMEOUT] PID\n\n-b, --backtrace    just a backtrace rather than a full tombstone\n-j                 collect java traces\n";
    let (backtrace, pid_text) = match args {
        [pid] => (false, pid),
        [flag, pid] if flag == "-b" || flag == "--backtrace" => (true, pid),
        _ => {
            sink.err(usage).await?;
            return Ok(1);
        }
    };
    let pid = match pid_text.parse::<u32>() {
        Ok(pid) if pid > 0 => pid,
        _ => {
            sink.err(usage).await?;
            return Ok(1);
        }
    };
    let profile = phone.profile();
    // AOSP's debuggerd client checks `getuid() != 0` right after parsing the pid, before it
    // looks the process up, so a user build refuses a dead pid the same way. The text is what
    // real phones print (testdata/README.md, "Refusal texts"): `errx(1, "root is required")`.
    if !profile.debuggerd_allowed() {
        sink.err("debuggerd: root is required\n").await?;
        return Ok(1);
    }
    let (process, now) = {
        let state = phone.lock();
        (state.process(pid).cloned(), state.now_ns())
    };
    let Some(process) = process else {
        sink.err(format!(
            "debuggerd: failed to fetch info for process {pid}: No such file or directory\n"
        ))
        .await?;
        return Ok(1);
    };
    let text = if backtrace {
        format::native_backtrace(&profile, &process, now)
    } else {
        format::tombstone(&profile, &process, 35, now).replace(
            "signal 35 (SIGSEGV), code 1 (SEGV_MAPERR), fault addr 0x0000000000000000",
            "signal 35 (<debuggerd signal>), code -1 (SI_QUEUE from pid 4242, uid 0), fault addr --------",
        )
    };
    sink.out(text).await?;
    Ok(0)
}
