//! Elementwise kernels: unary, binary, comparisons, `integer_pow`,
//! `select_n` and `convert_element_type`. Operands have equal lengths or
//! one of them is rank 0 (length 1); the shape rule has checked that.

use super::common::{
    bad_dtype, dtypes_of, for_each_dtype, for_each_element, map, typed, zip_map, BufElem, CastFrom,
    FloatElem, HalfElem, IntElem,
};
use crate::array::Buffer;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::exec::ExecCtx;
use crate::prims::{BinaryOp, CmpOp, RoundingMethod, UnaryOp};

use super::complex;
use super::math;
use super::vmath;
use std::borrow::Cow;

fn len_err(prim: &'static str) -> Error {
    Error::shape(prim, &[], "operand lengths disagree inside the kernel")
}

// ---------------------------------------------------------------- unary

pub fn unary(op: UnaryOp, x: &Buffer) -> Result<Buffer> {
    crate::array::budget::probe_scratch(
        op.name(),
        crate::array::budget::half_widening_bytes(&[x]),
    )?;
    let bad = || bad_dtype(op.name(), &[x.dtype()]);
    Ok(match x {
        Buffer::F32(v) => Buffer::F32(f32_unary(op, v).into()),
        Buffer::F64(v) => Buffer::F64(
            vector_unary(op, v, vmath::unary_f64)
                .unwrap_or_else(|| float_unary(op, v))
                .into(),
        ),
        Buffer::F16(v) => Buffer::F16(half_unary(op, v).into()),
        Buffer::BF16(v) => Buffer::BF16(half_unary(op, v).into()),
        Buffer::I8(v) => Buffer::I8(int_unary(op, v).ok_or_else(bad)?.into()),
        Buffer::I16(v) => Buffer::I16(int_unary(op, v).ok_or_else(bad)?.into()),
        Buffer::I32(v) => Buffer::I32(int_unary(op, v).ok_or_else(bad)?.into()),
        Buffer::I64(v) => Buffer::I64(int_unary(op, v).ok_or_else(bad)?.into()),
        Buffer::U8(v) => Buffer::U8(int_unary(op, v).ok_or_else(bad)?.into()),
        Buffer::U16(v) => Buffer::U16(int_unary(op, v).ok_or_else(bad)?.into()),
        Buffer::U32(v) => Buffer::U32(int_unary(op, v).ok_or_else(bad)?.into()),
        Buffer::U64(v) => Buffer::U64(int_unary(op, v).ok_or_else(bad)?.into()),
        Buffer::Bool(v) if op == UnaryOp::Not => Buffer::Bool(map(v, |b| !b).into()),
        Buffer::C64(_) | Buffer::C128(_) if op == UnaryOp::Abs => return complex::abs(x),
        Buffer::C64(_) | Buffer::C128(_) => return complex::unary(op, x),
        Buffer::Bool(_) | Buffer::Float0(_) | Buffer::Key(_) => return Err(bad()),
    })
}

/// `unary` of a large f32/f64 operand whose op has a `vmath` slice kernel:
/// the output comes from the host buffer pool (every element is written,
/// so no zeroing pass) and the slice is split over `ctx`'s partitions —
/// elementwise, so the bits do not depend on the split. `None` for every
/// other operand (the caller takes [`unary`]).
pub fn unary_large(ctx: &ExecCtx, op: UnaryOp, x: &Buffer) -> Result<Option<Buffer>> {
    if x.len() < crate::exec::pool::ELEMENTWISE_PAR_MIN || !vmath::supports(op) {
        return Ok(None);
    }
    Ok(match x {
        Buffer::F32(v) => Some(Buffer::F32(
            split_unary(ctx, op, v, vmath::unary_f32)?.into(),
        )),
        Buffer::F64(v) => Some(Buffer::F64(
            split_unary(ctx, op, v, vmath::unary_f64)?.into(),
        )),
        _ => None,
    })
}

/// `kernel(op, v, out)` into a pooled output, in the spans of the fused
/// groups ([`crate::exec::pool::elementwise_spans`]), each run in `ctx`
/// (its SIMD level).
fn split_unary<T: crate::array::Element + Default + Send + Sync>(
    ctx: &ExecCtx, op: UnaryOp, v: &[T], kernel: fn(UnaryOp, &[T], &mut [T]) -> bool,
) -> Result<Vec<T>> {
    use rayon::prelude::*;
    let mut out = crate::array::pool::take_overwritten(op.name(), T::default(), v.len())?;
    let (parts, span) = crate::exec::pool::elementwise_spans(ctx, v.len());
    let run = |(o, x): (&mut [T], &[T])| ctx.enter(|| kernel(op, x, o));
    let done = if parts > 1 {
        crate::exec::pool::install(|| {
            out.par_chunks_mut(span)
                .zip(v.par_chunks(span))
                .map(run)
                .reduce(|| true, |a, b| a && b)
        })
    } else {
        run((&mut out, v))
    };
    if done {
        Ok(out)
    } else {
        Err(Error::Unsupported(format!(
            "{}: no vector kernel",
            op.name()
        )))
    }
}

/// The `vmath` slice kernel for `op`, if it has one.
fn vector_unary<T: Copy + Default>(
    op: UnaryOp, v: &[T], kernel: fn(UnaryOp, &[T], &mut [T]) -> bool,
) -> Option<Vec<T>> {
    if !vmath::supports(op) {
        return None;
    }
    let mut out = vec![T::default(); v.len()];
    kernel(op, v, &mut out).then_some(out)
}

/// f32 (and widened f16/bf16) unary ops: `vmath` where it covers `op`.
fn f32_unary(op: UnaryOp, v: &[f32]) -> Vec<f32> {
    vector_unary(op, v, vmath::unary_f32).unwrap_or_else(|| float_unary(op, v))
}

/// A special function evaluated in f64 and rounded once.
#[inline(always)]
fn via_f64<T: FloatElem>(v: &[T], f: fn(f64) -> f64) -> Vec<T> {
    map(v, |x| T::from_f64(f(x.to_f64())))
}

fn float_unary<T: FloatElem>(op: UnaryOp, v: &[T]) -> Vec<T> {
    match op {
        UnaryOp::Neg => map(v, T::neg),
        UnaryOp::Exp => map(v, T::exp),
        UnaryOp::Log => map(v, T::ln),
        UnaryOp::Sin => map(v, T::sin),
        UnaryOp::Cos => map(v, T::cos),
        UnaryOp::Tanh => map(v, T::tanh),
        UnaryOp::Logistic => map(v, T::logistic),
        UnaryOp::Sqrt => map(v, T::sqrt),
        UnaryOp::Abs => map(v, T::abs),
        UnaryOp::Sign => map(v, T::sign),
        UnaryOp::Floor => map(v, T::floor),
        UnaryOp::Ceil => map(v, T::ceil),
        UnaryOp::Exp2 => map(v, T::exp2),
        UnaryOp::Log1p => map(v, T::ln_1p),
        UnaryOp::Expm1 => map(v, T::exp_m1),
        UnaryOp::Tan => map(v, T::tan),
        UnaryOp::Asin => map(v, T::asin),
        UnaryOp::Acos => map(v, T::acos),
        UnaryOp::Atan => map(v, T::atan),
        UnaryOp::Sinh => map(v, T::sinh),
        UnaryOp::Cosh => map(v, T::cosh),
        UnaryOp::Asinh => map(v, T::asinh),
        UnaryOp::Acosh => map(v, T::acosh),
        UnaryOp::Atanh => map(v, T::atanh),
        UnaryOp::Rsqrt => map(v, |x| T::ONE.div(x.sqrt())),
        UnaryOp::Cbrt => map(v, T::cbrt),
        UnaryOp::Erf => via_f64(v, math::erf),
        UnaryOp::ErfInv => via_f64(v, math::erf_inv),
        UnaryOp::Lgamma => via_f64(v, math::lgamma),
        UnaryOp::Digamma => via_f64(v, math::digamma),
        UnaryOp::Square => map(v, |x| x.mul(x)),
        // Integer-only ops never reach a float kernel (the shape rule
        // rejects them); the identity keeps the match total.
        UnaryOp::Not | UnaryOp::PopulationCount | UnaryOp::Clz => v.to_vec(),
    }
}

fn half_unary<H: HalfElem>(op: UnaryOp, v: &[H]) -> Vec<H> {
    H::narrow(&f32_unary(op, &H::widen(v)))
}

fn int_unary<T: IntElem>(op: UnaryOp, v: &[T]) -> Option<Vec<T>> {
    match op {
        UnaryOp::Neg => Some(map(v, T::wneg)),
        UnaryOp::Abs => Some(map(v, T::wabs)),
        UnaryOp::Sign => Some(map(v, T::sign)),
        UnaryOp::Square => Some(map(v, |x| x.wmul(x))),
        UnaryOp::Not => Some(map(v, T::bnot)),
        UnaryOp::PopulationCount => Some(map(v, T::popcnt)),
        UnaryOp::Clz => Some(map(v, T::clz)),
        _ => None,
    }
}

/// `is_finite`: float operands only.
pub fn is_finite(x: &Buffer) -> Result<Buffer> {
    Ok(Buffer::Bool(match x {
        Buffer::F32(v) => map(v, FloatElem::is_finite).into(),
        Buffer::F64(v) => map(v, FloatElem::is_finite).into(),
        Buffer::F16(v) => map(v, |h| h.is_finite()).into(),
        Buffer::BF16(v) => map(v, |h| h.is_finite()).into(),
        other => return Err(bad_dtype("is_finite", &[other.dtype()])),
    }))
}

/// `round` with JAX's rounding methods.
pub fn round(x: &Buffer, method: RoundingMethod) -> Result<Buffer> {
    crate::array::budget::probe_scratch("round", crate::array::budget::half_widening_bytes(&[x]))?;
    fn go<T: FloatElem>(v: &[T], method: RoundingMethod) -> Vec<T> {
        match method {
            RoundingMethod::AwayFromZero => map(v, T::round_away),
            RoundingMethod::ToNearestEven => map(v, T::round_even),
        }
    }
    fn half<H: HalfElem>(v: &[H], method: RoundingMethod) -> Vec<H> {
        H::narrow(&go(&H::widen(v), method))
    }
    Ok(match x {
        Buffer::F32(v) => Buffer::F32(go(v, method).into()),
        Buffer::F64(v) => Buffer::F64(go(v, method).into()),
        Buffer::F16(v) => Buffer::F16(half(v, method).into()),
        Buffer::BF16(v) => Buffer::BF16(half(v, method).into()),
        other => return Err(bad_dtype("round", &[other.dtype()])),
    })
}

/// `clamp(lo, x, hi) = min(max(x, lo), hi)`, NaN-propagating for floats (as
/// XLA); `lo`/`hi` have `x`'s length or length 1.
pub fn clamp(lo: &Buffer, x: &Buffer, hi: &Buffer) -> Result<Buffer> {
    crate::array::budget::probe_scratch(
        "clamp",
        crate::array::budget::half_widening_bytes(&[lo, x, hi]),
    )?;
    let name = "clamp";
    let bad = || bad_dtype(name, &dtypes_of(&[lo, x, hi]));
    fn go<T: Copy>(
        lo: &[T], x: &[T], hi: &[T], max: impl Fn(T, T) -> T, min: impl Fn(T, T) -> T,
    ) -> Option<Vec<T>> {
        let m = zip_map(x, lo, max)?;
        if m.len() != x.len() {
            return None;
        }
        zip_map(&m, hi, min)
    }
    /// Half floats clamp in f32.
    fn half<H: HalfElem>(lo: &[H], x: &[H], hi: &[H]) -> Result<Vec<H>> {
        let (lo, x, hi) = (H::widen(lo), H::widen(x), H::widen(hi));
        let r = go(&lo, &x, &hi, FloatElem::max_nan, FloatElem::min_nan);
        Ok(H::narrow(&r.ok_or_else(|| len_err("clamp"))?))
    }
    macro_rules! int_arm {
        ($var:ident, $l:ident, $x:ident, $h:ident) => {
            Buffer::$var(
                go($l, $x, $h, Ord::max, Ord::min)
                    .ok_or_else(|| len_err(name))?
                    .into(),
            )
        };
    }
    Ok(match (lo, x, hi) {
        (Buffer::C64(_), _, _) | (Buffer::C128(_), _, _) => return complex::clamp(lo, x, hi),
        (Buffer::F32(l), Buffer::F32(v), Buffer::F32(h)) => Buffer::F32(
            go(l, v, h, FloatElem::max_nan, FloatElem::min_nan)
                .ok_or_else(|| len_err(name))?
                .into(),
        ),
        (Buffer::F64(l), Buffer::F64(v), Buffer::F64(h)) => Buffer::F64(
            go(l, v, h, FloatElem::max_nan, FloatElem::min_nan)
                .ok_or_else(|| len_err(name))?
                .into(),
        ),
        (Buffer::F16(l), Buffer::F16(v), Buffer::F16(h)) => Buffer::F16(half(l, v, h)?.into()),
        (Buffer::BF16(l), Buffer::BF16(v), Buffer::BF16(h)) => Buffer::BF16(half(l, v, h)?.into()),
        (Buffer::I8(l), Buffer::I8(v), Buffer::I8(h)) => int_arm!(I8, l, v, h),
        (Buffer::I16(l), Buffer::I16(v), Buffer::I16(h)) => int_arm!(I16, l, v, h),
        (Buffer::I32(l), Buffer::I32(v), Buffer::I32(h)) => int_arm!(I32, l, v, h),
        (Buffer::I64(l), Buffer::I64(v), Buffer::I64(h)) => int_arm!(I64, l, v, h),
        (Buffer::U8(l), Buffer::U8(v), Buffer::U8(h)) => int_arm!(U8, l, v, h),
        (Buffer::U16(l), Buffer::U16(v), Buffer::U16(h)) => int_arm!(U16, l, v, h),
        (Buffer::U32(l), Buffer::U32(v), Buffer::U32(h)) => int_arm!(U32, l, v, h),
        (Buffer::U64(l), Buffer::U64(v), Buffer::U64(h)) => int_arm!(U64, l, v, h),
        _ => return Err(bad()),
    })
}

// --------------------------------------------------------------- binary

pub fn binary(op: BinaryOp, x: &Buffer, y: &Buffer) -> Result<Buffer> {
    crate::array::budget::probe_scratch(
        op.name(),
        crate::array::budget::half_widening_bytes(&[x, y]),
    )?;
    let name = op.name();
    let bad = || bad_dtype(name, &dtypes_of(&[x, y]));
    macro_rules! int_arm {
        ($var:ident, $a:ident, $b:ident) => {
            Buffer::$var(
                (int_binary(op, $a, $b)
                    .ok_or_else(bad)?
                    .ok_or_else(|| len_err(name))?)
                .into(),
            )
        };
    }
    macro_rules! float_arm {
        ($var:ident, $f:ident, $a:ident, $b:ident) => {
            Buffer::$var(
                ($f(op, $a, $b)
                    .ok_or_else(bad)?
                    .ok_or_else(|| len_err(name))?)
                .into(),
            )
        };
    }
    Ok(match (x, y) {
        (Buffer::F32(a), Buffer::F32(b)) if op == BinaryOp::Pow => Buffer::F32(
            vector_pow(a, b, vmath::pow_f32)
                .ok_or_else(|| len_err(name))?
                .into(),
        ),
        (Buffer::F64(a), Buffer::F64(b)) if op == BinaryOp::Pow => Buffer::F64(
            vector_pow(a, b, vmath::pow_f64)
                .ok_or_else(|| len_err(name))?
                .into(),
        ),
        (Buffer::F32(a), Buffer::F32(b)) => float_arm!(F32, float_binary, a, b),
        (Buffer::F64(a), Buffer::F64(b)) => float_arm!(F64, float_binary, a, b),
        (Buffer::F16(a), Buffer::F16(b)) => float_arm!(F16, half_binary, a, b),
        (Buffer::BF16(a), Buffer::BF16(b)) => float_arm!(BF16, half_binary, a, b),
        (Buffer::I8(a), Buffer::I8(b)) => int_arm!(I8, a, b),
        (Buffer::I16(a), Buffer::I16(b)) => int_arm!(I16, a, b),
        (Buffer::I32(a), Buffer::I32(b)) => int_arm!(I32, a, b),
        (Buffer::I64(a), Buffer::I64(b)) => int_arm!(I64, a, b),
        (Buffer::U8(a), Buffer::U8(b)) => int_arm!(U8, a, b),
        (Buffer::U16(a), Buffer::U16(b)) => int_arm!(U16, a, b),
        (Buffer::U32(a), Buffer::U32(b)) => int_arm!(U32, a, b),
        (Buffer::U64(a), Buffer::U64(b)) => int_arm!(U64, a, b),
        (Buffer::Bool(a), Buffer::Bool(b)) => {
            let out = match op {
                BinaryOp::Max | BinaryOp::Or => zip_map(a, b, |p, q| p | q),
                BinaryOp::Min | BinaryOp::And => zip_map(a, b, |p, q| p & q),
                BinaryOp::Xor => zip_map(a, b, |p, q| p ^ q),
                _ => return Err(bad()),
            };
            Buffer::Bool(out.ok_or_else(|| len_err(name))?.into())
        }
        (Buffer::C64(_), Buffer::C64(_)) | (Buffer::C128(_), Buffer::C128(_)) => {
            return complex::binary(op, x, y)
        }
        _ => return Err(bad()),
    })
}

/// `binary` of two `i32` (or two `i64`) operands written into `out` (the
/// output's buffer, stale contents allowed), each operand as long as `out`
/// or of one element, for the wrapping arithmetic and `max`/`min` — a loop
/// counter's step inside a compiled loop body. The per-element functions
/// are `binary`'s. `false`, leaving `out` untouched, for anything else.
pub fn int_binary_into(op: BinaryOp, x: &Buffer, y: &Buffer, out: &mut Buffer) -> bool {
    match (x, y, out) {
        (Buffer::I32(a), Buffer::I32(b), Buffer::I32(o)) => int_into(op, a, b, o),
        (Buffer::I64(a), Buffer::I64(b), Buffer::I64(o)) => int_into(op, a, b, o),
        _ => false,
    }
}

fn int_into<T: IntElem>(op: BinaryOp, a: &[T], b: &[T], out: &mut [T]) -> bool {
    let f: fn(T, T) -> T = match op {
        BinaryOp::Add => T::wadd,
        BinaryOp::Sub => T::wsub,
        BinaryOp::Mul => T::wmul,
        BinaryOp::Max => Ord::max,
        BinaryOp::Min => Ord::min,
        _ => return false,
    };
    let n = out.len();
    let fits = |v: &[T]| v.len() == n || v.len() == 1;
    if !fits(a) || !fits(b) {
        return false;
    }
    // Element `i` of an operand, the single one when it has one element.
    fn at<T: Copy>(v: &[T], i: usize) -> Option<T> {
        if v.len() == 1 {
            v.first().copied()
        } else {
            v.get(i).copied()
        }
    }
    for (i, o) in out.iter_mut().enumerate() {
        if let (Some(p), Some(q)) = (at(a, i), at(b, i)) {
            *o = f(p, q);
        }
    }
    true
}

/// `pow` through the `vmath` slice kernel; a one-element operand is
/// broadcast first. `None` when the lengths are incompatible.
fn vector_pow<T: Copy + Default>(
    a: &[T], b: &[T], kernel: fn(&[T], &[T], &mut [T]),
) -> Option<Vec<T>> {
    // As `zip_map`: a one-element operand takes the other's length (also 0).
    let n = if a.len() == 1 { b.len() } else { a.len() };
    let (a, b) = (broadcast(a, n)?, broadcast(b, n)?);
    let mut out = vec![T::default(); n];
    kernel(&a, &b, &mut out);
    Some(out)
}

/// `s` at length `n`: itself, or its one element repeated.
fn broadcast<T: Copy>(s: &[T], n: usize) -> Option<Cow<'_, [T]>> {
    match s {
        _ if s.len() == n => Some(Cow::Borrowed(s)),
        [v] => Some(Cow::Owned(vec![*v; n])),
        _ => None,
    }
}

/// Outer `None`: op not defined on floats; inner `None`: bad lengths.
fn float_binary<T: FloatElem>(op: BinaryOp, a: &[T], b: &[T]) -> Option<Option<Vec<T>>> {
    Some(match op {
        BinaryOp::Add => zip_map(a, b, T::add),
        BinaryOp::Sub => zip_map(a, b, T::sub),
        BinaryOp::Mul => zip_map(a, b, T::mul),
        BinaryOp::Div => zip_map(a, b, T::div),
        BinaryOp::Max => zip_map(a, b, T::max_nan),
        BinaryOp::Min => zip_map(a, b, T::min_nan),
        BinaryOp::Pow => zip_map(a, b, T::pow),
        BinaryOp::Rem => zip_map(a, b, T::fmod),
        BinaryOp::Atan2 => zip_map(a, b, T::atan2),
        BinaryOp::Nextafter => zip_map(a, b, T::next_toward),
        BinaryOp::Polygamma => zip_map(a, b, |m, x| {
            T::from_f64(math::polygamma(m.to_f64(), x.to_f64()))
        }),
        BinaryOp::And
        | BinaryOp::Or
        | BinaryOp::Xor
        | BinaryOp::ShiftLeft
        | BinaryOp::ShiftRightLogical
        | BinaryOp::ShiftRightArithmetic => return None,
    })
}

fn half_binary<H: HalfElem>(op: BinaryOp, a: &[H], b: &[H]) -> Option<Option<Vec<H>>> {
    if op == BinaryOp::Nextafter {
        // In the narrow type itself: its neighbours are not f32's.
        return Some(zip_map(a, b, half_next_toward));
    }
    let wide = float_binary(op, &H::widen(a), &H::widen(b))?;
    Some(wide.map(|v| H::narrow(&v)))
}

/// `nextafter` on the bits of a 16-bit float (sign-magnitude, as f16 and
/// bf16 both are).
fn half_next_toward<H: HalfElem>(x: H, y: H) -> H {
    let (xf, yf) = (H::to_f32(x), H::to_f32(y));
    if xf.is_nan() || yf.is_nan() {
        return H::from_f32(xf + yf);
    }
    if xf == yf {
        return y;
    }
    let bits = H::to_bits(x);
    let next = if xf == 0.0 {
        // The smallest subnormal, with the sign of the direction.
        if yf > 0.0 {
            1
        } else {
            0x8001
        }
    } else if (xf < yf) == (xf > 0.0) {
        bits.wrapping_add(1)
    } else {
        bits.wrapping_sub(1)
    };
    H::from_bits(next)
}

/// Outer `None`: op not defined on integers; inner `None`: bad lengths.
fn int_binary<T: IntElem>(op: BinaryOp, a: &[T], b: &[T]) -> Option<Option<Vec<T>>> {
    Some(match op {
        BinaryOp::Add => zip_map(a, b, T::wadd),
        BinaryOp::Sub => zip_map(a, b, T::wsub),
        BinaryOp::Mul => zip_map(a, b, T::wmul),
        BinaryOp::Div => zip_map(a, b, T::xdiv),
        BinaryOp::Max => zip_map(a, b, Ord::max),
        BinaryOp::Min => zip_map(a, b, Ord::min),
        BinaryOp::Rem => zip_map(a, b, T::xrem),
        BinaryOp::And => zip_map(a, b, T::band),
        BinaryOp::Or => zip_map(a, b, T::bor),
        BinaryOp::Xor => zip_map(a, b, T::bxor),
        BinaryOp::ShiftLeft => zip_map(a, b, T::shl),
        BinaryOp::ShiftRightLogical => zip_map(a, b, T::shr_logical),
        BinaryOp::ShiftRightArithmetic => zip_map(a, b, T::shr_arith),
        BinaryOp::Pow | BinaryOp::Atan2 | BinaryOp::Nextafter | BinaryOp::Polygamma => return None,
    })
}

// ---------------------------------------------------------- comparisons

/// `n_out` is the output length (needed for float0 operands, which store no
/// data).
pub fn compare(op: CmpOp, x: &Buffer, y: &Buffer, n_out: usize) -> Result<Buffer> {
    let name = op.name();
    let out = match (x, y) {
        (Buffer::Bool(a), Buffer::Bool(b)) => cmp(op, a, b),
        (Buffer::I8(a), Buffer::I8(b)) => cmp(op, a, b),
        (Buffer::I16(a), Buffer::I16(b)) => cmp(op, a, b),
        (Buffer::I32(a), Buffer::I32(b)) => cmp(op, a, b),
        (Buffer::I64(a), Buffer::I64(b)) => cmp(op, a, b),
        (Buffer::U8(a), Buffer::U8(b)) => cmp(op, a, b),
        (Buffer::U16(a), Buffer::U16(b)) => cmp(op, a, b),
        (Buffer::U32(a), Buffer::U32(b)) => cmp(op, a, b),
        (Buffer::U64(a), Buffer::U64(b)) => cmp(op, a, b),
        (Buffer::F16(a), Buffer::F16(b)) => cmp(op, a, b),
        (Buffer::BF16(a), Buffer::BF16(b)) => cmp(op, a, b),
        (Buffer::F32(a), Buffer::F32(b)) => cmp(op, a, b),
        (Buffer::F64(a), Buffer::F64(b)) => cmp(op, a, b),
        (Buffer::C64(_), Buffer::C64(_)) | (Buffer::C128(_), Buffer::C128(_)) => {
            return complex::compare(op, x, y)
        }
        // float0 values are all equal to each other.
        (Buffer::Float0(_), Buffer::Float0(_)) => {
            Some(vec![matches!(op, CmpOp::Eq | CmpOp::Le | CmpOp::Ge); n_out])
        }
        // Keys compare for (in)equality only; there is no key order.
        (Buffer::Key(a), Buffer::Key(b)) => match op {
            CmpOp::Eq => zip_map(&key_words(a), &key_words(b), |p, q| p == q),
            CmpOp::Ne => zip_map(&key_words(a), &key_words(b), |p, q| p != q),
            CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge => {
                return Err(Error::dtype(
                    name,
                    &[DType::Key, DType::Key],
                    "PRNG keys have no order; only eq and ne compare them",
                ))
            }
        },
        _ => return Err(bad_dtype(name, &dtypes_of(&[x, y]))),
    };
    Ok(Buffer::Bool(out.ok_or_else(|| len_err(name))?.into()))
}

fn cmp<T: PartialOrd + Copy>(op: CmpOp, a: &[T], b: &[T]) -> Option<Vec<bool>> {
    match op {
        CmpOp::Eq => zip_map(a, b, |p, q| p == q),
        CmpOp::Ne => zip_map(a, b, |p, q| p != q),
        CmpOp::Lt => zip_map(a, b, |p, q| p < q),
        CmpOp::Le => zip_map(a, b, |p, q| p <= q),
        CmpOp::Gt => zip_map(a, b, |p, q| p > q),
        CmpOp::Ge => zip_map(a, b, |p, q| p >= q),
    }
}

/// One u64 per key element (its two u32 words).
fn key_words(v: &[u32]) -> Vec<u64> {
    v.chunks_exact(2)
        .map(|c| match c {
            [lo, hi] => u64::from(*lo) | u64::from(*hi).wrapping_shl(32),
            _ => 0,
        })
        .collect()
}

// ---------------------------------------------------------- integer_pow

pub fn integer_pow(y: i32, x: &Buffer) -> Result<Buffer> {
    crate::array::budget::probe_scratch(
        "integer_pow",
        crate::array::budget::half_widening_bytes(&[x]),
    )?;
    let name = "integer_pow";
    let int_exp = || {
        u32::try_from(y).map_err(|_| {
            Error::param(
                name,
                "y",
                format!("negative exponent {y} requires a floating operand"),
            )
        })
    };
    Ok(match x {
        Buffer::F32(v) => Buffer::F32(float_ipow(v, y).into()),
        Buffer::F64(v) => Buffer::F64(float_ipow(v, y).into()),
        Buffer::F16(v) => Buffer::F16(f16_ipow(v, y).into()),
        Buffer::BF16(v) => Buffer::BF16(f16_ipow(v, y).into()),
        Buffer::I8(v) => Buffer::I8(int_ipow(v, int_exp()?).into()),
        Buffer::I16(v) => Buffer::I16(int_ipow(v, int_exp()?).into()),
        Buffer::I32(v) => Buffer::I32(int_ipow(v, int_exp()?).into()),
        Buffer::I64(v) => Buffer::I64(int_ipow(v, int_exp()?).into()),
        Buffer::U8(v) => Buffer::U8(int_ipow(v, int_exp()?).into()),
        Buffer::U16(v) => Buffer::U16(int_ipow(v, int_exp()?).into()),
        Buffer::U32(v) => Buffer::U32(int_ipow(v, int_exp()?).into()),
        Buffer::U64(v) => Buffer::U64(int_ipow(v, int_exp()?).into()),
        Buffer::C64(_) | Buffer::C128(_) => return complex::integer_pow(y, x),
        Buffer::Bool(_) | Buffer::Float0(_) | Buffer::Key(_) => {
            return Err(bad_dtype(name, &[x.dtype()]))
        }
    })
}

/// `x^|y|` by repeated squaring (JAX's expansion), then the reciprocal for
/// negative `y`.
#[inline(always)]
pub(super) fn powi_sq<T: FloatElem>(x: T, y: i32) -> T {
    let mut e = y.unsigned_abs();
    let mut base = x;
    let mut acc: Option<T> = None;
    while e > 0 {
        if e & 1 == 1 {
            acc = Some(acc.map_or(base, |a| a.mul(base)));
        }
        e >>= 1;
        if e > 0 {
            base = base.mul(base);
        }
    }
    let p = acc.unwrap_or(T::ONE);
    if y < 0 {
        T::ONE.div(p)
    } else {
        p
    }
}

fn float_ipow<T: FloatElem>(v: &[T], y: i32) -> Vec<T> {
    match y {
        0 => vec![T::ONE; v.len()],
        1 => v.to_vec(),
        2 => map(v, |x| x.mul(x)),
        3 => map(v, |x| x.mul(x.mul(x))),
        -1 => map(v, |x| T::ONE.div(x)),
        -2 => map(v, |x| T::ONE.div(x.mul(x))),
        _ => map(v, |x| powi_sq(x, y)),
    }
}

fn f16_ipow<H: HalfElem>(v: &[H], y: i32) -> Vec<H> {
    H::narrow(&float_ipow(&H::widen(v), y))
}

fn int_ipow<T: IntElem>(v: &[T], e: u32) -> Vec<T> {
    match e {
        0 => vec![T::ONE; v.len()],
        1 => v.to_vec(),
        2 => map(v, |x| x.wmul(x)),
        _ => map(v, |x| x.wpow(e)),
    }
}

// ------------------------------------------------------------- select_n

/// `select_n(pred, *cases)`. A bool predicate picks `cases[1]` where true;
/// an int32 predicate picks `cases[pred]`, with out-of-range values clamped
/// to `[0, n-1]` (XLA leaves them undefined; clamping makes the result
/// deterministic). A rank-0 predicate selects a whole case.
pub fn select_n(pred: &Buffer, cases: &[&Buffer], n_out: usize) -> Result<Buffer> {
    let name = "select_n";
    let Some(first) = cases.first() else {
        return Err(Error::arity(name, 2, 1));
    };
    let last = cases.len().saturating_sub(1);
    let pred_len = pred.len();
    // Rank-0 predicate against arrays (or everything rank 0): one case.
    if pred_len == 1 || pred_len != n_out {
        let idx = match pred {
            Buffer::Bool(v) => v.first().map(|&b| usize::from(b)),
            Buffer::I32(v) => v.first().map(|&i| clamp_index(i, last)),
            _ => None,
        }
        .ok_or_else(|| bad_dtype(name, &[pred.dtype()]))?;
        let chosen = cases.get(idx.min(last)).ok_or_else(|| len_err(name))?;
        return Ok((*chosen).clone());
    }
    let dtype = first.dtype();
    for_each_element!(dtype, T => {
        let typed_cases = cases
            .iter()
            .map(|c| typed::<T>(name, c))
            .collect::<Result<Vec<&[T]>>>()?;
        Ok(T::wrap(select_typed(name, pred, &typed_cases)?))
    }, DType::Float0 => Ok(Buffer::Float0(n_out)),
    DType::Key => {
        let typed_cases = cases
            .iter()
            .map(|c| match c {
                Buffer::Key(v) => Ok(key_words(v)),
                other => Err(bad_dtype(name, &[other.dtype()])),
            })
            .collect::<Result<Vec<Vec<u64>>>>()?;
        let refs: Vec<&[u64]> = typed_cases.iter().map(|v| v.as_slice()).collect();
        let words = select_typed(name, pred, &refs)?;
        Ok(Buffer::Key(
            words
                .iter()
                .flat_map(|&w| [w as u32, w.wrapping_shr(32) as u32])
                .collect(),
        ))
    })
}

#[inline(always)]
fn clamp_index(i: i32, last: usize) -> usize {
    usize::try_from(i).unwrap_or(0).min(last)
}

fn select_typed<T: Copy>(name: &'static str, pred: &Buffer, cases: &[&[T]]) -> Result<Vec<T>> {
    let (first, rest) = cases.split_first().ok_or_else(|| len_err(name))?;
    match (pred, rest) {
        (_, []) => Ok(first.to_vec()),
        (Buffer::Bool(p), [second]) => Ok(p
            .iter()
            .zip(first.iter().zip(second.iter()))
            .map(|(&c, (&a, &b))| if c { b } else { a })
            .collect()),
        (Buffer::I32(p), [second]) => Ok(p
            .iter()
            .zip(first.iter().zip(second.iter()))
            .map(|(&c, (&a, &b))| if c >= 1 { b } else { a })
            .collect()),
        (Buffer::I32(p), _) => {
            let last = i32::try_from(rest.len()).map_err(|_| len_err(name))?;
            let mut out = first.to_vec();
            for (k, case) in (1..=last).zip(rest) {
                for ((o, &c), &v) in out.iter_mut().zip(p).zip(case.iter()) {
                    if c.clamp(0, last) == k {
                        *o = v;
                    }
                }
            }
            Ok(out)
        }
        _ => Err(bad_dtype(name, &[pred.dtype()])),
    }
}

// ------------------------------------------------- convert_element_type

pub fn convert(x: &Buffer, new: DType) -> Result<Buffer> {
    if x.dtype() == new {
        return Ok(x.clone());
    }
    match x {
        Buffer::Bool(v) => convert_from(v, new),
        Buffer::I8(v) => convert_from(v, new),
        Buffer::I16(v) => convert_from(v, new),
        Buffer::I32(v) => convert_from(v, new),
        Buffer::I64(v) => convert_from(v, new),
        Buffer::U8(v) => convert_from(v, new),
        Buffer::U16(v) => convert_from(v, new),
        Buffer::U32(v) => convert_from(v, new),
        Buffer::U64(v) => convert_from(v, new),
        Buffer::F16(v) => convert_from(v, new),
        Buffer::BF16(v) => convert_from(v, new),
        Buffer::F32(v) => convert_from(v, new),
        Buffer::F64(v) => convert_from(v, new),
        Buffer::C64(_) | Buffer::C128(_) => complex::convert_from_complex(x, new),
        Buffer::Float0(_) | Buffer::Key(_) => Err(Error::dtype(
            "convert_element_type",
            &[x.dtype(), new],
            "cannot convert",
        )),
    }
}

fn convert_from<S: CastFrom>(v: &[S], new: DType) -> Result<Buffer> {
    for_each_dtype!(new, D => Ok(D::wrap(map(v, |s| s.cast::<D>()))),
        DType::C64 | DType::C128 => complex::convert_to_complex(v, new),
        DType::Float0 => Ok(Buffer::Float0(v.len())),
        DType::Key => Err(Error::dtype("convert_element_type", &[new], "cannot convert to a key")))
}
