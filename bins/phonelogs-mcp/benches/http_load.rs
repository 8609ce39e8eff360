//! Load over Streamable HTTP, bounded and on loopback only: 16 concurrent MCP sessions, each its
//! own agent (token) and app, 2,000 `phone_logs` calls in all, across four simulated phones
//! split two and two between two private real adb servers (`/usr/bin/adb`), the server given
//! both with `--adb-server`, every call naming its phone as `list_devices` did
//! (`server/serial`).
//!
//! Three measurements in one run, side by side:
//! 1. **One session alone**: 1,000 warm calls back to back, for the warm call's p50 and p99.
//! 2. **16 sessions at an agent's pace**, the figures the goal (p99 at most 3x the single
//!    session's) is about: each agent waits [`THINK`] on average (50–150 ms, drawn each time)
//!    after each answer before its next call, as an agent reads a result before it acts (a
//!    model takes seconds; this is far quicker).
//!    Faults run beside it: ONE adb server (A) killed and started again, a phone of that same
//!    server disconnected for a second, clients dropping their connection mid-call. Failures
//!    are counted per server and per phone.
//! 3. **16 sessions back to back**, no wait between calls and no faults: the two cores
//!    saturated, for what a server does when more is asked than the machine can serve (every
//!    call answered, more slowly: printed, not held to the goal).
//!
//! Asserted after the figures are printed: no call on the untouched server's (B's) phones
//! failed, none failed in the saturated load, no result held another app's line (canaries,
//! checked on every result), the history holds every answered call, and an approval answered in
//! one session is refused to another. The server's RSS is read from /proc at the start, the
//! middle and the end, and after each of three more loads (memory only: it must level off),
//! and each measured load's CPU per process.
//!
//! Run: `cargo bench -p phonelogs-mcp --bench http_load` (needs `/usr/bin/adb`; a debug build:
//! `cargo bench --profile dev -p phonelogs-mcp --bench http_load`). `cargo test -p
//! phonelogs-mcp --benches` (CI) runs every part with a few calls each ([`Sizes::quick`]), the
//! faults and the checks included, and judges no figure.

#![allow(clippy::unwrap_used)]

#[path = "../tests/http_support/mod.rs"]
mod http_support;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_support::load::{self, Lab, Tally};
use serde_json::json;
use tokio::io::AsyncWriteExt;

const AGENTS: usize = 16;
/// How long each agent waits on average after an answer before its next call in the paced
/// load (see `load::run`): far quicker than an agent that reads the result with a model
/// (seconds), and still about a third of what the two cores serve back to back.
const THINK: Duration = Duration::from_millis(100);
const CALLS: usize = 2_000;
/// The lone session's warm calls: enough that its p99 (the tenth slowest) is not one stray
/// call, since the goal is a ratio to it.
const SINGLE: usize = 1_000;
const DROPS: usize = 10;
/// Loads run after the measured ones, for the server's memory only.
const MORE_LOADS: usize = 3;
/// The adb server killed and restarted during the load; the other one is never touched.
const KILLED: usize = 0;

/// How many calls each part makes.
#[derive(Debug, Clone, Copy)]
struct Sizes {
    calls: usize,
    single: usize,
    drops: usize,
    more_loads: usize,
}

impl Sizes {
    /// The figures' sizes under `cargo bench`; a few calls of each part in CI's quick mode, so
    /// the harness, its faults and its checks still run (four calls an agent, half on each adb
    /// server, as the check of the untouched server counts them).
    fn now() -> Sizes {
        if http_support::adb::quick() {
            Sizes::quick()
        } else {
            Sizes {
                calls: CALLS,
                single: SINGLE,
                drops: DROPS,
                more_loads: MORE_LOADS,
            }
        }
    }

    fn quick() -> Sizes {
        Sizes {
            calls: 4 * AGENTS,
            single: 10,
            drops: 2,
            more_loads: 1,
        }
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run());
}

async fn run() {
    let Some(lab) = load::lab(AGENTS, 4, 200).await else {
        return;
    };
    let lab = Arc::new(lab);
    let rss_start = lab.rss_kib();
    let Sizes {
        calls: load_calls,
        single: alone_calls,
        more_loads,
        ..
    } = Sizes::now();

    // One session alone: the warm call (after one call to look the app up).
    let single = Arc::new(Mutex::new(Tally::default()));
    let mut alone = load::session(&lab, 0).await;
    load::call(&lab, &mut alone, 0, 0, &single).await;
    single.lock().unwrap().outcomes.clear();
    let (before, started) = (lab.cpu_seconds(), std::time::Instant::now());
    for _ in 0..alone_calls {
        load::call(&lab, &mut alone, 0, 0, &single).await;
    }
    let single_steal = lab
        .cpu_seconds()
        .zip(before)
        .map(|(after, before)| (after - before).steal);
    let single_wall = started.elapsed();
    let _ = alone.delete().await;
    let single_times: Vec<Duration> = single
        .lock()
        .unwrap()
        .outcomes
        .iter()
        .map(|o| o.took)
        .collect();

    // The load at an agent's pace, with faults beside it: the figures the goal is about.
    let paced = Arc::new(Mutex::new(Tally::default()));
    let progress = Arc::new(AtomicUsize::new(0));
    let faults = tokio::spawn(faults(lab.clone(), progress.clone()));
    let paced_cpu = Load::run(&lab, Some(THINK), &paced, &progress).await;
    let (rss_middle, dropped, offline) = faults.await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss_end = lab.rss_kib();
    let tally = std::mem::take(&mut *paced.lock().unwrap());

    // Then back to back, no wait between calls: the two cores saturated.
    let saturated = Arc::new(Mutex::new(Tally::default()));
    let saturated_cpu = Load::run(&lab, None, &saturated, &Arc::new(AtomicUsize::new(0))).await;
    let rss_after = lab.rss_kib();
    let saturated = std::mem::take(&mut *saturated.lock().unwrap());
    // Then more loads of new sessions, to see the memory level off rather than grow with them.
    let mut rss_more = Vec::new();
    let mut more = Tally::default();
    for _ in 0..more_loads {
        let tally = Arc::new(Mutex::new(Tally::default()));
        Load::run(
            &lab,
            Some(THINK / 4),
            &tally,
            &Arc::new(AtomicUsize::new(0)),
        )
        .await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        rss_more.push(lab.rss_kib());
        let mut tally = std::mem::take(&mut *tally.lock().unwrap());
        more.outcomes.append(&mut tally.outcomes);
        more.leaks.append(&mut tally.leaks);
    }

    let failures = failures_by_server(&lab, &tally);
    let history: usize = (0..AGENTS).map(|i| load::history_of(&lab, i)).sum();
    let answered = |t: &Tally| t.outcomes.iter().filter(|o| o.status.is_ok()).count();
    let (answered, made) = (
        answered(&tally) + answered(&saturated) + answered(&more),
        tally.outcomes.len() + saturated.outcomes.len() + more.outcomes.len(),
    );

    println!("sessions {AGENTS}, phones 4, on {} cores", cores());
    let leaks: Vec<&String> = tally
        .leaks
        .iter()
        .chain(&saturated.leaks)
        .chain(&more.leaks)
        .collect();
    println!("leaks (another app's line in a result): {}", leaks.len());
    for leak in leaks.iter().take(5) {
        println!("  {leak}");
    }
    let (p50s, p99s) = (
        load::percentile(&single_times, 0.5),
        load::percentile(&single_times, 0.99),
    );
    println!(
        "single session, {alone_calls} warm calls: p50 {p50s:?}, p99 {p99s:?} ({:.1} s; stolen by the \
         host {:.1} core-seconds)",
        single_wall.as_secs_f64(),
        single_steal.unwrap_or(f64::NAN)
    );
    let paced_p99 = print_load(
        &format!(
            "16 sessions, each waiting {} ms on average after each answer, with the faults below",
            THINK.as_millis()
        ),
        &lab,
        &tally,
        paced_cpu,
        p99s,
    );
    println!(
        "  p99 under load / p99 alone = {:.2}x (goal: 3x or less)",
        paced_p99.as_secs_f64() / p99s.as_secs_f64().max(f64::EPSILON)
    );
    print_failures(&lab, &tally, &failures, offline);
    println!("dropped mid-call by their client: {dropped}");
    print_load(
        "16 sessions back to back (no wait: the cores saturated), no faults",
        &lab,
        &saturated,
        saturated_cpu,
        p99s,
    );
    println!(
        "history rows of the load's agents: {history}; calls the server answered: {answered} \
         (+{alone_calls} +1 alone, +{dropped} dropped: rows may include those)"
    );
    println!(
        "server RSS KiB: start {rss_start:?}, middle {rss_middle:?}, after the paced load \
         {rss_end:?}, after the saturated one {rss_after:?}, after each of {more_loads} more \
         loads of {load_calls} calls (16 new sessions each) {rss_more:?}"
    );

    let approvals = load::approval_stays_in_its_session(&lab, 2, 3).await;
    for (phone, stolen, own) in &approvals {
        println!(
            "on {phone}: approval of session 2 used by session 3: {}; by session 2: {}",
            stolen["status"], own["status"]
        );
    }

    // What must hold, asserted after the figures are printed.
    assert!(leaks.is_empty(), "{leaks:?}");
    let failed = saturated
        .outcomes
        .iter()
        .filter(|o| o.status.as_deref() != Ok("ok"))
        .count();
    assert_eq!(failed, 0, "calls failed with no fault beside them");
    for (s, by_what) in failures.iter().enumerate().filter(|(s, _)| *s != KILLED) {
        let calls = tally
            .outcomes
            .iter()
            .filter(|o| lab.server_of[o.phone] == s)
            .count();
        assert_eq!(calls, load_calls / 2, "calls on adb server {s}'s phones");
        assert!(
            by_what.is_empty(),
            "calls on untouched adb server {s}'s phones failed: {by_what:?}"
        );
    }
    // Nothing lost from the history: every answered call has its row (the lone session's
    // too); a call whose client dropped it, or whose answer never arrived, may have one.
    let (least, most) = (answered + alone_calls + 1, made + alone_calls + 1 + dropped);
    assert!(
        (least..=most).contains(&history),
        "history rows {history}, expected {least} to {most}"
    );
    for (phone, stolen, own) in &approvals {
        assert_ne!(stolen["status"], "ok", "{phone}: {stolen}");
        assert_eq!(own["status"], "ok", "{phone}: {own}");
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// One load's CPU and wall time.
struct Load {
    wall: Duration,
    cpu: Option<load::CpuSeconds>,
}

impl Load {
    /// Runs the sizes' calls of the lab's agents (see [`load::run`]) and measures them.
    async fn run(
        lab: &Arc<Lab>,
        think: Option<Duration>,
        tally: &Arc<Mutex<Tally>>,
        progress: &Arc<AtomicUsize>,
    ) -> Load {
        let (before, started) = (lab.cpu_seconds(), std::time::Instant::now());
        load::run(lab, Sizes::now().calls, think, tally, progress).await;
        let cpu = lab
            .cpu_seconds()
            .zip(before)
            .map(|(after, before)| after - before);
        Load {
            wall: started.elapsed(),
            cpu,
        }
    }
}

/// Prints one load's latencies of ok calls (all, and the untouched server's), its pace and
/// where the CPU went; returns its p99.
fn print_load(title: &str, lab: &Lab, tally: &Tally, load: Load, p99_alone: Duration) -> Duration {
    let ok = |keep: &dyn Fn(usize) -> bool| -> Vec<Duration> {
        tally
            .outcomes
            .iter()
            .filter(|o| o.status.as_deref() == Ok("ok") && keep(lab.server_of[o.phone]))
            .map(|o| o.took)
            .collect()
    };
    let (all, untouched) = (ok(&|_| true), ok(&|s| s != KILLED));
    let (p50, p99) = (load::percentile(&all, 0.5), load::percentile(&all, 0.99));
    println!(
        "{title}: {} calls (ok {}) in {:.1} s, {:.0} calls a second",
        tally.outcomes.len(),
        all.len(),
        load.wall.as_secs_f64(),
        tally.outcomes.len() as f64 / load.wall.as_secs_f64().max(f64::EPSILON)
    );
    println!(
        "  ok calls: p50 {p50:?}, p99 {p99:?} ({:.2}x the p99 alone); on the untouched server's \
         phones: p50 {:?}, p99 {:?}",
        p99.as_secs_f64() / p99_alone.as_secs_f64().max(f64::EPSILON),
        load::percentile(&untouched, 0.5),
        load::percentile(&untouched, 0.99),
    );
    // When in the run its slowest calls came: a stall of the whole server (or of this
    // process, whose runtime also serves the simulated phones) shows as several at once.
    if let Some(first) = tally.outcomes.iter().map(|o| o.at).min() {
        let mut slowest: Vec<&load::Outcome> = tally.outcomes.iter().collect();
        slowest.sort_by_key(|o| std::cmp::Reverse(o.took));
        let slowest: Vec<String> = slowest
            .iter()
            .take(3)
            .map(|o| {
                format!(
                    "{:?} at {:.1} s ({})",
                    o.took,
                    (o.at - first).as_secs_f64(),
                    o.status.as_deref().unwrap_or("transport failure")
                )
            })
            .collect();
        println!("  slowest calls: {}", slowest.join(", "));
    }
    if let Some(cpu) = load.cpu {
        let core_seconds = load.wall.as_secs_f64() * cores() as f64;
        println!(
            "  CPU seconds ({core_seconds:.1} core-seconds, {:.0}% used): phonelogs-mcp {:.1} \
             ({:.2} ms a call), adb servers {:.1} (a killed one takes its time with it), this \
             process (16 clients, 4 simulated phones) {:.1}; stolen by the host {:.1}",
            (cpu.server + cpu.adb + cpu.this) * 100.0 / core_seconds.max(f64::EPSILON),
            cpu.server,
            cpu.server * 1000.0 / tally.outcomes.len().max(1) as f64,
            cpu.adb,
            cpu.this,
            cpu.steal,
        );
    }
    p99
}

/// For each adb server, its phones' failed calls, by phone and what they said.
fn failures_by_server(lab: &Lab, tally: &Tally) -> Vec<BTreeMap<(usize, String), usize>> {
    let mut failures = vec![BTreeMap::new(); lab.servers.len()];
    for outcome in tally
        .outcomes
        .iter()
        .filter(|o| o.status.as_deref() != Ok("ok"))
    {
        let what = match &outcome.status {
            Ok(status) => format!("status {status}: {}", outcome.message),
            Err(error) => format!("transport: {error}"),
        };
        *failures[lab.server_of[outcome.phone]]
            .entry((outcome.phone, what))
            .or_default() += 1;
    }
    failures
}

fn print_failures(
    lab: &Lab,
    tally: &Tally,
    failures: &[BTreeMap<(usize, String), usize>],
    offline: usize,
) {
    println!("failed calls, per adb server and phone, by what they said:");
    for (s, by_what) in failures.iter().enumerate() {
        let calls = tally
            .outcomes
            .iter()
            .filter(|o| lab.server_of[o.phone] == s)
            .count();
        let failed: usize = by_what.values().sum();
        let role = if s == KILLED {
            format!(
                "killed and restarted; phone {} set offline",
                lab.names[offline]
            )
        } else {
            "untouched".to_owned()
        };
        println!(
            "  adb server {s} at {} ({role}): {failed} failed of {calls}",
            lab.servers[s].address()
        );
        for ((phone, what), count) in by_what {
            println!("    {count:>4} × on {}: {what}", lab.names[*phone]);
        }
    }
}

/// At a third of the run adb server `KILLED` is killed and restarted; at a half a phone of
/// that same server goes offline for a second; meanwhile clients send calls and drop the
/// connection. Returns the RSS in the middle, how many calls were dropped and the phone set
/// offline.
async fn faults(lab: Arc<Lab>, progress: Arc<AtomicUsize>) -> (Option<u64>, usize, usize) {
    let calls = Sizes::now().calls;
    let at = |fraction: f64| (calls as f64 * fraction) as usize;
    while progress.load(Ordering::SeqCst) < at(0.33) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    lab.restart_adb(KILLED, Duration::from_millis(500)).await;
    while progress.load(Ordering::SeqCst) < at(0.5) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let rss_middle = lab.rss_kib();
    let offline = *lab.phones_of(KILLED).last().unwrap();
    lab.phones[offline].set_offline(true);
    let dropped = drop_mid_call(&lab).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    lab.phones[offline].set_offline(false);
    (rss_middle, dropped, offline)
}

/// Clients that send a call and close the connection before the answer.
async fn drop_mid_call(lab: &Lab) -> usize {
    let mut dropped = 0;
    for n in 0..Sizes::now().drops {
        let i = n % AGENTS;
        let mut mcp = load::session(lab, i).await;
        let body = serde_json::to_vec(&json!({
            "jsonrpc": "2.0", "id": 99, "method": "tools/call",
            "params": { "name": "phone_logs",
                        "arguments": { "app": load::app(i), "device": lab.names[i % lab.names.len()],
                                        "since": "1h" } }
        }))
        .unwrap();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMcp-Session-Id: {}\r\n\
             Mcp-Protocol-Version: {}\r\nContent-Length: {}\r\n\r\n",
            lab.server.addr,
            load::token(i),
            mcp.session.clone().unwrap_or_default(),
            http_support::PROTOCOL,
            body.len()
        );
        let mut stream = tokio::net::TcpStream::connect(lab.server.addr)
            .await
            .unwrap();
        stream.write_all(head.as_bytes()).await.unwrap();
        stream.write_all(&body).await.unwrap();
        drop(stream);
        dropped += 1;
        // The session goes on serving after its client dropped a call.
        let after = mcp.call("list_devices", json!({})).await;
        assert!(
            after.is_ok(),
            "the session died with its dropped call: {after:?}"
        );
        let _ = mcp.delete().await;
    }
    dropped
}
