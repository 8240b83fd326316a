//! Host callbacks: a Python callable as the core's `HostFn`.
//!
//! The core calls it on the evaluating thread (which may have released the
//! GIL around a long run: the call re-acquires it). The callable receives a
//! list of arrays and returns a list of arrays; a Python exception raised by
//! it is kept in a thread-local slot and re-raised unchanged once the core's
//! `Error::HostCallback` reaches the binding.

use crate::array::ArrayImpl;
use microjax::prims::callback::{HostCallback, HostFn};
use microjax::{Error, HostArray, Result};
use pyo3::prelude::*;
use pyo3::types::PyList;
use std::cell::RefCell;
use std::sync::Arc;

thread_local! {
    static PENDING: RefCell<Option<PyErr>> = const { RefCell::new(None) };
}

/// The exception the last failing callback of this thread raised.
pub(crate) fn take_pending_error() -> Option<PyErr> {
    PENDING.with(|p| p.borrow_mut().take())
}

/// Keeps a Python exception for re-raising once the core's error reaches
/// the binding (callbacks and Python-written primitive rules).
pub(crate) fn fail(e: PyErr) -> Error {
    let msg = e.to_string();
    PENDING.with(|p| *p.borrow_mut() = Some(e));
    Error::HostCallback(msg)
}

/// A Python callable `f(list_of_arrays) -> list_of_arrays`.
pub(crate) struct PyHostFn {
    fun: Py<PyAny>,
    name: String,
}

impl std::fmt::Debug for PyHostFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PyHostFn({})", self.name)
    }
}

impl HostFn for PyHostFn {
    fn call(&self, args: &[Arc<HostArray>]) -> Result<Vec<Arc<HostArray>>> {
        Python::attach(|py| {
            let list = PyList::empty(py);
            for a in args {
                let obj = Bound::new(py, ArrayImpl::new(a.clone(), false)).map_err(fail)?;
                list.append(obj).map_err(fail)?;
            }
            let out = self.fun.call1(py, (list,)).map_err(fail)?;
            let items: Vec<Bound<'_, PyAny>> = out
                .bind(py)
                .try_iter()
                .map_err(fail)?
                .collect::<PyResult<_>>()
                .map_err(fail)?;
            items
                .iter()
                .map(|x| {
                    let arr = x.cast::<ArrayImpl>().map_err(|e| fail(e.into()))?;
                    // Shared, not copied: arrays are immutable.
                    Ok(Arc::clone(&arr.borrow().arr))
                })
                .collect()
        })
    }

    fn name(&self) -> String {
        self.name.clone()
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// `_core.HostCallback(fun, name)`: the handle passed as a callback
/// primitive's `callback` param.
#[pyclass(frozen, name = "HostCallback", module = "microjax_rs")]
pub(crate) struct PyHostCallback {
    pub(crate) inner: HostCallback,
}

#[pymethods]
impl PyHostCallback {
    #[new]
    fn py_new(fun: Py<PyAny>, name: String) -> PyHostCallback {
        PyHostCallback {
            inner: HostCallback(Arc::new(PyHostFn { fun, name })),
        }
    }

    /// The Python callable.
    #[getter]
    fn fun(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        python_fun(py, &self.inner)
    }

    fn __repr__(&self) -> String {
        format!("<function {}>", self.inner.0.name())
    }
}

/// The Python callable behind a host function, when it is one of ours.
pub(crate) fn python_fun(py: Python<'_>, cb: &HostCallback) -> Option<Py<PyAny>> {
    cb.0.as_any()
        .downcast_ref::<PyHostFn>()
        .map(|f| f.fun.clone_ref(py))
}
