//! The connection string: what phonelogs reads from it beyond what `tokio-postgres` parses
//! (libpq's `sslmode=verify-ca|verify-full` and `sslrootcert`), the timeouts every connection
//! gets, and the store's name as people may see it (host, port and database: never a user or
//! a password).

use std::path::PathBuf;
use std::time::Duration;

use tokio_postgres::config::{Host, SslMode};

/// How long opening one connection may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long data sent on a connection may go unacknowledged before the kernel gives up on it
/// (`TCP_USER_TIMEOUT`): a cut network ends the connection within this rather than the
/// kernel's 15 minutes.
pub const TCP_USER_TIMEOUT: Duration = Duration::from_secs(10);

/// A connection string read: the client's configuration and phonelogs' TLS settings.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub config: tokio_postgres::Config,
    /// The CA certificates to trust (PEM), from `sslrootcert`; the system's when `None`.
    pub root_cert: Option<PathBuf>,
}

/// Why a connection string cannot be used. The message names the key at fault, never the
/// string (it may hold a password).
#[derive(Debug, thiserror::Error)]
#[error("the PostgreSQL connection string cannot be used: {0}")]
pub struct BadConnectionString(pub String);

/// A connection string as given (`--store`, `store`, `PHONELOGS_STORE`, a `store_file`'s text),
/// shown (`Debug`, `Display`) as the store's name only: host, port and database, never a user
/// or a password, so settings printed for debugging keep its secrets. [`ConnectionString::expose`]
/// gives the text itself, for connecting.
///
/// ```
/// let url: phonelogs_store_pg::ConnectionString =
///     "postgres://lab:s3cret@db.example:6543/phonelogs".parse().unwrap();
/// assert_eq!(url.to_string(), "PostgreSQL db.example:6543/phonelogs");
/// assert!(!format!("{url:?}").contains("s3cret"));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ConnectionString(String);

impl ConnectionString {
    /// The connection string `text`.
    pub fn new(text: impl Into<String>) -> ConnectionString {
        ConnectionString(text.into())
    }

    /// The text itself, secrets included: for connecting only, never for showing.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// What to tell the person when this string, holding a password, was given on the command
    /// line (`--store`), where every user of the machine can read it (`ps`, `/proc/<pid>/cmdline`);
    /// `None` when it holds none.
    ///
    /// ```
    /// use phonelogs_store_pg::ConnectionString;
    /// let with = ConnectionString::new("postgres://lab:s3cret@db.example/phonelogs");
    /// let warning = with.command_line_warning().unwrap();
    /// assert!(warning.contains("--store-file") && !warning.contains("s3cret"));
    /// assert!(ConnectionString::new("postgres://lab@db.example/phonelogs").command_line_warning().is_none());
    /// ```
    pub fn command_line_warning(&self) -> Option<String> {
        let target = parse(&self.0).ok()?;
        target.config.get_password()?;
        Some(format!(
            "--store gives the password of {self} on the command line, where every user of \
             this machine can read it (ps): put the connection string in a file only you can \
             read and pass --store-file, or set PHONELOGS_STORE (see docs/farms.md)"
        ))
    }
}

impl From<String> for ConnectionString {
    fn from(text: String) -> Self {
        ConnectionString(text)
    }
}

impl std::str::FromStr for ConnectionString {
    type Err = std::convert::Infallible;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(ConnectionString(text.to_owned()))
    }
}

impl std::fmt::Display for ConnectionString {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match parse(&self.0) {
            Ok(target) => f.write_str(&describe(&target.config)),
            Err(_) => f.write_str("PostgreSQL (a connection string that cannot be read)"),
        }
    }
}

impl std::fmt::Debug for ConnectionString {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ConnectionString")
            .field(&self.to_string())
            .finish()
    }
}

/// Reads `url` (`postgres://…` or libpq's `key=value` form). `sslmode` may be any of libpq's
/// `disable`, `prefer`, `require`, `verify-ca` and `verify-full`: whenever TLS is used, the
/// server's certificate is verified against `sslrootcert` (a PEM file) or the system's CAs, and
/// its name against the host, as `verify-full` does (libpq's `require` alone would not).
pub(crate) fn parse(url: &str) -> Result<Target, BadConnectionString> {
    let mut root_cert = None;
    let mut ssl = None;
    let url_form = url.starts_with("postgres://") || url.starts_with("postgresql://");
    let (kept, params) = if url_form {
        let (base, query) = url.split_once('?').unwrap_or((url, ""));
        let mut kept = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            match key {
                "sslrootcert" => root_cert = Some(PathBuf::from(value)),
                "sslmode" => ssl = Some(value.to_owned()),
                _ => kept.push(pair.to_owned()),
            }
        }
        (base.to_owned(), kept.join("&"))
    } else {
        let mut kept = Vec::new();
        for pair in url.split_whitespace() {
            match pair.split_once('=') {
                Some(("sslrootcert", value)) => root_cert = Some(PathBuf::from(value)),
                Some(("sslmode", value)) => ssl = Some(value.to_owned()),
                _ => kept.push(pair.to_owned()),
            }
        }
        (kept.join(" "), String::new())
    };
    let text = match (url_form, params.is_empty()) {
        (true, false) => format!("{kept}?{params}"),
        _ => kept,
    };
    let mut config: tokio_postgres::Config = text.parse().map_err(|error| {
        BadConnectionString(format!("{error} (see docs/farms.md for its form)"))
    })?;
    let mode = match ssl.as_deref() {
        None | Some("prefer") => SslMode::Prefer,
        Some("disable") => SslMode::Disable,
        Some("require" | "verify-ca" | "verify-full") => SslMode::Require,
        Some(other) => {
            return Err(BadConnectionString(format!(
                "sslmode={other} is not one of disable, prefer, require, verify-ca, verify-full"
            )));
        }
    };
    config
        .ssl_mode(mode)
        .connect_timeout(CONNECT_TIMEOUT)
        .tcp_user_timeout(TCP_USER_TIMEOUT)
        .keepalives(true)
        .keepalives_idle(Duration::from_secs(5))
        .keepalives_interval(Duration::from_secs(2))
        .keepalives_retries(3)
        .application_name("phonelogs");
    if config.get_hosts().is_empty() {
        return Err(BadConnectionString("it names no host".into()));
    }
    Ok(Target { config, root_cert })
}

/// The store as people may see it: `PostgreSQL host:port/database` (never a user or a
/// password).
pub(crate) fn describe(config: &tokio_postgres::Config) -> String {
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, host)| {
            let port = config
                .get_ports()
                .get(i)
                .or_else(|| config.get_ports().first())
                .copied()
                .unwrap_or(5432);
            match host {
                Host::Tcp(name) => format!("{name}:{port}"),
                #[cfg(unix)]
                Host::Unix(path) => format!("{}:{port}", path.display()),
            }
        })
        .collect();
    let db = config
        .get_dbname()
        .or(config.get_user())
        .unwrap_or("postgres");
    format!("PostgreSQL {}/{db}", hosts.join(","))
}

/// Whether `text` names a PostgreSQL store rather than an SQLite state directory.
pub fn is_postgres(text: &str) -> bool {
    text.starts_with("postgres://") || text.starts_with("postgresql://")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_store_is_named_without_its_secrets() {
        let target =
            parse("postgres://lab:s3cret@db.example:6543/phonelogs?sslmode=verify-full").unwrap();
        let shown = describe(&target.config);
        assert_eq!(shown, "PostgreSQL db.example:6543/phonelogs");
        assert!(!shown.contains("s3cret") && !shown.contains("lab"));
        assert_eq!(target.config.get_ssl_mode(), SslMode::Require);
    }

    #[test]
    fn libpq_keys_are_read_and_a_bad_string_is_refused_without_echoing_it() {
        let target = parse(
            "host=127.0.0.1 port=5433 dbname=pl user=u password=hunter2 sslmode=require sslrootcert=/ca.pem",
        )
        .unwrap();
        assert_eq!(target.root_cert, Some(PathBuf::from("/ca.pem")));
        assert_eq!(describe(&target.config), "PostgreSQL 127.0.0.1:5433/pl");
        let refused = parse("postgres://u:hunter2@h/db?sslmode=sometimes").unwrap_err();
        assert!(!refused.to_string().contains("hunter2"), "{refused}");
        let refused = parse("postgres://u:hunter2@h/db?nonsense=1").unwrap_err();
        assert!(!refused.to_string().contains("hunter2"), "{refused}");
    }

    #[test]
    fn a_connection_string_shows_its_store_and_never_its_secrets() {
        for (text, shown) in [
            (
                "postgres://lab:hunter2@db.example:6543/pl?sslmode=verify-full",
                "PostgreSQL db.example:6543/pl",
            ),
            (
                "host=db.example port=6543 dbname=pl user=lab password=hunter2",
                "PostgreSQL db.example:6543/pl",
            ),
            // Not readable: nothing of it is shown.
            (
                "postgres://lab:hunter2@db.example/pl?sslmode=sometimes",
                "PostgreSQL (a connection string that cannot be read)",
            ),
        ] {
            let url = ConnectionString::new(text);
            assert_eq!(url.to_string(), shown);
            let debug = format!("{url:?} {url:#?} {:?}", Some(url.clone()));
            assert!(debug.contains(shown), "{debug}");
            assert!(
                !debug.contains("hunter2") && !debug.contains("lab"),
                "{debug}"
            );
            assert_eq!(url.expose(), text);
        }
    }
}
