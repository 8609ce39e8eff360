//! Who opened a connection to the page, on Linux: the page serves the person's own user only.
//!
//! The page listens on 127.0.0.1, which every user of this computer can reach; the token in its
//! address keeps them out while it stays secret. This check keeps them out even when it does
//! not: a connection is served only when the socket at its other end belongs to the user the
//! page runs as ([`OwnersOnly`]).
//!
//! `SO_PEERCRED` names the process at the other end of a Unix socket, not of a TCP one: on a
//! loopback TCP socket Linux answers uid -1 (measured here with `getsockopt`), and a browser
//! cannot speak HTTP over a Unix socket. So the owner is read where identd reads it, from the
//! kernel's socket table (`/proc/net/tcp`, and `/proc/net/tcp6` for a client's IPv6 socket
//! with a v4-mapped address): the row whose local address is the client's and whose remote
//! address is the page's names the uid that owns the client's socket. Written by hand (a few
//! lines of a stable kernel format) rather than taken from `procfs`, whose API is far larger
//! than one lookup.

use std::net::{IpAddr, SocketAddr};

use tokio::net::{TcpListener, TcpStream};

/// The page's listener: accepts like a `TcpListener`, and closes unanswered every connection
/// another user opened (or whose owner cannot be told).
pub struct OwnersOnly {
    inner: TcpListener,
    uid: u32,
}

impl OwnersOnly {
    /// The listener, serving connections of the user this process runs as.
    pub fn new(inner: TcpListener) -> OwnersOnly {
        OwnersOnly {
            inner,
            uid: rustix::process::geteuid().as_raw(),
        }
    }
}

impl axum::serve::Listener for OwnersOnly {
    type Io = TcpStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (TcpStream, SocketAddr) {
        loop {
            let (stream, peer) = axum::serve::Listener::accept(&mut self.inner).await;
            let owner = stream
                .local_addr()
                .and_then(|local| socket_owner(peer, local));
            match owner {
                Ok(Some(uid)) if uid == self.uid => return (stream, peer),
                Ok(Some(uid)) => {
                    tracing::warn!(uid, %peer, "refused a connection another user opened");
                }
                Ok(None) => tracing::warn!(%peer, "refused a connection whose owner is not known"),
                Err(error) => {
                    tracing::warn!(%error, %peer, "cannot read the socket table; refused a connection");
                }
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.inner.local_addr()
    }
}

/// The uid that owns the TCP socket at `client` connected to `server`, from the kernel's socket
/// table; `None` when no such established socket is there (it closed meanwhile).
pub fn socket_owner(client: SocketAddr, server: SocketAddr) -> std::io::Result<Option<u32>> {
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = std::fs::read_to_string(table)?;
        if let Some(uid) = uid_in_table(&text, client, server) {
            return Ok(Some(uid));
        }
    }
    Ok(None)
}

/// The uid of the row for the socket at `client` connected to `server`, in a `/proc/net/tcp`
/// or `/proc/net/tcp6` table (`sl local_address rem_address st tx_queue:rx_queue tr:tm->when
/// retrnsmt uid …`).
///
/// Only an established connection's row counts (`st` 01): once a client has closed its side
/// (FIN_WAIT, TIME_WAIT, …) the kernel no longer ties the row to the process that made it, and
/// prints uid 0 for a socket in TIME_WAIT, which a page run as root would take for its own.
/// A client that sends its request and closes at once is so refused; a browser keeps its
/// connection open until it has the answer.
pub fn uid_in_table(table: &str, client: SocketAddr, server: SocketAddr) -> Option<u32> {
    const ESTABLISHED: &str = "01";
    let (local, remote) = (encode(client), encode(server));
    table.lines().skip(1).find_map(|row| {
        let fields: Vec<&str> = row.split_whitespace().collect();
        let (row_local, row_remote, state, uid) = (
            fields.get(1)?,
            fields.get(2)?,
            fields.get(3)?,
            fields.get(7)?,
        );
        let matches =
            |given: &str, wanted: &[String]| wanted.iter().any(|w| w.eq_ignore_ascii_case(given));
        (matches(row_local, &local) && matches(row_remote, &remote))
            .then(|| {
                if *state != ESTABLISHED {
                    return None;
                }
                uid.parse().ok()
            })
            .flatten()
    })
}

/// How the kernel prints an address and port: each 32-bit word of the address in the
/// machine's byte order as 8 hex digits, then the port as 4. An IPv4 address is also given as
/// the v4-mapped IPv6 address an IPv6 socket would show.
fn encode(address: SocketAddr) -> Vec<String> {
    let word = |bytes: &[u8]| {
        let mut four = [0u8; 4];
        four.copy_from_slice(bytes);
        format!("{:08X}", u32::from_ne_bytes(four))
    };
    let v6 = |octets: [u8; 16]| octets.chunks(4).map(word).collect::<String>();
    let port = address.port();
    match address.ip() {
        IpAddr::V4(ip) => vec![
            format!("{}:{port:04X}", word(&ip.octets())),
            format!("{}:{port:04X}", v6(ip.to_ipv6_mapped().octets())),
        ],
        IpAddr::V6(ip) => vec![format!("{}:{port:04X}", v6(ip.octets()))],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table as Linux prints it (little-endian), with the page's listening socket, its side
    /// of a connection (owned by the page's user, 1000), the client's side (owned by 1001), and
    /// an IPv6 client with a v4-mapped address (owned by 1002).
    const TCP: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:A15D 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 53013 1 0000000000000000 100 0 0 10 0
   1: 0100007F:A15D 0100007F:E8C2 01 00000000:00000000 00:00000000 00000000  1000        0 53015 1 0000000000000000 20 4 30 10 -1
   2: 0100007F:E8C2 0100007F:A15D 01 00000000:00000000 00:00000000 00000000  1001        0 53014 2 0000000000000000 20 4 30 10 -1
";
    const TCP6: &str = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0000000000000000FFFF00000100007F:C000 0000000000000000FFFF00000100007F:A15D 01 00000000:00000000 00:00000000 00000000  1002        0 61234 1 0000000000000000 20 4 30 10 -1
";

    #[test]
    fn the_owner_is_the_clients_row_not_the_pages() {
        let page: SocketAddr = "127.0.0.1:41309".parse().unwrap();
        let client: SocketAddr = "127.0.0.1:59586".parse().unwrap();
        if cfg!(target_endian = "little") {
            assert_eq!(uid_in_table(TCP, client, page), Some(1001));
            let v6_client: SocketAddr = "127.0.0.1:49152".parse().unwrap();
            assert_eq!(uid_in_table(TCP6, v6_client, page), Some(1002));
        }
        // A client that closed its side has no known owner: in TIME_WAIT the kernel prints uid
        // 0, which a page run as root would take for its own (found by the review of h28a).
        if cfg!(target_endian = "little") {
            let closing = "header
   3: 0100007F:E8C3 0100007F:A15D 06 00000000:00000000 03:00000F9F 00000000     0        0 0 3 0000000000000000
   4: 0100007F:E8C4 0100007F:A15D 05 00000000:00000000 00:00000000 00000000     0        0 0 1 0000000000000000 20 4 30 10 -1
   5: 0100007F:E8C5 0100007F:A15D 08 00000000:00000000 00:00000000 00000000     0        0 0 1 0000000000000000 20 4 30 10 -1
";
            for port in [59587, 59588, 59589] {
                let client = SocketAddr::from(([127, 0, 0, 1], port));
                assert_eq!(uid_in_table(closing, client, page), None, "{port}");
            }
        }
        // A connection that is not in the table has no known owner.
        let gone: SocketAddr = "127.0.0.1:1".parse().unwrap();
        assert_eq!(uid_in_table(TCP, gone, page), None);
        assert_eq!(uid_in_table("", client, page), None);
        assert_eq!(uid_in_table("header\n garbage", client, page), None);
    }

    #[test]
    fn this_processs_own_loopback_connection_is_its_own() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let server = listener.local_addr().unwrap();
            let client = TcpStream::connect(server).await.unwrap();
            let (_accepted, peer) = listener.accept().await.unwrap();
            assert_eq!(peer, client.local_addr().unwrap());
            assert_eq!(
                socket_owner(peer, server).unwrap(),
                Some(rustix::process::geteuid().as_raw())
            );
        });
    }

    /// Run as root (as here): clients of another user that send their request and close at
    /// once are refused all, not handed over as root's (their sockets in TIME_WAIT show uid 0
    /// in the table); the page's own user's connection, made after them, is the first one
    /// accepted. Found by the review of h28a (48 of 50 got through).
    #[test]
    fn as_root_a_client_that_closes_at_once_is_not_taken_for_roots() {
        use std::os::unix::process::CommandExt;
        if !rustix::process::geteuid().is_root() {
            eprintln!("skipped: starting a client as another user needs root");
            return;
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let port = listener.local_addr().unwrap().port();
            let mut page = OwnersOnly::new(listener);
            let script = format!(
                "for i in $(seq 20); do exec 3<>/dev/tcp/127.0.0.1/{port}; printf 'GET /x/ HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n' >&3; exec 3>&-; done"
            );
            let status = std::process::Command::new("/bin/bash")
                .args(["-c", &script])
                .uid(65534)
                .gid(65534)
                .status()
                .unwrap();
            assert!(status.success());
            let own = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
            let (_stream, peer) = axum::serve::Listener::accept(&mut page).await;
            assert_eq!(
                peer,
                own.local_addr().unwrap(),
                "another user's closed connection was accepted"
            );
        });
    }
}
