//! # phonelogs-symbols
//!
//! Local symbols for crash reports, with no account and no upload: a symbols directory laid
//! out as `DIR/<package or bundle id>/<versionCode or CFBundleVersion>/` holding `mapping.txt`
//! (R8 or ProGuard), unstripped `.so` files (matched by their GNU build id) and `.dSYM`
//! bundles (matched by image UUID).
//!
//! - Java and Kotlin frames are deobfuscated with Sentry's `proguard` crate (inlined frames,
//!   line ranges, R8's `sourceFile`, outline and rewrite metadata), through its on-disk cache
//!   so that a second process starts warm ([`java`]).
//! - Android native frames (`#00 pc …  lib.so (BuildId: …)`) and iPhone `.ips` frames are
//!   symbolicated to function, file, line and inlined frames with `addr2line` ([`native`]).
//! - [`fingerprint`] gives each report its blamed frame and a fingerprint that is stable across
//!   runs and phones, and groups reports by it.
//!
//! Every result says which files were used or why none matched ([`SymbolsUsed`]). Nothing is
//! written except mapping caches, under `DIR/.cache/` or the user's cache directory.
//!
//! ```
//! use phonelogs_symbols::{SymbolsDir, Target, fingerprint};
//! use phonelogs_crash::{Report, CrashKind};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let version = dir.path().join("com.example.app").join("12");
//! std::fs::create_dir_all(&version).unwrap();
//! std::fs::write(
//!     version.join("mapping.txt"),
//!     "com.example.app.Checkout -> a.a:\n    1:1:void resume():42:42 -> b\n",
//! )
//! .unwrap();
//!
//! let symbols = SymbolsDir::open(dir.path()).unwrap();
//! let report = Report {
//!     kind: CrashKind::JavaCrash,
//!     time: None,
//!     pid: Some(4321),
//!     process: "com.example.app".into(),
//!     summary: "java.lang.IllegalStateException: boom".into(),
//!     text: "java.lang.IllegalStateException: boom\n\tat a.a.b(SourceFile:1)\n".into(),
//!     warnings: vec![],
//! };
//! let target = Target { app: "com.example.app", version: Some("12") };
//! let applied = symbols.apply(target, &report);
//! assert!(applied.text.contains("at com.example.app.Checkout.resume(Checkout.java:42)"));
//! assert_eq!(applied.symbols.used.len(), 1);
//!
//! let app = fingerprint::AppCode::for_app("com.example.app", &report.process);
//! let analysis = fingerprint::analyse(report.kind, &applied.summary, &applied.text, &app);
//! assert_eq!(analysis.blamed_frame.unwrap().short(), "Checkout.resume(Checkout.java:42)");
//! ```

mod apply;
mod dir;
mod error;
pub mod fingerprint;
pub mod frames;
pub mod java;
pub mod native;
#[cfg(feature = "testing")]
pub mod testing;

pub use apply::{Applied, NotMatched, SymbolsUsed, Target, UsedFile};
pub use dir::{DebugEntry, Inventory, SymbolKind, SymbolsDir, check_component};
pub use error::Error;
/// The report type symbols are applied to, re-exported so a caller needs no direct dependency
/// on `phonelogs-crash`.
pub use phonelogs_crash::{CrashKind, Report};
