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
use num_traits::Float;

fn len_err(prim: &'static str) -> Error {
    Error::shape(prim, &[], "operand lengths disagree inside the kernel")
}

/// The float element types complex parts come in.
pub(super) trait Part: Float + CastTo + CastFrom + BufElem + Default {}
impl Part for f32 {}
impl Part for f64 {}

/// `exp(z) - 1` without cancellation for small `z`:
/// `expm1(x) cos(y) - 2 sin²(y/2)` for the real part.
fn expm1<T: Part>(z: Complex<T>) -> Complex<T> {
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

/// One complex element function per unary op; `None` for ops JAX does not
/// define on complex operands.
fn unary_fn<T: Part>(op: UnaryOp) -> Option<fn(Complex<T>) -> Complex<T>> {
    Some(match op {
        UnaryOp::Neg => |z: Complex<T>| -z,
        UnaryOp::Exp => Complex::exp,
        UnaryOp::Log => Complex::ln,
        UnaryOp::Sin => Complex::sin,
        UnaryOp::Cos => Complex::cos,
        UnaryOp::Tan => Complex::tan,
        UnaryOp::Tanh => Complex::tanh,
        UnaryOp::Sinh => Complex::sinh,
        UnaryOp::Cosh => Complex::cosh,
        UnaryOp::Asin => Complex::asin,
        UnaryOp::Acos => Complex::acos,
        UnaryOp::Atan => Complex::atan,
        UnaryOp::Asinh => Complex::asinh,
        UnaryOp::Acosh => Complex::acosh,
        UnaryOp::Atanh => Complex::atanh,
        UnaryOp::Sqrt => Complex::sqrt,
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

fn binary_typed<T: Part>(
    op: BinaryOp, a: &[Complex<T>], b: &[Complex<T>],
) -> Option<Option<Vec<Complex<T>>>> {
    Some(match op {
        BinaryOp::Add => zip_map(a, b, |p, q| p + q),
        BinaryOp::Sub => zip_map(a, b, |p, q| p - q),
        BinaryOp::Mul => zip_map(a, b, |p, q| p * q),
        BinaryOp::Div => zip_map(a, b, |p, q| p / q),
        BinaryOp::Pow => zip_map(a, b, pow),
        _ => return None,
    })
}

/// Complex binary arithmetic (`add`, `sub`, `mul`, `div`, `pow`).
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
