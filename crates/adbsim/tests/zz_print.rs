#![allow(clippy::unwrap_used, missing_docs)]
//! temp
use phonelogs_adbsim::*;
#[tokio::test]
async fn print() {
    for android in [AndroidVersion::Android10, AndroidVersion::Android16] {
        let phone = SimPhone::for_android(android);
        phone
            .crash(
                "dev.phonelogs.crashtest",
                "java.lang.IllegalStateException",
                "boom",
            )
            .unwrap();
        phone.hang("com.x8bit.bitwarden").unwrap();
        phone.native_crash("dev.phonelogs.crashtest", 11).unwrap();
        for cmd in [
            "logcat -d -t 12 -v epoch -v uid",
            "logcat -d -t 5",
            "logcat -d -b crash -v uid -t 30",
            "dumpsys dropbox",
            "dumpsys dropbox --print data_app_crash",
            "dumpsys dropbox --print data_app_anr",
            "dumpsys activity exit-info",
            "dumpsys package dev.phonelogs.suite.mail",
            "date",
            "getprop",
            "logcat -g",
            "debuggerd -b 1",
            "logcat -d --uid=10234",
        ] {
            let out = run_shell(&phone, cmd).await;
            println!(
                "===== {cmd} (exit {})\n{}{}",
                out.exit_code,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}
