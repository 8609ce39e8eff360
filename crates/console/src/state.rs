//! The state commands: `approvals`, `history` and `rules`, over the SQLite store the MCP server
//! shares.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use phonelogs_driver::AppId;
use phonelogs_gateway::{Answer, Approval, HistoryFilter, Store};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::{Doing, Result};

/// The state directory: `--state-dir`, else the rule the MCP server uses too
/// ([`phonelogs_gateway::default_state_dir`]).
pub fn state_dir(given: Option<PathBuf>) -> Result<PathBuf> {
    match given {
        Some(dir) => Ok(dir),
        None => phonelogs_gateway::default_state_dir(|name| std::env::var_os(name)).doing(|| {
            format!(
                "no state directory: pass --state-dir DIR or set {}",
                phonelogs_gateway::STATE_DIR_ENV
            )
        }),
    }
}

/// Opens the store, saying which directory failed.
pub fn open(dir: &Path) -> Result<Store> {
    Store::open(dir).doing(|| format!("state directory {}", dir.display()))
}

fn print_json<T: serde::Serialize>(value: &T) -> Result<()> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

fn describe(approval: &Approval) -> String {
    format!(
        "{}  {}  agent {}  device {}  app {} ({})  rule “{}”  asked {}",
        approval.id,
        approval.question,
        approval.agent,
        approval.device,
        approval.app_label,
        approval.app,
        approval.rule,
        approval.created_at
    )
}

/// `phonelogs approvals list`.
pub fn approvals_list(store: &Store, json: bool) -> Result<()> {
    let pending = store.pending_approvals()?;
    if json {
        return print_json(&pending);
    }
    if pending.is_empty() {
        println!("No questions are waiting for you.");
    }
    for approval in &pending {
        println!("{}", describe(approval));
    }
    Ok(())
}

/// Parses an answer word.
pub fn parse_answer(text: &str) -> Result<Answer> {
    Answer::parse(text)
        .doing(|| format!("{text:?} is not an answer; answer once, task, always or deny"))
}

/// `phonelogs approvals answer <ID> <ANSWER>`.
pub fn approvals_answer(store: &Store, id: &str, answer: Answer) -> Result<()> {
    let approval = store
        .approval(id)?
        .doing(|| format!("no approval has the id {id:?}; see `phonelogs approvals list`"))?;
    store.answer_via(id, answer, phonelogs_gateway::AnsweredVia::CommandLine)?;
    println!(
        "{}: {} \u{201c}{}\u{201d} for agent {} on {}",
        approval.id,
        phonelogs_gateway::catalog::answer_label(answer),
        approval.question,
        approval.agent,
        approval.device
    );
    Ok(())
}

/// `phonelogs approvals watch`: asks the person in the terminal as each question arrives, until
/// stdin closes.
pub fn approvals_watch(store: &Store, poll: Duration) -> Result<()> {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut asked = std::collections::HashSet::new();
    println!("Waiting for questions from agents (Ctrl-D or Ctrl-C to stop).");
    loop {
        let pending = store.pending_approvals()?;
        let next = pending.into_iter().find(|a| !asked.contains(&a.id));
        let Some(approval) = next else {
            std::thread::sleep(poll);
            continue;
        };
        asked.insert(approval.id.clone());
        println!(
            "Agent {} on {}: {}",
            approval.agent, approval.device, approval.question
        );
        loop {
            print!("[o]nce, for this [t]ask, [a]lways, [d]eny? ");
            std::io::stdout().flush()?;
            let mut line = String::new();
            if input.read_line(&mut line)? == 0 {
                println!();
                return Ok(());
            }
            let answer = match line.trim().to_ascii_lowercase().as_str() {
                "o" | "once" => Answer::Once,
                "t" | "task" => Answer::Task,
                "a" | "always" => Answer::Always,
                "d" | "deny" => Answer::Deny,
                "" => continue,
                other => {
                    println!("{other:?} is not an answer.");
                    continue;
                }
            };
            match store.answer(&approval.id, answer) {
                Ok(()) => println!(
                    "{}: {}.",
                    phonelogs_gateway::catalog::answer_label(answer),
                    approval.app_label
                ),
                Err(error) => println!("Could not answer: {error}"),
            }
            break;
        }
    }
}

/// `phonelogs history`.
pub fn history(
    store: &Store,
    agent: Option<String>,
    app: Option<String>,
    since: Option<&str>,
    json: bool,
) -> Result<()> {
    let since = match since {
        None => None,
        Some(text) => {
            let now = OffsetDateTime::now_utc();
            let local = time::UtcOffset::current_local_offset().unwrap_or(time::UtcOffset::UTC);
            Some(
                phonelogs_gateway::since::parse_since(Some(text), now, local, now).map_err(
                    |error| crate::Error::Refused(phonelogs_gateway::catalog::view_error(&error)),
                )?,
            )
        }
    };
    let filter = HistoryFilter {
        agent,
        app,
        ..HistoryFilter::default()
    };
    let steps: Vec<_> = store
        .history(filter)?
        .into_iter()
        .filter(|step| {
            since.is_none_or(|since| {
                OffsetDateTime::parse(&step.at, &Rfc3339).is_ok_and(|at| at >= since)
            })
        })
        .collect();
    if json {
        return print_json(&steps);
    }
    if steps.is_empty() {
        println!("Nothing was read.");
    }
    for step in &steps {
        println!(
            "{}  {}  agent {}  device {}  {}",
            step.at,
            step.status.as_str(),
            step.agent,
            step.device.as_deref().unwrap_or("-"),
            step.step
        );
    }
    Ok(())
}

/// `phonelogs rules list`.
pub fn rules_list(store: &Store, json: bool) -> Result<()> {
    let rules = store.rules()?;
    let blocked = store.blocked_apps()?;
    let unmasked = store.unmasked_apps()?;
    if json {
        let unmasked: Vec<serde_json::Value> = unmasked
            .iter()
            .map(|(app, since)| serde_json::json!({ "app": app, "since": since }))
            .collect();
        return print_json(&serde_json::json!({
            "always_allow": rules,
            "blocked": blocked,
            "unmasked": unmasked,
        }));
    }
    if rules.is_empty() {
        println!("No Always-allow rules.");
    } else {
        println!("Always allow:");
        for rule in &rules {
            println!(
                "  {}  agent {}  device {}  app {}  action {}  granted {}",
                rule.id,
                rule.agent,
                rule.device,
                rule.app,
                rule.action.as_str(),
                rule.created_at
            );
        }
    }
    if blocked.is_empty() {
        println!("No blocked apps.");
    } else {
        println!("Blocked (no agent may read their logs):");
        for app in &blocked {
            println!("  {app}");
        }
    }
    if unmasked.is_empty() {
        println!("Secrets are masked for every app.");
    } else {
        println!(
            "Unmasked (agents see these apps' secrets; `phonelogs rules mask APP` undoes it):"
        );
        for (app, since) in &unmasked {
            println!("  {app}  since {since}");
        }
    }
    Ok(())
}

/// `phonelogs rules unmask|mask <APP>`: the person's choice, recorded in the history.
pub fn rules_unmask(store: &Store, app: &str, unmask: bool) -> Result<()> {
    let app = AppId::parse(app)?;
    let via = phonelogs_gateway::AnsweredVia::CommandLine;
    if unmask {
        store.unmask_app(&app, via)?;
        println!(
            "Secrets in the logs and crash reports of {app} are now shown to agents unmasked. `phonelogs rules mask {app}` masks them again."
        );
    } else {
        store.mask_app(&app, via)?;
        println!("Secrets in the logs and crash reports of {app} are masked again.");
    }
    Ok(())
}

/// `phonelogs rules revoke <ID>`.
pub fn rules_revoke(store: &Store, id: &str) -> Result<()> {
    store.revoke_rule(id)?;
    println!("Revoked {id}.");
    Ok(())
}

/// `phonelogs rules block|unblock <APP>`.
pub fn rules_block(store: &Store, app: &str, block: bool) -> Result<()> {
    let app = AppId::parse(app)?;
    if block {
        store.block_app(&app)?;
        println!("Blocked {app}: no agent may read its logs.");
    } else {
        store.unblock_app(&app)?;
        println!("Unblocked {app}.");
    }
    Ok(())
}
