//! Two simulated iPhones (`phonelogs-iossim`), each behind its own usbmuxd on a loopback port,
//! read through one gateway given both addresses the way `--usbmuxd A --usbmuxd B` builds its
//! drivers (`bins/phonelogs-mcp/src/main.rs`, `phone_drivers`: `UsbmuxdBackend::parse` of each
//! address, one `LockdownPhone` each). Every phone is listed as `usbmuxd-address/UDID`; an app's
//! lines are read from each phone by that name and from it alone; when both usbmuxd serve the
//! same UDID, the bare UDID is the catalog's `ambiguous_device` error naming both; one usbmuxd
//! going away fails only its own phone, with an error naming that usbmuxd, and its phone
//! comes back when it is served again on the same address.
//!
//! Everything on the wire is the simulator's and idevice's (the real usbmuxd client, lockdown
//! over TLS from the simulator's pair record, os_trace_relay per pid): nothing is faked beside
//! the driver.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use phonelogs_driver::{AppLogger, DeviceState};
use phonelogs_gateway::{
    Agent, Gateway, LogsRequest, LogsResponse, Mode, Session, Status, TaskSpec, catalog,
};
use phonelogs_ios::{LockdownPhone, UsbmuxdBackend};
use phonelogs_iossim::{IosSim, Level, Profile, SimPhone};

/// Crash Test, a development build on the simulated phone: its reads need no approval.
const CRASH_TEST: &str = "dev.phonelogs.crashtest";
const UDID_A: &str = "00008101-000A0000000000AA";
const UDID_B: &str = "00008101-000B0000000000BB";

/// A simulated iPhone with the default apps under `udid`, served on a loopback usbmuxd, with
/// Crash Test running; its lines carry `canary`.
struct Served {
    phone: SimPhone,
    sim: Option<IosSim>,
    address: String,
    canary: String,
}

impl Served {
    async fn start(udid: &str, canary: &str) -> Served {
        let phone = SimPhone::empty(Profile {
            udid: udid.into(),
            ..Profile::default()
        });
        for app in phonelogs_iossim::model::default_apps() {
            phone.install(app);
        }
        phone.launch(CRASH_TEST).unwrap();
        let sim = IosSim::bind_loopback(None, phone.clone()).await.unwrap();
        let address = sim.addr();
        Served {
            phone,
            sim: Some(sim),
            address,
            canary: canary.to_owned(),
        }
    }

    /// The name the gateway gives its phone: `address/UDID`.
    fn name(&self) -> String {
        format!("{}/{}", self.address, self.phone.profile().udid)
    }

    /// Crash Test logs a line carrying this phone's canary.
    fn log(&self, n: usize) {
        let pid = self.phone.pid_of(CRASH_TEST).unwrap();
        let text = format!("{} line {n}", self.canary);
        self.phone
            .log(pid, Level::Default, Some((CRASH_TEST, "Canary")), &text);
    }

    /// This usbmuxd goes away: its listener and every connection through it end.
    async fn stop(&mut self) {
        if let Some(sim) = self.sim.take() {
            sim.shutdown().await;
        }
    }

    /// The same phone served again on the same address.
    async fn serve_again(&mut self) {
        let port = self.address.rsplit_once(':').unwrap().1.parse().unwrap();
        let sim = IosSim::bind_loopback(Some(port), self.phone.clone())
            .await
            .unwrap();
        assert_eq!(sim.addr(), self.address);
        self.sim = Some(sim);
    }
}

/// One driver per address, as `phone_drivers` builds them for `--usbmuxd A --usbmuxd B`.
fn gateway(addresses: &[&str]) -> Gateway {
    let mut builder = Gateway::builder();
    for address in addresses {
        let mux = UsbmuxdBackend::parse(address).unwrap();
        builder = builder.driver(Arc::new(LockdownPhone::new(Arc::new(mux))) as Arc<dyn AppLogger>);
    }
    builder.build().unwrap()
}

async fn read(session: &Session, device: &str) -> LogsResponse {
    let mut request = LogsRequest::new(CRASH_TEST);
    request.device = Some(device.to_owned());
    request.since = Some("1h".into());
    session.logs(request).await
}

/// Reads `phone` by `device` until its canary shows (an iPhone has no history: the first read
/// starts following the app, and the lines come after), logging a new line each round. Every
/// answer must be `ok` and hold none of `others`' canaries.
async fn read_until_canary(
    session: &Session,
    device: &str,
    phone: &Served,
    others: &[&Served],
) -> LogsResponse {
    for n in 0..100 {
        let got = read(session, device).await;
        assert_eq!(got.status, Status::Ok, "{device}: {}", got.message);
        for other in others {
            assert!(
                !got.log.contains(&other.canary),
                "{device}: {} leaked into {:?}",
                other.canary,
                got.log
            );
        }
        if got.log.contains(&phone.canary) {
            return got;
        }
        phone.log(n);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{device}: {} never came", phone.canary);
}

async fn listed(gateway: &Gateway) -> Vec<(String, Option<String>, DeviceState)> {
    let list = gateway.device_list().await;
    let mut names: Vec<(String, Option<String>, DeviceState)> = list
        .devices
        .iter()
        .map(|d| {
            (
                d.info.id.to_string(),
                d.source.clone(),
                d.info.state.clone(),
            )
        })
        .collect();
    names.sort_by(|a, b| a.0.cmp(&b.0));
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_usbmuxd_two_iphones_named_read_and_one_going_away() {
    let mut a = Served::start(UDID_A, "canary-iphone-a").await;
    let b = Served::start(UDID_B, "canary-iphone-b").await;
    let gateway = gateway(&[&a.address, &b.address]);
    let session = gateway.start_task(TaskSpec::new(Agent::new("lab-agent", Mode::Full)));

    // Both listed, each with the usbmuxd it comes from.
    let mut expected = vec![
        (a.name(), Some(a.address.clone()), DeviceState::Online),
        (b.name(), Some(b.address.clone()), DeviceState::Online),
    ];
    expected.sort_by(|x, y| x.0.cmp(&y.0));
    assert_eq!(listed(&gateway).await, expected);

    // Each phone's lines, read by its qualified name, and only its own.
    read_until_canary(&session, &a.name(), &a, &[&b]).await;
    read_until_canary(&session, &b.name(), &b, &[&a]).await;
    // A UDID only one usbmuxd serves, while both answer, names that phone.
    read_until_canary(&session, UDID_B, &b, &[&a]).await;

    // A's usbmuxd goes away: only A's phone fails, with an error naming A's usbmuxd.
    a.stop().await;
    let failed = read(&session, &a.name()).await;
    assert_eq!(failed.status, Status::Error, "{}", failed.message);
    assert!(
        failed.message.contains(&a.address) && failed.message.contains("usbmuxd"),
        "{}",
        failed.message
    );
    assert!(failed.log.is_empty(), "{:?}", failed.log);
    b.log(1_000);
    read_until_canary(&session, &b.name(), &b, &[&a]).await;
    let list = gateway.device_list().await;
    assert_eq!(list.devices.len(), 1, "{:?}", list.devices);
    assert_eq!(list.devices[0].info.id.as_str(), b.name());
    assert_eq!(list.failures.len(), 1, "{:?}", list.failures);
    assert_eq!(list.failures[0].source.as_deref(), Some(a.address.as_str()));
    // While A is down, B's bare UDID is no longer known to be one phone (A might serve it too):
    // an error naming where it could be, and B's phone is not read in its place.
    let bare = read(&session, UDID_B).await;
    assert_eq!(bare.status, Status::Error, "{}", bare.message);
    for wanted in [format!("{}/{UDID_B}", a.address), b.name()] {
        assert!(bare.message.contains(&wanted), "{}", bare.message);
    }
    assert!(!bare.log.contains(&b.canary), "{:?}", bare.log);

    // Served again on the same address, its phone comes back, and its app's new lines with it.
    a.serve_again().await;
    assert_eq!(listed(&gateway).await, expected);
    read_until_canary(&session, &a.name(), &a, &[&b]).await;
    read_until_canary(&session, &b.name(), &b, &[&a]).await;
    session.end().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_udid_behind_two_usbmuxd_is_named_by_each_and_bare_is_ambiguous() {
    let a = Served::start(UDID_A, "canary-same-udid-on-a").await;
    let b = Served::start(UDID_A, "canary-same-udid-on-b").await;
    let gateway = gateway(&[&a.address, &b.address]);
    let session = gateway.start_task(TaskSpec::new(Agent::new("lab-agent", Mode::Full)));

    let names: Vec<String> = listed(&gateway).await.into_iter().map(|d| d.0).collect();
    let mut expected = vec![a.name(), b.name()];
    expected.sort();
    assert_eq!(names, expected);
    assert_ne!(a.name(), b.name());

    // The bare UDID is an error naming both, in the catalog's words; nothing is read.
    let both = read(&session, UDID_A).await;
    assert_eq!(both.status, Status::Error, "{}", both.message);
    assert!(
        both.message
            .contains(&catalog::ambiguous_device(&[a.name(), b.name()])),
        "{}",
        both.message
    );
    assert!(both.log.is_empty(), "{:?}", both.log);

    // Each qualified name reaches its own phone only.
    read_until_canary(&session, &a.name(), &a, &[&b]).await;
    read_until_canary(&session, &b.name(), &b, &[&a]).await;
    session.end().await;
}
