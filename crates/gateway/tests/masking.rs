//! Issue 37's property: whatever reads an agent makes over an app's log stream that holds
//! private key blocks (logged one line at a time) and keys of common shapes before any
//! punctuation, no result shows a raw body line or key, and a `filter` on a piece of one
//! matches nothing. The reads mix `since` (a cursor, `"last"`), `limit`, `filter`, `exclude`,
//! `tag`, `fold: false`, `wait_for` on a redaction, and crashes with their `context` lines.

// Tests may unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use phonelogs_driver::{AppId, LogLevel, LogLine};
use phonelogs_gateway::{LogsKind, LogsRequest};
use proptest::prelude::*;
use time::Duration;

/// Keys of a dozen common shapes, with the text the app writes before each. The gitleaks ones
/// are gitleaks' own true-positive samples (`testdata/secrets/gitleaks-samples.json`); the
/// rest are made for these tests, not real.
const KEYS: [(&str, &str); 12] = [
    (
        "init(key=",
        "sk_test_51OuEMLAlTWGaDypq4P5cuDHbuKeG4tAGPYHJpEXQ7zE8mKK3jkhTFPvCxnSSK5zB5EQZrJsYdsatNmAHGgb0vSKD00GTMSWRHs",
    ),
    ("aws ", "AKIALALEMEL33243OLIB"),
    (
        "[\"",
        "xoxb-781236542736-2364535789652-GkwFDQoHqzXDVsC6GzqYUypD",
    ),
    (
        "openai(",
        "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",
    ),
    (
        "",
        "sk-ant-api03-abc123xyz-456def789ghij-klmnopqrstuvwx-3456yza789bcde-1234fghijklmnopby56aaaogaopaaaabc123xyzAA",
    ),
    ("maps key ", "AIzaSyNHxIf32IQ1a1yjl3ZJIqKZqzLAK1XhDk-"),
    (
        "hook=",
        "https://hooks.slack.com/services/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",
    ),
    (
        "sentry ",
        "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",
    ),
    ("hf login --token ", "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"),
    (
        "session refreshed, id_token ",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk",
    ),
    ("Authorization: Bearer ", "9f8e7d6c5b4a39281706"),
    ("login(password=", "hunter2-Secret-991"),
];

/// What an app writes right after a key.
const AFTER: [&str; 11] = [")", ",", ".", "]", "&", "\"", "'", "…", ").", "", " ok"];

#[derive(Debug, Clone)]
enum Item {
    Plain(String),
    Key(usize, usize),
    /// A PEM private key block, one log line per line: this many body lines.
    Block(Vec<String>),
}

fn item() -> impl Strategy<Value = Item> {
    // Body lines of 64 characters, the last one shorter.
    let body = (
        prop::collection::vec(
            proptest::string::string_regex("[A-Za-z0-9+/]{64}").unwrap(),
            0..5,
        ),
        proptest::string::string_regex("[A-Za-z0-9+/]{24,63}=").unwrap(),
    )
        .prop_map(|(mut lines, last)| {
            lines.push(last);
            lines
        });
    prop_oneof![
        3 => proptest::string::string_regex("[a-z]{3,8}( [a-z]{2,6}){0,3}").unwrap().prop_map(Item::Plain),
        2 => (0..KEYS.len(), 0..AFTER.len()).prop_map(|(k, a)| Item::Key(k, a)),
        2 => body.prop_map(Item::Block),
    ]
}

#[derive(Debug, Clone)]
struct Read {
    crashes: bool,
    since: Option<u8>,
    limit: Option<u32>,
    filter: Option<u8>,
    exclude: bool,
    tag: bool,
    fold: bool,
    wait: bool,
}

fn read() -> impl Strategy<Value = Read> {
    (
        (
            any::<u8>(),
            prop::option::of(0u8..3),
            prop::option::of(1u32..6),
        ),
        (prop::option::of(0u8..4), any::<bool>(), any::<bool>()),
        (any::<bool>(), any::<u8>()),
    )
        .prop_map(
            |((kind, since, limit), (filter, exclude, tag), (fold, wait))| Read {
                crashes: kind % 6 == 0,
                since,
                limit,
                filter,
                exclude,
                tag,
                fold,
                wait: wait % 3 == 0,
            },
        )
}

/// The log lines of `items`, with every secret they hold (keys, body lines).
fn lines_of(items: &[Item]) -> (Vec<LogLine>, Vec<String>) {
    let mut lines = Vec::new();
    let mut secrets = Vec::new();
    let mut add = |ms: &mut i64, text: String| {
        *ms += 3;
        lines.push(LogLine {
            time: START + Duration::milliseconds(*ms),
            level: LogLevel::Info,
            tag: "Keys".into(),
            text,
            pid: Some(4242),
            tid: Some(4242),
            uid: Some(10123),
        });
    };
    let mut ms = 0;
    for item in items {
        match item {
            Item::Plain(text) => add(&mut ms, text.clone()),
            Item::Key(k, a) => {
                let (before, key) = KEYS[*k];
                secrets.push(key.to_owned());
                add(&mut ms, format!("{before}{key}{}", AFTER[*a]));
            }
            Item::Block(body) => {
                add(&mut ms, "-----BEGIN PRIVATE KEY-----".to_owned());
                for line in body {
                    secrets.push(line.clone());
                    add(&mut ms, line.clone());
                }
                add(&mut ms, "-----END PRIVATE KEY-----".to_owned());
            }
        }
    }
    (lines, secrets)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap()
}

/// The request a [`Read`] makes, after the cursors of the reads before.
fn request(read: &Read, cursors: &[String], secrets: &[String]) -> LogsRequest {
    let mut request = LogsRequest {
        device: Some(DEVICE.into()),
        ..LogsRequest::new(DEV_APP)
    };
    if read.crashes {
        request.kind = LogsKind::Crashes;
        request.context = Some(30);
        return request;
    }
    request.since = match read.since {
        Some(0) => Some("last".into()),
        Some(n) => cursors
            .get(cursors.len().wrapping_sub(usize::from(n)))
            .map(|cursor| format!("cursor:{cursor}")),
        None => None,
    };
    request.limit = read.limit;
    request.filter = match read.filter {
        Some(0) => Some("[redacted:private-key]".into()),
        Some(n) if !secrets.is_empty() => {
            let secret = &secrets[usize::from(n) % secrets.len()];
            Some(secret[4..16.min(secret.len())].to_owned())
        }
        _ => None,
    };
    request.exclude = read.exclude.then(|| "-----BEGIN".into());
    request.tag = read.tag.then(|| vec!["Keys".into()]);
    request.fold = (!read.fold).then_some(false);
    if read.wait {
        request.wait_for = Some("[redacted:private-key]".into());
        request.timeout = Some(2);
    }
    request
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn no_read_ever_shows_a_key_or_a_body_line_raw(
        items in prop::collection::vec(item(), 1..14),
        reads in prop::collection::vec(read(), 1..6),
    ) {
        let phone = phone();
        let device = device();
        let app = AppId::new(DEV_APP);
        let (lines, secrets) = lines_of(&items);
        let last = lines.last().map(|l| l.time).unwrap_or(START);
        phone.add_logs(&device, &app, lines);
        let mut crash = report(0, DEV_APP, "boom", "java.lang.IllegalStateException: boom\n");
        crash.time = last + Duration::milliseconds(1);
        phone.add_crash(&device, &app, crash);
        let gateway = gateway(&phone);
        let session = task(&gateway, "agent");
        let runtime = runtime();
        let mut cursors: Vec<String> = Vec::new();
        for read in &reads {
            let request = request(read, &cursors, &secrets);
            let probe = request.filter.clone().filter(|f| !f.starts_with('['));
            let result = runtime.block_on(session.logs(request.clone()));
            let json = serde_json::to_string(&result).unwrap();
            prop_assert!(result.error_code.is_none(), "{request:?}: {json}");
            for secret in &secrets {
                prop_assert!(!json.contains(secret.as_str()), "{request:?} showed {secret}: {json}");
                // Nor a long piece of one (a cut, a half).
                let piece = &secret[..secret.len().min(24)];
                prop_assert!(!json.contains(piece), "{request:?} showed {piece}: {json}");
            }
            if let Some(probe) = probe {
                prop_assert!(result.lines.is_empty(), "{probe} matched: {json}");
            }
            if let Some(cursor) = result.cursor {
                cursors.push(cursor);
            }
        }
    }
}

/// The review's case: the app logs a key one line at a time while the agent reads: a
/// `wait_for` of `[redacted:private-key]`, then a `since: "last"` read after each new line: no
/// read shows a body line.
#[test]
fn a_wait_for_a_block_then_since_last_never_shows_its_body() {
    let phone = phone();
    let device = device();
    let app = AppId::new(DEV_APP);
    let body = [
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj",
        "MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu",
        // A block's last body line is shorter.
        "NMoSfm76oqFvAp8Gy0iz5sxjZmSn==",
    ];
    let mut texts = vec!["-----BEGIN PRIVATE KEY-----"];
    texts.extend(body);
    texts.push("-----END PRIVATE KEY-----");
    texts.push("after the key");
    let at = |i: usize| line(60.0 + i as f64, LogLevel::Info, "Keys", texts[i], 10123);
    phone.add_logs(&device, &app, [at(0)]);
    let gateway = gateway(&phone);
    let session = task(&gateway, "agent");
    let runtime = runtime();
    let wait = LogsRequest {
        wait_for: Some("[redacted:private-key]".into()),
        timeout: Some(2),
        ..logs(DEV_APP)
    };
    let first = runtime.block_on(session.logs(wait));
    assert_eq!(first.matched, Some(true), "{first:?}");
    let mut shown = vec![first.log.clone()];
    for i in 1..texts.len() {
        phone.add_logs(&device, &app, [at(i)]);
        let next = LogsRequest {
            since: Some("last".into()),
            ..logs(DEV_APP)
        };
        let result = runtime.block_on(session.logs(next));
        assert_eq!(result.shown, 1, "{result:?}");
        shown.push(result.log);
        if i == 3 {
            // A read that starts at the short last body line, before the block's end is
            // logged: only what the earlier reads saw tells it is inside a block.
            let at_time = LogsRequest {
                since: Some("2026-11-30T10:01:03Z".into()),
                ..logs(DEV_APP)
            };
            let result = runtime.block_on(session.logs(at_time));
            assert_eq!(result.shown, 1, "{result:?}");
            shown.push(result.log);
        }
    }
    let all = shown.join("");
    for line in body {
        assert!(!all.contains(line), "{all}");
    }
    assert!(all.contains("after the key"), "{all}");
    assert_eq!(all.matches("[redacted:private-key]").count(), 6, "{all}");
    // A `filter` on a piece of a body line matches nothing, from the start either.
    let probe = LogsRequest {
        filter: Some(body[1][10..30].to_owned()),
        ..logs(DEV_APP)
    };
    assert!(runtime.block_on(session.logs(probe)).lines.is_empty());
}

/// Issue 37, item 5: bidirectional controls and zero-width characters in the app's text and
/// tag are shown written out, and the message counts the lines that held them.
#[test]
fn bidi_and_zero_width_characters_are_shown_written_out_and_counted() {
    let phone = phone();
    let device = device();
    let app = AppId::new(DEV_APP);
    phone.add_logs(
        &device,
        &app,
        [
            line(
                60.0,
                LogLevel::Info,
                "Pay",
                "amount \u{202e}001$\u{202c} ok",
                10123,
            ),
            line(
                61.0,
                LogLevel::Info,
                "Pa\u{200b}y",
                "to\u{feff}ken\u{2066}x",
                10123,
            ),
            line(62.0, LogLevel::Info, "Pay", "plain", 10123),
        ],
    );
    let gateway = gateway(&phone);
    let session = task(&gateway, "agent");
    let request = LogsRequest {
        since: Some("2026-11-30T10:00:59Z".into()),
        ..logs(DEV_APP)
    };
    let result = runtime().block_on(session.logs(request));
    let json = serde_json::to_string(&result).unwrap();
    for c in ['\u{202e}', '\u{202c}', '\u{200b}', '\u{feff}', '\u{2066}'] {
        assert!(!json.contains(c), "{c:?} in {json}");
    }
    assert!(
        result.log.contains("amount \\u{202e}001$\\u{202c} ok"),
        "{}",
        result.log
    );
    assert!(
        result
            .log
            .contains("Pa\\u{200b}y: to\\u{feff}ken\\u{2066}x"),
        "{}",
        result.log
    );
    assert!(
        result
            .message
            .contains("2 lines held bidirectional or zero-width characters"),
        "{}",
        result.message
    );
}
