//! The store contract's conformance suite on the SQLite backend: two stores opened on one state
//! directory stand for two processes (the MCP server and `phonelogs`) sharing it.

#![allow(clippy::unwrap_used)]

use phonelogs_gateway::Store;
use phonelogs_gateway::store::conformance;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_keeps_the_store_contract() {
    let dir = tempfile::tempdir().unwrap();
    let a = Store::open(dir.path()).unwrap();
    let b = Store::open(dir.path()).unwrap();
    conformance::run(&a, &b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_in_memory_store_keeps_the_store_contract() {
    let store = Store::in_memory().unwrap();
    conformance::run(&store, &store.clone()).await;
}
