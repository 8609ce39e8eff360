//! The wire pieces this crate speaks itself, over any byte stream: os_trace_relay's
//! `StartActivity` and its entry frames, its `PidList`, installation_proxy's `Lookup` with the attributes that
//! carry `get-task-allow`, and the crash report mover's `ping`.
//!
//! They are written over `AsyncRead + AsyncWrite` so that tests run them over
//! `tokio::io::duplex` with byte sequences built from the documented formats, and the real
//! driver runs them over the (TLS) socket idevice opened through lockdown. idevice's own
//! os_trace client is not used for entries: it refuses level `0x03` and misreads microseconds
//! (see the iOS notes, §6.4 and §6.5); entries are parsed by `phonelogs-crash`, bounds-checked.

use phonelogs_crash::ostrace::{OsTraceEntry, OsTraceRecord, parse_record};
use phonelogs_driver::AppId;
use plist::{Dictionary, Value};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::error::Error;
use crate::services::AppRecord;

/// os_trace_relay's service name.
pub const OS_TRACE_RELAY: &str = "com.apple.os_trace_relay";
/// installation_proxy's service name.
pub const INSTALLATION_PROXY: &str = "com.apple.mobile.installation_proxy";
/// The crash report mover's service name.
pub const CRASH_REPORT_MOVER: &str = "com.apple.crashreportmover";
/// The image mounter's service name.
pub const IMAGE_MOUNTER: &str = "com.apple.mobile.mobile_image_mounter";

/// `MessageFilter` 0xFFFF: every message type.
pub const MESSAGE_FILTER_ALL: i64 = 0xFFFF;
/// `StreamFlags` 0x3C (payload, historical, call stack, debug), as Console.app sends.
pub const STREAM_FLAGS: i64 = 0x3C;
/// The largest plist this crate accepts in one message (a Lookup of one app is a few KB).
pub const MAX_PLIST_BYTES: usize = 16 * 1024 * 1024;
/// The largest os_trace record accepted: far above any log message (os_log keeps a message
/// to about 1 KiB; the record's paths are at most 64 KiB each).
pub const MAX_ENTRY_BYTES: usize = 1024 * 1024;

/// The attributes asked of installation_proxy: enough to know the bundle's path, its names,
/// whether it is a system app, and `get-task-allow` (in `Entitlements`).
pub const LOOKUP_ATTRIBUTES: [&str; 8] = [
    "CFBundleIdentifier",
    "CFBundleVersion",
    "CFBundleExecutable",
    "CFBundleDisplayName",
    "CFBundleName",
    "Path",
    "ApplicationType",
    "Entitlements",
];

fn io(service: &'static str) -> impl Fn(std::io::Error) -> Error {
    move |source| Error::Io { service, source }
}

/// Writes a plist message: a big-endian `u32` length, then the XML plist.
pub async fn write_plist<S: AsyncWrite + Unpin>(
    stream: &mut S,
    service: &'static str,
    value: &Value,
) -> Result<(), Error> {
    let mut body = Vec::new();
    plist::to_writer_xml(&mut body, value).map_err(|source| Error::Plist { service, source })?;
    let len = u32::try_from(body.len())
        .map_err(|_| Error::protocol(service, "a request larger than 4 GiB"))?;
    stream
        .write_all(&len.to_be_bytes())
        .await
        .map_err(io(service))?;
    stream.write_all(&body).await.map_err(io(service))?;
    stream.flush().await.map_err(io(service))?;
    Ok(())
}

/// Reads a plist message: a big-endian `u32` length, then an XML or binary plist dictionary.
pub async fn read_plist<S: AsyncRead + Unpin>(
    stream: &mut S,
    service: &'static str,
) -> Result<Dictionary, Error> {
    let len = stream.read_u32().await.map_err(io(service))? as usize;
    if len > MAX_PLIST_BYTES {
        return Err(Error::protocol(service, format!("a {len}-byte plist")));
    }
    let mut body = vec![0; len];
    stream.read_exact(&mut body).await.map_err(io(service))?;
    let value: Value =
        plist::from_bytes(&body).map_err(|source| Error::Plist { service, source })?;
    value
        .into_dictionary()
        .ok_or_else(|| Error::protocol(service, "a plist that is not a dictionary"))
}

/// The `StartActivity` request for one pid. There is no variant for all processes.
pub fn start_activity_request(pid: u32) -> Value {
    let mut request = Dictionary::new();
    request.insert("Request".into(), Value::from("StartActivity"));
    request.insert("Pid".into(), Value::from(i64::from(pid)));
    request.insert("MessageFilter".into(), Value::from(MESSAGE_FILTER_ALL));
    request.insert("StreamFlags".into(), Value::from(STREAM_FLAGS));
    Value::Dictionary(request)
}

/// Sends `StartActivity` for `pid` and reads the answer: a marker byte, then a big-endian
/// length-prefixed plist whose `Status` must be `RequestSuccessful`.
pub async fn start_activity<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    pid: u32,
) -> Result<(), Error> {
    write_plist(stream, OS_TRACE_RELAY, &start_activity_request(pid)).await?;
    // The marker's value is not checked, as in both public clients.
    stream.read_u8().await.map_err(io(OS_TRACE_RELAY))?;
    let answer = read_plist(stream, OS_TRACE_RELAY).await?;
    match answer.get("Status").and_then(Value::as_string) {
        Some("RequestSuccessful") => Ok(()),
        Some(other) => Err(Error::protocol(
            OS_TRACE_RELAY,
            format!("StartActivity answered {other:?}"),
        )),
        None => Err(Error::protocol(
            OS_TRACE_RELAY,
            "StartActivity answered without a Status",
        )),
    }
}

/// The `PidList` request: the phone's processes by pid, with their names.
pub fn pid_list_request() -> Value {
    let mut request = Dictionary::new();
    request.insert("Request".into(), Value::from("PidList"));
    Value::Dictionary(request)
}

/// Sends `PidList` and reads the answer: a marker byte, then a big-endian length-prefixed plist
/// whose `Payload` maps each pid (a decimal string) to a dictionary with its `ProcessName`
/// (pymobiledevice3 `services/os_trace.py` `get_pid_list`; idevice
/// `services/os_trace_relay.rs` `get_pid_list`). idevice's own `get_pid_list` is not used: it
/// returns the pids and drops the names, and the names are what the follower matches.
///
/// An entry whose key is not a pid, or without a name, is skipped (and logged), so one odd
/// entry does not lose the list; an answer without a `Payload` is an error.
pub async fn pid_list<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
) -> Result<Vec<(u32, String)>, Error> {
    write_plist(stream, OS_TRACE_RELAY, &pid_list_request()).await?;
    // The marker's value is not checked, as in both public clients.
    stream.read_u8().await.map_err(io(OS_TRACE_RELAY))?;
    let answer = read_plist(stream, OS_TRACE_RELAY).await?;
    let Some(payload) = answer.get("Payload").and_then(Value::as_dictionary) else {
        return Err(Error::protocol(
            OS_TRACE_RELAY,
            "PidList answered without a Payload",
        ));
    };
    let mut processes = Vec::with_capacity(payload.len());
    for (key, value) in payload {
        let name = value
            .as_dictionary()
            .and_then(|d| d.get("ProcessName"))
            .and_then(Value::as_string);
        match (key.trim().parse::<u32>(), name) {
            (Ok(pid), Some(name)) if pid > 0 => processes.push((pid, name.to_owned())),
            _ => tracing::debug!(%key, "skipping a PidList entry without a pid and a name"),
        }
    }
    Ok(processes)
}

/// Reads one entry frame: `0x02`, a little-endian `u32` length, the entry. `None` when the
/// phone closed the stream between frames.
pub async fn read_entry_frame<S: AsyncRead + Unpin>(
    stream: &mut S,
) -> Result<Option<Vec<u8>>, Error> {
    let mut marker = [0u8; 1];
    match stream.read(&mut marker).await.map_err(io(OS_TRACE_RELAY))? {
        0 => return Ok(None),
        _ if marker[0] != 0x02 => {
            return Err(Error::protocol(
                OS_TRACE_RELAY,
                format!("an entry frame starts with 0x{:02x}, not 0x02", marker[0]),
            ));
        }
        _ => {}
    }
    let len = stream.read_u32_le().await.map_err(io(OS_TRACE_RELAY))? as usize;
    if len > MAX_ENTRY_BYTES {
        return Err(Error::protocol(
            OS_TRACE_RELAY,
            format!("a {len}-byte entry"),
        ));
    }
    let mut entry = vec![0; len];
    stream
        .read_exact(&mut entry)
        .await
        .map_err(io(OS_TRACE_RELAY))?;
    Ok(Some(entry))
}

/// The records of one stream read and left out so far: records of another type than an
/// os_log message (activity, trace, user action), and records Apple's client would refuse
/// (another version or header size, or a length that breaks its size rule; see
/// `phonelogs_crash::ostrace`). Neither ever becomes a line.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Skipped {
    /// Records of another type, skipped.
    pub other_types: u64,
    /// Records that break Apple's rules, skipped.
    pub broken: u64,
}

/// Reads frames until one is a log message. Another record type or a record that breaks
/// Apple's rules is skipped and counted in `skipped` (the first broken one of a stream is
/// logged as a warning, the rest at debug), so one odd record never ends or blocks the
/// stream; `None` when the stream ends.
pub async fn next_entry<S: AsyncRead + Unpin>(
    stream: &mut S,
    skipped: &mut Skipped,
) -> Result<Option<OsTraceEntry>, Error> {
    next_entry_counted(stream, skipped, None).await
}

/// [`next_entry`], also counting in `refused` each record Apple's client would refuse as it is
/// skipped, so that a stream that sends nothing else is told to the agent while it is read
/// (never an empty answer without a reason).
pub async fn next_entry_counted<S: AsyncRead + Unpin>(
    stream: &mut S,
    skipped: &mut Skipped,
    refused: Option<&std::sync::atomic::AtomicU64>,
) -> Result<Option<OsTraceEntry>, Error> {
    loop {
        let Some(frame) = read_entry_frame(stream).await? else {
            return Ok(None);
        };
        match parse_record(&frame) {
            Ok(OsTraceRecord::Log(entry)) => return Ok(Some(entry)),
            Ok(OsTraceRecord::Other { kind }) => {
                skipped.other_types += 1;
                tracing::debug!(
                    kind,
                    skipped = skipped.other_types,
                    "skipping an os_trace record that is not a log message"
                );
            }
            Err(error) => {
                skipped.broken += 1;
                if let Some(refused) = refused {
                    refused.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                if skipped.broken == 1 {
                    tracing::warn!(%error, "skipping an os_trace record Apple's client would refuse");
                } else {
                    tracing::debug!(%error, skipped = skipped.broken, "skipping an os_trace record Apple's client would refuse");
                }
            }
        }
    }
}

/// The `Lookup` request for one bundle id, asking for [`LOOKUP_ATTRIBUTES`].
pub fn lookup_request(app: &AppId) -> Value {
    let mut options = Dictionary::new();
    options.insert("ApplicationType".into(), Value::from("Any"));
    options.insert(
        "BundleIDs".into(),
        Value::Array(vec![Value::from(app.as_str())]),
    );
    options.insert(
        "ReturnAttributes".into(),
        Value::Array(LOOKUP_ATTRIBUTES.iter().map(|a| Value::from(*a)).collect()),
    );
    let mut request = Dictionary::new();
    request.insert("Command".into(), Value::from("Lookup"));
    request.insert("ClientOptions".into(), Value::Dictionary(options));
    Value::Dictionary(request)
}

/// Sends `Lookup` for `app` and reads the answer: `None` when the app is not installed.
pub async fn lookup<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    app: &AppId,
) -> Result<Option<AppRecord>, Error> {
    write_plist(stream, INSTALLATION_PROXY, &lookup_request(app)).await?;
    // installd may answer in several messages; the last one says `Status: Complete`.
    for _ in 0..64 {
        let answer = read_plist(stream, INSTALLATION_PROXY).await?;
        if let Some(error) = answer.get("Error").and_then(Value::as_string) {
            return Err(Error::protocol(
                INSTALLATION_PROXY,
                format!("Lookup failed: {error}"),
            ));
        }
        if let Some(result) = answer.get("LookupResult").and_then(Value::as_dictionary) {
            return Ok(result
                .get(app.as_str())
                .and_then(Value::as_dictionary)
                .and_then(|attrs| app_record(app, attrs)));
        }
        if answer.get("Status").and_then(Value::as_string) == Some("Complete") {
            return Ok(None);
        }
    }
    Err(Error::protocol(
        INSTALLATION_PROXY,
        "Lookup never completed",
    ))
}

/// Reads an app's attributes. An app without a `Path` cannot be followed and reads as absent.
pub fn app_record(app: &AppId, attrs: &Dictionary) -> Option<AppRecord> {
    let text = |key: &str| attrs.get(key).and_then(Value::as_string).map(str::to_owned);
    let path = text("Path")?;
    let dev_build = attrs
        .get("Entitlements")
        .and_then(Value::as_dictionary)
        .and_then(|e| e.get("get-task-allow"))
        .and_then(Value::as_boolean)
        .unwrap_or(false);
    let system = text("ApplicationType").as_deref() == Some("System")
        || app.as_str().starts_with("com.apple.");
    Some(AppRecord {
        bundle_id: app.clone(),
        path,
        executable: text("CFBundleExecutable"),
        label: text("CFBundleDisplayName").or_else(|| text("CFBundleName")),
        system,
        dev_build,
        version: text("CFBundleVersion"),
    })
}

/// Waits for the crash report mover's `ping` (optionally followed by a NUL, which is left
/// unread).
pub async fn await_ping<S: AsyncRead + Unpin>(stream: &mut S) -> Result<(), Error> {
    let mut ping = [0u8; 4];
    stream
        .read_exact(&mut ping)
        .await
        .map_err(io(CRASH_REPORT_MOVER))?;
    if &ping == b"ping" {
        Ok(())
    } else {
        Err(Error::protocol(
            CRASH_REPORT_MOVER,
            format!("answered {ping:02x?}, not \"ping\""),
        ))
    }
}

/// Whether an image of `image_type` (`Personalized` on iOS 17 and later, `Developer` before)
/// is mounted: `LookupImage`'s `ImageSignature`, then `CopyDevices`' `EntryList` (an image can
/// be mounted while `LookupImage` gives an empty signature: pymobiledevice3
/// `services/mobile_image_mounter.py` `is_image_mounted`). Written here rather than with
/// idevice's `mobile_image_mounter` feature, which pulls in `sha2` 0.10 for uploading images
/// this crate never uploads.
pub async fn image_mounted<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    image_type: &str,
) -> Result<bool, Error> {
    let mut lookup = Dictionary::new();
    lookup.insert("Command".into(), Value::from("LookupImage"));
    lookup.insert("ImageType".into(), Value::from(image_type));
    write_plist(stream, IMAGE_MOUNTER, &Value::Dictionary(lookup)).await?;
    let answer = read_plist(stream, IMAGE_MOUNTER).await?;
    let present = answer
        .get("ImagePresent")
        .and_then(Value::as_boolean)
        .unwrap_or(true);
    let signed = match answer.get("ImageSignature") {
        Some(Value::Array(signatures)) => !signatures.is_empty(),
        Some(Value::Data(signature)) => !signature.is_empty(),
        _ => false,
    };
    if present && signed {
        return Ok(true);
    }
    let mut copy = Dictionary::new();
    copy.insert("Command".into(), Value::from("CopyDevices"));
    write_plist(stream, IMAGE_MOUNTER, &Value::Dictionary(copy)).await?;
    let answer = read_plist(stream, IMAGE_MOUNTER).await?;
    Ok(answer
        .get("EntryList")
        .and_then(Value::as_array)
        .is_some_and(|entries| {
            entries.iter().any(|entry| {
                entry
                    .as_dictionary()
                    .and_then(|d| d.get("DiskImageType"))
                    .and_then(Value::as_string)
                    == Some(image_type)
            })
        }))
}
