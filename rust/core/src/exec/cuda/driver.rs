//! Control flow driven from the host over values that stay where they are
//! (device memory): `cond` copies its branch index to the host, `while` its
//! predicate, and `scan` slices `xs` rows and writes `ys` rows in place,
//! each through a [`LoopMemory`]. No CUDA types here, so the loop logic is
//! tested on every machine with host memory standing in for the device
//! (`tests` below); `control.rs` implements the trait for CUDA.

use crate::error::{Error, Result};
use crate::exec::ExecCtx;
use crate::ir::{Aval, Scalar};
use crate::prims::control::Scan;

/// What a host-driven loop needs from the memory its values live in.
pub trait LoopMemory {
    /// An array in that memory (cheap to clone: shared).
    type Value: Clone;
    /// A compiled sub-program (a branch, a loop's cond or body).
    type Plan;

    /// Runs `plan` on `args` in the enclosing run's `ctx`.
    fn run(
        &self, ctx: &ExecCtx, plan: &Self::Plan, args: &[Self::Value],
    ) -> Result<Vec<Self::Value>>;
    /// The first element of `v`, copied to the host.
    fn scalar(&self, v: &Self::Value) -> Result<Scalar>;
    /// Row `i` of `x` along its leading axis, as a new array.
    fn row(&self, x: &Self::Value, i: usize) -> Result<Self::Value>;
    /// A new array of `aval` whose rows the loop writes before anyone reads.
    fn alloc(&self, aval: &Aval) -> Result<Self::Value>;
    /// Overwrites row `i` of `dst` (fresh from [`LoopMemory::alloc`]) with `y`.
    fn write_row(&self, dst: &mut Self::Value, i: usize, y: &Self::Value) -> Result<()>;
}

fn operands<'a, V>(prim: &'static str, args: &'a [V], from: usize, n: usize) -> Result<&'a [V]> {
    from.checked_add(n)
        .and_then(|to| args.get(from..to))
        .ok_or(Error::Arity {
            prim,
            expected: from.saturating_add(n),
            got: args.len(),
        })
}

/// `cond`: the branch the first operand selects (clamped into range, as
/// XLA does) runs on the other operands.
pub fn run_cond<M: LoopMemory>(
    ctx: &ExecCtx, mem: &M, branches: &[M::Plan], args: &[M::Value],
) -> Result<Vec<M::Value>> {
    let (index, ops) = args.split_first().ok_or(Error::arity("cond", 1, 0))?;
    let i = mem.scalar(index)?.as_i64();
    let last = branches
        .len()
        .checked_sub(1)
        .ok_or(Error::arity("cond", 1, 0))?;
    let k = usize::try_from(i.max(0)).unwrap_or(last).min(last);
    let branch =
        branches
            .get(k)
            .ok_or(Error::arity("cond", k.saturating_add(1), branches.len()))?;
    mem.run(ctx, branch, ops)
}

/// `while`: operands are the cond's consts, the body's consts, the initial
/// carries; the final carries come back. Each iteration counts against
/// the run's loop budget ([`ExecCtx::take_loop_iteration`]) as on the
/// CPU.
pub fn run_while<M: LoopMemory>(
    ctx: &ExecCtx, mem: &M, cond: &M::Plan, body: &M::Plan, nconsts: (usize, usize),
    args: &[M::Value],
) -> Result<Vec<M::Value>> {
    let (cc, bc) = nconsts;
    let cond_consts = operands("while", args, 0, cc)?;
    let body_consts = operands("while", args, cc, bc)?;
    let mut carries: Vec<M::Value> = args
        .get(cc.saturating_add(bc)..)
        .unwrap_or_default()
        .to_vec();
    loop {
        let ins: Vec<M::Value> = cond_consts.iter().chain(&carries).cloned().collect();
        let pred = match mem.run(ctx, cond, &ins)?.as_slice() {
            [p] => mem.scalar(p)?.as_bool(),
            outs => return Err(Error::arity("while", 1, outs.len())),
        };
        if !pred {
            return Ok(carries);
        }
        ctx.take_loop_iteration()?;
        let ins: Vec<M::Value> = body_consts.iter().chain(&carries).cloned().collect();
        carries = mem.run(ctx, body, &ins)?;
    }
}

/// `scan`: operands are consts, initial carries, `xs`; results the final
/// carries then the stacked `ys` (`y_avals`, leading axis `s.length`).
pub fn run_scan<M: LoopMemory>(
    ctx: &ExecCtx, mem: &M, s: &Scan, body: &M::Plan, y_avals: &[Aval], args: &[M::Value],
) -> Result<Vec<M::Value>> {
    ctx.check_loop_iterations_left(s.length)?;
    let consts = operands("scan", args, 0, s.num_consts)?;
    let mut carries = operands("scan", args, s.num_consts, s.num_carry)?.to_vec();
    let xs = args
        .get(s.num_consts.saturating_add(s.num_carry)..)
        .unwrap_or_default();
    let mut ys = y_avals
        .iter()
        .map(|a| mem.alloc(a))
        .collect::<Result<Vec<_>>>()?;
    for step in 0..s.length {
        ctx.take_loop_iteration()?;
        let i = s.row(step);
        let mut ins: Vec<M::Value> = consts.iter().chain(&carries).cloned().collect();
        for x in xs {
            ins.push(mem.row(x, i)?);
        }
        let mut outs = mem.run(ctx, body, &ins)?;
        Error::check_count("scan", s.num_carry.saturating_add(ys.len()), outs.len())?;
        let step_ys = outs.split_off(s.num_carry);
        for (dst, y) in ys.iter_mut().zip(&step_ys) {
            mem.write_row(dst, i, y)?;
        }
        carries = outs;
    }
    carries.extend(ys);
    Ok(carries)
}
