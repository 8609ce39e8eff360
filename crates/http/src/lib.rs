//! # phonelogs-http
//!
//! `phonelogs-mcp --http ADDR`: MCP over Streamable HTTP at `/mcp`, for agents that do not start
//! the server themselves (an agent in CI, several agents at once).
//!
//! rmcp's server-side Streamable HTTP does the protocol: sessions (`Mcp-Session-Id`), DELETE,
//! the idle timeout, the `Host` and `Origin` allow lists (DNS rebinding), the body limit. This
//! module puts in front of it what rmcp leaves to the server:
//!
//! - **who is asking**: every request carries `Authorization: Bearer TOKEN`, a token of the
//!   `--token-file` (or the one made at start); anything else gets 401, `WWW-Authenticate:
//!   Bearer` and an empty body. The token names the agent, and the agent's mode and scope come
//!   from the server's configuration, never from the request.
//! - **who answers**: the client at the other end is the agent's own ([`ClientSeat::Agent`]):
//!   it is never asked the person's questions, which wait for the person's side, unless the
//!   token file marks that token `person` ([`ClientSeat::PersonNotAlways`]: asked, but never
//!   "Always allow"). Decided here, once per token line.
//! - **isolation**: one rmcp service (and one session manager) per token, so a session id
//!   shown with any other token, another agent's or the same agent's, is unknown there (404).
//!   Each session is one gateway task, ended when rmcp drops the session
//!   ([`session::HttpSession`]).
//! - **limits**: the body is read here, at most [`MAX_BODY_BYTES`] (413) within the read timeout
//!   (408, connection closed); hyper closes a connection whose headers do not arrive in time;
//!   at most `--http-max-sessions` sessions in all and `--http-max-sessions-per-agent` per agent
//!   (503), so one token cannot take every session; at most `--http-max-connections`
//!   connections, each token holding at most its fair share of them ([`fair_share`]; 503);
//!   when all are taken, a new connection closes the oldest one that has named no token yet
//!   ([`pending`]), so silent connections cannot keep a client with a token out.
//! - **both wires**: a request naming protocol 2026-07-28 (or `server/discover`) is served
//!   statelessly by rmcp in the token's own task ([`stateless::TokenTask`]: a task per request
//!   would lose every approval before its retry); anything else is the 2025-11-25 session wire
//!   as above, and a request outside a session that is not `initialize` gets 400.
//!
//! What it serves is a [`Handler`]: the shipped server serves [`PhoneLogsServer`] ([`serve`]);
//! the conformance build (`examples/conformance_fixtures.rs`) serves the official suite's
//! fixture tools, prompts and resources through the same front end ([`serve_with`]).
//!
//! The binary parses [`HttpArgs`] (flattened into its own flags), checks them into
//! [`HttpSettings`] and hands them with a [`Serve`] to [`serve`]:
//!
//! ```no_run
//! # async fn run(serve: phonelogs_http::Serve) -> Result<(), phonelogs_http::Error> {
//! let args = phonelogs_http::HttpArgs {
//!     http: Some("127.0.0.1:8181".parse().expect("an address")),
//!     http_read_timeout: 30,
//!     http_max_sessions: 64,
//!     http_max_sessions_per_agent: 16,
//!     http_max_connections: phonelogs_http::MAX_CONNECTIONS,
//!     ..phonelogs_http::HttpArgs::default()
//! };
//! if let Some(settings) = args.settings()? {
//!     phonelogs_http::serve(serve, settings).await?;
//! }
//! # Ok(())
//! # }
//! ```

mod pending;
mod session;
mod stateless;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use phonelogs_gateway::{Gateway, Session, TaskSpec};
use phonelogs_mcp_frontend::{ClientSeat, PhoneLogsServer, ServerOptions};
use phonelogs_policy::{Agent, Policy};
use rmcp::ServerHandler;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use self::pending::{Entry, Pending};
use self::session::HttpSession;
use self::stateless::TokenTask;

/// The largest request body served, in bytes (larger: 413).
pub const MAX_BODY_BYTES: usize = 1024 * 1024;
/// The endpoint's path.
pub const ENDPOINT: &str = "/mcp";
/// The fewest characters a token of a token file may have.
pub const MIN_TOKEN_CHARS: usize = 16;
/// The most connections served at once by default; more wait to be accepted.
pub const MAX_CONNECTIONS: usize = 512;
/// The fewest connections a token may hold, however many tokens share the slots.
pub const MIN_CONNECTIONS_PER_TOKEN: usize = 4;
/// How often idle stateless tasks are ended (at most; sooner with a shorter idle timeout).
const REAP_EVERY: Duration = Duration::from_secs(30);

/// What stops the HTTP server from starting or serving; each says what to change.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The `--http` flags do not go together (the text names them and what to pass).
    #[error("{0}")]
    Flags(String),
    /// A token file the secret-file rule refuses (`phonelogs_secret_file`): the
    /// refusal names the rule and how to fix it.
    #[error(transparent)]
    Unsafe(#[from] phonelogs_secret_file::Refused),
    /// A token file that cannot be read, or holds no valid tokens.
    #[error("reading the token file {}", path.display())]
    TokenFile {
        /// The token file.
        path: PathBuf,
        /// Why.
        #[source]
        source: TokenFileError,
    },
    /// A file or socket call failed while `doing` something.
    #[error("{doing}")]
    Io {
        /// What was being done.
        doing: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The system gave no randomness for a token.
    #[error("no randomness for the {what}")]
    Randomness {
        /// What the randomness was for.
        what: &'static str,
        /// The cause.
        #[source]
        source: getrandom::Error,
    },
    /// The connection limit's semaphore was closed (never, while the server runs).
    #[error("the connection limit was closed")]
    SlotsClosed,
}

/// Why a token file's text is not a list of tokens.
#[derive(Debug, thiserror::Error)]
pub enum TokenFileError {
    /// The file cannot be read.
    #[error(transparent)]
    Read(#[from] std::io::Error),
    /// A line is not `TOKEN`, `TOKEN AGENT` or `TOKEN AGENT person` (the text says why).
    #[error("line {number}: {reason}")]
    Line {
        /// The line's number, from 1.
        number: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// A line names an agent by a name the policy refuses.
    #[error("line {number}")]
    AgentName {
        /// The line's number, from 1.
        number: usize,
        /// The policy's reason.
        #[source]
        source: phonelogs_policy::Error,
    },
    /// Only blank lines and comments.
    #[error("no token in it")]
    Empty,
}

fn io(doing: String) -> impl FnOnce(std::io::Error) -> Error {
    move |source| Error::Io { doing, source }
}

/// The HTTP flags (`phonelogs-mcp --http ADDR …`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct HttpArgs {
    /// Serve MCP over Streamable HTTP at ADDR (host:port, endpoint /mcp) instead of stdio.
    /// Loopback only unless --allow-remote. Every request needs a bearer token.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,
    /// The bearer tokens, one a line: `TOKEN`, `TOKEN AGENT` (the agent it stands for; its mode
    /// and scope come from [policy] agents) or `TOKEN AGENT person` (a person sits at that
    /// client: it may be asked, never for Always allow). Default: a random token, written to a
    /// new file (mode 0600) in the state directory, its path printed.
    #[arg(long, value_name = "FILE", requires = "http")]
    pub token_file: Option<PathBuf>,
    /// Allow --http on an address other than loopback (needs --token-file, readable by you
    /// only).
    #[arg(long, requires = "http")]
    pub allow_remote: bool,
    /// Another `Origin` allowed to call (scheme://host:port); repeatable. Default: the
    /// loopback names on the bound port. A request without `Origin` is not checked.
    #[arg(long = "allow-origin", value_name = "ORIGIN", requires = "http")]
    pub allow_origin: Vec<String>,
    /// Another `Host` the server answers to (name or name:port); repeatable. Default:
    /// localhost, 127.0.0.1, ::1 and the bound address.
    #[arg(long = "allow-host", value_name = "HOST", requires = "http")]
    pub allow_host: Vec<String>,
    /// Seconds a session may stay idle before it (and its task) ends.
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub http_idle_timeout: u64,
    /// Seconds a client has to send a request's headers, and again its body.
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    pub http_read_timeout: u64,
    /// The most MCP sessions open at once.
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub http_max_sessions: usize,
    /// The most MCP sessions one agent may have open at once.
    #[arg(long, value_name = "N", default_value_t = 16)]
    pub http_max_sessions_per_agent: usize,
    /// The most connections served at once; each token of the token file may hold an equal
    /// share of them (at least 4), so one agent's long waits cannot hold them all.
    #[arg(long, value_name = "N", default_value_t = MAX_CONNECTIONS)]
    pub http_max_connections: usize,
}

/// The HTTP settings, checked.
#[derive(Debug, Clone)]
pub struct HttpSettings {
    /// Where to listen.
    pub addr: SocketAddr,
    /// The token file, if given.
    pub token_file: Option<PathBuf>,
    /// More allowed origins.
    pub allow_origin: Vec<String>,
    /// More allowed hosts.
    pub allow_host: Vec<String>,
    /// Idle time before a session ends.
    pub idle_timeout: Duration,
    /// Time for a request's headers, and for its body.
    pub read_timeout: Duration,
    /// The most sessions at once.
    pub max_sessions: usize,
    /// The most sessions of one agent at once.
    pub max_sessions_per_agent: usize,
    /// The most connections at once, shared fairly by the tokens.
    pub max_connections: usize,
}

impl HttpArgs {
    /// The settings, or `None` for stdio; refuses a non-loopback address without
    /// `--allow-remote` and a token file.
    pub fn settings(&self) -> Result<Option<HttpSettings>, Error> {
        let Some(addr) = self.http else {
            return Ok(None);
        };
        if !addr.ip().is_loopback() {
            if !self.allow_remote {
                return Err(Error::Flags(format!(
                    "--http {addr} is not a loopback address: pass --allow-remote (and --token-file) to serve other hosts"
                )));
            }
            if self.token_file.is_none() {
                return Err(Error::Flags(format!(
                    "--http {addr} with --allow-remote needs --token-file"
                )));
            }
        }
        if self.http_max_sessions == 0
            || self.http_max_sessions_per_agent == 0
            || self.http_read_timeout == 0
            || self.http_max_connections == 0
        {
            return Err(Error::Flags(
                "--http-max-sessions, --http-max-sessions-per-agent, --http-max-connections and --http-read-timeout must be at least 1".to_owned(),
            ));
        }
        Ok(Some(HttpSettings {
            addr,
            token_file: self.token_file.clone(),
            allow_origin: self.allow_origin.clone(),
            allow_host: self.allow_host.clone(),
            idle_timeout: Duration::from_secs(self.http_idle_timeout.max(1)),
            read_timeout: Duration::from_secs(self.http_read_timeout),
            max_sessions: self.http_max_sessions,
            max_sessions_per_agent: self.http_max_sessions_per_agent,
            max_connections: self.http_max_connections,
        }))
    }
}

/// One line of a token file: the token, the agent it names (none: `--agent`), and whether a
/// person sits at its client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenLine {
    /// The bearer token.
    pub token: String,
    /// The agent it stands for; `None` for the default agent.
    pub agent: Option<String>,
    /// Marked `person`: a person sits at that client.
    pub person: bool,
}

impl TokenLine {
    /// Who sits at this token's client: the one decision of who may answer over HTTP.
    fn seat(&self) -> ClientSeat {
        if self.person {
            ClientSeat::PersonNotAlways
        } else {
            ClientSeat::Agent
        }
    }
}

/// The MCP server the front end serves: made once per 2025-11-25 session and once per token's
/// task on the stateless wire, each on its own gateway task, which the front end ends when the
/// session does (or the token's task is idle). [`PhoneLogsServer`] is the shipped one.
pub trait Handler: ServerHandler + Clone + Send + Sync + 'static {
    /// The server of a new task of `task`'s agent, for a client in `options.client`'s seat.
    fn make(
        gateway: &Gateway,
        task: &TaskSpec,
        options: &ServerOptions,
    ) -> Result<Self, phonelogs_mcp_frontend::Error>;

    /// The gateway task it serves.
    fn session(&self) -> &Session;
}

impl Handler for PhoneLogsServer {
    fn make(
        gateway: &Gateway,
        task: &TaskSpec,
        options: &ServerOptions,
    ) -> Result<Self, phonelogs_mcp_frontend::Error> {
        PhoneLogsServer::new(gateway.clone(), task.clone(), options.clone())
    }

    fn session(&self) -> &Session {
        PhoneLogsServer::session(self)
    }
}

/// The word that marks a token line's client as one a person sits at.
pub const PERSON_MARK: &str = "person";

/// A token, its session service (an index into [`Server::agents`], its own), and its task on
/// the stateless wire with the rmcp service that serves it.
struct Token<H: Handler> {
    secret: String,
    agent: usize,
    stateless: Service<H>,
    /// The token's share of the connection slots ([`fair_share`]).
    slots: Arc<tokio::sync::Semaphore>,
}

type Service<H> = StreamableHttpService<HttpSession<H>, LocalSessionManager>;

/// One token's service (its agent's, in its seat): its sessions are its own.
struct AgentService<H: Handler> {
    name: String,
    seat: ClientSeat,
    /// What each of its tasks is started with.
    task: TaskSpec,
    service: Service<H>,
    sessions: Arc<LocalSessionManager>,
}

struct Server<H: Handler> {
    tokens: Vec<Token<H>>,
    agents: Vec<AgentService<H>>,
    max_sessions: usize,
    max_sessions_per_agent: usize,
    read_timeout: Duration,
    /// Held while a session opens, so the session cap is not passed by a race.
    opening: tokio::sync::Mutex<()>,
}

/// What the HTTP server needs besides its settings.
pub struct Serve {
    /// The gateway every session's task starts on.
    pub gateway: Gateway,
    /// The agent of a token that names none (`--agent`, its mode and scope).
    pub default_agent: Agent,
    /// The policy, for the agents tokens name.
    pub policy: Policy,
    /// Each task's apps.
    pub task_apps: Option<Vec<phonelogs_driver::AppId>>,
    /// The state directory, where a made token is written.
    pub state_dir: PathBuf,
    /// Whether a token marked `person` has its client asked the person's questions; false when
    /// they go to the person's side only (`--questions person`): then no token's client is asked.
    pub ask_person_tokens: bool,
    /// The servers' options.
    pub options: ServerOptions,
}

/// Binds, prints the endpoint (and a made token's file) on stderr, and serves
/// [`PhoneLogsServer`] until the process is told to stop (SIGINT or SIGTERM), when a token file
/// it made is removed: the token dies with the server, and no stale secret is left in the state
/// directory.
pub async fn serve(serve: Serve, settings: HttpSettings) -> Result<(), Error> {
    serve_with::<PhoneLogsServer>(serve, settings).await
}

/// [`serve`] with another [`Handler`] behind the same front end (tokens, seats, sessions and
/// their caps, both wires, connection slots).
pub async fn serve_with<H: Handler>(serve: Serve, settings: HttpSettings) -> Result<(), Error> {
    // The tokens first: a token file that may not be used stops the server before it listens.
    let mut made = None;
    let lines = match &settings.token_file {
        Some(path) => read_token_file(path)?,
        None => {
            let (path, token) = make_token_file(&serve.state_dir)?;
            eprintln!(
                "phonelogs-mcp: the bearer token is in {} (readable by you only)",
                path.display()
            );
            made = Some(MadeToken(path));
            vec![TokenLine {
                token,
                agent: None,
                person: false,
            }]
        }
    };
    let listener = tokio::net::TcpListener::bind(settings.addr)
        .await
        .map_err(io(format!("listening on {}", settings.addr)))?;
    let bound = listener
        .local_addr()
        .map_err(io("the bound address".to_owned()))?;
    let server = Arc::new(build::<H>(&serve, &settings, bound, lines));
    let mut names: Vec<&str> = server.agents.iter().map(|a| a.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    tracing::info!(%bound, agents = ?names, "phonelogs-mcp serving Streamable HTTP");
    eprintln!("phonelogs-mcp: serving MCP on http://{bound}{ENDPOINT}");
    let served = tokio::select! {
        served = accept(listener, server, settings.max_connections, settings.read_timeout) => served,
        signal = stop_signal() => {
            tracing::info!(signal, "phonelogs-mcp stopping");
            Ok(())
        }
    };
    drop(made);
    served
}

/// A token file this server made: removed when the server stops.
struct MadeToken(PathBuf);

impl Drop for MadeToken {
    fn drop(&mut self) {
        if let Err(error) = std::fs::remove_file(&self.0) {
            tracing::warn!(%error, path = %self.0.display(), "could not remove the made token file");
        }
    }
}

/// Resolves with the signal's name when the process is told to stop.
async fn stop_signal() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => tokio::select! {
                _ = tokio::signal::ctrl_c() => "SIGINT",
                _ = terminate.recv() => "SIGTERM",
            },
            Err(error) => {
                tracing::warn!(%error, "no SIGTERM handler; stopping on SIGINT only");
                let _ = tokio::signal::ctrl_c().await;
                "SIGINT"
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        "ctrl-c"
    }
}

/// The token file's lines, each with its own service (its agent's, in its seat).
fn build<H: Handler>(
    serve: &Serve,
    settings: &HttpSettings,
    bound: SocketAddr,
    lines: Vec<TokenLine>,
) -> Server<H> {
    let mut agents: Vec<AgentService<H>> = Vec::new();
    let mut tokens = Vec::new();
    let mut tasks = Vec::new();
    let config = rmcp_config(settings, bound);
    let share = fair_share(settings.max_connections, lines.len());
    for line in lines {
        let seat = if serve.ask_person_tokens {
            line.seat()
        } else {
            ClientSeat::Agent
        };
        let agent = match &line.agent {
            Some(name) => agent_named(name, &serve.default_agent, &serve.policy),
            None => serve.default_agent.clone(),
        };
        // A service per token line, not per agent: a session id shown with another token of
        // the same agent is unknown there too, as the stateless wire keeps each token's task
        // apart. The per-agent session cap counts an agent's services together.
        agents.push(agent_service(serve, agent, seat, settings, config.clone()));
        let index = agents.len() - 1;
        let task = token_task(serve, &agents[index], settings);
        tasks.push(task.clone());
        let factory = move || task.serve_request();
        tokens.push(Token {
            secret: line.token,
            agent: index,
            stateless: StreamableHttpService::new(
                factory,
                Arc::new(LocalSessionManager::default()),
                config.clone(),
            ),
            slots: Arc::new(tokio::sync::Semaphore::new(share)),
        });
    }
    TokenTask::spawn_reaper(tasks, REAP_EVERY.min(settings.idle_timeout));
    Server {
        tokens,
        agents,
        max_sessions: settings.max_sessions,
        max_sessions_per_agent: settings.max_sessions_per_agent,
        read_timeout: settings.read_timeout,
        opening: tokio::sync::Mutex::new(()),
    }
}

/// A token's task on the stateless wire: the agent's, with the seat of its service.
fn token_task<H: Handler>(
    serve: &Serve,
    agent: &AgentService<H>,
    settings: &HttpSettings,
) -> Arc<TokenTask<H>> {
    let (gateway, task) = (serve.gateway.clone(), agent.task.clone());
    let options = ServerOptions {
        client: agent.seat,
        ..serve.options.clone()
    };
    let make = Box::new(move || H::make(&gateway, &task, &options));
    TokenTask::new(make, settings.idle_timeout)
}

/// The agent a token names: the policy's agent of that name, else the default agent's mode
/// and scope under that name.
fn agent_named(name: &str, default: &Agent, policy: &Policy) -> Agent {
    policy.agent(name).cloned().unwrap_or_else(|| {
        let mut agent = Agent::new(name, default.mode);
        agent.scope = default.scope.clone();
        agent
    })
}

fn agent_service<H: Handler>(
    serve: &Serve,
    agent: Agent,
    seat: ClientSeat,
    settings: &HttpSettings,
    config: StreamableHttpServerConfig,
) -> AgentService<H> {
    let name = agent.name.clone();
    let task = TaskSpec {
        agent,
        apps: serve.task_apps.clone(),
        devices: None,
    };
    let gateway = serve.gateway.clone();
    let options = ServerOptions {
        client: seat,
        ..serve.options.clone()
    };
    let spec = task.clone();
    let factory = move || {
        H::make(&gateway, &task, &options)
            .map(HttpSession::new)
            .map_err(std::io::Error::other)
    };
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = Some(settings.idle_timeout);
    let sessions = Arc::new(manager);
    AgentService {
        name,
        seat,
        task: spec,
        service: StreamableHttpService::new(factory, sessions.clone(), config),
        sessions,
    }
}

/// rmcp's checks: `Host` and `Origin` against the allow lists, the body limit.
fn rmcp_config(settings: &HttpSettings, bound: SocketAddr) -> StreamableHttpServerConfig {
    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"].map(String::from).into();
    if !bound.ip().is_unspecified() && !bound.ip().is_loopback() {
        hosts.push(bound.ip().to_string());
    }
    hosts.extend(settings.allow_host.iter().cloned());
    let port = bound.port();
    let mut origins: Vec<String> = ["localhost", "127.0.0.1", "[::1]"]
        .iter()
        .map(|host| format!("http://{host}:{port}"))
        .collect();
    origins.extend(settings.allow_origin.iter().cloned());
    StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_max_request_body_bytes(MAX_BODY_BYTES)
}

/// Each token's share of `connections` slots when `tokens` tokens share them: an equal part,
/// at least [`MIN_CONNECTIONS_PER_TOKEN`] (so with very many tokens the shares add up to more
/// than the whole, and the whole still holds), at most the whole.
fn fair_share(connections: usize, tokens: usize) -> usize {
    (connections / tokens.max(1))
        .max(MIN_CONNECTIONS_PER_TOKEN)
        .min(connections)
}

async fn accept<H: Handler>(
    listener: tokio::net::TcpListener,
    server: Arc<Server<H>>,
    connections: usize,
    read_timeout: Duration,
) -> Result<(), Error> {
    let slots = Arc::new(tokio::sync::Semaphore::new(connections));
    let pending = Arc::new(Pending::default());
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(error) => {
                // Out of descriptors, say: wait a little rather than spin.
                tracing::warn!(%error, "could not accept a connection");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        // A full pool makes room by closing the oldest connection that has named no token yet;
        // when every one has, the new connection waits for one to end.
        let slot = match slots.clone().try_acquire_owned() {
            Ok(slot) => slot,
            Err(_) => {
                if pending.evict_oldest() {
                    tracing::debug!(%peer, "the pool is full: the oldest silent connection closes");
                }
                let Ok(slot) = slots.clone().acquire_owned().await else {
                    return Err(Error::SlotsClosed);
                };
                slot
            }
        };
        // An answer goes out in parts (the stream's first event, then the result): with
        // Nagle's algorithm on, a part waits for the ACK of the one before, which a client on
        // a kept-alive connection delays by up to 40 ms.
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, %peer, "could not set TCP_NODELAY");
        }
        let server = server.clone();
        let connection = Arc::new(Connection {
            held: std::sync::Mutex::new(None),
            entry: pending.enter(),
        });
        tokio::spawn(async move {
            let service = hyper::service::service_fn({
                let connection = connection.clone();
                move |request| {
                    let (server, connection) = (server.clone(), connection.clone());
                    async move { Ok::<_, Infallible>(server.handle(request, &connection).await) }
                }
            });
            let served = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(read_timeout)
                .serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                ended = served => if let Err(error) = ended {
                    tracing::debug!(%error, %peer, "an HTTP connection ended");
                },
                () = connection.entry.evicted() => {
                    tracing::debug!(%peer, "a connection that named no token was closed for a new one");
                }
            }
            drop(slot);
        });
    }
}

type Body = BoxBody<Bytes, Infallible>;

fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// 401 and nothing else, and the connection closed: one that names no token of the file holds
/// no slot past its answer (the review's F5; a connection that sends nothing at all is closed
/// by the header read timeout, or sooner for a new connection when the pool is full:
/// [`pending`]).
fn unauthorized() -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::new()).boxed());
    *response.status_mut() = StatusCode::UNAUTHORIZED;
    let headers = response.headers_mut();
    headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// The token a connection is counted against, and its slot of that token's share.
type Held = std::sync::Mutex<Option<(usize, tokio::sync::OwnedSemaphorePermit)>>;

/// What the server knows of one connection.
struct Connection {
    /// The token its slot is counted against, once a request names one.
    held: Held,
    /// Its place among the connections that have not named a token yet.
    entry: Entry,
}

impl<H: Handler> Server<H> {
    async fn handle(&self, request: Request<Incoming>, connection: &Connection) -> Response<Body> {
        let token = match self.admit(request.headers(), connection) {
            Ok(token) => token,
            Err(refused) => return *refused,
        };
        let agent = self.tokens[token].agent;
        if request.uri().path() != ENDPOINT {
            return plain(StatusCode::NOT_FOUND, "Not Found: the endpoint is /mcp\n");
        }
        let (parts, body) = request.into_parts();
        let limited = Limited::new(body, MAX_BODY_BYTES);
        let bytes = match tokio::time::timeout(self.read_timeout, limited.collect()).await {
            Ok(Ok(collected)) => collected.to_bytes(),
            Ok(Err(error)) if error.is::<http_body_util::LengthLimitError>() => {
                return plain(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "Payload Too Large: a request body may hold at most 1 MiB\n",
                );
            }
            Ok(Err(_)) => return plain(StatusCode::BAD_REQUEST, "Bad Request: unreadable body\n"),
            Err(_) => {
                let mut response = plain(
                    StatusCode::REQUEST_TIMEOUT,
                    "Request Timeout: the body did not arrive in time\n",
                );
                response
                    .headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
                return response;
            }
        };
        let outside = if parts.method == Method::POST {
            outside_a_session(&parts.headers, &bytes)
        } else {
            None
        };
        let service = &self.agents[agent];
        // rmcp answers a DELETE of an unknown session with 202; say it is unknown, as for
        // every other request, so another agent's session id gets the same 404.
        if parts.method == Method::DELETE && !service.knows(&parts.headers).await {
            return plain(StatusCode::NOT_FOUND, "Not Found: no such session\n");
        }
        let is_delete = parts.method == Method::DELETE;
        let request = Request::from_parts(parts, Full::new(bytes));
        match outside {
            Some(Outside::Stateless) => self.tokens[token].stateless.handle(request).await,
            Some(Outside::NoSession) => plain(
                StatusCode::BAD_REQUEST,
                "Bad Request: no session: send initialize first (2025-11-25), or the request's _meta with protocol 2026-07-28\n",
            ),
            Some(Outside::Opening) => {
                let _opening = self.opening.lock().await;
                let (all, agents) = self.session_counts(&service.name).await;
                let full = if all >= self.max_sessions {
                    Some("Service Unavailable: too many MCP sessions are open\n")
                } else if agents >= self.max_sessions_per_agent {
                    Some("Service Unavailable: this agent has too many MCP sessions open\n")
                } else {
                    None
                };
                if let Some(text) = full {
                    let mut response = plain(StatusCode::SERVICE_UNAVAILABLE, text);
                    response
                        .headers_mut()
                        .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
                    return response;
                }
                service.service.handle(request).await
            }
            // rmcp answers a DELETE with 202; the official Python SDK expects 200 or 204.
            None if is_delete => {
                let mut response = service.service.handle(request).await;
                if response.status() == StatusCode::ACCEPTED {
                    *response.status_mut() = StatusCode::NO_CONTENT;
                }
                response
            }
            None => service.service.handle(request).await,
        }
    }

    /// The token a request names, once its connection holds a slot of that token's share; the
    /// answer that refuses it otherwise (401, or 503 and the connection closed).
    fn admit(
        &self,
        headers: &hyper::HeaderMap,
        connection: &Connection,
    ) -> Result<usize, Box<Response<Body>>> {
        let Some(token) = self.token_of(headers) else {
            return Err(Box::new(unauthorized()));
        };
        let refused = if !connection.entry.authenticate() {
            // Evicted for a new connection a moment before its request came: it is closing.
            "Service Unavailable: the connection was closed for a new one; connect again\n"
        } else if !self.hold_slot(token, &connection.held) {
            "Service Unavailable: this token holds its share of the connections; close one or wait\n"
        } else {
            return Ok(token);
        };
        let mut response = plain(StatusCode::SERVICE_UNAVAILABLE, refused);
        let headers = response.headers_mut();
        headers.insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
        Err(Box::new(response))
    }

    /// Counts the connection against `token`'s share of the slots (once: its later requests
    /// with the same token hold the same slot; a request with another token moves it). False
    /// when the token's share is all held by its other connections.
    fn hold_slot(&self, token: usize, held: &Held) -> bool {
        let Ok(mut held) = held.lock() else {
            return false;
        };
        if held.as_ref().is_some_and(|(holder, _)| *holder == token) {
            return true;
        }
        *held = None;
        match self.tokens[token].slots.clone().try_acquire_owned() {
            Ok(permit) => {
                *held = Some((token, permit));
                true
            }
            Err(_) => false,
        }
    }

    /// The token the request carries (an index into [`Server::tokens`]), comparing with every
    /// token in constant time.
    fn token_of(&self, headers: &hyper::HeaderMap) -> Option<usize> {
        let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
        let (scheme, given) = value.split_once(' ')?;
        if !scheme.eq_ignore_ascii_case("bearer") {
            return None;
        }
        let given = given.trim();
        let mut found = None;
        for (index, token) in self.tokens.iter().enumerate() {
            if same(given, &token.secret) {
                found = Some(index);
            }
        }
        found
    }

    /// The sessions open in all, and those of the agent `name` (under all its tokens).
    async fn session_counts(&self, name: &str) -> (usize, usize) {
        let (mut all, mut agents) = (0, 0);
        for agent in &self.agents {
            let open = agent.sessions.sessions.read().await.len();
            all += open;
            if agent.name == name {
                agents += open;
            }
        }
        (all, agents)
    }
}

impl<H: Handler> AgentService<H> {
    /// Whether the request names one of this service's (this token's) sessions.
    async fn knows(&self, headers: &hyper::HeaderMap) -> bool {
        let Some(id) = headers.get("mcp-session-id").and_then(|v| v.to_str().ok()) else {
            return false;
        };
        self.sessions.sessions.read().await.contains_key(id)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outside {
    /// An `initialize`: a session opens.
    Opening,
    /// A request that names protocol 2026-07-28 or later (its `_meta` or its
    /// `MCP-Protocol-Version`), or `server/discover`: served statelessly by rmcp, in the
    /// token's task.
    Stateless,
    /// Anything else outside a session: refused, as before the stateless wire.
    NoSession,
}

/// Whether a POST is outside a session: an `initialize` opens one; a request of the stateless
/// wire is served in the token's task (rmcp checks its `_meta`, headers and version, and
/// answers what is wrong with the wire's own errors); anything else is refused.
///
/// An `initialize` is always the session wire's, whatever version its header or `_meta` names:
/// the token's stateless service would open an rmcp session of its own for it, which neither
/// the session caps nor a DELETE would reach (the review's F4).
fn outside_a_session(headers: &hyper::HeaderMap, body: &[u8]) -> Option<Outside> {
    let stateless_version = |version: &str| version >= "2026-07-28";
    let has_session = headers.contains_key("mcp-session-id");
    // An unreadable body is left to rmcp, which answers it with a JSON-RPC error.
    let message: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    let method = message.get("method").and_then(|m| m.as_str());
    if method == Some("initialize") {
        return (!has_session).then_some(Outside::Opening);
    }
    let header_version = headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok());
    let meta_version = message
        .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
        .and_then(|v| v.as_str());
    if header_version.is_some_and(stateless_version)
        || meta_version.is_some_and(stateless_version)
        || method == Some("server/discover")
    {
        return Some(Outside::Stateless);
    }
    if has_session {
        None
    } else {
        Some(Outside::NoSession)
    }
}

/// Compares a given token with a secret in time that depends on the longer length only, so
/// that neither a refusal's timing nor which token matched tells how much of a guess was right.
/// Hand-written because it is a few lines and the graph has no constant-time crate to reuse.
fn same(given: &str, secret: &str) -> bool {
    let (a, b) = (given.as_bytes(), secret.as_bytes());
    let mut diff = u8::from(a.len() != b.len());
    for i in 0..a.len().max(b.len()) {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0);
        diff |= std::hint::black_box(x ^ y);
    }
    diff == 0
}

/// The tokens of a token file: one a line (`TOKEN`, `TOKEN AGENT` or `TOKEN AGENT person`);
/// blank lines and lines starting with `#` are skipped.
///
/// The file is read under the secret-file rule ([`phonelogs_secret_file`]): refused
/// when others may write to it (they could add a token of their own), or read it (with a token
/// they could call as its agent, from this host as from another, or answer questions as the
/// person) unless it is a read-only mount (0444, a read-only filesystem, root's).
pub fn read_token_file(path: &Path) -> Result<Vec<TokenLine>, Error> {
    let failed = |source: TokenFileError| Error::TokenFile {
        path: path.to_owned(),
        source,
    };
    // Every local user can reach a loopback port as well as a remote host can reach
    // --allow-remote's: whoever reads a token calls as its agent, so the rule applies wherever
    // the server listens.
    let text = phonelogs_secret_file::read(path, "the token file")?;
    let tokens = parse_tokens(&text).map_err(failed)?;
    Ok(tokens)
}

/// The parse of [`read_token_file`].
pub fn parse_tokens(text: &str) -> Result<Vec<TokenLine>, TokenFileError> {
    let mut tokens: Vec<TokenLine> = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let number = number + 1;
        let bad = |reason: String| TokenFileError::Line { number, reason };
        let mut words = line.split_whitespace();
        let token = words.next().unwrap_or_default();
        let agent = words.next().map(str::to_owned);
        let person = match words.next() {
            None => false,
            Some(PERSON_MARK) => true,
            Some(other) => {
                return Err(bad(format!(
                    "{other:?} after the agent's name: a line is TOKEN, TOKEN AGENT or TOKEN AGENT {PERSON_MARK} (an agent's name is one word)"
                )));
            }
        };
        if let Some(extra) = words.next() {
            return Err(bad(format!(
                "{extra:?} after {PERSON_MARK:?}: nothing may follow it"
            )));
        }
        if token.chars().count() < MIN_TOKEN_CHARS || !token.chars().all(|c| c.is_ascii_graphic()) {
            return Err(bad(format!(
                "a token must be at least {MIN_TOKEN_CHARS} visible ASCII characters"
            )));
        }
        if let Some(agent) = &agent {
            Agent::check_name(agent)
                .map_err(|source| TokenFileError::AgentName { number, source })?;
        }
        if tokens.iter().any(|t| t.token == token) {
            return Err(bad("the same token twice".to_owned()));
        }
        tokens.push(TokenLine {
            token: token.to_owned(),
            agent,
            person,
        });
    }
    if tokens.is_empty() {
        return Err(TokenFileError::Empty);
    }
    Ok(tokens)
}

/// Makes a random token and writes it to a new file in `dir`, created exclusively with mode
/// 0600. Returns the file and the token.
pub fn make_token_file(dir: &Path) -> Result<(PathBuf, String), Error> {
    let random = |what| move |source| Error::Randomness { what, source };
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(random("bearer token"))?;
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let mut tag = [0u8; 4];
    getrandom::fill(&mut tag).map_err(random("token file's name"))?;
    let tag: String = tag.iter().map(|b| format!("{b:02x}")).collect();
    std::fs::create_dir_all(dir).map_err(io(format!(
        "creating the state directory {}",
        dir.display()
    )))?;
    let path = dir.join(format!("http-token-{tag}"));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options
        .open(&path)
        .map_err(io(format!("creating the token file {}", path.display())))?;
    use std::io::Write;
    writeln!(file, "{token}").map_err(io(format!("writing {}", path.display())))?;
    Ok((path, token))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The review's F4: an `initialize` naming the stateless revision (in its header or its
    /// `_meta`) opens a session on the session wire, counted by its caps, never one of rmcp's
    /// own inside the token's stateless service; the stateless wire's requests still go there.
    #[test]
    fn an_initialize_is_the_session_wires_whatever_version_it_names() {
        let headers = |version: Option<&str>, session: bool| {
            let mut map = hyper::HeaderMap::new();
            if let Some(version) = version {
                map.insert("mcp-protocol-version", version.parse().unwrap());
            }
            if session {
                map.insert("mcp-session-id", "abc".parse().unwrap());
            }
            map
        };
        let initialize = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        let discover = br#"{"jsonrpc":"2.0","id":1,"method":"server/discover"}"#;
        let list = br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
        for version in [None, Some("2025-11-25"), Some("2026-07-28")] {
            assert_eq!(
                outside_a_session(&headers(version, false), initialize),
                Some(Outside::Opening),
                "{version:?}"
            );
            assert_eq!(outside_a_session(&headers(version, true), initialize), None);
            assert_eq!(
                outside_a_session(&headers(version, false), discover),
                Some(Outside::Stateless)
            );
        }
        assert_eq!(
            outside_a_session(&headers(Some("2026-07-28"), false), list),
            Some(Outside::Stateless)
        );
        assert_eq!(outside_a_session(&headers(None, true), list), None);
        assert_eq!(
            outside_a_session(&headers(None, false), list),
            Some(Outside::NoSession)
        );
    }

    #[test]
    fn tokens_are_read_one_a_line_with_an_optional_agent_and_person_mark() {
        let tokens = parse_tokens(
            "# agents\n0123456789abcdef0123\n\nfedcba9876543210fedc ci-agent\n\
             aaaabbbbccccddddeeee alice person\n",
        )
        .unwrap();
        let line = |token: &str, agent: Option<&str>, person| TokenLine {
            token: token.to_owned(),
            agent: agent.map(str::to_owned),
            person,
        };
        assert_eq!(
            tokens,
            vec![
                line("0123456789abcdef0123", None, false),
                line("fedcba9876543210fedc", Some("ci-agent"), false),
                line("aaaabbbbccccddddeeee", Some("alice"), true),
            ]
        );
        assert_eq!(tokens[0].seat(), ClientSeat::Agent);
        assert_eq!(tokens[2].seat(), ClientSeat::PersonNotAlways);
        assert!(parse_tokens("short\n").is_err());
        assert!(parse_tokens("0123456789abcdef0123\n0123456789abcdef0123 b\n").is_err());
        assert!(parse_tokens("# nothing\n").is_err());
        assert!(parse_tokens("0123456789abcdef0123 my agent\n").is_err());
        assert!(parse_tokens("0123456789abcdef0123 alice person x\n").is_err());
    }

    /// Issue 28, item 15: with --allow-remote, a token file others can read is refused (it
    /// only warned); one others can write to is refused always, and so is a readable one that
    /// marks a person's client.
    #[cfg(unix)]
    #[test]
    fn a_token_file_others_can_read_or_write_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens");
        let write = |text: &str, mode: u32| {
            let _ = std::fs::remove_file(&path);
            std::fs::write(&path, text).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        let agent = "0123456789abcdef0123 ci-agent\n";
        write(agent, 0o644);
        let error = read_token_file(&path).unwrap_err().to_string();
        assert!(
            error.contains("rule `readable-by-others`") && error.contains("chmod 600"),
            "{error}"
        );
        // Docker's secrets: readable by all, writable by no one.
        write(agent, 0o444);
        assert!(read_token_file(&path).is_ok());
        write(agent, 0o640);
        assert!(read_token_file(&path).is_err());
        write(agent, 0o600);
        assert!(read_token_file(&path).is_ok());
        write(agent, 0o622);
        assert!(read_token_file(&path).is_err());
        write("0123456789abcdef0123 alice person\n", 0o640);
        assert!(read_token_file(&path).is_err());
    }

    #[test]
    fn each_token_gets_an_equal_share_of_the_connections_and_at_least_four() {
        assert_eq!(fair_share(512, 1), 512);
        assert_eq!(fair_share(512, 4), 128);
        assert_eq!(fair_share(512, 3), 170);
        assert_eq!(fair_share(512, 1000), MIN_CONNECTIONS_PER_TOKEN);
        assert_eq!(fair_share(2, 1), 2);
        assert_eq!(fair_share(8, 0), 8);
    }

    #[test]
    fn same_compares_whole_tokens() {
        assert!(same("0123456789abcdef", "0123456789abcdef"));
        assert!(!same("0123456789abcdeX", "0123456789abcdef"));
        assert!(!same("0123456789abcde", "0123456789abcdef"));
        assert!(!same("0123456789abcdef0", "0123456789abcdef"));
        assert!(!same("", "0123456789abcdef"));
    }

    #[test]
    fn a_remote_address_needs_allow_remote_and_a_token_file() {
        let args = |addr: &str, remote: bool, file: bool| HttpArgs {
            http: Some(addr.parse().unwrap()),
            allow_remote: remote,
            token_file: file.then(|| PathBuf::from("/t")),
            http_read_timeout: 30,
            http_max_sessions: 4,
            http_max_sessions_per_agent: 2,
            http_max_connections: 8,
            ..HttpArgs::default()
        };
        assert!(
            args("127.0.0.1:1", false, false)
                .settings()
                .unwrap()
                .is_some()
        );
        assert!(args("[::1]:1", false, false).settings().unwrap().is_some());
        assert!(args("0.0.0.0:1", false, true).settings().is_err());
        assert!(args("0.0.0.0:1", true, false).settings().is_err());
        assert!(args("0.0.0.0:1", true, true).settings().unwrap().is_some());
        assert!(HttpArgs::default().settings().unwrap().is_none());
    }

    #[test]
    fn the_made_token_file_is_new_and_readable_by_its_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let (path, token) = make_token_file(dir.path()).unwrap();
        assert_eq!(token.len(), 64);
        let lines = read_token_file(&path).unwrap();
        assert_eq!(lines.len(), 1);
        assert_eq!(
            (lines[0].token.as_str(), &lines[0].agent),
            (token.as_str(), &None)
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let (other, _) = make_token_file(dir.path()).unwrap();
        assert_ne!(path, other);
    }
}
