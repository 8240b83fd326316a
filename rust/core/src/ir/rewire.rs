//! Rewiring a closed jaxpr's signature without touching its equations:
//! choosing, reordering and adding inputs (unused ones included), turning
//! consts into inputs, and choosing or reordering outputs. Higher-order
//! rules use these to give several sub-jaxprs one common signature (the
//! branches of a `cond`) or to put a transformed body's inputs in the order
//! its loop primitive expects.

use super::{Atom, Aval, ClosedJaxpr, Jaxpr, Var};
use crate::error::{Error, Result};
use std::sync::Arc;

/// Where an input of the rewired jaxpr comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum InputSource {
    /// Input `i` of the original jaxpr.
    Invar(usize),
    /// Const `i` of the original jaxpr, now passed as an input.
    Const(usize),
    /// A new input the program does not read.
    Unused(Aval),
}

fn fresh(avals: &mut Vec<Aval>, aval: Aval) -> Result<Var> {
    let id = u32::try_from(avals.len()).map_err(|_| Error::Limit("too many variables".into()))?;
    avals.push(aval);
    Ok(Var(id))
}

/// Variable `i` of `vars` (the jaxpr's `what` list), marked taken in
/// `taken`; an error when out of range or taken before.
fn claim(vars: &[Var], taken: &mut [bool], what: &str, i: usize) -> Result<Var> {
    let v = vars.get(i).ok_or_else(|| bad_index(what, i))?;
    let slot = taken.get_mut(i).ok_or_else(|| bad_index(what, i))?;
    if *slot {
        return Err(Error::InvalidArgument(format!(
            "rewire_inputs: {what} {i} named twice"
        )));
    }
    *slot = true;
    Ok(*v)
}

/// The jaxpr whose inputs are `spec`. Every original input must appear
/// exactly once; consts named by `Const` leave the const list.
pub fn rewire_inputs(j: &ClosedJaxpr, spec: &[InputSource]) -> Result<ClosedJaxpr> {
    let jx = &j.jaxpr;
    let mut avals = jx.avals.clone();
    let mut invars = Vec::with_capacity(spec.len());
    let mut seen = vec![false; jx.invars.len()];
    let mut hoisted = vec![false; jx.constvars.len()];
    for s in spec {
        match s {
            InputSource::Invar(i) => invars.push(claim(&jx.invars, &mut seen, "input", *i)?),
            InputSource::Const(i) => invars.push(claim(&jx.constvars, &mut hoisted, "const", *i)?),
            InputSource::Unused(aval) => invars.push(fresh(&mut avals, aval.clone())?),
        }
    }
    if let Some(i) = seen.iter().position(|s| !s) {
        return Err(Error::InvalidArgument(format!(
            "rewire_inputs: input {i} of the jaxpr is not named"
        )));
    }
    let mut constvars = Vec::new();
    let mut consts = Vec::new();
    for ((v, c), h) in jx.constvars.iter().zip(&j.consts).zip(&hoisted) {
        if !h {
            constvars.push(*v);
            consts.push(c.clone());
        }
    }
    Ok(ClosedJaxpr {
        jaxpr: Arc::new(Jaxpr {
            avals,
            constvars,
            invars,
            eqns: jx.eqns.clone(),
            outvars: jx.outvars.clone(),
        }),
        consts,
    })
}

/// The jaxpr with its consts as leading inputs, and the const values.
pub fn consts_to_inputs(j: &ClosedJaxpr) -> Result<(ClosedJaxpr, Vec<Arc<crate::HostArray>>)> {
    let mut spec: Vec<InputSource> = (0..j.jaxpr.constvars.len())
        .map(InputSource::Const)
        .collect();
    spec.extend((0..j.jaxpr.invars.len()).map(InputSource::Invar));
    Ok((rewire_inputs(j, &spec)?, j.consts.clone()))
}

/// Inputs reordered: input `k` of the result is input `order[k]`.
pub fn permute_inputs(j: &ClosedJaxpr, order: &[usize]) -> Result<ClosedJaxpr> {
    let spec: Vec<InputSource> = order.iter().map(|&i| InputSource::Invar(i)).collect();
    rewire_inputs(j, &spec)
}

/// Output `k` of the result is output `order[k]` of `j` (outputs may be
/// dropped or repeated).
pub fn select_outputs(j: &ClosedJaxpr, order: &[usize]) -> Result<ClosedJaxpr> {
    let jx = &j.jaxpr;
    let outvars = order
        .iter()
        .map(|&i| {
            jx.outvars
                .get(i)
                .cloned()
                .ok_or_else(|| bad_index("output", i))
        })
        .collect::<Result<Vec<Atom>>>()?;
    Ok(ClosedJaxpr {
        jaxpr: Arc::new(Jaxpr {
            avals: jx.avals.clone(),
            constvars: jx.constvars.clone(),
            invars: jx.invars.clone(),
            eqns: jx.eqns.clone(),
            outvars,
        }),
        consts: j.consts.clone(),
    })
}

fn bad_index(what: &str, i: usize) -> Error {
    Error::InvalidArgument(format!("rewire: no {what} {i}"))
}
