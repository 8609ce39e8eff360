//! Two real adb servers (Debian's `/usr/bin/adb`, each on its own loopback port) and four
//! simulated phones split between them, read through the gateway: every phone is listed with
//! the server it comes from, the two phones with the same serial are named with their server
//! and a bare serial is an error that lists both, each read reaches its own phone; one server
//! killed fails only its own phones, with a clear error (and while it is down a bare serial is
//! no longer taken as unique: it might be on the server that is down), and its phones come
//! back when it is restarted. One server that is not the local default names its phones with
//! itself too, so a rule given for a local phone never covers a farm's namesake.
//!
//! Two phones with one serial on two servers is what a device lab has (the same emulator port
//! on two hosts). On one machine, `adb connect 127.0.0.1:P` names a phone `127.0.0.1:P` on
//! whichever server connects, so a small relay listens on P and hands each new connection to
//! the phone the test chose: server A's connection reaches one phone, server B's another.

// Tests may unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

mod common;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{RealAdb, config};
use phonelogs_adbsim::{Priority, SimHandle, SimPhone, Simulator};
use phonelogs_android::AdbPhone;
use phonelogs_driver::{AppLogger, DeviceId, DeviceState};
use phonelogs_gateway::{
    Agent, Gateway, LogsRequest, LogsResponse, Mode, Session, Status, TaskSpec,
};
use tokio::net::{TcpListener, TcpStream};

const CRASH_TEST: &str = "dev.phonelogs.crashtest";

/// A simulated phone listening as a device, whose Crash Test app logged `canary`.
struct Phone {
    address: SocketAddr,
    canary: String,
    _handle: SimHandle,
}

impl Phone {
    async fn start(canary: &str) -> Phone {
        let phone = SimPhone::default_phone();
        phone.set_noise_rate(0.0);
        phone
            .log(CRASH_TEST, Priority::Info, "Canary", canary)
            .unwrap();
        let (address, handle) = Simulator::bind_loopback(None, phone).await.unwrap();
        Phone {
            address,
            canary: canary.to_owned(),
            _handle: handle,
        }
    }

    fn target(&self) -> String {
        format!("127.0.0.1:{}", self.address.port())
    }
}

/// Listens on one loopback port and joins each new connection to the phone `next` names.
struct Relay {
    port: u16,
    next: Arc<Mutex<SocketAddr>>,
    task: tokio::task::JoinHandle<()>,
}

impl Relay {
    async fn start(first: SocketAddr) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let next = Arc::new(Mutex::new(first));
        let chosen = next.clone();
        let task = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let to = *chosen.lock().unwrap();
                tokio::spawn(async move {
                    if let Ok(mut outbound) = TcpStream::connect(to).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
            }
        });
        Relay { port, next, task }
    }

    fn send_next_to(&self, phone: &Phone) {
        *self.next.lock().unwrap() = phone.address;
    }

    fn serial(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// `adb connect TARGET` on `server`, then waits until `driver` lists it online.
async fn connect(server: &RealAdb, driver: &AdbPhone, target: &str) {
    let output = server.run(&["connect", target]);
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("connected"),
        "adb connect {target}: {output:?}"
    );
    for _ in 0..100 {
        if let Ok(devices) = driver.devices().await
            && devices
                .iter()
                .any(|d| d.id.as_str() == target && d.state == DeviceState::Online)
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the adb server on {} never listed {target}", server.port);
}

async fn read(session: &Session, device: &str) -> LogsResponse {
    let mut request = LogsRequest::new(CRASH_TEST);
    request.device = Some(device.to_owned());
    request.since = Some("1d".into());
    session.logs(request).await
}

fn name(server: &RealAdb, serial: &str) -> String {
    format!("127.0.0.1:{}/{serial}", server.port)
}

/// The lab: servers A and B, phones a1 and x on A, b1 and y on B, x and y under one serial.
struct Lab {
    a: RealAdb,
    b: RealAdb,
    driver_a: Arc<AdbPhone>,
    driver_b: Arc<AdbPhone>,
    a1: Phone,
    x: Phone,
    b1: Phone,
    y: Phone,
    relay: Relay,
}

impl Lab {
    async fn start() -> Option<Lab> {
        let a = RealAdb::start()?;
        let b = RealAdb::start()?;
        let (a1, x, b1, y) = (
            Phone::start("canary-a1").await,
            Phone::start("canary-x-on-a").await,
            Phone::start("canary-b1").await,
            Phone::start("canary-y-on-b").await,
        );
        let driver_a = Arc::new(AdbPhone::new(config(a.port)));
        let driver_b = Arc::new(AdbPhone::new(config(b.port)));
        let relay = Relay::start(x.address).await;
        let lab = Lab {
            a,
            b,
            driver_a,
            driver_b,
            a1,
            x,
            b1,
            y,
            relay,
        };
        lab.connect_a().await;
        lab.relay.send_next_to(&lab.y);
        connect(&lab.b, &lab.driver_b, &lab.relay.serial()).await;
        connect(&lab.b, &lab.driver_b, &lab.b1.target()).await;
        Some(lab)
    }

    /// Connects server A to its two phones (again, after a restart).
    async fn connect_a(&self) {
        self.relay.send_next_to(&self.x);
        connect(&self.a, &self.driver_a, &self.relay.serial()).await;
        connect(&self.a, &self.driver_a, &self.a1.target()).await;
    }

    fn gateway(&self) -> Gateway {
        Gateway::builder()
            .driver(self.driver_a.clone() as Arc<dyn AppLogger>)
            .driver(self.driver_b.clone() as Arc<dyn AppLogger>)
            .build()
            .unwrap()
    }
}

fn assert_reads(response: &LogsResponse, mine: &Phone, others: &[&Phone]) {
    assert_eq!(response.status, Status::Ok, "{}", response.message);
    assert!(
        response.log.contains(&mine.canary),
        "{} missing from {:?}",
        mine.canary,
        response.log
    );
    for other in others {
        assert!(
            !response.log.contains(&other.canary),
            "{} leaked into {:?}",
            other.canary,
            response.log
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_adb_servers_four_phones_one_serial_twice() {
    let Some(lab) = Lab::start().await else {
        return;
    };
    let gateway = lab.gateway();
    let session = gateway.start_task(TaskSpec::new(Agent::new("lab-agent", Mode::Full)));
    let dup = lab.relay.serial();

    // Listed with the server each comes from; every name carries its server.
    let list = gateway.device_list().await;
    assert!(list.failures.is_empty(), "{:?}", list.failures);
    let mut names: Vec<(String, Option<String>)> = list
        .devices
        .iter()
        .map(|d| (d.info.id.to_string(), d.source.clone()))
        .collect();
    names.sort();
    let source = |server: &RealAdb| Some(format!("127.0.0.1:{}", server.port));
    let mut expected = vec![
        (name(&lab.a, &lab.a1.target()), source(&lab.a)),
        (name(&lab.a, &dup), source(&lab.a)),
        (name(&lab.b, &lab.b1.target()), source(&lab.b)),
        (name(&lab.b, &dup), source(&lab.b)),
    ];
    expected.sort();
    assert_eq!(names, expected);

    // Each read reaches its own phone, and only it.
    let all = [&lab.a1, &lab.x, &lab.b1, &lab.y];
    let others = |mine: &Phone| -> Vec<&Phone> {
        all.iter()
            .copied()
            .filter(|p| p.canary != mine.canary)
            .collect()
    };
    for (device, phone) in [
        (name(&lab.a, &dup), &lab.x),
        (name(&lab.b, &dup), &lab.y),
        (name(&lab.a, &lab.a1.target()), &lab.a1),
        (name(&lab.b, &lab.b1.target()), &lab.b1),
        // A bare serial that one server shows is that phone.
        (lab.b1.target(), &lab.b1),
    ] {
        assert_reads(&read(&session, &device).await, phone, &others(phone));
    }

    // A bare serial that both servers show is an error naming both.
    let both = read(&session, &dup).await;
    assert_eq!(both.status, Status::Error, "{}", both.message);
    for wanted in [name(&lab.a, &dup), name(&lab.b, &dup)] {
        assert!(both.message.contains(&wanted), "{}", both.message);
    }
    assert!(both.log.is_empty(), "{:?}", both.log);

    // The history records the qualified names.
    let history = gateway
        .store()
        .history(phonelogs_gateway::HistoryFilter::default())
        .unwrap();
    for wanted in [name(&lab.a, &dup), name(&lab.b, &dup)] {
        assert!(
            history
                .iter()
                .any(|s| s.device.as_deref() == Some(&*wanted)),
            "{wanted} not in {history:#?}"
        );
    }

    // Server A goes down: only its phones fail, each with the server's own error.
    let killed = lab.a.run(&["kill-server"]);
    assert!(killed.status.success(), "{killed:?}");
    for device in [name(&lab.a, &dup), name(&lab.a, &lab.a1.target())] {
        let failed = read(&session, &device).await;
        assert_eq!(failed.status, Status::Error, "{}", failed.message);
        let said = format!("the adb server at 127.0.0.1:{} is not running", lab.a.port);
        assert!(failed.message.contains(&said), "{}", failed.message);
        assert!(failed.log.is_empty());
    }
    assert_reads(
        &read(&session, &name(&lab.b, &dup)).await,
        &lab.y,
        &others(&lab.y),
    );
    assert_reads(
        &read(&session, &name(&lab.b, &lab.b1.target())).await,
        &lab.b1,
        &others(&lab.b1),
    );
    // While A is down a bare serial is no longer known to be one phone, even one that only B
    // shows now: A might have it too. It is an error naming where it could be, and B's phone
    // is not read in A's place.
    for (serial, on_b) in [(&dup, &lab.y), (&lab.b1.target(), &lab.b1)] {
        let bare = read(&session, serial).await;
        assert_eq!(bare.status, Status::Error, "{}", bare.message);
        for wanted in [name(&lab.a, serial), name(&lab.b, serial)] {
            assert!(bare.message.contains(&wanted), "{}", bare.message);
        }
        assert!(!bare.log.contains(&on_b.canary), "{:?}", bare.log);
    }
    // A's name for the shared serial still means A's phone: B's is not read in its place.
    let list = gateway.device_list().await;
    assert_eq!(list.devices.len(), 2, "{:?}", list.devices);
    assert_eq!(list.failures.len(), 1);
    assert_eq!(list.failures[0].source, source(&lab.a));
    assert_eq!(gateway.devices().await.unwrap().len(), 2);

    // Restarted (by the person: the driver never starts a server it was pointed at), its
    // phones come back.
    let started = lab.a.run(&["start-server"]);
    assert!(started.status.success(), "{started:?}");
    lab.connect_a().await;
    assert_reads(
        &read(&session, &name(&lab.a, &dup)).await,
        &lab.x,
        &others(&lab.x),
    );
    assert_reads(
        &read(&session, &name(&lab.a, &lab.a1.target())).await,
        &lab.a1,
        &others(&lab.a1),
    );
    assert_eq!(gateway.devices().await.unwrap().len(), 4);
    session.end().await;
}

/// A task's phone list admits only the phones it names: `Session::devices` lists them alone,
/// and the namesake on the other server is outside the task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_sees_only_its_phones_across_servers() {
    let Some(lab) = Lab::start().await else {
        return;
    };
    let gateway = lab.gateway();
    let dup = lab.relay.serial();
    let mut spec = TaskSpec::new(Agent::new("lab-agent", Mode::Full));
    spec.devices = Some(vec![
        DeviceId::new(name(&lab.a, &dup)),
        DeviceId::new(lab.b1.target()),
    ]);
    let session = gateway.start_task(spec);
    let mut listed: Vec<String> = session
        .devices()
        .await
        .unwrap()
        .into_iter()
        .map(|d| d.id.to_string())
        .collect();
    listed.sort();
    let mut expected = vec![name(&lab.a, &dup), name(&lab.b, &lab.b1.target())];
    expected.sort();
    assert_eq!(listed, expected);
    assert_eq!(gateway.devices().await.unwrap().len(), 4);

    let namesake = read(&session, &name(&lab.b, &dup)).await;
    assert_eq!(namesake.status, Status::ScopeDenied, "{}", namesake.message);
    assert!(!namesake.log.contains(&lab.y.canary));
    // The bare serial means the one phone of the task's that has it.
    assert_reads(&read(&session, &dup).await, &lab.x, &[&lab.y]);
}

/// A driver for a server that says it is the local default (adb's own on this machine's port
/// 5037), which a test cannot bind: its phones keep their bare serials, as on a person's own
/// machine.
struct AsLocalDefault(AdbPhone);

#[async_trait::async_trait]
impl AppLogger for AsLocalDefault {
    fn capabilities(&self) -> phonelogs_driver::Capabilities {
        self.0.capabilities()
    }
    fn source(&self) -> Option<String> {
        self.0.source()
    }
    fn source_is_default(&self) -> bool {
        true
    }
    async fn devices(&self) -> phonelogs_driver::Result<Vec<phonelogs_driver::DeviceInfo>> {
        self.0.devices().await
    }
    async fn app_info(
        &self,
        device: &DeviceId,
        app: &phonelogs_driver::AppId,
    ) -> phonelogs_driver::Result<phonelogs_driver::AppInfo> {
        self.0.app_info(device, app).await
    }
    async fn app_logs(
        &self,
        device: &DeviceId,
        app: &phonelogs_driver::AppId,
        query: &phonelogs_driver::LogQuery,
    ) -> phonelogs_driver::Result<phonelogs_driver::LogResult> {
        self.0.app_logs(device, app, query).await
    }
    async fn app_crashes(
        &self,
        device: &DeviceId,
        app: &phonelogs_driver::AppId,
        since: time::OffsetDateTime,
        limit: usize,
    ) -> phonelogs_driver::Result<Vec<phonelogs_driver::CrashReport>> {
        self.0.app_crashes(device, app, since, limit).await
    }
    async fn dev_build(
        &self,
        device: &DeviceId,
        app: &phonelogs_driver::AppId,
    ) -> phonelogs_driver::Result<bool> {
        self.0.dev_build(device, app).await
    }
}

/// An "Always allow" given for the local default server's `PLSIM0001` (named bare, as on a
/// person's machine) does not cover a farm's `PLSIM0001` when the farm's server is later the
/// only one configured: that one server's phones are named with it, and the bare serial finds
/// the farm's phone under that name, which no rule covers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_allow_for_the_local_phone_does_not_cover_a_lone_farm_servers_namesake() {
    use phonelogs_adbsim::HostFront;
    use phonelogs_gateway::Answer;
    const STORE_APP: &str = "com.spotify.music";
    let state = tempfile::tempdir().unwrap();
    let (local, farm) = (SimPhone::default_phone(), SimPhone::default_phone());
    let serial = local.profile().serial;
    let (front_local, _handle_local) = HostFront::bind(None, local.clone()).await.unwrap();
    let (front_farm, _handle_farm) = HostFront::bind(None, farm.clone()).await.unwrap();
    let store_read = |device: &str| {
        let mut request = LogsRequest::new(STORE_APP);
        request.device = Some(device.to_owned());
        request
    };

    let at_home = Gateway::builder()
        .state_dir(state.path())
        .driver(
            Arc::new(AsLocalDefault(AdbPhone::new(config(front_local.port()))))
                as Arc<dyn AppLogger>,
        )
        .build()
        .unwrap();
    let names: Vec<String> = at_home
        .devices()
        .await
        .unwrap()
        .into_iter()
        .map(|d| d.id.to_string())
        .collect();
    assert_eq!(names, [serial.as_str()]);
    let task = at_home.start_task(TaskSpec::new(Agent::new("agent", Mode::Full)));
    let asked = task.logs(store_read(&serial)).await;
    assert_eq!(asked.status, Status::ApprovalPending, "{}", asked.message);
    let id = asked.approval_id.clone().unwrap();
    at_home.store().answer(&id, Answer::Always).unwrap();
    task.end().await;
    let rules = at_home.store().rules().unwrap();
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0].device.as_str(), serial);
    let again = at_home.start_task(TaskSpec::new(Agent::new("agent", Mode::Full)));
    let allowed = again.logs(store_read(&serial)).await;
    assert_eq!(allowed.status, Status::Ok, "{}", allowed.message);
    again.end().await;
    drop(at_home);

    // The same state, now with only the farm's server (not the local default) configured.
    let on_farm = Gateway::builder()
        .state_dir(state.path())
        .driver(Arc::new(AdbPhone::new(config(front_farm.port()))) as Arc<dyn AppLogger>)
        .build()
        .unwrap();
    let qualified = format!("127.0.0.1:{}/{serial}", front_farm.port());
    let names: Vec<String> = on_farm
        .devices()
        .await
        .unwrap()
        .into_iter()
        .map(|d| d.id.to_string())
        .collect();
    assert_eq!(names, [qualified.as_str()]);
    farm.clear_requests();
    let task = on_farm.start_task(TaskSpec::new(Agent::new("agent", Mode::Full)));
    for device in [serial.as_str(), qualified.as_str()] {
        let asked = task.logs(store_read(device)).await;
        assert_eq!(
            asked.status,
            Status::ApprovalPending,
            "{device}: {}",
            asked.message
        );
        let approval = on_farm
            .store()
            .approval(asked.approval_id.as_deref().unwrap())
            .unwrap()
            .unwrap();
        assert_eq!(approval.device, qualified);
    }
    assert!(
        farm.commands_run().iter().all(|c| !c.contains("logcat")),
        "the farm phone's logs were read under the local phone's rule: {:?}",
        farm.commands_run()
    );
    task.end().await;
}

/// Two adb servers (the simulator's host front: no adb needed) that both show a phone called
/// `PLSIM0001`: an "Always allow" given for the one on server A never covers the one on B, and
/// the rule, the approval and the history all name the phone with its server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_allow_on_one_server_does_not_cover_the_namesake_on_another() {
    use phonelogs_adbsim::HostFront;
    use phonelogs_gateway::Answer;
    const STORE_APP: &str = "com.spotify.music";
    let (phone_a, phone_b) = (SimPhone::default_phone(), SimPhone::default_phone());
    let serial = phone_a.profile().serial;
    assert_eq!(serial, phone_b.profile().serial);
    let (front_a, _handle_a) = HostFront::bind(None, phone_a.clone()).await.unwrap();
    let (front_b, _handle_b) = HostFront::bind(None, phone_b.clone()).await.unwrap();
    let gateway = Gateway::builder()
        .driver(Arc::new(AdbPhone::new(config(front_a.port()))) as Arc<dyn AppLogger>)
        .driver(Arc::new(AdbPhone::new(config(front_b.port()))) as Arc<dyn AppLogger>)
        .build()
        .unwrap();
    let on_a = format!("127.0.0.1:{}/{serial}", front_a.port());
    let on_b = format!("127.0.0.1:{}/{serial}", front_b.port());
    let store_read = |device: &str| {
        let mut request = LogsRequest::new(STORE_APP);
        request.device = Some(device.to_owned());
        request
    };

    let first = gateway.start_task(TaskSpec::new(Agent::new("agent", Mode::Full)));
    let asked = first.logs(store_read(&on_a)).await;
    assert_eq!(asked.status, Status::ApprovalPending, "{}", asked.message);
    let approval = gateway
        .store()
        .approval(asked.approval_id.as_deref().unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(approval.device, on_a);
    gateway
        .store()
        .answer(asked.approval_id.as_deref().unwrap(), Answer::Always)
        .unwrap();
    first.end().await;
    let rules = gateway.store().rules().unwrap();
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0].device.as_str(), on_a);

    let later = gateway.start_task(TaskSpec::new(Agent::new("agent", Mode::Full)));
    phone_b.clear_requests();
    let a = later.logs(store_read(&on_a)).await;
    assert_eq!(a.status, Status::Ok, "{}", a.message);
    let b = later.logs(store_read(&on_b)).await;
    assert_eq!(b.status, Status::ApprovalPending, "{}", b.message);
    assert!(
        phone_b.commands_run().iter().all(|c| !c.contains("logcat")),
        "B's logs were read before anyone was asked: {:?}",
        phone_b.commands_run()
    );
    // The bare serial is both phones: an error that names each, and nothing is read.
    let both = later.logs(store_read(&serial)).await;
    assert_eq!(both.status, Status::Error, "{}", both.message);
    assert!(
        both.message.contains(&on_a) && both.message.contains(&on_b),
        "{}",
        both.message
    );
    later.end().await;
}
