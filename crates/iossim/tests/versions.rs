//! The iOS releases the simulator plays, checked through pymobiledevice3's lockdown client:
//! `ProductVersion` and `BuildVersion`, `DeveloperModeStatus`, and which services lockdown's
//! `StartService` starts or refuses on each release, with the developer disk image mounted or
//! not and Developer Mode on or off.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::*;
use phonelogs_iossim::IosVersion;

const INSTRUMENTS: &str = "com.apple.instruments.remoteserver";
const INSTRUMENTS_SECURE: &str = "com.apple.instruments.remoteserver.DVTSecureSocketProxy";
const CORE_DEVICE_PROXY: &str = "com.apple.internal.devicecompute.CoreDeviceProxy";
const OS_TRACE: &str = "com.apple.os_trace_relay";

/// pymobiledevice3's lockdown client: the phone's versions and Developer Mode, then one
/// `StartService` per name, each printed as `started` or the exception it raised.
const PROBE: &str = r#"
import asyncio, json, sys
from pymobiledevice3.lockdown import create_using_usbmux

async def main():
    lockdown = await create_using_usbmux()
    out = {
        "ProductVersion": lockdown.product_version,
        "BuildVersion": await lockdown.get_value(key="BuildVersion"),
        "DeveloperModeStatus": await lockdown.get_developer_mode_status(),
    }
    for name in sys.argv[1:]:
        try:
            service = await lockdown.start_lockdown_service(name)
            out[name] = "started"
            await service.close()
        except Exception as e:
            out[name] = f"{type(e).__name__}: {e}"
    await lockdown.close()
    print(json.dumps(out))

asyncio.run(main())
"#;

async fn probe(python: &std::path::Path, sim: &phonelogs_iossim::IosSim) -> serde_json::Value {
    let home = tempfile::tempdir().unwrap();
    let mut args = vec!["-c", PROBE];
    args.extend([INSTRUMENTS, INSTRUMENTS_SECURE, CORE_DEVICE_PROXY, OS_TRACE]);
    let output = run(
        &python.to_path_buf(),
        &args,
        sim,
        home.path(),
        Duration::from_secs(60),
    )
    .await;
    let (out, err) = text(&output);
    assert!(output.status.success(), "stdout {out}\nstderr {err}");
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"))
}

fn refused(answer: &serde_json::Value) -> bool {
    answer
        .as_str()
        .is_some_and(|a| a != "started" && a.contains("InvalidService"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_release_reports_itself_and_starts_what_it_has() {
    let Some(python) = pymobiledevice3_python() else {
        return;
    };
    for ios in IosVersion::ALL {
        let sim = sim_on(ios).await;
        let got = probe(&python, &sim).await;
        assert_eq!(got["ProductVersion"], ios.product_version(), "{got}");
        assert_eq!(got["BuildVersion"], ios.build_version(), "{got}");
        assert_eq!(got["DeveloperModeStatus"], true, "{got}");
        assert_eq!(got[OS_TRACE], "started", "{ios}: {got}");
        // Lockdown's instruments: iOS 16 with the disk image only.
        let instruments = ios == IosVersion::V16_7_10;
        for name in [INSTRUMENTS, INSTRUMENTS_SECURE] {
            assert_eq!(got[name] == "started", instruments, "{ios}: {got}");
            assert_eq!(refused(&got[name]), !instruments, "{ios}: {got}");
        }
        // CoreDeviceProxy from 17.4; none on 16 and on 17.0 to 17.3.
        let proxy = ios >= IosVersion::V17_4;
        assert_eq!(got[CORE_DEVICE_PROXY] == "started", proxy, "{ios}: {got}");
        assert_eq!(refused(&got[CORE_DEVICE_PROXY]), !proxy, "{ios}: {got}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_disk_image_and_developer_mode_change_what_lockdown_starts() {
    let Some(python) = pymobiledevice3_python() else {
        return;
    };
    let sim = sim_on(IosVersion::V16_7_10).await;
    let phone = sim.phone().clone();
    phone.unmount_ddi();
    let got = probe(&python, &sim).await;
    assert!(refused(&got[INSTRUMENTS]), "{got}");
    assert_eq!(got[OS_TRACE], "started", "{got}");
    phone.mount_ddi().unwrap();
    let got = probe(&python, &sim).await;
    assert_eq!(got[INSTRUMENTS], "started", "{got}");
    // Developer Mode off: the phone restarted, the image is gone and cannot be mounted.
    phone.set_developer_mode(false);
    assert!(phone.mount_ddi().is_err());
    let got = probe(&python, &sim).await;
    assert_eq!(got["DeveloperModeStatus"], false, "{got}");
    assert!(refused(&got[INSTRUMENTS]), "{got}");
    assert_eq!(got[OS_TRACE], "started", "{got}");
}
