//! `TraceBase`: the typed base class of the Python staging traces
//! (`core.StagingTrace` and its subclasses). It holds what the Rust paths
//! read of a trace — its builder, the values it captured, the AD records
//! (`known`, `eqn_of`) and its flags — as typed fields, so Rust reads them
//! without attribute lookups by name. Everything else a trace keeps lives in
//! the Python subclass's `__dict__`.
//!
//! `trace_ad` is the one implementation of tracing a function in AD mode
//! (`interpreters.ad.trace_ad` and the eager `grad` path both run it).

use crate::array::ArrayImpl;
use crate::ir::{PyBuilder, PyClosedJaxpr};
use crate::tracer::Tracer;
use crate::CoreResultExt;
use microjax::{Atom, ClosedJaxpr};
use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use pyo3::PyTraverseError;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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
    /// AD traces: out var id -> the `StagedEqn` that made it.
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

    /// Marks an eager-level trace whose program is run at once and never
    /// handed out (`grad`'s, `ad.trace_ad(private=True)`'s): its equations
    /// record no source lines (finding the user's frame is a good part of
    /// staging one) and Rust stages float arithmetic on its tracers.
    pub(crate) fn make_private(&self) {
        self.set_record_source(false);
        self.set_native(true);
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.builder)?;
        visit.call(&self.captures)?;
        visit.call(&self.known)?;
        visit.call(&self.eqn_of)
    }
}

/// A trace made the innermost one; leaving it (on every exit, errors
/// included) restores the trace stack and marks the trace dead.
struct Entered<'a, 'py> {
    trace: &'a Bound<'py, TraceBase>,
    stack: &'a Bound<'py, PyList>,
}

impl<'a, 'py> Entered<'a, 'py> {
    fn enter(trace: &'a Bound<'py, TraceBase>, stack: &'a Bound<'py, PyList>) -> PyResult<Self> {
        stack.append(trace)?;
        crate::globals::trace_enter(Some(trace.as_any()));
        Ok(Entered { trace, stack })
    }

    fn leave(self) -> PyResult<()> {
        // First, so no failure below can leave the fast paths switched off.
        crate::globals::trace_exit();
        let n = self.stack.len();
        let top = n
            .checked_sub(1)
            .map(|i| self.stack.get_item(i))
            .transpose()?;
        if top.is_some_and(|t| t.is(self.trace)) {
            self.stack.del_item(n.saturating_sub(1))?;
        }
        self.trace.get().set_alive(false);
        Ok(())
    }
}

/// What `trace_ad` recorded: the closed program of the outputs, the outputs
/// themselves (tracers of the dead trace), what the traced call returned
/// besides them, and the program's inputs (the primals one level down,
/// then the captured values).
pub(crate) struct Traced<'py, T> {
    pub(crate) closed: Arc<ClosedJaxpr>,
    pub(crate) outs: Vec<Bound<'py, PyAny>>,
    pub(crate) extra: T,
    pub(crate) inputs: Vec<Bound<'py, PyAny>>,
}

/// An input tracer of `trace` whose known value is `value`: an array is
/// staged here; anything else (a scalar, a tracer of an enclosing trace, a
/// device array) goes through `new_input(trace, value)` (the AD trace's
/// method).
fn new_input<'py>(
    trace: &Bound<'py, TraceBase>, value: &Bound<'py, PyAny>, other: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = trace.py();
    if let Ok(a) = value.cast_exact::<ArrayImpl>() {
        let base = trace.get();
        let t = crate::staging::input_tracer(base.builder.bind(py).get(), trace.as_any(), a.get())?;
        let var = Tracer::var_of(&t, trace.as_any()).ok_or_else(not_a_tracer)?;
        base.known.bind(py).set_item(var.0, value)?;
        return Ok(t);
    }
    match other {
        Some(f) => f.call1((trace, value)),
        None => Err(PyTypeError::new_err("an AD input here must be an array")),
    }
}

fn not_a_tracer() -> PyErr {
    PyRuntimeError::new_err("an input is not a tracer of its trace")
}

/// Traces `call` in AD mode: with `trace` the innermost trace (pushed on
/// `stack`, the Python trace stack), `call` receives one input tracer per
/// primal and returns the output values and anything else; the outputs'
/// program is built before the trace ends. `new_input`: how a primal that
/// is not an array becomes an input (see `new_input`).
pub(crate) fn trace_ad<'py, T>(
    trace: &Bound<'py, TraceBase>, stack: &Bound<'py, PyList>, primals: &[Bound<'py, PyAny>],
    new_input_of: Option<&Bound<'py, PyAny>>,
    call: impl FnOnce(Vec<Bound<'py, PyAny>>) -> PyResult<(Vec<Bound<'py, PyAny>>, T)>,
) -> PyResult<Traced<'py, T>> {
    let py = trace.py();
    let base = trace.get();
    let entered = Entered::enter(trace, stack)?;
    let traced = (|| -> PyResult<_> {
        let tracers = primals
            .iter()
            .map(|p| new_input(trace, p, new_input_of))
            .collect::<PyResult<Vec<_>>>()?;
        let (outs, extra) = call(tracers.clone())?;
        let atoms = outs
            .iter()
            .map(|o| crate::staging::operand_atom(trace.as_any(), o))
            .collect::<PyResult<Vec<Atom>>>()?;
        let closed = Arc::new(base.builder.bind(py).get().lock()?.build(atoms).py()?);
        Ok((tracers, closed, outs, extra))
    })();
    entered.leave()?;
    let (tracers, closed, outs, extra) = traced?;
    let known = base.known.bind(py);
    let mut inputs = Vec::with_capacity(tracers.len());
    for t in &tracers {
        let var = Tracer::var_of(t, trace.as_any()).ok_or_else(not_a_tracer)?;
        inputs.push(
            known
                .get_item(var.0)?
                .ok_or_else(|| PyRuntimeError::new_err("an input has no known value"))?,
        );
    }
    inputs.extend(base.captures.bind(py).iter());
    Ok(Traced {
        closed,
        outs,
        extra,
        inputs,
    })
}

/// `trace_ad(trace, stack, flat_fun, primals, new_input)`: `flat_fun(tracers)`
/// returns `(output values, aux)`; the result is `(closed jaxpr, outputs,
/// aux, inputs)` (`interpreters.ad.trace_ad`).
#[pyfunction(name = "trace_ad")]
fn py_trace_ad<'py>(
    trace: &Bound<'py, TraceBase>, stack: &Bound<'py, PyList>, flat_fun: &Bound<'py, PyAny>,
    primals: &Bound<'py, PyAny>, new_input: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyTuple>> {
    let py = trace.py();
    let primals = primals.try_iter()?.collect::<PyResult<Vec<_>>>()?;
    let traced = trace_ad(trace, stack, &primals, Some(new_input), |tracers| {
        let res = flat_fun.call1((PyList::new(py, tracers)?,))?;
        let (outs, aux): (Bound<'py, PyAny>, Bound<'py, PyAny>) = res.extract()?;
        Ok((outs.try_iter()?.collect::<PyResult<Vec<_>>>()?, aux))
    })?;
    let closed = Bound::new(
        py,
        PyClosedJaxpr {
            inner: traced.closed,
        },
    )?;
    PyTuple::new(
        py,
        [
            closed.into_any(),
            PyList::new(py, traced.outs)?.into_any(),
            traced.extra,
            PyList::new(py, traced.inputs)?.into_any(),
        ],
    )
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<TraceBase>()?;
    m.add_function(pyo3::wrap_pyfunction!(py_trace_ad, m)?)
}
