//! Call primitives: `pjit` (a nested `jit`) and `checkpoint`
//! (`jax.checkpoint`/`remat`).

use super::params::Param;
use crate::ir::ClosedJaxpr;
use std::sync::Arc;

crate::declare_params! {
    /// A call of a closed sub-jaxpr (nested `jit`).
    pub struct Pjit {
        jaxpr: Arc<ClosedJaxpr>,
        name: String = String::new(),
    }
}

crate::declare_params! {
    /// `jax.checkpoint`: a call whose intermediate values are recomputed in
    /// the backward pass instead of being saved as residuals.
    pub struct Checkpoint {
        const differentiated = Param::Bool(false),
        jaxpr: Arc<ClosedJaxpr>,
        const policy = Param::None,
        prevent_cse: bool = true,
    }
}
