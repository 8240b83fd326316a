//! The compiled CPU executor against the reference interpreter: same bits
//! on fused, multi-chunk, threaded, broadcast-reading, control-flow and
//! call-containing programs; what the compile passes do (CSE, inlining,
//! identities, fusion groups); thread-count independence.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use microjax::exec::compiled::Compiled;
use microjax::exec::interp::eval_closed;
use microjax::prims::{DotGeneral, IntegerPow, Pjit, SelectN};
use microjax::{
    Atom, Aval, BinaryOp, Buffer, Builder, ClosedJaxpr, DType, DotDims, HostArray, Literal,
    Primitive, ReduceOp, Scalar, UnaryOp,
};
use std::sync::Arc;

use crate::common;
use common::*;

fn bits(a: &HostArray) -> Vec<u32> {
    match a.buffer() {
        Buffer::F32(v) => v.iter().map(|x| x.to_bits()).collect(),
        other => panic!("expected f32, got {:?}", other.dtype()),
    }
}

/// Compiled and interpreted runs agree bit for bit; returns the plan.
/// `c @ w` for a vector `c` and a matrix `w` (`c`'s axis against `w`'s first).
fn vecmat(b: &mut Builder, c: Atom, w: Atom) -> Atom {
    b.add_eqn1(dot_general(&[0], &[0], &[], &[]), vec![c, w])
        .unwrap()
}

fn check(prog: ClosedJaxpr, args: &[Arc<HostArray>]) -> Compiled {
    let want = eval_closed(&prog, args).unwrap();
    let plan = Compiled::new(Arc::new(prog)).unwrap();
    for _ in 0..2 {
        let got = plan.run(args).unwrap();
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g.shape(), w.shape());
            assert_eq!(g.buffer(), w.buffer());
        }
    }
    plan
}

/// `tanh(x*2+1)*sin(x) - exp(-x*x)` on f32[n].
fn elementwise(n: usize) -> ClosedJaxpr {
    let mut b = Builder::new();
    let x = input(&mut b, &[n]);
    let out = tanh_sin_exp(&mut b, x);
    b.build(vec![out]).unwrap()
}

#[test]
fn elementwise_chain_is_one_group_at_every_size() {
    for n in [0usize, 1, 7, 4096, 4097, 10_000, 70_001] {
        let plan = check(elementwise(n), &[data(&[n], 3)]);
        let st = plan.stats();
        assert_eq!((st.groups, st.fused_eqns, st.steps), (1, 9, 1), "n = {n}");
        assert_eq!(st.typed_groups, 1, "n = {n}");
    }
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let prog = Arc::new(elementwise(200_003));
    let x = data(&[200_003], 9);
    let plan = Compiled::new(prog).unwrap();
    let run_with = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| plan.run(std::slice::from_ref(&x)).unwrap())
    };
    let one = run_with(1);
    let two = run_with(2);
    let four = run_with(4);
    assert_eq!(bits(&one[0]), bits(&two[0]));
    assert_eq!(bits(&one[0]), bits(&four[0]));
}

/// `tanh(x @ w + b)` with `b` broadcast along rows, plus `x * c[:, None]`.
#[test]
fn broadcasts_of_rows_and_columns_are_read_in_place() {
    let (m, k, n) = (37, 19, 300);
    let mut b = Builder::new();
    let x = input(&mut b, &[m, k]);
    let w = input(&mut b, &[k, n]);
    let bias = input(&mut b, &[n]);
    let col = input(&mut b, &[m]);
    let xw = b
        .add_eqn1(dot_general(&[1], &[0], &[], &[]), vec![x, w])
        .unwrap();
    let bb = broadcast(&mut b, bias, vec![m, n], vec![1]);
    let cb = broadcast(&mut b, col, vec![m, n], vec![0]);
    let y = b.binary(BinaryOp::Add, xw, bb).unwrap();
    let t = b.unary(UnaryOp::Tanh, y).unwrap();
    let z = b.binary(BinaryOp::Mul, t, cb).unwrap();
    let prog = b.build(vec![z]).unwrap();
    let args = [
        data(&[m, k], 1),
        data(&[k, n], 2),
        data(&[n], 3),
        data(&[m], 4),
    ];
    let plan = check(prog, &args);
    // dot, then one group of the two broadcasts, add, tanh and mul.
    let st = plan.stats();
    assert_eq!((st.groups, st.fused_eqns, st.steps), (1, 5, 2));
}

/// An intermediate read both inside its group and by a reduction is kept,
/// and the group closes before the reduction reads it.
#[test]
fn escaping_intermediates_are_materialized() {
    let n = 9000;
    let prog = build(&[f32v(&[n])], |b, x| {
        let s = b.unary(UnaryOp::Sin, x[0].clone()).unwrap();
        let c = b.unary(UnaryOp::Cos, s.clone()).unwrap();
        let total = b
            .add_eqn1(reduce(ReduceOp::Sum, &[0]), vec![c.clone()])
            .unwrap();
        let later = b.binary(BinaryOp::Mul, c, lit(3.0)).unwrap();
        let again = b.binary(BinaryOp::Add, later, s).unwrap();
        vec![total, again]
    });
    let plan = check(prog, &[data(&[n], 5)]);
    // {sin, cos} closes when reduce_sum reads cos; {mul, add} is a second
    // group reading both.
    assert_eq!(plan.stats().groups, 2);
}

#[test]
fn common_subexpressions_and_identities_are_removed() {
    let mut b = Builder::new();
    let x = input(&mut b, &[5]);
    let s1 = b.unary(UnaryOp::Sin, x.clone()).unwrap();
    let s2 = b.unary(UnaryOp::Sin, x.clone()).unwrap();
    let one = b.binary(BinaryOp::Mul, s2, lit(1.0)).unwrap();
    let conv = b.add_eqn1(convert(DType::F32), vec![one]).unwrap();
    let sum = b.binary(BinaryOp::Add, s1, conv).unwrap();
    let prog = b.build(vec![sum]).unwrap();
    let plan = check(prog, &[data(&[5], 6)]);
    assert_eq!(plan.stats().eqns_simplified, 2, "{:?}", plan.simplified());
}

#[test]
fn calls_are_inlined_and_fused_across_the_boundary() {
    let inner = elementwise(64);
    let mut b = Builder::new();
    let x = input(&mut b, &[64]);
    let nx = b.unary(UnaryOp::Neg, x).unwrap();
    let call = Primitive::Pjit(Pjit {
        jaxpr: Arc::new(inner),
        name: "inner".into(),
    });
    let outs = b.add_eqn(call, vec![nx], None).unwrap();
    let y = b.unary(UnaryOp::Abs, Atom::Var(outs[0])).unwrap();
    let prog = b.build(vec![y]).unwrap();
    let plan = check(prog, &[data(&[64], 7)]);
    let st = plan.stats();
    assert_eq!((st.eqns_in, st.steps, st.fused_eqns), (3, 1, 11));
}

#[test]
fn scan_bodies_are_compiled_once_and_agree() {
    let d = 16;
    // body (w ; c) -> (tanh(c @ w) ; c)
    let mut bb = Builder::new();
    let w = input(&mut bb, &[d, d]);
    let c = input(&mut bb, &[d]);
    let cw = vecmat(&mut bb, c.clone(), w);
    let t = bb.unary(UnaryOp::Tanh, cw).unwrap();
    let body = bb.build(vec![t, c]).unwrap();
    let mut b = Builder::new();
    let w = input(&mut b, &[d, d]);
    let c0 = input(&mut b, &[d]);
    let outs = scan(&mut b, body, 50, false, (1, 1), vec![w, c0]);
    let prog = b.build(outs).unwrap();
    check(prog, &[data(&[d, d], 8), data(&[d], 9)]);
}

#[test]
fn wrong_arity_is_an_error_not_a_panic() {
    let plan = Compiled::new(Arc::new(elementwise(3))).unwrap();
    assert!(plan.run(&[]).is_err());
    let wrong = data(&[4], 1);
    assert!(plan.run(&[wrong]).is_err());
}

/// Broadcasts across unit axes (`[a, b] -> [a, 1, b]`) and reshapes join
/// the group of their element count.
#[test]
fn unit_axis_broadcasts_and_reshapes_fuse() {
    let (a, c) = (30, 40);
    let mut b = Builder::new();
    let x = input(&mut b, &[a, c]);
    let row = input(&mut b, &[1, c]);
    let t = b.unary(UnaryOp::Tanh, x).unwrap();
    let t3 = broadcast(&mut b, t, vec![a, 1, c], vec![0, 2]);
    let r3 = broadcast(&mut b, row, vec![a, 1, c], vec![1, 2]);
    let m = b.binary(BinaryOp::Mul, t3, r3).unwrap();
    let back = b.add_eqn1(reshape(&[a, c]), vec![m]).unwrap();
    let out = b.unary(UnaryOp::Neg, back).unwrap();
    let prog = b.build(vec![out]).unwrap();
    let plan = check(prog, &[data(&[a, c], 11), data(&[1, c], 12)]);
    let st = plan.stats();
    assert_eq!((st.groups, st.fused_eqns), (1, 6));
}

/// `x.T @ y` and `x @ y.T` read `x` / `y` in place: the transposes are
/// folded into the dimension numbers and dropped.
#[test]
fn transposes_feeding_a_matmul_are_folded() {
    let (m, k, n) = (40, 30, 20);
    let prog = build(&[f32v(&[k, m]), f32v(&[n, k])], |b, xy| {
        let [xt, yt] = [0, 1].map(|i| b.add_eqn1(transpose(&[1, 0]), vec![xy[i].clone()]).unwrap());
        let out = b
            .add_eqn1(dot_general(&[1], &[0], &[], &[]), vec![xt, yt])
            .unwrap();
        vec![out]
    });
    let plan = check(prog, &[data(&[k, m], 13), data(&[n, k], 14)]);
    assert_eq!(plan.stats().eqns_simplified, 1, "{:?}", plan.simplified());
}

fn as_f64(a: &HostArray) -> Arc<HostArray> {
    let v = match a.buffer() {
        Buffer::F32(v) => v.iter().map(|&x| f64::from(x)).collect(),
        other => panic!("expected f32, got {:?}", other.dtype()),
    };
    Arc::new(HostArray::new(a.shape().to_vec(), Buffer::F64(v)).unwrap())
}

/// The typed pass on f64: a rank-0 operand, a row broadcast, max/min,
/// `integer_pow` (positive, negative, zero), a literal, four outputs (one
/// also read inside the group, one twice, one written directly by a member
/// in the middle of the group), across chunks and threads.
#[test]
fn typed_pass_matches_the_interpreter_on_f64() {
    for (m, n) in [(3usize, 5usize), (61, 4099), (3, 70_001)] {
        let mut b = Builder::new();
        let x = Atom::Var(b.add_input(f64v(&[m, n])).unwrap());
        let row = Atom::Var(b.add_input(f64v(&[n])).unwrap());
        let s = Atom::Var(b.add_input(f64v(&[])).unwrap());
        let rb = broadcast(&mut b, row, vec![m, n], vec![1]);
        let half = Atom::Lit(Literal::new(Scalar::Float(0.5), DType::F64, true));
        let xs = b.binary(BinaryOp::Mul, x.clone(), s).unwrap();
        let hi = b.binary(BinaryOp::Max, xs.clone(), rb.clone()).unwrap();
        let lo = b.binary(BinaryOp::Min, hi.clone(), half).unwrap();
        let p3 = b
            .add_eqn1(Primitive::IntegerPow(IntegerPow { y: 3 }), vec![lo.clone()])
            .unwrap();
        let pm2 = b
            .add_eqn1(Primitive::IntegerPow(IntegerPow { y: -2 }), vec![rb])
            .unwrap();
        let p0 = b
            .add_eqn1(Primitive::IntegerPow(IntegerPow { y: 0 }), vec![x])
            .unwrap();
        let u = b.unary(UnaryOp::Neg, p0.clone()).unwrap();
        let t = b.unary(UnaryOp::Tanh, p3).unwrap();
        let d = b.binary(BinaryOp::Div, t, pm2).unwrap();
        let e = b.binary(BinaryOp::Sub, d, p0).unwrap();
        let prog = b.build(vec![e.clone(), hi, u, e]).unwrap();
        let x = as_f64(&data(&[m, n], 5));
        let row = as_f64(&data(&[n], 6));
        let s = Arc::new(HostArray::new(vec![], Buffer::F64(vec![1.75].into())).unwrap());
        let plan = check(prog, &[x, row, s]);
        let st = plan.stats();
        assert_eq!((st.groups, st.typed_groups), (1, 1), "({m}, {n})");
    }
}

/// Comparisons that only conversions back to f32 read (the masks of `max`'s
/// and `relu`'s derivatives) run in the typed pass as 1 / 0 registers: every
/// comparison operator, against a broadcast row and a literal, with NaNs,
/// signed zeros and ties, across chunks and threads. A comparison whose
/// boolean leaves the group keeps the group on the generic pass.
#[test]
fn typed_pass_keeps_compared_and_converted_masks_in_float_registers() {
    use microjax::CmpOp;
    let cycle = [0.0f32, -0.0, 1.0, f32::NAN, -2.5, 1.0, 3.0];
    for (m, n) in [(3usize, 5usize), (61, 4099)] {
        let mut b = Builder::new();
        let x = input(&mut b, &[m, n]);
        let row = input(&mut b, &[n]);
        let rb = broadcast(&mut b, row, vec![m, n], vec![1]);
        let relu = b.binary(BinaryOp::Max, x.clone(), lit(0.0)).unwrap();
        let tie = b
            .add_eqn1(Primitive::Compare(CmpOp::Eq), vec![x.clone(), relu])
            .unwrap();
        let mut acc = b.add_eqn1(convert(DType::F32), vec![tie]).unwrap();
        let ops = [
            CmpOp::Eq,
            CmpOp::Ne,
            CmpOp::Lt,
            CmpOp::Le,
            CmpOp::Gt,
            CmpOp::Ge,
        ];
        for (k, op) in ops.into_iter().enumerate() {
            let c = b
                .add_eqn1(Primitive::Compare(op), vec![x.clone(), rb.clone()])
                .unwrap();
            let f = b.add_eqn1(convert(DType::F32), vec![c]).unwrap();
            let w = b
                .binary(BinaryOp::Mul, f, lit(f64::from(2u32 << k)))
                .unwrap();
            acc = b.binary(BinaryOp::Add, acc, w).unwrap();
        }
        let zero = b
            .add_eqn1(Primitive::Compare(CmpOp::Le), vec![lit(0.0), x.clone()])
            .unwrap();
        let z = b.add_eqn1(convert(DType::F32), vec![zero]).unwrap();
        let z = b.binary(BinaryOp::Mul, z, lit(256.0)).unwrap();
        let out = b.binary(BinaryOp::Add, acc, z).unwrap();
        let prog = b.build(vec![out]).unwrap();
        let xs: Vec<f32> = (0..m * n).map(|i| cycle[i % cycle.len()]).collect();
        let rows: Vec<f32> = (0..n).map(|i| cycle[(i * 3 + 1) % cycle.len()]).collect();
        let args = [
            Arc::new(HostArray::from_vec(vec![m, n], xs.clone()).unwrap()),
            Arc::new(HostArray::from_vec(vec![n], rows.clone()).unwrap()),
        ];
        let plan = check(prog, &args);
        let st = plan.stats();
        assert_eq!((st.groups, st.typed_groups), (1, 1), "({m}, {n})");
        // The values themselves, against Rust's comparisons.
        let got = plan.run(&args).unwrap();
        let Buffer::F32(v) = got[0].buffer() else {
            panic!("f32 output")
        };
        for (i, &g) in v.iter().enumerate() {
            let (a, r) = (xs[i], rows[i % n]);
            let mut want = f32::from(u8::from(a == a.max(0.0) && !a.is_nan()));
            let cmps = [a == r, a != r, a < r, a <= r, a > r, a >= r];
            for (k, c) in cmps.into_iter().enumerate() {
                want += f32::from(u8::from(c)) * (2u32 << k) as f32;
            }
            want += f32::from(u8::from(0.0 <= a)) * 256.0;
            assert_eq!(g, want, "element {i}: x={a} row={r}");
        }

        // The boolean itself is an output: no typed pass, same bits.
        let mut b = Builder::new();
        let x = input(&mut b, &[m, n]);
        let c = b
            .add_eqn1(Primitive::Compare(CmpOp::Lt), vec![x.clone(), lit(1.0)])
            .unwrap();
        let f = b.add_eqn1(convert(DType::F32), vec![c.clone()]).unwrap();
        let y = b.binary(BinaryOp::Mul, f, x).unwrap();
        let prog = b.build(vec![y, c]).unwrap();
        let plan = check(prog, &args[..1]);
        assert_eq!(plan.stats().typed_groups, 0, "({m}, {n})");
    }
}

/// A one-element program whose rank-0 values (a `select_n` on a scalar
/// predicate) are broadcast into a `select_n` over f32[1]: the rank-0 chain
/// and the f32[1] one do not share a group (as one group the rank-0 value
/// reached the f32[1] `select_n` as a case of the wrong shape and the
/// plan's first run failed).
#[test]
fn rank0_values_broadcast_into_a_one_element_select() {
    let mut b = Builder::new();
    let x = input(&mut b, &[1]);
    let s = input(&mut b, &[]);
    let neg = b
        .add_eqn1(
            Primitive::Compare(microjax::CmpOp::Lt),
            vec![s.clone(), lit(0.0)],
        )
        .unwrap();
    let minus = b.unary(UnaryOp::Neg, s.clone()).unwrap();
    let m = b
        .add_eqn1(Primitive::SelectN(SelectN), vec![neg, s, minus])
        .unwrap();
    let o = broadcast(&mut b, m, vec![1], vec![]);
    let zero = b
        .add_eqn1(
            Primitive::Compare(microjax::CmpOp::Eq),
            vec![x.clone(), lit(0.0)],
        )
        .unwrap();
    let y = b
        .add_eqn1(Primitive::SelectN(SelectN), vec![zero, x, o])
        .unwrap();
    let prog = b.build(vec![y]).unwrap();
    for (xv, sv) in [(0.0f32, -2.5f32), (0.0, 3.0), (1.5, -2.5)] {
        let args = [
            Arc::new(HostArray::from_vec(vec![1], vec![xv]).unwrap()),
            Arc::new(HostArray::from_vec(vec![], vec![sv]).unwrap()),
        ];
        let plan = check(prog.clone(), &args);
        let out = plan.run(&args).unwrap();
        let want = if xv == 0.0 { sv.abs() } else { xv }; // select_n picks case 1 where true
        assert_eq!(out[0].as_slice::<f32>().unwrap(), &[want]);
    }
}

/// A group mixing dtypes (compare → select) keeps the generic pass.
#[test]
fn mixed_dtype_groups_take_the_generic_pass() {
    let n = 10_000;
    let mut b = Builder::new();
    let x = input(&mut b, &[n]);
    let pos = b
        .add_eqn1(
            Primitive::Compare(microjax::CmpOp::Gt),
            vec![x.clone(), lit(0.0)],
        )
        .unwrap();
    let x2 = b.binary(BinaryOp::Mul, x.clone(), lit(2.0)).unwrap();
    let y = b
        .add_eqn1(Primitive::SelectN(SelectN), vec![pos, x, x2])
        .unwrap();
    let plan = check(b.build(vec![y]).unwrap(), &[data(&[n], 8)]);
    assert_eq!((plan.stats().groups, plan.stats().typed_groups), (1, 0));
}

/// A one-element group whose members mix rank 0 (arithmetic on scalar
/// inputs) and rank 1 (`f32[1]`): the rank-0 member, broadcast to `(1,)`,
/// is a `select_n` case beside rank-1 cases (what `vmap` of a jitted
/// `where(x < 0, b - a, a)` over one example builds).
#[test]
fn one_element_groups_mixing_rank_zero_and_rank_one_members() {
    let mut b = Builder::new();
    let a = input(&mut b, &[]);
    let c = input(&mut b, &[]);
    let x = input(&mut b, &[1]);
    let neg = b
        .add_eqn1(
            Primitive::Compare(microjax::CmpOp::Lt),
            vec![x.clone(), lit(0.0)],
        )
        .unwrap();
    let diff = b.binary(BinaryOp::Sub, c, a.clone()).unwrap();
    let a1 = b.add_eqn1(broadcast_in_dim(&[1], &[]), vec![a]).unwrap();
    let d1 = b.add_eqn1(broadcast_in_dim(&[1], &[]), vec![diff]).unwrap();
    let pick = b
        .add_eqn1(Primitive::SelectN(SelectN), vec![neg, a1, d1])
        .unwrap();
    let y = b.binary(BinaryOp::Mul, pick, x).unwrap();
    let prog = b.build(vec![y]).unwrap();
    for v in [-2.5f32, 1.5] {
        let args = [data(&[], 1), data(&[], 2), Arc::new(host(&[1], vec![v]))];
        check(prog.clone(), &args);
    }
}

/// `scan` of `c = tanh(c @ w)` over `steps`, w f32[d, d]; outputs the last
/// carry and the stacked carries.
fn matvec_scan(d: usize, steps: usize) -> ClosedJaxpr {
    let mut bb = Builder::new();
    let w = input(&mut bb, &[d, d]);
    let c = input(&mut bb, &[d]);
    let cw = vecmat(&mut bb, c, w);
    let t = bb.unary(UnaryOp::Tanh, cw).unwrap();
    let body = bb.build(vec![t.clone(), t]).unwrap();
    let mut b = Builder::new();
    let w = input(&mut b, &[d, d]);
    let c0 = input(&mut b, &[d]);
    let outs = scan(&mut b, body, steps, false, (1, 1), vec![w, c0]);
    b.build(outs).unwrap()
}

/// Loop bodies reuse the arrays of the previous iteration (the recycling
/// bin fills up), yet every run equals the interpreter and arrays already
/// handed to the caller are never written again.
#[test]
fn recycled_arrays_never_leak_into_results() {
    use microjax::exec::compiled::recycle;
    recycle::clear();
    let d = 64;
    let plan = Compiled::new(Arc::new(matvec_scan(d, 20))).unwrap();
    let w = data_in(&[d, d], 4, 0.125);
    let first_in = data(&[d], 5);
    let first = plan.run(&[w.clone(), first_in.clone()]).unwrap();
    let kept: Vec<HostArray> = first.iter().map(|a| (**a).clone()).collect();
    assert!(recycle::held() > 0, "the scan body recycled nothing");
    for seed in 6..10 {
        let c0 = data(&[d], seed);
        let want = eval_closed(plan.program(), &[w.clone(), c0.clone()]).unwrap();
        let got = plan.run(&[w.clone(), c0]).unwrap();
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g.buffer(), w.buffer(), "seed {seed}");
        }
    }
    for (a, k) in first.iter().zip(&kept) {
        assert_eq!(**a, *k, "an output changed after later runs");
    }
}

#[test]
fn recycle_bin_keeps_only_unshared_small_arrays() {
    use microjax::exec::compiled::recycle;
    recycle::clear();
    let shared = data(&[8], 1);
    let _other = shared.clone();
    recycle::give(shared);
    assert_eq!(recycle::held(), 0, "a shared array was kept");
    recycle::give(data(&[recycle::MAX_BYTES / 4 + 1], 2));
    assert_eq!(recycle::held(), 0, "an array over the size limit was kept");
    recycle::give(data(&[2, 3], 3));
    assert_eq!(recycle::held(), 1);
    assert!(
        recycle::take(DType::F64, &[6]).is_none(),
        "wrong dtype taken"
    );
    let h = recycle::take(DType::F32, &[3, 2]).unwrap();
    assert_eq!(h.shape(), &[3, 2]);
    assert_eq!(recycle::held(), 0);
    for k in 0..2 * recycle::CAPACITY {
        recycle::give(data(&[4], k as u32));
    }
    assert_eq!(recycle::held(), recycle::CAPACITY);
    recycle::clear();
}

#[test]
fn a_full_recycle_bin_gives_way_to_new_arrays() {
    use microjax::exec::compiled::recycle;
    recycle::clear();
    // Arrays an earlier program left behind, of a shape a loop never asks for.
    for k in 0..recycle::CAPACITY {
        recycle::give(data(&[5, 7], k as u32));
    }
    assert_eq!(recycle::held(), recycle::CAPACITY);
    assert!(recycle::take(DType::F32, &[64]).is_none());
    // A loop body's array goes in all the same (the oldest goes out) and
    // comes back on the next step.
    recycle::give(data(&[64], 99));
    assert_eq!(recycle::held(), recycle::CAPACITY);
    let h = recycle::take(DType::F32, &[64]).expect("the newest array was dropped");
    assert_eq!(h.shape(), &[64]);
    // Same element count, other shape: re-shaped.
    recycle::give(h);
    let h = recycle::take(DType::F32, &[8, 8]).expect("same element count not matched");
    assert_eq!(h.shape(), &[8, 8]);
    recycle::clear();
}

/// A scan whose body exercises every way a loop body binds and returns
/// values: a const (`w`) and a body constant (`b0`) bound once, a carry
/// returned unchanged (`k' = c`), a result returned twice, a const and a
/// literal returned as `ys`, an `xs` operand the body never reads, and a
/// fused add→tanh group, run forwards and in reverse.
fn loop_body_scan(d: usize, steps: usize, reverse: bool) -> ClosedJaxpr {
    let mut bb = Builder::new();
    let w = input(&mut bb, &[d, d]);
    let c = input(&mut bb, &[d]);
    let _k = input(&mut bb, &[d]);
    let x = input(&mut bb, &[d]);
    let _unread = input(&mut bb, &[d]);
    let b0 = Atom::Var(bb.add_const(data_in(&[d], 3, 0.5), false).unwrap());
    let cw = vecmat(&mut bb, c.clone(), w.clone());
    let s = bb.binary(BinaryOp::Add, cw, x).unwrap();
    let s = bb.binary(BinaryOp::Add, s, b0).unwrap();
    let t = bb.unary(UnaryOp::Tanh, s).unwrap();
    let e = bb.unary(UnaryOp::Exp, t.clone()).unwrap();
    let body = bb.build(vec![t.clone(), c, t, e, w, lit(2.0)]).unwrap();
    let mut b = Builder::new();
    let w = input(&mut b, &[d, d]);
    let c0 = input(&mut b, &[d]);
    let k0 = input(&mut b, &[d]);
    let xs = input(&mut b, &[steps, d]);
    let us = input(&mut b, &[steps, d]);
    let outs = scan(
        &mut b,
        body,
        steps,
        reverse,
        (1, 2),
        vec![w, c0, k0, xs, us],
    );
    b.build(outs).unwrap()
}

/// Compiled loop bodies (consts bound once, carries moved in, results moved
/// out, recycled buffers) give the interpreter's bits on every kind of body
/// operand and result, with the recycling bin empty or primed.
#[test]
fn loop_bodies_agree_with_the_interpreter() {
    use microjax::exec::compiled::recycle;
    let (d, steps) = (32, 7);
    for reverse in [false, true] {
        let args = [
            data_in(&[d, d], 4, 0.2),
            data(&[d], 5),
            data(&[d], 6),
            data(&[steps, d], 7),
            data(&[steps, d], 8),
        ];
        recycle::clear();
        let plan = check(loop_body_scan(d, steps, reverse), &args);
        assert!(recycle::held() > 0, "the loop body recycled nothing");
        // Primed bin, and the inputs unchanged by the runs.
        check(loop_body_scan(d, steps, reverse), &args);
        assert_eq!(args[1].buffer(), data(&[d], 5).buffer());
        assert_eq!(plan.stats().steps, 1);
    }
}

/// `while i < n: (i, c) = (i + 1, tanh(c @ w))` with a compiled cond and
/// body equals the interpreter, and stops after `n` iterations.
#[test]
fn while_bodies_run_compiled_and_agree() {
    use microjax::CmpOp;
    let d = 64;
    let i32s = Aval::new(vec![], DType::I32);
    let int = |v: i64| Atom::Lit(Literal::new(Scalar::Int(v), DType::I32, false));
    let mut cb = Builder::new();
    let n = Atom::Var(cb.add_input(i32s.clone()).unwrap());
    let i = Atom::Var(cb.add_input(i32s.clone()).unwrap());
    let _c = input(&mut cb, &[d]);
    let p = cb
        .add_eqn1(Primitive::Compare(CmpOp::Lt), vec![i, n])
        .unwrap();
    let cond = cb.build(vec![p]).unwrap();
    let mut bb = Builder::new();
    let w = input(&mut bb, &[d, d]);
    let i = Atom::Var(bb.add_input(i32s.clone()).unwrap());
    let c = input(&mut bb, &[d]);
    let i1 = bb.binary(BinaryOp::Add, i, int(1)).unwrap();
    let cw = vecmat(&mut bb, c, w);
    let t = bb.unary(UnaryOp::Tanh, cw).unwrap();
    let body = bb.build(vec![i1, t]).unwrap();
    let mut b = Builder::new();
    let n = Atom::Var(b.add_input(i32s.clone()).unwrap());
    let w = input(&mut b, &[d, d]);
    let c0 = input(&mut b, &[d]);
    let outs = while_loop(&mut b, cond, body, (1, 1), vec![n, w, int(0), c0]);
    let prog = b.build(outs).unwrap();
    let steps = Arc::new(HostArray::new(vec![], Buffer::I32(vec![25].into())).unwrap());
    let args = [steps, data_in(&[d, d], 4, 0.125), data(&[d], 5)];
    let plan = check(prog, &args);
    let out = plan.run(&args).unwrap();
    assert_eq!(out[0].buffer(), &Buffer::I32(vec![25].into()));
}

/// The planned register product (`PackedDot`) is the kernel's product, for
/// a matvec, a vector-matrix product, a small matmul and a batched one;
/// operands of other shapes are declined, not misread.
#[test]
fn planned_products_equal_the_kernel() {
    use microjax::prims::kernel::{self, PackedDot};
    let plain = |lc: usize, rc: usize| dot_dims(&[lc], &[rc], &[], &[]);
    let batched = dot_dims(&[2], &[1], &[0], &[0]);
    let cases: Vec<(Vec<usize>, Vec<usize>, DotDims)> = vec![
        (vec![64], vec![64, 64], plain(0, 0)),
        (vec![48, 40], vec![40], plain(1, 0)),
        (vec![8, 24], vec![24, 72], plain(1, 0)),
        (vec![3, 5, 7], vec![3, 7, 9], batched),
    ];
    for (ls, rs, dims) in cases {
        let (l, r) = (data(&ls, 1), data(&rs, 2));
        let want = kernel::eval(
            &microjax::exec::ExecCtx::default(),
            &Primitive::DotGeneral(DotGeneral {
                dims: dims.clone(),
                preferred_element_type: None,
            }),
            &[&l, &r],
        )
        .unwrap()
        .remove(0);
        let plan = PackedDot::new(&ls, &rs, &dims).expect("a register product");
        let mut out = Buffer::F32(vec![f32::NAN; want.size()].into());
        let ctx = microjax::exec::ExecCtx::default();
        assert!(plan.run_into(&ctx, &l, &r, &mut out).unwrap());
        assert_eq!(&out, want.buffer(), "{ls:?} x {rs:?}");
        // Another shape than planned: declined, buffer untouched.
        let other = data(&[ls[0] + 1], 3);
        let mut keep = Buffer::F32(vec![1.0; want.size()].into());
        assert!(!plan.run_into(&ctx, &other, &r, &mut keep).unwrap());
        assert_eq!(keep, Buffer::F32(vec![1.0; want.size()].into()));
    }
}

/// Unfused single binary and unary equations inside a loop body (a literal
/// splatted, full-length operands, an `i32` counter) write into recycled
/// arrays with the interpreter's bits.
#[test]
fn single_elementwise_steps_in_loops_agree() {
    let d = 24;
    let i32s = Aval::new(vec![], DType::I32);
    let mut bb = Builder::new();
    let w = input(&mut bb, &[d, d]);
    let i = Atom::Var(bb.add_input(i32s.clone()).unwrap());
    let c = input(&mut bb, &[d]);
    let x = input(&mut bb, &[d]);
    let two = Atom::Lit(Literal::new(Scalar::Int(2), DType::I32, false));
    let i2 = bb.binary(BinaryOp::Mul, i, two).unwrap();
    let u = vecmat(&mut bb, c, w.clone());
    let v = bb.binary(BinaryOp::Mul, u, lit(0.5)).unwrap();
    let z = vecmat(&mut bb, v, w.clone());
    let t = bb.binary(BinaryOp::Sub, z, x).unwrap();
    let q = vecmat(&mut bb, t, w);
    let r = bb.unary(UnaryOp::Sin, q).unwrap();
    let body = bb.build(vec![i2, r]).unwrap();
    let mut b = Builder::new();
    let w = input(&mut b, &[d, d]);
    let i0 = Atom::Var(b.add_input(i32s).unwrap());
    let c0 = input(&mut b, &[d]);
    let xs = input(&mut b, &[9, d]);
    let outs = scan(&mut b, body, 9, false, (1, 2), vec![w, i0, c0, xs]);
    let prog = b.build(outs).unwrap();
    let one = Arc::new(HostArray::new(vec![], Buffer::I32(vec![3].into())).unwrap());
    let args = [
        data_in(&[d, d], 4, 0.3),
        one,
        data(&[d], 5),
        data(&[9, d], 6),
    ];
    let plan = check(prog, &args);
    let out = plan.run(&args).unwrap();
    assert_eq!(out[0].buffer(), &Buffer::I32(vec![3 << 9].into()));
}

/// `tanh(a @ b)` on f32[m,k] × f32[k,n]: XLA's cost model counts the
/// product's multiply-adds twice and tanh as transcendentals.
#[test]
fn cost_analysis_counts_dot_flops_and_transcendentals() {
    let (m, k, n) = (8usize, 16usize, 4usize);
    let prog = build(&[f32v(&[m, k]), f32v(&[k, n])], |b, x| {
        let c = b
            .add_eqn1(dot_general(&[1], &[0], &[], &[]), x.to_vec())
            .unwrap();
        vec![b
            .add_eqn1(Primitive::Unary(UnaryOp::Tanh), vec![c])
            .unwrap()]
    });
    let plan = check(prog, &[data(&[m, k], 1), data(&[k, n], 2)]);
    let cost = plan.cost_analysis().unwrap();
    assert_eq!(cost.flops, (2 * m * k * n) as f64);
    assert_eq!(cost.transcendentals, (m * n) as f64);
    assert_eq!(
        cost.bytes_accessed,
        (4 * (m * k + k * n + 3 * m * n)) as f64
    );
}

/// A scan costs its length times its body.
#[test]
fn cost_analysis_scales_scan_bodies_by_length() {
    let body = build(&[f32v(&[6])], |b, x| {
        let y = b
            .add_eqn1(
                Primitive::Binary(BinaryOp::Mul),
                vec![x[0].clone(), lit(2.0)],
            )
            .unwrap();
        vec![y]
    });
    let prog = build(&[f32v(&[6])], |b, x| {
        scan(b, body, 10, false, (0, 1), x.to_vec())
    });
    let plan = check(prog, &[data(&[6], 3)]);
    assert_eq!(plan.cost_analysis().unwrap().flops, 60.0);
}

/// Static memory figures: arguments and outputs exactly, the intermediate
/// peak from the last-use table, and an upper bound of a measured run.
#[test]
fn memory_analysis_bounds_the_measured_peak() {
    let n = 1000usize;
    let plan = check(elementwise(n), &[data(&[n], 3)]);
    let mem = plan.memory_analysis().unwrap();
    assert_eq!(mem.argument_bytes, 4 * n);
    assert_eq!(mem.output_bytes, 4 * n);
    assert!(mem.temp_bytes >= 4 * n);
    let (_, run) = plan.run_profiled(&[data(&[n], 3)]).unwrap();
    assert!(mem.peak_bytes >= run.peak_bytes);
    assert!(run.peak_bytes > 0);
}

/// A rank-0 value from outside a fusion group reshaped to the group's
/// shape (`(1, 1)`, one element) is a `select_n` case beside a full-shape
/// case: the group reads it per element, not as a rank-0 scalar (the
/// backward program of `grad(sum(where(a > 0, a, 0) * ones((2, 2))))`).
#[test]
fn reshaped_rank0_value_is_a_full_shape_select_case() {
    let mut b = Builder::new();
    let c = input(&mut b, &[1, 1]);
    let m = input(&mut b, &[]);
    let d = b
        .add_eqn1(
            Primitive::Compare(microjax::CmpOp::Gt),
            vec![c, Builder::lit(DType::F32, 0.0)],
        )
        .unwrap();
    let n = b
        .add_eqn1(
            Primitive::Reshape(microjax::prims::Reshape {
                new_sizes: vec![1, 1],
            }),
            vec![m],
        )
        .unwrap();
    let zeros = b.zeros(&f32v(&[1, 1])).unwrap();
    let p = b
        .add_eqn1(Primitive::SelectN(SelectN), vec![d, zeros, n])
        .unwrap();
    let prog = b.build(vec![p]).unwrap();
    for (cv, mv) in [(1.0f32, 4.0f32), (-1.0, 4.0)] {
        let args = [
            Arc::new(HostArray::new(vec![1, 1], Buffer::from(vec![cv])).unwrap()),
            Arc::new(HostArray::new(vec![], Buffer::from(vec![mv])).unwrap()),
        ];
        check(prog.clone(), &args);
    }
}

/// Both executors refuse an argument whose shape or dtype differs from its
/// parameter's, with the same typed error (a program typed f32[3] never
/// runs on an f32[5] or f64[3] value).
#[test]
fn arguments_of_another_type_are_refused_by_both_executors() {
    let prog = elementwise(3);
    let plan = Compiled::new(Arc::new(prog.clone())).unwrap();
    let good = Arc::new(host(&[3], vec![0.5f32, 1.0, 2.0]));
    let want = eval_closed(&prog, std::slice::from_ref(&good)).unwrap();
    assert_eq!(bits(&plan.run(&[good]).unwrap()[0]), bits(&want[0]));
    let bad = [
        Arc::new(host(&[5], vec![0.5f32; 5])),
        Arc::new(host(&[3], vec![0.5f64; 3])),
        Arc::new(host(&[1, 3], vec![0.5f32; 3])),
    ];
    for arg in bad {
        for e in [
            eval_closed(&prog, std::slice::from_ref(&arg)).unwrap_err(),
            plan.run(std::slice::from_ref(&arg)).unwrap_err(),
        ] {
            assert!(
                matches!(&e, microjax::Error::Typecheck(m) if m.contains("does not match parameter f32[3]")),
                "{e}"
            );
        }
    }
}

/// A large reshape, and a reduction over axes of size 1 only (compiled as
/// a reshape), read their operand's elements in place: the results are
/// views (foreign storage) with the interpreter's values, and the argument
/// is unchanged. A small reshape copies.
#[test]
fn large_reshapes_and_unit_reductions_are_views() {
    let n = 1 << 17; // 512 KiB of f32
    let mut b = Builder::new();
    let x = input(&mut b, &[n]);
    let y = b.add_eqn1(reshape(&[1, n]), vec![x]).unwrap();
    let z = b
        .add_eqn1(reduce(ReduceOp::Sum, &[0]), vec![y.clone()])
        .unwrap();
    let w = b.add_eqn1(reshape(&[256, n / 256]), vec![z]).unwrap();
    let prog = b.build(vec![y, w]).unwrap();
    let arg = data(&[n], 7);
    let before = arg.buffer().clone();
    let plan = check(prog, std::slice::from_ref(&arg));
    let got = plan.run(std::slice::from_ref(&arg)).unwrap();
    assert_eq!(got[0].shape(), &[1, n]);
    assert_eq!(got[1].shape(), &[256, n / 256]);
    assert!(!got[0].buffer().is_owned(), "reshape copied");
    assert!(!got[1].buffer().is_owned(), "unit reduction copied");
    assert_eq!(got[1].buffer(), &before);
    drop(got);
    assert_eq!(arg.buffer(), &before);

    let mut b = Builder::new();
    let x = input(&mut b, &[64]);
    let y = b.add_eqn1(reshape(&[8, 8]), vec![x]).unwrap();
    let prog = b.build(vec![y]).unwrap();
    let plan = check(prog, &[data(&[64], 3)]);
    assert!(plan.run(&[data(&[64], 3)]).unwrap()[0].buffer().is_owned());
}

/// Input-independent values are computed once when the plan is built: the
/// identity matrix a Jacobian seeds with (`iota`, `eq`, `convert`, a
/// broadcast) becomes a constant and only the product with the input runs;
/// an `iota` larger than the fold limit stays a step.
#[test]
fn input_independent_values_are_folded_into_constants() {
    let n = 50;
    let prog = build(&[f32v(&[n])], |b, x| {
        let rows = b.add_eqn1(iota(DType::I32, &[n, n], 0), vec![]).unwrap();
        let cols = b.add_eqn1(iota(DType::I32, &[n, n], 1), vec![]).unwrap();
        let eq = b
            .add_eqn1(Primitive::Compare(microjax::CmpOp::Eq), vec![rows, cols])
            .unwrap();
        let eye = b.add_eqn1(convert(DType::F32), vec![eq]).unwrap();
        let xb = broadcast(b, x[0].clone(), vec![n, n], vec![1]);
        vec![b.binary(BinaryOp::Mul, eye, xb).unwrap()]
    });
    let plan = check(prog, &[data(&[n], 21)]);
    // The broadcast and the product.
    assert_eq!(plan.stats().eqns_simplified, 2, "{:?}", plan.simplified());
    assert_eq!(plan.simplified().consts.len(), 1);

    let big = 1 << 19; // 2 MiB of int32
    let prog = build(&[f32v(&[1])], |b, x| {
        let i = b.add_eqn1(iota(DType::I32, &[big], 0), vec![]).unwrap();
        let f = b.add_eqn1(convert(DType::F32), vec![i]).unwrap();
        let xb = broadcast(b, x[0].clone(), vec![big], vec![0]);
        vec![b.binary(BinaryOp::Add, f, xb).unwrap()]
    });
    let plan = check(prog, &[data(&[1], 22)]);
    assert!(plan.simplified().consts.is_empty());
    assert_eq!(plan.stats().eqns_simplified, 4, "{:?}", plan.simplified());
}
