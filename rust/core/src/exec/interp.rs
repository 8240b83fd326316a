//! Reference interpreter: evaluates a jaxpr equation by equation through the
//! per-primitive kernels.
//!
//! Values are shared `Arc`s: a nested `pjit` receives its operands without a
//! copy, and each value is dropped right after its last use, so peak memory
//! is what the program needs live, not everything it ever computed.
//!
//! A program run many times (a `jit` cache entry) is wrapped in a
//! [`Prepared`]: its literal operands are materialized and its last-use
//! table computed once, so a run allocates only the environment and what
//! the kernels return. Operands reach the kernels as borrows of the
//! environment (no per-equation operand vectors for arity ≤ 3).

use super::{unbound, ExecCtx};
use crate::array::HostArray;
use crate::error::{Error, Result};
use crate::ir::{Atom, Aval, ClosedJaxpr, Jaxpr};
use crate::prims::{kernel, shape, Primitive};
use crate::prims::{Checkpoint, Pjit};
use std::sync::Arc;

/// Runs `jaxpr` on `consts` and `args`, returning its outputs, in a
/// context with the process-wide defaults.
pub fn eval_jaxpr(
    jaxpr: &Jaxpr, consts: &[Arc<HostArray>], args: &[Arc<HostArray>],
) -> Result<Vec<Arc<HostArray>>> {
    eval_jaxpr_in(&ExecCtx::current_default(), jaxpr, consts, args)
}

/// [`eval_jaxpr`] in `ctx` (a nested evaluation runs in its caller's).
pub fn eval_jaxpr_in(
    ctx: &ExecCtx, jaxpr: &Jaxpr, consts: &[Arc<HostArray>], args: &[Arc<HostArray>],
) -> Result<Vec<Arc<HostArray>>> {
    let last_use = last_uses(jaxpr);
    let lits = literal_operands(jaxpr)?;
    run(ctx, jaxpr, consts, args, &last_use, &lits)
}

/// Runs a closed jaxpr on `args` in a context with the process-wide
/// defaults.
pub fn eval_closed(prog: &ClosedJaxpr, args: &[Arc<HostArray>]) -> Result<Vec<Arc<HostArray>>> {
    eval_closed_in(&ExecCtx::current_default(), prog, args)
}

/// Runs a closed jaxpr on `args` in `ctx` (nested evaluations pass the
/// enclosing run's context).
pub fn eval_closed_in(
    ctx: &ExecCtx, prog: &ClosedJaxpr, args: &[Arc<HostArray>],
) -> Result<Vec<Arc<HostArray>>> {
    eval_jaxpr_in(ctx, &prog.jaxpr, &prog.consts, args)
}

/// A closed jaxpr prepared for repeated runs: the literal operands of its
/// equations are materialized once and the last use of every variable is
/// precomputed. Runs give the same results as [`eval_closed`].
#[derive(Debug)]
pub struct Prepared {
    prog: Arc<ClosedJaxpr>,
    last_use: Vec<Option<usize>>,
    lits: Vec<HostArray>,
}

impl Prepared {
    /// Prepares `prog` (fails only when a literal cannot be materialized).
    pub fn new(prog: Arc<ClosedJaxpr>) -> Result<Prepared> {
        let last_use = last_uses(&prog.jaxpr);
        let lits = literal_operands(&prog.jaxpr)?;
        Ok(Prepared {
            prog,
            last_use,
            lits,
        })
    }

    /// The program.
    pub fn program(&self) -> &Arc<ClosedJaxpr> {
        &self.prog
    }

    /// Runs the program on `args` in a context with the process-wide
    /// defaults.
    pub fn run(&self, args: &[Arc<HostArray>]) -> Result<Vec<Arc<HostArray>>> {
        self.run_in(&ExecCtx::current_default(), args)
    }

    /// Runs the program on `args` in `ctx`.
    pub fn run_in(&self, ctx: &ExecCtx, args: &[Arc<HostArray>]) -> Result<Vec<Arc<HostArray>>> {
        run(
            ctx,
            &self.prog.jaxpr,
            &self.prog.consts,
            args,
            &self.last_use,
            &self.lits,
        )
    }
}

/// The literal operands of the equations, in equation then operand order
/// (the order [`run`] consumes them in).
fn literal_operands(jaxpr: &Jaxpr) -> Result<Vec<HostArray>> {
    jaxpr
        .eqns
        .iter()
        .flat_map(|e| e.inputs.iter())
        .filter_map(|a| match a {
            Atom::Lit(l) => Some(l.to_array()),
            Atom::Var(_) => None,
        })
        .collect()
}

/// The array an equation operand refers to: a live variable of `env`, or the
/// next entry of `lits` (`cursor` counts the literals consumed so far).
#[inline]
fn operand<'a>(
    env: &'a [Option<Arc<HostArray>>], lits: &'a [HostArray], cursor: &mut usize, a: &Atom,
) -> Result<&'a HostArray> {
    match a {
        Atom::Var(v) => env
            .get(v.index())
            .and_then(|s| s.as_deref())
            .ok_or_else(|| unbound(*v)),
        Atom::Lit(_) => {
            let h = lits.get(*cursor).ok_or_else(|| {
                Error::InvalidArgument("interpreter literal table is out of step".into())
            })?;
            *cursor = cursor.saturating_add(1);
            Ok(h)
        }
    }
}

/// The operands of an equation as shared values (literals materialized).
fn shared_operands(
    env: &[Option<Arc<HostArray>>], lits: &[HostArray], cursor: &mut usize, inputs: &[Atom],
) -> Result<Vec<Arc<HostArray>>> {
    inputs
        .iter()
        .map(|a| match a {
            Atom::Var(v) => super::bound_value(env, *v),
            Atom::Lit(_) => Ok(Arc::new(operand(env, lits, cursor, a)?.clone())),
        })
        .collect()
}

/// The environment with the constants and arguments bound (after checking
/// their counts).
fn bind_inputs(
    jaxpr: &Jaxpr, consts: &[Arc<HostArray>], args: &[Arc<HostArray>],
) -> Result<Vec<Option<Arc<HostArray>>>> {
    Error::check_count("eval_jaxpr (consts)", jaxpr.constvars.len(), consts.len())?;
    // The arguments' types are the parameters' (as the compiled executor
    // checks): a program typed f32[3] never runs on an f32[5] or f64 value.
    super::check_program_args(
        "eval_jaxpr",
        jaxpr,
        args.iter().map(|a| (a.shape(), a.dtype())),
    )?;
    let mut env: Vec<Option<Arc<HostArray>>> = vec![None; jaxpr.avals.len()];
    let bound = jaxpr
        .constvars
        .iter()
        .zip(consts)
        .chain(jaxpr.invars.iter().zip(args));
    for (v, val) in bound {
        let slot = env.get_mut(v.index()).ok_or_else(|| unbound(*v))?;
        *slot = Some(val.clone());
    }
    Ok(env)
}

/// The outputs of one equation. Call primitives, control flow and callbacks
/// share their operands instead of copying them; the others run their kernel
/// on borrowed operands (without a vector for up to three of them).
fn eval_eqn(
    ctx: &ExecCtx, eqn: &crate::ir::Eqn, env: &[Option<Arc<HostArray>>], lits: &[HostArray],
    cursor: &mut usize,
) -> Result<Vec<Arc<HostArray>>> {
    Ok(match &eqn.prim {
        Primitive::Pjit(Pjit { jaxpr: sub, .. })
        | Primitive::Checkpoint(Checkpoint { jaxpr: sub, .. }) => {
            let ins = shared_operands(env, lits, cursor, &eqn.inputs)?;
            let avals: Vec<Aval> = ins.iter().map(|a| a.aval()).collect();
            shape::abstract_eval(&eqn.prim, &avals)?;
            eval_closed_in(ctx, sub, &ins)?
        }
        Primitive::Control(c) => {
            let ins = shared_operands(env, lits, cursor, &eqn.inputs)?;
            crate::prims::control::eval(ctx, c, &ins)?
        }
        Primitive::Callback(c) => {
            let ins = shared_operands(env, lits, cursor, &eqn.inputs)?;
            crate::prims::callback::eval(c, &ins)?
        }
        prim => {
            let c = cursor;
            let raw = match eqn.inputs.as_slice() {
                [] => kernel::eval(ctx, prim, &[])?,
                [a] => {
                    let x = operand(env, lits, c, a)?;
                    kernel::eval(ctx, prim, &[x])?
                }
                [a, b] => {
                    let x = operand(env, lits, c, a)?;
                    let y = operand(env, lits, c, b)?;
                    kernel::eval(ctx, prim, &[x, y])?
                }
                [a, b, d] => {
                    let x = operand(env, lits, c, a)?;
                    let y = operand(env, lits, c, b)?;
                    let z = operand(env, lits, c, d)?;
                    kernel::eval(ctx, prim, &[x, y, z])?
                }
                all => {
                    let refs = all
                        .iter()
                        .map(|a| operand(env, lits, c, a))
                        .collect::<Result<Vec<&HostArray>>>()?;
                    kernel::eval(ctx, prim, &refs)?
                }
            };
            raw.into_iter().map(Arc::new).collect()
        }
    })
}

fn run(
    ctx: &ExecCtx, jaxpr: &Jaxpr, consts: &[Arc<HostArray>], args: &[Arc<HostArray>],
    last_use: &[Option<usize>], lits: &[HostArray],
) -> Result<Vec<Arc<HostArray>>> {
    let mut env = bind_inputs(jaxpr, consts, args)?;
    let mut cursor = 0usize;
    for (i, eqn) in jaxpr.eqns.iter().enumerate() {
        ctx.take_step()?;
        let out_avals = eqn
            .outputs
            .iter()
            .filter_map(|v| jaxpr.avals.get(v.index()));
        crate::array::budget::check_avals_within(
            eqn.prim.name(),
            out_avals,
            ctx.max_buffer_bytes(),
        )?;
        let outs = eval_eqn(ctx, eqn, &env, lits, &mut cursor)?;
        super::check_output_count(eqn, outs.len())?;
        for (v, val) in eqn.outputs.iter().zip(outs) {
            let slot = env.get_mut(v.index()).ok_or_else(|| unbound(*v))?;
            *slot = Some(val);
        }
        // Free operands whose last reader was this equation.
        for a in &eqn.inputs {
            if let Atom::Var(v) = a {
                if last_use.get(v.index()) == Some(&Some(i)) {
                    if let Some(slot) = env.get_mut(v.index()) {
                        *slot = None;
                    }
                }
            }
        }
    }
    jaxpr.outvars.iter().map(|a| read(&env, a)).collect()
}

/// For each variable, the index of the last equation reading it; `None`
/// when it is never read by an equation or is a program output (kept).
fn last_uses(jaxpr: &Jaxpr) -> Vec<Option<usize>> {
    let mut last: Vec<Option<usize>> = vec![None; jaxpr.avals.len()];
    for (i, eqn) in jaxpr.eqns.iter().enumerate() {
        for a in &eqn.inputs {
            if let Atom::Var(v) = a {
                if let Some(slot) = last.get_mut(v.index()) {
                    *slot = Some(i);
                }
            }
        }
    }
    for a in &jaxpr.outvars {
        if let Atom::Var(v) = a {
            if let Some(slot) = last.get_mut(v.index()) {
                *slot = None;
            }
        }
    }
    last
}

fn read(env: &[Option<Arc<HostArray>>], a: &Atom) -> Result<Arc<HostArray>> {
    match a {
        Atom::Var(v) => super::bound_value(env, *v),
        Atom::Lit(l) => Ok(Arc::new(l.to_array()?)),
    }
}
