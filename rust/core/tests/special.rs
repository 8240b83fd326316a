//! The special-function primitives (`igamma`, `betainc`, `zeta`, Bessel,
//! `erfc`, ...): kernel values against SciPy 1.17.1 and recorded JAX 0.10.2
//! values, XLA's edge cases, f32 rounding, derivatives against finite
//! differences, the missing rules with JAX's errors, and vmap.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use microjax::prims::kernel::special_math as sm;
use microjax::transforms::{batch_jaxpr, jvp_jaxpr, vjp_jaxpr};
use microjax::{Aval, DType, Error, HostArray, Primitive, SpecialOp};

use crate::common;
use common::autodiff::{check_all, check_jvp, check_vjp, lit, run};
use common::{build, eval, f32s, f64_arc, f64s, f64v, Rng};

fn close(got: f64, want: f64, rtol: f64) -> bool {
    (got - want).abs() <= rtol * want.abs().max(1e-300) || (got.is_nan() && want.is_nan())
}

fn check(what: &str, got: f64, want: f64, rtol: f64) {
    assert!(close(got, want, rtol), "{what}: got {got:e}, want {want:e}");
}

#[test]
fn incomplete_gamma_against_scipy() {
    // (a, x, P, Q) from scipy.special.gammainc / gammaincc 1.17.1.
    let cases = [
        (0.5, 0.3, 0.561_421_973_919_000_3, 0.438_578_026_080_999_7),
        (2.0, 3.0, 0.800_851_726_528_544_2, 0.199_148_273_471_455_8),
        (10.0, 9.5, 0.478_173_977_762_792_36, 0.521_826_022_237_207_6),
        (
            0.1,
            5.0,
            0.999_856_061_034_153_3,
            0.000_143_938_965_846_733_87,
        ),
        (
            30.0,
            45.0,
            0.992_662_800_702_203_5,
            0.007_337_199_297_796_568,
        ),
        (
            1e-3,
            1e-3,
            0.993_687_646_708_860_3,
            0.006_312_353_291_139_709,
        ),
        (
            100.0,
            100.0,
            0.513_298_798_279_148_7,
            0.486_701_201_720_851_35,
        ),
    ];
    for (a, x, p, q) in cases {
        check(&format!("igamma({a}, {x})"), sm::igamma(a, x), p, 1e-13);
        check(&format!("igammac({a}, {x})"), sm::igammac(a, x), q, 1e-12);
    }
}

#[test]
fn incomplete_gamma_derivatives_against_jax() {
    // Recorded from JAX 0.10.2 (float64): lax.igamma_grad_a, lax.random_gamma_grad.
    let cases = [
        (1e-3, 1e-3, -6.293_203_824_900_432_5, 6.339_511_118_616_953),
        (
            50.0,
            49.0,
            -0.056_510_237_991_276_42,
            0.993_238_845_221_441_5,
        ),
        (0.5, 0.3, -0.770_570_351_375_352, 1.009_801_945_948_855_2),
        (2.0, 3.0, -0.197_425_419_579_202_32, 1.321_798_518_177_962),
        (
            10.0,
            14.0,
            -0.056_690_997_715_325_44,
            1.197_422_897_773_948_7,
        ),
        (
            3.0,
            0.5,
            -0.028_520_235_878_828_976,
            0.376_175_356_310_481_9,
        ),
    ];
    for (a, x, ga, rg) in cases {
        check(
            &format!("igamma_grad_a({a}, {x})"),
            sm::igamma_grad_a(a, x),
            ga,
            1e-10,
        );
        check(
            &format!("random_gamma_grad({a}, {x})"),
            sm::random_gamma_grad(a, x),
            rg,
            1e-10,
        );
        // ∂P/∂a by central differences of P.
        let h = 1e-6 * a.max(1e-3);
        let fd = (sm::igamma(a + h, x) - sm::igamma(a - h, x)) / (2.0 * h);
        check(
            &format!("fd igamma_grad_a({a}, {x})"),
            sm::igamma_grad_a(a, x),
            fd,
            1e-5,
        );
    }
}

#[test]
fn incomplete_gamma_edges_as_xla() {
    let nan = f64::NAN;
    let inf = f64::INFINITY;
    // (a, x, igamma, igammac, igamma_grad_a, random_gamma_grad), recorded from JAX 0.10.2.
    let cases = [
        (-1.0, 1.0, nan, nan, nan, nan),
        (0.0, 1.0, 1.0, 0.0, nan, nan),
        (0.0, 0.0, nan, nan, nan, nan),
        (0.5, 0.0, 0.0, 1.0, 0.0, 0.0),
        (inf, 1.0, nan, nan, nan, nan),
        (nan, 1.0, nan, nan, nan, nan),
        (2.0, -1.0, nan, nan, nan, nan),
        (2.0, inf, 1.0, 0.0, nan, nan),
        (2.0, nan, nan, nan, nan, nan),
    ];
    for (a, x, p, q, ga, rg) in cases {
        let what = format!("({a}, {x})");
        check(&format!("igamma{what}"), sm::igamma(a, x), p, 0.0);
        check(&format!("igammac{what}"), sm::igammac(a, x), q, 0.0);
        check(
            &format!("igamma_grad_a{what}"),
            sm::igamma_grad_a(a, x),
            ga,
            0.0,
        );
        check(
            &format!("random_gamma_grad{what}"),
            sm::random_gamma_grad(a, x),
            rg,
            0.0,
        );
    }
}

#[test]
fn incomplete_beta_against_scipy() {
    // (a, b, x, I) from scipy.special.betainc 1.17.1.
    let cases = [
        (0.5, 0.5, 0.3, 0.369_010_119_565_545_36),
        (2.0, 3.0, 0.4, 0.524_799_999_999_999_9),
        (10.0, 20.0, 0.7, 0.999_982_858_082_826_9),
        (0.1, 5.0, 0.01, 0.769_088_920_784_346_2),
        (50.0, 60.0, 0.45, 0.464_235_291_430_603_1),
    ];
    for (a, b, x, want) in cases {
        check(
            &format!("betainc({a}, {b}, {x})"),
            sm::betainc(a, b, x),
            want,
            1e-12,
        );
    }
    // Edges recorded from JAX 0.10.2.
    let nan = f64::NAN;
    let inf = f64::INFINITY;
    let edges = [
        (-1.0, 1.0, 0.5, nan),
        (0.0, 1.0, 0.5, 1.0),
        (1.0, 0.0, 0.5, 0.0),
        (1.0, 1.0, -0.1, nan),
        (1.0, 1.0, 1.1, nan),
        (1.0, 1.0, 0.0, 0.0),
        (2.0, 3.0, 1.0, 1.0),
        (inf, 1.0, 0.5, 0.0),
        (1.0, inf, 0.5, 1.0),
        (inf, inf, 0.0, nan),
        (inf, inf, 1.0, nan),
        (0.0, 0.0, 1.0, nan),
        (inf, 1.0, 1.0, 1.0),
        (1.0, inf, 0.0, 0.0),
        (2.0, 3.0, nan, nan),
    ];
    for (a, b, x, want) in edges {
        check(
            &format!("betainc({a}, {b}, {x})"),
            sm::betainc(a, b, x),
            want,
            0.0,
        );
    }
}

#[test]
fn zeta_bessel_erfc_against_scipy() {
    let zeta = [
        (2.0, 1.0, 1.644_934_066_848_226_6),
        (3.0, 2.5, 0.118_102_025_820_863_68),
        (1.5, 0.3, 8.237_761_671_459_724),
        (4.0, -1.5, 32.432_379_369_864_6),
        (10.0, 0.5, 1_024.017_450_355_757_8),
    ];
    for (x, q, want) in zeta {
        check(
            &format!("zeta({x}, {q})"),
            sm::hurwitz_zeta(x, q),
            want,
            1e-13,
        );
    }
    // XLA's poles and NaNs (recorded from JAX 0.10.2).
    assert_eq!(sm::hurwitz_zeta(1.0, 1.0), f64::INFINITY);
    assert_eq!(sm::hurwitz_zeta(2.0, -1.0), f64::INFINITY);
    assert_eq!(sm::hurwitz_zeta(2.0, 0.0), f64::INFINITY);
    assert!(sm::hurwitz_zeta(0.5, 1.0).is_nan());
    assert!(sm::hurwitz_zeta(2.5, -1.5).is_nan());
    assert!(sm::hurwitz_zeta(f64::INFINITY, 2.0).is_nan());
    let bessel = [
        (0.0, 1.0, 0.0),
        (0.1, 0.907_100_925_782_301_1, 0.045_298_446_808_809_324),
        (1.0, 0.465_759_607_593_640_43, 0.207_910_415_349_708_5),
        (5.0, 0.183_540_812_609_328_34, 0.163_972_266_944_542_34),
        (19.9, 0.090_008_588_864_389_59, 0.087_717_102_131_706_08),
        (20.1, 0.089_553_763_620_613_44, 0.087_296_851_843_201_6),
        (50.0, 0.056_561_626_647_454_184, 0.055_993_123_892_895_395),
        (-3.0, 0.243_000_354_161_825_36, -0.196_826_713_297_300_84),
    ];
    for (x, i0, i1) in bessel {
        check(&format!("i0e({x})"), sm::bessel_i0e(x), i0, 1e-14);
        check(&format!("i1e({x})"), sm::bessel_i1e(x), i1, 1e-14);
    }
    assert_eq!(sm::bessel_i0e(f64::INFINITY), 0.0);
    assert!(sm::bessel_i1e(f64::NAN).is_nan());
    let erfc = [
        (-1.0, 1.842_700_792_949_714_8),
        (0.5, 0.479_500_122_186_953_5),
        (3.0, 2.209_049_699_858_544_5e-5),
        (10.0, 2.088_487_583_762_544_6e-45),
    ];
    for (x, want) in erfc {
        check(&format!("erfc({x})"), sm::erfc(x), want, 1e-14);
    }
}

#[test]
fn kernels_round_f64_results_to_f32_and_broadcast_rank0() {
    let a = HostArray::new(vec![], vec![2.0f32].into()).unwrap();
    let x = HostArray::new(vec![3], vec![0.5f32, 3.0, 9.0].into()).unwrap();
    let p = Primitive::Special(SpecialOp::Igamma);
    let out = eval(&p, &[&a, &x]).unwrap();
    let got = f32s(&out[0]);
    for (g, xv) in got.iter().zip([0.5, 3.0, 9.0]) {
        assert_eq!(*g, sm::igamma(2.0, xv) as f32);
    }
    // Mixed dtypes and integer operands are rejected with a dtype error.
    let xi = HostArray::new(vec![3], vec![1i32, 2, 3].into()).unwrap();
    assert!(matches!(eval(&p, &[&a, &xi]), Err(Error::DType { .. })));
    let x64 = HostArray::new(vec![], vec![1.0f64].into()).unwrap();
    assert!(matches!(eval(&p, &[&a, &x64]), Err(Error::DType { .. })));
    // Arity.
    assert!(eval(&p, &[&a]).is_err());
    let bad = Primitive::Special(SpecialOp::RegularizedIncompleteBeta);
    assert!(eval(&bad, &[&a, &a]).is_err());
}

fn special(b: &mut microjax::Builder, op: SpecialOp, ins: &[microjax::Atom]) -> microjax::Atom {
    b.add_eqn1(Primitive::Special(op), ins.to_vec()).unwrap()
}

#[test]
fn derivatives_against_finite_differences() {
    let mut rng = Rng::new(7);
    // igamma / igammac in both operands (first order: igamma_grad_a has no rule).
    for op in [SpecialOp::Igamma, SpecialOp::Igammac] {
        let f = build(&[f64v(&[3]), f64v(&[3])], |b, x| vec![special(b, op, x)]);
        let xs = [
            f64_arc(&[3], vec![0.7, 2.0, 5.0]),
            f64_arc(&[3], vec![0.4, 3.5, 4.0]),
        ];
        check_jvp(&f, &xs, &mut rng);
        check_vjp(&f, &xs, &mut rng);
        // In x alone, to second order.
        let f = build(&[f64v(&[3])], |b, x| {
            vec![special(b, op, &[lit(1.5), x[0].clone()])]
        });
        check_all(&f, &[f64_arc(&[3], vec![0.4, 1.5, 4.0])], 11);
    }
    let f = build(&[f64v(&[3])], |b, x| {
        vec![special(
            b,
            SpecialOp::RegularizedIncompleteBeta,
            &[lit(2.5), lit(1.5), x[0].clone()],
        )]
    });
    check_all(&f, &[f64_arc(&[3], vec![0.1, 0.5, 0.8])], 12);
    for op in [SpecialOp::BesselI0e, SpecialOp::BesselI1e, SpecialOp::Erfc] {
        let f = build(&[f64v(&[4])], |b, x| vec![special(b, op, x)]);
        check_all(&f, &[f64_arc(&[4], vec![-2.0, -0.3, 0.6, 25.0])], 13);
    }
}

fn tangent_error(op: SpecialOp, avals: &[Aval], nz: &[bool]) -> Error {
    let f = build(avals, |b, x| vec![special(b, op, x)]);
    match jvp_jaxpr(&f, nz, true) {
        Err(e) => e,
        Ok(_) => match vjp_jaxpr(&f, nz) {
            Err(e) => e,
            Ok(_) => panic!("{}: differentiation did not fail", op.name()),
        },
    }
}

#[test]
fn missing_rules_raise_jax_errors() {
    let two = [f64v(&[]), f64v(&[])];
    for op in [
        SpecialOp::IgammaGradA,
        SpecialOp::RandomGammaGrad,
        SpecialOp::Zeta,
    ] {
        let e = tangent_error(op, &two, &[true, true]);
        assert!(matches!(e, Error::NotImplemented(_)), "{}: {e}", op.name());
        assert!(e.to_string().contains("Differentiation rule for"), "{e}");
    }
    let three = [f64v(&[]), f64v(&[]), f64v(&[])];
    let e = tangent_error(
        SpecialOp::RegularizedIncompleteBeta,
        &three,
        &[true, false, false],
    );
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    assert!(e.to_string().contains("Betainc gradient"), "{e}");
}

#[test]
fn vmap_matches_per_example() {
    let f = build(&[f64v(&[2]), f64v(&[]), f64v(&[2])], |b, x| {
        vec![special(b, SpecialOp::RegularizedIncompleteBeta, x)]
    });
    let batched = batch_jaxpr(&f, &[Some(0), None, Some(1)], 3, &[Some(0)]).unwrap();
    let a = f64_arc(&[3, 2], vec![0.5, 1.0, 2.0, 3.0, 4.0, 5.0]);
    let bb = f64_arc(&[], vec![2.0]);
    let x = f64_arc(&[2, 3], vec![0.1, 0.2, 0.3, 0.4, 0.5, 0.6]);
    let out = run(&batched, &[a, bb, x]);
    let got = f64s(&out[0]);
    let av = [0.5, 1.0, 2.0, 3.0, 4.0, 5.0];
    let xv = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6];
    for i in 0..3 {
        for j in 0..2 {
            let want = sm::betainc(av[i * 2 + j], 2.0, xv[j * 3 + i]);
            assert_eq!(got[i * 2 + j], want, "example {i}, element {j}");
        }
    }
    assert_eq!(
        f.jaxpr.out_avals().unwrap()[0],
        Aval::new(vec![2], DType::F64)
    );
}
