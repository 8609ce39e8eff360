#![allow(clippy::unwrap_used, missing_docs)]
//! temp
use phonelogs_adbsim::*;
#[tokio::test]
async fn print() {
    let phone = SimPhone::empty(Profile::for_android(AndroidVersion::Android14));
    phone.install(Package::new("dev.example.app", 10234));
    phone.install(Package::new("dev.example.other", 10111));
    phone
        .log("dev.example.app", Priority::Error, "App", "mine")
        .unwrap();
    for index in 0..5 {
        phone
            .log(
                "dev.example.other",
                Priority::Info,
                "Other",
                &format!("theirs {index}"),
            )
            .unwrap();
    }
    for cmd in [
        "logcat -d -b main -v uid",
        "logcat -d -b main -t 5 -v uid",
        "logcat -d -b main --uid=10234 -t 5",
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
