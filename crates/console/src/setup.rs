//! `phonelogs setup CLIENT`: connects an MCP client to `phonelogs-mcp` by writing the client's
//! own configuration file, and the `doctor` section that says which clients have it.
//!
//! One entry named `phonelogs` runs the absolute path of the installed `phonelogs-mcp` with
//! `--agent CLIENT` (and whatever follows `--`). The file is edited in place (`edit`): other
//! servers, comments and order stay; a second run changes nothing; the file changed is first
//! copied beside itself (the last [`KEPT_BACKUPS`] copies kept); a file that cannot be read is
//! an error and nothing is written. The file's real path (every symbolic link followed) is
//! found first (`confine`), and one outside the scope asked for is refused: the file written,
//! and the one reported, is always the real one.

mod clients;
mod confine;
mod edit;

use std::path::{Path, PathBuf};

use crate::{Doing, Result};

pub use clients::{Client, Scope};
use clients::{ConfigFile, Places, SERVER_NAME};
use confine::scope_name;
use edit::{Change, Entry};

/// How many copies of a client's file `setup` keeps beside it: each change makes one, and the
/// oldest beyond these go.
pub const KEPT_BACKUPS: usize = 3;

use crate::Finding;

/// `phonelogs setup`'s arguments.
#[derive(Debug, clap::Args)]
pub struct SetupArgs {
    /// The client to connect.
    #[arg(value_enum)]
    client: Client,
    /// user: for every project (the user's file); project: this project's file.
    #[arg(long, value_enum, default_value = "user")]
    scope: Scope,
    /// Print the change as a diff and write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Take phonelogs out of the client's file (only its own entry).
    #[arg(long)]
    remove: bool,
    /// The agent's name in questions, rules and history (default: the client's name).
    #[arg(long, value_name = "NAME")]
    agent: Option<String>,
    /// The phonelogs-mcp to run (default: the one beside this phonelogs, else the first on
    /// PATH).
    #[arg(long, value_name = "PATH")]
    server: Option<PathBuf>,
    /// Where phonelogs-mcp sends the person's questions: `person` writes `--questions person`
    /// into the entry (the person's side only, never the client's dialog; see
    /// docs/permissions.md); `client`, the default, writes nothing.
    #[arg(long, value_name = "WHO", value_parser = ["client", "person"])]
    questions: Option<String>,
    /// The project for --scope project (default: the current directory).
    #[arg(long, value_name = "DIR")]
    project_dir: Option<PathBuf>,
    /// More arguments for phonelogs-mcp, after `--` (say `-- --demo`, or `-- --agent-mode
    /// read-only`).
    #[arg(last = true, value_name = "ARGS")]
    extra: Vec<String>,
}

/// `phonelogs setup`.
pub fn run(args: SetupArgs) -> Result<()> {
    let project = match &args.project_dir {
        Some(dir) => absolute(dir)?,
        None => std::env::current_dir().doing(|| "the current directory".to_owned())?,
    };
    let places = Places::from_env(project)?;
    let file = args
        .client
        .config_file(args.scope, &places)
        .map_err(crate::Error::Refused)?;
    let (change, entry) = if args.remove {
        // Removing needs no phonelogs-mcp: it may be uninstalled already.
        let entry = Entry {
            command: String::new(),
            args: Vec::new(),
        };
        (Change::Remove, entry)
    } else {
        (Change::Put, entry(&args)?)
    };
    let real = confine::confined(&file, &places)?;
    let old = read(&real)?;
    let new = edit::edit(&file, old.as_deref(), &entry, change).map_err(|why| {
        crate::Error::Refused(format!(
            "cannot change {}: {why}. Nothing was written; fix the file (or move it away) and run this again",
            real.display()
        ))
    })?;
    let what = format!("{} ({})", args.client.title(), scope_name(args.scope));
    let Some(new) = new else {
        match change {
            Change::Put => println!("{what} already runs phonelogs: {}", real.display()),
            Change::Remove => println!("{what} has no phonelogs entry: {}", real.display()),
        }
        return Ok(());
    };
    if args.dry_run {
        print!("{}", diff(&real, old.as_deref().unwrap_or_default(), &new));
        println!("(dry run: nothing was written)");
        return Ok(());
    }
    let backups = write(&real, file.scope, old.as_deref(), &new)?;
    let verb = match change {
        Change::Put => "connected to phonelogs",
        Change::Remove => "no longer runs phonelogs",
    };
    println!("{what} {verb}: wrote {}", real.display());
    if real != file.path {
        println!(
            "({} leads there through a symbolic link)",
            file.path.display()
        );
    }
    if let Some(backup) = backups.made {
        println!("the previous file is kept as {}", backup.display());
    }
    if backups.removed > 0 {
        println!(
            "removed {} older backups (the last {KEPT_BACKUPS} are kept)",
            backups.removed
        );
    }
    if change == Change::Put {
        println!("{}", next_step(&file));
    }
    Ok(())
}

/// The entry: the absolute path of `phonelogs-mcp`, `--agent NAME`, then the extra arguments.
fn entry(args: &SetupArgs) -> Result<Entry> {
    for extra in &args.extra {
        if extra == "--agent" || extra.starts_with("--agent=") {
            return Err(crate::Error::Refused(
                "name the agent with `phonelogs setup --agent NAME`, not after `--`".to_owned(),
            ));
        }
        if extra == "--questions" || extra.starts_with("--questions=") {
            return Err(crate::Error::Refused(
                "say where questions go with `phonelogs setup --questions WHO`, not after `--`"
                    .to_owned(),
            ));
        }
        if extra == "--http" || extra.starts_with("--http=") {
            return Err(crate::Error::Refused(
                "--http serves Streamable HTTP, which a client does not start; see docs/mcp.md for clients that connect to a URL".to_owned(),
            ));
        }
    }
    let server = find_server(args.server.as_deref())?;
    let agent = args
        .agent
        .clone()
        .unwrap_or_else(|| args.client.id().to_owned());
    let mut argv = vec!["--agent".to_owned(), agent];
    if args.questions.as_deref() == Some("person") {
        argv.extend(["--questions".to_owned(), "person".to_owned()]);
    }
    argv.extend(args.extra.iter().cloned());
    Ok(Entry {
        command: server.to_string_lossy().into_owned(),
        args: argv,
    })
}

fn absolute(path: &Path) -> Result<PathBuf> {
    std::path::absolute(path).doing(|| format!("{}", path.display()))
}

/// The installed `phonelogs-mcp`: `--server`, else the one beside this program (where `cargo
/// install` puts both), else the first on PATH.
fn find_server(given: Option<&Path>) -> Result<PathBuf> {
    let name = format!("phonelogs-mcp{}", std::env::consts::EXE_SUFFIX);
    if let Some(path) = given {
        let path = absolute(path)?;
        if !path.is_file() {
            return Err(crate::Error::Refused(format!(
                "--server {}: no such file",
                path.display()
            )));
        }
        return Ok(path);
    }
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join(&name)));
    let on_path: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join(&name))
                .collect()
        })
        .unwrap_or_default();
    beside
        .into_iter()
        .chain(on_path)
        .find(|candidate| candidate.is_file() && candidate.is_absolute())
        .doing(|| "phonelogs-mcp is not installed beside phonelogs nor on PATH: install it with `cargo install --locked --path bins/phonelogs-mcp`, or pass --server PATH".to_owned())
}

fn read(path: &Path) -> Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error).doing(|| format!("reading {}", path.display())),
    }
}

/// A unified diff of the change, as `--dry-run` prints it.
fn diff(path: &Path, old: &str, new: &str) -> String {
    let name = path.display().to_string();
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&name, &name)
        .to_string()
}

/// The backups of one write: the copy made, and how many older ones were removed.
struct Backups {
    made: Option<PathBuf>,
    removed: usize,
}

/// Writes the new text to `path` (the real path, every link followed): the old file copied
/// beside itself first (the copies beyond the last [`KEPT_BACKUPS`] removed), then the new one
/// written whole and renamed over it (so a crash leaves one or the other), with the old file's
/// permissions.
fn write(path: &Path, scope: Scope, old: Option<&str>, new: &str) -> Result<Backups> {
    let dir = path
        .parent()
        .doing(|| format!("{} has no folder", path.display()))?;
    std::fs::create_dir_all(dir).doing(|| format!("creating {}", dir.display()))?;
    let made = match old {
        Some(_) => Some(backup(path)?),
        None => None,
    };
    let mut temporary =
        tempfile::NamedTempFile::new_in(dir).doing(|| format!("writing in {}", dir.display()))?;
    std::io::Write::write_all(&mut temporary, new.as_bytes())?;
    match std::fs::metadata(path) {
        Ok(meta) => std::fs::set_permissions(temporary.path(), meta.permissions())?,
        Err(_) => new_file_permissions(temporary.path(), scope)?,
    }
    temporary
        .persist(path)
        .doing(|| format!("writing {}", path.display()))?;
    let removed = match made {
        Some(_) => prune_backups(path)?,
        None => 0,
    };
    Ok(Backups { made, removed })
}

/// Removes the backups of `path` beyond the newest [`KEPT_BACKUPS`]; how many it removed.
/// Only names [`backup`] makes are touched: `NAME.phonelogs-backup-STAMP` and `…-STAMP-N`,
/// ordered by their stamp, then by N.
fn prune_backups(path: &Path) -> Result<usize> {
    let mut found = backups_of(path)?;
    found.sort();
    let extra = found.len().saturating_sub(KEPT_BACKUPS);
    for (_, old) in &found[..extra] {
        std::fs::remove_file(old).doing(|| format!("removing {}", old.display()))?;
    }
    Ok(extra)
}

/// The backups of `path` beside it, each with its order ([`backup_order`]).
fn backups_of(path: &Path) -> Result<Vec<((String, u32), PathBuf)>> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Ok(Vec::new());
    };
    let prefix = format!("{}{BACKUP_INFIX}", name.to_string_lossy());
    Ok(std::fs::read_dir(dir)
        .doing(|| format!("listing {}", dir.display()))?
        .filter_map(|entry| entry.ok())
        .filter_map(|entry| {
            let file_name = entry.file_name().into_string().ok()?;
            let key = backup_order(file_name.strip_prefix(&prefix)?)?;
            let is_file = entry.file_type().ok()?.is_file();
            is_file.then(|| (key, entry.path()))
        })
        .collect())
}

/// The order of a backup from what follows `.phonelogs-backup-`: its stamp
/// (`YYYYMMDDTHHMMSSZ`, which sorts as text) and its number (1 when it has none).
fn backup_order(rest: &str) -> Option<(String, u32)> {
    let (stamp, n) = match rest.split_once('-') {
        Some((stamp, n)) => (stamp, n.parse().ok()?),
        None => (rest, 1),
    };
    let digits = stamp.bytes().enumerate().all(|(at, b)| match at {
        8 => b == b'T',
        15 => b == b'Z',
        _ => b.is_ascii_digit(),
    });
    (stamp.len() == 16 && digits).then(|| (stamp.to_owned(), n))
}

/// A user's file may come to hold tokens (the clients keep secrets in some of them): only the
/// user reads it. A project's file is meant to be shared: the usual permissions.
#[cfg(unix)]
fn new_file_permissions(path: &Path, scope: Scope) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = match scope {
        Scope::User => 0o600,
        Scope::Project => 0o644,
    };
    Ok(std::fs::set_permissions(
        path,
        std::fs::Permissions::from_mode(mode),
    )?)
}

#[cfg(not(unix))]
fn new_file_permissions(_path: &Path, _scope: Scope) -> Result<()> {
    Ok(())
}

/// What a backup's name puts between the file's name and its stamp.
const BACKUP_INFIX: &str = ".phonelogs-backup-";

/// Copies the file to `NAME.phonelogs-backup-YYYYMMDDTHHMMSSZ` (a number added when that name
/// is taken), never replacing anything.
fn backup(path: &Path) -> Result<PathBuf> {
    let stamp = time::OffsetDateTime::now_utc()
        .format(time::macros::format_description!(
            "[year][month][day]T[hour][minute][second]Z"
        ))
        .unwrap_or_default();
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // After the number of the newest backup of this second, not in the first free name: a name
    // freed by `prune_backups` must not make the newest backup sort as the oldest.
    let first = backups_of(path)?
        .into_iter()
        .filter(|((at, _), _)| *at == stamp)
        .map(|((_, n), _)| n + 1)
        .max()
        .unwrap_or(1);
    for n in first..first.saturating_add(1000) {
        let suffix = if n == 1 {
            String::new()
        } else {
            format!("-{n}")
        };
        let candidate = path.with_file_name(format!("{name}{BACKUP_INFIX}{stamp}{suffix}"));
        let created = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&candidate);
        match created {
            Ok(_) => {
                std::fs::copy(path, &candidate)
                    .doing(|| format!("backing up to {}", candidate.display()))?;
                return Ok(candidate);
            }
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(error) => {
                return Err(error).doing(|| format!("backing up to {}", candidate.display()));
            }
        }
    }
    Err(crate::Error::Refused(format!(
        "no free backup name beside {}",
        path.display()
    )))
}

/// What the person does next to see it work.
fn next_step(file: &ConfigFile) -> String {
    match (file.client.check_command(), file.client) {
        (Some(command), Client::Codex) if file.scope == Scope::Project => format!(
            "Codex reads a project's file only in a trusted project; check with `{command}` there"
        ),
        (Some(command), Client::Gemini) => {
            format!("check with `{command}` (Gemini CLI starts servers only in a trusted folder)")
        }
        (Some(command), _) => format!("check with `{command}`"),
        (None, client) => format!("restart {} to load it", client.title()),
    }
}

/// `phonelogs doctor`'s section on MCP clients: for each client and scope whose file names
/// phonelogs, whether the program it runs exists. The project is the current directory.
pub fn doctor_findings() -> Vec<Finding> {
    let project = std::env::current_dir().unwrap_or_default();
    match Places::from_env(project) {
        Ok(places) => findings_for(&places),
        Err(error) => vec![Finding {
            check: "MCP clients".into(),
            ok: false,
            detail: format!("{error:#}"),
            fix: Some("set HOME".into()),
        }],
    }
}

fn findings_for(places: &Places) -> Vec<Finding> {
    let mut findings = Vec::new();
    for client in Client::ALL {
        for &scope in client.scopes() {
            let Ok(file) = client.config_file(scope, places) else {
                continue;
            };
            if let Some(finding) = client_finding(&file) {
                findings.push(finding);
            }
        }
    }
    if findings.is_empty() {
        // Not a fault: phonelogs may be reached over HTTP, or by a client not listed here.
        findings.push(Finding {
            check: "MCP clients".into(),
            ok: true,
            detail: format!(
                "no client on this computer runs phonelogs ({}); connect one with `phonelogs setup CLIENT`",
                Client::ALL.map(Client::id).join(", ")
            ),
            fix: None,
        });
    }
    findings
}

/// The finding for one client's file, when it names phonelogs or cannot be read.
fn client_finding(file: &ConfigFile) -> Option<Finding> {
    let text = std::fs::read_to_string(&file.path).ok()?;
    let check = format!(
        "{} ({}, {})",
        file.client.title(),
        scope_name(file.scope),
        file.path.display()
    );
    let setup = format!(
        "phonelogs setup {} --scope {}",
        file.client.id(),
        scope_name(file.scope)
    );
    match edit::configured_command(file, &text) {
        Err(why) => Some(Finding {
            check,
            ok: false,
            detail: format!("cannot read the file: {why}"),
            fix: Some("fix the file; the client cannot read it either".into()),
        }),
        Ok(None) => None,
        Ok(Some(command)) => {
            let found = resolve(&command);
            Some(match found {
                Some(path) => Finding {
                    check,
                    ok: true,
                    detail: format!("runs {SERVER_NAME}: {}", path.display()),
                    fix: None,
                },
                None => Finding {
                    check,
                    ok: false,
                    detail: format!("runs {SERVER_NAME} with `{command}`, which does not exist"),
                    fix: Some(format!(
                        "install phonelogs-mcp (`cargo install --locked --path bins/phonelogs-mcp`), then `{setup}`"
                    )),
                },
            })
        }
    }
}

/// The program a command names: a path as it is, a bare name looked up on PATH.
fn resolve(command: &str) -> Option<PathBuf> {
    let path = Path::new(command);
    if command.is_empty() {
        return None;
    }
    if path.components().count() > 1 {
        return path.is_file().then(|| path.to_path_buf());
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(command))
            .find(|candidate| candidate.is_file())
    })
}
