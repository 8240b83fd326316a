//! Primitives whose rules are written in Python (`core.Primitive` with
//! `def_abstract_eval`, `def_impl`, `ad.primitive_jvps`, ...): the core's
//! [`RuleProvider`] around a Python rules object.
//!
//! The rules object (`interpreters/user_rules.py`) has one method per rule:
//! `abstract_eval(avals, params)`, `impl(arrays, params, out_avals)`,
//! `jvp(primal_avals, tangent_avals, params)`, `transpose(operands, ct_avals,
//! params)` and `batch(avals, dims, size, params)`; each returns `None` for a
//! missing rule. The jvp, transpose and batch methods trace the user's rule
//! with the Python tracer and return a closed jaxpr. Answers are cached here
//! per (pattern, params), bounded; the cache lock is never held while Python
//! runs. A Python exception raised by a rule reaches the caller unchanged
//! (through the same slot as host callbacks').

use crate::array::ArrayImpl;
use crate::callback::fail;
use crate::dtypes::{dtype_from_py, np_dtype_type};
use crate::ir::py_to_aval;
use crate::prim::{jaxpr_handle, param_to_py, Prim};
use crate::staging::aval_object;
use crate::CoreResultExt;
use microjax::prims::dynamic::{BatchedRule, DynamicPrim, OperandType, RuleProvider};
use microjax::prims::params::{Opaque, OpaqueValue};
use microjax::{Aval, ClosedJaxpr, Error, HostArray, Param, Primitive, Result};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Cached answers at most (the whole cache is dropped when full).
const CACHE_LIMIT: usize = 512;

/// What a cached answer is for: the rule and the operand pattern.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Pattern {
    Abstract(Vec<Aval>),
    Jvp(Vec<Aval>, Vec<Option<Aval>>),
    Transpose(Vec<OperandType>, Vec<Option<Aval>>),
    Batch(Vec<Aval>, Vec<Option<usize>>, usize),
}

#[derive(Debug, Clone)]
enum Answer {
    Avals(Vec<Aval>),
    Jaxpr(Arc<ClosedJaxpr>),
    Batch(BatchedRule),
}

type Params = Vec<(&'static str, Param)>;

#[derive(Default)]
struct Cache {
    entries: HashMap<Pattern, Vec<(Params, Answer)>>,
    len: usize,
}

/// The rules of one Python primitive.
pub(crate) struct PyRuleProvider {
    rules: Py<PyAny>,
    cache: Mutex<Cache>,
}

impl std::fmt::Debug for PyRuleProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PyRuleProvider")
    }
}

impl PyRuleProvider {
    fn lookup(&self, pattern: &Pattern, params: &[(&'static str, Param)]) -> Option<Answer> {
        let guard = self.cache.lock().ok()?;
        guard
            .entries
            .get(pattern)?
            .iter()
            .find(|(p, _)| p.as_slice() == params)
            .map(|(_, a)| a.clone())
    }

    fn insert(&self, pattern: Pattern, params: &[(&'static str, Param)], answer: Answer) {
        if let Ok(mut guard) = self.cache.lock() {
            if guard.len >= CACHE_LIMIT {
                guard.entries.clear();
                guard.len = 0;
            }
            guard
                .entries
                .entry(pattern)
                .or_default()
                .push((params.to_vec(), answer));
            guard.len = guard.len.saturating_add(1);
        }
    }

    fn clear(&self) {
        if let Ok(mut guard) = self.cache.lock() {
            guard.entries.clear();
            guard.len = 0;
        }
    }

    /// The cached answer for `pattern`, or the Python rule method `rule`
    /// called (with no lock held) on `args(py, params)` and its result read
    /// by `read`, cached; `None` where the method returns None (no rule).
    fn ask(
        &self, pattern: Pattern, prim: &DynamicPrim, rule: &str,
        args: impl for<'py> FnOnce(Python<'py>, Bound<'py, PyDict>) -> PyResult<Bound<'py, PyTuple>>,
        read: impl FnOnce(&Bound<'_, PyAny>) -> PyResult<Answer>,
    ) -> Result<Option<Answer>> {
        if let Some(hit) = self.lookup(&pattern, prim.params()) {
            return Ok(Some(hit));
        }
        let answer = Python::attach(|py| -> PyResult<Option<Answer>> {
            let params = params_dict(py, prim)?;
            let out = self.rules.bind(py).call_method1(rule, args(py, params)?)?;
            if out.is_none() {
                return Ok(None);
            }
            read(&out).map(Some)
        })
        .map_err(fail)?;
        if let Some(a) = &answer {
            self.insert(pattern, prim.params(), a.clone());
        }
        Ok(answer)
    }

    /// [`Self::ask`] of a rule method that traces the user's rule and
    /// returns a closed jaxpr.
    fn jaxpr_rule(
        &self, pattern: Pattern, prim: &DynamicPrim, rule: &str,
        args: impl for<'py> FnOnce(Python<'py>, Bound<'py, PyDict>) -> PyResult<Bound<'py, PyTuple>>,
    ) -> Result<Option<Arc<ClosedJaxpr>>> {
        let answer = self.ask(pattern, prim, rule, args, |out| {
            Ok(Answer::Jaxpr(closed_from(out, rule)?))
        })?;
        answer_of(prim, answer, |a| match a {
            Answer::Jaxpr(j) => Some(j),
            _ => None,
        })
    }
}

fn params_dict<'py>(py: Python<'py>, prim: &DynamicPrim) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in prim.params() {
        d.set_item(*k, param_to_py(py, v)?)?;
    }
    Ok(d)
}

fn avals_list<'py>(py: Python<'py>, avals: &[Aval]) -> PyResult<Bound<'py, PyList>> {
    let objs = avals
        .iter()
        .map(|a| aval_object(py, a))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, objs)
}

fn opt_avals_list<'py>(py: Python<'py>, avals: &[Option<Aval>]) -> PyResult<Bound<'py, PyList>> {
    let objs = avals
        .iter()
        .map(|a| match a {
            Some(a) => aval_object(py, a),
            None => Ok(py.None().into_bound(py)),
        })
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, objs)
}

fn closed_from(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Arc<ClosedJaxpr>> {
    jaxpr_handle(obj).ok_or_else(|| {
        PyTypeError::new_err(format!("the {what} rule tracer returned no ClosedJaxpr"))
    })
}

impl RuleProvider for PyRuleProvider {
    fn abstract_eval(&self, prim: &DynamicPrim, ins: &[Aval]) -> Result<Option<Vec<Aval>>> {
        let answer = self.ask(
            Pattern::Abstract(ins.to_vec()),
            prim,
            "abstract_eval",
            |py, params| (avals_list(py, ins)?, params).into_pyobject(py),
            |out| {
                let avals = out
                    .try_iter()?
                    .map(|a| py_to_aval(&a?))
                    .collect::<PyResult<Vec<Aval>>>()?;
                Ok(Answer::Avals(avals))
            },
        )?;
        answer_of(prim, answer, |a| match a {
            Answer::Avals(a) => Some(a),
            _ => None,
        })
    }

    fn kernel(
        &self, prim: &DynamicPrim, args: &[&HostArray], outs: &[Aval],
    ) -> Result<Option<Vec<HostArray>>> {
        Python::attach(|py| -> PyResult<Option<Vec<HostArray>>> {
            let arrays = args
                .iter()
                .map(|a| Bound::new(py, ArrayImpl::new(Arc::new((*a).clone()), false)))
                .collect::<PyResult<Vec<_>>>()?;
            let out = self.rules.bind(py).call_method1(
                "impl",
                (
                    PyList::new(py, arrays)?,
                    params_dict(py, prim)?,
                    avals_list(py, outs)?,
                ),
            )?;
            if out.is_none() {
                return Ok(None);
            }
            let items: Vec<Bound<'_, PyAny>> = out.try_iter()?.collect::<PyResult<_>>()?;
            let arrays = items
                .iter()
                .map(|x| {
                    let arr = x.cast::<ArrayImpl>()?;
                    let arr = arr.borrow();
                    arr.check_live()?;
                    Ok((*arr.arr).clone())
                })
                .collect::<PyResult<Vec<HostArray>>>()?;
            Ok(Some(arrays))
        })
        .map_err(fail)
    }

    fn jvp(
        &self, prim: &DynamicPrim, primals: &[Aval], tangents: &[Option<Aval>],
    ) -> Result<Option<Arc<ClosedJaxpr>>> {
        let pattern = Pattern::Jvp(primals.to_vec(), tangents.to_vec());
        self.jaxpr_rule(pattern, prim, "jvp", |py, params| {
            (
                avals_list(py, primals)?,
                opt_avals_list(py, tangents)?,
                params,
            )
                .into_pyobject(py)
        })
    }

    fn transpose(
        &self, prim: &DynamicPrim, operands: &[OperandType], cts: &[Option<Aval>],
    ) -> Result<Option<Arc<ClosedJaxpr>>> {
        let pattern = Pattern::Transpose(operands.to_vec(), cts.to_vec());
        self.jaxpr_rule(pattern, prim, "transpose", |py, params| {
            let ops = operands
                .iter()
                .map(|op| {
                    let (linear, aval) = match op {
                        OperandType::Known(a) => (false, a),
                        OperandType::Linear(a) => (true, a),
                    };
                    PyTuple::new(
                        py,
                        [
                            linear.into_pyobject(py)?.to_owned().into_any(),
                            aval_object(py, aval)?,
                        ],
                    )
                })
                .collect::<PyResult<Vec<_>>>()?;
            (PyList::new(py, ops)?, opt_avals_list(py, cts)?, params).into_pyobject(py)
        })
    }

    fn batch(
        &self, prim: &DynamicPrim, operands: &[Aval], dims: &[Option<usize>], size: usize,
    ) -> Result<Option<BatchedRule>> {
        let pattern = Pattern::Batch(operands.to_vec(), dims.to_vec(), size);
        let answer = self.ask(
            pattern,
            prim,
            "batch",
            |py, params| {
                (
                    avals_list(py, operands)?,
                    PyList::new(py, dims.iter().copied())?,
                    size,
                    params,
                )
                    .into_pyobject(py)
            },
            |out| {
                let (jaxpr, out_dims): (Bound<'_, PyAny>, Vec<Option<usize>>) = out.extract()?;
                Ok(Answer::Batch(BatchedRule {
                    jaxpr: closed_from(&jaxpr, "batching")?,
                    out_dims,
                }))
            },
        )?;
        answer_of(prim, answer, |a| match a {
            Answer::Batch(b) => Some(b),
            _ => None,
        })
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The answer of the kind `pick` accepts; an error for a cached answer of
/// another kind.
fn answer_of<T>(
    prim: &DynamicPrim, answer: Option<Answer>, pick: fn(Answer) -> Option<T>,
) -> Result<Option<T>> {
    let Some(answer) = answer else {
        return Ok(None);
    };
    pick(answer)
        .map(Some)
        .ok_or_else(|| Error::Unsupported(format!("{}: cached rule of another kind", prim.name())))
}

/// `_core.RuleProvider(rules)`: the provider of one Python primitive (one
/// per primitive object: dynamic primitives are equal only with the same
/// provider).
#[pyclass(frozen, name = "RuleProvider", module = "microjax_rs")]
pub(crate) struct PyRuleProviderHandle {
    inner: Arc<PyRuleProvider>,
}

#[pymethods]
impl PyRuleProviderHandle {
    #[new]
    fn py_new(rules: Py<PyAny>) -> PyRuleProviderHandle {
        PyRuleProviderHandle {
            inner: Arc::new(PyRuleProvider {
                rules,
                cache: Mutex::new(Cache::default()),
            }),
        }
    }

    /// Forgets the traced rules (a rule was registered or replaced).
    fn clear(&self) {
        self.inner.clear();
    }

    /// The primitive `name[params]` whose rules this provider gives.
    #[pyo3(signature = (name, params, multiple_results))]
    fn prim(
        &self, name: &str, params: Option<&Bound<'_, PyDict>>, multiple_results: bool,
    ) -> PyResult<Prim> {
        let mut list: Vec<(String, Param)> = Vec::new();
        if let Some(d) = params {
            for (k, v) in d.iter() {
                list.push((k.extract()?, py_to_user_param(&v)?));
            }
        }
        let provider: Arc<dyn RuleProvider> = self.inner.clone();
        let prim = DynamicPrim::new(name, list, multiple_results, provider).py()?;
        Ok(Prim {
            prim: Primitive::Dynamic(prim),
        })
    }
}

/// A Python object a user-defined primitive carries as a param (JAX's
/// params may be anything: PyTreeDefs, callables, objects a rule mutates).
/// The core sees its identity; the rules get the object itself.
struct PyOpaque {
    obj: Py<PyAny>,
}

impl std::fmt::Debug for PyOpaque {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PyOpaque({:#x})", self.identity())
    }
}

impl OpaqueValue for PyOpaque {
    fn identity(&self) -> usize {
        self.obj.as_ptr() as usize
    }

    fn describe(&self) -> String {
        Python::attach(|py| {
            let obj = self.obj.bind(py);
            match obj.repr() {
                Ok(r) => r.to_string(),
                Err(_) => format!("<{:#x}>", self.identity()),
            }
        })
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The Python object of an opaque param (its description where the value
/// came from another binding).
pub(crate) fn opaque_to_py<'py>(py: Python<'py>, o: &Opaque) -> Bound<'py, PyAny> {
    match o.0.as_any().downcast_ref::<PyOpaque>() {
        Some(p) => p.obj.bind(py).clone(),
        None => PyString::new(py, &o.0.describe()).into_any(),
    }
}

/// A user-defined primitive's param: a core value where it reads back as
/// the very value given (None, exact bools, ints, floats, strings, NumPy
/// dtypes, ClosedJaxprs, plain tuples of those), so printers, effects and
/// sub-program walks see it; anything else is carried as the object itself.
fn py_to_user_param(obj: &Bound<'_, PyAny>) -> PyResult<Param> {
    match exact_param(obj)? {
        Some(p) => Ok(p),
        None => Ok(Param::Opaque(Opaque(Arc::new(PyOpaque {
            obj: obj.clone().unbind(),
        })))),
    }
}

fn exact_param(obj: &Bound<'_, PyAny>) -> PyResult<Option<Param>> {
    if obj.is_none() {
        return Ok(Some(Param::None));
    }
    if obj.is_exact_instance_of::<PyBool>() {
        return Ok(Some(Param::Bool(obj.extract()?)));
    }
    if obj.is_exact_instance_of::<PyInt>() {
        return Ok(obj.extract::<i64>().ok().map(Param::Int));
    }
    if obj.is_exact_instance_of::<PyFloat>() {
        return Ok(Some(Param::Float(obj.extract()?)));
    }
    if obj.is_exact_instance_of::<PyString>() {
        return Ok(Some(Param::Str(obj.extract()?)));
    }
    if obj.is_exact_instance_of::<PyTuple>() {
        let mut items = Vec::new();
        for x in obj.try_iter()? {
            match exact_param(&x?)? {
                Some(p) => items.push(p),
                None => return Ok(None),
            }
        }
        if !items.is_empty() && items.iter().all(|p| matches!(p, Param::Int(_))) {
            let ints = items
                .iter()
                .filter_map(|p| match p {
                    Param::Int(i) => Some(*i),
                    _ => None,
                })
                .collect();
            return Ok(Some(Param::Ints(ints)));
        }
        return Ok(Some(Param::Tuple(items)));
    }
    if let Some(j) = jaxpr_handle(obj) {
        return Ok(Some(Param::Jaxpr(j)));
    }
    if obj.is_instance(np_dtype_type(obj.py())?)? {
        return Ok(dtype_from_py(obj).ok().map(Param::DType));
    }
    Ok(None)
}

/// Whether a program holds a primitive with rules written in Python (it has
/// no text form that parses back).
#[pyfunction]
pub(crate) fn holds_dynamic(closed: &Bound<'_, PyAny>) -> PyResult<bool> {
    let j = jaxpr_handle(closed)
        .ok_or_else(|| PyTypeError::new_err("holds_dynamic takes a ClosedJaxpr"))?;
    Ok(microjax::prims::dynamic::holds_dynamic(&j.jaxpr))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRuleProviderHandle>()?;
    m.add_function(wrap_pyfunction!(holds_dynamic, m)?)?;
    Ok(())
}
