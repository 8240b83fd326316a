//! Tests of `prims::kernel::math`'s internals (reached through `microjax::internals`).

use microjax::internals::prims_kernel_math::*;

#[test]
fn special_functions_against_known_values() {
    let close = |a: f64, b: f64, tol: f64| (a - b).abs() <= tol * b.abs().max(1.0);
    // ψ(1) = -γ, ψ(1/2) = -γ - 2 ln 2, ψ(-1/2) = ψ(1/2) + 2.
    let g = 0.577_215_664_901_532_9;
    assert!(close(digamma(1.0), -g, 1e-15));
    assert!(close(digamma(0.5), -g - 2.0 * 2f64.ln(), 1e-15));
    assert!(close(digamma(-0.5), -g - 2.0 * 2f64.ln() + 2.0, 1e-14));
    // ψ(30) = H_29 - γ.
    assert!(close(digamma(30.0), 3.384_438_132_685_525, 1e-15));
    assert!(digamma(0.0).is_nan() && digamma(-3.0).is_nan());
    // ψ'(1) = π²/6, ψ''(1) = -2 ζ(3), ψ'(1/2) = π²/2.
    let pi2 = std::f64::consts::PI.powi(2);
    assert!(close(polygamma(1.0, 1.0), pi2 / 6.0, 1e-14));
    assert!(close(
        polygamma(2.0, 1.0),
        -2.0 * 1.202_056_903_159_594_2,
        1e-14
    ));
    assert!(close(polygamma(1.0, 0.5), pi2 / 2.0, 1e-14));
    assert!(close(polygamma(0.0, 2.0), 1.0 - g, 1e-15));
    // ψ'(-1/2) = ψ'(1/2) + 4 (recurrence).
    assert!(close(polygamma(1.0, -0.5), pi2 / 2.0 + 4.0, 1e-14));
    assert!(polygamma(1.5, 1.0).is_nan());
    for y in [
        -0.999_999,
        -0.7,
        -0.3,
        1e-300,
        1e-5,
        0.1,
        0.5,
        0.9,
        0.999,
        1.0 - 1e-12,
    ] {
        let x = erf_inv(y);
        assert!(close(erf(x), y, 4e-16), "erf_inv({y}) = {x}");
    }
    assert_eq!(erf_inv(1.0), f64::INFINITY);
    assert_eq!(erf_inv(-1.0), f64::NEG_INFINITY);
    assert!(erf_inv(1.5).is_nan());
    assert!(close(erf_inv(0.5), 0.476_936_276_204_469_9, 1e-15));
}
