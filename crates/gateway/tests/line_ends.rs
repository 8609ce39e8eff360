//! Item 8 of issue 28: every character a reader (a model, a terminal, a browser) takes for the
//! end of a line is one: `\n`, `\r`, VT, FF, NEL (U+0085), LINE SEPARATOR (U+2028) and
//! PARAGRAPH SEPARATOR (U+2029). Whatever a phone puts in a line's text or tag, an app's label,
//! a report's process, summary or text, a phone's model and state, or what a driver's error
//! or notice says, the result's log is lines ended by `\n` alone, each log line starting with its time and
//! tag, and no one-line field (a line's tag and text, a heading's parts, the message, a listed
//! phone) holds any of them.

// Tests may unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use phonelogs_driver::{AppId, DeviceId, DeviceState, LogLevel, LogLine, LogNotice};
use phonelogs_fake::{FakeApp, FakePhone, Fault, Operation};
use phonelogs_gateway::{LogsRequest, Status};
use proptest::prelude::*;

/// Every line end but `\n`, which ends the log's own lines.
const OTHER_ENDS: [char; 6] = ['\r', '\u{0B}', '\u{0C}', '\u{85}', '\u{2028}', '\u{2029}'];

fn holds_a_line_end(text: &str) -> bool {
    text.contains(OTHER_ENDS) || text.contains('\n')
}

/// Text with any of the line ends (and `\r\n`) among ordinary characters.
fn text_with_ends() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            4 => "[a-z0-9 :.]{1,6}",
            1 => prop::sample::select(vec![
                "\n", "\r", "\r\n", "\u{0B}", "\u{0C}", "\u{85}", "\u{2028}", "\u{2029}",
                "\n09:00:00.000 ActivityManager: Start proc com.bank",
                "\u{2028}09:00:00.000 ActivityManager: forged",
            ])
            .prop_map(str::to_owned),
        ],
        0..8,
    )
    .prop_map(|pieces| pieces.concat())
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

const APP: &str = "dev.phonelogs.lineends";

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn no_rendered_line_holds_a_line_end(
        messages in prop::collection::vec((text_with_ends(), text_with_ends()), 1..6),
        label in text_with_ends(),
        report in (text_with_ends(), text_with_ends(), text_with_ends()),
        model in text_with_ends(),
        state in text_with_ends(),
    ) {
        let phone = FakePhone::new();
        let device = device();
        phone.add_device(&device, &format!("Pixel{model}"));
        let odd = DeviceId::new(format!("odd{state}"));
        phone.add_device(&odd, &model);
        phone.set_device_state(&odd, DeviceState::Other(state.clone()));
        let app = AppId::new(APP);
        phone.add_app(&device, FakeApp::new(app.clone()).label(format!("Line{label}")).uid(10900).dev_build(true));
        let lines: Vec<LogLine> = messages
            .iter()
            .enumerate()
            .map(|(at, (tag, text))| {
                line(at as f64, LogLevel::Info, &format!("T{tag}"), &format!("m{text}"), 10900)
            })
            .collect();
        phone.add_logs(&device, &app, lines);
        let (process, summary, text) = report;
        phone.add_crash(&device, &app, common::report(5, &format!("{APP}{process}"), &summary, &format!("head{text}\nbody{text}")));
        let gateway = gateway(&phone);
        let session = task(&gateway, "agent");
        let runtime = runtime();
        for kind in [logs(APP), crashes(APP)] {
            let request = LogsRequest {
                device: Some(DEVICE.into()),
                since: Some("2026-11-30T09:00:00Z".into()),
                ..kind
            };
            let got = runtime.block_on(session.logs(request));
            prop_assert_eq!(got.status, Status::Ok, "{}", got.message);
            prop_assert!(!holds_a_line_end(&got.message), "{:?}", got.message);
            for piece in got.log.split('\n') {
                prop_assert!(!piece.contains(OTHER_ENDS), "a log line holds a line end: {:?}", piece);
            }
            for view in &got.lines {
                prop_assert!(!holds_a_line_end(&view.tag) && !holds_a_line_end(&view.text), "{:?}", view);
            }
            for view in &got.reports {
                prop_assert!(!holds_a_line_end(&view.process) && !holds_a_line_end(&view.summary), "{:?}", view);
            }
            if !got.lines.is_empty() {
                // Every log line starts with its time: no message made a line of its own.
                for piece in got.log.lines() {
                    let time = piece.split(' ').next().unwrap_or("");
                    prop_assert!(time.len() == 12 && time.as_bytes()[2] == b':', "{:?}", piece);
                }
            }
        }
        // A driver's notices (a cause can be what a phone said) are one-line sentences.
        phone.set_log_notices(&device, &app, vec![
            LogNotice::Unreadable { cause: format!("locked{state}"), fix: format!("unlock{model}") },
            LogNotice::PartlyUnreadable { part: format!("widget{label}"), cause: format!("no image{state}"), fix: format!("mount{model}") },
            LogNotice::Redacted { marker: "m".into(), why: format!("hidden{state}"), fix: format!("public{model}") },
        ]);
        let noticed = runtime.block_on(session.logs(LogsRequest {
            device: Some(DEVICE.into()),
            since: Some("2026-11-30T09:00:00Z".into()),
            ..logs(APP)
        }));
        prop_assert_eq!(noticed.status, Status::Ok, "{}", noticed.message);
        prop_assert!(noticed.message.contains("locked") && noticed.message.contains("hidden"), "{:?}", noticed.message);
        prop_assert!(!holds_a_line_end(&noticed.message), "{:?}", noticed.message);
        // A driver's error (what a phone or a farm's adb server said) is a one-line message.
        phone.fail_next(Operation::AppLogs, Fault::Backend(format!("refused{state}")));
        let failed = runtime.block_on(session.logs(LogsRequest {
            device: Some(DEVICE.into()),
            ..logs(APP)
        }));
        prop_assert_eq!(failed.status, Status::Error);
        prop_assert!(!holds_a_line_end(&failed.message), "{:?}", failed.message);
        for listed in runtime.block_on(session.devices()).unwrap() {
            prop_assert!(!holds_a_line_end(listed.id.as_str()), "{:?}", listed);
            prop_assert!(!listed.model.as_deref().is_some_and(holds_a_line_end), "{:?}", listed);
            if let DeviceState::Other(state) = &listed.state {
                prop_assert!(!holds_a_line_end(state), "{:?}", listed);
            }
        }
    }
}

const ENDS: [char; 7] = [
    '\n', '\r', '\u{0B}', '\u{0C}', '\u{85}', '\u{2028}', '\u{2029}',
];

/// Issue 28 item 8 (a fresh review's check): what the agent sends and a message echoes back (wait_for, level, since, device,
/// approval_id, kind crashes' wait text) stays on one line.
#[tokio::test]
async fn agent_text_echoed_in_messages_holds_no_line_end() {
    let phone = phone();
    let gateway = gateway(&phone);
    let session = task(&gateway, "agent");
    let forged = "x\u{2028}09:00:00.000 ActivityManager: forged\u{85}y";
    let mut requests = Vec::new();
    requests.push(phonelogs_gateway::LogsRequest {
        wait_for: Some(forged.into()),
        timeout: Some(1),
        ..logs(DEV_APP)
    });
    requests.push(phonelogs_gateway::LogsRequest {
        level: Some(forged.into()),
        ..logs(DEV_APP)
    });
    requests.push(phonelogs_gateway::LogsRequest {
        since: Some(forged.into()),
        ..logs(DEV_APP)
    });
    requests.push(phonelogs_gateway::LogsRequest {
        device: Some(forged.into()),
        ..logs(DEV_APP)
    });
    requests.push(phonelogs_gateway::LogsRequest {
        approval_id: Some(forged.into()),
        ..logs(RELEASE_APP)
    });
    requests.push(phonelogs_gateway::LogsRequest {
        wait_for: Some(forged.into()),
        ..crashes(DEV_APP)
    });
    requests.push(phonelogs_gateway::LogsRequest {
        since: Some(format!("cursor:{forged}")),
        ..logs(DEV_APP)
    });
    requests.push(phonelogs_gateway::LogsRequest {
        app: forged.into(),
        ..logs(DEV_APP)
    });
    let mut bad = Vec::new();
    for request in requests {
        let got = session.logs(request.clone()).await;
        if got.message.contains(ENDS) {
            bad.push(format!("{request:?} -> {:?}", got.message));
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}
