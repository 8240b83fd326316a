//! Read-only NumPy views of host arrays (`np.asarray(x)` without a copy, as
//! JAX returns).
//!
//! The one `unsafe` call of the binding lives here: NumPy is handed a pointer
//! into a host array's element memory. That is sound because
//! * the memory stays valid: the NumPy array's base object is a [`HostView`]
//!   holding its own `Arc` of the host array, so neither `Array.delete()`, a
//!   donation nor dropping the `Array` frees it while a view exists;
//! * nobody writes it: host arrays are immutable, and the executor reuses a
//!   buffer in place only when its `Arc` is unique, which the view's `Arc`
//!   prevents; the view itself is made read-only before it is returned.
#![allow(unsafe_code)]

use microjax::{Buffer, HostArray};
use numpy::ndarray::{ArrayViewD, IxDyn};
use numpy::npyffi::flags::NPY_ARRAY_WRITEABLE;
use numpy::{Element, PyArrayDyn, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::sync::Arc;

/// Keeps a host array's elements alive for the NumPy views of it (their
/// `.base`).
#[pyclass(frozen, name = "HostView", module = "microjax_rs")]
pub struct HostView {
    _arr: Arc<HostArray>,
}

fn view_of<'py, T: Element>(
    py: Python<'py>, owner: &Arc<HostArray>, data: &[T],
) -> PyResult<Bound<'py, PyAny>> {
    let view = ArrayViewD::from_shape(IxDyn(owner.shape()), data)
        .map_err(|e| PyValueError::new_err(format!("cannot shape host buffer: {e}")))?;
    let container = Bound::new(
        py,
        HostView {
            _arr: Arc::clone(owner),
        },
    )?
    .into_any();
    // SAFETY: `data` is the element memory of `owner`, which `container`
    // (the new array's base object, released only with the array) keeps
    // alive and which nobody writes while it is shared (module doc). The
    // flags of the array just created, which no one else has seen yet, are
    // cleared of WRITEABLE (a direct store: rust-numpy's borrow tracking,
    // which `make_nonwriteable` goes through, costs more than the view).
    let arr = unsafe {
        let arr = PyArrayDyn::<T>::borrow_from_array(&view, container);
        (*arr.as_array_ptr()).flags &= !NPY_ARRAY_WRITEABLE;
        arr
    };
    Ok(arr.into_any())
}

/// A read-only NumPy view of `arr`'s elements, or None for element types
/// NumPy cannot view directly (bfloat16, float0, PRNG keys, empty arrays):
/// the caller copies those.
pub(crate) fn numpy_view<'py>(
    py: Python<'py>, arr: &Arc<HostArray>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    if arr.size() == 0 {
        return Ok(None);
    }
    let out = match arr.buffer() {
        Buffer::Bool(v) => view_of(py, arr, v.as_slice())?,
        Buffer::I8(v) => view_of(py, arr, v.as_slice())?,
        Buffer::I16(v) => view_of(py, arr, v.as_slice())?,
        Buffer::I32(v) => view_of(py, arr, v.as_slice())?,
        Buffer::I64(v) => view_of(py, arr, v.as_slice())?,
        Buffer::U8(v) => view_of(py, arr, v.as_slice())?,
        Buffer::U16(v) => view_of(py, arr, v.as_slice())?,
        Buffer::U32(v) => view_of(py, arr, v.as_slice())?,
        Buffer::U64(v) => view_of(py, arr, v.as_slice())?,
        Buffer::F16(v) => view_of(py, arr, v.as_slice())?,
        Buffer::F32(v) => view_of(py, arr, v.as_slice())?,
        Buffer::F64(v) => view_of(py, arr, v.as_slice())?,
        Buffer::C64(v) => view_of(py, arr, v.as_slice())?,
        Buffer::C128(v) => view_of(py, arr, v.as_slice())?,
        Buffer::BF16(_) | Buffer::Float0(_) | Buffer::Key(_) => return Ok(None),
    };
    Ok(Some(out))
}
