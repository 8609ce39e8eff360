//! Project automation for phonelogs, run as `cargo xtask <task>`.
//!
//! - `emulator-test`: the Crash Test app on an emulator, a phone or the simulated phone, and the
//!   spec's device tests against it (see `docs/crashtest.md`).
//!
//! The repository's tidy checks are a `cargo test` of this package (`tests/tidy.rs`).

mod adb;
mod devlock;
mod emulator_test;
mod mcp_client;
mod mcp_test;
mod process;
mod sim;
mod sim_ios;
mod steps;
mod uiautomator;

use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <task> [options]

tasks:
  emulator-test   build Crash Test, run it on a device (or --sim, or --sim-ios for the iPhone
                  test on the simulated iPhone) and run the device tests
                  (cargo xtask emulator-test --help)";

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let task = args.next();
    let result = match task.as_deref() {
        Some("emulator-test") => match emulator_test::Options::parse(args) {
            Ok(Some(options)) => emulator_test::run(options),
            Ok(None) => {
                println!("{}", emulator_test::USAGE);
                Ok(ExitCode::SUCCESS)
            }
            Err(error) => {
                eprintln!("emulator-test: {error:#}");
                return ExitCode::from(2);
            }
        },
        None | Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Some(other) => {
            eprintln!("xtask: unknown task `{other}`\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("xtask: {error:#}");
            ExitCode::FAILURE
        }
    }
}
