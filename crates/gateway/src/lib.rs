//! # phonelogs-gateway
//!
//! The phonelogs gateway: tasks, approvals, since/limits/caps, rendering and history over any phonelogs driver.
//!
//! This crate is being built up issue by issue; see `ARCHITECTURE.md` for its invariants.
//!
//! ```
//! // The crate builds and can be named.
//! use phonelogs_gateway as _;
//! ```
