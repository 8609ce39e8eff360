//! Where `phonelogs setup` really writes, and whether that is inside the scope it was asked
//! for. A project's `.cursor` may be a symbolic link to the user's own `~/.cursor` (people link
//! one folder into many projects), so `--scope project` would change the user's file for every
//! project; the path is resolved, every link on it followed, before anything is read or
//! written, and a real path outside the scope is refused, named.

use std::path::{Path, PathBuf};

use super::clients::{ConfigFile, Places, Scope};

/// As many links as Linux follows in one path (`MAXSYMLINKS`, 40): a loop of links is an
/// error, not a hang.
const MAX_LINKS: usize = 40;

/// The path `path` names once every symbolic link on it is followed, also when the file (or
/// the folders before it) do not exist yet, or the file is a link to a file not yet made (a
/// dotfiles checkout on a new computer). `std::fs::canonicalize` alone fails on a path that
/// does not exist, so the missing tail is resolved here by hand, one link at a time.
pub fn real_path(path: &Path) -> std::io::Result<PathBuf> {
    let mut path = std::path::absolute(path)?;
    let mut links = 0;
    loop {
        match std::fs::canonicalize(&path) {
            Ok(real) => return Ok(real),
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => return Err(error),
            Err(_) => {}
        }
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return Err(std::io::Error::other(format!(
                "cannot resolve {}",
                path.display()
            )));
        };
        match std::fs::symlink_metadata(&path) {
            // A link to something not there yet: follow it, relative to its folder.
            Ok(meta) if meta.file_type().is_symlink() => {
                links += 1;
                if links > MAX_LINKS {
                    return Err(std::io::Error::other(format!(
                        "too many symbolic links in {}",
                        path.display()
                    )));
                }
                let target = std::fs::read_link(&path)?;
                path = parent.join(target);
            }
            // Not there: its folder resolved, then its own name.
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(real_path(parent)?.join(name));
            }
            Ok(_) => {
                return Err(std::io::Error::other(format!(
                    "cannot resolve {}",
                    path.display()
                )));
            }
            Err(error) => return Err(error),
        }
    }
}

/// The folders a scope's files may be in: the project for `--scope project`; for `--scope
/// user`, the home folder and the folders the clients' user files are placed from when set
/// elsewhere (`$XDG_CONFIG_HOME`, `%APPDATA%`, `$CODEX_HOME`).
fn scope_roots(scope: Scope, places: &Places) -> Vec<PathBuf> {
    match scope {
        Scope::Project => vec![places.project.clone()],
        Scope::User => [
            Some(&places.home),
            places.xdg_config_home.as_ref(),
            places.appdata.as_ref(),
            places.codex_home.as_ref(),
        ]
        .into_iter()
        .flatten()
        .cloned()
        .collect(),
    }
}

/// The real path of `file`, when it lies inside the scope asked for: under one of the scope's
/// folders (themselves resolved), and for a project, not the client's user file (a project in
/// the home folder, whose `.cursor/mcp.json` is the user's own). Else an error naming the real
/// path, what it is, and what to do.
pub fn confined(file: &ConfigFile, places: &Places) -> crate::Result<PathBuf> {
    let real = real_path(&file.path).map_err(|error| {
        crate::Error::Refused(format!("following {}: {error}", file.path.display()))
    })?;
    let through = if real == file.path {
        String::new()
    } else {
        format!(" ({} leads there)", file.path.display())
    };
    let roots: Vec<PathBuf> = scope_roots(file.scope, places)
        .iter()
        .filter_map(|root| real_path(root).ok())
        .collect();
    let scope = scope_name(file.scope);
    if !roots.iter().any(|root| real.starts_with(root)) {
        let folders: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
        return Err(crate::Error::Refused(format!(
            "not writing {}{through}: it is outside the {scope} scope ({}). Nothing was written; replace the link with a file or folder of its own, or use the scope that file belongs to",
            real.display(),
            folders.join(", ")
        )));
    }
    // A user file a project links to is still the user's; a project file that is the user's
    // (the project is the home folder, or links to it) is not the project's.
    if file.scope == Scope::Project {
        let users = file
            .client
            .config_file(Scope::User, places)
            .ok()
            .and_then(|users| real_path(&users.path).ok());
        if users.as_ref() == Some(&real) {
            return Err(crate::Error::Refused(format!(
                "not writing {}{through}: it is {}'s user file, not its project file. Nothing was written; use --scope user, or run this from the project's own folder",
                real.display(),
                file.client.title(),
            )));
        }
    }
    Ok(real)
}

/// A scope as `--scope` names it.
pub fn scope_name(scope: Scope) -> &'static str {
    match scope {
        Scope::User => "user",
        Scope::Project => "project",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_link_to_a_file_not_made_yet_and_missing_folders_are_resolved() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("global")).unwrap();
        std::fs::create_dir_all(root.join("project")).unwrap();
        std::os::unix::fs::symlink(root.join("global"), root.join("project/.cursor")).unwrap();
        assert_eq!(
            real_path(&root.join("project/.cursor/mcp.json")).unwrap(),
            root.join("global/mcp.json")
        );
        std::os::unix::fs::symlink("../dotfiles/x.json", root.join("global/link.json")).unwrap();
        assert_eq!(
            real_path(&root.join("global/link.json")).unwrap(),
            root.join("dotfiles/x.json")
        );
        assert_eq!(
            real_path(&root.join("new/a/b.json")).unwrap(),
            root.join("new/a/b.json")
        );
        std::os::unix::fs::symlink(root.join("loop"), root.join("loop")).unwrap();
        assert!(real_path(&root.join("loop/x")).is_err());
    }
}
