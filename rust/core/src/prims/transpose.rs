//! Transpose rules of the primitives that can be linear: one exhaustive `match`.
//!
//! A rule receives the cotangents of the equation's outputs (`None` = zero;
//! at least one present) and its operands, each known or linear
//! ([`Operand`]), and returns one entry per operand: the cotangent of a
//! linear operand (`None` = zero) or `None` for a known operand. Primitives
//! that are never linear get a rule that reports the error, so the
//! rule-coverage listing stays about missing work, not about non-linearity.

use super::rules::{Operand, TransposeRule};
use super::{CumOp, DotDims, Primitive, ReduceOp};
use crate::error::{Error, Result};
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval};
use crate::prims::{
    ArgReduce, BroadcastInDim, Checkpoint, Clamp, ConvertElementType, Cumulative, DotGeneral,
    DynamicSlice, DynamicUpdateSlice, IntegerPow, IsFinite, Pad, Pjit, Reduce, Round, SelectN,
    Slice, StopGradient, Transpose,
};
use std::sync::Arc;

/// The transpose rule of a primitive that can be linear.
/// The transpose rule of a core primitive (families dispatch to their impl).
pub(super) fn core_transpose(
    p: &Primitive,
    b: &mut Builder,
    cts: &[Option<Atom>],
    ops: &[Operand],
) -> TOut {
    let rule: TransposeRule = match p {
        Primitive::Unary(_) | Primitive::Binary(_) | Primitive::Compare(_) => {
            |p, b, cts, ops| p.transpose(b, cts, ops)
        }
        Primitive::Iota(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
        Primitive::IntegerPow(IntegerPow { .. })
        | Primitive::Reduce(Reduce {
            op: ReduceOp::Max | ReduceOp::Min | ReduceOp::Prod | ReduceOp::And | ReduceOp::Or,
            ..
        })
        | Primitive::StopGradient(StopGradient)
        | Primitive::IsFinite(IsFinite)
        | Primitive::Round(Round { .. })
        | Primitive::Clamp(Clamp)
        | Primitive::Arg(ArgReduce { .. })
        | Primitive::Cumulative(Cumulative {
            op: CumOp::Prod | CumOp::Max | CumOp::Min | CumOp::Logsumexp,
            ..
        }) => not_linear,
        Primitive::Cumulative(Cumulative { op: CumOp::Sum, .. }) => t_cumsum,
        Primitive::SelectN(SelectN) => t_select_n,
        Primitive::ConvertElementType(ConvertElementType { .. }) => t_convert,
        Primitive::BroadcastInDim(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
        Primitive::Reshape(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
        Primitive::Squeeze(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
        Primitive::Transpose(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
        Primitive::Reduce(Reduce {
            op: ReduceOp::Sum, ..
        }) => t_reduce_sum,
        Primitive::DotGeneral(DotGeneral { .. }) => t_dot_general,
        Primitive::Rev(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
        Primitive::Slice(Slice { .. }) => t_slice,
        Primitive::Concatenate(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
        Primitive::Pad(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
        Primitive::DynamicSlice(DynamicSlice { .. }) => t_dynamic_slice,
        Primitive::DynamicUpdateSlice(DynamicUpdateSlice) => t_dynamic_update_slice,
        Primitive::Pjit(Pjit { .. }) | Primitive::Checkpoint(Checkpoint { .. }) => t_call,
        Primitive::Custom(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
        Primitive::Control(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
        Primitive::Callback(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
        Primitive::Sort(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
        Primitive::Linalg(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
        Primitive::Collective(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
        Primitive::Threefry2x32(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
        Primitive::Gather(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
        Primitive::Scatter(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
        Primitive::Conv(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
        Primitive::Window(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
    };
    rule(p, b, cts, ops)
}

type TOut = Result<Vec<Option<Atom>>>;

/// The error for transposing a primitive in a non-linear position.
pub(crate) fn not_linear_error(prim: &'static str, detail: &str) -> Error {
    Error::Typecheck(format!(
        "cannot transpose {prim}: it is not linear in its linear operands{detail}"
    ))
}

fn not_linear(p: &Primitive, _b: &mut Builder, _ct: &[Option<Atom>], _ops: &[Operand]) -> TOut {
    Err(not_linear_error(p.name(), ""))
}

fn wrong_rule(p: &Primitive) -> Error {
    Error::InvalidArgument(format!(
        "transpose rule applied to the wrong primitive {}",
        p.name()
    ))
}

/// The single output cotangent (None = zero).
pub(super) fn single_ct(p: &Primitive, cts: &[Option<Atom>]) -> Result<Option<Atom>> {
    match cts {
        [c] => Ok(c.clone()),
        _ => Err(Error::Arity {
            prim: p.name(),
            expected: 1,
            got: cts.len(),
        }),
    }
}

fn op_aval(b: &Builder, op: &Operand) -> Result<Aval> {
    match op {
        Operand::Known(a) => b.aval(a),
        Operand::Linear(a) => Ok(a.clone()),
    }
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
    b.add_eqn1(
        Primitive::Reduce(Reduce {
            op: ReduceOp::Sum,
            axes: (0..cs.len()).collect(),
        }),
        vec![ct],
    )
}

fn two_ops<'a>(p: &Primitive, ops: &'a [Operand]) -> Result<(&'a Operand, &'a Operand)> {
    match ops {
        [a, c] => Ok((a, c)),
        _ => Err(Error::Arity {
            prim: p.name(),
            expected: 2,
            got: ops.len(),
        }),
    }
}

fn t_select_n(p: &Primitive, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TOut {
    let Some(ct) = single_ct(p, cts)? else {
        return Ok(vec![None; ops.len()]);
    };
    let Some((pred, cases)) = ops.split_first() else {
        return Err(Error::Arity {
            prim: p.name(),
            expected: 2,
            got: 0,
        });
    };
    let Operand::Known(pred) = pred else {
        return Err(not_linear_error("select_n", " (the predicate is linear)"));
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
        out.push(Some(b.add_eqn1(Primitive::SelectN(SelectN), ins)?));
    }
    Ok(out)
}

fn t_convert(p: &Primitive, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TOut {
    let Some(ct) = single_ct(p, cts)? else {
        return Ok(vec![None; ops.len()]);
    };
    let [Operand::Linear(a)] = ops else {
        return Ok(vec![None; ops.len()]);
    };
    let cd = b.aval(&ct)?.dtype;
    if !a.dtype.is_float() || !cd.is_float() {
        // Integer operands have no cotangent (zero).
        return Ok(vec![None]);
    }
    if cd == a.dtype {
        return Ok(vec![Some(ct)]);
    }
    let c = b.add_eqn1(
        Primitive::ConvertElementType(ConvertElementType {
            new_dtype: a.dtype,
            weak_type: a.weak_type,
        }),
        vec![ct],
    )?;
    Ok(vec![Some(c)])
}

fn t_reduce_sum(p: &Primitive, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TOut {
    let Primitive::Reduce(Reduce { axes, .. }) = p else {
        return Err(wrong_rule(p));
    };
    let Some(ct) = single_ct(p, cts)? else {
        return Ok(vec![None; ops.len()]);
    };
    let [Operand::Linear(a)] = ops else {
        return Ok(vec![None; ops.len()]);
    };
    let kept: Vec<usize> = (0..a.ndim()).filter(|d| !axes.contains(d)).collect();
    let c = b.add_eqn1(
        Primitive::BroadcastInDim(BroadcastInDim {
            shape: a.shape.clone(),
            broadcast_dimensions: kept,
        }),
        vec![ct],
    )?;
    Ok(vec![Some(c)])
}

/// One side of `dot_general`'s transpose. The cotangent has the output
/// layout `(batch, lhs free, rhs free)`; contracting its `other` free axes
/// with the other operand's free axes (batching the batch axes) gives
/// `(batch, this free, this contracting axes in the other's order)`, which a
/// transpose brings to this operand's layout.
struct DotSide<'a> {
    batch: &'a [usize],
    contract: &'a [usize],
    free: Vec<usize>,
}

fn free_dims(ndim: usize, batch: &[usize], contract: &[usize]) -> Vec<usize> {
    (0..ndim)
        .filter(|d| !batch.contains(d) && !contract.contains(d))
        .collect()
}

fn dot_transpose_side(
    b: &mut Builder,
    ct: Atom,
    other: Atom,
    this_aval: &Aval,
    this: &DotSide,
    oth: &DotSide,
    other_free_start: usize,
) -> Result<Atom> {
    let nb = this.batch.len();
    let other_dtype = b.aval(&other)?.dtype;
    let ct = if b.aval(&ct)?.dtype == other_dtype {
        ct
    } else {
        b.add_eqn1(
            Primitive::ConvertElementType(ConvertElementType {
                new_dtype: other_dtype,
                weak_type: false,
            }),
            vec![ct],
        )?
    };
    let ct_contract: Vec<usize> = (0..oth.free.len())
        .map(|i| other_free_start.saturating_add(i))
        .collect();
    let dims = DotDims {
        lhs_contract: ct_contract,
        rhs_contract: oth.free.clone(),
        lhs_batch: (0..nb).collect(),
        rhs_batch: oth.batch.to_vec(),
    };
    let r = b.add_eqn1(
        Primitive::DotGeneral(DotGeneral {
            dims,
            preferred_element_type: None,
        }),
        vec![ct, other],
    )?;
    // Which axis of this operand each result axis is.
    let mut pos: Vec<usize> = this.batch.to_vec();
    pos.extend(&this.free);
    let mut oc_sorted = oth.contract.to_vec();
    oc_sorted.sort_unstable();
    for d in oc_sorted {
        let k = oth
            .contract
            .iter()
            .position(|&c| c == d)
            .ok_or_else(|| Error::param("dot_general", "dimension_numbers", "bad contract"))?;
        let td = this
            .contract
            .get(k)
            .copied()
            .ok_or_else(|| Error::param("dot_general", "dimension_numbers", "bad contract"))?;
        pos.push(td);
    }
    let perm: Vec<usize> = (0..this_aval.ndim())
        .map(|i| pos.iter().position(|&q| q == i))
        .collect::<Option<Vec<usize>>>()
        .ok_or_else(|| Error::param("dot_general", "dimension_numbers", "bad layout"))?;
    if perm.iter().enumerate().all(|(i, &q)| i == q) {
        return Ok(r);
    }
    b.add_eqn1(
        Primitive::Transpose(Transpose { permutation: perm }),
        vec![r],
    )
}

fn t_dot_general(p: &Primitive, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TOut {
    let Primitive::DotGeneral(DotGeneral { dims, .. }) = p else {
        return Err(wrong_rule(p));
    };
    let Some(ct) = single_ct(p, cts)? else {
        return Ok(vec![None; ops.len()]);
    };
    let (x, y) = two_ops(p, ops)?;
    let xa = op_aval(b, x)?;
    let ya = op_aval(b, y)?;
    let lhs = DotSide {
        batch: &dims.lhs_batch,
        contract: &dims.lhs_contract,
        free: free_dims(xa.ndim(), &dims.lhs_batch, &dims.lhs_contract),
    };
    let rhs = DotSide {
        batch: &dims.rhs_batch,
        contract: &dims.rhs_contract,
        free: free_dims(ya.ndim(), &dims.rhs_batch, &dims.rhs_contract),
    };
    let nb = dims.lhs_batch.len();
    let rhs_free_start = nb.saturating_add(lhs.free.len());
    match (x, y) {
        (Operand::Linear(_), Operand::Known(yv)) => {
            let c = dot_transpose_side(b, ct, yv.clone(), &xa, &lhs, &rhs, rhs_free_start)?;
            Ok(vec![Some(c), None])
        }
        (Operand::Known(xv), Operand::Linear(_)) => {
            let c = dot_transpose_side(b, ct, xv.clone(), &ya, &rhs, &lhs, nb)?;
            Ok(vec![None, Some(c)])
        }
        (Operand::Linear(_), Operand::Linear(_)) => Err(not_linear_error(
            "dot_general",
            " (both operands are linear)",
        )),
        (Operand::Known(_), Operand::Known(_)) => Ok(vec![None, None]),
    }
}

/// `pjit` / `checkpoint`: a new call of the transposed callee, taking the known operands
/// and the cotangent of every output, returning the linear operands'
/// cotangents.
fn t_call(p: &Primitive, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TOut {
    let Some(jaxpr) = p.call_jaxpr() else {
        return Err(wrong_rule(p));
    };
    let linear: Vec<bool> = ops.iter().map(Operand::is_linear).collect();
    let sub = crate::transforms::transpose::transpose_jaxpr(jaxpr, &linear)?;
    let out_avals = jaxpr.out_avals()?;
    if out_avals.len() != cts.len() {
        return Err(Error::Arity {
            prim: p.name(),
            expected: out_avals.len(),
            got: cts.len(),
        });
    }
    let mut ins: Vec<Atom> = ops
        .iter()
        .filter_map(|o| match o {
            Operand::Known(a) => Some(a.clone()),
            Operand::Linear(_) => None,
        })
        .collect();
    for (c, aval) in cts.iter().zip(&out_avals) {
        ins.push(match c {
            Some(c) => c.clone(),
            None => b.zeros(aval)?,
        });
    }
    let call = p
        .with_callee(Arc::new(sub), "transpose")
        .ok_or_else(|| wrong_rule(p))?;
    let outs = b.add_eqn(call, ins, None)?;
    let mut it = outs.into_iter();
    let mut res = Vec::with_capacity(ops.len());
    for o in ops {
        res.push(if o.is_linear() {
            Some(Atom::Var(it.next().ok_or(Error::Arity {
                prim: "pjit",
                expected: linear.iter().filter(|l| **l).count(),
                got: 0,
            })?))
        } else {
            None
        });
    }
    Ok(res)
}

/// `cumsum`: the transpose is the scan in the other direction.
fn t_cumsum(p: &Primitive, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TOut {
    let Primitive::Cumulative(Cumulative { op, axis, reverse }) = p else {
        return Err(wrong_rule(p));
    };
    let Some(ct) = single_ct(p, cts)? else {
        return Ok(vec![None; ops.len()]);
    };
    let [Operand::Linear(_)] = ops else {
        return Ok(vec![None; ops.len()]);
    };
    let c = b.add_eqn1(
        Primitive::Cumulative(Cumulative {
            op: *op,
            axis: *axis,
            reverse: !*reverse,
        }),
        vec![ct],
    )?;
    Ok(vec![Some(c)])
}

fn to_i64(v: usize) -> Result<i64> {
    i64::try_from(v).map_err(|_| Error::Overflow {
        what: "padding",
        detail: format!("{v}"),
    })
}

/// `slice`: the cotangent padded with zeros back to the operand's shape
/// (interior padding fills the skipped strides).
fn t_slice(p: &Primitive, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TOut {
    let Primitive::Slice(Slice {
        start_indices,
        strides,
        ..
    }) = p
    else {
        return Err(wrong_rule(p));
    };
    let Some(ct) = single_ct(p, cts)? else {
        return Ok(vec![None; ops.len()]);
    };
    let [Operand::Linear(a)] = ops else {
        return Ok(vec![None; ops.len()]);
    };
    let ca = b.aval(&ct)?;
    let mut config = Vec::with_capacity(a.ndim());
    for (j, (&d, &out)) in a.shape.iter().zip(&ca.shape).enumerate() {
        let start = start_indices.get(j).copied().unwrap_or(0);
        let st = strides
            .as_ref()
            .and_then(|s| s.get(j).copied())
            .unwrap_or(1);
        let real_limit = match out.checked_sub(1) {
            None => start,
            Some(o1) => o1
                .checked_mul(st)
                .and_then(|x| x.checked_add(start))
                .and_then(|x| x.checked_add(1))
                .unwrap_or(d),
        };
        config.push((
            to_i64(start)?,
            to_i64(d.saturating_sub(real_limit))?,
            to_i64(st.saturating_sub(1))?,
        ));
    }
    let c = b.add_eqn1(
        Primitive::Pad(Pad {
            padding_config: config,
        }),
        vec![ct, Builder::lit(ca.dtype, 0.0)],
    )?;
    Ok(vec![Some(c)])
}

/// The known start indices of a dynamic slice.
fn known_indices(prim: &'static str, ops: &[Operand]) -> Result<Vec<Atom>> {
    ops.iter()
        .map(|o| match o {
            Operand::Known(a) => Ok(a.clone()),
            Operand::Linear(_) => Err(not_linear_error(prim, " (a start index is linear)")),
        })
        .collect()
}

/// `dynamic_slice`: the cotangent written into zeros at the same indices.
fn t_dynamic_slice(p: &Primitive, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TOut {
    let Some(ct) = single_ct(p, cts)? else {
        return Ok(vec![None; ops.len()]);
    };
    let Some((Operand::Linear(a), idx)) = ops.split_first() else {
        return Ok(vec![None; ops.len()]);
    };
    let idx = known_indices(p.name(), idx)?;
    let zeros = b.zeros(a)?;
    let mut ins = vec![zeros, ct];
    ins.extend(idx.iter().cloned());
    let c = b.add_eqn1(Primitive::DynamicUpdateSlice(DynamicUpdateSlice), ins)?;
    let mut out = vec![Some(c)];
    out.extend(idx.iter().map(|_| None));
    Ok(out)
}

/// `dynamic_update_slice`: the operand's cotangent is the cotangent with
/// the window zeroed; the update's is the window.
fn t_dynamic_update_slice(
    p: &Primitive,
    b: &mut Builder,
    cts: &[Option<Atom>],
    ops: &[Operand],
) -> TOut {
    let Some(ct) = single_ct(p, cts)? else {
        return Ok(vec![None; ops.len()]);
    };
    let [x, u, idx @ ..] = ops else {
        return Err(Error::Arity {
            prim: p.name(),
            expected: 2,
            got: ops.len(),
        });
    };
    let idx = known_indices(p.name(), idx)?;
    let ua = op_aval(b, u)?;
    let c_x = match x {
        Operand::Linear(_) => {
            let zeros = b.zeros(&ua)?;
            let mut ins = vec![ct.clone(), zeros];
            ins.extend(idx.iter().cloned());
            Some(b.add_eqn1(Primitive::DynamicUpdateSlice(DynamicUpdateSlice), ins)?)
        }
        Operand::Known(_) => None,
    };
    let c_u = match u {
        Operand::Linear(_) => {
            let mut ins = vec![ct];
            ins.extend(idx.iter().cloned());
            Some(b.add_eqn1(
                Primitive::DynamicSlice(DynamicSlice {
                    slice_sizes: ua.shape.clone(),
                }),
                ins,
            )?)
        }
        Operand::Known(_) => None,
    };
    let mut out = vec![c_x, c_u];
    out.extend(idx.iter().map(|_| None));
    Ok(out)
}
