//! A small async client of the adb server's smart-socket host protocol.
//!
//! Each request opens a TCP connection to the server, sends `"%04x" + service`, and reads `OKAY`
//! or `FAIL` + a hex length + a message. `host:transport:<serial>` turns the connection into a
//! pipe to that device, and the next request names a device service (`shell,v2,raw:…`,
//! `shell:…`, `exec:…`, `jdwp`). Every read runs under a timeout and a whole call under a
//! deadline; dropping a call's future drops its socket, and the server then closes the stream
//! on the device, so a cancelled call leaves nothing running.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::time::Instant;

use crate::error::{Error, Result};

/// The adb server's default port.
pub const DEFAULT_PORT: u16 = 5037;

/// Where the adb server listens, and how long to wait for it and the devices behind it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdbConfig {
    /// The server's host name or address.
    pub host: String,
    /// The server's port.
    pub port: u16,
    /// Start a local server with `adb start-server` when none answers (only for a loopback
    /// address: a remote server cannot be started from here).
    pub start_server: bool,
    /// How long to wait for the TCP connection to the server.
    pub connect_timeout: Duration,
    /// How long any single read may wait for the next bytes.
    pub read_timeout: Duration,
    /// How long a whole call (connect, request, every read) may take.
    pub call_timeout: Duration,
    /// How long `jdwp` collects pids before taking its snapshot.
    pub jdwp_settle: Duration,
    /// The most output one command may return; more is an error rather than unbounded memory.
    pub max_output: usize,
    /// The `adb` program that starts a server; `None` looks for `adb` on `PATH`.
    pub adb_program: Option<PathBuf>,
    /// This server stands for the local default one wherever it listens (the one adb's own
    /// settings name, [`AdbConfig::from_env`]; a demo's own simulated server), so its phones keep
    /// their bare serials ([`AdbConfig::is_local_default`]).
    pub stands_for_default: bool,
}

impl Default for AdbConfig {
    fn default() -> Self {
        AdbConfig {
            host: "127.0.0.1".into(),
            port: DEFAULT_PORT,
            start_server: true,
            connect_timeout: Duration::from_secs(3),
            read_timeout: Duration::from_secs(15),
            call_timeout: Duration::from_secs(60),
            jdwp_settle: Duration::from_millis(500),
            max_output: 64 * 1024 * 1024,
            adb_program: None,
            stands_for_default: false,
        }
    }
}

impl AdbConfig {
    /// The configuration adb's own tools use: `ADB_SERVER_SOCKET=tcp:host:port` (a remote server,
    /// e.g. in a device farm), else `ANDROID_ADB_SERVER_PORT` on 127.0.0.1, else port 5037. When
    /// it is on this machine, whatever its port, it is the local server `adb devices` lists, so
    /// it stands for the default: its phones keep their bare serials, as `adb devices` shows
    /// them ([`AdbConfig::stands_for_default`]); a remote one is a farm, named with its address.
    pub fn from_env() -> Self {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// [`AdbConfig::from_env`] with the variables looked up by `var` (for tests).
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Self {
        let mut config = AdbConfig::default();
        if let Some(socket) = var("ADB_SERVER_SOCKET") {
            match parse_server_socket(&socket) {
                Some((host, port)) => {
                    config.host = host;
                    config.port = port;
                    config.stands_for_default = config.is_loopback();
                    return config;
                }
                None => tracing::warn!(%socket, "ADB_SERVER_SOCKET is not tcp:host:port; ignored"),
            }
        }
        if let Some(port) = var("ANDROID_ADB_SERVER_PORT") {
            match port.trim().parse::<u16>() {
                Ok(port) if port > 0 => config.port = port,
                _ => tracing::warn!(%port, "ANDROID_ADB_SERVER_PORT is not a port; ignored"),
            }
        }
        config.stands_for_default = true;
        config
    }

    /// The default configuration for a server on 127.0.0.1 at `port`.
    pub fn local(port: u16) -> Self {
        AdbConfig {
            port,
            ..AdbConfig::default()
        }
    }

    /// The server at `address`, as `--adb-server` and the `adb_servers` key name it: `host:port`,
    /// `[v6]:port` (an IPv6 address only in brackets: `::1` alone would read as host `:` and
    /// port 1), or adb's own `tcp:host:port`. A server named this way is never started
    /// from here (`start_server` is off): only the local default one is, as adb's own tools
    /// would; a farm's or another host's server is a pure client's to use, not to start.
    ///
    /// ```
    /// use phonelogs_android::AdbConfig;
    /// let config = AdbConfig::from_address("tcp:lab-3.example:5037")?;
    /// assert_eq!((config.host.as_str(), config.port), ("lab-3.example", 5037));
    /// assert!(!config.start_server);
    /// assert_eq!(AdbConfig::from_address("[::1]:5037")?.host, "::1");
    /// assert!(AdbConfig::from_address("lab-3.example").is_err());
    /// assert!(AdbConfig::from_address("::1").is_err());
    /// # Ok::<(), phonelogs_android::Error>(())
    /// ```
    pub fn from_address(address: &str) -> Result<Self> {
        let text = address.trim();
        let bad = |why: &str| Error::BadAddress {
            address: text.to_owned(),
            reason: why.to_owned(),
        };
        let rest = text.strip_prefix("tcp:").unwrap_or(text);
        let (host, port) = match rest.strip_prefix('[') {
            Some(bracketed) => bracketed
                .split_once("]:")
                .ok_or_else(|| bad("it has no port after the bracketed host (write [v6]:port)"))?,
            None => rest
                .rsplit_once(':')
                .ok_or_else(|| bad("it has no port (write host:port)"))?,
        };
        if host.is_empty()
            || host.contains(|c: char| c.is_whitespace() || matches!(c, '/' | '[' | ']'))
        {
            return Err(bad("the host is empty or holds a space, '/' or a bracket"));
        }
        if host.contains(':') && !rest.starts_with('[') {
            return Err(bad("an IPv6 host needs brackets (write [v6]:port)"));
        }
        let port: u16 = port
            .parse()
            .ok()
            .filter(|p| *p > 0)
            .ok_or_else(|| bad("the port is not a number from 1 to 65535"))?;
        Ok(AdbConfig {
            host: host.to_owned(),
            port,
            start_server: false,
            ..AdbConfig::default()
        })
    }

    /// `host:port`, as printed in messages.
    pub fn address(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    fn is_loopback(&self) -> bool {
        matches!(self.host.as_str(), "127.0.0.1" | "localhost" | "::1")
    }

    /// Whether this is the server adb's own rule finds when nothing names another: this
    /// machine's (`127.0.0.1`, `localhost` or `::1`) on port 5037. Its phones keep their bare
    /// serials as names; any other server's are named `host:port/serial`
    /// ([`phonelogs_driver::AppLogger::source_is_default`]).
    ///
    /// ```
    /// use phonelogs_android::AdbConfig;
    /// assert!(AdbConfig::from_address("localhost:5037")?.is_local_default());
    /// assert!(AdbConfig::from_address("[::1]:5037")?.is_local_default());
    /// assert!(!AdbConfig::from_address("farm.example:5037")?.is_local_default());
    /// assert!(!AdbConfig::local(5038).is_local_default());
    /// # Ok::<(), phonelogs_android::Error>(())
    /// ```
    pub fn is_local_default(&self) -> bool {
        self.stands_for_default || (self.is_loopback() && self.port == DEFAULT_PORT)
    }
}

/// Reads `tcp:host:port` (also `tcp:port` for localhost) as adb does.
fn parse_server_socket(text: &str) -> Option<(String, u16)> {
    let rest = text.trim().strip_prefix("tcp:")?;
    let (host, port) = match rest.rsplit_once(':') {
        Some((host, port)) => (host.trim_matches(['[', ']']).to_owned(), port),
        None => ("127.0.0.1".to_owned(), rest),
    };
    let port: u16 = port.parse().ok().filter(|p| *p > 0)?;
    if host.is_empty() {
        return Some(("127.0.0.1".into(), port));
    }
    Some((host, port))
}

/// What a shell command printed and how it ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellOutput {
    /// Its standard output.
    pub stdout: Vec<u8>,
    /// Its standard error (empty on the legacy shell, which merges it into stdout).
    pub stderr: Vec<u8>,
    /// Its exit code.
    pub exit_code: Option<i32>,
}

impl ShellOutput {
    /// Whether it exited with 0.
    pub fn success(&self) -> bool {
        self.exit_code == Some(0)
    }

    /// Standard output as text (invalid UTF-8 replaced).
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// Standard error as text (invalid UTF-8 replaced).
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
}

/// One device as `host:devices-l` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdbDevice {
    /// Its serial.
    pub serial: String,
    /// Its state as adb names it: `device`, `offline`, `unauthorized`, `authorizing`, …
    pub state: String,
    /// `model:` (underscores as adb prints them).
    pub model: Option<String>,
    /// `product:`.
    pub product: Option<String>,
    /// `device:`.
    pub device: Option<String>,
    /// `transport_id:`.
    pub transport_id: Option<u64>,
}

/// Reads `host:devices-l` output: `SERIAL  STATE key:value…` per line.
pub fn parse_devices_long(text: &str) -> Vec<AdbDevice> {
    let mut devices = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        let Some((serial, rest)) = line.split_once(char::is_whitespace) else {
            continue;
        };
        let rest = rest.trim_start();
        // "no permissions (…)" is the one state with spaces.
        let (state, rest) = if let Some(after) = rest.strip_prefix("no permissions") {
            let after = match after.trim_start().strip_prefix('(') {
                Some(inner) => inner.split_once(')').map_or("", |(_, tail)| tail),
                None => after,
            };
            ("no permissions".to_owned(), after)
        } else {
            match rest.split_once(char::is_whitespace) {
                Some((state, tail)) => (state.to_owned(), tail),
                None => (rest.to_owned(), ""),
            }
        };
        if state.is_empty() {
            continue;
        }
        let mut device = AdbDevice {
            serial: serial.to_owned(),
            state,
            model: None,
            product: None,
            device: None,
            transport_id: None,
        };
        for pair in rest.split_whitespace() {
            match pair.split_once(':') {
                Some(("model", value)) => device.model = Some(value.to_owned()),
                Some(("product", value)) => device.product = Some(value.to_owned()),
                Some(("device", value)) => device.device = Some(value.to_owned()),
                Some(("transport_id", value)) => device.transport_id = value.parse().ok(),
                _ => {}
            }
        }
        devices.push(device);
    }
    devices
}

/// Opens a connection to the server `config` names (without starting one).
async fn open_connection(config: &AdbConfig) -> Result<Connection> {
    let address = (config.host.as_str(), config.port);
    let stream =
        match tokio::time::timeout(config.connect_timeout, TcpStream::connect(address)).await {
            Ok(Ok(stream)) => stream,
            Ok(Err(error)) => {
                return Err(Error::io(
                    format!("connecting to the adb server at {}", config.address()),
                    error,
                ));
            }
            Err(_) => {
                return Err(Error::ServerUnavailable {
                    address: config.address(),
                    reason: format!("no answer within {:?}", config.connect_timeout),
                });
            }
        };
    // Requests are small and answered one at a time: do not let Nagle delay them.
    let _ = stream.set_nodelay(true);
    Ok(Connection {
        stream: BufReader::with_capacity(64 * 1024, stream),
        read_timeout: config.read_timeout,
    })
}

/// How long a tracking connection waits for the server's next list: a list comes only when a
/// device changes, so the wait has no deadline of its own (a year); the connection ends when
/// the server closes it or the client is dropped.
const TRACK_WAIT: Duration = Duration::from_secs(365 * 24 * 3600);

/// Reads the lists `host:track-devices-l` pushes into `tracked` until the connection ends.
/// `config`'s call timeout bounds the opening; a server that answers `FAIL` (it does not
/// track) is not asked again.
async fn track_devices(config: AdbConfig, tracked: std::sync::Arc<Mutex<Tracked>>) {
    let _forget = Forget(tracked.clone());
    let opened = tokio::time::timeout(config.call_timeout, async {
        let mut connection = open_connection(&config).await?;
        connection.request("host:track-devices-l", "").await?;
        Ok::<_, Error>(connection)
    })
    .await;
    let mut connection = match opened {
        Ok(Ok(connection)) => connection,
        Ok(Err(Error::Refused { message, .. })) => {
            tracing::debug!(%message, server = %config.address(), "the adb server does not track devices");
            tracked
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .unsupported = true;
            return;
        }
        Ok(Err(error)) => {
            tracing::debug!(%error, server = %config.address(), "no device tracking");
            return;
        }
        Err(_) => return,
    };
    connection.read_timeout = TRACK_WAIT;
    while let Ok(text) = connection.read_length_prefixed("the tracked devices").await {
        tracked.lock().unwrap_or_else(|p| p.into_inner()).devices = Some(parse_devices_long(&text));
    }
}

/// Sorts a `FAIL` message from `host:transport:` and friends into the errors callers act on.
fn classify_fail(serial: &str, service: &str, message: String) -> Error {
    let lower = message.to_ascii_lowercase();
    if lower.contains("not found") || lower.contains("no devices") {
        Error::DeviceNotFound(serial.to_owned())
    } else if [
        "offline",
        "unauthorized",
        "authorizing",
        "connecting",
        "no permissions",
    ]
    .iter()
    .any(|word| lower.contains(word))
    {
        Error::DeviceUnavailable {
            serial: serial.to_owned(),
            reason: message,
        }
    } else {
        Error::Refused {
            service: service.to_owned(),
            message,
        }
    }
}

/// The longest shell v2 packet the readers accept, the dump's ([`AdbServer::shell_v2`]) and the
/// stream's (`crate::live`): adbd writes each packet from one buffer of adb's `MAX_PAYLOAD`
/// (1 MiB, its header included; `adb/shell_protocol.h`, `ShellProtocol::data_capacity`), so a
/// longer length comes only from a broken adbd or a hostile server (a farm's), and reading it
/// would allocate up to 4 GiB.
pub(crate) const MAX_SHELL_PACKET: usize = 1024 * 1024;

/// A shell v2 packet's header (`u8 id + u32 LE length`) read: its id and its length, or an
/// error when the length is over [`MAX_SHELL_PACKET`], before anything is allocated for it.
pub(crate) fn shell_packet(header: [u8; 5]) -> Result<(u8, usize)> {
    let length = u32::from_le_bytes([header[1], header[2], header[3], header[4]]);
    match usize::try_from(length) {
        Ok(length) if length <= MAX_SHELL_PACKET => Ok((header[0], length)),
        _ => Err(Error::Protocol(format!(
            "a shell packet of {length} bytes, longer than adb ever sends ({MAX_SHELL_PACKET})"
        ))),
    }
}

/// The marker the legacy shell prints the exit code after.
const LEGACY_EXIT_MARKER: &str = "__PHONELOGS_EXIT__";

/// A client of one adb server. Cheap to share: each call opens its own connection, except the
/// one that tracks the server's devices ([`AdbServer::devices`]).
#[derive(Debug)]
pub struct AdbServer {
    config: AdbConfig,
    /// The features of each device, asked once (they decide shell v2 or legacy).
    features: Mutex<HashMap<String, Vec<String>>>,
    /// Serialises starting a server, so concurrent calls start one, not many.
    start_lock: tokio::sync::Mutex<()>,
    /// The device list `host:track-devices-l` keeps current.
    tracked: std::sync::Arc<Mutex<Tracked>>,
    /// The task reading it, ended with this client.
    tracker: Mutex<Option<tokio::task::AbortHandle>>,
}

/// What the tracking connection knows.
#[derive(Debug, Default)]
struct Tracked {
    /// The list the server pushed last, while the connection is open.
    devices: Option<Vec<AdbDevice>>,
    /// The server refused `host:track-devices-l`: every listing is its own request.
    unsupported: bool,
}

/// Clears what a tracking connection knew when its task ends (the connection closed, the
/// server went away, the client or the runtime was dropped), so no list outlives it.
struct Forget(std::sync::Arc<Mutex<Tracked>>);

impl Drop for Forget {
    fn drop(&mut self) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).devices = None;
    }
}

impl Drop for AdbServer {
    fn drop(&mut self) {
        let tracker = self.tracker.get_mut().unwrap_or_else(|p| p.into_inner());
        if let Some(task) = tracker.take() {
            task.abort();
        }
    }
}

impl AdbServer {
    /// A client for the server `config` names.
    pub fn new(config: AdbConfig) -> Self {
        AdbServer {
            config,
            features: Mutex::new(HashMap::new()),
            start_lock: tokio::sync::Mutex::new(()),
            tracked: std::sync::Arc::default(),
            tracker: Mutex::new(None),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &AdbConfig {
        &self.config
    }

    /// Runs `op` under the call deadline.
    async fn within_deadline<T>(
        &self,
        what: &str,
        op: impl std::future::Future<Output = Result<T>>,
    ) -> Result<T> {
        match tokio::time::timeout(self.config.call_timeout, op).await {
            Ok(result) => result,
            Err(_) => Err(Error::Timeout {
                what: what.to_owned(),
                after: self.config.call_timeout,
            }),
        }
    }

    /// Opens a connection to the server, starting a local one if none answers.
    async fn connect(&self) -> Result<Connection> {
        let refused = |error: &Error| matches!(error, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::ConnectionRefused);
        let result = match self.try_connect().await {
            Err(error)
                if refused(&error) && self.config.start_server && self.config.is_loopback() =>
            {
                self.start_server().await?;
                self.try_connect().await
            }
            other => other,
        };
        result.map_err(|error| {
            if refused(&error) {
                Error::ServerUnavailable {
                    address: self.config.address(),
                    reason: "nothing listens there (connection refused)".into(),
                }
            } else {
                error
            }
        })
    }

    async fn try_connect(&self) -> Result<Connection> {
        open_connection(&self.config).await
    }

    /// Starts a local server the way adb's own tools do: `adb -P <port> start-server`.
    async fn start_server(&self) -> Result<()> {
        let _guard = self.start_lock.lock().await;
        // Another call may have started it while this one waited for the lock.
        if self.try_connect().await.is_ok() {
            return Ok(());
        }
        let address = self.config.address();
        let adb = match &self.config.adb_program {
            Some(program) => Some(program.clone()).filter(|p| p.is_file()),
            None => find_on_path("adb"),
        };
        let Some(adb) = adb else {
            return Err(Error::ServerUnavailable {
                address,
                reason: "adb is not installed (no `adb` on PATH), so no server could be started; install Android platform-tools or start an adb server".into(),
            });
        };
        tracing::info!(adb = %adb.display(), port = self.config.port, "starting the adb server");
        let mut command = tokio::process::Command::new(&adb);
        command
            .arg("-P")
            .arg(self.config.port.to_string())
            .arg("start-server")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        let child = command
            .spawn()
            .map_err(|error| Error::io(format!("running {} start-server", adb.display()), error))?;
        let output =
            match tokio::time::timeout(Duration::from_secs(20), child.wait_with_output()).await {
                Ok(Ok(output)) => output,
                Ok(Err(error)) => return Err(Error::io("waiting for adb start-server", error)),
                Err(_) => {
                    return Err(Error::ServerUnavailable {
                        address,
                        reason: "`adb start-server` did not finish within 20 s".into(),
                    });
                }
            };
        if !output.status.success() {
            return Err(Error::ServerUnavailable {
                address,
                reason: format!(
                    "`adb start-server` failed: {}",
                    String::from_utf8_lossy(&output.stderr).trim()
                ),
            });
        }
        Ok(())
    }

    /// `host:version`: the server's protocol version (41 for current servers).
    pub async fn version(&self) -> Result<u32> {
        self.within_deadline("host:version", async {
            let mut connection = self.connect().await?;
            connection.request("host:version", "").await?;
            let text = connection.read_length_prefixed("the version").await?;
            u32::from_str_radix(text.trim(), 16)
                .map_err(|_| Error::Protocol(format!("host:version answered {text:?}")))
        })
        .await
    }

    /// Every device the server knows, in any state.
    ///
    /// The first call asks `host:devices-l` and opens one `host:track-devices-l` connection
    /// beside it, which the server keeps open and answers with the whole list again whenever a
    /// device comes, goes or changes state (as Android Studio's ddmlib follows a server). While
    /// that connection is open, calls take the list it last pushed and open no connection of
    /// their own: a call to a phone then costs its own services alone, not a listing too. When
    /// it closes (the server stopped, say), the list is forgotten and the next call asks again.
    pub async fn devices(&self) -> Result<Vec<AdbDevice>> {
        let known = self
            .tracked
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .devices
            .clone();
        if let Some(devices) = known {
            return Ok(devices);
        }
        let devices = self
            .within_deadline("host:devices-l", async {
                let mut connection = self.connect().await?;
                connection.request("host:devices-l", "").await?;
                let text = connection.read_length_prefixed("the device list").await?;
                Ok(parse_devices_long(&text))
            })
            .await?;
        self.track();
        Ok(devices)
    }

    /// Starts the tracking connection, unless one runs, the server refused one, or there is no
    /// runtime to run it on.
    fn track(&self) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if self
            .tracked
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .unsupported
        {
            return;
        }
        // Held while deciding and spawning, so two calls start one task.
        let mut tracker = self.tracker.lock().unwrap_or_else(|p| p.into_inner());
        if tracker.as_ref().is_some_and(|task| !task.is_finished()) {
            return;
        }
        let task = runtime.spawn(track_devices(self.config.clone(), self.tracked.clone()));
        *tracker = Some(task.abort_handle());
    }

    /// Whether a tracking connection currently keeps the device list (for tests).
    pub fn tracks_devices(&self) -> bool {
        self.tracked
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .devices
            .is_some()
    }

    /// `host-serial:<serial>:features`, cached per device.
    pub async fn features(&self, serial: &str) -> Result<Vec<String>> {
        if let Some(known) = self.cached_features(serial) {
            return Ok(known);
        }
        let features = self
            .within_deadline("the device's features", async {
                let mut connection = self.connect().await?;
                let service = format!("host-serial:{serial}:features");
                connection.request(&service, serial).await?;
                let text = connection.read_length_prefixed("the features").await?;
                Ok(text
                    .trim()
                    .split(',')
                    .filter(|f| !f.is_empty())
                    .map(str::to_owned)
                    .collect::<Vec<_>>())
            })
            .await?;
        if let Ok(mut cache) = self.features.lock() {
            cache.insert(serial.to_owned(), features.clone());
        }
        Ok(features)
    }

    fn cached_features(&self, serial: &str) -> Option<Vec<String>> {
        self.features.lock().ok()?.get(serial).cloned()
    }

    /// Forgets what was learnt about a device (after it went away).
    pub fn forget(&self, serial: &str) {
        if let Ok(mut cache) = self.features.lock() {
            cache.remove(serial);
        }
    }

    /// Opens a connection to `serial` and asks for `service` on it.
    async fn open_service(&self, serial: &str, service: &str, what: &str) -> Result<Connection> {
        let mut connection = self.connect().await?;
        connection
            .request(&format!("host:transport:{serial}"), serial)
            .await?;
        connection
            .request(service, serial)
            .await
            .map_err(|error| match error {
                Error::Refused { message, .. } => Error::Refused {
                    service: what.to_owned(),
                    message,
                },
                other => other,
            })?;
        connection.ack_now();
        Ok(connection)
    }

    /// Runs `command` (one already quoted string, see [`crate::command_line`]) in the device's
    /// shell: shell v2 when the device has it (stdout, stderr and the exit code apart), else the
    /// legacy shell.
    pub async fn shell(&self, serial: &str, command: &str) -> Result<ShellOutput> {
        let features = self.features(serial).await?;
        if features.iter().any(|f| f == "shell_v2") {
            self.shell_v2(serial, command).await
        } else {
            self.shell_legacy(serial, command).await
        }
    }

    /// `shell,v2,raw:<command>`.
    pub async fn shell_v2(&self, serial: &str, command: &str) -> Result<ShellOutput> {
        let result = self
            .within_deadline(&format!("shell {command:?}"), async {
                let service = format!("shell,v2,raw:{command}");
                let mut connection = self.open_service(serial, &service, "shell,v2").await?;
                connection.read_shell_v2(self.config.max_output).await
            })
            .await;
        self.note_failure(serial, &result);
        result
    }

    /// `shell:<command>`: the legacy shell, which merges stderr into stdout and keeps no exit
    /// code, so the command prints its own exit code after a marker.
    pub async fn shell_legacy(&self, serial: &str, command: &str) -> Result<ShellOutput> {
        let result = self
            .within_deadline(&format!("shell {command:?}"), async {
                // `&& … 0 || … $?`: the exact code on a real shell, and still success or
                // failure on one that does not expand `$?`.
                let service = format!(
                    "shell:{command} && echo {LEGACY_EXIT_MARKER} 0 || echo {LEGACY_EXIT_MARKER} $?"
                );
                let mut connection = self.open_service(serial, &service, "shell").await?;
                let mut stdout = connection.read_to_end(self.config.max_output).await?;
                let exit_code = split_legacy_exit(&mut stdout);
                if exit_code.is_none() {
                    return Err(Error::Disconnected(
                        "reading a legacy shell's output".into(),
                    ));
                }
                Ok(ShellOutput {
                    stdout,
                    stderr: Vec::new(),
                    exit_code,
                })
            })
            .await;
        self.note_failure(serial, &result);
        result
    }

    /// `exec:<command>`: raw stdout (with stderr merged on most devices), no exit code.
    pub async fn exec(&self, serial: &str, command: &str) -> Result<Vec<u8>> {
        self.within_deadline(&format!("exec {command:?}"), async {
            let service = format!("exec:{command}");
            let mut connection = self.open_service(serial, &service, "exec").await?;
            connection.read_to_end(self.config.max_output).await
        })
        .await
    }

    /// Opens `command` in the device's shell and hands back the open stream, for output that
    /// does not end on its own (a following `logcat`): `true` with it when it speaks shell v2
    /// (packets, see [`crate::live`]), `false` for the legacy shell's raw bytes. Opening has the
    /// connect and read timeouts; dropping the stream closes the shell on the device.
    pub(crate) async fn shell_stream(
        &self,
        serial: &str,
        command: &str,
    ) -> Result<(tokio::io::BufReader<tokio::net::TcpStream>, bool)> {
        let features = self.features(serial).await?;
        let v2 = features.iter().any(|f| f == "shell_v2");
        let service = if v2 {
            format!("shell,v2,raw:{command}")
        } else {
            format!("shell:{command}")
        };
        let connection = self
            .within_deadline(&format!("shell {command:?}"), async {
                self.open_service(serial, &service, "shell").await
            })
            .await?;
        Ok((connection.stream, v2))
    }

    /// `jdwp`: the pids with a JDWP transport, as the text the device sent within the settle
    /// window (the service streams on newer devices and never ends on its own).
    pub async fn jdwp(&self, serial: &str) -> Result<String> {
        self.within_deadline("jdwp", async {
            let mut connection = self.open_service(serial, "jdwp", "jdwp").await?;
            let bytes = connection
                .read_for(self.config.jdwp_settle, 1024 * 1024)
                .await?;
            Ok(String::from_utf8_lossy(&bytes).into_owned())
        })
        .await
    }

    fn note_failure<T>(&self, serial: &str, result: &Result<T>) {
        if matches!(
            result,
            Err(Error::DeviceNotFound(_)
                | Error::DeviceUnavailable { .. }
                | Error::Disconnected(_))
        ) {
            self.forget(serial);
        }
    }
}

/// Strips the legacy shell's exit marker line and returns the code: the number, or 1 when the
/// failure branch printed an unexpanded `$?`.
fn split_legacy_exit(stdout: &mut Vec<u8>) -> Option<i32> {
    let marker = format!("{LEGACY_EXIT_MARKER} ");
    let text = stdout.as_slice();
    let at = text
        .windows(marker.len())
        .rposition(|window| window == marker.as_bytes())?;
    let tail = String::from_utf8_lossy(&text[at + marker.len()..]).into_owned();
    let code = crate::logs::exit_code_text(tail.trim());
    stdout.truncate(at);
    Some(code)
}

/// Where `name` is on `PATH`, if anywhere.
fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// One connection to the server.
struct Connection {
    stream: BufReader<TcpStream>,
    read_timeout: Duration,
}

impl Connection {
    /// Acknowledges what the server sent at once (Linux's `TCP_QUICKACK`). After a request and
    /// its `OKAY`, Linux delays our ACK of the `OKAY` by up to 40 ms, hoping to send it with our
    /// next request; but a service's output comes next, and the adb server's socket runs
    /// Nagle's algorithm, so it holds its first output until that ACK. Measured with strace
    /// under `benches/wait_latency.rs`: a following logcat's first line reached us 40 ms after
    /// the server wrote it. Elsewhere, and on any error, nothing changes.
    fn ack_now(&self) {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        if let Err(error) = socket2::SockRef::from(self.stream.get_ref()).set_tcp_quickack(true) {
            tracing::debug!(%error, "TCP_QUICKACK could not be set");
        }
    }

    /// Sends a request and reads `OKAY`, or turns `FAIL` into an error about `serial`.
    async fn request(&mut self, service: &str, serial: &str) -> Result<()> {
        let length = service.len();
        if length > 0xffff {
            return Err(Error::Protocol(format!(
                "a request of {length} bytes is too long"
            )));
        }
        let mut message = format!("{length:04x}").into_bytes();
        message.extend_from_slice(service.as_bytes());
        let what = service.split(':').next().unwrap_or(service).to_owned();
        timed(
            self.read_timeout,
            &what,
            self.stream.get_mut().write_all(&message),
        )
        .await?
        .map_err(|error| Error::io(format!("sending {what}"), error))?;
        let mut status = [0u8; 4];
        self.read_exact(&mut status, &format!("the answer to {what}"))
            .await?;
        match &status {
            b"OKAY" => Ok(()),
            b"FAIL" => {
                let message = self.read_length_prefixed("the failure message").await?;
                Err(classify_fail(serial, &what, message))
            }
            other => Err(Error::Protocol(format!(
                "{what} answered {:?} instead of OKAY or FAIL",
                String::from_utf8_lossy(other)
            ))),
        }
    }

    async fn read_exact(&mut self, buffer: &mut [u8], what: &str) -> Result<()> {
        let read = timed(self.read_timeout, what, self.stream.read_exact(buffer)).await?;
        read_result(read.map(drop), what)
    }

    /// Reads a 4-hex-digit length and that many bytes.
    async fn read_length_prefixed(&mut self, what: &str) -> Result<String> {
        let mut length = [0u8; 4];
        self.read_exact(&mut length, what).await?;
        let length = std::str::from_utf8(&length)
            .ok()
            .and_then(|hex| usize::from_str_radix(hex, 16).ok())
            .ok_or_else(|| Error::Protocol(format!("a bad length {length:?} before {what}")))?;
        let mut body = vec![0u8; length];
        self.read_exact(&mut body, what).await?;
        Ok(String::from_utf8_lossy(&body).into_owned())
    }

    /// Reads shell v2 packets until the exit packet: `u8 id + u32 LE length + bytes`.
    async fn read_shell_v2(&mut self, max_output: usize) -> Result<ShellOutput> {
        let mut output = ShellOutput::default();
        loop {
            let mut header = [0u8; 5];
            match timed(
                self.read_timeout,
                "shell output",
                self.stream.read_exact(&mut header),
            )
            .await?
            {
                Ok(_) => {}
                Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => {
                    return Err(Error::Disconnected(
                        "reading a shell's output: the stream ended before the exit code".into(),
                    ));
                }
                Err(error) => return Err(Error::io("reading shell output", error)),
            }
            let (id, length) = shell_packet(header)?;
            if output.stdout.len() + output.stderr.len() + length > max_output {
                return Err(Error::Protocol(format!(
                    "the command printed more than {max_output} bytes"
                )));
            }
            match id {
                1 => self.read_append(&mut output.stdout, length).await?,
                2 => self.read_append(&mut output.stderr, length).await?,
                3 => {
                    let mut code = vec![0u8; length];
                    self.read_exact(&mut code, "the exit code").await?;
                    output.exit_code = code.first().map(|code| i32::from(*code));
                    return Ok(output);
                }
                _ => {
                    // Window-size and stdin packets never come from the device; skip anything
                    // unknown rather than fail.
                    let mut skip = vec![0u8; length];
                    self.read_exact(&mut skip, "a shell packet").await?;
                }
            }
        }
    }

    /// Reads `length` bytes onto the end of `into`, in its spare capacity (`read_buf`): zeroing
    /// each packet's room first, as `read_exact` into a resized vector needs, was a measurable
    /// part of a warm read of a dump that is overwritten at once.
    async fn read_append(&mut self, into: &mut Vec<u8>, length: usize) -> Result<()> {
        const WHAT: &str = "shell output";
        into.reserve(length);
        let end = into.len() + length;
        let mut source = (&mut self.stream).take(length as u64);
        let read = async {
            while into.len() < end {
                if source.read_buf(into).await? == 0 {
                    return Err(std::io::ErrorKind::UnexpectedEof.into());
                }
            }
            Ok(())
        };
        read_result(timed(self.read_timeout, WHAT, read).await?, WHAT)
    }

    /// Reads until the server closes the stream.
    async fn read_to_end(&mut self, max_output: usize) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        let mut chunk = vec![0u8; 64 * 1024];
        loop {
            let read = timed(self.read_timeout, "output", self.stream.read(&mut chunk))
                .await?
                .map_err(|error| Error::io("reading output", error))?;
            if read == 0 {
                return Ok(out);
            }
            if out.len() + read > max_output {
                return Err(Error::Protocol(format!(
                    "the command printed more than {max_output} bytes"
                )));
            }
            out.extend_from_slice(&chunk[..read]);
        }
    }

    /// Reads until the stream ends or `window` has passed, whichever is first.
    async fn read_for(&mut self, window: Duration, max_output: usize) -> Result<Vec<u8>> {
        let end = Instant::now() + window;
        let mut out = Vec::new();
        let mut chunk = vec![0u8; 4096];
        loop {
            match tokio::time::timeout_at(end, self.stream.read(&mut chunk)).await {
                Err(_) => return Ok(out),
                Ok(Ok(0)) => return Ok(out),
                Ok(Ok(read)) => {
                    if out.len() + read > max_output {
                        return Ok(out);
                    }
                    out.extend_from_slice(&chunk[..read]);
                }
                Ok(Err(error)) => return Err(Error::io("reading jdwp", error)),
            }
        }
    }
}

/// A read's outcome as an error that says what was being read: the stream ending early is
/// the device or server going away.
fn read_result(read: std::io::Result<()>, what: &str) -> Result<()> {
    match read {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => {
            Err(Error::Disconnected(format!("reading {what}")))
        }
        Err(error) => Err(Error::io(format!("reading {what}"), error)),
    }
}

/// Awaits `op` for at most `after`.
async fn timed<T>(
    after: Duration,
    what: &str,
    op: impl std::future::Future<Output = T>,
) -> Result<T> {
    tokio::time::timeout(after, op)
        .await
        .map_err(|_| Error::Timeout {
            what: what.to_owned(),
            after,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one cap both shell v2 readers read a header through: adb's largest packet passes,
    /// anything longer, up to `0xFFFFFFFF`, is a protocol error naming the length.
    #[test]
    fn a_shell_packet_is_at_most_what_adb_sends() {
        assert_eq!(
            shell_packet([1, 0, 0, 0x10, 0]).unwrap(),
            (1, MAX_SHELL_PACKET)
        );
        assert_eq!(shell_packet([3, 1, 0, 0, 0]).unwrap(), (3, 1));
        for length in [MAX_SHELL_PACKET as u32 + 1, u32::MAX] {
            let [a, b, c, d] = length.to_le_bytes();
            let error = shell_packet([1, a, b, c, d]).unwrap_err();
            assert!(matches!(error, Error::Protocol(_)), "{error}");
            assert!(
                error.to_string().contains(&format!("{length} bytes")),
                "{error}"
            );
        }
    }

    #[test]
    fn server_address_from_the_environment() {
        let config = AdbConfig::from_vars(|_| None);
        assert_eq!((config.host.as_str(), config.port), ("127.0.0.1", 5037));
        let config =
            AdbConfig::from_vars(|name| (name == "ANDROID_ADB_SERVER_PORT").then(|| "5555".into()));
        assert_eq!(config.port, 5555);
        // The local server adb's settings name is the one `adb devices` lists: it stands for
        // the default, whatever its port.
        assert!(config.is_local_default());
        let config = AdbConfig::from_vars(|name| match name {
            "ADB_SERVER_SOCKET" => Some("tcp:farm.example:7000".into()),
            "ANDROID_ADB_SERVER_PORT" => Some("5555".into()),
            _ => None,
        });
        assert_eq!((config.host.as_str(), config.port), ("farm.example", 7000));
        assert!(!config.is_loopback());
        let config =
            AdbConfig::from_vars(|name| (name == "ADB_SERVER_SOCKET").then(|| "unix:/x".into()));
        assert_eq!(config.port, 5037);
        let config =
            AdbConfig::from_vars(|name| (name == "ANDROID_ADB_SERVER_PORT").then(|| "x".into()));
        assert_eq!(config.port, 5037);
    }

    #[test]
    fn server_addresses_as_people_write_them() {
        for (text, host, port) in [
            ("farm.example:5037", "farm.example", 5037),
            ("tcp:10.0.0.5:7000", "10.0.0.5", 7000),
            ("[::1]:5037", "::1", 5037),
            ("tcp:[fe80::1]:5038", "fe80::1", 5038),
        ] {
            let config = AdbConfig::from_address(text).unwrap();
            assert_eq!((config.host.as_str(), config.port), (host, port), "{text}");
        }
        // `::1` is not host `:` on port 1, nor is `fe80::1:5037` a host with a port: IPv6 needs
        // its brackets, as in adb's own `tcp:[::1]:5037`.
        for text in [
            "::1",
            "fe80::1:5037",
            "[::1]",
            "[::1]5037",
            "[]:5037",
            "[a]b:5037",
            "host",
            "host:0",
            "host:70000",
            "/x:5037",
        ] {
            assert!(AdbConfig::from_address(text).is_err(), "{text} was taken");
        }
    }

    #[test]
    fn only_this_machines_port_5037_is_the_local_default() {
        for text in [
            "127.0.0.1:5037",
            "localhost:5037",
            "[::1]:5037",
            "tcp:localhost:5037",
        ] {
            assert!(
                AdbConfig::from_address(text).unwrap().is_local_default(),
                "{text}"
            );
        }
        for text in [
            "127.0.0.1:5038",
            "farm.example:5037",
            "10.0.0.5:5037",
            "[::2]:5037",
        ] {
            assert!(
                !AdbConfig::from_address(text).unwrap().is_local_default(),
                "{text}"
            );
        }
        assert!(AdbConfig::from_vars(|_| None).is_local_default());
        let farm = AdbConfig::from_vars(|name| {
            (name == "ADB_SERVER_SOCKET").then(|| "tcp:farm:5037".into())
        });
        assert!(!farm.is_local_default());
        let local = AdbConfig::from_vars(|name| {
            (name == "ADB_SERVER_SOCKET").then(|| "tcp:localhost:5099".into())
        });
        assert!(local.is_local_default());
    }

    proptest::proptest! {
        /// Any IPv6 address is read in brackets and refused without them; any text at all is
        /// read without a panic, and what is read prints back to the same server.
        #[test]
        fn ipv6_hosts_need_brackets(ip: std::net::Ipv6Addr, port in 1u16.., text in ".{0,40}") {
            let config = AdbConfig::from_address(&format!("[{ip}]:{port}")).unwrap();
            proptest::prop_assert_eq!(config.host, ip.to_string());
            proptest::prop_assert_eq!(config.port, port);
            proptest::prop_assert!(AdbConfig::from_address(&ip.to_string()).is_err());
            let unbracketed = format!("{ip}:{port}");
            proptest::prop_assert!(AdbConfig::from_address(&unbracketed).is_err());
            if let Ok(config) = AdbConfig::from_address(&text) {
                let again = AdbConfig::from_address(&config.address()).unwrap();
                proptest::prop_assert_eq!((again.host, again.port), (config.host, config.port));
            }
        }
    }

    #[test]
    fn device_lists() {
        // As adb 29.0.6 prints `host:devices-l` for a TCP device, an emulator, an unauthorized
        // phone and one without USB permissions.
        let text = "127.0.0.1:40123        device product:panther model:Pixel_7 device:panther transport_id:3\n\
emulator-5554          offline transport_id:1\n\
0A1B2C3D               unauthorized usb:1-1 transport_id:2\n\
0A1B2C3E               no permissions (user in plugdev group; are your udev rules wrong?); see [http://developer.android.com/tools/device.html] usb:1-2 transport_id:4\n";
        let devices = parse_devices_long(text);
        assert_eq!(devices.len(), 4);
        assert_eq!(devices[0].serial, "127.0.0.1:40123");
        assert_eq!(devices[0].state, "device");
        assert_eq!(devices[0].model.as_deref(), Some("Pixel_7"));
        assert_eq!(devices[0].transport_id, Some(3));
        assert_eq!(devices[1].state, "offline");
        assert_eq!(devices[2].state, "unauthorized");
        assert_eq!(devices[3].state, "no permissions");
        assert_eq!(devices[3].transport_id, Some(4));
        assert!(parse_devices_long("").is_empty());
    }

    #[test]
    fn failures_are_sorted() {
        assert!(matches!(
            classify_fail("x", "host", "device 'x' not found".into()),
            Error::DeviceNotFound(_)
        ));
        assert!(matches!(
            classify_fail("x", "host", "device offline".into()),
            Error::DeviceUnavailable { .. }
        ));
        assert!(matches!(
            classify_fail(
                "x",
                "host",
                "device unauthorized.\nThis adb server's $ADB_VENDOR_KEYS is not set".into()
            ),
            Error::DeviceUnavailable { .. }
        ));
        assert!(matches!(
            classify_fail("x", "host", "closed".into()),
            Error::Refused { .. }
        ));
    }

    #[test]
    fn legacy_exit_marker() {
        let mut out = b"hello\n__PHONELOGS_EXIT__ 3\n".to_vec();
        assert_eq!(split_legacy_exit(&mut out), Some(3));
        assert_eq!(out, b"hello\n");
        let mut out = b"__PHONELOGS_EXIT__ $?\n".to_vec();
        assert_eq!(split_legacy_exit(&mut out), Some(1));
        let mut out = b"no marker".to_vec();
        assert_eq!(split_legacy_exit(&mut out), None);
    }
}
