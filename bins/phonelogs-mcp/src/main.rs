//! `phonelogs-mcp`: the MCP server an agent's client starts. It reads its flags (and the same
//! keys from a TOML `--config FILE`), picks the phones to serve through `phonelogs-phones` (with
//! `--demo` the built-in simulated Android phone and iPhone, else Android through the adb server
//! and iPhones through usbmuxd), builds the gateway and serves one MCP session over stdio, which
//! is one task. Standard output carries only JSON-RPC; diagnostics go to standard error. With
//! `--http ADDR` it serves Streamable HTTP instead (`phonelogs-http`): many sessions, each a task
//! of the agent its bearer token names.

mod config;

use anyhow::Context;
use clap::Parser;
use phonelogs_gateway::{Gateway, TaskSpec};
use phonelogs_mcp_frontend::{ClientSeat, PhoneLogsServer, ServerOptions};

use crate::config::{Args, QuestionsTo, Settings};

/// `docs/SKILL.md`, served through the Skills extension.
const SKILL_MD: &str = include_str!("../../../docs/SKILL.md");

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    // Diagnostics go to standard error: standard output is the protocol.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("PHONELOGS_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let settings = Settings::resolve(args)?;

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(serve(settings))
}

async fn serve(settings: Settings) -> anyhow::Result<()> {
    let mut builder = Gateway::builder()
        .policy(settings.policy.clone())
        .state_dir(&settings.state_dir)
        .local_root(settings.local_root.clone())
        .result_cap(settings.result_cap);
    if let Some(dir) = &settings.symbols_dir {
        builder = builder.symbols_dir(dir);
    }
    if let Some(url) = &settings.store {
        builder = builder.store(phonelogs_store_pg::open(url, settings.migrate)?);
    }
    // Keeps the simulated phones running while the session lasts.
    let mut _demo = None;
    if let Some(kind) = settings.demo {
        let demo = phonelogs_phones::demo::start(kind).await?;
        for driver in &demo.drivers {
            builder = builder.driver(driver.clone());
        }
        tracing::info!(devices = ?demo.devices, "demo phones");
        _demo = Some(demo);
    } else {
        for driver in settings.phones.phones()?.drivers() {
            builder = builder.driver(driver);
        }
    }
    let gateway = builder.build().context("opening the phonelogs state")?;
    let options = ServerOptions {
        instructions_note: demo_note(_demo.as_ref()),
        // Our skill, through the Skills extension: the same file the Claude Code plugin ships.
        skill: Some(SKILL_MD.to_owned()),
        ..ServerOptions::default()
    };
    if let Some(http) = settings.http.clone() {
        // Each HTTP agent's task starts when it connects; the fake phone's lines start now.
        if let Some(demo) = _demo.as_mut() {
            demo.task_started(time::OffsetDateTime::now_utc());
        }
        let serve = phonelogs_http::Serve {
            gateway,
            default_agent: settings.agent.clone(),
            policy: settings.policy.clone(),
            task_apps: settings.task_apps.clone(),
            state_dir: settings.state_dir.clone(),
            ask_person_tokens: settings.questions == QuestionsTo::Client,
            options,
        };
        return Ok(phonelogs_http::serve(serve, http).await?);
    }
    let task = TaskSpec {
        agent: settings.agent.clone(),
        apps: settings.task_apps.clone(),
        devices: None,
    };
    tracing::info!(
        agent = %settings.agent.name,
        state_dir = %settings.state_dir.display(),
        demo = ?settings.demo,
        "phonelogs-mcp serving on stdio"
    );
    // On stdio the client is the one the person started and sits at: its dialog is theirs,
    // unless the person said to ask them on their own side only (`--questions person`).
    let options = ServerOptions {
        client: match settings.questions {
            QuestionsTo::Client => ClientSeat::Person,
            QuestionsTo::Person => ClientSeat::Agent,
        },
        ..options
    };
    let server = PhoneLogsServer::new(gateway, task, options).context("starting the MCP server")?;
    if let Some(demo) = _demo.as_mut() {
        demo.task_started(server.session().started_at());
    }
    server
        .serve((tokio::io::stdin(), tokio::io::stdout()))
        .await
        .context("serving MCP on stdio")?;
    Ok(())
}

/// A demo names its phones in the instructions, so an agent's first call can name one.
fn demo_note(demo: Option<&phonelogs_phones::Demo>) -> Option<String> {
    demo.filter(|demo| demo.devices.len() > 1).map(|demo| {
        format!(
            "This is phonelogs' demo: it serves simulated phones {}; name one with `device`.",
            demo.devices.join(" and ")
        )
    })
}
