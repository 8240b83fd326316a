//! The thread pool parallel kernel work runs on.
//!
//! Kernels that split work over threads (fused elementwise groups and large
//! vector-math unary ops, both in [`elementwise_spans`], GEMM,
//! batched FFTs, the small-matmul tiles, faer's factorizations) call
//! [`install`] around their parallel section. On a thread of any rayon pool
//! (an embedder's `ThreadPool::install`, or a worker of this pool) the
//! section runs where it is, on that pool, so a caller chooses the threads
//! by installing its own pool. From any other thread it runs on the pool
//! the core owns, not on rayon's global pool.
//!
//! The owned pool is made per process: it records the process id it was
//! built in, and a call from a forked child (whose pool threads did not
//! survive `fork`) builds a fresh pool and leaks the parent's — dropping it
//! would signal threads that do not exist in the child. rayon's global pool
//! cannot be rebuilt, which is why parallel work never goes through it:
//! after `os.fork()` a child would wait forever for the parent's workers.
//!
//! Its size is rayon's default (`RAYON_NUM_THREADS`, else the number of
//! logical CPUs). If its threads cannot be started the section runs on the
//! calling thread's default rayon pool instead.

use super::ExecCtx;
use rayon::{ThreadPool, ThreadPoolBuilder};
use std::sync::{Arc, Mutex, PoisonError};

/// The owned pool and the id of the process that built it. The lock is
/// held only to read or replace the entry (and to build the pool once per
/// process), never while work runs.
static POOL: Mutex<Option<(u32, Arc<ThreadPool>)>> = Mutex::new(None);

/// The owned pool of this process, built on first use (and again in a
/// forked child); `None` when its threads could not be started.
fn owned() -> Option<Arc<ThreadPool>> {
    let pid = std::process::id();
    let mut slot = POOL.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((owner, pool)) = slot.as_ref() {
        if *owner == pid {
            return Some(Arc::clone(pool));
        }
    }
    // Built in the parent before a fork: its workers are gone here.
    if let Some((_, stale)) = slot.take() {
        std::mem::forget(stale);
    }
    let pool = Arc::new(
        ThreadPoolBuilder::new()
            .thread_name(|i| format!("microjax-{i}"))
            .build()
            .ok()?,
    );
    *slot = Some((pid, Arc::clone(&pool)));
    Some(pool)
}

/// The pool slot's lock if it is free now ([`super::fork`]).
pub fn try_hold() -> Option<impl Sized + 'static> {
    super::fork::try_guard(&POOL)
}

/// Whether the calling thread is a worker of some rayon pool (work it
/// starts stays on that pool).
pub fn on_pool() -> bool {
    rayon::current_thread_index().is_some()
}

/// Runs `f`, and the rayon work it starts, on the current rayon pool when
/// called from one of its threads, else on the core's own pool.
pub fn install<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    if on_pool() {
        return f();
    }
    match owned() {
        Some(pool) => pool.install(f),
        None => f(),
    }
}

/// The number of threads [`install`] runs parallel work on from here.
pub fn current_num_threads() -> usize {
    if on_pool() {
        return rayon::current_num_threads();
    }
    owned().map_or_else(rayon::current_num_threads, |p| p.current_num_threads())
}

/// Elements per chunk of an elementwise pass (a fused group, a large
/// vector-math unary op): a few registers of this many f32 fit in L1/L2.
pub const ELEMENTWISE_CHUNK: usize = 4096;
/// Elementwise passes over at least this many elements use several threads.
pub const ELEMENTWISE_PAR_MIN: usize = 1 << 16;

/// The threads and the span (in elements, whole chunks, so a chunk never
/// straddles two spans) an elementwise pass over `len` elements runs with.
/// Both depend on the size and the partition count of `ctx` only; the
/// chunk boundaries on the size alone.
pub fn elementwise_spans(ctx: &ExecCtx, len: usize) -> (usize, usize) {
    let nchunks = len.div_ceil(ELEMENTWISE_CHUNK).max(1);
    let threads = if len >= ELEMENTWISE_PAR_MIN {
        ctx.partitions(nchunks)
    } else {
        1
    };
    (
        threads,
        nchunks
            .div_ceil(threads)
            .saturating_mul(ELEMENTWISE_CHUNK)
            .max(1),
    )
}
