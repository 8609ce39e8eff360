//! A task's session: the whole `phone_logs` call, the approvals, the end of the task.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use phonelogs_driver::{AppId, AppInfo, AppLogger, DeviceId, ErrorKind};
use phonelogs_view::lines::clean_label;
use time::OffsetDateTime;

use crate::cursor::CursorBook;
use crate::gateway::ReadKey;
use crate::store::NewStep;
use crate::types::{Answer, LogsResponse, Status, StepArgs};
use crate::{Gateway, GuardedLogger, TaskSpec, catalog, new_id};

/// One task of one agent. Cloning shares it; [`Session::end`] ends it for every clone.
#[derive(Clone)]
pub struct Session {
    inner: Arc<SessionInner>,
}

struct SessionInner {
    gateway: Gateway,
    task_id: String,
    spec: TaskSpec,
    started_at: OffsetDateTime,
    /// The (driver, phone, app) triples this task read, so listeners stop when it ends.
    read: Mutex<HashSet<ReadKey>>,
    ended: AtomicBool,
    /// How many history steps this session wrote, so a caller can tell whether a call wrote one.
    steps: AtomicU64,
    /// The cursors this task gave out, and the last place of each app it read.
    cursors: Mutex<CursorBook>,
    /// The person's own reads (`phonelogs logs`): nobody is asked, the refusals still apply.
    person: bool,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("task_id", &self.inner.task_id)
            .field("agent", &self.inner.spec.agent.name)
            .field("started_at", &self.inner.started_at)
            .finish_non_exhaustive()
    }
}

/// The phone and app a call is about, once resolved.
pub(crate) struct Target {
    pub(crate) driver_index: usize,
    pub(crate) device: DeviceId,
    pub(crate) info: AppInfo,
    pub(crate) label: String,
    /// `info` is what the driver held from its last round trip, not read for this call
    /// ([`crate::GuardedLogger::held_app_info`]): only a read that confirms it may follow, and
    /// only an allowing decision is made on it ([`Session::permits_held`]).
    pub(crate) held: bool,
}

impl Target {
    /// The target of a call: the app as its driver described it, and the name people know it
    /// by (its label, else its id).
    pub(crate) fn new(driver_index: usize, device: DeviceId, info: AppInfo) -> Target {
        let label = info
            .label
            .as_deref()
            .map(clean_label)
            .filter(|l| !l.trim().is_empty())
            .unwrap_or_else(|| info.app.to_string());
        Target {
            driver_index,
            device,
            info,
            label,
            held: false,
        }
    }
}

impl Gateway {
    /// Starts a task now and returns its session.
    pub fn start_task(&self, task: TaskSpec) -> Session {
        Session::start(self.clone(), task)
    }

    /// Starts the person's own reading (`phonelogs logs`): nobody is asked, the refused lists
    /// and blocks apply as to any agent, and the history records the reads as the person's.
    pub fn start_person_read(&self) -> Session {
        Session::start_person(self.clone())
    }
}

impl Session {
    pub(crate) fn start(gateway: Gateway, spec: TaskSpec) -> Session {
        let task_id = new_id("task");
        let started_at = gateway.now();
        if let Err(error) = gateway
            .inner
            .store
            .begin_task(&task_id, &spec.agent.name, started_at)
        {
            tracing::warn!(%error, "could not record the task's start");
        }
        Session {
            inner: Arc::new(SessionInner {
                gateway,
                task_id,
                spec,
                started_at,
                read: Mutex::new(HashSet::new()),
                ended: AtomicBool::new(false),
                steps: AtomicU64::new(0),
                cursors: Mutex::new(CursorBook::default()),
                person: false,
            }),
        }
    }

    /// The person's own reads: a task whose agent is the person ([`catalog::PERSON_READER`]),
    /// which asks nobody (the person is the one reading) while the scope, the refused lists and
    /// the blocks still apply; the history records its reads as the person's.
    pub(crate) fn start_person(gateway: Gateway) -> Session {
        let agent =
            phonelogs_policy::Agent::new(catalog::PERSON_READER, phonelogs_policy::Mode::ReadOnly);
        let mut session = Session::start(gateway, TaskSpec::new(agent));
        if let Some(inner) = Arc::get_mut(&mut session.inner) {
            inner.person = true;
        }
        session
    }

    /// Whether this is the person's own reading ([`Gateway::start_person_read`]).
    pub fn is_person(&self) -> bool {
        self.inner.person
    }

    /// The task's cursors.
    pub(crate) fn cursors(&self) -> std::sync::MutexGuard<'_, CursorBook> {
        self.inner.cursors.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The task's id.
    pub fn task_id(&self) -> &str {
        &self.inner.task_id
    }

    /// The task as started.
    pub fn spec(&self) -> &TaskSpec {
        &self.inner.spec
    }

    /// When the task started.
    pub fn started_at(&self) -> OffsetDateTime {
        self.inner.started_at
    }

    pub(crate) fn gateway(&self) -> &Gateway {
        &self.inner.gateway
    }

    /// Remembers that this task read `app` on the phone, and counts it among the tasks that
    /// read it there, so the driver stops listening when the last of them ends. `false` when
    /// the task has ended: the read must not start (it would start a listener no end stops).
    pub(crate) async fn mark_read(&self, target: &Target) -> bool {
        let key = self.read_key(target);
        let count = self.gateway().inner.readers.of(&key);
        let mut count = count.lock().await;
        // `end` marks the task ended and takes its keys under `read`'s lock: either it takes
        // this key (and waits for this count's lock to give it back), or this call sees the end.
        let new = {
            let mut read = self.inner.read.lock().unwrap_or_else(|p| p.into_inner());
            if self.ended() {
                return false;
            }
            read.insert(key)
        };
        if new {
            *count += 1;
        }
        true
    }

    /// After a read: when the task ended while it ran (its count given back), stops the
    /// listener the read may have started after the end stopped it, unless another live task
    /// reads through it.
    pub(crate) async fn after_read(&self, target: &Target) {
        if !self.ended() {
            return;
        }
        let key = self.read_key(target);
        self.give_back(key, false).await;
    }

    /// Takes one task off `key`'s count (`counted`: this task was on it) and stops the
    /// listener when no live task is left on it. Only this key's count is locked across the
    /// stop.
    async fn give_back(&self, key: ReadKey, counted: bool) {
        let readers = &self.gateway().inner.readers;
        let handle = readers.of(&key);
        {
            let mut count = handle.lock().await;
            if counted {
                *count = count.saturating_sub(1);
            }
            if *count == 0 {
                let (index, device, app) = &key;
                if let Some(listener) = self.driver(*index).listener()
                    && let Err(error) = listener.stop_app_logs(device, app).await
                {
                    tracing::warn!(%error, %device, %app, "could not stop listening");
                }
            }
        }
        readers.forget_if_unused(&key, handle);
    }

    /// What a listener listens to: the driver, the phone as that driver names it (without the
    /// source a list may qualify it with, so the two names one phone can have count as one)
    /// and the app.
    fn read_key(&self, target: &Target) -> ReadKey {
        let device = match self.driver(target.driver_index).inner().source() {
            Some(source) => DeviceId::new(target.device.within(&source)),
            None => target.device.clone(),
        };
        (target.driver_index, device, target.info.app.clone())
    }

    pub(crate) fn driver(&self, index: usize) -> &GuardedLogger {
        &self.inner.gateway.inner.drivers[index]
    }

    /// Whether a read of `app` that began allowed may go on: the task has not ended and the
    /// person has not blocked the app since (a block that cannot be read counts as one).
    pub(crate) fn still_allowed(&self, app: &phonelogs_driver::AppId) -> bool {
        !self.ended() && matches!(self.gateway().inner.store.is_blocked(app), Ok(false))
    }

    /// The private key blocks seen in the apps' lines (`phonelogs_view::masked`).
    pub(crate) fn key_blocks(&self) -> &phonelogs_view::masked::KeyBlocks {
        &self.gateway().inner.key_blocks
    }

    /// The masker for `app`'s lines and reports: `None` only when the person turned masking
    /// off for it; a store that cannot be read masks (fails closed).
    pub(crate) fn masker(&self, app: &AppId) -> Option<&'static phonelogs_view::mask::Masker> {
        match self.gateway().inner.store.is_unmasked(app) {
            Ok(true) => None,
            Ok(false) => Some(phonelogs_view::mask::masker()),
            Err(error) => {
                tracing::warn!(%error, %app, "could not read whether the app is unmasked; masking");
                Some(phonelogs_view::mask::masker())
            }
        }
    }

    pub(crate) fn ended(&self) -> bool {
        self.inner.ended.load(Ordering::SeqCst)
    }

    /// Records a failed step and returns the response for it.
    pub(crate) fn failed(
        &self,
        args: &StepArgs,
        device: Option<&DeviceId>,
        label: &str,
        status: Status,
        message: String,
    ) -> LogsResponse {
        self.record(args, device, status, catalog::step_failed(label));
        LogsResponse::bare(status, message)
    }

    /// Writes a history step. A store that cannot be written to is logged, not fatal: the read
    /// itself already happened or was refused.
    pub(crate) fn record(
        &self,
        args: &StepArgs,
        device: Option<&DeviceId>,
        status: Status,
        step: String,
    ) {
        self.inner.steps.fetch_add(1, Ordering::SeqCst);
        let device = device.map(DeviceId::to_string);
        let result = self.gateway().inner.store.record_step(&NewStep {
            task_id: &self.inner.task_id,
            agent: &self.inner.spec.agent.name,
            device: device.as_deref(),
            status,
            step,
            args: args.clone(),
        });
        if let Err(error) = result {
            tracing::error!(%error, "could not write a history step");
        }
    }

    pub(crate) fn steps_recorded(&self) -> u64 {
        self.inner.steps.load(Ordering::SeqCst)
    }

    /// Waits until the person answers `approval_id` (in this process or another, on any server
    /// of a shared store: [`crate::StoreBackend::wait_answer`]), up to `timeout`. `None` when the time ran out, the approval expired, or there is
    /// no such approval.
    pub async fn wait_for_answer(&self, approval_id: &str, timeout: Duration) -> Option<Answer> {
        let deadline = tokio::time::Instant::now() + timeout;
        self.gateway()
            .inner
            .store
            .wait_answer(approval_id, deadline)
            .await
    }

    /// Ends the task: its pending approvals expire, and every listening driver stops listening
    /// for the apps it read that no other live task reads (two HTTP sessions reading one app on
    /// one iPhone share its follower). Ending twice does nothing more.
    pub async fn end(&self) {
        let read: Vec<ReadKey> = {
            let mut read = self.inner.read.lock().unwrap_or_else(|p| p.into_inner());
            if self.inner.ended.swap(true, Ordering::SeqCst) {
                return;
            }
            read.drain().collect()
        };
        if let Err(error) = self.gateway().inner.store.end_task(&self.inner.task_id) {
            tracing::error!(%error, "could not record the end of the task");
        }
        for key in read {
            self.give_back(key, true).await;
        }
    }
}

pub(crate) fn driver_error_status(
    error: &phonelogs_driver::Error,
    app: &AppId,
    device: &DeviceId,
) -> (Status, String) {
    match error.kind() {
        ErrorKind::Unsupported => (Status::Unsupported, error.to_string()),
        ErrorKind::NotFound => (
            Status::Error,
            catalog::not_installed(app.as_str(), device.as_str()),
        ),
        _ => (Status::Error, error.to_string()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use async_trait::async_trait;
    use phonelogs_driver::{
        Capabilities, CrashReport, DeviceInfo, LogListener, LogQuery, LogResult, Result,
    };
    use phonelogs_fake::{FakeApp, FakePhone};

    /// The fake listener behind a farm's server: lists name its phone `farm:5037/<serial>`, and
    /// it takes both that name and the bare serial, as the Android and iPhone drivers do.
    struct Farm(FakePhone);

    fn bare(device: &DeviceId) -> DeviceId {
        DeviceId::new(device.within("farm:5037"))
    }

    #[async_trait]
    impl AppLogger for Farm {
        fn capabilities(&self) -> Capabilities {
            self.0.capabilities()
        }
        fn source(&self) -> Option<String> {
            Some("farm:5037".into())
        }
        async fn devices(&self) -> Result<Vec<DeviceInfo>> {
            self.0.devices().await
        }
        async fn app_info(&self, device: &DeviceId, app: &AppId) -> Result<AppInfo> {
            self.0.app_info(&bare(device), app).await
        }
        async fn app_logs(&self, d: &DeviceId, a: &AppId, q: &LogQuery) -> Result<LogResult> {
            self.0.app_logs(&bare(d), a, q).await
        }
        async fn app_crashes(
            &self,
            device: &DeviceId,
            app: &AppId,
            since: OffsetDateTime,
            limit: usize,
        ) -> Result<Vec<CrashReport>> {
            self.0.app_crashes(&bare(device), app, since, limit).await
        }
        async fn dev_build(&self, device: &DeviceId, app: &AppId) -> Result<bool> {
            self.0.dev_build(&bare(device), app).await
        }
        fn listener(&self) -> Option<&dyn LogListener> {
            Some(self)
        }
    }

    #[async_trait]
    impl LogListener for Farm {
        async fn stop_app_logs(&self, device: &DeviceId, app: &AppId) -> Result<()> {
            self.0.stop_app_logs(&bare(device), app).await
        }
    }

    /// The listener count's key (commit 0d9fd1e): two tasks that name one phone by its two names
    /// (`farm:5037/emulator-5554` and the bare serial) read through one listener, so the first
    /// task's end leaves it running and the second's stops it.
    #[tokio::test]
    async fn the_two_names_of_one_phone_count_as_one_listeners_readers() {
        let phone = FakePhone::new_listener();
        let serial = DeviceId::new("emulator-5554");
        let app = AppId::new("dev.phonelogs.crashtest");
        phone.add_device(&serial, "Pixel 8");
        phone.add_app(
            &serial,
            FakeApp::new(app.clone()).uid(10123).dev_build(true),
        );
        let gateway = Gateway::builder()
            .driver(Arc::new(Farm(phone.clone())))
            .build()
            .unwrap();
        let info = phone.app_info(&serial, &app).await.unwrap();
        let target = |name: &str| Target {
            driver_index: 0,
            device: DeviceId::new(name),
            info: info.clone(),
            label: "Crash Test".into(),
            held: false,
        };
        let agent = || {
            TaskSpec::new(phonelogs_policy::Agent::new(
                "agent",
                phonelogs_policy::Mode::Full,
            ))
        };
        let first = gateway.start_task(agent());
        let second = gateway.start_task(agent());
        assert!(first.mark_read(&target("farm:5037/emulator-5554")).await);
        assert!(second.mark_read(&target("emulator-5554")).await);
        phone
            .app_logs(
                &serial,
                &app,
                &LogQuery::since(OffsetDateTime::UNIX_EPOCH, 10),
            )
            .await
            .unwrap();
        assert!(phone.is_listening(&serial, &app));
        first.end().await;
        assert!(
            phone.is_listening(&serial, &app),
            "one name's end stopped the listener the other name reads"
        );
        second.end().await;
        assert!(!phone.is_listening(&serial, &app));
    }
}
