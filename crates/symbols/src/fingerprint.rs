//! The blamed frame, the fingerprint and grouping.
//!
//! The blamed frame is the first frame in the app's own code: a Java frame whose class is in
//! one of the app's package prefixes, a native frame of a library under the app's install
//! folder or filed for it, an iPhone frame in one of the app's own binary images. The
//! fingerprint hashes the report's kind, its exception type (digits and addresses removed) and
//! its top app frames (class and method, or library and function: no address, no line), so the
//! same crash has the same fingerprint on every phone, in every process, after every restart,
//! and different throw sites have different ones. It is computed on the deobfuscated text, so
//! it also survives a rebuild that renames classes.
//!
//! These rules read `phonelogs-crash`'s cut text and this crate's symbolicated lines, which is
//! why they live here and not in the parsers.

use std::fmt::Write as _;
use std::hash::Hasher as _;

use phonelogs_crash::CrashKind;
use serde::{Deserialize, Serialize};

use crate::frames::{parse_ips_frame, parse_ips_image, parse_native_frame};

/// How many app frames go into a fingerprint.
pub const FINGERPRINT_FRAMES: usize = 5;

/// What counts as the app's own code.
#[derive(Debug, Clone, Default)]
pub struct AppCode {
    /// Java package prefixes (`com.example.app`): a class in one, or below, is the app's.
    pub prefixes: Vec<String>,
    /// Path parts of the app's native libraries (its package name matches
    /// `/data/app/…/com.example.app-…/lib/…`), and names of libraries filed for it.
    pub native: Vec<String>,
    /// The app's own binary images on iPhone (its executable, its frameworks).
    pub images: Vec<String>,
}

impl AppCode {
    /// The app's code for an app id: its id as the Java prefix and the native path part, and
    /// `process` (the executable's name) as its own image.
    pub fn for_app(app: &str, process: &str) -> AppCode {
        AppCode {
            prefixes: vec![app.to_owned()],
            native: vec![app.to_owned()],
            images: Some(process.to_owned())
                .filter(|p| !p.is_empty())
                .into_iter()
                .collect(),
        }
    }
}

/// One frame as read from a report's text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Frame {
    /// `pkg.Class.method` (Java) or the function's name (native, iPhone); `??` when unknown.
    pub function: String,
    /// The library or image, for native and iPhone frames.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module: Option<String>,
    /// The source file, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The line, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// Whether it is in the app's own code.
    pub in_app: bool,
}

impl Frame {
    /// The frame as a heading shows it: `CheckoutActivity.onResume(CheckoutActivity.kt:142)`
    /// for Java (the class without its package), `crash_now (crash.c:7) in libfoo.so` else.
    pub fn short(&self) -> String {
        let mut out = String::new();
        if self.module.is_none() {
            let mut parts = self.function.rsplitn(3, '.');
            let method = parts.next().unwrap_or("");
            let class = parts.next().unwrap_or("");
            if class.is_empty() {
                out.push_str(method);
            } else {
                let _ = write!(out, "{class}.{method}");
            }
            match (&self.file, self.line) {
                (Some(file), Some(line)) => {
                    let _ = write!(out, "({file}:{line})");
                }
                (Some(file), None) => {
                    let _ = write!(out, "({file})");
                }
                _ => {}
            }
            return out;
        }
        out.push_str(&self.function);
        match (&self.file, self.line) {
            (Some(file), Some(line)) => {
                let _ = write!(out, " ({file}:{line})");
            }
            (Some(file), None) => {
                let _ = write!(out, " ({file})");
            }
            _ => {}
        }
        if let Some(module) = &self.module {
            let _ = write!(out, " in {module}");
        }
        out
    }

    /// Whether the frame looks like symbols would help it: a Java frame that looks obfuscated
    /// (a file R8 renames, `SourceFile` or `Unknown Source`, or a class and a method of one or
    /// two letters, `a.b.c`), or a native or iPhone frame of the app's own code with no
    /// function name.
    pub fn looks_unsymbolicated(&self) -> bool {
        if self.module.is_some() {
            return self.in_app && self.function == "??";
        }
        let short = |part: &str| {
            (1..=2).contains(&part.len()) && part.bytes().all(|b| b.is_ascii_alphabetic())
        };
        let mut parts = self.function.rsplitn(3, '.');
        let method = parts.next().unwrap_or("");
        let class = parts.next().unwrap_or("");
        matches!(self.file.as_deref(), Some("SourceFile" | "Unknown Source"))
            || (short(method) && short(class.rsplit('$').next().unwrap_or(class)))
    }

    fn key(&self) -> String {
        match &self.module {
            Some(module) => format!("{module}!{}", self.function),
            None => self.function.clone(),
        }
    }
}

/// Whether a report's frames look obfuscated or unsymbolicated
/// ([`Frame::looks_unsymbolicated`]): where a symbols directory would help.
pub fn wants_symbols(kind: CrashKind, text: &str, app: &AppCode) -> bool {
    frames(kind, text, app)
        .iter()
        .any(Frame::looks_unsymbolicated)
}

/// A report's fingerprint, blamed frame and exception type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Analysis {
    /// 16 hex digits, stable across runs and phones.
    pub fingerprint: String,
    /// The exception type the fingerprint uses (`java.lang.IllegalStateException`, `SIGSEGV`).
    pub exception: String,
    /// The first frame in the app's own code.
    pub blamed_frame: Option<Frame>,
}

/// Reads the frames of a report's text, in order.
pub fn frames(kind: CrashKind, text: &str, app: &AppCode) -> Vec<Frame> {
    match kind {
        CrashKind::Crash | CrashKind::Watchdog => ips_frames(text, app),
        _ => android_frames(text, app),
    }
}

fn android_frames(text: &str, app: &AppCode) -> Vec<Frame> {
    let mut out: Vec<Frame> = Vec::new();
    let mut last_native: Option<(usize, String)> = None;
    for line in text.lines() {
        if let Some((_, frame)) = crate::java::find_frame(line) {
            last_native = None;
            let class = frame.class();
            let in_app = app.prefixes.iter().any(|p| in_package(class, p));
            out.push(Frame {
                function: format!("{class}.{}", frame.method()),
                module: None,
                file: frame.file().map(str::to_owned),
                line: frame.line().and_then(|l| u32::try_from(l).ok()),
                in_app,
            });
            continue;
        }
        if let Some(frame) = parse_native_frame(line) {
            let in_app = app
                .native
                .iter()
                .any(|n| frame.path.contains(n.as_str()) || frame.library == n);
            out.push(Frame {
                function: frame.symbol.unwrap_or("??").to_owned(),
                module: Some(frame.library.to_owned()),
                file: None,
                line: None,
                in_app,
            });
            last_native = Some((out.len() - 1, format!("{}        ", frame.prefix)));
            continue;
        }
        // A symbolicated line under a native frame: the innermost one names the function.
        if let Some((index, indent)) = &last_native
            && let Some(rest) = line.strip_prefix(indent.as_str())
            && let Some(source) = parse_source_line(rest)
        {
            if let Some(frame) = out.get_mut(*index)
                && frame.file.is_none()
            {
                frame.function = source.0;
                frame.file = source.1;
                frame.line = source.2;
            }
            continue;
        }
        last_native = None;
    }
    out
}

fn ips_frames(text: &str, app: &AppCode) -> Vec<Frame> {
    let own: Vec<String> = text
        .lines()
        .filter_map(parse_ips_image)
        .map(|i| i.name.to_owned())
        .chain(app.images.iter().cloned())
        .collect();
    let mut out: Vec<Frame> = Vec::new();
    let mut last: Option<usize> = None;
    for line in text.lines() {
        if let Some(frame) = parse_ips_frame(line) {
            let after = line.split_once("\t0x").map_or("", |(_, rest)| rest);
            let symbol = after
                .split_once(' ')
                .map(|(_, s)| s.rsplit_once(" + ").map_or(s, |(name, _)| name))
                .filter(|s| !s.starts_with("0x"))
                .map(|s| s.split(" (").next().unwrap_or(s).to_owned());
            out.push(Frame {
                function: symbol.unwrap_or_else(|| "??".to_owned()),
                module: Some(frame.image.to_owned()),
                file: None,
                line: None,
                in_app: own.iter().any(|o| o == frame.image),
            });
            last = Some(out.len() - 1);
            continue;
        }
        if let Some(index) = last
            && let Some(rest) = line.strip_prefix("        ")
            && let Some(source) = parse_source_line(rest)
        {
            if let Some(frame) = out.get_mut(index)
                && frame.file.is_none()
            {
                frame.function = source.0;
                frame.file = source.1;
                frame.line = source.2;
            }
            continue;
        }
        last = None;
    }
    out
}

/// Reads `function (file:line)[ [inlined]]`, as `apply` writes it.
fn parse_source_line(rest: &str) -> Option<(String, Option<String>, Option<u32>)> {
    if rest.starts_with(char::is_whitespace) || rest.is_empty() {
        return None;
    }
    let rest = rest.strip_suffix(" [inlined]").unwrap_or(rest);
    match rest.rfind(" (") {
        Some(open) if rest.ends_with(')') => {
            let function = rest[..open].to_owned();
            let location = &rest[open + 2..rest.len() - 1];
            let (file, line) = match location.rsplit_once(':') {
                Some((file, line)) if line.parse::<u32>().is_ok() => {
                    (file.to_owned(), line.parse().ok())
                }
                _ => (location.to_owned(), None),
            };
            Some((function, Some(file), line))
        }
        _ => Some((rest.to_owned(), None, None)),
    }
}

fn in_package(class: &str, prefix: &str) -> bool {
    !prefix.is_empty()
        && class.starts_with(prefix)
        && matches!(class.as_bytes().get(prefix.len()), None | Some(b'.' | b'$'))
}

/// The exception type a fingerprint uses, from the report's kind and (deobfuscated) summary.
pub fn exception_type(kind: CrashKind, summary: &str) -> String {
    let first = summary.lines().next().unwrap_or("").trim();
    match kind {
        CrashKind::JavaCrash => first.split(": ").next().unwrap_or(first).trim().to_owned(),
        CrashKind::Anr => "ANR".to_owned(),
        CrashKind::NativeCrash => first
            .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .find(|t| t.starts_with("SIG") && t.len() > 3)
            .map_or_else(|| strip_numbers(first), str::to_owned),
        CrashKind::Crash | CrashKind::Watchdog => strip_numbers(first),
    }
}

/// Replaces every run of digits (and `0x…` hex) with `#`, so addresses, pids and counts drop.
fn strip_numbers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            if c == '0' && chars.peek() == Some(&'x') {
                chars.next();
                while chars.peek().is_some_and(char::is_ascii_hexdigit) {
                    chars.next();
                }
            }
            while chars.peek().is_some_and(char::is_ascii_digit) {
                chars.next();
            }
            out.push('#');
        } else {
            out.push(c);
        }
    }
    out
}

/// The fingerprint and blamed frame of a report whose text and summary have symbols applied.
pub fn analyse(kind: CrashKind, summary: &str, text: &str, app: &AppCode) -> Analysis {
    let frames = frames(kind, text, app);
    let exception = exception_type(kind, summary);
    let app_frames: Vec<&Frame> = frames.iter().filter(|f| f.in_app).collect();
    let top: Vec<&Frame> = if app_frames.is_empty() {
        frames.iter().take(FINGERPRINT_FRAMES).collect()
    } else {
        app_frames
            .iter()
            .take(FINGERPRINT_FRAMES)
            .copied()
            .collect()
    };
    let mut hasher = twox_hash::XxHash3_64::default();
    hasher.write(kind.name().as_bytes());
    hasher.write(b"\n");
    hasher.write(exception.as_bytes());
    for frame in top {
        hasher.write(b"\n");
        hasher.write(frame.key().as_bytes());
    }
    Analysis {
        fingerprint: format!("{:016x}", hasher.finish()),
        exception,
        blamed_frame: app_frames.first().map(|f| (*f).clone()),
    }
}

/// One report's place in a group: its pid and time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Occurrence {
    /// The process id.
    pub pid: Option<u32>,
    /// When (RFC 3339, or `null`).
    #[serde(with = "time::serde::rfc3339::option")]
    pub time: Option<time::OffsetDateTime>,
}

/// Reports of one fingerprint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// The fingerprint.
    pub fingerprint: String,
    /// The indexes of its reports in the input, oldest first.
    pub members: Vec<usize>,
    /// The index of the newest report (whose text is shown).
    pub newest: usize,
    /// Every member's pid and time, oldest first.
    pub occurrences: Vec<Occurrence>,
}

/// Groups reports by fingerprint, in the order each fingerprint first appears. Within a group
/// members go oldest first (reports without a time first, in input order); the newest is the
/// last.
pub fn group(items: &[(String, Occurrence)]) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for (index, (fingerprint, _)) in items.iter().enumerate() {
        match groups.iter_mut().find(|g| &g.fingerprint == fingerprint) {
            Some(group) => group.members.push(index),
            None => groups.push(Group {
                fingerprint: fingerprint.clone(),
                members: vec![index],
                newest: index,
                occurrences: Vec::new(),
            }),
        }
    }
    for group in &mut groups {
        // A total order (a partial one may make `sort` panic): untimed reports first, in
        // input order, then by time.
        group.members.sort_by_key(|&i| (items[i].1.time, i));
        group.newest = group.members.last().copied().unwrap_or(group.newest);
        group.occurrences = group.members.iter().map(|&i| items[i].1.clone()).collect();
    }
    groups
}

/// A group's heading: `Java crash ×3 (first 10:02:11, last 10:04:40) IllegalStateException at
/// CheckoutActivity.onResume(CheckoutActivity.kt:142)`.
pub fn group_heading(kind: CrashKind, group: &Group, analysis: &Analysis) -> String {
    let name = match kind {
        CrashKind::JavaCrash => "Java crash",
        CrashKind::NativeCrash => "Native crash",
        CrashKind::Anr => "ANR",
        CrashKind::Crash => "Crash",
        CrashKind::Watchdog => "Watchdog",
    };
    let mut out = format!("{name} ×{}", group.occurrences.len());
    let times: Vec<time::OffsetDateTime> =
        group.occurrences.iter().filter_map(|o| o.time).collect();
    let clock =
        |t: &time::OffsetDateTime| format!("{:02}:{:02}:{:02}", t.hour(), t.minute(), t.second());
    match (times.first(), times.last()) {
        (Some(first), Some(last)) if times.len() > 1 => {
            let _ = write!(out, " (first {}, last {})", clock(first), clock(last));
        }
        (Some(only), _) => {
            let _ = write!(out, " ({})", clock(only));
        }
        _ => {}
    }
    let short_type = analysis
        .exception
        .rsplit('.')
        .next()
        .unwrap_or(&analysis.exception);
    let _ = write!(out, " {short_type}");
    if let Some(frame) = &analysis.blamed_frame {
        let _ = write!(out, " at {}", frame.short());
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn blames_the_first_app_frame() {
        let text = "java.lang.IllegalStateException: x\n\tat android.app.Activity.performResume(Activity.java:8000)\n\tat com.example.app.CheckoutActivity.onResume(CheckoutActivity.kt:142)\n\tat com.example.application.Other.run(Other.kt:1)\n";
        let app = AppCode::for_app("com.example.app", "com.example.app");
        let analysis = analyse(
            CrashKind::JavaCrash,
            "java.lang.IllegalStateException: x",
            text,
            &app,
        );
        let blamed = analysis.blamed_frame.unwrap();
        assert_eq!(blamed.function, "com.example.app.CheckoutActivity.onResume");
        assert_eq!(
            blamed.short(),
            "CheckoutActivity.onResume(CheckoutActivity.kt:142)"
        );
        let frames = frames(CrashKind::JavaCrash, text, &app);
        assert!(
            !frames[2].in_app,
            "a longer package with the same start is not the app's"
        );
    }

    #[test]
    fn only_obfuscated_or_unsymbolicated_frames_want_symbols() {
        let app = AppCode::for_app("com.example.app", "Example");
        let plain = "java.lang.IllegalStateException: x\n\tat android.os.Handler.dispatchMessage(Handler.java:106)\n\tat com.example.app.CheckoutActivity.onResume(CheckoutActivity.kt:142)\n";
        assert!(!wants_symbols(CrashKind::JavaCrash, plain, &app));
        for obfuscated in [
            "java.lang.IllegalStateException: x\n\tat a.b.c(SourceFile:12)\n",
            "java.lang.IllegalStateException: x\n\tat com.example.app.a.b(Unknown Source:4)\n",
            "java.lang.IllegalStateException: x\n\tat b0.a.d(b0.java:3)\n",
        ] {
            assert!(
                wants_symbols(CrashKind::JavaCrash, obfuscated, &app),
                "{obfuscated}"
            );
        }
        let native = "backtrace:\n      #00 pc 000000000004f6c4  /data/app/~~x==/com.example.app-y==/lib/arm64/libnative.so\n";
        assert!(wants_symbols(CrashKind::NativeCrash, native, &app));
        let system_only = "backtrace:\n      #00 pc 000000000008e1b4  /apex/com.android.runtime/lib64/bionic/libc.so (abort+164)\n";
        assert!(!wants_symbols(CrashKind::NativeCrash, system_only, &app));
    }

    #[test]
    fn numbers_are_stripped() {
        assert_eq!(
            strip_numbers("fault addr 0x7f00 pid 42"),
            "fault addr # pid #"
        );
        assert_eq!(
            exception_type(
                CrashKind::NativeCrash,
                "signal 11 (SIGSEGV), code 1 (SEGV_MAPERR), fault addr 0x0"
            ),
            "SIGSEGV"
        );
    }
}
