//! The phonelogs command line (being built).
fn main() {}
