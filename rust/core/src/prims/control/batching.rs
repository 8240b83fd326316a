//! vmap rules of the control-flow primitives.
//!
//! Batched operands are moved to axis 0 first (for `scan`'s `xs`, axis 1:
//! axis 0 is the scanned one), so every sub-jaxpr is batched with dims
//! `Some(0)` / `None`.
//! * `cond` with an unbatched index stays a `cond` of batched branches; with
//!   a batched index every branch runs and `select_n` picks per member.
//! * `while`: carries are batched by fixpoint; a batched predicate makes every
//!   carry batched and the loop runs while any member's predicate holds,
//!   finished members keeping their carry (a `select_n` in the body).
//! * `scan` batches its body, carries by fixpoint.

use super::{cond_out_count, split3, ControlFlow, Scan};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ir::builder::Builder;
use crate::ir::splice::splice;
use crate::ir::{Atom, ClosedJaxpr};
use crate::prims::batch::{add_batch_axis, move_axis};
use crate::prims::family::arity_error as arity;
use crate::prims::{BroadcastInDim, Clamp, ConvertElementType, SelectN};
use crate::prims::{Primitive, ReduceOp};
use crate::transforms::batch::{batch_jaxpr, batch_jaxpr_natural};
use std::sync::Arc;

type Batched = (Vec<Atom>, Vec<Option<usize>>);

/// `x` with its batch dim (if any) moved to `to`.
fn to_axis(b: &mut Builder, x: &Atom, d: Option<usize>, to: usize) -> Result<Atom> {
    match d {
        Some(d) => move_axis(b, x.clone(), d, to),
        None => Ok(x.clone()),
    }
}

/// `x` batched at `to`, broadcast when it is not batched.
fn force_axis(b: &mut Builder, x: &Atom, d: Option<usize>, to: usize, n: usize) -> Result<Atom> {
    match d {
        Some(d) => move_axis(b, x.clone(), d, to),
        None => add_batch_axis(b, x.clone(), n, to),
    }
}

fn front(flags: &[bool]) -> Vec<Option<usize>> {
    flags.iter().map(|f| f.then_some(0)).collect()
}

fn batched(dims: &[Option<usize>]) -> Vec<bool> {
    dims.iter().map(Option::is_some).collect()
}

fn emit(b: &mut Builder, c: ControlFlow, ins: Vec<Atom>) -> Result<Vec<Atom>> {
    Ok(b.add_eqn(Primitive::Control(c), ins, None)?
        .into_iter()
        .map(Atom::Var)
        .collect())
}

pub(super) fn batch_cond(
    branches: &[Arc<ClosedJaxpr>], b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize,
) -> Result<Batched> {
    let (index, ops) = ins.split_first().ok_or(arity("cond", 1, 0))?;
    let (index_d, op_dims) = dims.split_first().ok_or(arity("cond", 1, 0))?;
    let ops = ops
        .iter()
        .zip(op_dims)
        .map(|(x, d)| to_axis(b, x, *d, 0))
        .collect::<Result<Vec<_>>>()?;
    let in_dims = front(&batched(op_dims));
    let nout = cond_out_count(branches)?;
    if index_d.is_none() {
        let mut out_b = vec![false; nout];
        for br in branches {
            let (_, od) = batch_jaxpr_natural(br, &in_dims, n)?;
            for (o, d) in out_b.iter_mut().zip(od) {
                *o |= d.is_some();
            }
        }
        let out_dims = front(&out_b);
        let new_branches = branches
            .iter()
            .map(|br| batch_jaxpr(br, &in_dims, n, &out_dims).map(Arc::new))
            .collect::<Result<Vec<_>>>()?;
        let mut args = vec![index.clone()];
        args.extend(ops);
        let outs = emit(
            b,
            ControlFlow::Cond {
                branches: new_branches,
            },
            args,
        )?;
        return Ok((outs, out_dims));
    }
    // A per-member index: run every branch, select per member.
    let all = vec![Some(0); nout];
    let mut per_branch: Vec<Vec<Atom>> = Vec::with_capacity(branches.len());
    for br in branches {
        let bj = batch_jaxpr(br, &in_dims, n, &all)?;
        per_branch.push(splice(b, &bj, &ops)?);
    }
    let idx = member_index(b, index, *index_d, branches.len())?;
    let mut outs = Vec::with_capacity(nout);
    for k in 0..nout {
        let cases = per_branch
            .iter()
            .map(|o| o.get(k).cloned().ok_or(arity("cond", nout, o.len())))
            .collect::<Result<Vec<_>>>()?;
        outs.push(select_members(b, &idx, cases)?);
    }
    Ok((outs, all))
}

/// The per-member branch index as int32 at axis 0, clamped into range.
fn member_index(b: &mut Builder, index: &Atom, d: Option<usize>, nb: usize) -> Result<Atom> {
    let mut idx = to_axis(b, index, d, 0)?;
    if b.aval(&idx)?.dtype != DType::I32 {
        idx = b.add_eqn1(
            Primitive::ConvertElementType(ConvertElementType {
                new_dtype: DType::I32,
                weak_type: false,
            }),
            vec![idx],
        )?;
    }
    let hi = i32::try_from(nb.saturating_sub(1)).unwrap_or(i32::MAX);
    b.add_eqn1(
        Primitive::Clamp(Clamp),
        vec![
            Builder::lit(DType::I32, 0.0),
            idx,
            Builder::lit(DType::I32, f64::from(hi)),
        ],
    )
}

/// `select_n(pred, *cases)` with a rank-1 `pred` (bool or int32) broadcast
/// over the member axis 0 of the cases.
fn select_members(b: &mut Builder, pred: &Atom, cases: Vec<Atom>) -> Result<Atom> {
    let first = cases.first().ok_or(arity("select_n", 1, 0))?;
    if cases.len() == 1 {
        return Ok(first.clone());
    }
    let shape = b.aval(first)?.shape;
    let p = b.add_eqn1(
        Primitive::BroadcastInDim(BroadcastInDim {
            shape,
            broadcast_dimensions: vec![0],
        }),
        vec![pred.clone()],
    )?;
    let mut args = vec![p];
    args.extend(cases);
    b.add_eqn1(Primitive::SelectN(SelectN), args)
}

/// Carries batched by fixpoint: a carry is batched when its init is or the
/// body makes it so. Returns the carry flags and the body's natural out dims.
fn carry_batched(
    body: &ClosedJaxpr, prefix: &[Option<usize>], mut carry: Vec<bool>, suffix: &[Option<usize>],
    n: usize,
) -> Result<(Vec<bool>, Vec<Option<usize>>)> {
    let nk = carry.len();
    for _ in 0..=nk {
        let mut dims = prefix.to_vec();
        dims.extend(front(&carry));
        dims.extend_from_slice(suffix);
        let (_, od) = batch_jaxpr_natural(body, &dims, n)?;
        let out = batched(od.get(..nk).unwrap_or_default());
        let next: Vec<bool> = carry.iter().zip(&out).map(|(c, o)| *c || *o).collect();
        if next == carry {
            return Ok((carry, od));
        }
        carry = next;
    }
    Err(Error::InvalidArgument(
        "vmap: the carry batching fixpoint did not converge".into(),
    ))
}

#[allow(clippy::too_many_arguments)]
pub(super) fn batch_while(
    cond: &ClosedJaxpr, body: &ClosedJaxpr, cc: usize, bc: usize, b: &mut Builder, ins: &[Atom],
    dims: &[Option<usize>], n: usize,
) -> Result<Batched> {
    let (cconsts, bconsts, init) = split3("while", ins, cc, bc)?;
    let (cc_d, bc_d, k_d) = split3("while", dims, cc, bc)?;
    let fronted = |b: &mut Builder, xs: &[Atom], ds: &[Option<usize>]| -> Result<Vec<Atom>> {
        xs.iter()
            .zip(ds)
            .map(|(x, d)| to_axis(b, x, *d, 0))
            .collect()
    };
    let cconsts = fronted(b, cconsts, cc_d)?;
    let bconsts = fronted(b, bconsts, bc_d)?;
    let cc_dims = front(&batched(cc_d));
    let bc_dims = front(&batched(bc_d));
    let (mut k_b, _) = carry_batched(body, &bc_dims, batched(k_d), &[], n)?;
    let mut cond_dims = cc_dims.clone();
    cond_dims.extend(front(&k_b));
    let (_, pred_d) = batch_jaxpr_natural(cond, &cond_dims, n)?;
    let pred_batched = pred_d.first().copied().flatten().is_some();
    if pred_batched {
        k_b = vec![true; k_b.len()];
    }
    let k_dims = front(&k_b);
    let mut cond_dims = cc_dims.clone();
    cond_dims.extend_from_slice(&k_dims);
    let mut body_dims = bc_dims.clone();
    body_dims.extend_from_slice(&k_dims);
    let cond_b = batch_jaxpr(cond, &cond_dims, n, &[pred_batched.then_some(0)])?;
    let body_b = batch_jaxpr(body, &body_dims, n, &k_dims)?;
    let mut carry = Vec::with_capacity(init.len());
    for ((x, d), want) in init.iter().zip(k_d).zip(&k_b) {
        carry.push(if *want {
            force_axis(b, x, *d, 0, n)?
        } else {
            x.clone()
        });
    }
    if !pred_batched {
        let mut args = cconsts;
        args.extend(bconsts);
        args.extend(carry);
        let outs = emit(
            b,
            ControlFlow::While {
                cond_jaxpr: Arc::new(cond_b),
                body_jaxpr: Arc::new(body_b),
                cond_nconsts: cc,
                body_nconsts: bc,
            },
            args,
        )?;
        return Ok((outs, k_dims));
    }
    let (any_cond, masked_body) = masked_loop(&cond_b, &body_b, cc, bc)?;
    let mut args = cconsts.clone();
    args.extend(cconsts);
    args.extend(bconsts);
    args.extend(carry);
    let outs = emit(
        b,
        ControlFlow::While {
            cond_jaxpr: Arc::new(any_cond),
            body_jaxpr: Arc::new(masked_body),
            cond_nconsts: cc,
            body_nconsts: cc.saturating_add(bc),
        },
        args,
    )?;
    Ok((outs, k_dims))
}

/// For a per-member predicate: a loop condition "any member still running"
/// and a body `(cond consts, body consts, carry)` that advances only the
/// running members.
fn masked_loop(
    cond_b: &ClosedJaxpr, body_b: &ClosedJaxpr, cc: usize, bc: usize,
) -> Result<(ClosedJaxpr, ClosedJaxpr)> {
    let mut cb = Builder::new();
    let cin = cb.add_inputs(cond_b.in_avals()?)?;
    let pred = splice(&mut cb, cond_b, &cin)?;
    let pred = pred.first().cloned().ok_or(arity("while", 1, 0))?;
    let any = cb.reduce(ReduceOp::Or, pred, vec![0])?;
    let any_cond = cb.build(vec![any])?;

    let mut bb = Builder::new();
    let cond_in = cond_b.in_avals()?;
    let body_in = body_b.in_avals()?;
    let cconsts = cond_in
        .get(..cc)
        .unwrap_or_default()
        .iter()
        .map(|a| bb.add_input(a.clone()).map(Atom::Var))
        .collect::<Result<Vec<_>>>()?;
    let rest = body_in
        .iter()
        .map(|a| bb.add_input(a.clone()).map(Atom::Var))
        .collect::<Result<Vec<_>>>()?;
    let carry = rest.get(bc..).unwrap_or_default().to_vec();
    let mut pin = cconsts;
    pin.extend(carry.iter().cloned());
    let pred = splice(&mut bb, cond_b, &pin)?;
    let pred = pred.first().cloned().ok_or(arity("while", 1, 0))?;
    let next = splice(&mut bb, body_b, &rest)?;
    let mut outs = Vec::with_capacity(carry.len());
    for (old, new) in carry.into_iter().zip(next) {
        outs.push(select_members(&mut bb, &pred, vec![old, new])?);
    }
    Ok((any_cond, bb.finish(outs)?))
}

pub(super) fn batch_scan(
    s: &Scan, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize,
) -> Result<Batched> {
    let (nc, nk) = (s.num_consts, s.num_carry);
    let (consts, init, xs) = split3("scan", ins, nc, nk)?;
    let (c_d, k_d, x_d) = split3("scan", dims, nc, nk)?;
    let mut args = Vec::with_capacity(ins.len());
    for (x, d) in consts.iter().zip(c_d) {
        args.push(to_axis(b, x, *d, 0)?);
    }
    let c_dims = front(&batched(c_d));
    let x_dims = front(&batched(x_d));
    let (k_b, od) = carry_batched(&s.jaxpr, &c_dims, batched(k_d), &x_dims, n)?;
    for ((x, d), want) in init.iter().zip(k_d).zip(&k_b) {
        args.push(if *want {
            force_axis(b, x, *d, 0, n)?
        } else {
            x.clone()
        });
    }
    for (x, d) in xs.iter().zip(x_d) {
        args.push(to_axis(b, x, *d, 1)?);
    }
    let k_dims = front(&k_b);
    let ys_b = batched(od.get(nk..).unwrap_or_default());
    let mut body_dims = c_dims;
    body_dims.extend_from_slice(&k_dims);
    body_dims.extend(x_dims);
    let mut out_dims = k_dims.clone();
    out_dims.extend(front(&ys_b));
    let body = batch_jaxpr(&s.jaxpr, &body_dims, n, &out_dims)?;
    let outs = emit(
        b,
        ControlFlow::Scan(Scan {
            jaxpr: Arc::new(body),
            ..s.clone()
        }),
        args,
    )?;
    let mut result_dims = k_dims;
    result_dims.extend(ys_b.iter().map(|y| y.then_some(1)));
    Ok((outs, result_dims))
}
