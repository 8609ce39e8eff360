//! `--sim-ios`: the spec's iPhone device test on the simulated iPhone.
//!
//! `phonelogs sim --ios --control` serves the simulated iPhone on a loopback usbmuxd and takes
//! commands on its standard input: what a person does with the phone in hand (install a build,
//! open the app, tap Crash, tap Hang) and one question only a simulator answers (whether the
//! follower's stream of a process is open yet, since an iPhone keeps no log history a computer
//! can read). For each of Crash Test's builds, development (`get-task-allow`) then store, an
//! agent's task (`phonelogs-mcp` over stdio, pointed at the simulator with
//! `USBMUXD_SOCKET_ADDRESS`) reads the lines of the app and its widget, an exception report and
//! a watchdog (`0x8badf00d`) report; the development build is read without a question, the
//! store build asks and is read once the person answers; the WebDriverAgent runner is refused;
//! the history holds no text. Then the iOS driver's device test
//! (`crates/ios/tests/device_app_logs.rs`) reads the same phone.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitCode, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Value, json};

use crate::devlock::DeviceLock;
use crate::mcp_client::{result_text, structured_str};
use crate::mcp_test::{AppTexts, Programs, Task};
use crate::sim;
use crate::steps::{Report, build_programs, cargo, wait_for, workspace_root};

/// Crash Test's bundle id and its widget extension's on the simulated iPhone.
const BUNDLE: &str = "dev.phonelogs.crashtest";
const WIDGET: &str = "dev.phonelogs.crashtest.widget";
/// The os_log subsystem Crash Test logs under.
const SUBSYSTEM: &str = "dev.phonelogs.crashtest";
/// What the widget logs.
const WIDGET_LINE: &str = "timeline reloaded";
/// The UI-automation runner phonelogs must always refuse.
const RUNNER: &str = "com.facebook.WebDriverAgentRunner.xctrunner";
/// The start of FrontBoard's explanation of a watchdog kill (`testdata/ios/ips309/watchdog-8badf00d.ips`).
const WATCHDOG_EXPLANATION: &str = "scene-update watchdog transgression:";
/// How long the simulator may take to start, a stream to open, a report to show.
const WAIT: Duration = Duration::from_secs(30);

/// The two builds of Crash Test, as the simulated iPhone signs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Build {
    Development,
    Store,
}

impl Build {
    fn name(self) -> &'static str {
        match self {
            Self::Development => "development",
            Self::Store => "store",
        }
    }
}

/// Runs the iPhone test on the simulated iPhone playing iOS `ios`; `no_device_tests` only
/// drives the phone.
pub fn run(ios: &str, no_device_tests: bool) -> Result<ExitCode> {
    let workspace = workspace_root();
    let work = sim::target_dir(&workspace).join("emulator-test-ios");
    std::fs::create_dir_all(&work).with_context(|| format!("cannot create {}", work.display()))?;
    let texts = AppTexts::load(&workspace)?;
    let mut report = Report::default();

    let programs = report.step("build phonelogs and phonelogs-mcp", || {
        build_programs(&workspace)?;
        let bin = sim::target_dir(&workspace).join("debug");
        Ok(Programs {
            server: bin.join("phonelogs-mcp"),
            cli: bin.join("phonelogs"),
        })
    });
    let Some(programs) = programs else {
        return Ok(report.close());
    };
    let phone = report.step(
        format!("start the simulated iPhone (phonelogs sim --ios --ios-version {ios} --control)"),
        || IosPhone::start(&programs.cli, ios),
    );
    let Some(mut phone) = phone else {
        return Ok(report.close());
    };
    report.note(format!(
        "simulated iPhone {} on USBMUXD_SOCKET_ADDRESS={}",
        phone.udid, phone.address
    ));
    let lock = match DeviceLock::acquire(&DeviceLock::default_dir(), &phone.udid) {
        Ok(lock) => lock,
        Err(error) => {
            eprintln!("emulator-test: {error:#}");
            return Ok(ExitCode::from(2));
        }
    };
    report.note(format!("locked {}", lock.path().display()));
    let no_adb = report.step(
        "an adb port that answers nothing (no adb server is started)",
        NoAdbServer::start,
    );
    let Some(no_adb) = no_adb else {
        return Ok(report.close());
    };

    for build in [Build::Development, Build::Store] {
        let context = Run {
            workspace: &workspace,
            work: &work,
            programs: &programs,
            texts: &texts,
            no_adb_port: no_adb.port,
            device_tests: !no_device_tests,
        };
        run_build(&mut report, &context, &mut phone, build);
    }
    drop(lock);
    drop(phone);
    Ok(report.close())
}

/// What every step of a run needs.
struct Run<'a> {
    workspace: &'a Path,
    work: &'a Path,
    programs: &'a Programs,
    texts: &'a AppTexts,
    no_adb_port: u16,
    device_tests: bool,
}

/// One build: install, start the task, launch, crash, hang, the MCP test, the driver test.
fn run_build(report: &mut Report, context: &Run<'_>, phone: &mut IosPhone, build: Build) {
    let name = build.name();
    if report
        .step(
            format!("{name}: install Crash Test ({name} signing)"),
            || phone.command(&format!("sign {BUNDLE} {name}")).map(drop),
        )
        .is_none()
    {
        return;
    }
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let task = report.step(
        format!("{name}: start an agent task (phonelogs-mcp over stdio) and its first read"),
        || {
            let env = [
                ("USBMUXD_SOCKET_ADDRESS", phone.address.clone()),
                ("ANDROID_ADB_SERVER_PORT", context.no_adb_port.to_string()),
            ];
            let mut task =
                Task::start_with_env(context.programs, context.work, name, &phone.udid, &env)?;
            let note = first_read(&mut task, context.programs, &phone.udid, build)?;
            println!("    - {note}");
            Ok(task)
        },
    );
    let crashed = report.step(
        format!("{name}: launch Crash Test and its widget, tap Crash"),
        || {
            let pid = phone.launch_and_wait(&format!("launch {BUNDLE}"))?;
            let widget = phone.launch_and_wait(&format!("extension {BUNDLE} {WIDGET}"))?;
            phone.log(pid, "default", "CrashTest", &context.texts.start_line)?;
            phone.log(widget, "info", "Widget", WIDGET_LINE)?;
            phone.command(&format!(
                "crash {pid} exception {}",
                context.texts.crash_message
            ))
        },
    );
    let hung = report.step(
        format!("{name}: launch Crash Test again and tap Hang"),
        || {
            let pid = phone.launch_and_wait(&format!("launch {BUNDLE}"))?;
            phone.log(pid, "default", "CrashTest", &context.texts.start_line)?;
            // The main thread blocks; FrontBoard's watchdog kills the app (0x8badf00d).
            phone.command(&format!("crash {pid} watchdog {WATCHDOG_EXPLANATION}"))
        },
    );
    if let (Some(task), Some(_), Some(_)) = (task, crashed, hung) {
        report.step(
            format!("{name}: the MCP test: the agent reads the lines and both reports"),
            || {
                for line in check_task(task, context, &phone.udid)? {
                    println!("    - {line}");
                }
                Ok(())
            },
        );
    }
    if context.device_tests {
        report.step(
            format!("{name}: the driver test (phonelogs-ios, device_app_logs)"),
            || {
                let vars = [
                    ("PHONELOGS_IOS_UDID", phone.udid.clone()),
                    ("USBMUXD_SOCKET_ADDRESS", phone.address.clone()),
                    ("PHONELOGS_CRASHTEST_BUILD", name.to_owned()),
                    ("PHONELOGS_CRASHTEST_SINCE", since.to_string()),
                    ("PHONELOGS_CRASHTEST_SIMULATED", "true".to_owned()),
                ];
                let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
                cargo(
                    context.workspace,
                    &[
                        "test",
                        "--workspace",
                        "--test",
                        "device_app_logs",
                        "--",
                        "--nocapture",
                        "--test-threads=1",
                    ],
                    &vars,
                )
            },
        );
    }
}

/// The task's first read of Crash Test, before it runs: it starts the follower (an iPhone
/// keeps no history to read back later). The development build is read at once; the store
/// build asks, and the person answers on their side.
fn first_read(task: &mut Task, programs: &Programs, udid: &str, build: Build) -> Result<String> {
    let logs = json!({"app": BUNDLE, "device": udid});
    let first = task.call("phone_logs", logs.clone())?;
    let status = structured_str(&first, "status")
        .unwrap_or_default()
        .to_owned();
    if build == Build::Development {
        ensure!(
            status == "ok",
            "a development build must not ask, but phone_logs answered `{status}`: {}",
            result_text(&first)
        );
        return Ok("the development build was read without a question".to_owned());
    }
    ensure!(
        status == "approval_pending",
        "a store build must ask, but phone_logs answered `{status}`: {}",
        result_text(&first)
    );
    let approval = structured_str(&first, "approval_id")
        .context("approval_pending without an approval_id")?
        .to_owned();
    task.answer(programs, &approval)?;
    let mut again = logs;
    again["approval_id"] = Value::from(approval.clone());
    let second = task.call("phone_logs", again)?;
    let status = structured_str(&second, "status").unwrap_or_default();
    ensure!(
        status == "ok",
        "after `approvals answer {approval} task`, phone_logs answered `{status}`: {}",
        result_text(&second)
    );
    Ok(format!(
        "the store build asked ({approval}) and was read after `approvals answer … task`"
    ))
}

/// After the crash and the hang: the lines of the app and its widget, both reports, the
/// runner refused, and a history without text.
fn check_task(mut task: Task, context: &Run<'_>, udid: &str) -> Result<Vec<String>> {
    let mut done = Vec::new();
    let texts = context.texts;
    let mut text = String::new();
    wait_for(WAIT, "the app's and its widget's lines", || {
        let result = task.call("phone_logs", json!({"app": BUNDLE, "device": udid}))?;
        text = result_text(&result);
        Ok(text.contains(&texts.start_line) && text.contains(WIDGET_LINE))
    })
    .with_context(|| format!("the last answer:\n{text}"))?;
    done.push("the lines hold the app's start line and its widget's line".to_owned());

    let mut crashes = Value::Null;
    wait_for(WAIT, "two crash reports", || {
        crashes = task.call(
            "phone_logs",
            json!({"app": BUNDLE, "device": udid, "kind": "crashes"}),
        )?;
        let shown = crashes
            .pointer("/structuredContent/reports")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        Ok(shown >= 2)
    })
    .with_context(|| format!("the last answer:\n{}", result_text(&crashes)))?;
    let kinds: Vec<&str> = crashes
        .pointer("/structuredContent/reports")
        .and_then(Value::as_array)
        .map(|reports| {
            reports
                .iter()
                .filter_map(|r| r.get("kind").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    ensure!(
        kinds.first() == Some(&"watchdog") && kinds.contains(&"crash"),
        "the reports are {kinds:?}, not the watchdog (newest) and the crash"
    );
    let text = result_text(&crashes);
    ensure!(
        text.to_ascii_lowercase().contains("0x8badf00d"),
        "the watchdog report lacks 0x8badf00d:\n{text}"
    );
    ensure!(
        text.contains(&texts.crash_message),
        "the crash report lacks {:?}:\n{text}",
        texts.crash_message
    );
    ensure!(
        !text.contains("CrashTestHelper"),
        "a report of the look-alike CrashTestHelper app was read:\n{text}"
    );
    done.push(
        "the reports are the watchdog (0x8badf00d) and the exception, no look-alike's".to_owned(),
    );

    let runner = task.call("phone_logs", json!({"app": RUNNER, "device": udid}))?;
    let status = structured_str(&runner, "status").unwrap_or_default();
    ensure!(
        status == "blocked_by_policy",
        "{RUNNER}: phone_logs answered `{status}`, not blocked_by_policy"
    );
    done.push(format!("{RUNNER} is refused"));

    let history = task.end(context.programs)?;
    ensure!(
        history.contains(BUNDLE),
        "the history does not name {BUNDLE}:\n{history}"
    );
    for secret in [
        &texts.start_line,
        &texts.crash_message,
        &WIDGET_LINE.to_owned(),
    ] {
        ensure!(
            !history.contains(secret.as_str()),
            "the history holds log text {secret:?}"
        );
    }
    done.push("the history names the app and holds no log text".to_owned());
    Ok(done)
}

/// A running `phonelogs sim --ios --control`.
struct IosPhone {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    address: String,
    udid: String,
}

impl IosPhone {
    fn start(phonelogs: &Path, ios: &str) -> Result<Self> {
        let mut child = Command::new(phonelogs)
            .args([
                "sim",
                "--ios",
                "--port",
                "0",
                "--control",
                "--ios-version",
                ios,
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("cannot start {} sim --ios", phonelogs.display()))?;
        let stdout = child
            .stdout
            .take()
            .context("no stdout from phonelogs sim")?;
        let stdin = child.stdin.take();
        let (lines_tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if lines_tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut phone = Self {
            child,
            stdin,
            lines,
            address: String::new(),
            udid: String::new(),
        };
        let first = phone.next_line()?;
        phone.address = parse_address(&first)
            .with_context(|| format!("phonelogs sim --ios printed {first:?} first"))?;
        phone.udid = phone
            .command("udid")?
            .strip_prefix("udid ")
            .context("`udid` answered no udid")?
            .to_owned();
        Ok(phone)
    }

    fn next_line(&mut self) -> Result<String> {
        self.lines
            .recv_timeout(WAIT)
            .context("phonelogs sim --ios said nothing (did it exit?)")
    }

    /// The next answer to a command: lines naming an address (`RSD_ADDRESS=…`, which a
    /// simulator with RSD prints after the usbmuxd line) are not answers.
    fn next_answer(&mut self) -> Result<String> {
        loop {
            let line = self.next_line()?;
            if !line.contains("_ADDRESS=") {
                return Ok(line);
            }
        }
    }

    /// Sends one control command and returns its answer; `error: …` is an error.
    fn command(&mut self, line: &str) -> Result<String> {
        let stdin = self
            .stdin
            .as_mut()
            .context("the simulator's input is closed")?;
        writeln!(stdin, "{line}").context("writing to phonelogs sim --ios")?;
        stdin.flush()?;
        let answer = self.next_answer()?;
        if let Some(error) = answer.strip_prefix("error: ") {
            bail!("`{line}`: {error}");
        }
        println!("    {line} → {answer}");
        Ok(answer)
    }

    /// Starts a process (`launch` or `extension`) and waits until the follower streams it: an
    /// app under test logs all the time, so on a phone nothing is lost; here it logs only when
    /// told, so it is told once someone listens.
    fn launch_and_wait(&mut self, command: &str) -> Result<u32> {
        let answer = self.command(command)?;
        let pid: u32 = answer
            .strip_prefix("pid ")
            .and_then(|pid| pid.parse().ok())
            .with_context(|| format!("`{command}` answered {answer:?}"))?;
        let deadline = Instant::now() + WAIT;
        loop {
            let stdin = self
                .stdin
                .as_mut()
                .context("the simulator's input is closed")?;
            writeln!(stdin, "streamed {pid}")?;
            stdin.flush()?;
            if self.next_answer()? == "yes" {
                return Ok(pid);
            }
            if Instant::now() > deadline {
                bail!(
                    "no os_trace stream for pid {pid} within {} s",
                    WAIT.as_secs()
                );
            }
            thread::sleep(Duration::from_millis(200));
        }
    }

    fn log(&mut self, pid: u32, level: &str, category: &str, text: &str) -> Result<()> {
        self.command(&format!("log {pid} {level} {SUBSYSTEM} {category} {text}"))
            .map(drop)
    }
}

impl Drop for IosPhone {
    fn drop(&mut self) {
        // The end of its input stops the simulator; kill it if it does not stop.
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The address of the `USBMUXD_SOCKET_ADDRESS=127.0.0.1:PORT` line.
fn parse_address(line: &str) -> Option<String> {
    let address = line.trim().strip_prefix("USBMUXD_SOCKET_ADDRESS=")?;
    let (host, port) = address.rsplit_once(':')?;
    (host == "127.0.0.1" && port.parse::<u16>().is_ok_and(|p| p > 0)).then(|| address.to_owned())
}

/// A loopback port that accepts every connection and closes it at once: the MCP server's
/// Android driver finds no adb server there and, since the port answers, starts none.
struct NoAdbServer {
    port: u16,
}

impl NoAdbServer {
    fn start() -> Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").context("cannot bind a loopback port")?;
        let port = listener.local_addr()?.port();
        thread::spawn(move || {
            for connection in listener.incoming() {
                drop(connection);
            }
        });
        Ok(Self { port })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_address_line() {
        assert_eq!(
            parse_address("USBMUXD_SOCKET_ADDRESS=127.0.0.1:40123\n").as_deref(),
            Some("127.0.0.1:40123")
        );
        assert_eq!(parse_address("USBMUXD_SOCKET_ADDRESS=0.0.0.0:1"), None);
        assert_eq!(parse_address("listening on 127.0.0.1:1"), None);
        assert_eq!(parse_address("USBMUXD_SOCKET_ADDRESS=127.0.0.1:0"), None);
    }
}
