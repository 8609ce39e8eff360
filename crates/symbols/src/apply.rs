//! Applying symbols to a report's text: Java/Kotlin frames deobfuscated with the app
//! version's mapping, Android native frames and iPhone frames symbolicated from the debug
//! file their build id or image UUID names; and the account of what was used or why nothing
//! matched.

use std::fmt::Write as _;
use std::path::PathBuf;

use phonelogs_crash::{CrashKind, Report};
use serde::{Deserialize, Serialize};

use crate::dir::{SymbolKind, SymbolsDir};
use crate::frames::{parse_ips_frame, parse_ips_image, parse_native_frame};
use crate::native::SourceFrame;

/// One symbol file that was used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsedFile {
    /// Mapping, ELF or dSYM.
    pub kind: SymbolKind,
    /// The file.
    pub path: PathBuf,
    /// Its build id or UUID (debug files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// How many frames it changed.
    pub frames: usize,
}

/// Why no symbol file matched (part of) a report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum NotMatched {
    /// No symbols directory was given.
    NoDirectory,
    /// The directory has no folder for the app.
    NoAppFolder {
        /// The app.
        app: String,
    },
    /// The app's folder has no folder for its installed version.
    NoVersionFolder {
        /// The app.
        app: String,
        /// The installed version.
        version: String,
        /// The versions that are there.
        available: Vec<String>,
    },
    /// The installed version is unknown and the app has several version folders.
    VersionUnknown {
        /// The app.
        app: String,
        /// The versions that are there.
        available: Vec<String>,
    },
    /// The version folder has no `mapping.txt`, and the report has Java frames.
    NoMapping {
        /// The app.
        app: String,
        /// The version.
        version: String,
    },
    /// A native frame names a library whose build id matches none filed for the app.
    BuildIdMismatch {
        /// The library.
        library: String,
        /// The build id the frame names.
        build_id: String,
        /// The build ids filed for a library of that name.
        filed: Vec<String>,
    },
    /// A native frame of a library filed for the app names no build id.
    NoBuildId {
        /// The library.
        library: String,
    },
    /// An iPhone image's UUID matches no dSYM filed for the app.
    UuidMismatch {
        /// The image.
        image: String,
        /// Its UUID.
        uuid: String,
    },
    /// A symbol file was there but could not be read.
    Unreadable {
        /// The file, relative to the symbols directory (never a path on this computer: the
        /// account reaches the agent).
        path: PathBuf,
        /// Why.
        error: String,
    },
}

/// What symbols did for one report: the files used, and why others did not match.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SymbolsUsed {
    /// The app version whose folder was used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The files used.
    pub used: Vec<UsedFile>,
    /// Why nothing (or not everything) matched.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_matched: Vec<NotMatched>,
}

impl SymbolsUsed {
    /// The account for a report read without a symbols directory.
    pub fn no_directory() -> SymbolsUsed {
        SymbolsUsed {
            not_matched: vec![NotMatched::NoDirectory],
            ..SymbolsUsed::default()
        }
    }

    /// One line for a heading: `symbols: mapping.txt (12 frames)` or why none matched.
    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = self
            .used
            .iter()
            .map(|u| {
                let name = u
                    .path
                    .file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
                format!("{name} ({} frames)", u.frames)
            })
            .collect();
        parts.extend(self.not_matched.iter().map(describe_not_matched));
        if parts.is_empty() {
            "symbols: nothing to apply".to_owned()
        } else {
            format!("symbols: {}", parts.join("; "))
        }
    }
}

fn describe_not_matched(reason: &NotMatched) -> String {
    match reason {
        NotMatched::NoDirectory => "no symbols directory".to_owned(),
        NotMatched::NoAppFolder { app } => format!("no folder for {app}"),
        NotMatched::NoVersionFolder {
            app,
            version,
            available,
        } => format!(
            "no folder for {app} version {version} (there: {})",
            available.join(", ")
        ),
        NotMatched::VersionUnknown { app, available } => format!(
            "the installed version of {app} is unknown and several are there ({})",
            available.join(", ")
        ),
        NotMatched::NoMapping { app, version } => {
            format!("no mapping.txt for {app} version {version}")
        }
        NotMatched::BuildIdMismatch {
            library, build_id, ..
        } => format!("{library}: build id {build_id} matches no filed library"),
        NotMatched::NoBuildId { library } => format!("{library}: the frame names no build id"),
        NotMatched::UuidMismatch { image, uuid } => {
            format!("{image}: UUID {uuid} matches no filed dSYM")
        }
        NotMatched::Unreadable { path, error } => format!("{}: {error}", path.display()),
    }
}

/// The app a report belongs to, as symbols need it.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// The package name or bundle id (the symbols folder's name).
    pub app: &'a str,
    /// The installed `versionCode` or `CFBundleVersion`, when known.
    pub version: Option<&'a str>,
}

/// A report's text (and summary) with symbols applied, and the account of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The deobfuscated or symbolicated text.
    pub text: String,
    /// The summary, with an obfuscated exception class renamed.
    pub summary: String,
    /// What was used, or why nothing matched.
    pub symbols: SymbolsUsed,
}

impl SymbolsDir {
    /// Applies what this directory holds for `target` to a report.
    pub fn apply(&self, target: Target<'_>, report: &Report) -> Applied {
        let mut used = SymbolsUsed::default();
        let mut text = report.text.clone();
        let mut summary = report.summary.clone();
        let android = matches!(
            report.kind,
            CrashKind::JavaCrash | CrashKind::NativeCrash | CrashKind::Anr
        );
        if !self.apps().iter().any(|a| a == target.app) {
            used.not_matched.push(NotMatched::NoAppFolder {
                app: target.app.to_owned(),
            });
            return Applied {
                text,
                summary,
                symbols: used,
            };
        }
        if android && has_java_frames(&text) {
            self.apply_java(target, &mut text, &mut summary, &mut used);
        }
        if android {
            self.apply_native(target, &mut text, &mut used);
        } else {
            self.apply_ips(target, &mut text, &mut used);
        }
        Applied {
            text,
            summary,
            symbols: used,
        }
    }

    /// Deobfuscates the Java frames in log lines (`kind: "logs"`) of `target`.
    pub fn apply_to_logs(&self, target: Target<'_>, text: &str) -> (String, SymbolsUsed) {
        let mut used = SymbolsUsed::default();
        let mut text = text.to_owned();
        let mut summary = String::new();
        if has_java_frames(&text) {
            self.apply_java(target, &mut text, &mut summary, &mut used);
        }
        (text, used)
    }

    /// The one rule for which version folder symbols of `target` come from: the installed
    /// version's folder, or, when the version is not known, the only folder there; else why
    /// none ([`NotMatched::NoVersionFolder`], with the versions there, or
    /// [`NotMatched::VersionUnknown`]). [`SymbolsDir::apply`] uses it, and so does
    /// `phonelogs doctor` to say whether the installed version has symbols.
    pub fn version_folder(&self, target: Target<'_>) -> Result<String, NotMatched> {
        let available = self.versions(target.app);
        match target.version {
            Some(version) if available.iter().any(|v| v == version) => Ok(version.to_owned()),
            Some(version) => Err(NotMatched::NoVersionFolder {
                app: target.app.to_owned(),
                version: version.to_owned(),
                available,
            }),
            None if available.len() == 1 => Ok(available.into_iter().next().unwrap_or_default()),
            None => Err(NotMatched::VersionUnknown {
                app: target.app.to_owned(),
                available,
            }),
        }
    }

    /// Which version folder to use ([`SymbolsDir::version_folder`]), noting why none.
    fn resolve_version(&self, target: Target<'_>, used: &mut SymbolsUsed) -> Option<String> {
        self.version_folder(target)
            .map_err(|reason| used.not_matched.push(reason))
            .ok()
    }

    fn apply_java(
        &self,
        target: Target<'_>,
        text: &mut String,
        summary: &mut String,
        used: &mut SymbolsUsed,
    ) {
        let Some(version) = self.resolve_version(target, used) else {
            return;
        };
        used.version = Some(version.clone());
        let Some(path) = self.mapping_path(target.app, &version) else {
            used.not_matched.push(NotMatched::NoMapping {
                app: target.app.to_owned(),
                version,
            });
            return;
        };
        let mapping = match self.mapping(&path) {
            Ok(mapping) => mapping,
            Err(error) => {
                used.not_matched
                    .push(self.unreadable(&path, error.without_path()));
                return;
            }
        };
        let (out, stats) = mapping.deobfuscate(text);
        *text = out;
        let (class, rest) = match summary.split_once(": ") {
            Some((class, rest)) => (class.trim(), Some(rest)),
            None => (summary.trim(), None),
        };
        if let Some(original) = mapping.remap_class(class) {
            *summary = match rest {
                Some(rest) => format!("{original}: {rest}"),
                None => original,
            };
        }
        used.used.push(UsedFile {
            kind: SymbolKind::Mapping,
            path,
            id: None,
            frames: stats.frames_mapped,
        });
    }

    fn apply_native(&self, target: Target<'_>, text: &mut String, used: &mut SymbolsUsed) {
        let index = self.index(target.app);
        let mut out = String::with_capacity(text.len() * 2);
        let mut changed = false;
        for raw in text.split_inclusive('\n') {
            out.push_str(raw);
            let line = raw.trim_end_matches(['\n', '\r']);
            let Some(frame) = parse_native_frame(line) else {
                continue;
            };
            let same_name: Vec<&crate::dir::DebugEntry> = index
                .iter()
                .filter(|e| e.kind == SymbolKind::Elf && e.name == frame.library)
                .collect();
            let Some(build_id) = frame.build_id.as_deref() else {
                if !same_name.is_empty() {
                    push_once(
                        used,
                        NotMatched::NoBuildId {
                            library: frame.library.to_owned(),
                        },
                    );
                }
                continue;
            };
            let Some(entry) = index
                .iter()
                .find(|e| e.kind == SymbolKind::Elf && e.id == build_id)
            else {
                if !same_name.is_empty() {
                    push_once(
                        used,
                        NotMatched::BuildIdMismatch {
                            library: frame.library.to_owned(),
                            build_id: build_id.to_owned(),
                            filed: same_name.iter().map(|e| e.id.clone()).collect(),
                        },
                    );
                }
                continue;
            };
            let looked_up = self.debug_file(&entry.path, build_id).map(|file| {
                let file = crate::dir::lock(&file);
                if file.id.as_deref() == Some(build_id) {
                    Ok(file.frames_at(frame.pc))
                } else {
                    Err(file.id.clone())
                }
            });
            let frames = match looked_up {
                Ok(Ok(frames)) => frames,
                Ok(Err(id)) => {
                    push_once(
                        used,
                        NotMatched::BuildIdMismatch {
                            library: frame.library.to_owned(),
                            build_id: build_id.to_owned(),
                            filed: id.into_iter().collect(),
                        },
                    );
                    continue;
                }
                Err(error) => {
                    push_once(used, self.unreadable(&entry.path, error.to_string()));
                    continue;
                }
            };
            if frames.is_empty() {
                continue;
            }
            if !raw.ends_with('\n') {
                out.push('\n');
            }
            push_source_frames(&mut out, frame.prefix, &frames);
            changed = true;
            count_use(used, SymbolKind::Elf, &entry.path, Some(build_id));
        }
        if changed {
            if !text.ends_with('\n') && out.ends_with('\n') {
                out.pop();
            }
            *text = out;
        }
    }

    fn apply_ips(&self, target: Target<'_>, text: &mut String, used: &mut SymbolsUsed) {
        let images: Vec<_> = text.lines().filter_map(parse_ips_image).collect();
        if images.is_empty() {
            return;
        }
        let index = self.index(target.app);
        let mut out = String::with_capacity(text.len() * 2);
        let mut changed = false;
        for raw in text.split_inclusive('\n') {
            out.push_str(raw);
            let line = raw.trim_end_matches(['\n', '\r']);
            let Some(frame) = parse_ips_frame(line) else {
                continue;
            };
            let Some(image) = images.iter().find(|i| i.name == frame.image) else {
                continue;
            };
            let Some(entry) = index
                .iter()
                .find(|e| e.kind == SymbolKind::Dsym && e.id == image.uuid)
            else {
                push_once(
                    used,
                    NotMatched::UuidMismatch {
                        image: image.name.to_owned(),
                        uuid: image.uuid.clone(),
                    },
                );
                continue;
            };
            let file = match self.debug_file(&entry.path, &image.uuid) {
                Ok(file) => file,
                Err(error) => {
                    push_once(used, self.unreadable(&entry.path, error.to_string()));
                    continue;
                }
            };
            let offset = frame.address.wrapping_sub(image.base);
            let frames = {
                let file = crate::dir::lock(&file);
                file.frames_at(file.text_base.wrapping_add(offset))
            };
            if frames.is_empty() {
                continue;
            }
            if !raw.ends_with('\n') {
                out.push('\n');
            }
            push_source_frames(&mut out, "", &frames);
            changed = true;
            count_use(used, SymbolKind::Dsym, &entry.path, Some(&image.uuid));
        }
        if changed {
            *text = out;
        }
    }
}

impl SymbolsDir {
    /// Why a symbol file could not be read, naming it inside the symbols directory only: the
    /// account reaches the agent, which has no business learning where this computer keeps its
    /// files (the user's name is in most home directories). `error` never names a path.
    fn unreadable(&self, path: &std::path::Path, error: String) -> NotMatched {
        let inside = path.strip_prefix(self.root()).map_or_else(
            |_| PathBuf::from(path.file_name().unwrap_or_default()),
            std::path::Path::to_owned,
        );
        NotMatched::Unreadable {
            path: inside,
            error,
        }
    }
}

fn has_java_frames(text: &str) -> bool {
    text.lines()
        .any(|line| crate::java::find_frame(line).is_some())
}

fn push_once(used: &mut SymbolsUsed, reason: NotMatched) {
    if !used.not_matched.contains(&reason) {
        used.not_matched.push(reason);
    }
}

fn count_use(used: &mut SymbolsUsed, kind: SymbolKind, path: &std::path::Path, id: Option<&str>) {
    if let Some(file) = used.used.iter_mut().find(|u| u.path == path) {
        file.frames += 1;
        return;
    }
    used.used.push(UsedFile {
        kind,
        path: path.to_owned(),
        id: id.map(str::to_owned),
        frames: 1,
    });
}

/// Writes symbolicated frames under a frame line, innermost first, as `addr2line -f -i` orders
/// them: `        function (file:line)`, `[inlined]` on those inlined into the next.
fn push_source_frames(out: &mut String, prefix: &str, frames: &[SourceFrame]) {
    for frame in frames {
        let _ = write!(out, "{prefix}        {}", frame.function);
        match (&frame.file, frame.line) {
            (Some(file), Some(line)) => {
                let _ = write!(out, " ({file}:{line})");
            }
            (Some(file), None) => {
                let _ = write!(out, " ({file})");
            }
            _ => {}
        }
        if frame.inlined {
            out.push_str(" [inlined]");
        }
        out.push('\n');
    }
}
