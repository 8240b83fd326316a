//! DType conversions: names, NumPy dtype objects, promotion with the
//! x64-dependent defaults.

use crate::globals::x64;
use crate::CoreResultExt;
use microjax::dtype::ALL_DTYPES;
use microjax::DType;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyString, PyTuple, PyType};

/// Parses a core dtype name (`float32` or `f32`).
pub(crate) fn dtype_from_name(name: &str) -> PyResult<DType> {
    DType::from_name(name).py()
}

fn dtype_index(d: DType) -> usize {
    ALL_DTYPES.iter().position(|&x| x == d).unwrap_or(0)
}

static DTYPE_OBJS: [PyOnceLock<Py<PyAny>>; ALL_DTYPES.len()] =
    [const { PyOnceLock::new() }; ALL_DTYPES.len()];
static NP_DTYPE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static NUMPY: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

pub(crate) fn numpy(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    NUMPY
        .get_or_try_init(py, || Ok::<_, PyErr>(py.import("numpy")?.unbind()))
        .map(|m| m.bind(py))
}

/// `numpy.dtype` (the type).
pub(crate) fn np_dtype_type(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    NP_DTYPE
        .get_or_try_init(py, || Ok::<_, PyErr>(numpy(py)?.getattr("dtype")?.unbind()))
        .map(|m| m.bind(py))
}

/// The `ml_dtypes.bfloat16` scalar type, or a TypeError when ml_dtypes is
/// not installed.
pub(crate) fn bfloat16_type(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    match py.import("ml_dtypes") {
        Ok(m) => m.getattr("bfloat16"),
        Err(_) => Err(PyTypeError::new_err(
            "bfloat16 arrays need the ml_dtypes package (pip install ml_dtypes)",
        )),
    }
}

fn make_dtype_obj(py: Python<'_>, d: DType) -> PyResult<Py<PyAny>> {
    let np_dtype = np_dtype_type(py)?;
    let obj = match d {
        DType::BF16 => np_dtype.call1((bfloat16_type(py)?,))?,
        DType::Float0 => {
            // JAX's float0: a structured dtype of one zero-sized void field.
            let void = numpy(py)?.getattr("void")?;
            let field = PyTuple::new(
                py,
                [
                    ("float0".into_pyobject(py)?.into_any()),
                    void,
                    0i64.into_pyobject(py)?.into_any(),
                ],
            )?;
            let fields = PyList::new(py, [field])?;
            np_dtype.call1((fields,))?
        }
        DType::Key => {
            return Err(PyTypeError::new_err(
                "PRNG key arrays have no NumPy dtype (use jax.random.key_data)",
            ))
        }
        other => np_dtype.call1((other.name(),))?,
    };
    Ok(obj.unbind())
}

/// The NumPy dtype object of `d` (cached).
pub(crate) fn dtype_obj(py: Python<'_>, d: DType) -> PyResult<Bound<'_, PyAny>> {
    let idx = dtype_index(d);
    let cell = DTYPE_OBJS
        .get(idx)
        .ok_or_else(|| PyValueError::new_err("dtype table out of range"))?;
    cell.get_or_try_init(py, || make_dtype_obj(py, d))
        .map(|o| o.bind(py).clone())
}

/// The core dtype of a NumPy dtype object or dtype-like (type object, name).
pub(crate) fn dtype_from_py(obj: &Bound<'_, PyAny>) -> PyResult<DType> {
    let py = obj.py();
    if let Ok(s) = obj.extract::<String>() {
        return dtype_from_name(&s);
    }
    let np_dtype = np_dtype_type(py)?;
    let dt = if obj.is_instance(np_dtype)? {
        obj.clone()
    } else {
        np_dtype.call1((obj,))?
    };
    // float0 is a structured dtype: recognise it by its single field name.
    let names = dt.getattr("names")?;
    if !names.is_none() {
        if let Ok(t) = names.extract::<Vec<String>>() {
            if t.len() == 1 && t.first().map(String::as_str) == Some("float0") {
                return Ok(DType::Float0);
            }
        }
    }
    let name: String = dt.getattr("name")?.extract()?;
    dtype_from_name(&name).map_err(|_| {
        PyTypeError::new_err(format!(
            "dtype {name} is not supported by microjax_rs (supported: bool, int8-64, uint8-64, float16, bfloat16, float32, float64, complex64, complex128)"
        ))
    })
}

/// Whether `obj` is a type object (`np.float32`, `float`, `ml_dtypes.bfloat16`).
pub(crate) fn is_type_object(obj: &Bound<'_, PyAny>) -> bool {
    obj.is_instance_of::<PyType>()
}

/// JAX's `result_type` ([`microjax::promote::result_type`]) over
/// `(dtype_name, weak)` pairs with the defaults of the current x64 flag;
/// returns `(dtype_name, weak)`. `canonical=False`: the lattice's answer
/// as is, a weak result named by the 64-bit defaults (`jnp.promote_types`,
/// [`microjax::promote::promote_all`]).
/// (Called on every jnp promotion: names are borrowed, not copied.)
#[pyfunction]
#[pyo3(signature = (items, canonical=true))]
pub(crate) fn result_type(
    items: &Bound<'_, PyAny>, canonical: bool,
) -> PyResult<(&'static str, bool)> {
    let mut keys: Vec<(DType, bool)> = Vec::with_capacity(4);
    for item in items.try_iter()? {
        let item = item?;
        let pair = item.cast::<PyTuple>()?;
        if pair.len() != 2 {
            return Err(PyTypeError::new_err(
                "result_type expects (dtype_name, weak_type) pairs",
            ));
        }
        let name_obj = pair.get_item(0)?;
        let name = name_obj.cast::<PyString>()?.to_cow()?;
        let weak: bool = pair.get_item(1)?.extract()?;
        keys.push((dtype_from_name(&name)?, weak));
    }
    if keys.is_empty() {
        return Err(PyValueError::new_err(
            "at least one array or dtype is required",
        ));
    }
    let (d, w) = if canonical {
        microjax::promote::result_type(keys, x64())
    } else {
        // `promote_types`: JAX names a weak result by NumPy's 64-bit defaults
        // (`promote_types(complex, float)` is complex128 with x64 disabled).
        microjax::promote::promote_all(keys, true)
    }
    .py()?;
    Ok((d.name(), w))
}

/// NumPy broadcasting of `shapes` ([`microjax::promote::broadcast_shapes`]):
/// the result shape, or JAX's error: a `TypeError` naming `op` for shapes
/// of one rank, else a `ValueError`. With `rank_promotion` (the
/// `jax_numpy_rank_promotion` mode) and `fun` (the NumPy function's name),
/// operands of different ranks raise JAX's `ValueError` (`'raise'`) or warn
/// with its `UserWarning` (`'warn'`).
#[pyfunction]
#[pyo3(signature = (shapes, op=None, rank_promotion=None, fun=None))]
pub(crate) fn broadcast_shapes(
    py: Python<'_>, shapes: Vec<Vec<usize>>, op: Option<&str>, rank_promotion: Option<&str>,
    fun: Option<&str>,
) -> PyResult<Vec<usize>> {
    let refs: Vec<&[usize]> = shapes.iter().map(Vec::as_slice).collect();
    if let Some(mode) = rank_promotion {
        let mode = microjax::promote::RankPromotion::from_name(mode).py()?;
        let name = fun.or(op).unwrap_or("broadcasting");
        if let Some(text) = microjax::promote::check_rank_promotion(name, &refs, mode).py()? {
            let text =
                std::ffi::CString::new(text).map_err(|e| PyValueError::new_err(e.to_string()))?;
            let category = py.get_type::<pyo3::exceptions::PyUserWarning>();
            PyErr::warn(py, &category, &text, 2)?;
        }
    }
    microjax::promote::broadcast_shapes(op, &refs).py()
}

/// The explicit mantissa bits of a real float dtype (None for the others).
fn mantissa_bits(d: DType) -> Option<u32> {
    let digits = match d {
        DType::F16 => half::f16::MANTISSA_DIGITS,
        DType::BF16 => half::bf16::MANTISSA_DIGITS,
        DType::F32 => f32::MANTISSA_DIGITS,
        DType::F64 => f64::MANTISSA_DIGITS,
        _ => return None,
    };
    digits.checked_sub(1)
}

/// What the core knows of each dtype, by name: `(short name as jaxprs
/// print it, NumPy kind character, the name with x64 disabled, is float,
/// bytes per element, explicit mantissa bits or None)`.
/// Python reads its dtype facts from this table.
#[pyfunction]
pub(crate) fn dtype_table(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    for d in ALL_DTYPES {
        let kind = d.kind().to_string();
        out.set_item(
            d.name(),
            (
                d.short_name(),
                kind,
                d.canonicalize(false).name(),
                d.is_float(),
                d.itemsize(),
                mantissa_bits(d),
            ),
        )?;
    }
    Ok(out)
}
