//! A real PostgreSQL for tests (the `testing` feature): Debian's server binaries
//! (`/usr/lib/postgresql/*/bin`, or `PHONELOGS_PG_BIN`) started in a temporary directory on a
//! free loopback port, as an unprivileged user when the tests run as root (`initdb` refuses
//! root; CI runs as root), and stopped by its PID when dropped.
//!
//! Where the binaries are missing, [`TempPostgres::start`] prints why and gives `None`, so the
//! test skips; with `PHONELOGS_REQUIRE_POSTGRES=1` (CI) that is a failure instead.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The variable that makes a missing PostgreSQL a failure.
pub const REQUIRE: &str = "PHONELOGS_REQUIRE_POSTGRES";

/// A PostgreSQL server of a test's own.
#[derive(Debug)]
pub struct TempPostgres {
    bin: PathBuf,
    dir: tempfile::TempDir,
    pub port: u16,
    tls: bool,
}

/// Where the server binaries are, or why there are none.
fn binaries() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("PHONELOGS_PG_BIN") {
        return Ok(PathBuf::from(dir));
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map_err(|_| "no /usr/lib/postgresql: install Debian's `postgresql` package".to_owned())?
        .filter_map(Result::ok)
        .map(|entry| entry.path().join("bin"))
        .filter(|bin| bin.join("initdb").is_file() && bin.join("pg_ctl").is_file())
        .collect();
    found.sort();
    found
        .pop()
        .ok_or_else(|| "no initdb under /usr/lib/postgresql/*/bin: install `postgresql`".into())
}

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// Runs a server binary, as `postgres` when this is root.
fn run(bin: &Path, tool: &str, args: &[&str]) -> Output {
    let program = bin.join(tool);
    let output = if is_root() {
        Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(&program)
            .args(args)
            .output()
    } else {
        Command::new(&program).args(args).output()
    };
    output.unwrap_or_else(|error| panic!("{} cannot run: {error}", program.display()))
}

fn checked(output: Output, what: &str) {
    assert!(
        output.status.success(),
        "{what} failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("its address").port()
}

impl TempPostgres {
    /// A new server, or `None` (with the reason printed) where PostgreSQL is not installed and
    /// [`REQUIRE`] is unset.
    pub fn start() -> Option<TempPostgres> {
        Self::start_with(None)
    }

    /// A new server that speaks TLS with `cert` and `key` (PEM) as well as plain TCP.
    pub fn start_tls(cert: &Path, key: &Path) -> Option<TempPostgres> {
        Self::start_with(Some((cert, key)))
    }

    fn start_with(tls: Option<(&Path, &Path)>) -> Option<TempPostgres> {
        let bin = match binaries() {
            Ok(bin) => bin,
            Err(why) => {
                assert!(
                    std::env::var_os(REQUIRE).is_none_or(|v| v != "1"),
                    "{REQUIRE}=1 and PostgreSQL is missing: {why}"
                );
                eprintln!("skipped: {why} ({REQUIRE}=1 makes this a failure)");
                return None;
            }
        };
        let dir = tempfile::Builder::new()
            .prefix("phonelogs-pg")
            .tempdir()
            .expect("a temporary directory");
        if is_root() {
            checked(
                Command::new("chown")
                    .args(["-R", "postgres:postgres"])
                    .arg(dir.path())
                    .output()
                    .expect("chown runs"),
                "chown",
            );
        }
        let data = dir.path().join("data");
        let data_text = data.to_str().expect("a UTF-8 path");
        checked(
            run(
                &bin,
                "initdb",
                &[
                    "-D",
                    data_text,
                    "-A",
                    "trust",
                    "-U",
                    "postgres",
                    "-E",
                    "UTF8",
                    "--no-sync",
                ],
            ),
            "initdb",
        );
        if let Some((cert, key)) = tls {
            for (from, name) in [(cert, "server.crt"), (key, "server.key")] {
                let to = data.join(name);
                std::fs::copy(from, &to).expect("the TLS file copies");
                use std::os::unix::fs::PermissionsExt as _;
                std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o600)).unwrap();
                if is_root() {
                    checked(
                        Command::new("chown")
                            .args(["postgres:postgres"])
                            .arg(&to)
                            .output()
                            .unwrap(),
                        "chown",
                    );
                }
            }
        }
        let server = TempPostgres {
            bin,
            port: free_port(),
            dir,
            tls: tls.is_some(),
        };
        server.pg_ctl_start();
        Some(server)
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn pg_ctl_start(&self) {
        let data = self.data();
        let mut options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200",
            self.port,
            self.dir.path().display()
        );
        if self.tls {
            options.push_str(" -c ssl=on");
        }
        let log = self.dir.path().join("log");
        checked(
            run(
                &self.bin,
                "pg_ctl",
                &[
                    "-D",
                    data.to_str().unwrap(),
                    "-o",
                    &options,
                    "-l",
                    log.to_str().unwrap(),
                    "-w",
                    "-t",
                    "60",
                    "start",
                ],
            ),
            "pg_ctl start",
        );
    }

    /// The server's process id, from its `postmaster.pid`.
    pub fn pid(&self) -> Option<i32> {
        let text = std::fs::read_to_string(self.data().join("postmaster.pid")).ok()?;
        text.lines().next()?.trim().parse().ok()
    }

    /// A connection string for `database` (made when missing) as the superuser, with extra
    /// `params` (`sslmode=…`).
    pub fn url(&self, database: &str, params: &str) -> String {
        let sep = if params.is_empty() { "" } else { "?" };
        format!(
            "postgres://postgres@127.0.0.1:{}/{database}{sep}{params}",
            self.port
        )
    }

    /// Makes a database of a test's own.
    pub fn create_database(&self, name: &str) {
        let port = self.port.to_string();
        checked(
            run(
                &self.bin,
                "createdb",
                &["-h", "127.0.0.1", "-p", &port, "-U", "postgres", name],
            ),
            "createdb",
        );
    }

    /// Runs `sql` with `psql` against `database` and gives what it printed (unaligned,
    /// tuples only).
    pub fn psql(&self, database: &str, sql: &str) -> String {
        let port = self.port.to_string();
        let output = run(
            &self.bin,
            "psql",
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &port,
                "-U",
                "postgres",
                "-d",
                database,
                "-X",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-c",
                sql,
            ],
        );
        checked(output.clone(), "psql");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Everything `database` holds, as `pg_dump` writes it (the privacy canary reads it).
    pub fn dump(&self, database: &str) -> String {
        let port = self.port.to_string();
        let output = run(
            &self.bin,
            "pg_dump",
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &port,
                "-U",
                "postgres",
                "--data-only",
                database,
            ],
        );
        checked(output.clone(), "pg_dump");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Stops the server (fast: open connections are ended) and starts it again on its port.
    pub fn restart(&self) {
        self.stop();
        self.pg_ctl_start();
    }

    /// Stops the server, waiting until it has.
    pub fn stop(&self) {
        let data = self.data();
        let output = run(
            &self.bin,
            "pg_ctl",
            &["-D", data.to_str().unwrap(), "-m", "fast", "-w", "stop"],
        );
        if !output.status.success() {
            // By its PID, as a last resort.
            if let Some(pid) = self.pid() {
                let _ = Command::new("kill").arg(pid.to_string()).status();
            }
        }
    }
}

impl Drop for TempPostgres {
    fn drop(&mut self) {
        if let Some(pid) = self.pid() {
            let data = self.data();
            let stopped = run(
                &self.bin,
                "pg_ctl",
                &[
                    "-D",
                    data.to_str().unwrap(),
                    "-m",
                    "immediate",
                    "-w",
                    "stop",
                ],
            );
            if !stopped.status.success() {
                let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            }
        }
    }
}

/// A self-signed CA and a server certificate it signed for `127.0.0.1` and `localhost`, made
/// with the `openssl` command: (CA certificate, server certificate, server key).
pub fn make_certificates(dir: &Path) -> Option<(PathBuf, PathBuf, PathBuf)> {
    let openssl = |args: &[&str]| Command::new("openssl").args(args).current_dir(dir).output();
    let ca = openssl(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=phonelogs test CA",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
    ]);
    match ca {
        Ok(output) if output.status.success() => {}
        other => {
            eprintln!("skipped: the openssl command cannot make a test CA: {other:?}");
            return None;
        }
    }
    std::fs::write(
        dir.join("san.ext"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n",
    )
    .ok()?;
    for args in [
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
        ][..],
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "san.ext",
            "-out",
            "server.crt",
        ][..],
    ] {
        checked(openssl(args).expect("openssl runs"), "openssl");
    }
    Some((
        dir.join("ca.crt"),
        dir.join("server.crt"),
        dir.join("server.key"),
    ))
}
