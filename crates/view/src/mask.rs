//! Secrets masked before an agent sees or matches any text of the app: bearer and
//! `Authorization:` values, JWTs, private key blocks (across lines too), values named like
//! tokens, passwords, keys, secrets or signatures (URL queries, forms, JSON, headers), the
//! well-known API key shapes of gitleaks' rules ([`gitleaks`]), and card numbers that pass the
//! Luhn check. Each becomes `[redacted:KIND]`, and what was masked is counted.
//!
//! The gateway masks a read's lines once, as soon as they are read, over the whole read in
//! time order (`masked.rs`): everything after (the cursor, `filter`, `exclude`, `tag`,
//! `wait_for`, `limit`, folding, `context`, the one cut) sees only masked text, so a pattern
//! cannot probe a secret and the counts are of what is shown. Reports and the debugging aids'
//! texts are masked before their cut (`render.rs`, `debug.rs`). Only the person turns it off,
//! per app (`Store::unmask_app`).
//!
//! Written here around `regex` (linear time, no backtracking) and `aho-corasick` rather than
//! taken from a crate: the redaction crates looked at (`rtb-redact`, `leakguard`,
//! `secret-mask`) replace every secret with one fixed mark, so neither the kind nor a count
//! survives, and none follows a private key across log lines or checks card numbers with Luhn.
//! The shapes themselves come from gitleaks, a maintained rule set, cited in `mask/gitleaks.rs`.

//!
//! ```
//! let masked = phonelogs_view::mask::masker().line("GET /feed?access_token=abc123&page=2");
//! assert_eq!(masked.text, "GET /feed?access_token=[redacted:token]&page=2");
//! assert_eq!(masked.count, 1);
//! ```

use std::borrow::Cow;
use std::sync::{LazyLock, OnceLock};

use aho_corasick::{AhoCorasick, MatchKind};
use regex::{Captures, Regex};

mod gitleaks;

/// The longest text one line may hold for the rules: a longer one (2,000 bytes is the most a
/// line shows, but a report's line may be longer) is masked in pieces of this size, so a
/// pathological line costs no more than several ordinary ones.
const MAX_PIECE: usize = 64 * 1024;

/// How much the pieces of a long text overlap: a secret shorter than this (every shape the
/// rules know but a one-line private key block) that crosses a piece's end lies whole in the
/// next piece.
const OVERLAP: usize = 8 * 1024;

/// A text with its secrets masked, and how many there were.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Masked<'a> {
    /// The text, borrowed when nothing was masked.
    pub text: Cow<'a, str>,
    /// How many secrets were masked.
    pub count: usize,
}

impl<'a> Masked<'a> {
    fn untouched(text: &'a str) -> Masked<'a> {
        Masked {
            text: Cow::Borrowed(text),
            count: 0,
        }
    }
}

/// How a masked secret's mark starts.
pub const MARK_START: &str = "[redacted:";

/// What a masked secret becomes.
pub fn mark(kind: &str) -> String {
    format!("{MARK_START}{kind}]")
}

/// Which process and tag wrote a line: the `writer` of [`Masker::lines`], so lines of one
/// writer belong together for private key blocks across lines.
pub fn writer(line: &phonelogs_driver::LogLine) -> u64 {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut hasher = DefaultHasher::new();
    (line.pid, &line.tag).hash(&mut hasher);
    hasher.finish()
}

/// How a rule names what it found.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// Always this kind.
    Fixed(&'static str),
    /// From the name the value was given (`password=…` is a password).
    ByName,
}

/// One rule: the secret is its `value` group, else its first group, else the whole match.
#[derive(Debug)]
struct Rule {
    kind: Kind,
    /// Its pattern, as [`key_ends`] makes it.
    pattern: Cow<'static, str>,
    /// Compiled the first time one of its keywords is seen: most rules never meet a line that
    /// wakes them, and the whole set compiled holds about 10 MiB (issue 37, item 11). `None`
    /// when it does not compile (a test holds that none is).
    regex: OnceLock<Option<Regex>>,
    /// A match must pass this too (a bearer value that is a word, a card number's Luhn digit).
    check: fn(&str) -> bool,
}

impl Rule {
    /// The compiled rule, compiled now if it was not yet.
    fn regex(&self) -> Option<&Regex> {
        self.regex
            .get_or_init(|| match compile(&self.pattern) {
                Ok(regex) => Some(regex),
                Err(error) => {
                    let kind = self.kind;
                    tracing::warn!(?kind, %error, "a secret rule does not compile; left out");
                    None
                }
            })
            .as_ref()
    }
}

/// gitleaks' groups around a token (`utils.GenerateUniqueTokenRegex`, the Azure and Sidekiq
/// rules' own): a token must be followed by a space, a quote, `;`, an escaped line end or the
/// end of the text, and the Azure secret preceded by a few given characters. Apps write keys
/// before `,`, `)`, `]`, `.`, `&` or `…` (`init(key=sk_live_…)`), so each is replaced by
/// [`KEY_END`] / [`KEY_START`] (issue 37, item 2).
const GITLEAKS_ENDS: [&str; 4] = [
    r#"(?:[\x60'"\s;]|\\[nr]|$|\b)"#,
    r#"(?:[\x60'"\s;]|\\[nr]|$)"#,
    r#"(?:$|[\\'"\x60\s<),])"#,
    r#"(?:[\/|\#|\?|:]|$)"#,
];
const GITLEAKS_STARTS: [&str; 1] = [r#"(?:^|[\\'"\x60\s>=:(,)])"#];
/// After a key: the end, or a character that no key shape continues with (not a letter, a
/// digit, `_`, `~` or `-`; in Unicode mode, so `…` is one character and the class matches only
/// whole characters). A `.` or `(` ends a key only before the end or such a character: in
/// `video_box.ico-7a38….png` or `GLC_CreateLightmapTexturesIndividual(void)` (gitleaks' own
/// false positives) the word goes on.
const KEY_END: &str = r"(?:$|[.(](?:$|(?u:[^0-9A-Za-z]))|(?u:[^0-9A-Za-z_~.(\-]))";
/// Before a key: the start, or anything but a letter or a digit.
const KEY_START: &str = r"(?:^|(?u:[^0-9A-Za-z]))";

/// A gitleaks pattern made to end where a key ends ([`GITLEAKS_ENDS`]).
fn key_ends(pattern: &'static str) -> Cow<'static, str> {
    if !GITLEAKS_ENDS
        .iter()
        .chain(&GITLEAKS_STARTS)
        .any(|group| pattern.contains(group))
    {
        return Cow::Borrowed(pattern);
    }
    let mut out = pattern.to_owned();
    for group in GITLEAKS_ENDS {
        out = out.replace(group, KEY_END);
    }
    for group in GITLEAKS_STARTS {
        out = out.replace(group, KEY_START);
    }
    Cow::Owned(out)
}

/// A rule written here: what it names a match, the keywords that wake it, its pattern and the
/// check a match must pass.
struct OwnRule {
    kind: Kind,
    keywords: &'static [&'static str],
    pattern: &'static str,
    check: fn(&str) -> bool,
}

/// The rules written here: the log lines' own ways of carrying secrets.
const OWN_RULES: &[OwnRule] = &[
    OwnRule {
        kind: Kind::Fixed("authorization"),
        keywords: &["authorization"],
        pattern: r#"(?i)\b(?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic|digest|token|negotiate|ntlm|hmac|mac|aws4-hmac-sha256)\s+)?(?P<value>[^\s"',;]+)"#,
        check: any_value,
    },
    OwnRule {
        kind: Kind::Fixed("bearer"),
        keywords: &["bearer"],
        pattern: r"(?i)\bbearer\s+(?P<value>[A-Za-z0-9\-._~+/]+=*)",
        check: looks_like_token,
    },
    OwnRule {
        kind: Kind::Fixed("jwt"),
        keywords: &[".ey"],
        pattern: r"\bey[A-Za-z0-9_-]{10,}\.ey[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*",
        check: any_value,
    },
    OwnRule {
        kind: Kind::ByName,
        keywords: &[
            "token",
            "passw",
            "pwd",
            "passphrase",
            "secret",
            "key",
            "sig",
            "credential",
            "auth",
            "cookie",
            "session",
            "sid",
        ],
        pattern: r#"(?i)(?:^|[^A-Za-z0-9_.\-])(?P<name>[A-Za-z0-9_.\-]*?(?:token|passw(?:or)?d|pwd|passphrase|secret|key|sig|signature|credentials?|auth|cookie|session|session_?id|sid))["']?\s*[:=]\s*["']?(?P<value>[^\s&"',;<>(){}\[\]]+)"#,
        check: named_value,
    },
];

/// Card numbers: 13 to 19 digits, in groups split by single spaces or dashes.
const CARD: &str = r"\b(?:\d[ -]?){12,18}\d\b";

/// The masker: every rule (each compiled on first use), and the keywords that wake them.
#[derive(Debug)]
pub struct Masker {
    rules: Vec<Rule>,
    /// The keywords of every rule, in any case.
    keywords: AhoCorasick,
    /// For each keyword (by its index in `keywords`), the rules it wakes.
    woken: Vec<Vec<usize>>,
    card: Regex,
}

/// The one masker, built on first use (the gateway builds it when a gateway is built).
pub fn masker() -> &'static Masker {
    static MASKER: LazyLock<Masker> = LazyLock::new(Masker::build);
    &MASKER
}

impl Masker {
    /// Gathers every rule and builds the keywords' automaton; a rule's pattern is compiled
    /// when a text first holds one of its keywords ([`Rule::regex`]).
    fn build() -> Masker {
        let mut rules = Vec::new();
        let mut keywords: Vec<String> = Vec::new();
        let mut woken: Vec<Vec<usize>> = Vec::new();
        let mut add =
            |kind: Kind, words: &[&str], pattern: Cow<'static, str>, check: fn(&str) -> bool| {
                let index = rules.len();
                rules.push(Rule {
                    kind,
                    pattern,
                    regex: OnceLock::new(),
                    check,
                });
                for word in words {
                    let word = word.to_ascii_lowercase();
                    match keywords.iter().position(|k| *k == word) {
                        Some(at) => woken[at].push(index),
                        None => {
                            keywords.push(word);
                            woken.push(vec![index]);
                        }
                    }
                }
            };
        for rule in gitleaks::RULES {
            add(
                Kind::Fixed(rule.id),
                rule.keywords,
                key_ends(rule.pattern),
                not_a_placeholder,
            );
        }
        for rule in OWN_RULES {
            add(
                rule.kind,
                rule.keywords,
                Cow::Borrowed(rule.pattern),
                rule.check,
            );
        }
        // Our own fixed keywords and pattern: a test builds them, so they cannot fail here.
        let keywords = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(&keywords)
            .expect("the secret keywords build");
        Masker {
            rules,
            keywords,
            woken,
            card: Regex::new(CARD).expect("the card pattern compiles"),
        }
    }

    /// One line of text (no line break): its secrets masked.
    pub fn line<'a>(&self, text: &'a str) -> Masked<'a> {
        let found = if text.len() > MAX_PIECE {
            self.find_long(text)
        } else {
            self.find(text)
        };
        if found.is_empty() {
            return Masked::untouched(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (start, end, kind) in &found {
            out.push_str(&text[at..*start]);
            out.push_str(&mark(kind));
            at = *end;
        }
        out.push_str(&text[at..]);
        Masked {
            text: Cow::Owned(out),
            count: found.len(),
        }
    }

    /// The secrets in a text longer than [`MAX_PIECE`], found in pieces of that size that
    /// overlap by [`OVERLAP`] (cut on character boundaries), so a secret across the end of one
    /// piece is found whole in the next (issue 37, item 3).
    fn find_long(&self, text: &str) -> Vec<(usize, usize, Cow<'static, str>)> {
        let mut found = Vec::new();
        let mut start = 0;
        loop {
            let end = floor_boundary(text, (start + MAX_PIECE).min(text.len()));
            let piece = &text[start..end];
            found.extend(
                self.find(piece)
                    .into_iter()
                    .map(|(s, e, kind)| (s + start, e + start, kind)),
            );
            if end >= text.len() {
                break;
            }
            let next = floor_boundary(text, end - OVERLAP);
            start = if next > start { next } else { end };
        }
        apart(found)
    }

    /// The secrets in `text`: `(start, end, kind)`, in order, none overlapping.
    fn find(&self, text: &str) -> Vec<(usize, usize, Cow<'static, str>)> {
        let mut wake = [0u64; 4];
        for hit in self.keywords.find_overlapping_iter(text) {
            for &rule in &self.woken[hit.pattern().as_usize()] {
                if let Some(word) = wake.get_mut(rule / 64) {
                    *word |= 1 << (rule % 64);
                }
            }
        }
        let mut found: Vec<(usize, usize, Cow<'static, str>)> = Vec::new();
        for (index, rule) in self.rules.iter().enumerate() {
            if wake
                .get(index / 64)
                .is_none_or(|word| word & (1 << (index % 64)) == 0)
            {
                continue;
            }
            let Some(regex) = rule.regex() else {
                continue;
            };
            for captures in regex.captures_iter(text) {
                if let Some((start, end, kind)) = secret_of(rule, &captures) {
                    found.push((start, end, kind));
                }
            }
        }
        if text.bytes().filter(u8::is_ascii_digit).count() >= 13 {
            for hit in self.card.find_iter(text) {
                if is_card(hit.as_str()) {
                    found.push((hit.start(), hit.end(), Cow::Borrowed("card")));
                }
            }
        }
        apart(found)
    }

    /// A sequence of lines (oldest first), each `(writer, text)` where `writer` tells lines of
    /// one process and tag apart: each line masked, and a private key block that a message
    /// spread over several lines (`-----BEGIN … PRIVATE KEY-----` to `-----END …`) masked
    /// whole, even when the read starts inside it.
    pub fn lines<'a>(&self, items: &[(u64, &'a str)]) -> Vec<Masked<'a>> {
        self.lines_after(items, &[])
    }

    /// [`Masker::lines`] for lines that follow others: the writers in `open` were inside a
    /// block when these lines start. A writer whose first line here looks like a block's body
    /// (a long run of base64 alone, or a block's shorter last line: see
    /// [`looks_like_a_last_body_line`]) is taken to be inside one that began before too, until
    /// a line that is not.
    pub fn lines_after<'a>(&self, items: &[(u64, &'a str)], open: &[u64]) -> Vec<Masked<'a>> {
        let mut out: Vec<Masked<'a>> = Vec::with_capacity(items.len());
        let mut open: Vec<u64> = open.to_vec();
        let mut guessed: Vec<u64> = Vec::new();
        let mut tails: Vec<u64> = Vec::new();
        let mut seen: Vec<u64> = Vec::new();
        for &(writer, text) in items {
            let (begins, ends) = pem_marks(text);
            let mut first_guess = false;
            if !seen.contains(&writer) {
                seen.push(writer);
                if !open.contains(&writer) && !begins && looks_like_a_body_line(text) {
                    guessed.push(writer);
                    first_guess = true;
                } else if !open.contains(&writer) && !begins && looks_like_a_last_body_line(text) {
                    // Only the block's end may follow it.
                    tails.push(writer);
                    out.push(block_line(true));
                    continue;
                }
            }
            if let Some(at) = tails.iter().position(|w| *w == writer) {
                tails.swap_remove(at);
                if ends && !begins {
                    out.push(block_line(false));
                    continue;
                }
            }
            if guessed.contains(&writer) {
                if is_pem_body(text) && !begins {
                    out.push(block_line(first_guess));
                    continue;
                }
                guessed.retain(|w| *w != writer);
                if ends {
                    out.push(block_line(false));
                    continue;
                }
            }
            let inside = open.contains(&writer);
            if inside || (begins && !ends) {
                out.push(block_line(!inside));
                if ends {
                    open.retain(|w| *w != writer);
                } else if !inside {
                    open.push(writer);
                }
                continue;
            }
            if ends && !begins {
                // The read started inside a block: its body lines before are masked too.
                for (index, (earlier, text)) in items[..out.len()].iter().enumerate().rev() {
                    if *earlier != writer {
                        continue;
                    }
                    if !is_pem_body(text) {
                        break;
                    }
                    out[index] = block_line(false);
                }
                out.push(block_line(true));
                continue;
            }
            out.push(self.line(text));
        }
        out
    }

    /// A text of several lines (a crash report, its summary): every line masked, and private
    /// key blocks across them.
    pub fn text<'a>(&self, text: &'a str) -> Masked<'a> {
        if !text.contains('\n') {
            return self.line(text);
        }
        let pieces: Vec<(u64, &str)> = text.split('\n').map(|line| (0, line)).collect();
        let masked = self.lines(&pieces);
        let count: usize = masked.iter().map(|m| m.count).sum();
        if count == 0 && masked.iter().all(|m| matches!(m.text, Cow::Borrowed(_))) {
            return Masked::untouched(text);
        }
        let joined = masked
            .iter()
            .map(|m| m.text.as_ref())
            .collect::<Vec<_>>()
            .join("\n");
        Masked {
            text: Cow::Owned(joined),
            count,
        }
    }
}

/// Compiles a rule as gitleaks' Go (RE2) reads it: `\w`, `\d`, `\s` and `\b` are ASCII there,
/// so first without Unicode classes (which also keeps `[\w-]{50,1000}` small); a pattern that
/// needs Unicode mode (`.`, a negated class, which could match invalid UTF-8 without it)
/// compiles with it.
fn compile(pattern: &str) -> Result<Regex, regex::Error> {
    regex::RegexBuilder::new(pattern)
        .unicode(false)
        .build()
        .or_else(|_| Regex::new(pattern))
}

/// The span and kind of a rule's match, when its checks pass.
fn secret_of(rule: &Rule, captures: &Captures<'_>) -> Option<(usize, usize, Cow<'static, str>)> {
    let secret = captures
        .name("value")
        .or_else(|| captures.get(1))
        .or_else(|| captures.get(0))?;
    if secret.as_str().is_empty() || !(rule.check)(secret.as_str()) {
        return None;
    }
    let kind = match rule.kind {
        Kind::Fixed(kind) => kind,
        Kind::ByName => kind_of_name(captures.name("name").map_or("", |n| n.as_str())),
    };
    // A signature is long (hex or base64); `SIG: 9` is a signal's number.
    if kind == "signature" && secret.as_str().len() < 8 {
        return None;
    }
    let kind = Cow::Borrowed(kind);
    Some((secret.start(), secret.end(), kind))
}

fn any_value(_: &str) -> bool {
    true
}

/// A key, not a placeholder for one (`api_org_xxxxxxxx…`, gitleaks' own false positive once
/// a key may end at `)`): it does not end in twelve `x`.
fn not_a_placeholder(value: &str) -> bool {
    let tail = value.as_bytes();
    tail.len() < 12
        || !tail[tail.len() - 12..]
            .iter()
            .all(|b| b.eq_ignore_ascii_case(&b'x'))
}

/// A bearer value, not a word that follows "bearer" in prose ("Bearer authentication"): at
/// least 8 characters with a digit or token punctuation, or 20 and more.
fn looks_like_token(value: &str) -> bool {
    value.len() >= 20
        || (value.len() >= 8
            && value.bytes().any(|b| {
                b.is_ascii_digit() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/' | b'=')
            }))
}

/// A named value that holds something: not an empty word, `null`, `true`, or stars.
fn named_value(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    !matches!(
        lower.as_str(),
        "null" | "nil" | "none" | "true" | "false" | "undefined" | "empty"
    ) && !value.bytes().all(|b| b == b'*')
}

/// The kind a value's name gives it.
fn kind_of_name(name: &str) -> &'static str {
    let lower = name.to_ascii_lowercase();
    if lower.contains("passw") || lower.ends_with("pwd") || lower.ends_with("passphrase") {
        "password"
    } else if lower.ends_with("secret") {
        "secret"
    } else if lower.ends_with("key") {
        "key"
    } else if lower.ends_with("sig") || lower.ends_with("signature") {
        "signature"
    } else {
        "token"
    }
}

/// A card number: 13 to 19 digits (spaces and dashes aside) with an issuer's prefix (Visa,
/// Mastercard, American Express, Discover, JCB, Diners Club, UnionPay, Maestro) and a valid
/// Luhn check digit. The prefixes keep timestamps and ids (`1732971234567`) unmasked.
fn is_card(candidate: &str) -> bool {
    let digits: Vec<u8> = candidate
        .bytes()
        .filter(u8::is_ascii_digit)
        .map(|b| b - b'0')
        .collect();
    if !(13..=19).contains(&digits.len()) {
        return false;
    }
    let prefix = |n: usize| {
        digits[..n]
            .iter()
            .fold(0u32, |acc, d| acc * 10 + u32::from(*d))
    };
    let issuer = digits[0] == 4
        || (51..=55).contains(&prefix(2))
        || (2221..=2720).contains(&prefix(4))
        || matches!(prefix(2), 34 | 37 | 36 | 38 | 62 | 65 | 50)
        || (56..=69).contains(&prefix(2))
        || (300..=305).contains(&prefix(3))
        || prefix(4) == 6011
        || (3528..=3589).contains(&prefix(4));
    issuer && luhn(&digits)
}

/// The Luhn check: every second digit from the right doubled, the sum a multiple of ten.
fn luhn(digits: &[u8]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            let d = u32::from(d);
            if i % 2 == 1 {
                if d * 2 > 9 { d * 2 - 9 } else { d * 2 }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// The earliest first, the longer of two that start together; one that overlaps a kept one
/// goes.
fn apart(
    mut found: Vec<(usize, usize, Cow<'static, str>)>,
) -> Vec<(usize, usize, Cow<'static, str>)> {
    found.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    let mut kept: Vec<(usize, usize, Cow<'static, str>)> = Vec::with_capacity(found.len());
    for item in found {
        if kept.last().is_none_or(|last| item.0 >= last.1) {
            kept.push(item);
        }
    }
    kept
}

/// The largest character boundary of `text` at or before `at`.
fn floor_boundary(text: &str, mut at: usize) -> usize {
    while at > 0 && !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// A line of a private key block, masked whole; `first` when it is the block's first masked
/// line (a block counts as one secret).
fn block_line(first: bool) -> Masked<'static> {
    Masked {
        text: Cow::Owned(mark("private-key")),
        count: usize::from(first),
    }
}

/// Whether a line begins and whether it ends a PEM private key block.
pub fn pem_marks(text: &str) -> (bool, bool) {
    (pem_begin(text).is_some(), pem_end(text).is_some())
}

/// A line that can only be a key block's body: base64 alone, at least 40 characters (a PEM
/// body line holds 64).
fn looks_like_a_body_line(text: &str) -> bool {
    let text = text.trim();
    text.len() >= 40
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
}

/// A line that is surely the shorter last line of a key block's body, when a read starts on
/// it with its `-----END` not yet logged and nothing remembered of the block (issue 37, item
/// 5): base64 alone, a whole number of 4-character groups (PEM pads its base64) and at most
/// one line (64), and either ending in `=` padding (`…==`: no word does) or holding both
/// upper and lower case letters (a tail of random base64 of 8 or more characters almost
/// always does: one in 32 misses it at 8 characters, one in 130,000 at 24, the tail of a
/// 2,048-bit RSA key). Over-masks rather than leaks: a single camel-case word of 8, 12, 16…
/// letters that is its writer's first line in a read (`onCreate`) is masked too. A 4-letter
/// unpadded tail (`AQAB`) is not told from a word (`Done`), nor is a tail of one case only.
fn looks_like_a_last_body_line(text: &str) -> bool {
    let text = text.trim();
    let body = text.trim_end_matches('=');
    let padding = text.len() - body.len();
    let base64 = body
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/'));
    if !base64 || body.is_empty() || padding > 2 || !text.len().is_multiple_of(4) || text.len() > 64
    {
        return false;
    }
    let mixed_case = body.bytes().any(|b| b.is_ascii_uppercase())
        && body.bytes().any(|b| b.is_ascii_lowercase());
    padding > 0 || (text.len() >= 8 && mixed_case)
}

/// Where a PEM private key block starts in a line, when it does.
fn pem_begin(text: &str) -> Option<usize> {
    let at = text.find("-----BEGIN")?;
    text[at..].contains("PRIVATE KEY").then_some(at)
}

/// Whether a line ends a PEM private key block.
fn pem_end(text: &str) -> Option<usize> {
    let at = text.find("-----END")?;
    text[at..].contains("PRIVATE KEY").then_some(at)
}

/// A line of a PEM body: base64 alone (and the headers an encrypted key carries).
fn is_pem_body(text: &str) -> bool {
    let text = text.trim();
    !text.is_empty()
        && (text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
            || text.starts_with("Proc-Type:")
            || text.starts_with("DEK-Info:"))
}

#[cfg(test)]
mod tests;
