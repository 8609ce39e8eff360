//! Java deobfuscation checked against independent implementations:
//!
//! - ProGuard's own `retrace` (Debian's `proguard-cli`, 6.2.2): Crash Test's obfuscated JVM
//!   program is built here (`crashtest/obfuscated/build.sh`: javac, then ProGuard, which
//!   renames and inlines), run with `java` for a real obfuscated trace, and retrace's output
//!   for it must equal phonelogs' frame for frame. The committed copy of one such build
//!   (`testdata/symbols/proguard-6.2.2/`) is checked too, with no tool needed.
//! - R8's retrace test cases (`testdata/symbols/r8/`: inline ranges, `sourceFile` metadata,
//!   outlines), whose expected output is R8's.

#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;
use std::process::Command;

use common::{have, repo, run};
use phonelogs_symbols::java::Mapping;

/// The frames of a trace, `at …` with its indent dropped, in order.
fn frames(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            line.starts_with("at ").then(|| line.to_owned())
        })
        .collect()
}

/// The exception lines (those that are not frames).
fn heads(text: &str) -> Vec<String> {
    text.lines()
        .filter(|line| !line.trim().starts_with("at ") && !line.trim().is_empty())
        .map(|line| line.trim().to_owned())
        .collect()
}

fn check_equal(mapping: &Mapping, trace: &str, retraced: &str, what: &str) {
    let (ours, _) = mapping.deobfuscate(trace);
    assert_eq!(
        frames(&ours),
        frames(retraced),
        "{what}: frames\nours:\n{ours}\ntheirs:\n{retraced}"
    );
    assert_eq!(
        heads(&ours),
        heads(retraced),
        "{what}: exception lines\nours:\n{ours}"
    );
    assert!(!frames(&ours).is_empty());
    assert_ne!(
        frames(&ours),
        frames(trace),
        "{what}: nothing was deobfuscated"
    );
}

#[test]
fn committed_proguard_build_matches_its_retrace() {
    let dir = repo().join("testdata/symbols/proguard-6.2.2");
    let mapping = Mapping::from_bytes(&std::fs::read(dir.join("mapping.txt")).unwrap()).unwrap();
    for name in ["trace-button", "trace-total"] {
        let trace = std::fs::read_to_string(dir.join(format!("{name}.txt"))).unwrap();
        let retraced = std::fs::read_to_string(dir.join(format!("{name}.retrace.txt"))).unwrap();
        check_equal(&mapping, &trace, &retraced, name);
    }
}

#[test]
fn fresh_proguard_build_matches_proguard_retrace() {
    if !(have("javac") && have("java") && have("proguard")) {
        return;
    }
    let retrace_jar = Path::new("/usr/share/java/retrace.jar");
    if !retrace_jar.is_file() {
        assert!(
            std::env::var("PHONELOGS_REQUIRE_SYMBOL_TOOLS").as_deref() != Ok("1"),
            "retrace.jar is missing (proguard-cli)"
        );
        eprintln!("skipped: /usr/share/java/retrace.jar is missing");
        return;
    }
    let out = tempfile::tempdir().unwrap();
    run(Command::new("bash")
        .arg(repo().join("crashtest/obfuscated/build.sh"))
        .arg(out.path()));
    let mapping_path = out.path().join("mapping.txt");
    let mapping = Mapping::from_bytes(&std::fs::read(&mapping_path).unwrap()).unwrap();
    for which in ["button", "total"] {
        let output = Command::new("java")
            .arg("-cp")
            .arg(out.path().join("crashtest-obfuscated.jar"))
            .arg("dev.phonelogs.crashtest.jvm.CrashMain")
            .arg(which)
            .output()
            .unwrap();
        assert!(!output.status.success(), "the program crashes");
        let trace = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(
            trace.contains("SourceFile:"),
            "an obfuscated trace: {trace}"
        );
        let trace_path = out.path().join(format!("{which}.txt"));
        std::fs::write(&trace_path, &trace).unwrap();
        let retraced = run(Command::new("java")
            .arg("-jar")
            .arg(retrace_jar)
            .arg(&mapping_path)
            .arg(&trace_path));
        check_equal(&mapping, &trace, &retraced, which);
    }
}

#[test]
fn r8_retrace_cases_match_r8() {
    let root = repo().join("testdata/symbols/r8");
    let mut cases = 0;
    for entry in std::fs::read_dir(&root).unwrap() {
        let dir = entry.unwrap().path();
        let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
        let mapping = Mapping::from_bytes(read("mapping.txt").as_bytes()).unwrap();
        let (ours, _) = mapping.deobfuscate(&read("obfuscated.txt"));
        assert_eq!(ours, read("retraced.txt"), "{}", dir.display());
        cases += 1;
    }
    assert!(cases >= 3);
}
