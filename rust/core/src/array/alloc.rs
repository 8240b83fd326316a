//! Fallible allocation: every buffer that can be large goes through here.
//!
//! Stable Rust has no fallible `collect`, `vec!` or `clone` and no hook for
//! a failed allocation: an allocation the OS refuses (`ulimit -v`, a
//! container limit, an exhausted address space) aborts the process. The
//! helpers below reserve with [`Vec::try_reserve_exact`] first, so such a
//! refusal is an [`Error::AllocationTooLarge`] (Python `MemoryError`) and the
//! process stays usable. Large requests are first checked against the
//! live-memory budgets ([`super::live::admit`]: [`Error::MemoryBudget`]).
//!
//! The rule: every buffer that can reach 1 MiB (kernel outputs and scratch:
//! sort keys and permutations, gather/scatter/concatenate index tables,
//! transposes, im2col matrices, window tables, linear-algebra and FFT
//! workspaces, fusion and pool buffers, NumPy conversions) is built by one of
//! these helpers; small fixed-size vectors (shapes, strides, per-axis
//! parameters) may use `vec!` and `collect`. None of the helpers writes
//! memory the caller overwrites anyway: [`with_capacity`] and the iterator
//! forms reserve and then push, [`filled`] takes zero values from `calloc`.

use crate::error::{Error, Result};

/// The error of a refused allocation of `n` values of `T`.
fn refused<T>(what: &str, n: usize) -> Error {
    let width = u128::try_from(std::mem::size_of::<T>()).unwrap_or(u128::MAX);
    let count = u128::try_from(n).unwrap_or(u128::MAX);
    Error::AllocationTooLarge {
        what: what.to_string(),
        shape: format!("({n},)"),
        dtype: std::any::type_name::<T>(),
        bytes: count.saturating_mul(width),
        budget: super::budget::max_buffer_bytes(),
    }
}

/// Reserves room for `additional` more values in `v`, fallibly and exactly.
#[inline]
pub fn reserve<T>(what: &str, v: &mut Vec<T>, additional: usize) -> Result<()> {
    super::live::admit(what, additional.saturating_mul(std::mem::size_of::<T>()))?;
    v.try_reserve_exact(additional)
        .map_err(|_| refused::<T>(what, v.len().saturating_add(additional)))
}

/// An empty vector with room for `n` values (fallible `Vec::with_capacity`).
#[inline]
pub fn with_capacity<T>(what: &str, n: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    reserve(what, &mut v, n)?;
    Ok(v)
}

/// `n` copies of `value` (fallible `vec![value; n]`).
///
/// The room is reserved fallibly and released, then the vector is built
/// with `vec!`, which takes zero values from `calloc` (fresh pages, zeroed
/// lazily by the OS) instead of writing every byte.
pub fn filled<T: Clone>(what: &str, value: T, n: usize) -> Result<Vec<T>> {
    drop(with_capacity::<T>(what, n)?);
    Ok(vec![value; n])
}

/// The values of `iter` (fallible `collect`): the room for the iterator's
/// lower size bound (exact for slices, ranges and their maps) is reserved
/// first.
#[inline]
pub fn from_iter<T>(what: &str, iter: impl IntoIterator<Item = T>) -> Result<Vec<T>> {
    let iter = iter.into_iter();
    let mut v = with_capacity(what, iter.size_hint().0)?;
    v.extend(iter);
    Ok(v)
}

/// The values of a fallible `iter` (fallible `collect::<Result<Vec<_>>>`):
/// the first error is returned.
#[inline]
pub fn try_from_iter<T>(what: &str, iter: impl IntoIterator<Item = Result<T>>) -> Result<Vec<T>> {
    let iter = iter.into_iter();
    let mut v = with_capacity(what, iter.size_hint().0)?;
    for x in iter {
        v.push(x?);
    }
    Ok(v)
}

/// A copy of `s` (fallible `to_vec`/`clone`).
#[inline]
pub fn to_vec<T: Clone>(what: &str, s: &[T]) -> Result<Vec<T>> {
    let mut v = with_capacity(what, s.len())?;
    v.extend_from_slice(s);
    Ok(v)
}
