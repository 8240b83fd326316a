//! Ctrl-C during a run: the core's default poll hook
//! ([`microjax::exec::ctx::set_default_poll`]), installed at import.
//!
//! At loop iterations, plan steps and matrix-product row blocks, at most
//! every [`POLL_INTERVAL`], a run re-attaches to Python on the thread that
//! called in (the GIL is released around large runs; taking it back there
//! cannot deadlock, since that thread holds no core lock while it runs a
//! program) and calls `PyErr_CheckSignals`, which runs Python's own signal
//! handlers. An exception they raise (`KeyboardInterrupt` for SIGINT) stops
//! the run with [`microjax::Error::Interrupted`] and is kept here until the
//! error is converted, on the same thread, back into that exception
//! ([`crate::to_pyerr`]). No process signal handler is installed: Python's
//! own records the signal. Threads of the kernel pool never call Python.

use pyo3::prelude::*;
use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;

/// The longest a run goes between two signal checks (plus the time of one
/// loop iteration, plan step or product row block).
pub(crate) const POLL_INTERVAL: Duration = Duration::from_millis(20);

thread_local! {
    /// The exception a signal handler raised during this thread's run.
    static PENDING: RefCell<Option<PyErr>> = const { RefCell::new(None) };
}

/// Runs Python's signal handlers; their exception becomes the run's error.
fn poll() -> microjax::Result<()> {
    if microjax::exec::pool::on_pool() {
        return Ok(());
    }
    match Python::try_attach(|py| py.check_signals()) {
        Some(Err(e)) => {
            PENDING.with(|p| *p.borrow_mut() = Some(e));
            Err(microjax::Error::Interrupted)
        }
        // Handled (or no signal pending), or the interpreter is shutting down.
        Some(Ok(())) | None => Ok(()),
    }
}

/// The exception that stopped this thread's last interrupted run.
pub(crate) fn take_pending() -> Option<PyErr> {
    PENDING.with(|p| p.borrow_mut().take())
}

/// Makes every run started from Python check for signals.
pub(crate) fn install() {
    // A second import in the same process finds the hook set already.
    let _ = microjax::exec::ctx::set_default_poll(Arc::new(poll), POLL_INTERVAL);
}
