//! `phonelogs demo`: an agent's task against the built-in simulated phones, an Android phone and
//! an iPhone, printed as the agent and the person see it.
//!
//! The simulated Android phone serves the adb server's host protocol on loopback and the
//! simulated iPhone usbmuxd and lockdown; the real drivers read them through the same gateway
//! the MCP server uses (`phonelogs-demo` wires them once for both binaries): nothing here is
//! canned.

use std::sync::Arc;
use std::time::Duration;

use phonelogs_demo::{AndroidDemo, CRASH_TEST, CRASH_TEST_WIDGET, IosDemo};
use phonelogs_gateway::{
    Agent, Answer, Gateway, HistoryFilter, LogsKind, LogsRequest, LogsResponse, Mode, TaskSpec,
};

use crate::{Doing, Result};

fn show(title: &str, request: &LogsRequest, response: &LogsResponse) {
    println!("── {title}");
    let mut args = format!("app={}", request.app);
    if let Some(device) = &request.device {
        args.push_str(&format!(" device={device}"));
    }
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
    let android = AndroidDemo::start(phonelogs_adbsim::SimPhone::default_phone()).await?;
    println!(
        "Simulated Android phone serving the adb host protocol on {}.",
        android.address()
    );
    let iphone = IosDemo::start(phonelogs_iossim::SimPhone::default_phone()).await?;
    println!(
        "Simulated iPhone serving usbmuxd and lockdown on {}.\n",
        iphone.address()
    );
    let mut builder = Gateway::builder()
        .driver(Arc::new(android.driver()))
        .driver(Arc::new(iphone.driver()?));
    if let Some(offset) = local_offset {
        builder = builder.local_offset(offset);
    }
    let gateway = builder
        .state_dir(state_dir)
        .build()
        .doing(|| "opening the gateway".to_owned())?;
    list_devices(&gateway).await?;

    let session = gateway.start_task(TaskSpec::new(Agent::new("demo-agent", Mode::Full)));
    play_android(&gateway, &session, &android).await?;
    play_iphone(&session, &iphone).await;

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

/// What `list_devices` shows.
async fn list_devices(gateway: &Gateway) -> Result<()> {
    let devices = gateway
        .devices()
        .await
        .doing(|| "listing devices".to_owned())?;
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
    Ok(())
}

/// The Android part: Crash Test (a development build) crashes and is read without a question,
/// with its crash report; a store app asks the person; a bank, a password manager and the
/// phone's own apps are refused.
async fn play_android(
    gateway: &Gateway,
    session: &phonelogs_gateway::Session,
    android: &AndroidDemo,
) -> Result<()> {
    // Two phones are connected, so every call names one.
    let serial = Some(android.serial());
    let phone = android.phone();
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
        .doing(|| "playing the crash on the simulated phone".to_owned())?;
    println!("The test taps Crash in the Crash Test app; it throws.\n");

    let mut request = LogsRequest::new(CRASH_TEST);
    request.device = serial.clone();
    request.since = since.clone();
    request.limit = Some(25);
    let response = session.logs(request.clone()).await;
    show(
        "Crash Test is a development build (debuggable): no question asked",
        &request,
        &response,
    );

    let mut request = LogsRequest::new(CRASH_TEST);
    request.device = serial.clone();
    request.kind = LogsKind::Crashes;
    request.since = since.clone();
    request.limit = Some(1);
    let response = session.logs(request.clone()).await;
    show("Its newest crash report", &request, &response);

    let mut request = LogsRequest::new("com.spotify.music");
    request.device = serial.clone();
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
        let mut request = LogsRequest::new(app);
        request.device = serial.clone();
        let response = session.logs(request.clone()).await;
        show(title, &request, &response);
    }
    Ok(())
}

/// The iPhone part: Crash Test (signed for development, `get-task-allow`) with its widget, a
/// crash report, a store app that asks, the WebDriverAgent runner refused.
async fn play_iphone(session: &phonelogs_gateway::Session, iphone: &IosDemo) {
    println!("── now the iPhone ({})\n", iphone.udid());
    let udid = Some(iphone.udid());
    let phone = iphone.phone();
    let mut request = LogsRequest::new(CRASH_TEST);
    request.device = udid.clone();
    let response = session.logs(request.clone()).await;
    show(
        "An iPhone keeps no log history a computer can read: the first read starts following Crash Test",
        &request,
        &response,
    );

    let (Some(pid), Some(widget)) = (
        phone.launch(CRASH_TEST),
        phone.launch_extension(CRASH_TEST, CRASH_TEST_WIDGET),
    ) else {
        println!("   (the simulated iPhone has no Crash Test)\n");
        return;
    };
    // The follower opens a stream per process when it next looks at the process list; what a
    // process logs before that is not kept anywhere a computer can read, as on a phone.
    for _ in 0..100 {
        let streamed = phone.streamed_pids();
        if [pid, widget]
            .iter()
            .all(|p| streamed.contains(&i64::from(*p)))
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let label = |category| Some(("dev.phonelogs.crashtest", category));
    phone.log(
        pid,
        phonelogs_iossim::Level::Default,
        label("CrashTest"),
        phonelogs_demo::START_LINE,
    );
    phone.log(
        widget,
        phonelogs_iossim::Level::Info,
        label("Widget"),
        "timeline reloaded",
    );
    phone.crash(
        pid,
        phonelogs_iossim::CrashKind::Exception(phonelogs_demo::CRASH_MESSAGE.into()),
    );
    println!("Crash Test starts, its widget reloads, and the test taps Crash: it throws.\n");

    // The lines arrive over the streams, and the crash mover shows the report a moment after
    // ReportCrash wrote it.
    let response = poll(session, request.clone(), |r| r.shown >= 2).await;
    show(
        "Its lines and its widget's: a development build, no question asked",
        &request,
        &response,
    );
    request.kind = LogsKind::Crashes;
    request.limit = Some(1);
    let response = poll(session, request.clone(), |r| r.shown >= 1).await;
    show("Its .ips crash report", &request, &response);

    for (app, title) in [
        (
            "com.spotify.client",
            "A store app (no get-task-allow): the person is asked first",
        ),
        (
            "com.facebook.WebDriverAgentRunner.xctrunner",
            "A UI-automation runner: never",
        ),
    ] {
        let mut request = LogsRequest::new(app);
        request.device = udid.clone();
        let response = session.logs(request.clone()).await;
        show(title, &request, &response);
    }
}

/// Calls again (up to five seconds) until `done` says the answer holds what the phone did.
async fn poll(
    session: &phonelogs_gateway::Session,
    request: LogsRequest,
    done: impl Fn(&LogsResponse) -> bool,
) -> LogsResponse {
    let mut response = session.logs(request.clone()).await;
    for _ in 0..50 {
        if done(&response) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        response = session.logs(request.clone()).await;
    }
    response
}
