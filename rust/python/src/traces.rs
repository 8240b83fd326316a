//! `TraceBase`: the typed base class of the Python staging traces
//! (`core.StagingTrace` and its subclasses). It holds what the Rust paths
//! read of a trace — its builder, the values it captured, the AD records
//! (`known`, `eqn_of`) and its flags — as typed fields, so Rust reads them
//! without attribute lookups by name. Everything else a trace keeps lives in
//! the Python subclass's `__dict__`.

use crate::ir::PyBuilder;
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use pyo3::PyTraverseError;
use std::sync::atomic::{AtomicBool, Ordering};

#[pyclass(frozen, subclass, name = "TraceBase", module = "microjax_rs._core")]
pub(crate) struct TraceBase {
    /// The jaxpr under construction.
    #[pyo3(get)]
    pub(crate) builder: Py<PyBuilder>,
    /// Values captured from enclosing traces (or device arrays), in the
    /// order of their input variables.
    #[pyo3(get)]
    pub(crate) captures: Py<PyList>,
    /// AD traces: var id -> the value one level down.
    #[pyo3(get)]
    pub(crate) known: Py<PyDict>,
    /// AD traces: out var id -> `(prim, params, args, out var ids)`.
    #[pyo3(get)]
    pub(crate) eqn_of: Py<PyDict>,
    alive: AtomicBool,
    record_source: AtomicBool,
    native: AtomicBool,
}

impl TraceBase {
    pub(crate) fn set_alive(&self, alive: bool) {
        self.alive.store(alive, Ordering::Relaxed);
    }

    /// Whether Rust stages float arithmetic on this trace's tracers while
    /// it is the innermost trace (`tracer.rs`).
    pub(crate) fn is_native(&self) -> bool {
        self.native.load(Ordering::Relaxed)
    }
}

#[pymethods]
impl TraceBase {
    /// A live trace with a fresh builder; the arguments are the subclass's
    /// `__init__`'s.
    #[new]
    #[pyo3(signature = (*args, **kwargs))]
    fn py_new(
        py: Python<'_>, args: &Bound<'_, PyTuple>, kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<TraceBase> {
        let _ = (args, kwargs);
        Ok(TraceBase {
            builder: Py::new(py, PyBuilder::new())?,
            captures: PyList::empty(py).unbind(),
            known: PyDict::new(py).unbind(),
            eqn_of: PyDict::new(py).unbind(),
            alive: AtomicBool::new(true),
            record_source: AtomicBool::new(true),
            native: AtomicBool::new(false),
        })
    }

    /// False once the trace has ended (its tracers then escaped).
    #[getter]
    fn alive(&self) -> bool {
        self.alive.load(Ordering::Relaxed)
    }

    #[setter(alive)]
    fn py_set_alive(&self, alive: bool) {
        self.set_alive(alive);
    }

    /// Whether staged equations record the user's source line.
    #[getter]
    pub(crate) fn record_source(&self) -> bool {
        self.record_source.load(Ordering::Relaxed)
    }

    #[setter(record_source)]
    pub(crate) fn set_record_source(&self, record: bool) {
        self.record_source.store(record, Ordering::Relaxed);
    }

    /// Rust stages float arithmetic on this trace's tracers natively while
    /// it is the innermost trace (only for traces that record no source).
    #[getter]
    fn native(&self) -> bool {
        self.is_native()
    }

    #[setter(native)]
    pub(crate) fn set_native(&self, native: bool) {
        self.native.store(native, Ordering::Relaxed);
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.builder)?;
        visit.call(&self.captures)?;
        visit.call(&self.known)?;
        visit.call(&self.eqn_of)
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<TraceBase>()
}
