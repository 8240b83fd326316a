//! Fork safety of the core's global locks.
//!
//! `fork()` copies only the calling thread: a lock another thread held at
//! that moment stays locked in the child forever, and the child's first use
//! of it hangs. An embedder that forks (Python's `os.register_at_fork`
//! handlers, `pthread_atfork`) calls [`try_hold_all`] just before the fork
//! and drops the [`Held`] it returns on both sides after it: the child then
//! starts with every lock free and every structure in a consistent state
//! (no thread was inside a critical section when the copy was taken).
//!
//! The locks, in the fixed order they are taken: the structural compile
//! cache ([`super::cache::global`]), the host buffer pool
//! ([`crate::array::pool`]), the owned thread pool's slot ([`super::pool`]),
//! the dynamic primitives' name table ([`crate::prims::dynamic`]) and, with
//! the `cuda` feature, the GPU device registry. Each is held only for short
//! bookkeeping, never while compiling or running, and a holder never waits
//! on another of them except in this order (the compile cache drops plans,
//! which return buffers to the pool).
//!
//! [`try_hold_all`] never blocks: where some lock is busy it releases what
//! it took and returns `None`, so a caller holding another lock a busy
//! holder may wait on (Python's GIL) can release that, back off, and retry.

use std::any::Any;
use std::sync::{Mutex, MutexGuard, TryLockError};

/// The held locks (dropping it releases them, latest taken first).
pub struct Held(Vec<Box<dyn Any>>);

impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Held({} locks)", self.0.len())
    }
}

impl Held {
    /// No locks yet.
    pub fn empty() -> Held {
        Held(Vec::new())
    }

    /// Adds a lock the caller took (an embedder's own locks, held and
    /// released with the core's).
    pub fn push(&mut self, guard: Box<dyn Any>) {
        self.0.push(guard);
    }

    /// How many locks are held.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        while let Some(guard) = self.0.pop() {
            drop(guard);
        }
    }
}

/// `m`'s guard if it is free now (a poisoned lock is taken as it is: the
/// structures behind these locks are valid after a panic).
pub fn try_guard<T: 'static>(m: &'static Mutex<T>) -> Option<MutexGuard<'static, T>> {
    match m.try_lock() {
        Ok(g) => Some(g),
        Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}

/// Takes every global lock of the core in the order above, or none (see the
/// module docs).
pub fn try_hold_all() -> Option<Held> {
    let mut held = Held::empty();
    held.push(Box::new(super::cache::global().try_hold()?));
    held.push(Box::new(crate::array::pool::try_hold()?));
    held.push(Box::new(super::pool::try_hold()?));
    held.push(Box::new(crate::prims::dynamic::try_hold()?));
    #[cfg(feature = "cuda")]
    held.push(super::cuda::try_hold()?);
    Some(held)
}
