//! `select_n` and `clamp`: elementwise choices between operands.
//!
//! Shape: `select_n(pred, *cases)` takes cases of one type and a bool or
//! int32 predicate, rank 0 or shaped like the cases; `clamp(min, x, max)`
//! takes numeric operands of one dtype, the bounds rank 0 or shaped like
//! `x`. Kernels are in `kernels/elementwise.rs`. AD as JAX: `select_n` is
//! linear in its cases (the tangent selects the cases' tangents, the
//! transpose routes the cotangent to the selected case); `clamp` passes the
//! tangent of whichever operand it returns and is never linear. vmap: the
//! shared elementwise batching, with the rank-0 operands that may stay as
//! they are.

use super::batch::elementwise_impl;
use super::family::{arity_error, emit1, finish, operands, single_out, transpose_not_linear};
use super::family::{BatchOut, Family, JvpOut, Operand, TransposeOut};
use super::jvp::{add_opt, broadcast_to, select};
use super::kernel::elementwise as kernels;
use super::shape::same_dtype;
use super::transpose::not_linear_error;
use super::{BinaryOp, CmpOp, Primitive};
use crate::array::{Buffer, HostArray};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::exec::ExecCtx;
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval};

/// `select_n(pred, *cases)`: case `pred` of each element (a bool `pred`
/// picks `cases[1]` where true).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SelectN;

/// `clamp(min, x, max)`; `min`/`max` are rank 0 or shaped like `x`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Clamp;

const SELECT_N: &str = "select_n";
const CLAMP: &str = "clamp";

impl Family for SelectN {
    crate::family_identity!(unit: SELECT_N);

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let name = SELECT_N;
        let Some((pred, cases)) = ins.split_first() else {
            return Err(arity_error(name, 2, 0));
        };
        let Some(first) = cases.first() else {
            return Err(arity_error(name, 2, 1));
        };
        if !matches!(pred.dtype, DType::Bool | DType::I32) {
            return Err(Error::dtype(
                name,
                &[pred.dtype],
                "predicate must be bool or int32",
            ));
        }
        if pred.dtype == DType::Bool && cases.len() > 2 {
            return Err(Error::param(
                name,
                "cases",
                "a bool predicate selects among at most 2 cases",
            ));
        }
        if let Some(bad) = cases.iter().find(|c| !c.same_type(first)) {
            return Err(Error::shape(
                name,
                &[&first.shape, &bad.shape],
                format!(
                    "cases must have equal shapes and dtypes ({} vs {})",
                    first.short(),
                    bad.short()
                ),
            ));
        }
        if !pred.shape.is_empty() && pred.shape != first.shape {
            return Err(Error::shape(
                name,
                &[&pred.shape, &first.shape],
                "predicate must be a scalar or have the shape of the cases",
            ));
        }
        let weak = cases.iter().all(|c| c.weak_type);
        Ok(vec![Aval::weak(first.shape.clone(), first.dtype, weak)])
    }

    /// An int32 predicate is clamped to `[0, n-1]`.
    fn kernel(
        &self, _ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        let (pred, cases) = args
            .split_first()
            .ok_or_else(|| arity_error(SELECT_N, 2, 0))?;
        let out = single_out(SELECT_N, outs)?;
        let cases: Vec<&Buffer> = cases.iter().map(|c| c.buffer()).collect();
        let buf = kernels::select_n(pred.buffer(), &cases, out.size()?)?;
        Ok(vec![HostArray::new(out.shape, buf)?])
    }

    /// The tangent selects the cases' tangents (zeros for missing ones) by
    /// the same predicate.
    fn jvp(&self, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
        let z = emit1(b, SelectN, xs.to_vec())?;
        let zaval = b.aval(&z)?;
        let (Some((pred, _)), Some((_, tcases))) = (xs.split_first(), ts.split_first()) else {
            return Err(arity_error(SELECT_N, 2, xs.len()));
        };
        if !zaval.dtype.is_inexact() || tcases.iter().all(Option::is_none) {
            return Ok((vec![z], vec![None]));
        }
        let mut zeros: Option<Atom> = None;
        let mut ins = vec![pred.clone()];
        for t in tcases {
            let t = match t {
                Some(t) => t.clone(),
                None => match &zeros {
                    Some(zr) => zr.clone(),
                    None => {
                        let zr = b.zeros(&zaval)?;
                        zeros = Some(zr.clone());
                        zr
                    }
                },
            };
            ins.push(t);
        }
        let tz = emit1(b, SelectN, ins)?;
        Ok((vec![z], vec![Some(tz)]))
    }

    /// Each linear case gets the cotangent where it was selected (zeros
    /// elsewhere); the predicate must be known.
    fn transpose(&self, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TransposeOut {
        let [ct] = operands::<_, 1>(SELECT_N, cts)?;
        let Some(ct) = ct.clone() else {
            return Ok(vec![None; ops.len()]);
        };
        let Some((pred, cases)) = ops.split_first() else {
            return Err(arity_error(SELECT_N, 2, 0));
        };
        let Operand::Known(pred) = pred else {
            return Err(not_linear_error(SELECT_N, " (the predicate is linear)"));
        };
        let mut out = vec![None];
        let mut zeros: Option<Atom> = None;
        for (i, case) in cases.iter().enumerate() {
            let Operand::Linear(aval) = case else {
                out.push(None);
                continue;
            };
            let zr = match &zeros {
                Some(z) => z.clone(),
                None => {
                    let z = b.zeros(aval)?;
                    zeros = Some(z.clone());
                    z
                }
            };
            let mut ins = vec![pred.clone()];
            for j in 0..cases.len() {
                ins.push(if j == i { ct.clone() } else { zr.clone() });
            }
            out.push(Some(emit1(b, SelectN, ins)?));
        }
        Ok(out)
    }

    /// The cases must have equal shapes, so only an unbatched rank-0
    /// predicate stays as it is.
    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize) -> BatchOut {
        elementwise_impl(&Primitive::SelectN(SelectN), b, ins, dims, n, &|i| i == 0)
    }
}

impl Family for Clamp {
    crate::family_identity!(unit: CLAMP);

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let name = CLAMP;
        let [lo, x, hi] = operands::<_, 3>(name, ins)?;
        same_dtype(name, &[lo, x, hi])?;
        if !(x.dtype.is_numeric() || x.dtype.is_complex()) {
            return Err(Error::dtype(
                name,
                &[lo.dtype, x.dtype, hi.dtype],
                "requires numeric operands",
            ));
        }
        for bound in [lo, hi] {
            if !bound.shape.is_empty() && bound.shape != x.shape {
                return Err(Error::shape(
                    name,
                    &[&lo.shape, &x.shape, &hi.shape],
                    "min and max must be scalars or have the shape of the operand",
                ));
            }
        }
        Ok(vec![x.clone()])
    }

    fn kernel(
        &self, _ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        let [lo, x, hi] = operands::<_, 3>(CLAMP, args)?;
        let buf = kernels::clamp(lo.buffer(), x.buffer(), hi.buffer())?;
        finish(CLAMP, outs, buf)
    }

    /// The tangent of `x` where `lo < x < hi`, of `lo` where `lo > x`, of
    /// `hi` where `hi < x` (as JAX; ties pass nothing).
    fn jvp(&self, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
        let ([lo, x, hi], [tlo, tx, thi]) = (xs, ts) else {
            return Err(arity_error(CLAMP, 3, xs.len()));
        };
        let z = emit1(b, Clamp, xs.to_vec())?;
        let zaval = b.aval(&z)?;
        if !zaval.dtype.is_inexact() {
            return Ok((vec![z], vec![None]));
        }
        let zeros = b.zeros(&zaval)?;
        let pick = |b: &mut Builder, t: &Option<Atom>, cond: Atom| -> Result<Option<Atom>> {
            match t {
                Some(t) => {
                    let t = broadcast_to(b, t.clone(), &zaval.shape)?;
                    Ok(Some(select(b, cond, zeros.clone(), t)?))
                }
                None => Ok(None),
            }
        };
        let gt_lo = b.add_eqn1(Primitive::Compare(CmpOp::Gt), vec![x.clone(), lo.clone()])?;
        let lt_hi = b.add_eqn1(Primitive::Compare(CmpOp::Lt), vec![x.clone(), hi.clone()])?;
        let inside = b.binary(BinaryOp::And, gt_lo, lt_hi)?;
        let inside = broadcast_to(b, inside, &zaval.shape)?;
        let below = b.add_eqn1(Primitive::Compare(CmpOp::Gt), vec![lo.clone(), x.clone()])?;
        let below = broadcast_to(b, below, &zaval.shape)?;
        let above = b.add_eqn1(Primitive::Compare(CmpOp::Lt), vec![hi.clone(), x.clone()])?;
        let above = broadcast_to(b, above, &zaval.shape)?;
        let a = pick(b, tx, inside)?;
        let c = pick(b, tlo, below)?;
        let d = pick(b, thi, above)?;
        let s = add_opt(b, a, c)?;
        Ok((vec![z], vec![add_opt(b, s, d)?]))
    }

    fn transpose(&self, _b: &mut Builder, _cts: &[Option<Atom>], _ops: &[Operand]) -> TransposeOut {
        transpose_not_linear(CLAMP)
    }

    /// The bounds may stay rank 0 when unbatched; the operand never does
    /// (it sets the shape).
    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize) -> BatchOut {
        if ins.len() != 3 {
            return Err(arity_error(CLAMP, 3, ins.len()));
        }
        // A rank-0 operand with array bounds cannot happen (the shape rule
        // ties the bounds to the operand); with everything rank 0, a
        // batched bound makes the operand batched too.
        elementwise_impl(&Primitive::Clamp(Clamp), b, ins, dims, n, &|i| i != 1)
    }
}
