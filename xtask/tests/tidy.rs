//! Tidy checks over the whole repository, run by `cargo test`: every Rust file opens with a `//!`
//! doc, every crate has a README, and no library writes to stdout.

use std::fs;
use std::path::{Path, PathBuf};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the workspace root")
        .to_path_buf()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if path.is_dir() {
            if name == "target" || name.starts_with('.') || name == "corpus" || name == "artifacts"
            {
                continue;
            }
            rust_files(&path, out);
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

fn crate_dirs(root: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![root.join("xtask")];
    for group in ["crates", "bins"] {
        if let Ok(entries) = fs::read_dir(root.join(group)) {
            dirs.extend(
                entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.join("Cargo.toml").exists()),
            );
        }
    }
    dirs
}

#[test]
fn every_rust_file_starts_with_a_module_doc() {
    let root = workspace_root();
    let mut files = Vec::new();
    for dir in crate_dirs(&root) {
        rust_files(&dir, &mut files);
    }
    rust_files(&root.join("fuzz"), &mut files);
    assert!(files.len() > 5, "found too few Rust files: {files:?}");
    let missing: Vec<String> = files
        .iter()
        .filter(|path| {
            let text = fs::read_to_string(path).unwrap_or_default();
            !text.trim_start().starts_with("//!")
        })
        .map(|p| p.strip_prefix(&root).unwrap_or(p).display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "these files do not start with a `//!` doc comment: {missing:#?}"
    );
}

#[test]
fn every_crate_has_a_readme() {
    let root = workspace_root();
    let dirs = crate_dirs(&root);
    assert!(dirs.len() >= 12, "expected every crate, found {dirs:?}");
    let missing: Vec<String> = dirs
        .iter()
        .filter(|dir| !dir.join("README.md").exists())
        .map(|p| p.display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "crates without a README.md: {missing:#?}"
    );
}

#[test]
fn libraries_never_print_to_stdout() {
    // stdout is the MCP transport; libraries report through `tracing`, which goes to stderr.
    let root = workspace_root();
    let mut offenders = Vec::new();
    for lib in [
        "driver", "crash", "policy", "gateway", "android", "ios", "fake", "mcp",
    ] {
        let mut files = Vec::new();
        rust_files(&root.join("crates").join(lib).join("src"), &mut files);
        for file in files {
            let text = fs::read_to_string(&file).unwrap_or_default();
            for (number, line) in text.lines().enumerate() {
                let code = line.trim_start();
                if code.starts_with("//") {
                    continue;
                }
                if code.contains("println!(")
                    || code.contains("print!(")
                    || code.contains("std::io::stdout()")
                {
                    offenders.push(format!("{}:{}", file.display(), number + 1));
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "libraries must not write to stdout: {offenders:#?}"
    );
}

#[test]
fn the_readme_names_the_two_commands() {
    let readme = fs::read_to_string(workspace_root().join("README.md")).unwrap_or_default();
    assert!(
        readme.contains("cargo test --workspace"),
        "README must give the test command"
    );
    assert!(
        readme.contains("--demo"),
        "README must give the command that runs the main job"
    );
}
