//! `GradFunction`: the call path of `grad(f)` / `value_and_grad(f)` with an
//! int `argnums` and no `has_aux`. A call at the eager level whose
//! differentiated argument is one float array runs here: the AD trace is
//! entered, `f` is called on a tracer (its float arithmetic staged natively,
//! see `tracer.rs`), the trace is left and the recorded program goes to
//! `value_and_grad_run`'s cache and executor — with Python entered only for
//! `f` itself and the trace object. Every other call goes to the Python
//! function (`_grad.py`), which is the reference; its checks and error
//! messages apply to anything unusual (a non-scalar output, say).

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

/// `interpreters.ad.ADTrace`, `core._state.stack`, `_grad._output_atom`
/// and `_grad._run_value_and_grad`.
struct GradHooks {
    ad_trace: Py<PyAny>,
    stack: Py<PyList>,
    output_atom: Py<PyAny>,
    run_elsewhere: Py<PyAny>,
}

static HOOKS: Registered<GradHooks> = Registered::new("the grad hooks are");

/// Registers what the eager path needs of Python: the AD trace class, the
/// trace stack (the list `core._state.stack`) and
/// `output_atom(trace, out)`, which checks an unusual output as the Python
/// path does and returns its atom, and `run_elsewhere(closed, nonzeros,
/// inputs)`, which runs the value-and-grad program when a captured value
/// is not a host array (a `GpuArray`: the program runs on its device).
/// (`register_hooks(grad=(ad_trace, stack, output_atom, run_elsewhere))`.)
pub(crate) fn register_grad_hooks(
    py: Python<'_>, ad_trace: Py<PyAny>, stack: Py<PyList>, output_atom: Py<PyAny>,
    run_elsewhere: Py<PyAny>,
) -> PyResult<()> {
    let hooks = GradHooks {
        ad_trace,
        stack,
        output_atom,
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

/// A trace entered by the eager path; leaving it (on every exit, errors
/// included) restores the trace stack and marks the trace dead.
struct Entered<'py> {
    trace: Bound<'py, TraceBase>,
    stack: Bound<'py, PyList>,
}

impl<'py> Entered<'py> {
    fn enter(trace: Bound<'py, TraceBase>, stack: Bound<'py, PyList>) -> PyResult<Self> {
        stack.append(&trace)?;
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
        if top.is_some_and(|t| t.is(&self.trace)) {
            self.stack.del_item(n.saturating_sub(1))?;
        }
        self.trace.get().set_alive(false);
        Ok(())
    }
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
        let base = hooks
            .ad_trace
            .bind(py)
            .call1((self.name.bind(py), py.None()))?
            .cast_into::<TraceBase>()?;
        // No source lines: Rust stages float arithmetic on its tracers.
        base.get().set_record_source(false);
        base.get().set_native(true);
        let trace = base.clone().into_any();
        let builder = base.get().builder.bind(py).clone();
        let stack = hooks.stack.bind(py).clone();
        let entered = Entered::enter(base.clone(), stack)?;
        let called = (|| -> PyResult<Bound<'py, PyAny>> {
            let tracer = crate::staging::input_tracer(builder.get(), &trace, x.get())?;
            let var = Tracer::var_of(&tracer, &trace)
                .ok_or_else(|| PyRuntimeError::new_err("grad: the input is not a tracer"))?;
            base.get().known.bind(py).set_item(var.0, &x)?;
            let items = args
                .iter()
                .enumerate()
                .map(|(j, a)| if j == i { tracer.clone() } else { a });
            self.fun.bind(py).call1(PyTuple::new(py, items)?)
        })();
        entered.leave()?;
        let out = called?;
        let atom = match scalar_float_var(&out, &trace, builder.get())? {
            Some(v) => Atom::Var(v),
            None => crate::ir::atom_from_py(&hooks.output_atom.bind(py).call1((&trace, &out))?)?,
        };
        let closed = Arc::new(builder.get().lock()?.build(vec![atom]).py()?);
        // Values captured from enclosing traces or device arrays: the
        // program's inputs after `x`, never differentiated.
        let captures: Vec<Bound<'py, PyAny>> = base.get().captures.bind(py).iter().collect();
        let nonzeros: Vec<bool> = std::iter::once(true)
            .chain(captures.iter().map(|_| false))
            .collect();
        let on_host: Option<Vec<Arc<HostArray>>> = std::iter::once(Some(x.get().arr.clone()))
            .chain(
                captures
                    .iter()
                    .map(|c| c.cast::<ArrayImpl>().ok().map(|a| a.get().arr.clone())),
            )
            .collect();
        let (value, grad) = match on_host {
            Some(inputs) => {
                let mut res = crate::transforms::run_value_and_grad(py, closed, nonzeros, inputs)?
                    .into_iter();
                match (res.next(), res.next()) {
                    (Some(v), Some(g)) => {
                        (Bound::new(py, v)?.into_any(), Bound::new(py, g)?.into_any())
                    }
                    _ => return Err(too_few_outputs()),
                }
            }
            None => {
                let inputs = std::iter::once(x.into_any()).chain(captures);
                let handle = Bound::new(py, PyClosedJaxpr { inner: closed })?;
                let res = hooks.run_elsewhere.bind(py).call1((
                    handle,
                    nonzeros,
                    PyList::new(py, inputs)?,
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

/// `out`'s variable when it is a rank-0 float tracer of `trace` (the
/// output a scalar loss normally is).
fn scalar_float_var(
    out: &Bound<'_, PyAny>, trace: &Bound<'_, PyAny>, builder: &PyBuilder,
) -> PyResult<Option<microjax::Var>> {
    let Some(v) = Tracer::var_of(out, trace) else {
        return Ok(None);
    };
    let aval = builder.lock()?.aval(&Atom::Var(v)).py()?;
    Ok((aval.shape.is_empty() && aval.dtype.is_float()).then_some(v))
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
