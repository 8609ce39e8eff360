//! `phonelogs doctor`, per iPhone: its iOS version, Developer Mode, whether the developer disk
//! image is mounted, which process list answered (and so whether the app's extensions can be
//! read), each finding with its fix. Trust and lock states are the device's own finding.

use phonelogs_driver::DeviceId;
use phonelogs_ios::PhoneCheck;
use phonelogs_ios::sources::{Blocker, MOUNT, causes, fixes};

use crate::Finding;

/// How to turn Developer Mode on.
const DEVELOPER_MODE_FIX: &str = "turn on Developer Mode: Settings › Privacy & Security › Developer Mode (the iPhone restarts and asks to confirm)";

/// The findings of one iPhone, from what [`phonelogs_ios::LockdownPhone::check_phone`] saw.
pub fn phone_findings(device: &DeviceId, check: &PhoneCheck) -> Vec<Finding> {
    let name = |what: &str| format!("iPhone {device}: {what}");
    let version = check.facts.product_version.as_deref();
    let major = version
        .and_then(phonelogs_ios::sources::IosVersion::parse)
        .map(|v| v.major);
    let mut findings = vec![Finding {
        check: name("iOS"),
        ok: version.is_some(),
        detail: version.map_or_else(
            || "lockdown did not say which iOS it runs".to_owned(),
            |v| format!("iOS {v}"),
        ),
        fix: version
            .is_none()
            .then(|| "unlock the iPhone and run the doctor again".to_owned()),
    }];
    findings.push(developer_mode(check, major, &name("Developer Mode")));
    findings.push(disk_image(check, &name("developer disk image")));
    findings.push(process_list(check, &name("process list")));
    findings
}

fn developer_mode(check: &PhoneCheck, major: Option<u32>, name: &str) -> Finding {
    match check.facts.developer_mode {
        Some(true) => Finding {
            check: name.to_owned(),
            ok: true,
            detail: "on".into(),
            fix: None,
        },
        Some(false) => Finding {
            check: name.to_owned(),
            ok: false,
            detail: "off: no developer disk image can be mounted, so the app's extensions cannot be read".into(),
            fix: Some(DEVELOPER_MODE_FIX.into()),
        },
        None if major.is_some_and(|m| m < 16) => Finding {
            check: name.to_owned(),
            ok: true,
            detail: "not needed before iOS 16".into(),
            fix: None,
        },
        None => Finding {
            check: name.to_owned(),
            ok: false,
            detail: "the iPhone did not say whether it is on".into(),
            fix: Some(format!("unlock the iPhone; if it is off, {DEVELOPER_MODE_FIX}")),
        },
    }
}

/// Whether the disk image is mounted: the image mounter's word, else what the process list
/// showed (CoreDevice's app service and lockdown's instruments answer only while it is
/// mounted; their absence was read as an unmounted image).
fn disk_image(check: &PhoneCheck, name: &str) -> Finding {
    let seen = match &check.facts.disk_image {
        Ok(mounted) => Some((*mounted, "the image mounter says so".to_owned())),
        Err(why) => match &check.listing {
            Ok(list) if list.source.knows_paths() => Some((
                true,
                format!("{} answered, which only the image provides", list.source),
            )),
            _ if missed(check, &Blocker::DiskImageNotMounted) => Some((
                false,
                format!(
                    "the developer services it provides are missing (the image mounter did not answer: {why})"
                ),
            )),
            _ => None,
        },
    };
    match seen {
        Some((true, how)) => Finding {
            check: name.to_owned(),
            ok: true,
            detail: format!("mounted ({how})"),
            fix: None,
        },
        Some((false, how)) => Finding {
            check: name.to_owned(),
            ok: false,
            detail: format!(
                "not mounted ({how}): the app's own lines are read with process names only, its extensions' are not"
            ),
            fix: Some(if check.facts.developer_mode == Some(false) {
                format!("{DEVELOPER_MODE_FIX}, then {MOUNT}")
            } else {
                MOUNT.to_owned()
            }),
        },
        // Unknown: a locked or untrusting phone refuses the image mounter too, and then its
        // fix is the one to give (the image may well be mounted).
        None => Finding {
            check: name.to_owned(),
            ok: false,
            detail: match &check.facts.disk_image {
                Err(why) => format!("unknown: {why}"),
                Ok(_) => "unknown".into(),
            },
            fix: Some(
                [Blocker::Locked, Blocker::NotTrusted]
                    .into_iter()
                    .find(|blocker| missed(check, blocker))
                    .map_or_else(|| MOUNT.to_owned(), |blocker| blocker.fix()),
            ),
        },
    }
}

fn missed(check: &PhoneCheck, blocker: &Blocker) -> bool {
    let misses = match &check.listing {
        Ok(list) => &list.passed_over,
        Err(failed) => &failed.misses,
    };
    misses.iter().any(|miss| miss.blocker == *blocker)
}

fn process_list(check: &PhoneCheck, name: &str) -> Finding {
    match &check.listing {
        Ok(list) if list.source.knows_paths() => Finding {
            check: name.to_owned(),
            ok: true,
            detail: format!(
                "{} answered ({} processes): the app's and its extensions' lines can be read",
                list.source,
                list.processes.len()
            ),
            fix: None,
        },
        Ok(list) => Finding {
            check: name.to_owned(),
            ok: false,
            detail: format!(
                "{} answered ({} processes): the app's own lines can be read, its extensions' cannot ({})",
                list.source,
                list.processes.len(),
                causes(&list.passed_over)
            ),
            fix: Some(fixes(&list.passed_over)),
        },
        Err(failed) => Finding {
            check: name.to_owned(),
            ok: false,
            detail: format!("no process list answered, so no line can be read: {failed}"),
            fix: Some(failed.fix()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use phonelogs_ios::services::PhoneFacts;
    use phonelogs_ios::sources::{ListingFailed, ProcessList, ProcessSource, SourceMiss};

    fn check(
        developer_mode: Option<bool>,
        disk_image: Result<bool, String>,
        listing: Result<ProcessList, ListingFailed>,
    ) -> PhoneCheck {
        PhoneCheck {
            facts: PhoneFacts {
                product_version: Some("26.1".into()),
                developer_mode,
                disk_image,
            },
            listing,
        }
    }

    fn names_only(blocker: Blocker) -> Result<ProcessList, ListingFailed> {
        Ok(ProcessList {
            processes: Vec::new(),
            source: ProcessSource::PidList,
            passed_over: vec![SourceMiss {
                source: ProcessSource::CoreDevice,
                blocker,
            }],
        })
    }

    #[test]
    fn a_phone_after_a_restart_names_the_mount_and_developer_mode_first_when_off() {
        let device = DeviceId::new("00008101-000A1234567890AB");
        let findings = phone_findings(
            &device,
            &check(
                Some(true),
                Ok(false),
                names_only(Blocker::DiskImageNotMounted),
            ),
        );
        let by = |what: &str| {
            findings
                .iter()
                .find(|f| f.check.ends_with(what))
                .unwrap_or_else(|| panic!("{what}: {findings:?}"))
        };
        assert!(by("iOS").ok && by("iOS").detail == "iOS 26.1");
        assert!(by("Developer Mode").ok);
        assert!(!by("developer disk image").ok);
        assert_eq!(by("developer disk image").fix.as_deref(), Some(MOUNT));
        assert!(!by("process list").ok);
        assert!(by("process list").detail.contains("extensions' cannot"));

        let off = phone_findings(
            &device,
            &check(
                Some(false),
                Err("the mounter did not answer".into()),
                names_only(Blocker::DeveloperModeOff),
            ),
        );
        let dev = off
            .iter()
            .find(|f| f.check.ends_with("Developer Mode"))
            .unwrap();
        assert!(!dev.ok && dev.fix.as_deref() == Some(DEVELOPER_MODE_FIX));
        let list = off
            .iter()
            .find(|f| f.check.ends_with("process list"))
            .unwrap();
        assert!(
            list.fix
                .as_deref()
                .unwrap_or_default()
                .starts_with("turn on Developer Mode"),
            "{list:?}"
        );
    }

    #[test]
    fn coredevice_answering_means_the_image_is_mounted_and_all_is_well() {
        let findings = phone_findings(
            &DeviceId::new("u"),
            &check(
                Some(true),
                Err("no mounter".into()),
                Ok(ProcessList::from(ProcessSource::CoreDevice, Vec::new())),
            ),
        );
        assert!(findings.iter().all(|f| f.ok), "{findings:?}");
    }
}
