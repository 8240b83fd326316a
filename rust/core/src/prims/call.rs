//! Call primitives: `pjit` (a nested `jit`) and `checkpoint`
//! (`jax.checkpoint`/`remat`). Both call a closed sub-jaxpr and share every
//! rule: the callee is evaluated, differentiated, transposed or batched as a
//! whole and called again.

use super::family::{
    arity_error, check_param_types, emit, known_atoms, BatchOut, Family, JvpOut, Operand,
    TransposeOut,
};
use super::kernel::shared_call;
use super::params::Param;
use super::Primitive;
use crate::array::HostArray;
use crate::error::{Error, Result};
use crate::exec::interp::eval_closed_in;
use crate::exec::ExecCtx;
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval, ClosedJaxpr, Effect};
use std::sync::Arc;

crate::declare_params! {
    /// A call of a closed sub-jaxpr (nested `jit`).
    pub struct Pjit {
        jaxpr: Arc<ClosedJaxpr>,
        name: String = String::new(),
    }
}

crate::declare_params! {
    /// `jax.checkpoint`: a call whose intermediate values are recomputed in
    /// the backward pass instead of being saved as residuals.
    pub struct Checkpoint {
        const differentiated = Param::Bool(false),
        jaxpr: Arc<ClosedJaxpr>,
        policy: super::remat::RematPolicy = super::remat::RematPolicy::Nothing,
        prevent_cse: bool = true,
    }
}

/// What `pjit` and `checkpoint` share: a call of a closed sub-jaxpr, whose
/// rules are the callee's (evaluated, differentiated, transposed or batched
/// as a whole and called again).
trait CallOf: Family + Clone {
    /// The callee.
    fn callee(&self) -> &Arc<ClosedJaxpr>;
    /// The same call around another callee, recording `transform`
    /// (`jvp`, `transpose`; empty: none) where the primitive shows it.
    fn around(&self, jaxpr: Arc<ClosedJaxpr>, transform: &str) -> Self;
}

impl CallOf for Pjit {
    fn callee(&self) -> &Arc<ClosedJaxpr> {
        &self.jaxpr
    }

    /// A `pjit`'s name records the transform (`jvp(f)`).
    fn around(&self, jaxpr: Arc<ClosedJaxpr>, transform: &str) -> Pjit {
        let name = if transform.is_empty() {
            self.name.clone()
        } else {
            format!("{transform}({})", self.name)
        };
        Pjit { jaxpr, name }
    }
}

impl CallOf for Checkpoint {
    fn callee(&self) -> &Arc<ClosedJaxpr> {
        &self.jaxpr
    }

    fn around(&self, jaxpr: Arc<ClosedJaxpr>, _transform: &str) -> Checkpoint {
        Checkpoint {
            jaxpr,
            policy: self.policy.clone(),
            prevent_cse: self.prevent_cse,
        }
    }
}

impl Primitive {
    /// The callee of a call primitive (`pjit`, `checkpoint`).
    pub fn call_jaxpr(&self) -> Option<&Arc<ClosedJaxpr>> {
        match self {
            Primitive::Pjit(f) => Some(f.callee()),
            Primitive::Checkpoint(f) => Some(f.callee()),
            _ => None,
        }
    }

    /// The same call primitive around another callee; a `pjit`'s name
    /// records the transform (`jvp(f)`) when `transform` is not empty.
    pub fn with_callee(&self, jaxpr: Arc<ClosedJaxpr>, transform: &str) -> Option<Primitive> {
        match self {
            Primitive::Pjit(f) => Some(Primitive::Pjit(f.around(jaxpr, transform))),
            Primitive::Checkpoint(f) => Some(Primitive::Checkpoint(f.around(jaxpr, transform))),
            _ => None,
        }
    }
}

/// The shape rule: operands of the callee's parameter types; the callee's
/// output types.
fn call_abstract_eval(name: &'static str, jaxpr: &ClosedJaxpr, ins: &[Aval]) -> Result<Vec<Aval>> {
    check_param_types(name, &jaxpr.in_avals()?, ins)?;
    jaxpr.out_avals()
}

/// The kernel: the callee evaluated (in the same execution context) on
/// shared copies of the operands.
fn call_kernel(
    name: &'static str, jaxpr: &ClosedJaxpr, ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
) -> Result<Vec<HostArray>> {
    shared_call(name, args, outs, |a| eval_closed_in(ctx, jaxpr, a))
}

/// JVP: a new call of the JVP of the callee, taking the primals and the
/// present tangents and returning the primal outputs and present tangents.
fn call_jvp<F: CallOf>(f: &F, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut
where
    Primitive: From<F>,
{
    let name = f.name();
    if xs.len() != ts.len() {
        return Err(arity_error(name, xs.len(), ts.len()));
    }
    let nonzeros: Vec<bool> = ts.iter().map(Option::is_some).collect();
    let (sub, out_nz) = crate::transforms::jvp::jvp_jaxpr(f.callee(), &nonzeros, false)?;
    let mut ins = xs.to_vec();
    ins.extend(ts.iter().flatten().cloned());
    let outs = emit(b, f.around(Arc::new(sub), "jvp"), ins)?;
    let n = out_nz.len();
    let (prim_outs, tan_outs) = outs
        .split_at_checked(n)
        .ok_or(arity_error(name, n, outs.len()))?;
    let mut tan_iter = tan_outs.iter();
    let mut tangents = Vec::with_capacity(n);
    for nz in out_nz {
        tangents.push(if nz { tan_iter.next().cloned() } else { None });
    }
    Ok((prim_outs.to_vec(), tangents))
}

/// Transpose: a new call of the transposed callee, taking the known
/// operands and the cotangent of every output, returning the linear
/// operands' cotangents.
fn call_transpose<F: CallOf>(
    f: &F, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand],
) -> TransposeOut
where
    Primitive: From<F>,
{
    let jaxpr = f.callee();
    let linear: Vec<bool> = ops.iter().map(Operand::is_linear).collect();
    let sub = crate::transforms::transpose::transpose_jaxpr(jaxpr, &linear)?;
    let out_avals = jaxpr.out_avals()?;
    if out_avals.len() != cts.len() {
        return Err(arity_error(f.name(), out_avals.len(), cts.len()));
    }
    let mut ins = known_atoms(ops);
    for (c, aval) in cts.iter().zip(&out_avals) {
        ins.push(match c {
            Some(c) => c.clone(),
            None => b.zeros(aval)?,
        });
    }
    let outs = emit(b, f.around(Arc::new(sub), "transpose"), ins)?;
    let mut it = outs.into_iter();
    let mut res = Vec::with_capacity(ops.len());
    for o in ops {
        res.push(if o.is_linear() {
            Some(it.next().ok_or(Error::arity(
                "pjit",
                linear.iter().filter(|l| **l).count(),
                0,
            ))?)
        } else {
            None
        });
    }
    Ok(res)
}

/// Batching: the callee is batched recursively and called again; each
/// output keeps the batch dim the recursion gives it (unbatched outputs stay
/// unbatched). A call naming the axis being batched is batched although no
/// operand is.
fn call_batch<F: CallOf>(
    f: &F, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize,
) -> BatchOut
where
    Primitive: From<F>,
{
    let unbatched = dims.iter().all(Option::is_none);
    if unbatched && !crate::transforms::batch::names_current_axis(&Primitive::from(f.clone())) {
        let outs = emit(b, f.clone(), ins.to_vec())?;
        let d = vec![None; outs.len()];
        return Ok((outs, d));
    }
    let (sub, out_dims) = crate::transforms::batch::batch_jaxpr_natural(f.callee(), dims, n)?;
    let outs = emit(b, f.around(Arc::new(sub), ""), ins.to_vec())?;
    Ok((outs, out_dims))
}

/// The callee's effect, which lifts to the call.
fn callee_effect<F: CallOf>(f: &F) -> Effect {
    f.callee().jaxpr.effect()
}

/// The [`Family`] impl of a call primitive: every rule is the shared call
/// rule above; `$name` and `$example` are what differ.
macro_rules! call_family {
    ($T:ident, $name:literal, $example:expr) => {
        impl Family for $T {
            crate::family_identity!($name, multiple_results = true, effect = callee_effect);

            fn examples() -> Vec<$T> {
                vec![$example]
            }

            fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
                call_abstract_eval($name, &self.jaxpr, ins)
            }

            fn kernel(
                &self, ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
            ) -> Result<Vec<HostArray>> {
                call_kernel($name, &self.jaxpr, ctx, args, outs)
            }

            fn jvp(&self, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
                call_jvp(self, b, xs, ts)
            }

            fn transpose(
                &self, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand],
            ) -> TransposeOut {
                call_transpose(self, b, cts, ops)
            }

            fn batch(
                &self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize,
            ) -> BatchOut {
                call_batch(self, b, ins, dims, n)
            }
        }
    };
}

/// An empty callee, for the examples.
fn empty_callee() -> Arc<ClosedJaxpr> {
    Arc::new(ClosedJaxpr::new(crate::ir::Jaxpr::default(), Vec::new()))
}

call_family!(
    Pjit,
    "pjit",
    Pjit {
        jaxpr: empty_callee(),
        name: String::new(),
    }
);

call_family!(
    Checkpoint,
    "checkpoint",
    Checkpoint {
        jaxpr: empty_callee(),
        policy: super::remat::RematPolicy::Nothing,
        prevent_cse: true,
    }
);
