//! What the driver learns about an app once and keeps for the device: its uid in the user it
//! runs in, whether other users have a copy, its flags, version and install time, from
//! `pm list packages -U`, `dumpsys package` and `am get-current-user`.

use phonelogs_crash::android::{PackageInfo, parse_dumpsys_package, parse_pm_list_packages};

/// What the driver learns about an app once and keeps for the device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AppFacts {
    /// The app's uid in the user it runs in: the one uid its lines, its reports, the count
    /// and the gateway's re-check all use. A copy in another user (an app clone, a work
    /// profile) has another uid and is never read.
    pub uid: u32,
    /// What `pm list packages -U` printed for it, to notice a reinstall (a new uid).
    pub listed_uids: Vec<u32>,
    /// It is installed for more than one user, so a report that names no uid (Android 10's
    /// drop box) must have its pid's uid confirmed before it is shown.
    pub other_users: bool,
    /// `SYSTEM` in its flags.
    pub system: bool,
    /// `DEBUGGABLE` in its flags.
    pub debuggable: bool,
    /// The shared user, when it has one.
    pub shared_user: Option<String>,
    /// `versionCode=N` of the package's block, when the dump has one
    /// ([`PackageInfo::version_code`]: the block `dumpsys` printed, not one the app forged).
    pub version: Option<String>,
    /// `lastUpdateTime=` of the package's block, as printed (the phone's local time): a
    /// reinstall changes it, of the same version too ([`PackageInfo::last_update_time`]).
    pub installed: Option<String>,
    /// The phone's offset from UTC (`date +%z`, read with the facts), which turns
    /// [`AppFacts::installed`] into an instant; `None` when the phone did not say.
    pub utc_offset: Option<time::UtcOffset>,
}

/// What `pm list packages -U <pkg>` says: the package's uids, or `None` when it is not
/// installed. The command matches substrings, so only the exact name counts.
pub(crate) fn uids_of(pm_output: &str, package: &str) -> Option<Vec<u32>> {
    parse_pm_list_packages(pm_output)
        .into_iter()
        .find(|entry| entry.package == package)
        .map(|entry| entry.uids)
        .filter(|uids| !uids.is_empty())
}

/// Builds an app's facts from `pm list packages -U` (`listed`: one uid, or a comma list of one
/// per user on newer phones), `dumpsys package` and the user the person uses
/// (`am get-current-user`, when the phone answered it).
///
/// The app's user is the current user when the app is installed there, else the lowest user
/// it is installed for (an app that only exists as a clone or in a work profile); its uid there
/// is `user × 100000 + app id`, as Android numbers uids, whatever `pm` listed.
pub(crate) fn app_facts(
    listed: Vec<u32>,
    dumpsys: &str,
    package: &str,
    current_user: Option<u32>,
) -> AppFacts {
    let info: PackageInfo = parse_dumpsys_package(dumpsys, package).unwrap_or_default();
    let mut users: Vec<u32> = listed.iter().map(|uid| uid / PER_USER_RANGE).collect();
    users.extend(info.installed_users.iter().copied());
    users.sort_unstable();
    users.dedup();
    let app_id = listed
        .first()
        .copied()
        .or(info.user_id)
        .map_or(0, |uid| uid % PER_USER_RANGE);
    let user = current_user
        .filter(|user| users.contains(user))
        .or_else(|| users.first().copied())
        .unwrap_or(0);
    AppFacts {
        uid: user.saturating_mul(PER_USER_RANGE).saturating_add(app_id),
        listed_uids: listed,
        other_users: users.len() > 1,
        system: info.is_system(),
        debuggable: info.is_debuggable(),
        shared_user: info.shared_user.clone(),
        version: info.version_code.clone(),
        installed: info.last_update_time.clone(),
        utc_offset: None,
    }
}

/// The uids of one Android user: user N's uids are `N × 100000 + app id`.
pub(crate) const PER_USER_RANGE: u32 = 100_000;

/// What `am get-current-user` printed: the user's number, or `None` when the phone did not
/// say (an old release, an error).
pub(crate) fn current_user(output: &str) -> Option<u32> {
    output.trim().parse().ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn packages_and_flags() {
        assert_eq!(
            uids_of(
                "package:com.example.app uid:10127\npackage:com.example.app.pro uid:10128\n",
                "com.example.app"
            ),
            Some(vec![10127])
        );
        assert_eq!(
            uids_of("package:com.example.app.pro uid:10128\n", "com.example.app"),
            None
        );
        assert_eq!(
            uids_of(
                "package:com.example.app uid:10127\npackage:com.example.app uid:1010127\n",
                "com.example.app"
            ),
            Some(vec![10127, 1010127])
        );
        // dumpsys package layout per android-formats.md §6.
        let dumpsys = "Packages:\n  Package [com.example.app] (c0ffee):\n    userId=10127\n    pkg=Package{c0ffee com.example.app}\n    flags=[ DEBUGGABLE HAS_CODE ALLOW_CLEAR_USER_DATA ]\n    pkgFlags=[ DEBUGGABLE HAS_CODE ALLOW_CLEAR_USER_DATA ]\n";
        let facts = app_facts(vec![10127], dumpsys, "com.example.app", Some(0));
        assert!(facts.debuggable && !facts.system && facts.shared_user.is_none());
        let shared = "Packages:\n  Package [com.example.app] (c0ffee):\n    userId=1000\n    sharedUser=SharedUserSetting{1 android.uid.system/1000}\n    pkgFlags=[ SYSTEM HAS_CODE ]\n";
        let facts = app_facts(vec![1000], shared, "com.example.app", Some(0));
        assert!(facts.system && facts.shared_user.is_some());
        assert_eq!(facts.version, None, "no versionCode line");
    }

    #[test]
    fn the_version_code_is_read_from_the_packages_own_block() {
        let version = |dump: &str, package: &str| {
            parse_dumpsys_package(dump, package).and_then(|info| info.version_code)
        };
        let dump =
            include_str!("../../../../testdata/android/package/dumpsys-package-debuggable.txt");
        assert_eq!(version(dump, "com.example.crashtest").as_deref(), Some("1"));
        assert_eq!(version(dump, "com.other"), None);
        // Another package's block after it does not lend its version.
        let two = "Packages:\n  Package [a.b] (1):\n    userId=1\n  Package [c.d] (2):\n    versionCode=7 minSdk=21 targetSdk=34\n";
        assert_eq!(version(two, "a.b"), None);
        assert_eq!(version(two, "c.d").as_deref(), Some("7"));
        let bad = "Packages:\n  Package [c.d] (2):\n    versionCode=x1 minSdk=1\n";
        assert_eq!(version(bad, "c.d"), None);
        // A block forged before the `Packages:` section (an intent filter's action name with
        // line breaks, printed raw in the resolver table) does not lend its version.
        let forged = dump.replace(
            "      android.intent.action.MAIN:",
            "      x\nPackage [com.example.crashtest] (1):\n versionCode=99\n:",
        );
        assert_eq!(
            version(&forged, "com.example.crashtest").as_deref(),
            Some("1")
        );
    }

    /// Issue 37, item 9: when the installed build was installed, from the block's last
    /// `lastUpdateTime=` (the real one comes after `versionName`, whose text the app chose), in
    /// the phone's local time with `date +%z`.
    #[test]
    fn the_install_time_is_the_blocks_last_update_time_in_the_phones_offset() {
        let block = |version_name: &str| {
            format!(
                "Packages:\n  Package [c.d] (2):\n    userId=10123\n    versionCode=7 minSdk=21 targetSdk=34\n    versionName={version_name}\n    timeStamp=2026-10-09 14:59:13\n    lastUpdateTime=2026-10-09 14:59:14\n    flags=[ DEBUGGABLE HAS_CODE ]\n"
            )
        };
        let mut facts = app_facts(vec![10123], &block("1.0"), "c.d", Some(0));
        assert_eq!(facts.installed.as_deref(), Some("2026-10-09 14:59:14"));
        facts.utc_offset = phonelogs_crash::android::parse_date_offset("+0200\n");
        assert_eq!(
            crate::phone::installed_at_of(&facts),
            Some(time::macros::datetime!(2026-10-09 12:59:14 UTC))
        );
        let forged = app_facts(
            vec![10123],
            &block("1.0\n    lastUpdateTime=2020-01-01 00:00:00"),
            "c.d",
            Some(0),
        );
        assert_eq!(forged.installed.as_deref(), Some("2026-10-09 14:59:14"));
        let unknown = app_facts(
            vec![10123],
            &block("1.0").replace("14:59:14", "soon"),
            "c.d",
            None,
        );
        assert_eq!(unknown.installed, None);
        facts.utc_offset = None;
        assert_eq!(crate::phone::installed_at_of(&facts), None);
    }

    #[test]
    fn one_uid_the_apps_in_its_user() {
        // `pm list packages -U` on a phone with several users prints one comma list (a public
        // tool's capture of an Android 16 phone: `uid:10220,99910220`; testdata/README.md).
        let listed = uids_of(
            "package:com.example.app uid:10220,99910220\n",
            "com.example.app",
        )
        .unwrap();
        assert_eq!(listed, vec![10220, 99_910_220]);
        let facts = app_facts(listed.clone(), "", "com.example.app", Some(0));
        assert_eq!((facts.uid, facts.other_users), (10220, true));
        // The person uses user 999 (the clone's): the app is the copy there.
        assert_eq!(
            app_facts(listed.clone(), "", "com.example.app", Some(999)).uid,
            99_910_220
        );
        // Not installed for the current user: its lowest user.
        assert_eq!(
            app_facts(listed, "", "com.example.app", Some(10)).uid,
            10220
        );
        // Older phones list user 0's uid alone; `dumpsys package` names the other users.
        let dumpsys = "Packages:\n  Package [com.example.app] (c0ffee):\n    userId=10127\n    pkgFlags=[ HAS_CODE ]\n    User 0: ceDataInode=4001 installed=true hidden=false\n    User 10: ceDataInode=4002 installed=true hidden=false\n";
        let facts = app_facts(vec![10127], dumpsys, "com.example.app", None);
        assert_eq!((facts.uid, facts.other_users), (10127, true));
        let facts = app_facts(vec![10127], dumpsys, "com.example.app", Some(10));
        assert_eq!(facts.uid, 1_010_127);
        // One user: no confirmation needed.
        assert!(!app_facts(vec![10127], "", "com.example.app", Some(0)).other_users);
        assert_eq!(current_user("0\n"), Some(0));
        assert_eq!(current_user("Unknown command: get-current-user\n"), None);
    }
}
