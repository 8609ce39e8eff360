//! # phonelogs-android
//!
//! The phonelogs Android driver: one app's logs, crashes and debugging aids through the adb server.
//!
//! This crate is being built up issue by issue; see `ARCHITECTURE.md` for its invariants.
//!
//! ```
//! // The crate builds and can be named.
//! use phonelogs_android as _;
//! ```
