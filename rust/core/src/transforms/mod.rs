//! Jaxpr-to-jaxpr transforms.

pub mod batch;
pub use batch::{batch_jaxpr, batch_jaxpr_named};

pub mod dce;
pub mod jvp;
pub mod linearize;
pub mod partial_eval;
pub mod remat;
pub mod transpose;
pub mod vjp;

pub use dce::{dce_closed, dce_jaxpr, dce_owned};
pub use jvp::jvp_jaxpr;
pub use linearize::{linearize_jaxpr, Linearized};
pub use partial_eval::{partial_eval_jaxpr, PartialEval};
pub use transpose::transpose_jaxpr;
pub use vjp::{value_and_grad_jaxpr, vjp_jaxpr, Vjp};

/// In debug builds, typechecks a transform's result (a failure is a bug in
/// the transform, reported as the typecheck error).
pub(crate) fn debug_check(j: &crate::ir::ClosedJaxpr) -> crate::error::Result<()> {
    if cfg!(debug_assertions) {
        crate::ir::typecheck::typecheck(j)?;
    }
    Ok(())
}
