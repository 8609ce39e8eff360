//! `phonelogs demo`: an agent's task against the built-in simulated phone, printed as the agent
//! and the person see it.
//!
//! The simulated phone serves the adb server's host protocol on loopback, and the real Android
//! driver reads it through the same gateway the MCP server uses: nothing here is canned.

use std::sync::Arc;

use anyhow::{Context, Result};
use phonelogs_adbsim::{HostFront, SimPhone};
use phonelogs_android::{AdbConfig, AdbPhone};
use phonelogs_gateway::{
    Agent, Answer, Gateway, HistoryFilter, LogsKind, LogsRequest, LogsResponse, Mode, TaskSpec,
};

fn show(title: &str, request: &LogsRequest, response: &LogsResponse) {
    println!("── {title}");
    let mut args = format!("app={}", request.app);
    if request.kind == LogsKind::Crashes {
        args.push_str(" kind=crashes");
    }
    if let Some(limit) = request.limit {
        args.push_str(&format!(" limit={limit}"));
    }
    if let Some(id) = &request.approval_id {
        args.push_str(&format!(" approval_id={id}"));
    }
    println!("   agent calls phone_logs({args})");
    println!("   status: {}", response.status.as_str());
    println!("   {}", response.message);
    if let Some(rule) = &response.rule {
        println!("   rule: {rule}");
    }
    for line in response.log.lines().take(30) {
        println!("   │ {line}");
    }
    if response.log.lines().count() > 30 {
        println!("   │ …");
    }
    println!();
}

/// Runs the demo; `state_dir` holds its (throwaway) state, and times show at `local_offset`
/// (the computer's, read before any thread started).
pub async fn run(state_dir: &std::path::Path, local_offset: Option<time::UtcOffset>) -> Result<()> {
    let phone = SimPhone::default_phone();
    let (address, _front) = HostFront::bind(None, phone.clone())
        .await
        .context("starting the simulated phone")?;
    println!("Simulated Android phone serving the adb host protocol on {address}.\n");
    let driver = Arc::new(AdbPhone::new(AdbConfig::local(address.port())));
    let mut builder = Gateway::builder().driver(driver);
    if let Some(offset) = local_offset {
        builder = builder.local_offset(offset);
    }
    let gateway = builder
        .state_dir(state_dir)
        .build()
        .context("opening the gateway")?;

    let devices = gateway.devices().await.context("listing devices")?;
    println!("── list_devices");
    for device in &devices {
        println!(
            "   {} {} {} {:?}",
            device.id,
            device.platform,
            device.model.as_deref().unwrap_or("?"),
            device.state
        );
    }
    println!();

    let session = gateway.start_task(TaskSpec::new(Agent::new("demo-agent", Mode::Full)));
    // The simulated phone's traffic is timestamped a few minutes back; read the last hour.
    let since = Some("1h".to_owned());

    // The person's test taps Crash: the app throws, as the real Crash Test app does.
    phone.advance_clock(2.0);
    phone
        .crash(
            "dev.phonelogs.crashtest",
            "java.lang.IllegalStateException",
            "Crash button tapped",
        )
        .context("playing the crash on the simulated phone")?;
    println!("The test taps Crash in the Crash Test app; it throws.\n");

    let mut request = LogsRequest::new("dev.phonelogs.crashtest");
    request.since = since.clone();
    request.limit = Some(25);
    let response = session.logs(request.clone()).await;
    show(
        "Crash Test is a development build (debuggable): no question asked",
        &request,
        &response,
    );

    let mut request = LogsRequest::new("dev.phonelogs.crashtest");
    request.kind = LogsKind::Crashes;
    request.since = since.clone();
    request.limit = Some(1);
    let response = session.logs(request.clone()).await;
    show("Its newest crash report", &request, &response);

    let mut request = LogsRequest::new("com.spotify.music");
    request.since = since.clone();
    request.limit = Some(5);
    let response = session.logs(request.clone()).await;
    show(
        "A store app (release build): the person is asked first",
        &request,
        &response,
    );
    if let Some(id) = response.approval_id.clone() {
        println!("── the person runs: phonelogs approvals answer {id} task\n");
        gateway.store().answer(&id, Answer::Task)?;
        request.approval_id = Some(id);
        let response = session.logs(request.clone()).await;
        show(
            "The agent calls again with the approval id",
            &request,
            &response,
        );
    }

    for (app, title) in [
        (
            "com.chase.sig.android",
            "A bank: never, whatever anyone allows",
        ),
        ("com.x8bit.bitwarden", "A password manager: never"),
        ("com.android.settings", "The phone's own apps: never"),
    ] {
        let request = LogsRequest::new(app);
        let response = session.logs(request.clone()).await;
        show(title, &request, &response);
    }

    session.end().await;
    println!("── what the history keeps (never the text): phonelogs history");
    let filter = HistoryFilter {
        task_id: Some(session.task_id().to_owned()),
        ..HistoryFilter::default()
    };
    for step in gateway.store().history(filter)? {
        println!("   {}  {}", step.status.as_str(), step.step);
    }
    Ok(())
}
