//! The jaxpr-to-jaxpr transforms (JVP, linearize, transpose, VJP, batching,
//! DCE), exposed on `ClosedJaxpr` handles. Rules live in the core; this only
//! converts arguments and releases the GIL around the transform.

use crate::ir::PyClosedJaxpr;
use crate::CoreResultExt;
use microjax::transforms;
use pyo3::prelude::*;
use std::sync::Arc;

fn wrap(j: microjax::ClosedJaxpr) -> PyClosedJaxpr {
    PyClosedJaxpr { inner: Arc::new(j) }
}

/// `(jvp_program, out_nonzeros)`: the program takes (primals..., tangents of
/// the nonzero inputs...) and returns (outs..., tangents...).
#[pyfunction]
#[pyo3(signature = (closed, nonzeros, instantiate = true))]
pub(crate) fn jvp_jaxpr(
    py: Python<'_>,
    closed: PyRef<'_, PyClosedJaxpr>,
    nonzeros: Vec<bool>,
    instantiate: bool,
) -> PyResult<(PyClosedJaxpr, Vec<bool>)> {
    let j = closed.inner.clone();
    let (out, nz) = py
        .detach(move || transforms::jvp_jaxpr(&j, &nonzeros, instantiate))
        .py()?;
    Ok((wrap(out), nz))
}

/// `(primal_program, tangent_program, num_res)`.
#[pyfunction]
pub(crate) fn linearize_jaxpr(
    py: Python<'_>,
    closed: PyRef<'_, PyClosedJaxpr>,
    nonzeros: Vec<bool>,
) -> PyResult<(PyClosedJaxpr, PyClosedJaxpr, usize)> {
    let j = closed.inner.clone();
    let lin = py
        .detach(move || transforms::linearize_jaxpr(&j, &nonzeros))
        .py()?;
    Ok((wrap(lin.primal), wrap(lin.tangent), lin.num_res))
}

/// The transpose of a linear program (`linear[i]` marks linear inputs).
#[pyfunction]
pub(crate) fn transpose_jaxpr(
    py: Python<'_>,
    closed: PyRef<'_, PyClosedJaxpr>,
    linear: Vec<bool>,
) -> PyResult<PyClosedJaxpr> {
    let j = closed.inner.clone();
    let out = py
        .detach(move || transforms::transpose_jaxpr(&j, &linear))
        .py()?;
    Ok(wrap(out))
}

/// `(fwd, bwd, num_res)`.
#[pyfunction]
pub(crate) fn vjp_jaxpr(
    py: Python<'_>,
    closed: PyRef<'_, PyClosedJaxpr>,
    nonzeros: Vec<bool>,
) -> PyResult<(PyClosedJaxpr, PyClosedJaxpr, usize)> {
    let j = closed.inner.clone();
    let v = py
        .detach(move || transforms::vjp_jaxpr(&j, &nonzeros))
        .py()?;
    Ok((wrap(v.fwd), wrap(v.bwd), v.num_res))
}

/// One program `inputs -> (output, cotangents of the nonzero inputs)` for
/// a one-output program (see `microjax::transforms::value_and_grad_jaxpr`).
#[pyfunction]
pub(crate) fn value_and_grad_jaxpr(
    py: Python<'_>,
    closed: PyRef<'_, PyClosedJaxpr>,
    nonzeros: Vec<bool>,
) -> PyResult<PyClosedJaxpr> {
    let j = closed.inner.clone();
    let out = py
        .detach(move || transforms::value_and_grad_jaxpr(&j, &nonzeros))
        .py()?;
    Ok(wrap(out))
}

/// `(program, used_inputs)` keeping the outputs with `used_outputs[j]`.
#[pyfunction]
pub(crate) fn dce_jaxpr(
    py: Python<'_>,
    closed: PyRef<'_, PyClosedJaxpr>,
    used_outputs: Vec<bool>,
) -> PyResult<(PyClosedJaxpr, Vec<bool>)> {
    let j = closed.inner.clone();
    let (out, used) = py
        .detach(move || transforms::dce_jaxpr(&j, &used_outputs))
        .py()?;
    Ok((wrap(out), used))
}

/// The batched program (see `microjax::transforms::batch_jaxpr_named`).
#[pyfunction]
#[pyo3(signature = (closed, in_dims, axis_size, out_dims, axis_name=None))]
pub(crate) fn batch_jaxpr(
    py: Python<'_>,
    closed: PyRef<'_, PyClosedJaxpr>,
    in_dims: Vec<Option<usize>>,
    axis_size: usize,
    out_dims: Vec<Option<usize>>,
    axis_name: Option<String>,
) -> PyResult<PyClosedJaxpr> {
    let j = closed.inner.clone();
    let out = py
        .detach(move || {
            transforms::batch_jaxpr_named(&j, &in_dims, axis_size, axis_name.as_deref(), &out_dims)
        })
        .py()?;
    Ok(wrap(out))
}

/// `(known, unknown, out_unknowns, num_res, effectful)`: `known` maps the
/// known inputs to (known outputs..., residuals...), `unknown` maps
/// (residuals..., unknown inputs...) to the unknown outputs; `effectful` says
/// whether the program has ordered effects (splitting would reorder them).
#[pyfunction]
pub(crate) fn partial_eval_jaxpr(
    py: Python<'_>,
    closed: PyRef<'_, PyClosedJaxpr>,
    unknowns: Vec<bool>,
) -> PyResult<(PyClosedJaxpr, PyClosedJaxpr, Vec<bool>, usize, bool)> {
    let j = closed.inner.clone();
    let effectful = j
        .jaxpr
        .eqns
        .iter()
        .any(|e| e.effect != microjax::ir::Effect::None);
    let pe = py
        .detach(move || {
            let instantiate = vec![false; j.jaxpr.outvars.len()];
            transforms::partial_eval::partial_eval_jaxpr(&j, &unknowns, &instantiate)
        })
        .py()?;
    Ok((
        wrap(pe.known),
        wrap(pe.unknown),
        pe.out_unknowns,
        pe.num_res,
        effectful,
    ))
}

/// The axis names the collectives of a program (and its sub-programs) use.
#[pyfunction]
pub(crate) fn jaxpr_axis_names(closed: PyRef<'_, PyClosedJaxpr>) -> Vec<String> {
    microjax::prims::collective::axis_names_of(&closed.inner)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(jaxpr_axis_names, m)?)?;
    m.add_function(wrap_pyfunction!(jvp_jaxpr, m)?)?;
    m.add_function(wrap_pyfunction!(linearize_jaxpr, m)?)?;
    m.add_function(wrap_pyfunction!(transpose_jaxpr, m)?)?;
    m.add_function(wrap_pyfunction!(vjp_jaxpr, m)?)?;
    m.add_function(wrap_pyfunction!(value_and_grad_jaxpr, m)?)?;
    m.add_function(wrap_pyfunction!(batch_jaxpr, m)?)?;
    m.add_function(wrap_pyfunction!(dce_jaxpr, m)?)?;
    m.add_function(wrap_pyfunction!(partial_eval_jaxpr, m)?)?;
    Ok(())
}
