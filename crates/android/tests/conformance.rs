//! The driver conformance suite against `AdbPhone` over the simulated phone loaded with
//! `Scenario::standard`: through the simulator's host-protocol front (no adb needed) and, when
//! `/usr/bin/adb` is installed, through a private real adb server, on the Android 10, 14 and 16
//! profiles and with the profile whose logcat ignores `--uid`.

// Tests may unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

mod common;

use common::{Front, ThroughAdb, standard_phone};
use phonelogs_adbsim::AndroidVersion;
use phonelogs_driver::DeviceId;
use phonelogs_driver::conformance::run_all;

const CASES: [(AndroidVersion, bool); 4] = [
    (AndroidVersion::Android10, false),
    (AndroidVersion::Android14, false),
    (AndroidVersion::Android16, false),
    (AndroidVersion::Android14, true),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_through_the_host_front() {
    for (android, ignores_uid) in CASES {
        let serial = DeviceId::new(phonelogs_adbsim::Profile::for_android(android).serial);
        let (phone, scenario) = standard_phone(android, ignores_uid, &serial);
        let front = Front::start(phone, |_| {}).await;
        let failures = run_all(&front.driver, &scenario).await;
        assert!(
            failures.is_empty(),
            "Android {android:?}, ignores --uid {ignores_uid}: {failures:#?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_through_a_real_adb_server() {
    for (android, ignores_uid) in CASES {
        let placeholder = DeviceId::new("pending");
        let (phone, mut scenario) = standard_phone(android, ignores_uid, &placeholder);
        let Some(setup) = ThroughAdb::start(phone, |_| {}).await else {
            return;
        };
        scenario.device = setup.device.clone();
        let failures = run_all(&setup.driver, &scenario).await;
        assert!(
            failures.is_empty(),
            "Android {android:?}, ignores --uid {ignores_uid}: {failures:#?}"
        );
    }
}

/// With `PHONELOGS_ANDROID_SERIAL` naming a real phone or emulator (through the user's adb
/// server), the checks that need no scenario loaded run against it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_on_a_real_device() {
    use phonelogs_driver::conformance::{
        Scenario, check_debugger, check_devices, check_listener, check_unknowns,
    };
    let Ok(serial) = std::env::var("PHONELOGS_ANDROID_SERIAL") else {
        eprintln!("skipped: set PHONELOGS_ANDROID_SERIAL to run the suite against a real device");
        return;
    };
    let driver = phonelogs_android::AdbPhone::from_env();
    let scenario = Scenario::standard(DeviceId::new(serial), time::OffsetDateTime::now_utc());
    let mut failures = Vec::new();
    for result in [
        check_devices(&driver, &scenario).await,
        check_unknowns(&driver, &scenario).await,
        check_listener(&driver, &scenario).await,
        check_debugger(&driver, &scenario).await,
    ] {
        failures.extend(result.err());
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
