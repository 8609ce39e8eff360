//! The edit keeps what is there: other servers, comments and order; a second run changes
//! nothing; a file it cannot read is an error; removing takes out only our entry.

use std::path::PathBuf;

use super::super::clients::{Client, ConfigFile, Os, Places, Scope};
use super::{Change, Entry, configured_command, edit};

fn file(client: Client, scope: Scope) -> ConfigFile {
    let places = Places {
        os: Os::Linux,
        home: PathBuf::from("/h"),
        project: PathBuf::from("/p"),
        xdg_config_home: None,
        appdata: None,
        codex_home: None,
    };
    client.config_file(scope, &places).unwrap()
}

fn entry(agent: &str) -> Entry {
    Entry {
        command: "/opt/bin/phonelogs-mcp".into(),
        args: vec!["--agent".into(), agent.into()],
    }
}

fn put(file: &ConfigFile, text: Option<&str>) -> Option<String> {
    edit(file, text, &entry("x"), Change::Put).unwrap()
}

fn remove(file: &ConfigFile, text: &str) -> Option<String> {
    edit(file, Some(text), &entry("x"), Change::Remove).unwrap()
}

const VSCODE: &str = r#"{
  // Servers for this workspace.
  "servers": {
    /* the team's database */
    "db": { "type": "stdio", "command": "db-mcp", "args": ["--ro"] }, // read-only
  },
  "inputs": [
    { "id": "token", "type": "promptString", "password": true },
  ],
}
"#;

#[test]
fn jsonc_keeps_comments_other_servers_and_order_and_a_second_run_changes_nothing() {
    let file = file(Client::Vscode, Scope::Project);
    let new = put(&file, Some(VSCODE)).expect("added");
    for kept in [
        "  // Servers for this workspace.\n",
        "    /* the team's database */\n",
        r#"    "db": { "type": "stdio", "command": "db-mcp", "args": ["--ro"] }, // read-only"#,
        r#"    { "id": "token", "type": "promptString", "password": true },"#,
    ] {
        assert!(new.contains(kept), "{kept:?} lost in:\n{new}");
    }
    let db = new.find("\"db\"").unwrap();
    let ours = new.find("\"phonelogs\"").unwrap();
    let inputs = new.find("\"inputs\"").unwrap();
    assert!(db < ours && ours < inputs, "order changed:\n{new}");
    assert!(
        new.contains(r#""type": "stdio""#)
            && new.contains(r#""command": "/opt/bin/phonelogs-mcp""#),
        "{new}"
    );
    assert_eq!(
        put(&file, Some(&new)),
        None,
        "a second run must change nothing"
    );
    // Taking it out again gives back the file as it was, byte for byte.
    assert_eq!(remove(&file, &new).as_deref(), Some(VSCODE));
    assert_eq!(remove(&file, VSCODE), None, "nothing to remove");
}

#[test]
fn claude_code_entry_is_what_claude_mcp_add_writes_and_kept_fields_stay() {
    let file = file(Client::ClaudeCode, Scope::User);
    let new = put(&file, Some("{\n  \"numStartups\": 3\n}\n")).unwrap();
    let value: serde_json::Value = serde_json::from_str(&new).unwrap();
    assert_eq!(value["numStartups"], 3);
    let ours = &value["mcpServers"]["phonelogs"];
    assert_eq!(
        ours,
        &serde_json::json!({"type": "stdio", "command": "/opt/bin/phonelogs-mcp", "args": ["--agent", "x"], "env": {}})
    );
    let keys: Vec<&String> = ours.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 4);
    let order: Vec<usize> = ["\"type\"", "\"command\"", "\"args\"", "\"env\""]
        .iter()
        .map(|k| new.find(k).unwrap())
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{new}");

    // An older entry: the path and arguments brought up to date, the person's env and any
    // key of theirs kept.
    let older = r#"{"mcpServers": {"phonelogs": {"type": "stdio", "command": "/old/phonelogs-mcp", "args": ["--agent", "x"], "env": {"PHONELOGS_LOG": "debug"}, "timeout": 9}}}"#;
    let new = put(&file, Some(older)).unwrap();
    let value: serde_json::Value = serde_json::from_str(&new).unwrap();
    let ours = &value["mcpServers"]["phonelogs"];
    assert_eq!(ours["command"], "/opt/bin/phonelogs-mcp");
    assert_eq!(ours["env"], serde_json::json!({"PHONELOGS_LOG": "debug"}));
    assert_eq!(ours["timeout"], 9);
}

#[test]
fn a_missing_or_empty_file_becomes_one_entry() {
    for client in [
        Client::Cursor,
        Client::Gemini,
        Client::Windsurf,
        Client::ClaudeDesktop,
    ] {
        let file = file(client, Scope::User);
        for text in [None, Some(""), Some("\n")] {
            let new = put(&file, text).unwrap();
            let value: serde_json::Value = serde_json::from_str(&new).unwrap();
            assert_eq!(
                value,
                serde_json::json!({"mcpServers": {"phonelogs": {"command": "/opt/bin/phonelogs-mcp", "args": ["--agent", "x"]}}}),
                "{client:?}"
            );
        }
    }
}

#[test]
fn a_file_that_cannot_be_read_is_an_error() {
    let file = file(Client::Cursor, Scope::User);
    let cases = [
        ("{ \"mcpServers\": {", "it is not valid JSON"),
        ("{ \"mcpServers\": {} } }", "it is not valid JSON"),
        ("{ mcpServers: {} }", "it is not valid JSON"),
        ("[1, 2]", "its top level is not a JSON object"),
        (
            "{ \"mcpServers\": [] }",
            "its `mcpServers` is not an object",
        ),
        (
            "{ \"mcpServers\": { \"phonelogs\": \"phonelogs-mcp\" } }",
            "its `phonelogs` entry is not an object",
        ),
    ];
    for (text, why) in cases {
        let error = edit(&file, Some(text), &entry("x"), Change::Put).unwrap_err();
        assert!(error.starts_with(why), "{text:?}: {error}");
    }
    let error = configured_command(&file, "{ \"mcpServers\": ").unwrap_err();
    assert!(error.contains("not valid JSON"), "{error}");
}

const CODEX: &str = r#"# my Codex settings
model = "o3"

[mcp_servers.docs]
command = "docs-mcp" # the docs server
args = ["--port", "0"]

[profiles.fast]
model = "o4-mini"
"#;

#[test]
fn toml_keeps_comments_and_tables_and_a_second_run_changes_nothing() {
    let file = file(Client::Codex, Scope::User);
    let new = put(&file, Some(CODEX)).unwrap();
    assert!(
        new.starts_with(CODEX.split("[profiles").next().unwrap()),
        "{new}"
    );
    assert!(
        new.contains("[profiles.fast]\nmodel = \"o4-mini\"\n"),
        "{new}"
    );
    assert!(
        new.contains(
            "[mcp_servers.phonelogs]\ncommand = \"/opt/bin/phonelogs-mcp\"\nargs = [\"--agent\", \"x\"]\n"
        ),
        "{new}"
    );
    assert_eq!(put(&file, Some(&new)), None);
    let removed = remove(&file, &new).unwrap();
    assert!(!removed.contains("phonelogs"), "{removed}");
    assert!(
        removed.contains("command = \"docs-mcp\" # the docs server"),
        "{removed}"
    );
}

#[test]
fn toml_in_an_empty_file_is_what_codex_mcp_add_writes() {
    let file = file(Client::Codex, Scope::User);
    assert_eq!(
        put(&file, None).unwrap(),
        "[mcp_servers.phonelogs]\ncommand = \"/opt/bin/phonelogs-mcp\"\nargs = [\"--agent\", \"x\"]\n"
    );
    // A differently formatted entry that says the same is left alone.
    let same = "[mcp_servers.phonelogs]\ncommand = '/opt/bin/phonelogs-mcp'\nargs = [ \"--agent\", \"x\" ] # mine\n";
    assert_eq!(put(&file, Some(same)), None);
    assert_eq!(
        configured_command(&file, same).unwrap().as_deref(),
        Some("/opt/bin/phonelogs-mcp")
    );
}

#[test]
fn toml_that_cannot_be_read_is_an_error() {
    let file = file(Client::Codex, Scope::User);
    for (text, why) in [
        (
            "[mcp_servers.phonelogs\ncommand = 1",
            "it is not valid TOML",
        ),
        ("mcp_servers = 3\n", "its `mcp_servers` is not a table"),
        (
            "[mcp_servers]\nphonelogs = 3\n",
            "its `phonelogs` entry is not a table",
        ),
    ] {
        let error = edit(&file, Some(text), &entry("x"), Change::Put).unwrap_err();
        assert!(error.starts_with(why), "{text:?}: {error}");
    }
}

#[test]
fn the_doctor_reads_the_configured_command() {
    let file = file(Client::Gemini, Scope::Project);
    let new = put(&file, Some("{\"theme\": \"Dracula\"}")).unwrap();
    assert_eq!(
        configured_command(&file, &new).unwrap().as_deref(),
        Some("/opt/bin/phonelogs-mcp")
    );
    assert_eq!(
        configured_command(&file, "{\"theme\": \"x\"}").unwrap(),
        None
    );
}
