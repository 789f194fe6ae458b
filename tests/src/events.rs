//! A record of what a host reported to its event hook, for tests that assert
//! what the application was told (and what it was not).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use toolhost::{CallResult, Event, HostConfig, ServerStatus};

/// Every event a host reported, in order. Clones share one record.
///
/// ```no_run
/// use toolhost::{HostConfig, ToolHost};
/// use toolhost_tests::EventLog;
///
/// let events = EventLog::new();
/// let host = ToolHost::bind(events.hook(HostConfig::default().workers(2))).unwrap();
/// // … requests …
/// assert!(events.failures().is_empty());
/// ```
#[derive(Clone, Default)]
pub struct EventLog {
    events: Arc<Mutex<Vec<Event>>>,
}

impl EventLog {
    /// An empty record.
    pub fn new() -> EventLog {
        EventLog::default()
    }

    /// `config` with an event hook that appends every event to this record.
    pub fn hook(&self, config: HostConfig) -> HostConfig {
        let record = self.clone();
        config.on_event(move |event| record.lock().push(event.clone()))
    }

    /// Every event so far.
    pub fn all(&self) -> Vec<Event> {
        self.lock().clone()
    }

    /// What `pick` takes from each event so far, in order (the events it
    /// answers `None` for are left out).
    pub fn pick<T>(&self, pick: impl FnMut(&Event) -> Option<T>) -> Vec<T> {
        self.lock().iter().filter_map(pick).collect()
    }

    /// The details of the calls that finished as failed, in order.
    pub fn failures(&self) -> Vec<String> {
        self.pick(|event| match event {
            Event::CallFinished {
                outcome: CallResult::Failed { detail },
                ..
            } => Some(detail.clone()),
            _ => None,
        })
    }

    /// The states the layer of the bridged server `server` reported, in
    /// order.
    pub fn server_statuses(&self, server: &str) -> Vec<ServerStatus> {
        self.pick(|event| match event {
            Event::ServerStatus {
                server: named,
                status,
            } if named == server => Some(status.clone()),
            _ => None,
        })
    }

    // A test that panicked while holding the lock has already failed; the
    // record is still whole (each push is one step), so keep reading it.
    fn lock(&self) -> MutexGuard<'_, Vec<Event>> {
        self.events.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
