//! The load run shared by `tests/http_isolation.rs` (small, asserts isolation only) and
//! `benches/http_load.rs` (the full run, with faults and figures): four simulated phones split
//! two and two between two private real adb servers (`/usr/bin/adb`, each on its own loopback
//! port with its own HOME), one `phonelogs-mcp --http --adb-server A --adb-server B`, one agent
//! per app, each with its own token and scope, every app installed on every phone and writing
//! lines that carry its own canary string, so a line of another app in any result shows at
//! once. Calls name each phone as `list_devices` named it (`server/serial`, there being two
//! servers), which the lab checks against the servers it started.

#![allow(dead_code, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use phonelogs_adbsim::{Package, Priority, SimHandle, SimPhone, Simulator};
use serde_json::{Value, json};

use super::adb::PrivateAdb;
use super::{Mcp, Server, start};

/// The release-build app every agent may ask about: its reads need the person's answer.
pub const STORE: &str = "dev.phonelogs.load.store";
/// How many adb servers the lab starts; phone `k` is on server `k * SERVERS / phones`.
pub const SERVERS: usize = 2;

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

/// CPU seconds of the processes a load run keeps busy.
#[derive(Debug, Clone, Copy)]
pub struct CpuSeconds {
    pub server: f64,
    pub adb: f64,
    pub this: f64,
    /// The machine's steal time (`/proc/stat`): while this virtual machine's cores waited for
    /// the host, summed over its cores. Runs with much of it measure the host, not the server.
    pub steal: f64,
}

impl std::ops::Sub for CpuSeconds {
    type Output = CpuSeconds;
    fn sub(self, earlier: CpuSeconds) -> CpuSeconds {
        CpuSeconds {
            server: self.server - earlier.server,
            adb: self.adb - earlier.adb,
            this: self.this - earlier.this,
            steal: self.steal - earlier.steal,
        }
    }
}

/// utime + stime of a `/proc/PID/stat`, in seconds (at the usual 100 ticks a second).
fn cpu_of(stat: &str) -> Option<f64> {
    let text = std::fs::read_to_string(stat).ok()?;
    // The name in parentheses may hold spaces: count fields after its closing parenthesis.
    let after = &text[text.rfind(')')? + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(ticks as f64 / 100.0)
}

/// Two private adb servers, the simulated phones they reach, and the server under load.
pub struct Lab {
    pub state: tempfile::TempDir,
    pub servers: Vec<PrivateAdb>,
    pub phones: Vec<SimPhone>,
    /// Each phone's adb serial (`127.0.0.1:PORT`, as `adb connect` names it).
    pub serials: Vec<String>,
    /// Each phone's server (an index into `servers`).
    pub server_of: Vec<usize>,
    /// Each phone's name as `list_devices` gives it: what every call's `device` is.
    pub names: Vec<String>,
    /// How many agents (apps) the lab serves.
    pub agents: usize,
    handles: Vec<SimHandle>,
    pub server: Server,
}

impl Lab {
    /// `adb -P <port of server s> args…` with that server's HOME.
    /// Runs `adb` against server `s`, waiting without holding a runtime thread: the simulated
    /// phones that `adb connect` and `start-server` talk to are served on this runtime, as
    /// are the clients whose calls the faults run beside.
    pub async fn adb(&self, s: usize, args: &[&str]) -> std::process::Output {
        tokio::process::Command::from(self.servers[s].command(args))
            .output()
            .await
            .expect("adb runs")
    }

    /// The phones of server `s`.
    pub fn phones_of(&self, s: usize) -> Vec<usize> {
        (0..self.phones.len())
            .filter(|&k| self.server_of[k] == s)
            .collect()
    }

    /// Connects server `s`'s phones and waits until that server lists them all as devices.
    pub async fn connect(&self, s: usize) {
        let mine = self.phones_of(s);
        for &k in &mine {
            self.adb(s, &["connect", &self.serials[k]]).await;
        }
        for _ in 0..100 {
            let listing =
                String::from_utf8_lossy(&self.adb(s, &["devices"]).await.stdout).into_owned();
            let ready = mine.iter().all(|&k| {
                listing.lines().any(|l| {
                    l.split_whitespace().collect::<Vec<_>>() == [self.serials[k].as_str(), "device"]
                })
            });
            if ready {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the simulated phones of adb server {s} did not all come up");
    }

    /// Adb server `s` killed, and started again with its phones, `down` later. The other
    /// server is not touched.
    pub async fn restart_adb(&self, s: usize, down: Duration) {
        self.adb(s, &["kill-server"]).await;
        tokio::time::sleep(down).await;
        assert!(self.adb(s, &["start-server"]).await.status.success());
        self.connect(s).await;
    }

    /// The server process's resident memory, in KiB, from /proc.
    pub fn rss_kib(&self) -> Option<u64> {
        let pid = self.server.child.id()?;
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }

    /// CPU time used so far, from /proc (utime + stime), in seconds: the server under load,
    /// the adb servers, and this process (the clients and the simulated phones).
    pub fn cpu_seconds(&self) -> Option<CpuSeconds> {
        let server = cpu_of(&format!("/proc/{}/stat", self.server.child.id()?))?;
        let mut adb = 0.0;
        for entry in std::fs::read_dir("/proc").ok()?.flatten() {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if self.servers.iter().any(|s| {
                cmdline.contains(&format!("tcp:{} ", s.port)) && cmdline.contains("server")
            }) {
                adb += cpu_of(&entry.path().join("stat").to_string_lossy()).unwrap_or(0.0);
            }
        }
        let this = cpu_of("/proc/self/stat")?;
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        // `cpu  user nice system idle iowait irq softirq steal …`, in ticks of 1/100 s.
        let steal: u64 = stat
            .lines()
            .next()?
            .split_whitespace()
            .nth(8)?
            .parse()
            .ok()?;
        Some(CpuSeconds {
            server,
            adb,
            this,
            steal: steal as f64 / 100.0,
        })
    }

    /// The phone whose `list_devices` name is `name`.
    pub fn phone_named(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }
}

/// A simulated phone with the store app and `agents` apps, each launched and having logged
/// `lines` lines that carry its canary.
fn phone(agents: usize, lines: usize) -> SimPhone {
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
    phone
}

/// Writes the token file (one token and agent per app) and the configuration (each agent's
/// scope is its app and the store app); returns their paths.
fn agents_files(state: &Path, agents: usize) -> (PathBuf, PathBuf) {
    let tokens: String = (0..agents)
        .map(|i| format!("{} {}\n", token(i), agent(i)))
        .collect();
    let tokens_path = state.join("tokens");
    std::fs::write(&tokens_path, tokens).unwrap();
    // The server refuses a token file others can read.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&tokens_path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let config: String = (0..agents)
        .map(|i| {
            format!(
                "[[policy.agents]]\nname = \"{}\"\napps = [\"{}\", \"{STORE}\"]\n",
                agent(i),
                app(i)
            )
        })
        .collect();
    let config_path = state.join("config.toml");
    std::fs::write(&config_path, config).unwrap();
    (tokens_path, config_path)
}

/// `agents` apps on each of `phones` phones, `lines` lines of each app on each phone; the
/// phones split evenly between the two adb servers (the first half on server 0).
pub async fn lab(agents: usize, phones: usize, lines: usize) -> Option<Lab> {
    let adb_path = PathBuf::from("/usr/bin/adb");
    if !adb_path.is_file() {
        eprintln!("skipped: /usr/bin/adb is not installed");
        return None;
    }
    let state = tempfile::tempdir().unwrap();
    let servers: Vec<PrivateAdb> = (0..SERVERS)
        .map(|_| PrivateAdb::start(adb_path.clone()))
        .collect();
    let mut sims = Vec::new();
    let mut handles = Vec::new();
    let mut serials = Vec::new();
    for _ in 0..phones {
        let phone = phone(agents, lines);
        let (address, handle) = Simulator::bind_loopback(None, phone.clone()).await.unwrap();
        serials.push(format!("127.0.0.1:{}", address.port()));
        sims.push(phone);
        handles.push(handle);
    }
    let server_of: Vec<usize> = (0..phones).map(|k| k * SERVERS / phones).collect();
    let (tokens_path, config_path) = agents_files(state.path(), agents);
    let mut args = vec![
        "--http".to_owned(),
        "127.0.0.1:0".to_owned(),
        "--token-file".to_owned(),
        tokens_path.to_str().unwrap().to_owned(),
        "--config".to_owned(),
        config_path.to_str().unwrap().to_owned(),
        "--http-max-sessions".to_owned(),
        "64".to_owned(),
    ];
    for server in &servers {
        args.push("--adb-server".to_owned());
        args.push(server.address());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    // The servers come from the flags alone: no adb environment variable names a port.
    let server = start(state.path(), &args, &[]).await;
    let mut lab = Lab {
        state,
        servers,
        phones: sims,
        serials,
        server_of,
        names: Vec::new(),
        agents,
        handles,
        server,
    };
    for s in 0..SERVERS {
        lab.connect(s).await;
    }
    lab.names = listed_names(&lab).await;
    Some(lab)
}

/// Each phone's name as an agent's `list_devices` shows it, checked to be `server/serial` of
/// the server the phone was connected to.
async fn listed_names(lab: &Lab) -> Vec<String> {
    let mut mcp = session(lab, 0).await;
    let listed = mcp.call("list_devices", json!({})).await.unwrap();
    let _ = mcp.delete().await;
    let ids: Vec<&str> = listed["devices"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["platform"] == "android")
        .filter_map(|d| d["id"].as_str())
        .collect();
    assert_eq!(ids.len(), lab.phones.len(), "{listed}");
    lab.serials
        .iter()
        .zip(&lab.server_of)
        .map(|(serial, &s)| {
            let ends = format!("/{serial}");
            let mut mine = ids.iter().filter(|id| id.ends_with(&ends));
            let name = mine
                .next()
                .unwrap_or_else(|| panic!("{serial} in {listed}"));
            assert!(mine.next().is_none(), "{serial} twice in {listed}");
            assert_eq!(*name, format!("{}/{serial}", lab.servers[s].address()));
            (*name).to_owned()
        })
        .collect()
}

/// What one call came to.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub agent: usize,
    /// The phone it named (an index into `Lab::phones`).
    pub phone: usize,
    pub took: Duration,
    /// When it started.
    pub at: Instant,
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

/// One warm `phone_logs` call of agent `i` on phone `k` (by its listed name); checks the
/// result's lines against every canary.
pub async fn call(lab: &Lab, mcp: &mut Mcp, i: usize, k: usize, tally: &Mutex<Tally>) -> Outcome {
    let start = Instant::now();
    let result = mcp
        .call(
            "phone_logs",
            json!({ "app": app(i), "device": lab.names[k], "since": "1h", "limit": 50 }),
        )
        .await;
    let took = start.elapsed();
    let outcome = match result {
        Ok(out) => {
            check_lines(&out, i, lab.agents, tally);
            Outcome {
                agent: i,
                phone: k,
                took,
                at: start,
                status: Ok(out["status"].as_str().unwrap_or("?").to_owned()),
                message: out["message"].as_str().unwrap_or_default().to_owned(),
            }
        }
        Err(error) => Outcome {
            agent: i,
            phone: k,
            took,
            at: start,
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

/// Runs the lab's agents' sessions at once, `calls` calls in all, agent `i` on phone
/// `i % phones` (so every phone, and both servers, carry their share); `progress` counts the
/// calls made, for faults run beside them. With `think`, each agent waits after each answer
/// before its next call (as an agent reads a result and decides): `think` on average, drawn
/// anew each time between half and one and a half of it, the agents' first calls spread over
/// one such wait. The waits vary as a model's do: with one fixed wait, two agents whose calls
/// once met (and were slowed together) would wait the same and meet again every time, and the
/// load would gather into ever larger bursts that no agent makes. Without `think`, each calls
/// again at once.
pub async fn run(
    lab: &Arc<Lab>,
    calls: usize,
    think: Option<Duration>,
    tally: &Arc<Mutex<Tally>>,
    progress: &Arc<std::sync::atomic::AtomicUsize>,
) {
    let agents = lab.agents;
    let mut tasks = Vec::new();
    for i in 0..agents {
        let (lab, tally, progress) = (lab.clone(), tally.clone(), progress.clone());
        let share = calls / agents + usize::from(i < calls % agents);
        tasks.push(tokio::spawn(async move {
            let mut mcp = session(&lab, i).await;
            let k = i % lab.phones.len();
            if let Some(think) = think {
                tokio::time::sleep(think * i as u32 / agents as u32).await;
            }
            // A small generator of its own per agent (xorshift), so every run waits alike.
            let mut state = 0x9E37_79B9_7F4A_7C15_u64 ^ (i as u64 + 1);
            let mut draw = move || {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 11) as f64 / (1u64 << 53) as f64
            };
            for _ in 0..share {
                call(&lab, &mut mcp, i, k, &tally).await;
                progress.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                if let Some(think) = think {
                    tokio::time::sleep(think.mul_f64(0.5 + draw())).await;
                }
            }
            mcp
        }));
    }
    for task in tasks {
        let _ = task.await.unwrap().delete().await;
    }
}

/// Asks about the store app in session `a`, has the person allow it once, and shows that
/// session `b` cannot use the answer while `a` can, on the first phone of each server.
/// Returns, for each server, that phone's name and what `b` and `a` got.
pub async fn approval_stays_in_its_session(
    lab: &Lab,
    a: usize,
    b: usize,
) -> Vec<(String, Value, Value)> {
    let mut seen = Vec::new();
    for s in 0..lab.servers.len() {
        let name = lab.names[lab.phones_of(s)[0]].clone();
        let (stolen, own) = approval_on(lab, a, b, &name).await;
        seen.push((name, stolen, own));
    }
    seen
}

async fn approval_on(lab: &Lab, a: usize, b: usize, serial: &str) -> (Value, Value) {
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
