//! Issue 38, item 5: a phone (or a farm's usbmuxd) that sends hostile bytes gets an error, and
//! the process keeps serving other sessions. The simulated iPhone sends the bytes
//! ([`phonelogs_iossim::Hostile`]); idevice, with the fixes in `patches/idevice` (see its
//! `PATCHES.md`), reads them. Without those fixes the nested arrays overflow the stack (an
//! abort of this whole test binary), the short lengths are subtractions that panic, and the
//! lying lengths are reserved or waited for.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use idevice::IdeviceError;
use idevice::IdeviceService;
use idevice::crashreportcopymobile::CrashReportCopyMobileClient;
use idevice::dvt::device_info::DeviceInfoClient;
use idevice::dvt::remote_server::RemoteServerClient;
use idevice::lockdown::LockdownClient;
use idevice::provider::UsbmuxdProvider;
use idevice::rsd::RsdHandshake;
use idevice::usbmuxd::UsbmuxdAddr;
use phonelogs_iossim::{Fault, Hostile, IosSim, IosVersion, SimPhone};

/// A hang guard only: every hostile answer below is refused as soon as it is read.
const GUARD: Duration = Duration::from_secs(20);

async fn sim(ios: IosVersion) -> IosSim {
    IosSim::bind_loopback(None, SimPhone::default_phone_on(ios))
        .await
        .unwrap()
}

fn addr(sim: &IosSim) -> UsbmuxdAddr {
    UsbmuxdAddr::TcpSocket(sim.tcp_addr().unwrap())
}

async fn provider(sim: &IosSim) -> UsbmuxdProvider {
    let mut mux = addr(sim).connect(1).await.unwrap();
    let device = mux.get_devices().await.unwrap().remove(0);
    device.to_provider(addr(sim), "hostile-device")
}

async fn rsd_handshake(sim: &IosSim) -> Result<RsdHandshake, IdeviceError> {
    let stream = tokio::net::TcpStream::connect(sim.rsd_addr().unwrap())
        .await
        .unwrap();
    tokio::time::timeout(GUARD, RsdHandshake::new(stream))
        .await
        .expect("an answer, not a hang")
}

/// ~1.2 MB of arrays nested 100,000 deep: an error, then the next handshake is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deeply_nested_xpc_is_an_error_and_the_next_session_is_served() {
    let sim = sim(IosVersion::V26_1).await;
    sim.phone()
        .inject_fault(Fault::Hostile(Hostile::XpcNesting(100_000)));
    let refused = rsd_handshake(&sim).await;
    assert!(
        matches!(
            refused,
            Err(IdeviceError::Xpc(_)) | Err(IdeviceError::UnexpectedResponse(_))
        ),
        "{refused:?}"
    );
    let served = rsd_handshake(&sim).await.unwrap();
    assert!(!served.services.is_empty());
}

/// A body length near `u64::MAX` (which wrapped `body_len + 24`) and one of a terabyte (which
/// was waited for, buffering, without end) are errors at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lying_xpc_body_length_is_an_error() {
    let sim = sim(IosVersion::V26_1).await;
    for len in [u64::MAX - 8, 1 << 40] {
        sim.phone()
            .inject_fault(Fault::Hostile(Hostile::XpcBodyLength(len)));
        let refused = rsd_handshake(&sim).await;
        assert!(refused.is_err(), "{len}: {:?}", refused.map(|h| h.uuid));
    }
    assert!(rsd_handshake(&sim).await.is_ok());
}

/// A plist frame that claims 4 GiB is refused before anything is reserved.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_plist_frame_is_refused() {
    let sim = sim(IosVersion::V16_7_10).await;
    let provider = provider(&sim).await;
    sim.phone()
        .inject_fault(Fault::Hostile(Hostile::PlistLength(u32::MAX)));
    let mut lockdown = LockdownClient::connect(&provider).await.unwrap();
    let refused = tokio::time::timeout(GUARD, lockdown.get_value(Some("ProductType"), None))
        .await
        .expect("an answer, not a hang");
    assert!(
        matches!(&refused, Err(IdeviceError::UnexpectedResponse(m)) if m.contains("plist message of 4294967295 bytes")),
        "{refused:?}"
    );
    let mut lockdown = LockdownClient::connect(&provider).await.unwrap();
    let value = lockdown.get_value(Some("ProductType"), None).await.unwrap();
    assert_eq!(value.as_string(), Some("iPhone14,2"));
}

/// A usbmuxd packet whose length is shorter than its own header (an unchecked `u32 - 16`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_usbmuxd_packet_shorter_than_its_header_is_an_error() {
    let sim = sim(IosVersion::V16_7_10).await;
    sim.phone()
        .inject_fault(Fault::Hostile(Hostile::UsbmuxdLength(8)));
    let mut mux = addr(&sim).connect(1).await.unwrap();
    let refused = tokio::time::timeout(GUARD, mux.get_devices())
        .await
        .expect("an answer, not a hang");
    assert!(
        matches!(&refused, Err(IdeviceError::UnexpectedResponse(m)) if m.contains("shorter than its 16-byte header")),
        "{refused:?}"
    );
    let mut mux = addr(&sim).connect(2).await.unwrap();
    assert_eq!(mux.get_devices().await.unwrap().len(), 1);
}

/// An AFC packet whose whole length is below its header's (an unchecked `u64` subtraction).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_afc_packet_shorter_than_its_header_is_an_error() {
    let sim = sim(IosVersion::V16_7_10).await;
    let provider = provider(&sim).await;
    sim.phone().inject_fault(Fault::Hostile(Hostile::AfcLength));
    let mut crashes = CrashReportCopyMobileClient::connect(&provider)
        .await
        .unwrap();
    let refused = tokio::time::timeout(GUARD, crashes.afc_client.list_dir("/"))
        .await
        .expect("an answer, not a hang");
    assert!(refused.is_err(), "{refused:?}");
    let mut crashes = CrashReportCopyMobileClient::connect(&provider)
        .await
        .unwrap();
    assert!(crashes.afc_client.list_dir("/").await.is_ok());
}

/// A DTX message (instruments, iOS 16's process list) whose aux part is said to be longer than
/// the whole payload: an error, where the unchecked `u32` subtraction and slices panicked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dtx_message_with_lying_lengths_is_an_error() {
    type Instruments = RemoteServerClient<Box<dyn idevice::ReadWrite>>;
    let sim = sim(IosVersion::V16_7_10).await;
    let provider = provider(&sim).await;
    sim.phone().inject_fault(Fault::Hostile(Hostile::DtxLength));
    let mut client = Instruments::connect(&provider).await.unwrap();
    let refused = tokio::time::timeout(GUARD, async {
        let mut info = DeviceInfoClient::new(&mut client).await?;
        info.running_processes().await
    })
    .await
    .expect("an answer, not a hang");
    assert!(refused.is_err(), "{refused:?}");
    // The connection's reader has exited now: a request made after that is an error at once
    // (it used to register a reply slot no one would fill, and wait for ever).
    let again = tokio::time::timeout(GUARD, DeviceInfoClient::new(&mut client))
        .await
        .expect("an answer on a closed connection, not a hang");
    assert!(again.is_err());
    let mut client = Instruments::connect(&provider).await.unwrap();
    let mut info = DeviceInfoClient::new(&mut client).await.unwrap();
    assert!(!info.running_processes().await.unwrap().is_empty());
}
