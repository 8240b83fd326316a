//! `GradFunction`: the call path of `grad(f)` / `value_and_grad(f)` with an
//! int `argnums` and no `has_aux`. A call at the eager level whose
//! differentiated argument is one float array runs here: `f` is traced by
//! `traces::trace_ad` (the one AD tracing routine, which the Python path
//! runs too) with its float arithmetic staged natively (`tracer.rs`), and
//! the recorded program goes to `value_and_grad_run`'s cache and executor —
//! with Python entered only for `f` itself and the trace object. This lane
//! only skips the Python path's argument handling (pytrees, `has_aux`,
//! integer inputs, nested traces): every other call goes to the Python
//! function (`_grad.py`), whose checks and error messages also judge an
//! unusual output here (a non-scalar one, say).

use crate::array::ArrayImpl;
use crate::globals::fast_eager;
use crate::ir::{PyBuilder, PyClosedJaxpr};
use crate::tracer::Tracer;
use crate::traces::TraceBase;
use crate::{CoreResultExt, Registered};
use microjax::{Atom, HostArray};
use pyo3::exceptions::PyRuntimeError;
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use pyo3::PyTraverseError;
use std::sync::Arc;

/// `interpreters.ad.ADTrace`, `core._state.stack`,
/// `_grad._check_scalar_output` and `_grad._run_value_and_grad`.
struct GradHooks {
    ad_trace: Py<PyAny>,
    stack: Py<PyList>,
    check_output: Py<PyAny>,
    run_elsewhere: Py<PyAny>,
}

static HOOKS: Registered<GradHooks> = Registered::new("the grad hooks are");

/// Registers what the eager path needs of Python: the AD trace class, the
/// trace stack (the list `core._state.stack`) and
/// `check_output(out)`, which checks an unusual output with the Python
/// path's rule and messages, and `run_elsewhere(closed, nonzeros,
/// inputs)`, which runs the value-and-grad program when a captured value
/// is not a host array (a `GpuArray`: the program runs on its device).
/// (`register_hooks(grad=(ad_trace, stack, check_output, run_elsewhere))`.)
pub(crate) fn register_grad_hooks(
    py: Python<'_>, ad_trace: Py<PyAny>, stack: Py<PyList>, check_output: Py<PyAny>,
    run_elsewhere: Py<PyAny>,
) -> PyResult<()> {
    let hooks = GradHooks {
        ad_trace,
        stack,
        check_output,
        run_elsewhere,
    };
    HOOKS.set(py, hooks)
}

fn hooks(py: Python<'_>) -> PyResult<&GradHooks> {
    HOOKS.get(py)
}

#[pyclass(frozen, dict, weakref, name = "GradFunction", module = "microjax_rs")]
pub struct GradFunction {
    fun: Py<PyAny>,
    fallback: Py<PyAny>,
    argnum: isize,
    /// `value_and_grad` (returns `(value, grad)`) rather than `grad`.
    with_value: bool,
    name: Py<PyString>,
}

impl GradFunction {
    /// The differentiated argument when the eager path applies to it.
    fn eager_arg<'py>(&self, args: &Bound<'py, PyTuple>) -> Option<(usize, Bound<'py, ArrayImpl>)> {
        let n = isize::try_from(args.len()).ok()?;
        let i = if self.argnum < 0 {
            self.argnum.checked_add(n)?
        } else {
            self.argnum
        };
        let i = usize::try_from(i).ok().filter(|&i| i < args.len())?;
        let a = args.get_item(i).ok()?.cast_into_exact::<ArrayImpl>().ok()?;
        let arr = a.get();
        (!arr.deleted() && arr.arr.dtype().is_float()).then_some((i, a))
    }

    fn run_eager<'py>(
        &self, py: Python<'py>, args: &Bound<'py, PyTuple>, i: usize, x: Bound<'py, ArrayImpl>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let hooks = hooks(py)?;
        let trace = hooks
            .ad_trace
            .bind(py)
            .call1((self.name.bind(py), py.None()))?
            .cast_into::<TraceBase>()?;
        // No source lines: Rust stages float arithmetic on its tracers.
        trace.get().set_record_source(false);
        trace.get().set_native(true);
        let builder = trace.get().builder.bind(py).clone();
        let traced = crate::traces::trace_ad(
            &trace,
            hooks.stack.bind(py),
            &[x.into_any()],
            None,
            |tracers| {
                let items = args.iter().enumerate().map(|(j, a)| {
                    if j == i {
                        tracers.first().cloned().unwrap_or(a)
                    } else {
                        a
                    }
                });
                let out = self.fun.bind(py).call1(PyTuple::new(py, items)?)?;
                if !is_scalar_float(&out, trace.as_any(), builder.get())? {
                    hooks.check_output.bind(py).call1((&out,))?;
                }
                Ok((vec![out], ()))
            },
        )?;
        // The program's inputs after `x` (values captured from enclosing
        // traces or device arrays) are never differentiated.
        let nonzeros: Vec<bool> = (0..traced.inputs.len()).map(|j| j == 0).collect();
        let on_host: Option<Vec<Arc<HostArray>>> = traced
            .inputs
            .iter()
            .map(|c| c.cast::<ArrayImpl>().ok().map(|a| a.get().arr.clone()))
            .collect();
        let (value, grad) = match on_host {
            Some(inputs) => {
                let mut res =
                    crate::transforms::run_value_and_grad(py, traced.closed, nonzeros, inputs)?
                        .into_iter();
                match (res.next(), res.next()) {
                    (Some(v), Some(g)) => {
                        (Bound::new(py, v)?.into_any(), Bound::new(py, g)?.into_any())
                    }
                    _ => return Err(too_few_outputs()),
                }
            }
            None => {
                let handle = Bound::new(
                    py,
                    PyClosedJaxpr {
                        inner: traced.closed,
                    },
                )?;
                let res = hooks.run_elsewhere.bind(py).call1((
                    handle,
                    nonzeros,
                    PyList::new(py, traced.inputs)?,
                ))?;
                let mut res = res.try_iter()?;
                match (res.next(), res.next()) {
                    (Some(v), Some(g)) => (v?, g?),
                    _ => return Err(too_few_outputs()),
                }
            }
        };
        if self.with_value {
            Ok(PyTuple::new(py, [value, grad])?.into_any())
        } else {
            Ok(grad)
        }
    }
}

fn too_few_outputs() -> PyErr {
    PyRuntimeError::new_err("grad: the program gave too few outputs")
}

/// Whether `out` is a rank-0 float tracer of `trace` (the output a scalar
/// loss normally is; anything else is checked by the Python rule).
fn is_scalar_float(
    out: &Bound<'_, PyAny>, trace: &Bound<'_, PyAny>, builder: &PyBuilder,
) -> PyResult<bool> {
    let Some(v) = Tracer::var_of(out, trace) else {
        return Ok(false);
    };
    let aval = builder.lock()?.aval(&Atom::Var(v)).py()?;
    Ok(aval.shape.is_empty() && aval.dtype.is_float())
}

#[pymethods]
impl GradFunction {
    /// `fallback(*args, **kwargs)` is the Python `grad_f`/`value_and_grad_f`
    /// of the same function; `argnum` an int `argnums`.
    #[new]
    fn py_new(
        fun: Py<PyAny>, fallback: Py<PyAny>, argnum: isize, with_value: bool, name: Py<PyString>,
    ) -> GradFunction {
        GradFunction {
            fun,
            fallback,
            argnum,
            with_value,
            name,
        }
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn __call__<'py>(
        &self, py: Python<'py>, args: &Bound<'py, PyTuple>, kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if kwargs.is_none_or(|k| k.is_empty()) && fast_eager() {
            if let Some((i, x)) = self.eager_arg(args) {
                return self.run_eager(py, args, i, x);
            }
        }
        self.fallback.bind(py).call(args, kwargs)
    }

    /// Method binding: `obj.f` is `functools.partial(f, obj)`.
    fn __get__<'py>(
        slf: &Bound<'py, Self>, obj: Option<&Bound<'py, PyAny>>,
        objtype: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let _ = objtype;
        crate::jit::bind_method(slf.as_any(), obj)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let kind = if self.with_value {
            "value_and_grad"
        } else {
            "grad"
        };
        format!("<{kind} of {}>", self.name.bind(py))
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.fun)?;
        visit.call(&self.fallback)?;
        visit.call(&self.name)
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<GradFunction>()?;
    Ok(())
}
