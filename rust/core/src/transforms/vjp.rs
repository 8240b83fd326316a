//! Reverse mode: linearize, then transpose the tangent part.

use super::linearize::linearize_jaxpr;
use super::transpose::transpose_jaxpr;
use crate::error::Result;
use crate::ir::ClosedJaxpr;

/// A VJP: the forward program and the backward (cotangent) program.
#[derive(Debug, Clone)]
pub struct Vjp {
    /// primals -> (outputs..., residuals...)
    pub fwd: ClosedJaxpr,
    /// (residuals..., cotangent of every output...) -> cotangent of each
    /// input i with nonzeros[i] (float0 for integer/bool inputs)
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
