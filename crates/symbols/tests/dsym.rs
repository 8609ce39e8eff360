//! iPhone symbolication through a `.dSYM`: no Mach-O linker exists here, so the test writes a
//! minimal `MH_DSYM` Mach-O by hand (an `LC_UUID`, a `__TEXT` segment at 0, and a `__DWARF`
//! segment holding the DWARF sections of `crashlib.c` built with `cc -g`, under their Mach-O
//! names `__debug_info`, …). A report's frame in the app's image, at load address + offset, must
//! symbolicate to what binutils' `addr2line` prints for that offset in the ELF build, and a
//! report naming another UUID must say `uuid_mismatch`.

#![allow(clippy::unwrap_used)]

mod common;

use std::process::Command;

use common::{have, repo, run};
use object::{Object as _, ObjectSection as _};
use phonelogs_crash::{Report, ReportKind};
use phonelogs_symbols::{NotMatched, SymbolKind, SymbolsDir, Target};

const UUID: [u8; 16] = [
    0x82, 0xd1, 0x3d, 0x98, 0x21, 0x9e, 0x30, 0x40, 0xb6, 0x2a, 0x07, 0xa2, 0x97, 0x00, 0x7a, 0x7c,
];

fn name16(name: &str) -> [u8; 16] {
    let mut out = [0u8; 16];
    for (slot, byte) in out.iter_mut().zip(name.bytes()) {
        *slot = byte;
    }
    out
}

/// A thin little-endian arm64 `MH_DSYM` with `sections` (Mach-O name, data) in `__DWARF`.
fn macho_dsym(sections: &[(String, Vec<u8>)]) -> Vec<u8> {
    let header = 32usize;
    let uuid_cmd = 24usize;
    let text_cmd = 72usize;
    let dwarf_cmd = 72 + 80 * sections.len();
    let commands = uuid_cmd + text_cmd + dwarf_cmd;
    let mut data_at = header + commands;
    let mut out = Vec::new();
    let u32s = |out: &mut Vec<u8>, values: &[u32]| {
        for v in values {
            out.extend_from_slice(&v.to_le_bytes());
        }
    };
    // mach_header_64: MH_MAGIC_64, CPU_TYPE_ARM64, subtype 0, MH_DSYM, 3 commands.
    u32s(
        &mut out,
        &[0xfeed_facf, 0x0100_000c, 0, 0xa, 3, commands as u32, 0, 0],
    );
    // LC_UUID
    u32s(&mut out, &[0x1b, 24]);
    out.extend_from_slice(&UUID);
    // LC_SEGMENT_64 __TEXT, no sections, at 0 (the DWARF's addresses are the ELF build's).
    u32s(&mut out, &[0x19, text_cmd as u32]);
    out.extend_from_slice(&name16("__TEXT"));
    for v in [0u64, 0x10000, 0, 0] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    u32s(&mut out, &[5, 5, 0, 0]);
    // LC_SEGMENT_64 __DWARF with its sections.
    let total: usize = sections.iter().map(|(_, d)| d.len()).sum();
    u32s(&mut out, &[0x19, dwarf_cmd as u32]);
    out.extend_from_slice(&name16("__DWARF"));
    for v in [0x20000u64, total as u64, data_at as u64, total as u64] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    u32s(&mut out, &[7, 3, sections.len() as u32, 0]);
    let mut addr = 0x20000u64;
    for (name, bytes) in sections {
        out.extend_from_slice(&name16(name));
        out.extend_from_slice(&name16("__DWARF"));
        out.extend_from_slice(&addr.to_le_bytes());
        out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        u32s(&mut out, &[data_at as u32, 0, 0, 0, 0, 0, 0, 0]);
        addr += bytes.len() as u64;
        data_at += bytes.len();
    }
    for (_, bytes) in sections {
        out.extend_from_slice(bytes);
    }
    out
}

#[test]
fn an_ips_frame_is_symbolicated_from_its_dsym() {
    if !(have("cc") && have("addr2line")) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let lib = dir.path().join("libcrashlib.so");
    run(Command::new("cc")
        .args(["-g", "-O1", "-shared", "-fPIC", "-Wl,--build-id", "-o"])
        .arg(&lib)
        .arg(repo().join("testdata/symbols/native/crashlib.c")));
    let elf_bytes = std::fs::read(&lib).unwrap();
    let elf = object::File::parse(&*elf_bytes).unwrap();
    let sections: Vec<(String, Vec<u8>)> = elf
        .sections()
        .filter_map(|s| {
            let name = s.name().ok()?.strip_prefix(".debug_")?.to_owned();
            Some((
                format!("__debug_{name}"),
                s.uncompressed_data().ok()?.into_owned(),
            ))
        })
        .collect();
    assert!(sections.iter().any(|(n, _)| n == "__debug_info"));
    let bundle = dir.path().join("CrashTest.app.dSYM");
    let dwarf = bundle.join("Contents/Resources/DWARF");
    std::fs::create_dir_all(&dwarf).unwrap();
    std::fs::write(dwarf.join("CrashTest"), macho_dsym(&sections)).unwrap();

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
        kind: ReportKind::Crash,
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
