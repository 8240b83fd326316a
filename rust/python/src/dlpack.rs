//! DLPack exchange of host arrays (`x.__dlpack__()`, `jnp.from_dlpack`) with
//! NumPy, PyTorch and any other DLPack producer or consumer, without copies.
//!
//! The C structures are DLPack's (`dlpack.h`, versions 0.8 and 1.x), declared
//! here `#[repr(C)]`. This module is the binding's FFI for them and holds its
//! `unsafe` code; each block says what makes it sound:
//! * export: a boxed `Exported` (the managed tensor first, then the `Arc` of
//!   the host array and the shape/strides it points into) goes into a
//!   capsule named `dltensor` (or `dltensor_versioned`, read-only flagged,
//!   when the consumer asks for DLPack ≥ 1.0). A consumer renames the
//!   capsule (`used_dltensor...`) and calls the deleter when done; the
//!   capsule's destructor frees the tensor only if it was never consumed
//!   (still under its first name), so it is freed exactly once.
//! * import: the producer's capsule is read, its tensor checked (CPU,
//!   compact row-major, a dtype microjax has, aligned), the capsule renamed
//!   `used_dltensor` and the tensor's deleter kept in the new array's
//!   foreign-memory owner, which calls it when the last array holding the
//!   memory drops (DLPack's deleters may be called from any thread; NumPy's
//!   and PyTorch's take the GIL themselves).
//!
//! The imported memory is shared with the producer, as in JAX: writing the
//! producer's array afterwards is not supported.
#![allow(unsafe_code)]

use crate::array::ArrayImpl;
use crate::CoreResultExt;
use half::{bf16, f16};
use microjax::array::{Elems, C32, C64};
use microjax::{Buffer, DType, HostArray};
use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use std::ffi::{c_void, CStr};
use std::sync::Arc;

const DL_CPU: i32 = 1;
const DL_INT: u8 = 0;
const DL_UINT: u8 = 1;
const DL_FLOAT: u8 = 2;
const DL_BFLOAT: u8 = 4;
const DL_COMPLEX: u8 = 5;
const DL_BOOL: u8 = 6;
const FLAG_READ_ONLY: u64 = 1;
const FLAG_IS_COPIED: u64 = 2;

const LEGACY: &CStr = c"dltensor";
const VERSIONED: &CStr = c"dltensor_versioned";
const USED_LEGACY: &CStr = c"used_dltensor";

#[repr(C)]
#[derive(Clone, Copy)]
struct DLDevice {
    device_type: i32,
    device_id: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct DLDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

#[repr(C)]
struct DLTensor {
    data: *mut c_void,
    device: DLDevice,
    ndim: i32,
    dtype: DLDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

#[repr(C)]
struct DLManagedTensor {
    dl_tensor: DLTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

#[repr(C)]
struct DLPackVersion {
    major: u32,
    minor: u32,
}

#[repr(C)]
struct DLManagedTensorVersioned {
    version: DLPackVersion,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
    flags: u64,
    dl_tensor: DLTensor,
}

fn dl_dtype(d: DType) -> Option<DLDataType> {
    let (code, bits) = match d {
        DType::Bool => (DL_BOOL, 8),
        DType::I8 => (DL_INT, 8),
        DType::I16 => (DL_INT, 16),
        DType::I32 => (DL_INT, 32),
        DType::I64 => (DL_INT, 64),
        DType::U8 => (DL_UINT, 8),
        DType::U16 => (DL_UINT, 16),
        DType::U32 => (DL_UINT, 32),
        DType::U64 => (DL_UINT, 64),
        DType::F16 => (DL_FLOAT, 16),
        DType::BF16 => (DL_BFLOAT, 16),
        DType::F32 => (DL_FLOAT, 32),
        DType::F64 => (DL_FLOAT, 64),
        DType::C64 => (DL_COMPLEX, 64),
        DType::C128 => (DL_COMPLEX, 128),
        _ => return None,
    };
    Some(DLDataType {
        code,
        bits,
        lanes: 1,
    })
}

fn dtype_of(t: DLDataType) -> PyResult<DType> {
    let d = match (t.code, t.bits, t.lanes) {
        (DL_BOOL, 8, 1) => DType::Bool,
        (DL_INT, 8, 1) => DType::I8,
        (DL_INT, 16, 1) => DType::I16,
        (DL_INT, 32, 1) => DType::I32,
        (DL_INT, 64, 1) => DType::I64,
        (DL_UINT, 8, 1) => DType::U8,
        (DL_UINT, 16, 1) => DType::U16,
        (DL_UINT, 32, 1) => DType::U32,
        (DL_UINT, 64, 1) => DType::U64,
        (DL_FLOAT, 16, 1) => DType::F16,
        (DL_BFLOAT, 16, 1) => DType::BF16,
        (DL_FLOAT, 32, 1) => DType::F32,
        (DL_FLOAT, 64, 1) => DType::F64,
        (DL_COMPLEX, 64, 1) => DType::C64,
        (DL_COMPLEX, 128, 1) => DType::C128,
        (code, bits, lanes) => {
            return Err(PyTypeError::new_err(format!(
                "from_dlpack: unsupported DLPack dtype (code {code}, {bits} bits, {lanes} lanes)"
            )))
        }
    };
    Ok(d)
}

// -- export ---------------------------------------------------------------

/// What an exported capsule points to: the managed tensor (first, so a
/// pointer to it is a pointer to this) and what it borrows.
#[repr(C)]
struct Exported<M> {
    managed: M,
    _arr: Arc<HostArray>,
    shape: Vec<i64>,
    strides: Vec<i64>,
}

fn element_ptr(arr: &HostArray) -> *mut c_void {
    let p: *const c_void = match arr.buffer() {
        Buffer::Bool(v) => v.as_slice().as_ptr().cast(),
        Buffer::I8(v) => v.as_slice().as_ptr().cast(),
        Buffer::I16(v) => v.as_slice().as_ptr().cast(),
        Buffer::I32(v) => v.as_slice().as_ptr().cast(),
        Buffer::I64(v) => v.as_slice().as_ptr().cast(),
        Buffer::U8(v) => v.as_slice().as_ptr().cast(),
        Buffer::U16(v) => v.as_slice().as_ptr().cast(),
        Buffer::U32(v) => v.as_slice().as_ptr().cast(),
        Buffer::U64(v) => v.as_slice().as_ptr().cast(),
        Buffer::F16(v) => v.as_slice().as_ptr().cast(),
        Buffer::BF16(v) => v.as_slice().as_ptr().cast(),
        Buffer::F32(v) => v.as_slice().as_ptr().cast(),
        Buffer::F64(v) => v.as_slice().as_ptr().cast(),
        Buffer::C64(v) => v.as_slice().as_ptr().cast(),
        Buffer::C128(v) => v.as_slice().as_ptr().cast(),
        Buffer::Key(v) => v.as_slice().as_ptr().cast(),
        Buffer::Float0(_) => std::ptr::null(),
    };
    p.cast_mut()
}

fn tensor_of(
    arr: &HostArray, dtype: DLDataType, shape: &mut [i64], strides: &mut [i64],
) -> DLTensor {
    DLTensor {
        data: element_ptr(arr),
        device: DLDevice {
            device_type: DL_CPU,
            device_id: 0,
        },
        ndim: i32::try_from(shape.len()).unwrap_or(i32::MAX),
        dtype,
        shape: shape.as_mut_ptr(),
        strides: strides.as_mut_ptr(),
        byte_offset: 0,
    }
}

unsafe extern "C" fn delete_legacy(p: *mut DLManagedTensor) {
    if !p.is_null() {
        // SAFETY: `p` came from `Box::into_raw` of an `Exported<DLManagedTensor>`
        // (export_capsule), whose first field it points to; DLPack calls the
        // deleter once.
        drop(unsafe { Box::from_raw(p.cast::<Exported<DLManagedTensor>>()) });
    }
}

unsafe extern "C" fn delete_versioned(p: *mut DLManagedTensorVersioned) {
    if !p.is_null() {
        // SAFETY: as `delete_legacy`, for `Exported<DLManagedTensorVersioned>`.
        drop(unsafe { Box::from_raw(p.cast::<Exported<DLManagedTensorVersioned>>()) });
    }
}

unsafe extern "C" fn capsule_legacy(cap: *mut ffi::PyObject) {
    // SAFETY: called by Python with the capsule being destroyed. Still named
    // `dltensor`, it was never consumed: its tensor is ours to free.
    // `PyCapsule_IsValid` sets no exception.
    unsafe {
        if ffi::PyCapsule_IsValid(cap, LEGACY.as_ptr()) == 1 {
            delete_legacy(ffi::PyCapsule_GetPointer(cap, LEGACY.as_ptr()).cast());
        }
    }
}

unsafe extern "C" fn capsule_versioned(cap: *mut ffi::PyObject) {
    // SAFETY: as `capsule_legacy`.
    unsafe {
        if ffi::PyCapsule_IsValid(cap, VERSIONED.as_ptr()) == 1 {
            delete_versioned(ffi::PyCapsule_GetPointer(cap, VERSIONED.as_ptr()).cast());
        }
    }
}

/// A raw `Exported<M>` box: the managed tensor `make` builds around the
/// tensor of `arr`, pointing into the box's own shape and strides.
fn boxed<M>(
    arr: &Arc<HostArray>, dtype: DLDataType, shape: Vec<i64>, strides: Vec<i64>,
    make: impl FnOnce(DLTensor) -> M, tensor: impl FnOnce(&mut M) -> &mut DLTensor,
) -> *mut c_void {
    let mut ex = Box::new(Exported {
        managed: make(tensor_of(arr, dtype, &mut [], &mut [])),
        _arr: Arc::clone(arr),
        shape,
        strides,
    });
    let Exported {
        managed,
        shape,
        strides,
        ..
    } = &mut *ex;
    *tensor(managed) = tensor_of(arr, dtype, shape, strides);
    Box::into_raw(ex).cast()
}

/// A DLPack capsule of `arr`'s memory; `versioned` (DLPack 1.0) capsules
/// are flagged read-only, or as a copy when `copied` (the consumer may
/// write it then).
pub(crate) fn export_capsule<'py>(
    py: Python<'py>, arr: &Arc<HostArray>, versioned: bool, copied: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let dtype = dl_dtype(arr.dtype()).ok_or_else(|| {
        PyBufferError::new_err(format!(
            "DLPack cannot hold arrays of dtype {}",
            arr.dtype().name()
        ))
    })?;
    let dims = arr.shape();
    let mut shape = Vec::with_capacity(dims.len());
    let mut strides = vec![0i64; dims.len()];
    let mut step: i64 = 1;
    for (i, &d) in dims.iter().enumerate().rev() {
        let d = i64::try_from(d).map_err(|_| PyValueError::new_err("dimension too large"))?;
        if let Some(s) = strides.get_mut(i) {
            *s = step;
        }
        step = step.saturating_mul(d.max(1));
    }
    for &d in dims {
        shape.push(i64::try_from(d).map_err(|_| PyValueError::new_err("dimension too large"))?);
    }
    let (ptr, name, destructor): (*mut c_void, &CStr, unsafe extern "C" fn(*mut ffi::PyObject)) =
        if versioned {
            let flags = if copied {
                FLAG_IS_COPIED
            } else {
                FLAG_READ_ONLY
            };
            let managed = |dl_tensor| DLManagedTensorVersioned {
                version: DLPackVersion { major: 1, minor: 0 },
                manager_ctx: std::ptr::null_mut(),
                deleter: Some(delete_versioned),
                flags,
                dl_tensor,
            };
            let ptr = boxed(arr, dtype, shape, strides, managed, |m| &mut m.dl_tensor);
            (ptr, VERSIONED, capsule_versioned)
        } else {
            let managed = |dl_tensor| DLManagedTensor {
                dl_tensor,
                manager_ctx: std::ptr::null_mut(),
                deleter: Some(delete_legacy),
            };
            let ptr = boxed(arr, dtype, shape, strides, managed, |m| &mut m.dl_tensor);
            (ptr, LEGACY, capsule_legacy)
        };
    // SAFETY: `ptr` is a live box the capsule owns from here (freed by its
    // destructor unless a consumer takes it); the name is a static C string.
    let cap = unsafe { ffi::PyCapsule_New(ptr, name.as_ptr(), Some(destructor)) };
    if cap.is_null() {
        // SAFETY: the capsule was not made, so the box is still ours.
        unsafe {
            if versioned {
                delete_versioned(ptr.cast());
            } else {
                delete_legacy(ptr.cast());
            }
        }
        return Err(PyErr::fetch(py));
    }
    // SAFETY: `cap` is a new reference.
    Ok(unsafe { Bound::from_owned_ptr(py, cap) })
}

// -- import ---------------------------------------------------------------

/// Keeps an imported tensor's memory alive; calls its deleter when dropped.
struct Imported(*mut DLManagedTensor);

// SAFETY: DLPack allows the deleter to be called from any thread, and the
// pointer is used for nothing else.
unsafe impl Send for Imported {}
// SAFETY: as above; `Imported` has no shared-access methods.
unsafe impl Sync for Imported {}

impl Drop for Imported {
    fn drop(&mut self) {
        // SAFETY: `self.0` is the consumed tensor, released exactly once, here.
        unsafe {
            if let Some(deleter) = (*self.0).deleter {
                deleter(self.0);
            }
        }
    }
}

fn foreign<T>(ptr: *const c_void, len: usize, owner: &Arc<Imported>) -> PyResult<Elems<T>> {
    let owner: Arc<dyn microjax::array::ForeignOwner> = owner.clone();
    // SAFETY: `ptr` is the tensor's first element (data + byte_offset) of a
    // compact row-major tensor of `len` elements of this dtype (checked by
    // the caller), kept alive by `owner`; microjax never writes it.
    unsafe { Elems::from_foreign(ptr.cast::<T>(), len, owner) }.py()
}

/// A new array sharing the memory of a legacy (`dltensor`) capsule, which is
/// consumed; Ok(None) when the tensor is not a compact row-major CPU
/// tensor (the caller then copies through NumPy).
pub(crate) fn import_capsule(
    py: Python<'_>, cap: &Bound<'_, PyAny>,
) -> PyResult<Option<ArrayImpl>> {
    let obj = cap.as_ptr();
    // SAFETY: `obj` is a live object; `PyCapsule_IsValid` sets no exception.
    if unsafe { ffi::PyCapsule_IsValid(obj, LEGACY.as_ptr()) } != 1 {
        return Err(PyValueError::new_err(
            "from_dlpack: expected an unconsumed 'dltensor' capsule",
        ));
    }
    // SAFETY: a valid capsule of that name holds a `DLManagedTensor`
    // (DLPack's contract for the producer).
    let managed =
        unsafe { ffi::PyCapsule_GetPointer(obj, LEGACY.as_ptr()) }.cast::<DLManagedTensor>();
    if managed.is_null() {
        return Err(PyErr::fetch(py));
    }
    // SAFETY: the producer's tensor, valid until its deleter runs (not yet:
    // the capsule is unconsumed).
    let t = unsafe { &(*managed).dl_tensor };
    if t.device.device_type != DL_CPU {
        return Err(PyBufferError::new_err(format!(
            "from_dlpack: only CPU tensors can be imported (device type {})",
            t.device.device_type
        )));
    }
    let dtype = dtype_of(t.dtype)?;
    let ndim = usize::try_from(t.ndim).map_err(|_| PyValueError::new_err("negative ndim"))?;
    let read = |p: *mut i64| -> Vec<i64> {
        if p.is_null() || ndim == 0 {
            return Vec::new();
        }
        // SAFETY: DLPack's shape/strides arrays hold `ndim` entries.
        unsafe { std::slice::from_raw_parts(p, ndim) }.to_vec()
    };
    let dims = read(t.shape);
    let strides = read(t.strides);
    let mut shape = Vec::with_capacity(ndim);
    for &d in &dims {
        shape.push(usize::try_from(d).map_err(|_| PyValueError::new_err("negative dimension"))?);
    }
    let len = microjax::checked_size(&shape).py()?;
    if !strides.is_empty() && len > 1 {
        let mut step: i64 = 1;
        for (&d, &s) in dims.iter().zip(&strides).rev() {
            if d != 1 && s != step {
                return Ok(None);
            }
            step = step.saturating_mul(d);
        }
    }
    let offset =
        usize::try_from(t.byte_offset).map_err(|_| PyValueError::new_err("byte offset"))?;
    let data = t
        .data
        .cast::<u8>()
        .cast_const()
        .wrapping_add(offset)
        .cast::<c_void>();
    // Consume the capsule: from here its tensor is freed by `Imported`.
    // SAFETY: renaming a valid capsule; the name is a static C string.
    if unsafe { ffi::PyCapsule_SetName(obj, USED_LEGACY.as_ptr()) } != 0 {
        return Err(PyErr::fetch(py));
    }
    let owner = Arc::new(Imported(managed));
    let buf = match dtype {
        DType::Bool => Buffer::Bool(foreign(data, len, &owner)?),
        DType::I8 => Buffer::I8(foreign(data, len, &owner)?),
        DType::I16 => Buffer::I16(foreign(data, len, &owner)?),
        DType::I32 => Buffer::I32(foreign(data, len, &owner)?),
        DType::I64 => Buffer::I64(foreign(data, len, &owner)?),
        DType::U8 => Buffer::U8(foreign(data, len, &owner)?),
        DType::U16 => Buffer::U16(foreign(data, len, &owner)?),
        DType::U32 => Buffer::U32(foreign(data, len, &owner)?),
        DType::U64 => Buffer::U64(foreign(data, len, &owner)?),
        DType::F16 => Buffer::F16(foreign::<f16>(data, len, &owner)?),
        DType::BF16 => Buffer::BF16(foreign::<bf16>(data, len, &owner)?),
        DType::F32 => Buffer::F32(foreign(data, len, &owner)?),
        DType::F64 => Buffer::F64(foreign(data, len, &owner)?),
        DType::C64 => Buffer::C64(foreign::<C32>(data, len, &owner)?),
        DType::C128 => Buffer::C128(foreign::<C64>(data, len, &owner)?),
        _ => return Err(PyTypeError::new_err("from_dlpack: unsupported dtype")),
    };
    let arr = HostArray::new(shape, buf).py()?;
    Ok(Some(ArrayImpl::new(Arc::new(arr), false)))
}

/// `_core.from_dlpack_capsule(capsule)`: the array sharing a legacy DLPack
/// capsule's memory, or None when it must be copied (not compact row-major).
#[pyfunction]
pub(crate) fn from_dlpack_capsule(
    py: Python<'_>, capsule: &Bound<'_, PyAny>,
) -> PyResult<Option<ArrayImpl>> {
    import_capsule(py, capsule)
}
