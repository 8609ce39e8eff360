//! # phonelogs-adbsim
//!
//! A simulated Android phone that speaks the adbd wire protocol, so the real adb server can drive it.
//!
//! This crate is being built up issue by issue; see `ARCHITECTURE.md` for its invariants.
//!
//! ```
//! // The crate builds and can be named.
//! use phonelogs_adbsim as _;
//! ```
