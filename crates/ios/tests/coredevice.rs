//! The driver's CoreDevice process list against the simulated iPhone (issue 38): the form the
//! app service advertises in RSD's `Features` (the streamed `streamprocesslist` on 26.1, whose
//! plain `listprocesses` never answers; the plain one on 18.6), a late answer after the
//! driver's timeout that must not be read as the next poll's, and answers split over many
//! HTTP/2 frames. The simulator counts which forms were called (`SimPhone::opened`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use idevice::usbmuxd::UsbmuxdAddr;
use phonelogs_driver::DeviceId;
use phonelogs_ios::UsbmuxdBackend;
use phonelogs_ios::services::{DeviceBackend, DeviceServices};
use phonelogs_ios::sources::{ProcessImage, ProcessList, ProcessSource};
use phonelogs_iossim::{Fault, IosSim, IosVersion, SimPhone};

const UDID: &str = "00008101-000A1234567890AB";
const APPSERVICE: &str = "com.apple.coredevice.appservice";

/// One phone's services, as a follower holds them from its start: every listing through them
/// is a poll of the same phone (its tunnel, its app service connection, its instruments
/// channel kept between polls).
async fn driver(sim: &IosSim) -> DeviceServices {
    let addr = sim.tcp_addr().expect("a loopback simulator");
    UsbmuxdBackend::with_addr(UsbmuxdAddr::TcpSocket(addr))
        .connect(&DeviceId::new(UDID))
        .await
        .unwrap()
}

/// How often the app service was asked for `feature`.
fn asked(phone: &SimPhone, feature: &str) -> usize {
    let name = format!("{APPSERVICE}/{feature}");
    phone.opened().iter().filter(|o| o.service == name).count()
}

/// One poll of the phone's processes, as the follower makes it.
async fn listing(services: &DeviceServices) -> ProcessList {
    services
        .processes
        .processes()
        .await
        .unwrap_or_else(|e| panic!("no process list: {e}"))
}

fn has_pid(list: &ProcessList, pid: u32) -> bool {
    list.processes.iter().any(|p| p.pid == pid)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_26_1_processes_are_listed_through_the_streamed_form_only() {
    let phone = SimPhone::default_phone_on(IosVersion::V26_1);
    let sim = IosSim::bind_loopback(None, phone.clone()).await.unwrap();
    let pid = phone.launch("dev.phonelogs.crashtest").unwrap();
    let driver = driver(&sim).await;
    for _ in 0..2 {
        let list = listing(&driver).await;
        assert_eq!(list.source, ProcessSource::CoreDevice, "{list:?}");
        assert!(has_pid(&list, pid), "{list:?}");
    }
    assert_eq!(asked(&phone, "streamprocesslist"), 2);
    assert_eq!(asked(&phone, "listprocesses"), 0);
    assert_eq!(asked(&phone, "listapps"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_18_6_the_plain_form_is_used_as_advertised() {
    let phone = SimPhone::default_phone_on(IosVersion::V18_6);
    let sim = IosSim::bind_loopback(None, phone.clone()).await.unwrap();
    let pid = phone.launch("dev.phonelogs.crashtest").unwrap();
    let list = listing(&driver(&sim).await).await;
    assert_eq!(list.source, ProcessSource::CoreDevice, "{list:?}");
    assert!(has_pid(&list, pid), "{list:?}");
    assert_eq!(asked(&phone, "listprocesses"), 1);
    assert_eq!(asked(&phone, "streamprocesslist"), 0);
}

/// The phone answers a listing after the driver gave up on it (its source timeout): the next
/// poll opens a new connection and shows the processes of now, not the late answer (idevice
/// numbers every request alike, so a kept connection would hand the late answer to the next
/// request, and the list would lag one poll).
async fn a_late_answer_is_not_read_as_the_next_polls(ios: IosVersion, feature: &str) {
    let phone = SimPhone::default_phone_on(ios);
    let sim = IosSim::bind_loopback(None, phone.clone()).await.unwrap();
    let driver = driver(&sim).await;
    assert_eq!(listing(&driver).await.source, ProcessSource::CoreDevice);
    phone.inject_fault(Fault::HoldReply(feature.into()));
    // This listing's CoreDevice answer is held: CoreDevice times out, PidList answers.
    let held = listing(&driver).await;
    assert_eq!(held.source, ProcessSource::PidList, "{held:?}");
    assert_eq!(asked(&phone, feature), 2);
    let pid = phone.launch("dev.phonelogs.crashtest").unwrap();
    // CoreDevice failed a moment ago: it is asked again once its retry time has passed.
    let mut list = listing(&driver).await;
    for _ in 0..100 {
        if list.source == ProcessSource::CoreDevice {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        list = listing(&driver).await;
    }
    assert_eq!(list.source, ProcessSource::CoreDevice, "{list:?}");
    assert!(has_pid(&list, pid), "the late answer was read: {list:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_streamed_answer_is_not_read_as_the_next_polls() {
    a_late_answer_is_not_read_as_the_next_polls(IosVersion::V26_1, "streamprocesslist").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_plain_answer_is_not_read_as_the_next_polls() {
    a_late_answer_is_not_read_as_the_next_polls(IosVersion::V18_6, "listprocesses").await;
}

/// A long process list pushed in 64-byte HTTP/2 frames (the RSD handshake too) arrives whole,
/// on both forms.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_split_over_many_frames_arrive_whole() {
    for ios in [IosVersion::V18_6, IosVersion::V26_1] {
        let phone = SimPhone::default_phone_on(ios);
        phone.inject_fault(Fault::SplitFrames(64));
        let sim = IosSim::bind_loopback(None, phone.clone()).await.unwrap();
        let pids: Vec<(u32, String)> = (0..400)
            .map(|n| {
                let path = format!("/usr/libexec/daemon{n}");
                (phone.spawn_executable(&path), path)
            })
            .collect();
        let list = listing(&driver(&sim).await).await;
        assert_eq!(list.source, ProcessSource::CoreDevice, "{ios}");
        assert_eq!(list.processes.len(), phone.processes().len(), "{ios}");
        for (pid, path) in pids {
            let found = list.processes.iter().find(|p| p.pid == pid).unwrap();
            assert_eq!(found.image, ProcessImage::Path(format!("file://{path}")));
        }
    }
}

/// iOS 16's instruments: one connection and one `deviceinfo` channel for every poll, not a
/// channel opened (and never closed) per poll.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_16_7_the_instruments_channel_is_opened_once_and_reused() {
    let phone = SimPhone::default_phone_on(IosVersion::V16_7_10);
    let sim = IosSim::bind_loopback(None, phone.clone()).await.unwrap();
    let driver = driver(&sim).await;
    let mut pids = Vec::new();
    for _ in 0..3 {
        pids.push(phone.spawn_executable("/usr/libexec/polled"));
        let list = listing(&driver).await;
        assert_eq!(list.source, ProcessSource::Instruments, "{list:?}");
        // Each poll answers with the processes of now.
        assert!(pids.iter().all(|pid| has_pid(&list, *pid)), "{list:?}");
    }
    let count = |service: &str| {
        phone
            .opened()
            .iter()
            .filter(|o| o.service == service)
            .count()
    };
    assert_eq!(count("com.apple.instruments.server.services.deviceinfo"), 1);
    assert_eq!(count("com.apple.instruments.remoteserver"), 1);
}
