//! Wake-ups for waiting calls: one connection per store that `LISTEN`s on the channel every
//! answer notifies (at its commit), and hands each answered approval's id to the waiting
//! calls. When the connection drops it is opened again, and every waiting call is told to read
//! its approval again (a notification sent while it was down is lost).

use std::future::Future as _;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast;
use tokio_postgres::AsyncMessage;
use tokio_postgres_rustls::MakeRustlsConnect;

/// The channel answers are notified on; the payload is the approval's id.
pub(crate) const CHANNEL: &str = "phonelogs_answers";

/// What waiting calls are told: an approval's id, or [`ANY`] when they should all look again.
pub(crate) type Wakeup = Arc<str>;

/// The wake-up that asks every waiting call to read its approval again.
pub(crate) const ANY: &str = "*";

/// How long the listener waits before opening its connection again.
const RECONNECT: Duration = Duration::from_millis(500);

/// The listener of one store, and the channel its wake-ups go out on.
#[derive(Debug)]
pub(crate) struct Wakeups {
    sender: broadcast::Sender<Wakeup>,
    task: tokio::task::JoinHandle<()>,
}

impl Wakeups {
    /// Starts listening on the current runtime.
    pub(crate) fn start(config: tokio_postgres::Config, tls: MakeRustlsConnect) -> Wakeups {
        let (sender, _) = broadcast::channel(1024);
        let task = tokio::spawn(listen(config, tls, sender.clone()));
        Wakeups { sender, task }
    }

    /// A receiver of the wake-ups from now on.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Wakeup> {
        self.sender.subscribe()
    }
}

impl Drop for Wakeups {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Listens for as long as the store lives, connecting again whenever the connection ends.
async fn listen(
    config: tokio_postgres::Config,
    tls: MakeRustlsConnect,
    sender: broadcast::Sender<Wakeup>,
) {
    loop {
        match config.connect(tls.clone()).await {
            Ok((client, mut connection)) => {
                let sql = format!("LISTEN {CHANNEL}");
                let listening = client.batch_execute(&sql);
                let mut listening = std::pin::pin!(listening);
                // The connection is driven while LISTEN runs, then for as long as it lasts.
                let mut started = false;
                loop {
                    let message = std::future::poll_fn(|cx| {
                        if !started
                            && let std::task::Poll::Ready(result) = listening.as_mut().poll(cx)
                        {
                            started = true;
                            if let Err(error) = result {
                                tracing::warn!(%error, "LISTEN failed; waiting calls poll");
                            }
                            // Anything answered before the LISTEN took is read again.
                            let _ = sender.send(Arc::from(ANY));
                        }
                        connection.poll_message(cx)
                    })
                    .await;
                    match message {
                        Some(Ok(AsyncMessage::Notification(note))) => {
                            let _ = sender.send(Arc::from(note.payload()));
                        }
                        Some(Ok(_)) => {}
                        Some(Err(error)) => {
                            tracing::warn!(%error, "the store's listening connection failed");
                            break;
                        }
                        None => break,
                    }
                }
            }
            Err(error) => {
                tracing::debug!(%error, "the store's listening connection cannot be opened");
            }
        }
        let _ = sender.send(Arc::from(ANY));
        tokio::time::sleep(RECONNECT).await;
    }
}
