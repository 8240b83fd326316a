//! `optimization_barrier`: the identity on any number of operands (one
//! output per operand, same aval), a fence compilers may not move
//! computations across. Nothing here reorders work, so it only passes
//! values through. AD: the barrier applies to the primals and, separately,
//! to the present tangents; it is linear, its transpose the barrier on the
//! present cotangents. vmap: the batch dims pass through.

use super::family::emit;
use super::family::{BatchOut, Family, JvpOut, Operand, TransposeOut};
use crate::array::HostArray;
use crate::error::Result;
use crate::exec::ExecCtx;
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval};

/// The identity on a tuple of values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OptimizationBarrier;

const OPTIMIZATION_BARRIER: &str = "optimization_barrier";

/// The barrier over the present entries of `xs`, `None` kept in place.
fn barrier_present(b: &mut Builder, xs: &[Option<Atom>]) -> Result<Vec<Option<Atom>>> {
    let present: Vec<Atom> = xs.iter().flatten().cloned().collect();
    if present.is_empty() {
        return Ok(vec![None; xs.len()]);
    }
    let mut outs = emit(b, OptimizationBarrier, present)?.into_iter();
    Ok(xs
        .iter()
        .map(|x| x.as_ref().and_then(|_| outs.next()))
        .collect())
}

impl Family for OptimizationBarrier {
    crate::family_identity!(unit: OPTIMIZATION_BARRIER, multiple_results = true);

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        Ok(ins.to_vec())
    }

    fn kernel(
        &self, _ctx: &ExecCtx, args: &[&HostArray], _outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        Ok(args.iter().map(|a| (*a).clone()).collect())
    }

    fn jvp(&self, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
        let outs = emit(b, *self, xs.to_vec())?;
        Ok((outs, barrier_present(b, ts)?))
    }

    fn transpose(&self, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TransposeOut {
        let linear: Vec<Option<Atom>> = cts
            .iter()
            .zip(ops)
            .map(|(ct, op)| ct.clone().filter(|_| op.is_linear()))
            .collect();
        barrier_present(b, &linear)
    }

    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], _n: usize) -> BatchOut {
        let outs = emit(b, *self, ins.to_vec())?;
        Ok((outs, dims.to_vec()))
    }
}
