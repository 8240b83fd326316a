//! JAX's type promotion and shape broadcasting, the one implementation every
//! layer calls: the binding's eager fast path, `jnp`'s promotion helpers
//! (through the binding's `result_type` / `broadcast_shapes`) and the
//! transforms.
//!
//! Promotion is the least upper bound in JAX's lattice
//! (<https://jax.readthedocs.io/en/latest/type_promotion.html>), where
//! Python scalars are the weak kinds `i*` / `f*` / `c*`: a weak operand takes the
//! other operand's dtype when that one is of the same kind or above, and a
//! weak result takes the default dtype of its kind. Broadcasting is NumPy's,
//! with JAX's errors.

use crate::dtype::DType;
use crate::error::{Error, Result};

/// A node of JAX's promotion lattice: a concrete dtype, or the weak Python
/// scalar kinds `i*` / `f*` / `c*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Node {
    Concrete(DType),
    WeakInt,
    WeakFloat,
    WeakComplex,
}

/// Direct successors in JAX's lattice (b1 → i* → {u8, i8}; i* → f*;
/// f* → c*; f32 → c64; f64 → c128; c* → c64 → c128; …).
fn successors(n: Node) -> &'static [Node] {
    use DType::*;
    use Node::*;
    match n {
        Concrete(Bool) => &[WeakInt],
        WeakInt => &[Concrete(U8), Concrete(I8), WeakFloat],
        Concrete(U8) => &[Concrete(I16), Concrete(U16)],
        Concrete(U16) => &[Concrete(I32), Concrete(U32)],
        Concrete(U32) => &[Concrete(I64), Concrete(U64)],
        Concrete(U64) => &[WeakFloat],
        Concrete(I8) => &[Concrete(I16)],
        Concrete(I16) => &[Concrete(I32)],
        Concrete(I32) => &[Concrete(I64)],
        Concrete(I64) => &[WeakFloat],
        WeakFloat => &[Concrete(BF16), Concrete(F16), WeakComplex],
        Concrete(BF16) | Concrete(F16) => &[Concrete(F32)],
        Concrete(F32) => &[Concrete(F64), Concrete(C64)],
        Concrete(F64) => &[Concrete(C128)],
        WeakComplex => &[Concrete(C64)],
        Concrete(C64) => &[Concrete(C128)],
        Concrete(C128) | Concrete(Float0) | Concrete(Key) => &[],
    }
}

/// All nodes reachable from `n` (including `n`), in breadth-first order.
fn upper_bounds(n: Node) -> Vec<Node> {
    let mut out = vec![n];
    let mut i = 0;
    while let Some(&cur) = out.get(i) {
        for &s in successors(cur) {
            if !out.contains(&s) {
                out.push(s);
            }
        }
        i = i.saturating_add(1);
    }
    out
}

fn node_of(dtype: DType, weak: bool) -> Node {
    match (weak, dtype) {
        (true, d) if d.is_int() => Node::WeakInt,
        (true, d) if d.is_float() => Node::WeakFloat,
        (true, d) if d.is_complex() => Node::WeakComplex,
        (_, d) => Node::Concrete(d),
    }
}

/// JAX's `promote_types` on (dtype, weak_type) pairs: the least upper bound in
/// the lattice; a weak result takes the default dtype of its kind
/// (`default_int`/`default_float`, already canonicalized by the caller;
/// the default complex dtype is the one with `default_float` parts).
pub fn promote(
    a: (DType, bool), b: (DType, bool), default_int: DType, default_float: DType,
) -> Result<(DType, bool)> {
    let na = node_of(a.0, a.1);
    let nb = node_of(b.0, b.1);
    if na == nb {
        return Ok((a.0, a.1 && b.1));
    }
    let ua = upper_bounds(na);
    let ub = upper_bounds(nb);
    let common: Vec<Node> = ua.iter().copied().filter(|n| ub.contains(n)).collect();
    // The least upper bound is the common bound every other common bound is above.
    let lub = common.iter().copied().find(|cand| {
        common
            .iter()
            .all(|other| upper_bounds(*cand).contains(other))
    });
    match lub {
        Some(Node::Concrete(d)) => Ok((d, false)),
        Some(Node::WeakInt) => Ok((default_int, true)),
        Some(Node::WeakFloat) => Ok((default_float, true)),
        Some(Node::WeakComplex) => Ok((default_float.complex_dtype().unwrap_or(DType::C64), true)),
        None => Err(Error::InvalidArgument(format!(
            "no common dtype for {} and {}",
            a.0, b.0
        ))),
    }
}

/// The default integer and float dtypes: 64-bit with x64 enabled, else 32-bit.
pub fn defaults(x64: bool) -> (DType, DType) {
    if x64 {
        (DType::I64, DType::F64)
    } else {
        (DType::I32, DType::F32)
    }
}

/// JAX's `promote_types`: [`promote`] with the defaults of the x64 flag,
/// the lattice's answer as is (`uint32` with `int32` is `int64` even with
/// x64 disabled). Equal dtypes short-cut.
#[inline]
pub fn promote_types(a: (DType, bool), b: (DType, bool), x64: bool) -> Result<(DType, bool)> {
    if a.0 == b.0 {
        return Ok((a.0, a.1 && b.1));
    }
    let (di, df) = defaults(x64);
    promote(a, b, di, df)
}

/// JAX's `result_type` of two operands: [`promote_types`], canonicalized
/// for the x64 flag (`uint32` with `int32` is `int32` with x64 disabled).
/// What an elementwise operation computes in.
#[inline]
pub fn promote_pair(a: (DType, bool), b: (DType, bool), x64: bool) -> Result<(DType, bool)> {
    let (d, w) = promote_types(a, b, x64)?;
    Ok((d.canonicalize(x64), w))
}

/// [`promote_types`] folded left to right over `(dtype, weak_type)`
/// operands, not canonicalized. No operand is an error, as in JAX.
pub fn promote_all(
    items: impl IntoIterator<Item = (DType, bool)>, x64: bool,
) -> Result<(DType, bool)> {
    let mut acc: Option<(DType, bool)> = None;
    for cur in items {
        acc = Some(match acc {
            None => cur,
            Some(a) => promote_types(a, cur, x64)?,
        });
    }
    acc.ok_or_else(|| Error::InvalidArgument("at least one array or dtype is required".into()))
}

/// JAX's `result_type`: [`promote_all`], canonicalized for the x64 flag.
pub fn result_type(
    items: impl IntoIterator<Item = (DType, bool)>, x64: bool,
) -> Result<(DType, bool)> {
    let (d, w) = promote_all(items, x64)?;
    Ok((d.canonicalize(x64), w))
}

/// NumPy's broadcast of `shapes` (aligned at their last axis; an axis of
/// size 1 stretches). Incompatible shapes give [`Error::Broadcast`]: with
/// `op` named and all ranks equal it reads as JAX's elementwise primitives
/// report it (`add got incompatible shapes for broadcasting: (3,), (4,).`,
/// a `TypeError`), otherwise as `jnp.broadcast_shapes` does
/// (`Incompatible shapes for broadcasting: shapes=[(3,), (2, 4)]`, a
/// `ValueError`).
pub fn broadcast_shapes(op: Option<&str>, shapes: &[&[usize]]) -> Result<Vec<usize>> {
    let ndim = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1usize; ndim];
    for s in shapes {
        let lead = ndim.saturating_sub(s.len());
        for (o, &d) in out.iter_mut().skip(lead).zip(s.iter()) {
            if d == *o || d == 1 {
                continue;
            }
            if *o != 1 {
                return Err(Error::Broadcast {
                    op: op.map(str::to_string),
                    shapes: shapes.iter().map(|s| s.to_vec()).collect(),
                });
            }
            *o = d;
        }
    }
    Ok(out)
}

/// JAX's `jax_numpy_rank_promotion` modes: what NumPy-style broadcasting
/// of operands of different ranks does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RankPromotion {
    Allow,
    Warn,
    Raise,
}

impl RankPromotion {
    /// The mode named as JAX's option value.
    pub fn from_name(name: &str) -> Result<RankPromotion> {
        match name {
            "allow" => Ok(RankPromotion::Allow),
            "warn" => Ok(RankPromotion::Warn),
            "raise" => Ok(RankPromotion::Raise),
            other => Err(Error::InvalidArgument(format!(
                "jax_numpy_rank_promotion must be 'allow', 'warn' or 'raise', got {other:?}"
            ))),
        }
    }
}

/// What `mode` says of broadcasting `shapes` in the NumPy function `fun`:
/// operands of two or more different nonzero ranks (scalars never count)
/// are an [`Error::RankPromotion`] under `Raise` and JAX's warning text
/// (`Some`) under `Warn`.
pub fn check_rank_promotion(
    fun: &str, shapes: &[&[usize]], mode: RankPromotion,
) -> Result<Option<String>> {
    if mode == RankPromotion::Allow {
        return Ok(None);
    }
    let mut ranks = shapes.iter().map(|s| s.len()).filter(|&r| r > 0);
    let Some(first) = ranks.next() else {
        return Ok(None);
    };
    if ranks.all(|r| r == first) {
        return Ok(None);
    }
    let listed: Vec<String> = shapes
        .iter()
        .map(|s| crate::error::format_shape(s))
        .collect();
    let listed = listed.join(" ");
    const DOC: &str = "https://docs.jax.dev/en/latest/rank_promotion_warning.html";
    match mode {
        RankPromotion::Raise => Err(Error::RankPromotion(format!(
            "Operands could not be broadcast together for {fun} on shapes {listed} and with the \
             config option jax_numpy_rank_promotion='raise'. For more information, see {DOC}."
        ))),
        _ => Ok(Some(format!(
            "Following NumPy automatic rank promotion for {fun} on shapes {listed}. Set the \
             jax_numpy_rank_promotion config option to 'allow' to disable this warning; for more \
             information, see {DOC}."
        ))),
    }
}
