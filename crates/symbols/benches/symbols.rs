//! Benchmarks of the symbols engine (issue #17's goals: warm under 5 ms, cold under 1.5 s, a
//! second process's cold start under 100 ms):
//!
//! - `java/warm`: deobfuscating a 100-frame trace with a parsed 50 MB mapping;
//! - `java/cold_first_use`: the first use with no cache: read, hash and index the mapping,
//!   deobfuscate from the sections the trace names;
//! - `java/cache_build`: building and writing the whole mapping's cache (a thread of its own in
//!   `SymbolsDir`, not on the answer's path);
//! - `java/cold_with_cache`: a new process's first use when the cache exists (hash the mapping,
//!   read the cache);
//! - `native/64_frames_warm` and `native/64_frames_cold`: symbolicating 64 tombstone frames
//!   against a library built here with `cc -g` (skipped without `cc`).

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use phonelogs_crash::{CrashKind, Report};
use phonelogs_symbols::java::Mapping;
use phonelogs_symbols::{SymbolsDir, Target};

const CLASSES: usize = 19_500;
const METHODS: usize = 12;

/// A mapping of about 50 MB: many classes, each with methods on line ranges and inlined
/// callees, in the layout R8 writes.
fn big_mapping() -> String {
    let mut out = String::with_capacity(52 << 20);
    out.push_str(
        "# compiler: R8\n# {\"id\":\"com.android.tools.r8.mapping\",\"version\":\"2.2\"}\n",
    );
    for c in 0..CLASSES {
        let _ = writeln!(
            out,
            "com.example.generated.feature{}.Screen{c}Presenter -> a.b{c}:",
            c % 97
        );
        let _ = writeln!(
            out,
            "# {{\"id\":\"sourceFile\",\"fileName\":\"Screen{c}Presenter.kt\"}}"
        );
        let _ = writeln!(out, "    java.lang.String title -> a");
        for m in 0..METHODS {
            let start = 1 + m * 10;
            let _ = writeln!(
                out,
                "    {start}:{}:void onEvent{m}(int,java.lang.String):{}:{} -> m{m}",
                start + 4,
                100 + m * 20,
                104 + m * 20
            );
            let _ = writeln!(
                out,
                "    {}:{}:void com.example.generated.Helper{}.validate(java.lang.String):{}:{} -> m{m}",
                start + 5,
                start + 9,
                c % 13,
                10 + m,
                14 + m
            );
            let _ = writeln!(
                out,
                "    {}:{}:void onEvent{m}(int,java.lang.String):{} -> m{m}",
                start + 5,
                start + 9,
                105 + m * 20
            );
        }
    }
    out
}

fn trace() -> String {
    let mut out = String::from("java.lang.IllegalStateException: boom\n");
    for i in 0..100 {
        let c = (i * 7919) % CLASSES;
        let m = i % METHODS;
        let line = 1 + m * 10 + (i % 10);
        let _ = writeln!(out, "\tat a.b{c}.m{m}(SourceFile:{line})");
    }
    out
}

fn java(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("mapping.txt");
    std::fs::write(&path, big_mapping()).expect("write the mapping");
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    eprintln!("mapping: {:.1} MB", size as f64 / 1e6);
    let trace = trace();
    let cache = dir.path().join("cache");

    let mut group = c.benchmark_group("java");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.bench_function("cold_first_use", |b| {
        b.iter(|| {
            let _ = std::fs::remove_dir_all(&cache);
            let mapping = Mapping::load(&path, std::slice::from_ref(&cache)).expect("load");
            assert!(!mapping.is_cached());
            black_box(mapping.deobfuscate(&trace));
        })
    });
    group.bench_function("cache_build", |b| {
        b.iter(|| {
            let _ = std::fs::remove_dir_all(&cache);
            let mapping = Mapping::load(&path, std::slice::from_ref(&cache)).expect("load");
            mapping
                .build_cache(std::slice::from_ref(&cache))
                .expect("build");
            black_box(mapping.cache_file());
        })
    });
    let first = Mapping::load(&path, std::slice::from_ref(&cache)).expect("load");
    first
        .build_cache(std::slice::from_ref(&cache))
        .expect("build");
    group.bench_function("cold_with_cache", |b| {
        b.iter(|| {
            let mapping = Mapping::load(&path, std::slice::from_ref(&cache)).expect("load");
            assert!(mapping.is_cached());
            black_box(mapping.deobfuscate(&trace));
        })
    });
    group.finish();

    let mapping = Mapping::load(&path, std::slice::from_ref(&cache)).expect("load");
    let (out, stats) = mapping.deobfuscate(&trace);
    assert_eq!(stats.frames_mapped, 100, "{out}");
    let _ = std::fs::remove_dir_all(&cache);
    let indexed = Mapping::load(&path, std::slice::from_ref(&cache)).expect("load");
    assert_eq!(
        indexed.deobfuscate(&trace).0,
        out,
        "sections give what the whole mapping gives"
    );
    c.bench_function("java/warm", |b| {
        b.iter(|| black_box(mapping.deobfuscate(black_box(&trace))))
    });
}

fn native(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let lib = dir.path().join("libcrashlib.so");
    let source =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/symbols/native/crashlib.c");
    let built = std::process::Command::new("cc")
        .args(["-g", "-O1", "-shared", "-fPIC", "-Wl,--build-id", "-o"])
        .arg(&lib)
        .arg(&source)
        .status()
        .is_ok_and(|s| s.success());
    if !built {
        eprintln!("skipped native benchmarks: cc is missing");
        return;
    }
    let root = dir.path().join("symbols");
    std::fs::create_dir_all(&root).expect("symbols dir");
    let app = "com.example.crashtest";
    let symbols = SymbolsDir::open(&root)
        .expect("open")
        .with_cache_dirs(vec![]);
    symbols.add(app, "1", &lib).expect("add");
    let id = phonelogs_symbols::native::file_ids(&std::fs::read(&lib).expect("read"))
        .pop()
        .expect("build id");
    let mut text = String::from("backtrace:\n");
    for i in 0..64u64 {
        let _ = writeln!(
            text,
            "      #{i:02} pc {:016x}  /data/app/~~x==/{app}-y==/lib/arm64/libcrashlib.so (BuildId: {id})",
            0x1109 + i % 0x20
        );
    }
    let report = Report {
        kind: CrashKind::NativeCrash,
        time: None,
        pid: Some(1),
        process: app.into(),
        summary: "signal 11 (SIGSEGV)".into(),
        text,
        warnings: vec![],
    };
    let target = Target {
        app,
        version: Some("1"),
    };
    let applied = symbols.apply(target, &report);
    assert_eq!(applied.symbols.used.first().map(|u| u.frames), Some(64));
    c.bench_function("native/64_frames_warm", |b| {
        b.iter(|| black_box(symbols.apply(target, &report)))
    });
    c.bench_function("native/64_frames_cold", |b| {
        b.iter(|| {
            let fresh = SymbolsDir::open(&root)
                .expect("open")
                .with_cache_dirs(vec![]);
            black_box(fresh.apply(target, &report))
        })
    });
}

criterion_group!(benches, java, native);
criterion_main!(benches);
