//! `core.ShapedArray`: the abstract value of an array (shape, dtype, weak
//! type) as Python sees it, holding the core crate's `Aval` — one aval type
//! on both sides. Tracers carry one (`Tracer.aval`); staging makes them
//! here, shared per aval (`shared`), and `jax.core.ShapedArray(...)` makes
//! them from Python, with JAX's API.

use crate::dtypes::dtype_from_name;
use crate::records::AvalRecord;
use microjax::{Aval, DType};
use pyo3::basic::CompareOp;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyString, PyTuple, PyType};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;

/// An abstract value: `shape`, `dtype` (`dtype_name` for our name of it)
/// and `weak_type`.
#[pyclass(frozen, name = "ShapedArray", module = "microjax_rs.core")]
pub(crate) struct ShapedArray {
    pub(crate) aval: Aval,
    shape: Py<PyTuple>,
    dtype_name: Py<PyString>,
}

/// Aval -> its shared `ShapedArray` (avals are immutable).
static SHARED: Mutex<Option<HashMap<Aval, Py<ShapedArray>>>> = Mutex::new(None);
const SHARED_LIMIT: usize = 4096;

/// The shared avals' lock if it is free now (`crate::fork`).
pub(crate) fn try_hold() -> Option<Box<dyn std::any::Any>> {
    crate::fork::try_lock(&SHARED)
}

static DTYPES_MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

/// `microjax_rs.dtypes`, for what it decides about dtype-likes (our name of
/// `np.float32` or `int`, the NumPy dtype object of a name).
fn dtypes_module(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    DTYPES_MODULE
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(py.import("microjax_rs.dtypes")?.unbind())
        })
        .map(|m| m.bind(py))
}

impl ShapedArray {
    pub(crate) fn from_aval(py: Python<'_>, aval: Aval) -> PyResult<ShapedArray> {
        Ok(ShapedArray {
            shape: PyTuple::new(py, aval.shape.iter().copied())?.unbind(),
            dtype_name: PyString::intern(py, aval.dtype.name()).unbind(),
            aval,
        })
    }

    /// The shared `ShapedArray` of `a`.
    pub(crate) fn shared<'py>(py: Python<'py>, a: &Aval) -> PyResult<Bound<'py, ShapedArray>> {
        if let Ok(guard) = SHARED.lock() {
            if let Some(hit) = guard.as_ref().and_then(|m| m.get(a)) {
                return Ok(hit.bind(py).clone());
            }
        }
        let obj = Bound::new(py, ShapedArray::from_aval(py, a.clone())?)?;
        if let Ok(mut guard) = SHARED.lock() {
            let map = guard.get_or_insert_with(HashMap::new);
            if map.len() < SHARED_LIMIT {
                map.insert(a.clone(), obj.clone().unbind());
            }
        }
        Ok(obj)
    }

    fn dims(&self) -> String {
        let dims: Vec<String> = self.aval.shape.iter().map(usize::to_string).collect();
        dims.join(",")
    }
}

/// `__reduce__`'s value: the class and its constructor's arguments.
type Reduced<'py> = (Bound<'py, PyType>, (Py<PyTuple>, Py<PyString>, bool));

/// The core dtype of a dtype-like: a name as it is, anything else through
/// `dtypes.dtype_name`.
fn dtype_of(dtype: &Bound<'_, PyAny>) -> PyResult<DType> {
    if let Ok(s) = dtype.cast::<PyString>() {
        return dtype_from_name(&s.to_cow()?);
    }
    let name = dtypes_module(dtype.py())?.call_method1("dtype_name", (dtype,))?;
    dtype_from_name(&name.extract::<String>()?)
}

fn shape_of(shape: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    shape.try_iter()?.map(|d| d?.extract::<usize>()).collect()
}

#[pymethods]
impl ShapedArray {
    #[new]
    #[pyo3(signature = (shape, dtype, weak_type = false))]
    fn py_new(
        py: Python<'_>, shape: &Bound<'_, PyAny>, dtype: &Bound<'_, PyAny>, weak_type: bool,
    ) -> PyResult<ShapedArray> {
        ShapedArray::from_aval(
            py,
            Aval::weak(shape_of(shape)?, dtype_of(dtype)?, weak_type),
        )
    }

    /// The shared ShapedArray of `(shape, dtype name, weak_type)`.
    #[staticmethod]
    fn _shared<'py>(
        py: Python<'py>, shape: &Bound<'py, PyAny>, dtype_name: &Bound<'py, PyAny>, weak_type: bool,
    ) -> PyResult<Bound<'py, ShapedArray>> {
        let aval = Aval::weak(shape_of(shape)?, dtype_of(dtype_name)?, weak_type);
        ShapedArray::shared(py, &aval)
    }

    /// The ShapedArray of a `_core.Aval` record.
    #[classmethod]
    fn from_record<'py>(
        cls: &Bound<'py, PyType>, rec: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, ShapedArray>> {
        let aval = crate::records::py_to_aval(rec)?;
        ShapedArray::shared(cls.py(), &aval)
    }

    /// This aval as the `_core.Aval` record.
    fn record<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, AvalRecord>> {
        crate::records::aval_to_py(py, &self.aval)
    }

    #[getter]
    fn shape(&self, py: Python<'_>) -> Py<PyTuple> {
        self.shape.clone_ref(py)
    }

    #[getter]
    fn dtype_name(&self, py: Python<'_>) -> Py<PyString> {
        self.dtype_name.clone_ref(py)
    }

    #[getter]
    fn weak_type(&self) -> bool {
        self.aval.weak_type
    }

    /// The NumPy dtype object (`dtypes.np_dtype` of the name).
    #[getter]
    fn dtype<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        dtypes_module(py)?.call_method1("np_dtype", (self.dtype_name.bind(py),))
    }

    #[getter]
    fn ndim(&self) -> usize {
        self.aval.shape.len()
    }

    #[getter]
    fn size(&self) -> usize {
        self.aval.shape.iter().product()
    }

    /// JAX's sharding of an abstract value outside a mesh: replicated over
    /// the empty abstract mesh (`jax.typeof(x).sharding`).
    #[getter]
    fn sharding<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import("microjax_rs.sharding")?
            .call_method1("_aval_sharding", (self.aval.shape.len(),))
    }

    /// Where the array lives (`jax.memory.Space`): every array of this
    /// single-host system is in device memory, `MemorySpace.Device`.
    #[getter]
    fn memory_space<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import("microjax_rs.core")?
            .getattr("MemorySpace")?
            .getattr("Device")
    }

    /// `f32[2,3]` (`float32[2,3]` without `short_dtypes`).
    #[pyo3(signature = (short_dtypes = true))]
    fn str_short(&self, short_dtypes: bool) -> String {
        let d = &self.aval.dtype;
        let name = if short_dtypes {
            d.short_name()
        } else {
            d.name()
        };
        format!("{name}[{}]", self.dims())
    }

    /// A copy with the given fields replaced.
    #[pyo3(signature = (shape = None, dtype = None, weak_type = None))]
    fn update(
        &self, py: Python<'_>, shape: Option<&Bound<'_, PyAny>>, dtype: Option<&Bound<'_, PyAny>>,
        weak_type: Option<bool>,
    ) -> PyResult<ShapedArray> {
        let shape = match shape {
            Some(s) => shape_of(s)?,
            None => self.aval.shape.clone(),
        };
        let dtype = match dtype {
            Some(d) => dtype_of(d)?,
            None => self.aval.dtype,
        };
        let weak = weak_type.unwrap_or(self.aval.weak_type);
        ShapedArray::from_aval(py, Aval::weak(shape, dtype, weak))
    }

    fn strip_weak_type(&self, py: Python<'_>) -> PyResult<ShapedArray> {
        self.update(py, None, None, Some(false))
    }

    /// The type of this value's tangents: itself for float dtypes, float0
    /// otherwise.
    fn to_tangent_aval<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, ShapedArray>> {
        let me = slf.get();
        if me.aval.dtype.is_float() {
            return Ok(slf.clone());
        }
        let aval = Aval::weak(me.aval.shape.clone(), DType::Float0, false);
        Bound::new(slf.py(), ShapedArray::from_aval(slf.py(), aval)?)
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> Py<PyAny> {
        let py = other.py();
        let Ok(other) = other.cast::<ShapedArray>() else {
            return py.NotImplemented();
        };
        let eq = self.aval == other.get().aval;
        let out = match op {
            CompareOp::Eq => eq,
            CompareOp::Ne => !eq,
            _ => return py.NotImplemented(),
        };
        PyBool::new(py, out).to_owned().into_any().unbind()
    }

    fn __hash__(&self) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.aval.hash(&mut h);
        h.finish()
    }

    fn __repr__(&self) -> String {
        let weak = if self.aval.weak_type {
            ", weak_type=True"
        } else {
            ""
        };
        format!("ShapedArray({}{weak})", self.str_short(false))
    }

    /// Pickling and copying: `ShapedArray(shape, dtype_name, weak_type)`.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Reduced<'py>> {
        let me = slf.get();
        let py = slf.py();
        Ok((
            slf.get_type(),
            (
                me.shape.clone_ref(py),
                me.dtype_name.clone_ref(py),
                me.aval.weak_type,
            ),
        ))
    }

    /// JAX's: `float32[3]`, `~` in front for a weak type.
    fn __str__(&self) -> String {
        let weak = if self.aval.weak_type { "~" } else { "" };
        format!("{weak}{}", self.str_short(false))
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ShapedArray>()
}
