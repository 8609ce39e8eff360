//! R8/ProGuard deobfuscation of Java and Kotlin stack text, through Sentry's `proguard` crate
//! and its on-disk cache format.
//!
//! A mapping is read once per process: from its cache when one with the same key exists (the
//! mapping's size, modification time and XXH3 hash, and the cache format's version), else parsed
//! and written to a cache for the next process. The walker here, not `proguard`'s own
//! `remap_stacktrace`, goes over the text, because it must keep what stands before a frame on
//! its line (logcat's `date pid tid E AndroidRuntime: ` prefix, an ANR trace's indent) and must
//! only touch exception lines that head a trace.

use std::collections::HashMap;
use std::hash::Hasher as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use proguard::{ProguardCache, ProguardMapping, StackFrame, Throwable};

use crate::Error;

/// A mapping, read once per process. With a cache file it holds `proguard`'s cache (8-byte
/// aligned, as its zero-copy reader needs). Without one it holds the mapping's text and an index
/// of its class sections, and deobfuscates from the sections a trace names (parsing a whole
/// large mapping takes seconds; see `docs/symbols.md`), until [`Mapping::build_cache`] has
/// built and written the full cache.
pub struct Mapping {
    cached: OnceLock<CacheBytes>,
    indexed: Option<Indexed>,
    key: Option<String>,
    cache_file: Mutex<Option<PathBuf>>,
    /// Where the mapping was read from, when it came from a file.
    pub source: Option<PathBuf>,
}

struct CacheBytes {
    bytes: Vec<u8>,
    start: usize,
    len: usize,
}

impl CacheBytes {
    fn new(cache: &[u8]) -> Result<CacheBytes, Error> {
        // Copies into a buffer at an 8-byte aligned offset: the cache's zero-copy reader
        // refuses unaligned data, and a `Vec<u8>`'s alignment is not promised.
        let mut bytes = vec![0u8; cache.len() + 8];
        let start = bytes.as_ptr().align_offset(8).min(8);
        bytes[start..start + cache.len()].copy_from_slice(cache);
        let out = CacheBytes {
            bytes,
            start,
            len: cache.len(),
        };
        out.cache().map_err(|e| {
            Error::io(
                "<mapping cache>",
                std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()),
            )
        })?;
        Ok(out)
    }

    fn build(mapping: &[u8]) -> Result<CacheBytes, Error> {
        let mut out = Vec::new();
        ProguardCache::write(&ProguardMapping::new(mapping), &mut out)
            .map_err(|e| Error::io("<mapping>", e))?;
        CacheBytes::new(&out)
    }

    fn raw(&self) -> &[u8] {
        &self.bytes[self.start..self.start + self.len]
    }

    fn cache(&self) -> Result<ProguardCache<'_>, proguard::CacheError> {
        ProguardCache::parse(self.raw())
    }
}

/// The mapping's text and where each class's section is, by obfuscated and by original name.
struct Indexed {
    text: Vec<u8>,
    preamble_end: usize,
    by_obfuscated: HashMap<String, (usize, usize)>,
    by_original: HashMap<String, (usize, usize)>,
}

impl Indexed {
    /// Finds every class line (`original -> obfuscated:` at the start of a line); a section runs
    /// to the next class line. Hand-written because `proguard` parses whole records, which is
    /// what this index exists to avoid.
    fn new(text: Vec<u8>) -> Indexed {
        let mut classes: Vec<(String, String, usize)> = Vec::new();
        let mut at = 0;
        while at < text.len() {
            let end = memchr::memchr(b'\n', &text[at..]).map_or(text.len(), |i| at + i);
            let line = &text[at..end];
            if let Some(&first) = line.first()
                && !matches!(first, b' ' | b'\t' | b'#')
                && let Ok(line) = std::str::from_utf8(line)
                && let Some(line) = line.trim_end().strip_suffix(':')
                && let Some((original, obfuscated)) = line.split_once(" -> ")
            {
                classes.push((original.trim().to_owned(), obfuscated.trim().to_owned(), at));
            }
            at = end + 1;
        }
        let preamble_end = classes.first().map_or(text.len(), |c| c.2);
        let mut by_obfuscated = HashMap::with_capacity(classes.len());
        let mut by_original = HashMap::with_capacity(classes.len());
        for (i, (original, obfuscated, start)) in classes.iter().enumerate() {
            let end = classes.get(i + 1).map_or(text.len(), |next| next.2);
            by_obfuscated
                .entry(obfuscated.clone())
                .or_insert((*start, end));
            by_original.entry(original.clone()).or_insert((*start, end));
        }
        Indexed {
            text,
            preamble_end,
            by_obfuscated,
            by_original,
        }
    }

    /// The preamble and the sections of the classes `text` names (every token that may be a
    /// class), and of the original classes their lines inline, in file order.
    fn subset(&self, text: &str) -> Vec<u8> {
        let mut ranges: Vec<(usize, usize)> = text
            .split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | ':' | '"' | ','))
            .flat_map(|token| {
                let class = token.rsplit_once('.').map_or(token, |(class, _)| class);
                [token, class]
            })
            .filter_map(|token| self.by_obfuscated.get(token).copied())
            .collect();
        let mut inlined = Vec::new();
        for &(start, end) in &ranges {
            let section = String::from_utf8_lossy(&self.text[start..end]);
            for line in section.lines().skip(1) {
                let Some(head) = line.split('(').next() else {
                    continue;
                };
                let name = head.rsplit(' ').next().unwrap_or(head);
                if let Some((class, _method)) = name.rsplit_once('.')
                    && let Some(range) = self.by_original.get(class)
                {
                    inlined.push(*range);
                }
            }
        }
        ranges.extend(inlined);
        ranges.sort_unstable();
        ranges.dedup();
        let mut out = self.text[..self.preamble_end].to_vec();
        if !out.is_empty() && !out.ends_with(b"\n") {
            out.push(b'\n');
        }
        for (start, end) in ranges {
            out.extend_from_slice(&self.text[start..end]);
            if !out.ends_with(b"\n") {
                out.push(b'\n');
            }
        }
        out
    }
}

impl std::fmt::Debug for Mapping {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mapping")
            .field("source", &self.source)
            .field("cached", &self.cached.get().is_some())
            .field("cache_file", &self.cache_file())
            .finish()
    }
}

/// How many frames and exception lines a deobfuscation changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JavaStats {
    /// Frame lines that the mapping knew.
    pub frames_mapped: usize,
    /// Frame lines it did not know (kept as they were).
    pub frames_unmapped: usize,
    /// Exception class names it renamed.
    pub exceptions_mapped: usize,
}

impl Mapping {
    /// Reads a mapping from bytes, parsing it whole (no cache file): hostile bytes give a
    /// mapping that maps nothing, never a panic.
    pub fn from_bytes(mapping: &[u8]) -> Result<Mapping, Error> {
        let cached = OnceLock::new();
        let _ = cached.set(CacheBytes::build(mapping)?);
        Ok(Mapping {
            cached,
            indexed: None,
            key: None,
            cache_file: Mutex::new(None),
            source: None,
        })
    }

    /// Reads the mapping at `path`: from its cache in one of `cache_dirs` when there is one
    /// (named after the mapping's size, modification time and hash), else indexed, to be
    /// deobfuscated from its sections until [`Mapping::build_cache`] runs.
    pub fn load(path: &Path, cache_dirs: &[PathBuf]) -> Result<Mapping, Error> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
        let key = cache_key(&bytes, &meta);
        for dir in cache_dirs {
            let file = dir.join(&key);
            if let Ok(cached) = std::fs::read(&file)
                && let Ok(cached) = CacheBytes::new(&cached)
            {
                tracing::debug!(cache = %file.display(), "mapping read from its cache");
                let cell = OnceLock::new();
                let _ = cell.set(cached);
                return Ok(Mapping {
                    cached: cell,
                    indexed: None,
                    key: Some(key),
                    cache_file: Mutex::new(Some(file)),
                    source: Some(path.to_owned()),
                });
            }
        }
        Ok(Mapping {
            cached: OnceLock::new(),
            indexed: Some(Indexed::new(bytes)),
            key: Some(key),
            cache_file: Mutex::new(None),
            source: Some(path.to_owned()),
        })
    }

    /// Parses the whole mapping, writes its cache in the first of `cache_dirs` that takes it,
    /// and uses it from then on. Does nothing when the cache is already there. Slow for a large
    /// mapping (seconds): `SymbolsDir` runs it on a thread of its own.
    pub fn build_cache(&self, cache_dirs: &[PathBuf]) -> Result<(), Error> {
        if self.cached.get().is_some() {
            return Ok(());
        }
        let Some(indexed) = &self.indexed else {
            return Ok(());
        };
        let built = CacheBytes::build(&indexed.text)?;
        if let Some(key) = &self.key {
            for dir in cache_dirs {
                match write_cache(dir, key, built.raw()) {
                    Ok(file) => {
                        *lock(&self.cache_file) = Some(file);
                        break;
                    }
                    Err(error) => tracing::debug!(%error, "cannot write a mapping cache there"),
                }
            }
        }
        let _ = self.cached.set(built);
        Ok(())
    }

    /// The cache file that was read or written, when one was.
    pub fn cache_file(&self) -> Option<PathBuf> {
        lock(&self.cache_file).clone()
    }

    /// Whether the whole mapping's cache is in use (else its sections are).
    pub fn is_cached(&self) -> bool {
        self.cached.get().is_some()
    }

    /// Renames the original class of an obfuscated one, when the mapping knows it.
    pub fn remap_class(&self, class: &str) -> Option<String> {
        self.with_cache(class, |cache| cache.remap_class(class).map(str::to_owned))
            .flatten()
    }

    /// Deobfuscates every stack frame and every exception line heading a trace in `text`,
    /// keeping each line's prefix; other lines are kept as they are.
    pub fn deobfuscate(&self, text: &str) -> (String, JavaStats) {
        self.with_cache(text, |cache| deobfuscate_with(cache, text))
            .unwrap_or_else(|| (text.to_owned(), JavaStats::default()))
    }

    /// Runs `f` on the whole cache, or on a cache of the sections `text` needs.
    fn with_cache<T>(&self, text: &str, f: impl FnOnce(&ProguardCache<'_>) -> T) -> Option<T> {
        if let Some(cached) = self.cached.get() {
            return cached.cache().ok().map(|cache| f(&cache));
        }
        let subset = CacheBytes::build(&self.indexed.as_ref()?.subset(text)).ok()?;
        subset.cache().ok().map(|cache| f(&cache))
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn deobfuscate_with(cache: &ProguardCache<'_>, text: &str) -> (String, JavaStats) {
    let mut stats = JavaStats::default();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    let mut outline_pos = None;
    let mut descriptor: Option<String> = None;
    for (index, raw) in lines.iter().enumerate() {
        let (line, ending) = split_ending(raw);
        if let Some((prefix, frame)) = find_frame(line) {
            let rewrite = descriptor.is_some();
            let Some(iter) = cache.remap_frame_with_context(
                &frame,
                descriptor.as_deref(),
                rewrite,
                &mut outline_pos,
            ) else {
                // An R8 outline frame: retrace drops it and moves its position on.
                stats.frames_mapped += 1;
                continue;
            };
            descriptor = None;
            let had_mappings = iter.had_mappings();
            let frames: Vec<StackFrame<'_>> = iter.collect();
            if frames.is_empty() {
                if had_mappings {
                    // A rewrite rule removed this frame.
                    stats.frames_mapped += 1;
                    continue;
                }
                stats.frames_unmapped += 1;
                out.push_str(raw);
                continue;
            }
            stats.frames_mapped += 1;
            for frame in frames {
                out.push_str(prefix);
                out.push_str(&frame.to_string());
                out.push_str(if ending.is_empty() { "\n" } else { ending });
            }
            if ending.is_empty() && out.ends_with('\n') {
                out.pop();
            }
            continue;
        }
        let heads_trace = line.contains("Caused by: ")
            || lines
                .get(index + 1)
                .is_some_and(|next| find_frame(split_ending(next).0).is_some());
        if heads_trace && let Some((at, class, mapped)) = find_throwable(cache, line) {
            descriptor = Some(proguard::class_name_to_descriptor(
                mapped.as_deref().unwrap_or(class),
            ));
            if let Some(mapped) = mapped {
                stats.exceptions_mapped += 1;
                out.push_str(&line[..at]);
                out.push_str(&mapped);
                out.push_str(&line[at + class.len()..]);
                out.push_str(ending);
                continue;
            }
        } else {
            descriptor = None;
        }
        out.push_str(raw);
    }
    (out, stats)
}

fn split_ending(raw: &str) -> (&str, &str) {
    let line = raw.trim_end_matches(['\n', '\r']);
    (line, &raw[line.len()..])
}

/// Finds a Java frame (`at a.b.c(SourceFile:12)`) at the end of a line, after a prefix that
/// ends in whitespace (or is empty).
pub(crate) fn find_frame(line: &str) -> Option<(&str, StackFrame<'_>)> {
    let trimmed = line.trim_end();
    if !trimmed.ends_with(')') {
        return None;
    }
    let mut search = 0;
    while let Some(found) = trimmed[search..].find("at ") {
        let at = search + found;
        let boundary = at == 0 || trimmed[..at].ends_with(char::is_whitespace);
        if boundary && let Some(frame) = StackFrame::try_parse(&trimmed.as_bytes()[at..]) {
            if frame.class().is_empty() || frame.method().is_empty() {
                return None;
            }
            return Some((&line[..at], frame));
        }
        search = at + 3;
    }
    None
}

/// Finds the exception class on a line heading a trace: the first token (at the line's start,
/// after whitespace or after `": "`) that looks like a class name and is followed by `": "` or
/// the line's end. Returns its byte offset, the token and its original name when mapped.
fn find_throwable<'l>(
    cache: &ProguardCache<'_>,
    line: &'l str,
) -> Option<(usize, &'l str, Option<String>)> {
    let mut first_plausible = None;
    let starts = std::iter::once(0).chain(
        line.char_indices()
            .filter(|(_, c)| c.is_whitespace())
            .map(|(i, c)| i + c.len_utf8()),
    );
    for start in starts {
        let rest = &line[start..];
        let token = rest.split(": ").next().unwrap_or(rest);
        if token.is_empty() || token.contains(char::is_whitespace) || !looks_like_class(token) {
            continue;
        }
        let Some(throwable) = Throwable::try_parse(rest.as_bytes()) else {
            continue;
        };
        if throwable.class() != token {
            continue;
        }
        if let Some(mapped) = cache.remap_class(token) {
            return Some((start, token, Some(mapped.to_owned())));
        }
        if first_plausible.is_none() && token.contains('.') {
            first_plausible = Some((start, token));
        }
    }
    first_plausible.map(|(start, token)| (start, token, None))
}

fn looks_like_class(token: &str) -> bool {
    token
        .chars()
        .all(|c| c.is_alphanumeric() || matches!(c, '.' | '$' | '_'))
        && !token.starts_with('.')
        && !token.ends_with('.')
        && token.chars().next().is_some_and(|c| !c.is_ascii_digit())
}

/// The cache file name: the mapping's size, modification time and XXH3 hash, and the cache
/// format's version, so that a changed mapping or a newer `proguard` never reads a stale cache.
fn cache_key(bytes: &[u8], meta: &std::fs::Metadata) -> String {
    let mut hasher = twox_hash::XxHash3_64::default();
    hasher.write(bytes);
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    format!(
        "mapping-v{}-{}-{mtime}-{:016x}.prgcache",
        proguard::PRGCACHE_VERSION,
        bytes.len(),
        hasher.finish()
    )
}

/// Writes a cache file atomically (a private temporary file, then a rename), mode 0600.
fn write_cache(dir: &Path, key: &str, bytes: &[u8]) -> Result<PathBuf, Error> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let target = dir.join(key);
    let tmp = dir.join(format!(".{key}.{}.tmp", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let result = options
        .open(&tmp)
        .and_then(|mut file| file.write_all(bytes).and_then(|()| file.sync_all()))
        .and_then(|()| std::fs::rename(&tmp, &target));
    if let Err(error) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io(&target, error));
    }
    Ok(target)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    // The mapping ProGuard 6.2.2 wrote for crashtest/obfuscated (see testdata/README.md).
    const MAPPING: &str = include_str!("../../../testdata/symbols/proguard-6.2.2/mapping.txt");

    #[test]
    fn keeps_prefixes_and_expands_inlined_frames() {
        let mapping = Mapping::from_bytes(MAPPING.as_bytes()).unwrap();
        let text = "05-20 08:02:10.572 10127 23031 23031 E AndroidRuntime: java.lang.IllegalStateException: Crash button tapped\n\
05-20 08:02:10.572 10127 23031 23031 E AndroidRuntime: \tat dev.phonelogs.crashtest.jvm.a.a(SourceFile:1047)\n\
05-20 08:02:10.572 10127 23031 23031 E AndroidRuntime: \tat dev.phonelogs.crashtest.jvm.c.a(SourceFile:22)\n";
        let (out, stats) = mapping.deobfuscate(text);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 4, "{out}");
        assert!(
            lines[1].ends_with(
                "E AndroidRuntime: \tat dev.phonelogs.crashtest.jvm.Cart.tapped(Cart.java:47)"
            ),
            "{out}"
        );
        assert!(
            lines[2].ends_with("\tat dev.phonelogs.crashtest.jvm.Cart.validate(Cart.java:37)"),
            "{out}"
        );
        assert!(
            lines[3]
                .ends_with("\tat dev.phonelogs.crashtest.jvm.Checkout.resume(Checkout.java:22)"),
            "{out}"
        );
        assert_eq!(stats.frames_mapped, 2);
    }

    #[test]
    fn renames_an_obfuscated_exception_only_before_frames() {
        let mapping = Mapping::from_bytes(MAPPING.as_bytes()).unwrap();
        let text = "dev.phonelogs.crashtest.jvm.b: negative total -1\n\tat dev.phonelogs.crashtest.jvm.a.a(SourceFile:1041)\nI/app: dev.phonelogs.crashtest.jvm.b: a log line\n";
        let (out, stats) = mapping.deobfuscate(text);
        assert!(
            out.starts_with("dev.phonelogs.crashtest.jvm.CartException: negative total -1\n"),
            "{out}"
        );
        assert!(
            out.ends_with("I/app: dev.phonelogs.crashtest.jvm.b: a log line\n"),
            "{out}"
        );
        assert_eq!(stats.exceptions_mapped, 1);
    }

    #[test]
    fn sections_give_what_the_whole_mapping_gives() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mapping.txt");
        std::fs::write(&path, MAPPING).unwrap();
        let indexed = Mapping::load(&path, &[]).unwrap();
        assert!(!indexed.is_cached());
        let whole = Mapping::from_bytes(MAPPING.as_bytes()).unwrap();
        for trace in [
            include_str!("../../../testdata/symbols/proguard-6.2.2/trace-button.txt"),
            include_str!("../../../testdata/symbols/proguard-6.2.2/trace-total.txt"),
        ] {
            assert_eq!(indexed.deobfuscate(trace), whole.deobfuscate(trace));
        }
        // R8's sourceFile metadata of an inlined class is found through its original name.
        let r8 =
            include_str!("../../../testdata/symbols/r8/inline-source-file-context/mapping.txt");
        std::fs::write(&path, r8).unwrap();
        let indexed = Mapping::load(&path, &[]).unwrap();
        let trace =
            include_str!("../../../testdata/symbols/r8/inline-source-file-context/obfuscated.txt");
        let (out, _) = indexed.deobfuscate(trace);
        assert!(
            out.contains("KotlinJavaSourceFileTestLibrary.kt:22"),
            "{out}"
        );
        assert_eq!(
            out,
            Mapping::from_bytes(r8.as_bytes())
                .unwrap()
                .deobfuscate(trace)
                .0
        );
    }

    #[test]
    fn unknown_frames_and_other_lines_stay() {
        let mapping = Mapping::from_bytes(MAPPING.as_bytes()).unwrap();
        let text = "\tat android.os.Handler.dispatchMessage(Handler.java:106)\nhello (world)\n  - locked <0x0ab1> (a java.lang.Object)\n";
        let (out, _) = mapping.deobfuscate(text);
        assert_eq!(out, text);
    }
}
