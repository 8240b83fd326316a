//! Accuracy, special values and level-independence of `vmath`.
#![allow(
    clippy::arithmetic_side_effects,
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::type_complexity
)]

use microjax::internals::prims_kernel_vmath::*;
use microjax::internals::prims_kernel_vmath_scalar::sign_f64;
use microjax::*;

// ------------------------------------------------------------- helpers

/// Distance in representable f32 values (0 for two NaNs; huge for one).
/// Bit equality of two result slices, except that any NaN equals any NaN:
/// Rust leaves NaN bits unspecified (SSE2 `floor` is a libm call that
/// passes signaling NaNs through, `vroundpd` quiets them; LLVM may fold an
/// f32→f64→f32 round trip of a signaling NaN or not).
fn same<T: Copy + Into<f64>>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(&x, &y)| {
            let (x, y): (f64, f64) = (x.into(), y.into());
            x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
        })
}

/// The distance in units in the last place between two floats given by
/// their bit patterns read as signed integers (`bits`), with `min` the
/// smallest such integer; NaN is 0 from NaN and farthest from anything else.
fn ulp_distance(nans: (bool, bool), bits: (i128, i128), min: i128) -> u64 {
    match nans {
        (true, true) => return 0,
        (true, false) | (false, true) => return u64::MAX,
        (false, false) => {}
    }
    let key = |i: i128| if i < 0 { min - i } else { i };
    u64::try_from((key(bits.0) - key(bits.1)).unsigned_abs()).unwrap_or(u64::MAX)
}

/// `ulp32` and `ulp64`: [`ulp_distance`] of two f32s or two f64s (their
/// bits read as the signed integer type of the same width).
macro_rules! ulp {
    ($($name:ident: $t:ty => $signed:ty),*) => {$(
        fn $name(a: $t, b: $t) -> u64 {
            let bits = |x: $t| i128::from(x.to_bits() as $signed);
            ulp_distance((a.is_nan(), b.is_nan()), (bits(a), bits(b)), i128::from(<$signed>::MIN))
        }
    )*};
}

ulp!(ulp32: f32 => i32, ulp64: f64 => i64);

const SPECIAL64: [f64; 16] = [
    0.0,
    -0.0,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
    1.0,
    -1.0,
    f64::MIN_POSITIVE,
    -f64::MIN_POSITIVE,
    5e-324,
    -5e-324,
    f64::MAX,
    f64::MIN,
    0.5,
    1e-300,
    -1e-300,
];

/// Every 211th f32 bit pattern (all signs and exponents) plus specials.
fn grid32() -> Vec<f32> {
    let mut v: Vec<f32> = (0..=u32::MAX / 211)
        .map(|i| f32::from_bits(i * 211))
        .collect();
    v.extend(SPECIAL64.iter().map(|&x| x as f32));
    // Dense in the interesting range.
    v.extend((0..400_000).map(|i| -20.0 + 40.0 * (i as f32) / 400_000.0));
    v
}

/// Pseudo-random f64 bit patterns (all exponents), dense uniform grids on
/// [-50, 50] and [-1, 1], small magnitudes, and specials.
fn grid64() -> Vec<f64> {
    let mut v = Vec::new();
    let mut s: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..400_000 {
        s = s
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        v.push(f64::from_bits(s));
    }
    v.extend((0..400_000).map(|i| -50.0 + 100.0 * (i as f64) / 400_000.0 + 1e-9));
    v.extend((0..200_000).map(|i| -1.0 + 2.0 * (i as f64) / 200_000.0 + 1e-12));
    v.extend((0..2000).map(|i| 10f64.powf(-300.0 + 0.15 * i as f64)));
    v.extend((0..2000).map(|i| -(10f64.powf(-300.0 + 0.15 * i as f64))));
    v.extend(SPECIAL64);
    v
}

/// Exact `a·b = p + e` (Dekker, no FMA).
fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let split = |v: f64| {
        let t = v * 134_217_729.0;
        let hi = t - (t - v);
        (hi, v - hi)
    };
    let p = a * b;
    let ((ah, al), (bh, bl)) = (split(a), split(b));
    (p, ((ah * bh - p) + ah * bl + al * bh) + al * bl)
}

/// `num/(1+e)` with `e = exp(-|x|)` from libm and the sum and quotient
/// carried in double-double, so only libm's `exp` error remains.
fn logistic_ref(x: f64) -> f64 {
    let e = (-x.abs()).exp();
    let num = if x >= 0.0 { 1.0 } else { e };
    let h = 1.0 + e;
    let l = (1.0 - h) + e;
    let q = num / h;
    let (p, pe) = two_prod(q, h);
    q + (((num - p) - pe) - q * l) / h
}

/// (op, f64 reference, max ulp for f32, max ulp for f64).
fn cases() -> Vec<(UnaryOp, fn(f64) -> f64, u64, u64)> {
    vec![
        (UnaryOp::Exp, f64::exp, 1, 1),
        (UnaryOp::Exp2, f64::exp2, 1, 1),
        (UnaryOp::Expm1, f64::exp_m1, 1, 2),
        (UnaryOp::Log, f64::ln, 1, 1),
        (UnaryOp::Log1p, f64::ln_1p, 1, 2),
        (UnaryOp::Sin, f64::sin, 1, 1),
        (UnaryOp::Cos, f64::cos, 1, 1),
        (UnaryOp::Tanh, f64::tanh, 1, 2),
        (UnaryOp::Logistic, logistic_ref, 2, 2),
        (UnaryOp::Erf, libm::erf, 1, 2),
        (UnaryOp::Sqrt, f64::sqrt, 0, 0),
        (UnaryOp::Rsqrt, |x| 1.0 / x.sqrt(), 1, 1),
        (UnaryOp::Floor, f64::floor, 0, 0),
        (UnaryOp::Ceil, f64::ceil, 0, 0),
        (UnaryOp::Abs, f64::abs, 0, 0),
        (UnaryOp::Neg, |x| -x, 0, 0),
        (UnaryOp::Square, |x| x * x, 1, 0),
        (UnaryOp::Sign, sign_f64, 0, 0),
    ]
}

fn apply32(op: UnaryOp, x: &[f32]) -> Vec<f32> {
    let mut out = vec![0.0; x.len()];
    assert!(unary_f32(op, x, &mut out), "{op:?}");
    out
}

fn apply64(op: UnaryOp, x: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; x.len()];
    assert!(unary_f64(op, x, &mut out), "{op:?}");
    out
}

// ------------------------------------------------------------ accuracy

/// Checks every op of [`cases`] is within its documented bound (`bound`
/// picks the f32 or the f64 one) on the grid `x`, with `apply` running the
/// op, `exact` the reference value at a point and `ulp` the distance of a
/// result from it.
fn check_documented_ulp<T: Copy + Default + std::fmt::LowerExp>(
    x: &[T], bound: fn((u64, u64)) -> u64, apply: fn(UnaryOp, &[T]) -> Vec<T>,
    exact: fn(fn(f64) -> f64, T) -> T, ulp: fn(T, T) -> u64,
) {
    let label = std::any::type_name::<T>();
    for (op, reference, b32, b64) in cases() {
        let (mut worst, mut at) = (0, T::default());
        for (&xi, &g) in x.iter().zip(&apply(op, x)) {
            let d = ulp(g, exact(reference, xi));
            if d > worst {
                (worst, at) = (d, xi);
            }
        }
        let bound = bound((b32, b64));
        println!("{label} {op:?}: max {worst} ulp at {at:e}");
        assert!(worst <= bound, "{label} {op:?}: {worst} ulp at x = {at:e}");
    }
}

#[test]
fn f32_within_documented_ulp() {
    let exact = |reference: fn(f64) -> f64, x: f32| reference(f64::from(x)) as f32;
    check_documented_ulp(&grid32(), |(b, _)| b, apply32, exact, ulp32);
}

#[test]
fn f64_within_documented_ulp() {
    check_documented_ulp(
        &grid64(),
        |(_, b)| b,
        apply64,
        |reference, x| reference(x),
        ulp64,
    );
}

#[test]
fn trig_near_multiples_of_half_pi_and_large() {
    let mut x: Vec<f64> = (1..20_000)
        .map(|k| k as f64 * std::f64::consts::FRAC_PI_2 * 3.3)
        .collect();
    x.extend((0..1000).map(|k| k as f64 * std::f64::consts::PI));
    x.extend([65535.9, 65536.0, 65536.1, 1e6, 1e22, -1e300, 3.0e38]);
    // The f32 closest to a multiple of π/2 below 65536 (2^-27.8 away) and
    // the closest below 128 (`fit_vmath32.py --reduction`), with neighbours.
    // 252.89821 and 4.712389.
    for b in [0x437c_e5f1u32, 0x4096_cbe4] {
        x.extend((b - 3..=b + 3).map(|i| f64::from(f32::from_bits(i))));
    }
    for (op, reference) in [
        (UnaryOp::Sin, f64::sin as fn(f64) -> f64),
        (UnaryOp::Cos, f64::cos),
    ] {
        let got = apply64(op, &x);
        for (&xi, &g) in x.iter().zip(&got) {
            let want = reference(xi);
            // Near a zero of the function, compare absolutely.
            let ok = ulp64(g, want) <= 1 || (g - want).abs() < 1e-16;
            assert!(ok, "{op:?}({xi:e}) = {g:e}, want {want:e}");
        }
        let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        let got = apply32(op, &x32);
        for (&xi, &g) in x32.iter().zip(&got) {
            let want = reference(f64::from(xi)) as f32;
            assert!(ulp32(g, want) <= 1, "{op:?}({xi:e}) = {g:e}, want {want:e}");
        }
    }
}

/// Every 7th f32 of 2^-12 ≤ |x| < 2^17: both reductions of `sin`/`cos`
/// (f32 up to [`TRIG_MID_F32`], f64 above) and the libm lanes, densely.
#[test]
fn f32_sin_cos_dense_up_to_trig_big() {
    let (lo, hi) = (2f32.powi(-12).to_bits(), 131_072f32.to_bits());
    let pos = (lo..hi).step_by(7).map(f32::from_bits);
    let x: Vec<f32> = pos.clone().chain(pos.map(|v| -v)).collect();
    for (op, reference) in [
        (UnaryOp::Sin, f64::sin as fn(f64) -> f64),
        (UnaryOp::Cos, f64::cos),
    ] {
        let got = apply32(op, &x);
        let (mut worst, mut at) = (0, 0.0f32);
        for (&xi, &g) in x.iter().zip(&got) {
            let d = ulp32(g, reference(f64::from(xi)) as f32);
            if d > worst {
                (worst, at) = (d, xi);
            }
        }
        println!("f32 {op:?} dense: max {worst} ulp at {at:e}");
        assert!(worst <= 1, "f32 {op:?}: {worst} ulp at x = {at:e}");
        // A few wide lanes (scalar second pass) give the bits of many
        // (vector second pass).
        let few: Vec<f32> = (0..64)
            .map(|i| i as f32 * 0.1 + 1000.0 * (i % 30 == 5) as u8 as f32)
            .collect();
        for (&xi, &g) in few.iter().zip(&apply32(op, &few)) {
            let many = apply32(op, &[xi; 32]);
            assert!(
                many.iter().all(|m| m.to_bits() == g.to_bits()),
                "{op:?}({xi:e})"
            );
        }
    }
}

#[test]
fn pow_within_documented_ulp() {
    let bases: Vec<f32> = (0..600)
        .map(|i| f32::from_bits(i * 7_158_278))
        .chain([0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, f32::INFINITY])
        .chain([f32::NEG_INFINITY, f32::NAN, 1e-40, -3.0, 10.0])
        .collect();
    let exps: Vec<f32> = (0..300)
        .map(|i| -40.0 + 80.0 * i as f32 / 300.0)
        .chain([0.0, -0.0, 1.0, -1.0, 2.0, 3.0, -3.0, 0.5, -0.5, 1e10, -1e10])
        .chain([f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 127.0, -149.0])
        .collect();
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    for &a in &bases {
        for &b in &exps {
            xs.push(a);
            ys.push(b);
        }
    }
    let mut out = vec![0.0f32; xs.len()];
    pow_f32(&xs, &ys, &mut out);
    for ((&a, &b), &g) in xs.iter().zip(&ys).zip(&out) {
        let want = f64::from(a).powf(f64::from(b)) as f32;
        assert!(
            ulp32(g, want) <= 1,
            "pow({a:e}, {b:e}) = {g:e}, want {want:e}"
        );
        if !want.is_nan() {
            assert_eq!(
                g.is_sign_negative(),
                want.is_sign_negative(),
                "pow({a:e}, {b:e})"
            );
        }
    }
    let xs64: Vec<f64> = xs.iter().map(|&v| f64::from(v)).collect();
    let ys64: Vec<f64> = ys.iter().map(|&v| f64::from(v)).collect();
    let mut out64 = vec![0.0f64; xs.len()];
    pow_f64(&xs64, &ys64, &mut out64);
    for ((&a, &b), &g) in xs64.iter().zip(&ys64).zip(&out64) {
        assert!(ulp64(g, a.powf(b)) <= 1, "pow({a:e}, {b:e}) = {g:e}");
    }
}

// ------------------------------------------------------- special values

#[test]
fn special_values_as_libm() {
    let inf = f64::INFINITY;
    let checks: [(UnaryOp, f64, f64); 22] = [
        (UnaryOp::Exp, inf, inf),
        (UnaryOp::Exp, -inf, 0.0),
        (UnaryOp::Exp, 710.0, inf),
        (UnaryOp::Exp, -746.0, 0.0),
        (UnaryOp::Exp, -0.0, 1.0),
        (UnaryOp::Exp2, 1024.0, inf),
        (UnaryOp::Exp2, -1074.0, 5e-324),
        (UnaryOp::Exp2, -1075.5, 0.0),
        (UnaryOp::Expm1, -inf, -1.0),
        (UnaryOp::Expm1, inf, inf),
        (UnaryOp::Expm1, -0.0, -0.0),
        (UnaryOp::Log, 0.0, -inf),
        (UnaryOp::Log, -0.0, -inf),
        (UnaryOp::Log, inf, inf),
        (UnaryOp::Log, 5e-324, -744.4400719213812),
        (UnaryOp::Log1p, -1.0, -inf),
        (UnaryOp::Log1p, -0.0, -0.0),
        (UnaryOp::Tanh, -0.0, -0.0),
        (UnaryOp::Tanh, -inf, -1.0),
        (UnaryOp::Sin, -0.0, -0.0),
        (UnaryOp::Erf, -inf, -1.0),
        (UnaryOp::Logistic, -inf, 0.0),
    ];
    for (op, x, want) in checks {
        let g = apply64(op, &[x])[0];
        assert_eq!(
            g.to_bits(),
            want.to_bits(),
            "{op:?}({x:e}) = {g:e}, want {want:e}"
        );
        if f64::from(x as f32) != x {
            continue;
        }
        let g = apply32(op, &[x as f32])[0];
        let want32 = want as f32;
        assert!(
            g.to_bits() == want32.to_bits() || ulp32(g, want32) <= 1,
            "f32 {op:?}({x:e}) = {g:e}, want {want32:e}"
        );
    }
    for op in [UnaryOp::Log, UnaryOp::Log1p] {
        assert!(apply64(op, &[-2.0])[0].is_nan(), "{op:?}");
        assert!(apply32(op, &[-2.0])[0].is_nan(), "{op:?}");
    }
    for op in [UnaryOp::Sin, UnaryOp::Cos] {
        assert!(apply64(op, &[inf, f64::NAN])[..].iter().all(|v| v.is_nan()));
        assert!(apply32(op, &[f32::INFINITY])[0].is_nan());
    }
    // f32 underflow to a subnormal, overflow to inf.
    assert_eq!(exp_f32(-100.0), (-100f64).exp() as f32);
    assert_eq!(exp_f32(89.0), f32::INFINITY);
    // Every covered op propagates NaN.
    for op in cases().into_iter().map(|c| c.0) {
        assert!(apply64(op, &[f64::NAN])[0].is_nan(), "{op:?}");
        assert!(apply32(op, &[f32::NAN])[0].is_nan(), "{op:?}");
    }
}

#[test]
fn uncovered_op_leaves_out_untouched() {
    let mut out = [7.0f32; 3];
    assert!(!unary_f32(UnaryOp::Atan, &[1.0, 2.0, 3.0], &mut out));
    assert_eq!(out, [7.0; 3]);
    let mut v = [1.0f64; 2];
    assert!(!unary_f64_inplace(UnaryOp::Lgamma, &mut v));
    assert_eq!(v, [1.0; 2]);
    assert!(!supports(UnaryOp::Atan) && supports(UnaryOp::Erf));
}

#[test]
fn mismatched_lengths_process_the_common_prefix() {
    let mut out = [9.0f64; 4];
    assert!(unary_f64(UnaryOp::Sin, &[0.0, 1e10], &mut out));
    assert_eq!(out[0], 0.0);
    assert_eq!(out[1], libm::sin(1e10));
    assert_eq!(out[2..], [9.0, 9.0]);
    let mut short = [0.0f32; 1];
    assert!(unary_f32(UnaryOp::Exp, &[0.0, 1.0, 2.0], &mut short));
    assert_eq!(short, [1.0]);
}

// ------------------------------------------------- level independence

use crate::common::kernels::simd_levels as levels;

#[test]
fn forced_level_is_scoped() {
    let before = simd_level();
    with_simd_level(SimdLevel::Scalar, || {
        assert_eq!(simd_level(), SimdLevel::Scalar);
    });
    assert_eq!(simd_level(), before);
}

#[test]
fn bit_identical_across_levels_offsets_and_in_place() {
    // An odd length, so every level has a ragged end.
    let x64: Vec<f64> = grid64().into_iter().step_by(7).collect();
    let x32: Vec<f32> = grid32().into_iter().step_by(53).collect();
    println!("levels tested: {:?}", levels());
    for (op, ..) in cases() {
        let base64 = with_simd_level(SimdLevel::Scalar, || apply64(op, &x64));
        let base32 = with_simd_level(SimdLevel::Scalar, || apply32(op, &x32));
        for level in levels() {
            let (g64, g32) = with_simd_level(level, || (apply64(op, &x64), apply32(op, &x32)));
            assert!(same(&g64, &base64), "f64 {op:?} differs at {level:?}");
            assert!(same(&g32, &base32), "f32 {op:?} differs at {level:?}");
            // In place, and shifted by one element (other chunk boundaries).
            let (mut v64, mut v32) = (x64.clone(), x32.clone());
            let (s64, s32) = with_simd_level(level, || {
                assert!(unary_f64_inplace(op, &mut v64) && unary_f32_inplace(op, &mut v32));
                (apply64(op, &x64[1..]), apply32(op, &x32[3..]))
            });
            assert!(same(&v64, &base64), "in place f64 {op:?} at {level:?}");
            assert!(same(&v32, &base32), "in place f32 {op:?} at {level:?}");
            assert!(same(&s64, &base64[1..]), "offset f64 {op:?} at {level:?}");
            assert!(same(&s32, &base32[3..]), "offset f32 {op:?} at {level:?}");
        }
    }
    // The scalar per-element functions are the same functions.
    let scalar: [(UnaryOp, fn(f32) -> f32, fn(f64) -> f64); 10] = [
        (UnaryOp::Exp, exp_f32, exp_f64),
        (UnaryOp::Exp2, exp2_f32, exp2_f64),
        (UnaryOp::Expm1, expm1_f32, expm1_f64),
        (UnaryOp::Log, log_f32, log_f64),
        (UnaryOp::Log1p, log1p_f32, log1p_f64),
        (UnaryOp::Sin, sin_f32, sin_f64),
        (UnaryOp::Cos, cos_f32, cos_f64),
        (UnaryOp::Tanh, tanh_f32, tanh_f64),
        (UnaryOp::Logistic, logistic_f32, logistic_f64),
        (UnaryOp::Erf, erf_f32, erf_f64),
    ];
    for (op, f32f, f64f) in scalar {
        let v64 = apply64(op, &x64);
        let v32 = apply32(op, &x32);
        let s64: Vec<f64> = x64.iter().map(|&x| f64f(x)).collect();
        let s32: Vec<f32> = x32.iter().map(|&x| f32f(x)).collect();
        assert!(same(&s64, &v64) && same(&s32, &v32), "{op:?}");
    }
    // pow, across levels.
    let (xs, ys): (Vec<f32>, Vec<f32>) = x32.iter().map(|&a| (a.abs(), a * 0.01)).unzip();
    let mut base = vec![0.0f32; xs.len()];
    with_simd_level(SimdLevel::Scalar, || pow_f32(&xs, &ys, &mut base));
    for level in levels() {
        let mut out = vec![0.0f32; xs.len()];
        with_simd_level(level, || pow_f32(&xs, &ys, &mut out));
        assert!(same(&out, &base), "{level:?}");
    }
}

// ---------------------------------------------------------------- speed

/// `cargo test --release -p microjax --test integration vmath -- --ignored --nocapture`.
#[test]
#[ignore]
fn bench_ns_per_element() {
    use std::time::Instant;
    let n = 1_000_000;
    let x32: Vec<f32> = (0..n).map(|i| -10.0 + 20.0 * i as f32 / n as f32).collect();
    let x64: Vec<f64> = x32.iter().map(|&v| f64::from(v)).collect();
    let (mut o32, mut o64) = (vec![0.0f32; n], vec![0.0f64; n]);
    let ops = [
        UnaryOp::Exp,
        UnaryOp::Exp2,
        UnaryOp::Expm1,
        UnaryOp::Log,
        UnaryOp::Log1p,
        UnaryOp::Sin,
        UnaryOp::Cos,
        UnaryOp::Tanh,
        UnaryOp::Logistic,
        UnaryOp::Erf,
        UnaryOp::Sqrt,
    ];
    let time = |f: &mut dyn FnMut()| {
        f();
        let reps = 20;
        let t = Instant::now();
        for _ in 0..reps {
            f();
        }
        t.elapsed().as_secs_f64() * 1e9 / (reps * n) as f64
    };
    for level in levels() {
        for op in ops {
            let (a, b, c) = with_simd_level(level, || {
                let a = time(&mut || {
                    unary_f32(op, &x32, &mut o32);
                });
                let b = time(&mut || {
                    unary_f64(op, &x64, &mut o64);
                });
                let reference = std_ref(op);
                let c = time(&mut || {
                    for (o, &v) in o64.iter_mut().zip(&x64) {
                        *o = reference(v);
                    }
                });
                (a, b, c)
            });
            println!("{level:?} {op:?}: f32 {a:.2} ns, f64 {b:.2} ns (std scalar f64 {c:.2} ns)");
        }
        let wide: Vec<f32> = x32.iter().map(|v| v * 200.0).collect();
        let w = with_simd_level(level, || {
            time(&mut || {
                unary_f32(UnaryOp::Sin, &wide, &mut o32);
            })
        });
        println!("{level:?} Sin on [-2000, 2000]: f32 {w:.2} ns");
        let pa: Vec<f32> = x32.iter().map(|v| v.abs()).collect();
        let p = with_simd_level(level, || time(&mut || pow_f32(&pa, &x32, &mut o32)));
        println!("{level:?} pow: f32 {p:.2} ns");
    }
}

fn std_ref(op: UnaryOp) -> fn(f64) -> f64 {
    cases()
        .into_iter()
        .find(|c| c.0 == op)
        .map_or(f64::abs, |c| c.1)
}
