//! Reference kernels against hand-computed values and naive loops: every
//! primitive, representative dtypes, XLA's integer edge cases, rank-0 and
//! empty operands, and a Builder program with a nested pjit run through the
//! interpreter.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use half::{bf16, f16};
use microjax::exec::interp::eval_closed;
use microjax::prims::{
    ArgReduce, BroadcastInDim, Clamp, ConvertElementType, Cumulative, IntegerPow, IsFinite, Pjit,
    Reduce, Round, SelectN, Transpose,
};
use microjax::{
    Atom, Aval, BinaryOp, Buffer, Builder, CmpOp, DType, Error, HostArray, Literal, Primitive,
    ReduceOp, Scalar, UnaryOp,
};
use std::sync::Arc;

use crate::common;
use common::kernels::{arr, run, scalar};
use common::{
    bf16s, bools, broadcast_in_dim, eval, f16s, f32s, f64s, i32s, i64s, i8s, iota, keys, reduce,
    reshape, squeeze, transpose, u32s, u8s, unravel,
};

// ------------------------------------------------------------- helpers

fn un(op: UnaryOp, x: &HostArray) -> HostArray {
    run(Primitive::Unary(op), &[x])
}

fn bin(op: BinaryOp, x: &HostArray, y: &HostArray) -> HostArray {
    run(Primitive::Binary(op), &[x, y])
}

fn cmp(op: CmpOp, x: &HostArray, y: &HostArray) -> Vec<bool> {
    bools(&run(Primitive::Compare(op), &[x, y]))
}

fn close(a: &[f32], b: &[f32], tol: f32) {
    assert_eq!(a.len(), b.len(), "{a:?} vs {b:?}");
    for (x, y) in a.iter().zip(b) {
        assert!(
            (x - y).abs() <= tol * (1.0 + y.abs()),
            "{a:?} vs {b:?} (at {x} vs {y})"
        );
    }
}

fn bits_eq(a: &[f32], b: &[f32]) {
    let ab: Vec<u32> = a.iter().map(|x| x.to_bits()).collect();
    let bb: Vec<u32> = b.iter().map(|x| x.to_bits()).collect();
    assert_eq!(ab, bb, "{a:?} vs {b:?}");
}

// ---------------------------------------------------------------- unary

#[test]
#[allow(clippy::type_complexity)]
fn unary_f32_values() {
    let x = arr(&[5], vec![-2.0f32, -0.5, 0.0, 0.5, 3.0]);
    let xs = f32s(&x);
    let cases: [(UnaryOp, fn(f32) -> f32); 6] = [
        (UnaryOp::Neg, |v| -v),
        (UnaryOp::Exp, f32::exp),
        (UnaryOp::Sin, f32::sin),
        (UnaryOp::Cos, f32::cos),
        (UnaryOp::Tanh, |v| (f64::from(v)).tanh() as f32),
        (UnaryOp::Abs, f32::abs),
    ];
    for (op, f) in cases {
        let want: Vec<f32> = xs.iter().map(|&v| f(v)).collect();
        close(&f32s(&un(op, &x)), &want, 2e-7);
    }
    let pos = arr(&[3], vec![0.25f32, 1.0, 16.0]);
    close(
        &f32s(&un(UnaryOp::Log, &pos)),
        &[-1.386_294_4, 0.0, 2.772_588_7],
        1e-7,
    );
    close(&f32s(&un(UnaryOp::Sqrt, &pos)), &[0.5, 1.0, 4.0], 0.0);
    let lg = f32s(&un(UnaryOp::Logistic, &x));
    let want: Vec<f32> = xs
        .iter()
        .map(|&v| (1.0 / (1.0 + (-f64::from(v)).exp())) as f32)
        .collect();
    close(&lg, &want, 2e-7);
}

/// Large f32/f64 operands of the vector-math unary ops run split over
/// the pool's threads into a pooled (stale) output: every element written,
/// the same bits as the operand taken in small pieces (below the split
/// threshold), at every partition count and SIMD level.
#[test]
fn large_unary_operands_split_over_threads_give_the_small_kernel_bits() {
    use microjax::array::pool;
    use microjax::exec::ExecCtx;
    use microjax::internals::prims_kernel_vmath::with_simd_level;
    use microjax::prims::kernel;
    use std::num::NonZeroUsize;
    let n = 3 * 65_536 + 77;
    let val = |i: usize| ((i.wrapping_mul(2_654_435_761) >> 5) % 20_011) as f64 / 2_001.0 - 4.9;
    let ops = [
        UnaryOp::Exp,
        UnaryOp::Tanh,
        UnaryOp::Sin,
        UnaryOp::Log,
        UnaryOp::Sqrt,
    ];
    let pieces = |op: UnaryOp, x: &HostArray| -> Vec<u64> {
        let (dt, piece) = (x.dtype(), 1000);
        let vals: Vec<f64> = match x.buffer() {
            Buffer::F32(v) => v.iter().map(|&e| f64::from(e)).collect(),
            Buffer::F64(v) => v.to_vec(),
            _ => unreachable!(),
        };
        let mut out = Vec::new();
        for c in vals.chunks(piece) {
            let part = match dt {
                DType::F32 => arr(&[c.len()], c.iter().map(|&e| e as f32).collect::<Vec<_>>()),
                _ => arr(&[c.len()], c.to_vec()),
            };
            out.extend(bits_of(&un(op, &part)));
        }
        out
    };
    for dt in [DType::F32, DType::F64] {
        for op in ops {
            // log and sqrt of |x| + 0.5: finite results (no NaN payloads).
            let positive = matches!(op, UnaryOp::Log | UnaryOp::Sqrt);
            let v: Vec<f64> = (0..n)
                .map(|i| if positive { val(i).abs() + 0.5 } else { val(i) })
                .collect();
            let x = match dt {
                DType::F32 => arr(&[n], v.iter().map(|&e| e as f32).collect::<Vec<_>>()),
                _ => arr(&[n], v.clone()),
            };
            let want = pieces(op, &x);
            for level in common::kernels::simd_levels() {
                for parts in [1usize, 2, 3, 4] {
                    // A stale pooled buffer of the output's size first.
                    let mut stale = pool::take(dt, n).unwrap();
                    if let Buffer::F32(e) = &mut stale {
                        e.make_mut().fill(f32::NAN);
                    }
                    if let Buffer::F64(e) = &mut stale {
                        e.make_mut().fill(f64::NAN);
                    }
                    pool::give(stale);
                    let ctx = ExecCtx::current_default().with_partitions(NonZeroUsize::new(parts));
                    let prim = Primitive::Unary(op);
                    let got = with_simd_level(level, || kernel::eval(&ctx, &prim, &[&x]).unwrap());
                    let got = bits_of(&got[0]);
                    let first_bad = got.iter().zip(&want).position(|(a, b)| a != b);
                    assert!(
                        got.len() == want.len() && first_bad.is_none(),
                        "{op:?} {dt:?} at {level:?}, {parts} parts: element {first_bad:?} differs"
                    );
                }
            }
        }
    }
}

fn bits_of(h: &HostArray) -> Vec<u64> {
    match h.buffer() {
        Buffer::F32(v) => v.iter().map(|e| u64::from(e.to_bits())).collect(),
        Buffer::F64(v) => v.iter().map(|e| e.to_bits()).collect(),
        other => panic!("float buffer expected, got {:?}", other.dtype()),
    }
}

#[test]
fn unary_special_values() {
    let x = arr(&[4], vec![f32::NAN, -0.0f32, 0.0, -7.0]);
    let s = f32s(&un(UnaryOp::Sign, &x));
    assert!(s[0].is_nan());
    assert!(s[1] == 0.0 && s[1].is_sign_negative());
    assert!(s[2] == 0.0 && s[2].is_sign_positive());
    assert_eq!(s[3], -1.0);
    assert!(f32s(&un(UnaryOp::Log, &scalar(-1.0f32)))[0].is_nan());
    assert_eq!(
        f32s(&un(UnaryOp::Log, &scalar(0.0f32)))[0],
        f32::NEG_INFINITY
    );
    // Logistic is stable at both ends (no NaN, no overflow).
    let big = arr(&[4], vec![-200.0f32, -100.0, 100.0, 200.0]);
    let l = f32s(&un(UnaryOp::Logistic, &big));
    assert_eq!(l[0], 0.0);
    assert!(l[1] > 0.0 && l[1] < 1e-43, "{}", l[1]);
    assert_eq!(l[2], 1.0);
    assert_eq!(l[3], 1.0);
    let l64 = f64s(&un(UnaryOp::Logistic, &arr(&[2], vec![-800.0f64, 40.0])));
    assert_eq!(l64[0], 0.0);
    assert_eq!(l64[1], 1.0 / (1.0 + (-40.0f64).exp()));
    let t = f32s(&un(UnaryOp::Tanh, &arr(&[3], vec![f32::NAN, 50.0, -50.0])));
    assert!(t[0].is_nan());
    assert_eq!(&t[1..], &[1.0, -1.0]);
}

#[test]
fn unary_f64_exact_against_std() {
    let v = vec![-3.5f64, -1.0, 0.1, 2.0, 10.0];
    let x = arr(&[5], v.clone());
    let want: Vec<f64> = v.iter().map(|x| x.tanh()).collect();
    assert_eq!(f64s(&un(UnaryOp::Tanh, &x)), want);
    let want: Vec<f64> = v.iter().map(|x| x.exp()).collect();
    assert_eq!(f64s(&un(UnaryOp::Exp, &x)), want);
}

/// Rounding an f32 to a half-precision type `H`, and widening it back.
type HalfConversions<H> = (fn(f32) -> H, fn(H) -> f32);

/// `op` on the half-precision array of `v` (rounded by `from`) equals
/// `f` computed in f32 on the widened (`to`) values, rounded back; returns
/// the operand.
fn half_unary_rounds_the_f32_result<H>(
    op: UnaryOp, v: &[f32], (from, to): HalfConversions<H>, read: fn(&HostArray) -> Vec<H>,
    f: fn(f32) -> f32,
) -> HostArray
where
    H: Copy + PartialEq + std::fmt::Debug,
    Vec<H>: Into<Buffer>,
{
    let x = arr(&[v.len()], v.iter().map(|&x| from(x)).collect::<Vec<_>>());
    let want: Vec<H> = v.iter().map(|&x| from(f(to(from(x))))).collect();
    assert_eq!(read(&un(op, &x)), want);
    x
}

#[test]
fn unary_half_types_compute_in_f32_and_round() {
    let v = [-1.5f32, 0.1, 0.7, 2.0];
    let f16_conv = (
        f16::from_f32 as fn(f32) -> f16,
        f16::to_f32 as fn(f16) -> f32,
    );
    half_unary_rounds_the_f32_result(UnaryOp::Exp, &v, f16_conv, f16s, f32::exp);
    let bf16_conv = (
        bf16::from_f32 as fn(f32) -> bf16,
        bf16::to_f32 as fn(bf16) -> f32,
    );
    let b = half_unary_rounds_the_f32_result(UnaryOp::Sin, &v, bf16_conv, bf16s, f32::sin);
    assert_eq!(
        bf16s(&un(UnaryOp::Neg, &b)),
        v.iter().map(|&x| bf16::from_f32(-x)).collect::<Vec<_>>()
    );
}

#[test]
fn unary_integer_edge_cases() {
    let x = arr(&[4], vec![i8::MIN, -3, 0, 5]);
    assert_eq!(i8s(&un(UnaryOp::Neg, &x)), vec![i8::MIN, 3, 0, -5]);
    assert_eq!(i8s(&un(UnaryOp::Abs, &x)), vec![i8::MIN, 3, 0, 5]);
    assert_eq!(i8s(&un(UnaryOp::Sign, &x)), vec![-1, -1, 0, 1]);
    let y = arr(&[3], vec![i32::MIN, -1, 7]);
    assert_eq!(i32s(&un(UnaryOp::Abs, &y)), vec![i32::MIN, 1, 7]);
    let u = arr(&[3], vec![0u8, 1, 200]);
    assert_eq!(u8s(&un(UnaryOp::Sign, &u)), vec![0, 1, 1]);
    assert_eq!(u8s(&un(UnaryOp::Neg, &u)), vec![0, 255, 56]);
    assert_eq!(u8s(&un(UnaryOp::Abs, &u)), vec![0, 1, 200]);
}

#[test]
fn unary_rejects_bad_dtypes() {
    let i = arr(&[2], vec![1i32, 2]);
    assert!(matches!(
        eval(&Primitive::Unary(UnaryOp::Exp), &[&i]),
        Err(Error::DType { .. })
    ));
    let b = arr(&[1], vec![true]);
    assert!(matches!(
        eval(&Primitive::Unary(UnaryOp::Neg), &[&b]),
        Err(Error::DType { .. })
    ));
}

// --------------------------------------------------------------- binary

#[test]
fn binary_f32_and_scalar_broadcast() {
    let x = arr(&[2, 2], vec![1.0f32, 2.0, 3.0, 4.0]);
    let y = arr(&[2, 2], vec![0.5f32, -1.0, 2.0, 8.0]);
    assert_eq!(f32s(&bin(BinaryOp::Add, &x, &y)), vec![1.5, 1.0, 5.0, 12.0]);
    assert_eq!(f32s(&bin(BinaryOp::Sub, &x, &y)), vec![0.5, 3.0, 1.0, -4.0]);
    assert_eq!(
        f32s(&bin(BinaryOp::Mul, &x, &y)),
        vec![0.5, -2.0, 6.0, 32.0]
    );
    assert_eq!(f32s(&bin(BinaryOp::Div, &x, &y)), vec![2.0, -2.0, 1.5, 0.5]);
    assert_eq!(
        f32s(&bin(BinaryOp::Pow, &x, &y)),
        vec![1.0, 0.5, 9.0, 65536.0]
    );
    assert_eq!(f32s(&bin(BinaryOp::Max, &x, &y)), vec![1.0, 2.0, 3.0, 8.0]);
    assert_eq!(f32s(&bin(BinaryOp::Min, &x, &y)), vec![0.5, -1.0, 2.0, 4.0]);
    // Rank-0 operand on either side.
    let s = scalar(10.0f32);
    let r = bin(BinaryOp::Sub, &s, &x);
    assert_eq!(r.shape(), &[2, 2]);
    assert_eq!(f32s(&r), vec![9.0, 8.0, 7.0, 6.0]);
    assert_eq!(f32s(&bin(BinaryOp::Div, &x, &s)), vec![0.1, 0.2, 0.3, 0.4]);
    // Rank 0 with rank 0.
    let r = bin(BinaryOp::Mul, &s, &scalar(3.0f32));
    assert_eq!(r.shape(), &[] as &[usize]);
    assert_eq!(f32s(&r), vec![30.0]);
}

#[test]
fn binary_empty_operands() {
    let e = arr(&[0, 3], Vec::<f32>::new());
    let r = bin(BinaryOp::Add, &e, &e);
    assert_eq!(r.shape(), &[0, 3]);
    assert_eq!(r.size(), 0);
    let r = bin(BinaryOp::Mul, &scalar(2.0f32), &e);
    assert_eq!(r.shape(), &[0, 3]);
    assert_eq!(r.size(), 0);
    let ei = arr(&[0], Vec::<i32>::new());
    assert_eq!(
        i32s(&bin(BinaryOp::Div, &ei, &scalar(0i32))),
        Vec::<i32>::new()
    );
}

#[test]
fn binary_max_min_propagate_nan() {
    let a = arr(&[3], vec![f32::NAN, 1.0, 2.0]);
    let b = arr(&[3], vec![1.0f32, f32::NAN, 0.0]);
    for op in [BinaryOp::Max, BinaryOp::Min] {
        let r = f32s(&bin(op, &a, &b));
        assert!(r[0].is_nan() && r[1].is_nan(), "{op:?}: {r:?}");
    }
    let a = arr(&[2], vec![f64::NAN, 3.0]);
    let r = f64s(&bin(BinaryOp::Max, &scalar(0.0f64), &a));
    assert!(r[0].is_nan());
    assert_eq!(r[1], 3.0);
}

#[test]
fn binary_integer_semantics_follow_xla() {
    let a = arr(&[4], vec![127i8, -128, 100, -7]);
    let b = arr(&[4], vec![1i8, -1, 3, 2]);
    assert_eq!(i8s(&bin(BinaryOp::Add, &a, &b)), vec![-128, 127, 103, -5]);
    assert_eq!(i8s(&bin(BinaryOp::Sub, &a, &b)), vec![126, -127, 97, -9]);
    assert_eq!(i8s(&bin(BinaryOp::Mul, &a, &b)), vec![127, -128, 44, -14]);
    // Division truncates toward zero; MIN / -1 = MIN.
    assert_eq!(i8s(&bin(BinaryOp::Div, &a, &b)), vec![127, -128, 33, -3]);
    let n = arr(&[4], vec![7i32, -7, i32::MIN, 5]);
    let d = arr(&[4], vec![-2i32, 2, -1, 0]);
    assert_eq!(
        i32s(&bin(BinaryOp::Div, &n, &d)),
        vec![-3, -3, i32::MIN, -1]
    );
    let n64 = arr(&[2], vec![i64::MIN, -9]);
    let d64 = arr(&[2], vec![-1i64, 0]);
    assert_eq!(i64s(&bin(BinaryOp::Div, &n64, &d64)), vec![i64::MIN, -1]);
    // Unsigned: x / 0 = MAX, wrap-around.
    let u = arr(&[3], vec![0u8, 9, 250]);
    let v = arr(&[3], vec![1u8, 0, 10]);
    assert_eq!(u8s(&bin(BinaryOp::Sub, &u, &v)), vec![255, 9, 240]);
    assert_eq!(u8s(&bin(BinaryOp::Div, &u, &v)), vec![0, 255, 25]);
    assert_eq!(u8s(&bin(BinaryOp::Add, &u, &v)), vec![1, 9, 4]);
    assert_eq!(u8s(&bin(BinaryOp::Mul, &u, &scalar(2u8))), vec![0, 18, 244]);
    let w = arr(&[2], vec![7u32, 0]);
    assert_eq!(
        u32s(&bin(BinaryOp::Div, &w, &scalar(0u32))),
        vec![u32::MAX, u32::MAX]
    );
    assert_eq!(i32s(&bin(BinaryOp::Max, &n, &d)), vec![7, 2, -1, 5]);
    assert_eq!(i32s(&bin(BinaryOp::Min, &n, &d)), vec![-2, -7, i32::MIN, 0]);
    // pow is float-only.
    assert!(matches!(
        eval(&Primitive::Binary(BinaryOp::Pow), &[&n, &d]),
        Err(Error::DType { .. })
    ));
}

#[test]
fn binary_bool_max_min_are_or_and() {
    let a = arr(&[4], vec![false, false, true, true]);
    let b = arr(&[4], vec![false, true, false, true]);
    assert_eq!(
        bools(&bin(BinaryOp::Max, &a, &b)),
        vec![false, true, true, true]
    );
    assert_eq!(
        bools(&bin(BinaryOp::Min, &a, &b)),
        vec![false, false, false, true]
    );
    assert!(matches!(
        eval(&Primitive::Binary(BinaryOp::Add), &[&a, &b]),
        Err(Error::DType { .. })
    ));
}

#[test]
fn binary_half_types_round_once() {
    let a: Vec<f16> = [0.1f32, 1000.0, 3.0]
        .iter()
        .map(|&x| f16::from_f32(x))
        .collect();
    let b: Vec<f16> = [0.2f32, 0.3, 7.0]
        .iter()
        .map(|&x| f16::from_f32(x))
        .collect();
    let want: Vec<f16> = a
        .iter()
        .zip(&b)
        .map(|(x, y)| f16::from_f32(x.to_f32() / y.to_f32()))
        .collect();
    assert_eq!(
        f16s(&bin(BinaryOp::Div, &arr(&[3], a), &arr(&[3], b))),
        want
    );
}

#[test]
fn binary_shape_and_dtype_errors() {
    let a = arr(&[2], vec![1.0f32, 2.0]);
    let b = arr(&[3], vec![1.0f32, 2.0, 3.0]);
    assert!(matches!(
        eval(&Primitive::Binary(BinaryOp::Add), &[&a, &b]),
        Err(Error::Shape { .. })
    ));
    let c = arr(&[2], vec![1i32, 2]);
    assert!(matches!(
        eval(&Primitive::Binary(BinaryOp::Add), &[&a, &c]),
        Err(Error::DType { .. })
    ));
    assert!(matches!(
        eval(&Primitive::Binary(BinaryOp::Add), &[&a]),
        Err(Error::Arity { .. })
    ));
}

// ---------------------------------------------------------- comparisons

#[test]
fn comparisons() {
    let a = arr(&[4], vec![1.0f32, 2.0, f32::NAN, -0.0]);
    let b = arr(&[4], vec![2.0f32, 2.0, f32::NAN, 0.0]);
    assert_eq!(cmp(CmpOp::Eq, &a, &b), vec![false, true, false, true]);
    assert_eq!(cmp(CmpOp::Ne, &a, &b), vec![true, false, true, false]);
    assert_eq!(cmp(CmpOp::Lt, &a, &b), vec![true, false, false, false]);
    assert_eq!(cmp(CmpOp::Le, &a, &b), vec![true, true, false, true]);
    assert_eq!(cmp(CmpOp::Gt, &a, &b), vec![false, false, false, false]);
    assert_eq!(cmp(CmpOp::Ge, &a, &b), vec![false, true, false, true]);
    let i = arr(&[3], vec![-1i32, 0, 1]);
    assert_eq!(cmp(CmpOp::Gt, &i, &scalar(0i32)), vec![false, false, true]);
    assert_eq!(cmp(CmpOp::Le, &scalar(0i32), &i), vec![false, true, true]);
    let u = arr(&[2], vec![0u8, 255]);
    assert_eq!(cmp(CmpOp::Lt, &u, &scalar(128u8)), vec![true, false]);
    let t = arr(&[2], vec![false, true]);
    assert_eq!(cmp(CmpOp::Lt, &t, &scalar(true)), vec![true, false]);
    let h = arr(&[2], vec![bf16::from_f32(1.5), bf16::NAN]);
    assert_eq!(cmp(CmpOp::Ge, &h, &scalar(bf16::ONE)), vec![true, false]);
    let r = run(Primitive::Compare(CmpOp::Eq), &[&a, &b]);
    assert_eq!(r.dtype(), DType::Bool);
    assert_eq!(r.shape(), &[4]);
}

#[test]
fn comparisons_of_keys_and_float0() {
    let k1 = HostArray::new(vec![2], Buffer::Key(vec![1, 2, 3, 4].into())).unwrap();
    let k2 = HostArray::new(vec![2], Buffer::Key(vec![1, 2, 3, 5].into())).unwrap();
    assert_eq!(cmp(CmpOp::Eq, &k1, &k2), vec![true, false]);
    assert_eq!(cmp(CmpOp::Ne, &k1, &k2), vec![false, true]);
    assert!(matches!(
        eval(&Primitive::Compare(CmpOp::Lt), &[&k1, &k2]),
        Err(Error::DType { .. })
    ));
    let z = HostArray::new(vec![3], Buffer::Float0(3)).unwrap();
    assert_eq!(cmp(CmpOp::Eq, &z, &z), vec![true; 3]);
    assert_eq!(cmp(CmpOp::Lt, &z, &z), vec![false; 3]);
}

// ---------------------------------------------------------- integer_pow

fn ipow(y: i32, x: &HostArray) -> HostArray {
    run(Primitive::IntegerPow(IntegerPow { y }), &[x])
}

#[test]
fn integer_pow_floats() {
    let x = arr(&[3], vec![2.0f32, -3.0, 0.5]);
    assert_eq!(f32s(&ipow(0, &x)), vec![1.0, 1.0, 1.0]);
    assert_eq!(f32s(&ipow(1, &x)), vec![2.0, -3.0, 0.5]);
    assert_eq!(f32s(&ipow(2, &x)), vec![4.0, 9.0, 0.25]);
    assert_eq!(f32s(&ipow(3, &x)), vec![8.0, -27.0, 0.125]);
    assert_eq!(f32s(&ipow(5, &x)), vec![32.0, -243.0, 0.03125]);
    assert_eq!(f32s(&ipow(10, &x)), vec![1024.0, 59049.0, 0.0009765625]);
    assert_eq!(f32s(&ipow(-1, &x)), vec![0.5, -1.0 / 3.0, 2.0]);
    assert_eq!(f32s(&ipow(-2, &x)), vec![0.25, 1.0 / 9.0, 4.0]);
    assert_eq!(f32s(&ipow(-3, &x)), vec![0.125, -1.0 / 27.0, 8.0]);
    assert_eq!(f32s(&ipow(-1, &scalar(0.0f32))), vec![f32::INFINITY]);
    assert_eq!(f32s(&ipow(0, &scalar(f32::NAN))), vec![1.0]);
    let h = arr(&[2], vec![f16::from_f32(3.0), f16::from_f32(-0.5)]);
    assert_eq!(
        f16s(&ipow(3, &h)),
        vec![f16::from_f32(27.0), f16::from_f32(-0.125)]
    );
    assert_eq!(f64s(&ipow(7, &scalar(2.0f64))), vec![128.0]);
}

#[test]
fn integer_pow_ints_wrap_and_reject_negative_exponents() {
    let x = arr(&[4], vec![2i32, -3, 0, 1 << 16]);
    assert_eq!(i32s(&ipow(3, &x)), vec![8, -27, 0, 0]);
    assert_eq!(i32s(&ipow(2, &x)), vec![4, 9, 0, 0]);
    assert_eq!(i32s(&ipow(0, &x)), vec![1, 1, 1, 1]);
    assert_eq!(u8s(&ipow(2, &arr(&[2], vec![16u8, 3]))), vec![0, 9]);
    let e = eval(&Primitive::IntegerPow(IntegerPow { y: -1 }), &[&x]).unwrap_err();
    assert!(matches!(e, Error::Param { param: "y", .. }), "{e}");
    assert!(matches!(
        eval(
            &Primitive::IntegerPow(IntegerPow { y: 2 }),
            &[&arr(&[1], vec![true])]
        ),
        Err(Error::DType { .. })
    ));
}

// ------------------------------------------------------------- select_n

#[test]
fn select_n_bool_and_int_predicates() {
    let c0 = arr(&[4], vec![0.0f32, 1.0, 2.0, 3.0]);
    let c1 = arr(&[4], vec![10.0f32, 11.0, 12.0, 13.0]);
    let c2 = arr(&[4], vec![20.0f32, 21.0, 22.0, 23.0]);
    let p = arr(&[4], vec![true, false, false, true]);
    let r = run(Primitive::SelectN(SelectN), &[&p, &c0, &c1]);
    assert_eq!(f32s(&r), vec![10.0, 1.0, 2.0, 13.0]);
    // Scalar predicate picks a whole case.
    assert_eq!(
        f32s(&run(
            Primitive::SelectN(SelectN),
            &[&scalar(true), &c0, &c1]
        )),
        f32s(&c1)
    );
    assert_eq!(
        f32s(&run(
            Primitive::SelectN(SelectN),
            &[&scalar(2i32), &c0, &c1, &c2]
        )),
        f32s(&c2)
    );
    // Int predicate, out-of-range values clamp to [0, n-1].
    let ip = arr(&[4], vec![2i32, -5, 1, 9]);
    let r = run(Primitive::SelectN(SelectN), &[&ip, &c0, &c1, &c2]);
    assert_eq!(f32s(&r), vec![20.0, 1.0, 12.0, 23.0]);
    let ip2 = arr(&[4], vec![1i32, 0, 7, -1]);
    assert_eq!(
        f32s(&run(Primitive::SelectN(SelectN), &[&ip2, &c0, &c1])),
        vec![10.0, 1.0, 12.0, 3.0]
    );
    assert_eq!(
        f32s(&run(Primitive::SelectN(SelectN), &[&ip2, &c0])),
        vec![0.0, 1.0, 2.0, 3.0]
    );
    let ii = run(
        Primitive::SelectN(SelectN),
        &[
            &p,
            &arr(&[4], vec![1i64, 2, 3, 4]),
            &arr(&[4], vec![-1i64, -2, -3, -4]),
        ],
    );
    assert_eq!(i64s(&ii), vec![-1, 2, 3, -4]);
    // Too many cases for a bool predicate, mismatched case shapes.
    assert!(eval(&Primitive::SelectN(SelectN), &[&p, &c0, &c1, &c2]).is_err());
    assert!(eval(&Primitive::SelectN(SelectN), &[&p, &c0, &scalar(1.0f32)]).is_err());
}

#[test]
fn select_n_keys_and_float0() {
    let k0 = HostArray::new(vec![2], Buffer::Key(vec![1, 2, 3, 4].into())).unwrap();
    let k1 = HostArray::new(vec![2], Buffer::Key(vec![5, 6, 7, 8].into())).unwrap();
    let p = arr(&[2], vec![true, false]);
    let r = run(Primitive::SelectN(SelectN), &[&p, &k0, &k1]);
    assert_eq!(keys(&r), vec![5, 6, 3, 4]);
    let z = HostArray::new(vec![2], Buffer::Float0(2)).unwrap();
    let r = run(Primitive::SelectN(SelectN), &[&p, &z, &z]);
    assert_eq!(r.buffer(), &Buffer::Float0(2));
}

// ------------------------------------------------- convert_element_type

fn convert(x: &HostArray, to: DType) -> HostArray {
    run(
        Primitive::ConvertElementType(ConvertElementType {
            new_dtype: to,
            weak_type: false,
        }),
        &[x],
    )
}

#[test]
fn convert_float_to_int_truncates_and_saturates() {
    let x = arr(
        &[8],
        vec![
            2.7f32,
            -2.7,
            f32::NAN,
            1e10,
            -1e10,
            f32::INFINITY,
            -0.5,
            300.0,
        ],
    );
    assert_eq!(
        i32s(&convert(&x, DType::I32)),
        vec![2, -2, 0, i32::MAX, i32::MIN, i32::MAX, 0, 300]
    );
    assert_eq!(
        u8s(&convert(&x, DType::U8)),
        vec![2, 0, 0, 255, 0, 255, 0, 255]
    );
    assert_eq!(
        i8s(&convert(&x, DType::I8)),
        vec![2, -2, 0, 127, -128, 127, 0, 127]
    );
    let h = arr(&[2], vec![f16::from_f32(-3.75), f16::INFINITY]);
    assert_eq!(i32s(&convert(&h, DType::I32)), vec![-3, i32::MAX]);
}

#[test]
fn convert_int_int_wraps_and_bool_rules() {
    let x = arr(&[4], vec![300i32, -1, 128, -129]);
    assert_eq!(i8s(&convert(&x, DType::I8)), vec![44, -1, -128, 127]);
    assert_eq!(u8s(&convert(&x, DType::U8)), vec![44, 255, 128, 127]);
    assert_eq!(
        u32s(&convert(&x, DType::U32)),
        vec![300, u32::MAX, 128, (-129i32) as u32]
    );
    let u = arr(&[2], vec![u32::MAX, 5]);
    assert_eq!(i64s(&convert(&u, DType::I64)), vec![4_294_967_295, 5]);
    assert_eq!(i32s(&convert(&u, DType::I32)), vec![-1, 5]);
    let f = arr(&[4], vec![0.0f32, -0.0, f32::NAN, 0.25]);
    assert_eq!(
        bools(&convert(&f, DType::Bool)),
        vec![false, false, true, true]
    );
    assert_eq!(bools(&convert(&x, DType::Bool)), vec![true; 4]);
    let b = arr(&[2], vec![true, false]);
    assert_eq!(f32s(&convert(&b, DType::F32)), vec![1.0, 0.0]);
    assert_eq!(i32s(&convert(&b, DType::I32)), vec![1, 0]);
    assert_eq!(
        bf16s(&convert(&b, DType::BF16)),
        vec![bf16::ONE, bf16::ZERO]
    );
}

#[test]
fn convert_between_floats() {
    let x = arr(&[3], vec![0.1f64, 65520.0, 1e-10]);
    let h = f16s(&convert(&x, DType::F16));
    assert_eq!(
        h,
        vec![f16::from_f64(0.1), f16::INFINITY, f16::from_f64(1e-10)]
    );
    let b = bf16s(&convert(&x, DType::BF16));
    assert_eq!(b[0], bf16::from_f64(0.1));
    let f = f32s(&convert(&x, DType::F32));
    assert_eq!(f, vec![0.1f32, 65520.0, 1e-10]);
    let back = f64s(&convert(&arr(&[1], vec![bf16::from_f32(1.5)]), DType::F64));
    assert_eq!(back, vec![1.5]);
    let big = arr(&[1], vec![u64::MAX]);
    assert_eq!(f32s(&convert(&big, DType::F32)), vec![u64::MAX as f32]);
    let i = arr(&[1], vec![(1i64 << 53) + 1]);
    assert_eq!(
        f64s(&convert(&i, DType::F64)),
        vec![((1i64 << 53) + 1) as f64]
    );
}

#[test]
fn convert_to_float0_and_same_dtype() {
    let x = arr(&[2, 3], vec![1i32; 6]);
    let z = convert(&x, DType::Float0);
    assert_eq!(z.buffer(), &Buffer::Float0(6));
    assert_eq!(z.shape(), &[2, 3]);
    let same = convert(&x, DType::I32);
    assert_eq!(same, x);
    assert!(eval(
        &Primitive::ConvertElementType(ConvertElementType {
            new_dtype: DType::Key,
            weak_type: false
        }),
        &[&x]
    )
    .is_err());
}

// ------------------------------------------------------ structural ops

#[test]
fn broadcast_in_dim_cases() {
    let x = arr(&[3], vec![1i32, 2, 3]);
    let b = |x: &HostArray, shape: &[usize], bd: &[usize]| {
        run(
            Primitive::BroadcastInDim(BroadcastInDim {
                shape: shape.to_vec(),
                broadcast_dimensions: bd.to_vec(),
            }),
            &[x],
        )
    };
    let r = b(&x, &[2, 3], &[1]);
    assert_eq!(r.shape(), &[2, 3]);
    assert_eq!(i32s(&r), vec![1, 2, 3, 1, 2, 3]);
    assert_eq!(i32s(&b(&x, &[3, 2], &[0])), vec![1, 1, 2, 2, 3, 3]);
    let y = arr(&[1, 3], vec![1.0f32, 2.0, 3.0]);
    assert_eq!(
        f32s(&b(&y, &[2, 2, 3], &[1, 2])),
        vec![1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 1.0, 2.0, 3.0]
    );
    // Rank 0 to a matrix; a size-1 axis stretched.
    assert_eq!(i32s(&b(&scalar(7i32), &[2, 2], &[])), vec![7; 4]);
    let col = arr(&[2, 1], vec![1u8, 2]);
    assert_eq!(u8s(&b(&col, &[2, 3], &[0, 1])), vec![1, 1, 1, 2, 2, 2]);
    // Empty output, keys (two words per element), float0.
    assert_eq!(b(&x, &[0, 3], &[1]).size(), 0);
    let k = HostArray::new(vec![2], Buffer::Key(vec![1, 2, 3, 4].into())).unwrap();
    assert_eq!(keys(&b(&k, &[2, 2], &[0])), vec![1, 2, 1, 2, 3, 4, 3, 4]);
    assert_eq!(keys(&b(&k, &[2, 2], &[1])), vec![1, 2, 3, 4, 1, 2, 3, 4]);
    let z = HostArray::new(vec![2], Buffer::Float0(2)).unwrap();
    assert_eq!(b(&z, &[3, 2], &[1]).buffer(), &Buffer::Float0(6));
    // Decreasing broadcast_dimensions are rejected by the shape rule.
    assert!(eval(
        &broadcast_in_dim(&[3, 3], &[1, 0]),
        &[&arr(&[3, 3], vec![0i32; 9])]
    )
    .is_err());
}

#[test]
fn reshape_and_squeeze() {
    let x = arr(&[2, 1, 3], vec![1i32, 2, 3, 4, 5, 6]);
    let r = run(reshape(&[3, 2]), &[&x]);
    assert_eq!(r.shape(), &[3, 2]);
    assert_eq!(i32s(&r), vec![1, 2, 3, 4, 5, 6]);
    let s = run(squeeze(&[1]), &[&x]);
    assert_eq!(s.shape(), &[2, 3]);
    assert_eq!(i32s(&s), vec![1, 2, 3, 4, 5, 6]);
    assert!(eval(&reshape(&[4]), &[&x]).is_err());
    assert!(eval(&squeeze(&[0]), &[&x]).is_err());
    let k = HostArray::new(vec![1, 2], Buffer::Key(vec![1, 2, 3, 4].into())).unwrap();
    let s = run(squeeze(&[0]), &[&k]);
    assert_eq!(s.shape(), &[2]);
    assert_eq!(keys(&s), vec![1, 2, 3, 4]);
}

/// Naive N-d transpose through multi-indices.
fn naive_transpose<T: Copy>(v: &[T], shape: &[usize], perm: &[usize]) -> Vec<T> {
    let out_shape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
    let n: usize = shape.iter().product();
    let mut out = Vec::with_capacity(n);
    for flat in 0..n {
        let idx = unravel(flat, &out_shape);
        let mut src = 0;
        for (ax, &len) in shape.iter().enumerate() {
            let j = perm.iter().position(|&p| p == ax).unwrap();
            src = src * len + idx[j];
        }
        out.push(v[src]);
    }
    out
}

#[test]
fn transpose_3d_all_permutations() {
    let shape = [2usize, 3, 4];
    let v: Vec<i32> = (0..24).collect();
    let x = arr(&shape, v.clone());
    let vf: Vec<f64> = v.iter().map(|&i| f64::from(i) * 0.5).collect();
    let xf = arr(&shape, vf.clone());
    let perms = [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ];
    for perm in perms {
        let p = Primitive::Transpose(Transpose {
            permutation: perm.to_vec(),
        });
        let r = run(p.clone(), &[&x]);
        let want_shape: Vec<usize> = perm.iter().map(|&a| shape[a]).collect();
        assert_eq!(r.shape(), want_shape.as_slice());
        assert_eq!(i32s(&r), naive_transpose(&v, &shape, &perm), "{perm:?}");
        assert_eq!(f64s(&run(p, &[&xf])), naive_transpose(&vf, &shape, &perm));
    }
    // A larger one that takes the tiled path, with a size-1 axis.
    let shape = [37usize, 1, 45];
    let v: Vec<u8> = (0..37 * 45).map(|i| (i % 251) as u8).collect();
    let r = run(transpose(&[2, 1, 0]), &[&arr(&shape, v.clone())]);
    assert_eq!(u8s(&r), naive_transpose(&v, &shape, &[2, 1, 0]));
    // Keys move as whole elements.
    let k = HostArray::new(vec![2, 2], Buffer::Key((0..8).collect())).unwrap();
    let r = run(transpose(&[1, 0]), &[&k]);
    assert_eq!(keys(&r), vec![0, 1, 4, 5, 2, 3, 6, 7]);
    assert!(eval(&transpose(&[0, 0, 1]), &[&x]).is_err());
}

#[test]
fn iota_values() {
    let r = run(iota(DType::I32, &[2, 3], 1), &[]);
    assert_eq!(i32s(&r), vec![0, 1, 2, 0, 1, 2]);
    let r = run(iota(DType::F32, &[3, 2], 0), &[]);
    assert_eq!(f32s(&r), vec![0.0, 0.0, 1.0, 1.0, 2.0, 2.0]);
    let r = run(iota(DType::U8, &[300], 0), &[]);
    assert_eq!(u8s(&r)[299], 43); // wraps like a convert from int
    let r = run(iota(DType::BF16, &[2, 2, 2], 2), &[]);
    assert_eq!(bf16s(&r), [bf16::ZERO, bf16::ONE].repeat(4));
    let r = run(iota(DType::I64, &[0, 4], 1), &[]);
    assert_eq!(r.size(), 0);
}

// --------------------------------------------------- programs and pjit

#[test]
fn builder_program_with_nested_pjit() {
    // inner(a, b) = sin(a) * b + 2
    let mut ib = Builder::new();
    let a = ib.add_input(Aval::new(vec![3], DType::F32)).unwrap();
    let bb = ib.add_input(Aval::new(vec![3], DType::F32)).unwrap();
    let s = ib.unary(UnaryOp::Sin, Atom::Var(a)).unwrap();
    let m = ib.binary(BinaryOp::Mul, s, Atom::Var(bb)).unwrap();
    let two = Builder::literal(Literal::new(Scalar::Float(2.0), DType::F32, true));
    let o = ib.binary(BinaryOp::Add, m, two).unwrap();
    let inner = Arc::new(ib.build(vec![o.clone(), Atom::Var(a)]).unwrap());

    // middle(x) = pjit(inner)(x, x) with a const c added to the first output
    let mut mb = Builder::new();
    let x = mb.add_input(Aval::new(vec![3], DType::F32)).unwrap();
    let c = mb
        .add_const(Arc::new(arr(&[3], vec![1.0f32, 2.0, 3.0])), false)
        .unwrap();
    let outs = mb
        .add_eqn(
            Primitive::Pjit(Pjit {
                jaxpr: inner.clone(),
                name: "inner".into(),
            }),
            vec![Atom::Var(x), Atom::Var(x)],
            None,
        )
        .unwrap();
    let y = mb
        .binary(BinaryOp::Add, Atom::Var(outs[0]), Atom::Var(c))
        .unwrap();
    let middle = Arc::new(mb.build(vec![y, Atom::Var(outs[1])]).unwrap());

    // outer(x) = reduce_sum(pjit(middle)(x)[0]), pjit(middle)(x)[1]
    let mut ob = Builder::new();
    let x = ob.add_input(Aval::new(vec![3], DType::F32)).unwrap();
    let outs = ob
        .add_eqn(
            Primitive::Pjit(Pjit {
                jaxpr: middle.clone(),
                name: "middle".into(),
            }),
            vec![Atom::Var(x)],
            None,
        )
        .unwrap();
    let total = ob
        .add_eqn1(reduce(ReduceOp::Sum, &[0]), vec![Atom::Var(outs[0])])
        .unwrap();
    let prog = ob.build(vec![total, Atom::Var(outs[1])]).unwrap();

    let xs = [0.5f32, -1.0, 2.0];
    let input = Arc::new(arr(&[3], xs.to_vec()));
    let res = eval_closed(&prog, std::slice::from_ref(&input)).unwrap();
    assert_eq!(res.len(), 2);
    let want: f32 = xs
        .iter()
        .zip([1.0f32, 2.0, 3.0])
        .map(|(&v, c)| v.sin() * v + 2.0 + c)
        .sum();
    let got = f32s(&res[0])[0];
    assert!((got - want).abs() < 1e-5, "{got} vs {want}");
    assert_eq!(res[0].shape(), &[] as &[usize]);
    assert_eq!(f32s(&res[1]), xs.to_vec());

    // The pjit kernel called directly gives the same as the interpreter.
    let direct = eval(
        &Primitive::Pjit(Pjit {
            jaxpr: middle,
            name: "middle".into(),
        }),
        &[&input],
    )
    .unwrap();
    assert_eq!(direct.len(), 2);
    let per_elem: Vec<f32> = xs
        .iter()
        .zip([1.0f32, 2.0, 3.0])
        .map(|(&v, c)| v.sin() * v + 2.0 + c)
        .collect();
    close(&f32s(&direct[0]), &per_elem, 1e-6);
    // A mistyped operand is rejected before anything runs.
    let bad = arr(&[2], vec![1.0f32, 2.0]);
    assert!(eval(
        &Primitive::Pjit(Pjit {
            jaxpr: inner,
            name: "inner".into(),
        }),
        &[&bad, &bad]
    )
    .is_err());
}

#[test]
fn interpreter_frees_and_reuses_values_correctly() {
    // x used by several equations after intermediate values are dropped.
    let mut b = Builder::new();
    let x = b.add_input(Aval::new(vec![4], DType::I32)).unwrap();
    let y = b.binary(BinaryOp::Mul, Atom::Var(x), Atom::Var(x)).unwrap();
    let z = b.binary(BinaryOp::Sub, y.clone(), Atom::Var(x)).unwrap();
    let w = b
        .add_eqn1(Primitive::Compare(CmpOp::Gt), vec![z.clone(), Atom::Var(x)])
        .unwrap();
    let s = b
        .add_eqn1(
            Primitive::SelectN(SelectN),
            vec![w, Atom::Var(x), z.clone()],
        )
        .unwrap();
    let prog = b.build(vec![s, y, z]).unwrap();
    let res = eval_closed(&prog, &[Arc::new(arr(&[4], vec![-2i32, 0, 1, 3]))]).unwrap();
    assert_eq!(i32s(&res[0]), vec![6, 0, 1, 6]);
    assert_eq!(i32s(&res[1]), vec![4, 0, 1, 9]);
    assert_eq!(i32s(&res[2]), vec![6, 0, 0, 6]);
}

#[test]
fn bf16_and_f16_bitwise_sanity() {
    // f32 kernels on exactly representable inputs are exact.
    let x = arr(&[3], vec![1.0f32, 2.0, 4.0]);
    bits_eq(
        &f32s(&un(UnaryOp::Sqrt, &x)),
        &[1.0, std::f32::consts::SQRT_2, 2.0],
    );
}

// ------------ integer ops, rounding, nextafter, clamp, scans, reductions

#[test]
fn integer_ops_follow_xla() {
    use microjax::prims::ArgOp;
    // rem: truncated, x % 0 = x, MIN % -1 = 0.
    let x = arr(&[5], vec![7i8, -7, 7, 5, i8::MIN]);
    let y = arr(&[5], vec![2i8, 2, -2, 0, -1]);
    assert_eq!(i8s(&bin(BinaryOp::Rem, &x, &y)), vec![1, -1, 1, 5, 0]);
    // shifts: amounts read as unsigned; over-wide gives 0 / sign fill.
    let x = arr(&[4], vec![-8i8, 3, -8, 1]);
    let s = arr(&[4], vec![1i8, 8, 9, -1]);
    assert_eq!(i8s(&bin(BinaryOp::ShiftLeft, &x, &s)), vec![-16, 0, 0, 0]);
    assert_eq!(
        i8s(&bin(BinaryOp::ShiftRightLogical, &x, &s)),
        vec![124, 0, 0, 0]
    );
    assert_eq!(
        i8s(&bin(BinaryOp::ShiftRightArithmetic, &x, &s)),
        vec![-4, 0, -1, 0]
    );
    let u = arr(&[3], vec![0b1011u8, 0, 255]);
    assert_eq!(u8s(&un(UnaryOp::PopulationCount, &u)), vec![3, 0, 8]);
    assert_eq!(u8s(&un(UnaryOp::Clz, &u)), vec![4, 8, 0]);
    assert_eq!(u8s(&un(UnaryOp::Not, &u)), vec![0b1111_0100, 255, 0]);
    let b = arr(&[2], vec![true, false]);
    assert_eq!(bools(&un(UnaryOp::Not, &b)), vec![false, true]);
    assert!(eval(&Primitive::Unary(UnaryOp::Not), &[&arr(&[1], vec![1.0f32])]).is_err());
    // argmax: the first maximum; a NaN wins.
    let v = arr(&[2, 3], vec![1.0f32, 3.0, 3.0, 2.0, f32::NAN, f32::NAN]);
    let am = run(
        Primitive::Arg(ArgReduce {
            op: ArgOp::Argmax,
            axis: 1,
            index_dtype: DType::I32,
        }),
        &[&v],
    );
    assert_eq!(i32s(&am), vec![1, 1]);
    let zero_axis = arr(&[0], Vec::<f32>::new());
    assert!(eval(
        &Primitive::Arg(ArgReduce {
            op: ArgOp::Argmin,
            axis: 0,
            index_dtype: DType::I32
        }),
        &[&zero_axis]
    )
    .is_err());
}

#[test]
fn rounding_clamp_scan_and_reduction_values() {
    use microjax::prims::{CumOp, RoundingMethod};
    let x = arr(&[4], vec![-2.5f32, -0.5, 0.5, 2.5]);
    let away = run(
        Primitive::Round(Round {
            rounding_method: RoundingMethod::AwayFromZero,
        }),
        &[&x],
    );
    assert_eq!(f32s(&away), vec![-3.0, -1.0, 1.0, 3.0]);
    let even = run(
        Primitive::Round(Round {
            rounding_method: RoundingMethod::ToNearestEven,
        }),
        &[&x],
    );
    assert_eq!(f32s(&even), vec![-2.0, -0.0, 0.0, 2.0]);
    let s = arr(&[3], vec![1.0f32, f32::INFINITY, f32::NAN]);
    assert_eq!(
        bools(&run(Primitive::IsFinite(IsFinite), &[&s])),
        vec![true, false, false]
    );
    // fmod keeps the dividend's sign.
    let r = bin(
        BinaryOp::Rem,
        &arr(&[2], vec![-7.5f64, 7.5]),
        &arr(&[2], vec![2.0f64, -2.0]),
    );
    assert_eq!(f64s(&r), vec![-1.5, 1.5]);
    // nextafter in f16 steps by one f16 ulp, not an f32 one.
    let h = arr(&[2], vec![f16::from_f32(1.0), f16::from_f32(0.0)]);
    let t = arr(&[2], vec![f16::from_f32(2.0), f16::from_f32(-1.0)]);
    let n = bin(BinaryOp::Nextafter, &h, &t);
    let Buffer::F16(nv) = n.buffer() else {
        panic!()
    };
    assert_eq!(nv[0].to_bits(), f16::from_f32(1.0).to_bits() + 1);
    assert_eq!(nv[1].to_bits(), 0x8001);
    // clamp with scalar bounds; NaN propagates.
    let c = run(
        Primitive::Clamp(Clamp),
        &[
            &scalar(0.0f32),
            &arr(&[4], vec![-1.0f32, 0.5, 2.0, f32::NAN]),
            &scalar(1.0f32),
        ],
    );
    let cv = f32s(&c);
    assert_eq!(&cv[..3], &[0.0, 0.5, 1.0]);
    assert!(cv[3].is_nan());
    // scans, forward and reverse.
    let m = arr(&[2, 3], vec![1.0f32, 3.0, 2.0, 4.0, 0.0, 5.0]);
    let scan = |op, reverse| {
        f32s(&run(
            Primitive::Cumulative(Cumulative {
                op,
                axis: 1,
                reverse,
            }),
            &[&m],
        ))
    };
    assert_eq!(scan(CumOp::Sum, false), vec![1.0, 4.0, 6.0, 4.0, 4.0, 9.0]);
    assert_eq!(scan(CumOp::Sum, true), vec![6.0, 5.0, 2.0, 9.0, 5.0, 5.0]);
    assert_eq!(scan(CumOp::Max, false), vec![1.0, 3.0, 3.0, 4.0, 4.0, 5.0]);
    assert_eq!(scan(CumOp::Prod, false), vec![1.0, 3.0, 6.0, 4.0, 0.0, 0.0]);
    let lse = scan(CumOp::Logsumexp, false);
    assert!((lse[1] - (1f32.exp() + 3f32.exp()).ln()).abs() < 1e-6);
    // prod, min and bitwise-and reductions.
    let red = |op| run(Primitive::Reduce(Reduce { op, axes: vec![1] }), &[&m]);
    assert_eq!(f32s(&red(ReduceOp::Prod)), vec![6.0, 0.0]);
    assert_eq!(f32s(&red(ReduceOp::Min)), vec![1.0, 0.0]);
    let bi = arr(&[2, 2], vec![0b110i32, 0b011, -1, 0]);
    let and = run(reduce(ReduceOp::And, &[1]), &[&bi]);
    assert_eq!(i32s(&and), vec![0b010, 0]);
    let empty = arr(&[0], Vec::<i32>::new());
    let and0 = run(reduce(ReduceOp::And, &[0]), &[&empty]);
    assert_eq!(i32s(&and0), vec![-1]);
}
