//! Transpose rules of the primitives that can be linear: one exhaustive `match`.
//!
//! A rule receives the cotangents of the equation's outputs (`None` = zero;
//! at least one present) and its operands, each known or linear
//! ([`Operand`]), and returns one entry per operand: the cotangent of a
//! linear operand (`None` = zero) or `None` for a known operand. Primitives
//! that are never linear get a rule that reports the error, so the
//! rule-coverage listing stays about missing work, not about non-linearity.

use super::rules::{Operand, TransposeRule};
use super::{BinaryOp, Primitive, ReduceOp};
use crate::error::{Error, Result};
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval};
use crate::prims::{
    ArgReduce, BroadcastInDim, Checkpoint, Concatenate, ConvertElementType, Cumulative, DotGeneral,
    DynamicSlice, DynamicUpdateSlice, Iota, Pad, Pjit, Reduce, Reshape, Rev, Slice, Squeeze,
    Transpose,
    BroadcastInDim, Clamp, Concatenate, ConvertElementType, IntegerPow, Iota, IsFinite, Pad,
    Reduce, Reshape, Rev, Round, SelectN, Slice, Squeeze, StopGradient, Transpose,
};

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
        Primitive::Iota(Iota { .. })
        | Primitive::Reduce(Reduce {
            op: ReduceOp::Max | ReduceOp::Min | ReduceOp::Prod | ReduceOp::And | ReduceOp::Or,
            ..
        })
        | Primitive::Arg(ArgReduce { .. })
        | Primitive::Cumulative(Cumulative {
            op: CumOp::Prod | CumOp::Max | CumOp::Min | CumOp::Logsumexp,
            ..
        }) => not_linear,
        Primitive::Cumulative(Cumulative { op: CumOp::Sum, .. }) => t_cumsum,
        Primitive::IntegerPow(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
        Primitive::SelectN(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
        Primitive::ConvertElementType(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
        Primitive::StopGradient(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
        Primitive::IsFinite(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
        Primitive::Round(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
        Primitive::Clamp(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
        Primitive::IntegerPow(IntegerPow { .. })
        | Primitive::Iota(Iota { .. })
        | Primitive::StopGradient(StopGradient)
        | Primitive::IsFinite(IsFinite)
        | Primitive::Round(Round { .. })
        | Primitive::Clamp(Clamp) => not_linear,
        Primitive::Arg(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
        Primitive::Cumulative(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
        Primitive::SelectN(SelectN) => t_select_n,
        Primitive::ConvertElementType(ConvertElementType { .. }) => t_convert,
        Primitive::BroadcastInDim(BroadcastInDim { .. }) => t_broadcast_in_dim,
        Primitive::Reshape(Reshape { .. }) | Primitive::Squeeze(Squeeze { .. }) => t_reshape,
        Primitive::Transpose(Transpose { .. }) => t_transpose,
        Primitive::Reduce(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
        Primitive::DotGeneral(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
        Primitive::Rev(Rev { .. }) => t_rev,
        Primitive::Slice(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
        Primitive::Concatenate(Concatenate { .. }) => t_concatenate,
        Primitive::Pad(Pad { .. }) => t_pad,
        Primitive::DynamicSlice(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
        Primitive::DynamicUpdateSlice(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
        Primitive::Pjit(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
        Primitive::Checkpoint(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
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
        Primitive::Dynamic(_) => |p, b, cts, ops| p.transpose(b, cts, ops),
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

fn reshape_to(b: &mut Builder, x: Atom, shape: &[usize]) -> Result<Atom> {
    if b.aval(&x)?.shape == shape {
        return Ok(x);
    }
    b.add_eqn1(
        Primitive::Reshape(Reshape {
            new_sizes: shape.to_vec(),
        }),
        vec![x],
    )
}

fn t_broadcast_in_dim(
    p: &Primitive,
    b: &mut Builder,
    cts: &[Option<Atom>],
    ops: &[Operand],
) -> TOut {
    let Primitive::BroadcastInDim(BroadcastInDim {
        shape,
        broadcast_dimensions,
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
    // Sum over the new axes and over the size-1 operand axes that expanded.
    let mut axes: Vec<usize> = Vec::new();
    for d in 0..shape.len() {
        let expanded = match broadcast_dimensions.iter().position(|&bd| bd == d) {
            None => true,
            Some(i) => a.shape.get(i) == Some(&1) && shape.get(d) != Some(&1),
        };
        if expanded {
            axes.push(d);
        }
    }
    let summed = if axes.is_empty() {
        ct
    } else {
        b.add_eqn1(
            Primitive::Reduce(Reduce {
                op: ReduceOp::Sum,
                axes,
            }),
            vec![ct],
        )?
    };
    Ok(vec![Some(reshape_to(b, summed, &a.shape)?)])
}

fn t_reshape(p: &Primitive, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TOut {
    let Some(ct) = single_ct(p, cts)? else {
        return Ok(vec![None; ops.len()]);
    };
    let [Operand::Linear(a)] = ops else {
        return Ok(vec![None; ops.len()]);
    };
    Ok(vec![Some(reshape_to(b, ct, &a.shape)?)])
}

fn t_transpose(p: &Primitive, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TOut {
    let Primitive::Transpose(Transpose { permutation }) = p else {
        return Err(wrong_rule(p));
    };
    let Some(ct) = single_ct(p, cts)? else {
        return Ok(vec![None; ops.len()]);
    };
    let [Operand::Linear(_)] = ops else {
        return Ok(vec![None; ops.len()]);
    };
    let inverse: Vec<usize> = (0..permutation.len())
        .map(|i| permutation.iter().position(|&q| q == i).unwrap_or(i))
        .collect();
    let c = b.add_eqn1(
        Primitive::Transpose(Transpose {
            permutation: inverse,
        }),
        vec![ct],
    )?;
    Ok(vec![Some(c)])
}

/// `rev` is its own transpose.
fn t_rev(p: &Primitive, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TOut {
    let Some(ct) = single_ct(p, cts)? else {
        return Ok(vec![None; ops.len()]);
    };
    let [Operand::Linear(_)] = ops else {
        return Ok(vec![None; ops.len()]);
    };
    Ok(vec![Some(b.add_eqn1(p.clone(), vec![ct])?)])
}

fn neg_i64(v: i64) -> Result<i64> {
    v.checked_neg().ok_or_else(|| Error::Overflow {
        what: "padding",
        detail: format!("{v}"),
    })
}

/// A `slice` of `x` from `start` to `limit` (no-op when it is everything).
fn slice_of(
    b: &mut Builder,
    x: Atom,
    start: Vec<usize>,
    limit: Vec<usize>,
    strides: Option<Vec<usize>>,
) -> Result<Atom> {
    let shape = b.aval(&x)?.shape;
    let unit = strides.as_ref().is_none_or(|s| s.iter().all(|&v| v == 1));
    if unit && start.iter().all(|&s| s == 0) && limit == shape {
        return Ok(x);
    }
    let strides = if unit { None } else { strides };
    b.add_eqn1(
        Primitive::Slice(Slice {
            start_indices: start,
            limit_indices: limit,
            strides,
        }),
        vec![x],
    )
}

/// `concatenate`: each linear operand's cotangent is its slice of the
/// cotangent.
fn t_concatenate(p: &Primitive, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TOut {
    let Primitive::Concatenate(Concatenate { dimension }) = p else {
        return Err(wrong_rule(p));
    };
    let Some(ct) = single_ct(p, cts)? else {
        return Ok(vec![None; ops.len()]);
    };
    let shape = b.aval(&ct)?.shape;
    let mut out = Vec::with_capacity(ops.len());
    let mut at = 0usize;
    for op in ops {
        let a = op_aval(b, op)?;
        let n = a.shape.get(*dimension).copied().unwrap_or(0);
        let end = at.saturating_add(n);
        out.push(match op {
            Operand::Linear(_) => {
                let mut start = vec![0usize; shape.len()];
                let mut limit = shape.clone();
                if let (Some(s), Some(l)) = (start.get_mut(*dimension), limit.get_mut(*dimension)) {
                    *s = at;
                    *l = end;
                }
                Some(slice_of(b, ct.clone(), start, limit, None)?)
            }
            Operand::Known(_) => None,
        });
        at = end;
    }
    Ok(out)
}

/// `pad`: the operand's cotangent is the cotangent with the padding
/// removed (negative padding becomes zero padding) and strided past the
/// interior padding; the padding value's is the sum of the rest.
fn t_pad(p: &Primitive, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TOut {
    let Primitive::Pad(Pad { padding_config }) = p else {
        return Err(wrong_rule(p));
    };
    let Some(ct) = single_ct(p, cts)? else {
        return Ok(vec![None; ops.len()]);
    };
    let (x, pv) = two_ops(p, ops)?;
    let xa = op_aval(b, x)?;
    let ca = b.aval(&ct)?;
    let mut unpad = Vec::with_capacity(padding_config.len());
    for &(lo, hi, _) in padding_config {
        unpad.push((neg_i64(lo)?, neg_i64(hi)?, 0));
    }
    let t_x = if unpad.iter().all(|&(l, h, _)| l == 0 && h == 0) {
        ct.clone()
    } else {
        b.add_eqn1(
            Primitive::Pad(Pad {
                padding_config: unpad,
            }),
            vec![ct.clone(), Builder::lit(ca.dtype, 0.0)],
        )?
    };
    let inner = b.aval(&t_x)?.shape;
    let steps: Vec<usize> = padding_config
        .iter()
        .map(|&(_, _, int)| usize::try_from(int).unwrap_or(0).saturating_add(1))
        .collect();
    let t_x = slice_of(b, t_x, vec![0; inner.len()], inner, Some(steps))?;
    if b.aval(&t_x)?.shape != xa.shape {
        return Err(Error::shape(
            "pad",
            &[&xa.shape, &ca.shape],
            "transpose: cotangent does not match the padding",
        ));
    }
    let c_pv = match pv {
        Operand::Linear(_) => {
            let all = |b: &mut Builder, v: Atom, rank: usize| {
                b.add_eqn1(
                    Primitive::Reduce(Reduce {
                        op: ReduceOp::Sum,
                        axes: (0..rank).collect(),
                    }),
                    vec![v],
                )
            };
            let total = all(b, ct, ca.ndim())?;
            let inside = all(b, t_x.clone(), xa.ndim())?;
            Some(b.binary(BinaryOp::Sub, total, inside)?)
        }
        Operand::Known(_) => None,
    };
    let c_x = match x {
        Operand::Linear(_) => Some(t_x),
        Operand::Known(_) => None,
    };
    Ok(vec![c_x, c_pv])
}
