//! The drop box reader's tests: real dumps (`testdata/android/dropbox/`), forgeries, and
//! the in-place reader held to the line-by-line one.

use super::*;

/// The line-by-line parser `parse_dropbox` was before it read entries in place: the reference
/// the in-place reader must agree with.
fn parse_dropbox_line_by_line(text: &str) -> Vec<DropBoxEntry> {
    let mut entries: Vec<DropBoxEntry> = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim() != ENTRY_SEPARATOR {
            continue;
        }
        let Some(header_line) = lines.next() else {
            break;
        };
        let Some((time, tag, contents)) = read_entry_header(header_line) else {
            continue;
        };
        let mut entry = DropBoxEntry {
            time,
            tag,
            contents,
            headers: Vec::new(),
            body: String::new(),
        };
        let mut in_headers = true;
        while let Some(next) = lines.peek() {
            if next.trim() == ENTRY_SEPARATOR {
                break;
            }
            let next = lines.next().unwrap_or_default();
            if in_headers {
                if next.trim().is_empty() {
                    in_headers = false;
                    continue;
                }
                if let Some((key, value)) = read_header_line(next) {
                    entry.headers.push((key.to_owned(), value.to_owned()));
                    continue;
                }
                in_headers = false;
            }
            entry.body.push_str(next);
            entry.body.push('\n');
        }
        entries.push(entry);
    }
    entries
}

/// Lines a drop box dump is made of, damaged ones included.
fn dump_line() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    prop_oneof![
        4 => Just(ENTRY_SEPARATOR.to_owned()),
        1 => Just(format!("  {ENTRY_SEPARATOR}\r")),
        1 => Just(format!("x{ENTRY_SEPARATOR}")),
        // A count no generated dump reaches: the line-by-line reference splits on every
        // separator, which the in-place reader does too when a count does not hold.
        4 => Just("2026-11-30 10:00:00 data_app_crash (text, 120000 bytes)".to_owned()),
        1 => Just("2026-11-30 10:00:01 data_app_anr (contents lost)".to_owned()),
        1 => Just("2026-13-30 10:00:01 data_app_anr (text, 1 bytes)".to_owned()),
        1 => Just(String::new()),
        1 => Just("   ".to_owned()),
        1 => Just("\r".to_owned()),
        3 => "(UID|PID|Process|Package|Timestamp|Subject): [ -~]{0,20}",
        1 => "[A-Za-z-]{1,8}:[ -~]{0,10}",
        1 => "[ -~=]{0,40}",
    ]
}

/// One entry as AOSP `DropBoxManagerService.dump` prints it with `--print`: the separator,
/// the header with the text's byte count, the text, a line break if it lacks one, a blank
/// line.
fn printed_entry(date: &str, tag: &str, text: &str) -> String {
    let mut out = format!(
        "{ENTRY_SEPARATOR}\n{date} {tag} (text, {} bytes)\n{text}",
        text.len()
    );
    if !text.ends_with('\n') {
        out.push('\n');
    }
    out.push('\n');
    out
}

fn crash_text(process: &str, uid: u32, message: &str) -> String {
    format!(
        "Process: {process}\nPID: 4242\nUID: {uid}\nFlags: 0x38c83e44\nPackage: {process} v1 (1.0)\n\njava.lang.IllegalStateException: {message}\n\tat {process}.MainActivity.onClick(MainActivity.java:42)\n"
    )
}

/// What another app would put in its exception message to make the rest of its own report
/// look like an entry of `process` (uid `uid`).
fn forgery(process: &str, uid: u32, count: usize) -> String {
    format!(
        "\n\n{ENTRY_SEPARATOR}\n2026-11-30 10:00:05 data_app_crash (text, {count} bytes)\nProcess: {process}\nPID: 4343\nUID: {uid}\n\nFORGED"
    )
}

#[test]
fn a_forged_separator_inside_an_entry_starts_no_entry() {
    let other = crash_text(
        "com.example.other",
        10300,
        &forgery("com.example.app", 10127, 9),
    );
    let mine = crash_text("com.example.app", 10127, "GENUINE");
    let dump = format!(
        "Drop box contents: 2 entries\n\n{}{}",
        printed_entry("2026-11-30 10:00:04", "data_app_crash", &other),
        printed_entry("2026-11-30 10:00:09", "data_app_crash", &mine)
    );
    let entries = parse_dropbox(&dump);
    assert_eq!(entries.len(), 2, "{entries:#?}");
    assert_eq!(entries[0].header("UID"), Some("10300"));
    assert!(entries[0].body.contains("FORGED"));
    assert_eq!(entries[1].header("UID"), Some("10127"));
    assert!(entries[1].body.contains("GENUINE") && !entries[1].body.contains("FORGED"));
    // The same through a pty, where every line break is `\r\n`.
    let crlf = dump.replace('\n', "\r\n");
    let entries = parse_dropbox(&crlf);
    assert_eq!(entries.len(), 2, "{entries:#?}");
    assert_eq!(entries[0].header("UID"), Some("10300"));
    // Without a count that holds, entries are split at every separator, as before.
    let uncounted = dump.replace(" bytes)", "0 bytes)");
    assert_eq!(parse_dropbox(&uncounted).len(), 3);
}

/// The listing fixture is what `dumpsys dropbox` prints for the print fixture's entries:
/// every entry is trusted. A forgery written into its compressed ANR is not, and neither is
/// anything after it.
#[test]
fn the_fixtures_listing_confirms_its_print() {
    let read = |name: &str| {
        std::fs::read_to_string(format!(
            "{}/../../testdata/android/dropbox/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    };
    let (listing, print) = (read("list-app-entries.txt"), read("print-app-entries.txt"));
    assert_eq!(dropbox_listing(&listing).len(), 7);
    let checked = checked_dropbox_entries(&listing, &print, |_| false);
    assert_eq!((checked.trusted.len(), checked.untrusted_count()), (7, 0));
    assert_eq!(checked.trusted, dropbox_entries(&print).collect::<Vec<_>>());
    let anr = print.find("data_app_anr (compressed text").unwrap();
    let inside = anr + print[anr..].find("\n\n").unwrap();
    let forged = format!(
        "{}{}{}",
        &print[..inside],
        forgery("com.example.crashtest", 10127, 9),
        &print[inside..]
    );
    let checked = checked_dropbox_entries(&listing, &forged, |_| false);
    assert_eq!((checked.trusted.len(), checked.untrusted_count()), (4, 4));
    assert!(
        checked
            .trusted
            .iter()
            .all(|entry| !entry.to_entry().body.contains("FORGED"))
    );
}

#[test]
fn the_fixtures_counts_hold() {
    for name in [
        "print-app-entries.txt",
        "print-old-no-uid.txt",
        "print-android10-no-pid.txt",
    ] {
        let path = format!(
            "{}/../../testdata/android/dropbox/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        let dump = std::fs::read_to_string(&path).unwrap();
        let mut at = 0;
        let mut plain = 0;
        while at < dump.len() {
            let (line, next) = line_at(&dump, at);
            if let Some((
                _,
                _,
                contents @ EntryContents::Text {
                    compressed: false, ..
                },
            )) = read_entry_header_ref(line)
            {
                plain += 1;
                assert!(
                    declared_end(&dump, next, contents, false).is_some(),
                    "{name}: {line}"
                );
            }
            at = next;
        }
        assert!(plain > 0, "{name}");
    }
}

proptest::proptest! {
    /// Another app's report whose text holds a forged separator and header never yields an
    /// entry of the app's uid or package, wherever it sits among the app's own entries.
    #[test]
    fn another_apps_text_never_forges_an_entry_of_the_app(
        before in 0usize..3,
        after in 0usize..3,
        prefix in "[ -~]{0,30}",
        suffix in "[ -~\n]{0,60}",
        forged_count in 0usize..400,
        forged_uid in proptest::sample::select(vec![10127u32, 1010127]),
        crlf in proptest::bool::ANY,
    ) {
        let message = format!("{prefix}{}{suffix}", forgery("com.example.app", forged_uid, forged_count));
        let other = crash_text("com.example.other", 10300, &message);
        let mut dump = String::from("Drop box contents: 5 entries\nMax entries: 1000\n\n");
        for n in 0..before {
            dump.push_str(&printed_entry("2026-11-30 10:00:01", "data_app_crash", &crash_text("com.example.app", 10127, &format!("GENUINE-{n}"))));
        }
        dump.push_str(&printed_entry("2026-11-30 10:00:04", "data_app_crash", &other));
        for n in 0..after {
            dump.push_str(&printed_entry("2026-11-30 10:00:09", "data_app_crash", &crash_text("com.example.app", 10127, &format!("GENUINE-{n}"))));
        }
        if crlf {
            dump = dump.replace('\n', "\r\n");
        }
        let app = AppMatch { uid: Some(10127), package: "com.example.app" };
        let clone = AppMatch { uid: Some(1010127), package: "com.example.app" };
        let entries = parse_dropbox(&dump);
        proptest::prop_assert_eq!(entries.len(), before + after + 1);
        for entry in &entries {
            if entry.matches(&app) || entry.matches(&clone) {
                proptest::prop_assert!(!entry.body.contains("FORGED"), "{:?}", entry);
                proptest::prop_assert_eq!(entry.header("PID"), Some("4242"));
            }
        }
        let reports = dropbox_reports(&dump, Some(&app), &PhoneClock::default());
        proptest::prop_assert_eq!(reports.len(), before + after);
        proptest::prop_assert!(reports.iter().all(|r| !r.text.contains("FORGED")));
    }

    /// On any listing and print, damaged ones included, the check neither panics nor
    /// loses or invents an entry: the trusted and the left out are the reader's entries.
    #[test]
    fn the_check_keeps_every_entry_on_one_side(
        listing in proptest::collection::vec(dump_line(), 0..20),
        print in proptest::collection::vec(dump_line(), 0..40),
        indent in proptest::bool::ANY,
    ) {
        let listing: Vec<String> = listing
            .iter()
            .map(|line| if indent { format!("    {line}") } else { line.clone() })
            .collect();
        let (listing, print) = (listing.join("\n"), print.join("\n"));
        let mut left_out = Vec::new();
        let checked = checked_dropbox_entries(&listing, &print, |entry| {
            left_out.push(*entry);
            entry.matches(&AppMatch { uid: Some(10127), package: "com.example.app" })
        });
        proptest::prop_assert_eq!(checked.untrusted, left_out.len());
        proptest::prop_assert_eq!(
            checked.claims,
            left_out.iter().filter(|entry| entry.matches(&APP)).count()
        );
        let mut sides = checked.trusted.clone();
        sides.extend(left_out.iter().copied());
        proptest::prop_assert_eq!(sides.len(), dropbox_entries(&print).count());
        for entry in dropbox_entries(&print) {
            proptest::prop_assert!(sides.contains(&entry));
        }
        // At most one trusted entry per listed one, and nothing else kept.
        proptest::prop_assert!(checked.trusted.len() <= dropbox_listing(&listing).len());
        // A listing without entries confirms none.
        if dropbox_listing(&listing).is_empty() {
            proptest::prop_assert!(checked.trusted.is_empty());
        }
    }

    #[test]
    fn in_place_entries_are_the_line_by_line_parsers(
        lines in proptest::collection::vec(dump_line(), 0..40),
        crlf in proptest::bool::ANY,
        final_newline in proptest::bool::ANY,
    ) {
        let mut dump = lines.join(if crlf { "\r\n" } else { "\n" });
        if final_newline {
            dump.push('\n');
        }
        let app = AppMatch { uid: Some(10127), package: "com.example.app" };
        let clock = PhoneClock::default();
        let expected = parse_dropbox_line_by_line(&dump);
        let entries: Vec<DropBoxEntryRef<'_>> = dropbox_entries(&dump).collect();
        proptest::prop_assert_eq!(entries.len(), expected.len());
        for (entry, owned) in entries.iter().zip(&expected) {
            proptest::prop_assert_eq!(&entry.to_entry(), owned);
            proptest::prop_assert_eq!(entry.matches(&app), owned.matches(&app));
            proptest::prop_assert_eq!(entry.report_time(&clock), owned.report_time(&clock));
            proptest::prop_assert_eq!(entry.header("UID"), owned.header("UID"));
        }
        proptest::prop_assert_eq!(parse_dropbox(&dump), expected);
    }
}

/// An entry as the drop box stores it, for printing both ways.
#[derive(Debug, Clone)]
struct Stored {
    date: String,
    tag: &'static str,
    text: String,
    compressed: bool,
}

impl Stored {
    fn new(date: &str, text: String, compressed: bool) -> Self {
        Stored {
            date: date.to_owned(),
            tag: "data_app_crash",
            text,
            compressed,
        }
    }

    /// The header line AOSP `DropBoxManagerService.dump` prints: for compressed text the
    /// gzip file's length, which says nothing of the printed text's.
    fn header_line(&self) -> String {
        if self.compressed {
            let gzip = self.text.len() / 4 + 512;
            format!("{} {} (compressed text, {gzip} bytes)", self.date, self.tag)
        } else {
            format!(
                "{} {} (text, {} bytes)",
                self.date,
                self.tag,
                self.text.len()
            )
        }
    }

    /// `--print`: the separator, the header line, the text, a line break if it lacks
    /// one, a blank line.
    fn printed(&self) -> String {
        let mut out = format!("{ENTRY_SEPARATOR}\n{}\n{}", self.header_line(), self.text);
        if !self.text.ends_with('\n') {
            out.push('\n');
        }
        out.push('\n');
        out
    }

    /// The listing: the header line and the preview of the text's first 70 bytes.
    fn listed(&self) -> String {
        format!(
            "{}\n    {}\n",
            self.header_line(),
            dropbox_preview(self.text.as_bytes())
        )
    }
}

fn print_of(entries: &[Stored]) -> String {
    let mut out = format!(
        "Drop box contents: {} entries\nMax entries: 1000\nSearching for: data_app_crash\n\n",
        entries.len()
    );
    for entry in entries {
        out.push_str(&entry.printed());
    }
    out
}

fn listing_of(entries: &[Stored]) -> String {
    let mut out = format!(
        "Drop box contents: {} entries\nMax entries: 1000\nSearching for: data_app_crash\n\n",
        entries.len()
    );
    for entry in entries {
        out.push_str(&entry.listed());
    }
    out
}

const APP: AppMatch<'static> = AppMatch {
    uid: Some(10127),
    package: "com.example.app",
};

/// Another app's crash, large enough to be stored compressed, whose exception message ends
/// in a forged separator, header and the app's `Process:`/`UID:` lines.
fn forging_entry(date: &str) -> Stored {
    let padding = "x".repeat(5000);
    let message = format!("{padding}{}", forgery("com.example.app", 10127, 9));
    Stored::new(date, crash_text("com.example.other", 10300, &message), true)
}

fn apps_entry(date: &str) -> Stored {
    Stored::new(date, crash_text("com.example.app", 10127, "GENUINE"), false)
}

fn claims_of_the_app<'a>(entries: &[DropBoxEntryRef<'a>]) -> Vec<DropBoxEntry> {
    entries
        .iter()
        .filter(|entry| entry.matches(&APP))
        .map(|entry| entry.to_entry())
        .collect()
}

#[test]
fn a_forgery_in_compressed_text_is_never_the_apps_whenever_entries_arrive() {
    let other = forging_entry("2026-11-30 10:00:04");
    let mine = apps_entry("2026-11-30 10:00:09");
    // (entries when the listing ran, entries when `--print` ran just after it, how many
    // entries are trusted, how many left out)
    let cases = [
        // Both were there for both commands: the forgery makes one entry more than
        // listed, so the app's entry after the compressed one cannot be pinned.
        (
            vec![other.clone(), mine.clone()],
            vec![other.clone(), mine.clone()],
            1,
            2,
        ),
        // The app's entry arrived between the commands: it is not listed.
        (vec![other.clone()], vec![other.clone(), mine.clone()], 1, 2),
        // The other app's arrived between them, after the app's: the app's is pinned as
        // the first entry, the other's is not listed, the forgery not pinned.
        (vec![mine.clone()], vec![mine.clone(), other.clone()], 1, 2),
        // The app's before the other's: both real entries are pinned and listed.
        (
            vec![mine.clone(), other.clone()],
            vec![mine.clone(), other.clone()],
            2,
            1,
        ),
    ];
    for (index, (listed, printed, trusted, untrusted)) in cases.into_iter().enumerate() {
        let (listing, print) = (listing_of(&listed), print_of(&printed));
        let mut left_out = Vec::new();
        let checked = checked_dropbox_entries(&listing, &print, |entry| {
            left_out.push(*entry);
            true
        });
        assert_eq!(
            (checked.trusted.len(), checked.untrusted_count()),
            (trusted, untrusted),
            "case {index}: {checked:#?}"
        );
        for entry in claims_of_the_app(&checked.trusted) {
            assert!(!entry.body.contains("FORGED"), "case {index}: {entry:#?}");
            assert_eq!(entry.header("PID"), Some("4242"), "case {index}");
        }
        // The forgery is among the left out, so it is counted, never shown.
        let forged = claims_of_the_app(&left_out);
        assert!(
            forged.iter().any(|entry| entry.body.contains("FORGED")),
            "case {index}: {forged:#?}"
        );
    }
}

/// Why the listing is read first. Read after `--print`, an entry of the app written
/// between the two would be listed but not printed, and a forgery that copied its header
/// line and first bytes (a second's time and a length, guessable) would take its place
/// one for one. Read first, an entry written between is never listed, so nothing printed
/// can stand for it.
#[test]
fn the_listing_comes_first() {
    let mine = apps_entry("2026-11-30 10:00:09");
    let copied = format!(
        "\n\n{ENTRY_SEPARATOR}\n{}\n{}FORGED\n",
        mine.header_line(),
        &mine.text[..70]
    );
    // The forged text holds the copied header's byte count, so its count holds too.
    let copied = copied.replacen(
        &format!("(text, {} bytes)", mine.text.len()),
        &format!("(text, {} bytes)", 70 + "FORGED\n".len()),
        1,
    );
    let mine = Stored::new(&mine.date, format!("{}FORGED\n", &mine.text[..70]), false);
    let other = Stored::new(
        "2026-11-30 10:00:04",
        crash_text(
            "com.example.other",
            10300,
            &format!("{}{copied}", "x".repeat(5000)),
        )
        .trim_end()
        .to_owned(),
        true,
    );
    // The wrong order: `--print` saw only the other app's entry, the listing both.
    let print = print_of(std::slice::from_ref(&other));
    let wrong =
        checked_dropbox_entries(&listing_of(&[other.clone(), mine.clone()]), &print, |_| {
            false
        });
    assert!(
        claims_of_the_app(&wrong.trusted)
            .iter()
            .any(|entry| entry.body.contains("FORGED")),
        "the forgery should pass when the listing is read last: {wrong:#?}"
    );
    // The right order: the listing saw only the other app's entry.
    let print = print_of(&[other.clone(), mine.clone()]);
    let right =
        checked_dropbox_entries(&listing_of(std::slice::from_ref(&other)), &print, |_| false);
    assert!(claims_of_the_app(&right.trusted).is_empty(), "{right:#?}");
    assert_eq!(right.trusted.len(), 1);
}

#[test]
fn an_intact_dump_is_trusted_whole() {
    let big = Stored::new(
        "2026-11-30 10:00:01",
        crash_text("com.example.other", 10300, &"y".repeat(6000)),
        true,
    );
    // The same text twice, but not the same header line (see
    // `twin_header_lines_are_never_one_for_one`).
    let later = Stored {
        date: "2026-11-30 10:00:02".into(),
        ..big.clone()
    };
    let entries = [
        apps_entry("2026-11-30 10:00:00"),
        big,
        apps_entry("2026-11-30 10:00:02"),
        later,
        Stored::new("2026-11-30 10:00:03", "short".into(), false),
    ];
    for crlf in [false, true] {
        let (mut listing, mut print) = (listing_of(&entries), print_of(&entries));
        if crlf {
            listing = listing.replace('\n', "\r\n");
            print = print.replace('\n', "\r\n");
        }
        let checked = checked_dropbox_entries(&listing, &print, |_| false);
        assert_eq!(checked.untrusted_count(), 0, "{checked:#?}");
        assert_eq!(checked.trusted.len(), 5);
        assert_eq!(claims_of_the_app(&checked.trusted).len(), 2);
        // A preview that disagrees with the printed text: only what can be pinned.
        let altered =
            listing.replacen("Process: com.example.other", "Process: com.example.evil", 1);
        let checked = checked_dropbox_entries(&altered, &print, |_| false);
        assert_eq!((checked.trusted.len(), checked.untrusted_count()), (2, 3));
    }
}

#[test]
fn data_and_lost_entries_end_where_their_line_does() {
    let print = format!(
        "{ENTRY_SEPARATOR}\n2026-11-30 10:00:00 data_app_crash (data, 10 bytes)\n\
             /data/system/dropbox/data_app_crash@1764496800000.dat\n\n\
             {ENTRY_SEPARATOR}\n2026-11-30 10:00:01 data_app_crash (contents lost)\n\
             {}",
        apps_entry("2026-11-30 10:00:02").printed()
    );
    // One more entry printed than listed: all three are still pinned.
    let listing = "2026-11-30 10:00:00 data_app_crash (data, 10 bytes)\n\
             2026-11-30 10:00:01 data_app_crash (contents lost)\n\
             2026-11-30 10:00:02 data_app_crash (text, 1 bytes)\n";
    let listing = listing.replace(
        "(text, 1 bytes)",
        &format!("(text, {} bytes)", apps_entry("x").text.len()),
    );
    let extra = format!("{print}{}", apps_entry("2026-11-30 10:00:03").printed());
    let checked = checked_dropbox_entries(&listing, &extra, |_| false);
    assert_eq!(
        (checked.trusted.len(), checked.untrusted_count()),
        (3, 1),
        "{checked:#?}"
    );
}

/// Whose entry a generated one is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Who {
    App,
    Clone,
    Other,
}

/// A forged entry another app writes into its own crash message.
#[derive(Debug, Clone)]
struct Forged {
    /// Where in the message, as a share of its length (0..=100).
    at: usize,
    /// 0: a count that holds to the message's end, 1: a random count, 2: `compressed
    /// text`, 3: the next real entry's header line, copied.
    form: u8,
    count: usize,
    /// The uid it claims: the app's or its clone's.
    uid: u32,
    /// The second of its time, which may be a real entry's.
    second: u8,
    /// Whether its text starts with the app's text (as its preview would show).
    copy_text: bool,
}

fn forged() -> impl proptest::strategy::Strategy<Value = Forged> {
    use proptest::prelude::*;
    (
        0usize..=100,
        0u8..4,
        0usize..400,
        proptest::sample::select(vec![10127u32, 1010127]),
        0u8..4,
        any::<bool>(),
    )
        .prop_map(|(at, form, count, uid, second, copy_text)| Forged {
            at,
            form,
            count,
            uid,
            second,
            copy_text,
        })
}

/// A generated entry: whose, compressed or not, the second of its time, the forgeries in
/// its message (only other apps' are kept).
fn planned() -> impl proptest::strategy::Strategy<Value = (Who, bool, u8, Vec<Forged>)> {
    use proptest::prelude::*;
    (
        proptest::sample::select(vec![Who::App, Who::Clone, Who::Other, Who::Other]),
        any::<bool>(),
        0u8..4,
        proptest::collection::vec(forged(), 0..3),
    )
}

/// The stored entries for a plan, built from the last so a forgery can copy the header
/// line of the entry after its own.
fn build(plan: &[(Who, bool, u8, Vec<Forged>)]) -> Vec<(Who, Stored)> {
    let genuine = crash_text("com.example.app", 10127, "GENUINE");
    let mut built: Vec<(Who, Stored)> = Vec::new();
    for (index, (who, compressed, second, forgeries)) in plan.iter().enumerate().rev() {
        let date = format!("2026-11-30 10:00:0{second}");
        let (process, uid) = match who {
            Who::App => ("com.example.app", 10127),
            Who::Clone => ("com.example.app", 1010127),
            Who::Other => ("com.example.other", 10300),
        };
        let mut message = format!("message {index}");
        if *compressed {
            message.push_str(&"z".repeat(4200));
        }
        if *who == Who::Other {
            for forged in forgeries {
                let at = message.len() * forged.at / 100;
                let text = format!(
                    "Process: com.example.app\nPID: 4343\nUID: {}\n\nFORGED\n",
                    forged.uid
                );
                let text = if forged.copy_text {
                    format!("{}{text}", &genuine[..70])
                } else {
                    text
                };
                let forged_date = format!("2026-11-30 10:00:0{}", forged.second);
                let header = match (forged.form, built.last()) {
                    (0, _) => format!("{forged_date} data_app_crash (text, @COUNT@ bytes)"),
                    (1, _) => {
                        format!(
                            "{forged_date} data_app_crash (text, {} bytes)",
                            forged.count
                        )
                    }
                    (3, Some((_, next))) => next.header_line(),
                    _ => format!(
                        "{forged_date} data_app_crash (compressed text, {} bytes)",
                        forged.count
                    ),
                };
                message.insert_str(at, &format!("\n\n{ENTRY_SEPARATOR}\n{header}\n{text}"));
            }
        }
        let mut text = crash_text(process, uid, &message);
        // A count that holds: the bytes from after the forged header line to the text's
        // end, and the line break `dump` adds when the text lacks one.
        while let Some(at) = text.find("@COUNT@ bytes)\n") {
            let rest = text.len() - (at + "@COUNT@ bytes)\n".len());
            text.replace_range(at..at + "@COUNT@".len(), &rest.to_string());
        }
        built.push((*who, Stored::new(&date, text, *compressed)));
    }
    built.reverse();
    built
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1024))]

    /// Whatever other apps write into their crash texts, and whenever entries are written
    /// around the two commands: every trusted entry starts where a real entry does and
    /// holds only that entry's text, so an entry trusted as the app's (or its clone's) is
    /// a real one of it; and a dump nobody forged in loses nothing.
    #[test]
    fn no_trusted_entry_holds_another_entrys_text(
        plan in proptest::collection::vec(planned(), 0..6),
        listed_upto in 0usize..7,
        trimmed in 0usize..3,
        crlf in proptest::bool::ANY,
        cut in proptest::option::of(0usize..=100),
    ) {
        let built = build(&plan);
        let stored: Vec<Stored> = built.iter().map(|(_, entry)| entry.clone()).collect();
        // The listing runs first, over the entries there then; entries written after it
        // are printed too, and the oldest may be trimmed away in between.
        let listed_upto = listed_upto.min(stored.len());
        let trimmed = trimmed.min(listed_upto);
        let mut listing = listing_of(&stored[..listed_upto]);
        let mut print = print_of(&stored[trimmed..]);
        if crlf {
            listing = listing.replace('\n', "\r\n");
            print = print.replace('\n', "\r\n");
        }
        // Where each printed real entry's text lies, found by its header line's place.
        let mut spans: Vec<(usize, usize, Who, &Stored)> = Vec::new();
        let mut from = 0;
        let line_break = if crlf { "\r\n" } else { "\n" };
        for (who, entry) in &built[trimmed..] {
            let printed = if crlf { entry.printed().replace('\n', "\r\n") } else { entry.printed() };
            let at = from + print[from..].find(&printed).unwrap();
            let text_start = at + ENTRY_SEPARATOR.len() + line_break.len() + entry.header_line().len() + line_break.len();
            spans.push((text_start, at + printed.len(), *who, entry));
            from = at + printed.len();
        }
        // dumpsys' timeout may cut the print anywhere, then print its line.
        let mut cut_at = print.len();
        if let Some(share) = cut {
            cut_at = print.len() * share / 100;
            while !print.is_char_boundary(cut_at) {
                cut_at -= 1;
            }
            print.truncate(cut_at);
            print.push_str(&format!("\n{TIMEOUT_LINE}\n\n"));
        }
        let checked = checked_dropbox_entries(&listing, &print, |_| false);
        proptest::prop_assert_eq!(checked.cut, cut.is_some());
        let clone = AppMatch { uid: Some(1010127), package: "com.example.app" };
        for entry in &checked.trusted {
            let start = entry.header_lines.as_ptr() as usize - print.as_ptr() as usize;
            let end = start + entry.header_lines.len()
                + (entry.body_lines.as_ptr() as usize - entry.header_lines.as_ptr() as usize - entry.header_lines.len())
                + entry.body_lines.len();
            let real = spans.iter().find(|(text_start, ..)| *text_start == start);
            proptest::prop_assert!(real.is_some(), "a trusted entry starts at no real entry: {:?}", entry);
            let (_, real_end, who, stored) = real.unwrap();
            // The entry a cut fell in is never trusted.
            proptest::prop_assert!(end <= (*real_end).min(cut_at), "{:?}", entry);
            proptest::prop_assert_eq!(entry.time, stored.date.as_str());
            if entry.matches(&APP) {
                proptest::prop_assert_eq!(*who, Who::App);
            }
            if entry.matches(&clone) {
                proptest::prop_assert_eq!(*who, Who::Clone);
            }
            proptest::prop_assert!(!entry.to_entry().body.contains("FORGED") || *who == Who::Other);
            // An entry whose text holds no separator is the real one, whole.
            if !stored.text.contains(ENTRY_SEPARATOR) && cut.is_none() {
                let mut alone = stored.printed();
                if crlf {
                    alone = alone.replace('\n', "\r\n");
                }
                proptest::prop_assert_eq!(entry.to_entry(), parse_dropbox(&alone).remove(0));
            }
        }
        let forged = plan.iter().any(|(who, _, _, forgeries)| *who == Who::Other && !forgeries.is_empty());
        // Twin header lines are never one for one (see `twin_header_lines_are_never_one_for_one`).
        let mut headers: Vec<String> = stored.iter().map(Stored::header_line).collect();
        headers.sort();
        headers.dedup();
        let twins = headers.len() < stored.len();
        if !forged && !twins && cut.is_none() && listed_upto == stored.len() && trimmed == 0 {
            proptest::prop_assert_eq!(checked.untrusted_count(), 0);
            proptest::prop_assert_eq!(checked.trusted.len(), stored.len());
        }
    }
}

/// The app's entry as the listing shows it, and another app's compressed entry whose text
/// ends in a forged separator, `header` and `forged_text`: the print when the app's entry
/// was gone by the time `--print` ran.
fn forged_in_place_of(header: &str, forged_text: &str) -> String {
    let other = crash_text(
        "com.example.other",
        10300,
        &format!(
            "{}\n\n{ENTRY_SEPARATOR}\n{header}\n{forged_text}",
            "x".repeat(5000)
        ),
    );
    format!(
        "Drop box contents: 1 entries\n\n{ENTRY_SEPARATOR}\n\
             2026-11-30 10:00:04 data_app_crash (compressed text, 1800 bytes)\n{other}\n"
    )
}

/// The listing of that other app's entry (its preview taken from the print) and of
/// `listed`, each a header line and a stored text.
fn listing_with(print: &str, listed: &[(&str, &str)]) -> String {
    let other = dropbox_entries(print).next().unwrap();
    let mut text: String = other.header_lines.to_owned();
    text.push('\n');
    text.push_str(other.body_lines);
    let mut out = format!(
        "Drop box contents: 2 entries\n\n\
             2026-11-30 10:00:04 data_app_crash (compressed text, 1800 bytes)\n    {}\n",
        dropbox_preview(text.as_bytes())
    );
    for (header, text) in listed {
        out.push_str(&format!(
            "{header}\n    {}\n",
            dropbox_preview(text.as_bytes())
        ));
    }
    out
}

/// Whether any trusted entry is the app's and holds the forgery.
fn forged_trusted(checked: &CheckedEntries<'_>) -> bool {
    checked
        .trusted
        .iter()
        .any(|entry| entry.matches(&APP) && entry.to_entry().body.contains("FORGED"))
}

/// D1: two listed entries with the same header line (the same second, the same size). When
/// the second is gone by the time `--print` runs, a forgery inside the first's compressed
/// text that copies the header line and the first 70 bytes could stand for it one for one.
#[test]
fn twin_header_lines_are_never_one_for_one() {
    let header = "2026-11-30 10:00:04 data_app_crash (compressed text, 1800 bytes)";
    let mine = crash_text("com.example.app", 10127, &"a".repeat(5000));
    let print = forged_in_place_of(header, &format!("{}FORGED\n", &mine[..70]));
    let listing = listing_with(&print, &[(header, &mine)]);
    assert_eq!(dropbox_listing(&listing).len(), 2);
    let checked = checked_dropbox_entries(&listing, &print, |entry| entry.matches(&APP));
    assert!(!forged_trusted(&checked), "{checked:#?}");
    assert_eq!(
        (checked.trusted.len(), checked.untrusted, checked.claims),
        (1, 1, 1)
    );
    // Two compressed twins of the app: only the first is pinned. The same texts under
    // distinct header lines are one for one.
    let twin = |date: &str| {
        Stored::new(
            date,
            crash_text("com.example.app", 10127, &"a".repeat(5000)),
            true,
        )
    };
    let entries = [twin("2026-11-30 10:00:00"), twin("2026-11-30 10:00:00")];
    let print = print_of(&entries);
    let twins = checked_dropbox_entries(&listing_of(&entries), &print, |_| true);
    assert_eq!((twins.trusted.len(), twins.untrusted), (1, 1), "{twins:#?}");
    let entries = [twin("2026-11-30 10:00:00"), twin("2026-11-30 10:00:01")];
    let print = print_of(&entries);
    let distinct = checked_dropbox_entries(&listing_of(&entries), &print, |_| true);
    assert_eq!((distinct.trusted.len(), distinct.untrusted), (2, 0));
}

/// The line `dumpsys` prints when a dump ran past its timeout (`dumpsys.cpp`).
const TIMEOUT_LINE: &str = "*** SERVICE 'dropbox' DUMP TIMEOUT (10000ms) EXPIRED ***";

/// D2: a print cut short by dumpsys' timeout can end right after a forgery, where the real
/// entry it stands for was never printed: such a print is pinned only.
#[test]
fn a_print_cut_by_the_timeout_is_never_one_for_one() {
    let mine = crash_text("com.example.app", 10127, "GENUINE");
    let header = format!(
        "2026-11-30 10:00:09 data_app_crash (text, {} bytes)",
        mine.len()
    );
    let forged = format!("{}FORGED\n", &mine[..70]);
    // What dumpsys printed before the cut, then its line (`writeDump` and `main` both
    // print it).
    let print = format!(
        "{}\n{TIMEOUT_LINE}\n\n\n{TIMEOUT_LINE}\n\n",
        forged_in_place_of(&header, &forged).trim_end()
    );
    let listing = listing_with(&print, &[(&header, &mine)]);
    let checked = checked_dropbox_entries(&listing, &print, |entry| entry.matches(&APP));
    assert!(checked.cut);
    assert!(!forged_trusted(&checked), "{checked:#?}");
    assert_eq!((checked.trusted.len(), checked.claims), (1, 1));
    // A listing cut short says the same.
    let entries = [
        apps_entry("2026-11-30 10:00:00"),
        apps_entry("2026-11-30 10:00:01"),
    ];
    let cut_listing = format!("{}\n{TIMEOUT_LINE}\n\n", listing_of(&entries));
    let print = print_of(&entries);
    let checked = checked_dropbox_entries(&cut_listing, &print, |_| false);
    assert!(checked.cut);
    // Both are pinned here (each entry's count holds), so nothing is lost.
    assert_eq!(checked.trusted.len(), 2);
    // The entry the cut fell in is never trusted: here it cut another uid's `UID: 101270`
    // to the app's.
    let theirs = Stored::new(
        "2026-11-30 10:00:00",
        crash_text("com.example.app", 101_270, "THEIRS"),
        false,
    );
    let whole = print_of(std::slice::from_ref(&theirs));
    let at = whole.find("UID: 10127").unwrap() + "UID: 10127".len();
    let print = format!("{}\n{TIMEOUT_LINE}\n\n", &whole[..at]);
    let checked =
        checked_dropbox_entries(&listing_of(&[theirs]), &print, |entry| entry.matches(&APP));
    assert_eq!(
        (checked.trusted.len(), checked.claims),
        (0, 1),
        "{checked:#?}"
    );
    // Only the whole line counts.
    assert!(!dump_timed_out("the DUMP TIMEOUT (10000ms) EXPIRED ***"));
    assert!(!dump_timed_out(
        "*** SERVICE 'dropbox' DUMP TIMEOUT (ms) EXPIRED ***"
    ));
    assert!(dump_timed_out(&format!("x\r\n{TIMEOUT_LINE}\r\n")));
}

/// D3: a preview is compared exactly as AOSP makes it, so a forgery whose text starts
/// `Process: ` and then a non-ASCII byte no longer agrees with any preview starting so.
#[test]
fn a_non_ascii_byte_does_not_shorten_the_comparison() {
    let mine = crash_text("com.example.app", 10127, "GENUINE");
    let header = format!(
        "2026-11-30 10:00:09 data_app_crash (text, {} bytes)",
        mine.len()
    );
    let forged = "Process: \u{e9}vil\nUID: 10127\n\nFORGED\n";
    let print = forged_in_place_of(&header, forged);
    let listing = listing_with(&print, &[(&header, &mine)]);
    let checked = checked_dropbox_entries(&listing, &print, |entry| entry.matches(&APP));
    assert!(!forged_trusted(&checked), "{checked:#?}");
    assert_eq!((checked.trusted.len(), checked.claims), (1, 1));
}

/// Texts with characters of every width at the 70th byte: the preview made from the
/// stored bytes agrees with the print one for one.
#[test]
fn non_ascii_previews_agree_one_for_one() {
    for wide in ['\u{e9}', '\u{20ac}', '\u{1f600}'] {
        for shift in 0..4 {
            let text = format!("{}{}tail of the text\n", "x".repeat(66 + shift), wide);
            let entries = [
                Stored::new("2026-11-30 10:00:00", text.clone(), false),
                Stored::new(
                    "2026-11-30 10:00:01",
                    format!("{text}{}", "y".repeat(5000)),
                    true,
                ),
                Stored::new("2026-11-30 10:00:02", "\u{e9}".repeat(40), false),
            ];
            for crlf in [false, true] {
                let (mut listing, mut print) = (listing_of(&entries), print_of(&entries));
                if crlf {
                    listing = listing.replace('\n', "\r\n");
                    print = print.replace('\n', "\r\n");
                }
                let checked = checked_dropbox_entries(&listing, &print, |_| true);
                assert_eq!(
                    (checked.trusted.len(), checked.untrusted),
                    (3, 0),
                    "{wide} {shift} {crlf}: {listing}"
                );
            }
        }
    }
}

/// D5: an entry holding a great many forged separators costs a count, not an entry each.
#[test]
fn many_forged_separators_are_counted_not_kept() {
    let forgery = format!(
        "\n{ENTRY_SEPARATOR}\n2026-11-30 10:00:05 data_app_crash (compressed text, 9 bytes)\n\
             Process: com.example.app\nUID: 10127\n"
    );
    let other = Stored::new(
        "2026-11-30 10:00:04",
        crash_text("com.example.other", 10300, &forgery.repeat(200_000)),
        true,
    );
    let (listing, print) = (listing_of(std::slice::from_ref(&other)), print_of(&[other]));
    let checked = checked_dropbox_entries(&listing, &print, |entry| entry.matches(&APP));
    assert_eq!(
        (checked.trusted.len(), checked.untrusted, checked.claims),
        (1, 200_000, 200_000)
    );
}

#[test]
fn header_variants() {
    let (_, tag, contents) =
        read_entry_header("2026-11-30 10:00:00 data_app_anr (compressed text, 5 bytes)").unwrap();
    assert_eq!(tag, "data_app_anr");
    assert_eq!(
        contents,
        EntryContents::Text {
            compressed: true,
            bytes: 5
        }
    );
    let (_, _, contents) = read_entry_header("2026-11-30 10:00:00 x (contents lost)").unwrap();
    assert_eq!(contents, EntryContents::ContentsLost);
    let (_, _, contents) = read_entry_header("2026-11-30 10:00:00 x (no file)").unwrap();
    assert_eq!(contents, EntryContents::NoFile);
    assert!(read_entry_header("not a header").is_none());
}

#[test]
fn match_without_uid_by_the_package_lists_first_line() {
    let app = AppMatch {
        uid: None,
        package: "com.example.app",
    };
    let entry = |headers: &[(&str, &str)]| entry("data_app_crash", headers, "");
    let real = [
        ("Process", "com.example.app:remote"),
        ("Flags", "0x38c83e44"),
        ("Package", "com.example.app v3 (1.2)"),
        ("Package", "com.example.helper v3 (1.2)"),
    ];
    assert_eq!(entry(&real).attribution(&app), Attribution::Package);
    assert!(!entry(&real).matches(&AppMatch {
        uid: None,
        package: "com.example"
    }));
    // With a `UID:` where the system prints it, the uid decides alone.
    let mut with_uid = real.to_vec();
    with_uid.insert(1, ("UID", "10200"));
    let with_uid = entry(&with_uid);
    assert_eq!(
        with_uid.attribution(&AppMatch {
            uid: Some(10127),
            package: "com.example.app"
        }),
        Attribution::Other
    );
    assert_eq!(
        with_uid.attribution(&AppMatch {
            uid: Some(10200),
            package: "com.example.nothing"
        }),
        Attribution::Uid
    );
    // The app on a later line (a process hosting several packages, or a line another
    // package's `versionName` printed), a process of the app's name (any app may take
    // it), and headers after the package list naming it: ambiguous, never the app's.
    let ambiguous: [&[(&str, &str)]; 6] = [
        &[
            ("Process", "com.example.other"),
            ("Flags", "0x0"),
            ("Package", "com.example.other v1 (1.0"),
            ("Package", "com.example.app v1 (x)"),
        ],
        &[
            ("Process", "com.example.app"),
            ("Flags", "0x0"),
            ("Package", "com.example.other v1 (1.0)"),
        ],
        &[
            ("Process", "com.example.other"),
            ("Flags", "0x0"),
            ("Package", "com.example.other v1 (1.0"),
            ("UID", "10127"),
        ],
        &[
            ("Process", "com.example.other"),
            ("Flags", "0x0"),
            ("Package", "com.example.other v1 (1.0"),
            ("Process", "com.example.app"),
        ],
        // No `Flags:` right before it: not the package list the system prints.
        &[
            ("Process", "com.example.app"),
            ("Package", "com.example.app"),
        ],
        &[
            ("Process", "com.example.other"),
            ("Flags", "0x0"),
            ("Foreground", "Yes"),
            ("Package", "com.example.app"),
        ],
    ];
    let app = AppMatch {
        uid: Some(10127),
        package: "com.example.app",
    };
    for headers in ambiguous {
        assert_eq!(
            entry(headers).attribution(&app),
            Attribution::Ambiguous,
            "{headers:?}"
        );
    }
    // A `UID:` or `PID:` after the process headers is never read as one.
    let forged = entry(&[
        ("Process", "com.example.app"),
        ("Flags", "0x0"),
        ("Package", "com.example.app v1 (1.0"),
        ("UID", "10300"),
        ("PID", "1230"),
    ]);
    assert_eq!(forged.attribution(&app), Attribution::Package);
    assert_eq!(forged.identity().uid, None);
    assert_eq!(forged.identity().pid, None);
    // Nothing names the app.
    assert_eq!(
        entry(&[("Process", "x"), ("Flags", "0x0"), ("Package", "x v1")]).attribution(&app),
        Attribution::Other
    );
}

fn entry(tag: &str, headers: &[(&str, &str)], body: &str) -> DropBoxEntry {
    DropBoxEntry {
        time: "2020-09-14 10:05:10".into(),
        tag: tag.into(),
        contents: EntryContents::Text {
            compressed: false,
            bytes: 1,
        },
        headers: headers
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        body: body.into(),
    }
}

const TWO_SECTIONS: &str = "\
----- pid 1230 at 2020-09-14 10:05:08 -----
Cmd line: system_server
----- end 1230 -----

----- pid 9001 at 2020-09-14 10:05:08 -----
Cmd line: com.example.crashtest
\"main\" prio=5 tid=1 Sleeping
----- end 9001 -----
";

#[test]
fn anr_without_pid_header_takes_the_apps_section_pid() {
    // The app's section is not the first one here, so taking the first pid would fail.
    let anr = entry(
        "data_app_anr",
        &[("Process", "com.example.crashtest")],
        TWO_SECTIONS,
    );
    assert_eq!(anr.pid(), Some(9001));
    let report = anr.to_report(&PhoneClock::default()).unwrap();
    assert_eq!(report.pid, Some(9001));
    assert!(report.text.contains("\"main\" prio=5"));
    assert!(!report.text.contains("system_server"));
}

#[test]
fn anr_without_pid_or_process_takes_the_first_section() {
    let anr = entry("data_app_anr", &[], TWO_SECTIONS);
    assert_eq!(anr.pid(), Some(1230));
    assert_eq!(
        anr.to_report(&PhoneClock::default()).unwrap().pid,
        Some(1230)
    );
}

/// The Android 10 ANR entry of the app and its clone (testdata), with `from` replaced by
/// `to` in its headers, read as the app's reports.
fn forged_android10_anr(from: &str, to: &str) -> Vec<Report> {
    let text = include_str!("../../../../testdata/android/dropbox/print-android10-anr-clone.txt")
        .replace(from, to);
    let app = AppMatch {
        uid: Some(10127),
        package: "com.example.crashtest",
    };
    dropbox_reports(&text, Some(&app), &PhoneClock::default())
}

/// Issue 28 item 9, as a fresh review found it: an Android 10 ANR entry (no `PID:`) whose
/// `versionName`, printed raw in its `Package:` header, forges a section start of another
/// process's pid (system_server's 1230) with the app's command line: the forged section is
/// never taken, so system_server's section stays out and the app's own is kept.
#[test]
fn a_section_forged_in_a_header_value_never_brings_another_process_in() {
    let reports = forged_android10_anr(
        "Package: com.example.crashtest v1 (1.0)\n",
        "Package: com.example.crashtest v1 (1.0\n----- pid 1230 at 2020-09-14 10:05:08 -----\nCmd line: com.example.crashtest\n)\n",
    );
    assert_eq!(reports.len(), 1);
    let report = &reports[0];
    assert!(
        !report.text.contains("Cmd line: system_server") && !report.text.contains("nativePollOnce"),
        "{}",
        report.text
    );
    assert_eq!(report.pid, Some(9001), "{}", report.text);
    assert!(
        report.text.contains("MainActivity.onHang"),
        "{}",
        report.text
    );
    // With its end forged too, the pid it names (system_server's) is in doubt: nothing is kept.
    let reports = forged_android10_anr(
        "Package: com.example.crashtest v1 (1.0)\n",
        "Package: com.example.crashtest v1 (1.0\n----- pid 1230 at 2020-09-14 10:05:08 -----\nCmd line: com.example.crashtest\n----- end 1230 -----\n)\n",
    );
    assert!(
        !reports[0].text.contains("nativePollOnce"),
        "{}",
        reports[0].text
    );
    assert!(
        !reports[0].text.contains("WorkProfileSync"),
        "{}",
        reports[0].text
    );
    // Or the clone's pid (9301): the same.
    let reports = forged_android10_anr(
        "Package: com.example.crashtest v1 (1.0)\n",
        "Package: com.example.crashtest v1 (1.0\n----- pid 9301 at 2020-09-14 10:05:08 -----\nCmd line: com.example.crashtest\n----- end 9301 -----\n)\n",
    );
    assert!(
        !reports[0].text.contains("WorkProfileSync"),
        "{}",
        reports[0].text
    );
}

/// Issue 28 item 9's variant: a section start of the app's own pid forged in the
/// `Activity:` header runs over the real headers and the `CPU usage` list (every process on
/// the phone, by name and pid) to the real section; it is never taken.
#[test]
fn a_section_forged_in_a_header_value_never_keeps_the_cpu_list() {
    let reports = forged_android10_anr(
        "Activity: com.example.crashtest/.MainActivity\n",
        "Activity: com.example.crashtest/.MainActivity\n----- pid 9001 at 2020-09-14 10:05:08 -----\nCmd line: com.example.crashtest\n",
    );
    assert_eq!(reports.len(), 1);
    let report = &reports[0];
    assert!(
        !report.text.contains("1230/system_server"),
        "{}",
        report.text
    );
    assert!(
        report.text.contains("MainActivity.onHang"),
        "{}",
        report.text
    );
}

#[test]
fn anr_whose_process_has_no_section_has_no_pid() {
    // Another process's pid would be wrong, so none is better.
    let anr = entry(
        "data_app_anr",
        &[("Process", "com.example.gone")],
        TWO_SECTIONS,
    );
    assert_eq!(anr.pid(), None);
    assert_eq!(anr.to_report(&PhoneClock::default()).unwrap().pid, None);
}

#[test]
fn native_crash_without_pid_header_takes_the_tombstone_pid() {
    let native = entry(
        "data_app_native_crash",
        &[("Process", "com.example.crashtest")],
        "pid: 9102, tid: 9120, name: RenderThread  >>> com.example.crashtest <<<\n\
             signal 6 (SIGABRT), code -6 (SI_TKILL), fault addr --------\n",
    );
    assert_eq!(native.pid(), Some(9102));
    assert_eq!(
        native.to_report(&PhoneClock::default()).unwrap().pid,
        Some(9102)
    );
}

#[test]
fn pid_header_wins_and_java_crashes_have_no_body_pid() {
    let anr = entry(
        "data_app_anr",
        &[("Process", "com.example.crashtest"), ("PID", "4242")],
        TWO_SECTIONS,
    );
    assert_eq!(anr.pid(), Some(4242));
    assert_eq!(
        anr.to_report(&PhoneClock::default()).unwrap().pid,
        Some(4242)
    );
    let java = entry(
        "data_app_crash",
        &[("Process", "com.example.crashtest")],
        "pid: 1, tid: 1, name: main  >>> x <<<\n",
    );
    assert_eq!(java.pid(), None);
    assert_eq!(java.to_report(&PhoneClock::default()).unwrap().pid, None);
    assert_eq!(entry("SYSTEM_BOOT", &[], TWO_SECTIONS).pid(), None);
}
