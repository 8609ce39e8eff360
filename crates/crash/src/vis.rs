//! BSD `vis(3)` escapes, as `com.apple.syslog_relay` writes every byte it does not print as
//! is: `\M-c` (a meta byte, `0x80 | c`), `\M^c` (a meta control byte), `\^c` (a control
//! byte, `c ^ 0x40`; `\^?` is DEL), `\NNN` (a byte in octal; Apple's libc writes 0xA0 as
//! `\240` and the backslash as `\134`) and `\\`. Sources: vis(3) (NetBSD/FreeBSD/Apple libc,
//! `vis.c`) and go-ios `ios/syslog/vis.go`, cited in `testdata/README.md`.
//!
//! Written here rather than taken from a crate: no maintained Rust crate decodes vis(3)
//! (`unvis` ports decode a different, shell-oriented set), and the decoder is short.

/// Decodes `text`'s vis escapes to bytes. Whatever is not a complete escape (a lone or final
/// backslash, `\M` without `-`/`^`, `\8`, an octal value past 0o377) is kept as it is, so no
/// text is lost.
pub fn decode_bytes(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] != b'\\' {
            out.push(bytes[at]);
            at += 1;
            continue;
        }
        match escape(&bytes[at + 1..]) {
            Some((byte, used)) => {
                out.push(byte);
                at += 1 + used;
            }
            None => {
                out.push(b'\\');
                at += 1;
            }
        }
    }
    out
}

/// Decodes `text`'s vis escapes into text (UTF-8 with replacement: the escaped bytes of a
/// multi-byte character come back as that character).
pub fn decode(text: &str) -> String {
    if !text.contains('\\') {
        return text.to_owned();
    }
    String::from_utf8_lossy(&decode_bytes(text)).into_owned()
}

/// A control character's byte from the letter vis writes after `^` (`@`..`_`, or `?` for DEL).
fn control(c: u8) -> Option<u8> {
    match c {
        b'?' => Some(0x7F),
        b'@'..=b'_' => Some(c - b'@'),
        _ => None,
    }
}

/// The byte an escape (the bytes after its backslash) stands for, and how many bytes it used.
fn escape(rest: &[u8]) -> Option<(u8, usize)> {
    match rest {
        [b'\\', ..] => Some((b'\\', 1)),
        [b'M', b'-', c, ..] if (0x20..0x7F).contains(c) => Some((c | 0x80, 3)),
        [b'M', b'^', c, ..] => control(*c).map(|b| (b | 0x80, 3)),
        [b'^', c, ..] => control(*c).map(|b| (b, 2)),
        [a @ b'0'..=b'3', b @ b'0'..=b'7', c @ b'0'..=b'7', ..] => {
            Some((((a - b'0') << 6) | ((b - b'0') << 3) | (c - b'0'), 3))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_escape_form() {
        assert_eq!(decode("plain text"), "plain text");
        // "日本" as syslog_relay writes it (go-ios's issue: CJK shown as \M-… escapes).
        assert_eq!(decode(r"\M-f\M^W\M-%\M-f\M^\\M-,"), "日本");
        assert_eq!(decode(r"caf\M-C\M-)"), "café");
        assert_eq!(decode_bytes(r"a\^Ib\^?c\^@"), b"a\tb\x7fc\x00");
        assert_eq!(decode_bytes(r"\240\134\\"), b"\xa0\\\\");
        assert_eq!(decode_bytes(r"\M- "), b"\xa0");
    }

    #[test]
    fn what_is_no_escape_stays() {
        for text in [
            r"\", r"a\", r"\M", r"\M-", r"\Mx", r"\^", r"\^a", r"\8", r"\477", r"\12", r"\q",
        ] {
            assert_eq!(decode(text), text);
        }
    }
}
