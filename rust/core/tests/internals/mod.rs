//! Tests of the crate's internal algorithms (kernel layouts, factorizations,
//! the promotion lattice, the text parser), reached through the hidden
//! `microjax::internals` re-exports: in this binary rather than as unit
//! tests in `src/`, so the library is compiled once for the tests, not a
//! second time with `cfg(test)`.
//!
//! A new file here is a `mod` line below; `every_test_file_is_built`
//! fails on one that is not.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use microjax::{Buffer, HostArray};
use std::sync::Arc;

/// A rank-1 f32 array of `v`.
pub(crate) fn arr(v: &[f32]) -> Arc<HostArray> {
    Arc::new(HostArray::new(vec![v.len()], Buffer::F32(v.to_vec().into())).unwrap())
}

/// The values of an f32 array.
pub(crate) fn f32s(h: &HostArray) -> Vec<f32> {
    match h.buffer() {
        Buffer::F32(v) => v.to_vec(),
        other => panic!("expected f32, got {:?}", other.dtype()),
    }
}

/// Deterministic values uniform in [-0.5, 0.5): successive draws of a
/// 64-bit linear congruential generator from `seed`.
pub(crate) fn uniform_values(seed: u64) -> impl FnMut() -> f64 {
    let mut s = seed;
    move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5
    }
}

mod array_alloc;
mod array_budget;
mod bits;
mod canonical_parser;
mod cuda_driver;
mod cuda_fft_plans;
mod dtype;
mod exec_ctx_units;
mod exec_fork;
mod exec_interp;
mod exec_pool;
mod fft_kernels;
mod fft_types;
mod ir_display;
mod ir_rewire;
mod ir_splice;
mod kernel_avals;
mod kernel_dot;
mod kernel_math;
mod kernel_rows;
mod kernel_structural;
mod kernel_vmath;
mod linalg_dense;
mod linalg_lapack;
mod linalg_portable;
mod linalg_real_schur;
mod linalg_schur;
mod promote;
mod random_threefry;
mod sort_order;
