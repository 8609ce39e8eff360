//! The warnings the code under test logs, as events a test can wait on (`tests/faults.rs`): a
//! process-wide `tracing` subscriber that sends each warning's fields, as text, to every
//! watcher.

#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::fmt::Write as _;
use std::sync::OnceLock;

use tokio::sync::broadcast;
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt as _};

static WARNINGS: OnceLock<broadcast::Sender<String>> = OnceLock::new();

/// The warnings logged from now on, by any thread of the process.
pub fn watch() -> broadcast::Receiver<String> {
    WARNINGS
        .get_or_init(|| {
            let (sender, _) = broadcast::channel(1024);
            let subscriber = tracing_subscriber::registry().with(Capture(sender.clone()));
            tracing::subscriber::set_global_default(subscriber)
                .expect("no other subscriber in this test binary");
            sender
        })
        .subscribe()
}

/// Waits for a warning whose text holds every one of `words`.
pub async fn logged(warnings: &mut broadcast::Receiver<String>, words: &[&str]) -> String {
    loop {
        match warnings.recv().await {
            Ok(text) if words.iter().all(|word| text.contains(word)) => return text,
            Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
            Err(broadcast::error::RecvError::Closed) => panic!("the warnings stopped"),
        }
    }
}

struct Capture(broadcast::Sender<String>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Capture {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        // ERROR and WARN (the more verbose a level, the greater it is).
        if *event.metadata().level() > tracing::Level::WARN {
            return;
        }
        let mut text = String::new();
        event.record(&mut Fields(&mut text));
        let _ = self.0.send(text);
    }
}

struct Fields<'a>(&'a mut String);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let _ = write!(self.0, "{}={value:?} ", field.name());
    }
}
