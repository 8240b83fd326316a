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
use super::Primitive;
use crate::error::{Error, Result};
use crate::ir::builder::Builder;
use crate::ir::{Atom, Literal, Scalar};
use crate::prims::{
    ArgReduce, BroadcastInDim, Checkpoint, Concatenate, Cumulative, DotGeneral, DynamicSlice,
    DynamicUpdateSlice, Iota, Pad, Pjit, Reduce, Reshape, Rev, SelectN, Slice, Squeeze, Transpose,
    BroadcastInDim, Clamp, Concatenate, ConvertElementType, IntegerPow, Iota, IsFinite, Pad,
    Reshape, Rev, Round, SelectN, Squeeze, StopGradient, Transpose,
};
use crate::DType;

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
        Primitive::IntegerPow(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
        Primitive::ConvertElementType(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
        Primitive::StopGradient(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
        Primitive::IsFinite(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
        Primitive::Round(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
        Primitive::Clamp(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
        Primitive::Arg(ArgReduce { .. }) => arg,
        Primitive::Cumulative(Cumulative { .. }) => cumulative,
        Primitive::SelectN(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
        Primitive::IntegerPow(IntegerPow { .. })
        | Primitive::ConvertElementType(ConvertElementType { .. })
        | Primitive::StopGradient(StopGradient)
        | Primitive::IsFinite(IsFinite)
        | Primitive::Round(Round { .. }) => elementwise_rule,
        Primitive::Clamp(Clamp) => clamp,
        Primitive::Arg(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
        Primitive::Cumulative(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
        Primitive::SelectN(SelectN) => select_n,
        Primitive::BroadcastInDim(BroadcastInDim { .. }) => broadcast_in_dim,
        Primitive::Reshape(Reshape { .. }) => reshape,
        Primitive::Transpose(Transpose { .. }) => transpose,
        Primitive::Squeeze(Squeeze { .. }) => squeeze,
        Primitive::Reduce(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
        Primitive::DotGeneral(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
        Primitive::Iota(Iota { .. }) => unbatched,
        Primitive::Rev(Rev { .. }) => rev,
        Primitive::Slice(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
        Primitive::Concatenate(Concatenate { .. }) => concatenate,
        Primitive::Pad(Pad { .. }) => pad,
        Primitive::DynamicSlice(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
        Primitive::DynamicUpdateSlice(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
        Primitive::Pjit(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
        Primitive::Checkpoint(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
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
        Primitive::Dynamic(_) => |p, b, xs, dims, n| p.batch(b, xs, dims, n),
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

/// Brings the operands of an elementwise primitive to one batched shape:
/// batched operands move their mapped axis to a common position (that of
/// the first batched full-rank operand, so the common case moves nothing);
/// an unbatched operand is broadcast unless it is rank 0 and
/// `scalar_ok(i)`; a batched rank-0 operand against array operands is
/// broadcast to the full shape.
pub(super) fn elementwise_impl(
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

/// `broadcast_in_dim`: the mapped axis goes where it keeps
/// `broadcast_dimensions` increasing (right after the output axis of the
/// operand axis before it), so the operand is never transposed.
fn broadcast_in_dim(
    p: &Primitive,
    b: &mut Builder,
    ins: &[Atom],
    dims: &[Option<usize>],
    n: usize,
) -> Result<Batched> {
    let Primitive::BroadcastInDim(BroadcastInDim {
        shape,
        broadcast_dimensions,
    }) = p
    else {
        return Err(bad(p, "wrong rule"));
    };
    if all_unbatched(dims) {
        return unbatched(p, b, ins, dims, n);
    }
    let (x, d) = one(p, ins, dims)?;
    let out_d = match d.checked_sub(1) {
        None => 0,
        Some(prev) => broadcast_dimensions
            .get(prev)
            .ok_or_else(|| bad(p, "batch dim out of range"))?
            .saturating_add(1),
    };
    let mut bdims: Vec<usize> = broadcast_dimensions
        .iter()
        .map(|&o| shift(o, out_d))
        .collect();
    bdims.insert(d.min(bdims.len()), out_d);
    let prim = Primitive::BroadcastInDim(BroadcastInDim {
        shape: insert_axis(shape, out_d, n),
        broadcast_dimensions: bdims,
    });
    emit1(prim, b, vec![x.clone()], Some(out_d))
}

/// `reshape`: the mapped axis moves to the front and leads the new sizes.
fn reshape(
    p: &Primitive,
    b: &mut Builder,
    ins: &[Atom],
    dims: &[Option<usize>],
    n: usize,
) -> Result<Batched> {
    let Primitive::Reshape(Reshape { new_sizes }) = p else {
        return Err(bad(p, "wrong rule"));
    };
    if all_unbatched(dims) {
        return unbatched(p, b, ins, dims, n);
    }
    let (x, d) = one(p, ins, dims)?;
    let x = move_axis(b, x.clone(), d, 0)?;
    let prim = Primitive::Reshape(Reshape {
        new_sizes: insert_axis(new_sizes, 0, n),
    });
    emit1(prim, b, vec![x], Some(0))
}

/// `transpose`: the mapped axis stays where it is; the permutation is
/// extended around it.
fn transpose(
    p: &Primitive,
    b: &mut Builder,
    ins: &[Atom],
    dims: &[Option<usize>],
    n: usize,
) -> Result<Batched> {
    let Primitive::Transpose(Transpose { permutation }) = p else {
        return Err(bad(p, "wrong rule"));
    };
    if all_unbatched(dims) {
        return unbatched(p, b, ins, dims, n);
    }
    let (x, d) = one(p, ins, dims)?;
    let mut perm: Vec<usize> = permutation.iter().map(|&k| shift(k, d)).collect();
    perm.insert(d.min(perm.len()), d);
    emit1(
        Primitive::Transpose(Transpose { permutation: perm }),
        b,
        vec![x.clone()],
        Some(d),
    )
}

/// Axes of an unbatched value mapped into the value batched at `d`, and
/// where the mapped axis lands once those axes are removed.
fn axes_around(axes: &[usize], d: usize) -> (Vec<usize>, usize) {
    let mapped = axes.iter().map(|&k| shift(k, d)).collect();
    let before = axes.iter().filter(|&&k| k < d).count();
    (mapped, d.saturating_sub(before))
}

/// `squeeze`: the squeezed axes shift around the mapped one.
fn squeeze(
    p: &Primitive,
    b: &mut Builder,
    ins: &[Atom],
    dims: &[Option<usize>],
    n: usize,
) -> Result<Batched> {
    let Primitive::Squeeze(Squeeze { dimensions }) = p else {
        return Err(bad(p, "wrong rule"));
    };
    if all_unbatched(dims) {
        return unbatched(p, b, ins, dims, n);
    }
    let (x, d) = one(p, ins, dims)?;
    let (dimensions, out_d) = axes_around(dimensions, d);
    emit1(
        Primitive::Squeeze(Squeeze { dimensions }),
        b,
        vec![x.clone()],
        Some(out_d),
    )
}

/// `reduce_sum` / `reduce_max`: the reduced axes shift around the mapped one.
fn reduce(
/// `clamp(lo, x, hi)`: the bounds may stay rank 0 when unbatched; the
/// operand never does (it sets the shape).
fn clamp(
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

/// `rev`: the reversed axes shift around the mapped one.
fn rev(
    p: &Primitive,
    b: &mut Builder,
    ins: &[Atom],
    dims: &[Option<usize>],
    n: usize,
) -> Result<Batched> {
    let Primitive::Rev(Rev { dimensions }) = p else {
        return Err(bad(p, "wrong rule"));
    };
    if all_unbatched(dims) {
        return unbatched(p, b, ins, dims, n);
    }
    let (x, d) = one(p, ins, dims)?;
    let dimensions = dimensions.iter().map(|&k| shift(k, d)).collect();
    emit1(
        Primitive::Rev(Rev { dimensions }),
        b,
        vec![x.clone()],
        Some(d),
    )
}

/// Brings `x` (batched at `d` or unbatched) to carry the mapped axis first.
fn batch_first(b: &mut Builder, x: &Atom, d: Option<usize>, n: usize) -> Result<Atom> {
    match d {
        Some(d) => move_axis(b, x.clone(), d, 0),
        None => add_batch_axis(b, x.clone(), n, 0),
    }
}

/// `concatenate`: every operand carries the mapped axis first.
fn concatenate(
    p: &Primitive,
    b: &mut Builder,
    ins: &[Atom],
    dims: &[Option<usize>],
    n: usize,
) -> Result<Batched> {
    let Primitive::Concatenate(Concatenate { dimension }) = p else {
        return Err(bad(p, "wrong rule"));
    };
    if all_unbatched(dims) {
        return unbatched(p, b, ins, dims, n);
    }
    let xs = ins
        .iter()
        .zip(dims)
        .map(|(x, d)| batch_first(b, x, *d, n))
        .collect::<Result<Vec<_>>>()?;
    let prim = Primitive::Concatenate(Concatenate {
        dimension: dimension.saturating_add(1),
    });
    emit1(prim, b, xs, Some(0))
}

/// `pad`: an unbatched padding value pads around the mapped axis; a
/// batched one is selected in where a padded mask marks the padding.
fn pad(
    p: &Primitive,
    b: &mut Builder,
    ins: &[Atom],
    dims: &[Option<usize>],
    n: usize,
) -> Result<Batched> {
    let Primitive::Pad(Pad { padding_config }) = p else {
        return Err(bad(p, "wrong rule"));
    };
    let ([x, pv], [dx, dpv]) = (ins, dims) else {
        return Err(Error::Arity {
            prim: p.name(),
            expected: 2,
            got: ins.len(),
        });
    };
    match (dx, dpv) {
        (None, None) => unbatched(p, b, ins, dims, n),
        (Some(d), None) => {
            let mut config = padding_config.clone();
            config.insert((*d).min(config.len()), (0, 0, 0));
            let prim = Primitive::Pad(Pad {
                padding_config: config,
            });
            emit1(prim, b, vec![x.clone(), pv.clone()], Some(*d))
        }
        (_, Some(dp)) => {
            let xb = batch_first(b, x, *dx, n)?;
            let xa = b.aval(x)?;
            let xshape = match dx {
                Some(d) => remove_axis(&xa.shape, *d),
                None => xa.shape.clone(),
            };
            let mut config = padding_config.clone();
            config.insert(0, (0, 0, 0));
            let zero = Builder::lit(xa.dtype, 0.0);
            let padded = b.add_eqn1(
                Primitive::Pad(Pad {
                    padding_config: config,
                }),
                vec![xb, zero],
            )?;
            let out_shape = b.aval(&padded)?.shape;
            let lie = Atom::Lit(Literal::new(Scalar::Bool(false), DType::Bool, false));
            let falses = if xshape.is_empty() {
                lie
            } else {
                b.add_eqn1(
                    Primitive::BroadcastInDim(BroadcastInDim {
                        shape: xshape,
                        broadcast_dimensions: Vec::new(),
                    }),
                    vec![lie],
                )?
            };
            let truth = Atom::Lit(Literal::new(Scalar::Bool(true), DType::Bool, false));
            let mask = b.add_eqn1(
                Primitive::Pad(Pad {
                    padding_config: padding_config.clone(),
                }),
                vec![falses, truth],
            )?;
            let rank = out_shape.len();
            let mask = b.add_eqn1(
                Primitive::BroadcastInDim(BroadcastInDim {
                    shape: out_shape.clone(),
                    broadcast_dimensions: (1..rank).collect(),
                }),
                vec![mask],
            )?;
            if *dp != 0 {
                return Err(bad(p, "a batched scalar has its mapped axis at 0"));
            }
            let pvb = b.add_eqn1(
                Primitive::BroadcastInDim(BroadcastInDim {
                    shape: out_shape,
                    broadcast_dimensions: vec![0],
                }),
                vec![pv.clone()],
            )?;
            emit1(
                Primitive::SelectN(SelectN),
                b,
                vec![mask, padded, pvb],
                Some(0),
            )
        }
    }
}
