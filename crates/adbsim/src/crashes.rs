//! What a crash, an ANR and a native crash leave on the phone: the crash-buffer block, the
//! system's lines, the drop box entries and the exit record, written through the formats
//! (`format.rs`) into the model (`phone.rs`).
//!
//! These are the scenario actions [`SimPhone::crash`], [`SimPhone::hang`] and
//! [`SimPhone::native_crash`]; they sit over the model and the formats, under the commands
//! (Crash Test's Crash and Hang buttons in `apps.rs` call them).

use crate::Error;
use crate::format;
use crate::model::{Buffer, DropBoxEntry, ExitRecord, Priority, Process};
use crate::phone::SimPhone;

impl SimPhone {
    /// The app throws an uncaught exception: a `FATAL EXCEPTION` block in the crash buffer, a
    /// `data_app_crash` drop box entry, an exit record, and the process dies. Returns its pid.
    pub fn crash(&self, package: &str, exception: &str, message: &str) -> Result<u32, Error> {
        self.crash_as_user(package, 0, exception, message)
    }

    /// [`SimPhone::crash`] of the app's copy in `user` (10 for the app clone).
    pub fn crash_as_user(
        &self,
        package: &str,
        user: u32,
        exception: &str,
        message: &str,
    ) -> Result<u32, Error> {
        let pid = self.ensure_running_as(package, user)?;
        {
            let mut state = self.lock();
            state.catch_up_noise();
            let process = state
                .process(pid)
                .cloned()
                .ok_or_else(|| Error::NotRunning(package.to_string()))?;
            let info = state.package(package).cloned();
            let now = state.now_ns();
            let ids = (process.uid, pid, pid);
            let stack = format::java_stack(package, exception, message);
            let block = format!(
                "FATAL EXCEPTION: main\nProcess: {}, PID: {pid}\n{}",
                process.name,
                stack.trim_end()
            );
            state.push_log(
                Buffer::Crash,
                now,
                ids,
                Priority::Error,
                "AndroidRuntime",
                &block,
            );
            let (system_pid, system_uid) = state.system_server();
            let short_activity = info
                .as_ref()
                .map(|info| info.main_activity.clone())
                .unwrap_or_default();
            state.push_log(
                Buffer::System,
                now + 2_000_000,
                (system_uid, system_pid, system_pid + 40),
                Priority::Warn,
                "ActivityTaskManager",
                &format!("  Force finishing activity {package}/{short_activity}"),
            );
            state.push_log(
                Buffer::Main,
                now + 5_000_000,
                ids,
                Priority::Info,
                "Process",
                &format!("Sending signal. PID: {pid} SIG: 9"),
            );
            let uptime = state.uptime_ms();
            let headers = format::app_error_headers(
                &state.profile,
                &process,
                info.as_ref(),
                None,
                now,
                uptime,
            );
            let tag = if info.as_ref().is_some_and(|info| info.system) {
                "system_app_crash"
            } else {
                "data_app_crash"
            };
            state.dropbox.push(DropBoxEntry {
                tag: tag.to_string(),
                time_ms: (now / 1_000_000) as i64,
                text: format!("{headers}{stack}"),
            });
            state.exits.push(ExitRecord {
                package: package.to_string(),
                uid: process.uid,
                pid,
                process: process.name.clone(),
                reason: 4,
                subreason: 0,
                status: 0,
                importance: 100,
                description: "crash".to_string(),
                time_ms: (now / 1_000_000) as i64,
                trace: None,
            });
        }
        self.remove_process(pid);
        Ok(pid)
    }

    /// The app stops answering input: an ANR in the system log, a `data_app_anr` drop box entry
    /// whose trace holds the app and several other processes, an exit record; the app is killed.
    pub fn hang(&self, package: &str) -> Result<u32, Error> {
        self.hang_as_user(package, 0)
    }

    /// [`SimPhone::hang`] of the app's copy in `user` (10 for the app clone).
    pub fn hang_as_user(&self, package: &str, user: u32) -> Result<u32, Error> {
        let pid = self.ensure_running_as(package, user)?;
        {
            let mut state = self.lock();
            state.catch_up_noise();
            let process = state
                .process(pid)
                .cloned()
                .ok_or_else(|| Error::NotRunning(package.to_string()))?;
            let info = state.package(package).cloned();
            let now = state.now_ns();
            let (system_pid, system_uid) = state.system_server();
            let activity = info
                .as_ref()
                .map(|info| info.main_activity.clone())
                .unwrap_or_default();
            let subject = format!(
                "Input dispatching timed out ({package}/{package}{activity} is not responding. Waited 5001ms for MotionEvent)"
            );
            state.push_log(
                Buffer::System,
                now,
                (system_uid, system_pid, system_pid + 52),
                Priority::Error,
                "ActivityManager",
                &format!("ANR in {package} ({package}/{activity})\nPID: {pid}\nReason: {subject}"),
            );
            let uptime = state.uptime_ms();
            let headers = format::app_error_headers(
                &state.profile,
                &process,
                info.as_ref(),
                Some(&subject),
                now,
                uptime,
            );
            let mut body = String::from(
                "CPU usage from 0ms to 5012ms later (2026-01-01 00:00:00.000 to 2026-01-01 00:00:05.012):\n  48% 1532/system_server: 30% user + 18% kernel / faults: 10530 minor\n",
            );
            body = body.replace(
                "2026-01-01 00:00:00.000 to 2026-01-01 00:00:05.012",
                &format!(
                    "{} to {}",
                    format::date_time_ms(now - 5_012_000_000, state.profile.utc_offset_minutes),
                    format::date_time_ms(now, state.profile.utc_offset_minutes)
                ),
            );
            body.push_str(&format::anr_process_section(
                &state.profile,
                &process,
                now,
                true,
            ));
            let others: Vec<Process> = state
                .processes
                .iter()
                .filter(|other| {
                    other.pid != pid
                        && (other.name == "system_server" || other.name == "com.android.systemui")
                })
                .cloned()
                .collect();
            for other in &others {
                body.push_str(&format::anr_process_section(
                    &state.profile,
                    other,
                    now,
                    false,
                ));
            }
            let tag = if info.as_ref().is_some_and(|info| info.system) {
                "system_app_anr"
            } else {
                "data_app_anr"
            };
            state.dropbox.push(DropBoxEntry {
                tag: tag.to_string(),
                time_ms: (now / 1_000_000) as i64,
                text: format!("{headers}{body}"),
            });
            state.exits.push(ExitRecord {
                package: package.to_string(),
                uid: process.uid,
                pid,
                process: process.name.clone(),
                reason: 6,
                subreason: 0,
                status: 0,
                importance: 100,
                description: format!("user request after error: {subject}"),
                time_ms: (now / 1_000_000) as i64,
                trace: Some(format!(
                    "/data/system/procexitstore/{}/anr_{pid}.gz",
                    process.uid
                )),
            });
        }
        self.remove_process(pid);
        Ok(pid)
    }

    /// The app dies of a signal in native code: `F libc` and `F DEBUG` lines in the crash buffer,
    /// `data_app_native_crash` and `SYSTEM_TOMBSTONE` drop box entries, an exit record.
    pub fn native_crash(&self, package: &str, signal: u32) -> Result<u32, Error> {
        let pid = self.ensure_running(package)?;
        {
            let mut state = self.lock();
            state.catch_up_noise();
            let process = state
                .process(pid)
                .cloned()
                .ok_or_else(|| Error::NotRunning(package.to_string()))?;
            let info = state.package(package).cloned();
            let now = state.now_ns();
            let signal_name = match signal {
                6 => "6 (SIGABRT), code -1 (SI_QUEUE)",
                4 => "4 (SIGILL), code 2 (ILL_ILLOPN)",
                _ => "11 (SIGSEGV), code 1 (SEGV_MAPERR)",
            };
            let short_name = format::thread_comm(&process, 0);
            state.push_log(
                Buffer::Crash,
                now,
                (process.uid, pid, pid),
                Priority::Fatal,
                "libc",
                &format!("Fatal signal {signal_name}, fault addr 0x0 in tid {pid} ({short_name}), pid {pid} ({short_name})"),
            );
            let tombstone = format::tombstone(&state.profile, &process, signal, now);
            let dump_pid = state.allocate_pid();
            state.push_log(
                Buffer::Crash,
                now + 80_000_000,
                (0, dump_pid, dump_pid),
                Priority::Fatal,
                "DEBUG",
                &tombstone,
            );
            let uptime = state.uptime_ms();
            let headers = format::app_error_headers(
                &state.profile,
                &process,
                info.as_ref(),
                None,
                now,
                uptime,
            );
            state.dropbox.push(DropBoxEntry {
                tag: "data_app_native_crash".to_string(),
                time_ms: (now / 1_000_000) as i64,
                text: format!("{headers}{tombstone}"),
            });
            let fingerprint = state.profile.fingerprint();
            let hardware = state.profile.device.clone();
            state.dropbox.push(DropBoxEntry {
                tag: "SYSTEM_TOMBSTONE".to_string(),
                time_ms: (now / 1_000_000) as i64 + 1,
                text: format!(
                    "isPrevious: false\nBuild: {fingerprint}\nHardware: {}\nRevision: MP1.0\nBootloader: slider-1.2-9152140\nRadio: g5300q-230626-230818-B-10689513\nKernel: Linux version 6.1.99-android14-11\n\n{tombstone}",
                    hardware
                ),
            });
            state.exits.push(ExitRecord {
                package: package.to_string(),
                uid: process.uid,
                pid,
                process: process.name.clone(),
                reason: 5,
                subreason: 0,
                status: signal,
                importance: 100,
                description: "crash".to_string(),
                time_ms: (now / 1_000_000) as i64,
                trace: None,
            });
        }
        self.remove_process(pid);
        Ok(pid)
    }
}
