//! The body the `ostrace` fuzz target (`fuzz/fuzz_targets/ostrace.rs`) and the property test
//! (`tests/ostrace_records.rs`) both run on arbitrary bytes: `phonelogs_crash::ostrace` never
//! panics, accepts as a line only a version 2, type 8 record that keeps Apple's size rule, and
//! reads back every string of a record built from the bytes in Apple's layout
//! (`shared/notes/ios-ostrace-apple.md`), whatever N and whichever strings are absent.

use phonelogs_crash::ostrace::{OsTraceRecord, parse_record};

fn le(bytes: &[u8], at: usize, width: usize) -> u64 {
    bytes[at..at + width]
        .iter()
        .rev()
        .fold(0, |v, &b| (v << 8) | u64::from(b))
}

/// Apple's size rule, read here from the header's fields.
fn keeps_size_rule(r: &[u8]) -> bool {
    let strings = le(r, 37, 2) + le(r, 107, 2) + le(r, 109, 4) + le(r, 117, 4) + le(r, 121, 4);
    129 + 8 * le(r, 125, 4) + strings == r.len() as u64
}

/// A type 8 record holding `parts` (path, image, message, subsystem, category; an empty part
/// is absent, length 0) after `words` 8-byte words.
pub fn build(parts: &[Vec<u8>; 5], words: u32) -> Vec<u8> {
    let sized: Vec<Vec<u8>> = parts
        .iter()
        .map(|p| {
            let mut p = p.clone();
            if !p.is_empty() {
                p.push(0);
            }
            p
        })
        .collect();
    let mut r = vec![0u8; 129];
    r[0] = 2;
    r[1..5].copy_from_slice(&8u32.to_le_bytes());
    r[5..9].copy_from_slice(&129u32.to_le_bytes());
    r[37..39].copy_from_slice(&(sized[0].len() as u16).to_le_bytes());
    r[107..109].copy_from_slice(&(sized[1].len() as u16).to_le_bytes());
    r[109..113].copy_from_slice(&(sized[2].len() as u32).to_le_bytes());
    r[117..121].copy_from_slice(&(sized[3].len() as u32).to_le_bytes());
    r[121..125].copy_from_slice(&(sized[4].len() as u32).to_le_bytes());
    r[125..129].copy_from_slice(&words.to_le_bytes());
    r.extend(std::iter::repeat_n(0x5A, 8 * words as usize));
    for part in sized {
        r.extend(part);
    }
    r
}

/// Splits the bytes into five strings without NUL (each under 64 KiB) and a word count.
fn parts_of(data: &[u8]) -> ([Vec<u8>; 5], u32) {
    let words = u32::from(data.first().copied().unwrap_or(0) % 4);
    let mut parts: [Vec<u8>; 5] = Default::default();
    for (i, chunk) in data
        .get(1..)
        .unwrap_or_default()
        .split(|&b| b == 0xFF)
        .take(5)
        .enumerate()
    {
        parts[i] = chunk
            .iter()
            .take(60_000)
            .map(|&b| if b == 0 { 1 } else { b })
            .collect();
    }
    (parts, words)
}

pub fn check(data: &[u8]) {
    if let Ok(OsTraceRecord::Log(_)) = parse_record(data) {
        assert_eq!((data[0], le(data, 1, 4), le(data, 5, 4)), (2, 8, 129));
        assert!(
            keeps_size_rule(data),
            "a record breaking the size rule was read"
        );
    }
    let (parts, words) = parts_of(data);
    let record = build(&parts, words);
    let Ok(OsTraceRecord::Log(entry)) = parse_record(&record) else {
        panic!("a record in Apple's layout was refused: {parts:?}");
    };
    let text = |p: &Vec<u8>| String::from_utf8_lossy(p).into_owned();
    assert_eq!(entry.filename, text(&parts[0]));
    assert_eq!(entry.image_name, text(&parts[1]));
    assert_eq!(entry.message, text(&parts[2]));
    let optional = |p: &Vec<u8>| (!p.is_empty()).then(|| text(p));
    assert_eq!(entry.subsystem, optional(&parts[3]));
    assert_eq!(entry.category, optional(&parts[4]));
    // One byte more or less, and the same record breaks the rule.
    let mut longer = record.clone();
    longer.push(0);
    assert!(parse_record(&longer).is_err());
    assert!(parse_record(&record[..record.len() - 1]).is_err());
}
