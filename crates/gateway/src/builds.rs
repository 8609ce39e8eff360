//! The builds of each app the gateway has seen, so that a phone that does not say when an app
//! was installed (the iPhone) still gets a build floor: the time the gateway first saw the
//! installed build after another one ([`Builds::seen`]). A development build installed over a
//! store build during a task then does not show the store build's lines and reports without
//! asking, as [`phonelogs_driver::AppInfo::installed_at`] does where the phone says it.
//!
//! What is kept is the facts ([`AppInfo::same_facts`]), never a line. At most [`MAX_BUILDS`]
//! apps are remembered, the oldest forgotten first; an app seen for the first time has no floor.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use phonelogs_driver::{AppId, AppInfo, DeviceId};
use time::OffsetDateTime;

/// The most apps (phone and app) whose build is remembered.
pub(crate) const MAX_BUILDS: usize = 4_096;

type Key = (usize, DeviceId, AppId);

/// The last build seen of each app on each phone, through each driver.
#[derive(Debug, Default)]
pub(crate) struct Builds {
    inner: Mutex<Seen>,
}

#[derive(Debug, Default)]
struct Seen {
    by_app: HashMap<Key, Build>,
    /// The keys by when they were first remembered, oldest first: the first forgotten.
    order: VecDeque<Key>,
}

#[derive(Debug)]
struct Build {
    facts: AppInfo,
    /// When this build was first seen after another one; `None` when it is the first seen.
    replaced_at: Option<OffsetDateTime>,
}

impl Builds {
    /// Notes that the app on `device` (through driver `driver`) is the build `info` at `now`,
    /// and returns when it was first seen after another build, if it was: every line or report
    /// of the app from before that time may be another build's.
    pub(crate) fn seen(
        &self,
        driver: usize,
        device: &DeviceId,
        info: &AppInfo,
        now: OffsetDateTime,
    ) -> Option<OffsetDateTime> {
        let mut seen = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let key = (driver, device.clone(), info.app.clone());
        if let Some(build) = seen.by_app.get_mut(&key) {
            if !build.facts.same_facts(info) {
                build.facts = info.clone();
                build.replaced_at = Some(now);
            }
            return build.replaced_at;
        }
        while seen.by_app.len() >= MAX_BUILDS {
            let Some(oldest) = seen.order.pop_front() else {
                break;
            };
            seen.by_app.remove(&oldest);
        }
        seen.order.push_back(key.clone());
        seen.by_app.insert(
            key,
            Build {
                facts: info.clone(),
                replaced_at: None,
            },
        );
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(app: &str, dev_build: bool, install_id: &str) -> AppInfo {
        AppInfo {
            app: AppId::new(app),
            label: None,
            system: false,
            dev_build,
            uid: None,
            shared_uid: false,
            version: Some("7".into()),
            installed_at: None,
            install_id: Some(install_id.into()),
        }
    }

    fn at(seconds: i64) -> OffsetDateTime {
        OffsetDateTime::UNIX_EPOCH + time::Duration::seconds(1_800_000_000 + seconds)
    }

    #[test]
    fn a_build_seen_after_another_is_floored_at_when_it_was_first_seen() {
        let builds = Builds::default();
        let phone = DeviceId::new("00008101-000A1234567890AB");
        let store = info("com.example.app", false, "/A/Example.app");
        let dev = info("com.example.app", true, "/B/Example.app");
        assert_eq!(
            builds.seen(0, &phone, &store, at(0)),
            None,
            "the first seen"
        );
        assert_eq!(
            builds.seen(0, &phone, &store, at(5)),
            None,
            "the same build"
        );
        assert_eq!(builds.seen(0, &phone, &dev, at(10)), Some(at(10)));
        assert_eq!(builds.seen(0, &phone, &dev, at(20)), Some(at(10)), "kept");
        // The same development build reinstalled (its container moved): a new floor.
        let again = info("com.example.app", true, "/C/Example.app");
        assert_eq!(builds.seen(0, &phone, &again, at(30)), Some(at(30)));
        // Another phone's copy, or another driver's, is another app.
        assert_eq!(builds.seen(1, &phone, &again, at(40)), None);
    }

    #[test]
    fn at_most_max_builds_are_remembered_the_oldest_forgotten_first() {
        let builds = Builds::default();
        let phone = DeviceId::new("emulator-5554");
        for n in 0..=MAX_BUILDS {
            builds.seen(0, &phone, &info(&format!("a.b{n}"), false, "/x"), at(0));
        }
        // The first was forgotten: its next sighting is a first one again.
        let first = info("a.b0", true, "/y");
        assert_eq!(builds.seen(0, &phone, &first, at(1)), None);
        // The last is remembered.
        let last = info(&format!("a.b{MAX_BUILDS}"), true, "/y");
        assert_eq!(builds.seen(0, &phone, &last, at(2)), Some(at(2)));
    }
}
