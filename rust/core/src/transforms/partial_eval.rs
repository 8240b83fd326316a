//! Partial evaluation: splits a jaxpr into a *known* part that runs on the
//! known inputs and an *unknown* part that runs on the unknown inputs and
//! the residuals (the known values the unknown part reads).
//!
//! * an equation with an unknown operand is unknown, except that a
//!   higher-order equation (`pjit`, `cond`, `while`, `scan`) with mixed
//!   operands is split by its primitive's rule into a known and an unknown
//!   equation ([`SplitEqn`]);
//! * an equation with only literal operands (a materialized zero, an iota)
//!   is copied into both parts, so constants are rebuilt rather than passed
//!   as residuals;
//! * consts are available to both parts; effectful equations with only
//!   known operands stay in the known part, in order;
//! * residuals the unknown part does not end up reading are dropped.
//!
//! Both parts share the input's variable numbering while being built and are
//! compacted by DCE at the end.

use super::dce::{dce_closed, dce_keep_inputs, dce_owned};
use crate::error::{Error, Result};
use crate::ir::{Atom, Aval, ClosedJaxpr, Effect, Eqn, Jaxpr, Var};
use crate::prims::Primitive;
use crate::prims::{Checkpoint, Pjit};
use std::sync::Arc;

/// The two parts of a partially evaluated jaxpr.
#[derive(Debug, Clone)]
pub struct PartialEval {
    /// known inputs -> (known outputs..., residuals...)
    pub known: ClosedJaxpr,
    /// (residuals..., unknown inputs...) -> unknown outputs
    pub unknown: ClosedJaxpr,
    /// Which outputs the unknown part computes.
    pub out_unknowns: Vec<bool>,
    pub num_res: usize,
}

struct State {
    unknown: Vec<bool>,
    /// Defined in the unknown part (unknown, copied, const or residual).
    avail: Vec<bool>,
    residuals: Vec<Var>,
}

impl State {
    fn get(v: &[bool], var: Var) -> bool {
        v.get(var.index()).copied().unwrap_or(false)
    }

    fn set(v: &mut [bool], var: Var, val: bool) -> Result<()> {
        let s = v
            .get_mut(var.index())
            .ok_or_else(|| Error::UnboundVar(format!("#{}", var.0)))?;
        *s = val;
        Ok(())
    }

    /// Makes a known variable available to the unknown part.
    fn need(&mut self, v: Var) -> Result<()> {
        if !State::get(&self.unknown, v) && !State::get(&self.avail, v) {
            self.residuals.push(v);
            State::set(&mut self.avail, v, true)?;
        }
        Ok(())
    }

    fn push_var(&mut self) {
        self.unknown.push(false);
        self.avail.push(false);
    }
}

/// Partially evaluates `j` with inputs `unknowns[i]` unknown. Outputs with
/// `instantiate[j]` are computed by the unknown part even when known
/// (passed through as residuals or rebuilt from literals).
pub fn partial_eval_jaxpr(
    j: &ClosedJaxpr, unknowns: &[bool], instantiate: &[bool],
) -> Result<PartialEval> {
    let jx = &j.jaxpr;
    if unknowns.len() != jx.invars.len() || instantiate.len() != jx.outvars.len() {
        return Err(Error::arity(
            "partial_eval_jaxpr",
            jx.invars.len(),
            unknowns.len(),
        ));
    }
    let mut avals = jx.avals.clone();
    let mut st = State::new(jx, unknowns)?;
    let mut eqns = SplitEqns::default();
    for eqn in &jx.eqns {
        eqns.partition(eqn, &mut st, &mut avals)?;
    }
    let outs = partition_outputs(jx, instantiate, &mut st)?;
    assemble(j, unknowns, avals, st, eqns, outs)
}

/// The equations of the known and of the unknown part.
#[derive(Default)]
struct SplitEqns {
    known: Vec<Eqn>,
    unknown: Vec<Eqn>,
}

/// The outputs of the known and of the unknown part, and which of the
/// program's outputs the unknown part computes.
struct SplitOutputs {
    known: Vec<Atom>,
    unknown: Vec<Atom>,
    out_unknowns: Vec<bool>,
}

impl State {
    /// The state before the first equation: the unknown inputs are unknown,
    /// they and the consts are available to the unknown part.
    fn new(jx: &Jaxpr, unknowns: &[bool]) -> Result<State> {
        let n = jx.avals.len();
        let mut st = State {
            unknown: vec![false; n],
            avail: vec![false; n],
            residuals: Vec::new(),
        };
        for (v, u) in jx.invars.iter().zip(unknowns) {
            State::set(&mut st.unknown, *v, *u)?;
            State::set(&mut st.avail, *v, *u)?;
        }
        for v in &jx.constvars {
            State::set(&mut st.avail, *v, true)?;
        }
        Ok(st)
    }
}

impl SplitEqns {
    /// Puts `eqn` into the known part, the unknown part, both, or splits it
    /// by its primitive's rule.
    fn partition(&mut self, eqn: &Eqn, st: &mut State, avals: &mut Vec<Aval>) -> Result<()> {
        let vars: Vec<Var> = eqn.inputs.iter().filter_map(Atom::var).collect();
        if vars.is_empty() && eqn.effect == Effect::None {
            self.known.push(eqn.clone());
            self.unknown.push(eqn.clone());
            for o in &eqn.outputs {
                State::set(&mut st.avail, *o, true)?;
            }
            return Ok(());
        }
        if !vars.iter().any(|v| State::get(&st.unknown, *v)) {
            self.known.push(eqn.clone());
            return Ok(());
        }
        let in_unk: Vec<bool> = eqn
            .inputs
            .iter()
            .map(|a| match a {
                Atom::Var(v) => State::get(&st.unknown, *v),
                Atom::Lit(_) => false,
            })
            .collect();
        if let Some(split) = split_rule(eqn, &in_unk)? {
            return apply_split(eqn, split, st, avals, &mut self.known, &mut self.unknown);
        }
        for v in &vars {
            st.need(*v)?;
        }
        self.unknown.push(eqn.clone());
        for o in &eqn.outputs {
            State::set(&mut st.unknown, *o, true)?;
            State::set(&mut st.avail, *o, true)?;
        }
        Ok(())
    }
}

/// Assigns each program output to the known or the unknown part (a known
/// output with `instantiate` becomes a residual passed through).
fn partition_outputs(jx: &Jaxpr, instantiate: &[bool], st: &mut State) -> Result<SplitOutputs> {
    let mut outs = SplitOutputs {
        known: Vec::new(),
        unknown: Vec::new(),
        out_unknowns: Vec::with_capacity(jx.outvars.len()),
    };
    for (a, inst) in jx.outvars.iter().zip(instantiate) {
        let unk = match a {
            Atom::Var(v) if State::get(&st.unknown, *v) => true,
            Atom::Var(v) if *inst => {
                st.need(*v)?;
                true
            }
            Atom::Lit(_) => *inst,
            Atom::Var(_) => false,
        };
        if unk {
            outs.unknown.push(a.clone());
        } else {
            outs.known.push(a.clone());
        }
        outs.out_unknowns.push(unk);
    }
    Ok(outs)
}

/// The inputs of `jx` whose `unknowns` flag equals `unknown`.
fn invars_where(jx: &Jaxpr, unknowns: &[bool], unknown: bool) -> Vec<Var> {
    jx.invars
        .iter()
        .zip(unknowns)
        .filter(|(_, u)| **u == unknown)
        .map(|(v, _)| *v)
        .collect()
}

/// Builds both parts, drops the residuals the live unknown part does not
/// read, and compacts both by DCE.
fn assemble(
    j: &ClosedJaxpr, unknowns: &[bool], avals: Vec<Aval>, st: State, eqns: SplitEqns,
    outs: SplitOutputs,
) -> Result<PartialEval> {
    let jx = &j.jaxpr;
    let unknown_invars = invars_where(jx, unknowns, true);
    let known_invars = invars_where(jx, unknowns, false);
    // Drop residuals the live unknown part does not read.
    let raw_unknown = |res: &[Var]| -> ClosedJaxpr {
        let mut invars = res.to_vec();
        invars.extend(&unknown_invars);
        ClosedJaxpr::new(
            Jaxpr {
                avals: avals.clone(),
                constvars: jx.constvars.clone(),
                invars,
                eqns: eqns.unknown.clone(),
                outvars: outs.unknown.clone(),
            },
            j.consts.clone(),
        )
    };
    let probe = raw_unknown(&st.residuals);
    let (_, used) = dce_keep_inputs(&probe, &vec![true; outs.unknown.len()])?;
    let residuals: Vec<Var> = st
        .residuals
        .iter()
        .zip(&used)
        .filter(|(_, u)| **u)
        .map(|(v, _)| *v)
        .collect();
    let unknown = dce_owned(raw_unknown(&residuals))?;
    let mut outvars = outs.known;
    outvars.extend(residuals.iter().map(|v| Atom::Var(*v)));
    let known = dce_owned(ClosedJaxpr::new(
        Jaxpr {
            avals,
            constvars: jx.constvars.clone(),
            invars: known_invars,
            eqns: eqns.known,
            outvars,
        },
        j.consts.clone(),
    ))?;
    Ok(PartialEval {
        known,
        unknown,
        out_unknowns: outs.out_unknowns,
        num_res: residuals.len(),
    })
}

/// One operand of the unknown half of a split equation.
#[derive(Debug, Clone)]
pub enum SplitInput {
    /// An atom of the program being split (a known one becomes a residual
    /// of the enclosing split).
    Atom(Atom),
    /// Residual `i` of the known half.
    Residual(usize),
}

/// A higher-order equation with some unknown operands, split by its
/// primitive's rule into a known and an unknown equation.
#[derive(Debug, Clone)]
pub struct SplitEqn {
    /// The known equation (`None`: nothing to compute ahead). Its outputs
    /// are the equation's known outputs, then the residuals.
    pub known: Option<(Primitive, Vec<Atom>)>,
    /// Types of the residuals the known equation returns.
    pub residuals: Vec<crate::ir::Aval>,
    /// Which outputs of the equation the unknown half computes.
    pub out_unknowns: Vec<bool>,
    /// The unknown equation. Its outputs are the unknown outputs, or, with
    /// `unknown_emits_all`, every output (known ones into unused variables).
    pub unknown: (Primitive, Vec<SplitInput>),
    pub unknown_emits_all: bool,
}

/// The call primitive `p` (a checkpoint) calling `j`.
pub(crate) fn with_checkpoint_callee(p: &Primitive, j: ClosedJaxpr) -> Result<Primitive> {
    p.with_callee(Arc::new(j), "")
        .ok_or_else(|| Error::InvalidArgument("checkpoint: not a call primitive".into()))
}

/// The entries of `xs` whose flag in `unknown` is `want` (false: the known
/// ones).
pub(crate) fn flagged<T: Clone>(xs: &[T], unknown: &[bool], want: bool) -> Vec<T> {
    xs.iter()
        .zip(unknown)
        .filter(|(_, u)| **u == want)
        .map(|(a, _)| a.clone())
        .collect()
}

/// The entries of `xs` that are not unknown (`unknown`).
pub(crate) fn known_ins<T: Clone>(xs: &[T], unknown: &[bool]) -> Vec<T> {
    flagged(xs, unknown, false)
}

/// The split rule of a higher-order primitive; `None` for every other
/// primitive (the whole equation then goes to the unknown part).
fn split_rule(eqn: &Eqn, in_unk: &[bool]) -> Result<Option<SplitEqn>> {
    match &eqn.prim {
        Primitive::Pjit(Pjit { jaxpr, name }) => {
            split_pjit(jaxpr, name, &eqn.inputs, in_unk).map(Some)
        }
        Primitive::Control(c) => crate::prims::control::ad::split(c, &eqn.inputs, in_unk),
        Primitive::Checkpoint(Checkpoint { jaxpr, policy, .. })
            if *policy != crate::prims::RematPolicy::Nothing =>
        {
            super::remat::split_with_policy(&eqn.prim, jaxpr, policy, &eqn.inputs, in_unk).map(Some)
        }
        Primitive::Checkpoint(Checkpoint { jaxpr, .. }) => {
            split_checkpoint(&eqn.prim, jaxpr, &eqn.inputs, in_unk).map(Some)
        }
        _ => Ok(None),
    }
}

/// Emits a split equation into both parts.
fn apply_split(
    eqn: &Eqn, split: SplitEqn, st: &mut State, avals: &mut Vec<crate::ir::Aval>,
    known_eqns: &mut Vec<Eqn>, unknown_eqns: &mut Vec<Eqn>,
) -> Result<()> {
    let fresh = |st: &mut State, avals: &mut Vec<crate::ir::Aval>, a: crate::ir::Aval| {
        let id =
            u32::try_from(avals.len()).map_err(|_| Error::Limit("too many variables".into()))?;
        avals.push(a);
        st.push_var();
        Ok::<Var, Error>(Var(id))
    };
    let mut res_vars = Vec::with_capacity(split.residuals.len());
    for a in split.residuals {
        res_vars.push(fresh(st, avals, a)?);
    }
    if let Some((prim, inputs)) = split.known {
        let mut outputs = known_ins(&eqn.outputs, &split.out_unknowns);
        outputs.extend(&res_vars);
        known_eqns.push(Eqn {
            effect: prim.effect(),
            prim,
            inputs,
            outputs,
            source: eqn.source.clone(),
        });
    }
    let (prim, spec) = split.unknown;
    let mut inputs = Vec::with_capacity(spec.len());
    for s in spec {
        let a = match s {
            SplitInput::Atom(a) => a,
            SplitInput::Residual(i) => Atom::Var(*res_vars.get(i).ok_or(Error::arity(
                eqn.prim.name(),
                i,
                res_vars.len(),
            ))?),
        };
        if let Atom::Var(v) = &a {
            if !State::get(&st.unknown, *v) {
                st.need(*v)?;
            }
        }
        inputs.push(a);
    }
    let mut outputs = Vec::with_capacity(eqn.outputs.len());
    for (o, u) in eqn.outputs.iter().zip(&split.out_unknowns) {
        if *u {
            outputs.push(*o);
        } else if split.unknown_emits_all {
            let aval = avals
                .get(o.index())
                .cloned()
                .ok_or_else(|| Error::UnboundVar(format!("#{}", o.0)))?;
            outputs.push(fresh(st, avals, aval)?);
        }
    }
    for o in &outputs {
        State::set(&mut st.unknown, *o, true)?;
        State::set(&mut st.avail, *o, true)?;
    }
    unknown_eqns.push(Eqn {
        effect: prim.effect(),
        prim,
        inputs,
        outputs,
        source: eqn.source.clone(),
    });
    Ok(())
}

/// `checkpoint`: the known call returns only its known outputs (no
/// residuals); the unknown call recomputes what it needs from the call's
/// operands, which become the residuals of the enclosing split instead of
/// the callee's intermediates.
fn split_checkpoint(
    p: &Primitive, sub: &ClosedJaxpr, ins: &[Atom], in_unk: &[bool],
) -> Result<SplitEqn> {
    let n_out = sub.jaxpr.outvars.len();
    let split = partial_eval_jaxpr(sub, in_unk, &vec![false; n_out])?;
    let n_known = split
        .known
        .jaxpr
        .outvars
        .len()
        .saturating_sub(split.num_res);
    let known = crate::ir::rewire::select_outputs(&split.known, &(0..n_known).collect::<Vec<_>>())?;
    let unknown_outs: Vec<usize> = (0..n_out)
        .filter(|k| split.out_unknowns.get(*k).copied().unwrap_or(false))
        .collect();
    let unknown = crate::ir::rewire::select_outputs(sub, &unknown_outs)?;
    let wrap = |j: ClosedJaxpr| with_checkpoint_callee(p, dce_closed(&j)?);
    Ok(SplitEqn {
        known: Some((wrap(known)?, known_ins(ins, in_unk))),
        residuals: Vec::new(),
        out_unknowns: split.out_unknowns,
        unknown: (
            wrap(unknown)?,
            ins.iter().cloned().map(SplitInput::Atom).collect(),
        ),
        unknown_emits_all: false,
    })
}

/// `pjit`: a known call returning its known outputs and the callee's
/// residuals, and an unknown call of the residuals and unknown operands.
fn split_pjit(sub: &ClosedJaxpr, name: &str, ins: &[Atom], in_unk: &[bool]) -> Result<SplitEqn> {
    let n_out = sub.jaxpr.outvars.len();
    let split = partial_eval_jaxpr(sub, in_unk, &vec![false; n_out])?;
    let known_out_avals = split.known.out_avals()?;
    let n_known_outs = known_out_avals.len().saturating_sub(split.num_res);
    let residuals = known_out_avals
        .get(n_known_outs..)
        .unwrap_or_default()
        .to_vec();
    let pick = |want: bool| -> Vec<Atom> {
        ins.iter()
            .zip(in_unk)
            .filter(|(_, u)| **u == want)
            .map(|(a, _)| a.clone())
            .collect()
    };
    let mut unknown_ins: Vec<SplitInput> = (0..split.num_res).map(SplitInput::Residual).collect();
    unknown_ins.extend(pick(true).into_iter().map(SplitInput::Atom));
    Ok(SplitEqn {
        known: Some((
            Primitive::Pjit(Pjit {
                jaxpr: Arc::new(split.known),
                name: name.to_string(),
            }),
            pick(false),
        )),
        residuals,
        out_unknowns: split.out_unknowns,
        unknown: (
            Primitive::Pjit(Pjit {
                jaxpr: Arc::new(split.unknown),
                name: name.to_string(),
            }),
            unknown_ins,
        ),
        unknown_emits_all: false,
    })
}
