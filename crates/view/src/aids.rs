//! The debugging aids' captures as an agent reads them: a tombstone, an exit history and a
//! native backtrace with the app's texts in them masked ([`crate::mask`]), each counting what
//! was masked. The gateway cuts them to the cap after. An exit history on a development
//! build's pass keeps its own build's records only ([`drop_exits_before`]).

use phonelogs_driver::{NativeBacktrace, ProcessExitHistory};

use crate::mask::Masker;

/// A tombstone's bytes with their secrets masked, and its process name's, and how many were
/// masked. A dump that is not UTF-8 (a thread name or a logged byte of another encoding) is
/// masked as read with its invalid bytes replaced, and written so when it held a secret; one
/// that held none is written as the phone printed it.
pub fn mask_tombstone(
    bytes: Vec<u8>,
    process_name: &mut Option<String>,
    masker: Option<&Masker>,
) -> (Vec<u8>, usize) {
    let Some(masker) = masker else {
        return (bytes, 0);
    };
    let mut count = 0;
    if let Some(name) = process_name.as_mut() {
        let masked = masker.line(name);
        count += masked.count;
        if masked.count > 0 {
            *name = masked.text.into_owned();
        }
    }
    let text = String::from_utf8_lossy(&bytes);
    let masked = masker.text(&text);
    count += masked.count;
    if masked.count == 0 {
        return (bytes, count);
    }
    (masked.text.into_owned().into_bytes(), count)
}

/// Masks the app's texts in an exit history (each record's process and description); how
/// many secrets were masked.
pub fn mask_exit_history(history: &mut ProcessExitHistory, masker: Option<&Masker>) -> usize {
    let Some(masker) = masker else {
        return 0;
    };
    let mut count = 0;
    for record in &mut history.records {
        for field in [&mut record.process, &mut record.description] {
            if let Some(text) = field.as_mut() {
                let masked = masker.text(text);
                count += masked.count;
                if masked.count > 0 {
                    *text = masked.text.into_owned();
                }
            }
        }
    }
    count
}

/// Masks a native backtrace's text and its threads' names (the app's own); how many secrets
/// were masked.
pub fn mask_backtrace(backtrace: &mut NativeBacktrace, masker: Option<&Masker>) -> usize {
    let Some(masker) = masker else {
        return 0;
    };
    let masked = masker.text(&backtrace.text);
    let mut count = masked.count;
    if masked.count > 0 {
        backtrace.text = masked.text.into_owned();
    }
    for thread in &mut backtrace.threads {
        let masked = masker.line(&thread.name);
        count += masked.count;
        if masked.count > 0 {
            thread.name = masked.text.into_owned();
        }
    }
    if let Some(name) = backtrace.process_name.as_mut() {
        let masked = masker.line(name);
        count += masked.count;
        if masked.count > 0 {
            *name = masked.text.into_owned();
        }
    }
    count
}

/// Leaves out the exit records from before `floor` (an earlier build's, when `floor` is where a
/// development build's pass begins) and those whose time cannot be read (whose build cannot be
/// told); how many. A record's time is the phone's local time as the dump prints it
/// (`2026-09-06 22:39:39.266`), read in `offset`.
pub fn drop_exits_before(
    history: &mut ProcessExitHistory,
    floor: time::OffsetDateTime,
    offset: time::UtcOffset,
) -> usize {
    let before = history.records.len();
    history.records.retain(|record| {
        record
            .timestamp
            .as_deref()
            .and_then(exit_time)
            .is_some_and(|local| local.assume_offset(offset) >= floor)
    });
    let left_out = before - history.records.len();
    history.count = history.count.saturating_sub(left_out);
    left_out
}

fn exit_time(text: &str) -> Option<time::PrimitiveDateTime> {
    use time::macros::format_description;
    let text = text.trim();
    time::PrimitiveDateTime::parse(
        text,
        format_description!("[year]-[month]-[day] [hour]:[minute]:[second].[subsecond]"),
    )
    .or_else(|_| {
        let whole = format_description!("[year]-[month]-[day] [hour]:[minute]:[second]");
        time::PrimitiveDateTime::parse(text, whole)
    })
    .ok()
}

#[cfg(test)]
mod tests {
    use phonelogs_driver::ExitRecord;
    use time::macros::{datetime, offset};

    use super::*;

    #[test]
    fn exit_records_before_the_floor_or_of_no_readable_time_are_left_out_and_counted() {
        let record = |at: Option<&str>| ExitRecord {
            timestamp: at.map(String::from),
            ..ExitRecord::default()
        };
        let mut history = ProcessExitHistory {
            serial: "emulator-5554".into(),
            package: "a.b".into(),
            count: 4,
            records: vec![
                record(Some("2026-11-30 11:00:12.500")),
                record(Some("2026-11-30 11:00:10")),
                record(Some("2026-11-30 11:00:09.999")),
                record(None),
            ],
            left_out_other_users: 0,
        };
        let floor = datetime!(2026-11-30 10:00:10 UTC);
        assert_eq!(drop_exits_before(&mut history, floor, offset!(+1)), 2);
        assert_eq!(history.count, 2);
        let kept: Vec<_> = history
            .records
            .iter()
            .map(|r| r.timestamp.clone())
            .collect();
        assert_eq!(
            kept,
            [
                Some("2026-11-30 11:00:12.500".into()),
                Some("2026-11-30 11:00:10".into())
            ]
        );
    }
}
