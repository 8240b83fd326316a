//! Transformation rules: one lookup per rule kind, each an exhaustive
//! `match` over the primitive families, so a new primitive is a compile error
//! until every rule kind has an arm. Arms not written yet return
//! `Error::RuleMissing`; [`missing_rules`] lists them (the AD and vmap work
//! drives that list to zero).

use super::Primitive;
use crate::error::{Error, Result};
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval};

/// JVP rule: given primal operands and (symbolically zero when `None`)
/// tangents, emit primal and tangent outputs into the builder.
pub type JvpRule = fn(
    &Primitive,
    &mut Builder,
    &[Atom],
    &[Option<Atom>],
) -> Result<(Vec<Atom>, Vec<Option<Atom>>)>;

/// An operand of an equation being transposed: a known (non-linear) value,
/// or a linear one of which only the type is known.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    Known(Atom),
    Linear(Aval),
}

impl Operand {
    pub fn is_linear(&self) -> bool {
        matches!(self, Operand::Linear(_))
    }
}

/// Transpose rule: given output cotangents (`None` = zero; at least one is
/// present) and the operands, return one entry per operand: the cotangent of
/// a linear operand (`None` = zero), `None` for known operands.
pub type TransposeRule =
    fn(&Primitive, &mut Builder, &[Option<Atom>], &[Operand]) -> Result<Vec<Option<Atom>>>;

/// Batch rule: given operands and their batch dims (`None` = unbatched),
/// emit the batched equation(s); return outputs and their batch dims.
pub type BatchRule = fn(
    &Primitive,
    &mut Builder,
    &[Atom],
    &[Option<usize>],
    usize,
) -> Result<(Vec<Atom>, Vec<Option<usize>>)>;

// Kept for the arms of primitives added before their rules.
#[allow(dead_code)]
pub(crate) fn missing<T>(p: &Primitive, rule: &'static str) -> Result<T> {
    Err(Error::RuleMissing {
        prim: p.name(),
        rule,
    })
}

pub use super::batch::batch_rule;
pub use super::jvp::jvp_rule;
pub use super::transpose::transpose_rule;

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
