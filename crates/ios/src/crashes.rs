//! The app's crash reports: `com.apple.crashreportmover`, then `com.apple.crashreportcopymobile`.
//!
//! The mover is asked first, so new reports become visible to the copy service. Then the `.ips`
//! files in the copy service's root and in `Retired/` are listed, and only the names are
//! judged before anything is read: iOS names a report after the process's executable
//! (`<name>-YYYY-MM-DD-HHMMSS….ips`), so a file is a candidate only when its name's process is
//! exactly the app's executable (`CFBundleExecutable`): `Example` never matches
//! `ExampleHelper-…` or `Example.appx-…`. Another app's reports are thus not pulled to the
//! computer unless its executable has the very same name (Flutter apps are all `Runner`); such
//! a report is copied, then dropped by its header's bundle id before anything reaches the
//! agent, and it counts against the 50 reads. On a busy phone the app's own reports are not
//! crowded out by everyone else's. A file
//! name's time is the phone's local time with no zone, so files up to 14 hours older than
//! `since` are kept (no zone is further than that from UTC), newest first, and at most 50 are
//! read per call, fewer when the call's `limit` of the app's reports is met first (the names'
//! local times order the reports as their headers do, unless the phone's zone changed between
//! them). Folders and names that are no report (iOS 26's `BioLog/`, CoreAnalytics'
//! `….ips.ca.synced`) are never read. A file whose first-line header also names the app's bundle id is parsed and
//! cut by `phonelogs-crash` and judged by its header's `timestamp`, which has the zone. Other bug types (jetsam, resource
//! use) are skipped; a `0x8badf00d` termination is kind `watchdog`. Reports are only copied,
//! never moved or deleted. An extension's reports name the extension's bundle id, so they never
//! match; the WebDriverAgent runner's are never read (see [`crate::follower::is_xctrunner`]).

use std::time::Duration;

use phonelogs_crash::ips::{CrashFileName, ips_report_and_build, parse_crash_file_name, parse_ips};
use phonelogs_driver::{AppId, CrashReport, Error, Result};
use time::OffsetDateTime;
use tokio::time::timeout;

use crate::services::{AppRecord, CrashDir, CrashFileSource};

/// The most report files read in one call.
pub const MAX_READS: usize = 50;

/// The most bytes of one crash report file read: far more than an `.ips` report holds (a few
/// hundred KB), so a file past it is not a report and is left out, read no further.
pub const MAX_REPORT_BYTES: usize = 16 * 1024 * 1024;

/// How much older than `since` a file name's time may be and the file still be read: the
/// name's time has no zone, and no zone is more than 14 hours from UTC.
pub const NAME_TIME_SLACK: time::Duration = time::Duration::hours(14);

/// The directory of older reports, next to the root's.
pub const RETIRED: &str = "Retired";

/// Runs one device call under a timeout, turning the timeout into [`Error::Timeout`].
pub(crate) async fn within<T>(
    what: &str,
    after: Duration,
    call: impl std::future::Future<Output = Result<T>>,
) -> Result<T> {
    match timeout(after, call).await {
        Ok(result) => result,
        Err(_) => Err(Error::Timeout {
            what: what.to_owned(),
            after,
        }),
    }
}

/// A report file found in a listing.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Candidate {
    path: String,
    name: CrashFileName,
}

/// The name iOS gives the app's crash report files: the main executable's name
/// (`CFBundleExecutable`). When installation_proxy did not say, the bundle directory's name
/// without `.app` stands in, which is what Xcode names the executable by default; the header's
/// bundle id still has to confirm every report.
pub fn report_name(record: &AppRecord) -> Option<String> {
    match record.executable.as_deref() {
        Some(executable) if !executable.is_empty() => Some(executable.to_owned()),
        _ => {
            let dir = record.path.trim_end_matches('/').rsplit('/').next()?;
            let stem = dir.strip_suffix(".app")?;
            (!stem.is_empty()).then(|| stem.to_owned())
        }
    }
}

/// The crash-report files of a listing whose name's process is exactly `process` and whose
/// name's time could be since `since`, newest first, at most [`MAX_READS`].
fn candidates(
    root: &[String],
    retired: &[String],
    process: &str,
    since: OffsetDateTime,
) -> Vec<Candidate> {
    // Checked: `since` can be at the `time` crate's limit (an agent's `-9999-01-01 00:00`),
    // where `-` panics; nothing is earlier than the limit.
    let earliest = since
        .checked_sub(NAME_TIME_SLACK)
        .unwrap_or(time::PrimitiveDateTime::MIN.assume_utc());
    let mut found: Vec<Candidate> = root
        .iter()
        .map(|name| name.trim_start_matches('/').to_owned())
        .chain(
            retired
                .iter()
                .map(|name| format!("{RETIRED}/{}", name.trim_start_matches('/'))),
        )
        .filter_map(|path| {
            let name = parse_crash_file_name(&path)?;
            // The parser reads names trimmed, so the raw file name must also begin with the
            // executable's name: ` Example-…` is another process's report.
            let file = path.rsplit('/').next().unwrap_or_default();
            let named_after = file
                .strip_prefix(process)
                .is_some_and(|rest| rest.starts_with('-'));
            if name.process != process || !named_after {
                return None;
            }
            // The name's local time is read as if it were UTC and compared with the slack.
            (name.local_time.assume_utc() >= earliest).then_some(Candidate { path, name })
        })
        .collect();
    found.sort_by(|a, b| {
        b.name
            .local_time
            .cmp(&a.name.local_time)
            .then(a.path.cmp(&b.path))
    });
    found.truncate(MAX_READS);
    found
}

/// Whether a report file's first-line header names `app` as its bundle id.
fn names_app(bytes: &[u8], app: &AppId) -> bool {
    let first = match memchr_newline(bytes) {
        Some(at) => &bytes[..at],
        None => bytes,
    };
    parse_ips(first)
        .ok()
        .and_then(|file| file.header.bundle_id)
        .is_some_and(|id| id == app.as_str())
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

/// Reads the app's crash reports since `since`, newest first, at most `limit`: only files named
/// after `executable` (see [`report_name`]) are read, and only those whose header names `app`
/// are kept.
pub async fn read_crashes(
    source: &dyn CrashFileSource,
    app: &AppId,
    executable: &str,
    since: OffsetDateTime,
    limit: usize,
    call_timeout: Duration,
) -> Result<Vec<CrashReport>> {
    if limit == 0 || executable.is_empty() {
        return Ok(Vec::new());
    }
    // A mover that fails or is slow only means the newest reports may not be visible yet; the
    // ones already moved can still be read.
    if let Err(error) = within("the crash report mover", call_timeout, source.flush()).await {
        tracing::warn!(%error, "com.apple.crashreportmover did not answer; reading what is there");
    }
    let mut dir = within(
        "opening the crash report copy service",
        call_timeout,
        source.open(),
    )
    .await?;
    let root = within("listing the crash reports", call_timeout, dir.list("")).await?;
    let retired = match within(
        "listing the retired crash reports",
        call_timeout,
        dir.list(RETIRED),
    )
    .await
    {
        Ok(names) => names,
        Err(error) => {
            tracing::debug!(%error, "no Retired directory");
            Vec::new()
        }
    };
    let mut reports = Vec::new();
    // Newest first by name, and no further once `limit` reports are kept: one file's bytes at
    // a time are held (at most MAX_REPORT_BYTES), and only the cut reports beyond that.
    for candidate in candidates(&root, &retired, executable, since) {
        if reports.len() >= limit {
            break;
        }
        let bytes = match read_one(dir.as_mut(), &candidate.path, call_timeout).await {
            Ok(bytes) => bytes,
            Err(error) => {
                tracing::warn!(path = %candidate.path, %error, "reading a crash report failed");
                continue;
            }
        };
        if !names_app(&bytes, app) {
            continue;
        }
        let (report, build) = match ips_report_and_build(&bytes) {
            Ok(Some(read)) => read,
            Ok(None) => continue,
            Err(error) => {
                tracing::warn!(path = %candidate.path, %error, "a crash report could not be read");
                continue;
            }
        };
        // An `.ips` report is a `crash` or a `watchdog` (`phonelogs_crash::ips`).
        let Some(report) = report.dated() else {
            tracing::warn!(path = %candidate.path, "a crash report has no timestamp");
            continue;
        };
        // The build that wrote it: a development build's pass leaves out another build's.
        let report = CrashReport { build, ..report };
        if report.time < since {
            continue;
        }
        reports.push(report);
    }
    reports.sort_by_key(|r| std::cmp::Reverse(r.time));
    reports.truncate(limit);
    Ok(reports)
}

async fn read_one(dir: &mut dyn CrashDir, path: &str, call_timeout: Duration) -> Result<Vec<u8>> {
    within("reading a crash report", call_timeout, dir.read(path)).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    /// Item 7 of issue 28: a `since` at the `time` crate's limits, in any offset, chooses
    /// files without a panic (every file is at or after the earliest time there is).
    #[test]
    fn a_since_at_the_limits_of_time_never_panics() {
        let root: Vec<String> = vec!["Example-2026-11-29-220001.ips".into()];
        for seconds in [-86_399, 0, 86_399] {
            let offset = time::UtcOffset::from_whole_seconds(seconds).unwrap();
            let first = time::PrimitiveDateTime::MIN.assume_offset(offset);
            assert_eq!(candidates(&root, &[], "Example", first).len(), 1);
            let last = time::PrimitiveDateTime::MAX.assume_offset(offset);
            assert!(candidates(&root, &[], "Example", last).is_empty());
        }
    }

    #[test]
    fn candidates_keep_the_fourteen_hour_window_newest_first_and_at_most_fifty() {
        let since = datetime!(2026-11-30 12:00:00 UTC);
        let root: Vec<String> = vec![
            "Example-2026-11-29-220001.ips".into(), // 13h59m before: kept
            "Example-2026-11-29-215959.ips".into(), // 14h00m01s before: left out
            "Example-2026-11-30-130000.ips.synced".into(),
            "Retired".into(),
            "notes.txt".into(),
        ];
        let retired: Vec<String> = vec!["Example-2026-11-30-120000.ips".into()];
        let paths: Vec<String> = candidates(&root, &retired, "Example", since)
            .into_iter()
            .map(|c| c.path)
            .collect();
        assert_eq!(
            paths,
            [
                "Example-2026-11-30-130000.ips.synced",
                "Retired/Example-2026-11-30-120000.ips",
                "Example-2026-11-29-220001.ips",
            ]
        );
        let many: Vec<String> = (0..80)
            .map(|i| format!("Example-2026-11-30-12{:02}{:02}.ips", i / 60, i % 60))
            .collect();
        let chosen = candidates(&many, &[], "Example", since);
        assert_eq!(chosen.len(), MAX_READS);
        assert_eq!(chosen[0].path, "Example-2026-11-30-120119.ips");
    }

    #[test]
    fn candidates_are_named_exactly_after_the_executable() {
        let since = datetime!(2026-11-30 12:00:00 UTC);
        let root: Vec<String> = [
            "Example-2026-11-30-120000.ips",
            "ExampleHelper-2026-11-30-120001.ips",
            "Example.appx-2026-11-30-120002.ips",
            "example-2026-11-30-120003.ips",
            "MyExample-2026-11-30-120004.ips",
            "Example-Widget-2026-11-30-120005.ips",
            "Example-2026-11-30-120006.0002.ips",
            " Example-2026-11-30-120008.ips",
        ]
        .map(String::from)
        .to_vec();
        let retired = vec!["Example-2026-11-30-120007.ips.synced".to_owned()];
        let paths: Vec<String> = candidates(&root, &retired, "Example", since)
            .into_iter()
            .map(|c| c.path)
            .collect();
        assert_eq!(
            paths,
            [
                "Retired/Example-2026-11-30-120007.ips.synced",
                "Example-2026-11-30-120006.0002.ips",
                "Example-2026-11-30-120000.ips",
            ]
        );
        assert!(candidates(&root, &[], "", since).is_empty());
    }

    #[test]
    fn the_report_name_is_the_executable_else_the_bundle_directory() {
        let mut record = AppRecord {
            bundle_id: AppId::new("com.example.app"),
            path: "/private/var/containers/Bundle/Application/U/My App.app".into(),
            executable: Some("MyAppBinary".into()),
            label: None,
            system: false,
            dev_build: false,
            version: None,
        };
        assert_eq!(report_name(&record).as_deref(), Some("MyAppBinary"));
        record.executable = None;
        assert_eq!(report_name(&record).as_deref(), Some("My App"));
        record.path = "/private/var/containers/Bundle/Application/U/".into();
        assert_eq!(report_name(&record), None);
    }

    #[test]
    fn only_the_apps_bundle_id_matches() {
        let app = AppId::new("com.example.app");
        assert!(names_app(
            b"{\"bug_type\":\"309\",\"bundleID\":\"com.example.app\"}\n{}",
            &app
        ));
        assert!(!names_app(
            b"{\"bug_type\":\"309\",\"bundleID\":\"com.example.app.widget\"}\n{}",
            &app
        ));
        assert!(!names_app(
            b"{\"bug_type\":\"309\",\"name\":\"app\"}\n{}",
            &app
        ));
        assert!(!names_app(b"not json at all", &app));
        assert!(!names_app(b"", &app));
    }
}
