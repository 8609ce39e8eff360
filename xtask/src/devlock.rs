//! One run per device: the Rust form of the spec's `scripts/devlock.sh`.
//!
//! Each device serial has a lock file in a shared folder (`$PHONELOGS_DEVLOCK_DIR`, else
//! `phonelogs-devlock` in the system's temporary folder). A run holds an exclusive advisory lock
//! on it (`flock` on Unix) for as long as it uses the device, so a second run on the same device
//! stops at once with the holder's pid instead of installing over the first run's app. The
//! operating system drops the lock when the process ends, however it ends, so a crashed run never
//! leaves a stale lock behind.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// A held lock on one device; dropping it lets the next run in.
#[derive(Debug)]
pub struct DeviceLock {
    // Held only for its lock: closing the file releases it.
    _file: File,
    path: PathBuf,
}

impl DeviceLock {
    /// The folder lock files live in.
    pub fn default_dir() -> PathBuf {
        std::env::var_os("PHONELOGS_DEVLOCK_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| std::env::temp_dir().join("phonelogs-devlock"))
    }

    /// Takes the lock for `serial` in `dir`, or fails at once, naming the run that holds it.
    pub fn acquire(dir: &Path, serial: &str) -> Result<Self> {
        fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the lock folder {}", dir.display()))?;
        let path = dir.join(format!("{}.lock", file_name_for(serial)));
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .with_context(|| format!("cannot open the lock file {}", path.display()))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                let holder = if holder.is_empty() {
                    "an unknown process"
                } else {
                    holder
                };
                bail!(
                    "device {serial} is in use by another run ({holder}); lock file {}",
                    path.display()
                );
            }
            Err(TryLockError::Error(error)) => {
                return Err(error).with_context(|| format!("cannot lock {}", path.display()));
            }
        }
        // Record who holds the lock, for the message a second run prints.
        let note = format!("pid {}, cargo xtask emulator-test", std::process::id());
        file.set_len(0)
            .and_then(|()| file.seek(SeekFrom::Start(0)))
            .and_then(|_| file.write_all(note.as_bytes()))
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(Self { _file: file, path })
    }

    /// The lock file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// A serial as a file name: `emulator-5554` stays, `127.0.0.1:5555` becomes `127.0.0.1_5555`.
fn file_name_for(serial: &str) -> String {
    serial
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("xtask-devlock-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_second_run_on_the_same_device_is_refused_until_the_first_ends() {
        let dir = temp_dir("same");
        let first = DeviceLock::acquire(&dir, "emulator-5554").unwrap();
        let error = DeviceLock::acquire(&dir, "emulator-5554").unwrap_err();
        let message = error.to_string();
        assert!(message.contains("in use by another run"), "{message}");
        assert!(
            message.contains(&format!("pid {}", std::process::id())),
            "{message}"
        );
        drop(first);
        DeviceLock::acquire(&dir, "emulator-5554").unwrap();
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn different_devices_do_not_block_each_other() {
        let dir = temp_dir("different");
        let first = DeviceLock::acquire(&dir, "emulator-5554").unwrap();
        let second = DeviceLock::acquire(&dir, "127.0.0.1:5555").unwrap();
        assert_ne!(first.path(), second.path());
        assert!(second.path().ends_with("127.0.0.1_5555.lock"));
        let _ = fs::remove_dir_all(&dir);
    }
}
