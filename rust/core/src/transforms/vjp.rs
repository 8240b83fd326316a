//! Reverse mode: linearize, then transpose the tangent part.

use super::dce::dce_owned;
use super::linearize::linearize_jaxpr;
use super::transpose::transpose_jaxpr;
use crate::error::{Error, Result};
use crate::ir::splice::splice;
use crate::ir::{Atom, ClosedJaxpr};
use crate::Builder;

/// A VJP: the forward program and the backward (cotangent) program.
#[derive(Debug, Clone)]
pub struct Vjp {
    /// primals -> (outputs..., residuals...)
    pub fwd: ClosedJaxpr,
    /// (residuals..., cotangent of every output...) -> cotangent of each
    /// input i with `nonzeros[i]` (float0 for integer/bool inputs)
    pub bwd: ClosedJaxpr,
    pub num_res: usize,
}

/// VJP = linearize + transpose of the tangent part.
pub fn vjp_jaxpr(j: &ClosedJaxpr, nonzeros: &[bool]) -> Result<Vjp> {
    let lin = linearize_jaxpr(j, nonzeros)?;
    let k = nonzeros.iter().filter(|x| **x).count();
    let mut linear = vec![false; lin.num_res];
    linear.extend(std::iter::repeat_n(true, k));
    let bwd = transpose_jaxpr(&lin.tangent, &linear)?;
    Ok(Vjp {
        fwd: lin.primal,
        bwd,
        num_res: lin.num_res,
    })
}

/// `value_and_grad` of a one-output program as one program: inputs ->
/// (output, cotangent of each input i with `nonzeros[i]`), the backward
/// pass seeded with ones. Forward and backward then run as one plan (one
/// executor call, shared buffers) and no cotangent array is passed in.
pub fn value_and_grad_jaxpr(j: &ClosedJaxpr, nonzeros: &[bool]) -> Result<ClosedJaxpr> {
    let [out] = j.jaxpr.outvars.as_slice() else {
        return Err(Error::InvalidArgument(format!(
            "value_and_grad_jaxpr: the program must have one output, it has {}",
            j.jaxpr.outvars.len()
        )));
    };
    let vjp = vjp_jaxpr(j, nonzeros)?;
    let mut b = Builder::new();
    let inputs = j
        .jaxpr
        .invars
        .iter()
        .map(|v| Ok(Atom::Var(b.add_input(j.jaxpr.aval(*v)?.clone())?)))
        .collect::<Result<Vec<_>>>()?;
    let fwd_outs = splice(&mut b, &vjp.fwd, &inputs)?;
    let Some((value, residuals)) = fwd_outs.split_first() else {
        return Err(Error::InvalidArgument(
            "value_and_grad_jaxpr: the forward program has no output".into(),
        ));
    };
    let out_aval = j.jaxpr.atom_aval(out)?.clone();
    let mut bwd_inputs = residuals.to_vec();
    bwd_inputs.push(b.full(&out_aval, 1.0)?);
    let mut outs = vec![value.clone()];
    outs.extend(splice(&mut b, &vjp.bwd, &bwd_inputs)?);
    dce_owned(b.finish(outs)?)
}
