//! Reduction and dot_general kernels against naive loops, integer wrap and preferred types.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use half::{bf16, f16};
use microjax::prims::{DotGeneral, Reduce};
use microjax::{DType, DotDims, Error, HostArray, Primitive, ReduceOp};

use crate::common;
use common::kernels::{arr, run, scalar};
use common::{
    bf16s, bools, dot_dims, dot_general, eval, f16s, f32s, f64s, i32s, i8s, u8s, unravel,
};

// ----------------------------------------------------------- reductions

fn reduce(op: ReduceOp, x: &HostArray, axes: &[usize]) -> HostArray {
    run(
        Primitive::Reduce(Reduce {
            op,
            axes: axes.to_vec(),
        }),
        &[x],
    )
}

/// Naive reduction through multi-indices (f64 accumulation).
fn naive_reduce(v: &[f64], shape: &[usize], axes: &[usize], max: bool) -> Vec<f64> {
    let out_shape: Vec<usize> = (0..shape.len())
        .filter(|a| !axes.contains(a))
        .map(|a| shape[a])
        .collect();
    let out_n: usize = out_shape.iter().product();
    let init = if max { f64::NEG_INFINITY } else { 0.0 };
    let mut out = vec![init; out_n];
    let n: usize = shape.iter().product();
    for (flat, &x) in v[..n].iter().enumerate() {
        let idx = unravel(flat, shape);
        let mut o = 0;
        for (d, &i) in idx.iter().enumerate() {
            if !axes.contains(&d) {
                o = o * shape[d] + i;
            }
        }
        out[o] = if max { out[o].max(x) } else { out[o] + x };
    }
    out
}

#[test]
fn reduce_over_axis_sets() {
    let shape = [3usize, 4, 5, 2];
    let v: Vec<f64> = (0..120).map(|i| ((i * 37) % 101) as f64 - 50.0).collect();
    let xf = arr(&shape, v.iter().map(|&x| x as f32).collect::<Vec<_>>());
    let xi = arr(&shape, v.iter().map(|&x| x as i32).collect::<Vec<_>>());
    let xd = arr(&shape, v.clone());
    let axes_sets: [&[usize]; 9] = [
        &[],
        &[0],
        &[1],
        &[3],
        &[0, 2],
        &[1, 3],
        &[0, 1],
        &[2, 3],
        &[0, 1, 2, 3],
    ];
    for axes in axes_sets {
        for (op, max) in [(ReduceOp::Sum, false), (ReduceOp::Max, true)] {
            let want = naive_reduce(&v, &shape, axes, max);
            let rf = reduce(op, &xf, axes);
            let want_shape: Vec<usize> = (0..4)
                .filter(|a| !axes.contains(a))
                .map(|a| shape[a])
                .collect();
            assert_eq!(rf.shape(), want_shape.as_slice());
            let wf: Vec<f32> = want.iter().map(|&x| x as f32).collect();
            assert_eq!(f32s(&rf), wf, "{op:?} {axes:?}");
            let wi: Vec<i32> = want.iter().map(|&x| x as i32).collect();
            assert_eq!(i32s(&reduce(op, &xi, axes)), wi, "{op:?} {axes:?}");
            assert_eq!(f64s(&reduce(op, &xd, axes)), want, "{op:?} {axes:?}");
        }
    }
}

#[test]
fn reduce_edge_cases() {
    // Wrapping integer sums.
    let x = arr(&[3], vec![100i8, 100, 100]);
    assert_eq!(i8s(&reduce(ReduceOp::Sum, &x, &[0])), vec![44]);
    // f16 accumulates in f32: 4096 ones sum exactly (an f16 accumulator
    // would stop at 2048).
    let h = arr(&[4096], vec![f16::ONE; 4096]);
    assert_eq!(
        f16s(&reduce(ReduceOp::Sum, &h, &[0])),
        vec![f16::from_f32(4096.0)]
    );
    let b = arr(&[2, 2048], vec![bf16::ONE; 4096]);
    assert_eq!(
        bf16s(&reduce(ReduceOp::Sum, &b, &[1])),
        vec![bf16::from_f32(2048.0); 2]
    );
    // NaN propagates through max.
    let n = arr(&[2, 3], vec![1.0f32, f32::NAN, 3.0, 4.0, 5.0, 6.0]);
    let m = f32s(&reduce(ReduceOp::Max, &n, &[1]));
    assert!(m[0].is_nan());
    assert_eq!(m[1], 6.0);
    let m = f32s(&reduce(ReduceOp::Max, &n, &[0]));
    assert!(m[1].is_nan());
    assert_eq!((m[0], m[2]), (4.0, 6.0));
    // Empty reductions give the identity.
    let e = arr(&[0, 3], Vec::<f32>::new());
    assert_eq!(
        f32s(&reduce(ReduceOp::Max, &e, &[0])),
        vec![f32::NEG_INFINITY; 3]
    );
    assert_eq!(f32s(&reduce(ReduceOp::Sum, &e, &[0])), vec![0.0; 3]);
    assert_eq!(reduce(ReduceOp::Sum, &e, &[1]).shape(), &[0]);
    let ei = arr(&[2, 0], Vec::<i32>::new());
    assert_eq!(i32s(&reduce(ReduceOp::Max, &ei, &[1])), vec![i32::MIN; 2]);
    let eu = arr(&[0], Vec::<u8>::new());
    assert_eq!(u8s(&reduce(ReduceOp::Max, &eu, &[0])), vec![0]);
    let eb = arr(&[0], Vec::<bool>::new());
    assert_eq!(bools(&reduce(ReduceOp::Max, &eb, &[0])), vec![false]);
    // Bool max is any.
    let bb = arr(&[2, 2], vec![false, true, false, false]);
    assert_eq!(bools(&reduce(ReduceOp::Max, &bb, &[1])), vec![true, false]);
    assert!(eval(
        &Primitive::Reduce(Reduce {
            op: ReduceOp::Sum,
            axes: vec![0]
        }),
        &[&bb]
    )
    .is_err());
    // Rank 0 / size-1 inputs.
    assert_eq!(
        f32s(&reduce(ReduceOp::Sum, &scalar(2.5f32), &[])),
        vec![2.5]
    );
    let one = arr(&[1, 1], vec![-3.0f32]);
    assert_eq!(f32s(&reduce(ReduceOp::Max, &one, &[0, 1])), vec![-3.0]);
    // A long f32 sum is accurate (lane accumulation).
    let v: Vec<f32> = (0..100_000).map(|i| (i % 10) as f32 * 0.1).collect();
    let want: f64 = v.iter().map(|&x| f64::from(x)).sum();
    let got = f32s(&reduce(ReduceOp::Sum, &arr(&[100_000], v), &[0]))[0];
    assert!(
        (f64::from(got) - want).abs() < 1e-3 * want,
        "{got} vs {want}"
    );
}

// ----------------------------------------------------------- dot_general

fn dot(l: &HostArray, r: &HostArray, dims: DotDims, pref: Option<DType>) -> HostArray {
    run(
        Primitive::DotGeneral(DotGeneral {
            dims,
            preferred_element_type: pref,
        }),
        &[l, r],
    )
}

fn ravel(idx: &[usize], shape: &[usize]) -> usize {
    idx.iter().zip(shape).fold(0, |acc, (&i, &n)| acc * n + i)
}

/// Naive dot_general over f64: loops over every output index and every
/// contraction index.
fn naive_dot(
    l: &[f64], ls: &[usize], r: &[f64], rs: &[usize], d: &DotDims,
) -> (Vec<usize>, Vec<f64>) {
    let lfree: Vec<usize> = (0..ls.len())
        .filter(|a| !d.lhs_batch.contains(a) && !d.lhs_contract.contains(a))
        .collect();
    let rfree: Vec<usize> = (0..rs.len())
        .filter(|a| !d.rhs_batch.contains(a) && !d.rhs_contract.contains(a))
        .collect();
    let mut out_shape: Vec<usize> = d.lhs_batch.iter().map(|&a| ls[a]).collect();
    out_shape.extend(lfree.iter().map(|&a| ls[a]));
    out_shape.extend(rfree.iter().map(|&a| rs[a]));
    let cshape: Vec<usize> = d.lhs_contract.iter().map(|&a| ls[a]).collect();
    let out_n: usize = out_shape.iter().product();
    let c_n: usize = cshape.iter().product();
    let nb = d.lhs_batch.len();
    let mut out = vec![0.0; out_n];
    for (o, slot) in out.iter_mut().enumerate() {
        let oi = unravel(o, &out_shape);
        for c in 0..c_n {
            let ci = unravel(c, &cshape);
            let mut li = vec![0; ls.len()];
            let mut ri = vec![0; rs.len()];
            for (k, (&a, &b)) in d.lhs_batch.iter().zip(&d.rhs_batch).enumerate() {
                li[a] = oi[k];
                ri[b] = oi[k];
            }
            for (k, &a) in lfree.iter().enumerate() {
                li[a] = oi[nb + k];
            }
            for (k, &b) in rfree.iter().enumerate() {
                ri[b] = oi[nb + lfree.len() + k];
            }
            for (k, (&a, &b)) in d.lhs_contract.iter().zip(&d.rhs_contract).enumerate() {
                li[a] = ci[k];
                ri[b] = ci[k];
            }
            *slot += l[ravel(&li, ls)] * r[ravel(&ri, rs)];
        }
    }
    (out_shape, out)
}

fn data(n: usize, seed: usize) -> Vec<f64> {
    // Small integers: every product and sum is exact in f32 and f64.
    (0..n)
        .map(|i| ((i * 7 + seed * 13) % 11) as f64 - 5.0)
        .collect()
}

#[test]
fn dot_general_matches_naive_loop() {
    let cases: Vec<(Vec<usize>, Vec<usize>, DotDims)> = vec![
        // Plain matmul, small and gemm-sized.
        (vec![2, 3], vec![3, 4], dot_dims(&[1], &[0], &[], &[])),
        (vec![40, 50], vec![50, 30], dot_dims(&[1], &[0], &[], &[])),
        // Transposed operands (contraction on lhs axis 0 / rhs axis 1).
        (vec![50, 40], vec![30, 50], dot_dims(&[0], &[1], &[], &[])),
        (vec![3, 2], vec![4, 3], dot_dims(&[0], &[1], &[], &[])),
        // Batch dims first (bmm) and in non-standard positions.
        (
            vec![5, 20, 30],
            vec![5, 30, 25],
            dot_dims(&[2], &[1], &[0], &[0]),
        ),
        (
            vec![20, 5, 30],
            vec![30, 25, 5],
            dot_dims(&[2], &[0], &[1], &[2]),
        ),
        (
            vec![3, 4, 2],
            vec![2, 5, 4],
            dot_dims(&[1], &[2], &[2], &[0]),
        ),
        // Two contracting dims, in swapped order on the rhs.
        (
            vec![4, 3, 5],
            vec![5, 6, 3],
            dot_dims(&[1, 2], &[2, 0], &[], &[]),
        ),
        (
            vec![20, 7, 30],
            vec![30, 7, 24],
            dot_dims(&[2, 1], &[0, 1], &[], &[]),
        ),
        // Two batch dims, multiple free dims.
        (
            vec![2, 3, 4, 5],
            vec![3, 2, 5, 6],
            dot_dims(&[3], &[2], &[0, 1], &[1, 0]),
        ),
        // Vector dot, outer product, matrix-vector.
        (vec![7], vec![7], dot_dims(&[0], &[0], &[], &[])),
        (vec![3], vec![4], dot_dims(&[], &[], &[], &[])),
        (vec![64, 70], vec![70], dot_dims(&[1], &[0], &[], &[])),
        // Empty contraction and empty free dims.
        (vec![2, 0], vec![0, 3], dot_dims(&[1], &[0], &[], &[])),
        (vec![0, 4], vec![4, 3], dot_dims(&[1], &[0], &[], &[])),
    ];
    for (i, (ls, rs, d)) in cases.into_iter().enumerate() {
        let ln: usize = ls.iter().product();
        let rn: usize = rs.iter().product();
        let lv = data(ln, i);
        let rv = data(rn, i + 1);
        let (want_shape, want) = naive_dot(&lv, &ls, &rv, &rs, &d);
        let r64 = dot(
            &arr(&ls, lv.clone()),
            &arr(&rs, rv.clone()),
            d.clone(),
            None,
        );
        assert_eq!(r64.shape(), want_shape.as_slice(), "case {i}");
        assert_eq!(f64s(&r64), want, "case {i} f64");
        let l32: Vec<f32> = lv.iter().map(|&x| x as f32).collect();
        let r32: Vec<f32> = rv.iter().map(|&x| x as f32).collect();
        let got = dot(&arr(&ls, l32), &arr(&rs, r32), d.clone(), None);
        let w32: Vec<f32> = want.iter().map(|&x| x as f32).collect();
        assert_eq!(f32s(&got), w32, "case {i} f32");
        let li: Vec<i32> = lv.iter().map(|&x| x as i32).collect();
        let ri: Vec<i32> = rv.iter().map(|&x| x as i32).collect();
        let got = dot(&arr(&ls, li), &arr(&rs, ri), d.clone(), None);
        let wi: Vec<i32> = want.iter().map(|&x| x as i32).collect();
        assert_eq!(i32s(&got), wi, "case {i} i32");
        let lh: Vec<bf16> = lv.iter().map(|&x| bf16::from_f64(x)).collect();
        let rh: Vec<bf16> = rv.iter().map(|&x| bf16::from_f64(x)).collect();
        let got = dot(&arr(&ls, lh), &arr(&rs, rh), d, None);
        let wh: Vec<bf16> = want.iter().map(|&x| bf16::from_f64(x)).collect();
        assert_eq!(bf16s(&got), wh, "case {i} bf16");
    }
}

#[test]
fn dot_general_float_values_not_exact_integers() {
    // 70x80 @ 80x60 in f32 against an f64 naive reference.
    let (m, k, n) = (70, 80, 60);
    let lv: Vec<f64> = (0..m * k).map(|i| ((i as f64) * 0.37).sin()).collect();
    let rv: Vec<f64> = (0..k * n).map(|i| ((i as f64) * 0.11).cos()).collect();
    let d = dot_dims(&[1], &[0], &[], &[]);
    let (_, want) = naive_dot(&lv, &[m, k], &rv, &[k, n], &d);
    let l32: Vec<f32> = lv.iter().map(|&x| x as f32).collect();
    let r32: Vec<f32> = rv.iter().map(|&x| x as f32).collect();
    let got = f32s(&dot(&arr(&[m, k], l32), &arr(&[k, n], r32), d, None));
    for (g, w) in got.iter().zip(&want) {
        assert!((f64::from(*g) - w).abs() < 1e-4, "{g} vs {w}");
    }
}

#[test]
fn dot_general_integer_wrap_and_preferred_type() {
    let l = arr(&[1, 2], vec![100i8, 100]);
    let r = arr(&[2, 1], vec![2i8, 1]);
    let d = dot_dims(&[1], &[0], &[], &[]);
    // In int8 the sum wraps: 300 mod 256 = 44.
    assert_eq!(i8s(&dot(&l, &r, d.clone(), None)), vec![44]);
    // preferred int32 accumulates in int32.
    let p = dot(&l, &r, d.clone(), Some(DType::I32));
    assert_eq!(p.dtype(), DType::I32);
    assert_eq!(i32s(&p), vec![300]);
    // bf16 operands with an f32 result are not rounded to bf16.
    let a = arr(
        &[1, 2],
        vec![bf16::from_f32(1.0), bf16::from_f32(0.00390625)],
    );
    let b = arr(&[2, 1], vec![bf16::from_f32(1.0), bf16::from_f32(1.0)]);
    let p = dot(&a, &b, d.clone(), Some(DType::F32));
    assert_eq!(f32s(&p), vec![1.003_906_3]);
    // Narrowing preference: computed in f32, then converted.
    let x = arr(&[1, 2], vec![1.5f32, 2.25]);
    let y = arr(&[2, 1], vec![2.0f32, 2.0]);
    let p = dot(&x, &y, d.clone(), Some(DType::F16));
    assert_eq!(f16s(&p), vec![f16::from_f32(7.5)]);
    let p = dot(&x, &y, d, Some(DType::I32));
    assert_eq!(i32s(&p), vec![7]);
}

#[test]
fn dot_general_rejects_bad_operands() {
    let l = arr(&[2, 3], vec![0.0f32; 6]);
    let r = arr(&[4, 2], vec![0.0f32; 8]);
    assert!(matches!(
        eval(&dot_general(&[1], &[0], &[], &[]), &[&l, &r]),
        Err(Error::Shape { .. })
    ));
    let b = arr(&[2], vec![true, false]);
    assert!(eval(&dot_general(&[0], &[0], &[], &[]), &[&b, &b]).is_err());
}
