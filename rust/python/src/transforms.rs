//! The jaxpr-to-jaxpr transforms (JVP, linearize, transpose, VJP, batching,
//! DCE), exposed on `ClosedJaxpr` handles. Rules live in the core; this only
//! converts arguments and releases the GIL around the transform.

use crate::array::ArrayImpl;
use crate::ir::{wrap_outputs, PyClosedJaxpr};
use crate::CoreResultExt;
use microjax::transforms;
use microjax::{ClosedJaxpr, HostArray};
use pyo3::prelude::*;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

fn wrap(j: microjax::ClosedJaxpr) -> PyClosedJaxpr {
    PyClosedJaxpr { inner: Arc::new(j) }
}

/// Runs `transform` on the program of `closed` with the GIL released.
fn detached<T: Send>(
    py: Python<'_>, closed: &PyClosedJaxpr,
    transform: impl FnOnce(&ClosedJaxpr) -> microjax::Result<T> + Send,
) -> PyResult<T> {
    let j = closed.inner.clone();
    py.detach(move || transform(&j)).py()
}

/// The program `transform(closed, mask)`, computed with the GIL released.
fn masked_program(
    py: Python<'_>, closed: &PyClosedJaxpr, mask: Vec<bool>,
    transform: fn(&ClosedJaxpr, &[bool]) -> microjax::Result<ClosedJaxpr>,
) -> PyResult<PyClosedJaxpr> {
    detached(py, closed, move |j| transform(j, &mask)).map(wrap)
}

/// `(jvp_program, out_nonzeros)`: the program takes (primals..., tangents of
/// the nonzero inputs...) and returns (outs..., tangents...).
#[pyfunction]
#[pyo3(signature = (closed, nonzeros, instantiate = true))]
pub(crate) fn jvp_jaxpr(
    py: Python<'_>, closed: PyRef<'_, PyClosedJaxpr>, nonzeros: Vec<bool>, instantiate: bool,
) -> PyResult<(PyClosedJaxpr, Vec<bool>)> {
    let (out, nz) = detached(py, &closed, move |j| {
        transforms::jvp_jaxpr(j, &nonzeros, instantiate)
    })?;
    Ok((wrap(out), nz))
}

/// `(primal_program, tangent_program, num_res)`.
#[pyfunction]
pub(crate) fn linearize_jaxpr(
    py: Python<'_>, closed: PyRef<'_, PyClosedJaxpr>, nonzeros: Vec<bool>,
) -> PyResult<(PyClosedJaxpr, PyClosedJaxpr, usize)> {
    let lin = detached(py, &closed, move |j| {
        transforms::linearize_jaxpr(j, &nonzeros)
    })?;
    Ok((wrap(lin.primal), wrap(lin.tangent), lin.num_res))
}

/// The transpose of a linear program (`linear[i]` marks linear inputs).
#[pyfunction]
pub(crate) fn transpose_jaxpr(
    py: Python<'_>, closed: PyRef<'_, PyClosedJaxpr>, linear: Vec<bool>,
) -> PyResult<PyClosedJaxpr> {
    masked_program(py, &closed, linear, transforms::transpose_jaxpr)
}

/// `(fwd, bwd, num_res)`.
#[pyfunction]
pub(crate) fn vjp_jaxpr(
    py: Python<'_>, closed: PyRef<'_, PyClosedJaxpr>, nonzeros: Vec<bool>,
) -> PyResult<(PyClosedJaxpr, PyClosedJaxpr, usize)> {
    let v = detached(py, &closed, move |j| transforms::vjp_jaxpr(j, &nonzeros))?;
    Ok((wrap(v.fwd), wrap(v.bwd), v.num_res))
}

/// One program `inputs -> (output, cotangents of the nonzero inputs)` for
/// a one-output program (see `microjax::transforms::value_and_grad_jaxpr`).
#[pyfunction]
pub(crate) fn value_and_grad_jaxpr(
    py: Python<'_>, closed: PyRef<'_, PyClosedJaxpr>, nonzeros: Vec<bool>,
) -> PyResult<PyClosedJaxpr> {
    masked_program(py, &closed, nonzeros, transforms::value_and_grad_jaxpr)
}

/// Traced programs (keyed by `lifted_key`, confirmed by `same_lifted`) and
/// their nonzeros -> the `value_and_grad` program of the lifted form.
type GradCache = HashMap<u64, Vec<(Arc<ClosedJaxpr>, Vec<bool>, Arc<ClosedJaxpr>)>>;
static GRAD_CACHE: Mutex<Option<GradCache>> = Mutex::new(None);
const GRAD_CACHE_LIMIT: usize = 512;

/// The grad program cache's lock if it is free now (`crate::fork`).
pub(crate) fn try_hold() -> Option<Box<dyn std::any::Any>> {
    crate::fork::try_lock(&GRAD_CACHE)
}

/// The `value_and_grad` program of `closed` with its liftable literals
/// lifted into leading inputs, for `nonzeros` (of `closed`'s own inputs),
/// and those literals. Probed on every un-jitted `grad` call, so a hit
/// neither copies the program nor hashes it twice.
fn grad_program(
    closed: &Arc<ClosedJaxpr>, nonzeros: Vec<bool>,
) -> microjax::Result<(Arc<ClosedJaxpr>, Vec<microjax::Literal>)> {
    use microjax::ir::hash::{lift_literals, lifted_key, same_lifted};
    let (mut key, lits) = lifted_key(closed);
    for &nz in &nonzeros {
        key = key.rotate_left(1) ^ u64::from(nz);
    }
    if let Ok(guard) = GRAD_CACHE.lock() {
        let hit = guard.as_ref().and_then(|m| m.get(&key)).and_then(|bucket| {
            bucket
                .iter()
                .find(|(j, nz, _)| *nz == nonzeros && same_lifted(j, closed))
                .map(|(_, _, p)| p.clone())
        });
        if let Some(p) = hit {
            return Ok((p, lits));
        }
    }
    let (lifted, _) = lift_literals(closed);
    let mut nz = vec![false; lits.len()];
    nz.extend(nonzeros.iter().copied());
    let prog = Arc::new(transforms::value_and_grad_jaxpr(&lifted, &nz)?);
    if let Ok(mut guard) = GRAD_CACHE.lock() {
        let map = guard.get_or_insert_with(HashMap::new);
        if map.len() >= GRAD_CACHE_LIMIT {
            map.clear();
        }
        map.entry(key)
            .or_default()
            .push((closed.clone(), nonzeros, prog.clone()));
    }
    Ok((prog, lits))
}

/// `grad` at the eager level in one call: lifts the traced program's float
/// literals into inputs (so programs differing only in literal values share
/// one transform and one compiled plan), finds or makes its
/// `value_and_grad` program and runs it on the literals and `inputs`.
/// Returns (output, cotangents of the nonzero inputs...).
#[pyfunction]
pub(crate) fn value_and_grad_run(
    py: Python<'_>, closed: PyRef<'_, PyClosedJaxpr>, nonzeros: Vec<bool>,
    inputs: Vec<PyRef<'_, ArrayImpl>>,
) -> PyResult<Vec<ArrayImpl>> {
    for a in &inputs {
        a.check_live()?;
    }
    let inputs: Vec<Arc<HostArray>> = inputs.iter().map(|a| a.arr.clone()).collect();
    run_value_and_grad(py, closed.inner.clone(), nonzeros, inputs)
}

/// `value_and_grad_run` on core values (also the eager `GradFunction`'s
/// last step): the cache probe, the lifted literals and the run happen in
/// one GIL release.
pub(crate) fn run_value_and_grad(
    py: Python<'_>, closed: Arc<ClosedJaxpr>, nonzeros: Vec<bool>, inputs: Vec<Arc<HostArray>>,
) -> PyResult<Vec<ArrayImpl>> {
    let epoch = crate::globals::epoch();
    let (outs, out_avals) = py
        .detach(move || -> microjax::Result<_> {
            let (prog, lits) = grad_program(&closed, nonzeros)?;
            let mut args = Vec::with_capacity(lits.len().saturating_add(inputs.len()));
            for l in &lits {
                args.push(Arc::new(l.to_array()?));
            }
            args.extend(inputs);
            let outs = microjax::exec::cache::global().run(&prog, &args, epoch)?;
            Ok((outs, prog.out_avals()?))
        })
        .py()?;
    wrap_outputs(outs, &out_avals)
}

/// Entries of `value_and_grad_run`'s program cache.
#[pyfunction]
pub(crate) fn value_and_grad_cache_size() -> usize {
    GRAD_CACHE
        .lock()
        .map(|g| g.as_ref().map_or(0, |m| m.values().map(Vec::len).sum()))
        .unwrap_or(0)
}

/// Empties `value_and_grad_run`'s program cache.
#[pyfunction]
pub(crate) fn value_and_grad_cache_clear() {
    if let Ok(mut g) = GRAD_CACHE.lock() {
        *g = None;
    }
}

/// `(program, used_inputs)` keeping the outputs with `used_outputs[j]`.
#[pyfunction]
pub(crate) fn dce_jaxpr(
    py: Python<'_>, closed: PyRef<'_, PyClosedJaxpr>, used_outputs: Vec<bool>,
) -> PyResult<(PyClosedJaxpr, Vec<bool>)> {
    let (out, used) = detached(py, &closed, move |j| {
        transforms::dce_jaxpr(j, &used_outputs)
    })?;
    Ok((wrap(out), used))
}

/// The batched program (see `microjax::transforms::batch_jaxpr_named`).
#[pyfunction]
#[pyo3(signature = (closed, in_dims, axis_size, out_dims, axis_name=None))]
pub(crate) fn batch_jaxpr(
    py: Python<'_>, closed: PyRef<'_, PyClosedJaxpr>, in_dims: Vec<Option<usize>>,
    axis_size: usize, out_dims: Vec<Option<usize>>, axis_name: Option<String>,
) -> PyResult<PyClosedJaxpr> {
    detached(py, &closed, move |j| {
        transforms::batch_jaxpr_named(j, &in_dims, axis_size, axis_name.as_deref(), &out_dims)
    })
    .map(wrap)
}

/// `(known, unknown, out_unknowns, num_res, effectful)`: `known` maps the
/// known inputs to (known outputs..., residuals...), `unknown` maps
/// (residuals..., unknown inputs...) to the unknown outputs; `effectful` says
/// whether the program has ordered effects (splitting would reorder them).
#[pyfunction]
pub(crate) fn partial_eval_jaxpr(
    py: Python<'_>, closed: PyRef<'_, PyClosedJaxpr>, unknowns: Vec<bool>,
) -> PyResult<(PyClosedJaxpr, PyClosedJaxpr, Vec<bool>, usize, bool)> {
    let effectful = closed
        .inner
        .jaxpr
        .eqns
        .iter()
        .any(|e| e.effect != microjax::ir::Effect::None);
    let pe = detached(py, &closed, move |j| {
        let instantiate = vec![false; j.jaxpr.outvars.len()];
        transforms::partial_eval::partial_eval_jaxpr(j, &unknowns, &instantiate)
    })?;
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
    add_functions!(m; jaxpr_axis_names, jvp_jaxpr, linearize_jaxpr, transpose_jaxpr, vjp_jaxpr,
        value_and_grad_jaxpr, value_and_grad_run, value_and_grad_cache_size,
        value_and_grad_cache_clear, batch_jaxpr, dce_jaxpr, partial_eval_jaxpr);
    Ok(())
}
