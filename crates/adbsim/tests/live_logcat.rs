//! A live `logcat`: followers are woken by the model when a line is appended, honour `-T` (a
//! count or a time, then follow), `--uid`, `-m`, and end when the host closes the stream; the
//! phone counts its open logcat streams. Through the host front (no adb needed) and, for the
//! killed stream, through the real adb server. Also the boot id, a reboot and the clock.
//!
//! Waits are bounded (a few seconds) and poll what they wait for; nothing here asserts a time.

#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::{AdbServer, RunningSim, adb_path};
use phonelogs_adbsim::{HostFront, Priority, SimPhone, run_shell};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// How long any wait here may take before the test fails.
const BOUND: Duration = Duration::from_secs(10);

/// A shell v2 stream opened through the host front, read packet by packet.
struct Follower {
    stream: TcpStream,
    pending: Vec<u8>,
    stdout: String,
    exit: Option<u8>,
}

impl Follower {
    async fn open(address: std::net::SocketAddr, serial: &str, command: &str) -> Follower {
        let mut stream = TcpStream::connect(address).await.unwrap();
        for request in [
            format!("host:transport:{serial}"),
            format!("shell,v2,raw:{command}"),
        ] {
            stream
                .write_all(format!("{:04x}{request}", request.len()).as_bytes())
                .await
                .unwrap();
            let mut status = [0u8; 4];
            stream.read_exact(&mut status).await.unwrap();
            assert_eq!(&status, b"OKAY");
        }
        Follower {
            stream,
            pending: Vec::new(),
            stdout: String::new(),
            exit: None,
        }
    }

    /// Reads until `done(stdout)` holds or the stream ends; false when it ended first.
    async fn read_until(&mut self, done: impl Fn(&str) -> bool) -> bool {
        let read = async {
            while !done(&self.stdout) {
                if self.exit.is_some() {
                    return false;
                }
                let mut buffer = [0u8; 4096];
                let n = self.stream.read(&mut buffer).await.unwrap();
                if n == 0 {
                    return done(&self.stdout);
                }
                self.pending.extend_from_slice(&buffer[..n]);
                while self.pending.len() >= 5 {
                    let length = u32::from_le_bytes([
                        self.pending[1],
                        self.pending[2],
                        self.pending[3],
                        self.pending[4],
                    ]) as usize;
                    if self.pending.len() < 5 + length {
                        break;
                    }
                    let packet: Vec<u8> = self.pending.drain(..5 + length).collect();
                    match packet[0] {
                        1 => self.stdout.push_str(&String::from_utf8_lossy(&packet[5..])),
                        3 => self.exit = Some(packet[5]),
                        _ => {}
                    }
                }
            }
            true
        };
        tokio::time::timeout(BOUND, read).await.unwrap_or(false)
    }

    /// The log lines printed so far (dividers left out).
    fn lines(&self) -> Vec<&str> {
        self.stdout
            .lines()
            .filter(|line| !line.starts_with("--------- "))
            .collect()
    }
}

/// Polls `what` until it holds, for at most [`BOUND`].
async fn eventually(what: impl Fn() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + BOUND;
    while tokio::time::Instant::now() < deadline {
        if what() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    what()
}

async fn front(phone: &SimPhone) -> (std::net::SocketAddr, phonelogs_adbsim::SimHandle) {
    HostFront::bind(None, phone.clone()).await.unwrap()
}

fn crashtest_pid(phone: &SimPhone) -> u32 {
    phone.pid_of("dev.phonelogs.crashtest").unwrap()
}

#[tokio::test]
async fn a_line_written_while_following_reaches_the_follower_and_closing_ends_it() {
    let phone = SimPhone::default_phone();
    let (address, _handle) = front(&phone).await;
    let serial = phone.profile().serial;
    assert_eq!(phone.open_logcat_streams(), 0);
    let mut follower = Follower::open(address, &serial, "logcat -v threadtime -T 1").await;
    assert!(eventually(|| phone.open_logcat_streams() == 1).await);
    // The tail's one line arrives first, then the new one.
    assert!(follower.read_until(|out| out.lines().count() >= 2).await);
    let time = phone
        .log_pid(
            crashtest_pid(&phone),
            Priority::Warn,
            "CrashTest",
            "live line 1",
        )
        .unwrap();
    assert!(time > 0);
    assert!(
        follower
            .read_until(|out| out.contains("W CrashTest: live line 1\n"))
            .await,
        "{}",
        follower.stdout
    );
    // The client closes its socket: the follower ends and is no longer counted.
    drop(follower);
    assert!(
        eventually(|| phone.open_logcat_streams() == 0).await,
        "still open: {}",
        phone.open_logcat_streams()
    );
}

#[tokio::test]
async fn t_with_a_time_prints_only_later_lines_then_new_ones() {
    let phone = SimPhone::default_phone();
    phone.set_noise_rate(0.0);
    let (address, _handle) = front(&phone).await;
    let serial = phone.profile().serial;
    let pid = crashtest_pid(&phone);
    phone
        .log_pid(pid, Priority::Info, "CrashTest", "before the mark")
        .unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    // The mark in the phone's local time, `MM-DD hh:mm:ss.mmm`, as logcat's `-T` takes it.
    let date = run_shell(&phone, "date '+%m-%d %H:%M:%S.%N'").await;
    let date = String::from_utf8(date.stdout).unwrap();
    let mark = &date.trim_end()[..18];
    tokio::time::sleep(Duration::from_millis(20)).await;
    let mut after = phone
        .log_pid(pid, Priority::Info, "CrashTest", "after the mark")
        .unwrap();
    for since in [format!("'{mark}'"), String::new()] {
        let since = if since.is_empty() {
            // The same through the epoch form, `sssss.mmm`: the second mark is the time of the
            // last "after the mark" line, cut to the millisecond.
            format!(
                "{}.{:03}",
                after / 1_000_000_000,
                (after / 1_000_000) % 1000
            )
        } else {
            since
        };
        let command = format!("logcat -v threadtime -b main -T {since} CrashTest:V '*:S'");
        let mut follower = Follower::open(address, &serial, &command).await;
        assert!(
            follower
                .read_until(|out| out.contains("after the mark"))
                .await
        );
        phone
            .log_pid(pid, Priority::Info, "CrashTest", "new while following")
            .unwrap();
        assert!(
            follower
                .read_until(|out| out.contains("new while following"))
                .await
        );
        assert!(
            !follower.stdout.contains("before the mark"),
            "{}",
            follower.stdout
        );
        assert_eq!(follower.lines().len(), 2, "{}", follower.stdout);
        assert_eq!(follower.exit, None, "a -T follower does not exit");
        // Lines before the next round's mark, which it must leave out.
        phone
            .log_pid(pid, Priority::Info, "CrashTest", "between rounds")
            .unwrap();
        drop(follower);
        assert!(eventually(|| phone.open_logcat_streams() == 0).await);
        tokio::time::sleep(Duration::from_millis(20)).await;
        after = phone
            .log_pid(pid, Priority::Info, "CrashTest", "after the mark")
            .unwrap();
    }
}

#[tokio::test]
async fn uid_filters_the_new_lines_too() {
    let phone = SimPhone::default_phone();
    let (address, _handle) = front(&phone).await;
    let serial = phone.profile().serial;
    let uid = phone.uid_of("dev.phonelogs.crashtest", 0).unwrap();
    let other = phone.pid_of("com.spotify.music").unwrap();
    let command = format!("logcat -v uid --uid={uid} -T 1");
    let mut follower = Follower::open(address, &serial, &command).await;
    assert!(
        follower
            .read_until(|out| !out.lines().next().unwrap_or("").is_empty())
            .await
    );
    phone
        .log_pid(other, Priority::Error, "Spotify", "another app's secret")
        .unwrap();
    phone
        .log_pid(
            crashtest_pid(&phone),
            Priority::Error,
            "CrashTest",
            "the app's own",
        )
        .unwrap();
    assert!(
        follower
            .read_until(|out| out.contains("the app's own"))
            .await
    );
    assert!(!follower.stdout.contains("secret"), "{}", follower.stdout);
    for line in follower.lines() {
        assert!(
            line.contains(&format!(" {uid:>5} ")) || line.contains(&uid.to_string()),
            "{line}"
        );
    }
}

#[tokio::test]
async fn m_ends_a_follower_after_that_many_lines_and_t_dumps() {
    let phone = SimPhone::default_phone();
    phone.set_noise_rate(0.0);
    let (address, _handle) = front(&phone).await;
    let serial = phone.profile().serial;
    let pid = crashtest_pid(&phone);
    let mut follower = Follower::open(address, &serial, "logcat -T 1 -m 3 CrashTest:V '*:S'").await;
    assert!(follower.read_until(|out| out.lines().count() >= 2).await);
    for index in 0..4 {
        phone
            .log_pid(
                pid,
                Priority::Info,
                "CrashTest",
                &format!("counted {index}"),
            )
            .unwrap();
    }
    // The stream ends by itself, with exit status 0, after three lines.
    follower.read_until(|_| false).await;
    assert_eq!(follower.exit, Some(0), "{}", follower.stdout);
    assert_eq!(follower.lines().len(), 3, "{}", follower.stdout);
    assert!(follower.stdout.contains("counted 1") && !follower.stdout.contains("counted 2"));
    assert!(eventually(|| phone.open_logcat_streams() == 0).await);
    // `-t` implies `-d`: it dumps and exits.
    let out = run_shell(&phone, "logcat -t 2 CrashTest:V '*:S'").await;
    assert_eq!(out.exit_code, 0);
    assert_eq!(phone.open_logcat_streams(), 0);
}

#[test]
fn a_killed_adb_shell_logcat_leaves_no_stream_open() {
    use std::io::{BufRead, BufReader};
    let Some(adb) = adb_path("a_killed_adb_shell_logcat_leaves_no_stream_open") else {
        return;
    };
    let server = AdbServer::start(adb);
    let phone = SimPhone::default_phone();
    let sim = RunningSim::start(phone.clone());
    server.connect(&sim.serial);
    let mut child = server
        .command()
        .args(["-s", &sim.serial, "shell", "logcat -v threadtime"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let poll = |what: &dyn Fn() -> bool| {
        let deadline = std::time::Instant::now() + BOUND;
        while std::time::Instant::now() < deadline && !what() {
            std::thread::sleep(Duration::from_millis(10));
        }
        what()
    };
    assert!(poll(&|| phone.open_logcat_streams() == 1));
    let pid = crashtest_pid(&phone);
    phone
        .log_pid(pid, Priority::Warn, "CrashTest", "through the real server")
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let seen = lines.by_ref().take(5_000).any(|line| {
        line.unwrap()
            .ends_with("W CrashTest: through the real server")
    });
    assert!(seen);
    child.kill().unwrap();
    let _ = child.wait();
    assert!(
        poll(&|| phone.open_logcat_streams() == 0),
        "still open: {}",
        phone.open_logcat_streams()
    );
    assert_eq!(server.shell(&sim.serial, "echo after").0, "after\n");
}

#[tokio::test]
async fn boot_id_reboot_and_clock() {
    let phone = SimPhone::default_phone();
    let out = run_shell(&phone, "cat /proc/sys/kernel/random/boot_id").await;
    assert_eq!(out.exit_code, 0);
    let text = String::from_utf8(out.stdout).unwrap();
    let id = text.strip_suffix('\n').unwrap();
    assert!(!id.contains('\n'));
    let groups: Vec<&str> = id.split('-').collect();
    assert_eq!(
        groups.iter().map(|g| g.len()).collect::<Vec<_>>(),
        vec![8, 4, 4, 4, 12],
        "{id}"
    );
    assert!(
        id.chars()
            .all(|c| c == '-' || c.is_ascii_digit() || ('a'..='f').contains(&c))
    );
    assert!(groups[2].starts_with('4'), "version 4: {id}");
    assert_eq!(id, phone.boot_id());

    let crashtest = crashtest_pid(&phone);
    let system_server = phone
        .processes()
        .iter()
        .find(|process| process.name == "system_server")
        .map(|process| process.pid)
        .unwrap();
    let before = phone.now_ns();
    phone.reboot();
    assert_ne!(phone.boot_id(), id);
    let again = run_shell(&phone, "cat /proc/sys/kernel/random/boot_id; date +%s").await;
    let again = String::from_utf8(again.stdout).unwrap();
    assert!(
        again.starts_with(&format!("{}\n", phone.boot_id())),
        "{again}"
    );
    assert_eq!(phone.pid_of("dev.phonelogs.crashtest"), None);
    let processes = phone.processes();
    assert!(processes.iter().all(|process| process.pid != crashtest));
    assert!(processes.iter().any(|process| process.pid == 1));
    let new_system = processes
        .iter()
        .find(|process| process.name == "system_server")
        .map(|process| process.pid)
        .unwrap();
    assert_ne!(new_system, system_server);
    let dump = run_shell(&phone, "logcat -d -b all").await;
    assert!(!String::from_utf8_lossy(&dump.stdout).contains("Crash Test ready"));
    assert!(phone.now_ns() >= before, "the clock goes on");

    // The clock set back an hour: `date` and new lines follow it.
    let host_now = phone.now_ns() - phone.clock_offset_ns();
    phone.set_clock_offset_ns(-3_600_000_000_000);
    assert_eq!(phone.clock_offset_ns(), -3_600_000_000_000);
    let seconds = run_shell(&phone, "date +%s").await;
    let seconds: i128 = String::from_utf8(seconds.stdout)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let expected = (host_now - 3_600_000_000_000) / 1_000_000_000;
    assert!((seconds - expected).abs() <= 5, "{seconds} vs {expected}");
    phone.launch("dev.phonelogs.crashtest").unwrap();
    let pid = crashtest_pid(&phone);
    let time = phone
        .log_pid(pid, Priority::Info, "CrashTest", "an hour ago")
        .unwrap();
    assert!(time < host_now - 3_000_000_000_000);
    assert!(
        phone
            .log_pid(99_999, Priority::Info, "X", "no such pid")
            .is_err()
    );
}
