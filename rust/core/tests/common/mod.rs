//! Helpers shared by the integration tests (each test crate uses a subset).
// (This covers the submodules below too.)
#![allow(
    dead_code,
    unused_macros,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::cast_precision_loss
)]

use microjax::ir::typecheck::typecheck;
use microjax::prims::control::{ControlFlow, Scan};
use microjax::prims::{BroadcastInDim, ConvertElementType, DotGeneral};
use microjax::prims::{Iota, Reduce, Reshape, Squeeze, Transpose};
use microjax::{
    Atom, Aval, BinaryOp, Buffer, Builder, ClosedJaxpr, DType, DotDims, HostArray, Literal,
    Primitive, ReduceOp, Scalar, UnaryOp,
};
use std::sync::Arc;

/// Asserts that the CUDA device plan of the program `$prog` (a
/// `ClosedJaxpr`) matches the slice pattern (with an optional guard).
macro_rules! assert_plan {
    ($prog:expr, $($pattern:tt)+) => {{
        let steps = microjax::exec::cuda::device_plan(&$prog.jaxpr).unwrap();
        assert!(matches!(steps.as_slice(), $($pattern)+), "{steps:?}");
    }};
}

pub mod autodiff;
pub mod batching;
pub mod gather;
pub mod kernels;
pub mod rules;
pub mod text;

// ------------------------------------------------------------- avals and arrays

/// An f32 aval of `shape`.
pub fn f32v(shape: &[usize]) -> Aval {
    Aval::new(shape.to_vec(), DType::F32)
}

/// An f64 aval of `shape`.
pub fn f64v(shape: &[usize]) -> Aval {
    Aval::new(shape.to_vec(), DType::F64)
}

/// A host array of `shape` holding `buf`.
pub fn host(shape: &[usize], buf: impl Into<Buffer>) -> HostArray {
    HostArray::new(shape.to_vec(), buf.into()).unwrap()
}

pub fn arc(a: HostArray) -> Arc<HostArray> {
    Arc::new(a)
}

/// An f64 array of `shape`.
pub fn f64a(shape: &[usize], v: Vec<f64>) -> HostArray {
    host(shape, v)
}

/// [`f64a`], shared.
pub fn f64_arc(shape: &[usize], v: Vec<f64>) -> Arc<HostArray> {
    arc(f64a(shape, v))
}

/// The values of an array of one dtype (panics on another).
macro_rules! getter {
    ($name:ident, $t:ty, $var:ident) => {
        pub fn $name(a: &HostArray) -> Vec<$t> {
            match a.buffer() {
                Buffer::$var(v) => v.to_vec(),
                other => panic!("expected {}, got {:?}", stringify!($var), other.dtype()),
            }
        }
    };
}
getter!(f32s, f32, F32);
getter!(f64s, f64, F64);
getter!(f16s, half::f16, F16);
getter!(bf16s, half::bf16, BF16);
getter!(i8s, i8, I8);
getter!(i32s, i32, I32);
getter!(i64s, i64, I64);
getter!(u8s, u8, U8);
getter!(u32s, u32, U32);
getter!(bools, bool, Bool);
getter!(keys, u32, Key);

/// Deterministic uniform draws (xorshift64).
pub struct Rng(pub u64);

impl Rng {
    /// A generator seeded from `seed` (any value, zero included).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next raw 64-bit state.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// The next draw in [0, 1).
    pub fn next(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A draw in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next()
    }

    pub fn vec(&mut self, n: usize, lo: f64, hi: f64) -> Vec<f64> {
        (0..n).map(|_| self.uniform(lo, hi)).collect()
    }

    /// An f64 array of `shape` uniform in [-1, 1).
    pub fn f64s(&mut self, shape: &[usize]) -> Arc<HostArray> {
        let n = shape.iter().product();
        arc(f64a(
            shape,
            (0..n).map(|_| self.next() * 2.0 - 1.0).collect(),
        ))
    }
}

/// The multi-index of row-major position `flat` in `shape`.
pub fn unravel(flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut rem = flat;
    let mut idx = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        idx[d] = rem % shape[d];
        rem /= shape[d];
    }
    idx
}

/// The inner product of two equally long vectors.
pub fn inner(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

// ------------------------------------------------------------- programs

/// A typechecked program of inputs `ins` and the outputs `f` appends.
pub fn build(ins: &[Aval], f: impl FnOnce(&mut Builder, &[Atom]) -> Vec<Atom>) -> ClosedJaxpr {
    let mut b = Builder::new();
    let xs: Vec<Atom> = ins
        .iter()
        .map(|a| Atom::Var(b.add_input(a.clone()).unwrap()))
        .collect();
    let outs = f(&mut b, &xs);
    let j = b.build(outs).unwrap();
    typecheck(&j).unwrap();
    j
}

/// `p(xs) ** 2` over inputs `avals` (squared so that the VJP has residuals
/// and second order is non-trivial).
pub fn squared(p: &Primitive, avals: &[Aval]) -> ClosedJaxpr {
    build(avals, |b, xs| {
        let y = b.add_eqn1(p.clone(), xs.to_vec()).unwrap();
        vec![b.binary(BinaryOp::Mul, y.clone(), y).unwrap()]
    })
}

/// `dot_general` dimension numbers: contracting axes `lc` / `rc`, batch
/// axes `lb` / `rb`.
pub fn dot_dims(lc: &[usize], rc: &[usize], lb: &[usize], rb: &[usize]) -> DotDims {
    DotDims {
        lhs_contract: lc.to_vec(),
        rhs_contract: rc.to_vec(),
        lhs_batch: lb.to_vec(),
        rhs_batch: rb.to_vec(),
    }
}

/// `dot_general` with [`dot_dims`] and no preferred element type.
pub fn dot_general(lc: &[usize], rc: &[usize], lb: &[usize], rb: &[usize]) -> Primitive {
    Primitive::DotGeneral(DotGeneral {
        dims: dot_dims(lc, rc, lb, rb),
        preferred_element_type: None,
    })
}

/// `reduce` by `op` over `axes`.
pub fn reduce(op: ReduceOp, axes: &[usize]) -> Primitive {
    Primitive::Reduce(Reduce {
        op,
        axes: axes.to_vec(),
    })
}

/// `reshape` to `sizes`.
pub fn reshape(sizes: &[usize]) -> Primitive {
    Primitive::Reshape(Reshape {
        new_sizes: sizes.to_vec(),
    })
}

/// `squeeze` of the size-1 `dimensions`.
pub fn squeeze(dimensions: &[usize]) -> Primitive {
    Primitive::Squeeze(Squeeze {
        dimensions: dimensions.to_vec(),
    })
}

/// `transpose` by `permutation`.
pub fn transpose(permutation: &[usize]) -> Primitive {
    Primitive::Transpose(Transpose {
        permutation: permutation.to_vec(),
    })
}

/// `broadcast_in_dim` to `shape`, operand axis `i` going to `dims[i]`.
pub fn broadcast_in_dim(shape: &[usize], dims: &[usize]) -> Primitive {
    Primitive::BroadcastInDim(BroadcastInDim {
        shape: shape.to_vec(),
        broadcast_dimensions: dims.to_vec(),
    })
}

/// `iota` of `dtype` and `shape`, counting along `dimension`.
pub fn iota(dtype: DType, shape: &[usize], dimension: usize) -> Primitive {
    Primitive::Iota(Iota {
        dtype,
        shape: shape.to_vec(),
        dimension,
    })
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
    Arc::new(HostArray::new(shape.to_vec(), Buffer::F32(v.into())).unwrap())
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

/// [`tanh_sin_exp`] of an f32[4, 8] input.
pub fn fused_chain() -> ClosedJaxpr {
    let mut b = Builder::new();
    let x = input(&mut b, &[4, 8]);
    let y = tanh_sin_exp(&mut b, x);
    b.build(vec![y]).unwrap()
}

/// `relu(x + bias)` of an f32[4, 3] `x` and a row `bias` f32[3].
pub fn bias_relu() -> ClosedJaxpr {
    let mut b = Builder::new();
    let x = input(&mut b, &[4, 3]);
    let bias = input(&mut b, &[3]);
    let bb = broadcast(&mut b, bias, vec![4, 3], vec![1]);
    let s = b.binary(BinaryOp::Add, x, bb).unwrap();
    let r = b.binary(BinaryOp::Max, s, lit(0.0)).unwrap();
    b.build(vec![r]).unwrap()
}

/// `broadcast_in_dim(x, shape, dims)`.
pub fn broadcast(b: &mut Builder, x: Atom, shape: Vec<usize>, dims: Vec<usize>) -> Atom {
    b.add_eqn1(
        Primitive::BroadcastInDim(BroadcastInDim {
            shape,
            broadcast_dimensions: dims,
        }),
        vec![x],
    )
    .unwrap()
}

/// Appends `while` (cond/body taking `cond_nconsts`/`body_nconsts` leading
/// consts from `operands`, then the carries) and returns its outputs.
pub fn while_loop(
    b: &mut Builder, cond: microjax::ClosedJaxpr, body: microjax::ClosedJaxpr,
    (cond_nconsts, body_nconsts): (usize, usize), operands: Vec<Atom>,
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

/// Runs `prim`'s kernel on `args` in a context with the process-wide
/// defaults.
pub fn eval(prim: &Primitive, args: &[&HostArray]) -> microjax::Result<Vec<HostArray>> {
    microjax::prims::kernel::eval(&microjax::exec::ExecCtx::default(), prim, args)
}

/// A `scan` over `body` for `length` steps (last to first when `reverse`):
/// of its `n_operands` operands the first `num_consts` are consts and the
/// next `num_carry` carries; nothing linear, no unrolling.
pub fn scan_prim(
    body: ClosedJaxpr, length: usize, reverse: bool, (num_consts, num_carry): (usize, usize),
    n_operands: usize,
) -> Primitive {
    Primitive::Control(ControlFlow::Scan(Scan {
        jaxpr: Arc::new(body),
        length,
        reverse,
        num_consts,
        num_carry,
        linear: vec![false; n_operands],
        unroll: 1,
    }))
}

/// Appends a [`scan_prim`] over `operands` and returns its outputs.
pub fn scan(
    b: &mut Builder, body: ClosedJaxpr, length: usize, reverse: bool, consts_carry: (usize, usize),
    operands: Vec<Atom>,
) -> Vec<Atom> {
    let prim = scan_prim(body, length, reverse, consts_carry, operands.len());
    let outs = b.add_eqn(prim, operands, None).unwrap();
    outs.into_iter().map(Atom::Var).collect()
}

/// `convert_element_type` to `new_dtype` (not weakly typed).
pub fn convert(new_dtype: DType) -> Primitive {
    Primitive::ConvertElementType(ConvertElementType {
        new_dtype,
        weak_type: false,
    })
}
