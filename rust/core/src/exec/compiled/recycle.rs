//! Recycling of small arrays inside the compiled executor.
//!
//! A loop body (a `scan` or `while` step) allocates the same few small
//! arrays every iteration; on a 1000-step scan of a 64-element carry the
//! allocator costs more than the arithmetic. When a plan frees a value that
//! nobody else holds (the `Arc` is unique: not an argument, an output handed
//! to the caller or a constant), the array goes into a per-thread bin; a
//! step producing a value of the same dtype and element count takes it back
//! and overwrites every element. Results are unchanged: a recycled array is
//! only ever handed to a writer that fills all of it (zeroing first when
//! the writer accumulates).
//!
//! The bin is small and per thread (no locking, bounded memory): at most
//! [`CAPACITY`] arrays of at most [`MAX_BYTES`] each. Larger arrays are
//! left to the allocator, whose cost is amortized by the work on them.

use super::value_bytes;
use crate::array::HostArray;
use crate::dtype::DType;
use std::cell::RefCell;
use std::sync::Arc;

/// Largest array kept, in bytes.
pub const MAX_BYTES: usize = 64 * 1024;
/// Most arrays kept per thread.
pub const CAPACITY: usize = 16;

thread_local! {
    static BIN: RefCell<Vec<Arc<HostArray>>> = const { RefCell::new(Vec::new()) };
}

/// Whether `h` may be kept for a later writer: nobody else holds it, it is
/// at most [`MAX_BYTES`] and its storage is owned. Plain count loads, not
/// `get_mut`'s locked exchange (this runs for every value a loop step
/// frees): holding `h`, a strong count of one and no weak reference mean
/// nobody else can reach the array, and nobody can gain a reference but
/// through `h`. The taker's `get_mut` then confirms it (with the acquire
/// ordering a writer needs).
pub fn reusable(h: &Arc<HostArray>) -> bool {
    Arc::strong_count(h) == 1
        && Arc::weak_count(h) == 0
        && value_bytes(h) <= MAX_BYTES
        && h.buffer().is_owned()
}

/// Keeps `h` for reuse when nobody else holds it, it is small and its
/// storage is owned (foreign memory is read-only: reusing it would copy);
/// drops it otherwise.
pub fn give(h: Arc<HostArray>) {
    if !reusable(&h) {
        return;
    }
    // `try_with`: during thread teardown the bin may be gone; dropping is
    // then the right thing.
    // A full bin drops its oldest array: arrays left by an earlier program
    // (other shapes) must not keep a loop's own arrays out for good.
    let _ = BIN.try_with(|bin| {
        if let Ok(mut bin) = bin.try_borrow_mut() {
            if bin.len() >= CAPACITY {
                bin.remove(0);
            }
            bin.push(h);
        }
    });
}

/// A uniquely held array of `dtype` and `shape` from the bin, if one of
/// that element count is there. Its contents are stale: the caller must
/// overwrite every element.
pub fn take(dtype: DType, shape: &[usize]) -> Option<Arc<HostArray>> {
    let size = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d))?;
    let mut h = BIN
        .try_with(|bin| {
            let mut bin = bin.try_borrow_mut().ok()?;
            // The same shape (a loop body's arrays, every step) or the same
            // element count, read from the shapes (no look into the buffers).
            // Searched from the newest: in a loop the array a step just
            // freed is the one the next step wants.
            let at = bin.iter().rposition(|h| {
                h.dtype() == dtype
                    && (h.has_shape(shape)
                        || h.shape().iter().try_fold(1usize, |a, &d| a.checked_mul(d))
                            == Some(size))
            })?;
            // `remove` keeps the rest in arrival order (the oldest goes first
            // when the bin is full).
            Some(bin.remove(at))
        })
        .ok()
        .flatten()?;
    // The same shape (every step of a loop) needs no `get_mut` here: the
    // writer's own `get_mut` is the one locked exchange per reuse.
    if !h.has_shape(shape) {
        Arc::get_mut(&mut h)?.set_shape(shape).ok()?;
    }
    Some(h)
}

/// Arrays in this thread's bin (tests).
pub fn held() -> usize {
    BIN.try_with(|b| b.try_borrow().map(|b| b.len()).unwrap_or(0))
        .unwrap_or(0)
}

/// Empties this thread's bin (tests).
pub fn clear() {
    let _ = BIN.try_with(|b| {
        if let Ok(mut b) = b.try_borrow_mut() {
            b.clear();
        }
    });
}

type Slots = Vec<Option<Arc<HostArray>>>;

thread_local! {
    static ENVS: RefCell<Vec<Slots>> = const { RefCell::new(Vec::new()) };
}

/// A plan run's value table, taken from (and returned to) a per-thread pool
/// so a loop body run thousands of times does not allocate it each time.
pub struct Env(Slots);

impl Env {
    /// `n` empty slots.
    pub fn acquire(n: usize) -> Env {
        let mut slots = ENVS
            .try_with(|p| p.try_borrow_mut().ok().and_then(|mut p| p.pop()))
            .ok()
            .flatten()
            .unwrap_or_default();
        slots.resize(n, None);
        Env(slots)
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        let mut slots = std::mem::take(&mut self.0);
        slots.clear();
        let _ = ENVS.try_with(|p| {
            if let Ok(mut p) = p.try_borrow_mut() {
                if p.len() < 8 {
                    p.push(slots);
                }
            }
        });
    }
}

impl std::ops::Deref for Env {
    type Target = Slots;
    fn deref(&self) -> &Slots {
        &self.0
    }
}

impl std::ops::DerefMut for Env {
    fn deref_mut(&mut self) -> &mut Slots {
        &mut self.0
    }
}
