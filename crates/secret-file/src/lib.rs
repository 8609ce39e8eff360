//! The one rule for files that hold secrets: the HTTP server's token files (issue 28) and the
//! shared store's connection-string file (issue 41), as a person keeps them and as labs mount
//! them (Docker secrets: root-owned 0444 files; Kubernetes secret volumes: read-only
//! filesystems reached through a symbolic link, `token -> ..data/token`).
//!
//! The path is followed one name at a time, each directory through a descriptor held open, the
//! links too; every directory that holds a name on the way is judged (whoever can write to it
//! could put a name of their own there, a link included), and the file is judged by the `fstat`
//! of the descriptor that is then read, so nothing can be swapped between the check and the
//! read. A file is accepted when each of these holds, and the first that does not is named in
//! the refusal ([`Refused::rule`]):
//! - `regular-file`: it is a regular file that can be read (a FIFO, a device or a directory is
//!   refused without being opened for reading), reached in at most 40 links;
//! - `owner`: it belongs to root or to this server's user;
//! - `file-mode`: no one but its owner may write to it;
//! - `readable-by-others`: when group or others may read it, it looks like a mount: it has no
//!   write bit at all (0444, 0440), or it is on a read-only filesystem, or it is root's while
//!   the server is not root. A person's own 0644 file is refused (`chmod 600` or `chmod 444`);
//! - `directory-owner`: each directory on its way (the links' included) belongs to root or to
//!   this server's user;
//! - `directory-mode`: no one but its owner may write to each of those directories, unless the
//!   directory is sticky (`/tmp`, a Kubernetes volume) and the name in it is root's or this
//!   user's, which no one else can then rename or remove, and not a hard link (which is its
//!   target's owner's, whoever made it);
//! - `size`: it holds at most 1 MiB (a token file or a connection string is a few lines).
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

use std::io::Read as _;
use std::path::{Path, PathBuf};

/// The most a secret file may hold.
pub const MAX_BYTES: u64 = 1 << 20;

/// The most links followed on the way to the file (Linux's own `ELOOP` limit).
#[cfg(unix)]
const MAX_LINKS: usize = 40;

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

/// A rule and what is wrong, before the file's name is put to it.
type Refusal = (&'static str, String);

/// Reads the secret file `path` (`what` names it in a refusal) when the rule accepts it.
pub fn read(path: &Path, what: &'static str) -> Result<String, Refused> {
    let refuse = |(rule, why): Refusal| Refused {
        what,
        path: path.to_owned(),
        rule,
        why,
    };
    let file = open_judged(path).map_err(refuse)?;
    let mut bytes = Vec::new();
    file.take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| refuse(("regular-file", format!("it cannot be read: {error}"))))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(refuse((
            "size",
            format!("it holds more than {MAX_BYTES} bytes, more than any secret file needs"),
        )));
    }
    String::from_utf8(bytes).map_err(|error| {
        refuse((
            "regular-file",
            format!("it cannot be read: it is not UTF-8 text ({error})"),
        ))
    })
}

/// Where no owner or mode can be read, the file is opened as it is (the bound still holds).
#[cfg(not(unix))]
fn open_judged(path: &Path) -> Result<std::fs::File, Refusal> {
    std::fs::File::open(path)
        .map_err(|error| ("regular-file", format!("it cannot be opened: {error}")))
}

/// Follows `path` one name at a time through descriptors (see the module's docs), judging each
/// directory that holds a name, and opens the file; the file is judged by its descriptor's
/// `fstat`. Written by hand over `openat`: the standard library resolves a whole path at once,
/// which neither shows the directories on the way nor holds them while the next name is read.
#[cfg(unix)]
fn open_judged(path: &Path) -> Result<std::fs::File, Refusal> {
    use rustix::fs::{AtFlags, FileType, Mode};
    use std::collections::VecDeque;
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStrExt as _;

    let me = rustix::process::geteuid().as_raw();
    let open_dir = |at: &rustix::fd::OwnedFd, name: &std::ffi::OsStr| {
        rustix::fs::openat(at, name, directory_flags(), Mode::empty())
            .map_err(|error| cannot("found", error))
    };
    let start = |absolute: bool| -> Result<(rustix::fd::OwnedFd, PathBuf), Refusal> {
        let (from, shown) = if absolute {
            ("/", PathBuf::from("/"))
        } else {
            (".", std::env::current_dir().unwrap_or_else(|_| ".".into()))
        };
        let fd = rustix::fs::openat(rustix::fs::CWD, from, directory_flags(), Mode::empty())
            .map_err(|error| cannot("found", error))?;
        Ok((fd, shown))
    };
    let mut rest: VecDeque<OsString> = names(path);
    let (mut dir, mut shown) = start(path.is_absolute())?;
    let mut links = 0;
    while let Some(name) = rest.pop_front() {
        if name == "." {
            // Only a path's (or a link's) trailing `/` or `/.` gives one: what came before it
            // must be a directory.
            continue;
        }
        if name == ".." {
            dir = open_dir(&dir, &name)?;
            shown.pop();
            continue;
        }
        let entry = rustix::fs::statat(&dir, &name, AtFlags::SYMLINK_NOFOLLOW)
            .map_err(|error| cannot("found", error))?;
        let holder = rustix::fs::fstat(&dir).map_err(|error| cannot("found", error))?;
        let kind = FileType::from_raw_mode(entry.st_mode);
        let name_is = Entry {
            name: &name,
            uid: entry.st_uid,
            // A hard link is its target's, whoever made it: only a directory's count says
            // nothing of that.
            one_link: kind == FileType::Directory || entry.st_nlink == 1,
        };
        judge_directory(&shown, owned(&holder), name_is, me)?;
        if kind == FileType::Symlink {
            links += 1;
            if links > MAX_LINKS {
                return Err((
                    "regular-file",
                    format!("it is reached through more than {MAX_LINKS} links"),
                ));
            }
            let target = rustix::fs::readlinkat(&dir, &name, Vec::new())
                .map_err(|error| cannot("followed", error))?;
            let target = Path::new(std::ffi::OsStr::from_bytes(target.as_bytes()));
            if target.is_absolute() {
                (dir, shown) = start(true)?;
            }
            for name in names(target).into_iter().rev() {
                rest.push_front(name);
            }
            continue;
        }
        shown.push(&name);
        if !rest.is_empty() {
            if kind != FileType::Directory {
                return Err((
                    "regular-file",
                    format!("{} is not a directory", shown.display()),
                ));
            }
            dir = open_dir(&dir, &name)?;
            continue;
        }
        if kind != FileType::RegularFile {
            return Err(not_a_file(&shown));
        }
        return open_file(&dir, &name, &shown, me);
    }
    Err(not_a_file(&shown))
}

/// Opens the regular file `name` of the held directory `dir` (shown as `shown`) and judges it
/// by its own descriptor's `fstat`, not the name's: the file read is the file judged.
#[cfg(unix)]
fn open_file(
    dir: &rustix::fd::OwnedFd,
    name: &std::ffi::OsStr,
    shown: &Path,
    me: u32,
) -> Result<std::fs::File, Refusal> {
    use rustix::fs::{FileType, Mode, OFlags};
    let flags =
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    let fd =
        rustix::fs::openat(dir, name, flags, Mode::empty()).map_err(|e| cannot("opened", e))?;
    let meta = rustix::fs::fstat(&fd).map_err(|error| cannot("read", error))?;
    if FileType::from_raw_mode(meta.st_mode) != FileType::RegularFile {
        return Err(not_a_file(shown));
    }
    let read_only = rustix::fs::fstatvfs(&fd)
        .map(|fs| fs.f_flag.contains(rustix::fs::StatVfsMountFlags::RDONLY))
        .unwrap_or(false);
    judge_file(shown, owned(&meta), me, read_only)?;
    Ok(std::fs::File::from(fd))
}

/// How a directory on the way is opened: only to look names up in it.
#[cfg(unix)]
fn directory_flags() -> rustix::fs::OFlags {
    use rustix::fs::OFlags;
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let how = OFlags::PATH;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let how = OFlags::RDONLY;
    how | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// The names of `path` in order (the root and inner `.` left out; `..` kept), and a last `.`
/// where it ends in `/` or `/.`, which asks for a directory as the kernel reads it.
#[cfg(unix)]
fn names(path: &Path) -> std::collections::VecDeque<std::ffi::OsString> {
    use std::os::unix::ffi::OsStrExt as _;
    use std::path::Component;
    let mut names: std::collections::VecDeque<_> = path
        .components()
        .filter_map(|part| match part {
            Component::Normal(name) => Some(name.to_owned()),
            Component::ParentDir => Some("..".into()),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
        })
        .collect();
    let bytes = path.as_os_str().as_bytes();
    if bytes.ends_with(b"/") || bytes.ends_with(b"/.") || bytes == b"." {
        names.push_back(".".into());
    }
    names
}

/// The refusal of a name that could not be `doing` (found, opened, read).
#[cfg(unix)]
fn cannot(doing: &str, error: rustix::io::Errno) -> Refusal {
    (
        "regular-file",
        format!("it cannot be {doing}: {}", std::io::Error::from(error)),
    )
}

/// The refusal of what is not a regular file.
#[cfg(unix)]
fn not_a_file(shown: &Path) -> Refusal {
    (
        "regular-file",
        format!("{} is not a regular file", shown.display()),
    )
}

/// Owner and permission bits of what `stat` says.
#[cfg(unix)]
// `mode_t` is 16 bits on some systems and 32 on Linux, where the conversion is the identity.
#[allow(clippy::useless_conversion)]
fn owned(stat: &rustix::fs::Stat) -> Owned {
    Owned {
        uid: stat.st_uid,
        mode: u32::from(stat.st_mode) & 0o7777,
    }
}

/// A file's or directory's owner and permission bits.
#[derive(Clone, Copy, Debug)]
struct Owned {
    uid: u32,
    mode: u32,
}

/// The rules on the file itself (`real` is where the walk found it; `me` the server's user;
/// `read_only` whether its filesystem is mounted read-only).
#[cfg_attr(not(unix), allow(dead_code))]
fn judge_file(real: &Path, file: Owned, me: u32, read_only: bool) -> Result<(), Refusal> {
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

/// A name on the way, as the directory holding it is judged with it.
#[derive(Clone, Copy, Debug)]
struct Entry<'a> {
    name: &'a std::ffi::OsStr,
    /// Its owner.
    uid: u32,
    /// A directory, or anything with one link: not a hard link another user may have made.
    one_link: bool,
}

/// The rules on a directory that holds a name on the way.
#[cfg_attr(not(unix), allow(dead_code))]
fn judge_directory(dir: &Path, owned: Owned, entry: Entry<'_>, me: u32) -> Result<(), Refusal> {
    let shown = dir.display();
    let Owned { uid, mode } = owned;
    if uid != 0 && uid != me {
        return Err((
            "directory-owner",
            format!(
                "its way goes through {shown}, which belongs to another user (uid {uid}), who could put a name of their own there"
            ),
        ));
    }
    if mode & 0o022 == 0 {
        return Ok(());
    }
    // A sticky directory lets only a name's owner (or the directory's) rename or remove it; a
    // hard link is owned by its target's owner, not by whoever made it, so it is not kept.
    if mode & 0o1000 != 0 {
        let kept = (entry.uid == 0 || entry.uid == me) && entry.one_link;
        if kept {
            return Ok(());
        }
        let name = entry.name.to_string_lossy();
        let whose = if entry.one_link {
            format!("belongs to another user (uid {})", entry.uid)
        } else {
            "is a hard link, which anyone who can write there may have made".to_owned()
        };
        return Err((
            "directory-mode",
            format!(
                "others can write to {shown} (mode {mode:o}), on its way, and its name {name} there {whose}: keep the file in a directory of your own"
            ),
        ));
    }
    Err((
        "directory-mode",
        format!(
            "others can write to {shown} (mode {mode:o}), on its way, and could put a name of their own there: run `chmod go-w {shown}`"
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ME: u32 = 1000;
    const ROOT: u32 = 0;

    fn file(uid: u32, mode: u32, me: u32, read_only: bool) -> Result<(), &'static str> {
        judge_file(Path::new("/s/token"), Owned { uid, mode }, me, read_only).map_err(|(r, _)| r)
    }

    fn dir(uid: u32, mode: u32, entry_uid: u32, me: u32) -> Result<(), &'static str> {
        let entry = Entry {
            name: "token".as_ref(),
            uid: entry_uid,
            one_link: true,
        };
        judge_directory(Path::new("/s"), Owned { uid, mode }, entry, me).map_err(|(r, _)| r)
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
        assert_eq!(dir(1001, 0o755, ME, ME), Err("directory-owner"));
        assert_eq!(dir(ME, 0o775, ME, ME), Err("directory-mode"));
        assert_eq!(dir(ME, 0o777, ROOT, ME), Err("directory-mode"));
        assert_eq!(dir(ROOT, 0o755, 1001, ME), Ok(()));
        assert_eq!(dir(ME, 0o700, ME, ME), Ok(()));
    }

    #[test]
    fn a_sticky_directory_passes_a_name_no_one_else_can_move() {
        // /tmp, a Kubernetes volume: only a name's owner may rename or remove it there.
        assert_eq!(dir(ROOT, 0o1777, ME, ME), Ok(()));
        assert_eq!(dir(ROOT, 0o1777, ROOT, ME), Ok(()));
        assert_eq!(dir(ROOT, 0o1777, 1001, ME), Err("directory-mode"));
        assert_eq!(dir(1001, 0o1777, ME, ME), Err("directory-owner"));
        // A hard link there is its target's owner's, whoever made it.
        let hard_link = Entry {
            name: "token".as_ref(),
            uid: ROOT,
            one_link: false,
        };
        let (rule, why) = judge_directory(
            Path::new("/tmp"),
            Owned {
                uid: ROOT,
                mode: 0o1777,
            },
            hard_link,
            ME,
        )
        .unwrap_err();
        assert_eq!(rule, "directory-mode");
        // Never the advice to close /tmp.
        assert!(!why.contains("chmod") && why.contains("hard link"), "{why}");
    }

    #[cfg(unix)]
    mod on_disk {
        use super::super::*;
        use std::os::unix::fs::PermissionsExt as _;

        fn chmod(path: &Path, mode: u32) {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        }

        /// A secret file at `path` as a person keeps one: `secret\n`, mode 0600.
        fn kept_secret(path: &Path) {
            std::fs::write(path, "secret\n").unwrap();
            chmod(path, 0o600);
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
            kept_secret(&path);
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
            // volume's own directory is world-writable with the sticky bit, and its names are
            // this user's (root's in a pod), which no one else can move there.
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

        #[test]
        fn every_directory_on_the_way_is_judged() {
            let top = tempfile::tempdir().unwrap();
            let open = top.path().join("open");
            let inner = open.join("inner");
            std::fs::create_dir_all(&inner).unwrap();
            let path = inner.join("tokens");
            kept_secret(&path);
            chmod(&inner, 0o755);
            chmod(&open, 0o777);
            // Whoever can write to `open` could put an `inner` of their own there.
            let refused = read(&path, "the token file").unwrap_err();
            assert_eq!(refused.rule, "directory-mode");
            assert!(
                refused.why.contains(&open.display().to_string()),
                "{refused}"
            );
            chmod(&open, 0o755);
            assert_eq!(rule(&path), Ok("secret\n".into()));
            // `..` on the way is followed, as the kernel does.
            assert_eq!(
                rule(&inner.join("..").join("inner").join("tokens")),
                Ok("secret\n".into())
            );
        }

        #[test]
        fn a_link_in_a_directory_others_can_write_is_refused() {
            let top = tempfile::tempdir().unwrap();
            let real = top.path().join("real");
            let links = top.path().join("links");
            std::fs::create_dir(&real).unwrap();
            std::fs::create_dir(&links).unwrap();
            kept_secret(&real.join("tokens"));
            chmod(&real, 0o700);
            let link = links.join("tokens");
            std::os::unix::fs::symlink("../real/tokens", &link).unwrap();
            chmod(&links, 0o777);
            // The file and its real directory are sound; the link could be anyone's.
            let refused = read(&link, "the token file").unwrap_err();
            assert_eq!(refused.rule, "directory-mode");
            assert!(
                refused.why.contains(&links.display().to_string()),
                "{refused}"
            );
            chmod(&links, 0o755);
            assert_eq!(rule(&link), Ok("secret\n".into()));
        }

        #[test]
        fn a_hard_link_in_a_sticky_directory_is_refused() {
            // Where hard links are not protected (macOS, fs.protected_hardlinks=0), another
            // user can link a root-owned file into /tmp under the expected name.
            let dir = tempfile::tempdir().unwrap();
            let real = dir.path().join("real");
            kept_secret(&real);
            let link = dir.path().join("tokens");
            std::fs::hard_link(&real, &link).unwrap();
            chmod(dir.path(), 0o1777);
            assert_eq!(rule(&link), Err("directory-mode"));
            chmod(dir.path(), 0o700);
            assert_eq!(rule(&link), Ok("secret\n".into()));
        }

        #[test]
        fn a_trailing_slash_asks_for_a_directory() {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("tokens");
            kept_secret(&path);
            let shown = path.display();
            for asked in [format!("{shown}/"), format!("{shown}/.")] {
                assert_eq!(rule(Path::new(&asked)), Err("regular-file"), "{asked}");
            }
            assert_eq!(
                rule(Path::new(&format!("{}/./tokens", dir.path().display()))),
                Ok("secret\n".into())
            );
        }

        #[test]
        fn a_fifo_is_refused_without_waiting_for_a_writer() {
            use rustix::fs::{CWD, FileType, Mode};
            let dir = tempfile::tempdir().unwrap();
            let fifo = dir.path().join("tokens");
            rustix::fs::mknodat(CWD, &fifo, FileType::Fifo, Mode::from_raw_mode(0o600), 0).unwrap();
            // Opened for reading, a FIFO would wait for a writer for ever.
            assert_eq!(rule(&fifo), Err("regular-file"));
            let link = dir.path().join("link");
            std::os::unix::fs::symlink("tokens", &link).unwrap();
            assert_eq!(rule(&link), Err("regular-file"));
        }

        #[test]
        fn a_loop_of_links_and_a_file_too_large_are_refused() {
            let dir = tempfile::tempdir().unwrap();
            std::os::unix::fs::symlink("b", dir.path().join("a")).unwrap();
            std::os::unix::fs::symlink("a", dir.path().join("b")).unwrap();
            assert_eq!(rule(&dir.path().join("a")), Err("regular-file"));
            let large = dir.path().join("large");
            std::fs::write(&large, vec![b'x'; MAX_BYTES as usize + 1]).unwrap();
            chmod(&large, 0o600);
            assert_eq!(rule(&large), Err("size"));
            std::fs::write(&large, vec![b'x'; MAX_BYTES as usize]).unwrap();
            assert_eq!(rule(&large).map(|text| text.len()), Ok(MAX_BYTES as usize));
        }

        #[test]
        fn a_sticky_directory_refuses_another_users_name() {
            use rustix::fs::{AtFlags, CWD, Gid, Uid};
            if !rustix::process::geteuid().is_root() {
                eprintln!("skipped: only root can give a name to another user");
                return;
            }
            let dir = tempfile::tempdir().unwrap();
            let real = dir.path().join("real");
            kept_secret(&real);
            let link = dir.path().join("tokens");
            std::os::unix::fs::symlink("real", &link).unwrap();
            chmod(dir.path(), 0o1777);
            assert_eq!(rule(&link), Ok("secret\n".into()));
            // Another user's link in a sticky directory: theirs to point elsewhere.
            let other = (Some(Uid::from_raw(4242)), Some(Gid::from_raw(4242)));
            rustix::fs::chownat(CWD, &link, other.0, other.1, AtFlags::SYMLINK_NOFOLLOW).unwrap();
            assert_eq!(rule(&link), Err("directory-mode"));
        }
    }
}
