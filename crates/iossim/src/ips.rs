//! The crash reports ReportCrash writes, in the two real forms: 309 (a one-line JSON header
//! over a pretty-printed JSON body, iOS 15 and later) and 109 (the same header over Apple's
//! text report). Layouts follow `shared/notes/ios-formats.md` §3-§5 and the fixtures in
//! `testdata/ios/` (see `testdata/iossim/README.md`).

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};
use time::{OffsetDateTime, UtcOffset};

use crate::model::{App, CrashKind, Crashed, Process, Profile, ReportFile, ReportForm, SimPhone};

/// What one report is about.
pub(crate) struct Report<'a> {
    pub process: &'a Process,
    pub app: Option<&'a App>,
    pub bundle_id: Option<&'a str>,
    pub kind: &'a CrashKind,
    pub time: SystemTime,
    pub profile: &'a Profile,
    pub serial: u64,
}

fn local(time: SystemTime, offset_minutes: i32) -> OffsetDateTime {
    let offset = UtcOffset::from_whole_seconds(offset_minutes * 60).unwrap_or(UtcOffset::UTC);
    OffsetDateTime::from(time).to_offset(offset)
}

fn zone(offset_minutes: i32) -> String {
    let sign = if offset_minutes < 0 { '-' } else { '+' };
    let m = offset_minutes.unsigned_abs();
    format!("{sign}{:02}{:02}", m / 60, m % 60)
}

/// `YYYY-MM-DD-HHMMSS` in the phone's local time, as in report file names.
pub(crate) fn file_stamp(time: SystemTime, offset_minutes: i32) -> String {
    let t = local(time, offset_minutes);
    format!(
        "{:04}-{:02}-{:02}-{:02}{:02}{:02}",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

/// `YYYY-MM-DD HH:MM:SS.<frac> +HHMM` with `digits` fraction digits.
fn stamp(time: SystemTime, offset_minutes: i32, digits: u32) -> String {
    let t = local(time, offset_minutes);
    let frac = match digits {
        2 => "00".to_owned(),
        _ => format!("{:04}", t.nanosecond() / 100_000),
    };
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{frac} {}",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        zone(offset_minutes)
    )
}

fn uuid(seed: u64, salt: u64) -> String {
    let a = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ salt;
    let b = a.rotate_left(17).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    format!(
        "{:08X}-{:04X}-4{:03X}-8{:03X}-{:012X}",
        (a >> 32) as u32,
        (a >> 16) as u16,
        (a as u16) & 0xFFF,
        (b >> 48) as u16 & 0xFFF,
        b & 0xFFFF_FFFF_FFFF
    )
}

fn names(report: &Report<'_>) -> (String, String, String, String) {
    let name = report.process.name().to_owned();
    let bundle = report.bundle_id.unwrap_or(&name).to_owned();
    let (version, build) = report
        .app
        .map(|a| (a.version.clone(), a.build.clone()))
        .unwrap_or_else(|| (String::new(), String::new()));
    (name, bundle, version, build)
}

fn os_version(profile: &Profile) -> String {
    format!(
        "iPhone OS {} ({})",
        profile.product_version(),
        profile.build_version()
    )
}

/// The one-line header both forms start with.
fn header(report: &Report<'_>, bug_type: &str, incident: &str, slice: &str) -> String {
    let (name, bundle, version, build) = names(report);
    let value = json!({
        "app_name": name,
        "timestamp": stamp(report.time, report.profile.utc_offset_minutes, 2),
        "app_version": version,
        "slice_uuid": slice.to_lowercase(),
        "adam_id": 0,
        "build_version": build,
        "platform": 2,
        "bundleID": bundle,
        "share_with_app_devs": 0,
        "is_first_party": 0,
        "bug_type": bug_type,
        "os_version": os_version(report.profile),
        "roots_installed": 0,
        "name": name,
        "incident_id": incident,
    });
    escape_slashes(&value.to_string())
}

/// Apple's JSON writer escapes `/` in strings; a `/` only ever appears inside a string.
fn escape_slashes(text: &str) -> String {
    text.replace('/', "\\/")
}

/// `(type, signal, codes, subtype, termination, asi, frames)` for a kind.
fn exception(
    kind: &CrashKind,
    name: &str,
    bundle: &str,
    pid: u32,
) -> (Value, Option<Value>, Value) {
    match kind {
        CrashKind::Exception(reason) => (
            json!({"codes":"0x0000000000000000, 0x0000000000000000","rawCodes":[0,0],"type":"EXC_CRASH","signal":"SIGABRT"}),
            Some(
                json!({"flags":0,"code":6,"namespace":"SIGNAL","indicator":"Abort trap: 6","byProc":name,"byPid":pid}),
            ),
            json!({"libsystem_c.dylib":["abort() called"], "CoreFoundation": [format!("*** Terminating app due to uncaught exception 'NSInternalInconsistencyException', reason: '{reason}'")]}),
        ),
        CrashKind::BadAccess(address) => (
            json!({"codes":format!("0x0000000000000001, 0x{address:016x}"),"rawCodes":[1,address],"type":"EXC_BAD_ACCESS","signal":"SIGSEGV","subtype":format!("KERN_INVALID_ADDRESS at 0x{address:016x}")}),
            Some(
                json!({"flags":0,"code":11,"namespace":"SIGNAL","indicator":"Segmentation fault: 11","byProc":"exc handler","byPid":pid}),
            ),
            json!({}),
        ),
        CrashKind::SwiftTrap(message) => (
            json!({"codes":"0x0000000000000001, 0x0000000100f4d2c4","rawCodes":[1,4310946500u64],"type":"EXC_BREAKPOINT","signal":"SIGTRAP"}),
            Some(
                json!({"flags":0,"code":5,"namespace":"SIGNAL","indicator":"Trace/BPT trap: 5","byProc":"exc handler","byPid":pid}),
            ),
            json!({"libswiftCore.dylib":[format!("{name}/ViewController.swift:42: Fatal error: {message}")]}),
        ),
        CrashKind::Watchdog(explanation) => (
            json!({"codes":"0x0000000000000000, 0x0000000000000000","rawCodes":[0,0],"type":"EXC_CRASH","signal":"SIGKILL"}),
            Some(
                json!({"code":2_343_432_205u64,"flags":6,"namespace":"FRONTBOARD","reasons":[
                    format!("<RBSTerminateContext| domain:10 code:0x8BADF00D explanation:{explanation} app<{bundle}({pid})>:{pid} exhausted real (wall clock) time allowance of 10.00 seconds"),
                    "WatchdogEvent: process-exit"
                ]}),
            ),
            json!({}),
        ),
    }
}

fn frames(kind: &CrashKind) -> Value {
    match kind {
        CrashKind::Exception(_) => json!([
            {"imageOffset":37908,"symbol":"__pthread_kill","symbolLocation":8,"imageIndex":1},
            {"imageOffset":118212,"symbol":"abort","symbolLocation":180,"imageIndex":2},
            {"imageOffset":40000,"symbol":"ViewController.crashTapped(_:)","symbolLocation":64,"imageIndex":0}
        ]),
        CrashKind::BadAccess(_) => json!([
            {"imageOffset":41200,"symbol":"ViewController.nativeCrashTapped(_:)","symbolLocation":24,"imageIndex":0}
        ]),
        CrashKind::SwiftTrap(_) => json!([
            {"imageOffset":401096,"symbol":"_assertionFailure(_:_:file:line:flags:)","symbolLocation":264,"imageIndex":3},
            {"imageOffset":40000,"symbol":"ViewController.trapTapped(_:)","symbolLocation":64,"imageIndex":0}
        ]),
        CrashKind::Watchdog(_) => json!([
            {"imageOffset":5464,"symbol":"__semwait_signal","symbolLocation":8,"imageIndex":1},
            {"imageOffset":24000,"symbol":"nanosleep","symbolLocation":220,"imageIndex":2},
            {"imageOffset":40000,"symbol":"ViewController.hangTapped(_:)","symbolLocation":64,"imageIndex":0}
        ]),
    }
}

/// A 309 report: header line, then the body's top-level keys one per line as `"key" : value`.
pub(crate) fn json_309(report: &Report<'_>) -> Vec<u8> {
    let incident = uuid(report.serial, u64::from(report.process.pid));
    let slice = uuid(u64::from(report.process.pid), 7);
    let (name, bundle, version, build) = names(report);
    let pid = report.process.pid;
    let (exception, termination, asi) = exception(report.kind, &name, &bundle, pid);
    let profile = report.profile;
    let launched = report
        .process
        .started
        .min(report.time - Duration::from_millis(500));
    let mut body: Vec<(&str, Value)> = vec![
        ("uptime", json!(9000)),
        ("procRole", json!("Foreground")),
        ("version", json!(2)),
        ("userID", json!(501)),
        ("deployVersion", json!(210)),
        ("modelCode", json!(profile.product_type)),
        ("coalitionID", json!(500 + u64::from(pid % 100))),
        (
            "osVersion",
            json!({"isEmbedded":true,"train":format!("iPhone OS {}", profile.product_version()),"releaseType":"User","build":profile.build_version()}),
        ),
        (
            "captureTime",
            json!(stamp(report.time, profile.utc_offset_minutes, 4)),
        ),
        ("incident", json!(incident)),
        ("pid", json!(pid)),
        ("cpuType", json!("ARM-64")),
        ("roots_installed", json!(0)),
        ("bug_type", json!("309")),
        (
            "procLaunch",
            json!(stamp(launched, profile.utc_offset_minutes, 4)),
        ),
        ("procName", json!(name)),
        ("procPath", json!(report.process.executable)),
        (
            "bundleInfo",
            json!({"CFBundleShortVersionString":version,"CFBundleVersion":build,"CFBundleIdentifier":bundle}),
        ),
        (
            "storeInfo",
            json!({"deviceIdentifierForVendor":uuid(7, 7),"thirdParty":true}),
        ),
        ("parentProc", json!("launchd")),
        ("parentPid", json!(1)),
        ("exception", exception),
    ];
    if let Some(termination) = termination {
        body.push(("termination", termination));
    }
    if asi.as_object().is_some_and(|o| !o.is_empty()) {
        body.push(("asi", asi));
    }
    if let CrashKind::Exception(reason) = report.kind {
        body.push((
            "exceptionReason",
            json!({"arguments":[],"format_string":reason,"name":"NSInternalInconsistencyException","reason":reason,"type":"objc-exception","composed_message":reason,"className":"NSException"}),
        ));
        body.push((
            "lastExceptionBacktrace",
            json!([
                {"imageOffset":1028,"symbol":"__exceptionPreprocess","symbolLocation":164,"imageIndex":4},
                {"imageOffset":2048,"symbol":"objc_exception_throw","symbolLocation":60,"imageIndex":5},
                {"imageOffset":40000,"symbol":"ViewController.crashTapped(_:)","symbolLocation":64,"imageIndex":0}
            ]),
        ));
    }
    body.push(("faultingThread", json!(0)));
    body.push((
        "threads",
        json!([{"triggered":true,"id":80001,"queue":"com.apple.main-thread","frames":frames(report.kind)}]),
    ));
    body.push(("usedImages", used_images(report, &slice, &name)));
    body.push((
        "sharedCache",
        json!({"base":6_442_450_944u64,"size":3_221_225_472u64,"uuid":"f1f1f1f1-b2b2-c3c3-d4d4-e5e5e5e5e5e5"}),
    ));
    body.push((
        "legacyInfo",
        json!({"threadTriggered":{"queue":"com.apple.main-thread"}}),
    ));
    let mut text = header(report, "309", &incident, &slice);
    text.push_str("\n{\n");
    push_body(&mut text, &body);
    text.into_bytes()
}

/// A 309 report's `usedImages`: the app's executable, then the system libraries its frames
/// name.
fn used_images(report: &Report<'_>, slice: &str, name: &str) -> Value {
    json!([
        {"source":"P","arch":"arm64","base":4_301_586_432u64,"size":65536,"uuid":slice.to_lowercase(),"path":report.process.executable,"name":name},
        {"source":"P","arch":"arm64e","base":7_690_119_168u64,"size":229_376,"uuid":"c1c1c1c1-b2b2-c3c3-d4d4-e5e5e5e5e5e5","path":"/usr/lib/system/libsystem_kernel.dylib","name":"libsystem_kernel.dylib"},
        {"source":"P","arch":"arm64e","base":6_822_039_552u64,"size":520_192,"uuid":"e1e1e1e1-b2b2-c3c3-d4d4-e5e5e5e5e5e5","path":"/usr/lib/system/libsystem_c.dylib","name":"libsystem_c.dylib"},
        {"source":"P","arch":"arm64e","base":6_900_000_768u64,"size":4_194_304,"uuid":"a1a1a1a1-b2b2-c3c3-d4d4-e5e5e5e5e5e5","path":"/usr/lib/swift/libswiftCore.dylib","name":"libswiftCore.dylib"},
        {"source":"P","arch":"arm64e","base":6_700_000_256u64,"size":5_242_880,"uuid":"b1b1b1b1-b2b2-c3c3-d4d4-e5e5e5e5e5e5","path":"/System/Library/Frameworks/CoreFoundation.framework/CoreFoundation","name":"CoreFoundation"},
        {"source":"P","arch":"arm64e","base":6_600_000_512u64,"size":262_144,"uuid":"d1d1d1d1-b2b2-c3c3-d4d4-e5e5e5e5e5e5","path":"/usr/lib/libobjc.A.dylib","name":"libobjc.A.dylib"}
    ])
}

/// A 309 report's body as Apple writes it: one `"key" : value` a line, slashes escaped.
fn push_body(text: &mut String, body: &[(&str, Value)]) {
    let last = body.len().saturating_sub(1);
    for (i, (key, value)) in body.iter().enumerate() {
        text.push_str(&format!(
            "  \"{key}\" : {}{}\n",
            escape_slashes(&value.to_string()),
            if i == last { "" } else { "," }
        ));
    }
    text.push('}');
}

/// A 109 report: the JSON header over the classic text report.
pub(crate) fn text_109(report: &Report<'_>) -> Vec<u8> {
    let incident = uuid(report.serial, u64::from(report.process.pid));
    let slice = uuid(u64::from(report.process.pid), 7);
    let (name, bundle, version, build) = names(report);
    let pid = report.process.pid;
    let profile = report.profile;
    let (exception_type, codes, specific) = text_exception(report.kind, &name, &bundle, pid);
    let termination = match report.kind {
        CrashKind::Watchdog(_) => "Termination Reason: FRONTBOARD 2343432205 \n\n".to_owned(),
        _ => String::new(),
    };
    let specific = if specific.is_empty() {
        String::new()
    } else {
        format!("Application Specific Information:\n{specific}\n\n")
    };
    let mut text = header(report, "109", &incident, &slice);
    text.push('\n');
    text.push_str(&format!(
        "Incident Identifier: {incident}\n\
CrashReporter Key:   {key}\n\
Hardware Model:      {model}\n\
Process:             {name} [{pid}]\n\
Path:                {path}\n\
Identifier:          {bundle}\n\
Version:             {build} ({version})\n\
Code Type:           ARM-64 (Native)\n\
Role:                Foreground\n\
Parent Process:      launchd [1]\n\
Coalition:           {bundle} [{coalition}]\n\
\n\
\n\
Date/Time:           {date}\n\
Launch Time:         {launch}\n\
OS Version:          {os}\n\
Release Type:        User\n\
Baseband Version:    5.02.04\n\
Report Version:      104\n\
\n\
Exception Type:  {exception_type}\n\
Exception Codes: {codes}\n\
Exception Note:  EXC_CORPSE_NOTIFY\n\
{termination}\
Triggered by Thread:  0\n\
\n\
{specific}\
Thread 0 name:  Dispatch queue: com.apple.main-thread\n\
Thread 0 Crashed:\n\
0   libsystem_kernel.dylib        \t0x00000001ca5fd414 __pthread_kill + 8\n\
1   libsystem_c.dylib             \t0x00000001a57ac744 abort + 180\n\
2   {name:<30}\t0x0000000100f4dc40 0x100f44000 + 40000\n\
\n\
Thread 0 crashed with ARM Thread State (64-bit):\n\
    x0: 0x0000000000000000   x1: 0x0000000000000000   x2: 0x0000000000000000   x3: 0x0000000000000000\n\
    fp: 0x000000016ee0a010   lr: 0x00000001e4b2f0f4\n\
    sp: 0x000000016ee09ff0   pc: 0x00000001ca5fd414 cpsr: 0x40000000\n\
   esr: 0x56000080  Address size fault\n\
\n\
\n\
Binary Images:\n\
0x100f44000 - 0x100f53fff {name} arm64  <{slice_hex}> {path}\n\
0x1ca5f5000 - 0x1ca62afff libsystem_kernel.dylib arm64e  <c1c1c1c1b2b2c3c3d4d4e5e5e5e5e5e5> /usr/lib/system/libsystem_kernel.dylib\n\
\n\
EOF\n",
        key = uuid(3, 3).replace('-', "").to_lowercase(),
        model = profile.product_type,
        path = report.process.executable,
        coalition = 500 + pid % 100,
        date = stamp(report.time, profile.utc_offset_minutes, 4),
        launch = stamp(
            report.process.started.min(report.time - Duration::from_millis(500)),
            profile.utc_offset_minutes,
            4
        ),
        os = os_version(profile),
        slice_hex = slice.replace('-', "").to_lowercase(),
    ));
    text.into_bytes()
}

/// A 109 report's exception type, codes and Application Specific Information for `kind`.
fn text_exception(
    kind: &CrashKind,
    name: &str,
    bundle: &str,
    pid: u32,
) -> (&'static str, String, String) {
    match kind {
        CrashKind::Exception(reason) => (
            "EXC_CRASH (SIGABRT)",
            "0x0000000000000000, 0x0000000000000000".to_owned(),
            format!(
                "*** Terminating app due to uncaught exception 'NSInternalInconsistencyException', reason: '{reason}'\nabort() called"
            ),
        ),
        CrashKind::BadAccess(address) => (
            "EXC_BAD_ACCESS (SIGSEGV)",
            format!("KERN_INVALID_ADDRESS at 0x{address:016x}"),
            String::new(),
        ),
        CrashKind::SwiftTrap(message) => (
            "EXC_BREAKPOINT (SIGTRAP)",
            "0x0000000000000001, 0x0000000100f4d2c4".to_owned(),
            format!("{name}/ViewController.swift:42: Fatal error: {message}"),
        ),
        CrashKind::Watchdog(explanation) => (
            "EXC_CRASH (SIGKILL)",
            "0x0000000000000000, 0x0000000000000000".to_owned(),
            format!(
                "<RBSTerminateContext| domain:10 code:0x8BADF00D explanation:{explanation} app<{bundle}({pid})>:{pid} exhausted real (wall clock) time allowance of 10.00 seconds"
            ),
        ),
    }
}
/// ReportCrash: a process that crashes leaves the model's process list, and its report is
/// written here, over the model, in the form the phone's profile says.
impl SimPhone {
    /// The process crashes now: it leaves the process list and ReportCrash writes its report,
    /// which the mover makes visible once written. Returns the report's path.
    pub fn crash(&self, pid: u32, kind: CrashKind) -> Option<String> {
        self.crash_at(pid, kind, SystemTime::now(), false)
    }

    /// As [`SimPhone::crash`], stamped `time`; `retired` puts it in `Retired/` at once, visible.
    pub fn crash_at(
        &self,
        pid: u32,
        kind: CrashKind,
        time: SystemTime,
        retired: bool,
    ) -> Option<String> {
        let Crashed {
            process,
            app,
            profile,
            serial: count,
            write_delay,
        } = self.take_crashed(pid)?;
        let report = Report {
            process: &process,
            app: app.as_ref(),
            bundle_id: process.bundle_id.as_deref(),
            kind: &kind,
            time,
            profile: &profile,
            serial: count,
        };
        let bytes = match profile.report_form {
            ReportForm::Json309 => json_309(&report),
            ReportForm::Text109 => text_109(&report),
        };
        let name = format!(
            "{}-{}.ips",
            process.name(),
            file_stamp(time, profile.utc_offset_minutes)
        );
        let path = if retired {
            format!("Retired/{name}")
        } else {
            name
        };
        let message = match &kind {
            CrashKind::Watchdog(_) => "scene-update watchdog transgression",
            _ => "Process crashed",
        };
        let path = self.file_report(
            ReportFile {
                path,
                bytes: Arc::new(bytes),
                written: time,
                visible: retired,
                ready_at: Instant::now() + write_delay,
            },
            &format!("[FBSceneManager] {message}: {} ({pid})", process.name()),
        );
        Some(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Signing;

    /// A crash and a watchdog report of one app in the same second (the `--sim-ios` run's
    /// flake): each keeps its own file, the second named as a real phone names it.
    #[test]
    fn two_reports_in_one_second_get_two_names() {
        let phone = SimPhone::default_phone();
        let time = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let mut paths = Vec::new();
        for kind in [
            CrashKind::BadAccess(0x10),
            CrashKind::Watchdog("scene-update".into()),
            CrashKind::BadAccess(0x20),
        ] {
            let pid = phone.launch("com.example.appx").unwrap();
            paths.push(phone.crash_at(pid, kind, time, true).unwrap());
        }
        let stem = paths[0].strip_suffix(".ips").unwrap();
        assert_eq!(
            paths,
            [
                paths[0].clone(),
                format!("{stem}.0001.ips"),
                format!("{stem}.0002.ips")
            ]
        );
    }

    /// Issue 37: each report carries the build that crashed, in the header's `build_version`
    /// and the body's `bundleInfo.CFBundleVersion`, as the real captures cited in
    /// `testdata/iossim/README.md` do; a new build's reports carry the new one.
    #[test]
    fn reports_carry_the_build_that_crashed() {
        let phone = SimPhone::default_phone();
        let time = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let bundle = "com.example.appx";
        let store = phone.app(bundle).unwrap().build;
        let pid = phone.launch(bundle).unwrap();
        let kind = CrashKind::Exception("first".into());
        let first = phone.crash_at(pid, kind, time, true).unwrap();
        phone
            .install_build(bundle, Signing::Development, "408")
            .unwrap();
        assert_eq!(phone.app(bundle).unwrap().build, "408");
        let pid = phone.launch(bundle).unwrap();
        let later = time + Duration::from_secs(5);
        let second = phone
            .crash_at(pid, CrashKind::BadAccess(8), later, true)
            .unwrap();
        let files = phone.report_files();
        let text = |path: &str| {
            let file = files.iter().find(|f| f.path == path).unwrap();
            String::from_utf8(file.bytes.to_vec()).unwrap()
        };
        for (path, build) in [(first, store.as_str()), (second, "408")] {
            let text = text(&path);
            let header = text.lines().next().unwrap();
            assert!(
                header.contains(&format!("\"build_version\":\"{build}\"")),
                "{header}"
            );
            let bundle_info = text.lines().find(|l| l.contains("\"bundleInfo\"")).unwrap();
            let version = format!("\"CFBundleVersion\":\"{build}\"");
            assert!(bundle_info.contains(&version), "{bundle_info}");
        }
        assert_ne!(store, "408");
    }
}
