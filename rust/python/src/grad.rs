//! `GradFunction`: what `grad(f)` and `value_and_grad(f)` return, and the
//! one implementation of their call path, for every argument form (one
//! array, pytrees, `argnums` tuples, `has_aux`, `holomorphic`, integer
//! inputs with `allow_int`, calls inside other traces).
//!
//! A call picks the differentiated leaves (one float array or tracer at an
//! int `argnums` is taken as it is; any other form is flattened and checked
//! by `prepare`, the Python rule with JAX's messages), traces `f` with
//! `traces::trace_ad` (the one AD tracing routine), checks the output, runs
//! the value-and-grad program and arranges the result. Python is entered
//! only for `f` itself, the AD trace object and what must stay Python: the
//! pytree flattening and the error messages (`prepare`, `finish_output`),
//! the run of a program one trace level down or on a device (`run`) and
//! the gradient pytree (`grads`). At the eager level with host inputs the
//! program runs here (`transforms::run_value_and_grad`).

use crate::array::ArrayImpl;
use crate::globals::fast_eager;
use crate::ir::{PyBuilder, PyClosedJaxpr};
use crate::jit::MethodWrapper;
use crate::tracer::Tracer;
use crate::traces::TraceBase;
use crate::{CoreResultExt, Registered};
use microjax::{Atom, HostArray};
use pyo3::exceptions::PyRuntimeError;
use pyo3::gc::PyVisit;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyList, PyString, PyTuple};
use pyo3::PyTraverseError;
use std::sync::Arc;

/// What the grad path needs of Python (`_grad.py` registers them).
struct GradHooks {
    /// `interpreters.ad.ADTrace`: `ADTrace(name, parent)`.
    ad_trace: Py<PyAny>,
    /// `ADTrace.new_input(trace, value)`: an input that is not an array.
    new_input: Py<PyAny>,
    /// The per-thread trace state (`core._state`, a `threading.local`):
    /// its `stack` is the calling thread's trace stack.
    state: Py<PyAny>,
    /// `prepare(args, argnums, allow_int, holomorphic)` -> `(single,
    /// leaves, tree, nonzeros, rebuild)`; `rebuild(tracers)` gives the
    /// arguments to call `f` with.
    prepare: Py<PyAny>,
    /// `finish_output(trace, out, has_aux, holomorphic)` -> `(output,
    /// lowered aux)`, checked to be a scalar of the right dtype.
    finish_output: Py<PyAny>,
    /// `run(level, closed, nonzeros, inputs)` -> `[value, *cotangents]`
    /// at trace `level` (None: eager, where the inputs are).
    run: Py<PyAny>,
    /// `grads(tree, leaves, nonzeros, cotangents, single)`: the gradient
    /// pytree (float0 zeros for integer leaves).
    grads: Py<PyAny>,
}

static HOOKS: Registered<GradHooks> = Registered::new("the grad hooks are");

/// `register_hooks(grad=(ad_trace, new_input, state, prepare,
/// finish_output, run, grads))` (see `GradHooks`).
pub(crate) fn register_grad_hooks(py: Python<'_>, hooks: &Bound<'_, PyAny>) -> PyResult<()> {
    HOOKS.check_unset(py)?;
    #[allow(clippy::type_complexity)]
    let (ad_trace, new_input, state, prepare, finish_output, run, grads): (
        Py<PyAny>,
        Py<PyAny>,
        Py<PyAny>,
        Py<PyAny>,
        Py<PyAny>,
        Py<PyAny>,
        Py<PyAny>,
    ) = hooks.extract()?;
    let hooks = GradHooks {
        ad_trace,
        new_input,
        state,
        prepare,
        finish_output,
        run,
        grads,
    };
    HOOKS.set(py, hooks)
}

/// The options of `grad`/`value_and_grad` a `GradFunction` was made with.
#[derive(Clone, Copy)]
struct Options {
    has_aux: bool,
    holomorphic: bool,
    allow_int: bool,
    /// `value_and_grad` (returns `(value, grad)`) rather than `grad`.
    with_value: bool,
}

#[pyclass(frozen, extends = MethodWrapper, name = "GradFunction", module = "microjax_rs")]
pub struct GradFunction {
    fun: Py<PyAny>,
    /// `argnums` as given (an int or a sequence of ints).
    argnums: Py<PyAny>,
    /// `argnums` when it is an int.
    argnum: Option<isize>,
    opts: Options,
    name: Py<PyString>,
}

/// The differentiated leaves of one call and how `f`'s arguments are made
/// of their tracers.
enum Leaves<'py> {
    /// One float array, tracer or Python float: argument `index`.
    One {
        index: usize,
        leaf: Bound<'py, PyAny>,
    },
    /// Any other form, flattened by `prepare`.
    Tree {
        single: Bound<'py, PyAny>,
        leaves: Vec<Bound<'py, PyAny>>,
        tree: Bound<'py, PyAny>,
        nonzeros: Vec<bool>,
        rebuild: Bound<'py, PyAny>,
    },
}

impl<'py> Leaves<'py> {
    fn primals(&self) -> Vec<Bound<'py, PyAny>> {
        match self {
            Leaves::One { leaf, .. } => vec![leaf.clone()],
            Leaves::Tree { leaves, .. } => leaves.clone(),
        }
    }

    /// Which primals are differentiated.
    fn nonzeros(&self) -> Vec<bool> {
        match self {
            Leaves::One { .. } => vec![true],
            Leaves::Tree { nonzeros, .. } => nonzeros.clone(),
        }
    }

    /// `f`'s positional arguments: `args` with the tracers in place.
    fn call_args(
        &self, args: &Bound<'py, PyTuple>, tracers: Vec<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let py = args.py();
        match self {
            Leaves::One { index, .. } => {
                let mut tracer = tracers.into_iter().next();
                let items = args.iter().enumerate().map(|(j, a)| match &mut tracer {
                    Some(_) if j == *index => tracer.take().unwrap_or(a),
                    _ => a,
                });
                PyTuple::new(py, items)
            }
            Leaves::Tree { rebuild, .. } => {
                let new_args = rebuild.call1((PyList::new(py, tracers)?,))?;
                PyTuple::new(py, new_args.try_iter()?.collect::<PyResult<Vec<_>>>()?)
            }
        }
    }

    /// The gradient of the differentiated arguments from the cotangents.
    fn grads(
        &self, hooks: &GradHooks, cotangents: Vec<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        match self {
            Leaves::One { .. } => cotangents.into_iter().next().ok_or_else(too_few_outputs),
            Leaves::Tree {
                single,
                leaves,
                tree,
                nonzeros,
                ..
            } => {
                let py = single.py();
                hooks.grads.bind(py).call1((
                    tree,
                    PyList::new(py, leaves)?,
                    nonzeros.clone(),
                    PyList::new(py, cotangents)?,
                    single,
                ))
            }
        }
    }
}

impl GradFunction {
    /// The differentiated argument when it is one float array, tracer or
    /// Python float at an int `argnums` (no pytree work, no dtype check
    /// needed).
    fn one_float_leaf<'py>(&self, args: &Bound<'py, PyTuple>) -> Option<Leaves<'py>> {
        if self.opts.holomorphic {
            return None;
        }
        let argnum = self.argnum?;
        let n = isize::try_from(args.len()).ok()?;
        let i = if argnum < 0 {
            argnum.checked_add(n)?
        } else {
            argnum
        };
        let index = usize::try_from(i).ok().filter(|&i| i < args.len())?;
        let leaf = args.get_item(index).ok()?;
        let float = match leaf.cast_exact::<ArrayImpl>() {
            Ok(a) => a.get().arr.dtype().is_float(),
            Err(_) => leaf.is_exact_instance_of::<PyFloat>() || Tracer::is_float_tracer(&leaf),
        };
        float.then_some(Leaves::One { index, leaf })
    }

    fn leaves<'py>(&self, hooks: &GradHooks, args: &Bound<'py, PyTuple>) -> PyResult<Leaves<'py>> {
        if let Some(one) = self.one_float_leaf(args) {
            return Ok(one);
        }
        let py = args.py();
        let prepared = hooks.prepare.bind(py).call1((
            args,
            self.argnums.bind(py),
            self.opts.allow_int,
            self.opts.holomorphic,
        ))?;
        let (single, leaves, tree, nonzeros, rebuild) = prepared.extract()?;
        Ok(Leaves::Tree {
            single,
            leaves,
            tree,
            nonzeros,
            rebuild,
        })
    }

    /// `f`'s output and aux (lowered one level down), checked: a rank-0
    /// float tracer of `trace` passes at once, anything else (and every
    /// `has_aux` or `holomorphic` output) goes through `finish_output`.
    fn finish_output<'py>(
        &self, hooks: &GradHooks, trace: &Bound<'py, TraceBase>, out: Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let py = trace.py();
        let plain = !self.opts.has_aux && !self.opts.holomorphic;
        if plain && is_scalar_float(&out, trace.as_any(), trace.get().builder.bind(py).get())? {
            return Ok((out, py.None().into_bound(py)));
        }
        hooks
            .finish_output
            .bind(py)
            .call1((trace, out, self.opts.has_aux, self.opts.holomorphic))?
            .extract()
    }

    fn call<'py>(
        &self, py: Python<'py>, args: &Bound<'py, PyTuple>, kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let hooks = HOOKS.get(py)?;
        let stack = hooks
            .state
            .bind(py)
            .getattr(intern!(py, "stack"))?
            .cast_into::<PyList>()?;
        let stack = &stack;
        let parent = match stack.len().checked_sub(1) {
            Some(top) => stack.get_item(top)?,
            None => py.None().into_bound(py),
        };
        let leaves = self.leaves(hooks, args)?;
        let trace = hooks
            .ad_trace
            .bind(py)
            .call1((self.name.bind(py), &parent))?
            .cast_into::<TraceBase>()?;
        if parent.is_none() {
            trace.get().make_private();
        }
        let traced = crate::traces::trace_ad(
            &trace,
            stack,
            &leaves.primals(),
            Some(hooks.new_input.bind(py)),
            |tracers| {
                let out = self
                    .fun
                    .bind(py)
                    .call(leaves.call_args(args, tracers)?, kwargs)?;
                let (out, aux) = self.finish_output(hooks, &trace, out)?;
                Ok((vec![out], aux))
            },
        )?;
        // The program's inputs after the primals (values captured from
        // enclosing traces or device arrays) are never differentiated.
        let mut nonzeros = leaves.nonzeros();
        nonzeros.resize(traced.inputs.len(), false);
        let mut res = run(py, hooks, &parent, traced.closed, nonzeros, traced.inputs)?.into_iter();
        let value = res.next().ok_or_else(too_few_outputs)?;
        let grad = leaves.grads(hooks, res.collect())?;
        let aux = traced.extra;
        let out = match (self.opts.with_value, self.opts.has_aux) {
            (true, true) => PyTuple::new(py, [PyTuple::new(py, [value, aux])?.into_any(), grad])?,
            (true, false) => PyTuple::new(py, [value, grad])?,
            (false, true) => PyTuple::new(py, [grad, aux])?,
            (false, false) => return Ok(grad),
        };
        Ok(out.into_any())
    }
}

/// `[value, *cotangents]` of the value-and-grad program of `closed` on
/// `inputs`: here for an eager call on host arrays, else by the `run` hook
/// (one trace level down, or on the device a `GpuArray` input is on).
fn run<'py>(
    py: Python<'py>, hooks: &GradHooks, parent: &Bound<'py, PyAny>,
    closed: Arc<microjax::ClosedJaxpr>, nonzeros: Vec<bool>, inputs: Vec<Bound<'py, PyAny>>,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    if parent.is_none() && fast_eager() {
        let on_host: Option<Vec<Bound<'py, ArrayImpl>>> = inputs
            .iter()
            .map(|c| c.cast::<ArrayImpl>().ok().cloned())
            .collect();
        if let Some(arrays) = on_host {
            let mut host: Vec<Arc<HostArray>> = Vec::with_capacity(arrays.len());
            for a in &arrays {
                a.get().check_live()?;
                host.push(a.get().arr.clone());
            }
            return crate::transforms::run_value_and_grad(py, closed, nonzeros, host)?
                .into_iter()
                .map(|a| Ok(Bound::new(py, a)?.into_any()))
                .collect();
        }
    }
    let handle = Bound::new(py, PyClosedJaxpr { inner: closed })?;
    hooks
        .run
        .bind(py)
        .call1((parent, handle, nonzeros, PyList::new(py, inputs)?))?
        .try_iter()?
        .collect()
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
    /// `GradFunction(fun, argnums, has_aux, holomorphic, allow_int,
    /// with_value, name)`: `grad(fun, ...)` (or `value_and_grad` with
    /// `with_value`).
    #[new]
    #[allow(clippy::too_many_arguments)]
    fn py_new(
        fun: Py<PyAny>, argnums: &Bound<'_, PyAny>, has_aux: bool, holomorphic: bool,
        allow_int: bool, with_value: bool, name: Py<PyString>,
    ) -> PyClassInitializer<GradFunction> {
        let argnum = if argnums.is_exact_instance_of::<pyo3::types::PyInt>() {
            argnums.extract::<isize>().ok()
        } else {
            None
        };
        let opts = Options {
            has_aux,
            holomorphic,
            allow_int,
            with_value,
        };
        PyClassInitializer::from(MethodWrapper).add_subclass(GradFunction {
            fun,
            argnums: argnums.clone().unbind(),
            argnum,
            opts,
            name,
        })
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn __call__<'py>(
        &self, py: Python<'py>, args: &Bound<'py, PyTuple>, kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.call(py, args, kwargs)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let kind = if self.opts.with_value {
            "value_and_grad"
        } else {
            "grad"
        };
        format!("<{kind} of {}>", self.name.bind(py))
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.fun)?;
        visit.call(&self.argnums)?;
        visit.call(&self.name)
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<GradFunction>()?;
    Ok(())
}
