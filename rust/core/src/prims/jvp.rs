//! Helpers the families' JVP rules share, and the contract of a JVP rule.
//!
//! A rule receives the primal operands (already in the new builder) and their
//! tangents (`None` = symbolic zero; at least one is present when the driver
//! calls a rule), emits the primal equation and the tangent computation, and
//! returns the primal outputs with their tangents (`None` = zero). Tangent
//! expressions are linear in the tangents, with every non-linear factor
//! computed from primals only (`mul t (cos x)`), so partial evaluation can
//! move those factors into the primal program and transposition can read them
//! as known values. Integer, bool and float0 outputs never get a tangent.

use super::family::{arity_error, emit1, operands, Family, JvpOut};
use super::{BinaryOp, CmpOp, Primitive};
use crate::error::{Error, Result};
use crate::ir::builder::Builder;
use crate::ir::Atom;
use crate::prims::{BroadcastInDim, ConvertElementType, SelectN};

pub(super) fn is_float(b: &Builder, a: &Atom) -> Result<bool> {
    Ok(b.aval(a)?.dtype.is_inexact())
}

/// `x` broadcast to `shape` (only rank-0 operands differ from their
/// elementwise output's shape).
pub(crate) fn broadcast_to(b: &mut Builder, x: Atom, shape: &[usize]) -> Result<Atom> {
    let a = b.aval(&x)?;
    if a.shape == shape {
        return Ok(x);
    }
    if !a.shape.is_empty() {
        return Err(Error::shape(
            "broadcast_in_dim",
            &[&a.shape, shape],
            "only a rank-0 operand broadcasts implicitly",
        ));
    }
    b.add_eqn1(
        Primitive::BroadcastInDim(BroadcastInDim {
            shape: shape.to_vec(),
            broadcast_dimensions: Vec::new(),
        }),
        vec![x],
    )
}

/// `a + c` of optional (zero when `None`) terms.
pub(crate) fn add_opt(b: &mut Builder, a: Option<Atom>, c: Option<Atom>) -> Result<Option<Atom>> {
    Ok(match (a, c) {
        (Some(a), Some(c)) => Some(b.binary(BinaryOp::Add, a, c)?),
        (a, None) => a,
        (None, c) => c,
    })
}

pub(super) fn mul(b: &mut Builder, x: Atom, y: Atom) -> Result<Atom> {
    b.binary(BinaryOp::Mul, x, y)
}

/// `convert_element_type(x, dtype)` (non-weak).
pub(super) fn convert(b: &mut Builder, x: Atom, dtype: crate::DType) -> Result<Atom> {
    b.add_eqn1(
        Primitive::ConvertElementType(ConvertElementType {
            new_dtype: dtype,
            weak_type: false,
        }),
        vec![x],
    )
}

pub(super) fn eq(b: &mut Builder, x: Atom, y: Atom) -> Result<Atom> {
    b.add_eqn1(Primitive::Compare(CmpOp::Eq), vec![x, y])
}

pub(super) fn select(b: &mut Builder, pred: Atom, on_false: Atom, on_true: Atom) -> Result<Atom> {
    b.add_eqn1(Primitive::SelectN(SelectN), vec![pred, on_false, on_true])
}

/// JVP of a primitive linear in its single operand (`reduce_sum`, `cumsum`,
/// `reshape`, ...): the tangent is the same primitive applied to the tangent
/// (float outputs only).
pub(crate) fn jvp_linear<F: Family + Clone>(
    family: &F, b: &mut Builder, primals: &[Atom], tangents: &[Option<Atom>],
) -> JvpOut
where
    Primitive: From<F>,
{
    let [t] = operands::<_, 1>(family.name(), tangents)?;
    let z = emit1(b, family.clone(), primals.to_vec())?;
    let tz = match t {
        Some(t) if is_float(b, &z)? => Some(emit1(b, family.clone(), vec![t.clone()])?),
        _ => None,
    };
    Ok((vec![z], vec![tz]))
}

/// JVP of a primitive linear in its first `k` operands (all of
/// `concatenate`'s, `pad`'s operand and padding value, `dynamic_slice`'s
/// operand, `dynamic_update_slice`'s operand and update; trailing operands
/// such as start indices have no tangent): the tangent is the same primitive
/// applied to the tangents, with zeros for missing ones and the primal
/// trailing operands.
pub(crate) fn jvp_linear_prefix<F: Family + Clone>(
    family: &F, k: usize, b: &mut Builder, primals: &[Atom], tangents: &[Option<Atom>],
) -> JvpOut
where
    Primitive: From<F>,
{
    if primals.len() < k || tangents.len() != primals.len() {
        return Err(arity_error(family.name(), k, primals.len()));
    }
    let z = emit1(b, family.clone(), primals.to_vec())?;
    let lin = tangents.get(..k).unwrap_or(&[]);
    if !is_float(b, &z)? || lin.iter().all(Option::is_none) {
        return Ok((vec![z], vec![None]));
    }
    let mut ins = Vec::with_capacity(primals.len());
    for (x, t) in primals.iter().zip(lin) {
        ins.push(match t {
            Some(t) => t.clone(),
            None => {
                let a = b.aval(x)?;
                b.zeros(&a)?
            }
        });
    }
    ins.extend(primals.iter().skip(k).cloned());
    let tz = emit1(b, family.clone(), ins)?;
    Ok((vec![z], vec![Some(tz)]))
}
