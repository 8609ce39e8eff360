//! Filtering a 16 MiB `logcat -v epoch -v uid` dump down to one uid, against the floor no
//! line-based filter beats: counting the same buffer's newlines with `memchr`.
//!
//! Run with `cargo bench -p phonelogs-crash --bench uid_filter`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use phonelogs_crash::logcat::UidFilter;

/// Builds about `size` bytes of `-v epoch -v uid` lines from several uids (names and numbers),
/// one in eight of them the app's.
fn dump(size: usize) -> Vec<u8> {
    let uids = [
        "10127", "1000", "root", "10230", "shell", "1000", "logd", "10233",
    ];
    let tags = [
        "ActivityManager",
        "CrashTest",
        "VRR [OPlusGameStatusManager]",
        "chatty",
        "NetworkMonitor",
    ];
    let mut out = Vec::with_capacity(size + 256);
    let mut i: u64 = 0;
    while out.len() < size {
        let uid = uids[(i % uids.len() as u64) as usize];
        let tag = tags[(i % tags.len() as u64) as usize];
        let seconds = 1_795_939_200 + i / 40;
        let millis = (i * 7) % 1000;
        let text_len = 20 + (i * 13) % 90;
        let text: String = std::iter::repeat_n('m', text_len as usize).collect();
        out.extend_from_slice(
            format!(
                "{seconds:>19}.{millis:03} {uid:>5} {:>5} {:>5} I {tag:<8}: line {i} {text}\n",
                1000 + i % 30000,
                1000 + i % 31000
            )
            .as_bytes(),
        );
        i += 1;
    }
    out
}

fn bench(c: &mut Criterion) {
    let buffer = dump(16 * 1024 * 1024);
    let filter = UidFilter::new(10127);
    let mut group = c.benchmark_group("uid_filter_16MiB");
    group.throughput(Throughput::Bytes(buffer.len() as u64));
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    group.sample_size(20);
    group.bench_function("memchr_count_newlines", |b| {
        b.iter(|| memchr::memchr_iter(b'\n', black_box(&buffer)).count())
    });
    group.bench_function("filter_one_uid", |b| {
        b.iter(|| {
            filter
                .filter(black_box(&buffer))
                .map(<[u8]>::len)
                .sum::<usize>()
        })
    });
    group.bench_function("filter_one_uid_from_the_end", |b| {
        b.iter(|| {
            filter
                .filter_rev(black_box(&buffer))
                .map(<[u8]>::len)
                .sum::<usize>()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
