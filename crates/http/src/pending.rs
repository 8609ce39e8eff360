//! The connections that have not yet named a token of the file, oldest first, so that a full
//! pool makes room for a new client by closing the oldest of them (the review's F5): silent
//! connections, as many as there are slots, would otherwise hold every slot until hyper's header
//! read timeout, while a client with a token waits behind them. A connection that has named a
//! token is never evicted; a separate pool for silent connections is not used, since its few
//! slots would then block new clients instead.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

/// The connections not yet authenticated, by the order they were accepted in.
#[derive(Debug, Default)]
pub(super) struct Pending {
    inner: Mutex<Waiting>,
}

#[derive(Debug, Default)]
struct Waiting {
    next: u64,
    /// Each waiting connection's signal to close, by its number.
    by_age: BTreeMap<u64, Arc<Notify>>,
}

impl Pending {
    /// Enters a newly accepted connection, the youngest.
    pub(super) fn enter(self: &Arc<Self>) -> Entry {
        let evicted = Arc::new(Notify::new());
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let id = inner.next;
        inner.next += 1;
        inner.by_age.insert(id, evicted.clone());
        Entry {
            id,
            pending: self.clone(),
            evicted,
            authenticated: AtomicBool::new(false),
        }
    }

    /// Tells the oldest connection not yet authenticated to close; false when every connection
    /// has authenticated.
    pub(super) fn evict_oldest(&self) -> bool {
        let oldest = self
            .inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .by_age
            .pop_first();
        match oldest {
            Some((_, evicted)) => {
                // Stored if the connection is not waiting on it yet: it closes when it does.
                evicted.notify_one();
                true
            }
            None => false,
        }
    }

    fn leave(&self, id: u64) -> bool {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.by_age.remove(&id).is_some()
    }
}

/// One connection's place among the [`Pending`] ones, until it authenticates or ends.
#[derive(Debug)]
pub(super) struct Entry {
    id: u64,
    pending: Arc<Pending>,
    evicted: Arc<Notify>,
    authenticated: AtomicBool,
}

impl Entry {
    /// Marks the connection authenticated: never evicted from now on. False if it was evicted
    /// first (it is closing).
    pub(super) fn authenticate(&self) -> bool {
        if self.authenticated.load(Ordering::Acquire) {
            return true;
        }
        let left = self.pending.leave(self.id);
        if left {
            self.authenticated.store(true, Ordering::Release);
        }
        left
    }

    /// Resolves when the connection is evicted (never, once it has authenticated).
    pub(super) async fn evicted(&self) {
        self.evicted.notified().await;
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        self.pending.leave(self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_oldest_unauthenticated_connection_is_evicted_and_an_authenticated_one_never() {
        let pending = Arc::new(Pending::default());
        let first = pending.enter();
        let second = pending.enter();
        let third = pending.enter();
        assert!(first.authenticate());
        assert!(pending.evict_oldest());
        // The second is the oldest not authenticated: told to close, and it cannot authenticate.
        second.evicted().await;
        assert!(!second.authenticate());
        drop(third);
        assert!(
            !pending.evict_oldest(),
            "the first authenticated, the third ended"
        );
        assert!(
            first.authenticate(),
            "still authenticated on its next request"
        );
    }
}
