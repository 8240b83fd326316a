//! The compiled CPU executor.
//!
//! [`Compiled::new`] turns a closed jaxpr into a plan once:
//!
//! 1. [`simplify_folding`](simplify::simplify_folding): calls inlined,
//!    common subexpressions shared, exact identities dropped, scalar literal
//!    arithmetic folded, small input-independent values (iotas, identity
//!    matrices) computed into constants, dead code removed;
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

pub mod analysis;
pub mod fused;
pub mod fusion;
pub mod recycle;
pub mod simplify;

use super::{unbound, ExecCtx, Runner};
use crate::array::same_dims;
use crate::array::HostArray;
use crate::error::{Error, Result};
use crate::ir::{Atom, Aval, ClosedJaxpr, Jaxpr, Var};
use crate::prims::{kernel, Primitive};
use crate::prims::{Checkpoint, DotGeneral, Pjit};
use fused::Fused;
use std::sync::Arc;

/// An equation operand: a variable, or a literal materialized at compile
/// time.
#[derive(Debug)]
enum Src {
    Var(Var),
    Lit(Arc<HostArray>),
}

impl Src {
    /// The variable this source reads (`None` for a literal).
    fn var(&self) -> Option<Var> {
        match self {
            Src::Var(v) => Some(*v),
            Src::Lit(_) => None,
        }
    }
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
        /// A small float product's kernel plan, made once.
        dot: Option<kernel::PackedDot>,
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

/// Bytes of a value's elements: the element count read from the shape
/// (no look into the buffer; the shape holds as many elements) times the
/// dtype's width.
#[inline]
pub fn value_bytes(h: &HostArray) -> usize {
    h.shape()
        .iter()
        .fold(h.dtype().itemsize(), |n, &d| n.saturating_mul(d))
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
    /// Per step, whether it is small enough to pass no checkpoint of its
    /// own (see [`QUIET_WORK`]).
    quiet: Vec<bool>,
    stats: PlanStats,
}

/// Most work (elements, multiply-adds of a product, elements times
/// instructions of a fusion group) of a step that passes no checkpoint of
/// its own: at most [`QUIET_RUN`] such steps run between checkpoints, so an
/// interrupt, cancellation or deadline waits a few milliseconds at most
/// longer, while a loop of small steps (a scan body) does not read the
/// clock at every step.
const QUIET_WORK: usize = 1 << 16;
/// Most consecutive quiet steps between two checkpoints.
const QUIET_RUN: u32 = 16;

/// Whether `step` of `jx` is quiet: an elementwise or small product
/// kernel, or a small fusion group.
fn is_quiet(jx: &Jaxpr, step: &Step) -> Result<bool> {
    let work = match step {
        Step::Fused(f) => f.work(),
        Step::Eqn { index, out, .. } => {
            let eqn = jx
                .eqns
                .get(*index)
                .ok_or_else(|| internal("equation index"))?;
            let elems =
                |a: &Atom| -> Result<usize> { Ok(jx.atom_aval(a)?.size().unwrap_or(usize::MAX)) };
            match (&eqn.prim, out) {
                (Primitive::Unary(_) | Primitive::Binary(_), Some(o)) => {
                    o.size().unwrap_or(usize::MAX)
                }
                (Primitive::DotGeneral(_), Some(o)) => {
                    // Output elements times the contracted length (the
                    // left operand's elements over its free ones bound it).
                    let l = eqn
                        .inputs
                        .first()
                        .map(elems)
                        .transpose()?
                        .unwrap_or(usize::MAX);
                    o.size().unwrap_or(usize::MAX).saturating_mul(l)
                }
                _ => return Ok(false),
            }
        }
    };
    Ok(work <= QUIET_WORK)
}

impl Compiled {
    /// Compiles `prog`.
    pub fn new(prog: Arc<ClosedJaxpr>) -> Result<Compiled> {
        let simple = simplify::simplify_folding(&prog)?;
        crate::array::budget::check_avals("compiled program", &simple.jaxpr.avals)?;
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
                    let dot = packed_dot(jx, eqn, out.as_ref())?;
                    steps.push(Step::Eqn {
                        index: i,
                        ins,
                        bodies,
                        out,
                        dot,
                    });
                }
            }
        }
        let frees = last_uses(jx, &steps);
        let quiet = steps
            .iter()
            .map(|s| is_quiet(jx, s))
            .collect::<Result<Vec<_>>>()?;
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
            quiet,
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

    /// Runs the plan on `args` in a context with the process-wide defaults.
    pub fn run(&self, args: &[Arc<HostArray>]) -> Result<Vec<Arc<HostArray>>> {
        self.run_in(&ExecCtx::current_default(), args)
    }

    /// Runs the plan on `args` in `ctx`.
    pub fn run_in(&self, ctx: &ExecCtx, args: &[Arc<HostArray>]) -> Result<Vec<Arc<HostArray>>> {
        ctx.enter(|| self.run_tracked(ctx, args, None))
    }

    /// Runs the plan and reports the memory it held (slower: it sums the
    /// live values after every step).
    pub fn run_profiled(&self, args: &[Arc<HostArray>]) -> Result<(Vec<Arc<HostArray>>, RunStats)> {
        let mut stats = RunStats::default();
        let ctx = ExecCtx::current_default();
        let outs = ctx.enter(|| self.run_tracked(&ctx, args, Some(&mut stats)))?;
        stats.arg_bytes = args.iter().map(|a| value_bytes(a)).sum();
        stats.out_bytes = outs.iter().map(|a| value_bytes(a)).sum();
        Ok((outs, stats))
    }

    fn run_tracked(
        &self, ctx: &ExecCtx, args: &[Arc<HostArray>], track: Option<&mut RunStats>,
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
        self.run_steps(ctx, &mut env, &self.frees, track, None, &[])?;
        jx.outvars
            .iter()
            .map(|a| match a {
                Atom::Var(v) => crate::exec::bound_value(&env, *v),
                Atom::Lit(l) => Ok(Arc::new(l.to_array()?)),
            })
            .collect()
    }
}

impl Compiled {
    /// Walks the plan on `env` (parameters bound), freeing after each step
    /// the values `frees` lists for it.
    /// `fixed` holds, per step, the packed loop-constant matrix of a
    /// matrix-vector step (a loop body's; empty otherwise).
    fn run_steps(
        &self, ctx: &ExecCtx, env: &mut [Option<Arc<HostArray>>], frees: &[Vec<Var>],
        mut track: Option<&mut RunStats>, mut spares: Option<&mut Spares>,
        fixed: &[Option<kernel::FixedMatrix>],
    ) -> Result<()> {
        let jx = &self.prog.jaxpr;
        let mut quiet_run = 0u32;
        for (at, (step, frees)) in self.steps.iter().zip(frees).enumerate() {
            if self.quiet.get(at).copied().unwrap_or(false) && quiet_run < QUIET_RUN {
                quiet_run = quiet_run.saturating_add(1);
                ctx.take_quiet_step()?;
            } else {
                quiet_run = 0;
                ctx.take_step()?;
            }
            match step {
                Step::Eqn {
                    index,
                    ins,
                    bodies,
                    out,
                    dot,
                } => {
                    let eqn = jx
                        .eqns
                        .get(*index)
                        .ok_or_else(|| internal("equation index"))?;
                    match (out, eqn.outputs.as_slice()) {
                        // One output: no list of results built per step.
                        (Some(aval), [v]) => {
                            let mut spare = spares.as_deref_mut().and_then(|s| s.take(at));
                            let plan = DotPlan {
                                dot: dot.as_ref(),
                                fixed: fixed.get(at).and_then(Option::as_ref),
                            };
                            let val = run_single(ctx, &eqn.prim, ins, aval, plan, env, &mut spare)?;
                            if let Some(h) = spare {
                                recycle::give(h);
                            }
                            *slot(env, *v)? = Some(val);
                        }
                        _ => {
                            let outs = run_eqn(ctx, &eqn.prim, ins, bodies, out.as_ref(), env)?;
                            crate::exec::check_output_count(eqn, outs.len())?;
                            for (v, val) in eqn.outputs.iter().zip(outs) {
                                *slot(env, *v)? = Some(val);
                            }
                        }
                    }
                }
                Step::Fused(f) => {
                    let outs = {
                        let reads = f
                            .reads()
                            .map(|v| read(env, v))
                            .collect::<Result<Vec<&HostArray>>>()?;
                        f.run(ctx, &reads)?
                    };
                    for (v, val) in f.writes().zip(outs) {
                        *slot(env, v)? = Some(val);
                    }
                }
            }
            if let Some(t) = track.as_deref_mut() {
                t.peak_bytes = t.peak_bytes.max(live_bytes(env));
            }
            for v in frees {
                if let Some(h) = slot(env, *v)?.take() {
                    match spares.as_deref_mut() {
                        Some(s) => s.give(*v, h),
                        None => recycle::give(h),
                    }
                }
            }
        }
        Ok(())
    }

    /// Checks argument `a` against parameter `v`.
    fn check_arg(&self, v: Var, a: &HostArray) -> Result<()> {
        let want = self.prog.jaxpr.aval(v)?;
        super::check_program_arg("compiled program", want, a.shape(), a.dtype())
    }

    /// The product steps whose left operand is loop-invariant (`is_fixed`
    /// per variable), with that operand: the candidates for
    /// [`kernel::PackedDot::fix_lhs`].
    fn fixed_matrix_steps(&self, is_fixed: &[bool]) -> Vec<(usize, Var)> {
        self.steps
            .iter()
            .enumerate()
            .filter_map(|(at, step)| match step {
                Step::Eqn {
                    ins, dot: Some(_), ..
                } => match ins.first() {
                    Some(Src::Var(v)) if is_fixed.get(v.index()).copied().unwrap_or(false) => {
                        Some((at, *v))
                    }
                    _ => None,
                },
                _ => None,
            })
            .collect()
    }

    /// The plan as a loop body whose first `fixed.len()` parameters keep
    /// the values `fixed` on every run (see [`Looped`]).
    pub fn looped(&self, fixed: &[Arc<HostArray>]) -> Result<Looped<'_>> {
        let jx = &self.prog.jaxpr;
        let (params, varying) = jx.invars.split_at_checked(fixed.len()).ok_or(Error::arity(
            "compiled program",
            jx.invars.len(),
            fixed.len(),
        ))?;
        let mut env = recycle::Env::acquire(jx.avals.len());
        let mut is_fixed = vec![false; jx.avals.len()];
        for (v, a) in params.iter().zip(fixed) {
            self.check_arg(*v, a)?;
        }
        let bound = jx
            .constvars
            .iter()
            .zip(&self.prog.consts)
            .chain(params.iter().zip(fixed));
        for (v, val) in bound {
            *slot(&mut env, *v)? = Some(val.clone());
            if let Some(f) = is_fixed.get_mut(v.index()) {
                *f = true;
            }
        }
        let keep = |v: &&Var| !is_fixed.get(v.index()).copied().unwrap_or(false);
        let frees = self
            .frees
            .iter()
            .map(|f| f.iter().filter(keep).copied().collect())
            .collect();
        // Each value's last place among the results (by variable).
        let mut last_place: Vec<usize> = vec![0; jx.avals.len()];
        for (i, a) in jx.outvars.iter().enumerate() {
            if let Atom::Var(v) = a {
                if let Some(p) = last_place.get_mut(v.index()) {
                    *p = i;
                }
            }
        }
        let results = jx
            .outvars
            .iter()
            .enumerate()
            .map(|(i, a)| match a {
                Atom::Var(v) if !is_fixed.get(v.index()).copied().unwrap_or(false) => {
                    // The value's last place among the results moves it out;
                    // an earlier one (a value returned twice) clones it.
                    Ok(if last_place.get(v.index()) == Some(&i) {
                        BodyOut::Last(*v)
                    } else {
                        BodyOut::Run(*v)
                    })
                }
                Atom::Var(v) => Ok(BodyOut::Fixed(*v)),
                Atom::Lit(l) => Ok(BodyOut::Lit(Arc::new(l.to_array()?))),
            })
            .collect::<Result<Vec<_>>>()?;
        let spares = Spares::plan(self, varying, &results)?;
        let fixed_lhs = self.fixed_matrix_steps(&is_fixed);
        Ok(Looped {
            plan: self,
            env,
            frees,
            varying,
            results,
            spares,
            fixed_lhs,
            fixed: Vec::new(),
            runs: 0,
        })
    }
}

/// A loop body's arrays kept from run to run: the value of a single-output
/// kernel step, once freed, comes back to that step, and a varying
/// parameter (a carry), once read, to the step computing the result in its
/// place, so the body's steps write into the same few arrays every
/// iteration without going through the thread's bin.
#[derive(Debug, Default)]
struct Spares {
    /// Per variable, the step whose array its value becomes once freed.
    home: Vec<Option<usize>>,
    /// Per step, the array kept for it.
    kept: Vec<Option<Arc<HostArray>>>,
    /// Bytes of the kept arrays (at most [`SPARE_BYTES`]).
    held: usize,
}

/// Most bytes a loop body keeps in its step arrays: small arrays only (at
/// most [`recycle::MAX_BYTES`] each), as many as the thread's bin holds, so
/// a body of many large steps holds no more memory than without them.
const SPARE_BYTES: usize = recycle::MAX_BYTES * recycle::CAPACITY;

impl Spares {
    /// Which step each freed value goes back to: a kernel step's own
    /// output, and the varying parameter in the place of such an output
    /// among the results when the two have the same type.
    fn plan(plan: &Compiled, varying: &[Var], results: &[BodyOut]) -> Result<Spares> {
        let jx = &plan.prog.jaxpr;
        let mut home: Vec<Option<usize>> = vec![None; jx.avals.len()];
        for (at, step) in plan.steps.iter().enumerate() {
            if let Step::Eqn {
                index,
                out: Some(_),
                ..
            } = step
            {
                let eqn = jx
                    .eqns
                    .get(*index)
                    .ok_or_else(|| internal("equation index"))?;
                if let [w] = eqn.outputs.as_slice() {
                    if let Some(h) = home.get_mut(w.index()) {
                        *h = Some(at);
                    }
                }
            }
        }
        for (p, r) in varying.iter().zip(results) {
            let (BodyOut::Run(w) | BodyOut::Last(w)) = r else {
                continue;
            };
            let step = home.get(w.index()).copied().flatten();
            if step.is_some() && jx.aval(*p)? == jx.aval(*w)? {
                if let Some(h) = home.get_mut(p.index()) {
                    *h = step;
                }
            }
        }
        Ok(Spares {
            home,
            kept: plan.steps.iter().map(|_| None).collect(),
            held: 0,
        })
    }

    /// The array kept for step `at`, if any.
    fn take(&mut self, at: usize) -> Option<Arc<HostArray>> {
        let h = self.kept.get_mut(at).and_then(Option::take)?;
        self.held = self.held.saturating_sub(value_bytes(&h));
        Some(h)
    }

    /// Keeps the freed value of `v` for its step when the bin could keep it
    /// ([`recycle::reusable`]), there is room and the step has none; else
    /// the bin decides.
    fn give(&mut self, v: Var, h: Arc<HostArray>) {
        let bytes = value_bytes(&h);
        let keep = recycle::reusable(&h) && self.held.saturating_add(bytes) <= SPARE_BYTES;
        let slot = self
            .home
            .get(v.index())
            .copied()
            .flatten()
            .and_then(|at| self.kept.get_mut(at));
        match slot {
            Some(slot) if keep && slot.is_none() => {
                self.held = self.held.saturating_add(bytes);
                *slot = Some(h);
            }
            _ => recycle::give(h),
        }
    }
}

impl Drop for Spares {
    /// The kept arrays go to the thread's bin: the next run of the loop
    /// (the next call of the program) starts with them.
    fn drop(&mut self) {
        self.kept.drain(..).flatten().for_each(recycle::give);
    }
}

/// Where a loop body's result comes from.
#[derive(Debug)]
enum BodyOut {
    /// A value of this run returned again by a later result (cloned).
    Run(Var),
    /// A value of this run at its last place among the results (moved
    /// out: no reference count traffic per run).
    Last(Var),
    /// A loop-invariant value (a fixed parameter or a constant).
    Fixed(Var),
    /// A literal.
    Lit(Arc<HostArray>),
}

/// A plan run as a loop body (`scan`, `while`): the loop-invariant
/// parameters (the loop's consts) and the plan's constants are bound once,
/// the value table is kept across runs, and each run binds only the varying
/// parameters (carries, rows of `xs`), checks them, walks the steps and
/// moves the results out. Values are freed after their last reader as in
/// [`Compiled::run`], so a carry given to a run is recycled as soon as the
/// run has read it, and its buffer holds a result of the same run.
pub struct Looped<'p> {
    plan: &'p Compiled,
    env: recycle::Env,
    /// Per step, the values to free (never a fixed one).
    frees: Vec<Vec<Var>>,
    varying: &'p [Var],
    results: Vec<BodyOut>,
    spares: Spares,
    /// The matrix-vector steps whose matrix is loop-invariant (step,
    /// matrix variable).
    fixed_lhs: Vec<(usize, Var)>,
    /// Per step, its packed matrix ([`kernel::FixedMatrix`]); packed at
    /// the second run, so a body run once packs nothing.
    fixed: Vec<Option<kernel::FixedMatrix>>,
    runs: u32,
}

impl Looped<'_> {
    /// Runs the body with `vary` (drained) as its varying parameters,
    /// appending the results to `outs`.
    pub fn run(
        &mut self, ctx: &ExecCtx, vary: &mut Vec<Arc<HostArray>>, outs: &mut Vec<Arc<HostArray>>,
    ) -> Result<()> {
        let ran = self.run_once(ctx, vary, outs);
        self.unbind();
        ran
    }

    fn run_once(
        &mut self, ctx: &ExecCtx, vary: &mut Vec<Arc<HostArray>>, outs: &mut Vec<Arc<HostArray>>,
    ) -> Result<()> {
        let varying = self.varying;
        Error::check_count("compiled program", varying.len(), vary.len())?;
        if self.runs == 1 {
            self.pack_fixed_matrices()?;
        }
        self.runs = self.runs.saturating_add(1);
        for (v, a) in varying.iter().zip(vary.drain(..)) {
            self.plan.check_arg(*v, &a)?;
            *slot(&mut self.env, *v)? = Some(a);
        }
        self.plan.run_steps(
            ctx,
            &mut self.env,
            &self.frees,
            None,
            Some(&mut self.spares),
            &self.fixed,
        )?;
        for r in &self.results {
            outs.push(match r {
                // Cloned, not taken: a value may be returned twice.
                BodyOut::Run(v) | BodyOut::Fixed(v) => crate::exec::bound_value(&self.env, *v)?,
                BodyOut::Last(v) => slot(&mut self.env, *v)?.take().ok_or_else(|| unbound(*v))?,
                BodyOut::Lit(h) => h.clone(),
            });
        }
        Ok(())
    }

    /// Packs the loop-invariant matrix of each matrix-vector step whose
    /// plan takes one ([`kernel::PackedDot::fix_lhs`]).
    fn pack_fixed_matrices(&mut self) -> Result<()> {
        if self.fixed_lhs.is_empty() {
            return Ok(());
        }
        self.fixed = self.plan.steps.iter().map(|_| None).collect();
        for &(at, v) in &self.fixed_lhs {
            let (Some(Step::Eqn { dot: Some(d), .. }), Some(slot)) =
                (self.plan.steps.get(at), self.fixed.get_mut(at))
            else {
                continue;
            };
            *slot = d.fix_lhs(read(&self.env, v)?);
        }
        Ok(())
    }

    /// Unbinds what the last run left bound (parameters no step read,
    /// results handed out), also after an error, so the results are the
    /// caller's alone.
    fn unbind(&mut self) {
        let run_vars = self.results.iter().filter_map(|r| match r {
            BodyOut::Run(v) | BodyOut::Last(v) => Some(v),
            _ => None,
        });
        for v in self.varying.iter().chain(run_vars) {
            if let Some(s) = self.env.get_mut(v.index()) {
                *s = None;
            }
        }
    }
}

impl Runner for Compiled {
    fn run_in(&self, ctx: &ExecCtx, args: &[Arc<HostArray>]) -> Result<Vec<Arc<HostArray>>> {
        Compiled::run_in(self, ctx, args)
    }

    fn as_compiled(&self) -> Option<&Compiled> {
        Some(self)
    }
}

fn internal(what: &str) -> Error {
    Error::InvalidArgument(format!("compiled plan: {what}"))
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
    ctx: &ExecCtx, prim: &Primitive, ins: &[Src], bodies: &[Compiled], out: Option<&Aval>,
    env: &[Option<Arc<HostArray>>],
) -> Result<Vec<Arc<HostArray>>> {
    let shared = || -> Result<Vec<Arc<HostArray>>> {
        ins.iter()
            .map(|s| match s {
                Src::Var(v) => crate::exec::bound_value(env, *v),
                Src::Lit(h) => Ok(h.clone()),
            })
            .collect()
    };
    match prim {
        Primitive::Control(c) => {
            let runners: Vec<&dyn Runner> = bodies.iter().map(|b| b as &dyn Runner).collect();
            crate::prims::control::eval_with(ctx, c, &shared()?, &runners)
        }
        Primitive::Callback(c) => crate::prims::callback::eval(c, &shared()?),
        Primitive::Pjit(Pjit { jaxpr, .. }) | Primitive::Checkpoint(Checkpoint { jaxpr, .. }) => {
            super::interp::eval_closed_in(ctx, jaxpr, &shared()?)
        }
        prim => run_kernel(ctx, prim, ins, out, env),
    }
}

/// An equation run by its kernel into fresh arrays.
fn run_kernel(
    ctx: &ExecCtx, prim: &Primitive, ins: &[Src], out: Option<&Aval>,
    env: &[Option<Arc<HostArray>>],
) -> Result<Vec<Arc<HostArray>>> {
    let refs = ins
        .iter()
        .map(|s| src(env, s))
        .collect::<Result<Vec<&HostArray>>>()?;
    let outs = match out {
        Some(a) => kernel::eval_known(ctx, prim, &refs, Some(a.clone()), Vec::new())?,
        None => kernel::eval(ctx, prim, &refs)?,
    };
    Ok(outs.into_iter().map(Arc::new).collect())
}

/// A single-output kernel equation: small float products and unary ops
/// write into a recycled array when the bin has one, the rest run their
/// kernel.
/// Smallest operand a reshape or squeeze views instead of copying.
const VIEW_MIN_BYTES: usize = 256 << 10;

/// A product step's plans: the planned small kernel, and the packed
/// loop-constant matrix of a loop body's matrix-vector step.
#[derive(Clone, Copy)]
struct DotPlan<'a> {
    dot: Option<&'a kernel::PackedDot>,
    fixed: Option<&'a kernel::FixedMatrix>,
}

fn run_single(
    ctx: &ExecCtx, prim: &Primitive, ins: &[Src], out: &Aval, plan: DotPlan<'_>,
    env: &[Option<Arc<HostArray>>], spare: &mut Option<Arc<HostArray>>,
) -> Result<Arc<HostArray>> {
    let DotPlan { dot, fixed } = plan;
    // A large reshape or squeeze reads its operand's elements in place (a
    // view keeping the operand alive) instead of copying them; small ones
    // copy, so recycled loop arrays stay reusable.
    if let (Primitive::Reshape(_) | Primitive::Squeeze(_), [Src::Var(v)]) = (prim, ins) {
        let x = crate::exec::bound_value(env, *v)?;
        if value_bytes(&x) >= VIEW_MIN_BYTES {
            return Ok(Arc::new(crate::array::foreign::view(
                &x,
                out.shape.clone(),
            )?));
        }
    }
    let recycled = match (prim, ins) {
        (Primitive::DotGeneral(DotGeneral { .. }), [l, r]) if dot.is_some() => {
            let (l, r) = (src(env, l)?, src(env, r)?);
            into_recycled(out, spare, |buf| match (fixed, dot) {
                (Some(f), _) if f.run_into(ctx, r, buf) => Ok(true),
                (_, Some(d)) => d.run_into(ctx, l, r, buf),
                _ => Ok(false),
            })?
        }
        (
            Primitive::DotGeneral(DotGeneral {
                dims,
                preferred_element_type,
            }),
            [l, r],
        ) => {
            let (l, r) = (src(env, l)?, src(env, r)?);
            into_recycled(out, spare, |buf| {
                kernel::dot_general_into(ctx, l, r, dims, *preferred_element_type, buf)
            })?
        }
        (Primitive::Binary(op), [a, b]) => {
            let (a, b) = (src(env, a)?, src(env, b)?);
            if binary_fits(a, b, out) {
                into_recycled(out, spare, |buf| Ok(binary_into(*op, a, b, buf)))?
            } else {
                None
            }
        }
        (Primitive::Unary(op), [x]) => {
            let x = src(env, x)?;
            if unary_fits(*op, x, out) {
                into_recycled(out, spare, |buf| Ok(unary_into(*op, x, buf)))?
            } else {
                None
            }
        }
        _ => None,
    };
    if let Some(h) = recycled {
        return Ok(h);
    }
    let mut outs = run_eqn(ctx, prim, ins, &[], Some(out), env)?;
    match (outs.pop(), outs.is_empty()) {
        (Some(h), true) => Ok(h),
        _ => Err(Error::arity(prim.name(), 1, outs.len().saturating_add(1))),
    }
}

/// A value of type `out` written by `write` into a recycled array (the
/// step's `spare` in a loop body, else one from the bin), when there is one
/// of its size and `write` applies (it returns `false`, leaving
/// the buffer untouched, when it does not). `None`: the caller takes the
/// kernel's allocating path.
fn into_recycled(
    out: &Aval, spare: &mut Option<Arc<HostArray>>,
    write: impl FnOnce(&mut crate::array::Buffer) -> Result<bool>,
) -> Result<Option<Arc<HostArray>>> {
    // A step's spare holds the step's own type (planned so); checked
    // anyway, as the bin's arrays are.
    let kept = spare
        .take()
        .filter(|h| h.dtype() == out.dtype && h.has_shape(&out.shape));
    let Some(mut dst) = kept.or_else(|| recycle::take(out.dtype, &out.shape)) else {
        return Ok(None);
    };
    let written = match Arc::get_mut(&mut dst) {
        Some(h) => write(h.buffer_mut())?,
        None => false,
    };
    if written {
        return Ok(Some(dst));
    }
    recycle::give(dst);
    Ok(None)
}

/// Whether `op(x)` of type `out` runs on a `vmath` kernel: f32 or f64 `x`
/// of the output's type and shape. The reference kernel computes these ops
/// with the same `vmath` function, so the bits are the same.
fn unary_fits(op: crate::prims::UnaryOp, x: &HostArray, out: &Aval) -> bool {
    use crate::prims::kernel::slices;
    slices::supports_unary(op)
        && matches!(
            out.dtype,
            crate::dtype::DType::F32 | crate::dtype::DType::F64
        )
        && x.dtype() == out.dtype
        && same_dims(x.shape(), &out.shape)
}

/// Whether `a op b` of type `out` has an in-place path: operands of the
/// output's dtype (f32, f64, i32 or i64), each of the output's shape or a
/// scalar.
fn binary_fits(a: &HostArray, b: &HostArray, out: &Aval) -> bool {
    use crate::dtype::DType;
    let fits = |x: &HostArray| {
        x.dtype() == out.dtype && (x.shape().is_empty() || same_dims(x.shape(), &out.shape))
    };
    matches!(out.dtype, DType::F32 | DType::F64 | DType::I32 | DType::I64) && fits(a) && fits(b)
}

/// `out = a op b` by the slice kernels (floats: the reference kernels'
/// per-element functions) or the integer kernel; `false` when `op` has no
/// such path.
fn binary_into(
    op: crate::prims::BinaryOp, a: &HostArray, b: &HostArray, out: &mut crate::array::Buffer,
) -> bool {
    use crate::array::Buffer;
    use crate::prims::kernel::slices::{self, Lane, Operand};
    /// A full-length operand read in place, a one-element one splatted.
    fn operand<T: Lane>(v: &[T], n: usize) -> Option<Operand<'_, T>> {
        match v {
            [x] if n != 1 => Some(Operand::Splat(*x)),
            _ if v.len() == n => Some(Operand::Slice(v)),
            _ => None,
        }
    }
    fn floats<T: Lane>(op: crate::prims::BinaryOp, a: &[T], b: &[T], o: &mut [T]) -> bool {
        match (operand(a, o.len()), operand(b, o.len())) {
            (Some(a), Some(b)) => slices::binary(op, a, b, o),
            _ => false,
        }
    }
    match (a.buffer(), b.buffer(), out) {
        (Buffer::F32(x), Buffer::F32(y), Buffer::F32(o)) => floats(op, x, y, o),
        (Buffer::F64(x), Buffer::F64(y), Buffer::F64(o)) => floats(op, x, y, o),
        (x, y, o) => kernel::int_binary_into(op, x, y, o),
    }
}

/// `out = op(x)` by the `vmath` kernel; `false` when it does not apply.
fn unary_into(op: crate::prims::UnaryOp, x: &HostArray, out: &mut crate::array::Buffer) -> bool {
    use crate::array::Buffer;
    use crate::prims::kernel::slices::{self, Operand};
    match (x.buffer(), out) {
        (Buffer::F32(v), Buffer::F32(o)) => slices::unary(op, Operand::Slice(v), o),
        (Buffer::F64(v), Buffer::F64(o)) => slices::unary(op, Operand::Slice(v), o),
        _ => false,
    }
}

/// The register-kernel plan of a float `dot_general` equation computed in
/// the operands' type, when its operands are used in place.
fn packed_dot(
    jx: &Jaxpr, eqn: &crate::ir::Eqn, out: Option<&Aval>,
) -> Result<Option<kernel::PackedDot>> {
    let (
        Primitive::DotGeneral(DotGeneral {
            dims,
            preferred_element_type,
        }),
        [l, r],
        Some(out),
    ) = (&eqn.prim, eqn.inputs.as_slice(), out)
    else {
        return Ok(None);
    };
    let (la, ra) = (jx.atom_aval(l)?, jx.atom_aval(r)?);
    let float = matches!(
        out.dtype,
        crate::dtype::DType::F32 | crate::dtype::DType::F64
    );
    let same = la.dtype == out.dtype
        && ra.dtype == out.dtype
        && preferred_element_type.is_none_or(|p| p == out.dtype);
    Ok((float && same)
        .then(|| kernel::PackedDot::new(&la.shape, &ra.shape, dims))
        .flatten())
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
            Step::Eqn { ins, .. } => ins.iter().filter_map(Src::var).collect(),
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
