//! # phonelogs-mcp-frontend
//!
//! The MCP face of phonelogs: [`PhoneLogsServer`] serves `phone_logs`, `list_devices` and the six
//! Android debugging aids over one gateway [`Session`](phonelogs_gateway::Session) (one MCP
//! session is one task). It parses the agent's arguments, asks the person through the client
//! when the gateway says an approval is pending, and renders the gateway's answers; the gateway
//! decides everything else.
//!
//! Who sits at the client is decided where the transport is chosen ([`ClientSeat`], in
//! [`ServerOptions::client`]): the person's own client (stdio) is asked with every answer; a
//! client a person sits at over the network without "Always allow"; the agent's own client
//! (HTTP, and the default) never: its questions wait for the person's side.
//!
//! Asking the person, by what the client can do:
//! - a client with form elicitation (protocol 2025-06-18 to 2025-11-25) is asked the action's own
//!   question ("Read the logs of <app>?", "Capture a native tombstone of <app> (pid N)? …") with
//!   Allow once, Allow for this task, Always allow and Deny, and the call completes with the
//!   answer; only the person's "Deny" choice denies: a client's decline or cancel (some decline
//!   without a dialog) leaves the question pending;
//! - a 2026-07-28 client that declares elicitation gets an `input_required` result with the same
//!   form, and its retry carries the answer and a sealed `requestState` (HMAC-SHA256 under a
//!   per-process secret, bound to the task, tool and arguments, valid 15 minutes);
//! - any other client gets `approval_pending` and an `approval_id`, which the person answers on
//!   their side (`phonelogs approvals answer <ID> once|task|always|deny`); the agent is told only
//!   that a person must answer, never how. Nothing is ever allowed by default.
//!
//! Nothing here cuts a result: the gateway lays it out within its result cap
//! ([`GatewayBuilder::result_cap`](phonelogs_gateway::GatewayBuilder::result_cap)), and
//! [`render`] passes it on whole, once as text content (the message, a blank line, the log) and
//! once as `structuredContent` (status, message, counts, report headings and the same log), since
//! a client gives its model one of the two.
//!
//! ```
//! use std::sync::Arc;
//! use phonelogs_driver::{AppId, DeviceId};
//! use phonelogs_fake::{FakeApp, FakePhone};
//! use phonelogs_gateway::{Agent, Gateway, Mode, TaskSpec};
//! use phonelogs_mcp_frontend::{ClientSeat, PhoneLogsServer, ServerOptions};
//!
//! let phone = FakePhone::new();
//! let device = DeviceId::new("emulator-5554");
//! phone.add_device(&device, "Pixel 8");
//! phone.add_app(&device, FakeApp::new(AppId::new("dev.phonelogs.crashtest")).uid(10123).dev_build(true));
//! let gateway = Gateway::builder().driver(Arc::new(phone)).build()?;
//! let task = TaskSpec::new(Agent::new("my-agent", Mode::ReadOnly));
//! // Served on stdio: the person sits at the client that started the server.
//! let options = ServerOptions { client: ClientSeat::Person, ..ServerOptions::default() };
//! let server = PhoneLogsServer::new(gateway, task, options)?;
//! assert!(!server.session().task_id().is_empty());
//! // `server.serve((tokio::io::stdin(), tokio::io::stdout())).await` serves it on stdio.
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod args;
pub mod ask;
pub mod convert;
pub mod debug;
mod error;
pub mod output;
pub mod render;
mod server;
pub mod skill;

pub use ask::ClientSeat;
pub use error::Error;
pub use server::{INSTRUCTIONS, PhoneLogsServer, ServerOptions, logs_result};
