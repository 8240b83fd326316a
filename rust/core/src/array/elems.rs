//! [`Elems`]: the element storage of one typed [`crate::Buffer`] variant.
//!
//! A buffer's elements either live in a `Vec<T>` this crate allocated
//! (*owned*), or in memory someone else allocated and keeps alive (*foreign*:
//! a NumPy array, a DLPack tensor; see [`super::foreign`] for the contract).
//! Readers see a `&[T]` either way (`Deref`, free). Writers go through
//! copy-on-write: `DerefMut` and [`Elems::make_mut`] first copy foreign
//! memory into an owned `Vec` (foreign memory is never written), and cost
//! nothing on owned storage. [`Elems::into_vec`] moves an owned `Vec` out
//! without copying and copies foreign memory.
//!
//! `Clone` of owned storage copies the `Vec`; `Clone` of foreign storage
//! shares the owner (a reference count increment, no copy): the memory is
//! immutable while held, so sharing is unobservable. The owner is released
//! when the last clone drops.
//!
//! Equality and `Debug` are by contents, as for `Vec<T>`.

use super::foreign::ForeignSlice;
use std::fmt;
use std::ops::{Deref, DerefMut};

/// Typed element storage: an owned `Vec<T>` or foreign memory held by its
/// owner (see the module docs).
pub struct Elems<T> {
    /// The elements when `foreign` is `None`; empty otherwise.
    owned: Vec<T>,
    foreign: Option<ForeignSlice<T>>,
}

impl<T> Elems<T> {
    /// Empty owned storage (no allocation).
    pub const fn new() -> Elems<T> {
        Elems {
            owned: Vec::new(),
            foreign: None,
        }
    }

    pub(super) fn from_foreign_slice(s: ForeignSlice<T>) -> Elems<T> {
        Elems {
            owned: Vec::new(),
            foreign: Some(s),
        }
    }

    /// The foreign storage, when the elements live in foreign memory.
    pub(super) fn foreign_slice(&self) -> Option<&ForeignSlice<T>> {
        self.foreign.as_ref()
    }

    /// Whether the elements live in a `Vec` this crate owns (writable in
    /// place, poolable).
    #[inline]
    pub fn is_owned(&self) -> bool {
        self.foreign.is_none()
    }

    /// Whether the elements live in foreign memory (read-only; writers copy).
    #[inline]
    pub fn is_foreign(&self) -> bool {
        self.foreign.is_some()
    }

    #[inline]
    pub fn as_slice(&self) -> &[T] {
        match &self.foreign {
            None => &self.owned,
            Some(f) => f.as_slice(),
        }
    }

    /// The owned `Vec`, writable in place; `None` for foreign storage
    /// (for paths that reuse a buffer in place only when that costs no
    /// copy).
    #[inline]
    pub fn owned_mut(&mut self) -> Option<&mut Vec<T>> {
        match self.foreign {
            None => Some(&mut self.owned),
            Some(_) => None,
        }
    }

    /// The owned `Vec`, moved out; foreign storage comes back unchanged.
    #[inline]
    pub fn try_into_owned(self) -> Result<Vec<T>, Elems<T>> {
        match self.foreign {
            None => Ok(self.owned),
            Some(_) => Err(self),
        }
    }
}

impl<T: Clone> Elems<T> {
    /// The elements as a writable owned `Vec` (push, extend, truncate):
    /// foreign memory is copied into one first (and the owner reference
    /// dropped); owned storage is returned as is.
    #[inline]
    pub fn make_mut(&mut self) -> &mut Vec<T> {
        if let Some(f) = self.foreign.take() {
            self.owned = f.as_slice().to_vec();
        }
        &mut self.owned
    }

    /// The elements as a `Vec`: an owned one is moved out (no copy),
    /// foreign memory is copied (and its owner released if this was the
    /// last reference).
    #[inline]
    pub fn into_vec(self) -> Vec<T> {
        match self.foreign {
            None => self.owned,
            Some(f) => f.as_slice().to_vec(),
        }
    }
}

impl<T: Clone> Elems<T> {
    /// [`Clone`], with the copy of owned storage allocated fallibly
    /// ([`super::alloc`]): foreign storage is shared as by `clone`.
    pub fn try_clone(&self, what: &str) -> crate::error::Result<Elems<T>> {
        Ok(Elems {
            owned: super::alloc::to_vec(what, &self.owned)?,
            foreign: self.foreign.clone(),
        })
    }
}

impl<T> Default for Elems<T> {
    fn default() -> Elems<T> {
        Elems::new()
    }
}

impl<T> Deref for Elems<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

/// Copy-on-write: foreign memory is copied into an owned `Vec` first.
impl<T: Clone> DerefMut for Elems<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        self.make_mut()
    }
}

impl<T> AsRef<[T]> for Elems<T> {
    fn as_ref(&self) -> &[T] {
        self
    }
}

impl<T> std::borrow::Borrow<[T]> for Elems<T> {
    fn borrow(&self) -> &[T] {
        self
    }
}

/// Owned storage copies its `Vec`; foreign storage shares its owner.
impl<T: Clone> Clone for Elems<T> {
    fn clone(&self) -> Elems<T> {
        Elems {
            owned: self.owned.clone(),
            foreign: self.foreign.clone(),
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for Elems<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_slice(), f)
    }
}

impl<T: PartialEq<U>, U> PartialEq<Elems<U>> for Elems<T> {
    fn eq(&self, other: &Elems<U>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Eq> Eq for Elems<T> {}

impl<T: PartialEq<U>, U> PartialEq<Vec<U>> for Elems<T> {
    fn eq(&self, other: &Vec<U>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: PartialEq<U>, U> PartialEq<[U]> for Elems<T> {
    fn eq(&self, other: &[U]) -> bool {
        self.as_slice() == other
    }
}

impl<T: PartialEq<U>, U> PartialEq<&[U]> for Elems<T> {
    fn eq(&self, other: &&[U]) -> bool {
        self.as_slice() == *other
    }
}

impl<T: PartialEq<U>, U, const N: usize> PartialEq<[U; N]> for Elems<T> {
    fn eq(&self, other: &[U; N]) -> bool {
        self.as_slice() == other
    }
}

impl<T: PartialEq<U>, U> PartialEq<Elems<U>> for Vec<T> {
    fn eq(&self, other: &Elems<U>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T> From<Vec<T>> for Elems<T> {
    #[inline]
    fn from(v: Vec<T>) -> Elems<T> {
        Elems {
            owned: v,
            foreign: None,
        }
    }
}

impl<T: Clone> From<&[T]> for Elems<T> {
    fn from(s: &[T]) -> Elems<T> {
        Elems::from(s.to_vec())
    }
}

impl<T: Clone> From<Elems<T>> for Vec<T> {
    #[inline]
    fn from(e: Elems<T>) -> Vec<T> {
        e.into_vec()
    }
}

impl<T> FromIterator<T> for Elems<T> {
    #[inline]
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Elems<T> {
        Elems::from(iter.into_iter().collect::<Vec<T>>())
    }
}

impl<'a, T> IntoIterator for &'a Elems<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    #[inline]
    fn into_iter(self) -> std::slice::Iter<'a, T> {
        self.as_slice().iter()
    }
}

/// By value: an owned `Vec`'s iterator (foreign memory is copied).
impl<T: Clone> IntoIterator for Elems<T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;
    #[inline]
    fn into_iter(self) -> std::vec::IntoIter<T> {
        self.into_vec().into_iter()
    }
}
