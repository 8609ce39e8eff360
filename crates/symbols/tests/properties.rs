//! Property tests: parsers and lookups never panic on hostile mapping, ELF or Mach-O bytes;
//! fingerprints are stable across phones and restarts and tell throw sites apart; grouping
//! keeps every occurrence; the mapping cache is used by a second load and keyed by content.

#![allow(clippy::unwrap_used)]

use phonelogs_crash::{CrashKind, Report};
use phonelogs_symbols::fingerprint::{AppCode, Occurrence, analyse, group};
use phonelogs_symbols::java::Mapping;
use phonelogs_symbols::native::{DebugFile, file_ids};
use phonelogs_symbols::{SymbolsDir, Target};
use proptest::prelude::*;

const MAPPING: &str = include_str!("../../../testdata/symbols/proguard-6.2.2/mapping.txt");
const APP: &str = "dev.phonelogs.crashtest";

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn mapping_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048), trace in ".{0,400}") {
        if let Ok(mapping) = Mapping::from_bytes(&bytes) {
            let _ = mapping.deobfuscate(&trace);
            let _ = mapping.remap_class("a.b");
        }
    }

    #[test]
    fn mapping_like_text_never_panics(lines in proptest::collection::vec(mapping_line(), 0..40), trace in proptest::collection::vec(frame_line(), 0..10)) {
        let text = lines.join("\n");
        let mapping = Mapping::from_bytes(text.as_bytes()).unwrap();
        let _ = mapping.deobfuscate(&trace.join("\n"));
    }

    #[test]
    fn debug_file_bytes_never_panic(magic in prop_oneof![
            Just(b"\x7fELF\x02\x01\x01\x00".to_vec()),
            Just(b"\x7fELF\x01\x02\x01\x00".to_vec()),
            Just(vec![0xcf, 0xfa, 0xed, 0xfe]),
            Just(vec![0xca, 0xfe, 0xba, 0xbe]),
            Just(Vec::new()),
        ], rest in proptest::collection::vec(any::<u8>(), 0..4096), address in any::<u64>()) {
        let mut bytes = magic;
        bytes.extend(rest);
        let _ = file_ids(&bytes);
        if let Ok(file) = DebugFile::parse(&bytes, None) {
            let _ = file.frames_at(address);
        }
    }

    #[test]
    fn the_same_crash_has_one_fingerprint_on_any_phone(
        pids in (1u32..99_999, 1u32..99_999),
        times in (0i64..2_000_000_000, 0i64..2_000_000_000),
        lines in (1u32..5000, 1u32..5000),
        pcs in (any::<u32>(), any::<u32>()),
    ) {
        let a = java_crash(pids.0, times.0, "a", lines.0, pcs.0);
        let b = java_crash(pids.1, times.1, "a", lines.1, pcs.1);
        let app = AppCode::for_app(APP, APP);
        let fa = analyse(a.kind, &a.summary, &a.text, &app);
        let fb = analyse(b.kind, &b.summary, &b.text, &app);
        prop_assert_eq!(&fa.fingerprint, &fb.fingerprint);
        let groups = group(&[
            (fa.fingerprint.clone(), Occurrence { pid: a.pid, time: a.time }),
            (fb.fingerprint.clone(), Occurrence { pid: b.pid, time: b.time }),
        ]);
        prop_assert_eq!(groups.len(), 1);
        prop_assert_eq!(groups[0].occurrences.len(), 2);
        let newest = if b.time >= a.time { 1 } else { 0 };
        prop_assert_eq!(groups[0].newest, newest);

        let na = native_crash(pids.0, pcs.0, "crash_now");
        let nb = native_crash(pids.1, pcs.1, "crash_now");
        prop_assert_eq!(analyse(na.kind, &na.summary, &na.text, &app).fingerprint,
                        analyse(nb.kind, &nb.summary, &nb.text, &app).fingerprint);
    }

    #[test]
    fn different_throw_sites_have_different_fingerprints(
        sites in ("[a-z][a-zA-Z0-9]{0,12}", "[a-z][a-zA-Z0-9]{0,12}").prop_filter("two sites", |(x, y)| x != y),
        pid in 1u32..99_999,
    ) {
        let app = AppCode::for_app(APP, APP);
        let a = java_crash(pid, 0, &sites.0, 10, 0);
        let b = java_crash(pid, 0, &sites.1, 10, 0);
        prop_assert_ne!(analyse(a.kind, &a.summary, &a.text, &app).fingerprint,
                        analyse(b.kind, &b.summary, &b.text, &app).fingerprint);
        let na = native_crash(pid, 0x1000, &sites.0);
        let nb = native_crash(pid, 0x1000, &sites.1);
        prop_assert_ne!(analyse(na.kind, &na.summary, &na.text, &app).fingerprint,
                        analyse(nb.kind, &nb.summary, &nb.text, &app).fingerprint);
    }
}

fn mapping_line() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z.]{1,12} -> [a-z.]{1,4}:",
        "    [0-9]{1,4}:[0-9]{1,4}:void [a-z.]{1,10}\\([a-z.]{0,8}\\):[0-9]{0,4}(:[0-9]{1,4})? -> [a-z]{1,3}",
        "    [a-z]{1,4} [a-z]{1,5} -> [a-z]",
        "# \\{\"id\":\"(sourceFile|com.android.tools.r8.outline|com.android.tools.r8.outlineCallsite|com.android.tools.r8.rewriteFrame)\".{0,30}\\}",
        ".{0,40}",
    ]
}

fn frame_line() -> impl Strategy<Value = String> {
    prop_oneof![
        "\tat [a-z.]{1,10}\\([A-Za-z]{0,10}(:[0-9]{0,6})?\\)",
        "[a-z.]{1,10}: .{0,10}",
        "Caused by: [a-z.]{1,10}",
        ".{0,40}",
    ]
}

/// The same crash as the ProGuard build's, as one phone's crash buffer prints it: the phone,
/// pid, time and line numbers vary, the throw site does not.
fn java_crash(pid: u32, time: i64, site: &str, line: u32, _pc: u32) -> Report {
    let prefix = format!("05-20 08:02:10.572 10127 {pid:5} {pid:5} E AndroidRuntime: ");
    Report {
        kind: CrashKind::JavaCrash,
        time: time::OffsetDateTime::from_unix_timestamp(time).ok(),
        pid: Some(pid),
        process: APP.into(),
        summary: "java.lang.IllegalStateException: Crash button tapped".into(),
        text: format!(
            "{prefix}FATAL EXCEPTION: main\n{prefix}Process: {APP}, PID: {pid}\n{prefix}java.lang.IllegalStateException: Crash button tapped\n{prefix}\tat {APP}.Cart.{site}(Cart.java:{line})\n{prefix}\tat {APP}.Checkout.resume(Checkout.java:{})\n{prefix}\tat android.os.Handler.dispatchMessage(Handler.java:106)\n",
            line + 3
        ),
        warnings: vec![],
    }
}

fn native_crash(pid: u32, pc: u32, function: &str) -> Report {
    let lib = format!("/data/app/~~x==/{APP}-y==/lib/arm64/libcrashlib.so");
    Report {
        kind: CrashKind::NativeCrash,
        time: None,
        pid: Some(pid),
        process: APP.into(),
        summary: format!("signal 11 (SIGSEGV), code 1 (SEGV_MAPERR), fault addr 0x{pc:x}"),
        text: format!(
            "pid: {pid}, tid: {pid}, name: main  >>> {APP} <<<\nbacktrace:\n      #00 pc {pc:016x}  {lib} ({function}+{})\n      #01 pc {:016x}  {lib} (checkout_resume+12)\n",
            pc % 64,
            pc.wrapping_add(40)
        ),
        warnings: vec![],
    }
}

#[test]
fn a_second_load_reads_the_cache_and_a_changed_mapping_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let version = dir.path().join(APP).join("3");
    std::fs::create_dir_all(&version).unwrap();
    std::fs::write(version.join("mapping.txt"), MAPPING).unwrap();
    let cache = dir.path().join("cache");
    let load =
        || Mapping::load(&version.join("mapping.txt"), std::slice::from_ref(&cache)).unwrap();
    let first = load();
    assert!(!first.is_cached() && first.cache_file().is_none());
    assert_eq!(
        first
            .remap_class("dev.phonelogs.crashtest.jvm.a")
            .as_deref(),
        Some("dev.phonelogs.crashtest.jvm.Cart"),
        "the indexed mapping deobfuscates before its cache exists"
    );
    first.build_cache(std::slice::from_ref(&cache)).unwrap();
    assert!(first.is_cached());
    let written = first.cache_file().unwrap();
    assert!(written.starts_with(&cache) && written.is_file());
    let second = load();
    assert!(second.is_cached());
    assert_eq!(second.cache_file().as_ref(), Some(&written));
    // A changed mapping gets a new key; the old cache is not read for it.
    std::fs::write(version.join("mapping.txt"), format!("{MAPPING}x.Y -> z:\n")).unwrap();
    let third = load();
    assert!(
        !third.is_cached(),
        "the old cache is not read for a changed mapping"
    );
    third.build_cache(std::slice::from_ref(&cache)).unwrap();
    assert_ne!(third.cache_file().as_ref(), Some(&written));
    // A damaged cache is not trusted: the mapping is indexed again.
    std::fs::write(third.cache_file().unwrap(), b"garbage").unwrap();
    let fourth = load();
    assert!(!fourth.is_cached());
    assert_eq!(
        fourth
            .remap_class("dev.phonelogs.crashtest.jvm.a")
            .as_deref(),
        Some("dev.phonelogs.crashtest.jvm.Cart")
    );
}

#[test]
fn nothing_is_written_outside_the_cache_dirs() {
    let dir = tempfile::tempdir().unwrap();
    let version = dir.path().join(APP).join("3");
    std::fs::create_dir_all(&version).unwrap();
    std::fs::write(version.join("mapping.txt"), MAPPING).unwrap();
    let symbols = SymbolsDir::open(dir.path()).unwrap();
    let report = java_crash(7, 0, "a", 1047, 0);
    let report = Report {
        text: report.text.replace(
            "dev.phonelogs.crashtest.Cart.a(Cart.java:1047)",
            "dev.phonelogs.crashtest.jvm.a.a(SourceFile:1047)",
        ),
        ..report
    };
    let applied = symbols.apply(
        Target {
            app: APP,
            version: Some("3"),
        },
        &report,
    );
    // The mapping's cache is built on a thread of its own: wait for it, then look.
    symbols.wait_for_caches();
    assert!(
        applied
            .text
            .contains("at dev.phonelogs.crashtest.jvm.Cart.tapped(Cart.java:47)"),
        "{}",
        applied.text
    );
    let mut files = Vec::new();
    let mut stack = vec![dir.path().to_owned()];
    while let Some(path) = stack.pop() {
        for entry in std::fs::read_dir(&path).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path)
            } else {
                files.push(path)
            }
        }
    }
    for file in files {
        assert!(
            file == version.join("mapping.txt") || file.starts_with(dir.path().join(".cache")),
            "{} was written",
            file.display()
        );
    }
}

#[test]
fn an_unknown_version_or_app_says_why() {
    let dir = tempfile::tempdir().unwrap();
    for v in ["3", "4"] {
        std::fs::create_dir_all(dir.path().join(APP).join(v)).unwrap();
    }
    let symbols = SymbolsDir::open(dir.path())
        .unwrap()
        .with_cache_dirs(vec![]);
    let report = java_crash(7, 0, "a", 1, 0);
    let none = symbols.apply(
        Target {
            app: APP,
            version: None,
        },
        &report,
    );
    assert!(
        matches!(&none.symbols.not_matched[..], [phonelogs_symbols::NotMatched::VersionUnknown { available, .. }] if available.len() == 2)
    );
    let missing = symbols.apply(
        Target {
            app: APP,
            version: Some("5"),
        },
        &report,
    );
    assert!(matches!(
        &missing.symbols.not_matched[..],
        [phonelogs_symbols::NotMatched::NoVersionFolder { .. }]
    ));
    let no_mapping = symbols.apply(
        Target {
            app: APP,
            version: Some("4"),
        },
        &report,
    );
    assert!(matches!(
        &no_mapping.symbols.not_matched[..],
        [phonelogs_symbols::NotMatched::NoMapping { .. }]
    ));
    let other = symbols.apply(
        Target {
            app: "com.example.other",
            version: Some("4"),
        },
        &report,
    );
    assert!(matches!(
        &other.symbols.not_matched[..],
        [phonelogs_symbols::NotMatched::NoAppFolder { .. }]
    ));
    assert_eq!(other.text, report.text);
}
