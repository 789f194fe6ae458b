//! The one lock helper every module uses.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks a mutex, recovering the data if a thread panicked while holding it.
/// Every critical section in the crate leaves its data consistent at each
/// step, so a poisoned lock carries no broken invariant.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
