//! Reference interpreter: evaluates a jaxpr equation by equation through the
//! per-primitive kernels.
//!
//! Values are shared `Arc`s: a nested `pjit` receives its operands without a
//! copy, and each value is dropped right after its last use, so peak memory
//! is what the program needs live, not everything it ever computed.

use crate::array::HostArray;
use crate::error::{Error, Result};
use crate::ir::{Atom, Aval, ClosedJaxpr, Jaxpr};
use crate::prims::{kernel, shape, Primitive};
use std::sync::Arc;

/// Runs `jaxpr` on `consts` and `args`, returning its outputs.
pub fn eval_jaxpr(
    jaxpr: &Jaxpr,
    consts: &[Arc<HostArray>],
    args: &[Arc<HostArray>],
) -> Result<Vec<Arc<HostArray>>> {
    if consts.len() != jaxpr.constvars.len() {
        return Err(Error::Arity {
            prim: "eval_jaxpr (consts)",
            expected: jaxpr.constvars.len(),
            got: consts.len(),
        });
    }
    if args.len() != jaxpr.invars.len() {
        return Err(Error::Arity {
            prim: "eval_jaxpr",
            expected: jaxpr.invars.len(),
            got: args.len(),
        });
    }
    let mut env: Vec<Option<Arc<HostArray>>> = vec![None; jaxpr.avals.len()];
    let bound = jaxpr
        .constvars
        .iter()
        .zip(consts)
        .chain(jaxpr.invars.iter().zip(args));
    for (v, val) in bound {
        let slot = env
            .get_mut(v.index())
            .ok_or_else(|| Error::UnboundVar(format!("#{}", v.0)))?;
        *slot = Some(val.clone());
    }
    let last_use = last_uses(jaxpr);
    for (i, eqn) in jaxpr.eqns.iter().enumerate() {
        let ins = eqn
            .inputs
            .iter()
            .map(|a| read(&env, a))
            .collect::<Result<Vec<_>>>()?;
        let outs: Vec<Arc<HostArray>> = match &eqn.prim {
            // Share the operands with the callee instead of copying them.
            Primitive::Pjit { jaxpr: sub, .. } => {
                let avals: Vec<Aval> = ins.iter().map(|a| a.aval()).collect();
                shape::abstract_eval(&eqn.prim, &avals)?;
                eval_closed(sub, &ins)?
            }
            prim => {
                let refs: Vec<&HostArray> = ins.iter().map(|a| a.as_ref()).collect();
                kernel::eval(prim, &refs)?
                    .into_iter()
                    .map(Arc::new)
                    .collect()
            }
        };
        drop(ins);
        if outs.len() != eqn.outputs.len() {
            return Err(Error::Arity {
                prim: eqn.prim.name(),
                expected: eqn.outputs.len(),
                got: outs.len(),
            });
        }
        for (v, val) in eqn.outputs.iter().zip(outs) {
            let slot = env
                .get_mut(v.index())
                .ok_or_else(|| Error::UnboundVar(format!("#{}", v.0)))?;
            *slot = Some(val);
        }
        // Free operands whose last reader was this equation.
        for a in &eqn.inputs {
            if let Atom::Var(v) = a {
                if last_use.get(v.index()) == Some(&Some(i)) {
                    if let Some(slot) = env.get_mut(v.index()) {
                        *slot = None;
                    }
                }
            }
        }
    }
    jaxpr.outvars.iter().map(|a| read(&env, a)).collect()
}

/// For each variable, the index of the last equation reading it; `None`
/// when it is never read by an equation or is a program output (kept).
fn last_uses(jaxpr: &Jaxpr) -> Vec<Option<usize>> {
    let mut last: Vec<Option<usize>> = vec![None; jaxpr.avals.len()];
    for (i, eqn) in jaxpr.eqns.iter().enumerate() {
        for a in &eqn.inputs {
            if let Atom::Var(v) = a {
                if let Some(slot) = last.get_mut(v.index()) {
                    *slot = Some(i);
                }
            }
        }
    }
    for a in &jaxpr.outvars {
        if let Atom::Var(v) = a {
            if let Some(slot) = last.get_mut(v.index()) {
                *slot = None;
            }
        }
    }
    last
}

/// Runs a closed jaxpr on `args`.
pub fn eval_closed(prog: &ClosedJaxpr, args: &[Arc<HostArray>]) -> Result<Vec<Arc<HostArray>>> {
    eval_jaxpr(&prog.jaxpr, &prog.consts, args)
}

fn read(env: &[Option<Arc<HostArray>>], a: &Atom) -> Result<Arc<HostArray>> {
    match a {
        Atom::Var(v) => env
            .get(v.index())
            .and_then(|s| s.clone())
            .ok_or_else(|| Error::UnboundVar(format!("#{}", v.0))),
        Atom::Lit(l) => Ok(Arc::new(l.to_array()?)),
    }
}
