//! Reference CPU kernels: one per primitive, every dtype its shape rule
//! accepts.
//!
//! [`eval`] first runs the shape rule ([`shape::abstract_eval`]) on the
//! operands' avals (for plainly valid elementwise operands, an
//! allocation-free equivalent), so kernels only see validated operands, and
//! checks that every output has exactly the aval the shape rule promised.
//!
//! Kernels match on the dtype once and then run a monomorphic loop over
//! slices (no per-element dispatch). Semantics follow XLA:
//!
//! * integer add/sub/mul/neg wrap; `x / 0` is -1 (signed) or MAX (unsigned);
//!   `MIN / -1 = MIN`; division truncates; `abs(MIN) = MIN`;
//! * float max/min propagate NaN; bool max/min are or/and;
//! * f16/bf16 compute in f32 and round once;
//! * `convert_element_type`: float → int truncates toward zero, saturates,
//!   NaN → 0; int → int wraps; x → bool is `x != 0`;
//! * `select_n` with an int32 predicate clamps it to `[0, n-1]`;
//! * empty `reduce_max` gives -inf / MIN / false.

#[path = "kernels/common.rs"]
mod common;
#[path = "kernels/complex.rs"]
pub(super) mod complex;
#[path = "kernels/dot.rs"]
pub(crate) mod dot;
pub(crate) use common::{BufElem, FloatElem};
pub use dot::{dot_general_into, FixedMatrix, PackedDot};
#[path = "kernels/elementwise.rs"]
pub(super) mod elementwise;
pub use elementwise::int_binary_into;
#[path = "kernels/gather.rs"]
pub(crate) mod gather;
pub(crate) use gather::default_fill as gather_default_fill;
#[path = "kernels/math.rs"]
pub mod math;
#[path = "kernels/reduce.rs"]
pub(super) mod reduce;
#[path = "kernels/rows.rs"]
pub mod rows;
#[path = "kernels/slices.rs"]
pub mod slices;
#[path = "kernels/small_matmul.rs"]
mod small_matmul;
#[path = "kernels/special_math.rs"]
pub mod special_math;
#[path = "kernels/structural.rs"]
pub(crate) mod structural;
#[path = "kernels/vmath.rs"]
pub mod vmath;

pub use structural::{row_major_strides, strided_gather};

use super::{shape, Primitive};
use crate::array::{Buffer, HostArray};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::exec::ExecCtx;
use crate::ir::Aval;
use std::sync::Arc;

/// Evaluates `prim` on concrete operands in the execution context `ctx`.
pub fn eval(ctx: &ExecCtx, prim: &Primitive, args: &[&HostArray]) -> Result<Vec<HostArray>> {
    let (aval, multi) = out_avals(prim, args)?;
    eval_known(ctx, prim, args, aval, multi)
}

/// What [`eval_known`] needs to know of the outputs: the aval of a
/// single-output primitive, or every aval of a multiple-results one.
pub type OutAvals = (Option<Aval>, Vec<Aval>);

/// The output avals of `prim` on `args`, from its shape rule.
pub fn out_avals(prim: &Primitive, args: &[&HostArray]) -> Result<OutAvals> {
    let name = prim.name();
    Ok(match fast_aval(prim, args) {
        Some(a) => (Some(a), Vec::new()),
        None => {
            let in_avals: Vec<Aval> = args.iter().map(|a| a.aval()).collect();
            let mut outs = shape::abstract_eval(prim, &in_avals)?;
            if prim.multiple_results() {
                (None, outs)
            } else {
                match (outs.pop(), outs.is_empty()) {
                    (Some(a), true) => (Some(a), Vec::new()),
                    _ => return Err(Error::arity(name, 1, outs.len().saturating_add(1))),
                }
            }
        }
    })
}

/// [`eval`] with the output avals already known, as the compiled
/// executor knows them from the typechecked program: the shape rule is not
/// run again. Kernels still check their operands (a mismatch is an error,
/// never a panic) and every output is checked against its aval. The
/// kernel runs inside `ctx` ([`ExecCtx::enter`]).
pub fn eval_known(
    ctx: &ExecCtx, prim: &Primitive, args: &[&HostArray], aval: Option<Aval>, multi: Vec<Aval>,
) -> Result<Vec<HostArray>> {
    match aval {
        Some(a) => Ok(vec![known_one(ctx, prim, args, a)?]),
        None => ctx.enter(|| {
            let name = prim.name();
            crate::array::budget::check_and_probe_avals_within(
                name,
                &multi,
                ctx.max_buffer_bytes(),
            )?;
            let outs = prim.kernel(ctx, args, multi.clone())?;
            checked_outputs(name, outs, &multi)
        }),
    }
}

/// [`eval`] of a single-output primitive, returning its one result (the
/// binding's eager operators: no vectors in or out). A primitive with
/// several results is an arity error.
pub fn eval_one(ctx: &ExecCtx, prim: &Primitive, args: &[&HostArray]) -> Result<HostArray> {
    match out_avals(prim, args)? {
        (Some(a), _) => known_one(ctx, prim, args, a),
        (None, multi) => Err(Error::Arity {
            prim: prim.name(),
            expected: 1,
            got: multi.len(),
        }),
    }
}

/// One output (the hot eager case): the aval moves into the kernel, which
/// builds its result with that shape; dtype, rank and size are kept for
/// the check.
fn known_one(ctx: &ExecCtx, prim: &Primitive, args: &[&HostArray], a: Aval) -> Result<HostArray> {
    let name = prim.name();
    crate::array::budget::check_and_probe_avals_within(name, [&a], ctx.max_buffer_bytes())?;
    let want = (a.dtype, a.ndim(), a.size()?);
    let o = ctx.enter(|| prim.kernel_one(ctx, args, a))?;
    if (o.dtype(), o.ndim(), o.size()) == want {
        Ok(o)
    } else {
        Err(Error::dtype(
            name,
            &[o.dtype(), want.0],
            "kernel produced an output other than its shape rule's",
        ))
    }
}

/// The output aval of an elementwise primitive whose operands are plainly
/// valid, computed without allocating (the eager path of small arrays is
/// dominated by this bookkeeping). It accepts a subset of what
/// `shape::abstract_eval` accepts and returns the same aval (the test
/// `fast_aval_agrees_with_shape_rule` checks this over every op, dtype and
/// shape pairing); anything else returns `None` and goes through
/// `abstract_eval`, which also produces the errors.
#[doc(hidden)]
pub fn fast_aval(prim: &Primitive, args: &[&HostArray]) -> Option<Aval> {
    fn ew_shape<'a>(x: &'a HostArray, y: &'a HostArray) -> Option<&'a [usize]> {
        let (xs, ys) = (x.shape(), y.shape());
        if xs == ys || ys.is_empty() {
            Some(xs)
        } else if xs.is_empty() {
            Some(ys)
        } else {
            None
        }
    }
    match (prim, args) {
        (Primitive::Unary(op), [x]) => {
            let d = x.dtype();
            op.accepts(d)
                .then(|| Aval::new(x.shape().to_vec(), op.out_dtype(d)))
        }
        (Primitive::Binary(op), [x, y]) => {
            let d = x.dtype();
            if !op.accepts(d) || y.dtype() != d {
                return None;
            }
            ew_shape(x, y).map(|s| Aval::new(s.to_vec(), d))
        }
        (Primitive::Compare(_), [x, y]) => {
            let d = x.dtype();
            if y.dtype() != d || !(d.is_numeric() || d == DType::Bool) {
                return None;
            }
            ew_shape(x, y).map(|s| Aval::new(s.to_vec(), DType::Bool))
        }
        _ => None,
    }
}

/// A family kernel's results, checked against the shape rule's avals.
fn checked_outputs(
    name: &'static str, outs: Vec<HostArray>, avals: &[Aval],
) -> Result<Vec<HostArray>> {
    Error::check_count(name, avals.len(), outs.len())?;
    for (o, a) in outs.iter().zip(avals) {
        if o.dtype() != a.dtype || o.shape() != a.shape.as_slice() {
            return Err(Error::dtype(
                name,
                &[o.dtype(), a.dtype],
                "kernel produced an output other than its shape rule's",
            ));
        }
    }
    Ok(outs)
}

/// Wraps a kernel's buffer as the array the shape rule promised.
fn finish(name: &'static str, aval: Aval, buf: Buffer) -> Result<HostArray> {
    if buf.dtype() != aval.dtype {
        return Err(Error::dtype(
            name,
            &[buf.dtype(), aval.dtype],
            "kernel produced a dtype other than its shape rule's",
        ));
    }
    HostArray::new(aval.shape, buf)
}

/// A primitive evaluated on shared values (a nested call, control flow, a
/// host callback): the operands are shared, the results unwrapped and
/// checked against the shape rule's avals. (The interpreter shares operands
/// directly for these equations; this is the single-primitive path.)
pub(crate) fn shared_call(
    name: &'static str, args: &[&HostArray], out_avals: Vec<Aval>,
    run: impl FnOnce(&[Arc<HostArray>]) -> Result<Vec<Arc<HostArray>>>,
) -> Result<Vec<HostArray>> {
    let owned: Vec<Arc<HostArray>> = args
        .iter()
        .map(|a| a.try_clone(name).map(Arc::new))
        .collect::<Result<_>>()?;
    let outs = run(&owned)?;
    Error::check_count(name, out_avals.len(), outs.len())?;
    outs.into_iter()
        .zip(out_avals)
        .map(|(a, aval)| {
            let arr = Arc::try_unwrap(a).or_else(|a| a.try_clone(name))?;
            finish(name, aval, arr.into_buffer())
        })
        .collect()
}
