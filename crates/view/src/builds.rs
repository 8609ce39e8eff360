//! What of an app's output another build wrote, for a development build's pass, which covers
//! its own build only: the gateway decides when the pass applies; this is the text and time work.

use phonelogs_driver::CrashReport;

/// Leaves out the reports another build than `build` wrote (their [`CrashReport::build`] says
/// so); how many. A report that names no build is kept: nothing tells it apart (a store build
/// and a development build with the same `CFBundleVersion` cannot be told apart either).
///
/// ```
/// use phonelogs_driver::{CrashKind, CrashReport};
/// use phonelogs_view::builds::drop_other_builds;
/// use time::macros::datetime;
///
/// let report = |build: Option<&str>| CrashReport {
///     kind: CrashKind::Crash,
///     time: datetime!(2026-11-30 10:00:00 UTC),
///     pid: Some(42),
///     process: "Example".into(),
///     summary: String::new(),
///     text: String::new(),
///     build: build.map(str::to_owned),
/// };
/// let mut reports = vec![report(Some("55")), report(Some("56")), report(None)];
/// assert_eq!(drop_other_builds(&mut reports, "56"), 1);
/// assert_eq!(reports.len(), 2);
/// ```
pub fn drop_other_builds(reports: &mut Vec<CrashReport>, build: &str) -> usize {
    let before = reports.len();
    reports.retain(|report| of_build(report, build));
    before - reports.len()
}

/// Whether `report` may be of `build`: it names that build, or none (see
/// [`drop_other_builds`]). A wait for a crash ends only on such a report.
pub fn of_build(report: &CrashReport, build: &str) -> bool {
    report
        .build
        .as_deref()
        .is_none_or(|b| b.trim() == build.trim())
}

/// `at` moved up to the next multiple of `resolution` (at most a second) within its second:
/// a build floor at the precision of the times it is compared with (an earlier build's report
/// printed at 21 s, from 21.4 s, must not pass a floor at 21.9 s compared at the second).
///
/// ```
/// use phonelogs_view::builds::round_up;
/// use time::macros::datetime;
/// let at = datetime!(2026-11-30 10:00:21.4 UTC);
/// assert_eq!(round_up(at, time::Duration::SECOND), datetime!(2026-11-30 10:00:22 UTC));
/// assert_eq!(round_up(at, time::Duration::MILLISECOND), at);
/// ```
pub fn round_up(at: time::OffsetDateTime, resolution: time::Duration) -> time::OffsetDateTime {
    let step = resolution.whole_nanoseconds().clamp(1, 1_000_000_000);
    let past = i128::from(at.nanosecond()) % step;
    if past == 0 {
        return at;
    }
    at.checked_add(time::Duration::nanoseconds_i128(step - past))
        .unwrap_or(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use phonelogs_driver::CrashKind;
    use time::macros::datetime;

    fn report(n: i64, build: Option<&str>) -> CrashReport {
        CrashReport {
            kind: CrashKind::Crash,
            time: datetime!(2026-11-30 10:00:00 UTC) + time::Duration::seconds(n),
            pid: Some(42),
            process: "Example".into(),
            summary: format!("report {n}"),
            text: String::new(),
            build: build.map(str::to_owned),
        }
    }

    #[test]
    fn only_reports_of_another_named_build_are_left_out_in_order() {
        let mut reports = vec![
            report(3, Some("56")),
            report(2, Some("55")),
            report(1, None),
            report(0, Some(" 56 ")),
        ];
        assert_eq!(drop_other_builds(&mut reports, "56"), 1);
        let kept: Vec<_> = reports.iter().map(|r| r.summary.as_str()).collect();
        assert_eq!(kept, ["report 3", "report 1", "report 0"]);
        assert_eq!(drop_other_builds(&mut reports, "56"), 0);
    }

    #[test]
    fn a_floor_is_moved_up_never_down() {
        let at = datetime!(2026-11-30 10:00:21.999_999_999 UTC);
        assert_eq!(
            round_up(at, time::Duration::SECOND),
            datetime!(2026-11-30 10:00:22 UTC)
        );
        let whole = datetime!(2026-11-30 10:00:21 UTC);
        assert_eq!(round_up(whole, time::Duration::SECOND), whole);
        let ms = datetime!(2026-11-30 10:00:21.0004 UTC);
        assert_eq!(
            round_up(ms, time::Duration::MILLISECOND),
            datetime!(2026-11-30 10:00:21.001 UTC)
        );
    }
}
