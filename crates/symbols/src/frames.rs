//! Reading frame lines out of report text: Android native frames (tombstones, `debuggerd -b`,
//! `F DEBUG` logcat lines, drop box native crashes), and `.ips` frames with the `Binary
//! Images` lines that `phonelogs-crash` renders for the app's own images. Layouts follow
//! `shared/notes/android-formats.md` (A-§4) and `crates/crash/src/ips.rs`.

/// A native frame line: `#00 pc 000000000001234  /data/app/…/libfoo.so (sym+8) (BuildId: …)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NativeFrameLine<'a> {
    /// Everything before `#` (indent, or a logcat prefix).
    pub prefix: &'a str,
    /// The frame number.
    pub index: u32,
    /// The relative pc: an address in the library's own address space.
    pub pc: u64,
    /// The mapped path (may be `base.apk!libfoo.so`).
    pub path: &'a str,
    /// The library's file name (after the last `/` or `!`).
    pub library: &'a str,
    /// The symbol the phone printed, without its offset.
    pub symbol: Option<&'a str>,
    /// The GNU build id the phone printed, lower-case.
    pub build_id: Option<String>,
}

/// Reads a native frame line; `None` for any other line.
pub fn parse_native_frame(line: &str) -> Option<NativeFrameLine<'_>> {
    let mut search = 0;
    while let Some(found) = line[search..].find('#') {
        let at = search + found;
        if (at == 0 || line[..at].ends_with(char::is_whitespace))
            && let Some(frame) = parse_native_at(line, at)
        {
            return Some(frame);
        }
        search = at + 1;
    }
    None
}

fn parse_native_at(line: &str, at: usize) -> Option<NativeFrameLine<'_>> {
    let rest = line.get(at + 1..)?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 4 {
        return None;
    }
    let index: u32 = rest[..digits].parse().ok()?;
    let rest = rest[digits..]
        .trim_start()
        .strip_prefix("pc ")?
        .trim_start();
    let hex_len = rest.bytes().take_while(u8::is_ascii_hexdigit).count();
    if hex_len == 0 || hex_len > 16 {
        return None;
    }
    let pc = u64::from_str_radix(&rest[..hex_len], 16).ok()?;
    let rest = rest[hex_len..].trim_start();
    let path_end = rest.find(" (").unwrap_or(rest.len());
    let path = rest[..path_end].trim_end();
    if path.is_empty() {
        return None;
    }
    let library = path.rsplit(['/', '!']).next().unwrap_or(path);
    let mut symbol = None;
    let mut build_id = None;
    let mut groups = &rest[path_end..];
    while let Some(open) = groups.find('(') {
        let inner_start = open + 1;
        let Some(close) = matching_paren(&groups[inner_start..]) else {
            break;
        };
        let inner = &groups[inner_start..inner_start + close];
        if let Some(id) = inner.strip_prefix("BuildId: ") {
            let id = id.trim();
            if !id.is_empty() && id.bytes().all(|b| b.is_ascii_hexdigit()) {
                build_id = Some(id.to_ascii_lowercase());
            }
        } else if !inner.starts_with("offset ") && !inner.starts_with("deleted") {
            let name = match inner.rfind('+') {
                Some(plus) if inner[plus + 1..].bytes().all(|b| b.is_ascii_digit()) => {
                    &inner[..plus]
                }
                _ => inner,
            };
            if !name.is_empty() {
                symbol = Some(name);
            }
        }
        groups = &groups[inner_start + close + 1..];
    }
    Some(NativeFrameLine {
        prefix: &line[..at],
        index,
        pc,
        path,
        library,
        symbol,
        build_id,
    })
}

/// The position of the `)` closing an already opened group, with nested parentheses (C++
/// symbols carry their own).
fn matching_paren(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth == 0 => return Some(i),
            ')' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// An `.ips` frame line as `phonelogs-crash` renders it: `1   CrashTest   \t0x1022d0700 …`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IpsFrameLine<'a> {
    /// The image's name.
    pub image: &'a str,
    /// The frame's address (image base + offset).
    pub address: u64,
}

/// Reads an `.ips` frame line; `None` for any other line.
pub fn parse_ips_frame(line: &str) -> Option<IpsFrameLine<'_>> {
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let (label, rest) = line[digits..].split_once('\t')?;
    let image = label.trim();
    let hex = rest.strip_prefix("0x")?;
    let len = hex.bytes().take_while(u8::is_ascii_hexdigit).count();
    let address = u64::from_str_radix(hex.get(..len)?, 16).ok()?;
    if image.is_empty() {
        return None;
    }
    Some(IpsFrameLine { image, address })
}

/// A `Binary Images` line: `0x1022c8000 - 0x1022d7fff CrashTest arm64 <uuid> /path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IpsImage<'a> {
    /// Its load address.
    pub base: u64,
    /// Its name.
    pub name: &'a str,
    /// Its UUID, lower-case hex without dashes.
    pub uuid: String,
}

/// Reads a `Binary Images` line; `None` for any other line.
pub fn parse_ips_image(line: &str) -> Option<IpsImage<'_>> {
    let rest = line.trim_start().strip_prefix("0x")?;
    let (base, rest) = rest.split_once(" - ")?;
    let base = u64::from_str_radix(base, 16).ok()?;
    let rest = rest.strip_prefix("0x")?;
    let (_end, rest) = rest.split_once(' ')?;
    let (names, rest) = rest.split_once(" <")?;
    let (uuid, _path) = rest.split_once('>')?;
    let name = names.rsplit_once(' ').map_or(names, |(name, _arch)| name);
    let uuid: String = uuid
        .chars()
        .filter(|c| *c != '-')
        .map(|c| c.to_ascii_lowercase())
        .collect();
    if uuid.len() != 32 || !uuid.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    Some(IpsImage { base, name, uuid })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn reads_tombstone_frames() {
        let frame = parse_native_frame("      #00 pc 000000000005b4c8  /apex/com.android.runtime/lib64/bionic/libc.so (syscall+24) (BuildId: 0A1B)").unwrap();
        assert_eq!(frame.prefix, "      ");
        assert_eq!(frame.pc, 0x5b4c8);
        assert_eq!(frame.library, "libc.so");
        assert_eq!(frame.symbol, Some("syscall"));
        assert_eq!(frame.build_id.as_deref(), Some("0a1b"));
        let frame = parse_native_frame("#00  pc 00020418  /system/lib/libc.so").unwrap();
        assert_eq!(frame.pc, 0x20418);
        assert_eq!(frame.symbol, None);
        let frame = parse_native_frame("F DEBUG   :     #01 pc 0000000000001000  /data/app/x/base.apk!libfoo.so (offset 0x4000) (foo(int)+8)").unwrap();
        assert_eq!(frame.library, "libfoo.so");
        assert_eq!(frame.symbol, Some("foo(int)"));
        assert!(parse_native_frame("#hashtag pc 12 nothing").is_none());
        assert!(parse_native_frame("nothing here").is_none());
    }

    #[test]
    fn reads_ips_lines() {
        let frame = parse_ips_frame(
            "1   CrashTest                     \t0x1022d0700 ViewController.crashTapped(_:) + 120",
        )
        .unwrap();
        assert_eq!(frame.image, "CrashTest");
        assert_eq!(frame.address, 0x1022d0700);
        let image = parse_ips_image("0x1022c8000 - 0x1022d7fff CrashTest arm64 <82d13d98-219e-3040-b62a-07a297007a7c> /private/var/x/CrashTest").unwrap();
        assert_eq!(image.base, 0x1022c8000);
        assert_eq!(image.name, "CrashTest");
        assert_eq!(image.uuid, "82d13d98219e3040b62a07a297007a7c");
    }
}
