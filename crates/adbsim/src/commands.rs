//! The commands of the simulated phone's shell: `logcat`, `pm`, `dumpsys`, `am`, `debuggerd`,
//! `date`, `getprop`, and a few small helpers (`echo`, `id`, `pidof`, `sleep`, `true`, `false`).
//!
//! Each takes its argument words and writes to a `Sink`, returning the exit status.

use std::fmt::Write as _;
use std::time::Duration;

use crate::format::{self, LineFormat};
use crate::model::{AndroidVersion, Buffer, BuildType, LogEntry, Priority};
use crate::phone::{DebugApp, SimPhone};
use crate::shell::{Closed, Sink};

/// Runs one command; unknown commands answer as mksh does.
pub(crate) async fn run(phone: &SimPhone, args: &[String], sink: &Sink) -> u8 {
    if let Some(status) = crate::apps::run(phone, args, sink).await {
        return status;
    }
    let name = args[0].as_str();
    let rest = &args[1..];
    let result = match name {
        "echo" => echo(rest, sink).await,
        "true" | ":" => Ok(0),
        "false" => Ok(1),
        "exit" => Ok(rest.first().and_then(|code| code.parse::<i64>().ok()).map(|code| code as u8).unwrap_or(0)),
        "sleep" => {
            let seconds = rest.first().and_then(|value| value.parse::<f64>().ok()).unwrap_or(0.0);
            tokio::time::sleep(Duration::from_secs_f64(seconds.clamp(0.0, 3600.0))).await;
            Ok(0)
        }
        "id" => sink
            .out("uid=2000(shell) gid=2000(shell) groups=2000(shell),1004(input),1007(log),1011(adb),1015(sdcard_rw),1028(sdcard_r),3001(net_bt_admin),3002(net_bt),3003(inet),3006(net_bw_stats),3009(readproc),3011(uhid) context=u:r:shell:s0\n")
            .await
            .map(|_| 0),
        "getprop" => getprop(phone, rest, sink).await,
        "date" => date(phone, rest, sink).await,
        "pidof" => pidof(phone, rest, sink).await,
        "logcat" => logcat(phone, rest, sink).await,
        "pm" => pm(phone, rest, sink).await,
        "cmd" if rest.first().map(String::as_str) == Some("package") => pm(phone, &rest[1..], sink).await,
        "dumpsys" => dumpsys(phone, rest, sink).await,
        "am" => am(phone, rest, sink).await,
        "debuggerd" => debuggerd(phone, rest, sink).await,
        "stat" => crate::procfs::stat(phone, rest, sink).await,
        "cat" => crate::procfs::cat(phone, rest, sink).await,
        _ => sink
            .err(format!("/system/bin/sh: {name}: inaccessible or not found\n"))
            .await
            .map(|_| 127),
    };
    result.unwrap_or(1)
}

async fn echo(args: &[String], sink: &Sink) -> Result<u8, Closed> {
    let (newline, words) = match args.first().map(String::as_str) {
        Some("-n") => (false, &args[1..]),
        _ => (true, args),
    };
    let mut text = words.join(" ");
    if newline {
        text.push('\n');
    }
    sink.out(text).await?;
    Ok(0)
}

fn properties(phone: &SimPhone) -> Vec<(String, String)> {
    let profile = phone.profile();
    let debuggable = profile.build_type == BuildType::Userdebug;
    let mut props = vec![
        (
            "ro.build.version.release",
            profile.android.release().to_string(),
        ),
        ("ro.build.version.sdk", profile.android.sdk().to_string()),
        ("ro.build.id", profile.android.build_id().to_string()),
        ("ro.build.fingerprint", profile.fingerprint()),
        (
            "ro.build.type",
            if debuggable { "userdebug" } else { "user" }.to_string(),
        ),
        (
            "ro.build.tags",
            if debuggable {
                "dev-keys"
            } else {
                "release-keys"
            }
            .to_string(),
        ),
        (
            "ro.debuggable",
            if debuggable { "1" } else { "0" }.to_string(),
        ),
        ("ro.secure", "1".to_string()),
        ("ro.serialno", profile.serial.clone()),
        ("ro.product.manufacturer", profile.manufacturer.clone()),
        ("ro.product.model", profile.model.clone()),
        ("ro.product.name", profile.product.clone()),
        ("ro.product.device", profile.device.clone()),
        ("ro.product.cpu.abi", "arm64-v8a".to_string()),
        ("persist.sys.timezone", profile.zone_id.clone()),
        ("sys.boot_completed", "1".to_string()),
        ("ro.logd.size", "262144".to_string()),
    ];
    props.sort();
    props
        .into_iter()
        .map(|(key, value)| (key.to_string(), value))
        .collect()
}

async fn getprop(phone: &SimPhone, args: &[String], sink: &Sink) -> Result<u8, Closed> {
    let props = properties(phone);
    match args.first() {
        None => {
            let mut out = String::new();
            for (key, value) in &props {
                let _ = writeln!(out, "[{key}]: [{value}]");
            }
            sink.out(out).await?;
        }
        Some(key) => {
            let value = props
                .iter()
                .find(|(name, _)| name == key)
                .map(|(_, value)| value.clone())
                .or_else(|| args.get(1).cloned())
                .unwrap_or_default();
            sink.out(format!("{value}\n")).await?;
        }
    }
    Ok(0)
}

async fn date(phone: &SimPhone, args: &[String], sink: &Sink) -> Result<u8, Closed> {
    let profile = phone.profile();
    let now = phone.now_ns();
    let pattern = match args.first() {
        None => "%a %b %e %H:%M:%S %Z %Y".to_string(),
        Some(arg) if arg.starts_with('+') => arg[1..].to_string(),
        Some(arg) => {
            sink.err(format!("date: bad date '{arg}'\n")).await?;
            return Ok(1);
        }
    };
    let t = format::civil(now, profile.utc_offset_minutes);
    let mut out = String::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('Y') => {
                let _ = write!(out, "{:04}", t.year());
            }
            Some('m') => {
                let _ = write!(out, "{:02}", u8::from(t.month()));
            }
            Some('d') => {
                let _ = write!(out, "{:02}", t.day());
            }
            Some('e') => {
                let _ = write!(out, "{:2}", t.day());
            }
            Some('H') => {
                let _ = write!(out, "{:02}", t.hour());
            }
            Some('M') => {
                let _ = write!(out, "{:02}", t.minute());
            }
            Some('S') => {
                let _ = write!(out, "{:02}", t.second());
            }
            Some('N') => {
                let _ = write!(out, "{:09}", t.nanosecond());
            }
            Some('s') => {
                let _ = write!(out, "{}", now.div_euclid(1_000_000_000));
            }
            Some('z') => out.push_str(&format::zone_suffix(profile.utc_offset_minutes)),
            Some('Z') => out.push_str(&profile.zone_name),
            Some('a') => out.push_str(&format!("{:?}", t.weekday())[..3]),
            Some('b') => out.push_str(&format!("{:?}", t.month())[..3]),
            Some('%') => out.push('%'),
            Some(other) => {
                out.push('%');
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    out.push('\n');
    sink.out(out).await?;
    Ok(0)
}

async fn pidof(phone: &SimPhone, args: &[String], sink: &Sink) -> Result<u8, Closed> {
    let pids: Vec<String> = phone
        .processes()
        .iter()
        .filter(|process| args.contains(&process.name))
        .map(|process| process.pid.to_string())
        .collect();
    if pids.is_empty() {
        return Ok(1);
    }
    sink.out(format!("{}\n", pids.join(" "))).await?;
    Ok(0)
}

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
            match name.as_str() {
                "uid" => {
                    let mut uids = Vec::new();
                    for part in value.split(LIST_DELIMITERS).filter(|part| !part.is_empty()) {
                        match part.parse::<u32>() {
                            Ok(uid) => uids.push(uid),
                            Err(_) => return fail(format!("Unable to parse UID '{part}'")),
                        }
                    }
                    options.uids.get_or_insert_with(Vec::new).extend(uids);
                }
                "pid" => {
                    if options.pid.is_some() {
                        return fail("Only one --pid argument can be provided.".to_string());
                    }
                    match value.parse::<u32>() {
                        Ok(pid) if pid >= 1 => options.pid = Some(pid),
                        _ => return fail(format!("pid '{value}' out of range.")),
                    }
                }
                "dump" => options.dump = true,
                "clear" => options.clear = true,
                "dividers" => options.dividers = true,
                "buffer" => {
                    if let Err(message) = add_buffers(&mut options, &value) {
                        return fail(message);
                    }
                }
                "format" => {
                    if let Err(message) = set_formats(&mut options.format, &value) {
                        return fail(message);
                    }
                }
                "tail" => {
                    got_t = true;
                    options.dump = true;
                    if let Err(message) = set_tail(&mut options, &value, 't', phone) {
                        return fail(message);
                    }
                }
                _ => match value.parse::<usize>() {
                    Ok(count) if count >= 1 => options.max_count = Some(count),
                    _ => return fail(format!("-m '{value}' isn't an integer greater than zero.")),
                },
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
            match flag {
                'd' => options.dump = true,
                'c' => options.clear = true,
                'g' => options.get_size = true,
                'D' => options.dividers = true,
                's' => options.silent_default = true,
                'G' => match parse_size(&value) {
                    Some(size) if size >= 1 => options.set_size = Some(size),
                    _ => return fail("-G must be specified as <num><multiplier>.".to_string()),
                },
                'b' => {
                    if let Err(message) = add_buffers(&mut options, &value) {
                        return fail(message);
                    }
                }
                'v' => {
                    if let Err(message) = set_formats(&mut options.format, &value) {
                        return fail(message);
                    }
                }
                't' | 'T' => {
                    if flag == 't' {
                        got_t = true;
                        options.dump = true;
                    }
                    if let Err(message) = set_tail(&mut options, &value, flag, phone) {
                        return fail(message);
                    }
                }
                'm' => match value.parse::<usize>() {
                    Ok(count) if count >= 1 => options.max_count = Some(count),
                    _ => return fail(format!("-m '{value}' isn't an integer greater than zero.")),
                },
                'e' | 'f' | 'r' | 'n' | 'P' => {
                    return fail(format!(
                        "Option '-{flag}' is not modelled by the simulator."
                    ));
                }
                _ if android10 => {
                    return LogcatParse::Fail(
                        ANDROID10_UNRECOGNIZED.replace('\0', &flag.to_string()),
                        1,
                    );
                }
                _ => return fail(format!("Unknown option '{arg}'.")),
            }
        } else {
            // A filterspec: TAG[:PRIORITY].
            let (tag, level) = match arg.rsplit_once(':') {
                Some((tag, level)) => (tag.to_string(), level.to_string()),
                None => (arg.clone(), "V".to_string()),
            };
            let mut letters = level.chars();
            let priority = match (
                letters.next().map(|c| c.to_ascii_uppercase()),
                letters.next(),
            ) {
                (Some('S'), None) => None,
                (Some(letter), None) => match Priority::from_letter(letter) {
                    Some(priority) => Some(priority),
                    None => return fail(format!("Invalid filter expression '{arg}'.")),
                },
                _ => return fail(format!("Invalid filter expression '{arg}'.")),
            };
            options.filters.push((tag, priority));
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
fn select_entries(phone: &SimPhone, options: &LogcatOptions, after_seq: u64) -> Vec<LogEntry> {
    let mut state = phone.lock();
    state.catch_up_noise();
    let ignore_uid = state.profile.logcat_ignores_uid;
    let mut entries: Vec<LogEntry> = Vec::new();
    for buffer in &options.buffers {
        for entry in &state.buffers[buffer.index()] {
            if entry.seq <= after_seq {
                continue;
            }
            if options.pid.is_some_and(|pid| pid != entry.pid) {
                continue;
            }
            if options
                .tail_time_ns
                .is_some_and(|time| entry.time_ns < time)
            {
                continue;
            }
            entries.push(entry.clone());
        }
    }
    drop(state);
    entries.sort_by(|a, b| a.time_ns.cmp(&b.time_ns).then(a.seq.cmp(&b.seq)));
    if let Some(count) = options.tail_count {
        let skip = entries.len().saturating_sub(count);
        entries.drain(..skip);
    }
    if let Some(uids) = options.uids.as_ref().filter(|_| !ignore_uid) {
        entries.retain(|entry| uids.contains(&entry.uid));
    }
    entries
}

async fn logcat(phone: &SimPhone, args: &[String], sink: &Sink) -> Result<u8, Closed> {
    let mut options = match parse_logcat(phone, args) {
        LogcatParse::Options(options) => options,
        LogcatParse::Fail(message, code) => {
            sink.err(message).await?;
            return Ok(code);
        }
    };
    if options.clear || options.set_size.is_some() {
        let mut state = phone.lock();
        for buffer in &options.buffers {
            if options.clear {
                state.clear_buffer(*buffer);
            }
            if let Some(size) = options.set_size {
                state.set_capacity(*buffer, size);
            }
        }
        return Ok(0);
    }
    if options.get_size {
        let mut out = String::new();
        {
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
        }
        sink.out(out).await?;
        return Ok(0);
    }
    let utc_offset = phone.profile().utc_offset_minutes;
    let mut printed_start = [false; 5];
    let mut last_buffer: Option<Buffer> = None;
    let mut printed = 0usize;
    let mut last_seq = 0u64;
    loop {
        let entries = select_entries(phone, &options, last_seq);
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
        // After the first read a follower prints every new line: the tail applies once.
        options.tail_count = None;
        // Following: poll for new lines until the host closes the stream.
        tokio::time::sleep(Duration::from_millis(100)).await;
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

async fn pm(phone: &SimPhone, args: &[String], sink: &Sink) -> Result<u8, Closed> {
    match (
        args.first().map(String::as_str),
        args.get(1).map(String::as_str),
    ) {
        (Some("list"), Some("packages")) => pm_list_packages(phone, &args[2..], sink).await,
        (Some("path"), Some(name)) => {
            let path = phone.lock().package(name).map(|package| {
                if package.system {
                    format!(
                        "package:/system/priv-app/{}/{}.apk\n",
                        package.name, package.name
                    )
                } else {
                    format!("package:/data/app/{}-1/base.apk\n", package.name)
                }
            });
            match path {
                Some(path) => {
                    sink.out(path).await?;
                    Ok(0)
                }
                None => Ok(1),
            }
        }
        _ => {
            sink.err("Error: unknown command or arguments for the simulated pm\n")
                .await?;
            Ok(255)
        }
    }
}

async fn pm_list_packages(phone: &SimPhone, args: &[String], sink: &Sink) -> Result<u8, Closed> {
    let mut show_uid = false;
    let mut show_path = false;
    let mut show_installer = false;
    let mut only_system = false;
    let mut only_third_party = false;
    let mut user: u32 = 0;
    let mut user_given = false;
    let mut uid_filter: Option<u32> = None;
    let mut filter: Option<&str> = None;
    let mut index = 0;
    while index < args.len() {
        match args[index].as_str() {
            "-U" => show_uid = true,
            "-f" => show_path = true,
            "-i" => show_installer = true,
            "-s" => only_system = true,
            "-3" => only_third_party = true,
            "-d" | "-e" | "-u" | "-a" | "--show-versioncode" | "--apex-only" => {}
            "--user" => {
                index += 1;
                user_given = true;
                let value = args.get(index).map(String::as_str).unwrap_or("");
                user = match value {
                    "current" | "cur" => 0,
                    other => match other.parse() {
                        Ok(user) => user,
                        Err(_) => {
                            sink.err(format!("Error: bad user id: {other}\n")).await?;
                            return Ok(255);
                        }
                    },
                };
            }
            "--uid" => {
                index += 1;
                uid_filter = args.get(index).and_then(|value| value.parse().ok());
            }
            option if option.starts_with('-') => {
                sink.err(format!("Error: Unknown option: {option}\n"))
                    .await?;
                return Ok(255);
            }
            word => filter = Some(word),
        }
        index += 1;
    }
    // Android 16 without `--user` prints one line per package with the uid of every user it is
    // installed for, comma-separated (`uid:10220,99910220`, a public tool's capture of an
    // Android 16 phone; testdata/adbsim/README.md). Older releases print the one user's uid.
    let every_user = !user_given && phone.profile().android == AndroidVersion::Android16;
    let mut out = String::new();
    {
        let state = phone.lock();
        for package in &state.packages {
            if !package.users.contains(&user) {
                continue;
            }
            if only_system && !package.system || only_third_party && package.system {
                continue;
            }
            if filter.is_some_and(|filter| !package.name.contains(filter)) {
                continue;
            }
            let uid = package.uid_for_user(user);
            if uid_filter.is_some_and(|wanted| wanted != uid) {
                continue;
            }
            out.push_str("package:");
            if show_path {
                let _ = write!(out, "/data/app/{}-1/base.apk=", package.name);
            }
            out.push_str(&package.name);
            if show_installer {
                let _ = write!(
                    out,
                    "  installer={}",
                    package.installer.as_deref().unwrap_or("null")
                );
            }
            if show_uid {
                if every_user {
                    let mut users = package.users.clone();
                    users.sort_unstable();
                    users.dedup();
                    let uids: Vec<String> = users
                        .iter()
                        .map(|user| package.uid_for_user(*user).to_string())
                        .collect();
                    let _ = write!(out, " uid:{}", uids.join(","));
                } else {
                    let _ = write!(out, " uid:{uid}");
                }
            }
            out.push('\n');
        }
    }
    sink.out(out).await?;
    Ok(0)
}

async fn dumpsys(phone: &SimPhone, args: &[String], sink: &Sink) -> Result<u8, Closed> {
    let profile = phone.profile();
    match args.first().map(String::as_str) {
        Some("package") => {
            let names: Vec<&String> = args[1..]
                .iter()
                .filter(|arg| !arg.starts_with('-'))
                .collect();
            let out = {
                let state = phone.lock();
                let mut out = String::new();
                match names.first() {
                    Some(name) => match state.package(name) {
                        Some(package) => out.push_str(&format::dumpsys_package(
                            &profile,
                            package,
                            state.installed_ns,
                        )),
                        None => {
                            if profile.android != AndroidVersion::Android10 {
                                let _ = writeln!(
                                    out,
                                    "Dexopt state:\n  Unable to find package: {name}\n"
                                );
                                let _ = writeln!(
                                    out,
                                    "Compiler stats:\n  Unable to find package: {name}"
                                );
                            }
                        }
                    },
                    None => {
                        for package in &state.packages {
                            out.push_str(&format::dumpsys_package(
                                &profile,
                                package,
                                state.installed_ns,
                            ));
                        }
                    }
                }
                out
            };
            sink.out(out).await?;
            Ok(0)
        }
        Some("dropbox") => {
            let entries = phone.lock().dropbox.clone();
            let (out, err) = format::dropbox_dump(&entries, &args[1..], &profile);
            sink.out(out).await?;
            sink.err(err).await?;
            Ok(0)
        }
        Some("activity") => match args.get(1).map(String::as_str) {
            Some("exit-info") if profile.android != AndroidVersion::Android10 => {
                let out = {
                    let state = phone.lock();
                    let package = args.get(2).map(String::as_str);
                    format::exit_info(&profile, &state.exits, package, state.boot_ns)
                };
                sink.out(out).await?;
                Ok(0)
            }
            Some(other) => {
                sink.out(format!(
                    "Bad activity command, or no activities match: {other}\nUse -h for help.\n"
                ))
                .await?;
                Ok(0)
            }
            None => {
                sink.out("ACTIVITY MANAGER RUNNING PROCESSES (dumpsys activity processes)\n")
                    .await?;
                Ok(0)
            }
        },
        Some(service) => {
            sink.err(format!("Can't find service: {service}\n")).await?;
            Ok(0)
        }
        None => {
            sink.out("Currently running services:\n  activity\n  dropbox\n  package\n")
                .await?;
            Ok(0)
        }
    }
}

async fn am(phone: &SimPhone, args: &[String], sink: &Sink) -> Result<u8, Closed> {
    match args.first().map(String::as_str) {
        Some("set-debug-app") => {
            let mut wait = false;
            let mut persistent = false;
            let mut package = None;
            for arg in &args[1..] {
                match arg.as_str() {
                    "-w" => wait = true,
                    "--persistent" => persistent = true,
                    option if option.starts_with('-') => {
                        sink.err(format!("Error: Unknown option: {option}\n"))
                            .await?;
                        return Ok(255);
                    }
                    name => package = Some(name.to_string()),
                }
            }
            let Some(package) = package else {
                sink.err(
                    "Exception occurred while executing 'set-debug-app':\njava.lang.IllegalArgumentException: Argument expected after \"set-debug-app\"\n\tat com.android.modules.utils.BasicShellCommandHandler.getNextArgRequired(BasicShellCommandHandler.java:295)\n\tat com.android.server.am.ActivityManagerShellCommand.runSetDebugApp(ActivityManagerShellCommand.java:1312)\n",
                )
                .await?;
                return Ok(255);
            };
            phone.lock().debug_app = Some(DebugApp {
                package,
                wait_for_debugger: wait,
                persistent,
            });
            Ok(0)
        }
        Some("clear-debug-app") => {
            phone.lock().debug_app = None;
            Ok(0)
        }
        // The person's user: the simulated phone's person always uses user 0. Real phones print
        // the number alone (`0`, in a capture quoted in cocool97/adb_client#99).
        Some("get-current-user") => {
            sink.out("0\n").await?;
            Ok(0)
        }
        Some("start") => {
            let component = args.iter().skip_while(|arg| *arg != "-n").nth(1).cloned();
            let package = component
                .as_deref()
                .and_then(|component| component.split('/').next())
                .map(str::to_string);
            match package {
                Some(package) => match phone.launch(&package) {
                    Ok(_) => {
                        let component = component.unwrap_or_default();
                        sink.out(format!("Starting: Intent {{ cmp={component} }}\n"))
                            .await?;
                        Ok(0)
                    }
                    Err(_) => {
                        sink.err(format!(
                            "Error: Activity class {{{}}} does not exist.\n",
                            component.unwrap_or_default()
                        ))
                        .await?;
                        Ok(255)
                    }
                },
                None => {
                    sink.err("Error: Intent does not match any activities\n")
                        .await?;
                    Ok(255)
                }
            }
        }
        Some("force-stop") => {
            if let Some(package) = args.get(1) {
                let pid = phone.pid_of(package);
                if let Some(pid) = pid {
                    let mut state = phone.lock();
                    let process = state.process(pid).cloned();
                    state.processes.retain(|process| process.pid != pid);
                    if let Some(process) = process {
                        let now = state.now_ns();
                        state.exits.push(crate::model::ExitRecord {
                            package: package.clone(),
                            uid: process.uid,
                            pid,
                            process: process.name,
                            reason: 10,
                            subreason: 21,
                            status: 0,
                            importance: 100,
                            description: format!("stop {package} due to from pid 4242"),
                            time_ms: (now / 1_000_000) as i64,
                            trace: None,
                        });
                    }
                }
            }
            Ok(0)
        }
        Some(other) => {
            sink.err(format!("Error: unknown command '{other}'\n"))
                .await?;
            Ok(255)
        }
        None => {
            sink.out("Activity manager (activity) commands:\n").await?;
            Ok(0)
        }
    }
}

async fn debuggerd(phone: &SimPhone, args: &[String], sink: &Sink) -> Result<u8, Closed> {
    let usage = "usage: debuggerd [-bj] [-t TIMEOUT] PID\n\n-b, --backtrace    just a backtrace rather than a full tombstone\n-j                 collect java traces\n";
    let (backtrace, pid_text) = match args {
        [pid] => (false, pid),
        [flag, pid] if flag == "-b" || flag == "--backtrace" => (true, pid),
        _ => {
            sink.err(usage).await?;
            return Ok(1);
        }
    };
    let pid = match pid_text.parse::<u32>() {
        Ok(pid) if pid > 0 => pid,
        _ => {
            sink.err(usage).await?;
            return Ok(1);
        }
    };
    let profile = phone.profile();
    // AOSP's debuggerd client checks `getuid() != 0` right after parsing the pid, before it
    // looks the process up, so a user build refuses a dead pid the same way. The text is what
    // real phones print (testdata/README.md, "Refusal texts"): `errx(1, "root is required")`.
    if !profile.debuggerd_allowed() {
        sink.err("debuggerd: root is required\n").await?;
        return Ok(1);
    }
    let (process, now) = {
        let state = phone.lock();
        (state.process(pid).cloned(), state.now_ns())
    };
    let Some(process) = process else {
        sink.err(format!(
            "debuggerd: failed to fetch info for process {pid}: No such file or directory\n"
        ))
        .await?;
        return Ok(1);
    };
    let text = if backtrace {
        format::native_backtrace(&profile, &process, now)
    } else {
        format::tombstone(&profile, &process, 35, now).replace(
            "signal 35 (SIGSEGV), code 1 (SEGV_MAPERR), fault addr 0x0000000000000000",
            "signal 35 (<debuggerd signal>), code -1 (SI_QUEUE from pid 4242, uid 0), fault addr --------",
        )
    };
    sink.out(text).await?;
    Ok(0)
}
