//! Register-blocked f32/f64 matmul for small products (a 64×64 matvec
//! inside a scan must cost tens of nanoseconds, not a `gemm` set-up).
//!
//! Each output row is computed in blocks of four SIMD vectors held in
//! registers across the whole k loop; the columns left over (fewer than
//! four vectors) run the i-k-j loop on the row itself. Every output
//! element is `0 + a0*x0 + a1*x1 + ...` added in k order with separate
//! multiplies and adds (no FMA), exactly like the generic loop kernel, so
//! the result is bit-identical to it at every SIMD width.

use super::common::FloatElem;
use pulp::Simd;

/// f32 and f64: the types with a register-blocked row kernel.
pub trait SmallMatmul: Copy + Default {
    /// `orow = lrow @ rb` for a contiguous `(k, n)` matrix `rb`.
    fn row<S: Simd>(simd: S, orow: &mut [Self], lrow: &[Self], rb: &[Self], n: usize);
}

macro_rules! impl_small {
    ($t:ty, $vt:ident, $splat:ident, $add:ident, $mul:ident, $split:ident, $split_mut:ident) => {
        impl SmallMatmul for $t {
            #[inline(always)]
            fn row<S: Simd>(simd: S, orow: &mut [$t], lrow: &[$t], rb: &[$t], n: usize) {
                let n = n.max(1);
                let lanes = core::mem::size_of::<S::$vt>()
                    .checked_div(core::mem::size_of::<$t>())
                    .unwrap_or(1)
                    .max(1);
                let block = lanes.saturating_mul(4);
                let (vecs, _) = S::$split_mut(orow);
                let full = vecs.len() & !3;
                let mut v0 = 0usize;
                while v0 < full {
                    let zero = simd.$splat(0.0);
                    let (mut a0, mut a1, mut a2, mut a3) = (zero, zero, zero, zero);
                    let col = v0.saturating_mul(lanes);
                    for (&a, rrow) in lrow.iter().zip(rb.chunks_exact(n)) {
                        let Some(x) = rrow.get(col..col.saturating_add(block)) else {
                            break;
                        };
                        let (xv, _) = S::$split(x);
                        if let [x0, x1, x2, x3, ..] = xv {
                            let va = simd.$splat(a);
                            a0 = simd.$add(a0, simd.$mul(va, *x0));
                            a1 = simd.$add(a1, simd.$mul(va, *x1));
                            a2 = simd.$add(a2, simd.$mul(va, *x2));
                            a3 = simd.$add(a3, simd.$mul(va, *x3));
                        }
                    }
                    if let Some([o0, o1, o2, o3]) = vecs.get_mut(v0..v0.saturating_add(4)) {
                        (*o0, *o1, *o2, *o3) = (a0, a1, a2, a3);
                    }
                    v0 = v0.saturating_add(4);
                }
                // The columns after the full blocks: i-k-j on the row.
                let done = full.saturating_mul(lanes);
                let tail = orow.get_mut(done..).unwrap_or_default();
                tail.fill(0.0);
                for (&a, rrow) in lrow.iter().zip(rb.chunks_exact(n)) {
                    for (o, &x) in tail.iter_mut().zip(rrow.get(done..).unwrap_or_default()) {
                        *o += a * x;
                    }
                }
            }
        }
    };
}

impl_small!(
    f32,
    f32s,
    splat_f32s,
    add_f32s,
    mul_f32s,
    as_simd_f32s,
    as_mut_simd_f32s
);
impl_small!(
    f64,
    f64s,
    splat_f64s,
    add_f64s,
    mul_f64s,
    as_simd_f64s,
    as_mut_simd_f64s
);

/// `out = l @ r` per batch for contiguous `(b, m, k)` and `(b, k, n)`
/// operands (lengths validated by the caller).
struct Rows<'a, T> {
    out: &'a mut [T],
    l: &'a [T],
    r: &'a [T],
    m: usize,
    k: usize,
    n: usize,
}

impl<T: SmallMatmul> pulp::WithSimd for Rows<'_, T> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let Rows { out, l, r, m, k, n } = self;
        let (mn, mk, kn) = (
            m.saturating_mul(n),
            m.saturating_mul(k),
            k.saturating_mul(n),
        );
        if mn == 0 || mk == 0 || kn == 0 {
            return;
        }
        for ((ob, lb), rb) in out
            .chunks_exact_mut(mn)
            .zip(l.chunks_exact(mk))
            .zip(r.chunks_exact(kn))
        {
            for (orow, lrow) in ob.chunks_exact_mut(n.max(1)).zip(lb.chunks_exact(k)) {
                T::row(simd, orow, lrow, rb, n);
            }
        }
    }
}

/// Fills `out` (`b*m*n` elements) with the batched product. Every element
/// is written (full blocks are stored from registers, the leftover columns
/// zeroed before they accumulate), so the contents on entry do not matter.
pub fn matmul_into<T: SmallMatmul>(out: &mut [T], l: &[T], r: &[T], m: usize, k: usize, n: usize) {
    super::vmath::run(Rows { out, l, r, m, k, n });
}

/// Columns per packed panel of the portable kernel: a `k × PANEL` panel of
/// the right operand stays in L2 while every row of the left one streams
/// over it. A multiple of four vectors at every SIMD width.
const PANEL: usize = 256;

/// Rows `l` times a packed `(k, w)` panel into the matching `w`-column
/// windows `outs` of the output rows.
struct PanelRows<'a, 'o, T> {
    outs: Vec<&'o mut [T]>,
    l: &'a [T],
    panel: &'a [T],
    k: usize,
    w: usize,
}

impl<T: SmallMatmul> pulp::WithSimd for PanelRows<'_, '_, T> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let PanelRows {
            outs,
            l,
            panel,
            k,
            w,
        } = self;
        for (orow, lrow) in outs.into_iter().zip(l.chunks_exact(k.max(1))) {
            T::row(simd, orow, lrow, panel, w);
        }
    }
}

/// The portable (`Determinism::Portable`) product for any size: `out = l @ r`
/// per batch for contiguous `(b, m, k)` and `(b, k, n)` operands, `out`
/// holding `b*m*n` zeros on entry (lengths validated by the caller). Every
/// element is the row kernel's k-ordered sum, so the bits are those of
/// [`matmul_into`] whatever the panel, the thread count or the SIMD width;
/// rows are split over rayon threads when `parallel` (into `ctx`'s
/// partition count; each worker runs inside `ctx`).
pub fn matmul_portable_into<T: SmallMatmul + Send + Sync>(
    ctx: &crate::exec::ExecCtx, out: &mut [T], l: &[T], r: &[T], (m, k, n): (usize, usize, usize),
    parallel: bool,
) {
    use rayon::prelude::*;
    let (mn, mk, kn) = (
        m.saturating_mul(n),
        m.saturating_mul(k),
        k.saturating_mul(n),
    );
    if mn == 0 || mk == 0 || kn == 0 {
        return;
    }
    let threads = if parallel { ctx.partitions(m) } else { 1 };
    if threads > 1 && !crate::exec::pool::on_pool() {
        // The whole product on the kernel pool (one hand-off, not one per panel).
        return crate::exec::pool::install(|| {
            matmul_portable_into(ctx, out, l, r, (m, k, n), parallel)
        });
    }
    let rows_per_task = m.div_ceil(threads).max(1);
    let mut panel: Vec<T> = Vec::new();
    for ((ob, lb), rb) in out
        .chunks_exact_mut(mn)
        .zip(l.chunks_exact(mk))
        .zip(r.chunks_exact(kn))
    {
        let mut c0 = 0usize;
        while c0 < n {
            let c1 = c0.saturating_add(PANEL).min(n);
            let w = c1.saturating_sub(c0);
            panel.clear();
            for rrow in rb.chunks_exact(n) {
                panel.extend_from_slice(rrow.get(c0..c1).unwrap_or_default());
            }
            let windows: Vec<&mut [T]> = ob
                .chunks_exact_mut(n)
                .filter_map(|row| row.get_mut(c0..c1))
                .collect();
            let tasks = split_rows(windows, rows_per_task, lb, k);
            let job = |(outs, l): (Vec<&mut [T]>, &[T])| {
                ctx.enter(|| {
                    super::vmath::run(PanelRows {
                        outs,
                        l,
                        panel: &panel,
                        k,
                        w,
                    })
                })
            };
            if threads > 1 {
                tasks.into_par_iter().for_each(job);
            } else {
                tasks.into_iter().for_each(job);
            }
            c0 = c1;
        }
    }
}

/// Groups of `per` output windows with the left rows they read.
fn split_rows<'o, 'a, T>(
    windows: Vec<&'o mut [T]>, per: usize, l: &'a [T], k: usize,
) -> Vec<(Vec<&'o mut [T]>, &'a [T])> {
    let mut tasks = Vec::new();
    let mut it = windows.into_iter().peekable();
    let mut lrows = l.chunks(per.saturating_mul(k).max(1));
    while it.peek().is_some() {
        let group: Vec<&mut [T]> = it.by_ref().take(per).collect();
        tasks.push((group, lrows.next().unwrap_or_default()));
    }
    tasks
}

/// Partial sums per row of the matrix-vector kernel: element `j` of a row
/// goes to sum `j % DOT_LANES`, in k order with fused multiply-adds (one
/// rounding each; `mul_add` at the scalar level), and the sums are added in
/// a fixed pairwise tree. Fixed, not the SIMD width, so the bits are the same
/// at every SIMD level.
const DOT_LANES: usize = 16;

/// Rows per step of the matrix-vector kernel: four rows' partial sums are
/// independent chains (latency hidden) and share each load of the vector.
const DOT_ROWS: usize = 4;

/// The fixed pairwise tree over the partial sums of one row, from the
/// step that halves `width` sums on (the earlier steps done already).
#[inline(always)]
fn tree<T: FloatElem>(mut acc: [T; DOT_LANES], mut width: usize) -> T {
    while width > 1 {
        width /= 2;
        let (lo, hi) = acc.split_at_mut(width);
        for (s, &t) in lo.iter_mut().zip(hi.iter()) {
            *s = s.add(t);
        }
    }
    acc.first().copied().unwrap_or(T::ZERO)
}

/// Element types of the matrix-vector kernel: `DOT_ROWS` rows (or fewer)
/// times `x` at SIMD width `S`, `V` vectors of `DOT_LANES / V` lanes each
/// holding the partial sums.
pub trait DotRows: FloatElem {
    fn dot_rows<S: Simd>(simd: S, out: &mut [Self], rows: &[Self], x: &[Self], k: usize);
    /// [`DotRows::dot_rows`] over any number of rows at x86-64-v3 when `k`
    /// is a multiple of [`DOT_LANES`], the rows' pairwise trees run across
    /// rows (transposed) instead of one row at a time.
    #[cfg(target_arch = "x86_64")]
    fn dot_rows_v3(simd: pulp::x86::V3, out: &mut [Self], rows: &[Self], x: &[Self], k: usize);
}

macro_rules! impl_dot_rows {
    ($t:ty, $vt:ident, $splat:ident, $add:ident, $mul_add:ident, $split:ident, $split_mut:ident, $v3:path) => {
        impl DotRows for $t {
            #[cfg(target_arch = "x86_64")]
            #[inline(always)]
            fn dot_rows_v3(simd: pulp::x86::V3, out: &mut [$t], rows: &[$t], x: &[$t], k: usize) {
                $v3(simd, out, rows, x, k)
            }
            #[inline(always)]
            fn dot_rows<S: Simd>(simd: S, out: &mut [$t], rows: &[$t], x: &[$t], k: usize) {
                let lanes = core::mem::size_of::<S::$vt>()
                    .checked_div(core::mem::size_of::<$t>())
                    .unwrap_or(1)
                    .max(1);
                match DOT_LANES.checked_div(lanes).unwrap_or(DOT_LANES) {
                    1 => dot_rows_v::<S, $t, 1>(simd, out, rows, x, k),
                    2 => dot_rows_v::<S, $t, 2>(simd, out, rows, x, k),
                    4 => dot_rows_v::<S, $t, 4>(simd, out, rows, x, k),
                    8 => dot_rows_v::<S, $t, 8>(simd, out, rows, x, k),
                    _ => dot_rows_v::<S, $t, 16>(simd, out, rows, x, k),
                }
            }
        }

        impl DotBlock for $t {
            type Vec<S: Simd> = S::$vt;
            #[inline(always)]
            fn zero<S: Simd>(simd: S) -> S::$vt {
                simd.$splat(0.0)
            }
            #[inline(always)]
            fn mul_add<S: Simd>(simd: S, acc: S::$vt, a: S::$vt, b: S::$vt) -> S::$vt {
                simd.$mul_add(a, b, acc)
            }
            #[inline(always)]
            fn add_v<S: Simd>(simd: S, a: S::$vt, b: S::$vt) -> S::$vt {
                simd.$add(a, b)
            }
            #[inline(always)]
            fn fma(a: $t, b: $t, c: $t) -> $t {
                a.mul_add(b, c)
            }
            #[inline(always)]
            fn split<S: Simd>(v: &[$t]) -> &[S::$vt] {
                S::$split(v).0
            }
            #[inline(always)]
            fn split_mut<S: Simd>(v: &mut [$t]) -> &mut [S::$vt] {
                S::$split_mut(v).0
            }
            #[inline(always)]
            fn splat<S: Simd>(simd: S, v: $t) -> S::$vt {
                simd.$splat(v)
            }
        }
    };
}

/// [`DOT_ROWS`] rows at a time, then the rows left one by one.
#[inline(always)]
fn dot_rows_v<S: Simd, T: DotBlock, const V: usize>(
    simd: S, out: &mut [T], rows: &[T], x: &[T], k: usize,
) {
    let rows_of = |r: usize| row_of(rows, r, k);
    if let [o0, o1, o2, o3] = out {
        let rs = [rows_of(0), rows_of(1), rows_of(2), rows_of(3)];
        let [a0, a1, a2, a3] = dot4::<S, T, V>(simd, rs, x, k);
        if k.checked_rem(DOT_LANES) == Some(0) {
            // Straight-line, so the four trees are vectorized together.
            *o0 = reduce_full::<S, T, V>(simd, a0);
            *o1 = reduce_full::<S, T, V>(simd, a1);
            *o2 = reduce_full::<S, T, V>(simd, a2);
            *o3 = reduce_full::<S, T, V>(simd, a3);
        } else {
            for ((o, acc_r), row) in [o0, o1, o2, o3].into_iter().zip([a0, a1, a2, a3]).zip(rs) {
                *o = finish::<S, T, V>(simd, acc_r, row, x, k);
            }
        }
    } else {
        for (r, o) in out.iter_mut().enumerate() {
            let row = rows_of(r);
            let acc = dot1::<S, T, V>(simd, row, x, k);
            *o = finish::<S, T, V>(simd, acc, row, x, k);
        }
    }
}

/// Row `r`'s `k` elements of the row-major `rows` (empty past the end).
fn row_of<T>(rows: &[T], r: usize, k: usize) -> &[T] {
    rows.get(r.saturating_mul(k)..r.saturating_add(1).saturating_mul(k))
        .unwrap_or_default()
}

/// The SIMD operations the matrix-vector kernel needs, per element type.
pub trait DotBlock: FloatElem {
    type Vec<S: Simd>: Copy;
    fn zero<S: Simd>(simd: S) -> Self::Vec<S>;
    /// `acc + a·b`, fused (one rounding) at every SIMD level.
    fn mul_add<S: Simd>(
        simd: S, acc: Self::Vec<S>, a: Self::Vec<S>, b: Self::Vec<S>,
    ) -> Self::Vec<S>;
    fn add_v<S: Simd>(simd: S, a: Self::Vec<S>, b: Self::Vec<S>) -> Self::Vec<S>;
    /// `a·b + c` with one rounding.
    fn fma(a: Self, b: Self, c: Self) -> Self;
    fn split<S: Simd>(v: &[Self]) -> &[Self::Vec<S>];
    fn split_mut<S: Simd>(v: &mut [Self]) -> &mut [Self::Vec<S>];
    /// Every lane `v`.
    fn splat<S: Simd>(simd: S, v: Self) -> Self::Vec<S>;
}

/// The first `k - k % DOT_LANES` elements of `v` (the full blocks) as
/// vectors.
#[inline(always)]
fn full_blocks<S: Simd, T: DotBlock>(v: &[T], k: usize) -> &[T::Vec<S>] {
    let full = k.saturating_sub(k.checked_rem(DOT_LANES).unwrap_or(0));
    T::split::<S>(v.get(..full).unwrap_or_default())
}

/// `acc += a · x` lane by lane for one [`DOT_LANES`]-element block.
#[inline(always)]
fn fma_block<S: Simd, T: DotBlock, const V: usize>(
    simd: S, acc: &mut [T::Vec<S>; V], a: &[T::Vec<S>], x: &[T::Vec<S>],
) {
    for ((s, &p), &q) in acc.iter_mut().zip(a).zip(x) {
        *s = T::mul_add(simd, *s, p, q);
    }
}

/// The partial sums of four rows over the full blocks: `V` vectors per
/// [`DOT_LANES`]-element block, lane `j` holding the elements at
/// `j mod DOT_LANES` in k order, whatever `V`, so every width gives the
/// same bits. The rows are walked in lockstep (zipped, no per-row checks),
/// so the 4·V accumulators stay in registers and each load of `x` serves
/// four rows.
#[inline(always)]
fn dot4<S: Simd, T: DotBlock, const V: usize>(
    simd: S, rows: [&[T]; 4], x: &[T], k: usize,
) -> [[T::Vec<S>; V]; 4] {
    let zero = T::zero::<S>(simd);
    let [mut a0, mut a1, mut a2, mut a3] = [[zero; V]; 4];
    let [r0, r1, r2, r3] = rows.map(|r| full_blocks::<S, T>(r, k).chunks_exact(V));
    let xs = full_blocks::<S, T>(x, k).chunks_exact(V);
    for ((((xb, b0), b1), b2), b3) in xs.zip(r0).zip(r1).zip(r2).zip(r3) {
        fma_block::<S, T, V>(simd, &mut a0, b0, xb);
        fma_block::<S, T, V>(simd, &mut a1, b1, xb);
        fma_block::<S, T, V>(simd, &mut a2, b2, xb);
        fma_block::<S, T, V>(simd, &mut a3, b3, xb);
    }
    [a0, a1, a2, a3]
}

/// [`dot4`] for one row.
#[inline(always)]
fn dot1<S: Simd, T: DotBlock, const V: usize>(
    simd: S, row: &[T], x: &[T], k: usize,
) -> [T::Vec<S>; V] {
    let mut acc = [T::zero::<S>(simd); V];
    let rs = full_blocks::<S, T>(row, k).chunks_exact(V);
    for (xb, b) in full_blocks::<S, T>(x, k).chunks_exact(V).zip(rs) {
        fma_block::<S, T, V>(simd, &mut acc, b, xb);
    }
    acc
}

/// One row's dot product from its partial sums `acc` when `k` is a
/// multiple of [`DOT_LANES`]: the fixed pairwise tree, its first steps as
/// vector adds (sums `j` and `j + w` sit in the same lane of vectors `v`
/// and `v + w / lanes`).
#[inline(always)]
fn reduce_full<S: Simd, T: DotBlock, const V: usize>(simd: S, acc: [T::Vec<S>; V]) -> T {
    let mut sums = [T::ZERO; DOT_LANES];
    let mut v = acc;
    let mut w = V;
    while w > 1 {
        w /= 2;
        let (lo, hi) = v.split_at_mut(w);
        for (a, &b) in lo.iter_mut().zip(hi.iter()) {
            *a = T::add_v::<S>(simd, *a, b);
        }
    }
    if let (Some(dst), Some(&first)) = (T::split_mut::<S>(&mut sums).first_mut(), v.first()) {
        *dst = first;
    }
    tree(sums, DOT_LANES.checked_div(V).unwrap_or(1))
}

/// One row's dot product from its partial sums `acc` over the full
/// blocks: the elements after them (`row` and `x` past the last full
/// block) go each into its lane, then the lanes are added in the fixed
/// pairwise tree.
#[inline(always)]
fn finish<S: Simd, T: DotBlock, const V: usize>(
    simd: S, acc: [T::Vec<S>; V], row: &[T], x: &[T], k: usize,
) -> T {
    let full = k.saturating_sub(k.checked_rem(DOT_LANES).unwrap_or(0));
    let tail_x = x.get(full..k).unwrap_or_default();
    let tail_a = row.get(full..).unwrap_or_default();
    let mut sums = [T::ZERO; DOT_LANES];
    if tail_x.is_empty() {
        return reduce_full::<S, T, V>(simd, acc);
    }
    for (dst, v) in T::split_mut::<S>(&mut sums).iter_mut().zip(acc.iter()) {
        *dst = *v;
    }
    // The elements after the full blocks, each into its lane.
    for ((s, &p), &q) in sums.iter_mut().zip(tail_a).zip(tail_x) {
        *s = T::fma(p, q, *s);
    }
    tree(sums, DOT_LANES)
}

impl_dot_rows!(
    f32,
    f32s,
    splat_f32s,
    add_f32s,
    mul_add_f32s,
    as_simd_f32s,
    as_mut_simd_f32s,
    transposed::rows_f32
);
impl_dot_rows!(
    f64,
    f64s,
    splat_f64s,
    add_f64s,
    mul_add_f64s,
    as_simd_f64s,
    as_mut_simd_f64s,
    transposed::rows_f64
);

/// The matrix-vector kernel's reductions across rows on x86-64-v3: the
/// rows' partial sums are transposed with shuffles so that each vector add
/// performs one step of the pairwise tree for several rows at once (one
/// row's tree alone is mostly horizontal shuffles). Every lane adds the
/// same two sums as [`reduce_full`] (`j + 8` in the accumulator pair, then
/// `j + 4`, `j + 2`, `j + 1`), so the bits are those of every other level.
#[cfg(target_arch = "x86_64")]
mod transposed {
    use super::{dot4, row_of, DotRows, DOT_LANES, DOT_ROWS};
    use core::arch::x86_64::{__m256, __m256d, __m256i};
    use pulp::x86::V3;
    use pulp::{cast, f32x8};

    /// Rows per store of the f32 path (two groups of [`DOT_ROWS`]).
    const ROWS_F32: usize = 8;

    /// `out = rows @ x` with `G` rows at a time through `group` (given a
    /// block of `G` rows, their `G` results), the leftover rows by the
    /// generic kernel. `k` must be a multiple of [`DOT_LANES`] (the
    /// transposed reductions' trees span sixteen lanes); any other `k` goes
    /// to the generic kernel whole.
    #[inline(always)]
    fn grouped<T: DotRows, const G: usize>(
        simd: V3, out: &mut [T], rows: &[T], x: &[T], k: usize, group: impl Fn(&[T]) -> [T; G],
    ) {
        if k.checked_rem(DOT_LANES) != Some(0) {
            return T::dot_rows(simd, out, rows, x, k);
        }
        let done = out
            .len()
            .saturating_sub(out.len().checked_rem(G).unwrap_or(0));
        let mut groups = out.chunks_exact_mut(G);
        for (o, block) in (&mut groups).zip(rows.chunks(G.saturating_mul(k).max(1))) {
            o.copy_from_slice(&group(block));
        }
        let rest = groups.into_remainder();
        let left = rows.get(done.saturating_mul(k)..).unwrap_or_default();
        let quad = DOT_ROWS.saturating_mul(k).max(1);
        for (o, r) in rest.chunks_mut(DOT_ROWS).zip(left.chunks(quad)) {
            T::dot_rows(simd, o, r, x, k);
        }
    }

    /// Four rows' f32 partial sums reduced to `[a0 a1 c0 c1 | b0 b1 d0 d1]`:
    /// rows a..d, each row's two sums left of its tree.
    #[inline(always)]
    fn quad_f32(simd: V3, acc: [[f32x8; 2]; 4]) -> __m256 {
        let avx = simd.avx;
        // s[j] + s[j + 8]
        let [a, b, c, d] = acc.map(|[lo, hi]| avx._mm256_add_ps(cast(lo), cast(hi)));
        // s[j] + s[j + 4]: two rows per vector, [a0..a3 | b0..b3].
        let halves = |p: __m256, q: __m256| {
            avx._mm256_add_ps(
                avx._mm256_permute2f128_ps::<0x20>(p, q),
                avx._mm256_permute2f128_ps::<0x31>(p, q),
            )
        };
        let (ab, cd) = (halves(a, b), halves(c, d));
        // s[j] + s[j + 2]
        avx._mm256_add_ps(
            avx._mm256_shuffle_ps::<0b01_00_01_00>(ab, cd),
            avx._mm256_shuffle_ps::<0b11_10_11_10>(ab, cd),
        )
    }

    /// f32 rows eight at a time (the last step of both quads' trees in
    /// one add, the results permuted into row order and stored together).
    #[inline(always)]
    pub(super) fn rows_f32(simd: V3, out: &mut [f32], rows: &[f32], x: &[f32], k: usize) {
        let avx = simd.avx;
        grouped::<f32, ROWS_F32>(simd, out, rows, x, k, |block| {
            let quad = |r0: usize| [0, 1, 2, 3].map(|i| row_of(block, r0.saturating_add(i), k));
            let first = quad_f32(simd, dot4::<V3, f32, 2>(simd, quad(0), x, k));
            let second = quad_f32(simd, dot4::<V3, f32, 2>(simd, quad(4), x, k));
            // s[0] + s[1]: [r0 r2 r4 r6 | r1 r3 r5 r7].
            let sums = avx._mm256_add_ps(
                avx._mm256_shuffle_ps::<0b10_00_10_00>(first, second),
                avx._mm256_shuffle_ps::<0b11_01_11_01>(first, second),
            );
            let order: __m256i = cast([0i32, 4, 1, 5, 2, 6, 3, 7]);
            cast(simd.avx2._mm256_permutevar8x32_ps(sums, order))
        })
    }

    /// f64 rows four at a time (their trees across rows: `j + 8`, `j + 4`
    /// as vector adds per row, then `j + 2` and `j + 1` transposed).
    #[inline(always)]
    pub(super) fn rows_f64(simd: V3, out: &mut [f64], rows: &[f64], x: &[f64], k: usize) {
        let avx = simd.avx;
        grouped::<f64, DOT_ROWS>(simd, out, rows, x, k, |block| {
            let rs = [0, 1, 2, 3].map(|i| row_of(block, i, k));
            let acc = dot4::<V3, f64, 4>(simd, rs, x, k);
            // (s[j] + s[j + 8]) + (s[j + 4] + s[j + 12])
            let [a, b, c, d] = acc.map(|[v0, v1, v2, v3]| -> __m256d {
                avx._mm256_add_pd(
                    avx._mm256_add_pd(cast(v0), cast(v2)),
                    avx._mm256_add_pd(cast(v1), cast(v3)),
                )
            });
            // s[j] + s[j + 2]: [a0 a1 b0 b1], [c0 c1 d0 d1].
            let halves = |p: __m256d, q: __m256d| {
                avx._mm256_add_pd(
                    avx._mm256_permute2f128_pd::<0x20>(p, q),
                    avx._mm256_permute2f128_pd::<0x31>(p, q),
                )
            };
            let (ab, cd) = (halves(a, b), halves(c, d));
            // s[0] + s[1]: [a c b d], then row order.
            let sums = avx._mm256_add_pd(
                avx._mm256_unpacklo_pd(ab, cd),
                avx._mm256_unpackhi_pd(ab, cd),
            );
            cast(simd.avx2._mm256_permute4x64_pd::<0b11_01_10_00>(sums))
        })
    }
}

/// Rows of a row-major `(m, k)` matrix times a `k` vector into `out`.
struct MatvecRows<'a, T> {
    out: &'a mut [T],
    a: &'a [T],
    x: &'a [T],
    k: usize,
}

impl<T: DotRows> pulp::WithSimd for MatvecRows<'_, T> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let MatvecRows { out, a, x, k } = self;
        let step = DOT_ROWS.saturating_mul(k).max(1);
        for (o, rows) in out.chunks_mut(DOT_ROWS).zip(a.chunks(step)) {
            T::dot_rows(simd, o, rows, x, k);
        }
    }
}

/// [`MatvecRows`] through [`DotRows::dot_rows_v3`].
#[cfg(target_arch = "x86_64")]
struct MatvecRowsV3<'a, T> {
    simd: pulp::x86::V3,
    rows: MatvecRows<'a, T>,
}

#[cfg(target_arch = "x86_64")]
impl<T: DotRows> pulp::WithSimd for MatvecRowsV3<'_, T> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: Simd>(self, _: S) {
        let MatvecRows { out, a, x, k } = self.rows;
        T::dot_rows_v3(self.simd, out, a, x, k);
    }
}

/// Runs `rows` at the current SIMD level: on x86-64-v3 and above through
/// the transposed reductions when `k` is a multiple of [`DOT_LANES`] (the
/// same bits as the generic kernel, which takes every other case).
fn run_rows<T: DotRows>(rows: MatvecRows<'_, T>) {
    #[cfg(target_arch = "x86_64")]
    if rows.k.checked_rem(DOT_LANES) == Some(0)
        && super::vmath::simd_level() != super::vmath::SimdLevel::Scalar
    {
        if let Some(simd) = pulp::x86::V3::try_new() {
            return pulp::Simd::vectorize(simd, MatvecRowsV3 { simd, rows });
        }
    }
    super::vmath::run(rows);
}

/// The matrix-vector product `out = a @ x` per batch for contiguous
/// `(b, m, k)` and `(b, k)` operands (lengths validated by the caller):
/// each element is a dot product of a contiguous row with the vector,
/// vectorized along k (the register kernel's k-ordered sums would leave a
/// single-column product one scalar chain per row).
pub fn matvec_into<T: DotRows>(out: &mut [T], a: &[T], x: &[T], (m, k): (usize, usize)) {
    let mk = m.saturating_mul(k);
    if m == 0 || k == 0 {
        out.fill(T::ZERO);
        return;
    }
    for ((ob, ab), xb) in out
        .chunks_exact_mut(m)
        .zip(a.chunks_exact(mk))
        .zip(x.chunks_exact(k))
    {
        run_rows(MatvecRows {
            out: ob,
            a: ab,
            x: xb,
            k,
        });
    }
}

/// Rows per group of a [`ColumnMajor`] matrix: 64 bytes of elements, a
/// whole number of vectors at every SIMD width.
fn pack_rows<T>() -> usize {
    64usize
        .checked_div(core::mem::size_of::<T>())
        .unwrap_or(1)
        .max(1)
}

/// A matrix of the matrix-vector kernel stored column by column (its rows
/// padded with zeros to a multiple of [`pack_rows`]), for a matrix that
/// multiplies many vectors (a loop constant): each vector load then holds
/// one column element of several rows, so the rows' sixteen partial sums
/// are vectors across rows and the pairwise tree is vector adds, with no
/// horizontal reduction. Element `j` of row `i` still goes into sum
/// `j % 16` of row `i` in k order, fused, and the sums are added in the
/// same tree, so [`ColumnMajor::matvec_into`] gives the bits of
/// [`matvec_into`] on the row-major matrix.
#[derive(Debug, Clone)]
pub struct ColumnMajor<T> {
    /// The columns in the order the kernel's four passes read them:
    /// `l, l + 4, l + 8, ...` for `l` in `0..4` (column `j` at position
    /// `(j % 4) * (k / 4) + j / 4`), each `padded` long, zero past `rows`.
    cols: Vec<T>,
    rows: usize,
    padded: usize,
    k: usize,
}

impl<T: DotRows + DotBlock> ColumnMajor<T> {
    /// The row-major `(rows, k)` matrix `a` packed column by column;
    /// `None` when `k` is not a positive multiple of sixteen (the kernel
    /// has no tail), `a` is not `rows * k` long or the memory is not
    /// there.
    pub fn pack(a: &[T], rows: usize, k: usize) -> Option<ColumnMajor<T>> {
        if k == 0 || k.checked_rem(DOT_LANES) != Some(0) || rows == 0 {
            return None;
        }
        let group = pack_rows::<T>();
        let padded = rows.div_ceil(group).checked_mul(group)?;
        if a.len() != rows.checked_mul(k)? {
            return None;
        }
        let len = padded.checked_mul(k)?;
        let mut cols: Vec<T> = Vec::new();
        cols.try_reserve_exact(len).ok()?;
        cols.resize(len, T::ZERO);
        let per_pass = k / 4;
        for (i, row) in a.chunks_exact(k).enumerate() {
            for (j, &v) in row.iter().enumerate() {
                let at = (j % 4).saturating_mul(per_pass).saturating_add(j / 4);
                if let Some(dst) = cols.get_mut(at.saturating_mul(padded).saturating_add(i)) {
                    *dst = v;
                }
            }
        }
        Some(ColumnMajor {
            cols,
            rows,
            padded,
            k,
        })
    }

    /// `out = self @ x` at the current SIMD level; `false`, leaving `out`
    /// untouched, when `out` is not `rows` long or `x` not `k` long.
    pub fn matvec_into(&self, out: &mut [T], x: &[T]) -> bool {
        if out.len() != self.rows || x.len() != self.k {
            return false;
        }
        super::vmath::run(ColumnRows {
            out,
            cols: &self.cols,
            padded: self.padded,
            x,
        });
        true
    }
}

/// [`ColumnMajor::matvec_into`]'s kernel.
struct ColumnRows<'a, T> {
    out: &'a mut [T],
    cols: &'a [T],
    padded: usize,
    x: &'a [T],
}

impl<T: DotBlock> pulp::WithSimd for ColumnRows<'_, T> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let lanes = core::mem::size_of::<T::Vec<S>>()
            .checked_div(core::mem::size_of::<T>())
            .unwrap_or(1)
            .max(1);
        // Vectors of rows per block: four when 32 registers hold the
        // sixteen accumulators and the tree's partial sums, else two.
        if lanes.saturating_mul(core::mem::size_of::<T>()) >= 64 {
            column_blocks::<S, T, 4>(simd, self, lanes);
        } else {
            column_blocks::<S, T, 2>(simd, self, lanes);
        }
    }
}

/// The rows in blocks of `R` vectors, then single vectors; a block that
/// runs past the last row is computed whole (the padding rows are zeros)
/// and only its rows stored.
#[inline(always)]
fn column_blocks<S: Simd, T: DotBlock, const R: usize>(
    simd: S, op: ColumnRows<'_, T>, lanes: usize,
) {
    let ColumnRows {
        out,
        cols,
        padded,
        x,
    } = op;
    let rows = out.len();
    let mut r0 = 0usize;
    while r0 < rows {
        let wide = R.saturating_mul(lanes);
        if r0.saturating_add(wide) <= padded {
            let sums = column_block::<S, T, R>(simd, cols, padded, r0, x, lanes);
            store_rows::<S, T, R>(out, r0, sums);
            r0 = r0.saturating_add(wide);
        } else {
            let sums = column_block::<S, T, 1>(simd, cols, padded, r0, x, lanes);
            store_rows::<S, T, 1>(out, r0, sums);
            r0 = r0.saturating_add(lanes);
        }
    }
}

/// Writes the block of rows starting at `r0` (those of `out`'s rows it
/// holds).
#[inline(always)]
fn store_rows<S: Simd, T: DotBlock, const R: usize>(
    out: &mut [T], r0: usize, sums: [T::Vec<S>; R],
) {
    // At most four vectors of 64 bytes.
    let mut block = [T::ZERO; 64];
    for (dst, v) in T::split_mut::<S>(&mut block).iter_mut().zip(sums) {
        *dst = v;
    }
    let rest = out.get_mut(r0..).unwrap_or_default();
    for (o, &v) in rest.iter_mut().zip(block.iter()) {
        *o = v;
    }
}

/// One block of rows: the sixteen partial sums of the rows in four passes
/// (sums `l`, `l + 4`, `l + 8`, `l + 12` in pass `l`, each a vector across
/// the rows), each pass closing its part of the pairwise tree —
/// `(s[l] + s[l + 8]) + (s[l + 4] + s[l + 12])` — and the four results
/// added as the tree's last two steps.
#[inline(always)]
fn column_block<S: Simd, T: DotBlock, const R: usize>(
    simd: S, cols: &[T], padded: usize, r0: usize, x: &[T], lanes: usize,
) -> [T::Vec<S>; R] {
    let zero = T::zero::<S>(simd);
    let width = R.saturating_mul(lanes);
    let mut quarter = [[zero; R]; 4];
    for (l, q) in quarter.iter_mut().enumerate() {
        let mut acc = [[zero; R]; 4];
        // Pass `l` reads columns `l, l + 4, l + 8, ...`: sum `j % 16` of
        // column `j` cycles through the pass's four sums.
        let per_pass = x.len() / 4;
        let mine = per_pass.saturating_mul(padded);
        let start = l.saturating_mul(mine);
        let mut pass = cols
            .get(start..start.saturating_add(mine))
            .unwrap_or_default()
            .chunks_exact(padded.max(1))
            .zip(x.iter().skip(l).step_by(4));
        'columns: loop {
            for a in acc.iter_mut() {
                let Some((col, &xj)) = pass.next() else {
                    break 'columns;
                };
                let col = col.get(r0..r0.saturating_add(width)).unwrap_or_default();
                // A fixed-length array, so the loop below is unrolled and
                // the accumulators stay in registers.
                if let Some(vs) = T::split::<S>(col).first_chunk::<R>() {
                    let xs = T::splat::<S>(simd, xj);
                    for (s, &w) in a.iter_mut().zip(vs) {
                        *s = T::mul_add(simd, *s, w, xs);
                    }
                }
            }
        }
        let [a0, a1, a2, a3] = acc;
        for (((qv, &p0), (&p4, &p8)), &p12) in
            q.iter_mut().zip(&a0).zip(a1.iter().zip(&a2)).zip(&a3)
        {
            *qv = T::add_v(simd, T::add_v(simd, p0, p8), T::add_v(simd, p4, p12));
        }
    }
    let [q0, q1, q2, q3] = quarter;
    let mut sums = [zero; R];
    for (((s, &a), (&b, &c)), &d) in sums.iter_mut().zip(&q0).zip(q1.iter().zip(&q2)).zip(&q3) {
        *s = T::add_v(simd, T::add_v(simd, a, c), T::add_v(simd, b, d));
    }
    sums
}
