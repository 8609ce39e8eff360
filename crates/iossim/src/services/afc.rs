//! The crash report services: `com.apple.crashreportmover`, which moves finished reports into
//! CrashReports and answers `ping` and a NUL (the 5 bytes pymobiledevice3 insists on; idevice
//! and libimobiledevice read the first 4), and `com.apple.crashreportcopymobile`, plain AFC
//! rooted at CrashReports (packets `CFA6LPAA`, opcodes and status codes as idevice's
//! `afc/opcode.rs` and `afc/errors.rs` list them).

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::UNIX_EPOCH;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{BoxStream, IDLE, MAX_REQUESTS};
use crate::model::{Hostile, SimPhone};

/// `CFA6LPAA`, little-endian.
pub const MAGIC: u64 = 0x4141_504c_3641_4643;
const HEADER: u64 = 40;

mod op {
    pub const STATUS: u64 = 0x01;
    pub const DATA: u64 = 0x02;
    pub const READ_DIR: u64 = 0x03;
    pub const REMOVE_PATH: u64 = 0x08;
    pub const GET_FILE_INFO: u64 = 0x0a;
    pub const GET_DEV_INFO: u64 = 0x0b;
    pub const FILE_OPEN: u64 = 0x0d;
    pub const FILE_OPEN_RES: u64 = 0x0e;
    pub const READ: u64 = 0x0f;
    pub const FILE_SEEK: u64 = 0x11;
    pub const FILE_TELL: u64 = 0x12;
    pub const FILE_TELL_RES: u64 = 0x13;
    pub const FILE_CLOSE: u64 = 0x14;
}

mod status {
    pub const SUCCESS: u64 = 0;
    pub const INVALID_ARG: u64 = 7;
    pub const OBJECT_NOT_FOUND: u64 = 8;
    pub const OBJECT_IS_DIR: u64 = 9;
    pub const PERM_DENIED: u64 = 10;
    pub const OP_NOT_SUPPORTED: u64 = 15;
}

/// The mover: waits as long as moving takes, makes finished reports visible, says `ping`.
pub(crate) async fn serve_mover(phone: &SimPhone, mut stream: BoxStream) -> std::io::Result<()> {
    tokio::time::sleep(phone.mover_delay()).await;
    let moved = phone.move_reports();
    tracing::debug!(moved, "crashreportmover moved reports");
    stream.write_all(b"ping\0").await?;
    stream.flush().await?;
    // The phone closes after its ping; give the client a moment to read it.
    let mut rest = [0u8; 16];
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), stream.read(&mut rest)).await;
    Ok(())
}

/// A node of the CrashReports tree.
enum Node {
    Dir(BTreeSet<String>),
    File(crate::model::ReportFile),
}

/// Path components under CrashReports, `.` and `..` resolved; `None` above the root.
fn components(raw: &[u8]) -> Option<Vec<String>> {
    let text = String::from_utf8_lossy(raw);
    let text = text.trim_end_matches('\0');
    let mut parts: Vec<String> = Vec::new();
    for part in text.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other.to_owned()),
        }
    }
    Some(parts)
}

fn lookup(phone: &SimPhone, parts: &[String]) -> Option<Node> {
    let files = phone.report_files();
    let path = parts.join("/");
    if let Some(file) = files.iter().find(|f| f.path == path) {
        return Some(Node::File(file.clone()));
    }
    // A directory: the root, `Retired` (always there on a phone), or any parent of a file.
    let mut children = BTreeSet::new();
    let mut exists = parts.is_empty() || path == "Retired";
    if parts.is_empty() {
        children.insert("Retired".to_owned());
    }
    for file in &files {
        let file_parts: Vec<&str> = file.path.split('/').collect();
        if file_parts.len() > parts.len()
            && file_parts[..parts.len()]
                .iter()
                .zip(parts)
                .all(|(a, b)| a == b)
        {
            exists = true;
            children.insert(file_parts[parts.len()].to_owned());
        }
    }
    exists.then_some(Node::Dir(children))
}

struct Packet {
    number: u64,
    operation: u64,
    header: Vec<u8>,
}

async fn read_packet(stream: &mut BoxStream) -> std::io::Result<Option<Packet>> {
    let mut head = [0u8; HEADER as usize];
    match tokio::time::timeout(IDLE, stream.read_exact(&mut head)).await {
        Err(_) => return Ok(None),
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Ok(Err(e)) => return Err(e),
        Ok(Ok(_)) => {}
    }
    let word = |i: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&head[i * 8..i * 8 + 8]);
        u64::from_le_bytes(b)
    };
    if word(0) != MAGIC {
        return Err(super::invalid("an AFC packet without CFA6LPAA".into()));
    }
    let (entire, this, number, operation) = (word(1), word(2), word(3), word(4));
    if this < HEADER || entire < this || entire > 64 * 1024 * 1024 {
        return Err(super::invalid(format!("AFC lengths {entire}/{this}")));
    }
    let mut header = vec![0; (this - HEADER) as usize];
    stream.read_exact(&mut header).await?;
    // A request's payload (writes) is read and dropped: this service is read-only.
    let mut payload = vec![0; (entire - this) as usize];
    stream.read_exact(&mut payload).await?;
    Ok(Some(Packet {
        number,
        operation,
        header,
    }))
}

async fn send(
    stream: &mut BoxStream,
    number: u64,
    operation: u64,
    header: &[u8],
    payload: &[u8],
) -> std::io::Result<()> {
    let this = HEADER + header.len() as u64;
    let entire = this + payload.len() as u64;
    let mut out = Vec::with_capacity(entire as usize);
    for word in [MAGIC, entire, this, number, operation] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    out.extend_from_slice(header);
    out.extend_from_slice(payload);
    stream.write_all(&out).await?;
    stream.flush().await
}

async fn send_status(stream: &mut BoxStream, number: u64, code: u64) -> std::io::Result<()> {
    send(stream, number, op::STATUS, &code.to_le_bytes(), &[]).await
}

fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    let slice = bytes.get(at..at + 8)?;
    let mut b = [0u8; 8];
    b.copy_from_slice(slice);
    Some(u64::from_le_bytes(b))
}

fn kv(pairs: &[(&str, String)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (k, v) in pairs {
        out.extend_from_slice(k.as_bytes());
        out.push(0);
        out.extend_from_slice(v.as_bytes());
        out.push(0);
    }
    out
}

struct OpenFile {
    bytes: Arc<Vec<u8>>,
    position: usize,
}

/// AFC over the CrashReports directory.
pub(crate) async fn serve(phone: &SimPhone, mut stream: BoxStream) -> std::io::Result<()> {
    let mut files: HashMap<u64, OpenFile> = HashMap::new();
    let mut next_fd = 3u64;
    for _ in 0..MAX_REQUESTS {
        let Some(packet) = read_packet(&mut stream).await? else {
            return Ok(());
        };
        let n = packet.number;
        match packet.operation {
            op::READ_DIR
                if phone
                    .take_hostile(|h| (*h == Hostile::AfcLength).then_some(()))
                    .is_some() =>
            {
                // A whole length smaller than the header's: a lying length.
                stream.write_all(&lying_header(n)).await?;
                stream.flush().await?;
            }
            op::READ_DIR => match components(&packet.header).and_then(|p| lookup(phone, &p)) {
                Some(Node::Dir(children)) => {
                    send(&mut stream, n, op::DATA, &[], &dir_listing(children)).await?;
                }
                Some(Node::File(_)) => send_status(&mut stream, n, status::INVALID_ARG).await?,
                None => send_status(&mut stream, n, status::OBJECT_NOT_FOUND).await?,
            },
            op::GET_FILE_INFO => match components(&packet.header).and_then(|p| lookup(phone, &p)) {
                Some(node) => {
                    send(&mut stream, n, op::DATA, &[], &file_info(phone, &node)).await?;
                }
                None => send_status(&mut stream, n, status::OBJECT_NOT_FOUND).await?,
            },
            op::FILE_OPEN => match open(phone, &packet.header, &mut files, &mut next_fd) {
                Ok(fd) => send(&mut stream, n, op::FILE_OPEN_RES, &fd.to_le_bytes(), &[]).await?,
                Err(code) => send_status(&mut stream, n, code).await?,
            },
            op::READ => {
                let fd = u64_at(&packet.header, 0).unwrap_or(0);
                let want = u64_at(&packet.header, 8).unwrap_or(0) as usize;
                match files.get_mut(&fd) {
                    Some(file) => {
                        send(&mut stream, n, op::DATA, &[], &file.read(want)).await?;
                    }
                    None => send_status(&mut stream, n, status::INVALID_ARG).await?,
                }
            }
            op::FILE_TELL => match files.get(&u64_at(&packet.header, 0).unwrap_or(0)) {
                Some(file) => {
                    let at = file.position as u64;
                    send(&mut stream, n, op::FILE_TELL_RES, &at.to_le_bytes(), &[]).await?;
                }
                None => send_status(&mut stream, n, status::INVALID_ARG).await?,
            },
            op::FILE_SEEK => {
                let fd = u64_at(&packet.header, 0).unwrap_or(0);
                let whence = u64_at(&packet.header, 8).unwrap_or(0);
                let offset = u64_at(&packet.header, 16).unwrap_or(0) as i64;
                match files.get_mut(&fd) {
                    Some(file) => {
                        file.seek(whence, offset);
                        send_status(&mut stream, n, status::SUCCESS).await?;
                    }
                    None => send_status(&mut stream, n, status::INVALID_ARG).await?,
                }
            }
            op::FILE_CLOSE => {
                let code = match files.remove(&u64_at(&packet.header, 0).unwrap_or(0)) {
                    Some(_) => status::SUCCESS,
                    None => status::INVALID_ARG,
                };
                send_status(&mut stream, n, code).await?;
            }
            op::REMOVE_PATH => {
                let removed = components(&packet.header)
                    .map(|p| phone.remove_report(&p.join("/")))
                    .unwrap_or(false);
                let code = if removed {
                    status::SUCCESS
                } else {
                    status::OBJECT_NOT_FOUND
                };
                send_status(&mut stream, n, code).await?;
            }
            op::GET_DEV_INFO => {
                send(&mut stream, n, op::DATA, &[], &dev_info(phone)).await?;
            }
            other => {
                tracing::debug!(operation = other, "AFC: unsupported operation");
                send_status(&mut stream, n, status::OP_NOT_SUPPORTED).await?;
            }
        }
    }
    Ok(())
}

/// An AFC header whose whole length is smaller than the header itself: a lying length.
fn lying_header(number: u64) -> Vec<u8> {
    let mut out = Vec::new();
    for word in [MAGIC, HEADER - 8, HEADER, number, op::DATA] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    out
}

/// A directory's names as `READ_DIR` answers: `.`, `..`, then its children, each ended by NUL.
fn dir_listing(children: BTreeSet<String>) -> Vec<u8> {
    let mut names = vec![".".to_owned(), "..".to_owned()];
    names.extend(children);
    let mut payload = Vec::new();
    for name in names {
        payload.extend_from_slice(name.as_bytes());
        payload.push(0);
    }
    payload
}

/// `GET_FILE_INFO`'s answer for a node: size, blocks, links, type and times.
fn file_info(phone: &SimPhone, node: &Node) -> Vec<u8> {
    let (size, kind, written) = match node {
        Node::Dir(children) => (64 + 32 * children.len() as u64, "S_IFDIR", None),
        Node::File(f) => (
            phone.claimed_file_size().unwrap_or(f.bytes.len() as u64),
            "S_IFREG",
            Some(f.written),
        ),
    };
    let nanos = written
        .unwrap_or(UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000))
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos()
        .to_string();
    kv(&[
        ("st_size", size.to_string()),
        ("st_blocks", size.div_ceil(512).to_string()),
        ("st_nlink", if kind == "S_IFDIR" { "2" } else { "1" }.into()),
        ("st_ifmt", kind.into()),
        ("st_mtime", nanos.clone()),
        ("st_birthtime", nanos),
    ])
}

/// `FILE_OPEN` for reading (mode 1): the new descriptor, or the status refusing it.
fn open(
    phone: &SimPhone,
    header: &[u8],
    files: &mut HashMap<u64, OpenFile>,
    next_fd: &mut u64,
) -> Result<u64, u64> {
    let mode = u64_at(header, 0).unwrap_or(0);
    let node = header
        .get(8..)
        .and_then(components)
        .and_then(|p| lookup(phone, &p));
    match (mode, node) {
        (1, Some(Node::File(file))) => {
            phone.record_open(&format!("afc:open:{}", file.path), None);
            let fd = *next_fd;
            *next_fd += 1;
            files.insert(
                fd,
                OpenFile {
                    bytes: file.bytes.clone(),
                    position: 0,
                },
            );
            Ok(fd)
        }
        (1, Some(Node::Dir(_))) => Err(status::OBJECT_IS_DIR),
        (1, None) => Err(status::OBJECT_NOT_FOUND),
        _ => Err(status::PERM_DENIED),
    }
}

/// `GET_DEV_INFO`'s answer: the model and the file system's sizes.
fn dev_info(phone: &SimPhone) -> Vec<u8> {
    kv(&[
        ("Model", phone.profile().product_type),
        ("FSTotalBytes", "127989493760".into()),
        ("FSFreeBytes", "63994746880".into()),
        ("FSBlockSize", "4096".into()),
    ])
}

impl OpenFile {
    /// Up to `want` bytes (at most 1 MiB) from the position, which moves past them.
    fn read(&mut self, want: usize) -> Vec<u8> {
        let start = self.position.min(self.bytes.len());
        let end = (start + want.min(1 << 20)).min(self.bytes.len());
        self.position = end;
        self.bytes[start..end].to_vec()
    }

    /// Moves the position: from the start (`whence` 0), the position (1) or the end (2).
    fn seek(&mut self, whence: u64, offset: i64) {
        let base = match whence {
            1 => self.position as i64,
            2 => self.bytes.len() as i64,
            _ => 0,
        };
        self.position = (base + offset).max(0) as usize;
    }
}
