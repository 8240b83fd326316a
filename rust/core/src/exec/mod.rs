//! Executors: the reference interpreter (the oracle) and the compiled CPU
//! executor (`jit`, exported programs and control-flow bodies run on it).

pub mod budget;
pub mod cache;
pub mod compiled;
pub mod cuda;
pub mod determinism;
pub mod interp;
pub mod limits;
pub mod pool;

pub use determinism::{determinism, set_default_determinism, with_determinism, Determinism};

use crate::array::HostArray;
use crate::error::Result;
use std::sync::Arc;

/// Something that runs a closed program on shared values: the reference
/// interpreter's [`interp::Prepared`] or a [`compiled::Compiled`] plan.
/// Control-flow primitives run their bodies through it.
pub trait Runner: Send + Sync {
    /// Runs the program on `args`, returning its outputs.
    fn run(&self, args: &[Arc<HostArray>]) -> Result<Vec<Arc<HostArray>>>;
}

impl Runner for interp::Prepared {
    fn run(&self, args: &[Arc<HostArray>]) -> Result<Vec<Arc<HostArray>>> {
        interp::Prepared::run(self, args)
    }
}

/// Checks a program's arguments, given as (shape, dtype) each, against its
/// inputs: the count, then each shape and dtype. `what` names the program
/// kind in the error.
pub(crate) fn check_program_args<'a>(
    what: &'static str,
    jx: &crate::ir::Jaxpr,
    args: impl ExactSizeIterator<Item = (&'a [usize], crate::dtype::DType)>,
) -> Result<()> {
    if args.len() != jx.invars.len() {
        return Err(crate::error::Error::Arity {
            prim: what,
            expected: jx.invars.len(),
            got: args.len(),
        });
    }
    for (v, (shape, dtype)) in jx.invars.iter().zip(args) {
        let want = jx.aval(*v)?;
        if shape != want.shape.as_slice() || dtype != want.dtype {
            let got = crate::ir::Aval::new(shape.to_vec(), dtype);
            return Err(crate::error::Error::Typecheck(format!(
                "{what}: argument {} does not match parameter {}",
                got.short(),
                want.short()
            )));
        }
    }
    Ok(())
}
