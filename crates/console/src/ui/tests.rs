//! The page's guards, request by request through the real router: the token, the Host and
//! Origin checks, the CSRF token, a peer that is not loopback, and the security headers. The
//! peer address is set on each request as the server sets it, which a test over a socket could
//! not do for a non-loopback address (the page binds 127.0.0.1 only).

// Test helpers unwrap: a failure there is a failing test.
#![allow(clippy::unwrap_used)]

use std::net::SocketAddr;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, StatusCode, header};
use tower::ServiceExt as _;

use super::*;

const PORT: u16 = 4321;

struct Page {
    router: Router,
    secrets: Arc<Secrets>,
    token: String,
    csrf: String,
    store: Store,
    _dir: tempfile::TempDir,
}

fn page() -> Page {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let secrets = Arc::new(Secrets::new(PORT).unwrap());
    let (_publish, snapshot) = watch::channel(Snapshot::default());
    let state = AppState {
        store: store.clone(),
        secrets: secrets.clone(),
        snapshot,
        models: Arc::default(),
        state_dir: dir.path().to_owned(),
        shared: crate::doctor::SharedStore::default(),
        offset: UtcOffset::UTC,
    };
    Page {
        router: router(state),
        secrets: secrets.clone(),
        token: secrets.token.clone(),
        csrf: secrets.csrf.clone(),
        store,
        _dir: dir,
    }
}

fn loopback() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 50000))
}

fn get(path: &str) -> axum::http::request::Builder {
    Request::get(path).header(header::HOST, format!("127.0.0.1:{PORT}"))
}

fn post(path: &str) -> axum::http::request::Builder {
    Request::post(path)
        .header(header::HOST, format!("127.0.0.1:{PORT}"))
        .header(header::ORIGIN, format!("http://127.0.0.1:{PORT}"))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
}

async fn send(
    page: &Page,
    request: axum::http::request::Builder,
    body: &str,
    peer: SocketAddr,
) -> (StatusCode, axum::http::HeaderMap, String) {
    let mut request = request.body(Body::from(body.to_owned())).unwrap();
    request.extensions_mut().insert(ConnectInfo(peer));
    let response = page.router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    (
        status,
        headers,
        String::from_utf8_lossy(&bytes).into_owned(),
    )
}

#[tokio::test]
async fn the_page_with_its_token_is_served_with_a_strict_policy() {
    let page = page();
    let (status, headers, body) =
        send(&page, get(&format!("/{}/", page.token)), "", loopback()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.contains("Questions from agents"), "{body}");
    assert_eq!(headers[header::CONTENT_SECURITY_POLICY], CSP);
    assert!(CSP.contains("default-src 'none'") && CSP.contains("script-src 'self'"));
    assert!(!CSP.contains("unsafe-inline") && !CSP.contains("http"));
    assert_eq!(headers[header::X_FRAME_OPTIONS], "DENY");
    assert_eq!(headers[header::REFERRER_POLICY], "same-origin");
    // Nothing on the page comes from another host.
    assert!(
        !body.contains("http://") && !body.contains("https://") && !body.contains("//"),
        "{body}"
    );
    for asset in ["page.js", "page.css", "icon.svg"] {
        let (status, _, _) = send(
            &page,
            get(&format!("/{}/{asset}", page.token)),
            "",
            loopback(),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{asset}");
    }
}

#[tokio::test]
async fn a_request_without_the_token_or_with_a_wrong_one_is_forbidden() {
    let page = page();
    let wrong = "0".repeat(page.token.len());
    let short = &page.token[..page.token.len() - 1];
    for path in [
        "/".to_owned(),
        "/rules".to_owned(),
        "/favicon.ico".to_owned(),
        format!("/{wrong}/"),
        format!("/{short}/"),
        format!("/{}x/", page.token),
        format!("/x/{}/", page.token),
        format!("/?token={}", page.token),
    ] {
        let (status, headers, _) = send(&page, get(&path), "", loopback()).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{path}");
        // Refusals carry the policy too.
        assert_eq!(headers[header::CONTENT_SECURITY_POLICY], CSP, "{path}");
    }
    // A POST without the token is refused before its form is read.
    let body = format!("csrf={}&id=x&answer=task", page.csrf);
    let (status, _, _) = send(&page, post("/answer"), &body, loopback()).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn a_request_from_another_computer_is_forbidden() {
    let page = page();
    for peer in ["192.168.1.20:50000", "10.0.0.2:1", "[2001:db8::1]:443"] {
        let peer: SocketAddr = peer.parse().unwrap();
        let (status, _, _) = send(&page, get(&format!("/{}/", page.token)), "", peer).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{peer}");
    }
    // IPv6 loopback is this computer too (the page binds 127.0.0.1 only, so it never arrives).
    let v6: SocketAddr = "[::1]:50000".parse().unwrap();
    let (status, _, _) = send(&page, get(&format!("/{}/", page.token)), "", v6).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn a_request_naming_another_host_is_forbidden() {
    let page = page();
    for host in [
        "evil.example:4321".to_owned(),
        format!("127.0.0.1:{}", PORT + 1),
        "127.0.0.1".to_owned(),
        "0.0.0.0:4321".to_owned(),
    ] {
        let request = Request::get(format!("/{}/", page.token)).header(header::HOST, host.clone());
        let (status, _, _) = send(&page, request, "", loopback()).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{host}");
    }
    let request =
        Request::get(format!("/{}/", page.token)).header(header::HOST, format!("localhost:{PORT}"));
    let (status, _, _) = send(&page, request, "", loopback()).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn a_cross_origin_post_or_one_without_the_csrf_token_changes_nothing() {
    let page = page();
    let path = format!("/{}/revoke", page.token);
    let body = format!("csrf={}&id=rule-x", page.csrf);
    let cross = |origin: &str| {
        Request::post(&path)
            .header(header::HOST, format!("127.0.0.1:{PORT}"))
            .header(header::ORIGIN, origin)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
    };
    for origin in [
        "http://evil.example",
        "null",
        "http://127.0.0.1:9999",
        "https://127.0.0.1:4321",
    ] {
        let (status, _, _) = send(&page, cross(origin), &body, loopback()).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{origin}");
    }
    // No Origin at all, and a browser saying the request came from another site.
    let no_origin = Request::post(&path)
        .header(header::HOST, format!("127.0.0.1:{PORT}"))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
    let (status, _, _) = send(&page, no_origin, &body, loopback()).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _, _) = send(
        &page,
        post(&path).header("sec-fetch-site", "cross-site"),
        &body,
        loopback(),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    // Same origin, but without the CSRF token or with a wrong one.
    for body in [
        "id=rule-x".to_owned(),
        "csrf=&id=rule-x".to_owned(),
        format!("csrf={}&id=rule-x", page.token),
    ] {
        let (status, _, text) = send(&page, post(&path), &body, loopback()).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}: {text}");
        assert!(text.contains("CSRF"), "{text}");
    }
    // GET never changes anything: the answer route is POST only.
    let (status, _, _) = send(
        &page,
        get(&format!(
            "/{}/answer?csrf={}&id=x&answer=task",
            page.token, page.csrf
        )),
        "",
        loopback(),
    )
    .await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    // Other methods are refused outright.
    let put = Request::put(&path)
        .header(header::HOST, format!("127.0.0.1:{PORT}"))
        .header(header::ORIGIN, format!("http://127.0.0.1:{PORT}"));
    let (status, _, _) = send(&page, put, &body, loopback()).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    // The same POST with the token, the origin and the CSRF token goes through (the rule is
    // unknown, so the page just shows the rules again).
    let (status, headers, _) = send(
        &page,
        post(&path).header("sec-fetch-site", "same-origin"),
        &body,
        loopback(),
    )
    .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(headers[header::LOCATION], "rules");
}

#[tokio::test]
async fn an_answer_for_a_question_already_gone_says_so() {
    let page = page();
    let body = format!("csrf={}&id=ap-unknown&answer=task", page.csrf);
    let (status, headers, _) = send(
        &page,
        post(&format!("/{}/answer", page.token)),
        &body,
        loopback(),
    )
    .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(headers[header::LOCATION], "./?note=gone");
    assert!(page.store.pending_approvals().unwrap().is_empty());
}

#[test]
fn secrets_are_long_random_and_compared_whole() {
    let a = Secrets::new(1).unwrap();
    let b = Secrets::new(1).unwrap();
    assert_eq!(a.token.len(), 64);
    assert_ne!(a.token, b.token);
    assert_ne!(a.token, a.csrf);
    assert!(same(&a.token, &a.token.clone()));
    assert!(!same(&a.token[..63], &a.token));
    assert!(!same("", &a.token));
    assert!(!a.csrf_ok(None));
    assert!(a.csrf_ok(Some(&a.csrf)));
}

#[tokio::test]
async fn an_unmasked_app_is_listed_and_mask_again_masks_it_only_with_the_csrf_token() {
    let page = page();
    let app = phonelogs_driver::AppId::new("dev.example.debug");
    page.store
        .unmask_app(&app, phonelogs_gateway::AnsweredVia::CommandLine)
        .unwrap();
    let (status, _, text) = send(
        &page,
        get(&format!("/{}/rules", page.token)),
        "",
        loopback(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        text.contains("Secrets shown unmasked") && text.contains("dev.example.debug"),
        "{text}"
    );
    assert!(text.contains("Mask again"), "{text}");
    let path = format!("/{}/mask", page.token);
    // Without the CSRF token nothing changes.
    let (status, _, _) = send(&page, post(&path), "app=dev.example.debug", loopback()).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(page.store.unmasked_apps().unwrap().len(), 1);
    let body = format!("csrf={}&app=dev.example.debug", page.csrf);
    let (status, _, _) = send(&page, post(&path), &body, loopback()).await;
    assert!(status.is_redirection(), "{status}");
    assert!(page.store.unmasked_apps().unwrap().is_empty());
    let steps = page
        .store
        .history(phonelogs_gateway::HistoryFilter::default())
        .unwrap();
    assert!(
        steps.last().is_some_and(|s| s
            .step
            .contains("back on for dev.example.debug (on your page)")),
        "{steps:?}"
    );
}

/// Review of h28a, finding 3: `--open` on Linux hands the browser `/open/<code>`, never the
/// token; the code is exchanged once for the page's address (a redirect), and then, or from
/// another computer, another host name, or as a POST, it opens nothing.
#[tokio::test]
async fn a_one_time_code_opens_the_page_once() {
    let page = page();
    let now = std::time::Instant::now();
    let code = page.secrets.open_codes.issue(now).unwrap();
    assert!(code.len() >= 64 && !code.contains(&page.token));
    let path = format!("{}{code}", guard::OPEN_PREFIX);
    let far = SocketAddr::from(([192, 168, 1, 5], 50000));
    let (status, _, _) = send(&page, get(&path), "", far).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "from another computer");
    let other_host = Request::get(&path).header(header::HOST, "evil.example:4321");
    let (status, _, _) = send(&page, other_host, "", loopback()).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "another host name");
    let (status, _, _) = send(&page, post(&path), "", loopback()).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "a POST");
    let (status, headers, _) = send(&page, get(&path), "", loopback()).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(headers[header::LOCATION], format!("/{}/", page.token));
    assert_eq!(headers[header::CONTENT_SECURITY_POLICY], CSP);
    let (status, _, body) = send(&page, get(&path), "", loopback()).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "used twice");
    assert!(body.contains("used already or has expired"), "{body}");
    assert!(!body.contains(&page.token));
    let wrong = format!("{}{}", guard::OPEN_PREFIX, "0".repeat(code.len()));
    let (status, _, _) = send(&page, get(&wrong), "", loopback()).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "a code never made");
}

/// A code is good for `OPEN_CODE_LIFETIME` only, and an expired one is gone for good.
#[test]
fn a_one_time_code_expires() {
    let codes = guard::OpenCodes::default();
    let start = std::time::Instant::now();
    let late = codes.issue(start).unwrap();
    let on_time = codes.issue(start).unwrap();
    assert!(codes.redeem(&on_time, start + guard::OPEN_CODE_LIFETIME / 2));
    let after = start + guard::OPEN_CODE_LIFETIME + std::time::Duration::from_secs(1);
    assert!(!codes.redeem(&late, after));
    let again = codes.issue(after).unwrap();
    assert!(!codes.redeem(&late, after), "an expired code is gone");
    assert!(codes.redeem(&again, after + std::time::Duration::from_secs(1)));
}

/// Where no uid check guards the page (macOS), `--open` hands the browser a file instead: a
/// page readable by the person only, in a directory only they may enter, removed when dropped.
#[cfg(unix)]
#[test]
fn the_file_that_opens_the_page_elsewhere_is_the_persons_alone_and_goes_when_dropped() {
    use std::os::unix::fs::PermissionsExt as _;
    let url = "http://127.0.0.1:4321/0123abcd/";
    let file = OpenFile::new(url).unwrap();
    let mode =
        |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&file.path), 0o600);
    assert_eq!(mode(&file.dir), 0o700);
    assert!(std::fs::read_to_string(&file.path).unwrap().contains(url));
    let (path, dir) = (file.path.clone(), file.dir.clone());
    drop(file);
    assert!(!path.exists() && !dir.exists());
}
