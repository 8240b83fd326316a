//! Typechecking: the invariants every transform and executor may assume.
//!
//! * each constvar, invar and equation output is bound exactly once, before
//!   any use (constvars, then invars, then equations in order);
//! * the consts match the constvars in number, shape and dtype;
//! * each equation's output avals are what the primitive's shape rule
//!   ([`abstract_eval`]) gives for its operand avals. Shape and dtype must
//!   agree exactly; the weak-type bit is not compared (as JAX's `typematch`),
//!   since transforms may legitimately strengthen it;
//! * literals are scalars; outvars are bound;
//! * an equation holding a sub-jaxpr with ordered effects carries the effect;
//! * every sub-jaxpr in a param (pjit's `jaxpr`, ...) typechecks recursively.
//!
//! Failures are [`Error::Typecheck`] naming the equation.

use super::{Atom, ClosedJaxpr, Effect, Eqn, Jaxpr, Var};
use crate::error::{Error, Result};
use crate::prims::shape::abstract_eval;
use crate::prims::Param;

/// Checks a closed jaxpr (its consts included).
pub fn typecheck(j: &ClosedJaxpr) -> Result<()> {
    let jaxpr = &j.jaxpr;
    if j.consts.len() != jaxpr.constvars.len() {
        return Err(Error::Typecheck(format!(
            "{} consts given for {} constvars",
            j.consts.len(),
            jaxpr.constvars.len()
        )));
    }
    for (i, (c, v)) in j.consts.iter().zip(&jaxpr.constvars).enumerate() {
        let aval = jaxpr
            .aval(*v)
            .map_err(|_| Error::Typecheck(format!("constvar {i} (v{}) has no aval", v.0)))?;
        if c.shape() != aval.shape.as_slice() || c.dtype() != aval.dtype {
            return Err(Error::Typecheck(format!(
                "const {i} is {} but constvar v{} is declared {}",
                c.aval().short(),
                v.0,
                aval.short()
            )));
        }
    }
    typecheck_jaxpr(jaxpr)
}

/// Checks a bare jaxpr (no const values).
pub fn typecheck_jaxpr(j: &Jaxpr) -> Result<()> {
    let mut bound = vec![false; j.avals.len()];
    for &v in &j.constvars {
        bind(&mut bound, v, &|| "constvars".to_string())?;
    }
    for &v in &j.invars {
        bind(&mut bound, v, &|| "invars".to_string())?;
    }
    for (i, eqn) in j.eqns.iter().enumerate() {
        let what = || format!("equation {i} ({})", describe(eqn));
        check_eqn(j, eqn, &|v: Var| bound.get(v.index()) == Some(&true), &what)?;
        for &v in &eqn.outputs {
            bind(&mut bound, v, &what)?;
        }
    }
    for (i, a) in j.outvars.iter().enumerate() {
        check_atom(j, a, &|v: Var| bound.get(v.index()) == Some(&true))
            .map_err(|m| Error::Typecheck(format!("output {i}: {m}")))?;
    }
    Ok(())
}

fn bind(bound: &mut [bool], v: Var, what: &dyn Fn() -> String) -> Result<()> {
    let n = bound.len();
    match bound.get_mut(v.index()) {
        None => Err(Error::Typecheck(format!(
            "{}: variable v{} has no aval (table has {n})",
            what(),
            v.0
        ))),
        Some(true) => Err(Error::Typecheck(format!(
            "{}: variable v{} is bound twice",
            what(),
            v.0
        ))),
        Some(slot) => {
            *slot = true;
            Ok(())
        }
    }
}

/// `v3 v4 = prim v1 v2` with canonical var names (short, no sub-jaxprs).
fn describe(eqn: &Eqn) -> String {
    let outs: Vec<String> = eqn.outputs.iter().map(|v| format!("v{}", v.0)).collect();
    let ins: Vec<String> = eqn
        .inputs
        .iter()
        .map(|a| match a {
            Atom::Var(v) => format!("v{}", v.0),
            Atom::Lit(l) => super::display::fmt_literal(l),
        })
        .collect();
    let mut s = format!("{} = {}", outs.join(" "), eqn.prim.name());
    if !ins.is_empty() {
        s.push(' ');
        s.push_str(&ins.join(" "));
    }
    s
}

fn check_atom(
    j: &Jaxpr, a: &Atom, is_bound: &dyn Fn(Var) -> bool,
) -> std::result::Result<(), String> {
    match a {
        Atom::Var(v) => {
            if j.avals.get(v.index()).is_none() {
                Err(format!("variable v{} has no aval", v.0))
            } else if !is_bound(*v) {
                Err(format!("variable v{} is used before it is bound", v.0))
            } else {
                Ok(())
            }
        }
        Atom::Lit(l) => {
            if l.aval.shape.is_empty() {
                Ok(())
            } else {
                Err(format!("literal of non-scalar type {}", l.aval.short()))
            }
        }
    }
}

fn check_eqn(
    j: &Jaxpr, eqn: &Eqn, is_bound: &dyn Fn(Var) -> bool, what: &dyn Fn() -> String,
) -> Result<()> {
    let fail = |m: String| Error::Typecheck(format!("{}: {m}", what()));
    let mut in_avals = Vec::with_capacity(eqn.inputs.len());
    for (k, a) in eqn.inputs.iter().enumerate() {
        check_atom(j, a, is_bound).map_err(|m| fail(format!("operand {k}: {m}")))?;
        in_avals.push(j.atom_aval(a)?.clone());
    }
    let mut sub_effect = Effect::None;
    for (key, p) in eqn.prim.params() {
        check_param(p, &mut sub_effect).map_err(|e| fail(format!("param {key}: {e}")))?;
    }
    if sub_effect != Effect::None && eqn.effect == Effect::None {
        return Err(fail(
            "a sub-jaxpr has ordered effects the equation does not carry".into(),
        ));
    }
    let want = abstract_eval(&eqn.prim, &in_avals).map_err(|e| fail(e.to_string()))?;
    if want.len() != eqn.outputs.len() {
        return Err(fail(format!(
            "{} outputs bound, the primitive gives {}",
            eqn.outputs.len(),
            want.len()
        )));
    }
    for (k, (v, w)) in eqn.outputs.iter().zip(&want).enumerate() {
        let got = j
            .aval(*v)
            .map_err(|_| fail(format!("output {k} (v{}) has no aval", v.0)))?;
        if !got.same_type(w) {
            return Err(fail(format!(
                "output {k} (v{}) is declared {} but the primitive gives {}",
                v.0,
                got.short(),
                w.short()
            )));
        }
    }
    Ok(())
}

/// Typechecks every sub-jaxpr inside a param, collecting their effects.
fn check_param(p: Param, effect: &mut Effect) -> Result<()> {
    match p {
        Param::Jaxpr(sub) => {
            typecheck(&sub)?;
            if sub.jaxpr.effect() != Effect::None {
                *effect = Effect::OrderedIo;
            }
            Ok(())
        }
        Param::Tuple(items) => items.into_iter().try_for_each(|x| check_param(x, effect)),
        _ => Ok(()),
    }
}
