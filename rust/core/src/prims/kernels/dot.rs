//! `dot_general`: operands are viewed as `(batch, M, K)` and `(batch, K, N)`
//! (batch dims, then free dims, then contracting dims, each group flattened)
//! and multiplied batch by batch. The result is `batch + lhs free + rhs free`.
//!
//! When each group of axes flattens to a single stride (plain, transposed
//! and batched matmuls) the operands are used in place; otherwise they are
//! copied into `(batch, rows, cols)` order first. f32/f64 and complex
//! products use faer's matmul (f32/f64 matrix-vector products the `gemm`
//! crate's kernels); small products use our register-blocked and
//! loop kernels (faer's setup costs more than the arithmetic), so a small
//! matmul allocates nothing but its result.
//! f16/bf16 compute in f32 and round once; integers use an i-k-j loop with
//! wrapping arithmetic.
//!
//! `preferred_element_type`: when it names a type at least as wide as the
//! operands (same kind, or float for integer operands), the operands are
//! converted first and the product is computed in that type, as XLA does
//! for `int8 x int8 -> int32` or `bf16 x bf16 -> f32`. Otherwise the product
//! is computed in the operand type and converted.

use super::common::{bad_dtype, FloatElem, HalfElem, IntElem, SIMD_MIN};
use super::elementwise::convert;
use super::small_matmul::{self, DotRows, SmallMatmul};
use super::structural::strided_gather;
use crate::array::{alloc, same_dims, Buffer, Element, HostArray, C32, C64};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::exec::ExecCtx;
use crate::prims::DotDims;
use std::borrow::Cow;

const NAME: &str = "dot_general";

/// Up to this many multiply-adds the plain loop beats faer's setup.
const SMALL_FLOPS: usize = 16 * 16 * 16;
/// From this many multiply-adds a product may use threads.
const PAR_FLOPS: usize = 128 * 128 * 128;
/// Multiply-adds of one row block of a product in a stoppable run (about
/// 25 ms on two AVX2 cores): a checkpoint is passed between blocks. Each
/// block packs the whole right operand again, so smaller blocks cost
/// (2^28: a 1024^3 product 12% slower).
const CHUNK_FLOPS: usize = 1 << 31;

fn internal(what: &str) -> Error {
    Error::shape(NAME, &[], format!("kernel size mismatch ({what})"))
}

/// A set of axes: an explicit list, or every axis of `0..ndim` in neither
/// of two lists (the free axes), iterated without allocating.
#[derive(Clone, Copy)]
pub enum Axes<'a> {
    List(&'a [usize]),
    Rest(&'a [usize], &'a [usize], usize),
}

impl<'a> Axes<'a> {
    pub fn iter(self) -> impl Iterator<Item = usize> + 'a {
        let (list, rest) = match self {
            Axes::List(l) => (l, None),
            Axes::Rest(a, b, n) => (&[][..], Some((a, b, n))),
        };
        list.iter().copied().chain(
            rest.into_iter()
                .flat_map(|(a, b, n)| (0..n).filter(move |x| !a.contains(x) && !b.contains(x))),
        )
    }
}

/// Axes 0 and 1 as `'static` one-axis lists, for [`Layout::matrix`].
const AXIS: [[usize; 1]; 2] = [[0], [1]];

/// `(rows, cols)` axes of both operands when the product is a plain
/// rank ≤ 2 matrix product (no batch axes, one contracted axis each).
pub type MatrixAxes = (
    (Option<usize>, Option<usize>),
    (Option<usize>, Option<usize>),
);

pub fn matrix_axes(dims: &DotDims, lrank: usize, rrank: usize) -> Option<MatrixAxes> {
    if !dims.lhs_batch.is_empty() || !dims.rhs_batch.is_empty() || lrank > 2 || rrank > 2 {
        return None;
    }
    let (&[lc], &[rc]) = (dims.lhs_contract.as_slice(), dims.rhs_contract.as_slice()) else {
        return None;
    };
    if lc >= lrank || rc >= rrank {
        return None;
    }
    // The other axis of a rank-2 operand (1 - c, as c is 0 or 1).
    let free = |rank: usize, c: usize| (rank == 2).then_some(usize::from(c == 0));
    Some(((free(lrank, lc), Some(lc)), (Some(rc), free(rrank, rc))))
}

/// One operand seen as `(batch, rows, cols)`.
pub struct Layout<'a> {
    pub shape: &'a [usize],
    pub groups: [Axes<'a>; 3],
    /// `(size, stride)` of each group, `None` when a group does not step
    /// through memory with a single stride.
    pub flat: Option<[(usize, usize); 3]>,
    /// Size of each group.
    pub sizes: [usize; 3],
}

/// Row-major stride of axis `a` of `shape` (the array exists, so the
/// product cannot overflow; saturate anyway).
fn stride_of(shape: &[usize], a: usize) -> usize {
    shape
        .get(a.saturating_add(1)..)
        .unwrap_or(&[])
        .iter()
        .fold(1usize, |acc, &d| acc.saturating_mul(d))
}

impl<'a> Layout<'a> {
    fn new(shape: &'a [usize], groups: [Axes<'a>; 3]) -> Layout<'a> {
        let size = |g: Axes<'_>| {
            g.iter()
                .map(|a| shape.get(a).copied().unwrap_or(0))
                .fold(1usize, |acc, d| acc.saturating_mul(d))
        };
        let sizes = groups.map(size);
        let flat = match groups.map(|g| {
            flatten(
                g.iter()
                    .map(|a| (shape.get(a).copied().unwrap_or(0), stride_of(shape, a))),
            )
        }) {
            [Some(b), Some(r), Some(c)] => Some([b, r, c]),
            _ => None,
        };
        Layout {
            shape,
            groups,
            flat,
            sizes,
        }
    }

    /// What [`Layout::new`] computes for a rank ≤ 2 operand with no batch
    /// axis, rows on axis `rows` and columns on axis `cols` (`None`: no
    /// such axis), without its general walk over axis lists (which costs
    /// more than a small matvec).
    pub fn matrix(shape: &'a [usize], rows: Option<usize>, cols: Option<usize>) -> Layout<'a> {
        let group = |a: Option<usize>| match a {
            Some(a) => Axes::List(AXIS.get(a).map_or(&[][..], |x| &x[..])),
            None => Axes::List(&[]),
        };
        let dim = |a: Option<usize>| a.map_or(1, |a| shape.get(a).copied().unwrap_or(0));
        let flat = |a: Option<usize>| match a {
            Some(a) => flatten(std::iter::once((dim(Some(a)), stride_of(shape, a)))),
            None => Some((1, 0)),
        };
        Layout {
            shape,
            groups: [Axes::List(&[]), group(rows), group(cols)],
            flat: flat(rows).zip(flat(cols)).map(|(r, c)| [(1, 0), r, c]),
            sizes: [1, dim(rows), dim(cols)],
        }
    }

    /// Batch, row and column strides of the operand used in place, if it
    /// can be.
    fn strides(&self) -> Option<Strides> {
        self.flat
            .map(|[(_, bs), (_, rs), (_, cs)]| Strides { bs, rs, cs })
    }

    /// Strides of the contiguous `(batch, rows, cols)` layout.
    fn packed(&self) -> Strides {
        let [_, rows, cols] = self.sizes;
        Strides {
            bs: rows.saturating_mul(cols),
            rs: cols,
            cs: 1,
        }
    }

    /// Whether the operand already is contiguous `(batch, rows, cols)`.
    fn is_packed(&self) -> bool {
        let packed = self.packed();
        match self.flat {
            Some([(b, bs), (r, rs), (c, cs)]) => {
                (b <= 1 || bs == packed.bs) && (r <= 1 || rs == packed.rs) && (c <= 1 || cs == 1)
            }
            None => false,
        }
    }

    /// The operand as contiguous `(batch, rows, cols)` data, copied only
    /// when it is not already in that order.
    fn contiguous<'s, T: Copy>(&self, src: &'s [T]) -> Result<Cow<'s, [T]>> {
        if self.is_packed() {
            return Ok(Cow::Borrowed(src));
        }
        let axes: Vec<usize> = self.groups.iter().flat_map(|g| g.iter()).collect();
        let shape: Vec<usize> = axes
            .iter()
            .map(|&a| self.shape.get(a).copied().unwrap_or(0))
            .collect();
        let strides: Vec<usize> = axes.iter().map(|&a| stride_of(self.shape, a)).collect();
        Ok(Cow::Owned(strided_gather(src, &shape, &strides)?))
    }
}

/// `(size, stride)` of a group of axes that steps through memory with one
/// stride, or `None`. Size-1 axes are ignored; an empty group is `(1, 0)`.
fn flatten(dims: impl Iterator<Item = (usize, usize)>) -> Option<(usize, usize)> {
    let mut out: Option<(usize, usize)> = None;
    for (n, s) in dims {
        if n == 0 {
            return Some((0, 0));
        }
        if n == 1 {
            continue;
        }
        out = match out {
            None => Some((n, s)),
            Some((pn, ps)) if s.checked_mul(n) == Some(ps) => Some((pn.checked_mul(n)?, s)),
            Some(_) => return None,
        };
    }
    Some(out.unwrap_or((1, 0)))
}

/// Problem sizes: batch, M, K, N.
#[derive(Clone, Copy)]
pub struct Sizes {
    pub b: usize,
    pub m: usize,
    pub k: usize,
    pub n: usize,
}

impl Sizes {
    fn flops(self) -> usize {
        self.b
            .saturating_mul(self.m)
            .saturating_mul(self.n)
            .saturating_mul(self.k)
    }
}

/// Batch, row and column strides of an operand, in elements.
#[derive(Clone, Copy)]
struct Strides {
    bs: usize,
    rs: usize,
    cs: usize,
}

/// The operands' `[batch, rows, contracted]` / `[batch, contracted, cols]`
/// layouts and the product's sizes (output size checked).
fn plan<'a>(
    l: &'a HostArray, r: &'a HostArray, dims: &'a DotDims,
) -> Result<(Layout<'a>, Layout<'a>, Sizes)> {
    plan_shapes(l.shape(), r.shape(), dims)
}

/// [`plan`] from the operands' shapes.
fn plan_shapes<'a>(
    l: &'a [usize], r: &'a [usize], dims: &'a DotDims,
) -> Result<(Layout<'a>, Layout<'a>, Sizes)> {
    let (lay_l, lay_r) = match matrix_axes(dims, l.len(), r.len()) {
        Some(((lr, lc), (rr, rc))) => (Layout::matrix(l, lr, lc), Layout::matrix(r, rr, rc)),
        None => general_layouts(l, r, dims),
    };
    let [b, m, k] = lay_l.sizes;
    let sz = Sizes {
        b,
        m,
        k,
        n: lay_r.sizes[2],
    };
    sz.b.checked_mul(sz.m)
        .and_then(|x| x.checked_mul(sz.n))
        .ok_or_else(|| Error::Overflow {
            what: NAME,
            detail: "output size".into(),
        })?;
    Ok((lay_l, lay_r, sz))
}

/// A float `dot_general` of fixed operand shapes that runs on one of the
/// small kernels (register-blocked or matrix-vector) with both operands
/// used in place, planned once
/// (by a compiled plan's step) so that a run skips the layout walk — on a
/// 64×64 matvec inside a scan the walk cost a third of the kernel. The
/// kernel is the one [`dot_general`] picks for these shapes, so the bits
/// are the same.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackedDot {
    lhs: Vec<usize>,
    rhs: Vec<usize>,
    /// Batch, rows, contracted and columns sizes.
    bmkn: [usize; 4],
}

impl PackedDot {
    /// The plan for operands of shapes `lhs` and `rhs`, if the product
    /// takes a small kernel in some determinism mode on operands already
    /// in place.
    pub fn new(lhs: &[usize], rhs: &[usize], dims: &DotDims) -> Option<PackedDot> {
        let (ll, lr, sz) = plan_shapes(lhs, rhs, dims).ok()?;
        let small = [false, true]
            .iter()
            .any(|&portable| small_kernel_for(sz, true, portable).is_some());
        if !small || !ll.is_packed() || !lr.is_packed() {
            return None;
        }
        Some(PackedDot {
            lhs: lhs.to_vec(),
            rhs: rhs.to_vec(),
            bmkn: [sz.b, sz.m, sz.k, sz.n],
        })
    }

    /// Writes `l · r` into `out` (a buffer of the product's size, stale
    /// contents allowed) with the kernel [`dot_general`] picks in `ctx`'s
    /// determinism mode. `false`, leaving `out` untouched, when the
    /// operands are not of the planned shapes or not both of `out`'s float
    /// type, or the product takes no small kernel in that mode.
    pub fn run_into(
        &self, ctx: &ExecCtx, l: &HostArray, r: &HostArray, out: &mut Buffer,
    ) -> Result<bool> {
        // Plain loops, not slice equality (a `memcmp` call per operand
        // costs more on two axes; this runs at every step of a loop).
        if !same_dims(l.shape(), &self.lhs) || !same_dims(r.shape(), &self.rhs) {
            return Ok(false);
        }
        let [b, m, k, n] = self.bmkn;
        let sz = Sizes { b, m, k, n };
        // Both operands are packed (checked when planned).
        let Some(kind) = small_kernel_for(sz, true, ctx.is_portable()) else {
            return Ok(false);
        };
        match (l.buffer(), r.buffer(), out) {
            (Buffer::F32(a), Buffer::F32(b), Buffer::F32(o)) => self.product(ctx, kind, a, b, o),
            (Buffer::F64(a), Buffer::F64(b), Buffer::F64(o)) => self.product(ctx, kind, a, b, o),
            _ => Ok(false),
        }
    }

    fn product<T: SmallMatmul + DotRows + Send + Sync>(
        &self, ctx: &ExecCtx, kind: Small, l: &[T], r: &[T], out: &mut [T],
    ) -> Result<bool> {
        let [b, m, k, n] = self.bmkn;
        let size = |x: usize, y: usize| b.checked_mul(x).and_then(|v| v.checked_mul(y));
        if Some(l.len()) != size(m, k)
            || Some(r.len()) != size(k, n)
            || Some(out.len()) != size(m, n)
        {
            return Err(internal("operand length"));
        }
        run_small(ctx, kind, out, l, r, Sizes { b, m, k, n });
        Ok(true)
    }

    /// `l`, the planned product's left operand, fixed for many runs (a
    /// loop constant) and packed for them, when the product is a
    /// matrix-vector product on the matrix-vector kernel
    /// ([`FixedMatrix`]). `None` for every other product, and when the
    /// packing finds no memory: the plan then runs as it is.
    pub fn fix_lhs(&self, l: &HostArray) -> Option<FixedMatrix> {
        let [b, m, k, n] = self.bmkn;
        let sz = Sizes { b, m, k, n };
        let matvec = small_kernel_for(sz, true, false) == Some(Small::Matvec);
        // Small matrices only: a column of a larger one would be a strided
        // walk for the one thread that runs a loop step.
        let small = sz.flops() <= MATVEC_FLOPS;
        if b != 1 || !matvec || !small || !same_dims(l.shape(), &self.lhs) {
            return None;
        }
        let matrix = match l.buffer() {
            Buffer::F32(a) => Columns::F32(small_matmul::ColumnMajor::pack(a, m, k)?),
            Buffer::F64(a) => Columns::F64(small_matmul::ColumnMajor::pack(a, m, k)?),
            _ => return None,
        };
        Some(FixedMatrix {
            rhs: self.rhs.clone(),
            matrix,
        })
    }
}

/// The matrix of a planned matrix-vector product stored column by column
/// once for the many vectors it multiplies (a loop constant: `W @ c` in a
/// `scan` body): each run is then vector multiply-adds across rows with
/// no horizontal sums. Same bits as the kernel [`dot_general`] picks
/// (each row's sixteen partial sums, added pairwise); the portable mode
/// runs the plan as it is.
#[derive(Debug, Clone)]
pub struct FixedMatrix {
    rhs: Vec<usize>,
    matrix: Columns,
}

#[derive(Debug, Clone)]
enum Columns {
    F32(small_matmul::ColumnMajor<f32>),
    F64(small_matmul::ColumnMajor<f64>),
}

impl FixedMatrix {
    /// Writes `matrix · r` into `out` (stale contents allowed); `false`,
    /// leaving `out` untouched, when `r` is not of the planned shape and
    /// the matrix's type, `out` not of the product's size, or `ctx` is
    /// in the portable mode.
    pub fn run_into(&self, ctx: &ExecCtx, r: &HostArray, out: &mut Buffer) -> bool {
        if ctx.is_portable() || !same_dims(r.shape(), &self.rhs) {
            return false;
        }
        match (&self.matrix, r.buffer(), out) {
            (Columns::F32(a), Buffer::F32(x), Buffer::F32(o)) => a.matvec_into(o, x),
            (Columns::F64(a), Buffer::F64(x), Buffer::F64(o)) => a.matvec_into(o, x),
            _ => false,
        }
    }
}

/// [`dot_general`] of two f32 (or two f64) operands written into `out`
/// (the output's buffer, stale contents allowed), when the product takes
/// the register-blocked kernel and needs no conversion. Returns `false`,
/// leaving `out` untouched, for every other product: the caller then takes
/// the allocating path. The kernel is the one [`dot_general`] picks, so the
/// bits are the same.
pub fn dot_general_into(
    ctx: &ExecCtx, l: &HostArray, r: &HostArray, dims: &DotDims, pref: Option<DType>,
    out: &mut Buffer,
) -> Result<bool> {
    if pref.is_some_and(|p| p != l.dtype()) {
        return Ok(false);
    }
    let (ll, lr, sz) = plan(l, r, dims)?;
    match (l.buffer(), r.buffer(), out) {
        (Buffer::F32(a), Buffer::F32(b), Buffer::F32(o)) => small_into(ctx, a, b, &ll, &lr, sz, o),
        (Buffer::F64(a), Buffer::F64(b), Buffer::F64(o)) => small_into(ctx, a, b, &ll, &lr, sz, o),
        _ => Ok(false),
    }
}

fn small_into<T: SmallMatmul + DotRows>(
    ctx: &ExecCtx, l: &[T], r: &[T], ll: &Layout<'_>, lr: &Layout<'_>, sz: Sizes, out: &mut [T],
) -> Result<bool> {
    let Some(kind) = small_kernel(ll, lr, sz, ctx.is_portable()) else {
        return Ok(false);
    };
    let (lc, rc) = (ll.contiguous(l)?, lr.contiguous(r)?);
    let Sizes { b, m, k, n } = sz;
    let size = |x: usize, y: usize| b.checked_mul(x).and_then(|v| v.checked_mul(y));
    if Some(lc.len()) != size(m, k) || Some(rc.len()) != size(k, n) || Some(out.len()) != size(m, n)
    {
        return Err(internal("operand length"));
    }
    run_small(ctx, kind, out, &lc, &rc, sz);
    Ok(true)
}

/// Up to this many multiply-adds a matrix-vector product whose operands
/// need packing (a transposed matrix) runs on the row-dot kernel (a
/// 128×128 matrix); larger ones on gemm's kernels, which read them in
/// place. Packed ones of every size take the row-dot kernel, over threads
/// from [`crate::exec::pool::ELEMENTWISE_PAR_MIN`] elements: a jitted
/// 2048×2048 f32 product 0.73-0.87 -> 0.45-0.50 ms, 4096×4096 3.3-5.9 ->
/// 1.7-1.9 ms (2 threads; gemm's ran on one).
const MATVEC_FLOPS: usize = 128 * 128;

/// The small kernels [`float_matmul`] picks by the sizes alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Small {
    /// `small_matmul::matmul_into`: k-ordered sums, register-blocked rows.
    Register,
    /// `small_matmul::matvec_into`: single-column products (`n == 1`) as
    /// row dot products vectorized along k, for packed operands of any
    /// size and others of at most [`MATVEC_FLOPS`] multiply-adds; not
    /// under `Determinism::Portable`, whose products are k-ordered sums.
    Matvec,
}

/// The small kernel a product of these layouts and sizes runs on, if any.
fn small_kernel(ll: &Layout<'_>, lr: &Layout<'_>, sz: Sizes, portable: bool) -> Option<Small> {
    small_kernel_for(sz, ll.is_packed() && lr.is_packed(), portable)
}

/// [`small_kernel`] from the sizes and whether both operands are packed.
fn small_kernel_for(sz: Sizes, packed: bool, portable: bool) -> Option<Small> {
    let Sizes { b, m, k, n } = sz;
    if !portable && n == 1 && m > 1 && k > 0 && b > 0 && (packed || sz.flops() <= MATVEC_FLOPS) {
        return Some(Small::Matvec);
    }
    takes_register(packed, sz).then_some(Small::Register)
}

/// Runs the small kernel `kind` on packed operands into `out` (`b*m*n`
/// elements, stale contents allowed; lengths checked by the caller), over
/// the threads of `ctx` when an operand or the output has at least
/// [`ELEMENTWISE_PAR_MIN`](crate::exec::pool::ELEMENTWISE_PAR_MIN)
/// elements (a batched outer product writing 1024x256 elements, a
/// 1024x256 matrix-vector product): in whole batches, or a single batch's
/// rows. Every output element is computed as on one thread, so the bits do
/// not depend on the split.
fn run_small<T: SmallMatmul + DotRows + Send + Sync>(
    ctx: &ExecCtx, kind: Small, out: &mut [T], l: &[T], r: &[T], sz: Sizes,
) {
    let Sizes { b, m, k, n } = sz;
    // Most products (every step of a small loop body) stop here.
    let touched = out.len().max(l.len()).max(r.len());
    if touched < crate::exec::pool::ELEMENTWISE_PAR_MIN {
        return small_on(kind, out, l, r, sz);
    }
    let units = if b > 1 { b } else { m };
    let parts = ctx.partitions(units);
    let per = units.div_ceil(parts.max(1));
    // Elements of each operand per part (the whole right operand when a
    // single batch is split by rows).
    let lens = if b > 1 {
        let rows = per.checked_mul(m);
        [
            rows.and_then(|x| x.checked_mul(n)),
            rows.and_then(|x| x.checked_mul(k)),
            per.checked_mul(k).and_then(|x| x.checked_mul(n)),
        ]
    } else {
        [per.checked_mul(n), per.checked_mul(k), Some(r.len())]
    };
    let (Some(oc), Some(lc), Some(rc)) = (lens[0], lens[1], lens[2]) else {
        return small_on(kind, out, l, r, sz);
    };
    if parts <= 1 || oc == 0 || lc == 0 || rc == 0 {
        return small_on(kind, out, l, r, sz);
    }
    use rayon::prelude::*;
    crate::exec::pool::install(|| {
        if b > 1 {
            out.par_chunks_mut(oc)
                .zip(l.par_chunks(lc))
                .zip(r.par_chunks(rc))
                .for_each(|((o, lp), rp)| {
                    let b = o.len().checked_div(m.saturating_mul(n)).unwrap_or(0);
                    ctx.enter(|| small_on(kind, o, lp, rp, Sizes { b, m, k, n }));
                });
        } else {
            out.par_chunks_mut(oc)
                .zip(l.par_chunks(lc))
                .for_each(|(o, lp)| {
                    let m = o.len().checked_div(n).unwrap_or(0);
                    ctx.enter(|| small_on(kind, o, lp, r, Sizes { b: 1, m, k, n }));
                });
        }
    });
}

/// The small kernel `kind` on this thread.
fn small_on<T: SmallMatmul + DotRows>(kind: Small, out: &mut [T], l: &[T], r: &[T], sz: Sizes) {
    let Sizes { m, k, n, .. } = sz;
    match kind {
        // Both kernels write every output element.
        Small::Register => small_matmul::matmul_into(out, l, r, m, k, n),
        Small::Matvec => small_matmul::matvec_into(out, l, r, (m, k)),
    }
}

/// Whether [`float_matmul`] runs the product on the register-blocked kernel.
fn takes_register(packed: bool, sz: Sizes) -> bool {
    let Sizes { b, m, k, n } = sz;
    let flops = sz.flops();
    let register = flops <= SMALL_FLOPS || (flops <= REGISTER_FLOPS && m <= 16 && n >= 64);
    let nonempty = m > 0 && n > 0 && k > 0 && b > 0;
    register && nonempty && (packed || flops > SMALL_FLOPS)
}

pub fn dot_general(
    ctx: &ExecCtx, l: &HostArray, r: &HostArray, dims: &DotDims, pref: Option<DType>,
) -> Result<Buffer> {
    let (lay_l, lay_r, sz) = plan(l, r, dims)?;

    let op_dtype = l.dtype();
    let compute = match pref {
        Some(p) if widens(op_dtype, p) => p,
        _ => op_dtype,
    };
    let (lb, rb) = if compute == op_dtype {
        (Cow::Borrowed(l.buffer()), Cow::Borrowed(r.buffer()))
    } else {
        (
            Cow::Owned(convert(l.buffer(), compute)?),
            Cow::Owned(convert(r.buffer(), compute)?),
        )
    };
    let out = matmul(ctx, &lb, &rb, &lay_l, &lay_r, sz)?;
    match pref {
        Some(p) if p != out.dtype() => convert(&out, p),
        _ => Ok(out),
    }
}

pub fn general_layouts<'a>(
    l: &'a [usize], r: &'a [usize], dims: &'a DotDims,
) -> (Layout<'a>, Layout<'a>) {
    let lay_l = Layout::new(
        l,
        [
            Axes::List(&dims.lhs_batch),
            Axes::Rest(&dims.lhs_batch, &dims.lhs_contract, l.len()),
            Axes::List(&dims.lhs_contract),
        ],
    );
    let lay_r = Layout::new(
        r,
        [
            Axes::List(&dims.rhs_batch),
            Axes::List(&dims.rhs_contract),
            Axes::Rest(&dims.rhs_batch, &dims.rhs_contract, r.len()),
        ],
    );
    (lay_l, lay_r)
}

/// Whether computing in `to` loses nothing relative to `from`.
fn widens(from: DType, to: DType) -> bool {
    if from == to || !to.is_numeric() {
        return false;
    }
    let wider = to.bits() >= from.bits();
    match (from.is_float(), to.is_float()) {
        (false, true) => true,
        (true, true) => wider,
        (false, false) => {
            wider && (from.is_signed_int() == to.is_signed_int() || to.bits() > from.bits())
        }
        (true, false) => false,
    }
}

fn matmul(
    ctx: &ExecCtx, l: &Buffer, r: &Buffer, ll: &Layout<'_>, lr: &Layout<'_>, sz: Sizes,
) -> Result<Buffer> {
    Ok(match (l, r) {
        (Buffer::F32(a), Buffer::F32(b)) => {
            Buffer::F32(float_matmul(ctx, a, b, ll, lr, sz)?.into())
        }
        (Buffer::F64(a), Buffer::F64(b)) => {
            Buffer::F64(float_matmul(ctx, a, b, ll, lr, sz)?.into())
        }
        (Buffer::F16(a), Buffer::F16(b)) => Buffer::F16(half_matmul(ctx, a, b, ll, lr, sz)?.into()),
        (Buffer::BF16(a), Buffer::BF16(b)) => {
            Buffer::BF16(half_matmul(ctx, a, b, ll, lr, sz)?.into())
        }
        (Buffer::I8(a), Buffer::I8(b)) => Buffer::I8(int_matmul(a, b, ll, lr, sz)?.into()),
        (Buffer::I16(a), Buffer::I16(b)) => Buffer::I16(int_matmul(a, b, ll, lr, sz)?.into()),
        (Buffer::I32(a), Buffer::I32(b)) => Buffer::I32(int_matmul(a, b, ll, lr, sz)?.into()),
        (Buffer::I64(a), Buffer::I64(b)) => Buffer::I64(int_matmul(a, b, ll, lr, sz)?.into()),
        (Buffer::U8(a), Buffer::U8(b)) => Buffer::U8(int_matmul(a, b, ll, lr, sz)?.into()),
        (Buffer::U16(a), Buffer::U16(b)) => Buffer::U16(int_matmul(a, b, ll, lr, sz)?.into()),
        (Buffer::U32(a), Buffer::U32(b)) => Buffer::U32(int_matmul(a, b, ll, lr, sz)?.into()),
        (Buffer::U64(a), Buffer::U64(b)) => Buffer::U64(int_matmul(a, b, ll, lr, sz)?.into()),
        (Buffer::C64(a), Buffer::C64(b)) => {
            let fma = |acc: C32, a: C32, x: C32| acc + a * x;
            Buffer::C64(complex_matmul(ctx, a, b, ll, lr, sz, fma)?.into())
        }
        (Buffer::C128(a), Buffer::C128(b)) => {
            let fma = |acc: C64, a: C64, x: C64| acc + a * x;
            Buffer::C128(complex_matmul(ctx, a, b, ll, lr, sz, fma)?.into())
        }
        _ => return Err(bad_dtype(NAME, &[l.dtype(), r.dtype()])),
    })
}

/// Largest offset `(b-1)*bs + (rows-1)*rs + (cols-1)*cs` is inside `len`.
fn fits(len: usize, s: Strides, b: usize, rows: usize, cols: usize) -> bool {
    if b == 0 || rows == 0 || cols == 0 {
        return true;
    }
    let last = (b.wrapping_sub(1))
        .checked_mul(s.bs)
        .and_then(|x| x.checked_add(rows.wrapping_sub(1).checked_mul(s.rs)?))
        .and_then(|x| x.checked_add(cols.wrapping_sub(1).checked_mul(s.cs)?));
    matches!(last, Some(l) if l < len)
}

/// Dot-product loop on strided operands, for small products: no copies,
/// each output element accumulated in k order. `fma(acc, a, b)`.
fn strided_matmul<T: Copy>(
    l: &[T], ls: Strides, r: &[T], rs: Strides, sz: Sizes, zero: T, fma: impl Fn(T, T, T) -> T,
) -> Result<Vec<T>> {
    let Sizes { b, m, k, n } = sz;
    if !fits(l.len(), ls, b, m, k) || !fits(r.len(), rs, b, k, n) {
        return Err(internal("operand strides"));
    }
    let total = b
        .checked_mul(m)
        .and_then(|x| x.checked_mul(n))
        .ok_or_else(|| internal("b*m*n"))?;
    let mut out = alloc::with_capacity("dot_general", total)?;
    for bi in 0..b {
        let lb = bi.wrapping_mul(ls.bs);
        let rb = bi.wrapping_mul(rs.bs);
        for i in 0..m {
            let lrow = lb.wrapping_add(i.wrapping_mul(ls.rs));
            for j in 0..n {
                let rcol = rb.wrapping_add(j.wrapping_mul(rs.cs));
                let mut acc = zero;
                for kk in 0..k {
                    let a = l.get(lrow.wrapping_add(kk.wrapping_mul(ls.cs)));
                    let x = r.get(rcol.wrapping_add(kk.wrapping_mul(rs.rs)));
                    if let (Some(&a), Some(&x)) = (a, x) {
                        acc = fma(acc, a, x);
                    }
                }
                out.push(acc);
            }
        }
    }
    Ok(out)
}

/// i-k-j loop over contiguous `(b, m, k)` x `(b, k, n)`; `fma(acc, a, b)`.
/// The inner loop runs along an output row and vectorizes.
fn loop_matmul<T: Copy>(
    l: &[T], r: &[T], sz: Sizes, zero: T, fma: impl Fn(T, T, T) -> T,
) -> Result<Vec<T>> {
    let Sizes { b, m, k, n } = sz;
    let mn = m.checked_mul(n).ok_or_else(|| internal("m*n"))?;
    let total = b.checked_mul(mn).ok_or_else(|| internal("b*m*n"))?;
    let mut out = alloc::filled("dot_general", zero, total)?;
    if total == 0 || k == 0 {
        return Ok(out);
    }
    let mk = m.checked_mul(k).ok_or_else(|| internal("m*k"))?;
    let kn = k.checked_mul(n).ok_or_else(|| internal("k*n"))?;
    if l.len() != b.saturating_mul(mk) || r.len() != b.saturating_mul(kn) {
        return Err(internal("operand length"));
    }
    if total < SIMD_MIN {
        batches_times(&mut out, l, r, sz, zero, &fma);
    } else {
        super::vmath::run(Matmul {
            out: &mut out,
            l,
            r,
            sz,
            zero,
            fma: &fma,
        });
    }
    Ok(out)
}

/// [`batches_times`] as a `pulp` operation: `with_simd` is instantiated
/// inside each target-feature context and the kernel inlined into it (a
/// closure would be compiled once, for the baseline instruction set).
struct Matmul<'a, T, F> {
    out: &'a mut [T],
    l: &'a [T],
    r: &'a [T],
    sz: Sizes,
    zero: T,
    fma: &'a F,
}

impl<T: Copy, F: Fn(T, T, T) -> T> pulp::WithSimd for Matmul<'_, T, F> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        batches_times(self.out, self.l, self.r, self.sz, self.zero, self.fma);
    }
}

/// Every batch of `out = l @ r` (validated contiguous operands).
#[inline(always)]
fn batches_times<T: Copy>(
    out: &mut [T], l: &[T], r: &[T], sz: Sizes, zero: T, fma: &impl Fn(T, T, T) -> T,
) {
    let Sizes { m, k, n, .. } = sz;
    let (mn, mk, kn) = (m.wrapping_mul(n), m.wrapping_mul(k), k.wrapping_mul(n));
    for ((ob, lb), rb) in out
        .chunks_exact_mut(mn)
        .zip(l.chunks_exact(mk))
        .zip(r.chunks_exact(kn))
    {
        for (orow, lrow) in ob.chunks_exact_mut(n).zip(lb.chunks_exact(k)) {
            row_times(orow, lrow, rb, n, zero, fma);
        }
    }
}

/// `orow = lrow @ rb` with `rb` a contiguous `(k, n)` matrix, in i-k-j
/// order: the row stays in L1 and the loop over it vectorizes (the loop
/// vectorizer handles it reliably; a register-blocked form was left scalar
/// by the release build's SLP pass).
#[inline(always)]
fn row_times<T: Copy>(
    orow: &mut [T], lrow: &[T], rb: &[T], n: usize, zero: T, fma: &impl Fn(T, T, T) -> T,
) {
    orow.fill(zero);
    for (&a, rrow) in lrow.iter().zip(rb.chunks_exact(n.max(1))) {
        for (o, &x) in orow.iter_mut().zip(rrow) {
            *o = fma(*o, a, x);
        }
    }
}

fn int_matmul<T: IntElem>(
    l: &[T], r: &[T], ll: &Layout<'_>, lr: &Layout<'_>, sz: Sizes,
) -> Result<Vec<T>> {
    plain_matmul(l, r, ll, lr, sz, T::ZERO, |acc: T, a: T, b: T| {
        acc.wadd(a.wmul(b))
    })
}

/// Up to this many multiply-adds, operands that are not packed are read in
/// place by the dot-product loop instead of being copied.
const TINY_FLOPS: usize = 512;

/// The loop kernels: packed operands go straight to the vectorized i-k-j
/// loop; tiny products read strided operands in place; anything else is
/// packed first.
fn plain_matmul<T: Copy>(
    l: &[T], r: &[T], ll: &Layout<'_>, lr: &Layout<'_>, sz: Sizes, zero: T,
    fma: impl Fn(T, T, T) -> T,
) -> Result<Vec<T>> {
    if !(ll.is_packed() && lr.is_packed()) && sz.flops() <= TINY_FLOPS {
        if let (Some(ls), Some(rs)) = (ll.strides(), lr.strides()) {
            return strided_matmul(l, ls, r, rs, sz, zero, fma);
        }
    }
    let lc = ll.contiguous(l)?;
    let rc = lr.contiguous(r)?;
    loop_matmul(&lc, &rc, sz, zero, fma)
}

fn half_matmul<H: HalfElem>(
    ctx: &ExecCtx, l: &[H], r: &[H], ll: &Layout<'_>, lr: &Layout<'_>, sz: Sizes,
) -> Result<Vec<H>> {
    let out_len = sz.b.saturating_mul(sz.m).saturating_mul(sz.n);
    let widened = l.len().saturating_add(r.len()).saturating_add(out_len);
    crate::array::budget::probe_scratch("dot_general", widened.saturating_mul(4))?;
    Ok(H::narrow(&float_matmul(
        ctx,
        &H::widen(l),
        &H::widen(r),
        ll,
        lr,
        sz,
    )?))
}

fn float_matmul<T: DotRows + faer::traits::ComplexField + SmallMatmul + ffi::GemmElem + Element>(
    ctx: &ExecCtx, l: &[T], r: &[T], ll: &Layout<'_>, lr: &Layout<'_>, sz: Sizes,
) -> Result<Vec<T>> {
    let Sizes { b, m, k, n } = sz;
    let zero = <T as FloatElem>::ZERO;
    let fma = |acc: T, a: T, x: T| FloatElem::add(acc, FloatElem::mul(a, x));
    let flops = sz.flops();
    // The kernel is chosen by the sizes alone (packing first when needed),
    // so a transposed operand read in place gives the same bits as its
    // materialized transpose.
    if let Some(kind) = small_kernel(ll, lr, sz, ctx.is_portable()) {
        let (lc, rc) = (ll.contiguous(l)?, lr.contiguous(r)?);
        // Both small kernels write every element: a pooled buffer's stale
        // contents need no zeroing (a 1024x256 batched product spent a
        // third of its time in the fill).
        check_packed(&lc, &rc, sz)?;
        let mut out = crate::array::pool::take_overwritten("dot_general", zero, out_size(sz)?)?;
        run_small(ctx, kind, &mut out, &lc, &rc, sz);
        return Ok(out);
    }
    if flops <= SMALL_FLOPS || m == 0 || n == 0 || k == 0 || b == 0 {
        return plain_matmul(l, r, ll, lr, sz, zero, fma);
    }
    if ctx.is_portable() {
        // Our own k-ordered kernel instead of faer's (FMA, CPU-dependent
        // kernels and blocking): the bits of the register kernel on every
        // x86-64 CPU.
        return portable_matmul(ctx, &ll.contiguous(l)?, &lr.contiguous(r)?, sz);
    }
    if n == 1 || gemm_over_faer::<T>(flops) {
        // gemm's kernels, operands in place at any strides: matrix-vector
        // products (faer's were up to 1.5x slower on a 1024x256 matvec),
        // and on AVX-512 CPUs those `gemm_over_faer` names.
        let in_place = |lay: &Layout<'_>| lay.strides();
        return blocked_product(ctx, l, r, (ll, lr), sz, zero, in_place, ffi::gemm);
    }
    let in_place = |lay: &Layout<'_>| lay.strides().filter(|s| s.cs == 1 || s.rs == 1);
    blocked_product(ctx, l, r, (ll, lr), sz, zero, in_place, faer_product)
}

/// Whether a real product of `flops` multiply-adds runs on the `gemm`
/// crate's kernels rather than faer's: on AVX-512 CPUs, from
/// [`ffi::GemmElem::AVX512_GEMM_FLOPS`] of its element type. On an AVX2
/// machine (AMD EPYC) faer's were the faster ones at every size (1024^3 f32
/// 28 -> 18 ms and an MLP train step 6.1 -> 4.4 ms when products moved to
/// faer).
fn gemm_over_faer<T: ffi::GemmElem>(flops: usize) -> bool {
    super::vmath::detected_level() == super::vmath::SimdLevel::Avx512
        && flops >= T::AVX512_GEMM_FLOPS
}

/// A product kernel: `dst := lhs · rhs`, `dst` row-major contiguous
/// `m x n` (arguments `m, n, k, dst, lhs, rhs, threads`; `threads`: `None`
/// on the calling thread, `Some(n)` over `n` parts, 0 for the pool's size).
type ProductKernel<T> = fn(
    usize,
    usize,
    usize,
    &mut [T],
    ffi::View<'_, T>,
    ffi::View<'_, T>,
    Option<usize>,
) -> Result<()>;

/// The product batch by batch through `kernel`: an operand is read in place
/// when `in_place` gives its strides, else from a packed copy. In a run
/// that can be stopped (cancel token, deadline, poll hook) each product is
/// taken in row blocks of about `CHUNK_FLOPS` with a checkpoint between
/// them, so one large product does not delay a Ctrl-C. Requires nonempty
/// sizes.
#[allow(clippy::too_many_arguments)]
fn blocked_product<T: Element>(
    ctx: &ExecCtx, l: &[T], r: &[T], (ll, lr): (&Layout<'_>, &Layout<'_>), sz: Sizes, zero: T,
    in_place: impl Fn(&Layout<'_>) -> Option<Strides>, kernel: ProductKernel<T>,
) -> Result<Vec<T>> {
    let Sizes { b, m, k, n } = sz;
    let (lhs, lv): (Cow<'_, [T]>, Strides) = match in_place(ll) {
        Some(s) => (Cow::Borrowed(l), s),
        None => (ll.contiguous(l)?, ll.packed()),
    };
    let (rhs, rv): (Cow<'_, [T]>, Strides) = match in_place(lr) {
        Some(s) => (Cow::Borrowed(r), s),
        None => (lr.contiguous(r)?, lr.packed()),
    };
    let mn = m.checked_mul(n).ok_or_else(|| internal("m*n"))?;
    let total = b.checked_mul(mn).ok_or_else(|| internal("b*m*n"))?;
    // faer (`Accum::Replace`) and gemm (`read_dst = false`) write every
    // element: the output may come from the host pool (a 784x512 f32
    // gradient's memset was ~3% of an MLP train step).
    let mut out = crate::array::pool::take_overwritten("dot_general", zero, total)?;
    let threads = (sz.flops() >= PAR_FLOPS).then(|| ctx.fixed_partitions().unwrap_or(0));
    let nk = n.saturating_mul(k).max(1);
    let block = if ctx.is_interruptible() {
        CHUNK_FLOPS.checked_div(nk).unwrap_or(1).max(1)
    } else {
        m
    };
    for (i, dst) in out.chunks_exact_mut(mn).enumerate() {
        let lo = lv
            .bs
            .checked_mul(i)
            .ok_or_else(|| internal("batch offset"))?;
        let ro = rv
            .bs
            .checked_mul(i)
            .ok_or_else(|| internal("batch offset"))?;
        let rhs = ffi::View {
            data: rhs.get(ro..).ok_or_else(|| internal("rhs batch"))?,
            rs: rv.rs,
            cs: rv.cs,
        };
        for (j, rows) in dst.chunks_mut(block.saturating_mul(n)).enumerate() {
            if i > 0 || j > 0 {
                ctx.checkpoint()?;
            }
            let row0 = j.checked_mul(block).ok_or_else(|| internal("row block"))?;
            let at = row0
                .checked_mul(lv.rs)
                .and_then(|o| o.checked_add(lo))
                .ok_or_else(|| internal("row block offset"))?;
            kernel(
                rows.len()
                    .checked_div(n)
                    .ok_or_else(|| internal("row block"))?,
                n,
                k,
                rows,
                ffi::View {
                    data: lhs.get(at..).ok_or_else(|| internal("lhs batch"))?,
                    rs: lv.rs,
                    cs: lv.cs,
                },
                ffi::View { ..rhs },
                threads,
            )?;
        }
    }
    Ok(out)
}

/// Complex products through faer's matmul (its complex kernels run about
/// 10% faster than the `gemm` crate's and match NumPy's `cgemm`; its bits
/// do not depend on the partition count); small products, and every
/// product under `Determinism::Portable`, by the k-ordered loop with `fma`.
fn complex_matmul<T: faer::traits::ComplexField + Element>(
    ctx: &ExecCtx, l: &[T], r: &[T], ll: &Layout<'_>, lr: &Layout<'_>, sz: Sizes,
    fma: impl Fn(T, T, T) -> T,
) -> Result<Vec<T>> {
    let Sizes { b, m, k, n } = sz;
    let zero = T::zero_impl();
    let empty = m == 0 || n == 0 || k == 0 || b == 0;
    if empty || sz.flops() <= SMALL_FLOPS || ctx.is_portable() {
        return plain_matmul(l, r, ll, lr, sz, zero, fma);
    }
    // faer reads row- or column-major views in place (one unit stride).
    let in_place = |lay: &Layout<'_>| lay.strides().filter(|s| s.cs == 1 || s.rs == 1);
    blocked_product(ctx, l, r, (ll, lr), sz, zero, in_place, faer_product)
}

/// `dst := lhs · rhs` through faer (`threads` as [`ProductKernel`]); each
/// view has a unit row or column stride (checked).
fn faer_product<T: faer::traits::ComplexField + Copy + Send + Sync>(
    m: usize, n: usize, k: usize, dst: &mut [T], lhs: ffi::View<'_, T>, rhs: ffi::View<'_, T>,
    threads: Option<usize>,
) -> Result<()> {
    use faer::{Accum, MatMut, MatRef, Par};
    fn view<'a, T>(v: &ffi::View<'a, T>, rows: usize, cols: usize) -> Result<MatRef<'a, T>> {
        ffi::check(v, rows, cols).ok_or_else(|| internal("view"))?;
        if v.cs == 1 {
            Ok(MatRef::from_row_major_slice_with_stride(
                v.data, rows, cols, v.rs,
            ))
        } else if v.rs == 1 {
            Ok(MatRef::from_column_major_slice_with_stride(
                v.data, rows, cols, v.cs,
            ))
        } else {
            Err(internal("strides"))
        }
    }
    if m == 0 || n == 0 || k == 0 || m.checked_mul(n) != Some(dst.len()) {
        return Err(internal("dst"));
    }
    let (a, b) = (view(&lhs, m, k)?, view(&rhs, k, n)?);
    let one = T::one_impl();
    match threads {
        None => {
            let c = MatMut::from_row_major_slice_mut(dst, m, n);
            faer::linalg::matmul::matmul(c, Accum::Replace, a, b, one, Par::Seq);
        }
        Some(parts) => crate::exec::pool::install(|| {
            let parts = if parts == 0 {
                crate::exec::pool::current_num_threads()
            } else {
                parts
            };
            let c = MatMut::from_row_major_slice_mut(dst, m, n);
            faer::linalg::matmul::matmul(c, Accum::Replace, a, b, one, Par::rayon(parts));
        }),
    }
    Ok(())
}

/// Up to this many multiply-adds, products of few rows (at most 16) and
/// wide rows (at least 64 columns: whole vector blocks) take the
/// register-blocked kernel (no `gemm` set-up); every product of at most
/// [`SMALL_FLOPS`] does. Tall-thin products (a matrix times a vector)
/// stay with `gemm`, whose kernels vectorize along the rows.
const REGISTER_FLOPS: usize = 64 * 64 * 64;

/// The zeroed output of a product of packed operands of sizes `sz`, after
/// checking the operands' lengths.
fn packed_out<T: FloatElem>(l: &[T], r: &[T], sz: Sizes) -> Result<Vec<T>> {
    check_packed(l, r, sz)?;
    alloc::filled("dot_general", <T as FloatElem>::ZERO, out_size(sz)?)
}

/// Checks that packed operands have the lengths of sizes `sz`.
fn check_packed<T>(l: &[T], r: &[T], sz: Sizes) -> Result<()> {
    let Sizes { b, m, k, n } = sz;
    let size = |x: usize, y: usize| {
        b.checked_mul(x)
            .and_then(|v| v.checked_mul(y))
            .ok_or_else(|| internal("operand size"))
    };
    if l.len() != size(m, k)? || r.len() != size(k, n)? {
        return Err(internal("operand length"));
    }
    Ok(())
}

/// Elements of the product of sizes `sz` (`b * m * n`).
fn out_size(sz: Sizes) -> Result<usize> {
    sz.b.checked_mul(sz.m)
        .and_then(|v| v.checked_mul(sz.n))
        .ok_or_else(|| internal("operand size"))
}

/// `small_matmul` on packed operands (lengths checked here).
pub fn register_matmul<T: FloatElem + SmallMatmul>(l: &[T], r: &[T], sz: Sizes) -> Result<Vec<T>> {
    let Sizes { m, k, n, .. } = sz;
    let mut out = packed_out(l, r, sz)?;
    small_matmul::matmul_into(&mut out, l, r, m, k, n);
    Ok(out)
}

/// [`small_matmul::matmul_portable_into`] on packed operands (lengths
/// checked here), over threads from [`PAR_FLOPS`].
fn portable_matmul<T: FloatElem + SmallMatmul + Send + Sync>(
    ctx: &ExecCtx, l: &[T], r: &[T], sz: Sizes,
) -> Result<Vec<T>> {
    let Sizes { m, k, n, .. } = sz;
    let mut out = packed_out(l, r, sz)?;
    small_matmul::matmul_portable_into(ctx, &mut out, l, r, (m, k, n), sz.flops() >= PAR_FLOPS);
    Ok(out)
}

#[path = "dot_gemm.rs"]
mod ffi;
