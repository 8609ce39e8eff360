//! `phonelogs symbols add` and `phonelogs report --symbols`: filing symbol files in the symbols
//! directory, and reading report files with symbols applied, grouped by fingerprint (see
//! `docs/symbols.md`); and `phonelogs doctor --symbols`: whether symbols are filed for the
//! version of each app installed on the phones reached.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use std::time::Duration;

use phonelogs_crash::{CrashKind, Format, Report, render_heading};
use phonelogs_driver::{AppId, AppLogger as _, DeviceState, Platform};
use phonelogs_gateway::{GuardedLogger, NamedDevice};
use phonelogs_symbols::fingerprint::{self, AppCode, Occurrence};
use phonelogs_symbols::{NotMatched, SymbolKind, SymbolsDir, SymbolsUsed, Target};

use crate::{Doing, Result};

use crate::Finding;
use phonelogs_phones::Phones;

/// Files each of `files` for `app` and `version` and prints where it went.
pub fn add(dir: &Path, app: &str, version: &str, files: &[PathBuf]) -> Result<()> {
    let app = phonelogs_driver::AppId::parse(app).doing(|| "APP".to_owned())?;
    std::fs::create_dir_all(dir).doing(|| format!("cannot create {}", dir.display()))?;
    let symbols = SymbolsDir::open(dir)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut failed = 0usize;
    for file in files {
        match symbols.add(app.as_str(), version, file) {
            Ok(placed) => writeln!(out, "{} -> {}", file.display(), placed.display())?,
            Err(error) => {
                eprintln!("phonelogs: {error}");
                failed += 1;
            }
        }
    }
    if failed > 0 {
        return Err(crate::Error::Refused(format!(
            "{failed} of {} files were not filed",
            files.len()
        )));
    }
    Ok(())
}

/// One report read from a file, with symbols applied and its fingerprint.
struct Read {
    report: Report,
    analysis: fingerprint::Analysis,
    symbols: phonelogs_symbols::SymbolsUsed,
}

/// `phonelogs report --symbols DIR`: every report of every file with symbols applied, grouped
/// by fingerprint across the files; exit records are printed as without symbols.
pub fn report(
    dir: &Path,
    files: &[PathBuf],
    format: Option<&str>,
    json: bool,
    version: Option<&str>,
) -> Result<()> {
    let format = format
        .map(|name| name.parse::<Format>())
        .transpose()
        .doing(|| "--format".to_owned())?;
    let symbols = SymbolsDir::open(dir)?;
    let (reads, passthrough, failed) = read_files(files, format, &symbols, version);
    let items: Vec<(String, Occurrence)> = reads
        .iter()
        .map(|r| {
            (
                r.analysis.fingerprint.clone(),
                Occurrence {
                    pid: r.report.pid,
                    time: r.report.time,
                },
            )
        })
        .collect();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for group in fingerprint::group(&items) {
        write_group(&mut out, &reads[group.newest], &group, json)?;
    }
    for parsed in passthrough {
        if json {
            for line in parsed.json_lines() {
                writeln!(out, "{line}")?;
            }
        } else if !parsed.exit_records.is_empty() {
            write!(out, "{}", parsed.render_text())?;
        }
    }
    out.flush()?;
    // The answer is out; a mapping's cache may still be being written for the next run.
    symbols.wait_for_caches();
    if failed > 0 {
        return Err(crate::Error::Refused(format!(
            "{failed} of {} files could not be read",
            files.len()
        )));
    }
    Ok(())
}

/// Every report of every file with symbols applied, what else the files hold (exit records),
/// and how many files could not be read (each said on standard error).
fn read_files(
    files: &[PathBuf],
    format: Option<Format>,
    symbols: &SymbolsDir,
    version: Option<&str>,
) -> (Vec<Read>, Vec<phonelogs_crash::ParsedFile>, usize) {
    let mut reads = Vec::new();
    let mut passthrough = Vec::new();
    let mut failed = 0usize;
    for file in files {
        let bytes = match std::fs::read(file) {
            Ok(bytes) => bytes,
            Err(error) => {
                eprintln!("phonelogs: cannot read {}: {error}", file.display());
                failed += 1;
                continue;
            }
        };
        let parsed = match phonelogs_crash::parse_any(&bytes, format) {
            Ok(parsed) => parsed,
            Err(error) => {
                eprintln!("phonelogs: {}: {error}", file.display());
                failed += 1;
                continue;
            }
        };
        let mut reports = parsed.reports.clone();
        if let Some(trace) = &parsed.backtrace {
            // A `debuggerd -b` dump has no report; its frames are symbolicated as one.
            reports.push(Report {
                kind: CrashKind::NativeCrash,
                time: None,
                pid: trace.pid,
                process: trace.process_name.clone().unwrap_or_default(),
                summary: "debuggerd -b".to_owned(),
                text: String::from_utf8_lossy(&bytes).into_owned(),
                warnings: Vec::new(),
            });
        }
        for report in reports {
            reads.push(apply(symbols, report, version));
        }
        let rest = phonelogs_crash::ParsedFile {
            reports: Vec::new(),
            backtrace: None,
            ..parsed
        };
        passthrough.push(rest);
    }
    (reads, passthrough, failed)
}

/// One group of reports with the same fingerprint: its newest report, with the group's
/// heading, fingerprint and the symbols used (or as one JSON object).
fn write_group(
    out: &mut impl std::io::Write,
    read: &Read,
    group: &fingerprint::Group,
    json: bool,
) -> Result<()> {
    if json {
        let mut value = serde_json::to_value(&read.report)?;
        if let Some(object) = value.as_object_mut() {
            object.insert("fingerprint".into(), group.fingerprint.clone().into());
            object.insert(
                "blamed_frame".into(),
                serde_json::to_value(&read.analysis.blamed_frame)?,
            );
            object.insert(
                "occurrences".into(),
                serde_json::to_value(&group.occurrences)?,
            );
            object.insert("symbols".into(), serde_json::to_value(&read.symbols)?);
        }
        writeln!(out, "{value}")?;
    } else {
        writeln!(
            out,
            "{}",
            fingerprint::group_heading(read.report.kind, group, &read.analysis)
        )?;
        writeln!(out, "{}", render_heading(&read.report))?;
        writeln!(
            out,
            "fingerprint {}; {}",
            group.fingerprint,
            read.symbols.describe()
        )?;
        out.write_all(read.report.text.as_bytes())?;
        if !read.report.text.ends_with('\n') {
            writeln!(out)?;
        }
        writeln!(out)?;
    }
    Ok(())
}

fn apply(symbols: &SymbolsDir, mut report: Report, version: Option<&str>) -> Read {
    let (app, file_version) = app_of(&report);
    let version = version.map(str::to_owned).or(file_version);
    let applied = symbols.apply(
        Target {
            app: &app,
            version: version.as_deref(),
        },
        &report,
    );
    report.text = applied.text;
    report.summary = applied.summary;
    let mut code = AppCode::for_app(&app, &report.process);
    code.native
        .extend(symbols.index(&app).iter().map(|entry| entry.name.clone()));
    let analysis = fingerprint::analyse(report.kind, &report.summary, &report.text, &code);
    Read {
        report,
        analysis,
        symbols: applied.symbols,
    }
}

/// The app (and version, when the report says) a report belongs to: an Android process's
/// package (`com.example.app:service` → `com.example.app`); an iPhone report's `Identifier:`
/// and the build number in `Version: 1.0 (7)`.
fn app_of(report: &Report) -> (String, Option<String>) {
    match report.kind {
        CrashKind::Crash | CrashKind::Watchdog => {
            let field = |name: &str| {
                report
                    .text
                    .lines()
                    .find_map(|line| line.strip_prefix(name).map(|rest| rest.trim().to_owned()))
            };
            let app = field("Identifier:").unwrap_or_else(|| report.process.clone());
            let version = field("Version:").and_then(|v| {
                let inner = v.rsplit_once('(')?.1.strip_suffix(')')?;
                Some(inner.trim().to_owned())
            });
            (app, version)
        }
        _ => (
            report
                .process
                .split(':')
                .next()
                .unwrap_or_default()
                .to_owned(),
            None,
        ),
    }
}

/// How long the doctor waits for one phone to describe one app (a `dumpsys package` or an
/// installation_proxy lookup); the drivers' own timeouts apply inside it.
const APP_INFO_TIMEOUT: Duration = Duration::from_secs(10);

/// `phonelogs doctor --symbols DIR`: for every app with a folder in `dir`, one finding per
/// phone reached where it is installed (its installed version, and whether symbols are filed
/// for it, [`installed_finding`]), or one saying which versions are filed when it is installed
/// on none. Reads only each app's description (`app_info`), never a log line. A phone that
/// cannot be reached is left to the doctor's own findings.
pub async fn doctor_findings(dir: &Path, phones: &Phones) -> Vec<Finding> {
    let symbols = match SymbolsDir::open(dir) {
        Ok(symbols) => symbols,
        Err(error) => {
            return vec![Finding {
                check: "symbols directory".into(),
                ok: false,
                detail: error.to_string(),
                fix: Some(format!(
                    "create it, or file symbols with `phonelogs symbols add --dir {} APP VERSION FILE…`",
                    dir.display()
                )),
            }];
        }
    };
    let apps: Vec<AppId> = symbols
        .apps()
        .iter()
        .filter_map(|app| AppId::parse(app).ok())
        .collect();
    if apps.is_empty() {
        return vec![Finding {
            check: "symbols directory".into(),
            ok: true,
            detail: format!("{}: no app has symbols yet", dir.display()),
            fix: None,
        }];
    }
    let online = online_phones(phones).await;
    let mut findings = Vec::new();
    for app in &apps {
        let mut installed = false;
        for (device, driver) in &online {
            match driver.app_info(&device.serial, app).await {
                Ok(info) => {
                    installed = true;
                    let version = info.version.as_deref();
                    let phone = (device.info.id.as_str(), device.info.platform);
                    findings.push(installed_finding(&symbols, phone, app.as_str(), version));
                }
                Err(phonelogs_driver::Error::NotFound(_)) => {}
                Err(error) => findings.push(Finding {
                    check: format!("symbols for {app} on {}", device.info.id),
                    ok: false,
                    detail: format!("cannot read its installed version: {error}"),
                    fix: Some("see the doctor's finding for this phone above".into()),
                }),
            }
        }
        if !installed {
            findings.push(not_installed_finding(&symbols, app.as_str(), online.len()));
        }
    }
    findings
}

/// The phones that can be read now, named as the MCP server names them, each with its
/// driver behind the gateway's timeouts.
async fn online_phones(phones: &Phones) -> Vec<(NamedDevice, GuardedLogger)> {
    let list = match phones.list().await {
        Ok(list) => list,
        Err(error) => {
            tracing::warn!(error = %format!("{error:#}"), "cannot list the phones");
            return Vec::new();
        }
    };
    list.devices
        .into_iter()
        .filter(|device| device.info.state == DeviceState::Online)
        .filter_map(|device| {
            let driver = phones.driver_of(&device)?;
            Some((device, GuardedLogger::new(driver, APP_INFO_TIMEOUT)))
        })
        .collect()
}

/// The one decision of the doctor: whether the symbols filed for `app` match the version
/// installed on `phone` (its name and platform), by the rule the gateway applies them with
/// ([`SymbolsDir::version_folder`]).
fn installed_finding(
    symbols: &SymbolsDir,
    (phone, platform): (&str, Platform),
    app: &str,
    installed: Option<&str>,
) -> Finding {
    let check = format!("symbols for {app} on {phone}");
    let files = match platform {
        Platform::Android => "mapping.txt lib….so",
        Platform::Ios => "App.dSYM",
    };
    let add = |version: &str| {
        format!(
            "`phonelogs symbols add --dir {} {app} {version} {files}` (the files of that build)",
            symbols.root().display()
        )
    };
    let target = Target {
        app,
        version: installed,
    };
    let (ok, detail, fix) = match symbols.version_folder(target) {
        Ok(version) => {
            let files = contents(symbols, app, &version);
            match (installed, files.is_empty()) {
                (_, true) => (
                    false,
                    format!("installed version {version}; its folder holds no symbol file"),
                    Some(add(&version)),
                ),
                (Some(_), false) => (
                    true,
                    format!("installed version {version}; symbols filed for {version}: {files}"),
                    None,
                ),
                (None, false) => (
                    true,
                    format!(
                        "the phone does not say its installed version; the only version filed, {version}, is used: {files}"
                    ),
                    None,
                ),
            }
        }
        Err(NotMatched::NoVersionFolder {
            version, available, ..
        }) => (
            false,
            format!(
                "no symbols for the installed version {version}; filed: {}",
                available.join(", ")
            ),
            Some(add(&version)),
        ),
        Err(NotMatched::VersionUnknown { available, .. }) => (
            false,
            format!(
                "the phone does not say its installed version, and several are filed ({}): none is used",
                available.join(", ")
            ),
            Some("keep only the installed version's folder for this app".to_owned()),
        ),
        Err(other) => (
            false,
            SymbolsUsed {
                not_matched: vec![other],
                ..SymbolsUsed::default()
            }
            .describe(),
            None,
        ),
    };
    Finding {
        check,
        ok,
        detail,
        fix,
    }
}

/// An app with symbols that no phone reached has installed: which versions are filed, and
/// what each holds (informational).
fn not_installed_finding(symbols: &SymbolsDir, app: &str, phones: usize) -> Finding {
    let filed: Vec<String> = symbols
        .versions(app)
        .iter()
        .map(|version| {
            let files = contents(symbols, app, version);
            let files = if files.is_empty() {
                "empty".to_owned()
            } else {
                files
            };
            format!("{version} ({files})")
        })
        .collect();
    let where_ = match phones {
        0 => "no phone was reached to compare with".to_owned(),
        1 => "not installed on the phone reached".to_owned(),
        n => format!("not installed on any of the {n} phones reached"),
    };
    Finding {
        check: format!("symbols for {app}"),
        ok: true,
        detail: format!("{where_}; filed: {}", filed.join(", ")),
        fix: None,
    }
}

/// What one version folder holds: `mapping.txt, libx.so (build id …), App (UUID …)`; empty
/// when nothing.
fn contents(symbols: &SymbolsDir, app: &str, version: &str) -> String {
    let inventory = symbols.inventory(app, version);
    let mut parts = Vec::new();
    if inventory.mapping.is_some() {
        parts.push("mapping.txt".to_owned());
    }
    for entry in &inventory.debug_files {
        let id = match entry.kind {
            SymbolKind::Dsym => "UUID",
            _ => "build id",
        };
        parts.push(format!("{} ({id} {})", entry.name, entry.id));
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_with(folders: &[(&str, &str, bool)]) -> (tempfile::TempDir, SymbolsDir) {
        let dir = tempfile::tempdir().unwrap();
        for (app, version, mapping) in folders {
            let folder = dir.path().join(app).join(version);
            std::fs::create_dir_all(&folder).unwrap();
            if *mapping {
                std::fs::write(folder.join("mapping.txt"), "a.B -> c:\n").unwrap();
            }
        }
        let symbols = SymbolsDir::open(dir.path()).unwrap();
        (dir, symbols)
    }

    #[test]
    fn an_unknown_version_uses_the_only_folder_and_refuses_to_guess_among_several() {
        let (_dir, symbols) = dir_with(&[
            ("com.a", "4", true),
            ("com.b", "1", true),
            ("com.b", "2", true),
        ]);
        let one = installed_finding(&symbols, ("p", Platform::Ios), "com.a", None);
        assert!(one.ok, "{one:?}");
        assert_eq!(
            one.detail,
            "the phone does not say its installed version; the only version filed, 4, is used: mapping.txt"
        );
        let several = installed_finding(&symbols, ("p", Platform::Android), "com.b", None);
        assert!(!several.ok, "{several:?}");
        assert!(
            several.detail.contains("several are filed (1, 2)"),
            "{several:?}"
        );
    }

    #[test]
    fn an_empty_folder_for_the_installed_version_is_a_problem() {
        let (_dir, symbols) = dir_with(&[("com.a", "4", false)]);
        let empty = installed_finding(&symbols, ("p", Platform::Android), "com.a", Some("4"));
        assert!(!empty.ok, "{empty:?}");
        assert_eq!(
            empty.detail,
            "installed version 4; its folder holds no symbol file"
        );
        assert!(empty.fix.unwrap().contains(" com.a 4 mapping.txt lib….so`"),);
    }
}
