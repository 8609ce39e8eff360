// Utility modules for higher-level operations built on top of services

#[cfg(all(
    feature = "afc",
    feature = "installation_proxy",
    not(target_arch = "wasm32")
))]
pub mod installation;

pub mod plist;
