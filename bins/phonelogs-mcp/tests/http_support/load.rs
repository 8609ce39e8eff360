//! The load run shared by `tests/http_isolation.rs` (small, asserts isolation only) and
//! `benches/http_load.rs` (the full run, with faults and figures): four simulated phones behind
//! a private real adb server (`/usr/bin/adb`), one `phonelogs-mcp --http`, one agent per app,
//! each with its own token and scope, every app installed on every phone and writing lines that
//! carry its own canary string, so a line of another app in any result shows at once.

#![allow(dead_code, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use phonelogs_adbsim::{Package, Priority, SimHandle, SimPhone, Simulator};
use serde_json::{Value, json};

use super::{Mcp, Server, start};

/// The release-build app every agent may ask about: its reads need the person's answer.
pub const STORE: &str = "dev.phonelogs.load.store";

pub fn app(i: usize) -> String {
    format!("dev.phonelogs.load.app{i:02}")
}
pub fn canary(i: usize) -> String {
    format!("canary-{i:02}-")
}
pub fn token(i: usize) -> String {
    format!("load-token-{i:02}-0123456789abcdef")
}
pub fn agent(i: usize) -> String {
    format!("agent{i:02}")
}

/// A private adb server, the simulated phones it reaches, and the server under load.
pub struct Lab {
    pub home: tempfile::TempDir,
    pub state: tempfile::TempDir,
    pub adb: PathBuf,
    pub port: u16,
    pub phones: Vec<SimPhone>,
    pub serials: Vec<String>,
    handles: Vec<SimHandle>,
    pub server: Server,
}

impl Lab {
    pub fn adb(&self, args: &[&str]) -> std::process::Output {
        adb(&self.adb, self.port, self.home.path(), args)
    }

    /// Connects every phone and waits until the adb server lists them all as devices.
    pub async fn connect_all(&self) {
        for serial in &self.serials {
            self.adb(&["connect", serial]);
        }
        for _ in 0..100 {
            let listing = String::from_utf8_lossy(&self.adb(&["devices"]).stdout).into_owned();
            let ready = self.serials.iter().all(|serial| {
                listing.lines().any(|l| {
                    l.split_whitespace().collect::<Vec<_>>() == [serial.as_str(), "device"]
                })
            });
            if ready {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the simulated phones did not all come up");
    }

    /// The adb server killed, and started again with its phones, `down` later.
    pub async fn restart_adb(&self, down: Duration) {
        self.adb(&["kill-server"]);
        tokio::time::sleep(down).await;
        assert!(self.adb(&["start-server"]).status.success());
        self.connect_all().await;
    }

    /// The server process's resident memory, in KiB, from /proc.
    pub fn rss_kib(&self) -> Option<u64> {
        let pid = self.server.child.id()?;
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let _ = self.adb(&["kill-server"]);
    }
}

fn adb(adb: &Path, port: u16, home: &Path, args: &[&str]) -> std::process::Output {
    Command::new(adb)
        .arg("-P")
        .arg(port.to_string())
        .args(args)
        .env("HOME", home)
        .env("ANDROID_USER_HOME", home.join(".android"))
        .output()
        .unwrap()
}

/// `agents` apps on each of `phones` phones, `lines` lines of each app on each phone.
pub async fn lab(agents: usize, phones: usize, lines: usize) -> Option<Lab> {
    let adb_path = PathBuf::from("/usr/bin/adb");
    if !adb_path.is_file() {
        eprintln!("skipped: /usr/bin/adb is not installed");
        return None;
    }
    let home = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    assert!(
        adb(&adb_path, port, home.path(), &["start-server"])
            .status
            .success()
    );
    let mut sims = Vec::new();
    let mut handles = Vec::new();
    let mut serials = Vec::new();
    for _ in 0..phones {
        let phone = SimPhone::default_phone();
        phone.set_noise_rate(0.0);
        let mut store = Package::new(STORE, 10_900);
        store.debuggable = false;
        phone.install(store);
        for i in 0..agents {
            let mut package = Package::new(&app(i), 10_500 + i as u32);
            package.debuggable = true;
            phone.install(package);
            phone.launch(&app(i)).unwrap();
            for n in 0..lines {
                let message = format!("{}line {n} of {}", canary(i), app(i));
                phone
                    .log(&app(i), Priority::Info, "Load", &message)
                    .unwrap();
            }
        }
        let (address, handle) = Simulator::bind_loopback(None, phone.clone()).await.unwrap();
        serials.push(format!("127.0.0.1:{}", address.port()));
        sims.push(phone);
        handles.push(handle);
    }
    // One token and one agent per app; each agent's scope is its app and the store app.
    let tokens: String = (0..agents)
        .map(|i| format!("{} {}\n", token(i), agent(i)))
        .collect();
    std::fs::write(state.path().join("tokens"), tokens).unwrap();
    let config: String = (0..agents)
        .map(|i| {
            format!(
                "[[policy.agents]]\nname = \"{}\"\napps = [\"{}\", \"{STORE}\"]\n",
                agent(i),
                app(i)
            )
        })
        .collect();
    std::fs::write(state.path().join("config.toml"), config).unwrap();
    let tokens_path = state.path().join("tokens");
    let config_path = state.path().join("config.toml");
    let port_text = port.to_string();
    let server = start(
        state.path(),
        &[
            "--http",
            "127.0.0.1:0",
            "--token-file",
            tokens_path.to_str().unwrap(),
            "--config",
            config_path.to_str().unwrap(),
            "--http-max-sessions",
            "64",
        ],
        &[("ANDROID_ADB_SERVER_PORT", port_text.as_str())],
    )
    .await;
    let lab = Lab {
        home,
        state,
        adb: adb_path,
        port,
        phones: sims,
        serials,
        handles,
        server,
    };
    lab.connect_all().await;
    Some(lab)
}

/// What one call came to.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub agent: usize,
    pub took: Duration,
    /// `Ok(status)` when the tool answered (ok, error, …), `Err` for a transport failure.
    pub status: Result<String, String>,
    pub message: String,
}

/// Everything the run saw.
#[derive(Debug, Default)]
pub struct Tally {
    pub outcomes: Vec<Outcome>,
    /// Results that held a line of another agent's app: must stay empty.
    pub leaks: Vec<String>,
}

/// One warm `phone_logs` call of agent `i` on its phone; checks the result's lines against
/// every canary.
pub async fn call(
    mcp: &mut Mcp,
    i: usize,
    serial: &str,
    agents: usize,
    tally: &Mutex<Tally>,
) -> Outcome {
    let start = Instant::now();
    let result = mcp
        .call(
            "phone_logs",
            json!({ "app": app(i), "device": serial, "since": "1h", "limit": 50 }),
        )
        .await;
    let took = start.elapsed();
    let outcome = match result {
        Ok(out) => {
            check_lines(&out, i, agents, tally);
            Outcome {
                agent: i,
                took,
                status: Ok(out["status"].as_str().unwrap_or("?").to_owned()),
                message: out["message"].as_str().unwrap_or_default().to_owned(),
            }
        }
        Err(error) => Outcome {
            agent: i,
            took,
            status: Err(error.clone()),
            message: error,
        },
    };
    tally.lock().unwrap().outcomes.push(outcome.clone());
    outcome
}

fn check_lines(out: &Value, i: usize, agents: usize, tally: &Mutex<Tally>) {
    let log = out["log"].as_str().unwrap_or_default();
    for j in (0..agents).filter(|&j| j != i) {
        if log.contains(&canary(j)) || log.contains(&app(j)) {
            tally
                .lock()
                .unwrap()
                .leaks
                .push(format!("agent {i} saw app {j}'s line"));
        }
    }
    if out["status"] == "ok" && !log.contains(&canary(i)) {
        tally
            .lock()
            .unwrap()
            .leaks
            .push(format!("agent {i}'s ok result lacks its own lines: {out}"));
    }
}

/// Opens agent `i`'s session.
pub async fn session(lab: &Lab, i: usize) -> Mcp {
    let mut mcp = Mcp::new(lab.server.addr, &token(i));
    mcp.initialize().await.unwrap();
    mcp
}

/// Runs `agents` sessions at once, `calls` calls in all, agent `i` on phone `i % phones`;
/// `during` runs beside them (faults), given how far the run is (0.0 to 1.0).
pub async fn run(
    lab: &Arc<Lab>,
    agents: usize,
    calls: usize,
    tally: &Arc<Mutex<Tally>>,
    progress: &Arc<std::sync::atomic::AtomicUsize>,
) {
    let mut tasks = Vec::new();
    for i in 0..agents {
        let (lab, tally, progress) = (lab.clone(), tally.clone(), progress.clone());
        let share = calls / agents + usize::from(i < calls % agents);
        tasks.push(tokio::spawn(async move {
            let mut mcp = session(&lab, i).await;
            let serial = lab.serials[i % lab.serials.len()].clone();
            for _ in 0..share {
                call(&mut mcp, i, &serial, agents, &tally).await;
                progress.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            mcp
        }));
    }
    for task in tasks {
        let _ = task.await.unwrap().delete().await;
    }
}

/// Asks about the store app in session `a`, has the person allow it once, and shows that
/// session `b` cannot use the answer while `a` can. Returns what `b` got.
pub async fn approval_stays_in_its_session(lab: &Lab, a: usize, b: usize) -> (Value, Value) {
    let serial = lab.serials[0].clone();
    let mut first = session(lab, a).await;
    let mut other = session(lab, b).await;
    let asked = first
        .call("phone_logs", json!({ "app": STORE, "device": serial }))
        .await
        .unwrap();
    assert_eq!(asked["status"], "approval_pending", "{asked}");
    let id = asked["approval_id"].as_str().unwrap().to_owned();
    let store = phonelogs_gateway::Store::open(lab.state.path()).unwrap();
    store.answer(&id, phonelogs_gateway::Answer::Once).unwrap();
    let stolen = other
        .call(
            "phone_logs",
            json!({ "app": STORE, "device": serial, "approval_id": id }),
        )
        .await
        .unwrap();
    let own = first
        .call(
            "phone_logs",
            json!({ "app": STORE, "device": serial, "approval_id": id }),
        )
        .await
        .unwrap();
    let _ = first.delete().await;
    let _ = other.delete().await;
    (stolen, own)
}

pub fn percentile(samples: &[Duration], p: f64) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort();
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

/// The history's steps of agent `i`.
pub fn history_of(lab: &Lab, i: usize) -> usize {
    let store = phonelogs_gateway::Store::open(lab.state.path()).unwrap();
    store
        .history(phonelogs_gateway::HistoryFilter {
            agent: Some(agent(i)),
            ..Default::default()
        })
        .unwrap()
        .len()
}
