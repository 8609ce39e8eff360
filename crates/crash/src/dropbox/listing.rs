//! What the listing (`dumpsys dropbox <tag>`, which no entry's text can forge) confirms of a
//! `--print` dump: the entries whose start it pins, a dump cut by dumpsys' timeout, and the
//! preview a listed text entry must agree with.

use super::headers::{ENTRY_SEPARATOR, EntryContents, read_entry_header_ref};
use super::scan::{DropBoxEntryRef, Scan, Scanned, line_at, next_separator, scan};

/// One entry of the listing `dumpsys dropbox <tag>` prints without `--print`.
///
/// AOSP `DropBoxManagerService.dump` prints each entry there as its header line and, for text,
/// one line of four spaces and a preview ([`dropbox_preview`]: the first 70 bytes of the text,
/// decoded, trimmed, each `\n` turned into `/`, and ` ...` when they were 70 UTF-16 units;
/// testdata/README.md cites the source). An entry's text therefore never starts a line of the listing, so no app can forge
/// an entry of it, as it can in `--print` output inside a `compressed text` entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListedEntry<'a> {
    /// The header line, `YYYY-MM-DD HH:MM:SS <tag> (<flags>, <N> bytes)`, as printed.
    pub header_line: &'a str,
    /// The preview line without its four spaces, when the entry has one.
    pub preview: Option<&'a str>,
}

/// The entries of a `dumpsys dropbox <tag>` listing, in its order (oldest first).
///
/// A header line starts at the line's first byte; a preview line starts with four spaces, so
/// text that looks like a header inside a preview is never read as one.
///
/// ```
/// use phonelogs_crash::dropbox::dropbox_listing;
/// let listing = "\
/// Drop box contents: 2 entries
/// Searching for: data_app_crash
///
/// 2026-11-30 10:00:00 data_app_crash (text, 98 bytes)
///     Process: com.example.app/PID: 4242/UID: 10127//2026-11-30 10:00:01 dat ...
/// 2026-11-30 10:00:09 data_app_crash (compressed text, 5120 bytes)
///     Process: com.example.other/PID: 5151/UID: 10300/Flags: 0x38c83e44/Package ...
/// ";
/// let entries = dropbox_listing(listing);
/// assert_eq!(entries.len(), 2);
/// assert_eq!(entries[1].header_line, "2026-11-30 10:00:09 data_app_crash (compressed text, 5120 bytes)");
/// ```
pub fn dropbox_listing(listing: &str) -> Vec<ListedEntry<'_>> {
    let mut entries: Vec<ListedEntry<'_>> = Vec::new();
    // Whether the line before was a header line, so this one may be its preview.
    let mut after_header = false;
    for line in listing.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.as_bytes().first().is_some_and(u8::is_ascii_digit)
            && read_entry_header_ref(line).is_some()
        {
            entries.push(ListedEntry {
                header_line: line,
                preview: None,
            });
            after_header = true;
            continue;
        }
        if after_header
            && let Some(preview) = line.strip_prefix("    ")
            && let Some(last) = entries.last_mut()
        {
            last.preview = Some(preview);
        }
        after_header = false;
    }
    entries
}

/// The entries of a tag's `--print` output that the listing of the same shell confirms, and
/// how many were left out; see [`checked_dropbox_entries`].
///
/// Only the trusted entries are kept: the others are counted as they are read, so another
/// app's compressed text full of forged separators costs no memory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckedEntries<'a> {
    /// The entries whose start is confirmed, in the dump's order (at most one per listed
    /// entry).
    pub trusted: Vec<DropBoxEntryRef<'a>>,
    /// How many entries were left out: they may have been written by another entry's text, so
    /// their headers and text are untrusted.
    pub untrusted: usize,
    /// How many of the left out the caller's test counted as claims (e.g. those that claim to
    /// be an app's): to be counted, never shown.
    pub claims: usize,
    /// Whether the listing or the print says dumpsys cut it short ([`DUMP_TIMEOUT`]).
    pub cut: bool,
}

impl CheckedEntries<'_> {
    /// How many entries were left out.
    pub fn untrusted_count(&self) -> usize {
        self.untrusted
    }
}

/// What `dumpsys` prints on its own line, after what it had read, when a service's dump runs
/// past its timeout (10 s unless `-t`/`-T` says otherwise): `*** SERVICE '<name>' DUMP TIMEOUT
/// (<n>ms) EXPIRED ***`, between line breaks. The rest of the dump is never printed, and
/// `dumpsys` still exits 0 (AOSP `frameworks/native/cmds/dumpsys/dumpsys.cpp`, `writeDump` and
/// `main`; testdata/README.md cites it).
pub const DUMP_TIMEOUT: &str = " DUMP TIMEOUT (";

/// Whether `text` holds the line `dumpsys` prints when a dump timed out ([`DUMP_TIMEOUT`]).
///
/// Any text may hold it (another app can write it into its own crash text): it only makes a
/// print not one for one, which costs the entries that cannot be pinned, never shows one.
pub fn dump_timed_out(text: &str) -> bool {
    let finder = memchr::memmem::Finder::new(DUMP_TIMEOUT.as_bytes());
    finder.find_iter(text.as_bytes()).any(|hit| {
        let start = memchr::memrchr(b'\n', &text.as_bytes()[..hit]).map_or(0, |at| at + 1);
        let (line, _) = line_at(text, start);
        is_timeout_line(line)
    })
}

/// `*** SERVICE '<name>' DUMP TIMEOUT (<digits>ms) EXPIRED ***`.
fn is_timeout_line(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("*** SERVICE '") else {
        return false;
    };
    let Some((_, rest)) = rest.rsplit_once('\'') else {
        return false;
    };
    rest.strip_prefix(DUMP_TIMEOUT)
        .and_then(|rest| rest.strip_suffix("ms) EXPIRED ***"))
        .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
}

/// The entries of `dumpsys dropbox --print <tag>` output (`print`) that can be trusted, checked
/// against the listing `dumpsys dropbox <tag>` (`listing`) printed just before it; `is_claim`
/// is asked about each entry left out, and those it says yes to are counted in
/// [`CheckedEntries::claims`].
///
/// In `--print` output an entry's end is known only from an uncompressed text's byte count (or
/// a `data` entry's one path line); a `compressed text` entry runs to the next separator line,
/// which its own text may have written, with a header and `Process:`/`UID:` lines of another
/// app. The listing cannot be forged that way (see [`ListedEntry`]). So:
///
/// - when the print output's entries match the listing one for one (the same header lines in
///   the same order, each text agreeing with its preview as AOSP makes it, every separator
///   line exact and starting an entry), every entry is trusted: then no entry can have been
///   forged. This holds only when no two listed header lines are the same (else an entry
///   deleted between the two commands could be stood for by a forgery inside its twin's
///   text), and when neither output says `dumpsys` cut it short ([`dump_timed_out`]: a cut
///   print can end right after a forgery, where the real entry it stands for was not printed);
/// - otherwise (more entries than listed: a forgery, or an entry written between the two
///   commands) an entry is trusted only when its start is pinned, and it is listed: the first
///   entry is pinned, and so is the one right after a pinned entry whose end is known. Every
///   other entry is left out, and an entry that is not in the listing is never trusted.
///
/// ```
/// use phonelogs_crash::dropbox::checked_dropbox_entries;
/// let listing = "\
/// 2026-11-30 10:00:00 data_app_crash (text, 28 bytes)
///     Process: com.example.app//x
/// ";
/// let print = "\
/// ========================================
/// 2026-11-30 10:00:00 data_app_crash (text, 28 bytes)
/// Process: com.example.app
///
/// x
///
/// ";
/// let checked = checked_dropbox_entries(listing, print, |_| true);
/// assert_eq!((checked.trusted.len(), checked.untrusted_count()), (1, 0));
/// // An entry the listing does not have is never trusted.
/// let checked = checked_dropbox_entries("", print, |entry| entry.tag == "data_app_crash");
/// assert_eq!((checked.trusted.len(), checked.untrusted_count(), checked.claims), (0, 1, 1));
/// ```
pub fn checked_dropbox_entries<'a>(
    listing: &str,
    print: &'a str,
    mut is_claim: impl FnMut(&DropBoxEntryRef<'a>) -> bool,
) -> CheckedEntries<'a> {
    let listed = dropbox_listing(listing);
    let print_cut = dump_timed_out(print);
    let cut = print_cut || dump_timed_out(listing);
    let distinct = {
        let mut seen = std::collections::HashSet::with_capacity(listed.len());
        listed.iter().all(|entry| seen.insert(entry.header_line))
    };
    let mut checked = CheckedEntries {
        cut,
        ..CheckedEntries::default()
    };
    let mut pins = Pins {
        at: next_separator(print, 0, &memchr::memmem::Finder::new(ENTRY_SEPARATOR))
            .map(|(start, _)| start),
        listed: &listed,
        next: 0,
        cut_in: print_cut.then_some(print),
    };
    // The entries read while they still match the listing one for one: fewer than listed.
    let mut held: Vec<Scanned<'a>> = Vec::new();
    let mut one_for_one = !cut && distinct;
    for found in scan(print) {
        if one_for_one {
            let agrees = match &found {
                Scan::Entry(entry) => listed.get(held.len()).is_some_and(|listed| {
                    entry.exact_separator
                        && entry.header_line == listed.header_line
                        && preview_agrees(print, entry, listed.preview)
                }),
                Scan::Skipped => false,
            };
            if agrees && let Scan::Entry(entry) = found {
                held.push(entry);
                continue;
            }
            // Not one for one after all: the entries held are judged as every later one.
            one_for_one = false;
            for entry in held.drain(..) {
                pins.judge(entry, &mut checked, &mut is_claim);
            }
        }
        if let Scan::Entry(entry) = found {
            pins.judge(entry, &mut checked, &mut is_claim);
        }
    }
    if one_for_one && held.len() == listed.len() {
        checked.trusted = held.into_iter().map(|found| found.entry).collect();
    } else {
        for entry in held {
            pins.judge(entry, &mut checked, &mut is_claim);
        }
    }
    checked
}

/// The pinning of [`checked_dropbox_entries`], one entry at a time in the dump's order.
struct Pins<'l, 'a> {
    /// Where the next pinned entry starts: the first separator line, then the end of each
    /// pinned entry whose end is known. `None` once an end is not known.
    at: Option<usize>,
    /// The listing's entries, and the first one not matched yet: a trusted entry is matched
    /// in order.
    listed: &'l [ListedEntry<'a>],
    next: usize,
    /// The print, when dumpsys cut it: the entry the cut fell in runs on into dumpsys' line,
    /// and its headers may have been cut (a `UID:` line to another uid's prefix, a `Process:`
    /// to another package's), so an entry holding that line is never trusted.
    cut_in: Option<&'l str>,
}

impl Pins<'_, '_> {
    fn judge<'p>(
        &mut self,
        found: Scanned<'p>,
        checked: &mut CheckedEntries<'p>,
        is_claim: &mut impl FnMut(&DropBoxEntryRef<'p>) -> bool,
    ) {
        let pinned = self.at == Some(found.start);
        self.at = (pinned && found.end_known).then_some(found.end);
        let whole = self.cut_in.is_none_or(|print| {
            print
                .get(found.text_start..found.end)
                .is_some_and(|text| !dump_timed_out(text))
        });
        let listed = pinned
            && whole
            && self.listed[self.next.min(self.listed.len())..]
                .iter()
                .position(|listed| listed.header_line == found.header_line)
                .map(|index| self.next += index + 1)
                .is_some();
        if listed {
            checked.trusted.push(found.entry);
        } else {
            checked.untrusted += 1;
            if is_claim(&found.entry) {
                checked.claims += 1;
            }
        }
    }
}

/// The preview `dumpsys dropbox <tag>` prints for a text entry whose stored text starts with
/// `text` (only its first 70 bytes count), without the four spaces.
///
/// AOSP `DropBoxManagerService.dump` takes `Entry.getText(70)`: the first 70 bytes, decoded as
/// UTF-8 by ART's `StringFactory.newStringFromUtf8Bytes`, which puts one U+FFFD for each
/// maximal ill-formed part (so one for a character cut at the 70th byte), as
/// `String::from_utf8_lossy` does; then `trim()` (every character up to U+0020 at both ends),
/// each `\n` as `/`, and ` ...` when the decoded text is 70 UTF-16 units long
/// (testdata/README.md cites both).
///
/// ```
/// use phonelogs_crash::dropbox::dropbox_preview;
/// assert_eq!(dropbox_preview(b"Process: com.example.app\nPID: 4242\n"), "Process: com.example.app/PID: 4242");
/// let long = format!("Process: {}", "x".repeat(80));
/// assert_eq!(dropbox_preview(long.as_bytes()), format!("Process: {} ...", "x".repeat(61)));
/// // A character cut at the 70th byte is one U+FFFD: here 69 UTF-16 units, so no ` ...`.
/// let cut = format!("{}€", "x".repeat(68));
/// assert_eq!(dropbox_preview(cut.as_bytes()), format!("{}\u{fffd}", "x".repeat(68)));
/// ```
pub fn dropbox_preview(text: &[u8]) -> String {
    let first = text.get(..70).unwrap_or(text);
    let decoded = String::from_utf8_lossy(first);
    let truncated = decoded.encode_utf16().count() == 70;
    // Java's `String.trim`.
    let mut preview = decoded.trim_matches(|c: char| c <= ' ').replace('\n', "/");
    if truncated {
        preview.push_str(" ...");
    }
    preview
}

/// Whether an entry of `--print` output starts with the text its listing's preview shows,
/// exactly as [`dropbox_preview`] makes it. An entry without text has no preview.
fn preview_agrees(print: &str, entry: &Scanned<'_>, preview: Option<&str>) -> bool {
    let EntryContents::Text { compressed, bytes } = entry.entry.contents else {
        return preview.is_none();
    };
    let Some(preview) = preview else {
        return false;
    };
    // The stored text's first 70 bytes: a pty's `\r\n` is the one `\n` it was, and an
    // uncompressed text shorter than that ends at its byte count, before the line breaks
    // `dump` adds. (A compressed text is at least one file-system block.)
    let wanted = if compressed {
        70
    } else {
        usize::try_from(bytes).map_or(70, |bytes| bytes.min(70))
    };
    let raw = print
        .as_bytes()
        .get(entry.text_start..entry.end)
        .unwrap_or_default();
    let mut first: Vec<u8> = Vec::with_capacity(wanted);
    let mut at = 0;
    while first.len() < wanted && at < raw.len() {
        if entry.crlf && raw[at] == b'\r' && raw.get(at + 1) == Some(&b'\n') {
            at += 1;
            continue;
        }
        first.push(raw[at]);
        at += 1;
    }
    preview == dropbox_preview(&first)
}
