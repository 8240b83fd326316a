//! Static analyses of a compiled plan: the work it does
//! ([`Compiled::cost_analysis`]) and the memory it holds
//! ([`Compiled::memory_analysis`]), both computed from the simplified
//! program and the plan's last-use table without running anything (Python's
//! `jit(f).lower(x).compile().cost_analysis()` / `.memory_analysis()`).
//!
//! Counts follow XLA's cost model where it has one: an elementwise
//! equation costs one flop per output element, or one *transcendental* for
//! exp/log/trigonometric/special functions; `dot_general` costs
//! `2·M·N·K` per batch; a convolution two flops per multiply-add; a
//! reduction one flop per input element. `bytes accessed` sums the bytes
//! each equation reads and writes. A `scan` costs its length times its
//! body, a `cond` its most expensive branch; a `while` counts its condition
//! and body once (the trip count is not known before running).

use super::{Compiled, Step};
use crate::error::Result;
use crate::ir::{Atom, Aval, ClosedJaxpr, Jaxpr, Var};
use crate::prims::control::ControlFlow;
use crate::prims::custom::{CustomCall, VjpCall};
use crate::prims::{Primitive, UnaryOp};

/// What a program computes, as XLA's cost analysis reports it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CostAnalysis {
    /// Arithmetic operations (multiply-adds count two).
    pub flops: f64,
    /// Elementwise transcendental evaluations (exp, log, tanh, …).
    pub transcendentals: f64,
    /// Bytes every equation reads plus the bytes it writes.
    pub bytes_accessed: f64,
}

impl CostAnalysis {
    fn add(&mut self, other: CostAnalysis) {
        self.flops += other.flops;
        self.transcendentals += other.transcendentals;
        self.bytes_accessed += other.bytes_accessed;
    }

    fn scaled(self, by: f64) -> CostAnalysis {
        CostAnalysis {
            flops: self.flops * by,
            transcendentals: self.transcendentals * by,
            bytes_accessed: self.bytes_accessed * by,
        }
    }
}

/// The memory a run of the plan holds, in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemoryAnalysis {
    /// The arguments.
    pub argument_bytes: usize,
    /// The results.
    pub output_bytes: usize,
    /// The program's constants.
    pub constant_bytes: usize,
    /// The most bytes of intermediate values (neither arguments nor
    /// constants) live at once.
    pub temp_bytes: usize,
    /// The most bytes of all values live at once (arguments and constants
    /// included), the figure `plan_stats` measures on a real run. Values a
    /// run shares one buffer between (a reshape of its operand) count once
    /// each here, so this is an upper bound of the measured peak.
    pub peak_bytes: usize,
}

/// Bytes of the elements of a value of aval `a`.
fn aval_bytes(a: &Aval) -> f64 {
    let n: f64 = a.shape.iter().map(|&d| d as f64).product();
    n * a.dtype.itemsize() as f64
}

fn aval_elems(a: &Aval) -> f64 {
    a.shape.iter().map(|&d| d as f64).product()
}

/// Whether XLA counts `op` as a transcendental rather than a flop.
fn is_transcendental(op: UnaryOp) -> bool {
    !matches!(
        op,
        UnaryOp::Neg
            | UnaryOp::Abs
            | UnaryOp::Sign
            | UnaryOp::Floor
            | UnaryOp::Ceil
            | UnaryOp::Square
            | UnaryOp::Not
            | UnaryOp::PopulationCount
            | UnaryOp::Clz
    )
}

/// The cost of running `prog` once.
pub fn program_cost(prog: &ClosedJaxpr) -> Result<CostAnalysis> {
    jaxpr_cost(&prog.jaxpr)
}

fn jaxpr_cost(jx: &Jaxpr) -> Result<CostAnalysis> {
    let mut total = CostAnalysis::default();
    for eqn in &jx.eqns {
        let ins = eqn
            .inputs
            .iter()
            .map(|a| jx.atom_aval(a))
            .collect::<Result<Vec<&Aval>>>()?;
        let outs = eqn
            .outputs
            .iter()
            .map(|v| jx.aval(*v))
            .collect::<Result<Vec<&Aval>>>()?;
        total.add(eqn_cost(&eqn.prim, &ins, &outs)?);
    }
    Ok(total)
}

/// The cost of one equation of `prim` with operand avals `ins` and result
/// avals `outs`.
fn eqn_cost(prim: &Primitive, ins: &[&Aval], outs: &[&Aval]) -> Result<CostAnalysis> {
    let moved: f64 = ins.iter().chain(outs).map(|a| aval_bytes(a)).sum();
    let out_elems: f64 = outs.iter().map(|a| aval_elems(a)).sum();
    let in_elems = |i: usize| ins.get(i).map_or(0.0, |a| aval_elems(a));
    let local = |flops: f64, transcendentals: f64| CostAnalysis {
        flops,
        transcendentals,
        bytes_accessed: moved,
    };
    Ok(match prim {
        Primitive::Unary(op) if is_transcendental(*op) => local(0.0, out_elems),
        Primitive::Unary(_) | Primitive::Binary(_) | Primitive::IntegerPow(_) => {
            local(out_elems, 0.0)
        }
        Primitive::Compare(_) | Primitive::SelectN(_) | Primitive::Clamp(_) => {
            local(out_elems, 0.0)
        }
        Primitive::Reduce(_) | Primitive::Arg(_) | Primitive::Cumulative(_) => {
            local(in_elems(0), 0.0)
        }
        Primitive::DotGeneral(d) => {
            let lhs = ins.first().map(|a| a.shape.as_slice()).unwrap_or_default();
            let k: f64 = d
                .dims
                .lhs_contract
                .iter()
                .map(|&i| lhs.get(i).map_or(1.0, |&s| s as f64))
                .product();
            local(2.0 * out_elems * k, 0.0)
        }
        Primitive::Conv(c) => {
            // Each output element is a dot over in-features/groups × window.
            let rhs = ins.get(1).map(|a| a.shape.as_slice()).unwrap_or_default();
            let rhs_elems: f64 = rhs.iter().map(|&s| s as f64).product();
            let out_features = c
                .dims
                .rhs_spec
                .first()
                .and_then(|&i| rhs.get(i))
                .map_or(1.0, |&s| (s as f64).max(1.0));
            local(2.0 * out_elems * rhs_elems / out_features, 0.0)
        }
        Primitive::Control(ControlFlow::Scan(s)) => {
            let mut c = program_cost(&s.jaxpr)?.scaled(s.length as f64);
            c.bytes_accessed += moved;
            c
        }
        Primitive::Control(ControlFlow::Cond { branches }) => {
            let mut worst = CostAnalysis::default();
            for b in branches {
                let c = program_cost(b)?;
                if c.flops + c.transcendentals > worst.flops + worst.transcendentals {
                    worst = c;
                }
            }
            worst.bytes_accessed += moved;
            worst
        }
        Primitive::Control(ControlFlow::While {
            cond_jaxpr,
            body_jaxpr,
            ..
        }) => {
            let mut c = program_cost(cond_jaxpr)?;
            c.add(program_cost(body_jaxpr)?);
            c.bytes_accessed += moved;
            c
        }
        Primitive::Pjit(_) | Primitive::Checkpoint(_) => match prim.call_jaxpr() {
            Some(callee) => program_cost(callee)?,
            None => local(0.0, 0.0),
        },
        Primitive::Custom(CustomCall::Jvp { call, .. } | CustomCall::Vjp(VjpCall { call, .. })) => {
            program_cost(call)?
        }
        _ => local(0.0, 0.0),
    })
}

impl Compiled {
    /// The cost of one run of the plan (the simplified program: inlined
    /// calls, shared subexpressions and dead code are already accounted).
    pub fn cost_analysis(&self) -> Result<CostAnalysis> {
        program_cost(&self.prog)
    }

    /// The memory one run holds, from the plan's order and last-use table
    /// (values are freed right after their last reader).
    pub fn memory_analysis(&self) -> Result<MemoryAnalysis> {
        let jx = &self.prog.jaxpr;
        let bytes_of = |v: Var| -> Result<usize> {
            let a = jx.aval(v)?;
            Ok(crate::array::checked_size(&a.shape)?.saturating_mul(a.dtype.itemsize()))
        };
        let sum = |vs: &[Var]| -> Result<usize> {
            vs.iter()
                .try_fold(0usize, |acc, v| Ok(acc.saturating_add(bytes_of(*v)?)))
        };
        let argument_bytes = sum(&jx.invars)?;
        let constant_bytes = sum(&jx.constvars)?;
        let mut output_bytes = 0usize;
        for a in &jx.outvars {
            let b = match a {
                Atom::Var(v) => bytes_of(*v)?,
                Atom::Lit(l) => crate::array::checked_size(&l.aval.shape)?
                    .saturating_mul(l.aval.dtype.itemsize()),
            };
            output_bytes = output_bytes.saturating_add(b);
        }
        let fixed: std::collections::HashSet<Var> =
            jx.invars.iter().chain(&jx.constvars).copied().collect();
        let (mut live_fixed, mut live_temp) =
            (argument_bytes.saturating_add(constant_bytes), 0usize);
        let (mut peak, mut temp_peak) = (live_fixed, 0usize);
        for (step, frees) in self.steps.iter().zip(&self.frees) {
            for v in step_writes(jx, step) {
                live_temp = live_temp.saturating_add(bytes_of(v)?);
            }
            peak = peak.max(live_fixed.saturating_add(live_temp));
            temp_peak = temp_peak.max(live_temp);
            for v in frees {
                let b = bytes_of(*v)?;
                if fixed.contains(v) {
                    live_fixed = live_fixed.saturating_sub(b);
                } else {
                    live_temp = live_temp.saturating_sub(b);
                }
            }
        }
        Ok(MemoryAnalysis {
            argument_bytes,
            output_bytes,
            constant_bytes,
            temp_bytes: temp_peak,
            peak_bytes: peak,
        })
    }
}

/// The variables a plan step defines.
fn step_writes(jx: &Jaxpr, step: &Step) -> Vec<Var> {
    match step {
        Step::Eqn { index, .. } => jx
            .eqns
            .get(*index)
            .map(|e| e.outputs.clone())
            .unwrap_or_default(),
        Step::Fused(f) => f.writes().collect(),
    }
}
