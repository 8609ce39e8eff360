//! `phonelogs logs APP`: the person's own view of one app's lines, under the same rules and
//! refused lists as an agent's (the person is not asked: they are the one reading), recorded
//! in the history as the person's read. `--follow` prints new lines until Ctrl-C, with the same
//! cursor and wait an agent uses (`since: "last"`, `wait_for`), one wait after another.

use std::path::PathBuf;
use std::sync::Arc;

use phonelogs_driver::AppLogger;
use phonelogs_gateway::{CancellationToken, Gateway, LiveHooks, LogsRequest, Session, Status};

use phonelogs_phones::PhoneSources;

/// How long one wait of `--follow` lasts before the next begins.
const FOLLOW_WAIT_SECONDS: u32 = 60;

/// What `phonelogs logs` was asked.
#[derive(Debug, Clone)]
pub struct Request {
    /// The app's package name or bundle id.
    pub app: String,
    /// The phone, when more than one is connected.
    pub device: Option<String>,
    /// Print new lines until Ctrl-C.
    pub follow: bool,
    /// Where to start: a time, a duration back, as `phone_logs` takes it.
    pub since: Option<String>,
    /// Only lines of this level or more severe.
    pub level: Option<String>,
}

/// Builds the gateway over the phones the flags name, with the person's state.
fn gateway(
    phones: &PhoneSources,
    state_dir: PathBuf,
    offset: time::UtcOffset,
) -> crate::Result<Gateway> {
    let phones = phones.phones()?;
    let mut builder = Gateway::builder().state_dir(state_dir).local_offset(offset);
    for android in phones.android {
        builder = builder.driver(android as Arc<dyn AppLogger>);
    }
    for ios in phones.ios {
        builder = builder.driver(ios as Arc<dyn AppLogger>);
    }
    Ok(builder.build()?)
}

/// Runs `phonelogs logs`.
pub async fn run(
    request: Request,
    phones: PhoneSources,
    state_dir: PathBuf,
    offset: time::UtcOffset,
) -> crate::Result<()> {
    let gateway = gateway(&phones, state_dir, offset)?;
    let session = gateway.start_person_read();
    let result = read(&session, &request).await;
    session.end().await;
    result
}

async fn read(session: &Session, request: &Request) -> crate::Result<()> {
    let first = session
        .logs(LogsRequest {
            device: request.device.clone(),
            since: request.since.clone(),
            level: request.level.clone(),
            ..LogsRequest::new(&request.app)
        })
        .await;
    show(&first)?;
    if !request.follow {
        return Ok(());
    }
    let cancel = CancellationToken::new();
    let on_stop = cancel.clone();
    tokio::spawn(async move {
        crate::stop_signal().await;
        on_stop.cancel();
    });
    let hooks = LiveHooks {
        progress: None,
        cancel: Some(cancel.clone()),
    };
    while !cancel.is_cancelled() {
        // An empty `wait_for` is any new line: each wait returns with the next lines.
        let next = LogsRequest {
            device: request.device.clone(),
            since: Some("last".into()),
            level: request.level.clone(),
            wait_for: Some(String::new()),
            timeout: Some(FOLLOW_WAIT_SECONDS),
            ..LogsRequest::new(&request.app)
        };
        let result = session.logs_live(next, &hooks).await;
        if result.status != Status::Ok {
            return Err(crate::Error::Refused(result.message.clone()));
        }
        print!("{}", result.log);
    }
    Ok(())
}

/// Prints the lines on stdout and the message on stderr; a refusal is an error.
fn show(result: &phonelogs_gateway::LogsResponse) -> crate::Result<()> {
    if result.status != Status::Ok {
        return Err(crate::Error::Refused(result.message.clone()));
    }
    eprintln!("{}", result.message);
    print!("{}", result.log);
    Ok(())
}
