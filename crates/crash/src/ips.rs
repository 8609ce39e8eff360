//! iPhone crash reports: `.ips` files (`bug_type` 309 with a JSON body, 109 with a text body,
//! and a JSON header followed by a text body), the cut of a report to at most 48 KB, the
//! summary rule, watchdog detection, and crash report file names.
//!
//! A file is a one-line JSON header, a newline, then the body. The body's form is decided by its
//! first non-space byte (`{` means JSON), not by `bug_type` alone, because Xcode exports a 309
//! header over a text body.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Error;
use crate::report::{Report, cut_text};
use phonelogs_driver::CrashKind;

/// The most bytes a cut report's text holds.
pub const MAX_CUT_BYTES: usize = 48 * 1024;

/// How many frames of the crashed thread the cut keeps.
pub const CRASHED_THREAD_FRAMES: usize = 40;

/// How many frames of the last exception backtrace the cut keeps.
const EXCEPTION_BACKTRACE_FRAMES: usize = 64;

/// The watchdog termination code, `0x8badf00d`.
pub const WATCHDOG_CODE: u64 = 0x8bad_f00d;

/// What is cut off the end of a report that is too long.
const CUT_MARKER: &str = "[… cut to 48 KB]\n";

/// The header line of an `.ips` file: the keys the parsers use, all optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IpsHeader {
    /// `bug_type` (a string in the file; a number is accepted too).
    pub bug_type: Option<String>,
    /// `name`: the executable name.
    pub name: Option<String>,
    /// `app_name`.
    pub app_name: Option<String>,
    /// `bundleID`: absent for command-line tools and some daemons.
    pub bundle_id: Option<String>,
    /// `timestamp`, as printed: `YYYY-MM-DD HH:MM:SS.ff ±HHMM`.
    pub timestamp: Option<String>,
    /// `app_version`.
    pub app_version: Option<String>,
    /// `build_version`.
    pub build_version: Option<String>,
    /// `os_version`, e.g. `iPhone OS 16.0 (20A362)`.
    pub os_version: Option<String>,
    /// `incident_id`.
    pub incident_id: Option<String>,
    /// `slice_uuid`: the main binary's UUID.
    pub slice_uuid: Option<String>,
}

impl IpsHeader {
    fn from_value(value: &Value) -> IpsHeader {
        let text = |key: &str| match value.get(key) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        IpsHeader {
            bug_type: text("bug_type"),
            name: text("name"),
            app_name: text("app_name"),
            bundle_id: text("bundleID"),
            timestamp: text("timestamp"),
            app_version: text("app_version"),
            build_version: text("build_version"),
            os_version: text("os_version"),
            incident_id: text("incident_id"),
            slice_uuid: text("slice_uuid"),
        }
    }

    /// Whether `bug_type` names a crash report this crate reads (309 or 109). A missing
    /// `bug_type` is judged by the body instead.
    pub fn is_crash_type(&self) -> Option<bool> {
        self.bug_type
            .as_deref()
            .map(|bug_type| matches!(bug_type.trim(), "309" | "109"))
    }
}

/// The body of an `.ips` file, by its form.
#[derive(Debug, Clone, PartialEq)]
pub enum IpsBody {
    /// A JSON body (309).
    Json(Value),
    /// A text body (109, or a text body under a 309 header).
    Text(String),
    /// A body that starts like JSON but does not parse (a damaged or truncated file).
    DamagedJson(String),
    /// No body.
    Missing,
}

/// A read `.ips` file.
#[derive(Debug, Clone, PartialEq)]
pub struct IpsFile {
    /// The header line.
    pub header: IpsHeader,
    /// The body.
    pub body: IpsBody,
    /// What could not be read.
    pub warnings: Vec<String>,
}

impl IpsFile {
    /// The build of the app that wrote the report, as `CFBundleVersion` names it: the body's
    /// `bundleInfo.CFBundleVersion`, else the header's `build_version` (a 109 report's text
    /// body prints it in `Version:` too); `None` when neither says one (both may be `""`).
    ///
    /// ```
    /// use phonelogs_crash::ips::parse_ips;
    /// let file = parse_ips(br#"{"bug_type":"309","app_version":"3.0.1","build_version":"55"}
    /// {"bundleInfo":{"CFBundleShortVersionString":"3.0.1","CFBundleVersion":"55"}}"#).unwrap();
    /// assert_eq!(file.build(), Some("55"));
    /// let file = parse_ips(br#"{"bug_type":"309","build_version":""}"#).unwrap();
    /// assert_eq!(file.build(), None);
    /// ```
    pub fn build(&self) -> Option<&str> {
        let body = match &self.body {
            IpsBody::Json(body) => Some(body),
            _ => None,
        };
        bundle_build(&self.header, body)
    }
}

/// `bundleInfo.CFBundleVersion` of `body`, else the header's `build_version`; an empty one is
/// none.
fn bundle_build<'a>(header: &'a IpsHeader, body: Option<&'a Value>) -> Option<&'a str> {
    let said = |build: Option<&'a str>| build.map(str::trim).filter(|b| !b.is_empty());
    said(
        body.and_then(|b| b.get("bundleInfo"))
            .and_then(|b| str_at(b, "CFBundleVersion")),
    )
    .or_else(|| said(header.build_version.as_deref()))
}

/// Reads an `.ips` file into its header and body. Fails only when neither a header nor a body
/// can be recognised.
pub fn parse_ips(bytes: &[u8]) -> Result<IpsFile, Error> {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim_start_matches('\u{feff}');
    let (first, rest) = match text.find('\n') {
        Some(at) => (&text[..at], &text[at + 1..]),
        None => (text, ""),
    };
    let mut warnings = Vec::new();
    let header = match serde_json::from_str::<Value>(first.trim()) {
        Ok(value @ Value::Object(_)) => IpsHeader::from_value(&value),
        _ => {
            warnings.push("the header line is not a JSON object".to_owned());
            IpsHeader {
                bug_type: find_json_string(first, "bug_type"),
                name: find_json_string(first, "name"),
                app_name: find_json_string(first, "app_name"),
                bundle_id: find_json_string(first, "bundleID"),
                timestamp: find_json_string(first, "timestamp"),
                ..IpsHeader::default()
            }
        }
    };
    let body_text = rest.trim_start();
    let body = if body_text.is_empty() {
        IpsBody::Missing
    } else if body_text.starts_with('{') {
        match parse_json_body(body_text) {
            Ok(value) => IpsBody::Json(value),
            Err(error) => {
                warnings.push(format!("the JSON body is damaged: {error}"));
                IpsBody::DamagedJson(body_text.to_owned())
            }
        }
    } else {
        IpsBody::Text(rest.to_owned())
    };
    if header == IpsHeader::default() && !looks_like_report_body(&body) {
        return Err(Error::UnknownFormat(
            "neither an .ips header nor a crash report body".to_owned(),
        ));
    }
    Ok(IpsFile {
        header,
        body,
        warnings,
    })
}

/// The top level of a 309 body with every value left unparsed, and `threads` split into its
/// threads, also unparsed. Repeated keys keep their last value, as a JSON object read into a
/// map does.
struct RawBody<'a> {
    fields: Vec<(String, &'a serde_json::value::RawValue)>,
    threads: Option<Vec<&'a serde_json::value::RawValue>>,
}

impl<'de> Deserialize<'de> for RawBody<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct BodyVisitor;
        impl<'de> serde::de::Visitor<'de> for BodyVisitor {
            type Value = RawBody<'de>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut body = RawBody {
                    fields: Vec::new(),
                    threads: None,
                };
                let mut positions: std::collections::HashMap<String, usize> =
                    std::collections::HashMap::new();
                while let Some(key) = map.next_key::<String>()? {
                    if key == "threads" {
                        body.threads = Some(map.next_value()?);
                    } else {
                        let value = map.next_value()?;
                        match positions.get(&key) {
                            Some(&at) => body.fields[at].1 = value,
                            None => {
                                positions.insert(key.clone(), body.fields.len());
                                body.fields.push((key, value));
                            }
                        }
                    }
                }
                Ok(body)
            }
        }
        deserializer.deserialize_map(BodyVisitor)
    }
}

/// Reads a 309 body. A report of a busy app is megabytes of threads, so only the crashed
/// thread is parsed into a value; the others become `null` (their index is kept).
fn parse_json_body(text: &str) -> Result<Value, serde_json::Error> {
    let raw: RawBody<'_> = serde_json::from_str(text)?;
    let mut object = serde_json::Map::new();
    for (key, value) in &raw.fields {
        object.insert(key.clone(), serde_json::from_str(value.get())?);
    }
    if let Some(threads) = raw.threads {
        let faulting = object
            .get("faultingThread")
            .and_then(Value::as_u64)
            .and_then(|i| usize::try_from(i).ok())
            .filter(|&i| i < threads.len());
        let mut parsed = Vec::with_capacity(threads.len());
        for (index, thread) in threads.iter().enumerate() {
            // Without a valid `faultingThread` every thread is read, to find `triggered`.
            if faulting.is_none_or(|f| f == index) {
                parsed.push(serde_json::from_str(thread.get())?);
            } else {
                parsed.push(Value::Null);
            }
        }
        object.insert("threads".to_owned(), Value::Array(parsed));
    }
    Ok(Value::Object(object))
}

fn looks_like_report_body(body: &IpsBody) -> bool {
    match body {
        IpsBody::Json(value) => value.get("exception").is_some() || value.get("procName").is_some(),
        IpsBody::DamagedJson(text) => {
            text.contains("\"procName\"") || text.contains("\"exception\"")
        }
        IpsBody::Text(text) => {
            text.contains("Exception Type:") || text.contains("Incident Identifier:")
        }
        IpsBody::Missing => false,
    }
}

/// Finds `"key" : "value"` in damaged JSON text and decodes the string.
fn find_json_string(text: &str, key: &str) -> Option<String> {
    let needle = format!("\"{key}\"");
    let mut from = 0;
    while let Some(found) = text.get(from..)?.find(&needle) {
        let after = from + found + needle.len();
        from = after;
        let rest = text[after..].trim_start();
        let Some(rest) = rest.strip_prefix(':') else {
            continue;
        };
        let rest = rest.trim_start();
        if !rest.starts_with('"') {
            continue;
        }
        // Find the closing quote, skipping escaped characters.
        let bytes = rest.as_bytes();
        let mut index = 1;
        while index < bytes.len() {
            match bytes[index] {
                b'\\' => index += 2,
                b'"' => {
                    return serde_json::from_str::<String>(rest.get(..=index)?).ok();
                }
                _ => index += 1,
            }
        }
        return None;
    }
    None
}

/// Finds `"key" : 123` in damaged JSON text.
fn find_json_number(text: &str, key: &str) -> Option<u64> {
    let needle = format!("\"{key}\"");
    let at = text.find(&needle)? + needle.len();
    let rest = text[at..].trim_start().strip_prefix(':')?.trim_start();
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    rest[..digits].parse().ok()
}

/// Reads `YYYY-MM-DD HH:MM:SS[.f…] ±HHMM` (the header's `timestamp`, the body's `captureTime`,
/// a 109 report's `Date/Time`).
pub fn parse_ips_time(value: &str) -> Option<time::OffsetDateTime> {
    let value = value.trim();
    let (local, zone) = value.rsplit_once(' ')?;
    let offset = crate::android::parse_date_offset(zone)?;
    let local = crate::android::parse_local_date_time(local)?;
    Some(local.assume_offset(offset))
}

/// Turns an `.ips` file into a report cut to at most 48 KB, or `Ok(None)` for a bug type that
/// is not a crash report (jetsam, resource use, panics).
///
/// ```
/// use phonelogs_crash::ips::ips_report;
/// use phonelogs_crash::CrashKind;
/// let file = br#"{"bug_type":"309","name":"Example","timestamp":"2026-11-30 10:00:00.00 +0100"}
/// {"procName":"Example","pid":42,"exception":{"type":"EXC_CRASH","signal":"SIGABRT"},
///  "asi":{"libsystem_c.dylib":["abort() called"]},"faultingThread":0,"threads":[],"usedImages":[]}"#;
/// let report = ips_report(file).unwrap().unwrap();
/// assert_eq!(report.kind, CrashKind::Crash);
/// assert_eq!(report.pid, Some(42));
/// assert_eq!(report.summary, "abort() called");
/// ```
pub fn ips_report(bytes: &[u8]) -> Result<Option<Report>, Error> {
    Ok(ips_report_and_build(bytes)?.map(|(report, _)| report))
}

/// [`ips_report`] and the build of the app that wrote it ([`IpsFile::build`]), from one read of
/// the file.
///
/// ```
/// use phonelogs_crash::ips::ips_report_and_build;
/// let file = br#"{"bug_type":"309","name":"Example","timestamp":"2026-11-30 10:00:00.00 +0100","build_version":"20"}
/// {"procName":"Example","bundleInfo":{"CFBundleVersion":"20"},"exception":{"type":"EXC_CRASH"}}"#;
/// let (report, build) = ips_report_and_build(file).unwrap().unwrap();
/// assert_eq!((report.process.as_str(), build.as_deref()), ("Example", Some("20")));
/// ```
pub fn ips_report_and_build(bytes: &[u8]) -> Result<Option<(Report, Option<String>)>, Error> {
    let file = parse_ips(bytes)?;
    if file.header.is_crash_type() == Some(false) {
        return Ok(None);
    }
    let build = file.build().map(str::to_owned);
    let mut report = match &file.body {
        IpsBody::Json(body) => json_report(&file.header, body),
        IpsBody::Text(body) => text_report(&file.header, body),
        IpsBody::DamagedJson(body) => damaged_report(&file.header, body),
        IpsBody::Missing => Report {
            kind: CrashKind::Crash,
            time: file.header.timestamp.as_deref().and_then(parse_ips_time),
            pid: None,
            process: file.header.name.clone().unwrap_or_default(),
            summary: String::new(),
            text: String::new(),
            warnings: vec!["the report has no body".to_owned()],
        },
    };
    let mut warnings = file.warnings;
    warnings.append(&mut report.warnings);
    report.warnings = warnings;
    if report.time.is_none()
        && let Some(time) = file.header.timestamp.as_deref().and_then(parse_ips_time)
    {
        report.time = Some(time);
    }
    if report.process.is_empty() {
        report.process = file
            .header
            .name
            .clone()
            .or_else(|| file.header.app_name.clone())
            .unwrap_or_default();
    }
    Ok(Some((report, build)))
}

fn str_at<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

fn u64_at(value: &Value, key: &str) -> Option<u64> {
    match value.get(key)? {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => {
            let s = s.trim();
            match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
                Some(hex) => u64::from_str_radix(hex, 16).ok(),
                None => s.parse().ok(),
            }
        }
        _ => None,
    }
}

/// The exception reason of a 309 body: `exceptionReason.composed_message`, or its `name` and
/// `reason`, or a plain string.
fn exception_reason(body: &Value) -> Option<String> {
    match body.get("exceptionReason")? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Object(map) => {
            if let Some(Value::String(message)) = map.get("composed_message")
                && !message.is_empty()
            {
                return Some(message.clone());
            }
            let name = map.get("name").and_then(Value::as_str);
            let reason = map.get("reason").and_then(Value::as_str);
            match (name, reason) {
                (Some(name), Some(reason)) => Some(format!("{name}: {reason}")),
                (None, Some(reason)) => Some(reason.to_owned()),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The application-specific information strings, `asi`: image → string or array of strings.
fn asi_lines(body: &Value) -> Vec<(String, String)> {
    let mut lines = Vec::new();
    if let Some(Value::Object(map)) = body.get("asi") {
        for (image, value) in map {
            match value {
                Value::String(s) => lines.push((image.clone(), s.clone())),
                Value::Array(items) => {
                    for item in items {
                        if let Some(s) = item.as_str() {
                            lines.push((image.clone(), s.to_owned()));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    lines
}

/// The `explanation:` of a termination's reasons, or its indicator.
fn termination_explanation(termination: &Value) -> Option<String> {
    if let Some(Value::Array(reasons)) = termination.get("reasons") {
        for reason in reasons.iter().filter_map(Value::as_str) {
            if let Some(at) = reason.find("explanation:") {
                let text = reason[at + 12..].trim();
                if !text.is_empty() {
                    return Some(text.to_owned());
                }
            }
        }
    }
    str_at(termination, "indicator")
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// `EXC_CRASH (SIGABRT)`, from the body's `exception`.
fn exception_type(exception: &Value) -> Option<String> {
    let kind = str_at(exception, "type")?;
    Some(match str_at(exception, "signal") {
        Some(signal) => format!("{kind} ({signal})"),
        None => kind.to_owned(),
    })
}

fn is_watchdog_termination(termination: &Value) -> bool {
    if u64_at(termination, "code") == Some(WATCHDOG_CODE) {
        return true;
    }
    match termination.get("reasons") {
        Some(Value::Array(reasons)) => reasons
            .iter()
            .filter_map(Value::as_str)
            .any(|r| r.to_ascii_lowercase().contains("0x8badf00d")),
        _ => false,
    }
}

/// The summary rule: the exception reason, else the application-specific information, else
/// the termination's explanation, else the exception type.
fn json_summary(body: &Value) -> String {
    if let Some(reason) = exception_reason(body) {
        return reason;
    }
    if let Some((_, line)) = asi_lines(body)
        .into_iter()
        .find(|(_, l)| !l.trim().is_empty())
    {
        return line.trim().to_owned();
    }
    if let Some(explanation) = body.get("termination").and_then(termination_explanation) {
        return explanation;
    }
    body.get("exception")
        .and_then(exception_type)
        .unwrap_or_default()
}

struct Image<'a> {
    base: u64,
    size: u64,
    name: &'a str,
    path: &'a str,
    arch: &'a str,
    uuid: &'a str,
}

fn images(body: &Value) -> Vec<Image<'_>> {
    let Some(Value::Array(items)) = body.get("usedImages") else {
        return Vec::new();
    };
    items
        .iter()
        .map(|item| Image {
            base: u64_at(item, "base").unwrap_or(0),
            size: u64_at(item, "size").unwrap_or(0),
            name: str_at(item, "name").unwrap_or(""),
            path: str_at(item, "path").unwrap_or(""),
            arch: str_at(item, "arch").unwrap_or(""),
            uuid: str_at(item, "uuid").unwrap_or(""),
        })
        .collect()
}

fn image_label<'a>(image: Option<&Image<'a>>) -> &'a str {
    match image {
        Some(image) if !image.name.is_empty() => image.name,
        Some(image) => image.path.rsplit('/').next().unwrap_or("???"),
        None => "???",
    }
}

fn push_frames(out: &mut String, frames: &[Value], images: &[Image<'_>], limit: usize) {
    use std::fmt::Write as _;
    for (index, frame) in frames.iter().take(limit).enumerate() {
        let image = u64_at(frame, "imageIndex")
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| images.get(i));
        let offset = u64_at(frame, "imageOffset").unwrap_or(0);
        let address = image.map_or(offset, |image| image.base.wrapping_add(offset));
        let _ = write!(out, "{index:<4}{:<30}\t0x{address:x}", image_label(image));
        match str_at(frame, "symbol") {
            Some(symbol) => {
                let _ = write!(
                    out,
                    " {symbol} + {}",
                    u64_at(frame, "symbolLocation").unwrap_or(0)
                );
            }
            None => {
                let base = image.map_or(0, |image| image.base);
                let _ = write!(out, " 0x{base:x} + {offset}");
            }
        }
        if let Some(file) = str_at(frame, "sourceFile") {
            let _ = write!(
                out,
                " ({file}:{})",
                u64_at(frame, "sourceLine").unwrap_or(0)
            );
        }
        out.push('\n');
    }
    if frames.len() > limit {
        let _ = writeln!(out, "… {} more frames", frames.len() - limit);
    }
}

/// The directory of the app bundle (`…/Name.app/`) of an executable path, without `/private`.
fn bundle_dir(path: &str) -> Option<&str> {
    let path = path.strip_prefix("/private").unwrap_or(path);
    let at = path.find(".app/")?;
    Some(&path[..at + 5])
}

fn json_report(header: &IpsHeader, body: &Value) -> Report {
    use std::fmt::Write as _;
    let mut warnings = Vec::new();
    let images = images(body);
    let process = str_at(body, "procName")
        .map(str::to_owned)
        .or_else(|| header.name.clone())
        .unwrap_or_default();
    let pid = u64_at(body, "pid").and_then(|p| u32::try_from(p).ok());
    let time = str_at(body, "captureTime")
        .and_then(parse_ips_time)
        .or_else(|| header.timestamp.as_deref().and_then(parse_ips_time));
    let exception = body.get("exception");
    let termination = body.get("termination");
    let watchdog = termination.is_some_and(is_watchdog_termination);

    let mut out = String::new();
    write_identity(&mut out, header, body, &process, pid);
    out.push('\n');
    write_exception(&mut out, exception, termination, &mut warnings);
    if let Some(reason) = exception_reason(body) {
        let _ = writeln!(out, "Exception Reason:    {reason}");
    }
    let asi = asi_lines(body);
    if !asi.is_empty() {
        out.push_str("\nApplication Specific Information:\n");
        for (image, line) in &asi {
            let _ = writeln!(out, "{image}: {line}");
        }
    }
    if let Some(Value::Array(frames)) = body.get("lastExceptionBacktrace") {
        out.push_str("\nLast Exception Backtrace:\n");
        push_frames(&mut out, frames, &images, EXCEPTION_BACKTRACE_FRAMES);
    }
    write_crashed_thread(&mut out, body, &images, &mut warnings);
    write_own_images(&mut out, header, body, &images, &process);
    Report {
        kind: if watchdog {
            CrashKind::Watchdog
        } else {
            CrashKind::Crash
        },
        time,
        pid,
        process,
        summary: json_summary(body),
        text: cut_text(&out, MAX_CUT_BYTES, CUT_MARKER),
        warnings,
    }
}

/// The report's identity lines, as Apple's text report prints them: process, path,
/// identifier, version, OS and date.
fn write_identity(
    out: &mut String,
    header: &IpsHeader,
    body: &Value,
    process: &str,
    pid: Option<u32>,
) {
    use std::fmt::Write as _;
    let _ = writeln!(
        out,
        "Process:             {process} [{}]",
        pid.map_or_else(|| "?".to_owned(), |p| p.to_string())
    );
    if let Some(path) = str_at(body, "procPath") {
        let _ = writeln!(out, "Path:                {path}");
    }
    let bundle_info = body.get("bundleInfo");
    let identifier = bundle_info
        .and_then(|b| str_at(b, "CFBundleIdentifier"))
        .or(header.bundle_id.as_deref());
    if let Some(identifier) = identifier {
        let _ = writeln!(out, "Identifier:          {identifier}");
    }
    let short = bundle_info
        .and_then(|b| str_at(b, "CFBundleShortVersionString"))
        .or(header.app_version.as_deref());
    let build = bundle_build(header, Some(body));
    if short.is_some() || build.is_some() {
        let _ = writeln!(
            out,
            "Version:             {} ({})",
            short.unwrap_or("???"),
            build.unwrap_or("???")
        );
    }
    let os = header.os_version.clone().or_else(|| {
        let os = body.get("osVersion")?;
        Some(format!(
            "{} ({})",
            str_at(os, "train").unwrap_or("?"),
            str_at(os, "build").unwrap_or("?")
        ))
    });
    if let Some(os) = os {
        let _ = writeln!(out, "OS Version:          {os}");
    }
    if let Some(capture) = str_at(body, "captureTime").or(header.timestamp.as_deref()) {
        let _ = writeln!(out, "Date/Time:           {capture}");
    }
}

/// The exception and termination lines; a report without `exception` is warned about.
fn write_exception(
    out: &mut String,
    exception: Option<&Value>,
    termination: Option<&Value>,
    warnings: &mut Vec<String>,
) {
    use std::fmt::Write as _;
    match exception {
        Some(exception) => {
            if let Some(kind) = exception_type(exception) {
                let _ = writeln!(out, "Exception Type:      {kind}");
            }
            if let Some(subtype) = str_at(exception, "subtype") {
                let _ = writeln!(out, "Exception Subtype:   {subtype}");
            }
            if let Some(codes) = str_at(exception, "codes") {
                let _ = writeln!(out, "Exception Codes:     {codes}");
            }
        }
        None => warnings.push("no `exception` in the report".to_owned()),
    }
    if let Some(termination) = termination {
        let namespace = str_at(termination, "namespace").unwrap_or("?");
        let code = match u64_at(termination, "code") {
            Some(code) if namespace == "SIGNAL" => code.to_string(),
            Some(code) => format!("0x{code:x}"),
            None => "?".to_owned(),
        };
        let _ = write!(out, "Termination Reason:  {namespace} {code}");
        if let Some(indicator) = str_at(termination, "indicator") {
            let _ = write!(out, " {indicator}");
        }
        out.push('\n');
        if let Some(Value::Array(reasons)) = termination.get("reasons") {
            for reason in reasons.iter().filter_map(Value::as_str) {
                let _ = writeln!(out, "  {reason}");
            }
        }
        if let Some(by) = str_at(termination, "byProc") {
            let by_pid =
                u64_at(termination, "byPid").map_or_else(String::new, |p| format!(" [{p}]"));
            let _ = writeln!(out, "Terminating Process: {by}{by_pid}");
        }
    }
}

/// The crashed thread (`faultingThread`, else the one `triggered`) with its frames; a report
/// without one is warned about.
fn write_crashed_thread(
    out: &mut String,
    body: &Value,
    images: &[Image<'_>],
    warnings: &mut Vec<String>,
) {
    use std::fmt::Write as _;
    let threads = match body.get("threads") {
        Some(Value::Array(threads)) => threads.as_slice(),
        _ => &[],
    };
    let faulting = u64_at(body, "faultingThread")
        .and_then(|i| usize::try_from(i).ok())
        .filter(|&i| i < threads.len())
        .or_else(|| {
            threads
                .iter()
                .position(|t| t.get("triggered").and_then(Value::as_bool) == Some(true))
        });
    match faulting.and_then(|i| threads.get(i).map(|t| (i, t))) {
        Some((index, thread)) => {
            let _ = write!(out, "\nThread {index} Crashed:");
            if let Some(name) = str_at(thread, "name") {
                let _ = write!(out, " {name}");
            }
            if let Some(queue) = str_at(thread, "queue") {
                let _ = write!(out, " Dispatch queue: {queue}");
            }
            out.push('\n');
            let frames = match thread.get("frames") {
                Some(Value::Array(frames)) => frames.as_slice(),
                _ => &[],
            };
            push_frames(out, frames, images, CRASHED_THREAD_FRAMES);
        }
        None => warnings.push("no crashed thread in the report".to_owned()),
    }
}

/// The app's own binary images: those inside its bundle, else the one with its UUID.
fn write_own_images(
    out: &mut String,
    header: &IpsHeader,
    body: &Value,
    images: &[Image<'_>],
    process: &str,
) {
    use std::fmt::Write as _;
    // The app's own binary images: those inside its bundle, else the one with its UUID.
    let own_dir = str_at(body, "procPath").and_then(bundle_dir);
    let own: Vec<&Image<'_>> =
        images
            .iter()
            .filter(|image| match own_dir {
                Some(dir) => {
                    let path = image.path.strip_prefix("/private").unwrap_or(image.path);
                    path.starts_with(dir)
                }
                None => {
                    header.slice_uuid.as_deref().is_some_and(|uuid| {
                        !uuid.is_empty() && image.uuid.eq_ignore_ascii_case(uuid)
                    }) || (!process.is_empty() && image.name == process)
                }
            })
            .collect();
    if !own.is_empty() {
        out.push_str("\nBinary Images:\n");
        for image in own {
            let end = image.base.wrapping_add(image.size.saturating_sub(1));
            let _ = writeln!(
                out,
                "0x{:x} - 0x{end:x} {} {} <{}> {}",
                image.base, image.name, image.arch, image.uuid, image.path
            );
        }
    }
}

/// Reads a text field `Name:   value` of a 109 report.
fn text_field<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    text.lines().find_map(|line| {
        let rest = line.strip_prefix(name)?;
        rest.strip_prefix(':').map(str::trim)
    })
}

/// The process name and pid of a 109 report's `Process:` line (`Name [pid]`).
fn text_process(header: &IpsHeader, body: &str) -> (String, Option<u32>) {
    match text_field(body, "Process") {
        Some(value) => match value.rsplit_once(" [") {
            Some((name, pid)) => (
                name.trim().to_owned(),
                pid.trim_end_matches(']').trim().parse().ok(),
            ),
            None => (value.to_owned(), None),
        },
        None => (header.name.clone().unwrap_or_default(), None),
    }
}

/// A 109 report cut: the head (to the first thread), the crashed thread's first frames (with
/// its name line) and the app's own binary images; and its Application Specific Information
/// lines.
fn text_cut<'b>(
    body: &'b str,
    crashed_thread: Option<u32>,
    own_dir: Option<&str>,
    process: &str,
) -> (String, Vec<&'b str>) {
    let mut out = String::new();
    let mut asi: Vec<&str> = Vec::new();
    let mut in_asi = false;
    let mut section = Section::Head;
    let mut frames_kept = 0usize;
    let mut frames_left = 0usize;
    // `Thread N name:  Dispatch queue: …` comes just before its frame list; it is kept when
    // that list is the crashed thread's, as the 309 cut keeps the thread's name and queue.
    let mut pending_name: Option<(u32, &str)> = None;
    for line in body.lines() {
        let trimmed = line.trim_end();
        if trimmed == "Application Specific Information:" {
            in_asi = true;
        } else if in_asi {
            if trimmed.is_empty() {
                in_asi = false;
            } else {
                asi.push(trimmed.trim());
            }
        }
        if let Some(thread) = thread_heading(trimmed) {
            if frames_left > 0 {
                out.push_str(&format!("… {frames_left} more frames\n"));
                frames_left = 0;
            }
            let name = pending_name.take();
            pending_name = thread_name_line(trimmed);
            section = match thread {
                Some(index) if Some(index) == crashed_thread || trimmed.ends_with("Crashed:") => {
                    out.push('\n');
                    if let Some((_, name_line)) = name.filter(|(named, _)| *named == index) {
                        out.push_str(name_line);
                        out.push('\n');
                    }
                    out.push_str(trimmed);
                    out.push('\n');
                    frames_kept = 0;
                    Section::CrashedThread
                }
                _ => Section::Skip,
            };
            continue;
        }
        if trimmed == "Binary Images:" {
            if frames_left > 0 {
                out.push_str(&format!("… {frames_left} more frames\n"));
                frames_left = 0;
            }
            out.push_str("\nBinary Images:\n");
            section = Section::Images;
            continue;
        }
        match section {
            Section::Head => {
                out.push_str(trimmed);
                out.push('\n');
            }
            Section::CrashedThread => {
                if trimmed.is_empty() {
                    section = Section::Skip;
                } else if frames_kept < CRASHED_THREAD_FRAMES {
                    out.push_str(trimmed);
                    out.push('\n');
                    frames_kept += 1;
                } else {
                    frames_left += 1;
                }
            }
            Section::Images => {
                let keep = match own_dir {
                    Some(dir) => trimmed.contains(dir),
                    None => !process.is_empty() && trimmed.contains(&format!(" {process} ")),
                };
                if keep {
                    out.push_str(trimmed);
                    out.push('\n');
                }
            }
            Section::Skip => {}
        }
    }
    if frames_left > 0 {
        out.push_str(&format!("… {frames_left} more frames\n"));
    }
    (out, asi)
}

fn text_report(header: &IpsHeader, body: &str) -> Report {
    let mut warnings = Vec::new();
    let (process, pid) = text_process(header, body);
    let time = text_field(body, "Date/Time").and_then(parse_ips_time);
    let termination = text_field(body, "Termination Reason");
    let codes = text_field(body, "Exception Codes");
    let watchdog = [termination, codes]
        .into_iter()
        .flatten()
        .any(|value| value.to_ascii_lowercase().contains("8badf00d"));

    // Keep the head (to the first thread), the crashed thread's first frames and the app's
    // own binary images.
    let crashed_thread = text_field(body, "Triggered by Thread")
        .or_else(|| text_field(body, "Crashed Thread"))
        .and_then(|value| value.split_whitespace().next())
        .and_then(|value| value.parse::<u32>().ok());
    let own_dir = text_field(body, "Path").and_then(bundle_dir);
    let (out, asi) = text_cut(body, crashed_thread, own_dir, &process);
    let summary = asi
        .iter()
        .find(|line| line.contains("reason:"))
        .or_else(|| asi.first())
        .map(|line| (*line).to_owned())
        .or_else(|| termination.map(str::to_owned))
        .or_else(|| text_field(body, "Exception Type").map(str::to_owned))
        .unwrap_or_default();
    if summary.is_empty() {
        warnings.push("no exception, termination or application information".to_owned());
    }
    Report {
        kind: if watchdog {
            CrashKind::Watchdog
        } else {
            CrashKind::Crash
        },
        time,
        pid,
        process,
        summary,
        text: cut_text(&out, MAX_CUT_BYTES, CUT_MARKER),
        warnings,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    Head,
    CrashedThread,
    Images,
    Skip,
}

/// Recognises `Thread N:`, `Thread N Crashed:`, `Thread N name: …` and the thread state
/// heading; gives the thread's index (or `None` for lines that end the head but are no frame
/// list of their own).
fn thread_heading(line: &str) -> Option<Option<u32>> {
    let rest = line.strip_prefix("Thread ")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let index = rest[..digits].parse().ok();
    let tail = &rest[digits..];
    if tail == ":" || tail.starts_with(" Crashed:") {
        Some(index)
    } else if tail.starts_with(" name:") || tail.starts_with(" crashed with") {
        Some(None)
    } else {
        None
    }
}

/// Reads `Thread N name:  …` into the thread's index and the line.
fn thread_name_line(line: &str) -> Option<(u32, &str)> {
    let rest = line.strip_prefix("Thread ")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if !rest[digits..].starts_with(" name:") {
        return None;
    }
    Some((rest[..digits].parse().ok()?, line))
}

fn damaged_report(header: &IpsHeader, body: &str) -> Report {
    let process = find_json_string(body, "procName")
        .or_else(|| header.name.clone())
        .unwrap_or_default();
    let pid = find_json_number(body, "pid").and_then(|p| u32::try_from(p).ok());
    let time = find_json_string(body, "captureTime")
        .as_deref()
        .and_then(parse_ips_time);
    let kind_text = find_json_string(body, "type");
    let signal = find_json_string(body, "signal");
    let summary = find_json_string(body, "composed_message")
        .or_else(|| match (kind_text, signal) {
            (Some(kind), Some(signal)) => Some(format!("{kind} ({signal})")),
            (Some(kind), None) => Some(kind),
            _ => None,
        })
        .unwrap_or_default();
    let watchdog = body.to_ascii_lowercase().contains("0x8badf00d");
    Report {
        kind: if watchdog {
            CrashKind::Watchdog
        } else {
            CrashKind::Crash
        },
        time,
        pid,
        process,
        summary,
        text: cut_text(body, MAX_CUT_BYTES, CUT_MARKER),
        warnings: vec!["the report is damaged; its text is shown as it is".to_owned()],
    }
}

/// What a crash report's file name says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrashFileName {
    /// The name before the date: the executable's name, not the bundle id.
    pub process: String,
    /// The phone's local time in the name, with no zone.
    pub local_time: time::PrimitiveDateTime,
    /// Whether the file lies under `Retired/`.
    pub retired: bool,
    /// Whether the name ends in `.synced`.
    pub synced: bool,
}

/// Reads a crash report's file name or path: `<name>-YYYY-MM-DD-HHMMSS[.NNNN].ips[.synced]`,
/// also under `Retired/`. Other names give `None`, among them CoreAnalytics' `….ips.ca.synced`
/// (iOS 26 keeps them beside the reports, in `Retired/` too: go-ios's e2e test `TestCrashLs`;
/// they hold analytics, some 16–21 MB, and no crash) and a folder such as `BioLog`.
///
/// ```
/// use phonelogs_crash::ips::parse_crash_file_name;
/// let name = parse_crash_file_name("Retired/My-App-2026-11-30-101502.ips.synced").unwrap();
/// assert_eq!(name.process, "My-App");
/// assert_eq!(name.local_time.hour(), 10);
/// assert!(name.retired && name.synced);
/// assert!(parse_crash_file_name("notes.txt").is_none());
/// assert!(parse_crash_file_name("Retired/Analytics-2026-10-07-090004.ips.ca.synced").is_none());
/// ```
pub fn parse_crash_file_name(path: &str) -> Option<CrashFileName> {
    let path = path.trim();
    let (dir, file) = match path.rfind('/') {
        Some(at) => (&path[..at], &path[at + 1..]),
        None => ("", path),
    };
    let retired = dir.split('/').any(|part| part == "Retired");
    let (file, synced) = match file.strip_suffix(".synced") {
        Some(stem) => (stem, true),
        None => (file, false),
    };
    if file.ends_with(".ca") {
        return None;
    }
    let stem = file.strip_suffix(".ips")?;
    // An optional `.NNNN` sequence number after the time.
    let stem = match stem.rsplit_once('.') {
        Some((head, tail)) if !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit()) => head,
        _ => stem,
    };
    // `-YYYY-MM-DD-HHMMSS` is the last 18 bytes.
    if stem.len() < 19 || !stem.is_char_boundary(stem.len() - 18) {
        return None;
    }
    let (process, stamp) = stem.split_at(stem.len() - 18);
    let sb = stamp.as_bytes();
    if sb[0] != b'-' || sb[5] != b'-' || sb[8] != b'-' || sb[11] != b'-' {
        return None;
    }
    let digits = |range: std::ops::Range<usize>| -> Option<u32> {
        let part = stamp.get(range)?;
        part.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| part.parse().ok())
            .flatten()
    };
    let year = i32::try_from(digits(1..5)?).ok()?;
    let month = time::Month::try_from(u8::try_from(digits(6..8)?).ok()?).ok()?;
    let day = u8::try_from(digits(9..11)?).ok()?;
    let hour = u8::try_from(digits(12..14)?).ok()?;
    let minute = u8::try_from(digits(14..16)?).ok()?;
    let second = u8::try_from(digits(16..18)?).ok()?;
    let date = time::Date::from_calendar_date(year, month, day).ok()?;
    let clock = time::Time::from_hms(hour, minute, second).ok()?;
    if process.is_empty() {
        return None;
    }
    Some(CrashFileName {
        process: process.to_owned(),
        local_time: time::PrimitiveDateTime::new(date, clock),
        retired,
        synced,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Issue 37: the build that wrote a report, in the places a real phone writes it. The keys
    /// and their agreement are those of a store build's 309 report from iOS 16.1 (`adam_id`,
    /// `storeInfo`, `DTAppStoreToolsBuild`; header `build_version` "55", `bundleInfo`
    /// `CFBundleVersion` "55") and of a TestFlight build's from iOS 26.6.2 ("20" in both),
    /// cited in `testdata/iossim/README.md`; the 109 form's header as in
    /// `testdata/ios/ips109/abort-ios14.ips`.
    #[test]
    fn the_build_is_the_bundles_else_the_headers_and_never_empty() {
        let build = |bytes: &[u8]| parse_ips(bytes).unwrap().build().map(str::to_owned);
        let store = br#"{"app_name":"Pixel","app_version":"3.0.1","adam_id":"1251460891","build_version":"55","platform":2,"bug_type":"309"}
{"procName":"Pixel","bundleInfo":{"CFBundleShortVersionString":"3.0.1","CFBundleVersion":"55","DTAppStoreToolsBuild":"13F100"},"storeInfo":{"itemID":"1251460891"}}"#;
        assert_eq!(build(store).as_deref(), Some("55"));
        let body_says = br#"{"bug_type":"309","build_version":"54"}
{"bundleInfo":{"CFBundleVersion":"55"}}"#;
        assert_eq!(build(body_says).as_deref(), Some("55"));
        let empty_body = br#"{"bug_type":"309","build_version":"20"}
{"bundleInfo":{"CFBundleVersion":""}}"#;
        assert_eq!(build(empty_body).as_deref(), Some("20"));
        let text = b"{\"bug_type\":\"109\",\"app_version\":\"1.0\",\"build_version\":\"1\"}\nIncident Identifier: X\nVersion:             1 (1.0)\n";
        assert_eq!(build(text).as_deref(), Some("1"));
        let none = br#"{"bug_type":"309","app_version":"","build_version":""}
{"procName":"x"}"#;
        assert_eq!(build(none), None);
        let (_, read) = ips_report_and_build(store).unwrap().unwrap();
        assert_eq!(read.as_deref(), Some("55"));
    }

    #[test]
    fn other_bug_types_are_skipped() {
        let file = b"{\"bug_type\":\"298\",\"name\":\"JetsamEvent\"}\n{\"largestProcess\":\"x\"}";
        assert_eq!(ips_report(file).unwrap(), None);
    }

    #[test]
    fn watchdog_by_termination_code() {
        let file = br#"{"bug_type":"309","name":"App"}
{"procName":"App","exception":{"type":"EXC_CRASH","signal":"SIGKILL"},
 "termination":{"namespace":"FRONTBOARD","code":2343432205,
  "reasons":["RBSTerminateContext| domain:10 code:0x8BADF00D explanation:scene-create watchdog transgression: app exhausted real (wall clock) time allowance of 19.97 seconds","WatchdogEvent: process-exit"]}}"#;
        let report = ips_report(file).unwrap().unwrap();
        assert_eq!(report.kind, CrashKind::Watchdog);
        assert!(
            report
                .summary
                .starts_with("scene-create watchdog transgression")
        );
        assert!(
            report
                .text
                .contains("Termination Reason:  FRONTBOARD 0x8badf00d")
        );
    }

    #[test]
    fn summary_order() {
        let body: Value = serde_json::from_str(
            r#"{"exception":{"type":"EXC_BAD_ACCESS","signal":"SIGSEGV"},"termination":{"indicator":"Segmentation fault: 11"}}"#,
        )
        .unwrap();
        assert_eq!(json_summary(&body), "Segmentation fault: 11");
        let body: Value =
            serde_json::from_str(r#"{"exception":{"type":"EXC_BAD_ACCESS"}}"#).unwrap();
        assert_eq!(json_summary(&body), "EXC_BAD_ACCESS");
        let body: Value = serde_json::from_str(
            r#"{"exceptionReason":{"composed_message":"boom"},"asi":{"a":["b"]}}"#,
        )
        .unwrap();
        assert_eq!(json_summary(&body), "boom");
    }

    #[test]
    fn duplicate_keys_keep_the_last_value_and_case_differs() {
        let file = b"{\"bug_type\":\"309\"}\n{\"procName\":\"A\",\"procName\":\"B\",\"vmRegionInfo\":\"x\",\"vmregioninfo\":\"y\"}";
        let report = ips_report(file).unwrap().unwrap();
        assert_eq!(report.process, "B");
    }

    #[test]
    fn damaged_files_give_what_can_be_read() {
        let file = b"{\"bug_type\":\"309\",\"name\":\"App\"\n{\n  \"procName\" : \"App\",\n  \"pid\" : 77,\n  \"exception\" : {\"type\" : \"EXC_CRASH\", \"sig";
        let report = ips_report(file).unwrap().unwrap();
        assert_eq!(report.pid, Some(77));
        assert_eq!(report.process, "App");
        assert!(report.warnings.len() >= 2, "{:?}", report.warnings);
        assert!(ips_report(b"hello").is_err());
    }

    #[test]
    fn file_name_with_sequence_number() {
        let name = parse_crash_file_name("panic-full-2026-09-06-184838.0002.ips.synced").unwrap();
        assert_eq!(name.process, "panic-full");
        assert!(parse_crash_file_name("X-2026-02-30-101010.ips").is_none());
    }

    #[test]
    fn text_cut_keeps_the_crashed_threads_name_only() {
        // The crashed thread is 1 here, so keeping every name line (or thread 0's) fails.
        let file = b"{\"bug_type\":\"109\",\"name\":\"App\"}
Process:             App [12]
Exception Type:  EXC_CRASH (SIGABRT)
Triggered by Thread:  1

Thread 0 name:  Dispatch queue: com.apple.main-thread
Thread 0:
0   libsystem_kernel.dylib        \t0x00000001c6d7a84c mach_msg_trap + 8

Thread 1 name:  Dispatch queue: com.example.worker
Thread 1 Crashed:
0   libsystem_kernel.dylib        \t0x00000001c6d7a84c __pthread_kill + 8

Thread 1 crashed with ARM Thread State (64-bit):
    x0: 0x0000000000000000   x1: 0x0000000000000000
";
        let report = ips_report(file).unwrap().unwrap();
        assert!(
            report.text.contains(
                "Thread 1 name:  Dispatch queue: com.example.worker\nThread 1 Crashed:\n"
            ),
            "{}",
            report.text
        );
        assert!(!report.text.contains("com.apple.main-thread"));
        assert!(!report.text.contains("mach_msg_trap"));
        // Registers are left out, as the 309 cut leaves out `threadState`.
        assert!(!report.text.contains("x0: 0x"));
        assert_eq!(report.pid, Some(12));
    }
}
