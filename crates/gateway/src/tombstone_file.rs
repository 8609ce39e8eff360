//! Writing a tombstone under `<local_root>/tombstones/`, confined to that tree.
//!
//! The agent names the file (`local_path`), so everything below `local_root` is treated as
//! hostile: another process of the same user may put symlinks there, even between the check
//! and the write. Each directory on the way is therefore opened relative to the one above with
//! `O_NOFOLLOW | O_DIRECTORY`, so no symlink is followed at any depth and a directory swapped
//! for a symlink after the check is refused rather than followed. The file itself is created
//! under a temporary name in its directory with `O_CREAT | O_EXCL | O_NOFOLLOW` and mode 0600,
//! synced, and then hard-linked to its name (`linkat` fails with `EEXIST` instead of replacing,
//! which a plain `rename` would do) and the temporary name removed. An existing file of that
//! name is never replaced: the call is refused, saying so.
//!
//! `local_root` itself is the person's configuration and is opened as they wrote it.
//!
//! The descriptor-relative calls come from `rustix` (Bytecode Alliance; Apache-2.0 WITH
//! LLVM-exception OR Apache-2.0 OR MIT, allowed by `deny.toml`; already in the lock file through
//! `tempfile`): it wraps `openat`, `mkdirat`, `linkat`, `unlinkat` and `fchmod` safely, so the
//! workspace's `unsafe_code = "forbid"` holds. `cap-std` would do the same with a larger
//! dependency graph.

use std::path::{Component, Path, PathBuf};

use phonelogs_view::debug_types::ErrorCode;

/// A refusal or failure: the envelope's code and why, for the agent.
pub(crate) type FileError = (ErrorCode, String);

fn policy(why: impl Into<String>) -> FileError {
    (ErrorCode::PolicyDenied, why.into())
}

fn io(error: impl std::fmt::Display) -> FileError {
    (
        ErrorCode::BackendError,
        format!("the tombstone could not be written: {error}"),
    )
}

/// Checks a `local_path` without touching the disk: a relative path of plain names, naming a
/// file. Returns it as a relative path.
pub(crate) fn check_local_path(local_path: &str) -> Result<PathBuf, String> {
    if local_path.contains('\0') {
        return Err("it contains a NUL byte".into());
    }
    // The path is named in the person's question and kept with it: nothing that could make
    // the question read as something else (the gateway's one rule, `lines::misleads`: controls,
    // line ends, bidirectional and zero-width marks), and no more than the state keeps of any
    // text of the agent's.
    if local_path.chars().any(phonelogs_view::lines::misleads) {
        return Err(
            "it contains a control character, a line end or an invisible or bidirectional mark"
                .into(),
        );
    }
    if local_path.len() > crate::types::AGENT_TEXT_BYTES {
        return Err(format!(
            "it is longer than {} bytes",
            crate::types::AGENT_TEXT_BYTES
        ));
    }
    let trimmed = local_path.trim();
    if trimmed.is_empty() {
        return Err("it is empty".into());
    }
    if trimmed.ends_with('/') || trimmed.ends_with('\\') {
        return Err("it names a directory".into());
    }
    let path = Path::new(trimmed);
    if path.is_absolute() || path.has_root() {
        return Err("it is absolute".into());
    }
    let mut relative = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Normal(name) => relative.push(name),
            Component::CurDir => {}
            Component::ParentDir => return Err("it climbs out with ..".into()),
            Component::RootDir | Component::Prefix(_) => return Err("it is absolute".into()),
        }
    }
    if relative.file_name().is_none() {
        return Err("it names a directory".into());
    }
    Ok(relative)
}

/// The directory names below `tombstones/` and the file name of a checked relative path.
fn split(relative: &Path) -> Result<(Vec<&std::ffi::OsStr>, &std::ffi::OsStr), FileError> {
    let Some(file_name) = relative.file_name() else {
        return Err(policy("it names a directory"));
    };
    let mut dirs = Vec::new();
    if let Some(parent) = relative.parent() {
        for component in parent.components() {
            match component {
                Component::Normal(name) => dirs.push(name),
                Component::CurDir => {}
                _ => return Err(policy("it is not a plain relative path")),
            }
        }
    }
    Ok((dirs, file_name))
}

/// Checks where a tombstone would go without creating or writing anything: every directory that
/// already exists on the way must be a plain directory (no symlink), and the file must not exist
/// yet. What does not exist yet is fine: [`write_tombstone`] creates it inside
/// `<root>/tombstones`, checking again.
pub(crate) fn check_destination(root: &Path, relative: &Path) -> Result<(), FileError> {
    imp::check(root, relative)
}

/// Writes `bytes` to `<root>/tombstones/<relative>` as a new file of mode 0600, creating the
/// directories on the way (mode 0700), without following a symlink anywhere below `root` and
/// without replacing an existing file. Returns the path written.
pub(crate) fn write_tombstone(
    root: &Path,
    relative: &Path,
    bytes: &[u8],
) -> Result<PathBuf, FileError> {
    imp::write(root, relative, bytes, &crate::new_id("tmp"), &|| {})
}

/// The refusal for a name that is already taken: never replaced, and the agent is told so.
fn exists(relative: &Path) -> FileError {
    policy(format!(
        "tombstones/{} exists already and is not replaced; choose another name",
        relative.display()
    ))
}

#[cfg(unix)]
mod imp {
    use std::ffi::OsStr;
    use std::io::Write;
    use std::os::fd::{AsFd, OwnedFd};
    use std::path::{Path, PathBuf};

    use rustix::fs::{AtFlags, CWD, Mode, OFlags};
    use rustix::io::Errno;

    use super::{FileError, exists, io, policy, split};

    /// Opens `name` in `dir` as a directory, never through a symlink.
    fn open_dir(dir: impl AsFd, name: &OsStr) -> Result<OwnedFd, Errno> {
        rustix::fs::openat(
            dir,
            name,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
    }

    /// What an `openat` of a directory on the way failing means for the agent. `ELOOP` is a
    /// symlink under `O_NOFOLLOW`; `ENOTDIR` is a file (or, on some systems, a symlink).
    fn refused_dir(errno: Errno, name: &OsStr) -> FileError {
        match errno {
            Errno::LOOP | Errno::NOTDIR => policy(format!(
                "{} on the way is not a plain directory (a symlink or a file)",
                Path::new(name).display()
            )),
            other => io(std::io::Error::from(other)),
        }
    }

    /// Opens (with `create`, makes) each directory from `<root>/tombstones` down to the file's
    /// directory. Without `create`, `None` means one on the way does not exist yet.
    fn walk(root: &Path, dirs: &[&OsStr], create: bool) -> Result<Option<OwnedFd>, FileError> {
        if create {
            std::fs::create_dir_all(root).map_err(io)?;
        }
        // local_root is the person's own setting, so it is opened as written (it may be a
        // symlink they made); only what lies below it is confined.
        let mut dir = match rustix::fs::openat(
            CWD,
            root,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(Errno::NOENT) if !create => return Ok(None),
            Err(errno) => return Err(io(std::io::Error::from(errno))),
        };
        let tombstones = OsStr::new("tombstones");
        for name in std::iter::once(&tombstones).chain(dirs.iter()) {
            let next = match open_dir(&dir, name) {
                Ok(fd) => fd,
                Err(Errno::NOENT) if !create => return Ok(None),
                Err(Errno::NOENT) => {
                    match rustix::fs::mkdirat(&dir, *name, Mode::RWXU) {
                        // Made by someone else in between: opened below like any other.
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(errno) => return Err(io(std::io::Error::from(errno))),
                    }
                    open_dir(&dir, name).map_err(|errno| refused_dir(errno, name))?
                }
                Err(errno) => return Err(refused_dir(errno, name)),
            };
            dir = next;
        }
        Ok(Some(dir))
    }

    /// Whether `name` exists in `dir` in any form (file, directory, symlink, even dangling).
    fn taken(dir: impl AsFd, name: &OsStr) -> Result<bool, FileError> {
        match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(_) => Ok(true),
            Err(Errno::NOENT) => Ok(false),
            Err(errno) => Err(io(std::io::Error::from(errno))),
        }
    }

    pub(super) fn check(root: &Path, relative: &Path) -> Result<(), FileError> {
        let (dirs, file_name) = split(relative)?;
        let Some(dir) = walk(root, &dirs, false)? else {
            return Ok(());
        };
        if taken(&dir, file_name)? {
            return Err(exists(relative));
        }
        Ok(())
    }

    pub(super) fn write(
        root: &Path,
        relative: &Path,
        bytes: &[u8],
        unique: &str,
        before_link: &dyn Fn(),
    ) -> Result<PathBuf, FileError> {
        let (dirs, file_name) = split(relative)?;
        let Some(dir) = walk(root, &dirs, true)? else {
            return Err(io("a directory on the way vanished"));
        };
        if taken(&dir, file_name)? {
            return Err(exists(relative));
        }
        let mut temporary = std::ffi::OsString::from(".");
        temporary.push(file_name);
        temporary.push(format!(".{unique}.partial"));
        let fd = rustix::fs::openat(
            &dir,
            &temporary,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::RUSR | Mode::WUSR,
        )
        .map_err(|errno| io(std::io::Error::from(errno)))?;
        let written = (|| -> Result<(), FileError> {
            // The umask can only take bits away; set 0600 exactly all the same.
            rustix::fs::fchmod(&fd, Mode::RUSR | Mode::WUSR)
                .map_err(|errno| io(std::io::Error::from(errno)))?;
            let mut file = std::fs::File::from(fd);
            file.write_all(bytes).map_err(io)?;
            file.sync_all().map_err(io)?;
            before_link();
            // A hard link never replaces: EEXIST if the name was taken since the check.
            match rustix::fs::linkat(&dir, &temporary, &dir, file_name, AtFlags::empty()) {
                Ok(()) => Ok(()),
                Err(Errno::EXIST) => Err(exists(relative)),
                Err(errno) => Err(io(std::io::Error::from(errno))),
            }
        })();
        // The temporary name goes in every case: after the link the file lives on under its
        // own name, and on failure nothing of it is left.
        if let Err(errno) = rustix::fs::unlinkat(&dir, &temporary, AtFlags::empty()) {
            tracing::warn!(%errno, "the temporary tombstone file could not be removed");
        }
        written?;
        // Best effort: make the new name durable too.
        let _ = rustix::fs::fsync(&dir);
        let shown = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        Ok(shown.join("tombstones").join(relative))
    }
}

#[cfg(not(unix))]
mod imp {
    use std::path::{Path, PathBuf};

    use super::FileError;

    // Without descriptor-relative, no-follow opens the confinement cannot be kept, so nothing
    // is written rather than something written unsafely.
    pub(super) fn check(_root: &Path, _relative: &Path) -> Result<(), FileError> {
        Err(super::policy("tombstones are saved only on Unix hosts"))
    }

    pub(super) fn write(
        _root: &Path,
        _relative: &Path,
        _bytes: &[u8],
        _unique: &str,
        _before_link: &dyn Fn(),
    ) -> Result<PathBuf, FileError> {
        Err(super::policy("tombstones are saved only on Unix hosts"))
    }
}

#[cfg(all(test, unix))]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::os::unix::fs::{PermissionsExt, symlink};

    use super::*;

    fn relative(path: &str) -> PathBuf {
        check_local_path(path).unwrap()
    }

    fn is_policy(result: Result<impl std::fmt::Debug, FileError>) -> String {
        match result {
            Err((ErrorCode::PolicyDenied, why)) => why,
            other => panic!("expected POLICY_DENIED, got {other:?}"),
        }
    }

    #[test]
    fn writes_a_new_file_of_mode_0600_and_leaves_no_temporary() {
        let root = tempfile::tempdir().unwrap();
        let written = write_tombstone(root.path(), &relative("run1/a/app.txt"), b"TOMB").unwrap();
        assert!(written.ends_with("tombstones/run1/a/app.txt"));
        assert_eq!(std::fs::read(&written).unwrap(), b"TOMB");
        let mode = std::fs::metadata(&written).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
        let dir_mode = std::fs::metadata(root.path().join("tombstones/run1"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(dir_mode & 0o077, 0, "{dir_mode:o}");
        let names: Vec<_> = std::fs::read_dir(written.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["app.txt"]);
    }

    #[test]
    fn an_existing_file_is_never_replaced() {
        let root = tempfile::tempdir().unwrap();
        let path = relative("app.txt");
        write_tombstone(root.path(), &path, b"FIRST").unwrap();
        let why = is_policy(check_destination(root.path(), &path));
        assert!(why.contains("exists"), "{why}");
        let why = is_policy(write_tombstone(root.path(), &path, b"SECOND"));
        assert!(why.contains("exists"), "{why}");
        let tombstones = root.path().join("tombstones");
        assert_eq!(std::fs::read(tombstones.join("app.txt")).unwrap(), b"FIRST");
        assert_eq!(std::fs::read_dir(&tombstones).unwrap().count(), 1);
        // A dangling symlink or a directory of that name is taken too.
        symlink("/nonexistent", tombstones.join("dangling")).unwrap();
        is_policy(write_tombstone(root.path(), &relative("dangling"), b"X"));
        std::fs::create_dir(tombstones.join("dir")).unwrap();
        is_policy(write_tombstone(root.path(), &relative("dir"), b"X"));
    }

    #[test]
    fn no_symlink_is_followed_at_any_depth() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let tombstones = root.path().join("tombstones");
        std::fs::create_dir_all(tombstones.join("inside/real")).unwrap();
        // A link that leads out, and one that stays inside: both refused.
        symlink(outside.path(), tombstones.join("out")).unwrap();
        symlink(
            tombstones.join("inside/real"),
            tombstones.join("inside/alias"),
        )
        .unwrap();
        for path in ["out/x.txt", "out/deeper/x.txt", "inside/alias/x.txt"] {
            is_policy(check_destination(root.path(), &relative(path)));
            is_policy(write_tombstone(root.path(), &relative(path), b"X"));
        }
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
        assert_eq!(
            std::fs::read_dir(tombstones.join("inside/real"))
                .unwrap()
                .count(),
            0
        );
        // `tombstones` itself as a symlink is refused as well.
        let other = tempfile::tempdir().unwrap();
        symlink(outside.path(), other.path().join("tombstones")).unwrap();
        is_policy(write_tombstone(other.path(), &relative("x.txt"), b"X"));
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_directory_swapped_for_a_symlink_after_the_check_is_not_followed() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let tombstones = root.path().join("tombstones");
        std::fs::create_dir_all(tombstones.join("run1")).unwrap();
        let path = relative("run1/app.txt");
        // The check passes: run1 is a plain directory then.
        check_destination(root.path(), &path).unwrap();
        // Between the check and the write (while debuggerd runs), run1 becomes a symlink out.
        std::fs::remove_dir(tombstones.join("run1")).unwrap();
        symlink(outside.path(), tombstones.join("run1")).unwrap();
        let why = is_policy(write_tombstone(root.path(), &path, b"SECRET"));
        assert!(why.contains("run1"), "{why}");
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_name_taken_between_the_check_and_the_link_is_not_replaced() {
        // The temporary file is written, then someone creates the final name (here: a symlink
        // to a file outside, the classic swap); the link step must refuse, not overwrite.
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let victim = outside.path().join("victim.txt");
        std::fs::write(&victim, "KEEP").unwrap();
        let tombstones = root.path().join("tombstones");
        std::fs::create_dir_all(&tombstones).unwrap();
        let path = relative("app.txt");
        check_destination(root.path(), &path).unwrap();
        let swap = || symlink(&victim, tombstones.join("app.txt")).unwrap();
        let why = is_policy(imp::write(root.path(), &path, b"SECRET", "t", &swap));
        assert!(why.contains("exists"), "{why}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "KEEP");
        // Only the symlink someone else made is left: no temporary file.
        assert_eq!(std::fs::read_dir(&tombstones).unwrap().count(), 1);
    }

    #[test]
    fn missing_directories_are_fine_for_the_check_and_made_by_the_write() {
        let root = tempfile::tempdir().unwrap();
        let fresh = root.path().join("not-yet");
        check_destination(&fresh, &relative("a/b.txt")).unwrap();
        assert!(!fresh.exists(), "the check created something");
        write_tombstone(&fresh, &relative("a/b.txt"), b"X").unwrap();
        assert!(fresh.join("tombstones/a/b.txt").is_file());
    }

    #[test]
    fn hostile_local_paths_are_refused_before_the_disk() {
        let long = format!("{}.txt", "x".repeat(crate::types::AGENT_TEXT_BYTES));
        for hostile in [
            "../x",
            "a/../../x",
            "/tmp/x",
            "nul\0x",
            "dir/",
            "",
            "  ",
            "x.txt\n\nAllow?",
            "a\u{1b}[2Jb.txt",
            &long,
        ] {
            assert!(check_local_path(hostile).is_err(), "{hostile:?}");
        }
        assert_eq!(
            check_local_path("./a/./b.txt").unwrap(),
            Path::new("a/b.txt")
        );
    }
}
