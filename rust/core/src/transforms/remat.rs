//! Partial evaluation of a `checkpoint` call under a saving policy
//! ([`RematPolicy`] other than "save nothing").
//!
//! The callee's equations are split by what is known before the backward
//! pass: an equation whose operands are all known (and which has no
//! effect) is known. The known values the policy accepts are *saved*: the
//! known call returns the ones the unknown call reads, as residuals. The
//! unknown call is the whole callee again, except that the equations
//! producing saved values are cut out and those values read from the
//! residuals instead; everything else it needs it recomputes from the
//! call's operands. With "save nothing" this is exactly `checkpoint`'s
//! default split (`partial_eval::split_checkpoint`).

use super::dce::dce_owned;
use super::partial_eval::{flagged, known_ins, with_checkpoint_callee, SplitEqn, SplitInput};
use crate::error::{Error, Result};
use crate::ir::{Atom, ClosedJaxpr, Effect, Jaxpr, Var};
use crate::prims::{Primitive, RematPolicy};
use std::collections::HashSet;
use std::sync::Arc;

/// Splits a `checkpoint` equation of primitive `p` (callee `sub`, saving
/// `policy`) with operands `ins`, of which `in_unk` are unknown.
pub(crate) fn split_with_policy(
    p: &Primitive, sub: &ClosedJaxpr, policy: &RematPolicy, ins: &[Atom], in_unk: &[bool],
) -> Result<SplitEqn> {
    let jx = &sub.jaxpr;
    let (known, saved) = known_and_saved(jx, policy, in_unk)?;
    let is_known = |a: &Atom| match a {
        Atom::Var(v) => known.contains(v),
        Atom::Lit(_) => true,
    };
    let out_unknowns: Vec<bool> = jx.outvars.iter().map(|a| !is_known(a)).collect();
    let unknown_outs = flagged(&jx.outvars, &out_unknowns, true);
    let residuals = read_saved(jx, &saved, &unknown_outs);
    let mut known_outs = known_ins(&jx.outvars, &out_unknowns);
    known_outs.extend(residuals.iter().map(|v| Atom::Var(*v)));
    let known_invars = known_ins(&jx.invars, in_unk);
    let known_prog = callee(
        sub,
        known_invars,
        |e| e.outputs.iter().all(|v| known.contains(v)),
        known_outs,
    )?;
    let cut: HashSet<Var> = residuals.iter().copied().collect();
    let unknown_invars: Vec<Var> = residuals.iter().chain(&jx.invars).copied().collect();
    let unknown_prog = callee(
        sub,
        unknown_invars,
        |e| !e.outputs.iter().any(|v| cut.contains(v)),
        unknown_outs,
    )?;
    let residual_avals = residuals
        .iter()
        .map(|v| jx.aval(*v).cloned())
        .collect::<Result<Vec<_>>>()?;
    let mut unknown_ins: Vec<SplitInput> = (0..residuals.len()).map(SplitInput::Residual).collect();
    unknown_ins.extend(ins.iter().cloned().map(SplitInput::Atom));
    Ok(SplitEqn {
        known: Some((
            with_checkpoint_callee(p, known_prog)?,
            known_ins(ins, in_unk),
        )),
        residuals: residual_avals,
        out_unknowns,
        unknown: (with_checkpoint_callee(p, unknown_prog)?, unknown_ins),
        unknown_emits_all: false,
    })
}

/// The variables known before the backward pass, and of those the ones
/// `policy` saves (outputs of known equations it accepts).
fn known_and_saved(
    jx: &Jaxpr, policy: &RematPolicy, in_unk: &[bool],
) -> Result<(HashSet<Var>, HashSet<Var>)> {
    if in_unk.len() != jx.invars.len() {
        return Err(Error::Arity {
            prim: "checkpoint",
            expected: jx.invars.len(),
            got: in_unk.len(),
        });
    }
    let mut known: HashSet<Var> = jx.constvars.iter().copied().collect();
    known.extend(
        jx.invars
            .iter()
            .zip(in_unk)
            .filter(|(_, u)| !**u)
            .map(|(v, _)| *v),
    );
    let mut saved = HashSet::new();
    for e in &jx.eqns {
        let all_known = e.inputs.iter().all(|a| match a {
            Atom::Var(v) => known.contains(v),
            Atom::Lit(_) => true,
        });
        if all_known && e.effect == Effect::None {
            known.extend(e.outputs.iter().copied());
            if policy.saves(&e.prim) {
                saved.extend(e.outputs.iter().copied());
            }
        }
    }
    Ok((known, saved))
}

/// The saved variables the unknown half reads when it recomputes
/// `outs` (walking back from them, stopping at saved values), in the
/// order the program defines them.
fn read_saved(jx: &Jaxpr, saved: &HashSet<Var>, outs: &[Atom]) -> Vec<Var> {
    let mut needed: HashSet<Var> = outs.iter().filter_map(Atom::var).collect();
    let mut read = HashSet::new();
    for e in jx.eqns.iter().rev() {
        if !e.outputs.iter().any(|v| needed.contains(v)) {
            continue;
        }
        if e.outputs.iter().any(|v| saved.contains(v)) {
            read.extend(e.outputs.iter().filter(|v| needed.contains(v)).copied());
            continue;
        }
        for a in &e.inputs {
            if let Atom::Var(v) = a {
                needed.insert(*v);
            }
        }
    }
    let mut order: Vec<Var> = read.into_iter().collect();
    order.sort_by_key(|v| v.0);
    order
}

/// `sub` with inputs `invars`, the equations `keep` accepts and outputs
/// `outvars`, dead code removed.
fn callee(
    sub: &ClosedJaxpr, invars: Vec<Var>, keep: impl Fn(&crate::ir::Eqn) -> bool, outvars: Vec<Atom>,
) -> Result<ClosedJaxpr> {
    let jx = &sub.jaxpr;
    let prog = ClosedJaxpr {
        jaxpr: Arc::new(Jaxpr {
            avals: jx.avals.clone(),
            constvars: jx.constvars.clone(),
            invars,
            eqns: jx.eqns.iter().filter(|e| keep(e)).cloned().collect(),
            outvars,
        }),
        consts: sub.consts.clone(),
    };
    dce_owned(prog)
}
