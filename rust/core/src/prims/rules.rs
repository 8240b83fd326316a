//! Transformation rules: one lookup per rule kind, each an exhaustive
//! `match` over the primitive families, so a new primitive is a compile error
//! until every rule kind has an arm. Arms not written yet return
//! `Error::RuleMissing`; [`missing_rules`] lists them (the AD and vmap work
//! drives that list to zero).

use super::Primitive;
use crate::error::{Error, Result};
use crate::ir::builder::Builder;
use crate::ir::Atom;

/// JVP rule: given primal operands and (symbolically zero when `None`)
/// tangents, emit primal and tangent outputs into the builder.
pub type JvpRule = fn(
    &Primitive,
    &mut Builder,
    &[Atom],
    &[Option<Atom>],
) -> Result<(Vec<Atom>, Vec<Option<Atom>>)>;

/// Transpose rule: given output cotangents and the operands (linear operands
/// as `None`), return the cotangent of each linear operand.
pub type TransposeRule =
    fn(&Primitive, &mut Builder, &[Option<Atom>], &[Option<Atom>]) -> Result<Vec<Option<Atom>>>;

/// Batch rule: given operands and their batch dims (`None` = unbatched),
/// emit the batched equation(s); return outputs and their batch dims.
pub type BatchRule = fn(
    &Primitive,
    &mut Builder,
    &[Atom],
    &[Option<usize>],
    usize,
) -> Result<(Vec<Atom>, Vec<Option<usize>>)>;

fn missing<T>(p: &Primitive, rule: &'static str) -> Result<T> {
    Err(Error::RuleMissing {
        prim: p.name(),
        rule,
    })
}

/// The JVP rule of a primitive.
pub fn jvp_rule(p: &Primitive) -> Result<JvpRule> {
    match p {
        Primitive::Unary(_)
        | Primitive::Binary(_)
        | Primitive::Compare(_)
        | Primitive::IntegerPow { .. }
        | Primitive::SelectN
        | Primitive::ConvertElementType { .. }
        | Primitive::BroadcastInDim { .. }
        | Primitive::Reshape { .. }
        | Primitive::Transpose { .. }
        | Primitive::Squeeze { .. }
        | Primitive::Reduce { .. }
        | Primitive::DotGeneral { .. }
        | Primitive::Iota { .. }
        | Primitive::Pjit { .. } => missing(p, "jvp"),
    }
}

/// The transpose rule of a primitive that can be linear.
pub fn transpose_rule(p: &Primitive) -> Result<TransposeRule> {
    match p {
        Primitive::Unary(_)
        | Primitive::Binary(_)
        | Primitive::Compare(_)
        | Primitive::IntegerPow { .. }
        | Primitive::SelectN
        | Primitive::ConvertElementType { .. }
        | Primitive::BroadcastInDim { .. }
        | Primitive::Reshape { .. }
        | Primitive::Transpose { .. }
        | Primitive::Squeeze { .. }
        | Primitive::Reduce { .. }
        | Primitive::DotGeneral { .. }
        | Primitive::Iota { .. }
        | Primitive::Pjit { .. } => missing(p, "transpose"),
    }
}

/// The batching rule of a primitive.
pub fn batch_rule(p: &Primitive) -> Result<BatchRule> {
    match p {
        Primitive::Unary(_)
        | Primitive::Binary(_)
        | Primitive::Compare(_)
        | Primitive::IntegerPow { .. }
        | Primitive::SelectN
        | Primitive::ConvertElementType { .. }
        | Primitive::BroadcastInDim { .. }
        | Primitive::Reshape { .. }
        | Primitive::Transpose { .. }
        | Primitive::Squeeze { .. }
        | Primitive::Reduce { .. }
        | Primitive::DotGeneral { .. }
        | Primitive::Iota { .. }
        | Primitive::Pjit { .. } => missing(p, "batch"),
    }
}

/// Every `(primitive, rule kind)` whose arm still returns `RuleMissing`.
pub fn missing_rules() -> Vec<(&'static str, &'static str)> {
    let mut out = Vec::new();
    for p in Primitive::examples() {
        if jvp_rule(&p).is_err() {
            out.push((p.name(), "jvp"));
        }
        if transpose_rule(&p).is_err() {
            out.push((p.name(), "transpose"));
        }
        if batch_rule(&p).is_err() {
            out.push((p.name(), "batch"));
        }
    }
    out
}
