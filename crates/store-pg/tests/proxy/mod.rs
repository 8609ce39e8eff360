//! A loopback TCP proxy in front of the test's PostgreSQL, for the network faults
//! (`tests/faults.rs`): a store connected through it can have its network **cut** (nothing goes
//! through in either direction, new connections are held: a black hole, as a pulled cable or a
//! dropped route gives, which the kernel on either side does not notice) and **restored**
//! (what was held goes on, as TCP retransmits after a short cut), or have every connection
//! **killed** (both sides closed, as the kernel closes a killed process's sockets).

#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// What the link does now.
#[derive(Clone, Copy, Debug, Default)]
struct Link {
    /// Nothing goes through while this is set.
    cut: bool,
    /// How many times every connection was killed: a connection opened before the last kill
    /// ends.
    kills: u64,
}

/// The proxy: it listens on [`Proxy::port`] and forwards to the server's port.
#[derive(Debug)]
pub struct Proxy {
    pub port: u16,
    link: watch::Sender<Link>,
    // Its own runtime, so that the proxy runs whatever the test's threads are blocked on.
    runtime: Option<tokio::runtime::Runtime>,
}

impl Proxy {
    /// A proxy to `127.0.0.1:upstream`, forwarding.
    pub fn start(upstream: u16) -> Proxy {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("test-proxy")
            .enable_all()
            .build()
            .unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let listener = {
            let _entered = runtime.enter();
            TcpListener::from_std(listener).unwrap()
        };
        let (link, _) = watch::channel(Link::default());
        runtime.spawn(accept(listener, upstream, link.clone()));
        Proxy {
            port,
            link,
            runtime: Some(runtime),
        }
    }

    /// Cuts the network: from now on nothing goes through, and new connections wait.
    pub fn cut(&self) {
        self.link.send_modify(|link| link.cut = true);
    }

    /// Restores it: what was held goes on.
    pub fn restore(&self) {
        self.link.send_modify(|link| link.cut = false);
    }

    /// Closes every connection open now, both sides; later connections go through.
    pub fn kill(&self) {
        self.link.send_modify(|link| link.kills += 1);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

async fn accept(listener: TcpListener, upstream: u16, link: watch::Sender<Link>) {
    while let Ok((client, _)) = listener.accept().await {
        let mut state = link.subscribe();
        tokio::spawn(async move {
            let born = state.borrow().kills;
            // A new connection waits while the link is cut.
            if !through(&mut state, born).await {
                return;
            }
            let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)).await else {
                return;
            };
            let (client_read, client_write) = client.into_split();
            let (server_read, server_write) = server.into_split();
            let up = tokio::spawn(pump(client_read, server_write, state.clone(), born));
            let down = tokio::spawn(pump(server_read, client_write, state, born));
            // Both halves of both sockets are dropped, so both ends see the connection close.
            let _ = tokio::join!(up, down);
        });
    }
}

/// Waits until the link lets data through (`true`), or this connection was killed (`false`).
async fn through(state: &mut watch::Receiver<Link>, born: u64) -> bool {
    loop {
        let link = *state.borrow_and_update();
        if link.kills != born {
            return false;
        }
        if !link.cut {
            return true;
        }
        if state.changed().await.is_err() {
            return false;
        }
    }
}

/// Whether this connection was killed (resolves when it is).
async fn killed(state: &mut watch::Receiver<Link>, born: u64) {
    loop {
        if state.borrow_and_update().kills != born {
            return;
        }
        if state.changed().await.is_err() {
            return;
        }
    }
}

/// Forwards one direction of one connection, holding what it read while the link is cut.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mut state: watch::Receiver<Link>,
    born: u64,
) {
    let mut buffer = vec![0_u8; 64 * 1024];
    loop {
        let mut watching = state.clone();
        let read = tokio::select! {
            read = from.read(&mut buffer) => read,
            () = killed(&mut watching, born) => return,
        };
        let n = match read {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if !through(&mut state, born).await {
            return;
        }
        let mut watching = state.clone();
        tokio::select! {
            written = to.write_all(&buffer[..n]) => if written.is_err() { return },
            () = killed(&mut watching, born) => return,
        }
    }
}
