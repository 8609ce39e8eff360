//! Native symbolication checked against binutils: a library built here with `cc -g`, its
//! stripped copy as "the phone's" (whose build id the tombstone names), the whole copy filed
//! with `SymbolsDir::add`; every address of its two functions symbolicated by phonelogs must
//! give what `addr2line -e lib.so -f -i -C ADDR` prints, inlined frames included.

#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;
use std::process::Command;

use common::{repo, run};
use phonelogs_crash::{CrashKind, Report};
use phonelogs_symbols::testing::{addr2line_frames, build_library};
use phonelogs_symbols::{NotMatched, SymbolKind, SymbolsDir, Target, native::DebugFile};

const APP: &str = "com.example.crashtest";

fn build(dir: &Path) -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    build_library(&repo().join("testdata/symbols/native/crashlib.c"), dir)
}

/// The library built here, filed for [`APP`] version 7 in a new symbols directory under `dir`:
/// the whole library, the symbols directory, the stripped copy's build id and where it was
/// filed. `None` where the tools to build it are missing.
struct Filed {
    whole: std::path::PathBuf,
    root: std::path::PathBuf,
    symbols: SymbolsDir,
    build_id: String,
    placed: std::path::PathBuf,
}

fn filed(dir: &Path) -> Option<Filed> {
    let (whole, phone) = build(dir)?;
    let build_id = phonelogs_symbols::native::file_ids(&std::fs::read(&phone).unwrap())
        .pop()
        .unwrap();
    let root = dir.join("symbols");
    std::fs::create_dir_all(&root).unwrap();
    let symbols = SymbolsDir::open(&root).unwrap().with_cache_dirs(vec![]);
    let placed = symbols.add(APP, "7", &whole).unwrap();
    Some(Filed {
        whole,
        root,
        symbols,
        build_id,
        placed,
    })
}

/// `nm -S`: the start and size of each named function.
fn functions(lib: &Path, names: &[&str]) -> Vec<(String, u64, u64)> {
    let out = run(Command::new("nm").arg("-S").arg(lib));
    let mut found = Vec::new();
    for line in out.lines() {
        let parts: Vec<&str> = line.split_whitespace().collect();
        if let [addr, size, _, name] = parts[..]
            && names.contains(&name)
        {
            found.push((
                name.to_owned(),
                u64::from_str_radix(addr, 16).unwrap(),
                u64::from_str_radix(size, 16).unwrap(),
            ));
        }
    }
    assert_eq!(found.len(), names.len(), "{out}");
    found
}

#[test]
fn every_address_matches_binutils_addr2line() {
    let dir = tempfile::tempdir().unwrap();
    let Some((whole, phone)) = build(dir.path()) else {
        return;
    };
    let ids = phonelogs_symbols::native::file_ids(&std::fs::read(&phone).unwrap());
    assert_eq!(ids.len(), 1, "the stripped copy keeps its build id");
    let file = DebugFile::open(&whole).unwrap();
    assert_eq!(file.id.as_deref(), Some(ids[0].as_str()));
    assert!(file.has_dwarf());
    let mut compared = 0;
    let mut inlined = 0;
    for (name, start, size) in functions(&whole, &["crash_now", "checkout_resume"]) {
        for address in start..start + size {
            let ours: Vec<(String, String)> = file
                .frames_at(address)
                .into_iter()
                .map(|f| {
                    let location = format!(
                        "{}:{}",
                        f.file.unwrap_or_else(|| "??".into()),
                        f.line.map_or_else(|| "?".to_owned(), |l| l.to_string())
                    );
                    (f.function, location)
                })
                .collect();
            let theirs = addr2line_frames(&whole, address);
            assert_eq!(ours, theirs, "{name} at {address:#x}");
            assert_eq!(ours.last().map(|f| f.0.as_str()), Some(name.as_str()));
            inlined += usize::from(ours.len() > 1);
            compared += 1;
        }
    }
    assert!(compared > 8, "{compared}");
    assert!(
        inlined > 0,
        "store_total is inlined into crash_now at some address"
    );
}

#[test]
fn a_tombstone_of_the_stripped_library_is_symbolicated() {
    let dir = tempfile::tempdir().unwrap();
    let Some(Filed {
        whole,
        root,
        symbols,
        build_id,
        placed,
    }) = filed(dir.path())
    else {
        return;
    };
    assert_eq!(
        placed,
        root.join(APP)
            .join("7")
            .join("native")
            .join(&build_id)
            .join("libcrashlib.so")
    );
    let fns = functions(&whole, &["crash_now", "checkout_resume"]);
    let crash = fns.iter().find(|f| f.0 == "crash_now").unwrap();
    let resume = fns.iter().find(|f| f.0 == "checkout_resume").unwrap();
    // The store is the second instruction of crash_now (`lea`, 4 bytes on x86-64, then `mov`).
    let fault = crash.1 + 3;
    let call = resume.1 + 12;
    let lib = format!("/data/app/~~Q1w2e3==/{APP}-R4t5y6==/lib/arm64/libcrashlib.so");
    let text = format!(
        "backtrace:\n      #00 pc {fault:016x}  {lib} (BuildId: {build_id})\n      #01 pc {call:016x}  {lib} (BuildId: {build_id})\n      #02 pc 000000000005b4c8  /apex/com.android.runtime/lib64/bionic/libc.so (__libc_init+92) (BuildId: 0123abcd)\n"
    );
    let report = Report {
        kind: CrashKind::NativeCrash,
        time: None,
        pid: Some(4242),
        process: APP.into(),
        summary: "signal 11 (SIGSEGV), code 1 (SEGV_MAPERR), fault addr 0x0".into(),
        text,
        warnings: vec![],
    };
    let applied = symbols.apply(
        Target {
            app: APP,
            version: Some("7"),
        },
        &report,
    );
    let theirs = addr2line_frames(&whole, fault);
    let expected_first = format!("              {} ({}) [inlined]", theirs[0].0, theirs[0].1);
    assert!(applied.text.contains(&expected_first), "{}", applied.text);
    assert!(
        applied.text.contains("        crash_now ("),
        "{}",
        applied.text
    );
    assert!(
        applied.text.contains("        checkout_resume ("),
        "{}",
        applied.text
    );
    assert_eq!(applied.symbols.used.len(), 1);
    assert_eq!(applied.symbols.used[0].kind, SymbolKind::Elf);
    assert_eq!(applied.symbols.used[0].frames, 2);

    let app = phonelogs_symbols::fingerprint::AppCode::for_app(APP, APP);
    let analysis =
        phonelogs_symbols::fingerprint::analyse(report.kind, &report.summary, &applied.text, &app);
    let blamed = analysis.blamed_frame.unwrap();
    assert_eq!(blamed.function, theirs[0].0);
    assert_eq!(analysis.exception, "SIGSEGV");

    // Another build of the library: the frame's build id matches nothing filed.
    let other = report
        .text
        .replace(&build_id, "00112233445566778899aabbccddeeff00112233");
    let applied = symbols.apply(
        Target {
            app: APP,
            version: Some("7"),
        },
        &Report {
            text: other,
            ..report.clone()
        },
    );
    assert!(applied.symbols.used.is_empty());
    assert!(
        matches!(
            &applied.symbols.not_matched[..],
            [NotMatched::BuildIdMismatch { library, filed, .. }] if library == "libcrashlib.so" && filed == &vec![build_id.clone()]
        ),
        "{:?}",
        applied.symbols
    );
}

#[test]
fn a_damaged_library_never_panics() {
    let dir = tempfile::tempdir().unwrap();
    let Some((whole, _)) = build(dir.path()) else {
        return;
    };
    let original = std::fs::read(&whole).unwrap();
    // A fixed pseudo-random walk (xorshift), so a failure repeats: flipped bytes, zeroed
    // runs and truncations all over the file, headers and DWARF included.
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for round in 0..300 {
        let mut bytes = original.clone();
        let len = bytes.len() as u64;
        for _ in 0..(1 + round % 16) {
            let at = (next() % len) as usize;
            bytes[at] ^= (next() & 0xff) as u8 | 1;
        }
        if round % 5 == 0 {
            bytes.truncate((next() % len) as usize);
        }
        let _ = phonelogs_symbols::native::file_ids(&bytes);
        if let Ok(file) = DebugFile::parse(&bytes, None) {
            for _ in 0..8 {
                let _ = file.frames_at(next() % 0x3000);
            }
        }
    }
}

/// Issue 28, item 14: a symbol file that cannot be read is named relative to the symbols
/// directory, never by its absolute path on this computer (the account reaches the agent).
#[test]
fn an_unreadable_symbol_file_is_named_inside_the_symbols_directory_only() {
    let dir = tempfile::tempdir().unwrap();
    let Some(Filed {
        symbols,
        build_id,
        placed,
        ..
    }) = filed(dir.path())
    else {
        return;
    };
    // The index finds the library; then it goes away before it is read.
    assert_eq!(symbols.index(APP).len(), 1);
    std::fs::remove_file(&placed).unwrap();
    let lib = format!("/data/app/{APP}-1/lib/arm64/libcrashlib.so");
    let report = Report {
        kind: CrashKind::NativeCrash,
        time: None,
        pid: Some(4242),
        process: APP.into(),
        summary: "signal 11 (SIGSEGV)".into(),
        text: format!("backtrace:\n      #00 pc 0000000000001000  {lib} (BuildId: {build_id})\n"),
        warnings: vec![],
    };
    let applied = symbols.apply(
        Target {
            app: APP,
            version: Some("7"),
        },
        &report,
    );
    let [NotMatched::Unreadable { path, error }] = &applied.symbols.not_matched[..] else {
        panic!("{:?}", applied.symbols);
    };
    let inside = Path::new(APP)
        .join("7")
        .join("native")
        .join(&build_id)
        .join("libcrashlib.so");
    assert_eq!(path, &inside);
    let host = dir.path().to_string_lossy().into_owned();
    let described = applied.symbols.describe();
    for text in [error.as_str(), described.as_str()] {
        assert!(!text.contains(&host), "a host path: {text}");
    }
    assert!(
        described.contains(&inside.display().to_string()),
        "{described}"
    );
}
