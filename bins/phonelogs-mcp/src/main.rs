//! `phonelogs-mcp`: the MCP server an agent's client starts. It reads its flags (and the same
//! keys from a TOML `--config FILE`), picks the phones to serve (with `--demo` the built-in
//! simulated Android phone and iPhone, else Android through the adb server and iPhones through
//! usbmuxd), builds the gateway and serves one MCP session over stdio, which is one task. Standard output carries only JSON-RPC;
//! diagnostics go to standard error.

mod config;
mod demo;

use std::sync::Arc;

use anyhow::Context;
use clap::Parser;
use phonelogs_gateway::{Gateway, TaskSpec};
use phonelogs_mcp_frontend::{PhoneLogsServer, ServerOptions};

use crate::config::{Args, Settings};

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
    // Keeps the simulated phones running while the session lasts.
    let mut _demo = None;
    if let Some(kind) = settings.demo {
        let demo = demo::start(kind).await?;
        for driver in &demo.drivers {
            builder = builder.driver(driver.clone());
        }
        tracing::info!(devices = ?demo.devices, "demo phones");
        _demo = Some(demo);
    } else {
        // Android through the adb server (ADB_SERVER_SOCKET, ANDROID_ADB_SERVER_PORT or
        // 127.0.0.1:5037, as adb's own tools find it).
        builder = builder.driver(Arc::new(phonelogs_android::AdbPhone::from_env()));
        // iPhones through the host's usbmuxd (USBMUXD_SOCKET_ADDRESS, else the default socket).
        let usbmuxd = phonelogs_ios::UsbmuxdBackend::from_env();
        builder = builder.driver(Arc::new(phonelogs_ios::LockdownPhone::new(Arc::new(
            usbmuxd,
        ))));
    }
    let gateway = builder.build().context("opening the phonelogs state")?;
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
    // A demo names its phones in the instructions, so an agent's first call can name one.
    let options = ServerOptions {
        instructions_note: _demo
            .as_ref()
            .filter(|demo| demo.devices.len() > 1)
            .map(|demo| {
                format!(
                    "This is phonelogs' demo: it serves simulated phones {}; name one with `device`.",
                    demo.devices.join(" and ")
                )
            }),
        ..ServerOptions::default()
    };
    let server = PhoneLogsServer::new(gateway, task, options).context("starting the MCP server")?;
    server
        .serve((tokio::io::stdin(), tokio::io::stdout()))
        .await
        .context("serving MCP on stdio")?;
    Ok(())
}
