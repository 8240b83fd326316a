//! `os.register_at_fork` handlers (`microjax_rs/_fork.py` registers them):
//! `fork_prepare` takes every global lock of the extension and of the core
//! in one fixed order just before `fork()`, `fork_release` releases them on
//! both sides after it. A fork while another thread is inside one of these
//! locks' short critical sections (a jit compile, a trace-cache update, a
//! buffer returned to the pool) then waits for it instead of copying the
//! lock held into a child that could never take it.
//!
//! The order: the jit trace cache, the staging source texts, the shared
//! avals, the grad program cache, the GPU plan cache, the hooks, then the
//! core's ([`microjax::exec::fork`]). A holder of one of them may take a
//! later one (dropping cached plans returns buffers to the pool), never an
//! earlier one. Taking never blocks while the GIL is held: where a lock is
//! busy everything taken is released, the GIL too for a moment (its holder
//! may need it to finish), and the whole set is tried again.

use microjax::exec::fork::{try_guard, Held};
use pyo3::prelude::*;
use std::cell::RefCell;
use std::sync::{RwLock, TryLockError};
use std::time::{Duration, Instant};

thread_local! {
    /// The locks `fork_prepare` took (held by the thread that forks).
    static HELD: RefCell<Option<Held>> = const { RefCell::new(None) };
}

/// How long `fork_prepare` keeps trying before it lets the fork go ahead
/// without the locks (as it would without these handlers).
const GIVE_UP: Duration = Duration::from_secs(10);

/// `l`'s write guard if no one holds it now.
pub(crate) fn try_write<T: 'static>(l: &'static RwLock<T>) -> Option<Box<dyn std::any::Any>> {
    match l.try_write() {
        Ok(g) => Some(Box::new(g)),
        Err(TryLockError::Poisoned(p)) => Some(Box::new(p.into_inner())),
        Err(TryLockError::WouldBlock) => None,
    }
}

/// Every lock, or none.
fn try_hold_all() -> Option<Held> {
    let mut held = Held::empty();
    held.push(crate::trace_cache::try_hold()?);
    held.push(crate::staging::try_hold()?);
    held.push(crate::aval::try_hold()?);
    held.push(crate::transforms::try_hold()?);
    held.push(crate::gpu::try_hold()?);
    held.push(crate::globals::try_hold()?);
    held.push(Box::new(microjax::exec::fork::try_hold_all()?));
    Some(held)
}

/// Takes the extension's and the core's global locks (an
/// `os.register_at_fork(before=...)` handler); returns whether it did
/// (after ten seconds of busy locks it gives up and the fork goes ahead).
#[pyfunction]
fn fork_prepare(py: Python<'_>) -> bool {
    let start = Instant::now();
    loop {
        if let Some(held) = try_hold_all() {
            HELD.with(|h| *h.borrow_mut() = Some(held));
            return true;
        }
        if start.elapsed() > GIVE_UP {
            return false;
        }
        py.detach(|| std::thread::sleep(Duration::from_micros(100)));
    }
}

/// Releases what `fork_prepare` took (the `after_in_parent` and
/// `after_in_child` handler; nothing when it took nothing).
#[pyfunction]
fn fork_release() -> bool {
    HELD.with(|h| h.borrow_mut().take()).is_some()
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(m; fork_prepare, fork_release);
    Ok(())
}

/// `m`'s guard if it is free now, boxed for [`Held`].
pub(crate) fn try_lock<T: 'static>(
    m: &'static std::sync::Mutex<T>,
) -> Option<Box<dyn std::any::Any>> {
    try_guard(m).map(|g| Box::new(g) as Box<dyn std::any::Any>)
}
