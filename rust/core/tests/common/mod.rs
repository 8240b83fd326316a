//! Helpers shared by the integration tests (each test crate uses a subset).
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::arithmetic_side_effects,
    clippy::cast_precision_loss
)]

use microjax::{
    Atom, Aval, BinaryOp, Buffer, Builder, DType, HostArray, Literal, Primitive, Scalar, UnaryOp,
};
use std::sync::Arc;

pub fn f32v(shape: &[usize]) -> Aval {
    Aval::new(shape.to_vec(), DType::F32)
}

/// A weakly typed f32 scalar literal.
pub fn lit(v: f64) -> Atom {
    Atom::Lit(Literal::new(Scalar::Float(v), DType::F32, true))
}

/// An f32 input of `shape`.
pub fn input(b: &mut Builder, shape: &[usize]) -> Atom {
    Atom::Var(b.add_input(f32v(shape)).unwrap())
}

/// Deterministic pseudo-random f32 values in about [-3, 3] (xorshift).
pub fn data(shape: &[usize], seed: u32) -> Arc<HostArray> {
    let n: usize = shape.iter().product();
    let mut s = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    let v = (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s as f32 / u32::MAX as f32) * 6.0 - 3.0
        })
        .collect();
    Arc::new(HostArray::new(shape.to_vec(), Buffer::F32(v)).unwrap())
}

/// [`data`] rescaled to about [-scale, scale].
pub fn data_in(shape: &[usize], seed: u32, scale: f32) -> Arc<HostArray> {
    let base = data(shape, seed);
    let v = match base.buffer() {
        Buffer::F32(v) => v.iter().map(|x| x / 3.0 * scale).collect(),
        _ => Vec::new(),
    };
    Arc::new(HostArray::new(shape.to_vec(), Buffer::F32(v)).unwrap())
}

/// `tanh(x*2+1)*sin(x) - exp(-x*x)`: the suite's fusion benchmark chain.
pub fn tanh_sin_exp(b: &mut Builder, x: Atom) -> Atom {
    let x2 = b.binary(BinaryOp::Mul, x.clone(), lit(2.0)).unwrap();
    let x21 = b.binary(BinaryOp::Add, x2, lit(1.0)).unwrap();
    let t = b.unary(UnaryOp::Tanh, x21).unwrap();
    let s = b.unary(UnaryOp::Sin, x.clone()).unwrap();
    let ts = b.binary(BinaryOp::Mul, t, s).unwrap();
    let nx = b.unary(UnaryOp::Neg, x.clone()).unwrap();
    let nxx = b.binary(BinaryOp::Mul, nx, x).unwrap();
    let e = b.unary(UnaryOp::Exp, nxx).unwrap();
    b.binary(BinaryOp::Sub, ts, e).unwrap()
}

/// `broadcast_in_dim(x, shape, dims)`.
pub fn broadcast(b: &mut Builder, x: Atom, shape: Vec<usize>, dims: Vec<usize>) -> Atom {
    b.add_eqn1(
        Primitive::BroadcastInDim {
            shape,
            broadcast_dimensions: dims,
        },
        vec![x],
    )
    .unwrap()
}

/// Appends `while` (cond/body taking `cond_nconsts`/`body_nconsts` leading
/// consts from `operands`, then the carries) and returns its outputs.
pub fn while_loop(
    b: &mut Builder,
    cond: microjax::ClosedJaxpr,
    body: microjax::ClosedJaxpr,
    (cond_nconsts, body_nconsts): (usize, usize),
    operands: Vec<Atom>,
) -> Vec<Atom> {
    let w = Primitive::Control(microjax::prims::control::ControlFlow::While {
        cond_jaxpr: Arc::new(cond),
        body_jaxpr: Arc::new(body),
        cond_nconsts,
        body_nconsts,
    });
    let outs = b.add_eqn(w, operands, None).unwrap();
    outs.into_iter().map(Atom::Var).collect()
}

/// `(x, limit: i32[]) -> (i, x * 2^i)` doubling `x` (of aval `x_aval`, a
/// float) while `i < limit`.
pub fn doubling_while(x_aval: Aval) -> microjax::ClosedJaxpr {
    let i32s = || Aval::new(vec![], DType::I32);
    let mut cb = Builder::new();
    let lim = Atom::Var(cb.add_input(i32s()).unwrap());
    let i = Atom::Var(cb.add_input(i32s()).unwrap());
    cb.add_input(x_aval.clone()).unwrap();
    let lt = cb
        .add_eqn1(Primitive::Compare(microjax::CmpOp::Lt), vec![i, lim])
        .unwrap();
    let cond = cb.build(vec![lt]).unwrap();
    let mut bb = Builder::new();
    let i = Atom::Var(bb.add_input(i32s()).unwrap());
    let x = Atom::Var(bb.add_input(x_aval.clone()).unwrap());
    let i1 = bb
        .binary(BinaryOp::Add, i, Builder::lit(DType::I32, 1.0))
        .unwrap();
    let x2 = bb
        .binary(BinaryOp::Mul, x, Builder::lit(x_aval.dtype, 2.0))
        .unwrap();
    let body = bb.build(vec![i1, x2]).unwrap();
    let mut b = Builder::new();
    let x = Atom::Var(b.add_input(x_aval).unwrap());
    let lim = Atom::Var(b.add_input(i32s()).unwrap());
    let outs = while_loop(
        &mut b,
        cond,
        body,
        (1, 0),
        vec![lim, Builder::lit(DType::I32, 0.0), x],
    );
    b.build(outs).unwrap()
}
