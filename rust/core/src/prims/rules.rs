//! Signatures of the per-rule-kind functions of the core primitives, whose
//! rules still live in one exhaustive `match` per rule kind (`jvp`,
//! `transpose`, `batch`). Families implement [`super::Family`] instead.

use super::Primitive;
use crate::error::Result;
use crate::ir::builder::Builder;
use crate::ir::Atom;

pub use super::family::Operand;

/// JVP rule: given primal operands and (symbolically zero when `None`)
/// tangents, emit primal and tangent outputs into the builder.
pub type JvpRule = fn(
    &Primitive,
    &mut Builder,
    &[Atom],
    &[Option<Atom>],
) -> Result<(Vec<Atom>, Vec<Option<Atom>>)>;

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
