//! The one place that calls into `gemm` (unsafe FFI-like raw-pointer API).

#![allow(unsafe_code)]

use super::internal;
use crate::error::Result;

/// Element types gemm runs here (sealed: f32 and f64, so gemm's type
/// dispatch can never hit its unsupported-type panic).
pub trait GemmElem: Copy + Send + Sync + 'static + private::Sealed {
    const ZERO: Self;
    const ONE: Self;
    /// On AVX-512 CPUs, real products of at least this many
    /// multiply-adds run on gemm's kernels, smaller ones on faer's
    /// (`super::gemm_over_faer`). Measured on a 2-core AVX-512 Xeon,
    /// 2 threads, both libraries called alternately in one process with
    /// PyTorch's (MKL) product as the yardstick, median time ratios to
    /// PyTorch's (gemm / faer): f32 256^3 0.85-0.88 / 0.87-0.90, 512^3
    /// 1.02 / 1.00-1.12, 1024^3 1.01-1.07 / 1.15-1.31, 2048^3
    /// 1.08 / 1.33 (gemm at every size); f64 128^3 1.17 / 0.91, 256^3
    /// 1.42-1.64 / 0.99-1.08, 768^3 1.26 / 1.14, 1024^3 1.16-1.20 /
    /// 1.26-1.30, 1536^3 1.07 / 1.35, 2048^3 1.01 / 1.25 (gemm from
    /// 1024^3).
    const AVX512_GEMM_FLOPS: usize;
}
impl GemmElem for f32 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const AVX512_GEMM_FLOPS: usize = 0;
}
impl GemmElem for f64 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const AVX512_GEMM_FLOPS: usize = 1 << 30;
}
mod private {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// A `rows x cols` matrix inside `data` with element strides `rs`, `cs`
/// (element `(i, j)` at `data[i*rs + j*cs]`).
pub struct View<'a, T> {
    pub data: &'a [T],
    pub rs: usize,
    pub cs: usize,
}

/// Largest index the view touches, if it fits in the slice.
pub fn check<T>(v: &View<'_, T>, rows: usize, cols: usize) -> Option<()> {
    let last = rows
        .checked_sub(1)?
        .checked_mul(v.rs)?
        .checked_add(cols.checked_sub(1)?.checked_mul(v.cs)?)?;
    (last < v.data.len()).then_some(())
}

fn istride(s: usize) -> Result<isize> {
    isize::try_from(s).map_err(|_| internal("stride"))
}

/// `dst := lhs · rhs` with `dst` row-major contiguous `m x n`.
/// Requires `m, n, k > 0`. `threads`: `None` runs on the calling
/// thread, `Some(n)` over `n` rayon tasks (0: the pool's threads).
#[allow(clippy::too_many_arguments)]
pub fn gemm<T: GemmElem>(
    m: usize, n: usize, k: usize, dst: &mut [T], lhs: View<'_, T>, rhs: View<'_, T>,
    threads: Option<usize>,
) -> Result<()> {
    if m == 0 || n == 0 || k == 0 {
        return Err(internal("empty gemm"));
    }
    if m.checked_mul(n) != Some(dst.len()) {
        return Err(internal("dst"));
    }
    check(&lhs, m, k).ok_or_else(|| internal("lhs view"))?;
    check(&rhs, k, n).ok_or_else(|| internal("rhs view"))?;
    if threads.is_some() && !crate::exec::pool::on_pool() {
        // gemm's rayon tasks go to the kernel pool.
        return crate::exec::pool::install(|| gemm(m, n, k, dst, lhs, rhs, threads));
    }
    let (lrs, lcs) = (istride(lhs.rs)?, istride(lhs.cs)?);
    let (rrs, rcs) = (istride(rhs.rs)?, istride(rhs.cs)?);
    let dst_rs = istride(n)?;
    // `Some(0)`: the threads of the current rayon pool.
    let par = match threads {
        Some(n) => gemm::Parallelism::Rayon(n),
        None => gemm::Parallelism::None,
    };
    // SAFETY: `dst` is an exclusively borrowed, contiguous m x n buffer
    // (row stride n, column stride 1; length checked above). Every
    // element the lhs view reads, `(m-1)*rs + (k-1)*cs` at most, and
    // every element the rhs view reads, `(k-1)*rs + (n-1)*cs` at most,
    // lies inside its borrowed slice (checked by `check`), and the
    // strides fit in isize. T is f32 or f64 (sealed trait),
    // the types gemm supports; the conjugation flags are false. `read_dst = false` with alpha = 0 makes gemm
    // overwrite dst without reading it: dst := 1 · lhs · rhs. The
    // source slices are shared borrows that do not alias `dst`.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            dst_rs,
            false,
            lhs.data.as_ptr(),
            lcs,
            lrs,
            rhs.data.as_ptr(),
            rcs,
            rrs,
            T::ZERO,
            T::ONE,
            false,
            false,
            false,
            par,
        );
    }
    Ok(())
}
