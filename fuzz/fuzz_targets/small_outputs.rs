//! `dumpsys package`, `pm list packages -U`, `date +%z`, `adb jdwp` and os_trace_relay entries.
#![no_main]

use libfuzzer_sys::fuzz_target;
use phonelogs_crash::{android, ostrace, vis};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Some(info) = android::parse_dumpsys_package(&text, "com.example.app") {
        // Believed debuggable only when the flags the block lists say so: never from a list
        // that lacks the name.
        assert!(!info.is_debuggable() || info.flags.iter().any(|f| f == "DEBUGGABLE"));
    }
    let _ = android::parse_pm_list_packages(&text);
    let _ = android::parse_jdwp(&text);
    let _ = android::parse_date_offset(&text);
    let _ = android::parse_local_date_time(&text);
    let _ = ostrace::parse_entry(data);
    let _ = vis::decode(&text);
});
