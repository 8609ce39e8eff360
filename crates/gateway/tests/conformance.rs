//! The gateway's driver wrapper ([`GuardedLogger`]) passes the driver conformance suite, over a
//! well-behaved fake, a listening fake, and a fake whose logcat ignores `--uid`.

// Tests may unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use phonelogs_driver::DeviceId;
use phonelogs_driver::conformance::{self, Scenario};
use phonelogs_fake::FakePhone;
use phonelogs_gateway::GuardedLogger;
use time::macros::datetime;

fn scenario() -> Scenario {
    Scenario::standard(
        DeviceId::new("emulator-5554"),
        datetime!(2026-11-30 10:00 UTC),
    )
}

#[tokio::test]
async fn the_guarded_fake_conforms() {
    let scenario = scenario();
    let guarded = GuardedLogger::new(
        Arc::new(FakePhone::with_scenario(&scenario)),
        Duration::from_secs(5),
    );
    let failures = conformance::run_all(&guarded, &scenario).await;
    assert!(failures.is_empty(), "{failures:#?}");
}

#[tokio::test]
async fn the_guard_makes_a_driver_that_ignores_the_uid_filter_keep_to_the_apps_own_lines() {
    let scenario = scenario();
    let phone = FakePhone::with_scenario(&scenario);
    phone.set_ignore_uid_filter(true);
    // The bare fake leaks, which the suite sees ...
    let bare = conformance::run_all(&phone, &scenario).await;
    assert!(
        bare.iter().any(|f| f.check == "logs_are_the_apps_own"),
        "{bare:#?}"
    );
    // ... and the guard does not.
    let guarded = GuardedLogger::new(Arc::new(phone), Duration::from_secs(5));
    let result = conformance::check_logs_are_the_apps_own(&guarded, &scenario).await;
    assert!(result.is_ok(), "{result:?}");
    assert!(conformance::check_level(&guarded, &scenario).await.is_ok());
    assert!(conformance::check_since(&guarded, &scenario).await.is_ok());
    assert!(
        conformance::check_crashes(&guarded, &scenario)
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn a_guarded_listener_conforms() {
    let scenario = scenario();
    let phone = FakePhone::new_listener();
    phone.add_device(&scenario.device, "Fake Phone");
    for app in [&scenario.app, &scenario.other_app, &scenario.system_app] {
        phone.add_app(
            &scenario.device,
            phonelogs_fake::FakeApp::new(app.app.clone())
                .uid(app.uid)
                .system(app.system)
                .dev_build(app.dev_build),
        );
        phone.add_logs(&scenario.device, &app.app, app.lines.clone());
        for crash in &app.crashes {
            phone.add_crash(&scenario.device, &app.app, crash.clone());
        }
    }
    let guarded = GuardedLogger::new(Arc::new(phone.clone()), Duration::from_secs(5));
    let failures = conformance::run_all(&guarded, &scenario).await;
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(!phone.is_listening(&scenario.device, &scenario.app.app));
}
