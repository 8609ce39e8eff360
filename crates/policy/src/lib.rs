//! # phonelogs-policy
//!
//! The phonelogs permission model, as decisions without I/O: which agent may read which app's
//! logs, which apps are never read (and under which rule), and the standing "Always allow"
//! entries a person keeps. The gateway asks this crate, then does the asking, the reading and the
//! remembering itself.
//!
//! A decision is one of three: the read may go ahead (after the person's answer, unless a
//! development build or a standing rule covers it), it is outside the scope (`scope_denied`), or a
//! rule blocks it (`blocked_by_policy`, naming the rule). Finance apps and password managers
//! ([`refused`]) are refused even with those rules turned off elsewhere; the lists are curated,
//! versioned and extendable by configuration.
//!
//! ```
//! use phonelogs_driver::{AppId, AppInfo, ProcessOwner};
//! use phonelogs_policy::{Agent, Decision, Mode, Policy, Rule};
//!
//! let policy: Policy = Policy::from_json(r#"{ "block": [ { "name": "Chat apps", "apps": ["com.whatsapp"] } ] }"#)?;
//! let agent = Agent::new("claude", Mode::ReadOnly);
//! let info = |id: &str| AppInfo {
//!     app: AppId::new(id), label: None, system: false, dev_build: false, uid: Some(10123),
//!     shared_uid: false, version: None, installed_at: None, install_id: None,
//! };
//!
//! assert_eq!(policy.logs_decision(&agent, None, &info("dev.phonelogs.crashtest")), Decision::Allowed);
//! assert_eq!(
//!     policy.logs_decision(&agent, None, &info("com.x8bit.bitwarden")),
//!     Decision::Blocked(Rule::PasswordManagers)
//! );
//! assert_eq!(policy.logs_decision(&agent, None, &info("com.whatsapp")).rule_name(), Some("Chat apps"));
//! # Ok::<(), phonelogs_policy::Error>(())
//! ```

pub mod refused;
mod standing;

use std::fmt;

use phonelogs_driver::{AppId, AppInfo, ProcessOwner};
use serde::{Deserialize, Serialize};

pub use standing::StandingRule;

/// The names of the rules, in English. The gateway's catalog of user-facing texts takes them
/// from here, so a decision and the text shown for it can never disagree.
pub mod names {
    /// The rule every read of an app's logs falls under when nothing blocks it.
    pub const APP_LOGS: &str = "App logs";
    /// Banks, payment apps, wallets, brokers.
    pub const FINANCE_APPS: &str = "Finance apps";
    /// Password managers and authenticators.
    pub const PASSWORD_MANAGERS: &str = "Password managers";
    /// System apps, Settings, the phone app, `com.apple.*`.
    pub const PHONE_OWN_APPS: &str = "The phone's own apps";
    /// WebDriverAgent, Appium's UiAutomator2 server and settings app, configured helpers.
    pub const UI_AUTOMATION_HELPERS: &str = "UI automation helpers";
    /// Apps the person blocked from the command line.
    pub const BLOCKED_APPS: &str = "Blocked apps";
    /// The name the history gives the person's own reads (`phonelogs logs`). No agent may take
    /// it ([`crate::Agent::check_name`]): its steps would read as the person's.
    pub const PERSON: &str = "you (phonelogs logs)";
}

/// What went wrong loading a policy.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The configuration is not valid JSON for a [`Policy`].
    #[error("the policy configuration is not valid: {0}")]
    Config(#[from] serde_json::Error),
    /// An app id or pattern in the configuration cannot name an app.
    #[error("the policy configuration names {pattern:?}, which cannot name an app: {reason}")]
    Pattern {
        /// The entry as written.
        pattern: String,
        /// Why it was refused.
        reason: String,
    },
    /// A name no agent may have: blank, or the person's own ([`names::PERSON`]).
    #[error("{name:?} cannot name an agent: {reason}")]
    AgentName {
        /// The name as given.
        name: String,
        /// Why it was refused.
        reason: &'static str,
    },
}

/// What an agent may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// May read and change the phone.
    #[default]
    Full,
    /// May read (logs included), never change the phone.
    ReadOnly,
    /// May only watch the screen: logs show more than the screen, so no logs.
    WatchOnly,
}

/// An agent: a name, a mode, and the apps it may touch (`None`: any app).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Agent {
    /// The agent's name, as the person knows it (and as standing rules are keyed).
    pub name: String,
    /// What it may do.
    #[serde(default)]
    pub mode: Mode,
    /// The apps it may touch (`apps:` in the configuration); `None` means any app.
    #[serde(default, rename = "apps", alias = "scope")]
    pub scope: Option<Vec<AppId>>,
}

impl Agent {
    /// An agent with a mode and no scope (any app).
    pub fn new(name: impl Into<String>, mode: Mode) -> Self {
        Agent {
            name: name.into(),
            mode,
            scope: None,
        }
    }

    /// An agent with a name that may name one ([`Agent::check_name`]), a mode and no scope:
    /// how the binaries make an agent from a name a person typed (a flag, a token file).
    pub fn named(name: impl Into<String>, mode: Mode) -> Result<Self, Error> {
        let name = name.into();
        Agent::check_name(&name)?;
        Ok(Agent::new(name, mode))
    }

    /// Whether `name` may name an agent: not blank, and not the person's own name
    /// ([`names::PERSON`]), which the history gives the person's reads, so that no agent's
    /// step can read as the person's. The one check every agent name goes through: the
    /// configuration's agents ([`Policy::validate`]) and every name a binary takes
    /// ([`Agent::named`]).
    ///
    /// The comparison looks past case, spaces and punctuation ("You (phonelogs  logs)" is
    /// refused too), and a name is printable ASCII only (letters, digits, spaces and
    /// punctuation): a letter of another script (a Cyrillic "о", a Greek "ο", a full-width
    /// "ｙ") can look like one of the person's name's, and a control, a line end or an invisible
    /// or bidirectional mark (every character the gateway's `lines::misleads` refuses) can make
    /// a name read as another. Refusing them all is simpler than a confusables skeleton and
    /// leaves nothing to look alike.
    pub fn check_name(name: &str) -> Result<(), Error> {
        let letters = |text: &str| -> String {
            text.chars()
                .filter(char::is_ascii_alphanumeric)
                .map(|c| c.to_ascii_lowercase())
                .collect()
        };
        let reason = if name.trim().is_empty() {
            "it is blank"
        } else if !name.chars().all(|c| matches!(c, ' '..='~')) {
            "an agent's name is printable ASCII only (letters, digits, spaces, punctuation): a letter of another script or an invisible, control or line-end character can make it look like another name"
        } else if letters(name) == letters(names::PERSON) {
            "it is the name the history gives the person's own reads"
        } else {
            return Ok(());
        };
        Err(Error::AgentName {
            name: name.to_owned(),
            reason,
        })
    }

    /// The same agent, limited to `apps`.
    pub fn with_scope(mut self, apps: impl IntoIterator<Item = AppId>) -> Self {
        self.scope = Some(apps.into_iter().collect());
        self
    }

    /// Whether the agent may change the phone (set or clear the debug app): full mode only.
    pub fn may_change_phone(&self) -> bool {
        self.mode == Mode::Full
    }
}

/// A rule that can block an app, or the rule a read falls under.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// "App logs": the rule the question is asked under.
    AppLogs,
    /// "Finance apps" (`LogsRefused`).
    FinanceApps,
    /// "Password managers" (`LogsRefused`).
    PasswordManagers,
    /// "The phone's own apps".
    PhoneOwnApps,
    /// "UI automation helpers".
    UiAutomationHelpers,
    /// An app the person blocked from the command line ("Blocked apps").
    BlockedApps,
    /// A block rule of the configuration, by its name.
    Block(String),
}

impl Rule {
    /// The rule's name, as the result and the history show it.
    pub fn name(&self) -> &str {
        match self {
            Rule::AppLogs => names::APP_LOGS,
            Rule::FinanceApps => names::FINANCE_APPS,
            Rule::PasswordManagers => names::PASSWORD_MANAGERS,
            Rule::PhoneOwnApps => names::PHONE_OWN_APPS,
            Rule::UiAutomationHelpers => names::UI_AUTOMATION_HELPERS,
            Rule::BlockedApps => names::BLOCKED_APPS,
            Rule::Block(name) => name,
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a read is outside the scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScopeReason {
    /// Watch-only agents read no logs.
    WatchOnly,
    /// The app is not in the agent's `apps`.
    OutsideAgentScope,
    /// The app is not in the task's app list.
    OutsideTask,
    /// The action writes (sets the debug app, saves a tombstone) and the agent is read-only.
    ReadOnly,
}

/// The policy's answer for one read of one app.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// The read may go ahead under "App logs": after the person's answer, unless a development
    /// build or a standing rule covers it.
    Allowed,
    /// Outside the agent's scope or the task's apps: `scope_denied`.
    ScopeDenied(ScopeReason),
    /// A rule blocks the app: `blocked_by_policy`, naming the rule.
    Blocked(Rule),
}

impl Decision {
    /// The name of the rule the result names: the blocking rule, or "App logs".
    pub fn rule_name(&self) -> Option<&str> {
        match self {
            Decision::Allowed => Some(names::APP_LOGS),
            Decision::ScopeDenied(_) => None,
            Decision::Blocked(rule) => Some(rule.name()),
        }
    }
}

/// What an approval allows: each action asks its own question, and an answer covers only its
/// own action. A logs approval covers the app's log lines and crash reports; a tombstone, which
/// pauses the app and saves its memory map, is never covered by one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// `phone_logs`: the app's log lines and crash reports.
    Logs,
    /// `get_process_exit_history`.
    ExitHistory,
    /// `set_debug_app`.
    SetDebugApp,
    /// `capture_native_backtrace`.
    Backtrace,
    /// `capture_native_tombstone`.
    Tombstone,
}

impl Action {
    /// Every action.
    pub const ALL: [Action; 5] = [
        Action::Logs,
        Action::ExitHistory,
        Action::SetDebugApp,
        Action::Backtrace,
        Action::Tombstone,
    ];

    /// The action's name, as stored (`logs`, `exit_history`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Logs => "logs",
            Action::ExitHistory => "exit_history",
            Action::SetDebugApp => "set_debug_app",
            Action::Backtrace => "backtrace",
            Action::Tombstone => "tombstone",
        }
    }

    /// Reads an action's name.
    pub fn parse(text: &str) -> Option<Action> {
        Action::ALL.into_iter().find(|a| a.as_str() == text.trim())
    }

    /// Whether the action changes the phone or the computer (the spec's "Categorized write"):
    /// only full agents may do it.
    pub fn writes(self) -> bool {
        matches!(self, Action::SetDebugApp | Action::Tombstone)
    }
}

/// A person's block rule: a name and the apps (ids or patterns) it blocks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockRule {
    /// The rule's name, shown when it blocks a read.
    pub name: String,
    /// App ids or patterns (`prefix*`, `*suffix`).
    pub apps: Vec<String>,
}

/// The whole policy: block rules and the extensions of the curated lists.
///
/// It deserializes from configuration (JSON through [`Policy::from_json`], or any serde format
/// the binaries read); every field is optional. The curated lists of [`refused`] always apply;
/// configuration can only add to them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Policy {
    /// The person's block rules.
    pub block: Vec<BlockRule>,
    /// More finance apps to refuse, beyond [`refused::FINANCE_APPS`].
    pub finance_apps: Vec<String>,
    /// More password managers to refuse, beyond [`refused::PASSWORD_MANAGERS`].
    pub password_managers: Vec<String>,
    /// More of the phone's own apps, beyond the system flag and [`refused::PHONE_APPS`].
    pub phone_apps: Vec<String>,
    /// More UI-automation helpers, beyond [`refused::UI_AUTOMATION_HELPERS`].
    pub helpers: Vec<String>,
    /// Named agents the binaries may pick from.
    pub agents: Vec<Agent>,
}

impl Policy {
    /// Reads a policy from JSON and checks every app id and pattern in it.
    pub fn from_json(text: &str) -> Result<Policy, Error> {
        let policy: Policy = serde_json::from_str(text)?;
        policy.validate()?;
        Ok(policy)
    }

    /// Checks that every entry can name an app (so a typo is an error, not a rule that never
    /// matches silently), and that every agent's name may name one ([`Agent::check_name`]).
    pub fn validate(&self) -> Result<(), Error> {
        let entries = self
            .block
            .iter()
            .flat_map(|rule| rule.apps.iter())
            .chain(&self.finance_apps)
            .chain(&self.password_managers)
            .chain(&self.phone_apps)
            .chain(&self.helpers);
        for pattern in entries {
            let bare = pattern.trim().trim_start_matches('*').trim_end_matches('*');
            if pattern.trim() == "*" {
                continue;
            }
            if let Err(error) = AppId::parse(bare) {
                return Err(Error::Pattern {
                    pattern: pattern.clone(),
                    reason: error.to_string(),
                });
            }
        }
        for agent in &self.agents {
            Agent::check_name(&agent.name)?;
        }
        for rule in &self.block {
            if rule.name.trim().is_empty() {
                return Err(Error::Pattern {
                    pattern: rule.apps.join(", "),
                    reason: "a block rule needs a name".into(),
                });
            }
        }
        Ok(())
    }

    /// The named agent of the configuration, if any.
    pub fn agent(&self, name: &str) -> Option<&Agent> {
        self.agents.iter().find(|agent| agent.name == name)
    }

    /// Whether the agent may touch `app` at all in a task with `task_apps` (`None`: any app):
    /// the scope part of every decision.
    pub fn scope(
        &self,
        agent: &Agent,
        task_apps: Option<&[AppId]>,
        app: &AppId,
    ) -> Result<(), ScopeReason> {
        if agent.mode == Mode::WatchOnly {
            return Err(ScopeReason::WatchOnly);
        }
        if let Some(scope) = &agent.scope
            && !scope.contains(app)
        {
            return Err(ScopeReason::OutsideAgentScope);
        }
        if let Some(apps) = task_apps
            && !apps.contains(app)
        {
            return Err(ScopeReason::OutsideTask);
        }
        Ok(())
    }

    /// The rule that blocks `app`'s logs, judged by its id alone (no device needed), if any.
    /// Person's rules come first, then helpers, finance apps, password managers and the phone's
    /// own apps, so the most specific name is the one shown.
    pub fn blocking_rule(&self, app: &AppId) -> Option<Rule> {
        let id = app.as_str();
        if let Some(rule) = self
            .block
            .iter()
            .find(|rule| refused::any_matches(rule.apps.iter().map(String::as_str), id))
        {
            return Some(Rule::Block(rule.name.clone()));
        }
        let listed = |curated: &[&'static str], extra: &[String]| {
            refused::any_matches(
                curated
                    .iter()
                    .copied()
                    .chain(extra.iter().map(String::as_str)),
                id,
            )
        };
        if listed(refused::UI_AUTOMATION_HELPERS, &self.helpers) {
            Some(Rule::UiAutomationHelpers)
        } else if listed(refused::FINANCE_APPS, &self.finance_apps) {
            Some(Rule::FinanceApps)
        } else if listed(refused::PASSWORD_MANAGERS, &self.password_managers) {
            Some(Rule::PasswordManagers)
        } else if listed(refused::PHONE_APPS, &self.phone_apps) {
            Some(Rule::PhoneOwnApps)
        } else {
            None
        }
    }

    /// `LogsRefused`: whether `app` is a finance app or password manager, whose logs are never
    /// read whatever else the person allowed.
    pub fn logs_refused(&self, app: &AppId) -> Option<Rule> {
        match self.blocking_rule(app) {
            Some(rule @ (Rule::FinanceApps | Rule::PasswordManagers)) => Some(rule),
            _ => {
                let id = app.as_str();
                if refused::any_matches(
                    refused::FINANCE_APPS
                        .iter()
                        .copied()
                        .chain(self.finance_apps.iter().map(String::as_str)),
                    id,
                ) {
                    Some(Rule::FinanceApps)
                } else if refused::any_matches(
                    refused::PASSWORD_MANAGERS
                        .iter()
                        .copied()
                        .chain(self.password_managers.iter().map(String::as_str)),
                    id,
                ) {
                    Some(Rule::PasswordManagers)
                } else {
                    None
                }
            }
        }
    }

    /// The decision for `action` on `app`, judged by the agent and the app's id alone, before
    /// anything asks a phone: the agent's mode (watch-only agents do nothing of this; read-only
    /// agents do no writes), its scope and the task's apps, then the blocking rules. So an agent
    /// gets the same answer for an app that is installed and one that is not. The device's own
    /// word (a system app) comes after, in [`Policy::device_decision`].
    pub fn decide(
        &self,
        agent: &Agent,
        task_apps: Option<&[AppId]>,
        action: Action,
        app: &AppId,
    ) -> Decision {
        if agent.mode == Mode::WatchOnly {
            return Decision::ScopeDenied(ScopeReason::WatchOnly);
        }
        if action.writes() && !agent.may_change_phone() {
            return Decision::ScopeDenied(ScopeReason::ReadOnly);
        }
        if let Err(reason) = self.scope(agent, task_apps, app) {
            return Decision::ScopeDenied(reason);
        }
        match self.blocking_rule(app) {
            Some(rule) => Decision::Blocked(rule),
            None => Decision::Allowed,
        }
    }

    /// The app a process belongs to, when it is one app's: a process of a system uid (an app id
    /// below the first app's), of a uid several packages share, or of no installed package
    /// (isolated processes) is one of the phone's own, whose dumps show other apps' data.
    pub fn process_app<'a>(&self, owner: &'a ProcessOwner) -> Result<&'a AppId, Rule> {
        match owner.packages.as_slice() {
            [app] if !owner.is_system_uid() => Ok(app),
            _ => Err(Rule::PhoneOwnApps),
        }
    }

    /// What the phone's answer about the app adds to [`Policy::decide`]: a system app is one of
    /// the phone's own, whose logs mix in everyone's.
    pub fn device_decision(&self, info: &AppInfo) -> Decision {
        if info.system {
            Decision::Blocked(Rule::PhoneOwnApps)
        } else {
            Decision::Allowed
        }
    }

    /// The decision for reading `info.app`'s logs (or crash reports, or debugging it): scope
    /// first, then the blocking rules, then the device's own flags (a system app is one of the
    /// phone's own).
    pub fn logs_decision(
        &self,
        agent: &Agent,
        task_apps: Option<&[AppId]>,
        info: &AppInfo,
    ) -> Decision {
        match self.decide(agent, task_apps, Action::Logs, &info.app) {
            Decision::Allowed => self.device_decision(info),
            refused => refused,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(id: &str) -> AppInfo {
        AppInfo {
            app: AppId::new(id),
            label: None,
            system: false,
            dev_build: false,
            uid: None,
            shared_uid: false,
            version: None,
            installed_at: None,
            install_id: None,
        }
    }

    fn full() -> Agent {
        Agent::new("agent", Mode::Full)
    }

    #[test]
    fn watch_only_agents_read_no_logs_and_read_only_agents_do() {
        let policy = Policy::default();
        let app = info("com.example.app");
        assert_eq!(
            policy.logs_decision(&Agent::new("w", Mode::WatchOnly), None, &app),
            Decision::ScopeDenied(ScopeReason::WatchOnly)
        );
        assert_eq!(
            policy.logs_decision(&Agent::new("r", Mode::ReadOnly), None, &app),
            Decision::Allowed
        );
        assert_eq!(policy.logs_decision(&full(), None, &app), Decision::Allowed);
    }

    #[test]
    fn scope_and_task_lists_limit_the_apps() {
        let policy = Policy::default();
        let agent = full().with_scope([AppId::new("com.example.app")]);
        assert_eq!(
            policy.logs_decision(&agent, None, &info("com.example.app")),
            Decision::Allowed
        );
        assert_eq!(
            policy.logs_decision(&agent, None, &info("com.example.other")),
            Decision::ScopeDenied(ScopeReason::OutsideAgentScope)
        );
        let task = [AppId::new("com.example.other")];
        assert_eq!(
            policy.logs_decision(&full(), Some(&task), &info("com.example.app")),
            Decision::ScopeDenied(ScopeReason::OutsideTask)
        );
        assert_eq!(
            policy.logs_decision(&full(), Some(&task), &info("com.example.other")),
            Decision::Allowed
        );
    }

    #[test]
    fn refused_helpers_and_phone_apps_are_blocked_by_name() {
        let policy = Policy::default();
        for (id, rule) in [
            ("com.paypal.android.p2pmobile", names::FINANCE_APPS),
            ("com.agilebits.onepassword", names::PASSWORD_MANAGERS),
            ("com.x8bit.bitwarden", names::PASSWORD_MANAGERS),
            (
                "keepass2android.keepass2android_nonet",
                names::PASSWORD_MANAGERS,
            ),
            ("com.apple.Preferences", names::PHONE_OWN_APPS),
            ("com.android.settings", names::PHONE_OWN_APPS),
            (
                "com.facebook.WebDriverAgentRunner.xctrunner",
                names::UI_AUTOMATION_HELPERS,
            ),
            (
                "io.appium.uiautomator2.server",
                names::UI_AUTOMATION_HELPERS,
            ),
            (
                "io.appium.uiautomator2.server.test",
                names::UI_AUTOMATION_HELPERS,
            ),
            ("io.appium.settings", names::UI_AUTOMATION_HELPERS),
        ] {
            let decision = policy.logs_decision(&full(), None, &info(id));
            assert_eq!(decision.rule_name(), Some(rule), "{id}: {decision:?}");
            assert!(matches!(decision, Decision::Blocked(_)));
        }
        let mut system = info("com.vendor.launcher");
        system.system = true;
        assert_eq!(
            policy.logs_decision(&full(), None, &system),
            Decision::Blocked(Rule::PhoneOwnApps)
        );
    }

    #[test]
    fn finance_apps_stay_refused_even_when_the_task_and_scope_name_them() {
        let policy = Policy::default();
        let bank = AppId::new("com.chase.sig.android");
        let agent = full().with_scope([bank.clone()]);
        let decision = policy.logs_decision(
            &agent,
            Some(std::slice::from_ref(&bank)),
            &info(bank.as_str()),
        );
        assert_eq!(decision, Decision::Blocked(Rule::FinanceApps));
        assert_eq!(policy.logs_refused(&bank), Some(Rule::FinanceApps));
        assert_eq!(policy.logs_refused(&AppId::new("com.example.app")), None);
    }

    #[test]
    fn configuration_extends_the_lists_and_adds_block_rules() {
        let policy = Policy::from_json(
            r#"{
                "block": [{ "name": "Work apps", "apps": ["com.corp.*"] }],
                "finance_apps": ["com.mybank.app"],
                "password_managers": ["org.example.vault"],
                "helpers": ["com.example.automation"],
                "phone_apps": ["com.vendor.launcher"],
                "agents": [{ "name": "claude", "mode": "read_only", "apps": ["com.example.app"] }]
            }"#,
        )
        .unwrap();
        let decide = |id: &str| policy.logs_decision(&full(), None, &info(id));
        assert_eq!(
            decide("com.corp.mail"),
            Decision::Blocked(Rule::Block("Work apps".into()))
        );
        assert_eq!(
            decide("com.mybank.app"),
            Decision::Blocked(Rule::FinanceApps)
        );
        assert_eq!(
            decide("org.example.vault"),
            Decision::Blocked(Rule::PasswordManagers)
        );
        assert_eq!(
            decide("com.example.automation"),
            Decision::Blocked(Rule::UiAutomationHelpers)
        );
        assert_eq!(
            decide("com.vendor.launcher"),
            Decision::Blocked(Rule::PhoneOwnApps)
        );
        let claude = policy.agent("claude").unwrap();
        assert_eq!(claude.mode, Mode::ReadOnly);
        assert!(!claude.may_change_phone());
        assert_eq!(
            claude.scope.as_deref(),
            Some(&[AppId::new("com.example.app")][..])
        );
    }

    #[test]
    fn a_block_rule_wins_over_the_curated_names_and_bad_config_is_an_error() {
        let policy =
            Policy::from_json(r#"{ "block": [{ "name": "No money", "apps": ["com.venmo"] }] }"#)
                .unwrap();
        assert_eq!(
            policy.blocking_rule(&AppId::new("com.venmo")),
            Some(Rule::Block("No money".into()))
        );
        assert_eq!(
            policy.logs_refused(&AppId::new("com.venmo")),
            Some(Rule::FinanceApps)
        );
        assert!(Policy::from_json(r#"{ "helpers": ["a b"] }"#).is_err());
        assert!(Policy::from_json(r#"{ "unknown": 1 }"#).is_err());
        assert!(Policy::from_json(r#"{ "block": [{ "name": " ", "apps": [] }] }"#).is_err());
        assert_eq!(Policy::from_json("{}").unwrap(), Policy::default());
    }

    #[test]
    fn writes_are_for_full_agents_and_nothing_is_for_watch_only_ones() {
        let policy = Policy::default();
        let app = AppId::new("com.example.app");
        let read_only = Agent::new("r", Mode::ReadOnly);
        let watch_only = Agent::new("w", Mode::WatchOnly);
        for action in Action::ALL {
            assert_eq!(
                policy.decide(&watch_only, None, action, &app),
                Decision::ScopeDenied(ScopeReason::WatchOnly),
                "{action:?}"
            );
            assert_eq!(
                policy.decide(&full(), None, action, &app),
                Decision::Allowed
            );
            let expected = if action.writes() {
                Decision::ScopeDenied(ScopeReason::ReadOnly)
            } else {
                Decision::Allowed
            };
            assert_eq!(
                policy.decide(&read_only, None, action, &app),
                expected,
                "{action:?}"
            );
        }
        assert!(Action::Tombstone.writes() && Action::SetDebugApp.writes());
        assert!(!Action::Backtrace.writes() && !Action::Logs.writes());
    }

    #[test]
    fn the_id_alone_decides_scope_and_blocks() {
        let policy = Policy::default();
        let scoped = full().with_scope([AppId::new("com.example.app")]);
        assert_eq!(
            policy.decide(&scoped, None, Action::Logs, &AppId::new("com.other")),
            Decision::ScopeDenied(ScopeReason::OutsideAgentScope)
        );
        assert_eq!(
            policy.decide(
                &full(),
                None,
                Action::Backtrace,
                &AppId::new("com.x8bit.bitwarden")
            ),
            Decision::Blocked(Rule::PasswordManagers)
        );
        let mut system = info("com.example.app");
        system.system = true;
        assert_eq!(
            policy.device_decision(&system),
            Decision::Blocked(Rule::PhoneOwnApps)
        );
        for action in Action::ALL {
            assert_eq!(Action::parse(action.as_str()), Some(action));
        }
    }

    #[test]
    fn no_agent_may_take_the_persons_name_a_look_alike_of_it_or_a_blank_one() {
        for name in [
            names::PERSON,
            " ",
            "",
            "You (phonelogs  logs)",
            "you phonelogs logs",
            "you (phonelogs logs)\u{200b}",
            "claude\u{202e}",
            "line\nbreak",
            // Look-alikes and line separators (found by the review of h28a).
            "y\u{043e}u (phonelogs logs)",
            "you (phonel\u{03bf}gs logs)",
            "\u{ff59}\u{ff4f}\u{ff55} (phonelogs logs)",
            "claude\u{2028}you (phonelogs logs)",
            "claude\u{2029}x",
            "Jos\u{e9}'s agent",
        ] {
            let json = format!(
                r#"{{"agents":[{{"name":{}}}]}}"#,
                serde_json::to_string(name).unwrap()
            );
            assert!(
                matches!(Policy::from_json(&json), Err(Error::AgentName { .. })),
                "{json}"
            );
            assert!(Agent::named(name, Mode::Full).is_err(), "{name:?}");
        }
        for name in ["claude", "Claude Code", "ci-android", "Jo's agent (v2)"] {
            assert!(Agent::named(name, Mode::Full).is_ok(), "{name:?}");
        }
    }
}
