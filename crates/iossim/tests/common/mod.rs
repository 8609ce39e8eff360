//! Shared helpers: a simulator on loopback, and the real tools found on this machine.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Output;
use std::time::Duration;

use phonelogs_iossim::{IosSim, SimPhone};

/// Starts the default phone on a free loopback port.
pub async fn sim() -> IosSim {
    IosSim::bind_loopback(None, SimPhone::default_phone())
        .await
        .expect("bind the simulator")
}

/// A tool from PATH, or pymobiledevice3 from the CI or local virtual environment. `None` (with
/// the reason printed) when it is missing; CI sets `PHONELOGS_REQUIRE_IOS_TOOLS=1`, which
/// turns that into a failure.
pub fn tool(name: &str) -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).map(|d| d.join(name)).collect())
        .unwrap_or_default();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    candidates.push(root.join("target/ci-venv/bin").join(name));
    if let Some(venv) = std::env::var_os("PHONELOGS_IOS_VENV") {
        candidates.push(PathBuf::from(venv).join("bin").join(name));
    }
    if let Some(found) = candidates.into_iter().find(|p| p.is_file()) {
        return Some(found);
    }
    let why = format!(
        "skipping: `{name}` is not installed (apt-get install libimobiledevice-utils ideviceinstaller; pip install pymobiledevice3 into target/ci-venv or PHONELOGS_IOS_VENV)"
    );
    if std::env::var("PHONELOGS_REQUIRE_IOS_TOOLS").is_ok_and(|v| v == "1") {
        panic!("PHONELOGS_REQUIRE_IOS_TOOLS=1 but {why}");
    }
    eprintln!("{why}");
    None
}

/// Runs a tool against the simulator with a time limit, HOME in a fresh directory (so no
/// pair record of a real phone is read or written).
pub async fn run(
    program: &PathBuf,
    args: &[&str],
    sim: &IosSim,
    home: &std::path::Path,
    limit: Duration,
) -> Output {
    let child = tokio::process::Command::new(program)
        .args(args)
        .env("USBMUXD_SOCKET_ADDRESS", sim.addr())
        .env("HOME", home)
        .env("NO_COLOR", "1")
        .env("TERM", "dumb")
        .kill_on_drop(true)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start the tool");
    match tokio::time::timeout(limit, child.wait_with_output()).await {
        Ok(output) => output.expect("wait for the tool"),
        Err(_) => panic!(
            "{} {args:?} did not finish within {limit:?}",
            program.display()
        ),
    }
}

/// Runs a tool until `limit`, then kills it, and returns what it printed so far (for
/// followers such as `idevicesyslog`).
pub async fn run_for(
    program: &PathBuf,
    args: &[&str],
    sim: &IosSim,
    home: &std::path::Path,
    limit: Duration,
    during: impl std::future::Future<Output = ()>,
) -> (String, String) {
    use tokio::io::AsyncReadExt;
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .env("USBMUXD_SOCKET_ADDRESS", sim.addr())
        .env("HOME", home)
        .env("NO_COLOR", "1")
        .env("TERM", "dumb")
        .kill_on_drop(true)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start the tool");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out = tokio::spawn(async move {
        let mut s = Vec::new();
        let _ = stdout.read_to_end(&mut s).await;
        s
    });
    let err = tokio::spawn(async move {
        let mut s = Vec::new();
        let _ = stderr.read_to_end(&mut s).await;
        s
    });
    during.await;
    tokio::time::sleep(limit).await;
    let _ = child.kill().await;
    let out = out.await.unwrap_or_default();
    let err = err.await.unwrap_or_default();
    (
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
    )
}

pub fn text(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The Python that runs pymobiledevice3 (the one in its virtual environment), for tests that
/// drive its library directly where its command line has no command for the check.
pub fn pymobiledevice3_python() -> Option<PathBuf> {
    let tool = tool("pymobiledevice3")?;
    let python = tool.with_file_name("python3");
    python.is_file().then_some(python)
}

/// Starts the default phone on `ios` on a free loopback port.
pub async fn sim_on(ios: phonelogs_iossim::IosVersion) -> IosSim {
    IosSim::bind_loopback(None, SimPhone::default_phone_on(ios))
        .await
        .expect("bind the simulator")
}
