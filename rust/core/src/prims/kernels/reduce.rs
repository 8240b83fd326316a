//! Reductions over a set of axes: `reduce_sum`, `reduce_max`.
//!
//! The input is viewed as groups of adjacent axes that are all reduced or
//! all kept. The innermost group is either reduced (each contiguous run
//! folds into one accumulator) or kept (each contiguous row combines
//! elementwise into a row of accumulators); an odometer walks the outer
//! groups. Both inner loops are slice loops that vectorize.

use super::common::{bad_dtype, FloatElem, HalfElem, IntElem, SIMD_MIN};
use super::complex::{lex_max, lex_min};
use crate::array::{alloc, checked_size, Buffer, HostArray};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::prims::{ArgOp, CumOp, ReduceOp};

fn internal(prim: &'static str) -> Error {
    Error::shape(prim, &[], "kernel index out of range")
}

/// One reduction: the accumulator start value, how a contiguous run folds
/// into an accumulator, and how a row combines into a row of accumulators.
trait Reducer<T: Copy> {
    fn init(&self) -> T;

    /// Two values reduced to one.
    fn combine(&self, a: T, x: T) -> T;

    /// `acc` reduced with every value of `run`, in order.
    #[inline]
    fn fold_run(&self, acc: T, run: &[T]) -> T {
        run.iter().fold(acc, |a, &x| self.combine(a, x))
    }

    /// Each value of `acc` reduced with the matching value of `row`.
    #[inline]
    fn combine_row(&self, acc: &mut [T], row: &[T]) {
        for (a, &x) in acc.iter_mut().zip(row) {
            *a = self.combine(*a, x);
        }
    }
}

/// Generic driver. `src` is row-major with `shape`; returns the kept axes'
/// values in row-major order.
fn reduce_with<T: Copy, R: Reducer<T>>(
    prim: &'static str, src: &[T], shape: &[usize], axes: &[usize], r: &R,
) -> Result<Vec<T>> {
    let out_n = shape
        .iter()
        .enumerate()
        .filter(|(i, _)| !axes.contains(i))
        .try_fold(1usize, |acc, (_, &d)| acc.checked_mul(d))
        .ok_or_else(|| internal(prim))?;
    let mut acc = alloc::filled(prim, r.init(), out_n)?;
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
    if src.len() < SIMD_MIN {
        walk_runs(prim, src, &mut acc, inner_n, inner_red, outer, &ostrides, r)?;
    } else {
        super::vmath::run(Walk {
            prim,
            src,
            acc: &mut acc,
            inner_n,
            inner_red,
            outer,
            ostrides: &ostrides,
            r,
        })?;
    }
    Ok(acc)
}

/// [`walk_runs`] as a `pulp` operation: `with_simd` is instantiated inside
/// each target-feature context with the walk inlined (a closure handed to
/// `dispatch` may be compiled once, out of line, for the baseline ISA).
struct Walk<'a, T, R> {
    prim: &'static str,
    src: &'a [T],
    acc: &'a mut [T],
    inner_n: usize,
    inner_red: bool,
    outer: &'a [(usize, bool)],
    ostrides: &'a [usize],
    r: &'a R,
}

impl<T: Copy, R: Reducer<T>> pulp::WithSimd for Walk<'_, T, R> {
    type Output = Result<()>;
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) -> Result<()> {
        walk_runs(
            self.prim,
            self.src,
            self.acc,
            self.inner_n,
            self.inner_red,
            self.outer,
            self.ostrides,
            self.r,
        )
    }
}

/// The odometer walk of [`reduce_with`] over contiguous runs of `inner_n`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn walk_runs<T: Copy, R: Reducer<T>>(
    prim: &'static str, src: &[T], acc: &mut [T], inner_n: usize, inner_red: bool,
    outer: &[(usize, bool)], ostrides: &[usize], r: &R,
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
    fn combine(&self, a: T, x: T) -> T {
        a.add(x)
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
    fn combine(&self, a: T, x: T) -> T {
        a.max_nan(x)
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
    fn combine(&self, a: bool, x: bool) -> bool {
        a | x
    }
}

/// A reduction by a plain fold (sequential order, deterministic).
struct Fold<T, F> {
    init: T,
    f: F,
}
impl<T: Copy, F: Fn(T, T) -> T> Reducer<T> for Fold<T, F> {
    fn init(&self) -> T {
        self.init
    }
    #[inline]
    fn combine(&self, a: T, x: T) -> T {
        (self.f)(a, x)
    }
}

/// [`reduce_with`] by a plain [`Fold`] from `init` with `f`.
fn fold_with<T: Copy, F: Fn(T, T) -> T>(
    prim: &'static str, src: &[T], shape: &[usize], axes: &[usize], init: T, f: F,
) -> Result<Vec<T>> {
    reduce_with(prim, src, shape, axes, &Fold { init, f })
}

fn float_reduce<T: FloatElem>(
    op: ReduceOp, v: &[T], shape: &[usize], axes: &[usize],
) -> Result<Vec<T>> {
    let name = op.name();
    match op {
        ReduceOp::Sum => reduce_with(name, v, shape, axes, &FloatSum),
        ReduceOp::Max => reduce_with(name, v, shape, axes, &FloatMax),
        ReduceOp::Prod => fold_with(name, v, shape, axes, T::ONE, T::mul),
        ReduceOp::Min => fold_with(name, v, shape, axes, T::NEG_INFINITY.neg(), T::min_nan),
        ReduceOp::And | ReduceOp::Or | ReduceOp::Xor => Err(bad_dtype(name, &[])),
    }
}

/// f16/bf16 accumulate in f32 and round once at the end.
fn half_reduce<H: HalfElem>(
    op: ReduceOp, v: &[H], shape: &[usize], axes: &[usize],
) -> Result<Vec<H>> {
    crate::array::budget::probe_scratch(op.name(), v.len().saturating_mul(8))?;
    Ok(H::narrow(&float_reduce(op, &H::widen(v), shape, axes)?))
}

fn int_reduce<T: IntElem>(
    op: ReduceOp, v: &[T], shape: &[usize], axes: &[usize],
) -> Result<Vec<T>> {
    let name = op.name();
    match op {
        ReduceOp::Sum => fold_with(name, v, shape, axes, T::ZERO, T::wadd),
        ReduceOp::Max => fold_with(name, v, shape, axes, T::MIN, Ord::max),
        ReduceOp::Prod => fold_with(name, v, shape, axes, T::ONE, T::wmul),
        // MIN - 1 wraps to MAX for signed and unsigned types alike.
        ReduceOp::Min => fold_with(name, v, shape, axes, T::MIN.wsub(T::ONE), Ord::min),
        ReduceOp::And => fold_with(name, v, shape, axes, T::ZERO.bnot(), T::band),
        ReduceOp::Or => fold_with(name, v, shape, axes, T::ZERO, T::bor),
        ReduceOp::Xor => fold_with(name, v, shape, axes, T::ZERO, T::bxor),
    }
}

/// Complex `reduce_sum` / `reduce_prod` / `reduce_max` / `reduce_min`: a
/// sequential fold (deterministic). Max and min fold JAX's lexicographic
/// pick from `-inf` / `+inf` (zero imaginary part), which reproduces JAX's
/// NaN results on the CPU.
fn complex_reduce<T: num_traits::Float>(
    op: ReduceOp, v: &[num_complex::Complex<T>], shape: &[usize], axes: &[usize],
) -> Result<Vec<num_complex::Complex<T>>> {
    use num_complex::Complex;
    let name = op.name();
    let (zero, one) = (T::zero(), T::one());
    match op {
        ReduceOp::Sum => fold_with(name, v, shape, axes, Complex::new(zero, zero), |a, x| a + x),
        ReduceOp::Prod => fold_with(name, v, shape, axes, Complex::new(one, zero), |a, x| a * x),
        ReduceOp::Max => fold_with(
            name,
            v,
            shape,
            axes,
            Complex::new(T::neg_infinity(), zero),
            lex_max,
        ),
        ReduceOp::Min => fold_with(
            name,
            v,
            shape,
            axes,
            Complex::new(T::infinity(), zero),
            lex_min,
        ),
        _ => Err(bad_dtype(name, &[])),
    }
}

/// Complex `cumsum` / `cumprod` / `cummax` / `cummin`.
fn complex_scan<T: num_traits::Float>(
    op: CumOp, v: &[num_complex::Complex<T>], shape: &[usize], axis: usize, reverse: bool,
) -> Result<Vec<num_complex::Complex<T>>> {
    let name = op.name();
    match op {
        CumOp::Sum => scan_lines(name, v, shape, axis, reverse, |a, x| a + x),
        CumOp::Prod => scan_lines(name, v, shape, axis, reverse, |a, x| a * x),
        CumOp::Max => scan_lines(name, v, shape, axis, reverse, lex_max),
        CumOp::Min => scan_lines(name, v, shape, axis, reverse, lex_min),
        _ => Err(bad_dtype(name, &[])),
    }
}

pub fn reduce(op: ReduceOp, x: &HostArray, axes: &[usize]) -> Result<Buffer> {
    let s = x.shape();
    // Nothing reduced: a copy.
    if axes.is_empty() {
        return x.buffer().try_clone("reduce");
    }
    checked_size(s)?;
    Ok(match x.buffer() {
        Buffer::F32(v) => Buffer::F32(float_reduce(op, v, s, axes)?.into()),
        Buffer::F64(v) => Buffer::F64(float_reduce(op, v, s, axes)?.into()),
        Buffer::F16(v) => Buffer::F16(half_reduce(op, v, s, axes)?.into()),
        Buffer::BF16(v) => Buffer::BF16(half_reduce(op, v, s, axes)?.into()),
        Buffer::I8(v) => Buffer::I8(int_reduce(op, v, s, axes)?.into()),
        Buffer::I16(v) => Buffer::I16(int_reduce(op, v, s, axes)?.into()),
        Buffer::I32(v) => Buffer::I32(int_reduce(op, v, s, axes)?.into()),
        Buffer::I64(v) => Buffer::I64(int_reduce(op, v, s, axes)?.into()),
        Buffer::U8(v) => Buffer::U8(int_reduce(op, v, s, axes)?.into()),
        Buffer::U16(v) => Buffer::U16(int_reduce(op, v, s, axes)?.into()),
        Buffer::U32(v) => Buffer::U32(int_reduce(op, v, s, axes)?.into()),
        Buffer::U64(v) => Buffer::U64(int_reduce(op, v, s, axes)?.into()),
        Buffer::C64(v) => Buffer::C64(complex_reduce(op, v, s, axes)?.into()),
        Buffer::C128(v) => Buffer::C128(complex_reduce(op, v, s, axes)?.into()),
        Buffer::Bool(v) => Buffer::Bool(match op {
            ReduceOp::Max | ReduceOp::Or => reduce_with(op.name(), v, s, axes, &BoolMax)?.into(),
            ReduceOp::Min | ReduceOp::And => {
                fold_with(op.name(), v, s, axes, true, |a: bool, b: bool| a & b)?.into()
            }
            ReduceOp::Xor => {
                fold_with(op.name(), v, s, axes, false, |a: bool, b: bool| a ^ b)?.into()
            }
            ReduceOp::Sum | ReduceOp::Prod => return Err(bad_dtype(op.name(), &[DType::Bool])),
        }),
        other => return Err(bad_dtype(op.name(), &[other.dtype()])),
    })
}

// ------------------------------------------------------- along one axis

/// `(outer, n, inner)` of `shape` around `axis`.
fn split_axis(prim: &'static str, shape: &[usize], axis: usize) -> Result<(usize, usize, usize)> {
    let n = *shape.get(axis).ok_or_else(|| internal(prim))?;
    let outer = checked_size(shape.get(..axis).unwrap_or(&[]))?;
    let inner = checked_size(shape.get(axis.saturating_add(1)..).unwrap_or(&[]))?;
    Ok((outer, n, inner))
}

/// Inclusive scan of every line along `axis` with `f(acc, x)`.
fn scan_lines<T: Copy>(
    prim: &'static str, src: &[T], shape: &[usize], axis: usize, reverse: bool,
    f: impl Fn(T, T) -> T,
) -> Result<Vec<T>> {
    let (_, n, inner) = split_axis(prim, shape, axis)?;
    let mut out = alloc::to_vec(prim, src)?;
    let blk = n.checked_mul(inner).ok_or_else(|| internal(prim))?;
    if blk == 0 {
        return Ok(out);
    }
    for (ib, ob) in src.chunks_exact(blk).zip(out.chunks_exact_mut(blk)) {
        for i in 0..inner {
            let line_in = ib.iter().skip(i).step_by(inner);
            let line_out = ob.iter_mut().skip(i).step_by(inner);
            let mut acc: Option<T> = None;
            let mut step = |(o, &x): (&mut T, &T)| {
                let v = match acc {
                    None => x,
                    Some(a) => f(a, x),
                };
                *o = v;
                acc = Some(v);
            };
            if reverse {
                line_out.rev().zip(line_in.rev()).for_each(&mut step);
            } else {
                line_out.zip(line_in).for_each(&mut step);
            }
        }
    }
    Ok(out)
}

/// `log(exp(a) + exp(b))` without overflow; NaN propagates.
#[inline]
fn logaddexp<T: FloatElem>(a: T, b: T) -> T {
    let m = a.max_nan(b);
    if m.is_nan() || m == T::NEG_INFINITY {
        return m;
    }
    if m == T::NEG_INFINITY.neg() {
        return m;
    }
    let d = a.sub(b).abs().neg();
    m.add(d.exp().ln_1p())
}

fn float_scan<T: FloatElem>(
    op: CumOp, v: &[T], shape: &[usize], axis: usize, reverse: bool,
) -> Result<Vec<T>> {
    let name = op.name();
    match op {
        CumOp::Sum => scan_lines(name, v, shape, axis, reverse, T::add),
        CumOp::Prod => scan_lines(name, v, shape, axis, reverse, T::mul),
        CumOp::Max => scan_lines(name, v, shape, axis, reverse, T::max_nan),
        CumOp::Min => scan_lines(name, v, shape, axis, reverse, T::min_nan),
        CumOp::Logsumexp => scan_lines(name, v, shape, axis, reverse, logaddexp::<T>),
    }
}

fn int_scan<T: IntElem>(
    op: CumOp, v: &[T], shape: &[usize], axis: usize, reverse: bool,
) -> Result<Vec<T>> {
    let name = op.name();
    match op {
        CumOp::Sum => scan_lines(name, v, shape, axis, reverse, T::wadd),
        CumOp::Prod => scan_lines(name, v, shape, axis, reverse, T::wmul),
        CumOp::Max => scan_lines(name, v, shape, axis, reverse, Ord::max),
        CumOp::Min => scan_lines(name, v, shape, axis, reverse, Ord::min),
        CumOp::Logsumexp => Err(bad_dtype(name, &[])),
    }
}

/// `cumsum`, `cumprod`, `cummax`, `cummin`, `cumlogsumexp`. f16/bf16 scan
/// in f32 and round each output once.
pub fn cumulative(op: CumOp, x: &HostArray, axis: usize, reverse: bool) -> Result<Buffer> {
    let s = x.shape();
    let name = op.name();
    crate::array::budget::probe_scratch(
        name,
        crate::array::budget::half_widening_bytes(&[x.buffer()]),
    )?;
    Ok(match x.buffer() {
        Buffer::F32(v) => Buffer::F32(float_scan(op, v, s, axis, reverse)?.into()),
        Buffer::F64(v) => Buffer::F64(float_scan(op, v, s, axis, reverse)?.into()),
        Buffer::F16(v) => Buffer::F16(
            HalfElem::narrow(&float_scan(op, &HalfElem::widen(v), s, axis, reverse)?).into(),
        ),
        Buffer::BF16(v) => Buffer::BF16(
            HalfElem::narrow(&float_scan(op, &HalfElem::widen(v), s, axis, reverse)?).into(),
        ),
        Buffer::I8(v) => Buffer::I8(int_scan(op, v, s, axis, reverse)?.into()),
        Buffer::I16(v) => Buffer::I16(int_scan(op, v, s, axis, reverse)?.into()),
        Buffer::I32(v) => Buffer::I32(int_scan(op, v, s, axis, reverse)?.into()),
        Buffer::I64(v) => Buffer::I64(int_scan(op, v, s, axis, reverse)?.into()),
        Buffer::U8(v) => Buffer::U8(int_scan(op, v, s, axis, reverse)?.into()),
        Buffer::U16(v) => Buffer::U16(int_scan(op, v, s, axis, reverse)?.into()),
        Buffer::U32(v) => Buffer::U32(int_scan(op, v, s, axis, reverse)?.into()),
        Buffer::U64(v) => Buffer::U64(int_scan(op, v, s, axis, reverse)?.into()),
        Buffer::C64(v) => Buffer::C64(complex_scan(op, v, s, axis, reverse)?.into()),
        Buffer::C128(v) => Buffer::C128(complex_scan(op, v, s, axis, reverse)?.into()),
        Buffer::Bool(v) => Buffer::Bool(match op {
            CumOp::Max => scan_lines(name, v, s, axis, reverse, |a, b| a | b)?.into(),
            CumOp::Min => scan_lines(name, v, s, axis, reverse, |a, b| a & b)?.into(),
            _ => return Err(bad_dtype(name, &[DType::Bool])),
        }),
        other => return Err(bad_dtype(name, &[other.dtype()])),
    })
}

/// Index of the first extreme element of every line along `axis`; a NaN
/// counts as the extreme (the first NaN wins), as in JAX.
fn arg_lines<T: Copy + PartialOrd>(
    prim: &'static str, src: &[T], shape: &[usize], axis: usize, is_max: bool,
) -> Result<Vec<i64>> {
    let (outer, n, inner) = split_axis(prim, shape, axis)?;
    let out_n = outer.checked_mul(inner).ok_or_else(|| internal(prim))?;
    let mut out = alloc::filled(prim, 0i64, out_n)?;
    let blk = n.checked_mul(inner).ok_or_else(|| internal(prim))?;
    if blk == 0 || out_n == 0 {
        return Ok(out);
    }
    #[allow(clippy::eq_op)]
    let is_nan = |v: T| v != v;
    for (ib, ob) in src.chunks_exact(blk).zip(out.chunks_exact_mut(inner)) {
        for (i, o) in ob.iter_mut().enumerate() {
            let mut line = ib.iter().skip(i).step_by(inner).copied().enumerate();
            let Some((_, mut best)) = line.next() else {
                continue;
            };
            let mut best_i = 0usize;
            if !is_nan(best) {
                for (k, v) in line {
                    if is_nan(v) {
                        best_i = k;
                        break;
                    }
                    let better = if is_max { v > best } else { v < best };
                    if better {
                        best = v;
                        best_i = k;
                    }
                }
            }
            *o = i64::try_from(best_i).map_err(|_| internal(prim))?;
        }
    }
    Ok(out)
}

/// `argmax` / `argmin` along `axis`, as `index_dtype`.
pub fn arg(op: ArgOp, x: &HostArray, axis: usize, index_dtype: DType) -> Result<Buffer> {
    let s = x.shape();
    let name = op.name();
    let m = op == ArgOp::Argmax;
    crate::array::budget::probe_scratch(
        name,
        crate::array::budget::half_widening_bytes(&[x.buffer()]),
    )?;
    let idx = match x.buffer() {
        Buffer::F32(v) => arg_lines(name, v, s, axis, m)?,
        Buffer::F64(v) => arg_lines(name, v, s, axis, m)?,
        Buffer::F16(v) => arg_lines(name, &HalfElem::widen(v), s, axis, m)?,
        Buffer::BF16(v) => arg_lines(name, &HalfElem::widen(v), s, axis, m)?,
        Buffer::I8(v) => arg_lines(name, v, s, axis, m)?,
        Buffer::I16(v) => arg_lines(name, v, s, axis, m)?,
        Buffer::I32(v) => arg_lines(name, v, s, axis, m)?,
        Buffer::I64(v) => arg_lines(name, v, s, axis, m)?,
        Buffer::U8(v) => arg_lines(name, v, s, axis, m)?,
        Buffer::U16(v) => arg_lines(name, v, s, axis, m)?,
        Buffer::U32(v) => arg_lines(name, v, s, axis, m)?,
        Buffer::U64(v) => arg_lines(name, v, s, axis, m)?,
        Buffer::Bool(v) => arg_lines(name, v, s, axis, m)?,
        other => return Err(bad_dtype(name, &[other.dtype()])),
    };
    super::elementwise::convert(&Buffer::I64(idx.into()), index_dtype)
}
