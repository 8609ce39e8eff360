//! The symbols directory: `DIR/<package or bundle id>/<versionCode or CFBundleVersion>/`
//! holding `mapping.txt`, unstripped `.so` files and `.dSYM` bundles; what is there for an
//! app's version, and `add`, which files a symbol file in its place.
//!
//! `add` files a mapping as `<version>/mapping.txt`, a `.so` as
//! `<version>/native/<build id>/<name>.so` and a `.dSYM` bundle as
//! `<version>/<name>.dSYM/…`; `.so` files and `.dSYM` bundles placed by hand anywhere under a
//! version folder are found too (by reading their ids).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::Error;
use crate::java::Mapping;
use crate::native::{DebugFile, file_ids};

/// The most files looked at under one app's folder, so a huge tree cannot stall a lookup.
const MAX_FILES: usize = 10_000;
/// How deep below an app's folder the index looks.
const MAX_DEPTH: usize = 8;

/// Which kind of symbol file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SymbolKind {
    /// An R8/ProGuard `mapping.txt`.
    Mapping,
    /// An unstripped ELF shared library.
    Elf,
    /// A `.dSYM` bundle's DWARF file.
    Dsym,
}

/// One debug file found under an app's folder.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DebugEntry {
    /// ELF or dSYM.
    pub kind: SymbolKind,
    /// The version folder it is in.
    pub version: String,
    /// Its GNU build id or UUID (lower-case hex).
    pub id: String,
    /// Its file name (`libfoo.so`, or the dSYM's DWARF file's name).
    pub name: String,
    /// Its path.
    pub path: PathBuf,
}

/// What one app's version folder holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Inventory {
    /// The mapping, when there is one.
    pub mapping: Option<PathBuf>,
    /// The debug files.
    pub debug_files: Vec<DebugEntry>,
}

/// An open symbols directory. Parsed mappings and debug files are kept for the life of the
/// value, so the second lookup in a process is warm.
#[derive(Debug)]
pub struct SymbolsDir {
    root: PathBuf,
    mappings: Mutex<HashMap<PathBuf, Arc<Mapping>>>,
    /// Each behind its own lock: `addr2line`'s context fills its caches lazily, so it is
    /// `Send` but not `Sync`.
    debug_files: Mutex<HashMap<PathBuf, Arc<Mutex<DebugFile>>>>,
    indexes: Mutex<HashMap<String, Arc<Vec<DebugEntry>>>>,
    builders: Mutex<Vec<std::thread::JoinHandle<()>>>,
    cache_dirs: Vec<PathBuf>,
}

impl SymbolsDir {
    /// Opens a symbols directory (it must exist). Mapping caches go under
    /// `DIR/.cache/` when it is writable, else `$XDG_CACHE_HOME/phonelogs/symbols` (or
    /// `~/.cache/phonelogs/symbols`).
    pub fn open(root: impl Into<PathBuf>) -> Result<SymbolsDir, Error> {
        let root = root.into();
        if !root.is_dir() {
            return Err(Error::NotADirectory(root));
        }
        let mut cache_dirs = vec![root.join(".cache")];
        cache_dirs.extend(user_cache_dir());
        Ok(SymbolsDir {
            root,
            mappings: Mutex::default(),
            debug_files: Mutex::default(),
            indexes: Mutex::default(),
            builders: Mutex::default(),
            cache_dirs,
        })
    }

    /// Uses these cache directories instead of the default ones (tests, benchmarks).
    pub fn with_cache_dirs(mut self, dirs: Vec<PathBuf>) -> SymbolsDir {
        self.cache_dirs = dirs;
        self
    }

    /// The directory's path.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The apps with a folder here, sorted.
    pub fn apps(&self) -> Vec<String> {
        list_dirs(&self.root)
    }

    /// The version folders of one app, sorted (numerically when they are numbers).
    pub fn versions(&self, app: &str) -> Vec<String> {
        if check_component("app", app).is_err() {
            return Vec::new();
        }
        let mut versions = list_dirs(&self.root.join(app));
        versions.sort_by(|a, b| match (a.parse::<u64>(), b.parse::<u64>()) {
            (Ok(x), Ok(y)) => x.cmp(&y),
            _ => a.cmp(b),
        });
        versions
    }

    /// What one app's version folder holds.
    pub fn inventory(&self, app: &str, version: &str) -> Inventory {
        if check_component("app", app).is_err() || check_component("version", version).is_err() {
            return Inventory::default();
        }
        let folder = self.root.join(app).join(version);
        let mapping = Some(folder.join("mapping.txt")).filter(|p| p.is_file());
        let debug_files = self
            .index(app)
            .iter()
            .filter(|e| e.version == version)
            .cloned()
            .collect();
        Inventory {
            mapping,
            debug_files,
        }
    }

    /// The path of an app version's mapping, when there is one.
    pub(crate) fn mapping_path(&self, app: &str, version: &str) -> Option<PathBuf> {
        check_component("app", app).ok()?;
        check_component("version", version).ok()?;
        Some(self.root.join(app).join(version).join("mapping.txt")).filter(|p| p.is_file())
    }

    /// The mapping at `path`, read once per process: from its cache, or indexed while a
    /// thread of its own builds and writes the cache (see [`SymbolsDir::wait_for_caches`]).
    pub(crate) fn mapping(&self, path: &Path) -> Result<Arc<Mapping>, Error> {
        if let Some(mapping) = lock(&self.mappings).get(path) {
            return Ok(mapping.clone());
        }
        let mapping = Arc::new(Mapping::load(path, &self.cache_dirs)?);
        if !mapping.is_cached() {
            let building = mapping.clone();
            let dirs = self.cache_dirs.clone();
            let spawned = std::thread::Builder::new()
                .name("mapping-cache".into())
                .spawn(move || {
                    if let Err(error) = building.build_cache(&dirs) {
                        tracing::warn!(%error, "cannot build the mapping's cache");
                    }
                });
            match spawned {
                Ok(handle) => lock(&self.builders).push(handle),
                Err(error) => tracing::warn!(%error, "cannot start the mapping cache's thread"),
            }
        }
        lock(&self.mappings).insert(path.to_owned(), mapping.clone());
        Ok(mapping)
    }

    /// Waits until every mapping cache this value started building is written (a command
    /// that exits right after its answer calls it, so the next run starts warm).
    pub fn wait_for_caches(&self) {
        let handles: Vec<_> = lock(&self.builders).drain(..).collect();
        for handle in handles {
            let _ = handle.join();
        }
    }

    /// The debug file at `path`, parsed once per process.
    pub(crate) fn debug_file(
        &self,
        path: &Path,
        want_id: &str,
    ) -> Result<Arc<Mutex<DebugFile>>, crate::native::ParseError> {
        if let Some(file) = lock(&self.debug_files).get(path) {
            return Ok(file.clone());
        }
        let bytes = std::fs::read(path).map_err(|e| crate::native::ParseError(e.to_string()))?;
        let mut file = DebugFile::parse(&bytes, Some(want_id))?;
        file.path = path.to_owned();
        let file = Arc::new(Mutex::new(file));
        lock(&self.debug_files).insert(path.to_owned(), file.clone());
        Ok(file)
    }

    /// Every debug file under one app's folder (any version), read once per process.
    pub fn index(&self, app: &str) -> Arc<Vec<DebugEntry>> {
        if let Some(index) = lock(&self.indexes).get(app) {
            return index.clone();
        }
        let mut entries = Vec::new();
        if check_component("app", app).is_ok() {
            for version in self.versions(app) {
                let folder = self.root.join(app).join(&version);
                let mut seen = 0usize;
                walk(&folder, 0, &mut seen, &mut |path| {
                    entries.extend(debug_entries(path, &version));
                });
            }
        }
        let index = Arc::new(entries);
        lock(&self.indexes).insert(app.to_owned(), index.clone());
        index
    }

    /// Files `file` for `app` and `version`: a mapping (by its name or contents) as
    /// `mapping.txt`, an ELF by its GNU build id, a `.dSYM` bundle as it is. Returns where it
    /// went. Refuses names that are not one safe path component, files it does not recognise,
    /// and a different file already at the same place.
    pub fn add(&self, app: &str, version: &str, file: &Path) -> Result<PathBuf, Error> {
        check_component("app", app)?;
        check_component("version", version)?;
        let folder = self.root.join(app).join(version);
        if file.is_dir() {
            return self.add_dsym(&folder, file);
        }
        let bytes = std::fs::read(file).map_err(|e| Error::io(file, e))?;
        let name = file_name(file)?;
        if bytes.starts_with(b"\x7fELF") {
            let ids = file_ids(&bytes);
            let Some(id) = ids.first() else {
                return Err(Error::UnknownSymbolFile {
                    path: file.to_owned(),
                    reason: "an ELF file without a GNU build id (link with --build-id)".into(),
                });
            };
            let target = folder.join("native").join(id).join(name);
            return place(&bytes, &target);
        }
        // A mapping is text with at least one class line (`a.B -> c:`), whatever its name.
        let looks_like_mapping = std::str::from_utf8(&bytes).is_ok()
            && proguard::ProguardMapping::new(&bytes)
                .summary()
                .class_count()
                > 0;
        if looks_like_mapping {
            return place(&bytes, &folder.join("mapping.txt"));
        }
        Err(Error::UnknownSymbolFile {
            path: file.to_owned(),
            reason: "not an R8/ProGuard mapping, an ELF file or a .dSYM bundle".into(),
        })
    }

    fn add_dsym(&self, folder: &Path, bundle: &Path) -> Result<PathBuf, Error> {
        let name = file_name(bundle)?;
        if !name.ends_with(".dSYM") {
            return Err(Error::UnknownSymbolFile {
                path: bundle.to_owned(),
                reason: "a directory that is not a .dSYM bundle".into(),
            });
        }
        let dwarf_dir = bundle.join("Contents").join("Resources").join("DWARF");
        let entries = std::fs::read_dir(&dwarf_dir).map_err(|e| Error::io(&dwarf_dir, e))?;
        let target_dir = folder
            .join(name)
            .join("Contents")
            .join("Resources")
            .join("DWARF");
        let mut copied = 0usize;
        for entry in entries.flatten() {
            let path = entry.path();
            if !path.is_file() {
                continue;
            }
            let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
            if file_ids(&bytes).is_empty() {
                continue;
            }
            place(&bytes, &target_dir.join(file_name(&path)?))?;
            copied += 1;
        }
        if copied == 0 {
            return Err(Error::UnknownSymbolFile {
                path: bundle.to_owned(),
                reason: "a .dSYM bundle without a Mach-O DWARF file with a UUID".into(),
            });
        }
        let info = bundle.join("Contents").join("Info.plist");
        if let Ok(bytes) = std::fs::read(&info) {
            place(
                &bytes,
                &folder.join(name).join("Contents").join("Info.plist"),
            )?;
        }
        Ok(folder.join(name))
    }
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn user_cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))?;
    Some(base.join("phonelogs").join("symbols"))
}

/// Refuses anything that is not one plain path component: empty, `.`, `..`, a leading dot, a
/// separator, or a character outside `A-Za-z0-9._-` (app ids, version codes and
/// `CFBundleVersion`s need no more).
pub fn check_component(what: &'static str, value: &str) -> Result<(), Error> {
    let refuse = |reason| {
        Err(Error::UnsafeName {
            what,
            value: value.to_owned(),
            reason,
        })
    };
    if value.is_empty() || value.len() > 255 {
        return refuse("empty or longer than 255 bytes");
    }
    if value.starts_with('.') {
        return refuse("starts with a dot");
    }
    if !value
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    {
        return refuse("only letters, digits, '.', '_' and '-' are allowed");
    }
    Ok(())
}

fn file_name(path: &Path) -> Result<&str, Error> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    check_component("file name", name)?;
    Ok(name)
}

/// Writes `bytes` at `target` (creating its folders), unless the same bytes are already there;
/// refuses a different file in the way.
fn place(bytes: &[u8], target: &Path) -> Result<PathBuf, Error> {
    if let Ok(existing) = std::fs::read(target) {
        if existing == bytes {
            return Ok(target.to_owned());
        }
        return Err(Error::AlreadyThere(target.to_owned()));
    }
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    use std::io::Write as _;
    options
        .open(target)
        .and_then(|mut file| file.write_all(bytes))
        .map_err(|e| Error::io(target, e))?;
    Ok(target.to_owned())
}

fn list_dirs(path: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(path) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| check_component("name", name).is_ok())
        .collect();
    names.sort();
    names
}

/// Visits regular files below `dir` (no symlinked folders, bounded depth and count).
fn walk(dir: &Path, depth: usize, seen: &mut usize, visit: &mut dyn FnMut(&Path)) {
    if depth > MAX_DEPTH {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if *seen >= MAX_FILES {
            return;
        }
        *seen += 1;
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if kind.is_dir() {
            if entry.file_name() != ".cache" {
                walk(&path, depth + 1, seen, visit);
            }
        } else if kind.is_file() {
            visit(&path);
        }
    }
}

/// The debug entries of one file: an ELF `.so` by its build id (taken from its
/// `native/<id>/` folder when `add` filed it, checked again when it is loaded), or a dSYM's
/// DWARF file by its UUIDs.
fn debug_entries(path: &Path, version: &str) -> Vec<DebugEntry> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_owned();
    let in_dsym = path
        .components()
        .any(|c| c.as_os_str().to_str().is_some_and(|s| s.ends_with(".dSYM")));
    let is_so = name.ends_with(".so") || name.contains(".so.");
    if in_dsym {
        if path
            .parent()
            .and_then(Path::file_name)
            .and_then(|n| n.to_str())
            != Some("DWARF")
        {
            return Vec::new();
        }
    } else if !is_so {
        return Vec::new();
    }
    let filed_id = path
        .parent()
        .filter(|p| {
            p.parent()
                .and_then(Path::file_name)
                .and_then(|n| n.to_str())
                == Some("native")
        })
        .and_then(Path::file_name)
        .and_then(|n| n.to_str())
        .filter(|id| id.bytes().all(|b| b.is_ascii_hexdigit()))
        .map(str::to_owned);
    let ids = match filed_id {
        Some(id) if !in_dsym => vec![id],
        _ => std::fs::read(path)
            .map(|bytes| file_ids(&bytes))
            .unwrap_or_default(),
    };
    let kind = if in_dsym {
        SymbolKind::Dsym
    } else {
        SymbolKind::Elf
    };
    ids.into_iter()
        .map(|id| DebugEntry {
            kind,
            version: version.to_owned(),
            id,
            name: name.clone(),
            path: path.to_owned(),
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_symbols_dir_can_be_shared_between_threads() {
        fn shared<T: Send + Sync>() {}
        shared::<SymbolsDir>();
    }

    #[test]
    fn hostile_names_are_refused() {
        for bad in ["", ".", "..", "../x", "a/b", ".hidden", "a b", "a\0b", "ä"] {
            assert!(check_component("app", bad).is_err(), "{bad:?}");
        }
        for good in ["com.example.app", "42", "1.0.3-beta_2"] {
            check_component("app", good).unwrap();
        }
    }

    #[test]
    fn add_files_a_mapping_and_refuses_another() {
        let dir = tempfile::tempdir().unwrap();
        let symbols = SymbolsDir::open(dir.path()).unwrap();
        let src = tempfile::tempdir().unwrap();
        let mapping = src.path().join("whatever.map");
        std::fs::write(&mapping, "a.B -> a:\n    void c() -> d\n").unwrap();
        let placed = symbols.add("com.example.app", "12", &mapping).unwrap();
        assert_eq!(placed, dir.path().join("com.example.app/12/mapping.txt"));
        // The same file again is fine; a different one is refused.
        symbols.add("com.example.app", "12", &mapping).unwrap();
        std::fs::write(&mapping, "x.Y -> b:\n").unwrap();
        assert!(matches!(
            symbols.add("com.example.app", "12", &mapping),
            Err(Error::AlreadyThere(_))
        ));
        assert!(symbols.add("../etc", "12", &mapping).is_err());
        assert!(symbols.add("com.example.app", "..", &mapping).is_err());
        let junk = src.path().join("junk.bin");
        std::fs::write(&junk, [0u8, 1, 2, 3]).unwrap();
        assert!(matches!(
            symbols.add("com.example.app", "12", &junk),
            Err(Error::UnknownSymbolFile { .. })
        ));
        assert_eq!(symbols.versions("com.example.app"), vec!["12".to_owned()]);
        assert!(symbols.inventory("com.example.app", "12").mapping.is_some());
    }
}
