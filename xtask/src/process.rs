//! Running a child process with a deadline: every adb call and build step of xtask has one, so a
//! stuck device or server makes a step fail instead of hanging the run.

use std::io::Read;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

/// What a finished child printed and how it ended.
#[derive(Debug)]
pub struct Finished {
    /// How the child exited.
    pub status: ExitStatus,
    /// Its standard output, lossily decoded.
    pub stdout: String,
    /// Its standard error, lossily decoded.
    pub stderr: String,
}

impl Finished {
    /// Standard output and standard error together, for error messages.
    pub fn both(&self) -> String {
        let mut text = self.stdout.trim_end().to_owned();
        let stderr = self.stderr.trim_end();
        if !stderr.is_empty() {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(stderr);
        }
        text
    }
}

/// Describes a command for messages: the program and its arguments, space-separated.
pub fn describe(command: &Command) -> String {
    let mut text = command.get_program().to_string_lossy().into_owned();
    for arg in command.get_args() {
        text.push(' ');
        text.push_str(&arg.to_string_lossy());
    }
    text
}

/// Runs `command` to completion, capturing its output, and kills it when it takes longer than
/// `timeout`. Standard input is closed so that no child waits for a terminal.
pub fn run(command: &mut Command, timeout: Duration) -> Result<Finished> {
    let what = describe(command);
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start `{what}`"))?;
    // Both pipes are drained on their own threads: a child that fills one pipe while we wait on
    // the other would otherwise never finish.
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let status = wait_until(&mut child, Instant::now() + timeout);
    let Some(status) = status? else {
        // Killing closes the pipes, so the reader threads end too.
        let _ = child.kill();
        let _ = child.wait();
        bail!("`{what}` did not finish within {} s", timeout.as_secs());
    };
    Ok(Finished {
        status,
        stdout: join(stdout),
        stderr: join(stderr),
    })
}

/// Like [`run`], but a non-zero exit is an error that quotes what the command printed.
pub fn run_ok(command: &mut Command, timeout: Duration) -> Result<Finished> {
    let what = describe(command);
    let finished = run(command, timeout)?;
    if !finished.status.success() {
        bail!("`{what}` failed ({}): {}", finished.status, finished.both());
    }
    Ok(finished)
}

/// Runs `command` with its output going straight to ours (for long cargo runs whose progress a
/// person wants to see), killing it after `timeout`; a non-zero exit is an error.
pub fn run_visible(command: &mut Command, timeout: Duration) -> Result<()> {
    let what = describe(command);
    let mut child = command
        .stdin(Stdio::null())
        .spawn()
        .with_context(|| format!("cannot start `{what}`"))?;
    match wait_until(&mut child, Instant::now() + timeout)? {
        Some(status) if status.success() => Ok(()),
        Some(status) => bail!("`{what}` failed ({status})"),
        None => {
            let _ = child.kill();
            let _ = child.wait();
            bail!("`{what}` did not finish within {} s", timeout.as_secs())
        }
    }
}

/// Polls `child` until it exits or `deadline` passes; `None` means it is still running.
pub fn wait_until(child: &mut Child, deadline: Instant) -> Result<Option<ExitStatus>> {
    loop {
        if let Some(status) = child
            .try_wait()
            .context("cannot wait for a child process")?
        {
            return Ok(Some(status));
        }
        if Instant::now() >= deadline {
            return Ok(None);
        }
        thread::sleep(Duration::from_millis(20));
    }
}

fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> Option<thread::JoinHandle<Vec<u8>>> {
    pipe.map(|mut pipe| {
        thread::spawn(move || {
            let mut bytes = Vec::new();
            // A read error only shortens the captured text; the exit status still tells the story.
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    })
}

fn join(handle: Option<thread::JoinHandle<Vec<u8>>>) -> String {
    handle
        .and_then(|handle| handle.join().ok())
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_output_and_status() {
        let finished = run(
            Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]),
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(finished.stdout, "out\n");
        assert_eq!(finished.stderr, "err\n");
        assert_eq!(finished.status.code(), Some(3));
        assert_eq!(finished.both(), "out\nerr");
    }

    #[test]
    fn a_failing_command_is_an_error_with_its_output() {
        let error = run_ok(
            Command::new("sh").args(["-c", "echo nope >&2; exit 1"]),
            Duration::from_secs(10),
        )
        .unwrap_err();
        assert!(error.to_string().contains("nope"), "{error}");
    }

    #[test]
    fn a_command_past_its_deadline_is_killed() {
        let error = run(
            Command::new("sh").args(["-c", "sleep 30"]),
            Duration::from_millis(200),
        )
        .unwrap_err();
        assert!(error.to_string().contains("did not finish"), "{error}");
    }
}
