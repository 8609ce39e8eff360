//! Logcat lines, the uid fast path (checked against the full parser) and the crash buffer.
#![no_main]

use libfuzzer_sys::fuzz_target;
use phonelogs_crash::logcat::{self, LogTime, LogcatItem, UidField, UidFilter};
use phonelogs_crash::{PhoneClock, crashbuf};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let clock = PhoneClock {
        year: Some(2026),
        ..PhoneClock::default()
    };
    for line in text.lines() {
        // The in-place reader accepts exactly the log lines, with the same fields.
        let in_place = logcat::parse_log_line(line).map(|parsed| parsed.to_line());
        match logcat::parse_line(line) {
            LogcatItem::Line(parsed) => assert_eq!(in_place, Some(parsed), "{line:?}"),
            _ => assert_eq!(in_place, None, "{line:?}"),
        }
        if let LogcatItem::Line(parsed) = logcat::parse_line(line) {
            let _ = parsed.time.to_offset_date_time(clock.year, clock.offset);
            // An epoch line with a numeric uid must give the same uid on the fast path.
            if let (LogTime::Epoch { .. }, Some(UidField::Number(uid))) =
                (&parsed.time, &parsed.uid)
            {
                let fast = logcat::epoch_uid_field(line.as_bytes())
                    .and_then(|field| std::str::from_utf8(field).ok())
                    .and_then(|field| field.parse::<u32>().ok());
                assert_eq!(fast, Some(*uid), "{line:?}");
                let _ = UidFilter::new(*uid).matches(line.as_bytes());
            }
        }
    }
    for uid in [10127, 0] {
        let filter = UidFilter::new(uid);
        let mut backwards: Vec<&[u8]> = filter.filter_rev(data).collect();
        backwards.reverse();
        assert_eq!(backwards, filter.filter(data).collect::<Vec<_>>());
    }
    let _ = crashbuf::parse_crash_buffer(&text, &clock);
});
