//! `core.Tracer` as a Rust class, and the fully native path of a traced
//! operation in an eager AD trace (`grad`/`jvp` called on concrete values).
//!
//! The class holds the three fields every trace reads (`_trace`, `_var`,
//! `aval`); the Python side attaches its methods (conversions, `__repr__`,
//! `__getattr__`, the other operators) to it at import. Making tracers here,
//! instead of through a Python `__init__`, and reading their fields without
//! attribute lookups, is most of the saving.
//!
//! A trace that records no source lines may be marked native
//! (`TraceBase.native`); entered (`trace_enter(trace)`), while it is innermost,
//! `jnp` unary functions and the `+ - * /` operators on two float tracers of
//! that trace with one aval stage their equation here, with the same record
//! `ADTrace.process_primitive` makes, without entering Python at all. Every
//! other case goes to the Python path, which stays the reference.

use crate::traces::TraceBase;
use crate::CoreResultExt;
use crate::Registered;
use microjax::{Atom, Aval, Primitive, Var};
use pyo3::exceptions::PyRuntimeError;
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use pyo3::PyTraverseError;
use std::cell::RefCell;

/// A value inside a trace: its trace, its builder variable and its aval.
#[pyclass(frozen, weakref, name = "Tracer", module = "microjax_rs.core")]
pub(crate) struct Tracer {
    trace: Py<PyAny>,
    var: u32,
    aval: Py<PyAny>,
    /// The aval's dtype is a float (the operators' native path).
    float: bool,
}

impl Tracer {
    pub(crate) fn new_bound<'py>(
        py: Python<'py>, trace: &Bound<'py, PyAny>, var: Var, aval_obj: Bound<'py, PyAny>,
        aval: &Aval,
    ) -> PyResult<Bound<'py, PyAny>> {
        let t = Tracer {
            trace: trace.clone().unbind(),
            var: var.0,
            aval: aval_obj.unbind(),
            float: aval.dtype.is_float(),
        };
        Ok(Bound::new(py, t)?.into_any())
    }

    /// Whether `x` is a tracer whose aval's dtype is a float.
    pub(crate) fn is_float_tracer(x: &Bound<'_, PyAny>) -> bool {
        x.cast_exact::<Tracer>().is_ok_and(|t| t.get().float)
    }

    /// The variable of `x` when it is a tracer of `trace`.
    pub(crate) fn var_of(x: &Bound<'_, PyAny>, trace: &Bound<'_, PyAny>) -> Option<Var> {
        let t = x.cast_exact::<Tracer>().ok()?.get();
        t.trace.is(trace).then_some(Var(t.var))
    }
}

/// The binary operators with a native path, in `BinaryOp` order.
#[derive(Clone, Copy)]
enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
}

/// What the native paths need of Python: the `lax` primitive objects of the
/// binary operators (for the AD record) with their core primitives, and the
/// Python operator functions every other case goes to.
struct OperatorTable {
    prims: [(Py<PyAny>, Primitive); 4],
    /// `__add__`, `__radd__`, `__sub__`, `__rsub__`, ... in `BinaryOp` order.
    fallbacks: [(Py<PyAny>, Py<PyAny>); 4],
}

static OPERATORS: Registered<OperatorTable> = Registered::new("the tracer operators are");

const OP_NAMES: [&str; 4] = ["add", "sub", "mul", "truediv"];

/// Registers the operator table: `prims[name] = (lax primitive, core Prim)`
/// for add/sub/mul/div, `fallbacks["__add__"]` etc. for the Python path
/// (`register_hooks(tracer_operators=(prims, fallbacks))`).
pub(crate) fn register_tracer_operators(
    py: Python<'_>, prims: &Bound<'_, PyDict>, fallbacks: &Bound<'_, PyDict>,
) -> PyResult<()> {
    let prim_of = |name: &str| -> PyResult<(Py<PyAny>, Primitive)> {
        let key = if name == "truediv" { "div" } else { name };
        let item = prims
            .get_item(key)?
            .ok_or_else(|| PyRuntimeError::new_err(format!("no primitive for `{key}`")))?;
        let (p, h): (Bound<'_, PyAny>, PyRef<'_, crate::prim::Prim>) = item.extract()?;
        Ok((p.unbind(), h.prim.clone()))
    };
    let fallback_of = |name: String| -> PyResult<Py<PyAny>> {
        fallbacks
            .get_item(&name)?
            .map(Bound::unbind)
            .ok_or_else(|| PyRuntimeError::new_err(format!("no fallback for `{name}`")))
    };
    let mut p = Vec::with_capacity(4);
    let mut f = Vec::with_capacity(4);
    for name in OP_NAMES {
        p.push(prim_of(name)?);
        f.push((
            fallback_of(format!("__{name}__"))?,
            fallback_of(format!("__r{name}__"))?,
        ));
    }
    let table = OperatorTable {
        prims: p
            .try_into()
            .map_err(|_| PyRuntimeError::new_err("operator table size"))?,
        fallbacks: f
            .try_into()
            .map_err(|_| PyRuntimeError::new_err("operator table size"))?,
    };
    OPERATORS.set(py, table)
}

fn operators(py: Python<'_>) -> PyResult<&OperatorTable> {
    OPERATORS.get(py)
}

thread_local! {
    /// Per entered trace (innermost last): the trace when it is native.
    static CONTEXTS: RefCell<Vec<Option<Py<TraceBase>>>> = const { RefCell::new(Vec::new()) };
}

/// Enters `trace` (any object; a native `TraceBase` stages natively).
pub(crate) fn push_context(trace: Option<&Bound<'_, PyAny>>) {
    let native = trace
        .and_then(|t| t.cast::<TraceBase>().ok())
        .filter(|t| t.get().is_native())
        .map(|t| t.clone().unbind());
    CONTEXTS.with(|c| c.borrow_mut().push(native));
}

pub(crate) fn pop_context() -> Option<Py<TraceBase>> {
    CONTEXTS.with(|c| c.borrow_mut().pop()).flatten()
}

/// The innermost trace when it is native and is `trace`.
fn innermost_context(py: Python<'_>, trace: &Py<PyAny>) -> Option<Py<TraceBase>> {
    CONTEXTS.with(|c| {
        let stack = c.try_borrow().ok()?;
        let ctx = stack.last()?.as_ref()?;
        ctx.is(trace).then(|| ctx.clone_ref(py))
    })
}

/// Stages `prim` on operands that are all tracers of the native trace
/// `ctx` and records it as `ADTrace.process_primitive` does:
/// `eqn_of[out] = (lax primitive, {}, args, [out])`.
fn stage_native<'py>(
    py: Python<'py>, ctx: &Bound<'py, TraceBase>, prim: &Primitive, lax_prim: &Py<PyAny>,
    args: Bound<'py, PyTuple>, vars: Vec<Var>,
) -> PyResult<Bound<'py, PyAny>> {
    let atoms = vars.into_iter().map(Atom::Var).collect();
    let base = ctx.get();
    let (outs, avals) = crate::staging::add_eqn(base.builder.get(), prim.clone(), atoms, None)?;
    let (Some(&out), Some(aval), 1) = (outs.first(), avals.first(), outs.len()) else {
        return Err(PyRuntimeError::new_err(format!(
            "{} staged {} outputs natively",
            prim.name(),
            outs.len()
        )));
    };
    let trace = ctx.as_any();
    let tracer = Tracer::new_bound(py, trace, out, crate::staging::aval_object(py, aval)?, aval)?;
    crate::staging::record_eqn(
        base.eqn_of.bind(py),
        lax_prim.bind(py).clone(),
        PyDict::new(py).into_any(),
        args,
        &[out],
    )?;
    Ok(tracer)
}

/// The native path of a unary `jnp` function on `x`, if it applies.
pub(crate) fn stage_unary<'py>(
    x: &Bound<'py, PyAny>, prim: &Primitive, lax_prim: &Py<PyAny>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = x.py();
    let Ok(t) = x.cast_exact::<Tracer>() else {
        return Ok(None);
    };
    let tr = t.get();
    if !tr.float {
        return Ok(None);
    }
    let Some(ctx) = innermost_context(py, &tr.trace) else {
        return Ok(None);
    };
    let args = PyTuple::new(py, [x])?;
    stage_native(py, ctx.bind(py), prim, lax_prim, args, vec![Var(tr.var)]).map(Some)
}

impl Tracer {
    fn binary(
        slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>, op: BinaryOp, reflected: bool,
    ) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let table = operators(py)?;
        let i = op as usize;
        if let Some(out) = Self::binary_native(slf, other, table, i, reflected)? {
            return Ok(out.unbind());
        }
        let (fwd, rev) = table
            .fallbacks
            .get(i)
            .ok_or_else(|| PyRuntimeError::new_err("operator index"))?;
        let f = if reflected { rev } else { fwd };
        f.call1(py, (slf, other))
    }

    fn binary_native<'py>(
        slf: &Bound<'py, Self>, other: &Bound<'py, PyAny>, table: &OperatorTable, i: usize,
        reflected: bool,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = slf.py();
        let me = slf.get();
        let Ok(o) = other.cast_exact::<Tracer>() else {
            return Ok(None);
        };
        let ot = o.get();
        if !me.float || !ot.trace.is(&me.trace) || !ot.aval.is(&me.aval) {
            return Ok(None);
        }
        let Some(ctx) = innermost_context(py, &me.trace) else {
            return Ok(None);
        };
        let Some((lax_prim, prim)) = table.prims.get(i) else {
            return Ok(None);
        };
        let (a, b) = if reflected {
            (other.clone(), slf.clone().into_any())
        } else {
            (slf.clone().into_any(), other.clone())
        };
        let vars = vec![
            Var(a.cast_exact::<Tracer>()?.get().var),
            Var(b.cast_exact::<Tracer>()?.get().var),
        ];
        let args = PyTuple::new(py, [a, b])?;
        stage_native(py, ctx.bind(py), prim, lax_prim, args, vars).map(Some)
    }
}

#[pymethods]
impl Tracer {
    /// A tracer of variable `var` of `trace`'s builder with the Python aval
    /// `aval`; whether it is a float comes from the builder's own aval.
    #[new]
    fn py_new(trace: &Bound<'_, PyAny>, var: u32, aval: &Bound<'_, PyAny>) -> PyResult<Tracer> {
        let float = match trace.cast::<TraceBase>() {
            Ok(t) => {
                let builder = t.get().builder.bind(trace.py()).get();
                let dtype = builder.lock()?.aval(&Atom::Var(Var(var))).py()?.dtype;
                dtype.is_float()
            }
            Err(_) => false,
        };
        Ok(Tracer {
            trace: trace.clone().unbind(),
            var,
            aval: aval.clone().unbind(),
            float,
        })
    }

    /// A tracer refers to its trace, whose records refer to its tracers:
    /// the collector must see the edge (the fields never change, so there
    /// is nothing to clear; the trace's dicts break the cycle).
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.trace)?;
        visit.call(&self.aval)
    }

    #[getter]
    fn _trace(&self, py: Python<'_>) -> Py<PyAny> {
        self.trace.clone_ref(py)
    }

    #[getter]
    fn _var(&self) -> u32 {
        self.var
    }

    #[getter]
    fn aval(&self, py: Python<'_>) -> Py<PyAny> {
        self.aval.clone_ref(py)
    }

    fn __add__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Self::binary(slf, other, BinaryOp::Add, false)
    }

    fn __radd__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Self::binary(slf, other, BinaryOp::Add, true)
    }

    fn __sub__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Self::binary(slf, other, BinaryOp::Sub, false)
    }

    fn __rsub__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Self::binary(slf, other, BinaryOp::Sub, true)
    }

    fn __mul__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Self::binary(slf, other, BinaryOp::Mul, false)
    }

    fn __rmul__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Self::binary(slf, other, BinaryOp::Mul, true)
    }

    fn __truediv__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Self::binary(slf, other, BinaryOp::Div, false)
    }

    fn __rtruediv__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Self::binary(slf, other, BinaryOp::Div, true)
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Tracer>()?;
    Ok(())
}
