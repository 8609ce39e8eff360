//! The phone's own life while it is served: other processes log all the time and another app
//! crashes now and then, so a client sees a busy phone, not a quiet stage. It only calls the
//! model's actions.

use std::time::Duration;

use crate::model::{CrashKind, Level, SimPhone};

/// How busy the phone is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Background {
    /// Entries per second from other processes (0: none).
    pub entries_per_second: u32,
    /// How often the helper app (`CrashTestHelper`, a look-alike name) launches and crashes.
    pub crash_every: Option<Duration>,
}

impl Default for Background {
    fn default() -> Self {
        Background {
            entries_per_second: 20,
            crash_every: Some(Duration::from_secs(45)),
        }
    }
}

/// A background line: process name, level, subsystem and category, message.
type Line = (
    &'static str,
    Level,
    Option<(&'static str, &'static str)>,
    &'static str,
);

const LINES: [Line; 6] = [
    (
        "SpringBoard",
        Level::Default,
        Some(("com.apple.SpringBoard", "Icon")),
        "Icon model updated",
    ),
    (
        "Spotify",
        Level::Info,
        Some(("com.spotify.client", "playback")),
        "Buffered 30 s of track spotify:track:4uLU6hMCjMI75M1A2tKUQC",
    ),
    (
        "Spotify",
        Level::Error,
        Some(("com.spotify.client", "network")),
        "Request to spclient.wg.spotify.com failed: -1001",
    ),
    (
        "Example",
        Level::Default,
        Some(("com.example.appx", "General")),
        "Example.appx heartbeat",
    ),
    (
        "backboardd",
        Level::Debug,
        Some(("com.apple.backboard", "HID")),
        "HID event dispatched",
    ),
    (
        "WebDriverAgentRunner-Runner",
        Level::Default,
        None,
        "ServerURLHere->http://127.0.0.1:8100<-ServerURLHere",
    ),
];

/// Runs the background until the task is dropped.
pub async fn run(phone: SimPhone, background: Background) {
    let tick = Duration::from_millis(100);
    let per_tick = background.entries_per_second.div_ceil(10) as usize;
    let mut ticks: u64 = 0;
    let crash_ticks = background
        .crash_every
        .map(|d| (d.as_millis() / tick.as_millis()).max(1) as u64);
    let mut interval = tokio::time::interval(tick);
    loop {
        interval.tick().await;
        ticks += 1;
        if background.entries_per_second > 0 {
            let processes = phone.processes();
            for i in 0..per_tick {
                let (name, level, label, message) = LINES[(ticks as usize + i) % LINES.len()];
                if let Some(p) = processes.iter().find(|p| p.name() == name) {
                    phone.log(p.pid, level, label, message);
                }
            }
        }
        if let Some(every) = crash_ticks
            && ticks.is_multiple_of(every)
            && let Some(pid) = phone.launch("dev.phonelogs.crashtesthelper")
        {
            phone.log(
                pid,
                Level::Error,
                Some(("dev.phonelogs.crashtesthelper", "General")),
                "Helper about to crash",
            );
            phone.crash(pid, CrashKind::Exception("helper failed".into()));
        }
    }
}
