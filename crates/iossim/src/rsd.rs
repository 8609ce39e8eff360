//! RemoteServiceDiscovery (iOS 17 and later): the RemoteXPC handshake that lists the phone's
//! services with their ports, and the services behind those ports. The same code serves RSD
//! inside the CoreDevice tunnel (`coredevice`) and on plain loopback ports (`IosSim::listen_rsd`),
//! only the port numbers differ ([`Ports`]).
//!
//! What is listed (the catalog below): the lockdown services' shims (`….shim.remote`) always;
//! `com.apple.coredevice.appservice` and `com.apple.instruments.dtservicehub` only while the
//! developer disk image is mounted (they come from it: pymobiledevice3#862, #1744). A shim reads
//! `RSDCheckin`, answers `RSDCheckin` then `StartService`, and runs the very service code lockdown
//! starts (`services::serve`, told it came through RSD). The appservice answers
//! `com.apple.coredevice.feature.listprocesses` with `processTokens`, and on iOS 26 advertises
//! and answers the streamed `streamprocesslist` and `streamapplist` while the plain
//! `listprocesses` and `listapps` never answer, as iOS 26's do; dtservicehub is
//! instruments' DTX service, the one lockdown starts on iOS 16. Shapes and sources:
//! `testdata/iossim/README.md`.

use plist::Value;

use crate::model::{Fault, Hostile, Signing, SimPhone};
use crate::remotexpc::{Connection, REPLY, ROOT};
use crate::services::{self, BoxStream, Device, INSTRUMENTS, Via, dict, read_plist, write_plist};
use crate::xpc::{Message, Xpc, flags};

/// The entitlement every shim is listed with.
const TRUSTED: &str = "com.apple.mobile.lockdown.remote.trusted";
/// The appservice's name.
pub(crate) const APPSERVICE: &str = "com.apple.coredevice.appservice";
/// Instruments over RSD.
pub(crate) const DTSERVICEHUB: &str = "com.apple.instruments.dtservicehub";
/// The prefix of every CoreDevice feature's name.
const FEATURE_PREFIX: &str = "com.apple.coredevice.feature.";
/// How many elements one streamed push carries.
const PUSH_BATCH: usize = 16;

/// What runs behind a listed name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A lockdown service, after `RSDCheckin`.
    Shim(&'static str),
    /// CoreDevice's app service (RemoteXPC), from the disk image.
    AppService,
    /// Instruments' DTX, from the disk image, with no check-in.
    DtServiceHub,
}

/// Every service RSD can list, in the order of the handshake.
const CATALOG: [(&str, Kind); 7] = [
    (
        "com.apple.os_trace_relay.shim.remote",
        Kind::Shim("com.apple.os_trace_relay"),
    ),
    (
        "com.apple.syslog_relay.shim.remote",
        Kind::Shim("com.apple.syslog_relay"),
    ),
    (
        "com.apple.crashreportmover.shim.remote",
        Kind::Shim("com.apple.crashreportmover"),
    ),
    (
        "com.apple.crashreportcopymobile.shim.remote",
        Kind::Shim("com.apple.crashreportcopymobile"),
    ),
    (
        "com.apple.mobile.installation_proxy.shim.remote",
        Kind::Shim("com.apple.mobile.installation_proxy"),
    ),
    (APPSERVICE, Kind::AppService),
    (DTSERVICEHUB, Kind::DtServiceHub),
];

/// The names RSD can list (some only with the disk image).
pub(crate) fn names() -> impl Iterator<Item = &'static str> {
    CATALOG.iter().map(|(name, _)| *name)
}

fn kind(name: &str) -> Option<Kind> {
    CATALOG.iter().find(|(n, _)| *n == name).map(|(_, k)| *k)
}

/// Whether the phone lists `name` now: shims always, the disk image's services while it is
/// mounted.
pub(crate) fn listed(phone: &SimPhone, name: &str) -> bool {
    match kind(name) {
        Some(Kind::Shim(_)) => true,
        Some(Kind::AppService | Kind::DtServiceHub) => phone.ddi_mounted(),
        None => false,
    }
}

/// The port of RSD itself and of every service it can list, on one transport.
#[derive(Debug, Clone)]
pub(crate) struct Ports {
    pub rsd: u16,
    pub services: Vec<(&'static str, u16)>,
}

impl Ports {
    /// The name served on `port`, if any.
    pub(crate) fn service_at(&self, port: u16) -> Option<&'static str> {
        self.services
            .iter()
            .find(|(_, p)| *p == port)
            .map(|(name, _)| *name)
    }

    /// The tunnel's ports: RSD on 58783 as over USB-NCM (pymobiledevice3
    /// `remote_service_discovery.py`, `RSD_PORT`), the services from 55249 up as in the handshake
    /// pymobiledevice3's `misc/RemoteXPC.md` shows.
    pub(crate) fn tunnel() -> Ports {
        Ports {
            rsd: 58_783,
            services: names().zip(55_249u16..).collect(),
        }
    }
}

/// The RSD handshake on one connection: the phone's properties and its services now.
pub(crate) async fn serve_handshake(
    device: Device,
    stream: BoxStream,
    ports: Ports,
) -> std::io::Result<()> {
    let mut connection = Connection::accept(stream).await?;
    if let Some(size) = device.phone.split_frames() {
        connection.split_frames(size);
    }
    let mut answered = false;
    while let Some((_, message)) = connection.next().await? {
        let handshake = message
            .body
            .as_ref()
            .and_then(|b| b.get("MessageType"))
            .and_then(Xpc::as_str)
            == Some("Handshake");
        if handshake && !answered {
            if let Some(bytes) = device.phone.take_hostile(|h| match h {
                Hostile::XpcNesting(depth) => Some(Message::nested_arrays(*depth)),
                Hostile::XpcBodyLength(len) => Some(Message::claiming(*len)),
                _ => None,
            }) {
                connection.send_bytes(ROOT, bytes).await?;
                answered = true;
                continue;
            }
            let peer = peer_info(&device.phone, &ports);
            connection.send(ROOT, &Message::new(0, peer)).await?;
            answered = true;
        }
    }
    Ok(())
}

/// What the phone says about itself and its services (pymobiledevice3 `misc/RemoteXPC.md`).
fn peer_info(phone: &SimPhone, ports: &Ports) -> Xpc {
    let profile = phone.profile();
    let services = ports
        .services
        .iter()
        .filter(|(name, _)| listed(phone, name))
        .map(|(name, port)| ((*name).to_owned(), service_entry(phone, name, *port)))
        .collect();
    let properties = Xpc::dict([
        ("AppleInternal", Xpc::Bool(false)),
        ("BuildVersion", Xpc::string(profile.build_version())),
        ("CPUArchitecture", Xpc::string("arm64e")),
        ("DeviceClass", Xpc::string("iPhone")),
        ("DeviceColor", Xpc::string("1")),
        ("DeviceSupportsLockdown", Xpc::Bool(true)),
        ("HWModel", Xpc::string(profile.hardware_model.clone())),
        (
            "HumanReadableProductVersionString",
            Xpc::string(profile.product_version()),
        ),
        ("OSVersion", Xpc::string(profile.product_version())),
        ("ProductName", Xpc::string("iPhone OS")),
        ("ProductType", Xpc::string(profile.product_type.clone())),
        ("ReleaseType", Xpc::string("User")),
        ("RemoteXPCVersionFlags", Xpc::UInt64(0x0100_0000_0000_0006)),
        ("SensitivePropertiesVisible", Xpc::Bool(true)),
        ("UniqueChipID", Xpc::UInt64(0x000A_1234_5678_90AB)),
        ("UniqueDeviceID", Xpc::string(profile.udid.clone())),
    ]);
    Xpc::dict([
        ("MessageType", Xpc::string("Handshake")),
        ("MessagingProtocolVersion", Xpc::UInt64(7)),
        ("Properties", properties),
        ("Services", Xpc::Dictionary(services)),
        ("UUID", Xpc::string(device_uuid(&profile.udid))),
    ])
}

fn service_entry(phone: &SimPhone, name: &str, port: u16) -> Xpc {
    let port = Xpc::string(port.to_string());
    match kind(name) {
        Some(Kind::AppService) => Xpc::dict([
            (
                "Entitlement",
                Xpc::string("com.apple.private.CoreDevice.canInstallCustomerContent"),
            ),
            ("Port", port),
            (
                "Properties",
                Xpc::dict([
                    ("Features", features(phone)),
                    ("ServiceVersion", Xpc::Int64(1)),
                    ("UsesRemoteXPC", Xpc::Bool(true)),
                ]),
            ),
        ]),
        Some(Kind::DtServiceHub) => Xpc::dict([
            (
                "Entitlement",
                Xpc::string("com.apple.private.dt.instruments.dtservicehub.client"),
            ),
            ("Port", port),
            (
                "Properties",
                Xpc::dict([
                    (
                        "Features",
                        Xpc::Array(vec![Xpc::string("com.apple.dt.profile")]),
                    ),
                    ("version", Xpc::Int64(1)),
                ]),
            ),
        ]),
        _ => Xpc::dict([("Entitlement", Xpc::string(TRUSTED)), ("Port", port)]),
    }
}

/// A stable UUID for the phone's RSD identity, from its udid.
fn device_uuid(udid: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in udid.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    let l = h.rotate_left(29) ^ 0x5eed;
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        h >> 32,
        (h >> 16) & 0xffff,
        h & 0xfff,
        l & 0xfff,
        l >> 16
    )
}

/// One connection to a listed service's port.
pub(crate) async fn serve_service(device: Device, name: &'static str, stream: BoxStream) {
    if !listed(&device.phone, name) {
        // Not offered now (the disk image is not mounted): nothing listens there.
        tracing::debug!(name, "RSD: a connection to a service not offered now");
        return;
    }
    device.phone.record_open(name, None);
    let result = match kind(name) {
        Some(Kind::Shim(service)) => shim(device, service, stream).await,
        Some(Kind::AppService) => appservice(&device.phone, stream).await,
        Some(Kind::DtServiceHub) => {
            services::serve(device, INSTRUMENTS.into(), stream, Via::Rsd).await;
            Ok(())
        }
        None => Ok(()),
    };
    if let Err(error) = result {
        tracing::debug!(name, %error, "RSD service connection ended");
    }
}

/// `RSDCheckin`, then the lockdown service itself (idevice `lib.rs` `rsd_checkin`;
/// pymobiledevice3 `start_lockdown_service`).
async fn shim(device: Device, service: &'static str, mut stream: BoxStream) -> std::io::Result<()> {
    let Some(checkin) = read_plist(&mut stream).await? else {
        return Ok(());
    };
    if checkin.get("Request").and_then(Value::as_string) != Some("RSDCheckin") {
        return Err(services::invalid(
            "a shim connection without RSDCheckin".into(),
        ));
    }
    write_plist(&mut stream, &dict([("Request", Value::from("RSDCheckin"))])).await?;
    write_plist(
        &mut stream,
        &dict([("Request", Value::from("StartService"))]),
    )
    .await?;
    services::serve(device, service.into(), stream, Via::Rsd).await;
    Ok(())
}

/// CoreDevice's app service (pymobiledevice3 `app_service.py`, idevice
/// `core_device/app_service.rs`): `listprocesses` with `processTokens`; from iOS 26 also the
/// streamed `streamprocesslist` and `streamapplist` (pymobiledevice3 `core_device_service.py`
/// `stream_invoke`: the request's input wraps `actualInput` and a `streamProxy` with a
/// `sideChannel` UUID; the phone pushes messages keyed `CoreDevice.XPCMessageKey.
/// sideChannelStatus`, `pushing` with `elements`, then `finishStreaming`), while the plain
/// `listprocesses` and `listapps` are recorded and never answered, as iOS 26's are. Any other
/// feature is not advertised; a request for one ends the connection rather than inventing an
/// error the phone's format for which is not known here.
async fn appservice(phone: &SimPhone, stream: BoxStream) -> std::io::Result<()> {
    let mut connection = Connection::accept(stream).await?;
    let streamed = phone.profile().ios.has_streamed_lists();
    // An answer the phone was told to hold ([`Fault::HoldReply`]): sent, stale, before the
    // answer to the next request.
    let mut held: Vec<(u32, Message)> = Vec::new();
    while let Some((_, message)) = connection.next().await? {
        if let Some(size) = phone.split_frames() {
            connection.split_frames(size);
        }
        let Some(body) = &message.body else {
            continue;
        };
        let Some(feature) = body
            .get("CoreDevice.featureIdentifier")
            .and_then(Xpc::as_str)
        else {
            continue;
        };
        let Some(short) = feature.strip_prefix(FEATURE_PREFIX) else {
            tracing::debug!(feature, "appservice: a feature not offered");
            return Ok(());
        };
        if message.flags & flags::WANTING_REPLY == 0 || !offered(streamed, short) {
            tracing::debug!(feature, "appservice: a feature not offered");
            return Ok(());
        }
        phone.record_open(&format!("{APPSERVICE}/{short}"), None);
        let answer = match short {
            "listprocesses" | "listapps" if streamed => continue,
            "listprocesses" => {
                let output = Xpc::dict([("processTokens", process_tokens(phone))]);
                vec![(
                    REPLY,
                    Message::reply(message.id, Xpc::dict([("CoreDevice.output", output)])),
                )]
            }
            "streamprocesslist" => pushed(message.id, body, process_token_list(phone)),
            "streamapplist" => pushed(message.id, body, app_entries(phone)),
            _ => return Ok(()),
        };
        for (stream, message) in held.drain(..) {
            connection.send(stream, &message).await?;
        }
        if phone.take_fault(&Fault::HoldReply(short.to_owned())) {
            held = answer;
            continue;
        }
        for (stream, message) in &answer {
            connection.send(*stream, message).await?;
        }
    }
    Ok(())
}

/// Whether the appservice of this phone offers `feature` (without its prefix).
fn offered(streamed: bool, feature: &str) -> bool {
    match feature {
        "listprocesses" => true,
        "listapps" | "streamprocesslist" | "streamapplist" => streamed,
        _ => false,
    }
}

/// The appservice's `Features` in the RSD handshake.
fn features(phone: &SimPhone) -> Xpc {
    let streamed = phone.profile().ios.has_streamed_lists();
    let names = [
        "listprocesses",
        "listapps",
        "streamprocesslist",
        "streamapplist",
    ];
    Xpc::Array(
        names
            .into_iter()
            .filter(|name| offered(streamed, name))
            .map(|name| Xpc::string(format!("{FEATURE_PREFIX}{name}")))
            .collect(),
    )
}

/// A streamed answer: the elements pushed in batches of [`PUSH_BATCH`] on the root stream
/// (where idevice's `invoke_streaming_with_plist` reads them; pymobiledevice3 reads any
/// stream), each message echoing the side channel's UUID, then `finishStreaming`.
fn pushed(id: u64, request: &Xpc, elements: Vec<Xpc>) -> Vec<(u32, Message)> {
    let channel = request
        .get("CoreDevice.input")
        .and_then(|input| input.get("streamProxy"))
        .and_then(|proxy| proxy.get("sideChannel"))
        .cloned()
        .unwrap_or(Xpc::Null);
    let status = |status: Xpc| {
        let body = Xpc::dict([
            ("CoreDevice.XPCMessageKey.sideChannelStatus", status),
            ("XPCSideChannel.uniqueIdentifier", channel.clone()),
        ]);
        (ROOT, Message::new(id, body))
    };
    let mut out: Vec<(u32, Message)> = elements
        .chunks(PUSH_BATCH)
        .map(|batch| {
            let pushing = Xpc::dict([("elements", Xpc::Array(batch.to_vec()))]);
            status(Xpc::dict([("pushing", pushing)]))
        })
        .collect();
    out.push(status(Xpc::dict([(
        "finishStreaming",
        Xpc::Dictionary(Vec::new()),
    )])));
    out
}

/// The installed apps as `streamapplist` elements (the keys idevice's `AppListEntry` reads).
fn app_entries(phone: &SimPhone) -> Vec<Xpc> {
    phone
        .apps()
        .into_iter()
        .map(|app| {
            let system = app.signing == Signing::System;
            Xpc::dict([
                ("bundleIdentifier", Xpc::string(app.bundle_id.clone())),
                ("bundleVersion", Xpc::string(app.build.clone())),
                ("isAppClip", Xpc::Bool(false)),
                (
                    "isDeveloperApp",
                    Xpc::Bool(app.signing == Signing::Development),
                ),
                ("isFirstParty", Xpc::Bool(system)),
                ("isHidden", Xpc::Bool(false)),
                ("isInternal", Xpc::Bool(false)),
                ("isRemovable", Xpc::Bool(!system)),
                ("name", Xpc::string(app.name.clone())),
                ("path", Xpc::string(app.path.clone())),
                ("version", Xpc::string(app.version.clone())),
            ])
        })
        .collect()
}

/// Every process as a token: its pid and its executable as a `file://` URL.
fn process_tokens(phone: &SimPhone) -> Xpc {
    Xpc::Array(process_token_list(phone))
}

fn process_token_list(phone: &SimPhone) -> Vec<Xpc> {
    phone
        .processes()
        .into_iter()
        .map(|p| {
            Xpc::dict([
                ("processIdentifier", Xpc::Int64(i64::from(p.pid))),
                (
                    "executableURL",
                    Xpc::dict([("relative", Xpc::string(file_url(&p.executable)))]),
                ),
            ])
        })
        .collect()
}

/// A path as a `file://` URL, percent-encoding what a URL path may not hold.
fn file_url(path: &str) -> String {
    let mut url = String::from("file://");
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~!$&'()*+,;=:@".contains(&b) {
            url.push(char::from(b));
        } else {
            url.push_str(&format!("%{b:02X}"));
        }
    }
    url
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_become_file_urls() {
        assert_eq!(
            file_url("/private/var/containers/Bundle/Application/X/Crash Test.app/Crash Test"),
            "file:///private/var/containers/Bundle/Application/X/Crash%20Test.app/Crash%20Test"
        );
        assert_eq!(file_url("/a/é%"), "file:///a/%C3%A9%25");
    }

    #[test]
    fn the_disk_images_services_are_listed_only_while_it_is_mounted() {
        let phone = SimPhone::default_phone_on(crate::model::IosVersion::V26_1);
        let shown =
            |phone: &SimPhone| -> Vec<&str> { names().filter(|n| listed(phone, n)).collect() };
        assert!(shown(&phone).contains(&APPSERVICE));
        phone.unmount_ddi();
        let now = shown(&phone);
        assert!(
            !now.contains(&APPSERVICE) && !now.contains(&DTSERVICEHUB),
            "{now:?}"
        );
        assert!(now.contains(&"com.apple.os_trace_relay.shim.remote"));
    }

    #[test]
    fn the_handshake_uuid_is_stable_and_well_formed() {
        let a = device_uuid("00008101-000A1234567890AB");
        assert_eq!(a, device_uuid("00008101-000A1234567890AB"));
        assert_eq!(a.len(), 36);
        assert_eq!(a.matches('-').count(), 4);
    }
}
