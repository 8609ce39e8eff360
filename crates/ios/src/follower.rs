//! The follower: listens to one app's processes on one phone, by pid, and keeps their lines.
//!
//! An iPhone keeps no log history a computer can read back (short of an archive of the whole
//! system), so the first `app_logs` call for an app starts a follower. Every second (every
//! 150 ms for 3 s after a launch it is told about) it lists the phone's processes and opens an
//! os_trace stream for each process whose executable lies inside the app's bundle: the app and
//! its extensions. A stream stays open 3 s after its process is gone, for the last lines. At
//! most 20,000 lines are kept (and at most a few MiB of text); older ones go. When no process
//! matches, the bundle path is looked up again, at most every 5 s, because a reinstall moves it.
//! A stream is only ever opened for one pid: never for the whole system. A launch the driver is
//! told about reads the process list at once, and its pid gets a stream only if the list shows
//! its executable in the bundle. A message with line breaks becomes one line per break, each
//! with the message's time, level, tag and pid.
//!
//! The process list comes from the best source the phone offers ([`crate::sources`]). When it
//! names processes only (os_trace_relay's `PidList`, every iOS version without the developer
//! disk image), a process is a candidate when its name is the app's executable's
//! (`CFBundleExecutable`); since two apps may share it (every Flutter app is `Runner`), every
//! entry of every stream is passed on only when its executable's path (the entry's `filename`)
//! lies inside the app's bundle, by the same component rule, and a stream whose entry shows
//! another path is closed at once with nothing of it passed on, and its pid is not opened again.
//! A stream that stays silent for 5 s while its process runs is opened again the other way
//! (the RemoteXPC shim: a lockdown stream that opens and sends nothing was reported on iOS 27
//! betas).
//!
//! What the agent must know with the lines is told as notices ([`notices`]): the processes
//! could not be listed (and why, and the fix), the app's extensions cannot be found with names
//! only, the app is not running, the phone hides values as `<private>`.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use phonelogs_crash::ostrace::{OsLogLevel, OsTraceEntry};
use phonelogs_driver::{AppId, LogLevel, LogLine, LogNotice, LogQuery, LogResult, ProcessSpan};
use time::OffsetDateTime;
use tokio::sync::mpsc;
use tokio::task::{AbortHandle, JoinSet};
use tokio::time::{Instant, sleep_until, timeout};

use crate::crashes::report_name;
use crate::services::{
    AppRecord, DeviceServices, LogStream, ProcessEntry, ProcessImage, list_within,
};
use crate::sources::{
    ListingFailed, ProcessList, ProcessSource, RECONNECT, SourceMiss, causes, fixes,
};

/// The follower's timings and limits. [`FollowerConfig::default`] is the spec's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowerConfig {
    /// How often the process list is read: 1 s.
    pub poll: Duration,
    /// How often it is read right after a launch: 150 ms.
    pub fast_poll: Duration,
    /// For how long after a launch the fast interval holds: 3 s.
    pub fast_for: Duration,
    /// How long a stream stays open after its process is gone: 3 s.
    pub linger: Duration,
    /// How many lines are kept at most: 20,000.
    pub max_lines: usize,
    /// How many bytes of tag and text are kept at most, so a flood of long lines cannot hold
    /// more memory than the line cap intends: 6 MiB.
    pub max_text_bytes: usize,
    /// How long one line's text may be when kept; longer ones are cut (the gateway cuts again
    /// at 2,000 bytes, with its own marker): 4 KiB.
    pub max_line_bytes: usize,
    /// The least time between two look-ups of the bundle path: 5 s.
    pub relookup_every: Duration,
    /// How long one device call may take before it is given up: 10 s.
    pub call_timeout: Duration,
    /// How long a stream may stay silent while its process runs before it is opened again the
    /// other way ([`crate::services::StreamOpener::open_other`]): 5 s.
    pub silent_after: Duration,
}

impl Default for FollowerConfig {
    fn default() -> Self {
        FollowerConfig {
            poll: Duration::from_secs(1),
            fast_poll: Duration::from_millis(150),
            fast_for: Duration::from_secs(3),
            linger: Duration::from_secs(3),
            max_lines: 20_000,
            max_text_bytes: 6 * 1024 * 1024,
            max_line_bytes: 4 * 1024,
            relookup_every: Duration::from_secs(5),
            call_timeout: Duration::from_secs(10),
            silent_after: Duration::from_secs(5),
        }
    }
}

/// The most processes a follower remembers for process markers.
const MAX_SPANS: usize = 256;

/// The lines a follower keeps, oldest first.
#[derive(Debug)]
struct Ring {
    lines: VecDeque<LogLine>,
    text_bytes: usize,
    dropped: u64,
    max_lines: usize,
    max_text_bytes: usize,
}

impl Ring {
    fn new(max_lines: usize, max_text_bytes: usize) -> Self {
        Ring {
            lines: VecDeque::new(),
            text_bytes: 0,
            dropped: 0,
            max_lines: max_lines.max(1),
            max_text_bytes,
        }
    }

    fn push(&mut self, line: LogLine) {
        self.text_bytes += line.tag.len() + line.text.len();
        self.lines.push_back(line);
        while self.lines.len() > self.max_lines
            || (self.text_bytes > self.max_text_bytes && self.lines.len() > 1)
        {
            if let Some(old) = self.lines.pop_front() {
                self.text_bytes -= old.tag.len() + old.text.len();
                self.dropped += 1;
            }
        }
    }

    fn query(&self, query: &LogQuery) -> LogResult {
        let mut matching: Vec<&LogLine> = self.lines.iter().filter(|l| query.matches(l)).collect();
        // Streams of different processes interleave, so lines are ordered by the phone's clock
        // (stably, keeping arrival order for equal times) before the newest are chosen.
        matching.sort_by_key(|l| l.time);
        let omitted = matching.len().saturating_sub(query.count);
        let lines = matching[omitted..].iter().map(|l| (*l).clone()).collect();
        LogResult {
            lines,
            omitted,
            mark: None,
            processes: Vec::new(),
            notices: Vec::new(),
        }
    }

    fn approx_bytes(&self) -> usize {
        self.lines.capacity() * std::mem::size_of::<LogLine>()
            + self
                .lines
                .iter()
                .map(|l| l.tag.capacity() + l.text.capacity())
                .sum::<usize>()
    }
}

/// What a follower is doing, for tests and diagnostics.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FollowerStatus {
    /// The pids whose streams are open now, sorted.
    pub open_streams: Vec<u32>,
    /// Every pid a stream was opened for, in order (a pid appears again when reopened).
    pub opened: Vec<u32>,
    /// The bundle path the follower matches executables against.
    pub bundle_path: String,
    /// How many times the process list was read.
    pub polls: u64,
    /// How many times the bundle path was looked up again.
    pub relookups: u64,
    /// How many lines were dropped because the follower was full.
    pub dropped: u64,
    /// How many lines are kept.
    pub kept: usize,
    /// The last error a device call gave, when there was one.
    pub last_error: Option<String>,
    /// The process source that answered the last listing.
    pub source: Option<ProcessSource>,
    /// The better sources the last listing that answered passed over, and why.
    pub passed_over: Vec<SourceMiss>,
    /// Why the last listing failed, when it did.
    pub listing_failed: Option<ListingFailed>,
    /// Whether the last listing showed a process of the app (`None` before the first).
    pub app_running: Option<bool>,
    /// Why the stream of one of the app's processes could not be opened, until one opens.
    pub stream_error: Option<String>,
    /// The pids whose stream showed an executable outside the app's bundle: closed with
    /// nothing passed on, and not opened again while they run.
    pub rejected: Vec<u32>,
}

#[derive(Debug)]
struct Shared {
    ring: Mutex<Ring>,
    /// The processes streams were opened for (their executable's name) and whether each ended
    /// with its process, newest last, at most [`MAX_SPANS`]: for the result's process markers.
    processes: Mutex<Vec<ProcessSpan>>,
    status: Mutex<FollowerStatus>,
    /// Woken whenever lines arrive, for [`Follower::follow`]'s waits.
    added: tokio::sync::Notify,
    /// `true` once the first listing of the phone's processes is over.
    listed: tokio::sync::watch::Sender<bool>,
    /// Per pid, the newest entry passed on: a stream opened again for that pid skips what it
    /// sends again of it.
    delivered: Mutex<HashMap<u32, Delivered>>,
    /// How many records the app's streams skipped because Apple's client would refuse them:
    /// a read says so, since lines may be missing ([`refused_records`]).
    refused: Arc<AtomicU64>,
}

/// How many pids' marks [`Shared::delivered`] keeps before it forgets them all (a phone runs a
/// few hundred processes; only the app's are marked).
const MAX_MARKED_PIDS: usize = 4096;
/// How many entries of one instant a mark tells apart.
const MAX_SAME_INSTANT: usize = 64;

/// The newest entry passed on for one pid: its time and the fingerprints of the entries of
/// that very instant.
#[derive(Debug, Clone, Default)]
struct Delivered {
    at: (u64, u32),
    same_instant: Vec<u64>,
}

impl Delivered {
    /// Whether `entry` was already passed on: older than the mark, or of its instant and seen.
    fn covers(&self, entry: &OsTraceEntry) -> bool {
        let at = (u64::from(entry.seconds), entry.microseconds);
        at < self.at || (at == self.at && self.same_instant.contains(&fingerprint(entry)))
    }

    fn note(&mut self, entry: &OsTraceEntry) {
        let at = (u64::from(entry.seconds), entry.microseconds);
        if at != self.at {
            self.at = at;
            self.same_instant.clear();
        }
        if self.same_instant.len() < MAX_SAME_INSTANT {
            self.same_instant.push(fingerprint(entry));
        }
    }
}

/// An entry's fingerprint among those of one instant.
fn fingerprint(entry: &OsTraceEntry) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    entry.message.hash(&mut hasher);
    entry.filename.hash(&mut hasher);
    entry.image_name.hash(&mut hasher);
    entry.subsystem.hash(&mut hasher);
    entry.category.hash(&mut hasher);
    hasher.finish()
}

/// Locks a mutex, taking the data even if another thread panicked while holding it: the ring
/// and the status stay consistent after every single update.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A running follower. Dropping it (or [`Follower::stop`]) ends its task and every stream.
#[derive(Debug)]
pub struct Follower {
    shared: Arc<Shared>,
    launches: mpsc::UnboundedSender<u32>,
    task: tokio::task::JoinHandle<()>,
}

impl Follower {
    /// Starts following `record`'s app over `services`. Must be called inside a tokio runtime.
    pub fn start(record: AppRecord, services: DeviceServices, config: FollowerConfig) -> Follower {
        let shared = Arc::new(Shared {
            ring: Mutex::new(Ring::new(config.max_lines, config.max_text_bytes)),
            processes: Mutex::new(Vec::new()),
            status: Mutex::new(FollowerStatus {
                bundle_path: record.path.clone(),
                ..FollowerStatus::default()
            }),
            added: tokio::sync::Notify::new(),
            listed: tokio::sync::watch::Sender::new(false),
            delivered: Mutex::new(HashMap::new()),
            refused: Arc::new(AtomicU64::new(0)),
        });
        let (launches, launch_rx) = mpsc::unbounded_channel();
        let state = State {
            record,
            services,
            config,
            shared: Arc::clone(&shared),
            streams: HashMap::new(),
            tasks: JoinSet::new(),
            fast_until: None,
            last_lookup: Instant::now(),
            rejected: HashSet::new(),
            others_tried: HashSet::new(),
            next_generation: 0,
        };
        let task = tokio::spawn(state.run(launch_rx));
        Follower {
            shared,
            launches,
            task,
        }
    }

    /// Tells the follower that the app was just launched as `pid` (CoreDevice's
    /// `processToken`): its stream opens at once, and the process list is read every 150 ms
    /// for the next 3 s.
    pub fn launched(&self, pid: u32) {
        // The task only ends when the follower is dropped, so a failed send changes nothing.
        let _ = self.launches.send(pid);
    }

    /// The kept lines matching `query`, oldest first, at most `query.count` (the newest), with
    /// what the agent must be told about them ([`notices`]).
    pub fn lines(&self, query: &LogQuery) -> LogResult {
        let mut result = lock(&self.shared.ring).query(query);
        result.processes = lock(&self.shared.processes)
            .iter()
            .filter(|span| result.lines.iter().any(|l| l.pid == Some(span.pid)))
            .cloned()
            .collect();
        result.notices = notices(&lock(&self.shared.status));
        result
            .notices
            .extend(refused_records(self.shared.refused.load(Ordering::Relaxed)));
        result
    }

    /// A wait until the follower's first listing of the phone's processes is over, so the
    /// first read can already say whether the app runs and whether its processes could be
    /// listed; over at once after that. It holds no lock of the follower.
    pub fn listed(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut listed = self.shared.listed.subscribe();
        async move {
            // The sender lives in the follower: an error only means it was stopped.
            let _ = listed.wait_for(|done| *done).await;
        }
    }

    /// The kept lines matching `query` (its count aside), then each new one as it arrives: a
    /// wait on the lines this follower collects, with no stream of its own. It holds nothing
    /// on the phone; dropping it ends it.
    pub fn follow(&self, query: &LogQuery) -> FollowerLines {
        let ring = lock(&self.shared.ring);
        let queue = ring
            .lines
            .iter()
            .filter(|l| query.matches(l))
            .cloned()
            .collect::<Vec<_>>();
        let next = ring.dropped + ring.lines.len() as u64;
        drop(ring);
        let mut queue: VecDeque<LogLine> = queue.into();
        queue.make_contiguous().sort_by_key(|l| l.time);
        FollowerLines {
            shared: Arc::clone(&self.shared),
            query: query.clone(),
            queue,
            next,
        }
    }

    /// What the follower is doing now.
    pub fn status(&self) -> FollowerStatus {
        let mut status = lock(&self.shared.status).clone();
        let ring = lock(&self.shared.ring);
        status.dropped = ring.dropped;
        status.kept = ring.lines.len();
        status
    }

    /// An estimate of the memory the kept lines hold, in bytes: the ring's slots plus every
    /// tag's and text's heap allocation.
    pub fn memory_bytes(&self) -> usize {
        lock(&self.shared.ring).approx_bytes()
    }

    /// Stops the follower and every stream it opened.
    pub fn stop(self) {
        self.task.abort();
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The lines of a follower from a time on, then each new one ([`Follower::follow`]).
#[derive(Debug)]
pub struct FollowerLines {
    shared: Arc<Shared>,
    query: LogQuery,
    queue: VecDeque<LogLine>,
    /// The absolute number of the next line to look at (lines the ring dropped count too).
    next: u64,
}

impl FollowerLines {
    fn take(&mut self) -> Option<LogLine> {
        let ring = lock(&self.shared.ring);
        self.next = self.next.max(ring.dropped);
        while let Some(line) = usize::try_from(self.next - ring.dropped)
            .ok()
            .and_then(|at| ring.lines.get(at))
        {
            self.next += 1;
            if self.query.matches(line) {
                return Some(line.clone());
            }
        }
        None
    }
}

#[async_trait::async_trait]
impl phonelogs_driver::LineStream for FollowerLines {
    async fn next_line(&mut self) -> Option<phonelogs_driver::Result<LogLine>> {
        if let Some(line) = self.queue.pop_front() {
            return Some(Ok(line));
        }
        let shared = Arc::clone(&self.shared);
        loop {
            let notified = shared.added.notified();
            tokio::pin!(notified);
            // Registered before looking, so lines arriving in between still wake it.
            notified.as_mut().enable();
            if let Some(line) = self.take() {
                return Some(Ok(line));
            }
            notified.await;
        }
    }
}

#[derive(Debug)]
struct StreamState {
    handle: AbortHandle,
    /// Which opening of this pid's stream this is, so the end of a replaced one is told apart.
    generation: u64,
    gone_since: Option<Instant>,
    opened_at: Instant,
    /// How many entries of the process the stream passed on.
    entries: Arc<AtomicU64>,
}

/// How a stream's task ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    /// The phone closed it, or it failed: it is opened again while its process runs.
    Closed,
    /// An entry showed an executable outside the app's bundle: another app's process with the
    /// same name. Nothing of it was passed on; it is not opened again.
    NotTheApps,
}

/// Which way a stream is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Way {
    /// [`crate::services::StreamOpener::open`].
    Usual,
    /// [`crate::services::StreamOpener::open_other`], then the usual way if there is none.
    Other,
}

struct State {
    record: AppRecord,
    services: DeviceServices,
    config: FollowerConfig,
    shared: Arc<Shared>,
    streams: HashMap<u32, StreamState>,
    tasks: JoinSet<(u32, u64, Ended)>,
    fast_until: Option<Instant>,
    last_lookup: Instant,
    /// See [`FollowerStatus::rejected`].
    rejected: HashSet<u32>,
    /// The pids whose silent stream was already opened the other way.
    others_tried: HashSet<u32>,
    next_generation: u64,
}

impl State {
    async fn run(mut self, mut launches: mpsc::UnboundedReceiver<u32>) {
        let mut next_poll = Instant::now();
        loop {
            tokio::select! {
                () = sleep_until(next_poll) => {
                    self.poll().await;
                    next_poll = Instant::now() + self.interval();
                }
                Some(pid) = launches.recv() => {
                    self.launched(pid).await;
                    next_poll = Instant::now() + self.config.fast_poll;
                }
                Some(done) = self.tasks.join_next(), if !self.tasks.is_empty() => {
                    // A stream that ended (the phone closed it, or it failed) is forgotten, so
                    // the next poll opens it again if its process still runs; one that showed
                    // another app's executable is not opened again. A replaced stream's end
                    // (an older generation) changes nothing.
                    if let Ok((pid, generation, ended)) = done
                        && self.streams.get(&pid).is_some_and(|s| s.generation == generation)
                    {
                        self.streams.remove(&pid);
                        if ended == Ended::NotTheApps {
                            self.rejected.insert(pid);
                            self.publish_rejected();
                            // Nothing of it was passed on: no process marker names it.
                            lock(&self.shared.processes).retain(|span| span.pid != pid);
                        }
                        self.publish_streams();
                    }
                }
            }
        }
    }

    fn interval(&self) -> Duration {
        match self.fast_until {
            Some(until) if Instant::now() < until => self.config.fast_poll,
            _ => self.config.poll,
        }
    }

    fn note_error(&self, error: String) {
        tracing::warn!(app = %self.record.bundle_id, %error, "iPhone follower");
        lock(&self.shared.status).last_error = Some(error);
    }

    /// Reads the phone's process list once, noting which source answered or why none did.
    async fn list(&mut self) -> Option<ProcessList> {
        lock(&self.shared.status).polls += 1;
        let listed = list_within(self.services.processes.as_ref(), self.config.call_timeout).await;
        let result = match listed {
            Ok(list) => {
                let mut status = lock(&self.shared.status);
                status.source = Some(list.source);
                status.passed_over = list.passed_over.clone();
                status.listing_failed = None;
                drop(status);
                Some(list)
            }
            Err(failed) => {
                self.note_error(format!("listing processes failed: {failed}"));
                let mut status = lock(&self.shared.status);
                status.source = None;
                status.passed_over = Vec::new();
                status.app_running = None;
                status.listing_failed = Some(failed);
                None
            }
        };
        self.shared.listed.send_replace(true);
        result
    }

    async fn poll(&mut self) {
        if let Some(listed) = self.list().await {
            self.apply(&listed).await;
        }
    }

    /// A launch the driver was told about (CoreDevice's `processToken`). The pid alone is never
    /// trusted: the process list is read at once, and a stream opens only if the pid is a
    /// candidate like any other. A pid not listed yet is opened by the fast polls that follow.
    async fn launched(&mut self, pid: u32) {
        self.fast_until = Some(Instant::now() + self.config.fast_for);
        let Some(listed) = self.list().await else {
            return;
        };
        match listed.processes.iter().find(|p| p.pid == pid) {
            Some(process) if !self.is_candidate(process) => {
                // A new install moves the bundle, and a launch often follows an install, so
                // the bundle is looked up again once before the pid is judged.
                self.last_lookup = Instant::now();
                self.relookup().await;
                if !self.is_candidate(process) {
                    tracing::warn!(
                        app = %self.record.bundle_id,
                        pid,
                        "a launched pid is not one of the app's processes; no stream is opened for it"
                    );
                }
            }
            Some(_) => {}
            None => tracing::debug!(pid, "the launched pid is not listed yet"),
        }
        self.apply(&listed).await;
    }

    /// Whether a listed process may be the app's: its executable's path in the bundle, or (a
    /// list of names) its name the app's executable's; never a pid whose stream already showed
    /// another executable (a name shared with another app, or a pid reused) while it runs.
    fn is_candidate(&self, process: &ProcessEntry) -> bool {
        if self.rejected.contains(&process.pid) {
            return false;
        }
        match &process.image {
            ProcessImage::Path(path) => in_bundle(path, &self.record.path),
            ProcessImage::Name(name) => {
                report_name(&self.record).is_some_and(|executable| name_may_be(name, &executable))
            }
        }
    }

    /// Opens a stream for every listed candidate, opens silent ones again the other way, and
    /// closes the streams of processes gone for longer than the linger.
    async fn apply(&mut self, listed: &ProcessList) {
        let now = Instant::now();
        let listed_pids: HashSet<u32> = listed.processes.iter().map(|p| p.pid).collect();
        // A pid that left the list may come back as another process.
        self.rejected.retain(|pid| listed_pids.contains(pid));
        self.others_tried.retain(|pid| listed_pids.contains(pid));
        self.publish_rejected();
        let matching: Vec<&ProcessEntry> = listed
            .processes
            .iter()
            .filter(|p| self.is_candidate(p))
            .collect();
        for process in &matching {
            match self.streams.get_mut(&process.pid) {
                Some(stream) => stream.gone_since = None,
                None => {
                    self.open(process.pid, Way::Usual);
                    self.note_process(process);
                }
            }
        }
        let matching: Vec<u32> = matching.iter().map(|p| p.pid).collect();
        self.reopen_silent(&matching, now);
        let linger = self.config.linger;
        let mut ended = Vec::new();
        self.streams.retain(|pid, stream| {
            if matching.contains(pid) {
                return true;
            }
            let since = *stream.gone_since.get_or_insert(now);
            if now.duration_since(since) >= linger {
                stream.handle.abort();
                ended.push(*pid);
                false
            } else {
                true
            }
        });
        if !ended.is_empty() {
            let mut spans = lock(&self.shared.processes);
            for span in spans.iter_mut().filter(|s| ended.contains(&s.pid)) {
                span.ended = true;
            }
        }
        self.publish_streams();
        lock(&self.shared.status).app_running = Some(!matching.is_empty());
        if matching.is_empty() && now.duration_since(self.last_lookup) >= self.config.relookup_every
        {
            self.last_lookup = now;
            self.relookup().await;
        }
    }

    /// A stream that passed nothing on for [`FollowerConfig::silent_after`] while its process
    /// runs is opened again the other way, once per process.
    fn reopen_silent(&mut self, running: &[u32], now: Instant) {
        let silent: Vec<u32> = self
            .streams
            .iter()
            .filter(|(pid, stream)| {
                running.contains(pid)
                    && !self.others_tried.contains(pid)
                    && stream.entries.load(Ordering::Relaxed) == 0
                    && now.duration_since(stream.opened_at) >= self.config.silent_after
            })
            .map(|(pid, _)| *pid)
            .collect();
        for pid in silent {
            tracing::info!(app = %self.record.bundle_id, pid, "a stream stayed silent while its process ran; opening it the other way");
            self.others_tried.insert(pid);
            if let Some(stream) = self.streams.remove(&pid) {
                stream.handle.abort();
            }
            self.open(pid, Way::Other);
        }
    }

    async fn relookup(&mut self) {
        lock(&self.shared.status).relookups += 1;
        match timeout(
            self.config.call_timeout,
            self.services.apps.lookup(&self.record.bundle_id),
        )
        .await
        {
            Ok(Ok(Some(record))) => {
                if record.path != self.record.path {
                    tracing::info!(app = %record.bundle_id, from = %self.record.path, to = %record.path, "the app's bundle moved");
                    lock(&self.shared.status).bundle_path = record.path.clone();
                }
                self.record = record;
            }
            Ok(Ok(None)) => {
                tracing::debug!(app = %self.record.bundle_id, "the app is not installed now");
            }
            Ok(Err(error)) => self.note_error(format!("looking the app up failed: {error}")),
            Err(_) => self.note_error(format!(
                "looking the app up took longer than {:?}",
                self.config.call_timeout
            )),
        }
    }

    fn open(&mut self, pid: u32, way: Way) {
        let opener = Arc::clone(&self.services.streams);
        let shared = Arc::clone(&self.shared);
        let config = self.config.clone();
        let app = self.record.bundle_id.clone();
        let bundle = self.record.path.clone();
        let entries = Arc::new(AtomicU64::new(0));
        let counted = Arc::clone(&entries);
        self.next_generation += 1;
        let generation = self.next_generation;
        let handle = self.tasks.spawn(async move {
            let opening = async {
                if way == Way::Other {
                    return open_both_ways(opener.as_ref(), pid).await;
                }
                opener.open(pid).await.map(Opened::One)
            };
            let ended = match timeout(config.call_timeout, opening).await {
                Ok(Ok(stream)) => {
                    let stream = first_to_deliver(stream, opener.as_ref()).await;
                    lock(&shared.status).stream_error = None;
                    let to = Pump {
                        pid,
                        bundle: &bundle,
                        shared: &shared,
                        config: &config,
                        entries: &counted,
                    };
                    pump(stream, &to).await
                }
                Ok(Err(error)) => {
                    tracing::warn!(%app, pid, %error, "opening an os_trace stream failed");
                    let error = format!("opening the stream of pid {pid} failed: {error}");
                    let mut status = lock(&shared.status);
                    status.stream_error = Some(error.clone());
                    status.last_error = Some(error);
                    Ended::Closed
                }
                Err(_) => {
                    let error = format!(
                        "opening the stream of pid {pid} took longer than {:?}",
                        config.call_timeout
                    );
                    let mut status = lock(&shared.status);
                    status.stream_error = Some(error.clone());
                    status.last_error = Some(error);
                    Ended::Closed
                }
            };
            (pid, generation, ended)
        });
        lock(&self.shared.status).opened.push(pid);
        self.streams.insert(
            pid,
            StreamState {
                handle,
                generation,
                gone_since: None,
                opened_at: Instant::now(),
                entries,
            },
        );
        self.publish_streams();
    }

    /// Remembers a process a stream was opened for, by its executable's name (the last part of
    /// its path, or the name a list of names gave).
    fn note_process(&self, process: &ProcessEntry) {
        let name = match &process.image {
            ProcessImage::Path(path) => {
                path_components(path).and_then(|parts| parts.last().cloned())
            }
            ProcessImage::Name(name) => Some(name.clone()),
        };
        let mut spans = lock(&self.shared.processes);
        spans.retain(|span| span.pid != process.pid);
        spans.push(ProcessSpan {
            pid: process.pid,
            name,
            ended: false,
        });
        let over = spans.len().saturating_sub(MAX_SPANS);
        spans.drain(..over);
    }

    fn publish_streams(&self) {
        let mut pids: Vec<u32> = self.streams.keys().copied().collect();
        pids.sort_unstable();
        lock(&self.shared.status).open_streams = pids;
    }

    fn publish_rejected(&self) {
        let mut pids: Vec<u32> = self.rejected.iter().copied().collect();
        pids.sort_unstable();
        lock(&self.shared.status).rejected = pids;
    }
}

/// What opening a stream gave: one stream, or (for a silent stream) the other way and the
/// usual way again, side by side until one delivers.
enum Opened {
    One(Box<dyn LogStream>),
    Both {
        other: Box<dyn LogStream>,
        usual: Box<dyn LogStream>,
    },
}

/// A silent stream's replacement: the other way (the RemoteXPC shim) and the usual way again,
/// both; whichever opens.
async fn open_both_ways(
    opener: &dyn crate::services::StreamOpener,
    pid: u32,
) -> phonelogs_driver::Result<Opened> {
    let (other, usual) = tokio::join!(opener.open_other(pid), opener.open(pid));
    match (other, usual) {
        (Ok(other), Ok(usual)) => Ok(Opened::Both { other, usual }),
        (Ok(other), Err(error)) => {
            tracing::debug!(pid, %error, "the usual way did not open again; the other way alone");
            Ok(Opened::One(other))
        }
        (Err(error), Ok(usual)) => {
            tracing::debug!(pid, %error, "no other way to the stream; opened as before");
            Ok(Opened::One(usual))
        }
        (Err(_), Err(error)) => Err(error),
    }
}

/// How long the usual way may lag behind the other way's first entry and still count as
/// working (both ways carry the same entries on a phone where both work).
const USUAL_GRACE: Duration = Duration::from_secs(2);

/// The stream to read: the one opened, or of two side by side the first to deliver an entry
/// (the usual way on a tie, or when it delivers within [`USUAL_GRACE`] of the other), the
/// other closed. Only the usual way staying silent while the other delivers tells the phone its
/// usual way is what is silent; a quiet app's two streams just wait.
async fn first_to_deliver(
    opened: Opened,
    opener: &dyn crate::services::StreamOpener,
) -> Box<dyn LogStream> {
    let (mut other, mut usual) = match opened {
        Opened::One(stream) => return stream,
        Opened::Both { other, usual } => (other, usual),
    };
    let (first, from_other) = tokio::select! {
        biased;
        entry = usual.next_entry() => (entry, false),
        entry = other.next_entry() => (entry, true),
    };
    let entry = match first {
        Ok(Some(entry)) => entry,
        // The first to say anything closed or failed: the other one goes on alone.
        _ => return if from_other { usual } else { other },
    };
    if !from_other {
        return Box::new(Prepended::new(vec![entry], usual));
    }
    match timeout(USUAL_GRACE, usual.next_entry()).await {
        // The usual way works too, a moment behind: it is kept, after the other's entry when
        // that one is not the same.
        Ok(Ok(Some(again))) => {
            let same = (again.seconds, again.microseconds) == (entry.seconds, entry.microseconds)
                && fingerprint(&again) == fingerprint(&entry);
            let first = if same {
                vec![again]
            } else {
                vec![entry, again]
            };
            Box::new(Prepended::new(first, usual))
        }
        _ => {
            opener.other_way_worked();
            Box::new(Prepended::new(vec![entry], other))
        }
    }
}

/// A stream whose first entries were already read.
struct Prepended {
    first: VecDeque<OsTraceEntry>,
    rest: Box<dyn LogStream>,
}

impl Prepended {
    fn new(first: Vec<OsTraceEntry>, rest: Box<dyn LogStream>) -> Self {
        Prepended {
            first: first.into(),
            rest,
        }
    }
}

#[async_trait::async_trait]
impl LogStream for Prepended {
    async fn next_entry(&mut self) -> phonelogs_driver::Result<Option<OsTraceEntry>> {
        match self.first.pop_front() {
            Some(entry) => Ok(Some(entry)),
            None => self.rest.next_entry().await,
        }
    }

    fn count_refused_in(&mut self, refused: Arc<AtomicU64>) {
        self.rest.count_refused_in(refused);
    }
}

/// Where one stream's entries go.
struct Pump<'a> {
    pid: u32,
    /// The app's bundle when the stream opened.
    bundle: &'a str,
    shared: &'a Shared,
    config: &'a FollowerConfig,
    entries: &'a AtomicU64,
}

/// Reads one stream until it ends, keeping the lines of its own process only, and only while
/// its entries show the process's executable inside the app's bundle.
async fn pump(mut stream: Box<dyn LogStream>, to: &Pump<'_>) -> Ended {
    stream.count_refused_in(to.shared.refused.clone());
    // The executable path last seen inside the bundle: the same text again needs no new check.
    let mut confirmed: Option<String> = None;
    // A stream opened again for a pid whose entries were passed on before may send some of
    // them again: until its first new entry, what the mark covers is skipped. Only then: a
    // phone whose clock went back must not lose what it logs afterwards.
    let mut replay = lock(&to.shared.delivered).get(&to.pid).cloned();
    loop {
        match stream.next_entry().await {
            Ok(Some(entry)) => {
                // The phone filters by pid; checking again means a stream that ignored the
                // filter still leaks nothing of another process.
                // A record without its process path (length 0, which Apple's layout allows)
                // cannot be checked: it is left out, and the stream read on.
                if entry.pid != to.pid || entry.filename.is_empty() {
                    continue;
                }
                if let Some(mark) = &replay {
                    if mark.covers(&entry) {
                        continue;
                    }
                    replay = None;
                }
                if confirmed.as_deref() != Some(entry.filename.as_str()) {
                    if !in_bundle(&entry.filename, to.bundle) {
                        // Another app's process under the same name (or a pid reused): the
                        // stream is closed, and neither this entry nor any later one is kept.
                        tracing::info!(
                            pid = to.pid,
                            "a stream's process is not the app's (its executable lies outside the bundle); closed unread"
                        );
                        return Ended::NotTheApps;
                    }
                    confirmed = Some(entry.filename.clone());
                }
                to.entries.fetch_add(1, Ordering::Relaxed);
                {
                    let mut delivered = lock(&to.shared.delivered);
                    if delivered.len() >= MAX_MARKED_PIDS && !delivered.contains_key(&to.pid) {
                        delivered.clear();
                    }
                    delivered.entry(to.pid).or_default().note(&entry);
                }
                let max = (to.config.max_lines, to.config.max_text_bytes);
                let (lines, over) = entry_to_newest_lines(&entry, to.config.max_line_bytes, max);
                {
                    let mut ring = lock(&to.shared.ring);
                    ring.dropped += over as u64;
                    for line in lines {
                        ring.push(line);
                    }
                }
                to.shared.added.notify_waiters();
            }
            Ok(None) => return Ended::Closed,
            Err(error) => {
                tracing::debug!(pid = to.pid, %error, "an os_trace stream ended");
                return Ended::Closed;
            }
        }
    }
}

/// Whether a process named `name` (os_trace_relay's `PidList` `ProcessName`) may run the
/// executable `executable`: the same name, or a name of 15 bytes or more that starts it,
/// since a kernel process name may be cut (BSD keeps `MAXCOMLEN`, 16 bytes, of it; whether
/// `PidList` gives the cut name has not been seen on a phone). A wider match costs only a
/// stream that is closed unread when its entries show another executable.
///
/// ```
/// use phonelogs_ios::follower::name_may_be;
/// assert!(name_may_be("Runner", "Runner"));
/// assert!(!name_may_be("Runner", "RunnerX"));
/// assert!(!name_may_be("Runne", "Runner"));
/// assert!(name_may_be("WebDriverAgentRu", "WebDriverAgentRunner-Runner"));
/// ```
pub fn name_may_be(name: &str, executable: &str) -> bool {
    !name.is_empty() && (name == executable || (name.len() >= 15 && executable.starts_with(name)))
}

/// What the agent must be told with a follower's lines, from its status: the processes could
/// not be listed (the cause and the fix), the app's extensions cannot be found (names only), a
/// stream of the app could not be opened, the app is not running, and that the phone hides
/// values as `<private>` (said only when a line shown holds it).
pub fn notices(status: &FollowerStatus) -> Vec<LogNotice> {
    let mut notices = Vec::new();
    if let Some(failed) = &status.listing_failed {
        notices.push(LogNotice::Unreadable {
            cause: format!("the iPhone's processes could not be listed ({failed})"),
            fix: failed.fix(),
        });
    } else if status.source.is_some_and(|s| !s.knows_paths()) && !status.passed_over.is_empty() {
        notices.push(LogNotice::PartlyUnreadable {
            part: "extensions (widgets, share extensions and other app extensions)".into(),
            cause: format!(
                "the iPhone named its processes without their paths, which finds the main app's process only ({})",
                causes(&status.passed_over)
            ),
            fix: fixes(&status.passed_over),
        });
    }
    if let (Some(error), Some(true)) = (&status.stream_error, status.app_running) {
        notices.push(LogNotice::Unreadable {
            cause: format!("the app's log stream could not be opened ({error})"),
            fix: RECONNECT.into(),
        });
    }
    if status.app_running == Some(false) && status.open_streams.is_empty() {
        notices.push(LogNotice::NotRunning);
    }
    notices.push(private_values());
    notices
}

/// What a read must say when the app's streams skipped records that Apple's client would
/// refuse (another record version, header size or size than `phonelogs_crash::ostrace`
/// reads): some of the app's lines may be missing, so an empty or short answer has a reason.
pub fn refused_records(count: u64) -> Option<LogNotice> {
    (count > 0).then(|| LogNotice::PartlyUnreadable {
        part: "skipped records".into(),
        cause: format!(
            "the iPhone sent {count} of its records in a layout Apple's own client would refuse (another record version or size)"
        ),
        fix: "update phonelogs; if it is the newest, report the iPhone's iOS version, since this one may write its records differently".into(),
    })
}

/// The iPhone's `<private>`: values the app logs without marking them public, which the phone
/// hides (and, for apps built with the Xcode 26 SDK, `NSLog`'s dynamic strings too). Apple's
/// documentation: `OSLogPrivacy` (developer.apple.com/documentation/os/oslogprivacy) and
/// "Generating Log Messages from Your Code"
/// (developer.apple.com/documentation/os/generating-log-messages-from-your-code); the Xcode 26
/// change is seen in libimobiledevice #1682 and NativeScript/ios #278.
pub fn private_values() -> LogNotice {
    LogNotice::Redacted {
        marker: "<private>".into(),
        why: "the iPhone hides the dynamic values an app logs unless its code marks them public (os_log and Logger always did; with the Xcode 26 SDK, NSLog does too)".into(),
        fix: "in the app, mark the values that hold no personal data public: `\\(value, privacy: .public)` in a Swift Logger message, `%{public}@` (or `%{public}d` and so on) in an os_log format, and log through Logger or os_log rather than NSLog".into(),
    }
}

/// Whether an executable lies inside a bundle, compared by path components: `Example.app` is
/// not `Example.appx`, and an extension lies in its own app's bundle only. `/private/var` and
/// `/var` name the same directory on an iPhone, and CoreDevice gives percent-encoded `file://`
/// URLs (`My%20App.app`), so both sides go through [`path_components`]; a path that does not
/// read cleanly matches nothing.
pub fn in_bundle(executable: &str, bundle: &str) -> bool {
    let (Some(exe), Some(bundle)) = (path_components(executable), path_components(bundle)) else {
        return false;
    };
    !bundle.is_empty() && exe.len() > bundle.len() && exe[..bundle.len()] == bundle[..]
}

/// The components of an absolute path on the phone, or of a `file://` URL (CoreDevice's
/// `executableURL`, e.g. `file:///private/var/containers/Bundle/Application/U/My%20App.app/My%20App`),
/// with a leading `/private/var` read as `/var`.
///
/// A URL's components are percent-decoded one by one; a plain path (instruments' process list,
/// installation_proxy's `Path`) is taken as it is, since `%` is an ordinary character in a file
/// name. `None` for anything that is neither, for a component that decodes to invalid UTF-8, a
/// `/` or a NUL (no real file name holds them, so such a URL could only smuggle in extra
/// components), and for `.` or `..` components (which could climb out of another app's
/// directory into ours).
///
/// ```
/// use phonelogs_ios::follower::path_components;
/// let url = "file:///private/var/containers/Bundle/Application/U/My%20App.app/My%20App";
/// assert_eq!(
///     path_components(url).unwrap(),
///     ["var", "containers", "Bundle", "Application", "U", "My App.app", "My App"]
/// );
/// assert_eq!(path_components("/var/x/100%.app").unwrap(), ["var", "x", "100%.app"]);
/// assert!(path_components("file:///var/a%2Fb").is_none());
/// assert!(path_components("relative/path").is_none());
/// ```
pub fn path_components(path: &str) -> Option<Vec<String>> {
    let path = path.trim();
    let mut parts: Vec<String> = match path.strip_prefix("file://") {
        Some(url) => {
            // Only a URL with no host (`file:///…`) names a file on the phone itself; a query or
            // fragment is not part of the path.
            let url = url.strip_prefix("localhost").unwrap_or(url);
            let url = url.split(['?', '#']).next().unwrap_or_default();
            if !url.starts_with('/') {
                return None;
            }
            url.split('/')
                .filter(|part| !part.is_empty())
                .map(|part| {
                    let decoded = percent_encoding::percent_decode_str(part)
                        .decode_utf8()
                        .ok()?;
                    (!decoded.contains(['/', '\0'])).then(|| decoded.into_owned())
                })
                .collect::<Option<Vec<String>>>()?
        }
        None => {
            if !path.starts_with('/') {
                return None;
            }
            path.split('/')
                .filter(|part| !part.is_empty())
                .map(str::to_owned)
                .collect()
        }
    };
    if parts.iter().any(|part| part == "." || part == "..") {
        return None;
    }
    if parts.len() >= 2 && parts[0] == "private" && parts[1] == "var" {
        parts.remove(0);
    }
    Some(parts)
}

/// The level of an os_log entry: debug is debug; default, info and user actions are info;
/// error is error; a fault is fatal.
pub fn level_of(level: OsLogLevel) -> LogLevel {
    match level {
        OsLogLevel::Debug => LogLevel::Debug,
        OsLogLevel::Error => LogLevel::Error,
        OsLogLevel::Fault => LogLevel::Fatal,
        OsLogLevel::Notice | OsLogLevel::Info | OsLogLevel::UserAction | OsLogLevel::Unknown(_) => {
            LogLevel::Info
        }
    }
}

/// Turns an os_trace entry into lines: the phone's clock (seconds and microseconds), the
/// category as the tag (else the process's name), the message as the text, each line cut at
/// `max_line_bytes`.
///
/// A message with line breaks (`\n`, `\r\n` or a lone `\r`) becomes several lines with the
/// same time, level, tag and pid, as logcat prints a multi-line message on Android: one
/// rendered line per [`LogLine`], so no message can forge a line of another time or tag. One
/// break at the very end adds no empty line.
pub fn entry_to_lines(entry: &OsTraceEntry, max_line_bytes: usize) -> Vec<LogLine> {
    entry_to_newest_lines(entry, max_line_bytes, (usize::MAX, usize::MAX)).0
}

/// [`entry_to_lines`], keeping only the newest lines of the message that the follower's ring
/// could keep (`max`: at most this many lines and bytes of tag and text, at least one line),
/// and how many older ones it left out: each line holds a copy of the tag, so a message of
/// thousands of line breaks would otherwise be held thousands of times over. The tag is cut
/// at `max_line_bytes` as the text is.
pub fn entry_to_newest_lines(
    entry: &OsTraceEntry,
    max_line_bytes: usize,
    (max_lines, max_bytes): (usize, usize),
) -> (Vec<LogLine>, usize) {
    let micros =
        i128::from(entry.seconds) * 1_000_000 + i128::from(entry.microseconds.min(999_999));
    let time = OffsetDateTime::from_unix_timestamp_nanos(micros * 1_000)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH);
    let tag = match entry.category.as_deref() {
        Some(category) if !category.is_empty() => category,
        _ => entry.filename.rsplit('/').next().unwrap_or_default(),
    };
    let tag = cut(tag, max_line_bytes);
    let texts = message_lines(&entry.message);
    let mut bytes = 0usize;
    let kept = texts
        .iter()
        .rev()
        .take(max_lines.max(1))
        .take_while(|text| {
            bytes = bytes.saturating_add(tag.len() + text.len().min(max_line_bytes));
            bytes <= max_bytes
        })
        .count()
        .max(1);
    let over = texts.len().saturating_sub(kept);
    let lines = texts[over..]
        .iter()
        .map(|text| LogLine {
            time,
            level: level_of(entry.level),
            tag: tag.clone(),
            text: cut_text(text, max_line_bytes),
            pid: Some(entry.pid),
            tid: None,
            uid: None,
        })
        .collect();
    (lines, over)
}

/// A message's lines: split at `\n`, `\r\n` and a lone `\r` (which a terminal would use to
/// overwrite the start of the line), without one empty line after a final break.
fn message_lines(message: &str) -> Vec<String> {
    // Every break becomes `\n` first, so `\r\n` counts once and a lone `\r` anywhere counts as
    // a break of its own.
    let normalized = if message.contains('\r') {
        std::borrow::Cow::Owned(message.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        std::borrow::Cow::Borrowed(message)
    };
    let mut lines: Vec<String> = normalized.split('\n').map(str::to_owned).collect();
    if lines.len() > 1 && lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    lines
}

/// A new string of at most `max` bytes, cut at a character boundary, so no long line's
/// allocation stays behind in the ring.
fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut at = max;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    text[..at].to_owned()
}

/// A message's line cut at most `max` bytes as [`cut`] cuts, then back to the last space,
/// quote or bracket (the whole text goes when there is none), and back past a trailing run of
/// four or more digits with spaces and dashes. The driver cannot mask (the gateway does,
/// after): a cut that split a secret would leave half of it, which no rule recognises, for a
/// `filter` to probe (issue 37, item 3); no key holds one of these, and a card number written
/// in groups (`4111 1111 1111 1111`), which does, is never left cut to a shorter number the
/// card rule would not read.
fn cut_text(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let cut = cut(text, max);
    let keep = cut
        .rfind(|c: char| {
            c.is_whitespace()
                || matches!(
                    c,
                    '"' | '\'' | ',' | ';' | '(' | ')' | '[' | ']' | '{' | '}' | '<' | '>'
                )
        })
        .map_or(0, |end| end + 1);
    let kept = &cut[..keep];
    let digits_end = kept
        .rfind(|c: char| !(c.is_ascii_digit() || c == ' ' || c == '-'))
        .map_or(0, |end| end + 1);
    // The run stays when it holds fewer than four digits (a time's milliseconds, a count):
    // no part of a card that short tells anything.
    if kept[digits_end..]
        .bytes()
        .filter(u8::is_ascii_digit)
        .count()
        >= 4
    {
        return kept[..digits_end].to_owned();
    }
    kept.to_owned()
}

/// Whether an app id is the WebDriverAgent runner, whose logs are never read.
pub fn is_xctrunner(app: &AppId) -> bool {
    app.as_str().ends_with(".xctrunner")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundle_paths_match_by_component_and_ignore_private() {
        let bundle = "/private/var/containers/Bundle/Application/AAA/Example.app";
        assert!(in_bundle(
            "/var/containers/Bundle/Application/AAA/Example.app/Example",
            bundle
        ));
        assert!(in_bundle(
            "file:///private/var/containers/Bundle/Application/AAA/Example.app/PlugIns/W.appex/W",
            bundle
        ));
        assert!(!in_bundle(
            "/var/containers/Bundle/Application/AAA/Example.app2/x",
            bundle
        ));
        assert!(!in_bundle(
            "/var/containers/Bundle/Application/AAA/Example.app",
            bundle
        ));
        assert!(!in_bundle("/usr/libexec/backboardd", bundle));
        assert!(!in_bundle("/anything", ""));
    }

    #[test]
    fn levels_map_as_the_spec_says() {
        assert_eq!(level_of(OsLogLevel::Notice), LogLevel::Info);
        assert_eq!(level_of(OsLogLevel::Info), LogLevel::Info);
        assert_eq!(level_of(OsLogLevel::UserAction), LogLevel::Info);
        assert_eq!(level_of(OsLogLevel::Debug), LogLevel::Debug);
        assert_eq!(level_of(OsLogLevel::Error), LogLevel::Error);
        assert_eq!(level_of(OsLogLevel::Fault), LogLevel::Fatal);
        assert_eq!(level_of(OsLogLevel::Unknown(0x42)), LogLevel::Info);
    }

    /// The first line of an entry, for the tests of single-line messages.
    fn entry_to_line(entry: &OsTraceEntry, max_line_bytes: usize) -> LogLine {
        entry_to_lines(entry, max_line_bytes).remove(0)
    }

    #[test]
    fn messages_split_at_every_line_break_but_a_final_one() {
        assert_eq!(message_lines(""), [""]);
        assert_eq!(message_lines("one"), ["one"]);
        assert_eq!(message_lines("one\n"), ["one"]);
        assert_eq!(message_lines("one\r\n"), ["one"]);
        assert_eq!(message_lines("a\nb\r\nc\rd"), ["a", "b", "c", "d"]);
        assert_eq!(message_lines("a\n\nb\n\n"), ["a", "", "b", ""]);
        assert_eq!(message_lines("\n"), [""]);
        assert_eq!(message_lines("\r\r"), ["", ""]);
        assert_eq!(message_lines("a\r"), ["a"]);
    }

    #[test]
    fn a_multi_line_entry_keeps_its_time_tag_level_and_pid_on_every_line() {
        let mut e = entry("first\n12:00:00.000 Other: forged\n");
        e.category = Some("Net".into());
        let lines = entry_to_lines(&e, 15);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].text, "first");
        // Each line is cut on its own (after a space: a cut never splits a word).
        assert_eq!(lines[1].text, "12:00:00.000 ");
        for line in &lines {
            assert_eq!(
                (line.time, &*line.tag, line.level, line.pid),
                (lines[0].time, "Net", LogLevel::Error, Some(7))
            );
        }
    }

    #[test]
    fn urls_are_decoded_by_component_and_paths_are_not() {
        let url = "file:///private/var/containers/Bundle/Application/U/My%20App.app/My%20App";
        assert_eq!(
            path_components(url).unwrap_or_default(),
            [
                "var",
                "containers",
                "Bundle",
                "Application",
                "U",
                "My App.app",
                "My App"
            ]
        );
        assert!(in_bundle(
            url,
            "/private/var/containers/Bundle/Application/U/My App.app"
        ));
        assert!(in_bundle(
            url,
            "/var/containers/Bundle/Application/U/My App.app/"
        ));
        assert!(!in_bundle(
            url,
            "/var/containers/Bundle/Application/U/My%20App.app"
        ));
        // A plain path keeps its `%`, and a URL spells it `%25`.
        assert!(in_bundle("file:///var/x/100%25.app/a", "/var/x/100%.app"));
        assert!(!in_bundle("/var/x/100%25.app/a", "/var/x/100%.app"));
        assert!(in_bundle("file://localhost/var/x/A.app/A", "/var/x/A.app"));
        assert!(in_bundle(
            "file:///var/x/A.app/A?query#fragment",
            "/var/x/A.app"
        ));
        // Neither an encoded slash, a NUL, a dot segment, a host, bad UTF-8 nor a relative path.
        for bad in [
            "file:///var/x/A.app%2FA",
            "file:///var/x/A.app/A%00",
            "file:///var/y/../x/A.app/A",
            "/var/y/../x/A.app/A",
            "/var/x/./A.app/A",
            "file://phone/var/x/A.app/A",
            "file:///var/x/A.app/%FF",
            "var/x/A.app/A",
            "",
        ] {
            assert!(!in_bundle(bad, "/var/x/A.app"), "{bad}");
        }
        assert!(!in_bundle("/var/x/A.app/A", "/"));
    }

    fn entry(message: &str) -> OsTraceEntry {
        OsTraceEntry {
            pid: 7,
            seconds: 1_700_000_000,
            microseconds: 123_456,
            level: OsLogLevel::Error,
            filename: "/var/containers/Bundle/Application/A/Example.app/Example".into(),
            image_name: "/usr/lib/libobjc.dylib".into(),
            message: message.into(),
            subsystem: None,
            category: None,
        }
    }

    /// Issue 28's review: a message of many line breaks under a long category is not made into
    /// one copy of the category per line beyond what the ring keeps; the rest is counted.
    #[test]
    fn a_message_of_many_line_breaks_makes_only_the_lines_the_ring_keeps() {
        let mut e = entry(&"\n".repeat(100_000));
        e.category = Some("C".repeat(10_000));
        let config = FollowerConfig::default();
        let max = (config.max_lines, config.max_text_bytes);
        let (lines, over) = entry_to_newest_lines(&e, config.max_line_bytes, max);
        assert_eq!(lines.len() + over, 100_000);
        assert!(lines.iter().all(|l| l.tag.len() == config.max_line_bytes));
        let bytes: usize = lines.iter().map(|l| l.tag.len() + l.text.len()).sum();
        assert!(bytes <= config.max_text_bytes, "{bytes}");
        assert!(lines.len() <= config.max_lines);
        // Nothing to leave out: every line.
        let (all, none) = entry_to_newest_lines(&entry("a\nb"), 4096, max);
        assert_eq!((all.len(), none), (2, 0));
    }

    #[test]
    fn lines_keep_microseconds_and_fall_back_to_the_process_name() {
        let line = entry_to_line(&entry("hello"), 4096);
        assert_eq!(line.time.unix_timestamp(), 1_700_000_000);
        assert_eq!(line.time.microsecond(), 123_456);
        assert_eq!(line.tag, "Example");
        assert_eq!(line.level, LogLevel::Error);
        let mut with_category = entry("x");
        with_category.subsystem = Some("com.example".into());
        with_category.category = Some("Net".into());
        assert_eq!(entry_to_line(&with_category, 4096).tag, "Net");
        let long = entry_to_line(&entry(&"é".repeat(3000)), 4096);
        assert!(long.text.len() <= 4096 && long.text.is_char_boundary(long.text.len()));
        // Issue 37, item 3: a key across the cut is left out whole, never cut in half.
        let key = "sk_live_4eC39HqLyjWDarjtT1zdp7dc";
        let text = format!("{} init(key={key})", "a ".repeat(2036));
        let cut = entry_to_line(&entry(&text), 4096).text;
        assert!(
            cut.len() <= 4096 && cut.ends_with("init(") && !cut.contains("sk_"),
            "{cut}"
        );
        // A card number in groups across the cut leaves none of its digits (the review's F3:
        // twelve of them passed the card rule's length), and the words before it stay.
        let text = format!("{} card 4111 1111 1111 1111 ok", "a ".repeat(2040));
        let cut = entry_to_line(&entry(&text), 4096).text;
        assert!(cut.ends_with(" card") && !cut.contains("4111"), "{cut}");
    }

    #[test]
    fn the_ring_keeps_the_newest_and_respects_the_byte_budget() {
        let mut ring = Ring::new(3, usize::MAX);
        for i in 0..5u32 {
            let mut e = entry(&format!("line {i}"));
            e.seconds += i;
            ring.push(entry_to_line(&e, 4096));
        }
        assert_eq!(ring.lines.len(), 3);
        assert_eq!(ring.dropped, 2);
        assert_eq!(ring.lines[0].text, "line 2");
        let mut small = Ring::new(100, 10);
        small.push(entry_to_line(&entry("0123456789"), 4096));
        small.push(entry_to_line(&entry("abc"), 4096));
        assert_eq!(small.lines.len(), 1);
        assert_eq!(small.lines[0].text, "abc");
    }

    #[test]
    fn queries_keep_the_newest_count_and_say_how_many_were_left_out() {
        let mut ring = Ring::new(100, usize::MAX);
        for i in 0..10u32 {
            let mut e = entry(&format!("line {i}"));
            e.seconds += i;
            ring.push(entry_to_line(&e, 4096));
        }
        let since = OffsetDateTime::from_unix_timestamp(1_700_000_000)
            .unwrap_or(OffsetDateTime::UNIX_EPOCH);
        let result = ring.query(&LogQuery::since(since, 4));
        assert_eq!(result.omitted, 6);
        let texts: Vec<&str> = result.lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["line 6", "line 7", "line 8", "line 9"]);
    }
}
