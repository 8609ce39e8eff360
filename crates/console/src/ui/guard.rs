//! Who may reach the person's page, and what a request that changes something must carry.
//!
//! The page answers the agents' questions, so it must be the person's alone. Every request must
//! come from a loopback address (the server binds 127.0.0.1 only; the check is there too so that
//! a change of the bind address cannot open it), name the page's own host and port in `Host`
//! (a DNS-rebinding page on another name is refused), and carry the random token made at start as
//! the first segment of its path. Anything else gets 403 before any route runs. A request that
//! changes state must also be a POST whose `Origin` is the page's own and, where the browser says
//! so, `Sec-Fetch-Site: same-origin`; its form carries the CSRF token, which the handler checks
//! ([`Secrets::csrf_ok`]). Every response, refusals included, carries a strict
//! Content-Security-Policy: scripts, styles and images from the page itself, nothing else.
//!
//! One address carries no token: `/open/<code>`, where a one-time code ([`OpenCodes`]) that
//! `--open` put on the browser's command line is exchanged once, within
//! [`OPEN_CODE_LIFETIME`], for a redirect to the page's own address.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The Content-Security-Policy of every response: nothing from another host, no inline script
/// or style, no framing, forms post only to the page.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
     connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// The secrets of one run of the page, made at start and never written anywhere but stdout (the
/// URL) and the page itself (the CSRF token in its forms).
#[derive(Debug)]
pub struct Secrets {
    /// The token every URL carries as its first path segment.
    pub token: String,
    /// The token every state-changing form carries.
    pub csrf: String,
    /// The port the page listens on, for the `Host` and `Origin` checks.
    pub port: u16,
    /// The one-time codes `--open` handed the browser.
    pub open_codes: OpenCodes,
}

impl Secrets {
    /// New random tokens for a page on `port`.
    pub fn new(port: u16) -> Result<Secrets, getrandom::Error> {
        Ok(Secrets {
            token: random_hex()?,
            csrf: random_hex()?,
            port,
            open_codes: OpenCodes::default(),
        })
    }

    /// Whether a form's CSRF token is this run's.
    pub fn csrf_ok(&self, given: Option<&str>) -> bool {
        given.is_some_and(|given| same(given, &self.csrf))
    }

    /// The page's own origin for a request that named `host` (already checked).
    fn origin_for(host: &str) -> String {
        format!("http://{host}")
    }

    fn host_ok(&self, host: &str) -> bool {
        host == format!("127.0.0.1:{}", self.port) || host == format!("localhost:{}", self.port)
    }

    /// Whether the path starts with `/<token>`, followed by `/` or nothing.
    fn token_ok(&self, path: &str) -> bool {
        let rest = path.strip_prefix('/').unwrap_or(path);
        let first = rest.split('/').next().unwrap_or_default();
        same(first, &self.token)
    }
}

/// The path under which a one-time code is exchanged for the page's address.
pub const OPEN_PREFIX: &str = "/open/";

/// How long a one-time code may wait to be used: long enough for a browser's first start (a
/// snap's takes seconds), short enough that a code seen later is worth nothing.
pub const OPEN_CODE_LIFETIME: Duration = Duration::from_secs(120);

/// The one-time codes that open the page: each made for one `xdg-open`, good once, and only
/// within [`OPEN_CODE_LIFETIME`]. A code on a command line can be read by every user of the
/// computer (`/proc/*/cmdline`), so one is handed out only where the page serves the
/// person's own user's connections alone (Linux, `peer::OwnersOnly`): another user who reads
/// it cannot connect to use it.
#[derive(Debug, Default)]
pub struct OpenCodes {
    live: Mutex<Vec<(String, Instant)>>,
}

impl OpenCodes {
    /// A new code, good until `now` + [`OPEN_CODE_LIFETIME`].
    pub fn issue(&self, now: Instant) -> Result<String, getrandom::Error> {
        let code = random_hex()?;
        let mut live = self
            .live
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        live.retain(|(_, until)| *until > now);
        live.push((code.clone(), now + OPEN_CODE_LIFETIME));
        Ok(code)
    }

    /// Whether `given` is a live code; it is used up either way.
    pub fn redeem(&self, given: &str, now: Instant) -> bool {
        let mut live = self
            .live
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let found = live.iter().position(|(code, _)| same(given, code));
        let good = found.is_some_and(|at| live[at].1 > now);
        if let Some(at) = found {
            live.swap_remove(at);
        }
        live.retain(|(_, until)| *until > now);
        good
    }
}

/// 32 random bytes from the operating system, as hex.
fn random_hex() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Compares two secrets in time that depends on their lengths only, so that the time a refusal
/// takes tells nothing about how much of a guess was right. Hand-written because it is four
/// lines and the graph has no constant-time crate to reuse.
pub fn same(given: &str, secret: &str) -> bool {
    let (a, b) = (given.as_bytes(), secret.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn refuse(why: &'static str) -> Response {
    tracing::info!(why, "refused a request to the page");
    (StatusCode::FORBIDDEN, format!("Forbidden: {why}.\n")).into_response()
}

/// Why a request may not reach the page, or `None` when it may.
fn refusal(
    secrets: &Secrets,
    peer: Option<SocketAddr>,
    method: &Method,
    path: &str,
    headers: &HeaderMap,
) -> Option<&'static str> {
    if !peer.is_some_and(|peer| peer.ip().is_loopback()) {
        return Some("the page answers this computer only");
    }
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    let Some(host) = host.filter(|host| secrets.host_ok(host)) else {
        return Some("the page answers its own address only");
    };
    let opening = method == Method::GET && path.starts_with(OPEN_PREFIX);
    if !opening && !secrets.token_ok(path) {
        return Some("the address lacks the page's token");
    }
    if method == Method::GET || method == Method::HEAD {
        return None;
    }
    if method != Method::POST {
        return Some("only GET and POST are served");
    }
    let origin = headers.get(header::ORIGIN).and_then(|h| h.to_str().ok());
    if origin != Some(Secrets::origin_for(host).as_str()) {
        return Some("a change must come from the page itself");
    }
    let site = headers.get("sec-fetch-site").and_then(|h| h.to_str().ok());
    if site.is_some_and(|site| site != "same-origin") {
        return Some("a change must come from the page itself");
    }
    None
}

/// The middleware in front of every route: refuses what [`refusal`] names and sets the
/// security headers on every response.
pub async fn guard(State(secrets): State<Arc<Secrets>>, request: Request, next: Next) -> Response {
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|info| info.0);
    let why = refusal(
        &secrets,
        peer,
        request.method(),
        request.uri().path(),
        request.headers(),
    );
    let mut response = match why {
        Some(why) => refuse(why),
        None => next.run(request).await,
    };
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_SECURITY_POLICY, CSP),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        // Not `no-referrer`: with it a browser sends `Origin: null` on the page's own form
        // posts, which the Origin check must refuse. `same-origin` still never lets the
        // address (and its token) leave the page.
        (header::REFERRER_POLICY, "same-origin"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::CACHE_CONTROL, "no-store"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    headers.insert(
        "cross-origin-opener-policy",
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(
        "cross-origin-resource-policy",
        HeaderValue::from_static("same-origin"),
    );
    response
}
