//! The host buffer pool: large buffers the compiled executor let go of are
//! kept and handed back to the next pass that needs a buffer of the same
//! dtype and length, so a steady-state run touches warm pages instead of
//! page-faulting fresh ones (on this machine faulting in a fresh 40 MB
//! output costs more than the arithmetic that fills it).
//!
//! * Size classes are exact: `(dtype, element count)`. Programs run again
//!   and again with the same shapes, so exact classes hit and never waste
//!   memory on rounding.
//! * Only buffers of at least [`MIN_POOLED_BYTES`] are kept: smaller ones
//!   come from malloc's own free lists at no page-fault cost.
//! * Closed loop: only buffers the pool itself handed out ([`take`]
//!   records their addresses) come back; any other buffer is freed to the
//!   allocator as usual. Taking in every large freed buffer (matmul
//!   outputs, eager results) made the MLP train step 1.2x slower: the pool
//!   hoarded what glibc's free lists would have handed to the next
//!   allocation, so those allocations page-faulted fresh memory. Eager code
//!   that never runs a fused pass or a large float/complex product (whose
//!   output faer or gemm overwrite) never fills the pool.
//! * Bounded: at most `cap` bytes held (default [`DEFAULT_CAP_BYTES`]);
//!   a buffer that does not fit evicts the oldest held ones first. Cap 0
//!   turns the pool off.
//! * Thread-safe (one mutex, held for a push or a pop only).
//! * [`take`] returns a buffer of *unspecified contents* (the previous
//!   user's values): only passes that overwrite every element call it.
//!   Nothing that needs zeros is served from the pool.
//!
//! Buffers come back through [`give`]: a [`crate::array::HostArray`] at
//! least [`MIN_POOLED_BYTES`] large offers its buffer when dropped (the last
//! reference to it is gone, so no one can observe the reuse): plan
//! intermediates freed after their last use, and outputs handed to a user
//! once the user drops them. Only owned storage is pooled: a buffer over
//! foreign memory ([`crate::array::foreign`]) is released to its owner.

use crate::array::Buffer;
use crate::dtype::DType;
use crate::error::Result;
use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// Smallest buffer the pool keeps.
pub const MIN_POOLED_BYTES: usize = 256 << 10;
/// Bytes held at most by default.
pub const DEFAULT_CAP_BYTES: usize = 256 << 20;
/// Addresses of lent buffers remembered at most (a lent buffer freed
/// without coming back, e.g. while the pool was off, leaves a stale
/// address; past this many the record starts over).
pub const MAX_LENT: usize = 4096;

/// Counters the tests and the debug API read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Requests served from the pool / by a fresh allocation.
    pub hits: u64,
    pub misses: u64,
    /// Buffers kept, and dropped because the cap was reached.
    pub returned: u64,
    pub evicted: u64,
    /// Bytes and buffers held now, and the cap.
    pub held_bytes: usize,
    pub held_buffers: usize,
    pub cap_bytes: usize,
}

#[derive(Debug)]
struct State {
    cap: usize,
    held: usize,
    /// Oldest first.
    free: VecDeque<(DType, usize, Buffer)>,
    /// Data addresses of the buffers [`take`] handed out and not yet
    /// given back.
    lent: HashSet<usize>,
    stats: PoolStats,
}

/// Whether the pool may hold anything (read without the lock on every
/// large drop).
static ENABLED: AtomicBool = AtomicBool::new(true);

/// The pool's lock if it is free now ([`crate::exec::fork`]).
pub fn try_hold() -> Option<impl Sized + 'static> {
    crate::exec::fork::try_guard(cell())
}

fn state() -> MutexGuard<'static, State> {
    cell().lock().unwrap_or_else(|p| p.into_inner())
}

fn cell() -> &'static Mutex<State> {
    static STATE: OnceLock<Mutex<State>> = OnceLock::new();
    STATE.get_or_init(|| {
        Mutex::new(State {
            cap: DEFAULT_CAP_BYTES,
            held: 0,
            free: VecDeque::new(),
            lent: HashSet::new(),
            stats: PoolStats::default(),
        })
    })
}

/// Bytes of a buffer's elements (0 for float0).
pub fn buffer_bytes(b: &Buffer) -> usize {
    b.len().saturating_mul(b.dtype().itemsize())
}

fn bytes_of(dtype: DType, n: usize) -> usize {
    n.saturating_mul(dtype.itemsize())
}

/// The address of a buffer's elements (0 for float0 and key buffers,
/// which are never pooled).
fn addr(b: &Buffer) -> usize {
    crate::with_buffer!(b, v => v.as_ptr() as usize, _ => 0)
}

impl State {
    /// Records a buffer as handed out by the pool.
    fn lend(&mut self, buf: &Buffer) {
        if self.lent.len() >= MAX_LENT {
            self.lent.clear();
        }
        self.lent.insert(addr(buf));
    }
}

/// A buffer of `n` elements of `dtype` whose contents are unspecified
/// (a pooled buffer's old values, or zeros when freshly allocated).
pub fn take(dtype: DType, n: usize) -> Result<Buffer> {
    if ENABLED.load(Ordering::Relaxed) {
        let mut s = state();
        // The most recently returned buffer of the class: its pages are
        // the likeliest still in cache.
        let found = s
            .free
            .iter()
            .rposition(|(d, len, _)| *d == dtype && *len == n);
        if let Some((_, _, buf)) = found.and_then(|i| s.free.remove(i)) {
            s.held = s.held.saturating_sub(buffer_bytes(&buf));
            s.stats.hits = s.stats.hits.saturating_add(1);
            s.lend(&buf);
            return Ok(buf);
        }
        s.stats.misses = s.stats.misses.saturating_add(1);
        if bytes_of(dtype, n) >= MIN_POOLED_BYTES {
            drop(s);
            let buf = Buffer::zeros(dtype, n)?;
            state().lend(&buf);
            return Ok(buf);
        }
    }
    Buffer::zeros(dtype, n)
}

/// A `Vec` of `n` elements for a pass that overwrites every one of them
/// (a product's output, a convolution's): a pooled buffer of this type and
/// length when there is one — warm pages, no zeroing pass — else `n`
/// copies of `zero` (allocated fallibly, `what` naming the request).
pub fn take_overwritten<T: crate::array::Element>(what: &str, zero: T, n: usize) -> Result<Vec<T>> {
    match T::unwrap(take(T::DTYPE, n)?) {
        Some(v) if v.len() == n => Ok(v),
        _ => crate::array::alloc::filled(what, zero, n),
    }
}

/// Offers a buffer no one else references to the pool: kept when it is
/// owned storage the pool lent, and the pool is on and has room for it;
/// otherwise freed (foreign storage: released to its owner).
pub fn give(buf: Buffer) {
    let bytes = buffer_bytes(&buf);
    // Foreign storage goes back to its owner, never into the pool.
    if bytes < MIN_POOLED_BYTES || !ENABLED.load(Ordering::Relaxed) || !buf.is_owned() {
        return;
    }
    let mut s = state();
    if !s.lent.remove(&addr(&buf)) || bytes > s.cap {
        return;
    }
    while s.held.saturating_add(bytes) > s.cap {
        match s.free.pop_front() {
            Some((_, _, old)) => {
                s.held = s.held.saturating_sub(buffer_bytes(&old));
                s.stats.evicted = s.stats.evicted.saturating_add(1);
            }
            None => break,
        }
    }
    s.held = s.held.saturating_add(bytes);
    s.stats.returned = s.stats.returned.saturating_add(1);
    s.free.push_back((buf.dtype(), buf.len(), buf));
}

/// Whether a buffer of this many bytes is worth offering to the pool.
pub fn wants(bytes: usize) -> bool {
    bytes >= MIN_POOLED_BYTES && ENABLED.load(Ordering::Relaxed)
}

/// Sets the most bytes the pool holds (0 turns it off and frees what it
/// holds).
pub fn set_cap_bytes(cap: usize) {
    let mut s = state();
    s.cap = cap;
    ENABLED.store(cap > 0, Ordering::Relaxed);
    if cap == 0 {
        s.lent.clear();
    }
    while s.held > s.cap {
        match s.free.pop_front() {
            Some((_, _, old)) => s.held = s.held.saturating_sub(buffer_bytes(&old)),
            None => break,
        }
    }
}

/// Frees the buffers the pool holds, when its lock is free now (a
/// live-memory budget about to refuse an allocation makes room first);
/// returns the bytes freed.
pub fn release_held() -> usize {
    let Ok(mut s) = cell().try_lock() else {
        return 0;
    };
    let freed = s.held;
    s.free.clear();
    s.held = 0;
    freed
}

/// Frees everything the pool holds and zeroes its counters.
pub fn clear() {
    let mut s = state();
    s.free.clear();
    s.lent.clear();
    s.held = 0;
    s.stats = PoolStats::default();
}

/// The counters now.
pub fn stats() -> PoolStats {
    let s = state();
    PoolStats {
        held_bytes: s.held,
        held_buffers: s.free.len(),
        cap_bytes: s.cap,
        ..s.stats
    }
}
