//! The store contract's conformance suite on a real PostgreSQL: two stores on one database
//! stand for two servers; once with `LISTEN/NOTIFY`, once polling only.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use phonelogs_gateway::Store;
use phonelogs_gateway::store::conformance;
use phonelogs_store_pg::testing::TempPostgres;
use phonelogs_store_pg::{PgOptions, PgStore};

fn store(url: &str, notify: bool) -> Store {
    let options = PgOptions {
        notify,
        poll: Duration::from_millis(100),
        ..PgOptions::default()
    };
    Store::new(PgStore::connect(url, options).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_keeps_the_store_contract_with_and_without_notify() {
    let Some(pg) = TempPostgres::start() else {
        return;
    };
    pg.create_database("conformance");
    let url = pg.url("conformance", "sslmode=disable");
    assert_eq!(
        PgStore::migrate(&url).unwrap(),
        phonelogs_store_pg::SCHEMA_VERSION
    );
    let (a, b) = (store(&url, true), store(&url, true));
    conformance::run(&a, &b).await;
    let (a, b) = (store(&url, false), store(&url, false));
    conformance::run(&a, &b).await;
}
