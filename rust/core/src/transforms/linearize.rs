//! Linearization: JVP followed by partial evaluation, splitting the
//! primal computation from the linear tangent map.

use super::debug_check;
use super::jvp::jvp_jaxpr;
use super::partial_eval::partial_eval_jaxpr;
use crate::error::{Error, Result};
use crate::ir::ClosedJaxpr;

/// A linearized program.
#[derive(Debug, Clone)]
pub struct Linearized {
    /// primals -> (outputs..., residuals...)
    pub primal: ClosedJaxpr,
    /// (residuals..., tangents of the inputs with `nonzeros[i]`...) -> tangent
    /// of every output (zeros instantiated; float0 for integer/bool outputs)
    pub tangent: ClosedJaxpr,
    pub num_res: usize,
}

/// Linearize = JVP + partial evaluation into a primal part and a linear
/// tangent part with explicit residuals. The tangent part only reads
/// residuals and tangents; constants it needs (zeros, iotas) are rebuilt in
/// it, and consts of `j` stay consts of whichever part reads them.
pub fn linearize_jaxpr(j: &ClosedJaxpr, nonzeros: &[bool]) -> Result<Linearized> {
    let (jj, _) = jvp_jaxpr(j, nonzeros, true)?;
    let n = j.jaxpr.invars.len();
    let m = j.jaxpr.outvars.len();
    let k = nonzeros.iter().filter(|x| **x).count();
    let mut unknowns = vec![false; n];
    unknowns.extend(std::iter::repeat_n(true, k));
    let mut instantiate = vec![false; m];
    instantiate.extend(std::iter::repeat_n(true, m));
    let split = partial_eval_jaxpr(&jj, &unknowns, &instantiate)?;
    let primal_known = split.out_unknowns.iter().take(m).all(|u| !*u);
    if !primal_known {
        return Err(Error::InvalidArgument(
            "linearize: a primal output depends on a tangent".into(),
        ));
    }
    debug_check(&split.known)?;
    debug_check(&split.unknown)?;
    Ok(Linearized {
        primal: split.known,
        tangent: split.unknown,
        num_res: split.num_res,
    })
}
