//! Batching (vmap) rules: one exhaustive `match` over the primitive families.
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

use super::rules::BatchRule;
use super::{DotDims, Primitive};
use crate::error::{Error, Result};
use crate::ir::builder::Builder;
use crate::ir::Atom;
use crate::prims::{
    ArgReduce, BroadcastInDim, Checkpoint, Clamp, ConvertElementType, Cumulative, DotGeneral,
    DynamicSlice, DynamicUpdateSlice, IntegerPow, IsFinite, Pjit, Reduce, Round, SelectN, Slice,
    StopGradient, Transpose,
};
use crate::DType;
use std::sync::Arc;

/// The batching rule of a primitive.
/// The batch rule of a core primitive (families dispatch to their impl).
pub(super) fn core_batch(
    p: &Primitive,
    b: &mut Builder,
    xs: &[Atom],
    dims: &[Option<usize>],
    n: usize,
) -> Result<Batched> {
    let rule: BatchRule = match p {
        Primitive::Unary(_) | Primitive::Binary(_) | Primitive::Compare(_) => {
            |p, b, xs, dims, n| p.batch(b, xs, dims, n)
        }
        Primitive::IntegerPow(IntegerPow { .. })
        | Primitive::ConvertElementType(ConvertElementType { .. })
        | Primitive::StopGradient(StopGradient)
        | Primitive::IsFinite(IsFinite)
        | Primitive::Round(Round { .. }) => elementwise_rule,
        Primitive::Clamp(Clamp) => clamp,
        Primitive::Arg(ArgReduce { .. }) => arg,
        Primitive::Cumulative(Cumulative { .. }) => cumulative,
        Primitive::SelectN(SelectN) => select_n,
        Primitive::BroadcastInDim(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
        Primitive::Reshape(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
        Primitive::Transpose(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
        Primitive::Squeeze(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
        Primitive::Reduce(Reduce { .. }) => reduce,
        Primitive::DotGeneral(DotGeneral { .. }) => dot_general,
        Primitive::Iota(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
        Primitive::Rev(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
        Primitive::Slice(Slice { .. }) => slice,
        Primitive::Concatenate(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
        Primitive::Pad(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
        Primitive::DynamicSlice(DynamicSlice { .. }) => dynamic_slice,
        Primitive::DynamicUpdateSlice(DynamicUpdateSlice) => dynamic_update_slice,
        Primitive::Pjit(Pjit { .. }) | Primitive::Checkpoint(Checkpoint { .. }) => call,
        Primitive::Custom(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
        Primitive::Control(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
        Primitive::Callback(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
        Primitive::Sort(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
        Primitive::Linalg(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
        Primitive::Collective(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
        Primitive::Threefry2x32(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
        Primitive::Gather(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
        Primitive::Scatter(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
        Primitive::Conv(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
        Primitive::Window(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
    };
    rule(p, b, xs, dims, n)
}

type Batched = (Vec<Atom>, Vec<Option<usize>>);

/// An inconsistency between a rule and its operands (a driver bug or a
/// malformed program), reported instead of panicking.
fn bad(p: &Primitive, msg: impl std::fmt::Display) -> Error {
    Error::InvalidArgument(format!("vmap of {}: {msg}", p.name()))
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

/// The single operand and its batch dim.
fn one<'a>(p: &Primitive, ins: &'a [Atom], dims: &[Option<usize>]) -> Result<(&'a Atom, usize)> {
    match (ins, dims) {
        ([x], [Some(d)]) => Ok((x, *d)),
        ([_], [None]) => Err(bad(p, "the operand is not batched")),
        _ => Err(Error::Arity {
            prim: p.name(),
            expected: 1,
            got: ins.len(),
        }),
    }
}

fn emit1(p: Primitive, b: &mut Builder, ins: Vec<Atom>, dim: Option<usize>) -> Result<Batched> {
    let out = b.add_eqn1(p, ins)?;
    Ok((vec![out], vec![dim]))
}

/// No operand batched: the equation as is (also iota's rule, which has no
/// operands).
fn unbatched(
    p: &Primitive,
    b: &mut Builder,
    ins: &[Atom],
    _dims: &[Option<usize>],
    _n: usize,
) -> Result<Batched> {
    let outs: Vec<Atom> = b
        .add_eqn(p.clone(), ins.to_vec(), None)?
        .into_iter()
        .map(Atom::Var)
        .collect();
    let dims = vec![None; outs.len()];
    Ok((outs, dims))
}

fn all_unbatched(dims: &[Option<usize>]) -> bool {
    dims.iter().all(Option::is_none)
}

/// Elementwise primitives (unary, binary, compare, integer_pow,
/// convert_element_type): every rank-0 operand may stay as it is.
/// The batch rule of elementwise primitives (operands brought to one
/// batched shape).
pub(super) fn elementwise_rule(
    p: &Primitive,
    b: &mut Builder,
    ins: &[Atom],
    dims: &[Option<usize>],
    n: usize,
) -> Result<Batched> {
    elementwise_impl(p, b, ins, dims, n, &|_| true)
}

/// `select_n(pred, *cases)`: the cases must have equal shapes, so only an
/// unbatched rank-0 predicate stays as it is.
fn select_n(
    p: &Primitive,
    b: &mut Builder,
    ins: &[Atom],
    dims: &[Option<usize>],
    n: usize,
) -> Result<Batched> {
    elementwise_impl(p, b, ins, dims, n, &|i| i == 0)
}

/// Brings the operands of an elementwise primitive to one batched shape:
/// batched operands move their mapped axis to a common position (that of
/// the first batched full-rank operand, so the common case moves nothing);
/// an unbatched operand is broadcast unless it is rank 0 and
/// `scalar_ok(i)`; a batched rank-0 operand against array operands is
/// broadcast to the full shape.
fn elementwise_impl(
    p: &Primitive,
    b: &mut Builder,
    ins: &[Atom],
    dims: &[Option<usize>],
    n: usize,
    scalar_ok: &dyn Fn(usize) -> bool,
) -> Result<Batched> {
    if ins.len() != dims.len() {
        return Err(bad(p, "one batch dim per operand expected"));
    }
    if all_unbatched(dims) {
        return unbatched(p, b, ins, dims, n);
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

/// `reduce_sum` / `reduce_max`: the reduced axes shift around the mapped one.
fn reduce(
    p: &Primitive,
    b: &mut Builder,
    ins: &[Atom],
    dims: &[Option<usize>],
    n: usize,
) -> Result<Batched> {
    let Primitive::Reduce(Reduce { op, axes }) = p else {
        return Err(bad(p, "wrong rule"));
    };
    if all_unbatched(dims) {
        return unbatched(p, b, ins, dims, n);
    }
    let (x, d) = one(p, ins, dims)?;
    let (axes, out_d) = axes_around(axes, d);
    emit1(
        Primitive::Reduce(Reduce { op: *op, axes }),
        b,
        vec![x.clone()],
        Some(out_d),
    )
}

/// `dot_general`: with both operands batched the mapped axes become a new
/// leading batch dimension (output axis 0); with one batched, the mapped
/// axis is a free dimension of that operand and lands among its free axes
/// of the output (batch axes, then lhs free, then rhs free).
fn dot_general(
    p: &Primitive,
    b: &mut Builder,
    ins: &[Atom],
    dims: &[Option<usize>],
    n: usize,
) -> Result<Batched> {
    let Primitive::DotGeneral(DotGeneral {
        dims: dn,
        preferred_element_type,
    }) = p
    else {
        return Err(bad(p, "wrong rule"));
    };
    let ([l, r], [ld, rd]) = (ins, dims) else {
        return Err(Error::Arity {
            prim: p.name(),
            expected: 2,
            got: ins.len(),
        });
    };
    let map = |axes: &[usize], d: Option<usize>| -> Vec<usize> {
        match d {
            Some(d) => axes.iter().map(|&k| shift(k, d)).collect(),
            None => axes.to_vec(),
        }
    };
    let mut nd = DotDims {
        lhs_contract: map(&dn.lhs_contract, *ld),
        rhs_contract: map(&dn.rhs_contract, *rd),
        lhs_batch: map(&dn.lhs_batch, *ld),
        rhs_batch: map(&dn.rhs_batch, *rd),
    };
    let nbatch = nd.lhs_batch.len();
    // Free axes of an operand of rank `rank`, in order.
    let free = |rank: usize, batch: &[usize], contract: &[usize]| -> Vec<usize> {
        (0..rank)
            .filter(|k| !batch.contains(k) && !contract.contains(k))
            .collect()
    };
    let out_d = match (*ld, *rd) {
        (None, None) => return unbatched(p, b, ins, dims, n),
        (Some(a), Some(c)) => {
            nd.lhs_batch.insert(0, a);
            nd.rhs_batch.insert(0, c);
            0
        }
        (Some(a), None) => {
            let rank = b.aval(l)?.ndim();
            let pos = free(rank, &nd.lhs_batch, &nd.lhs_contract)
                .iter()
                .position(|&k| k == a)
                .ok_or_else(|| bad(p, "batch dim collides with the dimension numbers"))?;
            nbatch.saturating_add(pos)
        }
        (None, Some(c)) => {
            let lrank = b.aval(l)?.ndim();
            let lfree = free(lrank, &nd.lhs_batch, &nd.lhs_contract).len();
            let rank = b.aval(r)?.ndim();
            let pos = free(rank, &nd.rhs_batch, &nd.rhs_contract)
                .iter()
                .position(|&k| k == c)
                .ok_or_else(|| bad(p, "batch dim collides with the dimension numbers"))?;
            nbatch.saturating_add(lfree).saturating_add(pos)
        }
    };
    let prim = Primitive::DotGeneral(DotGeneral {
        dims: nd,
        preferred_element_type: *preferred_element_type,
    });
    emit1(prim, b, vec![l.clone(), r.clone()], Some(out_d))
}

/// `pjit`: the sub-jaxpr is batched recursively and called by a new `pjit`;
/// each output keeps the batch dim the recursion gives it (unbatched outputs
/// stay unbatched).
fn call(
    p: &Primitive,
    b: &mut Builder,
    ins: &[Atom],
    dims: &[Option<usize>],
    n: usize,
) -> Result<Batched> {
    let Some(jaxpr) = p.call_jaxpr() else {
        return Err(bad(p, "wrong rule"));
    };
    if all_unbatched(dims) && !crate::transforms::batch::names_current_axis(p) {
        return unbatched(p, b, ins, dims, n);
    }
    let (sub, out_dims) = crate::transforms::batch::batch_jaxpr_natural(jaxpr, dims, n)?;
    let prim = p
        .with_callee(Arc::new(sub), "")
        .ok_or_else(|| bad(p, "wrong rule"))?;
    let outs: Vec<Atom> = b
        .add_eqn(prim, ins.to_vec(), None)?
        .into_iter()
        .map(Atom::Var)
        .collect();
    Ok((outs, out_dims))
}

/// `clamp(lo, x, hi)`: the bounds may stay rank 0 when unbatched; the
/// operand never does (it sets the shape).
fn clamp(
    p: &Primitive,
    b: &mut Builder,
    ins: &[Atom],
    dims: &[Option<usize>],
    n: usize,
) -> Result<Batched> {
    if ins.len() != 3 {
        return Err(Error::Arity {
            prim: p.name(),
            expected: 3,
            got: ins.len(),
        });
    }
    // A rank-0 operand with array bounds cannot happen (the shape rule ties
    // the bounds to the operand); with everything rank 0, a batched bound
    // makes the operand batched too.
    elementwise_impl(p, b, ins, dims, n, &|i| i != 1)
}

/// `argmax` / `argmin`: the axis shifts around the mapped one.
fn arg(
    p: &Primitive,
    b: &mut Builder,
    ins: &[Atom],
    dims: &[Option<usize>],
    n: usize,
) -> Result<Batched> {
    let Primitive::Arg(ArgReduce {
        op,
        axis,
        index_dtype,
    }) = p
    else {
        return Err(bad(p, "wrong rule"));
    };
    if all_unbatched(dims) {
        return unbatched(p, b, ins, dims, n);
    }
    let (x, d) = one(p, ins, dims)?;
    let (axes, out_d) = axes_around(&[*axis], d);
    let axis = axes.first().copied().ok_or_else(|| bad(p, "no axis"))?;
    emit1(
        Primitive::Arg(ArgReduce {
            op: *op,
            axis,
            index_dtype: *index_dtype,
        }),
        b,
        vec![x.clone()],
        Some(out_d),
    )
}

/// Scans: the scanned axis shifts around the mapped one, which stays put.
fn cumulative(
    p: &Primitive,
    b: &mut Builder,
    ins: &[Atom],
    dims: &[Option<usize>],
    n: usize,
) -> Result<Batched> {
    let Primitive::Cumulative(Cumulative { op, axis, reverse }) = p else {
        return Err(bad(p, "wrong rule"));
    };
    if all_unbatched(dims) {
        return unbatched(p, b, ins, dims, n);
    }
    let (x, d) = one(p, ins, dims)?;
    emit1(
        Primitive::Cumulative(Cumulative {
            op: *op,
            axis: shift(*axis, d),
            reverse: *reverse,
        }),
        b,
        vec![x.clone()],
        Some(d),
    )
}

/// `slice`: the mapped axis is taken whole.
fn slice(
    p: &Primitive,
    b: &mut Builder,
    ins: &[Atom],
    dims: &[Option<usize>],
    n: usize,
) -> Result<Batched> {
    let Primitive::Slice(Slice {
        start_indices,
        limit_indices,
        strides,
    }) = p
    else {
        return Err(bad(p, "wrong rule"));
    };
    if all_unbatched(dims) {
        return unbatched(p, b, ins, dims, n);
    }
    let (x, d) = one(p, ins, dims)?;
    let prim = Primitive::Slice(Slice {
        start_indices: insert_axis(start_indices, d, 0),
        limit_indices: insert_axis(limit_indices, d, n),
        strides: strides.as_ref().map(|s| insert_axis(s, d, 1)),
    });
    emit1(prim, b, vec![x.clone()], Some(d))
}

/// Brings `x` (batched at `d` or unbatched) to carry the mapped axis first.
pub(super) fn batch_first(b: &mut Builder, x: &Atom, d: Option<usize>, n: usize) -> Result<Atom> {
    match d {
        Some(d) => move_axis(b, x.clone(), d, 0),
        None => add_batch_axis(b, x.clone(), n, 0),
    }
}

/// A zero start index for a new leading axis, of the indices' dtype.
fn zero_index(b: &Builder, idx: &[Atom]) -> Result<Atom> {
    let dtype = match idx.first() {
        Some(i) => b.aval(i)?.dtype,
        None => DType::I32,
    };
    Ok(Builder::lit(dtype, 0.0))
}

/// `dynamic_slice`: unbatched start indices prepend a zero index for the
/// mapped axis; batched ones become one `gather` with a batching dim pair
/// (as JAX), whose clip mode clamps like `dynamic_slice`.
fn dynamic_slice(
    p: &Primitive,
    b: &mut Builder,
    ins: &[Atom],
    dims: &[Option<usize>],
    n: usize,
) -> Result<Batched> {
    let Primitive::DynamicSlice(DynamicSlice { slice_sizes }) = p else {
        return Err(bad(p, "wrong rule"));
    };
    if all_unbatched(dims) {
        return unbatched(p, b, ins, dims, n);
    }
    let (Some((x, idx)), Some((dx, didx))) = (ins.split_first(), dims.split_first()) else {
        return Err(bad(p, "no operand"));
    };
    if didx.iter().all(Option::is_none) {
        let d = dx.ok_or_else(|| bad(p, "the operand is not batched"))?;
        let mut new_ins = vec![x.clone()];
        new_ins.extend(idx.iter().cloned());
        new_ins.insert(d.saturating_add(1).min(new_ins.len()), zero_index(b, idx)?);
        let prim = Primitive::DynamicSlice(DynamicSlice {
            slice_sizes: insert_axis(slice_sizes, d, n),
        });
        return emit1(prim, b, new_ins, Some(d));
    }
    let xb = batch_first(b, x, *dx, n)?;
    let starts = super::gather::stacked_starts(b, idx, didx, n)?;
    let prim = super::gather::dynamic_slice_gather(slice_sizes);
    emit1(prim, b, vec![xb, starts], Some(0))
}

/// `dynamic_update_slice`: unbatched start indices prepend a zero index;
/// batched ones become one `scatter` with a batching dim pair (as JAX).
fn dynamic_update_slice(
    p: &Primitive,
    b: &mut Builder,
    ins: &[Atom],
    dims: &[Option<usize>],
    n: usize,
) -> Result<Batched> {
    if all_unbatched(dims) {
        return unbatched(p, b, ins, dims, n);
    }
    let ([x, u, idx @ ..], [dx, du, didx @ ..]) = (ins, dims) else {
        return Err(Error::Arity {
            prim: p.name(),
            expected: 2,
            got: ins.len(),
        });
    };
    let xb = batch_first(b, x, *dx, n)?;
    let ub = batch_first(b, u, *du, n)?;
    if didx.iter().all(Option::is_none) {
        let mut new_ins = vec![xb, ub, zero_index(b, idx)?];
        new_ins.extend(idx.iter().cloned());
        return emit1(p.clone(), b, new_ins, Some(0));
    }
    let starts = super::gather::stacked_starts(b, idx, didx, n)?;
    let prim = super::gather::dynamic_update_slice_scatter(idx.len());
    emit1(prim, b, vec![xb, starts, ub], Some(0))
}
