//! Tests of `promote`'s internals (reached through `microjax::internals`).

use microjax::internals::promote::*;
use microjax::DType;
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

#[test]
fn rank_promotion_modes_follow_jax() {
    let (a, b): (&[usize], &[usize]) = (&[3], &[2, 3]);
    assert_eq!(
        check_rank_promotion("add", &[a, b], RankPromotion::Allow),
        Ok(None)
    );
    assert_eq!(
        check_rank_promotion("add", &[&[2, 3], &[], &[1, 3]], RankPromotion::Raise),
        Ok(None)
    );
    let err = check_rank_promotion("add", &[a, b], RankPromotion::Raise);
    assert_eq!(
        err.map_err(|e| e.to_string()),
        Err(
            "Operands could not be broadcast together for add on shapes (3,) (2, 3) and \
             with the config option jax_numpy_rank_promotion='raise'. For more \
             information, see https://docs.jax.dev/en/latest/rank_promotion_warning.html."
                .to_string()
        )
    );
    let warn = check_rank_promotion("multiply", &[a, b], RankPromotion::Warn);
    assert!(matches!(warn, Ok(Some(t)) if t.starts_with(
        "Following NumPy automatic rank promotion for multiply on shapes (3,) (2, 3).")));
    assert!(RankPromotion::from_name("bogus").is_err());
}
