//! Item 7 of issue 28: a phone's times can be anything its clock or a damaged dump says, up to
//! the `time` crate's limits (the end of year 9999, year -9999), and in any offset. Every path
//! of the gateway that does arithmetic or an offset change on a phone's time (a line's time
//! shown on the computer's clock, the window of `context` around a report, the cursor's place)
//! answers, never panics, whatever the times and the computer's offset.

// Tests may unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;

use common::*;
use phonelogs_driver::{AppId, CrashKind, CrashReport, LogLevel, LogLine};
use phonelogs_fake::{FakeApp, FakePhone};
use phonelogs_gateway::{Gateway, LogsRequest, Status};
use proptest::prelude::*;
use time::{Duration, OffsetDateTime, PrimitiveDateTime, UtcOffset};

const APP: &str = "dev.phonelogs.clock";

/// Offsets at the crate's limits and ordinary ones.
fn offset() -> impl Strategy<Value = UtcOffset> {
    prop::sample::select(vec![
        UtcOffset::UTC,
        UtcOffset::from_hms(23, 59, 59).unwrap(),
        UtcOffset::from_hms(-23, -59, -59).unwrap(),
        UtcOffset::from_hms(14, 0, 0).unwrap(),
        UtcOffset::from_hms(-12, 0, 0).unwrap(),
    ])
}

/// A time at (or a few seconds inside) one of the limits, or an ordinary one, in any offset.
fn phone_time() -> impl Strategy<Value = OffsetDateTime> {
    (0u8..3, 0i64..5, offset()).prop_map(|(which, inside, offset)| {
        let local = match which {
            0 => PrimitiveDateTime::MAX - Duration::seconds(inside),
            1 => PrimitiveDateTime::MIN + Duration::seconds(inside),
            _ => START.replace_offset(UtcOffset::UTC).date().midnight() + Duration::seconds(inside),
        };
        local.assume_offset(offset)
    })
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn a_phones_extreme_times_never_panic_a_call(
        line_times in prop::collection::vec(phone_time(), 1..5),
        report_times in prop::collection::vec(phone_time(), 1..3),
        local in offset(),
        since in prop::sample::select(vec![
            "-9999-01-01 00:00", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z", "last",
        ]),
        context in prop::sample::select(vec![1u32, 60, 300]),
    ) {
        let phone = FakePhone::new();
        let device = device();
        phone.add_device(&device, "Pixel 8");
        let app = AppId::new(APP);
        phone.add_app(&device, FakeApp::new(app.clone()).label("Clock").uid(10900).dev_build(true));
        let lines: Vec<LogLine> = line_times
            .iter()
            .map(|time| LogLine {
                time: *time,
                level: LogLevel::Info,
                tag: "Clock".into(),
                text: format!("at {time}"),
                pid: Some(4242),
                tid: Some(4242),
                uid: Some(10900),
            })
            .collect();
        phone.add_logs(&device, &app, lines);
        for time in &report_times {
            phone.add_crash(&device, &app, CrashReport {
                kind: CrashKind::JavaCrash,
                time: *time,
                pid: Some(4242),
                process: APP.into(),
                summary: "boom".into(),
                text: "java.lang.IllegalStateException: boom\n".into(),
                build: None,
            });
        }
        let gateway = Gateway::builder()
            .driver(Arc::new(phone.clone()))
            .local_offset(local)
            .clock(|| START)
            .build()
            .unwrap();
        let session = task(&gateway, "agent");
        let runtime = runtime();
        let read = |request: LogsRequest| runtime.block_on(session.logs(LogsRequest {
            device: Some(DEVICE.into()),
            ..request
        }));
        // Twice: the second read starts from the first one's place (`last`).
        for _ in 0..2 {
            let got = read(LogsRequest { since: Some(since.into()), ..logs(APP) });
            prop_assert!(got.status == Status::Ok || got.status == Status::Error, "{:?}", got);
        }
        let crash_since = if since == "last" { "-9999-01-01 00:00" } else { since };
        let got = read(LogsRequest {
            since: Some(crash_since.into()),
            context: Some(context),
            ..crashes(APP)
        });
        prop_assert!(got.status == Status::Ok || got.status == Status::Error, "{:?}", got);
    }
}
