//! vmap (`batch_jaxpr`) against the oracle: the unbatched program run per
//! example through the reference interpreter, results stacked. Every
//! primitive, f32 and i32 where meaningful, each input batched alone and all
//! together, in_dims 0 and last, out_dims 0 and 1, axis sizes 0, 1 and 5.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use microjax::exec::interp::eval_closed;
use microjax::ir::typecheck::typecheck;
use microjax::prims::{
    ArgReduce, Clamp, ConvertElementType, Cumulative, IntegerPow, IsFinite, Reduce, Round, SelectN,
    StopGradient,
};
use microjax::transforms::{batch_jaxpr, vjp_jaxpr};
use microjax::{
    with_buffer, Atom, Aval, BinaryOp, Buffer, Builder, ClosedJaxpr, CmpOp, DType, Error,
    HostArray, Primitive, ReduceOp, UnaryOp,
};
use std::sync::Arc;

use crate::common;
use common::batching::{arange, call, lit_f32, single};
use common::{dot_general, f32s, f32v, iota, reduce};

// ------------------------------------------------------------- array helpers

fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

fn gather(buf: &Buffer, idx: &[usize]) -> Buffer {
    with_buffer!(buf, v => {
        let out: Vec<_> = idx.iter().map(|&i| v[i]).collect();
        Buffer::from(out)
    }, _ => panic!("unsupported buffer"))
}

fn concat(bufs: &[&Buffer], dtype: DType) -> Buffer {
    if bufs.is_empty() {
        return Buffer::zeros(dtype, 0).unwrap();
    }
    macro_rules! cat {
        ($var:ident) => {{
            let mut out = Vec::new();
            for b in bufs {
                match b {
                    Buffer::$var(v) => out.extend_from_slice(v),
                    _ => panic!("mixed buffers"),
                }
            }
            Buffer::$var(out.into())
        }};
    }
    match dtype {
        DType::Bool => cat!(Bool),
        DType::I32 => cat!(I32),
        DType::F32 => cat!(F32),
        other => panic!("concat of {other:?}"),
    }
}

/// `a[..., k, ...]` along `axis`.
fn take(a: &HostArray, axis: usize, k: usize) -> HostArray {
    let shape = a.shape().to_vec();
    let st = strides(&shape);
    let mut out_shape = shape.clone();
    out_shape.remove(axis);
    let n: usize = out_shape.iter().product();
    let mut idx = Vec::with_capacity(n);
    for flat in 0..n {
        let mut rem = flat;
        let mut src = k * st[axis];
        let ost = strides(&out_shape);
        for (j, &s) in ost.iter().enumerate() {
            let c = rem / s;
            rem %= s;
            let src_axis = if j < axis { j } else { j + 1 };
            src += c * st[src_axis];
        }
        idx.push(src);
    }
    HostArray::new(out_shape, gather(a.buffer(), &idx)).unwrap()
}

/// Stacks equal-shape arrays along a new `axis` (shape `elem` when empty).
fn stack(parts: &[Arc<HostArray>], axis: usize, elem: &Aval) -> HostArray {
    let bufs: Vec<&Buffer> = parts.iter().map(|p| p.buffer()).collect();
    let stacked0 = concat(&bufs, elem.dtype);
    let mut shape0 = vec![parts.len()];
    shape0.extend_from_slice(&elem.shape);
    let a0 = HostArray::new(shape0.clone(), stacked0).unwrap();
    if axis == 0 {
        return a0;
    }
    // Move axis 0 to `axis`.
    let mut out_shape = elem.shape.clone();
    out_shape.insert(axis, parts.len());
    let st0 = strides(&shape0);
    let ost = strides(&out_shape);
    let n: usize = out_shape.iter().product();
    let mut idx = Vec::with_capacity(n);
    for flat in 0..n {
        let mut rem = flat;
        let mut coords = vec![0; out_shape.len()];
        for (j, &s) in ost.iter().enumerate() {
            coords[j] = rem / s;
            rem %= s;
        }
        let b = coords.remove(axis);
        coords.insert(0, b);
        idx.push(coords.iter().zip(&st0).map(|(c, s)| c * s).sum());
    }
    HostArray::new(out_shape, gather(a0.buffer(), &idx)).unwrap()
}

// ------------------------------------------------------------- random inputs

#[derive(Clone, Copy, Debug)]
enum Gen {
    /// Uniform floats in `[lo, hi)`.
    F(f32, f32),
    /// Uniform ints in `[lo, hi]`.
    I(i32, i32),
    B,
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn array(&mut self, g: Gen, shape: &[usize]) -> HostArray {
        let n: usize = shape.iter().product();
        let buf = match g {
            Gen::F(lo, hi) => Buffer::F32(
                (0..n)
                    .map(|_| lo + (hi - lo) * (self.next() % 10_000) as f32 / 10_000.0)
                    .collect(),
            ),
            Gen::I(lo, hi) => Buffer::I32(
                (0..n)
                    .map(|_| lo + (self.next() % ((hi - lo + 1) as u64)) as i32)
                    .collect(),
            ),
            Gen::B => Buffer::Bool((0..n).map(|_| self.next() % 2 == 1).collect()),
        };
        HostArray::new(shape.to_vec(), buf).unwrap()
    }
}

fn assert_close(got: &HostArray, want: &HostArray, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    match (got.buffer(), want.buffer()) {
        (Buffer::F32(g), Buffer::F32(w)) => {
            for (i, (a, b)) in g.iter().zip(w).enumerate() {
                let ok = (a.is_nan() && b.is_nan())
                    || a == b
                    || (a - b).abs() <= 1e-5 * a.abs().max(b.abs()).max(1.0);
                assert!(ok, "{what}: element {i}: got {a}, want {b}");
            }
        }
        (g, w) => assert_eq!(g, w, "{what}"),
    }
}

// ------------------------------------------------------------- the oracle check

/// Runs `prog` batched with `in_dims`/`out_dims` (all outputs mapped) and
/// compares to per-example runs stacked.
fn check_config(
    prog: &ClosedJaxpr, gens: &[Gen], in_dims: &[Option<usize>], n: usize,
    out_dims: &[Option<usize>], rng: &mut Rng,
) {
    let what = format!("in_dims {in_dims:?} out_dims {out_dims:?} n {n}");
    let in_avals = prog.in_avals().unwrap();
    let out_avals = prog.out_avals().unwrap();
    let batched = batch_jaxpr(prog, in_dims, n, out_dims)
        .unwrap_or_else(|e| panic!("{what}: batch_jaxpr failed: {e}"));
    typecheck(&batched).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(batched.consts.len(), prog.consts.len(), "{what}: consts");
    let args: Vec<Arc<HostArray>> = in_avals
        .iter()
        .zip(in_dims)
        .zip(gens)
        .map(|((a, d), g)| {
            let mut shape = a.shape.clone();
            if let Some(d) = d {
                shape.insert(*d, n);
            }
            Arc::new(rng.array(*g, &shape))
        })
        .collect();
    let got = eval_closed(&batched, &args).unwrap_or_else(|e| panic!("{what}: eval: {e}"));
    let mut per: Vec<Vec<Arc<HostArray>>> = vec![Vec::new(); out_avals.len()];
    for k in 0..n {
        let ex: Vec<Arc<HostArray>> = args
            .iter()
            .zip(in_dims)
            .map(|(a, d)| match d {
                Some(d) => Arc::new(take(a, *d, k)),
                None => a.clone(),
            })
            .collect();
        let outs = eval_closed(prog, &ex).unwrap();
        for (j, o) in outs.into_iter().enumerate() {
            per[j].push(o);
        }
    }
    assert_eq!(got.len(), out_avals.len());
    for (j, ((g, parts), d)) in got.iter().zip(&per).zip(out_dims).enumerate() {
        let want = match d {
            Some(d) => stack(parts, *d, &out_avals[j]),
            None => panic!("check_config maps every output"),
        };
        assert_close(g, &want, &format!("{what}: output {j}"));
    }
}

/// The full product: each input alone and all together, in_dims 0 and last,
/// out_dims 0 and 1 (where the output rank allows), axis sizes 0, 1, 5.
fn check(prog: &ClosedJaxpr, gens: &[Gen]) {
    check_sizes(prog, gens, &[0, 1, 5]);
}

fn check_sizes(prog: &ClosedJaxpr, gens: &[Gen], sizes: &[usize]) {
    typecheck(prog).unwrap();
    let in_avals = prog.in_avals().unwrap();
    let out_avals = prog.out_avals().unwrap();
    assert_eq!(gens.len(), in_avals.len());
    let ni = in_avals.len();
    let mut subsets: Vec<Vec<bool>> = (0..ni).map(|i| (0..ni).map(|k| k == i).collect()).collect();
    if ni > 1 {
        subsets.push(vec![true; ni]);
    }
    let mut rng = Rng(0x5eed);
    for subset in &subsets {
        for last in [false, true] {
            let in_dims: Vec<Option<usize>> = subset
                .iter()
                .zip(&in_avals)
                .map(|(&on, a)| on.then(|| if last { a.ndim() } else { 0 }))
                .collect();
            for od in [0usize, 1] {
                let out_dims: Vec<Option<usize>> =
                    out_avals.iter().map(|a| Some(od.min(a.ndim()))).collect();
                for &n in sizes {
                    check_config(prog, gens, &in_dims, n, &out_dims, &mut rng);
                }
            }
        }
    }
}

// ------------------------------------------------------------- program builders

fn i32a(shape: &[usize]) -> Aval {
    Aval::new(shape.to_vec(), DType::I32)
}

const ANY: Gen = Gen::F(-3.0, 3.0);
const POS: Gen = Gen::F(0.1, 3.0);
const INT: Gen = Gen::I(-5, 5);

// ------------------------------------------------------------- elementwise

#[test]
fn unary_f32_and_i32() {
    for &op in UnaryOp::ALL {
        let g = match op {
            UnaryOp::Asin | UnaryOp::Acos | UnaryOp::Atanh | UnaryOp::ErfInv => Gen::F(-0.9, 0.9),
            UnaryOp::Acosh => Gen::F(1.1, 3.0),
            _ if op.float_only() => POS,
            _ => ANY,
        };
        if op.accepts(DType::F32) {
            check(&single(Primitive::Unary(op), &[f32v(&[2, 3])]), &[g]);
            check(&single(Primitive::Unary(op), &[f32v(&[])]), &[g]);
        }
        if op.accepts(DType::I32) {
            check(&single(Primitive::Unary(op), &[i32a(&[4])]), &[INT]);
        }
    }
}

#[test]
fn binary_f32_and_i32() {
    for &op in BinaryOp::ALL {
        let g = if matches!(op, BinaryOp::Pow | BinaryOp::Polygamma) {
            POS
        } else {
            ANY
        };
        let p = Primitive::Binary(op);
        if op.accepts(DType::F32) {
            check(&single(p.clone(), &[f32v(&[2, 3]), f32v(&[2, 3])]), &[g, g]);
            // rank-0 operands against arrays, on either side
            check(&single(p.clone(), &[f32v(&[]), f32v(&[2, 3])]), &[g, g]);
            check(&single(p.clone(), &[f32v(&[3]), f32v(&[])]), &[g, g]);
            check(&single(p.clone(), &[f32v(&[]), f32v(&[])]), &[g, g]);
        }
        if op.accepts(DType::I32) {
            check(&single(p, &[i32a(&[2, 3]), i32a(&[2, 3])]), &[INT, INT]);
        }
    }
}

#[test]
fn binary_with_literal_operand() {
    let mut b = Builder::new();
    let x = b.add_input(f32v(&[2, 3])).unwrap();
    let y = b.binary(BinaryOp::Mul, Atom::Var(x), lit_f32(3.0)).unwrap();
    let z = b.binary(BinaryOp::Sub, lit_f32(1.0), y).unwrap();
    let prog = b.build(vec![z]).unwrap();
    check(&prog, &[ANY]);
    // The literal stays a literal: no broadcast in the batched program.
    let batched = batch_jaxpr(&prog, &[Some(1)], 5, &[Some(0)]).unwrap();
    let names: Vec<&str> = batched.jaxpr.eqns.iter().map(|e| e.prim.name()).collect();
    assert_eq!(names, ["mul", "sub", "transpose"]);
}

#[test]
fn compare_f32_and_i32() {
    for &op in CmpOp::ALL {
        let p = Primitive::Compare(op);
        check(
            &single(p.clone(), &[f32v(&[2, 3]), f32v(&[2, 3])]),
            &[ANY, ANY],
        );
        check(&single(p.clone(), &[f32v(&[]), f32v(&[4])]), &[ANY, ANY]);
        check(&single(p, &[i32a(&[3, 2]), i32a(&[3, 2])]), &[INT, INT]);
    }
}

#[test]
fn integer_pow() {
    for y in [2, 3, -2, 0] {
        check(
            &single(Primitive::IntegerPow(IntegerPow { y }), &[f32v(&[2, 3])]),
            &[POS],
        );
    }
    check(
        &single(Primitive::IntegerPow(IntegerPow { y: 3 }), &[i32a(&[4])]),
        &[INT],
    );
}

#[test]
fn select_n() {
    let cases2 = [Gen::B, ANY, ANY];
    check(
        &single(
            Primitive::SelectN(SelectN),
            &[
                Aval::new(vec![2, 3], DType::Bool),
                f32v(&[2, 3]),
                f32v(&[2, 3]),
            ],
        ),
        &cases2,
    );
    // scalar predicate against array cases
    check(
        &single(
            Primitive::SelectN(SelectN),
            &[Aval::new(vec![], DType::Bool), f32v(&[2, 3]), f32v(&[2, 3])],
        ),
        &cases2,
    );
    // all scalars
    check(
        &single(
            Primitive::SelectN(SelectN),
            &[Aval::new(vec![], DType::Bool), i32a(&[]), i32a(&[])],
        ),
        &[Gen::B, INT, INT],
    );
    // int32 predicate, three cases
    check(
        &single(
            Primitive::SelectN(SelectN),
            &[i32a(&[4]), i32a(&[4]), i32a(&[4]), i32a(&[4])],
        ),
        &[Gen::I(0, 2), INT, INT, INT],
    );
}

#[test]
fn convert_element_type() {
    let cv = |new_dtype| {
        Primitive::ConvertElementType(ConvertElementType {
            new_dtype,
            weak_type: false,
        })
    };
    check(&single(cv(DType::I32), &[f32v(&[2, 3])]), &[ANY]);
    check(&single(cv(DType::F32), &[i32a(&[3])]), &[INT]);
    check(&single(cv(DType::Bool), &[f32v(&[])]), &[ANY]);
}

// ------------------------------------------------------------- structural

#[test]
fn broadcast_in_dim() {
    check(
        &single(common::broadcast_in_dim(&[2, 3], &[1]), &[f32v(&[3])]),
        &[ANY],
    );
    check(
        &single(common::broadcast_in_dim(&[3, 4], &[0, 1]), &[f32v(&[3, 1])]),
        &[ANY],
    );
    check(
        &single(common::broadcast_in_dim(&[2, 2], &[]), &[f32v(&[])]),
        &[ANY],
    );
    check(
        &single(
            common::broadcast_in_dim(&[2, 4, 3], &[0, 2]),
            &[i32a(&[2, 3])],
        ),
        &[INT],
    );
    check(
        &single(
            common::broadcast_in_dim(&[5, 2, 4, 3], &[1, 3]),
            &[f32v(&[2, 3])],
        ),
        &[ANY],
    );
    // in_dim in the middle
    let prog = single(
        common::broadcast_in_dim(&[2, 4, 3], &[0, 2]),
        &[f32v(&[2, 3])],
    );
    for n in [0, 1, 5] {
        check_config(&prog, &[ANY], &[Some(1)], n, &[Some(2)], &mut Rng(7));
    }
}

#[test]
fn reshape() {
    check(&single(common::reshape(&[3, 2]), &[f32v(&[2, 3])]), &[ANY]);
    check(&single(common::reshape(&[6]), &[i32a(&[2, 3])]), &[INT]);
    check(&single(common::reshape(&[1, 1]), &[f32v(&[])]), &[ANY]);
    check(
        &single(common::reshape(&[2, 2, 3]), &[f32v(&[4, 3])]),
        &[ANY],
    );
}

#[test]
fn transpose() {
    check(
        &single(common::transpose(&[2, 0, 1]), &[f32v(&[2, 3, 4])]),
        &[ANY],
    );
    check(
        &single(common::transpose(&[1, 0]), &[i32a(&[2, 3])]),
        &[INT],
    );
    let prog = single(common::transpose(&[2, 0, 1]), &[f32v(&[2, 3, 4])]);
    for n in [1, 5] {
        check_config(&prog, &[ANY], &[Some(2)], n, &[Some(3)], &mut Rng(3));
    }
}

#[test]
fn squeeze() {
    check(
        &single(common::squeeze(&[1, 3]), &[f32v(&[2, 1, 3, 1])]),
        &[ANY],
    );
    check(
        &single(common::squeeze(&[3]), &[f32v(&[2, 1, 3, 1])]),
        &[ANY],
    );
    check(&single(common::squeeze(&[0]), &[i32a(&[1])]), &[INT]);
    let prog = single(common::squeeze(&[0, 2]), &[f32v(&[1, 3, 1])]);
    for n in [1, 5] {
        check_config(&prog, &[ANY], &[Some(2)], n, &[Some(0)], &mut Rng(3));
    }
}

#[test]
fn reductions() {
    for op in [ReduceOp::Sum, ReduceOp::Max] {
        for axes in [
            vec![0],
            vec![1],
            vec![0, 2],
            vec![2, 0],
            vec![],
            vec![0, 1, 2],
        ] {
            let p = Primitive::Reduce(Reduce {
                op,
                axes: axes.clone(),
            });
            check(&single(p.clone(), &[f32v(&[2, 3, 4])]), &[ANY]);
            check(&single(p.clone(), &[i32a(&[2, 3, 4])]), &[INT]);
            for d in 1..3 {
                check_config(
                    &single(p.clone(), &[f32v(&[2, 3, 4])]),
                    &[ANY],
                    &[Some(d)],
                    5,
                    &[Some(0)],
                    &mut Rng(9),
                );
            }
        }
    }
}

// ------------------------------------------------------------- dot_general

/// `check` of `dot_general(lc, rc, lb, rb)` over `[lhs, rhs]`, both drawn from `gen`.
fn check_dot(lc: &[usize], rc: &[usize], lb: &[usize], rb: &[usize], ins: [Aval; 2], gen: Gen) {
    check(&single(dot_general(lc, rc, lb, rb), &ins), &[gen, gen]);
}

#[test]
fn dot_general_matmul_and_friends() {
    // matmul
    check_dot(&[1], &[0], &[], &[], [f32v(&[2, 3]), f32v(&[3, 4])], ANY);
    check_dot(&[1], &[0], &[], &[], [i32a(&[2, 3]), i32a(&[3, 4])], INT);
    // transposed contraction: lhs [3,2] contract 0, rhs [4,3] contract 1
    check_dot(&[0], &[1], &[], &[], [f32v(&[3, 2]), f32v(&[4, 3])], ANY);
    // vector dot
    check_dot(&[0], &[0], &[], &[], [f32v(&[3]), f32v(&[3])], ANY);
    // outer product
    check_dot(&[], &[], &[], &[], [f32v(&[2]), f32v(&[3])], ANY);
    // matrix-vector
    check_dot(&[1], &[0], &[], &[], [f32v(&[2, 3]), f32v(&[3])], ANY);
}

#[test]
fn dot_general_with_existing_batch_dims() {
    let ins = [f32v(&[4, 2, 3]), f32v(&[4, 3, 5])];
    check_dot(&[2], &[1], &[0], &[0], ins, ANY);
    // batch dims not leading, two contracting dims
    let ins = [f32v(&[2, 3, 4, 5]), f32v(&[5, 4, 2, 6])];
    check_dot(&[0, 3], &[2, 0], &[2], &[1], ins, ANY);
    let ins = [i32a(&[2, 2, 3]), i32a(&[2, 3, 2])];
    check_dot(&[2], &[1], &[0], &[0], ins, INT);
}

#[test]
fn dot_general_one_side_batched_is_a_free_dim() {
    // only one side batched: a single dot_general, no loops, no broadcast
    let prog = single(
        dot_general(&[1], &[0], &[], &[]),
        &[f32v(&[2, 3]), f32v(&[3, 4])],
    );
    for (in_dims, natural) in [
        ([Some(0), None], 0),
        ([Some(2), None], 1),
        ([Some(1), None], 1),
        ([None, Some(0)], 1),
        ([None, Some(2)], 2),
        ([None, Some(1)], 1),
    ] {
        let batched = batch_jaxpr(&prog, &in_dims, 5, &[Some(natural)]).unwrap();
        let names: Vec<&str> = batched.jaxpr.eqns.iter().map(|e| e.prim.name()).collect();
        assert_eq!(names, ["dot_general"], "{in_dims:?}");
        for od in [0, 1, 2] {
            check_config(&prog, &[ANY, ANY], &in_dims, 5, &[Some(od)], &mut Rng(11));
        }
    }
    // both batched: a new dot_general batch dimension, output axis 0
    let batched = batch_jaxpr(&prog, &[Some(2), Some(1)], 5, &[Some(0)]).unwrap();
    let names: Vec<&str> = batched.jaxpr.eqns.iter().map(|e| e.prim.name()).collect();
    assert_eq!(names, ["dot_general"]);
    check_config(
        &prog,
        &[ANY, ANY],
        &[Some(2), Some(1)],
        5,
        &[Some(2)],
        &mut Rng(12),
    );
}

// ------------------------------------------------------------- iota, pjit, programs

#[test]
fn iota_is_never_batched() {
    let mut b = Builder::new();
    let x = b.add_input(i32a(&[3])).unwrap();
    let io = b.add_eqn1(iota(DType::I32, &[3], 0), vec![]).unwrap();
    let y = b.binary(BinaryOp::Add, Atom::Var(x), io.clone()).unwrap();
    let prog = b.build(vec![y]).unwrap();
    check(&prog, &[INT]);
    let batched = batch_jaxpr(&prog, &[Some(0)], 5, &[Some(0)]).unwrap();
    let iota_out = &batched.jaxpr.eqns[0];
    assert_eq!(iota_out.prim.name(), "iota");
    assert_eq!(
        batched.jaxpr.avals[iota_out.outputs[0].index()].shape,
        vec![3]
    );

    // A program of no inputs: its output is broadcast along the mapped axis.
    let prog = single(iota(DType::F32, &[2, 3], 1), &[]);
    for (od, shape) in [(0, vec![4, 2, 3]), (1, vec![2, 4, 3]), (2, vec![2, 3, 4])] {
        let batched = batch_jaxpr(&prog, &[], 4, &[Some(od)]).unwrap();
        let out = eval_closed(&batched, &[]).unwrap();
        let base = eval_closed(&prog, &[]).unwrap();
        let want = stack(&vec![base[0].clone(); 4], od, &prog.out_avals().unwrap()[0]);
        assert_eq!(out[0].shape(), shape.as_slice());
        assert_close(&out[0], &want, "iota broadcast");
    }
}

/// `sin(x) * y, y + 1` as a closed jaxpr.
fn sub_program() -> ClosedJaxpr {
    let mut b = Builder::new();
    let x = b.add_input(f32v(&[2, 3])).unwrap();
    let y = b.add_input(f32v(&[2, 3])).unwrap();
    let s = b.unary(UnaryOp::Sin, Atom::Var(x)).unwrap();
    let m = b.binary(BinaryOp::Mul, s, Atom::Var(y)).unwrap();
    let z = b.binary(BinaryOp::Add, Atom::Var(y), lit_f32(1.0)).unwrap();
    b.build(vec![m, z]).unwrap()
}

/// The shape of output `k` of the first `prim_name` equation of `j`.
fn out_shape<'a>(j: &'a ClosedJaxpr, prim_name: &str, k: usize) -> &'a [usize] {
    let eqn = j
        .jaxpr
        .eqns
        .iter()
        .find(|e| e.prim.name() == prim_name)
        .unwrap();
    &j.jaxpr.avals[eqn.outputs[k].index()].shape
}

#[test]
fn pjit_and_nested_pjit() {
    // outer(x, y) = pjit(sub)(transpose(x), y) then reduce_sum of the first output
    let mut b = Builder::new();
    let x = b.add_input(f32v(&[3, 2])).unwrap();
    let y = b.add_input(f32v(&[2, 3])).unwrap();
    let xt = b
        .add_eqn1(common::transpose(&[1, 0]), vec![Atom::Var(x)])
        .unwrap();
    let outs = call(&mut b, sub_program(), vec![xt, Atom::Var(y)]);
    let r = b
        .add_eqn1(reduce(ReduceOp::Sum, &[1]), vec![outs[0].clone()])
        .unwrap();
    let level1 = b.build(vec![r, outs[1].clone()]).unwrap();
    check(&level1, &[ANY, ANY]);

    // Batching only x leaves the second pjit output (y + 1) unbatched inside.
    let batched = batch_jaxpr(&level1, &[Some(0), None], 5, &[Some(0), None]).unwrap();
    assert_eq!(out_shape(&batched, "pjit", 1), [2, 3]);

    // nested: outer2(a, b) = pjit(level1)(a, b) with a mul afterwards
    let mut b = Builder::new();
    let a = b.add_input(f32v(&[3, 2])).unwrap();
    let c = b.add_input(f32v(&[2, 3])).unwrap();
    let outs = call(&mut b, level1, vec![Atom::Var(a), Atom::Var(c)]);
    let m = b
        .binary(BinaryOp::Mul, outs[1].clone(), outs[1].clone())
        .unwrap();
    let level2 = b.build(vec![outs[0].clone(), m]).unwrap();
    check(&level2, &[ANY, ANY]);
}

#[test]
fn consts_stay_consts() {
    let mut b = Builder::new();
    let c = b
        .add_const(
            Arc::new(HostArray::new(vec![3], Buffer::F32(vec![1.0, -2.0, 0.5].into())).unwrap()),
            false,
        )
        .unwrap();
    let x = b.add_input(f32v(&[2, 3])).unwrap();
    let y = b.binary(BinaryOp::Mul, Atom::Var(x), Atom::Var(x)).unwrap();
    let cb = b
        .add_eqn1(common::broadcast_in_dim(&[2, 3], &[1]), vec![Atom::Var(c)])
        .unwrap();
    let z = b.binary(BinaryOp::Add, y, cb).unwrap();
    let prog = b.build(vec![z]).unwrap();
    check(&prog, &[ANY]);
    let batched = batch_jaxpr(&prog, &[Some(0)], 5, &[Some(0)]).unwrap();
    assert_eq!(batched.jaxpr.constvars.len(), 1);
    assert_eq!(batched.consts, prog.consts);
}

/// `(sin x + y, cos y)`: the second output does not depend on x.
fn two_outputs() -> ClosedJaxpr {
    let mut b = Builder::new();
    let x = b.add_input(f32v(&[2, 3])).unwrap();
    let y = b.add_input(f32v(&[2, 3])).unwrap();
    let s = b.unary(UnaryOp::Sin, Atom::Var(x)).unwrap();
    let cy = b.unary(UnaryOp::Cos, Atom::Var(y)).unwrap();
    let z = b.binary(BinaryOp::Add, s, Atom::Var(y)).unwrap();
    b.build(vec![z, cy]).unwrap()
}

#[test]
fn unbatched_output_broadcast_or_kept() {
    let prog = two_outputs();
    check(&prog, &[ANY, ANY]);
    let x = Arc::new(Rng(1).array(ANY, &[5, 2, 3]));
    let y = Arc::new(Rng(2).array(ANY, &[2, 3]));
    let base_cos = eval_closed(
        &single(Primitive::Unary(UnaryOp::Cos), &[f32v(&[2, 3])]),
        std::slice::from_ref(&y),
    )
    .unwrap()
    .remove(0);

    // out_dims Some: the unbatched output is broadcast
    for od in [0, 1, 2] {
        let batched = batch_jaxpr(&prog, &[Some(0), None], 5, &[Some(0), Some(od)]).unwrap();
        let out = eval_closed(&batched, &[x.clone(), y.clone()]).unwrap();
        let want = stack(&vec![base_cos.clone(); 5], od, &f32v(&[2, 3]));
        assert_close(&out[1], &want, "broadcast output");
    }

    // out_dims None: the output stays unbatched, and cos is computed once on y
    let batched = batch_jaxpr(&prog, &[Some(0), None], 5, &[Some(0), None]).unwrap();
    let out = eval_closed(&batched, &[x.clone(), y.clone()]).unwrap();
    assert_close(&out[1], &base_cos, "unbatched output");
    assert_eq!(out_shape(&batched, "cos", 0), [2, 3]);
    // y is broadcast exactly once (for the add), never for cos
    let bcasts = batched
        .jaxpr
        .eqns
        .iter()
        .filter(|e| e.prim.name() == "broadcast_in_dim")
        .count();
    assert_eq!(bcasts, 1);

    // An input passed straight through, and a literal output.
    let mut b = Builder::new();
    let x = b.add_input(f32v(&[2])).unwrap();
    let prog = b.build(vec![Atom::Var(x), lit_f32(2.5)]).unwrap();
    let batched = batch_jaxpr(&prog, &[Some(0)], 3, &[Some(1), Some(0)]).unwrap();
    let xs = Arc::new(Rng(4).array(ANY, &[3, 2]));
    let out = eval_closed(&batched, std::slice::from_ref(&xs)).unwrap();
    assert_eq!(out[0].shape(), &[2, 3]);
    assert_close(&out[0], &take_t(&xs), "passthrough moved");
    assert_close(
        &out[1],
        &HostArray::new(vec![3], Buffer::F32(vec![2.5; 3].into())).unwrap(),
        "literal broadcast",
    );
    let batched = batch_jaxpr(&prog, &[None], 3, &[None, None]).unwrap();
    assert_eq!(batched.jaxpr.eqns.len(), 0);
}

fn take_t(a: &HostArray) -> HostArray {
    let parts: Vec<Arc<HostArray>> = (0..a.shape()[0]).map(|k| Arc::new(take(a, 0, k))).collect();
    stack(&parts, 1, &f32v(&a.shape()[1..]))
}

#[test]
fn mapped_output_with_out_axes_none_is_an_error() {
    let prog = two_outputs();
    let err = batch_jaxpr(&prog, &[Some(0), None], 5, &[None, Some(0)]).unwrap_err();
    match &err {
        Error::InvalidArgument(m) => {
            assert!(
                m.contains("vmap has mapped output but out_axes is None"),
                "{m}"
            );
            assert!(m.contains("output 0"), "{m}");
        }
        other => panic!("unexpected error {other:?}"),
    }
    // batching y makes both outputs mapped
    let err = batch_jaxpr(&prog, &[None, Some(1)], 5, &[Some(0), None]).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidArgument(m) if m.contains("output 1")),
        "{err}"
    );
}

#[test]
fn bad_axes_are_errors() {
    let prog = two_outputs();
    assert!(matches!(
        batch_jaxpr(&prog, &[Some(3), None], 5, &[Some(0), Some(0)]),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        batch_jaxpr(&prog, &[Some(0), None], 5, &[Some(3), Some(0)]),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        batch_jaxpr(&prog, &[Some(0)], 5, &[Some(0), Some(0)]),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        batch_jaxpr(&prog, &[Some(0), None], 5, &[Some(0)]),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn mixed_program() {
    // f(x, y, s) = reduce_max(reshape(transpose(x) * y, (6, 2)) + s, axes 1)
    //              , dot(x, y) squeezed
    let mut b = Builder::new();
    let x = b.add_input(f32v(&[3, 4])).unwrap();
    let y = b.add_input(f32v(&[4, 3])).unwrap();
    let s = b.add_input(f32v(&[])).unwrap();
    let xt = b
        .add_eqn1(common::transpose(&[1, 0]), vec![Atom::Var(x)])
        .unwrap();
    let p = b.binary(BinaryOp::Mul, xt, Atom::Var(y)).unwrap();
    let r = b.add_eqn1(common::reshape(&[6, 2]), vec![p]).unwrap();
    let a = b.binary(BinaryOp::Add, r, Atom::Var(s)).unwrap();
    let m = b.add_eqn1(reduce(ReduceOp::Max, &[1]), vec![a]).unwrap();
    let d = b
        .add_eqn1(
            dot_general(&[1], &[0], &[], &[]),
            vec![Atom::Var(x), Atom::Var(y)],
        )
        .unwrap();
    let d1 = b.add_eqn1(common::reshape(&[1, 9]), vec![d]).unwrap();
    let sq = b.add_eqn1(common::squeeze(&[0]), vec![d1]).unwrap();
    let prog = b.build(vec![m, sq]).unwrap();
    check(&prog, &[ANY, ANY, ANY]);
}

#[test]
fn source_info_is_kept() {
    let add = Primitive::Binary(BinaryOp::Add);
    let prog = common::build(&[f32v(&[2, 3]), f32v(&[2, 3])], |b, xy| {
        let z = b
            .add_eqn(add, xy.to_vec(), Some(Arc::from("user.py:3 (f)")))
            .unwrap();
        vec![Atom::Var(z[0])]
    });
    // x at 0, y at 1: the rule transposes y then adds; both keep the line,
    // and their name stack records the transform as JAX's (`vmap()`).
    let batched = batch_jaxpr(&prog, &[Some(0), Some(2)], 5, &[Some(0)]).unwrap();
    assert_eq!(batched.jaxpr.eqns.len(), 2);
    for e in &batched.jaxpr.eqns {
        let text = e.source.0.as_deref().unwrap_or("");
        let location = text
            .split(microjax::ir::display::NAME_STACK_SEPARATOR)
            .next();
        assert_eq!(location, Some("user.py:3 (f)"));
        assert_eq!(microjax::ir::display::name_stack(&e.source.0), "vmap()");
    }
}

// -------------------- arg, scans, stop_gradient, is_finite, round, clamp

#[test]
fn arg_scans_rounding_and_clamp_batch() {
    use microjax::prims::{ArgOp, CumOp, RoundingMethod};
    for axis in [0, 1] {
        for op in [ArgOp::Argmax, ArgOp::Argmin] {
            let p = Primitive::Arg(ArgReduce {
                op,
                axis,
                index_dtype: DType::I32,
            });
            check(&single(p, &[f32v(&[2, 3])]), &[ANY]);
        }
        for op in [CumOp::Sum, CumOp::Prod, CumOp::Max, CumOp::Logsumexp] {
            for reverse in [false, true] {
                let p = Primitive::Cumulative(Cumulative { op, axis, reverse });
                check(&single(p, &[f32v(&[2, 3])]), &[ANY]);
            }
        }
    }
    check(
        &single(Primitive::StopGradient(StopGradient), &[f32v(&[2, 3])]),
        &[ANY],
    );
    check(
        &single(Primitive::IsFinite(IsFinite), &[f32v(&[4])]),
        &[ANY],
    );
    check(
        &single(
            Primitive::Round(Round {
                rounding_method: RoundingMethod::ToNearestEven,
            }),
            &[f32v(&[4])],
        ),
        &[ANY],
    );
    check(
        &single(
            Primitive::Clamp(Clamp),
            &[f32v(&[]), f32v(&[2, 3]), f32v(&[])],
        ),
        &[ANY, ANY, ANY],
    );
    check(
        &single(
            Primitive::Clamp(Clamp),
            &[f32v(&[3]), f32v(&[3]), f32v(&[])],
        ),
        &[ANY, ANY, ANY],
    );
    check(
        &single(Primitive::Clamp(Clamp), &[f32v(&[]), f32v(&[]), f32v(&[])]),
        &[ANY, ANY, ANY],
    );
}

// ------------------------------------------------------------- custom_vjp_call

/// custom_vjp_call(f = sin) with fwd/bwd written by hand (bwd(res, ct) = 2 res ct,
/// a deliberately different rule), batched against the per-example oracle.
fn custom_vjp_sin() -> ClosedJaxpr {
    use microjax::prims::custom::{CustomCall, VjpCall};
    let call_j = single(Primitive::Unary(UnaryOp::Sin), &[f32v(&[3])]);
    let mut b = Builder::new();
    let x = Atom::Var(b.add_input(f32v(&[3])).unwrap());
    let s = b.unary(UnaryOp::Sin, x.clone()).unwrap();
    let fwd = b.build(vec![s, x]).unwrap();
    let mut b = Builder::new();
    let r = Atom::Var(b.add_input(f32v(&[3])).unwrap());
    let ct = Atom::Var(b.add_input(f32v(&[3])).unwrap());
    let t = b.binary(BinaryOp::Mul, r, ct).unwrap();
    let t2 = b.binary(BinaryOp::Add, t.clone(), t).unwrap();
    let bwd = b.build(vec![t2]).unwrap();
    single(
        Primitive::Custom(CustomCall::Vjp(VjpCall {
            call: Arc::new(call_j),
            fwd: Arc::new(fwd),
            bwd: Arc::new(bwd),
            num_res: 1,
            name: "f".into(),
        })),
        &[f32v(&[3])],
    )
}

#[test]
fn custom_vjp_call_batches_with_its_rules() {
    let prog = custom_vjp_sin();
    check(&prog, &[ANY]);
    // The VJP of the batched call uses the batched bwd: 2 * x * ct per example.
    let batched = batch_jaxpr(&prog, &[Some(1)], 4, &[Some(1)]).unwrap();
    let vjp = vjp_jaxpr(&batched, &[true]).unwrap();
    let x = arange(&[3, 4]);
    let fo = eval_closed(&vjp.fwd, std::slice::from_ref(&x)).unwrap();
    let mut bwd_in = fo[1..].to_vec();
    bwd_in.push(Arc::new(
        HostArray::new(vec![3, 4], Buffer::F32(vec![1.0; 12].into())).unwrap(),
    ));
    let g = eval_closed(&vjp.bwd, &bwd_in).unwrap();
    let want: Vec<f32> = f32s(&x).iter().map(|v| 2.0 * v).collect();
    assert_eq!(f32s(&g[0]), want);
}
