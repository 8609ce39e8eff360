//! The debugging aids' captures as an agent reads them: a tombstone, an exit history and a
//! native backtrace with the app's texts in them masked ([`crate::mask`]), each counting what
//! was masked. The gateway cuts them to the cap after.

use phonelogs_driver::{NativeBacktrace, ProcessExitHistory};

use crate::mask::Masker;

/// A tombstone's bytes with their secrets masked, and its process name's, and how many were
/// masked. A dump that is not UTF-8 (a thread name or a logged byte of another encoding) is
/// masked as read with its invalid bytes replaced, and written so when it held a secret; one
/// that held none is written as the phone printed it.
pub fn mask_tombstone(
    bytes: Vec<u8>,
    process_name: &mut Option<String>,
    masker: Option<&Masker>,
) -> (Vec<u8>, usize) {
    let Some(masker) = masker else {
        return (bytes, 0);
    };
    let mut count = 0;
    if let Some(name) = process_name.as_mut() {
        let masked = masker.line(name);
        count += masked.count;
        if masked.count > 0 {
            *name = masked.text.into_owned();
        }
    }
    let text = String::from_utf8_lossy(&bytes);
    let masked = masker.text(&text);
    count += masked.count;
    if masked.count == 0 {
        return (bytes, count);
    }
    (masked.text.into_owned().into_bytes(), count)
}

/// Masks the app's texts in an exit history (each record's process and description); how
/// many secrets were masked.
pub fn mask_exit_history(history: &mut ProcessExitHistory, masker: Option<&Masker>) -> usize {
    let Some(masker) = masker else {
        return 0;
    };
    let mut count = 0;
    for record in &mut history.records {
        for field in [&mut record.process, &mut record.description] {
            if let Some(text) = field.as_mut() {
                let masked = masker.text(text);
                count += masked.count;
                if masked.count > 0 {
                    *text = masked.text.into_owned();
                }
            }
        }
    }
    count
}

/// Masks a native backtrace's text and its threads' names (the app's own); how many secrets
/// were masked.
pub fn mask_backtrace(backtrace: &mut NativeBacktrace, masker: Option<&Masker>) -> usize {
    let Some(masker) = masker else {
        return 0;
    };
    let masked = masker.text(&backtrace.text);
    let mut count = masked.count;
    if masked.count > 0 {
        backtrace.text = masked.text.into_owned();
    }
    for thread in &mut backtrace.threads {
        let masked = masker.line(&thread.name);
        count += masked.count;
        if masked.count > 0 {
            thread.name = masked.text.into_owned();
        }
    }
    if let Some(name) = backtrace.process_name.as_mut() {
        let masked = masker.line(name);
        count += masked.count;
        if masked.count > 0 {
            *name = masked.text.into_owned();
        }
    }
    count
}
