//! Determinism (DESIGN.md "Determinism"): the same binary on the same CPU
//! gives bit-identical results at any thread count. Each program of the
//! suite (an MLP train step, a large elementwise chain, reductions, a scan,
//! a convolution, linear algebra) runs through the compiled executor and
//! the reference interpreter inside rayon pools of 1, 2 and 4 threads, twice
//! each; every run must give the same bits as the first. Sizes are above the
//! threading thresholds (65,536 elements for fused groups, 128³ flops for
//! GEMM) so the threaded paths run.
//!
//! `Determinism::Portable` (the `portable_*` tests): the same programs give
//! the same bits at 1, 2 and 4 threads and at every SIMD level the loops can
//! be pinned to (the native one capped at AVX2, forced AVX2, forced Scalar:
//! the code paths of other x86-64 CPUs); its matmul is the k-ordered sum;
//! an exported portable program runs in that mode from `Program::run`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use microjax::exec::compiled::Compiled;
use microjax::exec::interp::{eval_closed, eval_closed_in};
use microjax::exec::{Determinism, ExecCtx};
use microjax::export::Program;
use microjax::prims::conv::ConvParams;
use microjax::prims::kernel::vmath::{with_simd_level, SimdLevel};
use microjax::prims::linalg::LinalgOp;
use microjax::prims::{ConvertElementType, Cumulative, Iota, Pjit, Reduce};
use microjax::transforms::vjp_jaxpr;
use microjax::{
    Atom, BinaryOp, Buffer, Builder, ClosedJaxpr, DType, HostArray, Primitive, ReduceOp, UnaryOp,
};
use std::sync::Arc;

use crate::common;
use common::transpose;
use common::*;

fn matmul(b: &mut Builder, x: Atom, w: Atom, rank: usize) -> Atom {
    b.add_eqn1(dot_general(&[rank - 1], &[0], &[], &[]), vec![x, w])
        .unwrap()
}

fn reduce(b: &mut Builder, op: ReduceOp, x: Atom, axes: Vec<usize>) -> Atom {
    b.add_eqn1(Primitive::Reduce(Reduce { op, axes }), vec![x])
        .unwrap()
}

fn call(b: &mut Builder, prog: ClosedJaxpr, args: Vec<Atom>) -> Vec<Atom> {
    let p = Primitive::Pjit(Pjit {
        jaxpr: Arc::new(prog),
        name: "f".into(),
    });
    let outs = b.add_eqn(p, args, None).unwrap();
    outs.into_iter().map(Atom::Var).collect()
}

/// `(w1, w2, x, y) -> sum((tanh(x @ w1) @ w2 - y)^2)`.
fn mlp_loss(n: usize, d: usize, h: usize, o: usize) -> ClosedJaxpr {
    let mut b = Builder::new();
    let w1 = input(&mut b, &[d, h]);
    let w2 = input(&mut b, &[h, o]);
    let x = input(&mut b, &[n, d]);
    let y = input(&mut b, &[n, o]);
    let z = matmul(&mut b, x, w1, 2);
    let a = b.unary(UnaryOp::Tanh, z).unwrap();
    let p = matmul(&mut b, a, w2, 2);
    let r = b.binary(BinaryOp::Sub, p, y).unwrap();
    let r2 = b.binary(BinaryOp::Mul, r.clone(), r).unwrap();
    let l = reduce(&mut b, ReduceOp::Sum, r2, vec![0, 1]);
    b.build(vec![l]).unwrap()
}

/// One SGD step of the MLP: `(w1, w2, x, y) -> (loss, w1 - lr*g1, w2 - lr*g2)`,
/// the forward and backward programs of `vjp` called as `pjit`s.
fn mlp_train_step() -> (ClosedJaxpr, Vec<Arc<HostArray>>) {
    let (n, d, h, o) = (256, 128, 256, 16);
    let loss = mlp_loss(n, d, h, o);
    let vjp = vjp_jaxpr(&loss, &[true, true, false, false]).unwrap();
    let mut b = Builder::new();
    let ins: Vec<Atom> = [[d, h], [h, o], [n, d], [n, o]]
        .iter()
        .map(|s| input(&mut b, s))
        .collect();
    let fwd = call(&mut b, vjp.fwd.clone(), ins.clone());
    let mut bargs = fwd[1..].to_vec();
    bargs.push(lit(1.0));
    let grads = call(&mut b, vjp.bwd.clone(), bargs);
    let mut outs = vec![fwd[0].clone()];
    for (w, g) in ins.iter().zip(&grads) {
        let step = b.binary(BinaryOp::Mul, g.clone(), lit(0.01)).unwrap();
        outs.push(b.binary(BinaryOp::Sub, w.clone(), step).unwrap());
    }
    let args = vec![
        data_in(&[d, h], 1, 0.1),
        data_in(&[h, o], 2, 0.1),
        data_in(&[n, d], 3, 1.0),
        data_in(&[n, o], 4, 1.0),
    ];
    (b.build(outs).unwrap(), args)
}

/// `tanh(x*2+1)*sin(x) - exp(-x*x)` plus a broadcast row, on f32[m, k].
fn big_elementwise() -> (ClosedJaxpr, Vec<Arc<HostArray>>) {
    let (m, k) = (301, 1003);
    let mut b = Builder::new();
    let x = input(&mut b, &[m, k]);
    let row = input(&mut b, &[k]);
    let d = tanh_sin_exp(&mut b, x);
    let r = broadcast(&mut b, row, vec![m, k], vec![1]);
    let out = b.binary(BinaryOp::Add, d, r).unwrap();
    let args = vec![data_in(&[m, k], 5, 3.0), data_in(&[k], 6, 1.0)];
    (b.build(vec![out]).unwrap(), args)
}

/// Sums, maxima and a mean-of-squares over every axis combination of a
/// large f32 array, and a cumulative sum.
fn reductions() -> (ClosedJaxpr, Vec<Arc<HostArray>>) {
    let shape = [97, 65, 33];
    let mut b = Builder::new();
    let x = input(&mut b, &shape);
    let mut outs = Vec::new();
    for axes in [vec![0, 1, 2], vec![0], vec![1], vec![2], vec![0, 2]] {
        outs.push(reduce(&mut b, ReduceOp::Sum, x.clone(), axes.clone()));
        outs.push(reduce(&mut b, ReduceOp::Max, x.clone(), axes));
    }
    let sq = b.binary(BinaryOp::Mul, x.clone(), x.clone()).unwrap();
    let ss = reduce(&mut b, ReduceOp::Sum, sq, vec![0, 1, 2]);
    outs.push(b.binary(BinaryOp::Div, ss, lit(208_065.0)).unwrap());
    outs.push(
        b.add_eqn1(
            Primitive::Cumulative(Cumulative {
                op: microjax::prims::CumOp::Sum,
                axis: 0,
                reverse: false,
            }),
            vec![x],
        )
        .unwrap(),
    );
    (b.build(outs).unwrap(), vec![data_in(&shape, 7, 2.0)])
}

/// A scan of 16 steps with a large carry: `c -> sin(c) * x_t + c`, ys = c.
fn scan() -> (ClosedJaxpr, Vec<Arc<HostArray>>) {
    let (t, n) = (16, 70_000);
    let mut body = Builder::new();
    let c = input(&mut body, &[n]);
    let x = input(&mut body, &[n]);
    let s = body.unary(UnaryOp::Sin, c.clone()).unwrap();
    let sx = body.binary(BinaryOp::Mul, s, x).unwrap();
    let c2 = body.binary(BinaryOp::Add, sx, c).unwrap();
    let total = reduce(&mut body, ReduceOp::Sum, c2.clone(), vec![0]);
    let body = body.build(vec![c2, total]).unwrap();
    let mut b = Builder::new();
    let c0 = input(&mut b, &[n]);
    let xs = input(&mut b, &[t, n]);
    let outs = common::scan(&mut b, body, t, false, (0, 1), vec![c0, xs]);
    let prog = b.build(outs).unwrap();
    (prog, vec![data_in(&[n], 8, 1.0), data_in(&[t, n], 9, 0.5)])
}

/// A 2-D convolution (im2col + GEMM) followed by tanh and its sum.
fn conv() -> (ClosedJaxpr, Vec<Arc<HostArray>>) {
    let (lhs, rhs) = ([8, 16, 34, 34], [32, 16, 3, 3]);
    let mut b = Builder::new();
    let x = input(&mut b, &lhs);
    let w = input(&mut b, &rhs);
    let mut p = ConvParams::simple(2);
    p.padding = vec![(1, 1), (0, 0)];
    let y = b
        .add_eqn1(Primitive::Conv(Box::new(p)), vec![x, w])
        .unwrap();
    let t = b.unary(UnaryOp::Tanh, y.clone()).unwrap();
    let s = reduce(&mut b, ReduceOp::Sum, t, vec![0, 1, 2, 3]);
    let args = vec![data_in(&lhs, 10, 1.0), data_in(&rhs, 11, 0.2)];
    (b.build(vec![y, s]).unwrap(), args)
}

/// A convolution whose window is wider than its output (row tiles over
/// several column chunks, summed in chunk order).
fn wide_window_conv() -> (ClosedJaxpr, Vec<Arc<HostArray>>) {
    let (lhs, rhs) = ([4, 16, 40, 40], [8, 16, 36, 36]);
    let mut b = Builder::new();
    let x = input(&mut b, &lhs);
    let w = input(&mut b, &rhs);
    let mut p = ConvParams::simple(2);
    p.padding = vec![(1, 1), (1, 1)];
    let y = b
        .add_eqn1(Primitive::Conv(Box::new(p)), vec![x, w])
        .unwrap();
    let args = vec![data_in(&lhs, 12, 1.0), data_in(&rhs, 13, 0.2)];
    (b.build(vec![y]).unwrap(), args)
}

/// Cholesky of `a aᵀ + n I`, a triangular solve with it, QR and eigh.
fn linalg() -> (ClosedJaxpr, Vec<Arc<HostArray>>) {
    let n = 48;
    let mut b = Builder::new();
    let a = input(&mut b, &[n, n]);
    let at = b.add_eqn1(transpose(&[1, 0]), vec![a.clone()]).unwrap();
    let aat = matmul(&mut b, a.clone(), at, 2);
    let iota = |b: &mut Builder, dimension| {
        b.add_eqn1(
            Primitive::Iota(Iota {
                dtype: DType::I32,
                shape: vec![n, n],
                dimension,
            }),
            vec![],
        )
        .unwrap()
    };
    let (r, c) = (iota(&mut b, 0), iota(&mut b, 1));
    let eye_b = b
        .add_eqn1(Primitive::Compare(microjax::CmpOp::Eq), vec![r, c])
        .unwrap();
    let eye = b
        .add_eqn1(
            Primitive::ConvertElementType(ConvertElementType {
                new_dtype: DType::F32,
                weak_type: false,
            }),
            vec![eye_b],
        )
        .unwrap();
    let ne = b.binary(BinaryOp::Mul, eye, lit(n as f64)).unwrap();
    let spd = b.binary(BinaryOp::Add, aat, ne).unwrap();
    let l = b
        .add_eqn1(Primitive::Linalg(LinalgOp::Cholesky), vec![spd.clone()])
        .unwrap();
    let solve = LinalgOp::TriangularSolve {
        left_side: true,
        lower: true,
        transpose_a: false,
        conjugate_a: false,
        unit_diagonal: false,
    };
    let x = b
        .add_eqn1(Primitive::Linalg(solve), vec![l.clone(), a.clone()])
        .unwrap();
    let mut outs = vec![l, x];
    for op in [
        LinalgOp::Qr {
            full_matrices: false,
        },
        LinalgOp::Eigh {
            lower: true,
            sort_eigenvalues: true,
        },
    ] {
        let arg = if matches!(op, LinalgOp::Qr { .. }) {
            a.clone()
        } else {
            spd.clone()
        };
        let o = b.add_eqn(Primitive::Linalg(op), vec![arg], None).unwrap();
        outs.extend(o.into_iter().map(Atom::Var));
    }
    (b.build(outs).unwrap(), vec![data_in(&[n, n], 12, 1.0)])
}

/// The outputs' bits (buffers compare bitwise for floats).
type Bits = Vec<(Vec<usize>, Buffer)>;

fn bits(outs: Vec<Arc<HostArray>>) -> Bits {
    outs.iter()
        .map(|a| (a.shape().to_vec(), a.buffer().clone()))
        .collect()
}

fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

/// Runs `prog` compiled and interpreted with 1, 2 and 4 threads, twice
/// each, and asserts every run gives the bits of the first.
fn assert_deterministic(name: &str, (prog, args): (ClosedJaxpr, Vec<Arc<HostArray>>)) {
    let plan = Compiled::new(Arc::new(prog.clone())).unwrap();
    let mut first: Option<Bits> = None;
    for threads in [1usize, 2, 4] {
        for run in 0..2 {
            let compiled = bits(in_pool(threads, || plan.run(&args).unwrap()));
            let interp = bits(in_pool(threads, || eval_closed(&prog, &args).unwrap()));
            for (how, got) in [("compiled", compiled), ("interpreted", interp)] {
                match &first {
                    None => first = Some(got),
                    Some(want) => {
                        for (k, (g, w)) in got.iter().zip(want).enumerate() {
                            assert!(
                                g == w,
                                "{name}: output {k} of the {how} run {run} with {threads} \
                                 threads differs from the first run (1 thread, compiled)"
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn mlp_train_step_is_bit_identical_at_any_thread_count() {
    assert_deterministic("mlp train step", mlp_train_step());
}

#[test]
fn large_elementwise_is_bit_identical_at_any_thread_count() {
    assert_deterministic("elementwise", big_elementwise());
}

#[test]
fn reductions_are_bit_identical_at_any_thread_count() {
    assert_deterministic("reductions", reductions());
}

#[test]
fn scan_is_bit_identical_at_any_thread_count() {
    assert_deterministic("scan", scan());
}

#[test]
fn conv_is_bit_identical_at_any_thread_count() {
    assert_deterministic("conv", conv());
}

#[test]
fn wide_window_conv_is_bit_identical_at_any_thread_count() {
    assert_deterministic("wide-window conv", wide_window_conv());
}

#[test]
fn linalg_is_bit_identical_at_any_thread_count() {
    assert_deterministic("linalg", linalg());
}

/// Runs `prog` (compiled or interpreted) in portable mode inside a pool of
/// `threads`, with the SIMD level forced to `level` (None: the native one).
fn portable_run(
    prog: &ClosedJaxpr, plan: &Compiled, args: &[Arc<HostArray>], threads: usize,
    level: Option<SimdLevel>, compiled: bool,
) -> Bits {
    let run = || {
        let ctx = ExecCtx::current_default().with_determinism(Determinism::Portable);
        if compiled {
            plan.run_in(&ctx, args).unwrap()
        } else {
            eval_closed_in(&ctx, prog, args).unwrap()
        }
    };
    bits(in_pool(threads, || match level {
        Some(l) => with_simd_level(l, run),
        None => run(),
    }))
}

/// Portable mode: compiled and interpreted runs at 1, 2 and 4 threads and
/// at the native (capped), AVX2 and Scalar levels give the bits of the
/// first; an exported portable program run by `Program::run` (outside any
/// mode scope) gives them too.
fn assert_portable(name: &str, (prog, args): (ClosedJaxpr, Vec<Arc<HostArray>>)) {
    let plan = Compiled::new(Arc::new(prog.clone())).unwrap();
    let want = portable_run(&prog, &plan, &args, 1, None, true);
    let cases = [
        (1, Some(SimdLevel::Avx2), true),
        (2, None, true),
        (2, Some(SimdLevel::Avx2), false),
        (4, Some(SimdLevel::Scalar), true),
        (1, None, false),
    ];
    for (threads, level, compiled) in cases {
        let got = portable_run(&prog, &plan, &args, threads, level, compiled);
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(
                g == w,
                "{name}: portable output {k} with {threads} threads, level {level:?}, \
                 compiled {compiled} differs from the native 1-thread compiled run"
            );
        }
    }
    let bytes = Program::to_bytes(&prog, Determinism::Portable, "").unwrap();
    let loaded = Program::from_bytes(&bytes).unwrap();
    assert_eq!(loaded.determinism(), Determinism::Portable);
    let inputs: Vec<HostArray> = args.iter().map(|a| (**a).clone()).collect();
    let outs = in_pool(2, || loaded.run(&inputs).unwrap());
    let got = bits(outs.into_iter().map(Arc::new).collect());
    assert!(got == want, "{name}: the exported portable program differs");
}

#[test]
fn portable_mlp_train_step_is_the_same_at_every_level_and_thread_count() {
    assert_portable("mlp train step", mlp_train_step());
}

#[test]
fn portable_elementwise_is_the_same_at_every_level_and_thread_count() {
    assert_portable("elementwise", big_elementwise());
}

#[test]
fn portable_reductions_are_the_same_at_every_level_and_thread_count() {
    assert_portable("reductions", reductions());
}

#[test]
fn portable_scan_is_the_same_at_every_level_and_thread_count() {
    assert_portable("scan", scan());
}

#[test]
fn portable_conv_is_the_same_at_every_level_and_thread_count() {
    assert_portable("conv", conv());
}

#[test]
fn portable_linalg_is_the_same_at_every_level_and_thread_count() {
    assert_portable("linalg", linalg());
}

/// The portable matmul is the k-ordered sum `0 + a0*x0 + a1*x1 + ...` with
/// separate multiplies and adds (what any x86-64 CPU computes the same), on
/// sizes that default mode sends to `gemm`, with a batch axis and a
/// partial column panel.
#[test]
fn portable_matmul_is_the_k_ordered_sum() {
    let (bt, m, k, n) = (2usize, 70usize, 300usize, 261usize);
    let mut b = Builder::new();
    let x = input(&mut b, &[bt, m, k]);
    let w = input(&mut b, &[bt, k, n]);
    let out = b
        .add_eqn1(dot_general(&[2], &[1], &[0], &[0]), vec![x, w])
        .unwrap();
    let prog = b.build(vec![out]).unwrap();
    let args = vec![data_in(&[bt, m, k], 21, 1.0), data_in(&[bt, k, n], 22, 1.0)];
    let (Buffer::F32(l), Buffer::F32(r)) = (args[0].buffer(), args[1].buffer()) else {
        panic!("f32 inputs")
    };
    let mut want = vec![0f32; bt * m * n];
    for bi in 0..bt {
        for i in 0..m {
            for j in 0..n {
                let mut acc = 0f32;
                for kk in 0..k {
                    acc += l[(bi * m + i) * k + kk] * r[(bi * k + kk) * n + j];
                }
                want[(bi * m + i) * n + j] = acc;
            }
        }
    }
    let plan = Compiled::new(Arc::new(prog.clone())).unwrap();
    for threads in [1, 2] {
        let got = portable_run(&prog, &plan, &args, threads, None, true);
        assert!(
            got[0].1 == Buffer::F32(want.clone().into()),
            "{threads} threads: not the k-ordered sum"
        );
    }
}

/// `op` applied to fresh inputs of `avals`, every output returned.
fn single_op(op: LinalgOp, avals: &[microjax::Aval]) -> ClosedJaxpr {
    let mut b = Builder::new();
    let ins: Vec<Atom> = avals
        .iter()
        .map(|a| Atom::Var(b.add_input(a.clone()).unwrap()))
        .collect();
    let outs = b.add_eqn(Primitive::Linalg(op), ins, None).unwrap();
    b.build(outs.into_iter().map(Atom::Var).collect()).unwrap()
}

/// `x` of `shape` in `dtype`, and the symmetric positive definite
/// `x xᵀ / n + I` of its first `n x n` block.
fn linalg_inputs(n: usize, dtype: DType, seed: u32) -> (Arc<HostArray>, Arc<HostArray>) {
    let x = data_in(&[n, n], seed, 1.0);
    let Buffer::F32(v) = x.buffer() else {
        unreachable!()
    };
    let v: Vec<f64> = v.iter().map(|&x| f64::from(x)).collect();
    let mut spd = vec![0.0f64; n * n];
    for i in 0..n {
        for j in 0..n {
            let dot: f64 = (0..n).map(|k| v[i * n + k] * v[j * n + k]).sum();
            spd[i * n + j] = dot / n as f64 + if i == j { 1.0 } else { 0.0 };
        }
    }
    let make = |v: Vec<f64>| {
        let buf = match dtype {
            DType::F32 => Buffer::F32(v.iter().map(|&x| x as f32).collect()),
            _ => Buffer::F64(v.into()),
        };
        Arc::new(HostArray::new(vec![n, n], buf).unwrap())
    };
    (make(v), make(spd))
}

/// Each decomposition at a size above faer's parallel thresholds, float32
/// and float64, gives the same bits in pools of 1 and 2 threads (faer runs
/// with a constant partition count, never the pool's size).
#[test]
fn each_decomposition_is_bit_identical_at_one_and_two_threads() {
    let n = microjax::prims::linalg::PARTITIONS * 160;
    let solve = LinalgOp::TriangularSolve {
        left_side: false,
        lower: true,
        transpose_a: true,
        conjugate_a: false,
        unit_diagonal: false,
    };
    let ops = [
        (LinalgOp::Cholesky, true),
        (solve, true),
        (LinalgOp::Lu, false),
        (
            LinalgOp::Qr {
                full_matrices: true,
            },
            false,
        ),
        (
            LinalgOp::Eigh {
                lower: true,
                sort_eigenvalues: true,
            },
            true,
        ),
        (
            LinalgOp::Svd {
                full_matrices: false,
                compute_uv: true,
            },
            false,
        ),
    ];
    for dtype in [DType::F32, DType::F64] {
        let (x, spd) = linalg_inputs(n, dtype, 21);
        for (op, wants_spd) in ops {
            let a = if wants_spd { spd.clone() } else { x.clone() };
            let mut args = vec![a];
            if matches!(op, LinalgOp::TriangularSolve { .. }) {
                args.push(x.clone());
            }
            let avals: Vec<microjax::Aval> = args
                .iter()
                .map(|a| microjax::Aval::new(a.shape().to_vec(), a.dtype()))
                .collect();
            let prog = single_op(op, &avals);
            let one = bits(in_pool(1, || eval_closed(&prog, &args).unwrap()));
            let two = bits(in_pool(2, || eval_closed(&prog, &args).unwrap()));
            assert!(one == two, "{op:?} {dtype:?}: 1 and 2 threads differ");
            let finite = one.iter().all(|(_, b)| match b {
                Buffer::F32(v) => v.iter().all(|x| x.is_finite()),
                Buffer::F64(v) => v.iter().all(|x| x.is_finite()),
                _ => true,
            });
            assert!(finite, "{op:?} {dtype:?}: non-finite output");
        }
    }
}
