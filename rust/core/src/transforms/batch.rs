//! Batching (vmap) of a closed jaxpr.
//!
//! Every value of the program carries an optional batch dim: `Some(d)` when
//! it depends on a batched input (its aval has the mapped axis, of size
//! `axis_size`, at `d`), `None` otherwise. Unbatched values stay unbatched
//! (no broadcast unless a rule needs one), equations with no batched operand
//! are copied unchanged, batched ones go through the primitive's batching
//! rule ([`crate::prims::Primitive::batch`]), which moves batch dims only
//! where it must. Outputs are moved (or broadcast) to the requested dims at
//! the end. Consts stay consts.
//!
//! Named axes: [`batch_jaxpr_named`] batches the axis called `axis_name`,
//! so collectives over it (`psum(x, 'i')`) become array code over the batch
//! dim, and an equation naming it is batched even when no operand is (an
//! `axis_index('i')`, a `pjit` calling one). Sub-jaxprs batched by a rule
//! (`pjit`, custom calls) inherit the axis of the enclosing call: the name
//! is held in a per-thread scope for the duration of the call, as JAX's
//! axis environment, so rules need not carry it.

use crate::error::{Error, Result};
use crate::ir::builder::Builder;
use crate::ir::display::transform_source;
use crate::ir::{Atom, Aval, ClosedJaxpr, Eqn, Var};
use crate::prims::batch::{add_batch_axis, insert_axis, move_axis};
use crate::prims::collective::mentions_axis;
use std::cell::RefCell;

thread_local! {
    /// Axis names of the `batch_jaxpr` calls running on this thread, innermost last.
    static AXIS_NAMES: RefCell<Vec<Option<String>>> = const { RefCell::new(Vec::new()) };
}

/// The name of the axis the innermost running `batch_jaxpr` call batches.
pub(crate) fn current_axis_name() -> Option<String> {
    AXIS_NAMES.with(|s| s.borrow().last().cloned().flatten())
}

/// Keeps `name` as the current axis name until dropped (also on error).
struct AxisScope;

impl AxisScope {
    fn enter(name: Option<String>) -> AxisScope {
        AXIS_NAMES.with(|s| s.borrow_mut().push(name));
        AxisScope
    }
}

impl Drop for AxisScope {
    fn drop(&mut self) {
        AXIS_NAMES.with(|s| {
            s.borrow_mut().pop();
        });
    }
}

/// Whether the equation of `p` must be batched although no operand is: it
/// names the axis being batched.
pub(crate) fn names_current_axis(p: &crate::prims::Primitive) -> bool {
    current_axis_name().is_some_and(|a| mentions_axis(p, &a))
}

/// Batches a closed jaxpr.
///
/// `in_dims[i] = Some(d)`: input `i` carries the batch axis at position `d`
/// (its aval in the result has an axis of size `axis_size` inserted there);
/// `None`: input `i` is unbatched (same aval). `out_dims[j] = Some(d)`:
/// output `j` is produced with the batch axis at `d` (an output that does not
/// depend on a batched input is broadcast); `None`: output `j` must be
/// unbatched, and it is an [`Error::InvalidArgument`] ("vmap has mapped
/// output but out_axes is None") when it depends on a batched input.
///
/// The axis is unnamed, or, when called from a batching rule, the axis of
/// the enclosing call.
pub fn batch_jaxpr(
    j: &ClosedJaxpr, in_dims: &[Option<usize>], axis_size: usize, out_dims: &[Option<usize>],
) -> Result<ClosedJaxpr> {
    let (out, _) = batch_impl(j, in_dims, axis_size, Some(out_dims))?;
    Ok(out)
}

/// [`batch_jaxpr`] of the axis called `axis_name` (vmap's `axis_name`):
/// collectives over it are batched into array code; collectives over other
/// names are kept, batched, for an enclosing map. `None` is an unnamed axis.
pub fn batch_jaxpr_named(
    j: &ClosedJaxpr, in_dims: &[Option<usize>], axis_size: usize, axis_name: Option<&str>,
    out_dims: &[Option<usize>],
) -> Result<ClosedJaxpr> {
    let _scope = AxisScope::enter(axis_name.map(str::to_string));
    let (out, _) = batch_impl(j, in_dims, axis_size, Some(out_dims))?;
    Ok(out)
}

/// Batches a closed jaxpr leaving each output where the program puts it:
/// returns the batched program and the batch dim of each output (`None`
/// for outputs that do not depend on a batched input, which stay
/// unbatched). Used for sub-jaxprs (`pjit`).
pub fn batch_jaxpr_natural(
    j: &ClosedJaxpr, in_dims: &[Option<usize>], axis_size: usize,
) -> Result<(ClosedJaxpr, Vec<Option<usize>>)> {
    batch_impl(j, in_dims, axis_size, None)
}

fn batch_impl(
    j: &ClosedJaxpr, in_dims: &[Option<usize>], axis_size: usize,
    out_dims: Option<&[Option<usize>]>,
) -> Result<(ClosedJaxpr, Vec<Option<usize>>)> {
    check_batch_args(j, in_dims, out_dims)?;
    let jaxpr = &j.jaxpr;
    let mut b = Builder::new();
    let mut env = BatchEnv {
        slots: vec![None; jaxpr.avals.len()],
    };
    env.bind_inputs(&mut b, j, in_dims, axis_size)?;
    for eqn in &jaxpr.eqns {
        env.batch_eqn(&mut b, eqn, axis_size)?;
    }
    let mut outs = Vec::with_capacity(jaxpr.outvars.len());
    let mut final_dims = Vec::with_capacity(jaxpr.outvars.len());
    for (i, a) in jaxpr.outvars.iter().enumerate() {
        let (x, d) = env.read(a)?;
        let want = match out_dims {
            None => d,
            Some(od) => od.get(i).copied().flatten(),
        };
        let y = place_output(&mut b, i, x, d, want, out_dims.is_some(), axis_size)?;
        outs.push(y);
        final_dims.push(want);
    }
    let result = b.finish(outs)?;
    #[cfg(debug_assertions)]
    crate::ir::typecheck::typecheck(&result)?;
    Ok((result, final_dims))
}

/// Checks the numbers of in/out dims and of consts against the program.
fn check_batch_args(
    j: &ClosedJaxpr, in_dims: &[Option<usize>], out_dims: Option<&[Option<usize>]>,
) -> Result<()> {
    let jaxpr = &j.jaxpr;
    if in_dims.len() != jaxpr.invars.len() {
        return Err(Error::InvalidArgument(format!(
            "vmap: {} in_axes given for a function of {} inputs",
            in_dims.len(),
            jaxpr.invars.len()
        )));
    }
    if let Some(od) = out_dims {
        if od.len() != jaxpr.outvars.len() {
            return Err(Error::InvalidArgument(format!(
                "vmap: {} out_axes given for a function of {} outputs",
                od.len(),
                jaxpr.outvars.len()
            )));
        }
    }
    if j.consts.len() != jaxpr.constvars.len() {
        return Err(Error::Typecheck(format!(
            "{} consts given for {} constvars",
            j.consts.len(),
            jaxpr.constvars.len()
        )));
    }
    Ok(())
}

/// New atom and batch dim of every variable of the source program.
struct BatchEnv {
    slots: Vec<Option<(Atom, Option<usize>)>>,
}

impl BatchEnv {
    fn bind(&mut self, v: Var, val: (Atom, Option<usize>)) -> Result<()> {
        let slot = self
            .slots
            .get_mut(v.index())
            .ok_or_else(|| Error::UnboundVar(format!("#{}", v.0)))?;
        *slot = Some(val);
        Ok(())
    }

    fn read(&self, a: &Atom) -> Result<(Atom, Option<usize>)> {
        match a {
            Atom::Lit(l) => Ok((Atom::Lit(l.clone()), None)),
            Atom::Var(v) => self
                .slots
                .get(v.index())
                .and_then(|s| s.clone())
                .ok_or_else(|| Error::UnboundVar(format!("#{}", v.0))),
        }
    }

    /// Binds the consts (unbatched) and the inputs (with the batch axis
    /// inserted at their in dim) of `j` to new variables of `b`.
    fn bind_inputs(
        &mut self, b: &mut Builder, j: &ClosedJaxpr, in_dims: &[Option<usize>], axis_size: usize,
    ) -> Result<()> {
        let jaxpr = &j.jaxpr;
        for (v, c) in jaxpr.constvars.iter().zip(&j.consts) {
            let weak = jaxpr.aval(*v)?.weak_type;
            let nv = b.add_const(c.clone(), weak)?;
            self.bind(*v, (Atom::Var(nv), None))?;
        }
        for (i, (v, d)) in jaxpr.invars.iter().zip(in_dims).enumerate() {
            let aval = jaxpr.aval(*v)?;
            let new_aval = match d {
                None => aval.clone(),
                Some(d) => {
                    if *d > aval.ndim() {
                        return Err(Error::InvalidArgument(format!(
                            "vmap: in_axes {d} is out of bounds for input {i} of rank {} \
                             (it would have rank {} with the mapped axis)",
                            aval.ndim(),
                            aval.ndim().saturating_add(1)
                        )));
                    }
                    Aval::weak(
                        insert_axis(&aval.shape, *d, axis_size),
                        aval.dtype,
                        aval.weak_type,
                    )
                }
            };
            let nv = b.add_input(new_aval)?;
            self.bind(*v, (Atom::Var(nv), *d))?;
        }
        Ok(())
    }

    /// Emits `eqn` into `b`: copied when no operand is batched (and it does
    /// not name the axis), through its primitive's batching rule otherwise.
    fn batch_eqn(&mut self, b: &mut Builder, eqn: &Eqn, axis_size: usize) -> Result<()> {
        let mut ins = Vec::with_capacity(eqn.inputs.len());
        let mut dims = Vec::with_capacity(eqn.inputs.len());
        for a in &eqn.inputs {
            let (x, d) = self.read(a)?;
            ins.push(x);
            dims.push(d);
        }
        let (outs, odims) = if dims.iter().all(Option::is_none) && !names_current_axis(&eqn.prim) {
            let source = transform_source(&eqn.source.0, "vmap", true);
            let vs = b.add_eqn(eqn.prim.clone(), ins, source)?;
            let n = vs.len();
            (vs.into_iter().map(Atom::Var).collect(), vec![None; n])
        } else {
            let start = b.num_eqns();
            let r = eqn.prim.batch(b, &ins, &dims, axis_size)?;
            b.set_source_since(start, &transform_source(&eqn.source.0, "vmap", true));
            r
        };
        if outs.len() != eqn.outputs.len() || odims.len() != eqn.outputs.len() {
            return Err(Error::arity(eqn.prim.name(), eqn.outputs.len(), outs.len()));
        }
        for ((v, x), d) in eqn.outputs.iter().zip(outs).zip(odims) {
            self.bind(*v, (x, d))?;
        }
        Ok(())
    }
}

/// Output `i` (`x`, batched at `d`) moved or broadcast to the requested dim
/// `want`; `strict` (out dims were given): a batched output requested
/// unbatched is an error.
fn place_output(
    b: &mut Builder, i: usize, x: Atom, d: Option<usize>, want: Option<usize>, strict: bool,
    axis_size: usize,
) -> Result<Atom> {
    Ok(match (want, d) {
        (None, None) => x,
        (None, Some(_)) => {
            if strict {
                return Err(Error::InvalidArgument(format!(
                    "vmap has mapped output but out_axes is None (output {i})"
                )));
            }
            x
        }
        (Some(t), Some(d)) => {
            let rank = b.aval(&x)?.ndim();
            if t >= rank {
                return Err(out_of_bounds(i, t, rank));
            }
            move_axis(b, x, d, t)?
        }
        (Some(t), None) => {
            let rank = b.aval(&x)?.ndim().saturating_add(1);
            if t >= rank {
                return Err(out_of_bounds(i, t, rank));
            }
            add_batch_axis(b, x, axis_size, t)?
        }
    })
}

fn out_of_bounds(i: usize, t: usize, rank: usize) -> Error {
    Error::InvalidArgument(format!(
        "vmap: out_axes {t} is out of bounds for output {i} of rank {rank} (with the mapped axis)"
    ))
}
