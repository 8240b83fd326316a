//! Control flow: `cond`, `while` and `scan`, with JAX's operand layouts and
//! params.
//!
//! * `cond[branches](index, *operands)`: runs `branches[clamp(index)]` on the
//!   operands (every branch takes the same operands and returns outputs of
//!   the same types);
//! * `while[cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts](*cond_consts,
//!   *body_consts, *init)`: `carry = body(body_consts, carry)` while
//!   `cond(cond_consts, carry)`;
//! * `scan[jaxpr, length, reverse, num_consts, num_carry, linear, unroll]
//!   (*consts, *init, *xs)`: `carry, y = jaxpr(consts, carry, x)` over the
//!   leading axis of the `xs` (backwards when `reverse`), returning the final
//!   carry and the stacked `ys`.
//!
//! Sub-jaxprs take their consts as leading operands (Python hoists closed-over
//! values), so every rule sees one flat operand list. This module holds the
//! family's [`Family`] impl (params, shape rule, kernel, and the dispatch of
//! the transformation rules) and the native evaluation on shared operands
//! ([`eval`], [`eval_with`], which the executors call); `ad` holds the JVP,
//! partial evaluation and transposition rules, `batching` the vmap rules.

pub mod ad;
pub mod batching;

use super::family::{arity_error, check_types, BatchOut, Family, JvpOut, Operand, TransposeOut};
use super::kernel::shared_call;
use super::params::{Lookup, Param, ParamList};
use crate::array::{Buffer, HostArray};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::exec::interp::Prepared;
use crate::exec::ExecCtx;
use crate::exec::{LoopBody, Runner};
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval, ClosedJaxpr, Effect, Scalar};
use std::sync::Arc;

/// The control-flow primitives.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ControlFlow {
    Cond {
        branches: Vec<Arc<ClosedJaxpr>>,
    },
    While {
        cond_jaxpr: Arc<ClosedJaxpr>,
        body_jaxpr: Arc<ClosedJaxpr>,
        cond_nconsts: usize,
        body_nconsts: usize,
    },
    Scan(Scan),
}

/// `scan`'s params.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Scan {
    pub jaxpr: Arc<ClosedJaxpr>,
    pub length: usize,
    pub reverse: bool,
    pub num_consts: usize,
    pub num_carry: usize,
    /// One flag per operand (a hint JAX carries; rules do not rely on it).
    pub linear: Vec<bool>,
    pub unroll: usize,
}

impl Scan {
    /// This scan (same length, direction and unrolling) over `body`, with
    /// `num_consts` consts, `num_carry` carries and the operand flags
    /// `linear`.
    pub fn over(
        &self, body: ClosedJaxpr, num_consts: usize, num_carry: usize, linear: Vec<bool>,
    ) -> Scan {
        Scan {
            jaxpr: Arc::new(body),
            num_consts,
            num_carry,
            linear,
            ..self.clone()
        }
    }

    /// The row of the scanned operands that iteration `step` reads (from the
    /// end when `reverse`).
    pub fn row(&self, step: usize) -> usize {
        if self.reverse {
            self.length.saturating_sub(1).saturating_sub(step)
        } else {
            step
        }
    }
}

impl ControlFlow {
    /// The sub-jaxprs: the branches; cond then body; the body.
    pub fn sub_jaxprs(&self) -> Vec<&Arc<ClosedJaxpr>> {
        match self {
            ControlFlow::Cond { branches } => branches.iter().collect(),
            ControlFlow::While {
                cond_jaxpr,
                body_jaxpr,
                ..
            } => vec![cond_jaxpr, body_jaxpr],
            ControlFlow::Scan(s) => vec![&s.jaxpr],
        }
    }
}

/// `ins` split at `a` and `a + b` into three parts, or an arity error.
pub(crate) fn split3<'a, T>(
    prim: &'static str, ins: &'a [T], a: usize, b: usize,
) -> Result<(&'a [T], &'a [T], &'a [T])> {
    let err = || Error::Arity {
        prim,
        expected: a.saturating_add(b),
        got: ins.len(),
    };
    let (first, rest) = ins.split_at_checked(a).ok_or_else(err)?;
    let (second, third) = rest.split_at_checked(b).ok_or_else(err)?;
    Ok((first, second, third))
}

/// The number of outputs of a `cond` (those of its first branch).
fn cond_out_count(branches: &[Arc<ClosedJaxpr>]) -> Result<usize> {
    let first = branches.first().ok_or(arity_error("cond", 1, 0))?;
    Ok(first.jaxpr.outvars.len())
}

/// Checks operand types against a sub-jaxpr's parameters.
fn check_operands(prim: &'static str, what: &str, want: &[Aval], got: &[Aval]) -> Result<()> {
    let count = || {
        format!(
            "{prim}: {what} takes {} operands, got {}",
            want.len(),
            got.len()
        )
    };
    check_types(want, got, count, |k, w, g| {
        let (w, g) = (w.short(), g.short());
        format!("{prim}: {what} operand {k} has type {w} but the operand given is {g}")
    })
}

/// Types the carry must keep from one iteration to the next.
fn check_carry(prim: &'static str, what: &str, carry: &[Aval], out: &[Aval]) -> Result<()> {
    let (nc, no) = (carry.len(), out.len());
    let count = || format!("{prim}: {what} returns {no} carry values for a carry of {nc}");
    check_types(carry, out, count, |k, c, o| {
        let (c, o) = (c.short(), o.short());
        format!("{prim}: {what} carry output {k} has type {o} but the carry input has type {c}")
    })
}

fn cond_avals(branches: &[Arc<ClosedJaxpr>], ins: &[Aval]) -> Result<Vec<Aval>> {
    let Some((index, ops)) = ins.split_first() else {
        return Err(Error::arity("cond", 1, 0));
    };
    if !index.dtype.is_int() || !index.shape.is_empty() {
        return Err(Error::Typecheck(format!(
            "cond: the branch index must be an integer scalar, got {}",
            index.short()
        )));
    }
    let Some(first) = branches.first() else {
        return Err(Error::param(
            "cond",
            "branches",
            "at least one branch is needed",
        ));
    };
    let outs = first.out_avals()?;
    for (k, br) in branches.iter().enumerate() {
        check_operands("cond", &format!("branch {k}"), &br.in_avals()?, ops)?;
        let got = br.out_avals()?;
        let same = got.len() == outs.len() && got.iter().zip(&outs).all(|(g, o)| g.same_type(o));
        if !same {
            let fmt = |v: &[Aval]| v.iter().map(Aval::short).collect::<Vec<_>>().join(", ");
            return Err(Error::Typecheck(format!(
                "cond: branch 0 returns ({}) but branch {k} returns ({}); every branch must \
                 return the same types",
                fmt(&outs),
                fmt(&got)
            )));
        }
    }
    // Weak only where every branch is weak (JAX joins the branch types).
    Ok(outs
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let weak = branches.iter().all(|br| {
                br.jaxpr
                    .outvars
                    .get(i)
                    .and_then(|a| br.jaxpr.atom_aval(a).ok())
                    .is_some_and(|a| a.weak_type)
            });
            Aval::weak(o.shape.clone(), o.dtype, weak)
        })
        .collect())
}

fn scan_avals(s: &Scan, ins: &[Aval]) -> Result<Vec<Aval>> {
    let (consts, carry, xs) = split3("scan", ins, s.num_consts, s.num_carry)?;
    if !s.linear.is_empty() && s.linear.len() != ins.len() {
        return Err(Error::param(
            "scan",
            "linear",
            format!("{} flags for {} operands", s.linear.len(), ins.len()),
        ));
    }
    let mut body_in = consts.to_vec();
    body_in.extend_from_slice(carry);
    for (k, x) in xs.iter().enumerate() {
        match x.shape.split_first() {
            Some((&n, rest)) if n == s.length => {
                body_in.push(Aval::weak(rest.to_vec(), x.dtype, x.weak_type))
            }
            _ => {
                return Err(Error::shape(
                    "scan",
                    &[&x.shape],
                    format!(
                        "scanned operand {k} must have a leading axis of the scan length {}",
                        s.length
                    ),
                ))
            }
        }
    }
    check_operands("scan", "jaxpr", &s.jaxpr.in_avals()?, &body_in)?;
    let outs = s.jaxpr.out_avals()?;
    let (carry_out, ys) =
        outs.split_at_checked(carry.len())
            .ok_or(Error::arity("scan", carry.len(), outs.len()))?;
    check_carry("scan", "jaxpr", carry, carry_out)?;
    let mut result = carry.to_vec();
    for y in ys {
        let mut shape = Vec::with_capacity(y.ndim().saturating_add(1));
        shape.push(s.length);
        shape.extend_from_slice(&y.shape);
        result.push(Aval::weak(shape, y.dtype, y.weak_type));
    }
    Ok(result)
}

/// Native evaluation in `ctx`; operands are shared, not copied.
pub fn eval(
    ctx: &ExecCtx, c: &ControlFlow, args: &[Arc<HostArray>],
) -> Result<Vec<Arc<HostArray>>> {
    let bodies = c
        .sub_jaxprs()
        .into_iter()
        .map(|j| Prepared::new(j.clone()))
        .collect::<Result<Vec<_>>>()?;
    let runners: Vec<&dyn Runner> = bodies.iter().map(|p| p as &dyn Runner).collect();
    eval_with(ctx, c, args, &runners)
}

/// Runs `c` with its sub-jaxprs executed by `bodies`, in the order of
/// [`ControlFlow::sub_jaxprs`] (the branches; cond then body; the body).
pub fn eval_with(
    ctx: &ExecCtx, c: &ControlFlow, args: &[Arc<HostArray>], bodies: &[&dyn Runner],
) -> Result<Vec<Arc<HostArray>>> {
    let avals: Vec<Aval> = args.iter().map(|a| a.aval()).collect();
    let out_avals = c.abstract_eval(&avals)?;
    let body = |k: usize| -> Result<&dyn Runner> {
        bodies
            .get(k)
            .copied()
            .ok_or(Error::arity(c.name(), k.saturating_add(1), bodies.len()))
    };
    match c {
        ControlFlow::Cond { branches } => {
            let (index, ops) = args.split_first().ok_or(Error::arity("cond", 1, 0))?;
            let k = clamp_index(index, branches.len())?;
            body(k)?.run_in(ctx, ops)
        }
        ControlFlow::While {
            cond_nconsts,
            body_nconsts,
            ..
        } => run_while(ctx, body(0)?, body(1)?, *cond_nconsts, *body_nconsts, args),
        ControlFlow::Scan(s) => run_scan(ctx, s, body(0)?, args, &out_avals),
    }
}

/// The branch an index selects: clamped into `[0, n)` as XLA does.
fn clamp_index(index: &HostArray, n: usize) -> Result<usize> {
    let i = Scalar::from_buffer(index.buffer(), 0)
        .ok_or_else(|| Error::InvalidArgument("cond: empty branch index".into()))?
        .as_i64();
    let hi = n.saturating_sub(1);
    Ok(usize::try_from(i.max(0)).unwrap_or(hi).min(hi))
}

fn truth(pred: &HostArray) -> Result<bool> {
    Scalar::from_buffer(pred.buffer(), 0)
        .map(Scalar::as_bool)
        .ok_or_else(|| Error::InvalidArgument("while: empty predicate".into()))
}

fn run_while(
    ctx: &ExecCtx, cond: &dyn Runner, body: &dyn Runner, cc: usize, bc: usize,
    args: &[Arc<HostArray>],
) -> Result<Vec<Arc<HostArray>>> {
    let (cconsts, bconsts, init) = split3("while", args, cc, bc)?;
    let mut cond = LoopBody::new(cond, cconsts)?;
    let mut body = LoopBody::new(body, bconsts)?;
    let mut carry: Vec<Arc<HostArray>> = init.to_vec();
    let mut vary: Vec<Arc<HostArray>> = Vec::with_capacity(carry.len());
    let mut pred: Vec<Arc<HostArray>> = Vec::with_capacity(1);
    loop {
        vary.extend(carry.iter().cloned());
        pred.clear();
        cond.run(ctx, &mut vary, &mut pred)?;
        if !truth(pred.first().ok_or(Error::arity("while", 1, 0))?)? {
            return Ok(carry);
        }
        ctx.take_loop_iteration()?;
        // The carry moves into the body (its buffers are recycled once
        // read) and the body's results become the next carry. `vary` is
        // empty (the condition drained it): a swap, not a copy.
        move_into_empty(&mut vary, &mut carry);
        body.run(ctx, &mut vary, &mut carry)?;
    }
}

use crate::exec::compiled::recycle;

fn run_scan(
    ctx: &ExecCtx, s: &Scan, body: &dyn Runner, args: &[Arc<HostArray>], out_avals: &[Aval],
) -> Result<Vec<Arc<HostArray>>> {
    ctx.check_loop_iterations_left(s.length)?;
    let (consts, init, xs) = split3("scan", args, s.num_consts, s.num_carry)?;
    let y_avals = out_avals.get(s.num_carry..).unwrap_or_default();
    let mut ys: Vec<Buffer> = y_avals
        .iter()
        .map(|a| Buffer::zeros(a.dtype, a.size()?))
        .collect::<Result<_>>()?;
    let mut body = LoopBody::new(body, consts)?;
    let mut carry: Vec<Arc<HostArray>> = init.to_vec();
    let mut vary: Vec<Arc<HostArray>> = Vec::with_capacity(init.len().saturating_add(xs.len()));
    let mut outs: Vec<Arc<HostArray>> = Vec::with_capacity(out_avals.len());
    for step in 0..s.length {
        ctx.take_loop_iteration()?;
        let i = s.row(step);
        // The carry moves into the body: a compiled body recycles its
        // buffers once read, for this step's values.
        move_into_empty(&mut vary, &mut carry);
        for x in xs {
            vary.push(row_of(x, i)?);
        }
        body.run(ctx, &mut vary, &mut outs)?;
        let nc = s.num_carry.min(outs.len());
        for (buf, y) in ys.iter_mut().zip(outs.get(nc..).unwrap_or_default()) {
            super::kernel::rows::write_row(buf, i, y)?;
        }
        // Rows written: their buffers serve the next step.
        outs.drain(nc..).for_each(recycle::give);
        move_into_empty(&mut carry, &mut outs);
    }
    let mut result = carry;
    for (buf, aval) in ys.into_iter().zip(y_avals) {
        result.push(Arc::new(HostArray::new(aval.shape.clone(), buf)?));
    }
    Ok(result)
}

/// Moves the values of `from` to the end of `to`, leaving `from` empty: a
/// swap of the two lists when `to` is empty (every loop iteration; no copy
/// call for a list of a few pointers), an append otherwise.
fn move_into_empty(to: &mut Vec<Arc<HostArray>>, from: &mut Vec<Arc<HostArray>>) {
    if to.is_empty() {
        std::mem::swap(to, from);
    } else {
        to.append(from);
    }
}

/// `x[i]` along the leading axis, copied into a recycled array when the
/// bin has one of its type and size.
fn row_of(x: &HostArray, i: usize) -> Result<Arc<HostArray>> {
    let shape = x.shape().get(1..).unwrap_or_default();
    if let Some(mut h) = recycle::take(x.dtype(), shape) {
        let read = match Arc::get_mut(&mut h) {
            Some(dst) => super::kernel::rows::read_row_into(x, i, dst.buffer_mut())?,
            None => false,
        };
        if read {
            return Ok(h);
        }
        recycle::give(h);
    }
    Ok(Arc::new(super::kernel::rows::take_row(x, i)?))
}

/// The sub-jaxprs' effects lift to the equation.
fn control_effect(c: &ControlFlow) -> Effect {
    if c.sub_jaxprs()
        .iter()
        .any(|j| j.jaxpr.effect() != Effect::None)
    {
        Effect::OrderedIo
    } else {
        Effect::None
    }
}

impl Family for ControlFlow {
    crate::family_names!(
        ControlFlow::Cond { .. } => "cond",
        ControlFlow::While { .. } => "while",
        ControlFlow::Scan(_) => "scan",
    );

    crate::family_identity!(
        custom_params,
        multiple_results = true,
        effect = control_effect
    );

    /// Params as JAX shows them.
    fn params(&self) -> ParamList {
        let int = |n: usize| Param::Int(i64::try_from(n).unwrap_or(i64::MAX));
        match self {
            ControlFlow::Cond { branches } => vec![(
                "branches",
                Param::Tuple(branches.iter().cloned().map(Param::Jaxpr).collect()),
            )],
            ControlFlow::While {
                cond_jaxpr,
                body_jaxpr,
                cond_nconsts,
                body_nconsts,
            } => vec![
                ("body_jaxpr", Param::Jaxpr(body_jaxpr.clone())),
                ("body_nconsts", int(*body_nconsts)),
                ("cond_jaxpr", Param::Jaxpr(cond_jaxpr.clone())),
                ("cond_nconsts", int(*cond_nconsts)),
            ],
            ControlFlow::Scan(s) => vec![
                ("_split_transpose", Param::Bool(false)),
                ("jaxpr", Param::Jaxpr(s.jaxpr.clone())),
                ("length", int(s.length)),
                (
                    "linear",
                    Param::Tuple(s.linear.iter().map(|b| Param::Bool(*b)).collect()),
                ),
                ("num_carry", int(s.num_carry)),
                ("num_consts", int(s.num_consts)),
                ("reverse", Param::Bool(s.reverse)),
                ("unroll", int(s.unroll)),
            ],
        }
    }

    /// Rebuilds a control-flow primitive from its params (`None` for other
    /// names).
    fn from_params(name: &str, p: &Lookup<'_>) -> Result<Option<ControlFlow>> {
        Ok(Some(match name {
            "cond" => ControlFlow::Cond {
                branches: p.jaxprs("branches")?,
            },
            "while" => ControlFlow::While {
                cond_jaxpr: p.jaxpr("cond_jaxpr")?,
                body_jaxpr: p.jaxpr("body_jaxpr")?,
                cond_nconsts: p.dim("cond_nconsts")?,
                body_nconsts: p.dim("body_nconsts")?,
            },
            "scan" => ControlFlow::Scan(Scan {
                jaxpr: p.jaxpr("jaxpr")?,
                length: p.dim("length")?,
                reverse: p.opt_bool("reverse")?.unwrap_or(false),
                num_consts: p.dim("num_consts")?,
                num_carry: p.dim("num_carry")?,
                linear: p.opt_bools("linear")?.unwrap_or_default(),
                unroll: match p.get("unroll") {
                    None | Some(Param::None) => 1,
                    Some(Param::Bool(b)) => usize::from(*b),
                    Some(_) => p.dim("unroll")?,
                },
            }),
            _ => return Ok(None),
        }))
    }

    fn display_params(&self, _params: &mut ParamList) {}

    /// Representative instances for the rule listings and the text round trip:
    /// trivial sub-jaxprs (no operands; the while predicate is the literal
    /// `false`).
    fn examples() -> Vec<ControlFlow> {
        use crate::ir::{Jaxpr, Literal};
        let empty = Arc::new(ClosedJaxpr::new(Jaxpr::default(), Vec::new()));
        let never = Arc::new(ClosedJaxpr::new(
            Jaxpr {
                outvars: vec![Atom::Lit(Literal::new(
                    Scalar::Bool(false),
                    DType::Bool,
                    false,
                ))],
                ..Jaxpr::default()
            },
            Vec::new(),
        ));
        vec![
            ControlFlow::Cond {
                branches: vec![empty.clone(), empty.clone()],
            },
            ControlFlow::While {
                cond_jaxpr: never,
                body_jaxpr: empty.clone(),
                cond_nconsts: 0,
                body_nconsts: 0,
            },
            ControlFlow::Scan(Scan {
                jaxpr: empty,
                length: 2,
                reverse: false,
                num_consts: 0,
                num_carry: 0,
                linear: Vec::new(),
                unroll: 1,
            }),
        ]
    }

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        match self {
            ControlFlow::Cond { branches } => cond_avals(branches, ins),
            ControlFlow::While {
                cond_jaxpr,
                body_jaxpr,
                cond_nconsts,
                body_nconsts,
            } => {
                let (cc, bc, carry) = split3("while", ins, *cond_nconsts, *body_nconsts)?;
                let mut cin = cc.to_vec();
                cin.extend_from_slice(carry);
                check_operands("while", "cond_jaxpr", &cond_jaxpr.in_avals()?, &cin)?;
                let pred = cond_jaxpr.out_avals()?;
                if !matches!(pred.as_slice(), [p] if p.dtype == DType::Bool && p.shape.is_empty()) {
                    let got: Vec<String> = pred.iter().map(Aval::short).collect();
                    return Err(Error::Typecheck(format!(
                        "while: cond_jaxpr must return a single boolean scalar, got ({})",
                        got.join(", ")
                    )));
                }
                let mut bin = bc.to_vec();
                bin.extend_from_slice(carry);
                check_operands("while", "body_jaxpr", &body_jaxpr.in_avals()?, &bin)?;
                check_carry("while", "body_jaxpr", carry, &body_jaxpr.out_avals()?)?;
                Ok(carry.to_vec())
            }
            ControlFlow::Scan(s) => scan_avals(s, ins),
        }
    }

    /// Runs the primitive on shared copies of the operands ([`eval`]).
    fn kernel(
        &self, ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        shared_call(self.name(), args, outs, |args| eval(ctx, self, args))
    }

    fn jvp(&self, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
        if xs.len() != ts.len() {
            return Err(arity_error(self.name(), xs.len(), ts.len()));
        }
        match self {
            ControlFlow::Cond { branches } => ad::jvp_cond(branches, b, xs, ts),
            ControlFlow::While {
                cond_jaxpr,
                body_jaxpr,
                cond_nconsts,
                body_nconsts,
            } => ad::jvp_while(
                cond_jaxpr,
                body_jaxpr,
                *cond_nconsts,
                *body_nconsts,
                b,
                xs,
                ts,
            ),
            ControlFlow::Scan(s) => ad::jvp_scan(s, b, xs, ts),
        }
    }

    fn transpose(&self, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TransposeOut {
        match self {
            ControlFlow::Cond { branches } => ad::transpose_cond(branches, b, cts, ops),
            ControlFlow::While { .. } => {
                Err(Error::InvalidArgument(ad::WHILE_REVERSE_ERROR.into()))
            }
            ControlFlow::Scan(s) => ad::transpose_scan(s, b, cts, ops),
        }
    }

    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize) -> BatchOut {
        if ins.len() != dims.len() {
            return Err(arity_error(self.name(), ins.len(), dims.len()));
        }
        match self {
            ControlFlow::Cond { branches } => batching::batch_cond(branches, b, ins, dims, n),
            ControlFlow::While {
                cond_jaxpr,
                body_jaxpr,
                cond_nconsts,
                body_nconsts,
            } => batching::batch_while(
                cond_jaxpr,
                body_jaxpr,
                *cond_nconsts,
                *body_nconsts,
                b,
                ins,
                dims,
                n,
            ),
            ControlFlow::Scan(s) => batching::batch_scan(s, b, ins, dims, n),
        }
    }
}
