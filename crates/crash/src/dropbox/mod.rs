//! `dumpsys dropbox --print`: entries, their `Key: value` headers and bodies, matching an entry
//! to an app, and turning `data_app_crash`, `data_app_native_crash` and `data_app_anr` entries
//! into reports. By layer, each using only those before it:
//!
//! - [`headers`]: what one entry's header says (its header line, `Key: value` lines, whose it
//!   is, its time);
//! - [`entry`]: one entry read whole and its report;
//! - [`scan`]: a `--print` dump read in place, where each entry starts and ends;
//! - [`listing`]: what the listing confirms of a `--print` dump (a forged entry is not trusted).

mod entry;
mod headers;
mod listing;
mod scan;
#[cfg(test)]
mod tests;

pub use entry::DropBoxEntry;
pub use headers::{AppMatch, Attribution, ENTRY_SEPARATOR, EntryContents, EntryIdentity};
pub use listing::{
    CheckedEntries, DUMP_TIMEOUT, ListedEntry, checked_dropbox_entries, dropbox_listing,
    dropbox_preview, dump_timed_out,
};
pub use scan::{DropBoxEntryRef, dropbox_entries, dropbox_reports, parse_dropbox};

// What the tests reach besides the public names.
#[cfg(test)]
use crate::report::{PhoneClock, Report};
#[cfg(test)]
use headers::{read_entry_header, read_entry_header_ref, read_header_line};
#[cfg(test)]
use scan::{declared_end, line_at};
