//! Cutting a 2 MiB `bug_type` 309 report down to its 48 KB report.
//!
//! Run with `cargo bench -p phonelogs-crash --bench ips_cut`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// A 309 report of about `size` bytes: many threads with many frames, as a busy app has.
fn report(size: usize) -> Vec<u8> {
    let header = r#"{"app_name":"CrashTest","timestamp":"2026-11-30 10:20:31.00 +0100","bug_type":"309","name":"CrashTest","bundleID":"com.example.CrashTest"}"#;
    let frame =
        r#"{"imageOffset":36296,"symbol":"__pthread_kill","symbolLocation":8,"imageIndex":1}"#;
    let mut threads = Vec::new();
    let mut length = 0;
    let mut id = 0;
    while length < size {
        let frames = vec![frame; 60].join(",");
        let thread = format!(
            r#"{{"id":{id},"threadState":{{"x":[{{"value":18446744073709551615}},{{"value":0}}],"flavor":"ARM_THREAD_STATE64"}},"frames":[{frames}]}}"#
        );
        length += thread.len();
        threads.push(thread);
        id += 1;
    }
    let body = format!(
        r#"{{
  "procName" : "CrashTest",
  "pid" : 2290,
  "procPath" : "\/private\/var\/containers\/Bundle\/Application\/X\/CrashTest.app\/CrashTest",
  "exception" : {{"type":"EXC_CRASH","signal":"SIGABRT"}},
  "asi" : {{"libsystem_c.dylib":["abort() called"]}},
  "faultingThread" : 0,
  "threads" : [{}],
  "usedImages" : [{{"base":4301586432,"size":65536,"uuid":"u","path":"\/private\/var\/containers\/Bundle\/Application\/X\/CrashTest.app\/CrashTest","name":"CrashTest"}},{{"base":7690119168,"size":229376,"uuid":"k","path":"\/usr\/lib\/system\/libsystem_kernel.dylib","name":"libsystem_kernel.dylib"}}]
}}"#,
        threads.join(",")
    );
    format!("{header}\n{body}").into_bytes()
}

fn bench(c: &mut Criterion) {
    let file = report(2 * 1024 * 1024);
    let mut group = c.benchmark_group("ips_cut_2MiB");
    group.throughput(Throughput::Bytes(file.len() as u64));
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    group.sample_size(20);
    group.bench_function("ips_report", |b| {
        b.iter(|| phonelogs_crash::ips::ips_report(black_box(&file)))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
