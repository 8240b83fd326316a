//! Reference interpreter: evaluates a jaxpr equation by equation through the
//! per-primitive kernels.

use crate::array::HostArray;
use crate::error::{Error, Result};
use crate::ir::{Atom, ClosedJaxpr, Jaxpr};
use crate::prims::kernel;
use std::sync::Arc;

/// Runs `jaxpr` on `consts` and `args`, returning its outputs.
pub fn eval_jaxpr(
    jaxpr: &Jaxpr,
    consts: &[Arc<HostArray>],
    args: &[Arc<HostArray>],
) -> Result<Vec<Arc<HostArray>>> {
    if consts.len() != jaxpr.constvars.len() || args.len() != jaxpr.invars.len() {
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
    for eqn in &jaxpr.eqns {
        let ins = eqn
            .inputs
            .iter()
            .map(|a| read(&env, a))
            .collect::<Result<Vec<_>>>()?;
        let refs: Vec<&HostArray> = ins.iter().map(|a| a.as_ref()).collect();
        let outs = kernel::eval(&eqn.prim, &refs)?;
        for (v, val) in eqn.outputs.iter().zip(outs) {
            let slot = env
                .get_mut(v.index())
                .ok_or_else(|| Error::UnboundVar(format!("#{}", v.0)))?;
            *slot = Some(Arc::new(val));
        }
    }
    jaxpr.outvars.iter().map(|a| read(&env, a)).collect()
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
