//! Elementwise kernels: unary, binary, comparisons, `integer_pow`,
//! `select_n` and `convert_element_type`. Operands have equal lengths or
//! one of them is rank 0 (length 1); the shape rule has checked that.

use super::common::{
    bad_dtype, dtypes_of, for_each_dtype, map, typed, zip_map, BufElem, CastFrom, FloatElem,
    HalfElem, IntElem,
};
use crate::array::Buffer;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::prims::{BinaryOp, CmpOp, UnaryOp};

fn len_err(prim: &'static str) -> Error {
    Error::shape(prim, &[], "operand lengths disagree inside the kernel")
}

// ---------------------------------------------------------------- unary

pub fn unary(op: UnaryOp, x: &Buffer) -> Result<Buffer> {
    let bad = || bad_dtype(op.name(), &[x.dtype()]);
    Ok(match x {
        Buffer::F32(v) => Buffer::F32(float_unary(op, v)),
        Buffer::F64(v) => Buffer::F64(float_unary(op, v)),
        Buffer::F16(v) => Buffer::F16(half_unary(op, v)),
        Buffer::BF16(v) => Buffer::BF16(half_unary(op, v)),
        Buffer::I8(v) => Buffer::I8(int_unary(op, v).ok_or_else(bad)?),
        Buffer::I16(v) => Buffer::I16(int_unary(op, v).ok_or_else(bad)?),
        Buffer::I32(v) => Buffer::I32(int_unary(op, v).ok_or_else(bad)?),
        Buffer::I64(v) => Buffer::I64(int_unary(op, v).ok_or_else(bad)?),
        Buffer::U8(v) => Buffer::U8(int_unary(op, v).ok_or_else(bad)?),
        Buffer::U16(v) => Buffer::U16(int_unary(op, v).ok_or_else(bad)?),
        Buffer::U32(v) => Buffer::U32(int_unary(op, v).ok_or_else(bad)?),
        Buffer::U64(v) => Buffer::U64(int_unary(op, v).ok_or_else(bad)?),
        Buffer::Bool(_) | Buffer::Float0(_) | Buffer::Key(_) => return Err(bad()),
    })
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
    }
}

fn half_unary<H: HalfElem>(op: UnaryOp, v: &[H]) -> Vec<H> {
    H::narrow(&float_unary(op, &H::widen(v)))
}

fn int_unary<T: IntElem>(op: UnaryOp, v: &[T]) -> Option<Vec<T>> {
    match op {
        UnaryOp::Neg => Some(map(v, T::wneg)),
        UnaryOp::Abs => Some(map(v, T::wabs)),
        UnaryOp::Sign => Some(map(v, T::sign)),
        UnaryOp::Exp
        | UnaryOp::Log
        | UnaryOp::Sin
        | UnaryOp::Cos
        | UnaryOp::Tanh
        | UnaryOp::Logistic
        | UnaryOp::Sqrt => None,
    }
}

// --------------------------------------------------------------- binary

pub fn binary(op: BinaryOp, x: &Buffer, y: &Buffer) -> Result<Buffer> {
    let name = op.name();
    let bad = || bad_dtype(name, &dtypes_of(&[x, y]));
    macro_rules! int_arm {
        ($var:ident, $a:ident, $b:ident) => {
            Buffer::$var(
                int_binary(op, $a, $b)
                    .ok_or_else(bad)?
                    .ok_or_else(|| len_err(name))?,
            )
        };
    }
    Ok(match (x, y) {
        (Buffer::F32(a), Buffer::F32(b)) => {
            Buffer::F32(float_binary(op, a, b).ok_or_else(|| len_err(name))?)
        }
        (Buffer::F64(a), Buffer::F64(b)) => {
            Buffer::F64(float_binary(op, a, b).ok_or_else(|| len_err(name))?)
        }
        (Buffer::F16(a), Buffer::F16(b)) => {
            Buffer::F16(half_binary(op, a, b).ok_or_else(|| len_err(name))?)
        }
        (Buffer::BF16(a), Buffer::BF16(b)) => {
            Buffer::BF16(half_binary(op, a, b).ok_or_else(|| len_err(name))?)
        }
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
                BinaryOp::Max => zip_map(a, b, |p, q| p | q),
                BinaryOp::Min => zip_map(a, b, |p, q| p & q),
                BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Pow => {
                    return Err(bad())
                }
            };
            Buffer::Bool(out.ok_or_else(|| len_err(name))?)
        }
        _ => return Err(bad()),
    })
}

fn float_binary<T: FloatElem>(op: BinaryOp, a: &[T], b: &[T]) -> Option<Vec<T>> {
    match op {
        BinaryOp::Add => zip_map(a, b, T::add),
        BinaryOp::Sub => zip_map(a, b, T::sub),
        BinaryOp::Mul => zip_map(a, b, T::mul),
        BinaryOp::Div => zip_map(a, b, T::div),
        BinaryOp::Max => zip_map(a, b, T::max_nan),
        BinaryOp::Min => zip_map(a, b, T::min_nan),
        BinaryOp::Pow => zip_map(a, b, T::pow),
    }
}

fn half_binary<H: HalfElem>(op: BinaryOp, a: &[H], b: &[H]) -> Option<Vec<H>> {
    float_binary(op, &H::widen(a), &H::widen(b)).map(|v| H::narrow(&v))
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
        BinaryOp::Pow => return None,
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
    Ok(Buffer::Bool(out.ok_or_else(|| len_err(name))?))
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
        Buffer::F32(v) => Buffer::F32(float_ipow(v, y)),
        Buffer::F64(v) => Buffer::F64(float_ipow(v, y)),
        Buffer::F16(v) => Buffer::F16(f16_ipow(v, y)),
        Buffer::BF16(v) => Buffer::BF16(f16_ipow(v, y)),
        Buffer::I8(v) => Buffer::I8(int_ipow(v, int_exp()?)),
        Buffer::I16(v) => Buffer::I16(int_ipow(v, int_exp()?)),
        Buffer::I32(v) => Buffer::I32(int_ipow(v, int_exp()?)),
        Buffer::I64(v) => Buffer::I64(int_ipow(v, int_exp()?)),
        Buffer::U8(v) => Buffer::U8(int_ipow(v, int_exp()?)),
        Buffer::U16(v) => Buffer::U16(int_ipow(v, int_exp()?)),
        Buffer::U32(v) => Buffer::U32(int_ipow(v, int_exp()?)),
        Buffer::U64(v) => Buffer::U64(int_ipow(v, int_exp()?)),
        Buffer::Bool(_) | Buffer::Float0(_) | Buffer::Key(_) => {
            return Err(bad_dtype(name, &[x.dtype()]))
        }
    })
}

/// `x^|y|` by repeated squaring (JAX's expansion), then the reciprocal for
/// negative `y`.
#[inline(always)]
fn powi_sq<T: FloatElem>(x: T, y: i32) -> T {
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
        return Err(Error::Arity {
            prim: name,
            expected: 2,
            got: 1,
        });
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
    for_each_dtype!(dtype, T => {
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
        Buffer::Float0(_) | Buffer::Key(_) => Err(Error::dtype(
            "convert_element_type",
            &[x.dtype(), new],
            "cannot convert",
        )),
    }
}

fn convert_from<S: CastFrom>(v: &[S], new: DType) -> Result<Buffer> {
    for_each_dtype!(new, D => Ok(D::wrap(map(v, |s| s.cast::<D>()))),
        DType::Float0 => Ok(Buffer::Float0(v.len())),
        DType::Key => Err(Error::dtype("convert_element_type", &[new], "cannot convert to a key")))
}
