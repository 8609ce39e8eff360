//! # phonelogs-store-pg
//!
//! The PostgreSQL backend of the phonelogs state store ([`phonelogs_gateway::StoreBackend`]):
//! one store of questions, rules, blocked and unmasked apps and history for many
//! `phonelogs-mcp` servers and `phonelogs` commands at once (see `docs/farms.md`).
//!
//! - Exactly one answer per question, whoever answers on whichever server: the answer is an
//!   `UPDATE … WHERE state = 'pending' RETURNING`, in one transaction with its grant, its rule
//!   and its history step.
//! - A call waiting for an answer ([`phonelogs_gateway::StoreBackend::wait_answer`]) is woken
//!   by `LISTEN/NOTIFY` when the person answers on any server, and reads the approval again
//!   every [`PgOptions::poll`] as the backstop (a notification sent while the listening
//!   connection is down is lost).
//! - Every operation has a deadline ([`PgOptions::op_timeout`]); a store that does not answer
//!   is an error naming it ([`phonelogs_gateway::Error::Store`]: host, port and database, never
//!   a password), so a read that needs a decision fails closed.
//! - TLS through rustls: `sslmode` and `sslrootcert` as libpq reads them (see [`PgStore::connect`]).
//! - Versioned schema migrations ([`PgStore::migrate`], `phonelogs store migrate`); a server
//!   refuses a schema newer than it knows; [`inspect`] reads the version a store has (the doctor).
//! - A connection string is kept as a [`ConnectionString`], whose `Debug` and `Display` show the
//!   store's host, port and database only, so settings printed never show its password.
//!
//! ```no_run
//! use phonelogs_gateway::{Gateway, Store};
//! use phonelogs_store_pg::{PgOptions, PgStore};
//!
//! # fn main() -> Result<(), phonelogs_gateway::Error> {
//! let url = "postgres://phonelogs@db.lab.example/phonelogs?sslmode=verify-full";
//! PgStore::migrate(url)?;
//! let store = PgStore::connect(url, PgOptions::default())?;
//! let gateway = Gateway::builder().store(Store::new(store)).build()?;
//! # let _ = gateway;
//! # Ok(())
//! # }
//! ```

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use phonelogs_gateway::Error;
use phonelogs_gateway::store::blocking;

mod backend;
mod conn;
mod listen;
mod ops;
mod schema;
#[cfg(feature = "testing")]
pub mod testing;
mod tls;

pub use phonelogs_secret_file as secret_file;

pub use conn::{
    BadConnectionString, CONNECT_TIMEOUT, ConnectionString, TCP_USER_TIMEOUT, is_postgres,
};
pub use schema::SCHEMA_VERSION;

/// How a [`PgStore`] works.
#[derive(Debug, Clone)]
pub struct PgOptions {
    /// Apply the migrations the database lacks when connecting (`phonelogs-mcp --migrate`);
    /// otherwise a database without this build's schema is refused with the command to run.
    pub migrate: bool,
    /// Wake waiting calls by `LISTEN/NOTIFY` (on by default); without it they poll only.
    pub notify: bool,
    /// How often a waiting call reads its approval again (the backstop for a lost notification,
    /// and the only way without [`PgOptions::notify`]).
    pub poll: Duration,
    /// The most one operation may take, waiting for a connection included.
    pub op_timeout: Duration,
    /// The most connections the pool opens.
    pub pool_size: usize,
}

impl Default for PgOptions {
    fn default() -> Self {
        PgOptions {
            migrate: false,
            notify: true,
            poll: Duration::from_secs(1),
            op_timeout: Duration::from_secs(10),
            pool_size: 8,
        }
    }
}

/// What went wrong in one operation, before it is told as a [`phonelogs_gateway::Error`].
#[derive(Debug)]
pub(crate) enum Failure {
    /// The database or the connection failed.
    Db(String),
    /// The operation took longer than its deadline.
    Timeout(Duration),
    /// The database is not one this build can use (its schema).
    Refused(String),
    /// The contract's own error (an unknown approval, one answered already…).
    Contract(Error),
}

impl From<tokio_postgres::Error> for Failure {
    fn from(error: tokio_postgres::Error) -> Self {
        Failure::Db(explain(&error))
    }
}

impl From<deadpool_postgres::PoolError> for Failure {
    fn from(error: deadpool_postgres::PoolError) -> Self {
        match error {
            deadpool_postgres::PoolError::Backend(error) => Failure::Db(explain(&error)),
            other => Failure::Db(format!("no connection: {other}")),
        }
    }
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Failure::Contract(error)
    }
}

/// A client error with its causes, which `tokio-postgres` keeps out of its own message.
fn explain(error: &tokio_postgres::Error) -> String {
    if let Some(db) = error.as_db_error() {
        return format!("{} ({})", db.message(), db.code().code());
    }
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// The runtime the store's connections live on, its own so that any caller (no runtime, a
/// current-thread runtime, a multi-threaded one) can use the store; shut down without waiting
/// when the last handle goes.
#[derive(Debug)]
struct Runtime(Option<tokio::runtime::Runtime>);

impl Runtime {
    fn handle(&self) -> Option<&tokio::runtime::Handle> {
        self.0.as_ref().map(tokio::runtime::Runtime::handle)
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

/// The PostgreSQL store. Cloning shares its pool, its listener and its runtime.
#[derive(Debug, Clone)]
pub struct PgStore {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    name: String,
    pool: Pool,
    options: PgOptions,
    wakeups: Option<listen::Wakeups>,
    // Last: dropped after the pool and the listener that run on it.
    runtime: Runtime,
}

impl PgStore {
    /// Connects to the database `url` names (`postgres://user@host:port/db?sslmode=…`, or
    /// libpq's `key=value` form) and checks its schema (or migrates it, with
    /// [`PgOptions::migrate`]). `sslmode` is libpq's: `disable`, `prefer` (the default: TLS
    /// when the server offers it), `require`, `verify-ca` or `verify-full`; whenever TLS is
    /// used the server's certificate is verified against `sslrootcert` (a PEM file) or the
    /// system's CAs, and its name against the host. An error names the store, never the
    /// password.
    pub fn connect(url: &str, options: PgOptions) -> Result<PgStore, Error> {
        let store = PgStore::build(url, options)?;
        let migrate = store.inner.options.migrate;
        store.run(move |pool| async move {
            let mut client = pool.get().await?;
            if migrate {
                schema::migrate(&mut client).await?;
            }
            schema::check(&client).await
        })?;
        Ok(store)
    }

    /// The store `url` names, its pool and listener made, its database not yet reached.
    fn build(url: &str, options: PgOptions) -> Result<PgStore, Error> {
        let target = conn::parse(url).map_err(|error| store_error("PostgreSQL", error.0))?;
        let name = conn::describe(&target.config);
        let tls = tls::connector(target.root_cert.as_deref())
            .map_err(|message| store_error(&name, message))?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("phonelogs-pg")
            .enable_all()
            .build()
            .map_err(|error| store_error(&name, format!("no runtime: {error}")))?;
        let manager = Manager::from_config(
            target.config.clone(),
            tls.clone(),
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let timeout = Some(options.op_timeout);
        let pool = Pool::builder(manager)
            .max_size(options.pool_size.max(1))
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(timeout)
            .create_timeout(timeout)
            .recycle_timeout(timeout)
            .build()
            .map_err(|error| store_error(&name, format!("no pool: {error}")))?;
        let wakeups = options.notify.then(|| {
            let _entered = runtime.enter();
            listen::Wakeups::start(target.config.clone(), tls)
        });
        Ok(PgStore {
            inner: Arc::new(Inner {
                name,
                pool,
                options,
                wakeups,
                runtime: Runtime(Some(runtime)),
            }),
        })
    }

    /// Applies the migrations the database `url` names lacks (`phonelogs store migrate`); the
    /// schema version it has then. Two servers migrating at once apply each migration once.
    pub fn migrate(url: &str) -> Result<i64, Error> {
        let options = PgOptions {
            migrate: true,
            notify: false,
            pool_size: 1,
            ..PgOptions::default()
        };
        PgStore::connect(url, options)?;
        Ok(SCHEMA_VERSION)
    }

    /// Runs `f` on the store's runtime within [`PgOptions::op_timeout`], waiting for it
    /// without stalling a multi-threaded runtime's other tasks ([`blocking`]).
    fn run<T, F, Fut>(&self, f: F) -> Result<T, Error>
    where
        F: FnOnce(Pool) -> Fut + Send + 'static,
        Fut: Future<Output = Result<T, Failure>> + Send + 'static,
        T: Send + 'static,
    {
        let (send, receive) = std::sync::mpsc::sync_channel(1);
        let Some(handle) = self.inner.runtime.handle() else {
            return Err(self.error(Failure::Db("the store was shut down".into())));
        };
        let pool = self.inner.pool.clone();
        let limit = self.inner.options.op_timeout;
        handle.spawn(async move {
            let result = tokio::time::timeout(limit, f(pool))
                .await
                .unwrap_or(Err(Failure::Timeout(limit)));
            let _ = send.send(result);
        });
        let result = blocking(|| receive.recv())
            .unwrap_or_else(|_| Err(Failure::Db("the store's runtime stopped".into())));
        result.map_err(|failure| self.error(failure))
    }

    /// [`PgStore::run`] for an async caller: it awaits rather than blocks.
    async fn call<T, F, Fut>(&self, f: F) -> Result<T, Error>
    where
        F: FnOnce(Pool) -> Fut + Send + 'static,
        Fut: Future<Output = Result<T, Failure>> + Send + 'static,
        T: Send + 'static,
    {
        let Some(handle) = self.inner.runtime.handle() else {
            return Err(self.error(Failure::Db("the store was shut down".into())));
        };
        let pool = self.inner.pool.clone();
        let limit = self.inner.options.op_timeout;
        let task = handle.spawn(async move {
            tokio::time::timeout(limit, f(pool))
                .await
                .unwrap_or(Err(Failure::Timeout(limit)))
        });
        let result = task
            .await
            .unwrap_or_else(|_| Err(Failure::Db("the store's runtime stopped".into())));
        result.map_err(|failure| self.error(failure))
    }

    fn error(&self, failure: Failure) -> Error {
        let message = match failure {
            Failure::Contract(error) => return error,
            Failure::Db(message) => message,
            Failure::Refused(message) => message,
            Failure::Timeout(limit) => format!(
                "it did not answer within {} s: is it running, and reachable from here?",
                limit.as_secs_f32()
            ),
        };
        store_error(&self.inner.name, message)
    }
}

/// The variable that names the shared store (`--store`).
pub const STORE_ENV: &str = "PHONELOGS_STORE";

/// The connection string a binary was given: `url` (the flag, else the config file's `store`,
/// else [`STORE_ENV`]) as it is, else the one kept in `file` (`--store-file`, `store_file`),
/// read under the secret-file rule ([`secret_file`]). `None`: the SQLite store.
pub fn chosen(
    url: Option<ConnectionString>,
    file: Option<&std::path::Path>,
) -> Result<Option<ConnectionString>, Error> {
    if let Some(url) = url.filter(|u| !u.expose().trim().is_empty()) {
        return Ok(Some(url));
    }
    let Some(file) = file else {
        return Ok(None);
    };
    let text = secret_file::read(file, "the store file")
        .map_err(|refused| store_error("PostgreSQL", refused.to_string()))?;
    let url = text.trim();
    if url.is_empty() {
        return Err(store_error(
            "PostgreSQL",
            format!("the store file {} is empty", file.display()),
        ));
    }
    Ok(Some(ConnectionString::new(url)))
}

/// Opens the shared store `url` names as a [`phonelogs_gateway::Store`] (migrating it first
/// when `migrate`).
pub fn open(url: &ConnectionString, migrate: bool) -> Result<phonelogs_gateway::Store, Error> {
    let options = PgOptions {
        migrate,
        ..PgOptions::default()
    };
    Ok(phonelogs_gateway::Store::new(PgStore::connect(
        url.expose(),
        options,
    )?))
}

/// What `phonelogs doctor` shows of a shared store.
#[derive(Debug)]
pub struct Inspection {
    /// The store's name: host, port and database, never a user or a password.
    pub store: String,
    /// The schema version its database has (0: none yet), or why it cannot be read.
    pub schema: Result<i64, Error>,
}

/// Reaches the store `url` names and reads its schema version, whatever it is (a store this
/// build refuses included), within [`CONNECT_TIMEOUT`].
pub fn inspect(url: &ConnectionString) -> Inspection {
    let options = PgOptions {
        notify: false,
        pool_size: 1,
        op_timeout: CONNECT_TIMEOUT,
        ..PgOptions::default()
    };
    match PgStore::build(url.expose(), options) {
        Ok(store) => Inspection {
            store: store.inner.name.clone(),
            schema: store.run(|pool| async move {
                let client = pool.get().await?;
                schema::found(&**client).await
            }),
        },
        Err(error) => Inspection {
            store: url.to_string(),
            schema: Err(error),
        },
    }
}

fn store_error(name: &str, message: String) -> Error {
    Error::Store {
        store: name.to_owned(),
        message,
    }
}
