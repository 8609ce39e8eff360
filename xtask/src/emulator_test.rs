//! `cargo xtask emulator-test`: Crash Test on a real emulator or phone, or on the simulated phone,
//! and the spec's device tests against it.
//!
//! The run picks one device (`--serial`, the one emulator adb lists, or `--sim`), locks it
//! ([`crate::devlock`]), builds both Crash Test APKs with `crashtest/build.sh`, and for each build
//! installs it, launches it, finds the Crash and Hang buttons with `uiautomator dump`, taps them
//! with `input tap`, waits for the crash and the ANR to reach the drop box, and then runs the
//! device tests, which are ordinary `cargo test` targets of the crates they test (the contract
//! they read is in `docs/crashtest.md`). Every step is printed as it runs; the run closes with
//! `emulator-test: N passed, N failed` and cleans up (force-stop, uninstall, clear the debug app,
//! stop what it started) however it ended.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::adb::{Adb, Device};
use crate::devlock::DeviceLock;
use crate::mcp_test::{AppTexts, Programs, Task};
use crate::process;
use crate::sim::{self, Sim};
use crate::steps::{Report, build_programs, cargo, wait_for, workspace_root};
use crate::uiautomator;

/// The Crash Test package (`crashtest/AndroidManifest.xml`).
pub const PACKAGE: &str = "dev.phonelogs.crashtest";
/// Its launcher activity, as `am start -n` takes it.
const ACTIVITY: &str = "dev.phonelogs.crashtest/.MainActivity";
/// The buttons' resource ids and labels (`crashtest/res/layout/main.xml`, `strings.xml`).
const CRASH_BUTTON: (&str, &str) = ("dev.phonelogs.crashtest:id/crash", "Crash");
const HANG_BUTTON: (&str, &str) = ("dev.phonelogs.crashtest:id/hang", "Hang");
/// The "has stopped" / "isn't responding" dialog's close button (AOSP `aerr_close`).
const CLOSE_DIALOG_BUTTON: (&str, &str) = ("android:id/aerr_close", "Close app");
/// Where the UI dump is written on the device.
const UI_DUMP: &str = "/data/local/tmp/phonelogs-ui.xml";

/// How long a crash may take to reach the drop box.
const CRASH_WAIT: Duration = Duration::from_secs(30);
/// How long an ANR may take: Android waits 5 s for input, then dumps every thread's stack.
const ANR_WAIT: Duration = Duration::from_secs(90);
/// How long the app's screen may take to show.
const SCREEN_WAIT: Duration = Duration::from_secs(30);

/// The help text.
pub const USAGE: &str = "\
usage: cargo xtask emulator-test [--serial SERIAL | --sim [--android 10|14|16] | --sim-ios [--ios V]]
                                 [--adb PATH] [--apks DIR] [--no-device-tests]

Builds the Crash Test app (crashtest/build.sh, both builds), installs it on one device, launches
it, taps Crash and Hang, and runs the spec's device tests against it.

  --serial SERIAL   the device to use (an emulator or a phone; see `adb devices`)
  --sim             the simulated phone (`phonelogs sim`) behind a private adb server
  --sim-ios         the iPhone test on the simulated iPhone (`phonelogs sim --ios --control`):
                    Crash Test's development and store builds, its widget, a crash and a
                    watchdog report, read by an agent's task and by the iOS driver
  --android N       the simulated phone's Android version (default 16)
  --ios V           the simulated iPhone's iOS release: 16.7.10 (default), 17.2, 17.4, 18.6
                    or 26.1 (`phonelogs sim --ios --ios-version V`)
  --adb PATH        the adb program (default: $ADB, else `adb` on PATH)
  --apks DIR        use DIR/crashtest-debug.apk and DIR/crashtest-release.apk (as
                    crashtest/check.sh DIR leaves them) instead of building them
  --no-device-tests only drive the app (install, launch, crash, hang); run no cargo test

Without --serial or --sim it uses the one emulator adb lists. A lock file per device (in
$PHONELOGS_DEVLOCK_DIR, default the temporary folder's phonelogs-devlock) keeps two runs off one
device. See docs/crashtest.md.";

/// What the command line asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// `--serial`.
    pub serial: Option<String>,
    /// `--sim`.
    pub sim: bool,
    /// `--sim-ios`: the simulated iPhone instead of an Android device.
    pub sim_ios: bool,
    /// `--android` for the simulated phone.
    pub android: String,
    /// `--ios` for the simulated iPhone.
    pub ios: String,
    /// `--adb`.
    pub adb: OsString,
    /// `--apks`: prebuilt APKs instead of building them.
    pub apks: Option<PathBuf>,
    /// `--no-device-tests`.
    pub no_device_tests: bool,
}

impl Options {
    /// Reads the arguments after `emulator-test`; `Ok(None)` asks for the help text.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Option<Self>> {
        let mut options = Self {
            serial: None,
            sim: false,
            sim_ios: false,
            android: "16".to_owned(),
            ios: "16.7.10".to_owned(),
            adb: std::env::var_os("ADB").unwrap_or_else(|| OsString::from("adb")),
            apks: None,
            no_device_tests: false,
        };
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let mut value = |name: &str| {
                args.next()
                    .with_context(|| format!("{name} needs a value\n\n{USAGE}"))
            };
            match arg.as_str() {
                "-h" | "--help" => return Ok(None),
                "--sim" => options.sim = true,
                "--sim-ios" => options.sim_ios = true,
                "--serial" | "-s" => options.serial = Some(value("--serial")?),
                "--android" => options.android = value("--android")?,
                "--ios" => options.ios = value("--ios")?,
                "--adb" => options.adb = OsString::from(value("--adb")?),
                "--apks" => options.apks = Some(PathBuf::from(value("--apks")?)),
                "--no-device-tests" => options.no_device_tests = true,
                other => bail!("unknown argument `{other}`\n\n{USAGE}"),
            }
        }
        if [options.sim, options.sim_ios, options.serial.is_some()]
            .iter()
            .filter(|given| **given)
            .count()
            > 1
        {
            bail!("--sim, --sim-ios and --serial name different devices: pass one\n\n{USAGE}");
        }
        if !matches!(
            options.ios.as_str(),
            "16.7.10" | "17.2" | "17.4" | "18.6" | "26.1"
        ) {
            bail!(
                "--ios must be 16.7.10, 17.2, 17.4, 18.6 or 26.1, not {}",
                options.ios
            );
        }
        if !matches!(options.android.as_str(), "10" | "14" | "16") {
            bail!("--android must be 10, 14 or 16, not {}", options.android);
        }
        Ok(Some(options))
    }
}

/// The two builds of Crash Test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Build {
    Debug,
    Release,
}

impl Build {
    fn name(self) -> &'static str {
        match self {
            Self::Debug => "debug",
            Self::Release => "release",
        }
    }

    /// `build.sh`'s first argument.
    fn debuggable(self) -> &'static str {
        match self {
            Self::Debug => "true",
            Self::Release => "false",
        }
    }
}

/// Builds `phonelogs` and starts the simulated phone behind a private adb server.
fn start_sim(report: &mut Report, options: &Options, workspace: &Path, work: &Path) -> Option<Sim> {
    let phonelogs = report.step("build the phonelogs command (for `phonelogs sim`)", || {
        build_programs(workspace)?;
        Ok(sim::target_dir(workspace).join("debug").join("phonelogs"))
    });
    let phonelogs = phonelogs?;
    let started = report.step(
        format!(
            "start the simulated phone (Android {}) behind a private adb server",
            options.android
        ),
        || Sim::start(options.adb.clone(), &phonelogs, &options.android, work),
    );
    let started = started?;
    report.note(format!(
        "simulated phone {} on the adb server at port {}",
        started.serial(),
        started.adb().port().unwrap_or(0)
    ));
    Some(started)
}

/// Runs the whole emulator test.
pub fn run(options: Options) -> Result<ExitCode> {
    if options.sim_ios {
        return crate::sim_ios::run(&options.ios, options.no_device_tests);
    }
    let workspace = workspace_root();
    let work = sim::target_dir(&workspace).join("emulator-test");
    std::fs::create_dir_all(&work).with_context(|| format!("cannot create {}", work.display()))?;
    let mut report = Report::default();

    // The simulated phone, when asked for, lives until the end of this function.
    let mut simulated = None;
    let device = if options.sim {
        let Some(started) = start_sim(&mut report, &options, &workspace, &work) else {
            return Ok(report.close());
        };
        let device = started.adb().device(started.serial());
        simulated = Some(started);
        device
    } else {
        let adb = Adb::new(options.adb.clone());
        match choose_device(&adb, options.serial.as_deref()) {
            Ok(device) => device,
            Err(error) => {
                eprintln!("emulator-test: {error:#}");
                return Ok(ExitCode::from(2));
            }
        }
    };
    println!("emulator-test: device {}", device.serial());

    let lock = match DeviceLock::acquire(&DeviceLock::default_dir(), device.serial()) {
        Ok(lock) => lock,
        Err(error) => {
            eprintln!("emulator-test: {error:#}");
            return Ok(ExitCode::from(2));
        }
    };
    report.note(format!("locked {}", lock.path().display()));

    let texts = match AppTexts::load(&workspace) {
        Ok(texts) => texts,
        Err(error) => {
            eprintln!("emulator-test: {error:#}");
            return Ok(ExitCode::from(2));
        }
    };
    let programs = if options.no_device_tests {
        None
    } else {
        report.step(
            "build phonelogs-mcp and phonelogs (for the MCP test)",
            || {
                build_programs(&workspace)?;
                let bin = sim::target_dir(&workspace).join("debug");
                Ok(Programs {
                    server: bin.join("phonelogs-mcp"),
                    cli: bin.join("phonelogs"),
                })
            },
        )
    };
    let context = Run {
        workspace: &workspace,
        work: &work,
        device: &device,
        simulated: simulated.is_some(),
        device_tests: !options.no_device_tests,
        programs: programs.as_ref(),
        texts: &texts,
    };

    {
        // Cleans the device up when this block ends, whichever step failed.
        let _cleanup = Cleanup { device: &device };
        for build in [Build::Debug, Build::Release] {
            let apk = report.step(format!("build Crash Test ({})", build.name()), || {
                obtain_apk(&workspace, &work, options.apks.as_deref(), build)
            });
            if let Some(apk) = apk {
                run_build(&mut report, &context, build, &apk);
            }
        }
    }
    drop(lock);
    drop(simulated);
    Ok(report.close())
}

/// What every step of a run needs.
struct Run<'a> {
    workspace: &'a Path,
    work: &'a Path,
    device: &'a Device,
    simulated: bool,
    device_tests: bool,
    /// The MCP server and the person's command, when they were built.
    programs: Option<&'a Programs>,
    texts: &'a AppTexts,
}

/// Builds one APK with `crashtest/build.sh`, or finds it in `--apks DIR`.
fn obtain_apk(
    workspace: &Path,
    work: &Path,
    prebuilt: Option<&Path>,
    build: Build,
) -> Result<PathBuf> {
    let file_name = format!("crashtest-{}.apk", build.name());
    if let Some(dir) = prebuilt {
        let apk = dir.join(&file_name);
        if !apk.is_file() {
            bail!(
                "--apks: {} does not exist (crashtest/check.sh DIR leaves both there)",
                apk.display()
            );
        }
        println!("    using {}", apk.display());
        return Ok(apk);
    }
    let apk = work.join(file_name);
    let script = workspace.join("crashtest").join("build.sh");
    let mut command = Command::new("bash");
    command.arg(script).arg(build.debuggable()).arg(&apk);
    process::run_ok(&mut command, Duration::from_secs(300))?;
    Ok(apk)
}

/// Starts the agent's task (phonelogs-mcp over stdio) when the device tests run and the
/// programs built.
fn start_task(report: &mut Report, context: &Run<'_>, name: &str) -> Option<Task> {
    let device = context.device;
    match (context.device_tests, context.programs) {
        (false, _) => None,
        (true, None) => {
            report.note("no MCP test: phonelogs-mcp and phonelogs did not build");
            None
        }
        (true, Some(programs)) => report.step(
            format!("{name}: start an agent task (phonelogs-mcp over stdio)"),
            || {
                Task::start(
                    programs,
                    context.work,
                    name,
                    device.serial(),
                    device.adb().port(),
                )
            },
        ),
    }
}

/// Launches Crash Test, taps Hang and waits for its ANR in the drop box, then stops the app.
fn hang(device: &Device) -> Result<()> {
    launch(device)?;
    let before = drop_box_entries(device, "data_app_anr")?;
    let (x, y) = find_button(device, HANG_BUTTON)?;
    device.shell(&format!("input tap {x} {y}"))?;
    // The Hang tap blocks the main thread; Android calls it an ANR only when a later input
    // event is not handled within 5 s, so send one more tap to the same place. The screen
    // is not dumped again: uiautomator would wait for the blocked app.
    thread::sleep(Duration::from_secs(1));
    device.shell(&format!("input tap {x} {y}"))?;
    wait_for(ANR_WAIT, "a data_app_anr entry for Crash Test", || {
        Ok(drop_box_entries(device, "data_app_anr")? > before)
    })?;
    close_error_dialog(device);
    device.shell(&format!("am force-stop {PACKAGE}"))?;
    Ok(())
}

/// The driver test (phonelogs-android's `device_app_logs`), when the app both crashed and hung.
fn driver_test(
    report: &mut Report,
    context: &Run<'_>,
    build: Build,
    since: u64,
    apk: &Path,
    crashed_and_hung: bool,
) {
    let device = context.device;
    let name = build.name();
    if crashed_and_hung {
        let env = TestEnv {
            device,
            build,
            since,
            apk,
            simulated: context.simulated,
        };
        report.step(
            format!("{name}: the driver test (phonelogs-android, device_app_logs)"),
            || {
                named_test(
                    context.workspace,
                    "crates/android",
                    "phonelogs-android",
                    "device_app_logs",
                    &env,
                )
            },
        );
    } else {
        report.note(format!(
            "{name}: no driver test: the app did not both crash and hang"
        ));
    }
}

/// Install, launch, crash, hang and the device tests for one build.
fn run_build(report: &mut Report, context: &Run<'_>, build: Build, apk: &Path) {
    let device = context.device;
    let name = build.name();
    let installed = report.step(format!("{name}: install {}", apk.display()), || {
        // A leftover install signed with another key would make `install -r` fail.
        let _ = device.run(&["uninstall", PACKAGE], crate::adb::QUICK);
        device.install(apk)
    });
    if installed.is_none() {
        return;
    }
    let since = report.step(format!("{name}: read the phone's clock"), || {
        let text = device.shell("date +%s")?;
        text.trim()
            .parse::<u64>()
            .with_context(|| format!("`date +%s` printed {text:?}"))
    });
    let Some(since) = since else { return };

    // The agent's task starts before the app does, as it would for an agent testing the app.
    let task = start_task(report, context, name);

    let crashed = report.step(format!("{name}: launch Crash Test and tap Crash"), || {
        launch(device)?;
        let before = drop_box_entries(device, "data_app_crash")?;
        tap(device, CRASH_BUTTON)?;
        wait_for(CRASH_WAIT, "a data_app_crash entry for Crash Test", || {
            Ok(drop_box_entries(device, "data_app_crash")? > before)
        })?;
        close_error_dialog(device);
        Ok(())
    });
    if let (Some(task), Some(programs), Some(())) = (task, context.programs, crashed) {
        report.step(
            format!("{name}: the MCP test: the agent reads the lines and the crash report"),
            || {
                let done = task.check_after_crash(
                    programs,
                    context.texts,
                    PACKAGE,
                    build == Build::Debug,
                )?;
                for line in done {
                    println!("    - {line}");
                }
                Ok(())
            },
        );
    }
    let hung = report.step(
        format!("{name}: launch Crash Test again and tap Hang"),
        || hang(device),
    );

    if context.device_tests {
        driver_test(
            report,
            context,
            build,
            since,
            apk,
            crashed.is_some() && hung.is_some(),
        );
    }
    report.step(format!("{name}: uninstall"), || {
        device
            .run(&["uninstall", PACKAGE], crate::adb::QUICK)
            .map(drop)
    });
}

/// What a device test is told about the run, as environment variables (`docs/crashtest.md`).
struct TestEnv<'a> {
    device: &'a Device,
    build: Build,
    since: u64,
    apk: &'a Path,
    simulated: bool,
}

impl TestEnv<'_> {
    fn vars(&self) -> Vec<(&'static str, String)> {
        let mut vars = vec![
            ("PHONELOGS_ANDROID_SERIAL", self.device.serial().to_owned()),
            ("PHONELOGS_CRASHTEST_BUILD", self.build.name().to_owned()),
            ("PHONELOGS_CRASHTEST_SINCE", self.since.to_string()),
            ("PHONELOGS_CRASHTEST_APK", self.apk.display().to_string()),
            ("PHONELOGS_CRASHTEST_SIMULATED", self.simulated.to_string()),
        ];
        if let Some(port) = self.device.adb().port() {
            vars.push(("ANDROID_ADB_SERVER_PORT", port.to_string()));
        }
        vars
    }
}

/// Runs `cargo test --workspace --test TEST` (only `PACKAGE` has it) with the run's environment,
/// or fails saying the test has not been written yet.
fn named_test(
    workspace: &Path,
    folder: &str,
    package: &str,
    test: &str,
    env: &TestEnv<'_>,
) -> Result<()> {
    let file = workspace
        .join(folder)
        .join("tests")
        .join(format!("{test}.rs"));
    if !file.exists() {
        bail!(
            "{} ({package}) does not exist yet: the device test this step runs is still to be \
             written (its contract is in docs/crashtest.md)",
            file.strip_prefix(workspace).unwrap_or(&file).display()
        );
    }
    let vars = env.vars();
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    cargo(
        workspace,
        &[
            "test",
            "--workspace",
            "--test",
            test,
            "--",
            "--nocapture",
            "--test-threads=1",
        ],
        &vars,
    )
}

/// Picks the device: the serial given, else the only emulator adb lists.
fn choose_device(adb: &Adb, serial: Option<&str>) -> Result<Device> {
    if let Some(serial) = serial {
        let device = adb.device(serial);
        let state = device
            .state()
            .with_context(|| format!("adb cannot reach {serial}"))?;
        if state != "device" {
            bail!("{serial} is `{state}` to adb, not `device`");
        }
        return Ok(device);
    }
    let devices = adb.devices().context(
        "cannot list devices: is adb installed (apt-get install adb, or the Android SDK's platform-tools)?",
    )?;
    let emulators: Vec<&(String, String)> = devices
        .iter()
        .filter(|(serial, state)| serial.starts_with("emulator-") && state == "device")
        .collect();
    match emulators.as_slice() {
        [(serial, _)] => Ok(adb.device(serial)),
        [] => bail!("{}", no_device_message(&devices)),
        several => {
            let serials: Vec<&str> = several.iter().map(|(serial, _)| serial.as_str()).collect();
            bail!(
                "adb lists several emulators ({}); pass one with --serial",
                serials.join(", ")
            )
        }
    }
}

/// What to do when there is no emulator: said plainly, since this is what most people see first.
fn no_device_message(devices: &[(String, String)]) -> String {
    let listed = if devices.is_empty() {
        "adb lists no device at all".to_owned()
    } else {
        let listed: Vec<String> = devices
            .iter()
            .map(|(serial, state)| format!("{serial} ({state})"))
            .collect();
        format!("adb lists no running emulator, only: {}", listed.join(", "))
    };
    format!(
        "no device to test on: {listed}.\n\
         Do one of these:\n  \
         - start an emulator (the spec ran Android 10 / API 29 and Android 16 / API 36):\n      \
           emulator -avd <name> &   then   adb wait-for-device\n  \
         - name a phone or emulator: cargo xtask emulator-test --serial <serial>\n  \
         - use the simulated phone:  cargo xtask emulator-test --sim\n\
         Nothing was installed or run."
    )
}

/// Starts (or restarts) Crash Test and waits until its Crash button is on screen.
fn launch(device: &Device) -> Result<()> {
    close_error_dialog(device);
    device.shell(&format!("am force-stop {PACKAGE}"))?;
    let output = device.shell(&format!("am start -W -n {ACTIVITY}"))?;
    if output.contains("Error") {
        bail!("am start said: {}", output.trim());
    }
    find_button(device, CRASH_BUTTON).map(drop)
}

/// The centre of a button, from `uiautomator dump`, waiting for the screen to show it.
fn find_button(device: &Device, (resource_id, text): (&str, &str)) -> Result<(i32, i32)> {
    let deadline = Instant::now() + SCREEN_WAIT;
    let mut last_error;
    loop {
        match dump_ui(device) {
            Ok(dump) => match uiautomator::find(&dump, resource_id, text) {
                Some(node) => match node.bounds {
                    Some(bounds) => return Ok(bounds.center()),
                    None => last_error = format!("{resource_id} has no bounds"),
                },
                None => last_error = format!("no {resource_id} (\"{text}\") on screen"),
            },
            Err(error) => last_error = format!("{error:#}"),
        }
        if Instant::now() >= deadline {
            bail!("{last_error} after {} s", SCREEN_WAIT.as_secs());
        }
        thread::sleep(Duration::from_millis(500));
    }
}

/// The active window as `uiautomator dump` writes it.
fn dump_ui(device: &Device) -> Result<String> {
    device.shell(&format!("rm -f {UI_DUMP}"))?;
    device.shell(&format!("uiautomator dump {UI_DUMP}"))?;
    let dump = device.shell(&format!("cat {UI_DUMP}"))?;
    if !dump.contains("<hierarchy") {
        bail!("uiautomator dump wrote no hierarchy: {}", dump.trim());
    }
    Ok(dump)
}

/// Finds a button and taps its centre.
fn tap(device: &Device, button: (&str, &str)) -> Result<()> {
    let (x, y) = find_button(device, button)?;
    device.shell(&format!("input tap {x} {y}")).map(drop)
}

/// How many drop box entries of `tag` belong to Crash Test.
fn drop_box_entries(device: &Device, tag: &str) -> Result<usize> {
    let text = device.shell(&format!("dumpsys dropbox --print {tag}"))?;
    Ok(text
        .lines()
        .filter(|line| line.trim() == format!("Process: {PACKAGE}"))
        .count())
}

/// Closes a "has stopped" or "isn't responding" dialog if one shows; best effort.
fn close_error_dialog(device: &Device) {
    let Ok(dump) = dump_ui(device) else { return };
    if let Some(node) = uiautomator::find(&dump, CLOSE_DIALOG_BUTTON.0, CLOSE_DIALOG_BUTTON.1)
        && let Some(bounds) = node.bounds
    {
        let (x, y) = bounds.center();
        let _ = device.shell(&format!("input tap {x} {y}"));
    }
}

/// Leaves the device as it was: Crash Test stopped and uninstalled, no debug app set.
struct Cleanup<'a> {
    device: &'a Device,
}

impl Drop for Cleanup<'_> {
    fn drop(&mut self) {
        println!("cleanup: force-stop and uninstall {PACKAGE}, clear the debug app");
        let _ = self.device.shell(&format!("am force-stop {PACKAGE}"));
        let _ = self.device.run(&["uninstall", PACKAGE], crate::adb::QUICK);
        let _ = self.device.shell("am clear-debug-app");
        let _ = self.device.shell(&format!("rm -f {UI_DUMP}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Option<Options>> {
        Options::parse(args.iter().map(|arg| (*arg).to_owned()))
    }

    #[test]
    fn reads_the_arguments() {
        let options = parse(&["--serial", "emulator-5556"]).unwrap().unwrap();
        assert_eq!(options.serial.as_deref(), Some("emulator-5556"));
        assert!(!options.sim);
        let options = parse(&["--sim", "--android", "10"]).unwrap().unwrap();
        assert!(options.sim);
        assert!(!options.sim_ios);
        assert!(parse(&["--sim-ios"]).unwrap().unwrap().sim_ios);
        let on_26 = parse(&["--sim-ios", "--ios", "26.1"]).unwrap().unwrap();
        assert_eq!(on_26.ios, "26.1");
        assert_eq!(parse(&["--sim-ios"]).unwrap().unwrap().ios, "16.7.10");
        assert!(parse(&["--sim-ios", "--ios", "15.0"]).is_err());
        assert_eq!(options.android, "10");
        assert_eq!(parse(&["--help"]).unwrap(), None);
    }

    #[test]
    fn refuses_bad_arguments() {
        for args in [
            &["--sim", "--serial", "x"][..],
            &["--sim-ios", "--serial", "x"][..],
            &["--sim-ios", "--sim"][..],
            &["--serial"][..],
            &["--android", "12"][..],
            &["--frobnicate"][..],
        ] {
            assert!(parse(args).is_err(), "{args:?}");
        }
    }

    #[test]
    fn the_no_device_message_says_what_to_do() {
        let message = no_device_message(&[]);
        assert!(message.contains("adb lists no device"), "{message}");
        assert!(message.contains("--serial"), "{message}");
        assert!(message.contains("--sim"), "{message}");
        let message = no_device_message(&[("R5CT1234".to_owned(), "unauthorized".to_owned())]);
        assert!(message.contains("R5CT1234 (unauthorized)"), "{message}");
    }

    #[test]
    fn the_test_environment_names_device_build_and_server() {
        let adb = Adb::private(OsString::from("adb"), 41000, PathBuf::from("/tmp/h"));
        let device = adb.device("127.0.0.1:40001");
        let env = TestEnv {
            device: &device,
            build: Build::Release,
            since: 1_790_000_000,
            apk: Path::new("/tmp/crashtest-release.apk"),
            simulated: true,
        };
        let vars = env.vars();
        let get = |key: &str| {
            vars.iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get("PHONELOGS_ANDROID_SERIAL"), Some("127.0.0.1:40001"));
        assert_eq!(get("PHONELOGS_CRASHTEST_BUILD"), Some("release"));
        assert_eq!(get("PHONELOGS_CRASHTEST_SINCE"), Some("1790000000"));
        assert_eq!(get("ANDROID_ADB_SERVER_PORT"), Some("41000"));
    }
}
