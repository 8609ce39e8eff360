//! [`StoreBackend`] for [`PgStore`]: each operation runs on the store's runtime
//! ([`PgStore::run`]) with a connection of the pool; waiting for an answer listens for its
//! notification and reads the approval again every [`PgOptions::poll`](crate::PgOptions::poll).

use phonelogs_driver::{AppId, DeviceId};
use phonelogs_gateway::store::{Asked, NewApproval, NewStep, StoreBackend, answered, person_only};
use phonelogs_gateway::{
    Action, Answer, AnsweredVia, Approval, Error, HistoryFilter, HistoryStep, StandingRule,
};
use time::OffsetDateTime;
use tokio::sync::broadcast::error::RecvError;

use crate::listen::ANY;
use crate::ops::{self, Ask, Step, exists};
use crate::{PgStore, schema};

#[async_trait::async_trait]
impl StoreBackend for PgStore {
    fn describe(&self) -> String {
        self.inner.name.clone()
    }

    fn pending_approvals(&self) -> Result<Vec<Approval>, Error> {
        self.run(|pool| async move { ops::pending_approvals(&pool.get().await?).await })
    }

    fn approval(&self, approval_id: &str) -> Result<Option<Approval>, Error> {
        let id = approval_id.to_owned();
        self.run(move |pool| async move { ops::approval(&pool.get().await?, &id).await })
    }

    fn answer_via(&self, approval_id: &str, answer: Answer, via: AnsweredVia) -> Result<(), Error> {
        let id = approval_id.to_owned();
        // Set once the COMMIT is sent: a failure after it (the connection lost, the deadline
        // passed) leaves the outcome unknown; one before it applied nothing.
        let committing = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let sent = committing.clone();
        self.run(move |pool| async move {
            ops::answer_via(&mut pool.get().await?, &id, answer, via, &sent).await
        })
        .map_err(|error| {
            if committing.load(std::sync::atomic::Ordering::SeqCst) {
                outcome_unknown(error)
            } else {
                error
            }
        })
    }

    fn history(&self, filter: HistoryFilter) -> Result<Vec<HistoryStep>, Error> {
        self.run(move |pool| async move { ops::history(&pool.get().await?, filter).await })
    }

    fn rules(&self) -> Result<Vec<StandingRule>, Error> {
        self.run(|pool| async move { ops::rules(&pool.get().await?).await })
    }

    fn revoke_rule(&self, id: &str) -> Result<(), Error> {
        let id = id.to_owned();
        self.run(move |pool| async move {
            let sql = "DELETE FROM standing_rules WHERE id = $1";
            match ops::write(&mut pool.get().await?, sql, &[&id]).await? {
                0 => Err(Error::UnknownRule(id).into()),
                _ => Ok(()),
            }
        })
    }

    fn block_app(&self, app: &AppId) -> Result<(), Error> {
        let app = app.to_string();
        self.run(move |pool| async move {
            let sql =
                "INSERT INTO blocked_apps (app, created_at) VALUES ($1, $2) ON CONFLICT DO NOTHING";
            let now = phonelogs_gateway::store::now_text();
            ops::write(&mut pool.get().await?, sql, &[&app, &now]).await?;
            Ok(())
        })
    }

    fn unblock_app(&self, app: &AppId) -> Result<(), Error> {
        let app = app.to_string();
        self.run(move |pool| async move {
            let sql = "DELETE FROM blocked_apps WHERE app = $1";
            match ops::write(&mut pool.get().await?, sql, &[&app]).await? {
                0 => Err(Error::NotBlocked(app).into()),
                _ => Ok(()),
            }
        })
    }

    fn blocked_apps(&self) -> Result<Vec<AppId>, Error> {
        self.run(|pool| async move {
            let client = pool.get().await?;
            let found =
                ops::rows(&client, "SELECT app FROM blocked_apps ORDER BY app", &[]).await?;
            found
                .iter()
                .map(|row| Ok(AppId::new(row.try_get::<_, String>(0)?)))
                .collect()
        })
    }

    fn unmask_app(&self, app: &AppId, via: AnsweredVia) -> Result<(), Error> {
        person_only(via)?;
        let app = app.to_string();
        self.run(move |pool| async move {
            ops::person_setting(&mut pool.get().await?, &app, via, true).await
        })
    }

    fn mask_app(&self, app: &AppId, via: AnsweredVia) -> Result<(), Error> {
        person_only(via)?;
        let app = app.to_string();
        self.run(move |pool| async move {
            ops::person_setting(&mut pool.get().await?, &app, via, false).await
        })
    }

    fn unmasked_apps(&self) -> Result<Vec<(AppId, String)>, Error> {
        self.run(|pool| async move {
            let client = pool.get().await?;
            let sql = "SELECT app, created_at FROM unmasked_apps ORDER BY app";
            let found = ops::rows(&client, sql, &[]).await?;
            found
                .iter()
                .map(|row| Ok((AppId::new(row.try_get::<_, String>(0)?), row.try_get(1)?)))
                .collect()
        })
    }

    fn is_unmasked(&self, app: &AppId) -> Result<bool, Error> {
        let app = app.to_string();
        self.run(move |pool| async move {
            let sql = "SELECT 1 FROM unmasked_apps WHERE app = $1";
            exists(&pool.get().await?, sql, &[&app]).await
        })
    }

    fn is_blocked(&self, app: &AppId) -> Result<bool, Error> {
        let app = app.to_string();
        self.run(move |pool| async move {
            let sql = "SELECT 1 FROM blocked_apps WHERE app = $1";
            exists(&pool.get().await?, sql, &[&app]).await
        })
    }

    fn begin_task(
        &self,
        task_id: &str,
        agent: &str,
        started_at: OffsetDateTime,
    ) -> Result<(), Error> {
        let (task, agent) = (task_id.to_owned(), agent.to_owned());
        let started = phonelogs_gateway::store::rfc3339(started_at);
        self.run(move |pool| async move {
            let sql = "INSERT INTO tasks (id, agent, started_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING";
            ops::write(&mut pool.get().await?, sql, &[&task, &agent, &started]).await?;
            Ok(())
        })
    }

    fn end_task(&self, task_id: &str) -> Result<(), Error> {
        let task = task_id.to_owned();
        self.run(move |pool| async move { ops::end_task(&mut pool.get().await?, &task).await })
    }

    fn task_ended(&self, task_id: &str) -> Result<bool, Error> {
        let task = task_id.to_owned();
        self.run(move |pool| async move {
            let sql = "SELECT 1 FROM tasks WHERE id = $1 AND ended_at IS NOT NULL";
            exists(&pool.get().await?, sql, &[&task]).await
        })
    }

    fn covered(
        &self,
        task_id: &str,
        agent: &str,
        device: &DeviceId,
        app: &AppId,
        action: Action,
    ) -> Result<bool, Error> {
        let (task, agent) = (task_id.to_owned(), agent.to_owned());
        let (device, app) = (device.to_string(), app.to_string());
        self.run(move |pool| async move {
            let client = pool.get().await?;
            let action = action.as_str();
            let sql = "SELECT 1 FROM task_grants WHERE task_id = $1 AND device = $2 AND app = $3 AND action = $4
                       UNION ALL
                       SELECT 1 FROM standing_rules WHERE agent = $5 AND device = $2 AND app = $3 AND action = $4
                       LIMIT 1";
            exists(&client, sql, &[&task, &device, &app, &action, &agent]).await
        })
    }

    fn pending_or_create(
        &self,
        ask: &NewApproval<'_>,
        now: OffsetDateTime,
    ) -> Result<Asked, Error> {
        let ask = Ask::of(ask);
        self.run(move |pool| async move {
            ops::pending_or_create(&mut pool.get().await?, &ask, now).await
        })
    }

    fn use_once(&self, approval_id: &str) -> Result<bool, Error> {
        let id = approval_id.to_owned();
        self.run(move |pool| async move {
            let sql = "UPDATE approvals SET state = 'used' WHERE id = $1 AND state = 'answered' AND answer = 'once'";
            Ok(ops::write(&mut pool.get().await?, sql, &[&id]).await? == 1)
        })
    }

    fn record_step(&self, step: &NewStep<'_>) -> Result<(), Error> {
        let step = Step::of(step);
        self.run(move |pool| async move { ops::record_step(&pool.get().await?, &step).await })
    }

    /// Reads the approval, then waits for its notification (or any wake-up after the listener
    /// connected again), reading it again at least every poll interval, until the deadline.
    async fn wait_answer(
        &self,
        approval_id: &str,
        deadline: tokio::time::Instant,
    ) -> Option<Answer> {
        let mut wakeups = self.inner.wakeups.as_ref().map(|w| w.subscribe());
        let poll = self.inner.options.poll;
        loop {
            let id = approval_id.to_owned();
            let read = self
                .call(move |pool| async move { ops::approval(&pool.get().await?, &id).await })
                .await;
            if let Some(done) = answered(read) {
                return done;
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return None;
            }
            let next = now + poll.min(deadline - now);
            match wakeups.as_mut() {
                Some(wakeups) => wait_for(wakeups, approval_id, next).await,
                None => tokio::time::sleep_until(next).await,
            }
        }
    }
}

/// Waits until `approval_id` (or every waiting call) is woken, a wake-up was missed, or
/// `until`.
async fn wait_for(
    wakeups: &mut tokio::sync::broadcast::Receiver<crate::listen::Wakeup>,
    approval_id: &str,
    until: tokio::time::Instant,
) {
    loop {
        tokio::select! {
            woken = wakeups.recv() => match woken {
                Ok(id) if &*id == approval_id || &*id == ANY => return,
                Ok(_) => {}
                Err(RecvError::Lagged(_) | RecvError::Closed) => return,
            },
            () = tokio::time::sleep_until(until) => return,
        }
    }
}

impl PgStore {
    /// Checks the schema again (the doctor): `Ok` when the database has this build's.
    pub fn check(&self) -> Result<(), Error> {
        self.run(|pool| async move {
            let client = pool.get().await?;
            schema::check(&client).await
        })
    }
}

/// A connection lost (or the deadline passed) once the answer's `COMMIT` was sent leaves the
/// outcome unknown to
/// this server, though the database may have applied it: the person is told so, and that
/// answering again is safe (an applied answer refuses a second one).
fn outcome_unknown(error: Error) -> Error {
    match error {
        Error::Store { store, message } => Error::Store {
            store,
            message: format!(
                "{message}. The answer may have been applied before the connection failed: \
                 `phonelogs approvals` shows whether it is still waiting; answering again is \
                 safe (an answer already applied is refused as answered already)"
            ),
        },
        other => other,
    }
}
