//! # phonelogs-mcp-frontend
//!
//! MCP tools (phone_logs, list_devices, the six debugging aids) over the phonelogs gateway.
//!
//! This crate is being built up issue by issue; see `ARCHITECTURE.md` for its invariants.
//!
//! ```
//! // The crate builds and can be named.
//! use phonelogs_mcp_frontend as _;
//! ```
