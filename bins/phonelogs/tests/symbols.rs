//! `phonelogs symbols add` and `phonelogs report --symbols` as a person uses them: ProGuard's
//! real mapping (`testdata/symbols/proguard-6.2.2/`) filed for the app, a crash buffer dump with
//! the same obfuscated crash in two processes, read back deobfuscated and grouped; and
//! `phonelogs doctor --symbols` on the simulated Android phone and iPhone: per phone, whether
//! symbols are filed for the installed version.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Output};

fn phonelogs(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_phonelogs"))
        .args(args)
        .env_remove("PHONELOGS_SYMBOLS_DIR")
        .env_remove("PHONELOGS_STATE_DIR")
        .output()
        .expect("the phonelogs binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const APP: &str = "dev.phonelogs.crashtest";

/// One crash as `logcat -b crash -v epoch -v uid` prints it (see testdata/README.md).
fn crash(pid: u32, time: &str) -> String {
    let prefix = format!("         {time} 10127 {pid:5} {pid:5} E AndroidRuntime: ");
    format!(
        "{prefix}FATAL EXCEPTION: main\n{prefix}Process: {APP}, PID: {pid}\n{prefix}java.lang.IllegalStateException: Crash button tapped\n{prefix}\tat dev.phonelogs.crashtest.jvm.a.a(SourceFile:1047)\n{prefix}\tat dev.phonelogs.crashtest.jvm.c.a(SourceFile:22)\n{prefix}\tat dev.phonelogs.crashtest.jvm.CrashMain.main(SourceFile:9)\n"
    )
}

#[test]
fn add_then_report_deobfuscates_and_groups() {
    let dir = tempfile::tempdir().unwrap();
    let symbols = dir.path().join("symbols");
    let symbols_arg = symbols.to_str().unwrap();
    let mapping = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/symbols/proguard-6.2.2/mapping.txt");
    let out = phonelogs(&[
        "symbols",
        "add",
        "--dir",
        symbols_arg,
        APP,
        "3",
        mapping.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(symbols.join(APP).join("3").join("mapping.txt").is_file());

    let dump = dir.path().join("crash.txt");
    std::fs::write(
        &dump,
        format!(
            "--------- beginning of crash\n{}{}",
            crash(23031, "1795939331.010"),
            crash(23544, "1795939480.200")
        ),
    )
    .unwrap();
    let out = phonelogs(&[
        "report",
        "--json",
        "--symbols",
        symbols_arg,
        dump.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "one group: {lines:#?}");
    let report = &lines[0];
    assert_eq!(report["occurrences"].as_array().unwrap().len(), 2);
    assert_eq!(report["pid"], 23544, "the newest text is shown");
    let body = report["text"].as_str().unwrap();
    assert!(
        body.contains("\tat dev.phonelogs.crashtest.jvm.Cart.tapped(Cart.java:47)"),
        "{body}"
    );
    assert!(!body.contains("jvm.a.a("), "{body}");
    assert_eq!(
        report["blamed_frame"]["function"],
        "dev.phonelogs.crashtest.jvm.Cart.tapped"
    );
    assert_eq!(report["symbols"]["used"][0]["kind"], "mapping");
    assert_eq!(report["fingerprint"].as_str().unwrap().len(), 16);
    // The cache was written under the symbols directory, for the next run.
    assert!(symbols.join(".cache").read_dir().unwrap().next().is_some());

    let out = phonelogs(&["report", "--symbols", symbols_arg, dump.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let heading = text(&out.stdout);
    assert!(
        heading.starts_with("Java crash ×2 (first 08:02:11, last 08:04:40) IllegalStateException at Cart.tapped(Cart.java:47)"),
        "{heading}"
    );
}

#[test]
fn add_refuses_hostile_names_and_unknown_files() {
    let dir = tempfile::tempdir().unwrap();
    let symbols = dir.path().join("symbols");
    let symbols_arg = symbols.to_str().unwrap();
    let junk = dir.path().join("junk.bin");
    std::fs::write(&junk, b"\x00\x01not a mapping").unwrap();
    let mapping = dir.path().join("m.txt");
    std::fs::write(&mapping, "a.B -> a:\n").unwrap();
    for (app, version, file) in [
        ("../etc", "3", &mapping),
        ("com.example.app", "..", &mapping),
        ("com.example.app", "3/../../x", &mapping),
        ("com.example.app", "3", &junk),
    ] {
        let out = phonelogs(&[
            "symbols",
            "add",
            "--dir",
            symbols_arg,
            app,
            version,
            file.to_str().unwrap(),
        ]);
        assert!(!out.status.success(), "{app} {version} was accepted");
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains("phonelogs:") && !stderr.contains("panicked"),
            "{app} {version}: a clear refusal, not a crash: {stderr}"
        );
    }
    // Nothing was filed anywhere.
    let filed: Vec<_> = std::fs::read_dir(&symbols)
        .map(|d| d.flatten().collect())
        .unwrap_or_default();
    assert!(filed.is_empty(), "{filed:?}");
    assert!(!dir.path().join("etc").exists());
}

/// Files `file` for `app` `version` with `phonelogs symbols add`; returns where it went.
fn add(symbols: &Path, app: &str, version: &str, file: &Path) -> String {
    let out = phonelogs(&[
        "symbols",
        "add",
        "--dir",
        symbols.to_str().unwrap(),
        app,
        version,
        file.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let printed = text(&out.stdout);
    printed
        .trim()
        .rsplit_once(" -> ")
        .map(|(_, to)| to.to_owned())
        .unwrap()
}

/// An unstripped `.so` with a GNU build id, built from `testdata/symbols/native/crashlib.c`;
/// `None` (the test says why) without a C compiler.
fn native_lib(dir: &Path) -> Option<std::path::PathBuf> {
    let lib = dir.join("libcrashlib.so");
    let source =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/symbols/native/crashlib.c");
    let built = Command::new("cc")
        .args(["-g", "-O1", "-shared", "-fPIC", "-Wl,--build-id", "-o"])
        .arg(&lib)
        .arg(source)
        .status();
    match built {
        Ok(status) if status.success() => Some(lib),
        other => {
            eprintln!("skipping the .so part: cc could not build crashlib.c ({other:?})");
            None
        }
    }
}

/// The simulated phones the doctor reaches, and their names as the MCP server gives them.
struct Phones {
    android: phonelogs_adbsim::SimPhone,
    adb_server: String,
    usbmuxd: String,
    android_name: String,
    iphone_name: String,
    _front: phonelogs_adbsim::SimHandle,
    _ios: phonelogs_iossim::IosSim,
}

/// The simulated Android phone with Crash Test at versionCode 3 and a shop app at 9, and the
/// simulated iPhone with Crash Test at CFBundleVersion 41.
async fn phones() -> Phones {
    use phonelogs_adbsim::{HostFront, Package, Profile, SimPhone};
    let android = SimPhone::with_profile(Profile::default());
    let mut crashtest = Package::new(APP, 10234);
    crashtest.debuggable = true;
    crashtest.version_code = 3;
    android.install(crashtest);
    let mut shop = Package::new("com.example.shop", 10300);
    shop.version_code = 9;
    android.install(shop);
    let (address, front) = HostFront::bind(None, android.clone()).await.unwrap();
    let iphone = phonelogs_iossim::SimPhone::default_phone();
    let mut app = phonelogs_iossim::model::default_apps()
        .into_iter()
        .find(|a| a.bundle_id == APP)
        .unwrap();
    app.build = "41".into();
    iphone.install(app);
    let ios = phonelogs_iossim::IosSim::bind_loopback(None, iphone.clone())
        .await
        .unwrap();
    let adb_server = format!("127.0.0.1:{}", address.port());
    let usbmuxd = ios.tcp_addr().unwrap().to_string();
    Phones {
        android_name: format!("{adb_server}/{}", android.profile().serial),
        iphone_name: format!("{usbmuxd}/{}", iphone.profile().udid),
        android,
        adb_server,
        usbmuxd,
        _front: front,
        _ios: ios,
    }
}

/// `phonelogs doctor` with these arguments, off the test's runtime.
async fn doctor(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_phonelogs"))
            .arg("doctor")
            .args(args)
            .env_remove("PHONELOGS_SYMBOLS_DIR")
            .env("PHONELOGS_LOG", "error")
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

/// The finding whose check is `check`.
fn finding<'a>(findings: &'a [serde_json::Value], check: &str) -> &'a serde_json::Value {
    findings
        .iter()
        .find(|f| f["check"] == check)
        .unwrap_or_else(|| panic!("no finding {check:?} in {findings:#?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_says_whether_the_installed_versions_have_symbols() {
    let dir = tempfile::tempdir().unwrap();
    let symbols = dir.path().join("symbols");
    let mapping = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/symbols/proguard-6.2.2/mapping.txt");
    add(&symbols, APP, "3", &mapping);
    let lib = native_lib(dir.path()).map(|lib| add(&symbols, APP, "3", &lib));
    add(&symbols, "com.example.shop", "7", &mapping);
    add(&symbols, "com.example.shop", "8", &mapping);
    add(&symbols, "com.example.gone", "2", &mapping);
    std::fs::create_dir_all(symbols.join("com.example.gone").join("5")).unwrap();
    let phones = phones().await;
    // A line of the app's own: the doctor reads the app's description, never its log.
    phones
        .android
        .log(
            APP,
            phonelogs_adbsim::Priority::Info,
            "CrashTest",
            "DOCTOR-MUST-NOT-PRINT",
        )
        .unwrap();
    let state = tempfile::tempdir().unwrap();
    let args = |json: bool| {
        let mut args = vec![
            "--symbols".to_owned(),
            symbols.display().to_string(),
            "--adb-server".to_owned(),
            phones.adb_server.clone(),
            "--usbmuxd".to_owned(),
            phones.usbmuxd.clone(),
            "--state-dir".to_owned(),
            state.path().display().to_string(),
        ];
        if json {
            args.push("--json".to_owned());
        }
        args
    };
    let out = doctor(args(true)).await;
    let stdout = text(&out.stdout);
    assert!(!stdout.contains("DOCTOR-MUST-NOT-PRINT"), "{stdout}");
    assert!(
        !out.status.success(),
        "a version without symbols is a problem"
    );
    let findings: Vec<serde_json::Value> = serde_json::from_str(&stdout).unwrap();
    for f in &findings {
        let mut keys: Vec<&str> = f.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["check", "detail", "fix", "ok"], "{f}");
    }

    // Android: versionCode 3 installed, symbols filed for 3.
    let ok = finding(
        &findings,
        &format!("symbols for {APP} on {}", phones.android_name),
    );
    let mut files = "mapping.txt".to_owned();
    if let Some(placed) = &lib {
        // `symbols add` filed it under native/<build id>/, the id the doctor names.
        let id = Path::new(placed)
            .parent()
            .and_then(|p| p.file_name())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert_eq!(id.len(), 40, "a GNU build id: {placed}");
        files.push_str(&format!(", libcrashlib.so (build id {id})"));
    }
    assert_eq!(ok["ok"], true, "{ok}");
    assert_eq!(
        ok["detail"],
        format!("installed version 3; symbols filed for 3: {files}")
    );
    assert!(ok["fix"].is_null(), "{ok}");

    // iPhone: CFBundleVersion 41 installed, only 3 filed.
    let ios = finding(
        &findings,
        &format!("symbols for {APP} on {}", phones.iphone_name),
    );
    assert_eq!(ios["ok"], false, "{ios}");
    assert_eq!(
        ios["detail"],
        "no symbols for the installed version 41; filed: 3"
    );
    assert!(
        ios["fix"].as_str().unwrap().starts_with(&format!(
            "`phonelogs symbols add --dir {} {APP} 41 App.dSYM`",
            symbols.display()
        )),
        "{ios}"
    );

    // Android: the shop at 9, symbols for 7 and 8 only.
    let shop = finding(
        &findings,
        &format!("symbols for com.example.shop on {}", phones.android_name),
    );
    assert_eq!(shop["ok"], false, "{shop}");
    assert_eq!(
        shop["detail"],
        "no symbols for the installed version 9; filed: 7, 8"
    );
    assert!(
        shop["fix"]
            .as_str()
            .unwrap()
            .contains("phonelogs symbols add --dir"),
        "{shop}"
    );
    assert!(
        shop["fix"]
            .as_str()
            .unwrap()
            .contains(" com.example.shop 9 mapping.txt lib….so`")
    );

    // Installed on neither phone: which versions are filed, informational.
    let gone = finding(&findings, "symbols for com.example.gone");
    assert_eq!(gone["ok"], true, "{gone}");
    assert_eq!(
        gone["detail"],
        "not installed on any of the 2 phones reached; filed: 2 (mapping.txt), 5 (empty)"
    );
    // Nothing about the shop on the iPhone, where it is not installed, and no other finding
    // about symbols.
    let about_symbols: Vec<&str> = findings
        .iter()
        .filter_map(|f| f["check"].as_str())
        .filter(|c| c.starts_with("symbols"))
        .collect();
    assert_eq!(about_symbols.len(), 4, "{about_symbols:#?}");

    // The same findings for a person, with the fix under the problem.
    let out = doctor(args(false)).await;
    let printed = text(&out.stdout);
    assert!(
        printed.contains(&format!(
            "ok  symbols for {APP} on {}: installed version 3; symbols filed for 3: {files}\n",
            phones.android_name
        )),
        "{printed}"
    );
    assert!(
        printed.contains(&format!(
            "NO  symbols for com.example.shop on {}: no symbols for the installed version 9; filed: 7, 8\n    fix: `phonelogs symbols add",
            phones.android_name
        )),
        "{printed}"
    );
    assert!(!printed.contains("DOCTOR-MUST-NOT-PRINT"), "{printed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_reads_symbols_dir_from_the_config_file() {
    let dir = tempfile::tempdir().unwrap();
    let symbols = dir.path().join("symbols");
    let mapping = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/symbols/proguard-6.2.2/mapping.txt");
    add(&symbols, "com.example.shop", "9", &mapping);
    let phones = phones().await;
    let config = dir.path().join("phonelogs.toml");
    std::fs::write(
        &config,
        format!(
            "agent = \"ci\"\nsymbols_dir = {:?}\nadb_servers = [{:?}]\nusbmuxd = [{:?}]\n",
            symbols.display().to_string(),
            phones.adb_server,
            phones.usbmuxd
        ),
    )
    .unwrap();
    let state = tempfile::tempdir().unwrap();
    let out = doctor(vec![
        "--json".into(),
        "--config".into(),
        config.display().to_string(),
        "--state-dir".into(),
        state.path().display().to_string(),
    ])
    .await;
    let findings: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let shop = finding(
        &findings,
        &format!("symbols for com.example.shop on {}", phones.android_name),
    );
    assert_eq!(shop["ok"], true, "{shop}");
    assert_eq!(
        shop["detail"],
        "installed version 9; symbols filed for 9: mapping.txt"
    );
    // Crash Test has no folder here: nothing is said of it.
    assert!(
        !findings
            .iter()
            .any(|f| f["check"].as_str().unwrap().contains(APP)),
        "{findings:#?}"
    );
}
