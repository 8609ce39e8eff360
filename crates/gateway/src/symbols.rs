//! The symbols step of a `phone_logs` call, before the one cut (`render.rs`), since it changes
//! the texts the cut measures: crash reports get the person's symbols applied (deobfuscated
//! Java frames, symbolicated native and iPhone frames), a blamed frame and a fingerprint, and
//! reports of one fingerprint become one heading (the newest text once, the others as
//! occurrences); with `context: N` each report shown gets the app's own lines of its pid in the
//! N seconds before it, read through the same guarded `app_logs` path as `kind: "logs"`. Stack
//! lines in `kind: "logs"` are deobfuscated too.
//!
//! The engine is `phonelogs-symbols`; nothing of what it reads or writes reaches the history,
//! which records counts only.

use std::fmt::Write as _;

use phonelogs_driver::{AppInfo, AppLogger, CrashKind, CrashReport, LogQuery, Platform};
use phonelogs_symbols::fingerprint::{self, Analysis, AppCode, Occurrence};
use phonelogs_symbols::{NotMatched, Report, SymbolsDir, SymbolsUsed};
use time::format_description::well_known::Rfc3339;

use crate::catalog;
use crate::session::{Session, Target};
use crate::types::{LogsKind, LogsRequest, TextShown};
use phonelogs_view::context::with_context;
use phonelogs_view::mask::Masker;
use phonelogs_view::masked::ShownLine;
use phonelogs_view::render::{HeadingExtras, Occurrences, RenderedReports, render_reports_with};

/// The most seconds `context` may ask for.
pub const MAX_CONTEXT_SECONDS: u32 = 30;

/// How many of the app's lines one context read may return: the window is a few seconds, and
/// the lines still have to fit in the result cap.
const CONTEXT_READ_LINES: usize = 20_000;

/// The `context` a request asks for: seconds, 1 to 30, kind crashes only.
pub(crate) fn context_of(request: &LogsRequest) -> Result<Option<u32>, String> {
    match request.context {
        None => Ok(None),
        Some(_) if request.kind != LogsKind::Crashes => Err(
            "context adds lines under crash reports: use it with kind \"crashes\", or read the lines with kind \"logs\" and since.".to_owned(),
        ),
        Some(seconds) if seconds == 0 || seconds > MAX_CONTEXT_SECONDS => Err(format!(
            "context must be between 1 and {MAX_CONTEXT_SECONDS} seconds, not {seconds}."
        )),
        Some(seconds) => Ok(Some(seconds)),
    }
}

/// Reports laid out within the cap, with the counts the message and the result give.
pub(crate) struct LaidOutReports {
    pub(crate) rendered: RenderedReports,
    /// How many reports the headings shown stand for (each occurrence counts).
    pub(crate) shown: usize,
    /// How many reports the cap left out (each occurrence of a heading left out counts).
    pub(crate) left_out: usize,
    /// What the message adds: the kinds, and which symbols were used or why none matched.
    pub(crate) note: Option<String>,
    /// How many secrets were masked in the reports shown.
    pub(crate) masked: usize,
}

impl LaidOutReports {
    /// The message: the counts of what is shown ("3 crash reports of Example, newest first."),
    /// what the cap did, then the kinds and the symbols used.
    pub(crate) fn message(&self, label: &str, cap: usize) -> String {
        let count = |wanted: TextShown| {
            self.rendered
                .views
                .iter()
                .filter(|v| v.text_shown == wanted)
                .count()
        };
        let mut message = catalog::reports_message(
            self.shown,
            label,
            count(TextShown::Cut),
            count(TextShown::FirstLine),
            self.left_out,
            cap,
        );
        if let Some(note) = &self.note {
            message.push(' ');
            message.push_str(note);
        }
        message
    }
}

/// One report with symbols applied and its analysis.
struct Symbolicated {
    report: CrashReport,
    analysis: Analysis,
    symbols: SymbolsUsed,
    /// Without a symbols directory: whether its frames look obfuscated or unsymbolicated.
    wants_symbols: bool,
}

/// The symbols engine on one text of the app, with the installed version `info` names: the
/// one place the gateway calls it (crash reports, and the native dumps of the debugging aids).
/// Returns the summary and text with symbols applied, and what was used or why nothing matched.
fn apply_symbols(
    dir: Option<&SymbolsDir>,
    info: &AppInfo,
    input: Report,
) -> (String, String, SymbolsUsed) {
    let Some(dir) = dir else {
        return (input.summary, input.text, SymbolsUsed::no_directory());
    };
    let target = phonelogs_symbols::Target {
        app: info.app.as_str(),
        version: info.version.as_deref(),
    };
    let applied = dir.apply(target, &input);
    (applied.summary, applied.text, applied.symbols)
}

fn symbolicate(dir: Option<&SymbolsDir>, info: &AppInfo, mut report: CrashReport) -> Symbolicated {
    let kind = report.kind;
    let input = Report {
        kind,
        time: None,
        pid: report.pid,
        process: report.process.clone(),
        summary: std::mem::take(&mut report.summary),
        text: std::mem::take(&mut report.text),
        warnings: Vec::new(),
    };
    let (summary, text, symbols) = apply_symbols(dir, info, input);
    report.summary = summary;
    report.text = text;
    let app = AppCode::for_app(info.app.as_str(), &report.process);
    let analysis = fingerprint::analyse(kind, &report.summary, &report.text, &app);
    let wants_symbols = dir.is_none() && fingerprint::wants_symbols(kind, &report.text, &app);
    Symbolicated {
        report,
        analysis,
        symbols,
        wants_symbols,
    }
}

/// The heading's `symbols`: the files used (their path inside the symbols directory) and why
/// others did not match; nothing without a symbols directory (the message says so once, where
/// it matters: [`catalog::no_symbols_sentence`]).
fn describe_symbols(dir: Option<&SymbolsDir>, used: &SymbolsUsed) -> Option<String> {
    dir?;
    let mut parts: Vec<String> = used
        .used
        .iter()
        .map(|file| {
            let path = inside(dir, &file.path);
            let kind = serde_plain_kind(file.kind);
            format!("{kind} {} ({} frames)", path.display(), file.frames)
        })
        .collect();
    if !used.not_matched.is_empty() {
        let reasons = SymbolsUsed {
            not_matched: used.not_matched.clone(),
            ..SymbolsUsed::default()
        }
        .describe();
        parts.push(reasons.trim_start_matches("symbols: ").to_owned());
    }
    Some(if parts.is_empty() {
        "nothing to apply".to_owned()
    } else {
        parts.join("; ")
    })
}

/// `no symbols directory`, in the engine's words.
fn no_directory() -> String {
    SymbolsUsed::no_directory()
        .describe()
        .trim_start_matches("symbols: ")
        .to_owned()
}

/// A symbol file as the agent is told of it: its path inside the symbols directory, else its
/// name alone, never where this computer keeps it.
fn inside<'a>(dir: Option<&SymbolsDir>, path: &'a std::path::Path) -> &'a std::path::Path {
    dir.and_then(|d| path.strip_prefix(d.root()).ok())
        .or_else(|| path.file_name().map(std::path::Path::new))
        .unwrap_or(path)
}

fn serde_plain_kind(kind: phonelogs_symbols::SymbolKind) -> &'static str {
    match kind {
        phonelogs_symbols::SymbolKind::Mapping => "mapping",
        phonelogs_symbols::SymbolKind::Elf => "library",
        phonelogs_symbols::SymbolKind::Dsym => "dSYM",
    }
}

fn rfc3339(time: time::OffsetDateTime) -> String {
    time.format(&Rfc3339).unwrap_or_else(|_| time.to_string())
}

/// Reports grouped by fingerprint: `reports[i]` with `extras[i]` stands for `sizes[i].0`
/// reports (`sizes[i].1`: without a symbols directory, whether its frames want symbols), and
/// `accounts[i]` says what symbols did for it.
type Grouped = (
    Vec<CrashReport>,
    Vec<HeadingExtras>,
    Vec<(usize, bool)>,
    Vec<SymbolsUsed>,
);

/// One heading per fingerprint, newest first: the newest report's text with the group's extras,
/// how many reports each stands for (and, without a symbols directory, whether its frames look
/// like symbols would help), and each group's symbols account.
fn group_reports(dir: Option<&SymbolsDir>, items: Vec<Symbolicated>) -> Grouped {
    let keys: Vec<(String, Occurrence)> = items
        .iter()
        .map(|item| {
            let occurrence = Occurrence {
                pid: item.report.pid,
                time: Some(item.report.time),
            };
            (item.analysis.fingerprint.clone(), occurrence)
        })
        .collect();
    let groups = fingerprint::group(&keys);
    let mut items: Vec<Option<Symbolicated>> = items.into_iter().map(Some).collect();
    let mut out = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for group in groups {
        let Some(newest) = items.get_mut(group.newest).and_then(Option::take) else {
            continue;
        };
        let kind = newest.report.kind;
        let times: Vec<time::OffsetDateTime> =
            group.occurrences.iter().filter_map(|o| o.time).collect();
        let occurrences = Occurrences {
            count: group.occurrences.len(),
            first: times.first().map(|t| rfc3339(*t)).unwrap_or_default(),
            last: times.last().map(|t| rfc3339(*t)).unwrap_or_default(),
            pids: group.occurrences.iter().filter_map(|o| o.pid).collect(),
        };
        let symbols = describe_symbols(dir, &newest.symbols);
        let mut detail = fingerprint::group_heading(kind, &group, &newest.analysis);
        let _ = write!(detail, " · fingerprint {}", group.fingerprint);
        if occurrences.count > 1 {
            let pids: Vec<String> = occurrences.pids.iter().map(u32::to_string).collect();
            let _ = write!(detail, " · pids {}", pids.join(", "));
        }
        if let Some(symbols) = &symbols {
            let _ = write!(detail, " · symbols: {symbols}");
        }
        let extras = HeadingExtras {
            fingerprint: group.fingerprint.clone(),
            blamed_frame: newest.analysis.blamed_frame.as_ref().map(|f| f.short()),
            occurrences,
            symbols,
            detail,
        }
        .cut_to_heading();
        out.2.push((group.members.len(), newest.wants_symbols));
        out.3.push(newest.symbols);
        out.0.push(newest.report);
        out.1.push(extras);
    }
    out
}

/// The version word of the app's platform: `versionCode` or `CFBundleVersion`.
fn version_word(platform: Platform) -> &'static str {
    match platform {
        Platform::Ios => "CFBundleVersion",
        Platform::Android => "versionCode",
    }
}

/// What the message says of the symbols used for the reports shown: which files were used, or
/// that none matched the installed version. Nothing without a symbols directory (each heading
/// says so).
fn symbols_sentence(
    dir: Option<&SymbolsDir>,
    accounts: &[SymbolsUsed],
    label: &str,
    platform: Platform,
) -> Option<String> {
    dir?;
    let mut used: Vec<String> = Vec::new();
    let mut reasons: Vec<String> = Vec::new();
    let word = version_word(platform);
    for account in accounts {
        for file in &account.used {
            let path = inside(dir, &file.path).display().to_string();
            let named = format!("{} {path}", serde_plain_kind(file.kind));
            if !used.contains(&named) {
                used.push(named);
            }
        }
        for reason in &account.not_matched {
            let text = match reason {
                NotMatched::NoVersionFolder {
                    version, available, ..
                } => format!(
                    "no mapping matched {word} {version} of {label} (filed: {})",
                    available.join(", ")
                ),
                NotMatched::NoAppFolder { app } => format!("none are filed for {app}"),
                NotMatched::NoMapping { version, .. } => {
                    format!("no mapping.txt is filed for {word} {version} of {label}")
                }
                other => SymbolsUsed {
                    not_matched: vec![other.clone()],
                    ..SymbolsUsed::default()
                }
                .describe()
                .trim_start_matches("symbols: ")
                .to_owned(),
            };
            if !reasons.contains(&text) {
                reasons.push(text);
            }
        }
    }
    let mut sentence = String::new();
    if !used.is_empty() {
        let _ = write!(sentence, "Symbols used: {}.", first_few(&used, ", "));
    }
    if !reasons.is_empty() {
        if !sentence.is_empty() {
            sentence.push(' ');
        }
        let _ = write!(sentence, "Symbols: {}.", first_few(&reasons, "; "));
    }
    (!sentence.is_empty()).then_some(sentence)
}

/// The most files or reasons the message names; a dump naming hundreds of libraries must not
/// fill the agent's context with them.
const SENTENCE_ITEMS: usize = 5;

/// The first [`SENTENCE_ITEMS`] of `items` joined by `separator`, and how many more there are.
fn first_few(items: &[String], separator: &str) -> String {
    let mut text = items
        .iter()
        .take(SENTENCE_ITEMS)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(separator);
    if items.len() > SENTENCE_ITEMS {
        let _ = write!(text, "{separator}and {} more", items.len() - SENTENCE_ITEMS);
    }
    text
}

/// "2 kinds: Java crash ×2 (…) IllegalStateException at …; ANR ×1 (…) ANR." when reports were
/// grouped.
fn kinds_sentence(extras: &[HeadingExtras], reports: usize) -> Option<String> {
    if extras.len() >= reports {
        return None;
    }
    let kinds: Vec<&str> = extras
        .iter()
        .map(|e| e.detail.split(" · ").next().unwrap_or(""))
        .collect();
    Some(format!("{} kinds: {}.", extras.len(), kinds.join("; ")))
}

/// What symbols did for a native dump of the app (`debuggerd -b`, a tombstone).
pub(crate) struct DumpSymbols {
    /// The account in the words of a crash report's heading ([`describe_symbols`]); without a
    /// symbols directory, `no symbols directory` only when the dump's frames of the app look
    /// unsymbolicated, else nothing.
    pub(crate) heading: Option<String>,
    /// The message's sentence: the files used, or why none matched the installed version;
    /// `None` without a symbols directory (the heading says so).
    pub(crate) sentence: Option<String>,
}

impl DumpSymbols {
    /// Adds the sentence, if any, to an aid's message.
    pub(crate) fn add_to(&self, message: &mut String) {
        if let Some(sentence) = &self.sentence {
            message.push(' ');
            message.push_str(sentence);
        }
    }
}

impl Session {
    /// Applies symbols to a native dump of the app's process (`debuggerd -b`'s text, a
    /// tombstone) as to a native crash report: every line stays as the phone printed it, and a
    /// frame of a filed library is followed by its function and `file:line` (inlined frames
    /// first). The version is the installed one `target` was read with.
    pub(crate) fn symbolicate_dump(&self, target: &Target, text: &mut String) -> DumpSymbols {
        let dir = self.gateway().symbols();
        let input = Report {
            kind: CrashKind::NativeCrash,
            time: None,
            pid: None,
            process: target.info.app.to_string(),
            summary: String::new(),
            text: std::mem::take(text),
            warnings: Vec::new(),
        };
        let (_, symbolicated, used) = apply_symbols(dir, &target.info, input);
        *text = symbolicated;
        let platform = self.driver(target.driver_index).capabilities().platform;
        let heading = match describe_symbols(dir, &used) {
            // Cut as a crash report's heading is: one dump can name many libraries.
            Some(account) => Some(phonelogs_view::render::heading_part(&account)),
            None => {
                let app = AppCode::for_app(target.info.app.as_str(), target.info.app.as_str());
                fingerprint::wants_symbols(CrashKind::NativeCrash, text, &app).then(no_directory)
            }
        };
        DumpSymbols {
            heading,
            sentence: symbols_sentence(dir, &[used], &target.label, platform),
        }
    }

    /// [`Session::symbolicate_dump`] for a tombstone's bytes. A tombstone is text; one that is
    /// not UTF-8 is kept byte for byte (symbols would have to rewrite it) and the account says
    /// so.
    pub(crate) fn symbolicate_tombstone(
        &self,
        target: &Target,
        bytes: Vec<u8>,
    ) -> (Vec<u8>, DumpSymbols) {
        match String::from_utf8(bytes) {
            Ok(mut text) => {
                let symbols = self.symbolicate_dump(target, &mut text);
                (text.into_bytes(), symbols)
            }
            Err(error) => {
                let dir = self.gateway().symbols();
                let heading = dir.map(|_| {
                    "the tombstone is not UTF-8 text; it was saved as the phone printed it"
                        .to_owned()
                });
                let symbols = DumpSymbols {
                    heading,
                    sentence: None,
                };
                (error.into_bytes(), symbols)
            }
        }
    }

    /// Applies symbols, groups by fingerprint, adds the context lines, and lays the reports
    /// out within the cap.
    pub(crate) async fn symbolicated_reports(
        &self,
        target: &Target,
        context: Option<u32>,
        reports: Vec<CrashReport>,
        masker: Option<&Masker>,
    ) -> Result<LaidOutReports, phonelogs_driver::Error> {
        let dir = self.gateway().symbols();
        let total = reports.len();
        let items: Vec<Symbolicated> = reports
            .into_iter()
            .map(|report| symbolicate(dir, &target.info, report))
            .collect();
        let (mut reports, extras, sizes, accounts) = group_reports(dir, items);
        let mut in_context = Vec::new();
        if let Some(seconds) = context {
            in_context = self
                .add_context(target, seconds, &mut reports, masker)
                .await?;
        }
        let cap = self.gateway().result_cap();
        let mut rendered = render_reports_with(&reports, &extras, cap, masker);
        // The context lines came masked: their secrets are counted with their report's.
        for (view, count) in rendered.views.iter_mut().zip(in_context) {
            view.masked += count;
        }
        let kept = rendered.views.len();
        let shown: usize = sizes.iter().take(kept).map(|(size, _)| size).sum();
        let platform = self.driver(target.driver_index).capabilities().platform;
        // Built from the reports' headings before they were masked (the render masks its own
        // copy): masked here the same way (issue 37: an iPhone crash's reason in "N kinds:").
        let kinds = kinds_sentence(&extras[..kept.min(extras.len())], shown).map(|sentence| {
            masker.map_or_else(|| sentence.clone(), |m| m.line(&sentence).text.into_owned())
        });
        let wanting = sizes.iter().take(kept).filter(|(_, wants)| *wants).count();
        let symbols = symbols_sentence(dir, &accounts[..kept], &target.label, platform)
            .or_else(|| catalog::no_symbols_sentence(wanting));
        let note = match (kinds, symbols) {
            (Some(a), Some(b)) => Some(format!("{a} {b}")),
            (a, b) => a.or(b),
        };
        Ok(LaidOutReports {
            masked: rendered.views.iter().map(|v| v.masked).sum(),
            rendered,
            shown,
            left_out: total - shown,
            note,
        })
    }

    /// Adds under each report the app's own lines of its pid in the `seconds` before it, read
    /// once through the guarded `app_logs` path (the uid checks and refusals of `kind: "logs"`).
    /// A report's time is often whole seconds (the drop box prints no fraction), so the window
    /// ends a second after it.
    /// The lines are masked as one read before any is chosen ([`MaskedRead`]); returns how
    /// many secrets were masked in the lines shown under each report.
    async fn add_context(
        &self,
        target: &Target,
        seconds: u32,
        reports: &mut [CrashReport],
        masker: Option<&Masker>,
    ) -> Result<Vec<usize>, phonelogs_driver::Error> {
        let window = time::Duration::seconds(i64::from(seconds));
        let Some(oldest) = reports.iter().map(|r| r.time).min() else {
            return Ok(Vec::new());
        };
        let driver = self.driver(target.driver_index);
        if !driver.capabilities().logs {
            for report in reports.iter_mut() {
                report.text = format!(
                    "{}\n--- no lines before it: this phone's driver cannot read lines ---\n",
                    report.text.trim_end()
                );
            }
            return Ok(Vec::new());
        }
        // Checked, as every step below: a phone's report can be timed at the `time` crate's
        // limits (a clock or a dump that says year 9999 or -9999), where `-` and `+` panic; a
        // window past a limit just ends there.
        let from_oldest = oldest
            .checked_sub(window)
            .unwrap_or(time::PrimitiveDateTime::MIN.assume_utc());
        let query = LogQuery::since(from_oldest, CONTEXT_READ_LINES);
        let result = driver
            .own_logs(&target.device, &target.info, &query)
            .await?;
        // Borrowed pieces, one per line of text, masked as one read (a key block the app
        // logged line by line is masked whole): each is copied only to be rendered.
        let masked = self.masked_read(target, &result.lines, masker);
        let lines = masked.pieces();
        let local = self.gateway().local_offset();
        let cap = self.gateway().result_cap();
        Ok(reports
            .iter_mut()
            .map(|report| with_context(report, &lines, (seconds, window), (local, cap)))
            .collect())
    }

    /// Deobfuscates the Java frames in the lines shown (`kind: "logs"`), one line at a time; a
    /// frame that inlined others becomes several lines, each a line of its own. Adds to `notes`
    /// which mapping was used, or why none matched, when a line held a frame.
    pub(crate) fn symbolicated_lines(
        &self,
        target: &Target,
        lines: Vec<ShownLine>,
        notes: &mut Vec<String>,
    ) -> Vec<ShownLine> {
        let Some(dir) = self.gateway().symbols() else {
            return lines;
        };
        let app = phonelogs_symbols::Target {
            app: target.info.app.as_str(),
            version: target.info.version.as_deref(),
        };
        let mut account = SymbolsUsed::default();
        let mut out = Vec::with_capacity(lines.len());
        for line in lines {
            if !line.line().text.contains("at ") {
                out.push(line);
                continue;
            }
            let (text, used) = dir.apply_to_logs(app, &line.line().text);
            merge(&mut account, used);
            if text == line.line().text || text.is_empty() {
                out.push(line);
                continue;
            }
            // Made from the masked text: the secrets it held are counted once, on its first line.
            for (index, piece) in phonelogs_view::lines::split_lines(&text)
                .into_iter()
                .enumerate()
            {
                let masked = if index == 0 { line.masked() } else { 0 };
                out.push(line.with_text(piece.to_owned(), masked));
            }
        }
        let platform = self.driver(target.driver_index).capabilities().platform;
        if let Some(sentence) = symbols_sentence(Some(dir), &[account], &target.label, platform) {
            notes.push(sentence);
        }
        out
    }
}

/// Adds one line's account to the call's: frames of a file summed, reasons once.
fn merge(into: &mut SymbolsUsed, from: SymbolsUsed) {
    if into.version.is_none() {
        into.version = from.version;
    }
    for file in from.used {
        match into.used.iter_mut().find(|u| u.path == file.path) {
            Some(known) => known.frames += file.frames,
            None => into.used.push(file),
        }
    }
    for reason in from.not_matched {
        if !into.not_matched.contains(&reason) {
            into.not_matched.push(reason);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_account_names_the_first_few_and_counts_the_rest() {
        let items: Vec<String> = (0..900).map(|i| format!("libx{i}.so")).collect();
        let text = first_few(&items, "; ");
        assert_eq!(
            text,
            "libx0.so; libx1.so; libx2.so; libx3.so; libx4.so; and 895 more"
        );
        assert_eq!(first_few(&items[..2], ", "), "libx0.so, libx1.so");
        // The dump's heading is cut as a crash report's is.
        let heading = phonelogs_view::render::heading_part(&items.join("; "));
        assert!(heading.len() <= 300 + "…".len(), "{}", heading.len());
    }
}
