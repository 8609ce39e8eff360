//! The official MCP conformance suite's fixtures behind phonelogs' HTTP front end.
//!
//! `.ci/conformance.sh` runs the suite (`@modelcontextprotocol/conformance`, pinned in
//! `.ci/conformance/`) twice: against the shipped `phonelogs-mcp --demo --http`, whose tool list
//! never has the suite's fixtures (`test_simple_text`, `test_prompt_with_arguments`,
//! `test://static-text`, …), and against this build, which serves them through the same
//! [`phonelogs_http::serve_with`] as the shipped server serves `PhoneLogsServer` (bearer tokens,
//! seats, sessions and their caps, both wires, connection slots, one gateway task per session
//! and per token). So a scenario that fails against both is the front end's; one that fails
//! against the shipped server alone is its tool list's. Test-only: never shipped in
//! phonelogs-mcp.
//!
//! The fixtures are the suite's own, as its scenarios' descriptions specify them
//! (`target/conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js`). It takes
//! the shipped server's flags, so the script starts both alike:
//!
//! ```text
//! cargo build -p phonelogs-http --example conformance_fixtures
//! bash .ci/conformance.sh target/debug/phonelogs-mcp target/debug/examples/conformance_fixtures
//! ```

// Logging and sampling are deprecated by 2026-07-28 (SEP-2577), and still fixtures of 2025-11-25.
#![allow(deprecated)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use anyhow::Context as _;
use clap::Parser;
use phonelogs_gateway::{Gateway, Session, TaskSpec};
use phonelogs_http::{Handler, HttpArgs, Serve};
use phonelogs_mcp_frontend::ServerOptions;
use phonelogs_policy::{Agent, Mode, Policy};
use rmcp::model::*;
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Value, json};

/// The request states handed out, and the round each stands for: a state not in it was not
/// ours (tampered), and is refused.
static STATES: Mutex<BTreeMap<String, usize>> = Mutex::new(BTreeMap::new());

/// A 1×1 red PNG.
const PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
/// A WAV of eight silent 8-bit samples at 8 kHz.
const WAV: &str = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==";

/// The shipped server's flags that `.ci/conformance.sh` passes.
#[derive(Debug, Parser)]
struct Flags {
    /// Accepted so the script starts both builds alike; the fixtures need no phone.
    #[arg(long)]
    demo: bool,
    /// Where the gateway keeps its state (and a made token).
    #[arg(long, value_name = "DIR")]
    state_dir: PathBuf,
    #[command(flatten)]
    http: HttpArgs,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();
    let flags = Flags::parse();
    let settings = flags
        .http
        .settings()?
        .context("--http ADDR: the fixtures are served over HTTP only")?;
    let gateway = Gateway::builder()
        .state_dir(&flags.state_dir)
        .build()
        .context("starting the gateway")?;
    let serve = Serve {
        gateway,
        default_agent: Agent::new("conformance", Mode::Full),
        policy: Policy::default(),
        task_apps: None,
        state_dir: flags.state_dir,
        ask_person_tokens: false,
        options: ServerOptions::default(),
    };
    phonelogs_http::serve_with::<Fixtures>(serve, settings).await?;
    Ok(())
}

/// The suite's fixture server: one per session (2025-11-25) or per token's task (2026-07-28).
#[derive(Clone)]
struct Fixtures {
    session: Session,
}

impl Handler for Fixtures {
    fn make(
        gateway: &Gateway,
        task: &TaskSpec,
        _options: &ServerOptions,
    ) -> Result<Self, phonelogs_mcp_frontend::Error> {
        Ok(Fixtures {
            session: gateway.start_task(task.clone()),
        })
    }

    fn session(&self) -> &Session {
        &self.session
    }
}

/// A value of rmcp's model from the JSON the suite specifies.
fn from_json<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, ErrorData> {
    serde_json::from_value(value)
        .map_err(|error| ErrorData::internal_error(error.to_string(), None))
}

/// A result of rmcp's model from the JSON the suite specifies, marked complete: 2026-07-28 requires
/// `resultType` in every result (rmcp's constructors set it; rmcp strips it for an older peer).
fn result<T: serde::de::DeserializeOwned>(mut value: Value) -> Result<T, ErrorData> {
    if let Some(object) = value.as_object_mut() {
        object.insert("resultType".to_owned(), json!("complete"));
    }
    from_json(value)
}

fn text_result(text: impl Into<String>) -> Result<CallToolResponse, ErrorData> {
    result::<CallToolResult>(json!({"content": [{"type": "text", "text": text.into()}]}))
        .map(Into::into)
}

/// The fixture tools, as `tools/list` shows them.
fn tools() -> Value {
    let none = json!({"type": "object", "properties": {}});
    let string = |name: &str, description: &str| json!({"type": "object", "properties": {name: {"type": "string", "description": description}}, "required": [name]});
    let mut list = vec![];
    for (name, description) in [
        ("test_simple_text", "Returns simple text content"),
        ("test_image_content", "Returns image content"),
        ("test_audio_content", "Returns audio content"),
        ("test_embedded_resource", "Returns an embedded resource"),
        (
            "test_multiple_content_types",
            "Returns text, image and resource content",
        ),
        ("test_error_handling", "Always returns an error"),
        ("test_tool_with_progress", "Reports progress"),
        ("test_tool_with_logging", "Sends log messages"),
        (
            "test_elicitation_sep1034_defaults",
            "Elicits with defaults for every primitive type",
        ),
        (
            "test_elicitation_sep1330_enums",
            "Elicits with every enum variant",
        ),
        (
            "test_missing_capability",
            "Needs the client's sampling capability",
        ),
        (
            "test_logging_tool",
            "Logs only when the request sets a log level",
        ),
        (
            "test_streaming_elicitation",
            "Asks for input with an input_required result",
        ),
        (
            "test_input_required_result_elicitation",
            "Asks for the user's name (input_required)",
        ),
        (
            "test_input_required_result_sampling",
            "Asks the client's LLM (input_required)",
        ),
        (
            "test_input_required_result_list_roots",
            "Asks for the client's roots (input_required)",
        ),
        (
            "test_input_required_result_request_state",
            "Asks with a request state (input_required)",
        ),
        (
            "test_input_required_result_multiple_inputs",
            "Asks three things at once (input_required)",
        ),
        (
            "test_input_required_result_multi_round",
            "Asks twice, in two rounds (input_required)",
        ),
        (
            "test_input_required_result_tampered_state",
            "Refuses a tampered request state (input_required)",
        ),
        (
            "test_input_required_result_capabilities",
            "Asks only what the client can answer (input_required)",
        ),
    ] {
        list.push(json!({"name": name, "description": description, "inputSchema": none}));
    }
    list.push(
        json!({"name": "test_sampling", "description": "Asks the client's LLM",
        "inputSchema": string("prompt", "The prompt to send to the LLM")}),
    );
    list.push(
        json!({"name": "test_elicitation", "description": "Asks the user",
        "inputSchema": string("message", "The message to show the user")}),
    );
    list.push(json_schema_tool());
    // SEP-2243: the argument mirrored in an `Mcp-Param-Region` header, which rmcp checks.
    list.push(
        json!({"name": "test_custom_headers", "description": "Takes a region from a header too",
        "inputSchema": {"type": "object", "properties": {
            "region": {"type": "string", "description": "A region", "x-mcp-header": "Region"}},
            "required": ["region"]}}),
    );
    Value::Array(list)
}

/// `json_schema_2020_12_tool`: the 2020-12 keywords the suite checks are preserved.
fn json_schema_tool() -> Value {
    json!({
        "name": "json_schema_2020_12_tool",
        "description": "Tool with JSON Schema 2020-12 features",
        "inputSchema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {"address": {"$anchor": "addressDef", "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
            "properties": {
                "name": {"type": "string"},
                "address": {"$ref": "#/$defs/address"},
                "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                "phone": {"type": "string"},
                "email": {"type": "string"}
            },
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
            "then": {"required": ["phone"]},
            "else": {"required": ["email"]},
            "additionalProperties": false
        }
    })
}

/// The schema of `test_elicitation_sep1034_defaults`.
fn defaults_schema() -> Value {
    json!({"type": "object", "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
        "verified": {"type": "boolean", "default": true}
    }})
}

/// The schema of `test_elicitation_sep1330_enums`.
fn enums_schema() -> Value {
    json!({"type": "object", "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {"type": "string", "oneOf": [
            {"const": "value1", "title": "First Option"},
            {"const": "value2", "title": "Second Option"},
            {"const": "value3", "title": "Third Option"}]},
        "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"]},
        "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
        "titledMulti": {"type": "array", "items": {"anyOf": [
            {"const": "value1", "title": "First Choice"},
            {"const": "value2", "title": "Second Choice"},
            {"const": "value3", "title": "Third Choice"}]}}
    }})
}

impl Fixtures {
    /// The tools that answer at once with content the suite fixes.
    fn content(name: &str) -> Option<Value> {
        let resource = |uri: &str, mime: &str, text: &str| json!({"type": "resource", "resource": {"uri": uri, "mimeType": mime, "text": text}});
        let image = json!({"type": "image", "data": PNG, "mimeType": "image/png"});
        let content = match name {
            "test_simple_text" => {
                json!([{"type": "text", "text": "This is a simple text response for testing."}])
            }
            "test_image_content" => json!([image]),
            "test_audio_content" => {
                json!([{"type": "audio", "data": WAV, "mimeType": "audio/wav"}])
            }
            "test_embedded_resource" => json!([resource(
                "test://embedded-resource",
                "text/plain",
                "This is an embedded resource content."
            )]),
            "test_multiple_content_types" => json!([
                {"type": "text", "text": "Multiple content types test:"},
                image,
                resource("test://mixed-content-resource", "application/json", r#"{"test":"data","value":123}"#)
            ]),
            "test_error_handling" => {
                return Some(json!({"isError": true, "content": [
                    {"type": "text", "text": "This tool intentionally returns an error for testing"}]}));
            }
            _ => return None,
        };
        Some(json!({"content": content}))
    }

    async fn progress(context: &RequestContext<RoleServer>) -> Result<CallToolResponse, ErrorData> {
        let token = context.meta.get_progress_token();
        for progress in [0.0, 50.0, 100.0] {
            if let Some(token) = &token {
                let param =
                    ProgressNotificationParam::new(token.clone(), progress).with_total(100.0);
                let _ = context.peer.notify_progress(param).await;
            }
            if progress < 100.0 {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        text_result("Progress reporting completed")
    }

    async fn logging(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        for (index, message) in [
            "Tool execution started",
            "Tool processing data",
            "Tool execution completed",
        ]
        .into_iter()
        .enumerate()
        {
            if index > 0 {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            let param: LoggingMessageNotificationParam =
                from_json(json!({"level": "info", "logger": "conformance", "data": message}))?;
            let _ = context.peer.notify_logging_message(param).await;
        }
        text_result("Tool with logging executed successfully")
    }

    /// `test_missing_capability`: refused with -32021 unless the client declared sampling.
    fn missing_capability(
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let declared = context
            .client_capabilities()
            .and_then(|capabilities| serde_json::to_value(capabilities).ok())
            .is_some_and(|capabilities| capabilities.get("sampling").is_some());
        if !declared {
            let required = from_json(json!({"sampling": {}}))?;
            return Err(ErrorData::missing_required_client_capability(required));
        }
        text_result("The client declared sampling")
    }

    /// `test_logging_tool` (2026-07-28): a log message only when the request's `_meta` sets a
    /// level.
    async fn logging_tool(
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if context.meta.log_level().is_some() {
            let param: LoggingMessageNotificationParam =
                from_json(json!({"level": "info", "logger": "conformance", "data": "logged"}))?;
            let _ = context.peer.notify_logging_message(param).await;
        }
        text_result("Logging tool executed")
    }

    /// The input_required fixtures (SEP-2322), `Some` for theirs: round 1 asks in the result
    /// (never by an independent request), the next round answers from `inputResponses`.
    fn input_required(
        name: &str,
        request: &Value,
        context: &RequestContext<RoleServer>,
    ) -> Option<Result<CallToolResponse, ErrorData>> {
        let rounds = match name {
            "test_streaming_elicitation" | "test_input_required_result_elicitation" => {
                vec![(asks(&["user_name"]), false)]
            }
            "test_input_required_result_sampling" => vec![(asks(&["capital_question"]), false)],
            "test_input_required_result_list_roots" => vec![(asks(&["client_roots"]), false)],
            "test_input_required_result_request_state"
            | "test_input_required_result_tampered_state" => {
                vec![(asks(&["confirm"]), true)]
            }
            "test_input_required_result_multiple_inputs" => {
                vec![(asks(&["user_name", "greeting", "client_roots"]), true)]
            }
            "test_input_required_result_multi_round" => {
                vec![(asks(&["step1"]), true), (asks(&["step2"]), true)]
            }
            "test_input_required_result_capabilities" => vec![(declared(context), false)],
            _ => return None,
        };
        Some(match next_round(request, &rounds) {
            Ok(Round::Ask(asked)) => Ok(CallToolResponse::InputRequired(asked)),
            Ok(Round::Done(text)) => text_result(text),
            Err(error) => Err(error),
        })
    }

    async fn sampling(
        arguments: &JsonObject,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let prompt = arguments
            .get("prompt")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let params: CreateMessageRequestParams = from_json(json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
            "maxTokens": 100
        }))?;
        let answer = context.peer.create_message(params).await.map_err(|error| {
            ErrorData::internal_error(format!("sampling failed: {error}"), None)
        })?;
        let text = serde_json::to_value(&answer.message.content)
            .ok()
            .and_then(|content| {
                content
                    .get("text")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .unwrap_or_default();
        text_result(format!("LLM response: {text}"))
    }

    async fn elicit(
        message: &str,
        schema: Value,
        context: &RequestContext<RoleServer>,
        answer: &str,
    ) -> Result<CallToolResponse, ErrorData> {
        let params: ElicitRequestParams =
            from_json(json!({"mode": "form", "message": message, "requestedSchema": schema}))?;
        let result = context
            .peer
            .create_elicitation(params)
            .await
            .map_err(|error| {
                ErrorData::internal_error(format!("elicitation failed: {error}"), None)
            })?;
        let result = serde_json::to_value(&result).unwrap_or_default();
        let action = result.get("action").cloned().unwrap_or_default();
        let content = result.get("content").cloned().unwrap_or_default();
        text_result(format!("{answer}: action={action}, content={content}"))
    }
}

impl ServerHandler for Fixtures {
    fn get_info(&self) -> ServerConfig {
        let capabilities: ServerCapabilities = serde_json::from_value(json!({
            "tools": {}, "prompts": {}, "resources": {"subscribe": true},
            "completions": {}, "logging": {}
        }))
        .unwrap_or_default();
        ServerConfig::new(capabilities).with_server_info(Implementation::new(
            "phonelogs-conformance-fixtures",
            env!("CARGO_PKG_VERSION"),
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        result(json!({"tools": tools()}))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let tools = tools();
        let tool = tools.as_array()?.iter().find(|t| t["name"] == name)?;
        serde_json::from_value(tool.clone()).ok()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.clone().unwrap_or_default();
        if let Some(fixed) = Self::content(&request.name) {
            return result::<CallToolResult>(fixed).map(Into::into);
        }
        let asked = serde_json::to_value(&request).unwrap_or_default();
        if let Some(response) = Self::input_required(&request.name, &asked, &context) {
            return response;
        }
        match request.name.as_ref() {
            "test_tool_with_progress" => Self::progress(&context).await,
            "test_custom_headers" => {
                let region = arguments
                    .get("region")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                text_result(format!("Region: {region}"))
            }
            "test_missing_capability" => Self::missing_capability(&context),
            "test_logging_tool" => Self::logging_tool(&context).await,
            "test_tool_with_logging" => self.logging(&context).await,
            "test_sampling" => Self::sampling(&arguments, &context).await,
            "test_elicitation" => {
                let message = arguments
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let schema = json!({"type": "object", "properties": {
                    "username": {"type": "string", "description": "User's response"},
                    "email": {"type": "string", "description": "User's email address"}
                }, "required": ["username", "email"]});
                Self::elicit(message, schema, &context, "User response").await
            }
            "test_elicitation_sep1034_defaults" => {
                let message = "Please review and update the form fields with defaults";
                Self::elicit(
                    message,
                    defaults_schema(),
                    &context,
                    "Elicitation completed",
                )
                .await
            }
            "test_elicitation_sep1330_enums" => {
                let message = "Please select options from the enum fields";
                Self::elicit(message, enums_schema(), &context, "Elicitation completed").await
            }
            other => Err(ErrorData::invalid_params(
                format!("no tool named {other}"),
                None,
            )),
        }
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let argument = |name: &str, description: &str| json!({"name": name, "description": description, "required": true});
        result(json!({"prompts": [
            {"name": "test_simple_prompt", "description": "A simple prompt without arguments"},
            {"name": "test_prompt_with_arguments", "description": "A prompt with arguments",
                "arguments": [argument("arg1", "First test argument"), argument("arg2", "Second test argument")]},
            {"name": "test_prompt_with_embedded_resource", "description": "A prompt with an embedded resource",
                "arguments": [argument("resourceUri", "URI of the resource to embed")]},
            {"name": "test_prompt_with_image", "description": "A prompt with an image"},
            {"name": "test_input_required_result_prompt", "description": "A prompt that asks first (input_required)"}
        ]}))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if request.name == "test_input_required_result_prompt" {
            let asked = serde_json::to_value(&request).unwrap_or_default();
            return match next_round(&asked, &[(asks(&["user_context"]), false)])? {
                Round::Ask(asked) => Ok(GetPromptResponse::InputRequired(asked)),
                Round::Done(text) => result::<GetPromptResult>(json!({"messages": [
                    {"role": "user", "content": {"type": "text", "text": text}}]}))
                .map(Into::into),
            };
        }
        let arguments = request.arguments.clone().unwrap_or_default();
        let argument = |name: &str| {
            arguments
                .get(name)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let text =
            |text: String| json!({"role": "user", "content": {"type": "text", "text": text}});
        let messages = match request.name.as_str() {
            "test_simple_prompt" => {
                json!([text("This is a simple prompt for testing.".to_owned())])
            }
            "test_prompt_with_arguments" => json!([text(format!(
                "Prompt with arguments: arg1='{}', arg2='{}'",
                argument("arg1"),
                argument("arg2")
            ))]),
            "test_prompt_with_embedded_resource" => json!([
                {"role": "user", "content": {"type": "resource", "resource": {
                    "uri": argument("resourceUri"), "mimeType": "text/plain",
                    "text": "Embedded resource content for testing."}}},
                text("Please process the embedded resource above.".to_owned())
            ]),
            "test_prompt_with_image" => json!([
                {"role": "user", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}},
                text("Please analyze the image above.".to_owned())
            ]),
            other => {
                return Err(ErrorData::invalid_params(
                    format!("no prompt named {other}"),
                    None,
                ));
            }
        };
        result::<GetPromptResult>(json!({"messages": messages})).map(Into::into)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        result(json!({"resources": [
            {"uri": "test://static-text", "name": "static-text", "mimeType": "text/plain"},
            {"uri": "test://static-binary", "name": "static-binary", "mimeType": "image/png"},
            {"uri": "test://watched-resource", "name": "watched-resource", "mimeType": "text/plain"}
        ]}))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        result(json!({"resourceTemplates": [
            {"uriTemplate": "test://template/{id}/data", "name": "template-data", "mimeType": "application/json"}
        ]}))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.as_str();
        let id = uri
            .strip_prefix("test://template/")
            .and_then(|rest| rest.strip_suffix("/data"));
        let contents = match (uri, id) {
            ("test://static-text", _) => json!({"uri": uri, "mimeType": "text/plain",
                "text": "This is the content of the static text resource."}),
            ("test://static-binary", _) => {
                json!({"uri": uri, "mimeType": "image/png", "blob": PNG})
            }
            ("test://watched-resource", _) => json!({"uri": uri, "mimeType": "text/plain",
                "text": "Watched resource content."}),
            (_, Some(id)) => json!({"uri": uri, "mimeType": "application/json",
                "text": json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string()}),
            _ => {
                let data = json!({"uri": uri});
                return Err(ErrorData::resource_not_found(
                    format!("no resource {uri}"),
                    Some(data),
                ));
            }
        };
        result::<ReadResourceResult>(json!({"contents": [contents]})).map(Into::into)
    }

    /// `subscriptions/listen` (2026-07-28) for every kind asked that the capabilities declare;
    /// rmcp acknowledges it and the default `listen` holds it until it is cancelled.
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.clone())
    }

    async fn subscribe(
        &self,
        _request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn unsubscribe(
        &self,
        _request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let given = request.argument.value.as_str();
        let values: Vec<&str> = ["paris", "park", "party"]
            .into_iter()
            .filter(|value| value.starts_with(given))
            .collect();
        result(json!({"completion": {"values": values, "total": values.len(), "hasMore": false}}))
    }

    /// Accepted and answered `{}`, which is what the suite checks; the logging fixtures do not
    /// filter by it.
    async fn set_level(
        &self,
        _request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }
}

/// One round's questions by key, and whether it hands out a request state.
type Asks = (Vec<(&'static str, Value)>, bool);

/// The suite's input requests, by the keys its scenarios name.
fn asks(keys: &[&'static str]) -> Vec<(&'static str, Value)> {
    keys.iter().map(|key| (*key, input_request(key))).collect()
}

fn input_request(key: &str) -> Value {
    let elicit = |message: &str, field: &str, kind: &str| {
        json!({"method": "elicitation/create", "params": {"mode": "form", "message": message,
            "requestedSchema": {"type": "object", "properties": {field: {"type": kind}}, "required": [field]}}})
    };
    let sample = |text: &str, max: u32| {
        json!({"method": "sampling/createMessage", "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}], "maxTokens": max}})
    };
    match key {
        "user_name" => elicit("What is your name?", "name", "string"),
        "confirm" => elicit("Please confirm", "ok", "boolean"),
        "step1" => elicit("Step 1: What is your name?", "name", "string"),
        "step2" => elicit("Step 2: What is your favorite color?", "color", "string"),
        "user_context" => elicit("What context should the prompt use?", "context", "string"),
        "capital_question" => sample("What is the capital of France?", 100),
        "greeting" => sample("Generate a greeting", 50),
        _ => json!({"method": "roots/list", "params": {}}),
    }
}

/// `test_input_required_result_capabilities`: only what the client declared it can answer.
fn declared(context: &RequestContext<RoleServer>) -> Vec<(&'static str, Value)> {
    let capabilities = context
        .client_capabilities()
        .and_then(|capabilities| serde_json::to_value(capabilities).ok())
        .unwrap_or_default();
    [
        ("elicitation", "user_name"),
        ("sampling", "capital_question"),
        ("roots", "client_roots"),
    ]
    .into_iter()
    .filter(|(capability, _)| capabilities.get(capability).is_some())
    .map(|(_, key)| (key, input_request(key)))
    .collect()
}

enum Round {
    Ask(InputRequiredResult),
    Done(String),
}

/// The round a request is at: the first without `inputResponses`; a later one with the answers
/// to the round before (and its request state, checked); done after the last.
fn next_round(request: &Value, rounds: &[Asks]) -> Result<Round, ErrorData> {
    let invalid = |text: &str| ErrorData::invalid_params(text.to_owned(), None);
    let responses = match request.get("inputResponses") {
        None | Some(Value::Null) => None,
        Some(Value::Object(responses)) => Some(responses),
        Some(_) => {
            return Err(invalid(
                "inputResponses must be an object of answers by key",
            ));
        }
    };
    let Some(responses) = responses else {
        return ask(&rounds[0], 1);
    };
    let round = match request.get("requestState").and_then(Value::as_str) {
        Some(state) => {
            let states = STATES
                .lock()
                .map_err(|_| invalid("the states' lock was poisoned"))?;
            *states
                .get(state)
                .ok_or_else(|| invalid("requestState failed its integrity check"))?
        }
        None if rounds[0].1 => return Err(invalid("this tool's requestState is missing")),
        None => 1,
    };
    let asked = &rounds[round - 1].0;
    if responses.values().any(|answer| !answer.is_object()) {
        return Err(invalid(
            "each of inputResponses must be the answer's result object",
        ));
    }
    // An answer missing: asked again (SEP-2322 recommends re-requesting over an error).
    if asked.iter().any(|(key, _)| !responses.contains_key(*key)) {
        return ask(&rounds[round - 1], round);
    }
    if round < rounds.len() {
        return ask(&rounds[round], round + 1);
    }
    let state = if rounds[0].1 { " state-ok" } else { "" };
    Ok(Round::Done(format!(
        "Hello! answers:{state} {}",
        Value::Object(responses.clone())
    )))
}

fn ask((questions, with_state): &Asks, round: usize) -> Result<Round, ErrorData> {
    let requests: serde_json::Map<String, Value> = questions
        .iter()
        .map(|(key, value)| ((*key).to_owned(), value.clone()))
        .collect();
    let mut asked = json!({"resultType": "input_required", "inputRequests": requests});
    if *with_state {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let state: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        if let Ok(mut states) = STATES.lock() {
            states.insert(state.clone(), round);
        }
        asked["requestState"] = json!(state);
    }
    from_json(asked).map(Round::Ask)
}
