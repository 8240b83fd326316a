//! Executors: the reference interpreter (the oracle) and the compiled CPU
//! executor (`jit`, exported programs and control-flow bodies run on it).

pub mod cache;
pub mod compiled;
pub mod ctx;
pub mod cuda;
pub mod determinism;
pub mod fork;
pub mod interp;
pub mod mpi;
pub mod pool;

pub use ctx::{CancelToken, ExecCtx, PollHook};
pub use determinism::{default_determinism, set_default_determinism, Determinism};

use crate::array::HostArray;
use crate::error::Result;
use std::sync::Arc;

/// Something that runs a closed program on shared values: the reference
/// interpreter's [`interp::Prepared`] or a [`compiled::Compiled`] plan.
/// Control-flow primitives run their bodies through it.
pub trait Runner: Send + Sync {
    /// Runs the program on `args` in `ctx` (the enclosing run's context),
    /// returning its outputs.
    fn run_in(&self, ctx: &ExecCtx, args: &[Arc<HostArray>]) -> Result<Vec<Arc<HostArray>>>;

    /// The compiled plan behind this runner, if it is one (loops run it
    /// through [`compiled::Looped`]).
    fn as_compiled(&self) -> Option<&compiled::Compiled> {
        None
    }
}

/// A loop body (`scan`, `while`) run many times with the same leading
/// (loop-invariant) operands: a compiled plan binds them once
/// ([`compiled::Looped`]); any other runner is called with them prepended.
pub enum LoopBody<'a> {
    Plan(compiled::Looped<'a>),
    Runner {
        runner: &'a dyn Runner,
        /// The fixed operands, then the last run's varying ones.
        ins: Vec<Arc<HostArray>>,
        fixed: usize,
    },
}

impl<'a> LoopBody<'a> {
    pub fn new(runner: &'a dyn Runner, fixed: &[Arc<HostArray>]) -> Result<LoopBody<'a>> {
        Ok(match runner.as_compiled() {
            Some(plan) => LoopBody::Plan(plan.looped(fixed)?),
            None => LoopBody::Runner {
                runner,
                ins: fixed.to_vec(),
                fixed: fixed.len(),
            },
        })
    }

    /// Runs the body on the fixed operands followed by `vary` (drained),
    /// appending its results to `outs`.
    pub fn run(
        &mut self, ctx: &ExecCtx, vary: &mut Vec<Arc<HostArray>>, outs: &mut Vec<Arc<HostArray>>,
    ) -> Result<()> {
        match self {
            LoopBody::Plan(p) => p.run(ctx, vary, outs),
            LoopBody::Runner { runner, ins, fixed } => {
                ins.append(vary);
                let ran = runner.run_in(ctx, ins);
                // The varying operands are dead once the body has run: a
                // compiled body reuses their buffers.
                ins.drain(*fixed..).for_each(compiled::recycle::give);
                outs.extend(ran?);
                Ok(())
            }
        }
    }
}

impl Runner for interp::Prepared {
    fn run_in(&self, ctx: &ExecCtx, args: &[Arc<HostArray>]) -> Result<Vec<Arc<HostArray>>> {
        interp::Prepared::run_in(self, ctx, args)
    }
}

/// The error of reading a variable no step has bound.
pub(crate) fn unbound(v: crate::Var) -> crate::error::Error {
    crate::error::Error::UnboundVar(format!("#{}", v.0))
}

/// The value of `v` in an executor's value table (indexed by variable).
pub(crate) fn bound_value(env: &[Option<Arc<HostArray>>], v: crate::Var) -> Result<Arc<HostArray>> {
    env.get(v.index())
        .and_then(|s| s.clone())
        .ok_or_else(|| unbound(v))
}

/// Checks that an equation's rule gave one value per output variable.
pub(crate) fn check_output_count(eqn: &crate::Eqn, got: usize) -> Result<()> {
    if got == eqn.outputs.len() {
        return Ok(());
    }
    Err(crate::error::Error::Arity {
        prim: eqn.prim.name(),
        expected: eqn.outputs.len(),
        got,
    })
}

/// Checks a program's arguments, given as (shape, dtype) each, against its
/// inputs: the count, then each shape and dtype. `what` names the program
/// kind in the error.
pub(crate) fn check_program_args<'a>(
    what: &'static str, jx: &crate::ir::Jaxpr,
    args: impl ExactSizeIterator<Item = (&'a [usize], crate::dtype::DType)>,
) -> Result<()> {
    crate::error::Error::check_count(what, jx.invars.len(), args.len())?;
    for (v, (shape, dtype)) in jx.invars.iter().zip(args) {
        check_program_arg(what, jx.aval(*v)?, shape, dtype)?;
    }
    Ok(())
}

/// Checks one argument (shape, dtype) against its parameter's aval.
#[inline]
pub(crate) fn check_program_arg(
    what: &'static str, want: &crate::ir::Aval, shape: &[usize], dtype: crate::dtype::DType,
) -> Result<()> {
    if dtype != want.dtype || !crate::array::same_dims(shape, &want.shape) {
        let got = crate::ir::Aval::new(shape.to_vec(), dtype);
        return Err(crate::error::Error::Typecheck(format!(
            "{what}: argument {} does not match parameter {}",
            got.short(),
            want.short()
        )));
    }
    Ok(())
}
