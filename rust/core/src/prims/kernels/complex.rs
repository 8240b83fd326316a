//! Elementwise kernels on complex64/complex128 operands (`num_complex`
//! elements, computed in the parts' own width). The shape rules admit
//! complex operands op by op; an op without a complex kernel here gives the
//! typed dtype error ([`bad_dtype`]).
//!
//! The part arithmetic is generic over the sealed float types `f32`/`f64`
//! (trait [`Part`]): IEEE operations that cannot overflow-panic, which the
//! workspace's `arithmetic_side_effects` lint allows for concrete floats
//! and complex numbers but cannot see through a type parameter.
#![allow(clippy::arithmetic_side_effects)]

use super::common::CastTo;
use super::common::{bad_dtype, dtypes_of, for_each_dtype, map, zip_map, BufElem, CastFrom};
use crate::array::{Buffer, C32, C64};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::prims::{BinaryOp, CmpOp, UnaryOp};
use num_complex::Complex;
use num_traits::{Float, FloatConst};

fn len_err(prim: &'static str) -> Error {
    Error::shape(prim, &[], "operand lengths disagree inside the kernel")
}

/// The float element types complex parts come in.
pub(super) trait Part: Float + FloatConst + CastTo + CastFrom + BufElem + Default {}
impl Part for f32 {}
impl Part for f64 {}

/// `exp(z) - 1` without cancellation for small `z`:
/// `expm1(x) cos(y) - 2 sin²(y/2)` for the real part.
fn expm1<T: Part>(z: Complex<T>) -> Complex<T> {
    if z.im == T::zero() {
        return Complex::new(z.re.exp_m1(), z.im);
    }
    if z.re == T::neg_infinity() {
        let im = if z.im.is_finite() {
            z.im.sin()
        } else {
            T::one()
        };
        return Complex::new(-T::one(), T::zero().copysign(im));
    }
    if z.re == T::infinity() && !z.im.is_finite() {
        return Complex::new(z.re, T::nan());
    }
    let two = T::one() + T::one();
    let half_sin = (z.im / two).sin();
    let re = z.re.exp_m1() * z.im.cos() - two * half_sin * half_sin;
    Complex::new(re, z.re.exp() * z.im.sin())
}

/// `log(1 + z)` without cancellation for small `z`: the real part is
/// `log1p(2x + x² + y²) / 2`.
fn log1p<T: Part>(z: Complex<T>) -> Complex<T> {
    let one = T::one();
    let two = one + one;
    let half = one / two;
    let (x, y) = (z.re, z.im);
    let re = if x.abs() > half || y.abs() > half {
        Complex::new(one + x, y).norm().ln()
    } else {
        (x * (two + x) + y * y).ln_1p() / two
    };
    Complex::new(re, y.atan2(one + x))
}

/// `z / |z|`, zero for zero (JAX's `sign` of a complex number).
fn sign<T: Part>(z: Complex<T>) -> Complex<T> {
    let r = z.norm();
    if r == T::zero() {
        Complex::new(T::zero(), T::zero())
    } else {
        Complex::new(z.re / r, z.im / r)
    }
}

fn logistic<T: Part>(z: Complex<T>) -> Complex<T> {
    let one = Complex::new(T::one(), T::zero());
    one / (one + (-z).exp())
}

/// Where the inverse functions meet their branch cuts, the values JAX
/// (XLA on the CPU) gives, which the textbook formulas of `num_complex` do
/// not: on the real axis beyond ±1, `asin` has a positive imaginary part and
/// `acos` a negative one whatever the sign of the zero, `atanh` takes the
/// sign of the zero; on the imaginary axis beyond ±i, `atan` takes the sign
/// of the real zero and `asinh` has a positive real part. `sqrt` ignores the
/// sign of a zero imaginary part. Infinite and NaN parts give the values of
/// C99 Annex G (the array API standard's special cases), and large arguments
/// are computed without overflow or cancellation.
fn asin<T: Part>(z: Complex<T>) -> Complex<T> {
    if z.im == T::zero() && z.re.abs() > T::one() {
        let half_pi = T::FRAC_PI_2();
        return Complex::new(half_pi.copysign(z.re), z.re.abs().acosh());
    }
    // asin(z) = -i asinh(iz)
    let w = asinh_any(Complex::new(-z.im, z.re));
    Complex::new(w.im, -w.re)
}

fn acos<T: Part>(z: Complex<T>) -> Complex<T> {
    if z.im == T::zero() && z.re.abs() > T::one() {
        let re = if z.re > T::zero() { T::zero() } else { T::PI() };
        return Complex::new(re, -z.re.abs().acosh());
    }
    if !is_finite(z) {
        let w = asin(z);
        return Complex::new(T::FRAC_PI_2() - w.re, -w.im);
    }
    z.acos()
}

fn acosh<T: Part>(z: Complex<T>) -> Complex<T> {
    if !is_finite(z) {
        let w = acos(z);
        return Complex::new(w.im.abs(), w.re.copysign(z.im));
    }
    z.acosh()
}

fn atan<T: Part>(z: Complex<T>) -> Complex<T> {
    if z.re == T::zero() && z.im.abs() > T::one() {
        return Complex::new(T::FRAC_PI_2().copysign(z.re), (T::one() / z.im).atanh());
    }
    z.atan()
}

fn is_finite<T: Part>(z: Complex<T>) -> bool {
    z.re.is_finite() && z.im.is_finite()
}

fn nan<T: Part>() -> T {
    T::nan()
}

fn asinh<T: Part>(z: Complex<T>) -> Complex<T> {
    if z.re == T::zero() && z.im.abs() > T::one() {
        return Complex::new(z.im.abs().acosh(), T::FRAC_PI_2().copysign(z.im));
    }
    asinh_any(z)
}

/// `asinh` on the first quadrant (it is odd and conjugate-symmetric): the
/// special values of C99, `log(2z)` where `z²` would lose the `+1`, and
/// `log1p(z + z²/(sqrt(z²+1)+1))` elsewhere (no cancellation there).
fn asinh_any<T: Part>(z: Complex<T>) -> Complex<T> {
    let (ax, ay) = (z.re.abs(), z.im.abs());
    let inf = T::infinity();
    let w = if ax.is_nan() || ay.is_nan() {
        if ax.is_infinite() || ay.is_infinite() {
            Complex::new(inf, nan())
        } else if ay == T::zero() {
            Complex::new(nan(), ay)
        } else {
            Complex::new(nan(), nan())
        }
    } else if ax.is_infinite() || ay.is_infinite() {
        let im = if ax.is_infinite() && ay.is_infinite() {
            T::FRAC_PI_4()
        } else if ax.is_infinite() {
            T::zero()
        } else {
            T::FRAC_PI_2()
        };
        Complex::new(inf, im)
    } else if ax.max(ay) > T::one() / T::epsilon().sqrt() {
        let l = Complex::new(ax, ay).ln();
        Complex::new(l.re + T::LN_2(), l.im)
    } else {
        let q = Complex::new(ax, ay);
        let one = Complex::new(T::one(), T::zero());
        let q2 = q * q;
        log1p(q + q2 / ((q2 + one).sqrt() + one))
    };
    Complex::new(w.re.copysign(z.re), w.im.copysign(z.im))
}

fn atanh<T: Part>(z: Complex<T>) -> Complex<T> {
    if z.im == T::zero() && z.re.abs() > T::one() {
        return Complex::new((T::one() / z.re).atanh(), T::FRAC_PI_2().copysign(z.im));
    }
    if !is_finite(z) || (z.re == T::zero() && z.im.is_nan()) {
        let (ax, ay) = (z.re.abs(), z.im.abs());
        let w = if ay.is_infinite() {
            Complex::new(T::zero(), T::FRAC_PI_2())
        } else if ax.is_infinite() {
            Complex::new(T::zero(), if ay.is_nan() { ay } else { T::FRAC_PI_2() })
        } else if ax == T::zero() {
            Complex::new(T::zero(), ay)
        } else {
            Complex::new(nan(), nan())
        };
        return Complex::new(w.re.copysign(z.re), w.im.copysign(z.im));
    }
    z.atanh()
}

fn sqrt<T: Part>(z: Complex<T>) -> Complex<T> {
    let (x, y) = (z.re, z.im);
    if y.is_infinite() {
        return Complex::new(T::infinity(), y);
    }
    if x == T::infinity() {
        return Complex::new(x, if y.is_nan() { y } else { T::zero().copysign(y) });
    }
    if x == T::neg_infinity() {
        let re = if y.is_nan() { y } else { T::zero() };
        return Complex::new(re, T::infinity().copysign(y));
    }
    if y == T::zero() {
        return Complex::new(x, T::zero()).sqrt();
    }
    z.sqrt()
}

fn sinh<T: Part>(z: Complex<T>) -> Complex<T> {
    let (x, y) = (z.re, z.im);
    if y == T::zero() {
        return Complex::new(x.sinh(), y);
    }
    if x == T::zero() && !y.is_finite() {
        return Complex::new(x, T::nan());
    }
    if x.is_infinite() && !y.is_finite() {
        return Complex::new(x, T::nan());
    }
    z.sinh()
}

fn cosh<T: Part>(z: Complex<T>) -> Complex<T> {
    let (x, y) = (z.re, z.im);
    if y == T::zero() {
        let im = if x.is_sign_negative() { -y } else { y };
        return Complex::new(x.cosh(), im);
    }
    if x == T::zero() && !y.is_finite() {
        return Complex::new(T::nan(), x);
    }
    if x.is_infinite() && !y.is_finite() {
        return Complex::new(x.abs(), T::nan());
    }
    z.cosh()
}

/// Kahan's `tanh`: no overflow for large real parts, C99's special values.
fn tanh<T: Part>(z: Complex<T>) -> Complex<T> {
    let (x, y) = (z.re, z.im);
    let one = T::one();
    let two = one + one;
    if x.is_infinite() {
        let im = if y.is_finite() { (two * y).sin() } else { y };
        return Complex::new(one.copysign(x), T::zero().copysign(im));
    }
    if x == T::zero() && !y.is_finite() {
        return Complex::new(x, T::nan());
    }
    if y == T::zero() {
        return Complex::new(x.tanh(), y);
    }
    let cutoff = <T as CastTo>::from_f64(22.0);
    if x.abs() > cutoff {
        let four = two + two;
        let e = (-(two * x.abs())).exp();
        return Complex::new(one.copysign(x), four * y.sin() * y.cos() * e);
    }
    let t = y.tan();
    let beta = one + t * t;
    let s = x.sinh();
    let rho = (one + s * s).sqrt();
    let den = one + beta * s * s;
    Complex::new(beta * rho * s / den, t / den)
}

/// `tan(z) = -i tanh(iz)`.
fn tan<T: Part>(z: Complex<T>) -> Complex<T> {
    let w = tanh(Complex::new(-z.im, z.re));
    Complex::new(w.im, -w.re)
}

/// One complex element function per unary op; `None` for ops JAX does not
/// define on complex operands.
fn unary_fn<T: Part>(op: UnaryOp) -> Option<fn(Complex<T>) -> Complex<T>> {
    Some(match op {
        UnaryOp::Neg => |z: Complex<T>| -z,
        UnaryOp::Exp => Complex::exp,
        UnaryOp::Log => Complex::ln,
        UnaryOp::Sin => Complex::sin,
        UnaryOp::Cos => Complex::cos,
        UnaryOp::Tan => tan,
        UnaryOp::Tanh => tanh,
        UnaryOp::Sinh => sinh,
        UnaryOp::Cosh => cosh,
        UnaryOp::Asin => asin,
        UnaryOp::Acos => acos,
        UnaryOp::Atan => atan,
        UnaryOp::Asinh => asinh,
        UnaryOp::Acosh => acosh,
        UnaryOp::Atanh => atanh,
        UnaryOp::Sqrt => sqrt,
        UnaryOp::Rsqrt => |z: Complex<T>| z.sqrt().finv(),
        UnaryOp::Exp2 => |z: Complex<T>| z.expf(T::one() + T::one()),
        UnaryOp::Log1p => log1p,
        UnaryOp::Expm1 => expm1,
        UnaryOp::Square => |z: Complex<T>| z * z,
        UnaryOp::Sign => sign,
        UnaryOp::Logistic => logistic,
        _ => return None,
    })
}

/// Complex unary ops with a complex result (`abs` is [`abs`]).
pub fn unary(op: UnaryOp, x: &Buffer) -> Result<Buffer> {
    let bad = || bad_dtype(op.name(), &[x.dtype()]);
    Ok(match x {
        Buffer::C64(v) => Buffer::C64(map(v, unary_fn::<f32>(op).ok_or_else(bad)?).into()),
        Buffer::C128(v) => Buffer::C128(map(v, unary_fn::<f64>(op).ok_or_else(bad)?).into()),
        _ => return Err(bad()),
    })
}

/// `abs` of complex numbers: the modulus, in the parts' float type.
pub fn abs(x: &Buffer) -> Result<Buffer> {
    Ok(match x {
        Buffer::C64(v) => Buffer::F32(map(v, |z: C32| z.norm()).into()),
        Buffer::C128(v) => Buffer::F64(map(v, |z: C64| z.norm()).into()),
        _ => return Err(bad_dtype("abs", &[x.dtype()])),
    })
}

/// `real`, `imag` (float results) and `conj` (complex result).
pub fn part(name: &'static str, x: &Buffer) -> Result<Buffer> {
    fn go<T: Part>(
        name: &str, v: &[Complex<T>], wrap: fn(Vec<Complex<T>>) -> Buffer,
    ) -> Option<Buffer> {
        Some(match name {
            "real" => T::wrap(map(v, |z| z.re)),
            "imag" => T::wrap(map(v, |z| z.im)),
            "conj" => wrap(map(v, |z| z.conj())),
            _ => return None,
        })
    }
    let out = match x {
        Buffer::C64(v) => go(name, v, Buffer::from),
        Buffer::C128(v) => go(name, v, Buffer::from),
        _ => None,
    };
    out.ok_or_else(|| bad_dtype(name, &[x.dtype()]))
}

/// `complex(re, im)` of two float operands of one dtype.
pub fn complex(re: &Buffer, im: &Buffer) -> Result<Buffer> {
    let name = "complex";
    Ok(match (re, im) {
        (Buffer::F32(a), Buffer::F32(b)) => {
            Buffer::C64(zip_map(a, b, C32::new).ok_or_else(|| len_err(name))?.into())
        }
        (Buffer::F64(a), Buffer::F64(b)) => {
            Buffer::C128(zip_map(a, b, C64::new).ok_or_else(|| len_err(name))?.into())
        }
        _ => return Err(bad_dtype(name, &dtypes_of(&[re, im]))),
    })
}

/// `x ** y` as XLA computes it on complex numbers: 1 for `y = 0`, 0 for a
/// zero base with a positive real exponent, `exp(y log x)` elsewhere.
fn pow<T: Part>(x: Complex<T>, y: Complex<T>) -> Complex<T> {
    let zero = Complex::new(T::zero(), T::zero());
    if y == zero {
        return Complex::new(T::one(), T::zero());
    }
    if x == zero {
        return if y.re > T::zero() && y.im == T::zero() {
            zero
        } else {
            Complex::new(T::nan(), T::nan())
        };
    }
    (y * x.ln()).exp()
}

/// `x / y` as XLA divides complex numbers (which JAX gives): Smith's
/// algorithm, with the infinite and zero cases of C99's Annex G: an
/// infinite numerator over a finite denominator keeps its infinite parts
/// (`(inf - inf i) / 3 = inf - inf i`), a finite one over an infinite
/// denominator is zero, and a zero denominator scales the numerator's
/// parts by +inf (XLA's signs for negative zeros there are not followed).
fn div<T: Part>(x: Complex<T>, y: Complex<T>) -> Complex<T> {
    let (a, b, c, d) = (x.re, x.im, y.re, y.im);
    let (zero, one, inf) = (T::zero(), T::one(), T::infinity());
    let unit = |v: T| {
        if v.is_infinite() {
            one.copysign(v)
        } else {
            zero.copysign(v)
        }
    };
    if c == zero && d == zero {
        return Complex::new(inf * a, inf * b);
    }
    if (a.is_infinite() || b.is_infinite()) && c.is_finite() && d.is_finite() {
        let (p, q) = (unit(a), unit(b));
        return Complex::new(inf * (p * c + q * d), inf * (q * c - p * d));
    }
    if (c.is_infinite() || d.is_infinite()) && a.is_finite() && b.is_finite() {
        let (p, q) = (unit(c), unit(d));
        return Complex::new(zero * (a * p + b * q), zero * (b * p - a * q));
    }
    if c.abs() >= d.abs() {
        let r = d / c;
        let den = c + d * r;
        Complex::new((a + b * r) / den, (b - a * r) / den)
    } else {
        let r = c / d;
        let den = d + c * r;
        Complex::new((a * r + b) / den, (b * r - a) / den)
    }
}

/// JAX's `max` of complex numbers: `x` where it is lexicographically
/// greater (real parts, then imaginary parts on equal real parts), else
/// `y`. Every comparison with a NaN part is false, so a NaN picks `y`:
/// `max(nan, 1) = 1` but `max(1, nan) = nan`, as JAX computes it.
pub(crate) fn lex_max<T: Float>(x: Complex<T>, y: Complex<T>) -> Complex<T> {
    let pick_x = if x.re == y.re {
        x.im > y.im
    } else {
        x.re > y.re
    };
    if pick_x {
        x
    } else {
        y
    }
}

/// JAX's `min` of complex numbers ([`lex_max`] with the order reversed).
pub(crate) fn lex_min<T: Float>(x: Complex<T>, y: Complex<T>) -> Complex<T> {
    let pick_x = if x.re == y.re {
        x.im < y.im
    } else {
        x.re < y.re
    };
    if pick_x {
        x
    } else {
        y
    }
}

fn binary_typed<T: Part>(
    op: BinaryOp, a: &[Complex<T>], b: &[Complex<T>],
) -> Option<Option<Vec<Complex<T>>>> {
    Some(match op {
        BinaryOp::Add => zip_map(a, b, |p, q| p + q),
        BinaryOp::Sub => zip_map(a, b, |p, q| p - q),
        BinaryOp::Mul => zip_map(a, b, |p, q| p * q),
        BinaryOp::Div => zip_map(a, b, div),
        BinaryOp::Pow => zip_map(a, b, pow),
        BinaryOp::Max => zip_map(a, b, lex_max),
        BinaryOp::Min => zip_map(a, b, lex_min),
        _ => return None,
    })
}

/// Complex binary arithmetic (`add`, `sub`, `mul`, `div`, `pow`) and the
/// lexicographic `max`/`min`.
pub fn binary(op: BinaryOp, x: &Buffer, y: &Buffer) -> Result<Buffer> {
    let name = op.name();
    let bad = || bad_dtype(name, &dtypes_of(&[x, y]));
    Ok(match (x, y) {
        (Buffer::C64(a), Buffer::C64(b)) => Buffer::C64(
            binary_typed(op, a, b)
                .ok_or_else(bad)?
                .ok_or_else(|| len_err(name))?
                .into(),
        ),
        (Buffer::C128(a), Buffer::C128(b)) => Buffer::C128(
            binary_typed(op, a, b)
                .ok_or_else(bad)?
                .ok_or_else(|| len_err(name))?
                .into(),
        ),
        _ => return Err(bad()),
    })
}

/// XLA's `clamp` of complex numbers on the CPU, which JAX gives: by the
/// real parts only, `lo` where `lo.re >= x.re`, then `hi` where that
/// value's real part is not `<= hi.re` (a NaN real part in `x` gives `hi`).
/// Rank-0 bounds apply to every element.
fn clamp_typed<T: Float>(
    lo: &[Complex<T>], x: &[Complex<T>], hi: &[Complex<T>],
) -> Option<Vec<Complex<T>>> {
    let low = zip_map(x, lo, |v, l| if l.re >= v.re { l } else { v })?;
    if low.len() != x.len() {
        return None;
    }
    zip_map(&low, hi, |v, h| if v.re <= h.re { v } else { h })
}

/// `clamp(lo, x, hi)` on complex operands of one dtype and length.
pub fn clamp(lo: &Buffer, x: &Buffer, hi: &Buffer) -> Result<Buffer> {
    let name = "clamp";
    Ok(match (lo, x, hi) {
        (Buffer::C64(l), Buffer::C64(v), Buffer::C64(h)) => {
            Buffer::C64(clamp_typed(l, v, h).ok_or_else(|| len_err(name))?.into())
        }
        (Buffer::C128(l), Buffer::C128(v), Buffer::C128(h)) => {
            Buffer::C128(clamp_typed(l, v, h).ok_or_else(|| len_err(name))?.into())
        }
        _ => return Err(bad_dtype(name, &dtypes_of(&[lo, x, hi]))),
    })
}

/// `eq` / `ne` on complex operands (there is no complex order).
pub fn compare(op: CmpOp, x: &Buffer, y: &Buffer) -> Result<Buffer> {
    let name = op.name();
    let out = match (op, x, y) {
        (CmpOp::Eq, Buffer::C64(a), Buffer::C64(b)) => zip_map(a, b, |p, q| p == q),
        (CmpOp::Ne, Buffer::C64(a), Buffer::C64(b)) => zip_map(a, b, |p, q| p != q),
        (CmpOp::Eq, Buffer::C128(a), Buffer::C128(b)) => zip_map(a, b, |p, q| p == q),
        (CmpOp::Ne, Buffer::C128(a), Buffer::C128(b)) => zip_map(a, b, |p, q| p != q),
        _ => return Err(bad_dtype(name, &dtypes_of(&[x, y]))),
    };
    Ok(Buffer::Bool(out.ok_or_else(|| len_err(name))?.into()))
}

/// `x^|y|` by repeated squaring, then the reciprocal for negative `y`.
fn powi<T: Part>(x: Complex<T>, y: i32) -> Complex<T> {
    let mut e = y.unsigned_abs();
    let mut base = x;
    let mut acc: Option<Complex<T>> = None;
    while e > 0 {
        if e & 1 == 1 {
            acc = Some(acc.map_or(base, |a| a * base));
        }
        e >>= 1;
        if e > 0 {
            base = base * base;
        }
    }
    let p = acc.unwrap_or(Complex::new(T::one(), T::zero()));
    if y < 0 {
        Complex::new(T::one(), T::zero()) / p
    } else {
        p
    }
}

pub fn integer_pow(y: i32, x: &Buffer) -> Result<Buffer> {
    Ok(match x {
        Buffer::C64(v) => Buffer::C64(map(v, |z| powi(z, y)).into()),
        Buffer::C128(v) => Buffer::C128(map(v, |z| powi(z, y)).into()),
        _ => return Err(bad_dtype("integer_pow", &[x.dtype()])),
    })
}

/// `convert_element_type` from a complex buffer: to another complex type
/// (parts rounded), to a real type through the real part (as JAX), to bool
/// as "nonzero".
pub fn convert_from_complex(x: &Buffer, new: DType) -> Result<Buffer> {
    fn go<T: Part>(v: &[Complex<T>], new: DType) -> Result<Buffer> {
        match new {
            DType::C64 => Ok(Buffer::C64(
                map(v, |z| C32::new(z.re.cast(), z.im.cast())).into(),
            )),
            DType::C128 => Ok(Buffer::C128(
                map(v, |z| C64::new(z.re.cast(), z.im.cast())).into(),
            )),
            DType::Bool => Ok(Buffer::Bool(
                map(v, |z| z.re != T::zero() || z.im != T::zero()).into(),
            )),
            _ => for_each_dtype!(new, D => Ok(D::wrap(map(v, |z| z.re.cast::<D>()))),
                DType::C64 | DType::C128 | DType::Float0 | DType::Key => Err(Error::dtype(
                    "convert_element_type", &[new], "cannot convert a complex value to this dtype"))),
        }
    }
    match x {
        Buffer::C64(v) => go(v, new),
        Buffer::C128(v) => go(v, new),
        _ => Err(bad_dtype("convert_element_type", &[x.dtype(), new])),
    }
}

/// `convert_element_type` of real elements to a complex type (zero
/// imaginary part).
pub fn convert_to_complex<S: CastFrom>(v: &[S], new: DType) -> Result<Buffer> {
    match new {
        DType::C64 => Ok(Buffer::C64(
            map(v, |s| C32::new(s.cast::<f32>(), 0.0)).into(),
        )),
        DType::C128 => Ok(Buffer::C128(
            map(v, |s| C64::new(s.cast::<f64>(), 0.0)).into(),
        )),
        _ => Err(bad_dtype("convert_element_type", &[new])),
    }
}
