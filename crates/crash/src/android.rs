//! Small Android outputs: `date +%z`, `dumpsys package <package>` flags, `pm list packages -U`
//! and `adb jdwp`.

use serde::{Deserialize, Serialize};

/// Reads a UTC offset as `date +%z` prints it (`+0200`, `-0530`, also `+02:00`).
///
/// ```
/// use phonelogs_crash::android::parse_date_offset;
/// assert_eq!(parse_date_offset("-0530\n").map(|o| o.whole_minutes()), Some(-330));
/// assert_eq!(parse_date_offset("CEST"), None);
/// ```
pub fn parse_date_offset(text: &str) -> Option<time::UtcOffset> {
    let text = text.trim();
    let (sign, rest) = match text.as_bytes().first()? {
        b'+' => (1i8, &text[1..]),
        b'-' => (-1i8, &text[1..]),
        _ => return None,
    };
    let digits: String = rest.chars().filter(|c| *c != ':').collect();
    if digits.len() != 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let hours: i8 = digits[..2].parse().ok()?;
    let minutes: i8 = digits[2..].parse().ok()?;
    time::UtcOffset::from_hms(sign * hours, sign * minutes, 0).ok()
}

/// Reads `YYYY-MM-DD HH:MM:SS` with an optional fraction of any length (a local time with no
/// zone, as the drop box, exit-info and ANR traces print it).
pub fn parse_local_date_time(text: &str) -> Option<time::PrimitiveDateTime> {
    let text = text.trim();
    let bytes = text.as_bytes();
    if bytes.len() < 19
        || bytes[4] != b'-'
        || bytes[7] != b'-'
        || bytes[10] != b' '
        || bytes[13] != b':'
        || bytes[16] != b':'
    {
        return None;
    }
    let number = |range: std::ops::Range<usize>| -> Option<u32> {
        let part = text.get(range)?;
        if part.bytes().all(|b| b.is_ascii_digit()) {
            part.parse().ok()
        } else {
            None
        }
    };
    let year = i32::try_from(number(0..4)?).ok()?;
    let month = time::Month::try_from(u8::try_from(number(5..7)?).ok()?).ok()?;
    let day = u8::try_from(number(8..10)?).ok()?;
    let hour = u8::try_from(number(11..13)?).ok()?;
    let minute = u8::try_from(number(14..16)?).ok()?;
    let second = u8::try_from(number(17..19)?).ok()?;
    let mut nanos = 0u32;
    if bytes.len() > 19 {
        if bytes[19] != b'.' {
            return None;
        }
        let fraction = &text[20..];
        if fraction.is_empty() || !fraction.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let mut scale = 100_000_000u32;
        for digit in fraction.bytes().take(9) {
            nanos += u32::from(digit - b'0') * scale;
            scale /= 10;
        }
    }
    let date = time::Date::from_calendar_date(year, month, day).ok()?;
    let clock = time::Time::from_hms_nano(hour, minute, second.min(59), nanos).ok()?;
    Some(time::PrimitiveDateTime::new(date, clock))
}

/// What `dumpsys package <package>` says about one package.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageInfo {
    /// The package name from `Package [<pkg>] (<hash>):`.
    pub package: String,
    /// The uid from `userId=N` (the app's uid in user 0).
    pub user_id: Option<u32>,
    /// The shared user from `sharedUser=…`, for packages that share their uid.
    pub shared_user: Option<String>,
    /// The names in the block's first `flags=[ … ]` and first `pkgFlags=[ … ]`, each once; when
    /// the dump holds other blocks of the package (see [`parse_dumpsys_package`]), theirs too.
    pub flags: Vec<String>,
    /// `DEBUGGABLE` in the block's first `flags=` line and in its first `pkgFlags=` line (those
    /// the dump has; Android prints the same list in both), with neither line printed twice at
    /// the block's own indentation. A second one can only be text the app chose, printed raw
    /// in another field (a `versionName` with a line break and a forged line): then the flag
    /// is not believed, and the app is not a development build.
    pub debuggable: bool,
    /// The names in `privateFlags=[ … ]` and `privatePkgFlags=[ … ]`, each once (with other
    /// blocks', as for `flags`).
    pub private_flags: Vec<String>,
    /// The Android users the package is installed for, from its `User N: … installed=true`
    /// lines, in the order printed: a second user is an app clone or a work profile.
    pub installed_users: Vec<u32>,
    /// The number of the block's first `versionCode=N minSdk=… targetSdk=…` line, when it is
    /// one.
    pub version_code: Option<String>,
    /// The block's last `lastUpdateTime=YYYY-MM-DD HH:MM:SS`: when the installed build was
    /// installed (`adb install -r` included), in the phone's local time, as AOSP's package
    /// dump prints it (see `testdata/README.md`). The last: the field comes after
    /// `versionName`, whose text the app chose and which could carry a forged line; a value of
    /// another shape is not taken.
    pub last_update_time: Option<String>,
}

impl PackageInfo {
    /// Whether the package is built to be debugged (`DEBUGGABLE`, believed only as
    /// [`PackageInfo::debuggable`] says).
    pub fn is_debuggable(&self) -> bool {
        self.debuggable
    }

    /// Whether the package is a system app (`SYSTEM`).
    pub fn is_system(&self) -> bool {
        self.flags.iter().any(|flag| flag == "SYSTEM")
    }
}

/// Reads `dumpsys package <package>` for `package`. Returns `None` when the dump has no
/// `Package [<package>]` block (an unknown package).
///
/// The app's block is the one `dumpsys` prints in its `Packages:` section (a `Package [` line
/// at two spaces, under a `Packages:` line at the left margin). An app can put line breaks into
/// text `dumpsys` prints raw, before that section (an intent filter's action name in the
/// resolver tables, a permission's name), inside the block (its `versionName`, its requested
/// permissions' names) and after it, and so forge a whole block of its own name anywhere. So
/// when the dump holds any other `Package [<package>]` line (a forgery, or a system app's
/// hidden copy under `Hidden system packages:`), or its only one stands elsewhere, nothing that
/// would lower a guard is believed: the app is not debuggable, and a `SYSTEM` flag, a shared
/// user or an installed user read anywhere in the dump counts. The other fields (`userId`,
/// `versionCode`) are the first placed block's.
///
/// Inside the block, only the lines at its own indentation (its first line's) are its fields,
/// and of each field the first: deeper lines belong to lists (permissions, per-user state), and
/// a second `flags=` or `pkgFlags=` line at that indentation, in the block or after its end
/// (which the app can forge too), means a forgery and the flags are not believed
/// ([`PackageInfo::debuggable`]).
///
/// ```
/// use phonelogs_crash::android::parse_dumpsys_package;
/// let dump = "Packages:\n  Package [com.example.app] (4b1c2d0):\n    userId=10127\n    flags=[ DEBUGGABLE HAS_CODE ALLOW_CLEAR_USER_DATA ]\n";
/// let info = parse_dumpsys_package(dump, "com.example.app").unwrap();
/// assert_eq!(info.user_id, Some(10127));
/// assert!(info.is_debuggable() && !info.is_system());
/// ```
pub fn parse_dumpsys_package(text: &str, package: &str) -> Option<PackageInfo> {
    let marker = format!("Package [{package}]");
    let starts = block_starts(text, &marker);
    let chosen = starts.iter().position(|start| start.placed).unwrap_or(0);
    let start = starts.get(chosen)?;
    let mut info = read_block(&text[start.at..], package);
    if starts.len() > 1 || !start.placed {
        info.debuggable = false;
        raise_guards(&mut info, text);
    }
    Some(info)
}

/// Where the dump is in doubt (several blocks of the package), every line of it that could be
/// the real block's counts toward what raises a guard: the names of every flags line (a
/// `SYSTEM`), a shared user, an installed user. Lines at any place, at any indentation: a
/// forged end or section can stand between the real block's line and its fields.
fn raise_guards(info: &mut PackageInfo, text: &str) {
    for line in text.lines() {
        let line = line.trim();
        let list = line
            .strip_prefix("flags=")
            .or_else(|| line.strip_prefix("pkgFlags="));
        if let Some(list) = list {
            add_flags(&mut info.flags, &list_names(list));
        } else if let Some(value) = line.strip_prefix("sharedUser=") {
            info.shared_user
                .get_or_insert_with(|| value.trim().to_owned());
        } else if let Some(user) = installed_user(line)
            && !info.installed_users.contains(&user)
        {
            info.installed_users.push(user);
        }
    }
}

/// Where a `Package [<package>]` line starts, and whether it stands where `dumpsys` prints the
/// app's block: at two spaces, in the `Packages:` section.
struct BlockStart {
    at: usize,
    placed: bool,
}

/// Every line of `text` that starts a block of `marker` (`Package [<package>]`).
fn block_starts(text: &str, marker: &str) -> Vec<BlockStart> {
    let mut starts = Vec::new();
    // The last line at the left margin: the section a line stands in.
    let mut section = "";
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        let trimmed = content.trim();
        let indent = content.len() - content.trim_start().len();
        if trimmed.starts_with(marker) {
            starts.push(BlockStart {
                at,
                placed: indent == 2 && content.starts_with("  ") && section == "Packages:",
            });
        }
        if !trimmed.is_empty() && indent == 0 {
            section = trimmed;
        }
        at += line.len();
    }
    starts
}

/// Reads the block whose `Package [` line starts `text`, and the dump after its end for flags
/// lines at its fields' indentation (see [`parse_dumpsys_package`]).
fn read_block(text: &str, package: &str) -> PackageInfo {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("");
    let mut block = PackageBlock::new(package, first.len() - first.trim_start().len());
    let mut open = true;
    for line in lines {
        let indent = line.len() - line.trim_start().len();
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        if trimmed.starts_with("Package [") || indent <= block.indent {
            open = false;
        }
        if open {
            // The block's fields stand at its first line's indentation; deeper lines are lists.
            if *block.fields.get_or_insert(indent) == indent {
                block.read(trimmed);
            }
        } else if block.fields == Some(indent) {
            // After the block's end, to the dump's end: an app can forge the end (a line break
            // and a line at the left margin in its `versionName`) after forged flags, so a flags
            // line there may be the real one, and the flags read are not believed.
            block.after_the_end(trimmed);
        }
    }
    block.finish()
}

/// One package's block while it is read.
struct PackageBlock {
    info: PackageInfo,
    /// The `Package [` line's indentation: a line at or left of it ends the block.
    indent: usize,
    /// The indentation of the block's fields (its first line's).
    fields: Option<usize>,
    /// The first `flags=` and first `pkgFlags=` lists, and whether either came again.
    flags: Option<Vec<String>>,
    pkg_flags: Option<Vec<String>>,
    private_flags: Option<Vec<String>>,
    private_pkg_flags: Option<Vec<String>>,
    repeated: bool,
    /// Whether a `versionCode=` line was read (only the first counts, a number or not).
    version_read: bool,
    /// Flags names and a shared user found after the block's end (see `after_the_end`).
    late_flags: Vec<String>,
    late_shared_user: Option<String>,
}

impl PackageBlock {
    fn new(package: &str, indent: usize) -> Self {
        PackageBlock {
            info: PackageInfo {
                package: package.to_owned(),
                ..PackageInfo::default()
            },
            indent,
            fields: None,
            flags: None,
            pkg_flags: None,
            private_flags: None,
            private_pkg_flags: None,
            repeated: false,
            version_read: false,
            late_flags: Vec::new(),
            late_shared_user: None,
        }
    }

    /// Reads one field line (trimmed).
    fn read(&mut self, line: &str) {
        let info = &mut self.info;
        if let Some(value) = line.strip_prefix("lastUpdateTime=") {
            let value = value.trim();
            let shape = value.len() == 19
                && value.bytes().enumerate().all(|(at, b)| match at {
                    4 | 7 => b == b'-',
                    10 => b == b' ',
                    13 | 16 => b == b':',
                    _ => b.is_ascii_digit(),
                });
            info.last_update_time = shape.then(|| value.to_owned());
        } else if let Some(value) = line.strip_prefix("userId=") {
            if info.user_id.is_none() {
                info.user_id = value.split_whitespace().next().and_then(|v| v.parse().ok());
            }
        } else if let Some(rest) = line.strip_prefix("versionCode=") {
            if !self.version_read {
                self.version_read = true;
                let value = rest.split_whitespace().next().unwrap_or("");
                info.version_code = (!value.is_empty()
                    && value.bytes().all(|b| b.is_ascii_digit()))
                .then(|| value.to_owned());
            }
        } else if let Some(value) = line.strip_prefix("sharedUser=") {
            info.shared_user
                .get_or_insert_with(|| value.trim().to_owned());
        } else if let Some(list) = line.strip_prefix("flags=") {
            self.flags_line(list, false);
        } else if let Some(list) = line.strip_prefix("pkgFlags=") {
            self.flags_line(list, true);
        } else if let Some(list) = line.strip_prefix("privateFlags=") {
            first_list(&mut self.private_flags, list);
        } else if let Some(list) = line.strip_prefix("privatePkgFlags=") {
            first_list(&mut self.private_pkg_flags, list);
        } else if let Some(user) = installed_user(line)
            && !info.installed_users.contains(&user)
        {
            info.installed_users.push(user);
        }
    }

    /// A `flags=` (or `pkgFlags=`) line's list: the first is the block's; a repeat makes the
    /// flags not believed, and its names (a `SYSTEM` the app's forged line came before) count.
    fn flags_line(&mut self, list: &str, pkg: bool) {
        let first = if pkg {
            &mut self.pkg_flags
        } else {
            &mut self.flags
        };
        if first.is_some() {
            self.repeated = true;
            self.late_flags.extend(list_names(list));
        } else {
            *first = Some(list_names(list));
        }
    }

    /// A line after the block's end, at its fields' indentation: the end may be one the app
    /// forged, so a flags line there makes the flags not believed, and its names (a `SYSTEM`)
    /// and a shared user there count as the block's.
    fn after_the_end(&mut self, line: &str) {
        let list = line
            .strip_prefix("flags=")
            .or_else(|| line.strip_prefix("pkgFlags="));
        if let Some(list) = list {
            self.repeated = true;
            self.late_flags.extend(list_names(list));
        } else if let Some(value) = line.strip_prefix("sharedUser=") {
            self.late_shared_user
                .get_or_insert_with(|| value.trim().to_owned());
        }
    }

    fn finish(self) -> PackageInfo {
        let mut info = self.info;
        let lists = [&self.flags, &self.pkg_flags];
        info.debuggable = !self.repeated
            && lists.iter().any(|list| list.is_some())
            && lists
                .iter()
                .filter_map(|list| list.as_ref())
                .all(|list| list.iter().any(|flag| flag == "DEBUGGABLE"));
        for list in lists.into_iter().flatten() {
            add_flags(&mut info.flags, list);
        }
        add_flags(&mut info.flags, &self.late_flags);
        if info.shared_user.is_none() {
            info.shared_user = self.late_shared_user;
        }
        for list in [&self.private_flags, &self.private_pkg_flags]
            .into_iter()
            .flatten()
        {
            add_flags(&mut info.private_flags, list);
        }
        info
    }
}

/// Keeps `list`'s names in `first` unless a list came before.
fn first_list(first: &mut Option<Vec<String>>, list: &str) {
    if first.is_none() {
        *first = Some(list_names(list));
    }
}

/// The names of a `[ A B C ]` list.
fn list_names(list: &str) -> Vec<String> {
    let list = list.trim().trim_start_matches('[').trim_end_matches(']');
    list.split_whitespace().map(str::to_owned).collect()
}

/// The user of a `User N: ceDataInode=… installed=true …` line, when it says the package is
/// installed for that user (system packages list every user, some with `installed=false`).
fn installed_user(line: &str) -> Option<u32> {
    let rest = line.strip_prefix("User ")?;
    let (user, state) = rest.split_once(':')?;
    let user = user.trim().parse().ok()?;
    state
        .split_whitespace()
        .any(|word| word == "installed=true")
        .then_some(user)
}

fn add_flags(into: &mut Vec<String>, names: &[String]) {
    for name in names {
        if !into.contains(name) {
            into.push(name.clone());
        }
    }
}

/// One line of `pm list packages -U`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageUid {
    /// The package name.
    pub package: String,
    /// Its uids: one per user the package is installed in (an app clone in another user gives
    /// a second uid such as `1010127`).
    pub uids: Vec<u32>,
}

/// Reads `pm list packages -U` (`package:<pkg> uid:<uid>[,<uid>…]`). Lines that do not fit are
/// skipped; the same package on several lines (one listing per user) is merged.
///
/// ```
/// use phonelogs_crash::android::parse_pm_list_packages;
/// let list = parse_pm_list_packages("package:com.example.app uid:10127\npackage:com.example.app uid:1010127\n");
/// assert_eq!(list[0].uids, vec![10127, 1010127]);
/// ```
pub fn parse_pm_list_packages(text: &str) -> Vec<PackageUid> {
    let mut out: Vec<PackageUid> = Vec::new();
    // Where each package is in `out`, so a long listing is read in linear time.
    let mut positions: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for line in text.lines() {
        let Some(rest) = line.trim().strip_prefix("package:") else {
            continue;
        };
        let (package, uids) = match rest.find(" uid:") {
            Some(at) => (&rest[..at], &rest[at + 5..]),
            None => continue,
        };
        let uids: Vec<u32> = uids
            .split([',', ' '])
            .filter_map(|uid| uid.trim().parse().ok())
            .collect();
        let package = package.trim();
        if package.is_empty() || uids.is_empty() {
            continue;
        }
        match positions.get(package).and_then(|&at| out.get_mut(at)) {
            Some(known) => {
                for uid in uids {
                    if !known.uids.contains(&uid) {
                        known.uids.push(uid);
                    }
                }
            }
            None => {
                positions.insert(package.to_owned(), out.len());
                out.push(PackageUid {
                    package: package.to_owned(),
                    uids,
                });
            }
        }
    }
    out
}

/// Reads `adb jdwp` output: the pids, in first-seen order, without repeats. Lines that are not
/// a number are ignored.
///
/// ```
/// use phonelogs_crash::android::parse_jdwp;
/// assert_eq!(parse_jdwp("1224\n1568\nnoise\n1224\n2411\n"), vec![1224, 1568, 2411]);
/// ```
pub fn parse_jdwp(text: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for line in text.lines() {
        if let Ok(pid) = line.trim().parse::<u32>()
            && pid > 0
            && seen.insert(pid)
        {
            pids.push(pid);
        }
    }
    pids
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn local_times() {
        let t = parse_local_date_time("2026-09-06 22:39:39.266").unwrap();
        assert_eq!(t.millisecond(), 266);
        assert!(parse_local_date_time("2026-09-06 22:39:39").is_some());
        assert!(parse_local_date_time("2026-13-06 22:39:39").is_none());
        assert!(parse_local_date_time("2026-09-06 22:39:39.").is_none());
    }

    #[test]
    fn installed_users_are_read_from_the_user_lines() {
        // The `User N:` layout of android-formats.md §6 (as in a public Adebar dump of a phone,
        // `User 0: ceDataInode=4001 installed=true hidden=false …`), for an app cloned into
        // user 10 and absent from user 11.
        let dump = "\
Packages:
  Package [com.whatsapp] (c0ffee):
    userId=10145
    pkgFlags=[ HAS_CODE ALLOW_CLEAR_USER_DATA ]
    User 0: ceDataInode=4001 installed=true hidden=false suspended=false distractionFlags=0 stopped=false notLaunched=false enabled=0 instant=false virtual=false
    User 10: ceDataInode=4002 installed=true hidden=false suspended=false distractionFlags=0 stopped=false notLaunched=false enabled=0 instant=false virtual=false
    User 11: ceDataInode=0 installed=false hidden=false suspended=false distractionFlags=0 stopped=true notLaunched=true enabled=0 instant=false virtual=false
";
        let info = parse_dumpsys_package(dump, "com.whatsapp").unwrap();
        assert_eq!(info.installed_users, vec![0, 10]);
        assert_eq!(installed_user("User x: installed=true"), None);
        assert_eq!(installed_user("User 3 installed=true"), None);
    }

    /// A release build's block as `dumpsys package` prints it (A-§6), with `extra` printed
    /// after `versionName=1.0` as part of the version name (an app chooses its `versionName`,
    /// line breaks included) and `late` as part of a requested permission's name.
    fn release_block(extra: &str, late: &str) -> String {
        format!(
            "Packages:\n  Package [com.example.app] (4b1c2d0):\n    userId=10127\n    pkg=Package{{8e0f1a2 com.example.app}}\n    versionCode=1 minSdk=21 targetSdk=34\n    versionName=1.0{extra}\n    flags=[ HAS_CODE ALLOW_CLEAR_USER_DATA ALLOW_BACKUP ]\n    privateFlags=[ ALLOW_AUDIO_PLAYBACK_CAPTURE ]\n    pkgFlags=[ HAS_CODE ALLOW_CLEAR_USER_DATA ALLOW_BACKUP ]\n    requested permissions:\n      android.permission.INTERNET{late}\n    User 0: ceDataInode=12345 installed=true hidden=false\n\nQueries:\n"
        )
    }

    /// Item 10 of issue 28: a release app whose `versionName` carries a line break and a
    /// forged `flags=[ DEBUGGABLE ]` line is not a development build, at whatever indentation
    /// the forged line stands; nor is one that forges it in a name printed after the flags.
    #[test]
    fn a_forged_flags_line_never_makes_a_release_build_debuggable() {
        let plain = parse_dumpsys_package(&release_block("", ""), "com.example.app").unwrap();
        assert!(!plain.is_debuggable());
        assert_eq!(plain.user_id, Some(10127));
        assert_eq!(plain.installed_users, vec![0]);
        for forged in [
            "\nflags=[ DEBUGGABLE ]",
            "\n  flags=[ DEBUGGABLE ]",
            "\n    flags=[ DEBUGGABLE HAS_CODE ]",
            "\n      flags=[ DEBUGGABLE ]",
            "\n    flags=[ DEBUGGABLE ]\n    pkgFlags=[ DEBUGGABLE ]",
            "\n\tflags=[ DEBUGGABLE ]",
            // Forged flags, then a forged end of the block before the real flags.
            "\n    flags=[ DEBUGGABLE ]\n    pkgFlags=[ DEBUGGABLE ]\nQueries:",
            "\n    flags=[ DEBUGGABLE ]\n    pkgFlags=[ DEBUGGABLE ]\n  Package [com.example.app] (1):",
            "\n    flags=[ DEBUGGABLE ]\nflags=[ DEBUGGABLE ]",
        ] {
            for (extra, late) in [(forged, ""), ("", forged)] {
                let dump = release_block(extra, late);
                let info = parse_dumpsys_package(&dump, "com.example.app").unwrap();
                assert!(!info.is_debuggable(), "{dump}");
            }
        }
    }

    proptest::proptest! {
        /// Lines an app smuggles into its release build's block (in its `versionName`, printed
        /// before the flags, or a permission's name, printed after them), any number, at any
        /// indentation, naming `DEBUGGABLE` in either list or ending the block early, never
        /// make it a development build.
        #[test]
        fn no_smuggled_lines_make_a_release_build_debuggable(
            smuggled in proptest::collection::vec(
                (0usize..9, 0u8..4, proptest::bool::ANY, "[ A-Z_]{0,12}"),
                1..5,
            ),
            late in proptest::bool::ANY,
        ) {
            let mut text = String::new();
            for (indent, kind, tab, more) in &smuggled {
                let key = match kind {
                    0 => "flags",
                    1 => "pkgFlags",
                    2 => "Package [com.example.app] (1):\nflags",
                    _ => "Queries:\nflags",
                };
                let pad = if *tab { "\t".repeat(*indent % 3) } else { " ".repeat(*indent) };
                text.push_str(&format!("\n{pad}{key}=[ DEBUGGABLE{more} ]"));
            }
            let (extra, late_text) = if late { ("", text.as_str()) } else { (text.as_str(), "") };
            let dump = release_block(extra, late_text);
            let info = parse_dumpsys_package(&dump, "com.example.app").unwrap();
            proptest::prop_assert!(!info.is_debuggable(), "{}", dump);
        }
    }

    /// A whole dump as `dumpsys package <pkg>` prints it (the fixture's layout,
    /// testdata/android/package/), with text the app chose printed raw in four places: an intent
    /// filter's action name in the resolver table and a permission it defines (both before the
    /// `Packages:` section), its `versionName` and a requested permission's name (in its block).
    fn whole_dump(forged: [&str; 4], flags: &str, shared: bool) -> String {
        let shared = if shared {
            "    sharedUser=SharedUserSetting{1 com.example.shared/10127}\n"
        } else {
            ""
        };
        format!(
            "Activity Resolver Table:\n  Non-Data Actions:\n      android.intent.action.MAIN{}:\n        7b1c2d0 com.example.app/.MainActivity filter 4a2c1d9\n\nPermissions:\n  Permission [com.example.app.permission.X{}] (c2a1b0e):\n    sourcePackage=com.example.app\n\nPackages:\n  Package [com.example.app] (4b1c2d0):\n    userId=10127\n{shared}    pkg=Package{{8e0f1a2 com.example.app}}\n    versionCode=1 minSdk=21 targetSdk=34\n    versionName=1.0{}\n    flags=[ {flags} ]\n    pkgFlags=[ {flags} ]\n    requested permissions:\n      android.permission.INTERNET{}\n    User 0: ceDataInode=12345 installed=true hidden=false\n\nQueries:\n  system apps queryable: false\n",
            forged[0], forged[1], forged[2], forged[3]
        )
    }

    /// Item 10 of issue 28, as a fresh review found it: a block forged before the real one (in an
    /// intent filter's action name) neither makes a release build debuggable nor hides the real
    /// block's shared user.
    #[test]
    fn a_block_forged_before_the_packages_section_is_not_read_as_the_apps() {
        let forged = "\nPackage [com.example.app] (1):\n flags=[ DEBUGGABLE ]\n pkgFlags=[ DEBUGGABLE ]\n userId=1000";
        let plain = parse_dumpsys_package(
            &whole_dump(["", "", "", ""], "HAS_CODE", true),
            "com.example.app",
        )
        .unwrap();
        assert!(!plain.is_debuggable() && plain.shared_user.is_some());
        let dump = whole_dump([forged, "", "", ""], "HAS_CODE", true);
        let info = parse_dumpsys_package(&dump, "com.example.app").unwrap();
        assert!(!info.is_debuggable(), "{dump}");
        assert!(info.shared_user.is_some(), "{dump}");
        assert_eq!(info.user_id, Some(10127), "{dump}");
        let debuggable = parse_dumpsys_package(
            &whole_dump(["", "", "", ""], "DEBUGGABLE HAS_CODE", false),
            "com.example.app",
        )
        .unwrap();
        assert!(debuggable.is_debuggable());
    }

    proptest::proptest! {
        /// Issue 28 item 10: blocks, section headers, flags lines and ends forged in every place
        /// the app's text is printed raw, any number, at any indentation, never make a release
        /// build debuggable, nor hide a `SYSTEM` flag or a shared user the real block has; with
        /// nothing forged, a development build still reads as one.
        #[test]
        fn no_forged_block_anywhere_lowers_a_guard(
            forged in proptest::collection::vec(
                proptest::collection::vec((0usize..4, 0usize..7, 0u8..9), 0..6),
                4,
            ),
            debuggable in proptest::bool::ANY,
            system in proptest::bool::ANY,
            shared in proptest::bool::ANY,
        ) {
            let texts: Vec<String> = forged
                .iter()
                .map(|lines| {
                    lines
                        .iter()
                        .map(|(_, indent, kind)| {
                            let line = match kind {
                                0 => "Package [com.example.app] (1):",
                                1 => "Packages:",
                                2 => "flags=[ DEBUGGABLE HAS_CODE ]",
                                3 => "pkgFlags=[ DEBUGGABLE HAS_CODE ]",
                                4 => "Queries:",
                                5 => "",
                                6 => "userId=10127",
                                7 => "sharedUser=",
                                _ => "Hidden system packages:",
                            };
                            format!("\n{}{line}", " ".repeat(*indent))
                        })
                        .collect()
                })
                .collect();
            let anything = texts.iter().any(|text| !text.is_empty());
            let flags = match (debuggable, system) {
                (true, true) => "DEBUGGABLE SYSTEM HAS_CODE",
                (true, false) => "DEBUGGABLE HAS_CODE",
                (false, true) => "SYSTEM HAS_CODE",
                (false, false) => "HAS_CODE",
            };
            let dump = whole_dump(
                [&texts[0], &texts[1], &texts[2], &texts[3]],
                flags,
                shared,
            );
            let info = parse_dumpsys_package(&dump, "com.example.app").unwrap();
            if !debuggable {
                proptest::prop_assert!(!info.is_debuggable(), "{}", dump);
            } else if !anything {
                proptest::prop_assert!(info.is_debuggable(), "{}", dump);
            }
            proptest::prop_assert!(!system || info.is_system(), "{}", dump);
            proptest::prop_assert!(!shared || info.shared_user.is_some(), "{}", dump);
        }
    }

    #[test]
    fn shared_user_and_flags_blocks_stop_at_next_package() {
        let dump = "\
Packages:
  Package [com.a] (1):
    userId=1000
    sharedUser=SharedUserSetting{1 android.uid.system/1000}
    pkgFlags=[ SYSTEM HAS_CODE ]
  Package [com.b] (2):
    userId=10200
    flags=[ DEBUGGABLE ]
";
        let a = parse_dumpsys_package(dump, "com.a").unwrap();
        assert!(a.is_system() && !a.is_debuggable());
        assert!(a.shared_user.is_some());
        assert!(a.installed_users.is_empty());
        let b = parse_dumpsys_package(dump, "com.b").unwrap();
        assert_eq!(b.user_id, Some(10200));
        assert!(b.is_debuggable());
        assert!(parse_dumpsys_package(dump, "com.c").is_none());
    }
}
