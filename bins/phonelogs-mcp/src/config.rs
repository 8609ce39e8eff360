//! The server's settings: command-line flags, the same keys in a TOML `--config FILE`, and the
//! defaults. A flag wins over the file, the file over the environment, the environment over the
//! default.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::Parser;
use phonelogs_driver::AppId;
use phonelogs_phones::{DemoKind, PhoneFlags, PhoneSources};
use phonelogs_policy::{Agent, Mode, Policy};
use phonelogs_store_pg::ConnectionString;
use serde::Deserialize;

/// The environment variable the source document names for the tombstone root.
pub const LOCAL_ROOT_ENV: &str = "ADB_AUTOMATION_LOCAL_ROOT";
/// The environment variable that moves the state directory (shared with `phonelogs`).
pub use phonelogs_gateway::STATE_DIR_ENV;

/// The phonelogs MCP server: lets a coding agent read one app's own logs and crash reports from
/// a connected phone, under rules a person controls. Speaks MCP on stdio, or Streamable HTTP
/// with `--http ADDR`.
#[derive(Debug, Parser)]
#[command(name = "phonelogs-mcp", version)]
pub struct Args {
    /// Serve built-in simulated phones (Crash Test and a few other apps) instead of real
    /// phones: see real results with no phone connected. `--demo` (or `--demo=both`) is the
    /// simulated Android phone and the simulated iPhone, each on its real wire and read through
    /// the real driver; `--demo=adbsim` or `--demo=iossim` serves one of them; `--demo=fake` is
    /// the in-memory fake phone.
    #[arg(long, value_name = "KIND", num_args = 0..=1, default_missing_value = "both")]
    pub demo: Option<DemoKind>,
    /// Where approvals, Always-allow rules and history live (SQLite), shared with the
    /// `phonelogs` command. Default: $PHONELOGS_STATE_DIR, else the user's state directory.
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// A PostgreSQL store shared by many servers instead of the state directory's SQLite
    /// (`postgres://user@host/db?sslmode=verify-full`, see docs/farms.md). Default:
    /// $PHONELOGS_STORE.
    #[arg(long, value_name = "URL")]
    pub store: Option<ConnectionString>,
    /// A file holding the `--store` connection string (a secret file: see docs/farms.md).
    #[arg(long, value_name = "FILE")]
    pub store_file: Option<PathBuf>,
    /// Apply the shared store's schema migrations at start (`phonelogs store migrate`).
    #[arg(long)]
    pub migrate: bool,
    /// The agent's name, as the person sees it in questions and history. Default: agent.
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// What the agent may do: full, read-only or watch-only (no logs). Default: full.
    #[arg(long = "agent-mode", alias = "mode", value_name = "MODE")]
    pub agent_mode: Option<String>,
    /// The apps the agent may touch (its scope), comma-separated. Default: any app.
    #[arg(
        long = "agent-apps",
        alias = "apps",
        value_name = "A,B",
        value_delimiter = ','
    )]
    pub agent_apps: Option<Vec<String>>,
    /// This task's apps, comma-separated. Default: the agent's scope.
    #[arg(long = "task-apps", value_name = "A,B", value_delimiter = ',')]
    pub task_apps: Option<Vec<String>>,
    /// A TOML file with the same keys (state_dir, store, store_file, agent, agent_mode, agent_apps, task_apps,
    /// local_root, result_cap, symbols_dir, adb_servers, usbmuxd, tunneld, questions) and the block rules and extra refused apps under [policy].
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Where capture_native_tombstone may write (under tombstones/). Default:
    /// $ADB_AUTOMATION_LOCAL_ROOT; none means the tool is refused.
    #[arg(long, value_name = "DIR")]
    pub local_root: Option<PathBuf>,
    /// The most one result's log may hold, in bytes (JSON-escaped, as a model receives it):
    /// lower it when your client passes the model less. At least 4096. Default: 65536, the
    /// spec's 64 KB.
    #[arg(long, value_name = "BYTES")]
    pub result_cap: Option<usize>,
    /// A symbols directory (`DIR/<app>/<versionCode or CFBundleVersion>/`: mapping.txt,
    /// unstripped .so files, .dSYMs) applied to crash reports and stack lines, locally. Default:
    /// none.
    #[arg(long = "symbols", value_name = "DIR")]
    pub symbols: Option<PathBuf>,
    /// Where phones are: `--adb-server`, `--usbmuxd`, `--tunneld`.
    #[command(flatten)]
    pub phones: PhoneFlags,
    /// Who is asked the person's questions: `client` (the default: on stdio the client's own
    /// dialog as well as the person's side) or `person` (the person's side only: `phonelogs
    /// approvals`, `phonelogs ui`; the client is never asked, and no answer it sends is taken).
    /// Use `person` when the client could answer by itself: a scripted client, an agent that can
    /// drive its own client's dialog.
    #[arg(long, value_enum, value_name = "WHO")]
    pub questions: Option<QuestionsTo>,
    /// Streamable HTTP instead of stdio (`--http ADDR` and its flags).
    #[command(flatten)]
    pub http: phonelogs_http::HttpArgs,
}

/// Where the person's questions go (`--questions`, `questions`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QuestionsTo {
    /// The client's dialog where a person sits at it (stdio; an HTTP token marked `person`),
    /// and the person's side.
    #[default]
    Client,
    /// The person's side only: the client is never asked.
    Person,
}

/// The config file's `store`, kept as a [`ConnectionString`] (its `Debug` hides the password).
fn connection_string<'de, D: serde::Deserializer<'de>>(
    text: D,
) -> Result<Option<ConnectionString>, D::Error> {
    Ok(Option::<String>::deserialize(text)?.map(ConnectionString::from))
}

/// The keys of a `--config` file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// As `--state-dir`.
    pub state_dir: Option<PathBuf>,
    /// As `--store`.
    #[serde(default, deserialize_with = "connection_string")]
    pub store: Option<ConnectionString>,
    /// As `--store-file`.
    pub store_file: Option<PathBuf>,
    /// As `--agent`.
    pub agent: Option<String>,
    /// As `--agent-mode`.
    pub agent_mode: Option<String>,
    /// As `--agent-apps`.
    pub agent_apps: Option<Vec<String>>,
    /// As `--task-apps`.
    pub task_apps: Option<Vec<String>>,
    /// As `--local-root`.
    pub local_root: Option<PathBuf>,
    /// As `--result-cap`.
    pub result_cap: Option<usize>,
    /// As `--symbols`.
    pub symbols_dir: Option<PathBuf>,
    /// As `--adb-server`, one entry per server.
    pub adb_servers: Option<Vec<String>>,
    /// As `--usbmuxd`, one entry per address.
    pub usbmuxd: Option<Vec<String>>,
    /// As `--tunneld`, one entry per address.
    pub tunneld: Option<Vec<String>>,
    /// As `--questions`: `"client"` or `"person"`.
    pub questions: Option<QuestionsTo>,
    /// Block rules and extra refused apps (`block`, `finance_apps`, `password_managers`,
    /// `phone_apps`, `helpers`, `agents`).
    #[serde(default)]
    pub policy: Policy,
}

/// Everything the server needs, resolved.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Serve a simulated phone.
    pub demo: Option<DemoKind>,
    /// The state directory.
    pub state_dir: PathBuf,
    /// The shared store's connection string, when one was given (else SQLite in `state_dir`);
    /// its `Debug` shows the store's host, port and database only.
    pub store: Option<ConnectionString>,
    /// Apply the shared store's migrations at start.
    pub migrate: bool,
    /// The agent.
    pub agent: Agent,
    /// The task's apps.
    pub task_apps: Option<Vec<AppId>>,
    /// The tombstone root.
    pub local_root: Option<PathBuf>,
    /// The result cap, in bytes, for the gateway to lay results out within.
    pub result_cap: usize,
    /// The symbols directory, when one was given.
    pub symbols_dir: Option<PathBuf>,
    /// The policy.
    pub policy: Policy,
    /// Where phones are (adb servers, usbmuxd addresses, tunnelds).
    pub phones: PhoneSources,
    /// Streamable HTTP, when `--http` is given; stdio otherwise.
    pub http: Option<phonelogs_http::HttpSettings>,
    /// Where the person's questions go.
    pub questions: QuestionsTo,
}

impl Settings {
    /// Resolves flags, the config file, the environment and the defaults.
    pub fn resolve(args: Args) -> anyhow::Result<Settings> {
        let file = match &args.config {
            Some(path) => read_config(path)?,
            None => FileConfig::default(),
        };
        Settings::merge(args, file, |name| std::env::var_os(name))
    }

    /// The merge itself, with the environment passed in so it can be tested.
    pub fn merge(
        args: Args,
        file: FileConfig,
        env: impl Fn(&str) -> Option<std::ffi::OsString>,
    ) -> anyhow::Result<Settings> {
        let http = args.http.settings()?;
        let policy = file.policy;
        policy
            .validate()
            .context("the [policy] of the config file")?;

        let name = args
            .agent
            .or(file.agent)
            .unwrap_or_else(|| "agent".to_owned());
        // A named agent of the policy gives its mode and scope unless flags say otherwise.
        let named = policy.agent(&name).cloned();
        let mode = match args.agent_mode.or(file.agent_mode) {
            Some(text) => parse_mode(&text)?,
            None => named.as_ref().map_or(Mode::Full, |a| a.mode),
        };
        let scope = match args.agent_apps.or(file.agent_apps) {
            Some(apps) => Some(parse_apps(&apps, "agent apps")?),
            None => named.and_then(|a| a.scope),
        };
        let mut agent = Agent::named(name, mode).context("--agent (agent)")?;
        agent.scope = scope;
        let task_apps = args
            .task_apps
            .or(file.task_apps)
            .map(|apps| parse_apps(&apps, "task apps"))
            .transpose()?;

        let state_dir = match args.state_dir.or(file.state_dir) {
            Some(dir) => dir,
            None => phonelogs_gateway::default_state_dir(&env).with_context(|| {
                format!("no state directory: pass --state-dir or set {STATE_DIR_ENV}")
            })?,
        };
        let store_env = env(phonelogs_store_pg::STORE_ENV)
            .and_then(|v| v.into_string().ok())
            .map(ConnectionString::from);
        if let Some(warning) = args
            .store
            .as_ref()
            .and_then(ConnectionString::command_line_warning)
        {
            tracing::warn!("{warning}");
        }
        let store = phonelogs_store_pg::chosen(
            args.store.or(file.store).or(store_env),
            args.store_file.or(file.store_file).as_deref(),
        )
        .context("--store (store)")?;
        let local_root = args.local_root.or(file.local_root).or_else(|| {
            env(LOCAL_ROOT_ENV)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        });
        let result_cap = args
            .result_cap
            .or(file.result_cap)
            .unwrap_or(phonelogs_gateway::MAX_RESULT_BYTES);
        // Checked here too (the gateway refuses it as well), so the error names the flag.
        if result_cap < phonelogs_gateway::MIN_RESULT_CAP {
            bail!(
                "--result-cap (result_cap) {result_cap} is too small: use at least {} bytes (the default is {})",
                phonelogs_gateway::MIN_RESULT_CAP,
                phonelogs_gateway::MAX_RESULT_BYTES
            );
        }
        Ok(Settings {
            demo: args.demo,
            state_dir,
            store,
            migrate: args.migrate,
            agent,
            task_apps,
            local_root,
            result_cap,
            symbols_dir: args.symbols.or(file.symbols_dir),
            policy,
            http,
            phones: PhoneSources::new(&args.phones, file.adb_servers, file.usbmuxd, file.tunneld),
            questions: args.questions.or(file.questions).unwrap_or_default(),
        })
    }
}

fn read_config(path: &Path) -> anyhow::Result<FileConfig> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the config file {}", path.display()))?;
    toml::from_str(&text).with_context(|| format!("reading the config file {}", path.display()))
}

fn parse_mode(text: &str) -> anyhow::Result<Mode> {
    match text.trim().to_ascii_lowercase().replace('_', "-").as_str() {
        "full" => Ok(Mode::Full),
        "read-only" => Ok(Mode::ReadOnly),
        "watch-only" => Ok(Mode::WatchOnly),
        other => bail!("the agent mode {other:?} is not one of full, read-only, watch-only"),
    }
}

fn parse_apps(apps: &[String], what: &str) -> anyhow::Result<Vec<AppId>> {
    apps.iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .map(|s| AppId::parse(s).with_context(|| format!("the {what} list names {s:?}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn args(list: &[&str]) -> Args {
        Args::parse_from(std::iter::once("phonelogs-mcp").chain(list.iter().copied()))
    }

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect();
        move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.into())
    }

    #[test]
    fn defaults_are_a_full_agent_named_agent_under_the_state_home() {
        let s = Settings::merge(
            args(&[]),
            FileConfig::default(),
            env(&[("HOME", "/home/p")]),
        )
        .unwrap();
        assert_eq!(s.agent.name, "agent");
        assert_eq!(s.agent.mode, Mode::Full);
        assert_eq!(s.agent.scope, None);
        assert_eq!(s.task_apps, None);
        assert_eq!(s.local_root, None);
        assert_eq!(s.demo, None);
        assert_eq!(s.result_cap, 65_536);
        if cfg!(unix) {
            assert_eq!(s.state_dir, PathBuf::from("/home/p/.local/state/phonelogs"));
        }
    }

    #[test]
    fn flags_win_over_the_file_and_the_file_over_the_environment() {
        let file: FileConfig = toml::from_str(
            r#"
            agent = "from-file"
            agent_mode = "watch-only"
            agent_apps = ["com.file.app"]
            local_root = "/file/root"
            [[policy.block]]
            name = "Chat apps"
            apps = ["com.whatsapp"]
            "#,
        )
        .unwrap();
        let s = Settings::merge(
            args(&[
                "--mode",
                "read-only",
                "--apps",
                "dev.phonelogs.crashtest,com.example.store",
                "--state-dir",
                "/s",
            ]),
            file,
            env(&[(LOCAL_ROOT_ENV, "/env/root")]),
        )
        .unwrap();
        assert_eq!(s.agent.name, "from-file");
        assert_eq!(s.agent.mode, Mode::ReadOnly);
        assert_eq!(
            s.agent.scope,
            Some(vec![
                AppId::new("dev.phonelogs.crashtest"),
                AppId::new("com.example.store")
            ])
        );
        assert_eq!(s.local_root, Some(PathBuf::from("/file/root")));
        assert_eq!(s.state_dir, PathBuf::from("/s"));
        assert_eq!(s.policy.block.len(), 1);

        let s = Settings::merge(
            args(&[]),
            FileConfig::default(),
            env(&[(LOCAL_ROOT_ENV, "/env/root"), (STATE_DIR_ENV, "/e")]),
        )
        .unwrap();
        assert_eq!(s.local_root, Some(PathBuf::from("/env/root")));
        assert_eq!(s.state_dir, PathBuf::from("/e"));
    }

    #[test]
    fn adb_servers_and_usbmuxd_addresses_come_from_flags_or_the_file() {
        let file = || -> FileConfig {
            toml::from_str(
                r#"
                adb_servers = ["lab-1:5037", "lab-2:5037"]
                usbmuxd = ["10.0.0.9:27015"]
                tunneld = ["10.0.0.9:49151"]
                "#,
            )
            .unwrap()
        };
        let s = Settings::merge(args(&[]), file(), env(&[("HOME", "/h")])).unwrap();
        assert_eq!(s.phones.adb_servers, ["lab-1:5037", "lab-2:5037"]);
        assert_eq!(s.phones.usbmuxd, ["10.0.0.9:27015"]);
        assert_eq!(s.phones.tunneld, ["10.0.0.9:49151"]);
        let s = Settings::merge(
            args(&["--adb-server", "a:1", "--adb-server", "b:2"]),
            file(),
            env(&[("HOME", "/h")]),
        )
        .unwrap();
        assert_eq!(s.phones.adb_servers, ["a:1", "b:2"]);
        assert_eq!(s.phones.usbmuxd, ["10.0.0.9:27015"]);
        let s = Settings::merge(args(&[]), FileConfig::default(), env(&[("HOME", "/h")])).unwrap();
        assert!(s.phones.adb_servers.is_empty() && s.phones.usbmuxd.is_empty());
    }

    #[test]
    fn questions_go_to_the_client_unless_the_flag_or_the_file_says_person() {
        let home = || env(&[("HOME", "/h")]);
        let s = Settings::merge(args(&[]), FileConfig::default(), home()).unwrap();
        assert_eq!(s.questions, QuestionsTo::Client);
        let file = || -> FileConfig { toml::from_str("questions = \"person\"").unwrap() };
        let s = Settings::merge(args(&[]), file(), home()).unwrap();
        assert_eq!(s.questions, QuestionsTo::Person);
        let s = Settings::merge(args(&["--questions", "client"]), file(), home()).unwrap();
        assert_eq!(s.questions, QuestionsTo::Client);
        let s = Settings::merge(
            args(&["--questions", "person"]),
            FileConfig::default(),
            home(),
        );
        assert_eq!(s.unwrap().questions, QuestionsTo::Person);
        assert!(toml::from_str::<FileConfig>("questions = \"agent\"").is_err());
        assert!(Args::try_parse_from(["phonelogs-mcp", "--questions", "agent"]).is_err());
    }

    #[test]
    fn demo_takes_an_optional_kind() {
        assert_eq!(args(&["--demo"]).demo, Some(DemoKind::Both));
        assert_eq!(args(&["--demo=both"]).demo, Some(DemoKind::Both));
        assert_eq!(args(&["--demo=fake"]).demo, Some(DemoKind::Fake));
        assert_eq!(args(&["--demo=adbsim"]).demo, Some(DemoKind::Adbsim));
        assert_eq!(args(&["--demo=iossim"]).demo, Some(DemoKind::Iossim));
        assert_eq!(
            args(&["--demo", "--state-dir", "/s"]).demo,
            Some(DemoKind::Both)
        );
        assert!(Args::try_parse_from(["phonelogs-mcp", "--demo=phone"]).is_err());
    }

    #[test]
    fn bad_values_are_refused_with_a_clear_error() {
        let err = Settings::merge(
            args(&["--agent-mode", "root"]),
            FileConfig::default(),
            env(&[("HOME", "/h")]),
        )
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
        assert!(err.contains("full, read-only, watch-only"), "{err}");
        assert!(
            Settings::merge(
                args(&["--task-apps", "a;b"]),
                FileConfig::default(),
                env(&[("HOME", "/h")])
            )
            .is_err()
        );
        assert!(toml::from_str::<FileConfig>("unknown_key = 1").is_err());
    }

    /// Issue 28, item 3: the name the history gives the person's own reads is no agent's,
    /// whether it comes from `--agent`, the file's `agent`, a `[[policy.agents]]` entry or a
    /// token file.
    #[test]
    fn no_agent_may_take_the_persons_name() {
        let person = phonelogs_gateway::catalog::PERSON_READER;
        let refused = |result: anyhow::Result<Settings>| {
            let error = result.err().map(|e| format!("{e:#}")).unwrap_or_default();
            assert!(error.contains("person"), "not refused: {error:?}");
        };
        let home = || env(&[("HOME", "/h")]);
        refused(Settings::merge(
            args(&["--agent", person]),
            FileConfig::default(),
            home(),
        ));
        let file: FileConfig = toml::from_str(&format!("agent = {person:?}")).unwrap();
        refused(Settings::merge(args(&[]), file, home()));
        let file: FileConfig = toml::from_str(&format!(
            "[[policy.agents]]\nname = {person:?}\nmode = \"full\"\n"
        ))
        .unwrap();
        refused(Settings::merge(args(&[]), file, home()));
        let tokens = phonelogs_http::parse_tokens(&format!("0123456789abcdef0123 {person}\n"));
        assert!(tokens.is_err(), "{tokens:?}");
    }

    #[test]
    fn the_symbols_directory_comes_from_the_flag_or_the_file() {
        let file: FileConfig = toml::from_str("symbols_dir = \"/file/symbols\"").unwrap();
        assert_eq!(file.symbols_dir, Some(PathBuf::from("/file/symbols")));
        let args = Args::try_parse_from(["phonelogs-mcp", "--symbols", "/flag/symbols"]).unwrap();
        assert_eq!(args.symbols, Some(PathBuf::from("/flag/symbols")));
    }

    #[test]
    fn the_result_cap_comes_from_the_flag_or_the_file_and_is_at_least_4096() {
        let file: FileConfig = toml::from_str("result_cap = 20000").unwrap();
        let s = Settings::merge(args(&[]), file, env(&[("HOME", "/h")])).unwrap();
        assert_eq!(s.result_cap, 20_000);
        let file: FileConfig = toml::from_str("result_cap = 20000").unwrap();
        let s = Settings::merge(
            args(&["--result-cap", "8192"]),
            file,
            env(&[("HOME", "/h")]),
        )
        .unwrap();
        assert_eq!(s.result_cap, 8_192);
        let err = Settings::merge(
            args(&["--result-cap", "4095"]),
            FileConfig::default(),
            env(&[("HOME", "/h")]),
        )
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
        assert!(err.contains("at least 4096"), "{err}");
        assert!(Args::try_parse_from(["phonelogs-mcp", "--result-cap", "lots"]).is_err());
    }

    #[test]
    fn the_settings_never_show_the_stores_password() {
        let flag = "postgres://lab:hunter2@db.example:6543/flag";
        let file: FileConfig =
            toml::from_str(r#"store = "postgres://lab:hunter2@db.example:6543/file""#).unwrap();
        let from_env = "host=db.example port=6543 dbname=env user=lab password=hunter2";
        let vars = [(phonelogs_store_pg::STORE_ENV, from_env)];
        let shown = format!("{file:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        for (list, file, expected) in [
            (vec!["--store", flag], FileConfig::default(), flag),
            (vec![], file, "postgres://lab:hunter2@db.example:6543/file"),
            (vec![], FileConfig::default(), from_env),
        ] {
            let args = args(&[list.as_slice(), &["--state-dir", "/s"]].concat());
            let shown = format!("{args:?}");
            assert!(!shown.contains("hunter2"), "{shown}");
            let settings = Settings::merge(args, file, env(&vars)).unwrap();
            let store = settings.store.clone().unwrap();
            // Given whole to the store, shown as its host, port and database only.
            assert_eq!(store.expose(), expected);
            let shown = format!("{settings:?}");
            assert!(shown.contains("PostgreSQL db.example:6543/"), "{shown}");
            assert!(!shown.contains("hunter2"), "{shown}");
        }
    }
}
