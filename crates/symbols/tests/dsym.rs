//! iPhone symbolication through a `.dSYM`: no Mach-O linker exists here, so the test writes a
//! minimal `MH_DSYM` Mach-O by hand (an `LC_UUID`, a `__TEXT` segment at 0, and a `__DWARF`
//! segment holding the DWARF sections of `crashlib.c` built with `cc -g`, under their Mach-O
//! names `__debug_info`, …). A report's frame in the app's image, at load address + offset, must
//! symbolicate to what binutils' `addr2line` prints for that offset in the ELF build, and a
//! report naming another UUID must say `uuid_mismatch`.

#![allow(clippy::unwrap_used)]

mod common;

use std::process::Command;

use common::{repo, run};
use phonelogs_crash::{CrashKind, Report};
use phonelogs_symbols::testing::{build_library, dwarf_sections, macho_dsym};
use phonelogs_symbols::{NotMatched, SymbolKind, SymbolsDir, Target};

const UUID: [u8; 16] = [
    0x82, 0xd1, 0x3d, 0x98, 0x21, 0x9e, 0x30, 0x40, 0xb6, 0x2a, 0x07, 0xa2, 0x97, 0x00, 0x7a, 0x7c,
];

#[test]
fn an_ips_frame_is_symbolicated_from_its_dsym() {
    let dir = tempfile::tempdir().unwrap();
    let Some((lib, _)) = build_library(
        &repo().join("testdata/symbols/native/crashlib.c"),
        dir.path(),
    ) else {
        return;
    };
    let sections = dwarf_sections(&lib);
    assert!(sections.iter().any(|(n, _)| n == "__debug_info"));
    let bundle = dir.path().join("CrashTest.app.dSYM");
    let dwarf = bundle.join("Contents/Resources/DWARF");
    std::fs::create_dir_all(&dwarf).unwrap();
    std::fs::write(dwarf.join("CrashTest"), macho_dsym(UUID, &sections)).unwrap();

    let root = dir.path().join("symbols");
    std::fs::create_dir_all(&root).unwrap();
    let symbols = SymbolsDir::open(&root).unwrap().with_cache_dirs(vec![]);
    let app = "com.example.CrashTest";
    symbols.add(app, "1", &bundle).unwrap();
    let inventory = symbols.inventory(app, "1");
    assert_eq!(inventory.debug_files.len(), 1);
    assert_eq!(
        inventory.debug_files[0].id,
        "82d13d98219e3040b62a07a297007a7c"
    );

    let base = 0x1022c8000u64;
    let offset = 0x110cu64;
    // As crates/crash/src/ips.rs renders a frame without a symbol, and the app's image.
    let text = format!(
        "Thread 0 Crashed:\n0   CrashTest                     \t0x{:x} 0x{base:x} + {offset}\n1   libdyld.dylib                 \t0x1a0000000 start + 4\n\nBinary Images:\n0x{base:x} - 0x{:x} CrashTest arm64 <82d13d98-219e-3040-b62a-07a297007a7c> /private/var/containers/Bundle/Application/X/CrashTest.app/CrashTest\n",
        base + offset,
        base + 0xffff
    );
    let report = Report {
        kind: CrashKind::Crash,
        time: None,
        pid: Some(2501),
        process: "CrashTest".into(),
        summary: "EXC_BAD_ACCESS (SIGSEGV)".into(),
        text,
        warnings: vec![],
    };
    let applied = symbols.apply(
        Target {
            app,
            version: Some("1"),
        },
        &report,
    );
    let theirs = run(Command::new("addr2line")
        .arg("-e")
        .arg(&lib)
        .args(["-f", "-i", "-C"])
        .arg(format!("{offset:#x}")));
    let theirs: Vec<&str> = theirs.lines().collect();
    let first = format!(
        "        {} ({}) [inlined]",
        theirs[0],
        theirs[1].split(" (discriminator").next().unwrap()
    );
    let second = format!(
        "        {} ({})",
        theirs[2],
        theirs[3].split(" (discriminator").next().unwrap()
    );
    assert!(
        applied.text.contains(&first),
        "{}\nwanted {first}",
        applied.text
    );
    assert!(
        applied.text.contains(&second),
        "{}\nwanted {second}",
        applied.text
    );
    assert_eq!(applied.symbols.used.len(), 1);
    assert_eq!(applied.symbols.used[0].kind, SymbolKind::Dsym);

    let code = phonelogs_symbols::fingerprint::AppCode::for_app(app, "CrashTest");
    let analysis =
        phonelogs_symbols::fingerprint::analyse(report.kind, &report.summary, &applied.text, &code);
    let blamed = analysis.blamed_frame.unwrap();
    assert_eq!(blamed.function, theirs[0]);
    assert_eq!(blamed.module.as_deref(), Some("CrashTest"));

    let other = Report {
        text: report.text.replace("82d13d98-219e", "00000000-0000"),
        ..report.clone()
    };
    let applied = symbols.apply(
        Target {
            app,
            version: Some("1"),
        },
        &other,
    );
    assert!(applied.symbols.used.is_empty());
    assert!(
        matches!(&applied.symbols.not_matched[..], [NotMatched::UuidMismatch { image, .. }] if image == "CrashTest")
    );
}
