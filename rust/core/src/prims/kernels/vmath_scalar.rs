//! Per-element math of `vmath`: the constants and fitted polynomials, the
//! shared building blocks (Horner, range reduction, scaling) and the scalar
//! functions (`exp_f32`, `sin_f64`, ...) that the slice kernels in
//! `vmath.rs` apply to every element.
#![allow(clippy::approx_constant, clippy::excessive_precision)]

use super::{big_f32, big_f64};

// -------------------------------------------------------------- constants

/// ln 2 split: `LN2_HI` has 32 significant bits, so `k·LN2_HI` is exact for
/// |k| < 2^21.
const LN2_HI: f64 = 0.6931471803691238;
const LN2_LO: f64 = 1.9082149292705877e-10;
const INV_LN2: f64 = 1.4426950408889634;
/// π/2 in three parts; the first two have 33 significant bits, so
/// `k·PIO2_1` and `k·PIO2_2` are exact for |k| < 2^20.
const PIO2_1: f64 = 1.5707963267341256;
const PIO2_2: f64 = 6.077100506303966e-11;
const PIO2_3: f64 = 2.0222662487959506e-21;
const TWO_OVER_PI: f64 = 0.6366197723675814;
const SQRT2: f64 = std::f64::consts::SQRT_2;
/// 1.5·2^52: adding it rounds an |x| < 2^51 to an integer (to nearest even)
/// and leaves that integer in the low mantissa bits.
const ROUND_MAGIC: f64 = 6755399441055744.0;
/// 2^54, to bring subnormals into the normal range.
const TWO54: f64 = 18014398509481984.0;

// Polynomials fitted for this module (Chebyshev interpolation in 160-bit
// arithmetic, converted to the monomial basis), lowest degree first.

/// `(e^r - 1)/r` on |r| ≤ ln2/2 (degree 11, fit error 2.5e-19).
const EXPM1_F64: [f64; 12] = [
    1.0,
    0.5,
    0.16666666666666682,
    0.04166666666666668,
    0.008333333333319442,
    0.001388888888887897,
    0.00019841269890471088,
    2.480158733672408e-05,
    2.755724046539405e-06,
    2.7557262977857477e-07,
    2.5110205054885565e-08,
    2.0918249029237566e-09,
];
/// `(2^r - 1)/r` on |r| ≤ 1/2 (degree 11, fit error 1.7e-19).
const EXP2M1_F64: [f64; 12] = [
    0.6931471805599453,
    0.24022650695910072,
    0.055504108664821625,
    0.00961812910762848,
    0.001333355814640647,
    0.00015403530393370734,
    1.5252733841556773e-05,
    1.3215486808705563e-06,
    1.0178057087733941e-07,
    7.0548973041554995e-09,
    4.4558179083360645e-10,
    2.5729324177362305e-11,
];
/// `(e^r - 1)/r` on |r| ≤ ln2/2 (degree 6, fit error 2.5e-10).
pub(super) const EXPM1_F32: [f64; 7] = [
    1.0,
    0.5000000047527411,
    0.16666666719452422,
    0.041666351080179596,
    0.0083332982820304,
    0.0013941259468770698,
    0.00019899441673222872,
];
/// `(2^r - 1)/r` on |r| ≤ 1/2 (degree 6, fit error 1.7e-10).
const EXP2M1_F32: [f64; 7] = [
    0.6931471805599453,
    0.24022650922288757,
    0.055504108839096185,
    0.009618056678524637,
    0.001333350238616277,
    0.0001546144469856913,
    1.5297323760701075e-05,
];
/// `(2·atanh(s)/s - 2)/s²` in `z = s²` on s ≤ (√2-1)/(√2+1) (degree 7, fit error 2.1e-18).
const LOG_F64: [f64; 8] = [
    0.6666666666666666,
    0.4000000000000088,
    0.2857142857080323,
    0.2222222239180047,
    0.18181795630884753,
    0.15386240205813478,
    0.13268759668560612,
    0.13086767009948175,
];
/// `(2·atanh(s)/s - 2)/s²` in `z = s²` on s ≤ (√2-1)/(√2+1) (degree 3, fit error 1.2e-9).
pub(super) const LOG_F32: [f64; 4] = [
    0.6666666655445165,
    0.40000121876972,
    0.2855081659971155,
    0.23330581938241893,
];
/// `(sin(r) - r)/r³` in `z = r²` on |r| ≤ π/4 (degree 6, fit error 1.2e-20).
const SIN_F64: [f64; 7] = [
    -0.16666666666666666,
    0.008333333333333331,
    -0.00019841269841265003,
    2.7557319219291695e-06,
    -2.5052106215978872e-08,
    1.6058529011960858e-10,
    -7.586543634101903e-13,
];
/// `(cos(r) - 1 + r²/2)/r⁴` in `z = r²` on |r| ≤ π/4 (degree 6, fit error 6.6e-22).
const COS_F64: [f64; 7] = [
    0.041666666666666664,
    -0.0013888888888888887,
    2.480158730158461e-05,
    -2.7557319221376434e-07,
    2.08767557819242e-09,
    -1.1470459438155826e-11,
    4.7457865678652127e-14,
];
/// `erf(x)/x` as a polynomial in `x²` on `|x| < 1` (Chebyshev fit, max rel. error 1.3e-19).
const ERF_SMALL: [f64; 13] = [
    1.1283791670955126,
    -0.3761263890318375,
    0.11283791670954879,
    -0.026866170645076792,
    0.0052239776248180145,
    -0.000854832698083379,
    0.0001205533111164271,
    -1.4925595266831182e-05,
    1.6461000484121368e-06,
    -1.6350312701054695e-07,
    1.4659775274047436e-08,
    -1.1372848856791674e-09,
    5.957176147748911e-11,
];
/// `erfc(x)·exp(x²)` as polynomials in `x - mid` on [1, 2), [2, 3.5), [3.5, 6] (Chebyshev fits).
const ERFCX_MID: [f64; 3] = [1.5, 2.75, 4.75];
// piece (1, 2) rel err 4.5e-22
// piece (2, 3.5) rel err 7.9e-21
// piece (3.5, 6) rel err 2.4e-19
const ERFCX: [[f64; 20]; 3] = [
    [
        0.3215854164543175,
        -0.16362291773256007,
        0.0761510398554774,
        -0.03293090529956264,
        0.013377340953066709,
        -0.005145957547985023,
        0.0018861348770302729,
        -0.000661930066411685,
        0.0002233099443389221,
        -7.265892219254739e-05,
        2.2864312423194544e-05,
        -6.9749916653834805e-06,
        2.066968881634488e-06,
        -5.960819078215798e-07,
        1.6756034844048246e-07,
        -4.5970329037492514e-08,
        1.2288470192463931e-08,
        -3.2242266939179187e-09,
        8.979502147040172e-10,
        -2.2549271605029615e-10,
    ],
    [
        0.1936620962790687,
        -0.06323763756063484,
        0.019758592987322864,
        -0.005934337896997976,
        0.0017195818852891926,
        -0.0004821950849810505,
        0.0001311818005309317,
        -3.469860957791415e-05,
        8.940156042164191e-06,
        -2.247373431338624e-06,
        5.51975859423307e-07,
        -1.3262544811606156e-07,
        3.120915823995016e-08,
        -7.199944438245702e-09,
        1.6302885466903558e-09,
        -3.624386671648688e-10,
        7.861255559494564e-11,
        -1.690102521144733e-11,
        4.060469459829758e-12,
        -8.426711677587091e-13,
    ],
    [
        0.11630270721024731,
        -0.02350344859816315,
        0.004661326368972343,
        -0.0009080988970296908,
        0.0001739283040406064,
        -3.277578113462419e-05,
        6.08111455078227e-06,
        -1.1115677201483395e-06,
        2.002919683441791e-07,
        -3.559574699373066e-08,
        6.242438035376163e-09,
        -1.0807615553487736e-09,
        1.8479759770409932e-10,
        -3.12214957291069e-11,
        5.21891018757171e-12,
        -8.616561594719681e-13,
        1.3788567789968384e-13,
        -2.2296939163216056e-14,
        4.418116067216368e-15,
        -6.967058483586665e-16,
    ],
];

/// `(tanh(x) - x)/x³` in `z = x²` on |x| ≤ 0.625 (degree 12, fit error 1.5e-19).
const TANH_F64: [f64; 13] = [
    -0.3333333333333333,
    0.13333333333333322,
    -0.05396825396823587,
    0.02186948853513144,
    -0.008863235499755191,
    0.0035921275068775014,
    -0.0014558283927967684,
    0.0005899817708467141,
    -0.00023888925486753107,
    9.604055445315617e-05,
    -3.708011585593858e-05,
    1.220895156262908e-05,
    -2.438400399388769e-06,
];

// ------------------------------------------------------- building blocks

/// `horner` (f64) and `horner32` (f32): `c[0] + c[1]·x + ...` by Horner's
/// rule in `x²` over the pairs `c[2i] + c[2i+1]·x` (Estrin's first level):
/// one product more than plain Horner (`x²`) at about half its dependency
/// depth. The slice loops are latency-bound with plain Horner: a vector's
/// chain is ~30 dependent operations and the scheduler holds only about
/// three loop iterations of it at once.
macro_rules! horner {
    ($($name:ident: $t:ty),*) => {$(
        #[inline(always)]
        fn $name<const N: usize>(x: $t, c: &[$t; N]) -> $t {
            let x2 = x * x;
            let pair = |p: &[$t]| match *p {
                [a, b] => a + b * x,
                [a] => a,
                _ => 0.0,
            };
            let mut it = c.chunks(2).rev();
            let mut acc = it.next().map_or(0.0, pair);
            for p in it {
                acc = pair(p) + x2 * acc;
            }
            acc
        }
    )*};
}

horner!(horner: f64, horner32: f32);

/// `round_int` (f64, i64; for |x| < 2^51) and `round_int32` (f32, i32; for
/// |x| < 2^22): `x` rounded to the nearest integer (ties to even), as a
/// float and as an integer, by adding and subtracting the type's
/// `ROUND_MAGIC` (other inputs give garbage, never a panic). Then `pow2i`
/// (-1022 ≤ k ≤ 1023) and `pow2i32` (-126 ≤ k ≤ 127): 2^k, by writing the
/// biased exponent.
macro_rules! int_scaling {
    ($($round:ident, $pow2:ident: $t:ty, $i:ty, $u:ty, $magic:expr, $bias:expr, $mantissa:expr;)*) => {$(
        #[inline(always)]
        fn $round(x: $t) -> ($t, $i) {
            let t = x + $magic;
            let k = (t.to_bits() as $i).wrapping_sub($magic.to_bits() as $i);
            (t - $magic, k)
        }

        #[inline(always)]
        fn $pow2(k: $i) -> $t {
            <$t>::from_bits((k.wrapping_add($bias) as $u).wrapping_shl($mantissa))
        }
    )*};
}

int_scaling! {
    round_int, pow2i: f64, i64, u64, ROUND_MAGIC, 1023, 52;
    round_int32, pow2i32: f32, i32, u32, ROUND_MAGIC_F32, 127, 23;
}

/// `k` as f64 for |k| < 2^51, with integer vector ops only (AVX2 has no
/// i64 → f64 conversion).
#[inline(always)]
fn i64_to_f64(k: i64) -> f64 {
    f64::from_bits((ROUND_MAGIC.to_bits() as i64).wrapping_add(k) as u64) - ROUND_MAGIC
}

/// `p·2^k` for |k| ≤ 2000 with one rounding (the two half-scalings are
/// exact unless the result overflows or is subnormal).
#[inline(always)]
fn scale(p: f64, k: i64) -> f64 {
    let k1 = k.wrapping_shr(1);
    let k2 = k.wrapping_sub(k1);
    p * pow2i(k1) * pow2i(k2)
}

/// Splits `v` into a 26-bit high part and the rest (Veltkamp).
#[inline(always)]
fn split26(v: f64) -> (f64, f64) {
    let t = v * 134217729.0;
    let hi = t - (t - v);
    (hi, v - hi)
}

/// `a·b = p + e` exactly (Dekker's product, no FMA); finite inputs.
#[inline(always)]
fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    let ((ah, al), (bh, bl)) = (split26(a), split26(b));
    (p, ((ah * bh - p) + ah * bl + al * bh) + al * bl)
}

/// `x` with the sign of `s` (NaN keeps its payload).
#[inline(always)]
fn copysign(x: f64, s: f64) -> f64 {
    x.copysign(s)
}

// ----------------------------------------------------------- exp family

/// `e^x` with the polynomial `c` for `(e^r - 1)/r`.
#[inline(always)]
pub(super) fn exp_core<const N: usize>(x: f64, c: &[f64; N]) -> f64 {
    // Beyond these, the result is inf / 0 anyway; the clamp keeps NaN.
    let xc = x.clamp(-746.0, 710.0);
    let (kf, k) = round_int(xc * INV_LN2);
    let r = (xc - kf * LN2_HI) - kf * LN2_LO;
    scale(1.0 + r * horner(r, c), k)
}

/// `2^x` with the polynomial `c` for `(2^r - 1)/r`.
#[inline(always)]
fn exp2_core<const N: usize>(x: f64, c: &[f64; N]) -> f64 {
    let xc = x.clamp(-1076.0, 1025.0);
    let (kf, k) = round_int(xc);
    let r = xc - kf;
    scale(1.0 + r * horner(r, c), k)
}

/// `e^x - 1` for |x| ≤ 40 (the caller clamps): `2^k·(e^r - 1) + (2^k - 1)`
/// keeps the relative accuracy of `e^r - 1` for small |x|.
#[inline(always)]
fn expm1_small<const N: usize>(x: f64, c: &[f64; N]) -> f64 {
    let (kf, k) = round_int(x * INV_LN2);
    let r = (x - kf * LN2_HI) - kf * LN2_LO;
    let em = r * horner(r, c);
    let s = pow2i(k);
    s * em + (s - 1.0)
}

/// `e^x - 1`; above 40 it is `e^x` to the last bit.
#[inline(always)]
fn expm1_core<const N: usize>(x: f64, c: &[f64; N]) -> f64 {
    let small = expm1_small(x.clamp(-40.0, 40.0), c);
    let r = if x > 40.0 { exp_core(x, c) } else { small };
    // -0.0 (and +0.0) unchanged.
    if x == 0.0 {
        x
    } else {
        r
    }
}

/// `tanh(x) = t/(t+2)` with `t = e^{2|x|} - 1`; |x| is clamped at 20,
/// where tanh is 1 in f64. With a nonempty `small` (f64), |x| < 0.625 uses
/// `x + x³·P(x²)` instead: there the quotient amplifies the error of `t`.
#[inline(always)]
pub(super) fn tanh_core<const N: usize, const M: usize>(
    x: f64, c: &[f64; N], small: &[f64; M],
) -> f64 {
    let a = x.abs();
    let a = if a > 20.0 { 20.0 } else { a };
    let t = expm1_small(2.0 * a, c);
    let r = t / (t + 2.0);
    let r = if M > 0 && a < 0.625 {
        let z = a * a;
        a + (a * z) * horner(z, small)
    } else {
        r
    };
    // tanh(±0) = ±0 (r is +0 there).
    copysign(r, x)
}

/// `1/(1+e^-x)` without overflow: `e = e^{-|x|}`, then `num/(1+e)` with
/// `num = 1` for x ≥ 0 and `e` below. `1+e` is kept exactly as `h + l` and
/// the quotient gets one correction step (Dekker product for the
/// remainder), so only the error of `e` remains.
#[inline(always)]
pub(super) fn logistic_core<const N: usize>(x: f64, c: &[f64; N]) -> f64 {
    let e = exp_core(-x.abs(), c);
    let num = if x >= 0.0 { 1.0 } else { e };
    let h = 1.0 + e;
    let l = (1.0 - h) + e;
    let inv = 1.0 / h;
    let q = num * inv;
    let (p, pe) = two_prod(q, h);
    q + (((num - p) - pe) - q * l) * inv
}

// ----------------------------------------------------------- log family

/// `log(x)` for finite x > 0 (other inputs give garbage; `log_core` fixes
/// them up): `x = 2^k·m`, m in [√½, √2), `f = m - 1`, `s = f/(2+f)`,
/// `log(1+f) = f - f²/2 + s·(f²/2 + R(s²))`.
#[inline(always)]
fn log_finite<const N: usize>(x: f64, c: &[f64; N]) -> f64 {
    let tiny = x < f64::MIN_POSITIVE;
    let xs = if tiny { x * TWO54 } else { x };
    let bits = xs.to_bits();
    let e = (bits.wrapping_shr(52) as i64).wrapping_sub(if tiny { 1023 + 54 } else { 1023 });
    let m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    let big = m > SQRT2;
    let m = if big { m * 0.5 } else { m };
    let k = i64_to_f64(e.wrapping_add(i64::from(big)));
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let r = z * horner(z, c);
    let hfsq = 0.5 * f * f;
    k * LN2_HI - ((hfsq - (s * (hfsq + r) + k * LN2_LO)) - f)
}

/// `log(x)` with libm's special values.
#[inline(always)]
pub(super) fn log_core<const N: usize>(x: f64, c: &[f64; N]) -> f64 {
    log_special_f64(x, log_finite(x, c))
}

/// `log_special_f64`/`log_special_f32`: `r`, the logarithm of a finite
/// positive `x`, with libm's special values at the other `x` (branch-free
/// selects, as the vector paths do).
macro_rules! log_special {
    ($($name:ident: $t:ident),*) => {$(
        #[inline(always)]
        fn $name(x: $t, r: $t) -> $t {
            let r = if x == $t::INFINITY { x } else { r };
            let r = if x == 0.0 { $t::NEG_INFINITY } else { r };
            let r = if x < 0.0 { $t::NAN } else { r };
            if x.is_nan() {
                x
            } else {
                r
            }
        }
    )*};
}

log_special!(log_special_f64: f64, log_special_f32: f32);

/// `log(1+x)`: `u = 1+x` rounded, then `log(u) + (x - (u-1))/u` corrects
/// for the rounding of `u`.
#[inline(always)]
fn log1p_core<const N: usize>(x: f64, c: &[f64; N]) -> f64 {
    let u = 1.0 + x;
    let corr = (x - (u - 1.0)) / u;
    let corr = if u > 0.0 && u < f64::INFINITY {
        corr
    } else {
        0.0
    };
    let r = log_core(u, c) + corr;
    // ±0 unchanged (and NaN payloads kept).
    if x == 0.0 || x.is_nan() {
        x
    } else {
        r
    }
}

// ------------------------------------------------------------- sin, cos

/// Quadrant `k` and `x - k·π/2 = r + tail` (|r| ≲ π/4, |tail| ≲ ulp(r))
/// for |x| ≤ [`TRIG_BIG`](super::TRIG_BIG). `x - k·PIO2_1` and `k·PIO2_2` are exact; the
/// rounding error of the one inexact subtraction is carried in `tail`.
#[inline(always)]
fn trig_reduce(x: f64) -> (f64, f64, i64) {
    let (kf, k) = round_int(x * TWO_OVER_PI);
    let r1 = x - kf * PIO2_1;
    let t = kf * PIO2_2;
    let r = r1 - t;
    // Exact error of `r1 - t` (Fast2Sum: |r1| ≥ |t| or the subtraction
    // was exact).
    let err = (r1 - r) - t;
    (r, err - kf * PIO2_3, k)
}

/// `sin(r + tail) ≈ r + (r³·S(r²) + tail·(1 - r²/2))`.
#[inline(always)]
fn sin_poly<const N: usize>(r: f64, tail: f64, c: &[f64; N]) -> f64 {
    let z = r * r;
    r + ((r * z) * horner(z, c) + (tail - 0.5 * z * tail))
}

/// `cos(r + tail) ≈ 1 - z/2 + z²·C(z) - r·tail`, with the rounding error of
/// `1 - z/2` added back.
#[inline(always)]
fn cos_poly<const N: usize>(r: f64, tail: f64, c: &[f64; N]) -> f64 {
    let z = r * r;
    let hz = 0.5 * z;
    let w = 1.0 - hz;
    w + ((((1.0 - w) - hz) + (z * z) * horner(z, c)) - r * tail)
}

/// `sin(x)` where `x = r + tail + k·π/2`.
#[inline(always)]
fn quadrant<const N: usize, const M: usize>(
    r: f64, tail: f64, k: i64, s: &[f64; N], c: &[f64; M],
) -> f64 {
    let sv = sin_poly(r, tail, s);
    let cv = cos_poly(r, tail, c);
    let v = if k & 1 != 0 { cv } else { sv };
    if k & 2 != 0 {
        -v
    } else {
        v
    }
}

/// `sin(x)` for |x| ≤ [`TRIG_BIG`](super::TRIG_BIG); `x` itself in the other lanes.
#[inline(always)]
pub(super) fn sin_fast<const N: usize, const M: usize>(x: f64, s: &[f64; N], c: &[f64; M]) -> f64 {
    let (r, tail, k) = trig_reduce(x);
    let v = quadrant(r, tail, k, s, c);
    // sin(±0) = ±0; big and non-finite lanes keep x for the second pass.
    if x == 0.0 || big_f64(x) {
        x
    } else {
        v
    }
}

/// `cos(x)` for |x| ≤ [`TRIG_BIG`](super::TRIG_BIG); `x` itself in the other lanes.
#[inline(always)]
pub(super) fn cos_fast<const N: usize, const M: usize>(x: f64, s: &[f64; N], c: &[f64; M]) -> f64 {
    let (r, tail, k) = trig_reduce(x);
    let v = quadrant(r, tail, k.wrapping_add(1), s, c);
    if big_f64(x) {
        x
    } else {
        v
    }
}

// -------------------------------------------------------------------- erf

/// `erf(x)`: `x·P(x²)` for |x| < 1; `1 - e^{-x²}·G(|x|)` above, with
/// `G = erfc·e^{x²}` fitted on [1, 2), [2, 3.5), [3.5, 6] and `x²` exact
/// as a double-double.
#[inline(always)]
fn erf_core(x: f64) -> f64 {
    let small = x * horner(x * x, &ERF_SMALL);
    let a = x.abs().clamp(1.0, 6.0);
    let [m0, m1, m2] = ERFCX_MID;
    let [c0, c1, c2] = &ERFCX;
    // All three pieces are evaluated and one is selected (branch-free).
    let (g0, g1, g2) = (horner(a - m0, c0), horner(a - m1, c1), horner(a - m2, c2));
    let g = if a < 2.0 {
        g0
    } else if a < 3.5 {
        g1
    } else {
        g2
    };
    let (hi, lo) = two_prod(a, a);
    let erfc = exp_core(-hi, &EXPM1_F64) * g * (1.0 - lo);
    let large = copysign(1.0 - erfc, x);
    if x.abs() < 1.0 {
        small
    } else {
        large
    }
}

// ------------------------------------------------------------------- pow

/// C `pow` special cases around `|x|^y = e^{y·log|x|}` (`mag`).
#[inline(always)]
fn pow_fixup(x: f64, y: f64, mag: f64) -> f64 {
    let y_int = y.floor() == y;
    let half = y * 0.5;
    let y_odd = y_int && half.floor() != half;
    let neg = x.is_sign_negative();
    let r = if neg && y_odd { -mag } else { mag };
    // A finite negative base with a finite non-integer exponent.
    let r = if x < 0.0 && x > f64::NEG_INFINITY && y.is_finite() && !y_int {
        f64::NAN
    } else {
        r
    };
    // pow(1, y) = 1 and pow(x, ±0) = 1, even for NaN; pow(-1, ±inf) = 1.
    let r = if x == 1.0 || y == 0.0 { 1.0 } else { r };
    if x == -1.0 && y.is_infinite() {
        1.0
    } else {
        r
    }
}

/// f32 `x**y` in f64: the exponent `y·log|x|` is ≤ ~150 in magnitude for
/// finite f32 results, so its f64 error stays far below an f32 ulp.
#[inline(always)]
pub fn pow_f32_scalar(x: f32, y: f32) -> f32 {
    let (x, y) = (f64::from(x), f64::from(y));
    let mag = exp_core(y * log_core(x.abs(), &LOG_F64), &EXPM1_F64);
    pow_fixup(x, y, mag) as f32
}

/// f64 `x**y` (libm).
#[inline(always)]
pub fn pow_f64_scalar(x: f64, y: f64) -> f64 {
    libm::pow(x, y)
}

// ------------------------------------------------------------ native f32
//
// `exp`, `tanh`, `logistic`, `sin`, `cos` and `log` for f32 compute in f32 (16
// lanes per AVX-512 vector instead of 8), with polynomials fitted by
// `rust/core/tools/fit_vmath32.py` (Chebyshev interpolation in long double,
// rounded to f32). `sin`/`cos` reduce the argument in f32 for
// |x| ≤ 512 and leave larger lanes to the second pass, which reduces in f64.

/// 1.5·2^23: adding it rounds an |x| < 2^22 to an integer (ties to even)
/// and leaves that integer in the low mantissa bits.
const ROUND_MAGIC_F32: f32 = 12582912.0;
const INV_LN2_F32: f32 = 1.442_695;
/// ln 2 split: `LN2_HI_F32` has 15 significant bits, so `k·LN2_HI_F32` is
/// exact for |k| < 2^9.
const LN2_HI_F32: f32 = 0.693_145_75;
const LN2_LO_F32: f32 = 1.428_606_8e-6;

/// `(e^r - 1 - r)/r²` on |r| ≤ ln2/2 (degree 4, fit error 1.3e-7).
const EXP_F32: [f32; 5] = [
    5e-01,
    1.6666576e-01,
    4.1666556e-02,
    8.36319e-03,
    1.3926198e-03,
];
/// `(tanh(a) - a)/a³` in `z = a²` on |a| ≤ 0.625 (degree 5, fit error 4.8e-9).
const TANH_F32: [f32; 6] = [
    -3.3333334e-01,
    1.3333304e-01,
    -5.3959258e-02,
    2.1768918e-02,
    -8.343945e-03,
    2.2927448e-03,
];
/// `(sin(r) - r)/r³` in `z = r²` on |r| ≤ π/4 (degree 3, fit error 1.7e-10).
const SIN_F32: [f32; 4] = [-1.6666667e-01, 8.333332e-03, -1.9840081e-04, 2.7249146e-06];
/// `(cos(r) - 1 + r²/2)/r⁴` in `z = r²` on |r| ≤ π/4 (degree 3, fit error 6.4e-10).
const COS_F32: [f32; 4] = [4.1666668e-02, -1.3888888e-03, 2.4800594e-05, -2.7300308e-07];

/// `(2·atanh(s)/s - 2)/s²` in `z = s²` on s ≤ (√2-1)/(√2+1) (degree 3, fit error 1.7e-9).
const LOG_R_F32: [f32; 4] = [6.666667e-01, 4.0000123e-01, 2.855077e-01, 2.3331805e-01];
/// 2^25: scales a subnormal f32 into the normal range.
const TWO25_F32: f32 = 33554432.0;
/// π/2 = `PIO2_A_F32 + PIO2_B_F32 + PIO2_C_F32 + PIO2_D_F32` (to 2^-72):
/// the first three have ≤ 15 significant bits, so `k·part` is exact for
/// |k| < 2^9, i.e. for |x| ≤ [`TRIG_MID_F32`].
const PIO2_A_F32: f32 = 1.570_739_7;
const PIO2_B_F32: f32 = 5.657_971e-5;
const PIO2_C_F32: f32 = 9.920_882e-10;
const PIO2_D_F32: f32 = 5.390_303e-15;
const TWO_OVER_PI_F32: f32 = 0.636_619_77;
/// f32 lanes with |x| above this leave `sin`/`cos` to the second pass
/// ([`trig_patch_f32`](super::trig_patch_f32)), which reduces in f64.
const TRIG_MID_F32: f32 = 512.0;

/// `e^x = p·2^k` for |x| ≤ 104 (p in [√½, √2] up to rounding).
#[inline(always)]
fn exp_parts32(x: f32) -> (f32, i32) {
    let (kf, k) = round_int32(x * INV_LN2_F32);
    // `kf·LN2_HI_F32` is exact and the subtraction too (Sterbenz).
    let r = (x - kf * LN2_HI_F32) - kf * LN2_LO_F32;
    (1.0 + (r + (r * r) * horner32(r, &EXP_F32)), k)
}

/// `e^x` in f32 arithmetic.
#[inline(always)]
fn exp32(x: f32) -> f32 {
    // Beyond these the result is 0 / inf anyway; the clamp keeps NaN.
    let (p, k) = exp_parts32(x.clamp(-104.0, 89.0));
    // Two exact half-scalings: 2^k alone leaves the normal range.
    let k1 = k.wrapping_shr(1);
    p * pow2i32(k1) * pow2i32(k.wrapping_sub(k1))
}

/// `tanh(x)`: `a + a³·T(a²)` for `a = |x| < 0.625`, above `1 - 2/(e^{2a}+1)`
/// (at least 0.55, so the errors of `e^{2a}` and of the quotient are below
/// an ulp of the result); |x| is clamped at 10, where tanh is 1 in f32.
#[inline(always)]
fn tanh32(x: f32) -> f32 {
    let a = x.abs();
    let a = if a > 10.0 { 10.0 } else { a };
    let z = a * a;
    let small = a + (a * z) * horner32(z, &TANH_F32);
    let (p, k) = exp_parts32(a + a);
    let large = 1.0 - 2.0 / (p * pow2i32(k) + 1.0);
    // tanh(±0) = ±0 (small is +0 there); NaN stays NaN.
    (if a < 0.625 { small } else { large }).copysign(x)
}

/// `1/(1+e^-x)` as `num/(1+e)` with `e = e^{-|x|}` and `num = 1` for
/// x ≥ 0, `e` below (no overflow, subnormal results for x < -87).
#[inline(always)]
fn logistic32(x: f32) -> f32 {
    let e = exp32(-x.abs());
    let num = if x >= 0.0 { 1.0 } else { e };
    num / (1.0 + e)
}

/// `log(x)` for finite x > 0 in f32 ([`log_finite`]'s algorithm; other
/// inputs give garbage, [`log32`] fixes them up). `k·LN2_HI_F32` is exact
/// for the |k| ≤ 150 of f32.
#[inline(always)]
fn log_finite32(x: f32) -> f32 {
    let tiny = x < f32::MIN_POSITIVE;
    let xs = if tiny { x * TWO25_F32 } else { x };
    let bits = xs.to_bits();
    let e = (bits.wrapping_shr(23) as i32).wrapping_sub(if tiny { 127 + 25 } else { 127 });
    let m = f32::from_bits((bits & 0x007f_ffff) | 0x3f80_0000);
    let big = m > std::f32::consts::SQRT_2;
    let m = if big { m * 0.5 } else { m };
    let k = e.wrapping_add(i32::from(big)) as f32;
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let r = z * horner32(z, &LOG_R_F32);
    let hfsq = 0.5 * f * f;
    k * LN2_HI_F32 - ((hfsq - (s * (hfsq + r) + k * LN2_LO_F32)) - f)
}

/// `log(x)` in f32 arithmetic, with libm's special values.
#[inline(always)]
fn log32(x: f32) -> f32 {
    log_special_f32(x, log_finite32(x))
}

/// `a + b = s + e` exactly (Knuth's TwoSum).
#[inline(always)]
fn two_sum32(a: f32, b: f32) -> (f32, f32) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// Quadrant `k` and `x - k·π/2 = r + tail` (|tail| ≤ ulp(r)/2) for
/// |x| ≤ [`TRIG_MID_F32`], in f32: `x - k·PIO2_A_F32` is exact (Sterbenz),
/// the next two parts are subtracted exactly (TwoSum) and only the tiny
/// errors are rounded: π/2 is represented to 2^-72, and the roundings
/// are relative to `r` or below 2^-62. No f32 of |x| ≤ 65536 lies closer
/// than 2^-27.8 to a multiple of π/2 (`rust/core/tools/fit_vmath32.py
/// --reduction`), so `r + tail` keeps over 30 correct bits even there.
#[inline(always)]
fn trig_reduce_f32(x: f32) -> (f32, f32, i32) {
    let (kf, k) = round_int32(x * TWO_OVER_PI_F32);
    let r1 = x - kf * PIO2_A_F32;
    let (s1, e1) = two_sum32(r1, -(kf * PIO2_B_F32));
    let (s2, e2) = two_sum32(s1, -(kf * PIO2_C_F32));
    let t = (e1 + e2) - kf * PIO2_D_F32;
    let (r, tail) = two_sum32(s2, t);
    (r, tail, k)
}

/// Quadrant `k` and `x - k·π/2 = r + tail` in f32 (|tail| ≤ ulp(r)/2) for
/// |x| ≤ [`TRIG_BIG`](super::TRIG_BIG), reduced in f64: `x - k·PIO2_1` is exact, and the two
/// later roundings are relative to the reduced value itself, so `r + tail`
/// is right to ~2^-52 even next to a multiple of π/2.
#[inline(always)]
fn trig_reduce32(x: f32) -> (f32, f32, i32) {
    let x = f64::from(x);
    let (kf, k) = round_int(x * TWO_OVER_PI);
    let rd = ((x - kf * PIO2_1) - kf * PIO2_2) - kf * PIO2_3;
    let r = rd as f32;
    (r, (rd - f64::from(r)) as f32, k as i32)
}

/// `sin(x)` with `x = r + tail + k·π/2` in f32 (the f64 `quadrant`'s
/// polynomials, fitted for f32).
#[inline(always)]
fn quadrant32(r: f32, tail: f32, k: i32) -> f32 {
    let z = r * r;
    let sv = r + ((r * z) * horner32(z, &SIN_F32) + (tail - 0.5 * z * tail));
    let hz = 0.5 * z;
    let w = 1.0 - hz;
    let cv = w + ((((1.0 - w) - hz) + (z * z) * horner32(z, &COS_F32)) - r * tail);
    let v = if k & 1 != 0 { cv } else { sv };
    if k & 2 != 0 {
        -v
    } else {
        v
    }
}

/// |x| > [`TRIG_MID_F32`], or x NaN (one compare, so the count in
/// [`trig_patch_f32`](super::trig_patch_f32) vectorizes).
#[inline(always)]
pub(super) fn mid_f32(x: f32) -> bool {
    let within = x.abs() <= TRIG_MID_F32;
    !within
}

/// `sin(x)` for |x| ≤ `TRIG_MID_F32`, `x` itself in the other lanes
/// (see [`sin_f32`]).
#[inline(always)]
pub fn sin_fast_f32(x: f32) -> f32 {
    let (r, tail, k) = trig_reduce_f32(x);
    let v = quadrant32(r, tail, k);
    // sin(±0) = ±0; other lanes keep x for the second pass.
    if x == 0.0 || mid_f32(x) {
        x
    } else {
        v
    }
}

/// `cos(x)` for |x| ≤ `TRIG_MID_F32`, `x` itself in the other lanes
/// (see [`cos_f32`]).
#[inline(always)]
pub fn cos_fast_f32(x: f32) -> f32 {
    let (r, tail, k) = trig_reduce_f32(x);
    let v = quadrant32(r, tail, k.wrapping_add(1));
    if mid_f32(x) {
        x
    } else {
        v
    }
}

/// `sin(x)` for |x| ≤ [`TRIG_BIG`](super::TRIG_BIG), reduced in f64.
#[inline(always)]
pub(super) fn sin_mid_f32(x: f32) -> f32 {
    let (r, tail, k) = trig_reduce32(x);
    quadrant32(r, tail, k)
}

/// `cos(x)` for |x| ≤ [`TRIG_BIG`](super::TRIG_BIG), reduced in f64.
#[inline(always)]
pub(super) fn cos_mid_f32(x: f32) -> f32 {
    let (r, tail, k) = trig_reduce32(x);
    quadrant32(r, tail, k.wrapping_add(1))
}

/// libm's `sin` of an f32, in f64.
#[inline(always)]
fn libm_sin_f32(x: f32) -> f32 {
    libm::sin(f64::from(x)) as f32
}

/// libm's `cos` of an f32, in f64.
#[inline(always)]
fn libm_cos_f32(x: f32) -> f32 {
    libm::cos(f64::from(x)) as f32
}

/// `e^x`.
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    exp32(x)
}

/// `tanh(x)`.
#[inline(always)]
pub fn tanh_f32(x: f32) -> f32 {
    tanh32(x)
}

/// `1/(1+e^-x)`.
#[inline(always)]
pub fn logistic_f32(x: f32) -> f32 {
    logistic32(x)
}

/// Natural logarithm.
#[inline(always)]
pub fn log_f32(x: f32) -> f32 {
    log32(x)
}

// ------------------------------------------------- per-element functions

/// `sign_f64`/`sign_f32`: ±1 for nonzero numbers; ±0 and NaN map to
/// themselves.
macro_rules! sign {
    ($($name:ident: $t:ty),*) => {$(
        #[inline(always)]
        pub fn $name(x: $t) -> $t {
            let one: $t = 1.0;
            if x == 0.0 || x.is_nan() {
                x
            } else {
                one.copysign(x)
            }
        }
    )*};
}

sign!(sign_f64: f64, sign_f32: f32);

macro_rules! per_element {
    ($($(#[$doc:meta])* $f32:ident, $f64:ident => |$x:ident, $c:ident| $body:expr, $c32:expr, $c64:expr;)*) => {
        $(
            $(#[$doc])*
            #[inline(always)]
            pub fn $f32(v: f32) -> f32 {
                let ($x, $c) = (f64::from(v), &$c32);
                ($body) as f32
            }
            $(#[$doc])*
            #[inline(always)]
            pub fn $f64(v: f64) -> f64 {
                let ($x, $c) = (v, &$c64);
                $body
            }
        )*
    };
}

per_element! {
    /// `2^x`.
    exp2_f32, exp2_f64 => |x, c| exp2_core(x, c), EXP2M1_F32, EXP2M1_F64;
    /// `e^x - 1`.
    expm1_f32, expm1_f64 => |x, c| expm1_core(x, c), EXPM1_F32, EXPM1_F64;
    /// `log(1+x)`.
    log1p_f32, log1p_f64 => |x, c| log1p_core(x, c), LOG_F32, LOG_F64;
    /// `erf(x)`.
    erf_f32, erf_f64 => |x, c| { let _ = c; erf_core(x) }, (), ();
}

/// `e^x`.
#[inline(always)]
pub fn exp_f64(x: f64) -> f64 {
    exp_core(x, &EXPM1_F64)
}

/// Natural logarithm.
#[inline(always)]
pub fn log_f64(x: f64) -> f64 {
    log_core(x, &LOG_F64)
}

/// `tanh(x)`.
#[inline(always)]
pub fn tanh_f64(x: f64) -> f64 {
    tanh_core(x, &EXPM1_F64, &TANH_F64)
}

/// `1/(1+e^-x)`.
#[inline(always)]
pub fn logistic_f64(x: f64) -> f64 {
    logistic_core(x, &EXPM1_F64)
}

/// `sin(x)` for |x| ≤ 65536, else `x` (see `sin_f64`).
#[inline(always)]
pub fn sin_fast_f64(x: f64) -> f64 {
    sin_fast(x, &SIN_F64, &COS_F64)
}

/// `cos(x)` for |x| ≤ 65536, else `x` (see `cos_f64`).
#[inline(always)]
pub fn cos_fast_f64(x: f64) -> f64 {
    cos_fast(x, &SIN_F64, &COS_F64)
}

/// Functions for any x that take `$slow` where `$far(x)` and `$fast`
/// elsewhere.
macro_rules! by_range {
    ($($(#[$doc:meta])* $vis:vis $name:ident: $t:ty => $far:ident ? $slow:path : $fast:ident;)*) => {$(
        $(#[$doc])*
        #[inline(always)]
        $vis fn $name(x: $t) -> $t {
            if $far(x) {
                $slow(x)
            } else {
                $fast(x)
            }
        }
    )*};
}

by_range! {
    /// `sin(x)` for any x (the libm path above |x| = 65536).
    pub sin_f64: f64 => big_f64 ? libm::sin : sin_fast_f64;
    /// `cos(x)` for any x.
    pub cos_f64: f64 => big_f64 ? libm::cos : cos_fast_f64;
    /// `sin(x)` for any x.
    pub sin_f32: f32 => mid_f32 ? sin_slow_f32 : sin_fast_f32;
    /// `cos(x)` for any x.
    pub cos_f32: f32 => mid_f32 ? cos_slow_f32 : cos_fast_f32;
    /// `sin(x)` for |x| > [`TRIG_MID_F32`] (and NaN): reduced in f64 up to
    /// [`TRIG_BIG`](super::TRIG_BIG), libm above.
    pub(super) sin_slow_f32: f32 => big_f32 ? libm_sin_f32 : sin_mid_f32;
    /// `cos(x)` for |x| > [`TRIG_MID_F32`] (and NaN).
    pub(super) cos_slow_f32: f32 => big_f32 ? libm_cos_f32 : cos_mid_f32;
}
