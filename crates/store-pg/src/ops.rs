//! The store's operations in SQL, each one transaction (or one statement), on a connection of
//! the pool. The SQLite backend's rules, said in PostgreSQL: `seq` keeps the order SQLite's
//! rowid keeps, an agent's questions are asked one at a time over all servers (an advisory
//! lock per agent, as SQLite's `BEGIN IMMEDIATE` does for one file), and an answer is applied
//! only by the `UPDATE` that finds its question still waiting.

use deadpool_postgres::{Client, Transaction};
use phonelogs_driver::{AppId, DeviceId};
use phonelogs_gateway::store::{
    Asked, NewApproval, QuestionCap, UNANSWERED_REST, cap_reached, now_text, rfc3339,
};
use phonelogs_gateway::{
    Action, Answer, AnsweredVia, Approval, ApprovalState, Error, HistoryFilter, HistoryStep,
    StandingRule, Status, StepArgs, agent_text, catalog, new_id,
};
use time::OffsetDateTime;
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use crate::Failure;
use crate::listen::CHANNEL;

type Params<'a> = &'a [&'a (dyn ToSql + Sync)];

/// The rows of one statement, prepared once per connection.
pub(crate) async fn rows(
    client: &Client,
    sql: &str,
    params: Params<'_>,
) -> Result<Vec<Row>, Failure> {
    let statement = client.prepare_cached(sql).await?;
    Ok(client.query(&statement, params).await?)
}

async fn tx_rows(tx: &Transaction<'_>, sql: &str, params: Params<'_>) -> Result<Vec<Row>, Failure> {
    let statement = tx.prepare_cached(sql).await?;
    Ok(tx.query(&statement, params).await?)
}

async fn tx_exec(tx: &Transaction<'_>, sql: &str, params: Params<'_>) -> Result<u64, Failure> {
    let statement = tx.prepare_cached(sql).await?;
    Ok(tx.execute(&statement, params).await?)
}

/// Whether one statement finds a row.
pub(crate) async fn exists(
    client: &Client,
    sql: &str,
    params: Params<'_>,
) -> Result<bool, Failure> {
    Ok(!rows(client, sql, params).await?.is_empty())
}

pub(crate) const APPROVAL_COLUMNS: &str = "id, task_id, agent, device, app, app_label, question, rule, created_at, answer, state, action, detail, answered_via";

pub(crate) fn approval_from_row(row: &Row) -> Result<Approval, Failure> {
    let answer: Option<String> = row.try_get(9)?;
    let state: String = row.try_get(10)?;
    let action: String = row.try_get(11)?;
    let via: Option<String> = row.try_get(13)?;
    Ok(Approval {
        // An action this build does not know is `None`: no call of this build can pick it up.
        action: Action::parse(&action),
        detail: row.try_get(12)?,
        answered_via: via.as_deref().and_then(AnsweredVia::parse),
        id: row.try_get(0)?,
        task_id: row.try_get(1)?,
        agent: row.try_get(2)?,
        device: row.try_get(3)?,
        app: row.try_get(4)?,
        app_label: row.try_get(5)?,
        question: row.try_get(6)?,
        rule: row.try_get(7)?,
        created_at: row.try_get(8)?,
        answer: answer.as_deref().and_then(Answer::parse),
        state: ApprovalState::parse(&state),
    })
}

pub(crate) async fn approval(client: &Client, id: &str) -> Result<Option<Approval>, Failure> {
    let sql = format!("SELECT {APPROVAL_COLUMNS} FROM approvals WHERE id = $1");
    rows(client, &sql, &[&id])
        .await?
        .first()
        .map(approval_from_row)
        .transpose()
}

pub(crate) async fn pending_approvals(client: &Client) -> Result<Vec<Approval>, Failure> {
    let sql = format!(
        "SELECT {APPROVAL_COLUMNS} FROM approvals WHERE state = 'pending' ORDER BY created_at, seq"
    );
    rows(client, &sql, &[])
        .await?
        .iter()
        .map(approval_from_row)
        .collect()
}

/// Answers once: the `UPDATE` that finds the question waiting applies it, with its grant, its
/// rule, its history step and the notification that wakes waiting calls on every server, all
/// at one commit. A question answered, expired or unknown is told as such.
pub(crate) async fn answer_via(
    client: &mut Client,
    id: &str,
    answer: Answer,
    via: AnsweredVia,
    committing: &std::sync::atomic::AtomicBool,
) -> Result<(), Failure> {
    let tx = client.transaction().await?;
    let now = now_text();
    let updated = tx_rows(
        &tx,
        "UPDATE approvals SET state = 'answered', answer = $2, answered_at = $3, answered_via = $4
         WHERE id = $1 AND state = 'pending'
         RETURNING task_id, agent, device, app, action, question",
        &[&id, &answer.as_str(), &now, &via.as_str()],
    )
    .await?;
    let Some(row) = updated.first() else {
        let state = tx_rows(&tx, "SELECT state FROM approvals WHERE id = $1", &[&id]).await?;
        let error = match state
            .first()
            .map(|r| r.try_get::<_, String>(0))
            .transpose()?
        {
            None => Error::UnknownApproval(id.to_owned()),
            Some(state) if state == "expired" => Error::ApprovalExpired(id.to_owned()),
            Some(_) => Error::AlreadyAnswered(id.to_owned()),
        };
        return Err(error.into());
    };
    let (task, agent, device, app, action, question): (
        String,
        String,
        String,
        String,
        String,
        String,
    ) = (
        row.try_get(0)?,
        row.try_get(1)?,
        row.try_get(2)?,
        row.try_get(3)?,
        row.try_get(4)?,
        row.try_get(5)?,
    );
    // An approval of an action this build does not know grants nothing.
    let action = Action::parse(&action).map_or("", Action::as_str);
    if matches!(answer, Answer::Task | Answer::Always) {
        tx_exec(
            &tx,
            "INSERT INTO task_grants (task_id, device, app, action) VALUES ($1, $2, $3, $4)
             ON CONFLICT DO NOTHING",
            &[&task, &device, &app, &action],
        )
        .await?;
    }
    if answer == Answer::Always {
        tx_exec(
            &tx,
            "INSERT INTO standing_rules (id, agent, device, app, action, created_at)
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
            &[&new_id("rule"), &agent, &device, &app, &action, &now],
        )
        .await?;
    }
    let status = if answer == Answer::Deny {
        Status::Denied
    } else {
        Status::Ok
    };
    tx_exec(
        &tx,
        "INSERT INTO history (at, task_id, agent, device, status, step, app, kind)
         VALUES ($1, $2, $3, $4, $5, $6, $7, 'answer')",
        &[
            &now,
            &task,
            &agent,
            &device,
            &status.as_str(),
            &catalog::step_answered(answer, via, &question),
            &app,
        ],
    )
    .await?;
    tx_exec(&tx, "SELECT pg_notify($1, $2)", &[&CHANNEL, &id]).await?;
    committing.store(true, std::sync::atomic::Ordering::SeqCst);
    tx.commit().await?;
    Ok(())
}

pub(crate) async fn history(
    client: &Client,
    filter: HistoryFilter,
) -> Result<Vec<HistoryStep>, Failure> {
    let limit = filter.limit.map(|l| i64::try_from(l).unwrap_or(i64::MAX));
    let status = filter.status.map(Status::as_str);
    let found = rows(
        client,
        "SELECT id, at, task_id, agent, device, status, step, app, kind, since, filter, level, lim,
                exclude, tags
         FROM history
         WHERE ($1::TEXT IS NULL OR task_id = $1) AND ($2::TEXT IS NULL OR agent = $2)
           AND ($3::TEXT IS NULL OR app = $3) AND ($5::TEXT IS NULL OR device = $5)
           AND ($6::TEXT IS NULL OR status = $6)
         ORDER BY id DESC LIMIT $4",
        &[
            &filter.task_id,
            &filter.agent,
            &filter.app,
            &limit,
            &filter.device,
            &status,
        ],
    )
    .await?;
    let mut steps = Vec::with_capacity(found.len());
    for row in found.iter().rev() {
        let status: String = row.try_get(5)?;
        let limit: Option<i64> = row.try_get(12)?;
        steps.push(HistoryStep {
            id: row.try_get(0)?,
            at: row.try_get(1)?,
            task_id: row.try_get(2)?,
            agent: row.try_get(3)?,
            device: row.try_get(4)?,
            status: Status::parse(&status).unwrap_or(Status::Error),
            step: row.try_get(6)?,
            args: StepArgs {
                app: row.try_get(7)?,
                kind: row.try_get(8)?,
                since: row.try_get(9)?,
                filter: row.try_get(10)?,
                exclude: row.try_get(13)?,
                tags: row.try_get(14)?,
                level: row.try_get(11)?,
                limit: limit.and_then(|l| u32::try_from(l).ok()),
            },
        });
    }
    Ok(steps)
}

pub(crate) async fn rules(client: &Client) -> Result<Vec<StandingRule>, Failure> {
    let found = rows(
        client,
        "SELECT id, agent, device, app, created_at, action FROM standing_rules ORDER BY created_at, seq",
        &[],
    )
    .await?;
    let mut rules = Vec::new();
    for row in &found {
        let action: String = row.try_get(5)?;
        // A rule whose action this build does not know covers nothing: it is left out.
        let Some(action) = Action::parse(&action) else {
            continue;
        };
        rules.push(StandingRule {
            id: row.try_get(0)?,
            agent: row.try_get(1)?,
            device: DeviceId::new(row.try_get::<_, String>(2)?),
            app: AppId::new(row.try_get::<_, String>(3)?),
            action,
            created_at: row.try_get(4)?,
        });
    }
    Ok(rules)
}

/// One statement in a transaction of its own, with the number of rows it changed.
pub(crate) async fn write(
    client: &mut Client,
    sql: &str,
    params: Params<'_>,
) -> Result<u64, Failure> {
    let tx = client.transaction().await?;
    let changed = tx_exec(&tx, sql, params).await?;
    tx.commit().await?;
    Ok(changed)
}

/// Turns masking off (`unmask`) or back on for `app`, with its history step.
pub(crate) async fn person_setting(
    client: &mut Client,
    app: &str,
    via: AnsweredVia,
    unmask: bool,
) -> Result<(), Failure> {
    let tx = client.transaction().await?;
    let now = now_text();
    let step = if unmask {
        tx_exec(
            &tx,
            "INSERT INTO unmasked_apps (app, created_at) VALUES ($1, $2) ON CONFLICT DO NOTHING",
            &[&app, &now],
        )
        .await?;
        catalog::step_unmasked(app, via)
    } else {
        if tx_exec(&tx, "DELETE FROM unmasked_apps WHERE app = $1", &[&app]).await? == 0 {
            return Err(Error::NotUnmasked(app.to_owned()).into());
        }
        catalog::step_masked(app, via)
    };
    tx_exec(
        &tx,
        "INSERT INTO history (at, task_id, agent, status, step, app, kind)
         VALUES ($1, '', $2, 'ok', $3, $4, $5)",
        &[
            &now,
            &catalog::PERSON_SETTINGS,
            &step,
            &app,
            &if unmask { "unmask" } else { "mask" },
        ],
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

pub(crate) async fn end_task(client: &mut Client, task: &str) -> Result<(), Failure> {
    let tx = client.transaction().await?;
    let now = now_text();
    tx_exec(
        &tx,
        "UPDATE tasks SET ended_at = $2 WHERE id = $1 AND ended_at IS NULL",
        &[&task, &now],
    )
    .await?;
    // As on SQLite: unanswered questions and unused "Allow once" answers expire, and the
    // task's grants go; its standing rules are the person's own and stay.
    tx_exec(
        &tx,
        "UPDATE approvals SET state = 'expired' WHERE task_id = $1
           AND (state = 'pending' OR (state = 'answered' AND answer = 'once'))",
        &[&task],
    )
    .await?;
    tx_exec(&tx, "DELETE FROM task_grants WHERE task_id = $1", &[&task]).await?;
    tx.commit().await?;
    Ok(())
}

/// A question to ask, owned (it crosses to the store's runtime).
#[derive(Debug, Clone)]
pub(crate) struct Ask {
    pub task_id: String,
    pub agent: String,
    pub device: DeviceId,
    pub app: AppId,
    pub app_label: String,
    pub action: Action,
    pub detail: String,
    pub question: String,
    pub rule: String,
}

impl Ask {
    pub(crate) fn of(ask: &NewApproval<'_>) -> Ask {
        Ask {
            task_id: ask.task_id.to_owned(),
            agent: ask.agent.to_owned(),
            device: ask.device.clone(),
            app: ask.app.clone(),
            app_label: ask.app_label.to_owned(),
            action: ask.action,
            detail: ask.detail.to_owned(),
            question: ask.question.to_owned(),
            rule: ask.rule.to_owned(),
        }
    }

    fn borrowed(&self) -> NewApproval<'_> {
        NewApproval {
            task_id: &self.task_id,
            agent: &self.agent,
            device: &self.device,
            app: &self.app,
            app_label: &self.app_label,
            action: self.action,
            detail: &self.detail,
            question: &self.question,
            rule: &self.rule,
        }
    }
}

/// The waiting question of this call, or a new one, or what a cap says: the agent's questions
/// are asked one at a time over every server (an advisory lock on the agent's name).
pub(crate) async fn pending_or_create(
    client: &mut Client,
    ask: &Ask,
    now: OffsetDateTime,
) -> Result<Asked, Failure> {
    let tx = client.transaction().await?;
    tx_exec(
        &tx,
        "SELECT pg_advisory_xact_lock(hashtext($1))",
        &[&ask.agent],
    )
    .await?;
    let sql = format!(
        "SELECT {APPROVAL_COLUMNS} FROM approvals
         WHERE task_id = $1 AND agent = $2 AND device = $3 AND app = $4
           AND action = $5 AND detail = $6 AND state = 'pending'
         ORDER BY seq LIMIT 1"
    );
    let existing = tx_rows(
        &tx,
        &sql,
        &[
            &ask.task_id,
            &ask.agent,
            &ask.device.as_str(),
            &ask.app.as_str(),
            &ask.action.as_str(),
            &ask.detail,
        ],
    )
    .await?;
    if let Some(row) = existing.first() {
        return Ok(Asked::Shared(approval_from_row(row)?));
    }
    for cap in [QuestionCap::Action, QuestionCap::Agent] {
        if let Some(asked) = capped_by(&tx, ask, cap).await? {
            return Ok(asked);
        }
    }
    let approval = Approval {
        id: new_id("ap"),
        task_id: ask.task_id.clone(),
        agent: ask.agent.clone(),
        device: ask.device.to_string(),
        app: ask.app.to_string(),
        app_label: ask.app_label.clone(),
        action: Some(ask.action),
        detail: ask.detail.clone(),
        question: ask.question.clone(),
        rule: ask.rule.clone(),
        created_at: rfc3339(now),
        answer: None,
        answered_via: None,
        state: ApprovalState::Pending,
    };
    tx_exec(
        &tx,
        "INSERT INTO approvals (id, task_id, agent, device, app, app_label, question, rule, created_at, state, action, detail)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending', $10, $11)",
        &[
            &approval.id,
            &approval.task_id,
            &approval.agent,
            &approval.device,
            &approval.app,
            &approval.app_label,
            &approval.question,
            &approval.rule,
            &approval.created_at,
            &ask.action.as_str(),
            &approval.detail,
        ],
    )
    .await?;
    tx.commit().await?;
    Ok(Asked::New(approval))
}

/// One cap's count, as the SQLite store counts it (see its `capped_by`).
async fn capped_by(
    tx: &Transaction<'_>,
    ask: &Ask,
    cap: QuestionCap,
) -> Result<Option<Asked>, Failure> {
    let (action, app) = match cap {
        QuestionCap::Action => (Some(ask.action.as_str()), Some(ask.app.as_str())),
        QuestionCap::Agent => (None, None),
    };
    let sql = format!(
        "SELECT {APPROVAL_COLUMNS} FROM approvals
         WHERE agent = $1 AND ($2::TEXT IS NULL OR (action = $2 AND app = $3))
           AND state = 'pending'
         ORDER BY seq"
    );
    let waiting = tx_rows(tx, &sql, &[&ask.agent, &action, &app])
        .await?
        .iter()
        .map(approval_from_row)
        .collect::<Result<Vec<_>, _>>()?;
    let rest = time::Duration::try_from(UNANSWERED_REST).unwrap_or(time::Duration::ZERO);
    let cutoff = rfc3339(OffsetDateTime::now_utc() - rest);
    let resting = tx_rows(
        tx,
        "SELECT COUNT(DISTINCT a.action || E'\\n' || a.app || E'\\n' || a.detail), MIN(t.ended_at)
         FROM approvals a JOIN tasks t ON t.id = a.task_id
         WHERE a.agent = $1 AND ($2::TEXT IS NULL OR (a.action = $2 AND a.app = $3))
           AND NOT (a.action = $4 AND a.app = $5 AND a.detail = $6)
           AND a.state = 'expired' AND a.answer IS NULL
           AND t.ended_at::TIMESTAMPTZ >= $7::TEXT::TIMESTAMPTZ",
        &[
            &ask.agent,
            &action,
            &app,
            &ask.action.as_str(),
            &ask.app.as_str(),
            &ask.detail,
            &cutoff,
        ],
    )
    .await?;
    let (count, first_end): (i64, Option<String>) = match resting.first() {
        Some(row) => (row.try_get(0)?, row.try_get(1)?),
        None => (0, None),
    };
    Ok(cap_reached(
        waiting,
        usize::try_from(count).unwrap_or(usize::MAX),
        first_end.as_deref(),
        &ask.borrowed(),
        cap,
    ))
}

/// A history step, owned (it crosses to the store's runtime); every text of the agent's is cut
/// by [`agent_text`] before it is.
#[derive(Debug, Clone)]
pub(crate) struct Step {
    pub task_id: String,
    pub agent: String,
    pub device: Option<String>,
    pub status: Status,
    pub step: String,
    pub args: StepArgs,
}

impl Step {
    pub(crate) fn of(step: &phonelogs_gateway::store::NewStep<'_>) -> Step {
        let cut = |text: &Option<String>| text.as_deref().map(agent_text);
        Step {
            task_id: step.task_id.to_owned(),
            agent: step.agent.to_owned(),
            device: step.device.map(str::to_owned),
            status: step.status,
            step: step.step.clone(),
            args: StepArgs {
                app: agent_text(&step.args.app),
                kind: agent_text(&step.args.kind),
                since: cut(&step.args.since),
                filter: cut(&step.args.filter),
                exclude: cut(&step.args.exclude),
                tags: cut(&step.args.tags),
                level: cut(&step.args.level),
                limit: step.args.limit,
            },
        }
    }
}

pub(crate) async fn record_step(client: &Client, step: &Step) -> Result<(), Failure> {
    let limit = step.args.limit.map(i64::from);
    rows(
        client,
        "INSERT INTO history (at, task_id, agent, device, status, step, app, kind, since, filter, level, lim, exclude, tags)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
        &[
            &now_text(),
            &step.task_id,
            &step.agent,
            &step.device,
            &step.status.as_str(),
            &step.step,
            &step.args.app,
            &step.args.kind,
            &step.args.since,
            &step.args.filter,
            &step.args.level,
            &limit,
            &step.args.exclude,
            &step.args.tags,
        ],
    )
    .await?;
    Ok(())
}
