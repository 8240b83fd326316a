//! Dead-code elimination.
//!
//! An equation is live when one of its outputs is used or it has an effect
//! (effectful equations are always kept, in program order). A live `pjit`
//! whose callee is pure is pruned recursively: unused outputs and inputs of
//! the call disappear with the callee's dead code. Unused constvars are
//! dropped with their values, and variables are renumbered densely.

use super::debug_check;
use crate::error::{Error, Result};
use crate::ir::{Atom, Aval, ClosedJaxpr, Effect, Eqn, Jaxpr, Var};
use crate::prims::Primitive;
use crate::prims::{Checkpoint, Pjit};
use std::sync::Arc;

/// Dead-code elimination keeping the outputs `j` with `used_outputs[j]`.
///
/// As JAX's `dce_jaxpr`: the result has only the used outputs *and only the
/// used inputs*; the returned mask says which of `j`'s inputs it still takes
/// (in their original order).
pub fn dce_jaxpr(j: &ClosedJaxpr, used_outputs: &[bool]) -> Result<(ClosedJaxpr, Vec<bool>)> {
    let (out, used) = dce_impl(j, used_outputs, true)?;
    debug_check(&out)?;
    Ok((out, used))
}

/// Removes dead equations and unused consts, keeping every input and output
/// (the signature is unchanged). Transforms run this on their results.
pub fn dce_closed(j: &ClosedJaxpr) -> Result<ClosedJaxpr> {
    let all = vec![true; j.jaxpr.outvars.len()];
    Ok(dce_impl(j, &all, false)?.0)
}

/// Like [`dce_jaxpr`] but keeping every input; the mask says which inputs
/// are read.
pub(crate) fn dce_keep_inputs(
    j: &ClosedJaxpr, used_outputs: &[bool],
) -> Result<(ClosedJaxpr, Vec<bool>)> {
    dce_impl(j, used_outputs, false)
}

fn mark(live: &mut [bool], a: &Atom) {
    if let Atom::Var(v) = a {
        if let Some(slot) = live.get_mut(v.index()) {
            *slot = true;
        }
    }
}

fn is_live(live: &[bool], v: Var) -> bool {
    live.get(v.index()).copied().unwrap_or(false)
}

fn dce_impl(
    j: &ClosedJaxpr, used_outputs: &[bool], prune_inputs: bool,
) -> Result<(ClosedJaxpr, Vec<bool>)> {
    let jx = &j.jaxpr;
    Error::check_count(
        "dce_jaxpr (used_outputs)",
        jx.outvars.len(),
        used_outputs.len(),
    )?;
    let mut live = vec![false; jx.avals.len()];
    let outvars: Vec<Atom> = jx
        .outvars
        .iter()
        .zip(used_outputs)
        .filter(|(_, u)| **u)
        .map(|(a, _)| a.clone())
        .collect();
    for a in &outvars {
        mark(&mut live, a);
    }
    let kept = live_eqns(jx, &mut live)?;
    let used_inputs: Vec<bool> = jx.invars.iter().map(|v| is_live(&live, *v)).collect();
    let invars: Vec<Var> = if prune_inputs {
        jx.invars
            .iter()
            .copied()
            .filter(|v| is_live(&live, *v))
            .collect()
    } else {
        jx.invars.clone()
    };
    let mut constvars = Vec::new();
    let mut consts = Vec::new();
    for (v, c) in jx.constvars.iter().zip(&j.consts) {
        if is_live(&live, *v) {
            constvars.push(*v);
            consts.push(c.clone());
        }
    }
    let jaxpr = compact(&jx.avals, &constvars, &invars, kept, &outvars)?;
    Ok((ClosedJaxpr::new(jaxpr, consts), used_inputs))
}

/// The live equations of `jx` in program order, found by a backward sweep
/// from the variables already marked in `live` (marking their operands);
/// live pure calls are pruned recursively.
fn live_eqns(jx: &Jaxpr, live: &mut [bool]) -> Result<Vec<Eqn>> {
    let mut kept: Vec<Eqn> = Vec::new();
    for eqn in jx.eqns.iter().rev() {
        let used_outs: Vec<bool> = eqn.outputs.iter().map(|v| is_live(live, *v)).collect();
        let pure = eqn.effect == Effect::None;
        if pure && !used_outs.iter().any(|u| *u) {
            continue;
        }
        let eqn = match &eqn.prim {
            Primitive::Pjit(Pjit { jaxpr, .. })
            | Primitive::Checkpoint(Checkpoint { jaxpr, .. })
                if pure =>
            {
                prune_call(eqn, jaxpr, &used_outs)?
            }
            _ => eqn.clone(),
        };
        for a in &eqn.inputs {
            mark(live, a);
        }
        kept.push(eqn);
    }
    kept.reverse();
    Ok(kept)
}

/// A pure call equation `eqn` of callee `jaxpr` with only the outputs
/// `used_outs`, its callee pruned and the inputs it no longer reads dropped.
fn prune_call(eqn: &Eqn, jaxpr: &ClosedJaxpr, used_outs: &[bool]) -> Result<Eqn> {
    let (sub, used_ins) = dce_impl(jaxpr, used_outs, true)?;
    Ok(Eqn {
        prim: eqn
            .prim
            .with_callee(Arc::new(sub), "")
            .ok_or_else(|| Error::InvalidArgument("dce: not a call primitive".into()))?,
        inputs: eqn
            .inputs
            .iter()
            .zip(&used_ins)
            .filter(|(_, u)| **u)
            .map(|(a, _)| a.clone())
            .collect(),
        outputs: eqn
            .outputs
            .iter()
            .zip(used_outs)
            .filter(|(_, u)| **u)
            .map(|(v, _)| *v)
            .collect(),
        effect: eqn.effect,
        source: eqn.source.clone(),
    })
}

/// Renumbers variables densely in binding order (constvars, invars,
/// equation outputs), dropping avals no binding uses.
pub(crate) fn compact(
    avals: &[Aval], constvars: &[Var], invars: &[Var], eqns: Vec<Eqn>, outvars: &[Atom],
) -> Result<Jaxpr> {
    let mut r = Renumber {
        avals,
        map: vec![None; avals.len()],
        new_avals: Vec::new(),
    };
    let new_constvars = constvars
        .iter()
        .map(|v| r.bind(*v))
        .collect::<Result<Vec<_>>>()?;
    let new_invars = invars
        .iter()
        .map(|v| r.bind(*v))
        .collect::<Result<Vec<_>>>()?;
    let mut new_eqns = Vec::with_capacity(eqns.len());
    for mut eqn in eqns {
        for a in &mut eqn.inputs {
            remap(&r.map, a)?;
        }
        for v in &mut eqn.outputs {
            *v = r.bind(*v)?;
        }
        new_eqns.push(eqn);
    }
    let mut new_outvars = outvars.to_vec();
    for a in &mut new_outvars {
        remap(&r.map, a)?;
    }
    Ok(Jaxpr {
        avals: r.new_avals,
        constvars: new_constvars,
        invars: new_invars,
        eqns: new_eqns,
        outvars: new_outvars,
    })
}

struct Renumber<'a> {
    avals: &'a [Aval],
    map: Vec<Option<Var>>,
    new_avals: Vec<Aval>,
}

impl Renumber<'_> {
    fn bind(&mut self, v: Var) -> Result<Var> {
        let aval = self
            .avals
            .get(v.index())
            .ok_or_else(|| Error::UnboundVar(format!("#{}", v.0)))?;
        let id = u32::try_from(self.new_avals.len())
            .map_err(|_| Error::Limit("too many variables".into()))?;
        self.new_avals.push(aval.clone());
        let nv = Var(id);
        if let Some(slot) = self.map.get_mut(v.index()) {
            *slot = Some(nv);
        }
        Ok(nv)
    }
}

fn remap(map: &[Option<Var>], a: &mut Atom) -> Result<()> {
    if let Atom::Var(v) = a {
        *v = map
            .get(v.index())
            .copied()
            .flatten()
            .ok_or_else(|| Error::UnboundVar(format!("#{}", v.0)))?;
    }
    Ok(())
}
