//! A running tunneld first (issue 38): the driver asks the tunnelds it knows for the phone's
//! tunnel before building its own, and reads RSD through the one listed. The tunneld here is a
//! small HTTP server answering `GET /` with the JSON pymobiledevice3's `remote tunneld` serves
//! (`tunneld/server.py` `list_tunnels`: `{udid: [{"tunnel-address", "tunnel-port",
//! "interface", "auxiliary-metadata", "origin"}]}`), in front of the simulator's RSD on
//! loopback, which stands for the tunnel's far end. Also: a refused CoreDeviceProxy gets its
//! advice from where it failed, not from the error's name.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use idevice::usbmuxd::UsbmuxdAddr;
use phonelogs_driver::{AppId, AppLogger, DeviceId, LogNotice, LogQuery, LogResult};
use phonelogs_ios::sources::{Blocker, ProcessSource};
use phonelogs_ios::{LockdownPhone, UsbmuxdBackend};
use phonelogs_iossim::{CORE_DEVICE_PROXY, Fault, IosSim, IosVersion, Level, SimPhone};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const UDID: &str = "00008101-000A1234567890AB";
const APP: &str = "dev.phonelogs.crashtest";

/// A tunneld answering every `GET /` with `listing`; stops when dropped.
struct Tunneld {
    addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Tunneld {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn tunneld(listing: serde_json::Value) -> Tunneld {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let body = listing.to_string();
    let task = tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let body = body.clone();
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                assert!(request.starts_with(b"GET / HTTP/1.1\r\n"), "{request:?}");
                // What uvicorn answers for FastAPI's JSON response.
                let answer = format!(
                    "HTTP/1.1 200 OK\r\nserver: uvicorn\r\ncontent-length: {}\r\ncontent-type: application/json\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(answer.as_bytes()).await;
            });
        }
    });
    Tunneld { addr, task }
}

/// pymobiledevice3's listing of one tunnel to `udid` whose RSD is at `rsd`.
fn listing(udid: &str, rsd: SocketAddr) -> serde_json::Value {
    serde_json::json!({
        udid: [{
            "tunnel-address": rsd.ip().to_string(),
            "tunnel-port": rsd.port(),
            "interface": "utun4",
            "auxiliary-metadata": null,
            "origin": null,
        }]
    })
}

fn driver(sim: &IosSim, tunnelds: &[SocketAddr]) -> LockdownPhone {
    let addr = sim.tcp_addr().expect("a loopback simulator");
    let backend = UsbmuxdBackend::with_addr(UsbmuxdAddr::TcpSocket(addr)).with_tunnelds(tunnelds);
    LockdownPhone::new(Arc::new(backend))
}

fn texts(result: &LogResult) -> Vec<&str> {
    result.lines.iter().map(|l| l.text.as_str()).collect()
}

/// The app's lines of the last minute, read again until `done` (10 s at most).
async fn read_until(driver: &LockdownPhone, done: impl Fn(&LogResult) -> bool) -> LogResult {
    let since = time::OffsetDateTime::now_utc() - time::Duration::minutes(1);
    let query = LogQuery::since(since, 1000);
    let (device, app) = (DeviceId::new(UDID), AppId::new(APP));
    let mut last = None;
    for _ in 0..400 {
        let result = driver.app_logs(&device, &app, &query).await.unwrap();
        if done(&result) {
            return result;
        }
        last = Some(result);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "never: {:?}",
        last.map(|r| (
            texts(&r).into_iter().map(str::to_owned).collect::<Vec<_>>(),
            r.notices
        ))
    );
}

async fn until(what: &str, done: impl Fn() -> bool) {
    for _ in 0..200 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for {what}");
}

/// A phone behind a tunneld: its widget (found only through CoreDevice's paths) is read, the
/// process list came from CoreDevice, and the driver never started CoreDeviceProxy itself.
async fn behind_a_tunneld(ios: IosVersion) {
    let phone = SimPhone::default_phone_on(ios);
    let mut sim = IosSim::bind_loopback(None, phone.clone()).await.unwrap();
    let rsd = sim.listen_rsd(None).await.unwrap();
    let tunneld = tunneld(listing(UDID, rsd)).await;
    // A tunneld that lists other phones only comes first and is passed over.
    let other = tunneld_other().await;
    let driver = driver(&sim, &[other.addr, tunneld.addr]);
    let pid = phone.launch(APP).unwrap();
    let widget = phone
        .launch_extension(APP, "dev.phonelogs.crashtest.widget")
        .unwrap();
    read_until(&driver, |_| true).await;
    until("the app's and the widget's streams", || {
        let streamed = phone.streamed_pids();
        streamed.contains(&i64::from(pid)) && streamed.contains(&i64::from(widget))
    })
    .await;
    phone.log(pid, Level::Error, Some(("t", "p")), "app line");
    phone.log(widget, Level::Error, Some(("t", "p")), "widget line");
    let got = read_until(&driver, |r| {
        texts(r).contains(&"widget line") && texts(r).contains(&"app line")
    })
    .await;
    let status = driver
        .follower_status(&DeviceId::new(UDID), &AppId::new(APP))
        .unwrap();
    assert_eq!(status.source, Some(ProcessSource::CoreDevice), "{ios}");
    // Nothing said unreadable (the app's own `<private>` values may be said).
    assert!(
        !got.notices.iter().any(|n| matches!(
            n,
            LogNotice::Unreadable { .. } | LogNotice::PartlyUnreadable { .. }
        )),
        "{ios}: {:?}",
        got.notices
    );
    let opened: Vec<String> = phone.opened().into_iter().map(|o| o.service).collect();
    assert!(
        !opened.iter().any(|s| s == CORE_DEVICE_PROXY),
        "{ios}: {opened:?}"
    );
    assert!(
        opened
            .iter()
            .any(|s| s.starts_with("com.apple.coredevice.appservice/")),
        "{ios}: {opened:?}"
    );
}

async fn tunneld_other() -> Tunneld {
    let elsewhere: SocketAddr = "127.0.0.1:9".parse().unwrap();
    tunneld(listing("00008030-0000000000000001", elsewhere)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_17_2_phone_behind_a_tunneld_reads_its_widget_with_the_disk_image_mounted() {
    behind_a_tunneld(IosVersion::V17_2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_26_1_phone_behind_a_tunneld_is_read_through_it_not_our_own_tunnel() {
    behind_a_tunneld(IosVersion::V26_1).await;
}

/// 17.2 with no tunneld listing it: CoreDevice's miss says that tunneld is the way, with the
/// command.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_17_2_without_a_tunneld_the_miss_names_tunneld_with_its_command() {
    let phone = SimPhone::default_phone_on(IosVersion::V17_2);
    let sim = IosSim::bind_loopback(None, phone.clone()).await.unwrap();
    let other = tunneld_other().await;
    let check = driver(&sim, &[other.addr])
        .check_phone(&DeviceId::new(UDID))
        .await
        .unwrap();
    let list = check.listing.unwrap();
    assert_eq!(list.source, ProcessSource::PidList);
    let miss = &list.passed_over[0];
    assert_eq!(miss.source, ProcessSource::CoreDevice);
    assert_eq!(
        miss.blocker,
        Blocker::NoTunnel {
            version: "17.2".into()
        }
    );
    assert!(
        miss.blocker
            .cause()
            .contains("no running tunneld lists this iPhone"),
        "{}",
        miss.blocker.cause()
    );
    assert!(
        miss.blocker
            .fix()
            .contains("`sudo pymobiledevice3 remote tunneld`"),
        "{}",
        miss.blocker.fix()
    );
}

/// A CoreDeviceProxy refused on 17.4+ under another name than `InvalidService`
/// (`ServiceProhibited`, `ServiceLimit`: libimobiledevice's lockdown error names) is a refusal
/// with the phone's words, never "update to 17.4"; on 17.2 any refusal is the missing tunnel.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_core_device_proxy_is_advised_by_where_it_failed() {
    for (ios, error) in [
        (IosVersion::V18_6, "ServiceProhibited"),
        (IosVersion::V26_1, "ServiceLimit"),
        (IosVersion::V17_2, "ServiceProhibited"),
    ] {
        let phone = SimPhone::default_phone_on(ios);
        phone.inject_fault(Fault::RefuseService {
            service: CORE_DEVICE_PROXY.into(),
            error: error.into(),
        });
        let sim = IosSim::bind_loopback(None, phone.clone()).await.unwrap();
        let check = driver(&sim, &[])
            .check_phone(&DeviceId::new(UDID))
            .await
            .unwrap();
        let list = check.listing.unwrap();
        let miss = &list.passed_over[0];
        assert_eq!(miss.source, ProcessSource::CoreDevice, "{ios}");
        if ios == IosVersion::V17_2 {
            assert!(
                matches!(miss.blocker, Blocker::NoTunnel { .. }),
                "{ios}: {:?}",
                miss.blocker
            );
        } else {
            let cause = miss.blocker.cause();
            assert!(
                cause.contains("refused CoreDeviceProxy") && cause.contains(error),
                "{ios}: {cause}"
            );
            assert!(!miss.blocker.fix().contains("17.4"), "{ios}");
        }
    }
}

/// pymobiledevice3's `remote tunneld` if installed (as `crates/iossim/tests` find it), when this
/// process may make the kernel TUN its tunnels need (root and `/dev/net/tun`); else why not.
fn real_tunneld() -> Result<std::path::PathBuf, String> {
    let name = "pymobiledevice3";
    let mut candidates: Vec<std::path::PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).map(|d| d.join(name)).collect())
        .unwrap_or_default();
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    candidates.push(root.join("target/ci-venv/bin").join(name));
    if let Some(venv) = std::env::var_os("PHONELOGS_IOS_VENV") {
        candidates.push(std::path::PathBuf::from(venv).join("bin").join(name));
    }
    let tool = candidates
        .into_iter()
        .find(|p| p.is_file())
        .ok_or("pymobiledevice3 is not installed")?;
    let root_user = std::fs::read_to_string("/proc/self/status")
        .is_ok_and(|s| s.lines().any(|l| l.starts_with("Uid:\t0\t")));
    if !root_user || std::fs::metadata("/dev/net/tun").is_err() {
        return Err("tunneld's TUN needs root and /dev/net/tun".into());
    }
    Ok(tool)
}

/// The real pymobiledevice3 `remote tunneld` (its usbmux monitor only, over TCP) in front of
/// the simulated 18.6 phone: it starts CoreDeviceProxy over lockdown and a kernel TUN; the
/// driver finds the phone in its listing and reads the app's widget through that tunnel,
/// never starting a CoreDeviceProxy of its own (the phone counts one, tunneld's).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_pymobiledevice3_tunneld_carries_the_driver() {
    let tool = match real_tunneld() {
        Ok(tool) => tool,
        Err(why) => {
            if std::env::var("PHONELOGS_REQUIRE_TUNNELD").is_ok_and(|v| v == "1") {
                panic!("PHONELOGS_REQUIRE_TUNNELD=1 but {why}");
            }
            eprintln!("skipping: {why}");
            return;
        }
    };
    let phone = SimPhone::default_phone_on(IosVersion::V18_6);
    let sim = IosSim::bind_loopback(None, phone.clone()).await.unwrap();
    let port = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let home = tempfile::tempdir().unwrap();
    let _tunneld = tokio::process::Command::new(&tool)
        .args(["remote", "tunneld", "--port", &port.to_string()])
        .args(["--no-usb", "--no-wifi", "--no-mobdev2", "-p", "tcp"])
        .args(["--usbmux-address", &sim.addr()])
        .env("HOME", home.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start pymobiledevice3 remote tunneld");
    let tunneld: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    // Wait for its listing to name the phone (its tunnel is made in the background).
    let mut listed = false;
    for _ in 0..300 {
        let asked = tokio::time::timeout(
            Duration::from_secs(2),
            idevice::tunneld::get_tunneld_devices(tunneld),
        )
        .await;
        if let Ok(Ok(devices)) = asked
            && devices.contains_key(UDID)
        {
            listed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(listed, "tunneld never listed the phone");
    let driver = driver(&sim, &[tunneld]);
    let pid = phone.launch(APP).unwrap();
    let widget = phone
        .launch_extension(APP, "dev.phonelogs.crashtest.widget")
        .unwrap();
    read_until(&driver, |_| true).await;
    until("the app's and the widget's streams", || {
        let streamed = phone.streamed_pids();
        streamed.contains(&i64::from(pid)) && streamed.contains(&i64::from(widget))
    })
    .await;
    phone.log(widget, Level::Error, Some(("t", "p")), "widget line");
    read_until(&driver, |r| texts(r).contains(&"widget line")).await;
    let proxies = phone
        .opened()
        .iter()
        .filter(|o| o.service == CORE_DEVICE_PROXY)
        .count();
    assert_eq!(proxies, 1, "{:?}", phone.opened());
}
