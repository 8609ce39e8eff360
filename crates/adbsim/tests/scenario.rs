//! Scenario files: the fixture in `testdata/adbsim/` builds a phone whose drop box, logs and exit
//! records show every action, and the part after `wait` plays on a running phone.

#![allow(clippy::unwrap_used)]

use phonelogs_adbsim::{Scenario, run_shell};

fn fixture() -> Scenario {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/adbsim/crash_and_anr.json"
    );
    Scenario::from_file(std::path::Path::new(path)).unwrap()
}

#[tokio::test]
async fn scenario_actions_leave_their_traces() {
    let scenario = fixture();
    let phone = scenario.build().unwrap();
    let uid = phone.uid_of("dev.phonelogs.sample", 0).unwrap();
    assert_eq!(uid, 10300);
    let dump = run_shell(&phone, "dumpsys dropbox").await;
    let text = String::from_utf8(dump.stdout).unwrap();
    assert!(text.contains(" data_app_crash (text, "), "{text}");
    assert!(text.contains(" data_app_anr ("), "{text}");
    assert!(text.contains(" data_app_native_crash ("), "{text}");
    assert!(text.contains(" SYSTEM_TOMBSTONE ("), "{text}");
    let logs = run_shell(&phone, &format!("logcat -d --uid={uid} -v uid")).await;
    let logs = String::from_utf8(logs.stdout).unwrap();
    assert!(logs.contains("I Sample  : hello from the sample"), "{logs}");
    assert!(!logs.contains("after the wait"));
    let exits = run_shell(&phone, "dumpsys activity exit-info dev.phonelogs.crashtest").await;
    let exits = String::from_utf8(exits.stdout).unwrap();
    assert!(
        exits.contains("reason=6 (ANR)")
            && exits.contains("reason=5 (APP CRASH(NATIVE)) subreason=0 (UNKNOWN) status=6"),
        "{exits}"
    );
    scenario.play_rest(&phone).await.unwrap();
    let logs = run_shell(&phone, &format!("logcat -d --uid={uid}")).await;
    assert!(
        String::from_utf8(logs.stdout)
            .unwrap()
            .contains("W Sample  : after the wait")
    );
}

/// A package installed in two users (the default phone's `com.whatsapp`, cloned into user 10)
/// prints one `Historical Process Exit for uid=` section per user's uid, lowest first, however
/// the two copies' exits interleave.
#[tokio::test]
async fn exit_info_prints_one_section_per_user() {
    let phone = phonelogs_adbsim::SimPhone::default_phone();
    phone
        .crash("com.whatsapp", "java.lang.IllegalStateException", "a")
        .unwrap();
    phone
        .crash_as_user("com.whatsapp", 10, "java.lang.IllegalStateException", "b")
        .unwrap();
    phone
        .crash("com.whatsapp", "java.lang.IllegalStateException", "c")
        .unwrap();
    let exits = run_shell(&phone, "dumpsys activity exit-info com.whatsapp").await;
    let exits = String::from_utf8(exits.stdout).unwrap();
    let sections: Vec<&str> = exits
        .lines()
        .filter(|line| line.starts_with("    Historical Process Exit for uid="))
        .collect();
    assert_eq!(
        sections,
        [
            "    Historical Process Exit for uid=10145",
            "    Historical Process Exit for uid=1010145",
        ],
        "{exits}"
    );
    let clone_section = &exits[exits.find("uid=1010145\n").unwrap()..];
    assert_eq!(
        clone_section.matches("ApplicationExitInfo #").count(),
        1,
        "{exits}"
    );
    assert!(clone_section.contains("packageUid=1010145 definingUid=1010145 user=10"));
    assert_eq!(exits.matches("ApplicationExitInfo #").count(), 3, "{exits}");
}

#[test]
fn unknown_actions_are_refused() {
    let error = Scenario::from_json(r#"{"actions":[{"action":"explode"}]}"#).unwrap_err();
    assert!(error.to_string().contains("invalid scenario"));
}
