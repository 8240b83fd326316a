//! Helpers the families' transpose rules share, and the contract of a rule.
//!
//! A rule receives the cotangents of the equation's outputs (`None` = zero;
//! at least one present) and its operands, each known or linear
//! ([`Operand`]), and returns one entry per operand: the cotangent of a
//! linear operand (`None` = zero) or `None` for a known operand. Primitives
//! that are never linear get a rule that reports the error, so the
//! rule-coverage listing stays about missing work, not about non-linearity.

use super::family::{operands, Operand, TransposeOut};
use super::ReduceOp;
use crate::error::{Error, Result};
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval};

/// The error for transposing a primitive in a non-linear position.
pub(crate) fn not_linear_error(prim: &'static str, detail: &str) -> Error {
    Error::Typecheck(format!(
        "cannot transpose {prim}: it is not linear in its linear operands{detail}"
    ))
}

/// Sums a cotangent of an elementwise output back to a rank-0 operand's shape.
pub(super) fn unbroadcast(b: &mut Builder, ct: Atom, aval: &Aval) -> Result<Atom> {
    let cs = b.aval(&ct)?.shape;
    if cs == aval.shape {
        return Ok(ct);
    }
    if !aval.shape.is_empty() {
        return Err(Error::shape(
            "transpose",
            &[&cs, &aval.shape],
            "cotangent does not match the operand",
        ));
    }
    b.reduce(ReduceOp::Sum, ct, (0..cs.len()).collect())
}

/// The single output cotangent (`None`: zero).
pub(crate) fn single_ct(name: &'static str, cts: &[Option<Atom>]) -> Result<Option<Atom>> {
    let [ct] = operands::<_, 1>(name, cts)?;
    Ok(ct.clone())
}

/// The transpose of a primitive linear in its single operand: `rule` of
/// the output cotangent and the operand's aval; no cotangent when the
/// cotangent is zero or the operand is known.
pub(crate) fn transpose_unary(
    name: &'static str, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand],
    rule: impl FnOnce(&mut Builder, Atom, &Aval) -> Result<Atom>,
) -> TransposeOut {
    let Some(ct) = single_ct(name, cts)? else {
        return Ok(vec![None; ops.len()]);
    };
    let [Operand::Linear(a)] = ops else {
        return Ok(vec![None; ops.len()]);
    };
    Ok(vec![Some(rule(b, ct, a)?)])
}

/// The aval of an operand being transposed.
pub(crate) fn operand_aval(b: &Builder, op: &Operand) -> Result<Aval> {
    match op {
        Operand::Known(a) => b.aval(a),
        Operand::Linear(a) => Ok(a.clone()),
    }
}
