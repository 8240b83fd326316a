//! The executor-wide determinism mode (DESIGN.md, "Determinism").
//!
//! * [`Determinism::Default`]: the fastest code this CPU has (AVX-512 where
//!   present, `gemm`'s FMA kernels with its cache-dependent blocking and its
//!   threads). Results are bit-identical for the same binary on the same
//!   CPU model at any thread count.
//! * [`Determinism::Portable`]: every SIMD loop (vmath, elementwise and
//!   reduction loops, the small-matmul kernel) runs at most at the AVX2
//!   (x86-64-v3) level, and float matmuls that would go to `gemm` run our
//!   own kernel instead: each output element is `0 + a0·x0 + a1·x1 + …` in
//!   k order with separate multiplies and adds (no FMA, no k blocking), rows
//!   split across threads, so the bits depend neither on the CPU's cache
//!   sizes nor on the thread count.
//!
//! The mode in force is the one set for the current thread by
//! [`with_determinism`] (exported programs run in the mode they were
//! exported with), else the process-wide default of
//! [`set_default_determinism`] (Python's `microjax_determinism` option).
//! Work handed to other threads captures it with [`ModeScope::current`].

use crate::prims::kernel::vmath::{simd_level, with_simd_level, SimdLevel};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

/// How reproducible results must be (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Determinism {
    /// Bit-identical for the same binary and CPU model.
    #[default]
    Default,
    /// Fixed matmul order, reduction order and SIMD width across x86-64 CPUs.
    Portable,
}

/// Process-wide default: `true` is [`Determinism::Portable`].
static PORTABLE_DEFAULT: AtomicBool = AtomicBool::new(false);

thread_local! {
    static CURRENT: Cell<Option<Determinism>> = const { Cell::new(None) };
}

/// The mode in force on this thread.
pub fn determinism() -> Determinism {
    CURRENT.with(Cell::get).unwrap_or_else(|| {
        if PORTABLE_DEFAULT.load(Ordering::Relaxed) {
            Determinism::Portable
        } else {
            Determinism::Default
        }
    })
}

/// Sets the process-wide default mode (threads without a
/// [`with_determinism`] scope use it).
pub fn set_default_determinism(mode: Determinism) {
    PORTABLE_DEFAULT.store(mode == Determinism::Portable, Ordering::Relaxed);
}

/// Restores the previous thread mode, also when `f` panics.
struct Restore(Option<Determinism>);

impl Drop for Restore {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.0));
    }
}

/// Runs `f` with `mode` in force on this thread.
pub fn with_determinism<R>(mode: Determinism, f: impl FnOnce() -> R) -> R {
    let _restore = Restore(CURRENT.with(|c| c.replace(Some(mode))));
    f()
}

/// The mode and SIMD level of one thread, to re-establish on the worker
/// threads it hands work to (thread-local settings do not travel).
#[derive(Debug, Clone, Copy)]
pub struct ModeScope {
    mode: Determinism,
    level: SimdLevel,
}

impl ModeScope {
    /// This thread's mode and SIMD level.
    pub fn current() -> ModeScope {
        ModeScope {
            mode: determinism(),
            level: simd_level(),
        }
    }

    /// Runs `f` under the captured mode and level.
    pub fn enter<R>(self, f: impl FnOnce() -> R) -> R {
        with_determinism(self.mode, || with_simd_level(self.level, f))
    }
}
