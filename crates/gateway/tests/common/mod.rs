//! The fixture the gateway's tests share: a fake phone with a development build, a release
//! build, and apps the policy refuses, and a gateway over it with a fixed clock.

#![allow(dead_code)]

use std::sync::Arc;

use phonelogs_driver::{AppId, CrashKind, CrashReport, DeviceId, LogLevel, LogLine};
use phonelogs_fake::{FakeApp, FakePhone};
use phonelogs_gateway::{Gateway, GatewayBuilder, LogsKind, LogsRequest, Session, TaskSpec};
use phonelogs_policy::{Agent, Mode};
use time::macros::{datetime, offset};
use time::{Duration, OffsetDateTime};

pub const START: OffsetDateTime = datetime!(2026-11-30 10:00 UTC);
pub const DEVICE: &str = "emulator-5554";
pub const DEV_APP: &str = "dev.phonelogs.crashtest";
pub const RELEASE_APP: &str = "com.example.app";
pub const BANK: &str = "com.chase.sig.android";
pub const SETTINGS: &str = "com.android.settings";
pub const WDA: &str = "com.facebook.WebDriverAgentRunner.xctrunner";
pub const APPIUM: &str = "io.appium.uiautomator2.server";
pub const OTHER_APP: &str = "com.example.other";
pub const SHARED: &str = "com.example.shared";

pub fn device() -> DeviceId {
    DeviceId::new(DEVICE)
}

pub fn line(seconds: f64, level: LogLevel, tag: &str, text: &str, uid: u32) -> LogLine {
    LogLine {
        time: START + Duration::seconds_f64(seconds),
        level,
        tag: tag.into(),
        text: text.into(),
        pid: Some(4242),
        tid: Some(4242),
        uid: Some(uid),
    }
}

pub fn report(seconds: i64, process: &str, summary: &str, text: &str) -> CrashReport {
    CrashReport {
        kind: CrashKind::JavaCrash,
        time: START + Duration::seconds(seconds),
        pid: Some(4242),
        process: process.into(),
        summary: summary.into(),
        text: text.into(),
        build: None,
    }
}

/// A phone with the apps every test needs.
pub fn phone_with(phone: FakePhone) -> FakePhone {
    let device = device();
    phone.add_device(&device, "Pixel 8");
    phone.add_app(
        &device,
        FakeApp::new(AppId::new(DEV_APP))
            .label("Crash Test")
            .uid(10123)
            .dev_build(true),
    );
    phone.add_app(
        &device,
        FakeApp::new(AppId::new(RELEASE_APP))
            .label("Example")
            .uid(10200),
    );
    phone.add_app(
        &device,
        FakeApp::new(AppId::new(OTHER_APP))
            .label("Other")
            .uid(10300),
    );
    phone.add_app(
        &device,
        FakeApp::new(AppId::new(BANK)).label("My Bank").uid(10400),
    );
    phone.add_app(
        &device,
        FakeApp::new(AppId::new(SETTINGS))
            .label("Settings")
            .uid(1000)
            .system(true),
    );
    phone.add_app(
        &device,
        FakeApp::new(AppId::new(WDA))
            .label("WebDriverAgent")
            .uid(10500),
    );
    phone.add_app(
        &device,
        FakeApp::new(AppId::new(APPIUM)).label("Appium").uid(10600),
    );
    phone.add_app(
        &device,
        FakeApp::new(AppId::new(SHARED))
            .label("Shared")
            .uid(10700)
            .shared_uid(true)
            .dev_build(true),
    );
    phone.add_logs(
        &device,
        &AppId::new(DEV_APP),
        [
            line(1.0, LogLevel::Info, "CrashTest", "started", 10123),
            line(2.25, LogLevel::Warn, "Net", "slow response", 10123),
            line(3.5, LogLevel::Error, "CrashTest", "failed to save", 10123),
        ],
    );
    phone.add_logs(
        &device,
        &AppId::new(RELEASE_APP),
        [line(
            1.5,
            LogLevel::Info,
            "Example",
            "hello from example",
            10200,
        )],
    );
    phone.add_logs(
        &device,
        &AppId::new(OTHER_APP),
        [line(
            2.0,
            LogLevel::Error,
            "CrashTest",
            "OTHER-SECRET token=abc",
            10300,
        )],
    );
    phone.add_system_lines(
        &device,
        [line(
            4.0,
            LogLevel::Info,
            "ActivityManager",
            "SYSTEM-SECRET Process dev.phonelogs.crashtest has died",
            1000,
        )],
    );
    phone.add_crash(
        &device,
        &AppId::new(DEV_APP),
        report(
            5,
            DEV_APP,
            "java.lang.IllegalStateException: Crash button tapped",
            "java.lang.IllegalStateException: Crash button tapped\n\tat MainActivity.onCrash\n",
        ),
    );
    phone.add_crash(
        &device,
        &AppId::new(DEV_APP),
        report(
            9,
            DEV_APP,
            "Input dispatching timed out",
            "Subject: Input dispatching timed out\n",
        ),
    );
    phone.add_crash(
        &device,
        &AppId::new(RELEASE_APP),
        report(
            6,
            RELEASE_APP,
            "java.lang.NullPointerException",
            "java.lang.NullPointerException\n",
        ),
    );
    phone
}

pub fn phone() -> FakePhone {
    phone_with(FakePhone::new())
}

pub fn builder(phone: &FakePhone) -> GatewayBuilder {
    Gateway::builder()
        .driver(Arc::new(phone.clone()))
        .local_offset(offset!(+1))
        .clock(|| START)
}

pub fn gateway(phone: &FakePhone) -> Gateway {
    builder(phone).build().unwrap()
}

pub fn agent(name: &str) -> Agent {
    Agent::new(name, Mode::Full)
}

pub fn task(gateway: &Gateway, agent_name: &str) -> Session {
    gateway.start_task(TaskSpec::new(agent(agent_name)))
}

pub fn logs(app: &str) -> LogsRequest {
    LogsRequest::new(app)
}

pub fn crashes(app: &str) -> LogsRequest {
    LogsRequest {
        kind: LogsKind::Crashes,
        ..LogsRequest::new(app)
    }
}

pub fn with_id(mut request: LogsRequest, id: &str) -> LogsRequest {
    request.approval_id = Some(id.to_owned());
    request
}

/// A debugging aid's data as the MCP frontend sends it.
pub fn data_json(data: &impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(data).unwrap()
}

/// The id of the question a debugging aid's call is waiting for (it must be waiting).
pub fn pending_id(response: &phonelogs_gateway::DebugResponse) -> String {
    assert_eq!(
        response.status,
        phonelogs_gateway::DebugStatus::ApprovalPending,
        "{response:?}"
    );
    response.data.as_ref().map(data_json).unwrap()["approval_id"]
        .as_str()
        .unwrap()
        .to_owned()
}
