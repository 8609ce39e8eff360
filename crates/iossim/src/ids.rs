//! Stable made-up identifiers: the same seed and salt always give the same UUID-shaped text, so
//! a simulated phone's report names, incident ids and container paths repeat run after run. Used
//! by the reports (`ips`) and the model (a reinstalled app's new container).

/// A UUID-shaped identifier (version 4, variant 1 in shape) made from `seed` and `salt`.
pub(crate) fn uuid(seed: u64, salt: u64) -> String {
    let a = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ salt;
    let b = a.rotate_left(17).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    format!(
        "{:08X}-{:04X}-4{:03X}-8{:03X}-{:012X}",
        (a >> 32) as u32,
        (a >> 16) as u16,
        (a as u16) & 0xFFF,
        (b >> 48) as u16 & 0xFFF,
        b & 0xFFFF_FFFF_FFFF
    )
}
