//! The one rule for files that hold secrets (the HTTP server's token files, the store's
//! connection-string file), as labs mount them: Kubernetes and Docker secrets are read-only
//! files (0444 or 0644) owned by root, often reached through a symbolic link
//! (`token -> ..data/token`), in a directory no one else can write.
//!
//! A file is accepted when, its links followed, each of these holds; the first that does not
//! is named in the refusal ([`Refused::rule`]):
//! - `regular-file`: it is a regular file;
//! - `owner`: it belongs to root or to this server's user;
//! - `file-mode`: no one but its owner may write to it;
//! - `private-when-yours`: one of this user's own may be read by no one else either (its owner
//!   can `chmod 600` it; a root-owned mount cannot be changed, and is read-only);
//! - `directory-owner`: its directory (and the link's, when it was reached through one)
//!   belongs to root or to this user;
//! - `directory-mode`: no one else may write to that directory, unless it has the sticky bit
//!   (then others cannot rename or replace what they do not own, and the file is root's or
//!   this user's).

use std::path::{Path, PathBuf};

/// Why a secret file was refused: the rule, and what to do.
#[derive(Debug, thiserror::Error)]
#[error("{what} {path} is refused (rule `{rule}`): {why}")]
pub struct Refused {
    /// What the file is for ("the token file", "the store file").
    pub what: &'static str,
    /// The file as given.
    pub path: PathBuf,
    /// The rule that refused it (see the module's docs).
    pub rule: &'static str,
    /// What is wrong, and what fixes it.
    pub why: String,
}

/// Reads the secret file `path` (`what` names it in a refusal) when the rule accepts it.
pub fn read(path: &Path, what: &'static str) -> Result<String, Refused> {
    check(path, what)?;
    std::fs::read_to_string(path).map_err(|error| Refused {
        what,
        path: path.to_owned(),
        rule: "regular-file",
        why: format!("it cannot be read: {error}"),
    })
}

/// Checks `path` against the rule without reading it.
pub fn check(path: &Path, what: &'static str) -> Result<(), Refused> {
    let refuse = |rule, why: String| Refused {
        what,
        path: path.to_owned(),
        rule,
        why,
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let me = rustix::process::geteuid().as_raw();
        let real = std::fs::canonicalize(path)
            .map_err(|error| refuse("regular-file", format!("it cannot be found: {error}")))?;
        let meta = std::fs::metadata(&real)
            .map_err(|error| refuse("regular-file", format!("it cannot be read: {error}")))?;
        if !meta.is_file() {
            return Err(refuse("regular-file", "it is not a regular file".into()));
        }
        let mode = meta.mode() & 0o7777;
        if meta.uid() != 0 && meta.uid() != me {
            return Err(refuse(
                "owner",
                format!(
                    "it belongs to another user (uid {}), not root nor this server's user (uid {me})",
                    meta.uid()
                ),
            ));
        }
        if mode & 0o022 != 0 {
            return Err(refuse(
                "file-mode",
                format!(
                    "others can write to it (mode {mode:o}), and could put secrets of their own in it: run `chmod go-w {}`",
                    real.display()
                ),
            ));
        }
        if meta.uid() == me && me != 0 && mode & 0o044 != 0 {
            return Err(refuse(
                "private-when-yours",
                format!(
                    "it is yours and others can read it (mode {mode:o}): run `chmod 600 {}`",
                    real.display()
                ),
            ));
        }
        let mut dirs = vec![real.parent().map(Path::to_path_buf)];
        if real != path {
            let given = path
                .parent()
                .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_owned()));
            dirs.push(given);
        }
        for dir in dirs.into_iter().flatten() {
            directory(&dir, me).map_err(|(rule, why)| refuse(rule, why))?;
        }
    }
    #[cfg(not(unix))]
    let _ = refuse;
    Ok(())
}

#[cfg(unix)]
fn directory(dir: &Path, me: u32) -> Result<(), (&'static str, String)> {
    use std::os::unix::fs::MetadataExt as _;
    let shown = dir.display();
    let meta = std::fs::metadata(dir).map_err(|error| {
        (
            "directory-owner",
            format!("its directory {shown} cannot be read: {error}"),
        )
    })?;
    let mode = meta.mode() & 0o7777;
    if meta.uid() != 0 && meta.uid() != me {
        return Err((
            "directory-owner",
            format!(
                "its directory {shown} belongs to another user (uid {}), who could put a file of their own in its place",
                meta.uid()
            ),
        ));
    }
    if mode & 0o022 != 0 && mode & 0o1000 == 0 {
        return Err((
            "directory-mode",
            format!(
                "others can write to its directory {shown} (mode {mode:o}) and could put a file of their own in its place: run `chmod go-w {shown}`"
            ),
        ));
    }
    Ok(())
}
