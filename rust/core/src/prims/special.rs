//! The special-function primitives of `jax.lax` ([`SpecialOp`]): `igamma`,
//! `igammac`, `igamma_grad_a`, `random_gamma_grad`,
//! `regularized_incomplete_beta` (`lax.betainc`), `zeta`, `bessel_i0e`,
//! `bessel_i1e` and `erfc`. Shape: one to three floating operands of one
//! dtype, equal shapes (rank-0 operands combine with arrays). Kernels:
//! `kernels/special_math.rs`, computed in f64. AD as JAX's: `igamma`'s
//! derivative in `a` is `igamma_grad_a`, in `x` the gamma density;
//! `betainc` differentiates in `x` only (a ValueError in `a`, `b`);
//! `igamma_grad_a`, `random_gamma_grad` and `zeta` have no rule (JAX's
//! NotImplementedError). None is linear. vmap: the shared elementwise rule.

use super::batch::elementwise_rule;
use super::family::{emit1, finish, transpose_not_linear};
use super::family::{BatchOut, Family, JvpOut, Operand, TransposeOut};
use super::jvp::{add_opt, broadcast_to, mul, select};
use super::kernel::special_math as sm;
use super::shape::{elementwise_shape, same_dtype};
use super::{BinaryOp, CmpOp, Primitive, SpecialOp, UnaryOp};
use crate::array::{Buffer, HostArray};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::exec::ExecCtx;
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval};
use half::{bf16, f16};

impl SpecialOp {
    /// How many operands the op takes.
    pub fn arity(self) -> usize {
        match self {
            SpecialOp::BesselI0e | SpecialOp::BesselI1e | SpecialOp::Erfc => 1,
            SpecialOp::RegularizedIncompleteBeta => 3,
            _ => 2,
        }
    }

    /// The op on one set of f64 operands (missing operands read as NaN).
    pub fn eval_f64(self, v: [f64; 3]) -> f64 {
        let [x, y, z] = v;
        match self {
            SpecialOp::Igamma => sm::igamma(x, y),
            SpecialOp::Igammac => sm::igammac(x, y),
            SpecialOp::IgammaGradA => sm::igamma_grad_a(x, y),
            SpecialOp::RandomGammaGrad => sm::random_gamma_grad(x, y),
            SpecialOp::RegularizedIncompleteBeta => sm::betainc(x, y, z),
            SpecialOp::Zeta => sm::hurwitz_zeta(x, y),
            SpecialOp::BesselI0e => sm::bessel_i0e(x),
            SpecialOp::BesselI1e => sm::bessel_i1e(x),
            SpecialOp::Erfc => sm::erfc(x),
        }
    }
}

/// Applies `op` elementwise over `n` outputs; operands of one element
/// (rank 0) repeat.
fn apply<T: Copy>(
    op: SpecialOp, ins: &[&[T]], n: usize, to: fn(T) -> f64, from: fn(f64) -> T,
) -> Vec<T> {
    (0..n)
        .map(|i| {
            let mut v = [f64::NAN; 3];
            for (slot, xs) in v.iter_mut().zip(ins) {
                let j = if xs.len() == 1 { 0 } else { i };
                if let Some(&x) = xs.get(j) {
                    *slot = to(x);
                }
            }
            from(op.eval_f64(v))
        })
        .collect()
}

/// The kernel on buffers of one float dtype.
fn kernel_buffer(op: SpecialOp, args: &[&Buffer], n: usize) -> Result<Buffer> {
    macro_rules! arm {
        ($var:ident, $to:expr, $from:expr) => {{
            let mut slices = Vec::with_capacity(args.len());
            for a in args {
                match a {
                    Buffer::$var(v) => slices.push(&v[..]),
                    _ => return Err(bad_kernel_dtype(op, args)),
                }
            }
            Buffer::$var(apply(op, &slices, n, $to, $from).into())
        }};
    }
    Ok(match args.first() {
        Some(Buffer::F32(_)) => arm!(F32, f64::from, |v: f64| v as f32),
        Some(Buffer::F64(_)) => arm!(F64, |v: f64| v, |v: f64| v),
        Some(Buffer::F16(_)) => arm!(F16, f16::to_f64, f16::from_f64),
        Some(Buffer::BF16(_)) => arm!(BF16, bf16::to_f64, bf16::from_f64),
        _ => return Err(bad_kernel_dtype(op, args)),
    })
}

fn bad_kernel_dtype(op: SpecialOp, args: &[&Buffer]) -> Error {
    let ds: Vec<DType> = args.iter().map(|b| b.dtype()).collect();
    Error::dtype(op.name(), &ds, "no kernel for this operand dtype")
}

/// JAX's NotImplementedError of an op without a differentiation rule.
fn no_rule(op: SpecialOp) -> Error {
    Error::NotImplemented(format!(
        "Differentiation rule for '{}' not implemented",
        op.name()
    ))
}

impl Family for SpecialOp {
    crate::family_identity!(table: SpecialOp);

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let name = self.name();
        if ins.len() != self.arity() {
            return Err(Error::Arity {
                prim: name,
                expected: self.arity(),
                got: ins.len(),
            });
        }
        let refs: Vec<&Aval> = ins.iter().collect();
        same_dtype(name, &refs)?;
        if ins.iter().any(|a| !a.dtype.is_float()) {
            let ds: Vec<DType> = ins.iter().map(|a| a.dtype).collect();
            return Err(Error::dtype(name, &ds, "requires a floating operand"));
        }
        let shape = elementwise_shape(name, &refs)?;
        let weak = ins.iter().all(|a| a.weak_type);
        let dtype = ins.first().map_or(DType::F32, |a| a.dtype);
        Ok(vec![Aval::weak(shape, dtype, weak)])
    }

    fn kernel(
        &self, _ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        let n = outs.first().map(Aval::size).transpose()?.unwrap_or(0);
        let bufs: Vec<&Buffer> = args.iter().map(|a| a.buffer()).collect();
        let buf = kernel_buffer(*self, &bufs, n)?;
        finish(self.name(), outs, buf)
    }

    fn jvp(&self, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
        let op = *self;
        if xs.len() != op.arity() || ts.len() != op.arity() {
            return Err(super::family::arity_error(op.name(), op.arity(), xs.len()));
        }
        let y = emit1(b, op, xs.to_vec())?;
        let yaval = b.aval(&y)?;
        let mut tangent = None;
        for (i, t) in ts.iter().enumerate() {
            let Some(t) = t else { continue };
            let d = partial(b, op, i, xs, &y, yaval.dtype)?;
            let term = mul(b, t.clone(), d)?;
            tangent = add_opt(b, tangent, Some(term))?;
        }
        let tangent = match tangent {
            Some(t) => Some(broadcast_to(b, t, &yaval.shape)?),
            None => None,
        };
        Ok((vec![y], vec![tangent]))
    }

    fn transpose(&self, _b: &mut Builder, _cts: &[Option<Atom>], _ops: &[Operand]) -> TransposeOut {
        transpose_not_linear(self.name())
    }

    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize) -> BatchOut {
        elementwise_rule(&Primitive::Special(*self), b, ins, dims, n)
    }
}

/// `exp(-x + (a - 1) log x - lgamma(a))`: the derivative of `igamma(a, x)`
/// in `x` (the Gamma(a) density).
fn gamma_density(b: &mut Builder, a: &Atom, x: &Atom, dtype: DType) -> Result<Atom> {
    let nx = b.unary(UnaryOp::Neg, x.clone())?;
    let am1 = b.binary(BinaryOp::Sub, a.clone(), Builder::lit(dtype, 1.0))?;
    let lx = b.unary(UnaryOp::Log, x.clone())?;
    let p = b.binary(BinaryOp::Mul, am1, lx)?;
    let s = b.binary(BinaryOp::Add, nx, p)?;
    let lg = b.unary(UnaryOp::Lgamma, a.clone())?;
    let e = b.binary(BinaryOp::Sub, s, lg)?;
    b.unary(UnaryOp::Exp, e)
}

/// `x^(a-1) (1-x)^(b-1) / B(a, b)`: the derivative of `betainc(a, b, x)` in
/// `x`, through logs.
fn beta_density(b: &mut Builder, xs: &[Atom], dtype: DType) -> Result<Atom> {
    let [a, bb, x] = super::family::operands::<_, 3>("regularized_incomplete_beta", xs)?.clone();
    let one = Builder::lit(dtype, 1.0);
    let la = b.unary(UnaryOp::Lgamma, a.clone())?;
    let lb = b.unary(UnaryOp::Lgamma, bb.clone())?;
    let lab = b.binary(BinaryOp::Add, la, lb)?;
    let apb = b.binary(BinaryOp::Add, a.clone(), bb.clone())?;
    let lapb = b.unary(UnaryOp::Lgamma, apb)?;
    let log_beta = b.binary(BinaryOp::Sub, lab, lapb)?;
    let bm1 = b.binary(BinaryOp::Sub, bb, one.clone())?;
    let nx = b.unary(UnaryOp::Neg, x.clone())?;
    let l1 = b.unary(UnaryOp::Log1p, nx)?;
    let t1 = b.binary(BinaryOp::Mul, bm1, l1)?;
    let am1 = b.binary(BinaryOp::Sub, a, one)?;
    let lx = b.unary(UnaryOp::Log, x)?;
    let t2 = b.binary(BinaryOp::Mul, am1, lx)?;
    let s = b.binary(BinaryOp::Add, t1, t2)?;
    let e = b.binary(BinaryOp::Sub, s, log_beta)?;
    b.unary(UnaryOp::Exp, e)
}

/// The derivative of `bessel_i1e` as JAX writes it:
/// `i0e(x) - i1e(x) (sign(x) + 1/x)`, and 1/2 where `|x| ≤ eps`.
fn i1e_derivative(b: &mut Builder, x: &Atom, y: &Atom, dtype: DType) -> Result<Atom> {
    let eps = match dtype {
        DType::F64 => f64::EPSILON,
        DType::F16 => 0.000_976_562_5,
        DType::BF16 => 0.007_812_5,
        _ => f64::from(f32::EPSILON),
    };
    let xaval = b.aval(x)?;
    let eps_full = b.full(&xaval, eps)?;
    let half_full = b.full(&xaval, 0.5)?;
    let ax = b.unary(UnaryOp::Abs, x.clone())?;
    let big = b.add_eqn1(
        Primitive::Compare(CmpOp::Gt),
        vec![ax, Builder::lit(dtype, eps)],
    )?;
    let safe = select(b, big.clone(), eps_full, x.clone())?;
    let i0 = emit1(b, SpecialOp::BesselI0e, vec![safe.clone()])?;
    let sg = b.unary(UnaryOp::Sign, safe.clone())?;
    let inv = b.binary(BinaryOp::Div, Builder::lit(dtype, 1.0), safe)?;
    let s = b.binary(BinaryOp::Add, sg, inv)?;
    let p = b.binary(BinaryOp::Mul, y.clone(), s)?;
    let d = b.binary(BinaryOp::Sub, i0, p)?;
    select(b, big, half_full, d)
}

/// The partial derivative of `op` in operand `i` at `xs` (output `y`).
fn partial(
    b: &mut Builder, op: SpecialOp, i: usize, xs: &[Atom], y: &Atom, dtype: DType,
) -> Result<Atom> {
    let arg = |k: usize| {
        xs.get(k)
            .cloned()
            .ok_or_else(|| super::family::arity_error(op.name(), op.arity(), xs.len()))
    };
    match (op, i) {
        (SpecialOp::Igamma | SpecialOp::Igammac, 0) => {
            let d = emit1(b, SpecialOp::IgammaGradA, vec![arg(0)?, arg(1)?])?;
            if op == SpecialOp::Igammac {
                b.unary(UnaryOp::Neg, d)
            } else {
                Ok(d)
            }
        }
        (SpecialOp::Igamma | SpecialOp::Igammac, _) => {
            let d = gamma_density(b, &arg(0)?, &arg(1)?, dtype)?;
            if op == SpecialOp::Igammac {
                b.unary(UnaryOp::Neg, d)
            } else {
                Ok(d)
            }
        }
        (SpecialOp::RegularizedIncompleteBeta, 2) => beta_density(b, xs, dtype),
        (SpecialOp::RegularizedIncompleteBeta, _) => Err(Error::InvalidArgument(
            "Betainc gradient with respect to a and b not supported.".into(),
        )),
        (SpecialOp::BesselI0e, _) => {
            // i1e(x) - sign(x) i0e(x)
            let x = arg(0)?;
            let i1 = emit1(b, SpecialOp::BesselI1e, vec![x.clone()])?;
            let sg = b.unary(UnaryOp::Sign, x)?;
            let p = b.binary(BinaryOp::Mul, sg, y.clone())?;
            b.binary(BinaryOp::Sub, i1, p)
        }
        (SpecialOp::BesselI1e, _) => i1e_derivative(b, &arg(0)?, y, dtype),
        (SpecialOp::Erfc, _) => {
            // -2/sqrt(pi) exp(-x^2)
            let x2 = b.unary(UnaryOp::Square, arg(0)?)?;
            let n = b.unary(UnaryOp::Neg, x2)?;
            let e = b.unary(UnaryOp::Exp, n)?;
            let c = Builder::lit(dtype, -std::f64::consts::FRAC_2_SQRT_PI);
            b.binary(BinaryOp::Mul, c, e)
        }
        (SpecialOp::IgammaGradA | SpecialOp::RandomGammaGrad | SpecialOp::Zeta, _) => {
            Err(no_rule(op))
        }
    }
}
