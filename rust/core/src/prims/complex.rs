//! The complex-part primitives: `real`, `imag` (complex operand, result of
//! the parts' float dtype), `conj` (float or complex operand, complex
//! result; param `input_dtype` as JAX) and `complex` (two float operands of
//! one dtype, float32 or float64, rank-0 operands broadcast). Kernels are in
//! `kernels/complex.rs`. All four are linear: the JVP applies the primitive
//! to the tangents, and the transposes are JAX's (`real`: `complex(ct, 0)`;
//! `imag`: `complex(0, -ct)`; `conj`: `conj(ct)`, or `real(ct)` for a
//! real operand; `complex`: `(real(ct), imag(-ct))`). vmap: the shared
//! elementwise batching rule.

use super::batch::elementwise_rule;
use super::family::{emit1, operands, unary_kernel};
use super::family::{BatchOut, Family, JvpOut, Operand, TransposeOut};
use super::jvp::jvp_linear;
use super::kernel::complex as kernels;
use super::shape::elementwise_shape;
use super::transpose::{single_ct, unbroadcast};
use super::{Primitive, UnaryOp};
use crate::array::HostArray;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::exec::ExecCtx;
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval};

/// `real(x)`: the real part of a complex array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Real;

/// `imag(x)`: the imaginary part of a complex array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Imag;

/// `complex(x, y)`: `x + i y` of two float arrays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MakeComplex;

crate::declare_params! {
    /// Complex conjugate; a real operand becomes complex with a zero
    /// imaginary part. `input_dtype` is the operand's dtype (the transpose
    /// needs it).
    pub struct Conj {
        input_dtype: DType,
    }
}

const REAL: &str = "real";
const IMAG: &str = "imag";
const CONJ: &str = "conj";
const COMPLEX: &str = "complex";

/// JAX's TypeError text for an operand dtype a primitive does not accept.
fn not_accepted(name: &'static str, d: DType, accepted: &str) -> Error {
    Error::dtype(
        name,
        &[d],
        format!("{name} does not accept dtype {d}. Accepted dtypes are subtypes of {accepted}."),
    )
}

/// The one complex operand of `real` / `imag`, and the result aval.
fn part_aval(name: &'static str, ins: &[Aval]) -> Result<Vec<Aval>> {
    let [x] = operands::<_, 1>(name, ins)?;
    if !x.dtype.is_complex() {
        return Err(not_accepted(name, x.dtype, "complexfloating"));
    }
    let mut out = x.clone();
    out.dtype = x.dtype.real_dtype();
    Ok(vec![out])
}

/// `complex(re, im)` of float cotangent parts (`None`: zero).
fn make_complex(b: &mut Builder, re: Option<Atom>, im: Option<Atom>) -> Result<Atom> {
    let like = match (&re, &im) {
        (Some(a), _) | (None, Some(a)) => b.aval(a)?,
        (None, None) => return Err(Error::InvalidArgument("complex of two zeros".into())),
    };
    let mut parts = Vec::with_capacity(2);
    for p in [re, im] {
        parts.push(match p {
            Some(a) => a,
            None => Builder::lit(like.dtype, 0.0),
        });
    }
    emit1(b, MakeComplex, parts)
}

/// The tangent of `y = abs(x)` for complex `x` (JAX's rule):
/// `real(t * conj(x) / y)`, with `y` replaced by 1 where it is zero.
pub(super) fn abs_tangent(
    b: &mut Builder, x: Atom, y: Atom, t: Atom, dtype: DType,
) -> Result<Atom> {
    let yc = super::jvp::convert(b, y, dtype)?;
    let zero = b.add_eqn1(
        Primitive::Compare(super::CmpOp::Eq),
        vec![yc.clone(), Builder::lit(dtype, 0.0)],
    )?;
    let ones = b.full(&b.aval(&yc)?, 1.0)?;
    let denom = b.add_eqn1(Primitive::SelectN(super::SelectN), vec![zero, yc, ones])?;
    let cx = emit1(b, Conj { input_dtype: dtype }, vec![x])?;
    let q = b.binary(super::BinaryOp::Div, cx, denom)?;
    let m = b.binary(super::BinaryOp::Mul, t, q)?;
    emit1(b, Real, vec![m])
}

/// The transpose of `real`: `complex(ct, 0)`.
fn real_transpose(b: &mut Builder, ct: Atom) -> Result<Atom> {
    make_complex(b, Some(ct), None)
}

/// The transpose of `imag`: `complex(0, -ct)`.
fn imag_transpose(b: &mut Builder, ct: Atom) -> Result<Atom> {
    let neg = b.unary(UnaryOp::Neg, ct)?;
    make_complex(b, None, Some(neg))
}

/// The [`Family`] of a part primitive (`real`, `imag`): unit type `$ty`,
/// name `$name`, variant `Primitive::$ty`, cotangent rule `$transpose`.
macro_rules! part_family {
    ($ty:ident, $name:ident, $transpose:ident) => {
        impl Family for $ty {
            crate::family_identity!(unit: $name);

            fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
                part_aval($name, ins)
            }

            fn kernel(
                &self, _ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
            ) -> Result<Vec<HostArray>> {
                unary_kernel($name, args, outs, |x| kernels::part($name, x.buffer()))
            }

            fn jvp(&self, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
                jvp_linear(self, b, xs, ts)
            }

            fn transpose(
                &self, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand],
            ) -> TransposeOut {
                let Some(ct) = single_ct($name, cts)? else {
                    return Ok(vec![None; ops.len()]);
                };
                Ok(vec![Some($transpose(b, ct)?)])
            }

            fn batch(
                &self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize,
            ) -> BatchOut {
                elementwise_rule(&Primitive::$ty(*self), b, ins, dims, n)
            }
        }
    };
}

part_family!(Real, REAL, real_transpose);
part_family!(Imag, IMAG, imag_transpose);

impl Family for Conj {
    crate::family_identity!(
        CONJ,
        example = Conj {
            input_dtype: DType::C64
        }
    );

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let [x] = operands::<_, 1>(CONJ, ins)?;
        let Some(out_dtype) = x.dtype.complex_dtype() else {
            return Err(not_accepted(CONJ, x.dtype, "floating, complexfloating"));
        };
        let mut out = x.clone();
        out.dtype = out_dtype;
        Ok(vec![out])
    }

    fn kernel(
        &self, _ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        let out_dtype = outs.first().map(|a| a.dtype);
        unary_kernel(CONJ, args, outs, |x| {
            if x.dtype().is_complex() {
                kernels::part(CONJ, x.buffer())
            } else {
                let d = out_dtype.ok_or_else(|| Error::arity(CONJ, 1, 0))?;
                super::kernel::elementwise::convert(x.buffer(), d)
            }
        })
    }

    fn jvp(&self, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
        jvp_linear(self, b, xs, ts)
    }

    /// `conj(ct)` for a complex operand, `real(ct)` for a real one.
    fn transpose(&self, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TransposeOut {
        let Some(ct) = single_ct(CONJ, cts)? else {
            return Ok(vec![None; ops.len()]);
        };
        let ct_dtype = b.aval(&ct)?.dtype;
        let back = if self.input_dtype.is_complex() {
            emit1(
                b,
                Conj {
                    input_dtype: ct_dtype,
                },
                vec![ct],
            )?
        } else {
            emit1(b, Real, vec![ct])?
        };
        Ok(vec![Some(back)])
    }

    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize) -> BatchOut {
        elementwise_rule(&Primitive::Conj(self.clone()), b, ins, dims, n)
    }
}

impl Family for MakeComplex {
    crate::family_identity!(unit: COMPLEX);

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let [x, y] = operands::<_, 2>(COMPLEX, ins)?;
        for a in [x, y] {
            if !matches!(a.dtype, DType::F32 | DType::F64) {
                return Err(not_accepted(COMPLEX, a.dtype, "float32, float64"));
            }
        }
        if x.dtype != y.dtype {
            return Err(Error::dtype(
                COMPLEX,
                &[x.dtype, y.dtype],
                "operands must have equal dtypes",
            ));
        }
        let shape = elementwise_shape(COMPLEX, &[x, y])?;
        let d = x.dtype.complex_dtype().unwrap_or(DType::C64);
        Ok(vec![Aval::weak(shape, d, x.weak_type && y.weak_type)])
    }

    fn kernel(
        &self, _ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        let [x, y] = operands::<_, 2>(COMPLEX, args)?;
        let buf = kernels::complex(x.buffer(), y.buffer())?;
        super::family::finish_all(COMPLEX, outs, vec![buf])
    }

    /// `complex(tx, ty)` with zeros for a missing tangent.
    fn jvp(&self, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
        let [tx, ty] = operands::<_, 2>(COMPLEX, ts)?.clone();
        let z = emit1(b, *self, xs.to_vec())?;
        if tx.is_none() && ty.is_none() {
            return Ok((vec![z], vec![None]));
        }
        let zaval = b.aval(&z)?;
        let t = make_complex(b, tx, ty)?;
        let t = super::jvp::broadcast_to(b, t, &zaval.shape)?;
        Ok((vec![z], vec![Some(t)]))
    }

    /// `(real(ct), imag(-ct))`, each summed back to its operand's shape.
    fn transpose(&self, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TransposeOut {
        let Some(ct) = single_ct(COMPLEX, cts)? else {
            return Ok(vec![None; ops.len()]);
        };
        let [x, y] = operands::<_, 2>(COMPLEX, ops)?;
        let cx = match x {
            Operand::Linear(a) => {
                let re = emit1(b, Real, vec![ct.clone()])?;
                Some(unbroadcast(b, re, a)?)
            }
            Operand::Known(_) => None,
        };
        let cy = match y {
            Operand::Linear(a) => {
                let neg = b.unary(UnaryOp::Neg, ct)?;
                let im = emit1(b, Imag, vec![neg])?;
                Some(unbroadcast(b, im, a)?)
            }
            Operand::Known(_) => None,
        };
        Ok(vec![cx, cy])
    }

    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize) -> BatchOut {
        elementwise_rule(&Primitive::MakeComplex(*self), b, ins, dims, n)
    }
}
