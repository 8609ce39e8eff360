//! How fast secrets are masked: 16 MiB of log lines, without secrets and with them (a line in 20
//! holds a JWT, one in 50 an `Authorization: Bearer` header, one in 100 a URL with an
//! `access_token`, one in 200 a card number), through [`phonelogs_view::mask::Masker::lines`]
//! as a logs result masks them. Prints MB/s (the median of several passes) and how many secrets
//! were found.
//!
//! Run: `cargo bench -p phonelogs-view --bench masking`.

use std::time::{Duration, Instant};

use phonelogs_view::mask::masker;

const BYTES: usize = 16 * 1024 * 1024;
const PASSES: usize = 7;
/// Made for this bench, not real tokens.
const JWT: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk";

/// Ordinary lines of an app, some with words the rules look for (`token`, `key`, `session`,
/// `auth`) but no secret.
const ORDINARY: [&str; 8] = [
    "GET /v1/feed 200 in 84 ms (12.4 kB)",
    "Skipped 31 frames!  The application may be doing too much work on its main thread.",
    "onResume: CheckoutActivity{a1b2c3d u0 dev.example.shop/.CheckoutActivity}",
    "token refresh scheduled in 300 s",
    "cache hit for key user_42 after 3 ms",
    "session 7 restored with 12 items",
    "auth state changed: signed in",
    "sync: retrying in 5000 ms (attempt 3 of 5)",
];

fn lines(with_secrets: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut total = 0;
    let mut index = 0usize;
    while total < BYTES {
        let line = match index {
            i if with_secrets && i % 20 == 0 => format!("session refreshed, id_token {JWT}"),
            i if with_secrets && i % 50 == 1 => {
                format!("GET /v1/cart Authorization: Bearer 9f8e7d6c5b4a3928{i:08}")
            }
            i if with_secrets && i % 100 == 2 => {
                format!("loading https://cdn.example.com/a.png?access_token=ab{i:08}&w=200")
            }
            i if with_secrets && i % 200 == 3 => "paid with 4111 1111 1111 1111".to_owned(),
            i => format!("{} #{i}", ORDINARY[i % ORDINARY.len()]),
        };
        total += line.len() + 1;
        out.push(line);
        index += 1;
    }
    out
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn measure(name: &str, lines: &[String]) {
    let items: Vec<(u64, &str)> = lines.iter().map(|l| (7, l.as_str())).collect();
    let bytes: usize = lines.iter().map(|l| l.len() + 1).sum();
    let mut found = 0;
    let mut times = Vec::new();
    for _ in 0..PASSES {
        let start = Instant::now();
        let masked = masker().lines(&items);
        times.push(start.elapsed());
        found = masked.iter().map(|m| m.count).sum();
    }
    let time = median(times);
    println!(
        "{name}: {} lines, {:.1} MiB in {time:?} = {:.0} MB/s; {found} secrets masked",
        lines.len(),
        bytes as f64 / (1024.0 * 1024.0),
        bytes as f64 / 1e6 / time.as_secs_f64()
    );
}

fn main() {
    // The rules compile once per process; not part of what a read costs.
    let _ = masker();
    measure("16 MiB without secrets", &lines(false));
    measure("16 MiB with secrets", &lines(true));
}
