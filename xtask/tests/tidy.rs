//! Tidy checks over the whole repository, run by `cargo test`: every Rust file opens with a `//!`
//! doc, every crate has a README, no library writes to stdout (but the person's console, whose
//! stdout is a terminal), dependencies point the one way ARCHITECTURE.md states, the gateway
//! knows no wire format, each binary is its flags and wiring, and the permission path stays
//! readable (no function over 80 lines in the gateway, the view, the MCP frontend, HTTP, phones
//! and the console, no product function over 100 lines anywhere but those
//! `LONG_FUNCTIONS_LEFT` names, no cycle between the files of a crate or of xtask, the gateway's
//! `src/` under 10,000 lines).

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
    // Every library crate, the simulators included: a simulator's own binary (`phonelogs sim`)
    // prints, the library never does.
    // The one exemption: `phonelogs-console` is the person's side of the `phonelogs` command,
    // whose stdout is the person's terminal; only that binary may depend on it
    // (`dependencies_point_one_way`), so its prints never reach an MCP transport.
    let libraries: Vec<PathBuf> = crate_dirs(&root)
        .into_iter()
        .filter(|dir| dir.parent().is_some_and(|p| p.ends_with("crates")))
        .filter(|dir| !dir.ends_with("crates/console"))
        .collect();
    assert!(
        libraries.len() >= 10,
        "found too few libraries: {libraries:?}"
    );
    for lib in libraries {
        let mut files = Vec::new();
        rust_files(&lib.join("src"), &mut files);
        for file in files {
            let text = fs::read_to_string(&file).unwrap_or_default();
            // A crate's own unit tests may print; its code may not.
            let code_part = text.split("#[cfg(test)]").next().unwrap_or_default();
            for (number, line) in code_part.lines().enumerate() {
                let code = line.trim_start();
                if code.starts_with("//") {
                    continue;
                }
                let printing = ["println!(", "print!("].iter().any(|mac| {
                    code.match_indices(mac)
                        .any(|(at, _)| !code[..at].ends_with('e'))
                });
                if printing || code.contains("std::io::stdout()") {
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

/// The workspace's own dependencies of each crate, normal ones only (`cargo metadata`), and the
/// third-party ones of the crates whose list matters.
/// A crate's name and its normal dependencies, each with the features it turns on.
type Dependencies = Vec<(String, Vec<(String, Vec<String>)>)>;

fn dependencies() -> Dependencies {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(workspace_root())
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("cargo metadata prints JSON");
    let mut crates = Vec::new();
    for package in metadata["packages"].as_array().into_iter().flatten() {
        let name = package["name"].as_str().unwrap_or_default().to_owned();
        let normal = package["dependencies"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|d| d["kind"].is_null())
            .map(|d| {
                let features = d["features"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|f| f.as_str().map(str::to_owned))
                    .collect();
                (d["name"].as_str().unwrap_or_default().to_owned(), features)
            })
            .collect();
        crates.push((name, normal));
    }
    crates
}

#[test]
fn dependencies_point_one_way() {
    // As ARCHITECTURE.md states: the simulators depend on no workspace crate, `crash` only on
    // `driver` (the contract holds the types both use);
    // backends know `driver` and `crash`, never each other; `symbols` knows only `crash` (whose
    // report type it symbolicates); `view` (what an agent reads of lines and reports) knows only
    // `driver`; `gateway` knows `driver`, `policy`, `symbols` (applied before the one cut) and
    // `view`; only the MCP frontend and `http` (its Streamable HTTP) know JSON-RPC; nothing above
    // `driver` knows adb or usbmux. Binaries and xtask may use anything.
    let allowed: &[(&str, &[&str])] = &[
        ("phonelogs-driver", &[]),
        ("phonelogs-crash", &["phonelogs-driver"]),
        ("phonelogs-adbsim", &[]),
        ("phonelogs-iossim", &[]),
        ("phonelogs-policy", &["phonelogs-driver"]),
        ("phonelogs-fake", &["phonelogs-driver"]),
        (
            "phonelogs-android",
            &["phonelogs-driver", "phonelogs-crash"],
        ),
        ("phonelogs-ios", &["phonelogs-driver", "phonelogs-crash"]),
        ("phonelogs-symbols", &["phonelogs-crash"]),
        ("phonelogs-view", &["phonelogs-driver"]),
        // The one rule for secret files, used by the HTTP transport and the PostgreSQL store.
        ("phonelogs-secret-file", &[]),
        (
            "phonelogs-gateway",
            &[
                "phonelogs-driver",
                "phonelogs-policy",
                "phonelogs-symbols",
                "phonelogs-view",
            ],
        ),
        (
            "phonelogs-mcp-frontend",
            &["phonelogs-driver", "phonelogs-gateway"],
        ),
        // The PostgreSQL store implements the gateway's store contract.
        (
            "phonelogs-store-pg",
            &[
                "phonelogs-driver",
                "phonelogs-policy",
                "phonelogs-gateway",
                "phonelogs-secret-file",
            ],
        ),
        // Builds the drivers from flags, config and environment, as the demo phones do.
        (
            "phonelogs-phones",
            &[
                "phonelogs-driver",
                "phonelogs-gateway",
                "phonelogs-android",
                "phonelogs-ios",
                "phonelogs-demo",
                "phonelogs-adbsim",
                "phonelogs-iossim",
            ],
        ),
        // The person's side: everything below it, nothing of the MCP server.
        (
            "phonelogs-console",
            &[
                "phonelogs-adbsim",
                "phonelogs-android",
                "phonelogs-crash",
                "phonelogs-demo",
                "phonelogs-driver",
                "phonelogs-gateway",
                "phonelogs-ios",
                "phonelogs-iossim",
                "phonelogs-phones",
                "phonelogs-store-pg",
                "phonelogs-symbols",
            ],
        ),
        // Streamable HTTP in front of the MCP frontend's server.
        (
            "phonelogs-http",
            &[
                "phonelogs-driver",
                "phonelogs-gateway",
                "phonelogs-mcp-frontend",
                "phonelogs-policy",
                "phonelogs-secret-file",
            ],
        ),
        // The demo phones sit above the backends, as the binaries do.
        (
            "phonelogs-demo",
            &[
                "phonelogs-driver",
                "phonelogs-fake",
                "phonelogs-adbsim",
                "phonelogs-iossim",
                "phonelogs-android",
                "phonelogs-ios",
            ],
        ),
    ];
    let crates = dependencies();
    let mut wrong = Vec::new();
    for (name, may) in allowed {
        let Some((_, deps)) = crates.iter().find(|(n, _)| n == name) else {
            wrong.push(format!("{name} is not in the workspace"));
            continue;
        };
        for (dep, features) in deps {
            if dep.starts_with("phonelogs-") && !may.contains(&dep.as_str()) {
                wrong.push(format!("{name} depends on {dep}"));
            }
            // The conformance suite is for tests only.
            if features.iter().any(|f| f == "conformance") {
                wrong.push(format!(
                    "{name} turns on {dep}'s conformance feature outside dev-dependencies"
                ));
            }
            if ["phonelogs-gateway", "phonelogs-view"].contains(name)
                && ["serde_json", "schemars", "rmcp"].contains(&dep.as_str())
            {
                wrong.push(format!(
                    "{name} depends on {dep}: it must know no wire format"
                ));
            }
            // The HTTP transport serves the frontend's server through rmcp's Streamable HTTP.
            if !["phonelogs-mcp-frontend", "phonelogs-http"].contains(name) && dep == "rmcp" {
                wrong.push(format!(
                    "{name} depends on rmcp: only the MCP frontend and its HTTP transport know JSON-RPC"
                ));
            }
        }
    }
    // The console prints to stdout (the person's terminal): only the `phonelogs` binary may
    // depend on it, never the MCP server, whose stdout is its transport.
    for (name, deps) in &crates {
        if name != "phonelogs" && deps.iter().any(|(dep, _)| dep == "phonelogs-console") {
            wrong.push(format!(
                "{name} depends on phonelogs-console: only the phonelogs binary may"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "dependencies pointing the wrong way: {wrong:#?}"
    );
}

/// The lines of Rust under `dir`.
fn rust_lines(dir: &Path) -> usize {
    let mut files = Vec::new();
    rust_files(dir, &mut files);
    files
        .iter()
        .map(|file| fs::read_to_string(file).unwrap_or_default().lines().count())
        .sum()
}

#[test]
fn each_binary_is_its_flags_and_wiring() {
    // What a command does lives in a library with its own tests (the person's side in
    // `console`, HTTP in `http`, the drivers in `phones`); a binary's `src/` parses its flags
    // and wires those together.
    let root = workspace_root();
    let mut fat = Vec::new();
    for binary in ["phonelogs", "phonelogs-mcp"] {
        let lines = rust_lines(&root.join("bins").join(binary).join("src"));
        assert!(lines > 50, "found too little of {binary}: {lines} lines");
        if lines >= 800 {
            fat.push(format!("bins/{binary}/src: {lines} lines"));
        }
    }
    assert!(
        fat.is_empty(),
        "binaries over 800 lines (move what they do into a library): {fat:#?}"
    );
}

/// The name of the function a rustfmt-formatted line declares, when it declares one: any
/// visibility (`pub`, `pub(crate)`, `pub(super)`, `pub(in …)`), then any of `const`, `async`,
/// `unsafe`, `extern "…"`, then `fn`.
fn declared_function(code: &str) -> Option<String> {
    let mut rest = code;
    if let Some(after) = rest.strip_prefix("pub") {
        rest = match after.strip_prefix('(') {
            Some(inner) => inner.split_once(')')?.1.strip_prefix(' ')?,
            None => after.strip_prefix(' ')?,
        };
    }
    loop {
        if let Some(after) = ["const ", "async ", "unsafe ", "default "]
            .iter()
            .find_map(|qualifier| rest.strip_prefix(qualifier))
        {
            rest = after;
        } else if let Some(after) = rest.strip_prefix("extern ") {
            rest = match after.strip_prefix('"') {
                Some(abi) => abi.split_once('"')?.1.strip_prefix(' ')?,
                None => after,
            };
        } else {
            break;
        }
    }
    let name: String = rest
        .strip_prefix("fn ")?
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// The line ranges of a file's `#[cfg(test)]` items (a module, a function, a `mod x;`).
fn test_ranges(lines: &[&str]) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        if line.trim() != "#[cfg(test)]" {
            continue;
        }
        let indent = &line[..line.len() - line.trim_start().len()];
        let item = (at + 1..lines.len())
            .find(|&i| {
                !lines[i].trim_start().starts_with("#[") && !lines[i].trim_start().starts_with("//")
            })
            .unwrap_or(at);
        if lines[item].trim_end().ends_with(';') {
            ranges.push((at, item));
            continue;
        }
        let closing = format!("{indent}}}");
        let end = (item..lines.len())
            .find(|&i| lines[i] == closing)
            .unwrap_or(lines.len());
        ranges.push((at, end));
    }
    ranges
}

/// The functions of a rustfmt-formatted file outside its `#[cfg(test)]` items, with their
/// length in lines: from the `fn` line to the closing brace at the same indentation.
/// Declarations without a body (a trait's) and one-line functions are not counted.
fn function_lengths(text: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let tests = test_ranges(&lines);
    let mut found = Vec::new();
    for (start, line) in lines.iter().enumerate() {
        let code = line.trim_start();
        let indent = &line[..line.len() - code.len()];
        let Some(name) = declared_function(code) else {
            continue;
        };
        if tests.iter().any(|&(from, to)| (from..=to).contains(&start)) {
            continue;
        }
        // The signature ends with the body's `{`, or with `;` for a declaration.
        let opens = lines[start..].iter().find_map(|l| {
            let l = l.trim_end();
            if l.ends_with('{') {
                Some(true)
            } else if l.ends_with(';') || l.ends_with('}') {
                Some(false)
            } else {
                None
            }
        });
        if opens != Some(true) {
            continue;
        }
        let closing = format!("{indent}}}");
        if let Some(end) = lines[start..].iter().position(|l| *l == closing) {
            found.push((name, start + 1, end + 1));
        }
    }
    found
}

#[test]
fn no_function_in_the_gateway_the_view_or_the_mcp_frontend_is_longer_than_80_lines() {
    let root = workspace_root();
    let mut long = Vec::new();
    // The permission path (gateway, view, MCP frontend) and the crates the binaries became.
    for krate in ["gateway", "view", "mcp", "http", "phones", "console"] {
        let mut files = Vec::new();
        rust_files(&root.join("crates").join(krate).join("src"), &mut files);
        for file in files {
            let text = fs::read_to_string(&file).unwrap_or_default();
            for (name, line, length) in function_lengths(&text) {
                if length > 80 {
                    long.push(format!("{}:{line} {name}: {length} lines", file.display()));
                }
            }
        }
    }
    assert!(long.is_empty(), "functions longer than 80 lines: {long:#?}");
}

/// The files of `files` that only tests compile: declared `#[cfg(test)] mod name;` by their
/// parent module (`lib.rs`, `main.rs`, `mod.rs` declare modules beside them, `x.rs` in `x/`).
fn test_only_files(files: &[PathBuf]) -> Vec<PathBuf> {
    let mut test_only = Vec::new();
    for file in files {
        let text = fs::read_to_string(file).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let stem = file.file_stem().unwrap_or_default().to_string_lossy();
        let dir = file.parent().unwrap_or(file);
        let children = if ["lib", "main", "mod"].contains(&stem.as_ref()) {
            dir.to_path_buf()
        } else {
            dir.join(stem.as_ref())
        };
        for (_, item) in test_ranges(&lines) {
            let declared = lines[item].trim();
            let Some(name) = declared
                .strip_suffix(';')
                .and_then(|d| d.rsplit_once("mod "))
                .map(|(_, name)| name)
            else {
                continue;
            };
            let module = [children.join(format!("{name}.rs")), children.join(name)];
            test_only.extend(
                files
                    .iter()
                    .filter(|f| **f == module[0] || f.starts_with(&module[1]))
                    .cloned(),
            );
        }
    }
    test_only
}

/// Product functions still over 100 lines, as `path function`: the list only shrinks (a name
/// no longer over fails the test until it is taken off). Empty since issue 40 split the last
/// ones into steps; a function that cannot be split at once is named here, never left unsaid.
const LONG_FUNCTIONS_LEFT: &[&str] = &[];

#[test]
fn no_product_function_is_longer_than_100_lines() {
    let root = workspace_root();
    let mut long = Vec::new();
    for dir in crate_dirs(&root) {
        let mut files = Vec::new();
        rust_files(&dir.join("src"), &mut files);
        let test_only = test_only_files(&files);
        for file in files.iter().filter(|f| !test_only.contains(f)) {
            let text = fs::read_to_string(file).unwrap_or_default();
            let path = file
                .strip_prefix(&root)
                .unwrap_or(file)
                .to_string_lossy()
                .replace('\\', "/");
            for (name, line, length) in function_lengths(&text) {
                if length > 100 {
                    long.push((format!("{path} {name}"), line, length));
                }
            }
        }
    }
    let unlisted: Vec<String> = long
        .iter()
        .filter(|(named, _, _)| !LONG_FUNCTIONS_LEFT.contains(&named.as_str()))
        .map(|(named, line, length)| format!("{named} (line {line}): {length} lines"))
        .collect();
    let stale: Vec<&&str> = LONG_FUNCTIONS_LEFT
        .iter()
        .filter(|listed| !long.iter().any(|(named, _, _)| named == *listed))
        .collect();
    assert!(
        unlisted.is_empty(),
        "product functions longer than 100 lines (split them into steps): {unlisted:#?}"
    );
    assert!(
        stale.is_empty(),
        "no longer over 100 lines or gone: take them off LONG_FUNCTIONS_LEFT: {stale:#?}"
    );
}

/// The modules of a crate's `src/` (a file, or a directory with `mod.rs`) and the modules each
/// one refers to through `crate::` paths outside comments and tests. A name `lib.rs` re-exports
/// counts as a reference to the module it comes from; a name `lib.rs` defines itself, to `lib`.
fn module_graph(
    src: &Path,
) -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    use std::collections::{BTreeMap, BTreeSet};
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let module_of = |path: &Path| -> String {
        let relative = path.strip_prefix(src).unwrap_or(path);
        let first = relative
            .components()
            .next()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .unwrap_or_default();
        first.trim_end_matches(".rs").to_owned()
    };
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(f)).collect();
    let code_of = |text: &str| -> String {
        let text = text.split("#[cfg(test)]").next().unwrap_or_default();
        text.lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    // A library's root is `lib.rs`, a program's (xtask) `main.rs`.
    let root = if src.join("lib.rs").exists() {
        "lib"
    } else {
        "main"
    };
    let lib = code_of(&fs::read_to_string(src.join(format!("{root}.rs"))).unwrap_or_default());
    // `pub use module::{A, B};` and `pub use module::A;` in lib.rs.
    let mut exported: BTreeMap<String, String> = BTreeMap::new();
    for statement in lib.split(';') {
        let statement = statement.trim();
        let Some(rest) = statement
            .strip_prefix("pub use ")
            .or_else(|| statement.strip_prefix("pub(crate) use "))
        else {
            continue;
        };
        let Some((module, names)) = rest.split_once("::") else {
            continue;
        };
        if !modules.contains(module) {
            continue;
        }
        for name in names
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|n| !n.is_empty())
        {
            exported.insert(name.to_owned(), module.to_owned());
        }
    }
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let from = module_of(file);
        if from == root {
            continue;
        }
        let text = code_of(&fs::read_to_string(file).unwrap_or_default());
        for piece in text.split("crate::").skip(1) {
            let names: Vec<&str> = if let Some(group) = piece.strip_prefix('{') {
                group
                    .split('}')
                    .next()
                    .unwrap_or_default()
                    .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .filter(|n| !n.is_empty())
                    .collect()
            } else {
                piece
                    .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .take(1)
                    .collect()
            };
            for name in names {
                let to = if modules.contains(name) {
                    Some(name.to_owned())
                } else {
                    exported.get(name).cloned()
                };
                if let Some(to) = to.filter(|to| *to != from && to != root) {
                    graph.entry(from.clone()).or_default().insert(to);
                }
            }
        }
    }
    graph
}

#[test]
fn the_files_of_a_crate_depend_on_each_other_one_way() {
    let root = workspace_root();
    let mut cycles = Vec::new();
    let crates = [
        "gateway", "view", "mcp", "policy", "driver", "android", "ios", "crash", "iossim",
        "adbsim", "http", "phones", "console", "store-pg",
    ];
    let sources = crates
        .iter()
        .map(|krate| (*krate, root.join("crates").join(krate).join("src")))
        .chain([("xtask", root.join("xtask").join("src"))]);
    for (krate, src) in sources {
        let graph = module_graph(&src);
        // A depth-first search from every module; a module met again on the path is a cycle.
        fn visit(
            node: &str,
            graph: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
            path: &mut Vec<String>,
            found: &mut Vec<String>,
        ) {
            for next in graph.get(node).into_iter().flatten() {
                if let Some(at) = path.iter().position(|p| p == next) {
                    found.push(path[at..].join(" -> ") + " -> " + next);
                } else if path.len() < 16 {
                    path.push(next.clone());
                    visit(next, graph, path, found);
                    path.pop();
                }
            }
        }
        for start in graph.keys() {
            let mut found = Vec::new();
            visit(start, &graph, &mut vec![start.clone()], &mut found);
            cycles.extend(found.into_iter().map(|c| format!("{krate}: {c}")));
        }
    }
    cycles.sort();
    cycles.dedup();
    assert!(cycles.is_empty(), "file cycles: {cycles:#?}");
}

/// The lines of the Rust files under `dir`.
fn lines_under(dir: &Path) -> usize {
    let mut files = Vec::new();
    rust_files(dir, &mut files);
    files
        .iter()
        .map(|file| fs::read_to_string(file).unwrap_or_default().lines().count())
        .sum()
}

#[test]
fn the_gateway_stays_under_its_size() {
    // Permissions, sessions, the store and live reads; what an agent reads of lines and
    // reports is the view's (issue 40). 10,000 lines leaves room for the store's trait.
    let lines = lines_under(&workspace_root().join("crates/gateway/src"));
    assert!(
        lines > 0 && lines < 10_000,
        "crates/gateway/src has {lines} lines: move pure text work into crates/view"
    );
}

#[test]
fn the_checks_can_fail() {
    // A long function and a cycle, made up here, are found, so the two checks above are not
    // vacuous.
    let long = format!("fn long() {{\n{}}}\n", "    step();\n".repeat(90));
    assert_eq!(function_lengths(&long), vec![("long".to_owned(), 1, 92)]);
    // Every visibility and qualifier is seen; a test's function and a declaration are not.
    for signature in [
        "pub(super) fn",
        "const fn",
        "pub const unsafe fn",
        "async fn",
        "pub(crate) async fn",
        "unsafe extern \"C\" fn",
    ] {
        let text = format!("{signature} long() {{\n{}}}\n", "    step();\n".repeat(90));
        assert_eq!(
            function_lengths(&text),
            vec![("long".to_owned(), 1, 92)],
            "{signature}"
        );
    }
    let tested = format!(
        "#[cfg(test)]\nmod tests {{\n    {}}}\n",
        long.replace('\n', "\n    ")
    );
    assert!(function_lengths(&tested).is_empty(), "{tested}");
    let declared = format!(
        "trait T {{\n    fn f(&self);\n}}\nimpl T for () {{\n    fn f(&self) {{\n{}    }}\n}}\n",
        "        step();\n".repeat(90)
    );
    assert_eq!(function_lengths(&declared), vec![("f".to_owned(), 5, 92)]);
    let dir = std::env::temp_dir().join(format!("tidy-cycle-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap_or_default();
    fs::write(dir.join("lib.rs"), "//! x\nmod a;\nmod b;\n").unwrap_or_default();
    fs::write(dir.join("a.rs"), "//! a\nuse crate::b::B;\n").unwrap_or_default();
    fs::write(dir.join("b.rs"), "//! b\npub use crate::a::A;\n").unwrap_or_default();
    let graph = module_graph(&dir);
    let _ = fs::remove_dir_all(&dir);
    assert!(
        graph.get("a").is_some_and(|to| to.contains("b")),
        "{graph:?}"
    );
    assert!(
        graph.get("b").is_some_and(|to| to.contains("a")),
        "{graph:?}"
    );
}
