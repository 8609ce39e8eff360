//! The phone's side of the CoreDevice tunnel's network: an IPv6/TCP stack in userspace that
//! takes the IPv6 packets the host sends through the tunnel, listens on the phone's tunnel
//! address and the ports RSD lists, and hands every accepted connection on as a byte stream,
//! as the phone's kernel does for remoted's listeners.
//!
//! The stack is smoltcp, used as a library: the clients' stacks (pymobiledevice3's PyTCP,
//! idevice's jktcp) only connect, and this side must accept: answer SYNs, keep windows, retransmit
//! and close as a kernel does, which is what smoltcp is (a complete TCP with window scaling, used
//! on its own in embedded and userspace networking). The glue is one task: packets in, sockets
//! polled, bytes moved between each socket and a `tokio::io::duplex` pipe whose other end the
//! service reads and writes, packets out, and a timer for retransmissions.

use std::collections::VecDeque;
use std::net::Ipv6Addr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant as StdInstant;

use smoltcp::iface::{Config, Interface, SocketHandle, SocketSet};
use smoltcp::phy::{self, DeviceCapabilities, Medium};
use smoltcp::socket::tcp;
use smoltcp::time::Instant;
use smoltcp::wire::{HardwareAddress, IpAddress, IpCidr};
use tokio::io::{AsyncRead, AsyncWrite, DuplexStream, ReadBuf};
use tokio::sync::mpsc;

use crate::services::BoxStream;

/// Each socket's receive and send buffers (a window of 256 KiB, scaled).
const SOCKET_BUFFER: usize = 256 * 1024;
/// The pipe between a socket and its service.
const PIPE: usize = 64 * 1024;
/// Rounds of work before the task yields to others.
const ROUNDS: usize = 64;

/// Packets queued between the tunnel and the interface.
struct Queues {
    rx: VecDeque<Vec<u8>>,
    tx: VecDeque<Vec<u8>>,
    mtu: usize,
}

struct RxToken(Vec<u8>);
struct TxToken<'a>(&'a mut VecDeque<Vec<u8>>);

impl phy::RxToken for RxToken {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        f(&self.0)
    }
}

impl phy::TxToken for TxToken<'_> {
    fn consume<R, F: FnOnce(&mut [u8]) -> R>(self, len: usize, f: F) -> R {
        let mut packet = vec![0; len];
        let result = f(&mut packet);
        self.0.push_back(packet);
        result
    }
}

impl phy::Device for Queues {
    type RxToken<'a> = RxToken;
    type TxToken<'a> = TxToken<'a>;

    fn receive(&mut self, _: Instant) -> Option<(RxToken, TxToken<'_>)> {
        let packet = self.rx.pop_front()?;
        Some((RxToken(packet), TxToken(&mut self.tx)))
    }

    fn transmit(&mut self, _: Instant) -> Option<TxToken<'_>> {
        Some(TxToken(&mut self.tx))
    }

    fn capabilities(&self) -> DeviceCapabilities {
        let mut caps = DeviceCapabilities::default();
        caps.medium = Medium::Ip;
        caps.max_transmission_unit = self.mtu;
        caps
    }
}

/// One accepted connection: its socket and the stack's end of the service's pipe.
struct Conn {
    handle: SocketHandle,
    pipe: DuplexStream,
    /// Bytes read from the socket, not yet taken by the service.
    to_service: Vec<u8>,
    /// The service closed its side.
    service_done: bool,
    /// The peer's FIN was passed on to the service.
    peer_done: bool,
}

/// Who takes the connections a listening port accepts.
pub(crate) type Accept = Box<dyn Fn(u16, BoxStream) + Send + Sync>;

/// The stack for one tunnel.
pub(crate) struct Stack {
    iface: Interface,
    queues: Queues,
    sockets: SocketSet<'static>,
    listeners: Vec<(u16, SocketHandle)>,
    conns: Vec<Conn>,
    started: StdInstant,
    timer: Pin<Box<tokio::time::Sleep>>,
}

impl Stack {
    /// A stack at `address` that accepts connections on `ports`, for packets of at most `mtu`.
    pub(crate) fn new(address: Ipv6Addr, mtu: usize, ports: &[u16]) -> Stack {
        let mut queues = Queues {
            rx: VecDeque::new(),
            tx: VecDeque::new(),
            mtu,
        };
        let started = StdInstant::now();
        let mut config = Config::new(HardwareAddress::Ip);
        config.random_seed = u64::from(address.segments()[3]) ^ 0x5eed_1234;
        let mut iface = Interface::new(config, &mut queues, Instant::from_micros(0));
        iface.update_ip_addrs(|addrs| {
            let _ = addrs.push(IpCidr::new(IpAddress::Ipv6(address), 64));
        });
        let mut stack = Stack {
            iface,
            queues,
            sockets: SocketSet::new(Vec::new()),
            listeners: Vec::new(),
            conns: Vec::new(),
            started,
            timer: Box::pin(tokio::time::sleep(std::time::Duration::ZERO)),
        };
        for &port in ports {
            let handle = stack.listener(port);
            stack.listeners.push((port, handle));
        }
        stack
    }

    fn listener(&mut self, port: u16) -> SocketHandle {
        let mut socket = tcp::Socket::new(
            tcp::SocketBuffer::new(vec![0; SOCKET_BUFFER]),
            tcp::SocketBuffer::new(vec![0; SOCKET_BUFFER]),
        );
        // A fresh socket listening on a port it was given cannot fail to listen.
        let _ = socket.listen(port);
        socket.set_nagle_enabled(false);
        self.sockets.add(socket)
    }

    fn now(&self) -> Instant {
        Instant::from_micros(self.started.elapsed().as_micros() as i64)
    }

    /// Runs until the tunnel's packets end (`inbound` closed) or the host stops reading
    /// (`outbound` closed).
    pub(crate) async fn run(
        mut self,
        mut inbound: mpsc::Receiver<Vec<u8>>,
        outbound: mpsc::UnboundedSender<Vec<u8>>,
        accept: Accept,
    ) {
        std::future::poll_fn(|cx| self.poll(cx, &mut inbound, &outbound, &accept)).await;
    }

    fn poll(
        &mut self,
        cx: &mut Context<'_>,
        inbound: &mut mpsc::Receiver<Vec<u8>>,
        outbound: &mpsc::UnboundedSender<Vec<u8>>,
        accept: &Accept,
    ) -> Poll<()> {
        for _ in 0..ROUNDS {
            let mut progress = false;
            loop {
                match inbound.poll_recv(cx) {
                    Poll::Ready(Some(packet)) => {
                        self.queues.rx.push_back(packet);
                        progress = true;
                    }
                    Poll::Ready(None) => return Poll::Ready(()),
                    Poll::Pending => break,
                }
            }
            let now = self.now();
            self.iface.poll(now, &mut self.queues, &mut self.sockets);
            self.accept_new(accept);
            for i in 0..self.conns.len() {
                progress |= self.pump(i, cx);
            }
            self.conns.retain(|c| {
                !(c.service_done && c.peer_done)
                    || self.sockets.get::<tcp::Socket<'_>>(c.handle).is_open()
            });
            self.reap();
            let now = self.now();
            self.iface.poll(now, &mut self.queues, &mut self.sockets);
            while let Some(packet) = self.queues.tx.pop_front() {
                if outbound.send(packet).is_err() {
                    return Poll::Ready(());
                }
                progress = true;
            }
            if !progress {
                let now = self.now();
                if let Some(delay) = self.iface.poll_delay(now, &self.sockets) {
                    let when = tokio::time::Instant::now()
                        + std::time::Duration::from_micros(delay.total_micros());
                    self.timer.as_mut().reset(when);
                    if self.timer.as_mut().poll(cx).is_ready() {
                        continue;
                    }
                }
                return Poll::Pending;
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }

    /// Listening sockets that took a connection become connections; a new socket listens on
    /// their port.
    fn accept_new(&mut self, accept: &Accept) {
        for i in 0..self.listeners.len() {
            let (port, handle) = self.listeners[i];
            let state = self.sockets.get::<tcp::Socket<'_>>(handle).state();
            if matches!(state, tcp::State::Listen) {
                continue;
            }
            self.listeners[i].1 = self.listener(port);
            let (ours, theirs) = tokio::io::duplex(PIPE);
            self.conns.push(Conn {
                handle,
                pipe: ours,
                to_service: Vec::new(),
                service_done: false,
                peer_done: false,
            });
            accept(port, Box::new(theirs));
        }
    }

    /// Moves bytes both ways between connection `i`'s socket and its pipe; whether any moved.
    fn pump(&mut self, i: usize, cx: &mut Context<'_>) -> bool {
        let conn = &mut self.conns[i];
        let socket = self.sockets.get_mut::<tcp::Socket<'_>>(conn.handle);
        let mut progress = false;
        // Socket → service.
        let mut chunk = [0u8; 16 * 1024];
        while conn.to_service.len() < PIPE && socket.can_recv() {
            match socket.recv_slice(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => conn.to_service.extend_from_slice(&chunk[..n]),
            }
        }
        while !conn.to_service.is_empty() {
            match Pin::new(&mut conn.pipe).poll_write(cx, &conn.to_service) {
                Poll::Ready(Ok(n)) if n > 0 => {
                    conn.to_service.drain(..n);
                    progress = true;
                }
                Poll::Ready(_) => {
                    // The service is gone: reset the connection.
                    socket.abort();
                    conn.to_service.clear();
                    conn.service_done = true;
                    conn.peer_done = true;
                    return true;
                }
                Poll::Pending => break,
            }
        }
        if conn.to_service.is_empty()
            && !socket.may_recv()
            && !conn.peer_done
            && socket.state() != tcp::State::SynReceived
        {
            // The peer sent FIN (or is gone): the service reads the end.
            let _ = Pin::new(&mut conn.pipe).poll_shutdown(cx);
            conn.peer_done = true;
            progress = true;
        }
        // Service → socket.
        while !conn.service_done && socket.can_send() {
            let room = socket.send_capacity() - socket.send_queue();
            let take = room.min(chunk.len());
            let mut buf = ReadBuf::new(&mut chunk[..take]);
            match Pin::new(&mut conn.pipe).poll_read(cx, &mut buf) {
                Poll::Ready(Ok(())) if buf.filled().is_empty() => {
                    socket.close();
                    conn.service_done = true;
                    progress = true;
                }
                Poll::Ready(Ok(())) => {
                    let _ = socket.send_slice(buf.filled());
                    progress = true;
                }
                Poll::Ready(Err(_)) => {
                    socket.close();
                    conn.service_done = true;
                }
                Poll::Pending => break,
            }
        }
        if !socket.is_open() {
            conn.service_done = true;
            conn.peer_done = true;
        }
        progress
    }

    /// Frees the sockets of connections that are over.
    fn reap(&mut self) {
        let live: Vec<SocketHandle> = self
            .listeners
            .iter()
            .map(|(_, h)| *h)
            .chain(self.conns.iter().map(|c| c.handle))
            .collect();
        let dead: Vec<SocketHandle> = self
            .sockets
            .iter()
            .map(|(h, _)| h)
            .filter(|h| !live.contains(h))
            .collect();
        for handle in dead {
            self.sockets.remove(handle);
        }
    }
}
