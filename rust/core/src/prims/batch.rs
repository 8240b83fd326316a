//! Helpers the families' batching (vmap) rules share, and the contract of a rule.
//!
//! A rule receives the operands of one equation with their batch dims
//! (`Some(d)`: the operand carries the mapped axis, of size `axis_size`, at
//! position `d`; `None`: unbatched), emits the batched equation(s) into the
//! builder and returns the outputs with their batch dims. Rules are only
//! called when at least one operand is batched (the driver,
//! [`crate::transforms::batch`], copies other equations unchanged), but each
//! one also handles the all-unbatched case by emitting the equation as is.
//!
//! Batch dims are moved only where a rule needs them (reshape needs the
//! mapped axis in front; elementwise operands must agree), and an unbatched
//! operand is broadcast only where the primitive cannot mix batched and
//! unbatched operands (an elementwise op takes a rank-0 operand as is).

use super::family::{arity_error, BatchOut, Family};
use super::Primitive;
use crate::error::{Error, Result};
use crate::ir::builder::Builder;
use crate::ir::Atom;
use crate::prims::{BroadcastInDim, Transpose};

type Batched = (Vec<Atom>, Vec<Option<usize>>);

/// An inconsistency between a rule and its operands (a driver bug or a
/// malformed program), reported instead of panicking.
fn bad(p: &Primitive, msg: impl std::fmt::Display) -> Error {
    batch_error(p.name(), msg)
}

/// An inconsistency between the batch rule of primitive `name` and its
/// operands (a driver bug or a malformed program), reported instead of
/// panicking.
pub(super) fn batch_error(name: &'static str, msg: impl std::fmt::Display) -> Error {
    Error::InvalidArgument(format!("vmap of {name}: {msg}"))
}

/// Position of axis `k` of an unbatched value once the mapped axis is
/// inserted at `d`.
pub(crate) fn shift(k: usize, d: usize) -> usize {
    if k < d {
        k
    } else {
        k.saturating_add(1)
    }
}

/// `shape` with an axis of size `n` inserted at `d` (appended when `d` is
/// past the end).
pub(crate) fn insert_axis(shape: &[usize], d: usize, n: usize) -> Vec<usize> {
    let mut out = shape.to_vec();
    out.insert(d.min(out.len()), n);
    out
}

/// `shape` without axis `d`.
pub(crate) fn remove_axis(shape: &[usize], d: usize) -> Vec<usize> {
    shape
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != d)
        .map(|(_, &s)| s)
        .collect()
}

/// Moves axis `from` of `x` to position `to` with one `transpose` (nothing
/// when they agree).
pub(crate) fn move_axis(b: &mut Builder, x: Atom, from: usize, to: usize) -> Result<Atom> {
    if from == to {
        return Ok(x);
    }
    let n = b.aval(&x)?.ndim();
    if from >= n || to >= n {
        return Err(Error::InvalidArgument(format!(
            "vmap: cannot move axis {from} to {to} of a rank-{n} value"
        )));
    }
    let mut perm: Vec<usize> = (0..n).filter(|&i| i != from).collect();
    perm.insert(to, from);
    b.add_eqn1(
        Primitive::Transpose(Transpose { permutation: perm }),
        vec![x],
    )
}

/// Broadcasts an unbatched `x` to carry a mapped axis of size `n` at `d`.
pub(crate) fn add_batch_axis(b: &mut Builder, x: Atom, n: usize, d: usize) -> Result<Atom> {
    let aval = b.aval(&x)?;
    if d > aval.ndim() {
        return Err(Error::InvalidArgument(format!(
            "vmap: axis {d} is out of range for a rank-{} value",
            aval.ndim()
        )));
    }
    let shape = insert_axis(&aval.shape, d, n);
    let broadcast_dimensions = (0..aval.ndim()).map(|k| shift(k, d)).collect();
    b.add_eqn1(
        Primitive::BroadcastInDim(BroadcastInDim {
            shape,
            broadcast_dimensions,
        }),
        vec![x],
    )
}

fn emit1(p: Primitive, b: &mut Builder, ins: Vec<Atom>, dim: Option<usize>) -> Result<Batched> {
    let out = b.add_eqn1(p, ins)?;
    Ok((vec![out], vec![dim]))
}

/// No operand batched: the equation as is (also iota's rule, which has no
/// operands).
fn unbatched_prim(
    p: &Primitive, b: &mut Builder, ins: &[Atom], _dims: &[Option<usize>], _n: usize,
) -> Result<Batched> {
    emit_all_at(b, p.clone(), ins.to_vec(), None)
}

/// One equation of `p` on `ins`, every output with batch dim `dim`.
pub(super) fn emit_all_at(
    b: &mut Builder, p: Primitive, ins: Vec<Atom>, dim: Option<usize>,
) -> Result<Batched> {
    let outs: Vec<Atom> = b
        .add_eqn(p, ins, None)?
        .into_iter()
        .map(Atom::Var)
        .collect();
    let dims = vec![dim; outs.len()];
    Ok((outs, dims))
}

/// Whether no operand carries the mapped axis.
pub(super) fn all_unbatched(dims: &[Option<usize>]) -> bool {
    dims.iter().all(Option::is_none)
}

/// Elementwise primitives (unary, binary, compare, integer_pow,
/// convert_element_type): every rank-0 operand may stay as it is.
/// The batch rule of elementwise primitives (operands brought to one
/// batched shape).
pub(super) fn elementwise_rule(
    p: &Primitive, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize,
) -> Result<Batched> {
    elementwise_impl(p, b, ins, dims, n, &|_| true)
}

/// Brings the operands of an elementwise primitive to one batched shape:
/// batched operands move their mapped axis to a common position (that of
/// the first batched full-rank operand, so the common case moves nothing);
/// an unbatched operand is broadcast unless it is rank 0 and
/// `scalar_ok(i)`; a batched rank-0 operand against array operands is
/// broadcast to the full shape.
pub(super) fn elementwise_impl(
    p: &Primitive, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize,
    scalar_ok: &dyn Fn(usize) -> bool,
) -> Result<Batched> {
    if ins.len() != dims.len() {
        return Err(bad(p, "one batch dim per operand expected"));
    }
    if all_unbatched(dims) {
        return unbatched_prim(p, b, ins, dims, n);
    }
    let mut shapes = Vec::with_capacity(ins.len());
    for (x, d) in ins.iter().zip(dims) {
        let s = b.aval(x)?.shape;
        shapes.push(match d {
            Some(d) => remove_axis(&s, *d),
            None => s,
        });
    }
    let out_shape: Vec<usize> = shapes
        .iter()
        .max_by_key(|s| s.len())
        .cloned()
        .unwrap_or_default();
    let rank = out_shape.len();
    let target = dims
        .iter()
        .zip(&shapes)
        .find_map(|(d, s)| d.filter(|_| s.len() == rank))
        .unwrap_or(0);
    let full = insert_axis(&out_shape, target, n);
    let mut new_ins = Vec::with_capacity(ins.len());
    for (i, ((x, d), s)) in ins.iter().zip(dims).zip(&shapes).enumerate() {
        let full_rank = s.len() == rank;
        let y = match d {
            Some(d) if full_rank => move_axis(b, x.clone(), *d, target)?,
            // A batched scalar against arrays: `[n]` broadcast to the full shape.
            Some(_) => b.add_eqn1(
                Primitive::BroadcastInDim(BroadcastInDim {
                    shape: full.clone(),
                    broadcast_dimensions: vec![target],
                }),
                vec![x.clone()],
            )?,
            None if s.is_empty() && scalar_ok(i) => x.clone(),
            None if full_rank => add_batch_axis(b, x.clone(), n, target)?,
            // An unbatched scalar case of select_n against array cases.
            None => b.add_eqn1(
                Primitive::BroadcastInDim(BroadcastInDim {
                    shape: full.clone(),
                    broadcast_dimensions: Vec::new(),
                }),
                vec![x.clone()],
            )?,
        };
        new_ins.push(y);
    }
    emit1(p.clone(), b, new_ins, Some(target))
}

/// Axes of an unbatched value mapped into the value batched at `d`, and
/// where the mapped axis lands once those axes are removed.
pub(super) fn axes_around(axes: &[usize], d: usize) -> (Vec<usize>, usize) {
    let mapped = axes.iter().map(|&k| shift(k, d)).collect();
    let before = axes.iter().filter(|&&k| k < d).count();
    (mapped, d.saturating_sub(before))
}

/// Brings `x` (batched at `d` or unbatched) to carry the mapped axis first.
pub(super) fn batch_first(b: &mut Builder, x: &Atom, d: Option<usize>, n: usize) -> Result<Atom> {
    match d {
        Some(d) => move_axis(b, x.clone(), d, 0),
        None => add_batch_axis(b, x.clone(), n, 0),
    }
}

/// Every operand brought to carry the mapped axis (of size `n`) first.
pub(super) fn all_batch_first(
    b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize,
) -> Result<Vec<Atom>> {
    let mut front = Vec::with_capacity(ins.len());
    for (x, d) in ins.iter().zip(dims) {
        front.push(batch_first(b, x, *d, n)?);
    }
    Ok(front)
}

/// No operand batched: the equation of `family` as is, every output
/// unbatched (also iota's rule, which has no operands).
pub(super) fn unbatched<F: Family + Clone>(family: &F, b: &mut Builder, ins: &[Atom]) -> BatchOut
where
    Primitive: From<F>,
{
    emit_all_at(b, Primitive::from(family.clone()), ins.to_vec(), None)
}

/// The single operand of primitive `name` and its batch dim.
pub(super) fn batched_one<'a>(
    name: &'static str, ins: &'a [Atom], dims: &[Option<usize>],
) -> Result<(&'a Atom, usize)> {
    match (ins, dims) {
        ([x], [Some(d)]) => Ok((x, *d)),
        ([_], [None]) => Err(batch_error(name, "the operand is not batched")),
        _ => Err(arity_error(name, 1, ins.len())),
    }
}

/// The batch rule of a one-operand family: the equation as is when the
/// operand is unbatched, else `rule` of the operand and its batch dim.
pub(super) fn batch_one<F: Family + Clone>(
    family: &F, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>],
    rule: impl FnOnce(&mut Builder, &Atom, usize) -> BatchOut,
) -> BatchOut
where
    Primitive: From<F>,
{
    if all_unbatched(dims) {
        return unbatched(family, b, ins);
    }
    let (x, d) = batched_one(family.name(), ins, dims)?;
    rule(b, x, d)
}

/// Emits one equation of `family` whose output has batch dim `dim`.
pub(super) fn emit_batched<F: Family>(
    b: &mut Builder, family: F, ins: Vec<Atom>, dim: Option<usize>,
) -> BatchOut
where
    Primitive: From<F>,
{
    let out = super::family::emit1(b, family, ins)?;
    Ok((vec![out], vec![dim]))
}
