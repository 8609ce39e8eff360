//! os_trace_relay records (`phonelogs_crash::ostrace`): arbitrary bytes, and a record in Apple's
//! layout built from them, whose strings must read back. The body is shared with the property
//! test `crates/crash/tests/ostrace_records.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../crates/crash/tests/support/ostrace_check.rs"]
mod ostrace_check;

fuzz_target!(|data: &[u8]| {
    ostrace_check::check(data);
});
