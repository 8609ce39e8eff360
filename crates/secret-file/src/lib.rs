//! The one rule for files that hold secrets: the HTTP server's token files (issue 28) and the
//! shared store's connection-string file (issue 41), as a person keeps them and as labs mount
//! them (Docker secrets: root-owned 0444 files; Kubernetes secret volumes: read-only
//! filesystems reached through a symbolic link, `token -> ..data/token`).
//!
//! The file a link resolves to, and its real directory, are judged; a file is accepted when
//! each of these holds, and the first that does not is named in the refusal
//! ([`Refused::rule`]):
//! - `regular-file`: it is a regular file that can be read;
//! - `owner`: it belongs to root or to this server's user;
//! - `file-mode`: no one but its owner may write to it;
//! - `readable-by-others`: when group or others may read it, it looks like a mount: it has no
//!   write bit at all (0444, 0440), or it is on a read-only filesystem, or it is root's while
//!   the server is not root. A person's own 0644 file is refused (`chmod 600` or `chmod 444`);
//! - `directory-owner`: its directory belongs to root or to this server's user;
//! - `directory-mode`: no one but its owner may write to its directory.
//!
//! ```
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("tokens");
//! std::fs::write(&path, "0123456789abcdef ci-agent\n").unwrap();
//! # #[cfg(unix)] {
//! use std::os::unix::fs::PermissionsExt as _;
//! std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
//! let refused = phonelogs_secret_file::read(&path, "the token file").unwrap_err();
//! assert_eq!(refused.rule, "readable-by-others");
//! std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
//! assert!(phonelogs_secret_file::read(&path, "the token file").is_ok());
//! # }
//! ```

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
    let refuse = |(rule, why): (&'static str, String)| Refused {
        what,
        path: path.to_owned(),
        rule,
        why,
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let me = rustix::process::geteuid().as_raw();
        let cannot = |doing: &str, error: std::io::Error| {
            refuse(("regular-file", format!("it cannot be {doing}: {error}")))
        };
        let real = std::fs::canonicalize(path).map_err(|e| cannot("found", e))?;
        let meta = std::fs::metadata(&real).map_err(|e| cannot("read", e))?;
        if !meta.is_file() {
            return Err(refuse((
                "regular-file",
                format!("{} is not a regular file", real.display()),
            )));
        }
        let read_only = rustix::fs::statvfs(&real)
            .map(|fs| fs.f_flag.contains(rustix::fs::StatVfsMountFlags::RDONLY))
            .unwrap_or(false);
        let file = Owned {
            uid: meta.uid(),
            mode: meta.mode() & 0o7777,
        };
        judge_file(&real, file, me, read_only).map_err(refuse)?;
        if let Some(dir) = real.parent() {
            let dir_meta = std::fs::metadata(dir).map_err(|error| {
                refuse((
                    "directory-owner",
                    format!("its directory {} cannot be read: {error}", dir.display()),
                ))
            })?;
            let owned = Owned {
                uid: dir_meta.uid(),
                mode: dir_meta.mode() & 0o7777,
            };
            judge_directory(dir, owned, me).map_err(refuse)?;
        }
    }
    #[cfg(not(unix))]
    let _ = refuse;
    Ok(())
}

/// A file's or directory's owner and permission bits.
#[derive(Clone, Copy, Debug)]
struct Owned {
    uid: u32,
    mode: u32,
}

/// The rules on the file itself (`real` is the file its links resolve to; `me` the server's
/// user; `read_only` whether its filesystem is mounted read-only).
fn judge_file(
    real: &Path,
    file: Owned,
    me: u32,
    read_only: bool,
) -> Result<(), (&'static str, String)> {
    let shown = real.display();
    let Owned { uid, mode } = file;
    if uid != 0 && uid != me {
        return Err((
            "owner",
            format!(
                "it belongs to another user (uid {uid}), not root nor this server's user (uid {me})"
            ),
        ));
    }
    if mode & 0o022 != 0 {
        return Err((
            "file-mode",
            format!(
                "others can write to it (mode {mode:o}), and could put secrets of their own in it: run `chmod go-w {shown}`"
            ),
        ));
    }
    let mounted = mode & 0o222 == 0 || read_only || (uid == 0 && me != 0);
    if mode & 0o044 != 0 && !mounted {
        return Err((
            "readable-by-others",
            format!(
                "others can read it (mode {mode:o}) and could use its secrets, and it is not a read-only mount: run `chmod 600 {shown}` (or `chmod 444 {shown}` to keep it readable by all, read-only)"
            ),
        ));
    }
    Ok(())
}

/// The rules on the file's real directory.
fn judge_directory(dir: &Path, owned: Owned, me: u32) -> Result<(), (&'static str, String)> {
    let shown = dir.display();
    let Owned { uid, mode } = owned;
    if uid != 0 && uid != me {
        return Err((
            "directory-owner",
            format!(
                "its directory {shown} belongs to another user (uid {uid}), who could put a file of their own in its place"
            ),
        ));
    }
    if mode & 0o022 != 0 {
        return Err((
            "directory-mode",
            format!(
                "others can write to its directory {shown} (mode {mode:o}) and could put a file of their own in its place: run `chmod go-w {shown}`"
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ME: u32 = 1000;
    const ROOT: u32 = 0;

    fn file(uid: u32, mode: u32, me: u32, read_only: bool) -> Result<(), &'static str> {
        judge_file(Path::new("/s/token"), Owned { uid, mode }, me, read_only).map_err(|(r, _)| r)
    }

    fn dir(uid: u32, mode: u32, me: u32) -> Result<(), &'static str> {
        judge_directory(Path::new("/s"), Owned { uid, mode }, me).map_err(|(r, _)| r)
    }

    #[test]
    fn owner_is_root_or_the_servers_user() {
        assert_eq!(file(1001, 0o600, ME, false), Err("owner"));
        assert_eq!(file(1001, 0o444, ME, true), Err("owner"));
        assert_eq!(file(ME, 0o600, ME, false), Ok(()));
        assert_eq!(file(ROOT, 0o600, ROOT, false), Ok(()));
        assert_eq!(file(ROOT, 0o400, ME, false), Ok(()));
    }

    #[test]
    fn no_one_but_the_owner_may_write() {
        assert_eq!(file(ME, 0o620, ME, false), Err("file-mode"));
        assert_eq!(file(ME, 0o602, ME, false), Err("file-mode"));
        // Not even on a read-only filesystem, nor root's.
        assert_eq!(file(ROOT, 0o666, ME, true), Err("file-mode"));
    }

    #[test]
    fn readable_by_others_only_as_a_mount() {
        // Issue 28: a person's own 0644 (or 0640) file is refused, the fix named.
        assert_eq!(file(ME, 0o644, ME, false), Err("readable-by-others"));
        assert_eq!(file(ME, 0o640, ME, false), Err("readable-by-others"));
        assert_eq!(file(ROOT, 0o644, ROOT, false), Err("readable-by-others"));
        // Docker's secrets: no write bit at all.
        assert_eq!(file(ME, 0o444, ME, false), Ok(()));
        assert_eq!(file(ROOT, 0o440, ROOT, false), Ok(()));
        // Kubernetes' secret volumes: a read-only filesystem.
        assert_eq!(file(ROOT, 0o644, ROOT, true), Ok(()));
        assert_eq!(file(ME, 0o644, ME, true), Ok(()));
        // Root's file read by a server that is not root.
        assert_eq!(file(ROOT, 0o644, ME, false), Ok(()));
        let (_, why) = judge_file(
            Path::new("/s/t"),
            Owned {
                uid: ME,
                mode: 0o644,
            },
            ME,
            false,
        )
        .unwrap_err();
        assert!(
            why.contains("chmod 600 /s/t") && why.contains("chmod 444 /s/t"),
            "{why}"
        );
    }

    #[test]
    fn the_directory_is_roots_or_the_servers_and_no_one_elses_to_write() {
        assert_eq!(dir(1001, 0o755, ME), Err("directory-owner"));
        assert_eq!(dir(ME, 0o775, ME), Err("directory-mode"));
        assert_eq!(dir(ROOT, 0o1777, ME), Err("directory-mode"));
        assert_eq!(dir(ROOT, 0o755, ME), Ok(()));
        assert_eq!(dir(ME, 0o700, ME), Ok(()));
    }

    #[cfg(unix)]
    mod on_disk {
        use super::super::*;
        use std::os::unix::fs::PermissionsExt as _;

        fn chmod(path: &Path, mode: u32) {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        }

        fn rule(path: &Path) -> Result<String, &'static str> {
            read(path, "the token file").map_err(|refused| {
                assert!(refused.to_string().contains(refused.rule), "{refused}");
                refused.rule
            })
        }

        #[test]
        fn a_file_is_judged_by_its_mode_and_its_directorys() {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("tokens");
            std::fs::write(&path, "secret\n").unwrap();
            chmod(&path, 0o600);
            assert_eq!(rule(&path), Ok("secret\n".into()));
            chmod(&path, 0o444);
            assert!(rule(&path).is_ok());
            chmod(&path, 0o644);
            // This user's own file (as root too: root's own file read by root).
            assert_eq!(rule(&path), Err("readable-by-others"));
            chmod(&path, 0o622);
            assert_eq!(rule(&path), Err("file-mode"));
            chmod(&path, 0o600);
            chmod(dir.path(), 0o777);
            assert_eq!(rule(&path), Err("directory-mode"));
            chmod(dir.path(), 0o700);
            assert_eq!(rule(dir.path()), Err("regular-file"));
            assert_eq!(rule(&dir.path().join("missing")), Err("regular-file"));
        }

        #[test]
        fn a_kubernetes_link_is_judged_by_the_file_it_resolves_to() {
            // token -> ..data/token, ..data -> ..2026_12_05/ (as the kubelet lays it out); the
            // volume's own directory is world-writable with the sticky bit, which is not judged.
            let volume = tempfile::tempdir().unwrap();
            let stamped = volume.path().join("..2026_12_05");
            std::fs::create_dir(&stamped).unwrap();
            std::fs::write(stamped.join("token"), "secret\n").unwrap();
            std::os::unix::fs::symlink("..2026_12_05", volume.path().join("..data")).unwrap();
            let token = volume.path().join("token");
            std::os::unix::fs::symlink("..data/token", &token).unwrap();
            chmod(&stamped, 0o755);
            chmod(volume.path(), 0o1777);
            chmod(&stamped.join("token"), 0o444);
            assert_eq!(rule(&token), Ok("secret\n".into()));
            // The real directory is judged.
            chmod(&stamped, 0o777);
            assert_eq!(rule(&token), Err("directory-mode"));
            chmod(&stamped, 0o755);
            chmod(&stamped.join("token"), 0o666);
            assert_eq!(rule(&token), Err("file-mode"));
        }
    }
}
