//! Compile-time rewrites of a closed jaxpr: calls inlined, common
//! subexpressions shared, exact identities removed, scalar literal
//! arithmetic folded, small input-independent values (an `iota`, the
//! identity matrix a Jacobian seeds with) computed once into constants,
//! dead code dropped.
//!
//! Every rewrite is exact in floating point (no reassociation): the
//! simplified program computes bit for bit what the original computes.

use crate::array::HostArray;
use crate::error::{Error, Result};
use crate::ir::builder::Builder;
use crate::ir::hash::FastHasher;
use crate::ir::splice::{bind, lookup_all, splice};
use crate::ir::{Atom, Aval, ClosedJaxpr, Effect, Eqn, Literal, Scalar, Var};
use crate::prims::custom::{CustomCall, VjpCall};
use crate::prims::process::ProcessCollective;
use crate::prims::{kernel, BinaryOp, DotDims, Primitive, UnaryOp};
use crate::prims::{
    BroadcastInDim, Checkpoint, ConvertElementType, DotGeneral, IntegerPow, Pjit, Reduce, Reshape,
    SelectN, Squeeze, Transpose,
};
use crate::transforms::dce::dce_owned;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::Arc;

/// Calls (`pjit`, `checkpoint`) nested deeper than this stay calls: the
/// inliner recurses once per level.
const MAX_INLINE_DEPTH: usize = 64;

/// The simplified program (same signature as `prog`), input-independent
/// values left to run (the CUDA executor's: a folded constant would be a
/// host array to upload instead of a kernel writing device memory).
pub fn simplify(prog: &ClosedJaxpr) -> Result<ClosedJaxpr> {
    dce_owned(rewrite(prog, 0, false)?)
}

/// [`simplify`] with small input-independent values computed into
/// constants (folding equations whose operands are all known, within
/// fixed size limits): the host executor's.
pub fn simplify_folding(prog: &ClosedJaxpr) -> Result<ClosedJaxpr> {
    dce_owned(rewrite(prog, 0, true)?)
}

fn rewrite(prog: &ClosedJaxpr, depth: usize, fold: bool) -> Result<ClosedJaxpr> {
    let jx = &prog.jaxpr;
    let mut b = Builder::new();
    let mut env: Vec<Option<Atom>> = vec![None; jx.avals.len()];
    let mut known = Known {
        fold,
        ..Known::default()
    };
    for (v, c) in jx.constvars.iter().zip(&prog.consts) {
        let nv = b.add_const(c.clone(), jx.aval(*v)?.weak_type)?;
        known.values.insert(nv, c.clone());
        bind(&mut env, *v, Atom::Var(nv))?;
    }
    for v in &jx.invars {
        let nv = b.add_input(jx.aval(*v)?.clone())?;
        bind(&mut env, *v, Atom::Var(nv))?;
    }
    let mut seen = Seen::default();
    let mut transposes: Transposes = HashMap::new();
    for eqn in &jx.eqns {
        let ins = lookup_all(&env, &eqn.inputs)?;
        let outs = emit(
            &mut b,
            &mut seen,
            &mut known,
            &mut transposes,
            eqn,
            ins,
            depth,
        )?;
        Error::check_count(eqn.prim.name(), eqn.outputs.len(), outs.len())?;
        for (old, new) in eqn.outputs.iter().zip(outs) {
            bind(&mut env, *old, new)?;
        }
    }
    let outs = lookup_all(&env, &jx.outvars)?;
    b.finish(outs)
}

/// Emits one equation (or what replaces it) and returns its outputs.
/// The transposes emitted so far: output variable → (operand, permutation).
type Transposes = HashMap<Var, (Atom, Vec<usize>)>;

fn emit(
    b: &mut Builder, seen: &mut Seen, known: &mut Known, transposes: &mut Transposes, eqn: &Eqn,
    ins: Vec<Atom>, depth: usize,
) -> Result<Vec<Atom>> {
    let (prim, ins) = match &eqn.prim {
        Primitive::DotGeneral(DotGeneral {
            dims,
            preferred_element_type,
        }) => {
            let (dims, ins) = fold_transposes(dims, ins, transposes);
            let prim = Primitive::DotGeneral(DotGeneral {
                dims,
                preferred_element_type: *preferred_element_type,
            });
            (prim, ins)
        }
        prim => (prim.clone(), ins),
    };
    let operand = ins.first().cloned();
    let outs = emit_simplified(b, seen, known, eqn, prim, ins, depth)?;
    if let (Primitive::Transpose(Transpose { permutation }), [Atom::Var(out)], Some(x)) =
        (&eqn.prim, outs.as_slice(), operand)
    {
        transposes.insert(*out, (x, permutation.clone()));
    }
    Ok(outs)
}

/// `dot_general` reading a transposed operand reads the transpose's operand
/// instead, with its contracting and batch axes renamed, when the operand's
/// free axes keep their order (so the result's axes do not move). The
/// kernel reads strided operands in place.
fn fold_transposes(
    dims: &DotDims, ins: Vec<Atom>, transposes: &Transposes,
) -> (DotDims, Vec<Atom>) {
    let [lhs, rhs] = ins.as_slice() else {
        return (dims.clone(), ins);
    };
    let mut dims = dims.clone();
    let fold = |a: &Atom, contract: &mut Vec<usize>, batch: &mut Vec<usize>| -> Atom {
        let Atom::Var(v) = a else {
            return a.clone();
        };
        let Some((src, perm)) = transposes.get(v) else {
            return a.clone();
        };
        let map = |axes: &[usize]| -> Option<Vec<usize>> {
            axes.iter().map(|&d| perm.get(d).copied()).collect()
        };
        let free: Vec<usize> = (0..perm.len())
            .filter(|d| !contract.contains(d) && !batch.contains(d))
            .collect();
        match (map(contract), map(batch), map(&free)) {
            (Some(c), Some(bt), Some(f)) if f.windows(2).all(|w| matches!(w, [x, y] if x < y)) => {
                *contract = c;
                *batch = bt;
                src.clone()
            }
            _ => a.clone(),
        }
    };
    let new_lhs = fold(lhs, &mut dims.lhs_contract, &mut dims.lhs_batch);
    let new_rhs = fold(rhs, &mut dims.rhs_contract, &mut dims.rhs_batch);
    (dims, vec![new_lhs, new_rhs])
}

fn emit_simplified(
    b: &mut Builder, seen: &mut Seen, known: &mut Known, eqn: &Eqn, prim: Primitive,
    ins: Vec<Atom>, depth: usize,
) -> Result<Vec<Atom>> {
    match &prim {
        Primitive::Pjit(Pjit { jaxpr, .. })
        | Primitive::Checkpoint(Checkpoint { jaxpr, .. })
        // A custom-derivative call runs its primal function: its rules
        // matter to transforms, which are done before a program compiles.
        | Primitive::Custom(
            CustomCall::Jvp { call: jaxpr, .. }
            | CustomCall::Vjp(VjpCall { call: jaxpr, .. })
            | CustomCall::LinearCall {
                callee: jaxpr, ..
            },
        ) if depth < MAX_INLINE_DEPTH => {
            let body = rewrite(jaxpr, depth.saturating_add(1), known.fold)?;
            return splice(b, &body, &ins);
        }
        // A reduction over axes of size 1 only moves no element: a reshape.
        Primitive::Reduce(Reduce { axes, .. }) => {
            if let [x] = ins.as_slice() {
                let xa = b.aval(x)?;
                if axes.iter().all(|&a| xa.shape.get(a) == Some(&1)) {
                    let new_sizes: Vec<usize> = xa
                        .shape
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| !axes.contains(i))
                        .map(|(_, &d)| d)
                        .collect();
                    let r = Primitive::Reshape(Reshape { new_sizes });
                    return emit_simplified(b, seen, known, eqn, r, ins, depth);
                }
            }
        }
        _ => {}
    }
    if let Some(same) = identity(b, &prim, &ins)? {
        return Ok(vec![same]);
    }
    if let Some(lit) = fold_scalar(&prim, &ins)? {
        return Ok(vec![Atom::Lit(lit)]);
    }
    let shareable = eqn.effect == Effect::None && !matches!(prim, Primitive::Callback(_));
    let key = shareable.then(|| {
        let mut h = FastHasher::default();
        (&prim, &ins).hash(&mut h);
        h.finish()
    });
    let Some(key) = key else {
        let outs = b.add_eqn(prim, ins, eqn.source.0.clone())?;
        return Ok(outs.into_iter().map(Atom::Var).collect());
    };
    match seen.get(&key) {
        Some(Shared::Emitted(i)) => {
            if let Some(earlier) = b.eqn(*i) {
                if earlier.prim == prim && earlier.inputs == ins {
                    return Ok(earlier.outputs.iter().map(|v| Atom::Var(*v)).collect());
                }
            }
        }
        Some(Shared::Folded(p, i, outs)) if *p == prim && *i == ins => return Ok(outs.clone()),
        _ => {}
    }
    if let Some(outs) = fold_constant(b, known, &prim, &ins)? {
        seen.insert(key, Shared::Folded(prim, ins, outs.clone()));
        return Ok(outs);
    }
    let outs = b.add_eqn(prim, ins, eqn.source.0.clone())?;
    seen.insert(key, Shared::Emitted(b.num_eqns().saturating_sub(1)));
    Ok(outs.into_iter().map(Atom::Var).collect())
}

/// What a shareable equation seen before became: an equation in the
/// builder, or constants ([`fold_constant`]).
enum Shared {
    /// The index of the (latest) equation emitted for it.
    Emitted(usize),
    /// Its primitive and operands, and the constants that replace its
    /// outputs.
    Folded(Primitive, Vec<Atom>, Vec<Atom>),
}

/// The shareable equations emitted or folded so far, by the hash of
/// (primitive, operands), confirmed equal before reuse (a colliding hash
/// only forgoes one sharing): a repeated equation reads the first one's
/// outputs, a repeated input-independent one shares its constants.
type Seen = HashMap<u64, Shared, BuildHasherDefault<FastHasher>>;

/// The operand an equation returns unchanged (bit for bit, same shape and
/// dtype; only the weak-type flag may differ): `x * 1` for floats, converts
/// and reshapes to the operand's own type, identity transposes, squeezes
/// and broadcasts, and the cotangent-share identities of `prims/process.rs`.
fn identity(b: &Builder, prim: &Primitive, ins: &[Atom]) -> Result<Option<Atom>> {
    let [x, rest @ ..] = ins else {
        return Ok(None);
    };
    let xa = b.aval(x)?;
    let keep = match prim {
        Primitive::Binary(BinaryOp::Mul) => match rest {
            [y] if is_one(y) && xa.dtype.is_float() => {
                let ya = b.aval(y)?;
                ya.dtype == xa.dtype && ya.shape.is_empty()
            }
            _ => false,
        },
        Primitive::ConvertElementType(ConvertElementType { new_dtype, .. }) => {
            *new_dtype == xa.dtype
        }
        Primitive::Reshape(Reshape { new_sizes }) => *new_sizes == xa.shape,
        Primitive::BroadcastInDim(BroadcastInDim {
            shape,
            broadcast_dimensions,
        }) => {
            *shape == xa.shape
                && broadcast_dimensions
                    .iter()
                    .enumerate()
                    .all(|(i, &d)| i == d)
        }
        Primitive::Transpose(Transpose { permutation }) => {
            permutation.iter().enumerate().all(|(i, &p)| i == p)
        }
        Primitive::Squeeze(Squeeze { dimensions }) => dimensions.is_empty(),
        // The identities of shard_map's cotangent shares (their rules are
        // used before compiling).
        Primitive::Process(ProcessCollective::Pvary { .. } | ProcessCollective::Share { .. }) => {
            true
        }
        _ => false,
    };
    Ok(keep.then(|| x.clone()))
}

/// Values known at compile time: the program's constants and what
/// [`fold_constant`] computed, by variable.
#[derive(Default)]
struct Known {
    /// Whether folding is on.
    fold: bool,
    values: HashMap<Var, Arc<HostArray>>,
    /// Bytes of the constants folded so far.
    bytes: usize,
}

/// Largest output (in bytes, all outputs together) an equation may have to
/// be folded into a constant: the compiled program holds it for its life.
const FOLD_MAX_BYTES: usize = 1 << 20;
/// Most bytes of folded constants one program (each call body counted
/// apart) holds; later equations run instead.
const FOLD_TOTAL_BYTES: usize = 16 << 20;

/// Whether `prim` is folded when its operands are known: data movement,
/// `iota`, comparisons, selection, conversions and plain arithmetic — ops
/// whose work is small next to holding their result, evaluated by the
/// reference kernel every executor step uses (a fused group too), so the
/// constant has the bits a run would compute.
fn foldable(prim: &Primitive) -> bool {
    match prim {
        Primitive::Iota(_)
        | Primitive::BroadcastInDim(_)
        | Primitive::Reshape(_)
        | Primitive::Transpose(_)
        | Primitive::Squeeze(_)
        | Primitive::Rev(_)
        | Primitive::Concatenate(_)
        | Primitive::Pad(_)
        | Primitive::Slice(_)
        | Primitive::Compare(_)
        | Primitive::SelectN(_)
        | Primitive::ConvertElementType(_)
        | Primitive::IntegerPow(_) => true,
        Primitive::Unary(op) => matches!(
            op,
            UnaryOp::Neg | UnaryOp::Abs | UnaryOp::Sign | UnaryOp::Not | UnaryOp::Square
        ),
        Primitive::Binary(op) => !matches!(
            op,
            BinaryOp::Pow | BinaryOp::Atan2 | BinaryOp::Nextafter | BinaryOp::Polygamma
        ),
        _ => false,
    }
}

/// `prim` applied to operands all known at compile time (literals,
/// constants, earlier folds; no operand at all for `iota`), computed now
/// into new constants when [`foldable`], its outputs take at most
/// [`FOLD_MAX_BYTES`] and the program's folds stay within
/// [`FOLD_TOTAL_BYTES`]. `None` leaves the equation to run.
fn fold_constant(
    b: &mut Builder, known: &mut Known, prim: &Primitive, ins: &[Atom],
) -> Result<Option<Vec<Atom>>> {
    if !known.fold || !foldable(prim) {
        return Ok(None);
    }
    let mut args: Vec<Arc<HostArray>> = Vec::with_capacity(ins.len());
    for a in ins {
        match a {
            Atom::Lit(l) => args.push(Arc::new(l.to_array()?)),
            Atom::Var(v) => match known.values.get(v) {
                Some(h) => args.push(h.clone()),
                None => return Ok(None),
            },
        }
    }
    let in_avals = ins.iter().map(|a| b.aval(a)).collect::<Result<Vec<_>>>()?;
    let out_avals = prim.abstract_eval(&in_avals)?;
    let mut bytes = 0usize;
    for a in &out_avals {
        let n = a
            .size()
            .ok()
            .and_then(|n| n.checked_mul(a.dtype.itemsize()))
            .and_then(|n| bytes.checked_add(n));
        match n {
            Some(n) if n <= FOLD_MAX_BYTES => bytes = n,
            _ => return Ok(None),
        }
    }
    let total = match known.bytes.checked_add(bytes) {
        Some(total) if total <= FOLD_TOTAL_BYTES => total,
        _ => return Ok(None),
    };
    let refs: Vec<&HostArray> = args.iter().map(|a| a.as_ref()).collect();
    // A kernel that fails leaves the equation to fail when (and only if) it
    // runs: it may sit in a branch no run takes.
    let Ok(values) = kernel::eval(&crate::exec::ExecCtx::current_default(), prim, &refs) else {
        return Ok(None);
    };
    let fits = values.len() == out_avals.len()
        && values
            .iter()
            .zip(&out_avals)
            .all(|(v, a)| v.shape() == a.shape.as_slice() && v.dtype() == a.dtype);
    if !fits {
        return Ok(None);
    }
    let mut outs = Vec::with_capacity(values.len());
    for (value, aval) in values.into_iter().zip(&out_avals) {
        let value = Arc::new(value);
        let v = b.add_const(value.clone(), aval.weak_type)?;
        known.values.insert(v, value);
        outs.push(Atom::Var(v));
    }
    known.bytes = total;
    Ok(Some(outs))
}

fn is_one(a: &Atom) -> bool {
    matches!(a, Atom::Lit(Literal { val: Scalar::Float(f), .. }) if *f == 1.0)
}

/// Elementwise arithmetic on scalar literals only, evaluated now by the
/// reference kernel (so the result is what running it would give): the
/// [`foldable`] elementwise operations, with or without constant folding
/// (a scalar literal costs nothing to hold).
fn fold_scalar(prim: &Primitive, ins: &[Atom]) -> Result<Option<Literal>> {
    let elementwise = matches!(
        prim,
        Primitive::Unary(_)
            | Primitive::Binary(_)
            | Primitive::Compare(_)
            | Primitive::IntegerPow(IntegerPow { .. })
            | Primitive::ConvertElementType(ConvertElementType { .. })
            | Primitive::SelectN(SelectN)
    );
    if !elementwise || !foldable(prim) || ins.is_empty() {
        return Ok(None);
    }
    // Literal operands only; folding `rng`-like or effectful ops never
    // applies (none is elementwise).
    let lits: Vec<&Literal> = ins
        .iter()
        .filter_map(|a| match a {
            Atom::Lit(l) => Some(l),
            Atom::Var(_) => None,
        })
        .collect();
    if lits.len() != ins.len() {
        return Ok(None);
    }
    let arrays = lits
        .iter()
        .map(|l| l.to_array())
        .collect::<Result<Vec<_>>>()?;
    let refs: Vec<&crate::array::HostArray> = arrays.iter().collect();
    let in_avals: Vec<Aval> = lits.iter().map(|l| l.aval.clone()).collect();
    let out_aval = match crate::prims::shape::abstract_eval(prim, &in_avals)?.as_slice() {
        [a] => a.clone(),
        _ => return Ok(None),
    };
    let out = kernel::eval(&crate::exec::ExecCtx::current_default(), prim, &refs)?;
    let Some(value) = out.first().and_then(|h| Scalar::from_buffer(h.buffer(), 0)) else {
        return Ok(None);
    };
    Ok(Some(Literal {
        val: value,
        aval: out_aval,
    }))
}
