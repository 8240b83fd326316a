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
    dict_of!(py; "hits" => s.hits, "misses" => s.misses, "compiles" => s.compiles,
        "compile_failures" => s.compile_failures, "evictions" => s.evictions,
        "interpreted_runs" => s.interpreted_runs, "compiled_runs" => s.compiled_runs,
        "entries" => s.entries, "capacity" => cache.capacity())
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
    dict_of!(py; "hits" => s.hits, "misses" => s.misses, "returned" => s.returned,
        "evicted" => s.evicted, "held_bytes" => s.held_bytes, "held_buffers" => s.held_buffers,
        "cap_bytes" => s.cap_bytes, "min_pooled_bytes" => microjax::array::pool::MIN_POOLED_BYTES)
}

/// Frees what the host buffer pool holds and zeroes its counters.
#[pyfunction]
fn buffer_pool_clear() {
    microjax::array::pool::clear();
}

/// Live host memory counted by the extension's allocator (`array::live`):
/// bytes live now, the most live at once, and the process budget (`None`:
/// none) — JAX's `Device.memory_stats()` keys.
#[pyfunction]
fn live_memory_stats(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    use microjax::array::live;
    dict_of!(py; "bytes_in_use" => live::live_bytes(), "peak_bytes_in_use" => live::peak_live_bytes(),
        "bytes_limit" => live::max_live_bytes())
}

/// Starts a new peak of live bytes at the bytes live now.
#[pyfunction]
fn reset_peak_live_bytes() {
    microjax::array::live::reset_peak_live_bytes();
}

/// Sets the process budget of live bytes (`None` removes it).
#[pyfunction]
#[pyo3(signature = (nbytes))]
fn set_max_live_bytes(nbytes: Option<u64>) -> PyResult<()> {
    use crate::CoreResultExt;
    microjax::array::live::set_max_live_bytes(nbytes).py()
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(m; set_compile_cache_size, compile_cache_stats, compile_cache_clear,
        set_buffer_pool_bytes, buffer_pool_stats, buffer_pool_clear, live_memory_stats,
        reset_peak_live_bytes, set_max_live_bytes);
    Ok(())
}
