//! The adbd side of the transport: a TCP listener that the real adb server can `adb connect` to.
//!
//! One task reads messages and routes them to per-stream tasks; one task writes. A stream task
//! sends a `WRTE` only after the host's `OKAY` for the previous one (flow control), and answers
//! every host `WRTE` with an `OKAY`.
//!
//! The top of the crate with `host.rs`: the wire (`wire.rs`) over the services (`service.rs`).
//! A host `CLSE` ends the stream's task, which drops the service's output channel, so a
//! command still writing (a logcat follower) sees the stream closed at once.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::Error;
use crate::model::AuthMode;
use crate::phone::{Fault, Request, SimPhone};
use crate::service::{self, Framing, Service};
use crate::wire::{
    A_AUTH, A_CLSE, A_CNXN, A_OKAY, A_OPEN, A_VERSION, A_WRTE, AUTH_RSAPUBLICKEY, AUTH_SIGNATURE,
    AUTH_TOKEN, MAX_PAYLOAD, Message, read_message,
};

/// A running listener; dropping it (or calling `shutdown`) stops accepting and closes connections.
#[derive(Debug)]
pub struct SimHandle {
    stop: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
}

impl SimHandle {
    pub(crate) fn new(stop: watch::Sender<bool>, task: JoinHandle<()>) -> Self {
        Self {
            stop,
            task: Some(task),
        }
    }

    /// Stops the listener and every connection, and waits for the accept loop to end.
    pub async fn shutdown(mut self) {
        self.stop.send_replace(true);
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }

    /// Waits until the listener stops (it runs until `shutdown` or drop).
    pub async fn wait(mut self) {
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for SimHandle {
    fn drop(&mut self) {
        self.stop.send_replace(true);
    }
}

/// The simulated device's adbd transport listener.
#[derive(Debug)]
pub struct Simulator;

impl Simulator {
    /// Listens on `127.0.0.1:port` (any free port for `None`) and serves `phone` to every
    /// connection. Returns the bound address and the handle that keeps it running.
    pub async fn bind_loopback(
        port: Option<u16>,
        phone: SimPhone,
    ) -> Result<(SocketAddr, SimHandle), Error> {
        let listener = TcpListener::bind(("127.0.0.1", port.unwrap_or(0))).await?;
        let address = listener.local_addr()?;
        let (stop, stop_watch) = watch::channel(false);
        let task = tokio::spawn(accept_loop(listener, phone, stop_watch));
        tracing::info!(%address, "adbsim transport listening");
        Ok((address, SimHandle::new(stop, task)))
    }
}

async fn accept_loop(listener: TcpListener, phone: SimPhone, mut stop: watch::Receiver<bool>) {
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((socket, peer)) = accepted else { continue };
                if phone.is_offline() {
                    // An offline phone drops the connection before any CNXN.
                    drop(socket);
                    continue;
                }
                tracing::debug!(%peer, "adbsim connection");
                let _ = socket.set_nodelay(true);
                let phone = phone.clone();
                let stop = stop.clone();
                tokio::spawn(async move {
                    if let Err(error) = serve_connection(socket, phone, stop).await {
                        tracing::debug!(%error, "adbsim connection ended");
                    }
                });
            }
            _ = stop.changed() => {
                if *stop.borrow() { return; }
            }
        }
    }
}

/// What a stream task receives from the reader.
#[derive(Debug)]
enum StreamEvent {
    Okay,
    Write(Vec<u8>),
    Close,
}

/// What the writer task receives.
enum Outgoing {
    Message(Message),
    /// Close the socket now (a fault).
    Drop,
}

fn random_token() -> Vec<u8> {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0x1234_5678);
    let mut x = seed | 1;
    (0..20)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

async fn serve_connection(
    socket: TcpStream,
    phone: SimPhone,
    mut stop: watch::Receiver<bool>,
) -> Result<(), Error> {
    let (mut reader, writer) = socket.into_split();
    let (out_sender, out_receiver) = mpsc::channel::<Outgoing>(64);
    let (dead_sender, mut dead) = watch::channel(false);
    let writer_task = tokio::spawn(write_out(writer, out_receiver, dead_sender));
    let mut offline = phone.watch_offline();
    let mut max_payload = MAX_PAYLOAD;
    let mut connected = false;
    let mut streams: HashMap<u32, mpsc::UnboundedSender<StreamEvent>> = HashMap::new();
    let mut next_local_id: u32 = 1;
    let result = loop {
        let message = tokio::select! {
            read = read_message(&mut reader, MAX_PAYLOAD) => read,
            _ = stop.changed() => break Ok(()),
            _ = offline.changed() => {
                if *offline.borrow() { break Ok(()); }
                continue;
            }
            _ = dead.changed() => break Ok(()),
        };
        let message = match message {
            Ok(Some(message)) => message,
            Ok(None) => break Ok(()),
            Err(error) => break Err(error),
        };
        tracing::trace!(
            command = message.command_name(),
            arg0 = message.arg0,
            arg1 = message.arg1,
            len = message.data.len(),
            "adbsim recv"
        );
        let send = |message: Message| {
            let sender = out_sender.clone();
            async move { sender.send(Outgoing::Message(message)).await.is_ok() }
        };
        match message.command {
            A_CNXN | A_AUTH => {
                let answer = if message.command == A_CNXN {
                    max_payload = message.arg1.clamp(256, MAX_PAYLOAD);
                    Some(connect_answer(&phone, message.arg0, max_payload))
                } else {
                    match auth_answer(&phone, &message, max_payload, &mut stop).await {
                        AuthStep::Answer(answer) => Some(answer),
                        AuthStep::Nothing => None,
                        AuthStep::Stop => break Ok(()),
                    }
                };
                if let Some(answer) = answer {
                    connected |= answer.command == A_CNXN;
                    send(answer).await;
                }
            }
            A_OPEN if connected => {
                let stream = StreamTask {
                    phone: phone.clone(),
                    out: out_sender.clone(),
                    local_id: next_local_id,
                    remote_id: message.arg0,
                    max_payload: max_payload as usize,
                };
                if let Some(events) = stream.open(&message.data).await {
                    streams.insert(next_local_id, events);
                    next_local_id = next_local_id.wrapping_add(1).max(1);
                }
            }
            A_OKAY => {
                if let Some(stream) = streams.get(&message.arg1) {
                    let _ = stream.send(StreamEvent::Okay);
                }
            }
            A_WRTE => {
                if let Some(stream) = streams.get(&message.arg1) {
                    let _ = stream.send(StreamEvent::Write(message.data));
                }
            }
            A_CLSE => {
                // A late CLSE for a forgotten stream is normal and ignored.
                if let Some(stream) = streams.remove(&message.arg1) {
                    let _ = stream.send(StreamEvent::Close);
                }
            }
            _ => {}
        }
        streams.retain(|_, stream| !stream.is_closed());
    };
    for (_, stream) in streams.drain() {
        let _ = stream.send(StreamEvent::Close);
    }
    drop(out_sender);
    writer_task.abort();
    result
}

/// Writes what the connection sends until the channel closes or a fault drops the socket, then
/// shuts the socket and says the connection is dead.
async fn write_out(
    mut writer: tokio::net::tcp::OwnedWriteHalf,
    mut out_receiver: mpsc::Receiver<Outgoing>,
    dead_sender: watch::Sender<bool>,
) {
    while let Some(outgoing) = out_receiver.recv().await {
        match outgoing {
            Outgoing::Message(message) => {
                tracing::trace!(
                    command = message.command_name(),
                    arg0 = message.arg0,
                    arg1 = message.arg1,
                    len = message.data.len(),
                    "adbsim send"
                );
                if writer.write_all(&message.encode()).await.is_err() {
                    break;
                }
            }
            Outgoing::Drop => break,
        }
    }
    let _ = writer.shutdown().await;
    dead_sender.send_replace(true);
}

/// The phone's `CNXN` banner.
fn banner(phone: &SimPhone) -> Vec<u8> {
    let profile = phone.profile();
    format!(
        "device::ro.product.name={};ro.product.model={};ro.product.device={};features=shell_v2,cmd",
        profile.product, profile.model, profile.device
    )
    .into_bytes()
}

/// The answer to the host's `CNXN`: the phone's own `CNXN` when it needs no key, else an
/// `AUTH` token to sign.
fn connect_answer(phone: &SimPhone, version: u32, max_payload: u32) -> Message {
    match phone.profile().auth {
        AuthMode::Off => Message::new(A_CNXN, version.min(A_VERSION), max_payload, banner(phone)),
        AuthMode::TrustAnyKey | AuthMode::AskUser => {
            Message::new(A_AUTH, AUTH_TOKEN, 0, random_token())
        }
    }
}

/// What the phone does on the host's `AUTH`.
enum AuthStep {
    /// Sends this.
    Answer(Message),
    /// Nothing (an `AUTH` it does not know).
    Nothing,
    /// Ends the connection: it stopped while the person was asked.
    Stop,
}

/// The answer to the host's `AUTH`: `CNXN` for a signature the phone trusts or a public key
/// the person allowed, another token for an unknown key's signature.
async fn auth_answer(
    phone: &SimPhone,
    message: &Message,
    max_payload: u32,
    stop: &mut watch::Receiver<bool>,
) -> AuthStep {
    let auth = phone.profile().auth;
    let connect = || Message::new(A_CNXN, A_VERSION, max_payload, banner(phone));
    match (message.arg0, auth) {
        (AUTH_SIGNATURE, AuthMode::TrustAnyKey) => AuthStep::Answer(connect()),
        // The key is unknown: ask again, so the host sends its public key.
        (AUTH_SIGNATURE, _) => {
            AuthStep::Answer(Message::new(A_AUTH, AUTH_TOKEN, 0, random_token()))
        }
        (AUTH_RSAPUBLICKEY, _) => {
            let key = String::from_utf8_lossy(&message.data)
                .trim_end_matches('\0')
                .to_string();
            tracing::info!(%key, "adbsim: host offers its public key; waiting for Allow USB debugging");
            let mut allowed = phone.watch_usb_debugging();
            let approved = if auth == AuthMode::AskUser {
                tokio::select! {
                    result = allowed.wait_for(|allowed| *allowed) => result.is_ok(),
                    _ = stop.changed() => false,
                }
            } else {
                true
            };
            if approved {
                AuthStep::Answer(connect())
            } else {
                AuthStep::Stop
            }
        }
        _ => AuthStep::Nothing,
    }
}

struct StreamTask {
    phone: SimPhone,
    out: mpsc::Sender<Outgoing>,
    local_id: u32,
    remote_id: u32,
    max_payload: usize,
}

enum Flow {
    Continue,
    Stop,
}

impl StreamTask {
    async fn send(&self, command: u32, data: Vec<u8>) -> bool {
        self.out
            .send(Outgoing::Message(Message::new(
                command,
                self.local_id,
                self.remote_id,
                data,
            )))
            .await
            .is_ok()
    }

    /// Handles one event while output is pending; returns whether an OKAY arrived.
    async fn handle(&self, event: Option<StreamEvent>) -> (Flow, bool) {
        match event {
            Some(StreamEvent::Okay) => (Flow::Continue, true),
            Some(StreamEvent::Write(_data)) => {
                // Stdin (and v2 close-stdin packets) are taken and acknowledged, not used.
                if self.send(A_OKAY, Vec::new()).await {
                    (Flow::Continue, false)
                } else {
                    (Flow::Stop, false)
                }
            }
            Some(StreamEvent::Close) | None => (Flow::Stop, false),
        }
    }

    /// Takes `size` bytes of input (a streamed install's APK), acknowledging each write; `None`
    /// when the host closes the stream first.
    async fn receive(
        &self,
        events: &mut mpsc::UnboundedReceiver<StreamEvent>,
        size: u64,
    ) -> Option<Vec<u8>> {
        let mut bytes = Vec::new();
        // More than the phone would accept is not kept: the package manager refuses it unread.
        while (bytes.len() as u64) < size.min(crate::apps::MAX_APK_BYTES + 1) {
            match events.recv().await? {
                StreamEvent::Write(data) => {
                    bytes.extend_from_slice(&data);
                    if !self.send(A_OKAY, Vec::new()).await {
                        return None;
                    }
                }
                StreamEvent::Okay => {}
                StreamEvent::Close => return None,
            }
        }
        Some(bytes)
    }

    /// Opens the stream the host asked for (`OPEN`'s service name): for a service the phone
    /// knows, its task started and the sender of its events; for another, `CLSE` and `None`.
    async fn open(self, data: &[u8]) -> Option<mpsc::UnboundedSender<StreamEvent>> {
        let name = String::from_utf8_lossy(data)
            .trim_end_matches('\0')
            .to_string();
        self.phone.record(Request::Service(name.clone()));
        match service::parse(&name) {
            Some(service) => {
                let (event_sender, events) = mpsc::unbounded_channel();
                tokio::spawn(self.run(service, events));
                Some(event_sender)
            }
            None => {
                tracing::debug!(%name, "adbsim: unknown service");
                let close = Message::new(A_CLSE, 0, self.remote_id, Vec::new());
                let _ = self.out.send(Outgoing::Message(close)).await;
                None
            }
        }
    }

    /// A stalled stream (`Fault::Stall`): nothing is sent for `duration` (for ever without one),
    /// while the host is still answered. False when the stream ended meanwhile.
    async fn stall(
        &self,
        events: &mut mpsc::UnboundedReceiver<StreamEvent>,
        duration: Option<Duration>,
    ) -> bool {
        let wait = async {
            match duration {
                Some(duration) => tokio::time::sleep(duration).await,
                None => std::future::pending::<()>().await,
            }
        };
        tokio::pin!(wait);
        loop {
            tokio::select! {
                () = &mut wait => return true,
                event = events.recv() => {
                    if let Flow::Stop = self.handle(event).await.0 { return false; }
                }
            }
        }
    }

    async fn run(self, service: Service, mut events: mpsc::UnboundedReceiver<StreamEvent>) {
        if !self.send(A_OKAY, Vec::new()).await {
            return;
        }
        let framing = match &service {
            Service::Shell { framing, .. } => *framing,
            Service::Jdwp | Service::TrackJdwp | Service::Install { .. } => Framing::Raw,
        };
        let mut service = service;
        if let Service::Install { size, apk, .. } = &mut service {
            match self.receive(&mut events, *size).await {
                Some(bytes) => *apk = bytes,
                None => return,
            }
        }
        let fault = match service {
            Service::Shell { .. } => self.phone.take_fault(),
            _ => None,
        };
        let mut output = service::start(&self.phone, &service);
        let mut sent_bytes: u64 = 0;
        let mut stalled = false;
        let mut packets: Vec<Vec<u8>> = Vec::new();
        loop {
            // Wait for output while still answering the host.
            let chunk = tokio::select! {
                chunk = output.recv() => chunk,
                event = events.recv() => {
                    match self.handle(event).await.0 {
                        Flow::Continue => continue,
                        Flow::Stop => return,
                    }
                }
            };
            let Some(chunk) = chunk else { break };
            service::frame(framing, chunk, self.max_payload, &mut packets);
            // Coalesce whatever else is ready into as few WRTEs as fit.
            while let Ok(more) = output.try_recv() {
                service::frame(framing, more, self.max_payload, &mut packets);
                if packets.iter().map(Vec::len).sum::<usize>() >= self.max_payload {
                    break;
                }
            }
            let payloads = coalesce(&mut packets, self.max_payload);
            for payload in payloads {
                if !stalled && let Some(Fault::Stall(duration)) = fault {
                    stalled = true;
                    if !self.stall(&mut events, duration).await {
                        return;
                    }
                }
                let mut payload = payload;
                if let Some(Fault::DropAfterBytes(limit)) = fault {
                    let room = limit.saturating_sub(sent_bytes) as usize;
                    if payload.len() >= room {
                        payload.truncate(room);
                        if !payload.is_empty() {
                            let _ = self.send(A_WRTE, payload).await;
                        }
                        // Give the writer a moment to flush the partial data, then cut the line.
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        let _ = self.out.send(Outgoing::Drop).await;
                        return;
                    }
                }
                sent_bytes += payload.len() as u64;
                if !self.send(A_WRTE, payload).await {
                    return;
                }
                // Flow control: nothing more until the host's OKAY.
                loop {
                    let (flow, okay) = self.handle(events.recv().await).await;
                    if let Flow::Stop = flow {
                        return;
                    }
                    if okay {
                        break;
                    }
                }
            }
        }
        let _ = self.send(A_CLSE, Vec::new()).await;
    }
}

/// Framed packets joined into as few payloads as fit `max_payload` each, in order.
fn coalesce(packets: &mut Vec<Vec<u8>>, max_payload: usize) -> Vec<Vec<u8>> {
    let mut payloads: Vec<Vec<u8>> = Vec::new();
    for packet in packets.drain(..) {
        match payloads.last_mut() {
            Some(last) if last.len() + packet.len() <= max_payload => {
                last.extend_from_slice(&packet)
            }
            _ => payloads.push(packet),
        }
    }
    payloads
}
