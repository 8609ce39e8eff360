//! Test support (feature `testing`), for this crate's tests and for the gateway's: the outside
//! tools the symbols proofs check against (`cc`, `strip`, binutils' `addr2line`), a native
//! library built here with debug info and its stripped copy, and a hand-written `.dSYM` (no
//! Mach-O linker exists on the build machines) holding that library's DWARF. One place, so the
//! crates' proofs build and read the same things.
//!
//! These helpers panic on failure: a failure here is the test failing.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether `tool` can be run; when it cannot, prints why the test skips, or fails the test
/// when `PHONELOGS_REQUIRE_SYMBOL_TOOLS=1` (CI sets it).
pub fn have(tool: &str) -> bool {
    let found = Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {tool}"))
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        if std::env::var("PHONELOGS_REQUIRE_SYMBOL_TOOLS").as_deref() == Ok("1") {
            panic!("{tool} is missing and PHONELOGS_REQUIRE_SYMBOL_TOOLS=1");
        }
        eprintln!(
            "skipped: {tool} is not installed (apt-get install default-jdk-headless proguard-cli binutils gcc)"
        );
    }
    found
}

/// Runs a command, failing the test with its output when it fails; returns stdout.
pub fn run(command: &mut Command) -> String {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A native library built from `source` with `cc -g -O1 -shared -fPIC` and a GNU build id:
/// the whole copy (`dir/whole/libcrashlib.so`, for the symbols directory) and its stripped
/// copy (`dir/phone/libcrashlib.so`, what the phone runs). `None` (the test skips, or fails
/// under `PHONELOGS_REQUIRE_SYMBOL_TOOLS=1`) without `cc`, `strip`, `addr2line` and `nm`.
pub fn build_library(source: &Path, dir: &Path) -> Option<(PathBuf, PathBuf)> {
    if !(have("cc") && have("strip") && have("addr2line") && have("nm")) {
        return None;
    }
    let whole = dir.join("whole").join("libcrashlib.so");
    let phone = dir.join("phone").join("libcrashlib.so");
    std::fs::create_dir_all(whole.parent()?).ok()?;
    std::fs::create_dir_all(phone.parent()?).ok()?;
    run(Command::new("cc")
        .args(["-g", "-O1", "-shared", "-fPIC", "-Wl,--build-id", "-o"])
        .arg(&whole)
        .arg(source));
    run(Command::new("strip").arg("-o").arg(&phone).arg(&whole));
    Some((whole, phone))
}

/// What binutils prints for one address of `lib` (`addr2line -e lib -f -i -C ADDR`):
/// (function, `file:line`) innermost first, a `(discriminator N)` suffix cut.
pub fn addr2line_frames(lib: &Path, address: u64) -> Vec<(String, String)> {
    let out = run(Command::new("addr2line")
        .arg("-e")
        .arg(lib)
        .args(["-f", "-i", "-C"])
        .arg(format!("{address:#x}")));
    let lines: Vec<&str> = out.lines().collect();
    lines
        .chunks(2)
        .map(|pair| {
            let location = pair.get(1).copied().unwrap_or("");
            let location = location.split(" (discriminator").next().unwrap_or(location);
            (pair[0].to_owned(), location.to_owned())
        })
        .collect()
}

/// The DWARF sections of the ELF file at `path`, under their Mach-O names (`.debug_info`
/// becomes `__debug_info`), as a `.dSYM` holds them.
pub fn dwarf_sections(path: &Path) -> Vec<(String, Vec<u8>)> {
    use object::{Object as _, ObjectSection as _};
    let bytes = std::fs::read(path).unwrap();
    let elf = object::File::parse(&*bytes).unwrap();
    elf.sections()
        .filter_map(|s| {
            let name = s.name().ok()?.strip_prefix(".debug_")?.to_owned();
            Some((
                format!("__debug_{name}"),
                s.uncompressed_data().ok()?.into_owned(),
            ))
        })
        .collect()
}

fn name16(name: &str) -> [u8; 16] {
    let mut out = [0u8; 16];
    for (slot, byte) in out.iter_mut().zip(name.bytes()) {
        *slot = byte;
    }
    out
}

/// A thin little-endian arm64 `MH_DSYM` Mach-O with `uuid` (`LC_UUID`), a `__TEXT` segment at
/// 0 with no sections (the DWARF's addresses are the ELF build's), and `sections` (Mach-O
/// name, data) in a `__DWARF` segment.
pub fn macho_dsym(uuid: [u8; 16], sections: &[(String, Vec<u8>)]) -> Vec<u8> {
    let (header, uuid_cmd, text_cmd) = (32usize, 24usize, 72usize);
    let dwarf_cmd = 72 + 80 * sections.len();
    let commands = uuid_cmd + text_cmd + dwarf_cmd;
    let mut data_at = header + commands;
    let mut out = Vec::new();
    let u32s = |out: &mut Vec<u8>, values: &[u32]| {
        for v in values {
            out.extend_from_slice(&v.to_le_bytes());
        }
    };
    let u64s = |out: &mut Vec<u8>, values: &[u64]| {
        for v in values {
            out.extend_from_slice(&v.to_le_bytes());
        }
    };
    // mach_header_64: MH_MAGIC_64, CPU_TYPE_ARM64, subtype 0, MH_DSYM, 3 commands.
    u32s(
        &mut out,
        &[0xfeed_facf, 0x0100_000c, 0, 0xa, 3, commands as u32, 0, 0],
    );
    u32s(&mut out, &[0x1b, 24]); // LC_UUID
    out.extend_from_slice(&uuid);
    u32s(&mut out, &[0x19, text_cmd as u32]); // LC_SEGMENT_64 __TEXT
    out.extend_from_slice(&name16("__TEXT"));
    u64s(&mut out, &[0, 0x10000, 0, 0]);
    u32s(&mut out, &[5, 5, 0, 0]);
    let total: usize = sections.iter().map(|(_, d)| d.len()).sum();
    u32s(&mut out, &[0x19, dwarf_cmd as u32]); // LC_SEGMENT_64 __DWARF
    out.extend_from_slice(&name16("__DWARF"));
    u64s(
        &mut out,
        &[0x20000, total as u64, data_at as u64, total as u64],
    );
    u32s(&mut out, &[7, 3, sections.len() as u32, 0]);
    let mut addr = 0x20000u64;
    for (name, bytes) in sections {
        out.extend_from_slice(&name16(name));
        out.extend_from_slice(&name16("__DWARF"));
        u64s(&mut out, &[addr, bytes.len() as u64]);
        u32s(&mut out, &[data_at as u32, 0, 0, 0, 0, 0, 0, 0]);
        addr += bytes.len() as u64;
        data_at += bytes.len();
    }
    for (_, bytes) in sections {
        out.extend_from_slice(bytes);
    }
    out
}
