//! Communicators for the collectives between processes (`exec::mpi` of the
//! core): the Python side (`_src/distributed.py`) passes the MPI library
//! mpi4py loaded and its communicators' handles.
//!
//! `unsafe` here is registering a handle: the core trusts it to be a live
//! communicator of that library. Only `_src/distributed.py` calls this, with
//! `mpi4py`'s own `Comm.handle` values after MPI is initialized.

#![allow(unsafe_code)]

use crate::CoreResultExt;
use pyo3::prelude::*;

/// Registers an mpi4py communicator (`comm.handle`) of the MPI library at
/// `library`; returns the id the `process_*` primitives take as `comm`.
#[pyfunction]
pub(crate) fn register_mpi_communicator(library: &str, handle: usize) -> PyResult<u32> {
    // SAFETY: `handle` is `Comm.handle` of an mpi4py communicator of the
    // initialized MPI library at `library` (the only caller's contract);
    // communicators are freed only at exit, after the last collective.
    unsafe { microjax::exec::mpi::register_communicator(library, handle) }.py()
}

/// Turns the mismatch check before every collective between processes on
/// or off.
#[pyfunction]
pub(crate) fn set_collective_checks(on: bool) {
    microjax::exec::mpi::set_checks(on);
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(m; register_mpi_communicator, set_collective_checks);
    Ok(())
}
