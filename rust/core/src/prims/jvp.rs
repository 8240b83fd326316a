//! JVP rules: one exhaustive `match` over the primitive families.
//!
//! A rule receives the primal operands (already in the new builder) and their
//! tangents (`None` = symbolic zero; at least one is present when the driver
//! calls a rule), emits the primal equation and the tangent computation, and
//! returns the primal outputs with their tangents (`None` = zero). Tangent
//! expressions are linear in the tangents, with every non-linear factor
//! computed from primals only (`mul t (cos x)`), so partial evaluation can
//! move those factors into the primal program and transposition can read them
//! as known values. Integer, bool and float0 outputs never get a tangent.

use super::rules::JvpRule;
use super::{BinaryOp, CmpOp, CumOp, Primitive, ReduceOp, UnaryOp};
use crate::error::{Error, Result};
use crate::ir::builder::Builder;
use crate::ir::Atom;
use crate::prims::{
    ArgReduce, BroadcastInDim, Checkpoint, Clamp, Concatenate, ConvertElementType, Cumulative,
    DotGeneral, DynamicSlice, DynamicUpdateSlice, IntegerPow, Iota, IsFinite, Pad, Pjit, Reduce,
    Round, SelectN, Slice, StopGradient,
};
use std::sync::Arc;

/// The JVP rule of a primitive.
/// The JVP rule of a core primitive (families dispatch to their impl).
pub(super) fn core_jvp(p: &Primitive, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
    let rule: JvpRule = match p {
        Primitive::Unary(_) | Primitive::Binary(_) | Primitive::Compare(_) => {
            |p, b, xs, ts| p.jvp(b, xs, ts)
        }
        Primitive::Iota(_) => |p, b, xs, ts| p.jvp(b, xs, ts),
        Primitive::IntegerPow(IntegerPow { .. }) => jvp_integer_pow,
        Primitive::SelectN(SelectN) => jvp_select_n,
        Primitive::ConvertElementType(ConvertElementType { .. }) => jvp_convert,
        Primitive::BroadcastInDim(_) => |p, b, xs, ts| p.jvp(b, xs, ts),
        Primitive::Reshape(_) => |p, b, xs, ts| p.jvp(b, xs, ts),
        Primitive::Transpose(_) => |p, b, xs, ts| p.jvp(b, xs, ts),
        Primitive::Squeeze(_) => |p, b, xs, ts| p.jvp(b, xs, ts),
        Primitive::Reduce(Reduce {
            op: ReduceOp::Sum, ..
        }) => jvp_structural,
        Primitive::Reduce(Reduce {
            op: ReduceOp::Max | ReduceOp::Min,
            ..
        }) => jvp_reduce_max,
        Primitive::Reduce(Reduce {
            op: ReduceOp::Prod, ..
        }) => jvp_reduce_prod,
        Primitive::Reduce(Reduce {
            op: ReduceOp::And | ReduceOp::Or,
            ..
        })
        | Primitive::StopGradient(StopGradient)
        | Primitive::IsFinite(IsFinite)
        | Primitive::Round(Round { .. })
        | Primitive::Arg(ArgReduce { .. }) => jvp_zero,
        Primitive::Clamp(Clamp) => jvp_clamp,
        Primitive::Cumulative(Cumulative { op: CumOp::Sum, .. }) => jvp_structural,
        Primitive::Cumulative(Cumulative { .. }) => jvp_cumulative,
        Primitive::DotGeneral(DotGeneral { .. }) => jvp_dot_general,
        Primitive::Rev(_) => |p, b, xs, ts| p.jvp(b, xs, ts),
        Primitive::Concatenate(_) => |p, b, xs, ts| p.jvp(b, xs, ts),
        Primitive::Pad(_) => |p, b, xs, ts| p.jvp(b, xs, ts),
        Primitive::Slice(Slice { .. })
        | Primitive::DynamicSlice(DynamicSlice { .. })
        | Primitive::DynamicUpdateSlice(DynamicUpdateSlice) => jvp_linear_prefix,
        Primitive::Pjit(Pjit { .. }) | Primitive::Checkpoint(Checkpoint { .. }) => jvp_call,
        Primitive::Custom(_) => |p, b, xs, ts| p.jvp(b, xs, ts),
        Primitive::Control(_) => |p, b, xs, ts| p.jvp(b, xs, ts),
        Primitive::Callback(_) => |p, b, xs, ts| p.jvp(b, xs, ts),
        Primitive::Sort(_) => |p, b, xs, ts| p.jvp(b, xs, ts),
        Primitive::Linalg(_) => |p, b, xs, ts| p.jvp(b, xs, ts),
        Primitive::Collective(_) => |p, b, xs, ts| p.jvp(b, xs, ts),
        Primitive::Threefry2x32(_) => |p, b, xs, ts| p.jvp(b, xs, ts),
        Primitive::Gather(_) => |p, b, xs, ts| p.jvp(b, xs, ts),
        Primitive::Scatter(_) => |p, b, xs, ts| p.jvp(b, xs, ts),
        Primitive::Conv(_) => |p, b, xs, ts| p.jvp(b, xs, ts),
        Primitive::Window(_) => |p, b, xs, ts| p.jvp(b, xs, ts),
    };
    rule(p, b, xs, ts)
}

type JvpOut = Result<(Vec<Atom>, Vec<Option<Atom>>)>;

fn arity_err(p: &Primitive, expected: usize, got: usize) -> Error {
    Error::Arity {
        prim: p.name(),
        expected,
        got,
    }
}

fn wrong_rule(p: &Primitive) -> Error {
    Error::InvalidArgument(format!(
        "jvp rule applied to the wrong primitive {}",
        p.name()
    ))
}

/// Emits the primal equation unchanged.
fn primal(p: &Primitive, b: &mut Builder, x: &[Atom]) -> Result<Vec<Atom>> {
    Ok(b.add_eqn(p.clone(), x.to_vec(), None)?
        .into_iter()
        .map(Atom::Var)
        .collect())
}

fn primal1(p: &Primitive, b: &mut Builder, x: &[Atom]) -> Result<Atom> {
    b.add_eqn1(p.clone(), x.to_vec())
}

fn one<T: Clone>(p: &Primitive, xs: &[T]) -> Result<T> {
    match xs {
        [a] => Ok(a.clone()),
        _ => Err(arity_err(p, 1, xs.len())),
    }
}

fn two<T: Clone>(p: &Primitive, xs: &[T]) -> Result<(T, T)> {
    match xs {
        [a, c] => Ok((a.clone(), c.clone())),
        _ => Err(arity_err(p, 2, xs.len())),
    }
}

pub(super) fn is_float(b: &Builder, a: &Atom) -> Result<bool> {
    Ok(b.aval(a)?.dtype.is_float())
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

/// Primitives whose outputs have no tangent (comparisons, iota).
fn jvp_zero(p: &Primitive, b: &mut Builder, x: &[Atom], _t: &[Option<Atom>]) -> JvpOut {
    let outs = primal(p, b, x)?;
    let n = outs.len();
    Ok((outs, vec![None; n]))
}

fn jvp_integer_pow(p: &Primitive, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
    let Primitive::IntegerPow(IntegerPow { y }) = p else {
        return Err(wrong_rule(p));
    };
    let x = one(p, xs)?;
    let t = one(p, ts)?;
    let z = primal1(p, b, xs)?;
    let Some(t) = t else {
        return Ok((vec![z], vec![None]));
    };
    let dtype = b.aval(&x)?.dtype;
    if *y == 0 || !dtype.is_float() {
        return Ok((vec![z], vec![None]));
    }
    if *y == 1 {
        return Ok((vec![z], vec![Some(t)]));
    }
    let ym1 = y
        .checked_sub(1)
        .ok_or_else(|| Error::param("integer_pow", "y", "exponent out of range"))?;
    let pw = if ym1 == 1 {
        x
    } else {
        b.add_eqn1(Primitive::IntegerPow(IntegerPow { y: ym1 }), vec![x])?
    };
    let coef = mul(b, Builder::lit(dtype, f64::from(*y)), pw)?;
    Ok((vec![z], vec![Some(mul(b, t, coef)?)]))
}

fn jvp_select_n(p: &Primitive, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
    let z = primal1(p, b, xs)?;
    let zaval = b.aval(&z)?;
    let (Some((pred, _)), Some((_, tcases))) = (xs.split_first(), ts.split_first()) else {
        return Err(arity_err(p, 2, xs.len()));
    };
    if !zaval.dtype.is_float() || tcases.iter().all(Option::is_none) {
        return Ok((vec![z], vec![None]));
    }
    let mut zeros: Option<Atom> = None;
    let mut ins = vec![pred.clone()];
    for t in tcases {
        let t = match t {
            Some(t) => t.clone(),
            None => match &zeros {
                Some(zr) => zr.clone(),
                None => {
                    let zr = b.zeros(&zaval)?;
                    zeros = Some(zr.clone());
                    zr
                }
            },
        };
        ins.push(t);
    }
    let tz = b.add_eqn1(Primitive::SelectN(SelectN), ins)?;
    Ok((vec![z], vec![Some(tz)]))
}

fn jvp_convert(p: &Primitive, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
    let x = one(p, xs)?;
    let t = one(p, ts)?;
    let z = primal1(p, b, xs)?;
    let tz = match t {
        Some(t) if is_float(b, &x)? && is_float(b, &z)? => Some(primal1(p, b, &[t])?),
        _ => None,
    };
    Ok((vec![z], vec![tz]))
}

/// Linear structural ops (and `reduce_sum`): the tangent is the same op
/// applied to the tangent.
fn jvp_structural(p: &Primitive, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
    let t = one(p, ts)?;
    let z = primal1(p, b, xs)?;
    let tz = match t {
        Some(t) if is_float(b, &z)? => Some(primal1(p, b, &[t])?),
        _ => None,
    };
    Ok((vec![z], vec![tz]))
}

/// Data-movement primitives linear in their leading operands (all of
/// `concatenate`'s; `pad`'s operand and padding value; the operand (and
/// update) of the dynamic slices, whose start indices have no tangent): the
/// tangent is the same primitive applied to the tangents, with zeros for
/// missing ones and the primal trailing operands.
fn jvp_linear_prefix(p: &Primitive, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
    let k = match p {
        Primitive::Concatenate(Concatenate { .. }) => xs.len(),
        Primitive::Pad(Pad { .. }) | Primitive::DynamicUpdateSlice(DynamicUpdateSlice) => 2,
        _ => 1,
    };
    if xs.len() < k || ts.len() != xs.len() {
        return Err(arity_err(p, k, xs.len()));
    }
    let z = primal1(p, b, xs)?;
    let lin = ts.get(..k).unwrap_or(&[]);
    if !is_float(b, &z)? || lin.iter().all(Option::is_none) {
        return Ok((vec![z], vec![None]));
    }
    let mut ins = Vec::with_capacity(xs.len());
    for (x, t) in xs.iter().zip(lin) {
        ins.push(match t {
            Some(t) => t.clone(),
            None => {
                let a = b.aval(x)?;
                b.zeros(&a)?
            }
        });
    }
    ins.extend(xs.iter().skip(k).cloned());
    let tz = primal1(p, b, &ins)?;
    Ok((vec![z], vec![Some(tz)]))
}

/// `reduce_max`: the tangent averages the tangents at the positions that
/// attain the maximum (ties share equally, as JAX).
fn jvp_reduce_max(p: &Primitive, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
    let Primitive::Reduce(Reduce { axes, .. }) = p else {
        return Err(wrong_rule(p));
    };
    let x = one(p, xs)?;
    let t = one(p, ts)?;
    let z = primal1(p, b, xs)?;
    let xaval = b.aval(&x)?;
    let Some(t) = t.filter(|_| xaval.dtype.is_float()) else {
        return Ok((vec![z], vec![None]));
    };
    let kept: Vec<usize> = (0..xaval.ndim()).filter(|d| !axes.contains(d)).collect();
    let zb = b.add_eqn1(
        Primitive::BroadcastInDim(BroadcastInDim {
            shape: xaval.shape.clone(),
            broadcast_dimensions: kept,
        }),
        vec![z.clone()],
    )?;
    let eq = b.add_eqn1(Primitive::Compare(CmpOp::Eq), vec![x, zb])?;
    let mask = convert(b, eq, xaval.dtype)?;
    let sum = |b: &mut Builder, a: Atom| {
        b.add_eqn1(
            Primitive::Reduce(Reduce {
                op: ReduceOp::Sum,
                axes: axes.clone(),
            }),
            vec![a],
        )
    };
    let count = sum(b, mask.clone())?;
    let tm = mul(b, t, mask)?;
    let ts = sum(b, tm)?;
    let tz = b.binary(BinaryOp::Div, ts, count)?;
    Ok((vec![z], vec![Some(tz)]))
}

fn jvp_dot_general(p: &Primitive, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
    let (x, y) = two(p, xs)?;
    let (tx, ty) = two(p, ts)?;
    let z = primal1(p, b, xs)?;
    if !is_float(b, &z)? || !is_float(b, &x)? {
        return Ok((vec![z], vec![None]));
    }
    let l = tx.map(|t| primal1(p, b, &[t, y.clone()])).transpose()?;
    let r = ty.map(|t| primal1(p, b, &[x.clone(), t])).transpose()?;
    Ok((vec![z], vec![add_opt(b, l, r)?]))
}

/// `pjit` / `checkpoint`: a new call of the JVP of the callee, taking the
/// primals and the present tangents and returning the primal outputs and
/// present tangents.
fn jvp_call(p: &Primitive, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
    let Some(jaxpr) = p.call_jaxpr() else {
        return Err(wrong_rule(p));
    };
    if xs.len() != ts.len() {
        return Err(arity_err(p, xs.len(), ts.len()));
    }
    let nonzeros: Vec<bool> = ts.iter().map(Option::is_some).collect();
    let (sub, out_nz) = crate::transforms::jvp::jvp_jaxpr(jaxpr, &nonzeros, false)?;
    let mut ins = xs.to_vec();
    ins.extend(ts.iter().flatten().cloned());
    let call = p
        .with_callee(Arc::new(sub), "jvp")
        .ok_or_else(|| wrong_rule(p))?;
    let outs = b.add_eqn(call, ins, None)?;
    let n = out_nz.len();
    let (prim_outs, tan_outs) = outs
        .split_at_checked(n)
        .ok_or(arity_err(p, n, outs.len()))?;
    let mut tan_iter = tan_outs.iter();
    let mut tangents = Vec::with_capacity(n);
    for nz in out_nz {
        tangents.push(if nz {
            tan_iter.next().map(|v| Atom::Var(*v))
        } else {
            None
        });
    }
    Ok((prim_outs.iter().map(|v| Atom::Var(*v)).collect(), tangents))
}

/// `x` broadcast back to `shape` along the kept (non-reduced) axes.
fn unreduce(b: &mut Builder, x: Atom, shape: &[usize], axes: &[usize]) -> Result<Atom> {
    let kept: Vec<usize> = (0..shape.len()).filter(|d| !axes.contains(d)).collect();
    b.add_eqn1(
        Primitive::BroadcastInDim(BroadcastInDim {
            shape: shape.to_vec(),
            broadcast_dimensions: kept,
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

fn reduce_sum(b: &mut Builder, x: Atom, axes: Vec<usize>) -> Result<Atom> {
    b.add_eqn1(
        Primitive::Reduce(Reduce {
            op: ReduceOp::Sum,
            axes,
        }),
        vec![x],
    )
}

/// The derivative of a product with respect to one factor, exact with
/// zeros: with `nz` zeros among the factors and `p` the product of the
/// nonzero ones, it is `p / x` when `nz = 0`, `p` at the zero when `nz = 1`,
/// and 0 otherwise. `nz` and `p` are given broadcast against `x`.
fn prod_others(b: &mut Builder, x: &Atom, x_safe: Atom, nz: Atom, p: Atom) -> Result<Atom> {
    let dtype = b.aval(x)?.dtype;
    let shape = b.aval(x)?.shape;
    let zeros = b.zeros(&crate::ir::Aval::new(shape, dtype))?;
    let none = eq(b, nz.clone(), Builder::lit(dtype, 0.0))?;
    let one_zero = eq(b, nz, Builder::lit(dtype, 1.0))?;
    let at_zero = eq(b, x.clone(), Builder::lit(dtype, 0.0))?;
    let q = b.binary(BinaryOp::Div, p.clone(), x_safe)?;
    let single = select(b, at_zero, zeros.clone(), p)?;
    let single = select(b, one_zero, zeros, single)?;
    select(b, none, single, q)
}

/// `x` with its zeros replaced by ones, and the zero indicator as `dtype`.
fn split_zeros(b: &mut Builder, x: &Atom) -> Result<(Atom, Atom)> {
    let aval = b.aval(x)?;
    let ones = b.full(&aval, 1.0)?;
    let is_zero = eq(b, x.clone(), Builder::lit(aval.dtype, 0.0))?;
    let x_safe = select(b, is_zero.clone(), x.clone(), ones)?;
    let zf = convert(b, is_zero, aval.dtype)?;
    Ok((x_safe, zf))
}

/// `reduce_prod`: `Σ t_i Π_{j≠i} x_j`, exact where factors are zero.
fn jvp_reduce_prod(p: &Primitive, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
    let Primitive::Reduce(Reduce { axes, .. }) = p else {
        return Err(wrong_rule(p));
    };
    let x = one(p, xs)?;
    let t = one(p, ts)?;
    let z = primal1(p, b, xs)?;
    let xaval = b.aval(&x)?;
    let Some(t) = t.filter(|_| xaval.dtype.is_float()) else {
        return Ok((vec![z], vec![None]));
    };
    let (x_safe, zf) = split_zeros(b, &x)?;
    let nz = reduce_sum(b, zf, axes.clone())?;
    let pnz = b.add_eqn1(p.clone(), vec![x_safe.clone()])?;
    let nz = unreduce(b, nz, &xaval.shape, axes)?;
    let pnz = unreduce(b, pnz, &xaval.shape, axes)?;
    let d = prod_others(b, &x, x_safe, nz, pnz)?;
    let td = mul(b, t, d)?;
    let tz = reduce_sum(b, td, axes.clone())?;
    Ok((vec![z], vec![Some(tz)]))
}

/// `clamp(lo, x, hi)`: the tangent of `x` where `lo < x < hi`, of `lo`
/// where `lo > x`, of `hi` where `hi < x` (as JAX; ties pass nothing).
fn jvp_clamp(p: &Primitive, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
    let ([lo, x, hi], [tlo, tx, thi]) = (xs, ts) else {
        return Err(arity_err(p, 3, xs.len()));
    };
    let z = primal1(p, b, xs)?;
    let zaval = b.aval(&z)?;
    if !zaval.dtype.is_float() {
        return Ok((vec![z], vec![None]));
    }
    let zeros = b.zeros(&zaval)?;
    let pick = |b: &mut Builder, t: &Option<Atom>, cond: Atom| -> Result<Option<Atom>> {
        match t {
            Some(t) => {
                let t = broadcast_to(b, t.clone(), &zaval.shape)?;
                Ok(Some(select(b, cond, zeros.clone(), t)?))
            }
            None => Ok(None),
        }
    };
    let gt_lo = b.add_eqn1(Primitive::Compare(CmpOp::Gt), vec![x.clone(), lo.clone()])?;
    let lt_hi = b.add_eqn1(Primitive::Compare(CmpOp::Lt), vec![x.clone(), hi.clone()])?;
    let inside = b.binary(BinaryOp::And, gt_lo, lt_hi)?;
    let inside = broadcast_to(b, inside, &zaval.shape)?;
    let below = b.add_eqn1(Primitive::Compare(CmpOp::Gt), vec![lo.clone(), x.clone()])?;
    let below = broadcast_to(b, below, &zaval.shape)?;
    let above = b.add_eqn1(Primitive::Compare(CmpOp::Lt), vec![hi.clone(), x.clone()])?;
    let above = broadcast_to(b, above, &zaval.shape)?;
    let a = pick(b, tx, inside)?;
    let c = pick(b, tlo, below)?;
    let d = pick(b, thi, above)?;
    let s = add_opt(b, a, c)?;
    Ok((vec![z], vec![add_opt(b, s, d)?]))
}

/// The scans other than `cumsum`, through pairwise weights: with the pair
/// axis `j` inserted after the scanned axis `i`, `t_out[i] = Σ_j W[i, j]
/// t[j]` over the prefix `j ≤ i` (suffix when `reverse`), `W` computed
/// from primals only:
///
/// * `cummax`/`cummin`: the prefix positions attaining the result, ties
///   sharing equally (as `reduce_max`);
/// * `cumlogsumexp`: `exp(x[j] - y[i])`;
/// * `cumprod`: the product of the other prefix factors (exact with zeros).
///
/// O(n²) in the scanned length: the reference rule, not a fast one.
fn jvp_cumulative(p: &Primitive, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
    let Primitive::Cumulative(Cumulative { op, axis, reverse }) = p else {
        return Err(wrong_rule(p));
    };
    let x = one(p, xs)?;
    let t = one(p, ts)?;
    let y = primal1(p, b, xs)?;
    let xaval = b.aval(&x)?;
    let Some(t) = t.filter(|_| xaval.dtype.is_float()) else {
        return Ok((vec![y], vec![None]));
    };
    let dtype = xaval.dtype;
    let a = *axis;
    let n = *xaval
        .shape
        .get(a)
        .ok_or_else(|| Error::param(p.name(), "axis", "out of range"))?;
    let ja = a.saturating_add(1);
    let mut pshape = xaval.shape.clone();
    pshape.insert(ja, n);
    let r = xaval.ndim();
    // Operand axis k lands at k (i-side) or skips the pair axis (j-side).
    let on_i: Vec<usize> = (0..r)
        .map(|k| if k <= a { k } else { k.saturating_add(1) })
        .collect();
    let on_j: Vec<usize> = (0..r)
        .map(|k| if k < a { k } else { k.saturating_add(1) })
        .collect();
    let bcast = |b: &mut Builder, v: Atom, dims: &[usize]| {
        b.add_eqn1(
            Primitive::BroadcastInDim(BroadcastInDim {
                shape: pshape.clone(),
                broadcast_dimensions: dims.to_vec(),
            }),
            vec![v],
        )
    };
    let ii = b.add_eqn1(
        Primitive::Iota(Iota {
            dtype: crate::DType::I32,
            shape: pshape.clone(),
            dimension: a,
        }),
        vec![],
    )?;
    let jj = b.add_eqn1(
        Primitive::Iota(Iota {
            dtype: crate::DType::I32,
            shape: pshape.clone(),
            dimension: ja,
        }),
        vec![],
    )?;
    let cmp = if *reverse { CmpOp::Ge } else { CmpOp::Le };
    let tri = b.add_eqn1(Primitive::Compare(cmp), vec![jj, ii])?;
    let paval = crate::ir::Aval::new(pshape.clone(), dtype);
    let zeros = b.zeros(&paval)?;
    let xj = bcast(b, x.clone(), &on_j)?;
    let w = match op {
        CumOp::Max | CumOp::Min => {
            let yi = bcast(b, y.clone(), &on_i)?;
            let hit = eq(b, xj, yi)?;
            let hit = convert(b, hit, dtype)?;
            let m = select(b, tri, zeros, hit)?;
            let count = reduce_sum(b, m.clone(), vec![ja])?;
            let count = bcast(b, count, &on_i)?;
            b.binary(BinaryOp::Div, m, count)?
        }
        CumOp::Logsumexp => {
            let yi = bcast(b, y.clone(), &on_i)?;
            let diff = b.binary(BinaryOp::Sub, xj, yi)?;
            let ninf = b.full(&paval, f64::NEG_INFINITY)?;
            let diff = select(b, tri, ninf, diff)?;
            b.unary(UnaryOp::Exp, diff)?
        }
        CumOp::Prod => {
            let (x_safe, zf) = split_zeros(b, &x)?;
            let scan = |b: &mut Builder, op: CumOp, v: Atom| {
                b.add_eqn1(
                    Primitive::Cumulative(Cumulative {
                        op,
                        axis: a,
                        reverse: *reverse,
                    }),
                    vec![v],
                )
            };
            let nz = scan(b, CumOp::Sum, zf)?;
            let pnz = scan(b, CumOp::Prod, x_safe.clone())?;
            let nz = bcast(b, nz, &on_i)?;
            let pnz = bcast(b, pnz, &on_i)?;
            let x_safe = bcast(b, x_safe, &on_j)?;
            let d = prod_others(b, &xj, x_safe, nz, pnz)?;
            select(b, tri, zeros, d)?
        }
        CumOp::Sum => return Err(wrong_rule(p)),
    };
    let tj = bcast(b, t, &on_j)?;
    let tw = mul(b, tj, w)?;
    let tout = reduce_sum(b, tw, vec![ja])?;
    Ok((vec![y], vec![Some(tout)]))
}
