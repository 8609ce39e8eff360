//! Load over Streamable HTTP, bounded and on loopback only: 16 concurrent MCP sessions, each its
//! own agent (token) and app, 2,000 `phone_logs` calls in all, across four simulated phones
//! split two and two between two private real adb servers (`/usr/bin/adb`), the server given
//! both with `--adb-server`, every call naming its phone as `list_devices` did
//! (`server/serial`). Beside them in the same run: one session alone, for the warm call's p50
//! and p99. During the load: ONE adb server (A) killed and started again, a phone of that same
//! server disconnected for a second, clients dropping their connection mid-call. Failures are
//! counted per server and per phone: the bench asserts that no call on the untouched server's
//! (B's) phones failed, and that no result held another app's line (canaries, checked on every
//! result). The history is counted against the calls made; the server's RSS is read from /proc
//! at the start, the middle and the end.
//!
//! Run: `cargo bench -p phonelogs-mcp --bench http_load` (needs `/usr/bin/adb`; a debug build:
//! `cargo bench --profile dev -p phonelogs-mcp --bench http_load`).

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
const CALLS: usize = 2_000;
const SINGLE: usize = 200;
const DROPS: usize = 10;
/// The adb server killed and restarted during the load; the other one is never touched.
const KILLED: usize = 0;

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

    // One session alone: the warm call (after one call to look the app up).
    let single = Arc::new(Mutex::new(Tally::default()));
    let mut alone = load::session(&lab, 0).await;
    load::call(&lab, &mut alone, 0, 0, &single).await;
    single.lock().unwrap().outcomes.clear();
    for _ in 0..SINGLE {
        load::call(&lab, &mut alone, 0, 0, &single).await;
    }
    let _ = alone.delete().await;
    let single_times: Vec<Duration> = single
        .lock()
        .unwrap()
        .outcomes
        .iter()
        .map(|o| o.took)
        .collect();

    // The load, with faults beside it.
    let tally = Arc::new(Mutex::new(Tally::default()));
    let progress = Arc::new(AtomicUsize::new(0));
    let faults = tokio::spawn(faults(lab.clone(), progress.clone()));
    let (cpu_before, wall) = (lab.cpu_seconds(), std::time::Instant::now());
    load::run(&lab, CALLS, &tally, &progress).await;
    let (cpu_load, wall) = (
        lab.cpu_seconds()
            .zip(cpu_before)
            .map(|(after, before)| after - before),
        wall.elapsed(),
    );
    let (rss_middle, dropped, offline) = faults.await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss_end = lab.rss_kib();

    let tally = std::mem::take(&mut *tally.lock().unwrap());
    let ok_times: Vec<Duration> = tally
        .outcomes
        .iter()
        .filter(|o| o.status.as_deref() == Ok("ok"))
        .map(|o| o.took)
        .collect();
    let failures = failures_by_server(&lab, &tally);
    let history: usize = (0..AGENTS).map(|i| load::history_of(&lab, i)).sum();
    let answered = tally.outcomes.iter().filter(|o| o.status.is_ok()).count();

    println!(
        "sessions {AGENTS}, calls {} (ok {}), phones 4",
        tally.outcomes.len(),
        ok_times.len()
    );
    println!(
        "leaks (another app's line in a result): {}",
        tally.leaks.len()
    );
    for leak in tally.leaks.iter().take(5) {
        println!("  {leak}");
    }
    let (p50s, p99s) = (
        load::percentile(&single_times, 0.5),
        load::percentile(&single_times, 0.99),
    );
    let (p50, p99) = (
        load::percentile(&ok_times, 0.5),
        load::percentile(&ok_times, 0.99),
    );
    println!("single session, {SINGLE} warm calls: p50 {p50s:?}, p99 {p99s:?}");
    println!("16 sessions at once, ok calls: p50 {p50:?}, p99 {p99:?}");
    println!(
        "p99 under load / p99 alone = {:.2}x (goal: 3x or less)",
        p99.as_secs_f64() / p99s.as_secs_f64().max(f64::EPSILON)
    );
    print_failures(&lab, &tally, &failures, offline);
    println!("dropped mid-call by their client: {dropped}");
    println!(
        "history rows of the load's agents: {history}; calls the server answered: {answered} \
         (+{SINGLE} +1 alone, +{dropped} dropped: rows may include those)"
    );
    println!("server RSS KiB: start {rss_start:?}, middle {rss_middle:?}, end {rss_end:?}");
    if let Some(cpu) = cpu_load {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        println!(
            "CPU seconds during the load ({:.1} s on {cores} cores = {:.1} core-seconds): \
             phonelogs-mcp {:.1} ({:.2} ms a call), adb servers {:.1}, \
             this process (16 clients, 4 simulated phones) {:.1}",
            wall.as_secs_f64(),
            wall.as_secs_f64() * cores as f64,
            cpu.server,
            cpu.server * 1000.0 / tally.outcomes.len().max(1) as f64,
            cpu.adb,
            cpu.this,
        );
    }

    let approvals = load::approval_stays_in_its_session(&lab, 2, 3).await;
    for (phone, stolen, own) in &approvals {
        println!(
            "on {phone}: approval of session 2 used by session 3: {}; by session 2: {}",
            stolen["status"], own["status"]
        );
    }

    // What must hold, asserted after the figures are printed.
    assert!(tally.leaks.is_empty(), "{:?}", tally.leaks);
    for (s, by_what) in failures.iter().enumerate().filter(|(s, _)| *s != KILLED) {
        let calls = tally
            .outcomes
            .iter()
            .filter(|o| lab.server_of[o.phone] == s)
            .count();
        assert_eq!(calls, CALLS / 2, "calls on adb server {s}'s phones");
        assert!(
            by_what.is_empty(),
            "calls on untouched adb server {s}'s phones failed: {by_what:?}"
        );
    }
    // Nothing lost from the history: every answered call has its row (the lone session's
    // too); a call whose client dropped it, or whose answer never arrived, may have one.
    let (least, most) = (
        answered + SINGLE + 1,
        tally.outcomes.len() + SINGLE + 1 + dropped,
    );
    assert!(
        (least..=most).contains(&history),
        "history rows {history}, expected {least} to {most}"
    );
    for (phone, stolen, own) in &approvals {
        assert_ne!(stolen["status"], "ok", "{phone}: {stolen}");
        assert_eq!(own["status"], "ok", "{phone}: {own}");
    }
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
    let at = |fraction: f64| (CALLS as f64 * fraction) as usize;
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
    for n in 0..DROPS {
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
