//! `dumpsys package`, `pm list packages -U`, `date +%z`, `adb jdwp` and os_trace_relay entries.
#![no_main]

use libfuzzer_sys::fuzz_target;
use phonelogs_crash::{android, ostrace};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = android::parse_dumpsys_package(&text, "com.example.app");
    let _ = android::parse_pm_list_packages(&text);
    let _ = android::parse_jdwp(&text);
    let _ = android::parse_date_offset(&text);
    let _ = android::parse_local_date_time(&text);
    let _ = ostrace::parse_entry(data);
});
