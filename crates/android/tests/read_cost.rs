//! What a warm read costs, counted, not timed: the regression test of the read path's speed.
//!
//! Speed is measured in the benches (`app_logs_vs_adb`, `mcp_call_vs_adb`), beside bare adb. Here
//! the same work is counted where counts do not move with the machine's load, so a change that
//! makes the read path do more than it needs fails `cargo test`:
//!
//! - **Instructions** of a warm `app_logs` (the driver: the adb client's read, the split into
//!   sections, the reading of the lines, the mark) and of a warm `phone_logs` through the gateway
//!   (the same, plus the decision, the cursor, the cut and the history), counted by valgrind's
//!   callgrind in a child run of this test binary (`--toggle-collect` on the measured calls
//!   only, so neither the simulated phone's work nor the setup is counted). The bounds are per
//!   call with a 1 MiB dump, with headroom over what this code costs, and well under what a
//!   second pass over the dump costs (a second reading of its lines, a copy of it as text).
//! - **Commands and round trips**, exactly: a warm `app_logs` is one round trip of the six
//!   commands below; so is a warm `phone_logs` (the gateway decides on the facts the driver
//!   holds from its last round trip, and the read's own `pm list packages -U` and `dumpsys
//!   package` confirm them), of lines or of crash reports; and the script's output is the dump
//!   and a few short lines (no command prints a second dump).
//!
//! Without valgrind the instruction counts are skipped, saying so, unless
//! `PHONELOGS_REQUIRE_VALGRIND` is set (CI sets it and installs valgrind), where that is a
//! failure. Debug builds (`cargo test`) and release builds (`cargo test --release`) are held to
//! the same bounds; a release build costs several times less.

// Tests may unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use common::Front;
use phonelogs_adbsim::{Buffer, SimPhone};
use phonelogs_android::{AdbConfig, AdbPhone};
use phonelogs_driver::{AppId, AppLogger, LogQuery};
use phonelogs_gateway::{Agent, Gateway, LogsKind, LogsRequest, Mode, Session, Status, TaskSpec};

const APP: &str = "dev.phonelogs.crashtest";
/// The dump a measured call reads: 1 MiB of the app's lines.
const DUMP_BYTES: usize = 1024 * 1024;
/// The warm calls a child run measures; the count is divided by it.
const CALLS: u64 = 3;
/// The lines a call asks for: the MCP tool's default.
const LIMIT: usize = 200;

/// The most instructions a warm `app_logs` of a 1 MiB dump may cost, debug build: about 194 M
/// (the dump read once, from its end; the older lines only counted, by their heads, their tag
/// and text not read), with 15% headroom. It was about 207 M while every counted line was
/// parsed whole (bound 240 M then). A second pass over the dump's lines, even only to check
/// their uids again (`has_foreign_lines` beside the read), costs 69 M more and fails.
const DRIVER_BOUND: u64 = 223_000_000;
/// The same for a warm `phone_logs` through the gateway (the driver's read, which confirms the
/// facts the decision was made on, the decision, the cursor, the cut and the history's row):
/// about 205 M, 15% headroom. It was about 218 M before the counted lines were read by their
/// heads (bound 251 M), and 219 M when `app_info` made a round trip of its own before the read.
const GATEWAY_BOUND: u64 = 236_000_000;

/// Which measured run a child makes, from its environment.
const CHILD: &str = "PHONELOGS_READ_COST_CHILD";

/// How much longer every device timeout is in a child run: under callgrind the code runs tens
/// of times slower (and the machine may have other work), so the driver's 3 s connect timeout
/// failed a clean-clone CI run ("the adb server … is not running: no answer within 3s") while
/// the same read passes alone. The timeouts are the driver's configuration
/// (`AdbConfig::connect_timeout`, `read_timeout`, `call_timeout`) and the gateway's
/// (`GatewayBuilder::call_timeout`), scaled; nothing here waits on them when all goes well.
const UNDER_VALGRIND: u32 = 50;

/// [`UNDER_VALGRIND`] in a child run, else 1.
fn timeout_scale() -> u32 {
    if std::env::var_os(CHILD).is_some() {
        UNDER_VALGRIND
    } else {
        1
    }
}

/// A driver configuration with its timeouts scaled for a child run ([`timeout_scale`]).
fn scaled(config: &mut AdbConfig) {
    config.connect_timeout *= timeout_scale();
    config.read_timeout *= timeout_scale();
    config.call_timeout *= timeout_scale();
}

#[test]
fn a_warm_read_costs_instructions_for_what_it_reads_once() {
    let Some(valgrind) = valgrind() else {
        return;
    };
    let driver = instructions(&valgrind, "driver", "*measured_driver_calls*");
    let gateway = instructions(&valgrind, "gateway", "*measured_gateway_calls*");
    eprintln!(
        "a warm read of {DUMP_BYTES} bytes: app_logs {} instructions, phone_logs {} (bounds \
         {DRIVER_BOUND}, {GATEWAY_BOUND})",
        driver / CALLS,
        gateway / CALLS
    );
    assert!(
        driver / CALLS <= DRIVER_BOUND,
        "a warm app_logs of a 1 MiB dump costs {} instructions, over {DRIVER_BOUND}: does the \
         read path read the dump twice?",
        driver / CALLS
    );
    assert!(
        gateway / CALLS <= GATEWAY_BOUND,
        "a warm phone_logs of a 1 MiB dump costs {} instructions, over {GATEWAY_BOUND}",
        gateway / CALLS
    );
}

/// valgrind, or `None` (said) where it is missing and not required.
fn valgrind() -> Option<String> {
    let found = Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success());
    if found {
        return Some("valgrind".to_owned());
    }
    assert!(
        std::env::var_os("PHONELOGS_REQUIRE_VALGRIND").is_none(),
        "valgrind is required (PHONELOGS_REQUIRE_VALGRIND) but not installed"
    );
    eprintln!("skipped: valgrind is not installed (apt-get install valgrind)");
    None
}

/// Runs this test binary's child `which` under callgrind, counting only inside functions
/// matching `toggle`, and returns the instructions it counted.
fn instructions(valgrind: &str, which: &str, toggle: &str) -> u64 {
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("callgrind.out");
    let output = Command::new(valgrind)
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", file.display()))
        .arg("--collect-atstart=no")
        .arg(format!("--toggle-collect={toggle}"))
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", "child_run", "--nocapture", "--test-threads=1"])
        .env(CHILD, which)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "the {which} child failed: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    totals(&file)
}

/// The `totals:` (or `summary:`) line of a callgrind output file.
fn totals(file: &Path) -> u64 {
    let text = std::fs::read_to_string(file).unwrap();
    text.lines()
        .find_map(|line| {
            line.strip_prefix("totals:")
                .or_else(|| line.strip_prefix("summary:"))
        })
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or_else(|| panic!("no totals in {}", file.display()))
}

/// The child run: does nothing unless [`CHILD`] names a measured run (so it passes as a plain
/// test), else sets up the phone, makes the first call outside the measured function, and the
/// warm ones inside it.
#[test]
fn child_run() {
    let Ok(which) = std::env::var(CHILD) else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let phone = SimPhone::default_phone();
        phone.set_noise_rate(0.0);
        phone.fill_log(APP, Buffer::Main, DUMP_BYTES).unwrap();
        let front = Front::start(phone, scaled).await;
        match which.as_str() {
            "driver" => {
                let query = LogQuery::since(time::OffsetDateTime::UNIX_EPOCH, LIMIT);
                let app = AppId::new(APP);
                let first = front
                    .driver
                    .app_logs(&front.device, &app, &query)
                    .await
                    .unwrap();
                assert_eq!(first.lines.len(), LIMIT);
                measured_driver_calls(&front, &app, &query).await;
            }
            _ => {
                let (gateway, session, _) = gateway_session(&front);
                let first = session.logs(request(&front)).await;
                assert_eq!(first.status, Status::Ok, "{}", first.message);
                measured_gateway_calls(&session, &front).await;
                drop(gateway);
            }
        }
    });
}

#[inline(never)]
async fn measured_driver_calls(front: &Front, app: &AppId, query: &LogQuery) {
    for _ in 0..CALLS {
        let result = front
            .driver
            .app_logs(&front.device, app, query)
            .await
            .unwrap();
        assert_eq!(result.lines.len(), LIMIT);
    }
}

#[inline(never)]
async fn measured_gateway_calls(session: &Session, front: &Front) {
    for _ in 0..CALLS {
        let response = session.logs(request(front)).await;
        assert_eq!(response.status, Status::Ok, "{}", response.message);
    }
}

/// A gateway over a driver of its own for the front's phone, a task of an agent that may read
/// the app, and that driver (for its round trips).
fn gateway_session(front: &Front) -> (Gateway, Session, Arc<AdbPhone>) {
    let mut config = common::config(front.address.port());
    scaled(&mut config);
    let driver = Arc::new(AdbPhone::new(config));
    let gateway = Gateway::builder()
        .driver(driver.clone() as Arc<dyn AppLogger>)
        .call_timeout(phonelogs_gateway::DEFAULT_CALL_TIMEOUT * timeout_scale())
        .build()
        .unwrap();
    let session = gateway.start_task(TaskSpec::new(Agent::new("agent", Mode::Full)));
    (gateway, session, driver)
}

fn request(front: &Front) -> LogsRequest {
    LogsRequest {
        device: Some(front.device.to_string()),
        since: Some("1h".into()),
        ..LogsRequest::new(APP)
    }
}

/// A warm `app_logs` is one round trip of exactly these commands, and so is a warm `phone_logs`
/// (decided on the facts the driver holds, which the read's own commands confirm): a command or
/// a round trip more fails here, so it is added knowingly (with this list), never quietly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_warm_read_is_one_round_trip_of_the_commands_it_needs() {
    let phone = SimPhone::default_phone();
    phone.set_noise_rate(0.0);
    phone.fill_log(APP, Buffer::Main, DUMP_BYTES).unwrap();
    let front = Front::start(phone, |_| {}).await;
    let app = AppId::new(APP);
    let query = LogQuery::since(time::OffsetDateTime::UNIX_EPOCH, LIMIT);
    front
        .driver
        .app_logs(&front.device, &app, &query)
        .await
        .unwrap();

    front.phone.clear_requests();
    let trips = front.driver.round_trips();
    front
        .driver
        .app_logs(&front.device, &app, &query)
        .await
        .unwrap();
    assert_eq!(front.driver.round_trips(), trips + 1, "one round trip");
    let scripts = front.phone.commands_run();
    assert_eq!(scripts.len(), 1, "{scripts:?}");
    let uid = front.phone.uid_of(APP, 0).unwrap();
    let read_commands = commands_of(&scripts[0]);
    assert_eq!(
        read_commands,
        [
            format!("logcat -d -b main,system,crash -v epoch -v uid --uid={uid} -t 0.000 '*:V'"),
            format!("pm list packages -U {APP}"),
            format!("dumpsys package {APP}"),
            "cat /proc/sys/kernel/random/boot_id".to_owned(),
            "date +%s".to_owned(),
            "logcat -d -b main -v epoch -m 1".to_owned(),
        ]
    );

    // What the phone sends back beyond the dump: the marker lines and a few short answers.
    let script = front
        .driver
        .server()
        .shell(front.device.as_str(), &scripts[0])
        .await
        .unwrap();
    let dump = front
        .driver
        .server()
        .shell(front.device.as_str(), &commands_of(&scripts[0])[0])
        .await
        .unwrap();
    assert!(dump.stdout.len() >= DUMP_BYTES);
    assert!(
        script.stdout.len() - dump.stdout.len() < 16 * 1024,
        "the script prints {} bytes besides the dump's {}",
        script.stdout.len() - dump.stdout.len(),
        dump.stdout.len()
    );

    // Through the gateway: the first call looks the app up (`app_info`), then reads; a warm
    // one is decided on the facts the driver holds from that read, which its own round trip
    // confirms (`pm list packages -U` and `dumpsys package` after the dump): that one round
    // trip, the same commands, for lines and for crash reports alike.
    let (_gateway, session, driver) = gateway_session(&front);
    let first = session.logs(request(&front)).await;
    assert_eq!(first.status, Status::Ok, "{}", first.message);
    front.phone.clear_requests();
    let trips = driver.round_trips();
    let warm = session.logs(request(&front)).await;
    assert_eq!(warm.status, Status::Ok, "{}", warm.message);
    assert_eq!(
        driver.round_trips(),
        trips + 1,
        "a warm phone_logs is the read's one round trip"
    );
    let scripts = front.phone.commands_run();
    assert_eq!(scripts.len(), 1, "{scripts:?}");
    let commands = commands_of(&scripts[0]);
    assert!(
        commands[0].starts_with("logcat -d -b main,system,crash -v epoch -v uid --uid="),
        "{commands:?}"
    );
    assert_eq!(commands[1..], read_commands[1..], "{commands:?}");
    let crashes = LogsRequest {
        kind: LogsKind::Crashes,
        ..request(&front)
    };
    let first = session.logs(crashes.clone()).await;
    assert_eq!(first.status, Status::Ok, "{}", first.message);
    let trips = driver.round_trips();
    let warm = session.logs(crashes).await;
    assert_eq!(warm.status, Status::Ok, "{}", warm.message);
    assert_eq!(
        driver.round_trips(),
        trips + 1,
        "a warm phone_logs of crash reports is the read's one round trip"
    );
}

/// The commands of a driver script (`cmd && echo MARKER 0 || echo MARKER $?; …`).
fn commands_of(script: &str) -> Vec<String> {
    script
        .split("; ")
        .filter_map(|part| part.split(" && echo ").next())
        .map(str::to_owned)
        .collect()
}
