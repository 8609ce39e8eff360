//! # phonelogs-ios
//!
//! The phonelogs iPhone driver: one app's logs and crash reports over usbmux and lockdown.
//!
//! This crate is being built up issue by issue; see `ARCHITECTURE.md` for its invariants.
//!
//! ```
//! // The crate builds and can be named.
//! use phonelogs_ios as _;
//! ```
