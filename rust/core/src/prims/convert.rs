//! `convert_element_type` and `stop_gradient`: one operand, kept shape.
//!
//! `convert_element_type` follows XLA's conversion rules (kernel in
//! `kernels/elementwise.rs`); it is linear between floating dtypes (the
//! tangent and the cotangent convert back and forth) and gives integer
//! results no tangent. `stop_gradient` is the identity with a zero
//! derivative. vmap: the shared elementwise batching rule.

use super::batch::elementwise_rule;
use super::family::{emit1, operands, unary_kernel};
use super::family::{BatchOut, Family, JvpOut, Operand, TransposeOut};
use super::jvp::is_float;
use super::kernel::elementwise as kernels;
use super::Primitive;
use crate::array::HostArray;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::exec::ExecCtx;
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval};

crate::declare_params! {
    /// Converts to `new_dtype` (XLA's rules: float to int truncates and
    /// saturates, NaN to 0; int to int wraps; x to bool is `x != 0`).
    pub struct ConvertElementType {
        new_dtype: DType,
        weak_type: bool = false,
    }
}

/// Identity on values with a zero derivative.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StopGradient;

const CONVERT_ELEMENT_TYPE: &str = "convert_element_type";
const STOP_GRADIENT: &str = "stop_gradient";

impl Family for ConvertElementType {
    crate::family_identity!(
        CONVERT_ELEMENT_TYPE,
        example = ConvertElementType {
            new_dtype: DType::F32,
            weak_type: false
        }
    );

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let new_dtype = self.new_dtype;
        let [x] = operands::<_, 1>(CONVERT_ELEMENT_TYPE, ins)?;
        if matches!(x.dtype, DType::Key | DType::Float0) || matches!(new_dtype, DType::Key) {
            return Err(Error::dtype(
                CONVERT_ELEMENT_TYPE,
                &[x.dtype, new_dtype],
                "cannot convert",
            ));
        }
        Ok(vec![Aval::weak(x.shape.clone(), new_dtype, self.weak_type)])
    }

    fn kernel(
        &self, _ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        unary_kernel(CONVERT_ELEMENT_TYPE, args, outs, |x| {
            kernels::convert(x.buffer(), self.new_dtype)
        })
    }

    /// Between floating dtypes the tangent converts as the primal; other
    /// conversions have a zero tangent.
    fn jvp(&self, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
        let [x] = operands::<_, 1>(CONVERT_ELEMENT_TYPE, xs)?;
        let [t] = operands::<_, 1>(CONVERT_ELEMENT_TYPE, ts)?;
        let z = emit1(b, self.clone(), xs.to_vec())?;
        let tz = match t {
            Some(t) if is_float(b, x)? && is_float(b, &z)? => {
                Some(emit1(b, self.clone(), vec![t.clone()])?)
            }
            _ => None,
        };
        Ok((vec![z], vec![tz]))
    }

    /// The cotangent converts back to the operand's dtype (integer operands
    /// have none).
    fn transpose(&self, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TransposeOut {
        let [ct] = operands::<_, 1>(CONVERT_ELEMENT_TYPE, cts)?;
        let Some(ct) = ct.clone() else {
            return Ok(vec![None; ops.len()]);
        };
        let [Operand::Linear(a)] = ops else {
            return Ok(vec![None; ops.len()]);
        };
        let cd = b.aval(&ct)?.dtype;
        if !a.dtype.is_inexact() || !cd.is_inexact() {
            // Integer operands have no cotangent (zero).
            return Ok(vec![None]);
        }
        if cd == a.dtype {
            return Ok(vec![Some(ct)]);
        }
        let back = ConvertElementType {
            new_dtype: a.dtype,
            weak_type: a.weak_type,
        };
        Ok(vec![Some(emit1(b, back, vec![ct])?)])
    }

    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize) -> BatchOut {
        elementwise_rule(
            &Primitive::ConvertElementType(self.clone()),
            b,
            ins,
            dims,
            n,
        )
    }
}

impl Family for StopGradient {
    crate::family_identity!(unit: STOP_GRADIENT);

    // The identity (a copy of the operand).
    crate::identity_rules!(STOP_GRADIENT);

    // Zero tangents: the point of the primitive.
    crate::zero_derivative_rules!(not_differentiable);

    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize) -> BatchOut {
        elementwise_rule(&Primitive::StopGradient(*self), b, ins, dims, n)
    }
}
