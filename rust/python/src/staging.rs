//! The hot path of staging one equation into a trace (`Builder.stage`):
//! operand conversion, the equation, the output tracers and, for AD traces,
//! the record of the equation for lazily known values — one call instead of
//! a Python loop per operand and per output. It calls back into Python only
//! for operands that are not tracers of the trace (`trace.to_atom`). The
//! tracers are `tracer::Tracer`s, their avals `aval::ShapedArray`s.

use crate::array::ArrayImpl;
use crate::ir::{atom_from_py, PyBuilder};
use crate::prim::Prim;
use crate::records::StagedEqn;
use crate::tracer::Tracer;
use crate::{CoreResultExt, Registered};
use microjax::{Atom, Aval, Primitive, Var};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// `core.StagingTrace.to_atom`, registered once at import.
static TO_ATOM: Registered<Py<PyAny>> = Registered::new("the operand converter is");

/// Source text (by the address of the Python string, kept alive here) ->
/// the shared Rust copy: call sites repeat, and the Python side hands the
/// same string object for one site.
type SourceCache = HashMap<usize, (Py<PyString>, Arc<str>)>;
static SOURCES: Mutex<Option<SourceCache>> = Mutex::new(None);

const CACHE_LIMIT: usize = 4096;

/// The source cache's lock if it is free now (`crate::fork`).
pub(crate) fn try_hold() -> Option<Box<dyn std::any::Any>> {
    crate::fork::try_lock(&SOURCES)
}

/// Registers `to_atom(trace, x)`, the atom of an operand that is not a
/// tracer of the trace (a constant, a captured value; `register_hooks(
/// to_atom=...)`).
pub(crate) fn register_to_atom(py: Python<'_>, to_atom: Bound<'_, PyAny>) -> PyResult<()> {
    TO_ATOM.set(py, to_atom.unbind())
}

/// The shared `ShapedArray` of `a`.
pub(crate) fn aval_object<'py>(py: Python<'py>, a: &Aval) -> PyResult<Bound<'py, PyAny>> {
    crate::aval::ShapedArray::shared(py, a).map(Bound::into_any)
}

fn source_text(s: &Bound<'_, PyString>) -> PyResult<Arc<str>> {
    let key = s.as_ptr() as usize;
    if let Ok(guard) = SOURCES.lock() {
        if let Some((_, text)) = guard.as_ref().and_then(|m| m.get(&key)) {
            return Ok(text.clone());
        }
    }
    let text: Arc<str> = Arc::from(s.to_cow()?.as_ref());
    if let Ok(mut guard) = SOURCES.lock() {
        let map = guard.get_or_insert_with(HashMap::new);
        if map.len() >= CACHE_LIMIT {
            map.clear();
        }
        map.insert(key, (s.clone().unbind(), text.clone()));
    }
    Ok(text)
}

/// The operand as an atom of `trace`'s builder: a tracer of the trace is its
/// variable; anything else goes through the registered `to_atom`.
pub(crate) fn operand_atom(trace: &Bound<'_, PyAny>, x: &Bound<'_, PyAny>) -> PyResult<Atom> {
    if let Some(v) = Tracer::var_of(x, trace) {
        return Ok(Atom::Var(v));
    }
    let py = x.py();
    atom_from_py(&TO_ATOM.get(py)?.bind(py).call1((trace, x))?)
}

/// Appends `prim atoms` to the builder; its output variables and avals.
pub(crate) fn add_eqn(
    builder: &PyBuilder, prim: Primitive, atoms: Vec<Atom>, src: Option<Arc<str>>,
) -> PyResult<(Vec<Var>, Vec<Aval>)> {
    let mut b = builder.lock()?;
    let vars = b.add_eqn(prim, atoms, src).py()?;
    let avals = vars
        .iter()
        .map(|v| b.aval(&Atom::Var(*v)))
        .collect::<microjax::Result<Vec<Aval>>>()
        .py()?;
    Ok((vars, avals))
}

/// The AD record of one staged equation, the form `ADTrace` reads back for
/// lazily known values: every output variable maps to a `StagedEqn` in
/// `eqn_of`.
pub(crate) fn record_eqn<'py>(
    eqn_of: &Bound<'py, PyDict>, prim: Bound<'py, PyAny>, params: Bound<'py, PyAny>,
    args: Bound<'py, PyTuple>, vars: &[Var],
) -> PyResult<()> {
    let py = eqn_of.py();
    let rec = Bound::new(
        py,
        StagedEqn {
            prim: prim.unbind(),
            params: params.unbind(),
            args: args.into_any().unbind(),
            outvars: PyTuple::new(py, vars.iter().map(|v| v.0))?
                .into_any()
                .unbind(),
        },
    )?;
    for v in vars {
        eqn_of.set_item(v.0, &rec)?;
    }
    Ok(())
}

/// `Builder.stage` (see its docstring in ir.rs).
pub(crate) fn stage<'py>(
    builder: &PyBuilder, trace: &Bound<'py, PyAny>, prim: PyRef<'_, Prim>,
    args: &Bound<'py, PyAny>, source: Option<&Bound<'py, PyString>>, multiple: bool,
    record: Option<(Bound<'py, PyDict>, Bound<'py, PyAny>, Bound<'py, PyAny>)>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = trace.py();
    let args = match args.cast::<PyTuple>() {
        Ok(t) => t.clone(),
        Err(_) => PyTuple::new(py, args.try_iter()?.collect::<PyResult<Vec<_>>>()?)?,
    };
    let atoms = args
        .iter()
        .map(|x| operand_atom(trace, &x))
        .collect::<PyResult<Vec<Atom>>>()?;
    let src = source.map(source_text).transpose()?;
    let (vars, avals) = add_eqn(builder, prim.prim.clone(), atoms, src)?;
    let tracers = vars
        .iter()
        .zip(&avals)
        .map(|(v, a)| Tracer::new_bound(py, trace, *v, aval_object(py, a)?, a))
        .collect::<PyResult<Vec<_>>>()?;
    if let Some((eqn_of, rprim, rparams)) = record {
        record_eqn(&eqn_of, rprim, rparams, args, &vars)?;
    }
    if multiple {
        return Ok(PyList::new(py, tracers)?.into_any());
    }
    match <[Bound<'py, PyAny>; 1]>::try_from(tracers) {
        Ok([t]) => Ok(t),
        Err(ts) => Err(PyRuntimeError::new_err(format!(
            "a single-result primitive staged {} outputs",
            ts.len()
        ))),
    }
}

/// A new input variable of `builder` for the array `value`, and its tracer
/// of `trace` (the AD traces' inputs, without a Python aval round trip).
pub(crate) fn input_tracer<'py>(
    builder: &PyBuilder, trace: &Bound<'py, PyAny>, value: &ArrayImpl,
) -> PyResult<Bound<'py, PyAny>> {
    value.check_live()?;
    let aval = Aval::weak(value.arr.shape().to_vec(), value.arr.dtype(), value.weak);
    let var = builder.lock()?.add_input(aval.clone()).py()?;
    let py = trace.py();
    Tracer::new_bound(py, trace, var, aval_object(py, &aval)?, &aval)
}
