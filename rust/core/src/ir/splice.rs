//! Splicing: appending a whole closed jaxpr to a builder in one call, with
//! its variables remapped. This is how a transformed program (the VJP of a
//! `grad`, the batched program of a `vmap`) joins an enclosing trace without
//! one Python `bind` per equation.

use super::builder::Builder;
use super::{Atom, ClosedJaxpr, Var};
use crate::error::{Error, Result};

/// Appends `j` to `b`, feeding `inputs` to its invars, and returns the atoms
/// its outputs map to (a literal output stays a literal).
pub fn splice(b: &mut Builder, j: &ClosedJaxpr, inputs: &[Atom]) -> Result<Vec<Atom>> {
    let jaxpr = &j.jaxpr;
    Error::check_count("splice", jaxpr.invars.len(), inputs.len())?;
    let mut env: Vec<Option<Atom>> = vec![None; jaxpr.avals.len()];
    for (v, a) in jaxpr.invars.iter().zip(inputs) {
        let want = jaxpr.aval(*v)?;
        let got = b.aval(a)?;
        if !want.same_type(&got) {
            return Err(Error::Typecheck(format!(
                "splice: input {} does not match parameter {}",
                got.short(),
                want.short()
            )));
        }
        bind(&mut env, *v, a.clone())?;
    }
    for (v, c) in jaxpr.constvars.iter().zip(&j.consts) {
        let weak = jaxpr.aval(*v)?.weak_type;
        let nv = b.add_const(c.clone(), weak)?;
        bind(&mut env, *v, Atom::Var(nv))?;
    }
    for eqn in &jaxpr.eqns {
        let ins = lookup_all(&env, &eqn.inputs)?;
        let outs = b.add_eqn(eqn.prim.clone(), ins, eqn.source.0.clone())?;
        for (old, new) in eqn.outputs.iter().zip(outs) {
            bind(&mut env, *old, Atom::Var(new))?;
        }
    }
    lookup_all(&env, &jaxpr.outvars)
}

/// Binds `v` to `a` in a variable-to-atom environment.
pub(crate) fn bind(env: &mut [Option<Atom>], v: Var, a: Atom) -> Result<()> {
    let slot = env
        .get_mut(v.index())
        .ok_or_else(|| Error::UnboundVar(format!("#{}", v.0)))?;
    *slot = Some(a);
    Ok(())
}

/// What `a` stands for in a variable-to-atom environment.
pub(crate) fn lookup(env: &[Option<Atom>], a: &Atom) -> Result<Atom> {
    match a {
        Atom::Lit(_) => Ok(a.clone()),
        Atom::Var(v) => env
            .get(v.index())
            .and_then(|s| s.clone())
            .ok_or_else(|| Error::UnboundVar(format!("#{}", v.0))),
    }
}

/// What each of `atoms` stands for in `env` ([`lookup`]).
pub(crate) fn lookup_all(env: &[Option<Atom>], atoms: &[Atom]) -> Result<Vec<Atom>> {
    atoms.iter().map(|a| lookup(env, a)).collect()
}
