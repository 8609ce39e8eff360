//! iPhone `.ips` reports (309, 109, damaged), the 48 KB cut and crash file names.
#![no_main]

use libfuzzer_sys::fuzz_target;
use phonelogs_crash::ips;

fuzz_target!(|data: &[u8]| {
    if let Ok(Some(report)) = ips::ips_report(data) {
        assert!(report.text.len() <= ips::MAX_CUT_BYTES);
    }
    let text = String::from_utf8_lossy(data);
    let _ = ips::parse_crash_file_name(&text);
    let _ = ips::parse_ips_time(&text);
});
