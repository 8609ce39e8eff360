//! Issue 38, item 1: the os_trace record parser on arbitrary bytes, with the same body as the
//! `ostrace` fuzz target (`tests/support/ostrace_check.rs`), so it runs where cargo-fuzz does
//! not.

#[path = "support/ostrace_check.rs"]
mod ostrace_check;

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_bytes(data in proptest::collection::vec(any::<u8>(), 0..600)) {
        ostrace_check::check(&data);
    }

    /// Bytes that start like a record (version 2, type 8, header 129), so the parser's
    /// later checks are reached, not only the first.
    #[test]
    fn record_like_bytes(tail in proptest::collection::vec(any::<u8>(), 120..700)) {
        let mut data = vec![2u8, 8, 0, 0, 0, 129, 0, 0, 0];
        data.extend(tail);
        ostrace_check::check(&data);
    }

    /// A built record with one byte changed anywhere: never a panic, and a record read as a
    /// line still keeps the size rule (checked inside).
    #[test]
    fn one_byte_changed(
        data in proptest::collection::vec(any::<u8>(), 0..300),
        at in any::<prop::sample::Index>(),
        byte in any::<u8>(),
    ) {
        let (words, rest) = (data.first().copied().unwrap_or(0) % 4, data.get(1..).unwrap_or_default());
        let parts = [rest.iter().map(|&b| b.max(1)).collect(), Vec::new(), b"m".to_vec(), Vec::new(), Vec::new()];
        let mut record = ostrace_check::build(&parts, u32::from(words));
        let i = at.index(record.len());
        record[i] = byte;
        ostrace_check::check(&record);
    }
}
