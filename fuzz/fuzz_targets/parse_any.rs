//! Format detection and every format of `parse_any`, forced and detected, with rendering.
#![no_main]

use libfuzzer_sys::fuzz_target;
use phonelogs_crash::{Format, detect_format, parse_any, render_heading};

fuzz_target!(|data: &[u8]| {
    let _ = detect_format(data);
    if let Ok(parsed) = parse_any(data, None) {
        let _ = parsed.render_text();
        let _ = parsed.json_lines();
        for report in &parsed.reports {
            let _ = render_heading(report);
        }
    }
    for format in Format::ALL {
        let _ = parse_any(data, Some(format));
    }
});
