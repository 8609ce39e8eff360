//! What the Android benches share: a private real adb server on a free port, with its own
//! HOME, so a bench never touches the person's adb server or keys; and the quick mode CI runs.

mod measure;

#[allow(unused_imports)]
pub use measure::{HostCpu, quick, rounds};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A private adb server: started by [`PrivateAdb::start`], killed when dropped.
pub struct PrivateAdb {
    adb: PathBuf,
    home: tempfile::TempDir,
    /// The port it listens on.
    pub port: u16,
}

impl PrivateAdb {
    /// Starts `adb` as a server on a free loopback port with a fresh HOME.
    pub fn start(adb: &Path) -> PrivateAdb {
        let home = tempfile::tempdir().expect("a temporary HOME");
        let port = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
            listener.local_addr().expect("its address").port()
        };
        let server = PrivateAdb {
            adb: adb.to_owned(),
            home,
            port,
        };
        assert!(server.cmd(&["start-server"]).status.success());
        server
    }

    /// Runs `adb -P PORT ARGS…` against this server.
    pub fn cmd(&self, args: &[&str]) -> Output {
        Command::new(&self.adb)
            .arg("-P")
            .arg(self.port.to_string())
            .args(args)
            .env("HOME", self.home.path())
            .env("ANDROID_USER_HOME", self.home.path().join(".android"))
            .output()
            .expect("adb runs")
    }
}

impl Drop for PrivateAdb {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
    }
}
