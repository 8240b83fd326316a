//! Dead-code elimination.
//!
//! An equation is live when one of its outputs is used or it has an effect
//! (effectful equations are always kept, in program order). A live `pjit`
//! whose callee is pure is pruned recursively: unused outputs and inputs of
//! the call disappear with the callee's dead code. Unused constvars are
//! dropped with their values, and variables are renumbered densely.

use super::debug_check;
use crate::array::HostArray;
use crate::error::{Error, Result};
use crate::ir::{Atom, Aval, ClosedJaxpr, Effect, Eqn, Jaxpr, Var};
use crate::prims::Primitive;
use crate::prims::{Checkpoint, Pjit};
use std::borrow::Cow;
use std::collections::BTreeMap;
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
    if used_outputs.iter().all(|u| *u) && used_outputs.len() == j.jaxpr.outvars.len() {
        if let Some(used_inputs) = already_clean(&j.jaxpr, prune_inputs) {
            return Ok((j.clone(), used_inputs));
        }
    }
    dce_parts(
        Cow::Borrowed(&*j.jaxpr),
        &j.consts,
        used_outputs,
        prune_inputs,
    )
}

/// Which inputs `jx` reads, when DCE keeping every output would return it
/// unchanged (a transform's input usually is): no call to prune, every
/// equation live, every const read (and every input, with
/// `prune_inputs`), variables numbered densely in binding order. None
/// otherwise. One sweep and no copy, so the common case shares the program.
fn already_clean(jx: &Jaxpr, prune_inputs: bool) -> Option<Vec<bool>> {
    // Dense numbering, and every operand bound before it is read (anything
    // else takes the full path, which reports it).
    fn bind(count: &mut usize, v: Var) -> Option<()> {
        (v.index() == *count).then_some(())?;
        *count = count.checked_add(1)?;
        Some(())
    }
    let bound = |a: &Atom, count: usize| a.var().is_none_or(|v| v.index() < count);
    let mut count = 0usize;
    for v in jx.constvars.iter().chain(&jx.invars) {
        bind(&mut count, *v)?;
    }
    for e in &jx.eqns {
        if !e.inputs.iter().all(|a| bound(a, count)) {
            return None;
        }
        for v in &e.outputs {
            bind(&mut count, *v)?;
        }
    }
    if count != jx.avals.len() || !jx.outvars.iter().all(|a| bound(a, count)) {
        return None;
    }
    let mut live = vec![false; jx.avals.len()];
    for a in &jx.outvars {
        mark(&mut live, a);
    }
    for eqn in jx.eqns.iter().rev() {
        let calls = matches!(eqn.prim, Primitive::Pjit(_) | Primitive::Checkpoint(_));
        let dead = !eqn.outputs.iter().any(|v| is_live(&live, *v));
        if calls || (dead && eqn.effect == Effect::None) {
            return None;
        }
        for a in &eqn.inputs {
            mark(&mut live, a);
        }
    }
    let used: Vec<bool> = jx.invars.iter().map(|v| is_live(&live, *v)).collect();
    let consts_read = jx.constvars.iter().all(|v| is_live(&live, *v));
    (consts_read && (!prune_inputs || used.iter().all(|u| *u))).then_some(used)
}

/// [`dce_closed`] of a program the caller gives up: kept equations and
/// avals move into the result instead of being copied.
pub fn dce_owned(j: ClosedJaxpr) -> Result<ClosedJaxpr> {
    let all = vec![true; j.jaxpr.outvars.len()];
    let ClosedJaxpr { jaxpr, consts } = j;
    let jx = match Arc::try_unwrap(jaxpr) {
        Ok(jx) => Cow::Owned(jx),
        Err(shared) => Cow::Owned((*shared).clone()),
    };
    Ok(dce_parts(jx, &consts, &all, false)?.0)
}

fn dce_parts(
    jx: Cow<'_, Jaxpr>, consts: &[Arc<HostArray>], used_outputs: &[bool], prune_inputs: bool,
) -> Result<(ClosedJaxpr, Vec<bool>)> {
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
    let (keep, pruned) = live_eqns(&jx, &mut live)?;
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
    let mut kept_consts = Vec::new();
    for (v, c) in jx.constvars.iter().zip(consts) {
        if is_live(&live, *v) {
            constvars.push(*v);
            kept_consts.push(c.clone());
        }
    }
    let (avals, eqns) = kept_eqns(jx, &keep, pruned);
    let jaxpr = compact(avals, &constvars, &invars, eqns, &outvars)?;
    Ok((ClosedJaxpr::new(jaxpr, kept_consts), used_inputs))
}

/// The avals of `jx` and its equations with `keep[i]` in program order
/// (`pruned` replacing the calls it names), moved out of an owned program
/// and copied from a borrowed one.
fn kept_eqns<'a>(
    jx: Cow<'a, Jaxpr>, keep: &[bool], mut pruned: BTreeMap<usize, Eqn>,
) -> (Cow<'a, [Aval]>, Vec<Eqn>) {
    let count = keep.iter().filter(|k| **k).count();
    let mut eqns = Vec::with_capacity(count);
    let kept = |i: &usize| keep.get(*i).copied().unwrap_or(false);
    match jx {
        Cow::Owned(jx) => {
            for (i, eqn) in jx.eqns.into_iter().enumerate().filter(|(i, _)| kept(i)) {
                eqns.push(pruned.remove(&i).unwrap_or(eqn));
            }
            (Cow::Owned(jx.avals), eqns)
        }
        Cow::Borrowed(jx) => {
            for (i, eqn) in jx.eqns.iter().enumerate().filter(|(i, _)| kept(i)) {
                eqns.push(match pruned.remove(&i) {
                    Some(p) => p,
                    None => eqn.clone(),
                });
            }
            (Cow::Borrowed(jx.avals.as_slice()), eqns)
        }
    }
}

/// Which equations of `jx` are live, found by a backward sweep from the
/// variables already marked in `live` (marking their operands), and the
/// live pure calls pruned recursively (by equation index).
fn live_eqns(jx: &Jaxpr, live: &mut [bool]) -> Result<(Vec<bool>, BTreeMap<usize, Eqn>)> {
    let mut keep = vec![false; jx.eqns.len()];
    let mut pruned = BTreeMap::new();
    for (i, eqn) in jx.eqns.iter().enumerate().rev() {
        let any_used = eqn.outputs.iter().any(|v| is_live(live, *v));
        let pure = eqn.effect == Effect::None;
        if pure && !any_used {
            continue;
        }
        if let Some(slot) = keep.get_mut(i) {
            *slot = true;
        }
        match &eqn.prim {
            Primitive::Pjit(Pjit { jaxpr, .. })
            | Primitive::Checkpoint(Checkpoint { jaxpr, .. })
                if pure =>
            {
                let used_outs: Vec<bool> = eqn.outputs.iter().map(|v| is_live(live, *v)).collect();
                let call = prune_call(eqn, jaxpr, &used_outs)?;
                for a in &call.inputs {
                    mark(live, a);
                }
                pruned.insert(i, call);
            }
            _ => {
                for a in &eqn.inputs {
                    mark(live, a);
                }
            }
        }
    }
    Ok((keep, pruned))
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
/// equation outputs), dropping avals no binding uses (an owned aval list
/// gives its avals up instead of copying them).
pub(crate) fn compact<'a>(
    avals: impl Into<Cow<'a, [Aval]>>, constvars: &[Var], invars: &[Var], mut eqns: Vec<Eqn>,
    outvars: &[Atom],
) -> Result<Jaxpr> {
    let avals = avals.into();
    let mut r = Renumber {
        map: vec![None; avals.len()],
        avals,
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
    for eqn in &mut eqns {
        for a in &mut eqn.inputs {
            remap(&r.map, a)?;
        }
        for v in &mut eqn.outputs {
            *v = r.bind(*v)?;
        }
    }
    let mut new_outvars = outvars.to_vec();
    for a in &mut new_outvars {
        remap(&r.map, a)?;
    }
    Ok(Jaxpr {
        avals: r.new_avals,
        constvars: new_constvars,
        invars: new_invars,
        eqns,
        outvars: new_outvars,
    })
}

struct Renumber<'a> {
    avals: Cow<'a, [Aval]>,
    map: Vec<Option<Var>>,
    new_avals: Vec<Aval>,
}

impl Renumber<'_> {
    /// The new variable of `v`, bound once: a second binding of one
    /// variable is a malformed program.
    fn bind(&mut self, v: Var) -> Result<Var> {
        let unbound = || Error::UnboundVar(format!("#{}", v.0));
        let id = u32::try_from(self.new_avals.len())
            .map_err(|_| Error::Limit("too many variables".into()))?;
        let nv = Var(id);
        let slot = self.map.get_mut(v.index()).ok_or_else(unbound)?;
        if slot.is_some() {
            return Err(Error::InvalidArgument(format!(
                "variable #{} is bound twice",
                v.0
            )));
        }
        *slot = Some(nv);
        let aval = match &mut self.avals {
            Cow::Owned(avals) => avals
                .get_mut(v.index())
                .map(|a| std::mem::replace(a, Aval::new(Vec::new(), a.dtype))),
            Cow::Borrowed(avals) => avals.get(v.index()).cloned(),
        };
        self.new_avals.push(aval.ok_or_else(unbound)?);
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
