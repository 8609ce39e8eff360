//! `phonelogs setup CLIENT`, proven by the clients themselves: for Claude Code, Codex and
//! Gemini CLI the entry we write equals what the client's own `mcp add` writes (the CLI run in
//! one temporary home, `phonelogs setup` in another), and the client then lists phonelogs
//! (Claude Code and Gemini CLI start it and report it connected, on `phonelogs-mcp --demo`).
//! The other clients' files are checked against their documented shape. Then what a person
//! relies on: `--dry-run` writes nothing, a broken file is left as it was, a backup is kept,
//! `--remove` takes out only our entry, and `doctor` names the clients that run phonelogs.

#[path = "support/client_clis.rs"]
mod client_clis;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use client_clis::{client_cli, client_command, run_with_limit};

const LIMIT: Duration = Duration::from_secs(120);

/// `phonelogs-mcp`, built beside `phonelogs` (by `cargo test --workspace`, or `cargo build`).
fn server() -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_BIN_EXE_phonelogs"))
        .with_file_name(format!("phonelogs-mcp{}", std::env::consts::EXE_SUFFIX));
    if path.is_file() {
        return Some(path);
    }
    let why = format!(
        "skipping: {} is not built (cargo build -p phonelogs-mcp)",
        path.display()
    );
    if std::env::var("PHONELOGS_REQUIRE_CLIENT_CLIS").is_ok_and(|v| v == "1") {
        panic!("{why}");
    }
    eprintln!("{why}");
    None
}

/// `phonelogs ARGS` with `home` as the home and `dir` as the current directory.
fn phonelogs(home: &Path, dir: &Path, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_phonelogs"));
    command
        .args(args)
        .current_dir(dir)
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("CODEX_HOME")
        .env_remove("APPDATA")
        .env("PHONELOGS_STATE_DIR", home.join("state"));
    run_with_limit(command, LIMIT)
}

fn ok(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{}\n{}",
        stdout,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display()))
}

/// Two homes and two projects: one pair for the client's own command, one for ours.
struct Sides {
    _dir: tempfile::TempDir,
    cli_home: PathBuf,
    cli_project: PathBuf,
    our_home: PathBuf,
    our_project: PathBuf,
}

fn sides() -> Sides {
    let dir = tempfile::tempdir().expect("a temporary folder");
    // The project folders are git repositories, as a project usually is (Gemini CLI and Codex
    // look for the project's root).
    let make = |name: &str| {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.join(".git")).expect("make the folder");
        std::fs::canonicalize(&path).expect("the folder's path")
    };
    Sides {
        cli_home: make("cli-home"),
        cli_project: make("cli-project"),
        our_home: make("our-home"),
        our_project: make("our-project"),
        _dir: dir,
    }
}

#[test]
fn claude_code_gets_the_entry_claude_mcp_add_writes_and_connects() {
    let (Some(claude), Some(server)) = (client_cli("claude"), server()) else {
        return;
    };
    let s = sides();
    let server_text = server.to_string_lossy().into_owned();
    for scope in ["user", "project"] {
        let mut add = client_command(&claude, &s.cli_home, &s.cli_project);
        add.args(["mcp", "add", "-s", scope, "phonelogs", "--"])
            .args([&server_text, "--agent", "claude-code", "--demo"]);
        ok(&run_with_limit(add, LIMIT));
        ok(&phonelogs(
            &s.our_home,
            &s.our_project,
            &["setup", "claude-code", "--scope", scope, "--", "--demo"],
        ));
    }
    let ours = json(&s.our_home.join(".claude.json"));
    let theirs = json(&s.cli_home.join(".claude.json"));
    assert_eq!(
        ours["mcpServers"]["phonelogs"], theirs["mcpServers"]["phonelogs"],
        "user scope: our entry differs from `claude mcp add`'s"
    );
    assert_eq!(
        json(&s.our_project.join(".mcp.json")),
        json(&s.cli_project.join(".mcp.json")),
        "project scope: our .mcp.json differs from `claude mcp add -s project`'s"
    );

    // Claude Code starts the server and reports it connected.
    let list = |home: &Path, dir: &Path| {
        let mut command = client_command(&claude, home, dir);
        command.args(["mcp", "list"]);
        ok(&run_with_limit(command, LIMIT))
    };
    let elsewhere = s.our_home.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let listed = list(&s.our_home, &elsewhere);
    let line = listed
        .lines()
        .find(|l| l.starts_with("phonelogs:"))
        .unwrap_or_else(|| panic!("claude mcp list does not list phonelogs:\n{listed}"));
    assert!(
        line.contains(&server_text) && line.contains("--demo"),
        "{line}"
    );
    assert!(line.contains("✔ Connected"), "{listed}");

    // --remove takes it out again; the client lists nothing.
    ok(&phonelogs(
        &s.our_home,
        &elsewhere,
        &["setup", "claude-code", "--remove"],
    ));
    let listed = list(&s.our_home, &elsewhere);
    assert!(!listed.contains("phonelogs:"), "{listed}");
}

#[test]
fn codex_gets_the_entry_codex_mcp_add_writes_and_lists_it() {
    let (Some(codex), Some(server)) = (client_cli("codex"), server()) else {
        return;
    };
    let s = sides();
    let server_text = server.to_string_lossy().into_owned();
    let mut add = client_command(&codex, &s.cli_home, &s.cli_project);
    add.args(["mcp", "add", "phonelogs", "--"])
        .args([&server_text, "--agent", "codex"]);
    ok(&run_with_limit(add, LIMIT));
    ok(&phonelogs(&s.our_home, &s.our_project, &["setup", "codex"]));
    let read = |home: &Path| std::fs::read_to_string(home.join(".codex/config.toml")).unwrap();
    assert_eq!(
        read(&s.our_home),
        read(&s.cli_home),
        "our config.toml differs from `codex mcp add`'s"
    );

    let list = |dir: &Path| {
        let mut command = client_command(&codex, &s.our_home, dir);
        command.args(["mcp", "list", "--json"]);
        let listed: serde_json::Value = serde_json::from_str(&ok(&run_with_limit(command, LIMIT)))
            .expect("codex mcp list --json prints JSON");
        listed
    };
    let listed = list(&s.our_project);
    let phonelogs_entry = |listed: &serde_json::Value| {
        listed
            .as_array()
            .and_then(|all| all.iter().find(|s| s["name"] == "phonelogs"))
            .cloned()
    };
    let entry = phonelogs_entry(&listed).unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(entry["transport"]["command"], server_text.as_str());
    assert_eq!(
        entry["transport"]["args"],
        serde_json::json!(["--agent", "codex"])
    );

    // The project's file: Codex reads it in a trusted project.
    ok(&phonelogs(
        &s.our_home,
        &s.our_project,
        &["setup", "codex", "--remove"],
    ));
    ok(&phonelogs(
        &s.our_home,
        &s.our_project,
        &[
            "setup",
            "codex",
            "--scope",
            "project",
            "--agent",
            "codex-here",
        ],
    ));
    let config = s.our_home.join(".codex/config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    assert!(!text.contains("phonelogs"), "{text}");
    text.push_str(&format!(
        "\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
        s.our_project.display()
    ));
    std::fs::write(&config, text).unwrap();
    let entry = phonelogs_entry(&list(&s.our_project)).expect("listed from the project's file");
    assert_eq!(
        entry["transport"]["args"],
        serde_json::json!(["--agent", "codex-here"])
    );
}

#[test]
fn gemini_gets_the_entry_gemini_mcp_add_writes_and_connects() {
    let (Some(gemini), Some(server)) = (client_cli("gemini"), server()) else {
        return;
    };
    let s = sides();
    let server_text = server.to_string_lossy().into_owned();
    for scope in ["user", "project"] {
        let mut add = client_command(&gemini, &s.cli_home, &s.cli_project);
        add.args(["mcp", "add", "-s", scope, "phonelogs", &server_text])
            .args(["--agent", "gemini", "--demo"]);
        ok(&run_with_limit(add, LIMIT));
        ok(&phonelogs(
            &s.our_home,
            &s.our_project,
            &["setup", "gemini", "--scope", scope, "--", "--demo"],
        ));
    }
    for (ours, theirs) in [
        (
            s.our_home.join(".gemini/settings.json"),
            s.cli_home.join(".gemini/settings.json"),
        ),
        (
            s.our_project.join(".gemini/settings.json"),
            s.cli_project.join(".gemini/settings.json"),
        ),
    ] {
        assert_eq!(
            json(&ours)["mcpServers"],
            json(&theirs)["mcpServers"],
            "{} differs from `gemini mcp add`'s",
            ours.display()
        );
    }

    // Gemini CLI starts servers only in a folder the person trusts.
    std::fs::write(
        s.our_home.join(".gemini/trustedFolders.json"),
        serde_json::json!({ s.our_project.to_string_lossy(): "TRUST_FOLDER" }).to_string(),
    )
    .unwrap();
    let mut command = client_command(&gemini, &s.our_home, &s.our_project);
    command.args(["mcp", "list"]);
    let out = run_with_limit(command, LIMIT);
    let listed = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let line = listed
        .lines()
        .find(|l| l.contains("phonelogs:"))
        .unwrap_or_else(|| panic!("gemini mcp list does not list phonelogs:\n{listed}"));
    assert!(
        line.contains("Connected") && !line.contains("Disconnected"),
        "{listed}"
    );
}

#[test]
fn the_other_clients_files_have_their_documented_shape() {
    let Some(server) = server() else { return };
    let s = sides();
    let server_text = server.to_string_lossy().into_owned();
    let cases = [
        (
            "claude-desktop",
            "user",
            ".config/Claude/claude_desktop_config.json",
            "mcpServers",
        ),
        ("cursor", "user", ".cursor/mcp.json", "mcpServers"),
        ("cursor", "project", ".cursor/mcp.json", "mcpServers"),
        ("vscode", "user", ".config/Code/User/mcp.json", "servers"),
        ("vscode", "project", ".vscode/mcp.json", "servers"),
        (
            "windsurf",
            "user",
            ".codeium/windsurf/mcp_config.json",
            "mcpServers",
        ),
    ];
    for (client, scope, relative, key) in cases {
        ok(&phonelogs(
            &s.our_home,
            &s.our_project,
            &["setup", client, "--scope", scope],
        ));
        let base = if scope == "user" {
            &s.our_home
        } else {
            &s.our_project
        };
        let value = json(&base.join(relative));
        let object = value.as_object().unwrap();
        assert_eq!(
            object.keys().collect::<Vec<_>>(),
            [key],
            "{client} {scope}: {value}"
        );
        let mut expected =
            serde_json::json!({ "command": server_text, "args": ["--agent", client] });
        if client == "vscode" {
            // VS Code requires `type` (its MCP configuration reference).
            expected["type"] = "stdio".into();
        }
        assert_eq!(value[key]["phonelogs"], expected, "{client} {scope}");
    }
    let out = phonelogs(
        &s.our_home,
        &s.our_project,
        &["setup", "windsurf", "--scope", "project"],
    );
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Windsurf has no project configuration"),
        "{out:?}"
    );
}

#[test]
fn dry_run_backup_broken_file_remove_and_doctor() {
    let Some(server) = server() else { return };
    let s = sides();
    let server_text = server.to_string_lossy().into_owned();
    let settings = s.our_home.join(".cursor/mcp.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let before = "{\n  // mine\n  \"mcpServers\": {\n    \"other\": { \"command\": \"other-mcp\" }\n  }\n}\n";
    std::fs::write(&settings, before).unwrap();

    // --dry-run prints the change and writes nothing.
    let printed = ok(&phonelogs(
        &s.our_home,
        &s.our_project,
        &["setup", "cursor", "--dry-run"],
    ));
    assert!(printed.contains("+    \"phonelogs\": {"), "{printed}");
    assert!(
        printed.contains(&format!("+      \"command\": \"{server_text}\"")),
        "{printed}"
    );
    assert!(
        printed.contains("dry run: nothing was written"),
        "{printed}"
    );
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), before);
    let files = |dir: &Path| std::fs::read_dir(dir).unwrap().count();
    assert_eq!(
        files(settings.parent().unwrap()),
        1,
        "no backup for a dry run"
    );

    // The real run keeps a copy of the file it changed; a second run changes nothing.
    let printed = ok(&phonelogs(
        &s.our_home,
        &s.our_project,
        &["setup", "cursor"],
    ));
    let backup = printed
        .lines()
        .find_map(|l| l.strip_prefix("the previous file is kept as "))
        .unwrap_or_else(|| panic!("{printed}"));
    assert_eq!(std::fs::read_to_string(backup).unwrap(), before);
    let after = std::fs::read_to_string(&settings).unwrap();
    assert!(
        after.contains("// mine") && after.contains("\"other-mcp\""),
        "{after}"
    );
    let printed = ok(&phonelogs(
        &s.our_home,
        &s.our_project,
        &["setup", "cursor"],
    ));
    assert!(printed.contains("already runs phonelogs"), "{printed}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), after);
    assert_eq!(files(settings.parent().unwrap()), 2, "one backup only");

    // A file that cannot be read: an error naming it, and the file untouched.
    let gemini = s.our_home.join(".gemini/settings.json");
    std::fs::create_dir_all(gemini.parent().unwrap()).unwrap();
    let broken = "{ \"theme\": \"Dracula\", ";
    std::fs::write(&gemini, broken).unwrap();
    let out = phonelogs(&s.our_home, &s.our_project, &["setup", "gemini"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&gemini.display().to_string()) && stderr.contains("Nothing was written"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&gemini).unwrap(), broken);
    assert_eq!(
        files(gemini.parent().unwrap()),
        1,
        "no backup of a file not changed"
    );

    // The doctor names the client that runs phonelogs, and one whose file cannot be read.
    let doctor = |home: &Path| {
        let out = phonelogs(home, &s.our_project, &["doctor", "--json"]);
        serde_json::from_slice::<Vec<serde_json::Value>>(&out.stdout).unwrap()
    };
    let findings = doctor(&s.our_home);
    let cursor = findings
        .iter()
        .find(|f| f["check"].as_str().unwrap().starts_with("Cursor (user"))
        .unwrap_or_else(|| panic!("{findings:#?}"));
    assert_eq!(cursor["ok"], true);
    assert!(
        cursor["detail"].as_str().unwrap().contains(&server_text),
        "{cursor}"
    );
    let gemini_finding = findings
        .iter()
        .find(|f| f["check"].as_str().unwrap().starts_with("Gemini CLI (user"))
        .unwrap_or_else(|| panic!("{findings:#?}"));
    assert_eq!(gemini_finding["ok"], false);

    // A configured program that is gone is a problem, with the fix.
    let text = after.replace(&server_text, "/nowhere/phonelogs-mcp");
    std::fs::write(&settings, text).unwrap();
    let findings = doctor(&s.our_home);
    let cursor = findings
        .iter()
        .find(|f| f["check"].as_str().unwrap().starts_with("Cursor (user"))
        .unwrap();
    assert_eq!(cursor["ok"], false, "{cursor}");
    assert!(
        cursor["fix"]
            .as_str()
            .unwrap()
            .contains("phonelogs setup cursor"),
        "{cursor}"
    );

    // --remove takes out ours alone; a home with no client says so.
    ok(&phonelogs(
        &s.our_home,
        &s.our_project,
        &["setup", "cursor", "--remove"],
    ));
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), before);
    let empty = s.our_home.join("empty-home");
    std::fs::create_dir_all(&empty).unwrap();
    let findings = doctor(&empty);
    let none = findings
        .iter()
        .find(|f| f["check"] == "MCP clients")
        .unwrap_or_else(|| panic!("{findings:#?}"));
    assert!(
        none["detail"]
            .as_str()
            .unwrap()
            .contains("phonelogs setup CLIENT"),
        "{none}"
    );
}

/// Issue 37, item 8: a project's `.codex` (or `.cursor`) linked to the user's own folder, as
/// people link one folder into many projects. `--scope project` followed the link and changed
/// the user's file for every project, and reported the link's path. Now it refuses, naming the
/// real file, and writes nothing there, no backup either; in a project whose folder is the home
/// itself, the project's file is the user's, and that is refused too. A link that stays in the
/// scope asked for (the user's file linked into a dotfiles folder in the home) is followed, the
/// real file written and reported, and Codex itself lists the entry from it.
#[cfg(unix)]
#[test]
fn setup_writes_only_inside_the_scope_asked_for_and_reports_the_real_file() {
    let Some(server) = server() else { return };
    let s = sides();
    let server_text = server.to_string_lossy().into_owned();
    let dotfiles = s.our_home.join("dotfiles/codex");
    std::fs::create_dir_all(&dotfiles).unwrap();
    std::os::unix::fs::symlink(&dotfiles, s.our_home.join(".codex")).unwrap();
    let users = dotfiles.join("config.toml");
    let before = "# mine\nmodel = \"o3\"\n";
    std::fs::write(&users, before).unwrap();

    // The project's .codex is the user's folder: refused, named, nothing written.
    std::os::unix::fs::symlink(&dotfiles, s.our_project.join(".codex")).unwrap();
    let out = phonelogs(
        &s.our_home,
        &s.our_project,
        &["setup", "codex", "--scope", "project"],
    );
    assert!(!out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("not writing {}", users.display()))
            && stderr.contains("outside the project scope")
            && stderr.contains("Nothing was written"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&users).unwrap(), before);
    assert_eq!(
        std::fs::read_dir(&dotfiles).unwrap().count(),
        1,
        "no backup"
    );

    // A project in the home folder itself: its .cursor/mcp.json is the user's.
    let out = phonelogs(
        &s.our_home,
        &s.our_home,
        &["setup", "cursor", "--scope", "project"],
    );
    assert!(!out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("it is Cursor's user file, not its project file"),
        "{stderr}"
    );
    assert!(!s.our_home.join(".cursor/mcp.json").exists());

    // The user's scope through the link to the dotfiles folder: written there, said so.
    let printed = ok(&phonelogs(&s.our_home, &s.our_project, &["setup", "codex"]));
    assert!(
        printed.contains(&format!(
            "connected to phonelogs: wrote {}",
            users.display()
        )),
        "{printed}"
    );
    assert!(
        printed.contains(&format!(
            "{} leads there through a symbolic link",
            s.our_home.join(".codex/config.toml").display()
        )),
        "{printed}"
    );
    assert!(
        std::fs::symlink_metadata(s.our_home.join(".codex"))
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link stays a link"
    );
    let text = std::fs::read_to_string(&users).unwrap();
    assert!(
        text.starts_with(before) && text.contains(&server_text),
        "{text}"
    );

    // Codex reads the file we said we wrote.
    let Some(codex) = client_cli("codex") else {
        return;
    };
    let mut list = client_command(&codex, &s.our_home, &s.our_project);
    list.args(["mcp", "list", "--json"]);
    let listed: serde_json::Value =
        serde_json::from_str(&ok(&run_with_limit(list, LIMIT))).expect("JSON");
    let entry = listed
        .as_array()
        .and_then(|all| all.iter().find(|e| e["name"] == "phonelogs"))
        .unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(entry["transport"]["command"], server_text.as_str());
}

/// Issue 37, item 8: every change kept one more backup, without bound. The last
/// `KEPT_BACKUPS` (3) stay, the newest among them, and the run that removes older ones says
/// how many; other files beside them, a backup-like name of another file included, are kept.
#[test]
fn setup_keeps_the_last_three_backups() {
    let Some(_server) = server() else { return };
    let s = sides();
    let settings = s.our_home.join(".cursor/mcp.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, "{}\n").unwrap();
    let neighbour = s
        .our_home
        .join(".cursor/other.json.phonelogs-backup-20260101T000000Z");
    std::fs::write(&neighbour, "{}").unwrap();
    let mut made = Vec::new();
    let mut removed = 0;
    for round in 0..6 {
        let agent = format!("cursor-{round}");
        let printed = ok(&phonelogs(
            &s.our_home,
            &s.our_project,
            &["setup", "cursor", "--agent", &agent],
        ));
        let backup = printed
            .lines()
            .find_map(|l| l.strip_prefix("the previous file is kept as "))
            .unwrap_or_else(|| panic!("{printed}"));
        made.push(PathBuf::from(backup));
        if let Some(count) = printed.lines().find_map(|l| {
            l.strip_prefix("removed ")
                .and_then(|rest| rest.strip_suffix(" older backups (the last 3 are kept)"))
        }) {
            removed += count.parse::<usize>().unwrap();
        }
    }
    let mut kept: Vec<PathBuf> = std::fs::read_dir(settings.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("mcp.json.phonelogs-backup-")
        })
        .collect();
    kept.sort();
    let mut newest = made[made.len() - 3..].to_vec();
    newest.sort();
    assert_eq!(kept, newest, "made: {made:#?}");
    assert_eq!(removed, made.len() - 3);
    // The newest backup holds the file as it was before the last run.
    let last = std::fs::read_to_string(made.last().unwrap()).unwrap();
    assert!(last.contains("cursor-4"), "{last}");
    assert!(neighbour.exists());
}

/// Issue 37, item 7: `--questions person` is written into the client's entry after the agent's
/// name, and phonelogs-mcp takes the entry as it is written (it starts and serves the tool
/// list with it); `client` writes nothing, and the flag is not taken after `--`.
#[test]
fn questions_person_is_written_into_the_entry_and_the_server_takes_it() {
    let Some(server) = server() else { return };
    let s = sides();
    ok(&phonelogs(
        &s.our_home,
        &s.our_project,
        &[
            "setup",
            "cursor",
            "--questions",
            "person",
            "--",
            "--demo=fake",
        ],
    ));
    let value = json(&s.our_home.join(".cursor/mcp.json"));
    let args: Vec<String> = value["mcpServers"]["phonelogs"]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        args,
        ["--agent", "cursor", "--questions", "person", "--demo=fake"]
    );
    // The server parses the entry's arguments: `--help` exits 0 only when every flag before it
    // is known.
    let mut command = Command::new(&server);
    command.args(&args).arg("--help");
    let out = run_with_limit(command, LIMIT);
    assert!(out.status.success(), "{out:?}");

    ok(&phonelogs(
        &s.our_home,
        &s.our_project,
        &["setup", "cursor", "--questions", "client"],
    ));
    let value = json(&s.our_home.join(".cursor/mcp.json"));
    assert_eq!(
        value["mcpServers"]["phonelogs"]["args"],
        serde_json::json!(["--agent", "cursor"])
    );
    for bad in [
        &["setup", "cursor", "--questions", "agent"][..],
        &["setup", "cursor", "--", "--questions", "person"][..],
    ] {
        let out = phonelogs(&s.our_home, &s.our_project, bad);
        assert!(!out.status.success(), "{bad:?}: {out:?}");
    }
}

/// Issue 39, item 6: Android Studio's agent reads `mcp.json` in its configuration directory
/// (developer.android.com/studio/gemini/add-mcp-server), the newest `AndroidStudio<version>`
/// under the user's Google folder; without one, setup says to start Android Studio once.
#[test]
fn android_studio_gets_its_entry_in_the_newest_configuration_directory() {
    let Some(server) = server() else { return };
    let s = sides();
    let out = phonelogs(&s.our_home, &s.our_project, &["setup", "android-studio"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("start Android Studio once"),
        "{out:?}"
    );
    let google = s.our_home.join(".config/Google");
    for version in ["AndroidStudio2024.3", "AndroidStudio2025.1.2"] {
        std::fs::create_dir_all(google.join(version)).unwrap();
    }
    ok(&phonelogs(
        &s.our_home,
        &s.our_project,
        &["setup", "android-studio"],
    ));
    let value = json(&google.join("AndroidStudio2025.1.2/mcp.json"));
    assert_eq!(
        value["mcpServers"]["phonelogs"],
        serde_json::json!({
            "command": server.to_string_lossy(),
            "args": ["--agent", "android-studio"],
        })
    );
    assert!(!google.join("AndroidStudio2024.3/mcp.json").exists());
    let out = phonelogs(
        &s.our_home,
        &s.our_project,
        &["setup", "android-studio", "--scope", "project"],
    );
    assert!(!out.status.success());
}
