//! `logcat`: its options as AOSP's `logcat.cpp` parses them, the selection logd makes
//! (buffers, `--pid`, the tail) and the filters logcat applies after (`--uid`, priorities), the
//! line layouts, and following: without `-d`/`-t` it prints what is there, then every new line
//! as the model appends it, until the host closes the stream or `-m` lines were printed.
//!
//! Part of the commands layer: `commands::run`'s table names it; it reads the model
//! (`phone.rs`) and prints through the formats (`format.rs`).

use std::fmt::Write as _;
use std::time::Duration;

use crate::format::{self, LineFormat};
use crate::model::{AndroidVersion, Buffer, LogEntry, Priority};
use crate::phone::SimPhone;
use crate::sink::{Closed, Sink};

/// The parsed options of one `logcat` call.
#[derive(Debug, Default)]
struct LogcatOptions {
    dump: bool,
    clear: bool,
    get_size: bool,
    set_size: Option<usize>,
    dividers: bool,
    buffers: Vec<Buffer>,
    format: LineFormat,
    tail_count: Option<usize>,
    tail_time_ns: Option<i128>,
    uids: Option<Vec<u32>>,
    pid: Option<u32>,
    max_count: Option<usize>,
    silent_default: bool,
    filters: Vec<(String, Option<Priority>)>,
}

fn parse_size(text: &str) -> Option<usize> {
    let (digits, multiplier) = match text.chars().last()? {
        'K' | 'k' => (&text[..text.len() - 1], 1024),
        'M' | 'm' => (&text[..text.len() - 1], 1024 * 1024),
        _ => (text, 1),
    };
    digits.parse::<usize>().ok().map(|value| value * multiplier)
}

/// Parses `MM-DD hh:mm:ss.mmm` (this year, local time) or `sssss.mmm` (epoch) as logcat's `-t`.
fn parse_tail_time(text: &str, phone: &SimPhone) -> Option<i128> {
    if let Some((seconds, fraction)) = text.split_once('.')
        && !seconds.contains(' ')
        && !seconds.contains(':')
    {
        let seconds: i128 = seconds.parse().ok()?;
        let digits = fraction.len().min(9);
        let fraction: i128 = fraction.get(..digits)?.parse().ok()?;
        let scale = 10i128.pow(9 - digits as u32);
        return Some(seconds * 1_000_000_000 + fraction * scale);
    }
    let profile = phone.profile();
    let now = format::civil(phone.now_ns(), profile.utc_offset_minutes);
    let (date_part, time_part) = text.split_once(' ')?;
    let (month, day) = date_part.split_once('-')?;
    let mut fields = time_part.split([':', '.']);
    let hour: u8 = fields.next()?.parse().ok()?;
    let minute: u8 = fields.next()?.parse().ok()?;
    let second: u8 = fields.next()?.parse().ok()?;
    let millis: u32 = fields.next().unwrap_or("0").parse().ok()?;
    let month = time::Month::try_from(month.parse::<u8>().ok()?).ok()?;
    let date = time::Date::from_calendar_date(now.year(), month, day.parse().ok()?).ok()?;
    let clock = time::Time::from_hms_milli(hour, minute, second, millis as u16).ok()?;
    let local = time::PrimitiveDateTime::new(date, clock).assume_offset(now.offset());
    Some(local.unix_timestamp_nanos())
}

enum LogcatParse {
    Options(LogcatOptions),
    Fail(String, u8),
}

/// The separators logcat accepts inside `-b`, `-v` and `--uid` lists.
const LIST_DELIMITERS: &[char] = &[',', ':', ';', ' ', '\t', '\n', '\r', '\x0c'];

/// What Android 10's logcat prints for an option it does not know: getopt leaves `optopt` at 0,
/// so `"Unrecognized Option %c\n"` writes a NUL byte, then the usage follows (from AOSP source).
const ANDROID10_UNRECOGNIZED: &str = "Unrecognized Option \0\nUsage: logcat [options] [filterspecs]\noptions include:\n  -s              Set default filter to silent. Equivalent to filterspec '*:S'\n";

fn parse_logcat(phone: &SimPhone, args: &[String]) -> LogcatParse {
    let profile = phone.profile();
    let android10 = profile.android == AndroidVersion::Android10;
    let mut options = LogcatOptions::default();
    let mut index = 0;
    // Messages follow AOSP logcat's `error(EXIT_FAILURE, 0, …)`: "logcat: " + text, exit 1.
    let fail = |message: String| LogcatParse::Fail(format!("logcat: {message}\n"), 1);
    let mut got_t = false;
    while index < args.len() {
        let arg = args[index].clone();
        // The option's value: attached (`-tN`, `--uid=N`) or the next word.
        let mut value_of = |attached: Option<String>| -> Option<String> {
            if let Some(value) = attached {
                return Some(value);
            }
            index += 1;
            args.get(index).cloned()
        };
        if let Some(long) = arg.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((name, value)) => (name.to_string(), Some(value.to_string())),
                None => (long.to_string(), None),
            };
            let known = matches!(
                name.as_str(),
                "pid"
                    | "dump"
                    | "clear"
                    | "dividers"
                    | "buffer"
                    | "format"
                    | "max-count"
                    | "tail"
                    | "head"
            ) || (name == "uid" && !android10);
            if !known {
                if android10 {
                    return LogcatParse::Fail(ANDROID10_UNRECOGNIZED.to_string(), 1);
                }
                return fail(format!("Unknown option '{arg}'."));
            }
            let needs_value = !matches!(name.as_str(), "dump" | "clear" | "dividers");
            let value = if needs_value {
                match value_of(attached) {
                    Some(value) => value,
                    None => return fail(format!("Option '{arg}' needs an argument.")),
                }
            } else {
                String::new()
            };
            if let Err(message) = apply_long(&name, &value, &mut options, &mut got_t, phone) {
                return fail(message);
            }
        } else if arg.starts_with('-') && arg.len() >= 2 {
            let flag = arg.chars().nth(1).unwrap_or('-');
            // What follows the flag letter, split on a character boundary so any input is safe.
            let rest: String = arg.chars().skip(2).collect();
            let attached = if rest.is_empty() { None } else { Some(rest) };
            let takes_value = matches!(
                flag,
                'b' | 'v' | 't' | 'T' | 'G' | 'm' | 'e' | 'f' | 'r' | 'n' | 'P'
            );
            let value = if takes_value {
                match value_of(attached) {
                    Some(value) => value,
                    None => return fail(format!("Option '{arg}' needs an argument.")),
                }
            } else {
                String::new()
            };
            if let Err(failed) = apply_short(flag, &value, &arg, &mut options, &mut got_t, phone) {
                return *failed;
            }
        } else {
            match filterspec(&arg) {
                Ok(filter) => options.filters.push(filter),
                Err(message) => return fail(message),
            }
        }
        index += 1;
    }
    if options.buffers.is_empty() {
        options.buffers = vec![Buffer::Main, Buffer::System, Buffer::Crash];
    }
    if options.max_count.is_some() && got_t {
        return fail("Cannot use -m (--max-count) and -t together.".to_string());
    }
    LogcatParse::Options(options)
}

/// Applies one short option (`-d`, `-b main`, `-t N`, …) with its value: the failure is
/// logcat's message and exit code.
fn apply_short(
    flag: char,
    value: &str,
    arg: &str,
    options: &mut LogcatOptions,
    got_t: &mut bool,
    phone: &SimPhone,
) -> Result<(), Box<LogcatParse>> {
    let android10 = phone.profile().android == AndroidVersion::Android10;
    match flag {
        'd' => options.dump = true,
        'c' => options.clear = true,
        'g' => options.get_size = true,
        'D' => options.dividers = true,
        's' => options.silent_default = true,
        'G' => match parse_size(value) {
            Some(size) if size >= 1 => options.set_size = Some(size),
            _ => {
                return Err(Box::new(failure(
                    "-G must be specified as <num><multiplier>.".to_string(),
                )));
            }
        },
        'b' => add_buffers(options, value).map_err(|message| Box::new(failure(message)))?,
        'v' => {
            set_formats(&mut options.format, value).map_err(|message| Box::new(failure(message)))?
        }
        't' | 'T' => {
            if flag == 't' {
                *got_t = true;
                options.dump = true;
            }
            set_tail(options, value, flag, phone).map_err(|message| Box::new(failure(message)))?;
        }
        'm' => match value.parse::<usize>() {
            Ok(count) if count >= 1 => options.max_count = Some(count),
            _ => {
                return Err(Box::new(failure(format!(
                    "-m '{value}' isn't an integer greater than zero."
                ))));
            }
        },
        'e' | 'f' | 'r' | 'n' | 'P' => {
            return Err(Box::new(failure(format!(
                "Option '-{flag}' is not modelled by the simulator."
            ))));
        }
        _ if android10 => {
            return Err(Box::new(LogcatParse::Fail(
                ANDROID10_UNRECOGNIZED.replace('\0', &flag.to_string()),
                1,
            )));
        }
        _ => return Err(Box::new(failure(format!("Unknown option '{arg}'.")))),
    }
    Ok(())
}

/// A failure as AOSP logcat's `error(EXIT_FAILURE, 0, …)` prints it: "logcat: " + text, exit 1.
fn failure(message: String) -> LogcatParse {
    LogcatParse::Fail(format!("logcat: {message}\n"), 1)
}

/// Applies one long option (`--uid=…`, `--pid`, `--buffer`, …) with its value; the error is
/// logcat's message without its `logcat: ` prefix.
fn apply_long(
    name: &str,
    value: &str,
    options: &mut LogcatOptions,
    got_t: &mut bool,
    phone: &SimPhone,
) -> Result<(), String> {
    match name {
        "uid" => {
            let mut uids = Vec::new();
            for part in value.split(LIST_DELIMITERS).filter(|part| !part.is_empty()) {
                match part.parse::<u32>() {
                    Ok(uid) => uids.push(uid),
                    Err(_) => return Err(format!("Unable to parse UID '{part}'")),
                }
            }
            options.uids.get_or_insert_with(Vec::new).extend(uids);
        }
        "pid" => {
            if options.pid.is_some() {
                return Err("Only one --pid argument can be provided.".to_string());
            }
            match value.parse::<u32>() {
                Ok(pid) if pid >= 1 => options.pid = Some(pid),
                _ => return Err(format!("pid '{value}' out of range.")),
            }
        }
        "dump" => options.dump = true,
        "clear" => options.clear = true,
        "dividers" => options.dividers = true,
        "buffer" => {
            add_buffers(options, value)?;
        }
        "format" => {
            set_formats(&mut options.format, value)?;
        }
        "tail" => {
            *got_t = true;
            options.dump = true;
            set_tail(options, value, 't', phone)?;
        }
        _ => match value.parse::<usize>() {
            Ok(count) if count >= 1 => options.max_count = Some(count),
            _ => return Err(format!("-m '{value}' isn't an integer greater than zero.")),
        },
    }
    Ok(())
}

/// A filterspec `TAG[:PRIORITY]` (`S` silences the tag); the error is logcat's message
/// without its `logcat: ` prefix.
fn filterspec(arg: &str) -> Result<(String, Option<Priority>), String> {
    let (tag, level) = match arg.rsplit_once(':') {
        Some((tag, level)) => (tag.to_string(), level.to_string()),
        None => (arg.to_string(), "V".to_string()),
    };
    let mut letters = level.chars();
    let priority = match (
        letters.next().map(|c| c.to_ascii_uppercase()),
        letters.next(),
    ) {
        (Some('S'), None) => None,
        (Some(letter), None) => match Priority::from_letter(letter) {
            Some(priority) => Some(priority),
            None => return Err(format!("Invalid filter expression '{arg}'.")),
        },
        _ => return Err(format!("Invalid filter expression '{arg}'.")),
    };
    Ok((tag, priority))
}

/// Applies `-t`/`-T`: a count, or a time.
fn set_tail(
    options: &mut LogcatOptions,
    value: &str,
    flag: char,
    phone: &SimPhone,
) -> Result<(), String> {
    if !value.is_empty() && value.chars().all(|c| c.is_ascii_digit()) {
        // logcat warns and uses 1 for a zero or out-of-range count; the warning goes to stderr,
        // which the simulator does not model here.
        options.tail_count = Some(
            value
                .parse::<usize>()
                .ok()
                .filter(|count| *count >= 1)
                .unwrap_or(1),
        );
        Ok(())
    } else if let Some(time) = parse_tail_time(value, phone) {
        options.tail_time_ns = Some(time);
        Ok(())
    } else {
        Err(format!("-{flag} '{value}' not in time format."))
    }
}

fn add_buffers(options: &mut LogcatOptions, value: &str) -> Result<(), String> {
    for name in value.split(LIST_DELIMITERS).filter(|name| !name.is_empty()) {
        match name {
            "all" => options.buffers = Buffer::ALL.to_vec(),
            "default" => {
                for buffer in [Buffer::Main, Buffer::System, Buffer::Crash] {
                    if !options.buffers.contains(&buffer) {
                        options.buffers.push(buffer);
                    }
                }
            }
            other => match Buffer::from_name(other) {
                Some(buffer) => {
                    if !options.buffers.contains(&buffer) {
                        options.buffers.push(buffer);
                    }
                }
                None => return Err(format!("Unknown -b buffer '{other}'.")),
            },
        }
    }
    Ok(())
}

fn set_formats(format: &mut LineFormat, value: &str) -> Result<(), String> {
    for name in value.split(LIST_DELIMITERS).filter(|name| !name.is_empty()) {
        if !set_format(format, name) {
            return Err(format!("Invalid -v '{name}'."));
        }
    }
    Ok(())
}

fn set_format(format: &mut LineFormat, value: &str) -> bool {
    match value {
        "threadtime" => format.brief = false,
        "brief" => format.brief = true,
        "epoch" => format.epoch = true,
        "uid" => format.uid = true,
        "year" => format.year = true,
        "zone" => format.zone = true,
        "printable" | "color" | "descriptive" | "UTC" => {}
        _ => return false,
    }
    true
}

fn priority_allows(options: &LogcatOptions, entry: &LogEntry) -> bool {
    let rule = options
        .filters
        .iter()
        .rev()
        .find(|(tag, _)| tag != "*" && *tag == entry.tag);
    let threshold = match rule {
        Some((_, priority)) => *priority,
        None => match options.filters.iter().rev().find(|(tag, _)| tag == "*") {
            Some((_, priority)) => *priority,
            None if options.silent_default => None,
            None => Some(Priority::Verbose),
        },
    };
    threshold.is_some_and(|threshold| entry.priority >= threshold)
}

/// Collects the entries logd sends (buffers, pid, tail), then applies logcat's own `--uid`
/// filter. AOSP logcat filters uids on the client side after logd applied `-t N`, so a tail
/// counts everyone's lines; the same holds for the priority filter applied later.
///
/// `printable`: how many more lines logcat may print (`-m`), when it has a limit. logd streams
/// entries oldest first and logcat quits after its `-m` lines, so no more are copied than it
/// prints (with `-m 1` a copy of the whole buffer cost as much as the dump it stands beside).
fn select_entries(
    phone: &SimPhone,
    options: &LogcatOptions,
    after_seq: u64,
    printable: Option<usize>,
) -> Vec<LogEntry> {
    let mut state = phone.lock();
    state.catch_up_noise();
    let ignore_uid = state.profile.logcat_ignores_uid;
    let uids = options.uids.as_ref().filter(|_| !ignore_uid);
    let kept = |entry: &LogEntry| uids.is_none_or(|uids| uids.contains(&entry.uid));
    // Without a tail count the uid filter may come first: nothing is counted. With one, it
    // comes after the tail, which counts everyone's lines.
    let uids_first = options.tail_count.is_none();
    // Chosen by reference and cloned last: a phone holds every app's lines, a call keeps few.
    let mut entries: Vec<&LogEntry> = Vec::new();
    for buffer in &options.buffers {
        let entries_of = &state.buffers[buffer.index()];
        // A buffer holds its entries in sequence order, so a follower starts past what it saw.
        let start = entries_of.partition_point(|entry| entry.seq <= after_seq);
        for entry in entries_of.range(start..) {
            if options.pid.is_some_and(|pid| pid != entry.pid) {
                continue;
            }
            if options
                .tail_time_ns
                .is_some_and(|time| entry.time_ns < time)
            {
                continue;
            }
            if uids_first && !kept(entry) {
                continue;
            }
            entries.push(entry);
        }
    }
    entries.sort_by(|a, b| a.time_ns.cmp(&b.time_ns).then(a.seq.cmp(&b.seq)));
    if let Some(count) = options.tail_count {
        let skip = entries.len().saturating_sub(count);
        entries.drain(..skip);
    }
    let mut allowed = 0usize;
    entries
        .into_iter()
        .filter(|entry| uids_first || kept(entry))
        .take_while(|entry| {
            let more = printable.is_none_or(|limit| allowed < limit);
            if priority_allows(options, entry) {
                allowed += 1;
            }
            more
        })
        .cloned()
        .collect()
}

/// `logcat -c` and `-G`: the buffers asked for cleared or resized.
fn clear_or_resize(phone: &SimPhone, options: &LogcatOptions) {
    let mut state = phone.lock();
    for buffer in &options.buffers {
        if options.clear {
            state.clear_buffer(*buffer);
        }
        if let Some(size) = options.set_size {
            state.set_capacity(*buffer, size);
        }
    }
}

/// What `logcat -g` prints for the buffers asked for.
fn ring_sizes(phone: &SimPhone, options: &LogcatOptions) -> String {
    let mut out = String::new();
    let state = phone.lock();
    for buffer in &options.buffers {
        let capacity = state.buffer_capacity[buffer.index()] / 1024;
        let used = state.buffer_used(*buffer) / 1024;
        let _ = writeln!(
            out,
            "{}: ring buffer is {capacity} KiB ({used} KiB consumed), max entry is 5120 B, max payload is 4068 B",
            buffer.name()
        );
    }
    out
}

/// How often a follower with nothing new looks again anyway: the phone's background traffic is
/// written lazily, when someone reads (`phone.rs`), so this tick is what makes it appear in a
/// follower that nothing else wakes. New lines from the model wake followers at once.
const NOISE_TICK: Duration = Duration::from_secs(1);

pub(crate) async fn logcat(phone: &SimPhone, args: &[String], sink: &Sink) -> Result<u8, Closed> {
    // Counted while it runs; the guard is dropped on every way out.
    let _stream = phone.logcat_stream();
    let mut options = match parse_logcat(phone, args) {
        LogcatParse::Options(options) => options,
        LogcatParse::Fail(message, code) => {
            sink.err(message).await?;
            return Ok(code);
        }
    };
    if options.clear || options.set_size.is_some() {
        clear_or_resize(phone, &options);
        return Ok(0);
    }
    if options.get_size {
        let out = ring_sizes(phone, &options);
        sink.out(out).await?;
        return Ok(0);
    }
    let utc_offset = phone.profile().utc_offset_minutes;
    let mut printed_start = [false; 5];
    let mut last_buffer: Option<Buffer> = None;
    let mut printed = 0usize;
    let mut last_seq = 0u64;
    // Subscribed before the first read, so a line appended between a read and the wait wakes it.
    let mut written = phone.watch_log();
    loop {
        written.borrow_and_update();
        let printable = options.max_count.map(|max| max.saturating_sub(printed));
        let entries = select_entries(phone, &options, last_seq, printable);
        let mut out: Vec<u8> = Vec::with_capacity(256 * 1024);
        for entry in &entries {
            last_seq = last_seq.max(entry.seq);
            if !priority_allows(&options, entry) {
                continue;
            }
            // Dividers are printed only before a line that is printed, as AOSP logcat does.
            if last_buffer != Some(entry.buffer) {
                let index = entry.buffer.index();
                if !printed_start[index] || options.dividers {
                    let word = if printed_start[index] {
                        "switch to"
                    } else {
                        "beginning of"
                    };
                    let _ = writeln!(
                        DisplayVec(&mut out),
                        "--------- {word} {}",
                        entry.buffer.name()
                    );
                }
                printed_start[index] = true;
                last_buffer = Some(entry.buffer);
            }
            format::push_log_line(&mut out, entry, options.format, utc_offset);
            printed += 1;
            if options.max_count.is_some_and(|max| printed >= max) {
                sink.out(out).await?;
                return Ok(0);
            }
            if out.len() >= 256 * 1024 {
                sink.out(std::mem::take(&mut out)).await?;
            }
        }
        sink.out(out).await?;
        if options.dump {
            return Ok(0);
        }
        // After the first read a follower prints every new line: the tail, a count or a time,
        // applies once (logd's LogReaderThread resets its start time after the first flush).
        options.tail_count = None;
        options.tail_time_ns = None;
        // Following: wait for the model to append, or for the host to close the stream.
        tokio::select! {
            changed = written.changed() => if changed.is_err() { return Ok(0) },
            () = sink.closed() => return Ok(0),
            () = tokio::time::sleep(NOISE_TICK) => {}
        }
        if sink.is_closed() {
            return Ok(0);
        }
    }
}

/// `write!` into a byte vector.
struct DisplayVec<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for DisplayVec<'_> {
    fn write_str(&mut self, text: &str) -> std::fmt::Result {
        self.0.extend_from_slice(text.as_bytes());
        Ok(())
    }
}
