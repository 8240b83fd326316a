//! Foreign element memory: elements someone else allocated (a NumPy array,
//! a DLPack tensor, ...) that an [`Elems`] reads without copying, kept alive
//! by an owner whose drop releases it.
//!
//! This is the storage layer's one unsafe module: it turns a raw pointer
//! and a length into a slice. [`Elems::from_foreign`] is `unsafe` because
//! only its caller can promise what the pointer points to; everything it
//! can check (null, alignment, the byte length fitting `isize` and the
//! address space) it checks and reports as a typed error.
//!
//! Foreign memory is never written: [`Elems`]'s writers copy it into an
//! owned `Vec` first, the host buffer pool never takes it, and in-place
//! reuse paths skip it. The owner is dropped when the last `Elems` holding
//! it (clones share it) drops or is copied out.
#![allow(unsafe_code)]

use super::Elems;
use crate::error::{Error, Result};
use std::ptr::NonNull;
use std::sync::{Arc, Mutex};

/// Anything that keeps foreign memory alive until it is dropped (a Python
/// object reference, a DLPack deleter wrapper, an `Arc<Vec<T>>`, an
/// [`OnRelease`]). Arrays cross threads, so owners must be `Send + Sync`;
/// the owner is dropped on whichever thread drops the last array.
pub trait ForeignOwner: Send + Sync + 'static {}

impl<T: Send + Sync + 'static> ForeignOwner for T {}

/// An owner that runs a release callback once, when dropped.
pub struct OnRelease(Mutex<Option<Box<dyn FnOnce() + Send>>>);

impl OnRelease {
    pub fn new(release: impl FnOnce() + Send + 'static) -> OnRelease {
        OnRelease(Mutex::new(Some(Box::new(release))))
    }
}

impl Drop for OnRelease {
    fn drop(&mut self) {
        let slot = self.0.get_mut().unwrap_or_else(|p| p.into_inner());
        if let Some(release) = slot.take() {
            release();
        }
    }
}

impl std::fmt::Debug for OnRelease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OnRelease")
    }
}

/// `len` elements at `ptr`, valid while `owner` lives (the fields are
/// private: only [`Elems::from_foreign`] makes one, after its checks).
pub(super) struct ForeignSlice<T> {
    ptr: NonNull<T>,
    len: usize,
    owner: Arc<dyn ForeignOwner>,
}

impl<T> ForeignSlice<T> {
    #[inline]
    pub(super) fn as_slice(&self) -> &[T] {
        // SAFETY: `from_foreign` checked that `ptr` is non-null and aligned
        // for `T` and that `len * size_of::<T>()` fits `isize` and the
        // address space; its caller promised the memory holds `len`
        // initialized, valid `T`s that stay unchanged while `owner` lives,
        // and `owner` lives as long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

/// Shares the owner (no copy).
impl<T> Clone for ForeignSlice<T> {
    fn clone(&self) -> ForeignSlice<T> {
        ForeignSlice {
            ptr: self.ptr,
            len: self.len,
            owner: Arc::clone(&self.owner),
        }
    }
}

// SAFETY: a `ForeignSlice<T>` is a shared, immutable `&[T]` kept valid by a
// `Send + Sync` owner; sending or sharing it is sending or sharing `&[T]`,
// which needs `T: Sync`.
unsafe impl<T: Sync> Send for ForeignSlice<T> {}
// SAFETY: as above; no method writes through `ptr`.
unsafe impl<T: Sync> Sync for ForeignSlice<T> {}

impl<T> Elems<T> {
    /// Storage reading `len` elements at `ptr` without copying them, kept
    /// alive by `owner` (dropped when the last array holding this storage
    /// drops, or when it is copied into owned storage).
    ///
    /// Errors: [`Error::Overflow`] when `len` elements of `T` exceed
    /// `isize::MAX` bytes or run past the end of the address space,
    /// [`Error::Misaligned`] when `ptr` is not aligned for `T`,
    /// [`Error::InvalidArgument`] for a null `ptr` with `len > 0` (a null
    /// `ptr` with `len == 0` is an empty buffer).
    ///
    /// # Safety
    ///
    /// While `owner` lives (it may be dropped on any thread):
    /// * `ptr..ptr + len` is one allocation holding `len` initialized
    ///   elements, each a valid `T` (for `bool`: every byte 0 or 1);
    /// * nothing writes that memory (microjax never does; the owner's other
    ///   users must not either) and nothing frees it.
    pub unsafe fn from_foreign(
        ptr: *const T, len: usize, owner: Arc<dyn ForeignOwner>,
    ) -> Result<Elems<T>> {
        let overflow = || Error::Overflow {
            what: "foreign buffer",
            detail: format!(
                "{len} elements of {} bytes at address {:#x}",
                std::mem::size_of::<T>(),
                ptr.addr()
            ),
        };
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .filter(|&b| b <= isize::MAX.unsigned_abs())
            .ok_or_else(overflow)?;
        ptr.addr().checked_add(bytes).ok_or_else(overflow)?;
        let ptr = match NonNull::new(ptr.cast_mut()) {
            Some(p) => p,
            None if len == 0 => NonNull::dangling(),
            None => {
                return Err(Error::InvalidArgument(format!(
                    "foreign buffer of {len} elements at a null pointer"
                )))
            }
        };
        if !ptr.as_ptr().is_aligned() {
            return Err(Error::Misaligned {
                what: "foreign buffer",
                addr: ptr.as_ptr().addr(),
                align: std::mem::align_of::<T>(),
            });
        }
        Ok(Elems::from_foreign_slice(ForeignSlice { ptr, len, owner }))
    }
}

impl<T> Elems<T> {
    /// The same elements read through a second handle kept alive by `owner`,
    /// which must own `self` (the array holding it): no copy.
    fn view_owned_by(&self, owner: &Arc<dyn ForeignOwner>) -> Result<Elems<T>> {
        if let Some(f) = self.foreign_slice() {
            // Already foreign: share its owner, not the array above it.
            return Ok(Elems::from_foreign_slice(f.clone()));
        }
        let s = self.as_slice();
        let ptr = NonNull::new(s.as_ptr().cast_mut())
            .ok_or_else(|| Error::InvalidArgument("array view of a null buffer".into()))?;
        Ok(Elems::from_foreign_slice(ForeignSlice {
            ptr,
            len: s.len(),
            owner: Arc::clone(owner),
        }))
    }
}

/// `src`'s elements as an array of `shape` (the same number of elements),
/// without copying them: a reshape, squeeze or expand of an array the
/// compiled executor holds.
///
/// Sound because an array is immutable while shared: every writer reaches a
/// `HostArray` through `&mut` (`Arc::get_mut`, which fails while the view
/// holds its `Arc`), so `src`'s `Vec` is neither written nor reallocated
/// nor freed while the view lives; the view is foreign storage, so nothing
/// writes through it, the pool never takes it, and in-place reuse skips it.
pub fn view(src: &Arc<super::HostArray>, shape: Vec<usize>) -> Result<super::HostArray> {
    use super::Buffer;
    let owner: Arc<dyn ForeignOwner> = Arc::clone(src) as Arc<dyn ForeignOwner>;
    let buf = match src.buffer() {
        Buffer::Float0(n) => Buffer::Float0(*n),
        Buffer::Key(v) => Buffer::Key(v.view_owned_by(&owner)?),
        Buffer::Bool(v) => Buffer::Bool(v.view_owned_by(&owner)?),
        Buffer::I8(v) => Buffer::I8(v.view_owned_by(&owner)?),
        Buffer::I16(v) => Buffer::I16(v.view_owned_by(&owner)?),
        Buffer::I32(v) => Buffer::I32(v.view_owned_by(&owner)?),
        Buffer::I64(v) => Buffer::I64(v.view_owned_by(&owner)?),
        Buffer::U8(v) => Buffer::U8(v.view_owned_by(&owner)?),
        Buffer::U16(v) => Buffer::U16(v.view_owned_by(&owner)?),
        Buffer::U32(v) => Buffer::U32(v.view_owned_by(&owner)?),
        Buffer::U64(v) => Buffer::U64(v.view_owned_by(&owner)?),
        Buffer::F16(v) => Buffer::F16(v.view_owned_by(&owner)?),
        Buffer::BF16(v) => Buffer::BF16(v.view_owned_by(&owner)?),
        Buffer::F32(v) => Buffer::F32(v.view_owned_by(&owner)?),
        Buffer::F64(v) => Buffer::F64(v.view_owned_by(&owner)?),
        Buffer::C64(v) => Buffer::C64(v.view_owned_by(&owner)?),
        Buffer::C128(v) => Buffer::C128(v.view_owned_by(&owner)?),
    };
    super::HostArray::new(shape, buf)
}
