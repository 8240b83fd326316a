//! The elementwise families whose ops come from op tables: `UnaryOp`
//! (`neg`, `exp`, `sin`, ...), `BinaryOp` (`add`, `mul`, `pow`, ...) and
//! `CmpOp` (`eq`, `lt`, ...). Shape: operands of one dtype (per the op's
//! [`DTypeClass`](super::DTypeClass)), rank-0 operands broadcast. Kernels
//! are in `kernels/elementwise.rs` (SIMD loops in `kernels/vmath.rs`). AD as
//! JAX's `lax.py`: each op's derivative written with other primitives; `neg`,
//! `add`, `sub` and `mul`/`div` by a known operand are linear. vmap: the
//! shared elementwise batching rule (`super::batch::elementwise_rule`).

use super::batch::elementwise_rule;
use super::family::{operands, transpose_not_linear};
use super::family::{BatchOut, Family, JvpOut, Operand, TransposeOut};
use super::jvp::{add_opt, broadcast_to, convert, mul};
use super::kernel::elementwise as kernels;
use super::shape::{arity, check_binary_dtype, check_unary_dtype, elementwise_shape, same_dtype};
use super::transpose::{not_linear_error, single_ct, unbroadcast};
use super::{BinaryOp, CmpOp, Primitive, UnaryOp};
use crate::array::HostArray;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::exec::ExecCtx;
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval};
use crate::prims::{IntegerPow, SelectN};

fn two_ops<'a>(name: &'static str, ops: &'a [Operand]) -> Result<(&'a Operand, &'a Operand)> {
    let [x, y] = operands::<_, 2>(name, ops)?;
    Ok((x, y))
}

/// `add`/`sub`: each linear operand gets the cotangent (negated for the
/// subtrahend), summed back to its shape when it was broadcast.
fn transpose_add_sub(
    name: &'static str, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand], negate_rhs: bool,
) -> TransposeOut {
    let Some(ct) = single_ct(name, cts)? else {
        return Ok(vec![None; ops.len()]);
    };
    let (x, y) = two_ops(name, ops)?;
    let cx = match x {
        Operand::Linear(a) => Some(unbroadcast(b, ct.clone(), a)?),
        Operand::Known(_) => None,
    };
    let cy = match y {
        Operand::Linear(a) => {
            let c = if negate_rhs {
                b.unary(UnaryOp::Neg, ct)?
            } else {
                ct
            };
            Some(unbroadcast(b, c, a)?)
        }
        Operand::Known(_) => None,
    };
    Ok(vec![cx, cy])
}

/// JAX's balanced equality weight for max/min: 1 where `x` alone attains the
/// result `z`, 1/2 where `x` and `y` tie, 0 elsewhere.
fn balanced_eq(b: &mut Builder, x: &Atom, z: &Atom, y: &Atom) -> Result<Atom> {
    let dtype = b.aval(z)?.dtype;
    let ex = b.add_eqn1(Primitive::Compare(CmpOp::Eq), vec![x.clone(), z.clone()])?;
    let ex = convert(b, ex, dtype)?;
    let ey = b.add_eqn1(Primitive::Compare(CmpOp::Eq), vec![y.clone(), z.clone()])?;
    let ey = convert(b, ey, dtype)?;
    let half_ey = mul(b, ey, Builder::lit(dtype, 0.5))?;
    let w = b.binary(BinaryOp::Sub, Builder::lit(dtype, 1.0), half_ey)?;
    mul(b, ex, w)
}

impl Family for UnaryOp {
    crate::family_identity!(table: UnaryOp);

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let [x] = arity::<1>(self.name(), ins)?;
        check_unary_dtype(*self, x)?;
        let mut out = x.clone();
        out.dtype = self.out_dtype(x.dtype);
        Ok(vec![out])
    }

    crate::kernel_through_one!();

    fn kernel_one(&self, ctx: &ExecCtx, args: &[&HostArray], out: Aval) -> Result<HostArray> {
        let [x] = operands::<_, 1>(self.name(), args)?;
        if let Some(buf) = kernels::unary_large(ctx, *self, x.buffer())? {
            return HostArray::new(out.shape, buf);
        }
        HostArray::new(out.shape, kernels::unary(*self, x.buffer())?)
    }

    /// The bitwise ops have integer or bool results.
    fn differentiable(&self) -> bool {
        !matches!(self, UnaryOp::Not | UnaryOp::PopulationCount | UnaryOp::Clz)
    }

    fn jvp(&self, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
        let op = *self;
        let [x] = operands::<_, 1>(op.name(), xs)?.clone();
        let [t] = operands::<_, 1>(op.name(), ts)?.clone();
        let y = b.add_eqn1(Primitive::Unary(op), xs.to_vec())?;
        let Some(t) = t else {
            return Ok((vec![y], vec![None]));
        };
        let dtype = b.aval(&x)?.dtype;
        if !dtype.is_inexact() {
            return Ok((vec![y], vec![None]));
        }
        let tout = unary_tangent(b, op, x, &y, t, dtype)?;
        Ok((vec![y], vec![tout]))
    }

    fn transpose(&self, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TransposeOut {
        let name = self.name();
        if *self != UnaryOp::Neg {
            return transpose_not_linear(name);
        }
        let Some(ct) = single_ct(name, cts)? else {
            return Ok(vec![None; ops.len()]);
        };
        Ok(vec![Some(b.unary(UnaryOp::Neg, ct)?)])
    }

    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize) -> BatchOut {
        elementwise_rule(&Primitive::Unary(*self), b, ins, dims, n)
    }
}

/// The tangent of unary `op` at `x` (output `y`) for input tangent `t`;
/// `None` where the derivative is zero. One helper per group of ops.
fn unary_tangent(
    b: &mut Builder, op: UnaryOp, x: Atom, y: &Atom, t: Atom, dtype: DType,
) -> Result<Option<Atom>> {
    match op {
        UnaryOp::Neg
        | UnaryOp::Exp
        | UnaryOp::Log
        | UnaryOp::Sin
        | UnaryOp::Cos
        | UnaryOp::Tanh
        | UnaryOp::Logistic
        | UnaryOp::Sqrt
        | UnaryOp::Abs
        | UnaryOp::Exp2
        | UnaryOp::Log1p
        | UnaryOp::Expm1
        | UnaryOp::Tan
        | UnaryOp::Square => elementary_tangent(b, op, x, y, t, dtype),
        UnaryOp::Asin
        | UnaryOp::Acos
        | UnaryOp::Atan
        | UnaryOp::Sinh
        | UnaryOp::Cosh
        | UnaryOp::Asinh
        | UnaryOp::Acosh
        | UnaryOp::Atanh => inverse_trig_hyperbolic_tangent(b, op, x, t, dtype),
        UnaryOp::Rsqrt
        | UnaryOp::Cbrt
        | UnaryOp::Erf
        | UnaryOp::ErfInv
        | UnaryOp::Lgamma
        | UnaryOp::Digamma => special_tangent(b, op, x, y, t, dtype),
        UnaryOp::Sign | UnaryOp::Floor | UnaryOp::Ceil => Ok(None),
        // Integer-only ops never have a float operand.
        UnaryOp::Not | UnaryOp::PopulationCount | UnaryOp::Clz => Ok(None),
    }
}

/// `unary_tangent` for exp/log, trigonometric and power ops.
fn elementary_tangent(
    b: &mut Builder, op: UnaryOp, x: Atom, y: &Atom, t: Atom, dtype: DType,
) -> Result<Option<Atom>> {
    let lit = |v: f64| Builder::lit(dtype, v);
    Ok(match op {
        UnaryOp::Neg => Some(b.unary(UnaryOp::Neg, t)?),
        UnaryOp::Exp => Some(mul(b, t, y.clone())?),
        UnaryOp::Log => Some(b.binary(BinaryOp::Div, t, x)?),
        UnaryOp::Sin => {
            let c = b.unary(UnaryOp::Cos, x)?;
            Some(mul(b, t, c)?)
        }
        UnaryOp::Cos => {
            let s = b.unary(UnaryOp::Sin, x)?;
            let ns = b.unary(UnaryOp::Neg, s)?;
            Some(mul(b, t, ns)?)
        }
        UnaryOp::Tanh => {
            // (1 + y)(1 - y) rather than 1 - y²: no cancellation where |y| ≈ 1.
            let op = b.binary(BinaryOp::Add, lit(1.0), y.clone())?;
            let om = b.binary(BinaryOp::Sub, lit(1.0), y.clone())?;
            let d = mul(b, op, om)?;
            Some(mul(b, t, d)?)
        }
        UnaryOp::Logistic => {
            let om = b.binary(BinaryOp::Sub, lit(1.0), y.clone())?;
            let d = mul(b, y.clone(), om)?;
            Some(mul(b, t, d)?)
        }
        UnaryOp::Sqrt => {
            let two_y = mul(b, y.clone(), lit(2.0))?;
            Some(b.binary(BinaryOp::Div, t, two_y)?)
        }
        UnaryOp::Abs if dtype.is_complex() => {
            Some(super::complex::abs_tangent(b, x, y.clone(), t, dtype)?)
        }
        UnaryOp::Abs => {
            // t where x >= 0 (so 1 at zero, as JAX), -t elsewhere (NaN included).
            let nonneg = b.add_eqn1(Primitive::Compare(CmpOp::Ge), vec![x, lit(0.0)])?;
            let nt = b.unary(UnaryOp::Neg, t.clone())?;
            Some(b.add_eqn1(Primitive::SelectN(SelectN), vec![nonneg, nt, t])?)
        }
        UnaryOp::Exp2 => {
            let d = mul(b, y.clone(), lit(std::f64::consts::LN_2))?;
            Some(mul(b, t, d)?)
        }
        UnaryOp::Log1p => {
            let d = b.binary(BinaryOp::Add, x, lit(1.0))?;
            Some(b.binary(BinaryOp::Div, t, d)?)
        }
        UnaryOp::Expm1 => {
            let d = b.binary(BinaryOp::Add, y.clone(), lit(1.0))?;
            Some(mul(b, t, d)?)
        }
        UnaryOp::Tan => {
            // 1 + tan(x)^2
            let y2 = b.unary(UnaryOp::Square, y.clone())?;
            let d = b.binary(BinaryOp::Add, y2, lit(1.0))?;
            Some(mul(b, t, d)?)
        }
        UnaryOp::Square => {
            let d = mul(b, x, lit(2.0))?;
            Some(mul(b, t, d)?)
        }
        // Ops of the other groups: dispatched by `unary_tangent`.
        _ => None,
    })
}

/// `unary_tangent` for inverse trigonometric and hyperbolic ops.
fn inverse_trig_hyperbolic_tangent(
    b: &mut Builder, op: UnaryOp, x: Atom, t: Atom, dtype: DType,
) -> Result<Option<Atom>> {
    let lit = |v: f64| Builder::lit(dtype, v);
    Ok(match op {
        UnaryOp::Asin | UnaryOp::Acos => {
            // ±1 / sqrt(1 - x^2)
            let x2 = b.unary(UnaryOp::Square, x)?;
            let om = b.binary(BinaryOp::Sub, lit(1.0), x2)?;
            let d = b.unary(UnaryOp::Rsqrt, om)?;
            let d = if op == UnaryOp::Acos {
                b.unary(UnaryOp::Neg, d)?
            } else {
                d
            };
            Some(mul(b, t, d)?)
        }
        UnaryOp::Atan => {
            let x2 = b.unary(UnaryOp::Square, x)?;
            let d = b.binary(BinaryOp::Add, x2, lit(1.0))?;
            Some(b.binary(BinaryOp::Div, t, d)?)
        }
        UnaryOp::Sinh => {
            let d = b.unary(UnaryOp::Cosh, x)?;
            Some(mul(b, t, d)?)
        }
        UnaryOp::Cosh => {
            let d = b.unary(UnaryOp::Sinh, x)?;
            Some(mul(b, t, d)?)
        }
        UnaryOp::Asinh => {
            let x2 = b.unary(UnaryOp::Square, x)?;
            let s = b.binary(BinaryOp::Add, x2, lit(1.0))?;
            let d = b.unary(UnaryOp::Rsqrt, s)?;
            Some(mul(b, t, d)?)
        }
        UnaryOp::Acosh => {
            // 1 / sqrt((x - 1)(x + 1))
            let xm = b.binary(BinaryOp::Sub, x.clone(), lit(1.0))?;
            let xp = b.binary(BinaryOp::Add, x, lit(1.0))?;
            let s = mul(b, xm, xp)?;
            let d = b.unary(UnaryOp::Rsqrt, s)?;
            Some(mul(b, t, d)?)
        }
        UnaryOp::Atanh => {
            let x2 = b.unary(UnaryOp::Square, x)?;
            let d = b.binary(BinaryOp::Sub, lit(1.0), x2)?;
            Some(b.binary(BinaryOp::Div, t, d)?)
        }
        // Ops of the other groups: dispatched by `unary_tangent`.
        _ => None,
    })
}

/// `unary_tangent` for `rsqrt`, `cbrt` and the special functions.
fn special_tangent(
    b: &mut Builder, op: UnaryOp, x: Atom, y: &Atom, t: Atom, dtype: DType,
) -> Result<Option<Atom>> {
    let lit = |v: f64| Builder::lit(dtype, v);
    Ok(match op {
        UnaryOp::Rsqrt => {
            // -y / (2x)
            let q = b.binary(BinaryOp::Div, y.clone(), x)?;
            let d = mul(b, q, lit(-0.5))?;
            Some(mul(b, t, d)?)
        }
        UnaryOp::Cbrt => {
            // y^-2 / 3
            let r = b.add_eqn1(Primitive::IntegerPow(IntegerPow { y: -2 }), vec![y.clone()])?;
            let d = mul(b, r, lit(1.0 / 3.0))?;
            Some(mul(b, t, d)?)
        }
        UnaryOp::Erf => {
            // 2/sqrt(pi) exp(-x^2)
            let x2 = b.unary(UnaryOp::Square, x)?;
            let n = b.unary(UnaryOp::Neg, x2)?;
            let e = b.unary(UnaryOp::Exp, n)?;
            let d = mul(b, e, lit(std::f64::consts::FRAC_2_SQRT_PI))?;
            Some(mul(b, t, d)?)
        }
        UnaryOp::ErfInv => {
            // sqrt(pi)/2 exp(y^2)
            let y2 = b.unary(UnaryOp::Square, y.clone())?;
            let e = b.unary(UnaryOp::Exp, y2)?;
            let d = mul(b, e, lit(std::f64::consts::PI.sqrt() / 2.0))?;
            Some(mul(b, t, d)?)
        }
        UnaryOp::Lgamma => {
            let d = b.unary(UnaryOp::Digamma, x)?;
            Some(mul(b, t, d)?)
        }
        UnaryOp::Digamma => {
            let d = b.binary(BinaryOp::Polygamma, lit(1.0), x)?;
            Some(mul(b, t, d)?)
        }
        // Ops of the other groups: dispatched by `unary_tangent`.
        _ => None,
    })
}

/// The two operands of an elementwise binary primitive, checked by
/// `check`, and their broadcast shape.
fn two_operand_shape<'a>(
    name: &'static str, ins: &'a [Aval], check: impl FnOnce(&Aval, &Aval) -> Result<()>,
) -> Result<([&'a Aval; 2], Vec<usize>)> {
    let [x, y] = arity::<2>(name, ins)?;
    check(x, y)?;
    Ok(([x, y], elementwise_shape(name, &[x, y])?))
}

impl Family for BinaryOp {
    crate::family_identity!(table: BinaryOp);

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let check = |x: &Aval, y: &Aval| check_binary_dtype(*self, x, y);
        let ([x, y], shape) = two_operand_shape(self.name(), ins, check)?;
        Ok(vec![Aval::weak(shape, x.dtype, x.weak_type && y.weak_type)])
    }

    crate::kernel_through_one!();

    fn kernel_one(&self, _ctx: &ExecCtx, args: &[&HostArray], out: Aval) -> Result<HostArray> {
        let [x, y] = operands::<_, 2>(self.name(), args)?;
        HostArray::new(out.shape, kernels::binary(*self, x.buffer(), y.buffer())?)
    }

    /// The bitwise ops and shifts have integer or bool results.
    fn differentiable(&self) -> bool {
        !matches!(
            self,
            BinaryOp::And
                | BinaryOp::Or
                | BinaryOp::Xor
                | BinaryOp::ShiftLeft
                | BinaryOp::ShiftRightLogical
                | BinaryOp::ShiftRightArithmetic
        )
    }

    fn jvp(&self, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
        let op = *self;
        let [x, y] = operands::<_, 2>(op.name(), xs)?.clone();
        let [tx, ty] = operands::<_, 2>(op.name(), ts)?.clone();
        let z = b.add_eqn1(Primitive::Binary(op), xs.to_vec())?;
        let zaval = b.aval(&z)?;
        if !zaval.dtype.is_inexact() {
            return Ok((vec![z], vec![None]));
        }
        let tout = binary_tangent(b, op, (&x, &y, &z), &zaval, tx, ty)?;
        // A tangent of a rank-0 operand alone keeps rank 0: broadcast it.
        let tout = match tout {
            Some(t) => Some(broadcast_to(b, t, &zaval.shape)?),
            None => None,
        };
        Ok((vec![z], vec![tout]))
    }

    fn transpose(&self, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TransposeOut {
        let name = self.name();
        match self {
            BinaryOp::Add => transpose_add_sub(name, b, cts, ops, false),
            BinaryOp::Sub => transpose_add_sub(name, b, cts, ops, true),
            BinaryOp::Mul | BinaryOp::Div => transpose_mul_div(*self, b, cts, ops),
            _ => transpose_not_linear(name),
        }
    }

    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize) -> BatchOut {
        elementwise_rule(&Primitive::Binary(*self), b, ins, dims, n)
    }
}

/// Transpose of `mul` (linear in either operand) and `div` (linear in the
/// numerator): the cotangent times (over) the known operand, summed to the
/// linear operand's shape.
fn transpose_mul_div(
    op: BinaryOp, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand],
) -> TransposeOut {
    let name = op.name();
    let Some(ct) = single_ct(name, cts)? else {
        return Ok(vec![None; ops.len()]);
    };
    match (two_ops(name, ops)?, op) {
        ((Operand::Linear(a), Operand::Known(y)), _) => {
            let c = b.binary(op, ct, y.clone())?;
            Ok(vec![Some(unbroadcast(b, c, a)?), None])
        }
        ((Operand::Known(x), Operand::Linear(a)), BinaryOp::Mul) => {
            let c = b.binary(BinaryOp::Mul, x.clone(), ct)?;
            Ok(vec![None, Some(unbroadcast(b, c, a)?)])
        }
        ((Operand::Linear(_), Operand::Linear(_)), BinaryOp::Mul) => {
            Err(not_linear_error("mul", " (both operands are linear)"))
        }
        ((_, Operand::Linear(_)), _) => Err(not_linear_error("div", " (the divisor is linear)")),
        ((Operand::Known(_), Operand::Known(_)), _) => Ok(vec![None, None]),
    }
}

/// The tangent of binary `op` at `(x, y)` (output `z` of aval `zaval`) for
/// operand tangents `tx`, `ty`; `None` where it is zero. One helper per
/// group of ops.
fn binary_tangent(
    b: &mut Builder, op: BinaryOp, (x, y, z): (&Atom, &Atom, &Atom), zaval: &Aval,
    tx: Option<Atom>, ty: Option<Atom>,
) -> Result<Option<Atom>> {
    let args = (x, y, z);
    match op {
        BinaryOp::Add
        | BinaryOp::Sub
        | BinaryOp::Mul
        | BinaryOp::Div
        | BinaryOp::Max
        | BinaryOp::Min => arithmetic_tangent(b, op, args, tx, ty),
        BinaryOp::Pow | BinaryOp::Rem => pow_rem_tangent(b, op, args, zaval, tx, ty),
        BinaryOp::Atan2 | BinaryOp::Polygamma => {
            atan2_polygamma_tangent(b, op, (x, y), zaval.dtype, tx, ty)
        }
        // As JAX: nextafter has no derivative rule.
        BinaryOp::Nextafter => Err(Error::Unsupported(
            "nextafter: differentiation is not supported".into(),
        )),
        // Integer-only ops.
        BinaryOp::And
        | BinaryOp::Or
        | BinaryOp::Xor
        | BinaryOp::ShiftLeft
        | BinaryOp::ShiftRightLogical
        | BinaryOp::ShiftRightArithmetic => Ok(None),
    }
}

/// `binary_tangent` for `add`, `sub`, `mul`, `div`, `max` and `min`.
fn arithmetic_tangent(
    b: &mut Builder, op: BinaryOp, (x, y, z): (&Atom, &Atom, &Atom), tx: Option<Atom>,
    ty: Option<Atom>,
) -> Result<Option<Atom>> {
    Ok(match op {
        BinaryOp::Add => add_opt(b, tx, ty)?,
        BinaryOp::Sub => match (tx, ty) {
            (Some(a), Some(c)) => Some(b.binary(BinaryOp::Sub, a, c)?),
            (a, None) => a,
            (None, Some(c)) => Some(b.unary(UnaryOp::Neg, c)?),
        },
        BinaryOp::Mul => {
            let l = tx.map(|t| mul(b, t, y.clone())).transpose()?;
            let r = ty.map(|t| mul(b, x.clone(), t)).transpose()?;
            add_opt(b, l, r)?
        }
        BinaryOp::Div => {
            let l = tx
                .map(|t| b.binary(BinaryOp::Div, t, y.clone()))
                .transpose()?;
            let r = match ty {
                Some(t) => {
                    let q = b.binary(BinaryOp::Div, z.clone(), y.clone())?;
                    let nq = b.unary(UnaryOp::Neg, q)?;
                    Some(mul(b, t, nq)?)
                }
                None => None,
            };
            add_opt(b, l, r)?
        }
        BinaryOp::Max | BinaryOp::Min => {
            let l = match tx {
                Some(t) => {
                    let w = balanced_eq(b, x, z, y)?;
                    Some(mul(b, t, w)?)
                }
                None => None,
            };
            let r = match ty {
                Some(t) => {
                    let w = balanced_eq(b, y, z, x)?;
                    Some(mul(b, t, w)?)
                }
                None => None,
            };
            add_opt(b, l, r)?
        }
        // Ops of the other groups: dispatched by `binary_tangent`.
        _ => None,
    })
}

/// `binary_tangent` for `pow` and `rem`.
fn pow_rem_tangent(
    b: &mut Builder, op: BinaryOp, (x, y, z): (&Atom, &Atom, &Atom), zaval: &Aval,
    tx: Option<Atom>, ty: Option<Atom>,
) -> Result<Option<Atom>> {
    let dtype = zaval.dtype;
    Ok(match op {
        BinaryOp::Pow => {
            let l = match tx {
                Some(t) => {
                    // d/dx x^y = y x^(y-1); JAX takes it as written for a float
                    // exponent (so NaN at x = y = 0) and 0 where an integer y == 0.
                    let ym1 = b.binary(BinaryOp::Sub, y.clone(), Builder::lit(dtype, 1.0))?;
                    let pw = b.binary(BinaryOp::Pow, x.clone(), ym1)?;
                    let jac = mul(b, y.clone(), pw)?;
                    let jac = if b.aval(y)?.dtype.is_float() {
                        jac
                    } else {
                        let zeros = b.zeros(zaval)?;
                        let y0 = b.add_eqn1(
                            Primitive::Compare(CmpOp::Eq),
                            vec![y.clone(), Builder::lit(dtype, 0.0)],
                        )?;
                        b.add_eqn1(Primitive::SelectN(SelectN), vec![y0, jac, zeros])?
                    };
                    Some(mul(b, t, jac)?)
                }
                None => None,
            };
            let r = match ty {
                Some(t) => {
                    // d/dy x^y = log(x) x^y, with log(0) replaced by log(1).
                    let xaval = b.aval(x)?;
                    let ones = b.full(&xaval, 1.0)?;
                    let x0 = b.add_eqn1(
                        Primitive::Compare(CmpOp::Eq),
                        vec![x.clone(), Builder::lit(dtype, 0.0)],
                    )?;
                    let safe =
                        b.add_eqn1(Primitive::SelectN(SelectN), vec![x0, x.clone(), ones])?;
                    let lg = b.unary(UnaryOp::Log, safe)?;
                    let jac = mul(b, lg, z.clone())?;
                    Some(mul(b, t, jac)?)
                }
                None => None,
            };
            add_opt(b, l, r)?
        }
        BinaryOp::Rem => {
            // d/dx = 1, d/dy = -trunc(x / y)
            let r = match ty {
                Some(t) => {
                    let q = b.binary(BinaryOp::Div, x.clone(), y.clone())?;
                    let a = b.unary(UnaryOp::Abs, q.clone())?;
                    let f = b.unary(UnaryOp::Floor, a)?;
                    let s = b.unary(UnaryOp::Sign, q)?;
                    let tr = mul(b, s, f)?;
                    let ntr = b.unary(UnaryOp::Neg, tr)?;
                    Some(mul(b, t, ntr)?)
                }
                None => None,
            };
            add_opt(b, tx, r)?
        }
        // Ops of the other groups: dispatched by `binary_tangent`.
        _ => None,
    })
}

/// `binary_tangent` for `atan2` and `polygamma`.
fn atan2_polygamma_tangent(
    b: &mut Builder, op: BinaryOp, (x, y): (&Atom, &Atom), dtype: DType, tx: Option<Atom>,
    ty: Option<Atom>,
) -> Result<Option<Atom>> {
    Ok(match op {
        BinaryOp::Atan2 => {
            // atan2(x, y): d/dx = y / (x² + y²), d/dy = -x / (x² + y²)
            let x2 = b.unary(UnaryOp::Square, x.clone())?;
            let y2 = b.unary(UnaryOp::Square, y.clone())?;
            let den = b.binary(BinaryOp::Add, x2, y2)?;
            let l = match tx {
                Some(t) => {
                    let d = b.binary(BinaryOp::Div, y.clone(), den.clone())?;
                    Some(mul(b, t, d)?)
                }
                None => None,
            };
            let r = match ty {
                Some(t) => {
                    let q = b.binary(BinaryOp::Div, x.clone(), den)?;
                    let d = b.unary(UnaryOp::Neg, q)?;
                    Some(mul(b, t, d)?)
                }
                None => None,
            };
            add_opt(b, l, r)?
        }
        BinaryOp::Polygamma => {
            if tx.is_some() {
                return Err(Error::Unsupported(
                    "polygamma: differentiation with respect to m is not supported".into(),
                ));
            }
            match ty {
                Some(t) => {
                    let m1 = b.binary(BinaryOp::Add, x.clone(), Builder::lit(dtype, 1.0))?;
                    let d = b.binary(BinaryOp::Polygamma, m1, y.clone())?;
                    Some(mul(b, t, d)?)
                }
                None => None,
            }
        }
        // Ops of the other groups: dispatched by `binary_tangent`.
        _ => None,
    })
}

impl Family for CmpOp {
    crate::family_identity!(table: CmpOp);

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let name = self.name();
        let (_, shape) = two_operand_shape(name, ins, |x, y| {
            same_dtype(name, &[x, y])?;
            let ordering = !matches!(self, CmpOp::Eq | CmpOp::Ne);
            if ordering && x.dtype.is_complex() {
                return Err(Error::dtype(
                    name,
                    &[x.dtype, y.dtype],
                    format!(
                        "{name} does not accept dtype {} at position 0. Accepted dtypes at \
                         position 0 are subtypes of integer, floating, bool.",
                        x.dtype
                    ),
                ));
            }
            Ok(())
        })?;
        Ok(vec![Aval::new(shape, DType::Bool)])
    }

    crate::kernel_through_one!();

    fn kernel_one(&self, _ctx: &ExecCtx, args: &[&HostArray], out: Aval) -> Result<HostArray> {
        let [x, y] = operands::<_, 2>(self.name(), args)?;
        let n = out.size()?;
        HostArray::new(
            out.shape,
            kernels::compare(*self, x.buffer(), y.buffer(), n)?,
        )
    }

    // Comparisons are piecewise constant: zero tangents.
    crate::zero_derivative_rules!(not_differentiable);

    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize) -> BatchOut {
        elementwise_rule(&Primitive::Compare(*self), b, ins, dims, n)
    }
}
