//! `phonelogs`: the person's side of phonelogs.
//!
//! The person who owns the phone controls what agents read: they answer approvals, review and
//! revoke Always-allow rules, block apps, and read the history of what was read (never the text).
//! The same SQLite state is shared with the MCP server while both run. The command also reads
//! report files offline (`report`), runs the simulated phone (`sim`) and shows a demo (`demo`).

mod report;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Read one app's own logs and crash reports on a phone, under rules you control.
///
/// phonelogs lets a coding agent read the logs of the app it is testing and nothing else. This
/// command is the person's side: answer the agent's questions, review what was read, and manage
/// the rules.
#[derive(Debug, Parser)]
#[command(name = "phonelogs", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
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
        /// The files to read.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
    },
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("PHONELOGS_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Report {
            json,
            format,
            files,
        } => report::run(&files, format.as_deref(), json),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("phonelogs: {error:#}");
            ExitCode::FAILURE
        }
    }
}
