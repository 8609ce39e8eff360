//! `phonelogs symbols add` and `phonelogs report --symbols`: filing symbol files in the symbols
//! directory, and reading report files with symbols applied, grouped by fingerprint (see
//! `docs/symbols.md`).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use phonelogs_crash::{Format, Report, ReportKind, render_heading};
use phonelogs_symbols::fingerprint::{self, AppCode, Occurrence};
use phonelogs_symbols::{SymbolsDir, Target};

use crate::doctor::Finding;

/// Files each of `files` for `app` and `version` and prints where it went.
pub fn add(dir: &Path, app: &str, version: &str, files: &[PathBuf]) -> Result<()> {
    let app = phonelogs_driver::AppId::parse(app).context("APP")?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
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
        bail!("{failed} of {} files were not filed", files.len());
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
        .context("--format")?;
    let symbols = SymbolsDir::open(dir)?;
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
                kind: ReportKind::NativeCrash,
                time: None,
                pid: trace.pid,
                process: trace.process_name.clone().unwrap_or_default(),
                summary: "debuggerd -b".to_owned(),
                text: String::from_utf8_lossy(&bytes).into_owned(),
                warnings: Vec::new(),
            });
        }
        for report in reports {
            reads.push(apply(&symbols, report, version));
        }
        let rest = phonelogs_crash::ParsedFile {
            reports: Vec::new(),
            backtrace: None,
            ..parsed
        };
        passthrough.push(rest);
    }
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
        let read = &reads[group.newest];
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
                fingerprint::group_heading(read.report.kind, &group, &read.analysis)
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
        bail!("{failed} of {} files could not be read", files.len());
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
        ReportKind::Crash | ReportKind::Watchdog => {
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

/// `phonelogs doctor --symbols DIR`: one finding per app version in the directory, saying what
/// is there.
pub fn doctor_findings(dir: &Path) -> Vec<Finding> {
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
    let mut findings = Vec::new();
    for app in symbols.apps() {
        for version in symbols.versions(&app) {
            let inventory = symbols.inventory(&app, &version);
            let mut parts = Vec::new();
            if inventory.mapping.is_some() {
                parts.push("mapping.txt".to_owned());
            }
            for entry in &inventory.debug_files {
                parts.push(format!("{} ({})", entry.name, entry.id));
            }
            let ok = !parts.is_empty();
            findings.push(Finding {
                check: format!("symbols for {app} version {version}"),
                ok,
                detail: if ok {
                    parts.join(", ")
                } else {
                    "an empty folder".into()
                },
                fix: (!ok).then(|| {
                    format!("`phonelogs symbols add {app} {version} mapping.txt lib….so App.dSYM`")
                }),
            });
        }
    }
    if findings.is_empty() {
        findings.push(Finding {
            check: "symbols directory".into(),
            ok: true,
            detail: format!("{}: no app has symbols yet", dir.display()),
            fix: None,
        });
    }
    findings
}
