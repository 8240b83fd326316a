//! Bit-level numeric primitives: `mulhi` (the high half of the double-width
//! integer product) and `reduce_precision` (rounding a float to a narrower
//! exponent and mantissa, kept in its own type).
//!
//! Shape: elementwise (`mulhi`: two integer operands of one dtype, rank-0
//! operands combine with arrays; `reduce_precision`: one float operand).
//! AD: `mulhi` has integer results (zero tangents, not linear);
//! `reduce_precision` is treated as linear, as JAX does: its tangent and
//! cotangent are rounded the same way. vmap: the shared elementwise rule.
//! Kernels are here: both are one pass over the elements.

use super::batch::elementwise_rule;
use super::family::{emit1, finish, operands, transpose_not_linear};
use super::family::{BatchOut, Family, JvpOut, Operand, TransposeOut};
use super::shape::{elementwise_shape, same_dtype_where};
use super::Primitive;
use crate::array::{Buffer, HostArray};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::exec::ExecCtx;
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval};

/// `(x * y) >> bits`: the high half of the full-width product of two integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Mulhi;

crate::declare_params! {
    /// Rounds to the nearest value with `exponent_bits` exponent bits and
    /// `mantissa_bits` mantissa bits (ties to even; out-of-range values go
    /// to infinity or signed zero), the result kept in the operand's type.
    pub struct ReducePrecision {
        exponent_bits: i32,
        mantissa_bits: i32,
    }
}

const MULHI: &str = "mulhi";
const REDUCE_PRECISION: &str = "reduce_precision";

// ----------------------------------------------------------------- mulhi

/// `f(x[i], y[i])`, a rank-0 side repeated.
fn zip_repeat<T: Copy>(x: &[T], y: &[T], f: impl Fn(T, T) -> T) -> Vec<T> {
    match (x, y) {
        ([a], ys) if ys.len() != 1 => ys.iter().map(|&b| f(*a, b)).collect(),
        (xs, [b]) => xs.iter().map(|&a| f(a, *b)).collect(),
        (xs, ys) => xs.iter().zip(ys).map(|(&a, &b)| f(a, b)).collect(),
    }
}

macro_rules! mulhi_via {
    ($x:expr, $y:expr, $t:ty, $wide:ty, $bits:expr) => {
        zip_repeat($x, $y, |a: $t, b: $t| {
            let p = <$wide>::from(a).wrapping_mul(<$wide>::from(b));
            // The high half always fits: truncating keeps exactly those bits.
            (p >> $bits) as $t
        })
    };
}

#[doc(hidden)]
pub fn mulhi_kernel(x: &Buffer, y: &Buffer) -> Result<Buffer> {
    Ok(match (x, y) {
        (Buffer::I8(a), Buffer::I8(b)) => Buffer::I8(mulhi_via!(a, b, i8, i16, 8).into()),
        (Buffer::I16(a), Buffer::I16(b)) => Buffer::I16(mulhi_via!(a, b, i16, i32, 16).into()),
        (Buffer::I32(a), Buffer::I32(b)) => Buffer::I32(mulhi_via!(a, b, i32, i64, 32).into()),
        (Buffer::I64(a), Buffer::I64(b)) => Buffer::I64(mulhi_via!(a, b, i64, i128, 64).into()),
        (Buffer::U8(a), Buffer::U8(b)) => Buffer::U8(mulhi_via!(a, b, u8, u16, 8).into()),
        (Buffer::U16(a), Buffer::U16(b)) => Buffer::U16(mulhi_via!(a, b, u16, u32, 16).into()),
        (Buffer::U32(a), Buffer::U32(b)) => Buffer::U32(mulhi_via!(a, b, u32, u64, 32).into()),
        (Buffer::U64(a), Buffer::U64(b)) => Buffer::U64(mulhi_via!(a, b, u64, u128, 64).into()),
        (a, b) => {
            return Err(Error::dtype(
                MULHI,
                &[a.dtype(), b.dtype()],
                "requires integer operands",
            ))
        }
    })
}

impl Family for Mulhi {
    crate::family_identity!(unit: MULHI);

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let [x, y] = operands::<_, 2>(MULHI, ins)?;
        same_dtype_where(MULHI, &[x, y], DType::is_int, "requires integer operands")?;
        let shape = elementwise_shape(MULHI, &[x, y])?;
        Ok(vec![Aval::weak(shape, x.dtype, x.weak_type && y.weak_type)])
    }

    fn kernel(
        &self, _ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        let [x, y] = operands::<_, 2>(MULHI, args)?;
        finish(MULHI, outs, mulhi_kernel(x.buffer(), y.buffer())?)
    }

    // Integer results: zero tangents.
    crate::zero_derivative_rules!(not_differentiable);

    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize) -> BatchOut {
        elementwise_rule(&Primitive::Mulhi(*self), b, ins, dims, n)
    }
}

// ------------------------------------------------------- reduce_precision

/// The layout of a binary floating-point type: exponent and mantissa widths.
#[derive(Clone, Copy)]
struct Layout {
    exponent: u32,
    mantissa: u32,
}

/// `bits` (a value of layout `src`, right-aligned in a u64) rounded to
/// `exponent_bits` / `mantissa_bits`, XLA's algorithm: round the mantissa
/// to nearest even by adding a bias and truncating, then send exponents
/// beyond the narrower range to infinity (overflow) or signed zero
/// (underflow, subnormals included). NaNs are returned unchanged.
fn reduce_bits(
    bits: u64, is_nan: bool, src: Layout, exponent_bits: u32, mantissa_bits: u32,
) -> u64 {
    if is_nan {
        return bits;
    }
    let mut x = bits;
    if mantissa_bits < src.mantissa {
        let shift = src.mantissa.wrapping_sub(mantissa_bits);
        let last_bit_mask = 1u64 << shift;
        let base_bias = (last_bit_mask >> 1).wrapping_sub(1);
        let last_bit = (x & last_bit_mask) >> shift;
        let truncation_mask = !last_bit_mask.wrapping_sub(1);
        x = x.wrapping_add(last_bit.wrapping_add(base_bias)) & truncation_mask;
    }
    if exponent_bits < src.exponent {
        // Widths here are at most 64 bits and `1 <= exponent_bits < src.exponent`,
        // so no shift below overflows and no subtraction wraps.
        let total = src.exponent.wrapping_add(src.mantissa).wrapping_add(1);
        let width_mask = if total >= 64 {
            u64::MAX
        } else {
            (1u64 << total).wrapping_sub(1)
        };
        x &= width_mask;
        let sign_mask = 1u64 << total.wrapping_sub(1);
        let exp_mask = (1u64 << src.exponent).wrapping_sub(1) << src.mantissa;
        let bias = (1u64 << src.exponent.wrapping_sub(1)).wrapping_sub(1);
        let reduced_bias = (1u64 << exponent_bits.wrapping_sub(1)).wrapping_sub(1);
        let max_exp = bias.wrapping_add(reduced_bias) << src.mantissa;
        let min_exp = bias.wrapping_sub(reduced_bias) << src.mantissa;
        let exp = x & exp_mask;
        let signed_zero = x & sign_mask;
        if exp > max_exp {
            x = signed_zero | exp_mask;
        } else if exp <= min_exp {
            x = signed_zero;
        }
    }
    x
}

#[doc(hidden)]
pub fn reduce_precision_kernel(
    x: &Buffer, exponent_bits: u32, mantissa_bits: u32,
) -> Result<Buffer> {
    let layout = |exponent, mantissa| Layout { exponent, mantissa };
    let (f32_layout, f64_layout) = (layout(8, 23), layout(11, 52));
    let (f16_layout, bf16_layout) = (layout(5, 10), layout(8, 7));
    let (e, m) = (exponent_bits, mantissa_bits);
    // Each element's bits widened to u64, reduced, and narrowed back.
    macro_rules! reduced {
        ($v:expr, $variant:ident, $float:ty, $bits:ty, $layout:expr) => {
            Buffer::$variant(
                $v.iter()
                    .map(|a| {
                        let r = reduce_bits(u64::from(a.to_bits()), a.is_nan(), $layout, e, m);
                        <$float>::from_bits(
                            <$bits>::try_from(r & u64::from(<$bits>::MAX)).unwrap_or(0),
                        )
                    })
                    .collect::<Vec<_>>()
                    .into(),
            )
        };
    }
    Ok(match x {
        Buffer::F32(v) => reduced!(v, F32, f32, u32, f32_layout),
        Buffer::F64(v) => Buffer::F64(
            v.iter()
                .map(|a| f64::from_bits(reduce_bits(a.to_bits(), a.is_nan(), f64_layout, e, m)))
                .collect::<Vec<_>>()
                .into(),
        ),
        Buffer::F16(v) => reduced!(v, F16, half::f16, u16, f16_layout),
        Buffer::BF16(v) => reduced!(v, BF16, half::bf16, u16, bf16_layout),
        other => {
            return Err(Error::dtype(
                REDUCE_PRECISION,
                &[other.dtype()],
                "requires a floating operand",
            ))
        }
    })
}

impl ReducePrecision {
    /// The widths as unsigned counts (checked by the shape rule).
    fn widths(&self) -> Result<(u32, u32)> {
        let e = u32::try_from(self.exponent_bits)
            .ok()
            .filter(|&e| e >= 1)
            .ok_or_else(|| {
                Error::param(
                    REDUCE_PRECISION,
                    "exponent_bits",
                    format!("exponent_bits must be positive; got {}", self.exponent_bits),
                )
            })?;
        let m = u32::try_from(self.mantissa_bits).map_err(|_| {
            Error::param(
                REDUCE_PRECISION,
                "mantissa_bits",
                format!(
                    "mantissa_bits must be non-negative; got {}",
                    self.mantissa_bits
                ),
            )
        })?;
        Ok((e, m))
    }
}

impl Family for ReducePrecision {
    crate::family_identity!(
        REDUCE_PRECISION,
        example = ReducePrecision {
            exponent_bits: 5,
            mantissa_bits: 10
        }
    );

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let [x] = operands::<_, 1>(REDUCE_PRECISION, ins)?;
        self.widths()?;
        if !x.dtype.is_float() {
            return Err(Error::dtype(
                REDUCE_PRECISION,
                &[x.dtype],
                "requires a floating operand",
            ));
        }
        Ok(vec![x.clone()])
    }

    fn kernel(
        &self, _ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        let [x] = operands::<_, 1>(REDUCE_PRECISION, args)?;
        let (e, m) = self.widths()?;
        finish(
            REDUCE_PRECISION,
            outs,
            reduce_precision_kernel(x.buffer(), e, m)?,
        )
    }

    /// The tangent is rounded as the primal (JAX treats the op as linear).
    fn jvp(&self, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
        let [t] = operands::<_, 1>(REDUCE_PRECISION, ts)?;
        let z = emit1(b, self.clone(), xs.to_vec())?;
        let tz = match t {
            Some(t) => Some(emit1(b, self.clone(), vec![t.clone()])?),
            None => None,
        };
        Ok((vec![z], vec![tz]))
    }

    fn transpose(&self, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TransposeOut {
        let [op] = operands::<_, 1>(REDUCE_PRECISION, ops)?;
        if !op.is_linear() {
            return transpose_not_linear(REDUCE_PRECISION);
        }
        let [ct] = operands::<_, 1>(REDUCE_PRECISION, cts)?;
        match ct {
            Some(ct) => Ok(vec![Some(emit1(b, self.clone(), vec![ct.clone()])?)]),
            None => Ok(vec![None]),
        }
    }

    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize) -> BatchOut {
        elementwise_rule(&Primitive::ReducePrecision(self.clone()), b, ins, dims, n)
    }
}
