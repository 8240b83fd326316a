//! Differentiation rules of the control-flow primitives.
//!
//! * JVP: `cond` differentiates every branch with the union of their
//!   nonzero output tangents; `while` and `scan` find the carry tangents by
//!   fixpoint (a carry gets a tangent when its init has one or the body gives
//!   it one) and run one loop over primals and tangents together.
//! * Partial evaluation (`split`): `cond` splits every branch and joins their
//!   residuals (each branch fills the others' with zeros); `scan` splits its
//!   body with the carries' knownness found by fixpoint, and stacks the
//!   per-iteration residuals as extra outputs (residuals that are plain
//!   consts are passed as consts instead); `while` computes its known carries
//!   in a known loop and runs the whole loop again in the unknown part
//!   (forward mode only, as JAX).
//! * Transpose: `cond` transposes every branch; `scan` runs the transposed
//!   body backwards with the carry cotangents (plus accumulators for linear
//!   consts) as its carry; `while` has none (JAX's error suggesting `scan`).

use super::{cond_out_count, split3, ControlFlow, Scan};
use crate::error::{Error, Result};
use crate::ir::builder::Builder;
use crate::ir::rewire::{permute_inputs, rewire_inputs, select_outputs, InputSource};
use crate::ir::splice::splice;
use crate::ir::{Atom, Aval, ClosedJaxpr};
use crate::prims::family::{arity_error as arity, known_atoms};
use crate::prims::Operand;
use crate::prims::{BinaryOp, Primitive};
use crate::transforms::jvp::{jvp_jaxpr, tangent_aval};
use crate::transforms::partial_eval::{partial_eval_jaxpr, PartialEval, SplitEqn, SplitInput};
use crate::transforms::transpose::transpose_jaxpr;
use std::sync::Arc;

pub(super) const WHILE_REVERSE_ERROR: &str =
    "Reverse-mode differentiation does not work for lax.while_loop \
     or lax.fori_loop with dynamic start/stop values. Try using lax.scan, or using fori_loop with \
     static start/stop.";

fn or_into(acc: &mut [bool], other: &[bool]) {
    for (a, o) in acc.iter_mut().zip(other) {
        *a |= *o;
    }
}

fn is_float(avals: &[Aval]) -> Vec<bool> {
    avals.iter().map(|a| a.dtype.is_inexact()).collect()
}

fn and(a: &[bool], b: &[bool]) -> Vec<bool> {
    a.iter().zip(b).map(|(x, y)| *x && *y).collect()
}

/// The JVP of `j` whose output tangents are exactly `want` (zeros
/// materialized where the natural JVP has none). Takes `(primals...,
/// tangents of inputs with nz...)`, returns `(outputs..., tangents of outputs
/// with want...)`.
fn jvp_exact(j: &ClosedJaxpr, nz: &[bool], want: &[bool]) -> Result<ClosedJaxpr> {
    let (jj, got) = jvp_jaxpr(j, nz, false)?;
    if got == want {
        return Ok(jj);
    }
    let out_avals = j.out_avals()?;
    let mut b = Builder::new();
    let ins = b.add_inputs(jj.in_avals()?)?;
    let outs = splice(&mut b, &jj, &ins)?;
    let n = out_avals.len();
    let (prim, tans) = outs
        .split_at_checked(n)
        .ok_or(arity("jvp", n, outs.len()))?;
    let mut result = prim.to_vec();
    let mut it = tans.iter();
    for ((g, w), aval) in got.iter().zip(want).zip(&out_avals) {
        match (g, w) {
            (true, true) => result.push(it.next().cloned().ok_or(arity("jvp", n, 0))?),
            (false, true) => result.push(b.zeros(&tangent_aval(aval))?),
            (true, false) => {
                return Err(Error::InvalidArgument(
                    "jvp: a sub-jaxpr has a tangent output the loop did not expect".into(),
                ))
            }
            (false, false) => {}
        }
    }
    b.finish(result)
}

/// Tangents with zeros materialized where `want` asks for one.
fn instantiate(
    b: &mut Builder, ts: &[Option<Atom>], avals: &[Aval], want: &[bool],
) -> Result<Vec<Atom>> {
    let mut out = Vec::new();
    for ((t, a), w) in ts.iter().zip(avals).zip(want) {
        if *w {
            out.push(match t {
                Some(t) => t.clone(),
                None => b.zeros(&tangent_aval(a))?,
            });
        }
    }
    Ok(out)
}

/// Sum of operand counts (saturating: counts of values in memory).
fn sum(xs: &[usize]) -> usize {
    xs.iter().fold(0usize, |a, b| a.saturating_add(*b))
}

fn count(v: &[bool]) -> usize {
    v.iter().filter(|x| **x).count()
}

/// `0..n` shifted by `start`.
fn span(start: usize, n: usize) -> impl Iterator<Item = usize> {
    (0..n).map(move |k| k.saturating_add(start))
}

fn emit(b: &mut Builder, c: ControlFlow, ins: Vec<Atom>) -> Result<Vec<Atom>> {
    Ok(b.add_eqn(Primitive::Control(c), ins, None)?
        .into_iter()
        .map(Atom::Var)
        .collect())
}

/// Splits `outs` at `n`.
fn cut(outs: Vec<Atom>, n: usize, prim: &'static str) -> Result<(Vec<Atom>, Vec<Atom>)> {
    if outs.len() < n {
        return Err(arity(prim, n, outs.len()));
    }
    let mut first = outs;
    let second = first.split_off(n);
    Ok((first, second))
}

/// Tangent list with `Some` where `nz`, taking them in order from `tans`.
fn spread(nz: &[bool], tans: Vec<Atom>) -> Vec<Option<Atom>> {
    let mut it = tans.into_iter();
    nz.iter()
        .map(|z| if *z { it.next() } else { None })
        .collect()
}

// ---------------------------------------------------------------- JVP

pub(super) fn jvp_cond(
    branches: &[Arc<ClosedJaxpr>], b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>],
) -> Result<(Vec<Atom>, Vec<Option<Atom>>)> {
    let (index, ops) = xs.split_first().ok_or(arity("cond", 1, 0))?;
    let op_ts = ts.get(1..).unwrap_or_default();
    let nz: Vec<bool> = op_ts.iter().map(Option::is_some).collect();
    let first = branches.first().ok_or(arity("cond", 1, 0))?;
    let out_avals = first.out_avals()?;
    let mut out_nz = vec![false; out_avals.len()];
    for br in branches {
        or_into(&mut out_nz, &jvp_jaxpr(br, &nz, false)?.1);
    }
    let out_nz = and(&out_nz, &is_float(&out_avals));
    let new_branches = branches
        .iter()
        .map(|br| jvp_exact(br, &nz, &out_nz).map(Arc::new))
        .collect::<Result<Vec<_>>>()?;
    let mut ins = vec![index.clone()];
    ins.extend_from_slice(ops);
    ins.extend(op_ts.iter().flatten().cloned());
    let outs = emit(
        b,
        ControlFlow::Cond {
            branches: new_branches,
        },
        ins,
    )?;
    let (prim, tans) = cut(outs, out_avals.len(), "cond")?;
    Ok((prim, spread(&out_nz, tans)))
}

/// Carry tangents by fixpoint: `carry_nz` grows until the body gives no
/// carry a tangent its input lacks. `prefix_nz` covers the body inputs
/// before the carry, `suffix_nz` those after it.
fn carry_fixpoint(
    body: &ClosedJaxpr, prefix_nz: &[bool], mut carry_nz: Vec<bool>, suffix_nz: &[bool],
    carry_float: &[bool],
) -> Result<(Vec<bool>, Vec<bool>)> {
    let nk = carry_nz.len();
    for _ in 0..=nk {
        let mut nz = prefix_nz.to_vec();
        nz.extend_from_slice(&carry_nz);
        nz.extend_from_slice(suffix_nz);
        let (_, out_nz) = jvp_jaxpr(body, &nz, false)?;
        let mut next = carry_nz.clone();
        or_into(&mut next, out_nz.get(..nk).unwrap_or_default());
        let next = and(&next, carry_float);
        if next == carry_nz {
            return Ok((carry_nz, out_nz.get(nk..).unwrap_or_default().to_vec()));
        }
        carry_nz = next;
    }
    Err(Error::InvalidArgument(
        "jvp: the carry tangent fixpoint did not converge".into(),
    ))
}

pub(super) fn jvp_while(
    cond: &Arc<ClosedJaxpr>, body: &ClosedJaxpr, cc: usize, bc: usize, b: &mut Builder,
    xs: &[Atom], ts: &[Option<Atom>],
) -> Result<(Vec<Atom>, Vec<Option<Atom>>)> {
    let (cconsts, bconsts, init) = split3("while", xs, cc, bc)?;
    let (_, bconst_t, init_t) = split3("while", ts, cc, bc)?;
    let carry_avals: Vec<Aval> = init.iter().map(|a| b.aval(a)).collect::<Result<_>>()?;
    let nk = init.len();
    let bc_nz: Vec<bool> = bconst_t.iter().map(Option::is_some).collect();
    let init_nz: Vec<bool> = init_t.iter().map(Option::is_some).collect();
    let (carry_nz, _) = carry_fixpoint(body, &bc_nz, init_nz, &[], &is_float(&carry_avals))?;
    let prim = Primitive::Control(ControlFlow::While {
        cond_jaxpr: cond.clone(),
        body_jaxpr: Arc::new(body.clone()),
        cond_nconsts: cc,
        body_nconsts: bc,
    });
    if !carry_nz.iter().any(|z| *z) {
        let outs = b.add_eqn(prim, xs.to_vec(), None)?;
        return Ok((outs.into_iter().map(Atom::Var).collect(), vec![None; nk]));
    }
    let (nbt, nkt) = (count(&bc_nz), count(&carry_nz));
    let mut nz = bc_nz.clone();
    nz.extend_from_slice(&carry_nz);
    let jj = jvp_exact(body, &nz, &carry_nz)?;
    // (bconsts, carry, bconst_t, carry_t) -> (bconsts, bconst_t, carry, carry_t)
    let order: Vec<usize> = span(0, bc)
        .chain(span(sum(&[bc, nk]), nbt))
        .chain(span(bc, nk))
        .chain(span(sum(&[bc, nk, nbt]), nkt))
        .collect();
    let body_j = permute_inputs(&jj, &order)?;
    // The predicate ignores the tangents.
    let mut spec: Vec<InputSource> = (0..sum(&[cc, nk])).map(InputSource::Invar).collect();
    for (a, z) in carry_avals.iter().zip(&carry_nz) {
        if *z {
            spec.push(InputSource::Unused(tangent_aval(a)));
        }
    }
    let cond_j = rewire_inputs(cond, &spec)?;
    let mut ins: Vec<Atom> = cconsts.to_vec();
    ins.extend_from_slice(bconsts);
    ins.extend(bconst_t.iter().flatten().cloned());
    ins.extend_from_slice(init);
    ins.extend(instantiate(b, init_t, &carry_avals, &carry_nz)?);
    let outs = emit(
        b,
        ControlFlow::While {
            cond_jaxpr: Arc::new(cond_j),
            body_jaxpr: Arc::new(body_j),
            cond_nconsts: cc,
            body_nconsts: sum(&[bc, nbt]),
        },
        ins,
    )?;
    let (prim_outs, tans) = cut(outs, nk, "while")?;
    Ok((prim_outs, spread(&carry_nz, tans)))
}

pub(super) fn jvp_scan(
    s: &Scan, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>],
) -> Result<(Vec<Atom>, Vec<Option<Atom>>)> {
    let (nc, nk) = (s.num_consts, s.num_carry);
    let (consts, init, xs_in) = split3("scan", xs, nc, nk)?;
    let (const_t, init_t, xs_t) = split3("scan", ts, nc, nk)?;
    let carry_avals: Vec<Aval> = init.iter().map(|a| b.aval(a)).collect::<Result<_>>()?;
    let c_nz: Vec<bool> = const_t.iter().map(Option::is_some).collect();
    let x_nz: Vec<bool> = xs_t.iter().map(Option::is_some).collect();
    let init_nz: Vec<bool> = init_t.iter().map(Option::is_some).collect();
    let (carry_nz, ys_nz) =
        carry_fixpoint(&s.jaxpr, &c_nz, init_nz, &x_nz, &is_float(&carry_avals))?;
    let y_avals = s.jaxpr.out_avals()?.get(nk..).unwrap_or_default().to_vec();
    let ys_nz = and(&ys_nz, &is_float(&y_avals));
    let nx = xs_in.len();
    let ny = ys_nz.len();
    let (nct, nkt, nxt, nyt) = (count(&c_nz), count(&carry_nz), count(&x_nz), count(&ys_nz));
    let mut nz = c_nz.clone();
    nz.extend_from_slice(&carry_nz);
    nz.extend_from_slice(&x_nz);
    let mut want = carry_nz.clone();
    want.extend_from_slice(&ys_nz);
    let jj = jvp_exact(&s.jaxpr, &nz, &want)?;
    let base = sum(&[nc, nk, nx]);
    // (c, k, x, ct, kt, xt) -> (c, ct, k, kt, x, xt)
    let order: Vec<usize> = span(0, nc)
        .chain(span(base, nct))
        .chain(span(nc, nk))
        .chain(span(sum(&[base, nct]), nkt))
        .chain(span(sum(&[nc, nk]), nx))
        .chain(span(sum(&[base, nct, nkt]), nxt))
        .collect();
    // (k, y, kt, yt) -> (k, kt, y, yt)
    let out_order: Vec<usize> = span(0, nk)
        .chain(span(sum(&[nk, ny]), nkt))
        .chain(span(nk, ny))
        .chain(span(sum(&[nk, ny, nkt]), nyt))
        .collect();
    let body = select_outputs(&permute_inputs(&jj, &order)?, &out_order)?;
    let lin = |k: usize| s.linear.get(k).copied().unwrap_or(false);
    let mut linear: Vec<bool> = (0..nc).map(lin).collect();
    linear.extend(std::iter::repeat_n(true, nct));
    linear.extend(span(nc, nk).map(lin));
    linear.extend(std::iter::repeat_n(true, nkt));
    linear.extend(span(sum(&[nc, nk]), nx).map(lin));
    linear.extend(std::iter::repeat_n(true, nxt));
    let mut ins: Vec<Atom> = consts.to_vec();
    ins.extend(const_t.iter().flatten().cloned());
    ins.extend_from_slice(init);
    ins.extend(instantiate(b, init_t, &carry_avals, &carry_nz)?);
    ins.extend_from_slice(xs_in);
    ins.extend(xs_t.iter().flatten().cloned());
    let outs = emit(
        b,
        ControlFlow::Scan(s.over(body, sum(&[nc, nct]), sum(&[nk, nkt]), linear)),
        ins,
    )?;
    let (carry, rest) = cut(outs, nk, "scan")?;
    let (carry_t, rest) = cut(rest, nkt, "scan")?;
    let (ys, ys_t) = cut(rest, ny, "scan")?;
    let mut prim = carry;
    prim.extend(ys);
    let mut tans = spread(&carry_nz, carry_t);
    tans.extend(spread(&ys_nz, ys_t));
    Ok((prim, tans))
}

// ---------------------------------------------------------------- partial evaluation

/// Splits an equation with some unknown operands (`None`: the whole
/// equation is unknown).
pub fn split(c: &ControlFlow, ins: &[Atom], in_unk: &[bool]) -> Result<Option<SplitEqn>> {
    match c {
        ControlFlow::Cond { branches } => split_cond(branches, ins, in_unk),
        ControlFlow::While {
            cond_jaxpr,
            body_jaxpr,
            cond_nconsts,
            body_nconsts,
        } => split_while(
            c,
            cond_jaxpr,
            body_jaxpr,
            *cond_nconsts,
            *body_nconsts,
            ins,
            in_unk,
        ),
        ControlFlow::Scan(s) => split_scan(s, ins, in_unk),
    }
}

fn split_cond(
    branches: &[Arc<ClosedJaxpr>], ins: &[Atom], in_unk: &[bool],
) -> Result<Option<SplitEqn>> {
    let (index, ops) = ins.split_first().ok_or(arity("cond", 1, 0))?;
    let (index_unk, ops_unk) = in_unk.split_first().ok_or(arity("cond", 1, 0))?;
    if *index_unk {
        return Ok(None);
    }
    let nout = cond_out_count(branches)?;
    let mut out_unk = vec![false; nout];
    for br in branches {
        or_into(
            &mut out_unk,
            &partial_eval_jaxpr(br, ops_unk, &vec![false; nout])?.out_unknowns,
        );
    }
    let pes = branches
        .iter()
        .map(|br| partial_eval_jaxpr(br, ops_unk, &out_unk))
        .collect::<Result<Vec<_>>>()?;
    // Residual avals of every branch, laid out one branch after another.
    let mut res_avals: Vec<Vec<Aval>> = Vec::with_capacity(pes.len());
    for pe in &pes {
        let outs = pe.known.out_avals()?;
        let start = outs.len().saturating_sub(pe.num_res);
        res_avals.push(outs.get(start..).unwrap_or_default().to_vec());
    }
    let all_res: Vec<Aval> = res_avals.iter().flatten().cloned().collect();
    let mut known = Vec::with_capacity(pes.len());
    let mut unknown = Vec::with_capacity(pes.len());
    for (k, pe) in pes.iter().enumerate() {
        known.push(Arc::new(pad_residual_outputs(
            &pe.known, pe.num_res, &res_avals, k,
        )?));
        unknown.push(Arc::new(widen_residual_inputs(pe, &res_avals, k)?));
    }
    let mut known_ins = vec![index.clone()];
    known_ins.extend(
        ops.iter()
            .zip(ops_unk)
            .filter(|(_, u)| !**u)
            .map(|(a, _)| a.clone()),
    );
    let mut unknown_ins = vec![SplitInput::Atom(index.clone())];
    unknown_ins.extend((0..all_res.len()).map(SplitInput::Residual));
    unknown_ins.extend(
        ops.iter()
            .zip(ops_unk)
            .filter(|(_, u)| **u)
            .map(|(a, _)| SplitInput::Atom(a.clone())),
    );
    Ok(Some(SplitEqn {
        known: Some((
            Primitive::Control(ControlFlow::Cond { branches: known }),
            known_ins,
        )),
        residuals: all_res,
        out_unknowns: out_unk,
        unknown: (
            Primitive::Control(ControlFlow::Cond { branches: unknown }),
            unknown_ins,
        ),
        unknown_emits_all: false,
    }))
}

/// Branch `k`'s unknown part taking `(residuals of every branch...,
/// unknown operands...)`, ignoring the other branches' residuals.
fn widen_residual_inputs(
    pe: &PartialEval, res_avals: &[Vec<Aval>], k: usize,
) -> Result<ClosedJaxpr> {
    let n_res = res_avals
        .iter()
        .fold(0usize, |n, r| n.saturating_add(r.len()));
    let mut spec = Vec::with_capacity(n_res);
    let mut pos = 0usize;
    for (j, avals) in res_avals.iter().enumerate() {
        for a in avals {
            spec.push(if j == k {
                pos = pos.saturating_add(1);
                InputSource::Invar(pos.saturating_sub(1))
            } else {
                InputSource::Unused(a.clone())
            });
        }
    }
    let n_unk_ops = pe.unknown.jaxpr.invars.len().saturating_sub(pe.num_res);
    spec.extend(span(pe.num_res, n_unk_ops).map(InputSource::Invar));
    rewire_inputs(&pe.unknown, &spec)
}

/// Branch `k`'s known part with outputs `(known outs..., residuals of every
/// branch...)`, the other branches' residuals filled with zeros.
fn pad_residual_outputs(
    known: &ClosedJaxpr, num_res: usize, res_avals: &[Vec<Aval>], k: usize,
) -> Result<ClosedJaxpr> {
    let mut b = Builder::new();
    let ins = b.add_inputs(known.in_avals()?)?;
    let outs = splice(&mut b, known, &ins)?;
    let n_known = outs.len().saturating_sub(num_res);
    let (mut result, own) = cut(outs, n_known, "cond")?;
    for (j, avals) in res_avals.iter().enumerate() {
        if j == k {
            result.extend(own.iter().cloned());
        } else {
            for a in avals {
                result.push(b.zeros(a)?);
            }
        }
    }
    b.finish(result)
}

/// Knownness of the carry by fixpoint: a carry is unknown when its init is
/// or the body makes it so. Returns the carry mask and the body's split.
fn carry_unknowns(
    body: &ClosedJaxpr, prefix: &[bool], mut carry: Vec<bool>, suffix: &[bool], n_outs: usize,
) -> Result<(Vec<bool>, crate::transforms::partial_eval::PartialEval)> {
    let nk = carry.len();
    for _ in 0..=nk {
        let mut unk = prefix.to_vec();
        unk.extend_from_slice(&carry);
        unk.extend_from_slice(suffix);
        let mut inst = carry.clone();
        inst.resize(n_outs, false);
        let pe = partial_eval_jaxpr(body, &unk, &inst)?;
        let out = pe.out_unknowns.get(..nk).unwrap_or_default();
        if out == carry.as_slice() {
            return Ok((carry, pe));
        }
        or_into(&mut carry, out);
    }
    Err(Error::InvalidArgument(
        "partial_eval: the carry knownness fixpoint did not converge".into(),
    ))
}

fn pick<T: Clone>(xs: &[T], mask: &[bool], want: bool) -> Vec<T> {
    xs.iter()
        .zip(mask)
        .filter(|(_, m)| **m == want)
        .map(|(x, _)| x.clone())
        .collect()
}

/// Where a residual of a split scan body comes from.
enum Residual {
    /// A known const of the body: passed as is.
    Const(Atom),
    /// A row of a known `xs`: that `xs` is passed.
    Xs(Atom),
    /// Computed per iteration: stacked output `k` of the known scan.
    Stacked(usize),
}

fn split_scan(s: &Scan, ins: &[Atom], in_unk: &[bool]) -> Result<Option<SplitEqn>> {
    let (nc, nk) = (s.num_consts, s.num_carry);
    let (consts, init, xs) = split3("scan", ins, nc, nk)?;
    let (c_unk, k_unk, x_unk) = split3("scan", in_unk, nc, nk)?;
    let n_outs = s.jaxpr.jaxpr.outvars.len();
    let (k_unk, pe) = carry_unknowns(&s.jaxpr, c_unk, k_unk.to_vec(), x_unk, n_outs)?;
    let out_unk = pe.out_unknowns.clone();
    let n_kc = nc.saturating_sub(count(c_unk));
    let known_j = &pe.known;
    let n_known_outs = known_j.jaxpr.outvars.len().saturating_sub(pe.num_res);
    // Residuals that are known inputs of the body are not computed by the
    // known loop: a const goes to the unknown loop as a const, an `x` as the
    // outer `xs` it is a row of. The others are stacked per iteration.
    let known_consts = pick(consts, c_unk, false);
    let known_xs = pick(xs, x_unk, false);
    let n_kk = nk.saturating_sub(count(&k_unk));
    let (res_kind, stacked) =
        classify_residuals(&pe, n_known_outs, &known_consts, &known_xs, (n_kc, n_kk));
    let mut keep: Vec<usize> = (0..n_known_outs).collect();
    keep.extend(stacked.iter().copied());
    let known_body = select_outputs(known_j, &keep)?;
    let stacked_avals: Vec<Aval> = known_body
        .out_avals()?
        .get(n_known_outs..)
        .unwrap_or_default()
        .iter()
        .map(|a| {
            let mut shape = vec![s.length];
            shape.extend_from_slice(&a.shape);
            Aval::weak(shape, a.dtype, a.weak_type)
        })
        .collect();
    let lin = |k: usize| s.linear.get(k).copied().unwrap_or(false);
    let all_unk: Vec<bool> = c_unk.iter().chain(&k_unk).chain(x_unk).copied().collect();
    let known_linear: Vec<bool> = (0..ins.len())
        .filter(|k| !all_unk.get(*k).copied().unwrap_or(true))
        .map(lin)
        .collect();
    let mut known_ins = known_consts.clone();
    known_ins.extend(pick(init, &k_unk, false));
    known_ins.extend(pick(xs, x_unk, false));
    let known = s.over(
        known_body,
        n_kc,
        nk.saturating_sub(count(&k_unk)),
        known_linear,
    );
    let (unknown, unknown_ins) = unknown_scan(
        s,
        &pe,
        &res_kind,
        (consts, init, xs),
        (c_unk, &k_unk, x_unk),
    )?;
    Ok(Some(SplitEqn {
        known: Some((Primitive::Control(ControlFlow::Scan(known)), known_ins)),
        residuals: stacked_avals,
        out_unknowns: out_unk,
        unknown: (Primitive::Control(ControlFlow::Scan(unknown)), unknown_ins),
        unknown_emits_all: false,
    }))
}

/// How each residual of the split scan body reaches the unknown loop
/// (see [`Residual`]), and the known body outputs stacked per iteration.
/// `n_kc`, `n_kk`: the known body's numbers of consts and carries.
fn classify_residuals(
    pe: &PartialEval, n_known_outs: usize, known_consts: &[Atom], known_xs: &[Atom],
    (n_kc, n_kk): (usize, usize),
) -> (Vec<Residual>, Vec<usize>) {
    let known_j = &pe.known;
    let mut res_kind: Vec<Residual> = Vec::with_capacity(pe.num_res);
    let mut stacked: Vec<usize> = Vec::new();
    for r in 0..pe.num_res {
        let out = n_known_outs.saturating_add(r);
        let pos = match known_j.jaxpr.outvars.get(out) {
            Some(Atom::Var(v)) => known_j.jaxpr.invars.iter().position(|iv| iv == v),
            _ => None,
        };
        let kind = match pos {
            Some(p) if p < n_kc => known_consts.get(p).cloned().map(Residual::Const),
            Some(p) if p >= sum(&[n_kc, n_kk]) => known_xs
                .get(p.saturating_sub(sum(&[n_kc, n_kk])))
                .cloned()
                .map(Residual::Xs),
            _ => None,
        };
        res_kind.push(kind.unwrap_or_else(|| {
            stacked.push(out);
            Residual::Stacked(stacked.len().saturating_sub(1))
        }));
    }
    (res_kind, stacked)
}

/// The unknown loop of a split scan and its operands: the body of `pe`
/// with its inputs reordered to scan's (consts, carry, xs) layout.
fn unknown_scan(
    s: &Scan, pe: &PartialEval, res_kind: &[Residual],
    (consts, init, xs): (&[Atom], &[Atom], &[Atom]),
    (c_unk, k_unk, x_unk): (&[bool], &[bool], &[bool]),
) -> Result<(Scan, Vec<SplitInput>)> {
    // Unknown body: (residuals..., unknown c, k, x) ->
    // (const residuals, unknown c, unknown k, per-row residuals, unknown x).
    let nr = pe.num_res;
    let (n_uc, n_uk, n_ux) = (count(c_unk), count(k_unk), count(x_unk));
    let is_const = |k: &Residual| matches!(k, Residual::Const(_));
    let mut order: Vec<usize> = (0..nr)
        .filter(|r| res_kind.get(*r).is_some_and(is_const))
        .collect();
    order.extend(span(nr, n_uc));
    order.extend(span(sum(&[nr, n_uc]), n_uk));
    order.extend((0..nr).filter(|r| res_kind.get(*r).is_some_and(|k| !is_const(k))));
    order.extend(span(sum(&[nr, n_uc, n_uk]), n_ux));
    let unknown_body = permute_inputs(&pe.unknown, &order)?;
    let mut unknown_ins: Vec<SplitInput> = res_kind
        .iter()
        .filter_map(|k| match k {
            Residual::Const(a) => Some(SplitInput::Atom(a.clone())),
            _ => None,
        })
        .collect();
    let n_const_res = unknown_ins.len();
    unknown_ins.extend(pick(consts, c_unk, true).into_iter().map(SplitInput::Atom));
    unknown_ins.extend(pick(init, k_unk, true).into_iter().map(SplitInput::Atom));
    unknown_ins.extend(res_kind.iter().filter_map(|k| match k {
        Residual::Const(_) => None,
        Residual::Xs(a) => Some(SplitInput::Atom(a.clone())),
        Residual::Stacked(i) => Some(SplitInput::Residual(*i)),
    }));
    unknown_ins.extend(pick(xs, x_unk, true).into_iter().map(SplitInput::Atom));
    let unknown_linear = vec![false; unknown_ins.len()];
    let unknown = s.over(
        unknown_body,
        sum(&[n_const_res, n_uc]),
        n_uk,
        unknown_linear,
    );
    Ok((unknown, unknown_ins))
}

#[allow(clippy::too_many_arguments)]
fn split_while(
    c: &ControlFlow, cond: &ClosedJaxpr, body: &ClosedJaxpr, cc: usize, bc: usize, ins: &[Atom],
    in_unk: &[bool],
) -> Result<Option<SplitEqn>> {
    let (cconsts, bconsts, init) = split3("while", ins, cc, bc)?;
    let (cc_unk, bc_unk, k_unk) = split3("while", in_unk, cc, bc)?;
    if cc_unk.iter().any(|u| *u) {
        return Ok(None);
    }
    let nk = init.len();
    let (k_unk, pe) = carry_unknowns(body, bc_unk, k_unk.to_vec(), &[], nk)?;
    if k_unk.iter().all(|u| *u) {
        return Ok(None);
    }
    // The predicate must not read an unknown carry.
    let mut cond_unk = vec![false; cc];
    cond_unk.extend_from_slice(&k_unk);
    let cond_pe = partial_eval_jaxpr(cond, &cond_unk, &[false])?;
    if cond_pe.out_unknowns.first().copied().unwrap_or(true) {
        return Ok(None);
    }
    let known_cond = select_outputs(&cond_pe.known, &[0])?;
    let n_known_carry = nk.saturating_sub(count(&k_unk));
    let known_body = select_outputs(&pe.known, &(0..n_known_carry).collect::<Vec<_>>())?;
    let mut known_ins = cconsts.to_vec();
    known_ins.extend(pick(bconsts, bc_unk, false));
    known_ins.extend(pick(init, &k_unk, false));
    let known = ControlFlow::While {
        cond_jaxpr: Arc::new(known_cond),
        body_jaxpr: Arc::new(known_body),
        cond_nconsts: cc,
        body_nconsts: bc.saturating_sub(count(bc_unk)),
    };
    Ok(Some(SplitEqn {
        known: Some((Primitive::Control(known), known_ins)),
        residuals: Vec::new(),
        out_unknowns: k_unk,
        unknown: (
            Primitive::Control(c.clone()),
            ins.iter().cloned().map(SplitInput::Atom).collect(),
        ),
        unknown_emits_all: true,
    }))
}

// ---------------------------------------------------------------- transpose

/// Cotangents with zeros materialized.
fn cts_or_zeros(b: &mut Builder, cts: &[Option<Atom>], avals: &[Aval]) -> Result<Vec<Atom>> {
    if cts.len() != avals.len() {
        return Err(arity("transpose", avals.len(), cts.len()));
    }
    cts.iter()
        .zip(avals)
        .map(|(c, a)| match c {
            Some(c) => Ok(c.clone()),
            None => b.zeros(a),
        })
        .collect()
}

pub(super) fn transpose_cond(
    branches: &[Arc<ClosedJaxpr>], b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand],
) -> Result<Vec<Option<Atom>>> {
    let (index, rest) = ops.split_first().ok_or(arity("cond", 1, 0))?;
    let Operand::Known(index) = index else {
        return Err(Error::Typecheck(
            "cond: the branch index cannot be linear".into(),
        ));
    };
    let linear: Vec<bool> = rest.iter().map(Operand::is_linear).collect();
    let new_branches = branches
        .iter()
        .map(|br| transpose_jaxpr(br, &linear).map(Arc::new))
        .collect::<Result<Vec<_>>>()?;
    let out_avals = branches.first().ok_or(arity("cond", 1, 0))?.out_avals()?;
    let mut ins = vec![index.clone()];
    ins.extend(known_atoms(rest));
    ins.extend(cts_or_zeros(b, cts, &out_avals)?);
    let outs = emit(
        b,
        ControlFlow::Cond {
            branches: new_branches,
        },
        ins,
    )?;
    let mut result = vec![None];
    result.extend(spread(&linear, outs));
    Ok(result)
}

/// The body of a transposed scan, from the transpose `bt` of the scan
/// body: `(known c ; acc, ct_carry ; known x, ct_y) -> (acc + ct_c,
/// ct_carry_in ; ct_x)`. Takes the avals of the known and of the linear
/// consts (those of the accumulators, returned back), of the carry, of the
/// known xs and of the ys.
fn transposed_scan_body(
    bt: &ClosedJaxpr, (kc_avals, lc_avals): (Vec<Aval>, Vec<Aval>), k_avals: &[Aval],
    (kx_avals, y_avals): (Vec<Aval>, &[Aval]),
) -> Result<(ClosedJaxpr, Vec<Aval>)> {
    let nk = k_avals.len();
    let mut nb = Builder::new();
    let mut input = |avals: Vec<Aval>| nb.add_inputs(avals);
    let kc = input(kc_avals)?;
    let acc = input(lc_avals.clone())?;
    let ct_k = input(k_avals.to_vec())?;
    let kx = input(kx_avals)?;
    let ct_y = input(y_avals.to_vec())?;
    let mut t_in = kc;
    t_in.extend(kx);
    t_in.extend(ct_k);
    t_in.extend(ct_y);
    let t_out = splice(&mut nb, bt, &t_in)?;
    let n_lc = lc_avals.len();
    let (d_c, rest) = cut(t_out, n_lc, "scan")?;
    let (d_k, d_x) = cut(rest, nk, "scan")?;
    let mut outs = Vec::with_capacity(sum(&[n_lc, nk, d_x.len()]));
    for (a, d) in acc.into_iter().zip(d_c) {
        outs.push(nb.binary(BinaryOp::Add, a, d)?);
    }
    outs.extend(d_k);
    outs.extend(d_x);
    Ok((nb.finish(outs)?, lc_avals))
}

pub(super) fn transpose_scan(
    s: &Scan, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand],
) -> Result<Vec<Option<Atom>>> {
    let (nc, nk) = (s.num_consts, s.num_carry);
    let (c_ops, k_ops, x_ops) = split3("scan", ops, nc, nk)?;
    let c_lin: Vec<bool> = c_ops.iter().map(Operand::is_linear).collect();
    let x_lin: Vec<bool> = x_ops.iter().map(Operand::is_linear).collect();
    // The carry is linear in the body even where its init is a known zero.
    let mut mask = c_lin.clone();
    mask.extend(std::iter::repeat_n(true, nk));
    mask.extend_from_slice(&x_lin);
    let bt = transpose_jaxpr(&s.jaxpr, &mask)?;
    let body_in = s.jaxpr.in_avals()?;
    let body_out = s.jaxpr.out_avals()?;
    let (c_avals, k_avals, x_avals) = split3("scan", &body_in, nc, nk)?;
    let (n_lc, n_lx) = (count(&c_lin), count(&x_lin));
    let (body, lc_avals) = transposed_scan_body(
        &bt,
        (pick(c_avals, &c_lin, false), pick(c_avals, &c_lin, true)),
        k_avals,
        (
            pick(x_avals, &x_lin, false),
            body_out.get(nk..).unwrap_or_default(),
        ),
    )?;
    // Operands of the transposed loop.
    let n_kc = nc.saturating_sub(n_lc);
    let n_kx = x_ops.len().saturating_sub(n_lx);
    let outer_out: Vec<Aval> = {
        let mut v = k_avals.to_vec();
        for y in body_out.get(nk..).unwrap_or_default() {
            let mut shape = vec![s.length];
            shape.extend_from_slice(&y.shape);
            v.push(Aval::weak(shape, y.dtype, y.weak_type));
        }
        v
    };
    let all_cts = cts_or_zeros(b, cts, &outer_out)?;
    let (ct_carry, ct_ys) = cut(all_cts, nk, "scan")?;
    let mut ins = known_atoms(c_ops);
    for a in &lc_avals {
        ins.push(b.zeros(a)?);
    }
    ins.extend(ct_carry);
    ins.extend(known_atoms(x_ops));
    ins.extend(ct_ys);
    let ny = body_out.len().saturating_sub(nk);
    let mut linear = vec![false; n_kc];
    linear.extend(std::iter::repeat_n(true, n_lc.saturating_add(nk)));
    linear.extend(std::iter::repeat_n(false, n_kx));
    linear.extend(std::iter::repeat_n(true, ny));
    let outs = emit(
        b,
        ControlFlow::Scan(Scan {
            reverse: !s.reverse,
            ..s.over(body, n_kc, sum(&[n_lc, nk]), linear)
        }),
        ins,
    )?;
    let (acc, rest) = cut(outs, n_lc, "scan")?;
    let (ct_init, ct_xs) = cut(rest, nk, "scan")?;
    let mut result = spread(&c_lin, acc);
    for (op, ct) in k_ops.iter().zip(ct_init) {
        result.push(op.is_linear().then_some(ct));
    }
    result.extend(spread(&x_lin, ct_xs));
    Ok(result)
}
