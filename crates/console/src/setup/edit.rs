//! The one edit `phonelogs setup` makes to a client's file: put our entry under the client's
//! servers key, or take it out, leaving every other byte as it was (other servers, comments,
//! order, indentation).
//!
//! JSON and JSONC are edited through `jsonc-parser`'s concrete syntax tree (dprint's parser,
//! which keeps comments and whitespace), TOML through `toml_edit`; neither re-serialises the
//! parts it did not change. A file either library cannot read is an error, and nothing is
//! written.

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstObject, CstRootNode};

use super::clients::{ConfigFile, EntryShape, Format, SERVER_NAME};

/// What the entry starts: the absolute path of `phonelogs-mcp` and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The program.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
}

/// Put the entry in, or take it out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Add the entry, or bring an existing one up to date.
    Put,
    /// Remove the entry (only ours: the one named `phonelogs`).
    Remove,
}

/// The text after the change, or `None` when the file already says it.
pub type Edited = Option<String>;

/// One key of an entry: its value, and whether an existing value is kept (Claude Code's `env`,
/// which the person may have filled).
struct Field {
    key: &'static str,
    value: serde_json::Value,
    keep_existing: bool,
}

/// The keys we own in an entry, in the order the client's own `mcp add` writes them. Keys the
/// person added to our entry (a timeout, `disabled`) are kept.
fn fields(shape: EntryShape, entry: &Entry) -> Vec<Field> {
    let field = |key, value| Field {
        key,
        value,
        keep_existing: false,
    };
    let command = field("command", serde_json::json!(entry.command));
    let args = field("args", serde_json::json!(entry.args));
    let stdio = field("type", serde_json::json!("stdio"));
    match shape {
        EntryShape::CommandArgs | EntryShape::CodexToml => vec![command, args],
        EntryShape::TypedStdio => vec![stdio, command, args],
        EntryShape::ClaudeCode => vec![
            stdio,
            command,
            args,
            Field {
                key: "env",
                value: serde_json::json!({}),
                keep_existing: true,
            },
        ],
    }
}

/// The file's text after `change`; `text` is `None` for a file that does not exist yet.
pub fn edit(
    file: &ConfigFile,
    text: Option<&str>,
    entry: &Entry,
    change: Change,
) -> Result<Edited, String> {
    let fields = fields(file.shape, entry);
    match file.format {
        Format::Json => edit_json(file.servers_key, text, &fields, change),
        Format::Toml => edit_toml(file.servers_key, text, &fields, change),
    }
}

/// The `command` of our entry in a file's text, for `phonelogs doctor`: `Ok(None)` when the
/// file has no such entry.
pub fn configured_command(file: &ConfigFile, text: &str) -> Result<Option<String>, String> {
    match file.format {
        Format::Json => {
            let root = parse_json(text)?;
            let Some(servers) = root.object_value().and_then(|o| o.get(file.servers_key)) else {
                return Ok(None);
            };
            let entry = servers
                .object_value()
                .and_then(|servers| servers.get(SERVER_NAME))
                .and_then(|prop| prop.value())
                .and_then(|value| value.to_serde_value());
            Ok(entry.map(|entry| {
                entry
                    .get("command")
                    .and_then(|c| c.as_str())
                    .unwrap_or_default()
                    .to_owned()
            }))
        }
        Format::Toml => {
            let document = parse_toml(text)?;
            Ok(document
                .get(file.servers_key)
                .and_then(|servers| servers.get(SERVER_NAME))
                .map(|entry| {
                    entry
                        .get("command")
                        .and_then(|c| c.as_str())
                        .unwrap_or_default()
                        .to_owned()
                }))
        }
    }
}

/// Comments and trailing commas, as JSONC readers (VS Code, Cursor, Gemini CLI) take them; not
/// the looser forms (missing commas, single quotes, bare names) that no client reads.
fn json_options() -> ParseOptions {
    ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

fn parse_json(text: &str) -> Result<CstRootNode, String> {
    let root = CstRootNode::parse(text, &json_options())
        .map_err(|error| format!("it is not valid JSON: {error}"))?;
    if root.value().is_some() && root.object_value().is_none() {
        return Err("its top level is not a JSON object".into());
    }
    Ok(root)
}

fn edit_json(
    servers_key: &str,
    text: Option<&str>,
    fields: &[Field],
    change: Change,
) -> Result<Edited, String> {
    // A missing or blank file is an empty object, as the clients themselves treat it.
    let text = text.filter(|t| !t.trim().is_empty()).unwrap_or("{}\n");
    let root = parse_json(text)?;
    let top = root.object_value_or_set();
    let servers = match top.get(servers_key) {
        Some(prop) => Some(
            prop.object_value()
                .ok_or_else(|| format!("its `{servers_key}` is not an object"))?,
        ),
        None => None,
    };
    let changed = match change {
        Change::Remove => match servers.as_ref().and_then(|s| s.get(SERVER_NAME)) {
            Some(prop) => {
                prop.remove();
                true
            }
            None => false,
        },
        Change::Put => {
            let servers = servers.unwrap_or_else(|| top.object_value_or_set(servers_key));
            put_json(&servers, fields)?
        }
    };
    Ok(changed.then(|| root.to_string()))
}

/// Puts our fields into the entry, creating it; whether anything changed.
fn put_json(servers: &CstObject, fields: &[Field]) -> Result<bool, String> {
    let Some(prop) = servers.get(SERVER_NAME) else {
        let value = CstInputValue::Object(
            fields
                .iter()
                .map(|f| (f.key.to_owned(), cst_value(&f.value)))
                .collect(),
        );
        servers.append(SERVER_NAME, value);
        return Ok(true);
    };
    let entry = prop
        .object_value()
        .ok_or_else(|| format!("its `{SERVER_NAME}` entry is not an object"))?;
    let mut changed = false;
    for field in fields {
        match entry.get(field.key) {
            Some(_) if field.keep_existing => {}
            Some(existing) => {
                let same =
                    existing.value().and_then(|v| v.to_serde_value()) == Some(field.value.clone());
                if !same {
                    existing.set_value(cst_value(&field.value));
                    changed = true;
                }
            }
            None => {
                entry.append(field.key, cst_value(&field.value));
                changed = true;
            }
        }
    }
    Ok(changed)
}

/// Our values (strings, arrays of strings, an empty object) as the syntax tree's input.
fn cst_value(value: &serde_json::Value) -> CstInputValue {
    match value {
        serde_json::Value::Null => CstInputValue::Null,
        serde_json::Value::Bool(b) => CstInputValue::Bool(*b),
        serde_json::Value::Number(n) => CstInputValue::Number(n.to_string()),
        serde_json::Value::String(s) => CstInputValue::String(s.clone()),
        serde_json::Value::Array(items) => {
            CstInputValue::Array(items.iter().map(cst_value).collect())
        }
        serde_json::Value::Object(map) => {
            CstInputValue::Object(map.iter().map(|(k, v)| (k.clone(), cst_value(v))).collect())
        }
    }
}

fn parse_toml(text: &str) -> Result<toml_edit::DocumentMut, String> {
    text.parse::<toml_edit::DocumentMut>()
        .map_err(|error| format!("it is not valid TOML: {}", error.to_string().trim()))
}

fn edit_toml(
    servers_key: &str,
    text: Option<&str>,
    fields: &[Field],
    change: Change,
) -> Result<Edited, String> {
    let mut document = parse_toml(text.unwrap_or_default())?;
    if let Some(item) = document.get(servers_key)
        && !item.is_table_like()
    {
        return Err(format!("its `{servers_key}` is not a table"));
    }
    let changed = match change {
        Change::Remove => document
            .get_mut(servers_key)
            .and_then(|item| item.as_table_like_mut())
            .and_then(|servers| servers.remove(SERVER_NAME))
            .is_some(),
        Change::Put => {
            if document.get(servers_key).is_none() {
                // `[mcp_servers.phonelogs]` alone, as `codex mcp add` writes it: the parent
                // table is implicit, with no `[mcp_servers]` header of its own.
                let mut servers = toml_edit::Table::new();
                servers.set_implicit(true);
                document.insert(servers_key, toml_edit::Item::Table(servers));
            }
            let servers = document
                .get_mut(servers_key)
                .and_then(|item| item.as_table_like_mut())
                .ok_or_else(|| format!("its `{servers_key}` is not a table"))?;
            put_toml(servers, fields)?
        }
    };
    Ok(changed.then(|| document.to_string()))
}

fn put_toml(servers: &mut dyn toml_edit::TableLike, fields: &[Field]) -> Result<bool, String> {
    if servers.get(SERVER_NAME).is_none() {
        servers.insert(SERVER_NAME, toml_edit::Item::Table(toml_edit::Table::new()));
    }
    let entry = servers
        .get_mut(SERVER_NAME)
        .and_then(|item| item.as_table_like_mut())
        .ok_or_else(|| format!("its `{SERVER_NAME}` entry is not a table"))?;
    let mut changed = false;
    for field in fields {
        let wanted = toml_value(&field.value);
        let same = entry
            .get(field.key)
            .and_then(|item| item.as_value())
            .is_some_and(|existing| same_toml(existing, &wanted));
        if !same {
            entry.insert(field.key, toml_edit::Item::Value(wanted));
            changed = true;
        }
    }
    Ok(changed)
}

/// Our values are strings and arrays of strings.
fn toml_value(value: &serde_json::Value) -> toml_edit::Value {
    match value {
        serde_json::Value::Array(items) => toml_edit::Value::Array(
            items
                .iter()
                .map(|item| item.as_str().unwrap_or_default())
                .collect(),
        ),
        other => toml_edit::Value::from(other.as_str().unwrap_or_default()),
    }
}

/// Equal values, whatever their formatting and comments.
fn same_toml(a: &toml_edit::Value, b: &toml_edit::Value) -> bool {
    match (a, b) {
        (toml_edit::Value::String(a), toml_edit::Value::String(b)) => a.value() == b.value(),
        (toml_edit::Value::Array(a), toml_edit::Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b.iter()).all(|(a, b)| same_toml(a, b))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests;
