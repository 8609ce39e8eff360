//! Ids for tasks, approvals and rules.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

use time::OffsetDateTime;

/// A fresh id that nobody can guess from the ids seen before: `prefix-` and 24 hex digits from
/// the standard library's randomly keyed hasher.
pub fn new_id(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = OffsetDateTime::now_utc().unix_timestamp_nanos();
    let mut parts = [0u64; 2];
    for (salt, part) in parts.iter_mut().enumerate() {
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u64(count);
        hasher.write_i128(nanos);
        hasher.write_u32(std::process::id());
        hasher.write_usize(salt);
        *part = hasher.finish();
    }
    format!("{prefix}-{:016x}{:08x}", parts[0], parts[1] >> 32)
}
