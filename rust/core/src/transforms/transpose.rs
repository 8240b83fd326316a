//! Transposition of a linear jaxpr (reverse mode's backward pass).
//!
//! Variables that depend on a linear input are linear; every other equation
//! is evaluated forward first (in program order) so its values are known.
//! Linear equations are then visited in reverse, each through its
//! primitive's transpose rule. Cotangents are symbolic: a variable with no
//! contribution has none (zero), one contribution is used as is, several are
//! summed with `add`. Float0 cotangents are zeros and dropped.

use super::dce::dce_owned;
use super::debug_check;
use super::jvp::read;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ir::builder::Builder;
use crate::ir::display::transform_source;
use crate::ir::{Atom, ClosedJaxpr, Eqn, Jaxpr, Var};
use crate::prims::BinaryOp;
use crate::prims::Operand;

fn slot<T>(env: &mut [T], v: Var) -> Result<&mut T> {
    env.get_mut(v.index())
        .ok_or_else(|| Error::UnboundVar(format!("#{}", v.0)))
}

fn is_lin(lin: &[bool], a: &Atom) -> bool {
    match a {
        Atom::Var(v) => lin.get(v.index()).copied().unwrap_or(false),
        Atom::Lit(_) => false,
    }
}

/// Adds a contribution to `v`'s cotangent.
fn accumulate(b: &mut Builder, ct: &mut [Option<Atom>], v: Var, c: Atom) -> Result<()> {
    if b.aval(&c)?.dtype == DType::Float0 {
        return Ok(());
    }
    let s = slot(ct, v)?;
    *s = Some(match s.take() {
        None => c,
        Some(prev) => b.binary(BinaryOp::Add, prev, c)?,
    });
    Ok(())
}

/// Transpose of a linear jaxpr. `linear[i]` marks the linear inputs. The
/// result takes `(non-linear inputs..., cotangent of every output...)` and
/// returns the cotangent of every linear input, in order (zeros
/// instantiated where no path exists).
pub fn transpose_jaxpr(j: &ClosedJaxpr, linear: &[bool]) -> Result<ClosedJaxpr> {
    let jx = &j.jaxpr;
    Error::check_count("transpose_jaxpr (linear)", jx.invars.len(), linear.len())?;
    let n = jx.avals.len();
    let mut st = TransposeState {
        lin: vec![false; n],
        fwd: vec![None; n],
        ct: vec![None; n],
    };
    let mut b = Builder::new();
    let ct_ins = st.bind_inputs(&mut b, j, linear)?;
    let linear_eqns = st.forward(&mut b, jx)?;
    // Backward.
    for (a, c) in jx.outvars.iter().zip(ct_ins) {
        if let Atom::Var(v) = a {
            if is_lin(&st.lin, a) {
                accumulate(&mut b, &mut st.ct, *v, c)?;
            }
        }
    }
    for eqn in linear_eqns.into_iter().rev() {
        st.transpose_eqn(&mut b, jx, eqn)?;
    }
    let mut outs = Vec::new();
    for (v, l) in jx.invars.iter().zip(linear) {
        if !*l {
            continue;
        }
        let c = slot(&mut st.ct, *v)?.take();
        outs.push(match c {
            Some(c) => c,
            None => b.zeros(jx.aval(*v)?)?,
        });
    }
    let out = dce_owned(b.finish(outs)?)?;
    debug_check(&out)?;
    Ok(out)
}

/// Per variable of the source program: whether it is linear, its value in
/// the forward pass (non-linear ones) and its cotangent so far.
struct TransposeState {
    lin: Vec<bool>,
    fwd: Vec<Option<Atom>>,
    ct: Vec<Option<Atom>>,
}

impl TransposeState {
    /// Binds the consts and the non-linear inputs, marks the linear inputs,
    /// and returns the inputs taking the output cotangents.
    fn bind_inputs(
        &mut self, b: &mut Builder, j: &ClosedJaxpr, linear: &[bool],
    ) -> Result<Vec<Atom>> {
        let jx = &j.jaxpr;
        for (v, c) in jx.constvars.iter().zip(&j.consts) {
            let weak = jx.aval(*v)?.weak_type;
            let nv = b.add_const(c.clone(), weak)?;
            *slot(&mut self.fwd, *v)? = Some(Atom::Var(nv));
        }
        for (v, l) in jx.invars.iter().zip(linear) {
            if *l {
                *slot(&mut self.lin, *v)? = true;
            } else {
                let nv = b.add_input(jx.aval(*v)?.clone())?;
                *slot(&mut self.fwd, *v)? = Some(Atom::Var(nv));
            }
        }
        let mut ct_ins = Vec::with_capacity(jx.outvars.len());
        for aval in jx.out_avals()? {
            ct_ins.push(Atom::Var(b.add_input(aval)?));
        }
        Ok(ct_ins)
    }

    /// Forward: evaluates the non-linear equations, returns the linear ones
    /// in program order.
    fn forward<'j>(&mut self, b: &mut Builder, jx: &'j Jaxpr) -> Result<Vec<&'j Eqn>> {
        let mut linear_eqns: Vec<&Eqn> = Vec::new();
        for eqn in &jx.eqns {
            if eqn.inputs.iter().any(|a| is_lin(&self.lin, a)) {
                for o in &eqn.outputs {
                    *slot(&mut self.lin, *o)? = true;
                }
                linear_eqns.push(eqn);
                continue;
            }
            let ins = eqn
                .inputs
                .iter()
                .map(|a| read(&self.fwd, a))
                .collect::<Result<Vec<_>>>()?;
            let outs = b.add_eqn(eqn.prim.clone(), ins, eqn.source.0.clone())?;
            for (o, nv) in eqn.outputs.iter().zip(outs) {
                *slot(&mut self.fwd, *o)? = Some(Atom::Var(nv));
            }
        }
        Ok(linear_eqns)
    }

    /// Backward step of one linear equation: its output cotangents through
    /// its primitive's transpose rule into its linear operands' cotangents.
    fn transpose_eqn(&mut self, b: &mut Builder, jx: &Jaxpr, eqn: &Eqn) -> Result<()> {
        let mut cts = Vec::with_capacity(eqn.outputs.len());
        for o in &eqn.outputs {
            cts.push(slot(&mut self.ct, *o)?.take());
        }
        if cts.iter().all(Option::is_none) {
            return Ok(());
        }
        let ops = eqn
            .inputs
            .iter()
            .map(|a| match a {
                Atom::Var(v) if is_lin(&self.lin, a) => Ok(Operand::Linear(jx.aval(*v)?.clone())),
                _ => Ok(Operand::Known(read(&self.fwd, a)?)),
            })
            .collect::<Result<Vec<_>>>()?;
        let start = b.num_eqns();
        let res = eqn.prim.transpose(b, &cts, &ops)?;
        b.set_source_since(start, &transform_source(&eqn.source.0, "transpose", false));
        Error::check_count(eqn.prim.name(), eqn.inputs.len(), res.len())?;
        for (a, r) in eqn.inputs.iter().zip(res) {
            if let (Atom::Var(v), Some(r)) = (a, r) {
                if is_lin(&self.lin, a) {
                    accumulate(b, &mut self.ct, *v, r)?;
                }
            }
        }
        Ok(())
    }
}
