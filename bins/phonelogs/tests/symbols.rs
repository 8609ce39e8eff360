//! `phonelogs symbols add` and `phonelogs report --symbols` as a person uses them: ProGuard's
//! real mapping (`testdata/symbols/proguard-6.2.2/`) filed for the app, a crash buffer dump with
//! the same obfuscated crash in two processes, read back deobfuscated and grouped.

use std::path::Path;
use std::process::{Command, Output};

fn phonelogs(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_phonelogs"))
        .args(args)
        .env_remove("PHONELOGS_SYMBOLS_DIR")
        .env_remove("PHONELOGS_STATE_DIR")
        .output()
        .expect("the phonelogs binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const APP: &str = "dev.phonelogs.crashtest";

/// One crash as `logcat -b crash -v epoch -v uid` prints it (see testdata/README.md).
fn crash(pid: u32, time: &str) -> String {
    let prefix = format!("         {time} 10127 {pid:5} {pid:5} E AndroidRuntime: ");
    format!(
        "{prefix}FATAL EXCEPTION: main\n{prefix}Process: {APP}, PID: {pid}\n{prefix}java.lang.IllegalStateException: Crash button tapped\n{prefix}\tat dev.phonelogs.crashtest.jvm.a.a(SourceFile:1047)\n{prefix}\tat dev.phonelogs.crashtest.jvm.c.a(SourceFile:22)\n{prefix}\tat dev.phonelogs.crashtest.jvm.CrashMain.main(SourceFile:9)\n"
    )
}

#[test]
fn add_then_report_deobfuscates_and_groups() {
    let dir = tempfile::tempdir().unwrap();
    let symbols = dir.path().join("symbols");
    let symbols_arg = symbols.to_str().unwrap();
    let mapping = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/symbols/proguard-6.2.2/mapping.txt");
    let out = phonelogs(&[
        "symbols",
        "add",
        "--dir",
        symbols_arg,
        APP,
        "3",
        mapping.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(symbols.join(APP).join("3").join("mapping.txt").is_file());

    let dump = dir.path().join("crash.txt");
    std::fs::write(
        &dump,
        format!(
            "--------- beginning of crash\n{}{}",
            crash(23031, "1795939331.010"),
            crash(23544, "1795939480.200")
        ),
    )
    .unwrap();
    let out = phonelogs(&[
        "report",
        "--json",
        "--symbols",
        symbols_arg,
        dump.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "one group: {lines:#?}");
    let report = &lines[0];
    assert_eq!(report["occurrences"].as_array().unwrap().len(), 2);
    assert_eq!(report["pid"], 23544, "the newest text is shown");
    let body = report["text"].as_str().unwrap();
    assert!(
        body.contains("\tat dev.phonelogs.crashtest.jvm.Cart.tapped(Cart.java:47)"),
        "{body}"
    );
    assert!(!body.contains("jvm.a.a("), "{body}");
    assert_eq!(
        report["blamed_frame"]["function"],
        "dev.phonelogs.crashtest.jvm.Cart.tapped"
    );
    assert_eq!(report["symbols"]["used"][0]["kind"], "mapping");
    assert_eq!(report["fingerprint"].as_str().unwrap().len(), 16);
    // The cache was written under the symbols directory, for the next run.
    assert!(symbols.join(".cache").read_dir().unwrap().next().is_some());

    let out = phonelogs(&["report", "--symbols", symbols_arg, dump.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let heading = text(&out.stdout);
    assert!(
        heading.starts_with("Java crash ×2 (first 08:02:11, last 08:04:40) IllegalStateException at Cart.tapped(Cart.java:47)"),
        "{heading}"
    );
}

#[test]
fn add_refuses_hostile_names_and_unknown_files() {
    let dir = tempfile::tempdir().unwrap();
    let symbols = dir.path().join("symbols");
    let symbols_arg = symbols.to_str().unwrap();
    let junk = dir.path().join("junk.bin");
    std::fs::write(&junk, b"\x00\x01not a mapping").unwrap();
    let mapping = dir.path().join("m.txt");
    std::fs::write(&mapping, "a.B -> a:\n").unwrap();
    for (app, version, file) in [
        ("../etc", "3", &mapping),
        ("com.example.app", "..", &mapping),
        ("com.example.app", "3/../../x", &mapping),
        ("com.example.app", "3", &junk),
    ] {
        let out = phonelogs(&[
            "symbols",
            "add",
            "--dir",
            symbols_arg,
            app,
            version,
            file.to_str().unwrap(),
        ]);
        assert!(!out.status.success(), "{app} {version} was accepted");
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains("phonelogs:") && !stderr.contains("panicked"),
            "{app} {version}: a clear refusal, not a crash: {stderr}"
        );
    }
    // Nothing was filed anywhere.
    let filed: Vec<_> = std::fs::read_dir(&symbols)
        .map(|d| d.flatten().collect())
        .unwrap_or_default();
    assert!(filed.is_empty(), "{filed:?}");
    assert!(!dir.path().join("etc").exists());
}
