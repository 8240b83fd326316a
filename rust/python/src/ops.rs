//! Array operators. With no trace active and a plain operand (another
//! `ArrayImpl` or an exact Python bool/int/float) they run entirely in Rust:
//! JAX's promotion and broadcasting (`microjax::promote`, the one
//! implementation), conversion, and one kernel call.
//! Everything else goes to the Python `binary`/`unary` hooks.

use crate::array::ArrayImpl;
use crate::globals::{fast_eager, hook, x64, Hook};
use crate::to_pyerr;
use microjax::exec::ExecCtx;
use microjax::prims::kernel;
use microjax::prims::{BroadcastInDim, ConvertElementType, DotDims, DotGeneral, IntegerPow};
use microjax::promote::{broadcast_shapes, defaults, promote_pair};
use microjax::{BinaryOp, CmpOp, DType, HostArray, Primitive, Scalar, UnaryOp};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyComplex, PyFloat, PyInt};
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BinOp {
    Add,
    Sub,
    Mul,
    TrueDiv,
    Pow,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    MatMul,
    FloorDiv,
    Mod,
    And,
    Or,
    Xor,
    LShift,
    RShift,
    /// `jnp.maximum` (no operator: [`eager_binary`]).
    Max,
    /// `jnp.minimum` (no operator: [`eager_binary`]).
    Min,
}

/// What the fast path runs for an operator.
#[derive(Clone, Copy)]
enum Kind {
    Arith(BinaryOp),
    Cmp(CmpOp),
    HookOnly,
}

impl BinOp {
    pub(crate) fn name(self) -> &'static str {
        match self {
            BinOp::Add => "add",
            BinOp::Sub => "sub",
            BinOp::Mul => "mul",
            BinOp::TrueDiv => "truediv",
            BinOp::Pow => "pow",
            BinOp::Lt => "lt",
            BinOp::Le => "le",
            BinOp::Gt => "gt",
            BinOp::Ge => "ge",
            BinOp::Eq => "eq",
            BinOp::Ne => "ne",
            BinOp::MatMul => "matmul",
            BinOp::FloorDiv => "floordiv",
            BinOp::Mod => "mod",
            BinOp::And => "and",
            BinOp::Or => "or",
            BinOp::Xor => "xor",
            BinOp::LShift => "lshift",
            BinOp::RShift => "rshift",
            BinOp::Max => "max",
            BinOp::Min => "min",
        }
    }

    fn kind(self) -> Kind {
        match self {
            BinOp::Add => Kind::Arith(BinaryOp::Add),
            BinOp::Sub => Kind::Arith(BinaryOp::Sub),
            BinOp::Mul => Kind::Arith(BinaryOp::Mul),
            BinOp::TrueDiv => Kind::Arith(BinaryOp::Div),
            BinOp::Pow => Kind::Arith(BinaryOp::Pow),
            BinOp::Lt => Kind::Cmp(CmpOp::Lt),
            BinOp::Le => Kind::Cmp(CmpOp::Le),
            BinOp::Gt => Kind::Cmp(CmpOp::Gt),
            BinOp::Ge => Kind::Cmp(CmpOp::Ge),
            BinOp::Eq => Kind::Cmp(CmpOp::Eq),
            BinOp::Ne => Kind::Cmp(CmpOp::Ne),
            BinOp::Max => Kind::Arith(BinaryOp::Max),
            BinOp::Min => Kind::Arith(BinaryOp::Min),
            BinOp::MatMul
            | BinOp::FloorDiv
            | BinOp::Mod
            | BinOp::And
            | BinOp::Or
            | BinOp::Xor
            | BinOp::LShift
            | BinOp::RShift => Kind::HookOnly,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum UnOp {
    Neg,
    Pos,
    Abs,
    Invert,
}

impl UnOp {
    fn name(self) -> &'static str {
        match self {
            UnOp::Neg => "neg",
            UnOp::Pos => "pos",
            UnOp::Abs => "abs",
            UnOp::Invert => "invert",
        }
    }
}

/// Outcome of a fast-path attempt.
enum Fast {
    Done(ArrayImpl),
    /// Not applicable: the Python hook decides (and raises the proper error).
    Skip,
    /// The core rejected the operation; raised if no hook is set.
    Err(microjax::Error),
}

impl From<microjax::Error> for Fast {
    fn from(e: microjax::Error) -> Fast {
        Fast::Err(e)
    }
}

/// One operand of a fast binary op.
enum Operand<'a> {
    Arr(&'a ArrayImpl),
    Py(Scalar, DType, bool),
}

impl Operand<'_> {
    #[inline]
    fn key(&self) -> (DType, bool) {
        match self {
            Operand::Arr(a) => (a.arr.dtype(), a.weak),
            Operand::Py(_, d, w) => (*d, *w),
        }
    }
}

/// An operand materialized at the target dtype: borrowed when no conversion
/// was needed.
enum Mat<'a> {
    Borrowed(&'a HostArray),
    Owned(HostArray),
}

impl Mat<'_> {
    #[inline]
    fn get(&self) -> &HostArray {
        match self {
            Mat::Borrowed(a) => a,
            Mat::Owned(a) => a,
        }
    }
}

/// Classifies the other operand: an `ArrayImpl`, or an exact Python
/// bool/int/float (an int must fit the default int dtype). None → slow path.
#[inline]
fn classify<'a>(other: &'a Bound<'_, PyAny>) -> Option<Operand<'a>> {
    if let Ok(a) = other.cast::<ArrayImpl>() {
        // A deleted array takes the slow path, which raises.
        return (!a.get().deleted()).then(|| Operand::Arr(a.get()));
    }
    if let Ok(f) = other.cast_exact::<PyFloat>() {
        let d = defaults(x64()).1;
        return Some(Operand::Py(Scalar::Float(f.value()), d, true));
    }
    if other.is_exact_instance_of::<PyInt>() {
        let v = other.extract::<i64>().ok()?;
        let d = defaults(x64()).0;
        return int_fits(v, d).then_some(Operand::Py(Scalar::Int(v), d, true));
    }
    if other.is_exact_instance_of::<PyBool>() {
        let b = other.extract::<bool>().ok()?;
        return Some(Operand::Py(Scalar::Bool(b), DType::Bool, false));
    }
    if let Ok(z) = other.cast_exact::<PyComplex>() {
        let d = defaults(x64()).1.complex_dtype()?;
        return Some(Operand::Py(Scalar::Complex(z.real(), z.imag()), d, true));
    }
    None
}

/// Whether integer `v` is representable in `d` (floats always take it).
fn int_fits(v: i64, d: DType) -> bool {
    match d {
        DType::I8 => i8::try_from(v).is_ok(),
        DType::I16 => i16::try_from(v).is_ok(),
        DType::I32 => i32::try_from(v).is_ok(),
        DType::I64 => true,
        DType::U8 => u8::try_from(v).is_ok(),
        DType::U16 => u16::try_from(v).is_ok(),
        DType::U32 => u32::try_from(v).is_ok(),
        DType::U64 => v >= 0,
        DType::F16 | DType::BF16 | DType::F32 | DType::F64 | DType::C64 | DType::C128 => true,
        DType::Bool | DType::Float0 | DType::Key => false,
    }
}

fn convert(a: &HostArray, d: DType) -> microjax::Result<HostArray> {
    let prim = Primitive::ConvertElementType(ConvertElementType {
        new_dtype: d,
        weak_type: false,
    });
    kernel::eval_one(&ExecCtx::current_default(), &prim, &[a])
}

/// Materializes an operand at dtype `d`. None → slow path.
fn materialize<'a>(op: &Operand<'a>, d: DType) -> Result<Option<Mat<'a>>, microjax::Error> {
    match op {
        Operand::Arr(a) => {
            if a.arr.dtype() == d {
                Ok(Some(Mat::Borrowed(&a.arr)))
            } else {
                convert(&a.arr, d).map(|h| Some(Mat::Owned(h)))
            }
        }
        Operand::Py(s, _, _) => {
            if let Scalar::Int(v) = s {
                if !int_fits(*v, d) {
                    return Ok(None);
                }
            }
            HostArray::scalar(*s, d).map(|h| Some(Mat::Owned(h)))
        }
    }
}

fn broadcast_to(m: Mat<'_>, shape: &[usize]) -> microjax::Result<HostArray> {
    let a = m.get();
    let offset = shape.len().saturating_sub(a.ndim());
    let prim = Primitive::BroadcastInDim(BroadcastInDim {
        shape: shape.to_vec(),
        broadcast_dimensions: (offset..shape.len()).collect(),
    });
    kernel::eval_one(&ExecCtx::current_default(), &prim, &[a])
}

/// `x @ y` of two arrays of one dtype (f32, f64, c64 or c128), neither
/// weakly typed, each of rank 1 or 2: the one `dot_general` `jnp.matmul`
/// binds there (each operand's last axis, or a right vector's only axis,
/// contracted against the right operand's first; no batch axes). Anything
/// else, a size mismatch included, goes to the hook (which raises JAX's errors).
fn fast_matmul(slf: &ArrayImpl, other: &Bound<'_, PyAny>, reflected: bool) -> Fast {
    let Ok(other) = other.cast::<ArrayImpl>() else {
        return Fast::Skip;
    };
    let other = other.get();
    let (x, y) = if reflected {
        (other, slf)
    } else {
        (slf, other)
    };
    let d = x.arr.dtype();
    let plain = matches!(d, DType::F32 | DType::F64 | DType::C64 | DType::C128);
    if !plain || d != y.arr.dtype() || x.weak || y.weak || x.deleted() || y.deleted() {
        return Fast::Skip;
    }
    let (sx, sy) = (x.arr.shape(), y.arr.shape());
    let contract = match (sx, sy) {
        ([k], [k2, ..]) | ([_, k], [k2, ..]) if sy.len() <= 2 && k == k2 => {
            sx.len().saturating_sub(1)
        }
        _ => return Fast::Skip,
    };
    let prim = Primitive::DotGeneral(DotGeneral {
        dims: DotDims {
            lhs_contract: vec![contract],
            rhs_contract: vec![0],
            lhs_batch: Vec::new(),
            rhs_batch: Vec::new(),
        },
        preferred_element_type: None,
    });
    match kernel::eval_one(&ExecCtx::current_default(), &prim, &[&x.arr, &y.arr]) {
        Ok(h) => Fast::Done(ArrayImpl::new(Arc::new(h), false)),
        Err(e) => Fast::Err(e),
    }
}

fn fast_binary(slf: &ArrayImpl, other: &Bound<'_, PyAny>, op: BinOp, reflected: bool) -> Fast {
    if op == BinOp::MatMul {
        return fast_matmul(slf, other, reflected);
    }
    let kind = op.kind();
    if matches!(kind, Kind::HookOnly) || slf.deleted() {
        return Fast::Skip;
    }
    let Some(other_op) = classify(other) else {
        return Fast::Skip;
    };
    // `x ** k` for a Python int k: integer_pow on x's dtype.
    if op == BinOp::Pow && !reflected {
        if let Operand::Py(Scalar::Int(k), _, _) = other_op {
            return integer_pow(slf, k);
        }
    }
    let me = Operand::Arr(slf);
    let (x, y) = if reflected {
        (other_op, me)
    } else {
        (me, other_op)
    };
    let x64_on = x64();
    let Ok((mut dt, weak)) = promote_pair(x.key(), y.key(), x64_on) else {
        return Fast::Skip;
    };
    if op == BinOp::TrueDiv && !dt.is_inexact() {
        dt = defaults(x64_on).1;
    }
    if op == BinOp::Pow && !dt.is_float() {
        return Fast::Skip;
    }
    // Ordering comparisons of complex values are jnp's (lexicographic).
    if dt.is_complex() && matches!(kind, Kind::Cmp(c) if !matches!(c, CmpOp::Eq | CmpOp::Ne)) {
        return Fast::Skip;
    }
    let mx = match materialize(&x, dt) {
        Ok(Some(m)) => m,
        Ok(None) => return Fast::Skip,
        Err(e) => return Fast::Err(e),
    };
    let my = match materialize(&y, dt) {
        Ok(Some(m)) => m,
        Ok(None) => return Fast::Skip,
        Err(e) => return Fast::Err(e),
    };
    let (prim, out_weak) = match kind {
        Kind::Arith(b) => (Primitive::Binary(b), weak),
        Kind::Cmp(c) => (Primitive::Compare(c), false),
        Kind::HookOnly => return Fast::Skip,
    };
    let (sx, sy) = (mx.get().shape(), my.get().shape());
    let (mx, my) = if sx != sy && !sx.is_empty() && !sy.is_empty() {
        let out = match broadcast_shapes(Some(prim.name()), &[sx, sy]) {
            Ok(out) => out,
            Err(e) => return Fast::Err(e),
        };
        let bx = if sx == out.as_slice() {
            mx
        } else {
            match broadcast_to(mx, &out) {
                Ok(h) => Mat::Owned(h),
                Err(e) => return Fast::Err(e),
            }
        };
        let by = if sy == out.as_slice() {
            my
        } else {
            match broadcast_to(my, &out) {
                Ok(h) => Mat::Owned(h),
                Err(e) => return Fast::Err(e),
            }
        };
        (bx, by)
    } else {
        (mx, my)
    };
    let res = kernel::eval_one(&ExecCtx::current_default(), &prim, &[mx.get(), my.get()]);
    match res {
        Ok(h) => Fast::Done(ArrayImpl::new(Arc::new(h), out_weak)),
        Err(e) => Fast::Err(e),
    }
}

fn integer_pow(slf: &ArrayImpl, k: i64) -> Fast {
    let d = slf.arr.dtype();
    let ok_dtype = d.is_float() || (d.is_int() && k >= 0);
    let Ok(y) = i32::try_from(k) else {
        return Fast::Skip;
    };
    if !ok_dtype {
        return Fast::Skip;
    }
    let prim = Primitive::IntegerPow(IntegerPow { y });
    match kernel::eval_one(&ExecCtx::current_default(), &prim, &[&slf.arr]) {
        Ok(h) => Fast::Done(ArrayImpl::new(Arc::new(h), slf.weak)),
        Err(e) => Fast::Err(e),
    }
}

/// `_core.eager_binary(x, y, name, reflected)`: `jnp.maximum`/`jnp.minimum`
/// (`name` "max"/"min") of a concrete array `x` and another concrete
/// operand, as the operators' fast path computes them (JAX's promotion,
/// broadcasting, one kernel); `reflected`: `y` is the first operand. None
/// where that path does not apply (a trace, a debug check, an operand kind
/// or an error it leaves to the jnp function, which raises JAX's).
#[pyfunction]
#[pyo3(signature = (x, y, name, reflected = false))]
pub(crate) fn eager_binary(
    x: &Bound<'_, ArrayImpl>, y: &Bound<'_, PyAny>, name: &str, reflected: bool,
) -> PyResult<Option<Py<PyAny>>> {
    let op = match name {
        "max" => BinOp::Max,
        "min" => BinOp::Min,
        other => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "eager_binary: no fast path for {other:?}"
            )))
        }
    };
    if !fast_eager() {
        return Ok(None);
    }
    match fast_binary(x.get(), y, op, reflected) {
        Fast::Done(a) => Ok(Some(a.into_pyany(x.py())?)),
        Fast::Skip | Fast::Err(_) => Ok(None),
    }
}

/// `pow(self, other, modulo)` (reflected: `other ** self`): NotImplemented
/// with a modulo, else the `Pow` [`binary`] operator.
pub(crate) fn power(
    slf: &Bound<'_, ArrayImpl>, other: &Bound<'_, PyAny>, modulo: &Bound<'_, PyAny>,
    reflected: bool,
) -> PyResult<Py<PyAny>> {
    if !modulo.is_none() {
        return Ok(slf.py().NotImplemented());
    }
    binary(slf, other, BinOp::Pow, reflected)
}

/// A binary operator: the Rust fast path when it applies, else the Python
/// `binary` hook `(op_name, self, other, reflected)`.
pub(crate) fn binary(
    slf: &Bound<'_, ArrayImpl>, other: &Bound<'_, PyAny>, op: BinOp, reflected: bool,
) -> PyResult<Py<PyAny>> {
    let py = slf.py();
    let mut failure: Option<microjax::Error> = None;
    if fast_eager() {
        match fast_binary(slf.get(), other, op, reflected) {
            Fast::Done(a) => return a.into_pyany(py),
            Fast::Skip => {}
            Fast::Err(e) => failure = Some(e),
        }
    }
    match hook(py, Hook::Binary) {
        Some(f) => Ok(f.call1((op.name(), slf, other, reflected))?.unbind()),
        None => match failure {
            Some(e) => Err(to_pyerr(e)),
            None => Ok(py.NotImplemented()),
        },
    }
}

fn fast_unary(slf: &ArrayImpl, op: UnOp) -> Fast {
    let d = slf.arr.dtype();
    if !(d.is_numeric() || d.is_complex()) || slf.deleted() {
        return Fast::Skip;
    }
    let prim = match op {
        UnOp::Pos => return Fast::Done(ArrayImpl::new(slf.arr.clone(), slf.weak)),
        UnOp::Neg => Primitive::Unary(UnaryOp::Neg),
        UnOp::Abs => Primitive::Unary(UnaryOp::Abs),
        UnOp::Invert => return Fast::Skip,
    };
    match kernel::eval_one(&ExecCtx::current_default(), &prim, &[&slf.arr]) {
        Ok(h) => Fast::Done(ArrayImpl::new(Arc::new(h), slf.weak)),
        Err(e) => Fast::Err(e),
    }
}

/// A unary operator: fast path for neg/pos/abs with no trace active, else
/// the Python `unary` hook `(op_name, self)`.
pub(crate) fn unary(slf: &Bound<'_, ArrayImpl>, op: UnOp) -> PyResult<Py<PyAny>> {
    let py = slf.py();
    let mut failure: Option<microjax::Error> = None;
    if fast_eager() {
        match fast_unary(slf.get(), op) {
            Fast::Done(a) => return a.into_pyany(py),
            Fast::Skip => {}
            Fast::Err(e) => failure = Some(e),
        }
    }
    match hook(py, Hook::Unary) {
        Some(f) => Ok(f.call1((op.name(), slf))?.unbind()),
        None => match failure {
            Some(e) => Err(to_pyerr(e)),
            None => Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "bad operand type for unary {}: 'ArrayImpl' (no unary hook set)",
                op.name()
            ))),
        },
    }
}
