//! `phonelogs ui`: the person's page, served on 127.0.0.1 only.
//!
//! The spec's "Settings › Safety" as a page: the agents' questions live, with one click for
//! each answer; the Always-allow rules with Revoke; the history, filtered; the doctor's view of
//! the phones and of the shared store. It is axum on hyper (HTTP/1) with HTML rendered here and one small script and
//! style sheet built into the binary, so nothing is loaded from any other host and there is no
//! JavaScript build step. [`guard`] keeps it the person's own (token, Host, Origin, CSRF, CSP);
//! on Linux the listener serves the person's own user only (`peer`); `--open` never puts the
//! token on a command line: on Linux it hands the browser a one-time code that only the
//! person's own user can connect to use ([`guard::OpenCodes`]), elsewhere a file readable by
//! the person only ([`OpenFile`]).
//!
//! The store is the one the MCP server and the command line share. The page holds no lock
//! across requests: each store call is one short statement or transaction, run off the async
//! threads because SQLite may wait up to its busy timeout for another process's write. One
//! background task polls the pending questions and publishes them to every open page through
//! server-sent events, so a question answered elsewhere leaves the page at once.

mod guard;
mod html;
#[cfg(target_os = "linux")]
mod peer;

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use crate::Doing;
use axum::Router;
use axum::extract::{Form, Query, State};
use axum::http::{StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use phonelogs_gateway::{Answer, AnsweredVia, Approval, Error as StoreError, HistoryFilter, Store};
use time::UtcOffset;
use tokio::sync::watch;

use guard::Secrets;
#[cfg(test)]
use guard::{CSP, same};
use html::{Clock, View};

/// How often the page looks for new and answered questions: often enough that a question shows
/// and leaves "at once" for a person, rarely enough to cost nothing.
const POLL: Duration = Duration::from_millis(250);
/// How often the page asks the phones for their models.
const MODELS_EVERY: Duration = Duration::from_secs(15);
/// How many history steps the view shows, and reads for its filter choices.
const HISTORY_SHOWN: usize = 500;
const HISTORY_CHOICES: usize = 5000;

const PAGE_JS: &str = include_str!("page.js");
const PAGE_CSS: &str = include_str!("page.css");
const ICON_SVG: &str = include_str!("icon.svg");

/// What `phonelogs ui` was asked for.
#[derive(Debug, Clone)]
pub struct Options {
    /// The state directory, shared with the MCP server.
    pub state_dir: PathBuf,
    /// The shared store, when `--store` names one (else SQLite in `state_dir`).
    pub store: Option<phonelogs_gateway::Store>,
    /// How the shared store was given (`--store`, `--store-file`), for the Phones view's
    /// "shared store" line, as `phonelogs doctor` shows it (default: none, SQLite).
    pub shared: crate::doctor::SharedStore,
    /// The port (0: any free port).
    pub port: u16,
    /// Open the page in the person's browser.
    pub open: bool,
    /// The computer's UTC offset, for times on the page.
    pub offset: UtcOffset,
}

/// The pending questions as the page shows them, published to every open page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Snapshot {
    pending: Vec<Approval>,
    models: HashMap<String, String>,
}

#[derive(Clone)]
struct AppState {
    store: Store,
    secrets: Arc<Secrets>,
    snapshot: watch::Receiver<Snapshot>,
    models: Arc<RwLock<HashMap<String, String>>>,
    state_dir: PathBuf,
    shared: crate::doctor::SharedStore,
    offset: UtcOffset,
}

impl AppState {
    fn clock(&self) -> Clock {
        Clock::now(self.offset)
    }

    fn models(&self) -> HashMap<String, String> {
        self.models.read().map(|m| m.clone()).unwrap_or_default()
    }

    /// Runs a store call off the async threads (SQLite may wait for another process's write).
    async fn with_store<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, Response> {
        let store = self.store.clone();
        match tokio::task::spawn_blocking(move || f(&store)).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(error)) => Err(store_failed(&error)),
            Err(error) => {
                tracing::error!(%error, "a store call panicked");
                Err((
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "The store call failed.\n",
                )
                    .into_response())
            }
        }
    }
}

fn store_failed(error: &StoreError) -> Response {
    tracing::warn!(%error, "the page could not use the state store");
    let body = html::layout(
        View::Questions,
        "Error",
        &format!(
            "<p class=\"note\">The state store could not be used: {}</p>",
            html::escape(&error.to_string())
        ),
    );
    (StatusCode::SERVICE_UNAVAILABLE, Html(body)).into_response()
}

/// Serves the page until Ctrl-C or SIGTERM. Prints the page's address (with its token) as the
/// first line on stdout, which only the person's terminal sees.
pub async fn run(options: Options) -> crate::Result<()> {
    let store = match options.store.clone() {
        Some(store) => store,
        None => crate::state::open(&options.state_dir)?,
    };
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, options.port))
        .await
        .doing(|| format!("cannot listen on 127.0.0.1:{}", options.port))?;
    let port = listener.local_addr()?.port();
    let secrets =
        Arc::new(Secrets::new(port).doing(|| "no randomness for the page's token".to_owned())?);
    let url = format!("http://127.0.0.1:{port}/{}/", secrets.token);
    {
        use std::io::Write as _;
        let mut stdout = std::io::stdout();
        writeln!(stdout, "{url}")?;
        stdout.flush()?;
    }
    // Kept until the page stops, when its file (if any) goes with it.
    let _opened = if options.open {
        open_browser(&url, port, &secrets)
    } else {
        None
    };
    let (publish, snapshot) = watch::channel(Snapshot::default());
    let models = Arc::new(RwLock::new(HashMap::new()));
    tokio::spawn(poll_questions(store.clone(), models.clone(), publish));
    tokio::spawn(poll_models(models.clone()));
    let state = AppState {
        store,
        secrets,
        snapshot,
        models,
        state_dir: options.state_dir,
        shared: options.shared,
        offset: options.offset,
    };
    let app = router(state);
    tracing::info!(%port, "serving the person's page");
    // On Linux only the person's own user's connections are served. axum's `TapIo` (here a
    // no-op tap) is how a listener of our own gives handlers the peer's `SocketAddr`.
    #[cfg(target_os = "linux")]
    let listener = {
        use axum::serve::ListenerExt as _;
        peer::OwnersOnly::new(listener).tap_io(|_| {})
    };
    tokio::select! {
        served = axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>()) => {
            served.doing(|| "the page's server stopped".to_owned())?;
        }
        // Open event streams would hold a graceful shutdown forever; the page keeps nothing
        // that needs one (every store write is its own committed transaction).
        () = crate::stop_signal() => {}
    }
    Ok(())
}

/// The routes, behind the guard.
fn router(state: AppState) -> Router {
    let t = state.secrets.token.clone();
    let secrets = state.secrets.clone();
    let home = format!("/{t}/");
    Router::new()
        .route(&format!("/{t}/"), get(questions))
        .route(&format!("/{t}/events"), get(events))
        .route(&format!("/{t}/answer"), post(answer))
        .route(&format!("/{t}/rules"), get(rules))
        .route(&format!("/{t}/revoke"), post(revoke))
        .route(&format!("/{t}/mask"), post(mask))
        .route(&format!("/{t}/history"), get(history))
        .route(&format!("/{t}/phones"), get(phones))
        .route(
            &format!("/{t}/page.js"),
            get(|| asset("text/javascript", PAGE_JS)),
        )
        .route(
            &format!("/{t}/page.css"),
            get(|| asset("text/css", PAGE_CSS)),
        )
        .route(
            &format!("/{t}/icon.svg"),
            get(|| asset("image/svg+xml", ICON_SVG)),
        )
        .route(
            &format!("/{t}"),
            get(move || async move { Redirect::to(&home) }),
        )
        .route(&format!("{}{{code}}", guard::OPEN_PREFIX), get(open_code))
        .with_state(state)
        .layer(axum::middleware::from_fn_with_state(secrets, guard::guard))
}

async fn asset(content_type: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type)], body).into_response()
}

/// Exchanges a one-time code from `--open` for the page's address (a redirect); a code used
/// already, expired or unknown gets 403 and the way in that is left.
async fn open_code(
    State(state): State<AppState>,
    axum::extract::Path(code): axum::extract::Path<String>,
) -> Response {
    if state
        .secrets
        .open_codes
        .redeem(&code, std::time::Instant::now())
    {
        return Redirect::to(&format!("/{}/", state.secrets.token)).into_response();
    }
    (
        StatusCode::FORBIDDEN,
        "This link to the phonelogs page was used already or has expired: open the address `phonelogs ui` printed.\n",
    )
        .into_response()
}

/// Opens the page in the person's browser without its token on any command line (every user
/// of this computer can read those, in `/proc/*/cmdline`). On Linux `xdg-open` is given the
/// page's address with a one-time code instead of the token ([`guard::OpenCodes`]): the page
/// serves the person's own user's connections only, so another user who reads the code cannot
/// use it, and a browser that may not read the person's files (a snap's Firefox or Chromium,
/// Ubuntu's default, cannot read `/tmp` or `$XDG_RUNTIME_DIR`) still opens it. Elsewhere
/// (macOS, where no such check guards the page) `open` is given a file readable by the person
/// only that sends the browser on, as Jupyter opens its notebooks; it is returned, and removed
/// when dropped. A failure is reported, and the page still serves at the address printed.
fn open_browser(url: &str, port: u16, secrets: &guard::Secrets) -> Option<OpenFile> {
    let (target, file) = if cfg!(target_os = "linux") {
        match secrets.open_codes.issue(std::time::Instant::now()) {
            Ok(code) => (
                format!("http://127.0.0.1:{port}{}{code}", guard::OPEN_PREFIX),
                None,
            ),
            Err(error) => {
                tracing::warn!(%error, "no randomness for a code that opens the page; open the address above");
                return None;
            }
        }
    } else {
        match OpenFile::new(url) {
            Ok(file) => (file.path.display().to_string(), Some(file)),
            Err(error) => {
                tracing::warn!(%error, "could not write the file that opens the page; open the address above");
                return None;
            }
        }
    };
    let program = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    if let Err(error) = std::process::Command::new(program)
        .arg(&target)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
    {
        tracing::warn!(%error, program, "could not open the browser; open the address above");
    }
    file
}

/// A page that sends the browser on to `url`, in a new directory only the person may enter
/// (0700) as a file only they may read (0600): under `$XDG_RUNTIME_DIR` (the person's own,
/// 0700 by its specification) when set, else the temporary directory. Removed when dropped.
struct OpenFile {
    dir: PathBuf,
    path: PathBuf,
}

impl OpenFile {
    fn new(url: &str) -> std::io::Result<OpenFile> {
        use std::io::Write as _;
        let base = std::env::var_os("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .filter(|dir| dir.is_absolute() && dir.is_dir())
            .unwrap_or_else(std::env::temp_dir);
        let mut tag = [0u8; 8];
        getrandom::fill(&mut tag).map_err(std::io::Error::other)?;
        let tag: String = tag.iter().map(|b| format!("{b:02x}")).collect();
        let dir = base.join(format!("phonelogs-ui-{tag}"));
        let mut builder = std::fs::DirBuilder::new();
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
            builder.mode(0o700);
            options.mode(0o600);
        }
        builder.create(&dir)?;
        let path = dir.join("open-phonelogs.html");
        let file = OpenFile { dir, path };
        // The address is the page's own: digits and a hex token, nothing to escape.
        let page = format!(
            "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><meta http-equiv=\"refresh\" content=\"0;url={url}\"><title>phonelogs</title></head>\n<body><p><a href=\"{url}\">Open the phonelogs page</a></p></body></html>\n"
        );
        options.open(&file.path)?.write_all(page.as_bytes())?;
        Ok(file)
    }
}

impl Drop for OpenFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Publishes the pending questions whenever they (or the phones' models) change.
async fn poll_questions(
    store: Store,
    models: Arc<RwLock<HashMap<String, String>>>,
    publish: watch::Sender<Snapshot>,
) {
    loop {
        let reader = store.clone();
        match tokio::task::spawn_blocking(move || reader.pending_approvals()).await {
            Ok(Ok(pending)) => {
                let models = models.read().map(|m| m.clone()).unwrap_or_default();
                let next = Snapshot { pending, models };
                publish.send_if_modified(|current| {
                    let changed = *current != next;
                    if changed {
                        *current = next;
                    }
                    changed
                });
            }
            Ok(Err(error)) => tracing::warn!(%error, "could not read the pending questions"),
            Err(error) => tracing::error!(%error, "reading the pending questions panicked"),
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Keeps the phones' models (Android and iPhone, as the drivers list them) for the questions'
/// "Phone" line. It never starts an adb server: the page only looks.
async fn poll_models(models: Arc<RwLock<HashMap<String, String>>>) {
    use phonelogs_driver::AppLogger;
    let android = phonelogs_android::AdbPhone::new(phonelogs_android::AdbConfig {
        start_server: false,
        connect_timeout: Duration::from_secs(1),
        ..phonelogs_android::AdbConfig::from_env()
    });
    let ios =
        phonelogs_ios::LockdownPhone::new(Arc::new(phonelogs_ios::UsbmuxdBackend::from_env()));
    loop {
        let mut found = HashMap::new();
        for (listed, source) in [
            (android.devices().await, android.source()),
            (ios.devices().await, ios.source()),
        ] {
            for device in listed.into_iter().flatten() {
                if let Some(model) = device.model {
                    // Under both names a question may carry: bare, and with its source.
                    if let Some(source) = &source {
                        found.insert(format!("{source}/{}", device.id), model.clone());
                    }
                    found.insert(device.id.to_string(), model);
                }
            }
        }
        if let Ok(mut models) = models.write() {
            *models = found;
        }
        tokio::time::sleep(MODELS_EVERY).await;
    }
}

#[derive(Debug, serde::Deserialize)]
struct QuestionsQuery {
    #[serde(default)]
    note: Option<String>,
}

async fn questions(State(state): State<AppState>, Query(query): Query<QuestionsQuery>) -> Response {
    let pending = match state.with_store(|s| s.pending_approvals()).await {
        Ok(pending) => pending,
        Err(response) => return response,
    };
    let list = html::questions(
        &pending,
        &state.models(),
        &state.secrets.csrf,
        &state.clock(),
    );
    let note = match query.note.as_deref() {
        Some("gone") => Some("That question was already answered elsewhere, or its task ended."),
        Some("answered") => Some("Answered."),
        _ => None,
    };
    let title = match pending.len() {
        0 => "Questions".to_owned(),
        n => format!("({n}) Questions"),
    };
    Html(html::layout(
        View::Questions,
        &title,
        &html::questions_page(&list, note),
    ))
    .into_response()
}

/// The pending questions as server-sent events: the list's HTML now, and again at each change.
async fn events(State(state): State<AppState>) -> impl IntoResponse {
    let stream = futures_util::stream::unfold((state, true), |(mut state, first)| async move {
        if !first && state.snapshot.changed().await.is_err() {
            return None;
        }
        let snapshot = state.snapshot.borrow_and_update().clone();
        let list = html::questions(
            &snapshot.pending,
            &snapshot.models,
            &state.secrets.csrf,
            &state.clock(),
        );
        let event = Event::default().event("questions").data(list);
        Some((Ok::<_, std::convert::Infallible>(event), (state, false)))
    });
    Sse::new(stream).keep_alive(KeepAlive::default())
}

#[derive(Debug, serde::Deserialize)]
struct AnswerForm {
    #[serde(default)]
    csrf: Option<String>,
    id: String,
    answer: String,
}

fn csrf_refused() -> Response {
    tracing::info!("refused a form without this page's CSRF token");
    (
        StatusCode::FORBIDDEN,
        "Forbidden: the form lacks the page's CSRF token.\n",
    )
        .into_response()
}

async fn answer(State(state): State<AppState>, Form(form): Form<AnswerForm>) -> Response {
    if !state.secrets.csrf_ok(form.csrf.as_deref()) {
        return csrf_refused();
    }
    let Some(answer) = Answer::parse(&form.answer) else {
        return (StatusCode::BAD_REQUEST, "Not an answer.\n").into_response();
    };
    let id = form.id;
    let store = state.store.clone();
    let answered =
        tokio::task::spawn_blocking(move || store.answer_via(&id, answer, AnsweredVia::Page)).await;
    match answered {
        Ok(Ok(())) => Redirect::to("./?note=answered").into_response(),
        Ok(Err(
            StoreError::AlreadyAnswered(_)
            | StoreError::ApprovalExpired(_)
            | StoreError::UnknownApproval(_),
        )) => Redirect::to("./?note=gone").into_response(),
        Ok(Err(error)) => store_failed(&error),
        Err(_) => (StatusCode::INTERNAL_SERVER_ERROR, "The answer failed.\n").into_response(),
    }
}

async fn rules(State(state): State<AppState>) -> Response {
    let found = state
        .with_store(|s| Ok((s.rules()?, s.blocked_apps()?, s.unmasked_apps()?)))
        .await;
    let (rules, blocked, unmasked) = match found {
        Ok(found) => found,
        Err(response) => return response,
    };
    let blocked: Vec<String> = blocked.iter().map(ToString::to_string).collect();
    let unmasked: Vec<(String, String)> = unmasked
        .into_iter()
        .map(|(app, since)| (app.to_string(), since))
        .collect();
    let body = html::rules_page(
        &rules,
        &blocked,
        &unmasked,
        &state.models(),
        &state.secrets.csrf,
        &state.clock(),
    );
    Html(html::layout(View::Rules, "Always allow", &body)).into_response()
}

#[derive(Debug, serde::Deserialize)]
struct RevokeForm {
    #[serde(default)]
    csrf: Option<String>,
    id: String,
}

async fn revoke(State(state): State<AppState>, Form(form): Form<RevokeForm>) -> Response {
    if !state.secrets.csrf_ok(form.csrf.as_deref()) {
        return csrf_refused();
    }
    let id = form.id;
    match state.with_store(move |s| s.revoke_rule(&id)).await {
        // A rule revoked twice (two tabs) is gone either way.
        Ok(()) | Err(_) => Redirect::to("rules").into_response(),
    }
}

#[derive(Debug, serde::Deserialize)]
struct MaskForm {
    #[serde(default)]
    csrf: Option<String>,
    app: String,
}

/// Mask again: the person turns the masking of an app's secrets back on (the history records
/// it as done on the page).
async fn mask(State(state): State<AppState>, Form(form): Form<MaskForm>) -> Response {
    if !state.secrets.csrf_ok(form.csrf.as_deref()) {
        return csrf_refused();
    }
    let Ok(app) = phonelogs_driver::AppId::parse(&form.app) else {
        return Redirect::to("rules").into_response();
    };
    match state
        .with_store(move |s| s.mask_app(&app, phonelogs_gateway::AnsweredVia::Page))
        .await
    {
        // Masked twice (two tabs): it is masked either way.
        Ok(()) | Err(_) => Redirect::to("rules").into_response(),
    }
}

async fn history(
    State(state): State<AppState>,
    Query(query): Query<html::HistoryQuery>,
) -> Response {
    let some = |text: &str| (!text.trim().is_empty()).then(|| text.trim().to_owned());
    let filter = HistoryFilter {
        app: some(&query.app),
        agent: some(&query.agent),
        device: some(&query.device),
        status: html::status_filter(&query.status),
        limit: Some(HISTORY_SHOWN),
        ..HistoryFilter::default()
    };
    let found = state
        .with_store(move |s| {
            let all = s.history(HistoryFilter {
                limit: Some(HISTORY_CHOICES),
                ..HistoryFilter::default()
            })?;
            Ok((all, s.history(filter)?))
        })
        .await;
    let (all, shown) = match found {
        Ok(found) => found,
        Err(response) => return response,
    };
    let body = html::history_page(&query, &all, &shown, &state.clock());
    Html(html::layout(View::History, "History", &body)).into_response()
}

async fn phones(State(state): State<AppState>) -> Response {
    let findings =
        crate::doctor::findings(Some(state.state_dir.clone()), state.shared.clone()).await;
    Html(html::layout(
        View::Phones,
        "Phones",
        &html::phones_page(&findings),
    ))
    .into_response()
}

#[cfg(test)]
mod tests;
