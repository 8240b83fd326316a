//! Elementwise numeric primitives with params or a bool result:
//! `integer_pow`, `round`, `is_finite`. Shape: one operand (numeric for
//! `integer_pow`, floating for the others), kept shape. Kernels are in
//! `kernels/elementwise.rs`. AD: `integer_pow`'s tangent is
//! `y * x^(y-1) * t`; `round` and `is_finite` are piecewise constant (zero
//! tangents); none is linear. vmap: the shared elementwise batching rule.

use super::batch::elementwise_rule;
use super::family::{emit1, operands, transpose_not_linear, unary_kernel};
use super::family::{BatchOut, Family, JvpOut, Operand, TransposeOut};
use super::jvp::mul;
use super::kernel::elementwise as kernels;
use super::{Primitive, RoundingMethod};
use crate::array::HostArray;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::exec::ExecCtx;
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval};

crate::declare_params! {
    /// `x ** y` for a static integer `y`.
    pub struct IntegerPow {
        y: i32,
    }
}

crate::declare_params! {
    /// Rounds to an integral value; halfway cases per `rounding_method`.
    pub struct Round {
        rounding_method: RoundingMethod = RoundingMethod::AwayFromZero,
    }
}

/// `isfinite`, producing bool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IsFinite;

const INTEGER_POW: &str = "integer_pow";
const ROUND: &str = "round";
const IS_FINITE: &str = "is_finite";

/// The one floating operand of `round` and `is_finite`.
fn float_operand<'a>(name: &'static str, ins: &'a [Aval]) -> Result<&'a Aval> {
    let [x] = operands::<_, 1>(name, ins)?;
    if !x.dtype.is_float() {
        return Err(Error::dtype(
            name,
            &[x.dtype],
            "requires a floating operand",
        ));
    }
    Ok(x)
}

impl Family for IntegerPow {
    crate::family_identity!(INTEGER_POW, example = IntegerPow { y: 2 });

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let name = INTEGER_POW;
        let y = self.y;
        let [x] = operands::<_, 1>(name, ins)?;
        if !(x.dtype.is_numeric() || x.dtype.is_complex()) {
            return Err(Error::dtype(name, &[x.dtype], "requires a numeric operand"));
        }
        // As JAX: integer operands need y >= 0 (x^-n is not an integer).
        if y < 0 && !x.dtype.is_inexact() {
            return Err(Error::param(
                name,
                "y",
                format!(
                    "negative exponent {y} requires a floating operand, got {}",
                    x.dtype
                ),
            ));
        }
        Ok(vec![x.clone()])
    }

    fn kernel(
        &self, _ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        unary_kernel(INTEGER_POW, args, outs, |x| {
            kernels::integer_pow(self.y, x.buffer())
        })
    }

    /// `y * x^(y-1) * t` (zero for `y = 0` and integer operands).
    fn jvp(&self, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
        let y = self.y;
        let [x] = operands::<_, 1>(INTEGER_POW, xs)?.clone();
        let [t] = operands::<_, 1>(INTEGER_POW, ts)?.clone();
        let z = emit1(b, self.clone(), xs.to_vec())?;
        let Some(t) = t else {
            return Ok((vec![z], vec![None]));
        };
        let dtype = b.aval(&x)?.dtype;
        if y == 0 || !dtype.is_inexact() {
            return Ok((vec![z], vec![None]));
        }
        if y == 1 {
            return Ok((vec![z], vec![Some(t)]));
        }
        let ym1 = y
            .checked_sub(1)
            .ok_or_else(|| Error::param(INTEGER_POW, "y", "exponent out of range"))?;
        let pw = if ym1 == 1 {
            x
        } else {
            emit1(b, IntegerPow { y: ym1 }, vec![x])?
        };
        let coef = mul(b, Builder::lit(dtype, f64::from(y)), pw)?;
        Ok((vec![z], vec![Some(mul(b, t, coef)?)]))
    }

    fn transpose(&self, _b: &mut Builder, _cts: &[Option<Atom>], _ops: &[Operand]) -> TransposeOut {
        transpose_not_linear(INTEGER_POW)
    }

    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize) -> BatchOut {
        elementwise_rule(&Primitive::IntegerPow(self.clone()), b, ins, dims, n)
    }
}

impl Family for Round {
    crate::family_identity!(
        ROUND,
        example = Round {
            rounding_method: RoundingMethod::AwayFromZero
        }
    );

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let x = float_operand(ROUND, ins)?;
        Ok(vec![x.clone()])
    }

    fn kernel(
        &self, _ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        unary_kernel(ROUND, args, outs, |x| {
            kernels::round(x.buffer(), self.rounding_method)
        })
    }

    // Piecewise constant: zero tangents.
    crate::zero_derivative_rules!();

    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize) -> BatchOut {
        elementwise_rule(&Primitive::Round(self.clone()), b, ins, dims, n)
    }
}

impl Family for IsFinite {
    crate::family_identity!(unit: IS_FINITE);

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let x = float_operand(IS_FINITE, ins)?;
        Ok(vec![Aval::new(x.shape.clone(), DType::Bool)])
    }

    fn kernel(
        &self, _ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        unary_kernel(IS_FINITE, args, outs, |x| kernels::is_finite(x.buffer()))
    }

    // A bool result: zero tangents.
    crate::zero_derivative_rules!(not_differentiable);

    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize) -> BatchOut {
        elementwise_rule(&Primitive::IsFinite(*self), b, ins, dims, n)
    }
}
