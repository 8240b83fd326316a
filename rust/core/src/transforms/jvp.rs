//! Forward-mode differentiation of a closed jaxpr.
//!
//! Tangents are symbolic: `None` is a zero that is never materialized unless
//! an output must be instantiated. An equation none of whose operands has a
//! tangent is copied unchanged; otherwise its primitive's JVP rule emits the
//! primal and tangent computations.

use super::dce::dce_owned;
use super::debug_check;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ir::builder::Builder;
use crate::ir::display::transform_source;
use crate::ir::{Atom, Aval, ClosedJaxpr, Eqn, Jaxpr, Var};

/// The type of the tangent of a value of type `aval`: the same for floats,
/// float0 (no data) for integer, bool and float0 values.
pub fn tangent_aval(aval: &Aval) -> Aval {
    if aval.dtype.is_inexact() {
        Aval::weak(aval.shape.clone(), aval.dtype, aval.weak_type)
    } else {
        Aval::new(aval.shape.clone(), DType::Float0)
    }
}

fn slot<T>(env: &mut [Option<T>], v: Var) -> Result<&mut Option<T>> {
    env.get_mut(v.index())
        .ok_or_else(|| Error::UnboundVar(format!("#{}", v.0)))
}

/// The atom `a` stands for in `env` (a literal stands for itself).
pub(super) fn read(env: &[Option<Atom>], a: &Atom) -> Result<Atom> {
    match a {
        Atom::Var(v) => env
            .get(v.index())
            .cloned()
            .flatten()
            .ok_or_else(|| Error::UnboundVar(format!("#{}", v.0))),
        Atom::Lit(_) => Ok(a.clone()),
    }
}

fn read_tangent(env: &[Option<Atom>], a: &Atom) -> Option<Atom> {
    match a {
        Atom::Var(v) => env.get(v.index()).cloned().flatten(),
        Atom::Lit(_) => None,
    }
}

/// JVP of a closed jaxpr.
///
/// `nonzeros[i]`: input `i` has a tangent. The result takes `(primals...,
/// tangents of the inputs with nonzeros[i]...)` and returns `(primal
/// outputs..., tangents of the outputs j with out_nonzeros[j]...)`; the
/// second value is `out_nonzeros`. A tangent input of an integer or bool
/// input is float0 and counts as a zero. With `instantiate`, every output
/// gets a tangent (zeros materialized; float0 zeros for integer and bool
/// outputs) and `out_nonzeros` is all true.
pub fn jvp_jaxpr(
    j: &ClosedJaxpr, nonzeros: &[bool], instantiate: bool,
) -> Result<(ClosedJaxpr, Vec<bool>)> {
    // Dead equations first: they may hold primitives whose JVP is undefined
    // (e.g. the primal call a custom rule makes of its own function).
    let j = &crate::transforms::dce::dce_closed(j)?;
    let jx = &j.jaxpr;
    Error::check_count("jvp_jaxpr (nonzeros)", jx.invars.len(), nonzeros.len())?;
    let n = jx.avals.len();
    let mut b = Builder::new();
    let mut env = JvpEnv {
        primal: vec![None; n],
        tangent: vec![None; n],
    };
    env.bind_inputs(&mut b, j, nonzeros)?;
    for eqn in &jx.eqns {
        env.jvp_eqn(&mut b, jx, eqn)?;
    }
    let mut outs = Vec::with_capacity(jx.outvars.len().saturating_mul(2));
    for a in &jx.outvars {
        outs.push(read(&env.primal, a)?);
    }
    let mut out_nz = Vec::with_capacity(jx.outvars.len());
    for a in &jx.outvars {
        match read_tangent(&env.tangent, a) {
            Some(t) => {
                outs.push(t);
                out_nz.push(true);
            }
            None if instantiate => {
                let aval = tangent_aval(jx.atom_aval(a)?);
                outs.push(b.zeros(&aval)?);
                out_nz.push(true);
            }
            None => out_nz.push(false),
        }
    }
    let out = dce_owned(b.finish(outs)?)?;
    debug_check(&out)?;
    Ok((out, out_nz))
}

/// Per variable of the source program: its new primal atom and its tangent
/// (`None`: zero).
struct JvpEnv {
    primal: Vec<Option<Atom>>,
    tangent: Vec<Option<Atom>>,
}

impl JvpEnv {
    /// Binds the consts, the primal inputs, then the tangent inputs (of the
    /// inputs with `nonzeros[i]`; float0 ones count as zeros).
    fn bind_inputs(&mut self, b: &mut Builder, j: &ClosedJaxpr, nonzeros: &[bool]) -> Result<()> {
        let jx = &j.jaxpr;
        for (v, c) in jx.constvars.iter().zip(&j.consts) {
            let weak = jx.aval(*v)?.weak_type;
            let nv = b.add_const(c.clone(), weak)?;
            *slot(&mut self.primal, *v)? = Some(Atom::Var(nv));
        }
        for v in &jx.invars {
            let nv = b.add_input(jx.aval(*v)?.clone())?;
            *slot(&mut self.primal, *v)? = Some(Atom::Var(nv));
        }
        for (v, nz) in jx.invars.iter().zip(nonzeros) {
            if !nz {
                continue;
            }
            let aval = jx.aval(*v)?;
            let tv = b.add_input(tangent_aval(aval))?;
            if aval.dtype.is_inexact() {
                *slot(&mut self.tangent, *v)? = Some(Atom::Var(tv));
            }
        }
        Ok(())
    }

    /// Emits `eqn`: copied when no operand has a tangent, through its
    /// primitive's JVP rule otherwise.
    fn jvp_eqn(&mut self, b: &mut Builder, jx: &Jaxpr, eqn: &Eqn) -> Result<()> {
        let ins = eqn
            .inputs
            .iter()
            .map(|a| read(&self.primal, a))
            .collect::<Result<Vec<_>>>()?;
        let ts: Vec<Option<Atom>> = eqn
            .inputs
            .iter()
            .map(|a| read_tangent(&self.tangent, a))
            .collect();
        if ts.iter().all(Option::is_none) {
            let source = transform_source(&eqn.source.0, "jvp", true);
            let outs = b.add_eqn(eqn.prim.clone(), ins, source)?;
            for (old, new) in eqn.outputs.iter().zip(outs) {
                *slot(&mut self.primal, *old)? = Some(Atom::Var(new));
            }
            return Ok(());
        }
        let start = b.num_eqns();
        let (pouts, touts) = eqn.prim.jvp(b, &ins, &ts)?;
        // The rule's equations carry the name stack (not the line: messages
        // citing lines stay as they were).
        b.set_source_since(start, &transform_source(&eqn.source.0, "jvp", false));
        if pouts.len() != eqn.outputs.len() || touts.len() != eqn.outputs.len() {
            return Err(Error::arity(
                eqn.prim.name(),
                eqn.outputs.len(),
                pouts.len(),
            ));
        }
        for ((old, p), t) in eqn.outputs.iter().zip(pouts).zip(touts) {
            let float = jx.aval(*old)?.dtype.is_inexact();
            *slot(&mut self.primal, *old)? = Some(p);
            *slot(&mut self.tangent, *old)? = if float { t } else { None };
        }
        Ok(())
    }
}
