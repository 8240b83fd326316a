//! The executor-wide determinism mode (docs/DESIGN-NOTES.md, "Devices and
//! determinism modes").
//!
//! * [`Determinism::Default`]: the fastest code this CPU has (AVX-512 where
//!   present, faer's and `gemm`'s FMA matmul kernels with their
//!   CPU-dependent blocking and threads, the matrix-vector kernel's partial
//!   sums; `faer` for linear
//!   algebra, with a constant partition count).
//!   Results are bit-identical for the same binary on the same CPU model at
//!   any thread count.
//! * [`Determinism::Portable`]: every SIMD loop (vmath, elementwise and
//!   reduction loops, the small-matmul kernel) runs at most at the AVX2
//!   (x86-64-v3) level, and float matmuls that would go to faer or `gemm`
//!   (or to the matrix-vector kernel) run our
//!   own kernel instead: each output element is `0 + a0·x0 + a1·x1 + …` in
//!   k order with separate multiplies and adds (no FMA, no k blocking), rows
//!   split across threads, so the bits depend neither on the CPU's cache
//!   sizes nor on the thread count. Linear algebra (`prims::linalg`) runs
//!   its hand-written f64 loops instead of `faer`, whose SIMD level, FMA use
//!   and blocking follow the CPU.
//!
//! The mode of a run is its [`crate::exec::ExecCtx`]'s (exported programs
//! run in the mode they were exported with); a context built from the
//! defaults takes the process-wide default of [`set_default_determinism`]
//! (Python's `microjax_determinism` option).

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

/// The process-wide default mode (what a context built from the defaults
/// runs in).
pub fn default_determinism() -> Determinism {
    if PORTABLE_DEFAULT.load(Ordering::Relaxed) {
        Determinism::Portable
    } else {
        Determinism::Default
    }
}

/// Sets the process-wide default mode.
pub fn set_default_determinism(mode: Determinism) {
    PORTABLE_DEFAULT.store(mode == Determinism::Portable, Ordering::Relaxed);
}
