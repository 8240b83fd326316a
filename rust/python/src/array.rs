//! `ArrayImpl`: a concrete array (shared host buffer + JAX's weak-type bit),
//! and its conversions to and from NumPy and Python scalars.

use crate::dtypes::{dtype_from_name, dtype_obj, numpy};
use crate::globals::{hook, Hook};
use crate::numpy_view::numpy_view;
use crate::ops::{self, BinOp, UnOp};
use crate::CoreResultExt;
use half::{bf16, f16};
use microjax::array::alloc;
use microjax::{checked_size, Buffer, DType, HostArray, Scalar};
use numpy::ndarray::{ArrayD, IxDyn};
use numpy::{
    Element, IntoPyArray, PyArrayDescrMethods, PyArrayDyn, PyArrayMethods, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::{
    PyAttributeError, PyOverflowError, PyRuntimeError, PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::{IntoPyDict, PyBool, PyComplex, PyFloat, PyInt, PyString, PyTuple};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A concrete microjax array: an immutable shared host buffer plus JAX's
/// weak-type bit. Methods beyond the core protocol (`sum`, `reshape`, `T`,
/// `at`, ...) come from the Python layer through the `getattr` hook.
#[pyclass(frozen, weakref, name = "ArrayImpl", module = "microjax_rs")]
pub struct ArrayImpl {
    pub(crate) arr: Arc<HostArray>,
    pub(crate) weak: bool,
    /// Set by `delete()` and by a `jit` call that donated this array: every
    /// later use of the values raises (shape and dtype stay readable).
    deleted: AtomicBool,
}

impl ArrayImpl {
    pub(crate) fn new(arr: Arc<HostArray>, weak: bool) -> ArrayImpl {
        ArrayImpl {
            arr,
            weak,
            deleted: AtomicBool::new(false),
        }
    }

    /// Whether the array was deleted (donated or `delete()`d).
    #[inline]
    pub(crate) fn deleted(&self) -> bool {
        self.deleted.load(Ordering::Relaxed)
    }

    /// JAX's error for using a deleted array.
    pub(crate) fn check_live(&self) -> PyResult<()> {
        if self.deleted() {
            let dims: Vec<String> = self.arr.shape().iter().map(|d| d.to_string()).collect();
            return Err(PyRuntimeError::new_err(format!(
                "Array has been deleted with shape={}[{}].",
                self.arr.dtype().name(),
                dims.join(",")
            )));
        }
        Ok(())
    }

    pub(crate) fn into_pyany(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(Py::new(py, self)?.into_any())
    }

    fn scalar_value(&self, what: &str) -> PyResult<Scalar> {
        self.check_live()?;
        if self.arr.size() != 1 {
            return Err(PyTypeError::new_err(format!(
                "only size-1 arrays can be converted to Python {what}s (got shape {})",
                microjax::error::format_shape(self.arr.shape())
            )));
        }
        first_scalar(&self.arr)
    }
}

fn first_scalar(a: &HostArray) -> PyResult<Scalar> {
    Scalar::from_buffer(a.buffer(), 0).ok_or_else(|| {
        PyTypeError::new_err(format!(
            "arrays of dtype {} have no Python scalar value",
            a.dtype().name()
        ))
    })
}

/// A core scalar as a Python bool/int/float/complex.
pub(crate) fn scalar_to_py(py: Python<'_>, s: Scalar) -> PyResult<Bound<'_, PyAny>> {
    Ok(match s {
        Scalar::Bool(b) => PyBool::new(py, b).to_owned().into_any(),
        Scalar::Int(i) => i.into_pyobject(py)?.into_any(),
        Scalar::UInt(u) => u.into_pyobject(py)?.into_any(),
        Scalar::Float(f) => PyFloat::new(py, f).into_any(),
        Scalar::Complex(re, im) => PyComplex::from_doubles(py, re, im).into_any(),
    })
}

/// A Python bool/int/float/complex (or NumPy scalar) as a core scalar.
pub(crate) fn py_to_scalar(obj: &Bound<'_, PyAny>) -> PyResult<Scalar> {
    if obj.is_instance_of::<PyBool>() {
        return Ok(Scalar::Bool(obj.extract::<bool>()?));
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Scalar::Int(i));
        }
        return obj.extract::<u64>().map(Scalar::UInt).map_err(|_| {
            PyOverflowError::new_err(format!(
                "Python int {} is too large to convert to a 64-bit integer",
                obj.str().map(|s| s.to_string()).unwrap_or_default()
            ))
        });
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(Scalar::Float(f.value()));
    }
    if let Ok(z) = obj.cast::<PyComplex>() {
        return Ok(Scalar::Complex(z.real(), z.imag()));
    }
    // NumPy scalars: bool_, integer (via __index__), floating (via __float__).
    let tname = obj.get_type().name()?.to_string();
    if tname == "bool" || tname == "bool_" {
        if let Ok(b) = obj.extract::<bool>() {
            return Ok(Scalar::Bool(b));
        }
    }
    if let Ok(i) = obj.extract::<i64>() {
        return Ok(Scalar::Int(i));
    }
    if let Ok(u) = obj.extract::<u64>() {
        return Ok(Scalar::UInt(u));
    }
    if tname.starts_with("complex") {
        // NumPy complex scalars (complex64 is no Python complex subclass).
        let re: f64 = obj.getattr("real")?.extract()?;
        let im: f64 = obj.getattr("imag")?.extract()?;
        return Ok(Scalar::Complex(re, im));
    }
    if let Ok(f) = obj.extract::<f64>() {
        return Ok(Scalar::Float(f));
    }
    Err(PyTypeError::new_err(format!(
        "expected a Python bool, int, float or complex, got {tname}"
    )))
}

fn shape_tuple<'py>(py: Python<'py>, shape: &[usize]) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(py, shape.iter().copied())
}

fn owned_to_numpy<'py, T: Element>(
    py: Python<'py>, shape: &[usize], v: Vec<T>,
) -> PyResult<Bound<'py, PyAny>> {
    let arr = ArrayD::from_shape_vec(IxDyn(shape), v)
        .map_err(|e| PyValueError::new_err(format!("cannot shape host buffer: {e}")))?;
    Ok(arr.into_pyarray(py).into_any())
}

/// A new NumPy array holding a copy of `a` (the copied vector is handed to
/// NumPy without a second copy).
pub(crate) fn to_numpy<'py>(py: Python<'py>, a: &HostArray) -> PyResult<Bound<'py, PyAny>> {
    let shape = a.shape();
    match a.buffer() {
        Buffer::Bool(v) => owned_to_numpy(py, shape, alloc::to_vec("to numpy", v).py()?),
        Buffer::I8(v) => owned_to_numpy(py, shape, alloc::to_vec("to numpy", v).py()?),
        Buffer::I16(v) => owned_to_numpy(py, shape, alloc::to_vec("to numpy", v).py()?),
        Buffer::I32(v) => owned_to_numpy(py, shape, alloc::to_vec("to numpy", v).py()?),
        Buffer::I64(v) => owned_to_numpy(py, shape, alloc::to_vec("to numpy", v).py()?),
        Buffer::U8(v) => owned_to_numpy(py, shape, alloc::to_vec("to numpy", v).py()?),
        Buffer::U16(v) => owned_to_numpy(py, shape, alloc::to_vec("to numpy", v).py()?),
        Buffer::U32(v) => owned_to_numpy(py, shape, alloc::to_vec("to numpy", v).py()?),
        Buffer::U64(v) => owned_to_numpy(py, shape, alloc::to_vec("to numpy", v).py()?),
        Buffer::F16(v) => owned_to_numpy::<f16>(py, shape, alloc::to_vec("to numpy", v).py()?),
        Buffer::F32(v) => owned_to_numpy(py, shape, alloc::to_vec("to numpy", v).py()?),
        Buffer::F64(v) => owned_to_numpy(py, shape, alloc::to_vec("to numpy", v).py()?),
        Buffer::C64(v) => owned_to_numpy(py, shape, alloc::to_vec("to numpy", v).py()?),
        Buffer::C128(v) => owned_to_numpy(py, shape, alloc::to_vec("to numpy", v).py()?),
        Buffer::BF16(v) => {
            let bits: Vec<u16> =
                alloc::from_iter("to numpy", v.iter().map(|x| x.to_bits())).py()?;
            let dt = dtype_obj(py, DType::BF16)?;
            owned_to_numpy(py, shape, bits)?.call_method1("view", (dt,))
        }
        Buffer::Float0(_) => {
            let dt = dtype_obj(py, DType::Float0)?;
            numpy(py)?.call_method1("zeros", (shape_tuple(py, shape)?, dt))
        }
        Buffer::Key(_) => Err(PyTypeError::new_err(
            "PRNG key arrays cannot be converted to NumPy arrays; use jax.random.key_data",
        )),
    }
}

fn read_numpy<T: Element + Clone>(arr: &Bound<'_, PyAny>) -> PyResult<(Vec<usize>, Vec<T>)> {
    let typed = arr.cast::<PyArrayDyn<T>>()?;
    let ro = typed
        .try_readonly()
        .map_err(|e| PyValueError::new_err(format!("cannot read NumPy array: {e}")))?;
    let shape = ro.shape().to_vec();
    // `as_slice` also accepts Fortran-contiguous memory: only use it for C order.
    let c_order = typed.is_c_contiguous();
    let data = match ro.as_slice() {
        Ok(s) if c_order => alloc::to_vec("from numpy", s),
        _ => alloc::from_iter("from numpy", ro.as_array().iter().cloned()),
    }
    .py()?;
    Ok((shape, data))
}

fn host(shape: Vec<usize>, buf: Buffer) -> PyResult<HostArray> {
    HostArray::new(shape, buf).py()
}

fn numpy_to_host(arr: &Bound<'_, PyAny>) -> PyResult<HostArray> {
    let py = arr.py();
    let untyped = arr.cast::<PyUntypedArray>()?;
    let descr = untyped.dtype();
    // The built-in dtypes by their descriptor's kind and size (numpy's
    // `dtype.name` is computed in Python: several microseconds per call).
    if !descr.has_fields() && descr.is_native_byteorder() != Some(false) {
        if let Some(name) = builtin_dtype_name(descr.kind(), descr.itemsize()) {
            return read_builtin(arr, name);
        }
    }
    let mut dt = descr.into_any();
    let mut arr = arr.clone();
    let name: String = dt.getattr("name")?.extract()?;
    let names = dt.getattr("names")?;
    if !names.is_none() {
        let is_float0 = names
            .extract::<Vec<String>>()
            .map(|n| n.len() == 1 && n.first().map(String::as_str) == Some("float0"))
            .unwrap_or(false);
        if is_float0 {
            let shape = untyped.shape().to_vec();
            let n = checked_size(&shape).py()?;
            return host(shape, Buffer::Float0(n));
        }
        return Err(PyTypeError::new_err(format!(
            "structured dtype {name} is not supported by microjax_rs"
        )));
    }
    if !dt.getattr("isnative")?.extract::<bool>()? {
        let native = dt.call_method1("newbyteorder", ("=",))?;
        arr = arr.call_method1("astype", (&native,))?;
        dt = native;
    }
    let _ = &dt;
    if name == "bfloat16" {
        let u16_dt = numpy(py)?.getattr("uint16")?;
        let bits = arr.call_method1("view", (u16_dt,))?;
        let (shape, v) = read_numpy::<u16>(&bits)?;
        let v = alloc::from_iter("from numpy", v.into_iter().map(bf16::from_bits)).py()?;
        return host(shape, Buffer::BF16(v.into()));
    }
    read_builtin(&arr, &name)
}

/// The built-in NumPy dtypes microjax_rs holds: `(kind, itemsize, name)`
/// with NumPy's kind codes (`b`, `i`, `u`, `f`, `c`).
const BUILTIN_NUMPY_DTYPES: [(u8, usize, &str); 14] = [
    (b'b', 1, "bool"),
    (b'i', 1, "int8"),
    (b'i', 2, "int16"),
    (b'i', 4, "int32"),
    (b'i', 8, "int64"),
    (b'u', 1, "uint8"),
    (b'u', 2, "uint16"),
    (b'u', 4, "uint32"),
    (b'u', 8, "uint64"),
    (b'f', 2, "float16"),
    (b'f', 4, "float32"),
    (b'f', 8, "float64"),
    (b'c', 8, "complex64"),
    (b'c', 16, "complex128"),
];

/// The name of a built-in NumPy dtype of `kind` and `itemsize` bytes that
/// microjax_rs holds, or None.
fn builtin_dtype_name(kind: u8, itemsize: usize) -> Option<&'static str> {
    BUILTIN_NUMPY_DTYPES
        .iter()
        .find(|&&(k, n, _)| k == kind && n == itemsize)
        .map(|&(_, _, name)| name)
}

/// The names of the built-in NumPy dtypes `from_numpy` reads directly
/// (Python's `core` keys its NumPy fast paths by them).
#[pyfunction]
pub(crate) fn builtin_numpy_dtype_names() -> Vec<&'static str> {
    BUILTIN_NUMPY_DTYPES
        .iter()
        .map(|&(_, _, name)| name)
        .collect()
}

/// A native-order NumPy array of the built-in dtype `name` copied to the host.
fn read_builtin(arr: &Bound<'_, PyAny>, name: &str) -> PyResult<HostArray> {
    macro_rules! rd {
        ($t:ty, $var:ident) => {{
            let (shape, v) = read_numpy::<$t>(&arr)?;
            host(shape, Buffer::$var(v.into()))
        }};
    }
    match name {
        "bool" => rd!(bool, Bool),
        "int8" => rd!(i8, I8),
        "int16" => rd!(i16, I16),
        "int32" => rd!(i32, I32),
        "int64" => rd!(i64, I64),
        "uint8" => rd!(u8, U8),
        "uint16" => rd!(u16, U16),
        "uint32" => rd!(u32, U32),
        "uint64" => rd!(u64, U64),
        "float16" => rd!(f16, F16),
        "float32" => rd!(f32, F32),
        "float64" => rd!(f64, F64),
        "complex64" => rd!(microjax::array::C32, C64),
        "complex128" => rd!(microjax::array::C64, C128),
        other => Err(PyTypeError::new_err(format!(
            "dtype {other} is not supported by microjax_rs (supported: bool, int8-64, uint8-64, float16, bfloat16, float32, float64, complex64, complex128)"
        ))),
    }
}

/// Copies a NumPy array (any layout or byte order) of a supported dtype into
/// a new `ArrayImpl`. Non-arrays go through `numpy.asarray` first.
#[pyfunction]
#[pyo3(signature = (array, weak_type = false))]
pub(crate) fn from_numpy(array: &Bound<'_, PyAny>, weak_type: bool) -> PyResult<ArrayImpl> {
    let py = array.py();
    let arr = if array.cast::<PyUntypedArray>().is_ok() {
        array.clone()
    } else {
        numpy(py)?.call_method1("asarray", (array,))?
    };
    let h = numpy_to_host(&arr)?;
    Ok(ArrayImpl::new(Arc::new(h), weak_type))
}

/// A rank-0 array of `dtype_name` holding `value` (a Python bool/int/float).
#[pyfunction]
#[pyo3(signature = (value, dtype_name, weak_type = false))]
pub(crate) fn scalar(
    value: &Bound<'_, PyAny>, dtype_name: &str, weak_type: bool,
) -> PyResult<ArrayImpl> {
    let s = py_to_scalar(value)?;
    let d = dtype_from_name(dtype_name)?;
    let h = HostArray::scalar(s, d).py()?;
    Ok(ArrayImpl::new(Arc::new(h), weak_type))
}

/// An array of `shape` filled with `value` converted to `dtype_name`.
#[pyfunction]
#[pyo3(signature = (shape, value, dtype_name, weak_type = false))]
pub(crate) fn full(
    shape: Vec<usize>, value: &Bound<'_, PyAny>, dtype_name: &str, weak_type: bool,
) -> PyResult<ArrayImpl> {
    let s = py_to_scalar(value)?;
    let d = dtype_from_name(dtype_name)?;
    let n = checked_size(&shape).py()?;
    microjax::array::budget::check_shape("full", &shape, d).py()?;
    let h = HostArray::new(shape, s.to_buffer(d, n).py()?).py()?;
    Ok(ArrayImpl::new(Arc::new(h), weak_type))
}

fn fallback_repr(slf: &Bound<'_, ArrayImpl>) -> PyResult<String> {
    let py = slf.py();
    let a = slf.get();
    let d = a.arr.dtype();
    let weak = if a.weak { ", weak_type=True" } else { "" };
    match to_numpy(py, &a.arr) {
        Ok(np_arr) => {
            let body = numpy(py)?
                .getattr("array2string")?
                .call((np_arr,), Some(&[("separator", ", ")].into_py_dict(py)?))?;
            Ok(format!("Array({body}, dtype={}{weak})", d.name()))
        }
        Err(_) => Ok(format!(
            "Array(<{}{}>{weak})",
            d.name(),
            microjax::error::format_shape(a.arr.shape())
        )),
    }
}

#[pymethods]
impl ArrayImpl {
    /// NumPy defers its binary operators to ours (`np_array + array`).
    #[classattr]
    #[allow(non_upper_case_globals)]
    const __array_priority__: f64 = 100.0;

    /// Arrays are unhashable, as in JAX.
    fn __hash__(&self) -> PyResult<isize> {
        Err(PyTypeError::new_err("unhashable type: 'ArrayImpl'"))
    }

    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        shape_tuple(py, self.arr.shape())
    }

    #[getter]
    fn ndim(&self) -> usize {
        self.arr.ndim()
    }

    #[getter]
    fn size(&self) -> usize {
        self.arr.size()
    }

    #[getter]
    fn dtype<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        dtype_obj(py, self.arr.dtype())
    }

    #[getter]
    fn weak_type(&self) -> bool {
        self.weak
    }

    #[getter]
    fn dtype_name(&self) -> &'static str {
        self.arr.dtype().name()
    }

    #[getter]
    fn itemsize(&self) -> usize {
        self.arr.dtype().itemsize()
    }

    #[getter]
    fn nbytes(&self) -> usize {
        self.arr.size().saturating_mul(self.arr.dtype().itemsize())
    }

    /// The data as a NumPy array: a read-only view of this array's memory
    /// (as JAX), a new copy with `copy=True` (and for bfloat16), converted
    /// with `astype` when `dtype` differs (a copy: `copy=False` then raises
    /// NumPy's `ValueError`).
    #[pyo3(signature = (dtype = None, copy = None))]
    fn __array__<'py>(
        &self, py: Python<'py>, dtype: Option<&Bound<'py, PyAny>>, copy: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.check_live()?;
        let copy = match copy {
            Some(c) if !c.is_none() => Some(c.is_truthy()?),
            _ => None,
        };
        let view = if copy == Some(true) {
            None
        } else {
            numpy_view(py, &self.arr)?
        };
        let out = match view {
            Some(v) => v,
            None => to_numpy(py, &self.arr)?,
        };
        let Some(d) = dtype.filter(|d| !d.is_none()) else {
            return Ok(out);
        };
        let same = out
            .getattr("dtype")?
            .eq(numpy(py)?.call_method1("dtype", (d,))?)?;
        if same {
            return Ok(out);
        }
        if copy == Some(false) {
            return Err(PyValueError::new_err(
                "Unable to avoid copy while creating an array as requested.",
            ));
        }
        out.call_method1("astype", (d,))
    }

    /// A DLPack capsule sharing this array's memory: `dltensor_versioned`
    /// (flagged read-only) when `max_version` allows DLPack 1.0, else the
    /// legacy `dltensor`. Only the CPU device; `copy=True` exports a copy.
    #[pyo3(signature = (*, stream = None, max_version = None, dl_device = None, copy = None))]
    fn __dlpack__<'py>(
        &self, py: Python<'py>, stream: Option<&Bound<'py, PyAny>>,
        max_version: Option<(u32, u32)>, dl_device: Option<(i32, i32)>, copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let _ = stream; // host memory: nothing to synchronize
        self.check_live()?;
        if let Some((kind, _)) = dl_device {
            if kind != 1 {
                return Err(pyo3::exceptions::PyBufferError::new_err(format!(
                    "__dlpack__: cannot export to device type {kind} (only the CPU, type 1)"
                )));
            }
        }
        let versioned = max_version.is_some_and(|(major, _)| major >= 1);
        let arr = if copy == Some(true) {
            Arc::new(numpy_to_host(&to_numpy(py, &self.arr)?)?)
        } else {
            Arc::clone(&self.arr)
        };
        crate::dlpack::export_capsule(py, &arr, versioned, copy == Some(true))
    }

    /// `(1, 0)`: DLPack's CPU device type and the device number.
    fn __dlpack_device__(&self) -> (i32, i32) {
        (1, 0)
    }

    fn tolist<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.check_live()?;
        to_numpy(py, &self.arr)?.call_method0("tolist")
    }

    fn item<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.check_live()?;
        if self.arr.size() != 1 {
            return Err(PyValueError::new_err(
                "can only convert an array of size 1 to a Python scalar",
            ));
        }
        scalar_to_py(py, first_scalar(&self.arr)?)
    }

    fn __bool__(&self) -> PyResult<bool> {
        self.check_live()?;
        match self.arr.size() {
            1 => Ok(first_scalar(&self.arr)?.as_bool()),
            0 => Err(PyValueError::new_err(
                "The truth value of an empty array is ambiguous. Use a.size > 0 to check that an array is not empty.",
            )),
            _ => Err(PyValueError::new_err(
                "The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()",
            )),
        }
    }

    fn __int__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let s = self.scalar_value("int")?;
        let v = scalar_to_py(py, s)?;
        py.get_type::<PyInt>().call1((v,))
    }

    fn __float__(&self) -> PyResult<f64> {
        Ok(self.scalar_value("float")?.as_f64())
    }

    fn __complex__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyComplex>> {
        let (re, im) = self.scalar_value("complex")?.as_complex();
        Ok(PyComplex::from_doubles(py, re, im))
    }

    fn __index__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.check_live()?;
        if self.arr.ndim() != 0 || !self.arr.dtype().is_int() {
            return Err(PyTypeError::new_err(
                "only integer scalar arrays can be converted to a scalar index",
            ));
        }
        scalar_to_py(py, first_scalar(&self.arr)?)
    }

    fn __len__(&self) -> PyResult<usize> {
        self.arr
            .shape()
            .first()
            .copied()
            .ok_or_else(|| PyTypeError::new_err("len() of unsized object"))
    }

    fn block_until_ready(slf: Bound<'_, Self>) -> PyResult<Bound<'_, Self>> {
        slf.get().check_live()?;
        Ok(slf)
    }

    /// Marks the array deleted (as JAX's `Array.delete()`): later uses of
    /// its values raise `RuntimeError`.
    fn delete(&self) {
        self.deleted.store(true, Ordering::Relaxed);
    }

    fn is_deleted(&self) -> bool {
        self.deleted()
    }

    fn copy(&self) -> PyResult<ArrayImpl> {
        self.check_live()?;
        Ok(ArrayImpl::new(
            Arc::new(HostArray::clone(&self.arr)),
            self.weak,
        ))
    }

    fn __copy__(&self) -> PyResult<ArrayImpl> {
        self.copy()
    }

    fn __deepcopy__(&self, memo: &Bound<'_, PyAny>) -> PyResult<ArrayImpl> {
        let _ = memo;
        self.copy()
    }

    /// Pickles as `from_numpy(np_array, weak_type)`.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        self.check_live()?;
        let f = py.import("microjax_rs._core")?.getattr("from_numpy")?;
        let args = (to_numpy(py, &self.arr)?, self.weak).into_pyobject(py)?;
        PyTuple::new(py, [f, args.into_any()])
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        slf.get().check_live()?;
        match hook(py, Hook::Repr) {
            Some(f) => Ok(f.call1((slf,))?.unbind()),
            None => Ok(PyString::new(py, &fallback_repr(slf)?).into_any().unbind()),
        }
    }

    fn __str__(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        slf.get().check_live()?;
        match hook(py, Hook::Str) {
            Some(f) => Ok(f.call1((slf,))?.unbind()),
            None => match to_numpy(py, &slf.get().arr) {
                Ok(a) => Ok(a.str()?.into_any().unbind()),
                Err(_) => Ok(PyString::new(py, &fallback_repr(slf)?).into_any().unbind()),
            },
        }
    }

    fn __format__(slf: &Bound<'_, Self>, spec: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        if let Some(f) = hook(py, Hook::Format) {
            return Ok(f.call1((slf, spec))?.unbind());
        }
        let a = slf.get();
        let target = if a.arr.ndim() == 0 {
            scalar_to_py(py, first_scalar(&a.arr)?)?
        } else {
            slf.str()?.into_any()
        };
        Ok(target.call_method1("__format__", (spec,))?.unbind())
    }

    fn __getitem__(slf: &Bound<'_, Self>, idx: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        match hook(slf.py(), Hook::GetItem) {
            Some(f) => Ok(f.call1((slf, idx))?.unbind()),
            None => Err(PyTypeError::new_err(
                "indexing needs the microjax_rs Python layer (no getitem hook set)",
            )),
        }
    }

    fn __setitem__(&self, idx: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let _ = (idx, value);
        Err(PyTypeError::new_err(
            "'ArrayImpl' object does not support item assignment. JAX arrays are immutable. \
             Instead of ``x[idx] = y``, use ``x = x.at[idx].set(y)`` or another .at[] method: \
             https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html",
        ))
    }

    fn __iter__(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        match hook(slf.py(), Hook::Iter) {
            Some(f) => Ok(f.call1((slf,))?.unbind()),
            None if slf.get().arr.ndim() == 0 => {
                Err(PyTypeError::new_err("iteration over a 0-d array"))
            }
            None => Err(PyTypeError::new_err(
                "iteration needs the microjax_rs Python layer (no iter hook set)",
            )),
        }
    }

    /// Called only when normal lookup fails: the Python layer's methods
    /// (`sum`, `reshape`, `T`, `at`, ...) via the `getattr` hook. Dunder
    /// names never reach the hook (NumPy probes `__array_interface__` and
    /// friends on every `np.asarray`).
    fn __getattr__(slf: &Bound<'_, Self>, name: &Bound<'_, PyString>) -> PyResult<Py<PyAny>> {
        let n = name.to_cow()?;
        let dunder = n.len() > 4 && n.starts_with("__") && n.ends_with("__");
        match hook(slf.py(), Hook::GetAttr) {
            Some(f) if !dunder => Ok(f.call1((slf, name))?.unbind()),
            _ => Err(PyAttributeError::new_err(format!(
                "'ArrayImpl' object has no attribute '{n}'"
            ))),
        }
    }

    // ------------------------------------------------------------ operators
    fn __add__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        ops::binary(slf, other, BinOp::Add, false)
    }
    fn __radd__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        ops::binary(slf, other, BinOp::Add, true)
    }
    fn __sub__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        ops::binary(slf, other, BinOp::Sub, false)
    }
    fn __rsub__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        ops::binary(slf, other, BinOp::Sub, true)
    }
    fn __mul__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        ops::binary(slf, other, BinOp::Mul, false)
    }
    fn __rmul__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        ops::binary(slf, other, BinOp::Mul, true)
    }
    fn __truediv__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        ops::binary(slf, other, BinOp::TrueDiv, false)
    }
    fn __rtruediv__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        ops::binary(slf, other, BinOp::TrueDiv, true)
    }
    fn __pow__(
        slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>, modulo: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        ops::power(slf, other, modulo, false)
    }
    fn __rpow__(
        slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>, modulo: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        ops::power(slf, other, modulo, true)
    }
    fn __matmul__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        ops::binary(slf, other, BinOp::MatMul, false)
    }
    fn __rmatmul__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        ops::binary(slf, other, BinOp::MatMul, true)
    }
    fn __floordiv__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        ops::binary(slf, other, BinOp::FloorDiv, false)
    }
    fn __rfloordiv__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        ops::binary(slf, other, BinOp::FloorDiv, true)
    }
    fn __mod__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        ops::binary(slf, other, BinOp::Mod, false)
    }
    fn __rmod__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        ops::binary(slf, other, BinOp::Mod, true)
    }
    fn __and__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        ops::binary(slf, other, BinOp::And, false)
    }
    fn __rand__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        ops::binary(slf, other, BinOp::And, true)
    }
    fn __or__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        ops::binary(slf, other, BinOp::Or, false)
    }
    fn __ror__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        ops::binary(slf, other, BinOp::Or, true)
    }
    fn __xor__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        ops::binary(slf, other, BinOp::Xor, false)
    }
    fn __rxor__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        ops::binary(slf, other, BinOp::Xor, true)
    }
    fn __lshift__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        ops::binary(slf, other, BinOp::LShift, false)
    }
    fn __rlshift__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        ops::binary(slf, other, BinOp::LShift, true)
    }
    fn __rshift__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        ops::binary(slf, other, BinOp::RShift, false)
    }
    fn __rrshift__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        ops::binary(slf, other, BinOp::RShift, true)
    }
    fn __lt__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        ops::binary(slf, other, BinOp::Lt, false)
    }
    fn __le__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        ops::binary(slf, other, BinOp::Le, false)
    }
    fn __gt__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        ops::binary(slf, other, BinOp::Gt, false)
    }
    fn __ge__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        ops::binary(slf, other, BinOp::Ge, false)
    }
    fn __eq__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        ops::binary(slf, other, BinOp::Eq, false)
    }
    fn __ne__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        ops::binary(slf, other, BinOp::Ne, false)
    }
    fn __neg__(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        ops::unary(slf, UnOp::Neg)
    }
    fn __pos__(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        ops::unary(slf, UnOp::Pos)
    }
    fn __abs__(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        ops::unary(slf, UnOp::Abs)
    }
    fn __invert__(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        ops::unary(slf, UnOp::Invert)
    }
}
