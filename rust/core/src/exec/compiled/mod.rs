//! The compiled CPU executor.
//!
//! [`Compiled::new`] turns a closed jaxpr into a plan once:
//!
//! 1. [`simplify`](simplify::simplify): calls inlined, common
//!    subexpressions shared, exact identities dropped, scalar literal
//!    arithmetic folded, dead code removed;
//! 2. [`fusion`]: maximal groups of same-shape elementwise equations (and
//!    the broadcasts feeding them), each run as one chunked pass
//!    ([`fused::Fused`]);
//! 3. control-flow bodies compiled recursively, once;
//! 4. a last-use table, so every value is freed right after its last
//!    reader and peak memory is what the program needs live.
//!
//! [`Compiled::run`] then walks the steps. Results are bit-identical to the
//! reference interpreter (every value is computed by the same kernels) and
//! do not depend on the thread count (chunking depends on sizes only).

pub mod fused;
pub mod fusion;
pub mod recycle;
pub mod simplify;

use super::Runner;
use crate::array::HostArray;
use crate::error::{Error, Result};
use crate::ir::{Atom, Aval, ClosedJaxpr, Jaxpr, Var};
use crate::prims::{kernel, Primitive};
use fused::Fused;
use std::sync::Arc;

/// An equation operand: a variable, or a literal materialized at compile
/// time.
#[derive(Debug)]
enum Src {
    Var(Var),
    Lit(Arc<HostArray>),
}

#[derive(Debug)]
enum Step {
    /// One equation run by its kernel; control flow carries its compiled
    /// bodies.
    Eqn {
        index: usize,
        ins: Vec<Src>,
        bodies: Vec<Compiled>,
        /// The output aval of a single-output kernel equation (known from
        /// the typechecked program, so the shape rule is not rerun).
        out: Option<Aval>,
    },
    /// A fusion group.
    Fused(Box<Fused>),
}

/// Counts of what compilation did (tests and the debug API report them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlanStats {
    /// Equations of the program as given (calls counted as one).
    pub eqns_in: usize,
    /// Equations after simplification.
    pub eqns_simplified: usize,
    /// Fusion groups and the equations inside them.
    pub groups: usize,
    pub fused_eqns: usize,
    /// Groups run by the typed, allocation-free pass (all-f32 or all-f64
    /// members with slice kernels).
    pub typed_groups: usize,
    /// Steps the run walks.
    pub steps: usize,
}

/// Memory a run held (the debug API reports it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Most bytes held at once by the values the plan keeps (arguments,
    /// constants, intermediates, outputs), counting each buffer once,
    /// measured after every step before its dead values are freed.
    pub peak_bytes: usize,
    /// Bytes of the arguments and of the outputs.
    pub arg_bytes: usize,
    pub out_bytes: usize,
}

/// Bytes of a value's elements.
pub fn value_bytes(h: &HostArray) -> usize {
    use crate::array::Buffer;
    let width = match h.buffer() {
        Buffer::Bool(_) | Buffer::I8(_) | Buffer::U8(_) => 1,
        Buffer::I16(_) | Buffer::U16(_) | Buffer::F16(_) | Buffer::BF16(_) => 2,
        Buffer::I32(_) | Buffer::U32(_) | Buffer::F32(_) => 4,
        Buffer::I64(_) | Buffer::U64(_) | Buffer::F64(_) | Buffer::Key(_) => 8,
        Buffer::Float0(_) => 0,
    };
    h.size().saturating_mul(width)
}

/// Bytes held by the live values of `env`, each buffer counted once.
fn live_bytes(env: &[Option<Arc<HostArray>>]) -> usize {
    let mut seen: Vec<*const HostArray> = Vec::new();
    let mut total = 0usize;
    for h in env.iter().flatten() {
        let p = Arc::as_ptr(h);
        if !seen.contains(&p) {
            seen.push(p);
            total = total.saturating_add(value_bytes(h));
        }
    }
    total
}

/// A compiled program.
#[derive(Debug)]
pub struct Compiled {
    original: Arc<ClosedJaxpr>,
    prog: ClosedJaxpr,
    steps: Vec<Step>,
    /// Per step, the variables whose last reader it is.
    frees: Vec<Vec<Var>>,
    stats: PlanStats,
}

impl Compiled {
    /// Compiles `prog`.
    pub fn new(prog: Arc<ClosedJaxpr>) -> Result<Compiled> {
        let simple = simplify::simplify(&prog)?;
        super::budget::check_avals("compiled program", &simple.jaxpr.avals)?;
        let jx = &simple.jaxpr;
        let groups = fusion::find_groups(jx)?;
        let escapes = escaping(jx, &groups);
        let owner = fusion::group_owners(jx.eqns.len(), &groups);
        let mut steps = Vec::new();
        for (i, eqn) in jx.eqns.iter().enumerate() {
            match owner.get(i).copied().flatten() {
                Some((g, true)) => {
                    let group = groups.get(g).ok_or_else(|| internal("group index"))?;
                    steps.push(Step::Fused(Box::new(Fused::new(jx, group, &escapes)?)));
                }
                Some((_, false)) => {}
                None => {
                    let ins = eqn
                        .inputs
                        .iter()
                        .map(|a| match a {
                            Atom::Var(v) => Ok(Src::Var(*v)),
                            Atom::Lit(l) => Ok(Src::Lit(Arc::new(l.to_array()?))),
                        })
                        .collect::<Result<Vec<_>>>()?;
                    let bodies = match &eqn.prim {
                        Primitive::Control(c) => c
                            .sub_jaxprs()
                            .into_iter()
                            .map(|j| Compiled::new(j.clone()))
                            .collect::<Result<Vec<_>>>()?,
                        _ => Vec::new(),
                    };
                    let out = match (&eqn.prim, eqn.outputs.as_slice()) {
                        (Primitive::Control(_) | Primitive::Callback(_), _) => None,
                        (p, [v]) if !p.multiple_results() => Some(jx.aval(*v)?.clone()),
                        _ => None,
                    };
                    steps.push(Step::Eqn {
                        index: i,
                        ins,
                        bodies,
                        out,
                    });
                }
            }
        }
        let frees = last_uses(jx, &steps);
        let stats = PlanStats {
            eqns_in: prog.jaxpr.eqns.len(),
            eqns_simplified: jx.eqns.len(),
            groups: groups.len(),
            fused_eqns: groups.iter().map(|g| g.members.len()).sum(),
            typed_groups: steps
                .iter()
                .filter(|s| matches!(s, Step::Fused(f) if f.is_typed()))
                .count(),
            steps: steps.len(),
        };
        Ok(Compiled {
            original: prog,
            prog: simple,
            steps,
            frees,
            stats,
        })
    }

    /// The program as given to [`Compiled::new`].
    pub fn program(&self) -> &Arc<ClosedJaxpr> {
        &self.original
    }

    /// The simplified program the plan runs.
    pub fn simplified(&self) -> &ClosedJaxpr {
        &self.prog
    }

    /// What compilation did.
    pub fn stats(&self) -> &PlanStats {
        &self.stats
    }

    /// Runs the plan on `args`.
    pub fn run(&self, args: &[Arc<HostArray>]) -> Result<Vec<Arc<HostArray>>> {
        self.run_tracked(args, None)
    }

    /// Runs the plan and reports the memory it held (slower: it sums the
    /// live values after every step).
    pub fn run_profiled(&self, args: &[Arc<HostArray>]) -> Result<(Vec<Arc<HostArray>>, RunStats)> {
        let mut stats = RunStats::default();
        let outs = self.run_tracked(args, Some(&mut stats))?;
        stats.arg_bytes = args.iter().map(|a| value_bytes(a)).sum();
        stats.out_bytes = outs.iter().map(|a| value_bytes(a)).sum();
        Ok((outs, stats))
    }

    fn run_tracked(
        &self,
        args: &[Arc<HostArray>],
        mut track: Option<&mut RunStats>,
    ) -> Result<Vec<Arc<HostArray>>> {
        let jx = &self.prog.jaxpr;
        super::check_program_args(
            "compiled program",
            jx,
            args.iter().map(|a| (a.shape(), a.dtype())),
        )?;
        let mut env = recycle::Env::acquire(jx.avals.len());
        let bound = jx
            .constvars
            .iter()
            .zip(&self.prog.consts)
            .chain(jx.invars.iter().zip(args));
        for (v, val) in bound {
            *slot(&mut env, *v)? = Some(val.clone());
        }
        for (step, frees) in self.steps.iter().zip(&self.frees) {
            match step {
                Step::Eqn {
                    index,
                    ins,
                    bodies,
                    out,
                } => {
                    let eqn = jx
                        .eqns
                        .get(*index)
                        .ok_or_else(|| internal("equation index"))?;
                    let outs = run_eqn(&eqn.prim, ins, bodies, out.as_ref(), &env)?;
                    if outs.len() != eqn.outputs.len() {
                        return Err(Error::Arity {
                            prim: eqn.prim.name(),
                            expected: eqn.outputs.len(),
                            got: outs.len(),
                        });
                    }
                    for (v, val) in eqn.outputs.iter().zip(outs) {
                        *slot(&mut env, *v)? = Some(val);
                    }
                }
                Step::Fused(f) => {
                    let reads = f
                        .reads()
                        .map(|v| read(&env, v))
                        .collect::<Result<Vec<&HostArray>>>()?;
                    let outs = f.run(&reads)?;
                    for (v, val) in f.writes().zip(outs) {
                        *slot(&mut env, v)? = Some(val);
                    }
                }
            }
            if let Some(t) = track.as_deref_mut() {
                t.peak_bytes = t.peak_bytes.max(live_bytes(&env));
            }
            for v in frees {
                if let Some(h) = slot(&mut env, *v)?.take() {
                    recycle::give(h);
                }
            }
        }
        jx.outvars
            .iter()
            .map(|a| match a {
                Atom::Var(v) => env
                    .get(v.index())
                    .and_then(|s| s.clone())
                    .ok_or_else(|| unbound(*v)),
                Atom::Lit(l) => Ok(Arc::new(l.to_array()?)),
            })
            .collect()
    }
}

impl Runner for Compiled {
    fn run(&self, args: &[Arc<HostArray>]) -> Result<Vec<Arc<HostArray>>> {
        Compiled::run(self, args)
    }
}

fn internal(what: &str) -> Error {
    Error::InvalidArgument(format!("compiled plan: {what}"))
}

fn unbound(v: Var) -> Error {
    Error::UnboundVar(format!("#{}", v.0))
}

fn slot(env: &mut [Option<Arc<HostArray>>], v: Var) -> Result<&mut Option<Arc<HostArray>>> {
    env.get_mut(v.index()).ok_or_else(|| unbound(v))
}

fn read(env: &[Option<Arc<HostArray>>], v: Var) -> Result<&HostArray> {
    env.get(v.index())
        .and_then(|s| s.as_deref())
        .ok_or_else(|| unbound(v))
}

/// An operand's value.
fn src<'a>(env: &'a [Option<Arc<HostArray>>], s: &'a Src) -> Result<&'a HostArray> {
    match s {
        Src::Var(v) => read(env, *v),
        Src::Lit(h) => Ok(h),
    }
}

/// One unfused equation.
fn run_eqn(
    prim: &Primitive,
    ins: &[Src],
    bodies: &[Compiled],
    out: Option<&Aval>,
    env: &[Option<Arc<HostArray>>],
) -> Result<Vec<Arc<HostArray>>> {
    let shared = || -> Result<Vec<Arc<HostArray>>> {
        ins.iter()
            .map(|s| match s {
                Src::Var(v) => env
                    .get(v.index())
                    .and_then(|s| s.clone())
                    .ok_or_else(|| unbound(*v)),
                Src::Lit(h) => Ok(h.clone()),
            })
            .collect()
    };
    match prim {
        Primitive::Control(c) => {
            let runners: Vec<&dyn Runner> = bodies.iter().map(|b| b as &dyn Runner).collect();
            crate::prims::control::eval_with(c, &shared()?, &runners)
        }
        Primitive::Callback(c) => crate::prims::callback::eval(c, &shared()?),
        Primitive::Pjit { jaxpr, .. } | Primitive::Checkpoint { jaxpr, .. } => {
            super::interp::eval_closed(jaxpr, &shared()?)
        }
        Primitive::DotGeneral {
            dims,
            preferred_element_type,
        } if out.is_some() => {
            let (Some(a), [l, r]) = (out, ins) else {
                return run_kernel(prim, ins, out, env);
            };
            match dot_into_recycled(src(env, l)?, src(env, r)?, dims, *preferred_element_type, a)? {
                Some(h) => Ok(vec![h]),
                None => run_kernel(prim, ins, out, env),
            }
        }
        prim => run_kernel(prim, ins, out, env),
    }
}

/// An equation run by its kernel into fresh arrays.
fn run_kernel(
    prim: &Primitive,
    ins: &[Src],
    out: Option<&Aval>,
    env: &[Option<Arc<HostArray>>],
) -> Result<Vec<Arc<HostArray>>> {
    let refs = ins
        .iter()
        .map(|s| src(env, s))
        .collect::<Result<Vec<&HostArray>>>()?;
    let outs = match out {
        Some(a) => kernel::eval_known(prim, &refs, Some(a.clone()), Vec::new())?,
        None => kernel::eval(prim, &refs)?,
    };
    Ok(outs.into_iter().map(Arc::new).collect())
}

/// A small float product written into a recycled array of its type, when
/// the bin has one and the register kernel applies (`None`: take the
/// kernel's allocating path).
fn dot_into_recycled(
    l: &HostArray,
    r: &HostArray,
    dims: &crate::prims::DotDims,
    pref: Option<crate::dtype::DType>,
    out: &Aval,
) -> Result<Option<Arc<HostArray>>> {
    let Some(mut dst) = recycle::take(out.dtype, &out.shape) else {
        return Ok(None);
    };
    let written = match Arc::get_mut(&mut dst) {
        Some(h) => kernel::dot_general_into(l, r, dims, pref, h.buffer_mut())?,
        None => false,
    };
    if written {
        return Ok(Some(dst));
    }
    recycle::give(dst);
    Ok(None)
}

/// Whether each variable is read outside the fusion group that defines it
/// (by an unfused equation, another group, or as a program output).
fn escaping(jx: &Jaxpr, groups: &[fusion::Group]) -> Vec<bool> {
    let mut owner: Vec<Option<usize>> = vec![None; jx.eqns.len()];
    for (g, group) in groups.iter().enumerate() {
        for &m in &group.members {
            if let Some(slot) = owner.get_mut(m) {
                *slot = Some(g);
            }
        }
    }
    let mut defined_in: Vec<Option<usize>> = vec![None; jx.avals.len()];
    for (i, eqn) in jx.eqns.iter().enumerate() {
        for v in &eqn.outputs {
            if let Some(slot) = defined_in.get_mut(v.index()) {
                *slot = owner.get(i).copied().flatten();
            }
        }
    }
    let mut esc = vec![false; jx.avals.len()];
    for (i, eqn) in jx.eqns.iter().enumerate() {
        let reader = owner.get(i).copied().flatten();
        for a in &eqn.inputs {
            if let Atom::Var(v) = a {
                let def = defined_in.get(v.index()).copied().flatten();
                if def.is_some() && def != reader {
                    if let Some(e) = esc.get_mut(v.index()) {
                        *e = true;
                    }
                }
            }
        }
    }
    for a in &jx.outvars {
        if let Atom::Var(v) = a {
            if let Some(e) = esc.get_mut(v.index()) {
                *e = true;
            }
        }
    }
    esc
}

/// Per step, the variables it reads for the last time (program outputs are
/// never freed).
fn last_uses(jx: &Jaxpr, steps: &[Step]) -> Vec<Vec<Var>> {
    let mut last: Vec<Option<usize>> = vec![None; jx.avals.len()];
    for (i, step) in steps.iter().enumerate() {
        let reads: Vec<Var> = match step {
            Step::Eqn { ins, .. } => ins
                .iter()
                .filter_map(|s| match s {
                    Src::Var(v) => Some(*v),
                    Src::Lit(_) => None,
                })
                .collect(),
            Step::Fused(f) => f.reads().collect(),
        };
        for v in reads {
            if let Some(slot) = last.get_mut(v.index()) {
                *slot = Some(i);
            }
        }
    }
    for a in &jx.outvars {
        if let Atom::Var(v) = a {
            if let Some(slot) = last.get_mut(v.index()) {
                *slot = None;
            }
        }
    }
    let mut frees: Vec<Vec<Var>> = (0..steps.len()).map(|_| Vec::new()).collect();
    for (v, l) in last.iter().enumerate() {
        if let (Some(i), Ok(v32)) = (l, u32::try_from(v)) {
            if let Some(f) = frees.get_mut(*i) {
                f.push(Var(v32));
            }
        }
    }
    frees
}
