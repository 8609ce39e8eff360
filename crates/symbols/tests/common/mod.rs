//! Helpers shared by the tests that need outside tools (javac, proguard, cc, binutils).

#![allow(dead_code)]

use std::path::{Path, PathBuf};

#[allow(unused_imports)]
pub use phonelogs_symbols::testing::{have, run};

/// The repository's root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}
