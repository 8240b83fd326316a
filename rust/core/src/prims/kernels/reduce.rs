//! Reductions over a set of axes: `reduce_sum`, `reduce_max`.
//!
//! The input is viewed as groups of adjacent axes that are all reduced or
//! all kept. The innermost group is either reduced (each contiguous run
//! folds into one accumulator) or kept (each contiguous row combines
//! elementwise into a row of accumulators); an odometer walks the outer
//! groups. Both inner loops are slice loops that vectorize.

use super::common::{bad_dtype, simd, FloatElem, HalfElem, IntElem, SIMD_MIN};
use crate::array::{checked_size, Buffer, HostArray};
use crate::error::{Error, Result};
use crate::prims::ReduceOp;

fn internal(prim: &'static str) -> Error {
    Error::shape(prim, &[], "kernel index out of range")
}

/// One reduction: the accumulator start value, how a contiguous run folds
/// into an accumulator, and how a row combines into a row of accumulators.
trait Reducer<T: Copy> {
    fn init(&self) -> T;
    fn fold_run(&self, acc: T, run: &[T]) -> T;
    fn combine_row(&self, acc: &mut [T], row: &[T]);
}

/// Generic driver. `src` is row-major with `shape`; returns the kept axes'
/// values in row-major order.
fn reduce_with<T: Copy, R: Reducer<T>>(
    prim: &'static str,
    src: &[T],
    shape: &[usize],
    axes: &[usize],
    r: &R,
) -> Result<Vec<T>> {
    let out_n = shape
        .iter()
        .enumerate()
        .filter(|(i, _)| !axes.contains(i))
        .try_fold(1usize, |acc, (_, &d)| acc.checked_mul(d))
        .ok_or_else(|| internal(prim))?;
    let mut acc = vec![r.init(); out_n];
    if src.is_empty() || out_n == 0 {
        return Ok(acc);
    }
    // Groups of (size, reduced), size-1 axes dropped, neighbours merged.
    let mut groups: Vec<(usize, bool)> = Vec::with_capacity(shape.len());
    for (i, &d) in shape.iter().enumerate() {
        if d == 1 {
            continue;
        }
        let red = axes.contains(&i);
        match groups.last_mut() {
            Some((n, g)) if *g == red => *n = n.saturating_mul(d),
            _ => groups.push((d, red)),
        }
    }
    let Some((&(inner_n, inner_red), outer)) = groups.split_last() else {
        // A single element.
        return Ok(vec![r.fold_run(r.init(), src)]);
    };
    // Output stride of each outer group (0 for reduced groups), in units of
    // output elements; kept groups are row-major among the kept ones.
    let unit = if inner_red { 1 } else { inner_n };
    let mut ostrides = vec![0usize; outer.len()];
    let mut s = unit;
    for (os, &(n, red)) in ostrides.iter_mut().zip(outer).rev() {
        if !red {
            *os = s;
            s = s.checked_mul(n).ok_or_else(|| internal(prim))?;
        }
    }
    let walk = |acc: &mut [T]| walk_runs(prim, src, acc, inner_n, inner_red, outer, &ostrides, r);
    if src.len() < SIMD_MIN {
        walk(&mut acc)?;
    } else {
        simd(|| walk(&mut acc))?;
    }
    Ok(acc)
}

/// The odometer walk of [`reduce_with`] over contiguous runs of `inner_n`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn walk_runs<T: Copy, R: Reducer<T>>(
    prim: &'static str,
    src: &[T],
    acc: &mut [T],
    inner_n: usize,
    inner_red: bool,
    outer: &[(usize, bool)],
    ostrides: &[usize],
    r: &R,
) -> Result<()> {
    let mut counters = vec![0usize; outer.len()];
    let mut base = 0usize;
    for run in src.chunks_exact(inner_n) {
        if inner_red {
            let slot = acc.get_mut(base).ok_or_else(|| internal(prim))?;
            *slot = r.fold_run(*slot, run);
        } else {
            let end = base.checked_add(inner_n).ok_or_else(|| internal(prim))?;
            let row = acc.get_mut(base..end).ok_or_else(|| internal(prim))?;
            r.combine_row(row, run);
        }
        for ((c, &(n, _)), &os) in counters.iter_mut().zip(outer).zip(ostrides).rev() {
            *c = c.wrapping_add(1);
            base = base.wrapping_add(os);
            if *c < n {
                break;
            }
            *c = 0;
            base = base.wrapping_sub(os.wrapping_mul(n));
        }
    }
    Ok(())
}

/// Float sum: runs are summed in 8 interleaved lanes (vectorizes, and is
/// more accurate than one sequential accumulator), lanes then added pairwise.
struct FloatSum;
impl<T: FloatElem> Reducer<T> for FloatSum {
    fn init(&self) -> T {
        T::ZERO
    }
    #[inline]
    fn fold_run(&self, acc: T, run: &[T]) -> T {
        let mut lanes = [T::ZERO; 8];
        let chunks = run.chunks_exact(8);
        let rem = chunks.remainder();
        for c in chunks {
            for (l, &x) in lanes.iter_mut().zip(c) {
                *l = l.add(x);
            }
        }
        let [a, b, c, d, e, f, g, h] = lanes;
        let mut s = a.add(e).add(c.add(g)).add(b.add(f).add(d.add(h)));
        for &x in rem {
            s = s.add(x);
        }
        acc.add(s)
    }
    #[inline]
    fn combine_row(&self, acc: &mut [T], row: &[T]) {
        for (a, &x) in acc.iter_mut().zip(row) {
            *a = a.add(x);
        }
    }
}

struct FloatMax;
impl<T: FloatElem> Reducer<T> for FloatMax {
    fn init(&self) -> T {
        T::NEG_INFINITY
    }
    #[inline]
    fn fold_run(&self, acc: T, run: &[T]) -> T {
        // Eight independent lanes vectorize; max is exact, so the lane
        // split does not change the result.
        let mut lanes = [acc; 8];
        let chunks = run.chunks_exact(8);
        let rem = chunks.remainder();
        for c in chunks {
            for (l, &x) in lanes.iter_mut().zip(c) {
                *l = l.max_nan(x);
            }
        }
        let m = lanes.iter().fold(acc, |a, &x| a.max_nan(x));
        rem.iter().fold(m, |a, &x| a.max_nan(x))
    }
    #[inline]
    fn combine_row(&self, acc: &mut [T], row: &[T]) {
        for (a, &x) in acc.iter_mut().zip(row) {
            *a = a.max_nan(x);
        }
    }
}

struct IntSum;
impl<T: IntElem> Reducer<T> for IntSum {
    fn init(&self) -> T {
        T::ZERO
    }
    #[inline]
    fn fold_run(&self, acc: T, run: &[T]) -> T {
        run.iter().fold(acc, |a, &x| a.wadd(x))
    }
    #[inline]
    fn combine_row(&self, acc: &mut [T], row: &[T]) {
        for (a, &x) in acc.iter_mut().zip(row) {
            *a = a.wadd(x);
        }
    }
}

struct IntMax;
impl<T: IntElem> Reducer<T> for IntMax {
    fn init(&self) -> T {
        T::MIN
    }
    #[inline]
    fn fold_run(&self, acc: T, run: &[T]) -> T {
        run.iter().fold(acc, |a, &x| a.max(x))
    }
    #[inline]
    fn combine_row(&self, acc: &mut [T], row: &[T]) {
        for (a, &x) in acc.iter_mut().zip(row) {
            *a = (*a).max(x);
        }
    }
}

struct BoolMax;
impl Reducer<bool> for BoolMax {
    fn init(&self) -> bool {
        false
    }
    #[inline]
    fn fold_run(&self, acc: bool, run: &[bool]) -> bool {
        acc || run.iter().any(|&x| x)
    }
    #[inline]
    fn combine_row(&self, acc: &mut [bool], row: &[bool]) {
        for (a, &x) in acc.iter_mut().zip(row) {
            *a |= x;
        }
    }
}

fn float_reduce<T: FloatElem>(
    op: ReduceOp,
    v: &[T],
    shape: &[usize],
    axes: &[usize],
) -> Result<Vec<T>> {
    let name = op.name();
    match op {
        ReduceOp::Sum => reduce_with(name, v, shape, axes, &FloatSum),
        ReduceOp::Max => reduce_with(name, v, shape, axes, &FloatMax),
    }
}

/// f16/bf16 accumulate in f32 and round once at the end.
fn half_reduce<H: HalfElem>(
    op: ReduceOp,
    v: &[H],
    shape: &[usize],
    axes: &[usize],
) -> Result<Vec<H>> {
    Ok(H::narrow(&float_reduce(op, &H::widen(v), shape, axes)?))
}

fn int_reduce<T: IntElem>(
    op: ReduceOp,
    v: &[T],
    shape: &[usize],
    axes: &[usize],
) -> Result<Vec<T>> {
    let name = op.name();
    match op {
        ReduceOp::Sum => reduce_with(name, v, shape, axes, &IntSum),
        ReduceOp::Max => reduce_with(name, v, shape, axes, &IntMax),
    }
}

pub fn reduce(op: ReduceOp, x: &HostArray, axes: &[usize]) -> Result<Buffer> {
    let s = x.shape();
    // Nothing reduced: a copy.
    if axes.is_empty() {
        return Ok(x.buffer().clone());
    }
    checked_size(s)?;
    Ok(match x.buffer() {
        Buffer::F32(v) => Buffer::F32(float_reduce(op, v, s, axes)?),
        Buffer::F64(v) => Buffer::F64(float_reduce(op, v, s, axes)?),
        Buffer::F16(v) => Buffer::F16(half_reduce(op, v, s, axes)?),
        Buffer::BF16(v) => Buffer::BF16(half_reduce(op, v, s, axes)?),
        Buffer::I8(v) => Buffer::I8(int_reduce(op, v, s, axes)?),
        Buffer::I16(v) => Buffer::I16(int_reduce(op, v, s, axes)?),
        Buffer::I32(v) => Buffer::I32(int_reduce(op, v, s, axes)?),
        Buffer::I64(v) => Buffer::I64(int_reduce(op, v, s, axes)?),
        Buffer::U8(v) => Buffer::U8(int_reduce(op, v, s, axes)?),
        Buffer::U16(v) => Buffer::U16(int_reduce(op, v, s, axes)?),
        Buffer::U32(v) => Buffer::U32(int_reduce(op, v, s, axes)?),
        Buffer::U64(v) => Buffer::U64(int_reduce(op, v, s, axes)?),
        Buffer::Bool(v) if op == ReduceOp::Max => {
            Buffer::Bool(reduce_with(op.name(), v, s, axes, &BoolMax)?)
        }
        other => return Err(bad_dtype(op.name(), &[other.dtype()])),
    })
}
