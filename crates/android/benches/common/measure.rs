//! What every bench that measures rounds beside bare adb shares (the Android benches, and
//! phonelogs-mcp's, which include this file): how many rounds to run, and how loaded the machine
//! was while they ran.

/// How many rounds to measure: `full` under `cargo bench` (which passes `--bench`), one under
/// `cargo test --benches` (CI's quick mode, as criterion does), where a bench only shows that
/// it still builds and runs and no figure is judged.
pub fn rounds(full: usize) -> usize {
    if quick() { 1 } else { full }
}

/// Whether this is CI's quick mode: run without `--bench` (`cargo test --benches`), or with
/// `--test`, as criterion decides it.
pub fn quick() -> bool {
    let given = |flag: &str| std::env::args().any(|arg| arg == flag);
    !given("--bench") || given("--test")
}

/// The machine's CPU time so far (`/proc/stat`'s first line, in seconds summed over its cores):
/// busy (user, nice, system, irq, softirq) and stolen by the host (this virtual machine's cores
/// waiting for it). Read before and after the rounds, it says how loaded the machine was while
/// they ran: figures taken with the cores busy elsewhere, or much stolen, measure the machine.
#[derive(Debug, Clone, Copy)]
pub struct HostCpu {
    busy: f64,
    stolen: f64,
    at: std::time::Instant,
}

impl HostCpu {
    /// Now, or `None` where `/proc/stat` cannot be read.
    pub fn now() -> Option<HostCpu> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let ticks: Vec<u64> = stat
            .lines()
            .next()?
            .split_whitespace()
            .skip(1)
            .map(|field| field.parse().unwrap_or(0))
            .collect();
        let tick = |index: usize| ticks.get(index).copied().unwrap_or(0) as f64 / 100.0;
        Some(HostCpu {
            busy: tick(0) + tick(1) + tick(2) + tick(5) + tick(6),
            stolen: tick(7),
            at: std::time::Instant::now(),
        })
    }

    /// A line on how loaded the machine was since `start`: its cores' use (this bench's own
    /// processes included), the time the host took, and the load average; in the quick mode,
    /// first that the figures judge nothing.
    pub fn since(start: Option<HostCpu>) -> String {
        let line = HostCpu::load_since(start);
        if quick() {
            format!("quick mode (one round, a debug build maybe): no figure here is judged; {line}")
        } else {
            line
        }
    }

    fn load_since(start: Option<HostCpu>) -> String {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let (Some(start), Some(now)) = (start, HostCpu::now()) else {
            return "the machine's load: unknown (no /proc/stat)".to_owned();
        };
        let wall = (now.at - start.at).as_secs_f64().max(f64::EPSILON);
        let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        let load: Vec<&str> = load.split_whitespace().take(3).collect();
        format!(
            "the machine during the rounds: {cores} cores {:.0}% busy (this bench and its adb \
             server included), stolen by the host {:.2} core-seconds of {:.1} s; load average {}",
            (now.busy - start.busy) * 100.0 / (wall * cores as f64),
            now.stolen - start.stolen,
            wall,
            load.join(" ")
        )
    }
}
