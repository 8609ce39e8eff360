//! Asking the person, through the client: the question's form (elicitation), reading the answer
//! back, and sealing the state a 2026-07-28 client echoes on its `input_required` retry.
//!
//! The answer always comes from the person through the client's own dialog, and only from a
//! client a person sits at ([`ClientSeat`]); nothing here lets the agent answer. The state a
//! client echoes back is untrusted, so it is sealed with an HMAC under a secret that lives only
//! in this process and is bound to the task, the tool and the call's arguments: a forged,
//! altered or replayed state (another call, another task, too late) fails.

use std::collections::BTreeMap;
use std::time::Duration;

use rmcp::model::{
    ClientCapabilities, ConstTitle, ElicitationAction, ElicitationSchema, EnumSchema,
    PrimitiveSchemaDefinition, RequestStateCodec, SealOptions, SingleSelectEnumSchema,
    TitledSingleSelectEnumSchema,
};
use serde::{Deserialize, Serialize};

use crate::Error;

/// The key under which the approval question travels in `inputRequests` / `inputResponses`.
pub const INPUT_KEY: &str = "approval";

/// The form field that carries the person's choice.
pub const DECISION_FIELD: &str = "decision";

/// How long a sealed state stays good: long enough for a person to read and answer.
pub const STATE_TTL: Duration = Duration::from_secs(15 * 60);

/// The four answers the person can give, as the form offers them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Allow this call only.
    Once,
    /// Allow this app until the task ends.
    Task,
    /// Allow this app for this agent on this phone in later tasks too.
    Always,
    /// Refuse.
    Deny,
}

impl Decision {
    /// Every decision, in the order the form shows them.
    pub const ALL: [Decision; 4] = [
        Decision::Once,
        Decision::Task,
        Decision::Always,
        Decision::Deny,
    ];

    /// The value on the wire (and on the `phonelogs approvals answer` command line).
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Once => "once",
            Decision::Task => "task",
            Decision::Always => "always",
            Decision::Deny => "deny",
        }
    }

    /// What the person reads.
    pub fn title(self) -> &'static str {
        match self {
            Decision::Once => "Allow once",
            Decision::Task => "Allow for this task",
            Decision::Always => "Always allow",
            Decision::Deny => "Deny",
        }
    }

    /// The decision a wire value names.
    pub fn parse(value: &str) -> Option<Decision> {
        Decision::ALL.into_iter().find(|d| d.as_str() == value)
    }
}

/// Who sits at the client this server talks to, and so which answers its dialog may give for
/// the person. Decided once, where the transport is chosen (the binary: stdio, or each HTTP
/// token), and read only here: [`ClientSeat::offers`] is both what the question's form offers
/// and what is taken from the client's answer, for elicitation and `input_required` alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClientSeat {
    /// The client the person started and sits at (stdio: the agent's client runs on the
    /// person's desktop): its dialog is the person's, every answer included.
    Person,
    /// A client a person sits at, reached over the network (an HTTP token the token file marks
    /// `person`): its dialog may allow once, for this task, or deny, but a standing rule
    /// ("Always allow") is only ever given on the person's own side.
    PersonNotAlways,
    /// The agent's own client (an HTTP token, by default): a scripted client could answer its
    /// own question, so it is never asked and nothing it answers is taken. Questions wait for
    /// the person's side (`phonelogs approvals`, `phonelogs ui`). The default: a server that
    /// was not told who sits at its client asks nobody there.
    #[default]
    Agent,
}

impl ClientSeat {
    /// The answers the client's dialog offers, and the only ones taken from it; empty when the
    /// client is not asked at all.
    pub fn offers(self) -> &'static [Decision] {
        match self {
            ClientSeat::Person => &Decision::ALL,
            ClientSeat::PersonNotAlways => &[Decision::Once, Decision::Task, Decision::Deny],
            ClientSeat::Agent => &[],
        }
    }
}

/// Whether a client's capabilities let it show the question's form, the only mode phonelogs
/// asks in: `elicitation: {form: {}}`, or `elicitation: {}` (which means form only, in
/// 2025-11-25 as in 2026-07-28). A client that declares `url` alone, or no elicitation, is
/// never sent a form it cannot show: its question waits for the person's side. Phonelogs
/// sends no URL-mode question (the person's page is opened by `phonelogs ui`, whose address
/// and one-time code the server does not know), so `url` is never needed. The one check for
/// both wires (elicitation, `input_required`).
pub fn declares_form(capabilities: Option<&ClientCapabilities>) -> bool {
    capabilities
        .and_then(|caps| caps.elicitation.as_ref())
        .is_some_and(|elicitation| elicitation.form.is_some() || elicitation.url.is_none())
}

/// What came back from asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The person chose.
    Decided(Decision),
    /// The client declined the form. Some clients declare elicitation and decline every
    /// request without showing it to anyone (the Claude Code VS Code extension,
    /// anthropics/claude-code#41292; its terminal in some versions, #62319), so a decline is not
    /// the person's "no": the question stays pending, answerable on the person's side. The
    /// person's own no is the form's "Deny" choice.
    Declined,
    /// The person dismissed the form without answering: the question stays open.
    Cancelled,
}

/// The question's form: one required single-select field with the answers `offered` (see
/// [`ClientSeat::offers`]), in the order of [`Decision::ALL`].
pub fn question_schema(offered: &[Decision]) -> ElicitationSchema {
    let mut choice = TitledSingleSelectEnumSchema::new(
        offered
            .iter()
            .map(|d| ConstTitle::new(d.as_str(), d.title()))
            .collect(),
    );
    choice.title = Some("Answer".into());
    let mut description = "Allow once covers this call; Allow for this task covers this app until \
         the task ends"
        .to_owned();
    description.push_str(if offered.contains(&Decision::Always) {
        "; Always allow also covers later tasks of this agent on this phone."
    } else {
        ". Always allow is given on the person's own side (phonelogs approvals, phonelogs ui)."
    });
    choice.description = Some(description.into());
    let mut properties = BTreeMap::new();
    properties.insert(
        DECISION_FIELD.to_owned(),
        PrimitiveSchemaDefinition::Enum(EnumSchema::Single(SingleSelectEnumSchema::Titled(choice))),
    );
    let mut schema = ElicitationSchema::new(properties);
    schema.required = Some(vec![DECISION_FIELD.to_owned()]);
    schema
}

/// Reads the person's answer out of an elicitation result (`action` plus `content`).
pub fn read_answer(
    action: ElicitationAction,
    content: Option<&serde_json::Value>,
) -> Result<Outcome, Error> {
    match action {
        ElicitationAction::Decline => Ok(Outcome::Declined),
        ElicitationAction::Accept => {
            let value = content
                .and_then(|c| c.get(DECISION_FIELD))
                .and_then(|v| v.as_str())
                .ok_or_else(|| Error::BadAnswer("the answer has no decision".into()))?;
            Decision::parse(value).map(Outcome::Decided).ok_or_else(|| {
                Error::BadAnswer(format!("{value:?} is not one of once, task, always, deny"))
            })
        }
        // Cancel, and any action a later protocol adds: nobody answered, so the question stays
        // open (never allow by default).
        _ => Ok(Outcome::Cancelled),
    }
}

/// Reads the answer out of an `inputResponses` entry (an `ElicitResult` as JSON).
pub fn read_input_response(value: &serde_json::Value) -> Result<Outcome, Error> {
    let action: ElicitationAction = value
        .get("action")
        .cloned()
        .map(serde_json::from_value)
        .transpose()
        .map_err(|e| Error::BadAnswer(format!("the answer's action is not valid: {e}")))?
        .ok_or_else(|| Error::BadAnswer("the answer has no action".into()))?;
    read_answer(action, value.get("content"))
}

/// What a sealed `requestState` carries: the approval it answers and the tool it belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingState {
    /// The approval the question is about.
    pub approval_id: String,
    /// The tool that asked.
    pub tool: String,
}

/// Seals and opens `requestState` values with a secret made when the process starts.
pub struct Sealer {
    codec: RequestStateCodec,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sealer { .. }")
    }
}

impl Sealer {
    /// A sealer with a fresh random 32-byte secret from the operating system.
    pub fn new() -> Result<Sealer, Error> {
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret).map_err(|e| Error::Random(e.to_string()))?;
        Sealer::with_secret(&secret)
    }

    /// A sealer with a given secret (tests; two processes never share one).
    pub fn with_secret(secret: &[u8]) -> Result<Sealer, Error> {
        let codec =
            RequestStateCodec::try_new(secret.to_vec()).map_err(|e| Error::Seal(e.to_string()))?;
        Ok(Sealer { codec })
    }

    /// Seals `state`, bound to `context` (the task, the tool and the call's arguments).
    pub fn seal(&self, state: &PendingState, context: &[u8]) -> Result<String, Error> {
        self.codec
            .seal_json_with(
                state,
                &SealOptions::new().associated_data(context).ttl(STATE_TTL),
            )
            .map_err(|e| Error::Seal(e.to_string()))
    }

    /// Opens a state the client echoed, or fails when it was forged, altered, bound to another
    /// call, or is too old.
    pub fn open(&self, sealed: &str, context: &[u8]) -> Result<PendingState, Error> {
        self.codec
            .open_json_with(sealed, context)
            .map_err(|e| Error::Seal(e.to_string()))
    }
}

/// The context a state is bound to: the task, the tool and its arguments without `approval_id`
/// (which the agent may or may not repeat on the retry).
pub fn binding(task_id: &str, tool: &str, arguments: &serde_json::Value) -> Vec<u8> {
    let mut arguments = arguments.clone();
    if let Some(object) = arguments.as_object_mut() {
        object.remove("approval_id");
    }
    // serde_json's map keeps keys sorted (no `preserve_order`), so equal arguments give equal
    // bytes whatever order the client sent them in.
    format!("phonelogs|{task_id}|{tool}|{arguments}").into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_form_offers_the_four_answers_in_order() {
        let schema = serde_json::to_value(question_schema(&Decision::ALL)).unwrap();
        let options = schema["properties"][DECISION_FIELD]["oneOf"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let titles: Vec<&str> = options.iter().filter_map(|o| o["title"].as_str()).collect();
        assert_eq!(
            titles,
            ["Allow once", "Allow for this task", "Always allow", "Deny"]
        );
        let values: Vec<&str> = options.iter().filter_map(|o| o["const"].as_str()).collect();
        assert_eq!(values, ["once", "task", "always", "deny"]);
        assert_eq!(schema["required"], json!([DECISION_FIELD]));
    }

    #[test]
    fn only_a_client_that_declares_form_or_nothing_more_is_sent_a_form() {
        let declared = |value: serde_json::Value| {
            let caps: ClientCapabilities = serde_json::from_value(value).unwrap();
            declares_form(Some(&caps))
        };
        assert!(declared(json!({"elicitation": {}})));
        assert!(declared(json!({"elicitation": {"form": {}}})));
        assert!(declared(json!({"elicitation": {"form": {}, "url": {}}})));
        assert!(!declared(json!({"elicitation": {"url": {}}})));
        assert!(!declared(json!({})));
        assert!(!declares_form(None));
    }

    #[test]
    fn answers_are_read_and_bad_ones_refused() {
        let accepted = json!({"action": "accept", "content": {"decision": "task"}});
        assert_eq!(
            read_input_response(&accepted).ok(),
            Some(Outcome::Decided(Decision::Task))
        );
        assert_eq!(
            read_input_response(&json!({"action": "decline"})).ok(),
            Some(Outcome::Declined)
        );
        assert_eq!(
            read_input_response(&json!({"action": "cancel"})).ok(),
            Some(Outcome::Cancelled)
        );
        assert!(
            read_input_response(&json!({"action": "accept", "content": {"decision": "yes"}}))
                .is_err()
        );
        assert!(read_input_response(&json!({"action": "accept"})).is_err());
        assert!(read_input_response(&json!({"content": {"decision": "once"}})).is_err());
    }

    #[test]
    fn a_sealed_state_opens_only_for_the_same_call() {
        let sealer = Sealer::new().unwrap();
        let state = PendingState {
            approval_id: "ap-1".into(),
            tool: "phone_logs".into(),
        };
        let args = json!({"app": "com.example", "kind": "logs"});
        let context = binding("task-1", "phone_logs", &args);
        let sealed = sealer.seal(&state, &context).unwrap();
        assert_eq!(sealer.open(&sealed, &context).ok(), Some(state.clone()));

        // The agent may add the approval id on the retry: still the same call.
        let with_id = json!({"kind": "logs", "app": "com.example", "approval_id": "ap-1"});
        assert!(
            sealer
                .open(&sealed, &binding("task-1", "phone_logs", &with_id))
                .is_ok()
        );

        // Another app, another task, another process's secret, or a tampered value: refused.
        let other_app = json!({"app": "com.other", "kind": "logs"});
        assert!(
            sealer
                .open(&sealed, &binding("task-1", "phone_logs", &other_app))
                .is_err()
        );
        assert!(
            sealer
                .open(&sealed, &binding("task-2", "phone_logs", &args))
                .is_err()
        );
        assert!(Sealer::new().unwrap().open(&sealed, &context).is_err());
        let mut tampered = sealed.clone().into_bytes();
        let last = tampered.len() - 2;
        tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
        assert!(
            sealer
                .open(&String::from_utf8(tampered).unwrap(), &context)
                .is_err()
        );
        assert!(sealer.open("rs1.forged.state", &context).is_err());
    }
}
