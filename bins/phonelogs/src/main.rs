//! `phonelogs`: the person's side of phonelogs.
//!
//! The person who owns the phone controls what agents read: they answer approvals, review and
//! revoke Always-allow rules, block apps, and read the history of what was read (never the text).
//! The same SQLite state is shared with the MCP server while both run. The command also reads
//! report files offline (`report`), runs the simulated phone (`sim`) and shows a demo (`demo`).

use phonelogs_console::{demo, devices, doctor, logs_cmd, report, setup, state, symbols, ui};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};

/// Read one app's own logs and crash reports on a phone, under rules you control.
///
/// phonelogs lets a coding agent read the logs of the app it is testing and nothing else. This
/// command is the person's side: answer the agent's questions, review what was read, and manage
/// the rules.
#[derive(Debug, Parser)]
#[command(
    name = "phonelogs",
    version,
    propagate_version = true,
    after_long_help = "Examples:
  phonelogs demo                                  see it work on the simulated phones
  phonelogs setup claude-code                     connect Claude Code to phonelogs-mcp
  phonelogs approvals watch                       answer agents' questions as they come
  phonelogs ui --open                             the same, and more, on a page in your browser
  phonelogs approvals answer ap-1a2b… task        allow that app's logs until the task ends
  phonelogs history --since 2h                    what was read in the last two hours
  phonelogs rules block com.example.secret        never let an agent read this app
  phonelogs doctor                                what works, and how to fix what does not
  phonelogs report --json tombstone_03.txt        read a report file offline

State: every state command reads and writes the SQLite database in --state-dir (or
$PHONELOGS_STATE_DIR), shared with the phonelogs-mcp server while both run. Agents cannot reach
these commands. See docs/cli.md."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The flags that say where phones are, and phonelogs-mcp's config file.
#[derive(Debug, Clone, Default, clap::Args)]
struct PhoneArgs {
    #[command(flatten)]
    flags: phonelogs_phones::PhoneFlags,
    /// phonelogs-mcp's config file: its `adb_servers`, `usbmuxd` and `tunneld` keys, and for
    /// `doctor` its `symbols_dir` (flags win).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

impl PhoneArgs {
    /// Where phones are: the flags, else the config file's keys, else the environment.
    fn sources(&self) -> Result<phonelogs_phones::PhoneSources, phonelogs_phones::Error> {
        phonelogs_phones::PhoneSources::from_flags_and_file(&self.flags, self.config.as_deref())
    }

    /// The config file's `symbols_dir`, as phonelogs-mcp reads it; `None` without a file or
    /// the key.
    fn symbols_dir(&self) -> Result<Option<PathBuf>, phonelogs_phones::Error> {
        match &self.config {
            Some(path) => Ok(phonelogs_phones::ConfigKeys::read(path)?.symbols_dir),
            None => Ok(None),
        }
    }
}

/// Where the state lives; shared by every state command.
#[derive(Debug, Clone, clap::Args)]
struct StateArgs {
    /// The state directory, shared with the MCP server (default: $XDG_STATE_HOME/phonelogs or
    /// ~/.local/state/phonelogs).
    #[arg(long, value_name = "DIR", env = "PHONELOGS_STATE_DIR")]
    state_dir: Option<PathBuf>,
    /// A PostgreSQL store shared by many servers instead of the state directory's SQLite
    /// (`postgres://user@host/db?sslmode=verify-full`, see docs/farms.md).
    #[arg(
        long,
        value_name = "URL",
        env = "PHONELOGS_STORE",
        hide_env_values = true
    )]
    store: Option<phonelogs_store_pg::ConnectionString>,
    /// A file holding the `--store` connection string (a secret file: see docs/farms.md).
    #[arg(long, value_name = "FILE")]
    store_file: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Play an agent's task against the built-in simulated phones (no phone needed).
    ///
    /// Starts the simulated Android phone and the simulated iPhone, reads the Crash Test app's
    /// logs and crash report on each through the real drivers and the gateway, is asked before
    /// a store app, is refused a bank, a password manager, a system app and a UI-automation
    /// runner, and prints the history it kept.
    Demo {
        /// Keep the demo's state here instead of a temporary directory.
        #[arg(long, value_name = "DIR")]
        state_dir: Option<PathBuf>,
    },
    /// Read one app's own log lines yourself, under the same rules and refused lists as an
    /// agent (you are not asked; the history records it as your read).
    Logs {
        /// The app: an Android package name or an iOS bundle id.
        app: String,
        /// The phone (serial or UDID), when more than one is connected.
        #[arg(long)]
        device: Option<String>,
        /// Keep printing new lines until Ctrl-C.
        #[arg(long)]
        follow: bool,
        /// From when: RFC 3339, a date and time, a time of day, or 10m, 2h, 1d (default: 10m).
        #[arg(long)]
        since: Option<String>,
        /// Only lines of this level or more severe: verbose, debug, info, warn, error, fatal.
        #[arg(long)]
        level: Option<String>,
        #[command(flatten)]
        state: StateArgs,
        #[command(flatten)]
        phones: PhoneArgs,
    },
    /// Answer and review the agents' questions.
    #[command(subcommand)]
    Approvals(ApprovalsCommand),
    /// What agents read, when, on which device: never the text.
    History {
        #[command(flatten)]
        state: StateArgs,
        /// Only this agent's steps.
        #[arg(long)]
        agent: Option<String>,
        /// Only steps about this app (package or bundle id).
        #[arg(long)]
        app: Option<String>,
        /// Only steps since then: RFC 3339, a date and time, a time of day, or 10m, 2h, 1d.
        #[arg(long)]
        since: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// The Always-allow rules and the block rules.
    #[command(subcommand)]
    Rules(RulesCommand),
    /// Every Android and iOS device reachable, with its state.
    Devices {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        phones: PhoneArgs,
    },
    /// What works and what does not, each with its fix.
    Doctor {
        #[command(flatten)]
        state: StateArgs,
        /// Also say, for each app with symbols here and each phone reached, whether symbols are
        /// filed for the installed version (default: the config file's `symbols_dir`).
        #[arg(long, value_name = "DIR", env = "PHONELOGS_SYMBOLS_DIR")]
        symbols: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        phones: PhoneArgs,
    },
    /// Run the simulated Android phone on loopback until stopped.
    ///
    /// Prints `listening on 127.0.0.1:PORT`; `adb connect 127.0.0.1:PORT` makes it a device.
    Sim {
        /// The port to listen on (default: any free port).
        #[arg(long)]
        port: Option<u16>,
        /// A scenario file (JSON) to play.
        #[arg(long, value_name = "FILE")]
        scenario: Option<PathBuf>,
        /// The Android release to play: 10, 14 or 16.
        #[arg(long, value_name = "RELEASE")]
        android: Option<String>,
        /// Also serve the adb server's host protocol on this port (0: any free port), so
        /// phonelogs can reach the phone with no adb installed.
        #[arg(long, value_name = "PORT")]
        host_port: Option<u16>,
        /// Run the simulated iPhone instead: usbmuxd on loopback (and `--usbmuxd-socket`),
        /// lockdown with TLS and the services libimobiledevice and pymobiledevice3 use. Prints
        /// `USBMUXD_SOCKET_ADDRESS=127.0.0.1:PORT` first.
        #[arg(long, conflicts_with_all = ["scenario", "android", "host_port"])]
        ios: bool,
        /// With `--ios`: also listen on this Unix socket path.
        #[arg(long, value_name = "PATH", requires = "ios")]
        usbmuxd_socket: Option<PathBuf>,
        /// With `--ios`: read commands on standard input (`launch BUNDLE`, `crash PID exception
        /// TEXT`, …; see `phonelogs_iossim::control`), answer each with one line, and stop at
        /// the end of the input.
        #[arg(long, requires = "ios")]
        control: bool,
        /// With `--ios`: the iOS release the phone plays: 16.7.10 (the default), 17.2, 17.4,
        /// 18.6 or 26.1 (what lockdown offers, CoreDeviceProxy and RSD follow from it).
        #[arg(long, value_name = "VERSION", requires = "ios", value_parser = parse_ios_version)]
        ios_version: Option<phonelogs_iossim::IosVersion>,
    },
    /// The shared PostgreSQL store (`--store`): `phonelogs store migrate` applies its schema
    /// migrations, once for all servers.
    #[command(subcommand)]
    Store(StoreCommand),
    /// Serve the person's page on 127.0.0.1: questions, Always allow, history, phones.
    ///
    /// Prints the page's address, with its random token, as the first line; a request without
    /// the token gets 403. Serves until stopped (Ctrl-C).
    Ui {
        #[command(flatten)]
        state: StateArgs,
        /// The port to listen on (default: any free port).
        #[arg(long)]
        port: Option<u16>,
        /// Open the page in the browser.
        #[arg(long)]
        open: bool,
    },
    /// Read crash reports and log files offline and print each report's heading and text.
    ///
    /// Reads logcat dumps, `dumpsys dropbox --print` output, ANR traces, tombstones,
    /// `debuggerd -b` dumps, `dumpsys activity exit-info` output and iPhone `.ips` reports. The
    /// format is detected from the content unless --format names it.
    Report {
        /// Print one JSON object per report (or exit record), one per line.
        #[arg(long)]
        json: bool,
        /// Read every file as this format: logcat, dropbox, anr, tombstone, backtrace,
        /// exit_info, ips.
        #[arg(long, value_name = "FORMAT")]
        format: Option<String>,
        /// Apply the symbols in this directory (mappings, unstripped .so, .dSYM; see
        /// docs/symbols.md) and group reports by fingerprint.
        #[arg(long, value_name = "DIR", env = "PHONELOGS_SYMBOLS_DIR")]
        symbols: Option<PathBuf>,
        /// With --symbols: the app's versionCode or CFBundleVersion, when the report does not
        /// say it and the app has several version folders.
        #[arg(long, value_name = "VERSION", requires = "symbols")]
        app_version: Option<String>,
        /// The files to read.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
    },
    /// File symbol files (R8/ProGuard mappings, unstripped .so, .dSYM) in the symbols directory.
    #[command(subcommand)]
    Symbols(SymbolsCommand),
    /// Connect an MCP client to phonelogs-mcp: write its entry in the client's own file.
    ///
    /// Clients: claude-code, claude-desktop, cursor, vscode, codex, gemini, windsurf. The entry
    /// runs the absolute path of the installed phonelogs-mcp with `--agent CLIENT`; other
    /// servers and comments in the file are kept, the file is copied beside itself first, and a
    /// second run changes nothing. See docs/mcp.md.
    Setup(setup::SetupArgs),
}

#[derive(Debug, Subcommand)]
enum SymbolsCommand {
    /// File each FILE for APP (package or bundle id) and VERSION (versionCode or
    /// CFBundleVersion): a mapping as mapping.txt, a .so by its GNU build id, a .dSYM as it is.
    Add {
        /// The symbols directory (created if missing).
        #[arg(long, value_name = "DIR", env = "PHONELOGS_SYMBOLS_DIR")]
        dir: PathBuf,
        /// The app's package name or bundle id.
        app: String,
        /// The app's versionCode (Android) or CFBundleVersion (iPhone).
        #[arg(value_name = "VERSION")]
        app_version: String,
        /// The files (or .dSYM bundles) to file.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
enum StoreCommand {
    /// Apply the migrations the shared store lacks (servers refuse an older schema).
    Migrate {
        #[command(flatten)]
        state: StateArgs,
    },
}

#[derive(Debug, Subcommand)]
enum ApprovalsCommand {
    /// The questions waiting for an answer.
    List {
        #[command(flatten)]
        state: StateArgs,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Answer a question: once (this call), task (until the task ends), always (later tasks
    /// too, for that agent on that phone), or deny.
    Answer {
        #[command(flatten)]
        state: StateArgs,
        /// The approval's id (see `phonelogs approvals list`).
        id: String,
        /// once, task, always or deny.
        answer: String,
    },
    /// Stay open and ask in this terminal as each question arrives.
    Watch {
        #[command(flatten)]
        state: StateArgs,
    },
}

#[derive(Debug, Subcommand)]
enum RulesCommand {
    /// The Always-allow entries (agent, device, app, when granted), blocked apps, and apps
    /// whose secrets are shown unmasked.
    List {
        #[command(flatten)]
        state: StateArgs,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Remove an Always-allow entry.
    Revoke {
        #[command(flatten)]
        state: StateArgs,
        /// The entry's id (see `phonelogs rules list`).
        id: String,
    },
    /// Block an app: no agent may read its logs, even one allowed for a task.
    Block {
        #[command(flatten)]
        state: StateArgs,
        /// The package or bundle id.
        app: String,
    },
    /// Remove a block rule.
    Unblock {
        #[command(flatten)]
        state: StateArgs,
        /// The package or bundle id.
        app: String,
    },
    /// Show an app's secrets (tokens, passwords, keys, card numbers) to agents unmasked: only
    /// you can do this, per app; `phonelogs rules mask APP` turns masking back on.
    Unmask {
        #[command(flatten)]
        state: StateArgs,
        /// The package or bundle id.
        app: String,
    },
    /// Mask an app's secrets again (the default for every app).
    Mask {
        #[command(flatten)]
        state: StateArgs,
        /// The package or bundle id.
        app: String,
    },
}

/// The store: the shared PostgreSQL one when `--store` (or `--store-file`) names it, else the
/// state directory's SQLite.
fn store(state: StateArgs) -> phonelogs_console::Result<phonelogs_gateway::Store> {
    match shared_store(&state)? {
        Some(store) => Ok(store),
        None => state::open(&state::state_dir(state.state_dir)?),
    }
}

fn shared_store(state: &StateArgs) -> phonelogs_console::Result<Option<phonelogs_gateway::Store>> {
    let url = phonelogs_store_pg::chosen(state.store.clone(), state.store_file.as_deref())?;
    Ok(url
        .map(|url| phonelogs_store_pg::open(&url, false))
        .transpose()?)
}

/// `phonelogs store migrate`.
fn store_migrate(state: &StateArgs) -> anyhow::Result<()> {
    let url = phonelogs_store_pg::chosen(state.store.clone(), state.store_file.as_deref())?
        .context("no shared store: pass --store URL (or --store-file, PHONELOGS_STORE)")?;
    let version = phonelogs_store_pg::PgStore::migrate(url.expose())?;
    println!("the shared store is at schema version {version}");
    Ok(())
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}

/// `phonelogs doctor`: the symbols directory from `--symbols`, else the config file's.
fn doctor(
    state: StateArgs,
    symbols: Option<PathBuf>,
    json: bool,
    phones: &PhoneArgs,
) -> anyhow::Result<bool> {
    let symbols = match symbols {
        Some(dir) => Some(dir),
        None => phones.symbols_dir()?,
    };
    let phones = phones.sources()?.phones()?;
    let store = doctor::SharedStore {
        url: state.store,
        file: state.store_file,
    };
    Ok(runtime()?.block_on(doctor::run(state.state_dir, store, symbols, json, &phones))?)
}

/// `phonelogs sim --ios`: the simulated iPhone until stopped (Ctrl-C, SIGTERM, or with
/// `--control` the end of standard input), so that its Unix socket file is removed on the way
/// out.
async fn ios_sim(
    port: Option<u16>,
    socket: Option<PathBuf>,
    control: bool,
    ios: phonelogs_iossim::IosVersion,
) -> anyhow::Result<()> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let phone = phonelogs_iossim::SimPhone::default_phone_on(ios);
    let mut sim = phonelogs_iossim::IosSim::bind_loopback(port, phone.clone()).await?;
    if let Some(path) = &socket {
        sim.listen_unix(path).await?;
    }
    sim.start_background(phonelogs_iossim::Background::default());
    let mut out = tokio::io::stdout();
    let address = sim
        .tcp_addr()
        .context("the simulated iPhone has no loopback address")?;
    out.write_all(format!("USBMUXD_SOCKET_ADDRESS={address}\n").as_bytes())
        .await?;
    if let Some(rsd) = sim.rsd_addr() {
        // iOS 17 and later: RSD without the tunnel, on its own loopback port.
        out.write_all(format!("RSD_ADDRESS={rsd}\n").as_bytes())
            .await?;
    }
    out.flush().await?;
    if control {
        let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
        loop {
            tokio::select! {
                line = lines.next_line() => {
                    let Some(line) = line? else { break };
                    let answer = phonelogs_iossim::control::run(&phone, &line);
                    out.write_all(format!("{answer}\n").as_bytes()).await?;
                    out.flush().await?;
                }
                () = phonelogs_console::stop_signal() => break,
            }
        }
    } else {
        phonelogs_console::stop_signal().await;
    }
    sim.shutdown().await;
    Ok(())
}

/// `--ios-version`'s value: one of the releases the simulated iPhone plays.
fn parse_ios_version(text: &str) -> Result<phonelogs_iossim::IosVersion, String> {
    phonelogs_iossim::IosVersion::parse(text).ok_or_else(|| {
        let known: Vec<&str> = phonelogs_iossim::IosVersion::ALL
            .iter()
            .map(|v| v.product_version())
            .collect();
        format!("the simulated iPhone plays iOS {}", known.join(", "))
    })
}

/// The `--store` typed on the command line itself (not taken from `PHONELOGS_STORE`), in
/// whichever subcommand holds it.
fn store_on_command_line(
    matches: &clap::ArgMatches,
) -> Option<phonelogs_store_pg::ConnectionString> {
    if matches.ids().any(|id| id == "store")
        && matches.value_source("store") == Some(clap::parser::ValueSource::CommandLine)
    {
        return matches
            .get_one::<phonelogs_store_pg::ConnectionString>("store")
            .cloned();
    }
    matches
        .subcommand()
        .and_then(|(_, sub)| store_on_command_line(sub))
}

fn main() -> ExitCode {
    // The computer's UTC offset is read before any thread starts, where every platform allows it.
    let local_offset = time::UtcOffset::current_local_offset().ok();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("PHONELOGS_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let matches = <Cli as clap::CommandFactory>::command().get_matches();
    let cli = match <Cli as clap::FromArgMatches>::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(error) => error.exit(),
    };
    if let Some(warning) =
        store_on_command_line(&matches).and_then(|url| url.command_line_warning())
    {
        tracing::warn!("{warning}");
    }
    match run(cli.command, local_offset) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            let text = format!("{error:#}");
            if text.contains("database is locked") || text.contains("database table is locked") {
                // SQLite waited its busy timeout for another process's write; say so plainly.
                eprintln!(
                    "phonelogs: the state database is locked by another process (waited {} s); try again when it is done",
                    phonelogs_gateway::BUSY_TIMEOUT.as_secs()
                );
            } else {
                eprintln!("phonelogs: {text}");
            }
            ExitCode::FAILURE
        }
    }
}

/// Runs one command; `false` when the doctor found something that does not work.
fn run(command: Command, local_offset: Option<time::UtcOffset>) -> anyhow::Result<bool> {
    let offset = local_offset.unwrap_or(time::UtcOffset::UTC);
    match command {
        Command::Report {
            json,
            format,
            symbols,
            app_version,
            files,
        } => match symbols {
            Some(dir) => symbols::report(
                &dir,
                &files,
                format.as_deref(),
                json,
                app_version.as_deref(),
            )?,
            None => report::run(&files, format.as_deref(), json)?,
        },
        Command::Setup(args) => setup::run(args)?,
        Command::Symbols(SymbolsCommand::Add {
            dir,
            app,
            app_version,
            files,
        }) => symbols::add(&dir, &app, &app_version, &files)?,
        Command::Demo { state_dir } => {
            let temporary = tempfile::tempdir()?;
            let dir = state_dir.unwrap_or_else(|| temporary.path().to_path_buf());
            runtime()?.block_on(demo::run(&dir, local_offset))?;
        }
        Command::Logs {
            app,
            device,
            follow,
            since,
            level,
            state,
            phones,
        } => {
            let dir = state::state_dir(state.state_dir)?;
            let request = logs_cmd::Request {
                app,
                device,
                follow,
                since: since.or_else(|| Some("10m".into())),
                level,
            };
            runtime()?.block_on(logs_cmd::run(request, phones.sources()?, dir, offset))?;
        }
        Command::Approvals(command) => approvals(command)?,
        Command::History {
            state,
            agent,
            app,
            since,
            json,
        } => state::history(&store(state)?, agent, app, since.as_deref(), json)?,
        Command::Rules(command) => rules(command)?,
        Command::Devices { json, phones } => {
            let phones = phones.sources()?.phones()?;
            runtime()?.block_on(devices::run(json, &phones))?;
        }
        Command::Store(StoreCommand::Migrate { state }) => store_migrate(&state)?,
        Command::Ui { state, port, open } => page(state, port, open, offset)?,
        Command::Doctor {
            state,
            symbols,
            json,
            phones,
        } => return doctor(state, symbols, json, &phones),
        Command::Sim {
            ios: true,
            port,
            usbmuxd_socket,
            control,
            ios_version,
            ..
        } => runtime()?.block_on(ios_sim(
            port,
            usbmuxd_socket,
            control,
            ios_version.unwrap_or_default(),
        ))?,
        Command::Sim {
            port,
            scenario,
            android,
            host_port,
            ..
        } => android_sim(port, scenario, android, host_port)?,
    }
    Ok(true)
}

/// `phonelogs ui`: the person's page until stopped.
fn page(
    state: StateArgs,
    port: Option<u16>,
    open: bool,
    offset: time::UtcOffset,
) -> anyhow::Result<()> {
    let options = ui::Options {
        store: shared_store(&state)?,
        shared: doctor::SharedStore {
            url: state.store,
            file: state.store_file,
        },
        state_dir: state::state_dir(state.state_dir)?,
        port: port.unwrap_or(0),
        open,
        offset,
    };
    Ok(runtime()?.block_on(ui::run(options))?)
}

/// `phonelogs approvals …`.
fn approvals(command: ApprovalsCommand) -> phonelogs_console::Result<()> {
    match command {
        ApprovalsCommand::List { state, json } => state::approvals_list(&store(state)?, json),
        ApprovalsCommand::Answer { state, id, answer } => {
            let answer = state::parse_answer(&answer)?;
            state::approvals_answer(&store(state)?, &id, answer)
        }
        ApprovalsCommand::Watch { state } => {
            state::approvals_watch(&store(state)?, std::time::Duration::from_millis(250))
        }
    }
}

/// `phonelogs rules …`.
fn rules(command: RulesCommand) -> phonelogs_console::Result<()> {
    match command {
        RulesCommand::List { state, json } => state::rules_list(&store(state)?, json),
        RulesCommand::Revoke { state, id } => state::rules_revoke(&store(state)?, &id),
        RulesCommand::Block { state, app } => state::rules_block(&store(state)?, &app, true),
        RulesCommand::Unblock { state, app } => state::rules_block(&store(state)?, &app, false),
        RulesCommand::Unmask { state, app } => state::rules_unmask(&store(state)?, &app, true),
        RulesCommand::Mask { state, app } => state::rules_unmask(&store(state)?, &app, false),
    }
}

/// `phonelogs sim`: the simulated Android phone until stopped.
fn android_sim(
    port: Option<u16>,
    scenario: Option<PathBuf>,
    android: Option<String>,
    host_port: Option<u16>,
) -> anyhow::Result<()> {
    let android = android
        .map(|release| {
            phonelogs_adbsim::AndroidVersion::from_release(&release).with_context(|| {
                format!("--android {release}: the simulated phone plays Android 10, 14 or 16")
            })
        })
        .transpose()?;
    let options = phonelogs_adbsim::SimOptions {
        port,
        scenario,
        android,
        host_front_port: host_port,
    };
    runtime()?.block_on(phonelogs_adbsim::run_sim(options, |line| {
        // The first lines say where to connect; flushed at once, because a script reads them
        // while the simulator keeps running.
        use std::io::Write as _;
        let mut stdout = std::io::stdout();
        let _ = writeln!(stdout, "{line}");
        let _ = stdout.flush();
    }))?;
    Ok(())
}
