//! The phonelogs MCP server (being built).
fn main() {}
