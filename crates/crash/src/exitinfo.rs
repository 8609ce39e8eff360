//! `dumpsys activity exit-info <package>`: ActivityManager's ring of `ApplicationExitInfo`
//! records, read into the fields of the `get_process_exit_history` tool.
//!
//! Two layouts exist: one `key=value` per line (Android 11) and three or four lines of several
//! `key=value` pairs (later releases). Both are read by collecting every `key=value` pair of a
//! record, where a value runs to the next ` key=` of a known key, so a `description` with spaces
//! survives.

pub use phonelogs_driver::ExitRecord;

/// The keys an `ApplicationExitInfo` dump prints. A value runs until the next ` <key>=`.
const KEYS: &[&str] = &[
    "timestamp",
    "pid",
    "realUid",
    "packageUid",
    "definingUid",
    "user",
    "process",
    "reason",
    "subreason",
    "status",
    "importance",
    "pss",
    "rss",
    "description",
    "state",
    "trace",
];

/// Reads every record of `dumpsys activity exit-info`, newest first as the dump lists them.
/// A dump without records gives an empty list.
///
/// ```
/// use phonelogs_crash::exitinfo::parse_exit_info;
/// let dump = "\
/// ACTIVITY MANAGER PROCESS EXIT INFO (dumpsys activity exit-info)
///   package: com.example.app
///     Historical Process Exit for uid=10234
///         ApplicationExitInfo #0:
///           timestamp=2026-09-06 22:39:39.266 pid=5486 realUid=10234 packageUid=10234 definingUid=10234 user=0
///           process=com.example.app reason=4 (APP CRASH(EXCEPTION)) subreason=0 (UNKNOWN) status=0
///           importance=400 pss=0.00 rss=167MB description=crash state=empty trace=null
/// ";
/// let records = parse_exit_info(dump);
/// assert_eq!(records.len(), 1);
/// assert_eq!(records[0].reason.as_deref(), Some("APP CRASH(EXCEPTION)"));
/// assert_eq!(records[0].rss.as_deref(), Some("167MB"));
/// assert!(!records[0].trace_available);
/// ```
pub fn parse_exit_info(text: &str) -> Vec<ExitRecord> {
    parse_exit_entries(text)
        .into_iter()
        .map(|entry| entry.record)
        .collect()
}

/// One record with what the dump says of whose it is.
///
/// `dumpsys activity exit-info <pkg>` prints one `Historical Process Exit for uid=<uid>` section
/// per uid the package has records for: every Android user's copy (an app clone, a work
/// profile) is its own uid, so one package's dump can hold several users' exits. AOSP
/// `AppExitInfoTracker.dumpHistoryProcessExitInfoLocked` prints the section per key of the
/// package's uid map, and `obtainRawRecord` sets `packageUid` from the process's
/// `ApplicationInfo.uid` (the package's uid in that user) and `realUid` from the process's own
/// uid, which differs for an isolated process (see `testdata/README.md`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExitEntry {
    /// The `package:` line the record is under.
    pub package: Option<String>,
    /// The `uid=` of the `Historical Process Exit for uid=<uid>` section the record is in.
    pub section_uid: Option<u32>,
    /// The record's `packageUid=`.
    pub package_uid: Option<u32>,
    /// The record itself.
    pub record: ExitRecord,
}

impl ExitEntry {
    /// The uid whose record this is: the section's `uid=` and the record's `packageUid=`, which
    /// must agree when both are printed (and `user=` with them); `realUid=` only when neither is
    /// printed. `None` when nothing says, or the fields disagree: such a record cannot be told
    /// to be any one copy's.
    pub fn owner_uid(&self) -> Option<u32> {
        let owner = match (self.section_uid, self.package_uid) {
            (Some(section), Some(package)) if section != package => return None,
            (Some(uid), _) | (None, Some(uid)) => uid,
            (None, None) => u32::try_from(self.record.real_uid?).ok()?,
        };
        if self
            .record
            .user
            .is_some_and(|user| user != i64::from(owner / PER_USER_RANGE))
        {
            return None;
        }
        Some(owner)
    }
}

/// The uids of one Android user: user N's uids are `N × 100000 + app id`.
const PER_USER_RANGE: u32 = 100_000;

/// Reads every record of `dumpsys activity exit-info` with its `package:` and its section's
/// `uid=`, newest first within a section as the dump lists them.
pub fn parse_exit_entries(text: &str) -> Vec<ExitEntry> {
    let mut entries = Vec::new();
    let mut package: Option<String> = None;
    let mut section_uid: Option<u32> = None;
    let mut current: Option<Vec<(String, String)>> = None;
    let close = |current: &mut Option<Vec<(String, String)>>,
                 entries: &mut Vec<ExitEntry>,
                 package: &Option<String>,
                 section_uid: Option<u32>| {
        if let Some(pairs) = current.take() {
            entries.push(ExitEntry {
                package: package.clone(),
                section_uid,
                package_uid: pairs
                    .iter()
                    .find(|(key, _)| key == "packageUid")
                    .and_then(|(_, value)| value.parse().ok()),
                record: record_from_pairs(&pairs),
            });
        }
    };
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("ApplicationExitInfo #") || trimmed == "ApplicationExitInfo :" {
            close(&mut current, &mut entries, &package, section_uid);
            current = Some(Vec::new());
            continue;
        }
        if let Some(name) = trimmed.strip_prefix("package:") {
            close(&mut current, &mut entries, &package, section_uid);
            package = Some(name.trim().to_owned()).filter(|name| !name.is_empty());
            section_uid = None;
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("Historical Process Exit") {
            close(&mut current, &mut entries, &package, section_uid);
            section_uid = rest
                .trim()
                .strip_prefix("for uid=")
                .and_then(|uid| uid.trim().parse().ok());
            continue;
        }
        if let Some(pairs) = current.as_mut() {
            pairs.extend(split_pairs(trimmed));
        }
    }
    close(&mut current, &mut entries, &package, section_uid);
    entries
}

/// Splits `a=1 b=two words c=3` into pairs, where a key is one of [`KEYS`] at the start of the
/// line or after a space.
fn split_pairs(line: &str) -> Vec<(String, String)> {
    // Find every place a known key starts.
    let mut starts: Vec<(usize, &str)> = Vec::new();
    for key in KEYS {
        let pattern = format!("{key}=");
        let mut from = 0;
        while let Some(found) = line[from..].find(&pattern) {
            let at = from + found;
            if at == 0 || line.as_bytes()[at - 1] == b' ' {
                starts.push((at, key));
            }
            from = at + pattern.len();
        }
    }
    starts.sort_unstable();
    // A key found inside the description is not a key: the description runs to ` state=` or
    // ` trace=` (or the line end), as the dump's order has it.
    let mut pairs = Vec::new();
    let mut index = 0;
    while index < starts.len() {
        let (at, key) = starts[index];
        let value_start = at + key.len() + 1;
        let mut next = index + 1;
        if key == "description" {
            while next < starts.len() && !matches!(starts[next].1, "state" | "trace") {
                next += 1;
            }
        }
        let value_end = starts.get(next).map_or(line.len(), |&(end, _)| end);
        let value = line.get(value_start..value_end).unwrap_or("").trim();
        pairs.push((key.to_owned(), value.to_owned()));
        index = next;
    }
    pairs
}

/// Reads `4 (APP CRASH(EXCEPTION))` into its code and label.
fn code_and_label(value: &str) -> (Option<i32>, Option<String>) {
    let value = value.trim();
    let digits = value
        .char_indices()
        .take_while(|&(i, c)| c.is_ascii_digit() || (i == 0 && c == '-'))
        .count();
    let code = value[..digits].parse().ok();
    let rest = value[digits..].trim();
    let label = rest
        .strip_prefix('(')
        .and_then(|inner| inner.strip_suffix(')'))
        .map(str::to_owned);
    (code, label)
}

/// A number the dump prints, read as the platform's type (`int` for a uid, a pid or a status)
/// and widened to the contract's `i64`: a value out of the platform's range reads as `None`.
fn widened<T: std::str::FromStr + Into<i64>>(value: &str) -> Option<i64> {
    value.parse::<T>().ok().map(Into::into)
}

fn record_from_pairs(pairs: &[(String, String)]) -> ExitRecord {
    let mut record = ExitRecord::default();
    let mut trace: Option<String> = None;
    for (key, value) in pairs {
        let text = || Some(value.clone());
        match key.as_str() {
            "timestamp" => record.timestamp = text(),
            "pid" => record.pid = widened::<u32>(value),
            "realUid" => record.real_uid = widened::<u32>(value),
            "user" => record.user = widened::<u32>(value),
            "process" => record.process = text(),
            "reason" => {
                let (code, label) = code_and_label(value);
                (record.reason_code, record.reason) = (code.map(i64::from), label);
            }
            "subreason" => {
                let (code, label) = code_and_label(value);
                (record.subreason_code, record.subreason) = (code.map(i64::from), label);
            }
            "status" => record.status = widened::<i32>(value),
            "importance" => record.importance = widened::<i32>(value),
            "pss" => record.pss = text(),
            "rss" => record.rss = text(),
            "state" => record.state = text(),
            "description" => record.description = text(),
            "trace" => trace = text(),
            _ => {}
        }
    }
    record.trace_available = trace.is_some_and(|path| !path.is_empty() && path != "null");
    record.has_anr_info = record.reason_code == Some(6) && record.trace_available;
    record
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn description_with_spaces_and_later_layout() {
        let dump = "\
        ApplicationExitInfo #1:
          timestamp=2026-09-06 22:40:00.001 pid=8400 realUid=10234 packageUid=10234 definingUid=10234 user=0
          process=com.example.app reason=10 (USER REQUESTED) subreason=21 (FORCE STOP) status=0
          importance=100 pss=0,00 rss=221MB state=empty trace=null
          description=stop com.example.app due to from pid 8396
";
        let records = parse_exit_info(dump);
        assert_eq!(records.len(), 1);
        let record = &records[0];
        assert_eq!(record.subreason_code, Some(21));
        assert_eq!(record.subreason.as_deref(), Some("FORCE STOP"));
        assert_eq!(
            record.description.as_deref(),
            Some("stop com.example.app due to from pid 8396")
        );
        assert_eq!(record.pss.as_deref(), Some("0,00"));
        assert_eq!(record.real_uid, Some(10234));
    }

    #[test]
    fn each_record_knows_its_section_and_owner() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/android/exitinfo/two-users.txt"
        );
        let dump = std::fs::read_to_string(path).unwrap();
        let entries = parse_exit_entries(&dump);
        let owners: Vec<(Option<i64>, Option<u32>)> = entries
            .iter()
            .map(|e| (e.record.pid, e.owner_uid()))
            .collect();
        assert_eq!(
            owners,
            [
                (Some(31500), Some(10127)),
                (Some(20111), Some(10127)),
                (Some(32011), Some(1_010_127)),
            ]
        );
        assert!(
            entries
                .iter()
                .all(|e| e.package.as_deref() == Some("com.example.crashtest"))
        );
        assert_eq!(parse_exit_info(&dump).len(), 3);
    }

    #[test]
    fn an_owner_that_cannot_be_told_is_none() {
        let entry =
            |section: Option<u32>, package: Option<u32>, real: Option<u32>, user: Option<u32>| {
                ExitEntry {
                    package: None,
                    section_uid: section,
                    package_uid: package,
                    record: ExitRecord {
                        real_uid: real.map(i64::from),
                        user: user.map(i64::from),
                        ..ExitRecord::default()
                    },
                }
                .owner_uid()
            };
        assert_eq!(entry(None, None, None, None), None);
        assert_eq!(entry(Some(10127), Some(1_010_127), None, None), None);
        assert_eq!(entry(Some(10127), Some(10127), None, Some(10)), None);
        assert_eq!(entry(Some(10127), None, None, Some(0)), Some(10127));
        assert_eq!(
            entry(None, Some(1_010_127), None, Some(10)),
            Some(1_010_127)
        );
        // An isolated process: realUid is its own, the section and packageUid the app's.
        assert_eq!(
            entry(Some(10127), Some(10127), Some(99_000), Some(0)),
            Some(10127)
        );
        assert_eq!(entry(None, None, Some(10127), None), Some(10127));
        // A section line that does not parse says nothing.
        let dump = "  package: a.b\n    Historical Process Exit for uid=x\n        ApplicationExitInfo #0:\n          pid=1\n";
        assert_eq!(parse_exit_entries(dump)[0].owner_uid(), None);
    }

    #[test]
    fn one_key_per_line_layout_and_anr_trace() {
        let dump = "\
    ApplicationExitInfo #0:
      timestamp=2021-01-01 10:00:00.000
      pid=12
      user=10
      reason=6 (ANR)
      description=user request after error: Input dispatching timed out state=x
      state=empty
      trace=/data/system/procexitstore/10234/anr_12.gz
";
        let record = &parse_exit_info(dump)[0];
        assert!(record.trace_available && record.has_anr_info);
        assert_eq!(record.user, Some(10));
        assert_eq!(record.subreason, None);
    }
}
