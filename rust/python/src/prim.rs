//! `Prim`: a core primitive with its params, built from `(name, params dict)`
//! as `bind(**params)` provides them, with abstract evaluation and eager
//! kernel application.

use crate::array::ArrayImpl;
use crate::dtypes::{dtype_from_py, dtype_obj, is_type_object, np_dtype_type};
use crate::ir::{aval_to_py, py_to_aval, PyClosedJaxpr};
use crate::CoreResultExt;
use microjax::exec::ExecCtx;
use microjax::prims::IntegerPow;
use microjax::prims::{kernel, shape};
use microjax::{Aval, HostArray, Param, Primitive};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyComplex, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// Total input elements above which eager kernels run with the GIL released.
pub(crate) const DETACH_ELEMS: usize = 32 * 1024;

/// A primitive with its params (`add`, `reduce_sum[axes=(0,)]`, ...).
#[pyclass(frozen, name = "Prim", module = "microjax_rs")]
pub struct Prim {
    pub(crate) prim: Primitive,
}

/// The ClosedJaxpr a Python value refers to: a `ClosedJaxpr` handle or any
/// object whose `_handle` attribute is one.
pub(crate) fn jaxpr_handle(obj: &Bound<'_, PyAny>) -> Option<Arc<microjax::ClosedJaxpr>> {
    if let Ok(h) = obj.cast::<PyClosedJaxpr>() {
        return Some(h.get().inner.clone());
    }
    let inner = obj.getattr("_handle").ok()?;
    let h = inner.cast::<PyClosedJaxpr>().ok()?;
    Some(h.get().inner.clone())
}

/// A Python param value as a core [`Param`].
pub(crate) fn py_to_param(obj: &Bound<'_, PyAny>) -> PyResult<Param> {
    if obj.is_none() {
        return Ok(Param::None);
    }
    if obj.is_instance_of::<PyBool>() {
        return Ok(Param::Bool(obj.extract()?));
    }
    if obj.is_instance_of::<PyInt>() {
        return Ok(Param::Int(obj.extract()?));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(Param::Float(f.value()));
    }
    // A complex scalar (a gather fill value): its two parts.
    if let Ok(z) = obj.cast::<PyComplex>() {
        return Ok(Param::Tuple(vec![
            Param::Float(z.real()),
            Param::Float(z.imag()),
        ]));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Param::Str(s.to_cow()?.into_owned()));
    }
    if obj.is_instance_of::<PyTuple>() || obj.is_instance_of::<PyList>() {
        let items: Vec<Bound<'_, PyAny>> = obj.try_iter()?.collect::<PyResult<_>>()?;
        let all_ints = items
            .iter()
            .all(|x| x.is_instance_of::<PyInt>() && !x.is_instance_of::<PyBool>());
        if all_ints {
            let v = items
                .iter()
                .map(|x| x.extract::<i64>())
                .collect::<PyResult<Vec<i64>>>()?;
            return Ok(Param::Ints(v));
        }
        let v = items
            .iter()
            .map(py_to_param)
            .collect::<PyResult<Vec<Param>>>()?;
        return Ok(Param::Tuple(v));
    }
    if let Some(j) = jaxpr_handle(obj) {
        return Ok(Param::Jaxpr(j));
    }
    if let Ok(c) = obj.cast::<crate::callback::PyHostCallback>() {
        return Ok(Param::Callback(c.get().inner.clone()));
    }
    let py = obj.py();
    if obj.is_instance(np_dtype_type(py)?)? || is_type_object(obj) {
        return Ok(Param::DType(dtype_from_py(obj)?));
    }
    // NumPy scalars.
    if let Ok(i) = obj.extract::<i64>() {
        return Ok(Param::Int(i));
    }
    if let Ok(f) = obj.extract::<f64>() {
        return Ok(Param::Float(f));
    }
    Err(PyTypeError::new_err(format!(
        "cannot convert a {} to a primitive parameter",
        obj.get_type().name()?
    )))
}

/// A core [`Param`] as a Python value (`Ints` → tuple of ints, `DType` →
/// NumPy dtype, `Jaxpr` → `ClosedJaxpr` handle).
pub(crate) fn param_to_py<'py>(py: Python<'py>, p: &Param) -> PyResult<Bound<'py, PyAny>> {
    Ok(match p {
        Param::None => py.None().into_bound(py),
        Param::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Param::Int(i) => i.into_pyobject(py)?.into_any(),
        Param::Float(f) => PyFloat::new(py, *f).into_any(),
        Param::Str(s) => PyString::new(py, s).into_any(),
        Param::DType(d) => match dtype_obj(py, *d) {
            Ok(o) => o,
            Err(_) => PyString::new(py, d.name()).into_any(),
        },
        Param::Ints(v) => PyTuple::new(py, v.iter().copied())?.into_any(),
        Param::Tuple(v) => {
            let items = v
                .iter()
                .map(|x| param_to_py(py, x))
                .collect::<PyResult<Vec<_>>>()?;
            PyTuple::new(py, items)?.into_any()
        }
        Param::Jaxpr(j) => Bound::new(py, PyClosedJaxpr { inner: j.clone() })?.into_any(),
        Param::Callback(c) => {
            Bound::new(py, crate::callback::PyHostCallback { inner: c.clone() })?.into_any()
        }
    })
}

/// Builds a primitive from its name and a params dict. Params the core does
/// not read (`precision`, `sharding`, ...) may hold anything; a value that
/// cannot be converted is only an error when the primitive reads that key.
pub(crate) fn build_prim(name: &str, params: Option<&Bound<'_, PyDict>>) -> PyResult<Primitive> {
    let mut list: Vec<(String, Param)> = Vec::new();
    let mut failed: Vec<(String, PyErr)> = Vec::new();
    if let Some(d) = params {
        for (k, v) in d.iter() {
            let key: String = k.extract()?;
            match py_to_param(&v) {
                Ok(p) => list.push((key, p)),
                Err(e) => failed.push((key, e)),
            }
        }
    }
    match Primitive::from_params(name, &list) {
        Ok(prim) => {
            let known = prim.params();
            if let Some(pos) = failed
                .iter()
                .position(|(k, _)| known.iter().any(|(n, _)| n == k))
            {
                let (_, e) = failed.swap_remove(pos);
                return Err(e);
            }
            Ok(prim)
        }
        Err(core) => {
            // A conversion failure on a key the primitive needs explains the
            // core's "missing" better than the core can.
            let culprit = match &core {
                microjax::Error::Param { param, .. } => {
                    failed.into_iter().find(|(k, _)| k == param)
                }
                _ => None,
            };
            match culprit {
                Some((_, e)) => Err(e),
                None => Err(crate::to_pyerr(core)),
            }
        }
    }
}

/// Output avals of `prim` on `avals`.
pub(crate) fn abstract_eval_avals(prim: &Primitive, avals: &[Aval]) -> PyResult<Vec<Aval>> {
    shape::abstract_eval(prim, avals).py()
}

#[pymethods]
impl Prim {
    #[new]
    #[pyo3(signature = (name, params = None))]
    fn py_new(name: &str, params: Option<&Bound<'_, PyDict>>) -> PyResult<Prim> {
        Ok(Prim {
            prim: build_prim(name, params)?,
        })
    }

    #[getter]
    fn name(&self) -> &'static str {
        self.prim.name()
    }

    #[getter]
    fn multiple_results(&self) -> bool {
        self.prim.multiple_results()
    }

    /// The params as `eqn.params` shows them, in JAX's order.
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in self.prim.params() {
            d.set_item(k, param_to_py(py, &v)?)?;
        }
        Ok(d)
    }

    /// Output avals `[(shape, dtype_name, weak)]` for input avals of the same form.
    fn abstract_eval<'py>(
        &self, py: Python<'py>, avals: &Bound<'py, PyAny>,
    ) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        let ins = avals
            .try_iter()?
            .map(|a| py_to_aval(&a?))
            .collect::<PyResult<Vec<Aval>>>()?;
        abstract_eval_avals(&self.prim, &ins)?
            .iter()
            .map(|a| aval_to_py(py, a))
            .collect()
    }

    /// Runs the primitive's kernel on concrete arrays (GIL released for
    /// large inputs). Output weak types follow abstract evaluation.
    fn apply(&self, py: Python<'_>, args: Vec<PyRef<'_, ArrayImpl>>) -> PyResult<Vec<ArrayImpl>> {
        for a in &args {
            a.check_live()?;
        }
        let arrs: Vec<Arc<HostArray>> = args.iter().map(|a| a.arr.clone()).collect();
        let in_avals: Vec<Aval> = args
            .iter()
            .map(|a| {
                let mut av = a.arr.aval();
                av.weak_type = a.weak;
                av
            })
            .collect();
        drop(args);
        let out_avals = abstract_eval_avals(&self.prim, &in_avals)?;
        let total = arrs
            .iter()
            .fold(0usize, |acc, a| acc.saturating_add(a.size()));
        let prim = &self.prim;
        let run = || {
            let refs: Vec<&HostArray> = arrs.iter().map(|a| a.as_ref()).collect();
            kernel::eval(&ExecCtx::current_default(), prim, &refs)
        };
        let outs = if total > DETACH_ELEMS {
            py.detach(run)
        } else {
            run()
        }
        .py()?;
        if outs.len() != out_avals.len() {
            return Err(PyValueError::new_err(format!(
                "{}: kernel returned {} outputs, abstract evaluation {}",
                self.prim.name(),
                outs.len(),
                out_avals.len()
            )));
        }
        Ok(outs
            .into_iter()
            .zip(out_avals)
            .map(|(h, av)| ArrayImpl::new(Arc::new(h), av.weak_type))
            .collect())
    }

    /// One operand, one output: the eager fast path of the jnp unary
    /// functions. Elementwise ops keep the operand's weak type, so no
    /// abstract evaluation is needed beyond the kernel's own check.
    fn apply1(&self, py: Python<'_>, x: PyRef<'_, ArrayImpl>) -> PyResult<ArrayImpl> {
        if !matches!(
            self.prim,
            Primitive::Unary(_) | Primitive::IntegerPow(IntegerPow { .. })
        ) {
            let mut outs = self.apply(py, vec![x])?;
            return outs
                .pop()
                .ok_or_else(|| PyValueError::new_err(format!("{}: no output", self.prim.name())));
        }
        x.check_live()?;
        let (arr, weak) = (x.arr.clone(), x.weak);
        drop(x);
        let prim = &self.prim;
        let run = || kernel::eval_one(&ExecCtx::current_default(), prim, &[arr.as_ref()]);
        let h = if arr.size() > DETACH_ELEMS {
            py.detach(run)
        } else {
            run()
        }
        .py()?;
        Ok(ArrayImpl::new(Arc::new(h), weak))
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let py = other.py();
        match other.cast::<Prim>() {
            Ok(o) => Ok(PyBool::new(py, self.prim == o.get().prim)
                .to_owned()
                .into_any()
                .unbind()),
            Err(_) => Ok(py.NotImplemented()),
        }
    }

    fn __ne__(&self, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let py = other.py();
        match other.cast::<Prim>() {
            Ok(o) => Ok(PyBool::new(py, self.prim != o.get().prim)
                .to_owned()
                .into_any()
                .unbind()),
            Err(_) => Ok(py.NotImplemented()),
        }
    }

    fn __hash__(&self) -> u64 {
        let mut h = DefaultHasher::new();
        self.prim.hash(&mut h);
        h.finish()
    }

    fn __repr__(&self) -> &'static str {
        self.prim.name()
    }
}

/// Every primitive name of the core.
#[pyfunction]
pub(crate) fn primitive_names() -> Vec<&'static str> {
    Primitive::all_names()
}

/// What the core knows of each primitive, by name: `(multiple_results,
/// differentiable, effect)` of its representative instance (the effect of
/// the primitive itself; a sub-program's effects lift to its equation).
/// Python reads its primitive facts from this table.
#[pyfunction]
pub(crate) fn primitive_table(py: Python<'_>) -> PyResult<Bound<'_, pyo3::types::PyDict>> {
    let out = pyo3::types::PyDict::new(py);
    for p in Primitive::examples() {
        out.set_item(
            p.name(),
            (
                p.multiple_results(),
                p.differentiable(),
                crate::ir::effect_name(p.effect()),
            ),
        )?;
    }
    Ok(out)
}

/// A jnp unary function (`jnp.sin`) with its eager fast path in Rust: an
/// `ArrayImpl` operand of an accepted dtype, with no trace active, goes
/// straight to the kernel; anything else calls the Python function (which
/// promotes, traces, raises). Saves the Python frame of the common case.
#[pyclass(frozen, dict, name = "FastUnary", module = "microjax_rs")]
pub(crate) struct FastUnary {
    prim: Primitive,
    float_only: bool,
    fallback: Py<PyAny>,
    /// The `lax` primitive object, for the native AD staging path.
    lax_prim: Py<PyAny>,
}

#[pymethods]
impl FastUnary {
    #[new]
    fn py_new(
        prim: PyRef<'_, Prim>, float_only: bool, fallback: Py<PyAny>, lax_prim: Py<PyAny>,
    ) -> PyResult<FastUnary> {
        if !matches!(prim.prim, Primitive::Unary(_)) {
            return Err(PyValueError::new_err(format!(
                "FastUnary needs an elementwise unary primitive, got {}",
                prim.prim.name()
            )));
        }
        Ok(FastUnary {
            prim: prim.prim.clone(),
            float_only,
            fallback,
            lax_prim,
        })
    }

    #[pyo3(signature = (x, /))]
    fn __call__(&self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        if crate::globals::fast_eager() {
            if let Ok(a) = x.cast_exact::<ArrayImpl>() {
                let a = a.get();
                a.check_live()?;
                let dtype = a.arr.dtype();
                let accepted = if self.float_only {
                    dtype.is_float()
                } else {
                    matches!(&self.prim, Primitive::Unary(op) if op.accepts(dtype))
                };
                if accepted && a.arr.size() <= DETACH_ELEMS {
                    let h = kernel::eval_one(
                        &ExecCtx::current_default(),
                        &self.prim,
                        &[a.arr.as_ref()],
                    )
                    .py()?;
                    let out = ArrayImpl::new(Arc::new(h), a.weak);
                    return Ok(Bound::new(py, out)?.into_any().unbind());
                }
            }
        } else if let Some(out) = crate::tracer::stage_unary(x, &self.prim, &self.lax_prim)? {
            return Ok(out.unbind());
        }
        self.fallback.call1(py, (x,))
    }

    fn __repr__(&self) -> String {
        format!("<function {}>", self.prim.name())
    }
}
