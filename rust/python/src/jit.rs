//! `JitFunction`: `jit`'s call path. A call with only `ArrayImpl` positional
//! arguments (no kwargs, no trace active) looks up its fast key `[owner,
//! config epoch, (dtype, weak, shape) per argument]` in `jit`'s trace cache
//! (`trace_cache.rs`, shared by every wrapper of one function) and runs the
//! compiled program; anything else (or a miss) calls the Python fallback,
//! which traces, compiles and attaches the program to the cache entry.

use crate::array::ArrayImpl;
use crate::globals::{epoch, fast_eager};
use crate::prim::{jaxpr_handle, DETACH_ELEMS};
use crate::trace_cache::{self, FastKey};
use crate::CoreResultExt;
use microjax::dtype::ALL_DTYPES;
use microjax::exec::compiled::Compiled;
use microjax::{DType, HostArray};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::gc::PyVisit;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyString, PyTuple, PyType};
use pyo3::PyTraverseError;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// How program outputs are arranged into the Python result: the structure
/// of the output's treedef (`tree_util.PyTreeDef`), read once when a
/// signature is cached, for the node types the fast path rebuilds itself.
enum OutSpec {
    Leaf,
    Tuple(Vec<OutSpec>),
    List(Vec<OutSpec>),
    None,
    Dict(Vec<Py<PyAny>>, Vec<OutSpec>),
}

impl OutSpec {
    /// The structure of `treedef` through its `node_data()` (`None` for a
    /// leaf, else `(node type, aux data)`, dict keys as a list) and
    /// `children()`; None when a node is not a tuple, list, dict or `None`
    /// (a namedtuple or custom node: those calls stay on the Python path).
    fn from_treedef(treedef: &Bound<'_, PyAny>) -> PyResult<Option<OutSpec>> {
        let py = treedef.py();
        let node = treedef.call_method0(intern!(py, "node_data"))?;
        if node.is_none() {
            return Ok(Some(OutSpec::Leaf));
        }
        let (typ, aux): (Bound<'_, PyType>, Bound<'_, PyAny>) = node.extract()?;
        let mut children = Vec::new();
        for c in treedef.call_method0(intern!(py, "children"))?.try_iter()? {
            match OutSpec::from_treedef(&c?)? {
                Some(spec) => children.push(spec),
                None => return Ok(None),
            }
        }
        let spec = if typ.is(py.get_type::<PyTuple>()) {
            OutSpec::Tuple(children)
        } else if typ.is(py.get_type::<PyList>()) {
            OutSpec::List(children)
        } else if typ.is(py.None().bind(py).get_type()) {
            OutSpec::None
        } else if typ.is(py.get_type::<PyDict>()) {
            let keys: Vec<Py<PyAny>> = aux
                .try_iter()?
                .map(|k| k.map(Bound::unbind))
                .collect::<PyResult<_>>()?;
            if keys.len() != children.len() {
                return Err(PyValueError::new_err(
                    "a dict node's keys and children differ in number",
                ));
            }
            OutSpec::Dict(keys, children)
        } else {
            return Ok(None);
        };
        Ok(Some(spec))
    }

    fn leaves(&self) -> usize {
        match self {
            OutSpec::Leaf => 1,
            OutSpec::None => 0,
            OutSpec::Tuple(c) | OutSpec::List(c) | OutSpec::Dict(_, c) => {
                c.iter().fold(0usize, |a, s| a.saturating_add(s.leaves()))
            }
        }
    }

    fn build<'py>(
        &self, py: Python<'py>, leaves: &mut impl Iterator<Item = ArrayImpl>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let kids = |c: &[OutSpec], leaves: &mut dyn Iterator<Item = ArrayImpl>| {
            c.iter()
                .map(|s| s.build(py, &mut LeafIter(leaves)))
                .collect::<PyResult<Vec<_>>>()
        };
        match self {
            OutSpec::Leaf => match leaves.next() {
                Some(a) => Ok(Bound::new(py, a)?.into_any()),
                None => Err(PyValueError::new_err("jit: too few program outputs")),
            },
            OutSpec::None => Ok(py.None().into_bound(py)),
            OutSpec::Tuple(c) => Ok(PyTuple::new(py, kids(c, leaves)?)?.into_any()),
            OutSpec::List(c) => Ok(PyList::new(py, kids(c, leaves)?)?.into_any()),
            OutSpec::Dict(keys, c) => {
                let vals = kids(c, leaves)?;
                let d = PyDict::new(py);
                for (k, v) in keys.iter().zip(vals) {
                    d.set_item(k.bind(py), v)?;
                }
                Ok(d.into_any())
            }
        }
    }
}

/// Adapter so the recursive builder can take `&mut dyn Iterator`.
struct LeafIter<'a>(&'a mut dyn Iterator<Item = ArrayImpl>);

impl Iterator for LeafIter<'_> {
    type Item = ArrayImpl;
    fn next(&mut self) -> Option<ArrayImpl> {
        self.0.next()
    }
}

/// What the fast path runs for one signature of one jitted function.
pub(crate) struct FastEntry {
    /// The program with its literals materialized once (steady-state runs
    /// allocate only what the kernels return).
    plan: Arc<Compiled>,
    out_weak: Vec<bool>,
    spec: OutSpec,
}

fn dtype_code(d: DType) -> u64 {
    ALL_DTYPES
        .iter()
        .position(|&x| x == d)
        .map_or(u64::MAX, |p| p as u64)
}

/// The fast key after `[owner, epoch]`: per argument `dtype | weak << 8 |
/// ndim << 16` followed by its dims.
fn push_arg_key(key: &mut FastKey, a: &ArrayImpl) {
    let shape = a.arr.shape();
    key.push(dtype_code(a.arr.dtype()) | (u64::from(a.weak) << 8) | ((shape.len() as u64) << 16));
    key.extend(shape.iter().map(|&d| d as u64));
}

/// A jitted function: trace cache lookup in Rust on the hot path, Python
/// fallback on a miss.
#[pyclass(frozen, extends = MethodWrapper, name = "JitFunction", module = "microjax_rs")]
pub struct JitFunction {
    fallback: Mutex<Option<Py<PyAny>>>,
    /// The trace cache owner token its entries are filed under (the Python
    /// side may move it to another token: `_set_owner`).
    owner: AtomicU64,
    /// Whether the token was made for this object alone (no function to
    /// key on weakly): its entries are dropped with it.
    private_owner: bool,
}

impl Drop for JitFunction {
    fn drop(&mut self) {
        if self.private_owner {
            drop(trace_cache::remove_owner(
                self.owner.load(Ordering::Relaxed),
            ));
        }
    }
}

impl JitFunction {
    fn fallback<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let g = self
            .fallback
            .lock()
            .map_err(|_| PyValueError::new_err("jit state poisoned"))?;
        match g.as_ref() {
            Some(f) => Ok(f.bind(py).clone()),
            None => Err(PyTypeError::new_err("jit function was cleared")),
        }
    }

    /// The fast path; Ok(None) when it does not apply or misses.
    fn try_fast<'py>(
        &self, py: Python<'py>, args: &Bound<'py, PyTuple>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let n = args.len();
        let mut key: FastKey = Vec::with_capacity(n.saturating_mul(4).saturating_add(2));
        key.push(self.owner.load(Ordering::Relaxed));
        key.push(epoch());
        let mut arrs: Vec<Arc<HostArray>> = Vec::with_capacity(n);
        let mut total = 0usize;
        for a in args.iter() {
            let Ok(arr) = a.cast::<ArrayImpl>() else {
                return Ok(None);
            };
            let arr = arr.get();
            if arr.deleted() {
                return Ok(None);
            }
            push_arg_key(&mut key, arr);
            total = total.saturating_add(arr.arr.size());
            arrs.push(arr.arr.clone());
        }
        let Some(entry) = trace_cache::fast_hit(&key) else {
            return Ok(None);
        };
        let outs = if total > DETACH_ELEMS {
            let plan = entry.plan.clone();
            py.detach(move || plan.run(&arrs)).py()?
        } else {
            entry.plan.run(&arrs).py()?
        };
        if outs.len() != entry.out_weak.len() {
            return Err(PyValueError::new_err(
                "jit: cached program returned a wrong number of outputs",
            ));
        }
        let mut leaves = outs
            .into_iter()
            .zip(entry.out_weak.iter())
            .map(|(h, &w)| ArrayImpl::new(h, w));
        let out = entry.spec.build(py, &mut leaves)?;
        Ok(Some(out))
    }
}

static PARTIAL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The base class of the callable Rust wrappers (`JitFunction`,
/// `GradFunction`): method binding as a Python function's (accessed
/// through an instance, `obj.f` is `functools.partial(f, obj)`; through the
/// class, the wrapper itself), and a `__dict__` so
/// `functools.update_wrapper` works.
#[pyclass(
    frozen,
    subclass,
    dict,
    weakref,
    name = "MethodWrapper",
    module = "microjax_rs._core"
)]
pub struct MethodWrapper;

#[pymethods]
impl MethodWrapper {
    fn __get__<'py>(
        slf: &Bound<'py, Self>, obj: Option<&Bound<'py, PyAny>>,
        objtype: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let _ = objtype;
        let py = slf.py();
        match obj {
            Some(o) if !o.is_none() => {
                let partial = PARTIAL.get_or_try_init(py, || {
                    Ok::<_, PyErr>(py.import("functools")?.getattr("partial")?.unbind())
                })?;
                partial.bind(py).call1((slf, o))
            }
            _ => Ok(slf.clone().into_any()),
        }
    }
}

#[pymethods]
impl JitFunction {
    /// `owner`: the trace cache token to file entries under (None: a
    /// private one, dropped with this object).
    #[new]
    #[pyo3(signature = (fallback, owner = None))]
    fn py_new(
        fallback: &Bound<'_, PyAny>, owner: Option<u64>,
    ) -> PyResult<PyClassInitializer<JitFunction>> {
        if !fallback.is_callable() {
            return Err(PyTypeError::new_err(
                "JitFunction needs a callable fallback",
            ));
        }
        Ok(
            PyClassInitializer::from(MethodWrapper).add_subclass(JitFunction {
                fallback: Mutex::new(Some(fallback.clone().unbind())),
                owner: AtomicU64::new(owner.unwrap_or_else(trace_cache::new_owner)),
                private_owner: owner.is_none(),
            }),
        )
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn __call__<'py>(
        &self, py: Python<'py>, args: &Bound<'py, PyTuple>, kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let no_kwargs = kwargs.is_none_or(|k| k.is_empty());
        if no_kwargs && fast_eager() {
            if let Some(out) = self.try_fast(py, args)? {
                return Ok(out);
            }
        }
        self.fallback(py)?.call(args, kwargs)
    }

    /// Serves calls whose arguments look like `args` (dtype, shape, weak
    /// type; current config epoch) with `exe` on the fast path, its outputs
    /// arranged as `out_tree` (the output's treedef) says. `entry`: the
    /// trace cache entry (of this object's owner) to attach it to; None
    /// makes an entry only the fast path reaches. False (nothing cached)
    /// when the tree holds a node type the fast path does not rebuild.
    #[pyo3(signature = (args, exe, out_tree, entry = None))]
    fn _cache_insert(
        &self, args: Vec<PyRef<'_, ArrayImpl>>, exe: &Bound<'_, PyAny>,
        out_tree: &Bound<'_, PyAny>, entry: Option<u64>,
    ) -> PyResult<bool> {
        let prog = jaxpr_handle(exe)
            .ok_or_else(|| PyTypeError::new_err("_cache_insert needs a ClosedJaxpr"))?;
        let Some(spec) = OutSpec::from_treedef(out_tree)? else {
            return Ok(false);
        };
        let out_avals = prog.out_avals().py()?;
        let counts = |(a, b): (usize, usize), message: String| {
            if a == b {
                Ok(())
            } else {
                Err(PyValueError::new_err(message))
            }
        };
        let (leaves, outs) = (spec.leaves(), out_avals.len());
        counts(
            (leaves, outs),
            format!("out_tree has {leaves} leaves but the program has {outs} outputs"),
        )?;
        let in_avals = prog.in_avals().py()?;
        let (ins, given) = (in_avals.len(), args.len());
        counts(
            (ins, given),
            format!("the program takes {ins} inputs but {given} arguments were given"),
        )?;
        for (i, (want, a)) in in_avals.iter().zip(args.iter()).enumerate() {
            if !want.same_type(&a.arr.aval()) {
                return Err(PyValueError::new_err(format!(
                    "argument {i} is {} but the program expects {}",
                    a.arr.aval().short(),
                    want.short()
                )));
            }
        }
        let mut key: FastKey = vec![self.owner.load(Ordering::Relaxed), epoch()];
        for a in args.iter() {
            push_arg_key(&mut key, a);
        }
        // The plan comes from the structural compile cache, so fresh `jit`
        // wrappers of one function (and un-jitted runs) share it.
        let sig = args
            .iter()
            .map(|a| (a.arr.shape().to_vec(), a.arr.dtype()))
            .collect();
        let plan = microjax::exec::cache::global()
            .plan(&prog, sig, epoch())
            .py()?;
        let fast = Arc::new(FastEntry {
            plan,
            out_weak: out_avals.iter().map(|a| a.weak_type).collect(),
            spec,
        });
        drop(trace_cache::attach_fast(entry, key, fast));
        Ok(true)
    }

    /// Fast-path entries of this object's owner.
    fn _cache_size(&self) -> usize {
        trace_cache::owner_fast_len(self.owner.load(Ordering::Relaxed))
    }

    /// Drops every trace cache entry of this object's owner.
    fn _cache_clear(&self) {
        drop(trace_cache::remove_owner(
            self.owner.load(Ordering::Relaxed),
        ));
    }

    /// The wrapped function's signature, as JAX's
    /// (`inspect.signature(jit(f), follow_wrapped=False)` is `f`'s): the
    /// Python side computes it on first use.
    #[getter]
    fn __signature__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.fallback(py)?.getattr("signature")
    }

    /// The trace cache owner token.
    #[getter]
    fn _owner(&self) -> u64 {
        self.owner.load(Ordering::Relaxed)
    }

    /// Files later entries (and looks up) under `owner`; not for an object
    /// with a private owner.
    fn _set_owner(&self, owner: u64) -> PyResult<()> {
        if self.private_owner {
            return Err(PyValueError::new_err(
                "this jitted function keys its traces on itself",
            ));
        }
        self.owner.store(owner, Ordering::Relaxed);
        Ok(())
    }

    /// Pickling: by reference for a module-level jitted function, else by
    /// value (`jit(fun, ...)` again; `cloudpickle` handles lambdas).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        py.import("microjax_rs.api")?
            .getattr("_reduce_jitted")?
            .call1((slf,))
    }

    /// JAX's form, `<PjitFunction of <function f at 0x...>>` (the wrapped
    /// callable's repr; tools such as chex recognise jitted functions by it).
    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let inner = slf
            .getattr("__wrapped__")
            .and_then(|f| f.repr())
            .map(|r| r.to_string())
            .or_else(|_| {
                slf.getattr("__name__")
                    .and_then(|n| n.cast_into::<PyString>().map_err(PyErr::from))
                    .map(|s| s.to_string())
            })
            .unwrap_or_else(|_| "<unnamed>".to_string());
        Ok(format!("<PjitFunction of {inner}>"))
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Ok(g) = self.fallback.try_lock() {
            if let Some(f) = g.as_ref() {
                visit.call(f)?;
            }
        }
        Ok(())
    }

    fn __clear__(&self) {
        let f = self.fallback.lock().map(|mut g| g.take());
        drop(f);
    }
}
