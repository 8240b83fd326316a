//! Custom derivatives: `custom_jvp_call`, `custom_vjp_call` and `custom_lin`.
//!
//! The rules the user wrote arrive as traced jaxprs (Python traces them with
//! known primal values, so control flow on primals works in a rule):
//! * `custom_jvp_call[call_jaxpr, jvp_jaxpr]`: evaluates `call_jaxpr`; its JVP
//!   is `jvp_jaxpr(primals..., tangents...) -> (outs..., tangent outs...)`.
//! * `custom_vjp_call[call_jaxpr, fwd_jaxpr, bwd_jaxpr, num_res]`: evaluates
//!   `call_jaxpr`; its JVP runs `fwd_jaxpr(primals) -> (outs..., residuals...)`
//!   and emits one linear `custom_lin` equation holding `bwd_jaxpr`.
//! * `custom_lin[bwd_jaxpr, num_res](residuals..., tangents...)`: linear in the
//!   tangents; partial evaluation keeps it in the linear part and its
//!   transpose is `bwd_jaxpr(residuals..., cotangents...)`. Evaluating it in
//!   forward mode is JAX's "can't apply forward-mode autodiff" error.

use super::family::{check_param_types, BatchOut, Family, JvpOut, Operand, TransposeOut};
use super::kernel::shared_call;
use super::params::{Lookup, Param, ParamList};
use super::Primitive;
use crate::array::HostArray;
use crate::error::{Error, Result};
use crate::exec::ExecCtx;
use crate::ir::builder::Builder;
use crate::ir::splice::splice;
use crate::ir::{Atom, Aval, ClosedJaxpr, Effect};
use crate::transforms::batch::batch_jaxpr;
use crate::transforms::jvp::tangent_aval;
use std::sync::Arc;

/// The three custom-derivative primitives.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CustomCall {
    Jvp {
        call: Arc<ClosedJaxpr>,
        /// `None` when the rule could not be traced abstractly (it branches on
        /// primal values under `jit`); differentiating then reports why.
        jvp: Option<Arc<ClosedJaxpr>>,
        name: String,
    },
    Vjp(VjpCall),
    Lin {
        bwd: Arc<ClosedJaxpr>,
        num_res: usize,
        name: String,
    },
    /// `linear_call(callee, transpose)(residuals..., linear...)`: evaluates
    /// `callee`, linear in the non-residual operands; its transpose is the
    /// same primitive with `callee` and `transpose` swapped.
    LinearCall {
        callee: Arc<ClosedJaxpr>,
        transpose: Arc<ClosedJaxpr>,
        num_res: usize,
    },
}

/// The parameters of `custom_vjp_call`: `fwd` returns the outputs then
/// `num_res` residuals; `bwd` maps (residuals..., output cotangents...) to
/// the input cotangents.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct VjpCall {
    pub call: Arc<ClosedJaxpr>,
    pub fwd: Arc<ClosedJaxpr>,
    pub bwd: Arc<ClosedJaxpr>,
    pub num_res: usize,
    pub name: String,
}

/// Ordered I/O when any program the call holds has it (a host callback in the
/// function or its rules): the call is then kept and ordered like one.
fn custom_effect(c: &CustomCall) -> Effect {
    let progs: Vec<&Arc<ClosedJaxpr>> = match c {
        CustomCall::Jvp { call, jvp, .. } => std::iter::once(call).chain(jvp).collect(),
        CustomCall::Vjp(VjpCall { call, fwd, bwd, .. }) => vec![call, fwd, bwd],
        CustomCall::Lin { bwd, .. } => vec![bwd],
        CustomCall::LinearCall {
            callee, transpose, ..
        } => vec![callee, transpose],
    };
    if progs.iter().any(|p| p.jaxpr.effect() != Effect::None) {
        Effect::OrderedIo
    } else {
        Effect::None
    }
}

const FORWARD_MODE_ERROR: &str =
    "can't apply forward-mode autodiff (jvp) to a custom_vjp function.";

/// Tangents with symbolic zeros instantiated at the tangent avals of `avals`.
fn instantiate(b: &mut Builder, ts: &[Option<Atom>], avals: &[Aval]) -> Result<Vec<Atom>> {
    ts.iter()
        .zip(avals)
        .map(|(t, a)| match t {
            Some(t) => Ok(t.clone()),
            None => b.zeros(&tangent_aval(a)),
        })
        .collect()
}

fn split_outs(outs: Vec<Atom>, n: usize, what: &'static str) -> Result<(Vec<Atom>, Vec<Atom>)> {
    if outs.len() < n {
        return Err(Error::arity(what, n, outs.len()));
    }
    let mut first = outs;
    let second = first.split_off(n);
    Ok((first, second))
}

/// `linear_call`'s transpose: the same primitive with callee and transpose
/// swapped, applied to the residuals and the output cotangents.
fn transpose_linear_call(
    callee: &Arc<ClosedJaxpr>, transpose: &Arc<ClosedJaxpr>, num_res: usize, b: &mut Builder,
    cts: &[Option<Atom>], ops: &[Operand],
) -> Result<Vec<Option<Atom>>> {
    let mut ins: Vec<Atom> = Vec::with_capacity(num_res.saturating_add(cts.len()));
    for op in ops.iter().take(num_res) {
        match op {
            Operand::Known(a) => ins.push(a.clone()),
            Operand::Linear(_) => {
                return Err(Error::Typecheck(
                    "linear_call: residual operands must be known".into(),
                ))
            }
        }
    }
    for (ct, aval) in cts.iter().zip(callee.out_avals()?) {
        ins.push(match ct {
            Some(c) => c.clone(),
            None => b.zeros(&aval)?,
        });
    }
    let swapped = Primitive::Custom(CustomCall::LinearCall {
        callee: transpose.clone(),
        transpose: callee.clone(),
        num_res,
    });
    let outs = b.add_eqn(swapped, ins, None)?;
    let mut result: Vec<Option<Atom>> = vec![None; num_res];
    result.extend(outs.into_iter().map(|v| Some(Atom::Var(v))));
    Ok(result)
}

/// Every operand with its mapped axis at 0 (unbatched ones broadcast).
fn all_in_front(
    b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize,
) -> Result<Vec<Atom>> {
    use crate::prims::batch::{add_batch_axis, move_axis};
    ins.iter()
        .zip(dims)
        .map(|(x, d)| match d {
            Some(d) => move_axis(b, x.clone(), *d, 0),
            None => add_batch_axis(b, x.clone(), n, 0),
        })
        .collect()
}

impl Family for CustomCall {
    crate::family_names!(
        CustomCall::Jvp { .. } => "custom_jvp_call",
        CustomCall::Vjp(_) => "custom_vjp_call",
        CustomCall::Lin { .. } => "custom_lin",
        CustomCall::LinearCall { .. } => "linear_call",
    );

    crate::family_identity!(
        custom_params,
        multiple_results = true,
        effect = custom_effect
    );

    /// Params as Python sees them (`eqn.params`).
    fn params(&self) -> ParamList {
        let num = |n: usize| Param::Int(i64::try_from(n).unwrap_or(i64::MAX));
        match self {
            CustomCall::Jvp { call, jvp, name } => vec![
                ("call_jaxpr", Param::Jaxpr(call.clone())),
                (
                    "jvp_jaxpr_fun",
                    jvp.clone().map_or(Param::None, Param::Jaxpr),
                ),
                ("name", Param::Str(name.clone())),
            ],
            CustomCall::Vjp(v) => vec![
                ("call_jaxpr", Param::Jaxpr(v.call.clone())),
                ("fwd_jaxpr", Param::Jaxpr(v.fwd.clone())),
                ("bwd_jaxpr", Param::Jaxpr(v.bwd.clone())),
                ("num_res", num(v.num_res)),
                ("name", Param::Str(v.name.clone())),
            ],
            CustomCall::LinearCall {
                callee,
                transpose,
                num_res,
            } => vec![
                ("callee", Param::Jaxpr(callee.clone())),
                ("num_callee_consts", Param::Int(0)),
                ("num_res", num(*num_res)),
                ("num_transpose_consts", Param::Int(0)),
                ("transpose", Param::Jaxpr(transpose.clone())),
            ],
            CustomCall::Lin { bwd, num_res, name } => vec![
                ("bwd_jaxpr", Param::Jaxpr(bwd.clone())),
                ("num_res", num(*num_res)),
                ("name", Param::Str(name.clone())),
            ],
        }
    }

    fn from_params(name: &str, p: &Lookup<'_>) -> Result<Option<CustomCall>> {
        Ok(Some(match name {
            "custom_jvp_call" => CustomCall::Jvp {
                call: p.jaxpr("call_jaxpr")?,
                jvp: match p.get("jvp_jaxpr_fun") {
                    None | Some(Param::None) => None,
                    Some(_) => Some(p.jaxpr("jvp_jaxpr_fun")?),
                },
                name: p.opt_str("name")?.unwrap_or_default(),
            },
            "custom_vjp_call" => CustomCall::Vjp(VjpCall {
                call: p.jaxpr("call_jaxpr")?,
                fwd: p.jaxpr("fwd_jaxpr")?,
                bwd: p.jaxpr("bwd_jaxpr")?,
                num_res: p.dim("num_res")?,
                name: p.opt_str("name")?.unwrap_or_default(),
            }),
            "linear_call" => CustomCall::LinearCall {
                callee: p.jaxpr("callee")?,
                transpose: p.jaxpr("transpose")?,
                num_res: p.dim("num_res")?,
            },
            "custom_lin" => CustomCall::Lin {
                bwd: p.jaxpr("bwd_jaxpr")?,
                num_res: p.dim("num_res")?,
                name: p.opt_str("name")?.unwrap_or_default(),
            },
            _ => return Ok(None),
        }))
    }

    fn display_params(&self, _params: &mut ParamList) {}

    fn examples() -> Vec<CustomCall> {
        let empty = Arc::new(ClosedJaxpr::new(crate::ir::Jaxpr::default(), Vec::new()));
        vec![
            CustomCall::Jvp {
                call: empty.clone(),
                jvp: Some(empty.clone()),
                name: String::new(),
            },
            CustomCall::Vjp(VjpCall {
                call: empty.clone(),
                fwd: empty.clone(),
                bwd: empty.clone(),
                num_res: 0,
                name: String::new(),
            }),
            CustomCall::Lin {
                bwd: empty.clone(),
                num_res: 0,
                name: String::new(),
            },
            CustomCall::LinearCall {
                callee: empty.clone(),
                transpose: empty,
                num_res: 0,
            },
        ]
    }

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        match self {
            CustomCall::Jvp { call, .. } | CustomCall::Vjp(VjpCall { call, .. }) => {
                check_param_types(self.name(), &call.in_avals()?, ins)?;
                call.out_avals()
            }
            CustomCall::LinearCall { callee, .. } => {
                check_param_types("linear_call", &callee.in_avals()?, ins)?;
                callee.out_avals()
            }
            CustomCall::Lin { bwd, num_res, .. } => {
                // bwd: (residuals..., cotangents of the outputs...) -> input cotangents
                let bwd_in = bwd.in_avals()?;
                let res = bwd_in
                    .get(..*num_res)
                    .ok_or_else(|| Error::param("custom_lin", "num_res", "exceeds bwd inputs"))?;
                let outs = bwd_in.get(*num_res..).unwrap_or_default().to_vec();
                let tangents_in = bwd.out_avals()?;
                let mut want: Vec<Aval> = res.to_vec();
                want.extend(tangents_in);
                check_param_types("custom_lin", &want, ins)?;
                Ok(outs)
            }
        }
    }

    /// The primal function (forward-mode use of `custom_lin` errs).
    fn kernel(
        &self, ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        shared_call(self.name(), args, outs, |args| match self {
            CustomCall::Jvp { call, .. } | CustomCall::Vjp(VjpCall { call, .. }) => {
                crate::exec::interp::eval_closed_in(ctx, call, args)
            }
            CustomCall::LinearCall { callee, .. } => {
                crate::exec::interp::eval_closed_in(ctx, callee, args)
            }
            CustomCall::Lin { .. } => Err(Error::Unsupported(FORWARD_MODE_ERROR.into())),
        })
    }

    fn jvp(&self, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
        let c = self;
        match c {
            CustomCall::Jvp { call, jvp, name } => {
                let Some(rule) = jvp else {
                    return Err(Error::Unsupported(format!(
                    "the custom_jvp rule of {name} could not be traced without concrete primal values \
                     (it converts a traced value to a Python value); differentiate outside jit"
                )));
                };
                let in_avals = call.in_avals()?;
                let mut ins = xs.to_vec();
                ins.extend(instantiate(b, ts, &in_avals)?);
                let outs = splice(b, rule, &ins)?;
                let n = call.out_avals()?.len();
                let (p, t) = split_outs(outs, n, "custom_jvp_call")?;
                Ok((p, t.into_iter().map(Some).collect()))
            }
            CustomCall::Vjp(v) => {
                let outs = splice(b, &v.fwd, xs)?;
                let n = v.call.out_avals()?.len();
                let (p, res) = split_outs(outs, n, "custom_vjp_call")?;
                if ts.iter().all(Option::is_none) {
                    return Ok((p, vec![None; n]));
                }
                let in_avals = v.call.in_avals()?;
                let mut ins = res;
                ins.extend(instantiate(b, ts, &in_avals)?);
                let lin = Primitive::Custom(CustomCall::Lin {
                    bwd: v.bwd.clone(),
                    num_res: v.num_res,
                    name: v.name.clone(),
                });
                let touts = b.add_eqn(lin, ins, None)?;
                Ok((p, touts.into_iter().map(|v| Some(Atom::Var(v))).collect()))
            }
            CustomCall::LinearCall {
                callee, num_res, ..
            } => {
                let emit = |b: &mut Builder, ins: Vec<Atom>| -> Result<Vec<Atom>> {
                    Ok(b.add_eqn(Primitive::Custom(c.clone()), ins, None)?
                        .into_iter()
                        .map(Atom::Var)
                        .collect())
                };
                if ts.iter().take(*num_res).any(Option::is_some) {
                    return Err(Error::Unsupported(
                        "linear_call: the residual arguments cannot be differentiated".into(),
                    ));
                }
                let prim = emit(b, xs.to_vec())?;
                let lin_t = ts.get(*num_res..).unwrap_or_default();
                if lin_t.iter().all(Option::is_none) {
                    let n = prim.len();
                    return Ok((prim, vec![None; n]));
                }
                let in_avals = callee.in_avals()?;
                let mut ins: Vec<Atom> = xs.get(..*num_res).unwrap_or_default().to_vec();
                ins.extend(instantiate(
                    b,
                    lin_t,
                    in_avals.get(*num_res..).unwrap_or_default(),
                )?);
                let tans = emit(b, ins)?;
                Ok((prim, tans.into_iter().map(Some).collect()))
            }
            CustomCall::Lin { .. } => Err(Error::Unsupported(FORWARD_MODE_ERROR.into())),
        }
    }

    /// Only `custom_lin` and `linear_call` are linear; `custom_lin`'s
    /// transpose is `bwd`.
    fn transpose(&self, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TransposeOut {
        let c = self;
        if let CustomCall::LinearCall {
            callee,
            transpose,
            num_res,
        } = c
        {
            return transpose_linear_call(callee, transpose, *num_res, b, cts, ops);
        }
        let CustomCall::Lin { bwd, num_res, .. } = c else {
            return Err(Error::Typecheck(format!(
                "cannot transpose {}: it is not linear",
                c.name()
            )));
        };
        let bwd_in = bwd.in_avals()?;
        let mut ins: Vec<Atom> = Vec::with_capacity(bwd_in.len());
        for op in ops.iter().take(*num_res) {
            match op {
                Operand::Known(a) => ins.push(a.clone()),
                Operand::Linear(_) => {
                    return Err(Error::Typecheck(
                        "custom_lin: residual operands must be known".into(),
                    ))
                }
            }
        }
        let ct_avals = bwd_in.get(*num_res..).unwrap_or_default();
        for (ct, aval) in cts.iter().zip(ct_avals) {
            ins.push(match ct {
                Some(c) => c.clone(),
                None => b.zeros(aval)?,
            });
        }
        let outs = splice(b, bwd, &ins)?;
        let mut result: Vec<Option<Atom>> = vec![None; *num_res];
        result.extend(outs.into_iter().map(Some));
        Ok(result)
    }

    /// Batching rule. `custom_jvp_call` batches its function and its rule
    /// together (outputs at axis 0). `custom_vjp_call` and `custom_lin` batch
    /// with every operand's mapped axis in front (unbatched operands broadcast):
    /// the function, `fwd` (outputs and residuals at axis 0) and `bwd`
    /// (residuals, cotangents and input cotangents at axis 0) are batched with
    /// those matching dims, so the batched rules still fit each other.
    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize) -> BatchOut {
        let c = self;
        let p = Primitive::Custom(c.clone());
        if dims.iter().all(Option::is_none) && !crate::transforms::batch::names_current_axis(&p) {
            let outs: Vec<Atom> = b
                .add_eqn(p, ins.to_vec(), None)?
                .into_iter()
                .map(Atom::Var)
                .collect();
            let d = vec![None; outs.len()];
            return Ok((outs, d));
        }
        let prim = Primitive::Custom(batched_call(c, dims, ins.len(), n)?);
        let ins = match c {
            CustomCall::Jvp { .. } => ins.to_vec(),
            _ => all_in_front(b, ins, dims, n)?,
        };
        super::batch::emit_all_at(b, prim, ins, Some(0))
    }
}

/// `k` batch dims, all at axis 0.
fn at0(k: usize) -> Vec<Option<usize>> {
    vec![Some(0); k]
}

/// `c` with its function and rules batched (see [`CustomCall`]'s `batch`):
/// a `custom_jvp_call` with the operands' `dims`, the others with the
/// `nin` operands' mapped axes in front.
fn batched_call(
    c: &CustomCall, dims: &[Option<usize>], nin: usize, n: usize,
) -> Result<CustomCall> {
    Ok(match c {
        CustomCall::Jvp { call, jvp, name } => batch_jvp_call(call, jvp.as_ref(), name, dims, n)?,
        CustomCall::Vjp(v) => {
            let nout = v.call.out_avals()?.len();
            let bcall = batch_jaxpr(&v.call, &at0(nin), n, &at0(nout))?;
            let bfwd = batch_jaxpr(&v.fwd, &at0(nin), n, &at0(nout.saturating_add(v.num_res)))?;
            let bbwd = batch_jaxpr(&v.bwd, &at0(v.num_res.saturating_add(nout)), n, &at0(nin))?;
            CustomCall::Vjp(VjpCall {
                call: Arc::new(bcall),
                fwd: Arc::new(bfwd),
                bwd: Arc::new(bbwd),
                num_res: v.num_res,
                name: v.name.clone(),
            })
        }
        CustomCall::LinearCall {
            callee,
            transpose,
            num_res,
        } => {
            let nout = callee.out_avals()?.len();
            let bcallee = batch_jaxpr(callee, &at0(nin), n, &at0(nout))?;
            let nlin = nin.saturating_sub(*num_res);
            let btrans = batch_jaxpr(transpose, &at0(num_res.saturating_add(nout)), n, &at0(nlin))?;
            CustomCall::LinearCall {
                callee: Arc::new(bcallee),
                transpose: Arc::new(btrans),
                num_res: *num_res,
            }
        }
        CustomCall::Lin { bwd, num_res, name } => {
            let nct = bwd.in_avals()?.len();
            let nin = bwd.out_avals()?.len();
            let bbwd = batch_jaxpr(bwd, &at0(nct), n, &at0(nin))?;
            CustomCall::Lin {
                bwd: Arc::new(bbwd),
                num_res: *num_res,
                name: name.clone(),
            }
        }
    })
}

/// A `custom_jvp_call` batched: its function with the operands' `dims`,
/// its rule with those dims for primals and tangents; outputs at axis 0.
fn batch_jvp_call(
    call: &ClosedJaxpr, jvp: Option<&Arc<ClosedJaxpr>>, name: &str, dims: &[Option<usize>],
    n: usize,
) -> Result<CustomCall> {
    let nout = call.out_avals()?.len();
    let bcall = batch_jaxpr(call, dims, n, &at0(nout))?;
    let bjvp = match jvp {
        Some(rule) => {
            let mut rdims = dims.to_vec();
            rdims.extend_from_slice(dims);
            Some(Arc::new(batch_jaxpr(
                rule,
                &rdims,
                n,
                &at0(nout.saturating_mul(2)),
            )?))
        }
        None => None,
    };
    Ok(CustomCall::Jvp {
        call: Arc::new(bcall),
        jvp: bjvp,
        name: name.to_string(),
    })
}
