//! What the MCP ecosystem reads to find and install phonelogs, checked against the real
//! checkers: `server.json` against the MCP Registry's published JSON schema (vendored in
//! `testdata/mcp-registry/` with its source) and against this crate (version, name, the flags
//! and variables it names); `[package.metadata.binstall]`; and the Claude Code plugin
//! (`docs/.claude-plugin/plugin.json`, the marketplace in `.claude-plugin/`) validated, installed
//! and connected by Claude Code itself.

#[path = "../../phonelogs/tests/support/client_clis.rs"]
mod client_clis;

use std::path::{Path, PathBuf};
use std::time::Duration;

use client_clis::{client_cli, client_command, run_with_limit};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn json(relative: &str) -> serde_json::Value {
    let path = root().join(relative);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{relative}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{relative}: {e}"))
}

fn registry_validator() -> jsonschema::Validator {
    jsonschema::validator_for(&json("testdata/mcp-registry/server.schema.json"))
        .expect("the registry's schema compiles")
}

#[test]
fn server_json_is_valid_for_the_mcp_registry() {
    let validator = registry_validator();
    let server = json("server.json");
    let errors: Vec<String> = validator
        .iter_errors(&server)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "server.json: {errors:#?}");

    // The schema has teeth: what the registry rejects is rejected here too.
    let mut too_long = server.clone();
    too_long["description"] = "x".repeat(101).into();
    assert!(
        !validator.is_valid(&too_long),
        "a description over 100 characters"
    );
    let mut no_transport = server.clone();
    no_transport["packages"][0]
        .as_object_mut()
        .unwrap()
        .remove("transport");
    assert!(
        !validator.is_valid(&no_transport),
        "a package without transport"
    );
    let mut bad_name = server;
    bad_name["name"] = "phonelogs".into();
    assert!(!validator.is_valid(&bad_name), "a name without a namespace");
}

#[test]
fn server_json_names_this_crate_its_flags_and_its_variables() {
    let server = json("server.json");
    let package = &server["packages"][0];
    assert_eq!(package["registryType"], "cargo");
    assert_eq!(package["identifier"], env!("CARGO_PKG_NAME"));
    assert_eq!(package["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(server["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(package["transport"]["type"], "stdio");

    // The namespace is the repository's host, reversed, as the registry verifies a domain; and
    // the crate's README carries the `mcp-name:` line the registry reads on crates.io.
    let repository = env!("CARGO_PKG_REPOSITORY");
    let host = repository
        .split("://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap();
    let reversed: Vec<&str> = host.split('.').rev().collect();
    let name = server["name"].as_str().unwrap();
    assert_eq!(
        name.split('/').next().unwrap(),
        reversed.join("."),
        "{repository}"
    );
    let readme = std::fs::read_to_string(root().join("bins/phonelogs-mcp/README.md")).unwrap();
    assert!(
        readme.contains(&format!("mcp-name: {name}")),
        "README lacks `mcp-name: {name}`"
    );

    // Every flag it names is one of ours, with our choices; every variable is documented.
    let help = std::process::Command::new(env!("CARGO_BIN_EXE_phonelogs-mcp"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    let docs = std::fs::read_to_string(root().join("docs/mcp.md")).unwrap();
    for argument in package["packageArguments"].as_array().unwrap() {
        let flag = argument["name"].as_str().unwrap();
        assert!(
            help.lines()
                .any(|l| l.trim_start().starts_with(&format!("{flag} "))),
            "{flag} is not a flag of phonelogs-mcp:\n{help}"
        );
        assert!(
            !argument["description"]
                .as_str()
                .unwrap_or_default()
                .is_empty(),
            "{flag}"
        );
        for choice in argument["choices"].as_array().into_iter().flatten() {
            assert!(help.contains(choice.as_str().unwrap()), "{flag} {choice}");
        }
    }
    for variable in package["environmentVariables"].as_array().unwrap() {
        let name = variable["name"].as_str().unwrap();
        assert!(docs.contains(name), "{name} is not in docs/mcp.md");
        assert!(
            !variable["description"]
                .as_str()
                .unwrap_or_default()
                .is_empty(),
            "{name}"
        );
    }
}

#[test]
fn binstall_metadata_points_both_binaries_at_one_archive() {
    let mut seen = Vec::new();
    for crate_dir in ["bins/phonelogs-mcp", "bins/phonelogs"] {
        let text = std::fs::read_to_string(root().join(crate_dir).join("Cargo.toml")).unwrap();
        let manifest: toml::Table = toml::from_str(&text).unwrap();
        let binstall = manifest["package"]["metadata"]["binstall"]
            .as_table()
            .unwrap_or_else(|| panic!("{crate_dir} has no [package.metadata.binstall]"));
        let field = |key: &str| binstall[key].as_str().unwrap().to_owned();
        assert_eq!(field("pkg-fmt"), "tgz");
        // Only the placeholders cargo-binstall documents.
        for template in [field("pkg-url"), field("bin-dir")] {
            for placeholder in template
                .split('{')
                .skip(1)
                .map(|p| p.split('}').next().unwrap())
            {
                assert!(
                    [
                        "repo",
                        "version",
                        "target",
                        "archive-suffix",
                        "bin",
                        "binary-ext"
                    ]
                    .contains(&placeholder.trim()),
                    "{crate_dir}: unknown placeholder {placeholder}"
                );
            }
        }
        seen.push((field("pkg-url"), field("bin-dir")));
    }
    assert_eq!(seen[0], seen[1], "one archive holds both binaries");
}

#[test]
fn the_claude_code_plugin_carries_the_server_and_docs_skill_md() {
    let plugin = json("docs/.claude-plugin/plugin.json");
    assert_eq!(plugin["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(
        plugin["mcpServers"]["phonelogs"],
        serde_json::json!({"command": "phonelogs-mcp", "args": ["--agent", "claude-code"]})
    );
    let marketplace = json(".claude-plugin/marketplace.json");
    assert_eq!(marketplace["plugins"][0]["source"], "./docs");

    let Some(claude) = client_cli("claude") else {
        return;
    };
    let limit = Duration::from_secs(120);
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(root()).unwrap();
    let claude_run = |args: &[&str]| {
        let mut command = client_command(&claude, home.path(), work.path());
        // The plugin runs `phonelogs-mcp` from PATH, where `cargo install` puts it.
        let server_dir = Path::new(env!("CARGO_BIN_EXE_phonelogs-mcp"))
            .parent()
            .unwrap();
        let path = std::env::join_paths(std::iter::once(server_dir.to_path_buf()).chain(
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
        ))
        .unwrap();
        command.args(args).env("PATH", path);
        let out = run_with_limit(command, limit);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "claude {args:?}:\n{text}");
        text
    };

    // Claude Code's own validator, warnings as errors: the plugin, then the marketplace.
    let root_text = root.to_string_lossy().into_owned();
    let plugin_dir = root.join("docs").to_string_lossy().into_owned();
    claude_run(&["plugin", "validate", "--strict", &plugin_dir]);
    claude_run(&["plugin", "validate", "--strict", &root_text]);

    // Installed from this repository as a marketplace, as a user would from its address.
    claude_run(&["plugin", "marketplace", "add", &root_text]);
    claude_run(&["plugin", "install", "phonelogs@phonelogs"]);
    let details = claude_run(&["plugin", "details", "phonelogs@phonelogs"]);
    assert!(
        details
            .lines()
            .any(|l| l.trim_start().starts_with("Skills (1)") && l.contains("phonelogs")),
        "{details}"
    );
    let listed = claude_run(&["mcp", "list"]);
    let line = listed
        .lines()
        .find(|l| l.starts_with("plugin:phonelogs:phonelogs:"))
        .unwrap_or_else(|| panic!("{listed}"));
    assert!(line.contains("✔ Connected"), "{listed}");
}
