//! The phone's end of a RemoteXPC connection: HTTP/2 frames carrying XPC messages (`xpc`), as
//! RSD and the CoreDevice services speak it. The client opens stream 1 (root) and stream 3
//! (reply) with bare HEADERS frames, sends XPC messages in DATA frames on them, and reads the
//! phone's answers from DATA frames (pymobiledevice3 `remote/remotexpc.py` reads any stream;
//! idevice `src/xpc/mod.rs` reads the RSD handshake on stream 1 and replies on stream 3, so
//! that is where they go).
//!
//! Framing and HPACK are h2's (its frame codec, behind its `unstable` feature, pinned): its
//! server API cannot be used because RemoteXPC's HEADERS carry no request at all (no `:method`,
//! no `:path`) and h2's server resets such a stream as malformed. The little state machine
//! above the frames is this file: SETTINGS and their acknowledgement, PING, the two flow
//! control windows both ways, and messages split across frames.

use std::collections::HashMap;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use h2::Codec;
use h2::frame::{Data, Frame, Ping, Settings, StreamId, WindowUpdate};
use tokio::io::AsyncReadExt;

use crate::services::{BoxStream, IDLE, invalid};
use crate::xpc::Message;

/// The client's connection preface.
const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// The root stream, where the RSD handshake is answered.
pub(crate) const ROOT: u32 = 1;
/// The reply stream, where answers to requests go.
pub(crate) const REPLY: u32 = 3;
/// HTTP/2's default frame size, the largest DATA frame sent.
const MAX_FRAME: usize = 16_384;
/// The receive window the phone offers (per stream and, after its update, per connection).
const WINDOW: u32 = 1 << 20;
/// HTTP/2's initial windows before SETTINGS and WINDOW_UPDATE say otherwise.
const DEFAULT_WINDOW: i64 = 65_535;
/// The most a client may leave unread on one stream.
const MAX_BUFFERED: usize = 4 * 1024 * 1024;

/// One RemoteXPC connection.
pub(crate) struct Connection {
    codec: Codec<BoxStream, Bytes>,
    buffers: HashMap<u32, Vec<u8>>,
    send_connection: i64,
    send_streams: HashMap<u32, i64>,
    send_initial: i64,
    /// The largest DATA frame sent ([`MAX_FRAME`], or less when the phone is told to split).
    max_frame: usize,
}

impl Connection {
    /// Reads the client's preface and sends the phone's SETTINGS and connection window.
    pub(crate) async fn accept(mut stream: BoxStream) -> std::io::Result<Connection> {
        let mut preface = [0u8; 24];
        tokio::time::timeout(IDLE, stream.read_exact(&mut preface))
            .await
            .map_err(|_| invalid("no HTTP/2 preface".into()))??;
        if &preface != PREFACE {
            return Err(invalid("not an HTTP/2 preface".into()));
        }
        let mut connection = Connection {
            codec: Codec::new(stream),
            buffers: HashMap::new(),
            send_connection: DEFAULT_WINDOW,
            send_streams: HashMap::new(),
            send_initial: DEFAULT_WINDOW,
            max_frame: MAX_FRAME,
        };
        let mut settings = Settings::default();
        settings.set_max_concurrent_streams(Some(100));
        settings.set_initial_window_size(Some(WINDOW));
        connection.feed(Frame::Settings(settings)).await?;
        let update = WINDOW - DEFAULT_WINDOW as u32;
        connection
            .feed(Frame::WindowUpdate(WindowUpdate::new(
                StreamId::zero(),
                update,
            )))
            .await?;
        connection.flush().await?;
        Ok(connection)
    }

    /// Sends DATA frames of at most `bytes` (at least 1) from now on, so a large answer is
    /// split over many frames (`Fault::SplitFrames`).
    pub(crate) fn split_frames(&mut self, bytes: usize) {
        self.max_frame = bytes.clamp(1, MAX_FRAME);
    }

    async fn feed(&mut self, frame: Frame<Bytes>) -> std::io::Result<()> {
        self.codec.feed(frame).await.map_err(to_io)
    }

    async fn flush(&mut self) -> std::io::Result<()> {
        SinkExt::flush(&mut self.codec).await.map_err(to_io)
    }

    /// The next whole message from the client, with the stream it came on; `None` when the
    /// client closed the connection. A client may keep a connection idle as long as it likes
    /// (RSD's and the appservice's stay open between requests), as on a phone; the tunnel's or
    /// the cable's end closes it.
    pub(crate) async fn next(&mut self) -> std::io::Result<Option<(u32, Message)>> {
        loop {
            if let Some(found) = self.buffered()? {
                return Ok(Some(found));
            }
            match self.codec.next().await {
                None => return Ok(None),
                Some(Err(error)) => return Err(invalid(format!("HTTP/2: {error}"))),
                Some(Ok(frame)) => self.handle(frame).await?,
            }
        }
    }

    /// A whole message already received on some stream.
    fn buffered(&mut self) -> std::io::Result<Option<(u32, Message)>> {
        for (&stream, buffer) in self.buffers.iter_mut() {
            match Message::decode(buffer) {
                Ok(Some((message, used))) => {
                    buffer.drain(..used);
                    return Ok(Some((stream, message)));
                }
                Ok(None) => {}
                Err(error) => return Err(invalid(error.to_string())),
            }
        }
        Ok(None)
    }

    async fn handle(&mut self, frame: Frame) -> std::io::Result<()> {
        match frame {
            Frame::Data(data) => {
                let stream = u32::from(data.stream_id());
                let payload = data.into_payload();
                let buffer = self.buffers.entry(stream).or_default();
                if buffer.len() + payload.len() > MAX_BUFFERED {
                    return Err(invalid("a RemoteXPC client sent too much unread".into()));
                }
                buffer.extend_from_slice(&payload);
                if !payload.is_empty() {
                    // Give the client its window back as the bytes are taken.
                    let n = payload.len() as u32;
                    self.feed(Frame::WindowUpdate(WindowUpdate::new(StreamId::zero(), n)))
                        .await?;
                    let id = StreamId::from(stream);
                    self.feed(Frame::WindowUpdate(WindowUpdate::new(id, n)))
                        .await?;
                    self.flush().await?;
                }
            }
            Frame::Settings(settings) if !settings.is_ack() => {
                if let Some(initial) = settings.initial_window_size() {
                    let delta = i64::from(initial) - self.send_initial;
                    self.send_initial = i64::from(initial);
                    self.send_streams.values_mut().for_each(|w| *w += delta);
                }
                self.feed(Frame::Settings(Settings::ack())).await?;
                self.flush().await?;
            }
            Frame::WindowUpdate(update) => {
                let n = i64::from(update.size_increment());
                let stream = u32::from(update.stream_id());
                if stream == 0 {
                    self.send_connection += n;
                } else {
                    *self.send_streams.entry(stream).or_insert(self.send_initial) += n;
                }
            }
            Frame::Ping(ping) if !ping.is_ack() => {
                self.feed(Frame::Ping(Ping::pong(ping.into_payload())))
                    .await?;
                self.flush().await?;
            }
            Frame::GoAway(_) => return Err(invalid("the client went away".into())),
            // HEADERS open streams 1, 3 and file streams; nothing to answer. A reset stream
            // has nothing more to say.
            _ => {}
        }
        Ok(())
    }

    /// Sends `message` on `stream`, in frames of at most 16 KiB (or what `split_frames` said),
    /// within the client's windows.
    pub(crate) async fn send(&mut self, stream: u32, message: &Message) -> std::io::Result<()> {
        self.send_bytes(stream, message.encode()).await
    }

    /// Sends bytes as they are on `stream` (a [`crate::Hostile`] answer is no well-formed message).
    pub(crate) async fn send_bytes(&mut self, stream: u32, bytes: Vec<u8>) -> std::io::Result<()> {
        let bytes = Bytes::from(bytes);
        let mut at = 0;
        while at < bytes.len() {
            let window = self
                .send_connection
                .min(*self.send_streams.entry(stream).or_insert(self.send_initial));
            if window <= 0 {
                // Wait for the client to open its window; what it sends meanwhile is kept.
                self.flush().await?;
                match tokio::time::timeout(IDLE, self.codec.next()).await {
                    Ok(Some(Ok(frame))) => self.handle(frame).await?,
                    Ok(Some(Err(error))) => return Err(invalid(format!("HTTP/2: {error}"))),
                    _ => return Err(invalid("the client never opened its window".into())),
                }
                continue;
            }
            let n = (bytes.len() - at).min(self.max_frame).min(window as usize);
            let chunk = bytes.slice(at..at + n);
            self.feed(Frame::Data(Data::new(StreamId::from(stream), chunk)))
                .await?;
            self.send_connection -= n as i64;
            if let Some(w) = self.send_streams.get_mut(&stream) {
                *w -= n as i64;
            }
            at += n;
        }
        self.flush().await
    }
}

fn to_io(error: impl std::fmt::Display) -> std::io::Error {
    invalid(format!("HTTP/2: {error}"))
}
