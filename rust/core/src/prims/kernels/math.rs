//! Scalar math functions written so a loop over a slice auto-vectorizes
//! (straight-line code, selects instead of branches).

// `tanh` for f32 lives in `vmath` (`vmath::tanh_f32`).

// ------------------------------------------------------ special functions
//
// Computed in f64 (f32 and narrower types round the f64 result once).

/// `erf` (FreeBSD msun via `libm`, < 1 ulp).
#[inline]
pub fn erf(x: f64) -> f64 {
    libm::erf(x)
}

/// `log|Γ(x)|` (`libm`); +inf at the poles 0, -1, -2, ...
#[inline]
pub fn lgamma(x: f64) -> f64 {
    libm::lgamma(x)
}

/// Inverse of `erf` on [-1, 1]: Giles' single-precision approximation as the
/// start, then Halley steps on `erf(x) - y` (on `erfc` near ±1, where
/// `1 - |y|` is exact), which reach full f64 precision. ±1 map to ±inf and
/// |y| > 1 to NaN.
// The coefficients are kept as published.
#[allow(clippy::excessive_precision)]
pub fn erf_inv(y: f64) -> f64 {
    if y.is_nan() || y.abs() > 1.0 {
        return f64::NAN;
    }
    if y.abs() == 1.0 {
        return f64::INFINITY.copysign(y);
    }
    if y == 0.0 {
        return y;
    }
    let a = y.abs();
    let mut w = -((1.0 - a) * (1.0 + a)).ln();
    let p = if w < 5.0 {
        w -= 2.5;
        let mut p = 2.810_226_36e-08;
        for c in [
            3.432_739_39e-07,
            -3.523_387_7e-06,
            -4.391_506_54e-06,
            0.000_218_580_87,
            -0.001_253_725_03,
            -0.004_177_681_64,
            0.246_640_727,
            1.501_409_41,
        ] {
            p = c + p * w;
        }
        p
    } else {
        w = w.sqrt() - 3.0;
        let mut p = -0.000_200_214_257;
        for c in [
            0.000_100_950_558,
            0.001_349_343_22,
            -0.003_673_428_44,
            0.005_739_507_73,
            -0.007_622_461_3,
            0.009_438_870_47,
            1.001_674_06,
            2.832_976_82,
        ] {
            p = c + p * w;
        }
        p
    };
    let mut x = p * a;
    let two_over_sqrt_pi = std::f64::consts::FRAC_2_SQRT_PI;
    for _ in 0..3 {
        let f = if a < 0.5 {
            libm::erf(x) - a
        } else {
            (1.0 - a) - libm::erfc(x)
        };
        let fp = two_over_sqrt_pi * (-x * x).exp();
        if fp == 0.0 || !f.is_finite() {
            break;
        }
        let u = f / fp;
        x -= u / (1.0 + x * u);
    }
    x.copysign(y)
}

/// `π / tan(π x)`, with the argument reduced to [-1/2, 1/2] first.
fn pi_cot_pi(x: f64) -> f64 {
    let r = x - x.round();
    std::f64::consts::PI / (std::f64::consts::PI * r).tan()
}

/// `ψ(x) = d/dx log Γ(x)`: reflection below 1/2, recurrence up to 10, then
/// the asymptotic series. NaN at 0 and the negative integers (as XLA).
pub fn digamma(x: f64) -> f64 {
    if x.is_nan() || x == f64::NEG_INFINITY {
        return f64::NAN;
    }
    if x == f64::INFINITY {
        return x;
    }
    if x <= 0.0 && x == x.floor() {
        return f64::NAN;
    }
    let (mut x, mut acc) = if x < 0.5 {
        // ψ(x) = ψ(1 - x) - π cot(π x)
        (1.0 - x, -pi_cot_pi(x))
    } else {
        (x, 0.0)
    };
    while x < 10.0 {
        acc -= 1.0 / x;
        x += 1.0;
    }
    let z = 1.0 / (x * x);
    // Σ B_2k / (2k x^2k), k = 1..7
    let series = z
        * (1.0 / 12.0
            - z * (1.0 / 120.0
                - z * (1.0 / 252.0
                    - z * (1.0 / 240.0
                        - z * (1.0 / 132.0 - z * (691.0 / 32760.0 - z * (1.0 / 12.0)))))));
    acc + x.ln() - 0.5 / x - series
}

/// Hurwitz zeta `ζ(s, q) = Σ_k (q + k)^-s` for `s > 1` (Euler–Maclaurin
/// summation as in Cephes). Negative non-integer `q` is shifted up by
/// summing the leading terms; a pole (`q` a non-positive integer) is NaN.
#[allow(clippy::excessive_precision)]
pub fn zeta(s: f64, q: f64) -> f64 {
    const A: [f64; 12] = [
        12.0,
        -720.0,
        30240.0,
        -1209600.0,
        47900160.0,
        -1.892_437_580_318_379_160_6e9,
        7.472_424_96e10,
        -2.950_130_727_918_164_224e12,
        1.164_678_281_435_006_724_9e14,
        -4.597_978_722_407_472_610_5e15,
        1.815_210_540_194_354_677_3e17,
        -7.166_165_256_175_667_011_3e18,
    ];
    if s.is_nan() || q.is_nan() || s <= 1.0 {
        return if s == 1.0 { f64::INFINITY } else { f64::NAN };
    }
    if q <= 0.0 && q == q.floor() {
        return f64::NAN;
    }
    let mut sum = 0.0;
    let mut q = q;
    while q < 1.0 {
        sum += q.powf(-s);
        q += 1.0;
    }
    sum += q.powf(-s);
    let mut a = q;
    let mut b = 0.0;
    let mut i = 0u32;
    while i < 9 || a <= 9.0 {
        i = i.saturating_add(1);
        a += 1.0;
        b = a.powf(-s);
        sum += b;
        if (b / sum).abs() < f64::EPSILON {
            return sum;
        }
    }
    let w = a;
    sum += b * w / (s - 1.0);
    sum -= 0.5 * b;
    let mut fac = 1.0;
    let mut k = 0.0;
    for c in A {
        fac *= s + k;
        b /= w;
        let t = fac * b / c;
        sum += t;
        if (t / sum).abs() < f64::EPSILON {
            break;
        }
        k += 1.0;
        fac *= s + k;
        b /= w;
        k += 1.0;
    }
    sum
}

/// `ψ^(m)(x)`, the m-th derivative of `ψ`, for integer `m ≥ 0`:
/// `(-1)^(m+1) m! ζ(m+1, x)` for m ≥ 1. Non-integer or negative `m` is NaN.
pub fn polygamma(m: f64, x: f64) -> f64 {
    if m.is_nan() || m < 0.0 || m != m.floor() {
        return f64::NAN;
    }
    if m == 0.0 {
        return digamma(x);
    }
    let mut fact = 1.0;
    let mut k = 2.0;
    while k <= m {
        fact *= k;
        k += 1.0;
    }
    let sign = if (m + 1.0) % 2.0 == 0.0 { 1.0 } else { -1.0 };
    sign * fact * zeta(m + 1.0, x)
}
