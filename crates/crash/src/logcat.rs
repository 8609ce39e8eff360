//! Logcat lines: `-v epoch -v uid`, `-v threadtime` with and without `-v uid`, buffer
//! separators, and a fast path that reads only a line's uid.
//!
//! Every line that logcat prints for a multi-line message repeats the whole prefix, so each
//! line stands alone and the parsers here work one line at a time.

use serde::{Deserialize, Serialize};

/// When a logcat line was logged, as the line prints it.
///
/// `-v epoch` gives seconds since 1970 (UTC); `-v threadtime` gives the phone's local month, day
/// and time of day with no year and no zone, so turning it into an instant needs both from
/// elsewhere (see [`LogTime::to_offset_date_time`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "form", rename_all = "snake_case")]
pub enum LogTime {
    /// `-v epoch`: seconds and nanoseconds since the Unix epoch.
    Epoch {
        /// Whole seconds since 1970-01-01T00:00:00Z.
        seconds: i64,
        /// The fraction, in nanoseconds (milliseconds on a default logcat).
        nanos: u32,
    },
    /// `-v threadtime`: the phone's local wall clock without year or zone.
    MonthDay {
        /// Month, 1 to 12.
        month: u8,
        /// Day of the month, 1 to 31.
        day: u8,
        /// Hour, 0 to 23.
        hour: u8,
        /// Minute, 0 to 59.
        minute: u8,
        /// Second, 0 to 60.
        second: u8,
        /// The fraction, in nanoseconds.
        nanos: u32,
    },
}

impl LogTime {
    /// Turns the time into an instant. Epoch times need nothing; month-day times need the year
    /// and the phone's UTC offset (from `date +%z`), and give `None` without a year or when the
    /// date does not exist.
    pub fn to_offset_date_time(
        &self,
        year: Option<i32>,
        offset: time::UtcOffset,
    ) -> Option<time::OffsetDateTime> {
        match *self {
            LogTime::Epoch { seconds, nanos } => {
                let whole = time::OffsetDateTime::from_unix_timestamp(seconds).ok()?;
                // Checked: `to_offset` panics when the local date leaves the supported range (the
                // last second of year 9999 read in a zone east of UTC).
                whole
                    .checked_add(time::Duration::nanoseconds(i64::from(nanos)))?
                    .checked_to_offset(offset)
            }
            LogTime::MonthDay {
                month,
                day,
                hour,
                minute,
                second,
                nanos,
            } => {
                let month = time::Month::try_from(month).ok()?;
                let date = time::Date::from_calendar_date(year?, month, day).ok()?;
                let clock = time::Time::from_hms_nano(hour, minute, second.min(59), nanos).ok()?;
                Some(time::PrimitiveDateTime::new(date, clock).assume_offset(offset))
            }
        }
    }
}

/// A logcat uid field: a number (`10127`) or, when the passwd name is at most five characters,
/// a name (`root`, `shell`, `logd`, `radio`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum UidField {
    /// The uid printed as a number.
    Number(u32),
    /// The uid printed as its short passwd name.
    Name(String),
}

impl UidField {
    /// The numeric uid, translating the short names Android's `android_filesystem_config.h`
    /// gives to system uids. Unknown names give `None`.
    pub fn as_number(&self) -> Option<u32> {
        match self {
            UidField::Number(number) => Some(*number),
            UidField::Name(name) => short_uid_name_number(name),
        }
    }
}

/// The numbers of the uid names short enough (five characters or fewer) for logcat to print as
/// names. Taken from AOSP `android_filesystem_config.h`.
fn short_uid_name_number(name: &str) -> Option<u32> {
    Some(match name {
        "root" => 0,
        "radio" => 1001,
        "nfc" => 1027,
        "shell" => 2000,
        "logd" => 1036,
        "audio" => 1005,
        "media" => 1013,
        "vpn" => 1016,
        "drm" => 1019,
        "gps" => 1021,
        "wifi" => 1010,
        "dhcp" => 1014,
        "sdcard_rw" => 1015,
        "keystore" => 1017,
        "usb" => 1018,
        "nobody" => 9999,
        _ => return None,
    })
}

/// One parsed logcat line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogcatLine {
    /// When the line was logged.
    pub time: LogTime,
    /// The uid, when the line was printed with `-v uid`.
    pub uid: Option<UidField>,
    /// The process id.
    pub pid: u32,
    /// The thread id.
    pub tid: u32,
    /// The priority letter: `V`, `D`, `I`, `W`, `E`, `F` (and `A` on older tools).
    pub level: char,
    /// The tag, with logcat's padding removed. Tags can hold spaces and brackets.
    pub tag: String,
    /// The message text of this line (one line of a multi-line message).
    pub text: String,
}

/// What one line of a logcat dump is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogcatItem {
    /// A log line.
    Line(LogcatLine),
    /// `--------- beginning of main` (or `switch to …`): the buffer's name.
    Separator(String),
    /// A line that is neither (a bugreport section marker, a blank line, damage).
    Other,
}

/// Reads one logcat line (without its newline) in any of the supported layouts.
///
/// ```
/// use phonelogs_crash::logcat::{parse_line, LogcatItem, UidField};
/// let item = parse_line("         1783239714.320 10127  8811 16322 I MyTag   : hello");
/// let LogcatItem::Line(line) = item else { panic!("not a line") };
/// assert_eq!(line.uid, Some(UidField::Number(10127)));
/// assert_eq!((line.pid, line.tid, line.level), (8811, 16322, 'I'));
/// assert_eq!((line.tag.as_str(), line.text.as_str()), ("MyTag", "hello"));
/// ```
pub fn parse_line(line: &str) -> LogcatItem {
    let trimmed = line.trim();
    if let Some(rest) = trimmed.strip_prefix("--------- ") {
        let name = rest
            .strip_prefix("beginning of ")
            .or_else(|| rest.strip_prefix("switch to "));
        if let Some(name) = name {
            return LogcatItem::Separator(name.trim().to_owned());
        }
    }
    match parse_log_line(line) {
        Some(parsed) => LogcatItem::Line(parsed.to_line()),
        None => LogcatItem::Other,
    }
}

/// A uid field borrowed from its line: see [`UidField`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UidFieldRef<'a> {
    /// The uid printed as a number.
    Number(u32),
    /// The uid printed as its short passwd name.
    Name(&'a str),
}

impl UidFieldRef<'_> {
    /// The numeric uid, as [`UidField::as_number`] gives it.
    pub fn as_number(&self) -> Option<u32> {
        match self {
            UidFieldRef::Number(number) => Some(*number),
            UidFieldRef::Name(name) => short_uid_name_number(name),
        }
    }

    /// The owned field.
    pub fn to_field(&self) -> UidField {
        match self {
            UidFieldRef::Number(number) => UidField::Number(*number),
            UidFieldRef::Name(name) => UidField::Name((*name).to_owned()),
        }
    }
}

/// One log line read in place: the same fields as [`LogcatLine`], with the tag and text borrowed
/// from the line, so a caller that only decides whether it wants a line allocates nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogcatLineRef<'a> {
    /// When the line was logged.
    pub time: LogTime,
    /// The uid, when the line was printed with `-v uid`.
    pub uid: Option<UidFieldRef<'a>>,
    /// The process id.
    pub pid: u32,
    /// The thread id.
    pub tid: u32,
    /// The priority letter.
    pub level: char,
    /// The tag, with logcat's padding removed.
    pub tag: &'a str,
    /// The message text of this line.
    pub text: &'a str,
}

impl LogcatLineRef<'_> {
    /// The owned line, as [`parse_line`] gives it.
    pub fn to_line(&self) -> LogcatLine {
        LogcatLine {
            time: self.time,
            uid: self.uid.as_ref().map(UidFieldRef::to_field),
            pid: self.pid,
            tid: self.tid,
            level: self.level,
            tag: self.tag.to_owned(),
            text: self.text.to_owned(),
        }
    }
}

/// Reads one log line (without its newline) in place, or gives `None` for anything that is not
/// a log line (a separator, a blank line, damage). It accepts exactly the lines for which
/// [`parse_line`] gives [`LogcatItem::Line`], with the same fields: `parse_line` is built on it.
///
/// It is [`parse_log_head`] and then the tag and text split off the rest of the line, so a
/// reader that only counts lines can read their heads alone and still accept the same lines.
///
/// ```
/// use phonelogs_crash::logcat::{parse_log_line, UidFieldRef};
/// let line = parse_log_line("         1783239714.320 10127  8811 16322 I MyTag   : hello").unwrap();
/// assert_eq!(line.uid, Some(UidFieldRef::Number(10127)));
/// assert_eq!((line.tag, line.text), ("MyTag", "hello"));
/// assert!(parse_log_line("--------- beginning of main").is_none());
/// ```
pub fn parse_log_line(line: &str) -> Option<LogcatLineRef<'_>> {
    let head = parse_log_head(line.as_bytes())?;
    // The head ends after ASCII bytes (the level letter, a space) and the line's end before
    // ASCII `\r`/`\n`s, so both are character boundaries.
    let rest = &line[head.tag_at..head.line.len()];
    let (tag_end, text_at) = tag_split(rest.as_bytes())?;
    Some(LogcatLineRef {
        time: head.time,
        uid: head.uid,
        pid: head.pid,
        tid: head.tid,
        level: head.level,
        tag: rest[..tag_end].trim_end(),
        text: &rest[text_at..],
    })
}

/// A log line's head, read in place: its time, uid, pid, tid and level, without the tag and
/// text after them. See [`parse_log_head`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogcatHead<'a> {
    /// When the line was logged.
    pub time: LogTime,
    /// The uid, when the line was printed with `-v uid`.
    pub uid: Option<UidFieldRef<'a>>,
    /// The process id.
    pub pid: u32,
    /// The thread id.
    pub tid: u32,
    /// The priority letter.
    pub level: char,
    /// The line without its final `\r`s and `\n`s.
    line: &'a [u8],
    /// Where the tag starts in `line`.
    tag_at: usize,
}

impl LogcatHead<'_> {
    /// Whether the rest of the line splits into a tag and a text, as [`parse_log_line`] needs
    /// it to (a `": "`, or a `:` at the end): a head with a tag is a line `parse_log_line`
    /// accepts, with the same time, uid, pid, tid and level.
    pub fn has_tag(&self) -> bool {
        tag_split(&self.line[self.tag_at..]).is_some()
    }
}

/// Reads the head of one log line (time, uid, pid, tid, level) from its bytes, without reading
/// the tag and text and without checking that the line is UTF-8 (the head is ASCII): for
/// readers that only count or place lines. [`parse_log_line`] is this and the tag and text;
/// a line it accepts is a head here with [`LogcatHead::has_tag`], and a line with bytes that
/// are not UTF-8 reads as its `String::from_utf8_lossy` text does.
///
/// ```
/// use phonelogs_crash::logcat::{parse_log_head, UidFieldRef};
/// let head = parse_log_head(b"         1783239714.320 10127  8811 16322 I MyTag   : hello").unwrap();
/// assert_eq!((head.uid, head.pid, head.level), (Some(UidFieldRef::Number(10127)), 8811, 'I'));
/// assert!(head.has_tag());
/// assert!(!parse_log_head(b"         1783239714.320 10127  8811 16322 I no tag").unwrap().has_tag());
/// ```
pub fn parse_log_head(line: &[u8]) -> Option<LogcatHead<'_>> {
    // Hand-written over bytes rather than with `str` patterns (`trim_matches`, `find`): a dump
    // has tens of thousands of lines and the pattern machinery (a `StrSearcher` built for every
    // `find(": ")`) cost more than the reading. The rules are the same; the test module keeps
    // the `str` version and a property holds the two equal.
    let mut end = line.len();
    while end > 0 && matches!(line[end - 1], b'\r' | b'\n') {
        end -= 1;
    }
    let line = &line[..end];
    let (time, mut at) = match fixed_epoch_time(line) {
        Some(found) => found,
        None => {
            let mut at = 0;
            while at < end && line[at] == b' ' {
                at += 1;
            }
            let (time, rest) = parse_time(&line[at..])?;
            (time, end - rest.len())
        }
    };
    // After the time come two or three whitespace-separated fields (uid?, pid, tid), then the
    // priority letter standing alone, then the tag up to the first ": ".
    let mut fields: [(usize, usize); 3] = [(0, 0); 3];
    let mut count = 0;
    let level = loop {
        while at < end && line[at] == b' ' {
            at += 1;
        }
        let start = at;
        while at < end && line[at] != b' ' {
            at += 1;
        }
        if start == at {
            return None;
        }
        if count >= 2 && at - start == 1 && is_level(line[start]) {
            break line[start] as char;
        }
        if count == 3 {
            return None;
        }
        fields[count] = (start, at);
        count += 1;
    };
    let field = |index: usize| &line[fields[index].0..fields[index].1];
    let (uid, pid, tid) = match count {
        2 => (None, field(0), field(1)),
        3 => (Some(parse_uid_field(field(0))?), field(1), field(2)),
        _ => return None,
    };
    let pid = decimal_u32(pid)?;
    let tid = decimal_u32(tid)?;
    if at < end && line[at] == b' ' {
        at += 1;
    }
    Some(LogcatHead {
        time,
        uid,
        pid,
        tid,
        level,
        line,
        tag_at: at,
    })
}

/// The time of a line in logcat's common `-v epoch` layout, read at fixed places (as
/// [`epoch_uid_field`] finds the uid): seconds right-aligned in 19 columns after at least one
/// space, a `.`, 3 digits and a space; and where the time ends. Exactly what the general
/// reading (`parse_time` after the spaces) gives such a line, without its searching.
#[inline]
fn fixed_epoch_time(line: &[u8]) -> Option<(LogTime, usize)> {
    let prefix = line.get(..24)?;
    if prefix[0] != b' '
        || prefix[19] != b'.'
        || prefix[23] != b' '
        || !is_epoch_prefix(&prefix[..23])
    {
        return None;
    }
    let spaces = prefix.iter().take_while(|&&b| b == b' ').count();
    let seconds = prefix[spaces..19]
        .iter()
        .fold(0i64, |value, digit| value * 10 + i64::from(digit - b'0'));
    let millis = prefix[20..23]
        .iter()
        .fold(0u32, |value, digit| value * 10 + u32::from(digit - b'0'));
    Some((
        LogTime::Epoch {
            seconds,
            nanos: millis * 1_000_000,
        },
        23,
    ))
}

/// Where the tag ends and the text starts in the rest of a line after its level: at the first
/// `": "`, or a final `:` with no text. Both ASCII, so the split falls on character boundaries.
fn tag_split(rest: &[u8]) -> Option<(usize, usize)> {
    let colon = memchr::memchr_iter(b':', rest).find(|&at| rest.get(at + 1) == Some(&b' '));
    match colon {
        Some(at) => Some((at, at + 2)),
        None if rest.last() == Some(&b':') => Some((rest.len() - 1, rest.len())),
        None => None,
    }
}

fn is_level(byte: u8) -> bool {
    matches!(byte, b'V' | b'D' | b'I' | b'W' | b'E' | b'F' | b'A' | b'S')
}

/// `str::parse::<u32>` written out (a leading `+`, then decimal digits, no overflow), because the
/// generic `from_str_radix` was the largest cost of reading a line: five numbers on every line.
fn decimal_u32(text: &[u8]) -> Option<u32> {
    let digits = text.strip_prefix(b"+").unwrap_or(text);
    if digits.is_empty() {
        return None;
    }
    if digits.len() <= 9 {
        // Nine digits never overflow: the common case (pids, tids, uids) without the checks.
        let mut value: u32 = 0;
        for &digit in digits {
            if !digit.is_ascii_digit() {
                return None;
            }
            value = value * 10 + u32::from(digit - b'0');
        }
        return Some(value);
    }
    let mut value: u32 = 0;
    for &digit in digits {
        if !digit.is_ascii_digit() {
            return None;
        }
        value = value
            .checked_mul(10)?
            .checked_add(u32::from(digit - b'0'))?;
    }
    Some(value)
}

fn parse_uid_field(token: &[u8]) -> Option<UidFieldRef<'_>> {
    if token.iter().all(u8::is_ascii_digit) {
        decimal_u32(token).map(UidFieldRef::Number)
    } else if token
        .iter()
        .all(|b| b.is_ascii_alphanumeric() || *b == b'_')
    {
        // ASCII, so always UTF-8.
        std::str::from_utf8(token).ok().map(UidFieldRef::Name)
    } else {
        None
    }
}

/// Reads `SSSSSSSSSS.fff` (epoch) or `MM-DD HH:MM:SS.fff` (threadtime) at the start of `text`.
fn parse_time(text: &[u8]) -> Option<(LogTime, &[u8])> {
    let digits = text.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 2 && text.get(2) == Some(&b'-') {
        // MM-DD HH:MM:SS.fff
        let head = text.get(..18)?;
        if head[5] != b' ' || head[8] != b':' || head[11] != b':' || head[14] != b'.' {
            return None;
        }
        // Two characters as `str::parse::<u8>` reads them (a `+` and one digit too).
        let number = |range: std::ops::Range<usize>| -> Option<u8> {
            decimal_u32(&head[range]).and_then(|value| u8::try_from(value).ok())
        };
        let month = number(0..2)?;
        let day = number(3..5)?;
        let hour = number(6..8)?;
        let minute = number(9..11)?;
        let second = number(12..14)?;
        let (nanos, rest) = parse_fraction(&text[15..])?;
        if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
            return None;
        }
        return Some((
            LogTime::MonthDay {
                month,
                day,
                hour,
                minute,
                second: second.min(60),
                nanos,
            },
            rest,
        ));
    }
    if digits == 0 || digits > 18 || text.get(digits) != Some(&b'.') {
        return None;
    }
    // At most 18 digits: they fit an i64.
    let seconds = text[..digits]
        .iter()
        .fold(0i64, |value, digit| value * 10 + i64::from(digit - b'0'));
    let (nanos, rest) = parse_fraction(&text[digits + 1..])?;
    Some((LogTime::Epoch { seconds, nanos }, rest))
}

/// Reads 3, 6 or 9 fraction digits followed by a space.
fn parse_fraction(text: &[u8]) -> Option<(u32, &[u8])> {
    let count = text.iter().take_while(|b| b.is_ascii_digit()).count();
    if !matches!(count, 3 | 6 | 9) || text.get(count) != Some(&b' ') {
        return None;
    }
    // At most 9 digits: they fit a u32.
    let value = text[..count]
        .iter()
        .fold(0u32, |value, digit| value * 10 + u32::from(digit - b'0'));
    let scale = 10u32.pow(9 - count as u32);
    Some((value * scale, &text[count..]))
}

/// The uid of a `-v epoch -v uid` line, read without parsing the rest of the line.
///
/// It returns the uid field's bytes (`b"10127"` or `b"shell"`), or `None` when the line does not
/// start with an epoch time followed by a uid. Lines of other layouts give `None` or a wrong
/// field, so use it only on output of `logcat -v epoch -v uid`.
#[inline]
pub fn epoch_uid_field(line: &[u8]) -> Option<&[u8]> {
    // The seconds are right-aligned in 19 columns and the default fraction has 3 digits, so the
    // common line has its uid at a fixed place: check that first.
    if line.len() > 30 && line[19] == b'.' && line[23] == b' ' && is_epoch_prefix(&line[..23]) {
        let field = &line[24..];
        let skip = field.iter().take_while(|&&b| b == b' ').count();
        let field = &field[skip..];
        let end = memchr::memchr(b' ', field)?;
        return Some(&field[..end]);
    }
    slow_epoch_uid_field(line)
}

/// Whether 23 bytes are `<spaces><digits>.<3 digits>`: right-aligned seconds and milliseconds.
#[inline]
fn is_epoch_prefix(prefix: &[u8]) -> bool {
    let spaces = prefix.iter().take_while(|&&b| b == b' ').count();
    spaces < 19
        && prefix[spaces..19].iter().all(u8::is_ascii_digit)
        && prefix[20..23].iter().all(u8::is_ascii_digit)
}

/// The general case of [`epoch_uid_field`]: any indentation and fraction width.
fn slow_epoch_uid_field(line: &[u8]) -> Option<&[u8]> {
    let skip = line.iter().take_while(|&&b| b == b' ').count();
    let rest = &line[skip..];
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || rest.get(digits) != Some(&b'.') {
        return None;
    }
    let rest = &rest[digits + 1..];
    let fraction = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if fraction == 0 || rest.get(fraction) != Some(&b' ') {
        return None;
    }
    let rest = &rest[fraction..];
    let skip = rest.iter().take_while(|&&b| b == b' ').count();
    let rest = &rest[skip..];
    let end = memchr::memchr(b' ', rest)?;
    if end == 0 {
        return None;
    }
    Some(&rest[..end])
}

/// Decides quickly whether `-v epoch -v uid` lines belong to one uid.
///
/// Build it once per filter; [`UidFilter::matches`] compares bytes only.
#[derive(Debug, Clone)]
pub struct UidFilter {
    number: Vec<u8>,
    name: Option<&'static str>,
}

impl UidFilter {
    /// A filter for `uid`. System uids with a short name (0 is `root`) also match their name.
    pub fn new(uid: u32) -> Self {
        let name = [
            "root", "radio", "nfc", "shell", "logd", "audio", "media", "vpn", "drm", "gps", "wifi",
            "dhcp", "keystore", "usb", "nobody",
        ]
        .into_iter()
        .find(|name| short_uid_name_number(name) == Some(uid));
        UidFilter {
            number: uid.to_string().into_bytes(),
            name,
        }
    }

    /// Whether this line's uid is the filter's.
    #[inline]
    pub fn matches(&self, line: &[u8]) -> bool {
        epoch_uid_field(line).is_some_and(|field| self.matches_field(field))
    }

    /// Whether a uid field ([`epoch_uid_field`]'s) is the filter's uid, so a reader that also
    /// wants to know about other uids' lines reads each field once.
    #[inline]
    pub fn matches_field(&self, field: &[u8]) -> bool {
        field == self.number.as_slice() || self.name.is_some_and(|name| field == name.as_bytes())
    }

    /// The lines of `dump` (without their newlines) whose uid is the filter's.
    ///
    /// A line can only match if the uid's digits occur in it, so the dump is searched for them
    /// with `memchr::memmem` (vectorised), and only the lines with a hit are checked with
    /// [`UidFilter::matches`]. Lines without the digits are skipped at memory speed.
    pub fn filter<'a>(&'a self, dump: &'a [u8]) -> Box<dyn Iterator<Item = &'a [u8]> + 'a> {
        if self.name.is_some() {
            // A uid printed as a name can be matched by two spellings: check every line.
            return Box::new(split_lines(dump).filter(move |line| self.matches(line)));
        }
        let finder = memchr::memmem::Finder::new(self.number.as_slice());
        let mut position = 0usize;
        Box::new(std::iter::from_fn(move || {
            while position < dump.len() {
                let hit = position + finder.find(&dump[position..])?;
                let start = memchr::memrchr(b'\n', &dump[position..hit])
                    .map_or(position, |at| position + at + 1);
                let end = memchr::memchr(b'\n', &dump[hit..]).map_or(dump.len(), |at| hit + at);
                position = end + 1;
                let line = &dump[start..end];
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                if self.matches(line) {
                    return Some(line);
                }
            }
            None
        }))
    }

    /// The same lines as [`UidFilter::filter`], newest first: from the end of the dump back.
    ///
    /// A reader that wants the last lines of a long dump stops after them instead of walking
    /// every line before. It steps back a line at a time with `memchr::memrchr` and checks each
    /// line's uid at its fixed place ([`UidFilter::matches`]): a backwards substring search
    /// (`memmem::FinderRev`, which has no vectorised prefilter) cost several times more.
    pub fn filter_rev<'a>(&'a self, dump: &'a [u8]) -> impl Iterator<Item = &'a [u8]> + 'a {
        split_lines_rev(dump).filter(move |line| self.matches(line))
    }
}

/// The lines of [`split_lines`], last first.
pub fn split_lines_rev(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    // A final newline ends the last line; it does not start an empty one.
    let mut rest = if bytes.is_empty() {
        None
    } else {
        Some(bytes.strip_suffix(b"\n").unwrap_or(bytes))
    };
    std::iter::from_fn(move || {
        let body = rest?;
        let line = match memchr::memrchr(b'\n', body) {
            Some(at) => {
                rest = Some(&body[..at]);
                &body[at + 1..]
            }
            None => {
                rest = None;
                body
            }
        };
        Some(line.strip_suffix(b"\r").unwrap_or(line))
    })
}

/// Splits bytes into lines with `memchr`, dropping the `\n` (and a `\r` before it).
pub fn split_lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = bytes;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let (line, next) = match memchr::memchr(b'\n', rest) {
            Some(at) => (&rest[..at], &rest[at + 1..]),
            None => (rest, &rest[rest.len()..]),
        };
        rest = next;
        Some(line.strip_suffix(b"\r").unwrap_or(line))
    })
}

/// Parses every line of a dump; lines that are not log lines are skipped.
pub fn parse_lines(text: &str) -> Vec<LogcatLine> {
    text.lines()
        .filter_map(|line| match parse_line(line) {
            LogcatItem::Line(parsed) => Some(parsed),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The time as it was read with `str` patterns (`str::parse`): the reference for the byte
    /// reading and its fixed-place fast path.
    fn parse_time_with_patterns(text: &str) -> Option<(LogTime, &str)> {
        let bytes = text.as_bytes();
        let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
        let fraction = |text: &'_ str| -> Option<(u32, usize)> {
            let count = text.bytes().take_while(u8::is_ascii_digit).count();
            if !matches!(count, 3 | 6 | 9) || text.as_bytes().get(count) != Some(&b' ') {
                return None;
            }
            let value: u32 = text[..count].parse().ok()?;
            Some((value * 10u32.pow(9 - count as u32), count))
        };
        if digits == 2 && bytes.get(2) == Some(&b'-') {
            let head = text.get(..18)?;
            let hb = head.as_bytes();
            if hb[5] != b' ' || hb[8] != b':' || hb[11] != b':' || hb[14] != b'.' {
                return None;
            }
            let number =
                |range: std::ops::Range<usize>| -> Option<u8> { text.get(range)?.parse().ok() };
            let (month, day) = (number(0..2)?, number(3..5)?);
            let (hour, minute, second) = (number(6..8)?, number(9..11)?, number(12..14)?);
            let (nanos, count) = fraction(&text[15..])?;
            if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
                return None;
            }
            let time = LogTime::MonthDay {
                month,
                day,
                hour,
                minute,
                second: second.min(60),
                nanos,
            };
            return Some((time, &text[15 + count..]));
        }
        if digits == 0 || digits > 18 || bytes.get(digits) != Some(&b'.') {
            return None;
        }
        let seconds: i64 = text[..digits].parse().ok()?;
        let (nanos, count) = fraction(&text[digits + 1..])?;
        Some((
            LogTime::Epoch { seconds, nanos },
            &text[digits + 1 + count..],
        ))
    }

    /// `parse_log_line` as it was written with `str` patterns: the reference for the byte loop.
    fn parse_log_line_with_patterns(line: &str) -> Option<LogcatLineRef<'_>> {
        let line = line.trim_end_matches(['\r', '\n']);
        let start = line.len() - line.trim_start_matches(' ').len();
        let rest = &line[start..];
        let (time, rest) = parse_time_with_patterns(rest)?;
        // After the time come two or three whitespace-separated fields (uid?, pid, tid), then the
        // priority letter standing alone, then the tag up to the first ": ".
        let mut fields: [&str; 3] = [""; 3];
        let mut count = 0;
        let mut rest = rest;
        let level = loop {
            rest = rest.trim_start_matches(' ');
            let end = rest.find(' ').unwrap_or(rest.len());
            let token = &rest[..end];
            if token.is_empty() {
                return None;
            }
            if count >= 2 && token.len() == 1 && is_level(token.as_bytes()[0]) {
                rest = &rest[end..];
                break token.as_bytes()[0] as char;
            }
            if count == 3 {
                return None;
            }
            fields[count] = token;
            count += 1;
            rest = &rest[end..];
        };
        let (uid, pid, tid) = match count {
            2 => (None, fields[0], fields[1]),
            3 => (
                Some(parse_uid_field(fields[0].as_bytes())?),
                fields[1],
                fields[2],
            ),
            _ => return None,
        };
        let pid = pid.parse().ok()?;
        let tid = tid.parse().ok()?;
        let rest = rest.strip_prefix(' ').unwrap_or(rest);
        let (tag, text) = match rest.find(": ") {
            Some(at) => (&rest[..at], &rest[at + 2..]),
            None => match rest.strip_suffix(':') {
                Some(tag) => (tag, ""),
                None => return None,
            },
        };
        Some(LogcatLineRef {
            time,
            uid,
            pid,
            tid,
            level,
            tag: tag.trim_end(),
            text,
        })
    }

    /// Log lines mostly well formed, each part now and then odd: the places where the two
    /// readers could part.
    fn log_like_line() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let time = prop_oneof![
            4 => "[ ]{0,10}[0-9]{1,10}\\.([0-9]{3}|[0-9]{6}|[0-9]{9})",
            // `-v epoch`'s own layout (seconds right-aligned in 19 columns), read at fixed places.
            3 => ("[0-9]{1,19}", "[0-9]{3}").prop_map(|(s, f)| format!("{s:>19}.{f}")),
            2 => "(0[1-9]|1[0-2])-[0-3][0-9] [0-2][0-9]:[0-5][0-9]:[0-6][0-9]\\.[0-9]{3}",
            1 => "[ 0-9.:+-]{0,22}",
        ];
        let uid = prop_oneof![
            3 => "[0-9]{1,7}",
            1 => "(root|shell|u0_a1|x+y|99999999999)",
            2 => Just(String::new()),
        ];
        let gap = prop_oneof![6 => "[ ]{1,3}", 1 => "[\t ]{0,2}"];
        let number = prop_oneof![6 => "[0-9]{1,5}", 1 => "[+0-9a]{0,3}"];
        let level = prop_oneof![6 => "[VDIWEFAS]", 1 => "[a-zX]{0,2}"];
        let tag = "[A-Za-z :\\[\\]é]{0,12}";
        let colon = prop_oneof![4 => Just(": "), 1 => Just(":"), 1 => Just(" : "), 1 => Just("")];
        let text = "[ -~é\t]{0,20}";
        let end = prop_oneof![4 => Just(""), 1 => Just("\r"), 1 => Just("\r\n"), 1 => Just(" ")];
        let head = (
            time,
            gap.clone(),
            uid,
            gap.clone(),
            number.clone(),
            gap.clone(),
            number,
        );
        let tail = (gap.clone(), level, gap, tag, colon, text, end);
        (head, tail).prop_map(
            |((time, g1, uid, g2, pid, g3, tid), (g4, level, g5, tag, colon, text, end))| {
                let uid = if uid.is_empty() {
                    String::new()
                } else {
                    format!("{uid}{g2}")
                };
                format!("{time}{g1}{uid}{pid}{g3}{tid}{g4}{level}{g5}{tag}{colon}{text}{end}")
            },
        )
    }

    proptest::proptest! {
        #[test]
        fn the_byte_loop_reads_as_the_patterns_did(line in proptest::prop_oneof![
            1 => "[ -~\t]{0,80}",
            4 => log_like_line(),
        ]) {
            proptest::prop_assert_eq!(parse_log_line(&line), parse_log_line_with_patterns(&line), "{:?}", line);
        }
    }

    /// A log-like line with bytes that are not UTF-8 (a lone continuation byte, a cut-off
    /// sequence, `\xff`) put anywhere, head or text.
    fn damaged_line() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        let bad: Vec<&'static [u8]> = vec![b"\x80", b"\xff", b"\xc3", b"\xe2\x82", b"\xf0\x9f\x98"];
        let bad = prop::sample::select(bad);
        (
            log_like_line(),
            prop::collection::vec((any::<prop::sample::Index>(), bad), 0..3),
        )
            .prop_map(|(line, damage)| {
                let mut bytes = line.into_bytes();
                for (at, bad) in damage {
                    let at = at.index(bytes.len() + 1);
                    bytes.splice(at..at, bad.iter().copied());
                }
                bytes
            })
    }

    /// Arbitrary bytes, log-like lines, and damaged ones.
    fn any_line() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        prop_oneof![
            1 => prop::collection::vec(any::<u8>(), 0..80),
            2 => log_like_line().prop_map(String::into_bytes),
            2 => damaged_line(),
        ]
    }

    proptest::proptest! {
        /// The head alone decides what the whole line does: a head with a tag is exactly a line
        /// `parse_log_line` accepts, with the same fields, on the line's bytes as on its text
        /// read with replacements.
        #[test]
        fn a_head_with_a_tag_is_the_line(line in any_line()) {
            let text = String::from_utf8_lossy(&line);
            let whole = parse_log_line(&text).map(|l| (l.time, l.uid.map(|u| u.to_field()), l.pid, l.tid, l.level));
            let head = parse_log_head(&line)
                .filter(LogcatHead::has_tag)
                .map(|h| (h.time, h.uid.map(|u| u.to_field()), h.pid, h.tid, h.level));
            proptest::prop_assert_eq!(head, whole, "{:?}", text);
        }
    }

    fn line(text: &str) -> LogcatLine {
        match parse_line(text) {
            LogcatItem::Line(parsed) => parsed,
            other => panic!("{text:?} gave {other:?}"),
        }
    }

    #[test]
    fn threadtime_with_uid_name_and_number() {
        let parsed = line("05-20 07:44:12.591 shell  1390  1390 I adbd    : started");
        assert_eq!(parsed.uid, Some(UidField::Name("shell".into())));
        assert_eq!(
            parsed.uid.as_ref().and_then(UidField::as_number),
            Some(2000)
        );
        let parsed = line("05-20 08:02:10.572 10127 23031 23285 E AndroidRuntime: boom");
        assert_eq!(parsed.uid, Some(UidField::Number(10127)));
        assert_eq!(parsed.tag, "AndroidRuntime");
    }

    #[test]
    fn threadtime_without_uid_and_tag_with_spaces() {
        let parsed = line("05-20 08:02:10.572 23031 23285 D VRR [OPlusGameStatusManager]: x: y");
        assert_eq!(parsed.uid, None);
        assert_eq!(parsed.tag, "VRR [OPlusGameStatusManager]");
        assert_eq!(parsed.text, "x: y");
    }

    #[test]
    fn tab_in_stack_lines_is_kept() {
        let parsed = line("05-20 08:02:10.572 23031 23031 E AndroidRuntime: \tat a.B.c(B.java:1)");
        assert_eq!(parsed.text, "\tat a.B.c(B.java:1)");
    }

    #[test]
    fn separators() {
        assert_eq!(
            parse_line("--------- beginning of crash  "),
            LogcatItem::Separator("crash".into())
        );
        assert_eq!(
            parse_line("--------- switch to main"),
            LogcatItem::Separator("main".into())
        );
    }

    #[test]
    fn epoch_fast_path_agrees_with_full_parse() {
        let text = "         1783239714.320 10127  8811 16322 I tag: m";
        assert_eq!(epoch_uid_field(text.as_bytes()), Some(&b"10127"[..]));
        let text = "         1783239714.320  root   811   822 I tag: m";
        assert_eq!(epoch_uid_field(text.as_bytes()), Some(&b"root"[..]));
        let text = "1783239714.320123 1010127  8811 16322 I tag: m";
        assert_eq!(epoch_uid_field(text.as_bytes()), Some(&b"1010127"[..]));
        assert!(UidFilter::new(0).matches(b"         1783239714.320  root   811   822 I t: m"));
        assert!(!UidFilter::new(1012).matches(b"         1783239714.320 10127 1 1 I t: m"));
        assert_eq!(
            epoch_uid_field(b"05-20 07:44:12.591 shell 1 1 I t: m"),
            None
        );
    }

    proptest::proptest! {
        #[test]
        fn decimal_u32_is_str_parse(text in "[+-]?[0-9+]{0,12}") {
            proptest::prop_assert_eq!(decimal_u32(text.as_bytes()), text.parse::<u32>().ok());
        }
    }

    #[test]
    fn the_last_second_of_9999_east_of_utc_is_no_time() {
        let east = time::UtcOffset::from_hms(1, 0, 0).unwrap();
        let parsed = line("          253402300799.500 10127  1  1 I t: m");
        assert_eq!(parsed.time.to_offset_date_time(None, east), None);
        assert!(
            parsed
                .time
                .to_offset_date_time(None, time::UtcOffset::UTC)
                .is_some()
        );
    }

    #[test]
    fn month_day_time_needs_a_year() {
        let parsed = line("12-31 23:59:59.999  1390  1390 I t: m");
        assert_eq!(
            parsed.time.to_offset_date_time(None, time::UtcOffset::UTC),
            None
        );
        let when = parsed
            .time
            .to_offset_date_time(Some(2026), time::UtcOffset::UTC);
        assert_eq!(when.map(|t| t.year()), Some(2026));
    }
}
