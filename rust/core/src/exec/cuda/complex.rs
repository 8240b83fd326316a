//! complex64 / complex128 in the generated elementwise kernels.
//!
//! A complex element is the struct `mj_cx<T> { T re, im; }` (`mj_c64` =
//! `mj_cx<float>`, `mj_c128` = `mj_cx<double>`): the layout of CUDA's
//! `cuFloatComplex` / `cuDoubleComplex` (two adjacent floats, real part
//! first) and of the host's complex buffers, defined in plain C++ in
//! [`COMPLEX_HELPERS`] so that the text needs no CUDA header (NVRTC
//! compiles it without include paths, and g++ compiles it in the
//! emulation tests). The arithmetic operators and the functions follow the
//! CPU kernels' formulas (products and quotients as `num_complex`: no
//! scaling), so results agree within rounding (the device's math library
//! differs from the host's).
//!
//! What lowers on complex operands: `neg`, `square`, `exp`, `log`, `sqrt`,
//! `rsqrt`, `sin`, `cos`, `tan`, `sinh`, `cosh`, `tanh`, `log1p`, `expm1`,
//! `abs` (real result), `sign`, `add`, `sub`, `mul`, `div`, `eq`, `ne`,
//! `integer_pow`, `select_n`, `real`, `imag`, `conj` (of a complex operand),
//! `complex`, the broadcasts and reshapes a fused kernel reads through, and
//! `convert_element_type` between complex and float/integer/bool types
//! (complex → integer stays on the host, as float → integer does). The rest
//! (inverse trigonometric functions, `pow`) runs on the host.
//!
//! The data-movement, indexing, reduction and scan kernels move complex
//! elements as these structs too (`sum`/`prod` reductions and cumulative
//! sums/products combine them with the operators here; `max`/`min` and the
//! arg reductions order complex numbers lexicographically, as JAX does, and
//! run on the host).

use super::codegen::{c_literal, Lowering};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ir::Scalar;
use crate::prims::complex::{Conj, Imag, MakeComplex, Real};
use crate::prims::{
    BinaryOp, BroadcastInDim, CmpOp, ConvertElementType, IntegerPow, Primitive, Reshape, SelectN,
    Squeeze, UnaryOp,
};

/// The C type of a complex dtype's elements (`None` for other dtypes).
pub fn c_type(d: DType) -> Option<&'static str> {
    match d {
        DType::C64 => Some("mj_c64"),
        DType::C128 => Some("mj_c128"),
        _ => None,
    }
}

/// The real part type of a complex dtype.
pub(super) fn part(d: DType) -> DType {
    if d == DType::C128 {
        DType::F64
    } else {
        DType::F32
    }
}

pub(super) fn part_c(d: DType) -> &'static str {
    if d == DType::C128 {
        "double"
    } else {
        "float"
    }
}

/// The complex struct, its operators and functions, put in front of a
/// kernel that uses them.
pub const COMPLEX_HELPERS: &str = r#"template <typename T> struct mj_cx { T re, im; };
typedef mj_cx<float> mj_c64;
typedef mj_cx<double> mj_c128;
#define MJ_R1(N) __device__ __forceinline__ float mj_r_##N(float x) { return N##f(x); } \
  __device__ __forceinline__ double mj_r_##N(double x) { return N(x); }
#define MJ_R2(N) __device__ __forceinline__ float mj_r_##N(float x, float y) { return N##f(x, y); } \
  __device__ __forceinline__ double mj_r_##N(double x, double y) { return N(x, y); }
MJ_R1(exp) MJ_R1(log) MJ_R1(sqrt) MJ_R1(sin) MJ_R1(cos) MJ_R1(sinh) MJ_R1(cosh) MJ_R1(log1p)
MJ_R1(expm1) MJ_R1(fabs) MJ_R2(hypot) MJ_R2(atan2) MJ_R2(copysign)
template <typename T> __device__ __forceinline__ mj_cx<T> mj_cmake(T re, T im) {
  mj_cx<T> z; z.re = re; z.im = im; return z;
}
template <typename T> __device__ __forceinline__ mj_cx<T> operator+(mj_cx<T> a, mj_cx<T> b) {
  return mj_cmake<T>(a.re + b.re, a.im + b.im);
}
template <typename T> __device__ __forceinline__ mj_cx<T> operator-(mj_cx<T> a, mj_cx<T> b) {
  return mj_cmake<T>(a.re - b.re, a.im - b.im);
}
template <typename T> __device__ __forceinline__ mj_cx<T> operator-(mj_cx<T> a) {
  return mj_cmake<T>(-a.re, -a.im);
}
template <typename T> __device__ __forceinline__ mj_cx<T> operator*(mj_cx<T> a, mj_cx<T> b) {
  return mj_cmake<T>(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
template <typename T> __device__ __forceinline__ mj_cx<T> operator/(mj_cx<T> a, mj_cx<T> b) {
  T d = b.re * b.re + b.im * b.im;
  return mj_cmake<T>((a.re * b.re + a.im * b.im) / d, (a.im * b.re - a.re * b.im) / d);
}
template <typename T> __device__ __forceinline__ bool operator==(mj_cx<T> a, mj_cx<T> b) {
  return a.re == b.re && a.im == b.im;
}
template <typename T> __device__ __forceinline__ bool operator!=(mj_cx<T> a, mj_cx<T> b) {
  return !(a == b);
}
template <typename T> __device__ __forceinline__ T mj_abs(mj_cx<T> z) { return mj_r_hypot(z.re, z.im); }
template <typename T> __device__ __forceinline__ mj_cx<T> mj_exp(mj_cx<T> z) {
  T e = mj_r_exp(z.re);
  if (z.im == T(0)) return mj_cmake<T>(e, z.im);
  return mj_cmake<T>(e * mj_r_cos(z.im), e * mj_r_sin(z.im));
}
template <typename T> __device__ __forceinline__ mj_cx<T> mj_log(mj_cx<T> z) {
  return mj_cmake<T>(mj_r_log(mj_abs(z)), mj_r_atan2(z.im, z.re));
}
template <typename T> __device__ __forceinline__ mj_cx<T> mj_sqrt(mj_cx<T> z) {
  if (z.re == T(0) && z.im == T(0)) return mj_cmake<T>(T(0), z.im);
  T t = mj_r_sqrt((mj_r_fabs(z.re) + mj_abs(z)) / T(2));
  if (z.re >= T(0)) return mj_cmake<T>(t, z.im / (T(2) * t));
  return mj_cmake<T>(mj_r_fabs(z.im) / (T(2) * t), mj_r_copysign(t, z.im));
}
template <typename T> __device__ __forceinline__ mj_cx<T> mj_rsqrt(mj_cx<T> z) {
  return mj_cmake<T>(T(1), T(0)) / mj_sqrt(z);
}
template <typename T> __device__ __forceinline__ mj_cx<T> mj_sin(mj_cx<T> z) {
  return mj_cmake<T>(mj_r_sin(z.re) * mj_r_cosh(z.im), mj_r_cos(z.re) * mj_r_sinh(z.im));
}
template <typename T> __device__ __forceinline__ mj_cx<T> mj_cos(mj_cx<T> z) {
  return mj_cmake<T>(mj_r_cos(z.re) * mj_r_cosh(z.im), -(mj_r_sin(z.re) * mj_r_sinh(z.im)));
}
template <typename T> __device__ __forceinline__ mj_cx<T> mj_sinh(mj_cx<T> z) {
  return mj_cmake<T>(mj_r_sinh(z.re) * mj_r_cos(z.im), mj_r_cosh(z.re) * mj_r_sin(z.im));
}
template <typename T> __device__ __forceinline__ mj_cx<T> mj_cosh(mj_cx<T> z) {
  return mj_cmake<T>(mj_r_cosh(z.re) * mj_r_cos(z.im), mj_r_sinh(z.re) * mj_r_sin(z.im));
}
template <typename T> __device__ __forceinline__ mj_cx<T> mj_tanh(mj_cx<T> z) {
  if (mj_r_fabs(z.re) > T(20)) {
    T e = mj_r_exp(T(-2) * mj_r_fabs(z.re));
    return mj_cmake<T>(mj_r_copysign(T(1), z.re), T(4) * mj_r_sin(z.im) * mj_r_cos(z.im) * e);
  }
  T d = mj_r_cosh(T(2) * z.re) + mj_r_cos(T(2) * z.im);
  return mj_cmake<T>(mj_r_sinh(T(2) * z.re) / d, mj_r_sin(T(2) * z.im) / d);
}
template <typename T> __device__ __forceinline__ mj_cx<T> mj_tan(mj_cx<T> z) {
  mj_cx<T> t = mj_tanh(mj_cmake<T>(-z.im, z.re));
  return mj_cmake<T>(t.im, -t.re);
}
template <typename T> __device__ __forceinline__ mj_cx<T> mj_log1p(mj_cx<T> z) {
  T re = T(0.5) * mj_r_log1p(z.re * (T(2) + z.re) + z.im * z.im);
  return mj_cmake<T>(re, mj_r_atan2(z.im, T(1) + z.re));
}
template <typename T> __device__ __forceinline__ mj_cx<T> mj_expm1(mj_cx<T> z) {
  T s = mj_r_sin(z.im / T(2));
  T re = mj_r_expm1(z.re) * mj_r_cos(z.im) - T(2) * s * s;
  return mj_cmake<T>(re, mj_r_exp(z.re) * mj_r_sin(z.im));
}
template <typename T> __device__ __forceinline__ mj_cx<T> mj_sign(mj_cx<T> z) {
  if (z.re == T(0) && z.im == T(0)) return z;
  T h = mj_abs(z);
  return mj_cmake<T>(z.re / h, z.im / h);
}
"#;

fn unsupported(what: String) -> Error {
    Error::Unsupported(format!("cuda codegen: {what}"))
}

/// Whether `prim` with a complex operand or result (operand dtype `d`,
/// result `out`) lowers into a kernel.
pub fn lowering(prim: &Primitive, d: DType, out: DType) -> Lowering {
    const HOST: Lowering =
        Lowering::HostFallback("complex ops without a device formula (inverse trig, pow, ...)");
    let known = |x: DType| {
        x.is_complex() || matches!(x, DType::F32 | DType::F64 | DType::Bool) || x.is_int()
    };
    if !known(d) || !known(out) {
        return HOST;
    }
    match prim {
        Primitive::IntegerPow(IntegerPow { y }) if y.unsigned_abs() > 64 => HOST,
        Primitive::Unary(
            UnaryOp::Neg
            | UnaryOp::Square
            | UnaryOp::Exp
            | UnaryOp::Log
            | UnaryOp::Sqrt
            | UnaryOp::Rsqrt
            | UnaryOp::Sin
            | UnaryOp::Cos
            | UnaryOp::Tan
            | UnaryOp::Sinh
            | UnaryOp::Cosh
            | UnaryOp::Tanh
            | UnaryOp::Log1p
            | UnaryOp::Expm1
            | UnaryOp::Abs
            | UnaryOp::Sign,
        ) if d.is_complex() => Lowering::Kernel,
        Primitive::Binary(BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div)
        | Primitive::Compare(CmpOp::Eq | CmpOp::Ne)
        | Primitive::IntegerPow(IntegerPow { .. })
        | Primitive::SelectN(SelectN)
            if d.is_complex() =>
        {
            Lowering::Kernel
        }
        Primitive::Real(Real) | Primitive::Imag(Imag) | Primitive::Conj(Conj { .. })
            if d.is_complex() =>
        {
            Lowering::Kernel
        }
        Primitive::MakeComplex(MakeComplex) if d.is_float() && out.is_complex() => Lowering::Kernel,
        Primitive::BroadcastInDim(BroadcastInDim { .. })
        | Primitive::Reshape(Reshape { .. })
        | Primitive::Squeeze(Squeeze { .. }) => Lowering::Kernel,
        Primitive::ConvertElementType(ConvertElementType { .. }) if out.is_int() => {
            Lowering::HostFallback("complex to integer converts")
        }
        Primitive::ConvertElementType(ConvertElementType { .. }) => Lowering::Kernel,
        _ => HOST,
    }
}

/// A C literal of `v` in the complex dtype `d`.
pub fn literal(v: Scalar, d: DType) -> Result<String> {
    let (re, im) = match v {
        Scalar::Complex(re, im) => (re, im),
        Scalar::Float(f) => (f, 0.0),
        Scalar::Int(i) => (i as f64, 0.0),
        Scalar::UInt(u) => (u as f64, 0.0),
        Scalar::Bool(b) => (f64::from(u8::from(b)), 0.0),
    };
    let p = part(d);
    Ok(format!(
        "mj_cmake<{}>({}, {})",
        part_c(d),
        c_literal(Scalar::Float(re), p)?,
        c_literal(Scalar::Float(im), p)?
    ))
}

/// The expression of an elementwise member with a complex operand or
/// result (`None` when it has no device formula; [`lowering`] said so).
pub fn member_expr(
    prim: &Primitive, d: DType, out: DType, args: &[String],
) -> Result<Option<String>> {
    let e = match (prim, args) {
        (Primitive::Unary(op), [x]) => match op {
            UnaryOp::Neg => format!("(-{x})"),
            UnaryOp::Square => format!("({x} * {x})"),
            op => format!("mj_{}({x})", op.name()),
        },
        (Primitive::Binary(op), [x, y]) => {
            let sym = match op {
                BinaryOp::Add => "+",
                BinaryOp::Sub => "-",
                BinaryOp::Mul => "*",
                BinaryOp::Div => "/",
                _ => return Ok(None),
            };
            format!("({x} {sym} {y})")
        }
        (Primitive::Compare(CmpOp::Eq), [x, y]) => format!("({x} == {y})"),
        (Primitive::Compare(CmpOp::Ne), [x, y]) => format!("({x} != {y})"),
        (Primitive::IntegerPow(IntegerPow { y }), [x]) => integer_pow(x, *y, d),
        (Primitive::ConvertElementType(ConvertElementType { .. }), [x]) => convert(x, d, out)?,
        (Primitive::Real(Real), [x]) => format!("{x}.re"),
        (Primitive::Imag(Imag), [x]) => format!("{x}.im"),
        (Primitive::Conj(Conj { .. }), [x]) => format!("mj_cmake<{}>({x}.re, -{x}.im)", part_c(d)),
        (Primitive::MakeComplex(MakeComplex), [x, y]) => {
            let t = part_c(out);
            format!("mj_cmake<{t}>(({t}){x}, ({t}){y})")
        }
        _ => return Ok(None),
    };
    Ok(Some(e))
}

/// `convert_element_type` with a complex side: complex → complex converts
/// both parts, real → complex puts a zero imaginary part, complex → real
/// keeps the real part (JAX's rule), complex → bool is `z != 0`.
fn convert(x: &str, d: DType, out: DType) -> Result<String> {
    if out.is_complex() {
        let t = part_c(out);
        return Ok(if d.is_complex() {
            format!("mj_cmake<{t}>(({t}){x}.re, ({t}){x}.im)")
        } else {
            format!("mj_cmake<{t}>(({t}){x}, ({t})0)")
        });
    }
    if out == DType::Bool {
        return Ok(format!("({x}.re != 0 || {x}.im != 0)"));
    }
    let t = super::codegen::c_type(out)
        .ok_or_else(|| unsupported(format!("complex to {}", out.name())))?;
    Ok(format!("(({t}){x}.re)"))
}

/// `x ** y` by square-and-multiply unrolled at generation time.
fn integer_pow(x: &str, y: i32, d: DType) -> String {
    let t = part_c(d);
    let one = format!("mj_cmake<{t}>(({t})1, ({t})0)");
    let p = super::codegen::unrolled_power(x, y).unwrap_or_else(|| one.clone());
    if y < 0 {
        format!("({one} / {p})")
    } else {
        p
    }
}
