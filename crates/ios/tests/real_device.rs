//! Runs against a real iPhone when `PHONELOGS_IOS_UDID` names one (through the host's
//! usbmuxd, or `USBMUXD_SOCKET_ADDRESS`); otherwise it says why it skipped. Set
//! `PHONELOGS_IOS_APP` to a bundle id installed on the phone to read its lines and reports.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use phonelogs_driver::{AppId, AppLogger, DeviceId, LogQuery};
use phonelogs_ios::{LockdownPhone, UsbmuxdBackend};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_iphone_when_one_is_named() {
    let Ok(udid) = std::env::var("PHONELOGS_IOS_UDID") else {
        eprintln!(
            "skipped: set PHONELOGS_IOS_UDID to the UDID of a paired, unlocked iPhone to run this test"
        );
        return;
    };
    let device = DeviceId::new(udid);
    let phone = LockdownPhone::new(Arc::new(UsbmuxdBackend::from_env()));
    let devices = phone.devices().await.expect("usbmuxd lists devices");
    eprintln!("devices: {devices:?}");
    assert!(
        devices.iter().any(|d| d.id == device),
        "{device} is not listed by usbmuxd"
    );
    let Ok(app) = std::env::var("PHONELOGS_IOS_APP") else {
        eprintln!("skipped the app part: set PHONELOGS_IOS_APP to an installed bundle id");
        return;
    };
    let app = AppId::parse(&app).expect("a bundle id");
    let info = phone
        .app_info(&device, &app)
        .await
        .expect("installation_proxy Lookup");
    eprintln!("app_info: {info:?}");
    let since = time::OffsetDateTime::now_utc() - time::Duration::hours(24);
    let crashes = phone
        .app_crashes(&device, &app, since, 3)
        .await
        .expect("crash reports");
    eprintln!("{} crash reports in 24 h", crashes.len());
    let _ = phone
        .app_logs(&device, &app, &LogQuery::since(since, 200))
        .await
        .expect("start the follower");
    tokio::time::sleep(Duration::from_secs(10)).await;
    let logs = phone
        .app_logs(&device, &app, &LogQuery::since(since, 200))
        .await
        .expect("lines");
    eprintln!(
        "{} lines in 10 s; follower: {:?}",
        logs.lines.len(),
        phone.follower_status(&device, &app)
    );
    phone
        .listener()
        .expect("a listener")
        .stop_app_logs(&device, &app)
        .await
        .expect("stop");
}

#[tokio::test]
async fn a_missing_usbmuxd_says_what_to_do() {
    let backend = UsbmuxdBackend::with_addr(idevice::usbmuxd::UsbmuxdAddr::UnixSocket(
        "/nonexistent/phonelogs-usbmuxd".into(),
    ));
    let phone = LockdownPhone::new(Arc::new(backend));
    let error = phone.devices().await.unwrap_err();
    assert_eq!(error.kind(), phonelogs_driver::ErrorKind::DeviceUnavailable);
    assert!(
        error.to_string().contains("install and start usbmuxd"),
        "{error}"
    );
}
