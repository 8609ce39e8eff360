//! Issue 38, item 6: `phonelogs_crash::vis` never panics, and decodes back every byte string
//! as BSD `vis(3)` encodes it (the default style: `\M-c`, `\M^c`, `\^c`, `\\`), in Apple libc's
//! octal forms (`\240`, `\134`) too. The encoder here is written from vis(3)'s description,
//! not from the decoder.

use phonelogs_crash::vis::{decode, decode_bytes};
use proptest::prelude::*;

/// vis(3), default flags: graphic characters and space as they are, the backslash doubled;
/// a byte with the high bit `\M` then its low 7 bits; a control character `^` and the
/// character 0x40 above it (`?` for DEL), or `-` and the character itself; `octal` picks
/// `\ooo` for what is not printed as is.
fn vis(bytes: &[u8], octal: &[bool]) -> String {
    let mut out = String::new();
    for (i, &b) in bytes.iter().enumerate() {
        let visible = (0x20..0x7F).contains(&b) && b != b'\\';
        if visible {
            out.push(char::from(b));
        } else if octal.get(i).copied().unwrap_or(false) {
            out.push_str(&format!("\\{b:03o}"));
        } else if b == b'\\' {
            out.push_str("\\\\");
        } else {
            out.push('\\');
            let low = b & 0x7F;
            if b & 0x80 != 0 {
                out.push('M');
            }
            if low < 0x20 || low == 0x7F {
                out.push('^');
                out.push(if low == 0x7F {
                    '?'
                } else {
                    char::from(low + 0x40)
                });
            } else {
                out.push('-');
                out.push(char::from(low));
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn round_trips_what_vis_encodes(
        bytes in proptest::collection::vec(any::<u8>(), 0..200),
        octal in proptest::collection::vec(any::<bool>(), 0..200),
    ) {
        let encoded = vis(&bytes, &octal);
        prop_assert!(encoded.is_ascii());
        prop_assert_eq!(decode_bytes(&encoded), bytes);
    }

    #[test]
    fn utf8_text_comes_back_as_text(text in "\\PC{0,60}") {
        prop_assert_eq!(decode(&vis(text.as_bytes(), &[])), text);
    }

    #[test]
    fn never_panics_and_keeps_text_without_escapes(text in "\\PC{0,80}", raw in proptest::collection::vec(any::<u8>(), 0..120)) {
        let _ = decode(&String::from_utf8_lossy(&raw));
        let _ = decode(&text);
        if !text.contains('\\') {
            prop_assert_eq!(decode(&text), text);
        }
    }
}
