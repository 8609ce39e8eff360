//! What the symbols step (`src/symbols.rs`) adds to a `kind: "crashes"` call: ten obfuscated
//! Java crashes of two throw sites on the fake phone, read with no symbols directory and with
//! ProGuard's mapping filed for the installed version (deobfuscation, fingerprints, grouping),
//! and with `context: 5` on top. The mapping is loaded by the first call, so this is warm.
//!
//! `cargo bench -p phonelogs-gateway --bench symbols_step`

#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use phonelogs_driver::{AppId, CrashKind, CrashReport, DeviceId, LogLevel, LogLine};
use phonelogs_fake::{FakeApp, FakePhone};
use phonelogs_gateway::{Agent, Gateway, LogsKind, LogsRequest, Mode, TaskSpec};
use time::{Duration, OffsetDateTime};

const APP: &str = "dev.phonelogs.crashtest";
const MAPPING: &str = include_str!("../../../testdata/symbols/proguard-6.2.2/mapping.txt");
const TRACE: &str = include_str!("../../../testdata/symbols/proguard-6.2.2/trace-button.txt");

fn phone(start: OffsetDateTime) -> FakePhone {
    let phone = FakePhone::new();
    let device = DeviceId::new("emulator-5554");
    phone.add_device(&device, "Pixel 8");
    let app = AppId::new(APP);
    phone.add_app(
        &device,
        FakeApp::new(app.clone())
            .label("Crash Test")
            .uid(10123)
            .dev_build(true)
            .version("12"),
    );
    for i in 0..10u32 {
        let site = if i % 2 == 0 { "1047" } else { "1041" };
        phone.add_crash(
            &device,
            &app,
            CrashReport {
                kind: CrashKind::JavaCrash,
                time: start + Duration::seconds(i64::from(i) * 10),
                pid: Some(4000 + i),
                process: APP.into(),
                summary: "java.lang.IllegalStateException: Crash button tapped".into(),
                text: TRACE.replace("SourceFile:1047", &format!("SourceFile:{site}")),
                build: None,
            },
        );
    }
    phone.add_logs(
        &device,
        &app,
        (0..500).map(|i| LogLine {
            time: start + Duration::milliseconds(i * 200),
            level: LogLevel::Info,
            tag: "Cart".into(),
            text: format!("step {i}"),
            pid: Some(4000 + (i / 50) as u32),
            tid: None,
            uid: Some(10123),
        }),
    );
    phone
}

fn bench(c: &mut Criterion) {
    let start = OffsetDateTime::now_utc() - Duration::minutes(10);
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join(APP).join("12");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("mapping.txt"), MAPPING).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("crashes_call");
    for (name, symbols, context) in [
        ("no_symbols", false, None),
        ("mapping", true, None),
        ("mapping_context_5s", true, Some(5)),
    ] {
        let mut builder = Gateway::builder().driver(Arc::new(phone(start)));
        if symbols {
            builder = builder.symbols_dir(dir.path());
        }
        let gateway = builder.build().unwrap();
        let session = gateway.start_task(TaskSpec::new(Agent::new("bench", Mode::ReadOnly)));
        let request = LogsRequest {
            kind: LogsKind::Crashes,
            since: Some("1h".into()),
            limit: Some(10),
            context,
            ..LogsRequest::new(APP)
        };
        group.bench_function(name, |b| {
            b.iter(|| runtime.block_on(session.logs(request.clone())))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
