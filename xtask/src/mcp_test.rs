//! The spec's MCP test (`TestEmulatorAppLogs`): an agent's task, through a real MCP client over
//! stdio, reads Crash Test's lines and its crash report after the Crash tap; the release build's
//! question is answered as a person answers it (`phonelogs approvals answer … task`), the debug
//! build is not asked at all; a helper app is refused; and the history holds no log text.
//!
//! The session (the task) starts before the app is launched, so the lines the agent reads are
//! those of its own task, as `phone_logs` reads by default.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Value, json};

use crate::mcp_client::{McpClient, result_text, structured_str};
use crate::process;

/// A helper app phonelogs must always refuse (Appium's UiAutomator2 server).
const HELPER_APP: &str = "io.appium.uiautomator2.server";

/// What Crash Test logs and throws, read from its one source of truth.
#[derive(Debug, Clone)]
pub struct AppTexts {
    /// The line logged at start.
    pub start_line: String,
    /// The IllegalStateException's message.
    pub crash_message: String,
}

impl AppTexts {
    /// Reads `crashtest/res/values/strings.xml`.
    pub fn load(workspace: &Path) -> Result<Self> {
        let path = workspace.join("crashtest/res/values/strings.xml");
        let xml =
            fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
        let get = |name: &str| {
            string_resource(&xml, name)
                .with_context(|| format!("{} has no string {name}", path.display()))
        };
        Ok(Self {
            start_line: get("start_line")?,
            crash_message: get("crash_message")?,
        })
    }
}

/// The text of `<string name="NAME">TEXT</string>`.
fn string_resource(xml: &str, name: &str) -> Option<String> {
    let open = format!("<string name=\"{name}\">");
    let start = xml.find(&open)? + open.len();
    let end = xml[start..].find("</string>")?;
    Some(xml[start..start + end].to_owned())
}

/// The programs the test runs.
#[derive(Debug, Clone)]
pub struct Programs {
    /// `phonelogs-mcp`.
    pub server: PathBuf,
    /// `phonelogs`.
    pub cli: PathBuf,
}

/// One agent task: a running `phonelogs-mcp` with its own state folder.
#[derive(Debug)]
pub struct Task {
    client: McpClient,
    state_dir: PathBuf,
    serial: String,
}

impl Task {
    /// Starts `phonelogs-mcp` on a fresh state folder, aimed at the adb server on `adb_port`
    /// (the user's when `None`), and opens the MCP session.
    pub fn start(
        programs: &Programs,
        work: &Path,
        name: &str,
        serial: &str,
        adb_port: Option<u16>,
    ) -> Result<Self> {
        let env: Vec<(&str, String)> = adb_port
            .map(|port| ("ANDROID_ADB_SERVER_PORT", port.to_string()))
            .into_iter()
            .collect();
        Self::start_with_env(programs, work, name, serial, &env)
    }

    /// As [`Task::start`], with `env` set for the server (the usbmuxd and adb server addresses).
    pub fn start_with_env(
        programs: &Programs,
        work: &Path,
        name: &str,
        serial: &str,
        env: &[(&str, String)],
    ) -> Result<Self> {
        let state_dir = work.join(format!("mcp-state-{name}"));
        let _ = fs::remove_dir_all(&state_dir);
        fs::create_dir_all(&state_dir)
            .with_context(|| format!("cannot create {}", state_dir.display()))?;
        let log = work.join(format!("phonelogs-mcp-{name}.log"));
        let stderr =
            File::create(&log).with_context(|| format!("cannot create {}", log.display()))?;
        let mut command = Command::new(&programs.server);
        command
            .arg("--state-dir")
            .arg(&state_dir)
            .args(["--agent", "emulator-test"])
            .stderr(Stdio::from(stderr));
        for (key, value) in env {
            command.env(key, value);
        }
        let client = McpClient::start(&mut command)
            .with_context(|| format!("the MCP server's log is {}", log.display()))?;
        Ok(Self {
            client,
            state_dir,
            serial: serial.to_owned(),
        })
    }

    /// Calls one tool of the server.
    pub fn call(&mut self, tool: &str, arguments: Value) -> Result<Value> {
        self.client.call_tool(tool, arguments)
    }

    /// Answers a question as the person does: `phonelogs approvals answer ID task`.
    pub fn answer(&self, programs: &Programs, approval: &str) -> Result<()> {
        let mut answer = Command::new(&programs.cli);
        answer
            .args(["approvals", "answer", approval, "task", "--state-dir"])
            .arg(&self.state_dir);
        process::run_ok(&mut answer, Duration::from_secs(30)).map(drop)
    }

    /// Ends the task (closes the session) and returns `phonelogs history --json`.
    pub fn end(self, programs: &Programs) -> Result<String> {
        self.client.close()?;
        let mut history = Command::new(&programs.cli);
        history
            .args(["history", "--json", "--state-dir"])
            .arg(&self.state_dir);
        Ok(process::run_ok(&mut history, Duration::from_secs(30))?.stdout)
    }

    /// After the Crash tap: reads the lines and the crash report, answering the question for a
    /// release build, checks a helper app is refused, ends the task and checks the history.
    pub fn check_after_crash(
        mut self,
        programs: &Programs,
        texts: &AppTexts,
        package: &str,
        debuggable: bool,
    ) -> Result<Vec<String>> {
        let mut done = Vec::new();
        let logs = json!({"app": package, "device": self.serial});
        let first = self.client.call_tool("phone_logs", logs.clone())?;
        let status = structured_str(&first, "status")
            .unwrap_or_default()
            .to_owned();
        let result = if debuggable {
            ensure!(
                status == "ok",
                "a debuggable build must not ask, but phone_logs answered `{status}`: {}",
                result_text(&first)
            );
            done.push("the debug build was read without a question".to_owned());
            first
        } else {
            ensure!(
                status == "approval_pending",
                "a release build must ask, but phone_logs answered `{status}`: {}",
                result_text(&first)
            );
            let approval = structured_str(&first, "approval_id")
                .context("approval_pending without an approval_id")?
                .to_owned();
            let mut answer = Command::new(&programs.cli);
            answer
                .args(["approvals", "answer", &approval, "task", "--state-dir"])
                .arg(&self.state_dir);
            process::run_ok(&mut answer, Duration::from_secs(30))?;
            let mut again = logs.clone();
            again["approval_id"] = Value::from(approval.clone());
            let second = self.client.call_tool("phone_logs", again)?;
            let status = structured_str(&second, "status").unwrap_or_default();
            ensure!(
                status == "ok",
                "after `approvals answer {approval} task`, phone_logs answered `{status}`: {}",
                result_text(&second)
            );
            done.push(format!(
                "the release build asked ({approval}) and was read after `approvals answer … task`"
            ));
            second
        };
        let text = result_text(&result);
        for expected in [&texts.start_line, &texts.crash_message] {
            ensure!(
                text.contains(expected.as_str()),
                "the app's lines lack {expected:?}:\n{text}"
            );
        }
        done.push("the lines hold the start line and the crash".to_owned());

        self.check_crash_report(package, texts)?;
        done.push("the crash report is a java_crash with the exception".to_owned());

        let helper = self.client.call_tool(
            "phone_logs",
            json!({"app": HELPER_APP, "device": self.serial}),
        )?;
        let status = structured_str(&helper, "status").unwrap_or_default();
        ensure!(
            status == "blocked_by_policy",
            "{HELPER_APP}: phone_logs answered `{status}`, not blocked_by_policy"
        );
        done.push(format!("{HELPER_APP} is refused"));

        self.client.close()?;
        let mut history = Command::new(&programs.cli);
        history
            .args(["history", "--json", "--state-dir"])
            .arg(&self.state_dir);
        let history = process::run_ok(&mut history, Duration::from_secs(30))?.stdout;
        if !history.contains(package) {
            bail!("the history does not name {package}:\n{history}");
        }
        for secret in [&texts.start_line, &texts.crash_message] {
            ensure!(
                !history.contains(secret.as_str()),
                "the history holds log text {secret:?}"
            );
        }
        done.push("the history names the app and holds no log text".to_owned());
        Ok(done)
    }

    /// The crash reports: the newest a `java_crash` holding the crash's exception.
    fn check_crash_report(&mut self, package: &str, texts: &AppTexts) -> Result<()> {
        let crashes = self.client.call_tool(
            "phone_logs",
            json!({"app": package, "device": self.serial, "kind": "crashes"}),
        )?;
        let status = structured_str(&crashes, "status").unwrap_or_default();
        ensure!(
            status == "ok",
            "crashes: phone_logs answered `{status}`: {}",
            result_text(&crashes)
        );
        let text = result_text(&crashes);
        let wanted = format!("IllegalStateException: {}", texts.crash_message);
        ensure!(
            text.contains(&wanted),
            "the crash reports lack {wanted:?}:\n{text}"
        );
        let kind = crashes
            .pointer("/structuredContent/reports/0/kind")
            .and_then(Value::as_str)
            .unwrap_or_default();
        ensure!(
            kind == "java_crash",
            "the newest report is `{kind}`, not java_crash"
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_app_texts_from_the_crashtest_resources() {
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let texts = AppTexts::load(workspace).unwrap();
        assert_eq!(texts.crash_message, "Crash button tapped");
        assert!(!texts.start_line.is_empty());
        assert_eq!(
            string_resource("<string name=\"a\">b</string>", "a").as_deref(),
            Some("b")
        );
        assert_eq!(string_resource("<string name=\"a\">b", "a"), None);
    }
}
