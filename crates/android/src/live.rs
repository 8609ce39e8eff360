//! The streaming read: one following `logcat` (no `-d`) for one app's uid, from a time on
//! (`-T '<epoch seconds>'`), read from an adb shell stream by one task that parses every line,
//! checks its uid, and hands it on; dropping the [`LogcatStream`] ends the task, which closes
//! the shell stream, and adbd ends the `logcat` on the phone. And the phone's own facts a read
//! carries in the same round trip ([`PhoneMark`]): its boot id, its clock, the oldest line
//! its main buffer still holds.

use std::time::Duration;

use async_trait::async_trait;
use phonelogs_driver::{LineStream, LogLevel, LogLine, LogQuery, PhoneMark};
use time::OffsetDateTime;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::mpsc;

use crate::logs::Section;
use crate::quote::quote;

/// The longest a stream stays open, whoever holds it: no wait is longer than a minute, so a
/// stream that outlives this was forgotten, and it ends rather than run on.
pub(crate) const MAX_FOLLOW: Duration = Duration::from_secs(75);

/// The longest line kept whole while reading a stream; a longer one is cut (logcat's own
/// entries are at most a few KB).
const MAX_LINE: usize = 64 * 1024;

/// The shell commands that read the phone's facts, in this order, for [`mark_of`]: the boot
/// id, the clock in epoch seconds, and the main buffer's oldest line (`-m 1`: the first line
/// printed, the oldest there is).
pub(crate) const MARK_COMMANDS: [&str; 3] = [
    "cat /proc/sys/kernel/random/boot_id",
    "date +%s",
    "logcat -d -b main -v epoch -m 1",
];

/// The phone's facts from the [`MARK_COMMANDS`] sections; what could not be read is `None`.
pub(crate) fn mark_of(boot: &Section<'_>, clock: &Section<'_>, oldest: &Section<'_>) -> PhoneMark {
    let ok = |section: &Section<'_>| {
        (section.exit_code == Some(0)).then(|| String::from_utf8_lossy(section.output).into_owned())
    };
    let boot_id = ok(boot).map(|text| text.trim().to_owned()).filter(|id| {
        !id.is_empty() && id.len() <= 64 && id.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
    });
    let phone_now = ok(clock)
        .and_then(|text| text.trim().parse::<i64>().ok())
        .and_then(|seconds| OffsetDateTime::from_unix_timestamp(seconds).ok());
    let oldest_kept = ok(oldest).and_then(|text| text.lines().find_map(epoch_of_line));
    PhoneMark {
        boot_id,
        phone_now,
        oldest_kept,
    }
}

/// The time of a `-v epoch` line (`1764496801.250  4242  4242 I Tag: text`), if it is one.
fn epoch_of_line(line: &str) -> Option<OffsetDateTime> {
    let first = line.split_whitespace().next()?;
    let (seconds, fraction) = first.split_once('.')?;
    if fraction.is_empty() || fraction.len() > 9 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let seconds: i64 = seconds.parse().ok()?;
    let nanos: i64 = format!("{fraction:0<9}").parse().ok()?;
    let at = OffsetDateTime::from_unix_timestamp(seconds).ok()?;
    Some(at + time::Duration::nanoseconds(nanos))
}

/// The following logcat of one app: `logcat -b main,system,crash -v epoch -v uid --uid=<uid>
/// -T '<since>' '*:<level>'`, as [`crate::logs::logcat_command`] dumps but without `-d`, and
/// with `-T` (print from that time on, then follow) for `-t`.
pub(crate) fn follow_command(uid: u32, query: &LogQuery, uid_option: bool) -> String {
    let mut words: Vec<String> = [
        "logcat",
        "-b",
        "main,system,crash",
        "-v",
        "epoch",
        "-v",
        "uid",
    ]
    .iter()
    .map(|w| (*w).to_owned())
    .collect();
    if uid_option {
        words.push(format!("--uid={uid}"));
    }
    let since = query.since.unix_timestamp_nanos().max(0);
    let (seconds, millis) = (since / 1_000_000_000, (since % 1_000_000_000) / 1_000_000);
    words.push("-T".into());
    words.push(format!("{seconds}.{millis:03}"));
    let level = query.level.unwrap_or(LogLevel::Verbose).android_char();
    words.push(format!("*:{level}"));
    words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
}

/// An open following `logcat`. Dropping it ends its reader task and closes the stream.
pub(crate) struct LogcatStream {
    lines: mpsc::Receiver<phonelogs_driver::Result<LogLine>>,
    reader: tokio::task::JoinHandle<()>,
}

impl LogcatStream {
    /// Starts reading `stream` (shell v2 packets when `v2`, else raw bytes) for the lines of
    /// `uid` that `query` wants.
    pub(crate) fn start<S>(stream: S, v2: bool, uid: u32, query: LogQuery) -> LogcatStream
    where
        S: AsyncRead + Unpin + Send + 'static,
    {
        let (sender, lines) = mpsc::channel(1024);
        let reader = tokio::spawn(async move {
            let read = read_lines(stream, v2, uid, &query, &sender);
            tokio::select! {
                result = tokio::time::timeout(MAX_FOLLOW, read) => {
                    if let Ok(Err(error)) = result {
                        let _ = sender.send(Err(error)).await;
                    }
                }
                // Whoever held the stream is gone: stop reading, which closes it.
                _ = sender.closed() => {}
            }
        });
        LogcatStream { lines, reader }
    }
}

impl Drop for LogcatStream {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

#[async_trait]
impl LineStream for LogcatStream {
    async fn next_line(&mut self) -> Option<phonelogs_driver::Result<LogLine>> {
        self.lines.recv().await
    }
}

/// Reads the stream to its end, sending the app's lines on. Shell v2: `u8 id + u32 LE length +
/// bytes` (at most [`crate::client::MAX_SHELL_PACKET`]), stdout is id 1, the exit is id 3.
async fn read_lines<S>(
    mut stream: S,
    v2: bool,
    uid: u32,
    query: &LogQuery,
    sender: &mpsc::Sender<phonelogs_driver::Result<LogLine>>,
) -> phonelogs_driver::Result<()>
where
    S: AsyncRead + Unpin,
{
    let mut pending: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let bytes: &[u8] = if v2 {
            let mut header = [0u8; 5];
            if stream.read_exact(&mut header).await.is_err() {
                return Ok(());
            }
            // The dump reader's cap, so no length from the wire allocates more than adb sends.
            let (id, length) = crate::client::shell_packet(header)?;
            if length > chunk.len() {
                chunk.resize(length, 0);
            }
            stream.read_exact(&mut chunk[..length]).await.map_err(|e| {
                phonelogs_driver::Error::Disconnected(format!("reading logcat: {e}"))
            })?;
            match id {
                1 => &chunk[..length],
                3 => return Ok(()),
                _ => continue,
            }
        } else {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return Ok(()),
                Ok(read) => &chunk[..read],
            }
        };
        pending.extend_from_slice(bytes);
        while let Some(end) = pending.iter().position(|b| *b == b'\n') {
            let raw: Vec<u8> = pending.drain(..=end).collect();
            let text = crate::logs::line_text(&raw);
            let Some(line) = crate::logs::to_log_line(text.trim_end_matches(['\r', '\n']), &[uid])
            else {
                continue;
            };
            if query.matches(&line) && sender.send(Ok(line)).await.is_err() {
                return Ok(());
            }
        }
        if pending.len() > MAX_LINE {
            pending.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;
    use tokio::io::AsyncWriteExt;

    #[test]
    fn the_follow_command_is_the_dumps_without_d_and_with_t_upper() {
        let query = LogQuery::since(datetime!(2025-11-30 10:00:01.25 UTC), 200);
        assert_eq!(
            follow_command(10123, &query, true),
            "logcat -b main,system,crash -v epoch -v uid --uid=10123 -T 1764496801.250 '*:V'"
        );
        assert!(!follow_command(10123, &query, false).contains("--uid"));
    }

    fn section(output: &[u8], code: i32) -> Section<'_> {
        Section {
            output,
            exit_code: Some(code),
        }
    }

    #[test]
    fn marks_read_what_they_can_and_never_panic() {
        let mark = mark_of(
            &section(b"6f1c1a5e-2b7d-4a47-9a0e-2f0c3d4e5f60\n", 0),
            &section(b"1764496801\n", 0),
            &section(
                b"--------- beginning of main\n1764496700.125  1000  1000 I Zygote: start\n",
                0,
            ),
        );
        assert_eq!(
            mark.boot_id.as_deref(),
            Some("6f1c1a5e-2b7d-4a47-9a0e-2f0c3d4e5f60")
        );
        assert_eq!(mark.phone_now, Some(datetime!(2025-11-30 10:00:01 UTC)));
        assert_eq!(
            mark.oldest_kept,
            Some(datetime!(2025-11-30 09:58:20.125 UTC))
        );
        let none = mark_of(
            &section(b"cat: no such file\n", 1),
            &section(b"x", 0),
            &section(b"", 0),
        );
        assert_eq!(
            none,
            PhoneMark {
                boot_id: None,
                phone_now: None,
                oldest_kept: None
            }
        );
        for junk in [
            "",
            ".",
            "1.",
            "x.5",
            "99999999999999999999.1",
            "1.1234567890",
        ] {
            assert_eq!(epoch_of_line(junk), None, "{junk}");
        }
    }

    /// Item 6 of issue 28: a shell v2 length of 4 GiB from a broken adbd or a hostile farm
    /// server is refused with a clear error before anything is allocated for it, as the dump
    /// reader refuses it; the phone's side stays open, so only the check can end the read.
    #[tokio::test]
    async fn a_packet_longer_than_adb_ever_sends_ends_the_stream_with_an_error() {
        let (mut phone, computer) = tokio::io::duplex(1 << 16);
        let query = LogQuery::since(datetime!(2025-11-30 10:00 UTC), 200);
        let mut stream = LogcatStream::start(computer, true, 10123, query);
        phone.write_all(&[1, 0xFF, 0xFF, 0xFF, 0xFF]).await.unwrap();
        let got = tokio::time::timeout(Duration::from_secs(10), stream.next_line())
            .await
            .expect("the reader waited for 4 GiB instead of refusing the length");
        let error = got.expect("an error, not the end").unwrap_err();
        assert_eq!(
            error.kind(),
            phonelogs_driver::ErrorKind::Backend,
            "{error}"
        );
        assert!(
            error.to_string().contains("4294967295 bytes"),
            "the error names the length: {error}"
        );
        drop(phone);
    }

    #[tokio::test]
    async fn a_stream_passes_on_only_the_apps_lines_and_stops_when_dropped() {
        let (mut phone, computer) = tokio::io::duplex(1 << 16);
        let query = LogQuery::since(datetime!(2025-11-30 10:00 UTC), 200);
        let mut stream = LogcatStream::start(computer, false, 10123, query);
        phone
            .write_all(
                b"--------- beginning of main\n\
                  1764496801.250 10456  4300  4300 I Other: not ours\n\
                  1764496801.251 10123  4242  4242 I CrashTest: ours\n",
            )
            .await
            .unwrap();
        let line = stream.next_line().await.unwrap().unwrap();
        assert_eq!(
            (line.tag.as_str(), line.text.as_str()),
            ("CrashTest", "ours")
        );
        drop(stream);
        // The reader let go of its end: the phone's side sees the stream closed.
        let closed = tokio::time::timeout(Duration::from_secs(2), async {
            while phone.write_all(b"x").await.is_ok() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await;
        assert!(closed.is_ok(), "the stream stayed open after the drop");
    }
}
