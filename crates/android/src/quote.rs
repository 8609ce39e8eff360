//! Shell quoting: every command goes to the device as ONE string that the phone's shell (mksh or
//! toybox sh) splits back into exactly the words we meant.
//!
//! The adb client and server join arguments with spaces and add no quoting, so a package name or
//! a filter that reached a command unquoted could run anything. Every word we did not write
//! ourselves goes through [`quote`].

use crate::error::{Error, Result};

/// Quotes one word for a POSIX shell. Words made only of characters no shell treats specially
/// are left as they are (so logs of the commands stay readable); anything else is wrapped in
/// single quotes, inside which the shell gives no character a meaning, and each `'` becomes
/// `'\''` (close, an escaped quote, reopen).
///
/// ```
/// use phonelogs_android::quote;
/// assert_eq!(quote("com.example.app"), "com.example.app");
/// assert_eq!(quote("a b"), "'a b'");
/// assert_eq!(quote("it's; reboot"), r"'it'\''s; reboot'");
/// assert_eq!(quote(""), "''");
/// ```
pub fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'_' | b'@' | b'%' | b'+' | b'=' | b':' | b',' | b'.' | b'/' | b'-'
                )
        });
    if plain {
        return word.to_owned();
    }
    let mut out = String::with_capacity(word.len() + 2);
    out.push('\'');
    for c in word.chars() {
        if c == '\'' {
            out.push_str(r"'\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

/// Joins words into one command line, each quoted. A word holding a NUL byte is refused: the
/// service name that carries the command ends at the first NUL on the device.
pub fn command_line<S: AsRef<str>>(words: &[S]) -> Result<String> {
    let mut out = String::new();
    for word in words {
        let word = word.as_ref();
        if word.contains('\0') {
            return Err(Error::Protocol(
                "a command word contains a NUL byte, which cannot reach the device".into(),
            ));
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&quote(word));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Runs `printf '%s\0' WORDS…` through the host's `/bin/sh` and splits what it printed.
    fn through_sh(line: &str) -> Vec<String> {
        let output = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(format!("printf '%s\\0' {line}"))
            .output()
            .unwrap();
        assert!(output.status.success(), "{line:?}: {output:?}");
        let text = String::from_utf8(output.stdout).unwrap();
        let mut words: Vec<String> = text.split('\0').map(str::to_owned).collect();
        words.pop();
        words
    }

    #[test]
    fn hostile_words_stay_one_word() {
        let words = [
            "x; reboot",
            "$(id)",
            "`id`",
            "a'b",
            "'",
            "''",
            "\\",
            "a\nb",
            "*",
            "~",
            "&& rm -rf /",
            "",
            " ",
            "${HOME}",
            "é ü",
        ];
        let line = command_line(&words).unwrap();
        assert_eq!(through_sh(&line), words);
    }

    #[test]
    fn nul_is_refused() {
        assert!(command_line(&["a\0b"]).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn any_words_round_trip_through_a_shell(words in proptest::collection::vec("[^\\x00]{0,12}", 1..5)) {
            let line = command_line(&words).unwrap();
            prop_assert_eq!(through_sh(&line), words);
        }
    }
}
