//! Standing rules: the person's "Always allow" entries, keyed by agent, device and app.

use phonelogs_driver::{AppId, DeviceId};

use crate::Action;
use serde::{Deserialize, Serialize};

/// One "Always allow" entry: this agent may do this action (read this app's logs, capture its
/// tombstones, …) on this phone, in later tasks too, without asking. The gateway keeps them; the
/// person lists and revokes them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StandingRule {
    /// The entry's id, for revoking it.
    pub id: String,
    /// The agent it covers.
    pub agent: String,
    /// The phone it covers.
    pub device: DeviceId,
    /// The app it covers.
    pub app: AppId,
    /// The action it covers: an "Always allow" for logs never covers a tombstone.
    pub action: Action,
    /// When the person made it (RFC 3339).
    pub created_at: String,
}

impl StandingRule {
    /// Whether this entry covers `action` on `app` on `device` by `agent`: all four must match.
    pub fn covers(&self, agent: &str, device: &DeviceId, app: &AppId, action: Action) -> bool {
        self.agent == agent && &self.device == device && &self.app == app && self.action == action
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_covers_only_its_agent_device_and_app() {
        let rule = StandingRule {
            id: "r1".into(),
            agent: "claude".into(),
            device: DeviceId::new("emulator-5554"),
            app: AppId::new("com.example.app"),
            action: Action::Logs,
            created_at: "2026-11-30T10:00:00Z".into(),
        };
        let (device, app) = (
            DeviceId::new("emulator-5554"),
            AppId::new("com.example.app"),
        );
        assert!(rule.covers("claude", &device, &app, Action::Logs));
        assert!(!rule.covers("other", &device, &app, Action::Logs));
        assert!(!rule.covers(
            "claude",
            &DeviceId::new("emulator-5556"),
            &app,
            Action::Logs
        ));
        assert!(!rule.covers(
            "claude",
            &device,
            &AppId::new("com.example.other"),
            Action::Logs
        ));
        assert!(
            !rule.covers("claude", &device, &app, Action::Tombstone),
            "a logs rule never covers a tombstone"
        );
    }
}
