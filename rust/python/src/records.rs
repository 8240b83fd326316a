//! The small frozen classes that carry structure across the boundary:
//! avals, literals, staged variables, equations and a jaxpr's structure.
//! Python reads them by field name (`aval.dtype_name`, `eqn.inputs`); each
//! also reads as the tuple of its fields in order (iteration, `len`,
//! indexing, equality with that tuple), so the binding's tuple-shaped API
//! keeps working for code written against it.

use crate::array::{py_to_scalar, scalar_to_py};
use crate::dtypes::dtype_from_name;
use microjax::{Atom, Aval, Literal, Var};
use pyo3::basic::CompareOp;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyIterator, PyTuple};
use pyo3::PyTraverseError;

/// Defines a frozen record class `$ty` (Python name `$pyname`) whose fields
/// are Python objects, with a constructor taking them in order, a getter
/// per field and the tuple protocol over them.
macro_rules! record {
    ($(#[$doc:meta])* $ty:ident = $pyname:literal { $($field:ident),+ $(,)? }) => {
        $(#[$doc])*
        #[pyclass(frozen, name = $pyname, module = "microjax_rs._core")]
        pub(crate) struct $ty {
            $(pub(crate) $field: Py<PyAny>,)+
        }

        impl $ty {
            const FIELDS: &'static [&'static str] = &[$(stringify!($field)),+];

            /// The fields in order, as a tuple.
            pub(crate) fn as_tuple<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
                PyTuple::new(py, [$(self.$field.bind(py)),+])
            }
        }

        #[pymethods]
        impl $ty {
            #[new]
            fn py_new($($field: Py<PyAny>),+) -> Self {
                $ty { $($field),+ }
            }

            $(
                #[getter]
                fn $field(&self, py: Python<'_>) -> Py<PyAny> {
                    self.$field.clone_ref(py)
                }
            )+

            fn __len__(&self) -> usize {
                Self::FIELDS.len()
            }

            fn __getitem__<'py>(
                &self, py: Python<'py>, index: &Bound<'py, PyAny>,
            ) -> PyResult<Bound<'py, PyAny>> {
                self.as_tuple(py)?.as_any().get_item(index)
            }

            fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyIterator>> {
                self.as_tuple(py)?.as_any().try_iter()
            }

            fn __richcmp__(
                &self, other: &Bound<'_, PyAny>, op: CompareOp,
            ) -> PyResult<Py<PyAny>> {
                let py = other.py();
                let theirs = match other.cast::<$ty>() {
                    Ok(o) => Some(o.get().as_tuple(py)?),
                    Err(_) => other.cast::<PyTuple>().ok().cloned(),
                };
                compare(&self.as_tuple(py)?, theirs, op)
            }

            fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
                self.as_tuple(py)?.hash()
            }

            fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
                repr($pyname, Self::FIELDS, &self.as_tuple(py)?)
            }

            fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
                $(visit.call(&self.$field)?;)+
                Ok(())
            }
        }
    };
}

/// `==`/`!=` of a record's fields with another record's or a tuple;
/// NotImplemented for anything else and for the orderings.
fn compare(
    mine: &Bound<'_, PyTuple>, theirs: Option<Bound<'_, PyTuple>>, op: CompareOp,
) -> PyResult<Py<PyAny>> {
    let py = mine.py();
    let Some(theirs) = theirs else {
        return Ok(py.NotImplemented());
    };
    let eq = mine.eq(theirs)?;
    let out = match op {
        CompareOp::Eq => eq,
        CompareOp::Ne => !eq,
        _ => return Ok(py.NotImplemented()),
    };
    Ok(PyBool::new(py, out).to_owned().into_any().unbind())
}

fn repr(name: &str, fields: &[&str], values: &Bound<'_, PyTuple>) -> PyResult<String> {
    let parts = fields
        .iter()
        .zip(values.iter())
        .map(|(f, v)| Ok(format!("{f}={}", v.repr()?)))
        .collect::<PyResult<Vec<String>>>()?;
    Ok(format!("{name}({})", parts.join(", ")))
}

record! {
    /// An abstract value: `shape` (tuple of ints), `dtype_name`, `weak_type`.
    AvalRecord = "Aval" { shape, dtype_name, weak_type }
}

record! {
    /// A literal atom: `value` (a Python bool/int/float), `dtype_name`,
    /// `weak_type`.
    LiteralRecord = "Literal" { value, dtype_name, weak_type }
}

record! {
    /// A variable a builder made: `var` (its id) and its aval's `shape`,
    /// `dtype_name` and `weak_type`.
    StagedVar = "StagedVar" { var, shape, dtype_name, weak_type }
}

record! {
    /// One equation of a jaxpr: `prim` (a `Prim`), `inputs` (atoms: var ids
    /// and `Literal`s), `outputs` (var ids), `source` (text or None) and
    /// `effect` (`"none"` or the effect's name).
    EqnRecord = "Eqn" { prim, inputs, outputs, source, effect }
}

record! {
    /// What an AD trace keeps of one staged step, for the values one level
    /// down it computes lazily: `prim` (the Python primitive, or a spliced
    /// program), `params`, `args` (the operands as given, a tuple) and
    /// `outvars` (the output var ids; None for an output that is no fresh
    /// variable).
    StagedEqn = "StagedEqn" { prim, params, args, outvars }
}

record! {
    /// A jaxpr's structure: `avals` (one `Aval` per var id), `constvars`,
    /// `invars`, `eqns` (`Eqn`s) and `outvars` (atoms).
    JaxprStructure = "JaxprStructure" { avals, constvars, invars, eqns, outvars }
}

/// The `Aval` record of `a`.
pub(crate) fn aval_to_py<'py>(py: Python<'py>, a: &Aval) -> PyResult<Bound<'py, AvalRecord>> {
    let rec = AvalRecord {
        shape: PyTuple::new(py, a.shape.iter().copied())?
            .into_any()
            .unbind(),
        dtype_name: a.dtype.name().into_pyobject(py)?.into_any().unbind(),
        weak_type: PyBool::new(py, a.weak_type).to_owned().into_any().unbind(),
    };
    Bound::new(py, rec)
}

/// Reads an `Aval` record (or a `(shape, dtype_name, weak)` tuple).
pub(crate) fn py_to_aval(obj: &Bound<'_, PyAny>) -> PyResult<Aval> {
    let bad = || PyTypeError::new_err("an aval is an Aval (shape, dtype_name, weak_type)");
    let (shape, name, weak): (Vec<usize>, String, bool) = match obj.cast::<AvalRecord>() {
        Ok(r) => {
            let r = r.get();
            let py = obj.py();
            let shape = r.shape.bind(py).extract().map_err(|_| bad())?;
            let name = r.dtype_name.bind(py).extract().map_err(|_| bad())?;
            let weak = r.weak_type.bind(py).extract().map_err(|_| bad())?;
            (shape, name, weak)
        }
        Err(_) => obj.extract().map_err(|_| bad())?,
    };
    Ok(Aval::weak(shape, dtype_from_name(&name)?, weak))
}

/// A var id read from Python.
pub(crate) fn var_from_py(obj: &Bound<'_, PyAny>) -> PyResult<Var> {
    let id: i64 = obj.extract()?;
    u32::try_from(id)
        .map(Var)
        .map_err(|_| PyValueError::new_err(format!("invalid variable id {id}")))
}

fn literal_from_parts(
    value: &Bound<'_, PyAny>, name: &Bound<'_, PyAny>, weak: &Bound<'_, PyAny>,
) -> PyResult<Atom> {
    let val = py_to_scalar(value)?;
    let name: String = name.extract()?;
    let weak: bool = weak.extract()?;
    Ok(Atom::Lit(Literal::new(val, dtype_from_name(&name)?, weak)))
}

/// An equation input or output: an int var id, or a `Literal` (or a
/// `(value, dtype_name, weak)` tuple) with a Python bool/int/float value.
pub(crate) fn atom_from_py(obj: &Bound<'_, PyAny>) -> PyResult<Atom> {
    if obj.is_instance_of::<PyInt>() && !obj.is_instance_of::<PyBool>() {
        return var_from_py(obj).map(Atom::Var);
    }
    if let Ok(r) = obj.cast::<LiteralRecord>() {
        let (r, py) = (r.get(), obj.py());
        return literal_from_parts(
            r.value.bind(py),
            r.dtype_name.bind(py),
            r.weak_type.bind(py),
        );
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        if t.len() == 3 {
            return literal_from_parts(&t.get_item(0)?, &t.get_item(1)?, &t.get_item(2)?);
        }
    }
    Err(PyTypeError::new_err(
        "an atom is an int variable id or a Literal (value, dtype_name, weak_type)",
    ))
}

/// The `Literal` record of `l`.
pub(crate) fn literal_to_py<'py>(py: Python<'py>, l: &Literal) -> PyResult<Bound<'py, PyAny>> {
    let rec = LiteralRecord {
        value: scalar_to_py(py, l.val)?.unbind(),
        dtype_name: l.aval.dtype.name().into_pyobject(py)?.into_any().unbind(),
        weak_type: PyBool::new(py, l.aval.weak_type)
            .to_owned()
            .into_any()
            .unbind(),
    };
    Ok(Bound::new(py, rec)?.into_any())
}

/// A var id, or the `Literal` record of a literal.
pub(crate) fn atom_to_py<'py>(py: Python<'py>, a: &Atom) -> PyResult<Bound<'py, PyAny>> {
    match a {
        Atom::Var(v) => Ok(v.0.into_pyobject(py)?.into_any()),
        Atom::Lit(l) => literal_to_py(py, l),
    }
}

/// The `StagedVar` record of `v` with aval `a`.
pub(crate) fn staged_var<'py>(py: Python<'py>, v: Var, a: &Aval) -> PyResult<Bound<'py, PyAny>> {
    let aval = aval_to_py(py, a)?;
    let aval = aval.get();
    let rec = StagedVar {
        var: v.0.into_pyobject(py)?.into_any().unbind(),
        shape: aval.shape.clone_ref(py),
        dtype_name: aval.dtype_name.clone_ref(py),
        weak_type: aval.weak_type.clone_ref(py),
    };
    Ok(Bound::new(py, rec)?.into_any())
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<AvalRecord>()?;
    m.add_class::<LiteralRecord>()?;
    m.add_class::<StagedVar>()?;
    m.add_class::<EqnRecord>()?;
    m.add_class::<StagedEqn>()?;
    m.add_class::<JaxprStructure>()?;
    Ok(())
}
