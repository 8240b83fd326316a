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

/// The batched program (see `microjax::transforms::batch_jaxpr`).
#[pyfunction]
pub(crate) fn batch_jaxpr(
    py: Python<'_>,
    closed: PyRef<'_, PyClosedJaxpr>,
    in_dims: Vec<Option<usize>>,
    axis_size: usize,
    out_dims: Vec<Option<usize>>,
) -> PyResult<PyClosedJaxpr> {
    let j = closed.inner.clone();
    let out = py
        .detach(move || transforms::batch_jaxpr(&j, &in_dims, axis_size, &out_dims))
        .py()?;
    Ok(wrap(out))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(batch_jaxpr, m)?)?;
    Ok(())
}
