//! The driver conformance suite against the fake phone, and proof that it catches a broken fake.

use async_trait::async_trait;
use phonelogs_driver::conformance::{self, Scenario};
use phonelogs_driver::{
    AppDebugger, AppId, AppInfo, AppLogger, Capabilities, CrashReport, DeviceId, DeviceInfo,
    LogListener, LogQuery, LogResult, Result,
};
use phonelogs_fake::FakePhone;
use time::OffsetDateTime;
use time::macros::datetime;

fn scenario() -> Scenario {
    Scenario::standard(
        DeviceId::new("emulator-5554"),
        datetime!(2026-11-30 10:00 UTC),
    )
}

#[tokio::test]
async fn the_fake_phone_conforms() {
    let scenario = scenario();
    let phone = FakePhone::with_scenario(&scenario);
    let failures = conformance::run_all(&phone, &scenario).await;
    assert!(failures.is_empty(), "{failures:#?}");
}

#[tokio::test]
async fn a_listening_fake_conforms_and_stops() {
    let scenario = scenario();
    let phone = FakePhone::new_listener();
    // A listener fake, loaded with the same scenario by hand.
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
    let failures = conformance::run_all(&phone, &scenario).await;
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(!phone.is_listening(&scenario.device, &scenario.app.app));
}

/// A deliberately broken driver: it behaves like a logcat that ignores `--uid` and hands every
/// line through, and it returns crash reports oldest first.
struct BrokenFake(FakePhone);

#[async_trait]
impl AppLogger for BrokenFake {
    fn capabilities(&self) -> Capabilities {
        self.0.capabilities()
    }
    async fn devices(&self) -> Result<Vec<DeviceInfo>> {
        self.0.devices().await
    }
    async fn app_info(&self, device: &DeviceId, app: &AppId) -> Result<AppInfo> {
        self.0.app_info(device, app).await
    }
    async fn app_logs(
        &self,
        device: &DeviceId,
        app: &AppId,
        query: &LogQuery,
    ) -> Result<LogResult> {
        self.0.set_ignore_uid_filter(true);
        self.0.app_logs(device, app, query).await
    }
    async fn app_crashes(
        &self,
        device: &DeviceId,
        app: &AppId,
        since: OffsetDateTime,
        limit: usize,
    ) -> Result<Vec<CrashReport>> {
        let mut reports = self.0.app_crashes(device, app, since, limit).await?;
        reports.reverse();
        Ok(reports)
    }
    async fn dev_build(&self, device: &DeviceId, app: &AppId) -> Result<bool> {
        self.0.dev_build(device, app).await
    }
    fn listener(&self) -> Option<&dyn LogListener> {
        None
    }
    fn debugger(&self) -> Option<&dyn AppDebugger> {
        Some(&self.0)
    }
}

#[tokio::test]
async fn the_suite_catches_a_broken_fake() {
    let scenario = scenario();
    let broken = BrokenFake(FakePhone::with_scenario(&scenario));
    let failures = conformance::run_all(&broken, &scenario).await;
    let failed: Vec<&str> = failures.iter().map(|f| f.check).collect();
    assert!(failed.contains(&"logs_are_the_apps_own"), "{failures:#?}");
    assert!(failed.contains(&"crashes"), "{failures:#?}");
}

#[tokio::test]
async fn the_suite_catches_a_fake_that_says_it_listens_but_cannot_stop() {
    struct Liar(FakePhone);
    #[async_trait]
    impl AppLogger for Liar {
        fn capabilities(&self) -> Capabilities {
            Capabilities {
                listener: true,
                ..self.0.capabilities()
            }
        }
        async fn devices(&self) -> Result<Vec<DeviceInfo>> {
            self.0.devices().await
        }
        async fn app_info(&self, device: &DeviceId, app: &AppId) -> Result<AppInfo> {
            self.0.app_info(device, app).await
        }
        async fn app_logs(
            &self,
            device: &DeviceId,
            app: &AppId,
            query: &LogQuery,
        ) -> Result<LogResult> {
            self.0.app_logs(device, app, query).await
        }
        async fn app_crashes(
            &self,
            device: &DeviceId,
            app: &AppId,
            since: OffsetDateTime,
            limit: usize,
        ) -> Result<Vec<CrashReport>> {
            self.0.app_crashes(device, app, since, limit).await
        }
        async fn dev_build(&self, device: &DeviceId, app: &AppId) -> Result<bool> {
            self.0.dev_build(device, app).await
        }
    }
    let scenario = scenario();
    let failures =
        conformance::run_all(&Liar(FakePhone::with_scenario(&scenario)), &scenario).await;
    let failed: Vec<&str> = failures.iter().map(|f| f.check).collect();
    assert!(failed.contains(&"listener"), "{failures:#?}");
    assert!(failed.contains(&"debugger"), "{failures:#?}");
}

/// A driver that loses the app's lines and says nothing (the iPhone driver before issue 27,
/// on a phone whose processes it could not list) fails the suite; the same driver saying why
/// with a notice passes that check.
#[tokio::test]
async fn the_suite_catches_a_silent_empty_answer() {
    struct Silent {
        phone: FakePhone,
        notices: Vec<phonelogs_driver::LogNotice>,
    }
    #[async_trait]
    impl AppLogger for Silent {
        fn capabilities(&self) -> Capabilities {
            self.phone.capabilities()
        }
        async fn devices(&self) -> Result<Vec<DeviceInfo>> {
            self.phone.devices().await
        }
        async fn app_info(&self, device: &DeviceId, app: &AppId) -> Result<AppInfo> {
            self.phone.app_info(device, app).await
        }
        async fn app_logs(&self, _: &DeviceId, _: &AppId, _: &LogQuery) -> Result<LogResult> {
            Ok(LogResult {
                notices: self.notices.clone(),
                ..LogResult::default()
            })
        }
        async fn app_crashes(
            &self,
            device: &DeviceId,
            app: &AppId,
            since: OffsetDateTime,
            limit: usize,
        ) -> Result<Vec<CrashReport>> {
            self.phone.app_crashes(device, app, since, limit).await
        }
        async fn dev_build(&self, device: &DeviceId, app: &AppId) -> Result<bool> {
            self.phone.dev_build(device, app).await
        }
    }
    let scenario = scenario();
    let silent = Silent {
        phone: FakePhone::with_scenario(&scenario),
        notices: Vec::new(),
    };
    let failures = conformance::check_no_silent_empty_answer(&silent, &scenario).await;
    assert_eq!(
        failures.err().map(|f| f.check),
        Some("no_silent_empty_answer")
    );
    let said = Silent {
        phone: FakePhone::with_scenario(&scenario),
        notices: vec![phonelogs_driver::LogNotice::Unreadable {
            cause: "the phone is locked".into(),
            fix: "unlock it".into(),
        }],
    };
    assert!(
        conformance::check_no_silent_empty_answer(&said, &scenario)
            .await
            .is_ok()
    );
}
