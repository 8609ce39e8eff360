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
    /// The names in the block's first `flags=[ … ]` and first `pkgFlags=[ … ]`, each once.
    pub flags: Vec<String>,
    /// `DEBUGGABLE` in the block's first `flags=` line and in its first `pkgFlags=` line (those
    /// the dump has; Android prints the same list in both), with neither line printed twice at
    /// the block's own indentation. A second one can only be text the app chose, printed raw
    /// in another field (a `versionName` with a line break and a forged line): then the flag
    /// is not believed, and the app is not a development build.
    pub debuggable: bool,
    /// The names in `privateFlags=[ … ]` and `privatePkgFlags=[ … ]`, each once.
    pub private_flags: Vec<String>,
    /// The Android users the package is installed for, from its `User N: … installed=true`
    /// lines, in the order printed: a second user is an app clone or a work profile.
    pub installed_users: Vec<u32>,
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
/// Only the lines at the block's own indentation (its first line's) are its fields, and of each
/// field the first: deeper lines belong to lists (permissions, per-user state), and an app can
/// put line breaks into text printed raw in the block (its `versionName`, its permissions'
/// names), so a second `flags=` or `pkgFlags=` line at that indentation, in the block or after
/// its end (which the app can forge too), means a forgery and the flags are not believed
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
    let mut lines = text.lines();
    let mut block = lines.by_ref().find_map(|line| {
        let trimmed = line.trim();
        trimmed
            .starts_with(&marker)
            .then(|| PackageBlock::new(package, line.len() - line.trim_start().len()))
    })?;
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
    Some(block.finish())
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
        }
    }

    /// Reads one field line (trimmed).
    fn read(&mut self, line: &str) {
        let info = &mut self.info;
        if let Some(value) = line.strip_prefix("userId=") {
            if info.user_id.is_none() {
                info.user_id = value.split_whitespace().next().and_then(|v| v.parse().ok());
            }
        } else if let Some(value) = line.strip_prefix("sharedUser=") {
            info.shared_user
                .get_or_insert_with(|| value.trim().to_owned());
        } else if let Some(list) = line.strip_prefix("flags=") {
            self.repeated |= first_list(&mut self.flags, list);
        } else if let Some(list) = line.strip_prefix("pkgFlags=") {
            self.repeated |= first_list(&mut self.pkg_flags, list);
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

    /// A line after the block's end, at its fields' indentation.
    fn after_the_end(&mut self, line: &str) {
        if line.starts_with("flags=") || line.starts_with("pkgFlags=") {
            self.repeated = true;
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
        for list in [&self.private_flags, &self.private_pkg_flags]
            .into_iter()
            .flatten()
        {
            add_flags(&mut info.private_flags, list);
        }
        info
    }
}

/// Keeps `list`'s names in `first` unless a list came before; returns whether one had.
fn first_list(first: &mut Option<Vec<String>>, list: &str) -> bool {
    if first.is_some() {
        return true;
    }
    let list = list.trim().trim_start_matches('[').trim_end_matches(']');
    *first = Some(list.split_whitespace().map(str::to_owned).collect());
    false
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
