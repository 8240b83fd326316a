//! The executor's process-wide memory and compile state as seen from
//! Python: the structural compile cache (`exec::cache`) and the host
//! buffer pool (`array::pool`). Conversion only.

use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Sets the compile cache's capacity in entries (0 turns it off).
#[pyfunction]
fn set_compile_cache_size(entries: usize) {
    microjax::exec::cache::global().set_capacity(entries);
}

/// The compile cache's counters as a dict.
#[pyfunction]
fn compile_cache_stats(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let cache = microjax::exec::cache::global();
    let s = cache.stats();
    let d = PyDict::new(py);
    d.set_item("hits", s.hits)?;
    d.set_item("misses", s.misses)?;
    d.set_item("compiles", s.compiles)?;
    d.set_item("compile_failures", s.compile_failures)?;
    d.set_item("evictions", s.evictions)?;
    d.set_item("interpreted_runs", s.interpreted_runs)?;
    d.set_item("compiled_runs", s.compiled_runs)?;
    d.set_item("entries", s.entries)?;
    d.set_item("capacity", cache.capacity())?;
    Ok(d)
}

/// Drops every compile cache entry and zeroes its counters.
#[pyfunction]
fn compile_cache_clear() {
    microjax::exec::cache::global().clear();
}

/// Sets the most bytes the host buffer pool keeps (0 turns it off).
#[pyfunction]
fn set_buffer_pool_bytes(nbytes: usize) {
    microjax::array::pool::set_cap_bytes(nbytes);
}

/// The host buffer pool's counters as a dict.
#[pyfunction]
fn buffer_pool_stats(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let s = microjax::array::pool::stats();
    let d = PyDict::new(py);
    d.set_item("hits", s.hits)?;
    d.set_item("misses", s.misses)?;
    d.set_item("returned", s.returned)?;
    d.set_item("evicted", s.evicted)?;
    d.set_item("held_bytes", s.held_bytes)?;
    d.set_item("held_buffers", s.held_buffers)?;
    d.set_item("cap_bytes", s.cap_bytes)?;
    d.set_item("min_pooled_bytes", microjax::array::pool::MIN_POOLED_BYTES)?;
    Ok(d)
}

/// Frees what the host buffer pool holds and zeroes its counters.
#[pyfunction]
fn buffer_pool_clear() {
    microjax::array::pool::clear();
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(m; set_compile_cache_size, compile_cache_stats, compile_cache_clear,
        set_buffer_pool_bytes, buffer_pool_stats, buffer_pool_clear);
    Ok(())
}
