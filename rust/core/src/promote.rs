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

#[cfg(test)]
mod tests {
    use super::*;
    use DType::*;

    /// The lattice with x64 disabled (defaults i32 / f32), not canonicalized.
    fn p(a: (DType, bool), b: (DType, bool)) -> (DType, bool) {
        promote_types(a, b, false).unwrap_or((Key, false))
    }

    const S: bool = false; // a strongly typed operand
    const W: bool = true; // a weakly typed one (Python scalar)

    /// A dtype with its weak-type flag.
    type Typed = (DType, bool);

    /// `result_type(operands, x64)` is `want` for every `(operands, x64, want)`.
    fn assert_result_types(cases: &[([Typed; 3], bool, Typed)]) {
        for &(operands, x64, want) in cases {
            assert_eq!(
                result_type(operands, x64),
                Ok(want),
                "{operands:?}, x64 {x64}"
            );
        }
    }

    /// Pairs from JAX's promotion table (`jnp.promote_types`, and
    /// `result_type` for weak operands), both orders checked.
    #[test]
    fn lattice_matches_jax_table() {
        type Operand = (DType, bool);
        let table: &[(Operand, Operand, Operand)] = &[
            // bool
            ((Bool, S), (Bool, S), (Bool, S)),
            ((Bool, S), (U8, S), (U8, S)),
            ((Bool, S), (I8, S), (I8, S)),
            ((Bool, S), (BF16, S), (BF16, S)),
            ((Bool, S), (F16, S), (F16, S)),
            ((Bool, S), (I32, W), (I32, W)),
            ((Bool, S), (F32, W), (F32, W)),
            // unsigned with signed: the next wider signed type
            ((U8, S), (I8, S), (I16, S)),
            ((U8, S), (I16, S), (I16, S)),
            ((U16, S), (I8, S), (I32, S)),
            ((U32, S), (I32, S), (I64, S)),
            ((U32, S), (I8, S), (I64, S)),
            // uint64 with any signed type has no integer bound: f*
            ((U64, S), (I64, S), (F32, W)),
            ((U64, S), (I8, S), (F32, W)),
            // unsigned / signed widening
            ((U8, S), (U32, S), (U32, S)),
            ((I8, S), (I64, S), (I64, S)),
            // ints with floats: the float
            ((I64, S), (F16, S), (F16, S)),
            ((U64, S), (BF16, S), (BF16, S)),
            ((I32, S), (F32, S), (F32, S)),
            ((I64, S), (F64, S), (F64, S)),
            // half floats
            ((BF16, S), (F16, S), (F32, S)),
            ((BF16, S), (F32, S), (F32, S)),
            ((F16, S), (F64, S), (F64, S)),
            // weak int: takes any int/uint/float dtype
            ((I32, W), (U8, S), (U8, S)),
            ((I32, W), (I8, S), (I8, S)),
            ((I32, W), (U64, S), (U64, S)),
            ((I32, W), (BF16, S), (BF16, S)),
            ((I32, W), (F16, S), (F16, S)),
            ((I32, W), (I32, W), (I32, W)),
            // weak float: takes float dtypes, wins over ints (stays weak)
            ((F32, W), (F16, S), (F16, S)),
            ((F32, W), (BF16, S), (BF16, S)),
            ((F32, W), (F32, S), (F32, S)),
            ((F32, W), (I32, S), (F32, W)),
            ((F32, W), (U8, S), (F32, W)),
            ((F32, W), (I32, W), (F32, W)),
            ((F32, W), (F64, S), (F64, S)),
            // complex (recorded from JAX 0.10.2: jnp.promote_types and
            // dtypes.result_type(..., return_weak_type_flag=True))
            ((C64, S), (F32, S), (C64, S)),
            ((C64, S), (F64, S), (C128, S)),
            ((C64, S), (C128, S), (C128, S)),
            ((C64, S), (BF16, S), (C64, S)),
            ((C64, S), (U64, S), (C64, S)),
            ((C64, S), (I64, S), (C64, S)),
            ((C64, S), (Bool, S), (C64, S)),
            ((C128, S), (F16, S), (C128, S)),
            ((C64, W), (I32, S), (C64, W)),
            ((C64, W), (F16, S), (C64, S)),
            ((C64, W), (F32, W), (C64, W)),
            ((C64, W), (F64, S), (C128, S)),
            ((C64, W), (C128, S), (C128, S)),
            ((F32, W), (C64, S), (C64, S)),
            ((I32, W), (C128, S), (C128, S)),
        ];
        for &(a, b, want) in table {
            assert_eq!(p(a, b), want, "{a:?} with {b:?}");
            assert_eq!(p(b, a), want, "{b:?} with {a:?}");
        }
    }

    #[test]
    fn weak_results_take_the_x64_defaults() {
        let r = |a, b| promote_pair(a, b, true).unwrap_or((Key, false));
        assert_eq!(r((I64, W), (F64, W)), (F64, W));
        assert_eq!(r((U64, S), (I64, S)), (F64, W));
        assert_eq!(r((Bool, S), (I64, W)), (I64, W));
        assert_eq!(r((I64, S), (C128, W)), (C128, W));
        assert_eq!(r((F64, W), (C64, W)), (C128, W));
    }

    #[test]
    fn complex_results_are_canonical_without_x64() {
        // jnp.promote_types(float64, complex64) is complex128;
        // jnp.result_type canonicalizes it to complex64 with x64 disabled.
        assert_eq!(promote_types((F64, S), (C64, S), false), Ok((C128, S)));
        assert_eq!(promote_pair((F64, S), (C64, S), false), Ok((C64, S)));
        assert_eq!(promote_pair((F64, S), (C64, S), true), Ok((C128, S)));
        assert_eq!(promote_pair((I32, S), (C64, W), false), Ok((C64, W)));
    }

    #[test]
    fn result_types_are_canonical_without_x64() {
        // jnp.promote_types(uint32, int32) is int64; result_type (what
        // `a + b` computes in) canonicalizes it with x64 disabled.
        assert_eq!(promote_types((U32, S), (I32, S), false), Ok((I64, S)));
        assert_eq!(promote_pair((U32, S), (I32, S), false), Ok((I32, S)));
        assert_eq!(promote_pair((U32, S), (I32, S), true), Ok((I64, S)));
        let mixed_ints = [(U8, S), (U32, S), (I8, S)];
        assert_result_types(&[(mixed_ints, false, (I32, S)), (mixed_ints, true, (I64, S))]);
        assert_eq!(promote_pair((F32, S), (F32, W), false), Ok((F32, S)));
    }

    #[test]
    fn keys_and_float0_do_not_promote() {
        assert!(promote_pair((Key, S), (F32, S), false).is_err());
        assert!(promote_pair((Float0, S), (I32, S), false).is_err());
    }

    #[test]
    fn result_type_folds_left() {
        assert_result_types(&[
            ([(U8, S), (I8, S), (F32, W)], false, (F32, W)),
            ([(F16, S), (I32, W), (F32, W)], false, (F16, S)),
        ]);
        assert!(result_type([], false).is_err());
    }

    #[test]
    fn numpy_broadcasting() {
        let b = |shapes: &[&[usize]]| broadcast_shapes(Some("add"), shapes).ok();
        assert_eq!(b(&[&[3, 1], &[4]]), Some(vec![3, 4]));
        assert_eq!(b(&[&[2, 3], &[3]]), Some(vec![2, 3]));
        assert_eq!(b(&[&[1], &[5, 1, 2]]), Some(vec![5, 1, 2]));
        assert_eq!(b(&[&[0], &[1]]), Some(vec![0]));
        assert_eq!(b(&[&[], &[2, 2]]), Some(vec![2, 2]));
        assert_eq!(b(&[&[2, 1, 4], &[3, 1], &[1, 4]]), Some(vec![2, 3, 4]));
        assert_eq!(b(&[]), Some(vec![]));
    }

    #[test]
    fn broadcast_errors_read_as_jax() {
        let msg = |op, shapes: &[&[usize]]| {
            broadcast_shapes(op, shapes)
                .err()
                .map(|e| (e.to_string(), e.is_type_error()))
        };
        assert_eq!(
            msg(Some("add"), &[&[3], &[4]]),
            Some((
                "add got incompatible shapes for broadcasting: (3,), (4,).".into(),
                true
            ))
        );
        assert_eq!(
            msg(Some("max"), &[&[2, 3], &[2, 4]]),
            Some((
                "max got incompatible shapes for broadcasting: (2, 3), (2, 4).".into(),
                true
            ))
        );
        assert_eq!(
            msg(Some("add"), &[&[3], &[2, 4]]),
            Some((
                "Incompatible shapes for broadcasting: shapes=[(3,), (2, 4)]".into(),
                false
            ))
        );
        assert_eq!(
            msg(None, &[&[3], &[4]]),
            Some((
                "Incompatible shapes for broadcasting: shapes=[(3,), (4,)]".into(),
                false
            ))
        );
    }
}
