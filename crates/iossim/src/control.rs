//! A line protocol to play things on the phone from another process: what a person does with
//! the phone in hand (install a build, open the app, tap Crash) and what only a simulator can
//! tell (whether a stream is open yet). `phonelogs sim --ios --control` reads one command per
//! line on standard input and prints one answer line for each; `cargo xtask emulator-test
//! --sim-ios` drives the phone with it.
//!
//! It sits on top of the model, as the services do, and only calls the model's actions.
//!
//! | command | answer |
//! | --- | --- |
//! | `sign BUNDLE development\|store [BUILD]` | `ok`: the app reinstalled with that signing (its processes end), as build `BUILD` (`CFBundleVersion`) when given |
//! | `launch BUNDLE` | `pid N` |
//! | `extension BUNDLE EXTENSION_BUNDLE` | `pid N` |
//! | `log PID default\|info\|debug\|error\|fault SUBSYSTEM CATEGORY TEXT…` | `ok` |
//! | `crash PID exception\|watchdog\|swift-trap TEXT…` | `report PATH` (the `.ips` file written) |
//! | `exit PID` | `ok` |
//! | `streamed PID` | `yes` or `no`: whether an os_trace stream for that pid was started |
//! | `udid` | `udid UDID`: the phone's, as usbmuxd lists it |
//! | `version` | `version 26.1 (23B85)`: `ProductVersion` and `BuildVersion` |
//! | `ddi mount` | `ok`, or `error: Developer Mode is off: …` (the phone refuses) |
//! | `ddi unmount` | `ok`: the developer disk image is gone, as after a restart |
//! | `ddi` | `ddi mounted` or `ddi unmounted` |
//! | `developer-mode on\|off` | `ok` (the phone restarts to change it: the image is unmounted) |
//! | `trust trusted\|locked\|not-paired` | `ok`: this computer trusted; trusted but the phone not unlocked since it started; never trusted |
//! | `fault silent-os-trace` | `ok`: os_trace streams started through lockdown open and stay silent (RSD's shim still streams) |
//! | `fault none` | `ok`: every fault cleared |
//!
//! Anything else answers `error: …`.
//!
//! ```
//! use phonelogs_iossim::{SimPhone, control};
//!
//! let phone = SimPhone::default_phone();
//! let answer = control::run(&phone, "launch dev.phonelogs.crashtest");
//! assert!(answer.starts_with("pid "), "{answer}");
//! assert!(control::run(&phone, "launch com.nowhere").starts_with("error: "));
//! ```

use crate::model::{CrashKind, Fault, Level, Signing, SimPhone, Trust};

/// Runs one command line and returns its answer line (without a newline).
pub fn run(phone: &SimPhone, line: &str) -> String {
    match command(phone, line.trim()) {
        Ok(answer) => answer,
        Err(error) => format!("error: {error}"),
    }
}

fn command(phone: &SimPhone, line: &str) -> Result<String, String> {
    let mut words = line.split_whitespace();
    let verb = words.next().ok_or("an empty command")?;
    let mut next = |what: &str| {
        words
            .next()
            .map(str::to_owned)
            .ok_or_else(|| format!("{verb} needs {what}"))
    };
    match verb {
        "sign" => {
            let bundle = next("a bundle id")?;
            let signing = signing(&next("development or store")?)?;
            // A new build replaces the old one: its processes end and its container moves, as
            // an install does.
            let installed = match next("a build") {
                Ok(build) => phone.install_build(&bundle, signing, &build),
                Err(_) => phone.reinstall(&bundle, signing),
            };
            installed.ok_or_else(|| format!("{bundle} is not installed"))?;
            Ok("ok".into())
        }
        "reinstall" => reinstall(phone, &next("a bundle id")?),
        "launch" => {
            let bundle = next("a bundle id")?;
            let pid = phone
                .launch(&bundle)
                .ok_or_else(|| format!("{bundle} is not installed"))?;
            Ok(format!("pid {pid}"))
        }
        "extension" => {
            let bundle = next("a bundle id")?;
            let extension = next("an extension's bundle id")?;
            let pid = phone
                .launch_extension(&bundle, &extension)
                .ok_or_else(|| format!("{bundle} has no extension {extension}"))?;
            Ok(format!("pid {pid}"))
        }
        "log" => {
            let pid = pid(&next("a pid")?)?;
            let level = level(&next("a level")?)?;
            let subsystem = next("a subsystem")?;
            let category = next("a category")?;
            let text = rest(line, 5).ok_or("log needs a text")?;
            running(phone, pid)?;
            phone.log(pid, level, Some((&subsystem, &category)), text);
            Ok("ok".into())
        }
        "crash" => {
            let pid = pid(&next("a pid")?)?;
            let kind = next("a kind")?;
            let text = rest(line, 3).unwrap_or_default().to_owned();
            let kind = crash_kind(&kind, text)?;
            let path = phone
                .crash(pid, kind)
                .ok_or_else(|| format!("no process {pid}"))?;
            Ok(format!("report {path}"))
        }
        "exit" => {
            let pid = pid(&next("a pid")?)?;
            running(phone, pid)?;
            phone.exit(pid);
            Ok("ok".into())
        }
        "streamed" => {
            let pid = pid(&next("a pid")?)?;
            let streamed = phone.streamed_pids().contains(&i64::from(pid));
            Ok(if streamed { "yes" } else { "no" }.into())
        }
        "udid" => Ok(format!("udid {}", phone.profile().udid)),
        "version" => Ok(format!("version {}", phone.profile().ios)),
        "ddi" => ddi(phone, next("mount or unmount").ok().as_deref()),
        "developer-mode" => {
            let on = on_off(&next("on or off")?)?;
            phone.set_developer_mode(on);
            Ok("ok".into())
        }
        "trust" => {
            let trust = trust(&next("trusted, locked or not-paired")?)?;
            phone.set_trust(trust);
            Ok("ok".into())
        }
        "fault" => match next("a fault")?.as_str() {
            "silent-os-trace" => {
                phone.inject_fault(Fault::SilentLockdownOsTrace);
                Ok("ok".into())
            }
            "none" => {
                phone.clear_faults();
                Ok("ok".into())
            }
            other => Err(format!("{other:?} is not silent-os-trace or none")),
        },
        other => Err(format!("unknown command {other:?}")),
    }
}

/// `reinstall BUNDLE`: the same build installed again, in a new container (its path).
fn reinstall(phone: &SimPhone, bundle: &str) -> Result<String, String> {
    let signing = phone
        .app(bundle)
        .ok_or_else(|| format!("{bundle} is not installed"))?
        .signing;
    let app = phone
        .reinstall(bundle, signing)
        .ok_or_else(|| format!("{bundle} is not installed"))?;
    Ok(format!("path {}", app.path))
}

/// `development` or `store`.
fn signing(word: &str) -> Result<Signing, String> {
    match word {
        "development" => Ok(Signing::Development),
        "store" => Ok(Signing::Store),
        other => Err(format!("{other:?} is not development or store")),
    }
}

/// An os_log level's name.
fn level(word: &str) -> Result<Level, String> {
    match word {
        "default" => Ok(Level::Default),
        "info" => Ok(Level::Info),
        "debug" => Ok(Level::Debug),
        "error" => Ok(Level::Error),
        "fault" => Ok(Level::Fault),
        other => Err(format!("{other:?} is not an os_log level")),
    }
}

/// A crash's kind (`exception`, `watchdog`, `swift-trap`) with its text.
fn crash_kind(word: &str, text: String) -> Result<CrashKind, String> {
    match word {
        "exception" => Ok(CrashKind::Exception(text)),
        "watchdog" => Ok(CrashKind::Watchdog(text)),
        "swift-trap" => Ok(CrashKind::SwiftTrap(text)),
        other => Err(format!(
            "{other:?} is not exception, watchdog or swift-trap"
        )),
    }
}

/// `ddi`: whether the disk image is mounted, or `mount` / `unmount` it.
fn ddi(phone: &SimPhone, word: Option<&str>) -> Result<String, String> {
    match word {
        None => Ok(if phone.ddi_mounted() {
            "ddi mounted"
        } else {
            "ddi unmounted"
        }
        .into()),
        Some("mount") => phone
            .mount_ddi()
            .map(|()| "ok".into())
            .map_err(|refusal| refusal.to_string()),
        Some("unmount") => {
            phone.unmount_ddi();
            Ok("ok".into())
        }
        Some(other) => Err(format!("{other:?} is not mount or unmount")),
    }
}

/// `on` or `off`.
fn on_off(word: &str) -> Result<bool, String> {
    match word {
        "on" => Ok(true),
        "off" => Ok(false),
        other => Err(format!("{other:?} is not on or off")),
    }
}

/// `trusted`, `locked` or `not-paired`.
fn trust(word: &str) -> Result<Trust, String> {
    match word {
        "trusted" => Ok(Trust::Trusted),
        "locked" => Ok(Trust::Locked),
        "not-paired" => Ok(Trust::NotPaired),
        other => Err(format!("{other:?} is not trusted, locked or not-paired")),
    }
}

fn pid(word: &str) -> Result<u32, String> {
    word.parse()
        .map_err(|_| format!("{word:?} is not a process id"))
}

fn running(phone: &SimPhone, pid: u32) -> Result<(), String> {
    if phone.processes().iter().any(|p| p.pid == pid) {
        Ok(())
    } else {
        Err(format!("no process {pid}"))
    }
}

/// The text after the first `skip` words, as written (inner spaces kept).
fn rest(line: &str, skip: usize) -> Option<&str> {
    let mut rest = line;
    for _ in 0..skip {
        rest = rest.trim_start();
        let end = rest.find(char::is_whitespace)?;
        rest = &rest[end..];
    }
    let rest = rest.trim();
    (!rest.is_empty()).then_some(rest)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn plays_the_crash_test_story() {
        let phone = SimPhone::default_phone();
        phone.set_report_delays(std::time::Duration::ZERO, std::time::Duration::ZERO);
        assert_eq!(run(&phone, "udid"), "udid 00008101-000A1234567890AB");
        assert_eq!(run(&phone, "sign dev.phonelogs.crashtest store"), "ok");
        assert_eq!(
            phone.app("dev.phonelogs.crashtest").unwrap().signing,
            Signing::Store
        );
        let answer = run(&phone, "launch dev.phonelogs.crashtest");
        let pid: u32 = answer.strip_prefix("pid ").unwrap().parse().unwrap();
        let widget = run(
            &phone,
            "extension dev.phonelogs.crashtest dev.phonelogs.crashtest.widget",
        );
        assert!(widget.starts_with("pid "), "{widget}");
        assert_eq!(
            run(
                &phone,
                &format!("log {pid} error dev.phonelogs.crashtest CrashTest  two  spaces")
            ),
            "ok"
        );
        assert_eq!(run(&phone, &format!("streamed {pid}")), "no");
        let report = run(
            &phone,
            &format!("crash {pid} watchdog scene-update watchdog"),
        );
        assert!(
            report.starts_with("report ") && report.contains("CrashTest-"),
            "{report}"
        );
        assert!(run(&phone, &format!("exit {pid}")).starts_with("error: no process"));
    }

    #[test]
    fn bad_commands_say_why() {
        let phone = SimPhone::default_phone();
        for (line, why) in [
            ("", "empty"),
            ("frobnicate", "unknown command"),
            ("launch", "needs a bundle id"),
            ("log x info a b text", "not a process id"),
            ("log 1 loud a b text", "not an os_log level"),
            (
                "sign dev.phonelogs.crashtest adhoc",
                "not development or store",
            ),
            ("crash 99999 exception boom", "no process 99999"),
        ] {
            let answer = run(&phone, line);
            assert!(
                answer.starts_with("error: ") && answer.contains(why),
                "{line}: {answer}"
            );
        }
    }

    #[test]
    fn the_disk_image_and_developer_mode() {
        let phone = SimPhone::default_phone_on(crate::model::IosVersion::V26_1);
        assert_eq!(run(&phone, "version"), "version 26.1 (23B85)");
        assert_eq!(run(&phone, "ddi"), "ddi mounted");
        assert_eq!(run(&phone, "ddi unmount"), "ok");
        assert_eq!(run(&phone, "ddi"), "ddi unmounted");
        assert_eq!(run(&phone, "ddi mount"), "ok");
        assert_eq!(run(&phone, "developer-mode off"), "ok");
        assert!(!phone.developer_mode());
        assert_eq!(run(&phone, "ddi"), "ddi unmounted");
        let refused = run(&phone, "ddi mount");
        assert!(
            refused.starts_with("error: Developer Mode is off"),
            "{refused}"
        );
        assert_eq!(run(&phone, "developer-mode on"), "ok");
        assert_eq!(run(&phone, "ddi mount"), "ok");
        assert!(run(&phone, "ddi eject").starts_with("error: "));
        assert!(run(&phone, "developer-mode maybe").starts_with("error: "));
        assert_eq!(run(&phone, "trust locked"), "ok");
        assert_eq!(phone.trust(), Trust::Locked);
        assert_eq!(run(&phone, "trust not-paired"), "ok");
        assert_eq!(phone.trust(), Trust::NotPaired);
        assert_eq!(run(&phone, "trust trusted"), "ok");
        assert_eq!(phone.trust(), Trust::Trusted);
        assert!(run(&phone, "trust maybe").starts_with("error: "));
        assert_eq!(run(&phone, "fault silent-os-trace"), "ok");
        assert!(phone.has_fault(&Fault::SilentLockdownOsTrace));
        assert_eq!(run(&phone, "fault none"), "ok");
        assert!(!phone.has_fault(&Fault::SilentLockdownOsTrace));
        assert!(run(&phone, "fault melt").starts_with("error: "));
    }

    #[test]
    fn the_text_keeps_its_inner_spaces() {
        assert_eq!(rest("log 1 info a b  x  y ", 5), Some("x  y"));
        assert_eq!(rest("log 1 info a b", 5), None);
    }
}
