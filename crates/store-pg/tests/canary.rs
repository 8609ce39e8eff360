//! Privacy at rest on PostgreSQL (issue 41, item 5): no log text reaches any table. A property
//! over random reads (logs and crash reports, with and without the person's answers) of apps
//! whose every line and report carries a canary: a dump of the whole database holds none. The
//! scan itself can fail: an agent's filter, which the history keeps, is found.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use phonelogs_driver::{AppId, CrashKind, CrashReport, DeviceId, LogLevel, LogLine};
use phonelogs_fake::{FakeApp, FakePhone};
use phonelogs_gateway::{Agent, Answer, Gateway, LogsKind, LogsRequest, Mode, Store, TaskSpec};
use phonelogs_store_pg::testing::TempPostgres;
use phonelogs_store_pg::{PgOptions, PgStore};
use proptest::prelude::*;
use time::macros::datetime;

const APPS: [&str; 2] = ["dev.phonelogs.crashtest", "com.example.store"];

fn phone(seed: u64) -> (FakePhone, Vec<String>) {
    let phone = FakePhone::new();
    let device = DeviceId::new("emulator-5554");
    phone.add_device(&device, "Pixel 8");
    let mut canaries = Vec::new();
    for (n, id) in APPS.iter().enumerate() {
        let app = AppId::new(*id);
        let uid = 10_100 + n as u32;
        phone.add_app(
            &device,
            FakeApp::new(app.clone())
                .label(format!("App {n}"))
                .uid(uid)
                .dev_build(n == 0),
        );
        let canary = format!("CANARY{seed:016x}L{n}");
        phone.add_logs(
            &device,
            &app,
            [LogLine {
                time: datetime!(2026-11-30 10:00:01 UTC),
                level: LogLevel::Error,
                tag: format!("TAG{canary}"),
                text: format!("{canary} user=alice"),
                pid: Some(4242),
                tid: None,
                uid: Some(uid),
            }],
        );
        let report = format!("REPORT{canary}");
        phone.add_crash(
            &device,
            &app,
            CrashReport {
                kind: CrashKind::JavaCrash,
                time: datetime!(2026-11-30 10:00:30 UTC),
                pid: Some(4242),
                process: (*id).into(),
                summary: format!("SUMMARY{canary}"),
                text: format!("{report}\n\tat Main.run\n"),
                build: None,
            },
        );
        canaries.push(canary);
    }
    (phone, canaries)
}

fn gateway(phone: &FakePhone, url: &str) -> Gateway {
    let store = PgStore::connect(url, PgOptions::default()).unwrap();
    Gateway::builder()
        .driver(Arc::new(phone.clone()))
        .store(Store::new(store))
        .clock(|| datetime!(2026-11-30 10:05 UTC))
        .build()
        .unwrap()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn no_log_text_reaches_any_table() {
    let Some(pg) = TempPostgres::start() else {
        return;
    };
    pg.create_database("canary");
    let url = pg.url("canary", "sslmode=disable");
    PgStore::migrate(&url).unwrap();
    let rt = runtime();
    let config = ProptestConfig {
        cases: 12,
        ..ProptestConfig::default()
    };
    proptest!(config, |(seed in any::<u64>(), steps in prop::collection::vec((0..2usize, any::<bool>(), prop::option::of("[a-z]{1,6}"), any::<bool>()), 1..6))| {
        let (phone, canaries) = phone(seed);
        let gateway = gateway(&phone, &url);
        let session = gateway.start_task(TaskSpec::new(Agent::new("agent", Mode::Full)));
        for (app, crashes, filter, answer) in steps {
            let request = LogsRequest {
                kind: if crashes { LogsKind::Crashes } else { LogsKind::Logs },
                filter,
                since: Some("1h".into()),
                ..LogsRequest::new(APPS[app])
            };
            rt.block_on(session.logs(request));
            if answer && let Some(first) = gateway.store().pending_approvals().unwrap().first() {
                gateway.store().answer(&first.id, Answer::Task).unwrap();
            }
        }
        rt.block_on(session.end());
        let dump = pg.dump("canary");
        for canary in &canaries {
            prop_assert!(!dump.contains(canary.as_str()), "{canary} is in the database");
        }
        prop_assert!(!dump.contains("user=alice"), "log text is in the database");
    });
}

#[test]
fn the_scan_finds_what_is_there() {
    let Some(pg) = TempPostgres::start() else {
        return;
    };
    pg.create_database("scan");
    let url = pg.url("scan", "sslmode=disable");
    PgStore::migrate(&url).unwrap();
    let (phone, _) = phone(1);
    let gateway = gateway(&phone, &url);
    let session = gateway.start_task(TaskSpec::new(Agent::new("agent", Mode::Full)));
    let request = LogsRequest {
        filter: Some("FILTERCANARY1234".into()),
        ..LogsRequest::new(APPS[0])
    };
    runtime().block_on(session.logs(request));
    assert!(pg.dump("scan").contains("FILTERCANARY1234"));
}
