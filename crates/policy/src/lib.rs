//! # phonelogs-policy
//!
//! The phonelogs permission model: agent scope, blocked and refused apps, standing Always-allow rules. Decisions only, no I/O.
//!
//! This crate is being built up issue by issue; see `ARCHITECTURE.md` for its invariants.
//!
//! ```
//! // The crate builds and can be named.
//! use phonelogs_policy as _;
//! ```
