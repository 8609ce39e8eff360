//! The MCP clients `phonelogs setup` connects, and where each keeps its servers: the file, the
//! key, the format and the entry, each as that client's own documentation gives it (cited below
//! and in `docs/mcp.md`). Where a client has its own `mcp add` command, the entry is the one that
//! command writes (`bins/phonelogs/tests/setup_clients.rs` compares them).

use std::path::{Path, PathBuf};

/// The name of our entry in every client's list of servers.
pub const SERVER_NAME: &str = "phonelogs";

/// An MCP client on this computer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Client {
    /// Claude Code (the `claude` command and its editor extensions).
    ClaudeCode,
    /// The Claude desktop app.
    ClaudeDesktop,
    /// Cursor.
    Cursor,
    /// Visual Studio Code (GitHub Copilot's agent mode).
    Vscode,
    /// OpenAI's Codex CLI (and its IDE extension, which reads the same file).
    Codex,
    /// Google's Gemini CLI.
    Gemini,
    /// Windsurf (Cascade).
    Windsurf,
    /// Android Studio (Gemini in Android Studio's agent mode).
    AndroidStudio,
}

/// Whose configuration: this user's (every project), or this project's (a file in the project,
/// often committed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scope {
    /// The user's configuration, for every project.
    User,
    /// The project's configuration, in the project directory.
    Project,
}

/// How a client's file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// JSON; comments and trailing commas are kept where the client reads them (JSONC).
    Json,
    /// TOML.
    Toml,
}

/// The shape of one server's entry, as the client's documentation (or its own `mcp add`) writes
/// it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryShape {
    /// `{"command", "args"}`.
    CommandArgs,
    /// `{"type": "stdio", "command", "args"}`: VS Code requires `type`.
    TypedStdio,
    /// `{"type": "stdio", "command", "args", "env": {}}`: what `claude mcp add` writes.
    ClaudeCode,
    /// `[mcp_servers.NAME]` with `command` and `args`: what `codex mcp add` writes.
    CodexToml,
}

/// One client's file for one scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFile {
    /// The client.
    pub client: Client,
    /// The scope.
    pub scope: Scope,
    /// The file.
    pub path: PathBuf,
    /// Its format.
    pub format: Format,
    /// The top-level key that holds the servers.
    pub servers_key: &'static str,
    /// The shape of an entry.
    pub shape: EntryShape,
}

/// The operating system whose conventions place the files (a value, so tests can ask for any).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    /// Linux and the other Unix systems that follow the XDG base directories.
    Linux,
    /// macOS.
    Mac,
    /// Windows.
    Windows,
}

impl Os {
    /// The system this program runs on.
    pub fn current() -> Os {
        if cfg!(target_os = "macos") {
            Os::Mac
        } else if cfg!(windows) {
            Os::Windows
        } else {
            Os::Linux
        }
    }
}

/// Where this user's and this project's files are: the places every path is made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Places {
    /// The operating system.
    pub os: Os,
    /// The home directory.
    pub home: PathBuf,
    /// The project directory (`--project-dir`, else the current directory).
    pub project: PathBuf,
    /// `$XDG_CONFIG_HOME` (Linux), when set.
    pub xdg_config_home: Option<PathBuf>,
    /// `%APPDATA%` (Windows), when set.
    pub appdata: Option<PathBuf>,
    /// `$CODEX_HOME`, when set.
    pub codex_home: Option<PathBuf>,
}

impl Places {
    /// The places of this process: `HOME` (`USERPROFILE` on Windows) and the variables above.
    pub fn from_env(project: PathBuf) -> crate::Result<Places> {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let os = Os::current();
        let home = match os {
            Os::Windows => var("USERPROFILE").or_else(|| var("HOME")),
            _ => var("HOME"),
        }
        .ok_or_else(|| crate::Error::Refused("no home directory: set HOME".to_owned()))?;
        Ok(Places {
            os,
            home,
            project,
            xdg_config_home: var("XDG_CONFIG_HOME"),
            appdata: var("APPDATA"),
            codex_home: var("CODEX_HOME"),
        })
    }

    /// The per-user application data directory of desktop apps (Electron's `appData`): macOS
    /// `~/Library/Application Support`, Windows `%APPDATA%`, Linux `$XDG_CONFIG_HOME` or
    /// `~/.config`.
    fn app_data(&self) -> PathBuf {
        match self.os {
            Os::Mac => self.home.join("Library").join("Application Support"),
            Os::Windows => self
                .appdata
                .clone()
                .unwrap_or_else(|| self.home.join("AppData").join("Roaming")),
            Os::Linux => self
                .xdg_config_home
                .clone()
                .unwrap_or_else(|| self.home.join(".config")),
        }
    }
}

/// Where a client keeps its entry: the file, its format, the key holding the servers, and the
/// entry's shape.
type Location = (PathBuf, Format, &'static str, EntryShape);

/// A JSON (or JSONC) file's location.
fn json(path: PathBuf, servers_key: &'static str, shape: EntryShape) -> Location {
    (path, Format::Json, servers_key, shape)
}

/// A TOML file's location.
fn toml(path: PathBuf, servers_key: &'static str, shape: EntryShape) -> Location {
    (path, Format::Toml, servers_key, shape)
}

impl Client {
    /// Every client, in the order `doctor` lists them.
    pub const ALL: [Client; 8] = [
        Client::ClaudeCode,
        Client::ClaudeDesktop,
        Client::Cursor,
        Client::Vscode,
        Client::Codex,
        Client::Gemini,
        Client::Windsurf,
        Client::AndroidStudio,
    ];

    /// The name on the command line, and the default `--agent` name.
    pub fn id(self) -> &'static str {
        match self {
            Client::ClaudeCode => "claude-code",
            Client::ClaudeDesktop => "claude-desktop",
            Client::Cursor => "cursor",
            Client::Vscode => "vscode",
            Client::Codex => "codex",
            Client::Gemini => "gemini",
            Client::Windsurf => "windsurf",
            Client::AndroidStudio => "android-studio",
        }
    }

    /// The client's name for a person.
    pub fn title(self) -> &'static str {
        match self {
            Client::ClaudeCode => "Claude Code",
            Client::ClaudeDesktop => "Claude Desktop",
            Client::Cursor => "Cursor",
            Client::Vscode => "VS Code",
            Client::Codex => "Codex",
            Client::Gemini => "Gemini CLI",
            Client::Windsurf => "Windsurf",
            Client::AndroidStudio => "Android Studio",
        }
    }

    /// The scopes the client has.
    pub fn scopes(self) -> &'static [Scope] {
        match self {
            // Claude Desktop, Windsurf and Android Studio read one per-user file and nothing in
            // a project.
            Client::ClaudeDesktop | Client::Windsurf | Client::AndroidStudio => &[Scope::User],
            _ => &[Scope::User, Scope::Project],
        }
    }

    /// The client's file for `scope`, or why it has none.
    pub fn config_file(self, scope: Scope, places: &Places) -> Result<ConfigFile, String> {
        let (path, format, servers_key, shape) = match scope {
            Scope::User => self.user_location(places)?,
            Scope::Project => self.project_location(places).ok_or_else(|| {
                format!(
                    "{} has no project configuration: use --scope user",
                    self.title()
                )
            })?,
        };
        Ok(ConfigFile {
            client: self,
            scope,
            path,
            format,
            servers_key,
            shape,
        })
    }

    /// Where the client keeps its per-user entry.
    fn user_location(self, places: &Places) -> Result<Location, String> {
        let home = |relative: &[&str]| join(&places.home, relative);
        Ok(match self {
            // Claude Code (code.claude.com/docs/en/mcp, "MCP installation scopes"): user scope
            // is `mcpServers` at the top of ~/.claude.json, project scope is `.mcp.json` at the
            // project's root. Checked against `claude mcp add -s user|project` 2.1.328.
            Client::ClaudeCode => json(
                home(&[".claude.json"]),
                "mcpServers",
                EntryShape::ClaudeCode,
            ),
            // Claude Desktop (modelcontextprotocol.io/quickstart/user): macOS
            // ~/Library/Application Support/Claude/claude_desktop_config.json, Windows
            // %APPDATA%\Claude\claude_desktop_config.json. It has no Linux build of its own;
            // the Linux builds people package read the same name under ~/.config/Claude.
            Client::ClaudeDesktop => json(
                join(
                    &places.app_data(),
                    &["Claude", "claude_desktop_config.json"],
                ),
                "mcpServers",
                EntryShape::CommandArgs,
            ),
            // Cursor (cursor.com/docs/mcp): ~/.cursor/mcp.json for every project,
            // .cursor/mcp.json in a project; `mcpServers`.
            Client::Cursor => json(
                home(&[".cursor", "mcp.json"]),
                "mcpServers",
                EntryShape::CommandArgs,
            ),
            // VS Code (code.visualstudio.com/docs/copilot/reference/mcp-configuration):
            // `.vscode/mcp.json` in the workspace or `mcp.json` in the user profile (the
            // default profile's folder: the app data directory's Code/User), a top-level
            // `servers` object (not `mcpServers`), `type` required; the file is JSONC.
            Client::Vscode => json(
                join(&places.app_data(), &["Code", "User", "mcp.json"]),
                "servers",
                EntryShape::TypedStdio,
            ),
            // Codex (developers.openai.com/codex/mcp): `[mcp_servers.NAME]` in
            // $CODEX_HOME/config.toml (default ~/.codex), or .codex/config.toml in a trusted
            // project. Checked against `codex mcp add` and `codex mcp list` 0.169.0.
            Client::Codex => toml(
                match &places.codex_home {
                    Some(dir) => dir.join("config.toml"),
                    None => home(&[".codex", "config.toml"]),
                },
                "mcp_servers",
                EntryShape::CodexToml,
            ),
            // Gemini CLI (geminicli.com/docs/tools/mcp-server and docs/cli/configuration):
            // `mcpServers` in ~/.gemini/settings.json or the project's .gemini/settings.json.
            // Checked against `gemini mcp add -s user|project` 0.61.0.
            Client::Gemini => json(
                home(&[".gemini", "settings.json"]),
                "mcpServers",
                EntryShape::CommandArgs,
            ),
            // Windsurf (docs.windsurf.com/windsurf/cascade/mcp): ~/.codeium/windsurf/
            // mcp_config.json (the same under %USERPROFILE% on Windows); `mcpServers`.
            Client::Windsurf => json(
                home(&[".codeium", "windsurf", "mcp_config.json"]),
                "mcpServers",
                EntryShape::CommandArgs,
            ),
            // Android Studio (developer.android.com/studio/gemini/add-mcp-server): Settings ›
            // Tools › AI › MCP Servers saves `mcp.json` in Android Studio's configuration
            // directory, `mcpServers` with `command`, `args`, `env`. That directory is per
            // version (developer.android.com/studio/intro/studio-config, "Find your
            // configuration files"): the app data directory's Google/AndroidStudio<version>;
            // the newest one there is the one in use.
            Client::AndroidStudio => json(
                places.android_studio_dir()?.join("mcp.json"),
                "mcpServers",
                EntryShape::CommandArgs,
            ),
        })
    }

    /// Where the client keeps a project's entry (the sources are the per-user ones'); `None`
    /// for a client that reads nothing in a project.
    fn project_location(self, places: &Places) -> Option<Location> {
        let project = |relative: &[&str]| join(&places.project, relative);
        Some(match self {
            Client::ClaudeCode => json(
                project(&[".mcp.json"]),
                "mcpServers",
                EntryShape::ClaudeCode,
            ),
            Client::Cursor => json(
                project(&[".cursor", "mcp.json"]),
                "mcpServers",
                EntryShape::CommandArgs,
            ),
            Client::Vscode => json(
                project(&[".vscode", "mcp.json"]),
                "servers",
                EntryShape::TypedStdio,
            ),
            Client::Codex => toml(
                project(&[".codex", "config.toml"]),
                "mcp_servers",
                EntryShape::CodexToml,
            ),
            Client::Gemini => json(
                project(&[".gemini", "settings.json"]),
                "mcpServers",
                EntryShape::CommandArgs,
            ),
            Client::ClaudeDesktop | Client::Windsurf | Client::AndroidStudio => return None,
        })
    }

    /// What to run to see the client list phonelogs, where the client has such a command.
    pub fn check_command(self) -> Option<&'static str> {
        match self {
            Client::ClaudeCode => Some("claude mcp list"),
            Client::Codex => Some("codex mcp list"),
            Client::Gemini => Some("gemini mcp list"),
            _ => None,
        }
    }
}

impl Places {
    /// Android Studio's configuration directory: the newest `Google/AndroidStudio<version>`
    /// under the app data directory (`AndroidStudio2025.1.2` after `AndroidStudio2024.3`,
    /// compared number by number; previews, `AndroidStudioPreview…`, are not taken), or why
    /// there is none.
    fn android_studio_dir(&self) -> Result<PathBuf, String> {
        let google = self.app_data().join("Google");
        let newest = std::fs::read_dir(&google)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|entry| entry.path().is_dir())
            .filter_map(|entry| {
                let name = entry.file_name().into_string().ok()?;
                let version = studio_version(&name)?;
                Some((version, entry.path()))
            })
            .max();
        newest.map(|(_, path)| path).ok_or_else(|| {
            format!(
                "Android Studio's configuration directory ({}) was not found: start Android Studio once, then run this again",
                google.join("AndroidStudio<version>").display()
            )
        })
    }
}

/// The version numbers of a directory named `AndroidStudio<version>` (`2025.1.2` → 2025, 1, 2).
fn studio_version(name: &str) -> Option<Vec<u32>> {
    let version = name.strip_prefix("AndroidStudio")?;
    version
        .split('.')
        .map(|part| part.parse::<u32>().ok())
        .collect::<Option<Vec<u32>>>()
        .filter(|numbers| !numbers.is_empty())
}

fn join(base: &Path, relative: &[&str]) -> PathBuf {
    relative
        .iter()
        .fold(base.to_path_buf(), |path, part| path.join(part))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places(os: Os) -> Places {
        Places {
            os,
            home: PathBuf::from("/h"),
            project: PathBuf::from("/p"),
            xdg_config_home: None,
            appdata: Some(PathBuf::from("C:/Users/me/AppData/Roaming")),
            codex_home: None,
        }
    }

    fn path(client: Client, scope: Scope, os: Os) -> String {
        client
            .config_file(scope, &places(os))
            .unwrap()
            .path
            .to_string_lossy()
            .replace('\\', "/")
    }

    #[test]
    fn every_client_has_its_documented_file() {
        use Client::*;
        use Scope::*;
        let linux = Os::Linux;
        assert_eq!(path(ClaudeCode, User, linux), "/h/.claude.json");
        assert_eq!(path(ClaudeCode, Project, linux), "/p/.mcp.json");
        assert_eq!(
            path(ClaudeDesktop, User, Os::Mac),
            "/h/Library/Application Support/Claude/claude_desktop_config.json"
        );
        assert_eq!(
            path(ClaudeDesktop, User, Os::Windows),
            "C:/Users/me/AppData/Roaming/Claude/claude_desktop_config.json"
        );
        assert_eq!(
            path(ClaudeDesktop, User, linux),
            "/h/.config/Claude/claude_desktop_config.json"
        );
        assert_eq!(path(Cursor, User, linux), "/h/.cursor/mcp.json");
        assert_eq!(path(Cursor, Project, linux), "/p/.cursor/mcp.json");
        assert_eq!(path(Vscode, User, linux), "/h/.config/Code/User/mcp.json");
        assert_eq!(
            path(Vscode, User, Os::Mac),
            "/h/Library/Application Support/Code/User/mcp.json"
        );
        assert_eq!(
            path(Vscode, User, Os::Windows),
            "C:/Users/me/AppData/Roaming/Code/User/mcp.json"
        );
        assert_eq!(path(Vscode, Project, linux), "/p/.vscode/mcp.json");
        assert_eq!(path(Codex, User, linux), "/h/.codex/config.toml");
        assert_eq!(path(Codex, Project, linux), "/p/.codex/config.toml");
        assert_eq!(path(Gemini, User, linux), "/h/.gemini/settings.json");
        assert_eq!(path(Gemini, Project, linux), "/p/.gemini/settings.json");
        assert_eq!(
            path(Windsurf, User, linux),
            "/h/.codeium/windsurf/mcp_config.json"
        );
        let vscode = Vscode.config_file(User, &places(linux)).unwrap();
        assert_eq!(vscode.servers_key, "servers");
        assert_eq!(vscode.shape, EntryShape::TypedStdio);
    }

    #[test]
    fn codex_home_and_xdg_config_home_move_the_files() {
        let mut moved = places(Os::Linux);
        moved.codex_home = Some(PathBuf::from("/c"));
        moved.xdg_config_home = Some(PathBuf::from("/x"));
        let file = |client| {
            Client::config_file(client, Scope::User, &moved)
                .unwrap()
                .path
        };
        assert_eq!(file(Client::Codex), PathBuf::from("/c/config.toml"));
        assert_eq!(file(Client::Vscode), PathBuf::from("/x/Code/User/mcp.json"));
    }

    #[test]
    fn android_studio_is_its_newest_configuration_directory() {
        let home = tempfile::tempdir().unwrap();
        let mut places = places(Os::Linux);
        places.home = home.path().to_path_buf();
        let missing = Client::AndroidStudio
            .config_file(Scope::User, &places)
            .unwrap_err();
        assert!(missing.contains("start Android Studio once"), "{missing}");
        let google = home.path().join(".config/Google");
        for name in [
            "AndroidStudio4.2",
            "AndroidStudio2024.3",
            "AndroidStudio2025.1.2",
            "AndroidStudioPreview2026.1",
            "AndroidStudio2025.1",
        ] {
            std::fs::create_dir_all(google.join(name)).unwrap();
        }
        let file = Client::AndroidStudio
            .config_file(Scope::User, &places)
            .unwrap();
        assert_eq!(file.path, google.join("AndroidStudio2025.1.2/mcp.json"));
        assert_eq!(file.servers_key, "mcpServers");
        assert_eq!(file.shape, EntryShape::CommandArgs);
        assert!(
            Client::AndroidStudio
                .config_file(Scope::Project, &places)
                .is_err()
        );
        assert_eq!(
            studio_version("AndroidStudio2025.1.2"),
            Some(vec![2025, 1, 2])
        );
        assert_eq!(studio_version("AndroidStudioPreview2026.1"), None);
        assert_eq!(studio_version("AndroidStudio"), None);
    }

    #[test]
    fn a_client_without_projects_says_so() {
        let error = Client::Windsurf
            .config_file(Scope::Project, &places(Os::Linux))
            .unwrap_err();
        assert_eq!(
            error,
            "Windsurf has no project configuration: use --scope user"
        );
    }
}
