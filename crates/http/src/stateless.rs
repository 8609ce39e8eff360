//! A task on the stateless wire (MCP 2026-07-28), where there is no session to be one.
//!
//! Over 2025-11-25 a task is an MCP session. A 2026-07-28 request carries no session, and a task
//! per request would make every call a new task: an approval could never be picked up by the
//! retry, "Allow for this task" would cover one call, `since: "last"` would have nothing to
//! follow. So on this wire **a task is the token's**: every stateless request that a token
//! authenticates is served by that token's one task ([`TokenTask`]), started on its first
//! request and ended once no request of the token has been served for `--http-idle-timeout`
//! (the next request starts a new task, which asks again). The task is found from the token
//! the request was authenticated with, never from anything the client sends, so no agent can
//! reach another token's task; the sealed `requestState` of an `input_required` is bound to the
//! task's id too, so it is refused under another token.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use super::Handler;
use super::session::{EndsTask, HttpSession};

/// Makes a new task's server.
type Make<H> = Box<dyn Fn() -> Result<H, phonelogs_mcp_frontend::Error> + Send + Sync>;

/// One token's task on the stateless wire.
pub struct TokenTask<H> {
    make: Make<H>,
    idle: Duration,
    current: Mutex<Option<Current<H>>>,
}

/// The task being served, and its use.
struct Current<H> {
    server: H,
    lease: Arc<Lease>,
}

/// Shared by every request of the task in flight: ends the task when the last share goes
/// (the request that was in flight when the task was replaced, or [`TokenTask::reap`]).
struct Lease {
    _ends: EndsTask,
    /// When a request of the task last started or ended.
    last: Mutex<Instant>,
}

impl Lease {
    fn touch(&self) {
        if let Ok(mut last) = self.last.lock() {
            *last = Instant::now();
        }
    }

    fn idle_for(&self) -> Duration {
        self.last
            .lock()
            .map(|last| last.elapsed())
            .unwrap_or_default()
    }
}

/// One request's share of the task: marks the task used when the request ends.
pub struct InUse(Arc<Lease>);

impl Drop for InUse {
    fn drop(&mut self) {
        self.0.touch();
    }
}

impl<H: Handler> TokenTask<H> {
    /// A token's task, made by `make` when first needed, ended after `idle` without requests.
    pub fn new(make: Make<H>, idle: Duration) -> Arc<TokenTask<H>> {
        Arc::new(TokenTask {
            make,
            idle,
            current: Mutex::new(None),
        })
    }

    /// The server of the token's task for one request: the running task unless it is idle
    /// past the timeout (then a new one; the old one ends once its last request has).
    pub fn serve_request(&self) -> Result<HttpSession<H>, std::io::Error> {
        let mut current = self
            .current
            .lock()
            .map_err(|_| std::io::Error::other("the token's task lock was poisoned"))?;
        if let Some(running) = current.as_ref().filter(|c| !self.expired(c)) {
            running.lease.touch();
            let in_use = InUse(running.lease.clone());
            return Ok(HttpSession::request(running.server.clone(), in_use));
        }
        let server = (self.make)().map_err(std::io::Error::other)?;
        tracing::info!(
            task = server.session().task_id(),
            "a stateless HTTP task started"
        );
        let lease = Arc::new(Lease {
            _ends: EndsTask::of(&server),
            last: Mutex::new(Instant::now()),
        });
        let in_use = InUse(lease.clone());
        *current = Some(Current {
            server: server.clone(),
            lease,
        });
        Ok(HttpSession::request(server, in_use))
    }

    /// A task is over when no request of it is in flight and none was for `idle`.
    fn expired(&self, current: &Current<H>) -> bool {
        Arc::strong_count(&current.lease) == 1 && current.lease.idle_for() >= self.idle
    }

    /// Ends the task if it is idle past the timeout, so its pending questions expire without
    /// waiting for the token's next request.
    pub fn reap(&self) {
        let Ok(mut current) = self.current.lock() else {
            return;
        };
        if current.as_ref().is_some_and(|c| self.expired(c)) {
            *current = None;
        }
    }

    /// The id of the task serving the token now, if any (tests).
    #[cfg(test)]
    pub fn task_id(&self) -> Option<String> {
        let current = self.current.lock().ok()?;
        current
            .as_ref()
            .map(|c| c.server.session().task_id().to_owned())
    }

    /// Reaps idle tasks every so often until the process ends.
    pub fn spawn_reaper(tasks: Vec<Arc<TokenTask<H>>>, every: Duration) {
        if tasks.is_empty() {
            return;
        }
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                for task in &tasks {
                    task.reap();
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use phonelogs_gateway::{Gateway, TaskSpec};
    use phonelogs_mcp_frontend::{PhoneLogsServer, ServerOptions};
    use phonelogs_policy::{Agent, Mode};

    const IDLE: Duration = Duration::from_secs(300);

    fn token_task(dir: &std::path::Path) -> Arc<TokenTask<PhoneLogsServer>> {
        let gateway = Gateway::builder().state_dir(dir).build().unwrap();
        let spec = TaskSpec {
            agent: Agent::new("ci-agent", Mode::Full),
            apps: None,
            devices: None,
        };
        let make: Make<PhoneLogsServer> = Box::new(move || {
            PhoneLogsServer::new(gateway.clone(), spec.clone(), ServerOptions::default())
        });
        TokenTask::new(make, IDLE)
    }

    /// One task serves every request of the token until it has been idle for the timeout, a
    /// request in flight keeping it; then the next request starts a new task.
    #[tokio::test(start_paused = true)]
    async fn a_tokens_requests_share_one_task_until_it_is_idle() {
        let dir = tempfile::tempdir().unwrap();
        let task = token_task(dir.path());
        assert_eq!(task.task_id(), None);
        let first = task.serve_request().unwrap();
        let id = task.task_id().unwrap();
        drop(first);
        tokio::time::advance(IDLE / 2).await;
        let _second = task.serve_request().unwrap();
        assert_eq!(task.task_id().as_deref(), Some(id.as_str()));

        // In flight past the timeout: still the same task, and not reaped.
        tokio::time::advance(IDLE * 2).await;
        task.reap();
        assert_eq!(task.task_id().as_deref(), Some(id.as_str()));
        drop(_second);

        // Idle past the timeout after its last request ended: reaped, then a new task.
        tokio::time::advance(IDLE).await;
        task.reap();
        assert_eq!(task.task_id(), None);
        let _third = task.serve_request().unwrap();
        let new = task.task_id().unwrap();
        assert_ne!(new, id);
    }
}
